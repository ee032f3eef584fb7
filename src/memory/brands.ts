// Brands of the memory classes that modules below them must recognise: device-buffer.ts tells a
// MemoryPool or a PinnedHostBuffer argument apart without importing those modules, which import it
// (memory-pool.ts allocates DeviceBuffers; pinned-host-buffer.ts copies to and from them). A brand is
// set by the constructor only, so it is as strict as instanceof (stricter: a prototype cannot fake it).
import type { MemoryPool } from './memory-pool';
import type { PinnedHostBuffer } from './pinned-host-buffer';

/** Every MemoryPool made (set by its constructor). */
export const memoryPools = new WeakSet<object>();
/** Every PinnedHostBuffer made (set by its constructor). */
export const pinnedHostBuffers = new WeakSet<object>();

/** True for a MemoryPool (what `pool instanceof MemoryPool` said). */
export function isMemoryPool(v: unknown): v is MemoryPool {
  return typeof v === 'object' && v !== null && memoryPools.has(v);
}

/** True for a PinnedHostBuffer (what `v instanceof PinnedHostBuffer` said). */
export function isPinnedHostBuffer(v: unknown): v is PinnedHostBuffer {
  return typeof v === 'object' && v !== null && pinnedHostBuffers.has(v);
}
