// Memory: DeviceBuffer (synchronous or stream-ordered), ManagedBuffer, PinnedHostBuffer, MemoryPool
// (device, pinned-host and managed pools; foreign pools wrapped). Every copy is bounds-checked
// (RangeError) before the driver is called. Stream-ordered buffers come from the caching allocator
// (allocator.ts) unless a pool is given or the cache is off, and are freed on the stream that allocated
// them (the buffer keeps that stream alive) unless another deallocation stream is chosen.
// Zero-copy host views (pinned, managed) are external ArrayBuffers over native memory that V8 cannot
// detach: close() frees the memory at once, and views made by array() must not be used after it.
import { isArrayBuffer, isDataView } from '../../support';
import { koffi } from '../../support';
import * as drv from '../driver';
import { Context, contextOf, describe } from '../context';
import { Core, Resource, assertMayBlock, deferredPending, whenNoHostFuncs } from '../lifecycle';
import { Stream, toStream, type StreamLike } from '../stream';
import { CachedBlockCore, allocCached, allocUncached, cachingEnabled, driverFree, sizeClass } from './allocator';
import { noteUse } from '../graph/capture';

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

/**
 * A place memory lives in, or is advised / prefetched to:
 * - `'host'`: host memory (no particular NUMA node);
 * - `'hostNumaCurrent'`: the NUMA node of the calling thread (prefetch and advice only);
 * - a number or `{ device: n }`: device `n`'s memory;
 * - `{ hostNuma: n }`: host NUMA node `n`.
 */
export type MemoryLocation =
  | 'host'
  | 'hostNumaCurrent'
  | number
  | {
      /** Device ordinal. */
      device: number;
    }
  | {
      /** Host NUMA node id. */
      hostNuma: number;
    };

/** A CUmemLocation ({ type, id }) for `loc`; `'device'` means `defaultDevice`. @internal */
export function encodeLocation(where: string, loc: unknown, defaultDevice?: number): { type: number; id: number } {
  const T = drv.CUmemLocationType;
  const ordinal = (name: string, v: unknown): number => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0x7fffffff) throw new RangeError(`${where}: ${name} must be a non-negative integer, got ${describe(v)}`);
    return v;
  };
  if (loc === 'host') return { type: T.CU_MEM_LOCATION_TYPE_HOST, id: 0 };
  if (loc === 'hostNumaCurrent') return { type: T.CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, id: 0 };
  if (loc === 'device' && defaultDevice !== undefined) return { type: T.CU_MEM_LOCATION_TYPE_DEVICE, id: defaultDevice };
  if (typeof loc === 'number') return { type: T.CU_MEM_LOCATION_TYPE_DEVICE, id: ordinal('device ordinal', loc) };
  if (typeof loc === 'object' && loc !== null) {
    const keys = Object.keys(loc);
    if (keys.length === 1 && keys[0] === 'device') return { type: T.CU_MEM_LOCATION_TYPE_DEVICE, id: ordinal('location.device', (loc as { device: unknown }).device) };
    if (keys.length === 1 && keys[0] === 'hostNuma') return { type: T.CU_MEM_LOCATION_TYPE_HOST_NUMA, id: ordinal('location.hostNuma', (loc as { hostNuma: unknown }).hostNuma) };
  }
  const device = defaultDevice !== undefined ? "'device', " : '';
  throw new TypeError(`${where}: a location is ${device}'host', 'hostNumaCurrent', a device ordinal, { device: n } or { hostNuma: n }, got ${describe(loc)}`);
}

/** What a pool's memory is: device memory, page-locked host memory, or managed (unified) memory. */
export type PoolMemoryType = 'device' | 'pinnedHost' | 'managed';

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

/** Options of {@link MemoryPool.pinned}. */
export interface PinnedPoolOptions {
  /** Host NUMA node the memory comes from (default: none in particular, CU_MEM_LOCATION_TYPE_HOST). */
  numaNode?: number;
  /** Most bytes the pool may reserve (0 = no limit). */
  maxSize?: number;
  /** Bytes the pool keeps reserved at synchronization points instead of releasing them to the OS. */
  releaseThreshold?: number;
  /** Devices granted read-write access to the pool (default: the context's device). */
  accessFrom?: readonly number[];
  /** The context to use the pool from (default: the current one). */
  context?: Context;
}

/** Options of {@link MemoryPool.managed}. */
export interface ManagedPoolOptions {
  /** Where the pool's memory prefers to live (default: no preference; the driver migrates on access). */
  preferredLocation?: MemoryLocation;
  /** Most bytes the pool may reserve (0 = no limit). */
  maxSize?: number;
  /** Bytes the pool keeps reserved at synchronization points instead of releasing them to the OS. */
  releaseThreshold?: number;
  /** The context to use the pool from (default: the current one). */
  context?: Context;
}

/** Options of {@link MemoryPool.wrap}. */
export interface WrapPoolOptions {
  /** True: close() destroys the pool (cuMemPoolDestroy). Default false: the pool stays its maker's. */
  owned?: boolean;
  /** What the pool's memory is (default `'device'`): picks what {@link MemoryPool.alloc} returns. */
  memoryType?: PoolMemoryType;
  /** The context to use the pool from (default: the current one). */
  context?: Context;
}

/** Access of a device to a pool's memory. */
export type PoolAccess = 'none' | 'read' | 'readWrite';

const u64 = new BigUint64Array(1);
const ACCESS_FLAGS: Record<PoolAccess, number> = { none: 0, read: 1, readWrite: 3 };

function optionKeys(where: string, o: Record<string, unknown>, keys: readonly string[]): void {
  for (const k of Object.keys(o)) if (!keys.includes(k)) throw new TypeError(`${where}: unknown option '${k}' (expected ${keys.join(', ')})`);
}

/**
 * A memory pool for stream-ordered allocation (CUmemoryPool): buffers allocated from it on a stream
 * (alloc(), or DeviceBuffer.alloc with `pool`) come from it and return to it when freed.
 * - create(): device memory; pinned(): page-locked host memory (CUDA 12.6+ host pools); managed():
 *   unified memory (CUDA 13 managed pools) — all three owned: close() destroys the pool;
 * - default(): a device's default pool; wrap(): a pool made elsewhere (owned only if asked).
 * A pool lives while buffers allocated from it do (they keep it alive).
 */
export class MemoryPool extends Resource {
  /** The driver handle (CUmemoryPool). */
  readonly handle: drv.CUmemoryPool;
  /** The context made current for the pool's calls. */
  readonly context: Context;
  /** True when close() destroys the pool (made by create(), pinned(), managed(), or wrapped with `owned`). */
  readonly owned: boolean;
  /** What the pool's memory is: device memory, page-locked host memory or managed memory. */
  readonly memoryType: PoolMemoryType;

  private constructor(handle: drv.CUmemoryPool, context: Context, owned: boolean, memoryType: PoolMemoryType = 'device', kind?: string) {
    super(kind ?? (owned ? 'MemoryPool' : 'MemoryPool (default)'), owned ? () => whenNoHostFuncs(() => drv.release(context, 'cuMemPoolDestroy', handle)) : undefined, [context]);
    this.handle = handle;
    this.context = context;
    this.owned = owned;
    this.memoryType = memoryType;
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

  /** cuMemPoolCreate with the given CUmemPoolProps fields; sets the release threshold. */
  private static make(where: string, ctx: Context, allocType: number, location: { type: number; id: number }, o: Record<string, unknown>, memoryType: PoolMemoryType, kind: string): MemoryPool {
    const maxSize = size(`${where}: maxSize`, o.maxSize ?? 0);
    if (o.releaseThreshold !== undefined && o.releaseThreshold !== Infinity) size(`${where}: releaseThreshold`, o.releaseThreshold);
    ctx.check();
    const props = new DataView(new ArrayBuffer(88)); // CUmemPoolProps
    props.setInt32(0, allocType, true);
    props.setInt32(4, 0, true); // handleTypes: none (IpcMemoryPool makes shareable pools)
    props.setInt32(8, location.type, true);
    props.setInt32(12, location.id, true);
    props.setBigUint64(24, BigInt(maxSize), true);
    drv.call(ctx, 'cuMemPoolCreate', drv.out64, new Uint8Array(props.buffer));
    const pool = new MemoryPool(drv.outNumber() as drv.CUmemoryPool, ctx, true, memoryType, kind);
    try {
      if (o.releaseThreshold !== undefined) pool.releaseThreshold = o.releaseThreshold as number;
    } catch (e) {
      pool.close();
      throw e;
    }
    return pool;
  }

  /** Creates a pool of device memory on `options.device` (cuMemPoolCreate). */
  static create(options: PoolOptions = {}): MemoryPool {
    const o = optionsObject('MemoryPool.create', options) ?? {};
    const ctx = MemoryPool.contextFor('MemoryPool.create', o.device, o.context);
    const location = { type: drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, id: (o.device as number | undefined) ?? ctx.device };
    return MemoryPool.make('MemoryPool.create', ctx, drv.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED, location, o, 'device', 'MemoryPool');
  }

  /**
   * Creates a pool of page-locked host memory (cuMemPoolCreate on a host location; needs
   * `Device.properties.hostMemoryPoolsSupported`, or `hostNumaMemoryPoolsSupported` with `numaNode`).
   * Its buffers are host-accessible (`array()`) and, once access is granted (`accessFrom`, default the
   * context's device), usable by kernels of those devices.
   */
  static pinned(options: PinnedPoolOptions = {}): MemoryPool {
    const o = optionsObject('MemoryPool.pinned', options) ?? {};
    optionKeys('MemoryPool.pinned', o, ['numaNode', 'maxSize', 'releaseThreshold', 'accessFrom', 'context']);
    const ctx = contextOf(o.context, 'MemoryPool.pinned: context');
    const location = o.numaNode === undefined ? encodeLocation('MemoryPool.pinned', 'host') : encodeLocation('MemoryPool.pinned: numaNode', { hostNuma: o.numaNode });
    const access = o.accessFrom ?? [ctx.device];
    if (!Array.isArray(access)) throw new TypeError(`MemoryPool.pinned: accessFrom must be an array of device ordinals, got ${describe(access)}`);
    access.forEach((d, i) => encodeLocation(`MemoryPool.pinned: accessFrom[${i}]`, d));
    const pool = MemoryPool.make('MemoryPool.pinned', ctx, drv.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED, location, o, 'pinnedHost', 'MemoryPool (pinned host)');
    try {
      for (const d of access as number[]) pool.setAccess(d, 'readWrite');
    } catch (e) {
      pool.close();
      throw e;
    }
    return pool;
  }

  /**
   * Creates a pool of managed (unified) memory (cuMemPoolCreate with CU_MEM_ALLOCATION_TYPE_MANAGED,
   * CUDA 13 drivers). Its buffers are ManagedBuffers: host-accessible, migrated on demand, advisable
   * and prefetchable.
   */
  static managed(options: ManagedPoolOptions = {}): MemoryPool {
    const o = optionsObject('MemoryPool.managed', options) ?? {};
    optionKeys('MemoryPool.managed', o, ['preferredLocation', 'maxSize', 'releaseThreshold', 'context']);
    const ctx = contextOf(o.context, 'MemoryPool.managed: context');
    const location = o.preferredLocation === undefined ? { type: drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_NONE, id: 0 } : encodeLocation('MemoryPool.managed: preferredLocation', o.preferredLocation);
    if (location.type === drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT) throw new TypeError("MemoryPool.managed: preferredLocation 'hostNumaCurrent' is not a pool location (name the node: { hostNuma: n })");
    return MemoryPool.make('MemoryPool.managed', ctx, drv.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_MANAGED, location, o, 'managed', 'MemoryPool (managed)');
  }

  /**
   * Wraps a CUmemoryPool made elsewhere (another library, the typed layer). Not owned by default:
   * close() then only ends this wrapper. With `owned: true`, close() destroys the pool.
   */
  static wrap(handle: number | bigint, options: WrapPoolOptions = {}): MemoryPool {
    const o = optionsObject('MemoryPool.wrap', options) ?? {};
    optionKeys('MemoryPool.wrap', o, ['owned', 'memoryType', 'context']);
    const h = typeof handle === 'bigint' && handle >= 0n && handle <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(handle) : handle;
    if (typeof h !== 'number' || !Number.isSafeInteger(h) || h <= 0) throw new TypeError(`MemoryPool.wrap: handle must be a non-zero CUmemoryPool handle (number or bigint), got ${describe(handle)}`);
    if (o.owned !== undefined && typeof o.owned !== 'boolean') throw new TypeError(`MemoryPool.wrap: owned must be a boolean, got ${describe(o.owned)}`);
    const type = o.memoryType ?? 'device';
    if (type !== 'device' && type !== 'pinnedHost' && type !== 'managed') throw new TypeError(`MemoryPool.wrap: memoryType must be 'device', 'pinnedHost' or 'managed', got ${describe(type)}`);
    const ctx = contextOf(o.context, 'MemoryPool.wrap: context');
    ctx.check();
    return new MemoryPool(h as drv.CUmemoryPool, ctx, o.owned === true, type, o.owned ? 'MemoryPool (wrapped, owned)' : 'MemoryPool (wrapped)');
  }

  /** Grants `device` access to the pool's memory (cuMemPoolSetAccess): 'readWrite', 'read' or 'none'. */
  setAccess(device: number, access: PoolAccess = 'readWrite'): this {
    this.assertOpen();
    const loc = encodeLocation('MemoryPool.setAccess: device', device);
    if (typeof access !== 'string' || !Object.prototype.hasOwnProperty.call(ACCESS_FLAGS, access)) throw new TypeError(`MemoryPool.setAccess: access must be 'none', 'read' or 'readWrite', got ${describe(access)}`);
    const desc = new DataView(new ArrayBuffer(12)); // CUmemAccessDesc { location, flags }
    desc.setInt32(0, loc.type, true);
    desc.setInt32(4, loc.id, true);
    desc.setInt32(8, ACCESS_FLAGS[access], true);
    drv.call(this.context, 'cuMemPoolSetAccess', this.handle, new Uint8Array(desc.buffer), 1);
    return this;
  }

  /** The access `device` has to the pool's memory (cuMemPoolGetAccess). */
  accessFrom(device: number): PoolAccess {
    this.assertOpen();
    const loc = encodeLocation('MemoryPool.accessFrom: device', device);
    const l = new Int32Array([loc.type, loc.id]);
    drv.call(this.context, 'cuMemPoolGetAccess', drv.out32, this.handle, l);
    const f = drv.out32[0];
    return f === 3 ? 'readWrite' : f === 1 ? 'read' : 'none';
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

  /**
   * Stream-ordered allocation from this pool: a DeviceBuffer (host-accessible through `array()` for a
   * pinned-host pool), or a ManagedBuffer for a managed pool. Freed on `stream` unless its
   * deallocation stream is changed.
   */
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
   * @internal
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
      if (pool.memoryType === 'managed') return ManagedBuffer.adopt(ptr, byteLength, ctx, new StreamFreeCore('ManagedBuffer', ctx, ptr, h), stream, pool);
      return new DeviceBuffer('DeviceBuffer', ptr, byteLength, ctx, new StreamFreeCore('DeviceBuffer', ctx, ptr, h), stream, pool);
    }
    // The caching allocator, except while the stream captures (the allocation becomes a graph node then).
    if (options.cache !== false && cachingEnabled() && stream.capture === undefined) {
      const cls = sizeClass(byteLength);
      const ptr = allocCached(ctx, cls, h, 'DeviceBuffer.alloc');
      return new DeviceBuffer('DeviceBuffer', ptr, byteLength, ctx, new CachedBlockCore('DeviceBuffer', ctx, ptr, cls, h), stream);
    }
    const ptr = allocUncached(ctx, byteLength, h);
    return new DeviceBuffer('DeviceBuffer', ptr, byteLength, ctx, new StreamFreeCore('DeviceBuffer', ctx, ptr, h), stream);
  }

  private static allocSync(byteLength: number, ctx: Context): DeviceBuffer {
    ctx.check();
    if (byteLength === 0) return new DeviceBuffer('DeviceBuffer', 0, 0, ctx, undefined);
    drv.call(ctx, 'cuMemAlloc', drv.out64, byteLength);
    const ptr = drv.outNumber();
    return new DeviceBuffer('DeviceBuffer', ptr, byteLength, ctx, () => whenNoHostFuncs(() => drv.release(ctx, 'cuMemFree', ptr)));
  }

  /**
   * A DeviceBuffer over memory allocated elsewhere (another library, the typed layer, a
   * VirtualMemoryResource): it never frees the memory, and keeps `options.owner` alive while it lives.
   * Copies, memsets, views and kernel arguments work as on any DeviceBuffer.
   */
  static wrap(pointer: number | bigint, byteLength: number, options: WrapBufferOptions = {}): DeviceBuffer {
    const address = addressArg('DeviceBuffer.wrap: pointer', pointer);
    size('DeviceBuffer.wrap: byteLength', byteLength);
    const o = optionsObject('DeviceBuffer.wrap', options) ?? {};
    for (const k of Object.keys(o)) if (k !== 'owner' && k !== 'context' && k !== 'hostAccessible') throw new TypeError(`DeviceBuffer.wrap: unknown option '${k}' (expected owner, context, hostAccessible)`);
    if (address === 0 && byteLength > 0) throw new RangeError(`DeviceBuffer.wrap: a null pointer cannot hold ${byteLength} bytes`);
    if (address + byteLength > Number.MAX_SAFE_INTEGER) throw new RangeError('DeviceBuffer.wrap: pointer + byteLength is past 2**53');
    if (o.hostAccessible !== undefined && typeof o.hostAccessible !== 'boolean') throw new TypeError(`DeviceBuffer.wrap: hostAccessible must be a boolean, got ${describe(o.hostAccessible)}`);
    const owner = o.owner;
    if (owner instanceof Resource && owner.closed) throw new Error(`DeviceBuffer.wrap: the owner (${owner.core.kind}) is closed`);
    const ctx = contextOf(o.context, 'DeviceBuffer.wrap: context');
    ctx.check();
    // A no-op destroy when an owner Resource is held: the wrapper is then registered for GC, so a
    // forgotten wrapper still lets its owner go.
    const kind = o.hostAccessible ? 'DeviceBuffer (wrapped, host-accessible)' : 'DeviceBuffer (wrapped)';
    const buf = new DeviceBuffer(kind, address, byteLength, ctx, owner instanceof Resource ? () => undefined : undefined);
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
   */
  array<T extends ArrayBufferView>(ctor: TypedArrayConstructor<T> = Uint8Array as unknown as TypedArrayConstructor<T>): T {
    this.check();
    const C = elementType<T>(`${this.core.kind}.array`, ctor);
    if (!this.hostAccessible) throw new TypeError(`DeviceBuffer.array: this is device memory, not host-accessible: copy it with toArray(), or allocate from MemoryPool.pinned() / MemoryPool.managed()`);
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

  /** Same as {@link DeviceBuffer.setDeallocationStream}. */
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
   */
  setDeallocationStream(stream: StreamLike): this {
    this.check();
    if (this.parent !== undefined) throw new TypeError('DeviceBuffer.setDeallocationStream: this is a view: set it on the buffer it was made from');
    if (stream === undefined || stream === null) throw new TypeError('DeviceBuffer.setDeallocationStream: stream is required');
    const s = toStream(stream, 'DeviceBuffer.setDeallocationStream: stream')!;
    if (s.context !== this.context) throw new TypeError(`DeviceBuffer.setDeallocationStream: the stream belongs to ${String(s.context)}, the buffer to ${String(this.context)}`);
    const core = this.core;
    if (core instanceof StreamFreeCore || core instanceof CachedBlockCore) core.h = s.handle;
    else if (!(this.stream !== undefined && this.byteLength === 0)) {
      throw new TypeError(`DeviceBuffer.setDeallocationStream: only stream-ordered buffers (allocated with a stream or from a MemoryPool) are freed on a stream; this ${core.kind} is freed synchronously`);
    }
    core.hold(s.core);
    deallocationStreams.set(this, s);
    return this;
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
  private constructor(address: number, byteLength: number, context: Context, destroy: (() => void) | Core | undefined, stream?: Stream, pool?: MemoryPool) {
    super('ManagedBuffer', address, byteLength, context, destroy, stream, pool);
  }

  /** A managed pool's allocation (freed by `core` on its stream). @internal */
  static adopt(address: number, byteLength: number, context: Context, core: Core, stream: Stream, pool: MemoryPool): ManagedBuffer {
    return new ManagedBuffer(address, byteLength, context, core, stream, pool);
  }

  /**
   * Allocates `byteLength` bytes of managed memory (cuMemAllocManaged) in `options.context` (default:
   * the current one). It is attached globally, or to the host only with `hostOnlyAttach`. For
   * stream-ordered managed memory, allocate from {@link MemoryPool.managed}.
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
    const address = ptr;
    return new ManagedBuffer(ptr, byteLength, ctx, ptr === 0 ? undefined : () => whenNoHostFuncs(() => drv.release(ctx, 'cuMemFree', address)));
  }

  /** Always true: managed memory is reachable from the host (`array()`). */
  override get hostAccessible(): boolean {
    return true;
  }

  /** Bytes [offset, offset + byteLength) of this buffer, checked: the range of advise() and prefetch(). */
  private range(where: string, range: unknown): { address: number; byteLength: number } {
    const o = optionsObject(where, range);
    if (o !== undefined) for (const k of Object.keys(o)) if (k !== 'offset' && k !== 'byteLength') throw new TypeError(`${where}: unknown option '${k}' (expected offset, byteLength)`);
    const offset = size(`${where}: offset`, o?.offset ?? 0);
    if (offset > this.byteLength) throw new RangeError(`${where}: offset ${offset} is past the end of a ${this.byteLength}-byte buffer`);
    const n = size(`${where}: byteLength`, o?.byteLength ?? this.byteLength - offset);
    rangeCheck(where, offset, n, this.byteLength);
    return { address: this.address + offset, byteLength: n };
  }

  /**
   * Advises the driver how the memory (or bytes [offset, offset + byteLength) of it) will be used
   * (cuMemAdvise): `readMostly` (read-only copies on each accessor), `preferredLocation` (where pages
   * should live), `accessedBy` (keep mapped for `location`), and their `unset…` forms. `location`
   * (default `'device'`: this buffer's device) is ignored by readMostly.
   */
  advise(advice: ManagedAdvice, location: MemoryLocation | 'device' = 'device', range?: { offset?: number; byteLength?: number }): this {
    this.check();
    const code = typeof advice === 'string' && Object.prototype.hasOwnProperty.call(ADVICE, advice) ? ADVICE[advice] : undefined;
    if (code === undefined) throw new TypeError(`ManagedBuffer.advise: advice must be one of ${Object.keys(ADVICE).join(', ')}, got ${describe(advice)}`);
    const loc = encodeLocation('ManagedBuffer.advise: location', location, this.context.device);
    const r = this.range('ManagedBuffer.advise', range);
    if (r.byteLength === 0) return this;
    drv.call(this.context, 'cuMemAdvise', r.address, r.byteLength, code, loc);
    return this;
  }

  /**
   * Prefetches the memory (or bytes [offset, offset + byteLength) of it) to `to` on `stream` (default:
   * the legacy default stream): `'device'` (this buffer's device), `'host'`, a device ordinal,
   * `{ device }`, `{ hostNuma }` or `'hostNumaCurrent'` (cuMemPrefetchAsync).
   */
  prefetch(to: MemoryLocation | 'device', stream?: StreamLike, range?: { offset?: number; byteLength?: number }): this {
    this.check();
    const location = encodeLocation('ManagedBuffer.prefetch: to', to, this.context.device);
    const s = toStream(stream, 'ManagedBuffer.prefetch: stream');
    const r = this.range('ManagedBuffer.prefetch', range);
    if (r.byteLength === 0) return this;
    const h = s?.handle ?? 0;
    if (s !== undefined) noteUse(s.context, h, this);
    drv.callOnStream(s?.context ?? this.context, h, 'cuMemPrefetchAsync', r.address, r.byteLength, location, 0, h);
    return this;
  }
}

/** Usage advice for managed memory (see {@link ManagedBuffer.advise}). */
export type ManagedAdvice = 'readMostly' | 'unsetReadMostly' | 'preferredLocation' | 'unsetPreferredLocation' | 'accessedBy' | 'unsetAccessedBy';
const ADVICE: Record<ManagedAdvice, number> = {
  readMostly: drv.CUmem_advise.CU_MEM_ADVISE_SET_READ_MOSTLY,
  unsetReadMostly: drv.CUmem_advise.CU_MEM_ADVISE_UNSET_READ_MOSTLY,
  preferredLocation: drv.CUmem_advise.CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
  unsetPreferredLocation: drv.CUmem_advise.CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
  accessedBy: drv.CUmem_advise.CU_MEM_ADVISE_SET_ACCESSED_BY,
  unsetAccessedBy: drv.CUmem_advise.CU_MEM_ADVISE_UNSET_ACCESSED_BY,
};

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

  /** Bytes [offset, offset + n) of this memory as a Uint8Array (n > 0). */
  private bytes(offset: number, n: number): Uint8Array {
    return new Uint8Array(koffi.view(this.address, this.byteLength), offset, n);
  }

  /**
   * Copies `src` into this buffer at `options.offset`. From a DeviceBuffer or another PinnedHostBuffer
   * the copy runs on `options.stream` when given (asynchronous: synchronize before reading), else
   * synchronously; from host data (a TypedArray, ArrayBuffer, …) it is a plain host copy, made at once
   * (a stream is refused: nothing would order it).
   */
  copyFrom(src: HostData | DeviceBuffer | PinnedHostBuffer, options?: CopyOptions): this {
    this.assertOpen();
    const o = optionsObject('PinnedHostBuffer.copyFrom', options);
    const offset = size('PinnedHostBuffer.copyFrom: offset', o?.offset ?? 0);
    const s = toStream(o?.stream, 'PinnedHostBuffer.copyFrom: stream');
    const dst = this.address + offset;
    if (src instanceof DeviceBuffer) {
      src.check();
      const n = size('PinnedHostBuffer.copyFrom: byteLength', o?.byteLength ?? src.byteLength);
      rangeCheck('PinnedHostBuffer.copyFrom (source)', 0, n, src.byteLength);
      rangeCheck('PinnedHostBuffer.copyFrom', offset, n, this.byteLength);
      if (n === 0) return this;
      if (s === undefined) {
        assertMayBlock('PinnedHostBuffer.copyFrom() without a stream');
        drv.call(src.context, 'cuMemcpyDtoH', dst, src.ptr, n);
      } else {
        noteUse(s.context, s.handle, this, ownerOf(src));
        drv.callOnStream(s.context, s.handle, 'cuMemcpyDtoHAsync', dst, src.ptr, n, s.handle);
      }
      return this;
    }
    if (src instanceof PinnedHostBuffer) {
      const from = src.hostAddress;
      const n = size('PinnedHostBuffer.copyFrom: byteLength', o?.byteLength ?? src.byteLength);
      rangeCheck('PinnedHostBuffer.copyFrom (source)', 0, n, src.byteLength);
      rangeCheck('PinnedHostBuffer.copyFrom', offset, n, this.byteLength);
      if (n === 0) return this;
      if (s !== undefined) {
        noteUse(s.context, s.handle, this, src);
        drv.callOnStream(s.context, s.handle, 'cuMemcpyAsync', dst, from, n, s.handle); // unified addressing: host to host
      } else if (src === this) this.bytes(0, this.byteLength).copyWithin(offset, 0, n);
      else this.bytes(offset, n).set(src.bytes(0, n));
      return this;
    }
    const host = hostBytes('PinnedHostBuffer.copyFrom: src', src);
    if (s !== undefined) throw new TypeError('PinnedHostBuffer.copyFrom: a copy from host data is a host copy made at once: omit stream (synchronize first if the device uses this buffer)');
    const n = size('PinnedHostBuffer.copyFrom: byteLength', o?.byteLength ?? host.byteLength);
    rangeCheck('PinnedHostBuffer.copyFrom (source)', 0, n, host.byteLength);
    rangeCheck('PinnedHostBuffer.copyFrom', offset, n, this.byteLength);
    if (n === 0) return this;
    const view = host.ptr;
    this.bytes(offset, n).set(isArrayBuffer(view) ? new Uint8Array(view, 0, n) : new Uint8Array(view.buffer, view.byteOffset, n));
    return this;
  }

  /**
   * Copies bytes [offset, offset + byteLength) of this buffer into `dst` (default length: what fits).
   * Into a DeviceBuffer or another PinnedHostBuffer the copy runs on `options.stream` when given, else
   * synchronously; into host data it is a plain host copy made at once (a stream is refused).
   */
  copyTo<D extends HostData | DeviceBuffer | PinnedHostBuffer>(dst: D, options?: CopyOptions): D {
    this.assertOpen();
    const o = optionsObject('PinnedHostBuffer.copyTo', options);
    const offset = size('PinnedHostBuffer.copyTo: offset', o?.offset ?? 0);
    const s = toStream(o?.stream, 'PinnedHostBuffer.copyTo: stream');
    const src = this.address + offset;
    if (dst instanceof DeviceBuffer || dst instanceof PinnedHostBuffer) {
      if (dst instanceof DeviceBuffer) dst.check();
      const to = dst instanceof DeviceBuffer ? dst.ptr : dst.hostAddress;
      if (o?.byteLength === undefined && offset > this.byteLength) throw new RangeError(`PinnedHostBuffer.copyTo: offset ${offset} is past the end of a ${this.byteLength}-byte buffer`);
      const n = size('PinnedHostBuffer.copyTo: byteLength', o?.byteLength ?? Math.min(dst.byteLength, this.byteLength - offset));
      rangeCheck('PinnedHostBuffer.copyTo', offset, n, this.byteLength);
      rangeCheck('PinnedHostBuffer.copyTo (destination)', 0, n, dst.byteLength);
      if (n === 0) return dst;
      if (dst instanceof DeviceBuffer) {
        if (s === undefined) {
          assertMayBlock('PinnedHostBuffer.copyTo() without a stream');
          drv.call(dst.context, 'cuMemcpyHtoD', to, src, n);
        } else {
          noteUse(s.context, s.handle, this, ownerOf(dst));
          drv.callOnStream(s.context, s.handle, 'cuMemcpyHtoDAsync', to, src, n, s.handle);
        }
      } else if (s !== undefined) {
        noteUse(s.context, s.handle, this, dst);
        drv.callOnStream(s.context, s.handle, 'cuMemcpyAsync', to, src, n, s.handle); // unified addressing: host to host
      } else if ((dst as PinnedHostBuffer) === this) this.bytes(0, this.byteLength).copyWithin(0, offset, offset + n);
      else (dst as PinnedHostBuffer).bytes(0, n).set(this.bytes(offset, n));
      return dst;
    }
    const host = hostBytes('PinnedHostBuffer.copyTo: dst', dst);
    if (s !== undefined) throw new TypeError('PinnedHostBuffer.copyTo: a copy into host data is a host copy made at once: omit stream (synchronize first if the device writes this buffer)');
    if (o?.byteLength === undefined && offset > this.byteLength) throw new RangeError(`PinnedHostBuffer.copyTo: offset ${offset} is past the end of a ${this.byteLength}-byte buffer`);
    const n = size('PinnedHostBuffer.copyTo: byteLength', o?.byteLength ?? Math.min(host.byteLength, this.byteLength - offset));
    rangeCheck('PinnedHostBuffer.copyTo', offset, n, this.byteLength);
    rangeCheck('PinnedHostBuffer.copyTo (destination)', 0, n, host.byteLength);
    if (n === 0) return dst;
    const view = host.ptr;
    (isArrayBuffer(view) ? new Uint8Array(view, 0, n) : new Uint8Array(view.buffer, view.byteOffset, n)).set(this.bytes(offset, n));
    return dst;
  }

  /**
   * Fills `count` elements of `width` bytes (1, 2 or 4) from byte `offset` with `value` (defaults: width
   * 1, to the end). On `options.stream` it is a stream-ordered memset of the mapped memory
   * (cuMemsetD8/16/32Async); without one, a host fill made at once.
   */
  fill(value: number, options?: MemsetOptions): this {
    this.assertOpen();
    const o = optionsObject('PinnedHostBuffer.fill', options);
    const width = o?.width ?? 1;
    if (width !== 1 && width !== 2 && width !== 4) throw new TypeError(`PinnedHostBuffer.fill: width must be 1, 2 or 4, got ${describe(width)}`);
    const offset = size('PinnedHostBuffer.fill: offset', o?.offset ?? 0);
    if (offset % width !== 0) throw new RangeError(`PinnedHostBuffer.fill: offset ${offset} is not a multiple of width ${width}`);
    const count = size('PinnedHostBuffer.fill: count', o?.count ?? Math.floor(Math.max(0, this.byteLength - offset) / width));
    rangeCheck('PinnedHostBuffer.fill', offset, count * width, this.byteLength);
    if (typeof value !== 'number' || !Number.isInteger(value)) throw new TypeError(`PinnedHostBuffer.fill: value must be an integer, got ${describe(value)}`);
    const bits = 8 * width;
    if (value < -(2 ** (bits - 1)) || value > 2 ** bits - 1) throw new RangeError(`PinnedHostBuffer.fill: value ${value} does not fit in ${width} byte(s)`);
    const v = width === 4 ? value >>> 0 : value & (width === 2 ? 0xffff : 0xff);
    const s = toStream(o?.stream, 'PinnedHostBuffer.fill: stream');
    if (count === 0) return this;
    if (s !== undefined) {
      const name = width === 1 ? 'cuMemsetD8Async' : width === 2 ? 'cuMemsetD16Async' : 'cuMemsetD32Async';
      noteUse(s.context, s.handle, this);
      drv.callOnStream(s.context, s.handle, name, this.devicePointer + offset, v, count, s.handle);
      return this;
    }
    const C = width === 1 ? Uint8Array : width === 2 ? Uint16Array : Uint32Array;
    new C(koffi.view(this.address, this.byteLength), offset, count).fill(v);
    return this;
  }
}
