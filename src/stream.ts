// Stream. Raw handles enter only through Stream.wrap(handle, { context }), Stream.legacyDefault() and
// Stream.perThread(); every entry that takes a stream takes a Stream or an object implementing the
// stream protocol (Symbol.for('cuda.stream')), never a bare number.
//
// Host callbacks are deadlock-safe by design:
//   - launchHostFunc(fn) enqueues one process-wide koffi-registered trampoline; koffi queues the call
//     from CUDA's callback thread to the main event loop, so fn runs on the event loop.
//   - while any such callback is pending, a blocking wait (synchronize(), sync copies, frees that may
//     synchronize) would never return: those throw HostCallbackPendingError (or are deferred, for
//     frees) instead of hanging, and `await stream.synchronized()` waits without blocking (src/await/waiter.ts).
import { koffi } from '../support';
import { readFileSync } from 'node:fs';
import * as drv from './driver';
import { Context, contextOf } from './context';
import { checkKeys, describe } from './describe';
import { ClosedObjectError, OBJECTS_ERROR, ObjectsError } from './errors';
import { callbackSettled } from '../support';
import { Resource, assertMayBlock, hostFuncs } from './lifecycle';
import { invalidate } from './validity';
import { releaseStreamBlocks } from './memory/allocator';
import { beginTracking, endTracking, type CaptureHolder } from './graph/capture';
import { Event } from './event';
import { type PollOptions } from './poll';
import { marksLazily, waitFor, type WaitTarget } from './await/waiter';
import { SharedWait } from './await/shared-wait';
import { giveMarker, takeMarker } from './await/markers';
import { AbortError, checkWaitOptions, whereOf, type WaitOptions } from './await/abort';
import { checkDescriptor, describeHandle, type HandleDescriptor } from './await/share';
import { SEALED, type Sealed, checkSealed } from './sealed';

/** The stream protocol: an object with this method returns its CUstream handle. */
export const cudaStream: unique symbol = Symbol.for('cuda.stream') as never;

/** An object of another library implementing the stream protocol (its stream is used in the current context). */
export interface StreamProtocol {
  /** Returns the object's CUstream handle. */
  [cudaStream](): number | bigint;
}

/** Anything accepted where a stream is: a Stream, or an object implementing the stream protocol. */
export type StreamLike = Stream | StreamProtocol;

/** Options of {@link Stream.create}. */
export interface StreamOptions {
  /** CU_STREAM_NON_BLOCKING: does not synchronize with the legacy default stream. */
  nonBlocking?: boolean;
  /** Lower numbers are higher priority (see Stream.priorityRange()). */
  priority?: number;
  /** The context to create the stream in (default: the current one, else device 0's primary context). */
  context?: Context;
}

/** Options of {@link Stream.wrap}. */
export interface WrapOptions {
  /** The context the stream belongs to (default: the current one, else device 0's primary context). */
  context?: Context;
}

// ---------------------------------------------------------------------------------------------
// Raw handles: what is known about them, so that a wrong one is refused before the driver sees it
// ---------------------------------------------------------------------------------------------

/** Owned streams alive, by handle. */
const liveStreams = new Map<number, WeakRef<Stream>>();
/** Handles of streams destroyed by this process (bounded; a handle the driver hands out again leaves). */
const destroyedStreams = new Set<number>();
const DESTROYED_KEPT = 4096;
/** True when `addr` lies in readable memory of this process (Linux /proc/self/maps; true elsewhere). */
function readable(addr: number): boolean {
  if (process.platform !== 'linux') return true;
  let text: string;
  try {
    text = readFileSync('/proc/self/maps', 'utf8');
  } catch {
    return true;
  }
  for (const line of text.split('\n')) {
    const space = line.indexOf(' ');
    if (space < 0 || line[space + 1] !== 'r') continue;
    const dash = line.indexOf('-');
    if (addr >= parseInt(line.slice(0, dash), 16) && addr + 8 <= parseInt(line.slice(dash + 1, space), 16)) return true;
  }
  return false;
}

function handleNumber(where: string, h: unknown): number {
  const n = typeof h === 'bigint' && h >= 0n && h <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(h) : h;
  if (typeof n !== 'number' && typeof n !== 'bigint') throw new TypeError(`${where}: a CUstream handle must be a number or bigint, got ${describe(h)}`);
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw new RangeError(`${where}: a CUstream handle must be a non-negative safe integer (number or bigint), got ${describe(h)}`);
  }
  return n;
}

/**
 * Checks a raw CUstream handle before it can reach the driver: not the handle of a destroyed stream or
 * of another kind of object, in readable memory, and of `ctx` (cuStreamGetCtx). The driver cannot check
 * a handle itself (a wrong one crashes the process), so what passes here is trusted.
 */
function checkForeignHandle(where: string, h: number, ctx: Context): void {
  const live = liveStreams.get(h)?.deref();
  if (live !== undefined && !live.core.destroyed) {
    if (live.context !== ctx) throw new TypeError(`${where}: stream 0x${h.toString(16)} belongs to ${String(live.context)}, not ${String(ctx)}`);
    return;
  }
  if (destroyedStreams.has(h)) throw new ObjectsError(where, OBJECTS_ERROR.closed, `0x${h.toString(16)} is the handle of a destroyed stream`);
  const kind = drv.kindOfHandle(h);
  if (kind !== undefined) throw new TypeError(`${where}: 0x${h.toString(16)} is a ${kind} handle, not a CUstream`);
  if (!readable(h)) throw new RangeError(`${where}: 0x${h.toString(16)} is not a CUstream handle (no memory of this process is mapped there)`);
  drv.callHinted(ctx, 'cuStreamGetCtx', h, drv.out64);
  if (drv.outNumber() !== ctx.handle) throw new TypeError(`${where}: stream 0x${h.toString(16)} does not belong to ${String(ctx)}`);
}

const protocolStreams = new WeakMap<object, Stream>();

/**
 * The Stream for a stream argument. `undefined` gives undefined (the caller picks the default); a
 * Stream is checked (open, usable); a protocol object is wrapped once (in the current context) and its
 * handle checked. Anything else is a TypeError naming `where`.
 */
export function toStream(s: unknown, where: string): Stream | undefined {
  if (s === undefined) return undefined;
  if (s instanceof Stream) {
    s.check();
    return s;
  }
  const fn = typeof s === 'object' && s !== null ? (s as { [cudaStream]?: unknown })[cudaStream] : undefined;
  if (typeof fn !== 'function') {
    const hint = typeof s === 'number' || typeof s === 'bigint' ? ' (wrap a raw CUstream with Stream.wrap(handle, { context }))' : '';
    throw new TypeError(`${where} must be a Stream or implement Symbol.for("cuda.stream"), got ${describe(s)}${hint}`);
  }
  const h = handleNumber(`${where}: Symbol.for("cuda.stream")()`, fn.call(s));
  const hit = protocolStreams.get(s as object);
  if (hit !== undefined && hit.handle === h && !hit.closed) {
    hit.check();
    return hit;
  }
  const stream = Stream.wrap(h, { context: Context.current() });
  protocolStreams.set(s as object, stream);
  return stream;
}

/**
 * The CUstream handle of a stream argument (0, the legacy default stream, for undefined).
 * @param s A Stream, or an object of another library implementing the stream protocol; undefined gives 0 (the legacy default stream).
 * @param where The call and argument named in the TypeError for a bad `s`; default 'streamHandle: stream'.
 */
export function streamHandle(s: StreamLike | undefined, where = 'streamHandle: stream'): drv.CUstream {
  const st = toStream(s, where);
  return (st === undefined ? 0 : st.handle) as drv.CUstream;
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
      invalidate();
    } finally {
      call.stream.pendingHostFuncs--;
      // Deferred frees must not run inside the callback (CUDA is waiting on it): the drain runs next turn.
      callbackSettled();
    }
  }, koffi.pointer(proto));
  return trampoline;
}

// After a sticky error CUDA never calls the host functions enqueued in that context: settle them here,
// or the pending count would stay up for good, every blocking wait (in any context) would refuse, and
// every free deferred behind it (whenNoHostFuncs) would wait forever. A late call finds no entry.
drv.onUnusable((ctx) => {
  for (const [id, call] of hostCalls) {
    if (call.stream.context !== ctx) continue;
    hostCalls.delete(id);
    call.stream.pendingHostFuncs--;
    callbackSettled();
  }
});

const CAPTURE_MODES = new Set<number>([0, 1, 2]); // GLOBAL, THREAD_LOCAL, RELAXED

/** The context a default-stream wrapper belongs to: a closed one is refused now, not at the wrapper's first use. */
function openContextOf(context: unknown, where: string): Context {
  const ctx = contextOf(context, `${where}: context`);
  if (ctx.closed) throw new ClosedObjectError(where, 'Context');
  return ctx;
}

/**
 * What one stream await waits for (a WaitTarget): the stream's end when it was made, marked by an event
 * then or when first needed (`mark`). Its callbacks are methods: a crowd of awaits makes no closures each.
 */
class StreamPoint implements WaitTarget {
  settled = false;
  readonly fresh = true; // made after a query saw the stream busy
  /** The awaits sharing its marker (marked together by markAwaitedPoint), when more than one. */
  users: { count: number } | undefined = undefined;
  constructor(
    readonly ctx: Context,
    public event: number,
    readonly key: Stream,
    readonly what: string,
    readonly stream: number,
    readonly verify: (() => void) | undefined,
  ) {}

  done(): void {
    this.key.pointSettled(this);
  }

  mark(): void {
    this.key.markAwaitedPoint();
  }
}

/**
 * A CUDA stream (CUstream): work enqueued on it runs in order. Stream.create makes one this object owns
 * (close() destroys it); legacyDefault(), perThread() and wrap() give wrappers that own nothing.
 * Implements the stream protocol ({@link cudaStream}).
 * @example
 * ```ts
 * import { DeviceBuffer, Stream } from 'cuda-ts/objects';
 *
 * async function main(): Promise<void> {
 *   using stream = Stream.create({ nonBlocking: true });
 *   using buf = DeviceBuffer.alloc(4096, { stream }); // stream-ordered: allocated and freed on `stream`
 *   buf.memset(0, { stream }); // enqueued; returns at once
 *   await stream.synchronized(); // the work enqueued so far is done; the event loop ran meanwhile
 *   console.log(buf.toArray(Uint8Array, { stream })[0]); // 0
 * }
 * main().catch(console.error);
 * ```
 */
export class Stream extends Resource {
  private readonly raw: drv.CUstream;
  /** Awaits made since the last work enqueued here: they wait for the stream's end, not yet marked by an event. */
  private unmarked: StreamPoint[] = [];
  /** A descriptor was handed out: other threads may enqueue here unseen, so awaits mark their point at once. */
  private shared = false;
  /** A plain `synchronized()` pending at the current point: later plain calls share it until more work is enqueued. */
  private readonly plainWait = new SharedWait();
  /** Bumped by every read of {@link handle} and call of {@link beforeEnqueue} (each enqueue makes one): unchanged, nothing was enqueued. */
  private enqueueMarks = 0;
  /** The context the stream belongs to. */
  readonly context: Context;
  /** JS host callbacks enqueued on this stream and not yet run. */
  pendingHostFuncs = 0;
  /** First error thrown by a host callback of this stream, reported by the next call. @internal */
  hostError: unknown;
  /** True when close() destroys the stream (made by Stream.create). */
  readonly owned: boolean;
  /** The capture in progress on this stream (beginCapture … endCaptureHandle). @internal */
  capture: CaptureHolder | undefined;

  private constructor(seal: Sealed, handle: drv.CUstream, context: Context, destroy: (() => void) | undefined, kind = 'Stream') {
    checkSealed(seal, 'Stream', 'Stream.create() or Stream.wrap()');
    super(kind, destroy, [context]);
    this.raw = handle;
    this.context = context;
    this.owned = destroy !== undefined;
  }

  /**
   * The driver handle (CUstream); CU_STREAM_LEGACY or CU_STREAM_PER_THREAD for the default streams.
   * Work is enqueued through it, so reading it first marks the point pending awaits wait for (an event
   * recorded here): what is enqueued next is not awaited by them.
   */
  get handle(): drv.CUstream {
    this.enqueueMarks++;
    if (this.unmarked.length !== 0 || this.plainWait.current !== undefined) this.beforeEnqueue();
    return this.raw;
  }

  /** A count that changes whenever work may have been enqueued here since (see {@link endHandle}). @internal */
  get enqueueCount(): number {
    return this.enqueueMarks;
  }

  /**
   * The raw handle when nothing was enqueued here since {@link enqueueCount} read `count`, and no
   * other thread can enqueue unseen: the stream's end is then still that point. Else undefined. @internal
   */
  endHandle(count: number): number | undefined {
    return this.enqueueMarks === count && this.seesEveryEnqueue() && !this.closed && this.capture === undefined ? this.raw : undefined;
  }

  /** Marks the point pending awaits wait for, before work is enqueued here without reading {@link handle} (a library handle bound to this stream). @internal */
  beforeEnqueue(): void {
    this.enqueueMarks++; // a library bound to this stream enqueues without reading the handle
    this.plainWait.drop(); // work follows: a later await has a later point
    if (this.unmarked.length === 0) return;
    try {
      this.markAwaitedPoint();
    } catch {
      // the work about to be enqueued reports the problem; these awaits then also wait for that work
    }
  }

  /**
   * Records one marker event for the awaits made since the last enqueue (they all wait for the stream's
   * end as it was): work enqueued after this is not awaited. Called before work is enqueued, and by
   * the waiter when an await parks. @internal
   */
  markAwaitedPoint(): void {
    // an await the waiter's spin just resolved keeps its books after the awaiting code: none needed
    const targets = this.unmarked.some((t) => t.settled === true) ? this.unmarked.filter((t) => t.settled !== true) : this.unmarked;
    if (targets.length === 0) {
      this.unmarked = [];
      return;
    }
    const ev = this.recordMarker();
    this.unmarked = [];
    const users = targets.length > 1 ? { count: targets.length } : undefined;
    for (const t of targets) {
      t.event = ev;
      t.users = users;
    }
  }

  /** A marker event recorded here now (given back to the pool when the record fails). */
  private recordMarker(): number {
    const ev = takeMarker(this.context);
    try {
      drv.callOnStream(this.context, this.raw, 'cuEventRecord', ev, this.raw);
    } catch (e) {
      giveMarker(this.context, ev);
      throw this.fail(e);
    }
    return ev;
  }

  /** An await of this stream settled: forget it, or give its marker back once no other await uses it. @internal */
  pointSettled(t: StreamPoint): void {
    this.plainWait.settled(t);
    if (t.event === 0) {
      const i = this.unmarked.indexOf(t);
      if (i >= 0) this.unmarked.splice(i, 1);
      return;
    }
    if (t.users !== undefined && --t.users.count > 0) return;
    giveMarker(this.context, t.event);
  }

  /** Marks the point of pending awaits first (the stream's handle stops naming it), then closes. */
  override close(): void {
    if (!this.closed) this.beforeEnqueue();
    super.close();
  }

  /**
   * Creates a stream (cuStreamCreateWithPriority).
   * @param options `nonBlocking` (true: no implicit synchronization with the legacy default stream; default false), `priority` (lower is more urgent, within Stream.priorityRange(); default 0) and `context` (default: the current one, else device 0's primary context).
   */
  static create(options: StreamOptions = {}): Stream {
    if (typeof options !== 'object' || options === null) throw new TypeError(`Stream.create: options must be an object, got ${describe(options)}`);
    if (options.nonBlocking !== undefined && typeof options.nonBlocking !== 'boolean')
      throw new TypeError(`Stream.create: nonBlocking must be a boolean, got ${describe(options.nonBlocking)}`);
    checkKeys('Stream.create', options, ['nonBlocking', 'priority', 'context']);
    if (options.priority !== undefined && typeof options.priority !== 'number')
      throw new TypeError(`Stream.create: priority must be a number, got ${describe(options.priority)}`);
    if (options.priority !== undefined && (!Number.isInteger(options.priority) || Math.abs(options.priority) > 0x7fffffff))
      throw new RangeError(`Stream.create: priority must be a 32-bit integer, got ${describe(options.priority)}`);
    const ctx = contextOf(options.context, 'Stream.create: context');
    const flags = options.nonBlocking ? drv.CUstream_flags.CU_STREAM_NON_BLOCKING : drv.CUstream_flags.CU_STREAM_DEFAULT;
    drv.call(ctx, 'cuStreamCreateWithPriority', drv.out64, flags, options.priority ?? 0);
    return Stream.adoptCreated(drv.outNumber() as drv.CUstream, ctx);
  }

  /** Owns a stream just created in `ctx` (by cuStreamCreate*, or cuGreenCtxStreamCreate). @internal */
  static adoptCreated(handle: drv.CUstream, ctx: Context): Stream {
    destroyedStreams.delete(handle);
    const stream = new Stream(SEALED, handle, ctx, () => {
      liveStreams.delete(handle);
      if (destroyedStreams.size >= DESTROYED_KEPT) destroyedStreams.delete(destroyedStreams.values().next().value as number);
      destroyedStreams.add(handle);
      releaseStreamBlocks(ctx, handle);
      drv.release(ctx, 'cuStreamDestroy', handle);
    });
    liveStreams.set(handle, new WeakRef(stream));
    return stream;
  }

  /**
   * `{ leastPriority, greatestPriority }` of `context` (default: the current one). The greatest priority is the numerically lowest.
   * @param context The context to ask (default: the current one, else device 0's primary context).
   */
  static priorityRange(context?: Context): { leastPriority: number; greatestPriority: number } {
    const ctx = contextOf(context, 'Stream.priorityRange: context');
    const greatest = new Int32Array(1);
    drv.call(ctx, 'cuCtxGetStreamPriorityRange', drv.out32, greatest);
    return { leastPriority: drv.out32[0], greatestPriority: greatest[0] };
  }

  /**
   * The legacy default stream (CU_STREAM_LEGACY) of `context`: synchronizes with every blocking stream.
   * @param context The context whose default stream to take (default: the current one, else device 0's primary context).
   */
  static legacyDefault(context?: Context): Stream {
    return new Stream(SEALED, drv.CU_STREAM_LEGACY, openContextOf(context, 'Stream.legacyDefault'), undefined, 'Stream (legacy default)');
  }

  /**
   * Same as {@link Stream.legacyDefault}.
   * @param context The context whose default stream to take (default: the current one, else device 0's primary context).
   */
  static legacy(context?: Context): Stream {
    return Stream.legacyDefault(context);
  }

  /**
   * The per-thread default stream (CU_STREAM_PER_THREAD) of `context`.
   * @param context The context whose default stream to take (default: the current one, else device 0's primary context).
   */
  static perThread(context?: Context): Stream {
    return new Stream(SEALED, drv.CU_STREAM_PER_THREAD, openContextOf(context, 'Stream.perThread'), undefined, 'Stream (per-thread default)');
  }

  /**
   * Wraps a raw CUstream handle (from another library, or the typed layer) of `options.context`
   * (default: the current context) without owning it: close() never destroys it. 0 and 1 give the
   * legacy default stream, 2 the per-thread one. The handle is checked before any use: refused when it
   * is the handle of a stream this process destroyed or of another kind of object, when no memory is
   * mapped there, or when the driver says it belongs to another context. A handle that passes is
   * trusted: a stale or forged one that happens to look valid is undefined behaviour in the driver.
   * @param handle The raw CUstream (a number or bigint address as another library or the typed layer hands it out; 0 or 1: the legacy default stream, 2: the per-thread one).
   * @param options `context`: the context the stream belongs to (default: the current one, else device 0's primary context).
   */
  static wrap(handle: number | bigint, options: WrapOptions = {}): Stream {
    if ((handle as unknown) instanceof Stream) return handle as unknown as Stream;
    if (typeof options !== 'object' || options === null || options instanceof Context)
      throw new TypeError(`Stream.wrap: options must be { context }, got ${describe(options)}`);
    checkKeys('Stream.wrap', options, ['context']);
    const h = handleNumber('Stream.wrap: handle', handle);
    const ctx = contextOf(options.context, 'Stream.wrap: context');
    ctx.check();
    if (h === 0 || h === drv.CU_STREAM_LEGACY) return Stream.legacyDefault(ctx);
    if (h === drv.CU_STREAM_PER_THREAD) return Stream.perThread(ctx);
    checkForeignHandle('Stream.wrap', h, ctx);
    return new Stream(SEALED, h as drv.CUstream, ctx, undefined, 'Stream (wrapped)');
  }

  /**
   * Plain data naming this stream for a worker thread of this process (postMessage it); the worker
   * opens it with {@link Stream.fromDescriptor}. This Stream keeps owning it: close it once, here,
   * after the workers are done (docs/awaiting.md). Streams of a device's primary context only.
   */
  descriptor(): HandleDescriptor {
    this.check();
    this.shared = true;
    return describeHandle('Stream.descriptor', 'cuda-ts/stream', this.handle, this.context);
  }

  /**
   * The stream of {@link Stream.descriptor} in this thread (a worker of the same process): a wrapper in
   * the device's primary context that owns nothing (close() never destroys it), checked as
   * {@link Stream.wrap} checks a handle.
   * @param descriptor What Stream.descriptor() returned in the thread that owns the stream, received through postMessage.
   */
  static fromDescriptor(descriptor: HandleDescriptor): Stream {
    const d = checkDescriptor('Stream.fromDescriptor', descriptor, 'cuda-ts/stream');
    return Stream.wrap(d.handle, { context: Context.primary(d.device) });
  }

  /** The stream protocol: returns {@link Stream.handle}. */
  [cudaStream](): number {
    return this.handle;
  }

  /**
   * Throws if closed (naming `where`, default: the calling method), unusable, or a host callback of
   * this stream threw. @internal
   */
  check(where?: string): void {
    this.assertOpen(where);
    this.context.check();
    if (this.hostError !== undefined) {
      const e = this.hostError;
      this.hostError = undefined;
      throw e;
    }
  }

  /** @internal */
  fail(e: unknown): unknown {
    return drv.mark(this.context, e);
  }

  /** The CUstream_flags the stream was created with (cuStreamGetFlags). */
  get flags(): number {
    this.check();
    drv.callOnStream(this.context, this.raw, 'cuStreamGetFlags', this.raw, drv.out32);
    return drv.out32[0];
  }

  /** The stream's priority (cuStreamGetPriority); lower numbers are higher priority. */
  get priority(): number {
    this.check();
    drv.callOnStream(this.context, this.raw, 'cuStreamGetPriority', this.raw, drv.out32);
    return drv.out32[0];
  }

  private queryStatus(): boolean {
    if (this.raw <= 2) this.context.bind();
    return drv.query(this.context, 'cuStreamQuery', this.raw);
  }

  /** True when all work is done; false while some is pending (cuStreamQuery). */
  query(): boolean {
    this.check();
    return this.queryStatus();
  }

  /**
   * Blocks until the stream is idle. Throws HostCallbackPendingError instead of deadlocking while a JS
   * host callback is pending: use `await stream.synchronized()` then.
   */
  synchronize(): void {
    this.check();
    assertMayBlock('Stream.synchronize()');
    drv.callOnStream(this.context, this.raw, 'cuStreamSynchronize', this.raw);
  }

  /**
   * Resolves when the work enqueued on the stream before this call is done (later work enqueued through
   * this Stream is not waited for; work enqueued through a handle number read before this call is),
   * without blocking the event loop and without CPU while it waits (see docs/awaiting.md: a short spin
   * on the idle stream, then a sleeping waiter woken through a host function on a helper stream). Called
   * again without options before more work is enqueued, it returns the same promise. Rejects
   * with an AbortError when `options.signal` aborts, with a timeout error past `options.timeoutMs`.
   * @param options `signal` (an AbortSignal: rejects with an AbortError once it aborts), `timeoutMs` (rejects past this many ms; default no limit) and `maxIntervalMs` (the longest sleep between polls, ms; default 1).
   */
  synchronized(options?: PollOptions): Promise<void> {
    // not async: the waiter's promise itself is returned, one turn of microtasks sooner to resume
    try {
      this.check();
      // awaits of one point (nothing enqueued in between, no options) share one wait: a crowd of them costs one
      const shared = options === undefined ? this.plainWait.current : undefined;
      if (shared !== undefined) return shared;
      return this.reached('Stream.synchronized()', options, this.verifyHost, options === undefined && this.seesEveryEnqueue());
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** An owned stream not shared with other threads: no work reaches it but through this object's handle. */
  private seesEveryEnqueue(): boolean {
    return this.raw > 2 && this.owned && !this.shared;
  }

  /** {@link takeHostError} for this stream, made once: a crowd's awaits make no closure each. */
  private readonly verifyHost = (): void => this.takeHostError();

  /** Throws (once) what a host callback of this stream threw. */
  private takeHostError(): void {
    if (this.hostError === undefined) return;
    const e = this.hostError;
    this.hostError = undefined;
    throw e;
  }

  /**
   * The promise of the point the stream has reached now: idle already (cuStreamQuery), else awaited
   * through the waiter, its marker event recorded here at once or when first needed. With `share`, a
   * pending wait's promise is handed to later plain awaits until it settles or work is enqueued. @internal
   */
  reached(what: string, options?: WaitOptions, verify?: () => void, share = false): Promise<void> {
    const opts = checkWaitOptions(options, what);
    if (opts.signal?.aborted) return Promise.reject(new AbortError(whereOf(what), opts.signal.reason));
    if (this.capture) throw new ObjectsError(whereOf(what), OBJECTS_ERROR.state, 'the stream is capturing into a graph: end the capture before awaiting it');
    if (this.queryStatus()) {
      verify?.();
      return Promise.resolve();
    }
    // no marker yet (event 0) where this object sees every enqueue: while nothing more is enqueued here, an
    // idle stream is the exact answer, seen as soon as the GPU is done (a marker behind the work delays
    // that by 10-40 µs on an H100/H200). StreamPoint is fresh: the query above saw the work unfinished.
    const ev = this.seesEveryEnqueue() && marksLazily() ? 0 : this.recordMarker();
    const t = new StreamPoint(this.context, ev, this, what, this.raw, verify);
    if (ev === 0) this.unmarked.push(t);
    return share ? this.plainWait.share(t, waitFor, opts) : waitFor(t, opts);
  }

  /**
   * Runs `fn` on the event loop once the GPU has reached this point of the stream (the work enqueued
   * before is done) and resolves with what it returns (awaited when a promise), or rejects with what
   * it throws. Unlike {@link launchHostFunc}, nothing is handed to CUDA's callback thread: `fn` may
   * call CUDA, blocking waits stay allowed meanwhile (no deadlock), and later work on the stream does
   * not wait for `fn` (make it wait with an event recorded inside `fn` if it must). Takes
   * `{ signal, timeoutMs }`: a cancelled call never runs `fn`.
   * @param fn The function to run on the event loop (it may call CUDA); its result, awaited when a promise, is what the returned promise resolves with.
   * @param options `signal` (an AbortSignal: rejects with an AbortError and never runs `fn` once it aborts) and `timeoutMs` (rejects past this many ms; default no limit).
   */
  async enqueueHost<T>(fn: () => T | PromiseLike<T>, options?: WaitOptions): Promise<Awaited<T>> {
    if (typeof fn !== 'function') throw new TypeError(`Stream.enqueueHost: fn must be a function, got ${describe(fn)}`);
    this.check();
    await this.reached('Stream.enqueueHost()', options);
    return await fn();
  }

  /**
   * Makes later work on this stream wait for `event` (cuStreamWaitEvent).
   * @param event An event of this stream's context, recorded (on any stream) before the work that must be waited for.
   */
  wait(event: Event): this {
    this.check();
    const ev = checkEvent('Stream.wait', event);
    drv.callOnStream(this.context, this.handle, 'cuStreamWaitEvent', this.handle, ev.handle, 0);
    return this;
  }

  /**
   * Records `event` (or a new default event) on this stream and returns it.
   * @param event The event to record (default: a new timing event in this stream's context, returned).
   */
  record(event?: Event): Event {
    this.check();
    const ev = event === undefined ? makeEvent(this.context) : checkEvent('Stream.record', event);
    ev.record(this);
    return ev;
  }

  /**
   * Enqueues `fn` to run on the JS event loop once prior work on the stream is done. `fn` must not call
   * CUDA (it runs while CUDA's callback thread waits for it); errors it throws are reported by the next
   * call on this stream. Use `await stream.synchronized()` to wait: a blocking wait throws meanwhile.
   * @param fn The function to run on the JS event loop, with no arguments; it must not call CUDA.
   */
  launchHostFunc(fn: () => void): this {
    if (typeof fn !== 'function') throw new TypeError(`Stream.launchHostFunc: fn must be a function, got ${describe(fn)}`);
    this.check();
    const id = nextHostCall++;
    hostCalls.set(id, { fn, stream: this });
    this.pendingHostFuncs++;
    hostFuncs.pending++;
    try {
      drv.callOnStream(this.context, this.handle, 'cuLaunchHostFunc', this.handle, hostTrampoline(), BigInt(id));
    } catch (e) {
      hostCalls.delete(id);
      this.pendingHostFuncs--;
      callbackSettled(); // it will never run
      throw e;
    }
    return this;
  }

  /**
   * Begins stream capture (see Graph.capture for the scoped form). Until endCaptureHandle(), what work
   * enqueued on the stream uses is registered with the capture, and the graph keeps it alive.
   * @param mode Which CUDA calls of other threads the capture forbids: a CUstreamCaptureMode (exported by name); default CU_STREAM_CAPTURE_MODE_THREAD_LOCAL (only this thread's).
   */
  beginCapture(mode: drv.CUstreamCaptureMode = drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL): void {
    this.check();
    if (!CAPTURE_MODES.has(mode)) throw new RangeError(`Stream.beginCapture: mode must be a CUstreamCaptureMode (0, 1 or 2), got ${describe(mode)}`);
    if (this.handle <= 2) throw new TypeError('Stream.beginCapture: a default stream cannot be captured: use Stream.create()');
    if (this.capture) throw new ObjectsError('Stream.beginCapture', OBJECTS_ERROR.state, 'the stream is already capturing');
    drv.callOnStream(this.context, this.handle, 'cuStreamBeginCapture', this.handle, mode);
    this.capture = beginTracking(this.context, this.handle);
    this.capture.core.hold(this.core);
  }

  /**
   * Ends capture and returns the raw graph handle; Graph.adopt(handle) takes ownership of it, together
   * with what the captured work uses (Graph.capture does both).
   */
  endCaptureHandle(): drv.CUgraph {
    this.assertOpen();
    const holder = this.capture;
    this.capture = undefined;
    let graph = 0;
    try {
      drv.callOnStream(this.context, this.handle, 'cuStreamEndCapture', this.handle, drv.out64);
      graph = drv.outNumber();
    } finally {
      if (holder) {
        endTracking(holder, graph || undefined);
        if (!graph) holder.core.close();
      }
    }
    return graph as drv.CUgraph;
  }

  /** True while the stream is capturing into a graph (cuStreamIsCapturing). */
  get capturing(): boolean {
    this.check();
    drv.callOnStream(this.context, this.raw, 'cuStreamIsCapturing', this.raw, drv.out32);
    return drv.out32[0] === drv.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE;
  }

  toString(): string {
    return `${this.core.kind}(0x${this.raw.toString(16)})`;
  }
}

function makeEvent(ctx: Context): Event {
  return Event.create({ context: ctx });
}
function checkEvent(where: string, e: unknown): Event {
  if (!(e instanceof Event)) throw new TypeError(`${where}: event must be an Event, got ${describe(e)}`);
  e.assertUsable();
  return e;
}
