// cuDNN objects without a GPU: descriptors check and keep their settings in JS (no cuDNN until a call
// needs the native descriptor); every argument check of Cudnn throws TypeError/RangeError naming the
// call before cuDNN is called; valid calls reach the typed layer with the descriptors, addresses,
// boxed scalars, chosen algorithm and math type. cuDNN's typed layer is a fake that logs calls.
import { driverlessContext } from '../helpers/fake-driver';
import { DeviceBuffer } from '../../src/memory/device-buffer';
import { StridedView } from '../../src/memory/strided-view';
import { Stream } from '../../src/stream';
import { ClosedObjectError } from '../../src/errors';
import { Cudnn, algorithmPerf } from '../../src/math/cudnn';
import { ActivationDescriptor, ConvolutionDescriptor, FilterDescriptor, TensorDescriptor, channelsLastStrides } from '../../src/math/cudnn-descriptors';
import {
  CONVOLUTION_FWD_ALGORITHMS,
  CUDNN_ACTIVATION_MODE,
  CUDNN_CONVOLUTION_MODE,
  CUDNN_DATA_TYPE,
  CUDNN_FORMAT,
  CUDNN_MATH_TYPE,
} from '../../src/math/cudnn-api';

type Perf = { algo: number; status: number; time: number; memory: number; determinism: number; mathType: number; reserved: number[] };
const perf = (algo: number, memory = 0, mathType = 0, status = 0): Perf => ({ algo, status, time: -1, memory, determinism: 1, mathType, reserved: [0, 0, 0] });

const calls: [string, unknown[]][] = [];
const fake = {
  heuristics: [perf(1), perf(0)] as Perf[],
  found: [perf(6, 0, 1), perf(1)] as Perf[],
  workspace: 0,
};
let nextHandle = 0x1000;
const fakeCudnn = new Proxy({} as Record<string, unknown>, {
  get:
    (_t, name: string) =>
    (...args: unknown[]) => {
      calls.push([name, args]);
      if (name === 'cudnnCreate' || /^cudnnCreate.*Descriptor$/.test(name)) return nextHandle++;
      if (name === 'cudnnGetConvolutionForwardAlgorithmMaxCount') return 8;
      if (name === 'cudnnGetConvolutionForwardAlgorithm_v7') return fake.heuristics;
      if (name === 'cudnnFindConvolutionForwardAlgorithm') return fake.found;
      if (name === 'cudnnGetConvolutionForwardWorkspaceSize') return fake.workspace;
      if (name === 'cudnnGetVersion') return 91900;
      if (name === 'cudnnGetConvolutionNdForwardOutputDim') (args[4] as Int32Array).set([1, 2, 3, 4]);
      return undefined;
    },
});
const loadCudnn = jest.fn(() => fakeCudnn);
jest.mock('../../src/releases', () => ({ ...jest.requireActual('../../src/releases'), loadCudnn: () => loadCudnn() }));

const ctx = driverlessContext();
const stream = Stream.legacyDefault(ctx);
let base = 0x7f2000000000;
function buffer(bytes: number): DeviceBuffer {
  const b = DeviceBuffer.wrap(base, bytes, { context: ctx });
  base += 0x1000000;
  return b;
}
const names = (): string[] => calls.map(([n]) => n);
const callOf = (name: string): unknown[] => calls.filter(([n]) => n === name).at(-1)![1];

describe('cuDNN enum codes', () => {
  test('equal the generated enums', () => {
    const T = jest.requireActual('../../generated/13.0/cudnn/types');
    expect(CUDNN_DATA_TYPE).toEqual({
      f32: T.cudnnDataType_t.CUDNN_DATA_FLOAT,
      f64: T.cudnnDataType_t.CUDNN_DATA_DOUBLE,
      f16: T.cudnnDataType_t.CUDNN_DATA_HALF,
    });
    expect(CUDNN_FORMAT).toEqual({ NCHW: T.cudnnTensorFormat_t.CUDNN_TENSOR_NCHW, NHWC: T.cudnnTensorFormat_t.CUDNN_TENSOR_NHWC });
    expect(CUDNN_MATH_TYPE).toEqual({
      default: T.cudnnMathType_t.CUDNN_DEFAULT_MATH,
      tensorOp: T.cudnnMathType_t.CUDNN_TENSOR_OP_MATH,
      tensorOpAllowConversion: T.cudnnMathType_t.CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION,
      fma: T.cudnnMathType_t.CUDNN_FMA_MATH,
    });
    expect(CUDNN_CONVOLUTION_MODE).toEqual({
      convolution: T.cudnnConvolutionMode_t.CUDNN_CONVOLUTION,
      crossCorrelation: T.cudnnConvolutionMode_t.CUDNN_CROSS_CORRELATION,
    });
    const acts = { sigmoid: 'SIGMOID', relu: 'RELU', tanh: 'TANH', clippedRelu: 'CLIPPED_RELU', elu: 'ELU', swish: 'SWISH' };
    for (const [mode, c] of Object.entries(acts))
      expect(CUDNN_ACTIVATION_MODE[mode as keyof typeof acts]).toBe(T.cudnnActivationMode_t[`CUDNN_ACTIVATION_${c}`]);
    CONVOLUTION_FWD_ALGORITHMS.forEach((name, i) => {
      const c = name.replace(/([A-Z])/g, '_$1').toUpperCase();
      expect(T.cudnnConvolutionFwdAlgo_t[`CUDNN_CONVOLUTION_FWD_ALGO_${c}`]).toBe(i);
    });
  });
});

describe('descriptors (no cuDNN until a call)', () => {
  beforeEach(() => loadCudnn.mockClear());

  test('TensorDescriptor: C-order, NHWC and explicit strides; extent; checks name the argument', () => {
    const t = new TensorDescriptor({ dtype: 'f32', shape: [2, 3, 5, 7] });
    expect(t.strides).toEqual([105, 35, 7, 1]);
    expect([t.size, t.extent]).toEqual([210, 210]);
    const n = new TensorDescriptor({ dtype: 'f16', shape: [2, 3, 5, 7], layout: 'NHWC' });
    expect(n.strides).toEqual([105, 1, 21, 3]);
    expect(channelsLastStrides([1, 4, 2, 3, 5])).toEqual([120, 1, 60, 20, 4]);
    expect(() => channelsLastStrides(undefined as never)).toThrow(/^channelsLastStrides: shape must be an array of integers, got undefined/);
    expect(() => channelsLastStrides([1, 2, 3])).toThrow(/^channelsLastStrides: shape must have 4 to 5 entries, got 3/);
    expect(() => channelsLastStrides([1, 2, 0, 4])).toThrow(/^channelsLastStrides: shape\[2\] must be an integer in \[1, 2147483647\], got number 0/);
    const padded = new TensorDescriptor({ dtype: 'f64', shape: [2, 3], strides: [10, 2] });
    expect(padded.extent).toBe(15);
    expect(() => new TensorDescriptor({ dtype: 'i32' as never, shape: [1, 1, 1, 1] })).toThrow(
      /^TensorDescriptor: dtype must be one of f16, f32, f64, got 'i32'/,
    );
    expect(() => new TensorDescriptor({ dtype: 'f32', shape: [1, 0, 2, 2] })).toThrow(/^TensorDescriptor: shape\[1\] must be an integer in \[1, /);
    expect(() => new TensorDescriptor({ dtype: 'f32', shape: new Array(9).fill(1) })).toThrow(/shape must have 1 to 8 entries, got 9/);
    expect(() => new TensorDescriptor({ dtype: 'f32', shape: [1, 2], strides: [1] })).toThrow(/strides must have 2 entries, got 1/);
    expect(() => new TensorDescriptor({ dtype: 'f32', shape: [2, 2], layout: 'NHWC' })).toThrow(RangeError);
    expect(() => new TensorDescriptor({ dtype: 'f32', shape: [2, 2], layout: 'CHWN' as never })).toThrow(/layout must be 'NCHW' or 'NHWC'/);
    expect(() => new TensorDescriptor({ dtype: 'f32', shape: [2, 2], stride: [1, 1] } as never)).toThrow(/unknown option 'stride'/);
    expect(() => new TensorDescriptor(null as never)).toThrow(/^TensorDescriptor: options must be an object/);
    expect(loadCudnn).not.toHaveBeenCalled();
  });

  test("TensorDescriptor.of and FilterDescriptor.of take a view's dtype, shape and layout", () => {
    const b = buffer(4096);
    const v = StridedView.of(b, { dtype: 'f32', shape: [1, 2, 3, 4], strides: channelsLastStrides([1, 2, 3, 4]) });
    expect(TensorDescriptor.of(v).strides).toEqual([24, 1, 8, 2]);
    expect(FilterDescriptor.of(v).layout).toBe('NHWC');
    expect(FilterDescriptor.of(StridedView.of(b, { dtype: 'f64', shape: [4, 2, 3, 3] })).layout).toBe('NCHW');
    expect(() => FilterDescriptor.of(StridedView.of(b, { dtype: 'f32', shape: [2, 2, 2, 2], strides: [16, 8, 1, 2] }))).toThrow(
      /^FilterDescriptor.of: a filter is packed NCHW or NHWC/,
    );
    expect(() => TensorDescriptor.of(new Float32Array(4) as never)).toThrow(/^TensorDescriptor.of: view must be a StridedView, got Float32Array/);
    expect(() => TensorDescriptor.of(StridedView.of(b, { dtype: 'i8', shape: [4] }))).toThrow(/dtype must be one of f16, f32, f64, got 'i8'/);
    expect(loadCudnn).not.toHaveBeenCalled();
  });

  test('ConvolutionDescriptor: settings, the output shape formula, and its checks', () => {
    const conv = new ConvolutionDescriptor({ padding: [1, 2], stride: 2, dilation: [1, 3], groups: 2 });
    expect(conv.spatialDims).toBe(2);
    const x = new TensorDescriptor({ dtype: 'f32', shape: [3, 4, 11, 13] });
    const w = new FilterDescriptor({ dtype: 'f32', shape: [6, 2, 3, 3] });
    // H: (11 + 2 - 3) / 2 + 1 = 6; W: (13 + 4 - (3·2 + 1)) / 2 + 1 = 6
    expect(conv.outputShape(x, w)).toEqual([3, 6, 6, 6]);
    expect(
      new ConvolutionDescriptor().outputShape(
        new TensorDescriptor({ dtype: 'f64', shape: [1, 1, 4, 5, 6] }),
        new FilterDescriptor({ dtype: 'f64', shape: [2, 1, 2, 3, 4] }),
      ),
    ).toEqual([1, 2, 3, 3, 3]);
    expect(() => conv.outputShape(x, new FilterDescriptor({ dtype: 'f32', shape: [5, 2, 3, 3] }))).toThrow(
      /groups 2 must divide the input channels 4 and the output channels 5/,
    );
    expect(() => conv.outputShape(x, new FilterDescriptor({ dtype: 'f32', shape: [6, 4, 3, 3] }))).toThrow(
      /w has 4 channels per group, x 4 channels in 2 group\(s\) \(2 each\)/,
    );
    expect(() =>
      conv.outputShape(new TensorDescriptor({ dtype: 'f32', shape: [1, 4, 2, 2] }), new FilterDescriptor({ dtype: 'f32', shape: [2, 2, 5, 5] })),
    ).toThrow(/spatial dimension 0: the dilated filter spans 5, more than the padded input 4/);
    expect(() =>
      conv.outputShape(new TensorDescriptor({ dtype: 'f32', shape: [1, 4, 2, 2, 2] }), new FilterDescriptor({ dtype: 'f32', shape: [2, 2, 1, 1, 1] })),
    ).toThrow(/the convolution has 2 spatial dimensions, x 3/);
    expect(() => new ConvolutionDescriptor({ padding: [1, 1], stride: [1, 1, 1] })).toThrow(/name different numbers of spatial dimensions/);
    expect(() => new ConvolutionDescriptor({ stride: 0 })).toThrow(/^ConvolutionDescriptor: stride must be an integer ≥ 1, got 0/);
    expect(() => new ConvolutionDescriptor({ padding: -1 })).toThrow(RangeError);
    expect(() => new ConvolutionDescriptor({ groups: 1.5 })).toThrow(/groups must be an integer ≥ 1/);
    expect(() => new ConvolutionDescriptor({ mathType: 'tf32' as never })).toThrow(/mathType must be one of default, tensorOp, tensorOpAllowConversion, fma/);
    expect(() => new ConvolutionDescriptor({ mode: 'corr' as never })).toThrow(TypeError);
    expect(() => new ConvolutionDescriptor({ computeType: 'bf16' as never })).toThrow(/computeType must be one of f16, f32, f64/);
    expect(loadCudnn).not.toHaveBeenCalled();
  });

  test('ActivationDescriptor: modes and their coefficient', () => {
    expect(new ActivationDescriptor('relu').coef).toBe(0);
    expect(new ActivationDescriptor('elu').coef).toBe(1);
    expect(new ActivationDescriptor('elu', { alpha: 0.5 }).coef).toBe(0.5);
    expect(new ActivationDescriptor('swish', { beta: 2 }).coef).toBe(2);
    expect(new ActivationDescriptor('clippedRelu', { ceiling: 6 }).coef).toBe(6);
    expect(() => new ActivationDescriptor('clippedRelu')).toThrow(/clippedRelu needs the ceiling option/);
    expect(() => new ActivationDescriptor('identity' as never)).toThrow(
      /^ActivationDescriptor: mode must be one of sigmoid, relu, tanh, clippedRelu, elu, swish, got 'identity'/,
    );
    expect(() => new ActivationDescriptor('relu', { alpha: 1 })).toThrow(/option 'alpha' does not apply to relu/);
    expect(() => new ActivationDescriptor('elu', { alpha: NaN })).toThrow(/alpha must be a finite number/);
    expect(() => new ActivationDescriptor('relu', { propagateNan: 1 as never })).toThrow(/propagateNan must be a boolean/);
    expect(loadCudnn).not.toHaveBeenCalled();
  });
});

describe('Cudnn', () => {
  const conv = new ConvolutionDescriptor({ padding: 1 });
  const xDesc = new TensorDescriptor({ dtype: 'f32', shape: [2, 3, 5, 5] });
  const wDesc = new FilterDescriptor({ dtype: 'f32', shape: [4, 3, 3, 3] });
  const yDesc = new TensorDescriptor({ dtype: 'f32', shape: [2, 4, 5, 5] });
  const [x, w, y] = [buffer(xDesc.size * 4), buffer(wDesc.size * 4), buffer(yDesc.size * 4)];
  let dnn: Cudnn;
  beforeEach(() => {
    fake.heuristics = [perf(1), perf(0)];
    fake.workspace = 0;
    dnn = Cudnn.create({ stream });
    calls.length = 0;
  });
  afterEach(() => dnn.close());

  test('create sets the stream; close destroys the handle once; the handle is exposed', () => {
    calls.length = 0;
    const h = Cudnn.create({ stream });
    expect(names()).toEqual(['cudnnCreate', 'cudnnSetStream']);
    expect(callOf('cudnnSetStream')).toEqual([h.handle, stream.handle]);
    h.close();
    h.close();
    expect(names().filter((n) => n === 'cudnnDestroy')).toHaveLength(1);
    expect(() => h.convolutionForward(conv, xDesc, x, wDesc, w, yDesc, y)).toThrow(ClosedObjectError);
    expect(Cudnn.version).toBe(91900);
  });

  test('argument checks throw before any cuDNN call, naming Cudnn.convolutionForward', () => {
    const bad = (f: () => void, what: RegExp | (new (...a: never[]) => Error)): void => {
      expect(f).toThrow(what);
    };
    bad(() => dnn.convolutionForward({} as never, xDesc, x, wDesc, w, yDesc, y), /^Cudnn.convolutionForward: conv must be a ConvolutionDescriptor, got/);
    bad(() => dnn.convolutionForward(conv, wDesc as never, x, wDesc, w, yDesc, y), /xDesc must be a TensorDescriptor/);
    bad(() => dnn.convolutionForward(conv, xDesc, x, xDesc as never, w, yDesc, y), /wDesc must be a FilterDescriptor/);
    const y64 = new TensorDescriptor({ dtype: 'f64', shape: [2, 4, 5, 5] });
    bad(() => dnn.convolutionForward(conv, xDesc, x, wDesc, w, y64, y), /^Cudnn.convolutionForward: x, w and y must have one dtype, got f32, f32, f64/);
    const yWrong = new TensorDescriptor({ dtype: 'f32', shape: [2, 4, 3, 3] });
    bad(
      () => dnn.convolutionForward(conv, xDesc, x, wDesc, w, yWrong, y),
      /^Cudnn.convolutionForward: y has shape \[2,4,3,3\], the convolution gives \[2,4,5,5\]/,
    );
    bad(() => dnn.convolutionForward(new ConvolutionDescriptor({ computeType: 'f64' }), xDesc, x, wDesc, w, yDesc, y), /computeType f64 does not fit f32 data/);
    bad(
      () => dnn.convolutionForward(conv, xDesc, new Float32Array(150) as never, wDesc, w, yDesc, y),
      /^Cudnn.convolutionForward: x must be a DeviceBuffer or a StridedView of device memory, got Float32Array.*copy it to the GPU first/,
    );
    bad(
      () => dnn.convolutionForward(conv, xDesc, buffer(100), wDesc, w, yDesc, y),
      /^Cudnn.convolutionForward: x needs 150 f32 elements \(600 bytes\) from byte 0, but its buffer holds 100 bytes/,
    );
    bad(
      () =>
        dnn.convolutionForward(
          conv,
          xDesc,
          StridedView.of(x, { dtype: 'f32', shape: [2, 3, 5, 5], strides: channelsLastStrides([2, 3, 5, 5]) }),
          wDesc,
          w,
          yDesc,
          y,
        ),
      /x is a view of shape \[2,3,5,5\] with strides \[75,1,15,3\], its descriptor says shape \[2,3,5,5\] with strides \[75,25,5,1\]/,
    );
    bad(
      () => dnn.convolutionForward(conv, xDesc, StridedView.of(buffer(2048), { dtype: 'f64', shape: [2, 3, 5, 5] }), wDesc, w, yDesc, y),
      /x holds f64, expected f32/,
    );
    bad(() => dnn.convolutionForward(conv, xDesc, x, wDesc, w, yDesc, y, { alpha: '1' as never }), /alpha must be a number, got string/);
    bad(
      () => dnn.convolutionForward(conv, xDesc, x, wDesc, w, yDesc, y, { algorithm: 'fastest' as never }),
      /algorithm must be 'heuristic', 'find' or one of implicitGemm/,
    );
    bad(() => dnn.convolutionForward(conv, xDesc, x, wDesc, w, yDesc, y, { workspaceLimit: -1 }), RangeError);
    bad(() => dnn.convolutionForward(conv, xDesc, x, wDesc, w, yDesc, y, { workSpaceLimit: 1 } as never), /unknown option 'workSpaceLimit'/);
    const other = DeviceBuffer.wrap(0x7e0000000000, 4096, { context: driverlessContext(0x999) });
    bad(() => dnn.convolutionForward(conv, xDesc, other, wDesc, w, yDesc, y), /x belongs to .*, the handle to/);
    expect(calls).toEqual([]);
  });

  test('a convolution: natives made once, heuristic plan chosen once, f32 scalars boxed, addresses passed', () => {
    dnn.convolutionForward(conv, xDesc, x, wDesc, w, yDesc, y, { alpha: 2, beta: 0.5 });
    expect(names()).toEqual([
      'cudnnCreateConvolutionDescriptor',
      'cudnnSetConvolutionNdDescriptor',
      'cudnnSetConvolutionMathType',
      'cudnnCreateTensorDescriptor',
      'cudnnSetTensorNdDescriptor',
      'cudnnCreateFilterDescriptor',
      'cudnnSetFilterNdDescriptor',
      'cudnnCreateTensorDescriptor',
      'cudnnSetTensorNdDescriptor',
      'cudnnGetConvolutionForwardAlgorithmMaxCount',
      'cudnnGetConvolutionForwardAlgorithm_v7',
      'cudnnGetConvolutionForwardWorkspaceSize',
      'cudnnConvolutionForward',
    ]);
    const [, dt, nd, dims, strides] = callOf('cudnnSetTensorNdDescriptor') as [number, number, number, Int32Array, Int32Array];
    expect([dt, nd, [...dims], [...strides]]).toEqual([0, 4, [2, 4, 5, 5], [100, 25, 5, 1]]);
    const [, , pad, str, dil, mode, compute] = callOf('cudnnSetConvolutionNdDescriptor') as [
      number,
      number,
      Int32Array,
      Int32Array,
      Int32Array,
      number,
      number,
    ];
    expect([[...pad], [...str], [...dil], mode, compute]).toEqual([[1, 1], [1, 1], [1, 1], 1, 0]);
    const args = callOf('cudnnConvolutionForward');
    expect(args[0]).toBe(dnn.handle);
    expect(args[1]).toBeInstanceOf(Float32Array);
    expect((args[1] as Float32Array)[0]).toBe(2);
    expect((args[10] as Float32Array)[0]).toBe(0.5);
    expect([args[3], args[5], args[7], args[8], args[9], args[12]]).toEqual([x.ptr, w.ptr, 1, 0, 0, y.ptr]);
    calls.length = 0;
    dnn.convolutionForward(conv, xDesc, x, wDesc, w, yDesc, y);
    expect(names()).toEqual(['cudnnConvolutionForward']); // plan and natives kept
    expect((callOf('cudnnConvolutionForward')[1] as Float32Array)[0]).toBe(1);
    // the last call's checks are reused only for the very same descriptors
    expect(() => dnn.convolutionForward(conv, xDesc, x, wDesc, w, new TensorDescriptor({ dtype: 'f32', shape: [2, 4, 5, 4] }), y)).toThrow(
      /y has shape \[2,4,5,4\]/,
    );
    expect(() => dnn.convolutionForward(conv, xDesc, x, wDesc, w, yDesc, buffer(16))).toThrow(/y needs 200 f32 elements/);
  });

  test('f64 data: double scalars and f64 compute; a named algorithm skips the ranking', () => {
    const x64 = new TensorDescriptor({ dtype: 'f64', shape: [1, 1, 4, 4] });
    const w64 = new FilterDescriptor({ dtype: 'f64', shape: [1, 1, 2, 2] });
    const y64 = new TensorDescriptor({ dtype: 'f64', shape: [1, 1, 3, 3] });
    const c = new ConvolutionDescriptor();
    dnn.convolutionForward(c, x64, buffer(128), w64, buffer(32), y64, buffer(72), { algorithm: 'gemm', beta: 1 });
    expect(names()).not.toContain('cudnnGetConvolutionForwardAlgorithm_v7');
    expect(callOf('cudnnSetConvolutionNdDescriptor')[6]).toBe(1); // CUDNN_DATA_DOUBLE compute
    const args = callOf('cudnnConvolutionForward');
    expect(args[7]).toBe(2); // GEMM
    expect(args[1]).toBeInstanceOf(Float64Array);
    expect((args[10] as Float64Array)[0]).toBe(1);
  });

  test('the plan: the workspace limit skips algorithms; find times them; the chosen math type is set', () => {
    fake.heuristics = [perf(7, 1 << 30), perf(1, 0, 3)];
    dnn.convolutionForward(conv, xDesc, x, wDesc, w, yDesc, y, { workspaceLimit: 1 << 20 });
    expect(callOf('cudnnConvolutionForward')[7]).toBe(1);
    expect(callOf('cudnnSetConvolutionMathType')[1]).toBe(3); // fma, as the heuristic reported
    calls.length = 0;
    dnn.convolutionForward(conv, xDesc, x, wDesc, w, yDesc, y, { algorithm: 'find' });
    expect(names()).toContain('cudnnFindConvolutionForwardAlgorithm');
    expect(callOf('cudnnConvolutionForward')[7]).toBe(6); // winograd, first found
    expect(callOf('cudnnSetConvolutionMathType')[1]).toBe(1);
    fake.heuristics = [perf(7, 1 << 30)];
    expect(() => dnn.convolutionForward(conv, xDesc, x, wDesc, w, yDesc, y, { workspaceLimit: 1024 })).toThrow(
      /every algorithm cuDNN offers needs more workspace than the limit of 1024 bytes \(the least: 1073741824 bytes\)/,
    );
    fake.heuristics = [perf(0, 0, 0, 9)];
    expect(() => dnn.convolutionForward(conv, xDesc, x, wDesc, w, yDesc, y, { workspaceLimit: 2048 })).toThrow(
      /cuDNN offers no forward algorithm for this convolution \(statuses implicitGemm 9\)/,
    );
  });

  test('convolutionAlgorithms ranks; convolutionOutputShape asks cuDNN', () => {
    expect(dnn.convolutionAlgorithms(conv, xDesc, wDesc, yDesc).map((p) => p.algorithm)).toEqual(['implicitPrecompGemm', 'implicitGemm']);
    expect(dnn.convolutionAlgorithms(conv, xDesc, wDesc, yDesc, { find: true })[0]).toEqual({
      algorithm: 'winograd',
      status: 0,
      time: -1,
      memory: 0,
      deterministic: true,
      mathType: 'tensorOp',
    });
    expect(algorithmPerf({ ...perf(5, 2 ** 40, 2), determinism: 0 })).toMatchObject({
      algorithm: 'fftTiling',
      memory: 2 ** 40,
      deterministic: false,
      mathType: 'tensorOpAllowConversion',
    });
    expect(dnn.convolutionOutputShape(conv, xDesc, wDesc)).toEqual([1, 2, 3, 4]);
    expect(() => dnn.convolutionAlgorithms(conv, xDesc, wDesc, yDesc, { find: 'yes' } as never)).toThrow(/find must be a boolean/);
  });

  test('activationForward: checks, then the call with the descriptors and boxed scalars; in place allowed', () => {
    const act = new ActivationDescriptor('swish', { beta: 1.5 });
    const t = new TensorDescriptor({ dtype: 'f16', shape: [2, 8] });
    const buf = buffer(64);
    expect(() => dnn.activationForward({} as never, t, buf, t, buf)).toThrow(/^Cudnn.activationForward: act must be an ActivationDescriptor/);
    expect(() => dnn.activationForward(act, t, buf, new TensorDescriptor({ dtype: 'f32', shape: [2, 8] }), buf)).toThrow(/x is f16, y f32/);
    expect(() => dnn.activationForward(act, t, buf, new TensorDescriptor({ dtype: 'f16', shape: [8, 2] }), buf)).toThrow(/x has shape \[2,8\], y \[8,2\]/);
    expect(() => dnn.activationForward(act, t, buffer(16), t, buf)).toThrow(/x needs 16 f16 elements \(32 bytes\)/);
    expect(calls).toEqual([]);
    dnn.activationForward(act, t, buf, t, buf, { alpha: 3 });
    expect(names()).toEqual([
      'cudnnCreateActivationDescriptor',
      'cudnnSetActivationDescriptor',
      'cudnnSetActivationDescriptorSwishBeta',
      'cudnnCreateTensorDescriptor',
      'cudnnSetTensorNdDescriptor',
      'cudnnActivationForward',
    ]);
    expect(callOf('cudnnSetActivationDescriptor').slice(1)).toEqual([6, 0, 0]);
    expect(callOf('cudnnSetActivationDescriptorSwishBeta')[1]).toBe(1.5);
    const [, dt, nd, dims] = callOf('cudnnSetTensorNdDescriptor') as [number, number, number, Int32Array];
    expect([dt, nd, [...dims]]).toEqual([2, 4, [2, 8, 1, 1]]); // [N, C] padded to 4 dimensions
    const args = callOf('cudnnActivationForward');
    expect([(args[2] as Float32Array)[0], args[4], (args[5] as Float32Array)[0], args[7]]).toEqual([3, buf.ptr, 0, buf.ptr]);
  });

  test('descriptors free only the natives they made; a closed descriptor is refused', () => {
    const t = new TensorDescriptor({ dtype: 'f32', shape: [1, 1, 1, 4] });
    t.close();
    expect(names()).toEqual([]);
    expect(() => dnn.activationForward(new ActivationDescriptor('relu'), t, buffer(16), t, buffer(16))).toThrow(ClosedObjectError);
    const u = new TensorDescriptor({ dtype: 'f32', shape: [1, 1, 1, 4] });
    const b = buffer(16);
    dnn.activationForward(new ActivationDescriptor('tanh'), u, b, u, b);
    u.close();
    expect(names().filter((n) => n === 'cudnnDestroyTensorDescriptor')).toHaveLength(1);
  });

  test('setStream moves the handle to another stream of its context', () => {
    const other = Stream.perThread(ctx);
    dnn.setStream(other);
    expect(callOf('cudnnSetStream')).toEqual([dnn.handle, other.handle]);
    expect(dnn.stream).toBe(other);
    calls.length = 0;
    dnn.setStream(other);
    expect(calls).toEqual([]);
    expect(() => dnn.setStream(Stream.legacyDefault(driverlessContext(0x777)))).toThrow(/^Cudnn.setStream: the stream belongs to/);
    expect(() => dnn.setStream(42 as never)).toThrow(TypeError);
  });
});
