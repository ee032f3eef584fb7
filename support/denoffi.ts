// The Deno backend of the Binder (the default under Deno; CUDA_TS_FFI=deno or configure({ ffi:
// 'deno' })): `Deno.dlopen`, the runtime's own FFI (~13-20 ns a call on the 2-core CI machine,
// against ~70-100 ns for koffi through Deno's N-API).
//
// Deno's fast calls take 64-bit integers only as bigints (a number costs ~150 ns more) and pointers
// only as pointer objects or bigints (a `buffer` parameter given a typed array costs ~80 ns, a pointer
// object ~150 ns, a bigint ~8), and no JS strings. So every function goes through node:ffi's adapter
// (./nodeffi, `adapt`): 64-bit integers and pointers become bigints there (memory's address taken once
// per buffer, a string copied to NUL-terminated UTF-8), and an 8-32-bit integer is checked against its
// C type (1.5, NaN or out of range is a TypeError naming the function, where koffi would truncate) and
// passed as the number it is (Deno's fast call takes `i32` & co. as numbers). Declared to Deno:
// pointers and 64-bit integers as `u64` for functions of at most six parameters on x64/arm64 (the
// same register argument the C callee reads, see ./nodeffi), and as their own types beyond; 8-32-bit
// integers and floats as their own types. Not expressed (stay on koffi, with the reason): records by
// value, `bool`, pointer and `const char *` results.
//
// Deno calls a function pointer (`Deno.UnsafeFnPointer`) ~1 µs a call, so functions are bound by
// exported symbol only; one that cuGetProcAddress resolves elsewhere stays on koffi (the Binder
// compares the addresses through libc's dlsym).
//
// Permissions: loading a library needs `--allow-ffi` (and `--allow-read`/`--allow-env` for the search
// of ./library); without them Deno throws a NotCapable error, turned here into one that names the flag.
import type { NativeFunction } from './binder';
import { libraryCandidates, type LibrarySpec } from './library';
import { adapt, nodeFfiCallPlan, nodeFfiSignature, objectPointerBy, type ArgPlan } from './nodeffi';

/** The part of Deno's FFI cuda-ts uses. */
interface DenoFfi {
  dlopen(path: string, symbols: Record<string, { name?: string; parameters: string[]; result: string }>): DenoLibrary;
  UnsafePointer: { of(buffer: ArrayBufferLike | ArrayBufferView): unknown; value(pointer: unknown): bigint | number };
  permissions?: { querySync?(d: { name: string }): { state: string } };
}
interface DenoLibrary {
  symbols: Record<string, NativeFunction>;
  close(): void;
}

/** Deno's FFI, when this process runs under Deno. */
function deno(): DenoFfi | undefined {
  return (globalThis as { Deno?: DenoFfi }).Deno;
}

/** Why the Deno backend cannot be used here ('' when it can). */
export function denoFfiUnavailableReason(): string {
  const d = deno();
  if (!d || typeof d.dlopen !== 'function') return "not running under Deno (Deno.dlopen is Deno's own FFI)";
  const state = d.permissions?.querySync?.({ name: 'ffi' }).state;
  if (state !== undefined && state !== 'granted') return denoPermissionMessage('ffi');
  return '';
}

/** The error text for a Deno permission cuda-ts needs and was not given. */
export function denoPermissionMessage(permission: 'ffi' | 'read' | 'env'): string {
  const why = { ffi: 'to load the CUDA libraries', read: 'to find the CUDA libraries', env: 'to read CUDA_TS_* and the library path variables' }[permission];
  return `cuda-ts needs Deno's --allow-${permission} ${why}: run \`deno run --allow-ffi --allow-read --allow-env …\``;
}

const DENO_TYPES: Record<string, string> = {
  int8: 'i8',
  uint8: 'u8',
  int16: 'i16',
  uint16: 'u16',
  int32: 'i32',
  uint32: 'u32',
  int64: 'i64',
  uint64: 'u64',
  float: 'f32',
  double: 'f64',
  void: 'void',
  pointer: 'u64',
};

/** Deno's parameter type for an adapted argument, and the call plan (see the file comment). @internal */
export function denoCallPlan(args: ArgPlan[]): { direct: boolean; ffiArgs: string[]; padded: false } {
  const plan = nodeFfiCallPlan({ args });
  // node:ffi pads a lone pointer to get its direct call; Deno has one kind of call: no padding.
  // 8-32-bit integers and floats keep their own types (numbers are fast there); the rest is u64.
  const ffiArgs = args.map((a, i) => DENO_TYPES[a.conv === 'none' ? a.ffi : plan.ffiArgs[i]]);
  return { direct: plan.direct, ffiArgs, padded: false };
}

/** The address of memory passed as a pointer, through Deno.UnsafePointer (cached per buffer by ./nodeffi). */
function denoPointer(v: object, i: number): unknown {
  const d = deno()!;
  return objectPointerBy(v, i, (buffer) => BigInt(d.UnsafePointer.value(d.UnsafePointer.of(buffer))), true);
}

/** One module's library opened through Deno.dlopen (each function is its own dlopen of that path). */
export class DenoFfiLibrary {
  private dlsym: ((symbol: string) => bigint | undefined) | undefined;
  private constructor(readonly path: string) {}

  /** Opens the first candidate of the module's search order that loads (koffi's order, ./library). */
  static open(spec: LibrarySpec): DenoFfiLibrary {
    const d = deno();
    const why = denoFfiUnavailableReason();
    if (why || !d) throw new Error(why);
    const tried: string[] = [];
    for (const { path } of libraryCandidates(spec)) {
      try {
        d.dlopen(path, {});
        return new DenoFfiLibrary(path);
      } catch (e) {
        if ((e as Error).name === 'NotCapable' || (e as Error).name === 'PermissionDenied') throw new Error(denoPermissionMessage('ffi'), { cause: e });
        tried.push(`${path}: ${(e as Error).message.split('\n')[0]}`);
      }
    }
    throw new Error(`Deno.dlopen could not open ${spec.sonames.join(', ')}: ${tried.join('; ')}`);
  }

  /** The address of an exported symbol (libc's dlsym), or undefined. */
  address(symbol: string): bigint | undefined {
    this.dlsym ??= libcDlsym(this.path);
    return this.dlsym(symbol);
  }

  /** Binds `symbol`, or returns why it cannot (the Binder keeps koffi). */
  bind(symbol: string, name: string, result: unknown, params: readonly unknown[]): NativeFunction | string {
    const plan = nodeFfiSignature(result, params);
    if (typeof plan === 'string') return plan.replace('node:ffi', 'Deno.dlopen');
    const call = denoCallPlan(plan.args);
    let fn: NativeFunction;
    try {
      fn = deno()!.dlopen(this.path, { f: { name: symbol, parameters: call.ffiArgs, result: DENO_TYPES[plan.result[0]] } }).symbols.f;
    } catch (e) {
      return `Deno.dlopen refused ${symbol}: ${(e as Error).message.split('\n')[0]}`;
    }
    return adapt(fn, name, params, plan, call, { pointer: denoPointer, encodeStrings: true, narrowNumbers: true });
  }
}

/** dlsym over a library already loaded, through glibc's dlopen/dlsym (RTLD_NOLOAD: no second load). */
function libcDlsym(path: string): (symbol: string) => bigint | undefined {
  const d = deno()!;
  const RTLD_LAZY_NOLOAD = 0x1 | 0x4;
  let libc: DenoLibrary;
  try {
    libc = d.dlopen('libc.so.6', { dlopen: { parameters: ['buffer', 'i32'], result: 'u64' }, dlsym: { parameters: ['u64', 'buffer'], result: 'u64' } });
  } catch {
    return () => undefined; // not glibc: no address, so cuGetProcAddress-resolved functions stay on koffi
  }
  const text = new TextEncoder();
  const handle = BigInt(libc.symbols.dlopen(text.encode(`${path}\0`), RTLD_LAZY_NOLOAD));
  return (symbol) => {
    if (handle === 0n) return undefined;
    const at = BigInt(libc.symbols.dlsym(handle, text.encode(`${symbol}\0`)));
    return at === 0n ? undefined : at;
  };
}
