// One pending promise that plain awaits of the same point share (Stream.synchronized, Event.synchronized):
// a crowd of awaits of one point costs the waiter one wait.

/**
 * The pending promise of one plain await (no options), handed to later plain awaits of the same point
 * (a Stream with nothing enqueued since, an Event not recorded again) until it settles or is dropped.
 */
export class SharedWait {
  private pending: Promise<void> | undefined;

  /** The promise to hand out, or undefined when none is pending. */
  get current(): Promise<void> | undefined {
    return this.pending;
  }

  /** Hands `p` to later plain awaits until it settles; returns `p`. */
  share(p: Promise<void>): Promise<void> {
    this.pending = p;
    const forget = (): void => {
      if (this.pending === p) this.pending = undefined;
    };
    p.then(forget, forget);
    return p;
  }

  /** The point moved (work enqueued, a new record): later awaits get a wait of their own. */
  drop(): void {
    this.pending = undefined;
  }
}
