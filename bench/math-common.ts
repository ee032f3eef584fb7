// What the math step's benches share (bench/math-blas.ts, math-fft-rand.ts, math-sparse.ts): each builds
// bench/native/math-*.c against the CUDA libraries (the same calls from C in this process), times the
// objects' and C's passes as interleaved repetitions, runs CuPy's side (bench/python/bench_cupy.py) in a
// child process, and prints a table and the `row: … PASS|FAIL` lines that bench/run.ts's math step parses.
import koffi from 'koffi';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Device } from '../src/device';
import { Stream } from '../src/stream';
import { REPO_ROOT, fmt, log, median, nowNs, reason, table } from './common';

export type Pass = (ops: number) => void;
export type KoffiLib = ReturnType<typeof koffi.load>;

const CUDA_HOME = process.env.CUDA_HOME ?? '/usr/local/cuda';
const LIB_DIRS = [join(CUDA_HOME, 'lib64'), join(CUDA_HOME, 'targets', 'x86_64-linux', 'lib'), '/usr/lib/x86_64-linux-gnu', '/lib/x86_64-linux-gnu'];

/** bench/native/`source` built into `soName` against `sonames` (found in LIB_DIRS, linked with their rpath) and loaded; the paths found; or why not. */
export function buildNative(source: string, soName: string, sonames: string[]): { lib: KoffiLib; libs: string[] } | string {
  const found = sonames.map((name) => LIB_DIRS.map((d) => join(d, name)).find(existsSync));
  const missing = sonames.filter((_, i) => found[i] === undefined);
  if (missing.length) return `not found in ${LIB_DIRS.join(', ')}: ${missing.join(', ')}`;
  const libs = found as string[];
  const dir = join(tmpdir(), 'cuda-ts-math-bench');
  mkdirSync(dir, { recursive: true });
  const so = join(dir, soName);
  const rpath = [...new Set(libs.map((l) => l.slice(0, l.lastIndexOf('/'))))].map((d) => `-Wl,-rpath,${d}`);
  const cc = process.env.CC || 'gcc';
  const b = spawnSync(cc, ['-O2', '-shared', '-fPIC', join(REPO_ROOT, 'bench', 'native', source), '-o', so, ...libs, ...rpath], { encoding: 'utf8' });
  if (b.status !== 0) return `${cc} failed: ${(b.stderr || String(b.error)).trim().split('\n').slice(-2).join(' | ')}`;
  return { lib: koffi.load(so), libs };
}

/** BENCH_DEVICE (default 0) made current, a stream on it, and the C side from `build` (or why not, logged). */
export function startGpuBench<Native>(build: () => Native | string): { device: Device; stream: Stream; native: Native | string } {
  const device = Device.get(Number(process.env.BENCH_DEVICE ?? 0));
  device.setCurrent();
  const stream = Stream.create();
  const native = build();
  if (typeof native === 'string') log(`C column skipped: ${native}`);
  return { device, stream, native };
}

/** Throws when a C pass returned a failing status. */
export function ok(status: number, what: string): void {
  if (status !== 0) throw new Error(`${what} returned ${status}`);
}

/** `bench_cupy.py <command> args`: CuPy's rows (ns per call by row name; its skipped rows logged), or why there are none. */
export function cupyRows(command: string, args: string[]): Record<string, number> | string {
  const py = process.env.PYTHON || 'python3';
  const r = spawnSync(py, [join(REPO_ROOT, 'bench', 'python', 'bench_cupy.py'), command, ...args], { encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) return `${py} exited ${r.status ?? r.signal}: ${(r.stderr || String(r.error ?? '')).trim().split('\n').slice(-1)[0]}`;
  const result = JSON.parse(r.stdout.trim().split('\n').pop()!) as { skipped?: string; rows?: Record<string, { median?: number; skipped?: string }> };
  if (result.skipped) return result.skipped;
  const rows: Record<string, number> = {};
  for (const [k, v] of Object.entries(result.rows ?? {})) {
    if (v.median !== undefined) rows[k] = v.median;
    else log(`CuPy ${k} skipped: ${v.skipped}`);
  }
  return rows;
}

/** Each pass once (warm-up, ops / 10 calls), then `reps` repetitions of every pass in rotating order: ns per call, by pass. */
export function interleave(passes: Record<string, Pass>, ops: number, reps: number): Record<string, number[]> {
  const names = Object.keys(passes);
  const out: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (const n of names) passes[n](Math.max(1, Math.floor(ops / 10)));
  for (let rep = 0; rep < reps; rep++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(rep + k) % names.length];
      const t0 = nowNs();
      passes[name](ops);
      out[name].push(Number(nowNs() - t0) / ops);
    }
  }
  return out;
}

/** The `row: label ratio× (target ≤ t×) PASS|FAIL` line bench/run.ts's math step parses. */
export function verdict(row: string, label: string, ratio: number, target: number): string {
  return `${row}: ${label} ${fmt(ratio, 3)}× (target ≤ ${target}×) ${ratio <= target ? 'PASS' : 'FAIL'}`;
}

/** One row of a math bench: its passes (by column), calls per pass, and the bound of its objects/C verdict. */
export interface MathRow {
  name: string;
  ops: number;
  target: number;
  passes: Record<string, Pass>;
  /** Work per call, for a throughput beside the time (large rows); call-cost rows show µs. */
  work?: { amount: number; unit: 'TFLOP/s' | 'GB/s' };
}

/** How a math bench reports: its columns, CuPy's columns (label → suffix of the row's name), and its verdicts. */
export interface MathReport {
  impl: string;
  title: string;
  reps: number;
  columns: string[];
  cupyColumns?: Record<string, string>;
  /** `pass`/`base` ≤ target (the row's unless given), judged on the ratio of medians, or with `perRepetition` the median of the per-repetition ratios. */
  verdicts: { pass: string; base: string; target?: number }[];
  perRepetition?: boolean;
  /** The ratio columns as [column, base] (default: every other column and CuPy's to C). */
  ratios?: [string, string][];
}

/** Times every row (interleaved repetitions), then prints the table, the verdict lines and one JSON line. */
export function runMath(device: Device, report: MathReport, rows: MathRow[], cupy: () => Record<string, number> | string): void {
  const results = rows.map((row) => ({ row, reps: interleave(row.passes, row.ops, report.reps) }));
  const theirs = cupy();
  if (typeof theirs === 'string') log(`CuPy column skipped: ${theirs}`);
  const cupyColumns = Object.entries(report.cupyColumns ?? { CuPy: '' });
  const shown = [...report.columns, ...cupyColumns.map(([label]) => label)];
  const ratios = report.ratios ?? shown.filter((c) => c !== 'C').map((c): [string, string] => [c, 'C']);
  const lines: string[][] = [];
  const verdicts: string[] = [];
  for (const { row, reps } of results) {
    const med = Object.fromEntries(Object.entries(reps).map(([k, v]) => [k, median(v)]));
    for (const [label, suffix] of cupyColumns) if (typeof theirs !== 'string') med[label] = theirs[row.name + suffix];
    const show = (ns: number | undefined) =>
      ns === undefined
        ? '—'
        : row.work
          ? `${fmt(ns / 1e6, 3)} ms (${fmt(row.work.amount / ns / (row.work.unit === 'TFLOP/s' ? 1e3 : 1))} ${row.work.unit})`
          : `${fmt(ns / 1e3, 2)} µs`;
    const ratio = ([c, base]: [string, string]) => (med[c] === undefined || med[base] === undefined ? '—' : `${fmt(med[c] / med[base], 3)}×`);
    lines.push([row.name, ...shown.map((c) => show(med[c])), ...ratios.map(ratio)]);
    for (const v of report.verdicts) {
      if (reps[v.pass] === undefined || reps[v.base] === undefined) continue;
      const r = report.perRepetition ? median(reps[v.pass].map((t, i) => t / reps[v.base][i])) : med[v.pass] / med[v.base];
      verdicts.push(verdict(row.name, `${v.pass}/${v.base}`, r, v.target ?? row.target));
    }
  }
  console.log(`\n${report.title} on ${device.name}: per call, median of ${report.reps} interleaved repetitions (CuPy: its own process, after):\n`);
  console.log(table(['row', ...shown, ...ratios.map(([c, base]) => `${c}/${base}`)], lines));
  for (const v of verdicts) console.log(v);
  console.log(
    JSON.stringify({ impl: report.impl, device: device.name, rows: Object.fromEntries(results.map(({ row, reps }) => [row.name, reps])), cupy: theirs }),
  );
}

/** Runs a GPU bench's main; on an error prints `name: reason` (e.g. no GPU) and exits 1. */
export function runBench(name: string, main: () => void): void {
  try {
    main();
  } catch (e) {
    console.error(`${name}: ${reason(e)}`);
    process.exit(1);
  }
}
