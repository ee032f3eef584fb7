// Interleaved measurement: every implementation of a row runs in the same repetitions, in turn, so drift
// on a shared machine (clock, other tenants) lands on all alike and shows as the spread of the
// per-repetition ratios, not as a ratio. Each repetition's work is split into sub-blocks taken in
// rotating order (A B C, B C A, …) and the repetition's value is the median of its sub-blocks, so one
// preemption or GC pause cannot move it. Verdicts judge the median ratio by its distribution-free 95%
// interval (min-max up to 8 repetitions, narrower with more), so more repetitions sharpen a verdict.
import { type GetRow, type MeasuredRow, type Unit, type Verdict, isMeasured, median, nowNs, round4, unitValue } from './common';

/** One implementation's pass of a row: runs `ops` operations. */
export type Pass = (ops: number) => void;

/** Sub-blocks per repetition (BENCH_BLOCKS, default 5). */
export const BLOCKS = Math.max(1, Number(process.env.BENCH_BLOCKS ?? 5) | 0 || 5);

/** A row to measure: its passes by implementation, loop counts and unit. */
export interface InterleavedRow {
  name: string;
  /** Operations per implementation per repetition (split over the sub-blocks). */
  ops: number;
  /** Operations of the one untimed warm-up pass per implementation. */
  warm: number;
  unit: Unit;
  bytesPerOp?: number;
  /** A sub-block's ops are a multiple of this (BATCH for rows that synchronize every BATCH ops). Default 1. */
  granule?: number;
  /** Sub-blocks per repetition (default BLOCKS). */
  blocks?: number;
  passes: Record<string, Pass>;
}

/** An interleaved row of one implementation: reps[k] is the median of blocks[k]. */
export interface InterleavedMeasuredRow extends MeasuredRow {
  interleaved: true;
  blocks: number[][];
  block_ops: number;
}

/**
 * How a repetition's `ops` splits into sub-blocks of a multiple of `granule`; where the row has fewer
 * granules than `blocks` (two 256 MiB copies), one granule per sub-block and at least three, so that
 * the median still drops an outlier.
 */
export function blockPlan(ops: number, granule = 1, blocks = BLOCKS): { blocks: number; opsPerBlock: number } {
  const g = Math.max(1, Math.round(granule));
  const b = Math.max(1, Math.round(blocks));
  const units = Math.max(1, Math.round(ops / g));
  if (units >= b) return { blocks: b, opsPerBlock: Math.round(units / b) * g };
  return { blocks: Math.min(b, Math.max(units, 3)), opsPerBlock: g };
}

/** The order of the implementations for sub-block number `s` (counted over the whole row): `names` rotated left by s. */
export function rotation<T>(names: readonly T[], s: number): T[] {
  const k = names.length ? s % names.length : 0;
  return names.slice(k).concat(names.slice(0, k));
}

/**
 * Measures one row interleaved: one untimed warm-up pass per implementation, then `reps` repetitions of
 * sub-blocks in rotating order. Per implementation the row (rep k of two implementations ran in the
 * same stretch of time) or why its pass threw. `clock` is injectable for tests.
 */
export function measureInterleaved(
  row: InterleavedRow,
  reps: number,
  clock: () => bigint = nowNs,
): Record<string, InterleavedMeasuredRow | { skipped: string }> {
  const names = Object.keys(row.passes);
  const out: Record<string, InterleavedMeasuredRow | { skipped: string }> = {};
  const alive = new Set<string>();
  for (const n of names) {
    try {
      row.passes[n](row.warm);
      alive.add(n);
    } catch (e) {
      out[n] = { skipped: (e as Error).message ?? String(e) };
    }
  }
  const plan = blockPlan(row.ops, row.granule ?? 1, row.blocks ?? BLOCKS);
  const blocks: Record<string, number[][]> = Object.fromEntries(names.map((n) => [n, []]));
  let s = 0;
  for (let k = 0; k < reps; k++) {
    for (const n of names) blocks[n].push([]);
    for (let j = 0; j < plan.blocks; j++, s++) {
      for (const n of rotation(names, s)) {
        if (!alive.has(n)) continue;
        try {
          const t0 = clock();
          row.passes[n](plan.opsPerBlock);
          blocks[n][k].push(unitValue(Number(clock() - t0), plan.opsPerBlock, row.unit, row.bytesPerOp));
        } catch (e) {
          alive.delete(n);
          out[n] = { skipped: (e as Error).message ?? String(e) };
        }
      }
    }
  }
  for (const n of alive) {
    const values = blocks[n].map(median);
    out[n] = {
      median: round4(median(values)),
      unit: row.unit,
      n: plan.blocks * plan.opsPerBlock,
      reps: values.map(round4),
      interleaved: true,
      blocks: blocks[n].map((b) => b.map(round4)),
      block_ops: plan.opsPerBlock,
    };
  }
  return out;
}

/** The per-repetition ratios of two interleaved rows: median, min-max, the median's 95% interval (lo-hi), repetitions. */
export interface RatioStats {
  median: number;
  min: number;
  max: number;
  lo: number;
  hi: number;
  n: number;
}

/** Median, min–max and the median's 95% interval of the per-repetition ratios a[k] / b[k]. */
export function ratioStats(a: number[], b: number[]): RatioStats {
  const n = Math.min(a.length, b.length);
  const r = Array.from({ length: n }, (_, k) => a[k] / b[k]);
  return { median: median(r), min: Math.min(...r), max: Math.max(...r), ...medianInterval(r), n };
}

/**
 * How much slower than the run's quiet floor C may run in a repetition that still counts as quiet: on
 * the H200 machine a core alternates for seconds between quiet and shared (C's `cuCtxGetCurrent` 7 ns,
 * then 10-13 ns, the JS columns slowing more); 1.3 admits the intermediate level seen and none of the contended one.
 */
export const QUIET_SLACK = 1.3;
/** The fewest quiet repetitions a verdict on quiet repetitions needs; with fewer it judges every repetition. */
export const MIN_QUIET_REPS = 6;

/** A row's quiet floor in one run: the 10th percentile of C's repetitions over every process that timed it. */
export function quietFloor(cReps: readonly (readonly number[])[]): number {
  const all = cReps
    .flat()
    .filter((v) => Number.isFinite(v) && v > 0)
    .sort((p, q) => p - q);
  return all.length ? all[Math.floor((all.length - 1) * 0.1)] : NaN;
}

/** {@link ratioStats} of a[k] / b[k] over the repetitions where b (C) ran within `slack` × `floor`, and how many those were. */
export function quietRatioStats(a: number[], b: number[], floor: number, slack = QUIET_SLACK): RatioStats & { quiet: number; of: number } {
  const n = Math.min(a.length, b.length);
  const keep = Array.from({ length: n }, (_, k) => k).filter((k) => b[k] <= floor * slack);
  const none = { median: NaN, min: NaN, max: NaN, lo: NaN, hi: NaN, n: 0 };
  const q = keep.length
    ? ratioStats(
        keep.map((k) => a[k]),
        keep.map((k) => b[k]),
      )
    : none;
  return { ...q, quiet: keep.length, of: n };
}

/**
 * A distribution-free confidence interval of the median: the order statistics x(k) and x(n+1-k) for the
 * largest k whose coverage, 1 - 2·P(Binomial(n, 1/2) < k), is at least `level` (at least k = 1: min-max).
 */
export function medianInterval(values: readonly number[], level = 0.95): { lo: number; hi: number } {
  const x = [...values].sort((p, q) => p - q);
  const n = x.length;
  if (!n) return { lo: NaN, hi: NaN };
  let k = 1;
  let p = 2 ** -n; // P(Binomial(n, 1/2) = k - 1)
  let cdf = p; // P(Binomial(n, 1/2) < k)
  while (k + 1 <= (n + 1) / 2) {
    const next = (p * (n - k + 1)) / k; // P(Binomial(n, 1/2) = k)
    if (1 - 2 * (cdf + next) < level) break;
    k++;
    p = next;
    cdf += next;
  }
  return { lo: x[k - 1], hi: x[n - k] };
}

/** A verdict on per-repetition ratios: {@link judge} on the median's 95% interval. */
export function judgeRatios(q: RatioStats, target: number, better: 'lower' | 'higher'): 'PASS' | 'FAIL' | 'noisy' {
  return judge([q.lo, q.hi], target, better);
}

/** "1.234x [lo-hi]", the median's interval, with the min-max where the interval is narrower. */
export function ratioWords(q: RatioStats, digits = 3): string {
  const f = (v: number) => v.toFixed(digits);
  const spread = q.lo === q.min && q.hi === q.max ? '' : `; ${q.n} reps, min-max ${f(q.min)}-${f(q.max)}`;
  return `${f(q.median)}x [${f(q.lo)}-${f(q.hi)}${spread}]`;
}

/** PASS when all of `[lo, hi]` meets the target (`lower`: ≤ it, `higher`: ≥ it), FAIL when none does, else noisy. */
export function judge([lo, hi]: [number, number], target: number, better: 'lower' | 'higher'): 'PASS' | 'FAIL' | 'noisy' {
  const [meets, misses] = better === 'lower' ? [hi <= target, lo > target] : [lo >= target, hi < target];
  return meets ? 'PASS' : misses ? 'FAIL' : 'noisy';
}

/** What a repetition is, in words, for table headers. */
export function repetitionWords(reps: number, blocks = BLOCKS): string {
  return blocks > 1
    ? `${reps} repetitions; in each, every implementation's work is split into ${blocks} sub-blocks run interleaved with the others' (A B C, B C A, …; the order rotates every sub-block) and the repetition's value is the median of its sub-blocks`
    : `${reps} repetitions; in each, every implementation runs one pass, interleaved with the others' (A B C …; the order rotates every repetition)`;
}

/** `value` against `base`: per-repetition ratios where both ran interleaved, else the ratio of medians. */
export function ratioOf(value: MeasuredRow, base: MeasuredRow): RatioStats & { interleaved: boolean } {
  if (value.interleaved && base.interleaved && value.reps.length && base.reps.length) return { ...ratioStats(value.reps, base.reps), interleaved: true };
  const r = value.median / base.median;
  return { median: r, min: r, max: r, lo: r, hi: r, n: 1, interleaved: false };
}

/** A ratio target: `impl`'s row against `base`'s ≤ (or, `higher`, ≥) `limit`; `extra` may fail a value that meets it. */
export interface RatioTarget {
  target: string;
  row: string;
  impl: string;
  base: string;
  limit: number;
  better?: 'lower' | 'higher';
  extra?: (value: number) => string | undefined;
}

/** The verdict of a ratio target on the results (SKIP, naming the missing side, where one is not measured). */
export function judgeRatio(get: GetRow, t: RatioTarget): Verdict {
  const [v, b] = [get(t.impl, t.row), get(t.base, t.row)];
  const judged = `${t.impl} vs ${t.base}`;
  if (!isMeasured(v) || !isMeasured(b)) {
    const [name, r] = !isMeasured(v) ? [t.impl, v] : [t.base, b];
    const why = `${name} has no ${t.row}${r && !isMeasured(r) ? `: ${r.skipped}` : ''}`;
    return { target: t.target, row: t.row, judged, verdict: 'SKIP', why };
  }
  const q = ratioOf(v, b);
  const better = t.better ?? 'lower';
  const bad = t.extra?.(v.median);
  const met = q.interleaved ? judgeRatios(q, t.limit, better) : judge([q.median, q.median], t.limit, better);
  const value = q.interleaved ? ratioWords(q) : `${q.median.toFixed(3)}x (medians; not interleaved)`;
  return { target: t.target, row: t.row, judged, value, verdict: bad ? 'FAIL' : met, why: bad };
}
