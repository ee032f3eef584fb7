// Out of memory while the caching allocator holds the memory (issue 25 §3), on the real device: every
// allocation path gets the cached blocks back and retries once (managed memory before it allocates: its
// pages come at first touch); MemoryPool.trim of the default pool releases them too; memoryInfo() shows them. Fills the whole device, so it runs alone (--runInBand).
import { CachingAllocator, Context, Device, DeviceBuffer, ManagedBuffer, MemoryPool, Stream } from '../../src';
import { describeGpu } from './gpu-env';

const GiB = 2 ** 30;
const MiB = 2 ** 20;

/** Fills the device with stream-ordered buffers until it is out of memory, closes them all and waits. */
function fillAndRelease(stream: Stream): number {
  const held: DeviceBuffer[] = [];
  for (const size of [GiB, 64 * MiB, 4 * MiB]) {
    for (;;) {
      try {
        held.push(DeviceBuffer.alloc(size, { stream }));
      } catch (e) {
        if (!/CUDA_ERROR_OUT_OF_MEMORY/.test(String(e))) throw e;
        break;
      }
    }
  }
  const bytes = held.reduce((n, b) => n + b.byteLength, 0);
  for (const b of held) b.close();
  stream.synchronize();
  return bytes;
}

function checkContents(buf: DeviceBuffer): void {
  buf.memset(0x5a);
  const pattern = Uint8Array.from({ length: MiB }, (_, i) => (i * 7 + 3) & 0xff);
  buf.copyFrom(pattern, { offset: buf.byteLength - MiB });
  for (const at of [0, buf.byteLength / 2, buf.byteLength - 2 * MiB])
    expect(buf.copyTo(new Uint8Array(4096), { offset: at }).every((b) => b === 0x5a)).toBe(true);
  expect(buf.copyTo(new Uint8Array(MiB), { offset: buf.byteLength - MiB })).toEqual(pattern);
}

describeGpu('out of memory with a full cache (device 0)', () => {
  let ctx: Context;
  let stream: Stream;
  beforeAll(() => {
    Device.get(0).setCurrent();
    ctx = Context.current();
    stream = Stream.create();
  });
  afterAll(() => {
    CachingAllocator.trim();
    stream?.close();
  });

  test('a 1 GiB cuMemAlloc after the cache took the whole device succeeds, contents right', () => {
    const filled = fillAndRelease(stream);
    const info = ctx.memoryInfo();
    expect(filled).toBeGreaterThan(info.total / 2);
    expect(info.cached).toBeGreaterThanOrEqual(filled);
    expect(info.free).toBeLessThan(GiB);
    const buf = DeviceBuffer.alloc(GiB); // cuMemAlloc: out of memory, the cache gives back, retried
    try {
      checkContents(buf);
      expect(ctx.memoryInfo().cached).toBe(0);
    } finally {
      buf.close();
    }
  });

  test('MemoryPool.default(0).trim(0) releases what the cache holds from it; then managed memory fits', () => {
    fillAndRelease(stream);
    expect(ctx.memoryInfo().cached).toBeGreaterThan(GiB);
    MemoryPool.default(0).trim(0);
    const info = ctx.memoryInfo();
    expect(info.cached).toBe(0);
    expect(info.free).toBeGreaterThan(info.total / 2);
    using m = ManagedBuffer.alloc(GiB);
    checkContents(m);
  });

  test('managed memory after a refill: the cache gives back first (first touch cannot retry); an explicit pool retries', () => {
    fillAndRelease(stream);
    using m = ManagedBuffer.alloc(GiB);
    expect(ctx.memoryInfo().cached).toBe(0);
    checkContents(m);
    fillAndRelease(stream);
    using pool = MemoryPool.create();
    using b = pool.alloc(GiB, stream);
    stream.synchronize();
    checkContents(b);
  });
});
