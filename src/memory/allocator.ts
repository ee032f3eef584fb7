// Caching allocator for stream-ordered device memory, as CuPy's and PyTorch's: a freed block is kept
// per context, allocating stream and size class, and the next allocation of that class on that stream
// takes it back without calling the driver. Blocks are only ever reused in stream order:
//   - on the stream that freed them: the stream's own order makes the reuse safe;
//   - on another stream of the same context (when its own bins are empty): an event recorded on the
//     freeing stream now, and waited for by the allocating stream, orders the reuse after every use of
//     the block (all of which were enqueued before the free). Two driver calls, on this path only.
// Misses allocate with cuMemAllocAsync (the device's default pool) at the class size. Cached blocks go
// back to the driver with cuMemFreeAsync on their stream: trim(), the limit, the destroy of their stream,
// MemoryPool.trim of the pool they came from, and any allocation in src/ that runs out of memory (the
// door's drv.allocate, or this allocator's own miss): the cache is emptied, the frees waited for, the
// device pools trimmed, and the allocation tried once more.
import * as drv from '../driver';
import type { Context } from '../context';
import { describe } from '../describe';
import { captureOf } from '../graph/capture';
import { Core, hostFuncs } from '../lifecycle';

/** What {@link CachingAllocator.stats} reports for one context (bytes are counted at class size). */
export interface AllocatorStats {
  /** Bytes in live buffers. */
  inUse: number;
  /** Bytes cached (freed, kept for reuse). */
  cached: number;
  /** Most bytes in use at once since the start (or resetPeak()). */
  peak: number;
  /** Allocations served from the cache. */
  hits: number;
  /** Allocations that called the driver. */
  misses: number;
  /** Most bytes in use at once allowed (Infinity: no limit). */
  limit: number;
}

interface ContextLike extends drv.Bindable {
  allocCache: unknown;
}

/** A context's cache: stream handle → size class → free block addresses (a stack). */
class Cache {
  readonly streams = new Map<number, Map<number, number[]>>();
  inUse = 0;
  cached = 0;
  peak = 0;
  hits = 0;
  misses = 0;
  limit = Infinity;
  /** Event for cross-stream reuse (created on first need, re-recorded each time). */
  event = 0;
  constructor(readonly ctx: ContextLike) {}
}

const caches = new Set<Cache>();
const byHandle = new Map<number, Cache>();
let enabled = process.env.CUDA_TS_CACHING_ALLOCATOR !== '0';
let defaultLimit = Infinity;

function cacheOf(ctx: ContextLike): Cache {
  let c = ctx.allocCache as Cache | undefined;
  if (c === undefined) {
    c = new Cache(ctx);
    c.limit = defaultLimit;
    ctx.allocCache = c;
    caches.add(c);
    byHandle.set(ctx.handle, c);
  }
  return c;
}

/** The size class of `n` bytes: 512-byte minimum, then 4 classes per power of two (≤ 25% rounding). */
export function sizeClass(n: number): number {
  if (n <= 512) return 512;
  if (n === lastSize) return lastClass;
  const step = n <= 0x80000000 ? STEPS[31 - Math.clz32(n - 1)] : 2 ** Math.floor(Math.log2(n - 1)) / 4;
  lastSize = n;
  lastClass = Math.ceil(n / step) * step;
  return lastClass;
}
/** A quarter of each power of two below 2^32 (2 ** k is a slow call with a variable k). */
const STEPS = Array.from({ length: 32 }, (_, k) => 2 ** k / 4);
let lastSize = 0;
let lastClass = 0;

/** True when stream-ordered allocations go through the cache (CUDA_TS_CACHING_ALLOCATOR=0 turns it off). */
export function cachingEnabled(): boolean {
  return enabled;
}

let allocFn: ((out: BigUint64Array, bytes: number, h: number) => number) | undefined;
let freeFn: ((ptr: number, h: number) => number) | undefined;
const allocOut = new BigUint64Array(1);
const allocOutWords = new Uint32Array(allocOut.buffer);
const OUT_OF_MEMORY: number = drv.CUresult.CUDA_ERROR_OUT_OF_MEMORY;

/** cuMemAllocAsync under the cached binding (a stream carries its context); returns the status. */
function driverAlloc(ctx: drv.Bindable, bytes: number, h: number): number {
  const fn = (allocFn ??= drv.native('cuMemAllocAsync'));
  if (h <= 2) drv.bind(ctx);
  return drv.hinted(ctx, () => fn(allocOut, bytes, h));
}

/** cuMemFreeAsync of `ptr` on `h`; skipped once the context is unusable (the memory went with it). */
export function driverFree(ctx: drv.Bindable, ptr: number, h: number): void {
  if (ctx.unusable !== undefined) return;
  const fn = (freeFn ??= drv.native('cuMemFreeAsync'));
  if (h <= 2) drv.bind(ctx);
  const status = drv.hinted(ctx, () => fn(ptr, h));
  if (status !== 0) throw drv.fail(ctx, 'cuMemFreeAsync', status);
}

/** Stream-ordered allocation without the cache (cuMemAllocAsync); throws on failure. */
export function allocUncached(ctx: drv.Bindable, bytes: number, h: number): number {
  let status = driverAlloc(ctx, bytes, h);
  if (status === OUT_OF_MEMORY && releaseForRetry()) status = driverAlloc(ctx, bytes, h);
  if (status !== 0) throw drv.fail(ctx, 'cuMemAllocAsync', status);
  return allocOutWords[1] * 0x100000000 + allocOutWords[0];
}

/**
 * Allocates a block of class `cls` for stream `h` of `ctx`: from the stream's bin, else another
 * stream's bin (ordered with an event), else the driver. Returns the address.
 */
export function allocCached(ctx: ContextLike, cls: number, h: number, where: string): number {
  const c = cacheOf(ctx);
  if (c.inUse + cls > c.limit) {
    trimCache(c);
    throw new RangeError(`${where}: ${cls} bytes would exceed the caching allocator's limit of ${c.limit} bytes (${c.inUse} in use)`);
  }
  const bins = c.streams.get(h);
  const stack = bins?.get(cls);
  let ptr: number | undefined;
  if (stack !== undefined && stack.length > 0) ptr = stack.pop();
  else if (c.cached !== 0) ptr = takeFromOtherStream(c, cls, h);
  if (ptr !== undefined) {
    c.cached -= cls;
    c.hits++;
  } else {
    let status = driverAlloc(ctx, cls, h);
    if (status === OUT_OF_MEMORY && releaseForRetry()) status = driverAlloc(ctx, cls, h);
    if (status !== 0) throw drv.fail(ctx, 'cuMemAllocAsync', status);
    ptr = allocOutWords[1] * 0x100000000 + allocOutWords[0];
    c.misses++;
  }
  c.inUse += cls;
  if (c.inUse > c.peak) c.peak = c.inUse;
  return ptr;
}

function takeFromOtherStream(c: Cache, cls: number, h: number): number | undefined {
  for (const [other, bins] of c.streams) {
    if (other === h) continue;
    const stack = bins.get(cls);
    if (stack === undefined || stack.length === 0) continue;
    const ptr = stack.pop()!;
    // Every use of the block was enqueued on `other` before its free: record that point and make `h` wait for it.
    try {
      if (c.event === 0) {
        drv.call(c.ctx, 'cuEventCreate', drv.out64, drv.CUevent_flags.CU_EVENT_DISABLE_TIMING);
        c.event = drv.outNumber();
      }
      drv.callOnStream(c.ctx, other, 'cuEventRecord', c.event, other);
      drv.callOnStream(c.ctx, h, 'cuStreamWaitEvent', h, c.event, 0);
    } catch (e) {
      stack.push(ptr);
      throw e;
    }
    return ptr;
  }
  return undefined;
}

/**
 * Gives a block back to the cache of stream `h`. While `h` captures into a graph the block waits for
 * the end of the capture (a free during capture would otherwise be reused by captured work).
 */
export function freeCached(ctx: ContextLike, ptr: number, cls: number, h: number): void {
  const c = ctx.allocCache as Cache;
  c.inUse -= cls;
  if (ctx.unusable !== undefined) return; // the memory went with the context
  const holder = captureOf(ctx, h);
  if (holder !== undefined) {
    c.inUse += cls;
    holder.afterCapture.push(() => freeCached(ctx, ptr, cls, h));
    return;
  }
  let bins = c.streams.get(h);
  if (bins === undefined) {
    bins = new Map();
    c.streams.set(h, bins);
  }
  const stack = bins.get(cls);
  if (stack === undefined) bins.set(cls, [ptr]);
  else stack.push(ptr);
  c.cached += cls;
}

/** The life-cycle core of a buffer from the cache: gives its block back when destroyed. @internal */
export class CachedBlockCore extends Core {
  constructor(
    kind: string,
    private readonly ctx: ContextLike,
    private readonly ptr: number,
    private readonly cls: number,
    /** The stream handle the block is given back on (DeviceBuffer.setDeallocationStream changes it). */
    public h: number,
  ) {
    super(kind, undefined);
  }

  protected override destroyNative(): void {
    freeCached(this.ctx, this.ptr, this.cls, this.h);
  }
}

/** Frees (cuMemFreeAsync) the blocks cached for stream `h` of `ctx`: called before the stream is destroyed. */
export function releaseStreamBlocks(ctx: drv.Bindable, h: number): void {
  const c = (ctx as ContextLike).allocCache as Cache | undefined;
  const bins = c?.streams.get(h);
  if (c === undefined || bins === undefined) return;
  c.streams.delete(h);
  let first: unknown;
  for (const [cls, stack] of bins) {
    for (const ptr of stack) {
      c.cached -= cls;
      try {
        driverFree(ctx, ptr, h);
      } catch (e) {
        first ??= e;
      }
    }
  }
  if (first !== undefined) throw first;
}

/** Drops the cache of a context being destroyed (its blocks go with it), after returning them when `free`. */
export function dropContextCache(handle: number, free: boolean): void {
  const c = byHandle.get(handle);
  if (c === undefined) return;
  try {
    if (free) trimCache(c);
  } finally {
    byHandle.delete(handle);
    caches.delete(c);
    c.ctx.allocCache = undefined;
  }
}

function trimCache(c: Cache): void {
  for (const h of [...c.streams.keys()]) releaseStreamBlocks(c.ctx, h);
}

function trimAll(): void {
  for (const c of caches) trimCache(c);
}

/**
 * Gives back what the caches of `which` hold, waits for those frees (each such context synchronized:
 * cuMemFreeAsync returns memory to the pool in stream order), and trims the memory pool of each such
 * device to 0, so that every allocation path (cuMemAlloc, managed, pinned, VMM, pools, NCCL), not only
 * the stream-ordered one, finds the memory. False when nothing was cached.
 */
function release(which: (c: Cache) => boolean): boolean {
  // A context a sticky error made unusable is skipped (its memory went with it; a wait on it fails),
  // and with a JS host callback pending nothing is waited for: cuCtxSynchronize would wait for a
  // callback that needs this very thread (a deadlock); the blocks then go back in stream order only.
  const holders = [...caches].filter((c) => c.cached > 0 && c.ctx.unusable === undefined && which(c));
  for (const c of holders) {
    trimCache(c);
    if (hostFuncs.pending !== 0) continue;
    drv.call(c.ctx, 'cuCtxSynchronize');
    trimDevicePool(c.ctx);
  }
  return holders.length > 0;
}

/** The device's current pool (cuDeviceGetMemPool): where cuMemAllocAsync blocks come from and go back to. @internal */
export function currentPoolHandle(ctx: drv.Bindable): number {
  drv.call(ctx, 'cuDeviceGet', drv.out32, ctx.device);
  drv.call(ctx, 'cuDeviceGetMemPool', drv.out64b, drv.out32[0]);
  return Number(drv.out64b[0]);
}

/** cuMemPoolTrimTo(0) of the device's current pool. */
function trimDevicePool(ctx: drv.Bindable): void {
  drv.call(ctx, 'cuMemPoolTrimTo', currentPoolHandle(ctx), 0);
}

/** The door's out-of-memory relief: every cache, every device. */
function releaseForRetry(): boolean {
  return release(() => true);
}
drv.onOutOfMemory(releaseForRetry);

/**
 * Gives back the blocks cached on `device` (MemoryPool.trim of that device's current pool calls it:
 * they came from that pool), waiting for the frees. False when nothing was cached there. @internal
 */
export function releaseCachedOnDevice(device: number): boolean {
  return release((c) => c.ctx.device === device);
}

/** What unified-memory paging needs free on the device beyond the pages themselves (its own tables). */
const MANAGED_HEADROOM = 64 * 2 ** 20;

/**
 * Managed memory gets its device pages when the device first touches them, where running out of
 * memory is a fatal fault (CUDA_ERROR_ILLEGAL_ADDRESS, sticky), not a status an allocator can retry.
 * So before a managed allocation of `bytes` in `ctx`, the blocks the cache holds on its device go back
 * (as on out of memory) when the device's free memory is short of `bytes`. @internal
 */
export function makeRoomForManaged(ctx: Context, bytes: number): void {
  if (cachedOnDevice(ctx.device) === 0) return;
  if (ctx.memoryInfo().free < bytes + MANAGED_HEADROOM) releaseCachedOnDevice(ctx.device);
}

/** Bytes the caching allocator holds (freed, kept for reuse) for the contexts of `device`. @internal */
export function cachedOnDevice(device: number): number {
  let n = 0;
  for (const c of caches) if (c.ctx.device === device) n += c.cached;
  return n;
}

function checkContextArg(where: string, ctx: unknown): ContextLike | undefined {
  if (ctx === undefined) return undefined;
  if (typeof ctx !== 'object' || ctx === null || !('allocCache' in ctx) || typeof (ctx as ContextLike).handle !== 'number') {
    throw new TypeError(`${where}: context must be a Context, got ${describe(ctx)}`);
  }
  return ctx as ContextLike;
}

function checkLimit(where: string, v: unknown): number {
  if (v === Infinity) return Infinity;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw new RangeError(`${where}: limit must be a non-negative integer or Infinity, got ${describe(v)}`);
  return v;
}

/**
 * The caching allocator behind stream-ordered `DeviceBuffer.alloc(n, { stream })`. On by default;
 * `CUDA_TS_CACHING_ALLOCATOR=0` in the environment, `CachingAllocator.configure({ enabled: false })`,
 * or `{ cache: false }` on one allocation turn it off (then every allocation is a cuMemAllocAsync and
 * every free a cuMemFreeAsync). Allocations from an explicit MemoryPool never use it.
 */
export const CachingAllocator = {
  /**
   * Turns the cache on or off for later allocations, and sets the limit of bytes in use per context
   * (applied to contexts already seen too). Turning it off returns every cached block (trim()).
   * @param options `enabled` (true or false: later stream-ordered allocations use the cache or not; unchanged when omitted) and `limit` (bytes in use per context before cached blocks are given back, a non-negative integer or Infinity; unchanged when omitted).
   */
  configure(options: { enabled?: boolean; limit?: number }): void {
    if (typeof options !== 'object' || options === null) throw new TypeError(`CachingAllocator.configure: options must be an object, got ${describe(options)}`);
    if (options.enabled !== undefined && typeof options.enabled !== 'boolean')
      throw new TypeError(`CachingAllocator.configure: enabled must be a boolean, got ${describe(options.enabled)}`);
    if (options.limit !== undefined) {
      defaultLimit = checkLimit('CachingAllocator.configure', options.limit);
      for (const c of caches) c.limit = defaultLimit;
    }
    if (options.enabled !== undefined) {
      enabled = options.enabled;
      if (!enabled) trimAll();
    }
  },

  /** True when stream-ordered allocations use the cache. */
  get enabled(): boolean {
    return enabled;
  },

  /**
   * Sets the limit of bytes in use for one context (default: every context).
   * @param limit Bytes in use before cached blocks are given back (a non-negative integer, or Infinity: no limit).
   * @param context The context to apply it to (default: every context).
   */
  setLimit(limit: number, context?: Context): void {
    const ctx = checkContextArg('CachingAllocator.setLimit', context);
    const v = checkLimit('CachingAllocator.setLimit', limit);
    if (ctx === undefined) this.configure({ limit: v });
    else cacheOf(ctx).limit = v;
  },

  /**
   * Returns every cached block of `context` (default: all contexts) to the driver (cuMemFreeAsync on its stream).
   * @param context The context whose cached blocks to return (default: every context).
   */
  trim(context?: Context): void {
    const ctx = checkContextArg('CachingAllocator.trim', context);
    if (ctx === undefined) trimAll();
    else if (ctx.allocCache !== undefined) trimCache(ctx.allocCache as Cache);
  },

  /**
   * Statistics of `context` (default: summed over every context).
   * @param context The context to report (default: the sum over every context).
   */
  stats(context?: Context): AllocatorStats {
    const ctx = checkContextArg('CachingAllocator.stats', context);
    const list = ctx === undefined ? [...caches] : ctx.allocCache === undefined ? [] : [ctx.allocCache as Cache];
    const s: AllocatorStats = {
      inUse: 0,
      cached: 0,
      peak: 0,
      hits: 0,
      misses: 0,
      limit: ctx === undefined ? defaultLimit : ((ctx.allocCache as Cache | undefined)?.limit ?? defaultLimit),
    };
    for (const c of list) {
      s.inUse += c.inUse;
      s.cached += c.cached;
      s.peak += c.peak;
      s.hits += c.hits;
      s.misses += c.misses;
    }
    return s;
  },

  /**
   * Starts peak tracking again from the bytes in use now.
   * @param context The context to apply it to (default: every context).
   */
  resetPeak(context?: Context): void {
    const ctx = checkContextArg('CachingAllocator.resetPeak', context);
    for (const c of ctx === undefined ? caches : ctx.allocCache === undefined ? [] : [ctx.allocCache as Cache]) c.peak = c.inUse;
  },
};
