// The interleaved phase of bench/gpu.ts (see the banner below).
import koffi from 'koffi';
import { cpSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type MeasuredRow, REPO_ROOT, log } from './common';
import { jsTree, loadModule } from './startup';
import { BLOCKS, measureInterleaved, repetitionWords } from './interleave';
import { type Driver, LOADER, type Passes, ROWS, type Raw, type RawApi, type State, passCollector, wants } from './gpu-common';
import { fresh, koffiApi, rawPasses, typedPasses } from './gpu-passes';
import { type Any, loadObjects, objectsPasses } from './gpu-objects';
import { RowPinner, floorRecordWords, floorSettings, floorWarm } from './floor';

// ---------------------------------------------------------------------------------------------
// Interleaved phase: the rows of bench.c through every implementation, their sub-blocks taking turns
// in rotating order within each repetition (bench/interleave.ts), C included through libbench.so
// (bench.c's passes, timed by this clock).
// ---------------------------------------------------------------------------------------------

/** The timing thread's pinning through libbench.so (bench_pin_thread, bench_current_cpu). */
type PinFns = { pin: (cpu: number) => number; cpuNow: () => number };

/** bench.c's passes in this process (libbench.so from bench/native/build.sh), or why not; `pins` gets its pinning functions. */
function nativePasses(ptxPath: string, pins: Partial<PinFns>): Passes | string {
  let lib = process.env.BENCH_NATIVE_LIB;
  if (!lib || !existsSync(lib)) {
    const { spawnSync } = require('node:child_process') as typeof import('node:child_process');
    const dir = join(require('node:os').tmpdir(), 'cuda-ts-bench-inproc');
    const b = spawnSync('bash', [join(REPO_ROOT, 'bench', 'native', 'build.sh'), dir], { encoding: 'utf8' });
    lib = join(dir, 'libbench.so');
    if (b.status !== 0 || !existsSync(lib)) return `libbench.so not built: ${(b.stderr || '').trim().split('\n').slice(-2).join(' | ')}`;
  }
  const so = koffi.load(lib);
  const init = so.func('int bench_init(const char *ptx, int ordinal)');
  const pass = so.func('int bench_pass(const char *row, long ops)');
  const st = init(ptxPath, Number(process.env.BENCH_DEVICE ?? 0) | 0) as number;
  if (st !== 0) return `bench_init failed (${st})`;
  pins.pin = so.func('int bench_pin_thread(int cpu)') as PinFns['pin'];
  pins.cpuNow = so.func('int bench_current_cpu()') as PinFns['cpuNow'];
  const out: Passes = {};
  for (const [name] of ROWS) {
    out[name] = (ops) => {
      if (pass(name, ops) !== 0) throw new Error(`bench_pass: no row ${name}`);
    };
  }
  return out;
}

/**
 * A second copy of the compiled tree whose modules bind through node:ffi (CUDA_TS_FFI=node while it
 * loads): the same code as the koffi columns, in the same process, with its own Binders.
 */
export function loadNodeFfiTree<T>(modulePath: string): T {
  const { root } = jsTree(['generated/13.0/driver/index', 'generated/13.0/driver/raw', 'src/index']);
  const copy = join(REPO_ROOT, 'bench', '.build', 'js-nodeffi');
  if (!existsSync(join(copy, `${modulePath}.js`))) {
    rmSync(copy, { recursive: true, force: true });
    cpSync(root, copy, { recursive: true });
  }
  const saved = process.env.CUDA_TS_FFI;
  process.env.CUDA_TS_FFI = 'node';
  try {
    return require(join(copy, `${modulePath}.js`)) as T;
  } finally {
    if (saved === undefined) delete process.env.CUDA_TS_FFI;
    else process.env.CUDA_TS_FFI = saved;
  }
}

/** Every implementation's passes, then ROWS measured interleaved; returns rows by implementation. */
export function interleavedPhase(
  cu: Driver,
  S: State,
  ptx: Buffer,
  ptxPath: string,
  meta: Record<string, unknown>,
): { rows: Record<string, Record<string, MeasuredRow | { skipped: string }>>; notes: Record<string, string>; close: () => void } {
  const { impls, notes, attempt } = passCollector((name) => wants(name) || wants(name.replace(/-nodeffi$/, '')));
  const closers: (() => void)[] = [];
  const pins: Partial<PinFns> = {};
  attempt('native-c-inproc', () => nativePasses(ptxPath, pins));
  attempt('koffi', () => fresh(rawPasses)(koffiApi(cu.binder.library()), S));
  attempt('cuda-ts-raw', () => fresh(rawPasses)(loadModule<Raw>('generated/13.0/driver/raw', LOADER) as unknown as RawApi, S));
  attempt('cuda-ts-typed', () => fresh(typedPasses)(cu, S));
  attempt('cuda-ts-objects', () => {
    const o = objectsPasses(loadObjects(), ptx);
    closers.push(o.close);
    return o.passes;
  });
  const nodeWhy = (require('../support/nodeffi') as typeof import('../support/nodeffi')).nodeFfiUnavailableReason();
  for (const n of ['cuda-ts-raw-nodeffi', 'cuda-ts-typed-nodeffi', 'cuda-ts-objects-nodeffi']) {
    if (nodeWhy) {
      notes[n] = nodeWhy;
      continue;
    }
    attempt(n, () => {
      if (n === 'cuda-ts-raw-nodeffi') return fresh(rawPasses)(loadNodeFfiTree<RawApi>('generated/13.0/driver/raw'), S);
      if (n === 'cuda-ts-typed-nodeffi') return fresh(typedPasses)(loadNodeFfiTree<Driver>('generated/13.0/driver/index'), S);
      const o = objectsPasses(loadNodeFfiTree<Any>('src/index'), ptx);
      closers.push(o.close);
      return o.passes;
    });
  }
  const reps = Number(process.env.BENCH_REPS ?? 7) | 0 || 7;
  meta.interleaved = { implementations: Object.keys(impls), reps, blocks_per_rep: BLOCKS, repetition: repetitionWords(reps), not_run: notes };
  // The floor method (bench/floor.ts): set-up is done; the timing thread is pinned per row from here.
  const settings = floorSettings();
  const pinner = new RowPinner(settings, pins.pin, pins.cpuNow);
  const rows: Record<string, Record<string, MeasuredRow | { skipped: string }>> = {};
  try {
    for (const [name, ops, warm, unit, bytes, granule] of ROWS) {
      const passes: Record<string, (ops: number) => void> = {};
      for (const [impl, p] of Object.entries(impls)) if (p[name]) passes[impl] = p[name];
      pinner.beforeRow(name, unit);
      const got = measureInterleaved({ name, ops: ops(), warm: floorWarm(name, warm(), granule, settings), unit, bytesPerOp: bytes, granule, passes }, reps);
      pinner.afterRow();
      for (const [impl, r] of Object.entries(got)) {
        (rows[impl] ??= {})[name] = 'median' in r ? { ...r, interleaved: true } : r;
        log(`${impl.padEnd(24)} ${name.padEnd(24)} ${'median' in r ? `${r.median.toFixed(3).padStart(12)} ${unit}` : `skipped: ${r.skipped}`}`);
      }
    }
  } finally {
    pinner.release(); // the later rows, koffi's .async workers and the startup children keep the start-up affinity
  }
  meta.floor = pinner.record;
  log(`interleaved phase: ${floorRecordWords(pinner.record)}`);
  return { rows, notes, close: () => closers.forEach((c) => c()) };
}
