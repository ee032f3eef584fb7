// The README's performance table (README.md, "Performance"), written by `npm run bench` as summary.md:
// one line naming the machine and the date, then one row per operation, each cell the median and its
// ratio to C in the same process (Bun's and Deno's to their own C; the Python columns to Node's C).
import { type ImplResult, type MeasuredRow, fmt, isMeasured } from './common';
import { ratioStats } from './interleave';

/** The README's columns: the header and the implementation (and its C) behind each. */
const COLUMNS: [string, string, string][] = [
  ['cuda-ts objects', 'cuda-ts-objects', 'native-c-inproc'],
  ['cuda-ts typed', 'cuda-ts-typed', 'native-c-inproc'],
  ['objects, node:ffi', 'cuda-ts-objects-nodeffi', 'native-c-inproc'],
  ['objects, Bun', 'cuda-ts-objects-bun', 'native-c-inproc-bun'],
  ['objects, Deno', 'cuda-ts-objects-deno', 'native-c-inproc-deno'],
  ['cuda-python', 'cuda-python', 'native-c'],
  ['cuda.core', 'cuda.core', 'native-c'],
  ['CuPy', 'cupy', 'native-c'],
];

/** The README's rows: the label and the bench rows (two for a copy pair, shown "H2D / D2H"). */
const ROWS: [string, string[]][] = [
  ['trivial call (`cuCtxGetCurrent`, typed)', ['cuCtxGetCurrent']],
  ['empty kernel launch', ['launch_0args']],
  ['launch, 4 args', ['launch_4args']],
  ['launch, 16 args', ['launch_16args']],
  ['launch + stream synchronize', ['launch_sync']],
  ['stream-ordered alloc + free, 1 MiB', ['alloc_free_async_1MiB']],
  ['H2D / D2H 256 MiB pinned (GB/s)', ['h2d_pinned_256MiB', 'd2h_pinned_256MiB']],
  ['H2D / D2H 256 MiB pageable (GB/s)', ['h2d_pageable_256MiB', 'd2h_pageable_256MiB']],
  ['NVRTC compile, small kernel', ['nvrtc_compile_small']],
];

/** A time in its unit (ns → µs → ms) or a rate. */
function value(r: MeasuredRow): string {
  if (r.unit !== 'ns') return fmt(r.median);
  if (r.median >= 1e6) return `${fmt(r.median / 1e6)} ms`;
  if (r.median >= 1e3) return `${fmt(r.median / 1e3)} µs`;
  return `${fmt(r.median)} ns`;
}

/** The ratio to C: the median of per-repetition ratios where both ran interleaved, else of the medians. */
function ratio(r: MeasuredRow, c: MeasuredRow | undefined): string {
  if (!c) return '';
  const x = r.interleaved && c.interleaved ? ratioStats(r.reps, c.reps).median : r.median / c.median;
  return ` (${x.toFixed(2)}×)`;
}

/** The trivial-call row is the typed layer in every cuda-ts column (the objects layer has no such call). */
function implFor(impl: string, row: string): string {
  return row === 'cuCtxGetCurrent' ? impl.replace('cuda-ts-objects', 'cuda-ts-typed') : impl;
}

/** summary.md: `machine` names the GPU, driver and runtimes; `date` is YYYY-MM-DD. */
export function summaryTable(all: readonly ImplResult[], machine: string, date: string): string {
  const rowOf = (impl: string, row: string): MeasuredRow | undefined => {
    const r = all.find((x) => x.impl === impl && !x.skipped)?.rows?.[row];
    return isMeasured(r) ? r : undefined;
  };
  const cell = (impl: string, base: string | undefined, rows: string[]): string => {
    const parts = rows.map((row) => {
      const r = rowOf(implFor(impl, row), row);
      return r ? value(r) + (base && rows.length === 1 ? ratio(r, rowOf(base, row)) : '') : '';
    });
    return parts.every((p) => p === '') ? '' : parts.join(' / ');
  };
  const lines = [
    `One run of \`npm run bench\`: ${machine}, ${date}.`,
    '',
    `| operation | C | ${COLUMNS.map((c) => c[0]).join(' | ')} |`,
    `|${'---|'.repeat(COLUMNS.length + 2)}`,
    ...ROWS.map(
      ([label, rows]) =>
        `| ${label} | ${cell('native-c-inproc', undefined, rows) || cell('native-c', undefined, rows)} | ${COLUMNS.map(([, impl, base]) => cell(impl, base, rows)).join(' | ')} |`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
