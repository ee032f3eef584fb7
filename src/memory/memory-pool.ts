// MemoryPool: stream-ordered allocation from a pool (CUmemoryPool) of device memory, page-locked host
// memory (CUDA 12.6+ host pools) or managed memory (CUDA 13 managed pools); a device's default pool, or
// a pool made elsewhere (wrapped, owned only if asked).
import * as drv from '../driver';
import { Context, contextOf } from '../context';
import { checkKeys, describe } from '../describe';
import { Resource, checkSize, whenNoHostFuncs } from '../lifecycle';
import type { Stream, StreamLike } from '../stream';
import { cachedOnDevice, currentPoolHandle, makeRoomForManaged, releaseCachedOnDevice } from './allocator';
import { checkedSize, optionsObject } from './arguments';
import { memoryPoolBrand } from './brands';
import { DeviceBuffer, StreamFreeCore } from './device-buffer';
import { encodeLocation, type MemoryLocation } from './location';
import { ManagedBuffer } from './managed-buffer';
import { SEALED, type Sealed, checkSealed } from '../sealed';

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

/**
 * A memory pool for stream-ordered allocation (CUmemoryPool): buffers allocated from it on a stream
 * (alloc(), or DeviceBuffer.alloc with `pool`) come from it and return to it when freed.
 * - create(): device memory; pinned(): page-locked host memory (CUDA 12.6+ host pools); managed():
 *   unified memory (CUDA 13 managed pools) — all three owned: close() destroys the pool;
 * - default(): a device's default pool; wrap(): a pool made elsewhere (owned only if asked).
 * A pool lives while buffers allocated from it do (they keep it alive).
 * @example
 * ```ts
 * import { MemoryPool, Stream } from 'cuda-ts/objects';
 *
 * using stream = Stream.create();
 * using pool = MemoryPool.create({ releaseThreshold: 256 << 20 }); // keep up to 256 MiB for reuse
 * for (let step = 0; step < 3; step++) {
 *   using scratch = pool.alloc(64 << 20, stream); // stream-ordered: cheap after the first step
 *   scratch.memset(0, { stream });
 * } // each scratch returns to the pool on `stream`
 * stream.synchronize();
 * console.log(pool.reservedMemory, pool.usedMemory);
 * ```
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

  private constructor(seal: Sealed, handle: drv.CUmemoryPool, context: Context, owned: boolean, memoryType: PoolMemoryType = 'device', kind?: string) {
    checkSealed(seal, 'MemoryPool', 'MemoryPool.create() or MemoryPool.default()');
    super(
      kind ?? (owned ? 'MemoryPool' : 'MemoryPool (default)'),
      owned ? () => whenNoHostFuncs(() => drv.release(context, 'cuMemPoolDestroy', handle)) : undefined,
      [context],
    );
    this.handle = handle;
    this.context = context;
    this.owned = owned;
    this.memoryType = memoryType;
    memoryPoolBrand.mark(this);
  }

  private static contextFor(where: string, device: unknown, context: unknown): Context {
    if (device !== undefined && typeof device !== 'number') throw new TypeError(`${where}: device must be a number, got ${describe(device)}`);
    if (device !== undefined) checkSize(`${where}: device`, device);
    if (context !== undefined) return contextOf(context, `${where}: context`);
    return device !== undefined ? Context.primary(device as number) : Context.current();
  }

  /**
   * The device's current default pool (not owned: close() does not destroy it).
   * @param device The device's ordinal (default: the context's device).
   * @param context The context to use the pool from (default: `device`'s primary context, else the current one).
   */
  static default(device?: number, context?: Context): MemoryPool {
    const ctx = MemoryPool.contextFor('MemoryPool.default', device, context);
    drv.call(ctx, 'cuDeviceGet', drv.out32, device ?? ctx.device);
    drv.call(ctx, 'cuDeviceGetDefaultMemPool', drv.out64, drv.out32[0]);
    return new MemoryPool(SEALED, drv.outNumber() as drv.CUmemoryPool, ctx, false);
  }

  /** cuMemPoolCreate with the given CUmemPoolProps fields; sets the release threshold. */
  /** The size options every pool takes: checked before anything is loaded. */
  private static checkSizes(where: string, o: Record<string, unknown>): number {
    if (o.releaseThreshold !== undefined && o.releaseThreshold !== Infinity) checkedSize(`${where}: releaseThreshold`, o.releaseThreshold);
    return checkedSize(`${where}: maxSize`, o.maxSize ?? 0);
  }

  private static make(
    where: string,
    ctx: Context,
    allocType: number,
    location: { type: number; id: number },
    o: Record<string, unknown>,
    memoryType: PoolMemoryType,
    kind: string,
  ): MemoryPool {
    const maxSize = MemoryPool.checkSizes(where, o);
    ctx.check();
    const props = new DataView(new ArrayBuffer(88)); // CUmemPoolProps
    props.setInt32(0, allocType, true);
    props.setInt32(4, 0, true); // handleTypes: none (IpcMemoryPool makes shareable pools)
    props.setInt32(8, location.type, true);
    props.setInt32(12, location.id, true);
    props.setBigUint64(24, BigInt(maxSize), true);
    drv.call(ctx, 'cuMemPoolCreate', drv.out64, new Uint8Array(props.buffer));
    const pool = new MemoryPool(SEALED, drv.outNumber() as drv.CUmemoryPool, ctx, true, memoryType, kind);
    try {
      if (o.releaseThreshold !== undefined) pool.releaseThreshold = o.releaseThreshold as number;
    } catch (e) {
      pool.close();
      throw e;
    }
    return pool;
  }

  /**
   * Creates a pool of device memory on `options.device` (cuMemPoolCreate).
   * @param options `device` (ordinal of the device whose memory it holds; default the context's), `maxSize` (most bytes the pool may reserve; default 0, no limit), `releaseThreshold` (bytes kept reserved at synchronization points; default 0) and `context` (default: `device`'s primary context, else the current one).
   */
  static create(options: PoolOptions = {}): MemoryPool {
    const o = optionsObject('MemoryPool.create', options) ?? {};
    checkKeys('MemoryPool.create', o, ['device', 'maxSize', 'releaseThreshold', 'context']);
    MemoryPool.checkSizes('MemoryPool.create', o);
    const ctx = MemoryPool.contextFor('MemoryPool.create', o.device, o.context);
    const location = { type: drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, id: (o.device as number | undefined) ?? ctx.device };
    return MemoryPool.make('MemoryPool.create', ctx, drv.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED, location, o, 'device', 'MemoryPool');
  }

  /**
   * Creates a pool of page-locked host memory (cuMemPoolCreate on a host location; needs
   * `Device.properties.hostMemoryPoolsSupported`, or `hostNumaMemoryPoolsSupported` with `numaNode`).
   * Its buffers are host-accessible (`array()`) and, once access is granted (`accessFrom`, default the
   * context's device), usable by kernels of those devices.
   * @param options `numaNode` (the host NUMA node to take memory from; default none in particular), `maxSize` (most bytes the pool may reserve; default 0, no limit), `releaseThreshold` (bytes kept reserved at synchronization points; default 0), `accessFrom` (device ordinals granted read-write access; default the context's device) and `context` (default: the current one).
   */
  static pinned(options: PinnedPoolOptions = {}): MemoryPool {
    const o = optionsObject('MemoryPool.pinned', options) ?? {};
    checkKeys('MemoryPool.pinned', o, ['numaNode', 'maxSize', 'releaseThreshold', 'accessFrom', 'context']);
    MemoryPool.checkSizes('MemoryPool.pinned', o);
    if (o.accessFrom !== undefined && !Array.isArray(o.accessFrom))
      throw new TypeError(`MemoryPool.pinned: accessFrom must be an array of device ordinals, got ${describe(o.accessFrom)}`);
    const ctx = contextOf(o.context, 'MemoryPool.pinned: context');
    const location =
      o.numaNode === undefined ? encodeLocation('MemoryPool.pinned', 'host') : encodeLocation('MemoryPool.pinned: numaNode', { hostNuma: o.numaNode });
    const access = o.accessFrom ?? [ctx.device];
    if (!Array.isArray(access)) throw new TypeError(`MemoryPool.pinned: accessFrom must be an array of device ordinals, got ${describe(access)}`);
    access.forEach((d, i) => encodeLocation(`MemoryPool.pinned: accessFrom[${i}]`, d));
    const pool = MemoryPool.make(
      'MemoryPool.pinned',
      ctx,
      drv.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED,
      location,
      o,
      'pinnedHost',
      'MemoryPool (pinned host)',
    );
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
   * @param options `preferredLocation` (where the memory prefers to live; default none), `maxSize` (most bytes the pool may reserve; default 0, no limit), `releaseThreshold` (bytes kept reserved at synchronization points; default 0) and `context` (default: the current one).
   */
  static managed(options: ManagedPoolOptions = {}): MemoryPool {
    const o = optionsObject('MemoryPool.managed', options) ?? {};
    checkKeys('MemoryPool.managed', o, ['preferredLocation', 'maxSize', 'releaseThreshold', 'context']);
    MemoryPool.checkSizes('MemoryPool.managed', o);
    const ctx = contextOf(o.context, 'MemoryPool.managed: context');
    const location =
      o.preferredLocation === undefined
        ? { type: drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_NONE, id: 0 }
        : encodeLocation('MemoryPool.managed: preferredLocation', o.preferredLocation);
    if (location.type === drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
      throw new TypeError("MemoryPool.managed: preferredLocation 'hostNumaCurrent' is not a pool location (name the node: { hostNuma: n })");
    return MemoryPool.make('MemoryPool.managed', ctx, drv.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_MANAGED, location, o, 'managed', 'MemoryPool (managed)');
  }

  /**
   * Wraps a CUmemoryPool made elsewhere (another library, the typed layer). Not owned by default:
   * close() then only ends this wrapper. With `owned: true`, close() destroys the pool.
   * @param handle The raw CUmemoryPool (a number or bigint).
   * @param options `owned` (true: close() destroys the pool; default false), `memoryType` ('device', 'pinned' or 'managed': what alloc() returns; default 'device') and `context` (default: the current one).
   */
  static wrap(handle: number | bigint, options: WrapPoolOptions = {}): MemoryPool {
    const o = optionsObject('MemoryPool.wrap', options) ?? {};
    checkKeys('MemoryPool.wrap', o, ['owned', 'memoryType', 'context']);
    const h = typeof handle === 'bigint' && handle >= 0n && handle <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(handle) : handle;
    if (typeof h !== 'number' || !Number.isSafeInteger(h) || h <= 0)
      throw new TypeError(`MemoryPool.wrap: handle must be a non-zero CUmemoryPool handle (number or bigint), got ${describe(handle)}`);
    if (o.owned !== undefined && typeof o.owned !== 'boolean') throw new TypeError(`MemoryPool.wrap: owned must be a boolean, got ${describe(o.owned)}`);
    const type = o.memoryType ?? 'device';
    if (type !== 'device' && type !== 'pinnedHost' && type !== 'managed')
      throw new TypeError(`MemoryPool.wrap: memoryType must be 'device', 'pinnedHost' or 'managed', got ${describe(type)}`);
    const ctx = contextOf(o.context, 'MemoryPool.wrap: context');
    ctx.check();
    return new MemoryPool(SEALED, h as drv.CUmemoryPool, ctx, o.owned === true, type, o.owned ? 'MemoryPool (wrapped, owned)' : 'MemoryPool (wrapped)');
  }

  /**
   * Grants `device` access to the pool's memory (cuMemPoolSetAccess): 'readWrite', 'read' or 'none'.
   * @param device The ordinal of the device to grant (or revoke) access.
   * @param access 'readWrite' (the default), 'read' or 'none'.
   */
  setAccess(device: number, access: PoolAccess = 'readWrite'): this {
    this.assertOpen();
    const loc = encodeLocation('MemoryPool.setAccess: device', device);
    if (typeof access !== 'string' || !Object.prototype.hasOwnProperty.call(ACCESS_FLAGS, access))
      throw new TypeError(`MemoryPool.setAccess: access must be 'none', 'read' or 'readWrite', got ${describe(access)}`);
    const desc = new DataView(new ArrayBuffer(12)); // CUmemAccessDesc { location, flags }
    desc.setInt32(0, loc.type, true);
    desc.setInt32(4, loc.id, true);
    desc.setInt32(8, ACCESS_FLAGS[access], true);
    drv.call(this.context, 'cuMemPoolSetAccess', this.handle, new Uint8Array(desc.buffer), 1);
    return this;
  }

  /**
   * The access `device` has to the pool's memory (cuMemPoolGetAccess).
   * @param device The ordinal of the device to ask about.
   */
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

  /**
   * Sets the release threshold in bytes; `Infinity` keeps everything reserved.
   * @param bytes Bytes to keep reserved at synchronization points (a non-negative integer, or Infinity: keep everything).
   */
  set releaseThreshold(bytes: number) {
    this.assertOpen();
    u64[0] = BigInt(checkedSize('MemoryPool.releaseThreshold', bytes === Infinity ? Number.MAX_SAFE_INTEGER : bytes));
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

  /**
   * Releases reserved memory above `minBytesToKeep`. For the pool stream-ordered allocations come from
   * (the device's current pool, by default its default pool), the blocks the caching allocator keeps
   * from it are given back first (their frees waited for), so that they are released too.
   * @param minBytesToKeep Bytes of reserved memory to keep (default 0: release all that is unused).
   */
  trim(minBytesToKeep = 0): void {
    this.assertOpen();
    const keep = checkedSize('MemoryPool.trim: minBytesToKeep', minBytesToKeep);
    if (cachedOnDevice(this.context.device) > 0 && currentPoolHandle(this.context) === this.handle) releaseCachedOnDevice(this.context.device);
    drv.call(this.context, 'cuMemPoolTrimTo', this.handle, keep);
  }

  /**
   * Stream-ordered allocation from this pool: a DeviceBuffer (host-accessible through `array()` for a
   * pinned-host pool), or a ManagedBuffer for a managed pool. Freed on `stream` unless its
   * deallocation stream is changed.
   * @param byteLength Bytes to allocate (a non-negative integer).
   * @param stream The stream the allocation is ordered on and, by default, freed on.
   */
  alloc(byteLength: number, stream: StreamLike): DeviceBuffer {
    if (stream === undefined) throw new TypeError('MemoryPool.alloc: stream is required');
    return DeviceBuffer.alloc(byteLength, { stream, pool: this });
  }

  /**
   * cuMemAllocFromPoolAsync of `byteLength` (> 0) bytes on stream handle `h` of `stream` (both checked by
   * DeviceBuffer.alloc): a ManagedBuffer for a managed pool, else a DeviceBuffer, freed on `h`. @internal
   */
  allocOnStream(byteLength: number, ctx: Context, stream: Stream, h: number): DeviceBuffer {
    if (this.memoryType === 'managed') makeRoomForManaged(ctx, byteLength);
    drv.allocate(ctx, 'cuMemAllocFromPoolAsync', drv.out64, byteLength, this.handle, h);
    const ptr = drv.outNumber();
    if (this.memoryType === 'managed') return ManagedBuffer.adopt(ptr, byteLength, ctx, new StreamFreeCore('ManagedBuffer', ctx, ptr, h), stream, this);
    return DeviceBuffer.adoptPoolBlock(ptr, byteLength, ctx, new StreamFreeCore('DeviceBuffer', ctx, ptr, h), stream, this);
  }

  /** @internal */
  check(): void {
    this.assertOpen();
  }
}
