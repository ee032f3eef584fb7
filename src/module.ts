// Module (PTX, CUBIN, fatbin, file) and Kernel (attributes, occupancy, launch with a declared signature).
import { isArrayBuffer, isUint8Array } from './runtime';
import { readFileSync } from 'node:fs';
import koffi from 'koffi';
import * as cu from '../generated/13.0/driver';
import * as raw from '../generated/13.0/driver/raw';
import { Context, contextOf } from './context';
import { Resource, whenNoHostFuncs } from './lifecycle';
import { ArgPack, launchArgs, type ArgType, type LaunchConfig, type LaunchConfigInit } from './launch';
import type { StreamLike } from './stream';

const FA = cu.CUfunction_attribute;

/** A module image failed to load (a PTX JIT error carries the JIT log). */
export class ModuleLoadError extends cu.DriverError {
  /** The JIT error log ('' when there is none); also appended to the message. */
  readonly log: string;
  /** Made by {@link Module.load} from the cuModuleLoadDataEx status and the JIT log. */
  constructor(code: number, log: string) {
    super('cuModuleLoadDataEx', code);
    this.log = log;
    if (log) this.message += `\n${log}`;
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
 */
export class Module extends Resource {
  /** The driver handle (CUmodule). */
  readonly handle: cu.CUmodule;
  /** The context the module is loaded in. */
  readonly context: Context;

  private constructor(handle: cu.CUmodule, context: Context) {
    super('Module', () => whenNoHostFuncs(() => {
      if (!context.bindForFree()) return;
      cu.cuModuleUnload(handle);
    }), [context]);
    this.handle = handle;
    this.context = context;
  }

  /** Loads a PTX, CUBIN or fatbin image (strings are PTX). JIT errors carry the JIT log. */
  static load(image: string | Uint8Array | ArrayBuffer, options: ModuleOptions = {}): Module {
    const ctx = contextOf(options.context);
    ctx.check();
    ctx.bind();
    const data = typeof image === 'string' ? nulTerminated(image) : isArrayBuffer(image) ? new Uint8Array(image) : image;
    if (!(isUint8Array(data))) throw new TypeError('Module.load expects PTX text, or CUBIN/fatbin bytes (Uint8Array/ArrayBuffer)');
    if (data.byteLength === 0) throw new RangeError('Module.load: empty image');
    const log = new Uint8Array(LOG_BYTES);
    const opts = new Int32Array([cu.CUjit_option.CU_JIT_ERROR_LOG_BUFFER, cu.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]);
    const values = new BigUint64Array([koffi.address(log.buffer) + BigInt(log.byteOffset), BigInt(LOG_BYTES)]);
    const out = new BigUint64Array(1);
    const status = raw.cuModuleLoadDataEx(out, data, 2, opts, values);
    if (status !== 0) {
      const end = log.indexOf(0);
      throw ctx.fail(new ModuleLoadError(status, Buffer.from(log.subarray(0, end < 0 ? LOG_BYTES : end)).toString('utf8').trim()));
    }
    return new Module(Number(out[0]) as cu.CUmodule, ctx);
  }

  /** Loads PTX text (JIT-compiled for the context's device). */
  static fromPTX(ptx: string, options?: ModuleOptions): Module {
    if (typeof ptx !== 'string') throw new TypeError('fromPTX expects PTX text');
    return Module.load(ptx, options);
  }

  /** Loads CUBIN bytes. */
  static fromCubin(cubin: Uint8Array | ArrayBuffer, options?: ModuleOptions): Module {
    return Module.load(cubin, options);
  }

  /** Loads a fatbin (the driver picks the image for the device). */
  static fromFatbin(fatbin: Uint8Array | ArrayBuffer, options?: ModuleOptions): Module {
    return Module.load(fatbin, options);
  }

  /** Loads a .ptx, .cubin or .fatbin file. */
  static fromFile(path: string, options?: ModuleOptions): Module {
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
   * launches validate and pack arguments without allocating.
   */
  kernel(name: string, signature?: readonly ArgType[]): Kernel {
    this.check();
    this.context.bind();
    const fn = cu.cuModuleGetFunction(this.handle, name);
    return new Kernel(this, fn, name, signature);
  }

  /** A module-scope `__device__` variable: its address and size. */
  global(name: string): { ptr: cu.CUdeviceptr; bytes: number } {
    this.check();
    this.context.bind();
    const { dptr, bytes } = cu.cuModuleGetGlobal(this.handle, name);
    return { ptr: dptr, bytes };
  }
}

/**
 * A kernel of a {@link Module} (from {@link Module.kernel}): its attributes, occupancy, and launch().
 * It keeps its module loaded while it lives.
 */
export class Kernel extends Resource {
  /** The driver handle (CUfunction). */
  readonly handle: cu.CUfunction;
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

  /** @internal use Module.kernel */
  constructor(module: Module, handle: cu.CUfunction, name: string, signature?: readonly ArgType[]) {
    // No native destroy; registering it keeps the module loaded while the kernel lives.
    super('Kernel', () => undefined, [module]);
    this.module = module;
    this.handle = handle;
    this.name = name;
    this.launchLabel = `launch ${name}`;
    this.signature = signature ? Object.freeze(signature.slice()) : undefined;
    this.argPack = signature ? new ArgPack(signature) : undefined;
    if (signature) this.verifySignature();
  }

  private verifySignature(): void {
    // cuFuncGetParamInfo (CUDA 12.4+) tells the real parameter count and sizes: catch a wrong signature early.
    const off = new BigUint64Array(1);
    const size = new BigUint64Array(1);
    const sig = this.signature!;
    let count = 0;
    try {
      for (; count < 1024; count++) {
        const status = raw.cuFuncGetParamInfo(this.handle, count, off, size);
        if (status !== 0) break;
        if (count < sig.length) {
          const t = sig[count];
          const want = typeof t === 'string' ? { ptr: 8, i8: 1, u8: 1, i16: 2, u16: 2, i32: 4, u32: 4, i64: 8, u64: 8, f32: 4, f64: 8 }[t] : t.struct;
          if (Number(size[0]) !== want) throw new TypeError(`kernel ${this.name}: parameter ${count} is ${Number(size[0])} bytes but the signature declares ${typeof t === 'string' ? t : `struct(${t.struct})`}`);
        }
      }
    } catch (e) {
      if (e instanceof TypeError) throw e;
      return; // an older driver without cuFuncGetParamInfo: trust the signature
    }
    if (count > 0 && count !== sig.length) throw new TypeError(`kernel ${this.name} takes ${count} parameter(s) but the signature declares ${sig.length}`);
  }

  /** @internal returns the context to bind */
  check(): Context {
    this.assertOpen();
    return this.module.check();
  }

  /** Reads a kernel attribute (cuFuncGetAttribute). */
  attribute(attr: cu.CUfunction_attribute): number {
    this.check().bind();
    return cu.cuFuncGetAttribute(attr, this.handle);
  }

  /** Sets a kernel attribute (cuFuncSetAttribute). */
  setAttribute(attr: cu.CUfunction_attribute, value: number): void {
    this.check().bind();
    cu.cuFuncSetAttribute(this.handle, attr, value);
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
  /** Allows up to `bytes` of dynamic shared memory (above the 48 KiB default). */
  set maxDynamicSharedBytes(bytes: number) {
    this.setAttribute(FA.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
  }

  /** Resident blocks per multiprocessor at `blockSize` threads and `dynamicSharedBytes`. */
  maxActiveBlocksPerMultiprocessor(blockSize: number, dynamicSharedBytes = 0): number {
    this.check().bind();
    const out = new Int32Array(1);
    cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(out, this.handle, blockSize, dynamicSharedBytes);
    return out[0];
  }

  /** The block size that maximizes occupancy, and the smallest grid that fills the device with it. */
  maxPotentialBlockSize(dynamicSharedBytes = 0, blockSizeLimit = 0): { minGridSize: number; blockSize: number } {
    this.check().bind();
    return cu.cuOccupancyMaxPotentialBlockSize(this.handle, null, dynamicSharedBytes, blockSizeLimit);
  }

  /** `kernel.launch(stream, config, ...args)` — same as `launch(stream, config, kernel, ...args)`. */
  launch(stream: StreamLike | undefined, config: LaunchConfig | LaunchConfigInit, ...args: unknown[]): void {
    launchArgs(stream, config, this, args, 0);
  }
}
