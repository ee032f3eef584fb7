// Pageable copies, direct vs staged through pinned chunks (src/memory/staging.ts), to find the crossover
// STAGING_MIN_BYTES should hold, and CuPy's copies of the same sizes beside them.
//
//   npx tsx bench/staging.ts [out.json]      (part of `npm run bench`: step `staging`)
//   env: BENCH_SCALE, BENCH_DEVICE, PYTHON (default python3), BENCH_STAGING_CUPY=0 (leave CuPy out)
//
// Each size from 64 KiB to 256 MiB (powers of 2), each direction: DeviceBuffer.copyFrom / copyTo of a
// pageable Uint8Array on one non-blocking stream, then a stream synchronize, as the main table's
// h2d/d2h_pageable_256MiB rows; `direct` with staging off (minBytes Infinity), `staged` with every
// copy staged (minBytes 0), at the default chunk size and bound. The two run interleaved: repetition k
// of one next to repetition k of the other (alternating which goes first), 5 repetitions, medians.
// 256 MiB once more without a stream (done on return: the "synchronous" path); 256 MiB staged at chunk
// sizes from 1 to 32 MiB and with 0 to 3 helper threads for the host side; and the host copies alone (pageable to pinned and back), the staged path's ceiling.
// CuPy (bench/python/bench_cupy_copies.py): cudaMemcpyAsync of a numpy array on a non-blocking stream,
// then a synchronize, the operation of the main table's CuPy rows.
//
// Output: {"impl": "cuda-ts-staging", "meta": {crossover, settings, …}, "rows": {"h2d_64KiB_direct": row, …}}
// and CuPy's as {"impl": "cupy-copies", …}: a JSON list of the two on stdout or in out.json.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { BENCH_DIR, Impl, type ImplResult, type MeasuredRow, REPS, SCALE, isMeasured, log, nowNs, reason, summarize, writeJson } from './common';
import { loadModule } from './startup';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
type Staging = typeof import('../src/memory/staging');
type StagingSettings = import('../src/memory/staging').StagingSettings;

const KiB = 1024;
const MiB = 1024 * KiB;
/** 64 KiB, 128 KiB, …, 256 MiB. */
export const STAGING_SIZES: readonly number[] = Array.from({ length: 13 }, (_, i) => 64 * KiB * 2 ** i);
const LARGEST = STAGING_SIZES[STAGING_SIZES.length - 1];

/** A size as the row names write it: 64KiB, 1MiB, 256MiB. */
export function sizeLabel(n: number): string {
  return n >= MiB ? `${n / MiB}MiB` : `${n / KiB}KiB`;
}

/** Copies per repetition: about 512 MiB moved, 2 to 4096 copies, scaled by BENCH_SCALE. */
function opsFor(size: number): number {
  return Math.max(2, Math.min(4096, Math.round(((512 * MiB) / size) * SCALE)));
}

/**
 * The crossover of one direction: the smallest size from which staged is at least as fast as direct at
 * every larger size; undefined when staging never wins (or a row is missing).
 */
export function crossover(rows: Record<string, unknown>, dir: 'h2d' | 'd2h', sizes: readonly number[] = STAGING_SIZES): number | undefined {
  let from: number | undefined;
  for (let i = sizes.length - 1; i >= 0; i--) {
    const d = rows[`${dir}_${sizeLabel(sizes[i])}_direct`] as MeasuredRow | undefined;
    const s = rows[`${dir}_${sizeLabel(sizes[i])}_staged`] as MeasuredRow | undefined;
    if (!isMeasured(d) || !isMeasured(s) || s.median < d.median) break;
    from = sizes[i];
  }
  return from;
}

/** Runs the `direct` and `staged` passes interleaved; returns their rows (GB/s). */
function pair(st: Staging, passFor: (mode: 'direct' | 'staged') => (ops: number) => void, ops: number, bytes: number): Record<'direct' | 'staged', MeasuredRow> {
  const modes = ['direct', 'staged'] as const;
  const settings = { direct: Infinity, staged: 0 };
  const reps: Record<string, number[]> = { direct: [], staged: [] };
  const run = (mode: 'direct' | 'staged', n: number): number => {
    st.configureStaging({ minBytes: settings[mode] });
    const pass = passFor(mode);
    const t0 = nowNs();
    pass(n);
    return Number(nowNs() - t0) || 1;
  };
  for (const m of modes) run(m, 1); // warm-up (the staged one allocates the pool)
  for (let k = 0; k < REPS; k++) {
    for (const m of k & 1 ? [...modes].reverse() : modes) reps[m].push((bytes * ops) / run(m, ops));
  }
  return { direct: summarize(reps.direct, 'GB/s', ops), staged: summarize(reps.staged, 'GB/s', ops) };
}

function measureObjects(impl: Impl, O: Any, st: Staging): void {
  const dev = O.Device.get(Number(process.env.BENCH_DEVICE ?? 0));
  dev.setCurrent();
  const stream = O.Stream.create({ nonBlocking: true });
  const buf = O.DeviceBuffer.alloc(LARGEST);
  const host = new Uint8Array(LARGEST).fill(2);
  const before = st.configureStaging({});
  impl.meta.settings = before;
  try {
    for (const size of STAGING_SIZES) {
      for (const dir of ['h2d', 'd2h'] as const) {
        const name = `${dir}_${sizeLabel(size)}`;
        try {
          const copies = () => (ops: number) => {
            for (let i = 0; i < ops; i++) {
              if (dir === 'h2d') buf.copyFrom(host, { stream, byteLength: size });
              else buf.copyTo(host, { stream, byteLength: size });
            }
            stream.synchronize();
          };
          const r = pair(st, copies, opsFor(size), size);
          impl.rows[`${name}_direct`] = r.direct;
          impl.rows[`${name}_staged`] = r.staged;
          log(`staging ${name.padEnd(12)} direct ${r.direct.median.toFixed(2).padStart(7)} GB/s  staged ${r.staged.median.toFixed(2).padStart(7)} GB/s`);
        } catch (e) {
          impl.skip(`${name}_direct`, reason(e));
          impl.skip(`${name}_staged`, reason(e));
        }
      }
    }
    impl.meta.bestChunk = sweep(impl, st, buf, host, stream, CHUNK_SWEEP, (v) => ({ chunkBytes: v }), (v) => `chunk${sizeLabel(v)}`);
    impl.meta.bestThreads = sweep(impl, st, buf, host, stream, THREAD_SWEEP, (v) => ({ hostThreads: v }), (v) => `threads${v}`);
    hostCopyCeiling(impl, O, host);
    for (const dir of ['h2d', 'd2h'] as const) {
      const name = `${dir}_${sizeLabel(LARGEST)}_sync`;
      try {
        const r = pair(st, () => (ops) => {
          for (let i = 0; i < ops; i++) (dir === 'h2d' ? buf.copyFrom(host) : buf.copyTo(host));
        }, opsFor(LARGEST), LARGEST);
        impl.rows[`${name}_direct`] = r.direct;
        impl.rows[`${name}_staged`] = r.staged;
      } catch (e) {
        impl.skip(`${name}_direct`, reason(e));
        impl.skip(`${name}_staged`, reason(e));
      }
    }
  } finally {
    st.configureStaging(before);
    stream.synchronize();
    buf.close();
    stream.close();
  }
  impl.meta.crossover = { h2d: crossover(impl.rows, 'h2d') ?? null, d2h: crossover(impl.rows, 'd2h') ?? null };
}

/** Chunk sizes tried at 256 MiB (staged, on the stream): which one STAGING_CHUNK_BYTES should be. */
export const CHUNK_SWEEP: readonly number[] = [1, 2, 4, 8, 16, 32].map((m) => m * MiB);
/** Helper threads tried at 256 MiB (staged, default chunk size): which STAGING_HOST_THREADS should be. */
export const THREAD_SWEEP: readonly number[] = [0, 1, 2, 3];

/**
 * 256 MiB staged on the stream with each value of one setting (the others at their defaults); rows
 * `<dir>_256MiB_staged_<label(v)>`. Returns the fastest value per direction.
 */
function sweep(impl: Impl, st: Staging, buf: Any, host: Uint8Array, stream: Any, values: readonly number[], set: (v: number) => Partial<StagingSettings>, label: (v: number) => string): Record<string, number | null> {
  const before = st.configureStaging({ minBytes: 0 });
  const best: Record<string, number | null> = { h2d: null, d2h: null };
  try {
    for (const dir of ['h2d', 'd2h'] as const) {
      let top = 0;
      for (const v of values) {
        const name = `${dir}_${sizeLabel(LARGEST)}_staged_${label(v)}`;
        try {
          st.configureStaging({ ...before, minBytes: 0, ...set(v) });
          const pass = (ops: number) => {
            for (let i = 0; i < ops; i++) (dir === 'h2d' ? buf.copyFrom(host, { stream }) : buf.copyTo(host, { stream }));
            stream.synchronize();
          };
          pass(1);
          const reps: number[] = [];
          const ops = opsFor(LARGEST);
          for (let k = 0; k < REPS; k++) {
            const t0 = nowNs();
            pass(ops);
            reps.push((LARGEST * ops) / (Number(nowNs() - t0) || 1));
          }
          const r = summarize(reps, 'GB/s', ops);
          impl.rows[name] = r;
          if (r.median > top) [top, best[dir]] = [r.median, v];
          log(`staging ${name.padEnd(28)} ${r.median.toFixed(2).padStart(7)} GB/s`);
        } catch (e) {
          impl.skip(name, reason(e));
        }
      }
    }
  } finally {
    st.configureStaging(before);
  }
  return best;
}

/**
 * The host side alone: 256 MiB copied with TypedArray.set in 8 MiB pieces between the pageable array and
 * pinned memory (plain, and write-combined for the direction to the device), and pageable to pageable.
 * A staged copy cannot beat the slower of this and the DMA: it says whether a faster host copy (more
 * threads, write-combined chunks) is where more speed would come from.
 */
function hostCopyCeiling(impl: Impl, O: Any, host: Uint8Array): void {
  const piece = 8 * MiB;
  const cases: [string, boolean | undefined, 'to' | 'from'][] = [
    ['hostcopy_to_pinned', false, 'to'],
    ['hostcopy_to_pinned_wc', true, 'to'],
    ['hostcopy_from_pinned', false, 'from'],
    ['hostcopy_pageable', undefined, 'to'],
  ];
  for (const [name, wc, dir] of cases) {
    let pinned: Any;
    try {
      pinned = wc === undefined ? undefined : O.PinnedHostBuffer.alloc(piece, { writeCombined: wc });
      const other: Uint8Array = pinned ? pinned.array(Uint8Array) : new Uint8Array(piece).fill(1);
      const pass = (ops: number) => {
        for (let i = 0; i < ops; i++) {
          for (let off = 0; off < LARGEST; off += piece) {
            if (dir === 'to') other.set(host.subarray(off, off + piece));
            else host.set(other, off);
          }
        }
      };
      pass(1);
      const reps: number[] = [];
      for (let k = 0; k < REPS; k++) {
        const t0 = nowNs();
        pass(2);
        reps.push((2 * LARGEST) / (Number(nowNs() - t0) || 1));
      }
      const r = summarize(reps, 'GB/s', 2);
      impl.rows[name] = r;
      log(`staging ${name.padEnd(28)} ${r.median.toFixed(2).padStart(7)} GB/s`);
    } catch (e) {
      impl.skip(name, reason(e));
    } finally {
      pinned?.close();
    }
  }
}

/** CuPy's copies of the same sizes, from bench/python/bench_cupy_copies.py. */
function cupyCopies(): ImplResult {
  if (process.env.BENCH_STAGING_CUPY === '0') return { impl: 'cupy-copies', meta: {}, rows: {}, skipped: 'BENCH_STAGING_CUPY=0' };
  const py = process.env.PYTHON || 'python3';
  const sizes = STAGING_SIZES.join(',');
  const r = spawnSync(py, [join(BENCH_DIR, 'python', 'bench_cupy_copies.py'), '--sizes', sizes], { encoding: 'utf8', timeout: 240_000, stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) return { impl: 'cupy-copies', meta: {}, rows: {}, skipped: `bench_cupy_copies.py exited ${r.status ?? r.signal}: ${r.error?.message ?? ''}`.trim() };
  const line = r.stdout.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  if (!line) return { impl: 'cupy-copies', meta: {}, rows: {}, skipped: 'bench_cupy_copies.py printed no JSON' };
  return JSON.parse(line) as ImplResult;
}

function main(): void {
  const impl = new Impl('cuda-ts-staging');
  let result: ImplResult;
  try {
    // The 'js' tree: src/index and src/memory/staging must be one module instance (dist/ bundles them apart).
    const O = loadModule<Any>('src/index', 'js');
    const st = loadModule<Staging>('src/memory/staging', 'js');
    measureObjects(impl, O, st);
    result = impl.result();
  } catch (e) {
    result = { impl: 'cuda-ts-staging', meta: {}, rows: impl.rows, skipped: reason(e) };
  }
  const all = [result, cupyCopies()];
  const out = process.argv[2];
  if (out) writeJson(out, all);
  else process.stdout.write(`${JSON.stringify(all)}\n`);
}

if (require.main === module) main();
