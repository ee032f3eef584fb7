// One-line transforms like cupy.fft: fft/ifft (last axis), fftn/ifftn (every axis, up to 3), rfft/irfft
// and rfftn/irfftn, each returning a StridedView (a new packed buffer unless `out` is given). Plans come
// from a small LRU cache keyed by context, stream and layout (like CuPy's per-device plan cache), so a
// loop calling fft() on same-shaped data makes one plan; each function also remembers what its last call
// resolved, so a call with the same layouts and options as the one before skips the geometry, the cache
// key and the plan's operand checks (a few property reads and array compares instead). Scaling defaults
// to numpy's 'backward' here (ifft(fft(x)) = x), unlike FftPlan whose default is cuFFT's unnormalized
// transform.
import { checkKeys, describe } from '../describe';
import { Context } from '../context';
import { DeviceBuffer } from '../memory/device-buffer';
import { DTYPE_SIZES, StridedView, contiguousStrides, type DType } from '../memory/strided-view';
import { Stream, toStream, type StreamLike } from '../stream';
import * as drv from '../driver';
import { checkCount, operand, type Operand, checkOpen } from './common';
import { FftPlan, commonOptions, type ResolvedCommon } from './fft';
import { fftDtypes, geometryFromViews, geometryKey, sideExtents, type FftGeometry, type FftNormalize, type FftType } from './fft-layout';

/** Options of {@link fft} and the other one-line transforms. */
export interface FftCallOptions {
  /** Where the result goes (a StridedView of the result's shape and dtype, any strides cuFFT can address; or a packed DeviceBuffer). Default: a new buffer. */
  out?: Operand;
  /** The stream (default: the current context's legacy default stream); a new `out` is allocated stream-ordered on it. */
  stream?: StreamLike;
  /** numpy's norm (default 'backward': the inverse is scaled by 1/n); 'none' for cuFFT's unscaled transforms. */
  normalize?: FftNormalize;
  /** The dtype of a DeviceBuffer input (a StridedView brings its own). */
  dtype?: DType;
}
/** Options of {@link irfft} and {@link irfftn}: `n`, the length of the last real axis (default 2·(m − 1)). */
export interface IrfftOptions extends FftCallOptions {
  /** Length of the real result's last axis, in elements (default 2·(m − 1) for m complex values; n/2 + 1 must equal m, so an odd length needs it). */
  n?: number;
}

interface Kind {
  /** Index of the kind's memo (see {@link Memo}). */
  readonly id: number;
  readonly where: string;
  readonly type: FftType;
  readonly inverse: boolean;
  /** Every axis (fftn) rather than the last one. */
  readonly all: boolean;
}

const KINDS = {
  fft: { id: 0, where: 'fft', type: 'c2c', inverse: false, all: false },
  ifft: { id: 1, where: 'ifft', type: 'c2c', inverse: true, all: false },
  fftn: { id: 2, where: 'fftn', type: 'c2c', inverse: false, all: true },
  ifftn: { id: 3, where: 'ifftn', type: 'c2c', inverse: true, all: true },
  rfft: { id: 4, where: 'rfft', type: 'r2c', inverse: false, all: false },
  irfft: { id: 5, where: 'irfft', type: 'c2r', inverse: true, all: false },
  rfftn: { id: 6, where: 'rfftn', type: 'r2c', inverse: false, all: true },
  irfftn: { id: 7, where: 'irfftn', type: 'c2r', inverse: true, all: true },
} as const satisfies Record<string, Kind>;

/**
 * The C2C forward transform of `x`'s last axis (the leading axes are a batch), like `cupy.fft.fft`.
 * @param x The complex signal (c64 or c128): a StridedView of device memory, or a DeviceBuffer with `options.dtype`; its last axis is transformed, the
 * leading axes are a batch.
 * @param options `out` (where the result goes; default a new packed buffer allocated stream-ordered: close `result.buffer` when done), `stream` (default: the
 * current context's legacy default stream), `normalize` (default 'backward': 1/n on the inverse, as numpy) and `dtype` (of a DeviceBuffer x).
 */
export function fft(x: Operand, options?: FftCallOptions): StridedView {
  return transform(KINDS.fft, x, options);
}
/**
 * The C2C inverse transform of `x`'s last axis, scaled by 1/n by default, like `cupy.fft.ifft`.
 * @param x The complex spectrum (c64 or c128): a StridedView of device memory, or a DeviceBuffer with `options.dtype`; its last axis is transformed, the
 * leading axes are a batch.
 * @param options `out` (where the result goes; default a new packed buffer allocated stream-ordered: close `result.buffer` when done), `stream` (default: the
 * current context's legacy default stream), `normalize` (default 'backward': 1/n on the inverse, as numpy) and `dtype` (of a DeviceBuffer x).
 */
export function ifft(x: Operand, options?: FftCallOptions): StridedView {
  return transform(KINDS.ifft, x, options);
}
/**
 * The C2C forward transform over every axis of `x` (1 to 3 axes), like `cupy.fft.fftn`.
 * @param x The complex array (c64 or c128) of 1 to 3 axes, all transformed: a StridedView of device memory, or a DeviceBuffer with `options.dtype`.
 * @param options `out` (where the result goes; default a new packed buffer allocated stream-ordered: close `result.buffer` when done), `stream` (default: the
 * current context's legacy default stream), `normalize` (default 'backward': 1/n on the inverse, as numpy) and `dtype` (of a DeviceBuffer x).
 */
export function fftn(x: Operand, options?: FftCallOptions): StridedView {
  return transform(KINDS.fftn, x, options);
}
/**
 * The C2C inverse transform over every axis of `x` (1 to 3), like `cupy.fft.ifftn`.
 * @param x The complex array (c64 or c128) of 1 to 3 axes, all transformed: a StridedView of device memory, or a DeviceBuffer with `options.dtype`.
 * @param options `out` (where the result goes; default a new packed buffer allocated stream-ordered: close `result.buffer` when done), `stream` (default: the
 * current context's legacy default stream), `normalize` (default 'backward': 1/n on the inverse, as numpy) and `dtype` (of a DeviceBuffer x).
 */
export function ifftn(x: Operand, options?: FftCallOptions): StridedView {
  return transform(KINDS.ifftn, x, options);
}
/**
 * The R2C transform of `x`'s last axis (f32 → c64, f64 → c128; n/2 + 1 outputs), like `cupy.fft.rfft`.
 * @param x The real signal (f32 or f64): a StridedView of device memory, or a DeviceBuffer with `options.dtype`; its last axis is transformed, the leading
 * axes are a batch.
 * @param options `out` (where the result goes; default a new packed buffer allocated stream-ordered: close `result.buffer` when done), `stream` (default: the
 * current context's legacy default stream), `normalize` (default 'backward': 1/n on the inverse, as numpy) and `dtype` (of a DeviceBuffer x).
 */
export function rfft(x: Operand, options?: FftCallOptions): StridedView {
  return transform(KINDS.rfft, x, options);
}
/**
 * The C2R transform of `x`'s last axis back to `n` reals (default 2·(m − 1)), like `cupy.fft.irfft`. Overwrites `x` (cuFFT's C2R rule).
 * @param x The half spectrum (c64 or c128, m = n/2 + 1 values on the last axis), overwritten by cuFFT: a StridedView of device memory, or a DeviceBuffer with
 * `options.dtype`.
 * @param options `out` (where the result goes; default a new packed buffer allocated stream-ordered: close `result.buffer` when done), `stream` (default: the
 * current context's legacy default stream), `normalize` (default 'backward': 1/n on the inverse, as numpy) and `dtype` (of a DeviceBuffer x), and `n` (the
 * real result's last-axis length; default 2·(m − 1)).
 */
export function irfft(x: Operand, options?: IrfftOptions): StridedView {
  return transform(KINDS.irfft, x, options);
}
/**
 * The R2C transform over every axis of `x` (1 to 3), like `cupy.fft.rfftn`.
 * @param x The real array (f32 or f64) of 1 to 3 axes, all transformed: a StridedView of device memory, or a DeviceBuffer with `options.dtype`.
 * @param options `out` (where the result goes; default a new packed buffer allocated stream-ordered: close `result.buffer` when done), `stream` (default: the
 * current context's legacy default stream), `normalize` (default 'backward': 1/n on the inverse, as numpy) and `dtype` (of a DeviceBuffer x).
 */
export function rfftn(x: Operand, options?: FftCallOptions): StridedView {
  return transform(KINDS.rfftn, x, options);
}
/**
 * The C2R transform over every axis of `x` (1 to 3), like `cupy.fft.irfftn`. Overwrites `x`.
 * @param x The half spectrum (c64 or c128, last axis n/2 + 1) of 1 to 3 axes, overwritten by cuFFT: a StridedView of device memory, or a DeviceBuffer with
 * `options.dtype`.
 * @param options `out` (where the result goes; default a new packed buffer allocated stream-ordered: close `result.buffer` when done), `stream` (default: the
 * current context's legacy default stream), `normalize` (default 'backward': 1/n on the inverse, as numpy) and `dtype` (of a DeviceBuffer x), and `n` (the
 * real result's last-axis length; default 2·(m − 1)).
 */
export function irfftn(x: Operand, options?: IrfftOptions): StridedView {
  return transform(KINDS.irfftn, x, options);
}

const NO_OPTIONS: IrfftOptions = {};
const KEYS = ['out', 'stream', 'normalize', 'dtype'];
const IRFFT_KEYS = [...KEYS, 'n'];

function transform(kind: Kind, x: Operand, options: IrfftOptions | undefined): StridedView {
  const o = options === undefined ? NO_OPTIONS : options; // null is refused as any non-object
  const m = memos[kind.id];
  if (m !== undefined && x instanceof StridedViewClass && typeof o === 'object' && o !== null) {
    const done = again(kind, m, x, o);
    if (done !== undefined) return done;
  }
  return resolveAndRun(kind, x, o);
}

function resolveAndRun(kind: Kind, x: Operand, options: IrfftOptions): StridedView {
  const where = kind.where;
  if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options must be an object, got ${describe(options)}`);
  checkKeys(where, options, kind.type === 'c2r' ? IRFFT_KEYS : KEYS);
  // each option read once: what is checked is what runs, and what the next call is compared with (remember)
  const { out, stream: streamOption, normalize, dtype, n } = options;
  const o: IrfftOptions = { out, stream: streamOption, normalize, dtype, n };
  const common = commonOptions(where, o, 'backward');
  const input = asView(where, x, o.dtype);
  const precision = input.dtype === 'f64' || input.dtype === 'c128' ? 'double' : 'single';
  const want = fftDtypes(kind.type, precision).input;
  if (input.dtype !== want)
    throw new TypeError(
      `${where}: x holds ${input.dtype}, ${where} takes ${fftDtypes(kind.type, 'single').input} or ${fftDtypes(kind.type, 'double').input}${kind.type === 'c2c' && (input.dtype === 'f32' || input.dtype === 'f64') ? ' (use rfft for real input)' : ''}`,
    );
  const ndim = input.shape.length;
  if (ndim === 0) throw new RangeError(`${where}: x must have at least one axis`);
  if (kind.all && ndim > 3) throw new RangeError(`${where}: cuFFT transforms 1 to 3 axes, x has ${ndim}`);
  const rank = kind.all ? ndim : 1;
  const outShape = resultShape(where, kind, input.shape, o.n);
  const outDtype = fftDtypes(kind.type, precision).output;
  const given = o.out === undefined ? undefined : asResult(where, o.out, outShape, outDtype);
  const stream = streamOf(where, common.stream);
  sameContext(where, 'x', input, stream);
  if (given !== undefined) sameContext(where, 'out', given, stream);
  const result = given ?? newResult(outShape, outDtype, stream);
  // an empty batch (a leading axis of 0): an empty result, as numpy's (cuFFT takes no batch of 0)
  if (!kind.all && input.shape.some((v, d) => v === 0 && d < ndim - 1)) return result;
  let plan: FftPlan;
  try {
    plan = execute(where, kind, input, result, rank, stream, common);
  } catch (e) {
    if (given === undefined) result.buffer.close();
    throw e;
  }
  remember(kind, x, o, plan, stream, result, given !== undefined);
  return result;
}

function execute(where: string, kind: Kind, input: StridedView, out: StridedView, rank: number, stream: Stream, common: ResolvedCommon): FftPlan {
  const g = geometryFromViews(where, input, out, rank);
  // named by this call, before a plan is made: the plan's own check would say FftPlan.forward (and Bun's tail calls drop our frame)
  for (const v of [input, out]) if (v.buffer instanceof DeviceBuffer) checkOpen(where, v.buffer);
  const plan = cachedPlan(where, stream, g, common.normalize, common.workspace);
  try {
    if (kind.inverse) plan.inverse(input, out);
    else plan.forward(input, out);
  } finally {
    if (capacity === 0) plan.close(); // caching off: the plan goes once its work is enqueued
  }
  return plan;
}

// ── the last call of each function ───────────────────────────────────────────────────────────────

/**
 * What a call resolved: the options as given, the layouts of x and of the result, the stream and
 * the plan. The next call of the same function with equal options and layouts reuses it (the arrays
 * compared element by element, the plan and stream checked open); anything else takes the full path.
 */
interface Memo {
  readonly plan: FftPlan;
  readonly stream: Stream;
  /** The stream option as given (undefined: the default stream of the context current then). */
  readonly streamOption: StreamLike | undefined;
  readonly normalize: FftNormalize | undefined;
  readonly dtype: DType | undefined;
  readonly n: unknown;
  readonly inDtype: DType;
  readonly inShape: readonly number[];
  readonly inStrides: readonly number[];
  readonly outDtype: DType;
  readonly outShape: readonly number[];
  /** A given out's strides; undefined when the call made a new packed result. */
  readonly outStrides: readonly number[] | undefined;
}
/** By Kind.id. */
const memos: (Memo | undefined)[] = [];
// held in module constants, as src/launch.ts does (an imported name is a getter call in CommonJS)
const StridedViewClass = StridedView;
const DeviceBufferClass = DeviceBuffer;
const currentContextHandle = drv.currentContextHandle;

/** Notes what a call resolved, when its operands and stream are of the kinds {@link again} compares. */
function remember(kind: Kind, x: Operand, o: IrfftOptions, plan: FftPlan, stream: Stream, out: StridedView, given: boolean): void {
  if (
    capacity === 0 ||
    !(x instanceof StridedView) ||
    (given && !(o.out instanceof StridedView)) ||
    (o.stream !== undefined && !(o.stream instanceof Stream))
  ) {
    memos[kind.id] = undefined;
    return;
  }
  memos[kind.id] = {
    plan,
    stream,
    streamOption: o.stream,
    normalize: o.normalize,
    dtype: o.dtype,
    n: o.n,
    inDtype: x.dtype,
    inShape: x.shape,
    inStrides: x.strides,
    outDtype: out.dtype,
    outShape: out.shape,
    outStrides: given ? out.strides : undefined,
  };
}

/** The call made again with what the last call of `kind` resolved, or undefined when anything differs. */
function again(kind: Kind, m: Memo, x: StridedView, o: IrfftOptions): StridedView | undefined {
  const { plan, stream } = m;
  if (plan.closed || stream.closed || stream.context.closed) return undefined;
  if (o.stream !== m.streamOption || o.normalize !== m.normalize || o.dtype !== m.dtype || o.n !== m.n) return undefined;
  if (x.dtype !== m.inDtype || !sameNumbers(x.shape, m.inShape) || !sameNumbers(x.strides, m.inStrides)) return undefined;
  const xb = x.buffer;
  const given = o.out;
  if (!(xb instanceof DeviceBufferClass) || (given === undefined) !== (m.outStrides === undefined)) return undefined;
  if (xb.context !== stream.context) return undefined; // the full path names the foreign operand
  if (
    given !== undefined &&
    !(
      given instanceof StridedViewClass &&
      given.buffer instanceof DeviceBufferClass &&
      given.buffer.context === stream.context &&
      given.dtype === m.outDtype &&
      sameNumbers(given.shape, m.outShape) &&
      sameNumbers(given.strides, m.outStrides!)
    )
  )
    return undefined;
  if (!knownKeys(o, kind.type === 'c2r' ? IRFFT_KEYS : KEYS)) return undefined;
  stream.check(kind.where);
  // the default stream is the current context's: this plan's only while its context is current
  const bound = o.stream === undefined;
  if (bound && currentContextHandle() !== stream.context.handle) return undefined;
  checkOpen(kind.where, xb);
  const ip = xb.launchAddress() + x.byteOffset;
  const out = given ?? newResult(m.outShape, m.outDtype, stream);
  try {
    checkOpen(kind.where, out.buffer as DeviceBuffer);
    plan.enqueue(kind.inverse, ip, (out.buffer as DeviceBuffer).launchAddress() + out.byteOffset, x, out, bound);
  } catch (e) {
    if (given === undefined) out.buffer.close();
    throw e;
  }
  return out;
}

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** True when every enumerable key of `o` is one of `keys` (checkKeys without its array of keys). */
function knownKeys(o: object, keys: readonly string[]): boolean {
  for (const k in o) if (!keys.includes(k)) return false;
  return true;
}

/** The shape of the result: the complex side's last axis is n/2 + 1 (r2c), or `n` (c2r, default 2·(m − 1)). */
function resultShape(where: string, kind: Kind, shape: readonly number[], n: unknown): number[] {
  const out = shape.slice();
  const last = out.length - 1;
  if (kind.type === 'r2c') out[last] = sideExtents([shape[last]], true)[0];
  if (kind.type === 'c2r') {
    const m = shape[last];
    const len = n === undefined ? 2 * (m - 1) : checkCount(where, 'n', n, 1);
    if (len < 1) throw new RangeError(`${where}: the last axis has ${m} complex values: give n, the length of the real result`);
    if (Math.floor(len / 2) + 1 !== m)
      throw new RangeError(
        `${where}: n = ${len} needs ${Math.floor(len / 2) + 1} complex values on the last axis, x has ${m} (zero-padding or cropping is not done here)`,
      );
    out[last] = len;
  }
  return out;
}

/** `x` as a StridedView (a DeviceBuffer with `dtype` becomes a 1-D view). */
function asView(where: string, x: unknown, dtype: DType | undefined): StridedView {
  if (x instanceof StridedView) {
    if (dtype !== undefined && dtype !== x.dtype) throw new TypeError(`${where}: x holds ${x.dtype}, the dtype option says ${dtype}`);
    return x;
  }
  const r = operand(where, 'x', x, dtype);
  return StridedView.of(r.buffer, { dtype: r.dtype, shape: [r.shape[0]] });
}

function asResult(where: string, out: unknown, shape: number[], dtype: DType): StridedView {
  if (out instanceof StridedView) {
    if (out.dtype !== dtype) throw new TypeError(`${where}: out holds ${out.dtype}, the result is ${dtype}`);
    if (out.shape.length !== shape.length || out.shape.some((v, i) => v !== shape[i]))
      throw new RangeError(`${where}: out has shape [${out.shape}], the result is [${shape}]`);
    return out;
  }
  if (out instanceof DeviceBuffer) {
    const bytes = shape.reduce((a, b) => a * b, 1) * DTYPE_SIZES[dtype];
    if (out.byteLength < bytes) throw new RangeError(`${where}: out holds ${out.byteLength} bytes, the result needs ${bytes} ([${shape}] ${dtype})`);
    return StridedView.of(out, { dtype, shape });
  }
  throw new TypeError(`${where}: out must be a DeviceBuffer or a StridedView of device memory, got ${describe(out)}`);
}

function sameContext(where: string, name: string, v: StridedView, stream: Stream): void {
  const b = v.buffer;
  if (b instanceof DeviceBuffer && b.context !== stream.context)
    throw new TypeError(`${where}: ${name} belongs to ${String(b.context)}, the stream to ${String(stream.context)}`);
}

function newResult(shape: readonly number[], dtype: DType, stream: Stream): StridedView {
  let count = 1;
  for (let d = 0; d < shape.length; d++) count *= shape[d];
  return StridedView.of(DeviceBuffer.alloc(count * DTYPE_SIZES[dtype], { stream }), { dtype, shape, strides: contiguousStrides(shape) });
}

/** Legacy default streams of each context, made once (resolveStream would make a wrapper per call). */
const defaultStreams = new WeakMap<Context, Stream>();

function streamOf(where: string, s: StreamLike | undefined): Stream {
  if (s !== undefined) {
    const stream = toStream(s, `${where}: stream`)!;
    stream.check(where);
    return stream;
  }
  const ctx = Context.current();
  let stream = defaultStreams.get(ctx);
  if (stream === undefined) defaultStreams.set(ctx, (stream = Stream.legacyDefault(ctx)));
  stream.check(where);
  return stream;
}

// ── the plan cache ───────────────────────────────────────────────────────────────────────────────

let capacity = 16;
/** Insertion order is use order: the first entry is the least recently used. */
const cache = new Map<string, FftPlan>();

function cachedPlan(where: string, stream: Stream, g: FftGeometry, normalize: FftNormalize, workspace: 'pool' | 'cufft'): FftPlan {
  const key = `${stream.context.handle}/${stream.handle}/${normalize}/${workspace}/${geometryKey(g)}`;
  const hit = cache.get(key);
  if (hit !== undefined) {
    cache.delete(key);
    if (!hit.closed && !hit.stream.closed) {
      cache.set(key, hit);
      return hit;
    }
    hit.close();
  }
  const plan = FftPlan.make(where, g, { normalize, stream, workspace });
  if (capacity > 0) {
    cache.set(key, plan);
    evict();
  }
  return plan;
}

function evict(): void {
  for (const [key, plan] of cache) {
    if (cache.size <= capacity && !plan.stream.closed) continue;
    cache.delete(key);
    for (let i = 0; i < memos.length; i++) if (memos[i]?.plan === plan) memos[i] = undefined;
    plan.close();
  }
}

/**
 * The plans fft() and its kin keep (like `cupy.fft.config.get_plan_cache()`): an LRU of `maxSize`
 * plans (default 16). A cached plan keeps its stream's native stream alive until it leaves the cache;
 * `clear()` closes them all.
 */
export const fftPlanCache = {
  /** Plans cached now. */
  get size(): number {
    return cache.size;
  },
  /** How many plans are kept (0 turns caching off: each call makes and closes its plan). */
  get maxSize(): number {
    return capacity;
  },
  /** Sets how many plans are kept (default 16; 0 turns caching off); plans beyond it are closed, least recently used first. */
  set maxSize(n: number) {
    capacity = checkCount('fftPlanCache.maxSize', 'value', n, 0);
    if (capacity === 0) memos.length = 0;
    evict();
  },
  /** Closes every cached plan. */
  clear(): void {
    const plans = [...cache.values()];
    cache.clear();
    memos.length = 0;
    for (const p of plans) p.close();
  },
};
