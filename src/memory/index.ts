// Memory: device, managed and pinned host buffers, pools, the caching allocator, virtual memory, batched
// copies, and memory shared between processes (IPC). Modules inside src/ import the file they need, not
// this index (it re-exports ipc.ts, which imports device.ts and event.ts).
export { DeviceBuffer, type AllocOptions, type WrapBufferOptions } from './device-buffer';
export { ManagedBuffer, type ManagedAdvice } from './managed-buffer';
export { PinnedHostBuffer, type PinnedOptions } from './pinned-host-buffer';
export {
  MemoryPool,
  type ManagedPoolOptions,
  type PinnedPoolOptions,
  type PoolAccess,
  type PoolMemoryType,
  type PoolOptions,
  type WrapPoolOptions,
} from './memory-pool';
export type { CopyOptions, HostData, MemsetOptions, TypedArrayConstructor } from './arguments';
export type { MemoryLocation } from './location';
export { CachingAllocator, type AllocatorStats } from './allocator';
export { VirtualMemoryResource, type VirtualMemoryOptions } from './vmm';
export { PhysicalMemory, VirtualAddressRange, type Mapping, type PhysicalMemoryOptions, type ReserveOptions } from './virtual-range';
export { copyBatch, type BatchCopy, type CopyBatchOptions } from './copy-batch';
export { pointerInfo, type PointerInfo, type PointerMemoryType } from './pointer-info';
export { StridedView, type DType, type StridedViewBuffer, type StridedViewOptions } from './strided-view';
export { DLPACK_VERSION, dlpackExportsAlive, fromDLPack, toDLPack, type FromDLPackOptions } from './dlpack';
export {
  IpcMemoryPool,
  ImportedMemoryPool,
  SharedBuffer,
  SharedEvent,
  allowDescriptorImport,
  exportEvent,
  exportMemHandle,
  importPool,
  openEvent,
  openMemHandle,
  type BufferHandle,
  type EventHandle,
  type MemHandle,
  type PoolHandle,
} from './ipc';
