// cuda-ts objects layer, by concept. Built on the typed driver/NVRTC/nvJitLink/NCCL bindings; importing
// loads nothing native (each library is loaded by its first use). Named re-exports only: the bundle
// (scripts/bundle.ts) turns each into a require made on first read, so a program loads what it touches.

// Devices and contexts
export { Context, ContextUnusableError, STICKY_ERRORS, init } from './context';
export { Device, type DeviceProperties } from './device';
export { GreenContext, SmResource, type GreenStreamOptions } from './green';
export { canAccessPeer, copyPeer, disablePeerAccess, enablePeerAccess, onDevice, type PeerCopyOptions } from './peer';
export { DRIVER_RELEASE } from './driver';
export { NvmlDevice, NvmlUnavailableError, System, system, type ComputeMode, type GpuProcess, type MemoryBreakdown, type PciInfo } from './system';
export type { GraphMemoryStats } from './graph/graph-memory';
export { Resource } from './lifecycle';

// Streams and events
export { Stream, cudaStream, streamHandle, type StreamLike, type StreamOptions, type StreamProtocol, type WrapOptions } from './stream';
export { type PollOptions } from './poll';
// Awaiting GPU work (docs/awaiting.md)
export { AbortError, type WaitOptions as AwaitOptions } from './await/abort';
export { configureWaits, waiterStats, type WaiterSettings, type WaiterStats } from './await/waiter';
export { pipeline, type PipelineItem, type PipelineOptions } from './await/pipeline';
export { type HandleDescriptor } from './await/share';
export { Event, type EventOptions } from './event';
export { ProfilerScope, profile } from './profiler';

// Memory
export {
  CachingAllocator,
  DeviceBuffer,
  ImportedMemoryPool,
  IpcMemoryPool,
  ManagedBuffer,
  MemoryPool,
  PinnedHostBuffer,
  SharedBuffer,
  SharedEvent,
  VirtualMemoryResource,
  allowDescriptorImport,
  copyBatch,
  exportEvent,
  exportMemHandle,
  importPool,
  openEvent,
  openMemHandle,
  PhysicalMemory,
  VirtualAddressRange,
  pointerInfo,
  StridedView,
  DLPACK_VERSION,
  dlpackExportsAlive,
  fromDLPack,
  toDLPack,
  type Mapping,
  type PhysicalMemoryOptions,
  type ReserveOptions,
  type PointerInfo,
  type PointerMemoryType,
  type DType,
  type StridedViewBuffer,
  type StridedViewOptions,
  type FromDLPackOptions,
  type AllocOptions,
  type AllocatorStats,
  type BatchCopy,
  type BufferHandle,
  type CopyBatchOptions,
  type CopyOptions,
  type EventHandle,
  type HostData,
  type ManagedAdvice,
  type ManagedPoolOptions,
  type MemHandle,
  type MemoryLocation,
  type MemsetOptions,
  type PinnedOptions,
  type PinnedPoolOptions,
  type PoolAccess,
  type PoolHandle,
  type PoolMemoryType,
  type PoolOptions,
  type TypedArrayConstructor,
  type VirtualMemoryOptions,
  type WrapBufferOptions,
  type WrapPoolOptions,
} from './memory';
export {
  TensorMap,
  type Im2colTensorMapOptions,
  type TensorMapCommon,
  type TensorMapDataType,
  type TensorMapInterleave,
  type TensorMapL2Promotion,
  type TensorMapOobFill,
  type TensorMapSwizzle,
  type TiledTensorMapOptions,
} from './tensormap';
export {
  CudaArray,
  SurfaceObject,
  TextureObject,
  type AddressMode,
  type ArrayCopyOptions,
  type ChannelFormat,
  type CudaArrayOptions,
  type LinearTextureSource,
  type Pitch2DTextureSource,
  type TextureOptions,
  type TextureSource,
} from './texture';

// Compile and load
export { Program, CompileError, compile, type CompileOptions, type ProgramOptions } from './program';
export { Linker, LinkError, type LinkInput, type LinkerOptions } from './linker';
export { Module, Kernel, ModuleLoadError, type KernelAttributes, type ModuleOptions } from './module';

// Launch
export { launch, launchArgs } from './launch';
export { LaunchConfig, type Dim3, type LaunchConfigInit } from './launch-config';
export { ArgPack, arg, type ArgType, type ArgValue, type DevicePointer, type KernelArgs, type ScalarType, type StructType, type TypedArg } from './kernel-args';

// Graphs
export {
  Graph,
  GraphConditional,
  GraphExec,
  type ConditionalNode,
  type GraphAllocation,
  type GraphCopyEndpoint,
  type GraphCopyOptions,
  type GraphMemsetOptions,
  type GraphNode,
} from './graph';

// Math libraries (cuBLAS, cuBLASLt, cuFFT, cuRAND, cuSPARSE, cuSOLVER, cuDNN)
export * from './math';

// Distributed
export {
  Communicator,
  CommunicatorTimeoutError,
  NcclUnavailableError,
  NCCL_DTYPES,
  NCCL_OPS,
  type BroadcastOptions,
  type CollectiveOptions,
  type NcclDtype,
  type ReduceOp,
  type ReduceOptions,
  type RendezvousOptions,
  type UniqueId,
  type WaitOptions,
} from './distributed/communicator';
export * from './distributed';

// Enums the objects API takes or returns, by name (test/enum-exports.test.ts keeps the list complete)
export { CUcomputemode, CUdevice_attribute, CUdeviceNumaConfig, CUfunction_attribute, CUgraphNodeType, CUstreamCaptureMode } from './driver';

// Errors
export { CudaError } from '../support';
export { DriverError } from './driver';
export { DeferredFreeError, HostCallbackPendingError } from './lifecycle';
export { BuildError, ClosedObjectError, ObjectsError, OBJECTS_ERROR } from './errors';
