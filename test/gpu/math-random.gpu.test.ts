// RandomGenerator on a GPU: the statistics of each distribution within stated tolerances (mean and
// variance within 6 standard errors), every generator kind, odd counts and unaligned outputs for the
// paired normal fills (neighbouring memory untouched), reproducibility by seed and offset, quasi
// generators, streams and closing. Skips with one reason where there is no GPU.
import { Device, DeviceBuffer, Stream } from '../../src';
import { StridedView } from '../../src/memory/strided-view';
import { RandomGenerator, type RandomKind } from '../../src/math/random';
import { describeGpu } from './gpu-env';

function moments(xs: ArrayLike<number>): { mean: number; variance: number } {
  let sum = 0;
  for (let i = 0; i < xs.length; i++) sum += xs[i];
  const mean = sum / xs.length;
  let sq = 0;
  for (let i = 0; i < xs.length; i++) sq += (xs[i] - mean) ** 2;
  return { mean, variance: sq / (xs.length - 1) };
}

/** Checks the sample mean and variance of `xs` against a distribution's (`kurtosis`: its fourth standardized moment). */
function expectMoments(xs: ArrayLike<number>, mean: number, variance: number, kurtosis: number, label: string): void {
  const n = xs.length;
  const m = moments(xs);
  const seMean = Math.sqrt(variance / n);
  const seVar = variance * Math.sqrt((kurtosis - 1) / n);
  console.log(
    `${label}: mean ${m.mean.toFixed(5)} (expected ${mean}, ±${(6 * seMean).toExponential(1)}), variance ${m.variance.toFixed(5)} (expected ${variance.toFixed(5)}, ±${(6 * seVar).toExponential(1)})`,
  );
  expect(Math.abs(m.mean - mean)).toBeLessThan(6 * seMean);
  expect(Math.abs(m.variance - variance)).toBeLessThan(6 * seVar);
}

describeGpu('Random objects (cuRAND)', () => {
  let stream: Stream;
  beforeAll(() => {
    Device.get(0).setCurrent();
    stream = Stream.create();
  });
  afterAll(() => stream.close());

  const readF32 = (b: DeviceBuffer) => (stream.synchronize(), b.toArray(Float32Array));
  const readF64 = (b: DeviceBuffer) => (stream.synchronize(), b.toArray(Float64Array));

  test.each(['philox4_32_10', 'xorwow', 'mrg32k3a', 'mtgp32', 'mt19937'] as RandomKind[])(
    '%s: uniform f32 in (0, 1] with mean 1/2 and variance 1/12',
    (kind) => {
      const n = 1 << 20;
      using gen = RandomGenerator.create({ kind, seed: 1234, stream });
      using buf = DeviceBuffer.alloc(n * 4, { stream });
      gen.uniform(buf, { dtype: 'f32' });
      const xs = readF32(buf);
      expect(xs.every((x) => x > 0 && x <= 1)).toBe(true);
      expectMoments(xs, 0.5, 1 / 12, 1.8, `${kind} uniform`);
    },
  );

  test('uniform f64 through a view; normal f64 with mean 3 and std 2', () => {
    const n = 1 << 20;
    using gen = RandomGenerator.create({ seed: 99, stream });
    using buf = DeviceBuffer.alloc(n * 8, { stream });
    const view = StridedView.of(buf, { dtype: 'f64', shape: [1024, 1024] });
    gen.uniform(view);
    expectMoments(readF64(buf), 0.5, 1 / 12, 1.8, 'uniform f64');
    gen.normal(view, { mean: 3, std: 2 });
    expectMoments(readF64(buf), 3, 4, 3, 'normal f64');
  });

  test('normal f32 with an odd count fills every element (the last one through a scratch pair)', () => {
    const n = 1_000_001;
    using gen = RandomGenerator.create({ kind: 'xorwow', seed: 5, stream });
    using buf = DeviceBuffer.alloc(n * 4, { stream });
    buf.memset(0x7fc00000, { width: 4, stream }); // NaN everywhere first
    gen.normal(buf, { dtype: 'f32', mean: -1, std: 0.5 });
    const xs = readF32(buf);
    expect(xs.every((x) => Number.isFinite(x))).toBe(true);
    expectMoments(xs, -1, 0.25, 3, 'normal f32 odd count');
  });

  test.each([
    ['odd count at an aligned address', 0, 7],
    ['even count at an unaligned address', 4, 8],
    ['odd count at an unaligned address', 4, 9],
    ['one element', 4, 1],
  ])('normal / log-normal: %s writes exactly its elements', (_label, byteOffset, count) => {
    using gen = RandomGenerator.create({ seed: 11, stream });
    using buf = DeviceBuffer.alloc(64 * 4, { stream });
    for (const fill of ['normal', 'logNormal'] as const) {
      buf.memset(0x7fc00000, { width: 4, stream });
      gen[fill](StridedView.of(buf, { dtype: 'f32', shape: [count], byteOffset }));
      const xs = readF32(buf);
      const first = byteOffset / 4;
      for (let i = 0; i < xs.length; i++) {
        const inside = i >= first && i < first + count;
        expect([i, Number.isNaN(xs[i])]).toEqual([i, !inside]);
        if (inside && fill === 'logNormal') expect(xs[i]).toBeGreaterThan(0);
      }
    }
  });

  test('log-normal f64: log of the values has the normal parameters', () => {
    const n = 1 << 20;
    using gen = RandomGenerator.create({ kind: 'mrg32k3a', seed: 21, stream });
    using buf = DeviceBuffer.alloc(n * 8, { stream });
    gen.logNormal(buf, { dtype: 'f64', mean: 0.5, std: 0.25 });
    const xs = readF64(buf);
    expect(xs.every((x) => x > 0)).toBe(true);
    expectMoments(xs.map(Math.log), 0.5, 0.0625, 3, 'log of log-normal');
  });

  test('Poisson u32 of lambda 4.5: mean and variance 4.5', () => {
    const n = 1 << 20;
    using gen = RandomGenerator.create({ seed: 3, stream });
    using buf = DeviceBuffer.alloc(n * 4, { stream });
    gen.poisson(StridedView.of(buf, { dtype: 'u32', shape: [n] }), 4.5);
    stream.synchronize();
    const ks = buf.toArray(Uint32Array);
    expectMoments(ks, 4.5, 4.5, 3 + 1 / 4.5, 'poisson 4.5');
  });

  test('reproducible: the same seed and offset give the same bits; another seed or offset does not', () => {
    const n = 4096;
    const draw = (seed: number, offset?: number) => {
      using gen = RandomGenerator.create({ seed, offset, stream });
      using buf = DeviceBuffer.alloc(n * 4, { stream });
      gen.bits(buf);
      stream.synchronize();
      return buf.toArray(Uint32Array);
    };
    const a = draw(42);
    expect(draw(42)).toEqual(a);
    expect(draw(42, 0)).toEqual(a);
    const differing = (x: Uint32Array) => x.filter((v, i) => v !== a[i]).length;
    expect(differing(draw(43))).toBeGreaterThan(n * 0.99);
    expect(differing(draw(42, 1000))).toBeGreaterThan(n * 0.99);
    expect(draw(42, 1000)).toEqual(draw(42, 1000));
  });

  test('the sequence continues from fill to fill; setSeed restarts it', () => {
    using gen = RandomGenerator.create({ seed: 8, stream });
    using a = DeviceBuffer.alloc(1024 * 4, { stream });
    using b = DeviceBuffer.alloc(1024 * 4, { stream });
    gen.uniform(a, { dtype: 'f32' });
    gen.uniform(b, { dtype: 'f32' });
    expect(readF32(b)).not.toEqual(readF32(a));
    gen.setSeed(8).setOffset(0);
    gen.uniform(b, { dtype: 'f32' });
    expect(readF32(b)).toEqual(readF32(a));
  });

  test('quasi: Sobol32 (2 dimensions) is evenly spread; scrambled Sobol64 gives u64 bits', () => {
    using sobol = RandomGenerator.create({ kind: 'sobol32', dimensions: 2, stream });
    using buf = DeviceBuffer.alloc(2 * 4096 * 4, { stream });
    sobol.uniform(buf, { dtype: 'f32' });
    const xs = readF32(buf);
    for (let d = 0; d < 2; d++) {
      const dim = xs.subarray(d * 4096, (d + 1) * 4096); // cuRAND lays out quasi results dimension by dimension
      const m = moments(dim).mean;
      expect(Math.abs(m - 0.5)).toBeLessThan(1e-3); // far tighter than a pseudo generator's 4.5e-3 standard error
    }
    expect(() => sobol.uniform(StridedView.of(buf, { dtype: 'f32', shape: [3] }))).toThrow(RangeError);
    using s64 = RandomGenerator.create({ kind: 'scrambled_sobol64', stream });
    using wide = DeviceBuffer.alloc(256 * 8, { stream });
    s64.bits(wide);
    stream.synchronize();
    expect(new Set(wide.toArray(BigUint64Array)).size).toBe(256);
  });

  test('streams and closing: setStream, a generator outliving its stream object, close twice', () => {
    const other = Stream.create();
    const gen = RandomGenerator.create({ seed: 1 });
    gen.setStream(other);
    expect(gen.stream).toBe(other);
    using buf = DeviceBuffer.alloc(1000 * 4);
    gen.uniform(buf, { dtype: 'f32' });
    other.synchronize();
    expect(buf.toArray(Float32Array).every((x) => x > 0 && x <= 1)).toBe(true);
    other.close();
    expect(() => gen.uniform(buf, { dtype: 'f32' })).toThrow(/RandomGenerator.uniform/);
    gen.close();
    gen.close();
    expect(gen.closed).toBe(true);
  });
});
