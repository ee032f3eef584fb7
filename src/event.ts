// Event: record on a stream, wait (blocking or awaited), time between two events.
import * as cu from '../generated/13.0/driver';
import * as raw from '../generated/13.0/driver/raw';
import { Context, callBound, callOnStream, contextOf } from './context';
import { Resource, assertMayBlock } from './lifecycle';
import { poll, streamHandle, type PollOptions, type StreamLike } from './stream';

const F = cu.CUevent_flags;

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

const elapsedSlot = new Float32Array(1);

/**
 * A CUDA event (cuEvent*): a marker recorded into a stream, to wait for the work before it or to time
 * the work between two of them. Free with close() or `using`.
 */
export class Event extends Resource {
  /** The driver handle (CUevent). */
  readonly handle: cu.CUevent;
  /** The context the event belongs to. */
  readonly context: Context;
  /** The `CUevent_flags` it was created with. */
  readonly flags: number;

  private constructor(handle: cu.CUevent, context: Context, flags: number) {
    super('Event', () => {
      if (!context.bindForFree()) return;
      cu.cuEventDestroy(handle);
    }, [context]);
    this.handle = handle;
    this.context = context;
    this.flags = flags;
  }

  /**
   * Creates an event (cuEventCreate) in `options.context`.
   * @throws TypeError for `interprocess` without `timing: false`; a CudaError when creation fails
   */
  static create(options: EventOptions = {}): Event {
    let flags = F.CU_EVENT_DEFAULT;
    if (options.timing === false) flags |= F.CU_EVENT_DISABLE_TIMING;
    if (options.blocking) flags |= F.CU_EVENT_BLOCKING_SYNC;
    if (options.interprocess) {
      if (options.timing !== false) throw new TypeError('an interprocess event needs { timing: false }');
      flags |= F.CU_EVENT_INTERPROCESS;
    }
    const ctx = contextOf(options.context);
    ctx.bind();
    return new Event(cu.cuEventCreate(flags), ctx, flags);
  }

  private bind(): void {
    this.assertOpen();
    this.context.bind();
  }

  /** Records the event on `stream` (default: the legacy default stream). */
  record(stream?: StreamLike): this {
    this.assertOpen();
    const h = streamHandle(stream);
    const ctx = this.context;
    const status = callOnStream(ctx, h, () => raw.cuEventRecord(this.handle, h));
    if (status !== 0) throw ctx.fail(new cu.DriverError('cuEventRecord', status));
    return this;
  }

  /** True once the work before the last record() is done. */
  query(): boolean {
    this.bind();
    try {
      return cu.cuEventQuery(this.handle) === 0;
    } catch (e) {
      throw this.context.fail(e);
    }
  }

  /** Blocks until the event completes. Refuses while a JS host callback is pending (use synchronized()). */
  synchronize(): void {
    this.assertOpen();
    assertMayBlock('Event.synchronize()');
    const status = callBound(this.context, () => raw.cuEventSynchronize(this.handle));
    if (status !== 0) throw this.context.fail(new cu.DriverError('cuEventSynchronize', status));
  }

  /** Resolves when the event completes, without blocking the event loop. */
  synchronized(options?: PollOptions): Promise<void> {
    this.bind();
    return poll(() => {
      this.context.bind();
      const status = raw.cuEventQuery(this.handle);
      if (status === 0) return true;
      if (status === cu.CUresult.CUDA_ERROR_NOT_READY) return false;
      throw this.context.fail(new cu.DriverError('cuEventQuery', status));
    }, 'Event.synchronized()', options);
  }

  /** Milliseconds from `start` to this event (both recorded with timing, both complete). */
  elapsedSince(start: Event): number {
    this.assertOpen();
    start.assertUsable();
    const status = callBound(this.context, () => raw.cuEventElapsedTime(elapsedSlot, start.handle, this.handle));
    if (status !== 0) throw this.context.fail(new cu.DriverError('cuEventElapsedTime', status));
    return elapsedSlot[0];
  }

  /** Milliseconds from this event to `end`. */
  elapsed(end: Event): number {
    return end.elapsedSince(this);
  }

  /** @internal */
  assertUsable(): void {
    this.assertOpen();
  }
}
