// Context: the primary context of a device (retained once, shared) or a created one. Binding to the
// calling thread, sticky-error marking and every driver call go through the door (driver.ts).
import { koffi } from '../support';
import * as drv from './driver';
import { ContextUnusableError, STICKY_ERRORS } from './driver';
import type { CudaError } from '../support';
import { Resource, assertMayBlock } from './lifecycle';
import { dropContextCache } from './memory/allocator';
import { dropStaging } from './memory/staging';
import { checkKeys, describe } from './describe';
import { OBJECTS_ERROR, ObjectsError } from './errors';
import { SEALED, type Sealed, checkSealed } from './sealed';

export { ContextUnusableError, STICKY_ERRORS };

let initialised = false;
/** cuInit(0), once. */
export function init(): void {
  if (initialised) return;
  drv.global('cuInit', 0);
  initialised = true;
}

const known = new Map<number, WeakRef<Context>>();
const primaries = new Map<number, Context>();

/** The CUdevice of ordinal `ordinal` (RangeError for a bad ordinal, before the driver). */
export function deviceHandle(ordinal: number): number {
  if (!Number.isSafeInteger(ordinal) || ordinal < 0) throw new RangeError(`device ordinal must be a non-negative integer, got ${String(ordinal)}`);
  init();
  drv.global('cuDeviceGet', drv.out32, ordinal);
  return drv.out32[0];
}

/**
 * A CUDA context (CUcontext): a device's primary context (Context.primary, retained once per process and
 * shared with the runtime API and NCCL), a created one (Context.create), or a foreign one wrapped by
 * Context.current. Methods make it current on the calling thread as needed. After a sticky device error
 * (see STICKY_ERRORS) every call on it throws ContextUnusableError: the process must exit to recover.
 * close() releases a primary context, destroys a created one, and does nothing to a wrapped one.
 * @example
 * ```ts
 * import { Context, DeviceBuffer } from 'cuda-ts/objects';
 *
 * // A context of its own on device 0 (most programs use the primary one: Device.get(0).setCurrent()).
 * using ctx = Context.create(0); // made current on this thread
 * using scratch = DeviceBuffer.alloc(64 << 20); // allocated in the current context: ctx
 * const { free, total } = ctx.memoryInfo();
 * const gib = (bytes: number) => (bytes / 2 ** 30).toFixed(1);
 * console.log(`${ctx}: ${gib(free)} of ${gib(total)} GiB free, ${scratch.byteLength} bytes held`);
 * ctx.synchronize();
 * ```
 */
export class Context extends Resource {
  // structurally a drv.Bindable (what the door needs of a context)
  /** The driver handle (CUcontext). */
  readonly handle: drv.CUcontext;
  /** Device ordinal. */
  readonly device: number;
  /** True for a device's primary context (see {@link Context.primary}). */
  readonly primary: boolean;
  /** The sticky error that made this context unusable, if any. */
  unusable: CudaError | undefined;
  /** @internal the stream-ordered caching allocator's state for this context (see allocator.ts) */
  allocCache: unknown = undefined;

  private constructor(seal: Sealed, handle: drv.CUcontext, device: number, primary: boolean, destroy: (() => void) | undefined, kind?: string) {
    checkSealed(seal, 'Context', 'Context.primary() or Context.create()');
    super(kind ?? (primary ? 'Context (primary)' : 'Context'), destroy);
    this.handle = handle;
    this.device = device;
    this.primary = primary;
    known.set(handle, new WeakRef(this));
    drv.remember(this);
  }

  /**
   * The primary context of device `ordinal` (retained once per process, shared).
   * @param ordinal The device's 0-based ordinal; default 0.
   */
  static primary(ordinal = 0): Context {
    const hit = primaries.get(ordinal);
    if (hit && !hit.closed) return hit;
    const dev = deviceHandle(ordinal);
    drv.global('cuDevicePrimaryCtxRetain', drv.out64, dev);
    const handle = drv.outNumber() as drv.CUcontext;
    // A primary context released to zero and retained again keeps its handle, while the thread still
    // holds the destroyed one as current: "compare before set" would then skip the set. Refresh it.
    if (drv.currentContextHandle() === handle) drv.setCurrentHandle(handle);
    const ctx = new Context(SEALED, handle, ordinal, true, () => {
      primaries.delete(ordinal);
      known.delete(handle);
      dropStaging(ctx); // pinned staging chunks, freed while the context still lives
      dropContextCache(handle, false); // the driver frees the context's memory with it
      drv.forget(handle);
      // the last release destroys the context, which waits for CUDA's callback thread: refuse, as
      // cuCtxDestroy does below, while a JS host callback pending there needs this thread
      assertMayBlock('Context.close()');
      drv.global('cuDevicePrimaryCtxRelease', dev);
    });
    primaries.set(ordinal, ctx);
    return ctx;
  }

  /**
   * Creates a new context on device `ordinal` (cuCtxCreate, with `flags`: CUctx_flags, default 0) and
   * makes it current. It owns its memory and modules; close() destroys it.
   *
   * `options.smCount` asks for execution affinity: the context's work uses at most that many SMs
   * (CU_EXEC_AFFINITY_TYPE_SM_COUNT; the driver may round up). Only where the device supports it
   * (under MPS, see {@link Context.executionAffinitySupported}); elsewhere it throws an Error saying so.
   * Green contexts (GreenContext) partition SMs without MPS.
   * @param ordinal The device's 0-based ordinal; default 0.
   * @param flags CUctx_flags bits OR-ed together (a 32-bit unsigned integer), e.g. the scheduling policy; default 0 (the driver's automatic choice).
   * @param options `smCount`: the most SMs the context's work may use (a positive integer; needs MPS). Default `{}`.
   */
  static create(ordinal = 0, flags = 0, options: { smCount?: number } = {}): Context {
    if (!Number.isInteger(flags) || flags < 0 || flags > 0xffffffff)
      throw new RangeError(`Context.create: flags must be a 32-bit unsigned integer, got ${String(flags)}`);
    if (typeof options !== 'object' || options === null) throw new TypeError(`Context.create: options must be an object, got ${describe(options)}`);
    checkKeys('Context.create', options, ['smCount']);
    const sm = options.smCount;
    if (sm !== undefined && (typeof sm !== 'number' || !Number.isInteger(sm) || sm < 1 || sm > 0xffffffff))
      throw new RangeError(`Context.create: smCount must be a positive integer, got ${describe(sm)}`);
    const dev = deviceHandle(ordinal);
    let params: Uint8Array | null = null;
    let affinity: Uint8Array | undefined;
    if (sm !== undefined) {
      if (!Context.executionAffinitySupported(ordinal))
        throw new ObjectsError(
          'Context.create',
          OBJECTS_ERROR.unavailable,
          `device ${ordinal} does not support execution affinity by SM count here (it needs MPS); use a GreenContext to partition SMs`,
        );
      affinity = new Uint8Array(8); // CUexecAffinityParam { type, param.smCount.val }
      const a = new DataView(affinity.buffer);
      a.setInt32(0, drv.CUexecAffinityType.CU_EXEC_AFFINITY_TYPE_SM_COUNT, true);
      a.setUint32(4, sm, true);
      params = new Uint8Array(24); // CUctxCreateParams { execAffinityParams, numExecAffinityParams, cigParams }
      const p = new DataView(params.buffer);
      p.setBigUint64(0, BigInt(koffi.address(affinity.buffer)), true);
      p.setInt32(8, 1, true);
    }
    drv.global('cuCtxCreate', drv.out64, params, flags, dev);
    void affinity; // kept reachable until the call returned
    const handle = drv.outNumber() as drv.CUcontext;
    const ctx = new Context(SEALED, handle, ordinal, false, () => {
      known.delete(handle);
      dropStaging(ctx);
      dropContextCache(handle, false);
      drv.forget(handle);
      assertMayBlock('Context.close()');
      drv.global('cuCtxDestroy', handle);
    });
    drv.noteBound(ctx); // cuCtxCreate made it current
    return ctx;
  }

  /**
   * True when contexts of device `ordinal` can be created with an SM-count execution affinity (cuDeviceGetExecAffinitySupport).
   * @param ordinal The device's 0-based ordinal; default 0.
   */
  static executionAffinitySupported(ordinal = 0): boolean {
    const dev = deviceHandle(ordinal);
    drv.global('cuDeviceGetExecAffinitySupport', drv.out32, drv.CUexecAffinityType.CU_EXEC_AFFINITY_TYPE_SM_COUNT, dev);
    return drv.out32[0] !== 0;
  }

  /** The SM count this context's work may use (cuCtxGetExecAffinity): the device's, unless created with `smCount`. */
  get executionAffinity(): { smCount: number } {
    this.check();
    const out = new Uint8Array(8);
    drv.call(this, 'cuCtxGetExecAffinity', out, drv.CUexecAffinityType.CU_EXEC_AFFINITY_TYPE_SM_COUNT);
    return { smCount: new DataView(out.buffer).getUint32(4, true) };
  }

  /**
   * Wraps the CUcontext of a green context (cuCtxFromGreenCtx); `destroy` destroys the green context
   * once this wrapper is closed and nothing depends on it any more. @internal use GreenContext
   */
  static fromGreen(handle: drv.CUcontext, device: number, destroy: () => void): Context {
    const ctx = new Context(
      SEALED,
      handle,
      device,
      false,
      () => {
        known.delete(handle);
        dropStaging(ctx);
        dropContextCache(handle, false);
        drv.forget(handle);
        // Leave no thread pointing at a destroyed context: the next Context.current() falls back to the primary.
        if (drv.currentContextHandle() === handle) drv.setCurrentHandle(0);
        destroy();
      },
      'Context (green)',
    );
    return ctx;
  }

  /**
   * The context current on this thread. With none current, device 0's primary context is made current
   * (what the runtime API does). A context created elsewhere is wrapped without owning it.
   */
  static current(): Context {
    init();
    const h = drv.currentContextHandle();
    if (h !== 0) {
      const hit = known.get(h)?.deref();
      if (hit && !hit.core.destroyed) return hit;
      drv.global('cuCtxGetDevice', drv.out32);
      return new Context(SEALED, h as drv.CUcontext, drv.out32[0], false, undefined);
    }
    const ctx = Context.primary(0);
    ctx.bind();
    return ctx;
  }

  /** Makes this context current on the calling thread unless it already is (one cuCtxGetCurrent). */
  bind(): this {
    drv.bind(this);
    return this;
  }

  /**
   * Binds for a destroy or free made by a module that calls another library (NCCL): false (skip the
   * free) once a sticky error made the context unusable, since its memory is gone with it. @internal
   */
  bindForFree(): boolean {
    return drv.bindForRelease(this);
  }

  /** Blocks until all work in this context is done. Refuses while a JS host callback is pending. */
  synchronize(): void {
    this.assertOpen();
    assertMayBlock('Context.synchronize()');
    drv.call(this, 'cuCtxSynchronize');
  }

  /**
   * Free and total device memory in bytes, as seen from this context (cuMemGetInfo), and `cached`: the
   * bytes the caching allocator keeps for reuse in this context (counted as used by the driver, given
   * back by CachingAllocator.trim(), MemoryPool.trim() of the device's pool, or any allocation that would
   * otherwise run out of memory).
   */
  memoryInfo(): { free: number; total: number; cached: number } {
    this.assertOpen();
    drv.call(this, 'cuMemGetInfo', drv.out64, drv.out64b);
    const cached = (this.allocCache as { cached?: number } | undefined)?.cached ?? 0;
    return { free: drv.outNumber(0), total: Number(drv.out64b[0]), cached };
  }

  /**
   * Records a sticky error (marking the context unusable) and returns the error to throw.
   * @param e The error a call in this context threw; a sticky one (STICKY_ERRORS) marks the context unusable.
   */
  fail(e: unknown): unknown {
    return drv.mark(this, e);
  }

  /** Throws if closed or unusable. */
  check(): void {
    this.assertOpen();
    if (this.unusable) throw new ContextUnusableError(this.unusable, this.device);
  }

  toString(): string {
    return `${this.core.kind}(device ${this.device}, 0x${this.handle.toString(16)})`;
  }
}

/** True for a Context (the check public entries make of a `context` option). */
export function isContext(v: unknown): v is Context {
  return v instanceof Context;
}

/**
 * The context to use: `ctx` when given (TypeError naming `where` when it is not a Context), else the
 * current one (device 0's primary if none).
 */
export function contextOf(ctx: unknown, where = 'context'): Context {
  if (ctx === undefined) return Context.current();
  if (!(ctx instanceof Context)) throw new TypeError(`${where} must be a Context, got ${describe(ctx)}`);
  return ctx;
}
