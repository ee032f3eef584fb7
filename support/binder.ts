// Binds C functions on first call. Importing a generated module loads nothing; the first call of a
// function loads its library and resolves its symbol, and a missing symbol fails only that call.
// Driver functions resolve through cuGetProcAddress_v2 at the generated release's version (that is
// what pinning to a release means at run time); other libraries through their exported symbols.
import { type TypeObject } from 'koffi';
import { koffi } from './koffi';
import { CudaSymbolError } from './errors';
import { checkLibrarySpec, libraryOrigin, loadLibrary, type LibrarySpec, type LoadedLibrary } from './library';
import { readBindingEntry } from './tables/binding';
import { FFI_BACKENDS, defaultFfi, type FfiBackend } from './ffi-choice';
import { fixedCall } from './fixed-call';
import { requirement, versionString } from './versions';

/** A koffi type: a type name (`int`, `void *`) or a type object (structs by value). */
export type FfiType = string | TypeObject;
/** A C function bound through koffi. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type NativeFunction = (...args: any[]) => any;

/** What a generated module tells its {@link Binder}: its library, release and how to resolve symbols. */
export interface BinderSpec extends LibrarySpec {
  /** The CUDA release the bindings were generated from ("13.0"). */
  cudaVersion: string;
  /** That release as CUDA_VERSION (13000): the version asked of cuGetProcAddress. */
  cudaVersionNumber: number;
  /** `procAddress`: resolve through cuGetProcAddress (the driver); `symbol`: exported symbols only. */
  resolve: 'procAddress' | 'symbol';
}

/** Options of {@link Binder.configure} (a module's `configure()`), set before its first call. */
export interface BinderOptions {
  /** Bind the per-thread-default-stream variants (`_ptds`/`_ptsz`, or cuGetProcAddress's flag). */
  perThreadDefaultStream?: boolean;
  /**
   * Which FFI calls the C functions: `koffi`, `node` (Node's built-in `node:ffi`, Node 26+), `bun`
   * (`bun:ffi`) or `deno` (`Deno.dlopen`). A runtime's own FFI binds each function whose signature it
   * expresses and leaves the rest on koffi (see {@link Binder.backendOf}); where the running runtime
   * lacks it, every function stays on koffi. The default is the runtime's own FFI under Bun and Deno
   * and koffi under Node (see {@link defaultFfi}); `CUDA_TS_FFI=<name>` sets it for every module.
   */
  ffi?: FfiBackend;
}

export { FFI_BACKENDS, defaultFfi, type FfiBackend } from './ffi-choice';

/** A library opened through a runtime's own FFI (./nodeffi, ./bunffi, ./denoffi). */
interface NativeFfiLibrary {
  readonly path: string;
  /** The exported symbol's address, where the FFI can only bind symbols (node, deno). */
  address?(symbol: string): bigint | undefined;
  bind(symbol: string, name: string, result: unknown, params: readonly unknown[]): NativeFunction | string;
  /** Binds the function at an address (cuGetProcAddress's answer), where the FFI can (bun). */
  bindAt?(address: number, name: string, result: unknown, params: readonly unknown[]): NativeFunction | string;
}

/** Opens `spec`'s library through `backend`, or says why not (each backend's module loads only here). */
function openNativeFfi(backend: Exclude<FfiBackend, 'koffi'>, spec: LibrarySpec): NativeFfiLibrary | string {
  const open = {
    node: () => {
      const m = require('./nodeffi') as typeof import('./nodeffi');
      return m.nodeFfiUnavailableReason() || m.NodeFfiLibrary.open(spec);
    },
    bun: () => {
      const m = require('./bunffi') as typeof import('./bunffi');
      return m.bunFfiUnavailableReason() || m.BunFfiLibrary.open(spec);
    },
    deno: () => {
      const m = require('./denoffi') as typeof import('./denoffi');
      return m.denoFfiUnavailableReason() || m.DenoFfiLibrary.open(spec);
    },
  }[backend];
  try {
    return open();
  } catch (e) {
    return (e as Error).message;
  }
}

const CU_GET_PROC_ADDRESS_DEFAULT = 0;
const CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 2;

/** The binding facts of a module's functions, one line each (generated `binding.ts`; the format is
 *  ./tables/binding's). */
export type BindingTable = string;

/**
 * Loads one module's library on first use and binds its C functions on their first call; each
 * generated module's `binding.ts` makes one (exported as `binder` by its raw and typed layers).
 */
export class Binder {
  private lib: LoadedLibrary | undefined;
  private options: BinderOptions;
  private bound = 0;
  private procAddress: NativeFunction | undefined;
  private readonly procOut = new BigUint64Array(1);
  private readonly procStatus = new Int32Array(1);
  private installedDriver: number | undefined;
  private nativeLib: NativeFfiLibrary | string | undefined;
  private envError: string | undefined;
  private backends: Map<string, { backend: FfiBackend; reason?: string }> | undefined;

  /**
   * Loads nothing yet. `CUDA_API_PER_THREAD_DEFAULT_STREAM` (set, not `0`) turns on
   * {@link BinderOptions.perThreadDefaultStream}.
   * @param spec the module's library and release
   */
  constructor(
    readonly spec: BinderSpec,
    private readonly bindings: BindingTable = '',
    private readonly record: (name: string) => TypeObject = (name) => {
      throw new Error(`cuda-ts ${spec.module}: no record type ${name}`);
    },
  ) {
    checkLibrarySpec('Binder', spec);
    if (typeof spec.cudaVersion !== 'string' || typeof spec.cudaVersionNumber !== 'number' || !Number.isSafeInteger(spec.cudaVersionNumber)) {
      throw new TypeError('Binder: spec.cudaVersion must be a string and spec.cudaVersionNumber an integer (CUDA_VERSION)');
    }
    if (spec.resolve !== 'procAddress' && spec.resolve !== 'symbol') throw new TypeError("Binder: spec.resolve must be 'procAddress' or 'symbol'");
    if (typeof bindings !== 'string') throw new TypeError('Binder: bindings must be the binding table text');
    const env = process.env.CUDA_API_PER_THREAD_DEFAULT_STREAM;
    const ffi = defaultFfi();
    if (!(FFI_BACKENDS as readonly string[]).includes(ffi)) this.envError = ffi;
    this.options = { perThreadDefaultStream: env !== undefined && env !== '0' && env !== '', ffi: this.envError ? 'koffi' : (ffi as FfiBackend) };
  }

  /** Opt in to per-thread default stream variants. Must precede the first call of the module. */
  configure(options: BinderOptions): void {
    if (this.bound > 0) throw new Error(`cuda-ts ${this.spec.module}: configure() must be called before the first function call`);
    if (options.ffi !== undefined && !FFI_BACKENDS.includes(options.ffi)) {
      throw new TypeError(
        `cuda-ts ${this.spec.module}: configure(): ffi must be one of ${FFI_BACKENDS.map((b) => `'${b}'`).join(', ')}, not ${String(options.ffi)}`,
      );
    }
    if (options.ffi !== undefined) this.envError = undefined; // the program chose: CUDA_TS_FFI no longer matters
    this.options = { ...this.options, ...options };
  }

  /** True when per-thread default stream variants are bound. */
  get perThreadDefaultStream(): boolean {
    return !!this.options.perThreadDefaultStream;
  }

  /** The FFI asked for ({@link BinderOptions.ffi}); each function may still fall back to koffi. */
  get ffi(): FfiBackend {
    return this.options.ffi ?? 'koffi';
  }

  /**
   * The FFI `name` was bound through, and why it fell back to koffi when another FFI was asked for;
   * undefined before its first call.
   */
  backendOf(name: string): { backend: FfiBackend; reason?: string } | undefined {
    return this.backends?.get(name);
  }

  /**
   * The loaded library (loads it on first use).
   * @param call the call that needs it, which a {@link CudaLibraryError} names
   */
  library(call?: string): LoadedLibrary {
    return (this.lib ??= loadLibrary(this.spec, process.env, call));
  }

  /**
   * Resolves `name` and returns a JS function calling it.
   * @param name user-facing name (`cuMemAlloc`), also the name asked of cuGetProcAddress
   * @param symbol exported symbol (`cuMemAlloc_v2`)
   * @param ptdsSymbol per-thread-default-stream symbol, if any
   * @param result the koffi type of the C return value
   * @param params the koffi types of the C parameters
   * @param since the release that introduced the function, for messages
   * @param proc how cuGetProcAddress names this exact ABI: `[name, version, ptdsVersion?]`
   *   (`cuCtxSynchronize` is `['cuCtxSynchronize', 2000]`; asked at 13000 the driver would return
   *   `cuCtxSynchronize_v2`, which takes a context). Without it the exported symbol is used.
   */
  bind(
    name: string,
    symbol: string,
    ptdsSymbol: string | undefined,
    result: FfiType,
    params: FfiType[],
    since?: string,
    proc?: readonly [string, number, number?],
  ): NativeFunction {
    const lib = this.library(name); // the first function bound loads the library: its error names it
    const ptds = this.perThreadDefaultStream && ptdsSymbol !== undefined;
    const exported = ptds ? ptdsSymbol! : symbol;
    let fn: NativeFunction | undefined;
    let address = 0;
    if (this.spec.resolve === 'procAddress' && proc) {
      const version = ptds ? (proc[2] ?? proc[1]) : proc[1];
      // Never ask above the pinned release: a 12.6 binding keeps the 12.6 ABI on a 13.0 driver.
      address = this.resolveProcAddress(proc[0], Math.min(version, this.spec.cudaVersionNumber), ptds);
    }
    if (this.envError) throw new TypeError(`cuda-ts ${this.spec.module}: ${name}: ${this.envError}`);
    let why: string | undefined;
    const ffi = this.options.ffi ?? 'koffi';
    if (ffi !== 'koffi') {
      const bound = this.bindNative(ffi, name, exported, address, result, params);
      if (typeof bound === 'function') {
        (this.backends ??= new Map()).set(name, { backend: ffi });
        this.bound++;
        return bound;
      }
      why = bound;
    }
    if (address !== 0) fn = koffi.decode(address, koffi.proto(result, params)) as NativeFunction;
    if (!fn) {
      try {
        fn = lib.func(exported, result, params) as NativeFunction;
      } catch {
        throw new CudaSymbolError(this.spec.module, name, this.missingDetail(since));
      }
    }
    (this.backends ??= new Map()).set(name, why ? { backend: 'koffi', reason: why } : { backend: 'koffi' });
    this.bound++;
    return fn;
  }

  /**
   * Binds through a runtime's own FFI, or returns why not (koffi keeps the function then). node:ffi
   * and Deno bind by exported symbol only, so a function cuGetProcAddress resolved goes through them
   * only when the driver's answer is that very symbol (same address); bun:ffi binds the address.
   */
  private bindNative(
    ffi: Exclude<FfiBackend, 'koffi'>,
    name: string,
    exported: string,
    address: number,
    result: FfiType,
    params: FfiType[],
  ): NativeFunction | string {
    // a runtime's FFI loads only when asked for (the runtime's default, CUDA_TS_FFI or configure())
    this.nativeLib ??= openNativeFfi(ffi, this.spec);
    const lib = this.nativeLib;
    if (typeof lib === 'string') return lib;
    if (address !== 0 && lib.bindAt) return lib.bindAt(address, name, result, params);
    if (!lib.address) return lib.bind(exported, name, result, params);
    const at = lib.address(exported);
    if (at === undefined)
      return address !== 0
        ? `cuGetProcAddress resolves ${name}, but ${ffi} binds exported symbols only and cannot find ${exported} in ${lib.path}`
        : `${exported} is not exported by ${lib.path}`;
    if (address !== 0 && at !== BigInt(address)) return `cuGetProcAddress resolves ${name} to another entry point than the exported ${exported}`;
    return lib.bind(exported, name, result, params);
  }

  /** Binds `name` from the module's binding table (see BindingTable). */
  native(name: string): NativeFunction {
    const entry = readBindingEntry(this.bindings, name);
    if (!entry) throw new CudaSymbolError(this.spec.module, name, 'it is not in the bindings of this module');
    const type = (t: string): FfiType => (t.startsWith('@') ? this.record(t.slice(1)) : t);
    return this.bind(name, entry.symbol, entry.ptdsSymbol, type(entry.result), entry.params.map(type), entry.since, entry.proc);
  }

  /**
   * Binds `name` as {@link native} does, with every argument fixed to `args`: memory that the returned
   * function keeps alive (the typed layer's out-parameter slots). node:ffi and Deno convert them once
   * here instead of on every call (./fixed-call).
   */
  nativeFixed(name: string, args: readonly unknown[]): () => unknown {
    return fixedCall(this.native(name), args);
  }

  private resolveProcAddress(name: string, version: number, ptds: boolean): number {
    if (!this.procAddress) {
      try {
        this.procAddress = this.library().func('cuGetProcAddress_v2', 'int', ['const char *', 'void *', 'int', 'uint64_t', 'void *']) as NativeFunction;
      } catch {
        return 0; // a driver older than 12.0: fall back to exported symbols
      }
    }
    this.procOut[0] = 0n;
    const flags = ptds ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_DEFAULT;
    const status = this.procAddress!(name, this.procOut, version, flags, this.procStatus);
    return status === 0 ? Number(this.procOut[0]) : 0;
  }

  /** The CUDA version the installed driver supports (cuDriverGetVersion), or undefined. */
  driverVersion(): number | undefined {
    if (this.installedDriver === undefined && this.spec.resolve === 'procAddress') {
      try {
        const out = new Int32Array(1);
        const f = this.library().func('cuDriverGetVersion', 'int', ['void *']) as NativeFunction;
        if (f(out) === 0) this.installedDriver = out[0];
      } catch {
        /* unknown */
      }
    }
    return this.installedDriver;
  }

  private missingDetail(since: string | undefined): string {
    const needs = since ? `; it needs ${requirement(since)}` : `; it is part of ${requirement(this.spec.cudaVersion)}`;
    const origin = this.lib === undefined ? undefined : libraryOrigin(this.lib);
    if (origin?.how === `$${this.spec.env}`) {
      // the user named this file: say so, rather than blame (or suggest upgrading) the installed library
      return `${origin.path}, which ${this.spec.env} names, does not export it: is that ${this.spec.sonames[0]}? (point ${this.spec.env} at ${this.spec.sonames[0]}, or unset it)`;
    }
    if (this.spec.resolve === 'procAddress') {
      const installed = this.driverVersion();
      const have = installed ? `the installed driver supports CUDA ${versionString(installed)}` : 'the installed driver does not provide it';
      const newer =
        installed && installed < this.spec.cudaVersionNumber ? ` (these bindings are pinned to CUDA ${this.spec.cudaVersion}, newer than the driver)` : '';
      return `${have}${newer}${needs}`;
    }
    return `the loaded ${this.spec.sonames[0].replace(/\.so.*/, '')} library does not export it${needs}`;
  }
}
