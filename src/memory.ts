// Memory: DeviceBuffer (synchronous or stream-ordered), ManagedBuffer, PinnedHostBuffer, MemoryPool.
// Every copy is bounds-checked (RangeError) before the driver is called. Stream-ordered buffers come
// from the caching allocator (allocator.ts) unless a pool is given or the cache is off, and are freed
// on the stream that allocated them (the buffer keeps that stream alive).
// Zero-copy host views (pinned, managed) are external ArrayBuffers over native memory that V8 cannot
// detach: close() frees the memory at once, and views made by array() must not be used after it.
import { isArrayBuffer, isDataView } from './runtime';
import koffi from 'koffi';
import * as drv from './driver';
import { Context, contextOf, describe } from './context';
import { Resource, assertMayBlock, deferredPending, whenNoHostFuncs, type Core } from './lifecycle';
import { Stream, toStream, type StreamLike } from './stream';
import { CachedBlockCore, allocCached, allocUncached, cachingEnabled, driverFree, sizeClass } from './allocator';
import { noteUse } from './capture';

/** Host memory a copy accepts: a TypedArray, DataView, Buffer or ArrayBuffer (pageable). */
export type HostData = ArrayBufferView | ArrayBuffer;

/** Options of {@link DeviceBuffer.copyFrom} and {@link DeviceBuffer.copyTo}. */
export interface CopyOptions {
  /** Stream to copy on (default: the buffer's allocating stream, else a synchronous copy). */
  stream?: StreamLike;
  /** Byte offset into this buffer (default 0). */
  offset?: number;
  /** Bytes to copy (default: all of the source, or what is left of this buffer for copyTo). */
  byteLength?: number;
}

/** Options of {@link DeviceBuffer.memset}. */
export interface MemsetOptions {
  /** Stream to fill on (default: the buffer's allocating stream, else synchronous). */
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

function hostBytes(where: string, data: unknown): { ptr: ArrayBufferView | ArrayBuffer; byteLength: number } {
  if (isArrayBuffer(data)) return { ptr: data, byteLength: data.byteLength };
  if (ArrayBuffer.isView(data)) {
    const view = isDataView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : data;
    return { ptr: view, byteLength: data.byteLength };
  }
  throw new TypeError(`${where}: expected a TypedArray, DataView, Buffer, ArrayBuffer, DeviceBuffer or PinnedHostBuffer, got ${describe(data)}`);
}

/** A non-negative safe integer, or a RangeError naming `where` (TypeError for a non-number). */
function size(where: string, v: unknown): number {
  if (typeof v !== 'number' && typeof v !== 'bigint') throw new TypeError(`${where} must be a non-negative integer, got ${describe(v)}`);
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new RangeError(`${where} must be a non-negative integer, got ${describe(v)}`);
  return v;
}

function optionsObject(where: string, o: unknown): Record<string, unknown> | undefined {
  if (o === undefined) return undefined;
  if (typeof o !== 'object' || o === null) throw new TypeError(`${where}: options must be an object, got ${describe(o)}`);
  return o as Record<string, unknown>;
}

function rangeCheck(what: string, offset: number, byteLength: number, capacity: number): void {
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

function elementType<T extends ArrayBufferView>(where: string, ctor: unknown): TypedArrayConstructor<T> {
  if (!isTypedArrayCtor(ctor) || ![1, 2, 4, 8].includes(ctor.BYTES_PER_ELEMENT)) {
    throw new TypeError(`${where}: expected a TypedArray constructor (Float32Array, Uint8Array, …), got ${describe(ctor)}`);
  }
  return ctor as unknown as TypedArrayConstructor<T>;
}

/** Options of {@link MemoryPool.create}. */
export interface PoolOptions {
  /** Ordinal of the device whose memory the pool holds (default: `context`'s device). */
  device?: number;
  /** Most bytes the pool may reserve (0 = no limit). */
  maxSize?: number;
  /** Bytes the pool keeps reserved at synchronization points instead of releasing them to the OS. */
  releaseThreshold?: number;
  /** The context to use the pool from (default: `device`'s primary context, else the current one). */
  context?: Context;
}

const u64 = new BigUint64Array(1);

/**
 * A memory pool for stream-ordered allocation (CUmemoryPool): buffers allocated from it on a stream
 * (alloc(), or DeviceBuffer.alloc with `pool`) come from it and return to it when freed. create() makes
 * one this object owns (close() destroys it); default() wraps a device's default pool.
 */
export class MemoryPool extends Resource {
  /** The driver handle (CUmemoryPool). */
  readonly handle: drv.CUmemoryPool;
  /** The context made current for the pool's calls. */
  readonly context: Context;
  /** True when close() destroys the pool (made by create()); false for default(). */
  readonly owned: boolean;

  private constructor(handle: drv.CUmemoryPool, context: Context, owned: boolean) {
    super(owned ? 'MemoryPool' : 'MemoryPool (default)', owned ? () => whenNoHostFuncs(() => drv.release(context, 'cuMemPoolDestroy', handle)) : undefined, [context]);
    this.handle = handle;
    this.context = context;
    this.owned = owned;
  }

  private static contextFor(where: string, device: unknown, context: unknown): Context {
    if (device !== undefined && (typeof device !== 'number' || !Number.isSafeInteger(device) || device < 0)) throw new RangeError(`${where}: device must be a non-negative integer, got ${describe(device)}`);
    if (context !== undefined) return contextOf(context, `${where}: context`);
    return device !== undefined ? Context.primary(device as number) : Context.current();
  }

  /** The device's current default pool (not owned: close() does not destroy it). */
  static default(device?: number, context?: Context): MemoryPool {
    const ctx = MemoryPool.contextFor('MemoryPool.default', device, context);
    drv.call(ctx, 'cuDeviceGet', drv.out32, device ?? ctx.device);
    drv.call(ctx, 'cuDeviceGetDefaultMemPool', drv.out64, drv.out32[0]);
    return new MemoryPool(drv.outNumber() as drv.CUmemoryPool, ctx, false);
  }

  /** Creates a pool of device memory on `options.device` (cuMemPoolCreate). */
  static create(options: PoolOptions = {}): MemoryPool {
    const o = optionsObject('MemoryPool.create', options) ?? {};
    const ctx = MemoryPool.contextFor('MemoryPool.create', o.device, o.context);
    const maxSize = size('MemoryPool.create: maxSize', o.maxSize ?? 0);
    if (o.releaseThreshold !== undefined && o.releaseThreshold !== Infinity) size('MemoryPool.create: releaseThreshold', o.releaseThreshold);
    const props = new DataView(new ArrayBuffer(88));
    props.setInt32(0, drv.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED, true);
    props.setInt32(4, 0, true); // handleTypes: none
    props.setInt32(8, drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, true);
    props.setInt32(12, (o.device as number | undefined) ?? ctx.device, true);
    props.setBigUint64(24, BigInt(maxSize), true);
    drv.call(ctx, 'cuMemPoolCreate', drv.out64, new Uint8Array(props.buffer));
    const pool = new MemoryPool(drv.outNumber() as drv.CUmemoryPool, ctx, true);
    if (o.releaseThreshold !== undefined) pool.releaseThreshold = o.releaseThreshold as number;
    return pool;
  }

  private attr(a: drv.CUmemPool_attribute): number {
    this.assertOpen();
    drv.call(this.context, 'cuMemPoolGetAttribute', this.handle, a, u64);
    return Number(u64[0]);
  }

  /** Bytes the pool keeps reserved at synchronization points instead of releasing them to the OS. */
  get releaseThreshold(): number {
    return this.attr(drv.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD);
  }

  /** Sets the release threshold in bytes; `Infinity` keeps everything reserved. */
  set releaseThreshold(bytes: number) {
    this.assertOpen();
    u64[0] = BigInt(size('MemoryPool.releaseThreshold', bytes === Infinity ? Number.MAX_SAFE_INTEGER : bytes));
    drv.call(this.context, 'cuMemPoolSetAttribute', this.handle, drv.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64);
  }

  /** Bytes currently reserved from the OS. */
  get reservedMemory(): number {
    return this.attr(drv.CUmemPool_attribute.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
  }

  /** Bytes currently handed out. */
  get usedMemory(): number {
    return this.attr(drv.CUmemPool_attribute.CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
  }

  /** Releases reserved memory above `minBytesToKeep`. */
  trim(minBytesToKeep = 0): void {
    this.assertOpen();
    drv.call(this.context, 'cuMemPoolTrimTo', this.handle, size('MemoryPool.trim: minBytesToKeep', minBytesToKeep));
  }

  /** Stream-ordered allocation from this pool. */
  alloc(byteLength: number, stream: StreamLike): DeviceBuffer {
    if (stream === undefined) throw new TypeError('MemoryPool.alloc: stream is required');
    return DeviceBuffer.alloc(byteLength, { stream, pool: this });
  }

  /** @internal */
  check(): void {
    this.assertOpen();
  }
}

/** Options of {@link DeviceBuffer.alloc} and {@link DeviceBuffer.from}. */
export interface AllocOptions {
  /** Allocate stream-ordered on this stream (through the caching allocator), freed there. */
  stream?: StreamLike;
  /** Allocate from this pool with cuMemAllocFromPoolAsync (needs `stream`; bypasses the cache). */
  pool?: MemoryPool;
  /** false: this stream-ordered allocation bypasses the caching allocator (cuMemAllocAsync / cuMemFreeAsync). */
  cache?: boolean;
  /** The context to allocate in (default: the pool's, else the stream's, else the current one, else device 0's primary context). */
  context?: Context;
}

/** The buffer owning the memory of `b` (itself, or the buffer a view was made from). @internal */
export function ownerOf(b: DeviceBuffer): DeviceBuffer {
  return b.parent ?? b;
}

/**
 * Device memory of one context: allocated with cuMemAlloc, or stream-ordered (the caching allocator,
 * freed on the same stream) when a stream is given. Free with close() or `using`.
 */
export class DeviceBuffer extends Resource {
  /** Size in bytes. */
  readonly byteLength: number;
  /** The context the memory belongs to. */
  readonly context: Context;
  /** The allocating stream of a stream-ordered buffer. */
  readonly stream: Stream | undefined;
  /** The pool a stream-ordered buffer was allocated from, when one was given. */
  readonly pool: MemoryPool | undefined;
  /** The buffer a view was made from (views share its life). */
  readonly parent: DeviceBuffer | undefined;
  /** The device address, unchecked (`ptr` throws once the buffer is closed). */
  protected readonly address: number;

  /**
   * For subclasses; use DeviceBuffer.alloc or DeviceBuffer.from.
   * @param kind the name used in messages
   * @param destroy frees the memory; undefined for a view
   * @param parent the buffer a view is made from
   */
  protected constructor(kind: string, address: number, byteLength: number, context: Context, destroy: (() => void) | Core | undefined, stream?: Stream, pool?: MemoryPool, parent?: DeviceBuffer) {
    super(kind, destroy);
    if (parent === undefined) {
      const core = this.core;
      core.addParent(context.core);
      if (stream !== undefined) core.addParent(stream.core);
      if (pool !== undefined) core.addParent(pool.core);
    }
    this.address = address;
    this.byteLength = byteLength;
    this.context = context;
    this.stream = stream;
    this.pool = pool;
    this.parent = parent;
  }

  /** Allocates `byteLength` bytes of device memory (stream-ordered when `stream` is given). */
  static alloc(byteLength: number, options?: AllocOptions): DeviceBuffer {
    // The hot path (a cached stream-ordered block on an open Stream, nothing else asked) first; anything
    // unusual falls through to the checks below, which throw the precise error.
    if (options !== undefined && options !== null) {
      const st = options.stream;
      if (st instanceof Stream && options.pool === undefined && options.context === undefined && options.cache === undefined && st.capture === undefined && st.hostError === undefined && typeof byteLength === 'number' && byteLength > 0 && byteLength <= Number.MAX_SAFE_INTEGER && cachingEnabled()) {
        const ctx = st.context;
        if (!st.core.closed && !ctx.core.closed && ctx.unusable === undefined && Number.isInteger(byteLength) && !deferredPending()) {
          const h = st.handle;
          const cls = sizeClass(byteLength);
          const ptr = allocCached(ctx, cls, h, 'DeviceBuffer.alloc');
          return new DeviceBuffer('DeviceBuffer', ptr, byteLength, ctx, new CachedBlockCore('DeviceBuffer', ctx, ptr, cls, h), st);
        }
      }
    }
    if (typeof byteLength !== 'number' || !Number.isSafeInteger(byteLength) || byteLength < 0) size('DeviceBuffer.alloc: byteLength', byteLength);
    if (options === undefined) return DeviceBuffer.allocSync(byteLength, Context.current());
    if (typeof options !== 'object' || options === null) throw new TypeError(`DeviceBuffer.alloc: options must be an object, got ${describe(options)}`);
    const stream = options.stream instanceof Stream ? options.stream : toStream(options.stream, 'DeviceBuffer.alloc: stream');
    const pool = options.pool;
    if (pool !== undefined && !(pool instanceof MemoryPool)) throw new TypeError(`DeviceBuffer.alloc: pool must be a MemoryPool, got ${describe(pool)}`);
    if (options.cache !== undefined && typeof options.cache !== 'boolean') throw new TypeError(`DeviceBuffer.alloc: cache must be a boolean, got ${describe(options.cache)}`);
    const ctx = options.context !== undefined ? contextOf(options.context, 'DeviceBuffer.alloc: context') : (pool?.context ?? stream?.context ?? Context.current());
    if (stream === undefined) {
      if (pool) throw new TypeError('DeviceBuffer.alloc: allocating from a MemoryPool needs a stream');
      return DeviceBuffer.allocSync(byteLength, ctx);
    }
    stream.check();
    ctx.check();
    if (stream.context !== ctx) throw new TypeError(`DeviceBuffer.alloc: the stream belongs to ${String(stream.context)}, the allocation to ${String(ctx)}`);
    const h = stream.handle;
    if (byteLength === 0) return new DeviceBuffer('DeviceBuffer', 0, 0, ctx, undefined, stream);
    if (pool !== undefined) {
      pool.check();
      const fn = drv.native('cuMemAllocFromPoolAsync');
      if (h <= 2) ctx.bind();
      const status = drv.hinted(ctx, () => fn(drv.out64, byteLength, pool.handle, h));
      if (status !== 0) throw drv.fail(ctx, 'cuMemAllocFromPoolAsync', status);
      const ptr = drv.outNumber();
      return new DeviceBuffer('DeviceBuffer', ptr, byteLength, ctx, () => driverFree(ctx, ptr, h), stream, pool);
    }
    // The caching allocator, except while the stream captures (the allocation becomes a graph node then).
    if (options.cache !== false && cachingEnabled() && stream.capture === undefined) {
      const cls = sizeClass(byteLength);
      const ptr = allocCached(ctx, cls, h, 'DeviceBuffer.alloc');
      return new DeviceBuffer('DeviceBuffer', ptr, byteLength, ctx, new CachedBlockCore('DeviceBuffer', ctx, ptr, cls, h), stream);
    }
    const ptr = allocUncached(ctx, byteLength, h);
    return new DeviceBuffer('DeviceBuffer', ptr, byteLength, ctx, () => driverFree(ctx, ptr, h), stream);
  }

  private static allocSync(byteLength: number, ctx: Context): DeviceBuffer {
    ctx.check();
    if (byteLength === 0) return new DeviceBuffer('DeviceBuffer', 0, 0, ctx, undefined);
    drv.call(ctx, 'cuMemAlloc', drv.out64, byteLength);
    const ptr = drv.outNumber();
    return new DeviceBuffer('DeviceBuffer', ptr, byteLength, ctx, () => whenNoHostFuncs(() => drv.release(ctx, 'cuMemFree', ptr)));
  }

  /** Allocates a buffer holding a copy of `data`. */
  static from(data: HostData, options?: AllocOptions): DeviceBuffer {
    const { byteLength } = hostBytes('DeviceBuffer.from', data);
    const buf = DeviceBuffer.alloc(byteLength, options);
    try {
      buf.copyFrom(data);
    } catch (e) {
      buf.close();
      throw e;
    }
    return buf;
  }

  /** @internal */
  check(): void {
    if (this.parent) this.parent.check();
    this.assertOpen();
    this.context.check();
  }

  /** The address for a kernel argument: throws once this buffer (or the one it views) is closed. @internal */
  launchAddress(): number {
    if (this.core.closed || (this.parent !== undefined && this.parent.core.closed)) this.check();
    return this.address;
  }

  /** The device address (throws once closed). */
  get ptr(): drv.CUdeviceptr {
    this.check();
    return this.address as drv.CUdeviceptr;
  }

  /** A view of bytes [begin, end) sharing this buffer's memory and life (closing the owner closes views). Negative indices count from the end. */
  subarray(begin = 0, end = this.byteLength): DeviceBuffer {
    this.check();
    for (const [name, v] of [['begin', begin], ['end', end]] as const) {
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new TypeError(`DeviceBuffer.subarray: ${name} must be an integer, got ${describe(v)}`);
    }
    if (begin < 0) begin = Math.max(0, this.byteLength + begin);
    if (end < 0) end = Math.max(0, this.byteLength + end);
    if (begin > this.byteLength || end > this.byteLength) throw new RangeError(`DeviceBuffer.subarray(${begin}, ${end}): out of bounds of a ${this.byteLength}-byte buffer`);
    const len = Math.max(0, end - begin);
    return new DeviceBuffer('DeviceBuffer (view)', this.address + begin, len, this.context, undefined, this.stream, this.pool, this.parent ?? this);
  }

  /** The stream of a copy: the option's, else the allocating stream, else undefined (synchronous). */
  private streamFor(where: string, options: Record<string, unknown> | undefined): Stream | undefined {
    const s = options?.stream;
    if (s !== undefined) return s instanceof Stream ? (s.check(), s) : toStream(s, `${where}: stream`);
    if (this.stream) {
      this.stream.check();
      return this.stream;
    }
    return undefined;
  }

  /** Runs a copy or memset: on `s` (registered with a capture in progress), or synchronously. */
  private enqueue(s: Stream | undefined, others: (DeviceBuffer | PinnedHostBuffer | undefined)[], syncName: string, asyncName: string, ...args: unknown[]): void {
    if (s === undefined) {
      drv.call(this.context, syncName, ...args);
      return;
    }
    noteUse(s.context, s.handle, ownerOf(this), ...others.map((o) => (o instanceof DeviceBuffer ? ownerOf(o) : o)));
    drv.callOnStream(s.context, s.handle, asyncName, ...args, s.handle);
  }

  /** Copies `src` (host data, a device buffer or a pinned buffer) into this buffer at `offset`. */
  copyFrom(src: HostData | DeviceBuffer | PinnedHostBuffer, options?: CopyOptions): this {
    this.check();
    const o = optionsObject('DeviceBuffer.copyFrom', options);
    const offset = size('DeviceBuffer.copyFrom: offset', o?.offset ?? 0);
    const dst = this.address + offset;
    const s = this.streamFor('DeviceBuffer.copyFrom', o);
    if (src instanceof DeviceBuffer) {
      const n = size('DeviceBuffer.copyFrom: byteLength', o?.byteLength ?? src.byteLength);
      rangeCheck('DeviceBuffer.copyFrom (source)', 0, n, src.byteLength);
      rangeCheck('DeviceBuffer.copyFrom', offset, n, this.byteLength);
      const from = src.ptr;
      if (n === 0) return this;
      if (s === undefined) assertMayBlock('DeviceBuffer.copyFrom() without a stream');
      this.enqueue(s, [src], 'cuMemcpyDtoD', 'cuMemcpyDtoDAsync', dst, from, n);
      return this;
    }
    const pinned = src instanceof PinnedHostBuffer;
    const host = pinned ? { ptr: src.hostAddress, byteLength: src.byteLength } : hostBytes('DeviceBuffer.copyFrom: src', src);
    const n = size('DeviceBuffer.copyFrom: byteLength', o?.byteLength ?? host.byteLength);
    rangeCheck('DeviceBuffer.copyFrom (source)', 0, n, host.byteLength);
    rangeCheck('DeviceBuffer.copyFrom', offset, n, this.byteLength);
    if (n === 0) return this;
    if (!pinned || s === undefined) assertMayBlock('DeviceBuffer.copyFrom() from pageable memory or without a stream');
    if (!pinned && s?.capture !== undefined) throw new TypeError('DeviceBuffer.copyFrom: a copy from pageable memory cannot be captured into a graph (use a PinnedHostBuffer)');
    this.enqueue(s, [pinned ? src : undefined], 'cuMemcpyHtoD', 'cuMemcpyHtoDAsync', dst, host.ptr, n);
    return this;
  }

  /** Copies bytes [offset, offset + byteLength) of this buffer into `dst`. */
  copyTo<D extends HostData | DeviceBuffer | PinnedHostBuffer>(dst: D, options?: CopyOptions): D {
    this.check();
    const o = optionsObject('DeviceBuffer.copyTo', options);
    const offset = size('DeviceBuffer.copyTo: offset', o?.offset ?? 0);
    const s = this.streamFor('DeviceBuffer.copyTo', o);
    const isBuffer = dst instanceof DeviceBuffer;
    const pinned = dst instanceof PinnedHostBuffer;
    const dstLength = isBuffer || pinned ? dst.byteLength : hostBytes('DeviceBuffer.copyTo: dst', dst).byteLength;
    // An offset at or past the end leaves nothing to copy: that is a caller's bug, not an empty copy.
    if (o?.byteLength === undefined && offset >= this.byteLength && dstLength > 0) {
      throw new RangeError(`DeviceBuffer.copyTo: offset ${offset} is at or past the end of a ${this.byteLength}-byte buffer`);
    }
    const n = size('DeviceBuffer.copyTo: byteLength', o?.byteLength ?? Math.min(dstLength, this.byteLength - offset));
    rangeCheck('DeviceBuffer.copyTo', offset, n, this.byteLength);
    rangeCheck('DeviceBuffer.copyTo (destination)', 0, n, dstLength);
    const src = this.address + offset;
    if (isBuffer) {
      const to = dst.ptr;
      if (n === 0) return dst;
      if (s === undefined) assertMayBlock('DeviceBuffer.copyTo() without a stream');
      this.enqueue(s, [dst], 'cuMemcpyDtoD', 'cuMemcpyDtoDAsync', to, src, n);
      return dst;
    }
    const host = pinned ? dst.hostAddress : hostBytes('DeviceBuffer.copyTo: dst', dst).ptr;
    if (n === 0) return dst;
    if (!pinned || s === undefined) assertMayBlock('DeviceBuffer.copyTo() into pageable memory or without a stream');
    if (!pinned && s?.capture !== undefined) throw new TypeError('DeviceBuffer.copyTo: a copy into pageable memory cannot be captured into a graph (use a PinnedHostBuffer)');
    this.enqueue(s, [pinned ? dst : undefined], 'cuMemcpyDtoH', 'cuMemcpyDtoHAsync', host, src, n);
    return dst;
  }

  /** Copies the whole buffer into a new TypedArray (synchronous with respect to the host). */
  toArray<T extends ArrayBufferView>(ctor: TypedArrayConstructor<T>, options?: { stream?: StreamLike }): T {
    this.check();
    const C = elementType<T>('DeviceBuffer.toArray', ctor);
    const o = optionsObject('DeviceBuffer.toArray', options);
    if (this.byteLength % C.BYTES_PER_ELEMENT !== 0) throw new RangeError(`DeviceBuffer.toArray: ${this.byteLength} bytes is not a whole number of ${C.BYTES_PER_ELEMENT}-byte elements`);
    const out = new C(this.byteLength / C.BYTES_PER_ELEMENT);
    this.copyTo(out, { stream: o?.stream as StreamLike | undefined });
    return out;
  }

  /**
   * Fills `count` elements of `width` bytes (1, 2 or 4) starting at byte `offset` with `value` (an
   * integer that fits the width, signed or unsigned). Defaults: width 1, the whole buffer.
   */
  memset(value: number, options?: MemsetOptions): this {
    this.check();
    const o = optionsObject('DeviceBuffer.memset', options);
    const width = o?.width ?? 1;
    if (width !== 1 && width !== 2 && width !== 4) throw new TypeError(`DeviceBuffer.memset: width must be 1, 2 or 4, got ${describe(width)}`);
    const offset = size('DeviceBuffer.memset: offset', o?.offset ?? 0);
    if (offset % width !== 0) throw new RangeError(`DeviceBuffer.memset: offset ${offset} is not a multiple of width ${width}`);
    const count = size('DeviceBuffer.memset: count', o?.count ?? Math.floor(Math.max(0, this.byteLength - offset) / width));
    rangeCheck('DeviceBuffer.memset', offset, count * width, this.byteLength);
    if (typeof value !== 'number' || !Number.isInteger(value)) throw new TypeError(`DeviceBuffer.memset: value must be an integer, got ${describe(value)}`);
    const bits = 8 * width;
    if (value < -(2 ** (bits - 1)) || value > 2 ** bits - 1) throw new RangeError(`DeviceBuffer.memset: value ${value} does not fit in ${width} byte(s)`);
    const v = width === 4 ? value >>> 0 : value & (width === 2 ? 0xffff : 0xff);
    if (count === 0) return this;
    const dst = this.address + offset;
    const s = this.streamFor('DeviceBuffer.memset', o);
    if (s === undefined) assertMayBlock('DeviceBuffer.memset() without a stream');
    const name = width === 1 ? 'cuMemsetD8' : width === 2 ? 'cuMemsetD16' : 'cuMemsetD32';
    this.enqueue(s, [], name, `${name}Async`, dst, v, count);
    return this;
  }

  /** Frees the memory (idempotent), which ends its views too; closing a view only makes that view unusable. */
  override close(): void {
    if (this.parent) {
      // A view owns nothing: closing it only makes it unusable.
      this.core.closed = true;
      return;
    }
    super.close();
  }

  toString(): string {
    return `${this.core.kind}(0x${this.address.toString(16)}, ${this.byteLength} bytes)`;
  }
}

/**
 * Unified memory (cuMemAllocManaged): usable from the device and, through `array()`, from the host.
 * close() frees it at once: views made by array() must not be used after close().
 */
export class ManagedBuffer extends DeviceBuffer {
  private constructor(address: number, byteLength: number, context: Context) {
    super('ManagedBuffer', address, byteLength, context, address === 0 ? undefined : () => whenNoHostFuncs(() => drv.release(context, 'cuMemFree', address)));
  }

  /**
   * Allocates `byteLength` bytes of managed memory (cuMemAllocManaged) in `options.context` (default:
   * the current one). It is attached globally, or to the host only with `hostOnlyAttach`.
   */
  static override alloc(byteLength: number, options: { context?: Context; hostOnlyAttach?: boolean } = {}): ManagedBuffer {
    size('ManagedBuffer.alloc: byteLength', byteLength);
    const o = optionsObject('ManagedBuffer.alloc', options) ?? {};
    if (o.hostOnlyAttach !== undefined && typeof o.hostOnlyAttach !== 'boolean') throw new TypeError(`ManagedBuffer.alloc: hostOnlyAttach must be a boolean, got ${describe(o.hostOnlyAttach)}`);
    const ctx = contextOf(o.context, 'ManagedBuffer.alloc: context');
    ctx.check();
    const flags = o.hostOnlyAttach ? drv.CUmemAttach_flags.CU_MEM_ATTACH_HOST : drv.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL;
    let ptr = 0;
    if (byteLength > 0) {
      drv.call(ctx, 'cuMemAllocManaged', drv.out64, byteLength, flags);
      ptr = drv.outNumber();
    }
    return new ManagedBuffer(ptr, byteLength, ctx);
  }

  /**
   * A zero-copy TypedArray over the managed memory (synchronize the device before reading kernel
   * results). Valid until close(): using it after close() reads freed memory.
   */
  array<T extends ArrayBufferView>(ctor: TypedArrayConstructor<T> = Uint8Array as unknown as TypedArrayConstructor<T>): T {
    this.check();
    const C = elementType<T>('ManagedBuffer.array', ctor);
    if (this.byteLength === 0) return new C(0);
    return new C(koffi.view(this.address, this.byteLength), 0, Math.floor(this.byteLength / C.BYTES_PER_ELEMENT));
  }

  /** Prefetches to the device (default: this buffer's) or to the host. */
  prefetch(to: 'device' | 'host', stream?: StreamLike): this {
    this.check();
    if (to !== 'device' && to !== 'host') throw new TypeError(`ManagedBuffer.prefetch: to must be 'device' or 'host', got ${describe(to)}`);
    const s = toStream(stream, 'ManagedBuffer.prefetch: stream');
    const location = to === 'host' ? { type: drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST, id: 0 } : { type: drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, id: this.context.device };
    const h = s?.handle ?? 0;
    drv.callOnStream(s?.context ?? this.context, h, 'cuMemPrefetchAsync', this.address, this.byteLength, location, 0, h);
    return this;
  }
}

/** Options of {@link PinnedHostBuffer.alloc} and {@link PinnedHostBuffer.from}. */
export interface PinnedOptions {
  /** CU_MEMHOSTALLOC_WRITECOMBINED: fast host→device, slow host reads. */
  writeCombined?: boolean;
  /** The context to allocate in (default: the current one, else device 0's primary context). */
  context?: Context;
}

/**
 * Page-locked host memory mapped into the device address space; `array()` is a zero-copy view.
 * close() frees the memory at once (so a create/close loop keeps RSS flat): views made by array()
 * must not be used after close() — V8 cannot detach them, and reading one reads freed memory.
 */
export class PinnedHostBuffer extends Resource {
  /** Size in bytes. */
  readonly byteLength: number;
  /** The context the memory was allocated in. */
  readonly context: Context;
  private readonly address: number;
  private device: drv.CUdeviceptr | undefined;

  private constructor(address: number, byteLength: number, context: Context) {
    super('PinnedHostBuffer', address === 0 ? undefined : () => whenNoHostFuncs(() => drv.release(context, 'cuMemFreeHost', address)), [context]);
    this.address = address;
    this.byteLength = byteLength;
    this.context = context;
  }

  /** Allocates `byteLength` bytes of page-locked host memory (cuMemHostAlloc, portable and device-mapped). */
  static alloc(byteLength: number, options: PinnedOptions = {}): PinnedHostBuffer {
    size('PinnedHostBuffer.alloc: byteLength', byteLength);
    const o = optionsObject('PinnedHostBuffer.alloc', options) ?? {};
    if (o.writeCombined !== undefined && typeof o.writeCombined !== 'boolean') throw new TypeError(`PinnedHostBuffer.alloc: writeCombined must be a boolean, got ${describe(o.writeCombined)}`);
    const ctx = contextOf(o.context, 'PinnedHostBuffer.alloc: context');
    ctx.check();
    let flags = drv.CU_MEMHOSTALLOC_PORTABLE | drv.CU_MEMHOSTALLOC_DEVICEMAP;
    if (o.writeCombined) flags |= drv.CU_MEMHOSTALLOC_WRITECOMBINED;
    let ptr = 0;
    if (byteLength > 0) {
      drv.call(ctx, 'cuMemHostAlloc', drv.out64, byteLength, flags);
      ptr = drv.outNumber();
    }
    return new PinnedHostBuffer(ptr, byteLength, ctx);
  }

  /** Allocates pinned memory holding a copy of `data`. */
  static from(data: HostData, options: PinnedOptions = {}): PinnedHostBuffer {
    const { byteLength } = hostBytes('PinnedHostBuffer.from', data);
    const buf = PinnedHostBuffer.alloc(byteLength, options);
    const src = isArrayBuffer(data) ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    buf.array(Uint8Array).set(src);
    return buf;
  }

  /** @internal the host address */
  get hostAddress(): number {
    this.assertOpen();
    return this.address;
  }

  /** The device address of this memory (kernels can read and write it directly). */
  get devicePointer(): drv.CUdeviceptr {
    this.assertOpen();
    if (this.address === 0) return 0 as drv.CUdeviceptr;
    if (this.device === undefined) {
      drv.call(this.context, 'cuMemHostGetDevicePointer', drv.out64, this.address, 0);
      this.device = drv.outNumber() as drv.CUdeviceptr;
    }
    return this.device;
  }

  /** A zero-copy TypedArray over the pinned memory, valid until close() (do not use it after). */
  array<T extends ArrayBufferView>(ctor: TypedArrayConstructor<T> = Uint8Array as unknown as TypedArrayConstructor<T>): T {
    this.assertOpen();
    const C = elementType<T>('PinnedHostBuffer.array', ctor);
    if (this.byteLength === 0) return new C(0);
    return new C(koffi.view(this.address, this.byteLength), 0, Math.floor(this.byteLength / C.BYTES_PER_ELEMENT));
  }
}
