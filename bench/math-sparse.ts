// The Sparse object's SpMV against the same cuSPARSE call made from C in the same process, and CuPy:
// `npx tsx bench/math-sparse.ts` (GPU machine; gcc builds bench/native/math-sparse.c, python3 runs
// bench/python/bench_cupy_sparse.py when CuPy is installed).
//
// Row (issue 43 part C): y = A x on a 10,000-row CSR f32 matrix (8 elements per row, i32 indices), target
// objects ≤ 1.05× C. A pass is `ops` calls then a stream synchronize, timed on this process's clock around
// the whole pass (C's loop runs inside the shared library: one cusparseSpMV per iteration on its handle,
// descriptors and workspace made once, as the object's are after its first call). The passes alternate
// within each of REPS repetitions (default 9, each pass in every position), and the row reports the
// median per call; the verdict uses the median of the per-repetition ratios objects/C (passes of one
// repetition run back to back, so slow drifts of clocks or load cancel). Columns: the object with plain
// StridedViews, with DenseVector descriptors, C, and CuPy in its own process after the others (`A @ x`,
// and cupyx.cusparse.spmv into a preallocated y). After the passes y is checked against the host product.
// Env: BENCH_SCALE (ops), REPS, CUDA_HOME (default /usr/local/cuda), CC, PYTHON.
import { DeviceBuffer, DenseVector, Sparse, SparseMatrix, StridedView } from '../src';
import { fmt, log, median, scaled, table } from './common';
import { buildNative as buildLibrary, cupyRows, interleave, ok, runBench, startGpuBench, verdict } from './math-common';

const ROWS = 10_000;
/** Interleaved repetitions (odd: the median is one of them). */
const REPS = Math.max(1, Number(process.env.REPS ?? 9));
const PER_ROW = 8;
const SONAMES = ['libcusparse.so.12', 'libcudart.so.13'];

interface NativeSparse {
  create(rows: number, cols: number, nnz: number, offsets: number, columns: number, values: number, x: number, y: number, stream: number): number;
  pass(state: number, ops: number, stream: number): number;
  destroy(state: number): number;
}

/** bench/native/math-sparse.c built into a shared library and loaded here, or why not. */
function buildNative(): NativeSparse | string {
  const built = buildLibrary('math-sparse.c', 'libsparsebench.so', SONAMES);
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
  const { device, stream, native } = startGpuBench(buildNative, 'column');
  const sparse = Sparse.create({ stream });
  const host = hostMatrix();
  const A = SparseMatrix.fromHost('csr', { rows: ROWS, cols: ROWS, ...host }, { stream });
  const xBuf = DeviceBuffer.from(new Float32Array(ROWS).fill(1), { stream });
  const yBuf = DeviceBuffer.alloc(ROWS * 4, { stream });
  const x = StridedView.of(xBuf, { dtype: 'f32', shape: [ROWS] });
  const y = StridedView.of(yBuf, { dtype: 'f32', shape: [ROWS] });
  const xd = DenseVector.of(x);
  const yd = DenseVector.of(y);
  const h = stream.handle;
  const [offsets, columns, values] = A.buffers;
  const cState = typeof native === 'string' ? 0 : native.create(ROWS, ROWS, A.nnz, offsets.ptr, columns.ptr, values.ptr, xBuf.ptr, yBuf.ptr, h);
  if (typeof native !== 'string' && cState === 0) throw new Error('the C side could not set up its handle, descriptors or workspace');

  const passes: Record<string, (ops: number) => void> = {
    objects: (ops) => {
      for (let i = 0; i < ops; i++) sparse.spmv(A, x, y);
      stream.synchronize();
    },
    'objects (DenseVector)': (ops) => {
      for (let i = 0; i < ops; i++) sparse.spmv(A, xd, yd);
      stream.synchronize();
    },
  };
  if (typeof native !== 'string') {
    passes.C = (ops) => ok(native.pass(cState, ops, h), 'ms_spmv_pass');
  }
  const ops = scaled(20000, 100);
  const reps = interleave(passes, ops, REPS); // the warm-up: the object's first call sizes its workspace
  checkProduct(yBuf.toArray(Float32Array), host.values);
  const cupy = cupyRows('bench_cupy_sparse.py', ['--ops', String(ops), '--reps', String(REPS)]);
  if (typeof cupy === 'string') log(`CuPy column skipped: ${cupy}`);
  else for (const [row, why] of Object.entries(cupy.skipped)) log(`CuPy ${row} skipped: ${why}`);
  report(device.name, A.nnz, ops, reps, typeof cupy === 'string' ? {} : cupy.rows);

  if (typeof native !== 'string') native.destroy(cState);
  for (const r of [xd, yd, A, sparse, xBuf, yBuf]) r.close();
  stream.close();
}

/** The table, the verdict (median of per-repetition ratios objects/C) and the raw samples. */
function report(deviceName: string, nnz: number, ops: number, reps: Record<string, number[]>, cupy: Record<string, number>): void {
  const med: Record<string, number> = Object.fromEntries(Object.entries(reps).map(([n, v]) => [n, median(v)]));
  const cupyNames: Record<string, string> = { matmul: 'CuPy (A @ x)', spmv_out: 'CuPy (cusparse.spmv, y=)' };
  for (const [k, v] of Object.entries(cupy)) med[cupyNames[k] ?? `CuPy ${k}`] = v;
  const ratio = (n: string): string => (med.C === undefined ? '—' : `${fmt(med[n] / med.C, 3)}×`);
  console.log(
    `\nSparse.spmv vs C (same process) and CuPy on ${deviceName}: ${ROWS}-row CSR f32, nnz ${nnz}, per call, median of ${REPS} interleaved repetitions of ${ops} calls (CuPy: its own process, after):\n`,
  );
  console.log(
    table(
      ['implementation', 'per call', 'ratio to C'],
      Object.keys(med).map((n) => [n, `${fmt(med[n] / 1e3, 2)} µs`, ratio(n)]),
    ),
  );
  if (reps.C !== undefined) {
    const perRep = (n: string): number => median(reps[n].map((t, i) => t / reps.C[i]));
    const objectsToC = perRep('objects');
    console.log(`per-repetition ratios to C (median): objects ${fmt(objectsToC, 3)}×, objects (DenseVector) ${fmt(perRep('objects (DenseVector)'), 3)}×`);
    console.log(verdict('spmv_csr_10k', 'objects/C', objectsToC, 1.05));
  }
  console.log(JSON.stringify({ impl: 'math-sparse', device: deviceName, reps: REPS, ops, rows: { spmv_csr_10k: reps }, cupy }));
}

runBench('math-sparse', main);
