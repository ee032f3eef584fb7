// JS callbacks that a CUDA library calls from a thread of its own (cuLaunchHostFunc,
// cuStreamAddCallback, …). koffi queues such a call to the main event loop, so while one is pending a
// blocking wait on the main thread (cuStreamSynchronize, a synchronous copy, …) never returns: the
// process hangs. Both the typed layer and the objects layer count pending callbacks here, and every
// blocking function refuses to run while the count is not zero.
import { type TypeObject } from 'koffi';
import { koffi } from './koffi';
import { CudaError } from './errors';
import { argError } from './validate';

/** Whether `t` is a koffi prototype type (what koffi.register takes, behind a pointer). */
function isFunctionType(t: unknown): boolean {
  if (typeof t !== 'object' || t === null) return false;
  try {
    return (koffi as unknown as { type(t: unknown): { primitive: string } }).type(t).primitive === 'Prototype';
  } catch {
    return false; // not a koffi type object
  }
}

/** A JS function given where C expects a callback. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JsCallback = (...args: any[]) => void;

let pendingCount = 0;

/** JS callbacks registered with a library and not yet run, in this thread. */
export const hostCallbacks = {
  /** How many are pending: a non-negative integer (a count below zero would defeat the deadlock guard). */
  get pending(): number {
    return pendingCount;
  },
  /** Sets the count (one more when a callback is handed to CUDA, one less when it has run). */
  set pending(n: number) {
    if (!Number.isSafeInteger(n) || n < 0)
      throw argError('hostCallbacks.pending', 'value', 'a non-negative integer (one more when a callback is handed to CUDA, one less when it has run)', n);
    pendingCount = n;
  },
};

const drainedHooks: (() => void)[] = [];

/** Runs `hook` whenever the count of pending callbacks drops to zero. */
export function onCallbacksDrained(hook: () => void): void {
  if (typeof hook !== 'function') throw argError('onCallbacksDrained', 'hook', 'a function', hook);
  drainedHooks.push(hook);
}

/** Called when a pending callback has run (or will never run); refused when none is pending. */
export function callbackSettled(): void {
  if (pendingCount === 0) throw new RangeError('callbackSettled: no JS callback is pending (each callbackSettled() must follow one hostCallbacks.pending++)');
  pendingCount--;
  if (pendingCount === 0) setImmediate(() => drainedHooks.forEach((h) => h()));
}

/**
 * Thrown instead of a blocking wait that could never return because a JS callback is pending. A
 * CudaError of module `objects` named `HostCallbackPendingError`, code -8 (the objects layer's
 * OBJECTS_ERROR.callbackPending: the support package cannot import src/).
 */
export class HostCallbackPendingError extends CudaError {
  /** `op` names the refused call (`cuStreamSynchronize`, `Stream.synchronize()`, …); the message starts with it. */
  constructor(op: string) {
    if (typeof op !== 'string') throw argError('HostCallbackPendingError', 'op', 'a string naming the refused call', op);
    super(
      'objects',
      op,
      -8,
      'HostCallbackPendingError',
      undefined,
      `${op} would block the event loop while ${hostCallbacks.pending} JS callback(s) given to CUDA ` +
        '(launchHostFunc, cuLaunchHostFunc, cuStreamAddCallback, …) are pending: the callback runs on the event loop, so a ' +
        'blocking wait would deadlock. Wait without blocking instead: `await stream.synchronized()`, or poll ' +
        'cuStreamQuery/cuEventQuery from a timer.',
    );
  }
}

/** Throws unless a blocking wait is safe (no JS callback pending in this thread). */
export function assertMayBlock(op: string): void {
  if (typeof op !== 'string') throw argError('assertMayBlock', 'op', 'a string naming the blocking call', op);
  if (pendingCount !== 0) throw new HostCallbackPendingError(op);
}

/** A callback registered for one call; `cancel()` when the library refused it (it will never run). */
export interface OneShotCallback {
  /** The C function pointer to hand to the library. */
  readonly pointer: bigint;
  /** Releases the registration when the call that was to run it failed. */
  cancel(): void;
}

/**
 * Registers `fn` as a C callback of prototype `proto` that the library calls exactly once (a host
 * function, a stream callback, a user object's destructor), counts it as pending until it has run,
 * and releases the registration afterwards. An exception thrown by `fn` is rethrown on the event loop
 * (an uncaught exception, as for any event callback), never into the library's thread.
 */
export function oneShotCallback(proto: TypeObject, fn: JsCallback): OneShotCallback {
  if (typeof fn !== 'function') throw argError('oneShotCallback', 'fn', 'a function', fn);
  if (!isFunctionType(proto)) throw argError('oneShotCallback', 'proto', "a koffi function prototype (koffi.proto(...) or a module's callbacks.X())", proto);
  let settled = false;
  const settle = (): void => {
    if (settled) return;
    settled = true;
    callbackSettled();
    setImmediate(() => koffi.unregister(pointer)); // not from inside its own call
  };
  const pointer: bigint = koffi.register((...args: unknown[]) => {
    try {
      fn(...args);
    } catch (e) {
      setImmediate(() => {
        throw e;
      });
    } finally {
      settle();
    }
  }, koffi.pointer(proto));
  hostCallbacks.pending++;
  return { pointer, cancel: settle };
}
