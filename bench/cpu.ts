// CPU-only part of the benchmark suite (runs without a GPU): per-call overhead of cuda-ts's typed layer
// against its raw layer and against a hand-declared koffi function, on libcudart.
//
//   npx tsx bench/cpu.ts [out.json]        (default bench/results/cpu.json; $OUT/cpu.json if $OUT is set)
//
// Call: cudaRuntimeGetVersion(int*) — answers without a driver or a GPU. (cudaGetLastError would be the
// no-argument call, but with no usable driver it returns cudaErrorInsufficientDriver (35) on every call,
// so the typed layer throws; it is measured through raw and koffi only, as a no-argument floor, and
// through typed only if it returns 0.)
//   koffi        lib.func('int cudaRuntimeGetVersion(void *)') on the same loaded library, out-param
//                in one preallocated Int32Array (the floor)
//   cuda-ts raw  raw.cudaRuntimeGetVersion(preallocated Int32Array)
//   cuda-ts typed  cudaRuntimeGetVersion() → number (throws on failure; scratch out-param)
// cuda-ts is measured as compiled CommonJS ("js": src/ and generated/ transpiled one-to-one into
// bench/.build/js, what tsc emits and what dist/ ships) — the target is judged on that — and also as
// loaded through tsx ("tsx"), whose esbuild output turns every export into a getter: that column shows
// what a user running TypeScript sources through tsx pays, not what the package costs.
// Diagnostic rows: koffi with an 8-byte Uint8Array sub-view out-param (what the typed layer's Scratch
// passes), to tell the typed layer's own cost from the cost of the pointer kind it passes.
//
// Method (bench/interleave.ts): one untimed warm-up pass per implementation, then REPS repetitions of
// N calls per implementation (status checked every call). A repetition splits each implementation's N
// calls into BLOCKS sub-blocks run interleaved with the other implementations' sub-blocks (the order
// rotates every sub-block), and its value is the median of its sub-blocks, ns per call; so one
// preemption or GC pause on this shared 2-core machine moves no repetition. Each ratio is the median of
// the per-repetition ratios, with their min–max (the spread); target (issue 5): typed / raw ≤ 1.3×,
// PASS when the median's 95% interval (bench/interleave.ts: the min-max up to 8 repetitions) is under
// it, FAIL when all of it is over, "noisy" when it crosses it.
import koffi from 'koffi';
import { SCALE, fmt, log, resultsDir, table, writeJson } from './common';
import { BLOCKS, judgeRatios, measureInterleaved, ratioStats, repetitionWords } from './interleave';
import { hasDist, loadModule, measureStartup, type Loader, type StartupResult } from './startup';
import type { MeasuredRow } from './common';

type RuntimeModule = typeof import('../generated/13.0/runtime/index');
type RuntimeRaw = typeof import('../generated/13.0/runtime/raw');
import { join } from 'node:path';

const REPS = Math.max(5, Number(process.env.BENCH_CPU_REPS ?? 9) | 0);
const N = Math.max(10_000, Math.round((1_000_000 * SCALE) / 1000) * 1000);
const TARGET_TYPED_VS_RAW = 1.3;

type Pass = (n: number) => void;

function check(status: number, what: string): void {
  throw new Error(`${what} returned ${status}`);
}

// One function per implementation, so each loop has its own monomorphic call site.
const outRaw = new Int32Array(1);
const outKoffi = new Int32Array(1);
const slotBuf = new Uint8Array(new ArrayBuffer(16), 8, 8);

/** The runtime module four ways (typed and raw, compiled JS and tsx) and koffi's own declarations on the library it loaded. */
function loadRuntimes() {
  const rt = loadModule<RuntimeModule>('generated/13.0/runtime/index', 'js');
  const rtx = loadModule<RuntimeModule>('generated/13.0/runtime/index', 'tsx');
  const rtRaw = loadModule<RuntimeRaw>('generated/13.0/runtime/raw', 'js');
  const rtxRaw = loadModule<RuntimeRaw>('generated/13.0/runtime/raw', 'tsx');
  const lib = rtRaw.binder.library(); // the libcudart cuda-ts loaded
  const kGetVersion = lib.func('int cudaRuntimeGetVersion(void *)') as (p: unknown) => number;
  const kGetLastError = lib.func('int cudaGetLastError()') as () => number;
  return { rt, rtx, rtRaw, rtxRaw, kGetVersion, kGetLastError };
}
type Runtimes = ReturnType<typeof loadRuntimes>;

function getVersionPasses({ rt, rtx, rtRaw, rtxRaw, kGetVersion }: Runtimes, v: Int32Array): Record<string, Pass> {
  return {
    'getVersion/koffi': (n) => {
      for (let i = 0; i < n; i++) {
        const s = kGetVersion(outKoffi);
        if (s !== 0) check(s, 'cudaRuntimeGetVersion');
      }
    },
    'getVersion/raw': (n) => {
      for (let i = 0; i < n; i++) {
        const s = rtRaw.cudaRuntimeGetVersion(outRaw);
        if (s !== 0) check(s, 'cudaRuntimeGetVersion');
      }
    },
    'getVersion/typed': (n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) acc += rt.cudaRuntimeGetVersion();
      if (acc !== n * v[0]) throw new Error('typed cudaRuntimeGetVersion returned a wrong value');
    },
    'getVersion/raw-tsx': (n) => {
      for (let i = 0; i < n; i++) {
        const s = rtxRaw.cudaRuntimeGetVersion(outRaw);
        if (s !== 0) check(s, 'cudaRuntimeGetVersion');
      }
    },
    'getVersion/typed-tsx': (n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) acc += rtx.cudaRuntimeGetVersion();
      if (acc !== n * v[0]) throw new Error('typed cudaRuntimeGetVersion returned a wrong value');
    },
    'getVersion/koffi-u8slot': (n) => {
      for (let i = 0; i < n; i++) {
        const s = kGetVersion(slotBuf);
        if (s !== 0) check(s, 'cudaRuntimeGetVersion');
      }
    },
  };
}

/** The no-argument call; through the typed layer only where it returns 0 here (else the typed layer throws). */
function getLastErrorPasses({ rt, rtRaw, rtxRaw, kGetLastError }: Runtimes, lastError: number): Record<string, Pass> {
  const passes: Record<string, Pass> = {
    'getLastError/koffi': (n) => {
      for (let i = 0; i < n; i++) {
        const s = kGetLastError();
        if (s !== lastError) check(s, 'cudaGetLastError');
      }
    },
    'getLastError/raw': (n) => {
      for (let i = 0; i < n; i++) {
        const s = rtRaw.cudaGetLastError();
        if (s !== lastError) check(s, 'cudaGetLastError');
      }
    },
    'getLastError/raw-tsx': (n) => {
      for (let i = 0; i < n; i++) {
        const s = rtxRaw.cudaGetLastError();
        if (s !== lastError) check(s, 'cudaGetLastError');
      }
    },
  };
  if (lastError === 0) {
    passes['getLastError/typed'] = (n) => {
      for (let i = 0; i < n; i++) rt.cudaGetLastError();
    };
  }
  return passes;
}

/** Every pass measured interleaved; a skipped pass is an error here (they all run without a GPU). */
function measureAll(passes: Record<string, Pass>): Record<string, MeasuredRow> {
  const names = Object.keys(passes);
  // Warm-up: N calls per implementation (N / 10 left the typed layer's first repetition 30-100% slow
  // here in every run: its optimized code was not ready yet on a loaded machine).
  const got = measureInterleaved({ name: 'cpu', ops: N, warm: N, unit: 'ns', granule: 1000, passes }, REPS);
  const rows: Record<string, MeasuredRow> = {};
  for (const n of names) {
    const r = got[n];
    if (!('median' in r)) throw new Error(`${n}: ${r.skipped}`);
    rows[n] = r;
  }
  return rows;
}

// Startup of the runtime module here (no GPU needed: cudaRuntimeGetVersion needs no device), and of
// the driver module's import alone (no libcuda here: the first call would fail to load it).
function measureStartups(): StartupResult[] {
  const startup: StartupResult[] = [];
  const tryStartup = (what: string, mod: string, call: string, loader: Loader) => {
    try {
      startup.push(measureStartup(what, mod, call, loader));
    } catch (e) {
      log(`startup ${what} (${loader}) failed: ${(e as Error).message}`);
    }
  };
  const loaders: Loader[] = hasDist('generated/13.0/runtime/index') ? ['js', 'dist', 'tsx'] : ['js', 'tsx'];
  for (const loader of loaders) {
    tryStartup('cuda-ts/runtime import + cudaRuntimeGetVersion()', 'generated/13.0/runtime/index', 'm.cudaRuntimeGetVersion()', loader);
    tryStartup('cuda-ts/driver import only (no libcuda here)', 'generated/13.0/driver/index', 'typeof m.cuDriverGetVersion', loader);
  }
  return startup;
}

/** The printed table's rows: medians, ratios "m [min-max]" and the verdict of typed / raw. */
function overheadTable(rows: Record<string, MeasuredRow>, lastError: number, verdictTR: string): string[][] {
  const med: Record<string, number> = Object.fromEntries(Object.keys(rows).map((n) => [n, rows[n].median]));
  const x = (a: string, b: string) => {
    const r = ratioStats(rows[a].reps, rows[b].reps);
    return `${fmt(r.median, 2)}x [${fmt(r.min, 2)}-${fmt(r.max, 2)}]`;
  };
  return [
    [
      'cudaRuntimeGetVersion(int*), js',
      fmt(med['getVersion/koffi']),
      fmt(med['getVersion/raw']),
      fmt(med['getVersion/typed']),
      x('getVersion/raw', 'getVersion/koffi'),
      x('getVersion/typed', 'getVersion/koffi'),
      x('getVersion/typed', 'getVersion/raw'),
      `<= ${TARGET_TYPED_VS_RAW}x`,
      verdictTR,
    ],
    [
      'cudaRuntimeGetVersion(int*), tsx',
      fmt(med['getVersion/koffi']),
      fmt(med['getVersion/raw-tsx']),
      fmt(med['getVersion/typed-tsx']),
      x('getVersion/raw-tsx', 'getVersion/koffi'),
      x('getVersion/typed-tsx', 'getVersion/koffi'),
      x('getVersion/typed-tsx', 'getVersion/raw-tsx'),
      '',
      'info',
    ],
    ['  koffi, Uint8Array(8) sub-view out-param', fmt(med['getVersion/koffi-u8slot']), '', '', '', '', '', '', 'info'],
    [
      'cudaGetLastError() (no args), js',
      fmt(med['getLastError/koffi']),
      fmt(med['getLastError/raw']),
      med['getLastError/typed'] !== undefined ? fmt(med['getLastError/typed']) : 'skip',
      x('getLastError/raw', 'getLastError/koffi'),
      '',
      med['getLastError/typed'] !== undefined ? x('getLastError/typed', 'getLastError/raw') : `- (returns ${lastError})`,
      '',
      'info',
    ],
    [
      'cudaGetLastError() (no args), tsx',
      fmt(med['getLastError/koffi']),
      fmt(med['getLastError/raw-tsx']),
      '',
      x('getLastError/raw-tsx', 'getLastError/koffi'),
      '',
      '',
      '',
      'info',
    ],
  ];
}

function printStartups(startup: StartupResult[]): void {
  if (!startup.length) return;
  console.log('\nFresh-process import + first call (ms, median of 5 spawns after 1 untimed):\n');
  console.log(
    table(
      ['what', 'loader', 'require', 'first call', 'total', 'since process start'],
      startup.map((s) => [s.what, s.loader, fmt(s.median.require_ms), fmt(s.median.first_call_ms), fmt(s.median.total_ms), fmt(s.median.process_ms)]),
    ),
  );
  const js = startup.find((s) => s.loader === 'js');
  if (js?.js_source) console.log(`  js = ${js.js_source}`);
}

function main(): void {
  const runtimes = loadRuntimes();
  const { rtRaw } = runtimes;

  const v = new Int32Array(1);
  const st = rtRaw.cudaRuntimeGetVersion(v);
  if (st !== 0) throw new Error(`cudaRuntimeGetVersion returned ${st}`);
  const lastError = rtRaw.cudaGetLastError();
  log(`libcudart runtime version ${v[0]}; cudaGetLastError() here = ${lastError}${lastError ? ' (non-zero: typed no-arg row skipped)' : ''}`);

  const passes: Record<string, Pass> = { ...getVersionPasses(runtimes, v), ...getLastErrorPasses(runtimes, lastError) };
  const rows = measureAll(passes);
  const q = (a: string, b: string) => ratioStats(rows[a].reps, rows[b].reps);
  const startup = measureStartups();

  const qTR = q('getVersion/typed', 'getVersion/raw');
  const qTK = q('getVersion/typed', 'getVersion/koffi');
  const qRK = q('getVersion/raw', 'getVersion/koffi');
  const qTRx = q('getVersion/typed-tsx', 'getVersion/raw-tsx');
  const verdictTR = judgeRatios(qTR, TARGET_TYPED_VS_RAW, 'lower');
  const rowsOut = overheadTable(rows, lastError, verdictTR);
  console.log(
    `\nCPU call overhead against libcudart (ns/call; node ${process.version}, koffi ${koffi.version ?? '?'}). ${N} calls per implementation per repetition, ${repetitionWords(REPS)}. A cell is the median over the repetitions; a ratio "m [min-max]" is the median of the per-repetition ratios and their min-max; the verdict is PASS when the median's 95% interval (order statistics; min-max up to 8 repetitions) meets the target, FAIL when none of it does, noisy otherwise.\n`,
  );
  console.log(table(['call, cuda-ts loaded as', 'koffi', 'raw', 'typed', 'raw/koffi', 'typed/koffi', 'typed/raw', 'target', ''], rowsOut));
  printStartups(startup);

  const json = {
    impl: 'cuda-ts-cpu',
    meta: {
      node: process.version,
      koffi: koffi.version,
      cpu_reps: REPS,
      calls_per_rep: rows['getVersion/raw'].n,
      blocks_per_rep: BLOCKS,
      runtime_version: v[0],
      cudaGetLastError_here: lastError,
      method: `one warm-up pass per implementation, then ${repetitionWords(REPS)}; ns/call`,
    },
    rows,
    // Medians of the per-repetition ratios (spreads: with their min-max).
    ratios: { typed_vs_raw: qTR.median, typed_vs_koffi: qTK.median, raw_vs_koffi: qRK.median, tsx_typed_vs_raw: qTRx.median },
    spreads: { typed_vs_raw: qTR, typed_vs_koffi: qTK, raw_vs_koffi: qRK, tsx_typed_vs_raw: qTRx },
    targets: {
      typed_vs_raw: { target: `<= ${TARGET_TYPED_VS_RAW}`, value: qTR.median, spread: [qTR.min, qTR.max], verdict: verdictTR, pass: verdictTR === 'PASS' },
    },
    startup,
  };
  const outPath = process.argv[2] ?? join(resultsDir(), 'cpu.json');
  writeJson(outPath, json);
  log(`wrote ${outPath}`);
}

main();
