// GEMM with the Blas object, on row-major matrices, checked against a CPU reference:
// `npx tsx examples/blas-gemm.ts`.
//
// C (m×n) = A (m×k) · Bᵀ (B stored n×k) + C, all row-major as in C or NumPy: the object reads the order
// off the views' strides and makes the one column-major cuBLAS call itself (no copies). Then a strided-
// batched GEMM over a [batch, rows, cols] view, and a dot product awaited without blocking the event loop.
import { DeviceBuffer, Stream } from '../src';
import { Blas, matrix } from '../src/math';
import { StridedView } from '../src/memory/strided-view';
import { done, requireGpu } from './gpu-check';

const NAME = 'blas-gemm';
const [m, n, k] = [300, 200, 129];
const U = 2 ** -24; // fp32 unit roundoff

async function main(): Promise<[boolean, string]> {
  const device = requireGpu(NAME);
  device.setCurrent();
  const rnd = (i: number): number => Math.sin(i * 12.9898 + 78.233) * 0.5;
  const A = Float32Array.from({ length: m * k }, (_, i) => rnd(i));
  const B = Float32Array.from({ length: n * k }, (_, i) => rnd(i + 7919));
  const C = Float32Array.from({ length: m * n }, (_, i) => rnd(i + 104729));

  using stream = Stream.create();
  using blas = Blas.create({ stream });
  using dA = DeviceBuffer.from(A);
  using dB = DeviceBuffer.from(B);
  using dC = DeviceBuffer.from(C);
  const a = matrix(dA, { dtype: 'f32', rows: m, cols: k });
  const b = matrix(dB, { dtype: 'f32', rows: n, cols: k });
  const c = matrix(dC, { dtype: 'f32', rows: m, cols: n });

  // 1. C = A·Bᵀ + C
  blas.gemm(a, b, c, { transB: 'T', beta: 1 });
  await stream.synchronized();
  const got = dC.toArray(Float32Array);
  const gamma = (k * U) / (1 - k * U);
  let bad = 0;
  let worst = 0;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = C[i * n + j];
      let mag = Math.abs(s);
      for (let l = 0; l < k; l++) {
        s += A[i * k + l] * B[j * k + l];
        mag += Math.abs(A[i * k + l] * B[j * k + l]);
      }
      const err = Math.abs(got[i * n + j] - s);
      worst = Math.max(worst, err / (gamma * mag + 1e-30));
      if (!(err <= 2 * gamma * mag)) bad++;
    }
  }

  // 2. eight 300×129 · 129×200 products of one [8, rows, cols] view, B shared
  const batch = 8;
  using dA8 = DeviceBuffer.alloc(batch * m * k * 4, { stream });
  using dC8 = DeviceBuffer.alloc(batch * m * n * 4, { stream });
  for (let i = 0; i < batch; i++) dA8.copyFrom(A, { offset: i * m * k * 4, stream });
  const a8 = StridedView.of(dA8, { dtype: 'f32', shape: [batch, m, k] });
  const c8 = StridedView.of(dC8, { dtype: 'f32', shape: [batch, m, n] });
  blas.gemmStridedBatched(a8, b, c8, { transB: 'T' });
  await stream.synchronized();
  const last = dC8.toArray(Float32Array).subarray((batch - 1) * m * n);
  let batchBad = 0;
  for (let p = 0; p < m * n; p++) if (!(Math.abs(last[p] - (got[p] - C[p])) <= 1e-3)) batchBad++;

  // 3. a dot product, awaited
  const x = StridedView.of(dA, { dtype: 'f32', shape: [k] });
  const dot = await blas.dotAsync(x, x);
  let dotRef = 0;
  for (let l = 0; l < k; l++) dotRef += A[l] * A[l];
  const dotOk = Math.abs((dot as number) - dotRef) <= 1e-5 * dotRef;

  const ok = bad === 0 && batchBad === 0 && dotOk;
  return [
    ok,
    `${m}x${n}x${k} row-major A·Bᵀ+C on ${device.name}: ${bad} element(s) outside 2γ_k·Σ|a||b| (worst at ${(worst * 100).toFixed(1)}% of γ_k·Σ), strided batch of ${batch}: ${batchBad} mismatch(es), dot ${(dot as number).toFixed(4)} vs ${dotRef.toFixed(4)}`,
  ];
}

main().then(
  ([ok, detail]) => done(NAME, ok, detail),
  (e) => done(NAME, false, (e instanceof Error ? e.message : String(e)).split('\n')[0]),
);
