// Import + first call of cuda-ts/driver and cuda-ts/objects against koffi's own load, interleaved
// fresh processes (bench/startup.ts measureImports). CPU here, GPU on the H200:
//   npx tsx bench/import.ts [--gpu] [out.json]      (--gpu: first calls load libcuda; default: auto)
// Targets (issue 17): driver ≤ koffi + 6 ms, objects ≤ koffi + 15 ms. Method (measureImports): one
// untimed spawn per case, then BENCH_IMPORT_SAMPLES rounds (default 5); in each, every case is spawned
// BENCH_IMPORT_PER_ROUND times (default 3), the cases taking turns in rotating order, and the round's
// value for a case is the median of its spawns. A row's value is its median over the rounds minus
// koffi's; its spread is the min-max of its per-round differences to koffi's value of the same
// round, and a row whose spread crosses its allowance is "noisy", not PASS/FAIL.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fmt, log, median, resultsDir, table, writeJson } from './common';
import { IMPORT_TARGETS, importCases, measureImports, type ImportResult } from './startup';
import { judge } from './interleave';

/** Rounds of import spawns (BENCH_IMPORT_SAMPLES, default 5). */
export const IMPORT_ROUNDS = Number(process.env.BENCH_IMPORT_SAMPLES ?? 5) | 0 || 5;
/** Spawns of each case per round (BENCH_IMPORT_PER_ROUND, default 3). */
export const IMPORT_PER_ROUND = Number(process.env.BENCH_IMPORT_PER_ROUND ?? 3) | 0 || 3;

/** What a round is, in words, for table headers. */
export function importRoundWords(rounds: number, perRound: number): string {
  return `${rounds} rounds; in each, every case is spawned ${perRound} time${perRound === 1 ? '' : 's'} in a fresh process, the cases taking turns in rotating order, and the round's value is the median of its spawns; "over koffi" is the case's median minus koffi's, "spread" the min-max of the per-round differences (case - koffi)`;
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

export function importVerdicts(results: ImportResult[]): ImportVerdict[] {
  const base = results.find((r) => r.name === 'koffi')!;
  return results.map((r) => {
    const diffs = r.samples.map((s, k) => s - base.samples[k]);
    const allowance = IMPORT_TARGETS[r.name];
    const spread: [number, number] = [Math.min(...diffs), Math.max(...diffs)];
    return {
      row: r.name,
      what: r.what,
      median_ms: r.median,
      over_koffi_ms: Math.round((r.median - base.median) * 100) / 100,
      spread: [Math.round(spread[0] * 100) / 100, Math.round(spread[1] * 100) / 100],
      allowance_ms: allowance,
      verdict: r.name === 'koffi' || allowance === undefined ? 'info' : judge(median(diffs), spread, allowance, 'lower'),
    };
  });
}

export function importTable(v: ImportVerdict[]): string {
  return table(
    ['row', 'median ms', 'over koffi', 'spread (per round)', 'target', 'verdict', 'what'],
    v.map((x) => [
      x.row,
      fmt(x.median_ms),
      x.row === 'koffi' ? '-' : `${fmt(x.over_koffi_ms)} ms`,
      x.row === 'koffi' ? '-' : `${fmt(x.spread[0])}..${fmt(x.spread[1])} ms`,
      x.allowance_ms !== undefined ? `≤ koffi + ${x.allowance_ms} ms` : '',
      x.verdict,
      x.what,
    ]),
    1,
  );
}

function main(): void {
  const args = process.argv.slice(2);
  const gpu =
    args.includes('--gpu') || (!args.includes('--cpu') && ['/usr/lib/x86_64-linux-gnu/libcuda.so.1', '/usr/local/nvidia/lib64/libcuda.so.1'].some(existsSync));
  log(
    `import + first call, ${IMPORT_ROUNDS} interleaved rounds of ${IMPORT_PER_ROUND} fresh processes per case (${gpu ? 'GPU machine' : 'CPU only'}; node ${process.version})`,
  );
  const results = measureImports(importCases(gpu), IMPORT_ROUNDS, IMPORT_PER_ROUND);
  const verdicts = importVerdicts(results);
  console.log(
    `\nimport + first call in a fresh process (ms; node ${process.version}; ${gpu ? 'first calls load libcuda' : 'no libcuda: driver/objects first calls fail fast'}; ${importRoundWords(IMPORT_ROUNDS, IMPORT_PER_ROUND)}):\n`,
  );
  console.log(importTable(verdicts));
  const out = args.find((a) => a.endsWith('.json')) ?? join(resultsDir(), 'import.json');
  writeJson(out, { node: process.version, gpu, rounds: IMPORT_ROUNDS, per_round: IMPORT_PER_ROUND, results, verdicts });
  log(`wrote ${out}`);
}

if (require.main === module) main();
