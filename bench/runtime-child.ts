// The interleaved GPU rows under one JavaScript runtime (Bun, Deno; Node too, for tests): run by
// bench/runtimes-gpu.ts inside the CommonJS copy of the tree. C (libbench.so, loaded through the runtime's
// own FFI) is measured in this same process, interleaved with cuda-ts's raw, typed and objects layers,
// each bound through the runtime's default FFI, so every ratio is against C in the runtime's own process;
// the timing thread is pinned as in bench/gpu.ts (bench/floor.ts, meta.floor).
//
// Env: BENCH_CHILD_OUT (where the JSON goes; else stdout), BENCH_NATIVE_LIB (libbench.so), BENCH_PTX,
//      BENCH_SCALE, BENCH_DEVICE, BENCH_CHILD_REPS (else BENCH_REPS, else CHILD_REPS), BENCH_BLOCKS,
//      BENCH_CHILD_ROWS (comma list, default CHILD_ROWS), BENCH_PIN, BENCH_FLOOR_WARMUP.
// Output: one ChildResult. A failure before the rows (no driver, no GPU) is `skipped` with its reason and
// exit code 0; the parent reports it as the runtime's skipped columns.
import { writeFileSync } from 'node:fs';
import { reason } from './common';
import {
  type Driver,
  type PinFns,
  type RawApi,
  type RowsByImpl,
  type State,
  measureRows,
  nativePasses,
  passCollector,
  readPtx,
  setup,
  wantsCopies,
} from './gpu-common';
import { fresh, rawPasses, typedPasses } from './gpu-passes';
import { type ObjectsApi, objectsPasses } from './gpu-objects';
import { CHILD_REPS, CHILD_ROWS } from './runtimes-report';

/** What a child prints: rows by implementation, or why none were measured. */
export interface ChildResult {
  runtime: string;
  version: string;
  meta: Record<string, unknown>;
  rows: RowsByImpl;
  /** Implementation → why it has no passes. */
  notes: Record<string, string>;
  skipped?: string;
}

function runtimeName(): { runtime: string; version: string } {
  const g = globalThis as { Bun?: { version?: string }; Deno?: { version?: { deno?: string } } };
  if (g.Bun || process.versions.bun) return { runtime: 'bun', version: g.Bun?.version ?? String(process.versions.bun) };
  if (g.Deno) return { runtime: 'deno', version: g.Deno.version?.deno ?? 'unknown' };
  return { runtime: 'node', version: process.version };
}

/** Every implementation's passes (a failure becomes a note), the closers of what they opened, and C's pinning. */
function implementations(cu: Driver, S: State, rows: string[], meta: Record<string, unknown>) {
  const { impls, notes, attempt } = passCollector();
  const closers: (() => void)[] = [];
  const pins: Partial<PinFns> = {};
  const lib = process.env.BENCH_NATIVE_LIB;
  attempt('native-c-inproc', () => (lib ? nativePasses(lib, rows, meta, pins) : 'BENCH_NATIVE_LIB not set (libbench.so from bench/native/build.sh)'));
  attempt('cuda-ts-raw', () => fresh(rawPasses)(require('../generated/13.0/driver/raw') as RawApi, S));
  attempt('cuda-ts-typed', () => fresh(typedPasses)(cu, S));
  attempt('cuda-ts-objects', () => {
    const { passes, close } = objectsPasses(require('../src/index') as ObjectsApi, readPtx(), { copies: S.copies });
    closers.push(close);
    return passes;
  });
  return { impls, notes, closers, pins };
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
  const reps = Number(process.env.BENCH_CHILD_REPS ?? process.env.BENCH_REPS ?? CHILD_REPS) | 0 || CHILD_REPS;
  try {
    const measured = measureRows(impls, rows, reps, pins);
    result.rows = measured.rows;
    result.meta.floor = measured.floor;
  } catch (e) {
    result.skipped = `${runtime} ${version}: ${reason(e)}`;
  }
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
    text = JSON.stringify({ ...runtimeName(), meta: {}, rows: {}, notes: {}, skipped: reason(e) });
  }
  if (process.env.BENCH_CHILD_OUT) writeFileSync(process.env.BENCH_CHILD_OUT, text);
  else process.stdout.write(`${text}\n`);
}
