// Profiler range: cuProfilerStart/Stop as a `using` scope.
import * as drv from './driver';
import { Context, contextOf } from './context';
import { SEALED, type Sealed, checkSealed } from './sealed';

/**
 * A range of profiler collection (cuProfilerStart … cuProfilerStop), for profilers started with
 * collection off (e.g. Nsight Systems `--capture-range=cudaProfilerApi`). Create with {@link profile}
 * or {@link ProfilerScope.start}.
 */
export class ProfilerScope {
  private stopped = false;
  private constructor(
    seal: Sealed,
    private readonly context: Context,
  ) {
    checkSealed(seal, 'ProfilerScope', 'ProfilerScope.start()');
  }

  /**
   * Starts profiler collection; stop() or leaving the `using` scope stops it.
   * @param context The context to make current for the profiler calls (default: the current one, else device 0's primary context).
   */
  static start(context?: Context): ProfilerScope {
    const ctx = contextOf(context, 'ProfilerScope.start: context');
    drv.call(ctx, 'cuProfilerStart');
    return new ProfilerScope(SEALED, ctx);
  }

  /** True until stop() (or the end of the `using` scope). */
  get active(): boolean {
    return !this.stopped;
  }

  /** Stops profiler collection (cuProfilerStop). Idempotent. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    drv.call(this.context, 'cuProfilerStop');
  }

  /** Calls stop(), for `using`. */
  [Symbol.dispose](): void {
    this.stop();
  }
}

/**
 * `using _ = profile();` — profiles until the end of the scope.
 * @param context The context to make current for the profiler calls (default: the current one, else device 0's primary context).
 */
export function profile(context?: Context): ProfilerScope {
  return ProfilerScope.start(context);
}
