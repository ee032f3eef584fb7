// The one door from the objects layer to the CUDA driver. It binds the release the objects layer is
// written against (named in src/releases.ts, with every other library's) and owns, for every driver
// call made by src/:
//   - resolving the C function (once, at that release's ABI, through the generated binding table);
//   - binding the call's context to the calling thread (a real bind, or the cached binding with one
//     retry after a real bind when the status says the cache was stale);
//   - turning a failing status into a DriverError, and marking the context unusable when the status is
//     a sticky device error: every call goes through `fail`, so no call site can forget it.
// Calls go through the helpers below (global, call, callAndWait, allocate, callHinted, callOnStream,
// query, release, globalStatus). THE one exception is the hot path (kernel launch, stream-ordered alloc/free, stream
// sync): it holds the C function from {@link native} and calls it under bindHinted/rebindIfStale,
// passing a failure to {@link fail} itself, because a helper's rest arguments and closure cost more
// than the call does there.
// No other file of src/ takes the driver bindings from src/releases.ts (test/door.test.ts checks it);
// they get types, enums and constants from here too.
import { DriverError, driverBinder as binder, CUresult, DRIVER_RELEASE } from './releases';
import { CudaError, type NativeFunction } from '../support';
import { ClosedObjectError } from './errors';
import { invalidate } from './validity';

// The driver's types, enums and constants at the bound release (src/releases.ts re-exports the
// generated driver types module; the rest it names is for the door and for the other libraries' users).
export * from './releases';
export { DriverError, DRIVER_RELEASE };

/** Status codes after which a context cannot be used again (the device state is corrupt). */
export const STICKY_ERRORS: ReadonlySet<number> = new Set([
  CUresult.CUDA_ERROR_ILLEGAL_ADDRESS,
  CUresult.CUDA_ERROR_LAUNCH_TIMEOUT,
  CUresult.CUDA_ERROR_HARDWARE_STACK_ERROR,
  CUresult.CUDA_ERROR_ILLEGAL_INSTRUCTION,
  CUresult.CUDA_ERROR_MISALIGNED_ADDRESS,
  CUresult.CUDA_ERROR_INVALID_ADDRESS_SPACE,
  CUresult.CUDA_ERROR_INVALID_PC,
  CUresult.CUDA_ERROR_LAUNCH_FAILED,
]);

/**
 * Thrown by any call on a context that a sticky device error (see {@link STICKY_ERRORS}) made unusable.
 * CUDA cannot recover from such an error inside the process: creating a new context, releasing and
 * retaining the primary context, or resetting it all fail too. The process must exit; a new process
 * can use the device again.
 */
export class ContextUnusableError extends CudaError {
  /** The sticky error that made the context unusable. */
  readonly cause: CudaError;
  /**
   * Made by the objects layer from the sticky error; there is no need to construct it.
   * @param cause The sticky error the driver returned.
   * @param device The ordinal of the context's device, named in the message; omitted when not known.
   */
  constructor(cause: CudaError, device?: number) {
    super('objects', cause.func, cause.code, cause.name);
    const where = device === undefined ? 'the CUDA context' : `the CUDA context of device ${device}`;
    this.message =
      `${where} is unusable after a sticky device error (${cause.message}). CUDA cannot recover from this ` +
      'within the process (a new context or a primary-context reset fail too): exit the process and start a new one to use the device again';
    this.cause = cause;
  }
}

/** What the door needs of a context (the Context class of context.ts implements it). */
export interface Bindable {
  /** The CUcontext handle. */
  readonly handle: number;
  /** Device ordinal. */
  readonly device: number;
  /** The sticky error that made the context unusable, if any. */
  unusable: CudaError | undefined;
  /** Life-cycle state (closed / destroyed) and the kind named in messages. */
  readonly core: { readonly destroyed: boolean; readonly kind: string };
}

// ---------------------------------------------------------------------------------------------
// Functions, resolved once
// ---------------------------------------------------------------------------------------------

const functions = new Map<string, NativeFunction>();

/**
 * The C function `name` at the bound release (resolved on first use, then cached). THE hot-path
 * exception to the door's helpers (see the top of this file): a launch, a stream-ordered alloc/free or
 * a stream sync holds it locally, calls it under {@link bindHinted}/{@link rebindIfStale} (or
 * {@link hinted}) and passes a failing status to {@link fail}. Everything else uses {@link call} and
 * friends.
 */
export function native(name: string): NativeFunction {
  let fn = functions.get(name);
  if (fn === undefined) {
    fn = binder.native(name);
    functions.set(name, fn);
  }
  return fn;
}

/**
 * Test seam: makes `native(name)` return `fn` (undefined: resolve normally again), so that the objects
 * layer's logic can be unit-tested without a driver. @internal
 */
export function provideNative(name: string, fn: NativeFunction | undefined): void {
  if (fn === undefined) functions.delete(name);
  else functions.set(name, fn);
  for (const forget of holders) forget();
}
const holders: (() => void)[] = [];
/** Test seam: `forget` runs whenever provideNative changes a function (for modules that hold what native() resolved). @internal */
export function onProvideNative(forget: () => void): void {
  holders.push(forget);
}

/** Out-parameter slots shared by every call (read them right after the call that fills them). */
export const out64 = new BigUint64Array(4);
/** A second 64-bit slot, for calls with two 64-bit out-parameters. */
export const out64b = new BigUint64Array(1);
/** 32-bit integer out-parameter slots. */
export const out32 = new Int32Array(4);
/** 32-bit float out-parameter slot. */
export const outF32 = new Float32Array(1);
const out64Halves = new Uint32Array(out64.buffer);
/** Slot `i` of {@link out64} as a number (handles and addresses fit in 53 bits), from its 32-bit
 *  halves: Number(out64[i]) makes a BigInt first (~6 ns under V8, ~20 under Bun). */
export function outNumber(i = 0): number {
  return out64Halves[2 * i + 1] * 4294967296 + out64Halves[2 * i];
}

// ---------------------------------------------------------------------------------------------
// Errors: every failing status becomes an error here, marking sticky errors
// ---------------------------------------------------------------------------------------------

/** Contexts by handle, to find the context a context-less call failed in. */
const contexts = new Map<number, WeakRef<Bindable>>();

/** Remembers a context (so a sticky error seen through a call that names none still marks it). */
export function remember(ctx: Bindable): void {
  contexts.set(ctx.handle, new WeakRef(ctx));
  handleKinds.set(ctx.handle, 'CUcontext');
}

/** Handles of objects that are not streams (contexts, events, modules, …), by handle: their kind. */
const handleKinds = new Map<number, string>();
/** Notes that `handle` is a `kind` (CUcontext, CUevent, …) until {@link forgetHandle}: Stream.wrap refuses it. */
export function noteHandle(handle: number, kind: string): void {
  handleKinds.set(handle, kind);
}
/** Forgets a handle noted with {@link noteHandle} (its object was destroyed). */
export function forgetHandle(handle: number): void {
  handleKinds.delete(handle);
}
/** The kind of a noted handle, or undefined. */
export function kindOfHandle(handle: number): string | undefined {
  return handleKinds.get(handle);
}

// Sticky errors by context handle, shared by every copy of cuda-ts in this JS realm (a second copy
// loaded after a require-cache reset, or the CommonJS and ES builds side by side): a copy that never saw
// the error throws it before calling into the dead context, where a blocking wait could hang. Each
// entry names the copy that saw it (`thisCopy`); that copy's own contexts carry the mark themselves.
const STICKY_KEY = Symbol.for('cuda-ts.stickyContexts');
const stickyByHandle = ((globalThis as Record<symbol, unknown>)[STICKY_KEY] ??= new Map()) as Map<number, { error: CudaError; copy: object }>;
const thisCopy = {};

/** The sticky error another copy of cuda-ts saw in context `handle`, if any. */
function stickyElsewhere(handle: number): CudaError | undefined {
  const seen = stickyByHandle.get(handle);
  return seen !== undefined && seen.copy !== thisCopy ? seen.error : undefined;
}
const unusableHooks: ((ctx: Bindable) => void)[] = [];

/** Calls `hook` with a context when a sticky error makes it unusable (stream.ts drops its host functions, which CUDA will never call). */
export function onUnusable(hook: (ctx: Bindable) => void): void {
  unusableHooks.push(hook);
}

/** Records that `e` happened in `ctx`: a sticky error marks it unusable. Returns `e`. */
export function mark<E>(ctx: Bindable | undefined, e: E): E {
  if (e instanceof CudaError && STICKY_ERRORS.has(e.code)) {
    const target = ctx ?? currentBindable();
    if (target !== undefined && target.unusable === undefined) markUnusable(target, e);
  }
  return e;
}

function markUnusable(ctx: Bindable, e: CudaError): void {
  ctx.unusable = e;
  if (!stickyByHandle.has(ctx.handle)) stickyByHandle.set(ctx.handle, { error: e, copy: thisCopy });
  invalidate();
  for (const hook of unusableHooks) hook(ctx);
}

/** The error for `status` from `func` in `ctx` (a DriverError; a sticky one marks the context). */
export function fail(ctx: Bindable | undefined, func: string, status: number): DriverError {
  return mark(ctx, new DriverError(func, status));
}

function currentBindable(): Bindable | undefined {
  if (raw0('cuCtxGetCurrent', out64) !== 0) return undefined;
  return contexts.get(Number(out64[0]))?.deref();
}

function raw0(name: string, a: unknown): number {
  return native(name)(a);
}

// ---------------------------------------------------------------------------------------------
// Context binding
// ---------------------------------------------------------------------------------------------

const currentSlot = new BigUint64Array(1);
const currentHalves = new Uint32Array(currentSlot.buffer);
/** The handle of the context current on this thread (0 when none). */
export function currentContextHandle(): number {
  const status = native('cuCtxGetCurrent')(currentSlot);
  if (status !== 0) throw fail(undefined, 'cuCtxGetCurrent', status);
  return currentHalves[1] * 4294967296 + currentHalves[0]; // as outNumber: no BigInt
}

/** Makes `handle` current on this thread (0: none), bypassing the cache; the cache forgets. */
export function setCurrentHandle(handle: number): void {
  const status = native('cuCtxSetCurrent')(handle);
  if (status !== 0) throw fail(undefined, 'cuCtxSetCurrent', status);
  lastBound = undefined;
}

/**
 * The context the door last made or saw current on this thread (JS of one isolate runs on one
 * thread). A hint only: native code can change the current context behind it, so it is trusted only
 * by calls that fail cleanly under a wrong context (see {@link hinted}).
 */
let lastBound: Bindable | undefined;

/**
 * Throws when `ctx` is destroyed (a ClosedObjectError naming `where`, the calling `Class.method`;
 * default: read from the stack) or unusable (ContextUnusableError).
 */
export function usable(ctx: Bindable, where?: string): void {
  if (ctx.core.destroyed) throw new ClosedObjectError(where, ctx.core.kind);
  if (stickyByHandle.size !== 0 && ctx.unusable === undefined) {
    const e = stickyElsewhere(ctx.handle);
    if (e !== undefined) markUnusable(ctx, e);
  }
  if (ctx.unusable) throw new ContextUnusableError(ctx.unusable, ctx.device);
}

/** Makes `ctx` current on this thread unless it already is (one cuCtxGetCurrent). */
export function bind(ctx: Bindable): void {
  usable(ctx);
  if (currentContextHandle() !== ctx.handle) {
    const status = native('cuCtxSetCurrent')(ctx.handle);
    if (status !== 0) throw fail(ctx, 'cuCtxSetCurrent', status);
  }
  lastBound = ctx;
}

/** Notes that `ctx` was made current by the driver itself (cuCtxCreate). */
export function noteBound(ctx: Bindable): void {
  lastBound = ctx;
}

/** Forgets the context `handle` (being destroyed): takes a handle so that destroys hold no wrapper. */
export function forget(handle: number): void {
  contexts.delete(handle);
  handleKinds.delete(handle);
  if (lastBound?.handle === handle) lastBound = undefined;
}

const INVALID_CONTEXT: number = CUresult.CUDA_ERROR_INVALID_CONTEXT;
const INVALID_HANDLE: number = CUresult.CUDA_ERROR_INVALID_HANDLE;
const CONTEXT_IS_DESTROYED: number = CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED;
const NOT_READY: number = CUresult.CUDA_ERROR_NOT_READY;
const OUT_OF_MEMORY: number = CUresult.CUDA_ERROR_OUT_OF_MEMORY;

function stale(status: number): boolean {
  return status === INVALID_CONTEXT || status === INVALID_HANDLE || status === CONTEXT_IS_DESTROYED;
}

// ---------------------------------------------------------------------------------------------
// Calls
// ---------------------------------------------------------------------------------------------

/** Calls `func` needing no context (cuInit, cuDeviceGet*, …); throws a DriverError on failure. */
export function global(func: string, ...args: unknown[]): void {
  const status = native(func)(...args);
  if (status !== 0) throw fail(undefined, func, status);
}

/**
 * Calls `func` needing no context and returns its status, for callers to which some failures are an
 * answer (an attribute this driver does not know, a LUID this platform has not): pass any other
 * failure to {@link fail}.
 */
export function globalStatus(func: string, ...args: unknown[]): number {
  return native(func)(...args);
}

/** Binds `ctx` for real and calls `func`; throws a DriverError (sticky errors mark `ctx`). */
export function call(ctx: Bindable, func: string, ...args: unknown[]): void {
  bind(ctx);
  const status = native(func)(...args);
  if (status !== 0) throw fail(ctx, func, status);
}

/**
 * What gives memory back when an allocation runs out (the caching allocator registers it: returns its
 * cached blocks, waits for their frees, trims the pools they went back to); true when it freed anything.
 */
let outOfMemoryRelief: ((ctx: Bindable) => boolean) | undefined;

/** Registers the out-of-memory relief {@link allocate} calls (src/memory/allocator.ts does, once). */
export function onOutOfMemory(relief: (ctx: Bindable) => boolean): void {
  outOfMemoryRelief = relief;
}

/**
 * An allocation (cuMemAlloc, cuMemAllocManaged, cuMemHostAlloc, cuMemCreate, cuMemAllocFromPoolAsync, …):
 * {@link call}, except that CUDA_ERROR_OUT_OF_MEMORY while memory is cached somewhere gives that memory
 * back and tries once more, as PyTorch's allocator does.
 */
export function allocate(ctx: Bindable, func: string, ...args: unknown[]): void {
  bind(ctx);
  const fn = native(func);
  let status = fn(...args);
  if (status === OUT_OF_MEMORY && outOfMemoryRelief?.(ctx) === true) {
    bind(ctx);
    status = fn(...args);
  }
  if (status !== 0) throw fail(ctx, func, status);
}

/**
 * A "synchronous" call (cuMemset*, cuMemcpyDtoD, cuMemcpyHtoD, cuMemcpyPeer, cuMemcpy3D, …) made done
 * when it returns: those run on the default stream and return before the device has finished (a memset
 * or a device-to-device copy at once, a copy from pageable memory once it is staged), so a read on a
 * non-blocking stream right after could see the old bytes. The default stream is synchronized after the
 * call (handle 0: the stream these calls used, legacy or per-thread as the binder resolved them).
 */
export function callAndWait(ctx: Bindable, func: string, ...args: unknown[]): void {
  call(ctx, func, ...args);
  const status = native('cuStreamSynchronize')(0);
  if (status !== 0) throw fail(ctx, 'cuStreamSynchronize', status);
}

/**
 * Runs `thunk` (one driver call returning its status) under the cached binding of `ctx`, and once
 * more after a real bind when the status says the cache was stale. For calls on handles that carry
 * their context (a created stream, an event, a function), which fail and do nothing under a wrong
 * current context. Returns the status; pass a failure to {@link fail}.
 */
export function hinted(ctx: Bindable, thunk: () => number): number {
  bindHinted(ctx);
  const status = thunk();
  if (status === 0 || !rebindIfStale(ctx, status)) return status;
  return thunk();
}

/**
 * {@link hinted} in two halves, for hot paths that cannot afford a closure per call:
 * `drv.bindHinted(ctx); let st = call(); if (st !== 0 && drv.rebindIfStale(ctx, st)) st = call();`
 */
export function bindHinted(ctx: Bindable): void {
  // without asking the driver when `ctx` was the last one bound here
  if (lastBound !== ctx || ctx.core.destroyed || ctx.unusable !== undefined) bind(ctx);
}

/** After a failed hinted call: when `status` says the cached binding was stale, binds for real and returns true (call again). */
export function rebindIfStale(ctx: Bindable, status: number): boolean {
  if (!stale(status)) return false;
  bind(ctx);
  return true;
}

/** {@link hinted} for `func(...args)`, throwing on failure. */
export function callHinted(ctx: Bindable, func: string, ...args: unknown[]): void {
  const fn = native(func);
  const status = hinted(ctx, () => fn(...args));
  if (status !== 0) throw fail(ctx, func, status);
}

/**
 * A call on stream handle `h` of `ctx`. The NULL, legacy and per-thread default streams (0, 1, 2)
 * belong to whichever context is current, so a call on one binds for real first.
 */
export function callOnStream(ctx: Bindable, h: number, func: string, ...args: unknown[]): void {
  if (h > 2) return callHinted(ctx, func, ...args);
  call(ctx, func, ...args);
}

/**
 * Calls a query (cuStreamQuery, cuEventQuery): true when done, false for CUDA_ERROR_NOT_READY; other
 * statuses throw (sticky ones mark `ctx`).
 */
export function query(ctx: Bindable, func: string, handle: number): boolean {
  const fn = native(func);
  bindHinted(ctx); // hinted() without its closure: the waiter's spin queries back to back
  let status = fn(handle) as number;
  if (status !== 0 && rebindIfStale(ctx, status)) status = fn(handle) as number;
  if (status === 0) return true;
  if (status === NOT_READY) return false;
  throw fail(ctx, func, status);
}

/**
 * A destroy or free: skipped once a sticky error made `ctx` unusable (what it frees went with the
 * context, and every call would fail), else a real bind and the call; throws on failure.
 */
export function release(ctx: Bindable, func: string, ...args: unknown[]): void {
  if (!bindForRelease(ctx)) return;
  const status = native(func)(...args);
  if (status !== 0) throw fail(ctx, func, status);
}

/** Binds `ctx` for a destroy or free: false (skip it) once a sticky error made the context unusable. */
export function bindForRelease(ctx: Bindable): boolean {
  if (ctx.unusable === undefined && stickyByHandle.size !== 0) {
    const e = stickyElsewhere(ctx.handle);
    if (e !== undefined) markUnusable(ctx, e);
  }
  if (ctx.unusable !== undefined) return false;
  if (currentContextHandle() !== ctx.handle) {
    const status = native('cuCtxSetCurrent')(ctx.handle);
    if (status !== 0) throw fail(ctx, 'cuCtxSetCurrent', status);
  }
  lastBound = ctx;
  return true;
}
