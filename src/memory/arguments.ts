// Argument checks shared by the memory classes: host data, sizes, byte ranges, options objects, TypedArray
// constructors and raw addresses. Each throws a TypeError or RangeError naming the calling method, before
// any native call (koffi converts bad numbers silently).
import { hostByteLength, isArrayBuffer, isDataView } from '../../support';
import { describe } from '../describe';
import { checkSize } from '../lifecycle';
import type { StreamLike } from '../stream';

// A DataView's own buffer and offset, from the engine (a caller-defined property cannot redirect them).
const DATA_VIEW_BUFFER = Object.getOwnPropertyDescriptor(DataView.prototype, 'buffer')!.get!;
const DATA_VIEW_OFFSET = Object.getOwnPropertyDescriptor(DataView.prototype, 'byteOffset')!.get!;

/** Host memory a copy accepts: a TypedArray, DataView, Buffer or ArrayBuffer (pageable). */
export type HostData = ArrayBufferView | ArrayBuffer;

/** Options of {@link DeviceBuffer.copyFrom} and {@link DeviceBuffer.copyTo}. */
export interface CopyOptions {
  /**
   * Stream to copy on: the copy is enqueued there and may still run when the call returns. Default: the
   * buffer's allocating stream for a stream-ordered buffer (enqueued there likewise), else a synchronous
   * copy, done when the call returns (ordered after earlier work on blocking streams, as CUDA's legacy
   * default stream is).
   */
  stream?: StreamLike;
  /** Byte offset into this buffer (default 0). */
  offset?: number;
  /** Bytes to copy (default: all of the source, or what is left of this buffer for copyTo). */
  byteLength?: number;
}

/** Options of {@link DeviceBuffer.memset}. */
export interface MemsetOptions {
  /**
   * Stream to fill on: enqueued there, it may still run when the call returns. Default: the buffer's
   * allocating stream for a stream-ordered buffer (enqueued there likewise), else a synchronous fill,
   * done when the call returns (ordered after earlier work on blocking streams, as CUDA's legacy default
   * stream is).
   */
  stream?: StreamLike;
  /** Element width in bytes: 1, 2 or 4 (default 1). */
  width?: 1 | 2 | 4;
  /** Byte offset of the first element (a multiple of `width`, default 0). */
  offset?: number;
  /** Elements to fill (default: up to the end of the buffer). */
  count?: number;
}

/** A TypedArray class (Float32Array, Uint8Array, …): picks the element type of toArray() and array(). */
export interface TypedArrayConstructor<T extends ArrayBufferView> {
  /** A view of `length` elements of `buffer` from byte `byteOffset`. */
  new (buffer: ArrayBuffer, byteOffset?: number, length?: number): T;
  /** A new zero-filled array of `length` elements. */
  new (length: number): T;
  /** Element size in bytes. */
  readonly BYTES_PER_ELEMENT: number;
}

/** The bytes of host data (a DataView as a Uint8Array over the same memory); TypeError otherwise. */
export function hostBytes(where: string, data: unknown): { ptr: ArrayBufferView | ArrayBuffer; byteLength: number } {
  // Lengths from the engine (hostByteLength), never from a property the caller may have defined.
  if (isArrayBuffer(data)) return { ptr: data, byteLength: hostByteLength(data)! };
  if (ArrayBuffer.isView(data)) {
    const byteLength = hostByteLength(data)!;
    const view = isDataView(data) ? new Uint8Array(DATA_VIEW_BUFFER.call(data) as ArrayBuffer, DATA_VIEW_OFFSET.call(data) as number, byteLength) : data;
    return { ptr: view, byteLength };
  }
  throw new TypeError(`${where}: expected a TypedArray, DataView, Buffer, ArrayBuffer, DeviceBuffer or PinnedHostBuffer, got ${describe(data)}`);
}

/** A non-negative safe integer, or a RangeError naming `where` (TypeError for a non-number). */
export function checkedSize(where: string, v: unknown): number {
  if (typeof v !== 'number' && typeof v !== 'bigint') throw new TypeError(`${where} must be a non-negative integer, got ${describe(v)}`);
  return checkSize(where, v); // a bigint: RangeError
}

/** `o` as an options record (undefined stays undefined); TypeError for a non-object. */
export function optionsObject(where: string, o: unknown): Record<string, unknown> | undefined {
  if (o === undefined) return undefined;
  if (typeof o !== 'object' || o === null) throw new TypeError(`${where}: options must be an object, got ${describe(o)}`);
  return o as Record<string, unknown>;
}

/** RangeError unless bytes [offset, offset + byteLength) lie within `capacity`. */
export function rangeCheck(what: string, offset: number, byteLength: number, capacity: number): void {
  if (offset + byteLength > capacity) {
    throw new RangeError(`${what}: bytes [${offset}, ${offset + byteLength}) are out of bounds of a ${capacity}-byte buffer`);
  }
}

// By construction, not instanceof: constructors from another realm (a vm context, a test runner's
// sandbox) are typed arrays too. Checked once per constructor.
const typedArrayCtors = new WeakSet<object>();
function isTypedArrayCtor(c: unknown): c is TypedArrayConstructor<ArrayBufferView> {
  if (typeof c !== 'function') return false;
  if (typedArrayCtors.has(c)) return true;
  let ok = false;
  try {
    const probe = new (c as new (n: number) => unknown)(0);
    ok = ArrayBuffer.isView(probe) && !(probe instanceof DataView) && typeof (c as { BYTES_PER_ELEMENT?: unknown }).BYTES_PER_ELEMENT === 'number';
  } catch {
    ok = false;
  }
  if (ok) typedArrayCtors.add(c);
  return ok;
}

/** `ctor` checked as a TypedArray constructor of 1-, 2-, 4- or 8-byte elements. */
export function elementType<T extends ArrayBufferView>(where: string, ctor: unknown): TypedArrayConstructor<T> {
  if (!isTypedArrayCtor(ctor) || ![1, 2, 4, 8].includes(ctor.BYTES_PER_ELEMENT)) {
    throw new TypeError(`${where}: expected a TypedArray constructor (Float32Array, Uint8Array, …), got ${describe(ctor)}`);
  }
  return ctor as unknown as TypedArrayConstructor<T>;
}

/** A device address given as a number or bigint, checked. @internal */
export function addressArg(where: string, v: unknown): number {
  if (typeof v === 'bigint') {
    if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${where} must be an address below 2**53, got ${v}n`);
    return Number(v);
  }
  if (typeof v !== 'number') throw new TypeError(`${where} must be an address (number or bigint), got ${describe(v)}`);
  if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`${where} must be a non-negative integer address, got ${describe(v)}`);
  return v;
}
