// One pending promise that plain awaits of the same point share (Stream.synchronized, Event.synchronized):
// a crowd of awaits of one point costs the waiter one wait.

/**
 * The pending promise of one plain await (no options), handed to later plain awaits of the same point
 * (a Stream with nothing enqueued since, an Event not recorded again) until its wait settles or the
 * point moves. Forgotten from the wait's `done` callback, not from a `then` on the promise: a reaction
 * registered first would run before the awaiting code, on the path from the GPU's end to its resume.
 */
export class SharedWait {
  private pending: Promise<void> | undefined;
  private owner: object | undefined;

  /** The promise to hand out, or undefined when none is pending. */
  get current(): Promise<void> | undefined {
    return this.pending;
  }

  /**
   * Makes the wait `owner` with `wait(owner, options)` and hands its promise to later plain awaits unless
   * it settled at once (the function and its arguments, not a closure: a crowd's awaits make none each).
   */
  share<T extends object, O>(owner: T, wait: (owner: T, options: O) => Promise<void>, options: O): Promise<void> {
    this.pending = undefined;
    this.owner = owner;
    const p = wait(owner, options);
    if (this.owner === owner) this.pending = p; // else `settled(owner)` ran inside wait()
    return p;
  }

  /** The wait `owner` settled: later awaits get a wait of their own. */
  settled(owner: object): void {
    if (this.owner === owner) this.drop();
  }

  /** The point moved (work enqueued, a new record): later awaits get a wait of their own. */
  drop(): void {
    this.pending = this.owner = undefined;
  }
}
