// Interleaved measurement: every implementation of a row runs in the same repetitions, in turn, so
// that drift on a shared machine — clock changes, other tenants — lands on all implementations alike
// and shows as the spread of the per-repetition ratios instead of as a ratio. Verdicts judge the
// median of those ratios by its distribution-free 95% confidence interval (order statistics, see
// medianInterval): PASS when the whole interval meets the target, FAIL when none of it does, "noisy"
// when it crosses. Up to 8 repetitions that interval is their min-max (every repetition must meet
// the target for a PASS); with more it is narrower, so more repetitions sharpen a verdict instead of
// making "noisy" likelier, as a min-max rule would.
//
// A repetition is robust to one disturbance: each implementation's work of a repetition (`ops`) is
// split into BLOCKS short sub-blocks, run interleaved with the other implementations' sub-blocks
// (A B C, B C A, C A B, …: the order rotates every sub-block), and the repetition's value for an
// implementation is the MEDIAN of its sub-blocks. A preemption, a GC pause or a frequency step hits
// one sub-block of one implementation; the median drops it, so it cannot move that repetition's
// value, and so it cannot set the min–max of the per-repetition ratios. The total work measured per
// row stays `reps × ops` per implementation (BENCH_BLOCKS=1 gives back one pass per repetition).
import { type MeasuredRow, type Unit, median, nowNs } from './common';

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

/** What an implementation's pass threw, per row (the row is then skipped for it). */
export type Failures = Record<string, string>;

/** An interleaved row of one implementation: reps[k] is the median of blocks[k]. */
export interface InterleavedMeasuredRow extends MeasuredRow {
  interleaved: true;
  /** Per repetition, the value of each of its sub-blocks (in the row's unit). */
  blocks: number[][];
  /** Operations per sub-block. */
  block_ops: number;
}

/**
 * How a repetition's `ops` splits into sub-blocks of a multiple of `granule`: `blocks` sub-blocks
 * of about ops / blocks each; where the row has fewer granules than that (two 256 MiB copies), one
 * granule per sub-block and at least three sub-blocks, so that the median still drops an outlier.
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

/** A repetition's value from its sub-blocks: their median (one outlier sub-block cannot move it). */
export function repetitionValue(blockValues: number[]): number {
  return median(blockValues);
}

function round4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

/** A timed run's value in the row's unit: ns per op, GB/s (bytes / ns), or ms per op. */
export function unitValue(dtNs: number, ops: number, unit: Unit, bytesPerOp = 0): number {
  if (dtNs <= 0) dtNs = 1;
  return unit === 'GB/s' ? (bytesPerOp * ops) / dtNs : unit === 'ms' ? dtNs / 1e6 / ops : dtNs / ops;
}

/**
 * Measures one row interleaved: one untimed warm-up pass per implementation, then `reps`
 * repetitions; in each, every implementation runs its sub-blocks (see {@link blockPlan}), the
 * implementations taking turns sub-block by sub-block in rotating order.
 * @param clock the time source (ns; injectable for tests)
 * @returns per implementation the row (reps in repetition order, so rep k of two implementations
 *   ran in the same stretch of time) or why it failed
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
          const dt = Number(clock() - t0);
          blocks[n][k].push(unitValue(dt, plan.opsPerBlock, row.unit, row.bytesPerOp));
        } catch (e) {
          alive.delete(n);
          out[n] = { skipped: (e as Error).message ?? String(e) };
        }
      }
    }
  }
  for (const n of alive) {
    const values = blocks[n].map(repetitionValue);
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

/** The per-repetition ratios of two interleaved rows, summed up. */
export interface RatioStats {
  median: number;
  min: number;
  max: number;
  /** The median's 95% confidence interval (see {@link medianInterval}); min-max up to 8 repetitions. */
  lo: number;
  hi: number;
  /** Repetitions. */
  n: number;
}

/** Median, min–max and the median's 95% interval of the per-repetition ratios a[k] / b[k]. */
export function ratioStats(a: number[], b: number[]): RatioStats {
  const n = Math.min(a.length, b.length);
  const r = Array.from({ length: n }, (_, k) => a[k] / b[k]);
  return { median: median(r), min: Math.min(...r), max: Math.max(...r), ...medianInterval(r), n };
}

/**
 * How much slower than the run's quiet floor C may run in a repetition that still counts as quiet. On
 * the H200 machine every core alternates, for seconds at a time, between a quiet state and one where
 * something outside the VM shares it: C's own `cuCtxGetCurrent` then takes 10-13 ns instead of 7 (and a
 * plain pointer chase in C 35% longer), and the JS columns slow more than C does (docs/runtimes.md).
 * 1.3 admits the intermediate level seen (8.4-8.9 ns) and none of the contended one.
 */
export const QUIET_SLACK = 1.3;
/** The fewest quiet repetitions a verdict on quiet repetitions needs; with fewer it judges every repetition. */
export const MIN_QUIET_REPS = 6;

/**
 * A row's quiet floor in one run: the 10th percentile of C's repetitions over every process that
 * timed it (a process that was contended throughout cannot lower it; one quiet process sets it).
 */
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
  const q = keep.length
    ? ratioStats(
        keep.map((k) => a[k]),
        keep.map((k) => b[k]),
      )
    : { median: NaN, min: NaN, max: NaN, lo: NaN, hi: NaN, n: 0 };
  return { ...q, quiet: keep.length, of: n };
}

/** The confidence of the interval that verdicts judge. */
export const VERDICT_CONFIDENCE = 0.95;

/**
 * A distribution-free confidence interval of the median of `values`: the order statistics x(k) and
 * x(n+1-k) for the largest k whose coverage, 1 - 2·P(Binomial(n, 1/2) < k), is at least `level`
 * (at least k = 1: min-max, whose coverage is under 95% below 6 values). For 95%: min-max up to 8
 * values, the 2nd smallest and largest of 9-11, the 6th of 21.
 */
export function medianInterval(values: readonly number[], level = VERDICT_CONFIDENCE): { lo: number; hi: number } {
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
  return judge(q.median, [q.lo, q.hi], target, better);
}

/** "1.234x [lo-hi]", the median's interval, with the min-max where the interval is narrower. */
export function ratioWords(q: RatioStats, digits = 3): string {
  const f = (v: number) => v.toFixed(digits);
  const spread = q.lo === q.min && q.hi === q.max ? '' : `; ${q.n} reps, min-max ${f(q.min)}-${f(q.max)}`;
  return `${f(q.median)}x [${f(q.lo)}-${f(q.hi)}${spread}]`;
}

/**
 * A verdict from an interval (the median's, {@link judgeRatios}): `lower` — the value must be ≤ target
 * (times, ratios of times); `higher` — ≥ target (bandwidth ratios).
 */
export function judge(value: number, spread: [number, number], target: number, better: 'lower' | 'higher'): 'PASS' | 'FAIL' | 'noisy' {
  const [lo, hi] = spread;
  void value;
  if (better === 'lower') {
    if (hi <= target) return 'PASS';
    if (lo > target) return 'FAIL';
    return 'noisy';
  }
  if (lo >= target) return 'PASS';
  if (hi < target) return 'FAIL';
  return 'noisy';
}

/** What a repetition is, in words, for table headers. */
export function repetitionWords(reps: number, blocks = BLOCKS): string {
  return blocks > 1
    ? `${reps} repetitions; in each, every implementation's work is split into ${blocks} sub-blocks run interleaved with the others' (A B C, B C A, …; the order rotates every sub-block) and the repetition's value is the median of its sub-blocks`
    : `${reps} repetitions; in each, every implementation runs one pass, interleaved with the others' (A B C …; the order rotates every repetition)`;
}
