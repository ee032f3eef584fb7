// The node:ffi backend of the Binder (opt-in: CUDA_TS_FFI=node or configure({ ffi: 'node' })).
//
// Node 26's built-in FFI calls a C function in ~12-25 ns where koffi takes ~35-65 ns, but it is
// stricter and narrower than koffi, so each function is bound through it only when its C signature
// maps one-to-one; anything else stays on koffi (the Binder falls back per function):
//   - 8/16/32-bit integers and floats: passed as is (node:ffi itself refuses 1.5, NaN, out-of-range
//     values with a TypeError; koffi would truncate them silently);
//   - 64-bit integers (handles, sizes, device pointers are JS numbers in cuda-ts): node:ffi wants a
//     bigint. BigInt(n) of a large number costs ~35-45 ns; writing the two 32-bit halves into a
//     typed array and reading it back as a BigUint64Array element costs ~10 ns, so that is the
//     adapter. 64-bit results come back as numbers when they fit in 2^53, as koffi does.
//   - `void *` / `T *`: node:ffi takes a TypedArray view through a slow path (~130 ns against ~30 ns
//     for an ArrayBuffer), so a view at offset 0 is passed as its ArrayBuffer (same address), and a
//     view at another offset (the typed layer's Scratch slots) as its address, computed once and
//     cached per view (a WeakMap; a detached view — byteLength 0 — is never looked up, so a cached
//     address is never used after its memory is gone). Numbers become addresses as above.
//   - not expressed (stay on koffi): records by value, `bool` (koffi takes JS booleans, node:ffi
//     numbers), `const char *` results (koffi returns a JS string), any type not listed below.
// Every adapted function reports a bad argument as a TypeError/RangeError naming the C function and
// the argument, as the rest of cuda-ts does.
import type { NativeFunction } from './binder';
import { libraryCandidates, type LibrarySpec } from './library';

/** The part of `node:ffi` cuda-ts uses. */
interface NodeFfiModule {
  DynamicLibrary: new (path: string) => NodeFfiLibraryHandle;
  getRawPointer(source: ArrayBuffer | SharedArrayBuffer | ArrayBufferView): bigint;
}
interface NodeFfiLibraryHandle {
  getFunction(name: string, signature: { arguments: string[]; return: string }): NativeFunction;
  getSymbol(name: string): bigint;
  close(): void;
}

let ffiModule: NodeFfiModule | null | undefined;
let unavailable = '';

/**
 * The running Node's `node:ffi`, or undefined (then `nodeFfiUnavailableReason()` says why).
 * Node 26 provides it (`--experimental-ffi` on the 26.0-26.9 lines; on by default from 26.10 where
 * `--no-experimental-ffi` turns it off).
 * @internal
 */
export function nodeFfi(): NodeFfiModule | undefined {
  if (ffiModule === undefined) {
    ffiModule = null;
    try {
      const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
      const m = getBuiltin ? getBuiltin('node:ffi') : undefined;
      if (m && typeof (m as NodeFfiModule).DynamicLibrary === 'function') ffiModule = m as NodeFfiModule;
      else unavailable = `node ${process.version} has no node:ffi (Node 26 provides it; with --experimental-ffi before 26.10)`;
    } catch (e) {
      unavailable = `node:ffi did not load: ${(e as Error).message}`;
    }
  }
  return ffiModule ?? undefined;
}

/** Why node:ffi is unavailable in this Node ('' when it is available). */
export function nodeFfiUnavailableReason(): string {
  nodeFfi();
  return unavailable;
}

// ---- type mapping ------------------------------------------------------------------------------

type Conv = 'none' | 'u64' | 'i64' | 'ptr';
interface ArgPlan {
  ffi: string;
  conv: Conv;
}

const SCALARS: Record<string, ArgPlan> = {};
for (const [names, ffi, conv] of [
  [['int8_t', 'int8', 'char', 'signed char'], 'int8', 'none'],
  [['uint8_t', 'uint8', 'unsigned char', 'uchar'], 'uint8', 'none'],
  [['int16_t', 'int16', 'short'], 'int16', 'none'],
  [['uint16_t', 'uint16', 'unsigned short', 'ushort'], 'uint16', 'none'],
  [['int32_t', 'int32', 'int'], 'int32', 'none'],
  [['uint32_t', 'uint32', 'uint', 'unsigned int', 'unsigned'], 'uint32', 'none'],
  [['int64_t', 'int64', 'long long', 'intptr_t', 'ssize_t', 'long'], 'int64', 'i64'],
  [['uint64_t', 'uint64', 'unsigned long long', 'uintptr_t', 'size_t', 'unsigned long', 'ulong'], 'uint64', 'u64'],
  [['float', 'float32'], 'float', 'none'],
  [['double', 'float64'], 'double', 'none'],
] as const) {
  for (const n of names) SCALARS[n] = { ffi, conv };
}

/** How one parameter type maps to node:ffi, or undefined when it does not (stay on koffi). @internal */
export function nodeFfiParam(type: unknown): ArgPlan | undefined {
  if (typeof type !== 'string') return undefined; // a koffi type object: a record by value
  const t = type.trim();
  if (SCALARS[t]) return SCALARS[t];
  if (t.endsWith('*')) return { ffi: 'pointer', conv: 'ptr' }; // const char * too: node:ffi copies JS strings
  return undefined;
}

/** How a result type maps: [node:ffi type, wide (64-bit, normalise to number)], or undefined. */
export function nodeFfiResult(type: unknown): [string, boolean] | undefined {
  if (typeof type !== 'string') return undefined;
  const t = type.trim();
  if (t === 'void') return ['void', false];
  const s = SCALARS[t];
  if (!s) return undefined; // pointers (koffi: bigint/string), bool, records
  return [s.ffi, s.conv !== 'none'];
}

/**
 * The node:ffi signature of a C function, or the reason it stays on koffi.
 * @param result the koffi result type of the binding table
 * @param params the koffi parameter types
 * @internal
 */
export function nodeFfiSignature(result: unknown, params: readonly unknown[]): { args: ArgPlan[]; result: [string, boolean] } | string {
  const r = nodeFfiResult(result);
  if (!r) return `result type ${describe(result)} is not expressed through node:ffi`;
  const args: ArgPlan[] = [];
  for (let i = 0; i < params.length; i++) {
    const a = nodeFfiParam(params[i]);
    if (!a) return `parameter ${i} (${describe(params[i])}) is not expressed through node:ffi`;
    args.push(a);
  }
  return { args, result: r };
}

function describe(t: unknown): string {
  return typeof t === 'string' ? t : 'a record by value';
}

// ---- argument adapters (shared by every adapted function) ---------------------------------------

const wide = new BigUint64Array(1);
const wideSigned = new BigInt64Array(wide.buffer);
const halves = new Uint32Array(wide.buffer);
const TWO32 = 4294967296;

/** A non-negative safe integer as a uint64 bigint (bigints pass through; node:ffi range-checks them). */
function toU64(v: unknown, i: number): unknown {
  if (typeof v !== 'number') return v;
  if (!(v >= 0 && v <= Number.MAX_SAFE_INTEGER && Math.floor(v) === v)) throw new RangeError(`Argument ${i}: ${v} is not a non-negative integer below 2^53 (pass a bigint beyond)`);
  halves[0] = v >>> 0;
  halves[1] = (v / TWO32) >>> 0;
  return wide[0];
}

/** A safe integer as an int64 bigint. */
function toI64(v: unknown, i: number): unknown {
  if (typeof v !== 'number') return v;
  if (!Number.isSafeInteger(v)) throw new RangeError(`Argument ${i}: ${v} is not an integer within ±2^53 (pass a bigint beyond)`);
  const hi = Math.floor(v / TWO32);
  halves[0] = (v - hi * TWO32) >>> 0;
  halves[1] = hi >>> 0;
  return wideSigned[0];
}

const viewAddresses = new WeakMap<ArrayBufferView, bigint>();

/** A pointer argument in the form node:ffi takes fastest (see the top comment). */
function toPointer(v: unknown, i: number): unknown {
  if (typeof v === 'object') {
    if (v === null || !ArrayBuffer.isView(v)) return v;
    if (v.byteLength === 0) return v; // detached or empty: node:ffi decides (never a cached address)
    const buffer = v.buffer;
    if (v.byteOffset === 0 && !(buffer instanceof SharedArrayBuffer)) return buffer;
    let address = viewAddresses.get(v);
    if (address === undefined) {
      address = ffiModule!.getRawPointer(buffer) + BigInt(v.byteOffset);
      viewAddresses.set(v, address);
    }
    return address;
  }
  if (typeof v === 'number') return toU64(v, i);
  return v; // bigint, string (copied as UTF-8), undefined (NULL)
}

/** A 64-bit result as koffi gives it: a number when it fits in 2^53, else the bigint. */
function fromWide(r: unknown): unknown {
  return typeof r === 'bigint' && r <= 9007199254740991n && r >= -9007199254740991n ? Number(r) : r;
}

function renameError(fn: string, params: readonly unknown[], e: unknown): unknown {
  // By name: node:ffi's errors come from Node's own realm (a vm context such as Jest's has others).
  const kind = (e as Error | undefined)?.name;
  if (kind !== 'TypeError' && kind !== 'RangeError') return e;
  const message = (e as Error).message;
  const which = /Argument (\d+)/.exec(message);
  const where = which ? ` (parameter ${which[1]}: ${describe(params[Number(which[1])])})` : '';
  return kind === 'RangeError' ? new RangeError(`${fn}: ${message}${where}`) : new TypeError(`${fn}: ${message}${where}`);
}

/**
 * Wraps a node:ffi function with the adapters its signature needs, as straight-line code (one
 * compiled function per signature shape: no per-argument loop or array on the call path).
 */
function adapt(fn: NativeFunction, name: string, params: readonly unknown[], plan: { args: ArgPlan[]; result: [string, boolean] }): NativeFunction {
  const names = plan.args.map((_, i) => `a${i}`);
  const conv: Record<Conv, string> = { none: '', u64: 'U', i64: 'I', ptr: 'P' };
  // A typed array at offset 0 of an unshared buffer (the out-parameter slots of the typed layer) is
  // turned into its ArrayBuffer here, in this function's own code, so that its property reads stay
  // monomorphic; the shared toPointer sees every shape of every function and handles the rest.
  const fast = plan.args.map((a, i) => (a.conv === 'ptr'
    ? `const p${i} = (typeof a${i} === 'object' && a${i} !== null && a${i}.byteOffset === 0 && ArrayBuffer.isView(a${i}) && a${i}.byteLength !== 0 && !((b = a${i}.buffer) instanceof SharedArrayBuffer)) ? b : P(a${i}, ${i});`
    : '')).join(' ');
  const call = `f(${plan.args.map((a, i) => (a.conv === 'none' ? names[i] : a.conv === 'ptr' ? `p${i}` : `${conv[a.conv]}(${names[i]}, ${i})`)).join(', ')})`;
  const body = `${plan.args.some((a) => a.conv === 'ptr') ? 'let b; ' : ''}${fast} ${plan.result[1] ? `return W(${call});` : `return ${call};`}`;
  const argsCheck = `if (arguments.length !== ${names.length}) throw new TypeError(name + ': expected ${names.length} argument${names.length === 1 ? '' : 's'}, got ' + arguments.length);`;
  const source = `return function ${name.replace(/[^A-Za-z0-9_$]/g, '_')}(${names.join(', ')}) { ${argsCheck} try { ${body} } catch (e) { throw R(name, params, e); } };`;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const make = new Function('f', 'U', 'I', 'P', 'W', 'R', 'name', 'params', source) as (...a: unknown[]) => NativeFunction;
  return make(fn, toU64, toI64, toPointer, fromWide, renameError, name, params);
}

// ---- libraries ----------------------------------------------------------------------------------

/**
 * One module's library opened through node:ffi. Each Binder opens its own handle: node:ffi allows
 * one signature per symbol and handle, and two releases of a module may bind one symbol two ways.
 */
export class NodeFfiLibrary {
  /** The path it was opened by. */
  readonly path: string;
  private constructor(private readonly handle: NodeFfiLibraryHandle, path: string) {
    this.path = path;
  }

  /**
   * Opens the first candidate of the module's search order that loads (the same order as koffi's
   * {@link loadLibrary}; the library koffi loaded is already in the process, so this finds it).
   */
  static open(spec: LibrarySpec): NodeFfiLibrary {
    const ffi = nodeFfi();
    if (!ffi) throw new Error(nodeFfiUnavailableReason());
    const tried: string[] = [];
    for (const { path } of libraryCandidates(spec)) {
      try {
        return new NodeFfiLibrary(new ffi.DynamicLibrary(path), path);
      } catch (e) {
        tried.push(`${path}: ${(e as Error).message.split('\n')[0]}`);
      }
    }
    throw new Error(`node:ffi could not open ${spec.sonames.join(', ')}: ${tried.join('; ')}`);
  }

  /** The address of an exported symbol, or undefined when the library does not export it. */
  address(symbol: string): bigint | undefined {
    try {
      return this.handle.getSymbol(symbol);
    } catch {
      return undefined;
    }
  }

  /**
   * Binds `symbol` through node:ffi, or returns why it cannot (the caller keeps koffi).
   * @param name the user-facing name, for messages
   */
  bind(symbol: string, name: string, result: unknown, params: readonly unknown[]): NativeFunction | string {
    const plan = nodeFfiSignature(result, params);
    if (typeof plan === 'string') return plan;
    let fn: NativeFunction;
    try {
      fn = this.handle.getFunction(symbol, { arguments: plan.args.map((a) => a.ffi), return: plan.result[0] });
    } catch (e) {
      return `node:ffi refused ${symbol}: ${(e as Error).message}`;
    }
    return adapt(fn, name, params, plan);
  }
}
