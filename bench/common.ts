// Shared helpers for the TypeScript side of the benchmark suite (bench/cpu.ts, bench/gpu.ts,
// bench/run.ts). The JSON shape and the method are the ones of bench/native/bench.c and
// bench/python/bench_cuda_python.py:
//   {"impl": NAME, "meta": {...}, "rows": {"<row>": {"median", "unit", "n", "reps"} | {"skipped": why}}}
//   one untimed warm-up pass, then REPS (5) timed passes, each timed around the whole pass;
//   rep value = pass_ns / ops ("ns"), bytes / pass_ns ("GB/s"), pass_ms / ops ("ms"); median of the reps.
// Rows measured interleaved with other implementations (bench/interleave.ts) split each repetition
// into sub-blocks and take the median of those as the repetition's value (`blocks` keeps them).
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

export const SCALE = (() => {
  const v = Number(process.env.BENCH_SCALE ?? '1');
  return v > 0 ? v : 1;
})();

/** `base` ops scaled by BENCH_SCALE, rounded to a multiple of `multiple` (at least one multiple). */
export function scaled(base: number, multiple: number): number {
  const n = Math.round((base * SCALE) / multiple) * multiple;
  return Math.max(n, multiple);
}

export function median(values: number[]): number {
  const t = [...values].sort((a, b) => a - b);
  const m = t.length >> 1;
  return t.length & 1 ? t[m] : 0.5 * (t[m - 1] + t[m]);
}

export function nowNs(): bigint {
  return process.hrtime.bigint(); // CLOCK_MONOTONIC on Linux
}

function round4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

function repValue(dtNs: number, ops: number, unit: Unit, bytesPerOp: number): number {
  if (dtNs <= 0) dtNs = 1;
  if (unit === 'GB/s') return (bytesPerOp * ops) / dtNs;
  if (unit === 'ms') return dtNs / 1e6 / ops;
  return dtNs / ops;
}

export function summarize(reps: number[], unit: Unit, ops: number): MeasuredRow {
  return { median: round4(median(reps)), unit, n: ops, reps: reps.map(round4) };
}

/** Synchronous pass: warm-up once with warmOps, then REPS timed passes of ops. */
export function measure(pass: (ops: number) => void, ops: number, warmOps: number, unit: Unit = 'ns', bytesPerOp = 0, reps = REPS): MeasuredRow {
  pass(warmOps);
  const out: number[] = [];
  for (let k = 0; k < reps; k++) {
    const t0 = nowNs();
    pass(ops);
    out.push(repValue(Number(nowNs() - t0), ops, unit, bytesPerOp));
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
    out.push(repValue(Number(nowNs() - t0), ops, unit, bytesPerOp));
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
    if (Date.now() > this.deadline) {
      this.skip(name, 'time budget used up before this row');
      return;
    }
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
  const out = process.env.OUT;
  if (out) {
    if (!existsSync(out)) mkdirSync(out, { recursive: true });
    return out;
  }
  return RESULTS_DIR;
}

/** Fixed-width text table. */
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
