// Life cycle shared by every object of the objects layer.
//
// Each object owns a small `Core` (handle state, reference count, destroy function). The core never
// references the wrapper object, so a FinalizationRegistry can hold it and free what users forget.
// A core holds its parents' cores (a buffer its stream/pool/context): a parent's native destroy runs
// only once it is closed and every child is gone, so closing a stream while a stream-ordered buffer
// still lives defers cuStreamDestroy until that buffer is freed.
//
// Errors raised while freeing where nobody can catch them (finalizers, deferred destroys) are queued
// and thrown by the next call into the objects layer (`throwDeferred`), never lost.
import { CudaError, hostCallbacks, onCallbacksDrained } from '../support';
import { CHECK_HELPERS, ClosedObjectError, OBJECTS_ERROR, ObjectsError, callerName, noteFrameClass } from './errors';
import { invalidate } from './validity';
import { describe, integerRule } from './describe';

/** Errors from frees nobody could catch; thrown at the next call. */
const deferred: unknown[] = [];

/**
 * Thrown by the next call after a free failed where it could not be reported (finalizer, deferred
 * free). Its message starts with that next call's `Class.method`.
 */
export class DeferredFreeError extends ObjectsError {
  /** The errors the earlier frees raised, oldest first. */
  readonly errors: unknown[];
  /**
   * Made by the objects layer from the queued errors; there is no need to construct it.
   * @param errors The errors the earlier frees raised, oldest first.
   */
  constructor(errors: unknown[]) {
    super(
      callerName(CHECK_HELPERS) ?? 'cuda-ts',
      OBJECTS_ERROR.deferredFree,
      `${errors.length} error(s) while freeing resources earlier: ${errors.map((e) => (e as Error)?.message ?? String(e)).join('; ')}`,
    );
    this.errors = errors;
  }
}

export function deferError(e: unknown): void {
  deferred.push(e);
  invalidate();
}

/** Throws queued free errors, once. Cheap when there are none (one length check). */
export function throwDeferred(): void {
  if (deferred.length === 0) return;
  const errors = deferred.splice(0, deferred.length);
  throw errors.length === 1 && errors[0] instanceof CudaError ? withPrefix(errors[0]) : new DeferredFreeError(errors);
}

function withPrefix(e: CudaError): CudaError {
  e.message = `(reported late, from an earlier free) ${e.message}`;
  return e;
}

// Pending JS callbacks are counted in the run-time support, shared with the typed layer: a callback
// given to cuLaunchHostFunc directly blocks the objects layer's waits too, and the other way round.
export { HostCallbackPendingError, assertMayBlock } from '../support';
/** Pending JS host callbacks in this thread (the run-time support's count). */
export const hostFuncs = hostCallbacks;
const afterHostFuncs: (() => void)[] = [];

/** Runs `fn` now, or once no JS host callback is pending (frees that may block go through here). */
export function whenNoHostFuncs(fn: () => void): void {
  if (hostFuncs.pending === 0) fn();
  else afterHostFuncs.push(fn);
}

/** Runs the work deferred by whenNoHostFuncs once the pending count is zero. */
export function drainAfterHostFuncs(): void {
  while (hostFuncs.pending === 0 && afterHostFuncs.length > 0) {
    const fn = afterHostFuncs.shift()!;
    try {
      fn();
    } catch (e) {
      deferError(e);
    }
  }
}
onCallbacksDrained(drainAfterHostFuncs);

export class Core {
  closed = false;
  destroyed = false;
  /** Registered with the FinalizationRegistry (see registerLater). */
  registered = false;
  /** Index in the registration queue, or -1 (see registerLater). */
  queued = -1;
  refs = 0;
  /** Pending destroy work: undefined for non-owning (wrapped) objects. */
  private destroyFn: (() => void) | undefined;
  // Parents: the first two inline (most objects have one or two: no array per object), more in `more`.
  private p0: Core | undefined;
  private p1: Core | undefined;
  private more: Core[] | undefined;
  /** Parents added by hold(), for a constant-time duplicate check. */
  private held: Set<Core> | undefined;

  constructor(
    readonly kind: string,
    destroy: (() => void) | undefined,
    parents?: readonly Core[],
  ) {
    this.destroyFn = destroy;
    if (parents !== undefined) for (let i = 0; i < parents.length; i++) this.addParent(parents[i]);
  }

  /** @internal */
  addParent(p: Core): void {
    p.refs++;
    if (this.p0 === undefined) this.p0 = p;
    else if (this.p1 === undefined) this.p1 = p;
    else (this.more ??= []).push(p);
  }

  /** The cores this one keeps alive. */
  get parents(): Core[] {
    const list: Core[] = [];
    if (this.p0) list.push(this.p0);
    if (this.p1) list.push(this.p1);
    if (this.more) list.push(...this.more);
    return list;
  }

  /**
   * Keeps `parent` alive (not destroyed, even once closed) until this core is destroyed: what a graph
   * does with the kernels, buffers and streams it captured. Holding the same parent twice is a no-op.
   */
  hold(parent: Core): void {
    if (parent === this || this.destroyed) return;
    const held = (this.held ??= new Set(this.parents));
    if (held.has(parent)) return;
    held.add(parent);
    this.addParent(parent);
  }

  /** Frees the native object (once). Subclasses that carry their own data override it instead of passing a closure. */
  protected destroyNative(): void {
    const fn = this.destroyFn;
    this.destroyFn = undefined;
    if (fn !== undefined) fn();
  }

  /** Marks the object closed and destroys it now if nothing depends on it. Throws what the destroy threw. */
  close(): void {
    if (this.closed) return;
    this.markClosed();
    this.maybeDestroy();
  }

  /**
   * Marks the object closed without destroying anything (close() and a view's close): every check that
   * launch.ts cached runs again (./validity).
   */
  markClosed(): void {
    this.closed = true;
    invalidate();
  }

  private maybeDestroy(): void {
    if (!this.closed || this.refs > 0 || this.destroyed) return;
    this.destroyed = true;
    let error: unknown;
    try {
      this.destroyNative();
    } catch (e) {
      error = e;
    }
    if (this.p0 !== undefined) Core.release(this.p0);
    if (this.p1 !== undefined) Core.release(this.p1);
    if (this.more !== undefined) for (const p of this.more) Core.release(p);
    this.held = undefined;
    if (error !== undefined) throw error;
  }

  private static release(p: Core): void {
    p.refs--;
    if (p.refs > 0 || !p.closed) return; // the common case: the parent lives on
    try {
      p.maybeDestroy();
    } catch (e) {
      deferError(e);
    }
  }
}

const registry = new FinalizationRegistry<Core>((core) => {
  try {
    core.close();
  } catch (e) {
    deferError(e);
  }
});

// FinalizationRegistry.register + unregister cost ~0.4 µs, more than a stream-ordered alloc + free.
// Objects are queued and registered at the next turn of the event loop (or when the queue grows
// long): those closed by then, the common create-use-close pattern, never touch the registry. A
// close takes the object out of the queue at once, so the queue never keeps a closed object alive
// (that would move short-lived objects into the old generation).
const unregistered: (Resource | undefined)[] = [];
let flushScheduled = false;
const FLUSH_AT = 1024;

function registerLater(r: Resource): void {
  r.core.queued = unregistered.length;
  unregistered.push(r);
  if (unregistered.length >= FLUSH_AT) flushRegistrations();
  else if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flushRegistrations).unref();
  }
}

/** Takes a closed object out of the registration queue. */
function unqueue(core: Core): void {
  if (core.queued >= 0) {
    if (unregistered[core.queued]?.core === core) unregistered[core.queued] = undefined;
    core.queued = -1;
  }
}

/** Registers the queued objects that are still open for GC reclamation. @internal */
export function flushRegistrations(): void {
  flushScheduled = false;
  for (const r of unregistered) {
    if (r === undefined) continue;
    const core = r.core;
    core.queued = -1;
    if (!core.closed && !core.registered) {
      core.registered = true;
      registry.register(r, core, core);
    }
  }
  unregistered.length = 0;
}

/** Base class: idempotent close(), use-after-close errors, `using`, and GC reclamation. */
export abstract class Resource {
  /** @internal */
  readonly core: Core;

  /**
   * For subclasses: registers the object for GC reclamation when it owns something to free.
   * @internal
   * @param kind the name used in messages (`Stream`, `DeviceBuffer`, …)
   * @param destroy frees the native object; undefined for a wrapper that owns nothing
   * @param parents objects kept alive (not destroyed, even once closed) until this one is destroyed
   */
  protected constructor(kind: string, destroy: (() => void) | Core | undefined, parents?: readonly (Resource | undefined)[]) {
    // A Core subclass may come instead of a destroy function (it frees in destroyNative: one object
    // instead of a core and a closure, for the hottest objects).
    const core = destroy instanceof Core ? destroy : new Core(kind, destroy);
    noteFrameClass(kind);
    if (parents !== undefined) {
      for (let i = 0; i < parents.length; i++) {
        const p = parents[i];
        if (p !== undefined) core.addParent(p.core);
      }
    }
    this.core = core;
    if (destroy) registerLater(this);
  }

  /** True once close() was called (or the owner was closed, for views). */
  get closed(): boolean {
    return this.core.closed;
  }

  /** Frees the native object. Idempotent. Objects that depend on this one keep it alive until they go. */
  close(): void {
    if (this.core.closed) return;
    if (this.core.registered) registry.unregister(this.core);
    else unqueue(this.core);
    this.core.close();
  }

  /**
   * Throws if closed (a ClosedObjectError naming `where`, default: the calling method, read from the
   * stack), or if an earlier free failed unseen.
   */
  protected assertOpen(where?: string): void {
    if (this.core.closed) throw new ClosedObjectError(where, this.core.kind);
    if (deferredLength() !== 0) throwDeferred();
  }

  /** Calls close(): `using x = …` frees the object at the end of the scope. */
  [Symbol.dispose](): void {
    this.close();
  }

  /** Calls close(), for `await using x = …`. */
  async [Symbol.asyncDispose](): Promise<void> {
    this.close();
  }
}

/** True when a free failed unseen and the next call must report it. @internal */
export function deferredPending(): boolean {
  return deferred.length !== 0;
}

function deferredLength(): number {
  return deferred.length;
}

/** A non-negative safe integer, or RangeError. */
export function checkSize(name: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new RangeError(`${name} ${integerRule(v)}, got ${describe(v)}`);
  return v;
}
