// Capture-time ownership: while a stream captures into a graph, every launch, copy and memset enqueued
// on it registers the objects it uses (kernel, buffers, streams) with the capture, and the graph made
// from the capture keeps them alive until it (and every GraphExec instantiated from it) is closed.
// Closing such an object meanwhile is deferred, as for any object something else depends on: the graph
// never runs on freed memory or an unloaded module.
import * as drv from '../driver';
import { Core } from '../lifecycle';

/** The resources one capture has seen so far. */
export class CaptureHolder {
  /** Holds every resource used by captured work (closed into the graph at the end). */
  readonly core = new Core('stream capture', undefined);
  /** Frees deferred while the stream captured (run when capture ends). */
  readonly afterCapture: (() => void)[] = [];
  constructor(
    /** The capture id (cuStreamGetCaptureInfo), to recognise streams that joined the capture. */
    readonly id: number,
  ) {}
}

const byStream = new Map<number, CaptureHolder>();
const byGraph = new Map<number, CaptureHolder>();
let active = 0;
const status32 = new Int32Array(1);
const id64 = new BigUint64Array(1);

/** Capture id of stream `h` of `ctx`, or 0 when it is not capturing. */
function captureId(ctx: drv.Bindable, h: number): number {
  drv.callHinted(ctx, 'cuStreamGetCaptureInfo', h, status32, id64, null, null, null, null);
  return status32[0] === 1 ? Number(id64[0]) : 0; // CU_STREAM_CAPTURE_STATUS_ACTIVE
}

/** Starts tracking a capture that began on stream `h`. */
export function beginTracking(ctx: drv.Bindable, h: number): CaptureHolder {
  const holder = new CaptureHolder(captureId(ctx, h));
  byStream.set(h, holder);
  active++;
  return holder;
}

/** Ends tracking of `holder` (capture ended on stream `h`); `graph` is the captured graph's handle, if any. */
export function endTracking(holder: CaptureHolder, graph: number | undefined): void {
  for (const [h, x] of byStream) if (x === holder) byStream.delete(h);
  active--;
  if (graph) byGraph.set(graph, holder);
  for (const fn of holder.afterCapture.splice(0)) fn();
}

/** The holder of a graph captured through Stream.beginCapture/endCaptureHandle (taken once). */
export function takeHolder(graph: number): CaptureHolder | undefined {
  const h = byGraph.get(graph);
  byGraph.delete(graph);
  return h;
}

/** True while any capture is tracked (one comparison on the hot paths). */
export function anyCapture(): boolean {
  return active !== 0;
}

/**
 * The capture stream `h` takes part in, or undefined. Streams that joined a capture (through an event
 * recorded on a capturing stream) are found with cuStreamGetCaptureInfo, only while a capture is active.
 */
export function captureOf(ctx: drv.Bindable | undefined, h: number): CaptureHolder | undefined {
  if (active === 0) return undefined;
  const hit = byStream.get(h);
  if (hit !== undefined || ctx === undefined || h <= 2) return hit;
  const id = captureId(ctx, h);
  if (id === 0) return undefined;
  for (const x of byStream.values()) {
    if (x.id === id) {
      byStream.set(h, x);
      return x;
    }
  }
  return undefined;
}

/** Registers `resources` with the capture stream `h` takes part in, if any. */
export function noteUse(ctx: drv.Bindable | undefined, h: number, ...resources: ({ core: Core } | undefined)[]): void {
  const holder = captureOf(ctx, h);
  if (holder === undefined) return;
  for (const r of resources) if (r !== undefined) holder.core.hold(r.core);
}
