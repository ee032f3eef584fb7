// When the waiter's spin runs its next slice (./waiter.ts): a new spin's first slice right after the
// current job, as a microtask (a loop turn cost 20-60 µs on an H100 host, as long as a short kernel),
// while this turn's microtask slices took less than one slice's time; else on the next turn.
import { settings } from './settings';

const RESOLVED = Promise.resolve();
let runSlice: () => void = () => {};
let nextTurn: ReturnType<typeof setImmediate> | undefined;
let soon = false;
/** Time (ms) this turn of the event loop spent in microtask slices; zeroed once the loop turns. */
let microSpentMs = 0;
let turnWatch: ReturnType<typeof setImmediate> | undefined;

/** The function that runs one slice of the spin. */
export function setSliceRunner(run: () => void): void {
  runSlice = run;
}

/** A slice as soon as may be: now as a microtask while this turn has spin time left, else the next turn. */
export function sliceSoon(): void {
  if (nextTurn !== undefined || soon) return;
  if (microSpentMs < settings.spinSliceMicros / 1000) {
    soon = true;
    void RESOLVED.then(runSoon); // not queueMicrotask: Node makes an AsyncResource per call
  } else {
    sliceNextTurn();
  }
}

/** A slice on the next turn of the event loop (this slice held it long enough). */
export function sliceNextTurn(): void {
  nextTurn ??= setImmediate(runOnTurn);
}

/** A slice is due (a microtask or the next turn). */
export function sliceDue(): boolean {
  return nextTurn !== undefined || soon;
}

function runOnTurn(): void {
  nextTurn = undefined;
  microSpentMs = 0; // the loop turned
  runSlice();
}

function runSoon(): void {
  soon = false;
  if (nextTurn !== undefined) return; // a slice ran out of time meanwhile: the next turn's comes
  // the turn's marker first: made after the slice, it ran between a wait resolving and its code
  // resuming (after a 50 µs kernel an H100 resumed 1.27-1.52× a blocking wait so, 0.95-1.13× without)
  if (turnWatch === undefined) {
    turnWatch = setImmediate(turnEnded);
    (turnWatch as { unref?: () => void }).unref?.(); // keeps no process alive
  }
  const t0 = performance.now();
  runSlice();
  microSpentMs += performance.now() - t0;
}

function turnEnded(): void {
  turnWatch = undefined;
  microSpentMs = 0;
}
