// Recognising the instances of a class without importing it, where that import would close a cycle
// (device-buffer.ts and the pools and pinned buffers built on it; graph-exec.ts and graph.ts). The
// class's constructor marks each instance, so the check is as strict as instanceof (stricter: a
// prototype cannot fake it). A leaf: it imports nothing.

/** The instances one class has made. */
export class Brand<T extends object> {
  private readonly made = new WeakSet<object>();

  /** Marks `instance` (called by the class's constructor). */
  mark(instance: T): void {
    this.made.add(instance);
  }

  /** True for an instance the class made: what `v instanceof Class` said. */
  has(v: unknown): v is T {
    return typeof v === 'object' && v !== null && this.made.has(v);
  }
}
