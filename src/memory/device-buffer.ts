// DeviceBuffer: device memory of one context, allocated with cuMemAlloc, or stream-ordered (the caching
// allocator, allocator.ts, unless a pool is given or the cache is off) and then freed on the stream that
// allocated it (the buffer keeps that stream alive) unless another deallocation stream is chosen. Every
// copy is bounds-checked (RangeError) before the driver is called. Views share their owner's memory and life.
import { koffi } from '../../support';
import * as drv from '../driver';
import { Context, contextOf } from '../context';
import { checkKeys, describe } from '../describe';
import { ClosedObjectError } from '../errors';
import { Core, Resource, assertMayBlock, deferredPending, whenNoHostFuncs } from '../lifecycle';
import { Stream, toStream, type StreamLike } from '../stream';
import { noteUse } from '../graph/capture';
import { CachedBlockCore, allocCached, allocUncached, cachingEnabled, driverFree, sizeClass } from './allocator';
import {
  addressArg,
  checkedSize,
  elementType,
  hostBytes,
  optionsObject,
  rangeCheck,
  type CopyOptions,
  type HostData,
  type MemsetOptions,
  type TypedArrayConstructor,
} from './arguments';
import { memoryPoolBrand, pinnedHostBufferBrand } from './brands';
import { stageToDevice, stageToHost, stages } from './staging';
import type { MemoryPool } from './memory-pool';
import type { PinnedHostBuffer } from './pinned-host-buffer';
import { SEALED, type Sealed, checkSealed } from '../sealed';

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
 * The life-cycle core of a stream-ordered buffer outside the cache (a pool's, or uncached): frees with
 * cuMemFreeAsync on its stream, which setDeallocationStream may change. @internal
 */
export class StreamFreeCore extends Core {
  constructor(
    kind: string,
    private readonly ctx: Context,
    private readonly ptr: number,
    /** The stream handle the memory is freed on. */
    public h: number,
  ) {
    super(kind, undefined);
  }

  protected override destroyNative(): void {
    driverFree(this.ctx, this.ptr, this.h);
  }
}

/** Deallocation streams chosen with setDeallocationStream (absent: the allocating stream). */
const deallocationStreams = new WeakMap<DeviceBuffer, Stream>();
/** What wrapped buffers keep alive (their `owner`). */
const owners = new WeakMap<DeviceBuffer, unknown>();

/** Options of {@link DeviceBuffer.wrap}. */
export interface WrapBufferOptions {
  /**
   * What owns the memory, kept alive as long as the wrapper: a Resource (a DeviceBuffer, a
   * VirtualMemoryResource, …: its free waits until the wrapper is closed or collected) or any object.
   */
  owner?: unknown;
  /** The context the memory belongs to (default: the current one). */
  context?: Context;
  /** True when the memory is host-accessible too (pinned or managed), enabling `array()`. Default false. */
  hostAccessible?: boolean;
}

/**
 * Device memory of one context: allocated with cuMemAlloc, or stream-ordered (the caching allocator,
 * freed on the same stream) when a stream is given. Free with close() or `using`.
 * @example
 * ```ts
 * import { DeviceBuffer, Stream } from 'cuda-ts/objects';
 *
 * using stream = Stream.create();
 * using x = DeviceBuffer.from(new Float32Array([1, 2, 3, 4])); // allocated and uploaded
 * using y = DeviceBuffer.alloc(x.byteLength, { stream }); // stream-ordered, freed on `stream`
 * y.copyFrom(x, { stream }); // device to device, asynchronous
 * y.memset(0, { stream, width: 4, count: 1 }); // the first float zeroed
 * console.log(y.toArray(Float32Array, { stream })); // Float32Array [0, 2, 3, 4]
 * ```
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
   * @internal
   * @param kind the name used in messages
   * @param destroy frees the memory; undefined for a view
   * @param parent the buffer a view is made from
   */
  protected constructor(
    seal: Sealed,
    kind: string,
    address: number,
    byteLength: number,
    context: Context,
    destroy: (() => void) | Core | undefined,
    stream?: Stream,
    pool?: MemoryPool,
    parent?: DeviceBuffer,
  ) {
    checkSealed(seal, 'DeviceBuffer', 'DeviceBuffer.alloc(), from() or wrap()');
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

  /** A pool's stream-ordered block (freed by `core` on its stream). @internal use MemoryPool.alloc */
  static adoptPoolBlock(address: number, byteLength: number, context: Context, core: Core, stream: Stream, pool: MemoryPool): DeviceBuffer {
    return new DeviceBuffer(SEALED, 'DeviceBuffer', address, byteLength, context, core, stream, pool);
  }

  /**
   * Allocates `byteLength` bytes of device memory (stream-ordered when `stream` is given).
   * @param byteLength Bytes to allocate (a non-negative integer; 0 gives an empty buffer).
   * @param options `stream` (allocate stream-ordered on it, through the caching allocator, and free there), `pool` (allocate from this MemoryPool; needs `stream`), `cache` (false: bypass the caching allocator; default true) and `context` (default: the pool's, else the stream's, else the current one). Default: synchronous cuMemAlloc in the current context.
   */
  static alloc(byteLength: number, options?: AllocOptions): DeviceBuffer {
    // The hot path (a cached stream-ordered block on an open Stream, nothing else asked) first; anything
    // unusual falls through to the checks below, which throw the precise error.
    if (options !== undefined && options !== null) {
      const st = options.stream;
      if (
        st instanceof Stream &&
        options.pool === undefined &&
        options.context === undefined &&
        options.cache === undefined &&
        st.capture === undefined &&
        st.hostError === undefined &&
        typeof byteLength === 'number' &&
        byteLength > 0 &&
        byteLength <= Number.MAX_SAFE_INTEGER &&
        cachingEnabled()
      ) {
        const ctx = st.context;
        if (!st.core.closed && !ctx.core.closed && ctx.unusable === undefined && Number.isInteger(byteLength) && !deferredPending()) {
          const h = st.handle;
          const cls = sizeClass(byteLength);
          const ptr = allocCached(ctx, cls, h, 'DeviceBuffer.alloc');
          return new DeviceBuffer(SEALED, 'DeviceBuffer', ptr, byteLength, ctx, new CachedBlockCore('DeviceBuffer', ctx, ptr, cls, h), st);
        }
      }
    }
    if (typeof byteLength !== 'number' || !Number.isSafeInteger(byteLength) || byteLength < 0) checkedSize('DeviceBuffer.alloc: byteLength', byteLength);
    if (options === undefined) return DeviceBuffer.allocSync(byteLength, Context.current());
    if (typeof options !== 'object' || options === null) throw new TypeError(`DeviceBuffer.alloc: options must be an object, got ${describe(options)}`);
    checkKeys('DeviceBuffer.alloc', options, ['stream', 'pool', 'cache', 'context']);
    const stream = options.stream instanceof Stream ? options.stream : toStream(options.stream, 'DeviceBuffer.alloc: stream');
    const pool = options.pool;
    if (pool !== undefined && !memoryPoolBrand.has(pool)) throw new TypeError(`DeviceBuffer.alloc: pool must be a MemoryPool, got ${describe(pool)}`);
    if (options.cache !== undefined && typeof options.cache !== 'boolean')
      throw new TypeError(`DeviceBuffer.alloc: cache must be a boolean, got ${describe(options.cache)}`);
    const ctx =
      options.context !== undefined ? contextOf(options.context, 'DeviceBuffer.alloc: context') : (pool?.context ?? stream?.context ?? Context.current());
    if (stream === undefined) {
      if (pool) throw new TypeError('DeviceBuffer.alloc: allocating from a MemoryPool needs a stream');
      return DeviceBuffer.allocSync(byteLength, ctx);
    }
    stream.check();
    ctx.check();
    if (stream.context !== ctx) throw new TypeError(`DeviceBuffer.alloc: the stream belongs to ${String(stream.context)}, the allocation to ${String(ctx)}`);
    const h = stream.handle;
    if (byteLength === 0) return new DeviceBuffer(SEALED, 'DeviceBuffer', 0, 0, ctx, undefined, stream);
    if (pool !== undefined) {
      pool.check();
      return pool.allocOnStream(byteLength, ctx, stream, h);
    }
    // The caching allocator, except while the stream captures (the allocation becomes a graph node then).
    if (options.cache !== false && cachingEnabled() && stream.capture === undefined) {
      const cls = sizeClass(byteLength);
      const ptr = allocCached(ctx, cls, h, 'DeviceBuffer.alloc');
      return new DeviceBuffer(SEALED, 'DeviceBuffer', ptr, byteLength, ctx, new CachedBlockCore('DeviceBuffer', ctx, ptr, cls, h), stream);
    }
    const ptr = allocUncached(ctx, byteLength, h);
    return new DeviceBuffer(SEALED, 'DeviceBuffer', ptr, byteLength, ctx, new StreamFreeCore('DeviceBuffer', ctx, ptr, h), stream);
  }

  private static allocSync(byteLength: number, ctx: Context): DeviceBuffer {
    ctx.check();
    if (byteLength === 0) return new DeviceBuffer(SEALED, 'DeviceBuffer', 0, 0, ctx, undefined);
    drv.allocate(ctx, 'cuMemAlloc', drv.out64, byteLength);
    const ptr = drv.outNumber();
    return new DeviceBuffer(SEALED, 'DeviceBuffer', ptr, byteLength, ctx, () => whenNoHostFuncs(() => drv.release(ctx, 'cuMemFree', ptr)));
  }

  /**
   * A DeviceBuffer over memory allocated elsewhere (another library, the typed layer, a
   * VirtualMemoryResource): it never frees the memory, and keeps `options.owner` alive while it lives.
   * Copies, memsets, views and kernel arguments work as on any DeviceBuffer.
   * @param pointer The device address of the memory (a number or bigint).
   * @param byteLength Bytes from `pointer` that the wrapper may touch.
   * @param options `owner` (kept alive as long as the wrapper: the object or Resource that frees the memory), `context` (the memory's context; default: the current one) and `hostAccessible` (true for pinned or managed memory, enabling array(); default false).
   */
  static wrap(pointer: number | bigint, byteLength: number, options: WrapBufferOptions = {}): DeviceBuffer {
    const address = addressArg('DeviceBuffer.wrap: pointer', pointer);
    checkedSize('DeviceBuffer.wrap: byteLength', byteLength);
    const o = optionsObject('DeviceBuffer.wrap', options) ?? {};
    checkKeys('DeviceBuffer.wrap', o, ['owner', 'context', 'hostAccessible']);
    if (address === 0 && byteLength > 0) throw new RangeError(`DeviceBuffer.wrap: a null pointer cannot hold ${byteLength} bytes`);
    if (address + byteLength > Number.MAX_SAFE_INTEGER) throw new RangeError('DeviceBuffer.wrap: pointer + byteLength is past 2**53');
    if (o.hostAccessible !== undefined && typeof o.hostAccessible !== 'boolean')
      throw new TypeError(`DeviceBuffer.wrap: hostAccessible must be a boolean, got ${describe(o.hostAccessible)}`);
    const owner = o.owner;
    if (owner instanceof Resource && owner.closed) throw new ClosedObjectError('DeviceBuffer.wrap', owner.core.kind);
    const ctx = contextOf(o.context, 'DeviceBuffer.wrap: context');
    ctx.check();
    // A no-op destroy when an owner Resource is held: the wrapper is then registered for GC, so a
    // forgotten wrapper still lets its owner go.
    const kind = o.hostAccessible ? 'DeviceBuffer (wrapped, host-accessible)' : 'DeviceBuffer (wrapped)';
    const buf = new DeviceBuffer(SEALED, kind, address, byteLength, ctx, owner instanceof Resource ? () => undefined : undefined);
    if (owner instanceof Resource) buf.core.addParent(owner.core);
    if (owner !== undefined) owners.set(buf, owner);
    return buf;
  }

  /** True when the memory is reachable from the host too (managed memory, a pinned-host pool's, or wrapped as such): `array()` works. */
  get hostAccessible(): boolean {
    const owner = this.parent ?? this;
    return owner.pool !== undefined ? owner.pool.memoryType !== 'device' : owner.core.kind === 'DeviceBuffer (wrapped, host-accessible)';
  }

  /**
   * A zero-copy TypedArray over host-accessible memory (see {@link DeviceBuffer.hostAccessible}):
   * synchronize before reading what kernels wrote. Valid until close(): using it after reads freed memory.
   * Device memory throws a TypeError (copy it with toArray()).
   * @param ctor The element type of the view, a TypedArray class such as Float32Array (default Uint8Array); the byte length must be a multiple of its element size.
   */
  array<T extends ArrayBufferView>(ctor: TypedArrayConstructor<T> = Uint8Array as unknown as TypedArrayConstructor<T>): T {
    this.check();
    const C = elementType<T>(`${this.core.kind}.array`, ctor);
    if (!this.hostAccessible)
      throw new TypeError(
        `DeviceBuffer.array: this is device memory, not host-accessible: copy it with toArray(), or allocate from MemoryPool.pinned() / MemoryPool.managed()`,
      );
    if (this.byteLength === 0) return new C(0);
    return new C(koffi.view(this.address, this.byteLength), 0, Math.floor(this.byteLength / C.BYTES_PER_ELEMENT));
  }

  /**
   * The stream this buffer's memory is freed on: the allocating stream unless another was chosen with
   * {@link DeviceBuffer.setDeallocationStream}; undefined for memory freed synchronously (cuMemAlloc,
   * managed allocations) or not freed at all (views, wrapped pointers).
   */
  get deallocationStream(): Stream | undefined {
    if (this.parent !== undefined) return this.parent.deallocationStream;
    if (!(this.core instanceof StreamFreeCore || this.core instanceof CachedBlockCore) && this.byteLength > 0) return undefined;
    return deallocationStreams.get(this) ?? this.stream;
  }

  /**
   * Same as {@link DeviceBuffer.setDeallocationStream}.
   * @param stream The stream to free on, of the buffer's context.
   */
  set deallocationStream(stream: StreamLike) {
    this.setDeallocationStream(stream);
  }

  /**
   * Frees this stream-ordered buffer on `stream` instead of its allocating stream (cuda.core's
   * `set_deallocation_stream`): the free is ordered after the work enqueued on `stream` before close(),
   * so every use of the buffer on other streams must be ordered before that point (an event) by you.
   * The stream must belong to the buffer's context; it is kept alive until the buffer is freed.
   * Only stream-ordered buffers (allocated with a stream or from a pool) can do this: others are freed
   * synchronously and throw a TypeError.
   * @param stream The stream to free on, of the buffer's context (a Stream or a stream-protocol object).
   */
  setDeallocationStream(stream: StreamLike): this {
    this.check();
    if (this.parent !== undefined) throw new TypeError('DeviceBuffer.setDeallocationStream: this is a view: set it on the buffer it was made from');
    if (stream === undefined || stream === null) throw new TypeError('DeviceBuffer.setDeallocationStream: stream is required');
    const s = toStream(stream, 'DeviceBuffer.setDeallocationStream: stream')!;
    if (s.context !== this.context)
      throw new TypeError(`DeviceBuffer.setDeallocationStream: the stream belongs to ${String(s.context)}, the buffer to ${String(this.context)}`);
    const core = this.core;
    if (core instanceof StreamFreeCore || core instanceof CachedBlockCore) core.h = s.handle;
    else if (!(this.stream !== undefined && this.byteLength === 0)) {
      throw new TypeError(
        `DeviceBuffer.setDeallocationStream: only stream-ordered buffers (allocated with a stream or from a MemoryPool) are freed on a stream; this ${core.kind} is freed synchronously`,
      );
    }
    core.hold(s.core);
    deallocationStreams.set(this, s);
    return this;
  }

  /**
   * Allocates a buffer holding a copy of `data`.
   * @param data The bytes to copy: a TypedArray, DataView, Buffer or ArrayBuffer; the buffer gets its byte length.
   * @param options `stream` (allocate stream-ordered on it, through the caching allocator, and free there), `pool` (allocate from this MemoryPool; needs `stream`), `cache` (false: bypass the caching allocator; default true) and `context` (default: the pool's, else the stream's, else the current one).
   */
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

  /**
   * A view of bytes [begin, end) sharing this buffer's memory and life (closing the owner closes views). Negative indices count from the end.
   * @param begin First byte of the view (default 0; negative counts from the end).
   * @param end Byte after the view's last (default: the buffer's end; negative counts from the end).
   */
  subarray(begin = 0, end = this.byteLength): DeviceBuffer {
    this.check();
    for (const [name, v] of [
      ['begin', begin],
      ['end', end],
    ] as const) {
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new TypeError(`DeviceBuffer.subarray: ${name} must be an integer, got ${describe(v)}`);
    }
    if (begin < 0) begin = Math.max(0, this.byteLength + begin);
    if (end < 0) end = Math.max(0, this.byteLength + end);
    if (begin > this.byteLength || end > this.byteLength)
      throw new RangeError(`DeviceBuffer.subarray(${begin}, ${end}): out of bounds of a ${this.byteLength}-byte buffer`);
    const len = Math.max(0, end - begin);
    return new DeviceBuffer(SEALED, 'DeviceBuffer (view)', this.address + begin, len, this.context, undefined, this.stream, this.pool, this.parent ?? this);
  }

  /** The stream of a copy: the option's, else the allocating stream, else undefined (synchronous). */
  private streamFor(where: string, s: unknown): Stream | undefined {
    if (s !== undefined) return s instanceof Stream ? (s.check(), s) : toStream(s, `${where}: stream`);
    if (this.stream) {
      this.stream.check();
      return this.stream;
    }
    return undefined;
  }

  /**
   * Runs a copy or memset: on `s` (registered with a capture in progress), or synchronously: done when
   * this returns (the driver's "synchronous" memsets and device-to-device or pageable-to-device copies
   * are not, so the default stream is waited for; a copy to the host is done on return already).
   */
  private enqueue(
    s: Stream | undefined,
    others: (DeviceBuffer | PinnedHostBuffer | undefined)[],
    syncName: string,
    asyncName: string,
    ...args: unknown[]
  ): void {
    if (s === undefined) {
      if (syncName === 'cuMemcpyDtoH') drv.call(this.context, syncName, ...args);
      else drv.callAndWait(this.context, syncName, ...args);
      return;
    }
    noteUse(s.context, s.handle, ownerOf(this), ...others.map((o) => (o instanceof DeviceBuffer ? ownerOf(o) : o)));
    drv.callOnStream(s.context, s.handle, asyncName, ...args, s.handle);
  }

  /**
   * Copies `src` (host data, a device buffer or a pinned buffer) into this buffer at `offset`.
   * @param src What to copy: host data (a TypedArray, DataView, Buffer or ArrayBuffer), a DeviceBuffer or a PinnedHostBuffer.
   * @param options `stream` (run the copy on it, asynchronously; default: the buffer's allocating stream, else synchronous), `offset` (byte offset into this buffer; default 0) and `byteLength` (bytes to copy; default: all of the source).
   */
  copyFrom(src: HostData | DeviceBuffer | PinnedHostBuffer, options?: CopyOptions): this {
    this.check();
    const o = optionsObject('DeviceBuffer.copyFrom', options);
    // each option read once, before any length is: a getter cannot shrink the source after its length was taken
    const { offset: offsetOption, stream: streamOption, byteLength: lengthOption } = (o ?? {}) as Record<string, unknown>;
    const offset = checkedSize('DeviceBuffer.copyFrom: offset', offsetOption ?? 0);
    const dst = this.address + offset;
    const s = this.streamFor('DeviceBuffer.copyFrom', streamOption);
    if (src instanceof DeviceBuffer) {
      const n = checkedSize('DeviceBuffer.copyFrom: byteLength', lengthOption ?? src.byteLength);
      rangeCheck('DeviceBuffer.copyFrom (source)', 0, n, src.byteLength);
      rangeCheck('DeviceBuffer.copyFrom', offset, n, this.byteLength);
      const from = src.ptr;
      if (n === 0) return this;
      if (s === undefined) assertMayBlock('DeviceBuffer.copyFrom() without a stream');
      this.enqueue(s, [src], 'cuMemcpyDtoD', 'cuMemcpyDtoDAsync', dst, from, n);
      return this;
    }
    const pinned = pinnedHostBufferBrand.has(src);
    const host = pinned ? { ptr: src.hostAddress, byteLength: src.byteLength } : hostBytes('DeviceBuffer.copyFrom: src', src);
    const n = checkedSize('DeviceBuffer.copyFrom: byteLength', lengthOption ?? host.byteLength);
    rangeCheck('DeviceBuffer.copyFrom (source)', 0, n, host.byteLength);
    rangeCheck('DeviceBuffer.copyFrom', offset, n, this.byteLength);
    if (n === 0) return this;
    if (!pinned || s === undefined) assertMayBlock('DeviceBuffer.copyFrom() from pageable memory or without a stream');
    if (!pinned && s?.capture !== undefined)
      throw new TypeError('DeviceBuffer.copyFrom: a copy from pageable memory cannot be captured into a graph (use a PinnedHostBuffer)');
    // Large pageable copies go through pinned chunks (staging.ts), with the same ordering and completion.
    if (!pinned && stages(n, host.ptr as HostData, 'upload') && stageToDevice(s?.context ?? this.context, s?.handle ?? 0, dst, host.ptr as HostData, n))
      return this;
    this.enqueue(s, [pinned ? src : undefined], 'cuMemcpyHtoD', 'cuMemcpyHtoDAsync', dst, host.ptr, n);
    return this;
  }

  /**
   * Copies bytes [offset, offset + byteLength) of this buffer into `dst`.
   * @param dst Where to copy to: host data (a TypedArray, DataView, Buffer or ArrayBuffer), a DeviceBuffer or a PinnedHostBuffer; returned.
   * @param options `stream` (run the copy on it, asynchronously; default: the buffer's allocating stream, else synchronous), `offset` (byte offset into this buffer to copy from; default 0) and `byteLength` (bytes to copy; default: what is left of this buffer, bounded by `dst`).
   */
  copyTo<D extends HostData | DeviceBuffer | PinnedHostBuffer>(dst: D, options?: CopyOptions): D {
    this.check();
    const o = optionsObject('DeviceBuffer.copyTo', options);
    // each option read once, before any length is: a getter cannot shrink the destination after its length was taken
    const { offset: offsetOption, stream: streamOption, byteLength: lengthOption } = (o ?? {}) as Record<string, unknown>;
    const offset = checkedSize('DeviceBuffer.copyTo: offset', offsetOption ?? 0);
    const s = this.streamFor('DeviceBuffer.copyTo', streamOption);
    const isBuffer = dst instanceof DeviceBuffer;
    const pinned = pinnedHostBufferBrand.has(dst);
    const dstLength = isBuffer || pinned ? dst.byteLength : hostBytes('DeviceBuffer.copyTo: dst', dst).byteLength;
    // An offset at or past the end leaves nothing to copy: that is a caller's bug, not an empty copy.
    if (lengthOption === undefined && offset >= this.byteLength && dstLength > 0) {
      throw new RangeError(`DeviceBuffer.copyTo: offset ${offset} is at or past the end of a ${this.byteLength}-byte buffer`);
    }
    const n = checkedSize('DeviceBuffer.copyTo: byteLength', lengthOption ?? Math.min(dstLength, this.byteLength - offset));
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
    if (!pinned && s?.capture !== undefined)
      throw new TypeError('DeviceBuffer.copyTo: a copy into pageable memory cannot be captured into a graph (use a PinnedHostBuffer)');
    if (!pinned && stages(n, host as HostData, 'download') && stageToHost(s?.context ?? this.context, s?.handle ?? 0, host as HostData, src, n)) return dst;
    this.enqueue(s, [pinned ? dst : undefined], 'cuMemcpyDtoH', 'cuMemcpyDtoHAsync', host, src, n);
    return dst;
  }

  /**
   * Copies the whole buffer into a new TypedArray (synchronous with respect to the host).
   * @param ctor The element type of the result, a TypedArray class such as Float32Array; the byte length must be a multiple of its element size.
   * @param options `stream`: the stream to copy on, after the work enqueued there; the copy is done when this returns (default: the buffer's allocating stream, else the legacy default stream).
   */
  toArray<T extends ArrayBufferView>(ctor: TypedArrayConstructor<T>, options?: { stream?: StreamLike }): T {
    this.check();
    const C = elementType<T>('DeviceBuffer.toArray', ctor);
    const o = optionsObject('DeviceBuffer.toArray', options);
    if (this.byteLength % C.BYTES_PER_ELEMENT !== 0)
      throw new RangeError(`DeviceBuffer.toArray: ${this.byteLength} bytes is not a whole number of ${C.BYTES_PER_ELEMENT}-byte elements`);
    const out = new C(this.byteLength / C.BYTES_PER_ELEMENT);
    this.copyTo(out, { stream: o?.stream as StreamLike | undefined });
    return out;
  }

  /**
   * Fills `count` elements of `width` bytes (1, 2 or 4) starting at byte `offset` with `value` (an
   * integer that fits the width, signed or unsigned). Defaults: width 1, the whole buffer.
   * @param value The element value: an integer that fits `width` bytes, signed or unsigned.
   * @param options `stream` (run it on this stream; default: the buffer's allocating stream, else synchronous), `width` (element size in bytes: 1, 2 or 4; default 1), `offset` (byte offset of the first element, a multiple of `width`; default 0) and `count` (elements to fill; default: up to the end).
   */
  memset(value: number, options?: MemsetOptions): this {
    this.check();
    const o = optionsObject('DeviceBuffer.memset', options);
    const width = o?.width ?? 1;
    if (width !== 1 && width !== 2 && width !== 4) throw new TypeError(`DeviceBuffer.memset: width must be 1, 2 or 4, got ${describe(width)}`);
    const offset = checkedSize('DeviceBuffer.memset: offset', o?.offset ?? 0);
    if (offset % width !== 0) throw new RangeError(`DeviceBuffer.memset: offset ${offset} is not a multiple of width ${width}`);
    const count = checkedSize('DeviceBuffer.memset: count', o?.count ?? Math.floor(Math.max(0, this.byteLength - offset) / width));
    rangeCheck('DeviceBuffer.memset', offset, count * width, this.byteLength);
    if (typeof value !== 'number' || !Number.isInteger(value)) throw new TypeError(`DeviceBuffer.memset: value must be an integer, got ${describe(value)}`);
    const bits = 8 * width;
    if (value < -(2 ** (bits - 1)) || value > 2 ** bits - 1) throw new RangeError(`DeviceBuffer.memset: value ${value} does not fit in ${width} byte(s)`);
    const v = width === 4 ? value >>> 0 : value & (width === 2 ? 0xffff : 0xff);
    if (count === 0) return this;
    const dst = this.address + offset;
    const s = this.streamFor('DeviceBuffer.memset', o?.stream);
    if (s === undefined) assertMayBlock('DeviceBuffer.memset() without a stream');
    const name = width === 1 ? 'cuMemsetD8' : width === 2 ? 'cuMemsetD16' : 'cuMemsetD32';
    this.enqueue(s, [], name, `${name}Async`, dst, v, count);
    return this;
  }

  /** Frees the memory (idempotent), which ends its views too; closing a view only makes that view unusable. */
  override close(): void {
    if (this.parent) {
      // A view owns nothing: closing it only makes it unusable.
      this.core.markClosed();
      return;
    }
    super.close();
  }

  toString(): string {
    return `${this.core.kind}(0x${this.address.toString(16)}, ${this.byteLength} bytes)`;
  }
}
