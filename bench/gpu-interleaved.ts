// The interleaved phase of bench/gpu.ts: the rows of bench.c through every implementation in one Node
// process, their sub-blocks taking turns (bench/interleave.ts), C included through libbench.so.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, log } from './common';
import { jsTree, loadModule } from './startup';
import { BLOCKS, repetitionWords } from './interleave';
import {
  type Driver,
  LOADER,
  type PinFns,
  ROWS,
  type Raw,
  type RawApi,
  type RowsByImpl,
  type State,
  measureRows,
  nativePasses,
  passCollector,
} from './gpu-common';
import { fresh, koffiApi, rawPasses, typedPasses } from './gpu-passes';
import { type ObjectsApi, objectsPasses } from './gpu-objects';
import { floorRecordWords } from './floor';
import { nodeFfiUnavailableReason } from '../support/nodeffi';

/** libbench.so: BENCH_NATIVE_LIB (bench/run.ts's native step built it), else built here (bench/run.ts finds it there for Bun and Deno). */
function nativeLibrary(): string {
  const given = process.env.BENCH_NATIVE_LIB;
  if (given && existsSync(given)) return given;
  const dir = join(tmpdir(), 'cuda-ts-bench-inproc');
  const b = spawnSync('bash', [join(REPO_ROOT, 'bench', 'native', 'build.sh'), dir], { encoding: 'utf8' });
  const lib = join(dir, 'libbench.so');
  if (b.status !== 0 || !existsSync(lib)) throw new Error(`libbench.so not built: ${(b.stderr || '').trim().split('\n').slice(-2).join(' | ')}`);
  return lib;
}

/**
 * A second copy of the compiled tree whose modules bind through node:ffi (CUDA_TS_FFI=node while it
 * loads): the same code as the koffi columns, in the same process, with its own Binders.
 */
function loadNodeFfiTree<T>(modulePath: string): T {
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
  meta: Record<string, unknown>,
): { rows: RowsByImpl; notes: Record<string, string>; close: () => void } {
  const { impls, notes, attempt } = passCollector();
  const closers: (() => void)[] = [];
  const pins: Partial<PinFns> = {};
  const rowNames = ROWS.map((r) => r[0]);
  const partsLeftOut: Record<string, string> = {};
  const objects = (O: ObjectsApi) => {
    const o = objectsPasses(O, ptx, {}, partsLeftOut);
    closers.push(o.close);
    return o.passes;
  };
  attempt('native-c-inproc', () => nativePasses(nativeLibrary(), rowNames, {}, pins));
  attempt('koffi', () => fresh(rawPasses)(koffiApi(cu.binder.library()), S));
  attempt('cuda-ts-raw', () => fresh(rawPasses)(loadModule<Raw>('generated/13.0/driver/raw', LOADER) as unknown as RawApi, S));
  attempt('cuda-ts-typed', () => fresh(typedPasses)(cu, S));
  attempt('cuda-ts-objects', () => objects(loadModule<ObjectsApi>('src/index', LOADER)));
  const nodeWhy = nodeFfiUnavailableReason();
  const nodeFfi: Record<string, () => ReturnType<typeof rawPasses>> = {
    'cuda-ts-raw-nodeffi': () => fresh(rawPasses)(loadNodeFfiTree<RawApi>('generated/13.0/driver/raw'), S),
    'cuda-ts-typed-nodeffi': () => fresh(typedPasses)(loadNodeFfiTree<Driver>('generated/13.0/driver/index'), S),
    'cuda-ts-objects-nodeffi': () => objects(loadNodeFfiTree<ObjectsApi>('src/index')),
  };
  for (const [n, make] of Object.entries(nodeFfi)) attempt(n, () => nodeWhy || make());
  for (const [what, why] of Object.entries(partsLeftOut)) log(`objects ${what} not interleaved: ${why}`);
  const reps = Number(process.env.BENCH_REPS ?? 7) | 0 || 7;
  meta.interleaved = { implementations: Object.keys(impls), reps, blocks_per_rep: BLOCKS, repetition: repetitionWords(reps), not_run: notes };
  const { rows, floor } = measureRows(impls, rowNames, reps, pins);
  meta.floor = floor;
  log(`interleaved phase: ${floorRecordWords(floor)}`);
  return { rows, notes, close: () => closers.forEach((c) => c()) };
}
