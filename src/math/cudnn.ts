// cuDNN as an object: a handle bound to a Stream (cudnnSetStream) running convolution forward and
// activation forward on DeviceBuffers or StridedViews described by the descriptors of ./cudnn-descriptors.
// The legacy convolution API (cudnn_cnn.h: deprecated in cuDNN 9, still exported) is what this uses.
// A convolution's algorithm is chosen once per (convolution, x, w, y) with cuDNN's heuristics
// (cudnnGetConvolutionForwardAlgorithm_v7) or by timing (cudnnFindConvolutionForwardAlgorithm), and its
// workspace comes from the caching allocator and is kept for the next call. alpha and beta are numbers,
// boxed in host memory as float (f16, f32 data) or double (f64 data), as cuDNN reads them.
import { describe } from '../describe';
import { whenNoHostFuncs } from '../lifecycle';
import { DeviceBuffer } from '../memory/device-buffer';
import { StridedView } from '../memory/strided-view';
import type { Context } from '../context';
import type { Stream, StreamLike } from '../stream';
import { ScalarBox, StreamBoundResource, checkExtent, createStream, operand, optionsOf, resolveStream } from './common';
import {
  CONVOLUTION_FWD_ALGORITHMS,
  CUDNN_MATH_TYPE,
  cudnnApi,
  type ConvolutionForwardAlgorithm,
  type ConvolutionMathType,
  type CudnnApi,
  type CudnnDType,
  type cudnnNative,
} from './cudnn-api';
import { ActivationDescriptor, ConvolutionDescriptor, FilterDescriptor, TensorDescriptor } from './cudnn-descriptors';
import { SEALED, type Sealed, checkSealed } from '../sealed';

/** Options of {@link Cudnn.create}. */
export interface CudnnOptions {
  /** The stream the handle's work is enqueued on (default: the current context's legacy default stream). */
  stream?: StreamLike;
}

/** How {@link Cudnn.convolutionForward} picks its algorithm: heuristics, timing, or one by name. */
export type ConvolutionAlgorithmChoice = 'heuristic' | 'find' | ConvolutionForwardAlgorithm;

/** Options of {@link Cudnn.convolutionForward}. */
export interface ConvolutionForwardOptions {
  /** y = alpha · (x ∗ w) + beta · y. Default 1. */
  alpha?: number;
  /** Default 0 (y is only written). */
  beta?: number;
  /** Default 'heuristic' (cuDNN's first choice that fits the workspace limit); 'find' times every algorithm once. */
  algorithm?: ConvolutionAlgorithmChoice;
  /** The most workspace bytes an algorithm may use (default: no limit). */
  workspaceLimit?: number;
}

/** Options of {@link Cudnn.activationForward}. */
export interface ActivationForwardOptions {
  /** y = alpha · f(x) + beta · y. Default 1. */
  alpha?: number;
  /** Default 0. */
  beta?: number;
}

/** One forward algorithm as cuDNN ranks it (cudnnConvolutionFwdAlgoPerf_t). */
export interface ConvolutionAlgorithmPerf {
  /** The forward algorithm ranked. */
  algorithm: ConvolutionForwardAlgorithm;
  /** cudnnStatus_t: 0 when the algorithm can run this convolution. */
  status: number;
  /** Milliseconds measured by 'find'; -1 from the heuristics. */
  time: number;
  /** Workspace bytes it needs. */
  memory: number;
  /** True when it gives bit-identical results from run to run. */
  deterministic: boolean;
  /** The math type (tensor-core use) it was ranked with, and will run with if chosen. */
  mathType: ConvolutionMathType;
}

/** The algorithm, math type and workspace chosen for one (convolution, x, w, y). */
interface Plan {
  algo: number;
  /** cudnnMathType_t the algorithm was chosen with (set on the convolution's descriptor before each call). */
  math: number;
  workspace: number;
}

const MATH_NAMES = Object.keys(CUDNN_MATH_TYPE) as ConvolutionMathType[];
const PLANS_KEPT = 256;

/** One record cuDNN ranked (cudnnConvolutionFwdAlgoPerf_t, decoded by the typed layer), by name. @internal */
export function algorithmPerf(r: cudnnNative.cudnnConvolutionFwdAlgoPerf_t): ConvolutionAlgorithmPerf {
  return {
    algorithm: CONVOLUTION_FWD_ALGORITHMS[r.algo] ?? (`algorithm ${r.algo}` as ConvolutionForwardAlgorithm),
    status: r.status,
    time: r.time,
    memory: Number(r.memory),
    deterministic: r.determinism === 1,
    mathType: MATH_NAMES[r.mathType] ?? 'default',
  };
}

function sameExtents(a: readonly number[], b: readonly number[], shape: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && shape[i] !== 1) return false;
  return true;
}

/** The device address of `value` holding the tensor `desc` describes (checks dtype, layout, extent, context). */
function tensorData(where: string, name: string, desc: TensorDescriptor | FilterDescriptor, value: unknown, ctx: Context): number {
  const r = operand(where, name, value, desc.dtype);
  if (value instanceof StridedView && (!sameExtents(r.shape, desc.shape, desc.shape) || !sameExtents(r.strides, desc.strides, desc.shape))) {
    throw new RangeError(
      `${where}: ${name} is a view of shape [${r.shape}] with strides [${r.strides}], its descriptor says shape [${desc.shape}] with strides [${desc.strides}]`,
    );
  }
  checkExtent(where, name, r, desc instanceof TensorDescriptor ? desc.extent : desc.size);
  if (r.buffer.context !== ctx) throw new TypeError(`${where}: ${name} belongs to ${String(r.buffer.context)}, the handle to ${String(ctx)}`);
  return r.address;
}

function scalarOption(where: string, name: string, v: unknown, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number') throw new TypeError(`${where}: ${name} must be a number, got ${describe(v)}`);
  return v;
}

function checkTypes(where: string, conv: unknown, x: unknown, w: unknown, y: unknown): void {
  if (!(conv instanceof ConvolutionDescriptor)) throw new TypeError(`${where}: conv must be a ConvolutionDescriptor, got ${describe(conv)}`);
  if (!(x instanceof TensorDescriptor)) throw new TypeError(`${where}: xDesc must be a TensorDescriptor, got ${describe(x)}`);
  if (!(w instanceof FilterDescriptor)) throw new TypeError(`${where}: wDesc must be a FilterDescriptor, got ${describe(w)}`);
  if (y !== undefined && !(y instanceof TensorDescriptor)) throw new TypeError(`${where}: yDesc must be a TensorDescriptor, got ${describe(y)}`);
}

/** Checks that x, w and y fit the convolution (dtypes, compute type, y's shape); returns the compute dtype. */
function checkConvolution(where: string, conv: ConvolutionDescriptor, x: TensorDescriptor, w: FilterDescriptor, y: TensorDescriptor): CudnnDType {
  if (w.dtype !== x.dtype || y.dtype !== x.dtype) throw new TypeError(`${where}: x, w and y must have one dtype, got ${x.dtype}, ${w.dtype}, ${y.dtype}`);
  const compute = conv.computeFor(x.dtype);
  const fits = x.dtype === 'f16' ? compute !== 'f64' : compute === x.dtype;
  if (!fits) throw new TypeError(`${where}: computeType ${compute} does not fit ${x.dtype} data (f16 data: f16 or f32; f32: f32; f64: f64)`);
  const expected = conv.outputShape(x, w, where);
  if (!sameExtents(y.shape, expected, [])) throw new RangeError(`${where}: y has shape [${y.shape}], the convolution gives [${expected}]`);
  return compute;
}

function algorithmOption(where: string, v: unknown): ConvolutionAlgorithmChoice {
  if (v === undefined) return 'heuristic';
  if (v === 'heuristic' || v === 'find' || (typeof v === 'string' && (CONVOLUTION_FWD_ALGORITHMS as readonly string[]).includes(v)))
    return v as ConvolutionAlgorithmChoice;
  throw new TypeError(`${where}: algorithm must be 'heuristic', 'find' or one of ${CONVOLUTION_FWD_ALGORITHMS.join(', ')}, got ${describe(v)}`);
}

function limitOption(where: string, v: unknown): number {
  if (v === undefined) return Infinity;
  if (typeof v !== 'number' || !(v >= 0) || (Number.isFinite(v) && !Number.isInteger(v)))
    throw new RangeError(`${where}: workspaceLimit must be a non-negative integer of bytes (or Infinity), got ${describe(v)}`);
  return v;
}

/** The natives of one convolution call. */
interface Natives {
  conv: cudnnNative.cudnnConvolutionDescriptor_t;
  x: cudnnNative.cudnnTensorDescriptor_t;
  w: cudnnNative.cudnnFilterDescriptor_t;
  y: cudnnNative.cudnnTensorDescriptor_t;
}

/**
 * A cuDNN handle (cudnnCreate) working on one Stream: convolution forward and activation forward on
 * device tensors. `close()` destroys it; the stream may be closed first (its destroy waits for the handle).
 * @example
 * ```ts
 * import { ConvolutionDescriptor, Cudnn, DeviceBuffer, FilterDescriptor, Stream, TensorDescriptor } from 'cuda-ts/objects';
 *
 * using stream = Stream.create();
 * using dnn = Cudnn.create({ stream }); // loads cuDNN
 * using xDesc = new TensorDescriptor({ dtype: 'f32', shape: [1, 1, 4, 4] }); // [N, C, H, W], NCHW
 * using wDesc = new FilterDescriptor({ dtype: 'f32', shape: [1, 1, 3, 3] }); // [K, C, R, S]
 * using conv = new ConvolutionDescriptor({ padding: 1 });
 * using yDesc = new TensorDescriptor({ dtype: 'f32', shape: conv.outputShape(xDesc, wDesc) }); // [1, 1, 4, 4]
 * using x = DeviceBuffer.from(new Float32Array(16).fill(1), { stream });
 * using w = DeviceBuffer.from(new Float32Array(9).fill(1), { stream });
 * using y = DeviceBuffer.alloc(yDesc.size * 4, { stream });
 * dnn.convolutionForward(conv, xDesc, x, wDesc, w, yDesc, y); // the algorithm and workspace are chosen once
 * console.log(y.toArray(Float32Array, { stream }).slice(0, 4)); // Float32Array [4, 6, 6, 4]: 3×3 box sums
 * ```
 */
export class Cudnn extends StreamBoundResource {
  /** cuDNN's handle (`cudnnHandle_t`), for calls of the typed layer the object does not cover. */
  readonly handle: cudnnNative.cudnnHandle_t;
  private readonly api: CudnnApi;
  private readonly alphaBox = new ScalarBox();
  private readonly betaBox = new ScalarBox();
  private workspace: DeviceBuffer | undefined;
  private readonly plans = new Map<string, Plan>();
  // the last convolution's arguments and plan: a repeated call skips the key and the map
  private last: { conv: unknown; x: unknown; w: unknown; y: unknown; compute: CudnnDType; choice: unknown; limit: number; plan: Plan } | undefined;

  private constructor(seal: Sealed, handle: cudnnNative.cudnnHandle_t, api: CudnnApi, stream: Stream) {
    checkSealed(seal, 'Cudnn', 'Cudnn.create()');
    const ctx = stream.context;
    super(
      'Cudnn',
      () =>
        whenNoHostFuncs(() => {
          if (ctx.bindForFree()) api.cudnnDestroy(handle);
        }),
      stream,
    );
    this.handle = handle;
    this.api = api;
  }

  /**
   * A handle on `options.stream` (default: the current context's legacy default stream). Loads cuDNN.
   * @param options `stream`: the stream the handle's work is enqueued on (default: the current context's legacy default stream).
   */
  static create(options: CudnnOptions = {}): Cudnn {
    const where = 'Cudnn.create';
    const stream = createStream(where, options);
    const api = cudnnApi();
    const h = api.cudnnCreate();
    try {
      api.cudnnSetStream(h, stream.handle as unknown as cudnnNative.cudaStream_t);
    } catch (e) {
      api.cudnnDestroy(h);
      throw e;
    }
    return new Cudnn(SEALED, h, api, stream);
  }

  /** cuDNN's version as a number (cudnnGetVersion: 91900 for 9.19.0). Loads cuDNN. */
  static get version(): number {
    return cudnnApi().cudnnGetVersion();
  }

  /**
   * Enqueues the handle's later work on `stream` (same context); the kept workspace is freed on the old one.
   * @param stream The stream later calls enqueue on: a Stream (or stream-protocol object) of the handle's context.
   */
  setStream(stream: StreamLike): void {
    const where = 'Cudnn.setStream';
    this.checkUsable(where);
    const s = resolveStream(where, stream);
    // the context first: another context's legacy stream has the same handle, yet is not this handle's
    if (s.context !== this.context) throw new TypeError(`${where}: the stream belongs to ${String(s.context)}, the handle to ${String(this.context)}`);
    if (s === this.stream || s.handle === this.stream.handle) return;
    this.context.bind();
    this.api.cudnnSetStream(this.handle, s.handle as unknown as cudnnNative.cudaStream_t);
    this.dropWorkspace();
    this.adoptStream(s);
  }

  /**
   * The output shape cuDNN computes for `conv` of `x` by `w` (cudnnGetConvolutionNdForwardOutputDim).
   * @param conv The convolution's settings (padding, stride, dilation, groups, math type, mode, compute type).
   * @param x The input tensor's descriptor: dtype, [N, C, …spatial] shape and strides.
   * @param w The filter's descriptor: dtype and [K, C / groups, …spatial] shape, packed.
   */
  convolutionOutputShape(conv: ConvolutionDescriptor, x: TensorDescriptor, w: FilterDescriptor): number[] {
    const where = 'Cudnn.convolutionOutputShape';
    checkTypes(where, conv, x, w, undefined);
    conv.outputShape(x, w, where); // our checks first, with our messages
    this.checkUsable(where);
    const nd = x.ndim;
    const out = new Int32Array(nd);
    this.api.cudnnGetConvolutionNdForwardOutputDim(conv.native(where, conv.computeFor(x.dtype), nd - 2), x.native(where), w.native(where), nd, out);
    return Array.from(out);
  }

  /**
   * The forward algorithms for this convolution, best first: cuDNN's heuristics, or with `find` each
   * timed once on the GPU (cudnnFindConvolutionForwardAlgorithm: synchronous, allocates its own memory).
   * @param conv The convolution's settings (padding, stride, dilation, groups, math type, mode, compute type).
   * @param x The input tensor's descriptor: dtype, [N, C, …spatial] shape and strides.
   * @param w The filter's descriptor: dtype and [K, C / groups, …spatial] shape, packed.
   * @param y The output tensor's descriptor: its shape must be the convolution's output shape.
   * @param options `find`: time each algorithm once on the GPU (synchronous; default false: cuDNN's heuristics, times -1).
   */
  convolutionAlgorithms(
    conv: ConvolutionDescriptor,
    x: TensorDescriptor,
    w: FilterDescriptor,
    y: TensorDescriptor,
    options: { find?: boolean } = {},
  ): ConvolutionAlgorithmPerf[] {
    const where = 'Cudnn.convolutionAlgorithms';
    checkTypes(where, conv, x, w, y);
    const o = optionsOf(where, options, ['find']);
    if (o.find !== undefined && typeof o.find !== 'boolean') throw new TypeError(`${where}: find must be a boolean, got ${describe(o.find)}`);
    const compute = checkConvolution(where, conv, x, w, y);
    this.checkUsable(where);
    this.context.bind();
    return this.rank(this.natives(where, conv, x, w, y, compute), o.find === true);
  }

  /**
   * y = alpha · conv(x, w) + beta · y (cudnnConvolutionForward), x and y described by TensorDescriptors,
   * w by a FilterDescriptor, each datum a DeviceBuffer or a StridedView matching its descriptor.
   * Enqueued on the handle's stream; y must not overlap x or w.
   * @param conv The convolution's settings (padding, stride, dilation, groups, math type, mode, compute type).
   * @param xDesc The input tensor's descriptor: dtype (f16, f32, f64), [N, C, …spatial] shape, strides.
   * @param x The input's device memory: a DeviceBuffer holding the descriptor's extent from byte 0, or a StridedView whose dtype, shape and strides equal the
   * descriptor's.
   * @param wDesc The filter's descriptor: x's dtype, [K, C / groups, …spatial] shape, packed.
   * @param w The filter's device memory: a DeviceBuffer holding the descriptor's extent from byte 0, or a StridedView whose dtype, shape and strides equal
   * the descriptor's.
   * @param yDesc The output tensor's descriptor: x's dtype and the convolution's output shape (see {@link ConvolutionDescriptor.outputShape}).
   * @param y The output's device memory: a DeviceBuffer holding the descriptor's extent from byte 0, or a StridedView whose dtype, shape and strides equal
   * the descriptor's. Read too when beta ≠ 0; must not overlap x or w.
   * @param options `alpha` (default 1), `beta` (default 0: y is only written), `algorithm` ('heuristic' default, 'find', or an algorithm by name) and
   * `workspaceLimit` (the most workspace bytes an algorithm may use; default no limit).
   */
  convolutionForward(
    conv: ConvolutionDescriptor,
    xDesc: TensorDescriptor,
    x: DeviceBuffer | StridedView,
    wDesc: FilterDescriptor,
    w: DeviceBuffer | StridedView,
    yDesc: TensorDescriptor,
    y: DeviceBuffer | StridedView,
    options?: ConvolutionForwardOptions,
  ): void {
    const where = 'Cudnn.convolutionForward';
    const m = this.last;
    // descriptors never change: the same four as the last call passed these checks then
    const compute =
      m !== undefined && m.conv === conv && m.x === xDesc && m.w === wDesc && m.y === yDesc ? m.compute : this.checked(where, conv, xDesc, wDesc, yDesc);
    const o = optionsOf(where, options, ['alpha', 'beta', 'algorithm', 'workspaceLimit']);
    const alpha = scalarOption(where, 'alpha', o.alpha, 1);
    const beta = scalarOption(where, 'beta', o.beta, 0);
    const choice = algorithmOption(where, o.algorithm);
    const limit = limitOption(where, o.workspaceLimit);
    const ctx = this.context;
    const xAddr = tensorData(where, 'x', xDesc, x, ctx);
    const wAddr = tensorData(where, 'w', wDesc, w, ctx);
    const yAddr = tensorData(where, 'y', yDesc, y, ctx);
    this.checkUsable(where);
    ctx.bind();
    const n = this.natives(where, conv, xDesc, wDesc, yDesc, compute);
    const plan = this.planFor(where, n, conv, xDesc, wDesc, yDesc, compute, choice, limit);
    const ws = this.workspaceFor(plan.workspace);
    const scalar = xDesc.dtype === 'f64' ? 'f64' : 'f32';
    const a = this.alphaBox.set(where, 'alpha', scalar, alpha);
    const b = this.betaBox.set(where, 'beta', scalar, beta);
    this.api.cudnnConvolutionForward(
      this.handle,
      a,
      n.x,
      xAddr,
      n.w,
      wAddr,
      n.conv,
      plan.algo as cudnnNative.cudnnConvolutionFwdAlgo_t,
      ws,
      plan.workspace,
      b,
      n.y,
      yAddr,
    );
  }

  /**
   * y = alpha · f(x) + beta · y (cudnnActivationForward) elementwise; x and y have one dtype and shape
   * (their strides may differ), and may be the same memory (in place).
   * @param act The activation function and its coefficient.
   * @param xDesc The input tensor's descriptor (f16, f32 or f64).
   * @param x The input's device memory: a DeviceBuffer holding the descriptor's extent from byte 0, or a StridedView whose dtype, shape and strides equal the
   * descriptor's.
   * @param yDesc The output tensor's descriptor: x's dtype and shape (its strides may differ).
   * @param y The output's device memory: a DeviceBuffer holding the descriptor's extent from byte 0, or a StridedView whose dtype, shape and strides equal
   * the descriptor's. May be x itself (in place).
   * @param options `alpha` (default 1) and `beta` (default 0: y is only written): y = alpha · f(x) + beta · y.
   */
  activationForward(
    act: ActivationDescriptor,
    xDesc: TensorDescriptor,
    x: DeviceBuffer | StridedView,
    yDesc: TensorDescriptor,
    y: DeviceBuffer | StridedView,
    options?: ActivationForwardOptions,
  ): void {
    const where = 'Cudnn.activationForward';
    if (!(act instanceof ActivationDescriptor)) throw new TypeError(`${where}: act must be an ActivationDescriptor, got ${describe(act)}`);
    if (!(xDesc instanceof TensorDescriptor)) throw new TypeError(`${where}: xDesc must be a TensorDescriptor, got ${describe(xDesc)}`);
    if (!(yDesc instanceof TensorDescriptor)) throw new TypeError(`${where}: yDesc must be a TensorDescriptor, got ${describe(yDesc)}`);
    if (xDesc.dtype !== yDesc.dtype) throw new TypeError(`${where}: x is ${xDesc.dtype}, y ${yDesc.dtype}: they must have one dtype`);
    if (!sameExtents(xDesc.shape, yDesc.shape, []))
      throw new RangeError(`${where}: x has shape [${xDesc.shape}], y [${yDesc.shape}]: they must have one shape`);
    const o = optionsOf(where, options, ['alpha', 'beta']);
    const alpha = scalarOption(where, 'alpha', o.alpha, 1);
    const beta = scalarOption(where, 'beta', o.beta, 0);
    const ctx = this.context;
    const xAddr = tensorData(where, 'x', xDesc, x, ctx);
    const yAddr = tensorData(where, 'y', yDesc, y, ctx);
    this.checkUsable(where);
    ctx.bind();
    const [an, xn, yn] = [act.native(where), xDesc.native(where), yDesc.native(where)];
    const scalar = xDesc.dtype === 'f64' ? 'f64' : 'f32';
    const a = this.alphaBox.set(where, 'alpha', scalar, alpha);
    const b = this.betaBox.set(where, 'beta', scalar, beta);
    this.api.cudnnActivationForward(this.handle, an, a, xn, xAddr, b, yn, yAddr);
  }

  /** Destroys the handle (once no stream work needs it) and frees its kept workspace on its stream. */
  close(): void {
    if (this.closed) return;
    this.dropWorkspace();
    this.plans.clear();
    this.last = undefined;
    super.close();
  }

  /** `Cudnn(<stream>)`. */
  toString(): string {
    return `Cudnn(${this.closed ? 'closed' : String(this.stream)})`;
  }

  /** The descriptors' types and fit checked (a call with other descriptors than the last one's). */
  private checked(where: string, conv: ConvolutionDescriptor, x: TensorDescriptor, w: FilterDescriptor, y: TensorDescriptor): CudnnDType {
    checkTypes(where, conv, x, w, y);
    return checkConvolution(where, conv, x, w, y);
  }

  private natives(where: string, conv: ConvolutionDescriptor, x: TensorDescriptor, w: FilterDescriptor, y: TensorDescriptor, compute: CudnnDType): Natives {
    return { conv: conv.native(where, compute, x.ndim - 2), x: x.native(where), w: w.native(where), y: y.native(where) };
  }

  /** The ranked algorithms cuDNN reports (heuristics or timing), decoded. */
  private rank(n: Natives, find: boolean): ConvolutionAlgorithmPerf[] {
    const api = this.api;
    const capacity = Math.max(1, api.cudnnGetConvolutionForwardAlgorithmMaxCount(this.handle));
    const records = find
      ? api.cudnnFindConvolutionForwardAlgorithm(this.handle, n.x, n.w, n.conv, n.y, capacity)
      : api.cudnnGetConvolutionForwardAlgorithm_v7(this.handle, n.x, n.w, n.conv, n.y, capacity);
    return records.map(algorithmPerf);
  }

  /** The plan of this call: the last call's, a cached one, or chosen now. */
  private planFor(
    where: string,
    n: Natives,
    conv: ConvolutionDescriptor,
    x: TensorDescriptor,
    w: FilterDescriptor,
    y: TensorDescriptor,
    compute: CudnnDType,
    choice: ConvolutionAlgorithmChoice,
    limit: number,
  ): Plan {
    const m = this.last;
    if (m !== undefined && m.conv === conv && m.x === x && m.w === w && m.y === y && m.choice === choice && m.limit === limit) {
      conv.useMath(n.conv, m.plan.math); // another handle's plan may have changed it
      return m.plan;
    }
    const key = `${conv.id}:${x.id}:${w.id}:${y.id}:${choice}:${limit}`;
    let plan = this.plans.get(key);
    if (plan === undefined) {
      plan = this.choose(where, n, conv, choice, limit);
      if (this.plans.size >= PLANS_KEPT) this.plans.clear();
      this.plans.set(key, plan);
    } else {
      conv.useMath(n.conv, plan.math);
    }
    this.last = { conv, x, w, y, compute, choice, limit, plan };
    return plan;
  }

  private choose(where: string, n: Natives, conv: ConvolutionDescriptor, choice: ConvolutionAlgorithmChoice, limit: number): Plan {
    const api = this.api;
    let algo: number;
    let math = CUDNN_MATH_TYPE[conv.mathType];
    if (choice === 'heuristic' || choice === 'find') {
      const ranked = this.rank(n, choice === 'find');
      const usable = ranked.filter((p) => p.status === 0);
      const pick = usable.find((p) => p.memory <= limit);
      if (pick === undefined) {
        if (usable.length > 0)
          throw new RangeError(
            `${where}: every algorithm cuDNN offers needs more workspace than the limit of ${limit} bytes (the least: ${Math.min(...usable.map((p) => p.memory))} bytes)`,
          );
        throw new Error(
          `${where}: cuDNN offers no forward algorithm for this convolution (statuses ${ranked.map((p) => `${p.algorithm} ${p.status}`).join(', ') || 'none'})`,
        );
      }
      algo = CONVOLUTION_FWD_ALGORITHMS.indexOf(pick.algorithm);
      math = CUDNN_MATH_TYPE[pick.mathType];
    } else {
      algo = CONVOLUTION_FWD_ALGORITHMS.indexOf(choice);
    }
    conv.useMath(n.conv, math);
    const workspace = api.cudnnGetConvolutionForwardWorkspaceSize(this.handle, n.x, n.w, n.conv, n.y, algo as cudnnNative.cudnnConvolutionFwdAlgo_t);
    if (workspace > limit)
      throw new RangeError(`${where}: algorithm ${CONVOLUTION_FWD_ALGORITHMS[algo]} needs ${workspace} workspace bytes, over the limit of ${limit}`);
    return { algo, math, workspace };
  }

  /** The address of a workspace of at least `bytes` on the handle's stream (kept for later calls), or 0. */
  private workspaceFor(bytes: number): number {
    if (bytes === 0) return 0;
    const ws = this.workspace;
    if (ws !== undefined && ws.byteLength >= bytes && !ws.closed) return ws.ptr;
    this.dropWorkspace();
    this.workspace = DeviceBuffer.alloc(bytes, { stream: this.stream });
    return this.workspace.ptr;
  }

  private dropWorkspace(): void {
    const ws = this.workspace;
    this.workspace = undefined;
    ws?.close();
  }
}
