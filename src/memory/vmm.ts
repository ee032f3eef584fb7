// VirtualMemoryResource: a growable region of device memory through the virtual memory management API.
// A large virtual address range is reserved once (cuMemAddressReserve); grow() backs more of it with
// physical chunks (cuMemCreate → cuMemMap → cuMemSetAccess), so the region's address never moves and
// buffers made from it earlier stay valid. close() unmaps, releases the chunks and frees the range.
import * as drv from '../driver';
import { Context, contextOf } from '../context';
import { checkKeys, describe } from '../describe';
import { OBJECTS_ERROR, ObjectsError } from '../errors';
import { Resource, checkSize, whenNoHostFuncs } from '../lifecycle';
import { DeviceBuffer } from './device-buffer';
import { encodeLocation } from './location';
import { SEALED, type Sealed, checkSealed } from '../sealed';

/** Options of {@link VirtualMemoryResource.create}. */
export interface VirtualMemoryOptions {
  /** Bytes of virtual address space to reserve: the most the region can grow to (rounded up to the granularity). */
  maxSize: number;
  /** Bytes to map at once (default 0: map with grow()). */
  initialSize?: number;
  /** Device whose memory backs the region (default: the context's device). */
  device?: number;
  /** Devices given read-write access to the mapped memory (default: `[device]`). */
  accessFrom?: readonly number[];
  /** Granularity of the physical chunks: 'recommended' (default, faster) or 'minimum' (less rounding). */
  granularity?: 'minimum' | 'recommended';
  /** The context to make the calls in (default: `device`'s primary context, else the current one). */
  context?: Context;
  /** Alignment of the reserved range's start in bytes (a power of two; default 0: the driver's choice). */
  alignment?: number;
}

/** One physical chunk mapped into the region. */
interface Chunk {
  handle: bigint;
  offset: number;
  size: number;
}

/** What the destroy needs (never the wrapper: the FinalizationRegistry holds it). */
interface State {
  ctx: Context;
  va: number;
  reserved: number;
  mapped: number;
  chunks: Chunk[];
}

function destroy(st: State): void {
  if (!drv.bindForRelease(st.ctx)) return; // the context is unusable: its memory went with it
  let first: unknown;
  const attempt = (func: string, ...args: unknown[]): void => {
    const status = drv.native(func)(...args);
    if (status !== 0 && first === undefined) first = drv.fail(st.ctx, func, status);
  };
  if (st.mapped > 0) attempt('cuMemUnmap', st.va, st.mapped);
  for (const c of st.chunks) attempt('cuMemRelease', c.handle);
  attempt('cuMemAddressFree', st.va, st.reserved);
  st.chunks = [];
  st.mapped = 0;
  if (first !== undefined) throw first;
}

function positive(where: string, v: unknown): number {
  if (typeof v !== 'number') throw new TypeError(`${where} must be a number of bytes, got ${describe(v)}`);
  return checkSize(where, v);
}

/**
 * A growable region of device memory (CUDA virtual memory management): `maxSize` bytes of virtual
 * address space reserved up front, backed by physical memory on demand with {@link grow}. Its address
 * never moves, so buffers made with {@link buffer} stay valid as it grows; they keep it alive.
 *
 * ```ts
 * using vm = VirtualMemoryResource.create({ maxSize: 1 << 30 }); // 1 GiB of address space, nothing mapped
 * vm.grow(64 << 20);                                               // map 64 MiB
 * using buf = vm.buffer();                                         // a DeviceBuffer over the mapped part
 * ```
 */
export class VirtualMemoryResource extends Resource {
  /** The context the region's calls are made in. */
  readonly context: Context;
  /** Device whose memory backs the region. */
  readonly device: number;
  /** Size of the physical chunks' granularity in bytes: grow() rounds up to a multiple of it. */
  readonly granularity: number;
  /** Bytes of virtual address space reserved: the most the region can grow to. */
  readonly reservedSize: number;
  /** Devices given read-write access to the mapped memory. */
  readonly accessFrom: readonly number[];
  private readonly state: State;
  private readonly prop: Uint8Array;
  private readonly access: Uint8Array;

  private constructor(
    seal: Sealed,
    ctx: Context,
    device: number,
    granularity: number,
    state: State,
    prop: Uint8Array,
    access: Uint8Array,
    accessFrom: number[],
  ) {
    checkSealed(seal, 'VirtualMemoryResource', 'VirtualMemoryResource.create()');
    super('VirtualMemoryResource', () => whenNoHostFuncs(() => destroy(state)), [ctx]);
    this.context = ctx;
    this.device = device;
    this.granularity = granularity;
    this.reservedSize = state.reserved;
    this.state = state;
    this.prop = prop;
    this.access = access;
    this.accessFrom = Object.freeze(accessFrom.slice());
  }

  /**
   * Reserves `maxSize` bytes of address space on a device, mapping `initialSize` bytes of it.
   * @param options `maxSize` (bytes of address space to reserve: the most it can grow to), `initialSize` (bytes to map at once; default 0), `device` (whose memory backs it; default the context's), `accessFrom` (device ordinals given read-write access; default `[device]`), `granularity` ('recommended', the default, or 'minimum'), `alignment` (of the start in bytes, a power of two; default the driver's choice) and `context`.
   */
  static create(options: VirtualMemoryOptions): VirtualMemoryResource {
    const where = 'VirtualMemoryResource.create';
    if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options must be an object with maxSize, got ${describe(options)}`);
    const o = options as unknown as Record<string, unknown>;
    const keys = ['maxSize', 'initialSize', 'device', 'accessFrom', 'granularity', 'context', 'alignment'];
    checkKeys(where, o, keys);
    const maxSize = positive(`${where}: maxSize`, o.maxSize);
    if (maxSize === 0) throw new RangeError(`${where}: maxSize must be positive`);
    const initial = positive(`${where}: initialSize`, o.initialSize ?? 0);
    const alignment = positive(`${where}: alignment`, o.alignment ?? 0);
    if (alignment !== 0 && !Number.isInteger(Math.log2(alignment))) throw new RangeError(`${where}: alignment must be a power of two, got ${alignment}`);
    if (o.granularity !== undefined && o.granularity !== 'minimum' && o.granularity !== 'recommended')
      throw new TypeError(`${where}: granularity must be 'minimum' or 'recommended', got ${describe(o.granularity)}`);
    if (o.device !== undefined) encodeLocation(`${where}: device`, o.device);
    const ctx =
      o.context !== undefined ? contextOf(o.context, `${where}: context`) : o.device !== undefined ? Context.primary(o.device as number) : Context.current();
    ctx.check();
    const device = (o.device as number | undefined) ?? ctx.device;
    const accessFrom = o.accessFrom ?? [device];
    if (!Array.isArray(accessFrom) || accessFrom.length === 0)
      throw new TypeError(`${where}: accessFrom must be a non-empty array of device ordinals, got ${describe(accessFrom)}`);
    const access = new Uint8Array(12 * accessFrom.length); // CUmemAccessDesc[]: { location { type, id }, flags }
    const adv = new DataView(access.buffer);
    accessFrom.forEach((d, i) => {
      const loc = encodeLocation(`${where}: accessFrom[${i}]`, d);
      adv.setInt32(12 * i, loc.type, true);
      adv.setInt32(12 * i + 4, loc.id, true);
      adv.setInt32(12 * i + 8, drv.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE, true);
    });
    const prop = new Uint8Array(32); // CUmemAllocationProp: pinned device memory, no shareable handle
    const pv = new DataView(prop.buffer);
    pv.setInt32(0, drv.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED, true);
    pv.setInt32(8, drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, true);
    pv.setInt32(12, device, true);
    const option =
      o.granularity === 'minimum'
        ? drv.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM
        : drv.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_RECOMMENDED;
    drv.call(ctx, 'cuMemGetAllocationGranularity', drv.out64, prop, option);
    const granularity = drv.outNumber();
    if (granularity <= 0) throw new ObjectsError(where, OBJECTS_ERROR.missing, `${where}: the driver reported an allocation granularity of ${granularity}`);
    const reserved = Math.ceil(maxSize / granularity) * granularity;
    if (initial > reserved) throw new RangeError(`${where}: initialSize ${initial} is larger than maxSize ${maxSize}`);
    drv.call(ctx, 'cuMemAddressReserve', drv.out64, reserved, alignment, 0, 0);
    const state: State = { ctx, va: drv.outNumber(), reserved, mapped: 0, chunks: [] };
    const vm = new VirtualMemoryResource(SEALED, ctx, device, granularity, state, prop, access, accessFrom as number[]);
    if (initial > 0) {
      try {
        vm.grow(initial);
      } catch (e) {
        vm.close();
        throw e;
      }
    }
    return vm;
  }

  /** The region's device address (fixed for its life). */
  get address(): drv.CUdeviceptr {
    this.assertOpen();
    return this.state.va as drv.CUdeviceptr;
  }

  /** Bytes currently backed by physical memory, from {@link address}. */
  get mappedSize(): number {
    return this.state.mapped;
  }

  /** Number of physical chunks mapped (one per grow()). */
  get chunkCount(): number {
    return this.state.chunks.length;
  }

  /**
   * Backs `bytes` more of the region with physical memory (rounded up to {@link granularity}): one
   * chunk created, mapped after the mapped part and made accessible. Returns the new mapped size.
   * RangeError when the region would pass its reserved size.
   * @param bytes Bytes to add to the mapped part (rounded up to the granularity; 0 adds nothing).
   */
  grow(bytes: number): number {
    this.assertOpen();
    this.context.check();
    const n0 = positive('VirtualMemoryResource.grow: bytes', bytes);
    if (n0 === 0) return this.state.mapped;
    const st = this.state;
    const n = Math.ceil(n0 / this.granularity) * this.granularity;
    if (st.mapped + n > st.reserved) {
      throw new RangeError(
        `VirtualMemoryResource.grow: ${n} more bytes (${n0} rounded to the ${this.granularity}-byte granularity) would pass the reserved ${st.reserved} bytes (${st.mapped} mapped)`,
      );
    }
    const ctx = this.context;
    drv.allocate(ctx, 'cuMemCreate', drv.out64, n, this.prop, 0);
    const handle = drv.out64[0];
    const at = st.va + st.mapped;
    try {
      drv.call(ctx, 'cuMemMap', at, n, 0, handle, 0);
    } catch (e) {
      drv.native('cuMemRelease')(handle);
      throw e;
    }
    try {
      drv.call(ctx, 'cuMemSetAccess', at, n, this.access, this.access.byteLength / 12);
    } catch (e) {
      drv.native('cuMemUnmap')(at, n);
      drv.native('cuMemRelease')(handle);
      throw e;
    }
    st.chunks.push({ handle, offset: st.mapped, size: n });
    st.mapped += n;
    return st.mapped;
  }

  /**
   * Grows the mapped part to at least `totalBytes` (nothing when it already is). Returns the mapped size.
   * @param totalBytes The mapped size wanted, in bytes from the region's start.
   */
  ensure(totalBytes: number): number {
    this.assertOpen();
    const total = positive('VirtualMemoryResource.ensure: totalBytes', totalBytes);
    return total > this.state.mapped ? this.grow(total - this.state.mapped) : this.state.mapped;
  }

  /**
   * A DeviceBuffer over bytes [offset, offset + byteLength) of the mapped part (default: all of it).
   * It never frees anything and keeps this region alive until it is closed.
   * @param offset Byte offset into the region (default 0).
   * @param byteLength Bytes of the view (default: the rest of the mapped part).
   */
  buffer(offset = 0, byteLength?: number): DeviceBuffer {
    this.assertOpen();
    const off = positive('VirtualMemoryResource.buffer: offset', offset);
    if (off > this.state.mapped) throw new RangeError(`VirtualMemoryResource.buffer: offset ${off} is past the ${this.state.mapped} mapped bytes`);
    const n = byteLength === undefined ? this.state.mapped - off : positive('VirtualMemoryResource.buffer: byteLength', byteLength);
    if (off + n > this.state.mapped)
      throw new RangeError(`VirtualMemoryResource.buffer: bytes [${off}, ${off + n}) are past the ${this.state.mapped} mapped bytes (grow() first)`);
    return DeviceBuffer.wrap(this.state.va + off, n, { owner: this, context: this.context });
  }

  toString(): string {
    return `VirtualMemoryResource(0x${this.state.va.toString(16)}, ${this.state.mapped}/${this.state.reserved} bytes mapped)`;
  }
}
