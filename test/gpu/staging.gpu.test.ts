// Pageable copies staged through pinned chunks (src/memory/staging.ts) on a GPU, checked byte for byte:
// sizes around the chunk boundaries, offsets and subarrays, both directions, without a stream (done on
// return, ordered after blocking streams) and on streams (the source reusable on return), concurrent
// streams with work still in flight, memory the driver knows going direct, the pool freed with its
// context, and the buffer model with every pageable copy staged in small chunks.
import * as objects from '../../src';
import { Context, DeviceBuffer, LaunchConfig, PinnedHostBuffer, Stream, launch, type Kernel } from '../../src';
import { configureStaging, stagingSettings, stagingStats, trimStaging, type StagingSettings } from '../../src/memory/staging';
import { HELPER_WATCH_MS, copyHelperParts, copyHelpersUnavailable, setCopyHelperWatch } from '../../src/memory/host-copy';
import { runModel, shrink } from '../model/buffer-model';
import { ObjectsExecutor } from '../model/objects-executor';
import { compileForSuite, describeGpu } from './gpu-env';

const SOURCE = String.raw`
// spins ~spin clock cycles in block 0, then p[i] = p[i] * 3 + 1 over n bytes
extern "C" __global__ void bump(unsigned char* p, unsigned long long n, long long spin) {
  if (spin > 0 && blockIdx.x == 0 && threadIdx.x == 0) { long long t = clock64(); while (clock64() - t < spin) {} }
  if (spin > 0) __syncthreads();
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x) p[i] = p[i] * 3 + 1;
}`;
const SPIN = 200_000_000; // ~0.1 s at ~2 GHz: long enough that what follows is enqueued behind it

/** Pseudo-random bytes from `seed` (xorshift), different for every seed and position. */
function noise(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}
const bumped = (a: Uint8Array) => a.map((v) => (v * 3 + 1) & 0xff);
/** Equal byte arrays, reporting the first difference rather than megabytes of diff. */
function expectSame(got: Uint8Array, want: Uint8Array): void {
  expect(got.length).toBe(want.length);
  const i = got.findIndex((v, k) => v !== want[k]);
  expect(i === -1 ? 'equal' : `first difference at byte ${i}: ${got[i]} vs ${want[i]}`).toBe('equal');
}

/** The pinned chunks one staged copy of `n` bytes leases with the settings in force (staging.ts's leaseRing). */
function ringChunks(n: number, s: StagingSettings = stagingSettings()): number {
  return Math.max(2, Math.min(s.chunksPerCopy, s.maxChunks, Math.ceil(n / s.chunkBytes)));
}

describeGpu('pageable copies staged through pinned memory', () => {
  const suite = compileForSuite(SOURCE, { name: 'staging.cu' });
  let bump: Kernel<[DeviceBuffer, number, number]>;
  let saved: StagingSettings;
  beforeAll(() => {
    bump = suite.module.kernel('bump', ['ptr', 'u64', 'i64']) as unknown as Kernel<[DeviceBuffer, number, number]>;
    saved = stagingSettings();
  });
  afterEach(() => {
    configureStaging(saved);
    Context.current().synchronize();
    trimStaging(Context.current());
  });
  const run = (s: Stream | undefined, buf: DeviceBuffer, n: number, spin = 0) => launch(s, LaunchConfig.linear(Math.min(n, 65536), 256), bump, buf, n, spin);

  test('default chunks and threads, every copy staged: 64 MiB + 12345 bytes both ways, with and without a stream', () => {
    configureStaging({ minBytes: 64 << 20 });
    const n = (64 << 20) + 12345;
    const data = noise(n, 1);
    const buf = DeviceBuffer.alloc(n);
    buf.copyFrom(data);
    expect(stagingStats(Context.current())).toMatchObject({ chunks: ringChunks(n), leased: 0, pending: 0, bytes: ringChunks(n) * saved.chunkBytes });
    expectSame(buf.copyTo(new Uint8Array(n)), data);
    const s = Stream.create({ nonBlocking: true });
    const other = noise(n, 2);
    buf.copyFrom(other, { stream: s });
    expectSame(buf.copyTo(new Uint8Array(n), { stream: s }), other);
    s.close();
    buf.close();
  });

  test('per direction: uploads staged and downloads direct, then the other way round (the pool shows which)', () => {
    const n = (8 << 20) + 3;
    const buf = DeviceBuffer.alloc(n);
    const ctx = Context.current();
    const s = Stream.create({ nonBlocking: true });
    for (const stream of [undefined, s]) {
      configureStaging({ upload: { minBytes: 1 << 20 }, download: { minBytes: Infinity } });
      trimStaging(ctx);
      const up = noise(n, 60);
      buf.copyFrom(up, { stream });
      expect(stagingStats(ctx).chunks).toBe(ringChunks(n)); // staged
      ctx.synchronize(); // the last DMAs of a copy on a stream may still use the chunks: trim frees idle ones
      trimStaging(ctx);
      expectSame(buf.copyTo(new Uint8Array(n), { stream }), up);
      expect(stagingStats(ctx).chunks).toBe(0); // direct
      configureStaging({ upload: { minBytes: Infinity }, download: { minBytes: 1 << 20 } });
      const down = noise(n, 61);
      buf.copyFrom(down, { stream });
      expect(stagingStats(ctx).chunks).toBe(0);
      expectSame(buf.copyTo(new Uint8Array(n), { stream }), down);
      expect(stagingStats(ctx).chunks).toBe(ringChunks(n));
    }
    s.close();
    buf.close();
  });

  test('helpers that sleep at once after each part (watch 0) and ones that watch long: 24 MiB + 5 bytes both ways, many rounds', async () => {
    const n = (24 << 20) + 5;
    const buf = DeviceBuffer.alloc(n);
    const s = Stream.create({ nonBlocking: true });
    configureStaging({ minBytes: 0, hostThreads: 4, chunkBytes: 2 << 20 });
    try {
      for (const watch of [0, 50]) {
        setCopyHelperWatch(watch);
        for (let round = 0; round < 6; round++) {
          const data = noise(n, 70 + round);
          const stream = round & 1 ? s : undefined;
          buf.copyFrom(data, { stream });
          expectSame(buf.copyTo(new Uint8Array(n), { stream }), data);
          if (round === 0) await new Promise((r) => setTimeout(r, 50)); // the helpers start meanwhile
        }
      }
    } finally {
      setCopyHelperWatch(HELPER_WATCH_MS);
    }
    expect(copyHelpersUnavailable()).toBeUndefined();
    s.close();
    buf.close();
  });

  test('helper threads for the host side (2 and 3): 40 MiB + 7 bytes both ways, with and without a stream', async () => {
    const n = (40 << 20) + 7;
    const buf = DeviceBuffer.alloc(n);
    const s = Stream.create({ nonBlocking: true });
    for (const hostThreads of [2, 3]) {
      configureStaging({ minBytes: 0, hostThreads, chunkBytes: (4 << 20) + 1 });
      for (let round = 0; round < 3; round++) {
        const data = noise(n, 40 + round);
        const stream = round === 1 ? s : undefined;
        buf.copyFrom(data, { stream });
        expectSame(buf.copyTo(new Uint8Array(n), { stream }), data);
        await new Promise((r) => setTimeout(r, 50)); // the helpers start meanwhile
      }
    }
    expect(copyHelperParts().helpers).toBeGreaterThan(0);
    expect(copyHelpersUnavailable()).toBeUndefined();
    s.close();
    buf.close();
  });

  test('small odd chunks: every size around the boundaries, offsets, subarrays, byteLength, DataViews', () => {
    configureStaging({ minBytes: 0, chunkBytes: 65537 });
    const s = Stream.create({ nonBlocking: true });
    const buf = DeviceBuffer.alloc(1 << 20);
    for (const n of [1, 65536, 65537, 65538, 131073, 131074, 500_001]) {
      for (const stream of [undefined, s]) {
        const big = noise(n + 7, n);
        const src = big.subarray(7); // an odd byteOffset into a larger buffer
        buf.copyFrom(src, { offset: 3, stream });
        const out = new Uint8Array(n + 10).fill(0xee);
        buf.copyTo(out.subarray(5), { offset: 3, byteLength: n, stream });
        expectSame(out.subarray(5, 5 + n), src);
        expect([out[4], out[5 + n]]).toEqual([0xee, 0xee]);
        const dv = new DataView(big.buffer, 1, n);
        buf.subarray(100).copyFrom(dv, { stream });
        expectSame(buf.subarray(100, 100 + n).copyTo(new Uint8Array(n), { stream }), big.subarray(1, 1 + n));
      }
    }
    const f64 = Float64Array.from({ length: 100_001 }, (_, i) => i / 7);
    buf.copyFrom(f64, { offset: 8 });
    expect(buf.copyTo(new Float64Array(100_001), { offset: 8 })).toEqual(f64);
    s.close();
    buf.close();
  });

  test('on a stream behind a running kernel: the source is reusable on return, and the copy back sees the kernel', () => {
    configureStaging({ minBytes: 0, chunkBytes: 1 << 20 });
    const s = Stream.create({ nonBlocking: true });
    const n = (5 << 20) + 3;
    const buf = DeviceBuffer.alloc(n);
    buf.memset(0);
    run(s, buf, n, SPIN); // still spinning while the copy below is enqueued
    const data = noise(n, 3);
    const src = data.slice();
    buf.copyFrom(src, { stream: s });
    src.fill(0); // allowed: every byte was in pinned memory when copyFrom returned
    run(s, buf, n);
    expectSame(buf.copyTo(new Uint8Array(n), { stream: s }), bumped(data));
    s.close();
    buf.close();
  });

  test('without a stream: ordered after work on blocking streams, and done on return for non-blocking ones', () => {
    configureStaging({ minBytes: 0, chunkBytes: 1 << 20 });
    const blocking = Stream.create();
    const nb = Stream.create({ nonBlocking: true });
    const n = (6 << 20) + 11;
    const data = noise(n, 4);
    const buf = DeviceBuffer.alloc(n);
    buf.copyFrom(data);
    run(blocking, buf, n, SPIN);
    expectSame(buf.copyTo(new Uint8Array(n)), bumped(data)); // waited for the blocking stream's kernel
    const next = noise(n, 5);
    buf.copyFrom(next); // done on return: a non-blocking stream's kernel right after sees it
    run(nb, buf, n);
    expectSame(buf.copyTo(new Uint8Array(n), { stream: nb }), bumped(next));
    blocking.close();
    nb.close();
    buf.close();
  });

  test.each([2, 4])('concurrent streams with chunks in flight (bound %i chunks): no copy corrupts another', (maxChunks) => {
    configureStaging({ minBytes: 0, chunkBytes: 1 << 20, maxChunks });
    const streams = [0, 1, 2].map(() => Stream.create({ nonBlocking: true }));
    const n = (3 << 20) + 5;
    const bufs = streams.map(() => DeviceBuffer.alloc(n));
    const data = streams.map((_, i) => noise(n, 10 + i));
    const known = noise(n, 20);
    const extra = DeviceBuffer.alloc(n);
    extra.copyFrom(known); // done on return
    for (let i = 0; i < 3; i++) {
      run(streams[i], bufs[i], n, SPIN / 4); // each stream busy, so its staged DMAs stay queued
      bufs[i].copyFrom(data[i], { stream: streams[i] });
    }
    expect(stagingStats(Context.current()).chunks).toBeLessThanOrEqual(maxChunks);
    // device to host on each stream (behind its own work) while the others may still read chunks
    expectSame(bufs[0].copyTo(new Uint8Array(n), { stream: streams[0] }), data[0]);
    for (let i = 0; i < 3; i++) expectSame(extra.copyTo(new Uint8Array(n), { stream: streams[i] }), known);
    for (const s of streams) s.synchronize();
    for (let i = 0; i < 3; i++) expectSame(bufs[i].copyTo(new Uint8Array(n)), data[i]);
    for (const x of [...bufs, extra, ...streams]) x.close();
  });

  test('memory the driver knows goes direct: a typed array over pinned memory leaves the pool untouched', () => {
    configureStaging({ minBytes: 0 });
    trimStaging(Context.current());
    const n = 3 << 20;
    const p = PinnedHostBuffer.alloc(n);
    p.array(Uint8Array).set(noise(n, 6));
    const buf = DeviceBuffer.alloc(n);
    buf.copyFrom(p.array(Uint8Array));
    buf.copyTo(p.array(Uint8Array).subarray(0, 10));
    expect(stagingStats(Context.current()).chunks).toBe(0);
    expectSame(buf.copyTo(new Uint8Array(n)).subarray(10), noise(n, 6).subarray(10));
    p.close();
    buf.close();
  });

  test('a created context frees its pool when it closes', () => {
    configureStaging({ minBytes: 0, chunkBytes: 1 << 20 });
    const ctx = Context.create(0);
    const buf = DeviceBuffer.alloc(3 << 20, { context: ctx });
    const data = noise(3 << 20, 7);
    buf.copyFrom(data);
    expectSame(buf.copyTo(new Uint8Array(3 << 20)), data);
    expect(stagingStats(ctx).chunks).toBe(ringChunks(3 << 20));
    buf.close();
    ctx.close();
    expect(stagingStats(ctx).chunks).toBe(0);
    suite.device.setCurrent();
  });

  test.each([2, 3])('the buffer model with every pageable copy staged in small chunks, %i per copy: 0 mismatches', (chunksPerCopy) => {
    // model slots are 1-16 KiB: 1031-byte chunks make most copies several chunks long
    const exec = new ObjectsExecutor(objects, {
      setup: () => {
        const before = configureStaging({ minBytes: 0, chunkBytes: 1031, chunksPerCopy, maxChunks: chunksPerCopy === 2 ? 2 : 5 });
        return () => configureStaging(before);
      },
    });
    try {
      for (const mode of ['sync', 'none'] as const) {
        const r = runModel(exec, {
          seed: (mode === 'sync' ? 303 : 404) + (chunksPerCopy - 2) * 1000,
          count: Number(process.env.CUDA_TS_MODEL_OPS ?? 20_000),
          mode,
        });
        if (r.mismatch !== undefined) {
          const m = r.mismatch;
          const small = shrink(exec, m.sizes, m.ops.slice(0, m.mismatch.index + 1), mode, 150);
          throw new Error(
            `mode ${mode}: ${m.mismatch.message} at op ${m.mismatch.index}; shrunk to ${small.ops.length} ops (${small.mismatch?.message ?? 'no longer fails'}), slot sizes ${m.sizes.join(', ')}:\n${small.ops.map((o) => JSON.stringify(o)).join('\n')}`,
          );
        }
      }
    } finally {
      exec.close();
    }
  });
});
