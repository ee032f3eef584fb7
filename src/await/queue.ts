// The waiter's records (./waiter.ts): a Wait for one awaited point, and the Queue of the waits of one key
// (a Stream or an Event), which complete in order, so only its head is watched.
import type { Context } from '../context';
import type { FlagSlot } from './flags';
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
