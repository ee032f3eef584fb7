// CPU-only part of `npm run bench` (no GPU needed): the per-call cost of cuda-ts's typed layer against its
// raw layer and against a hand-declared koffi function, on libcudart's cudaRuntimeGetVersion(int*), which
// answers without a driver. cuda-ts loads as compiled CommonJS (bench/.build/js, what the package ships).
//   koffi   lib.func('int cudaRuntimeGetVersion(void *)') on the library cuda-ts loaded, one preallocated Int32Array
//   raw     raw.cudaRuntimeGetVersion(preallocated Int32Array)
//   typed   cudaRuntimeGetVersion() → number (throws on failure)
//
//   npx tsx bench/cpu.ts [out.json]        (default bench/results/cpu.json; $OUT/cpu.json if $OUT is set)
//
// Method (bench/interleave.ts): an untimed warm-up pass each, then BENCH_CPU_REPS repetitions whose sub-blocks
// take turns; a ratio is the median of the per-repetition ratios. Target (issue 5): typed / raw ≤ 1.3×,
// judged on the median's 95% interval (PASS, FAIL, or noisy when it crosses the target).
import { join } from 'node:path';
import koffi from 'koffi';
import { type MeasuredRow, SCALE, fmt, log, resultsDir, table, writeJson } from './common';
import { BLOCKS, judgeRatios, measureInterleaved, ratioStats, repetitionWords } from './interleave';
import { loadModule } from './startup';

type RuntimeModule = typeof import('../generated/13.0/runtime/index');
type RuntimeRaw = typeof import('../generated/13.0/runtime/raw');

const REPS = Math.max(5, Number(process.env.BENCH_CPU_REPS ?? 9) | 0);
const N = Math.max(10_000, Math.round((1_000_000 * SCALE) / 1000) * 1000);
const TARGET_TYPED_VS_RAW = 1.3;

type Pass = (n: number) => void;

function fail(status: number): never {
  throw new Error(`cudaRuntimeGetVersion returned ${status}`);
}

/** One pass per implementation, each its own function so each loop has its own monomorphic call site. */
function passes(version: number): Record<string, Pass> {
  const rt = loadModule<RuntimeModule>('generated/13.0/runtime/index', 'js');
  const raw = loadModule<RuntimeRaw>('generated/13.0/runtime/raw', 'js');
  const kGetVersion = raw.binder.library().func('int cudaRuntimeGetVersion(void *)') as (p: Int32Array) => number;
  const outKoffi = new Int32Array(1);
  const outRaw = new Int32Array(1);
  return {
    'getVersion/koffi': (n) => {
      for (let i = 0; i < n; i++) {
        const s = kGetVersion(outKoffi);
        if (s !== 0) fail(s);
      }
    },
    'getVersion/raw': (n) => {
      for (let i = 0; i < n; i++) {
        const s = raw.cudaRuntimeGetVersion(outRaw);
        if (s !== 0) fail(s);
      }
    },
    'getVersion/typed': (n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) acc += rt.cudaRuntimeGetVersion();
      if (acc !== n * version) throw new Error('typed cudaRuntimeGetVersion returned a wrong value');
    },
  };
}

/** Every pass measured interleaved; a skipped pass is an error here (they all run without a GPU). */
function measureAll(all: Record<string, Pass>): Record<string, MeasuredRow> {
  // warm-up: N calls each (N / 10 left the typed layer's first repetition 30-100% slow: its optimized code was not ready)
  const got = measureInterleaved({ name: 'cpu', ops: N, warm: N, unit: 'ns', granule: 1000, passes: all }, REPS);
  const rows: Record<string, MeasuredRow> = {};
  for (const [n, r] of Object.entries(got)) {
    if (!('median' in r)) throw new Error(`${n}: ${r.skipped}`);
    rows[n] = r;
  }
  return rows;
}

function main(): void {
  const v = new Int32Array(1);
  const st = loadModule<RuntimeRaw>('generated/13.0/runtime/raw', 'js').cudaRuntimeGetVersion(v);
  if (st !== 0) fail(st);
  log(`libcudart runtime version ${v[0]}`);
  const rows = measureAll(passes(v[0]));
  const q = (a: string, b: string) => ratioStats(rows[`getVersion/${a}`].reps, rows[`getVersion/${b}`].reps);
  const spreads = { typed_vs_raw: q('typed', 'raw'), typed_vs_koffi: q('typed', 'koffi'), raw_vs_koffi: q('raw', 'koffi') };
  const verdict = judgeRatios(spreads.typed_vs_raw, TARGET_TYPED_VS_RAW, 'lower');
  const words = (r: (typeof spreads)['typed_vs_raw']) => `${fmt(r.median, 2)}x [${fmt(r.min, 2)}-${fmt(r.max, 2)}]`;
  console.log(
    `\nCPU call overhead against libcudart (ns/call; node ${process.version}, koffi ${koffi.version ?? '?'}). ${N} calls per implementation per repetition, ${repetitionWords(REPS)}. A ratio "m [min-max]" is the median of the per-repetition ratios and their min-max; PASS when the median's 95% interval meets the target, FAIL when none of it does, noisy otherwise.\n`,
  );
  const med = (impl: string) => fmt(rows[`getVersion/${impl}`].median);
  const cells = [med('koffi'), med('raw'), med('typed'), ...Object.values(spreads).map(words)];
  console.log(
    table(
      ['call', 'koffi', 'raw', 'typed', 'typed/raw', 'typed/koffi', 'raw/koffi', 'target', ''],
      [['cudaRuntimeGetVersion(int*)', ...cells, `<= ${TARGET_TYPED_VS_RAW}x`, verdict]],
    ),
  );
  const tr = spreads.typed_vs_raw;
  const json = {
    impl: 'cuda-ts-cpu',
    meta: {
      node: process.version,
      koffi: koffi.version,
      cpu_reps: REPS,
      calls_per_rep: N,
      blocks_per_rep: BLOCKS,
      runtime_version: v[0],
      method: `one warm-up pass per implementation, then ${repetitionWords(REPS)}; ns/call`,
    },
    rows,
    ratios: Object.fromEntries(Object.entries(spreads).map(([k, s]) => [k, s.median])),
    spreads,
    targets: { typed_vs_raw: { target: `<= ${TARGET_TYPED_VS_RAW}`, value: tr.median, spread: [tr.min, tr.max], verdict, pass: verdict === 'PASS' } },
  };
  const outPath = process.argv[2] ?? join(resultsDir(), 'cpu.json');
  writeJson(outPath, json);
  log(`wrote ${outPath}`);
}

main();
