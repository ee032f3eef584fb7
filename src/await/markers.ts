// What the waiter keeps per context: marker events (recorded where a stream wait was made, so the wait
// is for the work enqueued before it, not for what is enqueued later) and helper streams (a parked wait
// makes a helper stream wait for its event, then enqueues the wake host function there, so the stream
// the program uses gets nothing inserted after the point it awaits). Raw handles, reused; a destroyed
// context takes them with it. Helpers are few and kept: creating a stream can block until the GPU's
// running work ends (on an H100 the 35th stream made beside a 300 ms kernel took 299 ms), so a wait must
// not make one each time a crowd parks.
import * as drv from '../driver';
import type { Context } from '../context';

interface ContextPools {
  markers: number[];
  /** Idle helpers. */
  helpers: number[];
  /** Helpers given back while they may still wait for a cancelled wait's event: reused once idle. */
  draining: number[];
  /** Helpers handed out and not yet given back. */
  helpersOut: number;
}

/** The most helper streams a context has (idle, handed out or draining); see {@link takeHelper}. */
export const HELPERS_PER_CONTEXT = 8;

const pools = new Map<Context, ContextPools>();
/**
 * Idle markers kept per context; more are destroyed. Enough for a crowd: its markers come back at once,
 * and destroying them in a wake to create them again for the next crowd costs driver calls that can
 * stall while the GPU works (one cuEventCreate took 3.4 ms on a busy H100).
 */
const KEPT = 1024;

/**
 * `map`'s entry for `ctx`, made by `make` when there is none or `ctx` was destroyed (what it held died
 * with the context); a new entry first drops the entries of every destroyed context.
 */
export function perContext<T>(map: Map<Context, T>, ctx: Context, make: () => T): T {
  if (map.has(ctx) && !ctx.core.destroyed) return map.get(ctx)!;
  for (const c of map.keys()) if (c.core.destroyed) map.delete(c);
  const entry = make();
  map.set(ctx, entry);
  return entry;
}

function poolsOf(ctx: Context): ContextPools {
  return perContext(pools, ctx, () => ({ markers: [], helpers: [], draining: [], helpersOut: 0 }));
}

/** An event of `ctx` without timing, for one wait (give it back with {@link giveMarker}). */
export function takeMarker(ctx: Context): number {
  const p = poolsOf(ctx);
  const ev = p.markers.pop();
  if (ev !== undefined) return ev;
  drv.call(ctx, 'cuEventCreate', drv.out64, drv.CUevent_flags.CU_EVENT_DISABLE_TIMING);
  return drv.outNumber();
}

/** Gives a marker back (re-recording it later is safe: a stream wait took the record it saw). */
export function giveMarker(ctx: Context, ev: number): void {
  if (ctx.core.destroyed) return;
  const p = poolsOf(ctx);
  if (p.markers.length < KEPT) p.markers.push(ev);
  else drv.release(ctx, 'cuEventDestroy', ev);
}

/**
 * A non-blocking helper stream of `ctx`: an idle one, a drained one, or a new one while the context has
 * fewer than {@link HELPERS_PER_CONTEXT}; undefined when all of them are in use (the wait rides on the
 * others' wakes instead).
 */
export function takeHelper(ctx: Context): number | undefined {
  const p = poolsOf(ctx);
  let h = p.helpers.pop() ?? drained(ctx, p);
  if (h === undefined) {
    if (p.helpersOut + p.draining.length >= HELPERS_PER_CONTEXT) return undefined;
    drv.call(ctx, 'cuStreamCreate', drv.out64, drv.CUstream_flags.CU_STREAM_NON_BLOCKING);
    h = drv.outNumber();
  }
  p.helpersOut++;
  return h;
}

/** A draining helper that has become idle (taken out of the draining list), or undefined. */
function drained(ctx: Context, p: ContextPools): number | undefined {
  const i = p.draining.findIndex((h) => drv.query(ctx, 'cuStreamQuery', h));
  return i < 0 ? undefined : p.draining.splice(i, 1)[0];
}

/**
 * Gives a helper back. `stuck`: it may still wait for an event that is far from done (a cancelled
 * wait's), so it drains before the next wait gets it (its late host function costs one wake).
 */
export function giveHelper(ctx: Context, h: number, stuck: boolean): void {
  if (ctx.core.destroyed) return;
  const p = poolsOf(ctx);
  p.helpersOut = Math.max(0, p.helpersOut - 1);
  (stuck ? p.draining : p.helpers).push(h);
}

/** Counts for tests and the bench: markers and helpers idle, helpers in use, over every context. */
export function markerStats(): { markersIdle: number; helpersIdle: number; helpersOut: number; helpersDraining: number } {
  let markersIdle = 0;
  let helpersIdle = 0;
  let helpersOut = 0;
  let helpersDraining = 0;
  for (const [ctx, p] of pools) {
    if (ctx.core.destroyed) continue;
    markersIdle += p.markers.length;
    helpersIdle += p.helpers.length;
    helpersOut += p.helpersOut;
    helpersDraining += p.draining.length;
  }
  return { markersIdle, helpersIdle, helpersOut, helpersDraining };
}

/** Test seam: forgets every pool (the fake driver's handles mean nothing to the next test). @internal */
export function forgetMarkerPools(): void {
  pools.clear();
}
