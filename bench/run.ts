// `npm run bench` (= tsx bench/run.ts) on the GPU machine: one run of every implementation, one table.
//
//   0. picks the C floor's method (bench/floor.ts: BENCH_PIN / BENCH_FLOOR_WARMUP for every step below)
//   1. builds the native C baseline (bash bench/native/build.sh) and runs it, pinned     -> native-c
//      (one standalone process: docs/performance.md: a ±10% lottery between such processes)
//   2. runs bench/gpu.ts in a child process                                             -> koffi, cuda-ts-raw,
//                                                                                           cuda-ts-typed, cuda-ts-objects, cuda-ts-startup
//   2b. runs bench/runtime-child.ts under Bun and under Deno (a CommonJS copy of the tree, each runtime's
//       own FFI, C's libbench.so in the same child)                                     -> *-bun, *-deno columns
//   3. runs python3 bench/python/bench_cuda_python.py                                   -> cuda-python, cuda.core, cupy
//   4. runs bench/cpu.ts in a child process (typed vs raw on libcudart)                 -> cuda-ts-cpu
//   5. runs bench/staging.ts in a child process (pageable copies by size: direct, staged, CuPy) -> its own table
//   6. runs bench/await.ts in a child process (awaiting GPU work, issue 46)                  -> its own section
//   7. runs bench/math-blas.ts, math-fft-rand.ts, math-sparse.ts, each in a child process (the math
//      objects against the same library calls from C in that process, and CuPy)           -> its own section
// then prints ONE table (rows × implementations, each cell the median and its ratio to native C, or to
// cuda-python for rows C does not have), one line naming the C floor every ratio uses and why (with this
// run's standalone vs in-process difference), the issue's targets with PASS/FAIL, and writes everything to
// $OUT/bench.json (+ bench.txt, chart.svg and summary.md, the README's table) when $OUT is set, else bench/results/. A step that fails is reported as
// skipped with its reason; it never stops the table.
//
// Env: BENCH_SCALE (loop-count multiplier for every part, e.g. 0.1 for a smoke run), BENCH_DEVICE,
//      BENCH_SKIP=native,gpu,bun,deno,python,cpu,import,staging,await,math (steps to leave out), BUN, DENO (the
//      runtimes' binaries; else on PATH, else /tmp/bun/bun, /tmp/deno/deno), PYTHON (default python3),
//      BENCH_LOADER (how gpu.ts loads cuda-ts: js (default) | dist | tsx),
//      BENCH_REPS (interleaved repetitions, default 7; the Bun and Deno processes: BENCH_CHILD_REPS, else
//      BENCH_REPS, else 21), BENCH_BLOCKS (sub-blocks per repetition, default 5;
//      1 = one pass per repetition), BENCH_IMPORT_SAMPLES / BENCH_IMPORT_PER_ROUND (import rounds, default 5,
//      and spawns of each case per round, default 3), BENCH_PIN (the timing thread's core; 'off' pins
//      nothing; default: a GPU-local core, bench/floor.ts), BENCH_FLOOR_WARMUP (launch
//      rows' warm-up, default 4000), BENCH_FLOOR_JSON (a saved {"method": …} to use).
import { chartRowsFrom, ratioChart } from './chart';
import { summaryTable } from './summary';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RatioStats, judgeRatios, ratioStats, ratioWords, repetitionWords } from './interleave';
import { IMPORT_PER_ROUND, IMPORT_ROUNDS, importRoundWords, importTable, importVerdicts, type ImportVerdict } from './import';
import { importCases, measureImports } from './startup';
import { CHILD_RUNTIMES, runtimeTable, runtimeVerdicts } from './runtimes-report';
import { runtimeGpu, skippedImpls } from './runtimes-gpu';
import { stagingTable, stagingVerdicts, type StagingVerdict } from './staging-report';
import { BENCH_DIR, type ImplResult, type MeasuredRow, REPO_ROOT, type Row, fmt, isMeasured, log, reason, resultsDir, table, writeJson } from './common';
import { type ChosenFloor, chooseFloor, floorLine, standaloneEnv } from './floor';

const T0 = Date.now();
const SKIP = new Set(
  (process.env.BENCH_SKIP ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a command; stderr is passed through (progress) and kept; stdout is captured. */
function runChild(cmd: string, args: string[], timeoutS: number, env: NodeJS.ProcessEnv = process.env, cwd = REPO_ROOT): Promise<ChildResult> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let stdout = '';
    let stderr = '';
    let child;
    try {
      child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      resolve({ code: -1, stdout: '', stderr: reason(e), ms: 0 });
      return;
    }
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${timeoutS} s)`;
      child.kill('SIGKILL');
    }, timeoutS * 1000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      process.stderr.write(d);
    });
    child.on('error', (e) => {
      stderr += `\n${reason(e)}`;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}

function tail(text: string, n = 3): string {
  return text.trim().split('\n').slice(-n).join(' | ').slice(0, 600);
}

function lastJson<T>(stdout: string): T {
  const lines = stdout
    .trim()
    .split('\n')
    .filter((l) => l.trim().startsWith('{') || l.trim().startsWith('['));
  if (!lines.length) throw new Error('no JSON on stdout');
  return JSON.parse(lines[lines.length - 1]) as T;
}

const steps: Record<string, { ms?: number; skipped?: string }> = {};

let nativeDir: string | undefined;
async function native(): Promise<ImplResult> {
  const outDir = mkdtempSync(join(tmpdir(), 'cuda-ts-bench-'));
  nativeDir = outDir;
  const b = await runChild('bash', [join(BENCH_DIR, 'native', 'build.sh'), outDir], 120);
  if (b.code !== 0) throw new Error(`build.sh failed (${b.code}): ${tail(b.stderr)}`);
  const bin = b.stdout.trim().split('\n').pop()!;
  const r = await runChild(bin, [join(BENCH_DIR, 'native', 'kernels.ptx')], 180, standaloneEnv(process.env));
  if (r.code !== 0) throw new Error(`native bench exited ${r.code}: ${tail(r.stderr)}`);
  return lastJson<ImplResult>(r.stdout);
}

async function gpu(): Promise<ImplResult[]> {
  const out = join(mkdtempSync(join(tmpdir(), 'cuda-ts-bench-')), 'gpu.json');
  const env = nativeDir ? { ...process.env, BENCH_NATIVE_LIB: join(nativeDir, 'libbench.so') } : process.env;
  const r = await runChild(process.execPath, ['--require', 'tsx/cjs', join(BENCH_DIR, 'gpu.ts'), out], 300, env);
  if (r.code !== 0) throw new Error(`bench/gpu.ts exited ${r.code}: ${tail(r.stderr)}`);
  return JSON.parse(readFileSync(out, 'utf8')) as ImplResult[];
}

/** libbench.so for the Bun and Deno children: the native step's, else the one bench/gpu.ts built itself. */
function nativeLibrary(): string | undefined {
  return [nativeDir && join(nativeDir, 'libbench.so'), join(tmpdir(), 'cuda-ts-bench-inproc', 'libbench.so')].find((p): p is string => !!p && existsSync(p));
}

async function python(): Promise<ImplResult[]> {
  const py = process.env.PYTHON || 'python3';
  const r = await runChild(py, [join(BENCH_DIR, 'python', 'bench_cuda_python.py'), '--ptx', join(BENCH_DIR, 'native', 'kernels.ptx')], 150);
  if (r.code !== 0) throw new Error(`bench_cuda_python.py exited ${r.code}: ${tail(r.stderr)}`);
  return lastJson<ImplResult[]>(r.stdout);
}

interface CpuResult {
  rows: Record<string, MeasuredRow>;
  ratios: { typed_vs_raw: number; typed_vs_koffi: number; raw_vs_koffi: number; tsx_typed_vs_raw?: number };
  /** Median and min–max of the per-repetition ratios (bench/cpu.ts). */
  spreads?: { typed_vs_raw: RatioStats; typed_vs_koffi: RatioStats; raw_vs_koffi: RatioStats; tsx_typed_vs_raw?: RatioStats };
  meta: Record<string, unknown>;
}
async function cpu(): Promise<CpuResult> {
  const out = join(mkdtempSync(join(tmpdir(), 'cuda-ts-bench-')), 'cpu.json');
  const env = { ...process.env, BENCH_CPU_REPS: process.env.BENCH_CPU_REPS ?? '7' };
  const r = await runChild(process.execPath, ['--require', 'tsx/cjs', join(BENCH_DIR, 'cpu.ts'), out], 120, env);
  if (r.code !== 0) throw new Error(`bench/cpu.ts exited ${r.code}: ${tail(r.stderr)}`);
  if (r.stdout.trim()) process.stderr.write(`${r.stdout.trim()}\n`);
  return JSON.parse(readFileSync(out, 'utf8')) as CpuResult;
}

/** bench/staging.ts: pageable copies by size, direct vs staged, and CuPy's (its own process). */
async function staging(): Promise<ImplResult[]> {
  const out = join(mkdtempSync(join(tmpdir(), 'cuda-ts-bench-')), 'staging.json');
  const r = await runChild(process.execPath, ['--require', 'tsx/cjs', join(BENCH_DIR, 'staging.ts'), out], 400);
  if (r.code !== 0) throw new Error(`bench/staging.ts exited ${r.code}: ${tail(r.stderr)}`);
  return JSON.parse(readFileSync(out, 'utf8')) as ImplResult[];
}

/** bench/await.ts: awaiting GPU work (its own process: a worker thread spins there to stamp kernel ends). */
async function awaiting(): Promise<{ text: string; verdicts: { target: string; value: string; verdict: 'PASS' | 'FAIL' }[] }> {
  const out = join(mkdtempSync(join(tmpdir(), 'cuda-ts-bench-')), 'await.json');
  const r = await runChild(process.execPath, ['--require', 'tsx/cjs', join(BENCH_DIR, 'await.ts'), out], 300);
  if (r.code !== 0) throw new Error(`bench/await.ts exited ${r.code}: ${tail(r.stderr)}`);
  return JSON.parse(readFileSync(out, 'utf8')) as Awaited<ReturnType<typeof awaiting>>;
}

/** The math benches (issue 43): each prints its table and one `row: … PASS|FAIL` line per target. */
const MATH_BENCHES = ['math-blas.ts', 'math-fft-rand.ts', 'math-sparse.ts'];
async function math(): Promise<{ text: string; verdicts: Verdict[] }> {
  const parts: string[] = [];
  const verdicts: Verdict[] = [];
  for (const file of MATH_BENCHES) {
    const r = await runChild(process.execPath, ['--require', 'tsx/cjs', join(BENCH_DIR, file)], 300);
    const lines = r.stdout.split('\n').filter((l) => !l.startsWith('{'));
    parts.push(r.code === 0 ? lines.join('\n').trim() : `${file}: exited ${r.code}: ${tail(r.stderr)}`);
    for (const l of lines) {
      const v = /^(\S+): (.+) (PASS|FAIL)$/.exec(l.trim());
      if (v) verdicts.push({ target: v[2], row: v[1], judged: `one run (bench/${file})`, value: v[2], verdict: v[3] as 'PASS' | 'FAIL' });
    }
  }
  return { text: `math libraries (issue 43; objects vs the same call from C in one process):\n\n${parts.join('\n\n')}`, verdicts };
}

async function step<T>(name: string, fn: () => Promise<T>): Promise<T | undefined> {
  if (SKIP.has(name)) {
    steps[name] = { skipped: 'BENCH_SKIP' };
    return undefined;
  }
  const t0 = Date.now();
  log(`--- ${name} (${((t0 - T0) / 1000).toFixed(0)} s into the run)`);
  try {
    const r = await fn();
    steps[name] = { ms: Date.now() - t0 };
    return r;
  } catch (e) {
    steps[name] = { ms: Date.now() - t0, skipped: reason(e) };
    log(`${name}: skipped: ${reason(e)}`);
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------

const IMPLS = [
  'native-c',
  'native-c-inproc',
  'koffi',
  'cuda-ts-raw',
  'cuda-ts-typed',
  'cuda-ts-objects',
  'cuda-ts-raw-nodeffi',
  'cuda-ts-typed-nodeffi',
  'cuda-ts-objects-nodeffi',
  'cuda-python',
  'cuda.core',
  'cupy',
] as const;
const ROW_ORDER = [
  'cuCtxGetCurrent',
  'cuDeviceGetAttribute',
  'launch_0args',
  'launch_4args',
  'launch_16args',
  'launch_4args_prepacked',
  'launch_16args_prepacked',
  'launch_sync',
  'launch_blocking_synchronize',
  'launch_await_synchronized',
  'launch_async_synchronize',
  'await_synchronized_idle',
  'event_record_elapsed',
  'alloc_free_async_1MiB',
  'h2d_pinned_256MiB',
  'd2h_pinned_256MiB',
  'h2d_pageable_256MiB',
  'd2h_pageable_256MiB',
  'nvrtc_compile_small',
];

/** A verdict line (one shape for every step's verdicts, the staging report's included). */
type Verdict = StagingVerdict;

/** First line of a reason, cut to n characters (the JSON keeps it whole). */
function short(text: string, n: number): string {
  const one = text.split(/ tried: |\n/)[0];
  return one.length <= n ? one : `${one.slice(0, n)}...`;
}

function unitLabel(u: string): string {
  return u === 'ns' ? 'ns' : u;
}

/** A cell of the results: an implementation's row, its whole-implementation skip, or 'not run'. */
type GetRow = (impl: string, row: string) => Row | undefined;

/** A measured row's median, or undefined. */
type MedianOf = (impl: string, row: string) => number | undefined;

function rowLookup(all: ImplResult[]): { byImpl: Map<string, ImplResult>; get: GetRow; m: MedianOf } {
  const byImpl = new Map<string, ImplResult>();
  for (const r of all) byImpl.set(r.impl, r);
  const get = (impl: string, row: string): Row | undefined => {
    const r = byImpl.get(impl);
    if (!r) return { skipped: 'not run' };
    if (r.skipped) return { skipped: r.skipped };
    return r.rows?.[row];
  };
  const m = (impl: string, row: string) => {
    const r = get(impl, row);
    return isMeasured(r) ? r.median : undefined;
  };
  return { byImpl, get, m };
}

/** The table's rows, in ROW_ORDER, then any other row some implementation has, sorted. */
function tableRows(all: ImplResult[]): string[] {
  const rowsSeen = new Set<string>();
  for (const r of all) for (const k of Object.keys(r.rows ?? {})) if (!k.startsWith('import_first_call')) rowsSeen.add(k);
  // bench.c's rows always appear (skipped cells say why); other rows when some implementation has them.
  const always = new Set([
    'cuCtxGetCurrent',
    'cuDeviceGetAttribute',
    'launch_0args',
    'launch_4args',
    'launch_16args',
    'launch_sync',
    'event_record_elapsed',
    'alloc_free_async_1MiB',
    'h2d_pinned_256MiB',
    'd2h_pinned_256MiB',
    'h2d_pageable_256MiB',
    'd2h_pageable_256MiB',
    'nvrtc_compile_small',
  ]);
  return [...ROW_ORDER.filter((r) => rowsSeen.has(r) || always.has(r)), ...[...rowsSeen].filter((r) => !ROW_ORDER.includes(r)).sort()];
}

/** One line of the table per row; a skipped cell names its reason by number in `skippedNotes`. */
function tableLines(rows: string[], get: GetRow, skippedNotes: Map<string, number>): string[][] {
  const noteFor = (why: string) => {
    if (!skippedNotes.has(why)) skippedNotes.set(why, skippedNotes.size + 1);
    return `skip[${skippedNotes.get(why)}]`;
  };
  const lines: string[][] = [];
  for (const row of rows) {
    const base = isMeasured(get('native-c-inproc', row))
      ? 'native-c-inproc'
      : isMeasured(get('native-c', row))
        ? 'native-c'
        : isMeasured(get('cuda-python', row))
          ? 'cuda-python'
          : undefined;
    const baseRow = base ? (get(base, row) as MeasuredRow) : undefined;
    const unit = IMPLS.map((i) => get(i, row)).find(isMeasured)?.unit ?? '';
    const cells = IMPLS.map((impl) => {
      const r = get(impl, row);
      if (r === undefined) return '';
      if (!isMeasured(r)) return noteFor(r.skipped);
      const v = fmt(r.median);
      if (!baseRow || impl === base) return v;
      // For GB/s higher is better: ratio = value / native (≥ 1 is faster); for time, value / native (≤ 1 is faster).
      // Interleaved with the base: the median of the per-repetition ratios and their min-max.
      if (r.interleaved && baseRow.interleaved) {
        const q = ratioStats(r.reps, baseRow.reps);
        return `${v} ${q.median.toFixed(2)}x [${q.min.toFixed(2)}-${q.max.toFixed(2)}]`;
      }
      return `${v} ${(r.median / baseRow.median).toFixed(2)}x`;
    });
    lines.push([
      row,
      unitLabel(unit),
      base === 'native-c-inproc' ? 'C (same process)' : base === 'native-c' ? 'C' : base === 'cuda-python' ? 'cuda-python' : '-',
      ...cells,
    ]);
  }
  return lines;
}

/**
 * A ratio target's judge: pushes the verdict on `verdicts`. better 'lower': the ratio must be ≤ limit
 * (times); 'higher': ≥ limit (GB/s). `extra` may fail a value that meets the ratio.
 */
const ratioJudge =
  (verdicts: Verdict[], get: GetRow) =>
  (
    target: string,
    row: string,
    impl: string | undefined,
    base: string,
    limit: number,
    extra?: (v: number) => string | undefined,
    better: 'lower' | 'higher' = 'lower',
  ): number => {
    if (!impl) return verdicts.push({ target, row, judged: '-', verdict: 'SKIP', why: `no cuda-ts measurement of ${row}` });
    if (base === 'native-c' && isMeasured(get('native-c-inproc', row))) base = 'native-c-inproc';
    const vr = get(impl, row);
    const br = get(base, row);
    if (!isMeasured(vr) || !isMeasured(br))
      return verdicts.push({ target, row, judged: impl, verdict: 'SKIP', why: `${!isMeasured(vr) ? impl : base} has no ${row}` });
    const bad = extra?.(vr.median);
    if (vr.interleaved && br.interleaved) {
      const q = ratioStats(vr.reps, br.reps);
      return verdicts.push({
        target,
        row,
        judged: `${impl} vs ${base}`,
        value: ratioWords(q),
        verdict: bad ? 'FAIL' : judgeRatios(q, limit, better),
        why: bad,
      });
    }
    const ratio = vr.median / br.median;
    const ok = better === 'lower' ? ratio <= limit : ratio >= limit;
    return verdicts.push({
      target,
      row,
      judged: `${impl} vs ${base}`,
      value: `${ratio.toFixed(3)}x (medians; not interleaved)`,
      verdict: ok && !bad ? 'PASS' : 'FAIL',
      why: bad,
    });
  };

/** The call and launch targets of issues 5, 11 and 17, judged on the GPU rows. */
function gpuTargets(get: GetRow, m: MedianOf): Verdict[] {
  const verdicts: Verdict[] = [];
  const layer = (row: string) =>
    isMeasured(get('cuda-ts-objects', row)) ? 'cuda-ts-objects' : isMeasured(get('cuda-ts-typed', row)) ? 'cuda-ts-typed' : undefined;
  const ratioTarget = ratioJudge(verdicts, get);
  for (const row of ['cuCtxGetCurrent', 'cuDeviceGetAttribute'])
    ratioTarget('trivial call, typed ≤ 1.2× hand-declared koffi', row, 'cuda-ts-typed', 'koffi', 1.2);
  for (const row of ['cuCtxGetCurrent', 'cuDeviceGetAttribute']) ratioTarget('trivial call, typed ≤ 1.3× raw', row, 'cuda-ts-typed', 'cuda-ts-raw', 1.3);
  for (const row of ['cuCtxGetCurrent', 'cuDeviceGetAttribute'])
    ratioTarget(
      'node:ffi: trivial call, typed ≤ 2× C',
      row,
      isMeasured(get('cuda-ts-typed-nodeffi', row)) ? 'cuda-ts-typed-nodeffi' : undefined,
      'native-c',
      2,
    );
  for (const row of ['launch_0args', 'launch_4args'])
    ratioTarget(
      'node:ffi: objects launch ≤ 1.03× C',
      row,
      isMeasured(get('cuda-ts-objects-nodeffi', row)) ? 'cuda-ts-objects-nodeffi' : undefined,
      'native-c',
      1.03,
    );
  const fasterThan = (row: string) => (v: number) => {
    const slower = ['cuda.core', 'cupy'].filter((p) => {
      const pv = m(p, row);
      return pv !== undefined && v >= pv;
    });
    return slower.length ? `not faster than ${slower.join(', ')}` : undefined;
  };
  const objLaunch = (row: string) => (isMeasured(get('cuda-ts-objects', row)) ? 'cuda-ts-objects' : undefined);
  ratioTarget(
    'launch 0 args, objects ≤ 1.10× C and faster than cuda.core, CuPy',
    'launch_0args',
    objLaunch('launch_0args'),
    'native-c',
    1.1,
    fasterThan('launch_0args'),
  );
  ratioTarget(
    'launch 4 args, objects ≤ 1.15× C and faster than cuda.core, CuPy',
    'launch_4args',
    objLaunch('launch_4args'),
    'native-c',
    1.15,
    fasterThan('launch_4args'),
  );
  ratioTarget('launch + sync round trip ≤ 1.05× C', 'launch_sync', layer('launch_sync'), 'native-c', 1.05);
  // GB/s: the ratio must be ≥ 0.97 (per repetition where both ran interleaved, as the time rows).
  for (const row of ['h2d_pinned_256MiB', 'd2h_pinned_256MiB'])
    ratioTarget('H2D/D2H 256 MiB pinned ≥ 0.97× C', row, layer(row), 'native-c', 0.97, undefined, 'higher');
  ratioTarget('stream-ordered alloc + free ≤ 1.15× C', 'alloc_free_async_1MiB', layer('alloc_free_async_1MiB'), 'native-c', 1.15);
  return verdicts;
}

/** The import target (compiled JS, dist/ where built) and the CPU target of typed vs raw. */
function startupAndCpuTargets(st: ImplResult | undefined, cpuRes: CpuResult | undefined): Verdict[] {
  const verdicts: Verdict[] = [];
  {
    const r = st?.rows?.import_first_call_driver_js;
    const d = st?.rows?.import_first_call_driver_dist;
    const pick = isMeasured(d) ? (['import_first_call_driver_dist', d] as const) : isMeasured(r) ? (['import_first_call_driver_js', r] as const) : undefined;
    if (!pick)
      verdicts.push({
        target: 'import + first call, cuda-ts/driver ≤ 25 ms',
        row: 'import_first_call_driver',
        judged: '-',
        verdict: 'SKIP',
        why: (r && !isMeasured(r) ? r.skipped : undefined) ?? st?.skipped ?? 'not measured',
      });
    else
      verdicts.push({
        target: 'import + first call, cuda-ts/driver ≤ 25 ms',
        row: pick[0],
        judged: 'compiled JS',
        value: `${fmt(pick[1].median)} ms`,
        verdict: pick[1].median <= 25 ? 'PASS' : 'FAIL',
      });
  }
  if (cpuRes) {
    const tr = cpuRes.ratios.typed_vs_raw;
    const q = cpuRes.spreads?.typed_vs_raw;
    const verdict = q ? judgeRatios(q, 1.3, 'lower') : tr <= 1.3 ? 'PASS' : 'FAIL';
    verdicts.push({
      target: 'typed vs raw (CPU, libcudart) ≤ 1.3×',
      row: 'cudaRuntimeGetVersion',
      judged: 'cuda-ts-typed vs cuda-ts-raw (compiled JS)',
      value: `${q ? ratioWords(q) : `${tr.toFixed(3)}x (medians)`} (raw ${fmt(cpuRes.rows['getVersion/raw']?.median)} ns, typed ${fmt(cpuRes.rows['getVersion/typed']?.median)} ns, koffi ${fmt(cpuRes.rows['getVersion/koffi']?.median)} ns)`,
      verdict,
    });
  } else
    verdicts.push({
      target: 'typed vs raw (CPU, libcudart) ≤ 1.3×',
      row: 'cudaRuntimeGetVersion',
      judged: '-',
      verdict: 'SKIP',
      why: steps.cpu?.skipped ?? 'not run',
    });
  return verdicts;
}

function main2(all: ImplResult[], cpuRes: CpuResult | undefined, floor: ChosenFloor): { text: string; verdicts: Verdict[] } {
  const { byImpl, get, m } = rowLookup(all);
  const skippedNotes = new Map<string, number>();
  const lines = tableLines(tableRows(all), get, skippedNotes);
  const out: string[] = [];
  const inter = all
    .map((r) => r.meta?.interleaved)
    .find((x): x is { repetition: string } => !!x && typeof x === 'object' && typeof (x as { repetition?: unknown }).repetition === 'string');
  out.push(
    `cuda-ts benchmarks; each cell "value ratio [min-max]": the ratio to the "vs" column's implementation, and where both ran interleaved (same process and clock) the median of the per-repetition ratios with their min-max. A repetition: ${inter?.repetition ?? repetitionWords(Number(process.env.BENCH_REPS ?? 7) | 0 || 7)}; each implementation's work per repetition is the row's loop count of bench.c. For GB/s ≥ 1 is better, otherwise ≤ 1 is better. Python columns ran in their own process (ratio of medians to the separate native-c run).\n`,
  );
  out.push(table(['row', 'unit', 'vs', ...IMPLS.map((i) => (i === 'native-c' ? 'native-c (1 process)' : i))], lines));
  out.push(floorLine(all, floor));
  if (skippedNotes.size) {
    out.push('\nskipped:');
    for (const [why, n] of skippedNotes) out.push(`  [${n}] ${short(why, 300)}`);
  }

  // Startup rows (cuda-ts only).
  const st = byImpl.get('cuda-ts-startup');
  if (st && !st.skipped) {
    out.push('\nimport + first call in a fresh process (ms; median of 5 spawns):');
    for (const [k, r] of Object.entries(st.rows))
      out.push(`  ${k.padEnd(34)} ${isMeasured(r) ? `${fmt(r.median)} ms  (${r.note ?? ''})` : `skipped: ${short(r.skipped, 200)}`}`);
  }

  // Targets.
  const verdicts: Verdict[] = [...gpuTargets(get, m), ...startupAndCpuTargets(st, cpuRes)];
  out.push(
    '\ntargets (issues 5, 11, 17; the [lo-hi] of a ratio is the 95% interval of the median of the per-repetition ratios (their min-max up to 8 repetitions); PASS when all of it meets the target, "noisy" when it crosses the target):',
  );
  out.push(verdictTable(verdicts));

  // await vs blocking synchronize.
  const blocking = m('cuda-ts-objects', 'launch_blocking_synchronize');
  const awaited = m('cuda-ts-objects', 'launch_await_synchronized');
  if (blocking !== undefined && awaited !== undefined)
    out.push(
      `\nawait stream.synchronized() after a launch: ${fmt(awaited)} ns vs blocking stream.synchronize() ${fmt(blocking)} ns (${(awaited / blocking).toFixed(2)}x); koffi .async cuStreamSynchronize: ${fmt(m('koffi', 'launch_async_synchronize'))} ns`,
    );
  out.push(
    `\nsteps: ${Object.entries(steps)
      .map(([k, v]) => `${k} ${v.ms !== undefined ? `${(v.ms / 1000).toFixed(1)} s` : ''}${v.skipped ? ` (skipped: ${v.skipped.slice(0, 200)})` : ''}`)
      .join('; ')}; total ${((Date.now() - T0) / 1000).toFixed(1)} s`,
  );
  return { text: out.join('\n'), verdicts };
}

/** The machine in one phrase for summary.md: the GPU and driver the C baseline saw, and the runtimes. */
function machineWords(all: ImplResult[]): string {
  const meta = all.find((r) => r.impl === 'native-c' && !r.skipped)?.meta ?? all.find((r) => r.impl === 'native-c-inproc')?.meta ?? {};
  const gpu = typeof meta.device === 'string' ? meta.device : 'GPU unknown';
  const driver =
    typeof meta.driver_version === 'number' ? `, driver supporting CUDA ${Math.floor(meta.driver_version / 1000)}.${(meta.driver_version % 1000) / 10}` : '';
  // Bun and Deno by name where their columns were measured (each child's meta carries its version)
  const runtimes = [
    `Node ${process.versions.node}`,
    ...(['Bun', 'Deno'] as const).flatMap((rt) => {
      const r = all.find((x) => x.impl === `cuda-ts-objects-${rt.toLowerCase()}` && !x.skipped);
      return r ? [typeof r.meta?.version === 'string' ? `${rt} ${r.meta.version}` : rt] : [];
    }),
  ];
  return `${gpu}${driver}, ${runtimes.join(', ')}`;
}

/** Pageable copies (issue 26 §4): the table by size and its verdicts (added to `verdicts`). */
function stagingSection(stg: ImplResult[] | undefined, all: ImplResult[], verdicts: Verdict[]): string {
  const [stagingRes, cupyRes] = [stg?.find((r) => r.impl === 'cuda-ts-staging'), stg?.find((r) => r.impl === 'cupy-copies')];
  let text = `\n\n${stg ? stagingTable(stagingRes, cupyRes) : `pageable copies by size: skipped (${steps.staging?.skipped ?? 'not run'})`}`;
  const sv = stagingVerdicts(stagingRes ?? { impl: 'cuda-ts-staging', meta: {}, rows: {}, skipped: steps.staging?.skipped ?? 'not run' }, rowLookup(all).m);
  verdicts.push(...sv);
  text += `\n\npageable copy targets (issue 26 §4):\n${verdictTable(sv)}`;
  return text;
}

/** Target verdicts as a table: target, row, judged on, value, verdict (and why). */
function verdictTable(vs: readonly { target: string; row: string; judged: string; value?: string; verdict: string; why?: string }[]): string {
  return table(
    ['target', 'row', 'judged on', 'value', 'verdict'],
    vs.map((v) => [v.target, v.row, v.judged, v.value ?? '-', v.verdict + (v.why ? ` (${short(v.why, 160)})` : '')]),
    5,
  );
}

async function main(): Promise<void> {
  const floor = chooseFloor(process.env); // sets BENCH_PIN / BENCH_FLOOR_WARMUP for every child below
  log(`C floor method: ${floor.words}`);
  const all: ImplResult[] = [];
  const nat = await step('native', native);
  all.push(nat ?? { impl: 'native-c', meta: {}, rows: {}, skipped: steps.native?.skipped ?? 'not run' });
  const g = await step('gpu', gpu);
  if (g) all.push(...g);
  else
    for (const n of ['koffi', 'cuda-ts-raw', 'cuda-ts-typed', 'cuda-ts-objects', 'cuda-ts-startup'])
      all.push({ impl: n, meta: {}, rows: {}, skipped: steps.gpu?.skipped ?? 'not run' });
  for (const rt of CHILD_RUNTIMES) {
    const r = await step(rt, () => runtimeGpu(rt, runChild, nativeLibrary()));
    all.push(...(r ?? skippedImpls(rt, steps[rt]?.skipped ?? 'not run')));
  }
  const p = await step('python', python);
  if (p) all.push(...p.map((r) => ({ ...r, rows: r.rows ?? {}, meta: r.meta ?? {} })));
  else for (const n of ['cuda-python', 'cuda.core', 'cupy']) all.push({ impl: n, meta: {}, rows: {}, skipped: steps.python?.skipped ?? 'not run' });
  const c = await step('cpu', cpu);
  // Import + first call against koffi's own load (bench/import.ts), fresh processes interleaved.
  const imp = await step('import', async () => importVerdicts(measureImports(importCases(true), IMPORT_ROUNDS, IMPORT_PER_ROUND)));
  const stg = await step('staging', staging);
  const awt = await step('await', awaiting);
  const mth = await step('math', math);

  const res = main2(all, c, floor);
  let text = res.text;
  const verdicts = res.verdicts;
  if (imp) {
    text += `\n\nimport + first call in a fresh process vs koffi's own (ms; targets of issue 17; ${importRoundWords(IMPORT_ROUNDS, IMPORT_PER_ROUND)}):\n${importTable(imp)}`;
    for (const v of imp as ImportVerdict[]) {
      if (v.allowance_ms !== undefined)
        verdicts.push({
          target: `import + first call, ${v.row} ≤ koffi + ${v.allowance_ms} ms`,
          row: `import_${v.row}`,
          judged: `${v.row} - koffi per round`,
          value: `${v.over_koffi_ms} ms [${v.spread[0]}..${v.spread[1]}]`,
          verdict: v.verdict as Verdict['verdict'],
        });
    }
  }
  {
    // Node, Bun and Deno, each against C in its own process (issue 26 §2, §3).
    const rv = runtimeVerdicts(all);
    verdicts.push(...rv);
    text += `\n\n${runtimeTable(all)}\n\nJS runtime targets (issue 26 §2, §3; C in the same process):\n${verdictTable(rv)}`;
  }
  text += stagingSection(stg, all, verdicts);
  // Awaiting GPU work (issue 46): its section and verdicts as bench/await.ts printed them.
  text += `\n\n${awt ? awt.text : `awaiting GPU work: skipped (${steps.await?.skipped ?? 'not run'})`}`;
  for (const v of awt?.verdicts ?? [])
    verdicts.push({ target: v.target, row: 'await', judged: 'one run (bench/await.ts)', value: v.value, verdict: v.verdict });
  // The math libraries (issue 43): each bench's table and its verdict lines.
  text += `\n\n${mth ? mth.text : `math libraries: skipped (${steps.math?.skipped ?? 'not run'})`}`;
  verdicts.push(...(mth?.verdicts ?? []));
  console.log(`\n${text}`);
  const dir = resultsDir();
  const json = {
    command: 'npm run bench',
    date: new Date().toISOString(),
    env: { BENCH_SCALE: process.env.BENCH_SCALE ?? '1', BENCH_LOADER: process.env.BENCH_LOADER ?? 'js', node: process.version },
    steps,
    floor: { ...floor, line: floorLine(all, floor) },
    results: all,
    cpu: c ?? { skipped: steps.cpu?.skipped ?? 'not run' },
    staging: stg ?? { skipped: steps.staging?.skipped ?? 'not run' },
    targets: verdicts,
    table: text,
  };
  writeJson(join(dir, 'bench.json'), json);
  writeFileSync(join(dir, 'bench.txt'), `${text}\n`);
  writeFileSync(join(dir, 'chart.svg'), ratioChart(chartRowsFrom(all), { subtitle: `${json.date}, Node ${process.version}` }));
  // the README's table (README.md, "Performance"): paste summary.md between its bench-summary markers
  writeFileSync(join(dir, 'summary.md'), summaryTable(all, machineWords(all), json.date.slice(0, 10)));
  log(`wrote ${join(dir, 'bench.json')} and bench.txt (${((Date.now() - T0) / 1000).toFixed(1)} s)`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
