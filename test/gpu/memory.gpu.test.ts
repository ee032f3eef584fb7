// Memory on a GPU: pinned-host and managed pools, wrapped pools
// and pointers, deallocation streams, PinnedHostBuffer copy/fill, ManagedBuffer advise/prefetch,
// VirtualMemoryResource, copyBatch, TensorMap (a TMA kernel), CudaArray/TextureObject/SurfaceObject.
// For each: create, use, close, use after close, parents kept alive. Skips with one reason without a GPU.
import * as cu from '../../generated/13.0/driver';
import {
  CachingAllocator,
  CudaArray,
  Device,
  DeviceBuffer,
  LaunchConfig,
  ManagedBuffer,
  MemoryPool,
  PinnedHostBuffer,
  Program,
  Stream,
  SurfaceObject,
  TensorMap,
  TextureObject,
  VirtualMemoryResource,
  copyBatch,
  launch,
  type Module,
} from '../../src';
import { tmaTileKernel } from './fixtures/tma-kernel';
import { compileForSuite, describeGpu } from './gpu-env';

const SOURCE = String.raw`
extern "C" __global__ void addk(int* p, int v, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += v;
}
extern "C" __global__ void iota(unsigned* p, unsigned long long first, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; if (i < n) p[first + i] = (unsigned)(first + i);
}
extern "C" __global__ void sample(cudaTextureObject_t tex, cudaSurfaceObject_t surf, float* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  float v = tex2D<float>(tex, x + 0.5f, y + 0.5f);   // texel centre: exact
  out[y * w + x] = v;
  if (surf) surf2Dwrite(v * 2.0f, surf, x * (int)sizeof(float), y);
}
`;

// The tile at (8, 8): the test's tensor map describes it.
const TMA_SOURCE = tmaTileKernel(8, 8);

describeGpu('memory resources, wrapped memory, batched copies, tensor maps, textures', () => {
  const suite = compileForSuite(SOURCE, { name: 'memory.cu' });
  let device: Device;
  let mod: Module;
  beforeAll(() => ({ device, module: mod } = suite));

  test('MemoryPool.pinned: host-accessible buffers a kernel updates; the pool outlives its closed wrapper while buffers live', async () => {
    if (!device.properties.hostMemoryPoolsSupported) {
      expect(() => MemoryPool.pinned()).toThrow(/cuMemPoolCreate failed/);
      return;
    }
    const addk = mod.kernel('addk', ['ptr', 'i32', 'u32']);
    const stream = Stream.create();
    const pool = MemoryPool.pinned({ releaseThreshold: 1 << 20 });
    expect(pool.memoryType).toBe('pinnedHost');
    expect(pool.accessFrom(device.ordinal)).toBe('readWrite');
    const n = 1024;
    const buf = pool.alloc(4 * n, stream);
    expect(buf.hostAccessible).toBe(true);
    await stream.synchronized();
    buf.array(Int32Array).forEach((_, i, a) => (a[i] = i));
    pool.close(); // kept alive by buf
    launch(stream, LaunchConfig.linear(n), addk, buf, 100, n);
    await stream.synchronized();
    const host = buf.array(Int32Array);
    expect(host[0]).toBe(100);
    expect(host[n - 1]).toBe(n - 1 + 100);
    expect(() => pool.alloc(16, stream)).toThrow(/MemoryPool \(pinned host\) is closed/);
    buf.close();
    expect(() => buf.array()).toThrow(/is closed/);
    await stream.synchronized();
    stream.close();
    addk.close();
  });

  test('MemoryPool.managed: ManagedBuffers from a managed pool, advised, prefetched, read on the host', async () => {
    const addk = mod.kernel('addk', ['ptr', 'i32', 'u32']);
    const stream = Stream.create();
    const pool = MemoryPool.managed({ preferredLocation: { device: device.ordinal } });
    expect(pool.memoryType).toBe('managed');
    const n = 4096;
    const m = pool.alloc(4 * n, stream) as ManagedBuffer;
    expect(m).toBeInstanceOf(ManagedBuffer);
    await stream.synchronized();
    m.array(Int32Array).fill(1);
    try {
      m.advise('accessedBy', device.ordinal);
    } catch (e) {
      // some drivers (the H200 machine's 580 in a container) refuse advice on pool-allocated managed memory
      expect((e as { name?: string }).name).toBe('CUDA_ERROR_NOT_SUPPORTED');
      console.log(`cuMemAdvise on managed-pool memory: ${(e as Error).message}`);
    }
    m.prefetch('device', stream);
    launch(stream, LaunchConfig.linear(n), addk, m, 41, n);
    m.prefetch('host', stream);
    await stream.synchronized();
    expect(m.array(Int32Array).every((v) => v === 42)).toBe(true);
    m.close();
    pool.close();
    expect(() => pool.alloc(16, stream)).toThrow(/is closed/);
    await stream.synchronized();
    stream.close();
    addk.close();
  });

  test('MemoryPool.wrap: a foreign pool used without owning it; owned on request', async () => {
    const stream = Stream.create();
    const original = MemoryPool.create();
    const wrapped = MemoryPool.wrap(original.handle);
    const b = wrapped.alloc(4096, stream);
    b.memset(7, { stream });
    expect(b.toArray(Uint8Array, { stream })[4095]).toBe(7);
    b.close();
    wrapped.close();
    const c = original.alloc(64, stream); // the pool itself lives on
    c.close();
    await stream.synchronized();
    original.close();
    // a pool made through the typed layer (CUmemPoolProps as encoded bytes), handed over to the objects layer
    const props = new DataView(new ArrayBuffer(88));
    props.setInt32(0, cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED, true);
    props.setInt32(8, cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, true);
    props.setInt32(12, device.ordinal, true);
    const handle = cu.cuMemPoolCreate(new Uint8Array(props.buffer));
    const owned = MemoryPool.wrap(handle, { owned: true });
    expect(owned.owned).toBe(true);
    const d = owned.alloc(64, stream);
    owned.close(); // deferred while d lives
    d.memset(3, { stream });
    expect(d.toArray(Uint8Array, { stream })[63]).toBe(3);
    d.close();
    await stream.synchronized();
    expect(() => owned.trim()).toThrow(/MemoryPool \(wrapped, owned\) is closed/);
    stream.close();
  });

  test('DeviceBuffer.wrap: a foreign pointer is used, never freed, and keeps its owner alive', () => {
    const raw = cu.cuMemAlloc(1024);
    const w = DeviceBuffer.wrap(raw, 1024);
    w.copyFrom(new Uint32Array(256).fill(0xabcd));
    expect(w.toArray(Uint32Array)[255]).toBe(0xabcd);
    w.close();
    expect(() => w.ptr).toThrow(/is closed/);
    expect(() => cu.cuMemFree(raw)).not.toThrow(); // still ours to free: the wrapper did not
    const owner = DeviceBuffer.from(new Int32Array(64).fill(3));
    const view = DeviceBuffer.wrap(owner.ptr + 128, 128, { owner });
    owner.close(); // deferred: the wrapper holds it
    expect(view.toArray(Int32Array)).toEqual(new Int32Array(32).fill(3));
    view.close();
  });

  test('deallocation stream: freed on the chosen stream, which is kept alive; the cache reuses it there', async () => {
    const s1 = Stream.create();
    const s2 = Stream.create();
    const a = DeviceBuffer.alloc(1 << 16, { stream: s1 });
    a.deallocationStream = s2;
    const ptr = a.ptr;
    a.close();
    const b = DeviceBuffer.alloc(1 << 16, { stream: s2 });
    expect(b.ptr).toBe(ptr); // from s2's bin
    b.close();
    const c = DeviceBuffer.alloc(1 << 16, { stream: s1, cache: false }).setDeallocationStream(s2);
    s2.close(); // deferred until c is freed on it
    c.memset(1, { stream: s1 });
    await s1.synchronized();
    c.close();
    const sync = DeviceBuffer.alloc(64);
    expect(() => sync.setDeallocationStream(s1)).toThrow(/only stream-ordered buffers/);
    sync.close();
    await s1.synchronized();
    s1.close();
    CachingAllocator.trim();
    device.primaryContext().synchronize();
  });

  test('PinnedHostBuffer: fill and copies, on the host and on a stream', async () => {
    const stream = Stream.create();
    const p = PinnedHostBuffer.alloc(4096);
    const d = DeviceBuffer.alloc(4096);
    p.fill(0x5a);
    p.copyTo(d);
    p.fill(0x01020304, { width: 4, stream });
    p.copyFrom(d, { stream, offset: 1024, byteLength: 1024 }); // bytes [1024, 2048) back to 0x5a
    await stream.synchronized();
    const words = p.array(Uint32Array);
    expect(words[0]).toBe(0x01020304);
    expect(words[256]).toBe(0x5a5a5a5a);
    expect(words[512]).toBe(0x01020304);
    p.copyFrom(new Uint8Array([9, 8, 7]), { offset: 4093 });
    expect(Array.from(p.array(Uint8Array).subarray(4093))).toEqual([9, 8, 7]);
    const q = PinnedHostBuffer.alloc(16);
    p.copyTo(q, { offset: 4080, stream });
    await stream.synchronized();
    expect(q.array(Uint8Array)[15]).toBe(7);
    p.close();
    expect(() => p.fill(0)).toThrow(/PinnedHostBuffer is closed/);
    for (const x of [q, d, stream]) x.close();
  });

  test('VirtualMemoryResource: grows without moving, buffers stay valid and keep it alive', async () => {
    const iota = mod.kernel('iota', ['ptr', 'u64', 'u64']);
    const stream = Stream.create();
    const vm = VirtualMemoryResource.create({ maxSize: 256 << 20, granularity: 'minimum' });
    const address = vm.address;
    vm.grow(1);
    const first = vm.buffer();
    launch(stream, LaunchConfig.linear(first.byteLength / 4), iota, first, 0, first.byteLength / 4);
    const words1 = first.byteLength / 4;
    vm.grow(3 * vm.granularity);
    expect(vm.address).toBe(address);
    expect(vm.chunkCount).toBe(2);
    const all = vm.buffer();
    const words = all.byteLength / 4;
    launch(stream, LaunchConfig.linear(words - words1), iota, all, words1, words - words1);
    await stream.synchronized();
    const got = all.toArray(Uint32Array);
    expect(got.every((v, i) => v === i)).toBe(true);
    expect(() => vm.grow(256 << 20)).toThrow(RangeError);
    vm.close(); // deferred: first and all hold it
    expect(() => vm.grow(1)).toThrow(/VirtualMemoryResource is closed/);
    expect(first.toArray(Uint32Array)[words1 - 1]).toBe(words1 - 1); // still mapped
    first.close();
    all.close();
    for (const x of [stream, iota]) x.close();
  });

  test('copyBatch: host, device and pinned endpoints in one call', async () => {
    const stream = Stream.create();
    const a = DeviceBuffer.alloc(4096);
    const b = DeviceBuffer.alloc(4096);
    const pinned = PinnedHostBuffer.alloc(8192);
    const src = Float32Array.from({ length: 1024 }, (_, i) => i);
    copyBatch(stream, [
      { dst: a, src },
      { dst: b, src: src.subarray(512), dstOffset: 0 },
    ]);
    copyBatch(stream, [
      { dst: pinned, src: a },
      { dst: pinned, src: b, bytes: 2048, dstOffset: 4096 },
    ]);
    await stream.synchronized();
    const got = pinned.array(Float32Array);
    expect(got[1023]).toBe(1023);
    expect(got[1024]).toBe(512);
    expect(got[1024 + 511]).toBe(1023);
    a.close();
    expect(() => copyBatch(stream, [{ dst: a, src: b }])).toThrow(/DeviceBuffer is closed/);
    expect(() => copyBatch(Stream.legacyDefault(), [{ dst: b, src: b }])).toThrow(/copyBatch: the legacy default stream cannot run batched copies/);
    for (const x of [b, pinned, stream]) x.close();
  });

  test('TensorMap: a TMA kernel reads the tile it describes; replaceAddress; the buffer is kept alive', () => {
    if (device.computeCapability[0] < 9) return; // TMA needs sm_90+ (the H200 is sm_90)
    const tma = new Program(TMA_SOURCE, { name: 'tma.cu' }).compile({ arch: `${device.arch}a` });
    const tmaMod = tma.load();
    const k = tmaMod.kernel('tma_tile', [TensorMap.argType, 'ptr']);
    const n = 16;
    const hostA = Float32Array.from({ length: n * n }, (_, i) => i);
    const hostB = Float32Array.from({ length: n * n }, (_, i) => -i);
    const a = DeviceBuffer.from(hostA);
    const b = DeviceBuffer.from(hostB);
    const out = DeviceBuffer.alloc(64 * 4);
    const map = TensorMap.tiled({ buffer: a, dtype: 'f32', shape: [n, n], box: [8, 8] });
    const expected = (h: Float32Array) => Float32Array.from({ length: 64 }, (_, i) => h[(8 + Math.floor(i / 8)) * n + 8 + (i % 8)]); // the tile at (8, 8)
    a.close(); // kept alive by the map
    launch(undefined, { grid: 1, block: 32 }, k, map.bytes, out);
    expect(out.toArray(Float32Array)).toEqual(expected(hostA));
    map.replaceAddress(b);
    launch(undefined, { grid: 1, block: 32 }, k, map.arg, out);
    expect(out.toArray(Float32Array)).toEqual(expected(hostB));
    map.close();
    expect(() => map.bytes).toThrow(/TensorMap is closed/);
    expect(() => map.replaceAddress(b)).toThrow(/TensorMap is closed/);
    for (const x of [out, b, k, tmaMod, tma]) x.close();
  });

  test('CudaArray + TextureObject + SurfaceObject: sampled, written, copied back; parents kept alive', async () => {
    const sample = mod.kernel('sample', ['u64', 'u64', 'ptr', 'i32', 'i32']);
    const stream = Stream.create();
    const w = 32;
    const h = 16;
    const image = Float32Array.from({ length: w * h }, (_, i) => i * 0.5);
    const src = CudaArray.create({ width: w, height: h, format: 'f32' });
    src.copyFrom(image);
    const dst = CudaArray.create({ width: w, height: h, format: 'f32', surface: true });
    const tex = TextureObject.create(src, { filterMode: 'point' });
    const surf = SurfaceObject.create(dst);
    const out = DeviceBuffer.alloc(4 * w * h);
    src.close(); // the texture keeps it
    dst.close(); // the surface keeps it
    launch(stream, new LaunchConfig({ grid: [w / 16, h / 16], block: [16, 16] }), sample, tex.handle, surf.handle, out, w, h);
    await stream.synchronized();
    expect(out.toArray(Float32Array)).toEqual(image);
    expect(() => dst.copyTo(new Float32Array(w * h))).toThrow(/CudaArray is closed/); // closed for us, alive for the surface
    const back = new Float32Array(w * h);
    const again = CudaArray.create({ width: w, height: h, format: 'f32', surface: true });
    const surf2 = SurfaceObject.create(again);
    launch(stream, new LaunchConfig({ grid: [w / 16, h / 16], block: [16, 16] }), sample, tex.handle, surf2.handle, out, w, h);
    await stream.synchronized();
    again.copyTo(back);
    expect(back).toEqual(image.map((v) => 2 * v));
    tex.close();
    surf.close();
    expect(() => tex.handle).toThrow(/TextureObject is closed/);
    const surf3 = SurfaceObject.create(again); // a closed surface did not take its array with it
    expect(surf3.handle).toBeGreaterThan(0);
    surf3.close();
    for (const x of [surf2, again, out, stream, sample]) x.close();
  });
});
