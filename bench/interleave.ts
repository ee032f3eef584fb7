// Interleaved measurement: every implementation's pass of a row runs once per repetition, in turn
// (A B C … A B C …; the order rotates each repetition), so that drift on a shared machine — clock
// changes, other tenants — lands on all implementations alike and shows as the spread of the
// per-repetition ratios instead of as a ratio. Verdicts use that spread: PASS when every repetition
// meets the target, FAIL when none does, "noisy" when the spread crosses it.
import { type MeasuredRow, type Unit, median, nowNs, summarize } from './common';

/** One implementation's pass of a row: runs `ops` operations. */
export type Pass = (ops: number) => void;

/** A row to measure: its passes by implementation, loop counts and unit. */
export interface InterleavedRow {
  name: string;
  ops: number;
  warm: number;
  unit: Unit;
  bytesPerOp?: number;
  passes: Record<string, Pass>;
}

/** What an implementation's pass threw, per row (the row is then skipped for it). */
export type Failures = Record<string, string>;

/**
 * Measures one row interleaved: one untimed warm-up pass per implementation, then `reps`
 * repetitions, each running every implementation's pass once.
 * @returns per implementation the row (reps in repetition order, so rep k of two implementations
 *   ran next to each other) or why it failed
 */
export function measureInterleaved(row: InterleavedRow, reps: number): Record<string, MeasuredRow | { skipped: string }> {
  const names = Object.keys(row.passes);
  const out: Record<string, MeasuredRow | { skipped: string }> = {};
  const alive = new Set<string>();
  for (const n of names) {
    try {
      row.passes[n](row.warm);
      alive.add(n);
    } catch (e) {
      out[n] = { skipped: (e as Error).message ?? String(e) };
    }
  }
  const values: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let k = 0; k < reps; k++) {
    const order = names.slice(k % names.length).concat(names.slice(0, k % names.length));
    for (const n of order) {
      if (!alive.has(n)) continue;
      try {
        const t0 = nowNs();
        row.passes[n](row.ops);
        let dt = Number(nowNs() - t0);
        if (dt <= 0) dt = 1;
        values[n].push(row.unit === 'GB/s' ? ((row.bytesPerOp ?? 0) * row.ops) / dt : row.unit === 'ms' ? dt / 1e6 / row.ops : dt / row.ops);
      } catch (e) {
        alive.delete(n);
        out[n] = { skipped: (e as Error).message ?? String(e) };
      }
    }
  }
  for (const n of alive) out[n] = summarize(values[n], row.unit, row.ops);
  return out;
}

/** Median and min–max of the per-repetition ratios a[k] / b[k]. */
export function ratioStats(a: number[], b: number[]): { median: number; min: number; max: number } {
  const n = Math.min(a.length, b.length);
  const r = Array.from({ length: n }, (_, k) => a[k] / b[k]);
  return { median: median(r), min: Math.min(...r), max: Math.max(...r) };
}

/**
 * A verdict from a spread: `lower` — the value must be ≤ target (times, ratios of times);
 * `higher` — ≥ target (bandwidth ratios).
 */
export function judge(value: number, spread: [number, number], target: number, better: 'lower' | 'higher'): 'PASS' | 'FAIL' | 'noisy' {
  const [lo, hi] = spread;
  if (better === 'lower') {
    if (hi <= target) return 'PASS';
    if (lo > target) return 'FAIL';
    return 'noisy';
  }
  if (lo >= target) return 'PASS';
  if (hi < target) return 'FAIL';
  void value;
  return 'noisy';
}
