// DLPack 1.x exchange of StridedViews with native code and other libraries in the process, without
// copies. Export writes a DLManagedTensorVersioned into native memory and hands out its address; the
// consumer calls its deleter once when done, which frees the struct and lets the buffer go. Import reads
// one (checking the version first, as the rules ask), wraps its memory, and calls the producer's
// deleter exactly once when the wrapping buffer is closed or collected.
//
// The C layout, written here from the DLPack specification (all little-endian, x86-64/arm64):
//   DLManagedTensorVersioned (80 bytes): version { u32 major @0, u32 minor @4 }, void* manager_ctx @8,
//     void (*deleter)(self) @16, u64 flags @24, DLTensor dl_tensor @32
//   DLTensor (48 bytes, at +32): void* data @0, DLDevice { i32 device_type @8, i32 device_id @12 },
//     i32 ndim @16, DLDataType { u8 code @20, u8 bits @21, u16 lanes @22 }, i64* shape @24,
//     i64* strides @32 (elements; NULL means C order), u64 byte_offset @40
import { koffi } from '../../support';
import { Context, contextOf } from '../context';
import { checkKeys, describe } from '../describe';
import { OBJECTS_ERROR, ObjectsError } from '../errors';
import { Resource } from '../lifecycle';
import { DeviceBuffer } from './device-buffer';
import { PinnedHostBuffer } from './pinned-host-buffer';
import { DTYPE_SIZES, StridedView, contiguousStrides, elementSpan, type DType } from './strided-view';

/** The DLPack version cuda-ts writes (and the major version it reads). */
export const DLPACK_VERSION = Object.freeze({
  /** Major version: a capsule of another major version is refused. */
  major: 1,
  /** Minor version. */
  minor: 1,
});
/** DLDeviceType values cuda-ts exchanges. */
export const DL_DEVICE = Object.freeze({ cpu: 1, cuda: 2, cudaHost: 3, cudaManaged: 13 });
/** DLManagedTensorVersioned.flags bits. */
export const DLPACK_FLAGS = Object.freeze({ readOnly: 1, isCopied: 2, isSubbytePadded: 4 });

const STRUCT = 80;
const TENSOR = 32;
/** DLDataType { code, bits } of each dtype (lanes 1). */
const DL_TYPES: Record<DType, [number, number]> = {
  i8: [0, 8],
  i16: [0, 16],
  i32: [0, 32],
  i64: [0, 64],
  u8: [1, 8],
  u16: [1, 16],
  u32: [1, 32],
  u64: [1, 64],
  f16: [2, 16],
  f32: [2, 32],
  f64: [2, 64],
  bf16: [4, 16],
  c64: [5, 64],
  c128: [5, 128],
  bool: [6, 8],
};

/** What one export keeps until its deleter runs: the native block and what holds the buffer. */
interface Exported {
  block: unknown;
  keeper: Resource;
}
const exported = new Map<number, Exported>();
let deleterAddress: bigint | undefined;
let deleterProto: unknown;

/** The one native deleter every export carries (registered once, never unregistered). */
function deleter(): bigint {
  if (deleterAddress !== undefined) return deleterAddress;
  deleterProto = koffi.proto('void', ['void *']);
  deleterAddress = koffi.register(
    (self: bigint | number | null) => {
      // A second call for the same struct (a consumer bug) finds nothing and does nothing.
      const e = self === null ? undefined : exported.get(Number(self));
      if (e === undefined) return;
      exported.delete(Number(self));
      e.keeper.close();
      koffi.free(e.block);
    },
    koffi.pointer(deleterProto as never),
  ) as bigint;
  return deleterAddress;
}

/** Number of exported tensors whose deleter has not run yet. */
export function dlpackExportsAlive(): number {
  return exported.size;
}

/**
 * Exports `view` as a DLPack 1.x DLManagedTensorVersioned and returns its address (a bigint: a
 * `DLManagedTensorVersioned*` for a native consumer). The consumer owns it and must call its deleter
 * exactly once; until then the view's buffer stays allocated, even if it is closed here. Device memory
 * is kDLCUDA, managed memory kDLCUDAManaged, pinned host memory kDLCUDAHost. The deleter is a JS
 * function behind a C pointer: a consumer on another thread has its call queued to the JS thread,
 * so it must not block that thread waiting for the call to return.
 * @param view The tensor to export: its buffer stays allocated until the consumer calls the deleter.
 */
export function toDLPack(view: StridedView): bigint {
  if (!(view instanceof StridedView)) throw new TypeError(`toDLPack: view must be a StridedView, got ${describe(view)}`);
  const b = view.buffer;
  if (b.closed) throw new TypeError("toDLPack: the view's buffer is closed");
  const kind = view.memoryKind;
  const base = b instanceof PinnedHostBuffer ? b.hostAddress : b.ptr;
  // The consumer may outlive a close() here: a wrapper owning the buffer holds it until the deleter.
  const keeper = DeviceBuffer.wrap(base, b.byteLength, { owner: b, context: b.context });
  const n = view.ndim;
  const bytes = STRUCT + 16 * n;
  const block = koffi.alloc('uint8_t', bytes);
  const address = Number(koffi.address(block));
  const v = new DataView(koffi.view(block, bytes));
  v.setUint32(0, DLPACK_VERSION.major, true);
  v.setUint32(4, DLPACK_VERSION.minor, true);
  v.setBigUint64(8, BigInt(address), true); // manager_ctx: the struct itself (informational)
  v.setBigUint64(16, deleter(), true);
  v.setBigUint64(24, BigInt(view.readOnly ? DLPACK_FLAGS.readOnly : 0), true);
  v.setBigUint64(TENSOR, BigInt(base), true);
  v.setInt32(TENSOR + 8, kind === 'device' ? DL_DEVICE.cuda : kind === 'managed' ? DL_DEVICE.cudaManaged : DL_DEVICE.cudaHost, true);
  v.setInt32(TENSOR + 12, view.device, true);
  v.setInt32(TENSOR + 16, n, true);
  const [code, bits] = DL_TYPES[view.dtype];
  v.setUint8(TENSOR + 20, code);
  v.setUint8(TENSOR + 21, bits);
  v.setUint16(TENSOR + 22, 1, true);
  v.setBigUint64(TENSOR + 24, BigInt(address + STRUCT), true);
  v.setBigUint64(TENSOR + 32, BigInt(address + STRUCT + 8 * n), true);
  v.setBigUint64(TENSOR + 40, BigInt(view.byteOffset), true);
  for (let d = 0; d < n; d++) {
    v.setBigInt64(STRUCT + 8 * d, BigInt(view.shape[d]), true);
    v.setBigInt64(STRUCT + 8 * (n + d), BigInt(view.strides[d]), true);
  }
  exported.set(address, { block, keeper });
  return BigInt(address);
}

/** The producer's deleter of the struct at `address`, called once by close() (or GC). */
class ForeignTensor extends Resource {
  constructor(address: number, fn: bigint) {
    super('DLPack tensor', fn === 0n ? undefined : () => callDeleter(fn, address));
  }
}

function callDeleter(fn: bigint, self: number): void {
  deleterProto ??= koffi.proto('void', ['void *']);
  koffi.call(fn, deleterProto as never, self);
}

function dtypeOf(code: number, bits: number, lanes: number): DType | undefined {
  if (lanes !== 1) return undefined;
  return (Object.keys(DL_TYPES) as DType[]).find((k) => DL_TYPES[k][0] === code && DL_TYPES[k][1] === bits);
}

/** Options of {@link fromDLPack}. */
export interface FromDLPackOptions {
  /** The context to wrap device memory in (default: the tensor's device's primary context). */
  context?: Context;
}

/**
 * Imports the DLPack 1.x DLManagedTensorVersioned at `address` (taking ownership of it): a StridedView
 * over its memory (kDLCUDA, kDLCUDAManaged or kDLCUDAHost) whose buffer calls the producer's deleter
 * exactly once when closed or collected. A tensor it cannot take (another major version, another
 * device type, dtype or lanes) is released at once, as DLPack asks, and the error says why.
 * @param address The address of a DLManagedTensorVersioned (DLPack 1.x) handed over by its producer; it is owned here from this call.
 * @param options `context`: the context to wrap device memory in (default: the tensor's device's primary context).
 */
export function fromDLPack(address: number | bigint, options: FromDLPackOptions = {}): StridedView {
  const where = 'fromDLPack';
  if ((typeof address !== 'number' || !Number.isSafeInteger(address)) && typeof address !== 'bigint')
    throw new TypeError(`${where}: address must be the address of a DLManagedTensorVersioned (number or bigint), got ${describe(address)}`);
  const at = Number(address);
  if (at <= 0 || at > Number.MAX_SAFE_INTEGER) throw new RangeError(`${where}: address must be a non-null pointer, got ${describe(address)}`);
  if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options must be an object, got ${describe(options)}`);
  checkKeys(where, options, ['context']);
  const head = new DataView(koffi.view(at, 24));
  const fn = head.getBigUint64(16, true);
  const owner = new ForeignTensor(at, fn);
  const refuse = (why: string): never => {
    owner.close(); // the deleter runs now: the tensor is ours to release
    throw new ObjectsError(where, OBJECTS_ERROR.missing, `${where}: ${why}; the tensor was released (its deleter called)`);
  };
  const major = head.getUint32(0, true);
  if (major !== DLPACK_VERSION.major)
    refuse(`DLPack major version ${major}.${head.getUint32(4, true)} is not readable (cuda-ts reads ${DLPACK_VERSION.major}.x)`);
  try {
    return importTensor(at, owner, refuse, options);
  } catch (e) {
    if (!owner.closed) owner.close();
    throw e;
  }
}

function importTensor(at: number, owner: ForeignTensor, refuse: (why: string) => never, options: FromDLPackOptions): StridedView {
  const v = new DataView(koffi.view(at, STRUCT));
  const flags = v.getBigUint64(24, true);
  const data = Number(v.getBigUint64(TENSOR, true));
  const deviceType = v.getInt32(TENSOR + 8, true);
  const deviceId = v.getInt32(TENSOR + 12, true);
  const ndim = v.getInt32(TENSOR + 16, true);
  const dtype = dtypeOf(v.getUint8(TENSOR + 20), v.getUint8(TENSOR + 21), v.getUint16(TENSOR + 22, true));
  const byteOffset = Number(v.getBigUint64(TENSOR + 40, true));
  if (deviceType !== DL_DEVICE.cuda && deviceType !== DL_DEVICE.cudaManaged && deviceType !== DL_DEVICE.cudaHost)
    refuse(`device type ${deviceType} is not CUDA memory (kDLCUDA 2, kDLCUDAHost 3, kDLCUDAManaged 13)`);
  if (dtype === undefined)
    refuse(`DLDataType { code ${v.getUint8(TENSOR + 20)}, bits ${v.getUint8(TENSOR + 21)}, lanes ${v.getUint16(TENSOR + 22, true)} } has no cuda-ts dtype`);
  if (ndim < 0 || ndim > 32) refuse(`ndim ${ndim} is outside 0..32`);
  const shape = readInt64s(v.getBigUint64(TENSOR + 24, true), ndim) ?? refuse('shape is NULL');
  const stridesPtr = v.getBigUint64(TENSOR + 32, true);
  const strides = stridesPtr === 0n ? contiguousStrides(shape) : readInt64s(stridesPtr, ndim)!;
  const size = DTYPE_SIZES[dtype as DType];
  const empty = shape.includes(0);
  const { min, max } = empty ? { min: 0, max: -1 } : elementSpan(shape, strides);
  const start = data + byteOffset + min * size; // the lowest byte any element uses
  const length = (max - min + 1) * size;
  const ctx = options.context !== undefined ? contextOf(options.context, 'fromDLPack: context') : Context.primary(deviceId);
  if (ctx.device !== deviceId) throw new RangeError(`fromDLPack: the tensor is on device ${deviceId}, the context on device ${ctx.device}`);
  const buffer = DeviceBuffer.wrap(empty ? 0 : start, empty ? 0 : length, { owner, context: ctx, hostAccessible: deviceType !== DL_DEVICE.cuda });
  owner.close(); // deferred until `buffer` goes: then the producer's deleter runs, once
  try {
    return StridedView.of(buffer, { dtype: dtype as DType, shape, strides, byteOffset: empty ? 0 : -min * size, readOnly: (flags & 1n) !== 0n });
  } catch (e) {
    buffer.close(); // a shape the view refuses: release the tensor now
    throw e;
  }
}

/** `n` int64 values at native address `p` as numbers (undefined when p is NULL and n > 0). */
function readInt64s(p: bigint, n: number): number[] | undefined {
  if (n === 0) return [];
  if (p === 0n) return undefined;
  const v = new DataView(koffi.view(Number(p), 8 * n));
  return Array.from({ length: n }, (_, i) => {
    const x = v.getBigInt64(8 * i, true);
    if (x > BigInt(Number.MAX_SAFE_INTEGER) || x < -BigInt(Number.MAX_SAFE_INTEGER))
      throw new RangeError(`fromDLPack: a shape or stride value ${x} is past 2**53`);
    return Number(x);
  });
}
