// Linker: nvJitLink (PTX, CUBIN, LTO-IR, fatbin, objects, libraries → CUBIN), falling back to the
// driver linker (cuLink*) where libnvJitLink cannot be loaded (no LTO-IR then).
import { readFileSync } from 'node:fs';
import { koffi } from '../support';
import * as drv from './driver';
import { CudaLibraryError, CudaSymbolError, isArrayBuffer, isUint8Array, textFrom } from '../support';
import { BuildError, CudaError, OBJECTS_ERROR, ObjectsError } from './errors';
import { loadNvJitLink, type nvjitlink as jit } from './releases';
import { Context, contextOf } from './context';
import { checkKeys, describe } from './describe';
import { Device } from './device';
import { Resource } from './lifecycle';
import { Module, type ModuleOptions } from './module';
import { kernelCacheConfig, kernelCacheKey, readCachedKernel, writeCachedKernel, type KernelCacheConfig } from './kernel-cache';

/** nvJitLink's typed layer, loaded on first use (src/releases.ts): importing the objects layer loads none of it. */
const jitApi = loadNvJitLink;

/** The kind of a {@link Linker} input: PTX text, CUBIN, LTO-IR (nvJitLink only), fatbin, host object or library. */
export type LinkInput = 'ptx' | 'cubin' | 'ltoir' | 'fatbin' | 'object' | 'library';

/**
 * Linking failed: `log` holds the linker's error log. A {@link BuildError} whose `code` and `module`
 * are the failing library's (nvJitLink or the driver) when a status failed, and whose `name` stays
 * `LinkError`.
 */
export class LinkError extends BuildError {
  /**
   * Made by {@link Linker}; `log` is appended to the message, `cause` is the underlying error, `where`
   * the `Linker.method` that failed (it starts the message).
   * @param message What failed.
   * @param log The linker's error log ('' when there is none).
   * @param cause The underlying library error, if any.
   * @param where The `Linker.method` that failed (default 'Linker').
   */
  constructor(message: string, log: string, cause?: unknown, where = 'Linker') {
    const status = cause instanceof CudaError ? cause : undefined;
    super(
      status?.module ?? 'objects',
      where,
      `${where}: ${message}${log ? `:\n${log.trim()}` : ''}`,
      log,
      { code: status?.code ?? OBJECTS_ERROR.build, name: 'LinkError' },
      cause,
    );
  }
}

/** Options of the {@link Linker} constructor. */
export interface LinkerOptions {
  /** Target `sm_XY` (default: the current device's). */
  arch?: string;
  /** Link-time optimization (needed for LTO-IR inputs; nvJitLink only). */
  lto?: boolean;
  /** Further nvJitLink options (`-O3`, `-lineinfo`, …); ignored by the driver fallback. */
  options?: readonly string[];
  /** Force the driver linker (cuLink*). */
  driver?: boolean;
  /** The context of the driver linker (default: the current one); nvJitLink needs none. */
  context?: Context;
  /**
   * Read and write the on-disk kernel cache (src/kernel-cache.ts; default true, CUDA_TS_CACHE=0 turns
   * it off everywhere): the same inputs, options, architecture and linker version linked before, in
   * any process, are read back by complete() instead of linked.
   */
  cache?: boolean;
}

// enum member names: nvJitLink's module loads on first use, not at import
const JIT_INPUT: Record<LinkInput, keyof typeof jit.nvJitLinkInputType> = {
  ptx: 'NVJITLINK_INPUT_PTX',
  cubin: 'NVJITLINK_INPUT_CUBIN',
  ltoir: 'NVJITLINK_INPUT_LTOIR',
  fatbin: 'NVJITLINK_INPUT_FATBIN',
  object: 'NVJITLINK_INPUT_OBJECT',
  library: 'NVJITLINK_INPUT_LIBRARY',
};
const CU_INPUT: Record<LinkInput, drv.CUjitInputType | undefined> = {
  ptx: drv.CUjitInputType.CU_JIT_INPUT_PTX,
  cubin: drv.CUjitInputType.CU_JIT_INPUT_CUBIN,
  ltoir: undefined,
  fatbin: drv.CUjitInputType.CU_JIT_INPUT_FATBINARY,
  object: drv.CUjitInputType.CU_JIT_INPUT_OBJECT,
  library: drv.CUjitInputType.CU_JIT_INPUT_LIBRARY,
};

const LOG_BYTES = 16384;

function bytesOf(data: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof data === 'string') return Buffer.from(data.endsWith('\0') ? data : `${data}\0`, 'utf8');
  if (isArrayBuffer(data)) return new Uint8Array(data);
  if (isUint8Array(data)) return data;
  throw new TypeError('Linker.add: link input must be PTX text or bytes (Uint8Array/ArrayBuffer)');
}

/**
 * Links device code into one CUBIN: nvJitLink (PTX, CUBIN, LTO-IR, fatbin, objects, libraries), or the
 * driver linker (cuLink*, no LTO-IR) where libnvJitLink cannot be loaded or `driver: true` asks for it.
 * Add inputs, then complete() or load(). Free with close() or `using`.
 * @example
 * ```ts
 * import { Linker, Program } from 'cuda-ts/objects';
 *
 * // two translation units compiled to LTO-IR, linked with link-time optimization into one CUBIN
 * using lib = new Program('extern "C" __device__ float twice(float v) { return 2 * v; }').compile({ lto: true, options: ['-rdc=true'] });
 * using main = new Program('extern "C" __device__ float twice(float); extern "C" __global__ void k(float* x) { x[0] = twice(x[0]); }')
 *   .compile({ lto: true, options: ['-rdc=true'] });
 * using linker = new Linker({ lto: true }).add('ltoir', lib.ltoir, 'lib').add('ltoir', main.ltoir, 'main');
 * using module = linker.load(); // or linker.complete(): the CUBIN bytes
 * using k = module.kernel('k', ['ptr']);
 * ```
 */
export class Linker extends Resource {
  /** Which linker is in use. */
  readonly backend: 'nvJitLink' | 'driver';
  /** The target architecture (`sm_XY`). */
  readonly arch: string;
  private readonly jitHandle: jit.nvJitLinkHandle | undefined;
  private readonly cuState: drv.CUlinkState | undefined;
  private readonly logs: { error: Uint8Array; info: Uint8Array } | undefined;
  private readonly keep: unknown[] = [];
  private result: Uint8Array | undefined;
  /** What the linked CUBIN depends on, in order (the cache key's ingredients). */
  private readonly keyParts: (string | Uint8Array)[];
  private readonly cacheConfig: KernelCacheConfig;
  /** True when complete() read its result from the on-disk kernel cache. */
  fromCache = false;
  /** The context the driver linker runs in; undefined with nvJitLink. */
  readonly context: Context | undefined;

  /**
   * Creates the linker (nvJitLinkCreate, else cuLinkCreate).
   * @param options `arch` (target `sm_XY`; default the current device's), `lto` (link-time optimization, needed for LTO-IR inputs; default false), `options` (further nvJitLink options such as `-O3`), `driver` (force the driver linker; default false), `context` (the driver linker's; default the current one) and `cache` (use the on-disk kernel cache; default true).
   * @throws TypeError for an `arch` that is not `sm_XY`; {@link LinkError} when `lto` is asked and
   * nvJitLink is unavailable; a CudaError when creation fails
   */
  constructor(options: LinkerOptions = {}) {
    if (typeof options !== 'object' || options === null) throw new TypeError(`Linker: options must be an object, got ${describe(options)}`);
    checkKeys('Linker', options, ['arch', 'lto', 'options', 'driver', 'context', 'cache']);
    if (options.arch !== undefined && typeof options.arch !== 'string')
      throw new TypeError(`Linker: arch must be a string like 'sm_90', got ${describe(options.arch)}`);
    for (const k of ['lto', 'driver', 'cache'] as const)
      if (options[k] !== undefined && typeof options[k] !== 'boolean') throw new TypeError(`Linker: ${k} must be a boolean, got ${describe(options[k])}`);
    const cacheConfig = kernelCacheConfig(process.env, 'Linker');
    if (options.cache === false) cacheConfig.enabled = false;
    const arch = options.arch ?? Device.current().arch;
    if (!/^sm_\d+[a-z]?$/.test(arch)) throw new TypeError(`Linker: arch must be sm_XY, got '${arch}'`);
    let jitHandle: jit.nvJitLinkHandle | undefined;
    let cuState: drv.CUlinkState | undefined;
    let logs: { error: Uint8Array; info: Uint8Array; opts: Int32Array; values: BigUint64Array } | undefined;
    let context: Context | undefined;
    if (!options.driver) {
      const opts = [`-arch=${arch}`, ...(options.lto ? ['-lto'] : []), ...(options.options ?? [])];
      try {
        jitHandle = jitApi().nvJitLinkCreate(opts);
      } catch (e) {
        if (!(e instanceof CudaLibraryError || e instanceof CudaSymbolError)) throw e;
        if (options.lto) throw new LinkError('link-time optimization needs libnvJitLink, which could not be loaded', '', e);
      }
    }
    if (jitHandle === undefined) {
      if (options.lto) throw new LinkError('link-time optimization needs nvJitLink (the driver linker has no LTO)', '');
      context = contextOf(options.context, 'Linker: context');
      const error = new Uint8Array(LOG_BYTES);
      const info = new Uint8Array(LOG_BYTES);
      const J = drv.CUjit_option;
      const opts = new Int32Array([
        J.CU_JIT_ERROR_LOG_BUFFER,
        J.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        J.CU_JIT_INFO_LOG_BUFFER,
        J.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
      ]);
      const values = new BigUint64Array([
        koffi.address(error.buffer) + BigInt(error.byteOffset),
        BigInt(LOG_BYTES),
        koffi.address(info.buffer) + BigInt(info.byteOffset),
        BigInt(LOG_BYTES),
      ]);
      drv.call(context, 'cuLinkCreate', 4, opts, values, drv.out64);
      cuState = drv.outNumber() as drv.CUlinkState;
      logs = { error, info, opts, values };
    }
    const ctx = context;
    super('Linker', jitHandle !== undefined ? () => jitApi().nvJitLinkDestroy(jitHandle!) : () => drv.release(ctx!, 'cuLinkDestroy', cuState!), [context]);
    this.backend = jitHandle !== undefined ? 'nvJitLink' : 'driver';
    this.arch = arch;
    this.jitHandle = jitHandle;
    this.cuState = cuState;
    this.logs = logs;
    this.context = context;
    if (logs) this.keep.push(logs);
    this.cacheConfig = cacheConfig;
    this.keyParts = [this.backend, arch, String(!!options.lto), JSON.stringify(options.options ?? [])];
  }

  /** The linker's version for the cache key: nvJitLink's, or the driver's for cuLink*. */
  private linkerVersion(): string {
    try {
      if (this.jitHandle !== undefined) {
        const { major, minor } = jitApi().nvJitLinkVersion();
        return `nvJitLink ${major}.${minor}`;
      }
      drv.global('cuDriverGetVersion', drv.out32);
      return `driver ${drv.out32[0]}`;
    } catch {
      return 'unknown'; // no version, no caching (see complete())
    }
  }

  private errorLog(): string {
    try {
      if (this.jitHandle !== undefined) {
        const n = jitApi().nvJitLinkGetErrorLogSize(this.jitHandle);
        if (n <= 1) return '';
        const buf = new Uint8Array(n);
        jitApi().nvJitLinkGetErrorLog(this.jitHandle, buf);
        return textFrom(buf);
      }
      return textFrom(this.logs!.error);
    } catch {
      return '';
    }
  }

  /**
   * Adds an input (`ptx` text, or bytes); `name` appears in the linker's messages.
   * @param kind What the input is: 'ptx', 'cubin', 'ltoir', 'fatbin', 'object' or 'library'.
   * @param data The input: PTX text, or the bytes of the others.
   * @param name The input's name in the linker's messages (default `input.<kind>`).
   * @throws {@link LinkError} when the input is rejected (with the linker's log), or when the driver
   * linker is given LTO-IR; Error after complete()
   */
  add(kind: LinkInput, data: string | Uint8Array | ArrayBuffer, name = `input.${kind}`): this {
    this.assertOpen();
    if (this.result) throw new ObjectsError('Linker.add', OBJECTS_ERROR.state, 'add() after complete()');
    if (typeof kind !== 'string' || !Object.prototype.hasOwnProperty.call(JIT_INPUT, kind))
      throw new TypeError(`Linker.add: unknown link input kind ${describe(kind)} (expected ${Object.keys(JIT_INPUT).join(', ')})`);
    if (typeof name !== 'string' || name.includes('\0')) throw new TypeError(`Linker.add: name must be a string without NUL, got ${describe(name)}`);
    const bytes = bytesOf(data);
    this.keep.push(bytes);
    this.keyParts.push(kind, name, bytes);
    try {
      if (this.jitHandle !== undefined) jitApi().nvJitLinkAddData(this.jitHandle, jitApi().nvJitLinkInputType[JIT_INPUT[kind]], bytes, bytes.byteLength, name);
      else {
        const t = CU_INPUT[kind];
        if (t === undefined) throw new LinkError(`the driver linker cannot link ${kind} (needs nvJitLink)`, '', undefined, 'Linker.add');
        drv.call(this.context!, 'cuLinkAddData', this.cuState!, t, bytes, bytes.byteLength, name, 0, null, null);
      }
    } catch (e) {
      if (e instanceof LinkError) throw e;
      throw new LinkError(`adding ${name} failed`, this.errorLog(), e, 'Linker.add');
    }
    return this;
  }

  /**
   * Adds a file; the kind comes from the extension unless given.
   * @param path Path of the input file.
   * @param kind What the file is (default: from its extension: .ptx, .cubin, .ltoir, .fatbin, .o, .a).
   */
  addFile(path: string, kind?: LinkInput): this {
    const ext = path.split('.').pop() ?? '';
    const k = kind ?? ({ ptx: 'ptx', cubin: 'cubin', ltoir: 'ltoir', fatbin: 'fatbin', o: 'object', a: 'library' } as Record<string, LinkInput>)[ext];
    if (!k) throw new TypeError(`Linker.addFile: cannot tell the link input kind of ${path}: pass it`);
    const data = readFileSync(path);
    return this.add(k, k === 'ptx' ? data.toString('utf8') : new Uint8Array(data), path);
  }

  /**
   * Links and returns the CUBIN (copied out; valid after close()). Later calls return the same bytes.
   * @throws {@link LinkError} with the linker's log when linking fails
   */
  complete(): Uint8Array {
    this.assertOpen();
    if (this.result) return this.result;
    const version = this.cacheConfig.enabled ? this.linkerVersion() : 'unknown';
    const key = version !== 'unknown' ? kernelCacheKey(this.backend === 'driver' ? 'cuLink' : 'nvjitlink', [version, ...this.keyParts]) : '';
    const hit = key ? readCachedKernel(this.cacheConfig, key)?.blobs.cubin : undefined;
    if (hit) {
      this.fromCache = true;
      return (this.result = hit);
    }
    try {
      if (this.jitHandle !== undefined) {
        jitApi().nvJitLinkComplete(this.jitHandle);
        const n = jitApi().nvJitLinkGetLinkedCubinSize(this.jitHandle);
        const out = new Uint8Array(n);
        jitApi().nvJitLinkGetLinkedCubin(this.jitHandle, out);
        this.result = out;
      } else {
        drv.call(this.context!, 'cuLinkComplete', this.cuState!, drv.out64, drv.out64b);
        this.result = new Uint8Array(koffi.view(drv.outNumber(), Number(drv.out64b[0])).slice(0));
      }
    } catch (e) {
      throw new LinkError('linking failed', this.errorLog(), e, 'Linker.complete');
    }
    if (key) writeCachedKernel(this.cacheConfig, key, { meta: {}, blobs: { cubin: this.result } });
    return this.result;
  }

  /**
   * Links and loads the result.
   * @param options `context`: the context to load into (default: the current one, else device 0's primary context).
   */
  load(options?: ModuleOptions): Module {
    return Module.load(this.complete(), options);
  }
}
