// The Sparse object's SpMV against the same cuSPARSE call made from C in the same process, and CuPy:
// `npx tsx bench/math-sparse.ts` (GPU machine; gcc builds bench/native/math-sparse.c, python3 runs CuPy if installed).
// Row (issue 43): y = A x on a 10,000-row CSR f32 matrix (8 elements per row, i32 indices), objects ≤ 1.05× C,
// judged on the median of the per-repetition ratios (passes of one repetition run back to back, so slow drifts
// cancel). A pass is `ops` calls then a stream synchronize (C's loop runs inside the shared library on
// descriptors and workspace made once, as the object's are after its first call). Columns: the object with
// StridedViews and with DenseVector descriptors, C, and CuPy (`A @ x`, and cupyx.cusparse.spmv into a
// preallocated y). After the passes y is checked against the host product.
// Env: BENCH_SCALE (ops), REPS (default 9), CUDA_HOME (default /usr/local/cuda), CC, PYTHON.
import { DeviceBuffer, DenseVector, Sparse, SparseMatrix, StridedView } from '../src';
import { scaled } from './common';
import { type Pass, buildNative, cupyRows, ok, runBench, runMath, startGpuBench } from './math-common';

const ROWS = 10_000;
/** Interleaved repetitions (odd: the median is one of them). */
const REPS = Math.max(1, Number(process.env.REPS ?? 9));
const PER_ROW = 8;

interface NativeSparse {
  create(rows: number, cols: number, nnz: number, offsets: number, columns: number, values: number, x: number, y: number, stream: number): number;
  pass(state: number, ops: number, stream: number): number;
  destroy(state: number): number;
}

/** bench/native/math-sparse.c built into a shared library and loaded here, or why not. */
function loadNative(): NativeSparse | string {
  const built = buildNative('math-sparse.c', 'libsparsebench.so', ['libcusparse.so.12', 'libcudart.so.13']);
  if (typeof built === 'string') return built;
  const { lib } = built;
  return {
    create: lib.func('uint64_t ms_spmv_create(int64_t, int64_t, int64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t)'),
    pass: lib.func('int ms_spmv_pass(uint64_t, long, uint64_t)'),
    destroy: lib.func('int ms_spmv_destroy(uint64_t)'),
  } as NativeSparse;
}

/** A ROWS × ROWS CSR pattern with PER_ROW distinct sorted columns per row and values in [-1, 1). */
function hostMatrix(): { rowOffsets: Int32Array; colIndices: Int32Array; values: Float32Array } {
  let s = 12345;
  const next = (): number => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const rowOffsets = Int32Array.from({ length: ROWS + 1 }, (_, r) => r * PER_ROW);
  const colIndices = new Int32Array(ROWS * PER_ROW);
  for (let r = 0; r < ROWS; r++) {
    const cols = new Set<number>();
    while (cols.size < PER_ROW) cols.add(Math.floor(next() * ROWS));
    colIndices.set(
      [...cols].sort((a, b) => a - b),
      r * PER_ROW,
    );
  }
  return { rowOffsets, colIndices, values: Float32Array.from({ length: ROWS * PER_ROW }, () => next() * 2 - 1) };
}

/** Throws unless y holds A·1 (x is all ones: each row's sum), so that no column can be fast by doing less. */
function checkProduct(y: Float32Array, values: Float32Array): void {
  for (let r = 0; r < ROWS; r++) {
    let sum = 0;
    for (let k = r * PER_ROW; k < (r + 1) * PER_ROW; k++) sum += values[k];
    if (Math.abs(y[r] - sum) > 1e-4 * Math.max(1, Math.abs(sum))) throw new Error(`y[${r}] is ${y[r]}, the host product ${sum}`);
  }
}

function main(): void {
  const { device, stream, native } = startGpuBench(loadNative);
  const sparse = Sparse.create({ stream });
  const host = hostMatrix();
  const A = SparseMatrix.fromHost('csr', { rows: ROWS, cols: ROWS, ...host }, { stream });
  const xBuf = DeviceBuffer.from(new Float32Array(ROWS).fill(1), { stream });
  const yBuf = DeviceBuffer.alloc(ROWS * 4, { stream });
  const x = StridedView.of(xBuf, { dtype: 'f32', shape: [ROWS] });
  const y = StridedView.of(yBuf, { dtype: 'f32', shape: [ROWS] });
  const [xd, yd] = [DenseVector.of(x), DenseVector.of(y)];
  const h = stream.handle;
  const [offsets, columns, values] = A.buffers;
  const cState = typeof native === 'string' ? 0 : native.create(ROWS, ROWS, A.nnz, offsets.ptr, columns.ptr, values.ptr, xBuf.ptr, yBuf.ptr, h);
  if (typeof native !== 'string' && cState === 0) throw new Error('the C side could not set up its handle, descriptors or workspace');
  const passes: Record<string, Pass> = {
    objects: (ops) => {
      for (let i = 0; i < ops; i++) sparse.spmv(A, x, y);
      stream.synchronize();
    },
    'objects (DenseVector)': (ops) => {
      for (let i = 0; i < ops; i++) sparse.spmv(A, xd, yd);
      stream.synchronize();
    },
  };
  if (typeof native !== 'string') passes.C = (ops) => ok(native.pass(cState, ops, h), 'ms_spmv_pass');
  const ops = scaled(20000, 100);
  runMath(
    device,
    {
      impl: 'math-sparse',
      title: `Sparse.spmv vs C (same process) and CuPy: ${ROWS}-row CSR f32, nnz ${A.nnz}, ${ops} calls per pass`,
      reps: REPS,
      columns: ['objects', 'objects (DenseVector)', 'C'],
      cupyColumns: { 'CuPy (A @ x)': '', 'CuPy (spmv, y=)': '_out' },
      verdicts: [{ pass: 'objects', base: 'C' }],
      perRepetition: true,
    },
    [{ name: 'spmv_csr_10k', ops, target: 1.05, passes }],
    () => {
      checkProduct(yBuf.toArray(Float32Array), host.values); // after the GPU passes, before CuPy's
      return cupyRows('sparse', ['--ops', String(ops), '--reps', String(REPS)]);
    },
  );
  if (typeof native !== 'string') native.destroy(cState);
  for (const r of [xd, yd, A, sparse, xBuf, yBuf]) r.close();
  stream.close();
}

runBench('math-sparse', main);
