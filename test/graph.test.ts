// Graphs, launch attributes, event IPC and device properties without a GPU: the driver is replaced by fakes (drv.provideNative) that record
// what they were given, so validation, record encoding, ownership and the host-node accounting are
// checked for real; the type-level test compiles a file with tsc.
import { resolve } from 'node:path';
import koffi from 'koffi';
import ts from 'typescript';
import * as drv from '../src/driver';
import { Context } from '../src/context';
import { Device } from '../src/device';
import { Event } from '../src/event';
import { Graph, GraphConditional, GraphExec } from '../src/graph';
import { GreenContext, SmResource } from '../src/green';
import { ArgPack } from '../src/kernel-args';
import { LaunchConfig } from '../src/launch-config';
import { HostCallbackPendingError, assertMayBlock, hostFuncs } from '../src/lifecycle';
import { DeviceBuffer } from '../src/memory';
import { fakeContext, fakeDriver, out, type FakeFn as Fn } from './helpers/fake-driver';
import { fakeStreamObject } from './helpers/fake-stream';
import { SEALED } from '../src/sealed';

class FakeBuffer extends DeviceBuffer {
  freed = 0;
  constructor(bytes: number, ctx: Context, address = 0x7f0000000000) {
    super(SEALED, 'DeviceBuffer', address, bytes, ctx, () => {
      this.freed++;
    });
  }
}

let nextNode = 0x5000;
const graphFakes = (): Record<string, Fn> => ({
  cuGraphCreate: (o) => out(o, 0x9000),
  cuGraphDestroy: () => 0,
  cuGraphAddMemcpyNode: (o) => out(o, nextNode++),
  cuGraphAddMemsetNode: (o) => out(o, nextNode++),
  cuGraphAddHostNode: (o) => out(o, nextNode++),
  cuGraphAddEmptyNode: (o) => out(o, nextNode++),
  cuGraphAddEventRecordNode: (o) => out(o, nextNode++),
  cuGraphAddMemFreeNode: (o) => out(o, nextNode++),
  cuGraphAddMemAllocNode: (o, _g, _d, _n, params: Uint8Array) => {
    new DataView(params.buffer).setBigUint64(112, 0x7e0000000000n, true); // the driver fills dptr
    return out(o, nextNode++);
  },
  cuGraphConditionalHandleCreate: (o) => out(o, 0xabc),
  cuGraphInstantiateWithFlags: (o) => out(o, 0x9100),
  cuGraphExecDestroy: () => 0,
  cuGraphLaunch: () => 0,
  cuLaunchHostFunc: () => 0,
  cuGraphClone: (o) => out(o, 0x9200),
});

describe('LaunchConfig launch attributes', () => {
  function attrs(cfg: LaunchConfig): [number, DataView][] {
    const dv = cfg.ex!.view;
    const n = dv.getUint32(48, true);
    return Array.from({ length: n }, (_, i) => [dv.getInt32(56 + i * 72, true), new DataView(dv.buffer, 56 + i * 72 + 8, 64)]);
  }

  test('no attribute: a plain CUlaunchConfig (attrs NULL, numAttrs 0), encoded once', () => {
    const cfg = new LaunchConfig({ grid: 4, block: 32, sharedMemBytes: 16 });
    expect(cfg.ex.attributes).toBe(0);
    expect(cfg.ex.bytes.byteLength).toBe(56);
    expect([0, 4, 8, 12, 16, 20, 24].map((at) => cfg.ex.view.getUint32(at, true))).toEqual([4, 1, 1, 32, 1, 1, 16]);
    expect(cfg.ex.view.getBigUint64(40, true)).toBe(0n);
    expect(cfg.ex.view.getUint32(48, true)).toBe(0);
  });

  test('PDL, priority, memory-sync domain and map are encoded as CUlaunchAttributes', () => {
    const cfg = new LaunchConfig({
      grid: 8,
      block: 64,
      programmaticDependentLaunch: true,
      priority: -3,
      memSyncDomain: 'remote',
      memSyncDomainMap: { default: 0, remote: 1 },
    });
    const a = attrs(cfg);
    const A = drv.CUlaunchAttributeID;
    expect(a.map(([id]) => id)).toEqual([
      A.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
      A.CU_LAUNCH_ATTRIBUTE_PRIORITY,
      A.CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN,
      A.CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP,
    ]);
    expect(a[0][1].getInt32(0, true)).toBe(1);
    expect(a[1][1].getInt32(0, true)).toBe(-3);
    expect(a[2][1].getInt32(0, true)).toBe(1);
    expect([a[3][1].getUint8(0), a[3][1].getUint8(1)]).toEqual([0, 1]);
    // the attrs pointer points at the attributes that follow the config in the same buffer
    expect(Number(cfg.ex!.view.getBigUint64(40, true))).toBe(Number(koffi.address(cfg.ex!.view.buffer)) + 56);
    expect(cfg.ex!.view.getUint32(0, true)).toBe(8);
    expect(cfg.programmaticDependentLaunch).toBe(true);
  });

  test('cluster with other attributes; the grid counts blocks', () => {
    const cfg = new LaunchConfig({ grid: 8, block: 32, cluster: 2, cooperative: true, programmaticDependentLaunch: true });
    expect(attrs(cfg).map(([id]) => id)).toEqual([
      drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
      drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE,
      drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
    ]);
    expect(() => new LaunchConfig({ grid: 3, block: 32, cluster: 2 })).toThrow(/grid \[3, 1, 1\] \(in blocks\) is not a multiple of cluster/);
  });

  test.each([
    [{ programmaticDependentLaunch: 1 }, TypeError, /programmaticDependentLaunch must be a boolean/],
    [{ priority: 1.5 }, RangeError, /priority must be a 32-bit integer/],
    [{ memSyncDomain: 'far' }, TypeError, /memSyncDomain must be 'default' or 'remote'/],
    [{ memSyncDomainMap: { default: 0 } }, RangeError, /memSyncDomainMap.remote must be an integer/],
    [{ memSyncDomainMap: { default: 0, remote: 1, other: 2 } }, TypeError, /unknown field 'other'/],
  ])('bad attribute %p', (extra, type, message) => {
    expect(() => new LaunchConfig({ grid: 1, block: 1, ...(extra as object) })).toThrow(type);
    expect(() => new LaunchConfig({ grid: 1, block: 1, ...(extra as object) })).toThrow(message);
  });
});

describe("host memory as a 'ptr' argument", () => {
  afterEach(() => drv.provideNative('cuMemHostGetDevicePointer', undefined));

  test('a TypedArray over mapped memory becomes its device address (cuMemHostGetDevicePointer)', () => {
    const host = new Float32Array(16);
    const seen: number[] = [];
    drv.provideNative('cuMemHostGetDevicePointer', ((o: BigUint64Array, p: number) => {
      seen.push(p);
      return out(o, 0x7d0000000000 + 4);
    }) as never);
    const pack = new ArgPack(['ptr', 'ptr']);
    pack.write([host.subarray(4), host.buffer], 0, 'launch k');
    expect(seen).toEqual([Number(koffi.address(host.buffer)) + 16, Number(koffi.address(host.buffer))]);
    expect(Number(pack.view.getBigUint64(0, true))).toBe(0x7d0000000004);
  });

  test('pageable memory is a TypeError before the launch', () => {
    drv.provideNative('cuMemHostGetDevicePointer', (() => 1) as never); // CUDA_ERROR_INVALID_VALUE
    const pack = new ArgPack(['ptr']);
    expect(() => pack.write([new Uint8Array(8)], 0, 'launch k')).toThrow(
      /launch k: argument 0 \(ptr\) is a Uint8Array over host memory the device cannot address.*PinnedHostBuffer/,
    );
    expect(() => pack.write([new ArrayBuffer(0)], 0, 'launch k')).toThrow(/empty ArrayBuffer/);
  });
});

describe('Graph builder (fake driver)', () => {
  let ctx: Context;
  let fake: ReturnType<typeof fakeDriver>;
  beforeEach(() => {
    ctx = fakeContext();
    fake = fakeDriver(ctx, graphFakes());
  });
  afterEach(() => {
    fake.restore();
    hostFuncs.pending = 0;
  });

  test('memcpy node: CUDA_MEMCPY3D encodes types, addresses with offsets and the width; the graph keeps both buffers', () => {
    const g = Graph.create(ctx);
    const src = new FakeBuffer(256, ctx, 0x7f0000001000);
    const dst = new FakeBuffer(256, ctx, 0x7f0000002000);
    const node = g.addMemcpyNode([], dst, src, { srcOffset: 16, dstOffset: 32, byteLength: 64 });
    expect(node.type).toBe(drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_MEMCPY);
    const [, args] = fake.calls.find(([n]) => n === 'cuGraphAddMemcpyNode')!;
    const dv = new DataView((args[4] as Uint8Array).buffer);
    expect(dv.getInt32(32, true)).toBe(2); // srcMemoryType DEVICE
    expect(Number(dv.getBigUint64(48, true))).toBe(0x7f0000001000 + 16);
    expect(dv.getInt32(120, true)).toBe(2);
    expect(Number(dv.getBigUint64(136, true))).toBe(0x7f0000002000 + 32);
    expect(Number(dv.getBigUint64(176, true))).toBe(64);
    expect(args[5]).toBe(ctx.handle);
    src.close();
    dst.close();
    expect(src.freed + dst.freed).toBe(0); // the graph keeps them
    g.close();
    expect(src.freed + dst.freed).toBe(2);
  });

  test('memcpy/memset validation names the method and argument', () => {
    const g = Graph.create(ctx);
    const b = new FakeBuffer(64, ctx);
    expect(() => g.addMemcpyNode([], b, 'x' as never)).toThrow(
      /Graph.addMemcpyNode: src must be a DeviceBuffer, a PinnedHostBuffer or a GraphAllocation, got string/,
    );
    expect(() => g.addMemcpyNode([], b, b, { byteLength: 65 })).toThrow(RangeError);
    expect(() => g.addMemcpyNode([], b, b, { srcOffset: 1.5 })).toThrow(/srcOffset must be a non-negative integer/);
    expect(() => g.addMemcpyNode([], b, b, { length: 3 } as never)).toThrow(/unknown option 'length'/);
    expect(() => g.addMemsetNode([], b, 1, { width: 3 as never })).toThrow(/width must be 1, 2 or 4/);
    expect(() => g.addMemsetNode([], b, 256)).toThrow(/value must be an integer from 0 to 255/);
    expect(() => g.addMemsetNode([], b, 1, { width: 4, offset: 2 })).toThrow(/offset 2 is not a multiple of width 4/);
    expect(() => g.addMemsetNode([], b, 1, { width: 4, count: 17 })).toThrow(/run past the end/);
    expect(() => g.addEmptyNode('a' as never)).toThrow(/Graph.addEmptyNode: dependencies must be an array of GraphNode/);
    expect(() => g.addEmptyNode([{ handle: -1 } as never])).toThrow(TypeError);
    expect(fake.calls.filter(([n]) => n.startsWith('cuGraphAddMem')).length).toBe(0); // nothing reached the driver
    const g2 = Graph.create(ctx);
    const foreign = g2.addEmptyNode([]);
    expect(() => g.addEmptyNode([foreign])).toThrow(/the node belongs to another graph/);
  });

  test('memset node: CUDA_MEMSET_NODE_PARAMS', () => {
    const g = Graph.create(ctx);
    const b = new FakeBuffer(64, ctx, 0x7f0000003000);
    g.addMemsetNode([], b, 0xdeadbeef, { width: 4, offset: 8, count: 4 });
    const [, args] = fake.calls.find(([n]) => n === 'cuGraphAddMemsetNode')!;
    const dv = new DataView((args[4] as Uint8Array).buffer);
    expect(Number(dv.getBigUint64(0, true))).toBe(0x7f0000003008);
    expect(dv.getUint32(16, true)).toBe(0xdeadbeef);
    expect(dv.getUint32(20, true)).toBe(4);
    expect(Number(dv.getBigUint64(24, true))).toBe(4);
    expect(Number(dv.getBigUint64(32, true))).toBe(1);
  });

  test('mem alloc node returns the address the driver wrote; memcpy and free nodes take the allocation', () => {
    const g = Graph.create(ctx);
    const a = g.addMemAllocNode([], 4096);
    expect(a.address).toBe(0x7e0000000000);
    expect(a.byteLength).toBe(4096);
    const [, args] = fake.calls.find(([n]) => n === 'cuGraphAddMemAllocNode')!;
    const dv = new DataView((args[4] as Uint8Array).buffer);
    expect(dv.getInt32(0, true)).toBe(drv.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED);
    expect(dv.getInt32(8, true)).toBe(drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE);
    expect(Number(dv.getBigUint64(104, true))).toBe(4096);
    g.addMemsetNode([a.node], a, 0);
    const free = g.addMemFreeNode([a.node], a);
    expect(free.type).toBe(drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_MEM_FREE);
    expect(fake.calls.find(([n]) => n === 'cuGraphAddMemFreeNode')![1][4]).toBe(0x7e0000000000);
    expect(() => g.addMemFreeNode([], { node: a.node, address: 1, byteLength: 1 } as never)).toThrow(/allocation must be a GraphAllocation/);
    expect(() => g.addMemAllocNode([], 0)).toThrow(/byteLength must be at least 1/);
  });

  test('conditional nodes: the handle, CUgraphNodeParams, and the body graphs the driver returns', () => {
    const bodies = new BigUint64Array([0xb001n, 0xb002n]);
    fake.restore();
    fake = fakeDriver(ctx, {
      ...graphFakes(),
      cuGraphAddNode: (o, _g, _d, _e, _n, params: Uint8Array) => {
        const dv = new DataView(params.buffer);
        dv.setBigUint64(32, koffi.address(bodies.buffer), true); // phGraph_out
        return out(o, nextNode++);
      },
    });
    const g = Graph.create(ctx);
    const cond = g.createConditional({ defaultValue: 1 });
    expect(cond).toBeInstanceOf(GraphConditional);
    expect(cond.value).toBe(0xabcn);
    const [, hc] = fake.calls.find(([n]) => n === 'cuGraphConditionalHandleCreate')!;
    expect(hc.slice(1)).toEqual([0x9000, ctx.handle, 1, drv.CU_GRAPH_COND_ASSIGN_DEFAULT]);
    const ifNode = g.addIfNode([], cond, { else: true });
    const [, an] = fake.calls.find(([n]) => n === 'cuGraphAddNode')!;
    const dv = new DataView((an[5] as Uint8Array).buffer);
    expect(dv.getInt32(0, true)).toBe(drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL);
    expect(dv.getBigUint64(16, true)).toBe(0xabcn);
    expect(dv.getInt32(24, true)).toBe(drv.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_IF);
    expect(dv.getUint32(28, true)).toBe(2);
    expect(Number(dv.getBigUint64(40, true))).toBe(ctx.handle);
    expect(ifNode.then.handle).toBe(0xb001);
    expect(ifNode.else!.handle).toBe(0xb002);
    expect(ifNode.then.owner).toBe(g);
    // a body's nodes keep their resources alive through the owning graph
    const b = new FakeBuffer(64, ctx);
    ifNode.then.addMemsetNode([], b, 7);
    b.close();
    expect(b.freed).toBe(0);
    expect(() => ifNode.then.instantiate()).toThrow(/a conditional body runs as part of the graph that owns it/);
    expect(() => g.addConditionalNode([], cond, 'for' as never)).toThrow(/type must be 'if', 'while' or 'switch'/);
    expect(() => g.addConditionalNode([], cond, 'while', 2)).toThrow(/size must be an integer from 1 to 1 for 'while'/);
    expect(() => ifNode.then.addWhileNode([], cond)).toThrow(/the conditional handle was created in another graph/);
    expect(() => g.createConditional({ defaultValue: -1 })).toThrow(/defaultValue must be a 32-bit unsigned integer/);
    g.close();
    expect(b.freed).toBe(1);
    expect(() => ifNode.then.addEmptyNode([])).toThrow('Graph is closed'); // the owner is gone, so is the body
  });

  test('host nodes: each launch counts as a pending callback until the host function after it ran', () => {
    const g = Graph.create(ctx);
    let ran = 0;
    g.addHostNode([], () => ran++);
    expect(g.hostNodes).toBe(1);
    const [, params] = fake.calls.find(([n]) => n === 'cuGraphAddHostNode')!;
    const hp = new DataView((params[4] as Uint8Array).buffer);
    // the host node's function pointer is the trampoline; calling it runs the JS function by id
    const fnPtr = hp.getBigUint64(0, true);
    const id = hp.getBigUint64(8, true);
    const call = koffi.decode(fnPtr, koffi.proto('void', ['void *'])) as unknown as (p: bigint) => void;
    call(id);
    expect(ran).toBe(1);
    const exec = g.instantiate();
    expect(exec).toBeInstanceOf(GraphExec);
    expect(exec.hostNodes).toBe(1);
    const stream = fakeStreamObject(ctx, 0x4000);
    const before = hostFuncs.pending;
    exec.launch(stream);
    const names = fake.calls.map(([n]) => n).filter((n) => n === 'cuGraphLaunch' || n === 'cuLaunchHostFunc');
    expect(names).toEqual(['cuGraphLaunch', 'cuLaunchHostFunc']);
    expect(hostFuncs.pending).toBe(before + 1);
    expect(() => assertMayBlock('Stream.synchronize()')).toThrow(HostCallbackPendingError);
    // what the driver does: run the host node, then the host function enqueued after the launch
    const [, hf] = fake.calls.filter(([n]) => n === 'cuLaunchHostFunc').pop()!;
    expect(hf[0]).toBe(0x4000);
    const token = koffi.decode(hf[1] as bigint, koffi.proto('void', ['void *'])) as unknown as (p: bigint) => void;
    call(id);
    token(hf[2] as bigint);
    expect(ran).toBe(2);
    expect(hostFuncs.pending).toBe(before);
    expect(stream.hostError).toBeUndefined();
    // an error thrown by a host node is reported to the stream of the launch
    g.addHostNode([], () => {
      throw new Error('host node failed');
    });
    const [, p2] = fake.calls.filter(([n]) => n === 'cuGraphAddHostNode').pop()!;
    const exec2 = g.instantiate();
    expect(exec2.hostNodes).toBe(2);
    exec2.launch(stream);
    const [, hf2] = fake.calls.filter(([n]) => n === 'cuLaunchHostFunc').pop()!;
    call(new DataView((p2[4] as Uint8Array).buffer).getBigUint64(8, true));
    token(hf2[2] as bigint);
    expect(hostFuncs.pending).toBe(before);
    expect((stream.hostError as Error).message).toBe('host node failed');
    expect(() => g.addHostNode([], 3 as never)).toThrow(/Graph.addHostNode: fn must be a function/);
  });

  test('clone keeps what the original uses; writeDot validates its path', () => {
    const g = Graph.create(ctx);
    const b = new FakeBuffer(64, ctx);
    g.addMemsetNode([], b, 1);
    const c = g.clone();
    expect(c.handle).toBe(0x9200);
    b.close();
    g.close();
    expect(b.freed).toBe(0); // the clone still uses it
    c.close();
    expect(b.freed).toBe(1);
    const h = Graph.create(ctx);
    expect(() => h.writeDot('')).toThrow(/Graph.writeDot: path must be a non-empty string/);
    expect(() => h.writeDot('/tmp/x.dot', { verbose: 'yes' } as never)).toThrow(/verbose must be a boolean/);
  });

  test('event nodes keep the event alive and refuse non-events', () => {
    const g = Graph.create(ctx);
    expect(() => g.addEventRecordNode([], {} as never)).toThrow(/Graph.addEventRecordNode: event must be an Event, got Object/);
  });
});

describe('Event IPC and completed()', () => {
  test('fromIpcHandle wants the 64-byte handle', () => {
    expect(() => Event.fromIpcHandle(new Uint8Array(10))).toThrow(
      /Event.fromIpcHandle: handle must be the 64-byte Uint8Array from Event.ipcHandle\(\), got Uint8Array of 10 bytes/,
    );
    expect(() => Event.fromIpcHandle('ab' as never)).toThrow(TypeError);
  });

  test('ipcHandle refuses a non-interprocess event; completed() resolves once the event is done', async () => {
    const ctx = fakeContext();
    let queries = 0;
    const fake = fakeDriver(ctx, {
      cuEventCreate: (o) => out(o, 0x6000),
      cuEventDestroy: () => 0,
      cuEventQuery: () => (++queries < 3 ? drv.CUresult.CUDA_ERROR_NOT_READY : 0),
    });
    try {
      const ev = Event.create({ context: ctx });
      expect(() => ev.ipcHandle()).toThrow(/Event.ipcHandle: the event was not created with \{ interprocess: true, timing: false \}/);
      await ev.completed();
      expect(queries).toBe(3);
      ev.close();
      expect(() => ev.completed()).toThrow('Event is closed');
    } finally {
      fake.restore();
    }
  });
});

describe('Device.properties, green contexts, execution affinity (fake driver)', () => {
  const base = {
    cuInit: () => 0,
    cuDeviceGetCount: (o: Int32Array) => ((o[0] = 1), 0),
    cuDeviceGet: (o: Int32Array, ordinal: number) => ((o[0] = ordinal), 0),
  };

  test('properties: one cuDeviceGetAttribute per attribute, cached; a newer attribute the driver lacks is undefined', () => {
    let calls = 0;
    const A = drv.CUdevice_attribute;
    const fake = fakeDriver(fakeContext(), {
      ...base,
      cuDeviceGetAttribute: (o: Int32Array, attr: number) => {
        calls++;
        if (attr === A.CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED) return drv.CUresult.CUDA_ERROR_INVALID_VALUE; // newer than 11.8
        o[0] = attr * 10;
        return 0;
      },
    });
    try {
      const d = Device.get(0);
      const p = d.properties;
      expect(p.warpSize).toBe(A.CU_DEVICE_ATTRIBUTE_WARP_SIZE * 10);
      expect(p.maxThreadsPerBlock).toBe(10);
      expect(p.multiprocessorCount).toBe(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT * 10);
      expect(p.hostMemoryPoolsSupported).toBeUndefined();
      const n = calls;
      expect(n).toBeGreaterThan(100);
      expect(d.properties).toBe(p);
      expect(calls).toBe(n);
      expect(Object.isFrozen(p)).toBe(true);
    } finally {
      fake.restore();
    }
  });

  test('SmResource.split passes the request and keeps the groups the driver made', () => {
    const fake = fakeDriver(fakeContext(), {
      ...base,
      cuDeviceGetDevResource: (_d, res: Uint8Array) => {
        const dv = new DataView(res.buffer, res.byteOffset);
        dv.setInt32(0, 1, true);
        dv.setUint32(96, 132, true);
        dv.setUint32(100, 8, true);
        dv.setUint32(104, 2, true);
        return 0;
      },
      cuDevSmResourceSplitByCount: (result: Uint8Array, count: Uint32Array, input: Uint8Array, remaining: Uint8Array, flags: number, min: number) => {
        expect(new DataView(input.buffer, input.byteOffset).getUint32(96, true)).toBe(132);
        expect([count[0], flags, min]).toEqual([4, 0, 40]);
        count[0] = 3; // only three groups of 40 fit
        for (let i = 0; i < 3; i++) new DataView(result.buffer, i * 144).setUint32(96, 40, true);
        new DataView(remaining.buffer).setUint32(96, 12, true);
        return 0;
      },
    });
    try {
      const all = SmResource.ofDevice(0);
      expect([all.smCount, all.minSmPartitionSize, all.smCoscheduledAlignment]).toEqual([132, 8, 2]);
      const { groups, remaining } = all.split({ groups: 4, minSmCount: 40 });
      expect(groups.map((g) => g.smCount)).toEqual([40, 40, 40]);
      expect(remaining.smCount).toBe(12);
      expect(() => all.split({ groups: 0, minSmCount: 1 })).toThrow(/SmResource.split: groups must be an integer from 1 to 1024/);
      expect(() => all.split({ groups: 1, minSmCount: 200 })).toThrow(/minSmCount 200 is more than the 132 SMs/);
      expect(() => all.split({ groups: 1, minSmCount: 1, spread: true } as never)).toThrow(/unknown option 'spread'/);
      expect(() => GreenContext.create([])).toThrow(/GreenContext.create: resources must be an SmResource or a non-empty array of them/);
    } finally {
      fake.restore();
    }
  });

  test('Context.create with smCount refuses where execution affinity is unsupported, before creating anything', () => {
    const fake = fakeDriver(fakeContext(), { ...base, cuDeviceGetExecAffinitySupport: (o: Int32Array) => ((o[0] = 0), 0), cuCtxCreate: () => 999 });
    try {
      expect(() => Context.create(0, 0, { smCount: 8 })).toThrow(/does not support execution affinity by SM count here \(it needs MPS\)/);
      expect(fake.calls.some(([n]) => n === 'cuCtxCreate')).toBe(false);
      expect(() => Context.create(0, 0, { smCount: 0 })).toThrow(/smCount must be a positive integer/);
      expect(() => Context.create(0, 0, { sms: 1 } as never)).toThrow(/unknown option 'sms'/);
    } finally {
      fake.restore();
    }
  });
});

describe('typed kernel signatures (tsc)', () => {
  test('test/types/kernel-signature.ts compiles, and each @ts-expect-error line is an error without its comment', () => {
    const file = resolve(__dirname, 'types/kernel-signature.ts');
    const options: ts.CompilerOptions = {
      noEmit: true,
      strict: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      esModuleInterop: true,
      skipLibCheck: true,
      lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts'],
      types: ['node'],
    };
    let previous: ts.Program | undefined;
    const diagnostics = (host?: ts.CompilerHost): readonly ts.Diagnostic[] => {
      const program = ts.createProgram([file], options, host, previous); // the second run reuses the unchanged files
      previous = program;
      return ts.getPreEmitDiagnostics(program, program.getSourceFile(file));
    };
    const text = (ds: readonly ts.Diagnostic[]): string[] => ds.map((d) => `${d.start}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(text(diagnostics())).toEqual([]);
    // Without the @ts-expect-error comments every one of those lines must fail to type-check.
    const source = ts.sys.readFile(file)!;
    const expected = source.split('\n').filter((l) => /^\s*\/\/ @ts-expect-error/.test(l)).length;
    expect(expected).toBeGreaterThanOrEqual(4);
    const host = ts.createCompilerHost(options);
    const read = host.readFile.bind(host);
    host.readFile = (f) => (resolve(f) === file ? source.replace(/^(\s*)\/\/ @ts-expect-error[^\n]*/gm, '$1// (expect an error)') : read(f));
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (f, v, onError) => (resolve(f) === file ? ts.createSourceFile(f, host.readFile(f)!, v) : getSourceFile(f, v, onError));
    const errors = diagnostics(host);
    const lines = new Set(errors.map((d) => d.file!.getLineAndCharacterOfPosition(d.start!).line));
    expect(lines.size).toBe(expected);
  });
});
