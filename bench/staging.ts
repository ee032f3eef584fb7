// The `staging` step of `npm run bench`: pageable copies, direct vs staged through pinned chunks
// (src/memory/staging.ts) with 0/2/4/8 helper threads, CuPy's copies of the same sizes beside them, and the
// defaults the data recommend (STAGING_DEFAULTS: per direction, the crossover and the helper threads).
//   npx tsx bench/staging.ts [out.json]      env: BENCH_SCALE, BENCH_DEVICE, PYTHON, BENCH_STAGING_CUPY=0
// Each size from 1 MiB to 256 MiB, each direction: DeviceBuffer.copyFrom / copyTo of one pageable
// Uint8Array (touched once, as CuPy's numpy array) on a non-blocking stream, then a synchronize. Modes
// `direct` (staging off) and `staged_t<n>`, interleaved (the order rotating), medians of REPS; then 256 MiB
// with the recommended threads by chunk size and chunks per copy. Output: a JSON list of
// {"impl": "cuda-ts-staging", "meta": {recommended, crossover, …}, "rows": {"h2d_1MiB_direct": row, …}}
// and CuPy's {"impl": "cupy-copies", …}; the recommendation is logged as the STAGING_DEFAULTS literal.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { BENCH_DIR, Impl, type ImplResult, type MeasuredRow, REPS, SCALE, isMeasured, log, nowNs, reason, summarize, writeJson } from './common';
import { loadModule } from './startup';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
type Staging = typeof import('../src/memory/staging');
type HostCopy = typeof import('../src/memory/host-copy');
type StagingChange = import('../src/memory/staging').StagingChange;
type StagingSettings = import('../src/memory/staging').StagingSettings;
type Dir = 'h2d' | 'd2h';

const KiB = 1024;
const MiB = 1024 * KiB;
const DIRS: readonly Dir[] = ['h2d', 'd2h'];
/** 1 MiB, 2 MiB, …, 256 MiB. */
export const STAGING_SIZES: readonly number[] = Array.from({ length: 9 }, (_, i) => MiB * 2 ** i);
const LARGEST = STAGING_SIZES[STAGING_SIZES.length - 1];
/** Helper threads tried at every size. */
export const THREAD_SWEEP: readonly number[] = [0, 2, 4, 8];
/** Chunk sizes tried at 256 MiB with the recommended threads. */
export const CHUNK_SWEEP: readonly number[] = [2, 4, 8, 16, 32].map((m) => m * MiB);
/** Chunks per copy tried at 256 MiB with the recommended threads and the default chunk size (2: the chunk sweep's row). */
export const RING_SWEEP: readonly number[] = [2, 3, 4];
/** Staged must beat direct by this much at a size (and every larger one) to be recommended there. */
export const STAGING_MARGIN = 1.05;
/** Values within this fraction of the fastest count as tied (the smaller / the default is taken). */
const TIE = 0.03;

/** A size as the row names write it: 64KiB, 1MiB, 256MiB. */
export function sizeLabel(n: number): string {
  return n >= MiB ? `${n / MiB}MiB` : `${n / KiB}KiB`;
}

/** Copies per repetition: about 256 MiB moved, 1 to 4096 copies, scaled by BENCH_SCALE. */
function opsFor(size: number): number {
  return Math.max(1, Math.min(4096, Math.round(((256 * MiB) / size) * SCALE)));
}

const rowAt = (rows: Record<string, unknown>, name: string): MeasuredRow | undefined => {
  const r = rows[name] as MeasuredRow | undefined;
  return isMeasured(r) ? r : undefined;
};

/**
 * The crossover of one direction: the smallest size from which `<dir>_<size>_<staged>` is at least
 * `margin` times `<dir>_<size>_direct` at every larger size; undefined when staging never wins (or a
 * row is missing).
 */
export function crossover(
  rows: Record<string, unknown>,
  dir: Dir,
  sizes: readonly number[] = STAGING_SIZES,
  staged = 'staged',
  margin = 1,
): number | undefined {
  let from: number | undefined;
  for (let i = sizes.length - 1; i >= 0; i--) {
    const d = rowAt(rows, `${dir}_${sizeLabel(sizes[i])}_direct`);
    const s = rowAt(rows, `${dir}_${sizeLabel(sizes[i])}_${staged}`);
    if (!d || !s || s.median < d.median * margin) break;
    from = sizes[i];
  }
  return from;
}

/** The fastest of `values` by `name(v)`'s median, preferring `prefer` (else the first) when within TIE of it; undefined when none measured. */
export function fastest(rows: Record<string, unknown>, values: readonly number[], name: (v: number) => string, prefer?: number): number | undefined {
  const measured = values.map((v) => [v, rowAt(rows, name(v))?.median] as const).filter((x): x is readonly [number, number] => x[1] !== undefined);
  if (measured.length === 0) return undefined;
  const top = Math.max(...measured.map((x) => x[1]));
  const near = measured.filter((x) => x[1] >= top * (1 - TIE));
  return (near.find((x) => x[0] === prefer) ?? near[0])[0];
}

/** One direction's recommendation: staged from minBytes (null: never) with hostThreads helpers. */
export interface DirectionAdvice {
  minBytes: number | null;
  hostThreads: number;
}

/** The defaults the rows recommend, in STAGING_DEFAULTS's shape (null minBytes: Infinity; null chunkBytes / chunksPerCopy: not measured). */
export interface StagingAdvice {
  upload: DirectionAdvice;
  download: DirectionAdvice;
  chunkBytes: number | null;
  chunksPerCopy: number | null;
}

/** Helper threads per direction: the fewest within TIE of the fastest at 256 MiB. */
export function adviseThreads(rows: Record<string, unknown>, dir: Dir): number | undefined {
  return fastest(rows, THREAD_SWEEP, (t) => `${dir}_${sizeLabel(LARGEST)}_staged_t${t}`);
}

/** The value of `values` fastest for the directions `dirs` together (their 256 MiB rows `name(dir, v)` summed). */
function fastestForBoth(
  rows: Record<string, unknown>,
  dirs: readonly Dir[],
  values: readonly number[],
  name: (dir: Dir, v: number) => string,
  prefer: number,
): number | undefined {
  const sums: Record<string, MeasuredRow> = {};
  for (const v of values) {
    const parts = dirs.map((d) => rowAt(rows, name(d, v))?.median);
    if (parts.length > 0 && parts.every((p) => p !== undefined))
      sums[`sum${v}`] = { median: (parts as number[]).reduce((a, b) => a + b, 0), unit: 'GB/s', n: 1, reps: [] };
  }
  return fastest(sums, values, (v) => `sum${v}`, prefer);
}

/** The recommendation from the size x mode rows (and the chunk sweep's, when there). */
export function recommend(rows: Record<string, unknown>, defaultChunk: number): StagingAdvice {
  const dirAdvice = (dir: Dir): DirectionAdvice => {
    const t = adviseThreads(rows, dir) ?? 0;
    return { minBytes: crossover(rows, dir, STAGING_SIZES, `staged_t${t}`, STAGING_MARGIN) ?? null, hostThreads: t };
  };
  const upload = dirAdvice('h2d');
  const download = dirAdvice('d2h');
  // one chunk size and ring for both: the fastest for the directions that are staged, by their summed speed
  const staged = DIRS.filter((d) => (d === 'h2d' ? upload : download).minBytes !== null);
  const L = sizeLabel(LARGEST);
  const chunkBytes = fastestForBoth(rows, staged, CHUNK_SWEEP, (d, c) => `${d}_${L}_chunk${sizeLabel(c)}`, defaultChunk) ?? null;
  const ring = (d: Dir, k: number) => (k === 2 ? `${d}_${L}_chunk${sizeLabel(defaultChunk)}` : `${d}_${L}_perCopy${k}`);
  const chunksPerCopy = fastestForBoth(rows, staged, RING_SWEEP, ring, 2) ?? null;
  return { upload, download, chunkBytes, chunksPerCopy };
}

/** The recommendation as the STAGING_DEFAULTS literal of src/memory/staging.ts. */
export function adviceLiteral(a: StagingAdvice, maxChunks: number, defaultChunk: number): string {
  const bytes = (n: number | null): string => (n === null ? 'Infinity' : n >= MiB ? `${n / MiB} << 20` : String(n));
  const dir = (d: DirectionAdvice): string => `{ minBytes: ${bytes(d.minBytes)}, hostThreads: ${d.hostThreads} }`;
  const ring = a.chunksPerCopy ?? 2;
  return `STAGING_DEFAULTS = { upload: ${dir(a.upload)}, download: ${dir(a.download)}, chunkBytes: ${bytes(a.chunkBytes ?? defaultChunk)}, maxChunks: ${Math.max(maxChunks, ring)}, chunksPerCopy: ${ring} }`;
}

// ---------------------------------------------------------------------------------------------
// Measuring
// ---------------------------------------------------------------------------------------------

interface Rig {
  /** The settings in force at the start: each mode starts from them, then applies its change. */
  base: StagingSettings;
  st: Staging;
  buf: Any;
  host: Uint8Array;
  stream: Any;
}

/** One pass of `ops` copies of `size` bytes in `dir` on the stream, then a synchronize. */
function streamPass(r: Rig, dir: Dir, size: number): (ops: number) => void {
  return (ops) => {
    for (let i = 0; i < ops; i++) {
      if (dir === 'h2d') r.buf.copyFrom(r.host, { stream: r.stream, byteLength: size });
      else r.buf.copyTo(r.host, { stream: r.stream, byteLength: size });
    }
    r.stream.synchronize();
  };
}

/** A mode: its row suffix, the settings it runs under, and whether to copy once untimed first (its own pool to allocate). */
interface Mode {
  name: string;
  change: StagingChange;
  prime?: boolean;
}

/** Runs `modes` interleaved (repetition k of each side by side, the order rotating) after one warm-up pass each; their rows (GB/s). */
function interleaved(r: Rig, modes: readonly Mode[], pass: (ops: number) => void, ops: number, bytes: number): Record<string, MeasuredRow> {
  const reps: Record<string, number[]> = {};
  const run = (m: Mode, n: number, timed: boolean): void => {
    r.st.configureStaging(r.base);
    r.st.configureStaging(m.change);
    if (timed && m.prime) pass(1);
    const t0 = nowNs();
    pass(n);
    if (timed) (reps[m.name] ??= []).push((bytes * n) / (Number(nowNs() - t0) || 1));
  };
  for (const m of modes) run(m, 1, false);
  for (let k = 0; k < REPS; k++) for (let j = 0; j < modes.length; j++) run(modes[(j + k) % modes.length], ops, true);
  return Object.fromEntries(modes.map((m) => [m.name, summarize(reps[m.name], 'GB/s', ops)]));
}

const staged = (t: number): Mode => ({ name: `staged_t${t}`, change: { minBytes: 0, hostThreads: t } });
const DIRECT: Mode = { name: 'direct', change: { minBytes: Infinity } };

/** Runs `modes` on `pass` into rows `<prefix>_<mode>` (skipped with the reason on an error); logs one line. */
function measureModes(impl: Impl, r: Rig, prefix: string, modes: readonly Mode[], pass: (ops: number) => void, size: number): void {
  try {
    const rows = interleaved(r, modes, pass, opsFor(size), size);
    for (const m of modes) impl.rows[`${prefix}_${m.name}`] = rows[m.name];
    log(`staging ${prefix.padEnd(11)} GB/s: ${modes.map((m) => `${m.name.replace('staged_', '')} ${rows[m.name].median.toFixed(2)}`).join('  ')}`);
  } catch (e) {
    for (const m of modes) impl.skip(`${prefix}_${m.name}`, reason(e));
  }
}

/**
 * 256 MiB staged with the recommended threads at each chunk size, and at the default one with 3 and 4
 * chunks per copy; rows `<dir>_256MiB_chunk<size>`, `<dir>_256MiB_perCopy<k>`.
 */
function chunkModes(r: Rig, threads: number): Mode[] {
  const modes = CHUNK_SWEEP.map((c): Mode => ({ name: `chunk${sizeLabel(c)}`, change: { minBytes: 0, hostThreads: threads, chunkBytes: c }, prime: true }));
  for (const k of RING_SWEEP.filter((x) => x > 2))
    modes.push({ name: `perCopy${k}`, change: { minBytes: 0, hostThreads: threads, chunksPerCopy: k, maxChunks: Math.max(k, r.base.maxChunks) }, prime: true });
  return modes;
}

/** Starts the helper threads (the most any mode uses) and gives them time to load koffi. */
async function startHelpers(hc: HostCopy): Promise<void> {
  const max = Math.max(...THREAD_SWEEP);
  const a = new Uint8Array(16 * MiB);
  const b = new Uint8Array(16 * MiB);
  for (let i = 0; i < 20 && hc.copyHelperParts().helpers === 0; i++) {
    hc.hostCopy(a, b, max);
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Every size x direction x mode, then the chunk sweep at the recommended threads; the recommendation in meta. */
async function measureObjects(impl: Impl, O: Any, st: Staging, hc: HostCopy): Promise<void> {
  O.Device.get(Number(process.env.BENCH_DEVICE ?? 0)).setCurrent();
  const before = st.configureStaging({});
  const r: Rig = {
    base: before,
    st,
    buf: O.DeviceBuffer.alloc(LARGEST),
    host: new Uint8Array(LARGEST).fill(2),
    stream: O.Stream.create({ nonBlocking: true }),
  };
  impl.meta.settings = before;
  try {
    await startHelpers(hc);
    const modes = [DIRECT, ...THREAD_SWEEP.map(staged)];
    for (const size of STAGING_SIZES) for (const dir of DIRS) measureModes(impl, r, `${dir}_${sizeLabel(size)}`, modes, streamPass(r, dir, size), size);
    const threads = { h2d: adviseThreads(impl.rows, 'h2d') ?? 0, d2h: adviseThreads(impl.rows, 'd2h') ?? 0 };
    // the recommended threads' rows are the `staged` rows the crossover and the verdicts read
    for (const dir of DIRS)
      for (const size of STAGING_SIZES) {
        const row = impl.rows[`${dir}_${sizeLabel(size)}_staged_t${threads[dir]}`];
        if (row) impl.rows[`${dir}_${sizeLabel(size)}_staged`] = row;
      }
    for (const dir of DIRS) measureModes(impl, r, `${dir}_${sizeLabel(LARGEST)}`, chunkModes(r, threads[dir]), streamPass(r, dir, LARGEST), LARGEST);
  } finally {
    st.configureStaging(before);
    r.stream.synchronize();
    r.buf.close();
    r.stream.close();
  }
  const advice = recommend(impl.rows, before.chunkBytes);
  impl.meta.recommended = advice;
  impl.meta.recommendedLiteral = adviceLiteral(advice, before.maxChunks, before.chunkBytes);
  impl.meta.crossover = { h2d: advice.upload.minBytes, d2h: advice.download.minBytes };
}

/** CuPy's copies of the same sizes, from bench/python/bench_cupy.py copies. */
function cupyCopies(): ImplResult {
  const skipped = (why: string): ImplResult => ({ impl: 'cupy-copies', meta: {}, rows: {}, skipped: why });
  if (process.env.BENCH_STAGING_CUPY === '0') return skipped('BENCH_STAGING_CUPY=0');
  const py = process.env.PYTHON || 'python3';
  const args = [join(BENCH_DIR, 'python', 'bench_cupy.py'), 'copies', '--sizes', STAGING_SIZES.join(',')];
  const r = spawnSync(py, args, { encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) return skipped(`bench_cupy.py copies exited ${r.status ?? r.signal}: ${r.error?.message ?? ''}`.trim());
  const line = r.stdout
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .pop();
  return line ? (JSON.parse(line) as ImplResult) : skipped('bench_cupy.py copies printed no JSON');
}

async function main(): Promise<void> {
  const impl = new Impl('cuda-ts-staging');
  let result: ImplResult;
  try {
    // The 'js' tree: src/index, src/memory/staging and host-copy must be one module instance each (dist/ bundles them apart).
    const O = loadModule<Any>('src/index', 'js');
    await measureObjects(impl, O, loadModule<Staging>('src/memory/staging', 'js'), loadModule<HostCopy>('src/memory/host-copy', 'js'));
    result = impl.result();
    log(`staging recommended (paste into src/memory/staging.ts): ${String(result.meta.recommendedLiteral)}`);
  } catch (e) {
    result = { impl: 'cuda-ts-staging', meta: impl.meta, rows: impl.rows, skipped: reason(e) };
  }
  const cupy = cupyCopies();
  // CuPy's 256 MiB rows beside ours, for the staging report's same-run verdicts
  result.meta.cupy256 = { h2d: cupy.rows[`h2d_${sizeLabel(LARGEST)}`], d2h: cupy.rows[`d2h_${sizeLabel(LARGEST)}`] };
  const out = process.argv[2];
  if (out) writeJson(out, [result, cupy]);
  else process.stdout.write(`${JSON.stringify([result, cupy])}\n`);
}

if (require.main === module) void main();
