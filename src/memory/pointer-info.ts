// Pointer introspection: what the driver knows of an address (cuPointerGetAttributes, one call for every
// attribute): the kind of memory, its device, whether device and host code can reach it, the allocation
// it lies in and its context. An address CUDA does not know (pageable host memory, or garbage) is
// answered, not refused: memoryType 'unregistered'.
import { koffi, isArrayBuffer } from '../../support';
import * as drv from '../driver';
import { init } from '../context';
import { describe } from '../describe';
import { addressArg } from './arguments';
import { DeviceBuffer } from './device-buffer';
import { PinnedHostBuffer } from './pinned-host-buffer';

/**
 * The kind of memory at an address: 'device' (cuMemAlloc, pools, virtual memory), 'managed'
 * (cuMemAllocManaged, managed pools), 'host' (page-locked host memory: cuMemHostAlloc or registered),
 * 'array' (a CUDA array), or 'unregistered' (memory CUDA does not know, e.g. pageable host memory).
 */
export type PointerMemoryType = 'device' | 'managed' | 'host' | 'array' | 'unregistered';

/** What {@link pointerInfo} reports of an address. */
export interface PointerInfo {
  /** The address asked about. */
  address: number;
  /** The kind of memory. */
  memoryType: PointerMemoryType;
  /**
   * The device the memory belongs to (for host memory: the device of the context that registered or
   * allocated it); undefined for unregistered memory.
   */
  device: number | undefined;
  /** True when kernels can read and write it through this address (device, managed, mapped page-locked memory). */
  deviceAccessible: boolean;
  /** True when host code can read and write it through this address (managed, page-locked, pageable memory). */
  hostAccessible: boolean;
  /** The address kernels use for it (equal to `address` with unified addressing); undefined when none. */
  devicePointer: number | undefined;
  /** The address host code uses for it; undefined when none. */
  hostPointer: number | undefined;
  /** The whole allocation the address lies in: its start and size in bytes; undefined when unknown. */
  range:
    | {
        /** The allocation's first address. */
        start: number;
        /** Its size in bytes. */
        size: number;
      }
    | undefined;
  /** The CUcontext handle the memory belongs to (0 for memory of no one context: pools, managed, VMM). */
  context: number;
  /** The driver's unique id of the allocation (0 when none). */
  bufferId: number;
  /** Memory from a memory pool: the pool's CUmemoryPool handle, else 0. */
  pool: number;
}

const A = drv.CUpointer_attribute;
// Each attribute gets its own zeroed 8-byte slot: the driver writes 1, 4 or 8 bytes (bool, unsigned,
// pointer), all read little-endian from the slot's start.
const ATTRS: readonly number[] = [
  A.CU_POINTER_ATTRIBUTE_CONTEXT,
  A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
  A.CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
  A.CU_POINTER_ATTRIBUTE_HOST_POINTER,
  A.CU_POINTER_ATTRIBUTE_BUFFER_ID,
  A.CU_POINTER_ATTRIBUTE_IS_MANAGED,
  A.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
  A.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
  A.CU_POINTER_ATTRIBUTE_RANGE_SIZE,
  A.CU_POINTER_ATTRIBUTE_MAPPED,
  A.CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
];
const attrList = Int32Array.from(ATTRS);

/** The address of a buffer, host data or address argument; TypeError otherwise (before any driver call). */
function addressOf(where: string, v: unknown): number {
  if (v instanceof DeviceBuffer) return v.ptr;
  if (v instanceof PinnedHostBuffer) return v.hostAddress;
  if (isArrayBuffer(v) || ArrayBuffer.isView(v)) {
    const buffer = isArrayBuffer(v) ? v : (v as ArrayBufferView).buffer;
    if (buffer.byteLength === 0) throw new RangeError(`${where}: an empty ArrayBuffer has no address`);
    return Number(koffi.address(buffer)) + (isArrayBuffer(v) ? 0 : (v as ArrayBufferView).byteOffset);
  }
  if (typeof v === 'number' || typeof v === 'bigint') return addressArg(where, v);
  throw new TypeError(`${where} must be a DeviceBuffer, a PinnedHostBuffer, host data (TypedArray, DataView, ArrayBuffer) or an address, got ${describe(v)}`);
}

function kind(memoryType: number, managed: boolean): PointerMemoryType {
  if (managed) return 'managed';
  const T = drv.CUmemorytype;
  if (memoryType === T.CU_MEMORYTYPE_DEVICE) return 'device';
  if (memoryType === T.CU_MEMORYTYPE_HOST) return 'host';
  if (memoryType === T.CU_MEMORYTYPE_ARRAY) return 'array';
  if (memoryType === T.CU_MEMORYTYPE_UNIFIED) return 'managed';
  return 'unregistered';
}

/**
 * What the driver knows of the memory at `target` (a DeviceBuffer, ManagedBuffer, PinnedHostBuffer,
 * host data or an address): its kind, device, accessibility, allocation range and context, read with
 * one cuPointerGetAttributes call. Needs no current context. Memory CUDA does not know is reported as
 * 'unregistered' (host-accessible; kernels reach it only where the device has pageable memory access:
 * see `Device.properties.pageableMemoryAccess`).
 *
 * ```ts
 * const info = pointerInfo(buf); // { memoryType: 'device', device: 0, deviceAccessible: true, range: { start, size }, … }
 * ```
 * @param target What to ask about: a DeviceBuffer, ManagedBuffer or PinnedHostBuffer, host data (a TypedArray, DataView or ArrayBuffer) or an address (number or bigint).
 */
export function pointerInfo(target: DeviceBuffer | PinnedHostBuffer | ArrayBufferView | ArrayBuffer | number | bigint): PointerInfo {
  const address = addressOf('pointerInfo: target', target);
  init();
  const data = new BigUint64Array(ATTRS.length);
  const slots = new BigUint64Array(ATTRS.length); // void* data[]: the address of each slot
  const base = koffi.address(data.buffer);
  for (let i = 0; i < ATTRS.length; i++) slots[i] = BigInt(base) + BigInt(8 * i);
  drv.global('cuPointerGetAttributes', ATTRS.length, attrList, slots, address);
  const at = (a: number): bigint => data[ATTRS.indexOf(a)];
  const low32 = (a: number): number => Number(at(a) & 0xffffffffn);
  const flag = (a: number): boolean => (at(a) & 0xffn) !== 0n;
  const memoryType = kind(low32(A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE), flag(A.CU_POINTER_ATTRIBUTE_IS_MANAGED));
  const known = memoryType !== 'unregistered';
  const devicePointer = Number(at(A.CU_POINTER_ATTRIBUTE_DEVICE_POINTER));
  const hostPointer = Number(at(A.CU_POINTER_ATTRIBUTE_HOST_POINTER));
  const rangeSize = Number(at(A.CU_POINTER_ATTRIBUTE_RANGE_SIZE));
  return {
    address,
    memoryType,
    device: known ? low32(A.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) | 0 : undefined,
    deviceAccessible: memoryType === 'device' || memoryType === 'managed' || (memoryType === 'host' && devicePointer !== 0),
    hostAccessible: memoryType === 'host' || memoryType === 'managed' || memoryType === 'unregistered',
    devicePointer: known && devicePointer !== 0 ? devicePointer : undefined,
    hostPointer: memoryType === 'unregistered' ? address : hostPointer !== 0 ? hostPointer : undefined,
    range: known && rangeSize > 0 ? { start: Number(at(A.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR)), size: rangeSize } : undefined,
    context: Number(at(A.CU_POINTER_ATTRIBUTE_CONTEXT)),
    bufferId: Number(at(A.CU_POINTER_ATTRIBUTE_BUFFER_ID)),
    pool: Number(at(A.CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE)),
  };
}
