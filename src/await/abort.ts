// Cancelling an awaited wait: `{ signal, timeoutMs }`, checked before anything runs, and the errors a
// cancelled wait rejects with. A leaf (errors, describe, the long timer): poll.ts and the waiter share it.
import { describe } from '../describe';
import { OBJECTS_ERROR, ObjectsError } from '../errors';
import { longTimeout, type LongTimer } from '../long-timeout';

/** Options every awaited wait takes. */
export interface WaitOptions {
  /** Rejects with an {@link AbortError} (its `cause`: the signal's reason) once the signal aborts. */
  signal?: AbortSignal;
  /** Rejects (an ObjectsError with code OBJECTS_ERROR.timeout) after this many ms (any number; Infinity: no limit). Default: no limit. */
  timeoutMs?: number;
}

/**
 * An awaited wait cancelled through its AbortSignal. A CudaError named `AbortError` (as the DOM's
 * and Node's own cancellations are), code OBJECTS_ERROR.aborted; `cause` is the signal's reason.
 */
export class AbortError extends ObjectsError {
  /**
   * `where` is the `Class.method` whose wait was aborted; `reason` is the signal's reason (becomes `cause`).
   * @param where The `Class.method` whose wait was aborted; the message starts with it.
   * @param reason The AbortSignal's reason; it becomes the error's `cause` and its message is quoted.
   */
  constructor(where: string, reason: unknown) {
    const why = reason instanceof Error ? reason.message : reason === undefined ? 'aborted' : String(reason);
    super(where, OBJECTS_ERROR.aborted, `the wait was aborted (${why})`, { cause: reason });
  }
}

function isSignal(v: unknown): v is AbortSignal {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as AbortSignal).aborted === 'boolean' &&
    typeof (v as AbortSignal).addEventListener === 'function' &&
    typeof (v as AbortSignal).removeEventListener === 'function'
  );
}

/** `what` without a trailing `()`: the `Class.method` an error names. */
export function whereOf(what: string): string {
  return what.replace(/\(\)$/, '');
}

/** What a call without options gets (read-only: shared by every such call, none allocated per wait). */
const NO_OPTIONS: WaitOptions = Object.freeze({});

/**
 * Checks `{ signal, timeoutMs }` (TypeError/RangeError naming `what`) and returns a snapshot: a plain
 * object holding the values checked (each read once: a getter cannot change them later) and the
 * caller's other own keys (none given: one shared frozen object).
 */
export function checkWaitOptions<T extends WaitOptions>(options: T | undefined, what: string): T {
  if (options === undefined || options === NO_OPTIONS) return NO_OPTIONS as T; // checked again by the waiter: no copy
  if (typeof options !== 'object' || options === null) throw new TypeError(`${what}: options must be an object, got ${describe(options)}`);
  const { signal, timeoutMs } = options;
  if (signal !== undefined && !isSignal(signal)) throw new TypeError(`${what}: signal must be an AbortSignal, got ${describe(signal)}`);
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !(timeoutMs >= 0)))
    throw new RangeError(`${what}: timeoutMs must be a non-negative number, got ${describe(timeoutMs)}`);
  return { ...options, signal, timeoutMs };
}

/** The error of a wait that ran past `timeoutMs`. */
export function timeoutError(what: string, timeoutMs: number): ObjectsError {
  return new ObjectsError(whereOf(what), OBJECTS_ERROR.timeout, `timed out after ${timeoutMs} ms`);
}

/** The options can cancel a wait (a signal or a time limit): only then is {@link onCancel} wired. */
export function cancellable(options: WaitOptions): boolean {
  return options.signal !== undefined || options.timeoutMs !== undefined;
}

/**
 * Wires a wait's cancellation: calls `cancel(error)` once when the signal aborts or the time runs out.
 * Returns the disposer that removes the listener and the timer (call it when the wait settles), so
 * that a settled wait leaves nothing behind. A signal already aborted cancels at once (synchronously).
 */
export function onCancel(options: WaitOptions, what: string, cancel: (e: Error) => void): () => void {
  if (!cancellable(options)) return noop;
  const { signal, timeoutMs } = options;
  let timer: LongTimer | undefined;
  const abort = (): void => {
    dispose();
    cancel(new AbortError(whereOf(what), signal!.reason));
  };
  const dispose = (): void => {
    timer?.cancel();
    timer = undefined;
    signal?.removeEventListener('abort', abort);
  };
  if (signal?.aborted) {
    abort();
    return noop;
  }
  signal?.addEventListener('abort', abort, { once: true });
  // longTimeout: a plain setTimeout of 2^31 ms or more (Infinity included) would fire after 1 ms
  if (timeoutMs !== undefined) {
    timer = longTimeout(() => {
      dispose();
      cancel(timeoutError(what, timeoutMs));
    }, timeoutMs);
  }
  return dispose;
}

function noop(): void {}
