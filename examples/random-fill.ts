// cuRAND through RandomGenerator: `npx tsx examples/random-fill.ts`.
//
// One Philox generator (seed 2026) on a Stream fills device buffers, the count taken from each buffer:
// 2²⁴ + 1 normals of mean 10 and std 3 (an odd count, which cuRAND alone refuses), 2²⁰ log-normals and
// 2²⁰ Poisson counts of mean 7. Each sample's mean and variance must lie within 6 standard errors of
// the distribution's; a second generator with the same seed must give the same normals bit for bit.
import { DeviceBuffer, Event, Stream } from '../src';
import { StridedView } from '../src/memory/strided-view';
import { RandomGenerator } from '../src/math';
import { done, requireGpu } from './gpu-check';

const NAME = 'random-fill';
const SEED = 2026;
const N_NORMAL = (1 << 24) + 1;
const N = 1 << 20;

/** Mean and variance within 6 standard errors of (mean, variance) of a law of fourth moment `kurtosis`; a problem, or undefined. */
function check(label: string, xs: ArrayLike<number>, mean: number, variance: number, kurtosis: number, notes: string[]): string | undefined {
  let sum = 0;
  for (let i = 0; i < xs.length; i++) sum += xs[i];
  const m = sum / xs.length;
  let sq = 0;
  for (let i = 0; i < xs.length; i++) sq += (xs[i] - m) ** 2;
  const v = sq / (xs.length - 1);
  const seMean = Math.sqrt(variance / xs.length);
  const seVar = variance * Math.sqrt((kurtosis - 1) / xs.length);
  notes.push(`${label} mean ${m.toFixed(4)} var ${v.toFixed(4)}`);
  if (!(Math.abs(m - mean) < 6 * seMean)) return `${label}: mean ${m} is not within 6σ (${(6 * seMean).toExponential(1)}) of ${mean}`;
  if (!(Math.abs(v - variance) < 6 * seVar)) return `${label}: variance ${v} is not within 6σ (${(6 * seVar).toExponential(1)}) of ${variance}`;
  return undefined;
}

async function main(): Promise<[boolean, string]> {
  const device = requireGpu(NAME);
  device.setCurrent();
  using stream = Stream.create();
  using gen = RandomGenerator.create({ kind: 'philox4_32_10', seed: SEED, stream });
  using normals = DeviceBuffer.alloc(N_NORMAL * 4, { stream });
  using logNormals = DeviceBuffer.alloc(N * 8, { stream });
  using counts = DeviceBuffer.alloc(N * 4, { stream });
  using t0 = Event.create();
  using t1 = Event.create();
  t0.record(stream);
  gen.normal(normals, { dtype: 'f32', mean: 10, std: 3 });
  t1.record(stream);
  gen.logNormal(StridedView.of(logNormals, { dtype: 'f64', shape: [1024, 1024] }), { mean: 1, std: 0.5 });
  gen.poisson(StridedView.of(counts, { dtype: 'u32', shape: [N] }), 7);
  await t1.synchronized();
  const normalMs = t0.elapsed(t1);
  stream.synchronize();

  const problems: (string | undefined)[] = [];
  const notes: string[] = [];
  const xs = normals.toArray(Float32Array);
  problems.push(xs.every(Number.isFinite) ? undefined : 'a normal value was not written (odd count)');
  problems.push(check('normal', xs, 10, 9, 3, notes));
  problems.push(check('log of log-normal', logNormals.toArray(Float64Array).map(Math.log), 1, 0.25, 3, notes));
  problems.push(check('poisson', counts.toArray(Uint32Array), 7, 7, 3 + 1 / 7, notes));

  using again = RandomGenerator.create({ kind: 'philox4_32_10', seed: SEED, stream });
  using twin = DeviceBuffer.alloc(N_NORMAL * 4, { stream });
  again.normal(twin, { dtype: 'f32', mean: 10, std: 3 });
  stream.synchronize();
  const ys = twin.toArray(Float32Array);
  const same = xs.every((v, i) => v === ys[i]);
  if (!same) problems.push('the same seed gave different normals');

  const failed = problems.filter((p): p is string => p !== undefined);
  const detail = `${N_NORMAL} normals (odd count) in ${normalMs.toFixed(3)} ms on ${device.name}; ${notes.join('; ')}; same seed, same ${N_NORMAL} values: ${same}`;
  return failed.length ? [false, failed.join('; ')] : [true, detail];
}

main().then(
  ([ok, detail]) => done(NAME, ok, detail),
  (e) => done(NAME, false, (e instanceof Error ? e.message : String(e)).split('\n')[0]),
);
