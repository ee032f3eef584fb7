// Graphs, launch attributes, device properties, kernels, events and green contexts on a GPU: for each
// object, create, use, close, use after close, and parents kept alive. Skips with one reason where there is no GPU.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Context,
  Device,
  DeviceBuffer,
  Event,
  Graph,
  GreenContext,
  HostCallbackPendingError,
  LaunchConfig,
  PinnedHostBuffer,
  Program,
  SmResource,
  Stream,
  launch,
  type Module,
} from '../../src';
import { compileForSuite, describeGpu } from './gpu-env';
import { child } from './objects-helpers';

const SOURCE = `
typedef __device_builtin__ unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);
extern "C" __global__ void addk(int* p, int v, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += v;
}
extern "C" __global__ void loop(cudaGraphConditionalHandle h, int* p, unsigned* it, unsigned limit) {
  if (threadIdx.x == 0 && blockIdx.x == 0) { p[0] += 1; unsigned k = ++*it; cudaGraphSetConditional(h, k < limit ? 1u : 0u); }
}
extern "C" __global__ void pick(cudaGraphConditionalHandle h, unsigned v) { cudaGraphSetConditional(h, v); }
extern "C" __global__ void primary(float* a, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = 2.0f * i;
  asm volatile("griddepcontrol.launch_dependents;");
}
extern "C" __global__ void secondary(const float* a, float* b, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (i < n) b[i] = a[i] + 1.0f;
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) clustered(int* p) { p[blockIdx.x] = blockIdx.x; }
extern "C" __global__ void cl(int* p) { p[blockIdx.x] = blockIdx.x; }
extern "C" __global__ void smid(unsigned* out, unsigned blocks) {
  unsigned id; asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  long long t0 = clock64(); while (clock64() - t0 < 20000) {}
  if (threadIdx.x == 0 && blockIdx.x < blocks) out[blockIdx.x] = id;
}
`;

describeGpu('graphs, launch attributes, device, kernels, events, green contexts', () => {
  const suite = compileForSuite(SOURCE, { name: 'graph.cu' });
  let device: Device;
  let mod: Module;
  beforeAll(() => ({ device, module: mod } = suite));

  test('graph nodes: memset → kernel → memcpy (device and pinned) + host + event record; parents kept alive; use after close', async () => {
    const n = 1024;
    const addk = mod.kernel('addk', ['ptr', 'i32', 'u32']);
    const a = DeviceBuffer.alloc(4 * n);
    const b = DeviceBuffer.alloc(4 * n);
    const host = PinnedHostBuffer.alloc(4 * n);
    const ev = Event.create({ timing: false });
    const graph = Graph.create();
    const set = graph.addMemsetNode([], a, 5, { width: 4 });
    const k = graph.addKernelNode([set], LaunchConfig.linear(n), addk, a, 7, n);
    const copy = graph.addMemcpyNode([k], b, a);
    const down = graph.addMemcpyNode([copy], host, b);
    let hostRuns = 0;
    graph.addHostNode([down], () => hostRuns++);
    graph.addEventRecordNode([down], ev);
    expect(graph.nodes().length).toBe(6);
    const exec = graph.instantiate();
    // parents kept alive: close every resource the graph uses (but the pinned result) before launching it
    addk.close();
    a.close();
    b.close();
    ev.close();
    const stream = Stream.create();
    exec.launch(stream);
    expect(() => stream.synchronize()).toThrow(HostCallbackPendingError); // the host node is pending
    await stream.synchronized();
    expect(hostRuns).toBe(1);
    expect(host.array(Int32Array)[n - 1]).toBe(12);
    host.array(Int32Array).fill(0);
    exec.launch(stream);
    await stream.synchronized();
    expect(hostRuns).toBe(2);
    expect(host.array(Int32Array)[0]).toBe(12);
    const g2 = Graph.create();
    expect(() => g2.addMemcpyNode([], a, host)).toThrow(/closed/); // closed for us, alive for the first graph
    g2.close();
    host.close();
    exec.close();
    graph.close();
    stream.close();
    expect(() => graph.addEmptyNode([])).toThrow('Graph is closed');
    expect(() => exec.launch()).toThrow('GraphExec is closed');
  });

  test('graph result through pinned memory, exec updates (memset value, node disabled), clone, writeDot', async () => {
    const n = 256;
    const addk = mod.kernel('addk', ['ptr', 'i32', 'u32']);
    const a = DeviceBuffer.alloc(4 * n);
    const host = PinnedHostBuffer.alloc(4 * n);
    const graph = Graph.create();
    const set = graph.addMemsetNode([], a, 1, { width: 4 });
    const k = graph.addKernelNode([set], LaunchConfig.linear(n), addk, a, 10, n);
    graph.addMemcpyNode([k], host, a);
    const exec = graph.instantiate();
    const stream = Stream.create();
    exec.launch(stream);
    await stream.synchronized();
    expect(Array.from(host.array(Int32Array).subarray(0, 3))).toEqual([11, 11, 11]);
    exec.setMemsetNodeParams(set, a, 100, { width: 4 });
    exec.launch(stream);
    await stream.synchronized();
    expect(host.array(Int32Array)[n - 1]).toBe(110);
    exec.setNodeEnabled(k, false);
    expect(exec.nodeEnabled(k)).toBe(false);
    exec.launch(stream);
    await stream.synchronized();
    expect(host.array(Int32Array)[0]).toBe(100);
    exec.setKernelNodeParams(k, LaunchConfig.linear(n), addk, a, 3, n);
    exec.setNodeEnabled(k, true);
    exec.launch(stream);
    await stream.synchronized();
    expect(host.array(Int32Array)[0]).toBe(103);

    const copy = graph.clone();
    const kc = copy.findInClone(k);
    expect(kc.type).toBe(k.type);
    expect(kc.handle).not.toBe(k.handle);
    graph.close(); // the clone keeps the kernel and buffers alive
    addk.close();
    const e2 = copy.instantiate();
    e2.launch(stream);
    await stream.synchronized();
    expect(host.array(Int32Array)[0]).toBe(11);
    const dot = join(mkdtempSync(join(tmpdir(), 'cuda-ts-')), 'g.dot');
    copy.writeDot(dot, { verbose: true });
    expect(existsSync(dot)).toBe(true);
    expect(readFileSync(dot, 'utf8')).toMatch(/digraph/);
    for (const r of [e2, copy, exec, stream, host, a]) r.close();
  });

  test('conditional while / if-else / switch nodes, child graph, mem alloc and free nodes', async () => {
    const loop = mod.kernel('loop', ['u64', 'ptr', 'ptr', 'u32']);
    const pick = mod.kernel('pick', ['u64', 'u32']);
    const addk = mod.kernel('addk', ['ptr', 'i32', 'u32']);
    const out = DeviceBuffer.alloc(4 * 4);
    const it = DeviceBuffer.alloc(4);
    const graph = Graph.create();
    const zero = graph.addMemsetNode([], out, 0, { width: 4 });
    const zeroIt = graph.addMemsetNode([], it, 0, { width: 4 });
    const cond = graph.createConditional({ defaultValue: 1 });
    const w = graph.addWhileNode([zero, zeroIt], cond);
    w.body.addKernelNode([], { grid: 1, block: 32 }, loop, cond.value, out, it, 7);
    // if/else chosen by a kernel: value 0 → else body runs
    const c2 = graph.createConditional();
    const setter = graph.addKernelNode([w.node], { grid: 1, block: 1 }, pick, c2.value, 0);
    const ie = graph.addIfNode([setter], c2, { else: true });
    ie.then.addKernelNode([], { grid: 1, block: 1 }, addk, out.subarray(4), 100, 1);
    ie.else!.addKernelNode([], { grid: 1, block: 1 }, addk, out.subarray(4), 5, 1);
    // switch with 3 cases, value 2
    const c3 = graph.createConditional();
    const setter3 = graph.addKernelNode([ie.node], { grid: 1, block: 1 }, pick, c3.value, 2);
    const sw = graph.addSwitchNode([setter3], c3, 3);
    sw.cases.forEach((body, i) => body.addKernelNode([], { grid: 1, block: 1 }, addk, out.subarray(8), 10 ** i, 1));
    // child graph: adds 42 to out[3]
    const childG = Graph.create();
    childG.addKernelNode([], { grid: 1, block: 1 }, addk, out.subarray(12), 42, 1);
    const childNode = graph.addChildGraphNode([sw.node], childG);
    childG.close(); // copied into the node
    // graph allocation: alloc, set, copy into out[3] += nothing (copy to a scratch), free
    const alloc = graph.addMemAllocNode([childNode], 64);
    const setA = graph.addMemsetNode([alloc.node], alloc, 9, { width: 4 });
    const scratch = DeviceBuffer.alloc(64);
    const cp = graph.addMemcpyNode([setA], scratch, alloc);
    graph.addMemFreeNode([cp], alloc);
    const exec = graph.instantiate();
    const stream = Stream.create();
    exec.launch(stream);
    await stream.synchronized();
    expect(Array.from(out.toArray(Int32Array))).toEqual([7, 5, 100, 42]);
    expect(it.toArray(Uint32Array)[0]).toBe(7);
    expect(Array.from(scratch.toArray(Int32Array))).toEqual(new Array(16).fill(9));
    exec.launch(stream);
    await stream.synchronized();
    expect(Array.from(out.toArray(Int32Array))).toEqual([7, 5, 100, 42]); // reset by the memset nodes
    // bodies die with their graph
    exec.close();
    graph.close();
    expect(() => w.body.addEmptyNode([])).toThrow('Graph is closed');
    for (const r of [stream, scratch, it, out, addk, pick, loop]) r.close();
  });

  test('Device.properties (cached, typed), pciBusId, luid; Kernel.attributes and occupancy', () => {
    const p = device.properties;
    expect(p.warpSize).toBe(32);
    expect(p.multiprocessorCount).toBe(device.multiprocessorCount);
    expect(p.computeCapabilityMajor).toBe(device.computeCapability[0]);
    expect(device.properties).toBe(p);
    expect(Object.keys(p).length).toBeGreaterThan(140);
    expect(device.pciBusId).toMatch(/^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]$/i);
    if (process.platform === 'linux') expect(device.luid).toBeUndefined();
    const k = mod.kernel('addk', ['ptr', 'i32', 'u32']);
    const attrs = k.attributes;
    expect(attrs.maxThreadsPerBlock).toBe(k.maxThreadsPerBlock);
    expect(attrs.numRegs).toBe(k.numRegisters);
    expect(attrs.binaryVersion).toBe(device.computeCapability[0] * 10 + device.computeCapability[1]);
    k.setAttribute(8 /* MAX_DYNAMIC_SHARED_SIZE_BYTES */, 64 * 1024);
    expect(k.attributes.maxDynamicSharedSizeBytes).toBe(64 * 1024);
    expect(k.maxActiveBlocksPerMultiprocessor(256)).toBeGreaterThan(0);
    expect(k.maxPotentialBlockSize().blockSize).toBeGreaterThan(0);
    const fixed = mod.kernel('clustered', ['ptr']);
    expect(fixed.attributes.requiredClusterWidth).toBe(2);
    expect(mod.kernel('cl', ['ptr']).attributes.requiredClusterWidth).toBe(0);
    const c = mod.kernel('cl', ['ptr']);
    expect(c.maxActiveClusters({ grid: 64, block: 32, cluster: 2 })).toBeGreaterThan(0);
    fixed.close();
    c.close();
    k.close();
    expect(() => k.attributes).toThrow('Kernel is closed');
  });

  test('launch attributes: PDL pair, priority, memory-sync domain, cluster (grid in blocks)', async () => {
    const n = 1 << 16;
    const primary = mod.kernel('primary', ['ptr', 'u32']);
    const secondary = mod.kernel('secondary', ['ptr', 'ptr', 'u32']);
    const a = DeviceBuffer.alloc(4 * n);
    const b = DeviceBuffer.alloc(4 * n);
    const stream = Stream.create();
    const cfg = LaunchConfig.linear(n);
    const { greatestPriority } = Stream.priorityRange();
    for (let r = 0; r < 20; r++) {
      launch(stream, cfg, primary, a, n);
      launch(
        stream,
        { grid: cfg.gx, block: cfg.bx, programmaticDependentLaunch: true, priority: greatestPriority, memSyncDomain: 'remote' },
        secondary,
        a,
        b,
        n,
      );
    }
    await stream.synchronized();
    const out = b.toArray(Float32Array);
    expect(out[0]).toBe(1);
    expect(out[n - 1]).toBe(2 * (n - 1) + 1);
    const c = mod.kernel('cl', ['ptr']);
    const ids = DeviceBuffer.alloc(4 * 8);
    launch(stream, { grid: 8, block: 32, cluster: 2 }, c, ids); // 8 blocks in 4 clusters
    await stream.synchronized();
    expect(Array.from(ids.toArray(Int32Array))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    for (const r of [ids, c, stream, b, a, secondary, primary]) r.close();
  });

  test("a pinned buffer's TypedArray view as a 'ptr' argument", async () => {
    const addk = mod.kernel('addk', ['ptr', 'i32', 'u32']);
    const pinned = PinnedHostBuffer.alloc(4 * 64);
    const view = pinned.array(Int32Array);
    view.fill(1);
    const stream = Stream.create();
    launch(stream, { grid: 1, block: 64 }, addk, view.subarray(32), 4, 32);
    await stream.synchronized();
    expect(view[0]).toBe(1);
    expect(view[32]).toBe(5);
    expect(view[63]).toBe(5);
    expect(() => launch(stream, { grid: 1, block: 1 }, addk, new Int32Array(4), 1, 1)).toThrow(/cannot address/);
    for (const r of [stream, pinned, addk]) r.close();
  });

  test('Event.completed() and IPC: another process opens the handle and sees the event complete', async () => {
    const ev = Event.create({ interprocess: true, timing: false });
    const stream = Stream.create();
    ev.record(stream);
    await ev.completed();
    const handle = Buffer.from(ev.ipcHandle()).toString('hex');
    const r = child(`
      const ev = cuda.Event.fromIpcHandle(Uint8Array.from(Buffer.from(${JSON.stringify(handle)}, 'hex')));
      await ev.completed({ timeoutMs: 10000 });
      const s = cuda.Stream.create();
      s.wait(ev);
      await s.synchronized();
      console.log('IPC-EVENT-OK', ev.query());
      ev.close();
    `);
    expect(r.stderr).not.toMatch(/CHILD-ERROR/);
    expect(r.stdout).toMatch(/IPC-EVENT-OK true/);
    const plain = Event.create();
    expect(() => plain.ipcHandle()).toThrow(TypeError);
    for (const x of [plain, stream, ev]) x.close();
    expect(() => ev.ipcHandle()).toThrow('Event is closed');
  });

  test('green contexts: disjoint SM sets, streams, parents kept alive, use after close; execution affinity', async () => {
    const all = SmResource.ofDevice(0);
    expect(all.smCount).toBe(device.multiprocessorCount);
    const greens = GreenContext.split({ groups: 2, minSmCount: 16 });
    expect(greens.length).toBe(2);
    const blocks = 2048;
    const sets: Set<number>[] = [];
    for (const green of greens) {
      const sms = green.smCount;
      expect(sms).toBeGreaterThanOrEqual(16);
      expect(green.id).toBeGreaterThan(0);
      const p = new Program(SOURCE, { name: 'green.cu' }).compile();
      const m = p.load({ context: green.context });
      const k = m.kernel('smid', ['ptr', 'u32']);
      const buf = DeviceBuffer.alloc(4 * blocks, { context: green.context });
      const stream = green.createStream();
      launch(stream, { grid: blocks, block: 64 }, k, buf, blocks);
      await stream.synchronized();
      const set = new Set(buf.toArray(Uint32Array));
      expect(set.size).toBeGreaterThan(0);
      expect(set.size).toBeLessThanOrEqual(sms);
      sets.push(set);
      // close the green context first: its stream, module and buffer keep it from being destroyed
      green.close();
      expect(() => green.createStream()).toThrow('GreenContext is closed');
      expect(() => stream.query()).toThrow(/closed/);
      for (const r of [buf, stream, k, m, p]) r.close();
      expect(green.context.core.destroyed).toBe(true);
    }
    expect([...sets[0]].filter((s) => sets[1].has(s))).toEqual([]);
    expect(typeof Context.executionAffinitySupported(0)).toBe('boolean');
    expect(Context.primary(0).executionAffinity.smCount).toBe(device.multiprocessorCount);
  });
});
