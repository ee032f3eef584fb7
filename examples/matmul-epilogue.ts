// A dense layer's forward pass, D = ReLU(X·W + bias), as one cuBLASLt kernel with the Matmul object, planned
// once and executed many times; checked against a CPU reference: `npx tsx examples/matmul-epilogue.ts`.
//
// X is row-major (as NumPy), W column-major (as cuBLAS), D column-major: cuBLASLt's bias and activation
// epilogues write a column-major D, the bias holding one value per row of D. plan() asks the heuristic for
// several algorithms, autotune() times them and keeps the fastest, then 100 executes are timed with events.
import { DeviceBuffer, Event, Stream } from '../src';
import { Matmul, matrix } from '../src/math';
import { done, requireGpu } from './gpu-check';

const NAME = 'matmul-epilogue';
const [m, n, k] = [512, 384, 256];
const ITERATIONS = 100;

async function main(): Promise<[boolean, string]> {
  const device = requireGpu(NAME);
  device.setCurrent();
  const rnd = (i: number): number => Math.sin(i * 12.9898 + 78.233) * 0.5;
  const X = Float32Array.from({ length: m * k }, (_, i) => rnd(i)); // row-major m×k
  const W = Float32Array.from({ length: k * n }, (_, i) => rnd(i + 31337)); // column-major k×n
  const bias = Float32Array.from({ length: m }, (_, i) => Math.cos(i) * 0.25);

  using stream = Stream.create();
  using dX = DeviceBuffer.from(X);
  using dW = DeviceBuffer.from(W);
  using dBias = DeviceBuffer.from(bias);
  using dD = DeviceBuffer.alloc(m * n * 4, { stream });
  const x = matrix(dX, { dtype: 'f32', rows: m, cols: k });
  const w = matrix(dW, { dtype: 'f32', rows: k, cols: n, order: 'col' });
  const d = matrix(dD, { dtype: 'f32', rows: m, cols: n, order: 'col' });

  using mm = Matmul.create({ a: x, b: w, d, stream });
  mm.plan({ epilogue: 'RELU_BIAS', bias: dBias, algorithms: 8 });
  const operands = { a: x, b: w, d, bias: dBias };
  const times = await mm.autotune(operands);
  mm.execute(operands);
  await stream.synchronized();
  const D = dD.toArray(Float32Array);

  let bad = 0;
  let maxErr = 0;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = bias[i];
      let mag = Math.abs(s);
      for (let l = 0; l < k; l++) {
        s += X[i * k + l] * W[j * k + l];
        mag += Math.abs(X[i * k + l] * W[j * k + l]);
      }
      const err = Math.abs(D[j * m + i] - Math.max(0, s));
      maxErr = Math.max(maxErr, err);
      if (!(err <= 2e-6 * k * (mag + 1))) bad++;
    }
  }

  using start = Event.create();
  using end = Event.create();
  start.record(stream);
  for (let i = 0; i < ITERATIONS; i++) mm.execute(operands);
  end.record(stream);
  await end.synchronized();
  const ms = start.elapsed(end) / ITERATIONS;
  const tflops = (2 * m * n * k) / (ms * 1e-3) / 1e12;
  const detail = `${m}x${n}x${k} ReLU(X·W + bias) on ${device.name}: ${bad} element(s) off, max |error| ${maxErr.toExponential(2)}; ${mm.algorithms.length} algorithm(s) timed (${times.map((t) => t.toFixed(4)).join(', ')} ms), #${mm.selected} kept: ${ms.toFixed(4)} ms per execute = ${tflops.toFixed(2)} TFLOP/s`;
  return [bad === 0, detail];
}

main().then(
  ([ok, detail]) => done(NAME, ok, detail),
  (e) => done(NAME, false, (e instanceof Error ? e.message : String(e)).split('\n')[0]),
);
