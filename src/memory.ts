// Memory: DeviceBuffer (synchronous or stream-ordered), ManagedBuffer, PinnedHostBuffer, MemoryPool.
// Every copy is bounds-checked (RangeError) before the driver is called. Stream-ordered buffers are freed
// with cuMemFreeAsync on the stream that allocated them (the buffer keeps that stream alive).
// Zero-copy host views (pinned, managed) are external ArrayBuffers over native memory; V8 cannot detach
// them, so once a view was handed out the native free waits until that view is garbage-collected:
// closing never leaves a live TypedArray over freed memory.
import { isArrayBuffer, isDataView, type NativeFunction } from './runtime';
import koffi from 'koffi';
import * as cu from '../generated/13.0/driver';
import * as raw from '../generated/13.0/driver/raw';
import { Context, callBound, contextOf } from './context';
import { Resource, assertMayBlock, checkSize, deferError, whenNoHostFuncs } from './lifecycle';
import { Stream, streamHandle, type StreamLike } from './stream';

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

/** A TypedArray class (Float32Array, Uint8Array, …): picks the element type of toArray() and array(). */
export interface TypedArrayConstructor<T extends ArrayBufferView> {
  /** A view of `length` elements of `buffer` from byte `byteOffset`. */
  new (buffer: ArrayBuffer, byteOffset?: number, length?: number): T;
  /** A new zero-filled array of `length` elements. */
  new (length: number): T;
  /** Element size in bytes. */
  readonly BYTES_PER_ELEMENT: number;
}

function hostBytes(data: HostData): { ptr: ArrayBufferView | ArrayBuffer; byteLength: number } {
  if (isArrayBuffer(data)) return { ptr: data, byteLength: data.byteLength };
  if (ArrayBuffer.isView(data)) {
    const view = isDataView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : data;
    return { ptr: view, byteLength: data.byteLength };
  }
  throw new TypeError('expected a TypedArray, DataView, Buffer, ArrayBuffer, DeviceBuffer or PinnedHostBuffer');
}

const viewFrees = new FinalizationRegistry<() => void>((free) => {
  try {
    free();
  } catch (e) {
    deferError(e);
  }
});

/** Frees now, or when the zero-copy view (if one was handed out) is collected. */
function freeAfterView(view: ArrayBuffer | undefined, free: () => void): void {
  if (view === undefined) whenNoHostFuncs(free);
  else viewFrees.register(view, () => whenNoHostFuncs(free));
}

function rangeCheck(what: string, offset: number, byteLength: number, capacity: number): void {
  checkSize(`${what} offset`, offset);
  checkSize(`${what} byteLength`, byteLength);
  if (offset + byteLength > capacity) {
    throw new RangeError(`${what}: bytes [${offset}, ${offset + byteLength}) are out of bounds of a ${capacity}-byte buffer`);
  }
}

const u64 = new BigUint64Array(1);
const allocOut = new BigUint64Array(1);
const allocOutWords = new Uint32Array(allocOut.buffer);

// Stream-ordered allocation and free take their device from the stream, not from the current
// context, so the cached binding is enough (callBound re-binds when it was stale). C functions held
// here with a preallocated slot: this pair is a benchmarked hot path.
let cuMemAllocAsync: NativeFunction | undefined;
let cuMemAllocFromPoolAsync: NativeFunction | undefined;
let cuMemFreeAsync: NativeFunction | undefined;

function allocAsyncCall(bytes: number, h: cu.CUstream, pool: MemoryPool | undefined): number {
  return pool
    ? (cuMemAllocFromPoolAsync ??= raw.binder.native('cuMemAllocFromPoolAsync'))(allocOut, bytes, pool.handle, h)
    : (cuMemAllocAsync ??= raw.binder.native('cuMemAllocAsync'))(allocOut, bytes, h);
}

function allocAsync(ctx: Context, bytes: number, h: cu.CUstream, pool: MemoryPool | undefined): cu.CUdeviceptr {
  const status = callBound(ctx, () => allocAsyncCall(bytes, h, pool));
  if (status !== 0) throw ctx.fail(new cu.DriverError(pool ? 'cuMemAllocFromPoolAsync' : 'cuMemAllocAsync', status));
  return (allocOutWords[1] * 0x100000000 + allocOutWords[0]) as cu.CUdeviceptr;
}

function freeAsync(ctx: Context, ptr: cu.CUdeviceptr, h: cu.CUstream): void {
  if (ctx.unusable) return; // the memory went with the context
  const free = (cuMemFreeAsync ??= raw.binder.native('cuMemFreeAsync'));
  const status = callBound(ctx, () => free(ptr, h));
  if (status !== 0) throw ctx.fail(new cu.DriverError('cuMemFreeAsync', status));
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

/**
 * A memory pool for stream-ordered allocation (CUmemoryPool): buffers allocated from it on a stream
 * (alloc(), or DeviceBuffer.alloc with `pool`) come from it and return to it when freed. create() makes
 * one this object owns (close() destroys it); default() wraps a device's default pool.
 */
export class MemoryPool extends Resource {
  /** The driver handle (CUmemoryPool). */
  readonly handle: cu.CUmemoryPool;
  /** The context made current for the pool's calls. */
  readonly context: Context;
  /** True when close() destroys the pool (made by create()); false for default(). */
  readonly owned: boolean;

  private constructor(handle: cu.CUmemoryPool, context: Context, owned: boolean) {
    super(owned ? 'MemoryPool' : 'MemoryPool (default)', owned ? () => whenNoHostFuncs(() => {
      if (!context.bindForFree()) return;
      cu.cuMemPoolDestroy(handle);
    }) : undefined, [context]);
    this.handle = handle;
    this.context = context;
    this.owned = owned;
  }

  /** The device's current default pool (not owned: close() does not destroy it). */
  static default(device?: number, context?: Context): MemoryPool {
    const ctx = context ?? (device !== undefined ? Context.primary(device) : contextOf(undefined));
    ctx.bind();
    return new MemoryPool(cu.cuDeviceGetDefaultMemPool(cu.cuDeviceGet(device ?? ctx.device)), ctx, false);
  }

  /** Creates a pool of device memory on `options.device` (cuMemPoolCreate). */
  static create(options: PoolOptions = {}): MemoryPool {
    const ctx = options.context ?? (options.device !== undefined ? Context.primary(options.device) : contextOf(undefined));
    ctx.bind();
    const props = new DataView(new ArrayBuffer(88));
    props.setInt32(0, cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED, true);
    props.setInt32(4, 0, true); // handleTypes: none
    props.setInt32(8, cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, true);
    props.setInt32(12, options.device ?? ctx.device, true);
    props.setBigUint64(24, BigInt(checkSize('maxSize', options.maxSize ?? 0)), true);
    const pool = new MemoryPool(cu.cuMemPoolCreate(new Uint8Array(props.buffer)), ctx, true);
    if (options.releaseThreshold !== undefined) pool.releaseThreshold = options.releaseThreshold;
    return pool;
  }

  private attr(a: cu.CUmemPool_attribute): number {
    this.assertOpen();
    this.context.bind();
    cu.cuMemPoolGetAttribute(this.handle, a, u64);
    return Number(u64[0]);
  }

  /** Bytes the pool keeps reserved at synchronization points instead of releasing them to the OS. */
  get releaseThreshold(): number {
    return this.attr(cu.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD);
  }

  /** Sets the release threshold in bytes; `Infinity` keeps everything reserved. */
  set releaseThreshold(bytes: number) {
    this.assertOpen();
    this.context.bind();
    u64[0] = BigInt(checkSize('releaseThreshold', bytes === Infinity ? Number.MAX_SAFE_INTEGER : bytes));
    cu.cuMemPoolSetAttribute(this.handle, cu.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64);
  }

  /** Bytes currently reserved from the OS. */
  get reservedMemory(): number {
    return this.attr(cu.CUmemPool_attribute.CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
  }

  /** Bytes currently handed out. */
  get usedMemory(): number {
    return this.attr(cu.CUmemPool_attribute.CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
  }

  /** Releases reserved memory above `minBytesToKeep`. */
  trim(minBytesToKeep = 0): void {
    this.assertOpen();
    this.context.bind();
    cu.cuMemPoolTrimTo(this.handle, checkSize('minBytesToKeep', minBytesToKeep));
  }

  /** Stream-ordered allocation from this pool. */
  alloc(byteLength: number, stream: StreamLike): DeviceBuffer {
    return DeviceBuffer.alloc(byteLength, { stream, pool: this });
  }

  /** @internal */
  check(): void {
    this.assertOpen();
  }
}

/** Options of {@link DeviceBuffer.alloc} and {@link DeviceBuffer.from}. */
export interface AllocOptions {
  /** Allocate stream-ordered on this stream (cuMemAllocAsync), freed there with cuMemFreeAsync. */
  stream?: StreamLike;
  /** Allocate from this pool (needs `stream`). */
  pool?: MemoryPool;
  /** The context to allocate in (default: the pool's, else the stream's, else the current one, else device 0's primary context). */
  context?: Context;
}

/**
 * Device memory of one context: allocated with cuMemAlloc, or stream-ordered (cuMemAllocAsync, freed
 * with cuMemFreeAsync on the same stream) when a stream is given. Free with close() or `using`.
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
  protected constructor(kind: string, address: number, byteLength: number, context: Context, destroy: (() => void) | undefined, stream?: Stream, pool?: MemoryPool, parent?: DeviceBuffer) {
    super(kind, destroy, parent ? [] : [context, stream, pool]);
    this.address = address;
    this.byteLength = byteLength;
    this.context = context;
    this.stream = stream;
    this.pool = pool;
    this.parent = parent;
  }

  /** Allocates `byteLength` bytes of device memory (stream-ordered when `stream` is given). */
  static alloc(byteLength: number, options: AllocOptions = {}): DeviceBuffer {
    checkSize('byteLength', byteLength);
    const ctx = options.context ?? options.pool?.context ?? (options.stream instanceof Stream ? options.stream.context : undefined) ?? contextOf(undefined);
    ctx.check();
    if (options.pool && options.stream === undefined) throw new TypeError('allocating from a MemoryPool needs a stream');
    if (options.stream !== undefined) {
      const stream = Stream.wrap(options.stream, ctx);
      stream.check();
      const pool = options.pool;
      pool?.check();
      const h = stream.handle;
      const ptr = byteLength > 0 ? allocAsync(ctx, byteLength, h, pool) : (0 as cu.CUdeviceptr);
      return new DeviceBuffer('DeviceBuffer', ptr, byteLength, ctx, () => {
        if (ptr !== 0) freeAsync(ctx, ptr, h);
      }, stream, pool);
    }
    ctx.bind();
    let ptr = 0 as cu.CUdeviceptr;
    try {
      if (byteLength > 0) ptr = cu.cuMemAlloc(byteLength);
    } catch (e) {
      throw ctx.fail(e);
    }
    return new DeviceBuffer('DeviceBuffer', ptr, byteLength, ctx, () => {
      if (ptr === 0) return;
      whenNoHostFuncs(() => {
        if (!ctx.bindForFree()) return;
        cu.cuMemFree(ptr);
      });
    });
  }

  /** Allocates a buffer holding a copy of `data`. */
  static from(data: HostData, options: AllocOptions = {}): DeviceBuffer {
    const { byteLength } = hostBytes(data);
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
  get ptr(): cu.CUdeviceptr {
    this.check();
    return this.address as cu.CUdeviceptr;
  }

  /** A view of bytes [begin, end) sharing this buffer's memory and life (closing the owner closes views). */
  subarray(begin = 0, end = this.byteLength): DeviceBuffer {
    this.check();
    if (begin < 0) begin = Math.max(0, this.byteLength + begin);
    if (end < 0) end = Math.max(0, this.byteLength + end);
    checkSize('begin', begin);
    checkSize('end', end);
    if (begin > this.byteLength || end > this.byteLength) throw new RangeError(`subarray(${begin}, ${end}) out of bounds of a ${this.byteLength}-byte buffer`);
    const len = Math.max(0, end - begin);
    return new DeviceBuffer('DeviceBuffer (view)', this.address + begin, len, this.context, undefined, this.stream, this.pool, this.parent ?? this);
  }

  private streamFor(options: CopyOptions | undefined): cu.CUstream | undefined {
    if (options?.stream !== undefined) return streamHandle(options.stream);
    if (this.stream) {
      this.stream.check();
      return this.stream.handle;
    }
    return undefined;
  }

  /** Copies `src` (host data, a device buffer or a pinned buffer) into this buffer at `offset`. */
  copyFrom(src: HostData | DeviceBuffer | PinnedHostBuffer, options?: CopyOptions): this {
    this.check();
    const offset = options?.offset ?? 0;
    const dst = (this.address + offset) as cu.CUdeviceptr;
    const s = this.streamFor(options);
    if (src instanceof DeviceBuffer) {
      const n = options?.byteLength ?? src.byteLength;
      rangeCheck('copyFrom (source)', 0, n, src.byteLength);
      rangeCheck('copyFrom', offset, n, this.byteLength);
      const from = src.ptr;
      if (n === 0) return this;
      this.context.bind();
      try {
        if (s === undefined) {
          assertMayBlock('DeviceBuffer.copyFrom() without a stream');
          cu.cuMemcpyDtoD(dst, from, n);
        } else cu.cuMemcpyDtoDAsync(dst, from, n, s);
      } catch (e) {
        throw this.context.fail(e);
      }
      return this;
    }
    const pinned = src instanceof PinnedHostBuffer;
    const host = pinned ? { ptr: src.hostAddress, byteLength: src.byteLength } : hostBytes(src);
    const n = options?.byteLength ?? host.byteLength;
    rangeCheck('copyFrom (source)', 0, n, host.byteLength);
    rangeCheck('copyFrom', offset, n, this.byteLength);
    if (n === 0) return this;
    if (!pinned || s === undefined) assertMayBlock('DeviceBuffer.copyFrom() from pageable memory or without a stream');
    this.context.bind();
    try {
      if (s === undefined) cu.cuMemcpyHtoD(dst, host.ptr, n);
      else cu.cuMemcpyHtoDAsync(dst, host.ptr, n, s);
    } catch (e) {
      throw this.context.fail(e);
    }
    return this;
  }

  /** Copies bytes [offset, offset + byteLength) of this buffer into `dst`. */
  copyTo(dst: HostData | DeviceBuffer | PinnedHostBuffer, options?: CopyOptions): typeof dst {
    this.check();
    const offset = options?.offset ?? 0;
    const s = this.streamFor(options);
    const dstLength = dst instanceof DeviceBuffer || dst instanceof PinnedHostBuffer ? dst.byteLength : hostBytes(dst).byteLength;
    checkSize('copyTo offset', offset);
    // An offset at or past the end leaves nothing to copy: that is a caller's bug, not an empty copy.
    if (options?.byteLength === undefined && offset >= this.byteLength && dstLength > 0) {
      throw new RangeError(`copyTo: offset ${offset} is at or past the end of a ${this.byteLength}-byte buffer`);
    }
    const n = options?.byteLength ?? Math.min(dstLength, this.byteLength - offset);
    rangeCheck('copyTo', offset, n, this.byteLength);
    rangeCheck('copyTo (destination)', 0, n, dstLength);
    const src = (this.address + offset) as cu.CUdeviceptr;
    if (dst instanceof DeviceBuffer) {
      const to = dst.ptr;
      if (n === 0) return dst;
      this.context.bind();
      try {
        if (s === undefined) {
          assertMayBlock('DeviceBuffer.copyTo() without a stream');
          cu.cuMemcpyDtoD(to, src, n);
        } else cu.cuMemcpyDtoDAsync(to, src, n, s);
      } catch (e) {
        throw this.context.fail(e);
      }
      return dst;
    }
    const pinned = dst instanceof PinnedHostBuffer;
    const host = pinned ? dst.hostAddress : hostBytes(dst).ptr;
    if (n === 0) return dst;
    if (!pinned || s === undefined) assertMayBlock('DeviceBuffer.copyTo() into pageable memory or without a stream');
    this.context.bind();
    try {
      if (s === undefined) cu.cuMemcpyDtoH(host, src, n);
      else cu.cuMemcpyDtoHAsync(host, src, n, s);
    } catch (e) {
      throw this.context.fail(e);
    }
    return dst;
  }

  /** Copies the whole buffer into a new TypedArray (synchronous with respect to the host). */
  toArray<T extends ArrayBufferView>(ctor: TypedArrayConstructor<T>, options?: { stream?: StreamLike }): T {
    this.check();
    if (this.byteLength % ctor.BYTES_PER_ELEMENT !== 0) throw new RangeError(`${this.byteLength} bytes is not a whole number of ${ctor.BYTES_PER_ELEMENT}-byte elements`);
    const out = new ctor(this.byteLength / ctor.BYTES_PER_ELEMENT);
    this.copyTo(out, { stream: options?.stream });
    return out;
  }

  /**
   * Fills `count` elements of `width` bytes (1, 2 or 4) starting at byte `offset` with `value`.
   * Defaults: width 1, the whole buffer.
   */
  memset(value: number, options?: { stream?: StreamLike; width?: 1 | 2 | 4; offset?: number; count?: number }): this {
    this.check();
    const width = options?.width ?? 1;
    if (width !== 1 && width !== 2 && width !== 4) throw new TypeError(`memset width must be 1, 2 or 4, got ${String(width)}`);
    const offset = options?.offset ?? 0;
    checkSize('memset offset', offset);
    if (offset % width !== 0) throw new RangeError(`memset offset ${offset} is not a multiple of width ${width}`);
    const count = options?.count ?? Math.floor((this.byteLength - offset) / width);
    rangeCheck('memset', offset, count * width, this.byteLength);
    if (!Number.isInteger(value)) throw new TypeError(`memset value must be an integer, got ${value}`);
    const v = width === 4 ? value >>> 0 : value & (width === 2 ? 0xffff : 0xff);
    if (count === 0) return this;
    const dst = (this.address + offset) as cu.CUdeviceptr;
    const s = this.streamFor(options);
    this.context.bind();
    try {
      if (s === undefined) {
        assertMayBlock('DeviceBuffer.memset() without a stream');
        if (width === 1) cu.cuMemsetD8(dst, v, count);
        else if (width === 2) cu.cuMemsetD16(dst, v, count);
        else cu.cuMemsetD32(dst, v, count);
      } else if (width === 1) cu.cuMemsetD8Async(dst, v, count, s);
      else if (width === 2) cu.cuMemsetD16Async(dst, v, count, s);
      else cu.cuMemsetD32Async(dst, v, count, s);
    } catch (e) {
      throw this.context.fail(e);
    }
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

/** Unified memory (cuMemAllocManaged): usable from the device and, through `array()`, from the host. */
export class ManagedBuffer extends DeviceBuffer {
  private view: ArrayBuffer | undefined;

  private constructor(address: number, byteLength: number, context: Context, holder: { view?: ArrayBuffer }) {
    super('ManagedBuffer', address, byteLength, context, () => {
      if (address === 0) return;
      const view = holder.view;
      holder.view = undefined;
      freeAfterView(view, () => {
        if (!context.bindForFree()) return;
        cu.cuMemFree(address as cu.CUdeviceptr);
      });
    });
    this.holder = holder;
  }
  private readonly holder: { view?: ArrayBuffer };

  /**
   * Allocates `byteLength` bytes of managed memory (cuMemAllocManaged) in `options.context` (default:
   * the current one). It is attached globally, or to the host only with `hostOnlyAttach`.
   */
  static override alloc(byteLength: number, options: { context?: Context; hostOnlyAttach?: boolean } = {}): ManagedBuffer {
    checkSize('byteLength', byteLength);
    const ctx = contextOf(options.context);
    ctx.check();
    ctx.bind();
    const flags = options.hostOnlyAttach ? cu.CUmemAttach_flags.CU_MEM_ATTACH_HOST : cu.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL;
    const ptr = byteLength > 0 ? cu.cuMemAllocManaged(byteLength, flags) : 0;
    return new ManagedBuffer(ptr, byteLength, ctx, {});
  }

  /** A zero-copy TypedArray over the managed memory (synchronize the device before reading kernel results). */
  array<T extends ArrayBufferView>(ctor: TypedArrayConstructor<T> = Uint8Array as unknown as TypedArrayConstructor<T>): T {
    this.check();
    if (this.byteLength === 0) return new ctor(0);
    this.holder.view ??= koffi.view(this.address, this.byteLength);
    return new ctor(this.holder.view, 0, Math.floor(this.byteLength / ctor.BYTES_PER_ELEMENT));
  }

  /** Prefetches to the device (default: this buffer's) or to the host. */
  prefetch(to: 'device' | 'host', stream?: StreamLike): this {
    this.check();
    this.context.bind();
    const location = to === 'host' ? { type: cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST, id: 0 } : { type: cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, id: this.context.device };
    cu.cuMemPrefetchAsync(this.address as cu.CUdeviceptr, this.byteLength, location, 0, streamHandle(stream));
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

/** Page-locked host memory mapped into the device address space; `array()` is a zero-copy view. */
export class PinnedHostBuffer extends Resource {
  /** Size in bytes. */
  readonly byteLength: number;
  /** The context the memory was allocated in. */
  readonly context: Context;
  private readonly address: number;
  private readonly holder: { view?: ArrayBuffer };
  private device: cu.CUdeviceptr | undefined;

  private constructor(address: number, byteLength: number, context: Context, holder: { view?: ArrayBuffer }) {
    super('PinnedHostBuffer', () => {
      if (address === 0) return;
      const view = holder.view;
      holder.view = undefined;
      freeAfterView(view, () => {
        if (!context.bindForFree()) return;
        cu.cuMemFreeHost(address);
      });
    }, [context]);
    this.address = address;
    this.byteLength = byteLength;
    this.context = context;
    this.holder = holder;
  }

  /** Allocates `byteLength` bytes of page-locked host memory (cuMemHostAlloc, portable and device-mapped). */
  static alloc(byteLength: number, options: PinnedOptions = {}): PinnedHostBuffer {
    checkSize('byteLength', byteLength);
    const ctx = contextOf(options.context);
    ctx.check();
    ctx.bind();
    let flags = cu.CU_MEMHOSTALLOC_PORTABLE | cu.CU_MEMHOSTALLOC_DEVICEMAP;
    if (options.writeCombined) flags |= cu.CU_MEMHOSTALLOC_WRITECOMBINED;
    const ptr = byteLength > 0 ? cu.cuMemHostAlloc(byteLength, flags) : 0;
    return new PinnedHostBuffer(ptr, byteLength, ctx, {});
  }

  /** Allocates pinned memory holding a copy of `data`. */
  static from(data: HostData, options: PinnedOptions = {}): PinnedHostBuffer {
    const { byteLength } = hostBytes(data);
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
  get devicePointer(): cu.CUdeviceptr {
    this.assertOpen();
    if (this.address === 0) return 0 as cu.CUdeviceptr;
    if (this.device === undefined) {
      this.context.bind();
      this.device = cu.cuMemHostGetDevicePointer(this.address, 0);
    }
    return this.device;
  }

  /** A zero-copy TypedArray over the pinned memory. */
  array<T extends ArrayBufferView>(ctor: TypedArrayConstructor<T> = Uint8Array as unknown as TypedArrayConstructor<T>): T {
    this.assertOpen();
    if (this.byteLength === 0) return new ctor(0);
    this.holder.view ??= koffi.view(this.address, this.byteLength);
    return new ctor(this.holder.view, 0, Math.floor(this.byteLength / ctor.BYTES_PER_ELEMENT));
  }
}

