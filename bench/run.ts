// `npm run bench` on a GPU machine: runs each step in a child process, then prints one table (rows ×
// implementations, each cell the median and its ratio to C in the same process), the other steps'
// sections and the issues' targets with their verdicts, and writes bench.json, bench.txt, chart.svg and
// summary.md (the README's table) to $OUT, else bench/results/. A step that fails is reported as skipped
// with its reason; it never stops the table.
// Env: BENCH_SCALE (loop counts; 0.05 for a smoke run), BENCH_SKIP=native,gpu,bun,deno,python,cpu,import,
// staging,await,math (steps to leave out), BENCH_PIN and BENCH_FLOOR_WARMUP (bench/floor.ts), BENCH_REPS and
// BENCH_BLOCKS (bench/interleave.ts), BUN, DENO and PYTHON (the binaries).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chartRowsFrom, ratioChart } from './chart';
import {
  BENCH_DIR,
  type GetRow,
  type ImplResult,
  REPO_ROOT,
  SkipNotes,
  type Verdict,
  fmt,
  isMeasured,
  log,
  reason,
  resultsDir,
  rowGetter,
  table,
  verdictTable,
  writeJson,
} from './common';
import { type ChosenFloor, chooseFloor, floorLine, standaloneEnv } from './floor';
import { importCases, importRoundWords, importTable, importTargets, importVerdicts, measureImports } from './import';
import { type RatioStats, type RatioTarget, judgeRatio, judgeRatios, ratioOf, ratioWords, repetitionWords } from './interleave';
import { runtimeGpu } from './runtimes-gpu';
import { CHILD_IMPLS, CHILD_RUNTIMES, runtimeImpl, runtimeTable, runtimeVerdicts } from './runtimes-report';
import { stagingTable, stagingVerdicts } from './staging-report';
import { summaryTable } from './summary';

const T0 = Date.now();
const SKIP = new Set((process.env.BENCH_SKIP ?? '').split(',').map((s) => s.trim()));

interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command; stderr is passed through (progress) and kept; stdout is captured. */
function runChild(cmd: string, args: string[], timeoutS: number, env: NodeJS.ProcessEnv = process.env, cwd = REPO_ROOT): Promise<ChildResult> {
  return new Promise((resolve) => {
    let [stdout, stderr] = ['', ''];
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${timeoutS} s)`;
      child.kill('SIGKILL');
    }, timeoutS * 1000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      process.stderr.write(d);
    });
    child.on('error', (e) => (stderr += `\n${reason(e)}`));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const tail = (text: string) => text.trim().split('\n').slice(-3).join(' | ').slice(0, 600);

/** The last line of stdout that is JSON. */
function lastJson<T>(stdout: string): T {
  const lines = stdout.split('\n').filter((l) => /^\s*[[{]/.test(l));
  if (!lines.length) throw new Error('no JSON on stdout');
  return JSON.parse(lines[lines.length - 1]) as T;
}

/** `node --require tsx/cjs bench/<file> <out.json>`: the JSON it wrote (`echo`: its stdout goes to stderr as progress). */
async function childJson<T>(file: string, timeoutS: number, env = process.env, echo = false): Promise<T> {
  const out = join(mkdtempSync(join(tmpdir(), 'cuda-ts-bench-')), 'out.json');
  const r = await runChild(process.execPath, ['--require', 'tsx/cjs', join(BENCH_DIR, file), out], timeoutS, env);
  if (echo && r.stdout.trim()) process.stderr.write(`${r.stdout.trim()}\n`);
  if (r.code !== 0) throw new Error(`bench/${file} exited ${r.code}: ${tail(r.stderr)}`);
  return JSON.parse(readFileSync(out, 'utf8')) as T;
}

const steps: Record<string, { ms?: number; skipped?: string }> = {};
const whySkipped = (name: string) => steps[name]?.skipped ?? 'not run';

/** Runs one step unless BENCH_SKIP names it; a step that throws is recorded as skipped with its reason. */
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
// The steps

let nativeDir: string | undefined;
/** bench/native/bench.c built and run as one standalone process: the Python columns' C. */
async function native(): Promise<ImplResult[]> {
  nativeDir = mkdtempSync(join(tmpdir(), 'cuda-ts-bench-'));
  const b = await runChild('bash', [join(BENCH_DIR, 'native', 'build.sh'), nativeDir], 120);
  if (b.code !== 0) throw new Error(`build.sh failed (${b.code}): ${tail(b.stderr)}`);
  const r = await runChild(b.stdout.trim().split('\n').pop()!, [join(BENCH_DIR, 'native', 'kernels.ptx')], 180, standaloneEnv(process.env));
  if (r.code !== 0) throw new Error(`native bench exited ${r.code}: ${tail(r.stderr)}`);
  return [lastJson<ImplResult>(r.stdout)];
}

/** libbench.so for the in-process C: the native step's, else the one bench/gpu.ts built itself. */
function nativeLibrary(): string | undefined {
  const candidates = [nativeDir && join(nativeDir, 'libbench.so'), join(tmpdir(), 'cuda-ts-bench-inproc', 'libbench.so')];
  return candidates.find((p): p is string => !!p && existsSync(p));
}

async function python(): Promise<ImplResult[]> {
  const script = join(BENCH_DIR, 'python', 'bench_cuda_python.py');
  const r = await runChild(process.env.PYTHON || 'python3', [script, '--ptx', join(BENCH_DIR, 'native', 'kernels.ptx')], 150);
  if (r.code !== 0) throw new Error(`bench_cuda_python.py exited ${r.code}: ${tail(r.stderr)}`);
  return lastJson<ImplResult[]>(r.stdout).map((x) => ({ ...x, rows: x.rows ?? {}, meta: x.meta ?? {} }));
}

/** The steps that give the main table's columns, in order, and the implementations a skipped one stands for. */
const COLUMN_STEPS: { name: string; run: () => Promise<ImplResult[]>; impls: string[] }[] = [
  { name: 'native', run: native, impls: ['native-c'] },
  {
    name: 'gpu',
    run: () => childJson('gpu.ts', 300, nativeDir ? { ...process.env, BENCH_NATIVE_LIB: join(nativeDir, 'libbench.so') } : process.env),
    impls: ['koffi', 'cuda-ts-raw', 'cuda-ts-typed', 'cuda-ts-objects'],
  },
  ...CHILD_RUNTIMES.map((rt) => ({ name: rt, run: () => runtimeGpu(rt, runChild, nativeLibrary()), impls: CHILD_IMPLS.map((i) => runtimeImpl(i, rt)) })),
  { name: 'python', run: python, impls: ['cuda-python', 'cuda.core', 'cupy'] },
];

/** bench/cpu.ts's result: typed vs raw on libcudart, no GPU needed. */
interface CpuResult {
  rows: Record<string, { median?: number }>;
  ratios: { typed_vs_raw: number };
  spreads?: { typed_vs_raw: RatioStats };
}

/** A part of the report: its text and its verdicts. */
interface Section {
  text: string;
  verdicts: Verdict[];
}

/** The math benches (issue 43): each prints its table and one `row: … PASS|FAIL` line per target. */
async function math(): Promise<Section> {
  const parts: string[] = [];
  const verdicts: Verdict[] = [];
  for (const file of ['math-blas.ts', 'math-fft-rand.ts', 'math-sparse.ts']) {
    const r = await runChild(process.execPath, ['--require', 'tsx/cjs', join(BENCH_DIR, file)], 300);
    const lines = r.stdout.split('\n').filter((l) => !l.startsWith('{'));
    parts.push(r.code === 0 ? lines.join('\n').trim() : `${file}: exited ${r.code}: ${tail(r.stderr)}`);
    for (const [, row, value, verdict] of lines.map((l) => /^(\S+): (.+) (PASS|FAIL)$/.exec(l.trim())).filter((m): m is RegExpExecArray => !!m))
      verdicts.push({ target: value, row, judged: `one run (bench/${file})`, value, verdict: verdict as Verdict['verdict'] });
  }
  return { text: `math libraries (issue 43; objects vs the same call from C in one process):\n\n${parts.join('\n\n')}`, verdicts };
}

/** bench/await.ts: awaiting GPU work (issue 46), its section and verdicts as it printed them. */
async function awaiting(): Promise<Section> {
  const r = await childJson<{ text: string; verdicts: { target: string; value: string; verdict: 'PASS' | 'FAIL' }[] }>('await.ts', 300);
  return { text: r.text, verdicts: r.verdicts.map((v) => ({ ...v, row: 'await', judged: 'one run (bench/await.ts)' })) };
}

/** Import + first call in fresh processes against koffi's own load (issue 17). */
function importSection(): Section {
  const results = measureImports(importCases(true));
  const verdicts = importTargets(results);
  const head = `import + first call in a fresh process vs koffi's own (ms; targets of issue 17; ${importRoundWords()}):`;
  return { text: `${head}\n${importTable(importVerdicts(results))}\n\nimport targets (issue 17):\n${verdictTable(verdicts)}`, verdicts };
}

/** Pageable copies (issue 26 §4): the table by size and its verdicts; `stg` undefined where the step was skipped. */
function stagingSection(stg: ImplResult[] | undefined, all: ImplResult[]): Section {
  const [ours, cupy] = [stg?.find((r) => r.impl === 'cuda-ts-staging'), stg?.find((r) => r.impl === 'cupy-copies')];
  const get = rowGetter(all);
  const m = (impl: string, row: string) => {
    const r = get(impl, row);
    return isMeasured(r) ? r.median : undefined;
  };
  const verdicts = stagingVerdicts(ours ?? { impl: 'cuda-ts-staging', meta: {}, rows: {}, skipped: whySkipped('staging') }, m);
  const text = stg ? stagingTable(ours, cupy) : `pageable copies by size: skipped (${whySkipped('staging')})`;
  return { text: `${text}\n\npageable copy targets (issue 26 §4):\n${verdictTable(verdicts)}`, verdicts };
}

// ---------------------------------------------------------------------------------------------
// The main table and its targets

/** The main table's rows in order: bench.c's always (their skipped cells say why), OPTIONAL_ROWS where measured. */
const ROW_ORDER = [
  ...['cuCtxGetCurrent', 'cuDeviceGetAttribute', 'launch_0args', 'launch_4args', 'launch_16args', 'launch_4args_prepacked', 'launch_16args_prepacked'],
  ...['launch_sync', 'launch_blocking_synchronize', 'launch_await_synchronized', 'launch_async_synchronize', 'await_synchronized_idle'],
  ...['event_record_elapsed', 'alloc_free_async_1MiB', 'h2d_pinned_256MiB', 'd2h_pinned_256MiB', 'h2d_pageable_256MiB', 'd2h_pageable_256MiB'],
  'nvrtc_compile_small',
];
/** bench/gpu.ts's own rows (prepacked arguments, the ways of waiting for a launch), which bench.c has not. */
const OPTIONAL_ROWS = new Set(ROW_ORDER.filter((r) => /prepacked|synchroniz/.test(r)));
const IMPLS = [
  ...['native-c', 'native-c-inproc', 'koffi', 'cuda-ts-raw', 'cuda-ts-typed', 'cuda-ts-objects'],
  ...['cuda-ts-raw-nodeffi', 'cuda-ts-typed-nodeffi', 'cuda-ts-objects-nodeffi', 'cuda-python', 'cuda.core', 'cupy'],
];
const BASE_WORDS: Record<string, string> = { 'native-c-inproc': 'C (same process)', 'native-c': 'C', 'cuda-python': 'cuda-python' };

/** One line per row; a cell is the median and its ratio to the row's base (with the min-max where interleaved with it). */
function mainTable(all: ImplResult[], get: GetRow, notes: SkipNotes): string {
  const seen = new Set(all.flatMap((r) => Object.keys(r.rows ?? {})));
  const rows = [...ROW_ORDER.filter((r) => seen.has(r) || !OPTIONAL_ROWS.has(r)), ...[...seen].filter((r) => !ROW_ORDER.includes(r)).sort()];
  const lines = rows.map((row) => {
    const base = ['native-c-inproc', 'native-c', 'cuda-python'].find((b) => isMeasured(get(b, row)));
    const baseRow = base ? get(base, row) : undefined;
    const cells = IMPLS.map((impl) => {
      const r = get(impl, row);
      if (r === undefined) return '';
      if (!isMeasured(r)) return notes.cell(r.skipped);
      if (!isMeasured(baseRow) || impl === base) return fmt(r.median);
      const q = ratioOf(r, baseRow);
      return `${fmt(r.median)} ${q.median.toFixed(2)}x${q.interleaved ? ` [${q.min.toFixed(2)}-${q.max.toFixed(2)}]` : ''}`;
    });
    const unit = IMPLS.map((i) => get(i, row)).find(isMeasured)?.unit ?? '';
    return [row, unit, BASE_WORDS[base ?? ''] ?? '-', ...cells];
  });
  return table(['row', 'unit', 'vs', ...IMPLS.map((i) => (i === 'native-c' ? 'native-c (1 process)' : i))], lines);
}

/** The target's implementation: a name, or the first of several that has the row. */
type Pick = string | ((get: GetRow, row: string) => string | undefined);
const first =
  (...impls: string[]): Pick =>
  (get, row) =>
    impls.find((i) => isMeasured(get(i, row)));
const LAYER = first('cuda-ts-objects', 'cuda-ts-typed');
const TRIVIAL = ['cuCtxGetCurrent', 'cuDeviceGetAttribute'];
const LAUNCH = ['launch_0args', 'launch_4args'];

/** The call and launch targets of issues 5, 11 and 17 (base 'C': C in the same process where it has the row, else the standalone one). */
const GPU_TARGETS: (Omit<RatioTarget, 'row' | 'impl'> & { rows: string[]; pick: Pick; vsPython?: true })[] = [
  { target: 'trivial call, typed ≤ 1.2× hand-declared koffi', rows: TRIVIAL, pick: 'cuda-ts-typed', base: 'koffi', limit: 1.2 },
  { target: 'trivial call, typed ≤ 1.3× raw', rows: TRIVIAL, pick: 'cuda-ts-typed', base: 'cuda-ts-raw', limit: 1.3 },
  { target: 'node:ffi: trivial call, typed ≤ 2× C', rows: TRIVIAL, pick: first('cuda-ts-typed-nodeffi'), base: 'C', limit: 2 },
  { target: 'node:ffi: objects launch ≤ 1.03× C', rows: LAUNCH, pick: first('cuda-ts-objects-nodeffi'), base: 'C', limit: 1.03 },
  {
    target: 'launch 0 args, objects ≤ 1.10× C and faster than cuda.core, CuPy',
    rows: [LAUNCH[0]],
    pick: first('cuda-ts-objects'),
    base: 'C',
    limit: 1.1,
    vsPython: true,
  },
  {
    target: 'launch 4 args, objects ≤ 1.15× C and faster than cuda.core, CuPy',
    rows: [LAUNCH[1]],
    pick: first('cuda-ts-objects'),
    base: 'C',
    limit: 1.15,
    vsPython: true,
  },
  { target: 'launch + sync round trip ≤ 1.05× C', rows: ['launch_sync'], pick: LAYER, base: 'C', limit: 1.05 },
  { target: 'H2D/D2H 256 MiB pinned ≥ 0.97× C', rows: ['h2d_pinned_256MiB', 'd2h_pinned_256MiB'], pick: LAYER, base: 'C', limit: 0.97, better: 'higher' },
  { target: 'stream-ordered alloc + free ≤ 1.15× C', rows: ['alloc_free_async_1MiB'], pick: LAYER, base: 'C', limit: 1.15 },
];

function gpuTargets(get: GetRow): Verdict[] {
  const median = (impl: string, row: string) => {
    const r = get(impl, row);
    return isMeasured(r) ? r.median : undefined;
  };
  return GPU_TARGETS.flatMap(({ rows, pick, vsPython, ...t }) =>
    rows.map((row): Verdict => {
      const impl = typeof pick === 'string' ? pick : pick(get, row);
      if (!impl) return { target: t.target, row, judged: '-', verdict: 'SKIP', why: `no cuda-ts measurement of ${row}` };
      const base = t.base !== 'C' ? t.base : isMeasured(get('native-c-inproc', row)) ? 'native-c-inproc' : 'native-c';
      const slower = (v: number) => ['cuda.core', 'cupy'].filter((p) => v >= (median(p, row) ?? Infinity));
      const extra = vsPython ? (v: number) => (slower(v).length ? `not faster than ${slower(v).join(', ')}` : undefined) : undefined;
      return judgeRatio(get, { ...t, row, impl, base, extra });
    }),
  );
}

/** Issue 5's CPU target: the typed layer over the raw one on libcudart (bench/cpu.ts, no GPU needed). */
function cpuTarget(cpu: CpuResult | undefined): Verdict {
  const [target, row] = ['typed vs raw (CPU, libcudart) ≤ 1.3×', 'cudaRuntimeGetVersion'];
  if (!cpu) return { target, row, judged: '-', verdict: 'SKIP', why: whySkipped('cpu') };
  const [q, tr] = [cpu.spreads?.typed_vs_raw, cpu.ratios.typed_vs_raw];
  const ns = (k: string) => fmt(cpu.rows[`getVersion/${k}`]?.median);
  const value = `${q ? ratioWords(q) : `${tr.toFixed(3)}x (medians)`} (raw ${ns('raw')} ns, typed ${ns('typed')} ns, koffi ${ns('koffi')} ns)`;
  return { target, row, judged: 'cuda-ts-typed vs cuda-ts-raw (compiled JS)', value, verdict: q ? judgeRatios(q, 1.3, 'lower') : tr <= 1.3 ? 'PASS' : 'FAIL' };
}

/** The main table, the floor line, the skipped cells' reasons and the call, launch and CPU targets. */
function mainSection(all: ImplResult[], cpu: CpuResult | undefined, floor: ChosenFloor): Section {
  const get = rowGetter(all);
  const notes = new SkipNotes();
  const inter = all.map((r) => r.meta?.interleaved as { repetition?: unknown } | undefined).find((x) => typeof x?.repetition === 'string');
  const repetition = (inter?.repetition as string | undefined) ?? repetitionWords(Number(process.env.BENCH_REPS ?? 7) | 0 || 7);
  const out = [
    `cuda-ts benchmarks; each cell "value ratio [min-max]": the ratio to the "vs" column's implementation, and where both ran interleaved (same process and clock) the median of the per-repetition ratios with their min-max. A repetition: ${repetition}; each implementation's work per repetition is the row's loop count of bench.c. For GB/s ≥ 1 is better, otherwise ≤ 1 is better. Python columns ran in their own process (ratio of medians to the separate native-c run).\n`,
    mainTable(all, get, notes),
    floorLine(all, floor),
    ...notes.lines(),
  ];
  const verdicts = [...gpuTargets(get), cpuTarget(cpu)];
  out.push(
    '\ntargets (issues 5, 11, 17; the [lo-hi] of a ratio is the 95% interval of the median of the per-repetition ratios (their min-max up to 8 repetitions); PASS when all of it meets the target, "noisy" when it crosses the target):',
    verdictTable(verdicts),
  );
  return { text: out.join('\n'), verdicts };
}

/** The machine in one phrase for summary.md: the GPU and driver the C baseline saw, and the runtimes measured. */
function machineWords(all: ImplResult[]): string {
  const meta = all.find((r) => r.impl === 'native-c' && !r.skipped)?.meta ?? all.find((r) => r.impl === 'native-c-inproc')?.meta ?? {};
  const driver =
    typeof meta.driver_version === 'number' ? `, driver supporting CUDA ${Math.floor(meta.driver_version / 1000)}.${(meta.driver_version % 1000) / 10}` : '';
  const runtimes = (['Bun', 'Deno'] as const).flatMap((rt) => {
    const r = all.find((x) => x.impl === `cuda-ts-objects-${rt.toLowerCase()}` && !x.skipped);
    return r ? [typeof r.meta?.version === 'string' ? `${rt} ${r.meta.version}` : rt] : [];
  });
  return `${typeof meta.device === 'string' ? meta.device : 'GPU unknown'}${driver}, ${[`Node ${process.versions.node}`, ...runtimes].join(', ')}`;
}

async function main(): Promise<void> {
  const floor = chooseFloor(process.env); // sets BENCH_PIN / BENCH_FLOOR_WARMUP for every child below
  log(`C floor method: ${floor.words}`);
  const all: ImplResult[] = [];
  for (const s of COLUMN_STEPS)
    all.push(...((await step(s.name, s.run)) ?? s.impls.map((impl) => ({ impl, meta: {}, rows: {}, skipped: whySkipped(s.name) }))));
  const cpuEnv = { ...process.env, BENCH_CPU_REPS: process.env.BENCH_CPU_REPS ?? '7' };
  const cpu = await step('cpu', () => childJson<CpuResult>('cpu.ts', 120, cpuEnv, true));
  const skipped = (name: string, title: string): Section => ({ text: `${title}: skipped (${whySkipped(name)})`, verdicts: [] });
  const imp = (await step('import', async () => importSection())) ?? skipped('import', 'import + first call');
  const stg = await step('staging', () => childJson<ImplResult[]>('staging.ts', 400));
  const awt = (await step('await', awaiting)) ?? skipped('await', 'awaiting GPU work');
  const mth = (await step('math', math)) ?? skipped('math', 'math libraries');
  const rv = runtimeVerdicts(all);
  const runtimes = { text: `${runtimeTable(all)}\n\nJS runtime targets (issue 26 §2, §3; C in the same process):\n${verdictTable(rv)}`, verdicts: rv };
  const sections = [mainSection(all, cpu, floor), imp, runtimes, stagingSection(stg, all), awt, mth];
  const stepWords = Object.entries(steps).map(
    ([k, v]) => `${k} ${v.ms !== undefined ? `${(v.ms / 1000).toFixed(1)} s` : ''}${v.skipped ? ` (skipped: ${v.skipped.slice(0, 200)})` : ''}`,
  );
  const text = `${sections.map((s) => s.text).join('\n\n')}\n\nsteps: ${stepWords.join('; ')}; total ${((Date.now() - T0) / 1000).toFixed(1)} s`;
  console.log(`\n${text}`);
  const dir = resultsDir();
  const date = new Date().toISOString();
  const env = { BENCH_SCALE: process.env.BENCH_SCALE ?? '1', node: process.version };
  const targets = sections.flatMap((s) => s.verdicts);
  writeJson(join(dir, 'bench.json'), {
    command: 'npm run bench',
    date,
    env,
    steps,
    floor: { ...floor, line: floorLine(all, floor) },
    results: all,
    cpu,
    staging: stg,
    targets,
    table: text,
  });
  writeFileSync(join(dir, 'bench.txt'), `${text}\n`);
  writeFileSync(join(dir, 'chart.svg'), ratioChart(chartRowsFrom(all), { subtitle: `${date}, Node ${process.version}` }));
  // the README's table (README.md, "Performance"): paste summary.md between its bench-summary markers
  writeFileSync(join(dir, 'summary.md'), summaryTable(all, machineWords(all), date.slice(0, 10)));
  log(`wrote ${join(dir, 'bench.json')} and bench.txt (${((Date.now() - T0) / 1000).toFixed(1)} s)`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
