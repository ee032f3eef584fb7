// The waiter's records (./waiter.ts): a Wait for one awaited point, and the Queue of the waits of one key
// (a Stream or an Event), which complete in order, so only its head is watched; what a queue says of itself.
import type { Context } from '../context';
import { flagReached, type FlagSlot } from './flags';
import type { WaitTarget } from './target';

export interface Wait {
  readonly target: WaitTarget;
  readonly start: number;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
  dispose: () => void;
  settled: boolean;
  /** Its wake host function is already on the awaited stream (parkOn 'stream'): parking costs no call. */
  posted: boolean;
  /** The number its queue's flag slot holds once the GPU passed this wait's point; 0: no flag. */
  flag: number;
  /** Made while more than predictMaxKeys keys were awaited: no predicted window, also once the crowd thins. */
  crowd: boolean;
}

export interface Queue {
  readonly key: object;
  readonly ctx: Context;
  readonly waits: Wait[];
  /** The wait parked (its host function enqueued on `helper`, or on its own stream when `posted`). */
  parked: Wait | undefined;
  helper: number | undefined;
  /** The helper may wait for an event far from done (a cancelled parked wait's). */
  stuck: boolean;
  /** The current park used the helper (not a host function already on the awaited stream). */
  onHelper: boolean;
  /** Parked without a host function of its own (every helper of the context was in use). */
  riding: boolean;
  /** When a full sweep last asked the driver about this flagged rider (or it began riding); ms, performance.now(). */
  askedAt: number;
  /** Spin passes over this queue (a pass asks the markers every 4th time only, see advance). */
  passes: number;
  spinning: boolean;
  /** The predicted window of the head: spin from `windowStart` to `windowEnd` (ms, performance.now()). */
  windowStart: number;
  windowEnd: number;
  windowTimer: ReturnType<typeof setTimeout> | undefined;
  /** Parking failed (no host functions here, a driver without cuStreamCreate…): poll on timers instead. */
  pollOnly: boolean;
  pollTimer: ReturnType<typeof setTimeout> | undefined;
  pollInterval: number;
  /** The flag slot its stream waits write (undefined: none, they query). */
  slot: FlagSlot | undefined;
  /** Its key's point moved (an Event recorded again): writes still in flight may land out of order, so no more flags. */
  moved: boolean;
}

/** A queue of `key` (in `ctx`) with no waits yet, not parked, spinning or timed. */
export function newQueue(key: object, ctx: Context): Queue {
  return {
    key,
    ctx,
    waits: [],
    parked: undefined,
    helper: undefined,
    stuck: false,
    onHelper: false,
    riding: false,
    askedAt: 0,
    passes: 0,
    spinning: false,
    windowStart: 0,
    windowEnd: 0,
    windowTimer: undefined,
    pollOnly: false,
    pollTimer: undefined,
    pollInterval: 0,
    slot: undefined,
    moved: false,
  };
}

/** `q` is parked without a host function of its own (its `riding` outlives the park it was set for). */
export function rides(q: Queue): boolean {
  return q.riding && q.parked !== undefined;
}

/** Takes `w` out of `q`'s waits: the oldest (as most waits settle, in order) without making an array. */
export function removeWait(q: Queue, w: Wait): void {
  if (q.waits[0] === w) return void q.waits.shift();
  const i = q.waits.indexOf(w);
  if (i > 0) q.waits.splice(i, 1);
}

/** `w` has a flag and the GPU wrote it: its work is done. */
export function flagDone(q: Queue, w: Wait): boolean {
  return w.flag !== 0 && q.slot !== undefined && flagReached(q.slot, w.flag);
}

/** What `queues` hold: waits pending, riders, and the timers of their windows and polls (waiterStats). */
export function countQueues(queues: Iterable<Queue>): { pending: number; riding: number; windowTimers: number; pollTimers: number } {
  const n = { pending: 0, riding: 0, windowTimers: 0, pollTimers: 0 };
  for (const q of queues) {
    n.pending += q.waits.length;
    if (rides(q)) n.riding++;
    if (q.windowTimer !== undefined) n.windowTimers++;
    if (q.pollTimer !== undefined) n.pollTimers++;
  }
  return n;
}

/** What the waiter holds now and has done so far (see waiterStats). */
export interface WaiterStats {
  /** Waits not settled yet. */
  pending: number;
  /** Streams and events with waits pending. */
  queues: number;
  /** Queues parked: waiting for a wake, a ride check or a sweep. */
  parked: number;
  /** Parked queues without a helper stream of their own (see HELPERS_PER_CONTEXT). */
  riding: number;
  /** Queues in their spin or predicted window. */
  spinning: number;
  /** Queues asleep until their predicted window. */
  windowTimers: number;
  /** A slice, sweep, deferred settling or poll is scheduled. */
  timers: boolean;
  /** A pool thread sleeps on the wake channel. */
  armed: boolean;
  /** Parks since the thread loaded the waiter (a host function enqueued, or a ride begun). */
  parks: number;
  /** Wakes of the event loop by the wake channel, since the waiter loaded. */
  wakes: number;
  /** Slices of the spin run, since the waiter loaded. */
  spinTicks: number;
  /** Passes of the spin over its queues, since the waiter loaded. */
  spinPasses: number;
  /** Flag writes enqueued (cuStreamWriteValue32), since the waiter loaded. */
  flagWrites: number;
  /** The wake channel in use ('sem' or 'pipe'; 'poll' where none exists). */
  channel: string;
}
