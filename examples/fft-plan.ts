// An FftPlan made once and executed many times, and the one-line fft(): `npx tsx examples/fft-plan.ts`.
//
// A batch of 8 real 2-D signals of 256×384, x_b[r, c] = cos(2π(R_b·r/256 + C·c/384)), goes through an R2C
// plan: each spectrum holds N/2 = 256·384/2 at bin (R_b, C) and ~0 elsewhere. A C2R plan with
// normalize 'backward' brings the signals back exactly (numpy's ifft scaling; cuFFT alone would give N·x).
// The forward plan then runs 100 times (the plan and its pool workspace reused; Events time it), and
// fft()/ifft() on a complex vector show the cached-plan one-liner, like cupy.fft.fft.
import { DeviceBuffer, Event, Stream } from '../src';
import { StridedView } from '../src/memory/strided-view';
import { FftPlan, fft, fftPlanCache, ifft } from '../src/math';
import { done, requireGpu } from './gpu-check';

const NAME = 'fft-plan';
const BATCH = 8;
const ROWS = 256;
const COLS = 384;
const C = 40;
const rowBin = (b: number) => 3 + 5 * b;
const TOL = 1e-4; // fp32: errors relative to N = ROWS·COLS (spectrum) or to max|x| = 1 (round trip)

async function main(): Promise<[boolean, string]> {
  const device = requireGpu(NAME);
  device.setCurrent();
  const x = new Float32Array(BATCH * ROWS * COLS);
  for (let b = 0; b < BATCH; b++) {
    for (let r = 0; r < ROWS; r++) {
      for (let c = 0; c < COLS; c++) x[(b * ROWS + r) * COLS + c] = Math.cos(2 * Math.PI * (((rowBin(b) * r) % ROWS) / ROWS + ((C * c) % COLS) / COLS));
    }
  }
  const half = COLS / 2 + 1;
  using stream = Stream.create();
  using dx = DeviceBuffer.from(x, { stream });
  using dspec = DeviceBuffer.alloc(BATCH * ROWS * half * 8, { stream });
  using dback = DeviceBuffer.alloc(x.byteLength, { stream });
  using forward = FftPlan.create({ shape: [ROWS, COLS], type: 'r2c', batch: BATCH, stream });
  using inverse = FftPlan.create({ shape: [ROWS, COLS], type: 'c2r', batch: BATCH, stream, normalize: 'backward' });
  forward.forward(dx, dspec);
  const spec = (stream.synchronize(), dspec.toArray(Float32Array));
  inverse.inverse(dspec, dback); // C2R overwrites dspec, read above
  const back = (stream.synchronize(), dback.toArray(Float32Array));

  const N = ROWS * COLS;
  let specErr = 0;
  for (let b = 0; b < BATCH; b++) {
    for (let r = 0; r < ROWS; r++) {
      for (let k = 0; k < half; k++) {
        const at = 2 * ((b * ROWS + r) * half + k);
        const want = r === rowBin(b) && k === C ? N / 2 : 0;
        specErr = Math.max(specErr, Math.hypot(spec[at] - want, spec[at + 1]));
      }
    }
  }
  let roundErr = 0;
  for (let i = 0; i < x.length; i++) roundErr = Math.max(roundErr, Math.abs(back[i] - x[i]));

  using t0 = Event.create();
  using t1 = Event.create();
  t0.record(stream);
  for (let i = 0; i < 100; i++) forward.forward(dx, dspec);
  t1.record(stream);
  await t1.synchronized();
  const ms = t0.elapsed(t1) / 100;

  // the one-liner: a complex vector, forward and back (numpy scaling), one cached plan
  const n = 1000;
  const z = new Float32Array(2 * n).map((_, i) => Math.sin(i));
  using dz = DeviceBuffer.from(z, { stream });
  const Z = fft(StridedView.of(dz, { dtype: 'c64', shape: [n] }), { stream });
  const zz = ifft(Z, { stream, out: Z });
  const zBack = zz.toArray() as Float32Array;
  let zErr = 0;
  for (let i = 0; i < z.length; i++) zErr = Math.max(zErr, Math.abs(zBack[i] - z[i]));
  Z.buffer.close();
  const cached = fftPlanCache.size;
  fftPlanCache.clear();

  const problems: string[] = [];
  if (!(specErr <= TOL * N)) problems.push(`spectrum off by ${specErr.toExponential(2)} (> ${(TOL * N).toExponential(2)})`);
  if (!(roundErr <= TOL)) problems.push(`round trip off by ${roundErr.toExponential(2)}`);
  if (!(zErr <= TOL)) problems.push(`ifft(fft(z)) off by ${zErr.toExponential(2)}`);
  if (cached !== 1) problems.push(`fft and ifft of one layout should share one cached plan, found ${cached}`);
  const gbps = (x.byteLength + dspec.byteLength) / (ms * 1e6);
  const detail = `${BATCH}× R2C ${ROWS}×${COLS} on ${device.name}: peaks N/2 at (R_b, ${C}), spectrum max error ${specErr.toExponential(2)}; C2R with normalize 'backward' returns x within ${roundErr.toExponential(2)}; ${ms.toFixed(3)} ms per batched forward (${gbps.toFixed(0)} GB/s moved, workspace ${forward.workspaceBytes} B from the pool); fft/ifft one-liner within ${zErr.toExponential(2)}, ${cached} cached plan`;
  return problems.length ? [false, problems.join('; ')] : [true, detail];
}

main().then(
  ([ok, detail]) => done(NAME, ok, detail),
  (e) => done(NAME, false, (e instanceof Error ? e.message : String(e)).split('\n')[0]),
);
