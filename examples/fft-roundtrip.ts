// cuFFT round trip: forward then inverse C2C FFT of a known 2^16-point complex signal:
// `npx tsx examples/fft-roundtrip.ts`.
//
// x[t] = 3·e^{2πi·K1·t/N} + cos(2π·K2·t/N). cuFFT's forward transform (CUFFT_FORWARD, e^{−2πi·kt/N}) puts
// 3N in bin K1 and N/2 in bins K2 and N − K2, ~0 elsewhere; cuFFT does not normalize, so
// inverse(forward(x)) = N·x. Checks both, with the tolerances stated in the final line.
import * as cufft from '../generated/13.0/cufft';
import { DeviceBuffer, Event, Stream } from '../src';
import { done, requireGpu } from './gpu-check';

const NAME = 'fft-roundtrip';
const N = 1 << 16;
const K1 = 1234;
const K2 = 5000;
const ROUNDTRIP_TOL = 2e-5; // max |y − N·x| ≤ ROUNDTRIP_TOL · N · max|x| (fp32 FFT error grows like u·log2 N)
const PEAK_TOL = 2e-6; // |X[k] − expected| ≤ PEAK_TOL · N · max|x| at every bin

async function main(): Promise<[boolean, string]> {
  const device = requireGpu(NAME);
  device.setCurrent();
  // interleaved (re, im) fp32: cufftComplex
  const x = new Float32Array(2 * N);
  for (let t = 0; t < N; t++) {
    const a1 = (2 * Math.PI * ((K1 * t) % N)) / N; // reduce k·t mod N first: exact angles
    const a2 = (2 * Math.PI * ((K2 * t) % N)) / N;
    x[2 * t] = 3 * Math.cos(a1) + Math.cos(a2);
    x[2 * t + 1] = 3 * Math.sin(a1);
  }
  let maxAbsX = 0;
  for (let t = 0; t < N; t++) maxAbsX = Math.max(maxAbsX, Math.hypot(x[2 * t], x[2 * t + 1]));

  using stream = Stream.create();
  using start = Event.create();
  using mid = Event.create();
  using end = Event.create();
  using dX = DeviceBuffer.from(x);
  using dSpec = DeviceBuffer.alloc(2 * N * 4);
  using dY = DeviceBuffer.alloc(2 * N * 4);
  using fft = {
    plan: cufft.cufftPlan1d(N, cufft.cufftType.CUFFT_C2C, 1),
    [Symbol.dispose]() {
      cufft.cufftDestroy(this.plan);
    },
  };
  cufft.cufftSetStream(fft.plan, stream.handle);

  start.record(stream);
  cufft.cufftExecC2C(fft.plan, dX, dSpec, cufft.CUFFT_FORWARD); // out of place
  mid.record(stream);
  cufft.cufftExecC2C(fft.plan, dSpec, dY, cufft.CUFFT_INVERSE);
  end.record(stream);
  await end.synchronized();
  const fwdMs = start.elapsed(mid);
  const invMs = mid.elapsed(end);
  const X = dSpec.toArray(Float32Array);
  const y = dY.toArray(Float32Array);
  const problems: string[] = [];

  // spectrum: every bin against the expected one
  const expected = (k: number): [number, number] => {
    let re = 0;
    if (k === K1) re += 3 * N;
    if (k === K2 || k === N - K2) re += N / 2;
    return [re, 0];
  };
  let spectrumErr = 0;
  let worstBin = 0;
  for (let k = 0; k < N; k++) {
    const [re, im] = expected(k);
    const err = Math.hypot(X[2 * k] - re, X[2 * k + 1] - im);
    if (!(err <= spectrumErr)) {
      spectrumErr = err;
      worstBin = k;
    }
  }
  const peakTol = PEAK_TOL * N * maxAbsX;
  const peak = `X[${K1}] = ${X[2 * K1].toFixed(2)}${X[2 * K1 + 1] < 0 ? '−' : '+'}${Math.abs(X[2 * K1 + 1]).toFixed(2)}i (expected ${3 * N}), |X[${K2}]| = ${Math.hypot(X[2 * K2], X[2 * K2 + 1]).toFixed(2)} (expected ${N / 2})`;
  if (!(spectrumErr <= peakTol)) problems.push(`spectrum off by ${spectrumErr.toExponential(2)} at bin ${worstBin} (> ${peakTol.toExponential(2)})`);

  // round trip: y = N·x
  let roundErr = 0;
  for (let t = 0; t < 2 * N; t++) {
    const err = Math.abs(y[t] - N * x[t]);
    if (!(err <= roundErr)) roundErr = err;
  }
  const roundTol = ROUNDTRIP_TOL * N * maxAbsX;
  if (!(roundErr <= roundTol)) problems.push(`round trip off by ${roundErr.toExponential(2)} (> ${roundTol.toExponential(2)})`);

  console.log(peak);
  const detail = `N=${N} C2C on ${device.name}: ${peak.split(',')[0]}; spectrum max error ${spectrumErr.toExponential(2)} ≤ ${peakTol.toExponential(2)}; inverse(forward(x)) = N·x within ${(roundErr / (N * maxAbsX)).toExponential(2)}·N·max|x| (tolerance ${ROUNDTRIP_TOL}); forward ${fwdMs.toFixed(3)} ms, inverse ${invMs.toFixed(3)} ms`;
  return problems.length ? [false, problems.join('; ')] : [true, detail];
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
