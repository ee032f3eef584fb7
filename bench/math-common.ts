// What the math benches share. The CPU benches (bench/math-*-cpu.ts) run the real objects against stand-in
// libraries built here with gcc (bench/native/fake-*.c), over a fake Context and fake device buffers, and time
// rotating passes on this process's CPU clock. The GPU benches (bench/math-blas.ts, math-fft-rand.ts,
// math-sparse.ts) build bench/native/math-*.c against the CUDA libraries, time interleaved repetitions, run
// CuPy's side in a child process and print the `row: … PASS|FAIL` lines that bench/run.ts's math step parses.
import koffi from 'koffi';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as drv from '../src/driver';
import { Context } from '../src/context';
import { Device } from '../src/device';
import { Core } from '../src/lifecycle';
import { DeviceBuffer } from '../src/memory/device-buffer';
import { Stream } from '../src/stream';
import { REPO_ROOT, fmt, log, median, nowNs, reason, table } from './common';

export type Pass = (ops: number) => void;
export type KoffiLib = ReturnType<typeof koffi.load>;

// ---- CPU benches: stand-in libraries ----

/** Calls per pass (OPS) and passes (REPS) of the CPU benches. */
export const CPU_OPS = Number(process.env.OPS ?? 200_000);
export const CPU_ROUNDS = Number(process.env.REPS ?? 7);
/** This process's CPU time (default; steadier than the wall clock on a shared machine) or, with CLOCK=wall, the wall clock. */
export const CPU_CLOCK = process.env.CLOCK !== 'wall';
const CONTEXT_HANDLE = 0x5a5a000;

/** Builds bench/native/`source` into `dir`/`soName` under the temporary directory; its path. */
function buildStandIn(source: string, dir: string, soName: string): string {
  const out = join(tmpdir(), dir);
  mkdirSync(out, { recursive: true });
  const so = join(out, soName);
  const r = spawnSync(process.env.CC || 'gcc', ['-O2', '-shared', '-fPIC', join(REPO_ROOT, 'bench', 'native', source), '-o', so], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`gcc failed: ${r.stderr || String(r.error)}`);
  return so;
}

/** A Context over a fake handle (no constructor run), bound through the stand-in cuCtxGetCurrent. */
function fakeContext(): Context {
  const ctx = Object.create(Context.prototype) as Context;
  Object.assign(ctx, { core: new Core('Context', undefined), unusable: undefined, handle: CONTEXT_HANDLE, device: 0, primary: true, allocCache: undefined });
  return ctx;
}

/** A DeviceBuffer over an address nothing dereferences (the stand-ins never touch memory). */
export class FakeBuffer extends DeviceBuffer {
  constructor(bytes: number, address: number, ctx: Context) {
    super('DeviceBuffer', address, bytes, ctx, () => undefined);
  }
}

export interface StandIn {
  lib: KoffiLib;
  ctx: Context;
  /** A created stream and the legacy default stream, both over the fake context. */
  stream: Stream;
  legacy: Stream;
}

/**
 * Builds the stand-in library, points `envVars` (read when a library first loads) at it, gives the driver its
 * cuCtxGetCurrent / cuCtxSetCurrent, and binds a fake context with two streams over it.
 */
export function standIn(source: string, dir: string, soName: string, envVars: string[]): StandIn {
  const so = buildStandIn(source, dir, soName);
  for (const v of envVars) process.env[v] = so;
  const lib = koffi.load(so);
  for (const name of ['cuCtxGetCurrent', 'cuCtxSetCurrent'])
    drv.provideNative(name, lib.func(name, 'int', [name === 'cuCtxGetCurrent' ? 'void *' : 'uintptr_t']) as never);
  const ctx = fakeContext();
  ctx.bind();
  const stream = Stream.adoptCreated(0x7e57000 as drv.CUstream, ctx);
  return { lib, ctx, stream, legacy: Stream.legacyDefault(ctx) };
}

export interface CpuRun {
  /** The rows timed, in order. */
  names: string[];
  /** Median ns per call, by row. */
  med: Record<string, number>;
}

export interface CpuRunOptions {
  /** What `calls` counts, for the error when the stand-in ran another number of times than the passes ask. */
  what: string;
  /** The stand-in's call counter. */
  calls: () => number;
  /** Process CPU time (true) or the wall clock. */
  cpuClock: boolean;
  /** Keeps only the rows whose name includes it (and `keep`), e.g. for node --cpu-prof. */
  only?: string;
  keep?: string;
  /** Runs between the warm-up and the timed passes (to read counters the timed passes must not move). */
  afterWarmUp?: () => void;
}

/** Each pass with CPU_OPS / 10 calls (warm-up), then CPU_ROUNDS rounds of every pass in rotating order. */
export function runCpuPasses(passes: Record<string, Pass>, o: CpuRunOptions): CpuRun {
  const names = Object.keys(passes).filter((k) => o.only === undefined || k === o.keep || k.includes(o.only));
  const ns: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  const before = o.calls();
  for (const k of names) passes[k](CPU_OPS / 10);
  o.afterWarmUp?.();
  for (let r = 0; r < CPU_ROUNDS; r++) {
    for (let j = 0; j < names.length; j++) {
      const k = names[(r + j) % names.length];
      const t0 = nowNs();
      const c0 = process.cpuUsage();
      passes[k](CPU_OPS);
      const cpu = process.cpuUsage(c0);
      ns[k].push(o.cpuClock ? ((cpu.user + cpu.system) * 1e3) / CPU_OPS : Number(nowNs() - t0) / CPU_OPS);
    }
  }
  const expected = names.length * (CPU_OPS / 10 + CPU_ROUNDS * CPU_OPS);
  const ran = o.calls() - before;
  if (ran !== expected) throw new Error(`${o.what} ran ${ran} times, expected ${expected}`);
  return { names, med: Object.fromEntries(names.map((k) => [k, median(ns[k])])) };
}

/** The CPU bench's table (each row, and its excess over `baseName` where `base` gives one) and its JSON line. */
export function reportCpu(impl: string, title: string, run: CpuRun, baseName: string, base: (row: string) => number | undefined, extra: string[] = []): void {
  const rows = run.names.map((k) => {
    const b = base(k);
    return [k, fmt(run.med[k], 1), b === undefined ? '' : fmt(run.med[k] - b, 1)];
  });
  console.log(`\n${title}, ns per call:\n`);
  console.log(table(['row', 'ns/call', `over ${baseName}`], rows));
  for (const line of extra) console.log(line);
  console.log(JSON.stringify({ impl, ops: CPU_OPS, medians: run.med }));
}

// ---- GPU benches: the C side, CuPy's side, interleaved repetitions, verdicts ----

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

/** BENCH_DEVICE (default 0) made current, a stream on it, and the C side from `build` (or why not, logged as `C <skipped> skipped: …`). */
export function startGpuBench<Native>(build: () => Native | string, skipped: string): { device: Device; stream: Stream; native: Native | string } {
  const device = Device.get(Number(process.env.BENCH_DEVICE ?? 0));
  device.setCurrent();
  const stream = Stream.create();
  const native = build();
  if (typeof native === 'string') log(`C ${skipped} skipped: ${native}`);
  return { device, stream, native };
}

/** Throws when a C pass returned a failing status. */
export function ok(status: number, what: string): void {
  if (status !== 0) throw new Error(`${what} returned ${status}`);
}

/** bench/python/`script` run with `args`: CuPy's rows (ns per call by row name) and the rows it skipped, or why there are none. */
export function cupyRows(script: string, args: string[]): { rows: Record<string, number>; skipped: Record<string, string> } | string {
  const py = process.env.PYTHON || 'python3';
  const r = spawnSync(py, [join(REPO_ROOT, 'bench', 'python', script), ...args], { encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) return `${py} exited ${r.status ?? r.signal}: ${(r.stderr || String(r.error ?? '')).trim().split('\n').slice(-1)[0]}`;
  const result = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
    skipped?: string;
    rows?: Record<string, { median: number }>;
    skipped_rows?: Record<string, string>;
  };
  if (result.skipped) return result.skipped;
  return { rows: Object.fromEntries(Object.entries(result.rows!).map(([k, v]) => [k, v.median])), skipped: result.skipped_rows ?? {} };
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

/** Runs a GPU bench's main; on an error prints `name: reason` (e.g. no GPU) and exits 1. */
export function runBench(name: string, main: () => void): void {
  try {
    main();
  } catch (e) {
    console.error(`${name}: ${reason(e)}`);
    process.exit(1);
  }
}
