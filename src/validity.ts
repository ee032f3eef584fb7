// A counter that moves whenever an object of the objects layer may have stopped being usable: a close,
// a context made unusable by a sticky error, a host function's error parked on its stream, a free that
// failed where nobody could see it. The launch path checks its kernel and stream in full once, then
// (while the count stands still) only compares: a loop of launches reads a dozen fewer fields each.

/** The count (read as `validity.epoch`). @internal */
export const validity = { epoch: 0 };

/** Moves the count: every full check after this runs again. @internal */
export function invalidate(): void {
  validity.epoch++;
}
