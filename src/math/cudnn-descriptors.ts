// cuDNN's descriptors as objects: what a tensor, a filter, a convolution and an activation are, checked
// and kept in JS (dtype, shape, strides, padding, …) so that Cudnn's calls check their arguments before
// cuDNN loads. The cuDNN descriptor behind each is made on its first use by a call and destroyed by
// close() (or the finalizer); descriptors never change once made, so plans cached by them stay right.
import { checkKeys, describe } from '../describe';
import { Resource } from '../lifecycle';
import { StridedView, contiguousStrides } from '../memory/strided-view';
import { checkDType, lockFields } from './common';
import {
  CUDNN_ACTIVATION_MODE,
  CUDNN_CONVOLUTION_MODE,
  CUDNN_DATA_TYPE,
  CUDNN_DTYPES,
  CUDNN_FORMAT,
  CUDNN_MATH_TYPE,
  cudnnApi,
  nextDescriptorId,
  type ActivationMode,
  type ConvolutionMathType,
  type ConvolutionMode,
  type CudnnApi,
  type CudnnDType,
  type cudnnNative,
} from './cudnn-api';

/** The memory order of a tensor or filter: channels first (NCHW, NCDHW) or last (NHWC, NDHWC). */
export type TensorLayout = 'NCHW' | 'NHWC';

/** The native descriptor of an object and the API that made it (a holder the finalizer can free without the object). */
interface NativeSlot {
  handle: number;
  api: CudnnApi | undefined;
}

function positiveIntegers(where: string, name: string, v: unknown, min: number, max: number, minLength: number, maxLength: number): number[] {
  if (!Array.isArray(v)) throw new TypeError(`${where}: ${name} must be an array of integers, got ${describe(v)}`);
  if (v.length < minLength || v.length > maxLength)
    throw new RangeError(`${where}: ${name} must have ${minLength === maxLength ? minLength : `${minLength} to ${maxLength}`} entries, got ${v.length}`);
  // Array.from visits holes (map skips them: a hole would reach cuDNN as a 0 in the Int32Array)
  return Array.from(v, (x: unknown, i) => {
    if (typeof x !== 'number' || !Number.isInteger(x) || x < min || x > max)
      throw new RangeError(`${where}: ${name}[${i}] must be an integer in [${min}, ${max}], got ${describe(x)}`);
    return x;
  });
}

/**
 * Element strides of `shape` with the channels (dimension 1) last: NHWC for 4 dimensions, NDHWC for 5.
 * @param shape Logical extents, batch and channels first: [N, C, H, W] or [N, C, D, H, W].
 */
export function channelsLastStrides(shape: readonly number[]): number[] {
  shape = positiveIntegers('channelsLastStrides', 'shape', shape, 1, INT_MAX, 4, 5); // a snapshot, checked
  const strides = new Array<number>(shape.length);
  let step = 1;
  strides[1] = step;
  step *= shape[1];
  for (let d = shape.length - 1; d >= 2; d--) {
    strides[d] = step;
    step *= shape[d];
  }
  strides[0] = step;
  return strides;
}

const INT_MAX = 0x7fffffff;

function checkOptions(where: string, options: unknown, keys: readonly string[]): Record<string, unknown> {
  if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options must be an object, got ${describe(options)}`);
  checkKeys(where, options, keys);
  return options as Record<string, unknown>;
}

function layoutOf(where: string, v: unknown): TensorLayout {
  if (v === undefined) return 'NCHW';
  if (v !== 'NCHW' && v !== 'NHWC') throw new TypeError(`${where}: layout must be 'NCHW' or 'NHWC', got ${describe(v)}`);
  return v;
}

/** Options of {@link TensorDescriptor}. */
export interface TensorDescriptorOptions {
  /** The element type of the tensor's data: 'f16', 'f32' or 'f64'. */
  dtype: CudnnDType;
  /** Logical extents, batch and channels first whatever the layout: [N, C, H, W] (1 to 8 dimensions). */
  shape: readonly number[];
  /** Memory order (default NCHW, C order); ignored when `strides` is given. */
  layout?: TensorLayout;
  /** Element strides of each dimension (positive), for any other layout. */
  strides?: readonly number[];
}

/**
 * A tensor's dtype, shape and element strides (cudnnSetTensorNdDescriptor). Shapes with fewer than 4
 * dimensions are given to cuDNN padded with trailing 1s ([N, C] is [N, C, 1, 1]).
 */
export class TensorDescriptor extends Resource {
  /** The element type of the tensor's data. */
  readonly dtype: CudnnDType;
  /** Logical extents, batch and channels first whatever the layout ([N, C, H, W]), as given (not padded to 4). */
  readonly shape: readonly number[];
  /** Step between neighbours along each dimension of `shape`, in elements: given, or implied by the layout. */
  readonly strides: readonly number[];
  /** Number of elements. */
  readonly size: number;
  /** Elements from element 0 to the last one, inclusive (what a buffer must hold). */
  readonly extent: number;
  /** @internal */
  readonly id = nextDescriptorId();
  private readonly slot: NativeSlot;

  /**
   * Checks `options` (RangeError/TypeError naming `TensorDescriptor`); cuDNN is not loaded until a call uses it.
   * @param options `dtype` ('f16', 'f32' or 'f64'), `shape` (1 to 8 extents, batch and channels first whatever the layout), and `layout` ('NCHW' default or
   * 'NHWC') or `strides` (element strides of each dimension, for any other layout).
   */
  constructor(options: TensorDescriptorOptions) {
    const where = 'TensorDescriptor';
    const o = checkOptions(where, options, ['dtype', 'shape', 'layout', 'strides']);
    const dtype = checkDType(where, 'dtype', o.dtype, CUDNN_DTYPES);
    const shape = positiveIntegers(where, 'shape', o.shape, 1, INT_MAX, 1, 8);
    const layout = layoutOf(where, o.layout);
    if (layout === 'NHWC' && shape.length < 3) throw new RangeError(`${where}: layout NHWC needs at least 3 dimensions [N, C, …], got ${shape.length}`);
    let strides: number[];
    if (o.strides !== undefined) {
      strides = positiveIntegers(where, 'strides', o.strides, 1, INT_MAX, shape.length, shape.length);
    } else strides = layout === 'NHWC' ? channelsLastStrides(shape) : contiguousStrides(shape);
    const slot: NativeSlot = { handle: 0, api: undefined };
    super('TensorDescriptor', () => {
      if (slot.handle !== 0) slot.api!.cudnnDestroyTensorDescriptor(slot.handle as cudnnNative.cudnnTensorDescriptor_t);
    });
    this.slot = slot;
    this.dtype = dtype;
    this.shape = Object.freeze(shape);
    this.strides = Object.freeze(strides);
    this.size = shape.reduce((a, b) => a * b, 1);
    this.extent = shape.reduce((acc, n, d) => acc + (n - 1) * strides[d], 0) + 1;
    if (this.extent > Number.MAX_SAFE_INTEGER) throw new RangeError(`${where}: the tensor spans more than 2**53 elements`);
    // the calls check tensors against these (extent: the bytes cuDNN touches): they stay the native descriptor's
    lockFields(this as TensorDescriptor, ['dtype', 'shape', 'strides', 'size', 'extent', 'id']);
  }

  /**
   * The descriptor of a view: its dtype, shape and strides (its offset is the operand's business).
   * @param view A view whose dtype, shape ([N, C, …spatial]) and strides become the descriptor's; its byte offset is ignored.
   */
  static of(view: StridedView): TensorDescriptor {
    if (!(view instanceof StridedView)) throw new TypeError(`TensorDescriptor.of: view must be a StridedView, got ${describe(view)}`);
    return new TensorDescriptor({ dtype: view.dtype as CudnnDType, shape: view.shape, strides: view.strides });
  }

  /** Number of dimensions. */
  get ndim(): number {
    return this.shape.length;
  }

  /** cuDNN's descriptor, made on the first call that needs it. @internal */
  native(where: string): cudnnNative.cudnnTensorDescriptor_t {
    this.assertOpen(where);
    if (this.slot.handle !== 0) return this.slot.handle as cudnnNative.cudnnTensorDescriptor_t;
    const api = cudnnApi();
    const h = api.cudnnCreateTensorDescriptor();
    const pad = Math.max(0, 4 - this.shape.length);
    const dims = Int32Array.from([...this.shape, ...new Array<number>(pad).fill(1)]);
    const strides = Int32Array.from([...this.strides, ...new Array<number>(pad).fill(1)]);
    try {
      api.cudnnSetTensorNdDescriptor(h, CUDNN_DATA_TYPE[this.dtype] as cudnnNative.cudnnDataType_t, dims.length, dims, strides);
    } catch (e) {
      api.cudnnDestroyTensorDescriptor(h);
      throw e;
    }
    this.slot.api = api;
    this.slot.handle = h as number;
    return h;
  }

  /** `TensorDescriptor(f32, shape [...], strides [...])`. */
  toString(): string {
    return `TensorDescriptor(${this.dtype}, shape [${this.shape}], strides [${this.strides}])`;
  }
}

/** Options of {@link FilterDescriptor}. */
export interface FilterDescriptorOptions {
  /** The element type of the weights: 'f16', 'f32' or 'f64' (the same as the data's). */
  dtype: CudnnDType;
  /** [K (output channels), C / groups, …spatial] whatever the layout: 4 dimensions for 2-D convolutions, 5 for 3-D. */
  shape: readonly number[];
  /** Memory order: NCHW ([K][C][R][S], the default) or NHWC ([K][R][S][C]). */
  layout?: TensorLayout;
}

/** A convolution's filter (weights): dtype, shape and layout (cudnnSetFilterNdDescriptor), packed. */
export class FilterDescriptor extends Resource {
  /** The element type of the weights. */
  readonly dtype: CudnnDType;
  /** [K (output channels), C / groups, …spatial] whatever the layout. */
  readonly shape: readonly number[];
  /** Memory order of the packed weights: 'NCHW' ([K][C][R][S]) or 'NHWC' ([K][R][S][C]). */
  readonly layout: TensorLayout;
  /** Element strides the layout implies. */
  readonly strides: readonly number[];
  /** Number of elements (the filter is packed: also what a buffer must hold). */
  readonly size: number;
  /** @internal */
  readonly id = nextDescriptorId();
  private readonly slot: NativeSlot;

  /**
   * Checks `options` (RangeError/TypeError naming `FilterDescriptor`); cuDNN is not loaded until a call uses it.
   * @param options `dtype` ('f16', 'f32' or 'f64', the data's), `shape` ([K, C / groups, …spatial]: 4 dimensions for 2-D convolutions, 5 for 3-D) and
   * `layout` ('NCHW' default: [K][C][R][S]; 'NHWC': [K][R][S][C]).
   */
  constructor(options: FilterDescriptorOptions) {
    const where = 'FilterDescriptor';
    const o = checkOptions(where, options, ['dtype', 'shape', 'layout']);
    const dtype = checkDType(where, 'dtype', o.dtype, CUDNN_DTYPES);
    const shape = positiveIntegers(where, 'shape', o.shape, 1, INT_MAX, 3, 8);
    const layout = layoutOf(where, o.layout);
    const slot: NativeSlot = { handle: 0, api: undefined };
    super('FilterDescriptor', () => {
      if (slot.handle !== 0) slot.api!.cudnnDestroyFilterDescriptor(slot.handle as cudnnNative.cudnnFilterDescriptor_t);
    });
    this.slot = slot;
    this.dtype = dtype;
    this.shape = Object.freeze(shape);
    this.layout = layout;
    this.strides = Object.freeze(layout === 'NHWC' ? channelsLastStrides(shape) : contiguousStrides(shape));
    this.size = shape.reduce((a, b) => a * b, 1);
    lockFields(this as FilterDescriptor, ['dtype', 'shape', 'layout', 'strides', 'size', 'id']);
  }

  /**
   * The descriptor of a packed view of shape [K, C/groups, …spatial]: C order is NCHW, channels-last strides NHWC.
   * @param view A packed view of shape [K, C / groups, …spatial]: C-order strides give NCHW, channels-last strides NHWC.
   */
  static of(view: StridedView): FilterDescriptor {
    const where = 'FilterDescriptor.of';
    if (!(view instanceof StridedView)) throw new TypeError(`${where}: view must be a StridedView, got ${describe(view)}`);
    const same = (s: readonly number[]): boolean => s.every((x, i) => x === view.strides[i] || view.shape[i] === 1);
    const layout = same(contiguousStrides(view.shape)) ? 'NCHW' : view.ndim >= 3 && same(channelsLastStrides(view.shape)) ? 'NHWC' : undefined;
    if (layout === undefined)
      throw new RangeError(`${where}: a filter is packed NCHW or NHWC; the view's strides [${view.strides}] are neither for shape [${view.shape}]`);
    return new FilterDescriptor({ dtype: view.dtype as CudnnDType, shape: view.shape, layout });
  }

  /** Number of dimensions. */
  get ndim(): number {
    return this.shape.length;
  }

  /** cuDNN's descriptor, made on the first call that needs it. @internal */
  native(where: string): cudnnNative.cudnnFilterDescriptor_t {
    this.assertOpen(where);
    if (this.slot.handle !== 0) return this.slot.handle as cudnnNative.cudnnFilterDescriptor_t;
    const api = cudnnApi();
    const h = api.cudnnCreateFilterDescriptor();
    try {
      const format = CUDNN_FORMAT[this.layout] as cudnnNative.cudnnTensorFormat_t;
      api.cudnnSetFilterNdDescriptor(h, CUDNN_DATA_TYPE[this.dtype] as cudnnNative.cudnnDataType_t, format, this.shape.length, Int32Array.from(this.shape));
    } catch (e) {
      api.cudnnDestroyFilterDescriptor(h);
      throw e;
    }
    this.slot.api = api;
    this.slot.handle = h as number;
    return h;
  }

  /** `FilterDescriptor(f32, shape [...], NCHW)`. */
  toString(): string {
    return `FilterDescriptor(${this.dtype}, shape [${this.shape}], ${this.layout})`;
  }
}

/** Options of {@link ConvolutionDescriptor}: each spatial setting a number (every dimension) or one per dimension. */
export interface ConvolutionOptions {
  /** Zero padding on both sides of each spatial dimension (default 0). */
  padding?: number | readonly number[];
  /** Step of the filter (default 1). */
  stride?: number | readonly number[];
  /** Spacing of the filter's taps (default 1). */
  dilation?: number | readonly number[];
  /** Channel groups (default 1): input and output channels split into this many independent convolutions. */
  groups?: number;
  /** Tensor-core use (default 'default': on Ampere and later f32 may compute in TF32; 'fma' forbids it). */
  mathType?: ConvolutionMathType;
  /** Default 'crossCorrelation', what deep-learning frameworks compute. */
  mode?: ConvolutionMode;
  /** The accumulation type; default f32 for f16 and f32 data, f64 for f64 data. */
  computeType?: CudnnDType;
}

function spatial(where: string, name: string, v: unknown, dflt: number, min: number): number | readonly number[] {
  if (v === undefined) return dflt;
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < min || v > INT_MAX) throw new RangeError(`${where}: ${name} must be an integer ≥ ${min}, got ${v}`);
    return v;
  }
  return Object.freeze(positiveIntegers(where, name, v, min, INT_MAX, 2, 3));
}

/** Key of one native convolution descriptor: compute type and spatial dimensions. */
const convKey = (compute: number, dims: number): number => compute * 16 + dims;

/**
 * A convolution's padding, stride, dilation, groups, math type and mode (cudnnSetConvolutionNdDescriptor).
 * It fits 2-D and 3-D convolutions when its settings are numbers; arrays fix the spatial dimensions.
 */
export class ConvolutionDescriptor extends Resource {
  /** Zero padding on both sides of each spatial dimension, in elements: one number for all, or one per dimension (default 0). */
  readonly padding: number | readonly number[];
  /** Step of the filter over the input, in elements (default 1). */
  readonly stride: number | readonly number[];
  /** Spacing of the filter's taps, in elements (default 1: no holes). */
  readonly dilation: number | readonly number[];
  /** Channel groups: the channels split into this many independent convolutions (default 1). */
  readonly groups: number;
  /** Tensor-core use asked for (default 'default'); a call may switch the native descriptor to the one its chosen algorithm needs. */
  readonly mathType: ConvolutionMathType;
  /** 'crossCorrelation' (default, what deep-learning frameworks compute) or 'convolution' (the filter flipped). */
  readonly mode: ConvolutionMode;
  /** The accumulation type set; undefined means f32 for f16 and f32 data, f64 for f64 data. */
  readonly computeType: CudnnDType | undefined;
  /** The spatial dimensions the array settings fix (2 or 3), or undefined when every setting is a number. */
  readonly spatialDims: number | undefined;
  /** @internal */
  readonly id = nextDescriptorId();
  private readonly natives: Map<number, { handle: number; math: number }>;
  private readonly slot: { api: CudnnApi | undefined };

  /**
   * Checks `options` (RangeError/TypeError naming `ConvolutionDescriptor`); every setting has a default.
   * @param options `padding` (default 0), `stride` (default 1), `dilation` (default 1): each a number for every spatial dimension or one per dimension, in
   * elements; `groups` (default 1), `mathType` ('default': TF32 allowed on Ampere and later; 'tensorOp', 'tensorOpAllowConversion', or 'fma' to forbid
   * tensor cores), `mode` ('crossCorrelation' default, or 'convolution') and `computeType` (default f32 for f16/f32 data, f64 for f64).
   */
  constructor(options: ConvolutionOptions = {}) {
    const where = 'ConvolutionDescriptor';
    const o = checkOptions(where, options, ['padding', 'stride', 'dilation', 'groups', 'mathType', 'mode', 'computeType']);
    const padding = spatial(where, 'padding', o.padding, 0, 0);
    const stride = spatial(where, 'stride', o.stride, 1, 1);
    const dilation = spatial(where, 'dilation', o.dilation, 1, 1);
    const lengths = [padding, stride, dilation].filter((s): s is readonly number[] => typeof s !== 'number').map((s) => s.length);
    if (new Set(lengths).size > 1)
      throw new RangeError(`${where}: padding, stride and dilation name different numbers of spatial dimensions (${lengths.join(', ')})`);
    const groups = o.groups ?? 1;
    if (typeof groups !== 'number' || !Number.isInteger(groups) || groups < 1 || groups > INT_MAX)
      throw new RangeError(`${where}: groups must be an integer ≥ 1, got ${describe(groups)}`);
    const mathType = o.mathType ?? 'default';
    if (typeof mathType !== 'string' || !Object.hasOwn(CUDNN_MATH_TYPE, mathType))
      throw new TypeError(`${where}: mathType must be one of ${Object.keys(CUDNN_MATH_TYPE).join(', ')}, got ${describe(mathType)}`);
    const mode = o.mode ?? 'crossCorrelation';
    if (typeof mode !== 'string' || !Object.hasOwn(CUDNN_CONVOLUTION_MODE, mode))
      throw new TypeError(`${where}: mode must be 'crossCorrelation' or 'convolution', got ${describe(mode)}`);
    const computeType = o.computeType === undefined ? undefined : checkDType(where, 'computeType', o.computeType, CUDNN_DTYPES);
    const natives = new Map<number, { handle: number; math: number }>();
    const slot: { api: CudnnApi | undefined } = { api: undefined };
    super('ConvolutionDescriptor', () => {
      for (const n of natives.values()) slot.api!.cudnnDestroyConvolutionDescriptor(n.handle as cudnnNative.cudnnConvolutionDescriptor_t);
      natives.clear();
    });
    this.padding = padding;
    this.stride = stride;
    this.dilation = dilation;
    this.groups = groups;
    this.mathType = mathType as ConvolutionMathType;
    this.mode = mode as ConvolutionMode;
    this.computeType = computeType;
    this.spatialDims = lengths[0];
    this.natives = natives;
    this.slot = slot;
    lockFields(this as ConvolutionDescriptor, ['padding', 'stride', 'dilation', 'groups', 'mathType', 'mode', 'computeType', 'spatialDims', 'id']);
  }

  /** `setting` (padding, stride or dilation) for `dims` spatial dimensions. @internal */
  perDimension(setting: number | readonly number[], dims: number): number[] {
    return typeof setting === 'number' ? new Array<number>(dims).fill(setting) : [...setting];
  }

  /**
   * The output shape of this convolution of `x` by `w` ([N, K, …spatial]), computed here (the formula
   * cuDNN applies); RangeError naming `where` when the two do not fit together.
   * @param x The input tensor's descriptor, [N, C, …spatial].
   * @param w The filter's descriptor, [K, C / groups, …spatial].
   * @param where The call named in a RangeError when x and w do not fit together (default 'ConvolutionDescriptor.outputShape').
   */
  outputShape(x: TensorDescriptor, w: FilterDescriptor, where = 'ConvolutionDescriptor.outputShape'): number[] {
    if (!(x instanceof TensorDescriptor)) throw new TypeError(`${where}: x must be a TensorDescriptor, got ${describe(x)}`);
    if (!(w instanceof FilterDescriptor)) throw new TypeError(`${where}: w must be a FilterDescriptor, got ${describe(w)}`);
    const nd = x.ndim;
    if (nd !== 4 && nd !== 5) throw new RangeError(`${where}: x must have 4 dimensions (NCHW, a 2-D convolution) or 5 (NCDHW, 3-D), got ${nd}`);
    if (w.ndim !== nd) throw new RangeError(`${where}: w has ${w.ndim} dimensions, x ${nd}`);
    if (this.spatialDims !== undefined && this.spatialDims !== nd - 2)
      throw new RangeError(`${where}: the convolution has ${this.spatialDims} spatial dimensions, x ${nd - 2}`);
    const [c, k] = [x.shape[1], w.shape[0]];
    if (c % this.groups !== 0 || k % this.groups !== 0)
      throw new RangeError(`${where}: groups ${this.groups} must divide the input channels ${c} and the output channels ${k}`);
    if (w.shape[1] * this.groups !== c)
      throw new RangeError(`${where}: w has ${w.shape[1]} channels per group, x ${c} channels in ${this.groups} group(s) (${c / this.groups} each)`);
    const [pad, str, dil] = [this.padding, this.stride, this.dilation].map((s) => this.perDimension(s, nd - 2));
    const out = [x.shape[0], k];
    for (let d = 0; d < nd - 2; d++) {
      const span = dil[d] * (w.shape[d + 2] - 1) + 1;
      const room = x.shape[d + 2] + 2 * pad[d] - span;
      if (room < 0)
        throw new RangeError(`${where}: spatial dimension ${d}: the dilated filter spans ${span}, more than the padded input ${x.shape[d + 2] + 2 * pad[d]}`);
      out.push(Math.floor(room / str[d]) + 1);
    }
    return out;
  }

  /** The compute dtype for `data` dtype: the one set, else f32 (f16, f32) or f64. @internal */
  computeFor(data: CudnnDType): CudnnDType {
    return this.computeType ?? (data === 'f64' ? 'f64' : 'f32');
  }

  /** cuDNN's descriptor for `compute` and `dims` spatial dimensions, made on first use. @internal */
  native(where: string, compute: CudnnDType, dims: number): cudnnNative.cudnnConvolutionDescriptor_t {
    this.assertOpen(where);
    const key = convKey(CUDNN_DATA_TYPE[compute], dims);
    const hit = this.natives.get(key);
    if (hit !== undefined) return hit.handle as cudnnNative.cudnnConvolutionDescriptor_t;
    const api = cudnnApi();
    const h = api.cudnnCreateConvolutionDescriptor();
    const math = CUDNN_MATH_TYPE[this.mathType];
    try {
      const [pad, str, dil] = [this.padding, this.stride, this.dilation].map((s) => Int32Array.from(this.perDimension(s, dims)));
      const mode = CUDNN_CONVOLUTION_MODE[this.mode] as cudnnNative.cudnnConvolutionMode_t;
      api.cudnnSetConvolutionNdDescriptor(h, dims, pad, str, dil, mode, CUDNN_DATA_TYPE[compute] as cudnnNative.cudnnDataType_t);
      if (this.groups !== 1) api.cudnnSetConvolutionGroupCount(h, this.groups);
      api.cudnnSetConvolutionMathType(h, math as cudnnNative.cudnnMathType_t);
    } catch (e) {
      api.cudnnDestroyConvolutionDescriptor(h);
      throw e;
    }
    this.slot.api = api;
    this.natives.set(key, { handle: h as number, math });
    return h;
  }

  /**
   * Sets the math type of the native descriptor to the one an algorithm was chosen with (cuDNN's
   * heuristics report it per algorithm), when it differs. @internal
   */
  useMath(handle: cudnnNative.cudnnConvolutionDescriptor_t, math: number): void {
    for (const n of this.natives.values()) {
      if (n.handle !== (handle as number) || n.math === math) continue;
      this.slot.api!.cudnnSetConvolutionMathType(handle, math as cudnnNative.cudnnMathType_t);
      n.math = math;
    }
  }

  /** `ConvolutionDescriptor(padding …, stride …, dilation …, groups …)`. */
  toString(): string {
    return `ConvolutionDescriptor(padding ${String(this.padding)}, stride ${String(this.stride)}, dilation ${String(this.dilation)}, groups ${this.groups}, ${this.mathType})`;
  }
}

/** Options of {@link ActivationDescriptor}. */
export interface ActivationOptions {
  /** clippedRelu: the ceiling (required; 6 is ReLU6). */
  ceiling?: number;
  /** elu: α (default 1). */
  alpha?: number;
  /** swish: β (default 1: SiLU). */
  beta?: number;
  /** Whether NaN inputs give NaN (default false: cuDNN's CUDNN_NOT_PROPAGATE_NAN). */
  propagateNan?: boolean;
}

/** An activation function (cudnnSetActivationDescriptor): relu, sigmoid, tanh, clippedRelu, elu, swish. */
export class ActivationDescriptor extends Resource {
  /** The activation function: 'relu', 'sigmoid', 'tanh', 'clippedRelu', 'elu' or 'swish'. */
  readonly mode: ActivationMode;
  /** The mode's coefficient: clippedRelu's ceiling, elu's α, swish's β (0 for the others). */
  readonly coef: number;
  /** Whether NaN inputs give NaN outputs (default false). */
  readonly propagateNan: boolean;
  private readonly slot: NativeSlot;

  /**
   * `mode` with its coefficient option where it has one (clippedRelu needs `ceiling`); an option of another mode is a TypeError.
   * @param mode The function: 'relu', 'sigmoid', 'tanh', 'clippedRelu', 'elu' or 'swish'.
   * @param options The mode's coefficient where it has one (`ceiling` for clippedRelu, required; `alpha` for elu, default 1; `beta` for swish, default 1) and
   * `propagateNan` (default false).
   */
  constructor(mode: ActivationMode, options: ActivationOptions = {}) {
    const where = 'ActivationDescriptor';
    if (typeof mode !== 'string' || !Object.hasOwn(CUDNN_ACTIVATION_MODE, mode)) {
      throw new TypeError(
        `${where}: mode must be one of ${Object.keys(CUDNN_ACTIVATION_MODE).join(', ')}, got ${typeof mode === 'string' ? `'${mode}'` : describe(mode)}`,
      );
    }
    const o = checkOptions(where, options, ['ceiling', 'alpha', 'beta', 'propagateNan']);
    const key = mode === 'clippedRelu' ? 'ceiling' : mode === 'elu' ? 'alpha' : mode === 'swish' ? 'beta' : undefined;
    for (const k of ['ceiling', 'alpha', 'beta']) {
      if (o[k] !== undefined && k !== key) throw new TypeError(`${where}: option '${k}' does not apply to ${mode}`);
    }
    const coef = key === undefined ? 0 : (o[key] ?? (key === 'ceiling' ? undefined : 1));
    if (key === 'ceiling' && coef === undefined) throw new TypeError(`${where}: clippedRelu needs the ceiling option (6 for ReLU6)`);
    if (typeof coef !== 'number' || !Number.isFinite(coef)) throw new TypeError(`${where}: ${key} must be a finite number, got ${describe(coef)}`);
    if (o.propagateNan !== undefined && typeof o.propagateNan !== 'boolean')
      throw new TypeError(`${where}: propagateNan must be a boolean, got ${describe(o.propagateNan)}`);
    const slot: NativeSlot = { handle: 0, api: undefined };
    super('ActivationDescriptor', () => {
      if (slot.handle !== 0) slot.api!.cudnnDestroyActivationDescriptor(slot.handle as cudnnNative.cudnnActivationDescriptor_t);
    });
    this.slot = slot;
    this.mode = mode;
    this.coef = coef;
    this.propagateNan = o.propagateNan === true;
    lockFields(this as ActivationDescriptor, ['mode', 'coef', 'propagateNan']);
  }

  /** cuDNN's descriptor, made on the first call that needs it. @internal */
  native(where: string): cudnnNative.cudnnActivationDescriptor_t {
    this.assertOpen(where);
    if (this.slot.handle !== 0) return this.slot.handle as cudnnNative.cudnnActivationDescriptor_t;
    const api = cudnnApi();
    const h = api.cudnnCreateActivationDescriptor();
    try {
      const nan = (this.propagateNan ? 1 : 0) as cudnnNative.cudnnNanPropagation_t;
      // swish takes β through its own setter; the coefficient slot is clippedRelu's ceiling or elu's α
      api.cudnnSetActivationDescriptor(h, CUDNN_ACTIVATION_MODE[this.mode] as cudnnNative.cudnnActivationMode_t, nan, this.mode === 'swish' ? 0 : this.coef);
      if (this.mode === 'swish') api.cudnnSetActivationDescriptorSwishBeta(h, this.coef);
    } catch (e) {
      api.cudnnDestroyActivationDescriptor(h);
      throw e;
    }
    this.slot.api = api;
    this.slot.handle = h as number;
    return h;
  }

  /** `ActivationDescriptor(relu)`. */
  toString(): string {
    return `ActivationDescriptor(${this.mode}${this.coef !== 0 ? `, ${this.coef}` : ''})`;
  }
}
