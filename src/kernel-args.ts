// Kernel arguments: the parameter types of a kernel signature, the typed `arg.*` helpers, and ArgPack,
// the argument storage of one signature: one preallocated ArrayBuffer that a DataView writes each value
// into at its aligned offset, and a BigUint64Array holding the native address of each slot (the
// `kernelParams` table), filled once. Values are validated before any native call.
import { isArrayBuffer, koffi } from '../support';
import * as drv from './driver';
import { describe } from './describe';
import { DeviceBuffer } from './memory/device-buffer';
import { PinnedHostBuffer } from './memory/pinned-host-buffer';

/**
 * The brand module.ts puts on Kernel.prototype: launch.ts recognises a Kernel by it (as instanceof would,
 * and as fast) without a run-time import of module.ts, which imports launch.ts for Kernel.launch. @internal
 */
export const KERNEL: unique symbol = Symbol('cuda-ts.Kernel');

/**
 * Scalar kernel parameter types. `ptr` takes a DeviceBuffer, a PinnedHostBuffer, a TypedArray/ArrayBuffer
 * over page-locked device-mapped host memory (a PinnedHostBuffer's view) or, where the device reports
 * pageable memory access (HMM/ATS), over any host memory, a device address or null.
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

/** Size in bytes of each scalar parameter type. @internal */
export const SIZES: Record<ScalarType, number> = { ptr: 8, i8: 1, u8: 1, i16: 2, u16: 2, i32: 4, u32: 4, i64: 8, u64: 8, f32: 4, f64: 8 };
/** Whether arguments may be stored through typed arrays (host byte order): little-endian, as every CUDA host is. */
const NATIVE_STORES = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
/**
 * The inline check and store of an argument of the types most kernels take, as source for an ArgPack's
 * writer (`a`: the argument, `w`: its slot's offset in 32-bit words, exact for these naturally aligned
 * types). A value that fails the check takes writeSlot's full validation.
 */
const STORES: Partial<Record<ScalarType, (a: string, w: number) => string>> = {
  // a safe integer: the store's ToUint32 keeps the low word exactly, and truncates the high one
  ptr: (a, w) => `if (${a} instanceof DeviceBuffer) { const p = ${a}.launchAddress(); u32[${w}] = p; u32[${w + 1}] = p / 4294967296; }`,
  f32: (a, w) => `if (typeof ${a} === 'number') f32[${w}] = ${a};`,
  f64: (a, w) => `if (typeof ${a} === 'number') f64[${w >> 1}] = ${a};`,
  i32: (a, w) => `if (typeof ${a} === 'number' && (${a} | 0) === ${a}) i32[${w}] = ${a};`,
  u32: (a, w) => `if (typeof ${a} === 'number' && ${a} >>> 0 === ${a}) u32[${w}] = ${a};`,
};
const INT_RANGE: Partial<Record<ScalarType, [number, number]>> = {
  i8: [-128, 127],
  u8: [0, 255],
  i16: [-32768, 32767],
  u16: [0, 65535],
  i32: [-2147483648, 2147483647],
  u32: [0, 4294967295],
};

/**
 * What a `'ptr'` parameter takes: a DeviceBuffer (or ManagedBuffer), a PinnedHostBuffer, a TypedArray,
 * DataView or ArrayBuffer over page-locked, device-mapped host memory (e.g. `pinned.view(Float32Array)`:
 * its device address is looked up with cuMemHostGetDevicePointer, no koffi needed) or over pageable
 * host memory where the device reports pageable memory access (`Device.properties.pageableMemoryAccess`:
 * HMM or ATS; elsewhere a TypeError says so), a device address (number or bigint), or null.
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
export class TypedArgValue implements TypedArg {
  constructor(
    readonly type: ArgType,
    readonly value: unknown,
  ) {}
}
const typed =
  (type: ArgType) =>
  (value: unknown): TypedArg =>
    new TypedArgValue(type, value);
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
  /**
   * A struct passed by value: its bytes, aligned to `align` bytes (default 8).
   * @param bytes The struct's bytes as the kernel lays it out (a TypedArray, DataView or ArrayBuffer).
   * @param align The struct's alignment in bytes (default 8).
   */
  struct: (bytes: ArrayBufferView | ArrayBuffer, align = 8): TypedArg => {
    if (!isArrayBuffer(bytes) && !ArrayBuffer.isView(bytes))
      throw new TypeError(`arg.struct: bytes must be a TypedArray, DataView or ArrayBuffer, got ${describe(bytes)}`);
    const t = { struct: bytes.byteLength, align };
    checkSignature([t], 'arg.struct');
    return new TypedArgValue(t, bytes);
  },
};

export function isTypedArg(v: unknown): v is TypedArg {
  if (v instanceof TypedArgValue) return true;
  // a hand-made { type, value } works too (the slower check runs only for objects that are neither)
  return typeof v === 'object' && v !== null && !(v instanceof DeviceBuffer) && 'type' in v && 'value' in v;
}

/** How messages name a parameter type: `f32`, `struct(16 bytes)`. */
export function describeType(t: ArgType): string {
  return typeof t === 'string' ? t : `struct(${t.struct} bytes)`;
}

const describeValue = describe;

/** Validates a signature; throws TypeError naming `where` and the argument. */
export function checkSignature(sig: readonly ArgType[], where = 'kernel signature'): void {
  if (!Array.isArray(sig)) throw new TypeError(`${where}: a kernel signature is an array of argument types, got ${describe(sig)}`);
  if (sig.length > 4096) throw new RangeError(`${where}: ${sig.length} parameters is more than a kernel can take`);
  sig.forEach((t, i) => {
    if (typeof t === 'string') {
      if (!Object.prototype.hasOwnProperty.call(SIZES, t))
        throw new TypeError(`${where}: signature[${i}]: unknown type '${t}' (expected ${Object.keys(SIZES).join(', ')} or { struct: bytes, align? })`);
    } else if (typeof t !== 'object' || t === null || typeof t.struct !== 'number' || !Number.isSafeInteger(t.struct) || t.struct <= 0 || t.struct > 32764) {
      throw new TypeError(
        `${where}: signature[${i}]: a struct type is { struct: byteSize (1 to 32764), align? }, got ${describe(t)}${typeof t === 'object' && t !== null ? ` with struct ${describe((t as StructType).struct)}` : ''}`,
      );
    } else if (
      t.align !== undefined &&
      (typeof t.align !== 'number' || !Number.isInteger(t.align) || t.align < 1 || t.align > 256 || (t.align & (t.align - 1)) !== 0)
    ) {
      throw new RangeError(`${where}: signature[${i}]: struct align must be a power of two from 1 to 256, got ${describe(t.align)}`);
    }
  });
}

/** `ArgPack.writeFew`'s shape: `n` arguments (at most four) given one by one. */
type FewWriter = (n: number, a0: unknown, a1: unknown, a2: unknown, a3: unknown, what: string) => void;
/** `ArgPack.write`'s shape: the arguments `args[from..]`. */
type ArrayWriter = (args: ArrayLike<unknown>, from: number, what: string) => void;

/**
 * Argument storage for one signature: one ArrayBuffer and the kernelParams table, reused per launch,
 * and the signature's own writers: straight-line code with each argument's check and store inline at a
 * constant offset, made once per signature (what a C compiler would make of a launch). Measured on the
 * CI machine: 2-4 ns for (ptr, ptr, f32, u32) under Node, Bun and Deno, against 21-26 ns for one loop
 * dispatching on each argument's type (V8 stops inlining it past a few arguments).
 */
export class ArgPack {
  /** The argument types (a copy of the signature). */
  readonly types: readonly ArgType[];
  /** Byte offset of each argument in `bytes`. */
  readonly offsets: number[];
  /** The argument storage. */
  readonly bytes: Uint8Array;
  /** A DataView over `bytes`, through which writeSlot writes. */
  readonly view: DataView;
  /** `void *kernelParams[]`: the native address of each argument slot. */
  readonly table: BigUint64Array;
  /** Size of the storage in bytes (a multiple of 8, at least 8). */
  readonly byteLength: number;
  /** Validates and writes `args[from..]`; throws TypeError/RangeError before any native call. */
  readonly write: (args: ArrayLike<unknown>, from: number, what: string) => void;
  /**
   * {@link write} for `n` (at most four) arguments given one by one: what launch() passes, so that a
   * launch of up to four arguments allocates no array.
   */
  readonly writeFew: (n: number, a0: unknown, a1: unknown, a2: unknown, a3: unknown, what: string) => void;

  /**
   * Lays out `types` (scalars at their natural alignment, structs at their `align`) and fills the
   * kernelParams table.
   * @param types The kernel's parameter types in order: scalar names (`'ptr'`, `'f32'`, `'u32'`, …) or `{ struct, align }` for a struct by value.
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
    const writers = compileWriters(this);
    this.write = writers?.[1] ?? ((args, from, what) => this.writeEach(args, from, what));
    this.writeFew = writers?.[0] ?? ((n, a0, a1, a2, a3, what) => this.writeEach([a0, a1, a2, a3].slice(0, Math.max(0, n)), 0, what));
  }

  /** The error for `got` arguments where the signature takes another count. @internal */
  countError(got: number, what: string): TypeError {
    return new TypeError(`${what}: expected ${this.types.length} argument(s) (${this.types.map(describeType).join(', ')}), got ${got}`);
  }

  /** The writers' stand-in where a host forbids compiling them: each argument through writeSlot. */
  private writeEach(args: ArrayLike<unknown>, from: number, what: string): void {
    const n = this.types.length;
    if (args.length - from !== n) throw this.countError(args.length - from, what);
    for (let i = 0; i < n; i++) this.writeSlot(args[from + i], i, what);
  }

  /** Validates and writes argument `i` of any type (a TypedArg, a struct, 64-bit integers, a bad value). @internal */
  writeSlot(value: unknown, i: number, what: string): void {
    let v = value;
    const t = this.types[i];
    const off = this.offsets[i];
    const dv = this.view;
    if (isTypedArg(v)) {
      if (describeType(v.type) !== describeType(t))
        throw new TypeError(`${what}: argument ${i} is declared ${describeType(t)} but was given arg.${describeType(v.type)}()`);
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
          if (t === 'u64' ? v < 0n || v >= 1n << 64n : v < -(1n << 63n) || v >= 1n << 63n)
            throw new RangeError(`${what}: argument ${i} (${t}) out of range: ${v}`);
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

/**
 * The writers of `pack`'s signature ([few, array]), compiled from its validated types and offsets only
 * (no text a caller gave reaches the source), or undefined where the host forbids `new Function` (a
 * content security policy): ArgPack then writes each argument through writeSlot.
 */
function compileWriters(pack: ArgPack): [FewWriter, ArrayWriter] | undefined {
  const n = pack.types.length;
  const names = pack.types.map((_, i) => `a${i}`);
  const body = pack.types
    .map((t, i) => {
      const store = NATIVE_STORES && typeof t === 'string' ? STORES[t] : undefined;
      const slow = `pack.writeSlot(a${i}, ${i}, what);`;
      return store ? `${store(`a${i}`, pack.offsets[i] >> 2)} else ${slow}` : slow;
    })
    .join('\n  ');
  const few =
    n <= 4
      ? `function writeFew(n, a0, a1, a2, a3, what) {\n  if (n !== ${n}) throw pack.countError(n, what);\n  ${body}\n}`
      : `function writeFew(n, a0, a1, a2, a3, what) {\n  throw pack.countError(n, what);\n}`;
  const loads = names.map((a, i) => `const ${a} = args[from + ${i}];`).join('\n  ');
  const array = `function write(args, from, what) {\n  if (args.length - from !== ${n}) throw pack.countError(args.length - from, what);\n  ${loads}\n  ${body}\n}`;
  const buffer = pack.bytes.buffer;
  try {
    const make = new Function('pack', 'DeviceBuffer', 'u32', 'i32', 'f32', 'f64', `return [${few}, ${array}];`);
    return make(pack, DeviceBuffer, new Uint32Array(buffer), new Int32Array(buffer), new Float32Array(buffer), new Float64Array(buffer)) as [
      FewWriter,
      ArrayWriter,
    ];
  } catch {
    return undefined;
  }
}

function badArg(what: string, i: number, t: ArgType, v: unknown): TypeError {
  const expects =
    t === 'ptr'
      ? 'a DeviceBuffer, PinnedHostBuffer, host memory (TypedArray or ArrayBuffer), device address or null'
      : t === 'f32' || t === 'f64'
        ? 'a number'
        : typeof t === 'string'
          ? t.endsWith('64')
            ? 'an integer (number or bigint)'
            : 'an integer'
          : 'bytes (TypedArray or ArrayBuffer)';
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
 * The device address of host memory under an ArrayBuffer or view. Page-locked memory mapped into the
 * device's address space (a PinnedHostBuffer's memory, or memory registered with
 * CU_MEMHOSTREGISTER_DEVICEMAP) gives its mapped address (cuMemHostGetDevicePointer). Pageable memory
 * is passed as it is where the current context's device reports pageable memory access (HMM or ATS:
 * CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS); elsewhere it is a TypeError, before the launch. The
 * program keeps pageable memory reachable until the kernel is done (as with any host memory).
 */
function hostMemoryDevicePointer(v: ArrayBuffer | ArrayBufferView, i: number, what: string): number {
  const buffer = isArrayBuffer(v) ? v : v.buffer;
  const offset = isArrayBuffer(v) ? 0 : v.byteOffset;
  if (buffer.byteLength === 0) throw new TypeError(`${what}: argument ${i} (ptr) is an empty ArrayBuffer: it has no memory to point at`);
  const host = Number(koffi.address(buffer)) + offset;
  const status = drv.native('cuMemHostGetDevicePointer')(hostPointerSlot, host, 0);
  if (status === 0) return Number(hostPointerSlot[0]);
  const device = currentDeviceOrUndefined();
  if (device !== undefined && pageableAccess(device)) return host;
  const who =
    device === undefined
      ? 'no context is current to ask'
      : `device ${device} reports no pageable memory access (CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: HMM or ATS)`;
  throw new TypeError(
    `${what}: argument ${i} (ptr) is a ${describeValue(v)} over host memory the device cannot address (cuMemHostGetDevicePointer: CUresult ${status}): ` +
      `pageable memory, and ${who}: use a PinnedHostBuffer (or its view()) or a DeviceBuffer`,
  );
}

/** The device of the current context, or undefined when none is current. */
function currentDeviceOrUndefined(): number | undefined {
  const dev = new Int32Array(1);
  try {
    return drv.globalStatus('cuCtxGetDevice', dev) === 0 ? dev[0] : undefined;
  } catch {
    return undefined; // no driver to ask: the caller refuses the pointer
  }
}

const pageable = new Map<number, boolean>();
/** Whether `device` reports pageable memory access (kernels may use pageable host addresses); asked once per device. */
export function pageableAccess(device: number): boolean {
  let yes = pageable.get(device);
  if (yes === undefined) {
    const value = new Int32Array(1);
    drv.global('cuDeviceGetAttribute', value, drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, device);
    yes = value[0] !== 0;
    pageable.set(device, yes);
  }
  return yes;
}

/** Test seam: forgets what pageableAccess learnt. @internal */
export function forgetPageableAccess(): void {
  pageable.clear();
}

const TWO32 = 0x100000000;
/** Writes a safe-integer address or size as a little-endian u64 (no BigInt on the launch path). @internal */
export function writeU64(dv: DataView, off: number, v: number): void {
  dv.setUint32(off, v >>> 0, true);
  dv.setUint32(off + 4, Math.floor(v / TWO32) >>> 0, true);
}
/** Writes a safe integer as a little-endian i64. */
function writeI64(dv: DataView, off: number, v: number): void {
  const hi = Math.floor(v / TWO32);
  dv.setUint32(off, (v - hi * TWO32) >>> 0, true);
  dv.setInt32(off + 4, hi | 0, true);
}

/** Argument layouts of untyped launches, by their types (at most 256 kept). */
const packCache = new Map<string, ArgPack>();
/** The argument layout of `args[from..]`, each an `arg.*()` value or a buffer. @internal */
export function packForTypedArgs(args: ArrayLike<unknown>, from: number, what: string): ArgPack {
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
