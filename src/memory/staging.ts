// Pageable copies staged through pinned memory. JS data lives in pageable memory (typed arrays); the
// driver copies pageable memory through small staging buffers of its own and reaches ~6 GB/s host to
// device and ~10 GB/s back on an H200, where pinned memory reaches ~55 GB/s. A large copy of pageable
// memory is split here into chunks staged through a per-context pool of pinned chunks, double-buffered
// (or a ring of chunksPerCopy): the host copies chunk k+1 into one pinned chunk while the DMA engine moves
// chunk k from another; helper threads (host-copy.ts) share the host side. Uploads and downloads have
// their own threshold and threads (STAGING_DEFAULTS): on the H200 the driver's own path is fast for
// downloads and slow for uploads.
//
// Ordering and completion are those of the direct call the staged copy replaces:
//   - without a stream (h = 0, the default stream the "synchronous" calls use, legacy or per-thread as
//     the binder resolved them): every chunk goes on that stream, so the copy is ordered after the work
//     of blocking streams as cuMemcpyHtoD/DtoH are, and it is done when it returns (host to device ends
//     with a synchronize of that stream, as the door's callAndWait does; device to host waits for each
//     chunk before copying it out);
//   - on a stream: chunks are enqueued there in order. Host to device returns once every source byte
//     is in pinned memory (the caller may reuse its array, as cuMemcpyHtoDAsync from pageable memory
//     allows), the last DMAs may still run; device to host is done when it returns.
// A chunk carries an event recorded after the last DMA that used it: whoever takes it next waits for
// that event first, so concurrent copies on several streams never overwrite a chunk still in flight.
// Copies are synchronous JS calls, so one copy holds one ring of chunks (a pair by default, up to
// chunksPerCopy) at a time; a copy finding every chunk of the pool in flight allocates another (up to
// the bound) or waits for the oldest.
// Graph capture never gets here: copies of pageable memory are refused while their stream captures.
import { koffi } from '../../support';
import * as drv from '../driver';
import { checkKeys } from '../describe';
import { deferError, hostFuncs } from '../lifecycle';
import { MAX_COPY_HELPERS, hostCopy } from './host-copy';

/** One direction's settings: uploads (host to device) and downloads (device to host) differ on the H200. */
export interface StagingDirection {
  /** Copies of at least this many bytes are staged (Infinity: never). */
  minBytes: number;
  /** Helper threads that copy between pageable and pinned memory beside the calling thread (0: none; see host-copy.ts). */
  hostThreads: number;
}

/** How pageable copies are staged (see {@link configureStaging}). */
export interface StagingSettings {
  /** Host to device (copyFrom of a typed array). */
  upload: StagingDirection;
  /** Device to host (copyTo into a typed array). */
  download: StagingDirection;
  /** Bytes per pinned chunk. */
  chunkBytes: number;
  /** Most pinned chunks per context (at least 2: a copy uses a pair). */
  maxChunks: number;
  /**
   * Chunks one copy cycles through (2: double-buffered; more let the DMA run further ahead of the host
   * copies, absorbing uneven chunk times; at most maxChunks, and the copy's chunk count).
   */
  chunksPerCopy: number;
}

/**
 * THE DEFAULTS, per direction: the table to edit from `npx tsx bench/staging.ts` on the GPU machine,
 * which prints the values it recommends in this shape. What they rest on (H200, 16 cores, one NUMA
 * node, THP madvise; `npm run bench`, 2026-12-01 23:1x UTC, medians of 5, 256 MiB unless said): uploads
 * direct 6.65 GB/s, staged 7.64 / 11.53 / 12.98 / 14.73 with 0 / 2 / 4 / 8 helper threads (CuPy 7.89),
 * ≥ 1.05× direct from 32 MiB; with 8 helpers 16 MiB chunks gave 21.4 and 4 chunks per copy 21.8 (8 MiB
 * chunks, 2 per copy: 14.0). Downloads direct 12.74, staged 7.37 / 11.44 / 15.18 / 12.83 (CuPy 13.39),
 * ≥ 1.05× direct from 16 MiB, 32 MiB chunks 16.9; into a fresh array (first-touch faults) direct 1.16
 * against staged 4.46. Direct downloads move between processes (7.6–15.8 GB/s over three runs), the
 * staged ones far less (12.2–15.2), so downloads are staged too. Two later runs (2026-12-02 02:15 and
 * 05:10 UTC) gave downloads staged with 4 / 8 helpers 15.6 / 18.6 and 13.8 / 18.0 GB/s (direct 13.7 and
 * 10.2, CuPy 14.1 and 14.8), and the step recommended 8 both times: downloads use 8 helpers since. The
 * pool is 4 × 16 MiB of pinned memory per context once a copy needs it (trimStaging or dropStaging give
 * it back).
 */
export const STAGING_DEFAULTS: Readonly<{
  upload: Readonly<StagingDirection>;
  download: Readonly<StagingDirection>;
  chunkBytes: number;
  maxChunks: number;
  chunksPerCopy: number;
}> = {
  upload: { minBytes: 32 << 20, hostThreads: 8 },
  download: { minBytes: 16 << 20, hostThreads: 8 },
  /** Large enough that the per-chunk driver calls (~µs) and the helpers' wake-ups vanish beside its DMA (~300 µs at 55 GB/s). */
  chunkBytes: 16 << 20,
  /** One ring of four: the DMA runs up to three chunks ahead of the host copies. */
  maxChunks: 4,
  chunksPerCopy: 4,
};

/**
 * A change to the settings (fields left out keep their value): `minBytes` and `hostThreads` at the top
 * set both directions, `upload` / `download` then set one.
 */
export interface StagingChange {
  minBytes?: number;
  hostThreads?: number;
  chunkBytes?: number;
  maxChunks?: number;
  chunksPerCopy?: number;
  upload?: Partial<StagingDirection>;
  download?: Partial<StagingDirection>;
}

/**
 * The environment variables that override the defaults (read once, at the first staged-size copy). The
 * per-direction ones win over the two-direction ones; a min-bytes variable may be `off` (never staged).
 */
export const STAGING_ENV = {
  /** `0` turns staging off (every pageable copy goes to the driver directly). */
  enabled: 'CUDA_TS_STAGING',
  minBytes: 'CUDA_TS_STAGING_MIN_BYTES',
  chunkBytes: 'CUDA_TS_STAGING_CHUNK_BYTES',
  maxChunks: 'CUDA_TS_STAGING_CHUNKS',
  chunksPerCopy: 'CUDA_TS_STAGING_CHUNKS_PER_COPY',
  hostThreads: 'CUDA_TS_STAGING_THREADS',
  uploadMinBytes: 'CUDA_TS_STAGING_UPLOAD_MIN_BYTES',
  uploadThreads: 'CUDA_TS_STAGING_UPLOAD_THREADS',
  downloadMinBytes: 'CUDA_TS_STAGING_DOWNLOAD_MIN_BYTES',
  downloadThreads: 'CUDA_TS_STAGING_DOWNLOAD_THREADS',
} as const;

let settings: StagingSettings | undefined;
const CHANGE_KEYS: readonly string[] = ['minBytes', 'hostThreads', 'chunkBytes', 'maxChunks', 'chunksPerCopy', 'upload', 'download'];
const DIRECTION_KEYS: readonly string[] = ['minBytes', 'hostThreads'];

function checkDirection(where: string, d: StagingDirection): void {
  if (typeof d.minBytes !== 'number' || !(d.minBytes === Infinity || (Number.isSafeInteger(d.minBytes) && d.minBytes >= 0))) {
    throw new RangeError(`${where}.minBytes must be a non-negative integer or Infinity, got ${String(d.minBytes)}`);
  }
  if (typeof d.hostThreads !== 'number' || !Number.isSafeInteger(d.hostThreads) || d.hostThreads < 0 || d.hostThreads > MAX_COPY_HELPERS) {
    throw new RangeError(`${where}.hostThreads must be an integer from 0 to ${MAX_COPY_HELPERS}, got ${String(d.hostThreads)}`);
  }
}

function checkSettings(where: string, s: StagingSettings): StagingSettings {
  checkDirection(`${where}: upload`, s.upload);
  checkDirection(`${where}: download`, s.download);
  if (typeof s.chunkBytes !== 'number' || !Number.isSafeInteger(s.chunkBytes) || s.chunkBytes < 1 || s.chunkBytes > 2 ** 31) {
    throw new RangeError(`${where}: chunkBytes must be an integer from 1 to 2**31, got ${String(s.chunkBytes)}`);
  }
  if (typeof s.maxChunks !== 'number' || !Number.isSafeInteger(s.maxChunks) || s.maxChunks < 2 || s.maxChunks > 64) {
    throw new RangeError(`${where}: maxChunks must be an integer from 2 to 64, got ${String(s.maxChunks)}`);
  }
  if (typeof s.chunksPerCopy !== 'number' || !Number.isSafeInteger(s.chunksPerCopy) || s.chunksPerCopy < 2 || s.chunksPerCopy > 64) {
    throw new RangeError(`${where}: chunksPerCopy must be an integer from 2 to 64, got ${String(s.chunksPerCopy)}`);
  }
  return s;
}

/** A copy of `s` (its direction records too). */
function copyOf(s: StagingSettings): StagingSettings {
  return { upload: { ...s.upload }, download: { ...s.download }, chunkBytes: s.chunkBytes, maxChunks: s.maxChunks, chunksPerCopy: s.chunksPerCopy };
}

/** The defaults with the environment's overrides; a malformed variable is a RangeError naming it. @internal */
export function stagingFromEnvironment(env: NodeJS.ProcessEnv = process.env): StagingSettings {
  const num = (name: string, fallback: number, off = false): number => {
    const v = env[name]?.trim();
    if (v === undefined || v === '') return fallback;
    if (off && v === 'off') return Infinity;
    if (!/^\d+$/.test(v)) throw new RangeError(`${name} must be a non-negative integer${off ? " or 'off'" : ''}, got '${env[name]}'`);
    return Number(v);
  };
  const E = STAGING_ENV;
  const D = STAGING_DEFAULTS;
  const threads = num(E.hostThreads, NaN);
  const both = num(E.minBytes, NaN, true);
  const direction = (d: StagingDirection, minName: string, threadsName: string): StagingDirection => ({
    minBytes: env[E.enabled] === '0' ? Infinity : num(minName, Number.isNaN(both) ? d.minBytes : both, true),
    hostThreads: num(threadsName, Number.isNaN(threads) ? d.hostThreads : threads),
  });
  return checkSettings('cuda-ts environment (CUDA_TS_STAGING_*)', {
    upload: direction(D.upload, E.uploadMinBytes, E.uploadThreads),
    download: direction(D.download, E.downloadMinBytes, E.downloadThreads),
    chunkBytes: num(E.chunkBytes, D.chunkBytes),
    maxChunks: num(E.maxChunks, D.maxChunks),
    chunksPerCopy: num(E.chunksPerCopy, D.chunksPerCopy),
  });
}

/** The settings in force. */
export function stagingSettings(): StagingSettings {
  return copyOf((settings ??= stagingFromEnvironment()));
}

/**
 * Changes how pageable copies are staged (see {@link StagingChange}) and returns the settings before
 * the change, to restore them (a StagingSettings is a change too). Chunks of another size already
 * pooled are freed when next idle. For benchmarks and tests (minBytes 0 stages every pageable copy;
 * Infinity none). @internal
 */
export function configureStaging(change: StagingChange): StagingSettings {
  if (typeof change !== 'object' || change === null) throw new TypeError(`configureStaging: expected an object, got ${String(change)}`);
  checkKeys('configureStaging', change, CHANGE_KEYS, 'setting');
  const before = stagingSettings();
  const next = copyOf(before);
  for (const dir of ['upload', 'download'] as const) {
    const own = change[dir];
    if (own !== undefined && (typeof own !== 'object' || own === null)) throw new TypeError(`configureStaging: ${dir} must be an object, got ${String(own)}`);
    if (own !== undefined) checkKeys(`configureStaging: ${dir}`, own, DIRECTION_KEYS, 'setting');
    for (const k of ['minBytes', 'hostThreads'] as const) {
      const v = own?.[k] ?? change[k];
      if (v !== undefined) next[dir][k] = v;
    }
  }
  if (change.chunkBytes !== undefined) next.chunkBytes = change.chunkBytes;
  if (change.maxChunks !== undefined) next.maxChunks = change.maxChunks;
  if (change.chunksPerCopy !== undefined) next.chunksPerCopy = change.chunksPerCopy;
  settings = checkSettings('configureStaging', next);
  return before;
}

// ---------------------------------------------------------------------------------------------
// Is the host memory pageable? Memory the driver knows (a typed array over a PinnedHostBuffer,
// registered or managed memory) is copied faster directly than through a host-side copy.
// ---------------------------------------------------------------------------------------------

const attrData = new BigUint64Array(new ArrayBuffer(8));
let attrSlot: BigUint64Array | undefined;
const MEMORY_TYPE = Int32Array.of(drv.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE);

/** True when the driver does not know the memory at `address` (pageable host memory). */
function pageable(address: number): boolean {
  attrSlot ??= BigUint64Array.of(BigInt(koffi.address(attrData.buffer)));
  attrData[0] = 0n;
  // Asked of the host address, not a context: no bind. A failure only means "do not stage".
  const status = drv.globalStatus('cuPointerGetAttributes', 1, MEMORY_TYPE, attrSlot, address);
  return status === 0 && (attrData[0] & 0xffffffffn) === 0n;
}

/** The bytes of host data as a Uint8Array over the same memory (n bytes from its start). */
function bytesOf(data: ArrayBufferView | ArrayBuffer, n: number): Uint8Array {
  return ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, n) : new Uint8Array(data, 0, n);
}

/** The host address of host bytes (n > 0), or undefined where koffi cannot tell (the copy then goes direct). */
function addressOfBytes(b: Uint8Array): number | undefined {
  try {
    return Number(koffi.address(b)); // the view's own address: its byteOffset included, SharedArrayBuffers too
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// The pool: pinned chunks per context
// ---------------------------------------------------------------------------------------------

interface Chunk {
  readonly ptr: number;
  readonly bytes: number;
  /** The pinned memory as bytes (koffi.view: no copy). */
  readonly view: Uint8Array;
  /** Recorded after the last DMA that used the chunk (CU_EVENT_DISABLE_TIMING). */
  readonly event: number;
  /** The event was recorded and not yet seen complete: a DMA may still use the chunk. */
  pending: boolean;
  /** When the event was recorded (a counter): the oldest pending chunk is waited for first. */
  recorded: number;
  /** Taken by the copy in progress. */
  leased: boolean;
}

class Pool {
  readonly chunks: Chunk[] = [];
  constructor(public ctx: drv.Bindable) {}
}

/** Pools by context handle. */
const pools = new Map<number, Pool>();
let records = 0;

function poolOf(ctx: drv.Bindable): Pool {
  let pool = pools.get(ctx.handle);
  // A context destroyed without dropStaging (a handle reused by a new context): its chunks went with it.
  if (pool !== undefined && pool.ctx !== ctx && pool.ctx.core.destroyed) pool = undefined;
  if (pool === undefined) {
    pool = new Pool(ctx);
    pools.set(ctx.handle, pool);
  }
  return pool;
}

const OUT_OF_MEMORY: number = drv.CUresult.CUDA_ERROR_OUT_OF_MEMORY;

/** A new pinned chunk with its event, or undefined when pinned memory ran out (the copy goes direct). */
function newChunk(ctx: drv.Bindable, bytes: number): Chunk | undefined {
  try {
    drv.allocate(ctx, 'cuMemHostAlloc', drv.out64, bytes, 0);
  } catch (e) {
    if (e instanceof drv.DriverError && e.code === OUT_OF_MEMORY) return undefined;
    throw e;
  }
  const ptr = drv.outNumber();
  try {
    drv.call(ctx, 'cuEventCreate', drv.out64, drv.CUevent_flags.CU_EVENT_DISABLE_TIMING);
  } catch (e) {
    drv.release(ctx, 'cuMemFreeHost', ptr);
    throw e;
  }
  const event = drv.outNumber();
  return { ptr, bytes, view: new Uint8Array(koffi.view(ptr, bytes)), event, pending: false, recorded: 0, leased: false };
}

function freeChunk(ctx: drv.Bindable, c: Chunk): void {
  if (c.pending) drv.release(ctx, 'cuEventSynchronize', c.event);
  c.pending = false;
  drv.release(ctx, 'cuEventDestroy', c.event);
  drv.release(ctx, 'cuMemFreeHost', c.ptr);
}

/** Takes `c` out of the pool without freeing it: a DMA may still use it, untracked (after an error). */
function retire(pool: Pool, c: Chunk): void {
  const i = pool.chunks.indexOf(c);
  if (i >= 0) pool.chunks.splice(i, 1);
}

/** True when `c` is idle: no DMA can use it any more (asks its event when one is pending). */
function idle(ctx: drv.Bindable, pool: Pool, c: Chunk): boolean {
  if (!c.pending) return true;
  try {
    if (drv.query(ctx, 'cuEventQuery', c.event)) c.pending = false;
  } catch {
    // An event in error says nothing of its chunk: leave that chunk alone. The error belongs to the
    // stream's work (a sticky one has marked the context through the door) and shows there.
    retire(pool, c);
  }
  return !c.pending;
}

/** Frees the idle chunks whose size is no longer the setting's, and idle ones past a lowered bound. */
function fitSettings(ctx: drv.Bindable, pool: Pool, s: StagingSettings): void {
  for (const c of [...pool.chunks]) {
    if ((c.bytes === s.chunkBytes && pool.chunks.length <= s.maxChunks) || c.leased || !idle(ctx, pool, c)) continue;
    retire(pool, c);
    freeChunk(ctx, c);
  }
}

/**
 * The chunks one copy of `n` bytes cycles through, leased: at least two, at most chunksPerCopy (and
 * maxChunks, and the copy's chunk count): idle ones first, then new ones within the bound, then (to make
 * two) the oldest in flight (the copy waits for them chunk by chunk). Undefined when pinned memory is
 * short: copy directly.
 */
function leaseRing(ctx: drv.Bindable, s: StagingSettings, n: number): Chunk[] | undefined {
  const pool = poolOf(ctx);
  fitSettings(ctx, pool, s);
  const want = Math.max(2, Math.min(s.chunksPerCopy, s.maxChunks, Math.ceil(n / s.chunkBytes)));
  const free = pool.chunks.filter((c) => !c.leased && c.bytes === s.chunkBytes);
  const ring = free.filter((c) => idle(ctx, pool, c) && pool.chunks.includes(c)).slice(0, want);
  while (ring.length < want && pool.chunks.length < s.maxChunks) {
    const c = newChunk(ctx, s.chunkBytes);
    if (c === undefined) break;
    pool.chunks.push(c);
    ring.push(c);
  }
  const busy = free.filter((c) => !ring.includes(c) && pool.chunks.includes(c)).sort((a, b) => a.recorded - b.recorded);
  while (ring.length < 2 && busy.length > 0) ring.push(busy.shift()!);
  if (ring.length < 2) return undefined;
  for (const c of ring) c.leased = true;
  return ring;
}

/** Waits until no DMA uses `c`. */
function settle(ctx: drv.Bindable, c: Chunk): void {
  if (!c.pending) return;
  drv.callHinted(ctx, 'cuEventSynchronize', c.event);
  c.pending = false;
}

/** Records `c`'s event on stream `h` after the DMA just enqueued there. */
function record(ctx: drv.Bindable, h: number, c: Chunk): void {
  drv.callOnStream(ctx, h, 'cuEventRecord', c.event, h);
  c.pending = true;
  c.recorded = ++records;
}

/**
 * After an error with a DMA enqueued on `h` whose event was not recorded: waits for `h`; if even that
 * fails, the chunk leaves the pool (never reused while something might still write or read it).
 */
function recover(ctx: drv.Bindable, h: number, c: Chunk): void {
  try {
    drv.call(ctx, 'cuStreamSynchronize', h);
    c.pending = false;
  } catch {
    const pool = pools.get(ctx.handle);
    if (pool !== undefined) retire(pool, c);
  }
}

// ---------------------------------------------------------------------------------------------
// The copies
// ---------------------------------------------------------------------------------------------

/**
 * True when a pageable copy of `n` bytes of `host` should be staged (large enough, memory the driver
 * does not know), in `direction`; without one, in either (stageToDevice / stageToHost then decline a
 * copy below their own direction's minBytes).
 */
export function stages(n: number, host: ArrayBufferView | ArrayBuffer, direction?: 'upload' | 'download'): boolean {
  const s = settings ?? stagingSettings();
  const min = direction === undefined ? Math.min(s.upload.minBytes, s.download.minBytes) : s[direction].minBytes;
  if (n < min || n === 0) return false;
  const address = addressOfBytes(bytesOf(host, n));
  return address !== undefined && pageable(address);
}

/**
 * Copies `n` bytes of pageable `host` to device address `dst` on stream `h` of `ctx` (0: the default
 * stream, done on return), staged. False when uploads of `n` bytes are not staged or no pinned chunks
 * could be had (nothing was copied: copy directly). The caller checked the arguments and that `h` is
 * not capturing.
 */
export function stageToDevice(ctx: drv.Bindable, h: number, dst: number, host: ArrayBufferView | ArrayBuffer, n: number): boolean {
  const s = settings ?? stagingSettings();
  if (n < s.upload.minBytes) return false;
  const ring = leaseRing(ctx, s, n);
  if (ring === undefined) return false;
  const src = bytesOf(host, n);
  const size = ring[0].bytes;
  let untracked: Chunk | undefined;
  try {
    for (let off = 0, k = 0; off < n; off += size, k = (k + 1) % ring.length) {
      const c = ring[k];
      const len = Math.min(size, n - off);
      settle(ctx, c); // its previous DMA (a ring's length ago, or an earlier copy's) has read it
      hostCopy(len === size ? c.view : c.view.subarray(0, len), len === n ? src : src.subarray(off, off + len), s.upload.hostThreads);
      drv.callOnStream(ctx, h, 'cuMemcpyHtoDAsync', dst + off, c.ptr, len, h);
      untracked = c;
      record(ctx, h, c);
      untracked = undefined;
    }
    if (h === 0) {
      drv.call(ctx, 'cuStreamSynchronize', 0); // done on return, as the direct path's callAndWait
      // Only the chunks this copy used are known idle now: another of the ring may be a chunk leased
      // while in flight on a non-blocking stream, which the default stream does not wait for.
      for (let i = 0; i < ring.length && i * size < n; i++) ring[i].pending = false;
    }
  } catch (e) {
    if (untracked !== undefined) recover(ctx, h, untracked);
    throw e;
  } finally {
    for (const c of ring) c.leased = false;
  }
  return true;
}

/**
 * Copies `n` bytes from device address `src` into pageable `host` on stream `h` of `ctx` (0: the
 * default stream), staged; done when it returns. False when downloads of `n` bytes are not staged or
 * no pinned chunks could be had (nothing was copied: copy directly). The caller checked the arguments
 * and that `h` is not capturing.
 */
export function stageToHost(ctx: drv.Bindable, h: number, host: ArrayBufferView | ArrayBuffer, src: number, n: number): boolean {
  const s = settings ?? stagingSettings();
  if (n < s.download.minBytes) return false;
  const ring = leaseRing(ctx, s, n);
  if (ring === undefined) return false;
  const dst = bytesOf(host, n);
  const size = ring[0].bytes;
  const count = Math.ceil(n / size);
  const d = ring.length;
  let untracked: Chunk | undefined;
  const issue = (k: number): void => {
    const c = ring[k % d];
    const off = k * size;
    drv.callOnStream(ctx, h, 'cuMemcpyDtoHAsync', c.ptr, src + off, Math.min(size, n - off), h);
    untracked = c;
    record(ctx, h, c);
    untracked = undefined;
  };
  try {
    for (const c of ring) settle(ctx, c); // a DMA of an earlier copy may still read them
    for (let k = 0; k < Math.min(d - 1, count); k++) issue(k);
    for (let k = 0; k < count; k++) {
      if (k + d - 1 < count) issue(k + d - 1); // into the chunk copied out in the previous round
      const c = ring[k % d];
      const off = k * size;
      const len = Math.min(size, n - off);
      settle(ctx, c);
      hostCopy(dst.subarray(off, off + len), len === size ? c.view : c.view.subarray(0, len), s.download.hostThreads);
    }
  } catch (e) {
    if (untracked !== undefined) recover(ctx, h, untracked);
    throw e;
  } finally {
    for (const c of ring) c.leased = false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Freeing, stats
// ---------------------------------------------------------------------------------------------

/**
 * Frees the pool of `ctx` (its context is being closed: called before the context goes). Never throws:
 * errors are reported by the next call. With a JS host callback pending, a blocking free could deadlock:
 * the chunks are left to the context's own destruction then.
 */
export function dropStaging(ctx: drv.Bindable): void {
  const pool = pools.get(ctx.handle);
  if (pool === undefined) return;
  pools.delete(ctx.handle);
  if (hostFuncs.pending !== 0) return;
  for (const c of pool.chunks) {
    try {
      freeChunk(ctx, c);
    } catch (e) {
      deferError(e);
    }
  }
  pool.chunks.length = 0;
}

/** Frees the idle chunks of `ctx`'s pool now (the pool allocates again on the next staged copy). @internal */
export function trimStaging(ctx: drv.Bindable): void {
  const pool = pools.get(ctx.handle);
  if (pool === undefined) return;
  for (const c of [...pool.chunks]) {
    if (c.leased || !idle(ctx, pool, c)) continue;
    retire(pool, c);
    freeChunk(ctx, c);
  }
}

/** What the pool of `ctx` holds: chunks, leased ones, ones whose DMA may be in flight, pinned bytes. @internal */
export function stagingStats(ctx: drv.Bindable): { chunks: number; leased: number; pending: number; bytes: number } {
  const chunks = pools.get(ctx.handle)?.chunks ?? [];
  return {
    chunks: chunks.length,
    leased: chunks.filter((c) => c.leased).length,
    pending: chunks.filter((c) => c.pending).length,
    bytes: chunks.reduce((a, c) => a + c.bytes, 0),
  };
}
