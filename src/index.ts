// cuda-ts objects layer: Device, Context, Stream, Event, memory, Program, Linker, Module/Kernel,
// launch, Graph, Profiler. Built on the typed driver/NVRTC/nvJitLink bindings; importing loads nothing.
export { CudaError } from '../support';
export { DriverError, DRIVER_RELEASE } from './driver';
export { DeferredFreeError, HostCallbackPendingError, Resource } from './lifecycle';
export { Context, ContextUnusableError, STICKY_ERRORS, init } from './context';
export { Device } from './device';
export { Stream, cudaStream, streamHandle, type PollOptions, type StreamLike, type StreamOptions, type StreamProtocol, type WrapOptions } from './stream';
export { Event, type EventOptions } from './event';
export {
  DeviceBuffer, ManagedBuffer, MemoryPool, PinnedHostBuffer,
  type AllocOptions, type CopyOptions, type MemsetOptions, type HostData, type PinnedOptions, type PoolOptions, type TypedArrayConstructor,
} from './memory/buffers';
export { CachingAllocator, type AllocatorStats } from './memory/allocator';
export { Module, Kernel, ModuleLoadError, type ModuleOptions } from './module';
export { LaunchConfig, arg, launch, launchArgs, ArgPack, type ArgType, type Dim3, type LaunchConfigInit, type ScalarType, type StructType, type TypedArg } from './launch';
export { Graph, GraphExec, type GraphNode } from './graph/graph';
export { ProfilerScope, profile } from './profiler';
export { Program, CompileError, compile, type CompileOptions, type ProgramOptions } from './program';
export { Linker, LinkError, type LinkInput, type LinkerOptions } from './linker';
export { canAccessPeer, copyPeer, disablePeerAccess, enablePeerAccess, onDevice, type PeerCopyOptions } from './peer';
export { Communicator, NcclUnavailableError, NCCL_DTYPES, NCCL_OPS, type BroadcastOptions, type CollectiveOptions, type NcclDtype, type ReduceOp, type UniqueId, type ReduceOptions } from './distributed/communicator';
// objects layer part 2 (issue 13): graph nodes, device properties, kernel attributes, typed launches, green contexts
export { GraphConditional, type ConditionalNode, type GraphAllocation, type GraphCopyEndpoint, type GraphCopyOptions, type GraphMemsetOptions } from './graph/graph';
export { type DeviceProperties } from './device';
export { type KernelAttributes } from './module';
export { type ArgValue, type DevicePointer, type KernelArgs } from './launch';
export { GreenContext, SmResource, type GreenStreamOptions } from './green';
// objects layer part 2 (issue 13): memory resources, wrapped pointers, batched copies, tensor maps, textures
export {
  type ManagedAdvice, type ManagedPoolOptions, type MemoryLocation, type PinnedPoolOptions, type PoolAccess, type PoolMemoryType,
  type WrapBufferOptions, type WrapPoolOptions,
} from './memory/buffers';
export { VirtualMemoryResource, type VirtualMemoryOptions } from './memory/vmm';
export { copyBatch, type BatchCopy, type CopyBatchOptions } from './memory/copy-batch';
export {
  TensorMap, type Im2colTensorMapOptions, type TensorMapCommon, type TensorMapDataType, type TensorMapInterleave, type TensorMapL2Promotion,
  type TensorMapOobFill, type TensorMapSwizzle, type TiledTensorMapOptions,
} from './tensormap';
export {
  CudaArray, SurfaceObject, TextureObject, type AddressMode, type ArrayCopyOptions, type ChannelFormat, type CudaArrayOptions,
  type LinearTextureSource, type Pitch2DTextureSource, type TextureOptions, type TextureSource,
} from './texture';
export { CommunicatorTimeoutError, type RendezvousOptions, type WaitOptions } from './distributed/communicator';
export {
  IpcMemoryPool, ImportedMemoryPool, SharedBuffer, SharedEvent, allowDescriptorImport, exportEvent, exportMemHandle, importPool,
  openEvent, openMemHandle, type BufferHandle, type EventHandle, type MemHandle, type PoolHandle,
} from './memory/ipc';
export * from './distributed';
