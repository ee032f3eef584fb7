// FftPlan and fft()/ifft()/… without a GPU or cuFFT: every argument check throws its TypeError/RangeError
// before cuFFT loads, the layouts cuFFT is given, the cufftType codes, and what a valid execution hands
// to cuFFT (a plan over a fake handle, a driverless context and a spied exec function), and what the hot
// paths remember between calls (the last operands, the cached context binding, fft()'s last call).
import * as cufftTypes from '../../generated/13.0/cufft/types';
import * as releases from '../../src/releases';
import { DeviceBuffer } from '../../src/memory/device-buffer';
import { StridedView } from '../../src/memory/strided-view';
import { Stream } from '../../src/stream';
import { CUFFT_DIRECTION, CUFFT_TYPE, FftPlan } from '../../src/math/fft';
import { fft, fftPlanCache, fftn, ifft, irfft, rfft } from '../../src/math/fft-functions';
import { cufftLayout, geometryFromSizes, geometryFromViews, geometryKey, normalizeFactors, type FftGeometry } from '../../src/math/fft-layout';
import * as scaling from '../../src/math/fft-scale';
import { driverlessContext, fakeDriver, out } from '../helpers/fake-driver';
import { SEALED } from '../../src/sealed';

const ctx = driverlessContext();

const BASE_ADDRESS = 0x7f0000000000;
class FakeBuffer extends DeviceBuffer {
  constructor(bytes: number, address = BASE_ADDRESS) {
    super(SEALED, 'DeviceBuffer', address, bytes, ctx, () => undefined);
  }
}

const view = (dtype: 'f32' | 'f64' | 'c64' | 'c128', shape: number[], strides?: number[], bytes = 1 << 20, byteOffset = 0) =>
  StridedView.of(new FakeBuffer(bytes), { dtype, shape, strides, byteOffset });

let loader: jest.SpyInstance;
beforeEach(() => {
  loader = jest.spyOn(releases, 'loadCufft');
});
afterEach(() => {
  expect(loader).not.toHaveBeenCalled(); // no test here may load cuFFT
  jest.restoreAllMocks();
});

describe('codes', () => {
  test('CUFFT_TYPE and CUFFT_DIRECTION equal the generated enum and constants', () => {
    const T = cufftTypes.cufftType;
    expect(CUFFT_TYPE.single).toEqual({ c2c: T.CUFFT_C2C, r2c: T.CUFFT_R2C, c2r: T.CUFFT_C2R });
    expect(CUFFT_TYPE.double).toEqual({ c2c: T.CUFFT_Z2Z, r2c: T.CUFFT_D2Z, c2r: T.CUFFT_Z2D });
    expect(CUFFT_DIRECTION).toEqual({ forward: cufftTypes.CUFFT_FORWARD, inverse: cufftTypes.CUFFT_INVERSE });
  });
});

describe('layouts', () => {
  test('packed sides: embed, stride, dist; the complex side of r2c keeps n/2 + 1', () => {
    const g = geometryFromSizes('t', 'r2c', 'single', [12, 35], 4);
    expect(g.input).toMatchObject({ dtype: 'f32', shape: [4, 12, 35], strides: [420, 35, 1], extent: 1680, contiguous: true });
    expect(g.output).toMatchObject({ dtype: 'c64', shape: [4, 12, 18], strides: [216, 18, 1], extent: 864, contiguous: true });
    expect(cufftLayout('t', 'in', g.input.shape, g.input.strides)).toEqual({ embed: [12, 35], stride: 1, dist: 420 });
    expect(cufftLayout('t', 'out', g.output.shape, g.output.strides)).toEqual({ embed: [12, 18], stride: 1, dist: 216 });
    const c2r = geometryFromSizes('t', 'c2r', 'double', [97], 1);
    expect(c2r.input).toMatchObject({ dtype: 'c128', shape: [1, 49] });
    expect(c2r.output).toMatchObject({ dtype: 'f64', shape: [1, 97] });
  });

  test('padded rows, interleaved batches (a transposed view) and a 3-D layout', () => {
    // rows of 35 reals padded to 40 (in-place R2C style)
    expect(cufftLayout('t', 'in', [2, 12, 35], [480, 40, 1])).toEqual({ embed: [12, 40], stride: 1, dist: 480 });
    // FFT down the columns of a 5×8 matrix: batch stride 1, element stride 8
    expect(cufftLayout('t', 'in', [8, 5], [1, 8])).toEqual({ embed: [5], stride: 8, dist: 1 });
    expect(cufftLayout('t', 'in', [1, 3, 4, 5], [60, 20, 5, 1])).toEqual({ embed: [3, 4, 5], stride: 1, dist: 60 });
  });

  test('a layout cuFFT cannot address is a RangeError naming the side', () => {
    expect(() => cufftLayout('FftPlan.create', 'inputStrides', [1, 4, 5], [20, 7, 2])).toThrow(
      /FftPlan.create: inputStrides's stride 7 of transform axis 0 must be a whole multiple ≥ 5 of the next axis's stride 2/,
    );
    expect(() => cufftLayout('t', 'in', [1, 4, 5], [20, 4, 1])).toThrow(RangeError); // rows overlap
    expect(() => geometryFromSizes('FftPlan.create', 'c2c', 'single', [8], 2, [8, 0])).toThrow(/inputStrides\[1\] must be an integer ≥ 1, got 0/);
    expect(() => geometryFromSizes('FftPlan.create', 'c2c', 'single', [8], 2, [8])).toThrow(/inputStrides must be an array of 2 strides/);
  });

  test('views: batch axes collapse; types from dtypes; shapes checked', () => {
    const g = geometryFromViews('t', view('c64', [3, 4, 16]), view('c64', [3, 4, 16]), 1);
    expect(g).toMatchObject({ type: 'c2c', precision: 'single', n: [16], batch: 12 });
    expect(g.input.strides).toEqual([16, 1]);
    const r = geometryFromViews('t', view('f64', [12, 35]), view('c128', [12, 18]));
    expect(r).toMatchObject({ type: 'r2c', precision: 'double', n: [12, 35], batch: 1 });
    const c = geometryFromViews('t', view('c64', [2, 49]), view('f32', [2, 97]), 1);
    expect(c).toMatchObject({ type: 'c2r', n: [97], batch: 2 });
    expect(() => geometryFromViews('FftPlan.like', view('f32', [8]), view('f32', [8]))).toThrow(/FftPlan.like: no cuFFT transform takes f32 to f32/);
    expect(() => geometryFromViews('FftPlan.like', view('c64', [8]), view('c128', [8]))).toThrow(TypeError);
    expect(() => geometryFromViews('FftPlan.like', view('f32', [12, 35]), view('c64', [12, 35]))).toThrow(
      /output's transform axes are \[12,35\], expected \[12,18\]/,
    );
    expect(() => geometryFromViews('FftPlan.like', view('c64', [2, 2, 2, 2]), view('c64', [2, 2, 2, 2]))).toThrow(/rank must be 1 to 3.*give rank/);
    expect(() => geometryFromViews('FftPlan.like', view('c64', [4, 8]), view('c64', [5, 8]), 1)).toThrow(/batch axis 0 is 4 in the input, 5 in the output/);
    expect(() => geometryFromViews('FftPlan.like', view('c64', [4, 8]), view('c64', [4, 8, 1]), 1)).toThrow(/input has 2 axes, output 3/);
    expect(() => geometryFromViews('FftPlan.like', {} as never, view('c64', [8]))).toThrow(/input must be a StridedView/);
    // batch axes that do not collapse: [3, 4] with strides [100, 16]
    expect(() => geometryFromViews('FftPlan.like', view('c64', [3, 4, 16], [100, 16, 1]), view('c64', [3, 4, 16]), 1)).toThrow(
      /batch axes \[3,4\] with strides \[100,16\] do not collapse/,
    );
  });

  test('geometry keys differ by layout; normalize factors', () => {
    const a = geometryFromSizes('t', 'c2c', 'single', [1024], 1);
    const b = geometryFromSizes('t', 'c2c', 'double', [1024], 1);
    const c = geometryFromSizes('t', 'c2c', 'single', [1024], 1, [2048, 2]);
    expect(new Set([geometryKey(a), geometryKey(b), geometryKey(c)]).size).toBe(3);
    expect(normalizeFactors('none', 64)).toEqual({ forward: 1, inverse: 1 });
    expect(normalizeFactors('backward', 64)).toEqual({ forward: 1, inverse: 1 / 64 });
    expect(normalizeFactors('forward', 64)).toEqual({ forward: 1 / 64, inverse: 1 });
    expect(normalizeFactors('ortho', 64)).toEqual({ forward: 1 / 8, inverse: 1 / 8 });
  });
});

describe('FftPlan.create / FftPlan.like argument checks (cuFFT not loaded)', () => {
  test.each([
    [undefined, TypeError, /FftPlan.create: options must be an object/],
    [{ shape: [8], size: 3 }, TypeError, /unknown option 'size'/],
    [{ shape: [] }, TypeError, /shape must be an array of 1 to 3 transform sizes, got 0 entries/],
    [{ shape: [2, 2, 2, 2] }, TypeError, /got 4 entries/],
    [{ shape: [0] }, RangeError, /shape\[0\] must be an integer ≥ 1, got 0/],
    [{ shape: [1.5] }, RangeError, /shape\[0\]/],
    [{ shape: ['8'] }, TypeError, /shape\[0\] must be an integer/],
    [{ shape: [8], type: 'z2z' }, TypeError, /type must be one of 'c2c', 'r2c', 'c2r', got string "z2z"/],
    [{ shape: [8], precision: 'half' }, TypeError, /precision must be one of 'single', 'double'/],
    [{ shape: [8], batch: 0 }, RangeError, /batch must be an integer ≥ 1/],
    [{ shape: [8], normalize: 'unit' }, TypeError, /normalize must be one of 'none', 'backward', 'ortho', 'forward'/],
    [{ shape: [8], workspace: 'malloc' }, TypeError, /workspace must be one of 'pool', 'cufft'/],
    [{ shape: [8], inputStrides: [8, 1, 1] }, TypeError, /inputStrides must be an array of 2 strides/],
    [{ shape: [4, 5], outputStrides: [20, 3, 1] }, RangeError, /outputStrides's stride 3 of transform axis 0 must be a whole multiple ≥ 5/],
    [{ shape: [8], stream: 5 }, TypeError, /FftPlan.create: stream must be a Stream/],
  ])('%j', (options, type, message) => {
    expect(() => FftPlan.create(options as never)).toThrow(type);
    expect(() => FftPlan.create(options as never)).toThrow(message);
  });

  test('like: options and views', () => {
    expect(() => FftPlan.like(view('c64', [8]), view('c64', [8]), { rank: 1, axes: [0] } as never)).toThrow(/FftPlan.like: unknown option 'axes'/);
    expect(() => FftPlan.like(view('c64', [8]), view('c64', [8]), { rank: 0 })).toThrow(/rank must be an integer ≥ 1/);
    expect(() => FftPlan.like(view('c64', [8]), view('c64', [8]), { rank: 2 })).toThrow(/rank must be 1 to 3 and at most the views' 1 axes/);
    expect(() => FftPlan.like(view('c64', [8]), view('c64', [8]), null as never)).toThrow(/options must be an object/);
  });
});

type PlanCtor = new (...args: unknown[]) => FftPlan;
class FakeCufftError extends Error {
  constructor(
    readonly func: string,
    readonly code: number,
  ) {
    super(`${func}: cufftResult ${code}`);
  }
}
/** The parts of the typed module a made plan calls: exec is a spy returning CUFFT_SUCCESS. */
function fakeApi() {
  const exec = jest.fn((..._args: unknown[]) => 0);
  return { exec, api: { binder: { native: () => exec }, cufftSetStream: jest.fn(), cufftSetWorkArea: jest.fn(), CufftError: FakeCufftError } };
}
/** A plan over a fake handle (7) on `stream` (default: a driverless context's legacy stream). */
function fakePlan(g: FftGeometry, normalize: 'none' | 'backward' | 'ortho' = 'none', stream = Stream.legacyDefault(ctx)) {
  const { exec, api } = fakeApi();
  const plan = new (FftPlan as unknown as PlanCtor)(SEALED, g, stream, 7, { workspace: undefined }, 0, normalize, api);
  // closing must not reach cuFFT here: the destroy is replaced
  (plan.core as unknown as { destroyNative: () => void }).destroyNative = () => undefined;
  return { plan, exec, api };
}

describe('FftPlan executions (fake plan)', () => {
  test("forward/inverse hand cuFFT the operands' addresses and the direction", () => {
    const { plan, exec } = fakePlan(geometryFromSizes('t', 'c2c', 'single', [16], 4));
    const a = view('c64', [4, 16], undefined, 4096, 64);
    const b = new FakeBuffer(512, 0x7f0000100000);
    expect(plan.forward(a, b)).toBe(b);
    expect(exec).toHaveBeenLastCalledWith(7, 0x7f0000000000 + 64, 0x7f0000100000, -1);
    plan.inverse(b);
    expect(exec).toHaveBeenLastCalledWith(7, 0x7f0000100000, 0x7f0000100000, 1);
    expect(plan.toString()).toBe('FftPlan(c2c single [16] × 4)');
    expect(plan.handle).toBe(7);
    expect(() => plan.setStream(5 as never)).toThrow(/FftPlan.setStream: stream must be a Stream/);
    plan.close();
    expect(() => plan.forward(a, b)).toThrow(/FftPlan.forward.*closed/);
    expect(() => plan.handle).toThrow(/FftPlan.handle.*closed/);
  });

  test('close() destroys the handle once, with or without using', () => {
    const destroyed = jest.fn();
    {
      using plan = fakePlan(geometryFromSizes('t', 'c2c', 'single', [16], 1)).plan;
      (plan.core as unknown as { destroyNative: () => void }).destroyNative = destroyed;
      plan.close();
    }
    expect(destroyed).toHaveBeenCalledTimes(1);
  });

  test('operands that do not match the plan are refused before cuFFT', () => {
    const { plan, exec } = fakePlan(geometryFromSizes('t', 'r2c', 'single', [12, 35], 2));
    const real = view('f32', [2, 12, 35]);
    const spec = view('c64', [2, 12, 18]);
    expect(() => plan.inverse(spec, real)).toThrow(/FftPlan.inverse: an r2c plan transforms forward only/);
    expect(() => plan.forward(real)).toThrow(/in-place r2c transform needs two views/);
    expect(() => plan.forward(view('f64', [2, 12, 35]), spec)).toThrow(/FftPlan.forward: input holds f64, the plan takes f32/);
    expect(() => plan.forward(real, view('c64', [2, 12, 35]))).toThrow(/output has shape \[2,12,35\].*the plan's output is shape \[2,12,18\]/);
    expect(() => plan.forward(real, new FakeBuffer(100))).toThrow(/output holds 100 bytes, the plan's output needs 3456/);
    expect(() => plan.forward(new Float32Array(840) as never, spec)).toThrow(/input must be a DeviceBuffer or a StridedView.*host array/);
    expect(exec).not.toHaveBeenCalled();
    plan.forward(real, spec);
    expect(exec).toHaveBeenCalledTimes(1);
    plan.close();
  });

  test('a view may leave out a batch axis of 1 or split the batch over collapsing axes', () => {
    const { plan, exec } = fakePlan(geometryFromSizes('t', 'c2c', 'double', [8], 6));
    plan.forward(view('c128', [2, 3, 8]), view('c128', [6, 8]));
    expect(exec).toHaveBeenCalledTimes(1);
    expect(() => plan.forward(view('c128', [3, 2, 8]), view('c128', [6, 8], [16, 1]))).toThrow(RangeError);
    plan.close();
    const single = fakePlan(geometryFromSizes('t', 'c2c', 'single', [8], 1));
    single.plan.forward(view('c64', [8]), view('c64', [1, 8]));
    expect(single.exec).toHaveBeenCalledTimes(1);
    single.plan.close();
  });

  test('a strided plan takes views, not bare buffers; in place needs equal layouts', () => {
    const { plan } = fakePlan(geometryFromSizes('t', 'c2c', 'single', [8], 2, [16, 2], [8, 1]));
    expect(() => plan.forward(new FakeBuffer(1024), view('c64', [2, 8]))).toThrow(
      /the plan's input is strided: pass a StridedView of shape \[2,8\] strides \[16,2\]/,
    );
    const buf = new FakeBuffer(1024);
    const strided = StridedView.of(buf, { dtype: 'c64', shape: [2, 8], strides: [16, 2] });
    const packed = StridedView.of(buf, { dtype: 'c64', shape: [2, 8] });
    expect(() => plan.forward(strided, packed)).toThrow(/in place, the input and output layouts must be equal/);
    plan.close();
    const c2r = fakePlan(geometryFromSizes('t', 'c2r', 'single', [8], 1));
    expect(() => c2r.plan.forward(view('c64', [5]), view('f32', [8]))).toThrow(/FftPlan.forward: a c2r plan transforms inverse only/);
    c2r.plan.close();
  });
});

describe('what the hot path remembers between calls', () => {
  const A = BASE_ADDRESS;
  const B = BASE_ADDRESS + 0x100000;
  const C = BASE_ADDRESS + 0x200000;

  test('the last operands skip their checks, yet another buffer, a closed one or a closed plan is seen', () => {
    const { plan, exec } = fakePlan(geometryFromSizes('t', 'c2c', 'single', [16], 1));
    const a = new FakeBuffer(128, A);
    const b = new FakeBuffer(128, B);
    const c = new FakeBuffer(128, C);
    plan.forward(a, b);
    plan.forward(a, b);
    plan.forward(a, c);
    plan.inverse(c, a);
    plan.inverse(c);
    expect(exec.mock.calls).toEqual([
      [7, A, B, -1],
      [7, A, B, -1],
      [7, A, C, -1],
      [7, C, A, 1],
      [7, C, C, 1],
    ]);
    // views over the same memory are other operands: checked, then remembered in turn
    const va = StridedView.of(a, { dtype: 'c64', shape: [16] });
    expect(() => plan.forward(va, StridedView.of(b, { dtype: 'c64', shape: [8] }))).toThrow(/FftPlan.forward: output has shape \[8\]/);
    plan.forward(va, c);
    expect(exec).toHaveBeenLastCalledWith(7, A, C, -1);
    c.close(); // the operands of the last call: a close moves the validity count, so they are checked again
    expect(() => plan.forward(va, c)).toThrow(/closed/);
    expect(exec).toHaveBeenCalledTimes(6);
    plan.close();
    expect(() => plan.forward(a, b)).toThrow(/FftPlan.forward.*closed/);
  });

  test('a created stream trusts the last bind; a failure under another context binds and calls once more', () => {
    let current: number = ctx.handle;
    const fake = fakeDriver(ctx, {
      cuCtxGetCurrent: (slot: unknown) => out(slot, current),
      cuCtxSetCurrent: (h: number) => ((current = h), 0),
      cuStreamDestroy: () => 0,
    });
    const bind = jest.spyOn(ctx, 'bind');
    try {
      const { plan, exec, api } = fakePlan(geometryFromSizes('t', 'c2c', 'single', [16], 1));
      const a = new FakeBuffer(128, A);
      const b = new FakeBuffer(128, B);
      plan.forward(a, b);
      plan.forward(a, b);
      expect(bind).toHaveBeenCalledTimes(2); // the legacy default stream is the current context's: a real bind per call
      const created = Stream.adoptCreated(0x5e00 as never, ctx);
      plan.setStream(created);
      expect(api.cufftSetStream).toHaveBeenLastCalledWith(7, 0x5e00);
      plan.forward(a, b); // may bind for real once: the door's last bind may have been another context's
      const calls = fake.calls.length;
      bind.mockClear();
      for (let i = 0; i < 3; i++) plan.forward(a, b);
      expect(fake.calls.slice(calls)).toEqual([]); // no cuCtxGetCurrent per call
      expect(bind).not.toHaveBeenCalled();
      expect(exec).toHaveBeenCalledTimes(6);
      // native code made another context current behind the door's back: the call fails, the plan binds, calls again
      current = 0x9999;
      exec.mockImplementationOnce(() => 6);
      plan.forward(a, b);
      expect(exec).toHaveBeenCalledTimes(8);
      expect(bind).toHaveBeenCalledTimes(1);
      // a failure under the plan's own context is cuFFT's: thrown, not retried
      current = ctx.handle;
      exec.mockImplementationOnce(() => 6);
      expect(() => plan.forward(a, b)).toThrow(FakeCufftError);
      expect(exec).toHaveBeenCalledTimes(9);
      // back on a default stream: a real bind per call again
      plan.setStream(Stream.legacyDefault(ctx));
      bind.mockClear();
      plan.forward(a, b);
      expect(bind).toHaveBeenCalledTimes(1);
      plan.close();
      created.close();
    } finally {
      bind.mockRestore();
      fake.restore();
    }
  });

  test('R2C and C2R are called without a direction (the C functions take three arguments)', () => {
    const r2c = fakePlan(geometryFromSizes('t', 'r2c', 'double', [16], 1));
    r2c.plan.forward(new FakeBuffer(128, A), new FakeBuffer(144, B));
    expect(r2c.exec.mock.calls).toEqual([[7, A, B]]);
    r2c.plan.close();
  });
});

describe('normalize: the scaling launch', () => {
  test('scalePlan pads [batch, …axes] to four axes, strides in real scalars', () => {
    const g = geometryFromSizes('t', 'r2c', 'single', [12, 35], 4, undefined, [432, 24, 1]);
    expect(scaling.scalePlan(g.output)).toEqual({ double: false, total: 4 * 12 * 18 * 2, extents: [1, 12, 18], strides: [864, 0, 48, 2], comps: 2, grid: 7 });
    const real = geometryFromSizes('t', 'c2r', 'double', [97], 3).output;
    expect(scaling.scalePlan(real)).toEqual({ double: true, total: 291, extents: [1, 1, 97], strides: [97, 0, 0, 1], comps: 1, grid: 2 });
  });

  test('the factor follows the direction: backward scales the inverse by 1/n, ortho both by 1/√n', () => {
    const spy = jest.spyOn(scaling, 'scaleSide').mockImplementation(() => undefined);
    const back = fakePlan(geometryFromSizes('t', 'c2c', 'single', [16], 4), 'backward');
    const buf = new FakeBuffer(4096);
    back.plan.forward(buf);
    expect(spy).not.toHaveBeenCalled();
    back.plan.inverse(buf);
    expect(spy).toHaveBeenLastCalledWith(back.plan.stream, BASE_ADDRESS, expect.objectContaining({ total: 128, comps: 2 }), 1 / 16);
    back.plan.close();
    const ortho = fakePlan(geometryFromSizes('t', 'c2c', 'single', [4, 4], 1), 'ortho');
    ortho.plan.forward(buf);
    expect(spy).toHaveBeenLastCalledWith(ortho.plan.stream, BASE_ADDRESS, expect.anything(), 1 / 4);
    ortho.plan.close();
  });
});

describe('fft() and its kin: argument checks (cuFFT not loaded)', () => {
  test.each([
    ['fft', () => fft(view('f32', [8]))],
    ['ifft', () => ifft(view('c128', [8]), { n: 4 } as never)],
    ['rfft', () => rfft(view('c64', [8]))],
    ['irfft', () => irfft(view('c64', [5]), { n: 12 })],
    ['fftn', () => fftn(view('c64', [2, 2, 2, 2]))],
    ['fft', () => fft(new FakeBuffer(64))],
    ['fft', () => fft(new FakeBuffer(64), { dtype: 'c64', out: view('c64', [4]) })],
    ['fft', () => fft(view('c64', [8]), { out: view('c128', [8]) })],
    ['fft', () => fft(view('c64', [8]), { out: new FakeBuffer(32) })],
    ['fft', () => fft(view('c64', [8]), { normalize: 'unit' as never })],
    ['fft', () => fft(view('c64', [8]), { stream: {} as never })],
    ['fft', () => fft(view('c64', [8]), { dtype: 'c128' })],
    ['rfft', () => rfft(view('f32', [8]), { out: view('c64', [8]) })],
  ])('%s refuses bad arguments with its name', (name, call) => {
    expect(call).toThrow(new RegExp(`^${name}: `));
  });

  test('messages say what to do', () => {
    expect(() => fft(view('f32', [8]))).toThrow(/fft: x holds f32, fft takes c64 or c128 \(use rfft for real input\)/);
    expect(() => irfft(view('c64', [5]), { n: 12 })).toThrow(/irfft: n = 12 needs 7 complex values on the last axis, x has 5/);
    expect(() => fft(new FakeBuffer(64))).toThrow(/fft: x is a DeviceBuffer without a dtype/);
    expect(() => fft(view('c64', [8]), { out: new FakeBuffer(32) })).toThrow(/fft: out holds 32 bytes, the result needs 64/);
  });

  test('a call like the one before reuses its plan and layouts; other operands, options or streams are honoured', () => {
    const fake = fakeDriver(ctx, { cuStreamDestroy: () => 0 });
    const made: ReturnType<typeof fakePlan>[] = [];
    jest.spyOn(FftPlan, 'make').mockImplementation((_where, g, o) => {
      made.push(fakePlan(g, o.normalize as 'none', o.stream as Stream));
      return made[made.length - 1].plan;
    });
    const X = BASE_ADDRESS;
    const Y = BASE_ADDRESS + 0x100000;
    const Z = BASE_ADDRESS + 0x200000;
    try {
      const stream = Stream.adoptCreated(0x5f00 as never, ctx);
      const x = StridedView.of(new FakeBuffer(512, X), { dtype: 'c64', shape: [4, 16] });
      const y = StridedView.of(new FakeBuffer(512, Y), { dtype: 'c64', shape: [4, 16] });
      const z = StridedView.of(new FakeBuffer(512, Z), { dtype: 'c64', shape: [4, 16] });
      expect(fft(x, { out: y, stream })).toBe(y);
      expect(fft(x, { out: y, stream })).toBe(y);
      expect(fft(x, { out: z, stream })).toBe(z); // another buffer of the same layout: the same plan, its address
      expect(made).toHaveLength(1);
      expect(made[0].exec.mock.calls).toEqual([
        [7, X, Y, -1],
        [7, X, Y, -1],
        [7, X, Z, -1],
      ]);
      // another layout, normalize or stream: another plan
      fft(StridedView.of(x.buffer, { dtype: 'c64', shape: [2, 16] }), { out: StridedView.of(y.buffer, { dtype: 'c64', shape: [2, 16] }), stream });
      fft(x, { out: y, stream, normalize: 'none' });
      const other = Stream.adoptCreated(0x5f01 as never, ctx);
      fft(x, { out: y, stream: other });
      expect(made.map((m) => [m.plan.batch, m.plan.normalize, m.plan.stream.handle])).toEqual([
        [4, 'backward', 0x5f00],
        [2, 'backward', 0x5f00],
        [4, 'none', 0x5f00],
        [4, 'backward', 0x5f01],
      ]);
      // what the full path refuses is refused after a repeat too
      fft(x, { out: y, stream });
      expect(() => fft(x, { out: y, stream, sizes: [16] } as never)).toThrow(/fft: unknown option 'sizes'/);
      expect(() => fft(x, { out: view('c64', [4, 8]), stream })).toThrow(/fft: out has shape \[4,8\], the result is \[4,16\]/);
      z.buffer.close();
      expect(() => fft(x, { out: z, stream })).toThrow(/closed/);
      fftPlanCache.clear(); // closes the plans: the next call makes one again
      fft(x, { out: y, stream });
      expect(made).toHaveLength(5);
      expect(made[4].exec).toHaveBeenLastCalledWith(7, X, Y, -1);
      fftPlanCache.clear();
      stream.close();
      other.close();
    } finally {
      fake.restore();
    }
  });

  test('the plan cache: size bounds, clear', () => {
    expect(fftPlanCache.size).toBe(0);
    expect(fftPlanCache.maxSize).toBe(16);
    expect(() => (fftPlanCache.maxSize = -1)).toThrow(RangeError);
    fftPlanCache.maxSize = 4;
    expect(fftPlanCache.maxSize).toBe(4);
    fftPlanCache.maxSize = 16;
    fftPlanCache.clear();
    expect(fftPlanCache.size).toBe(0);
  });
});
