// Shared by the bench's processes: the result shape of bench/native/bench.c and the Python scripts,
//   {"impl": NAME, "meta": {...}, "rows": {"<row>": {"median", "unit", "n", "reps"} | {"skipped": why}}},
// the timing method (one untimed warm-up pass, then REPS timed passes, median of the per-pass values)
// and the text report's helpers.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const REPS = 5;
export const BATCH = 1000;
export const COPY_BYTES = 256 * 1024 * 1024;
export const ALLOC_BYTES = 1024 * 1024;

export type Unit = 'ns' | 'GB/s' | 'ms';
export interface MeasuredRow {
  median: number;
  unit: Unit;
  n: number;
  reps: number[];
  note?: string;
  /** True when measured interleaved with the other implementations (reps[k] ran next to their reps[k]). */
  interleaved?: boolean;
  /** Interleaved rows: per repetition, the values of its sub-blocks (reps[k] is their median). */
  blocks?: number[][];
  /** Interleaved rows: operations per sub-block. */
  block_ops?: number;
}
export interface SkippedRow {
  skipped: string;
}
export type Row = MeasuredRow | SkippedRow;
export interface ImplResult {
  impl: string;
  meta: Record<string, unknown>;
  rows: Record<string, Row>;
  skipped?: string;
}

export function isMeasured(r: Row | undefined): r is MeasuredRow {
  return !!r && typeof (r as MeasuredRow).median === 'number';
}

export const SCALE = Number(process.env.BENCH_SCALE ?? '1') > 0 ? Number(process.env.BENCH_SCALE ?? '1') : 1;

/** `base` ops scaled by BENCH_SCALE, rounded to a multiple of `multiple` (at least one multiple). */
export function scaled(base: number, multiple: number): number {
  return Math.max(Math.round((base * SCALE) / multiple) * multiple, multiple);
}

export function median(values: number[]): number {
  const t = [...values].sort((a, b) => a - b);
  const m = t.length >> 1;
  return t.length & 1 ? t[m] : 0.5 * (t[m - 1] + t[m]);
}

export function nowNs(): bigint {
  return process.hrtime.bigint(); // CLOCK_MONOTONIC on Linux
}

export const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;

/** A timed run's value in the row's unit: ns per op, GB/s (bytes / ns), or ms per op. */
export function unitValue(dtNs: number, ops: number, unit: Unit, bytesPerOp = 0): number {
  if (dtNs <= 0) dtNs = 1;
  return unit === 'GB/s' ? (bytesPerOp * ops) / dtNs : unit === 'ms' ? dtNs / 1e6 / ops : dtNs / ops;
}

export function summarize(reps: number[], unit: Unit, ops: number): MeasuredRow {
  return { median: round4(median(reps)), unit, n: ops, reps: reps.map(round4) };
}

/** Synchronous pass: warm-up once with warmOps, then `reps` timed passes of ops. */
export function measure(pass: (ops: number) => void, ops: number, warmOps: number, unit: Unit = 'ns', bytesPerOp = 0, reps = REPS): MeasuredRow {
  pass(warmOps);
  const out: number[] = [];
  for (let k = 0; k < reps; k++) {
    const t0 = nowNs();
    pass(ops);
    out.push(unitValue(Number(nowNs() - t0), ops, unit, bytesPerOp));
  }
  return summarize(out, unit, ops);
}

/** Same as measure() for passes that await. */
export async function measureAsync(
  pass: (ops: number) => Promise<void>,
  ops: number,
  warmOps: number,
  unit: Unit = 'ns',
  bytesPerOp = 0,
  reps = REPS,
): Promise<MeasuredRow> {
  await pass(warmOps);
  const out: number[] = [];
  for (let k = 0; k < reps; k++) {
    const t0 = nowNs();
    await pass(ops);
    out.push(unitValue(Number(nowNs() - t0), ops, unit, bytesPerOp));
  }
  return summarize(out, unit, ops);
}

export function reason(e: unknown): string {
  const text = e instanceof Error ? `${e.name === 'Error' ? '' : `${e.name}: `}${e.message}` : String(e);
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length < 400 ? one : `${one.slice(0, 400)}...`;
}

export function log(msg: string): void {
  process.stderr.write(`bench: ${msg}\n`);
}

/** Collects the rows of one implementation; a row that throws becomes {skipped}. */
export class Impl {
  readonly rows: Record<string, Row> = {};
  readonly meta: Record<string, unknown> = {};
  constructor(
    readonly name: string,
    private readonly deadline = Infinity,
  ) {}

  async row(name: string, thunk: () => MeasuredRow | Promise<MeasuredRow>): Promise<void> {
    if (this.rows[name]) return; // measured already (the interleaved phase of bench/gpu.ts)
    if (Date.now() > this.deadline) return this.skip(name, 'time budget used up before this row');
    try {
      const r = await thunk();
      this.rows[name] = r;
      log(`${this.name.padEnd(16)} ${name.padEnd(28)} ${r.median.toFixed(3).padStart(12)} ${r.unit}`);
    } catch (e) {
      this.skip(name, reason(e));
      if (process.env.BENCH_DEBUG) console.error(e);
    }
  }

  skip(name: string, why: string): void {
    this.rows[name] = { skipped: why };
    log(`${this.name.padEnd(16)} ${name.padEnd(28)} skipped: ${why}`);
  }

  result(): ImplResult {
    return { impl: this.name, meta: this.meta, rows: this.rows };
  }
}

export function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 1)}\n`);
}

export const BENCH_DIR = __dirname;
export const REPO_ROOT = join(__dirname, '..');
export const RESULTS_DIR = join(__dirname, 'results');

/** Where results go: $OUT (the GPU machine's collected folder) if set, else bench/results. */
export function resultsDir(): string {
  const out = process.env.OUT || RESULTS_DIR;
  if (!existsSync(out)) mkdirSync(out, { recursive: true });
  return out;
}

/** Fixed-width text table; the first `leftCols` columns are left-aligned. */
export function table(header: string[], rows: string[][], leftCols = 1): string {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i < leftCols ? (c ?? '').padEnd(w[i]) : (c ?? '').padStart(w[i])))
      .join('  ')
      .trimEnd();
  return [line(header), w.map((n) => '-'.repeat(n)).join('  '), ...rows.map(line)].join('\n');
}

export function fmt(x: number | undefined, digits = 1): string {
  if (x === undefined || !Number.isFinite(x)) return '-';
  if (Math.abs(x) >= 1000) return x.toFixed(0);
  if (Math.abs(x) >= 100) return x.toFixed(Math.min(digits, 1));
  return x.toFixed(Math.max(digits, 2));
}

/** First line of a reason, cut to n characters (bench.json keeps it whole). */
function short(text: string, n: number): string {
  const one = text.split(/ tried: |\n/)[0];
  return one.length <= n ? one : `${one.slice(0, n)}...`;
}

/** One target's verdict: every step's verdicts have this shape. */
export interface Verdict {
  target: string;
  row: string;
  judged: string;
  value?: string;
  verdict: 'PASS' | 'FAIL' | 'SKIP' | 'noisy';
  why?: string;
}

export function verdictTable(vs: readonly Verdict[]): string {
  const rows = vs.map((v) => [v.target, v.row, v.judged, v.value ?? '-', v.verdict + (v.why ? ` (${short(v.why, 160)})` : '')]);
  return table(['target', 'row', 'judged on', 'value', 'verdict'], rows, 5);
}

/** A cell of the results: an implementation's row, {skipped} for a skipped or absent implementation, undefined for a row it lacks. */
export type GetRow = (impl: string, row: string) => Row | undefined;

export function rowGetter(all: readonly ImplResult[]): GetRow {
  const byImpl = new Map(all.map((r) => [r.impl, r]));
  return (impl, row) => {
    const r = byImpl.get(impl);
    if (!r || r.skipped) return { skipped: r?.skipped ?? 'not run' };
    return r.rows?.[row];
  };
}

/** Numbered reasons for the skipped cells of a table: a cell says `skip[k]`, the lines under it say why. */
export class SkipNotes {
  private readonly notes = new Map<string, number>();
  cell(why: string): string {
    if (!this.notes.has(why)) this.notes.set(why, this.notes.size + 1);
    return `skip[${this.notes.get(why)}]`;
  }
  lines(): string[] {
    return this.notes.size ? ['skipped:', ...[...this.notes].map(([why, n]) => `  [${n}] ${short(why, 300)}`)] : [];
  }
}
