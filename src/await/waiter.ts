// The waiter: every awaited GPU wait of the objects layer (Stream.synchronized, Event.synchronized,
// Stream.enqueueHost, SharedEvent.synchronized) ends here. A wait is "this event completed", or for a
// stream wait whose point is not marked yet (WaitTarget.mark), "this stream is idle". Done already:
// resolved at once; else one loop spins on every new wait for a while, then it parks (a helper
// stream's host function wakes one pool thread: ./wake.ts, ./markers.ts) or rides on the next wake,
// and a predicted window spins again around its expected end. Waits of one key complete in order,
// so only the oldest of a key is watched. Nothing is left behind once no wait is pending (tests check
// waiterStats()). The protocol and its measurements: docs/awaiting.md.
import * as drv from '../driver';
import type { Context } from '../context';
import { poll } from '../poll';
import { cancellable, checkWaitOptions, onCancel, whereOf, type WaitOptions } from './abort';
import { OBJECTS_ERROR, ObjectsError } from '../errors';
import { giveHelper, takeHelper, HELPERS_PER_CONTEXT } from './markers';
import { giveSlot, postFlag, takeSlot } from './flags';
import { countQueues, flagDone, newQueue, removeWait, rides, type Queue, type Wait, type WaiterStats } from './queue';
import { wakeChannel, type WakeChannel } from './wake';
import { settings } from './settings';
import { setSliceRunner, sliceDue, sliceNextTurn, sliceSoon } from './slices';
import type { WaitTarget } from './target';

export { configureWaits, type WaiterSettings } from './settings';
export type { WaitTarget } from './target';
export type { WaiterStats } from './queue';

/** A wake settles at most this long (ms) of completed waits before yielding to the event loop. */
const SETTLE_BUDGET_MS = 0.5;
/** While a queue rides (no helper of its own), parked waits are checked this often (ms). */
const RIDE_CHECK_MS = 4;
/** A full sweep asks the driver about a flagged rider at least once in this many sweeps (see sweepCheck). */
const ASK_RIDER_SWEEPS = 8;
/** An unmarked wait waiting for its predicted window is checked this often (ms). */
const UNMARKED_CHECK_MS = 1;

const queues = new Map<object, Queue>();
const spinning = new Set<Queue>();
/** The last wait's duration (ms) by key, for the predicted window. */
let lastDuration = new WeakMap<object, number>();
let parkedCount = 0;
/** Queues whose completed waits a wake had no time left to settle: settled on the next turn. */
const deferred = new Set<Queue>();
let deferTimer: ReturnType<typeof setImmediate> | undefined;
/** performance.now() past which this turn settles no more waits (see beginTurn). */
let budgetEnd = 0;
let sweeper: ReturnType<typeof setTimeout> | undefined;
/** When the pending sweep runs (performance.now()); Infinity when none is pending. */
let sweepDue = Infinity;
/** When a sweep last checked every parked queue (the ride checks between check the riders only). */
let lastFullSweep = 0;
/** When the riders were last asked (a ride check, or a wake that settled a wait). */
let lastRiderCheck = -Infinity;
let channelInUse: WakeChannel | undefined;
const counters = { parks: 0, wakes: 0, spinTicks: 0, spinPasses: 0, flagWrites: 0 };

const now = (): number => performance.now();
const RESOLVED = Promise.resolve();
const NOT_READY: number = drv.CUresult.CUDA_ERROR_NOT_READY;
setSliceRunner(spinSlice);

/** The wait's point was reached: its event completed, or (unmarked) its stream is idle; throws what the query throws. */
function query(t: WaitTarget): boolean {
  if (t.event !== 0) return drv.query(t.ctx, 'cuEventQuery', t.event);
  // unmarked: marking failed, or it waits for its window; a closed stream's handle may name another one now
  if (keyClosed(t)) throw new ObjectsError(whereOf(t.what), OBJECTS_ERROR.closed, 'the stream was closed before the awaited point could be marked');
  return t.stream !== undefined && drv.query(t.ctx, 'cuStreamQuery', t.stream);
}

/** The wait's key (its Stream) was closed. */
function keyClosed(t: WaitTarget): boolean {
  return (t.key as { closed?: boolean }).closed === true;
}

/**
 * Stream waits are made without a marker while they park on helpers and write no flag: an idle
 * stream ends them, seen as soon as the GPU is done, where a marker recorded behind the work delays
 * that by 10-40 µs (H100, H200). The Stream marks the point before more work is enqueued.
 */
export function marksLazily(): boolean {
  return settings.parkOn === 'helper' && settings.flags !== true;
}

/**
 * Resolves when `target.event` completes; rejects with what its query threw, an AbortError, or a
 * timeout error (options checked first, TypeError/RangeError naming `target.what`).
 */
export function waitFor(target: WaitTarget, options?: WaitOptions): Promise<void> {
  let opts: WaitOptions;
  try {
    opts = checkWaitOptions(options, target.what);
  } catch (e) {
    target.done?.();
    throw e;
  }
  let ready: boolean;
  try {
    ready = opts.signal?.aborted !== true && target.fresh !== true && query(target); // an aborted signal rejects below
  } catch (e) {
    target.done?.();
    return Promise.reject(e);
  }
  if (ready) {
    target.done?.();
    try {
      target.verify?.();
    } catch (e) {
      return Promise.reject(e);
    }
    return Promise.resolve();
  }
  const channel = wakeChannel();
  if (channel === null) {
    try {
      if (target.event === 0) target.mark?.(); // the polling fallback queries events
    } catch (e) {
      target.done?.();
      return Promise.reject(e);
    }
    return pollFallback(target, opts);
  }
  channelInUse = channel;
  return new Promise<void>((resolve, reject) => {
    const w: Wait = { target, start: now(), resolve, reject, dispose: noop, settled: false, posted: false, flag: 0, crowd: false };
    // an aborted signal settles it here; a plain wait makes no cancel closure
    if (cancellable(opts)) w.dispose = onCancel(opts, target.what, (e) => cancel(w, e));
    if (w.settled) return;
    if (settings.parkOn === 'stream' && target.stream !== undefined) postOnStream(w, target.stream, channel);
    enqueue(w);
  });
}

/** parkOn 'stream': the wake host function right behind the marker on the awaited stream. */
function postOnStream(w: Wait, stream: number, channel: WakeChannel): void {
  try {
    drv.callOnStream(w.target.ctx, stream, 'cuLaunchHostFunc', stream, channel.hostFn, channel.userData);
    w.posted = true;
  } catch {
    // a stream that refuses host functions: this wait parks on a helper (or polls) instead
  }
}

/** Starts a turn of the event loop's work for the waiter: it settles waits for SETTLE_BUDGET_MS at most. */
function beginTurn(): void {
  budgetEnd = now() + SETTLE_BUDGET_MS;
}

function pollFallback(target: WaitTarget, opts: WaitOptions): Promise<void> {
  const p = poll(() => query(target), target.what, opts);
  const done = (): void => target.done?.();
  return p.then(
    () => {
      done();
      target.verify?.();
    },
    (e) => {
      done();
      throw e;
    },
  );
}

function noop(): void {}

function enqueue(w: Wait): void {
  let q = queues.get(w.target.key);
  if (q === undefined) {
    q = newQueue(w.target.key, w.target.ctx);
    queues.set(q.key, q);
    if (spinning.size > 0 && queues.size > settings.spinMaxKeys) endSpins();
  }
  w.crowd = queues.size > settings.predictMaxKeys;
  // in a crowd (more keys than helpers) most waits ride: a flag makes their checks memory reads (not on
  // a default stream, where the write would also order the other streams' work behind it); an event
  // wait gets one where its record is a stream's end
  const h = w.target.stream ?? w.target.flagStream;
  const crowd = settings.flags === 'crowd' && crowded() && h !== undefined && h > 2;
  if (crowd || (settings.flags === true && w.target.stream !== undefined)) w.flag = flagFor(q, h!);
  q.waits.push(w);
  if (q.waits.length === 1) startHead(q);
}

/** More keys are awaited than a context has helpers: most queues ride. */
function crowded(): boolean {
  return queues.size > HELPERS_PER_CONTEXT;
}

/**
 * The point of `key`'s waits moved (an Event recorded again): flags posted for the old point no longer
 * say they are done, so they ask the driver from now on, and later waits of the key get none (the old
 * write, on another stream, could land after a new one and hide it).
 */
export function pointMoved(key: object): void {
  const q = queues.get(key);
  if (q === undefined) return;
  q.moved = true;
  for (const w of q.waits) w.flag = 0;
}

/** Posts a flag write on stream `h` for a new wait of `q` (its point is the stream's end now); 0: none. */
function flagFor(q: Queue, h: number): number {
  if (q.moved) return 0;
  q.slot ??= takeSlot(q.ctx);
  const value = q.slot === undefined ? 0 : postFlag(q.ctx, h, q.slot);
  if (value !== 0) counters.flagWrites++;
  return value;
}

/** The head of `q` changed (a new wait, or the old head settled): plan its spin, window and park. */
function startHead(q: Queue): void {
  const head = q.waits[0];
  // a crowd's tail thins to a few keys, but its windows would each spin ~1.5 ms for waits the crowd's wakes end
  const d = settings.predict && !head.crowd && queues.size <= settings.predictMaxKeys ? lastDuration.get(head.target.predictKey ?? q.key) : undefined;
  if (d !== undefined && d * 1000 > settings.spinMicros && d <= settings.predictUpToMs) {
    // a timer fires 0-1 ms late; the window costs ~1.5 ms + 1% of the wait of CPU
    q.windowStart = head.start + d - (1.2 + 0.005 * d);
    q.windowEnd = head.start + d + (0.3 + 0.005 * d);
  } else {
    q.windowStart = q.windowEnd = 0;
  }
  clearWindowTimer(q);
  decide(q);
}

/** In its first spinMicros while at most spinMaxKeys keys are awaited, or in its predicted window while at most predictMaxKeys are. */
function inSpin(q: Queue, t: number): boolean {
  if (t - q.waits[0].start < settings.spinMicros / 1000 && queues.size <= settings.spinMaxKeys) return true;
  return t >= q.windowStart && t < q.windowEnd && queues.size <= settings.predictMaxKeys; // a window planned before a crowd formed
}

/** Spin, park, or sleep until the predicted window, for the head of `q` at this instant. */
function decide(q: Queue): void {
  const t = now();
  if (inSpin(q, t)) {
    startSpinning(q);
    return;
  }
  stopSpinning(q);
  if (q.pollOnly) return pollQueue(q);
  if (q.waits[0].target.event === 0 && q.windowStart > t) return checkUntilWindow(q, t);
  if (q.parked !== q.waits[0]) park(q);
  if (q.pollOnly) return pollQueue(q); // parking just failed
  if (q.windowStart > t && q.windowTimer === undefined && q.waits.length > 0) {
    q.windowTimer = setTimeout(() => {
      q.windowTimer = undefined;
      if (q.waits.length > 0 && queues.get(q.key) === q) decide(q); // spins, unless a crowd formed since
    }, q.windowStart - t);
  }
}

/**
 * An unmarked wait before its predicted window: its stream is asked every UNMARKED_CHECK_MS until the
 * window, whose spin then sees it idle at once (parking would record a marker, delaying that).
 */
function checkUntilWindow(q: Queue, t: number): void {
  if (q.windowTimer !== undefined) return;
  q.windowTimer = setTimeout(
    () => {
      q.windowTimer = undefined;
      if (q.waits.length === 0 || queues.get(q.key) !== q) return;
      beginTurn();
      // at the window: spin (unless a crowd formed since); a late timer past it, or a crowd: park
      if (!advance(q)) decide(q);
    },
    Math.min(UNMARKED_CHECK_MS, q.windowStart - t),
  );
}

/** Polls `q` on timers growing by 0.25 ms up to 1 ms (today's poll()), where parking is impossible. */
function pollQueue(q: Queue): void {
  if (q.pollTimer !== undefined) return;
  q.pollInterval = Math.min(1, q.pollInterval + 0.25);
  q.pollTimer = setTimeout(() => {
    q.pollTimer = undefined;
    beginTurn();
    if (!advance(q) && q.waits.length > 0) pollQueue(q);
  }, q.pollInterval);
}

function clearWindowTimer(q: Queue): void {
  if (q.windowTimer !== undefined) clearTimeout(q.windowTimer);
  q.windowTimer = undefined;
}

/** A crowd formed (see inSpin): the queues spinning since before it park now, the oldest first (helpers go first come, first served). */
function endSpins(): void {
  const t = now();
  for (const q of [...spinning]) if (!inSpin(q, t)) decide(q);
}

function startSpinning(q: Queue): void {
  if (!q.spinning) {
    q.spinning = true;
    spinning.add(q);
  }
  sliceSoon();
}

function stopSpinning(q: Queue): void {
  q.spinning = false;
  spinning.delete(q);
}

/**
 * One slice of the spin: queries every spinning queue back to back until one settles (then returns,
 * so that the resumed code runs now) or the slice is over; then yields to the event loop.
 */
function spinSlice(): void {
  if (spinning.size === 0) return;
  counters.spinTicks++;
  let t = now();
  budgetEnd = t + SETTLE_BUDGET_MS;
  const sliceEnd = t + settings.spinSliceMicros / 1000;
  if (spinning.size === 1 && spinLone(spinning.values().next().value as Queue, sliceEnd)) {
    if (spinning.size > 0) sliceNextTurn();
    return;
  }
  for (;;) {
    let settled = false;
    let asked = 0;
    let outOfTime = false;
    counters.spinPasses++;
    for (const q of spinning) {
      if (advance(q, 'spin'))
        settled = true; // startHead re-planned the queue
      else if (q.waits.length > 0 && !inSpin(q, t)) decide(q);
      // a crowd's first pass (hundreds of queues) must not hold the loop: the rest go first next slice
      if ((++asked & 7) === 0 && now() >= sliceEnd) {
        toBack(q);
        outOfTime = true;
        break;
      }
    }
    if (settled || outOfTime || spinning.size === 0) break;
    t = now();
    if (t >= sliceEnd) break;
  }
  if (spinning.size > 0) sliceNextTurn();
}

/**
 * The spin of a lone queue with one plain wait (the common `await stream.synchronized()`): its handle
 * queried back to back through the bound native function, no pass bookkeeping in between, so that the
 * GPU's end is seen and the awaiting code resumed as a bare query loop would. False: not such a queue,
 * or a query failed (the general pass handles it).
 */
function spinLone(q: Queue, sliceEnd: number): boolean {
  const w = q.waits[0];
  const t = w.target;
  // an idle stream has reached every point on it: asked first, as in a pass (the marker every 4th time)
  const stream = t.stream !== undefined && t.stream > 2 && !keyClosed(t) ? t.stream : 0;
  const event = t.event;
  if (q.waits.length !== 1 || w.flag !== 0 || (event === 0 && stream === 0)) return false;
  let streamQuery: ReturnType<typeof drv.native> | undefined;
  let eventQuery: ReturnType<typeof drv.native> | undefined;
  try {
    if (stream !== 0) streamQuery = drv.native('cuStreamQuery');
    if (event !== 0) eventQuery = drv.native('cuEventQuery');
    drv.bindHinted(t.ctx);
  } catch {
    return false; // the general pass's query reports it
  }
  for (let i = 1; ; i++) {
    counters.spinPasses++;
    const status = (eventQuery !== undefined && (streamQuery === undefined || (i & 3) === 0) ? eventQuery(event) : streamQuery!(stream)) as number;
    if (status === 0) {
      resolveFirst(q, w);
      return true;
    }
    if (status !== NOT_READY) return false;
    if ((i & 7) !== 0) continue;
    const tNow = now();
    if (tNow >= sliceEnd) return true;
    if (!inSpin(q, tNow)) {
      decide(q);
      return true;
    }
  }
}

/** Moves the spinning queues up to `last` (in the spin's order) behind the others. */
function toBack(last: Queue): void {
  for (const q of [...spinning]) {
    spinning.delete(q);
    spinning.add(q);
    if (q === last) return;
  }
}

/**
 * Who checks a queue: a pass of the spin, a rider's check (an unreached flag is its answer), or a
 * wake, sweep or timer (asks the driver).
 */
type Check = 'spin' | 'ride' | 'ask';

/**
 * Resolves the completed waits at the front of `q` (rejects one whose query throws); returns true when
 * the head changed (then the queue has been re-planned, or dropped when empty).
 */
function advance(q: Queue, check: Check = 'ask'): boolean {
  let changed = false;
  const spinPass = check === 'spin';
  // a flagged head not reached yet: a spin pass reads memory only (a query every 64th pass surfaces errors)
  const flaggedSpin = spinPass && q.waits[0].flag !== 0 && !flagDone(q, q.waits[0]);
  if (flaggedSpin && (++q.passes & 63) !== 0) return false;
  // wakes, sweeps and ride checks: one query while the head is not done (waits of a key end in order)
  const head0 = spinPass ? undefined : headDone(q, check === 'ride');
  if (head0 === false) return false;
  // waits of a key complete in order: when the newest is done, so is every one before it (one query);
  // an idle stream has reached every marker recorded on it
  const newest = q.waits[q.waits.length - 1];
  const idle = flagDone(q, newest) || streamIdle(newest);
  // a spin pass asks the markers only every 4th pass once the stream answered (work after the marker
  // keeps the stream busy): one query per pass in the common case
  // (a flagged head's 64th pass asks both: its own count, so that it stays one pass in 64)
  if (!idle && spinPass && !flaggedSpin && (newest.target.stream ?? 0) > 2 && (q.passes++ & 3) !== 0) return false;
  // (a busy stream says nothing about its newest marker; waits of one event all ask the same handle)
  const askNewest = !idle && (newest.target.stream ?? 0) <= 2 && newest.target.event !== q.waits[0].target.event;
  const allDone = idle || (askNewest && queryQuietly(newest));
  let doneEvent = 0;
  let last: Wait | undefined;
  for (let n = 0; q.waits.length > 0; n++) {
    if ((n & 31) === 31 && now() > budgetEnd) {
      if (last !== undefined) lastDuration.set(last.target.predictKey ?? q.key, now() - last.start);
      deferSettling(q); // a crowd completed at once: the rest on the next turn, the loop stays responsive
      return true;
    }
    const head = q.waits[0];
    // the wait before asked this very handle, or the GPU wrote this wait's flag
    let ready = (n === 0 && head0 === true) || allDone || (doneEvent !== 0 && head.target.event === doneEvent) || flagDone(q, head);
    if (!ready) {
      try {
        ready = query(head.target);
      } catch (e) {
        settle(head, e, q);
        changed = true;
        continue;
      }
    }
    if (!ready) break;
    doneEvent = head.target.event;
    last = head;
    settle(head, undefined, q);
    changed = true;
  }
  if (changed) headSettled(q, last, spinPass);
  return changed;
}

/**
 * The head of `q` settled (`last`: the newest wait settled, if any): learn its duration and re-plan `q`,
 * after the awaiting code when the spin saw it (its reaction is queued already: it resumes first).
 */
function headSettled(q: Queue, last: Wait | undefined, spinPass: boolean): void {
  // the newest wait settled predicts the next one's duration (one map write, not one per wait)
  const learned = last === undefined ? undefined : durationOf(q, last);
  if (!spinPass) return keepBooks(q, learned, true);
  if (q.waits.length === 0) stopSpinning(q);
  void RESOLVED.then(() => keepBooks(q, learned)); // not queueMicrotask: Node makes an AsyncResource per call
}

/** The key whose next wait `w`'s duration predicts, and that duration (ms, until now). */
function durationOf(q: Queue, w: Wait): readonly [object, number] {
  return [w.target.predictKey ?? q.key, now() - w.start];
}

/** After `q`'s head settled: learn its duration, then re-plan `q` (or drop it when empty). */
function keepBooks(q: Queue, learned: readonly [object, number] | undefined, asked = false): void {
  if (learned !== undefined) lastDuration.set(learned[0], learned[1]);
  if (queues.get(q.key) === q) afterHeadChange(q, asked && crowded());
  else if (parkedCount === 0) quiesce();
}

/**
 * Whether the head of `q` is done; undefined when its query throws (the in-order pass then reports it).
 * A rider's unreached flag is its answer (full sweeps still query: a failed context writes no flag).
 */
function headDone(q: Queue, riding: boolean): boolean | undefined {
  const head = q.waits[0];
  if (flagDone(q, head)) return true;
  if (riding && head.flag !== 0) return false;
  try {
    return query(head.target);
  } catch {
    return undefined;
  }
}

/** A stream wait whose stream is idle (cuStreamQuery); false for others, or when the query throws. */
function streamIdle(w: Wait): boolean {
  const h = w.target.stream;
  if (h === undefined || h <= 2) return false; // the default streams belong to whichever context is current
  if (keyClosed(w.target)) return false; // its handle may name another stream now
  try {
    return drv.query(w.target.ctx, 'cuStreamQuery', h);
  } catch {
    return false;
  }
}

/** True when `w`'s event is done; false when not, or when its query throws (the in-order pass reports it). */
function queryQuietly(w: Wait): boolean {
  try {
    return query(w.target);
  } catch {
    return false;
  }
}

function deferSettling(q: Queue): void {
  deferred.add(q);
  deferTimer ??= setImmediate(settleDeferred);
}

function settleDeferred(): void {
  deferTimer = undefined;
  beginTurn();
  for (const q of [...deferred]) {
    deferred.delete(q);
    // its head changed without a plan: planned now, unless this check settles more (which plans it)
    if (queues.get(q.key) === q && !advance(q)) startHead(q);
  }
}

/**
 * The head of `q` changed: drop or re-plan it. `lookAgain` (a crowd's wake, ride check or sweep settled
 * some of its waits): its next head is asked once more on the next turn before it parks, since the GPU
 * is often still running the small operations between their points (markers, flag writes), and a park
 * costs a host function and a wake.
 */
function afterHeadChange(q: Queue, lookAgain = false): void {
  if (q.waits.length === 0) dropQueue(q);
  else if (lookAgain) deferSettling(q);
  else startHead(q);
  if (parkedCount === 0) quiesce();
}

/**
 * The spin saw the lone wait `w` done: it resolves at once, and the rest (its cancellation, its place in
 * `q`, its target's `done`, the queue's plan) is kept right after the awaiting code, which runs first.
 * Until then its target reads `settled` (a Stream then records no marker for it).
 */
function resolveFirst(q: Queue, w: Wait): void {
  let e: unknown;
  try {
    w.target.verify?.();
  } catch (err) {
    e = err;
  }
  if (e !== undefined) {
    settle(w, e, q);
    return headSettled(q, w, true);
  }
  w.settled = true;
  w.target.settled = true;
  w.resolve();
  const learned = durationOf(q, w); // now: the awaiting code's own time is not the wait's
  if (q.waits.length === 1) stopSpinning(q);
  void RESOLVED.then(() => {
    takeOut(w, q);
    try {
      w.target.done?.();
    } catch {
      // resolved already: a failing give-back shows in the next call that needs it
    }
    keepBooks(q, learned);
  });
}

/** Settles `w` (resolve, or reject with `e`) and takes it out of its queue. */
function settle(w: Wait, e?: unknown, q = queues.get(w.target.key)): void {
  if (w.settled) return;
  w.settled = true;
  takeOut(w, q);
  try {
    w.target.done?.();
    if (e === undefined) w.target.verify?.();
  } catch (err) {
    e ??= err;
  }
  if (e === undefined) w.resolve();
  else w.reject(e);
}

/** Takes `w` out of `q`: its cancellation (signal listener, timer), its place, its park. */
function takeOut(w: Wait, q: Queue | undefined): void {
  w.dispose();
  if (q === undefined) return;
  removeWait(q, w);
  if (q.parked === w) {
    q.parked = undefined;
    parkedCount--;
  }
}

function cancel(w: Wait, e: unknown): void {
  if (w.settled) return;
  const q = queues.get(w.target.key);
  const wasHead = q !== undefined && q.waits[0] === w;
  if (q !== undefined && q.parked === w && q.onHelper) q.stuck = true;
  settle(w, e);
  if (q !== undefined && wasHead) afterHeadChange(q);
  else if (parkedCount === 0) quiesce();
}

/** Enqueues the wake for the head of `q` on its helper stream (none when the head posted already or no helper is free). */
function park(q: Queue): void {
  const head = q.waits[0];
  const channel = channelInUse!;
  q.onHelper = q.riding = false;
  if (head.posted) return parked(q, head, channel);
  try {
    if (q.helper === undefined) q.helper = takeHelper(q.ctx);
    const h = q.helper;
    // every helper is in use: checked at wakes and sweeps (a flagged one needs no marker), promoted when one is given back
    if (h === undefined && head.flag !== 0) return ride(q, head, channel);
    if (head.target.event === 0) head.target.mark?.(); // a helper waits for an event: the point gets its marker
    if (head.target.event === 0) throw new Error('unmarked');
    if (h === undefined) return ride(q, head, channel);
    drv.callHinted(q.ctx, 'cuStreamWaitEvent', h, head.target.event, 0);
    drv.callHinted(q.ctx, 'cuLaunchHostFunc', h, channel.hostFn, channel.userData);
  } catch {
    // no parking here (a driver or stream that refuses host functions): this queue polls instead,
    // and a real problem with the event shows in its next query
    q.pollOnly = true;
    q.stuck = true; // its helper may hold a half-made park
    return;
  }
  q.onHelper = true;
  parked(q, head, channel);
}

function ride(q: Queue, head: Wait, channel: WakeChannel): void {
  if (!rides(q)) q.askedAt = now();
  q.riding = true;
  parked(q, head, channel);
}

function parked(q: Queue, head: Wait, channel: WakeChannel): void {
  if (q.parked !== undefined) parkedCount--; // an earlier head's host function: a stale wake, no more
  q.parked = head;
  parkedCount++;
  counters.parks++;
  channel.arm(onWake);
  sweepWithin(q.riding ? RIDE_CHECK_MS : settings.sweepMs);
}

/**
 * A helper of `ctx` was given back: the first rider still running there parks on it. While the waiter
 * is crowded, a flagged rider keeps riding (its check reads memory) and the helper waits for one that queries.
 */
function promoteRider(ctx: Context): void {
  const flagged: Queue[] = [];
  for (const q of queues.values()) {
    if (q.ctx !== ctx || !rides(q) || q.pollOnly) continue;
    // a rider done already settles now: no host function, no wake (a crowd's waits end together)
    if (advance(q, 'ride')) {
      if (q.parked !== undefined && !rides(q)) return; // its next head took the helper
    } else if (q.waits[0].flag === 0) {
      return park(q);
    } else flagged.push(q);
  }
  if (crowded()) return;
  for (const q of flagged) {
    // a rider settled above dropped its queue, and that drop's own promotion may have settled or parked q
    if (queues.get(q.key) !== q || !rides(q)) continue;
    park(q); // the crowd thinned: each takes a helper while one is free
    if (rides(q)) return;
  }
}

/** Makes the sweep run within `ms` (sooner than the one pending, if any). */
function sweepWithin(ms: number): void {
  const due = now() + ms;
  if (sweeper !== undefined && sweepDue <= due) return;
  if (sweeper !== undefined) clearTimeout(sweeper);
  sweepDue = due;
  sweeper = setTimeout(sweep, ms);
}

function anyRiding(): boolean {
  for (const q of queues.values()) if (rides(q)) return true;
  return false;
}

function onWake(): void {
  counters.wakes++;
  beginTurn();
  // a wake asks the queues that could post; when it settled one, the riders too (a crowd's waits end together)
  if (checkParked('posted')) askRiders(now());
  if (parkedCount > 0) channelInUse?.arm(onWake);
}

/** A ride check, unless the riders were asked within RIDE_CHECK_MS / 2; false when skipped. */
function askRiders(t: number): boolean {
  if (t - lastRiderCheck < RIDE_CHECK_MS / 2) return false;
  lastRiderCheck = t;
  checkParked('riders');
  return true;
}

/** Which parked queues a check asks: those with a host function of their own, the riders, or all. */
type Parked = 'posted' | 'riders' | 'all';

function checkParked(which: Parked): boolean {
  let found = false;
  const answered = which === 'all' ? new Set<Context>() : undefined;
  for (const q of [...queues.values()]) {
    if (q.parked === undefined) continue;
    if (answered !== undefined) found = sweepCheck(q, answered) || found;
    else if ((which === 'riders') === rides(q) && advance(q, which === 'riders' ? 'ride' : 'ask')) found = true;
  }
  return found;
}

/**
 * A full sweep's check of `q`. A flagged rider reads its flag once its context answered a query in this
 * sweep (a failed context fails every query and writes no flag), unless it was not asked for
 * ASK_RIDER_SWEEPS sweeps: a crowd's sweep makes one query per context, not one per stream.
 */
function sweepCheck(q: Queue, answered: Set<Context>): boolean {
  const t = now();
  if (!rides(q) || q.waits[0].flag === 0) return advance(q, 'ask');
  if (answered.has(q.ctx) && t - q.askedAt < ASK_RIDER_SWEEPS * settings.sweepMs) return advance(q, 'ride');
  q.askedAt = t;
  if (advance(q, 'ask')) return true;
  answered.add(q.ctx); // not done, and its query did not throw
  return false;
}

function sweep(): void {
  sweeper = undefined;
  sweepDue = Infinity;
  beginTurn();
  const t = now();
  if (!anyRiding() || t - lastFullSweep >= settings.sweepMs) {
    lastFullSweep = lastRiderCheck = t;
    checkParked('all');
  } else if (!askRiders(t)) {
    return sweepWithin(lastRiderCheck + RIDE_CHECK_MS - t); // a wake asked them lately: 4 ms after that
  }
  if (parkedCount > 0) sweepWithin(anyRiding() ? RIDE_CHECK_MS : settings.sweepMs);
}

/** No wait is parked: wake the sleeping pool thread so that it returns, and stop the sweep. */
function quiesce(): void {
  channelInUse?.release();
  if (sweeper !== undefined) clearTimeout(sweeper);
  sweeper = undefined;
  sweepDue = Infinity;
}

function dropQueue(q: Queue): void {
  if (queues.get(q.key) === q) queues.delete(q.key);
  deferred.delete(q);
  stopSpinning(q);
  clearWindowTimer(q);
  if (q.pollTimer !== undefined) clearTimeout(q.pollTimer);
  q.pollTimer = undefined;
  if (q.slot !== undefined) giveSlot(q.ctx, q.slot);
  q.slot = undefined;
  if (q.helper !== undefined) {
    const h = q.helper;
    q.helper = undefined;
    giveHelper(q.ctx, h, q.stuck);
    if (!q.stuck) promoteRider(q.ctx);
  } else if (q.riding && !crowded()) {
    promoteRider(q.ctx); // the crowd thinned: the flagged riders left take the helpers they were left
  }
}

/** What the waiter holds now (all zero/false once every wait settled: nothing left behind). */
export function waiterStats(): WaiterStats {
  const { pending, riding, windowTimers, pollTimers } = countQueues(queues.values());
  return {
    pending,
    queues: queues.size,
    parked: parkedCount,
    riding,
    spinning: spinning.size,
    windowTimers,
    timers: sliceDue() || sweeper !== undefined || deferTimer !== undefined || pollTimers > 0,
    armed: channelInUse?.armed ?? false,
    ...counters,
    channel: channelInUse?.name ?? wakeChannel()?.name ?? 'poll', // makes the channel if none was: a koffi load of libc
  };
}

/** Test seam: forgets the last durations (the predicted windows) and zeroes the counters. @internal */
export function resetWaiterForTests(): void {
  lastDuration = new WeakMap();
  counters.parks = counters.wakes = counters.spinTicks = counters.spinPasses = counters.flagWrites = 0;
  lastRiderCheck = -Infinity;
  lastFullSweep = now();
  channelInUse = undefined;
}

/** Test seam: forgets the duration learned for `key`. @internal */
export function forgetDuration(key: object): void {
  lastDuration.delete(key);
}
