// cuSOLVER through DenseSolver: `npx tsx examples/cholesky-solve.ts`.
//
// A 300×300 symmetric positive definite system (B Bᵀ + n I, row-major) solved on the GPU: Cholesky
// factorization (potrf) then the triangular solves (potrs) for 4 right-hand sides, awaited without
// blocking the event loop; the residual |A X - B| / (|A| |X|) is checked on the CPU. Then a matrix that
// is not positive definite: potrf must throw NotPositiveDefiniteError naming the failing minor.
import { DeviceBuffer, Stream } from '../src';
import { DenseSolver, NotPositiveDefiniteError, matrix } from '../src/math';
import { done, requireGpu } from './gpu-check';

const NAME = 'cholesky-solve';
const N = 300;
const NRHS = 4;

function randomMatrix(rows: number, cols: number, seed: number): Float64Array {
  let s = seed;
  return Float64Array.from({ length: rows * cols }, () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1);
}

/** B Bᵀ + n I (row-major). */
function spd(n: number): Float64Array {
  const b = randomMatrix(n, n, 7);
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let sum = i === j ? n : 0;
      for (let k = 0; k < n; k++) sum += b[i * n + k] * b[j * n + k];
      a[i * n + j] = sum;
    }
  return a;
}

async function main(): Promise<[boolean, string]> {
  const device = requireGpu(NAME);
  device.setCurrent();
  using stream = Stream.create();
  using solver = DenseSolver.create({ stream });
  const aHost = spd(N);
  // right-hand sides as cuSOLVER takes several: column-major [N, NRHS] (column j is b_j)
  const bHost = randomMatrix(NRHS, N, 11);
  using aBuf = DeviceBuffer.from(aHost, { stream });
  using xBuf = DeviceBuffer.from(bHost, { stream });
  const a = matrix(aBuf, { dtype: 'f64', rows: N, cols: N }); // row-major: the transpose of a symmetric matrix is itself
  const x = matrix(xBuf, { dtype: 'f64', rows: N, cols: NRHS, order: 'col' });
  const t = performance.now();
  await solver.potrf(a);
  await solver.potrs(a, x);
  const ms = performance.now() - t;

  const xs = xBuf.toArray(Float64Array, { stream });
  let r2 = 0;
  let a2 = 0;
  let x2 = 0;
  for (let j = 0; j < NRHS; j++)
    for (let i = 0; i < N; i++) {
      let ax = 0;
      for (let k = 0; k < N; k++) ax += aHost[i * N + k] * xs[j * N + k];
      r2 += (ax - bHost[j * N + i]) ** 2;
      x2 += xs[j * N + i] ** 2;
    }
  for (const v of aHost) a2 += v * v;
  const residual = Math.sqrt(r2) / (Math.sqrt(a2) * Math.sqrt(x2));

  // diag(1, 2, -3, 4): the leading minor of order 3 is negative
  using bad = DeviceBuffer.from(Float64Array.from([1, 0, 0, 0, 0, 2, 0, 0, 0, 0, -3, 0, 0, 0, 0, 4]), { stream });
  let refused = 'no error';
  try {
    await solver.potrf(matrix(bad, { dtype: 'f64', rows: 4, cols: 4 }));
  } catch (e) {
    refused = e instanceof NotPositiveDefiniteError && e.index === 2 ? 'ok' : String(e);
  }

  const problems: string[] = [];
  if (!(residual < 1e-13)) problems.push(`residual ${residual} is too large`);
  if (refused !== 'ok') problems.push(`a matrix that is not positive definite: ${refused}`);
  const detail = `${N}×${N} SPD system, ${NRHS} right-hand sides: residual ${residual.toExponential(1)} (potrf + potrs ${ms.toFixed(1)} ms, awaited) on ${device.name}; diag(1, 2, -3, 4) refused at index 2`;
  return problems.length ? [false, problems.join('; ')] : [true, detail];
}

main().then(
  ([ok, detail]) => done(NAME, ok, detail),
  (e) => done(NAME, false, (e instanceof Error ? e.message : String(e)).split('\n')[0]),
);
