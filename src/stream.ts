// Stream. Host callbacks are deadlock-safe by design:
//   - launchHostFunc(fn) enqueues one process-wide koffi-registered trampoline; koffi queues the call
//     from CUDA's callback thread to the main event loop, so fn runs on the event loop.
//   - while any such callback is pending, a blocking wait (synchronize(), sync copies, frees that may
//     synchronize) would never return: those throw HostCallbackPendingError (or are deferred, for
//     frees) instead of hanging, and `await stream.synchronized()` polls cuStreamQuery while yielding.
import koffi from 'koffi';
import * as cu from '../generated/13.0/driver';
import * as raw from '../generated/13.0/driver/raw';
import { Context, callOnStream, contextOf } from './context';
import { callbackSettled } from './runtime';
import { Resource, assertMayBlock, hostFuncs } from './lifecycle';
import { Event } from './event';


/** The stream protocol: an object with this method returns its CUstream handle. */
export const cudaStream: unique symbol = Symbol.for('cuda.stream') as never;

/** Anything accepted where a stream is: a Stream, an object implementing the protocol, or a raw handle. */
export type StreamLike = Stream | {
  /** Returns the object's CUstream handle. */
  [cudaStream](): number | bigint;
} | cu.CUstream | number;

/** The CUstream handle of a stream-like value (0 = legacy default stream when undefined). */
export function streamHandle(s: StreamLike | undefined | null): cu.CUstream {
  if (s === undefined || s === null) return 0 as cu.CUstream;
  if (typeof s === 'number') return s as cu.CUstream;
  if (s instanceof Stream) {
    s.check();
    return s.handle;
  }
  const fn = (s as { [cudaStream]?: () => number })[cudaStream];
  if (typeof fn !== 'function') throw new TypeError('expected a Stream, a stream handle, or an object implementing Symbol.for("cuda.stream")');
  const h = fn.call(s);
  if (typeof h !== 'number' && typeof h !== 'bigint') throw new TypeError('Symbol.for("cuda.stream")() must return a stream handle (number or bigint)');
  return Number(h) as cu.CUstream;
}

/** Options of {@link Stream.create}. */
export interface StreamOptions {
  /** CU_STREAM_NON_BLOCKING: does not synchronize with the legacy default stream. */
  nonBlocking?: boolean;
  /** Lower numbers are higher priority (see Stream.priorityRange()). */
  priority?: number;
  /** The context to create the stream in (default: the current one, else device 0's primary context). */
  context?: Context;
}

/**
 * How an awaited wait ({@link Stream.synchronized}, {@link Event.synchronized}) polls: on every
 * setImmediate for about the first 2 ms, then on timers whose interval grows by 0.25 ms up to
 * `maxIntervalMs`.
 */
export interface PollOptions {
  /** Longest sleep between polls once the first ~2 ms of setImmediate polling have passed (ms, default 1). */
  maxIntervalMs?: number;
  /** Reject (with an Error saying the wait timed out) after this many ms (default: no limit). */
  timeoutMs?: number;
}

interface PendingHostFunc {
  fn: () => void;
  stream: Stream;
}
const hostCalls = new Map<number, PendingHostFunc>();
let nextHostCall = 1;
let trampoline: bigint | undefined;

function hostTrampoline(): bigint {
  if (trampoline !== undefined) return trampoline;
  const proto = koffi.proto('void', ['void *']);
  trampoline = koffi.register((userData: bigint | null) => {
    const id = userData === null ? 0 : Number(userData);
    const call = hostCalls.get(id);
    if (!call) return;
    hostCalls.delete(id);
    try {
      call.fn();
    } catch (e) {
      call.stream.hostError ??= e;
    } finally {
      call.stream.pendingHostFuncs--;
      // Deferred frees must not run inside the callback (CUDA is waiting on it): the drain runs next turn.
      callbackSettled();
    }
  }, koffi.pointer(proto));
  return trampoline;
}

/** Polls `ready()` (true when done) yielding to the event loop: setImmediate first, short timers after. */
export function poll(ready: () => boolean, what: string, options: PollOptions = {}): Promise<void> {
  const maxInterval = options.maxIntervalMs ?? 1;
  const start = performance.now();
  return new Promise<void>((resolve, reject) => {
    let interval = 0;
    const step = (): void => {
      try {
        if (ready()) return resolve();
      } catch (e) {
        return reject(e);
      }
      const elapsed = performance.now() - start;
      if (options.timeoutMs !== undefined && elapsed > options.timeoutMs) return reject(new Error(`${what} timed out after ${options.timeoutMs} ms`));
      if (elapsed < 2) setImmediate(step);
      else {
        interval = Math.min(maxInterval, interval + 0.25);
        setTimeout(step, interval);
      }
    };
    step();
  });
}

/**
 * A CUDA stream (CUstream): work enqueued on it runs in order. Stream.create makes one this object owns
 * (close() destroys it); legacy(), perThread() and wrap() give wrappers that own nothing. Implements the
 * stream protocol ({@link cudaStream}).
 */
export class Stream extends Resource {
  /** The driver handle (CUstream); CU_STREAM_LEGACY or CU_STREAM_PER_THREAD for the default streams. */
  readonly handle: cu.CUstream;
  /** The context the stream belongs to; undefined for a handle wrapped without one. */
  readonly context: Context | undefined;
  /** JS host callbacks enqueued on this stream and not yet run. */
  pendingHostFuncs = 0;
  /** First error thrown by a host callback of this stream, reported by the next call. @internal */
  hostError: unknown;
  /** True when close() destroys the stream (made by Stream.create). */
  readonly owned: boolean;

  private constructor(handle: cu.CUstream, context: Context | undefined, destroy: (() => void) | undefined, kind = 'Stream') {
    super(kind, destroy, [context]);
    this.handle = handle;
    this.context = context;
    this.owned = destroy !== undefined;
  }

  /** Creates a stream (cuStreamCreateWithPriority). */
  static create(options: StreamOptions = {}): Stream {
    const ctx = contextOf(options.context);
    ctx.bind();
    const flags = options.nonBlocking ? cu.CUstream_flags.CU_STREAM_NON_BLOCKING : cu.CUstream_flags.CU_STREAM_DEFAULT;
    if (options.priority !== undefined && !Number.isInteger(options.priority)) throw new TypeError('priority must be an integer');
    const handle = cu.cuStreamCreateWithPriority(flags, options.priority ?? 0);
    return new Stream(handle, ctx, () => {
      if (!ctx.bindForFree()) return;
      cu.cuStreamDestroy(handle);
    });
  }

  /** `{ leastPriority, greatestPriority }` of `context` (default: the current one). The greatest priority is the numerically lowest. */
  static priorityRange(context?: Context): { leastPriority: number; greatestPriority: number } {
    contextOf(context).bind();
    return cu.cuCtxGetStreamPriorityRange();
  }

  /** The legacy default stream (CU_STREAM_LEGACY): synchronizes with every blocking stream. */
  static legacy(context?: Context): Stream {
    return new Stream(cu.CU_STREAM_LEGACY, contextOf(context), undefined, 'Stream (legacy default)');
  }

  /** The per-thread default stream (CU_STREAM_PER_THREAD). */
  static perThread(context?: Context): Stream {
    return new Stream(cu.CU_STREAM_PER_THREAD, contextOf(context), undefined, 'Stream (per-thread default)');
  }

  /** Wraps a foreign stream handle (or stream-protocol object) without owning it: close() never destroys it. */
  static wrap(stream: StreamLike, context?: Context): Stream {
    if (stream instanceof Stream) return stream;
    return new Stream(streamHandle(stream), context, undefined, 'Stream (wrapped)');
  }

  /** The stream protocol: returns {@link Stream.handle}. */
  [cudaStream](): number {
    return this.handle;
  }

  /** Throws if closed, unusable, or a host callback of this stream threw. @internal */
  check(): void {
    this.assertOpen();
    this.context?.check();
    if (this.hostError !== undefined) {
      const e = this.hostError;
      this.hostError = undefined;
      throw e;
    }
  }

  private bind(): void {
    this.check();
    this.context?.bind();
  }

  /** @internal */
  fail(e: unknown): unknown {
    return this.context ? this.context.fail(e) : e;
  }

  /** The CUstream_flags the stream was created with (cuStreamGetFlags). */
  get flags(): number {
    this.bind();
    return cu.cuStreamGetFlags(this.handle);
  }

  /** The stream's priority (cuStreamGetPriority); lower numbers are higher priority. */
  get priority(): number {
    this.bind();
    return cu.cuStreamGetPriority(this.handle);
  }

  /** True when all work is done; false while some is pending (cuStreamQuery). */
  query(): boolean {
    this.bind();
    try {
      return cu.cuStreamQuery(this.handle) === 0;
    } catch (e) {
      throw this.fail(e);
    }
  }

  /**
   * Blocks until the stream is idle. Throws HostCallbackPendingError instead of deadlocking while a JS
   * host callback is pending: use `await stream.synchronized()` then.
   */
  synchronize(): void {
    this.check();
    assertMayBlock('Stream.synchronize()');
    const ctx = this.context;
    const h = this.handle;
    const status = ctx === undefined ? raw.cuStreamSynchronize(h) : callOnStream(ctx, h, () => raw.cuStreamSynchronize(h));
    if (status !== 0) throw this.fail(new cu.DriverError('cuStreamSynchronize', status));
  }

  /** Resolves when the stream is idle, without blocking the event loop (polls cuStreamQuery). */
  async synchronized(options?: PollOptions): Promise<void> {
    this.bind();
    await poll(() => {
      if (this.core.destroyed) return true;
      this.context?.bind();
      const status = raw.cuStreamQuery(this.handle);
      if (status === 0) return this.pendingHostFuncs === 0;
      if (status === cu.CUresult.CUDA_ERROR_NOT_READY) return false;
      throw this.fail(new cu.DriverError('cuStreamQuery', status));
    }, 'Stream.synchronized()', options);
    if (this.hostError !== undefined) {
      const e = this.hostError;
      this.hostError = undefined;
      throw e;
    }
  }

  /** Makes later work on this stream wait for `event` (cuStreamWaitEvent). */
  wait(event: Event): this {
    this.bind();
    cu.cuStreamWaitEvent(this.handle, event.handle, 0);
    return this;
  }

  /** Records `event` (or a new default event) on this stream and returns it. */
  record(event?: Event): Event {
    this.bind();
    const ev = event ?? Event.create({ context: this.context });
    ev.record(this);
    return ev;
  }

  /**
   * Enqueues `fn` to run on the JS event loop once prior work on the stream is done. `fn` must not call
   * CUDA (it runs while CUDA's callback thread waits for it); errors it throws are reported by the next
   * call on this stream. Use `await stream.synchronized()` to wait: a blocking wait throws meanwhile.
   */
  launchHostFunc(fn: () => void): this {
    if (typeof fn !== 'function') throw new TypeError('launchHostFunc expects a function');
    this.bind();
    const id = nextHostCall++;
    hostCalls.set(id, { fn, stream: this });
    this.pendingHostFuncs++;
    hostFuncs.pending++;
    const status = raw.cuLaunchHostFunc(this.handle, hostTrampoline(), BigInt(id));
    if (status !== 0) {
      hostCalls.delete(id);
      this.pendingHostFuncs--;
      callbackSettled(); // it will never run
      throw this.fail(new cu.DriverError('cuLaunchHostFunc', status));
    }
    return this;
  }

  /** Begins stream capture (see Graph.capture for the scoped form). */
  beginCapture(mode: cu.CUstreamCaptureMode = cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL): void {
    this.bind();
    cu.cuStreamBeginCapture(this.handle, mode);
  }

  /** Ends capture and returns the raw graph handle (Graph.capture wraps it). */
  endCaptureHandle(): cu.CUgraph {
    this.bind();
    return cu.cuStreamEndCapture(this.handle);
  }

  /** True while the stream is capturing into a graph (cuStreamIsCapturing). */
  get capturing(): boolean {
    this.bind();
    return cu.cuStreamIsCapturing(this.handle) === cu.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE;
  }

  toString(): string {
    return `${this.core.kind}(0x${this.handle.toString(16)})`;
  }
}
