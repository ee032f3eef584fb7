// Kernel launch. Arguments are written into one preallocated ArrayBuffer per argument layout (a kernel
// signature): a DataView writes each value at its aligned offset, and a BigUint64Array holding the
// native address of each slot is the `kernelParams` table, filled once. A launch validates, writes the
// values and calls cuLaunchKernelEx with the CUlaunchConfig its LaunchConfig encoded once
// (cuLaunchKernel on a driver without it): no allocation besides the rest-args array (use
// `launchArgs` with a reused array to avoid even that).
import { CudaSymbolError, isArrayBuffer, type NativeFunction } from '../support';
import { koffi } from '../support';
import * as drv from './driver';
import { describe } from './context';
import { DeviceBuffer, PinnedHostBuffer, ownerOf } from './memory/buffers';
import { Stream, toStream, type StreamLike } from './stream';
import { Kernel } from './module';
import { anyCapture, captureOf } from './graph/capture';


/**
 * Scalar kernel parameter types. `ptr` takes a DeviceBuffer, a PinnedHostBuffer, a TypedArray/ArrayBuffer
 * over page-locked device-mapped host memory (a PinnedHostBuffer's view), a device address or null.
 */
export type ScalarType = 'ptr' | 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'i64' | 'u64' | 'f32' | 'f64';
/** A struct passed by value: its bytes (a TypedArray/ArrayBuffer of exactly `struct` bytes). */
export interface StructType {
  /** Size of the struct in bytes. */
  struct: number;
  /** Alignment of the struct in bytes (default 8). */
  align?: number;
}
/** A kernel parameter type: a scalar, or a struct passed by value. */
export type ArgType = ScalarType | StructType;

const SIZES: Record<ScalarType, number> = { ptr: 8, i8: 1, u8: 1, i16: 2, u16: 2, i32: 4, u32: 4, i64: 8, u64: 8, f32: 4, f64: 8 };
const INT_RANGE: Partial<Record<ScalarType, [number, number]>> = {
  i8: [-128, 127], u8: [0, 255], i16: [-32768, 32767], u16: [0, 65535], i32: [-2147483648, 2147483647], u32: [0, 4294967295],
};

/**
 * What a `'ptr'` parameter takes: a DeviceBuffer (or ManagedBuffer), a PinnedHostBuffer, a TypedArray,
 * DataView or ArrayBuffer over page-locked, device-mapped host memory (e.g. `pinned.view(Float32Array)`:
 * its device address is looked up with cuMemHostGetDevicePointer, no koffi needed), a device address
 * (number or bigint), or null.
 */
export type DevicePointer = DeviceBuffer | PinnedHostBuffer | ArrayBufferView | ArrayBuffer | number | bigint | null;

/** The JS value a parameter of type `T` takes (a {@link TypedArg} is accepted everywhere too). */
export type ArgValue<T> = T extends 'ptr'
  ? DevicePointer
  : T extends 'i64' | 'u64'
    ? number | bigint
    : T extends ScalarType
      ? number
      : T extends StructType
        ? ArrayBufferView | ArrayBuffer
        : never;

/**
 * The launch-argument tuple of a kernel signature: `KernelArgs<['ptr', 'f32', 'u32']>` is
 * `[DevicePointer, number, number]` (each also accepting a {@link TypedArg}). A signature that is not a
 * literal tuple gives `unknown[]` (checked at run time only).
 */
export type KernelArgs<S extends readonly ArgType[]> = number extends S['length'] ? unknown[] : { -readonly [I in keyof S]: ArgValue<S[I]> | TypedArg };

/** An explicitly typed argument (for kernels without a declared signature). */
export interface TypedArg {
  /** The parameter type the value is written as. */
  readonly type: ArgType;
  /** The value, checked against `type` when written. */
  readonly value: unknown;
}
/** The value `arg.*()` makes: a class, so that telling it apart on the launch path is one instanceof. */
class TypedArgValue implements TypedArg {
  constructor(
    readonly type: ArgType,
    readonly value: unknown,
  ) {}
}
const typed = (type: ArgType) => (value: unknown): TypedArg => new TypedArgValue(type, value);
/** Typed argument helpers: `launch(s, cfg, k, arg.ptr(buf), arg.f32(2), arg.u32(n))`. */
export const arg = {
  /** A pointer: a DeviceBuffer, a PinnedHostBuffer (its device pointer), a device address, or null. */
  ptr: typed('ptr'),
  /** A signed 8-bit integer. */
  i8: typed('i8'),
  /** An unsigned 8-bit integer. */
  u8: typed('u8'),
  /** A signed 16-bit integer. */
  i16: typed('i16'),
  /** An unsigned 16-bit integer. */
  u16: typed('u16'),
  /** A signed 32-bit integer. */
  i32: typed('i32'),
  /** An unsigned 32-bit integer. */
  u32: typed('u32'),
  /** A signed 64-bit integer (a bigint, or a number that is a safe integer). */
  i64: typed('i64'),
  /** An unsigned 64-bit integer (a bigint, or a number that is a safe integer). */
  u64: typed('u64'),
  /** A 32-bit float (the number is rounded to single precision). */
  f32: typed('f32'),
  /** A 64-bit float. */
  f64: typed('f64'),
  /** A struct passed by value: its bytes, aligned to `align` bytes (default 8). */
  struct: (bytes: ArrayBufferView | ArrayBuffer, align = 8): TypedArg => {
    if (!isArrayBuffer(bytes) && !ArrayBuffer.isView(bytes)) throw new TypeError(`arg.struct: bytes must be a TypedArray, DataView or ArrayBuffer, got ${describe(bytes)}`);
    const t = { struct: bytes.byteLength, align };
    checkSignature([t], 'arg.struct');
    return new TypedArgValue(t, bytes);
  },
};

function isTypedArg(v: unknown): v is TypedArg {
  if (v instanceof TypedArgValue) return true;
  // a hand-made { type, value } works too (the slower check runs only for objects that are neither)
  return typeof v === 'object' && v !== null && !(v instanceof DeviceBuffer) && 'type' in v && 'value' in v;
}

function describeType(t: ArgType): string {
  return typeof t === 'string' ? t : `struct(${t.struct} bytes)`;
}

const describeValue = describe;

/** Validates a signature; throws TypeError naming `where` and the argument. */
export function checkSignature(sig: readonly ArgType[], where = 'kernel signature'): void {
  if (!Array.isArray(sig)) throw new TypeError(`${where}: a kernel signature is an array of argument types, got ${describe(sig)}`);
  if (sig.length > 4096) throw new RangeError(`${where}: ${sig.length} parameters is more than a kernel can take`);
  sig.forEach((t, i) => {
    if (typeof t === 'string') {
      if (!Object.prototype.hasOwnProperty.call(SIZES, t)) throw new TypeError(`${where}: signature[${i}]: unknown type '${t}' (expected ${Object.keys(SIZES).join(', ')} or { struct: bytes, align? })`);
    } else if (typeof t !== 'object' || t === null || typeof t.struct !== 'number' || !Number.isSafeInteger(t.struct) || t.struct <= 0 || t.struct > 32764) {
      throw new TypeError(`${where}: signature[${i}]: a struct type is { struct: byteSize (1 to 32764), align? }, got ${describe(t)}${typeof t === 'object' && t !== null ? ` with struct ${describe((t as StructType).struct)}` : ''}`);
    } else if (t.align !== undefined && (typeof t.align !== 'number' || !Number.isInteger(t.align) || t.align < 1 || t.align > 256 || (t.align & (t.align - 1)) !== 0)) {
      throw new RangeError(`${where}: signature[${i}]: struct align must be a power of two from 1 to 256, got ${describe(t.align)}`);
    }
  });
}

/** Argument storage for one signature: one ArrayBuffer and the kernelParams table, reused per launch. */
export class ArgPack {
  /** The argument types (a copy of the signature). */
  readonly types: readonly ArgType[];
  /** Byte offset of each argument in `bytes`. */
  readonly offsets: number[];
  /** The argument storage. */
  readonly bytes: Uint8Array;
  /** A DataView over `bytes`, through which the values are written. */
  readonly view: DataView;
  /** `void *kernelParams[]`: the native address of each argument slot. */
  readonly table: BigUint64Array;
  /** Size of the storage in bytes (a multiple of 8, at least 8). */
  readonly byteLength: number;

  /**
   * Lays out `types` (scalars at their natural alignment, structs at their `align`) and fills the
   * kernelParams table.
   * @throws TypeError for an invalid signature
   */
  constructor(types: readonly ArgType[]) {
    checkSignature(types, 'ArgPack');
    this.types = types.slice();
    this.offsets = [];
    let off = 0;
    for (const t of types) {
      const size = typeof t === 'string' ? SIZES[t] : t.struct;
      const align = typeof t === 'string' ? size : (t.align ?? 8);
      off = Math.ceil(off / align) * align;
      this.offsets.push(off);
      off += size;
    }
    this.byteLength = Math.max(8, Math.ceil(off / 8) * 8);
    // An ArrayBuffer's backing store is off the V8 heap and never moves: its address is stable.
    const buffer = new ArrayBuffer(this.byteLength);
    this.bytes = new Uint8Array(buffer);
    this.view = new DataView(buffer);
    const base = koffi.address(buffer);
    this.table = new BigUint64Array(new ArrayBuffer(8 * Math.max(1, types.length)));
    for (let i = 0; i < types.length; i++) this.table[i] = base + BigInt(this.offsets[i]);
  }

  /** Validates and writes `args[from..]`; throws TypeError/RangeError before any native call. */
  write(args: ArrayLike<unknown>, from: number, what: string): void {
    const n = args.length - from;
    const types = this.types;
    if (n !== types.length) throw new TypeError(`${what}: expected ${types.length} argument(s) (${types.map(describeType).join(', ')}), got ${n}`);
    const dv = this.view;
    for (let i = 0; i < types.length; i++) {
      let v = args[from + i];
      const t = types[i];
      const off = this.offsets[i];
      if (t === 'ptr' && v instanceof DeviceBuffer) {
        writeU64(dv, off, v.launchAddress()); // the common case, first
        continue;
      }
      if (isTypedArg(v)) {
        if (describeType(v.type) !== describeType(t)) throw new TypeError(`${what}: argument ${i} is declared ${describeType(t)} but was given arg.${describeType(v.type)}()`);
        v = v.value;
      }
      switch (t) {
        case 'ptr':
          writeU64(dv, off, pointerOf(v, i, what));
          break;
        case 'f32':
          if (typeof v !== 'number') throw badArg(what, i, t, v);
          dv.setFloat32(off, v, true);
          break;
        case 'f64':
          if (typeof v !== 'number') throw badArg(what, i, t, v);
          dv.setFloat64(off, v, true);
          break;
        case 'i64':
        case 'u64':
          if (typeof v === 'bigint') {
            if (t === 'u64' ? v < 0n || v >= 1n << 64n : v < -(1n << 63n) || v >= 1n << 63n) throw new RangeError(`${what}: argument ${i} (${t}) out of range: ${v}`);
            if (t === 'u64') dv.setBigUint64(off, v, true);
            else dv.setBigInt64(off, v, true);
          } else if (typeof v === 'number' && Number.isSafeInteger(v)) {
            if (t === 'u64' && v < 0) throw new RangeError(`${what}: argument ${i} (u64) out of range: ${v}`);
            writeI64(dv, off, v);
          } else throw badArg(what, i, t, v);
          break;
        default:
          if (typeof t === 'string') {
            if (typeof v !== 'number' || !Number.isInteger(v)) throw badArg(what, i, t, v);
            const [lo, hi] = INT_RANGE[t]!;
            if (v < lo || v > hi) throw new RangeError(`${what}: argument ${i} (${t}) out of range [${lo}, ${hi}]: ${v}`);
            if (t === 'i8') dv.setInt8(off, v);
            else if (t === 'u8') dv.setUint8(off, v);
            else if (t === 'i16') dv.setInt16(off, v, true);
            else if (t === 'u16') dv.setUint16(off, v, true);
            else if (t === 'i32') dv.setInt32(off, v, true);
            else dv.setUint32(off, v, true);
          } else {
            let src: Uint8Array;
            if (isArrayBuffer(v)) src = new Uint8Array(v);
            else if (ArrayBuffer.isView(v)) src = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
            else throw badArg(what, i, t, v);
            if (src.byteLength !== t.struct) throw new TypeError(`${what}: argument ${i} is a ${t.struct}-byte struct, got ${src.byteLength} bytes`);
            this.bytes.set(src, off);
          }
      }
    }
  }
}

function badArg(what: string, i: number, t: ArgType, v: unknown): TypeError {
  const expects = t === 'ptr' ? 'a DeviceBuffer, PinnedHostBuffer, device address or null' : t === 'f32' || t === 'f64' ? 'a number' : typeof t === 'string' ? (t.endsWith('64') ? 'an integer (number or bigint)' : 'an integer') : 'bytes (TypedArray or ArrayBuffer)';
  return new TypeError(`${what}: argument ${i} (${describeType(t)}) expects ${expects}, got ${describeValue(v)}`);
}

function pointerOf(v: unknown, i: number, what: string): number {
  if (v instanceof DeviceBuffer) return v.ptr;
  if (v instanceof PinnedHostBuffer) return v.devicePointer;
  if (isArrayBuffer(v) || ArrayBuffer.isView(v)) return hostMemoryDevicePointer(v, i, what);
  if (v === null || v === undefined) {
    if (v === undefined) throw badArg(what, i, 'ptr', v);
    return 0;
  }
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) throw badArg(what, i, 'ptr', v);
    return v;
  }
  if (typeof v === 'bigint') {
    if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER)) throw badArg(what, i, 'ptr', v);
    return Number(v);
  }
  throw badArg(what, i, 'ptr', v);
}

const hostPointerSlot = new BigUint64Array(1);
/**
 * The device address of host memory under an ArrayBuffer or view (cuMemHostGetDevicePointer): it must
 * be page-locked and mapped into the device's address space (a PinnedHostBuffer's memory, or memory
 * registered with CU_MEMHOSTREGISTER_DEVICEMAP). Anything else is a TypeError, before the launch.
 */
function hostMemoryDevicePointer(v: ArrayBuffer | ArrayBufferView, i: number, what: string): number {
  const buffer = isArrayBuffer(v) ? v : v.buffer;
  const offset = isArrayBuffer(v) ? 0 : v.byteOffset;
  if (buffer.byteLength === 0) throw new TypeError(`${what}: argument ${i} (ptr) is an empty ArrayBuffer: it has no memory to point at`);
  const host = Number(koffi.address(buffer)) + offset;
  const status = drv.native('cuMemHostGetDevicePointer')(hostPointerSlot, host, 0);
  if (status !== 0) {
    throw new TypeError(
      `${what}: argument ${i} (ptr) is a ${describeValue(v)} over host memory the device cannot address (cuMemHostGetDevicePointer: CUresult ${status}): ` +
        'use a PinnedHostBuffer (or its view()) or a DeviceBuffer',
    );
  }
  return Number(hostPointerSlot[0]);
}

const TWO32 = 0x100000000;
function writeU64(dv: DataView, off: number, v: number): void {
  dv.setUint32(off, v >>> 0, true);
  dv.setUint32(off + 4, Math.floor(v / TWO32) >>> 0, true);
}
function writeI64(dv: DataView, off: number, v: number): void {
  const hi = Math.floor(v / TWO32);
  dv.setUint32(off, (v - hi * TWO32) >>> 0, true);
  dv.setInt32(off + 4, hi | 0, true);
}

/**
 * A grid, block or cluster size: `n` (as `[n, 1, 1]`), `[x]`, `[x, y]`, `[x, y, z]` or `{ x, y?, z? }`.
 * Missing dimensions are 1; each is an integer from 1 to 2^32 - 1.
 */
export type Dim3 = number | readonly [number] | readonly [number, number] | readonly [number, number, number] | {
  /** Size in x. */
  x: number;
  /** Size in y (default 1). */
  y?: number;
  /** Size in z (default 1). */
  z?: number;
};

function dim(where: string, name: string, v: unknown, r: unknown): number {
  if (typeof v !== 'number') throw new TypeError(`${where}: ${name} must be a number, got ${describe(v)} in ${describe(r)}`);
  if (!Number.isInteger(v) || v < 1 || v > 0xffffffff) throw new RangeError(`${where}: ${name} must be an integer from 1 to 2^32 - 1, got ${v}`);
  return v;
}

function dim3(where: string, name: string, d: unknown): [number, number, number] {
  if (typeof d === 'number') return [dim(where, name, d, d), 1, 1];
  if (Array.isArray(d)) {
    if (d.length < 1 || d.length > 3) throw new TypeError(`${where}: ${name} as an array has 1 to 3 dimensions ([x], [x, y] or [x, y, z]), got ${d.length}`);
    return [dim(where, `${name}[0]`, d[0], d), d.length > 1 ? dim(where, `${name}[1]`, d[1], d) : 1, d.length > 2 ? dim(where, `${name}[2]`, d[2], d) : 1];
  }
  if (typeof d === 'object' && d !== null) {
    const o = d as Record<string, unknown>;
    for (const k of Object.keys(o)) if (k !== 'x' && k !== 'y' && k !== 'z') throw new TypeError(`${where}: ${name} has an unknown field '${k}' (expected x, y, z)`);
    if (o.x === undefined) throw new TypeError(`${where}: ${name}.x is required`);
    return [dim(where, `${name}.x`, o.x, d), o.y === undefined ? 1 : dim(where, `${name}.y`, o.y, d), o.z === undefined ? 1 : dim(where, `${name}.z`, o.z, d)];
  }
  throw new TypeError(`${where}: ${name} must be a number, [x, y, z] or { x, y, z }, got ${describe(d)}`);
}

/** What a {@link LaunchConfig} is made from; launch() also takes one directly. */
export interface LaunchConfigInit {
  /**
   * Blocks in the grid. With `cluster`, this still counts blocks, not clusters: `grid: 8, cluster: 2`
   * launches 8 blocks in 4 clusters of 2 (each grid dimension must be a multiple of the cluster's).
   */
  grid: Dim3;
  /** Threads per block. */
  block: Dim3;
  /** Dynamic shared memory per block, bytes. */
  sharedMemBytes?: number;
  /**
   * Thread block cluster dimensions, in blocks (sm_90+): the blocks of one cluster are co-scheduled on
   * one GPU processing cluster and share distributed shared memory. `grid` counts blocks, not clusters.
   */
  cluster?: Dim3;
  /** Cooperative launch (grid-wide sync). */
  cooperative?: boolean;
  /**
   * Programmatic dependent launch (sm_90+): this kernel may start before the previous kernel on the
   * same stream has finished, once every block of that kernel has executed
   * `griddepcontrol.launch_dependents` (`cudaTriggerProgrammaticLaunchCompletion()`) or exited. The
   * kernel must execute `griddepcontrol.wait` (`cudaGridDependencySynchronize()`) before it reads what the
   * previous kernel writes. (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION.)
   */
  programmaticDependentLaunch?: boolean;
  /** Scheduling priority of this launch's blocks (CU_LAUNCH_ATTRIBUTE_PRIORITY); lower numbers are higher priority, see Stream.priorityRange(). */
  priority?: number;
  /**
   * Memory-synchronization domain of the kernel (CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN): `'remote'` for
   * kernels whose memory fences only need to order memory with other GPUs (communication kernels), so
   * that their fences do not wait for the compute kernels' traffic; default `'default'`.
   */
  memSyncDomain?: 'default' | 'remote';
  /**
   * Maps the logical domains to the physical ones (CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP), each 0 to
   * the device's CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT - 1.
   */
  memSyncDomainMap?: {
    /** Physical domain of the logical `'default'` domain. */
    default: number;
    /** Physical domain of the logical `'remote'` domain. */
    remote: number;
  };
}

const CONFIG_KEYS = new Set(['grid', 'block', 'sharedMemBytes', 'cluster', 'cooperative', 'programmaticDependentLaunch', 'priority', 'memSyncDomain', 'memSyncDomainMap']);
const CONFIG_BYTES = 56;
const ATTR_BYTES = 72;
const LA = drv.CUlaunchAttributeID;

/**
 * Grid, block, shared memory and launch attributes (cluster, cooperative, programmatic dependent
 * launch, priority, memory-sync domain), validated and encoded once. A launch is one cuLaunchKernelEx
 * with the CUlaunchConfig encoded here.
 */
export class LaunchConfig {
  /** Grid size in x (blocks). */
  readonly gx: number;
  /** Grid size in y (blocks). */
  readonly gy: number;
  /** Grid size in z (blocks). */
  readonly gz: number;
  /** Block size in x (threads). */
  readonly bx: number;
  /** Block size in y (threads). */
  readonly by: number;
  /** Block size in z (threads). */
  readonly bz: number;
  /** Dynamic shared memory per block, bytes. */
  readonly sharedMemBytes: number;
  /** Thread block cluster dimensions, or undefined without clusters. */
  readonly cluster: readonly [number, number, number] | undefined;
  /** Cooperative launch (grid-wide sync). */
  readonly cooperative: boolean;
  /** Programmatic dependent launch (see {@link LaunchConfigInit.programmaticDependentLaunch}). */
  readonly programmaticDependentLaunch: boolean;
  /** Launch priority, or undefined for the stream's. */
  readonly priority: number | undefined;
  /** Memory-sync domain, or undefined for the default. */
  readonly memSyncDomain: 'default' | 'remote' | undefined;
  /** Logical-to-physical memory-sync domain map, or undefined for the default. */
  readonly memSyncDomainMap: {
    /** Physical domain of the logical `'default'` domain. */
    readonly default: number;
    /** Physical domain of the logical `'remote'` domain. */
    readonly remote: number;
  } | undefined;
  /**
   * The CUlaunchConfig cuLaunchKernelEx takes, with its attributes after it (`attributes` of them),
   * encoded once; a launch writes only its stream, when another than the last one (`stream`). @internal
   */
  readonly ex: { view: DataView; bytes: Uint8Array; attributes: number; stream: number };

  /**
   * Validates and encodes `init`; the result is frozen.
   * @throws TypeError when `init` is not an object; RangeError for a dimension or `sharedMemBytes` out
   * of range, or a grid that is not a multiple of the cluster
   */
  constructor(init: LaunchConfigInit) {
    const W = 'LaunchConfig';
    if (typeof init !== 'object' || init === null) throw new TypeError(`${W} expects { grid, block, sharedMemBytes?, cluster?, cooperative? }, got ${describe(init)}`);
    for (const k of Object.keys(init)) if (!CONFIG_KEYS.has(k)) throw new TypeError(`${W}: unknown field '${k}' (expected ${[...CONFIG_KEYS].join(', ')})`);
    if (init.grid === undefined) throw new TypeError(`${W}: grid is required (or use LaunchConfig.linear(n, blockSize))`);
    if (init.block === undefined) throw new TypeError(`${W}: block is required (or use LaunchConfig.linear(n, blockSize))`);
    [this.gx, this.gy, this.gz] = dim3(W, 'grid', init.grid);
    [this.bx, this.by, this.bz] = dim3(W, 'block', init.block);
    const smem = init.sharedMemBytes ?? 0;
    if (typeof smem !== 'number') throw new TypeError(`${W}: sharedMemBytes must be a number, got ${describe(smem)}`);
    if (!Number.isInteger(smem) || smem < 0 || smem > 0xffffffff) throw new RangeError(`${W}: sharedMemBytes must be a non-negative 32-bit integer, got ${smem}`);
    this.sharedMemBytes = smem;
    this.cluster = init.cluster !== undefined ? dim3(W, 'cluster', init.cluster) : undefined;
    if (init.cooperative !== undefined && typeof init.cooperative !== 'boolean') throw new TypeError(`${W}: cooperative must be a boolean, got ${describe(init.cooperative)}`);
    this.cooperative = init.cooperative === true;
    if (init.programmaticDependentLaunch !== undefined && typeof init.programmaticDependentLaunch !== 'boolean') throw new TypeError(`${W}: programmaticDependentLaunch must be a boolean, got ${describe(init.programmaticDependentLaunch)}`);
    this.programmaticDependentLaunch = init.programmaticDependentLaunch === true;
    if (init.priority !== undefined && (typeof init.priority !== 'number' || !Number.isInteger(init.priority) || Math.abs(init.priority) > 0x7fffffff)) throw new RangeError(`${W}: priority must be a 32-bit integer, got ${describe(init.priority)}`);
    this.priority = init.priority;
    if (init.memSyncDomain !== undefined && init.memSyncDomain !== 'default' && init.memSyncDomain !== 'remote') throw new TypeError(`${W}: memSyncDomain must be 'default' or 'remote', got ${describe(init.memSyncDomain)}`);
    this.memSyncDomain = init.memSyncDomain;
    this.memSyncDomainMap = init.memSyncDomainMap === undefined ? undefined : domainMap(W, init.memSyncDomainMap);
    if (this.cluster) {
      const [cx, cy, cz] = this.cluster;
      if (this.gx % cx || this.gy % cy || this.gz % cz) throw new RangeError(`${W}: grid [${this.gx}, ${this.gy}, ${this.gz}] (in blocks) is not a multiple of cluster [${cx}, ${cy}, ${cz}]`);
    }
    const attrs: [number, (dv: DataView, at: number) => void][] = [];
    const cluster = this.cluster;
    if (cluster) attrs.push([LA.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, (dv, at) => cluster.forEach((v, i) => dv.setUint32(at + i * 4, v, true))]);
    if (this.cooperative) attrs.push([LA.CU_LAUNCH_ATTRIBUTE_COOPERATIVE, (dv, at) => dv.setInt32(at, 1, true)]);
    if (this.programmaticDependentLaunch) attrs.push([LA.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, (dv, at) => dv.setInt32(at, 1, true)]);
    const priority = this.priority;
    if (priority !== undefined) attrs.push([LA.CU_LAUNCH_ATTRIBUTE_PRIORITY, (dv, at) => dv.setInt32(at, priority, true)]);
    const domain = this.memSyncDomain;
    if (domain !== undefined) attrs.push([LA.CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN, (dv, at) => dv.setInt32(at, domain === 'remote' ? drv.CUlaunchMemSyncDomain.CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE : drv.CUlaunchMemSyncDomain.CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT, true)]);
    const map = this.memSyncDomainMap;
    if (map !== undefined) attrs.push([LA.CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, (dv, at) => { dv.setUint8(at, map.default); dv.setUint8(at + 1, map.remote); }]);
    const buffer = new ArrayBuffer(CONFIG_BYTES + attrs.length * ATTR_BYTES);
    const dv = new DataView(buffer);
    const fields = [this.gx, this.gy, this.gz, this.bx, this.by, this.bz, this.sharedMemBytes];
    fields.forEach((v, i) => dv.setUint32(i * 4, v, true));
    if (attrs.length > 0) {
      const base = Number(koffi.address(buffer));
      writeU64(dv, 40, base + CONFIG_BYTES); // attrs
      dv.setUint32(48, attrs.length, true);
      // CUlaunchAttribute: { id: int32, pad, value: 64-byte union }
      attrs.forEach(([id, write], i) => {
        const a = CONFIG_BYTES + i * ATTR_BYTES;
        dv.setInt32(a, id, true);
        write(dv, a + 8);
      });
    }
    this.ex = { view: dv, bytes: new Uint8Array(buffer), attributes: attrs.length, stream: 0 };
    Object.freeze(this);
  }

  /** Threads per block. */
  get blockThreads(): number {
    return this.bx * this.by * this.bz;
  }

  /** A 1-D config covering `n` items with `blockSize` threads per block. */
  static linear(n: number, blockSize = 256, sharedMemBytes = 0): LaunchConfig {
    for (const [name, v, max] of [['n', n, Number.MAX_SAFE_INTEGER], ['blockSize', blockSize, 1024]] as const) {
      if (typeof v !== 'number') throw new TypeError(`LaunchConfig.linear: ${name} must be a number, got ${describe(v)}`);
      if (!Number.isInteger(v) || v < 1 || v > max) throw new RangeError(`LaunchConfig.linear: ${name} must be an integer from 1 to ${max}, got ${v}`);
    }
    if (Math.ceil(n / blockSize) > 0x7fffffff) throw new RangeError(`LaunchConfig.linear: ${n} items in blocks of ${blockSize} need more than 2^31 - 1 blocks`);
    return new LaunchConfig({ grid: Math.ceil(n / blockSize), block: blockSize, sharedMemBytes });
  }
}

function domainMap(where: string, m: unknown): { readonly default: number; readonly remote: number } {
  if (typeof m !== 'object' || m === null) throw new TypeError(`${where}: memSyncDomainMap must be { default, remote }, got ${describe(m)}`);
  const o = m as Record<string, unknown>;
  for (const k of Object.keys(o)) if (k !== 'default' && k !== 'remote') throw new TypeError(`${where}: memSyncDomainMap has an unknown field '${k}' (expected default, remote)`);
  for (const k of ['default', 'remote']) {
    const v = o[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 255) throw new RangeError(`${where}: memSyncDomainMap.${k} must be an integer from 0 to 255 (a physical domain), got ${describe(v)}`);
  }
  return Object.freeze({ default: o.default as number, remote: o.remote as number });
}

function configOf(c: LaunchConfig | LaunchConfigInit): LaunchConfig {
  return c instanceof LaunchConfig ? c : new LaunchConfig(c);
}

const packCache = new Map<string, ArgPack>();
function packForTypedArgs(args: ArrayLike<unknown>, from: number, what: string): ArgPack {
  const types: ArgType[] = [];
  for (let i = from; i < args.length; i++) {
    const v = args[i];
    if (isTypedArg(v)) types.push(v.type);
    else if (v instanceof DeviceBuffer || v instanceof PinnedHostBuffer) types.push('ptr');
    else {
      throw new TypeError(
        `${what}: argument ${i - from} (${describeValue(v)}) has no type: declare the kernel's signature (module.kernel(name, ['ptr', 'f32', ...])) or pass arg.f32(x)/arg.u32(n)/...`,
      );
    }
  }
  const key = types.map(describeType).join(',');
  let pack = packCache.get(key);
  if (!pack) {
    pack = new ArgPack(types);
    if (packCache.size < 256) packCache.set(key, pack);
  }
  return pack;
}

/**
 * Launches `kernel` on `stream` with `args` (the hot path: validates, writes, one FFI call). `stream`
 * is a Stream or a stream-protocol object; undefined launches on the legacy default stream.
 */
export function launchArgs(stream: StreamLike | undefined, config: LaunchConfig | LaunchConfigInit, kernel: Kernel, args: ArrayLike<unknown>, from = 0): void {
  const cfg = config instanceof LaunchConfig ? config : configOf(config);
  if (!(kernel instanceof Kernel)) throw new TypeError(`launch: kernel must be a Kernel, got ${describe(kernel)}`);
  const ctx = kernel.check();
  const s = stream instanceof Stream ? stream : toStream(stream, `${kernel.launchLabel}: stream`);
  let h = 0;
  if (s !== undefined) {
    s.check();
    if (s.context !== ctx) throw new TypeError(`${kernel.launchLabel}: the stream belongs to ${String(s.context)}, the kernel to ${String(ctx)}`);
    h = s.handle;
  }
  const what = kernel.launchLabel;
  const pack = kernel.argPack ?? packForUntyped(kernel, args, from, what);
  pack.write(args, from, what);
  if (anyCapture()) noteLaunch(ctx, h, kernel, s, args, from);
  // A launch of a function of another context fails and enqueues nothing, so the cached binding is
  // enough here (the door binds for real and launches again when it was stale).
  drv.bindHinted(ctx);
  let status = enqueue(cfg, kernel, h, pack);
  if (status !== 0 && drv.rebindIfStale(ctx, status)) status = enqueue(cfg, kernel, h, pack);
  if (status !== 0) throw drv.fail(ctx, launchEx || cfg.ex.attributes > 0 ? 'cuLaunchKernelEx' : 'cuLaunchKernel', status);
}

/** Registers what a launch uses with the capture its stream takes part in (the graph keeps it alive). */
function noteLaunch(ctx: drv.Bindable, h: number, kernel: Kernel, s: Stream | undefined, args: ArrayLike<unknown>, from: number): void {
  const holder = captureOf(ctx, h);
  if (holder === undefined) return;
  holder.core.hold(kernel.core);
  if (s !== undefined) holder.core.hold(s.core);
  for (let i = from; i < args.length; i++) {
    let v = args[i];
    if (v instanceof TypedArgValue) v = v.value;
    if (v instanceof DeviceBuffer) holder.core.hold(ownerOf(v).core);
    else if (v instanceof PinnedHostBuffer) holder.core.hold(v.core);
  }
}

/** The argument layout of an untyped launch, checked once against the kernel's parameters (cuFuncGetParamInfo). */
function packForUntyped(kernel: Kernel, args: ArrayLike<unknown>, from: number, what: string): ArgPack {
  const pack = packForTypedArgs(args, from, what);
  kernel.checkLayout(pack);
  return pack;
}

// The C functions of the launch path, resolved by the door and held here: a lookup per launch would
// cost more than this path's whole budget.
let cuLaunchKernel: NativeFunction | undefined;
let cuLaunchKernelEx: NativeFunction | undefined;
/**
 * Whether launches go through cuLaunchKernelEx (decided at the first launch): its four arguments
 * cost less to pass than cuLaunchKernel's eleven through either FFI (measured on the H200: koffi's
 * cuLaunchKernelEx with a pre-encoded config 1.056× C against cuLaunchKernel's 1.100×; node:ffi takes
 * four arguments as one direct call, eleven through a JS wrapper). cuLaunchKernel where the driver has
 * no cuLaunchKernelEx (before CUDA 12.0).
 */
let launchEx: boolean | undefined;
function hasLaunchEx(): boolean {
  try {
    cuLaunchKernelEx ??= drv.native('cuLaunchKernelEx');
    return true;
  } catch (e) {
    if (e instanceof CudaSymbolError) return false;
    throw e;
  }
}

function enqueue(cfg: LaunchConfig, kernel: Kernel, h: number, pack: ArgPack): number {
  const ex = cfg.ex;
  if (!(launchEx ??= hasLaunchEx()) && ex.attributes === 0) {
    return (cuLaunchKernel ??= drv.native('cuLaunchKernel'))(kernel.handle, cfg.gx, cfg.gy, cfg.gz, cfg.bx, cfg.by, cfg.bz, cfg.sharedMemBytes, h, pack.table, null);
  }
  if (ex.stream !== h) {
    // the stream of the config's last launch stays written: a loop on one stream writes it once
    writeU64(ex.view, 32, h);
    ex.stream = h;
  }
  return (cuLaunchKernelEx ??= drv.native('cuLaunchKernelEx'))(ex.bytes, kernel.handle, pack.table, null);
}

/**
 * `launch(stream, config, kernel, ...args)`: arguments typed by the kernel's signature or with `arg.*`.
 * For a kernel declared with a literal signature (`module.kernel('saxpy', ['ptr', 'f32', 'u32'])`) the
 * arguments are also checked by the compiler: a string where a pointer goes does not type-check.
 */
export function launch<A extends readonly unknown[]>(stream: StreamLike | undefined, config: LaunchConfig | LaunchConfigInit, kernel: Kernel<A>, ...args: NoInfer<A>): void {
  launchArgs(stream, config, kernel as unknown as Kernel, args as unknown as unknown[], 0);
}

/** @internal: encodes kernel node params (CUDA_KERNEL_NODE_PARAMS_v2, 72 bytes) for graphs. */
export function encodeKernelNodeParams(kernel: Kernel, config: LaunchConfig, pack: ArgPack, into = new Uint8Array(72)): Uint8Array {
  const dv = new DataView(into.buffer, into.byteOffset, 72);
  into.fill(0);
  writeU64(dv, 0, kernel.handle);
  [config.gx, config.gy, config.gz, config.bx, config.by, config.bz, config.sharedMemBytes].forEach((v, i) => dv.setUint32(8 + i * 4, v, true));
  writeU64(dv, 40, Number(koffi.address(pack.table.buffer)) + pack.table.byteOffset);
  return into;
}

/** @internal */
export function packFor(kernel: Kernel, args: ArrayLike<unknown>, what: string): ArgPack {
  const pack = kernel.argPack ?? packForUntyped(kernel, args, 0, what);
  pack.write(args, 0, what);
  return pack;
}
