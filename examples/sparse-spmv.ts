// cuSPARSE through Sparse and SparseMatrix: `npx tsx examples/sparse-spmv.ts`.
//
// The 2-D Laplacian of a 200×200 grid (40,000 rows, five points per row) built on the host as CSR,
// uploaded once (SparseMatrix.fromHost), then y = A x by SpMV on a Stream, 100 times with the workspace
// and descriptors reused; y is checked element by element against a CPU SpMV, and A·1 against the
// Laplacian's row sums (0 inside, positive on the border).
import { DeviceBuffer, Event, Stream } from '../src';
import { StridedView } from '../src/memory/strided-view';
import { Sparse, SparseMatrix } from '../src/math';
import { done, requireGpu } from './gpu-check';

const NAME = 'sparse-spmv';
const GRID = 200;
const N = GRID * GRID;
const REPS = 100;

/** The five-point Laplacian (4 on the diagonal, -1 to each grid neighbour) as CSR arrays. */
function laplacian(): { rowOffsets: Int32Array; colIndices: Int32Array; values: Float64Array } {
  const rowOffsets = new Int32Array(N + 1);
  const cols: number[] = [];
  const vals: number[] = [];
  for (let i = 0; i < GRID; i++)
    for (let j = 0; j < GRID; j++) {
      const r = i * GRID + j;
      for (const [di, dj, v] of [
        [-1, 0, -1],
        [0, -1, -1],
        [0, 0, 4],
        [0, 1, -1],
        [1, 0, -1],
      ]) {
        const [ii, jj] = [i + di, j + dj];
        if (ii < 0 || jj < 0 || ii >= GRID || jj >= GRID) continue;
        cols.push(ii * GRID + jj);
        vals.push(v);
      }
      rowOffsets[r + 1] = cols.length;
    }
  return { rowOffsets, colIndices: Int32Array.from(cols), values: Float64Array.from(vals) };
}

async function main(): Promise<[boolean, string]> {
  const device = requireGpu(NAME);
  device.setCurrent();
  using stream = Stream.create();
  using sparse = Sparse.create({ stream });
  const host = laplacian();
  using A = SparseMatrix.fromHost('csr', { rows: N, cols: N, ...host }, { stream });
  const xHost = Float64Array.from({ length: N }, (_, k) => Math.sin(k * 0.01) + (k % 7) / 7);
  using xBuf = DeviceBuffer.from(xHost, { stream });
  using yBuf = DeviceBuffer.alloc(N * 8, { stream });
  const x = StridedView.of(xBuf, { dtype: 'f64', shape: [N] });
  const y = StridedView.of(yBuf, { dtype: 'f64', shape: [N] });

  using t0 = Event.create();
  using t1 = Event.create();
  sparse.spmv(A, x, y); // the first call sizes and allocates the workspace
  t0.record(stream);
  for (let r = 0; r < REPS; r++) sparse.spmv(A, x, y);
  t1.record(stream);
  await t1.synchronized();
  const us = (t0.elapsed(t1) * 1000) / REPS;

  const got = yBuf.toArray(Float64Array, { stream });
  let worst = 0;
  for (let r = 0; r < N; r++) {
    let want = 0;
    for (let k = host.rowOffsets[r]; k < host.rowOffsets[r + 1]; k++) want += host.values[k] * xHost[host.colIndices[k]];
    worst = Math.max(worst, Math.abs(got[r] - want));
  }
  using ones = DeviceBuffer.from(new Float64Array(N).fill(1), { stream });
  sparse.spmv(A, StridedView.of(ones, { dtype: 'f64', shape: [N] }), y, { alpha: 1, beta: 0 });
  const sums = yBuf.toArray(Float64Array, { stream });
  const interior = sums[GRID + 1] === 0 && sums[N - GRID - 2] === 0;
  const corner = sums[0] === 2 && sums[N - 1] === 2;

  const problems: string[] = [];
  if (!(worst < 1e-12)) problems.push(`y differs from the CPU SpMV by ${worst}`);
  if (!interior || !corner) problems.push(`A·1 is not the Laplacian's row sums (interior ${sums[GRID + 1]}, corner ${sums[0]})`);
  const detail = `${N}-row Laplacian, nnz ${A.nnz}: y = A x matches the CPU (max |Δ| ${worst.toExponential(1)}), ${us.toFixed(1)} µs per SpMV on ${device.name}`;
  return problems.length ? [false, problems.join('; ')] : [true, detail];
}

main().then(
  ([ok, detail]) => done(NAME, ok, detail),
  (e) => done(NAME, false, (e instanceof Error ? e.message : String(e)).split('\n')[0]),
);
