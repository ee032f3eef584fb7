// FftPlan and fft()/ifft()/… on a GPU against a CPU DFT (direct sums in float64): odd sizes, 2-D R2C/C2R
// round trips, 3-D, batches, single and double, strided and padded layouts, normalize, the plan cache,
// workspaces, streams, and the typed layer's CufftError. Skips with one reason where there is no GPU.
import { Device, DeviceBuffer, Stream } from '../../src';
import { StridedView } from '../../src/memory/strided-view';
import { loadCufft } from '../../src/releases';
import { FftPlan } from '../../src/math/fft';
import { fft, fftPlanCache, fftn, ifft, ifftn, irfftn, rfftn } from '../../src/math/fft-functions';
import { describeGpu } from './gpu-env';

type Cplx = Float64Array; // interleaved re, im

/** The DFT of `x` (interleaved complex, row-major `shape`) along every axis from `from` on; sign -1 forward. */
function dft(x: Cplx, shape: readonly number[], sign: number, from = 0): Cplx {
  let cur = Float64Array.from(x);
  for (let axis = from; axis < shape.length; axis++) {
    const n = shape[axis];
    const inner = shape.slice(axis + 1).reduce((a, b) => a * b, 1);
    const outer = shape.slice(0, axis).reduce((a, b) => a * b, 1);
    const next = new Float64Array(cur.length);
    for (let o = 0; o < outer; o++) {
      for (let i = 0; i < inner; i++) {
        for (let k = 0; k < n; k++) {
          let re = 0;
          let im = 0;
          for (let t = 0; t < n; t++) {
            const a = (sign * 2 * Math.PI * ((k * t) % n)) / n;
            const at = 2 * ((o * n + t) * inner + i);
            re += cur[at] * Math.cos(a) - cur[at + 1] * Math.sin(a);
            im += cur[at] * Math.sin(a) + cur[at + 1] * Math.cos(a);
          }
          const to = 2 * ((o * n + k) * inner + i);
          next[to] = re;
          next[to + 1] = im;
        }
      }
    }
    cur = next;
  }
  return cur;
}

/** Deterministic values in [-1, 1). */
function values(count: number, seed = 1): Float64Array {
  const v = new Float64Array(count);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < count; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    v[i] = s / 2 ** 31 - 1;
  }
  return v;
}

/** max |a − b| / max |b|. */
function relErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let err = 0;
  let ref = 0;
  for (let i = 0; i < b.length; i++) {
    err = Math.max(err, Math.abs(a[i] - b[i]));
    ref = Math.max(ref, Math.abs(b[i]));
  }
  return err / ref;
}

/** Real values as interleaved complex. */
const complexOf = (r: ArrayLike<number>): Cplx => {
  const c = new Float64Array(2 * r.length);
  for (let i = 0; i < r.length; i++) c[2 * i] = r[i];
  return c;
};

/** The first `half` entries of each row of the last axis (an R2C result's layout). */
function halfSpectrum(full: Cplx, shape: readonly number[]): Cplx {
  const n = shape[shape.length - 1];
  const half = Math.floor(n / 2) + 1;
  const rows = full.length / 2 / n;
  const out = new Float64Array(2 * rows * half);
  for (let r = 0; r < rows; r++) out.set(full.subarray(2 * r * n, 2 * (r * n + half)), 2 * r * half);
  return out;
}

const TOL = { single: 2e-5, double: 1e-12 };

describeGpu('FFT objects (cuFFT)', () => {
  let stream: Stream;
  beforeAll(() => {
    Device.get(0).setCurrent();
    stream = Stream.create();
  });
  afterAll(() => {
    fftPlanCache.clear();
    stream.close();
  });

  const upload = (data: Float32Array | Float64Array) => DeviceBuffer.from(data, { stream });
  const read = (v: StridedView | DeviceBuffer, ctor: typeof Float32Array | typeof Float64Array = Float32Array) => {
    stream.synchronize();
    return v instanceof StridedView ? (v.toArray() as Float32Array | Float64Array) : ctor === Float32Array ? v.toArray(Float32Array) : v.toArray(Float64Array);
  };

  test.each(['single', 'double'] as const)('C2C 1-D n = 97, batch 3, %s: equals the DFT; inverse(forward(x)) = n·x', (precision) => {
    const n = 97;
    const batch = 3;
    const x = values(2 * n * batch);
    const Arr = precision === 'single' ? Float32Array : Float64Array;
    using plan = FftPlan.create({ shape: [n], batch, precision, stream });
    using dx = upload(Arr.from(x));
    using dy = DeviceBuffer.alloc(x.length * Arr.BYTES_PER_ELEMENT, { stream });
    plan.forward(dx, dy);
    const expected = dft(x, [batch, n], -1, 1);
    const err = relErr(read(dy, Arr), expected);
    console.log(`C2C ${precision} n=97×3: rel error ${err.toExponential(2)}`);
    expect(err).toBeLessThan(TOL[precision]);
    plan.inverse(dy);
    expect(
      relErr(
        read(dy, Arr),
        x.map((v) => v * n),
      ),
    ).toBeLessThan(TOL[precision]);
  });

  test.each(['single', 'double'] as const)(
    'R2C / C2R 2-D 12×35, batch 2, %s: spectrum equals the DFT, the round trip (normalize backward) returns x',
    (precision) => {
      const shape = [12, 35];
      const batch = 2;
      const real = precision === 'single' ? 'f32' : 'f64';
      const complex = precision === 'single' ? 'c64' : 'c128';
      const Arr = precision === 'single' ? Float32Array : Float64Array;
      const x = values(batch * 12 * 35, 7);
      using dx = upload(Arr.from(x));
      using dspec = DeviceBuffer.alloc(batch * 12 * 18 * 2 * Arr.BYTES_PER_ELEMENT, { stream });
      using dback = DeviceBuffer.alloc(x.length * Arr.BYTES_PER_ELEMENT, { stream });
      const vx = StridedView.of(dx, { dtype: real, shape: [batch, ...shape] });
      const vspec = StridedView.of(dspec, { dtype: complex, shape: [batch, 12, 18] });
      const vback = StridedView.of(dback, { dtype: real, shape: [batch, ...shape] });
      using fwd = FftPlan.like(vx, vspec, { rank: 2, stream });
      using inv = FftPlan.like(vspec, vback, { rank: 2, stream, normalize: 'backward' });
      expect([fwd.type, inv.type, fwd.batch]).toEqual(['r2c', 'c2r', 2]);
      fwd.forward(vx, vspec);
      const expected = halfSpectrum(dft(complexOf(x), [batch, ...shape], -1, 1), [batch, ...shape]);
      expect(relErr(read(vspec), expected)).toBeLessThan(TOL[precision]);
      inv.inverse(vspec, vback); // C2R overwrites vspec (cuFFT's rule)
      expect(relErr(read(vback), x)).toBeLessThan(TOL[precision]);
    },
  );

  test('3-D C2C 6×10×7 double through fftn/ifftn (normalize backward by default)', () => {
    const shape = [6, 10, 7];
    const x = values(2 * 6 * 10 * 7, 3);
    using dx = upload(x);
    const vx = StridedView.of(dx, { dtype: 'c128', shape });
    const X = fftn(vx, { stream });
    expect(X.shape).toEqual(shape);
    expect(relErr(read(X), dft(x, shape, -1))).toBeLessThan(TOL.double);
    const back = ifftn(X, { stream });
    expect(relErr(read(back), x)).toBeLessThan(TOL.double);
    X.buffer.close();
    back.buffer.close();
  });

  test('strided input: the columns of a 16×9 matrix (a transposed view), single', () => {
    const rows = 16;
    const cols = 9;
    const x = values(2 * rows * cols, 11);
    using dx = upload(Float32Array.from(x));
    using dy = DeviceBuffer.alloc(x.length * 4, { stream });
    const columns = StridedView.of(dx, { dtype: 'c64', shape: [rows, cols] }).transpose(); // [9, 16] strides [1, 9]
    const out = StridedView.of(dy, { dtype: 'c64', shape: [cols, rows] });
    using plan = FftPlan.like(columns, out, { rank: 1, stream });
    expect(plan.input.strides).toEqual([1, 9]);
    plan.forward(columns, out);
    const transposed = new Float64Array(x.length);
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) transposed.set(x.subarray(2 * (r * cols + c), 2 * (r * cols + c) + 2), 2 * (c * rows + r));
    expect(relErr(read(out), dft(transposed, [cols, rows], -1, 1))).toBeLessThan(TOL.single);
  });

  test('padded rows (D2Z, rows of 35 reals 40 apart) and a padded output; elements in the gaps untouched', () => {
    const x = values(12 * 35, 5);
    const padded = new Float64Array(12 * 40).fill(1234.5);
    for (let r = 0; r < 12; r++) padded.set(x.subarray(r * 35, r * 35 + 35), r * 40);
    using dx = upload(padded);
    using dy = DeviceBuffer.from(new Float64Array(12 * 20 * 2).fill(-7), { stream });
    const vin = StridedView.of(dx, { dtype: 'f64', shape: [12, 35], strides: [40, 1] });
    const vout = StridedView.of(dy, { dtype: 'c128', shape: [12, 18], strides: [20, 1] });
    using plan = FftPlan.create({ shape: [12, 35], type: 'r2c', precision: 'double', inputStrides: [480, 40, 1], outputStrides: [240, 20, 1], stream });
    plan.forward(vin, vout);
    expect(relErr(read(vout), halfSpectrum(dft(complexOf(x), [12, 35], -1), [12, 35]))).toBeLessThan(TOL.double);
    const raw = read(dy, Float64Array);
    for (let r = 0; r < 12; r++) for (let k = 36; k < 40; k++) expect(raw[r * 40 + k]).toBe(-7); // the gap of each output row
  });

  test('fft()/ifft(): numpy scaling, the plan cache reuses one plan, out= writes in place', () => {
    fftPlanCache.clear();
    const n = 1000;
    const x = values(2 * n * 4, 9);
    using dx = upload(Float32Array.from(x));
    const vx = StridedView.of(dx, { dtype: 'c64', shape: [4, n] });
    const X = fft(vx, { stream });
    expect(fftPlanCache.size).toBe(1);
    expect(relErr(read(X), dft(x, [4, n], -1, 1))).toBeLessThan(TOL.single);
    const back = ifft(X, { stream, out: X }); // in place, the same layouts: the same plan serves both directions
    expect(back).toBe(X);
    expect(fftPlanCache.size).toBe(1);
    expect(relErr(read(back), x)).toBeLessThan(TOL.single);
    fft(vx, { stream, out: X });
    fft(vx, { stream, out: X, normalize: 'ortho' });
    expect(fftPlanCache.size).toBe(2); // another scaling: another plan
    X.buffer.close();
    fftPlanCache.maxSize = 1;
    expect(fftPlanCache.size).toBe(1);
    fftPlanCache.maxSize = 16;
  });

  test('rfftn/irfftn with ortho scaling keep the energy (Parseval)', () => {
    const x = values(8 * 30, 13);
    using dx = upload(Float32Array.from(x));
    const spec = rfftn(StridedView.of(dx, { dtype: 'f32', shape: [8, 30] }), { stream, normalize: 'ortho' });
    expect(spec.shape).toEqual([8, 16]);
    const s = read(spec);
    let energy = 0;
    for (let r = 0; r < 8; r++) {
      for (let k = 0; k < 16; k++) {
        const w = k === 0 || k === 15 ? 1 : 2; // the other half of the spectrum mirrors these
        energy += w * (s[2 * (r * 16 + k)] ** 2 + s[2 * (r * 16 + k) + 1] ** 2);
      }
    }
    const e0 = x.reduce((a, v) => a + v * v, 0);
    expect(Math.abs(energy - e0) / e0).toBeLessThan(1e-5);
    const back = irfftn(spec, { stream, normalize: 'ortho', n: 30 });
    expect(relErr(read(back), x)).toBeLessThan(TOL.single);
    spec.buffer.close();
    back.buffer.close();
  });

  test("workspace 'cufft' and 'pool' agree; setStream moves the plan; a closed stream is refused", () => {
    const n = 4096 * 3;
    const x = values(2 * n, 17);
    using dx = upload(Float32Array.from(x));
    using a = DeviceBuffer.alloc(dx.byteLength, { stream });
    using b = DeviceBuffer.alloc(dx.byteLength, { stream });
    using pool = FftPlan.create({ shape: [n], stream });
    using own = FftPlan.create({ shape: [n], stream, workspace: 'cufft' });
    expect(pool.workspaceBytes).toBeGreaterThanOrEqual(0);
    pool.forward(dx, a);
    own.forward(dx, b);
    expect(relErr(read(a), read(b))).toBeLessThan(1e-6);
    const other = Stream.create();
    pool.setStream(other);
    expect(pool.stream).toBe(other);
    pool.forward(dx, b);
    other.synchronize();
    expect(relErr(read(b), read(a))).toBeLessThan(1e-6);
    other.close(); // the plan still holds it: its native destroy waits for the plan
    expect(() => pool.forward(dx, b)).toThrow(/FftPlan.forward/);
  });

  test('errors: the typed layer throws CufftError on a destroyed handle; a closed plan is refused', () => {
    const plan = FftPlan.create({ shape: [64], stream });
    const h = plan.handle;
    plan.close();
    expect(() => plan.handle).toThrow(/FftPlan.handle/);
    const { CufftError, cufftGetSize } = loadCufft();
    expect(() => cufftGetSize(h)).toThrow(CufftError);
  });
});
