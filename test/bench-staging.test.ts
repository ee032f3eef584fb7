// bench/staging.ts's crossover and bench/staging-report.ts's table and verdicts on synthetic rows (no GPU).
import type { ImplResult, MeasuredRow } from '../bench/common';
import { STAGING_SIZES, crossover, sizeLabel } from '../bench/staging';
import { stagingTable, stagingVerdicts } from '../bench/staging-report';

const row = (reps: number[]): MeasuredRow => ({ median: [...reps].sort((a, b) => a - b)[reps.length >> 1], unit: 'GB/s', n: 2, reps });

/** Rows where direct is `direct(size)` GB/s and staged `staged(size)`, five equal repetitions each. */
function rows(direct: (n: number) => number, staged: (n: number) => number): ImplResult['rows'] {
  const out: ImplResult['rows'] = {};
  for (const n of STAGING_SIZES) {
    for (const dir of ['h2d', 'd2h']) {
      out[`${dir}_${sizeLabel(n)}_direct`] = row(Array(5).fill(direct(n)));
      out[`${dir}_${sizeLabel(n)}_staged`] = row(Array(5).fill(staged(n)));
    }
  }
  return out;
}

test('sizes run from 64 KiB to 256 MiB and are labelled as the rows name them', () => {
  expect(STAGING_SIZES.map(sizeLabel)).toEqual(['64KiB', '128KiB', '256KiB', '512KiB', '1MiB', '2MiB', '4MiB', '8MiB', '16MiB', '32MiB', '64MiB', '128MiB', '256MiB']);
});

test('the crossover is the smallest size from which staged wins at every larger size', () => {
  // staged loses below 1 MiB
  expect(crossover(rows(() => 6, (n) => (n >= 1 << 20 ? 12 : 3)), 'h2d')).toBe(1 << 20);
  // a loss at 4 MiB moves the crossover above it, whatever happens below
  const r = rows(() => 6, (n) => (n === 4 << 20 ? 5 : 12));
  expect(crossover(r, 'h2d')).toBe(8 << 20);
  // staging never wins, or the largest size is missing
  expect(crossover(rows(() => 6, () => 5), 'd2h')).toBeUndefined();
  const missing = rows(() => 6, () => 12);
  delete missing.d2h_256MiB_staged;
  expect(crossover(missing, 'd2h')).toBeUndefined();
  expect(crossover(missing, 'h2d')).toBe(64 << 10);
});

test('verdicts: 1.5x the direct path per repetition, and the main table against CuPy', () => {
  const r = rows(() => 6.4, () => 6.4);
  r.h2d_256MiB_staged = row([10, 10.5, 11, 9.9, 10.2]); // ≥ 1.5 × 6.4 = 9.6 in every repetition
  r.d2h_256MiB_direct = row([10, 10, 10, 10, 10]);
  r.d2h_256MiB_staged = row([14, 16, 15, 16, 15.5]); // 1.4-1.6: crosses the target
  const staging: ImplResult = { impl: 'cuda-ts-staging', meta: {}, rows: r };
  const main: Record<string, number> = { 'cuda-ts-objects/h2d_pageable_256MiB': 10.4, 'cupy/h2d_pageable_256MiB': 7.2, 'cuda-ts-objects/d2h_pageable_256MiB': 14 };
  const v = stagingVerdicts(staging, (impl, name) => main[`${impl}/${name}`]);
  expect(v.map((x) => [x.row, x.verdict])).toEqual([
    ['h2d_256MiB', 'PASS'],
    ['d2h_256MiB', 'noisy'],
    ['h2d_pageable_256MiB', 'PASS'],
    ['d2h_pageable_256MiB', 'SKIP'],
  ]);
  expect(v[3].why).toBe('cupy has no d2h_pageable_256MiB');
  main['cupy/d2h_pageable_256MiB'] = 15;
  expect(stagingVerdicts(staging, (impl, name) => main[`${impl}/${name}`])[3].verdict).toBe('FAIL');
  expect(stagingVerdicts(undefined, () => undefined).map((x) => x.verdict)).toEqual(['SKIP', 'SKIP', 'SKIP', 'SKIP']);
});

test('the table has a line per size with CuPy beside, and names the crossover and the constant in force', () => {
  const staging: ImplResult = {
    impl: 'cuda-ts-staging',
    meta: { crossover: { h2d: 1 << 20, d2h: null }, settings: { minBytes: 1 << 20, chunkBytes: 8 << 20, maxChunks: 2 } },
    rows: rows(() => 6, () => 12),
  };
  const cupy: ImplResult = { impl: 'cupy-copies', meta: {}, rows: { h2d_64KiB: row([7.25, 7.25, 7.25]) } };
  const text = stagingTable(staging, cupy);
  const lines = text.split('\n');
  expect(lines.find((l) => l.startsWith('64KiB'))).toMatch(/^64KiB\s+6\.00\s+12\.00\s+2\.00x \[2\.00-2\.00\]\s+7\.25\s+6\.00\s+12\.00\s+2\.00x \[2\.00-2\.00\]\s+-$/);
  expect(lines.filter((l) => /^\d+(KiB|MiB) /.test(l))).toHaveLength(13);
  expect(text).toMatch(/crossover .*: H2D 1MiB, D2H none .*STAGING_MIN_BYTES = 1MiB in this run \(chunks 8MiB x 2\)/);
  expect(stagingTable({ impl: 'cuda-ts-staging', meta: {}, rows: {}, skipped: 'no GPU' }, undefined)).toBe('pageable copies by size: skipped (no GPU)');
});
