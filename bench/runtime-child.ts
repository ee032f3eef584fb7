// The interleaved GPU rows under one JavaScript runtime (Bun, Deno; Node works too, for tests): run by
// bench/runtimes-gpu.ts as `bun|deno <cjs tree>/bench/runtime-child.js` inside the CommonJS copy of the
// tree (scripts/cjs-tree.ts). C is measured in this same process (bench.c's passes in libbench.so,
// loaded through the runtime's own FFI: bun:ffi under Bun, Deno.dlopen under Deno, koffi under Node),
// interleaved with cuda-ts's raw, typed and objects layers, each bound through the runtime's default
// FFI, so that every ratio is against C in the runtime's own process. The floor method
// (bench/floor.ts): after set-up the timing thread is pinned to BENCH_PIN's core for the rows timed
// per operation (bench_pin_thread of libbench.so, through the same FFI), the copies keep the start-up
// affinity, and the launch rows warm up BENCH_FLOOR_WARMUP launches first; meta.floor says what it did.
//
// Env: BENCH_CHILD_OUT (where the JSON goes; else stdout), BENCH_PTX, BENCH_NATIVE_LIB (libbench.so),
//      BENCH_SCALE, BENCH_CHILD_REPS (else BENCH_REPS, else CHILD_REPS), BENCH_BLOCKS, BENCH_DEVICE, BENCH_CHILD_ROWS (comma list, default CHILD_ROWS),
//      BENCH_PIN, BENCH_FLOOR_WARMUP (bench/floor.ts), BENCH_CHILD_BARE=1 (also the runtime's own FFI
//      with no cuda-ts code: implementation `ffi-bare`, bench/ffi-bare.ts), BENCH_CHILD_IMPLS (comma list: only
//      those implementations, e.g. to see whether one column's figure depends on the others beside it).
// Output: one ChildResult (below). A failure before the rows (no driver, no GPU) is `skipped` with its
// reason and exit code 0; the parent reports it as the runtime's skipped columns.
import { readFileSync, writeFileSync } from 'node:fs';
import { type MeasuredRow, reason } from './common';
import { measureInterleaved } from './interleave';
import { type Driver, type Passes, ROWS, type RawApi, type State, findPtx, passCollector, setup, wantsCopies } from './gpu-common';
import { fresh, rawPasses, typedPasses } from './gpu-passes';
import { type Any, objectsPasses } from './gpu-objects';
import { CHILD_REPS, CHILD_ROWS } from './runtimes-report';
import { RowPinner, floorSettings, floorWarm } from './floor';
import { barePasses } from './ffi-bare';

/** What a child prints: rows by implementation, or why none were measured. */
export interface ChildResult {
  runtime: string;
  version: string;
  meta: Record<string, unknown>;
  rows: Record<string, Record<string, MeasuredRow | { skipped: string }>>;
  /** Implementation → why it has no passes. */
  notes: Record<string, string>;
  skipped?: string;
}

interface RuntimeGlobals {
  Bun?: { version?: string };
  Deno?: {
    version?: { deno?: string };
    dlopen(path: string, symbols: Record<string, { parameters: string[]; result: string }>): { symbols: Record<string, (...a: unknown[]) => number> };
  };
}

function runtimeName(): { runtime: string; version: string } {
  const g = globalThis as RuntimeGlobals;
  if (g.Bun || process.versions.bun) return { runtime: 'bun', version: g.Bun?.version ?? String(process.versions.bun) };
  if (g.Deno) return { runtime: 'deno', version: g.Deno.version?.deno ?? 'unknown' };
  return { runtime: 'node', version: process.version };
}

type NativeFns = {
  init: (ptx: Uint8Array, ordinal: number) => number;
  pass: (row: Uint8Array, ops: number) => number;
  /** bench_pin_thread: pins the calling thread (-1: back to its start-up affinity); 0 or -errno. */
  pin: (cpu: number) => number;
  /** bench_current_cpu: where the calling thread runs. */
  cpuNow: () => number;
  how: string;
};

/** bench_init / bench_pass of libbench.so through the runtime's own FFI. */
function nativeFunctions(lib: string): NativeFns {
  const g = globalThis as RuntimeGlobals;
  if (g.Bun) {
    const { dlopen } = require('bun:ffi') as {
      dlopen(p: string, s: Record<string, { args: string[]; returns: string }>): { symbols: Record<string, (...a: unknown[]) => number> };
    };
    const s = dlopen(lib, {
      bench_init: { args: ['ptr', 'i32'], returns: 'i32' },
      bench_pass: { args: ['ptr', 'i64'], returns: 'i32' },
      bench_pin_thread: { args: ['i32'], returns: 'i32' },
      bench_current_cpu: { args: [], returns: 'i32' },
    }).symbols;
    return { init: s.bench_init, pass: s.bench_pass, pin: s.bench_pin_thread, cpuNow: s.bench_current_cpu, how: 'bun:ffi dlopen' };
  }
  if (g.Deno) {
    const s = g.Deno.dlopen(lib, {
      bench_init: { parameters: ['buffer', 'i32'], result: 'i32' },
      bench_pass: { parameters: ['buffer', 'i64'], result: 'i32' },
      bench_pin_thread: { parameters: ['i32'], result: 'i32' },
      bench_current_cpu: { parameters: [], result: 'i32' },
    }).symbols;
    return { init: s.bench_init, pass: s.bench_pass, pin: s.bench_pin_thread, cpuNow: s.bench_current_cpu, how: 'Deno.dlopen' };
  }
  const koffi = require('koffi') as typeof import('koffi');
  const so = koffi.load(lib);
  return {
    init: so.func('int bench_init(void *ptx, int ordinal)') as never,
    pass: so.func('int bench_pass(void *row, int64_t ops)') as never,
    pin: so.func('int bench_pin_thread(int cpu)') as never,
    cpuNow: so.func('int bench_current_cpu()') as never,
    how: 'koffi',
  };
}

/** bench.c's passes in this process, or why not; `pins` gets libbench.so's pinning functions. */
export function nativePasses(rows: string[], meta: Record<string, unknown>, pins: Partial<Pick<NativeFns, 'pin' | 'cpuNow'>> = {}): Passes | string {
  const lib = process.env.BENCH_NATIVE_LIB;
  if (!lib) return 'BENCH_NATIVE_LIB not set (libbench.so from bench/native/build.sh)';
  const fns = nativeFunctions(lib);
  meta.native_c_loaded_by = fns.how;
  Object.assign(pins, { pin: fns.pin, cpuNow: fns.cpuNow });
  const cstr = (s: string) => new TextEncoder().encode(`${s}\0`);
  const st = fns.init(cstr(findPtx()), Number(process.env.BENCH_DEVICE ?? 0) | 0);
  if (st !== 0) return `bench_init failed (${st})`;
  const out: Passes = {};
  for (const name of rows) {
    const row = cstr(name);
    const pass = fns.pass;
    out[name] = (ops) => {
      if (pass(row, ops) !== 0) throw new Error(`bench_pass: no row ${name}`);
    };
  }
  return out;
}

/** Every implementation's passes (a failure becomes a note), and the closers of what they opened. */
function implementations(
  cu: Driver,
  S: State,
  rows: string[],
  meta: Record<string, unknown>,
): { impls: Record<string, Passes>; notes: Record<string, string>; closers: (() => void)[]; pins: Partial<Pick<NativeFns, 'pin' | 'cpuNow'>> } {
  const only = process.env.BENCH_CHILD_IMPLS?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const { impls, notes, attempt } = passCollector((name) => !only?.length || only.includes(name));
  const closers: (() => void)[] = [];
  const pins: Partial<Pick<NativeFns, 'pin' | 'cpuNow'>> = {};
  attempt('native-c-inproc', () => nativePasses(rows, meta, pins));
  if (process.env.BENCH_CHILD_BARE === '1') {
    attempt('ffi-bare', () => {
      const bare = barePasses(S);
      if (typeof bare === 'string') return bare;
      meta.ffi_bare = bare.how;
      return bare.passes;
    });
  }
  attempt('cuda-ts-raw', () => fresh(rawPasses)(require('../generated/13.0/driver/raw') as RawApi, S));
  attempt('cuda-ts-typed', () => fresh(typedPasses)(cu, S));
  attempt('cuda-ts-objects', () => {
    const O = require('../src/index') as Any;
    const ptx = Buffer.concat([readFileSync(findPtx()), Buffer.from([0])]);
    const { passes, close } = objectsPasses(O, ptx, { copies: S.copies });
    closers.push(close);
    return passes;
  });
  return { impls, notes, closers, pins };
}

/** The rows of `rows`, interleaved over the implementations, the timing thread pinned per row by `pinner`. */
function measureRows(impls: Record<string, Passes>, rows: string[], pinner: RowPinner): ChildResult['rows'] {
  const reps = Number(process.env.BENCH_CHILD_REPS ?? process.env.BENCH_REPS ?? CHILD_REPS) | 0 || CHILD_REPS;
  const settings = floorSettings();
  const out: ChildResult['rows'] = {};
  try {
    for (const [name, ops, warm, unit, bytes, granule] of ROWS) {
      if (!rows.includes(name)) continue;
      const passes: Passes = {};
      for (const [impl, p] of Object.entries(impls)) if (p[name]) passes[impl] = p[name];
      pinner.beforeRow(name, unit);
      const got = measureInterleaved({ name, ops: ops(), warm: floorWarm(name, warm(), granule, settings), unit, bytesPerOp: bytes, granule, passes }, reps);
      pinner.afterRow();
      for (const [impl, r] of Object.entries(got)) (out[impl] ??= {})[name] = 'median' in r ? { ...r, interleaved: true } : r;
    }
  } finally {
    pinner.release();
  }
  return out;
}

/** Measures the rows under this runtime; never throws (a failure is the result's `skipped`). */
export function runChild(): ChildResult {
  const { runtime, version } = runtimeName();
  const result: ChildResult = { runtime, version, meta: {}, rows: {}, notes: {} };
  const rows = (process.env.BENCH_CHILD_ROWS ?? CHILD_ROWS.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  let cu: Driver;
  let S: State;
  let cleanup: () => void;
  try {
    cu = require('../generated/13.0/driver/index') as Driver;
    ({ S, meta: result.meta, cleanup } = setup(cu, { copies: wantsCopies(rows) }));
  } catch (e) {
    result.skipped = `${runtime} ${version}: driver setup failed: ${reason(e)}`;
    return result;
  }
  Object.assign(result.meta, {
    runtime,
    version,
    backends: Object.fromEntries(['cuCtxGetCurrent', 'cuDeviceGetAttribute', 'cuLaunchKernel'].map((n) => [n, cu.binder.backendOf(n)])),
  });
  const { impls, notes, closers, pins } = implementations(cu, S, rows, result.meta);
  result.notes = notes;
  const pinner = new RowPinner(floorSettings(), pins.pin, pins.cpuNow); // after set-up, as docs/performance.md explains
  try {
    result.rows = measureRows(impls, rows, pinner);
  } catch (e) {
    result.skipped = `${runtime} ${version}: ${reason(e)}`;
  }
  result.meta.floor = pinner.record;
  for (const c of [...closers, cleanup]) {
    try {
      c();
    } catch (e) {
      result.meta.cleanup_error = reason(e);
    }
  }
  return result;
}

if (require.main === module) {
  let text: string;
  try {
    text = JSON.stringify(runChild());
  } catch (e) {
    text = JSON.stringify({ runtime: runtimeName().runtime, version: runtimeName().version, meta: {}, rows: {}, notes: {}, skipped: reason(e) });
  }
  if (process.env.BENCH_CHILD_OUT) writeFileSync(process.env.BENCH_CHILD_OUT, text);
  else process.stdout.write(`${text}\n`);
}
