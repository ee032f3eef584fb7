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
import { StridedView } from '../src/memory/strided-view';
import { Sparse } from '../src/math/sparse';
import { DenseVector, SparseMatrix } from '../src/math/sparse-matrix';
import { loadCusparse } from '../src/releases';
import * as cusparseRaw from '../generated/13.0/cusparse/raw';
import { CPU_CLOCK, CPU_OPS, CPU_ROUNDS, FakeBuffer, type Pass, reportCpu, runCpuPasses, standIn } from './math-common';

const ROWS = 10_000;
const NNZ = 80_000;

function main(): void {
  // the env var is read when cuSPARSE first loads, below
  const { lib, ctx, stream, legacy } = standIn('fake-cusparse.c', 'cuda-ts-sparse-cpu', 'libfakecusparse.so', ['CUDA_TS_CUSPARSE_LIBRARY']);
  const rawSpmv = lib.func('cusparseSpMV', 'int', [
    'uintptr_t',
    'int32_t',
    'void *',
    'uintptr_t',
    'uintptr_t',
    'void *',
    'uintptr_t',
    'int32_t',
    'int32_t',
    'void *',
  ]) as (...a: unknown[]) => number;
  const cPass = lib.func('fake_spmv_pass', 'int', ['uint64_t', 'uint64_t', 'uint64_t', 'uint64_t', 'long']) as (...a: unknown[]) => number;
  const spmvs = lib.func('fake_cusparse_spmvs', 'long', []) as () => number;
  const repoints = lib.func('fake_cusparse_repoints', 'long', []) as () => number;

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
    koffi: (ops) => {
      for (let i = 0; i < ops; i++) rawSpmv(0x1000, 0, alpha, A.descriptor, xd.descriptor, beta, yd.descriptor, 0, 0, 0);
    },
    raw: (ops) => {
      for (let i = 0; i < ops; i++) cusparseRaw.cusparseSpMV(0x1000 as never, 0, alpha, A.descriptor, xd.descriptor, beta, yd.descriptor, 0, 0, 0);
    },
    typed: (ops) => {
      for (let i = 0; i < ops; i++) typed(0x1000 as never, 0, alpha, A.descriptor, xd.descriptor, beta, yd.descriptor, 0, 0, 0);
    },
    'spmv(views)': (ops) => {
      for (let i = 0; i < ops; i++) sparse.spmv(A, x, y);
    },
    'spmv(DenseVector)': (ops) => {
      for (let i = 0; i < ops; i++) sparse.spmv(A, xd, yd);
    },
    'spmv(views, {alpha, beta})': (ops) => {
      for (let i = 0; i < ops; i++) sparse.spmv(A, x, y, scaled);
    },
    'spmv, legacy stream': (ops) => {
      for (let i = 0; i < ops; i++) onLegacy.spmv(A, x, y);
    },
  };
  let repointsBefore = 0;
  const only = process.env.ONLY; // a substring: only the rows naming it (for a profile), plus typed
  const run = runCpuPasses(passes, {
    what: 'the fake cusparseSpMV',
    calls: spmvs,
    cpuClock: CPU_CLOCK,
    only,
    keep: 'typed',
    afterWarmUp: () => (repointsBefore = repoints()),
  });
  if (repoints() !== repointsBefore)
    throw new Error(`the timed passes re-pointed a descriptor ${repoints() - repointsBefore} times (the addresses never change)`);
  const base = (k: string): number | undefined => (k === 'C' || k === 'koffi' || k === 'raw' || k === 'typed' ? undefined : run.med.typed);
  const title = `JS side of a cusparseSpMV (stand-in C functions; ${CPU_OPS} calls per pass, median of ${CPU_ROUNDS}, ${CPU_CLOCK ? 'process CPU time' : 'wall clock'})`;
  reportCpu('math-sparse-cpu', title, run, 'typed', base);
  for (const r of [sparse, onLegacy, xd, yd, A]) r.close();
}

main();
