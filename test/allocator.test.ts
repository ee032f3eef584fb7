// The caching allocator's logic, against a fake driver (no GPU): reuse per stream and size class,
// cross-stream reuse ordered with an event, trim, limit, opt-out, stream destroy, out-of-memory retry.
import * as drv from '../src/driver';
import { CachingAllocator, sizeClass } from '../src/memory/allocator';
import { Context } from '../src/context';
import { DeviceBuffer, ManagedBuffer, MemoryPool, PinnedHostBuffer } from '../src/memory';
import { Stream } from '../src/stream';
import { fakeContext } from './helpers/fake-driver';

type Call = [string, ...unknown[]];
const calls: Call[] = [];
let current = 0;
let nextHandle = 0x5000;
let nextPtr = 0x7f0000000000;
let failAllocs = 0;

const fakes: Record<string, (...a: never[]) => number> = {
  cuCtxGetCurrent: (slot: BigUint64Array) => ((slot[0] = BigInt(current)), 0),
  cuCtxSetCurrent: (h: number) => ((current = h), 0),
  cuCtxSynchronize: () => (calls.push(['cuCtxSynchronize']), 0),
  cuStreamCreateWithPriority: (out: BigUint64Array) => ((out[0] = BigInt((nextHandle += 0x100))), 0),
  cuStreamDestroy: (h: number) => (calls.push(['cuStreamDestroy', h]), 0),
  cuMemAllocAsync: (out: BigUint64Array, bytes: number, h: number) => {
    calls.push(['cuMemAllocAsync', bytes, h]);
    if (failAllocs > 0) {
      failAllocs--;
      return drv.CUresult.CUDA_ERROR_OUT_OF_MEMORY;
    }
    out[0] = BigInt(nextPtr);
    nextPtr += bytes;
    return 0;
  },
  cuMemFreeAsync: (ptr: number, h: number) => (calls.push(['cuMemFreeAsync', ptr, h]), 0),
  cuEventCreate: (out: BigUint64Array) => ((out[0] = 0xe000n), 0),
  cuEventRecord: (ev: number, h: number) => (calls.push(['cuEventRecord', ev, h]), 0),
  cuStreamWaitEvent: (h: number, ev: number) => (calls.push(['cuStreamWaitEvent', h, ev]), 0),
  cuDeviceGet: (out: Int32Array, ordinal: number) => ((out[0] = ordinal), 0),
  cuDeviceGetMemPool: (out: BigUint64Array) => ((out[0] = 0xd00n), 0),
  cuMemPoolTrimTo: (pool: number, keep: number) => (calls.push(['cuMemPoolTrimTo', pool, keep]), 0),
  cuMemGetInfo: (free: BigUint64Array, total: BigUint64Array) => ((free[0] = BigInt(freeBytes)), (total[0] = 1n << 30n), 0),
  // the other allocation paths: out of memory while `failOthers` > 0
  ...Object.fromEntries(
    ['cuMemAlloc', 'cuMemAllocManaged', 'cuMemHostAlloc', 'cuMemAllocFromPoolAsync'].map((name) => [
      name,
      (out: BigUint64Array, bytes: number) => {
        calls.push([name, bytes]);
        if (failOthers > 0) {
          failOthers--;
          return drv.CUresult.CUDA_ERROR_OUT_OF_MEMORY;
        }
        out[0] = BigInt(nextPtr);
        nextPtr += bytes;
        return 0;
      },
    ]),
  ),
  cuMemFree: (ptr: number) => (calls.push(['cuMemFree', ptr]), 0),
  cuMemFreeHost: (ptr: number) => (calls.push(['cuMemFreeHost', ptr]), 0),
  cuMemPoolCreate: (out: BigUint64Array) => ((out[0] = 0xd02n), 0),
  cuMemPoolDestroy: () => 0,
  cuMemPoolSetAccess: () => 0,
  cuMemPoolSetAttribute: () => 0,
  cuDeviceGetDefaultMemPool: (out: BigUint64Array) => ((out[0] = 0xd00n), 0),
};
let failOthers = 0;
let freeBytes = 3 << 20;

const names = (list: Call[]) => list.map((c) => c[0]);

beforeAll(() => {
  for (const [name, fn] of Object.entries(fakes)) drv.provideNative(name, fn as never);
});
afterAll(() => {
  for (const name of Object.keys(fakes)) drv.provideNative(name, undefined);
});
beforeEach(() => {
  calls.length = 0;
  failAllocs = 0;
  failOthers = 0;
  freeBytes = 3 << 20;
});

describe('size classes', () => {
  test('512-byte minimum, then four classes per power of two', () => {
    expect([1, 512, 513, 640, 641, 768, 1000, 1024, 1025].map(sizeClass)).toEqual([512, 512, 640, 640, 768, 768, 1024, 1024, 1280]);
    expect(sizeClass(1 << 20)).toBe(1 << 20);
    expect(sizeClass((1 << 20) + 1)).toBe(1.25 * (1 << 20));
    expect(sizeClass(3 * 2 ** 32 + 1)).toBe(3.5 * 2 ** 32); // 2 GiB steps between 8 and 16 GiB
    for (let n = 1; n < 1 << 22; n = Math.ceil(n * 1.37)) {
      const c = sizeClass(n);
      expect(c).toBeGreaterThanOrEqual(n);
      expect(c).toBeLessThanOrEqual(Math.max(512, n * 1.25 + 1));
    }
  });
});

describe('caching allocator (fake driver)', () => {
  test('a freed block is reused on its stream without a driver call', () => {
    const ctx = fakeContext(0xc1);
    const s = Stream.create({ context: ctx });
    const a = DeviceBuffer.alloc(1000, { stream: s });
    const ptr = a.ptr;
    a.close();
    expect(names(calls)).toEqual(['cuMemAllocAsync']);
    expect(calls[0]).toEqual(['cuMemAllocAsync', 1024, s.handle]);
    expect(CachingAllocator.stats(ctx)).toMatchObject({ inUse: 0, cached: 1024, peak: 1024, hits: 0, misses: 1 });
    const b = DeviceBuffer.alloc(900, { stream: s });
    expect(b.ptr).toBe(ptr);
    expect(b.byteLength).toBe(900);
    expect(names(calls)).toEqual(['cuMemAllocAsync']);
    expect(CachingAllocator.stats(ctx)).toMatchObject({ inUse: 1024, cached: 0, hits: 1, misses: 1 });
    const c = DeviceBuffer.alloc(2000, { stream: s }); // another class: the driver
    expect(c.ptr).not.toBe(ptr);
    expect(CachingAllocator.stats(ctx).peak).toBe(1024 + 2048);
    b.close();
    c.close();
    s.close();
    // the stream's cached blocks go back to the driver on its own stream, before it is destroyed
    expect(names(calls).slice(-3)).toEqual(['cuMemFreeAsync', 'cuMemFreeAsync', 'cuStreamDestroy']);
    expect(calls.slice(-3, -1).every((c2) => c2[2] === s.handle)).toBe(true);
    expect(CachingAllocator.stats(ctx)).toMatchObject({ inUse: 0, cached: 0 });
  });

  test('reuse on another stream waits for the freeing stream with an event', () => {
    const ctx = fakeContext(0xc2);
    const s1 = Stream.create({ context: ctx });
    const s2 = Stream.create({ context: ctx });
    const a = DeviceBuffer.alloc(4096, { stream: s1 });
    const ptr = a.ptr;
    a.close();
    calls.length = 0;
    const b = DeviceBuffer.alloc(4000, { stream: s2 });
    expect(b.ptr).toBe(ptr);
    expect(calls).toEqual([
      ['cuEventRecord', 0xe000, s1.handle],
      ['cuStreamWaitEvent', s2.handle, 0xe000],
    ]);
    b.close(); // now cached on s2
    calls.length = 0;
    const c = DeviceBuffer.alloc(4096, { stream: s2 });
    expect(c.ptr).toBe(ptr);
    expect(calls).toEqual([]); // same stream: no event
    c.close();
    for (const s of [s1, s2]) s.close();
  });

  test('trim() returns cached blocks; the limit refuses with a RangeError; cache: false bypasses', () => {
    const ctx = fakeContext(0xc3);
    const s = Stream.create({ context: ctx });
    DeviceBuffer.alloc(8192, { stream: s }).close();
    calls.length = 0;
    CachingAllocator.trim(ctx);
    expect(calls.map((c) => c[0])).toEqual(['cuMemFreeAsync']);
    expect(CachingAllocator.stats(ctx).cached).toBe(0);
    CachingAllocator.setLimit(8192, ctx);
    const a = DeviceBuffer.alloc(8192, { stream: s });
    expect(() => DeviceBuffer.alloc(1, { stream: s })).toThrow(RangeError);
    expect(() => DeviceBuffer.alloc(1, { stream: s })).toThrow(/limit of 8192 bytes \(8192 in use\)/);
    a.close();
    CachingAllocator.setLimit(Infinity, ctx);
    calls.length = 0;
    const u = DeviceBuffer.alloc(1000, { stream: s, cache: false });
    u.close();
    expect(calls).toEqual([
      ['cuMemAllocAsync', 1000, s.handle],
      ['cuMemFreeAsync', u.toString().match(/0x([0-9a-f]+)/) ? parseInt(u.toString().match(/0x([0-9a-f]+)/)![1], 16) : -1, s.handle],
    ]);
    expect(() => CachingAllocator.setLimit(-1)).toThrow(RangeError);
    expect(() => CachingAllocator.configure({ enabled: 'no' as never })).toThrow(TypeError);
    expect(() => CachingAllocator.stats('ctx' as never)).toThrow(/context must be a Context/);
    s.close();
  });

  test('out of memory: cached blocks are returned, the context synchronized, the pool trimmed, and the allocation retried once', () => {
    const ctx = fakeContext(0xc4);
    const s = Stream.create({ context: ctx });
    DeviceBuffer.alloc(1 << 20, { stream: s }).close();
    calls.length = 0;
    failAllocs = 1;
    const b = DeviceBuffer.alloc(3 << 20, { stream: s });
    expect(names(calls)).toEqual(['cuMemAllocAsync', 'cuMemFreeAsync', 'cuCtxSynchronize', 'cuMemPoolTrimTo', 'cuMemAllocAsync']);
    expect(calls[3]).toEqual(['cuMemPoolTrimTo', 0xd00, 0]);
    b.close();
    failAllocs = 2;
    expect(() => DeviceBuffer.alloc(5 << 20, { stream: s })).toThrow(/CUDA_ERROR_OUT_OF_MEMORY/);
    s.close();
  });

  test.each([
    ['DeviceBuffer.alloc without a stream', 'cuMemAlloc', (ctx: Context) => DeviceBuffer.alloc(4 << 20, { context: ctx })],
    [
      'ManagedBuffer.alloc (the device has room)',
      'cuMemAllocManaged',
      (ctx: Context) => ((freeBytes = 1 << 29), ManagedBuffer.alloc(4 << 20, { context: ctx })),
    ],
    ['PinnedHostBuffer.alloc', 'cuMemHostAlloc', (ctx: Context) => PinnedHostBuffer.alloc(4 << 20, { context: ctx })],
    ['an uncached stream-ordered allocation', 'cuMemAllocAsync', (ctx: Context, s: Stream) => DeviceBuffer.alloc(4 << 20, { stream: s, cache: false })],
    ['a MemoryPool allocation', 'cuMemAllocFromPoolAsync', (ctx: Context, s: Stream) => MemoryPool.create({ context: ctx }).alloc(4 << 20, s)],
  ] as const)('out of memory in %s: the cache is emptied (frees waited for, pool trimmed) and the allocation retried once', (_, func, alloc) => {
    const ctx = fakeContext(0xc9);
    const s = Stream.create({ context: ctx });
    DeviceBuffer.alloc(2 << 20, { stream: s }).close();
    expect(ctx.memoryInfo()).toEqual({ free: 3 << 20, total: 1 << 30, cached: 2 << 20 });
    calls.length = 0;
    if (func === 'cuMemAllocAsync') failAllocs = 1;
    else failOthers = 1;
    const b = alloc(ctx, s);
    expect(names(calls).filter((n) => n !== 'cuMemFree')).toEqual([func, 'cuMemFreeAsync', 'cuCtxSynchronize', 'cuMemPoolTrimTo', func]);
    expect(CachingAllocator.stats(ctx).cached).toBe(0);
    expect(ctx.memoryInfo().cached).toBe(0);
    b.close();
    // nothing cached: no retry, the error names the call
    calls.length = 0;
    if (func === 'cuMemAllocAsync') failAllocs = 1;
    else failOthers = 1;
    expect(() => alloc(ctx, s)).toThrow(new RegExp(`${func}.*CUDA_ERROR_OUT_OF_MEMORY`));
    expect(names(calls)).toEqual([func]);
    s.close();
  });

  test.each([
    ['ManagedBuffer.alloc', 'cuMemAllocManaged', (ctx: Context) => ManagedBuffer.alloc(4 << 20, { context: ctx })],
    ['a managed MemoryPool allocation', 'cuMemAllocFromPoolAsync', (ctx: Context, s: Stream) => MemoryPool.managed({ context: ctx }).alloc(4 << 20, s)],
  ] as const)(
    '%s gives the cached blocks back first when the device is short of free memory (its pages come at first touch, where out of memory is fatal)',
    (_, func, alloc) => {
      const ctx = fakeContext(0xcb);
      const s = Stream.create({ context: ctx });
      DeviceBuffer.alloc(2 << 20, { stream: s }).close();
      calls.length = 0;
      freeBytes = 64 << 20; // 4 MiB plus the paging headroom does not fit
      const b = alloc(ctx, s);
      expect(names(calls).filter((n) => n !== 'cuMemFree')).toEqual(['cuMemFreeAsync', 'cuCtxSynchronize', 'cuMemPoolTrimTo', func]);
      expect(CachingAllocator.stats(ctx).cached).toBe(0);
      b.close();
      // enough free memory: the cache keeps its blocks
      DeviceBuffer.alloc(2 << 20, { stream: s }).close();
      calls.length = 0;
      freeBytes = 1 << 29;
      alloc(ctx, s).close();
      expect(names(calls).filter((n) => !/Free|Pool(Create|Destroy)/.test(n))).toEqual([func]);
      expect(CachingAllocator.stats(ctx).cached).toBe(2 << 20);
      CachingAllocator.trim(ctx);
      s.close();
    },
  );

  test("MemoryPool.trim of the device's current pool gives back the blocks the cache keeps from it first; another pool's trim does not", () => {
    const ctx = fakeContext(0xca);
    const s = Stream.create({ context: ctx });
    DeviceBuffer.alloc(1 << 20, { stream: s }).close();
    calls.length = 0;
    const other = MemoryPool.create({ context: ctx });
    other.trim(0);
    expect(names(calls)).toEqual(['cuMemPoolTrimTo']);
    expect(CachingAllocator.stats(ctx).cached).toBe(1 << 20);
    calls.length = 0;
    MemoryPool.default(0, ctx).trim(0);
    expect(names(calls)).toEqual(['cuMemFreeAsync', 'cuCtxSynchronize', 'cuMemPoolTrimTo', 'cuMemPoolTrimTo']);
    expect(CachingAllocator.stats(ctx).cached).toBe(0);
    other.close();
    s.close();
  });

  test('a context made unusable drops freed blocks instead of caching them', () => {
    const ctx = fakeContext(0xc5);
    const s = Stream.create({ context: ctx });
    const a = DeviceBuffer.alloc(512, { stream: s });
    drv.fail(ctx, 'cuStreamSynchronize', drv.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS);
    calls.length = 0;
    a.close();
    expect(calls).toEqual([]);
    expect(CachingAllocator.stats(ctx)).toMatchObject({ inUse: 0, cached: 0 });
  });

  test('the JS cost of a cached alloc + free pair (informative)', () => {
    const ctx = fakeContext(0xc6);
    const s = Stream.create({ context: ctx });
    const N = 200_000;
    for (let i = 0; i < 20_000; i++) DeviceBuffer.alloc(1 << 20, { stream: s }).close();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) DeviceBuffer.alloc(1 << 20, { stream: s }).close();
    const ns = Number(process.hrtime.bigint() - t0) / N;
    console.log(`cached DeviceBuffer.alloc(1 MiB, { stream }) + close(): ${ns.toFixed(0)} ns per pair here (fake driver)`);
    expect(CachingAllocator.stats(ctx).misses).toBe(1);
    s.close();
  });
});
