// Virtual memory management in pieces, for programs that place memory themselves: PhysicalMemory is
// one cuMemCreate allocation (on a device, or host NUMA node; pinned or managed; with the allocation
// properties CUmemAllocationProp carries) and VirtualAddressRange one cuMemAddressReserve range (with a
// chosen alignment or address) into which allocations are mapped at chosen offsets, each made
// accessible to chosen devices. One range can be striped over chunks on several devices.
// (VirtualMemoryResource, vmm.ts, is the growable one-device region built from the same calls.)
import * as drv from '../driver';
import { Context, contextOf } from '../context';
import { checkKeys, describe } from '../describe';
import { OBJECTS_ERROR, ObjectsError } from '../errors';
import { Resource, whenNoHostFuncs } from '../lifecycle';
import { DeviceBuffer } from './device-buffer';
import { encodeLocation, type MemoryLocation } from './location';
import { SEALED, type Sealed, checkSealed } from '../sealed';

/** Options of {@link PhysicalMemory.create} (and {@link PhysicalMemory.granularity}). */
export interface PhysicalMemoryOptions {
  /** Bytes to allocate: a multiple of the granularity (see {@link PhysicalMemory.granularity}). */
  size: number;
  /** Where the memory lives (default: the context's device): a device ordinal, `{ device }` or `{ hostNuma }`. */
  location?: MemoryLocation;
  /** 'pinned' (default: CU_MEM_ALLOCATION_TYPE_PINNED) or 'managed' (CU_MEM_ALLOCATION_TYPE_MANAGED, where the driver supports it). */
  type?: 'pinned' | 'managed';
  /** Handle types the memory may be exported as: 'posixFd', 'fabric' (default none). */
  handleTypes?: readonly ('posixFd' | 'fabric')[];
  /** Ask for compressible memory (allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC). */
  compression?: boolean;
  /** Ask for memory usable with GPUDirect RDMA (allocFlags.gpuDirectRDMACapable). */
  gpuDirectRdma?: boolean;
  /** What the memory is for (allocFlags.usage): 'tilePool' (sparse tiles), 'hwDecompress' (the copy engine's decompression). */
  usage?: readonly ('tilePool' | 'hwDecompress')[];
  /** The context to make the calls in (default: the location's device's primary context, else the current one). */
  context?: Context;
}

const PROP_KEYS = ['size', 'location', 'type', 'handleTypes', 'compression', 'gpuDirectRdma', 'usage', 'context'];

function sizeArg(where: string, v: unknown, positive = true): number {
  if (typeof v !== 'number') throw new TypeError(`${where} must be a number of bytes, got ${describe(v)}`);
  if (!Number.isSafeInteger(v) || v < 0 || (positive && v === 0))
    throw new RangeError(`${where} must be a ${positive ? 'positive' : 'non-negative'} integer, got ${describe(v)}`);
  return v;
}

function optionsArg(where: string, v: unknown, keys: readonly string[]): Record<string, unknown> {
  if (typeof v !== 'object' || v === null) throw new TypeError(`${where}: options must be an object, got ${describe(v)}`);
  checkKeys(where, v, keys);
  return v as Record<string, unknown>;
}

/** CUmemAllocationProp (32 bytes) for the options; checks them all first. @internal */
export function encodeAllocationProp(where: string, o: Record<string, unknown>, defaultDevice: number): Uint8Array {
  const loc = encodeLocation(`${where}: location`, o.location ?? defaultDevice);
  if (o.type !== undefined && o.type !== 'pinned' && o.type !== 'managed')
    throw new TypeError(`${where}: type must be 'pinned' or 'managed', got ${describe(o.type)}`);
  let handles = 0;
  if (o.handleTypes !== undefined) {
    if (!Array.isArray(o.handleTypes)) throw new TypeError(`${where}: handleTypes must be an array of 'posixFd' / 'fabric', got ${describe(o.handleTypes)}`);
    for (const h of o.handleTypes) {
      if (h === 'posixFd') handles |= drv.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
      else if (h === 'fabric') handles |= drv.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_FABRIC;
      else throw new TypeError(`${where}: handleTypes entries must be 'posixFd' or 'fabric', got ${describe(h)}`);
    }
  }
  let usage = 0;
  if (o.usage !== undefined) {
    if (!Array.isArray(o.usage)) throw new TypeError(`${where}: usage must be an array of 'tilePool' / 'hwDecompress', got ${describe(o.usage)}`);
    for (const u of o.usage) {
      if (u === 'tilePool') usage |= drv.CU_MEM_CREATE_USAGE_TILE_POOL;
      else if (u === 'hwDecompress') usage |= drv.CU_MEM_CREATE_USAGE_HW_DECOMPRESS;
      else throw new TypeError(`${where}: usage entries must be 'tilePool' or 'hwDecompress', got ${describe(u)}`);
    }
  }
  for (const k of ['compression', 'gpuDirectRdma'])
    if (o[k] !== undefined && typeof o[k] !== 'boolean') throw new TypeError(`${where}: ${k} must be a boolean, got ${describe(o[k])}`);
  const prop = new Uint8Array(32); // { type, requestedHandleTypes, location { type, id }, win32HandleMetaData, allocFlags { compressionType u8, gpuDirectRDMACapable u8, usage u16, reserved[4] } }
  const v = new DataView(prop.buffer);
  const T = drv.CUmemAllocationType;
  v.setInt32(0, o.type === 'managed' ? T.CU_MEM_ALLOCATION_TYPE_MANAGED : T.CU_MEM_ALLOCATION_TYPE_PINNED, true);
  v.setInt32(4, handles, true);
  v.setInt32(8, loc.type, true);
  v.setInt32(12, loc.id, true);
  if (o.compression) prop[24] = drv.CUmemAllocationCompType.CU_MEM_ALLOCATION_COMP_GENERIC;
  if (o.gpuDirectRdma) prop[25] = 1;
  v.setUint16(26, usage, true);
  return prop;
}

/** The context for `o` (explicit, else the device location's primary context, else the current one). */
function contextFor(where: string, o: Record<string, unknown>): Context {
  if (o.context !== undefined) return contextOf(o.context, `${where}: context`);
  const loc = o.location;
  const device = typeof loc === 'number' ? loc : typeof loc === 'object' && loc !== null && 'device' in loc ? (loc as { device: number }).device : undefined;
  return device !== undefined ? Context.primary(device) : Context.current();
}

function granularityOf(ctx: Context, prop: Uint8Array, which: 'minimum' | 'recommended'): number {
  const F = drv.CUmemAllocationGranularity_flags;
  drv.call(
    ctx,
    'cuMemGetAllocationGranularity',
    drv.out64,
    prop,
    which === 'minimum' ? F.CU_MEM_ALLOC_GRANULARITY_MINIMUM : F.CU_MEM_ALLOC_GRANULARITY_RECOMMENDED,
  );
  const g = drv.outNumber();
  if (g <= 0) throw new ObjectsError('PhysicalMemory.granularity', OBJECTS_ERROR.missing, `the driver reported an allocation granularity of ${g}`);
  return g;
}

/**
 * Physical memory from cuMemCreate, not yet at any address: map it into a {@link VirtualAddressRange}.
 * Closing it releases the handle; memory still mapped somewhere stays until it is unmapped.
 *
 * ```ts
 * const g = PhysicalMemory.granularity({ location: 1 });
 * using chunk = PhysicalMemory.create({ size: 4 * g, location: 1 });
 * ```
 */
export class PhysicalMemory extends Resource {
  /** The context the calls were made in. */
  readonly context: Context;
  /** Bytes allocated. */
  readonly size: number;
  /** Where the memory lives, as the driver was told: `{ type, id }` of CUmemLocation. */
  readonly location: {
    /** The CUmemLocationType value (a device, a host NUMA node, …). */
    readonly type: number;
    /** The device ordinal or NUMA node id. */
    readonly id: number;
  };
  /** The allocation type: 'pinned' or 'managed'. */
  readonly type: 'pinned' | 'managed';
  /** The minimum granularity of this kind of allocation: sizes and map offsets are multiples of it. */
  readonly granularity: number;
  /** The CUmemGenericAllocationHandle. @internal */
  readonly handle: bigint;

  private constructor(seal: Sealed, ctx: Context, size: number, prop: Uint8Array, granularity: number, handle: bigint) {
    checkSealed(seal, 'PhysicalMemory', 'PhysicalMemory.create()');
    super('PhysicalMemory', () => whenNoHostFuncs(() => drv.release(ctx, 'cuMemRelease', handle)), [ctx]);
    const v = new DataView(prop.buffer);
    this.context = ctx;
    this.size = size;
    this.location = Object.freeze({ type: v.getInt32(8, true), id: v.getInt32(12, true) });
    this.type = v.getInt32(0, true) === drv.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_MANAGED ? 'managed' : 'pinned';
    this.granularity = granularity;
    this.handle = handle;
  }

  /**
   * The allocation granularity for memory like `options` describes (size is not needed): 'minimum'
   * (default: what sizes and offsets must be multiples of) or 'recommended' (faster).
   * @param options `location` (a device ordinal, `{ device }` or `{ hostNuma }`; default the context's device), `type` ('pinned', the default, or 'managed'), `handleTypes`, `compression`, `gpuDirectRdma`, `usage` and `context`, as for create().
   * @param which 'minimum' (the default: what sizes and offsets must be multiples of) or 'recommended' (faster).
   */
  static granularity(options: Omit<PhysicalMemoryOptions, 'size'> = {}, which: 'minimum' | 'recommended' = 'minimum'): number {
    const where = 'PhysicalMemory.granularity';
    const o = optionsArg(where, options, PROP_KEYS);
    if (which !== 'minimum' && which !== 'recommended') throw new TypeError(`${where}: which must be 'minimum' or 'recommended', got ${describe(which)}`);
    encodeAllocationProp(where, o, 0); // every option checked before the driver loads
    const ctx = contextFor(where, o);
    const prop = encodeAllocationProp(where, o, ctx.device);
    return granularityOf(ctx, prop, which);
  }

  /**
   * Allocates `size` bytes of physical memory (cuMemCreate) with the given location, type and properties.
   * @param options `size` (bytes, a multiple of the granularity), `location` (a device ordinal, `{ device }` or `{ hostNuma }`; default the context's device), `type` ('pinned' or 'managed'), `handleTypes` (export handle kinds: 'posixFd', 'fabric'), `compression`, `gpuDirectRdma`, `usage` and `context`.
   */
  static create(options: PhysicalMemoryOptions): PhysicalMemory {
    const where = 'PhysicalMemory.create';
    const o = optionsArg(where, options, PROP_KEYS);
    const size = sizeArg(`${where}: size`, o.size);
    encodeAllocationProp(where, o, 0); // every option checked before the driver loads
    const ctx = contextFor(where, o);
    const prop = encodeAllocationProp(where, o, ctx.device);
    ctx.check();
    const g = granularityOf(ctx, prop, 'minimum');
    if (size % g !== 0) throw new RangeError(`${where}: size ${size} is not a multiple of the ${g}-byte allocation granularity (PhysicalMemory.granularity())`);
    drv.allocate(ctx, 'cuMemCreate', drv.out64, size, prop, 0); // out of memory: the cache gives back and it retries once
    return new PhysicalMemory(SEALED, ctx, size, prop, g, drv.out64[0]);
  }

  toString(): string {
    return `PhysicalMemory(${this.size} bytes, ${this.type}, location ${this.location.type}:${this.location.id})`;
  }
}

/** Options of {@link VirtualAddressRange.reserve}. */
export interface ReserveOptions {
  /** Bytes of address space. */
  size: number;
  /** Alignment of the range's start in bytes (a power of two; default 0: the driver's choice). */
  alignment?: number;
  /** An address to ask for (a hint the driver may ignore; default 0: anywhere). */
  address?: number;
  /** The context to make the calls in (default: the current one). */
  context?: Context;
}

/** One allocation mapped into a range. */
export interface Mapping {
  /** Byte offset into the range. */
  readonly offset: number;
  /** Bytes mapped. */
  readonly size: number;
  /** The memory mapped there. */
  readonly memory: PhysicalMemory;
}

interface RangeState {
  ctx: Context;
  va: number;
  size: number;
  mappings: Mapping[];
}

function destroyRange(st: RangeState): void {
  if (!drv.bindForRelease(st.ctx)) return; // the context is unusable: its memory went with it
  let first: unknown;
  const attempt = (func: string, ...args: unknown[]): void => {
    const status = drv.native(func)(...args);
    if (status !== 0 && first === undefined) first = drv.fail(st.ctx, func, status);
  };
  for (const m of st.mappings) attempt('cuMemUnmap', st.va + m.offset, m.size);
  st.mappings = [];
  attempt('cuMemAddressFree', st.va, st.size);
  if (first !== undefined) throw first;
}

/** CUmemAccessDesc[] giving each of `devices` read-write access. */
function accessDescs(where: string, devices: unknown): Uint8Array {
  if (!Array.isArray(devices) || devices.length === 0) throw new TypeError(`${where} must be a non-empty array of device ordinals, got ${describe(devices)}`);
  const access = new Uint8Array(12 * devices.length); // { location { type, id }, flags }
  const v = new DataView(access.buffer);
  devices.forEach((d, i) => {
    const loc = encodeLocation(`${where}[${i}]`, d);
    v.setInt32(12 * i, loc.type, true);
    v.setInt32(12 * i + 4, loc.id, true);
    v.setInt32(12 * i + 8, drv.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE, true);
  });
  return access;
}

/**
 * A reserved range of virtual addresses (cuMemAddressReserve), into which {@link PhysicalMemory}
 * allocations, on any device, are mapped at chosen offsets. close() unmaps everything and frees the
 * range; the mapped allocations stay alive while mapped.
 *
 * ```ts
 * using range = VirtualAddressRange.reserve({ size: 2 * chunk, alignment: chunk });
 * range.map(0, PhysicalMemory.create({ size: chunk, location: 0 }), { accessFrom: [0, 1] });
 * range.map(chunk, PhysicalMemory.create({ size: chunk, location: 1 }), { accessFrom: [0, 1] });
 * using all = range.buffer(); // one DeviceBuffer striped over two devices
 * ```
 */
export class VirtualAddressRange extends Resource {
  /** The context the calls are made in. */
  readonly context: Context;
  /** Bytes of address space reserved. */
  readonly size: number;
  private readonly state: RangeState;

  private constructor(seal: Sealed, state: RangeState) {
    checkSealed(seal, 'VirtualAddressRange', 'VirtualAddressRange.reserve()');
    super('VirtualAddressRange', () => whenNoHostFuncs(() => destroyRange(state)), [state.ctx]);
    this.context = state.ctx;
    this.size = state.size;
    this.state = state;
  }

  /**
   * Reserves `size` bytes of virtual address space, aligned to `alignment` when given.
   * @param options `size` (bytes of address space), `alignment` (of the start in bytes, a power of two; default the driver's choice), `address` (a hint where; default anywhere) and `context` (default: the current one).
   */
  static reserve(options: ReserveOptions): VirtualAddressRange {
    const where = 'VirtualAddressRange.reserve';
    const o = optionsArg(where, options, ['size', 'alignment', 'address', 'context']);
    const size = sizeArg(`${where}: size`, o.size);
    const alignment = sizeArg(`${where}: alignment`, o.alignment ?? 0, false);
    if (alignment !== 0 && !Number.isInteger(Math.log2(alignment))) throw new RangeError(`${where}: alignment must be a power of two, got ${alignment}`);
    const address = sizeArg(`${where}: address`, o.address ?? 0, false);
    const ctx = o.context !== undefined ? contextOf(o.context, `${where}: context`) : Context.current();
    ctx.check();
    drv.call(ctx, 'cuMemAddressReserve', drv.out64, size, alignment, address, 0);
    return new VirtualAddressRange(SEALED, { ctx, va: drv.outNumber(), size, mappings: [] });
  }

  /** The range's first address (fixed for its life). */
  get address(): drv.CUdeviceptr {
    this.assertOpen();
    return this.state.va as drv.CUdeviceptr;
  }

  /** What is mapped where, by offset. */
  get mappings(): readonly Mapping[] {
    return this.state.mappings.slice().sort((a, b) => a.offset - b.offset);
  }

  /**
   * Maps `memory` (all of it) at `offset` into the range (cuMemMap) and gives `accessFrom` devices
   * read-write access (cuMemSetAccess; default: the device the memory lives on, or the context's for
   * host memory). The offset must be a multiple of the memory's granularity and the mapping must fit
   * and overlap no other. The range keeps `memory` alive.
   * @param offset Byte offset into the range, a multiple of the memory's granularity.
   * @param memory The allocation to map, all of it; the range keeps it alive.
   * @param options `accessFrom`: device ordinals given read-write access (default: the device the memory lives on, or the context's for host memory).
   */
  map(offset: number, memory: PhysicalMemory, options: { accessFrom?: readonly number[] } = {}): Mapping {
    const where = 'VirtualAddressRange.map';
    this.assertOpen();
    const off = sizeArg(`${where}: offset`, offset, false);
    if (!(memory instanceof PhysicalMemory)) throw new TypeError(`${where}: memory must be a PhysicalMemory, got ${describe(memory)}`);
    if (memory.closed) throw new TypeError(`${where}: memory is closed`);
    const o = optionsArg(where, options, ['accessFrom']);
    const device = memory.location.type === drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE ? memory.location.id : this.context.device;
    const access = accessDescs(`${where}: accessFrom`, o.accessFrom ?? [device]);
    if (off % memory.granularity !== 0)
      throw new RangeError(`${where}: offset ${off} is not a multiple of the memory's ${memory.granularity}-byte granularity`);
    if (off + memory.size > this.size) throw new RangeError(`${where}: ${memory.size} bytes at offset ${off} run past the ${this.size}-byte range`);
    const clash = this.state.mappings.find((m) => off < m.offset + m.size && m.offset < off + memory.size);
    if (clash) throw new RangeError(`${where}: bytes [${off}, ${off + memory.size}) overlap the mapping at [${clash.offset}, ${clash.offset + clash.size})`);
    const at = this.state.va + off;
    drv.call(this.context, 'cuMemMap', at, memory.size, 0, memory.handle, 0);
    try {
      drv.call(this.context, 'cuMemSetAccess', at, memory.size, access, access.byteLength / 12);
    } catch (e) {
      drv.native('cuMemUnmap')(at, memory.size);
      throw e;
    }
    this.core.hold(memory.core);
    const m: Mapping = Object.freeze({ offset: off, size: memory.size, memory });
    this.state.mappings.push(m);
    return m;
  }

  /**
   * Gives `accessFrom` devices read-write access to bytes [offset, offset + size) (mapped memory only).
   * @param offset Byte offset into the range of the first byte.
   * @param size Bytes, mapped throughout.
   * @param accessFrom Ordinals of the devices given read-write access.
   */
  setAccess(offset: number, size: number, accessFrom: readonly number[]): void {
    const where = 'VirtualAddressRange.setAccess';
    this.assertOpen();
    const off = sizeArg(`${where}: offset`, offset, false);
    const n = sizeArg(`${where}: size`, size);
    const access = accessDescs(`${where}: accessFrom`, accessFrom);
    this.checkMapped(where, off, n);
    drv.call(this.context, 'cuMemSetAccess', this.state.va + off, n, access, access.byteLength / 12);
  }

  /**
   * Unmaps the mapping that starts at `offset` (cuMemUnmap).
   * @param offset The byte offset a mapping starts at (as passed to map()).
   */
  unmap(offset: number): void {
    const where = 'VirtualAddressRange.unmap';
    this.assertOpen();
    const off = sizeArg(`${where}: offset`, offset, false);
    const i = this.state.mappings.findIndex((m) => m.offset === off);
    if (i < 0) throw new RangeError(`${where}: no mapping starts at offset ${off}`);
    const m = this.state.mappings[i];
    drv.call(this.context, 'cuMemUnmap', this.state.va + off, m.size);
    this.state.mappings.splice(i, 1);
  }

  /**
   * A DeviceBuffer over bytes [offset, offset + byteLength) (default: the whole range), which must be
   * mapped throughout. It keeps the range alive.
   * @param offset Byte offset into the range (default 0).
   * @param byteLength Bytes of the view (default: the rest of the range), mapped throughout.
   */
  buffer(offset = 0, byteLength?: number): DeviceBuffer {
    const where = 'VirtualAddressRange.buffer';
    this.assertOpen();
    const off = sizeArg(`${where}: offset`, offset, false);
    const n = byteLength === undefined ? this.size - off : sizeArg(`${where}: byteLength`, byteLength);
    this.checkMapped(where, off, n);
    return DeviceBuffer.wrap(this.state.va + off, n, { owner: this, context: this.context });
  }

  /** RangeError unless bytes [off, off + n) lie in the range and are mapped throughout. */
  private checkMapped(where: string, off: number, n: number): void {
    if (off + n > this.size) throw new RangeError(`${where}: bytes [${off}, ${off + n}) run past the ${this.size}-byte range`);
    let at = off;
    for (const m of this.mappings) if (m.offset <= at && at < m.offset + m.size) at = m.offset + m.size;
    if (at < off + n) throw new RangeError(`${where}: bytes [${off}, ${off + n}) are not all mapped (nothing mapped at offset ${at})`);
  }

  toString(): string {
    return `VirtualAddressRange(0x${this.state.va.toString(16)}, ${this.size} bytes, ${this.state.mappings.length} mapping(s))`;
  }
}
