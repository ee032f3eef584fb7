// Cudnn and its descriptors under hostile clients (no GPU): shapes, strides, paddings with holes, bad
// numbers and past-int32 sizes; options that are not objects or hold unknown keys; closed descriptors;
// closed, foreign-context, short and look-alike tensors. Every call succeeds or throws TypeError/RangeError
// starting with its `Class.method` (a descriptor's constructor: `Class:`), and nothing cuDNN's fake
// receives is a value no C function takes (an Int32Array of dimensions holds no 0 from a hole).
import { driverlessContext } from '../helpers/fake-driver';
import { StridedView } from '../../src/memory/strided-view';
import { Stream } from '../../src/stream';
import { Cudnn } from '../../src/math/cudnn';
import { ActivationDescriptor, ConvolutionDescriptor, FilterDescriptor, TensorDescriptor } from '../../src/math/cudnn-descriptors';
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

type Perf = { algo: number; status: number; time: number; memory: number; determinism: number; mathType: number; reserved: number[] };
const perf = (algo: number): Perf => ({ algo, status: 0, time: -1, memory: 0, determinism: 1, mathType: 0, reserved: [0, 0, 0] });
const calls: CallLog = [];
let nextHandle = 0x1000;
const fakeCudnn = new Proxy({} as Record<string, unknown>, {
  get:
    (_t, name: string) =>
    (...args: unknown[]) => {
      calls.push([name, args]);
      if (name === 'cudnnCreate' || /^cudnnCreate.*Descriptor$/.test(name)) return nextHandle++;
      if (name === 'cudnnGetConvolutionForwardAlgorithmMaxCount') return 8;
      if (name === 'cudnnGetConvolutionForwardAlgorithm_v7' || name === 'cudnnFindConvolutionForwardAlgorithm') return [perf(1)];
      if (name === 'cudnnGetConvolutionForwardWorkspaceSize') return 0;
      if (name === 'cudnnGetVersion') return 91900;
      return undefined;
    },
});
jest.mock('../../src/releases', () => ({ ...jest.requireActual('../../src/releases'), loadCudnn: () => fakeCudnn }));

const ctx = driverlessContext();
const otherCtx = driverlessContext(0x9999);
const stream = Stream.legacyDefault(ctx);
const buffer = bufferMaker(ctx, 0x7f8000000000, 0x1000000);
const isWork = (n: string) => n === 'cudnnConvolutionForward' || n === 'cudnnActivationForward';
const sweep = (where: string, values: readonly (readonly [string, unknown])[], call: (v: unknown) => unknown, expect: 'refused' | 'either') =>
  sweepValues(where, values, call, expect, calls, isWork);
/** Every Int32Array of dimensions cuDNN received holds positive sizes (a hole read as 0 would not). */
const zeroDims = () => calls.filter(([n]) => /^cudnnSet(TensorNd|FilterNd)/.test(n)).filter(([, a]) => a.some((x) => x instanceof Int32Array && x.includes(0)));

let cudnn: Cudnn;
beforeEach(() => {
  cudnn = Cudnn.create({ stream });
  calls.length = 0;
});
afterEach(() => {
  cudnn.close();
  expect(dirtyCalls(calls)).toEqual([]);
  expect(zeroDims()).toEqual([]);
});

describe('descriptors', () => {
  test('TensorDescriptor: options, shapes and strides', () => {
    const values: (readonly [string, unknown])[] = [
      ...NOT_OBJECTS,
      ['unknown key', { dtype: 'f32', shape: [1, 2], zz: 1 }],
      ['shape hole', { dtype: 'f32', shape: [1, , 2, 2] }], // eslint-disable-line no-sparse-arrays
      ['strides hole', { dtype: 'f32', shape: [1, 2], strides: [2, ,] }], // eslint-disable-line no-sparse-arrays
      ['shape typed array', { dtype: 'f32', shape: new Int32Array([1, 2]) }],
      ['shape past int32', { dtype: 'f32', shape: [2 ** 31] }],
      ['extent past 2**53', { dtype: 'f32', shape: [2 ** 30, 2 ** 30, 2 ** 30] }],
      ...BAD_NUMBERS.map(([l, v]) => [`shape [${l}]`, { dtype: 'f32', shape: [1, v] }] as const),
      ...BAD_NUMBERS.map(([l, v]) => [`strides [${l}]`, { dtype: 'f32', shape: [1, 2], strides: [2, v] }] as const),
      ['dtype c64', { dtype: 'c64', shape: [1] }],
    ];
    expect(sweep('TensorDescriptor', values, (o) => new TensorDescriptor(o as never).close(), 'refused')).toEqual([]);
    expect(sweep('TensorDescriptor.of', NOT_OPERANDS, (v) => TensorDescriptor.of(v as never).close(), 'refused')).toEqual([]);
  });
  test('FilterDescriptor: options and shapes; of() refuses strided views', () => {
    const values: (readonly [string, unknown])[] = [
      ...NOT_OBJECTS,
      ['unknown key', { dtype: 'f32', shape: [1, 2, 3], zz: 1 }],
      ['shape hole', { dtype: 'f32', shape: [4, , 3, 3] }], // eslint-disable-line no-sparse-arrays
      ...BAD_NUMBERS.map(([l, v]) => [`shape [${l}]`, { dtype: 'f32', shape: [4, 3, v, 3] }] as const),
    ];
    expect(sweep('FilterDescriptor', values, (o) => new FilterDescriptor(o as never).close(), 'refused')).toEqual([]);
    const strided = StridedView.of(buffer(4096), { dtype: 'f32', shape: [4, 3, 3, 3], strides: [54, 18, 6, 2] });
    expect(sweep('FilterDescriptor.of', [...NOT_OPERANDS, ['strided', strided]], (v) => FilterDescriptor.of(v as never).close(), 'refused')).toEqual([]);
  });
  test('ConvolutionDescriptor: paddings, strides, dilations, groups, types', () => {
    const values: (readonly [string, unknown])[] = [...NOT_OBJECTS, ['unknown key', { zz: 1 }]];
    for (const key of ['padding', 'stride', 'dilation']) {
      // null is an absent option (`??`), as in every options object here
      values.push(...BAD_NUMBERS.filter(([, v]) => v !== null).map(([l, v]) => [`${key} ${l}`, { [key]: v }] as const));
      values.push([`${key} hole`, { [key]: [1, ,] }], [`${key} [1, ${'NaN'}]`, { [key]: [1, Number.NaN] }]); // eslint-disable-line no-sparse-arrays
    }
    values.push(...BAD_NUMBERS.filter(([, v]) => v !== null).map(([l, v]) => [`groups ${l}`, { groups: v }] as const));
    values.push(['mathType toString', { mathType: 'toString' }], ['mode __proto__', { mode: '__proto__' }], ['computeType i32', { computeType: 'i32' }]);
    expect(sweep('ConvolutionDescriptor', values, (o) => new ConvolutionDescriptor(o as never).close(), 'refused')).toEqual([]);
  });
  test('ActivationDescriptor: modes, coefficients, options', () => {
    const values: (readonly [string, unknown])[] = [
      ['mode symbol', [Symbol('m')]],
      ['mode toString', ['toString']],
      ['mode __proto__', ['__proto__']],
      ...NOT_OBJECTS.map(([l, v]) => [`options ${l}`, ['relu', v]] as const),
      ['unknown key', ['relu', { zz: 1 }]],
      ['ceiling on relu', ['relu', { ceiling: 6 }]],
      ['clippedRelu without ceiling', ['clippedRelu']],
      ['ceiling NaN', ['clippedRelu', { ceiling: Number.NaN }]],
      ['ceiling Infinity', ['clippedRelu', { ceiling: Number.POSITIVE_INFINITY }]],
      ['ceiling bigint', ['clippedRelu', { ceiling: 6n }]],
      ['propagateNan a number', ['relu', { propagateNan: 1 }]],
    ];
    expect(sweep('ActivationDescriptor', values, (a) => new ActivationDescriptor(...(a as [never, never])).close(), 'refused')).toEqual([]);
  });
});

test('descriptor fields are read-only: the extent checked is the native descriptor’s', () => {
  const t = new TensorDescriptor({ dtype: 'f32', shape: [1, 3, 8, 8] });
  const f = new FilterDescriptor({ dtype: 'f32', shape: [4, 3, 3, 3] });
  const c = new ConvolutionDescriptor({ padding: 1 });
  const a = new ActivationDescriptor('clippedRelu', { ceiling: 6 });
  expect(writableFields(t, { dtype: 'f16', shape: [1], strides: [1], size: 1, extent: 1 })).toEqual([]);
  expect(writableFields(f, { shape: [1, 1, 1], size: 1, layout: 'NHWC' })).toEqual([]);
  expect(writableFields(c, { padding: 5, stride: 2, groups: 3, mathType: 'tensorOp' })).toEqual([]);
  expect(writableFields(a, { mode: 'relu', coef: 1 })).toEqual([]);
  expect(writableFields(cudnn, { context: otherCtx })).toEqual([]);
  for (const o of [t, f, c, a]) o.close();
});

test('choices named like Object.prototype members are refused (dtype, layout, mode, mathType, computeType)', () => {
  const bad: string[] = [];
  for (const [l, k] of PROTO_KEYS) {
    const tensors = [
      [`dtype ${l}`, { dtype: k, shape: [1] }],
      [`layout ${l}`, { dtype: 'f32', shape: [1, 1, 1], layout: k }],
    ] as const;
    bad.push(...sweep('TensorDescriptor', tensors, (o) => new TensorDescriptor(o as never).close(), 'refused'));
    const convs = [
      [`mode ${l}`, { mode: k }],
      [`mathType ${l}`, { mathType: k }],
      [`computeType ${l}`, { computeType: k }],
    ] as const;
    bad.push(...sweep('ConvolutionDescriptor', convs, (o) => new ConvolutionDescriptor(o as never).close(), 'refused'));
    bad.push(...sweep('ActivationDescriptor', [[`mode ${l}`, k]], (m) => new ActivationDescriptor(m as never).close(), 'refused'));
  }
  expect(bad).toEqual([]);
});

describe('Cudnn methods', () => {
  const xDesc = () => new TensorDescriptor({ dtype: 'f32', shape: [1, 3, 8, 8] });
  const wDesc = () => new FilterDescriptor({ dtype: 'f32', shape: [4, 3, 3, 3] });
  const yDesc = () => new TensorDescriptor({ dtype: 'f32', shape: [1, 4, 6, 6] });
  const conv = () => new ConvolutionDescriptor();
  const data = (n: number, context = ctx) => buffer(4 * n, context);
  const forward = (o: Record<string, unknown> = {}) =>
    cudnn.convolutionForward(
      (o.conv ?? conv()) as never,
      (o.xDesc ?? xDesc()) as never,
      ('x' in o ? o.x : data(192)) as never,
      wDesc(),
      (o.w ?? data(108)) as never,
      yDesc(),
      (o.y ?? data(144)) as never,
      o.options as never,
    );
  test('convolutionForward: options, descriptors and tensors', () => {
    const closedConv = conv();
    closedConv.close();
    const closedX = data(192);
    closedX.close();
    const values: (readonly [string, unknown])[] = [
      ...NOT_OBJECTS.map(([l, v]) => [`options ${l}`, { options: v }] as const),
      ['unknown option', { options: { zz: 1 } }],
      ['alpha string', { options: { alpha: '1' } }],
      ['alpha bigint', { options: { alpha: 1n } }],
      ['algorithm number', { options: { algorithm: 1 } }],
      ['algorithm toString', { options: { algorithm: 'toString' } }],
      // a limit only compared with sizes: Infinity and any integer past 2**53 are as good as no limit
      ...BAD_NUMBERS.filter(([l]) => !['Infinity', 'null', '2**53 + 1', '1e300'].includes(l)).map(
        ([l, v]) => [`workspaceLimit ${l}`, { options: { workspaceLimit: v } }] as const,
      ),
      ...NOT_OPERANDS.map(([l, v]) => [`x ${l}`, { x: v }] as const),
      ['conv look-alike', { conv: { padding: 0 } }],
      ['xDesc a view', { xDesc: StridedView.of(data(192), { dtype: 'f32', shape: [1, 3, 8, 8] }) }],
      ['closed conv', { conv: closedConv }],
      ['closed x', { x: closedX }],
      ['foreign x', { x: data(192, otherCtx) }],
      ['short y', { y: data(143) }],
      ['x view of another shape', { x: StridedView.of(data(192), { dtype: 'f32', shape: [1, 3, 64] }) }],
    ];
    expect(outcome('Cudnn.convolutionForward', () => forward())).toBe('ok');
    expect(sweep('Cudnn.convolutionForward', values, (o) => forward(o as never), 'refused')).toEqual([]);
  });
  test('convolutionForward option variants work or are refused', () => {
    const bad: string[] = [];
    for (const [label, o, want] of optionVariants({ alpha: 1, beta: 0, algorithm: 'heuristic', workspaceLimit: 1024 })) {
      bad.push(...sweep('Cudnn.convolutionForward', [[label, { options: o }]], (v) => forward(v as never), want === 'refused' ? 'refused' : 'either'));
      if (want === 'ok' && outcome('Cudnn.convolutionForward', () => forward({ options: o })) !== 'ok') bad.push(`${label}: refused`);
    }
    expect(bad).toEqual([]);
  });
  test('activationForward, convolutionAlgorithms, convolutionOutputShape, setStream refuse look-alikes', () => {
    const act = new ActivationDescriptor('relu');
    const t = xDesc();
    const cases: [string, string, () => unknown][] = [
      ['act look-alike', 'Cudnn.activationForward', () => cudnn.activationForward({} as never, t, data(192), t, data(192))],
      ['y foreign', 'Cudnn.activationForward', () => cudnn.activationForward(act, t, data(192), t, data(192, otherCtx))],
      ['options unknown', 'Cudnn.activationForward', () => cudnn.activationForward(act, t, data(192), t, data(192), { zz: 1 } as never)],
      ['find a number', 'Cudnn.convolutionAlgorithms', () => cudnn.convolutionAlgorithms(conv(), t, wDesc(), yDesc(), { find: 1 } as never)],
      ['options null', 'Cudnn.convolutionAlgorithms', () => cudnn.convolutionAlgorithms(conv(), t, wDesc(), yDesc(), null as never)],
      ['wrong y shape', 'Cudnn.convolutionAlgorithms', () => cudnn.convolutionAlgorithms(conv(), t, wDesc(), t)],
      ['w look-alike', 'Cudnn.convolutionOutputShape', () => cudnn.convolutionOutputShape(conv(), t, { shape: [4, 3, 3, 3] } as never)],
      ['foreign stream', 'Cudnn.setStream', () => cudnn.setStream(Stream.legacyDefault(otherCtx))],
      ['stream a number', 'Cudnn.setStream', () => cudnn.setStream(5 as never)],
    ];
    const bad = cases.map(([l, where, run]) => [l, outcome(where, run)]).filter(([, got]) => got !== 'refused');
    expect(bad).toEqual([]);
    expect(calls.filter(([n]) => isWork(n))).toEqual([]);
    act.close();
  });
});
