// What one awaited wait waits for: made by the objects (Stream, Event, SharedEvent), watched by ./waiter.ts.
import type { Context } from '../context';

/** What one wait waits for. */
export interface WaitTarget {
  /** The context of `event`. */
  readonly ctx: Context;
  /** The CUevent whose completion ends the wait; 0 while its point (a stream's end) is unmarked: see `mark`. */
  event: number;
  /** Waits of one key complete in the order they were made (a stream; an event). */
  readonly key: object;
  /** `Class.method()` for messages. */
  readonly what: string;
  /** Called once when the wait settles, however (gives a marker event back). */
  readonly done?: () => void;
  /** `event` was just recorded behind unfinished work: skip the first query (it cannot be done yet). */
  readonly fresh?: boolean;
  /** The stream whose point `event` marks (stream waits): with `parkOn: 'stream'` the wake goes there. */
  readonly stream?: number;
  /**
   * An event wait's point is this stream's end (recorded last there, nothing enqueued since): a crowd's
   * flag for it may be written there. The Event calls the waiter's `pointMoved` when it records again.
   */
  readonly flagStream?: number;
  /** Whose last wait predicts this one's duration (default `key`; an event: the stream it was recorded on). */
  readonly predictKey?: object;
  /** Called when the wait completed, before it resolves; what it throws rejects the wait instead. */
  readonly verify?: () => void;
  /**
   * A stream wait made without a marker (`event` 0): its point is the end of `stream`, so an idle stream
   * ends it. `mark()` records the marker (setting `event`); the Stream calls it before more work is
   * enqueued there, and the waiter before parking (a helper needs an event to wait for).
   */
  readonly mark?: () => void;
  /**
   * Set by the waiter when a spin resolved the wait; its `done` callback runs a moment later (see
   * resolveFirst). Makers give it `false` so that setting it keeps the object's shape.
   */
  settled?: boolean;
}
