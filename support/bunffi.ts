// The Bun backend of the Binder (the default under Bun; CUDA_TS_FFI=bun or configure({ ffi: 'bun' })):
// `bun:ffi`, the runtime's own FFI (~15-25 ns a call on the 2-core CI machine, against ~160-280 ns
// for koffi through Bun's N-API).
//
// bun:ffi takes what the typed layer passes, as koffi does: a pointer parameter (`ptr`) takes a
// number, a bigint, null/undefined, a typed array, DataView or ArrayBuffer; 64-bit integers take
// numbers or bigints; 64-bit results come back as numbers below 2^53 (`u64_fast`), bigints beyond.
// Only a JS string given for `const char *` needs copying (bun:ffi takes none): such functions get a
// small wrapper. Not expressed (stay on koffi, with the reason): records by value, pointer and
// `const char *` results (koffi returns bigints and JS strings), and types not listed below.
//
// bun:ffi calls a function pointer as fast as a symbol (CFunction), so a function cuGetProcAddress
// resolved is bound at that very address.
import type { NativeFunction } from './binder';
import { libraryCandidates, type LibrarySpec } from './library';

/** The part of `bun:ffi` cuda-ts uses. */
interface BunFfi {
  dlopen(
    path: string,
    symbols: Record<string, { args: string[]; returns: string }>,
  ): { symbols: Record<string, NativeFunction & { ptr?: number }>; close(): void };
  CFunction(def: { ptr: number | bigint; args: string[]; returns: string }): NativeFunction;
}

let ffi: BunFfi | null | undefined;

/** bun:ffi, when this process runs under Bun. */
function bunFfi(): BunFfi | undefined {
  if (ffi === undefined) {
    ffi = null;
    if (process.versions.bun !== undefined) {
      // process's builtin loader, not require: a vm context's module system (Jest's) knows no bun:ffi
      const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
      ffi = ((getBuiltin ? getBuiltin('bun:ffi') : undefined) ?? require('bun:ffi')) as BunFfi;
    }
  }
  return ffi ?? undefined;
}

/** Why the Bun backend cannot be used here ('' when it can). */
export function bunFfiUnavailableReason(): string {
  return bunFfi() ? '' : "not running under Bun (bun:ffi is Bun's own FFI)";
}

const PARAMS: Record<string, string> = {};
const RESULTS: Record<string, string> = { void: 'void' };
for (const [names, type, wide] of [
  [['int8_t', 'int8', 'char', 'signed char'], 'i8', false],
  [['uint8_t', 'uint8', 'unsigned char', 'uchar'], 'u8', false],
  [['int16_t', 'int16', 'short'], 'i16', false],
  [['uint16_t', 'uint16', 'unsigned short', 'ushort'], 'u16', false],
  [['int32_t', 'int32', 'int'], 'i32', false],
  [['uint32_t', 'uint32', 'uint', 'unsigned int', 'unsigned'], 'u32', false],
  [['int64_t', 'int64', 'long long', 'intptr_t', 'ssize_t', 'long'], 'i64', true],
  [['uint64_t', 'uint64', 'unsigned long long', 'uintptr_t', 'size_t', 'unsigned long', 'ulong'], 'u64', true],
  [['float', 'float32'], 'f32', false],
  [['double', 'float64'], 'f64', false],
  [['bool'], 'bool', false],
] as const) {
  for (const n of names) {
    PARAMS[n] = type;
    RESULTS[n] = wide ? `${type}_fast` : type;
  }
}

/**
 * The bun:ffi signature of a C function, and which parameters may receive JS strings, or the
 * reason it stays on koffi. @internal
 */
export function bunFfiSignature(result: unknown, params: readonly unknown[]): { args: string[]; returns: string; strings: number[] } | string {
  const r = typeof result === 'string' ? RESULTS[result.trim()] : undefined;
  if (!r) return `result type ${describe(result)} is not expressed through bun:ffi`;
  const args: string[] = [];
  const strings: number[] = [];
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    const t = typeof p === 'string' ? p.trim() : undefined;
    if (t !== undefined && t.endsWith('*')) {
      args.push('ptr');
      if (/\bchar\s*\*$/.test(t)) strings.push(i);
    } else if (t !== undefined && PARAMS[t]) args.push(PARAMS[t]);
    else return `parameter ${i} (${describe(p)}) is not expressed through bun:ffi`;
  }
  return { args, returns: r, strings };
}

function describe(t: unknown): string {
  return typeof t === 'string' ? t : 'a record by value';
}

const utf8 = new TextEncoder();
/** A string argument's NUL-terminated UTF-8 copy (anything else as it is). */
function cString(v: unknown): unknown {
  return typeof v === 'string' ? utf8.encode(`${v}\0`) : v;
}
/** Wrappers made so far: each one's source carries its number (see withStrings). */
let wrappers = 0;

/**
 * Wraps `fn` (of `arity` parameters) so that the string arguments at `strings` travel as
 * NUL-terminated UTF-8 copies. Straight-line code with fixed parameters: a rest parameter and a
 * spread call cost ~30-40 ns a call under Bun, this ~3. Each wrapper's source is its own (a serial
 * number), so that no two share a call site `f(…)` over different C functions (see ./nodeffi's adapt).
 */
function withStrings(fn: NativeFunction, strings: number[], arity: number): NativeFunction {
  const names = Array.from({ length: arity }, (_, i) => `a${i}`).join(', ');
  const copies = strings.map((i) => `if (typeof a${i} === 'string') a${i} = C(a${i});`).join(' ');
  const make = new Function('f', 'C', `return function (${names}) {\n  // wrapper ${++wrappers}\n  ${copies}\n  return f(${names});\n};`) as (
    f: NativeFunction,
    c: (v: unknown) => unknown,
  ) => NativeFunction;
  return make(fn, cString);
}

/** One module's library opened through bun:ffi. */
export class BunFfiLibrary {
  private constructor(readonly path: string) {}

  /**
   * The module's library as koffi found it: the first candidate of the same search order (./library)
   * that is a bare soname or an existing file (bun:ffi opens a library only together with a symbol,
   * so whether it loads is learnt on the first bind; koffi has it loaded by then).
   */
  static open(spec: LibrarySpec): BunFfiLibrary {
    if (!bunFfi()) throw new Error(bunFfiUnavailableReason());
    const { existsSync } = require('node:fs') as typeof import('node:fs');
    const found = libraryCandidates(spec).find(({ path }) => !path.includes('/') || existsSync(path));
    if (!found) throw new Error(`bun:ffi found none of ${spec.sonames.join(', ')}`);
    return new BunFfiLibrary(found.path);
  }

  /** Binds the exported `symbol`, or returns why it cannot (the Binder keeps koffi). */
  bind(symbol: string, name: string, result: unknown, params: readonly unknown[]): NativeFunction | string {
    return this.make(name, result, params, (b, args, returns) => b.dlopen(this.path, { [symbol]: { args, returns } }).symbols[symbol]);
  }

  /** Binds the function at `address` (cuGetProcAddress's answer), or returns why it cannot. */
  bindAt(address: number, name: string, result: unknown, params: readonly unknown[]): NativeFunction | string {
    return this.make(name, result, params, (b, args, returns) => b.CFunction({ ptr: address, args, returns }));
  }

  private make(
    name: string,
    result: unknown,
    params: readonly unknown[],
    declare: (b: BunFfi, args: string[], returns: string) => NativeFunction,
  ): NativeFunction | string {
    const sig = bunFfiSignature(result, params);
    if (typeof sig === 'string') return sig;
    let fn: NativeFunction;
    try {
      fn = declare(bunFfi()!, sig.args, sig.returns);
    } catch (e) {
      return `bun:ffi refused ${name}: ${(e as Error).message.split('\n')[0]}`;
    }
    return sig.strings.length ? withStrings(fn, sig.strings, sig.args.length) : fn;
  }
}
