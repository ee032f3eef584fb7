// Import + first call of cuda-ts/driver and cuda-ts/objects against koffi's own load, interleaved
// fresh processes (bench/startup.ts measureImports). CPU here, GPU on the H200:
//   npx tsx bench/import.ts [--gpu] [out.json]      (--gpu: first calls load libcuda; default: auto)
// Targets (issue 17): driver ≤ koffi + 6 ms, objects ≤ koffi + 15 ms (medians of 9 interleaved
// samples; each row also shows the min-max of its per-sample difference to the koffi sample of the
// same round, and a row whose spread crosses its allowance is "noisy", not PASS/FAIL).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fmt, log, median, resultsDir, table, writeJson } from './common';
import { IMPORT_TARGETS, importCases, measureImports, type ImportResult } from './startup';
import { judge } from './interleave';

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
    const over = r.median - base.median;
    return {
      row: r.name,
      what: r.what,
      median_ms: r.median,
      over_koffi_ms: Math.round(over * 100) / 100,
      spread: [Math.round(spread[0] * 100) / 100, Math.round(spread[1] * 100) / 100],
      allowance_ms: allowance,
      verdict: r.name === 'koffi' || allowance === undefined ? 'info' : judge(median(diffs), spread, allowance, 'lower'),
    };
  });
}

export function importTable(v: ImportVerdict[]): string {
  return table(
    ['row', 'median ms', 'over koffi', 'spread (per round)', 'target', 'verdict', 'what'],
    v.map((x) => [x.row, fmt(x.median_ms), x.row === 'koffi' ? '-' : `${fmt(x.over_koffi_ms)} ms`, x.row === 'koffi' ? '-' : `${fmt(x.spread[0])}..${fmt(x.spread[1])} ms`, x.allowance_ms !== undefined ? `≤ koffi + ${x.allowance_ms} ms` : '', x.verdict, x.what]),
    1,
  );
}

function main(): void {
  const args = process.argv.slice(2);
  const gpu = args.includes('--gpu') || (!args.includes('--cpu') && ['/usr/lib/x86_64-linux-gnu/libcuda.so.1', '/usr/local/nvidia/lib64/libcuda.so.1'].some(existsSync));
  const samples = Number(process.env.BENCH_IMPORT_SAMPLES ?? 9) | 0 || 9;
  log(`import + first call, ${samples} interleaved rounds of fresh processes (${gpu ? 'GPU machine' : 'CPU only'}; node ${process.version})`);
  const results = measureImports(importCases(gpu), samples);
  const verdicts = importVerdicts(results);
  console.log(`\nimport + first call in a fresh process (ms; node ${process.version}; ${gpu ? 'first calls load libcuda' : 'no libcuda: driver/objects first calls fail fast'}):\n`);
  console.log(importTable(verdicts));
  const out = args.find((a) => a.endsWith('.json')) ?? join(resultsDir(), 'import.json');
  writeJson(out, { node: process.version, gpu, samples, results, verdicts });
  log(`wrote ${out}`);
}

if (require.main === module) main();
