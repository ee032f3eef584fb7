// bench/staging.ts's crossover and recommendation and bench/staging-report.ts's tables and verdicts on
// synthetic rows (no GPU).
import type { ImplResult, MeasuredRow } from '../bench/common';
import { CHUNK_SWEEP, STAGING_SIZES, THREAD_SWEEP, adviceLiteral, adviseThreads, crossover, fastest, recommend, sizeLabel } from '../bench/staging';
import { stagingTable, stagingVerdicts } from '../bench/staging-report';

const MiB = 1 << 20;
const row = (reps: number[]): MeasuredRow => ({ median: [...reps].sort((a, b) => a - b)[reps.length >> 1], unit: 'GB/s', n: 2, reps });
const flat = (x: number) => row(Array(5).fill(x));

/** Rows where direct is `direct(size)` GB/s and `<suffix>` `staged(size)`, five equal repetitions each. */
function rows(direct: (n: number) => number, staged: (n: number) => number, suffix = 'staged'): ImplResult['rows'] {
  const out: ImplResult['rows'] = {};
  for (const n of STAGING_SIZES) {
    for (const dir of ['h2d', 'd2h']) {
      out[`${dir}_${sizeLabel(n)}_direct`] = flat(direct(n));
      out[`${dir}_${sizeLabel(n)}_${suffix}`] = flat(staged(n));
    }
  }
  return out;
}

/** Rows of every mode the bench measures: staged with t threads is `staged(dir, size, t)`. */
function allModes(direct: (dir: string, n: number) => number, staged: (dir: string, n: number, t: number) => number): ImplResult['rows'] {
  const out: ImplResult['rows'] = {};
  for (const n of STAGING_SIZES) {
    for (const dir of ['h2d', 'd2h']) {
      out[`${dir}_${sizeLabel(n)}_direct`] = flat(direct(dir, n));
      for (const t of THREAD_SWEEP) out[`${dir}_${sizeLabel(n)}_staged_t${t}`] = flat(staged(dir, n, t));
    }
  }
  return out;
}

test('sizes run from 1 MiB to 256 MiB and are labelled as the rows name them', () => {
  expect(STAGING_SIZES.map(sizeLabel)).toEqual(['1MiB', '2MiB', '4MiB', '8MiB', '16MiB', '32MiB', '64MiB', '128MiB', '256MiB']);
  expect(sizeLabel(64 << 10)).toBe('64KiB');
  expect(THREAD_SWEEP).toEqual([0, 2, 4, 8]);
});

test('the crossover is the smallest size from which staged wins (by the margin) at every larger size', () => {
  // staged loses below 4 MiB
  expect(
    crossover(
      rows(
        () => 6,
        (n) => (n >= 4 * MiB ? 12 : 3),
      ),
      'h2d',
    ),
  ).toBe(4 * MiB);
  // a loss at 16 MiB moves the crossover above it, whatever happens below
  expect(
    crossover(
      rows(
        () => 6,
        (n) => (n === 16 * MiB ? 5 : 12),
      ),
      'h2d',
    ),
  ).toBe(32 * MiB);
  // staging never wins, or the largest size is missing
  expect(
    crossover(
      rows(
        () => 6,
        () => 5,
      ),
      'd2h',
    ),
  ).toBeUndefined();
  const missing = rows(
    () => 6,
    () => 12,
  );
  delete missing.d2h_256MiB_staged;
  expect(crossover(missing, 'd2h')).toBeUndefined();
  expect(crossover(missing, 'h2d')).toBe(MiB);
  // a margin: 6.2 beats 6 but not by 5 %; another row suffix
  const near = rows(
    () => 6,
    (n) => (n >= 64 * MiB ? 6.5 : 6.2),
    'staged_t4',
  );
  expect(crossover(near, 'h2d', STAGING_SIZES, 'staged_t4')).toBe(MiB);
  expect(crossover(near, 'h2d', STAGING_SIZES, 'staged_t4', 1.05)).toBe(64 * MiB);
});

test('fastest: the best median, the preferred or the first value within 3 % of it', () => {
  const r = { a1: flat(10), a2: flat(10.2), a4: flat(13), a8: flat(13.2), b1: flat(5) };
  expect(fastest(r, [1, 2, 4, 8], (v) => `a${v}`)).toBe(4);
  expect(fastest(r, [1, 2, 4, 8], (v) => `a${v}`, 8)).toBe(8);
  expect(fastest(r, [1, 2], (v) => `a${v}`)).toBe(1);
  expect(fastest(r, [1, 3], (v) => `b${v}`)).toBe(1);
  expect(fastest(r, [3, 5], (v) => `b${v}`)).toBeUndefined();
});

test('the recommendation: threads per direction, the crossover with them, one chunk size, as the STAGING_DEFAULTS literal', () => {
  // uploads: direct 7, staged grows with threads up to 4 (8 no better), wins from 8 MiB with 4;
  // downloads: direct 16, staged at most 14: never
  const r = allModes(
    (dir) => (dir === 'h2d' ? 7 : 16),
    (dir, n, t) => (dir === 'h2d' ? (n >= 8 * MiB ? 8 + Math.min(t, 4) * 2 : 6) : 8 + Math.min(t, 4) * 1.5),
  );
  expect([adviseThreads(r, 'h2d'), adviseThreads(r, 'd2h')]).toEqual([4, 4]);
  for (const c of CHUNK_SWEEP) r[`h2d_256MiB_chunk${sizeLabel(c)}`] = flat(c === 16 * MiB ? 17 : c === 8 * MiB ? 16.8 : 15);
  const a = recommend(r, 8 * MiB);
  expect(a).toEqual({ upload: { minBytes: 8 * MiB, hostThreads: 4 }, download: { minBytes: null, hostThreads: 4 }, chunkBytes: 8 * MiB, chunksPerCopy: 2 });
  r.h2d_256MiB_perCopy3 = flat(17); // within 3 % of two chunks per copy (16.8): two stay
  r.h2d_256MiB_perCopy4 = flat(16);
  expect(recommend(r, 8 * MiB).chunksPerCopy).toBe(2);
  expect(adviceLiteral(a, 2, 8 * MiB)).toBe(
    'STAGING_DEFAULTS = { upload: { minBytes: 8 << 20, hostThreads: 4 }, download: { minBytes: Infinity, hostThreads: 4 }, chunkBytes: 8 << 20, maxChunks: 2, chunksPerCopy: 2 }',
  );
  r.h2d_256MiB_perCopy4 = flat(19); // clearly faster: four, and the bound rises with it
  r.h2d_256MiB_chunk16MiB = flat(20); // now clearly faster than the default chunk
  const b = recommend(r, 8 * MiB);
  expect([b.chunkBytes, b.chunksPerCopy]).toEqual([16 * MiB, 4]);
  expect(adviceLiteral(b, 2, 8 * MiB)).toMatch(/chunkBytes: 16 << 20, maxChunks: 4, chunksPerCopy: 4 \}$/);
  // no chunk rows (nothing staged, or the sweep failed): chunkBytes null, the literal keeps the default
  const none = recommend(
    allModes(
      () => 20,
      () => 10,
    ),
    8 * MiB,
  );
  expect(none).toEqual({ upload: { minBytes: null, hostThreads: 0 }, download: { minBytes: null, hostThreads: 0 }, chunkBytes: null, chunksPerCopy: null });
  expect(adviceLiteral(none, 2, 4 * MiB)).toMatch(/chunkBytes: 4 << 20/);
});

test('verdicts: 1.5x the direct path per repetition, and the main table against CuPy', () => {
  const r = rows(
    () => 6.4,
    () => 6.4,
  );
  r.h2d_256MiB_staged = row([10, 10.5, 11, 9.9, 10.2]); // ≥ 1.5 × 6.4 = 9.6 in every repetition
  r.d2h_256MiB_direct = row([10, 10, 10, 10, 10]);
  r.d2h_256MiB_staged = row([14, 16, 15, 16, 15.5]); // 1.4-1.6: crosses the target
  const staging: ImplResult = { impl: 'cuda-ts-staging', meta: {}, rows: r };
  const main: Record<string, number> = {
    'cuda-ts-objects/h2d_pageable_256MiB': 10.4,
    'cupy/h2d_pageable_256MiB': 7.2,
    'cuda-ts-objects/d2h_pageable_256MiB': 14,
  };
  const v = stagingVerdicts(staging, (impl, name) => main[`${impl}/${name}`]);
  expect(v.slice(0, 4).map((x) => [x.row, x.verdict])).toEqual([
    ['h2d_256MiB', 'PASS'],
    ['d2h_256MiB', 'noisy'],
    ['h2d_pageable_256MiB', 'PASS'],
    ['d2h_pageable_256MiB', 'SKIP'],
  ]);
  expect(v[3].why).toBe('cupy has no d2h_pageable_256MiB');
  main['cupy/d2h_pageable_256MiB'] = 15;
  expect(stagingVerdicts(staging, (impl, name) => main[`${impl}/${name}`])[3].verdict).toBe('FAIL');
  expect(stagingVerdicts(undefined, () => undefined).map((x) => x.verdict)).toEqual(Array(8).fill('SKIP'));
});

test("verdicts on the recommended defaults: their row (staged with the threads, or direct) against CuPy's same run and 1.5x the issue's rows", () => {
  const r = allModes(
    (dir) => (dir === 'h2d' ? 7 : 16),
    (dir, _n, t) => (dir === 'h2d' ? 8 + t : 12),
  );
  const staging: ImplResult = {
    impl: 'cuda-ts-staging',
    meta: {
      recommended: { upload: { minBytes: 8 * MiB, hostThreads: 4 }, download: { minBytes: null, hostThreads: 2 }, chunkBytes: null, chunksPerCopy: null },
      cupy256: { h2d: flat(9.35), d2h: flat(17.7) },
    },
    rows: r,
  };
  const v = stagingVerdicts(staging, () => undefined).slice(4);
  expect(v.map((x) => [x.row, x.verdict, x.value])).toEqual([
    ['h2d_256MiB_staged_t4', 'PASS', '1.283x (medians; 12.00 vs 9.35 GB/s)'],
    ['h2d_256MiB_staged_t4', 'PASS', '12.00 GB/s vs 9.60'],
    ['d2h_256MiB_direct', 'FAIL', '0.904x (medians; 16.00 vs 17.70 GB/s)'],
    ['d2h_256MiB_direct', 'PASS', '16.00 GB/s vs 14.92'],
  ]);
  expect(v[3].target).toBe("pageable D2H 256 MiB, recommended defaults: ≥ 1.5× the issue's 9.95 GB/s");
  delete (staging.meta as { cupy256?: unknown }).cupy256;
  expect(
    stagingVerdicts(staging, () => undefined)
      .slice(4)
      .map((x) => x.verdict),
  ).toEqual(['SKIP', 'PASS', 'SKIP', 'PASS']);
});

test('the tables: a line per size and direction with every thread count and CuPy beside; the crossover, settings and recommendation under them', () => {
  const r = allModes(
    () => 6,
    (_d, _n, t) => 8 + t,
  );
  for (const n of STAGING_SIZES) for (const dir of ['h2d', 'd2h']) r[`${dir}_${sizeLabel(n)}_staged`] = r[`${dir}_${sizeLabel(n)}_staged_t4`];
  const staging: ImplResult = {
    impl: 'cuda-ts-staging',
    meta: {
      crossover: { h2d: MiB, d2h: null },
      settings: { upload: { minBytes: 128 * MiB, hostThreads: 3 }, download: { minBytes: Infinity, hostThreads: 3 }, chunkBytes: 8 * MiB, maxChunks: 2 },
      recommended: { upload: { minBytes: MiB, hostThreads: 4 }, download: { minBytes: null, hostThreads: 4 }, chunkBytes: 8 * MiB },
      recommendedLiteral: 'STAGING_DEFAULTS = { … }',
    },
    rows: r,
  };
  const cupy: ImplResult = { impl: 'cupy-copies', meta: {}, rows: { h2d_1MiB: row([7.25, 7.25, 7.25]) } };
  const text = stagingTable(staging, cupy);
  const lines = text.split('\n');
  expect(lines.filter((l) => l.startsWith('1MiB '))).toHaveLength(2);
  expect(lines.find((l) => l.startsWith('1MiB'))).toMatch(/^1MiB\s+6\.00\s+8\.00\s+10\.00\s+12\.00\s+16\.00\s+2\.00x \[2\.00-2\.00\]\s+7\.25$/);
  expect(lines.filter((l) => /^\d+MiB /.test(l))).toHaveLength(2 * STAGING_SIZES.length);
  expect(text).toMatch(
    /crossover .*: H2D 1MiB, D2H none .*; in force this run: uploads from 128MiB, 3 threads, downloads never, 3 threads, chunks 8MiB x 2, 2 per copy/,
  );
  expect(text).toMatch(/recommended: STAGING_DEFAULTS = \{ … \}/);
  expect(stagingTable({ impl: 'cuda-ts-staging', meta: {}, rows: {}, skipped: 'no GPU' }, undefined)).toBe('pageable copies by size: skipped (no GPU)');
});
