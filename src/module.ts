// Module (PTX, CUBIN, fatbin, file) and Kernel (attributes, occupancy, launch with a declared signature).
import { isArrayBuffer, isUint8Array } from '../support';
import { readFileSync } from 'node:fs';
import { koffi } from '../support';
import * as drv from './driver';
import { BuildError } from './errors';
import { Context, contextOf } from './context';
import { describe } from './describe';
import { Resource, whenNoHostFuncs } from './lifecycle';
import { ArgPack, KERNEL, SIZES, describeType, type ArgType, type KernelArgs } from './kernel-args';
import { LaunchConfig, type LaunchConfigInit } from './launch-config';
import { launchArgs, launchFew } from './launch';
import type { StreamLike } from './stream';
import { SEALED, type Sealed, checkSealed } from './sealed';

const FA = drv.CUfunction_attribute;

/**
 * A module image failed to load (a PTX JIT error carries the JIT log): a {@link BuildError} of module
 * `driver` with the cuModuleLoadDataEx status as `code` and `name`; `log` ('' when there is none) is
 * also appended to the message.
 */
export class ModuleLoadError extends BuildError {
  /**
   * Made by {@link Module.load} from the cuModuleLoadDataEx status and the JIT log.
   * @param code The CUresult cuModuleLoadDataEx returned.
   * @param log The JIT error log ('' when there is none).
   */
  constructor(code: number, log: string) {
    const status = new drv.DriverError('cuModuleLoadDataEx', code);
    super('driver', 'cuModuleLoadDataEx', `Module.load: ${status.message}${log ? `\n${log}` : ''}`, log, status, status);
  }
}

const LOG_BYTES = 16384;

function nulTerminated(text: string): Uint8Array {
  return Buffer.from(text.endsWith('\0') ? text : `${text}\0`, 'utf8');
}

/** Options of {@link Module.load} and the other loaders. */
export interface ModuleOptions {
  /** The context to load into (default: the current one, else device 0's primary context). */
  context?: Context;
}

/**
 * A loaded module (cuModuleLoadDataEx): device code from PTX, CUBIN or a fatbin, and the kernels and
 * `__device__` variables in it. Free with close() or `using`; kernels keep it loaded while they live.
 * @example
 * ```ts
 * import { Module } from 'cuda-ts/objects';
 *
 * // a CUBIN, fatbin or PTX file built ahead of time with nvcc (a Program loads its own: program.load())
 * using module = Module.fromFile('kernels.cubin');
 * using scale = module.kernel('scale', ['ptr', 'f32', 'u32']); // extern "C" name, declared signature
 * const counter = module.global('counter'); // a __device__ variable: its address and size
 * console.log(scale.maxThreadsPerBlock, counter.bytes);
 * ```
 */
export class Module extends Resource {
  /** The driver handle (CUmodule). */
  readonly handle: drv.CUmodule;
  /** The context the module is loaded in. */
  readonly context: Context;

  private constructor(seal: Sealed, handle: drv.CUmodule, context: Context) {
    checkSealed(seal, 'Module', 'program.load() or Module.load()');
    super('Module', () => {
      drv.forgetHandle(handle);
      whenNoHostFuncs(() => drv.release(context, 'cuModuleUnload', handle));
    }, [context]);
    this.handle = handle;
    this.context = context;
    drv.noteHandle(handle, 'CUmodule');
  }

  /**
   * Loads a PTX, CUBIN or fatbin image (strings are PTX). JIT errors carry the JIT log.
   * @param image The device code: PTX text (a string), or CUBIN or fatbin bytes.
   * @param options `context`: the context to load into (default: the current one, else device 0's primary context).
   */
  static load(image: string | Uint8Array | ArrayBuffer, options: ModuleOptions = {}): Module {
    if (typeof options !== 'object' || options === null) throw new TypeError(`Module.load: options must be an object, got ${describe(options)}`);
    const data = typeof image === 'string' ? nulTerminated(image) : isArrayBuffer(image) ? new Uint8Array(image) : image;
    if (!isUint8Array(data)) throw new TypeError(`Module.load: image must be PTX text, or CUBIN/fatbin bytes (Uint8Array/ArrayBuffer), got ${describe(image)}`);
    if (data.byteLength === 0) throw new RangeError('Module.load: empty image');
    const ctx = contextOf(options.context, 'Module.load: context');
    ctx.check();
    ctx.bind();
    const log = new Uint8Array(LOG_BYTES);
    const opts = new Int32Array([drv.CUjit_option.CU_JIT_ERROR_LOG_BUFFER, drv.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]);
    const values = new BigUint64Array([koffi.address(log.buffer) + BigInt(log.byteOffset), BigInt(LOG_BYTES)]);
    const out = new BigUint64Array(1);
    const status = drv.native('cuModuleLoadDataEx')(out, data, 2, opts, values);
    if (status !== 0) {
      const end = log.indexOf(0);
      throw drv.mark(
        ctx,
        new ModuleLoadError(
          status,
          Buffer.from(log.subarray(0, end < 0 ? LOG_BYTES : end))
            .toString('utf8')
            .trim(),
        ),
      );
    }
    return new Module(SEALED, Number(out[0]) as drv.CUmodule, ctx);
  }

  /**
   * Loads PTX text (JIT-compiled for the context's device).
   * @param ptx PTX text, JIT-compiled for the context's device.
   * @param options `context`: the context to load into (default: the current one, else device 0's primary context).
   */
  static fromPTX(ptx: string, options?: ModuleOptions): Module {
    if (typeof ptx !== 'string') throw new TypeError(`Module.fromPTX: ptx must be PTX text, got ${describe(ptx)}`);
    return Module.load(ptx, options);
  }

  /**
   * Loads CUBIN bytes.
   * @param cubin CUBIN bytes for the context's device architecture.
   * @param options `context`: the context to load into (default: the current one, else device 0's primary context).
   */
  static fromCubin(cubin: Uint8Array | ArrayBuffer, options?: ModuleOptions): Module {
    return Module.load(cubin, options);
  }

  /**
   * Loads a fatbin (the driver picks the image for the device).
   * @param fatbin Fatbin bytes; the driver picks the image for the device.
   * @param options `context`: the context to load into (default: the current one, else device 0's primary context).
   */
  static fromFatbin(fatbin: Uint8Array | ArrayBuffer, options?: ModuleOptions): Module {
    return Module.load(fatbin, options);
  }

  /**
   * Loads a .ptx, .cubin or .fatbin file.
   * @param path Path of a .ptx, .cubin or .fatbin file (the extension says which).
   * @param options `context`: the context to load into (default: the current one, else device 0's primary context).
   */
  static fromFile(path: string, options?: ModuleOptions): Module {
    if (typeof path !== 'string') throw new TypeError(`Module.fromFile: path must be a string, got ${describe(path)}`);
    const bytes = readFileSync(path);
    return path.endsWith('.ptx') ? Module.load(bytes.toString('utf8'), options) : Module.load(new Uint8Array(bytes), options);
  }

  /** @internal */
  check(): Context {
    this.assertOpen();
    this.context.check();
    return this.context;
  }

  /**
   * The kernel `name` (use the lowered name for C++ kernels: Program.loweredName). With a `signature`,
   * launches validate and pack arguments without allocating, and the compiler checks launch arguments:
   * `module.kernel('saxpy', ['ptr', 'f32', 'u32'])` is a `Kernel<[DevicePointer, number, number]>`, so
   * `launch(s, cfg, k, 'x', 1, 2)` does not type-check. The argument tuple can also be given explicitly:
   * `module.kernel<[DevicePointer, number, number]>('saxpy', ['ptr', 'f32', 'u32'])`.
   * @param name The kernel's name in the module: the `extern "C"` name, or the lowered name of a C++ kernel (Program.loweredName).
   * @param signature The kernel's parameter types in order (`'ptr'`, `'f32'`, `'u32'`, …, or `{ struct, align }` for a struct by value); default none: launches are checked against the driver's parameter sizes.
   */
  kernel<A extends readonly unknown[] = never, const S extends readonly ArgType[] = readonly ArgType[]>(
    name: string,
    signature?: S,
  ): Kernel<[A] extends [never] ? KernelArgs<S> : A> {
    this.check();
    checkName('Module.kernel', name);
    drv.call(this.context, 'cuModuleGetFunction', drv.out64, this.handle, name);
    return new Kernel(SEALED, this, drv.outNumber() as drv.CUfunction, name, signature);
  }

  /**
   * A module-scope `__device__` variable: its address and size.
   * @param name The variable's name in the module (its lowered name for a C++ variable).
   */
  global(name: string): { ptr: drv.CUdeviceptr; bytes: number } {
    this.check();
    checkName('Module.global', name);
    drv.call(this.context, 'cuModuleGetGlobal', drv.out64, drv.out64b, this.handle, name);
    return { ptr: drv.outNumber() as drv.CUdeviceptr, bytes: Number(drv.out64b[0]) };
  }
}

function checkName(where: string, name: unknown): void {
  if (typeof name !== 'string' || name.length === 0 || name.includes('\0'))
    throw new TypeError(`${where}: name must be a non-empty string without NUL, got ${describe(name)}`);
}

/** Every attribute of a kernel (cuFuncGetAttribute), from {@link Kernel.attributes}. */
export interface KernelAttributes {
  /** Largest block size the kernel can be launched with (depends on its register use). */
  readonly maxThreadsPerBlock: number;
  /** Statically allocated shared memory per block, bytes. */
  readonly sharedSizeBytes: number;
  /** Constant memory the kernel uses, bytes. */
  readonly constSizeBytes: number;
  /** Local memory per thread, bytes. */
  readonly localSizeBytes: number;
  /** Registers per thread. */
  readonly numRegs: number;
  /** PTX virtual architecture it was compiled for, major * 10 + minor (e.g. 90). */
  readonly ptxVersion: number;
  /** Binary architecture it was compiled for, major * 10 + minor. */
  readonly binaryVersion: number;
  /** 1 when compiled with -Xptxas --dlcm=ca (global loads cached in L1). */
  readonly cacheModeCa: number;
  /** Largest dynamic shared memory per block it may be launched with, bytes (settable). */
  readonly maxDynamicSharedSizeBytes: number;
  /** Preferred shared-memory carveout, percent of the L1/shared capacity, or -1 for no preference (settable). */
  readonly preferredSharedMemoryCarveout: number;
  /** 1 when the kernel must be launched with a cluster size (compiled with a required cluster size). */
  readonly clusterSizeMustBeSet: number;
  /** Required cluster width in blocks (0: none; settable before first launch). */
  readonly requiredClusterWidth: number;
  /** Required cluster height in blocks. */
  readonly requiredClusterHeight: number;
  /** Required cluster depth in blocks. */
  readonly requiredClusterDepth: number;
  /** 1 when cluster sizes above the portable 8 blocks are allowed (settable). */
  readonly nonPortableClusterSizeAllowed: number;
  /** Cluster scheduling policy preference (CUclusterSchedulingPolicy, settable). */
  readonly clusterSchedulingPolicyPreference: number;
}

const KERNEL_ATTRIBUTES: readonly (readonly [keyof KernelAttributes, drv.CUfunction_attribute])[] = [
  ['maxThreadsPerBlock', FA.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK],
  ['sharedSizeBytes', FA.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES],
  ['constSizeBytes', FA.CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES],
  ['localSizeBytes', FA.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES],
  ['numRegs', FA.CU_FUNC_ATTRIBUTE_NUM_REGS],
  ['ptxVersion', FA.CU_FUNC_ATTRIBUTE_PTX_VERSION],
  ['binaryVersion', FA.CU_FUNC_ATTRIBUTE_BINARY_VERSION],
  ['cacheModeCa', FA.CU_FUNC_ATTRIBUTE_CACHE_MODE_CA],
  ['maxDynamicSharedSizeBytes', FA.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES],
  ['preferredSharedMemoryCarveout', FA.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT],
  ['clusterSizeMustBeSet', FA.CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET],
  ['requiredClusterWidth', FA.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH],
  ['requiredClusterHeight', FA.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT],
  ['requiredClusterDepth', FA.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH],
  ['nonPortableClusterSizeAllowed', FA.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED],
  ['clusterSchedulingPolicyPreference', FA.CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE],
];

/**
 * A kernel of a {@link Module} (from {@link Module.kernel}): its attributes, occupancy, and launch().
 * It keeps its module loaded while it lives. `A` is the tuple of launch arguments (see
 * {@link Module.kernel}); `unknown[]` for a kernel declared without a literal signature.
 * @example
 * ```ts
 * import { DeviceBuffer, LaunchConfig, Program, Stream } from 'cuda-ts/objects';
 *
 * using program = new Program('extern "C" __global__ void inc(int* x) { x[threadIdx.x] += 1; }').compile();
 * using module = program.load();
 * using inc = module.kernel('inc', ['ptr']); // a Kernel<[DevicePointer]>
 * const { blockSize } = inc.maxPotentialBlockSize(); // the occupancy-maximizing block size
 * using stream = Stream.create();
 * using x = DeviceBuffer.from(new Int32Array(blockSize));
 * inc.launch(stream, new LaunchConfig({ grid: 1, block: blockSize }), x);
 * stream.synchronize();
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-unused-vars -- the interface Kernel<A> below types launch(), which the static block installs; A is used there
export class Kernel<A extends readonly unknown[] = unknown[]> extends Resource {
  static {
    // launch.ts checks this brand instead of instanceof (see KERNEL in kernel-args.ts).
    Object.defineProperty(this.prototype, KERNEL, { value: true });
    Object.defineProperty(this.prototype, 'launch', { value: kernelLaunch, writable: true, configurable: true });
  }

  /** The driver handle (CUfunction). */
  readonly handle: drv.CUfunction;
  /** The module the kernel belongs to. */
  readonly module: Module;
  /** The (lowered) name it was looked up by. */
  readonly name: string;
  /** The declared parameter types, frozen; undefined when none was declared. */
  readonly signature: readonly ArgType[] | undefined;
  /** @internal reused argument storage for the declared signature */
  readonly argPack: ArgPack | undefined;
  /** @internal `launch <name>`, made once: error messages of the launch hot path */
  readonly launchLabel: string;
  /** @internal what launch.ts last checked this kernel with (its stream's Core), and the validity count then (-1: none) */
  checkedStream: object | undefined = undefined;
  /** @internal */
  checkedEpoch = -1;

  /** @internal use Module.kernel */
  constructor(seal: Sealed, module: Module, handle: drv.CUfunction, name: string, signature?: readonly ArgType[]) {
    checkSealed(seal, 'Kernel', 'module.kernel()');
    // No native destroy; registering it keeps the module loaded while the kernel lives.
    super('Kernel', () => drv.forgetHandle(handle), [module]);
    this.module = module;
    this.handle = handle;
    this.name = name;
    this.launchLabel = `launch ${name}`;
    this.signature = signature ? Object.freeze(signature.slice()) : undefined;
    this.argPack = signature ? new ArgPack(signature) : undefined;
    if (this.argPack) this.checkLayout(this.argPack);
    drv.noteHandle(handle, 'CUfunction');
  }

  /**
   * The size in bytes of each parameter as the driver reports it (cuFuncGetParamInfo, CUDA 12.4+), or
   * undefined where the driver cannot tell. @internal
   */
  paramSizes(): readonly number[] | undefined {
    if (this.params !== null) return this.params;
    let sizes: number[] | undefined = [];
    try {
      const fn = drv.native('cuFuncGetParamInfo');
      const offset = new BigUint64Array(1);
      const bytes = new BigUint64Array(1);
      drv.bind(this.module.context);
      for (let i = 0; i < 4096; i++) {
        if (fn(this.handle, i, offset, bytes) !== 0) break;
        sizes.push(Number(bytes[0]));
      }
      // An older driver answers nothing (or the kernel truly takes no parameter: then so does the check).
    } catch {
      sizes = undefined; // a driver without cuFuncGetParamInfo: nothing to check against
    }
    this.params = sizes;
    return sizes;
  }
  private params: readonly number[] | undefined | null = null;
  private readonly checkedLayouts = new WeakSet<ArgPack>();

  /** Checks an argument layout against the kernel's parameters (once per layout). @internal */
  checkLayout(pack: ArgPack): void {
    if (this.checkedLayouts.has(pack)) return;
    const sizes = this.paramSizes();
    const types = pack.types;
    if (sizes !== undefined && (sizes.length > 0 || types.length > 0)) {
      const label = this.signature ? `kernel ${this.name}` : `launch ${this.name}`;
      if (sizes.length !== types.length) {
        throw new TypeError(
          `${label} takes ${sizes.length} parameter(s) (${sizes.map((b) => `${b} bytes`).join(', ')}) but ${this.signature ? 'the signature declares' : 'was given'} ${types.length}`,
        );
      }
      types.forEach((t, i) => {
        const want = typeof t === 'string' ? SIZES[t] : t.struct;
        if (sizes[i] !== want)
          throw new TypeError(
            `${label}: parameter ${i} is ${sizes[i]} bytes but ${this.signature ? 'the signature declares' : 'was given'} ${describeType(t)} (${want} bytes)`,
          );
      });
    }
    this.checkedLayouts.add(pack);
  }

  /** @internal returns the context to bind */
  check(): Context {
    this.assertOpen();
    return this.module.check();
  }

  /**
   * Reads a kernel attribute (cuFuncGetAttribute).
   * @param attr Which attribute to read, a `CUfunction_attribute` value (exported by name from cuda-ts/objects).
   */
  attribute(attr: drv.CUfunction_attribute): number {
    const ctx = this.check();
    if (!Number.isInteger(attr) || attr < 0 || attr >= FA.CU_FUNC_ATTRIBUTE_MAX)
      throw new RangeError(`Kernel.attribute: attr must be a CUfunction_attribute, got ${describe(attr)}`);
    drv.call(ctx, 'cuFuncGetAttribute', drv.out32, attr, this.handle);
    return drv.out32[0];
  }

  /**
   * Sets a kernel attribute (cuFuncSetAttribute).
   * @param attr A settable `CUfunction_attribute`, e.g. CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
   * @param value The value, in the attribute's unit (bytes, percent, blocks).
   */
  setAttribute(attr: drv.CUfunction_attribute, value: number): void {
    const ctx = this.check();
    if (!Number.isInteger(attr) || attr < 0 || attr >= FA.CU_FUNC_ATTRIBUTE_MAX)
      throw new RangeError(`Kernel.setAttribute: attr must be a CUfunction_attribute, got ${describe(attr)}`);
    if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) > 0x7fffffff)
      throw new RangeError(`Kernel.setAttribute: value must be a 32-bit integer, got ${describe(value)}`);
    drv.call(ctx, 'cuFuncSetAttribute', this.handle, attr, value);
  }

  /** Every attribute at once (one cuFuncGetAttribute each, read now: settable ones can change). */
  get attributes(): KernelAttributes {
    const out: Record<string, number> = {};
    for (const [name, attr] of KERNEL_ATTRIBUTES) out[name] = this.attribute(attr);
    return Object.freeze(out) as unknown as KernelAttributes;
  }

  /** The largest block size this kernel can be launched with. */
  get maxThreadsPerBlock(): number {
    return this.attribute(FA.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  }
  /** Registers used per thread. */
  get numRegisters(): number {
    return this.attribute(FA.CU_FUNC_ATTRIBUTE_NUM_REGS);
  }
  /** Statically allocated shared memory per block, in bytes. */
  get staticSharedBytes(): number {
    return this.attribute(FA.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  }
  /** Local memory per thread, in bytes. */
  get localBytes(): number {
    return this.attribute(FA.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  }
  /**
   * Allows up to `bytes` of dynamic shared memory (above the 48 KiB default).
   * @param bytes Dynamic shared memory per block, in bytes (up to the device's opt-in limit).
   */
  set maxDynamicSharedBytes(bytes: number) {
    positive('Kernel.maxDynamicSharedBytes', bytes, 0);
    this.setAttribute(FA.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
  }

  /**
   * Resident blocks per multiprocessor at `blockSize` threads and `dynamicSharedBytes`.
   * @param blockSize Threads per block.
   * @param dynamicSharedBytes Dynamic shared memory per block, in bytes (default 0).
   */
  maxActiveBlocksPerMultiprocessor(blockSize: number, dynamicSharedBytes = 0): number {
    const ctx = this.check();
    positive('Kernel.maxActiveBlocksPerMultiprocessor: blockSize', blockSize, 1);
    positive('Kernel.maxActiveBlocksPerMultiprocessor: dynamicSharedBytes', dynamicSharedBytes, 0);
    drv.call(ctx, 'cuOccupancyMaxActiveBlocksPerMultiprocessor', drv.out32, this.handle, blockSize, dynamicSharedBytes);
    return drv.out32[0];
  }

  /**
   * The block size that maximizes occupancy, and the smallest grid that fills the device with it.
   * @param dynamicSharedBytes Dynamic shared memory per block, in bytes (default 0).
   * @param blockSizeLimit The largest block size to consider (default 0: no limit but the kernel's).
   */
  maxPotentialBlockSize(dynamicSharedBytes = 0, blockSizeLimit = 0): { minGridSize: number; blockSize: number } {
    const ctx = this.check();
    positive('Kernel.maxPotentialBlockSize: dynamicSharedBytes', dynamicSharedBytes, 0);
    positive('Kernel.maxPotentialBlockSize: blockSizeLimit', blockSizeLimit, 0);
    const block = new Int32Array(1);
    drv.call(ctx, 'cuOccupancyMaxPotentialBlockSize', drv.out32, block, this.handle, null, dynamicSharedBytes, blockSizeLimit);
    return { minGridSize: drv.out32[0], blockSize: block[0] };
  }

  /**
   * The most clusters of `config.cluster` blocks that can be co-resident on the device at once
   * (cuOccupancyMaxActiveClusters), for launches of this kernel with `config` (which must set `cluster`,
   * unless the kernel was compiled with a required cluster size).
   * @param config The launch configuration, with `cluster` set (unless the kernel was compiled with a required cluster size).
   */
  maxActiveClusters(config: LaunchConfig | LaunchConfigInit): number {
    const ctx = this.check();
    const cfg = config instanceof LaunchConfig ? config : new LaunchConfig(config);
    drv.call(ctx, 'cuOccupancyMaxActiveClusters', drv.out32, this.handle, cfg.ex.bytes);
    return drv.out32[0];
  }
}

// Kernel.launch's type, merged into the class: its implementation (kernelLaunch, put on the prototype by
// the class's static block) takes up to four arguments as parameters, which a method of this type cannot
// declare (a rest parameter would be an array made per launch; see launch() in launch.ts).
export interface Kernel<A extends readonly unknown[] = unknown[]> {
  /**
   * `kernel.launch(stream, config, ...args)` — same as `launch(stream, config, kernel, ...args)`.
   * @param stream The stream to launch on (undefined: the legacy default stream).
   * @param config Grid, block, shared memory and launch attributes: a LaunchConfig or the object one is made from.
   * @param args The kernel's arguments, in order: DeviceBuffers (or addresses) for pointers, numbers or bigints for scalars.
   */
  launch(stream: StreamLike | undefined, config: LaunchConfig | LaunchConfigInit, ...args: A): void;
}
// held in a module constant: an imported name is read off its module object at each use (a getter call
// in tsx's and esbuild's CommonJS)
const launchFewArgs = launchFew;
function kernelLaunch(
  this: Kernel,
  stream: StreamLike | undefined,
  config: LaunchConfig | LaunchConfigInit,
  a0?: unknown,
  a1?: unknown,
  a2?: unknown,
  a3?: unknown,
): void {
  const n = arguments.length - 2;
  // eslint-disable-next-line prefer-rest-params
  if (n > 4) launchArgs(stream, config, this, Array.prototype.slice.call(arguments, 2), 0);
  else launchFewArgs(stream, config, this, n, a0, a1, a2, a3);
}

function positive(where: string, v: unknown, min: number): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > 0x7fffffff)
    throw new RangeError(`${where} must be an integer from ${min} to 2^31 - 1, got ${describe(v)}`);
}
