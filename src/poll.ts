// poll(): an awaited wait that polls `ready()` while yielding to the event loop. The fallback of the
// waiter (src/await/waiter.ts) where no wake channel exists, and the tool of waits on something the
// GPU does not signal (NCCL's async errors, a peer). A leaf: stream.ts and event.ts both use it.
import { describe } from './describe';
import { checkWaitOptions, onCancel, type WaitOptions } from './await/abort';

export { type WaitOptions } from './await/abort';

/**
 * Options of an awaited wait ({@link Stream.synchronized}, {@link Event.synchronized}): cancellation
 * (`signal`, `timeoutMs`), and how the polling fallback polls: on every setImmediate for about the
 * first 2 ms, then on timers whose interval grows by 0.25 ms up to `maxIntervalMs`.
 */
export interface PollOptions extends WaitOptions {
  /** Longest sleep between polls once the first ~2 ms of setImmediate polling have passed (ms, default 1). */
  maxIntervalMs?: number;
}

/** Checks PollOptions (TypeError/RangeError naming `what`); returns the snapshot checked and maxIntervalMs. */
export function checkPollOptions(options: PollOptions | undefined, what: string): { checked: PollOptions; maxInterval: number } {
  const checked = checkWaitOptions(options, what);
  const maxInterval = checked.maxIntervalMs ?? 1;
  if (typeof maxInterval !== 'number' || !(maxInterval > 0))
    throw new RangeError(`${what}: maxIntervalMs must be a positive number, got ${describe(maxInterval)}`);
  return { checked, maxInterval };
}

/**
 * Polls `ready()` (true when done) yielding to the event loop: setImmediate first, short timers after.
 * Rejects with an AbortError when `options.signal` aborts, with a timeout error past `timeoutMs`, or
 * with what `ready()` threw; a settled poll leaves no timer or listener behind.
 */
export function poll(ready: () => boolean, what: string, options: PollOptions = {}): Promise<void> {
  const { checked, maxInterval } = checkPollOptions(options, what);
  const start = performance.now();
  return new Promise<void>((resolve, reject) => {
    let interval = 0;
    let timer: ReturnType<typeof setTimeout> | ReturnType<typeof setImmediate> | undefined;
    let done = false;
    let dispose = (): void => {};
    const settle = (e?: unknown): void => {
      if (done) return;
      done = true;
      dispose();
      if (timer !== undefined) {
        clearTimeout(timer as ReturnType<typeof setTimeout>);
        clearImmediate(timer as ReturnType<typeof setImmediate>);
      }
      if (e === undefined) resolve();
      else reject(e);
    };
    const step = (): void => {
      timer = undefined;
      if (done) return;
      try {
        if (ready()) return settle();
      } catch (e) {
        return settle(e ?? new Error(`${what}: ready() threw ${String(e)}`));
      }
      if (performance.now() - start < 2) timer = setImmediate(step);
      else {
        interval = Math.min(maxInterval, interval + 0.25);
        timer = setTimeout(step, interval);
      }
    };
    dispose = onCancel(checked, what, settle);
    if (!done) step();
  });
}
