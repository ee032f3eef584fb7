// Import + first call of cuda-ts/driver and cuda-ts/objects against koffi's own load, in fresh Node
// processes (the `import` step of `npm run bench`; issue 17: driver ≤ koffi + 6 ms, objects ≤ koffi + 15 ms).
// After one untimed spawn per case, `rounds` rounds; in each, every case is spawned `perRound` times, the
// cases taking turns in rotating order, and the round's value for a case is the median of its spawns. A
// row's spread is the min-max of its per-round differences to koffi's value of the same round.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT, type Verdict, fmt, median, table } from './common';
import { judge, rotation } from './interleave';
import { bundledTree, jsTree } from './startup';

const IMPORT_ROUNDS = 5;
const IMPORT_PER_ROUND = 3;

/** Issue 17's import targets: each row's median minus koffi's, against its allowance (ms). */
export const IMPORT_TARGETS: Record<string, number> = { driver: 6, objects: 15 };

/** One case: a script run in a fresh `node -e`, timed inside the child. */
export interface ImportCase {
  name: string;
  what: string;
  /** The timed code: `require(...)`s and the first call; its return value is kept as `result`. */
  timed: string;
}

/** Per case: one value per round (ms; the median of that round's spawns), their median, and every spawn. */
export interface ImportResult {
  name: string;
  what: string;
  samples: number[];
  median: number;
  result?: unknown;
  spawns?: number[][];
}

const r2 = (x: number) => Math.round(x * 100) / 100;

/** Import + first call of `cases` in fresh processes, interleaved (the method above). */
export function measureImports(
  cases: ImportCase[],
  rounds = IMPORT_ROUNDS,
  perRound = IMPORT_PER_ROUND,
  spawn: (c: ImportCase) => { ms: number; result?: unknown } = spawnImportCase,
): ImportResult[] {
  for (const c of cases) spawn(c); // untimed: OS file cache
  const got = cases.map(() => [] as number[][]);
  const last: unknown[] = [];
  const order = cases.map((_, i) => i);
  for (let k = 0, s = 0; k < rounds; k++) {
    for (const g of got) g.push([]);
    for (let j = 0; j < perRound; j++, s++)
      for (const i of rotation(order, s)) {
        const r = spawn(cases[i]);
        got[i][k].push(r2(r.ms));
        last[i] = r.result;
      }
  }
  return cases.map((c, i) => {
    const values = got[i].map((round) => r2(median(round)));
    return { name: c.name, what: c.what, samples: values, median: r2(median(values)), result: last[i], spawns: got[i] };
  });
}

/** One fresh `node -e` of an import case: the time of its timed code (ms, measured inside the child) and its result. */
function spawnImportCase(c: ImportCase): { ms: number; result?: unknown } {
  const script = `
const { performance } = require('node:perf_hooks');
const t0 = performance.now();
let result;
try { result = (() => { ${c.timed} })(); } catch (e) { result = { error: String(e && e.message || e).split('\\n')[0] }; }
const t1 = performance.now();
if (typeof result === 'bigint') result = String(result);
process.stdout.write(JSON.stringify({ ms: t1 - t0, result }));
`;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0)
    throw new Error(`${c.name}: child exited ${r.status ?? r.signal}: ${(r.stderr || r.stdout || '').trim().split('\n').slice(-6).join(' | ')}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

/**
 * The cases on the package as built (one bundled file per entry, as `npm run build` ships it): koffi alone
 * (require + load + one declared call: the floor any koffi binding pays), cuda-ts/driver and cuda-ts/objects
 * (require + cuDriverGetVersion(), which loads libcuda), and cuda-ts/runtime on libcudart. Without a GPU
 * (`gpu` false) the driver's first call fails fast at library load and koffi loads libcudart instead, so
 * the runtime row is the like-for-like one.
 */
export function importCases(gpu: boolean): ImportCase[] {
  const root = bundledTree(jsTree(['generated/13.0/driver/index', 'generated/13.0/runtime/index', 'src/index']).root);
  const js = (p: string) => JSON.stringify(join(root, `${p}.js`));
  const [lib, fn] = gpu ? ['libcuda.so.1', 'cuDriverGetVersion'] : ['libcudart.so.13', 'cudaRuntimeGetVersion'];
  const env = gpu ? 'CUDA_TS_DRIVER_LIBRARY' : 'CUDA_TS_RUNTIME_LIBRARY';
  const driver = js('generated/13.0/driver/index');
  return [
    {
      name: 'koffi',
      what: `require('koffi') + koffi.load(${lib}) + one declared call`,
      timed: `const koffi = require('koffi'); const lib = koffi.load(process.env.${env} || '${lib}'); const out = new Int32Array(1); lib.func('int ${fn}(void *)')(out); return out[0];`,
    },
    {
      name: 'driver',
      what: `cuda-ts/driver: require + cuDriverGetVersion()${gpu ? '' : ' (fails fast here: no libcuda)'}`,
      timed: `return require(${driver}).cuDriverGetVersion();`,
    },
    {
      name: 'objects',
      what: `cuda-ts/objects: require + driver version through the driver module it loaded${gpu ? '' : ' (fails fast here)'}`,
      timed: `require(${js('src/index')}); return require(${driver}).cuDriverGetVersion();`,
    },
    {
      name: 'runtime',
      what: 'cuda-ts/runtime: require + cudaRuntimeGetVersion() (loads libcudart)',
      timed: `return require(${js('generated/13.0/runtime/index')}).cudaRuntimeGetVersion();`,
    },
  ];
}

export interface ImportVerdict {
  row: string;
  what: string;
  median_ms: number;
  over_koffi_ms: number;
  spread: [number, number];
  allowance_ms?: number;
  verdict: 'PASS' | 'FAIL' | 'noisy' | 'info';
}

/** Each case's median over koffi's and its per-round spread, judged against its allowance where it has one. */
export function importVerdicts(results: ImportResult[]): ImportVerdict[] {
  const base = results.find((r) => r.name === 'koffi')!;
  return results.map((r) => {
    const diffs = r.samples.map((s, k) => s - base.samples[k]);
    const allowance = IMPORT_TARGETS[r.name];
    const spread: [number, number] = [r2(Math.min(...diffs)), r2(Math.max(...diffs))];
    const verdict = r.name === 'koffi' || allowance === undefined ? 'info' : judge([Math.min(...diffs), Math.max(...diffs)], allowance, 'lower');
    return { row: r.name, what: r.what, median_ms: r.median, over_koffi_ms: r2(r.median - base.median), spread, allowance_ms: allowance, verdict };
  });
}

/** Issue 17's targets as verdicts: cuda-ts/driver ≤ 25 ms (SKIP where its first call failed), and driver and objects within their allowance over koffi. */
export function importTargets(results: ImportResult[]): Verdict[] {
  const out: Verdict[] = importVerdicts(results).flatMap((x) =>
    x.allowance_ms === undefined || x.verdict === 'info'
      ? []
      : [
          {
            target: `import + first call, ${x.row} ≤ koffi + ${x.allowance_ms} ms`,
            row: `import_${x.row}`,
            judged: `${x.row} - koffi per round`,
            value: `${x.over_koffi_ms} ms [${x.spread[0]}..${x.spread[1]}]`,
            verdict: x.verdict,
          },
        ],
  );
  const driver = results.find((r) => r.name === 'driver');
  const failed = (driver?.result as { error?: string } | undefined)?.error;
  const [target, row] = ['import + first call, cuda-ts/driver ≤ 25 ms', 'import_driver'];
  if (!driver || failed) return [...out, { target, row, judged: '-', verdict: 'SKIP', why: `first call failed: ${failed ?? 'not measured'}` }];
  return [
    ...out,
    { target, row, judged: 'median of the rounds (as built)', value: `${fmt(driver.median)} ms`, verdict: driver.median <= 25 ? 'PASS' : 'FAIL' },
  ];
}

export function importTable(v: ImportVerdict[]): string {
  const rows = v.map((x) => [
    x.row,
    fmt(x.median_ms),
    x.row === 'koffi' ? '-' : `${fmt(x.over_koffi_ms)} ms`,
    x.row === 'koffi' ? '-' : `${fmt(x.spread[0])}..${fmt(x.spread[1])} ms`,
    x.allowance_ms !== undefined ? `≤ koffi + ${x.allowance_ms} ms` : '',
    x.verdict,
    x.what,
  ]);
  return table(['row', 'median ms', 'over koffi', 'spread (per round)', 'target', 'verdict', 'what'], rows);
}

/** What a round is, in words, for table headers. */
export function importRoundWords(rounds = IMPORT_ROUNDS, perRound = IMPORT_PER_ROUND): string {
  return `${rounds} rounds; in each, every case is spawned ${perRound} time${perRound === 1 ? '' : 's'} in a fresh process, the cases taking turns in rotating order, and the round's value is the median of its spawns; "over koffi" is the case's median minus koffi's, "spread" the min-max of the per-round differences (case - koffi)`;
}
