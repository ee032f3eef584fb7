// Context: the primary context of a device (retained once, shared) or a created one. Binding to the
// calling thread is cheap: cuCtxGetCurrent through a preallocated slot, cuCtxSetCurrent only when it
// differs. A sticky device error (illegal address, …) marks the context unusable.
import * as cu from '../generated/13.0/driver';
import * as raw from '../generated/13.0/driver/raw';
import { CudaError } from './runtime';
import { Resource, assertMayBlock } from './lifecycle';


let initialised = false;
/** cuInit(0), once. */
export function init(): void {
  if (initialised) return;
  cu.cuInit(0);
  initialised = true;
}

/** Status codes after which a context cannot be used again (the device state is corrupt). */
export const STICKY_ERRORS: ReadonlySet<number> = new Set([
  cu.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS,
  cu.CUresult.CUDA_ERROR_LAUNCH_TIMEOUT,
  cu.CUresult.CUDA_ERROR_HARDWARE_STACK_ERROR,
  cu.CUresult.CUDA_ERROR_ILLEGAL_INSTRUCTION,
  cu.CUresult.CUDA_ERROR_MISALIGNED_ADDRESS,
  cu.CUresult.CUDA_ERROR_INVALID_ADDRESS_SPACE,
  cu.CUresult.CUDA_ERROR_INVALID_PC,
  cu.CUresult.CUDA_ERROR_LAUNCH_FAILED,
]);

/** Thrown by any call on a context that a sticky device error made unusable. */
export class ContextUnusableError extends CudaError {
  /** The sticky error that made the context unusable. */
  readonly cause: CudaError;
  /** Made by the objects layer from the sticky error; there is no need to construct it. */
  constructor(cause: CudaError) {
    super('objects', cause.func, cause.code, cause.name);
    this.message = `the CUDA context is unusable after a sticky device error (${cause.message}); the process must create a new context or restart`;
    this.cause = cause;
  }
}

const INVALID_CONTEXT: number = cu.CUresult.CUDA_ERROR_INVALID_CONTEXT;
const INVALID_HANDLE: number = cu.CUresult.CUDA_ERROR_INVALID_HANDLE;
const CONTEXT_IS_DESTROYED: number = cu.CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED;

const currentSlot = new BigUint64Array(1);
function currentHandle(): number {
  const status = raw.cuCtxGetCurrent(currentSlot);
  if (status !== 0) throw new cu.DriverError('cuCtxGetCurrent', status);
  return Number(currentSlot[0]);
}

/**
 * The context this module last saw or made current on this thread (JS code of one isolate runs on one
 * thread). A hint for hot paths only: native code (the runtime API, another library) can change the
 * current context behind it, so it is trusted only by operations that fail cleanly when it is wrong
 * (see Context.bindHint) and re-checked with cuCtxGetCurrent everywhere else.
 */
let lastBound: Context | undefined;

const known = new Map<number, WeakRef<Context>>();

/** Drops what this module remembers of a context being destroyed. */
function forget(handle: number): void {
  known.delete(handle);
  if (lastBound?.handle === handle) lastBound = undefined;
}
const primaries = new Map<number, Context>();

/**
 * A CUDA context (CUcontext): a device's primary context (Context.primary, retained once per process and
 * shared with the runtime API and NCCL), a created one (Context.create), or a foreign one wrapped by
 * Context.current. Methods make it current on the calling thread as needed. After a sticky device error
 * (see STICKY_ERRORS) every call on it throws ContextUnusableError. close() releases a primary context,
 * destroys a created one, and does nothing to a wrapped one.
 */
export class Context extends Resource {
  /** The driver handle (CUcontext). */
  readonly handle: cu.CUcontext;
  /** Device ordinal. */
  readonly device: number;
  /** True for a device's primary context (see {@link Context.primary}). */
  readonly primary: boolean;
  /** The sticky error that made this context unusable, if any. */
  unusable: CudaError | undefined;

  private constructor(handle: cu.CUcontext, device: number, primary: boolean, destroy: (() => void) | undefined) {
    super(primary ? 'Context (primary)' : 'Context', destroy);
    this.handle = handle;
    this.device = device;
    this.primary = primary;
    known.set(handle, new WeakRef(this));
  }

  /** The primary context of device `ordinal` (retained once per process, shared). */
  static primary(ordinal = 0): Context {
    init();
    const hit = primaries.get(ordinal);
    if (hit && !hit.closed) return hit;
    const dev = cu.cuDeviceGet(ordinal);
    const handle = cu.cuDevicePrimaryCtxRetain(dev);
    // A primary context released to zero and retained again keeps its handle, while the thread still
    // holds the destroyed one as current: "compare before set" would then skip the set. Refresh it.
    if (currentHandle() === handle) cu.cuCtxSetCurrent(handle);
    const ctx = new Context(handle, ordinal, true, () => {
      primaries.delete(ordinal);
      forget(handle);
      cu.cuDevicePrimaryCtxRelease(dev);
    });
    primaries.set(ordinal, ctx);
    return ctx;
  }

  /**
   * Creates a new context on device `ordinal` (cuCtxCreate, with `flags`: CUctx_flags, default 0) and
   * makes it current. It owns its memory and modules; close() destroys it.
   */
  static create(ordinal = 0, flags = 0): Context {
    init();
    const dev = cu.cuDeviceGet(ordinal);
    const handle = cu.cuCtxCreate(null, flags, dev);
    const ctx = new Context(handle, ordinal, false, () => {
      forget(handle);
      assertMayBlock('Context.close()');
      cu.cuCtxDestroy(handle);
    });
    lastBound = ctx; // cuCtxCreate made it current
    return ctx;
  }

  /**
   * The context current on this thread. With none current, device 0's primary context is made current
   * (what the runtime API does). A context created elsewhere is wrapped without owning it.
   */
  static current(): Context {
    init();
    const h = currentHandle();
    if (h !== 0) {
      const hit = known.get(h)?.deref();
      if (hit && !hit.core.destroyed) return hit;
      const dev = cu.cuCtxGetDevice();
      return new Context(h as cu.CUcontext, dev, false, undefined);
    }
    const ctx = Context.primary(0);
    ctx.bind();
    return ctx;
  }

  /** Makes this context current on the calling thread unless it already is (one cuCtxGetCurrent). */
  bind(): this {
    if (this.core.destroyed) throw new Error(`${this.core.kind} is closed`);
    if (this.unusable) throw new ContextUnusableError(this.unusable);
    if (currentHandle() !== this.handle) cu.cuCtxSetCurrent(this.handle);
    lastBound = this;
    return this;
  }

  /**
   * Binds without asking the driver when this context was the last one bound here. Only for calls
   * that fail (and do nothing) under a wrong current context, such as a launch of a function of this
   * context: on such a failure call `bind()` and retry once (see `retryBound`). @internal
   */
  bindHint(): void {
    if (lastBound !== this || this.core.destroyed || this.unusable) this.bind();
  }

  /** True when `status` may come from a stale bindHint(): the caller re-binds and retries. @internal */
  static staleBinding(status: number): boolean {
    return status === INVALID_CONTEXT || status === INVALID_HANDLE || status === CONTEXT_IS_DESTROYED;
  }

  /**
   * Binds for a free: false (skip the free) once a sticky error made the context unusable, since its
   * memory is gone with it and every free would fail. @internal
   */
  bindForFree(): boolean {
    if (this.unusable) return false;
    if (currentHandle() !== this.handle) cu.cuCtxSetCurrent(this.handle);
    lastBound = this;
    return true;
  }

  /** Blocks until all work in this context is done. Refuses while a JS host callback is pending. */
  synchronize(): void {
    this.assertOpen();
    assertMayBlock('Context.synchronize()');
    this.bind();
    try {
      cu.cuCtxSynchronize();
    } catch (e) {
      throw this.fail(e);
    }
  }

  /** Free and total device memory in bytes, as seen from this context (cuMemGetInfo). */
  memoryInfo(): { free: number; total: number } {
    this.bind();
    return cu.cuMemGetInfo();
  }

  /** Records a sticky error (marking the context unusable) and returns the error to throw. */
  fail(e: unknown): unknown {
    if (e instanceof CudaError && STICKY_ERRORS.has(e.code) && !this.unusable) this.unusable = e;
    return e;
  }

  /** Throws if closed or unusable. */
  check(): void {
    this.assertOpen();
    if (this.unusable) throw new ContextUnusableError(this.unusable);
  }
}

/**
 * Runs a driver call on a handle that carries its context (a created stream, an event, a function),
 * which fails and does nothing under a wrong current context: under the cached binding first, and
 * once more after a real bind when the status says the cache was stale. Returns the status. @internal
 */
export function callBound(ctx: Context, call: () => number): number {
  ctx.bindHint();
  const status = call();
  if (status === 0 || !Context.staleBinding(status)) return status;
  ctx.bind();
  return call();
}

/**
 * callBound for a call on stream `h`. The NULL, legacy and per-thread default streams (handles 0, 1,
 * 2) belong to whichever context is current, so a call on one binds for real first. @internal
 */
export function callOnStream(ctx: Context, h: number, call: () => number): number {
  if (h > 2) return callBound(ctx, call);
  ctx.bind();
  return call();
}

/** The context to use when none is given: the current one (device 0's primary if none). */
export function contextOf(ctx: Context | undefined): Context {
  return ctx ?? Context.current();
}
