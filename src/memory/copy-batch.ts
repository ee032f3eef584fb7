// copyBatch: many pointer-to-pointer copies enqueued with one driver call (cuMemcpyBatchAsync). The
// copies of one batch run in stream order as a whole, in no particular order among themselves.
import { koffi } from '../../support';
import * as drv from '../driver';
import { isArrayBuffer } from '../../support';
import { checkKeys, describe } from '../describe';
import { OBJECTS_ERROR, ObjectsError } from '../errors';
import { noteUse } from '../graph/capture';
import { checkSize, type Resource } from '../lifecycle';
import { addressArg, type HostData } from './arguments';
import { DeviceBuffer, ownerOf } from './device-buffer';
import { encodeLocation, type MemoryLocation } from './location';
import { PinnedHostBuffer } from './pinned-host-buffer';
import { Stream, toStream, type StreamLike } from '../stream';

/** One copy of a batch: `bytes` bytes from `src` (+ `srcOffset`) to `dst` (+ `dstOffset`). */
export interface BatchCopy {
  /** Destination: a DeviceBuffer (ManagedBuffer, a view, …), a PinnedHostBuffer, or a device address. */
  dst: DeviceBuffer | PinnedHostBuffer | number | bigint;
  /**
   * Source: a DeviceBuffer, a PinnedHostBuffer, a device address, or host data (a TypedArray, DataView
   * or ArrayBuffer): host data is read before copyBatch returns (CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL).
   */
  src: DeviceBuffer | PinnedHostBuffer | HostData | number | bigint;
  /** Bytes to copy (default: the rest of the source after `srcOffset`; required for addresses). */
  bytes?: number;
  /** Byte offset into the source (default 0). */
  srcOffset?: number;
  /** Byte offset into the destination (default 0). */
  dstOffset?: number;
  /** This copy's source access order (default: the batch's {@link CopyBatchOptions.srcAccessOrder}); not for host data. */
  srcAccessOrder?: 'stream' | 'any';
  /** Where the source lives, a hint for managed memory (CUmemcpyAttributes.srcLocHint): a {@link MemoryLocation}. */
  srcLocationHint?: MemoryLocation;
  /** Where the destination lives, a hint for managed memory (CUmemcpyAttributes.dstLocHint). */
  dstLocationHint?: MemoryLocation;
  /** This copy's overlap hint (default: the batch's {@link CopyBatchOptions.preferOverlapWithCompute}). */
  preferOverlapWithCompute?: boolean;
}

const COPY_FIELDS = ['dst', 'src', 'bytes', 'srcOffset', 'dstOffset', 'srcAccessOrder', 'srcLocationHint', 'dstLocationHint', 'preferOverlapWithCompute'];

/** Options of {@link copyBatch}. */
export interface CopyBatchOptions {
  /**
   * How sources other than host data may be read: 'stream' (default: in stream order), or 'any' (out
   * of stream order, even after the call returns: only when nothing earlier on the stream writes them).
   */
  srcAccessOrder?: 'stream' | 'any';
  /** Hint that the copies should preferably overlap with compute work (CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE). */
  preferOverlapWithCompute?: boolean;
}

let driverVersion: number | undefined;
/** The CUDA version of the installed driver (cuDriverGetVersion), once. */
function installedDriver(): number {
  if (driverVersion === undefined) {
    drv.global('cuDriverGetVersion', drv.out32);
    driverVersion = drv.out32[0];
  }
  return driverVersion;
}

function version(v: number): string {
  return `${Math.floor(v / 1000)}.${(v % 1000) / 10}`;
}

/** Test seam: pretend the installed driver supports CUDA `v` (undefined: ask the driver). @internal */
export function provideDriverVersion(v: number | undefined): void {
  driverVersion = v;
}

interface Endpoint {
  address: number;
  byteLength: number | undefined;
  holder: Resource | undefined;
  host: boolean;
}

function endpoint(where: string, v: unknown, source: boolean): Endpoint {
  if (v instanceof DeviceBuffer) return { address: v.ptr, byteLength: v.byteLength, holder: ownerOf(v), host: false };
  if (v instanceof PinnedHostBuffer) return { address: v.hostAddress, byteLength: v.byteLength, holder: v, host: false };
  if (typeof v === 'number' || typeof v === 'bigint') {
    const a = addressArg(where, v);
    if (a === 0) throw new RangeError(`${where} is a null address`);
    return { address: a, byteLength: undefined, holder: undefined, host: false };
  }
  if (source && (isArrayBuffer(v) || ArrayBuffer.isView(v))) {
    const buffer = isArrayBuffer(v) ? v : (v as ArrayBufferView).buffer;
    if (!isArrayBuffer(buffer)) throw new TypeError(`${where}: a SharedArrayBuffer cannot be a batched-copy source`);
    const offset = isArrayBuffer(v) ? 0 : (v as ArrayBufferView).byteOffset;
    const address = v.byteLength === 0 ? 0 : Number(koffi.address(buffer)) + offset;
    return { address, byteLength: (v as ArrayBufferView | ArrayBuffer).byteLength, holder: undefined, host: true };
  }
  if (!source && (isArrayBuffer(v) || ArrayBuffer.isView(v))) {
    throw new TypeError(`${where}: host data cannot be a batched-copy destination (it would be written after copyBatch returns): use a PinnedHostBuffer`);
  }
  throw new TypeError(
    `${where} must be a DeviceBuffer, a PinnedHostBuffer, a device address${source ? ' or host data (TypedArray, DataView, ArrayBuffer)' : ''}, got ${describe(v)}`,
  );
}

function offsetArg(where: string, v: unknown): number {
  if (v === undefined) return 0;
  return checkSize(where, v);
}

/**
 * Enqueues `copies` on `stream` with one cuMemcpyBatchAsync call: the batch as a whole runs in stream
 * order; copies within it run in any order (so none may depend on another). Endpoints are
 * DeviceBuffers, PinnedHostBuffers or device addresses; a source may also be host data, which is read
 * before the call returns. Every copy is bounds-checked first. Needs a CUDA 13.0 driver (the objects
 * layer binds 13.0's cuMemcpyBatchAsync; 12.8's has another signature): an older driver gets an Error
 * saying so. `stream` must be a created stream (not the legacy default stream).
 * Each copy may carry its own attributes (source access order, overlap hint, source and destination
 * location hints for managed memory); consecutive copies with the same attributes share one attribute
 * set in the call.
 *
 * ```ts
 * copyBatch(stream, [{ dst: a, src: hostA }, { dst: b, src: c, bytes: 1024 }]);
 * copyBatch(stream, [{ dst: managed, src: dev, dstLocationHint: 'host', srcAccessOrder: 'any' }]);
 * ```
 * @param stream A created stream (not the legacy default stream) to enqueue the batch on.
 * @param copies The copies: each `{ dst, src, bytes?, srcOffset?, dstOffset? }` plus optional per-copy hints; none may depend on another.
 * @param options `srcAccessOrder` ('stream', the default: sources read in stream order; 'any': at any time) and `preferOverlapWithCompute` (a hint; default false), for every copy that sets none.
 */
export function copyBatch(stream: StreamLike, copies: readonly BatchCopy[], options: CopyBatchOptions = {}): void {
  const where = 'copyBatch';
  if (stream === undefined || stream === null)
    throw new TypeError(`${where}: stream is required (a created Stream: the legacy default stream cannot run batched copies)`);
  const s = toStream(stream, `${where}: stream`) as Stream;
  if (s.handle === 0 || s.handle === 1)
    throw new TypeError(`${where}: the legacy default stream cannot run batched copies: use Stream.create() (or the per-thread default stream)`);
  if (!Array.isArray(copies)) throw new TypeError(`${where}: copies must be an array of { dst, src, bytes? }, got ${describe(copies)}`);
  if (copies.length === 0) throw new RangeError(`${where}: copies is empty`);
  if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options must be an object, got ${describe(options)}`);
  checkKeys(where, options, ['srcAccessOrder', 'preferOverlapWithCompute']);
  const order = accessOrderArg(`${where}: srcAccessOrder`, options.srcAccessOrder) ?? 'stream';
  const overlap = booleanArg(`${where}: preferOverlapWithCompute`, options.preferOverlapWithCompute) ?? false;

  const n = copies.length;
  const dsts = new BigUint64Array(n);
  const srcs = new BigUint64Array(n);
  const sizes = new BigUint64Array(n);
  const attributes: Attributes[] = new Array(n);
  const holders: Resource[] = [];
  const keep: unknown[] = []; // host sources stay reachable until the call returns
  for (let i = 0; i < n; i++) {
    const c = parseCopy(`${where}: copies[${i}]`, copies[i], order, overlap);
    dsts[i] = BigInt(c.dst);
    srcs[i] = BigInt(c.src);
    sizes[i] = BigInt(c.bytes);
    attributes[i] = c.attributes;
    if (c.hostSource !== undefined) keep.push(c.hostSource);
    holders.push(...c.holders);
  }
  const v = installedDriver();
  if (v < 13000) {
    throw new ObjectsError(
      where,
      OBJECTS_ERROR.unavailable,
      `${where}: batched copies need a CUDA 13.0 driver (580 or newer) here: the objects layer calls 13.0's cuMemcpyBatchAsync${v >= 12080 ? ', and the 12.8 form this driver has takes other arguments' : ' (added in CUDA 12.8)'}; the installed driver supports CUDA ${version(v)}`,
    );
  }
  const { attrs, starts } = encodeAttributeRuns(attributes);
  if (holders.length > 0) noteUse(s.context, s.handle, ...holders);
  drv.callOnStream(s.context, s.handle, 'cuMemcpyBatchAsync', dsts, srcs, sizes, n, attrs, starts, starts.length, s.handle);
  void keep;
}

/** One copy's CUmemcpyAttributes: { srcAccessOrder, srcLocHint { type, id }, dstLocHint { type, id }, flags }. @internal */
export interface Attributes {
  order: number;
  srcHint: { type: number; id: number };
  dstHint: { type: number; id: number };
  flags: number;
}

function accessOrderArg(where: string, v: unknown): 'stream' | 'any' | undefined {
  if (v !== undefined && v !== 'stream' && v !== 'any') throw new TypeError(`${where} must be 'stream' or 'any', got ${describe(v)}`);
  return v;
}

function booleanArg(where: string, v: unknown): boolean | undefined {
  if (v !== undefined && typeof v !== 'boolean') throw new TypeError(`${where} must be a boolean, got ${describe(v)}`);
  return v;
}

/** A location hint (CUmemLocation), or the "no hint" location (type 0) when none is given. */
function hintArg(where: string, v: unknown): { type: number; id: number } {
  return v === undefined ? { type: drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_INVALID, id: 0 } : encodeLocation(where, v);
}

/** The addresses, size, attributes and holders of copy `c`, checked (bounds included); throws before any call. */
function parseCopy(w: string, c: unknown, batchOrder: 'stream' | 'any', batchOverlap: boolean) {
  if (typeof c !== 'object' || c === null) throw new TypeError(`${w} must be an object { dst, src, bytes? }, got ${describe(c)}`);
  const r = c as Record<string, unknown>;
  for (const k of Object.keys(r)) if (!COPY_FIELDS.includes(k)) throw new TypeError(`${w}: unknown field '${k}' (expected ${COPY_FIELDS.join(', ')})`);
  const d = endpoint(`${w}.dst`, r.dst, false);
  const sr = endpoint(`${w}.src`, r.src, true);
  const srcOffset = offsetArg(`${w}.srcOffset`, r.srcOffset);
  const dstOffset = offsetArg(`${w}.dstOffset`, r.dstOffset);
  let bytes: number;
  if (r.bytes === undefined) {
    if (sr.byteLength === undefined) throw new TypeError(`${w}: bytes is required when src is an address`);
    bytes = sr.byteLength - srcOffset;
    if (bytes < 0) throw new RangeError(`${w}: srcOffset ${srcOffset} is past the end of the source (${sr.byteLength} bytes)`);
  } else bytes = offsetArg(`${w}.bytes`, r.bytes);
  if (bytes === 0) throw new RangeError(`${w}: nothing to copy (0 bytes)`);
  if (sr.byteLength !== undefined && srcOffset + bytes > sr.byteLength)
    throw new RangeError(`${w}: ${bytes} bytes from offset ${srcOffset} run past the end of the source (${sr.byteLength} bytes)`);
  if (d.byteLength !== undefined && dstOffset + bytes > d.byteLength)
    throw new RangeError(`${w}: ${bytes} bytes at offset ${dstOffset} run past the end of the destination (${d.byteLength} bytes)`);
  const ownOrder = accessOrderArg(`${w}.srcAccessOrder`, r.srcAccessOrder);
  if (sr.host && ownOrder !== undefined)
    throw new TypeError(`${w}.srcAccessOrder: host data is always read during the copyBatch call; srcAccessOrder applies to buffers and addresses`);
  const O = drv.CUmemcpySrcAccessOrder;
  const order = sr.host
    ? O.CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL
    : (ownOrder ?? batchOrder) === 'any'
      ? O.CU_MEMCPY_SRC_ACCESS_ORDER_ANY
      : O.CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  const overlap = booleanArg(`${w}.preferOverlapWithCompute`, r.preferOverlapWithCompute) ?? batchOverlap;
  const attributes: Attributes = {
    order,
    srcHint: hintArg(`${w}.srcLocationHint`, r.srcLocationHint),
    dstHint: hintArg(`${w}.dstLocationHint`, r.dstLocationHint),
    flags: overlap ? drv.CUmemcpyFlags.CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE : 0,
  };
  const holders = [d.holder, sr.holder].filter((x): x is Resource => x !== undefined);
  return { dst: d.address + dstOffset, src: sr.address + srcOffset, bytes, attributes, hostSource: sr.host ? r.src : undefined, holders };
}

function sameAttributes(a: Attributes, b: Attributes): boolean {
  return (
    a.order === b.order &&
    a.flags === b.flags &&
    a.srcHint.type === b.srcHint.type &&
    a.srcHint.id === b.srcHint.id &&
    a.dstHint.type === b.dstHint.type &&
    a.dstHint.id === b.dstHint.id
  );
}

/**
 * One CUmemcpyAttributes (24 bytes) per run of consecutive copies with the same attributes, and the
 * index of each run's first copy (the driver applies attrs[k] from starts[k] to the next start). @internal
 */
export function encodeAttributeRuns(attributes: readonly Attributes[]): { attrs: Uint8Array; starts: BigUint64Array } {
  const runs: number[] = [];
  attributes.forEach((a, i) => {
    if (i === 0 || !sameAttributes(attributes[runs[runs.length - 1]], a)) runs.push(i);
  });
  const attrs = new Uint8Array(24 * runs.length);
  const av = new DataView(attrs.buffer);
  runs.forEach((i, k) => {
    const a = attributes[i];
    av.setInt32(24 * k, a.order, true);
    av.setInt32(24 * k + 4, a.srcHint.type, true);
    av.setInt32(24 * k + 8, a.srcHint.id, true);
    av.setInt32(24 * k + 12, a.dstHint.type, true);
    av.setInt32(24 * k + 16, a.dstHint.id, true);
    av.setUint32(24 * k + 20, a.flags, true);
  });
  return { attrs, starts: BigUint64Array.from(runs, (x) => BigInt(x)) };
}
