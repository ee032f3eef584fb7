// What every math-library object shares (src/math): a library handle bound to a Stream, operands
// (DeviceBuffer or StridedView) resolved to an address, dtype and shape, scalars boxed into host memory
// for the libraries' host pointer mode, and CUDA's data-type codes. Nothing here loads a library.
import { bfloat16Bits, complexParts, halfBits } from '../../support';
import { Context } from '../context';
import { checkKeys, describe } from '../describe';
import { ClosedObjectError } from '../errors';
import { Resource } from '../lifecycle';
import { DeviceBuffer } from '../memory/device-buffer';
import { DTYPE_SIZES, StridedView, checkDtype, type DType } from '../memory/strided-view';
import { Stream, toStream, type StreamLike } from '../stream';

export type { DType };

/** A matrix, vector or tensor the math objects read or write: device memory, typed by a view or by the call. */
export type Operand = DeviceBuffer | StridedView;

/** A complex scalar: `{ re, im }` or `[re, im]`. */
export type Complex =
  | {
      /** The real part. */
      re: number;
      /** The imaginary part. */
      im: number;
    }
  | readonly [number, number];
/** A scalar the objects pass by value (alpha, beta, …): a number, or a complex for complex dtypes. */
export type Scalar = number | Complex;

/** An operand resolved: where its element 0 lies, its dtype, shape and strides (in elements). */
export interface ResolvedOperand {
  /** Device address of element 0. */
  readonly address: number;
  /** The element type: the view's own, or the one the call gave for a plain DeviceBuffer. */
  readonly dtype: DType;
  /** Extent of each dimension, in elements (a plain DeviceBuffer is one dimension: all the elements it holds). */
  readonly shape: readonly number[];
  /** Step between neighbours along each dimension, in elements (not bytes). */
  readonly strides: readonly number[];
  /** The buffer read or written (kept open by the caller while the work runs). */
  readonly buffer: DeviceBuffer;
}

/**
 * CUDA's `cudaDataType_t` code of each dtype (library_types.h; test/math/common.test.ts compares them
 * with the generated enum). Only dtypes the libraries take are listed.
 */
export const CUDA_DATA_TYPE: Readonly<Partial<Record<DType, number>>> = Object.freeze({
  f16: 2,
  bf16: 14,
  f32: 0,
  f64: 1,
  c64: 4,
  c128: 5,
  i8: 3,
  u8: 8,
  i16: 20,
  u16: 22,
  i32: 10,
  u32: 12,
  i64: 24,
  u64: 26,
});

/** The cudaDataType_t code of `dtype`, or a TypeError naming `where` when the libraries take no such type. */
export function cudaDataType(where: string, dtype: DType): number {
  const code = CUDA_DATA_TYPE[dtype];
  if (code === undefined) throw new TypeError(`${where}: dtype '${dtype}' has no CUDA data type`);
  return code;
}

/** True for the complex dtypes (c64, c128). */
export function isComplex(dtype: DType): boolean {
  return dtype === 'c64' || dtype === 'c128';
}

/** Checks `dtype` is one of `allowed` (TypeError naming `where` and `name`). */
export function checkDType<D extends DType>(where: string, name: string, dtype: unknown, allowed: readonly D[]): D {
  if (typeof dtype !== 'string' || !(allowed as readonly string[]).includes(dtype)) {
    throw new TypeError(`${where}: ${name} must be one of ${allowed.join(', ')}, got ${typeof dtype === 'string' ? `'${dtype}'` : describe(dtype)}`);
  }
  return dtype as D;
}

/** A non-negative (or positive, with `min` 1) safe integer, else RangeError/TypeError naming `where` and `name`. */
export function checkCount(where: string, name: string, v: unknown, min = 0): number {
  if (typeof v !== 'number') throw new TypeError(`${where}: ${name} must be an integer, got ${describe(v)}`);
  if (!Number.isSafeInteger(v) || v < min) throw new RangeError(`${where}: ${name} must be an integer ≥ ${min}, got ${v}`);
  return v;
}

/** Refuses what is not device memory, naming the argument: host arrays get a hint. */
function notDevice(where: string, name: string, v: unknown): TypeError {
  const host = ArrayBuffer.isView(v) || v instanceof ArrayBuffer;
  const hint = host ? ' (a host array: copy it to the GPU first, e.g. DeviceBuffer.from(array))' : '';
  return new TypeError(`${where}: ${name} must be a DeviceBuffer or a StridedView of device memory, got ${describe(v)}${hint}`);
}

/**
 * ClosedObjectError naming `where` when `b` (or the buffer it views) is closed: its own check finds the
 * call on the stack, where V8 names a static method's frame `Function.csr`, not `SparseMatrix.csr`.
 */
export function checkOpen(where: string, b: DeviceBuffer): void {
  if (b.closed) throw new ClosedObjectError(where, b.core.kind);
  if (b.parent !== undefined && b.parent.closed) throw new ClosedObjectError(where, b.parent.core.kind);
}

/**
 * Resolves `value` to an address, dtype, shape and strides. A DeviceBuffer is a contiguous vector of
 * `dtype` (required then); a StridedView brings its own dtype, which must equal `dtype` when given.
 * The buffer must be open; bounds were checked when the view was made.
 */
export function operand(where: string, name: string, value: unknown, dtype?: DType): ResolvedOperand {
  if (value instanceof StridedView) {
    const buffer = value.buffer;
    if (!(buffer instanceof DeviceBuffer)) throw notDevice(where, name, value);
    const held = value.dtype; // read once: the dtype checked is the dtype returned
    if (dtype !== undefined && held !== dtype) throw new TypeError(`${where}: ${name} holds ${held}, expected ${dtype}`);
    checkOpen(where, buffer);
    return { address: buffer.ptr + value.byteOffset, dtype: held, shape: value.shape, strides: value.strides, buffer };
  }
  if (value instanceof DeviceBuffer) {
    if (dtype === undefined) throw new TypeError(`${where}: ${name} is a DeviceBuffer without a dtype: pass a StridedView or the dtype option`);
    // a dtype option reaches here unchecked from some calls: own keys only (DTYPE_SIZES['toString'] is a function)
    checkDtype(where, dtype);
    const size = DTYPE_SIZES[dtype];
    checkOpen(where, value);
    return { address: value.ptr, dtype, shape: [Math.floor(value.byteLength / size)], strides: [1], buffer: value };
  }
  throw notDevice(where, name, value);
}

/** Checks the buffer behind `r` holds at least `elements` elements from its element 0. */
export function checkExtent(where: string, name: string, r: ResolvedOperand, elements: number): void {
  const bytes = elements * DTYPE_SIZES[r.dtype];
  const start = r.address - r.buffer.ptr;
  if (start + bytes > r.buffer.byteLength) {
    throw new RangeError(
      `${where}: ${name} needs ${elements} ${r.dtype} elements (${bytes} bytes) from byte ${start}, but its buffer holds ${r.buffer.byteLength} bytes`,
    );
  }
}

// ── scalars ──────────────────────────────────────────────────────────────────────────────────────

/**
 * Host memory holding one scalar, reused call after call (the libraries' host pointer mode reads it
 * during the call: no allocation per call). `set` writes the value as `dtype` and returns the view to pass.
 */
export class ScalarBox {
  private readonly bytes = new ArrayBuffer(16);
  private readonly f32 = new Float32Array(this.bytes);
  private readonly f64 = new Float64Array(this.bytes);
  private readonly i32 = new Int32Array(this.bytes);
  private readonly u16 = new Uint16Array(this.bytes);

  /**
   * Writes `value` as one `dtype` element; TypeError naming `where`/`name` for a non-number (or non-complex).
   * @param where The call named in the error for a bad value (e.g. 'Blas.gemm').
   * @param name The argument named in the error (e.g. 'alpha').
   * @param dtype The element type to write the value as: f16, bf16, f32, f64, i32, c64 or c128.
   * @param value The scalar: a number, or { re, im } / [re, im] for c64 and c128.
   */
  set(where: string, name: string, dtype: DType, value: unknown): ArrayBufferView {
    if (dtype === 'c64' || dtype === 'c128') {
      const parts = complexParts(value);
      if (parts === undefined) throw new TypeError(`${where}: ${name} must be a number or a complex { re, im } / [re, im], got ${describe(value)}`);
      const [re, im] = parts;
      const a = dtype === 'c64' ? this.f32 : this.f64;
      a[0] = re;
      a[1] = im;
      return a;
    }
    if (typeof value !== 'number') throw new TypeError(`${where}: ${name} must be a number, got ${describe(value)}`);
    switch (dtype) {
      case 'f32':
        this.f32[0] = value;
        return this.f32;
      case 'f64':
        this.f64[0] = value;
        return this.f64;
      case 'f16':
        this.u16[0] = halfBits(value);
        return this.u16;
      case 'bf16':
        this.u16[0] = bfloat16Bits(value);
        return this.u16;
      case 'i32':
        if (!Number.isInteger(value) || (value | 0) !== value) throw new RangeError(`${where}: ${name} must be a 32-bit integer, got ${value}`);
        this.i32[0] = value;
        return this.i32;
      default:
        throw new TypeError(`${where}: no ${dtype} scalars`);
    }
  }
}

// ── fields ───────────────────────────────────────────────────────────────────────────────────────

/**
 * Makes `keys` of `o` read-only for real (TypeScript's `readonly` is erased): what the calls check
 * against them (a matrix's rows, a descriptor's extent, a plan's layout) stays what C was given.
 */
export function lockFields<T extends object>(o: T, keys: readonly (keyof T & string)[]): void {
  for (const k of keys) Object.defineProperty(o, k, { value: o[k], writable: false, configurable: false, enumerable: true });
}

// ── options ──────────────────────────────────────────────────────────────────────────────────────

const NO_OPTIONS = Object.freeze({});

/** An options object (undefined: none) holding only `keys`; TypeError naming `where` otherwise. No allocation (hot paths call it). */
export function optionsOf<T extends object>(where: string, o: T | undefined, keys: readonly string[]): Partial<T> {
  if (o === undefined) return NO_OPTIONS;
  if (typeof o !== 'object' || o === null) throw new TypeError(`${where}: options must be an object, got ${describe(o)}`);
  checkKeys(where, o, keys);
  return o;
}

/** The stream of a handle's `create({ stream })`, resolved and its context made current. */
export function createStream(where: string, options: { stream?: StreamLike } | undefined): Stream {
  const stream = resolveStream(where, optionsOf(where, options, ['stream']).stream);
  stream.context.bind();
  return stream;
}

// ── streams ──────────────────────────────────────────────────────────────────────────────────────

/** The Stream `s` names (a Stream or a stream-protocol object), or the current context's legacy default stream. */
export function resolveStream(where: string, s: StreamLike | undefined): Stream {
  const stream = toStream(s, `${where}: stream`) ?? Stream.legacyDefault(Context.current());
  stream.check(where);
  return stream;
}

/**
 * A library handle working on one Stream at a time. The stream and its context are parents of the
 * handle's core: closing the stream first is allowed, and its native destroy waits until every handle
 * bound to it was closed (never a dangling stream in a handle). `bindStream` adds the new stream as a
 * parent the same way.
 */
export abstract class StreamBoundResource extends Resource {
  /** The context the handle was made in (current for every call). */
  readonly context: Context;
  private current: Stream;

  protected constructor(kind: string, destroy: () => void, stream: Stream) {
    super(kind, destroy, [stream, stream.context]);
    this.context = stream.context;
    this.current = stream;
    lockFields(this as StreamBoundResource, ['context']);
  }

  /** The stream the handle's work is enqueued on. */
  get stream(): Stream {
    return this.current;
  }

  /** Records `stream` as the handle's stream, keeping it alive while the handle lives. @internal */
  protected adoptStream(stream: Stream): void {
    if (stream.context !== this.context)
      throw new TypeError(`${this.core.kind}.setStream: the stream belongs to ${String(stream.context)}, the handle to ${String(this.context)}`);
    this.core.hold(stream.core);
    this.current = stream;
  }

  /** Throws when closed, or when the stream or context became unusable (a sticky error, a closed stream). */
  protected checkUsable(where: string): void {
    this.assertOpen(where);
    this.current.check(where);
    this.current.beforeEnqueue(); // the library enqueues on the stream it was bound to, not through its handle
  }
}
