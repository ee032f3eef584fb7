// StridedView: a typed, strided window (dtype, shape, strides in elements, byte offset) over device,
// managed or pinned host memory, like cuda.core's StridedMemoryView. It copies nothing when made; every
// element it can reach is checked to lie inside the buffer. toArray() gathers it into a C-ordered
// TypedArray on the host; src/memory/dlpack.ts exchanges it with other libraries as a DLPack tensor.
import { checkKeys, describe } from '../describe';
import { checkSize } from '../lifecycle';
import { DeviceBuffer } from './device-buffer';
import { ManagedBuffer } from './managed-buffer';
import { PinnedHostBuffer } from './pinned-host-buffer';
import { SEALED, type Sealed, checkSealed } from '../sealed';

/** Element types of a {@link StridedView} (f16/bf16 read back as their 16-bit patterns; complex as interleaved pairs). */
export type DType = 'bool' | 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'i64' | 'u64' | 'f16' | 'bf16' | 'f32' | 'f64' | 'c64' | 'c128';

/** Bytes per element of each dtype. */
export const DTYPE_SIZES: Readonly<Record<DType, number>> = Object.freeze({
  bool: 1,
  i8: 1,
  u8: 1,
  i16: 2,
  u16: 2,
  i32: 4,
  u32: 4,
  i64: 8,
  u64: 8,
  f16: 2,
  bf16: 2,
  f32: 4,
  f64: 8,
  c64: 8,
  c128: 16,
});

type ArrayCtor = { new (buffer: ArrayBuffer, offset?: number, length?: number): ArrayBufferView; readonly BYTES_PER_ELEMENT: number };
/** The TypedArray each dtype reads back as. */
const ARRAY_TYPES: Record<DType, ArrayCtor> = {
  bool: Uint8Array,
  i8: Int8Array,
  u8: Uint8Array,
  i16: Int16Array,
  u16: Uint16Array,
  i32: Int32Array,
  u32: Uint32Array,
  i64: BigInt64Array,
  u64: BigUint64Array,
  f16: Uint16Array,
  bf16: Uint16Array,
  f32: Float32Array,
  f64: Float64Array,
  c64: Float32Array,
  c128: Float64Array,
};

/** Options of {@link StridedView.of}. */
export interface StridedViewOptions {
  /** Element type. */
  dtype: DType;
  /** Extent of each dimension (0 dimensions: a scalar). */
  shape: readonly number[];
  /** Step of each dimension in elements, may be negative (default: C order, contiguous). */
  strides?: readonly number[];
  /** Byte offset of element [0, 0, …] from the buffer's start (default 0). */
  byteOffset?: number;
  /** Marks the view read-only for consumers (DLPack's read-only flag); nothing else enforces it. */
  readOnly?: boolean;
}

/** The memory a view reads: device (cuMemAlloc, pools, VMM), managed, or page-locked host memory. */
export type StridedViewBuffer = DeviceBuffer | PinnedHostBuffer;

function integers(where: string, v: unknown, min: number): number[] {
  if (!Array.isArray(v)) throw new TypeError(`${where} must be an array of integers, got ${describe(v)}`);
  if (v.length > 32) throw new RangeError(`${where}: at most 32 dimensions, got ${v.length}`);
  return v.map((x, i) => {
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < min)
      throw new RangeError(`${where}[${i}] must be an integer${min === 0 ? ' ≥ 0' : ''}, got ${describe(x)}`);
    return x;
  });
}

/** Throws a TypeError naming `where` unless `dtype` is one of the DTypes (own keys only: `'toString'` is not one). */
export function checkDtype(where: string, dtype: unknown): asserts dtype is DType {
  if (typeof dtype !== 'string' || !Object.hasOwn(DTYPE_SIZES, dtype))
    throw new TypeError(`${where}: dtype must be one of ${Object.keys(DTYPE_SIZES).join(', ')}, got ${describe(dtype)}`);
}

/** The C-order (row-major, contiguous) strides of `shape`, in elements. */
export function contiguousStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let step = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    strides[d] = step;
    step *= Math.max(1, shape[d]);
  }
  return strides;
}

/** The lowest and highest element offsets (in elements, from element 0) `shape` and `strides` reach. */
export function elementSpan(shape: readonly number[], strides: readonly number[]): { min: number; max: number } {
  let min = 0;
  let max = 0;
  for (let d = 0; d < shape.length; d++) {
    const reach = (shape[d] - 1) * strides[d];
    if (reach < 0) min += reach;
    else max += reach;
  }
  return { min, max };
}

/**
 * A typed, strided view over a buffer: `StridedView.of(buf, { dtype: 'f32', shape: [rows, cols] })`.
 * Holds no memory of its own: it reads the buffer, which must stay open while the view is used.
 */
export class StridedView {
  /** The buffer viewed. */
  readonly buffer: StridedViewBuffer;
  /** Element type. */
  readonly dtype: DType;
  /** Extent of each dimension. */
  readonly shape: readonly number[];
  /** Step of each dimension in elements. */
  readonly strides: readonly number[];
  /** Byte offset of element 0 from the buffer's start. */
  readonly byteOffset: number;
  /** Read-only for consumers (see {@link StridedViewOptions.readOnly}). */
  readonly readOnly: boolean;

  private constructor(seal: Sealed, buffer: StridedViewBuffer, dtype: DType, shape: number[], strides: number[], byteOffset: number, readOnly: boolean) {
    checkSealed(seal, 'StridedView', 'StridedView.of()');
    this.buffer = buffer;
    this.dtype = dtype;
    this.shape = Object.freeze(shape);
    this.strides = Object.freeze(strides);
    this.byteOffset = byteOffset;
    this.readOnly = readOnly;
  }

  /**
   * A view of `buffer` with `options`' dtype, shape, strides and offset; RangeError when it would reach outside the buffer.
   * @param buffer The memory the elements live in: a DeviceBuffer (or ManagedBuffer, view, …) or a PinnedHostBuffer.
   * @param options `dtype` (element type), `shape` (extent of each dimension), `strides` (step of each dimension in elements, may be negative; default C order), `byteOffset` (of element [0, …]; default 0) and `readOnly` (a flag for consumers; default false).
   */
  static of(buffer: StridedViewBuffer, options: StridedViewOptions): StridedView {
    const where = 'StridedView.of';
    if (!(buffer instanceof DeviceBuffer) && !(buffer instanceof PinnedHostBuffer))
      throw new TypeError(`${where}: buffer must be a DeviceBuffer, ManagedBuffer or PinnedHostBuffer, got ${describe(buffer)}`);
    if (typeof options !== 'object' || options === null)
      throw new TypeError(`${where}: options must be an object { dtype, shape, strides?, byteOffset? }, got ${describe(options)}`);
    checkKeys(where, options, ['dtype', 'shape', 'strides', 'byteOffset', 'readOnly']);
    const dtype = options.dtype;
    checkDtype(where, dtype);
    const shape = integers(`${where}: shape`, options.shape, 0);
    const strides = options.strides === undefined ? contiguousStrides(shape) : integers(`${where}: strides`, options.strides, -Number.MAX_SAFE_INTEGER);
    if (strides.length !== shape.length) throw new RangeError(`${where}: strides has ${strides.length} entries for ${shape.length} dimensions`);
    const byteOffset = checkSize(`${where}: byteOffset`, options.byteOffset ?? 0);
    if (options.readOnly !== undefined && typeof options.readOnly !== 'boolean')
      throw new TypeError(`${where}: readOnly must be a boolean, got ${describe(options.readOnly)}`);
    const size = DTYPE_SIZES[dtype];
    if (byteOffset % size !== 0) throw new RangeError(`${where}: byteOffset ${byteOffset} is not a multiple of the ${size}-byte ${dtype} element`);
    if (!shape.includes(0)) {
      const { min, max } = elementSpan(shape, strides);
      const lo = byteOffset + min * size;
      const hi = byteOffset + (max + 1) * size;
      if (lo < 0 || hi > buffer.byteLength)
        throw new RangeError(
          `${where}: shape [${shape}] with strides [${strides}] from byte ${byteOffset} reaches bytes [${lo}, ${hi}), outside the ${buffer.byteLength}-byte buffer`,
        );
    }
    return new StridedView(SEALED, buffer, dtype, shape, strides, byteOffset, options.readOnly ?? false);
  }

  /** Number of dimensions. */
  get ndim(): number {
    return this.shape.length;
  }
  /** Number of elements. */
  get size(): number {
    return this.shape.reduce((a, b) => a * b, 1);
  }
  /** Bytes per element. */
  get itemSize(): number {
    return DTYPE_SIZES[this.dtype];
  }
  /** True when the elements lie contiguously in C (row-major) order. */
  get isContiguous(): boolean {
    const c = contiguousStrides(this.shape);
    return this.shape.every((n, d) => n <= 1 || this.strides[d] === c[d]);
  }
  /** Where the memory is: 'device', 'managed' or 'pinned' (page-locked host memory). */
  get memoryKind(): 'device' | 'managed' | 'pinned' {
    const b = this.buffer;
    if (b instanceof PinnedHostBuffer) return 'pinned';
    const pool = (b.parent ?? b).pool;
    if (pool !== undefined) return pool.memoryType === 'device' ? 'device' : pool.memoryType === 'managed' ? 'managed' : 'pinned';
    return b instanceof ManagedBuffer || b.hostAccessible ? 'managed' : 'device'; // wrapped host-accessible memory counts as managed
  }
  /** The device the memory belongs to (for pinned memory: its context's device). */
  get device(): number {
    return this.buffer.context.device;
  }
  /** The address of element 0 (device address; host address for pinned memory). */
  get address(): number {
    return (this.buffer instanceof PinnedHostBuffer ? this.buffer.hostAddress : this.buffer.ptr) + this.byteOffset;
  }

  /**
   * The same elements with dimensions reordered (default: reversed, a matrix transpose). No copy.
   * @param axes The new order of the dimensions, a permutation of 0..ndim-1 (default: reversed).
   */
  transpose(axes?: readonly number[]): StridedView {
    const n = this.ndim;
    const order = axes === undefined ? Array.from({ length: n }, (_, i) => n - 1 - i) : integers('StridedView.transpose: axes', axes, 0);
    if (order.length !== n || new Set(order).size !== n || order.some((a) => a >= n))
      throw new RangeError(`StridedView.transpose: axes must be a permutation of 0..${n - 1}, got [${order}]`);
    return new StridedView(
      SEALED,
      this.buffer,
      this.dtype,
      order.map((a) => this.shape[a]),
      order.map((a) => this.strides[a]),
      this.byteOffset,
      this.readOnly,
    );
  }

  /**
   * The elements in C order in a new host TypedArray (Float32Array for f32, BigInt64Array for i64, a
   * Uint16Array of bit patterns for f16/bf16, interleaved pairs for complex): the bytes the view spans
   * are copied to the host once (synchronously), then gathered.
   */
  toArray(): ArrayBufferView {
    const size = this.itemSize;
    const C = ARRAY_TYPES[this.dtype];
    const out = new Uint8Array(this.size * size);
    if (this.size > 0) {
      const { min, max } = elementSpan(this.shape, this.strides);
      const lo = this.byteOffset + min * size;
      const span = this.read(lo, (max - min + 1) * size);
      const origin = -min * size; // element 0 within span
      const idx = new Array<number>(this.ndim).fill(0);
      for (let k = 0; k < this.size; k++) {
        let at = origin;
        for (let d = 0; d < this.ndim; d++) at += idx[d] * this.strides[d] * size;
        out.set(span.subarray(at, at + size), k * size);
        for (let d = this.ndim - 1; d >= 0 && ++idx[d] === this.shape[d]; d--) idx[d] = 0;
      }
    }
    return new C(out.buffer, 0, out.byteLength / C.BYTES_PER_ELEMENT);
  }

  /** `n` bytes of the buffer from byte `offset`, on the host. */
  private read(offset: number, n: number): Uint8Array {
    const b = this.buffer;
    if (b instanceof PinnedHostBuffer) return b.array(Uint8Array).slice(offset, offset + n);
    const part = b.subarray(offset, offset + n);
    try {
      return part.toArray(Uint8Array);
    } finally {
      part.close();
    }
  }

  /** `StridedView(dtype, shape […], strides […], memory kind)`. */
  toString(): string {
    return `StridedView(${this.dtype}, shape [${this.shape}], strides [${this.strides}], ${this.memoryKind})`;
  }
}
