// A timer for any duration: Node (and Bun, Deno) fire a setTimeout of 2^31 ms or more after 1 ms, so
// longer waits are chained in pieces below it, and Infinity never fires.

/** A timer that may be cancelled; what {@link longTimeout} returns. */
export interface LongTimer {
  cancel(): void;
}

/** The longest delay a setTimeout keeps (2^31 - 1 ms, about 24.8 days); past it, even by a fraction, it fires after 1 ms. */
export const MAX_TIMER_MS = 0x7fffffff;

/**
 * Calls `fn` after `ms` milliseconds, for any `ms` (Infinity: never). `unref`: the timer does not keep
 * the process alive.
 */
export function longTimeout(fn: () => void, ms: number, unref = false): LongTimer {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (left: number): void => {
    if (left === Infinity) return;
    const step = Math.min(Math.max(0, left), MAX_TIMER_MS);
    timer = setTimeout(() => (left > step ? arm(left - step) : fn()), step);
    if (unref) timer.unref();
  };
  arm(ms);
  return { cancel: () => clearTimeout(timer) };
}
