// SGEMM with cuBLAS, checked against a CPU reference and timed with events:
// `npx tsx examples/sgemm-cublas.ts`.
//
// cuBLAS is column-major: element (i, j) of an m×n matrix with leading dimension m is at i + j·m.
// alpha and beta are passed as numbers: the typed layer boxes each into host memory for the call (the
// default CUBLAS_POINTER_MODE_HOST). Device buffers go to cuBLAS's matrix parameters as they are.
import * as cublas from '../generated/13.0/cublas';
import { DeviceBuffer, Event, Stream } from '../src';
import { done, requireGpu } from './gpu-check';

const NAME = 'sgemm-cublas';
const n = 512; // C(n×n) = A(n×n) · B(n×n)
const ITERATIONS = 50;
const U = 2 ** -24; // fp32 unit roundoff

async function main(): Promise<[boolean, string]> {
  const device = requireGpu(NAME);
  device.setCurrent();
  // deterministic inputs in [-0.5, 0.5]
  const rnd = (k: number): number => Math.sin(k * 12.9898 + 78.233) * 0.5;
  const A = Float32Array.from({ length: n * n }, (_, i) => rnd(i));
  const B = Float32Array.from({ length: n * n }, (_, i) => rnd(i + 7919));

  using stream = Stream.create();
  using start = Event.create();
  using end = Event.create();
  using dA = DeviceBuffer.from(A);
  using dB = DeviceBuffer.from(B);
  using dC = DeviceBuffer.alloc(n * n * 4);
  using blas = {
    handle: cublas.cublasCreate(),
    [Symbol.dispose]() {
      cublas.cublasDestroy(this.handle);
    },
  };
  const h = blas.handle;
  cublas.cublasSetStream(h, stream.handle);
  const version = cublas.cublasGetVersion(h);

  const OP_N = cublas.cublasOperation_t.CUBLAS_OP_N;
  const sgemm = (): void => cublas.cublasSgemm(h, OP_N, OP_N, n, n, n, 1, dA, n, dB, n, 0, dC, n);

  // 1. one call (also loads cuBLAS's kernels), checked against the CPU
  sgemm();
  await stream.synchronized();
  const C = dC.toArray(Float32Array);

  // CPU reference in fp64, column by column (C[:, j] += A[:, k] · B[k, j]), with Σ|A_ik·B_kj| per element for
  // the tolerance: the standard fp32 dot-product bound |C − C_ref| ≤ γ_n · Σ_k |A_ik|·|B_kj|, γ_n = n·u/(1 − n·u).
  const gamma = (n * U) / (1 - n * U);
  const ref = new Float64Array(n);
  const mag = new Float64Array(n);
  let maxErr = 0;
  let worstRatio = 0;
  let bad = 0;
  for (let j = 0; j < n; j++) {
    ref.fill(0);
    mag.fill(0);
    for (let k = 0; k < n; k++) {
      const b = B[k + j * n];
      const ab = Math.abs(b);
      const col = k * n;
      for (let i = 0; i < n; i++) {
        const a = A[col + i];
        ref[i] += a * b;
        mag[i] += Math.abs(a) * ab;
      }
    }
    for (let i = 0; i < n; i++) {
      const err = Math.abs(C[i + j * n] - ref[i]);
      const bound = gamma * mag[i];
      maxErr = Math.max(maxErr, err);
      worstRatio = Math.max(worstRatio, err / bound);
      if (!(err <= bound)) bad++; // also counts NaN
    }
  }

  // 2. timed: ITERATIONS back-to-back SGEMMs between two events on the same stream
  start.record(stream);
  for (let it = 0; it < ITERATIONS; it++) sgemm();
  end.record(stream);
  await end.synchronized();
  const ms = start.elapsed(end) / ITERATIONS;
  const gflops = (2 * n ** 3) / (ms * 1e-3) / 1e9;

  const detail = `${n}x${n}x${n} on ${device.name}: max |error| ${maxErr.toExponential(2)} (worst element at ${(worstRatio * 100).toPrecision(2)}% of its bound γ_n·Σ|A||B|, γ_n=${gamma.toExponential(2)}), ${bad} element(s) outside it; ${ms.toFixed(4)} ms per SGEMM = ${gflops.toFixed(0)} GFLOP/s (cuBLAS ${version})`;
  return [bad === 0, detail];
}

/** One line: the first line of the error's message (the original error where disposal failed too). */
function reason(e: unknown): string {
  const err = e instanceof Error && e.name === 'SuppressedError' ? (e as Error & { suppressed: unknown }).suppressed : e;
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}

main().then(
  ([ok, detail]) => done(NAME, ok, detail),
  (e) => done(NAME, false, reason(e)),
);
