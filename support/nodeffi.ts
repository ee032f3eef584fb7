// The node:ffi backend of the Binder (opt-in: CUDA_TS_FFI=node or configure({ ffi: 'node' })).
//
// Node 26's built-in FFI is stricter and narrower than koffi, so each function is bound through it
// only when its C signature maps one-to-one; anything else stays on koffi (the Binder falls back per
// function). What the adapter below passes (measured against C, koffi and node:ffi's own wrapper on libcudart):
//   - Functions of at most six parameters are called as node:ffi's direct fast call, with every
//     integer and pointer as a bigint (see "how a function is called" below): ~10-20 ns, where
//     node:ffi's own argument wrapper costs ~25-150 ns and koffi ~25-55 ns. Functions of seven or
//     more stay on koffi (node:ffi's shared-buffer call is slower than koffi's).
//   - 8/16/32-bit integers: checked here against the C type (1.5, NaN, out-of-range values are a
//     TypeError; koffi would truncate them silently); 0..1023 become bigints from a table.
//   - 64-bit integers (handles, sizes, device pointers are JS numbers in cuda-ts): a bigint, from
//     the number's two 32-bit halves (~10 ns; BigInt(n) of a large number costs ~35-45 ns), and the
//     last number of each argument is remembered with its bigint. 64-bit results come back as
//     numbers when they fit in 2^53, as koffi does.
//   - `void *` / `T *`: a typed array, DataView or ArrayBuffer becomes its address (node:ffi takes
//     objects only through its slow path, ~130 ns): computed once per object and remembered (see
//     objectPointer and convert), used only while the object is attached, the object held until the
//     next call so that its memory outlives the call. null/undefined are NULL; strings are copied
//     by node:ffi as UTF-8.
//   - not expressed (stay on koffi): records by value, `bool` (koffi takes JS booleans, node:ffi
//     numbers), `const char *` results (koffi returns a JS string), any type not listed below.
// Every adapted function reports a bad argument as a TypeError/RangeError naming the C function and
// the argument, as the rest of cuda-ts does.
import { types } from 'node:util';
import type { NativeFunction } from './binder';
import { FIX_ARGUMENTS } from './fixed-call';
import { jsRuntime, jsRuntimeName, jsRuntimeVersion, type JsRuntime } from './jsruntime';
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
      else unavailable = nodeFfiMissing(jsRuntime(), jsRuntime() === 'node' ? process.version : jsRuntimeVersion());
    } catch (e) {
      unavailable = `node:ffi did not load: ${(e as Error).message}`;
    }
  }
  return ffiModule ?? undefined;
}

/**
 * Why a runtime without node:ffi has none. Bun and Deno report a Node `process.version` of their own
 * (Bun 1.4 says v26.3.0), so under them the reason names the runtime, not a Node version.
 * @internal
 */
export function nodeFfiMissing(runtime: JsRuntime, version: string): string {
  if (runtime !== 'node') return `node:ffi is Node's own FFI; this is ${jsRuntimeName(runtime)} ${version}, not Node`;
  return `node ${version} has no node:ffi (Node 26 provides it; with --experimental-ffi before 26.10)`;
}

/** Why node:ffi is unavailable in this process ('' when it is available). */
export function nodeFfiUnavailableReason(): string {
  nodeFfi();
  return unavailable;
}

// ---- type mapping ------------------------------------------------------------------------------

type Conv = 'none' | 'u64' | 'i64' | 'ptr';
/** How one parameter is passed: the FFI's type and the conversion. @internal */
export interface ArgPlan {
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

// ---- how a function is called: straight into node:ffi's fast call, or through its JS wrapper ------
//
// node:ffi (26.10) hands back one of three kinds of function, by signature:
//   - direct: every parameter `pointer`, `float` or `double`, at most six of them, and not one lone
//     `pointer`: V8's fast API call itself, as cheap as a call without arguments (~10-15 ns here).
//     Pointers are taken fast as bigints; anything else (buffers, null, strings) takes a slow path
//     (~130 ns).
//   - wrapped: any 8-64-bit integer parameter, or one lone pointer: a JS wrapper validates each
//     argument before the fast call (~15-25 ns more, and its code is shared by every function of the
//     same arity, so its call sites turn polymorphic in a real program);
//   - shared buffer: seven parameters or more: a JS wrapper writes the arguments into a buffer;
//     pointers are fast as bigints, anything else takes the slow path. Slower than koffi: such a
//     function stays on koffi (NodeFfiLibrary.bind).
// So, where the C ABI allows it (WIDE_ABI), a function of at most six parameters is declared to
// node:ffi with every integer parameter as a `pointer` (a 64-bit register) and called with bigints,
// after this adapter has checked the value against the C type; a one-parameter function gets an
// unused second `pointer` argument (0n) so that node:ffi binds it direct. Both are exact on the
// 64-bit ABIs named below: the first six integer/pointer arguments travel in 64-bit registers (or
// 8-byte stack slots on Windows), a callee reads only the low 8/16/32 bits of a narrower parameter
// (the adapter still sign- or zero-extends to 32 bits, as clang's callees expect), and the caller
// owns the argument registers and stack, so an unread extra argument is harmless.

/** 64-bit ABIs where widening integer parameters to a register and an unread extra argument are exact. */
const WIDE_ABI = process.arch === 'x64' || process.arch === 'arm64';
/** The most parameters node:ffi binds as a direct fast call. */
const DIRECT_MAX = 6;

/** How a function is called through node:ffi (see above). @internal */
export interface NodeFfiCallPlan {
  /** node:ffi calls the C function without a JS wrapper of its own. */
  direct: boolean;
  /** The parameter types node:ffi is given (integers as `pointer` when direct). */
  ffiArgs: string[];
  /** An unused trailing argument is passed (a one-parameter function called direct). */
  padded: boolean;
}

/**
 * How a function of this node:ffi signature is called (see the comment above).
 * @param wideAbi whether this platform's ABI allows widened and extra arguments (the running one by default)
 * @internal
 */
export function nodeFfiCallPlan(plan: { args: ArgPlan[] }, wideAbi = WIDE_ABI): NodeFfiCallPlan {
  const n = plan.args.length;
  const direct = n === 0 || (wideAbi && n <= DIRECT_MAX);
  if (!direct) return { direct: false, ffiArgs: plan.args.map((a) => a.ffi), padded: false };
  const ffiArgs = plan.args.map((a) => (a.ffi === 'float' || a.ffi === 'double' ? a.ffi : 'pointer'));
  const padded = n === 1 && ffiArgs[0] === 'pointer'; // one lone pointer would get node:ffi's wrapper
  if (padded) ffiArgs.push('pointer');
  return { direct: true, ffiArgs, padded };
}

// ---- argument adapters (shared by every adapted function) ---------------------------------------

const wide = new BigUint64Array(1);
const wideSigned = new BigInt64Array(wide.buffer);
const halves = new Uint32Array(wide.buffer);
const TWO32 = 4294967296;
/** bigints 0..1023: small integers (device ordinals, enums, flags) become bigints without allocating. */
const SMALL: bigint[] = Array.from({ length: 1024 }, (_, i) => BigInt(i));
const U64_MAX = 0xffffffffffffffffn;
const I64_MIN = -0x8000000000000000n;
const I64_MAX = 0x7fffffffffffffffn;
const TWO64 = 0x10000000000000000n;

/** 8-32-bit integers: the range and node:ffi's name of each type. */
const INT_RANGE: Record<string, [number, number, string]> = {
  int8: [-128, 127, 'an int8'],
  uint8: [0, 255, 'a uint8'],
  int16: [-32768, 32767, 'an int16'],
  uint16: [0, 65535, 'a uint16'],
  int32: [-2147483648, 2147483647, 'an int32'],
  uint32: [0, 4294967295, 'a uint32'],
};

/** node:ffi's own wording for a value of the wrong type (renamed with the function by renameError). */
function argError(i: number, what: string): TypeError {
  return new TypeError(`Argument ${i} must be ${what}`);
}

/** A non-negative safe integer as a uint64 bigint (bigints pass through; node:ffi range-checks them). */
function toU64(v: unknown, i: number): unknown {
  if (typeof v !== 'number') return v;
  if (!(v >= 0 && v <= Number.MAX_SAFE_INTEGER && Math.floor(v) === v))
    throw new RangeError(`Argument ${i}: ${v} is not a non-negative integer below 2^53 (pass a bigint beyond)`);
  if (v < 1024) return SMALL[v];
  halves[0] = v >>> 0;
  halves[1] = (v / TWO32) >>> 0;
  return wide[0];
}

/** A safe integer as an int64 bigint; `unsigned`: its two's complement as a uint64 (a register's bits). */
function toI64(v: unknown, i: number, unsigned = false): unknown {
  if (typeof v !== 'number') return v;
  if (!Number.isSafeInteger(v)) throw new RangeError(`Argument ${i}: ${v} is not an integer within ±2^53 (pass a bigint beyond)`);
  if (v >= 0 && v < 1024) return SMALL[v];
  const hi = Math.floor(v / TWO32);
  halves[0] = (v - hi * TWO32) >>> 0;
  halves[1] = hi >>> 0;
  return unsigned ? wide[0] : wideSigned[0];
}

/** A bigint for a 64-bit parameter declared `pointer`: checked against the C type, as its register bits. */
function bigint64(v: bigint, i: number, signed: boolean): bigint {
  if (signed) {
    if (v < I64_MIN || v > I64_MAX) throw argError(i, 'an int64');
    return v < 0n ? v + TWO64 : v;
  }
  if (v < 0n || v > U64_MAX) throw argError(i, 'a uint64');
  return v;
}

/** An 8-32-bit integer's 32 low bits (`x >>> 0`, 1024 or more) as a bigint. */
function bigint32(x: number): bigint {
  return BigInt(x);
}

// Addresses of memory passed as pointers, computed once per typed array, DataView or ArrayBuffer
// (the key keeps its buffer alive, so a cached address is of live memory as long as it can be looked
// up) and used only while the key is attached (byteLength ≠ 0 at the call: a detached typed array
// or ArrayBuffer reads 0, a detached DataView throws a TypeError, and objectPointer refuses both).
const addresses = new WeakMap<object, bigint>();
/** The initial "last buffer" of every pointer argument: no caller holds it, so none matches it. */
const NEVER = Object.freeze({ byteLength: 0 });

/**
 * The address of a buffer or view passed as a pointer (cached, see above), the object itself where
 * node:ffi should decide (an empty one; not memory at all), or a TypeError for a detached buffer.
 */
function objectPointer(v: object, i: number): unknown {
  return objectPointerBy(v, i, (buffer) => ffiModule!.getRawPointer(buffer), false);
}

/**
 * objectPointer through another FFI's raw-pointer function (the Deno backend); `empty`: what an
 * empty buffer becomes (an FFI that takes only bigints gets its raw pointer, not the object).
 * @internal
 */
export function objectPointerBy(v: object, i: number, raw: (buffer: ArrayBufferLike) => bigint, rawEmpty: boolean): unknown {
  const cached = addresses.get(v);
  if (cached !== undefined && (v as ArrayBufferView).byteLength !== 0) return cached;
  let buffer: ArrayBufferLike;
  const view = ArrayBuffer.isView(v);
  if (view) buffer = v.buffer;
  else if (types.isAnyArrayBuffer(v)) buffer = v as ArrayBufferLike;
  else return v; // not memory: node:ffi refuses it with its own TypeError
  if ((buffer as { detached?: boolean }).detached === true) {
    throw new TypeError(view ? `Argument ${i} is an ArrayBufferView backed by a detached ArrayBuffer` : `Argument ${i} is a detached ArrayBuffer`);
  }
  if ((v as ArrayBufferView | ArrayBuffer).byteLength === 0) return rawEmpty ? raw(buffer) : v; // empty: node:ffi passes it its own way
  // `.buffer` above moved an on-heap typed array's bytes off the V8 heap, where they never move
  const address = raw(buffer) + BigInt(view ? (v as ArrayBufferView).byteOffset : 0);
  addresses.set(v, address);
  return address;
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
 * The code converting argument `i` into `p<i>`. Closure variables remember, per argument, the last
 * number and its bigint (`l<i>`, `c<i>`: a handle or size passed again costs a comparison) and the
 * last buffer and its address (`k<i>`, `q<i>`: the typed layer passes the same Scratch slot every
 * call, a raw caller usually the same array). `k<i>` also keeps that buffer reachable until another
 * replaces it, so no collection can free the memory behind an address while C writes through it (an
 * optimized caller may count its own reference dead before the call returns).
 */
function convert(a: ArgPlan, i: number, direct: boolean, encodeStrings = false, narrowNumbers = false): string {
  const v = `a${i}`;
  const p = `p${i}`;
  const remember = (fn: string) => `if (${v} !== l${i}) { c${i} = ${fn}; l${i} = ${v}; } ${p} = c${i};`;
  if (a.conv === 'ptr') {
    return (
      `if (${v} === k${i} && ${v}.byteLength !== 0) ${p} = q${i};` +
      ` else if (typeof ${v} === 'object' && ${v} !== null) { ${p} = O(${v}, ${i}); if (typeof ${p} === 'bigint') { k${i} = ${v}; q${i} = ${p}; } }` +
      ` else if (typeof ${v} === 'number') { ${remember(`U(${v}, ${i})`)} }` +
      // an FFI without strings (Deno): a NUL-terminated UTF-8 copy, held in k<i> until the next call
      (encodeStrings ? ` else if (typeof ${v} === 'string') { k${i} = S(${v}); ${p} = q${i} = O(k${i}, ${i}); }` : '') +
      ` else ${p} = ${v} == null ? 0n : ${v};`
    ); // NULL as 0n: node:ffi's fast path takes bigints only
  }
  if (a.conv === 'u64' || a.conv === 'i64') {
    const signed = a.conv === 'i64';
    const num = signed ? `I(${v}, ${i}, ${direct})` : `U(${v}, ${i})`;
    if (!direct) return `if (typeof ${v} === 'number') { ${remember(num)} } else ${p} = ${v};`; // node:ffi checks the rest
    return `if (typeof ${v} === 'number') { ${remember(num)} } else if (typeof ${v} === 'bigint') ${p} = B(${v}, ${i}, ${signed}); else throw E(${i}, '${signed ? 'an int64' : 'a uint64'}');`;
  }
  const range = INT_RANGE[a.ffi];
  if (!range || (!direct && !narrowNumbers)) return `${p} = ${v};`; // floats, and integers node:ffi checks itself
  const [min, max, label] = range;
  const bad =
    a.ffi === 'int32' ? `(${v} | 0) !== ${v}` : a.ffi === 'uint32' ? `(${v} >>> 0) !== ${v}` : `(${v} | 0) !== ${v} || ${v} < ${min} || ${v} > ${max}`;
  if (narrowNumbers) return `if (typeof ${v} !== 'number' || ${bad}) throw E(${i}, '${label}'); ${p} = ${v};`;
  return (
    `if (typeof ${v} !== 'number' || ${bad}) throw E(${i}, '${label}');` +
    ` x = ${v} >>> 0; if (x < 1024) ${p} = T[x]; else { if (x !== l${i}) { c${i} = N(x); l${i} = x; } ${p} = c${i}; }`
  );
}

/** How another FFI (Deno's) differs from node:ffi for {@link adapt}. @internal */
export interface AdaptOptions {
  /** Memory's address (replaces objectPointer). */
  pointer: (v: object, i: number) => unknown;
  /** JS strings given for pointers are copied to NUL-terminated UTF-8 here (the FFI takes none). */
  encodeStrings: boolean;
  /**
   * 8-32-bit integers are declared to the FFI as their own types and passed as numbers once checked
   * here (Deno's fast call takes them so, ~4 ns less a parameter than a bigint); node:ffi's direct
   * call needs them as bigints of 64-bit registers instead.
   */
  narrowNumbers?: boolean;
}

const utf8 = new TextEncoder();
/** Wrappers made so far (each one's source carries its number, see adapt). */
let adaptedCount = 0;
/** A NUL-terminated UTF-8 copy of a string passed as `const char *`. */
function cString(s: string): Uint8Array {
  const bytes = new Uint8Array(s.length * 3 + 1);
  const { written } = utf8.encodeInto(s, bytes);
  return bytes.subarray(0, written + 1);
}

/**
 * Wraps an FFI function with the adapters its signature needs, as straight-line code (one
 * compiled function per C function: its call sites stay monomorphic, and no per-argument loop or
 * array is on the call path). The wrapper also offers, through {@link FIX_ARGUMENTS}, a form with
 * all its arguments converted once (see ./fixed-call).
 * @internal
 */
export function adapt(
  fn: NativeFunction,
  name: string,
  params: readonly unknown[],
  plan: { args: ArgPlan[]; result: [string, boolean] },
  call: NodeFfiCallPlan,
  options?: AdaptOptions,
): NativeFunction {
  const wrapper = adapterMaker(plan, call, options, false, name)(fn, ...adaptHelpers(name, params, options)) as NativeFunction;
  Object.defineProperty(wrapper, FIX_ARGUMENTS, {
    value: (args: readonly unknown[]) => {
      if (args.length !== plan.args.length)
        throw new TypeError(`${name}: expected ${plan.args.length} argument${plan.args.length === 1 ? '' : 's'}, got ${args.length}`);
      return adapterMaker(plan, call, options, true, name)(fn, ...adaptHelpers(name, params, options), args);
    },
  });
  return wrapper;
}

/** What the adapters' code refers to (see adapterMaker's parameters). */
function adaptHelpers(name: string, params: readonly unknown[], options?: AdaptOptions): unknown[] {
  return [toU64, toI64, bigint64, bigint32, argError, options?.pointer ?? objectPointer, NEVER, SMALL, fromWide, renameError, cString, name, params];
}

/** The pieces of an adapter's source that both its forms share (see adapterMaker). */
interface AdapterParts {
  /** The argument names (`a0, a1, …`) and locals (`p0, p1, …, x`). */
  names: string[];
  locals: string[];
  /** The closure variables of the conversions, declared. */
  declared: string;
  /** Converts a<i> into p<i>. */
  body: string;
  /** The FFI call on p<i> (and the 64-bit result's conversion). */
  invoke: string;
  ident: string;
}

/**
 * The maker of an adapter: per call (`a0, a1, …` converted, then the call), or `fixed` (the arguments
 * F converted once when made, then a call of no arguments). One conversion code serves both.
 */
function adapterMaker(
  plan: { args: ArgPlan[]; result: [string, boolean] },
  call: NodeFfiCallPlan,
  options: AdaptOptions | undefined,
  fixed: boolean,
  name: string,
): (...a: unknown[]) => unknown {
  // per argument, the closure variables of convert(); k starts as an object no caller can pass
  const state = plan.args.flatMap((a, i) => (a.conv === 'ptr' ? [`l${i}`, `c${i}`, `k${i} = K`, `q${i}`] : [`l${i}`, `c${i}`]));
  const args = plan.args
    .map((_, i) => `p${i}`)
    .concat(call.padded ? ['0n'] : [])
    .join(', ');
  const parts: AdapterParts = {
    names: plan.args.map((_, i) => `a${i}`),
    locals: plan.args.map((_, i) => `p${i}`).concat('x'),
    declared: state.length ? `let ${state.join(', ')};` : '',
    body: plan.args.map((a, i) => convert(a, i, call.direct, options?.encodeStrings, options?.narrowNumbers)).join('\n    '),
    invoke: plan.result[1] ? `W(f(${args}))` : `f(${args})`,
    ident: name.replace(/[^A-Za-z0-9_$]/g, '_'),
  };
  const source = fixed ? fixedSource(parts) : perCallSource(parts);
  return new Function('f', 'U', 'I', 'B', 'N', 'E', 'O', 'K', 'T', 'W', 'R', 'S', 'name', 'params', 'F', source) as (...a: unknown[]) => unknown;
}

// A serial number makes every wrapper's source unique: V8 caches `new Function` by source, and
// wrappers of one source (the raw, typed and objects layers each bind a function) then share one
// call site `f(…)` over their different FFI functions, which loses the fast call (Deno: ~8 -> ~180 ns).
function perCallSource(p: AdapterParts): string {
  const n = p.names.length;
  return `${p.declared}
return function ${p.ident}(${p.names.join(', ')}) {
  // wrapper ${++adaptedCount}
  if (arguments.length !== ${n}) throw new TypeError(name + ': expected ${n} argument${n === 1 ? '' : 's'}, got ' + arguments.length);
  let ${p.locals.join(', ')};
  try {
    ${p.body}
    return ${p.invoke};
  } catch (e) { throw R(name, params, e); }
};`;
}

function fixedSource(p: AdapterParts): string {
  return `${p.declared}
let ${p.locals.join(', ')};
try {
  (function () {
    const [${p.names.join(', ')}] = F; // F is captured: it lives in the context the wrapper keeps
    ${p.body}
  })();
} catch (e) { throw R(name, params, e); }
return function ${p.ident}() {
  // wrapper ${++adaptedCount}, its arguments converted once (F keeps their memory alive)
  return ${p.invoke};
};`;
}

// ---- libraries ----------------------------------------------------------------------------------

/**
 * One module's library opened through node:ffi. Each Binder opens its own handle: node:ffi allows
 * one signature per symbol and handle, and two releases of a module may bind one symbol two ways.
 */
export class NodeFfiLibrary {
  /** The path it was opened by. */
  readonly path: string;
  private constructor(
    private readonly handle: NodeFfiLibraryHandle,
    path: string,
  ) {
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
   * @param wideAbi whether to widen integers and pad for the direct call (this platform's answer by
   *   default; false binds as on other ABIs: every parameter its own node:ffi type, for tests)
   */
  bind(symbol: string, name: string, result: unknown, params: readonly unknown[], wideAbi = WIDE_ABI): NativeFunction | string {
    const plan = nodeFfiSignature(result, params);
    if (typeof plan === 'string') return plan;
    // node:ffi passes seven or more arguments through a JS wrapper that writes them into a shared
    // buffer: slower than koffi (measured: cudaMemcpy2DAsync, 8 arguments, ~200 ns
    // against koffi's ~125 on the CPU machine; on the H200 cuLaunchKernel's 11 cost ~170 ns more per
    // launch). Such a function stays on koffi, where the user asked for node:ffi to go faster.
    if (params.length > DIRECT_MAX) return `${params.length} parameters: node:ffi passes more than ${DIRECT_MAX} through a shared buffer, slower than koffi`;
    const call = nodeFfiCallPlan(plan, wideAbi);
    let fn: NativeFunction;
    try {
      fn = this.handle.getFunction(symbol, { arguments: call.ffiArgs, return: plan.result[0] });
    } catch (e) {
      return `node:ffi refused ${symbol}: ${(e as Error).message}`;
    }
    return adapt(fn, name, params, plan, call);
  }
}
