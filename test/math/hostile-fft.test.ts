// FftPlan and fft()/ifft()/… under hostile clients (no GPU): bad sizes, batches, strides and ranks
// (NaN, fractions, bigint, holes, 2**53 + 1, sizes whose extents overflow 2**53), non-object and
// unknown-key options, getters, closed, foreign-context, wrong-shape and look-alike operands. Every
// call succeeds or throws TypeError/RangeError starting with its `where`, before cuFFT loads where
// the check needs no cuFFT, and nothing cuFFT's fake receives is a value no C function takes.
import * as releases from '../../src/releases';
import { DeviceBuffer } from '../../src/memory/device-buffer';
import { StridedView } from '../../src/memory/strided-view';
import { Stream } from '../../src/stream';
import { FftPlan } from '../../src/math/fft';
import { fft, fftPlanCache, fftn, ifft, ifftn, irfft, irfftn, rfft, rfftn } from '../../src/math/fft-functions';
import * as scaling from '../../src/math/fft-scale';
import { driverlessContext } from '../helpers/fake-driver';
import {
  type CallLog,
  BAD_NUMBERS,
  PROTO_KEYS,
  NOT_OBJECTS,
  NOT_OPERANDS,
  dirtyCalls,
  optionVariants,
  outcome,
  sweep as sweepValues,
  writableFields,
  bufferMaker,
} from './hostile-values';

const ctx = driverlessContext();
const otherCtx = driverlessContext(0x9999);
const stream = Stream.legacyDefault(ctx);
const buffer = bufferMaker(ctx, 0x7f4000000000, 0x1000000);
type D = 'f32' | 'f64' | 'c64' | 'c128';
const view = (dtype: D, shape: number[], context = ctx) =>
  StridedView.of(
    buffer(
      16 *
        Math.max(
          1,
          shape.reduce((a, b) => a * b, 1),
        ),
      context,
    ),
    { dtype, shape },
  );

const calls: CallLog = [];
class FakeCufftError extends Error {}
const exec = (...args: unknown[]) => {
  calls.push(['cufftExec', args]);
  return 0;
};
const fakeCufft = new Proxy({} as Record<string, unknown>, {
  get: (_t, name: string) => {
    if (name === 'binder') return { native: () => exec };
    if (name === 'CufftError') return FakeCufftError;
    return (...args: unknown[]) => {
      calls.push([name, args]);
      return name === 'cufftCreate' ? 7 : name === 'cufftMakePlanMany64' ? 0 : undefined;
    };
  },
});
const isWork = (n: string) => n === 'cufftExec';
let loader: jest.SpyInstance;
beforeEach(() => {
  calls.length = 0;
  loader = jest.spyOn(releases, 'loadCufft').mockImplementation(() => fakeCufft as never);
  jest.spyOn(scaling, 'scaleSide').mockImplementation(() => undefined);
  jest.spyOn(DeviceBuffer, 'alloc').mockImplementation((bytes: number) => buffer(bytes));
});
afterEach(() => {
  jest.restoreAllMocks();
  expect(dirtyCalls(calls)).toEqual([]);
});

/** Sweeps `values` through `call`; a refused value must not have loaded cuFFT (`beforeLoad`). */
function sweep(
  where: string,
  values: readonly (readonly [string, unknown])[],
  call: (v: unknown) => unknown,
  expect: 'refused' | 'either',
  beforeLoad = true,
): string[] {
  const bad: string[] = [];
  for (const [label, v] of values) {
    loader.mockClear();
    const lines = sweepValues(where, [[label, v]], call, expect, calls, isWork);
    bad.push(...lines);
    if (beforeLoad && lines.length === 0 && outcome(where, () => undefined) === 'ok' && loader.mock.calls.length > 0 && expect === 'refused')
      bad.push(`${label}: cuFFT loaded before the refusal`);
  }
  return bad;
}
const create = (o: unknown) => (FftPlan.create(o as never) as FftPlan).close();

describe('FftPlan.create', () => {
  test('options that are not objects, or hold unknown keys', () => {
    const values = [...NOT_OBJECTS, ['unknown', { shape: [8], zz: 1 }]] as const;
    expect(sweep('FftPlan.create', values, create, 'refused')).toEqual([]);
  });
  test('shape: not an array, empty, too long, holes, bad sizes', () => {
    const values: (readonly [string, unknown])[] = [
      ['undefined', undefined],
      ['number', 8],
      ['[]', []],
      ['4 axes', [2, 2, 2, 2]],
      ['a hole', [, 4]], // eslint-disable-line no-sparse-arrays
      ['0', [0]],
      ['typed array', new Int32Array([8])],
      ...BAD_NUMBERS.map(([l, v]) => [`[${l}]`, [v]] as const),
      ['extents past 2**53', [2 ** 26, 2 ** 26, 2 ** 26]],
      ['one size past 2**31 with a batch past 2**31', [2 ** 31]],
    ];
    const run = (shape: unknown) => create({ shape, ...(Array.isArray(shape) && shape[0] === 2 ** 31 ? { batch: 2 ** 31 } : {}), stream });
    expect(sweep('FftPlan.create', values, run, 'refused')).toEqual([]);
    // a hole is named as the missing size, not found later as a NaN stride
    expect(() => run([, 4])).toThrow(/^FftPlan.create: shape\[0\] must be an integer, got undefined/); // eslint-disable-line no-sparse-arrays
  });
  test('batch, inputStrides and outputStrides take no bad number', () => {
    const values: (readonly [string, unknown])[] = [...BAD_NUMBERS.map(([l, v]) => [`batch ${l}`, { batch: v }] as const), ['batch 0', { batch: 0 }]];
    for (const key of ['inputStrides', 'outputStrides']) {
      values.push([`${key} not an array`, { [key]: 5 }], [`${key} too short`, { [key]: [1] }], [`${key} hole`, { [key]: [16, , 1] }]); // eslint-disable-line no-sparse-arrays
      values.push(...BAD_NUMBERS.map(([l, v]) => [`${key} [16, ${l}]`, { [key]: [16, v] }] as const));
      values.push([`${key} past 2**53`, { [key]: [2 ** 60, 1] }]);
    }
    expect(sweep('FftPlan.create', values, (o) => create({ shape: [16], stream, ...(o as object) }), 'refused')).toEqual([]);
  });
  test('type, precision, normalize, workspace take their strings only', () => {
    const values: (readonly [string, unknown])[] = [];
    for (const key of ['type', 'precision', 'normalize', 'workspace'])
      for (const [l, v] of [
        ['number', 1],
        ['Symbol', Symbol('x')],
        ['wrong string', 'C2C'],
        ['String object', new String('c2c')],
      ] as const)
        values.push([`${key} ${l}`, { [key]: v }]);
    expect(sweep('FftPlan.create', values, (o) => create({ shape: [16], stream, ...(o as object) }), 'refused')).toEqual([]);
  });
  test('option variants work or are refused; a valid plan reaches cuFFT with clean values', () => {
    const valid = { shape: [12, 35], type: 'r2c', precision: 'double', batch: 4, normalize: 'ortho', workspace: 'cufft', stream };
    const bad: string[] = [];
    for (const [label, o, want] of optionVariants(valid)) {
      bad.push(...sweep('FftPlan.create', [[label, o]], create, want === 'refused' ? 'refused' : 'either', false));
      if (want === 'ok' && outcome('FftPlan.create', () => create(o)) !== 'ok') bad.push(`${label}: refused`);
    }
    expect(bad).toEqual([]);
  });
});

describe('FftPlan.like and a plan’s executions', () => {
  test('FftPlan.like: bad views, dtypes, ranks and options', () => {
    const like = (a: unknown, b: unknown, o?: unknown) => () => (FftPlan.like(a as never, b as never, o as never) as FftPlan).close();
    const x = () => view('c64', [4, 16]);
    const cases: [string, () => unknown][] = [
      ...NOT_OPERANDS.map(([l, v]) => [`input ${l}`, like(v, x(), { stream })] as [string, () => unknown]),
      ...NOT_OPERANDS.map(([l, v]) => [`output ${l}`, like(x(), v, { stream })] as [string, () => unknown]),
      ...BAD_NUMBERS.map(([l, v]) => [`rank ${l}`, like(x(), x(), { rank: v, stream })] as [string, () => unknown]),
      ...NOT_OBJECTS.map(([l, v]) => [`options ${l}`, like(x(), x(), v)] as [string, () => unknown]),
      ['rank 3 of 2 axes', like(x(), x(), { rank: 3, stream })],
      ['f32 → f32', like(view('f32', [16]), view('f32', [16]), { stream })],
      ['c64 → c128', like(view('c64', [16]), view('c128', [16]), { stream })],
      ['zero-length axis', like(view('c64', [0]), view('c64', [0]), { stream })],
      ['empty batch', like(view('c64', [0, 16]), view('c64', [0, 16]), { stream })],
    ];
    const bad = cases.map(([l, run]) => [l, outcome('FftPlan.like', run)]).filter(([, got]) => got !== 'refused');
    expect(bad).toEqual([]);
    expect(calls.filter(([n]) => n === 'cufftMakePlanMany64')).toEqual([]);
  });
  test('forward/inverse refuse look-alike, closed, foreign, wrong-dtype and wrong-shape operands before cuFFT', () => {
    const plan = FftPlan.create({ shape: [16], batch: 2, stream });
    const closed = view('c64', [2, 16]);
    (closed.buffer as DeviceBuffer).close();
    const values: (readonly [string, unknown])[] = [
      ...NOT_OPERANDS,
      ['closed', closed],
      ['other context', view('c64', [2, 16], otherCtx)],
      ['c128', view('c128', [2, 16])],
      ['shape [2, 15]', view('c64', [2, 15])],
      ['short buffer', buffer(100)],
      ['transposed', view('c64', [16, 2]).transpose()],
    ];
    const y = view('c64', [2, 16]);
    expect(sweep('FftPlan.forward', values, (v) => plan.forward(v as never, y), 'refused')).toEqual([]);
    // an undefined output is the documented in-place transform
    const outs = values.filter(([, v]) => v !== undefined);
    expect(sweep('FftPlan.inverse', outs, (v) => plan.inverse(view('c64', [2, 16]), v as never), 'refused')).toEqual([]);
    plan.close();
  });
  test('setStream refuses non-streams and another context’s stream', () => {
    const plan = FftPlan.create({ shape: [16], stream });
    const values = [...NOT_OPERANDS.filter(([, v]) => v !== undefined), ['other context', Stream.legacyDefault(otherCtx)]] as const;
    expect(sweep('FftPlan.setStream', values, (s) => plan.setStream(s as never), 'refused', false)).toEqual([]);
    plan.close();
  });
});

test('a plan’s layout is read-only: executions check operands against what cuFFT planned', () => {
  const plan = FftPlan.create({ shape: [16], batch: 2, stream });
  expect(writableFields(plan, { type: 'r2c', shape: [1], batch: 1, input: {}, output: {}, normalize: 'ortho', workspaceBytes: 0 })).toEqual([]);
  expect(writableFields(plan.input, { extent: 1, dtype: 'c128' })).toEqual([]);
  expect(writableFields(plan.input.shape, { 1: 1 })).toEqual([]);
  expect(outcome('FftPlan.forward', () => plan.forward(view('c64', [2, 1]), view('c64', [2, 16])))).toBe('refused');
  plan.close();
});

test('choices named like Object.prototype members are refused (type, precision, normalize, workspace, dtype)', () => {
  const bad: string[] = [];
  for (const [l, k] of PROTO_KEYS) {
    for (const key of ['type', 'precision', 'normalize', 'workspace'])
      bad.push(...sweep('FftPlan.create', [[`${key} ${l}`, { shape: [16], stream, [key]: k }]], create, 'refused'));
    bad.push(...sweep('fft', [[`dtype ${l}`, { stream, dtype: k }]], (o) => fft(buffer(256), o as never), 'refused', false));
  }
  expect(bad).toEqual([]);
});

test('fftPlanCache.maxSize takes a count only', () => {
  const set = (v: unknown) => {
    fftPlanCache.maxSize = v as number;
  };
  expect(sweep('fftPlanCache.maxSize', BAD_NUMBERS, set, 'refused', false)).toEqual([]);
  expect(fftPlanCache.maxSize).toBe(16);
});

const FUNCTIONS = { fft, ifft, fftn, ifftn, rfft, irfft, rfftn, irfftn } as const;
const INPUT: Record<keyof typeof FUNCTIONS, () => StridedView> = {
  fft: () => view('c64', [2, 16]),
  ifft: () => view('c64', [2, 16]),
  fftn: () => view('c64', [4, 16]),
  ifftn: () => view('c64', [4, 16]),
  rfft: () => view('f32', [2, 16]),
  irfft: () => view('c64', [2, 9]),
  rfftn: () => view('f32', [4, 16]),
  irfftn: () => view('c64', [4, 9]),
};

describe('fft() and the other one-line transforms', () => {
  test.each(Object.keys(FUNCTIONS))('%s: options that are not objects, unknown keys, variants, getters', (name) => {
    const f = FUNCTIONS[name as keyof typeof FUNCTIONS];
    const x = INPUT[name as keyof typeof FUNCTIONS];
    const run = (o: unknown) => f(x(), o as never);
    expect(outcome(name, () => run({ stream, normalize: 'none' }))).toBe('ok');
    const bad = sweep(name, [...NOT_OBJECTS, ['unknown key', { stream, zz: 1 }]], run, 'refused', false);
    for (const [label, o, want] of optionVariants({ stream, normalize: 'none' }))
      bad.push(...sweep(name, [[label, o]], run, want === 'refused' ? 'refused' : 'either', false));
    // the last call remembered: the same options with an unknown key added are refused all the same
    run({ stream, normalize: 'none' });
    bad.push(...sweep(name, [['unknown key after a remembered call', { stream, normalize: 'none', zz: 1 }]], run, 'refused', false));
    expect(bad).toEqual([]);
  });
  test.each(Object.keys(FUNCTIONS))('%s: look-alike, closed, foreign, wrong-dtype inputs and outs', (name) => {
    const f = FUNCTIONS[name as keyof typeof FUNCTIONS];
    const x = INPUT[name as keyof typeof FUNCTIONS];
    const closed = x();
    (closed.buffer as DeviceBuffer).close();
    const inputs: (readonly [string, unknown])[] = [
      ...NOT_OPERANDS,
      ['closed', closed],
      ['other context', StridedView.of(buffer(4096, otherCtx), { dtype: x().dtype, shape: [...x().shape] })],
      ['a buffer without dtype', buffer(4096)],
      ['i32 view', StridedView.of(buffer(4096), { dtype: 'i32', shape: [2, 16] })],
    ];
    expect(sweep(name, inputs, (v) => f(v as never, { stream }), 'refused', false)).toEqual([]);
    // an empty batch: an empty result (fftn transforms every axis: a size 0 is refused), cuFFT never called
    const empty = StridedView.of(buffer(4096), { dtype: x().dtype, shape: [0, x().shape[1]] });
    calls.length = 0;
    expect(outcome(name, () => f(empty, { stream }))).toBe(name.endsWith('n') ? 'refused' : 'ok');
    expect(calls).toEqual([]);
    // the remembered last call does not let a same-shaped view of another context through
    f(x(), { stream });
    const foreign = StridedView.of(buffer(4096, otherCtx), { dtype: x().dtype, shape: [...x().shape] });
    expect(outcome(name, () => f(foreign, { stream }))).toBe('refused');
    const outs: (readonly [string, unknown])[] = [
      ...NOT_OPERANDS.filter(([, v]) => v !== undefined),
      ['closed', closed],
      ['other context', view('c128', [4, 16], otherCtx)],
      ['short buffer', buffer(8)],
    ];
    expect(sweep(name, outs, (v) => f(x(), { stream, out: v as never }), 'refused', false)).toEqual([]);
  });
  test('a stream getter answering differently on each read: the next call is not run on the stream the getter gave first', () => {
    const [legacy, perThread] = [stream, Stream.perThread(ctx)];
    fftPlanCache.clear(); // no remembered call or cached plan from the tests before
    let reads = 0;
    const o = {
      normalize: 'none' as const,
      get stream() {
        return reads++ === 0 ? legacy : perThread;
      },
    };
    fft(view('c64', [2, 16]), o);
    calls.length = 0;
    fft(view('c64', [2, 16]), { stream: perThread, normalize: 'none' });
    // a plan for the per-thread stream is made (its cufftSetStream), not the legacy stream's plan reused
    expect(calls.filter(([n, a]) => n === 'cufftSetStream' && a[1] === perThread.handle)).toHaveLength(1);
  });
  test.each([['irfft'], ['irfftn']])('%s: n takes no bad number', (name) => {
    const f = FUNCTIONS[name as keyof typeof FUNCTIONS] as typeof irfft;
    const values = [...BAD_NUMBERS.filter(([, v]) => v !== null), ['0', 0], ['15 (needs 8 complex values)', 15]] as const;
    expect(sweep(name, values, (n) => f(INPUT[name as keyof typeof FUNCTIONS](), { stream, n: n as never }), 'refused', false)).toEqual([]);
    expect(outcome(name, () => f(INPUT[name as keyof typeof FUNCTIONS](), { stream, n: 17 }))).toBe('ok');
  });
});
