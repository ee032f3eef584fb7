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
import koffi from 'koffi';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Device, DeviceBuffer, DenseVector, Sparse, SparseMatrix, Stream, StridedView } from '../src';
import { REPO_ROOT, fmt, log, median, nowNs, reason, scaled, table } from './common';

const ROWS = 10_000;
/** Interleaved repetitions (odd: the median is one of them). */
const REPS = Math.max(1, Number(process.env.REPS ?? 9));
const PER_ROW = 8;
const CUDA_HOME = process.env.CUDA_HOME ?? '/usr/local/cuda';
const SONAMES = ['libcusparse.so.12', 'libcudart.so.13'];
const LIB_DIRS = [join(CUDA_HOME, 'lib64'), join(CUDA_HOME, 'targets', 'x86_64-linux', 'lib'), '/usr/lib/x86_64-linux-gnu', '/lib/x86_64-linux-gnu'];

interface NativeSparse {
  create(rows: number, cols: number, nnz: number, offsets: number, columns: number, values: number, x: number, y: number, stream: number): number;
  pass(state: number, ops: number, stream: number): number;
  destroy(state: number): number;
}

/** bench/native/math-sparse.c built into a shared library and loaded here, or why not. */
function buildNative(): NativeSparse | string {
  const libs = SONAMES.map((name) => LIB_DIRS.map((d) => join(d, name)).find(existsSync));
  const missing = SONAMES.filter((_, i) => libs[i] === undefined);
  if (missing.length) return `not found in ${LIB_DIRS.join(', ')}: ${missing.join(', ')}`;
  const dir = join(tmpdir(), 'cuda-ts-math-bench');
  mkdirSync(dir, { recursive: true });
  const so = join(dir, 'libsparsebench.so');
  const rpath = [...new Set(libs.map((l) => l!.slice(0, l!.lastIndexOf('/'))))].map((d) => `-Wl,-rpath,${d}`);
  const cc = process.env.CC || 'gcc';
  const b = spawnSync(cc, ['-O2', '-shared', '-fPIC', join(REPO_ROOT, 'bench', 'native', 'math-sparse.c'), '-o', so, ...(libs as string[]), ...rpath], { encoding: 'utf8' });
  if (b.status !== 0) return `${cc} failed: ${(b.stderr || String(b.error)).trim().split('\n').slice(-2).join(' | ')}`;
  const lib = koffi.load(so);
  return {
    create: lib.func('uint64_t ms_spmv_create(int64_t, int64_t, int64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t)'),
    pass: lib.func('int ms_spmv_pass(uint64_t, long, uint64_t)'),
    destroy: lib.func('int ms_spmv_destroy(uint64_t)'),
  } as NativeSparse;
}

/** CuPy's rows (ns per call by row name), or why there are none. */
function cupyRows(ops: number): { rows: Record<string, number>; skipped: Record<string, string> } | string {
  const py = process.env.PYTHON || 'python3';
  const r = spawnSync(py, [join(REPO_ROOT, 'bench', 'python', 'bench_cupy_sparse.py'), '--ops', String(ops), '--reps', String(REPS)], { encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) return `${py} exited ${r.status ?? r.signal}: ${(r.stderr || String(r.error ?? '')).trim().split('\n').slice(-1)[0]}`;
  const result = JSON.parse(r.stdout.trim().split('\n').pop()!) as { skipped?: string; rows?: Record<string, { median: number }>; skipped_rows?: Record<string, string> };
  if (result.skipped) return result.skipped;
  return { rows: Object.fromEntries(Object.entries(result.rows!).map(([k, v]) => [k, v.median])), skipped: result.skipped_rows ?? {} };
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
    colIndices.set([...cols].sort((a, b) => a - b), r * PER_ROW);
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

/** REPS repetitions of every pass, their order rotating per repetition; ns per call by pass. */
function interleave(passes: Record<string, (ops: number) => void>, ops: number): Record<string, number[]> {
  const names = Object.keys(passes);
  const reps: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (const n of names) passes[n](Math.max(1, Math.floor(ops / 10))); // warm-up (the object's first call sizes its workspace)
  for (let rep = 0; rep < REPS; rep++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(rep + k) % names.length];
      const t0 = nowNs();
      passes[name](ops);
      reps[name].push(Number(nowNs() - t0) / ops);
    }
  }
  return reps;
}

function main(): void {
  const device = Device.get(Number(process.env.BENCH_DEVICE ?? 0));
  device.setCurrent();
  const stream = Stream.create();
  const native = buildNative();
  if (typeof native === 'string') log(`C column skipped: ${native}`);
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
    objects: (ops) => { for (let i = 0; i < ops; i++) sparse.spmv(A, x, y); stream.synchronize(); },
    'objects (DenseVector)': (ops) => { for (let i = 0; i < ops; i++) sparse.spmv(A, xd, yd); stream.synchronize(); },
  };
  if (typeof native !== 'string') {
    passes.C = (ops) => {
      const st = native.pass(cState, ops, h);
      if (st !== 0) throw new Error(`ms_spmv_pass returned ${st}`);
    };
  }
  const ops = scaled(20000, 100);
  const reps = interleave(passes, ops);
  checkProduct(yBuf.toArray(Float32Array), host.values);
  const cupy = cupyRows(ops);
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
  console.log(`\nSparse.spmv vs C (same process) and CuPy on ${deviceName}: ${ROWS}-row CSR f32, nnz ${nnz}, per call, median of ${REPS} interleaved repetitions of ${ops} calls (CuPy: its own process, after):\n`);
  console.log(table(['implementation', 'per call', 'ratio to C'], Object.keys(med).map((n) => [n, `${fmt(med[n] / 1e3, 2)} µs`, ratio(n)])));
  if (reps.C !== undefined) {
    const perRep = (n: string): number => median(reps[n].map((t, i) => t / reps.C[i]));
    const verdict = perRep('objects');
    console.log(`per-repetition ratios to C (median): objects ${fmt(verdict, 3)}×, objects (DenseVector) ${fmt(perRep('objects (DenseVector)'), 3)}×`);
    console.log(`spmv_csr_10k: objects/C ${fmt(verdict, 3)}× (target ≤ 1.05×) ${verdict <= 1.05 ? 'PASS' : 'FAIL'}`);
  }
  console.log(JSON.stringify({ impl: 'math-sparse', device: deviceName, reps: REPS, ops, rows: { spmv_csr_10k: reps }, cupy }));
}

try {
  main();
} catch (e) {
  console.error(`math-sparse: ${reason(e)}`);
  process.exit(1);
}
