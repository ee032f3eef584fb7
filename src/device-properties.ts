// Device.properties: every CUdevice_attribute of the 13.0 headers as one typed object (generated once
// from the CUdevice_attribute enum by a script; aliases with the same value appear once, under the first
// name). Attributes absent from the 11.8 headers read as undefined where the installed driver does not know them.
import * as drv from './driver';

/**
 * Every device attribute (cuDeviceGetAttribute) by its camel-cased name: `maxThreadsPerBlock` is
 * CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK. Flags read 0 or 1. Attributes newer than CUDA 11.8 are
 * `undefined` when the installed driver does not know them.
 */
export interface DeviceProperties {
  /** `CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK` (1). */
  readonly maxThreadsPerBlock: number;
  /** `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X` (2). */
  readonly maxBlockDimX: number;
  /** `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y` (3). */
  readonly maxBlockDimY: number;
  /** `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z` (4). */
  readonly maxBlockDimZ: number;
  /** `CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X` (5). */
  readonly maxGridDimX: number;
  /** `CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y` (6). */
  readonly maxGridDimY: number;
  /** `CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z` (7). */
  readonly maxGridDimZ: number;
  /** `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK` (8). */
  readonly maxSharedMemoryPerBlock: number;
  /** `CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY` (9). */
  readonly totalConstantMemory: number;
  /** `CU_DEVICE_ATTRIBUTE_WARP_SIZE` (10). */
  readonly warpSize: number;
  /** `CU_DEVICE_ATTRIBUTE_MAX_PITCH` (11). */
  readonly maxPitch: number;
  /** `CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK` (12). */
  readonly maxRegistersPerBlock: number;
  /** `CU_DEVICE_ATTRIBUTE_CLOCK_RATE` (13). */
  readonly clockRate: number;
  /** `CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT` (14). */
  readonly textureAlignment: number;
  /** `CU_DEVICE_ATTRIBUTE_GPU_OVERLAP` (15). */
  readonly gpuOverlap: number;
  /** `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT` (16). */
  readonly multiprocessorCount: number;
  /** `CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT` (17). */
  readonly kernelExecTimeout: number;
  /** `CU_DEVICE_ATTRIBUTE_INTEGRATED` (18). */
  readonly integrated: number;
  /** `CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY` (19). */
  readonly canMapHostMemory: number;
  /** `CU_DEVICE_ATTRIBUTE_COMPUTE_MODE` (20). */
  readonly computeMode: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH` (21). */
  readonly maximumTexture1dWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH` (22). */
  readonly maximumTexture2dWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT` (23). */
  readonly maximumTexture2dHeight: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH` (24). */
  readonly maximumTexture3dWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT` (25). */
  readonly maximumTexture3dHeight: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH` (26). */
  readonly maximumTexture3dDepth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH` (27). */
  readonly maximumTexture2dLayeredWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT` (28). */
  readonly maximumTexture2dLayeredHeight: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS` (29). */
  readonly maximumTexture2dLayeredLayers: number;
  /** `CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT` (30). */
  readonly surfaceAlignment: number;
  /** `CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS` (31). */
  readonly concurrentKernels: number;
  /** `CU_DEVICE_ATTRIBUTE_ECC_ENABLED` (32). */
  readonly eccEnabled: number;
  /** `CU_DEVICE_ATTRIBUTE_PCI_BUS_ID` (33). */
  readonly pciBusId: number;
  /** `CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID` (34). */
  readonly pciDeviceId: number;
  /** `CU_DEVICE_ATTRIBUTE_TCC_DRIVER` (35). */
  readonly tccDriver: number;
  /** `CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE` (36). */
  readonly memoryClockRate: number;
  /** `CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH` (37). */
  readonly globalMemoryBusWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE` (38). */
  readonly l2CacheSize: number;
  /** `CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR` (39). */
  readonly maxThreadsPerMultiprocessor: number;
  /** `CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT` (40). */
  readonly asyncEngineCount: number;
  /** `CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING` (41). */
  readonly unifiedAddressing: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH` (42). */
  readonly maximumTexture1dLayeredWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS` (43). */
  readonly maximumTexture1dLayeredLayers: number;
  /** `CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER` (44). */
  readonly canTex2dGather: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH` (45). */
  readonly maximumTexture2dGatherWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT` (46). */
  readonly maximumTexture2dGatherHeight: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE` (47). */
  readonly maximumTexture3dWidthAlternate: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE` (48). */
  readonly maximumTexture3dHeightAlternate: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE` (49). */
  readonly maximumTexture3dDepthAlternate: number;
  /** `CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID` (50). */
  readonly pciDomainId: number;
  /** `CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT` (51). */
  readonly texturePitchAlignment: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH` (52). */
  readonly maximumTexturecubemapWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH` (53). */
  readonly maximumTexturecubemapLayeredWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS` (54). */
  readonly maximumTexturecubemapLayeredLayers: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH` (55). */
  readonly maximumSurface1dWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH` (56). */
  readonly maximumSurface2dWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT` (57). */
  readonly maximumSurface2dHeight: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH` (58). */
  readonly maximumSurface3dWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT` (59). */
  readonly maximumSurface3dHeight: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH` (60). */
  readonly maximumSurface3dDepth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH` (61). */
  readonly maximumSurface1dLayeredWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS` (62). */
  readonly maximumSurface1dLayeredLayers: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH` (63). */
  readonly maximumSurface2dLayeredWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT` (64). */
  readonly maximumSurface2dLayeredHeight: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS` (65). */
  readonly maximumSurface2dLayeredLayers: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH` (66). */
  readonly maximumSurfacecubemapWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH` (67). */
  readonly maximumSurfacecubemapLayeredWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS` (68). */
  readonly maximumSurfacecubemapLayeredLayers: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH` (69). */
  readonly maximumTexture1dLinearWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH` (70). */
  readonly maximumTexture2dLinearWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT` (71). */
  readonly maximumTexture2dLinearHeight: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH` (72). */
  readonly maximumTexture2dLinearPitch: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH` (73). */
  readonly maximumTexture2dMipmappedWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT` (74). */
  readonly maximumTexture2dMipmappedHeight: number;
  /** `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR` (75). */
  readonly computeCapabilityMajor: number;
  /** `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR` (76). */
  readonly computeCapabilityMinor: number;
  /** `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH` (77). */
  readonly maximumTexture1dMipmappedWidth: number;
  /** `CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED` (78). */
  readonly streamPrioritiesSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED` (79). */
  readonly globalL1CacheSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED` (80). */
  readonly localL1CacheSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR` (81). */
  readonly maxSharedMemoryPerMultiprocessor: number;
  /** `CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR` (82). */
  readonly maxRegistersPerMultiprocessor: number;
  /** `CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY` (83). */
  readonly managedMemory: number;
  /** `CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD` (84). */
  readonly multiGpuBoard: number;
  /** `CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID` (85). */
  readonly multiGpuBoardGroupId: number;
  /** `CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED` (86). */
  readonly hostNativeAtomicSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO` (87). */
  readonly singleToDoublePrecisionPerfRatio: number;
  /** `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS` (88). */
  readonly pageableMemoryAccess: number;
  /** `CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS` (89). */
  readonly concurrentManagedAccess: number;
  /** `CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED` (90). */
  readonly computePreemptionSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM` (91). */
  readonly canUseHostPointerForRegisteredMem: number;
  /** `CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1` (92). */
  readonly canUseStreamMemOpsV1: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1` (93). */
  readonly canUse64BitStreamMemOpsV1: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1` (94). */
  readonly canUseStreamWaitValueNorV1: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH` (95). */
  readonly cooperativeLaunch: number;
  /** `CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH` (96). */
  readonly cooperativeMultiDeviceLaunch: number;
  /** `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN` (97). */
  readonly maxSharedMemoryPerBlockOptin: number;
  /** `CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES` (98). */
  readonly canFlushRemoteWrites: number;
  /** `CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED` (99). */
  readonly hostRegisterSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES` (100). */
  readonly pageableMemoryAccessUsesHostPageTables: number;
  /** `CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST` (101). */
  readonly directManagedMemAccessFromHost: number;
  /** `CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED` (102). */
  readonly virtualAddressManagementSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED` (103). */
  readonly handleTypePosixFileDescriptorSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED` (104). */
  readonly handleTypeWin32HandleSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED` (105). */
  readonly handleTypeWin32KmtHandleSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR` (106). */
  readonly maxBlocksPerMultiprocessor: number;
  /** `CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED` (107). */
  readonly genericCompressionSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE` (108). */
  readonly maxPersistingL2CacheSize: number;
  /** `CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE` (109). */
  readonly maxAccessPolicyWindowSize: number;
  /** `CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED` (110). */
  readonly gpuDirectRdmaWithCudaVmmSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK` (111). */
  readonly reservedSharedMemoryPerBlock: number;
  /** `CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED` (112). */
  readonly sparseCudaArraySupported: number;
  /** `CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED` (113). */
  readonly readOnlyHostRegisterSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED` (114). */
  readonly timelineSemaphoreInteropSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED` (115). */
  readonly memoryPoolsSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED` (116). */
  readonly gpuDirectRdmaSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS` (117). */
  readonly gpuDirectRdmaFlushWritesOptions: number;
  /** `CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING` (118). */
  readonly gpuDirectRdmaWritesOrdering: number;
  /** `CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES` (119). */
  readonly mempoolSupportedHandleTypes: number;
  /** `CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH` (120). */
  readonly clusterLaunch: number;
  /** `CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED` (121). */
  readonly deferredMappingCudaArraySupported: number;
  /** `CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS` (122). */
  readonly canUse64BitStreamMemOps: number;
  /** `CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR` (123). */
  readonly canUseStreamWaitValueNor: number;
  /** `CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED` (124). */
  readonly dmaBufSupported: number;
  /** `CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED` (125). */
  readonly ipcEventSupported: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT` (126). */
  readonly memSyncDomainCount: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED` (127). */
  readonly tensorMapAccessSupported: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED` (128). */
  readonly handleTypeFabricSupported: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS` (129). */
  readonly unifiedFunctionPointers: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_NUMA_CONFIG` (130). */
  readonly numaConfig: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_NUMA_ID` (131). */
  readonly numaId: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED` (132). */
  readonly multicastSupported: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_MPS_ENABLED` (133). */
  readonly mpsEnabled: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID` (134). */
  readonly hostNumaId: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED` (135). */
  readonly d3d12CigSupported: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK` (136). */
  readonly memDecompressAlgorithmMask: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH` (137). */
  readonly memDecompressMaximumLength: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED` (138). */
  readonly vulkanCigSupported: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID` (139). */
  readonly gpuPciDeviceId: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID` (140). */
  readonly gpuPciSubsystemId: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED` (141). */
  readonly hostNumaVirtualMemoryManagementSupported: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED` (142). */
  readonly hostNumaMemoryPoolsSupported: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED` (143). */
  readonly hostNumaMultinodeIpcSupported: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED` (144). */
  readonly hostMemoryPoolsSupported: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED` (145). */
  readonly hostVirtualMemoryManagementSupported: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED` (146). */
  readonly hostAllocDmaBufSupported: number | undefined;
  /** `CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED` (147). */
  readonly onlyPartialHostNativeAtomicSupported: number | undefined;
}

/** [property name, CUdevice_attribute, known to CUDA 11.8 drivers] for every property. @internal */
export const DEVICE_PROPERTY_TABLE: readonly (readonly [keyof DeviceProperties, drv.CUdevice_attribute, boolean])[] = [
  ['maxThreadsPerBlock', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, true],
  ['maxBlockDimX', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, true],
  ['maxBlockDimY', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, true],
  ['maxBlockDimZ', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, true],
  ['maxGridDimX', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, true],
  ['maxGridDimY', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, true],
  ['maxGridDimZ', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, true],
  ['maxSharedMemoryPerBlock', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, true],
  ['totalConstantMemory', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, true],
  ['warpSize', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_WARP_SIZE, true],
  ['maxPitch', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_PITCH, true],
  ['maxRegistersPerBlock', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, true],
  ['clockRate', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CLOCK_RATE, true],
  ['textureAlignment', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, true],
  ['gpuOverlap', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GPU_OVERLAP, true],
  ['multiprocessorCount', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, true],
  ['kernelExecTimeout', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT, true],
  ['integrated', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_INTEGRATED, true],
  ['canMapHostMemory', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, true],
  ['computeMode', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, true],
  ['maximumTexture1dWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH, true],
  ['maximumTexture2dWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH, true],
  ['maximumTexture2dHeight', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT, true],
  ['maximumTexture3dWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH, true],
  ['maximumTexture3dHeight', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT, true],
  ['maximumTexture3dDepth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH, true],
  ['maximumTexture2dLayeredWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH, true],
  ['maximumTexture2dLayeredHeight', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT, true],
  ['maximumTexture2dLayeredLayers', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS, true],
  ['surfaceAlignment', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT, true],
  ['concurrentKernels', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, true],
  ['eccEnabled', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_ECC_ENABLED, true],
  ['pciBusId', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, true],
  ['pciDeviceId', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, true],
  ['tccDriver', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_TCC_DRIVER, true],
  ['memoryClockRate', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, true],
  ['globalMemoryBusWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, true],
  ['l2CacheSize', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, true],
  ['maxThreadsPerMultiprocessor', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, true],
  ['asyncEngineCount', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, true],
  ['unifiedAddressing', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, true],
  ['maximumTexture1dLayeredWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH, true],
  ['maximumTexture1dLayeredLayers', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS, true],
  ['canTex2dGather', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER, true],
  ['maximumTexture2dGatherWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH, true],
  ['maximumTexture2dGatherHeight', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT, true],
  ['maximumTexture3dWidthAlternate', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE, true],
  ['maximumTexture3dHeightAlternate', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE, true],
  ['maximumTexture3dDepthAlternate', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE, true],
  ['pciDomainId', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, true],
  ['texturePitchAlignment', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, true],
  ['maximumTexturecubemapWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH, true],
  ['maximumTexturecubemapLayeredWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH, true],
  ['maximumTexturecubemapLayeredLayers', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS, true],
  ['maximumSurface1dWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH, true],
  ['maximumSurface2dWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH, true],
  ['maximumSurface2dHeight', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT, true],
  ['maximumSurface3dWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH, true],
  ['maximumSurface3dHeight', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT, true],
  ['maximumSurface3dDepth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH, true],
  ['maximumSurface1dLayeredWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH, true],
  ['maximumSurface1dLayeredLayers', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS, true],
  ['maximumSurface2dLayeredWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH, true],
  ['maximumSurface2dLayeredHeight', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT, true],
  ['maximumSurface2dLayeredLayers', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS, true],
  ['maximumSurfacecubemapWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH, true],
  ['maximumSurfacecubemapLayeredWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH, true],
  ['maximumSurfacecubemapLayeredLayers', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS, true],
  ['maximumTexture1dLinearWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH, true],
  ['maximumTexture2dLinearWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH, true],
  ['maximumTexture2dLinearHeight', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT, true],
  ['maximumTexture2dLinearPitch', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH, true],
  ['maximumTexture2dMipmappedWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH, true],
  ['maximumTexture2dMipmappedHeight', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT, true],
  ['computeCapabilityMajor', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, true],
  ['computeCapabilityMinor', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, true],
  ['maximumTexture1dMipmappedWidth', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH, true],
  ['streamPrioritiesSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, true],
  ['globalL1CacheSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED, true],
  ['localL1CacheSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED, true],
  ['maxSharedMemoryPerMultiprocessor', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, true],
  ['maxRegistersPerMultiprocessor', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, true],
  ['managedMemory', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, true],
  ['multiGpuBoard', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD, true],
  ['multiGpuBoardGroupId', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID, true],
  ['hostNativeAtomicSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED, true],
  ['singleToDoublePrecisionPerfRatio', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO, true],
  ['pageableMemoryAccess', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, true],
  ['concurrentManagedAccess', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, true],
  ['computePreemptionSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED, true],
  ['canUseHostPointerForRegisteredMem', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, true],
  ['canUseStreamMemOpsV1', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, false],
  ['canUse64BitStreamMemOpsV1', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1, false],
  ['canUseStreamWaitValueNorV1', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1, false],
  ['cooperativeLaunch', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, true],
  ['cooperativeMultiDeviceLaunch', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH, true],
  ['maxSharedMemoryPerBlockOptin', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, true],
  ['canFlushRemoteWrites', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, true],
  ['hostRegisterSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED, true],
  ['pageableMemoryAccessUsesHostPageTables', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, true],
  ['directManagedMemAccessFromHost', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST, true],
  ['virtualAddressManagementSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED, true],
  ['handleTypePosixFileDescriptorSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, true],
  ['handleTypeWin32HandleSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED, true],
  ['handleTypeWin32KmtHandleSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED, true],
  ['maxBlocksPerMultiprocessor', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, true],
  ['genericCompressionSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED, true],
  ['maxPersistingL2CacheSize', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, true],
  ['maxAccessPolicyWindowSize', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, true],
  ['gpuDirectRdmaWithCudaVmmSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, true],
  ['reservedSharedMemoryPerBlock', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, true],
  ['sparseCudaArraySupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED, true],
  ['readOnlyHostRegisterSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED, true],
  ['timelineSemaphoreInteropSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED, true],
  ['memoryPoolsSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, true],
  ['gpuDirectRdmaSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, true],
  ['gpuDirectRdmaFlushWritesOptions', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, true],
  ['gpuDirectRdmaWritesOrdering', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING, true],
  ['mempoolSupportedHandleTypes', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, true],
  ['clusterLaunch', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, true],
  ['deferredMappingCudaArraySupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED, true],
  ['canUse64BitStreamMemOps', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, true],
  ['canUseStreamWaitValueNor', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, true],
  ['dmaBufSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, true],
  ['ipcEventSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, false],
  ['memSyncDomainCount', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT, false],
  ['tensorMapAccessSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED, false],
  ['handleTypeFabricSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, false],
  ['unifiedFunctionPointers', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS, false],
  ['numaConfig', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_NUMA_CONFIG, false],
  ['numaId', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_NUMA_ID, false],
  ['multicastSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, false],
  ['mpsEnabled', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MPS_ENABLED, false],
  ['hostNumaId', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, false],
  ['d3d12CigSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED, false],
  ['memDecompressAlgorithmMask', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK, false],
  ['memDecompressMaximumLength', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH, false],
  ['vulkanCigSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED, false],
  ['gpuPciDeviceId', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID, false],
  ['gpuPciSubsystemId', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID, false],
  ['hostNumaVirtualMemoryManagementSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, false],
  ['hostNumaMemoryPoolsSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED, false],
  ['hostNumaMultinodeIpcSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED, false],
  ['hostMemoryPoolsSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED, false],
  ['hostVirtualMemoryManagementSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, false],
  ['hostAllocDmaBufSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED, false],
  ['onlyPartialHostNativeAtomicSupported', drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED, false],
];
