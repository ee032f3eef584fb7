// What the JS side adds to a cusparseSpMV, without a GPU: Sparse.spmv runs its real code (the binder,
// koffi, the typed layer, the door's context binding) against stand-ins for libcusparse and
// cuCtxGetCurrent/cuCtxSetCurrent that do nothing (bench/native/fake-cusparse.c), so each row's time per
// call is FFI + JS; the C row is the same no-op called from a C loop, `koffi` the bare FFI call, `raw`
// the generated raw layer (status returned), `typed` the typed layer the object calls. The difference
// between a row and `typed` is the object's own cost (what bench/math-sparse.ts's spmv_csr_10k ratio is
// made of, beside the FFI transition and the typed layer's checks).
//   npx tsx bench/math-sparse-cpu.ts     (gcc; OPS=200000 calls per pass, REPS=7 passes, median per call;
//                                         process CPU time per pass, CLOCK=wall for the wall clock; ONLY=<text>
//                                         keeps the rows naming it, e.g. for node --cpu-prof)
import koffi from 'koffi';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as drv from '../src/driver';
import { Context } from '../src/context';
import { Core } from '../src/lifecycle';
import { DeviceBuffer } from '../src/memory/device-buffer';
import { StridedView } from '../src/memory/strided-view';
import { Stream } from '../src/stream';
import { Sparse } from '../src/math/sparse';
import { DenseVector, SparseMatrix } from '../src/math/sparse-matrix';
import { loadCusparse } from '../src/releases';
import * as cusparseRaw from '../generated/13.0/cusparse/raw';
import { REPO_ROOT, fmt, median, nowNs, table } from './common';

const OPS = Number(process.env.OPS ?? 200_000);
const ROUNDS = Number(process.env.REPS ?? 7);
/** This process's CPU time (default; steadier than the wall clock on a shared machine) or, with CLOCK=wall, the wall clock. */
const CPU_CLOCK = process.env.CLOCK !== 'wall';
const CONTEXT_HANDLE = 0x5a5a000;
const ROWS = 10_000;
const NNZ = 80_000;

/** Builds the stand-in library; its path. */
function build(): string {
  const dir = join(tmpdir(), 'cuda-ts-sparse-cpu');
  mkdirSync(dir, { recursive: true });
  const so = join(dir, 'libfakecusparse.so');
  const r = spawnSync(process.env.CC || 'gcc', ['-O2', '-shared', '-fPIC', join(REPO_ROOT, 'bench', 'native', 'fake-cusparse.c'), '-o', so], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`gcc failed: ${r.stderr || String(r.error)}`);
  return so;
}

/** A Context over a fake handle (no constructor run), bound through the stand-in cuCtxGetCurrent. */
function fakeContext(): Context {
  const ctx = Object.create(Context.prototype) as Context;
  Object.assign(ctx, { core: new Core('Context', undefined), unusable: undefined, handle: CONTEXT_HANDLE, device: 0, primary: true, allocCache: undefined });
  return ctx;
}

class FakeBuffer extends DeviceBuffer {
  constructor(bytes: number, address: number, ctx: Context) {
    super('DeviceBuffer', address, bytes, ctx, () => undefined);
  }
}

type Pass = (ops: number) => void;

function main(): void {
  const so = build();
  process.env.CUDA_TS_CUSPARSE_LIBRARY = so; // read when cuSPARSE first loads, below
  const lib = koffi.load(so);
  for (const name of ['cuCtxGetCurrent', 'cuCtxSetCurrent']) drv.provideNative(name, lib.func(name, 'int', [name === 'cuCtxGetCurrent' ? 'void *' : 'uintptr_t']) as never);
  const rawSpmv = lib.func('cusparseSpMV', 'int', ['uintptr_t', 'int32_t', 'void *', 'uintptr_t', 'uintptr_t', 'void *', 'uintptr_t', 'int32_t', 'int32_t', 'void *']) as (...a: unknown[]) => number;
  const cPass = lib.func('fake_spmv_pass', 'int', ['uint64_t', 'uint64_t', 'uint64_t', 'uint64_t', 'long']) as (...a: unknown[]) => number;
  const spmvs = lib.func('fake_cusparse_spmvs', 'long', []) as () => number;
  const repoints = lib.func('fake_cusparse_repoints', 'long', []) as () => number;

  const ctx = fakeContext();
  ctx.bind();
  const stream = Stream.adoptCreated(0x7e57000 as drv.CUstream, ctx);
  const legacy = Stream.legacyDefault(ctx);
  const at = (i: number): number => 0x7f0000000000 + i * 0x100000;
  const i32 = (n: number, i: number): StridedView => StridedView.of(new FakeBuffer(n * 4, at(i), ctx), { dtype: 'i32', shape: [n] });
  const f32 = (n: number, i: number): StridedView => StridedView.of(new FakeBuffer(n * 4, at(i), ctx), { dtype: 'f32', shape: [n] });
  const A = SparseMatrix.csr({ rows: ROWS, cols: ROWS, rowOffsets: i32(ROWS + 1, 0), colIndices: i32(NNZ, 1), values: f32(NNZ, 2) });
  const x = f32(ROWS, 3);
  const y = f32(ROWS, 4);
  const xd = DenseVector.of(x);
  const yd = DenseVector.of(y);
  const sparse = Sparse.create({ stream });
  const onLegacy = Sparse.create({ stream: legacy });
  const typed = loadCusparse().cusparseSpMV;
  const alpha = new Float32Array([1]);
  const beta = new Float32Array([0]);
  const scaled = { alpha: 2, beta: 0.5 };

  const passes: Record<string, Pass> = {
    C: (ops) => void cPass(0x1000, A.descriptor, xd.descriptor, yd.descriptor, ops),
    koffi: (ops) => { for (let i = 0; i < ops; i++) rawSpmv(0x1000, 0, alpha, A.descriptor, xd.descriptor, beta, yd.descriptor, 0, 0, 0); },
    raw: (ops) => { for (let i = 0; i < ops; i++) cusparseRaw.cusparseSpMV(0x1000 as never, 0, alpha, A.descriptor, xd.descriptor, beta, yd.descriptor, 0, 0, 0); },
    typed: (ops) => { for (let i = 0; i < ops; i++) typed(0x1000 as never, 0, alpha, A.descriptor, xd.descriptor, beta, yd.descriptor, 0, 0, 0); },
    'spmv(views)': (ops) => { for (let i = 0; i < ops; i++) sparse.spmv(A, x, y); },
    'spmv(DenseVector)': (ops) => { for (let i = 0; i < ops; i++) sparse.spmv(A, xd, yd); },
    'spmv(views, {alpha, beta})': (ops) => { for (let i = 0; i < ops; i++) sparse.spmv(A, x, y, scaled); },
    'spmv, legacy stream': (ops) => { for (let i = 0; i < ops; i++) onLegacy.spmv(A, x, y); },
  };
  const only = process.env.ONLY; // a substring: only the rows naming it (for a profile), plus typed
  const names = Object.keys(passes).filter((k) => only === undefined || k === 'typed' || k.includes(only));
  const ns: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  const before = spmvs();
  for (const k of names) passes[k](OPS / 10);
  const repointsBefore = repoints();
  for (let r = 0; r < ROUNDS; r++) {
    for (let j = 0; j < names.length; j++) {
      const k = names[(r + j) % names.length];
      const t0 = nowNs();
      const c0 = process.cpuUsage();
      passes[k](OPS);
      const c = process.cpuUsage(c0);
      ns[k].push(CPU_CLOCK ? ((c.user + c.system) * 1e3) / OPS : Number(nowNs() - t0) / OPS);
    }
  }
  const expected = names.length * (OPS / 10 + ROUNDS * OPS);
  if (spmvs() - before !== expected) throw new Error(`the fake cusparseSpMV ran ${spmvs() - before} times, expected ${expected}`);
  if (repoints() !== repointsBefore) throw new Error(`the timed passes re-pointed a descriptor ${repoints() - repointsBefore} times (the addresses never change)`);
  const med = Object.fromEntries(names.map((k) => [k, median(ns[k])]));
  const rows = names.map((k) => [k, fmt(med[k], 1), k === 'C' || k === 'koffi' || k === 'raw' || k === 'typed' ? '' : fmt(med[k] - med.typed, 1)]);
  console.log(`\nJS side of a cusparseSpMV (stand-in C functions; ${OPS} calls per pass, median of ${ROUNDS}, ${CPU_CLOCK ? 'process CPU time' : 'wall clock'}), ns per call:\n`);
  console.log(table(['row', 'ns/call', 'over typed'], rows));
  console.log(JSON.stringify({ impl: 'math-sparse-cpu', ops: OPS, medians: med }));
  for (const r of [sparse, onLegacy, xd, yd, A]) r.close();
}

main();
