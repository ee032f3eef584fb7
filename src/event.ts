// Event: record on a stream, wait (blocking or awaited), time between two events; interprocess events
// shared through a 64-byte IPC handle (cuIpcGetEventHandle / cuIpcOpenEventHandle).
import * as drv from './driver';
import { Context, contextOf } from './context';
import { checkKeys, describe } from './describe';
import { Resource, assertMayBlock } from './lifecycle';
import { noteUse } from './graph/capture';
import { type PollOptions } from './poll';
import { pointMoved, waitFor, type WaitTarget } from './await/waiter';
import { SharedWait } from './await/shared-wait';
import { checkDescriptor, describeHandle, type HandleDescriptor } from './await/share';
import type { Stream, StreamLike } from './stream';
import { SEALED, type Sealed, checkSealed } from './sealed';

/** stream.ts's toStream (see {@link toStream}). */
let streamOf: ((s: unknown, where: string) => Stream | undefined) | undefined;
/**
 * The Stream for a stream argument, through stream.ts's toStream, required on first use: stream.ts
 * imports this module (Stream.record, Stream.wait), so this one cannot import it at load time, and a
 * program that touched only Event (the bundle loads what a program touches) still takes a stream.
 */
function toStream(s: unknown, where: string): Stream | undefined {
  return (streamOf ??= (require('./stream') as typeof import('./stream')).toStream)(s, where);
}

const F = drv.CUevent_flags;

/** Options of {@link Event.create}. */
export interface EventOptions {
  /** Record timestamps (default true; false is cheaper for pure synchronization). */
  timing?: boolean;
  /** synchronize() sleeps on an OS primitive instead of spinning. */
  blocking?: boolean;
  /** Shareable between processes (requires timing: false). */
  interprocess?: boolean;
  /** The context to create the event in (default: the current one, else device 0's primary context). */
  context?: Context;
}

function flag(name: string, v: unknown): boolean {
  if (v !== undefined && typeof v !== 'boolean') throw new TypeError(`Event.create: ${name} must be a boolean, got ${describe(v)}`);
  return v === true;
}

/**
 * A CUDA event (cuEvent*): a marker recorded into a stream, to wait for the work before it or to time
 * the work between two of them. Free with close() or `using`.
 * @example
 * ```ts
 * import { DeviceBuffer, Event, Stream } from 'cuda-ts/objects';
 *
 * async function timeUpload(bytes: number): Promise<number> {
 *   using stream = Stream.create();
 *   using buf = DeviceBuffer.alloc(bytes);
 *   using start = Event.create();
 *   using end = Event.create();
 *   start.record(stream);
 *   buf.copyFrom(new Uint8Array(bytes), { stream });
 *   end.record(stream);
 *   await end.completed(); // without blocking the event loop
 *   return end.elapsedSince(start); // milliseconds
 * }
 * ```
 */
export class Event extends Resource {
  /** The driver handle (CUevent). */
  readonly handle: drv.CUevent;
  /** The context the event belongs to. */
  readonly context: Context;
  /** The `CUevent_flags` it was created with. */
  readonly flags: number;
  /** The stream of the last record() (a fresh event's awaited wait is predicted from that stream's waits). */
  private recordedOn: Stream | undefined;
  /** `recordedOn.enqueueCount` right after the last record(): while unchanged, the record is that stream's end. */
  private recordedAt = -1;
  /** Records of this event may come from elsewhere (not owned, or a descriptor was handed out). */
  private recordedElsewhere: boolean;
  /** A plain `synchronized()` pending for the current record, shared by later plain calls. */
  private readonly plainWait = new SharedWait();

  private constructor(seal: Sealed, handle: drv.CUevent, context: Context, flags: number, owned = true) {
    checkSealed(seal, 'Event', 'Event.create()');
    super(
      owned ? 'Event' : 'Event (shared)',
      owned
        ? () => {
            drv.forgetHandle(handle);
            drv.release(context, 'cuEventDestroy', handle);
          }
        : undefined,
      [context],
    );
    this.handle = handle;
    this.context = context;
    this.flags = flags;
    this.recordedElsewhere = !owned;
    drv.noteHandle(handle, 'CUevent');
  }

  /**
   * Creates an event (cuEventCreate) in `options.context`.
   * @param options `timing` (record timestamps; default true, false is cheaper for pure synchronization), `blocking` (synchronize() sleeps instead of spinning; default false), `interprocess` (shareable with other processes; needs `timing: false`) and `context` (default: the current one, else device 0's primary context).
   * @throws TypeError for a non-boolean flag or `interprocess` without `timing: false`; a CudaError when creation fails
   */
  static create(options: EventOptions = {}): Event {
    if (typeof options !== 'object' || options === null) throw new TypeError(`Event.create: options must be an object, got ${describe(options)}`);
    checkKeys('Event.create', options, ['timing', 'blocking', 'interprocess', 'context']);
    let flags = F.CU_EVENT_DEFAULT;
    const timing = options.timing === undefined ? true : flag('timing', options.timing);
    if (!timing) flags |= F.CU_EVENT_DISABLE_TIMING;
    if (flag('blocking', options.blocking)) flags |= F.CU_EVENT_BLOCKING_SYNC;
    if (flag('interprocess', options.interprocess)) {
      if (timing) throw new TypeError('Event.create: an interprocess event needs { timing: false }');
      flags |= F.CU_EVENT_INTERPROCESS;
    }
    const ctx = contextOf(options.context, 'Event.create: context');
    drv.call(ctx, 'cuEventCreate', drv.out64, flags);
    return new Event(SEALED, drv.outNumber() as drv.CUevent, ctx, flags);
  }

  /**
   * Records the event on `stream` (default: the legacy default stream of the event's context).
   * @param stream The stream to record on, a Stream or a stream-protocol object of the event's context (default: the context's legacy default stream).
   */
  record(stream?: StreamLike): this {
    this.assertOpen();
    const s = toStream(stream, 'Event.record: stream');
    const h = s === undefined ? 0 : s.handle;
    if (s !== undefined && s.context !== this.context)
      throw new TypeError(`Event.record: the stream belongs to ${String(s.context)}, the event to ${String(this.context)}`);
    noteUse(this.context, h, this);
    drv.callOnStream(this.context, h, 'cuEventRecord', this.handle, h);
    this.recordedOn = s;
    this.recordedAt = s === undefined ? -1 : s.enqueueCount;
    this.plainWait.drop();
    pointMoved(this); // a pending wait's flag marks the old point
    return this;
  }

  /** True once the work before the last record() is done. */
  query(): boolean {
    this.assertOpen();
    return drv.query(this.context, 'cuEventQuery', this.handle);
  }

  /** Blocks until the event completes. Refuses while a JS host callback is pending (use synchronized()). */
  synchronize(): void {
    this.assertOpen();
    assertMayBlock('Event.synchronize()');
    drv.callHinted(this.context, 'cuEventSynchronize', this.handle);
  }

  /**
   * Resolves when the work before the event's last record is done, without blocking the event loop
   * and without CPU while it waits (see docs/awaiting.md). Rejects with an AbortError when
   * `options.signal` aborts, with a timeout error past `options.timeoutMs`. Re-recording the event
   * while a wait on it is pending moves what that wait waits for (as cuEventQuery would). Called again
   * without options before the event is recorded again, it returns the same pending promise.
   * @param options `signal` (an AbortSignal: rejects with an AbortError once it aborts), `timeoutMs` (rejects past this many ms; default no limit) and `maxIntervalMs` (the longest sleep between polls, ms; default 1).
   */
  synchronized(options?: PollOptions): Promise<void> {
    this.assertOpen();
    const shared = options === undefined ? this.plainWait.current : undefined;
    if (shared !== undefined) {
      // plain awaits of one record share one wait (a crowd of them costs one); done already: at once
      try {
        return this.query() ? Promise.resolve() : shared;
      } catch (e) {
        return Promise.reject(e);
      }
    }
    const t: WaitTarget = {
      ctx: this.context,
      event: this.handle,
      key: this,
      what: 'Event.synchronized()',
      predictKey: this.recordedOn,
      flagStream: this.recordedElsewhere ? undefined : this.recordedOn?.endHandle(this.recordedAt),
      done: () => this.plainWait.settled(t),
      settled: false,
    };
    return options === undefined ? this.plainWait.share(t, waitFor, undefined) : waitFor(t, options);
  }

  /**
   * Resolves when the event completes (same as {@link Event.synchronized}): `await event.completed()`.
   * @param options `signal` (an AbortSignal: rejects with an AbortError once it aborts), `timeoutMs` (rejects past this many ms; default no limit) and `maxIntervalMs` (the longest sleep between polls, ms; default 1).
   */
  completed(options?: PollOptions): Promise<void> {
    this.assertOpen('Event.completed'); // named here: JavaScriptCore's tail call drops this frame from the stack
    return this.synchronized(options);
  }

  /**
   * The 64-byte IPC handle of this interprocess event (cuIpcGetEventHandle), to hand to another process
   * of this machine, which opens it with {@link Event.fromIpcHandle}.
   * @throws TypeError unless the event was created with `{ interprocess: true, timing: false }`
   */
  ipcHandle(): Uint8Array {
    this.assertOpen();
    if (!(this.flags & F.CU_EVENT_INTERPROCESS)) throw new TypeError('Event.ipcHandle: the event was not created with { interprocess: true, timing: false }');
    const out = new Uint8Array(64);
    drv.call(this.context, 'cuIpcGetEventHandle', out, this.handle);
    return out;
  }

  /**
   * Opens an event of another process from its IPC handle (cuIpcOpenEventHandle) in `options.context`
   * (default: the current context, else device 0's primary context; it must be on the exporter's device).
   * The result records, waits and queries like any event (no timing); close() releases it here only.
   * @param handle The 64 bytes the exporting process got from ipcHandle().
   * @param options `context`: where to open it, on the exporter's device (default: the current context, else device 0's primary context).
   */
  static fromIpcHandle(handle: Uint8Array, options: { context?: Context } = {}): Event {
    if (!(handle instanceof Uint8Array) || handle.byteLength !== 64)
      throw new TypeError(
        `Event.fromIpcHandle: handle must be the 64-byte Uint8Array from Event.ipcHandle(), got ${describe(handle)}${handle instanceof Uint8Array ? ` of ${handle.byteLength} bytes` : ''}`,
      );
    if (typeof options !== 'object' || options === null) throw new TypeError(`Event.fromIpcHandle: options must be an object, got ${describe(options)}`);
    const ctx = contextOf(options.context, 'Event.fromIpcHandle: context');
    // CUipcEventHandle is passed by value: koffi takes it as its record (char reserved[64]).
    const record = { reserved: Array.from(new Int8Array(handle.buffer, handle.byteOffset, 64)) };
    drv.call(ctx, 'cuIpcOpenEventHandle', drv.out64, record);
    return new Event(SEALED, drv.outNumber() as drv.CUevent, ctx, F.CU_EVENT_INTERPROCESS | F.CU_EVENT_DISABLE_TIMING);
  }

  /**
   * Plain data naming this event for a worker thread of this process (postMessage it); the worker
   * opens it with {@link Event.fromDescriptor}. This Event keeps owning it: close it once, here, after
   * the workers are done (docs/awaiting.md). Events of a device's primary context only.
   */
  descriptor(): HandleDescriptor {
    this.assertOpen();
    this.recordedElsewhere = true; // a worker may record it: its awaits no longer trust a flag
    return describeHandle('Event.descriptor', 'cuda-ts/event', this.handle, this.context, this.flags);
  }

  /**
   * The event of {@link Event.descriptor} in this thread (a worker of the same process), in the
   * device's primary context: it records, waits and queries like the original; close() drops this
   * wrapper only (the original's owner destroys the event).
   * @param descriptor What Event.descriptor() returned in the thread that owns the event, received through postMessage.
   */
  static fromDescriptor(descriptor: HandleDescriptor): Event {
    const d = checkDescriptor('Event.fromDescriptor', descriptor, 'cuda-ts/event');
    return new Event(SEALED, d.handle as drv.CUevent, Context.primary(d.device), d.flags ?? 0, false);
  }

  /**
   * Milliseconds from `start` to this event (both recorded with timing, both complete).
   * @param start An event with timing, recorded and complete before this one.
   */
  elapsedSince(start: Event): number {
    this.assertOpen();
    if (!(start instanceof Event)) throw new TypeError(`Event.elapsedSince: start must be an Event, got ${describe(start)}`);
    start.assertUsable();
    drv.callHinted(this.context, 'cuEventElapsedTime', drv.outF32, start.handle, this.handle);
    return drv.outF32[0];
  }

  /**
   * Milliseconds from this event to `end`.
   * @param end An event with timing, recorded and complete after this one.
   */
  elapsed(end: Event): number {
    if (!(end instanceof Event)) throw new TypeError(`Event.elapsed: end must be an Event, got ${describe(end)}`);
    return end.elapsedSince(this);
  }

  /** @internal */
  assertUsable(): void {
    this.assertOpen();
  }
}
