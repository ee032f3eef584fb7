// Program: NVRTC runtime compilation of CUDA C++ to PTX, CUBIN or LTO-IR.
import { textFrom } from '../support';
import { BuildError, CudaError, OBJECTS_ERROR, ObjectsError } from './errors';
import { checkKeys, describe } from './describe';
import { loadNvrtc, NVRTC_LIBRARY, type nvrtc } from './releases';
import { Device } from './device';
import { Resource } from './lifecycle';
import { Module, type ModuleOptions } from './module';
import {
  kernelCacheConfig,
  kernelCacheKey,
  readCachedKernel,
  writeCachedKernel,
  type KernelCacheConfig,
  type KernelCacheEntry,
  type KernelCacheKey,
} from './kernel-cache';
import { fileIsMapped, libraryFile, type LibraryFile } from './library-file';

/** NVRTC's typed layer, loaded on first use (src/releases.ts): importing the objects layer loads none of it. */
const nvrtcApi = loadNvrtc;

/**
 * Compilation failed: `log` is NVRTC's full log. A {@link BuildError} (module `nvrtc`, `func`
 * `Program.compile`) whose `code` is NVRTC's status and whose `name` stays `CompileError`.
 */
export class CompileError extends BuildError {
  /** The program's name ({@link ProgramOptions.name}). */
  readonly programName: string;
  /** The options the compilation was given, including the added `--gpu-architecture`/`-dlto`. */
  readonly options: readonly string[];
  /**
   * Made by {@link Program.compile}; `cause` is the NVRTC error.
   * @param programName The program's name (ProgramOptions.name).
   * @param log NVRTC's full compile log.
   * @param options The NVRTC options the compilation was given.
   * @param cause The NVRTC error of nvrtcCompileProgram.
   */
  constructor(programName: string, log: string, options: readonly string[], cause: unknown) {
    super(
      'nvrtc',
      'Program.compile',
      `Program.compile: compiling ${programName} failed:\n${log.trim() || (cause as Error)?.message || 'no log'}`,
      log,
      { code: cause instanceof CudaError ? cause.code : OBJECTS_ERROR.build, name: 'CompileError' },
      cause,
    );
    this.programName = programName;
    this.options = options;
  }
}

/** Options of the {@link Program} constructor. */
export interface ProgramOptions {
  /** File name used in messages and `#line` (default `program.cu`). */
  name?: string;
  /** Headers by include name: `{ 'util.h': '...source...' }`. */
  headers?: Record<string, string>;
  /** Name expressions (e.g. `saxpy<float>`) whose lowered names you need: see loweredName(). */
  nameExpressions?: readonly string[];
}

/** Options of {@link Program.compile}. */
export interface CompileOptions {
  /**
   * Target: `sm_90` (CUBIN; the default is the current device's sm_XY), `compute_90` (PTX only), or
   * `native`-free explicit values. With `lto: true` the output is LTO-IR.
   */
  arch?: string;
  /** Emit LTO-IR (`-dlto`) for Linker. */
  lto?: boolean;
  /** Further nvrtc options (`-std=c++17`, `-default-device`, `-lineinfo`, `-DNAME=1`, …). */
  options?: readonly string[];
  /**
   * Read and write the on-disk kernel cache (src/kernel-cache.ts; default true, CUDA_TS_CACHE=0 turns
   * it off everywhere): the same source, headers, name expressions, options and NVRTC library file
   * compiled before, in any process, is read back instead of compiled, without loading NVRTC. Never cached: a compilation
   * that may read files from disk (an include path or forced include in the options, a quoted
   * `#include` of a name not among the headers given).
   */
  cache?: boolean;
}

/**
 * The NVRTC options of a compile(): `options.options` with the target architecture (unless they name
 * one: `options.arch`, else the current device's) and `-dlto`. Checked here, as a cache hit never
 * passes them to NVRTC's own checks.
 */
function nvrtcOptions(options: CompileOptions): string[] {
  const { cache, options: given, arch, lto } = options;
  if (
    (cache !== undefined && typeof cache !== 'boolean') ||
    (given !== undefined && !isTextList(given)) ||
    (arch !== undefined && (typeof arch !== 'string' || arch.includes('\0')))
  )
    throw compileOptionError(options);
  const opts = given ? [...given] : [];
  if (!opts.some((o) => o === '-arch' || o === '--gpu-architecture' || o.startsWith('-arch=') || o.startsWith('--gpu-architecture='))) {
    const target = arch ?? currentArch();
    if (target) opts.push(`--gpu-architecture=${target}`);
  }
  if (lto) opts.push('-dlto');
  return opts;
}

function isTextList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((o) => typeof o === 'string' && !o.includes('\0'));
}

/** The TypeError of compile() options nvrtcOptions refused, naming the first bad one. */
function compileOptionError(options: CompileOptions): TypeError {
  if (options.cache !== undefined && typeof options.cache !== 'boolean')
    return new TypeError(`Program.compile: cache must be a boolean, got ${describe(options.cache)}`);
  if (options.options !== undefined && !isTextList(options.options))
    return new TypeError(`Program.compile: options must be an array of strings without NUL characters, got ${describe(options.options)}`);
  return new TypeError(`Program.compile: arch must be a string such as 'sm_90', got ${describe(options.arch)}`);
}

/** The TypeError of Program constructor arguments that its checks refused, naming the first bad one. */
function programArgumentError(source: unknown, options: ProgramOptions): TypeError {
  if (typeof source !== 'string') return new TypeError(`Program: source must be CUDA C++ source text (a string), got ${describe(source)}`);
  if (typeof options !== 'object' || options === null) return new TypeError(`Program: options must be an object, got ${describe(options)}`);
  if (options.name !== undefined && typeof options.name !== 'string') return new TypeError(`Program: name must be a string, got ${describe(options.name)}`);
  if (options.headers !== undefined && (typeof options.headers !== 'object' || options.headers === null))
    return new TypeError(`Program: headers must be an object of include name → source text, got ${describe(options.headers)}`);
  if (options.nameExpressions !== undefined && !Array.isArray(options.nameExpressions))
    return new TypeError(`Program: nameExpressions must be an array of strings, got ${describe(options.nameExpressions)}`);
  const bad = Object.entries(options.headers ?? {}).find(([, v]) => typeof v !== 'string');
  return new TypeError(`Program: header ${bad?.[0]} must be source text`);
}

/** NVRTC's version, as a cache key names it where its library file cannot be told (NVRTC loads). */
function nvrtcVersionText(): string {
  const { major, minor } = nvrtcApi().nvrtcVersion();
  return `nvrtc ${major}.${minor}`;
}

/** The current device's `sm_XY`, or undefined without a usable driver. */
function currentArch(): string | undefined {
  try {
    return Device.current().arch;
  } catch {
    return undefined;
  }
}

/**
 * An NVRTC program: CUDA C++ source compiled at run time to CUBIN, PTX or LTO-IR, then loaded as a
 * {@link Module} or linked with a {@link Linker}. Free with close() or `using`.
 * @example
 * ```ts
 * import { Program } from 'cuda-ts/objects';
 *
 * const source = 'extern "C" __global__ void fill(float* x, float v, unsigned n) {' +
 *   ' unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = v; }';
 * using program = new Program(source, { name: 'fill.cu' }).compile({ options: ['-lineinfo'] });
 * if (program.log) console.warn(program.log); // warnings, if any
 * using module = program.load(); // CUBIN for this device, loaded in the current context
 * using fill = module.kernel('fill', ['ptr', 'f32', 'u32']);
 * ```
 */
export class Program extends Resource {
  /** The NVRTC program once made (see {@link handle}); the destroy function reads it from here. */
  private readonly made: { program?: nvrtc.nvrtcProgram };
  /** The file name used in messages ({@link ProgramOptions.name}, default `program.cu`). */
  readonly name: string;
  private compiledWith: readonly string[] | undefined;
  private readonly expressions: string[] = [];
  private lastLog = '';
  private readonly source: string;
  private readonly headerList: readonly (readonly [string, string])[];
  /** The source, name and headers, for the cache key. */
  private readonly inputs: readonly string[];
  /** The include names of the headers given (the only files the cache key covers). */
  private readonly headerNames: ReadonlySet<string>;
  /** The outputs read from the kernel cache, when compile() found them there (NVRTC compiled nothing). */
  private cached: KernelCacheEntry | undefined;
  /** True when the last compile() was answered by the on-disk kernel cache. */
  get fromCache(): boolean {
    return this.cached !== undefined;
  }

  /**
   * Makes the program; NVRTC is not called (nor libnvrtc loaded) until compile() misses the kernel
   * cache or {@link handle} is read, so a cache hit needs no NVRTC at all.
   * @param source CUDA C++ source text
   * @param options `name` (file name in messages and `#line`; default 'program.cu'), `headers` (header text by include name, e.g. `{ 'util.h': '…' }`) and `nameExpressions` (C++ names such as `saxpy<float>` whose lowered names loweredName() returns).
   * @throws TypeError when `source`, a header or a name expression is not a string
   */
  constructor(source: string, options: ProgramOptions = {}) {
    // the checks inline, their messages in programArgumentError (built on failure only): a fresh
    // process compiles each function on its first call, and a cache hit runs little else
    if (typeof source !== 'string' || typeof options !== 'object' || options === null) throw programArgumentError(source, options);
    checkKeys('Program', options, ['name', 'headers', 'nameExpressions']);
    const { name = 'program.cu', headers: given, nameExpressions } = options;
    if (
      typeof name !== 'string' ||
      (given !== undefined && (typeof given !== 'object' || given === null)) ||
      (nameExpressions !== undefined && !Array.isArray(nameExpressions))
    )
      throw programArgumentError(source, options);
    const headers = given ? Object.entries(given) : [];
    for (const [, v] of headers) if (typeof v !== 'string') throw programArgumentError(source, options);
    const nul = textWithNul(source, name, headers); // NVRTC, called on a cache miss only, takes C strings
    if (nul) throw new TypeError(`Program: ${nul} contains a NUL character`);
    const made: { program?: nvrtc.nvrtcProgram } = {};
    super('Program', () => {
      if (made.program !== undefined) nvrtcApi().nvrtcDestroyProgram(made.program);
    });
    this.made = made;
    this.source = source;
    this.headerList = headers;
    this.name = name;
    this.inputs = [source, name, ...headers.flat()];
    this.headerNames = new Set(headers.map(([k]) => k));
    if (nameExpressions) for (const e of nameExpressions) this.addNameExpression(e);
  }

  /**
   * The NVRTC handle (nvrtcProgram), made (nvrtcCreateProgram, with the name expressions added) on
   * first need: a compile() the kernel cache answered ({@link fromCache}) makes none. Reading it makes
   * it; NVRTC has compiled nothing on it after a cache hit: compile with `{ cache: false }` to call
   * NVRTC on it yourself.
   * @throws a CudaError when NVRTC cannot be loaded or refuses the program
   */
  get handle(): nvrtc.nvrtcProgram {
    this.assertOpen();
    if (this.made.program === undefined) {
      const api = nvrtcApi();
      this.made.program = api.nvrtcCreateProgram(
        this.source,
        this.name,
        this.headerList.map(([, v]) => v),
        this.headerList.map(([k]) => k),
      );
      for (const e of this.expressions) api.nvrtcAddNameExpression(this.made.program, e);
    }
    return this.made.program;
  }

  /**
   * Registers a name expression (before compile) whose lowered (mangled) name loweredName() returns.
   * @param expression A C++ name expression as written in the source, e.g. `saxpy<float>` or `&ns::kernel`.
   */
  addNameExpression(expression: string): this {
    this.assertOpen();
    if (typeof expression !== 'string' || expression.includes('\0'))
      throw new TypeError(`Program.addNameExpression: expression must be a string without NUL characters, got ${describe(expression)}`);
    if (this.compiledWith) throw new ObjectsError('Program.addNameExpression', OBJECTS_ERROR.state, 'addNameExpression must precede compile()');
    if (this.made.program !== undefined) nvrtcApi().nvrtcAddNameExpression(this.made.program, expression);
    this.expressions.push(expression);
    return this;
  }

  /**
   * Compiles; throws CompileError with the full log on failure. Returns this.
   * @param options `arch` (the target: `sm_90` for CUBIN, the default being the current device's sm_XY; `compute_90` for PTX only), `lto` (emit LTO-IR for a Linker; default false), `options` (further NVRTC options such as `-std=c++17` or `-DNAME=1`) and `cache` (use the on-disk kernel cache; default true).
   */
  compile(options: CompileOptions = {}): this {
    this.assertOpen();
    const opts = nvrtcOptions(options);
    const cache = kernelCacheConfig(process.env, 'Program.compile');
    if (options.cache === false || readsFiles(this.inputs, this.headerNames, opts)) cache.enabled = false;
    const key = cache.enabled ? this.cacheKey(opts) : undefined;
    const hit = key && readCachedKernel(cache, key.key);
    if (!hit) return this.compileWithNvrtc(opts, cache, key);
    this.cached = hit;
    this.lastLog = typeof hit.meta.log === 'string' ? hit.meta.log : '';
    this.compiledWith = opts;
    return this;
  }

  /** compile() when the cache did not answer: NVRTC compiles; the outputs go to the cache when on. */
  private compileWithNvrtc(opts: string[], cache: KernelCacheConfig, key: { key: KernelCacheKey; nvrtcFile?: LibraryFile } | undefined): this {
    try {
      nvrtcApi().nvrtcCompileProgram(this.handle, opts);
    } catch (e) {
      this.lastLog = this.readLog();
      throw new CompileError(this.name, this.lastLog, opts, e);
    }
    this.lastLog = this.readLog();
    this.compiledWith = opts;
    this.cached = undefined;
    // an entry keyed by NVRTC's file is written only when that file is the NVRTC that compiled it
    if (key && (!key.nvrtcFile || fileIsMapped(key.nvrtcFile))) writeCachedKernel(cache, key.key, this.outputs());
    return this;
  }

  /**
   * The cache key: everything NVRTC's output depends on (src/kernel-cache.ts). NVRTC is named by its
   * library file (path, inode, size, modification time: src/library-file.ts), found without loading
   * it; only where that file cannot be told is NVRTC loaded and asked its version.
   */
  private cacheKey(opts: readonly string[]): { key: KernelCacheKey; nvrtcFile?: LibraryFile } {
    const nvrtcFile = libraryFile(NVRTC_LIBRARY);
    const compiler = nvrtcFile ? `nvrtc file ${nvrtcFile.identity}` : nvrtcVersionText();
    return { key: kernelCacheKey('nvrtc', [compiler, ...this.inputs, JSON.stringify(opts), JSON.stringify(this.expressions)]), nvrtcFile };
  }

  /** Everything the getters read from NVRTC, for the cache: each output NVRTC produced. */
  private outputs(): KernelCacheEntry {
    const api = nvrtcApi();
    const blobs: Record<string, Uint8Array> = {};
    const grab = (name: string, size: () => number, get: (b: Uint8Array) => void): void => {
      try {
        const n = size();
        if (n === 0) return;
        const b = new Uint8Array(n);
        get(b);
        blobs[name] = b;
      } catch {
        /* not produced for this target */
      }
    };
    grab(
      'cubin',
      () => api.nvrtcGetCUBINSize(this.handle),
      (b) => api.nvrtcGetCUBIN(this.handle, b),
    );
    grab(
      'ptx',
      () => api.nvrtcGetPTXSize(this.handle),
      (b) => api.nvrtcGetPTX(this.handle, b),
    );
    grab(
      'ltoir',
      () => api.nvrtcGetLTOIRSize(this.handle),
      (b) => api.nvrtcGetLTOIR(this.handle, b),
    );
    const lowered: Record<string, string> = {};
    for (const e of this.expressions) {
      const name = api.nvrtcGetLoweredName(this.handle, e);
      if (name) lowered[e] = name;
    }
    return { meta: { log: this.lastLog, lowered }, blobs };
  }

  private readLog(): string {
    try {
      const n = nvrtcApi().nvrtcGetProgramLogSize(this.handle);
      if (n <= 1) return '';
      const buf = new Uint8Array(n);
      nvrtcApi().nvrtcGetProgramLog(this.handle, buf);
      return textFrom(buf);
    } catch {
      return '';
    }
  }

  /** The compile log (warnings on success). */
  get log(): string {
    this.assertOpen();
    return this.lastLog;
  }

  private assertCompiled(what: string): void {
    this.assertOpen();
    if (!this.compiledWith) throw new ObjectsError(`Program.${what}`, OBJECTS_ERROR.state, 'compile() the program first');
  }

  /** PTX text (needs a `compute_XY` arch or a virtual arch in the options). */
  get ptx(): string {
    this.assertCompiled('ptx');
    if (this.cached) {
      const ptx = this.cached.blobs.ptx;
      if (!ptx)
        throw new ObjectsError(
          'Program.ptx',
          OBJECTS_ERROR.missing,
          `${this.name} has no PTX for ${this.compiledWith!.find((o) => o.includes('arch')) ?? 'this target'}`,
        );
      return textFrom(ptx);
    }
    const n = nvrtcApi().nvrtcGetPTXSize(this.handle);
    const buf = new Uint8Array(n);
    nvrtcApi().nvrtcGetPTX(this.handle, buf);
    return textFrom(buf);
  }

  /** CUBIN bytes (needs a real `sm_XY` arch: the default). */
  get cubin(): Uint8Array {
    this.assertCompiled('cubin');
    const n = this.cached ? (this.cached.blobs.cubin?.byteLength ?? 0) : nvrtcApi().nvrtcGetCUBINSize(this.handle);
    if (n === 0)
      throw new ObjectsError(
        'Program.cubin',
        OBJECTS_ERROR.missing,
        `${this.name} has no CUBIN: compile for a real architecture (sm_XY), not ${this.compiledWith!.find((o) => o.includes('arch')) ?? 'a virtual one'}`,
      );
    if (this.cached) return this.cached.blobs.cubin.slice();
    const buf = new Uint8Array(n);
    nvrtcApi().nvrtcGetCUBIN(this.handle, buf);
    return buf;
  }

  /** LTO-IR bytes (compile with `{ lto: true }`). */
  get ltoir(): Uint8Array {
    this.assertCompiled('ltoir');
    const n = this.cached ? (this.cached.blobs.ltoir?.byteLength ?? 0) : nvrtcApi().nvrtcGetLTOIRSize(this.handle);
    if (n === 0) throw new ObjectsError('Program.ltoir', OBJECTS_ERROR.missing, `${this.name} has no LTO-IR: compile with { lto: true }`);
    if (this.cached) return this.cached.blobs.ltoir.slice();
    const buf = new Uint8Array(n);
    nvrtcApi().nvrtcGetLTOIR(this.handle, buf);
    return buf;
  }

  /**
   * The mangled name of a registered name expression, e.g. for Module.kernel().
   * @param expression A name expression registered before compile() (constructor option or addNameExpression).
   */
  loweredName(expression: string): string {
    this.assertCompiled('loweredName');
    if (!this.expressions.includes(expression))
      throw new ObjectsError('Program.loweredName', OBJECTS_ERROR.state, `'${expression}' was not registered with addNameExpression()`);
    const name = this.cached ? cachedLoweredName(this.cached, expression) : nvrtcApi().nvrtcGetLoweredName(this.handle, expression);
    if (!name) throw new ObjectsError('Program.loweredName', OBJECTS_ERROR.missing, `no lowered name for '${expression}'`);
    return name;
  }

  /**
   * Loads the compiled program: CUBIN when there is one, else PTX.
   * @param options `context`: the context to load into (default: the current one, else device 0's primary context).
   */
  load(options?: ModuleOptions): Module {
    this.assertCompiled('load');
    let cubinSize = 0;
    try {
      cubinSize = this.cached ? (this.cached.blobs.cubin?.byteLength ?? 0) : nvrtcApi().nvrtcGetCUBINSize(this.handle);
    } catch {
      cubinSize = 0;
    }
    return cubinSize > 0 ? Module.load(this.cubin, options) : Module.load(this.ptx, options);
  }

  /** NVRTC's version. */
  static version(): { major: number; minor: number } {
    return nvrtcApi().nvrtcVersion();
  }
}

/**
 * Compiles `source` and loads it: the short path for examples and tests. Returns the program (close it
 * when done) and its module. On failure the program is closed and the error (a {@link CompileError}
 * for a compile error) rethrown.
 * @param source CUDA C++ source text.
 * @param options The Program constructor's options (`name`, `headers`, `nameExpressions`), compile()'s (`arch`, `lto`, `options`, `cache`) and load()'s (`context`), in one object.
 */
export function compile(source: string, options: ProgramOptions & CompileOptions & ModuleOptions = {}): { program: Program; module: Module } {
  if (typeof options !== 'object' || options === null) throw new TypeError(`compile: options must be an object, got ${describe(options)}`);
  // the Program constructor takes its own options only; compile() and load() read the rest
  const own: ProgramOptions = {};
  for (const k of ['name', 'headers', 'nameExpressions'] as const) if (options[k] !== undefined) (own as Record<string, unknown>)[k] = options[k];
  const program = new Program(source, own);
  try {
    program.compile(options);
    return { program, module: program.load(options) };
  } catch (e) {
    program.close();
    throw e;
  }
}

/** Which of a program's texts holds a NUL character (NVRTC takes C strings), or undefined. */
function textWithNul(source: string, name: string, headers: readonly (readonly [string, string])[]): string | undefined {
  if (source.includes('\0')) return 'source';
  if (name.includes('\0')) return 'name';
  for (const [k, v] of headers) if (k.includes('\0') || v.includes('\0')) return `header ${k}`;
  return undefined;
}

/** A lowered name kept in a cache entry (own keys only: an expression may be any text). */
function cachedLoweredName(entry: KernelCacheEntry, expression: string): string | undefined {
  const lowered = entry.meta.lowered as Record<string, unknown> | undefined;
  const name = lowered && Object.prototype.hasOwnProperty.call(lowered, expression) ? lowered[expression] : undefined;
  return typeof name === 'string' ? name : undefined;
}

/**
 * True when NVRTC may read files the cache key cannot cover: an include path or a forced include in
 * the options, or a quoted `#include` of a name not among the headers given. Such a compilation is
 * never cached (a changed file on disk would otherwise be answered with the old kernel). Angle-bracket
 * includes without an include path are NVRTC's built-in headers, covered by its version.
 */
function readsFiles(inputs: readonly string[], headerNames: ReadonlySet<string>, opts: readonly string[]): boolean {
  for (const o of opts) if (o.startsWith('-I') || o.startsWith('--include-path') || o.startsWith('-include') || o.startsWith('--pre-include')) return true;
  // the source and the headers (their names never hold an #include line); most hold no `include` at all
  for (const text of inputs) if (text.includes('include') && includesOtherFile(text, headerNames)) return true;
  return false;
}

/** True when `text` has a quoted `#include` of a name not among `headerNames`. */
function includesOtherFile(text: string, headerNames: ReadonlySet<string>): boolean {
  for (const m of text.matchAll(/^\s*#\s*include\s*"([^"]+)"/gm)) if (!headerNames.has(m[1])) return true;
  return false;
}
