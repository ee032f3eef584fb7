// Driver API (cuda.h): parameters whose direction, array length or value type the header does not
// state in a form the resolver reads. Each entry: what it is, and why the facts fell short.
import type { Elem, ModuleOverrides, Override } from '../model';

const u8: Elem = { t: 'int', bits: 8, signed: false };
const u32: Elem = { t: 'int', bits: 32, signed: false };
const i32: Elem = { t: 'int', bits: 32, signed: true };
const u64: Elem = { t: 'int', bits: 64, signed: false };
const size: Elem = { t: 'int', bits: 64, signed: false, size: true };
const bool: Elem = { t: 'bool' };
const address: Elem = { t: 'address' };
const graphNode: Elem = { t: 'handle', name: 'CUgraphNode' };
const edgeData: Elem = { t: 'record', name: 'CUgraphEdgeData_st', size: 8 };

const inRecord = (record: string, reason: string, nullable = false): Override => ({ sem: { role: 'inRecord', record, nullable }, reason });
const inoutRecord = (record: string, reason: string): Override => ({ sem: { role: 'inoutRecord', record }, reason });
const capacityOf = (of: string[], reason: string): Override => ({ sem: { role: 'capacity', of, elem: size }, reason });
const filled = (elem: Elem, count: string, reason: string): Override => ({ sem: { role: 'capacityArray', elem, count }, reason });

const EDGES = 'filled by the call up to the in/out count (asked first with NULL arrays); the name does not pair it with its count';
const LOCATION_IN = 'a location the call reads (non-const in the header, undocumented)';
const NODE_PARAMS_SET = 'the parameters the caller sets, copied into the node (non-const in the header, undocumented direction)';
const CHECKPOINT_ARGS = 'optional arguments the call reads; non-const and plural-named in the header';

const KERNEL_PARAMS = 'an array of addresses of the kernel arguments (void **), read by the launch: the caller builds it';
const kernelParams: Override = { sem: { role: 'pointer', nullable: true }, reason: KERNEL_PARAMS };

export const driver: ModuleOverrides = {
  params: {
    'cuLaunchKernel.kernelParams': kernelParams,
    'cuLaunchKernel.extra': { sem: { role: 'pointer', nullable: true }, reason: 'the CU_LAUNCH_PARAM_* list the launch reads (void **)' },
    'cuLaunchCooperativeKernel.kernelParams': kernelParams,
    'cuLaunchKernelEx.kernelParams': kernelParams,
    'cuLaunchKernelEx.extra': { sem: { role: 'pointer', nullable: true }, reason: 'the CU_LAUNCH_PARAM_* list the launch reads (void **)' },
    'cuGraphGetEdges.from': filled(graphNode, 'numEdges', EDGES),
    'cuGraphGetEdges.to': filled(graphNode, 'numEdges', EDGES),
    'cuGraphGetEdges.edgeData': filled(edgeData, 'numEdges', EDGES),
    'cuGraphGetEdges.numEdges': capacityOf(['from', 'to', 'edgeData'], 'capacity in, edge count out'),
    'cuGraphNodeGetDependencies.edgeData': filled(edgeData, 'numDependencies', EDGES),
    'cuGraphNodeGetDependencies.numDependencies': capacityOf(['dependencies', 'edgeData'], 'capacity in, count out'),
    'cuGraphNodeGetDependentNodes.edgeData': filled(edgeData, 'numDependentNodes', EDGES),
    'cuGraphNodeGetDependentNodes.numDependentNodes': capacityOf(['dependentNodes', 'edgeData'], 'capacity in, count out'),
    'cuDevSmResourceSplitByCount.result': filled(
      { t: 'record', name: 'CUdevResource_st', size: 144 },
      'nbGroups',
      'groups filled up to nbGroups; with NULL the call says how many it would make',
    ),
    'cuDevSmResourceSplitByCount.nbGroups': capacityOf(['result'], 'groups asked in, groups made out'),
    'cuMemGetMemPool.location': inRecord('CUmemLocation_st', LOCATION_IN),
    'cuMemSetMemPool.location': inRecord('CUmemLocation_st', LOCATION_IN),
    'cuMemGetDefaultMemPool.location': inRecord('CUmemLocation_st', LOCATION_IN),
    'cuCtxCreate.ctxCreateParams': inRecord('CUctxCreateParams_st', 'optional creation parameters the call reads (non-const in the header)', true),
    'cuCheckpointProcessCheckpoint.args': inRecord('CUcheckpointCheckpointArgs_st', CHECKPOINT_ARGS, true),
    'cuCheckpointProcessLock.args': inRecord('CUcheckpointLockArgs_st', CHECKPOINT_ARGS, true),
    'cuCheckpointProcessRestore.args': inRecord('CUcheckpointRestoreArgs_st', CHECKPOINT_ARGS, true),
    'cuCheckpointProcessUnlock.args': inRecord('CUcheckpointUnlockArgs_st', CHECKPOINT_ARGS, true),
    'cuArrayGetMemoryRequirements.memoryRequirements': {
      sem: { role: 'outRecord', record: 'CUDA_ARRAY_MEMORY_REQUIREMENTS_st' },
      reason: 'one record returned; the plural-looking name is not an array',
    },
    'cuMipmappedArrayGetMemoryRequirements.memoryRequirements': {
      sem: { role: 'outRecord', record: 'CUDA_ARRAY_MEMORY_REQUIREMENTS_st' },
      reason: 'one record returned; the plural-looking name is not an array',
    },
    'cuArrayGetSparseProperties.sparseProperties': { sem: { role: 'outRecord', record: 'CUDA_ARRAY_SPARSE_PROPERTIES_st' }, reason: 'one record returned' },
    'cuMipmappedArrayGetSparseProperties.sparseProperties': {
      sem: { role: 'outRecord', record: 'CUDA_ARRAY_SPARSE_PROPERTIES_st' },
      reason: 'one record returned',
    },
    'cuGraphAddMemAllocNode.nodeParams': inoutRecord('CUDA_MEM_ALLOC_NODE_PARAMS_v1_st', 'read, and the allocated address written back into dptr'),
    'cuGraphAddNode.nodeParams': inoutRecord('CUgraphNodeParams_st', 'read, and results written back (mem-alloc nodes: dptr; conditional nodes: phGraph_out)'),
    'cuGraphInstantiateWithParams.instantiateParams': inoutRecord(
      'CUDA_GRAPH_INSTANTIATE_PARAMS_st',
      'flags and upload stream read, result_out and errNode_out written',
    ),
    'cuLibraryEnumerateKernels.kernels': {
      sem: { role: 'outArray', elem: { t: 'handle', name: 'CUkernel' }, count: 'numKernels' },
      reason: 'filled with numKernels handles (non-const, undocumented direction)',
    },
    'cuLibraryEnumerateKernels.numKernels': { sem: { role: 'value', elem: u32 }, reason: 'how many handles to return (cuLibraryGetKernelCount)' },
    'cuModuleEnumerateFunctions.functions': {
      sem: { role: 'outArray', elem: { t: 'handle', name: 'CUfunction' }, count: 'numFunctions' },
      reason: 'filled with numFunctions handles (non-const, undocumented direction)',
    },
    'cuModuleEnumerateFunctions.numFunctions': { sem: { role: 'value', elem: u32 }, reason: 'how many handles to return (cuModuleGetFunctionCount)' },
    'cuEventElapsedTime.pMilliseconds': { sem: { role: 'out', elem: { t: 'float', bits: 32 } }, reason: 'one float returned; the name reads as a plural' },
    'cuThreadExchangeStreamCaptureMode.mode': {
      sem: { role: 'inout', elem: { t: 'enum', name: 'CUstreamCaptureMode', bits: 32, signed: false } },
      reason: 'the new mode in, the previous mode out',
    },
    'cuLogsDumpToMemory.iterator': { sem: { role: 'inout', elem: u32 }, reason: 'where to start in, where it stopped out' },
    'cuLogsDumpToFile.iterator': {
      sem: { role: 'inout', elem: u32 },
      reason: 'an auto-advancing iterator: where to start in, the next log out (the header says so in a note, not on the parameter)',
    },
    'cuGraphNodeSetParams.nodeParams': inRecord('CUgraphNodeParams_st', NODE_PARAMS_SET),
    'cuGraphExecNodeSetParams.nodeParams': inRecord('CUgraphNodeParams_st', NODE_PARAMS_SET),
    'cuMemGetHandleForAddressRange.handle': {
      sem: { role: 'out', elem: i32 },
      reason: 'the dma-buf file descriptor returned (an int written through void *; the one handle type): size is the range, not this buffer',
    },
    'cuDeviceGetLuid.luid': {
      sem: { role: 'outArray', elem: u8, count: 8 },
      reason: 'the 8-byte LUID returned (char *, no length parameter: the size is in the function description)',
    },
    'cuTexRefGetBorderColor.pBorderColor': {
      sem: { role: 'outArray', elem: { t: 'float', bits: 32 }, count: 4 },
      reason: 'four floats returned (RGBA), as cuTexRefSetBorderColor takes them',
    },
    'cuTensorMapReplaceAddress.tensorMap': inoutRecord('CUtensorMap_st', 'an encoded tensor map read and rewritten with the new address'),
    'cuTexRefSetBorderColor.pBorderColor': {
      sem: { role: 'inArray', elem: { t: 'float', bits: 32 }, nullable: false },
      reason: 'four floats read (RGBA), not returned',
    },
    'cuLaunchCooperativeKernelMultiDevice.launchParamsList': {
      sem: { role: 'inArray', elem: { t: 'record', name: 'CUDA_LAUNCH_PARAMS_st', size: 80 }, count: 'numDevices', nullable: false },
      reason: 'one launch record per device',
    },
    'cuLaunchCooperativeKernelMultiDevice.numDevices': { sem: { role: 'count', of: ['launchParamsList'] }, reason: 'the length of launchParamsList' },
    'cuSignalExternalSemaphoresAsync.paramsArray': {
      sem: { role: 'inArray', elem: { t: 'record', name: 'CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS_st', size: 144 }, count: 'numExtSems', nullable: false },
      reason: 'one parameter record per semaphore',
    },
    'cuSignalExternalSemaphoresAsync.numExtSems': { sem: { role: 'count', of: ['extSemArray', 'paramsArray'] }, reason: 'the length of both arrays' },
    'cuWaitExternalSemaphoresAsync.paramsArray': {
      sem: { role: 'inArray', elem: { t: 'record', name: 'CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS_st', size: 144 }, count: 'numExtSems', nullable: false },
      reason: 'one parameter record per semaphore',
    },
    'cuWaitExternalSemaphoresAsync.numExtSems': { sem: { role: 'count', of: ['extSemArray', 'paramsArray'] }, reason: 'the length of both arrays' },
    'cuStreamGetCaptureInfo.dependencies_out': {
      sem: { role: 'out', elem: address },
      reason: 'the address of an array the driver owns (const CUgraphNode **), valid until the next capture call',
    },
    'cuStreamGetCaptureInfo.edgeData_out': { sem: { role: 'out', elem: address }, reason: 'the address of an array the driver owns, as dependencies_out' },
    'cuStreamGetCaptureInfo.numDependencies_out': { sem: { role: 'out', elem: size }, reason: 'the length of dependencies_out, returned' },
    'cuMemRangeGetAttribute.data': {
      sem: { role: 'pointer', nullable: false, size: 'dataSize' },
      reason: 'dataSize bytes written (count is the range length)',
    },
    'cuMemRangeGetAttributes.data': {
      sem: { role: 'pointer', nullable: false },
      reason: 'an array of numAttributes caller pointers, each written with dataSizes[i] bytes',
    },
    'cuMemRangeGetAttributes.dataSizes': { sem: { role: 'inArray', elem: size, count: 'numAttributes', nullable: false }, reason: 'one size per attribute' },
    'cuMemRangeGetAttributes.numAttributes': { sem: { role: 'count', of: ['attributes', 'dataSizes'] }, reason: 'the length of both arrays' },
    'cuMemRangeGetAttributes.count': { sem: { role: 'value', elem: size }, reason: 'the byte length of the range (not an array count)' },
    'cuPointerGetAttribute.data': {
      sem: { role: 'attrValue', attr: 'attribute', dir: 'out', table: 'pointer' },
      reason: 'the value type depends on the attribute',
    },
    'cuPointerGetAttributes.data': {
      sem: { role: 'attrValue', attr: 'attributes', dir: 'out', table: 'pointer' },
      reason: 'one caller pointer per attribute, each value typed by its attribute',
    },
    'cuPointerSetAttribute.value': {
      sem: { role: 'attrValue', attr: 'attribute', dir: 'in', table: 'pointer' },
      reason: 'the value type depends on the attribute',
    },
    'cuMemPoolGetAttribute.value': { sem: { role: 'attrValue', attr: 'attr', dir: 'out', table: 'mempool' }, reason: 'int or cuuint64_t by attribute' },
    'cuMemPoolSetAttribute.value': { sem: { role: 'attrValue', attr: 'attr', dir: 'in', table: 'mempool' }, reason: 'int or cuuint64_t by attribute' },
    'cuDeviceGetGraphMemAttribute.value': { sem: { role: 'attrValue', attr: 'attr', dir: 'out', table: 'graphMem' }, reason: 'cuuint64_t for every attribute' },
    'cuDeviceSetGraphMemAttribute.value': { sem: { role: 'attrValue', attr: 'attr', dir: 'in', table: 'graphMem' }, reason: 'cuuint64_t for every attribute' },
    'cuCoredumpGetAttribute.size': { sem: { role: 'inout', elem: size }, reason: 'buffer size in, bytes written out' },
    'cuCoredumpGetAttributeGlobal.size': { sem: { role: 'inout', elem: size }, reason: 'buffer size in, bytes written out' },
    'cuCoredumpSetAttribute.size': { sem: { role: 'inout', elem: size }, reason: 'value size in (and out)' },
    'cuCoredumpSetAttributeGlobal.size': { sem: { role: 'inout', elem: size }, reason: 'value size in (and out)' },
    'cuCoredumpGetAttribute.value': { sem: { role: 'pointer', nullable: false }, reason: 'caller memory of *size bytes' },
    'cuCoredumpGetAttributeGlobal.value': { sem: { role: 'pointer', nullable: false }, reason: 'caller memory of *size bytes' },
  },
  attrTables: {
    pointer: {
      enum: 'CUpointer_attribute',
      values: {
        CU_POINTER_ATTRIBUTE_CONTEXT: { t: 'handle', name: 'CUcontext' },
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE: u32,
        CU_POINTER_ATTRIBUTE_DEVICE_POINTER: { t: 'deviceptr', name: 'CUdeviceptr' },
        CU_POINTER_ATTRIBUTE_HOST_POINTER: address,
        CU_POINTER_ATTRIBUTE_P2P_TOKENS: { t: 'record', name: 'CUDA_POINTER_ATTRIBUTE_P2P_TOKENS_st', size: 16 },
        CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: bool,
        CU_POINTER_ATTRIBUTE_BUFFER_ID: u64,
        CU_POINTER_ATTRIBUTE_IS_MANAGED: bool,
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: i32,
        CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: bool,
        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: { t: 'deviceptr', name: 'CUdeviceptr' },
        CU_POINTER_ATTRIBUTE_RANGE_SIZE: size,
        CU_POINTER_ATTRIBUTE_MAPPED: bool,
        CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: u64,
        CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: bool,
        CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: u32,
        CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: { t: 'handle', name: 'CUmemoryPool' },
        CU_POINTER_ATTRIBUTE_MAPPING_SIZE: size,
        CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: address,
        CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: u64,
        CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: bool,
      },
    },
    mempool: {
      enum: 'CUmemPool_attribute',
      values: {
        CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: i32,
        CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: i32,
        CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: i32,
        CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: u64,
        CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: u64,
        CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: u64,
        CU_MEMPOOL_ATTR_USED_MEM_CURRENT: u64,
        CU_MEMPOOL_ATTR_USED_MEM_HIGH: u64,
      },
    },
    graphMem: {
      enum: 'CUgraphMem_attribute',
      values: {
        CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT: u64,
        CU_GRAPH_MEM_ATTR_USED_MEM_HIGH: u64,
        CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT: u64,
        CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: u64,
      },
    },
  },
};
