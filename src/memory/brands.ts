// The memory classes that modules below them must recognise: device-buffer.ts tells a MemoryPool or a
// PinnedHostBuffer argument apart without importing those modules, which import it (memory-pool.ts
// allocates DeviceBuffers; pinned-host-buffer.ts copies to and from them).
import { Brand } from '../brand';
import type { MemoryPool } from './memory-pool';
import type { PinnedHostBuffer } from './pinned-host-buffer';

/** Every MemoryPool made (marked by its constructor). */
export const memoryPoolBrand = new Brand<MemoryPool>();
/** Every PinnedHostBuffer made (marked by its constructor). */
export const pinnedHostBufferBrand = new Brand<PinnedHostBuffer>();
