// Descriptors of streams and events for the worker threads of this process (docs/awaiting.md, "worker
// threads"): plain data that survives postMessage (structured clone). A CUstream or CUevent handle is
// valid in every thread of the process that made it, never in another process (events cross processes
// through IPC handles instead: exportEvent/openEvent). The object that made the handle owns it and
// closes it, once; what a worker builds from a descriptor owns nothing.
import { describe } from '../describe';

/** A stream or event named for a worker thread of this process: `Stream.descriptor()`, `Event.descriptor()`. */
export interface HandleDescriptor {
  /** Which object it describes: a Stream (`Stream.fromDescriptor`) or an Event (`Event.fromDescriptor`). */
  kind: 'cuda-ts/stream' | 'cuda-ts/event';
  /** The process whose threads may use it. */
  pid: number;
  /** The CUstream / CUevent handle. */
  handle: number;
  /** The device whose primary context it belongs to. */
  device: number;
  /** The event's CUevent_flags (events only). */
  flags?: number;
}

/** Makes a descriptor (the context must be a device's primary context: the one every thread shares). */
export function describeHandle(
  where: string,
  kind: HandleDescriptor['kind'],
  handle: number,
  ctx: { primary: boolean; device: number },
  flags?: number,
): HandleDescriptor {
  if (!ctx.primary)
    throw new TypeError(`${where}: only objects of a primary context can be described for another thread (a worker opens the device's primary context)`);
  return flags === undefined ? { kind, pid: process.pid, handle, device: ctx.device } : { kind, pid: process.pid, handle, device: ctx.device, flags };
}

/** Checks a descriptor of `kind` made by this process; TypeError/RangeError naming `where`. */
export function checkDescriptor(where: string, d: unknown, kind: HandleDescriptor['kind']): HandleDescriptor {
  if (typeof d !== 'object' || d === null || (d as { kind?: unknown }).kind !== kind)
    throw new TypeError(`${where}: expected a descriptor of kind '${kind}', got ${describe(d)}`);
  const o = d as HandleDescriptor;
  if (!Number.isSafeInteger(o.pid) || o.pid <= 0) throw new TypeError(`${where}: descriptor.pid must be a process id, got ${describe(o.pid)}`);
  if (o.pid !== process.pid)
    throw new TypeError(
      `${where}: the descriptor comes from process ${o.pid}; a handle is valid only in the threads of the process that made it (use an IPC handle across processes)`,
    );
  if (!Number.isSafeInteger(o.handle) || o.handle <= 0)
    throw new RangeError(`${where}: descriptor.handle must be a positive safe integer, got ${describe(o.handle)}`);
  if (!Number.isSafeInteger(o.device) || o.device < 0) throw new RangeError(`${where}: descriptor.device must be a device ordinal, got ${describe(o.device)}`);
  if (o.flags !== undefined && !(Number.isSafeInteger(o.flags) && o.flags >= 0))
    throw new RangeError(`${where}: descriptor.flags must be a non-negative integer, got ${describe(o.flags)}`);
  return o;
}
