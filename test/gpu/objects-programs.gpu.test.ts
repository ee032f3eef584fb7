// Issue 28 on a GPU: what real programs needed below the objects layer, now through it alone — the
// system object (NVML), pointer introspection, virtual memory striped over devices, per-copy batch
// attributes, graph-memory figures and trim, enums by name, pageable 'ptr' arguments, strided views
// and DLPack round trips. Skips with one reason without a GPU.
import koffi from 'koffi';
import {
  CUstreamCaptureMode,
  Device,
  DeviceBuffer,
  DriverError,
  Graph,
  LaunchConfig,
  ManagedBuffer,
  NvmlUnavailableError,
  PhysicalMemory,
  PinnedHostBuffer,
  Stream,
  StridedView,
  VirtualAddressRange,
  copyBatch,
  dlpackExportsAlive,
  fromDLPack,
  launch,
  pointerInfo,
  system,
  toDLPack,
  type Module,
} from '../../src';
import { compileForSuite, describeGpu } from './gpu-env';

const SOURCE = String.raw`
extern "C" __global__ void iota(unsigned* p, unsigned long long first, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; if (i < n) p[i] = (unsigned)(first + i);
}
extern "C" __global__ void grid(int* p, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < rows * cols) p[i] = (i / cols) * 1000 + i % cols;
}
extern "C" __global__ void scale(float* p, float k, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= k;
}
`;

const MiB = 1 << 20;

/** `domain:bus:device.function` as numbers, from CUDA's or NVML's spelling. */
function pciNumbers(busId: string): number[] {
  return busId.split(/[:.]/).map((x) => parseInt(x, 16));
}

describeGpu('objects layer programs: system, pointers, striped VMM, batch attributes, graph memory, DLPack', () => {
  const suite = compileForSuite(SOURCE, { name: 'objects-programs.cu' });
  let device: Device;
  let mod: Module;
  beforeAll(() => ({ device, module: mod } = suite));

  test('system: driver version from the driver; GPUs through NVML agree with CUDA on name, UUID, PCI, memory and compute mode', () => {
    const v = system.driverVersion;
    expect(v.major).toBeGreaterThanOrEqual(12);
    expect(v.code).toBe(v.major * 1000 + v.minor * 10);
    expect(system.deviceCount).toBe(Device.count());
    let gpus;
    try {
      gpus = system.gpus;
    } catch (e) {
      expect(e).toBeInstanceOf(NvmlUnavailableError); // a GPU machine without NVML: the clear error, nothing else
      return;
    }
    expect(system.kernelDriverVersion).toMatch(/^\d+\.\d+/);
    expect(gpus.length).toBeGreaterThanOrEqual(system.deviceCount);
    const mine = gpus.find((g) => g.cudaOrdinal === device.ordinal)!;
    expect(mine).toBeDefined();
    expect(mine.uuid.toLowerCase()).toBe(`gpu-${device.uuid}`);
    expect(mine.name).toBe(device.name);
    expect(pciNumbers(mine.pci.busId)).toEqual(pciNumbers(device.pciBusId));
    expect(Math.abs(mine.memory.total - device.totalMemory)).toBeLessThan(0.05 * device.totalMemory);
    expect(mine.memory.used + mine.memory.free).toBeLessThanOrEqual(mine.memory.total);
    expect(mine.computeMode).toBe(device.computeMode);
    expect(mine.computeCapability).toEqual(device.computeCapability);
    const t = mine.temperature;
    expect(t === undefined || (t > 0 && t < 110)).toBe(true);
    const [p, cap] = [mine.powerUsage, mine.powerLimit];
    expect(p === undefined || (p > 0 && p <= 1.5 * (cap ?? 2000))).toBe(true);
    const u = mine.utilization;
    expect(u === undefined || (u.gpu >= 0 && u.gpu <= 100)).toBe(true);
    expect(() => system.gpu(gpus.length)).toThrow(RangeError);
  });

  test('pointerInfo: device, managed, pinned and pageable memory described by the driver', () => {
    const d = DeviceBuffer.alloc(MiB);
    const part = d.subarray(4096, 8192);
    const di = pointerInfo(part);
    expect(di).toMatchObject({ memoryType: 'device', device: device.ordinal, deviceAccessible: true, hostAccessible: false });
    expect(di.range!.start).toBeLessThanOrEqual(d.ptr);
    expect(di.range!.start + di.range!.size).toBeGreaterThanOrEqual(d.ptr + MiB);
    expect(di.context).toBe(device.primaryContext().handle);
    const m = ManagedBuffer.alloc(4096);
    expect(pointerInfo(m)).toMatchObject({ memoryType: 'managed', deviceAccessible: true, hostAccessible: true });
    const h = PinnedHostBuffer.alloc(4096);
    const hi = pointerInfo(h);
    expect(hi).toMatchObject({ memoryType: 'host', deviceAccessible: true, hostAccessible: true, hostPointer: h.hostAddress, devicePointer: h.devicePointer });
    expect(pointerInfo(new Float32Array(1024))).toMatchObject({ memoryType: 'unregistered', hostAccessible: true, deviceAccessible: false });
    for (const x of [part, d, m, h]) x.close();
  });

  test('VirtualAddressRange: one aligned range striped over chunks on every device, one kernel writes it all', async () => {
    const devices = Array.from({ length: Math.min(Device.count(), 2) }, (_, i) => i);
    const g = Math.max(...devices.map((d) => PhysicalMemory.granularity({ location: d })));
    const chunks = 4;
    const range = VirtualAddressRange.reserve({ size: chunks * g, alignment: 2 * g });
    expect(range.address % (2 * g)).toBe(0);
    const memories = Array.from({ length: chunks }, (_, i) => PhysicalMemory.create({ size: g, location: devices[i % devices.length] }));
    memories.forEach((mem, i) => range.map(i * g, mem, { accessFrom: devices }));
    memories.forEach((mem) => mem.close()); // the mappings keep them
    for (let i = 0; i < chunks; i++) expect(pointerInfo(range.address + i * g).device).toBe(devices[i % devices.length]);
    const all = range.buffer();
    const words = all.byteLength / 4;
    const stream = Stream.create();
    launch(stream, LaunchConfig.linear(words), mod.kernel('iota', ['ptr', 'u64', 'u64']), all, 7, words);
    await stream.synchronized();
    const back = all.toArray(Uint32Array);
    expect(back[0]).toBe(7);
    expect(back[words - 1]).toBe(words - 1 + 7);
    expect(back.every((x, i) => x === i + 7)).toBe(true);
    all.close();
    range.unmap(0);
    expect(() => range.buffer()).toThrow(/not all mapped/);
    range.close();
    stream.close();
  });

  test('PhysicalMemory of the managed type: mapped and written where the driver supports it, a DriverError where not', async () => {
    let mem: PhysicalMemory | undefined;
    let range: VirtualAddressRange | undefined;
    try {
      const g = PhysicalMemory.granularity({ type: 'managed' });
      mem = PhysicalMemory.create({ size: g, type: 'managed' });
      range = VirtualAddressRange.reserve({ size: mem.size });
      range.map(0, mem);
    } catch (e) {
      // a driver without managed VMM allocations says so with its own status, nothing else
      expect(e).toBeInstanceOf(DriverError);
      expect((e as DriverError).name).toMatch(/NOT_SUPPORTED|INVALID_VALUE|INVALID_DEVICE/);
      range?.close();
      mem?.close();
      return;
    }
    expect(mem.type).toBe('managed');
    const buf = range.buffer(0, 4096);
    buf.copyFrom(new Uint32Array(1024).fill(9));
    expect(buf.toArray(Uint32Array).every((x) => x === 9)).toBe(true);
    for (const x of [buf, range, mem]) x.close();
  });

  test('copyBatch: per-copy access order and location hints, every copy lands', async () => {
    const stream = Stream.create();
    const src = DeviceBuffer.from(Uint32Array.from({ length: 1024 }, (_, i) => i));
    const managed = ManagedBuffer.alloc(4096);
    const dst = DeviceBuffer.alloc(4096);
    copyBatch(stream, [
      { dst: managed, src, bytes: 2048, dstLocationHint: 'host', srcLocationHint: device.ordinal },
      { dst: managed, src, bytes: 2048, srcOffset: 2048, dstOffset: 2048, srcAccessOrder: 'any', dstLocationHint: 'host' },
      { dst, src: Uint32Array.from({ length: 1024 }, (_, i) => 5 * i), preferOverlapWithCompute: true },
    ]);
    await stream.synchronized();
    expect(managed.array(Uint32Array).every((x, i) => x === i)).toBe(true);
    expect(dst.toArray(Uint32Array).every((x, i) => x === 5 * i)).toBe(true);
    for (const x of [src, managed, dst, stream]) x.close();
  });

  test('graph memory: a graph allocation shows in the figures; trim returns it; watermarks reset', async () => {
    device.synchronize();
    device.trimGraphMemory();
    device.resetGraphMemoryHighWatermarks();
    const graph = Graph.create();
    const alloc = graph.addMemAllocNode([], 8 * MiB);
    const set = graph.addMemsetNode([alloc.node], alloc, 1);
    graph.addMemFreeNode([set], alloc);
    const exec = graph.instantiate();
    const stream = Stream.create();
    exec.launch(stream);
    await stream.synchronized();
    const during = device.graphMemory;
    expect(during.usedHigh).toBeGreaterThanOrEqual(8 * MiB);
    expect(during.used).toBeLessThanOrEqual(during.usedHigh);
    expect(during.reserved).toBeGreaterThanOrEqual(8 * MiB); // kept by the driver for the next launch
    exec.close();
    graph.close();
    device.synchronize();
    device.trimGraphMemory();
    const after = device.graphMemory;
    expect(after.reserved).toBeLessThan(during.reserved);
    expect(after.reservedHigh).toBeGreaterThanOrEqual(during.reserved);
    device.resetGraphMemoryHighWatermarks();
    const reset = device.graphMemory;
    expect(reset.reservedHigh).toBeLessThanOrEqual(reset.reserved); // no longer the earlier peak
    expect(reset.usedHigh).toBeLessThanOrEqual(reset.used);
    stream.close();
  });

  test('enums by name: Graph.capture takes CUstreamCaptureMode from the objects entry; computeMode is named', () => {
    const stream = Stream.create();
    const buf = DeviceBuffer.alloc(4096);
    const graph = Graph.capture(stream, (s) => buf.memset(3, { stream: s }), CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL);
    expect(graph.nodes().length).toBeGreaterThan(0);
    expect(['default', 'prohibited', 'exclusiveProcess']).toContain(device.computeMode);
    for (const x of [graph, buf, stream]) x.close();
  });

  test("pageable host memory as a 'ptr' argument: used in place where the device has pageable access, refused clearly elsewhere", async () => {
    const n = 4096;
    const host = new Float32Array(n).fill(2);
    const k = mod.kernel('scale', ['ptr', 'f32', 'u32']);
    const stream = Stream.create();
    if (device.properties.pageableMemoryAccess) {
      launch(stream, LaunchConfig.linear(n), k, host, 1.5, n);
      await stream.synchronized();
      expect(host.every((x) => x === 3)).toBe(true);
    } else {
      expect(() => launch(stream, LaunchConfig.linear(n), k, host, 1.5, n)).toThrow(/pageable memory, and device \d+ reports no pageable memory access/);
      expect(host.every((x) => x === 2)).toBe(true);
    }
    stream.close();
  });

  test('StridedView over device memory: a kernel-written matrix read back transposed and by column', async () => {
    const [rows, cols] = [5, 7];
    const buf = DeviceBuffer.alloc(4 * rows * cols);
    const stream = Stream.create();
    launch(stream, LaunchConfig.linear(rows * cols), mod.kernel('grid', ['ptr', 'i32', 'i32']), buf, rows, cols);
    await stream.synchronized();
    const m = StridedView.of(buf, { dtype: 'i32', shape: [rows, cols] });
    const t = Array.from(m.transpose().toArray() as Int32Array);
    expect(t.slice(0, rows)).toEqual([0, 1000, 2000, 3000, 4000]);
    const col3 = StridedView.of(buf, { dtype: 'i32', shape: [rows], strides: [cols], byteOffset: 4 * 3 });
    expect(Array.from(col3.toArray() as Int32Array)).toEqual([3, 1003, 2003, 3003, 4003]);
    buf.close();
    stream.close();
  });

  test('DLPack: device, managed and pinned views round-trip through the C struct; each deleter runs exactly once', () => {
    const dev = DeviceBuffer.from(Float32Array.from({ length: 12 }, (_, i) => i));
    const managed = ManagedBuffer.alloc(48);
    managed.array(Float32Array).set(Array.from({ length: 12 }, (_, i) => 3 * i));
    const pinned = PinnedHostBuffer.from(Float32Array.from({ length: 12 }, (_, i) => 2 * i));
    const before = dlpackExportsAlive();
    for (const [buf, deviceType, sign] of [
      [dev, 2, 1],
      [managed, 13, 3],
      [pinned, 3, 2],
    ] as const) {
      const view = StridedView.of(buf, { dtype: 'f32', shape: [3, 4] }).transpose();
      const want = [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11].map((x) => sign * x);
      expect(Array.from(view.toArray() as Float32Array)).toEqual(want); // the producer's own view reads the same
      const p = toDLPack(view);
      expect(new DataView(koffi.view(Number(p), 80)).getInt32(40, true)).toBe(deviceType);
      buf.close(); // the exported tensor keeps the memory
      const back = fromDLPack(p);
      expect([back.shape, back.strides, back.dtype]).toEqual([[4, 3], [1, 4], 'f32']);
      expect(Array.from(back.toArray() as Float32Array)).toEqual(want);
      expect(dlpackExportsAlive()).toBe(before + 1);
      back.buffer.close(); // the deleter runs: the struct is freed and the buffer's memory with it
      expect(dlpackExportsAlive()).toBe(before);
    }
  });
});
