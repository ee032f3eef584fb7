// poll(): an awaited wait that yields to the event loop (Stream.synchronized, Event.synchronized, IPC
// waits). A leaf: stream.ts and event.ts both use it.
import { describe } from './describe';
import { OBJECTS_ERROR, ObjectsError } from './errors';

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

/** Polls `ready()` (true when done) yielding to the event loop: setImmediate first, short timers after. */
export function poll(ready: () => boolean, what: string, options: PollOptions = {}): Promise<void> {
  if (typeof options !== 'object' || options === null) throw new TypeError(`${what}: options must be an object, got ${describe(options)}`);
  const maxInterval = options.maxIntervalMs ?? 1;
  if (typeof maxInterval !== 'number' || !(maxInterval > 0)) throw new RangeError(`${what}: maxIntervalMs must be a positive number, got ${describe(maxInterval)}`);
  if (options.timeoutMs !== undefined && (typeof options.timeoutMs !== 'number' || !(options.timeoutMs >= 0))) throw new RangeError(`${what}: timeoutMs must be a non-negative number, got ${describe(options.timeoutMs)}`);
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
      if (options.timeoutMs !== undefined && elapsed > options.timeoutMs) return reject(new ObjectsError(what.replace(/\(\)$/, ''), OBJECTS_ERROR.timeout, `timed out after ${options.timeoutMs} ms`));
      if (elapsed < 2) setImmediate(step);
      else {
        interval = Math.min(maxInterval, interval + 0.25);
        setTimeout(step, interval);
      }
    };
    step();
  });
}
