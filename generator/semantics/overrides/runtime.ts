// Runtime API (cuda_runtime_api.h): parameters whose direction, array length or value type the
// header does not state in a form the resolver reads. Each entry says why.
import type { Elem, ModuleOverrides, Override } from '../model';

const i32: Elem = { t: 'int', bits: 32, signed: true };
const u64: Elem = { t: 'int', bits: 64, signed: false };
const size: Elem = { t: 'int', bits: 64, signed: false, size: true };
const address: Elem = { t: 'address' };
const devicePointer: Elem = { t: 'deviceptr', name: 'DevicePointer' };
const graphNode: Elem = { t: 'handle', name: 'cudaGraphNode_t' };
const edgeData: Elem = { t: 'record', name: 'cudaGraphEdgeData_st', size: 8 };

const EDGES = 'filled by the call up to the in/out count (asked first with NULL arrays); the name does not pair it with its count';
const filled = (elem: Elem, count: string): Override => ({ sem: { role: 'capacityArray', elem, count }, reason: EDGES });
const capacityOf = (of: string[]): Override => ({ sem: { role: 'capacity', of, elem: size }, reason: 'capacity in, count out' });
const deviceOut: Override = {
  sem: { role: 'out', elem: devicePointer },
  reason: "a device address returned through void **: branded DevicePointer as the driver's CUdeviceptr",
};
const LOCATION_IN = 'a location the call reads (non-const in the header, undocumented)';
const NODE_PARAMS_SET = 'the parameters the caller sets, copied into the node (non-const in the header, undocumented direction)';
const ITERATOR = 'an auto-advancing iterator: where to start in, the next log out (the header says so in a note, not on the parameter)';

const KERNEL_ARGS = 'an array of addresses of the kernel arguments (void **), read by the launch: the caller builds it';
const params: Record<string, Override> = {
  'cudaLaunchKernel.args': { sem: { role: 'pointer', nullable: true }, reason: KERNEL_ARGS },
  'cudaLaunchCooperativeKernel.args': { sem: { role: 'pointer', nullable: true }, reason: KERNEL_ARGS },
  'cudaGraphGetEdges.from': filled(graphNode, 'numEdges'),
  'cudaGraphGetEdges.to': filled(graphNode, 'numEdges'),
  'cudaGraphGetEdges.edgeData': filled(edgeData, 'numEdges'),
  'cudaGraphGetEdges.numEdges': capacityOf(['from', 'to', 'edgeData']),
  'cudaGraphNodeGetDependencies.edgeData': filled(edgeData, 'pNumDependencies'),
  'cudaGraphNodeGetDependencies.pNumDependencies': capacityOf(['pDependencies', 'edgeData']),
  'cudaGraphNodeGetDependentNodes.edgeData': filled(edgeData, 'pNumDependentNodes'),
  'cudaGraphNodeGetDependentNodes.pNumDependentNodes': capacityOf(['pDependentNodes', 'edgeData']),
  'cudaMemGetMemPool.location': { sem: { role: 'inRecord', record: 'cudaMemLocation', nullable: false }, reason: LOCATION_IN },
  'cudaMemSetMemPool.location': { sem: { role: 'inRecord', record: 'cudaMemLocation', nullable: false }, reason: LOCATION_IN },
  'cudaMemGetDefaultMemPool.location': { sem: { role: 'inRecord', record: 'cudaMemLocation', nullable: false }, reason: LOCATION_IN },
  'cudaGraphNodeSetParams.nodeParams': { sem: { role: 'inRecord', record: 'cudaGraphNodeParams', nullable: false }, reason: NODE_PARAMS_SET },
  'cudaGraphExecNodeSetParams.nodeParams': { sem: { role: 'inRecord', record: 'cudaGraphNodeParams', nullable: false }, reason: NODE_PARAMS_SET },
  'cudaGraphAddNode.nodeParams': {
    sem: { role: 'inoutRecord', record: 'cudaGraphNodeParams' },
    reason: 'read, and results written back (mem-alloc nodes: dptr; conditional nodes: phGraph_out)',
  },
  'cudaGraphAddMemAllocNode.nodeParams': {
    sem: { role: 'inoutRecord', record: 'cudaMemAllocNodeParams' },
    reason: 'read, and the allocated address written back into dptr',
  },
  'cudaGraphInstantiateWithParams.instantiateParams': {
    sem: { role: 'inoutRecord', record: 'cudaGraphInstantiateParams_st' },
    reason: 'flags and upload stream read, result_out and errNode_out written',
  },
  'cudaGraphMemFreeNodeGetParams.dptr_out': deviceOut,
  'cudaLibraryEnumerateKernels.kernels': {
    sem: { role: 'outArray', elem: { t: 'handle', name: 'cudaKernel_t' }, count: 'numKernels' },
    reason: 'filled with numKernels handles (non-const, undocumented direction)',
  },
  'cudaLibraryEnumerateKernels.numKernels': {
    sem: { role: 'value', elem: { t: 'int', bits: 32, signed: false } },
    reason: 'how many handles to return (cudaLibraryGetKernelCount)',
  },
  'cudaLogsDumpToFile.iterator': { sem: { role: 'inout', elem: { t: 'int', bits: 32, signed: false } }, reason: ITERATOR },
  'cudaLogsDumpToMemory.iterator': { sem: { role: 'inout', elem: { t: 'int', bits: 32, signed: false } }, reason: ITERATOR },
  'cudaMemPoolImportPointer.exportData': {
    sem: { role: 'inRecord', record: 'cudaMemPoolPtrExportData', nullable: false },
    reason: 'the exported data the call reads (non-const in the header)',
  },
  'cudaEventElapsedTime.ms': { sem: { role: 'out', elem: { t: 'float', bits: 32 } }, reason: 'one float returned; the name reads as a plural' },
  'cudaThreadExchangeStreamCaptureMode.mode': {
    sem: { role: 'inout', elem: { t: 'enum', name: 'cudaStreamCaptureMode', bits: 32, signed: false } },
    reason: 'the new mode in, the previous mode out',
  },
  'cudaPointerGetAttributes.attributes': {
    sem: { role: 'outRecord', record: 'cudaPointerAttributes' },
    reason: 'one record returned; the plural-looking name is not an array',
  },
  'cudaDeviceGetTexture1DLinearMaxWidth.maxWidthInElements': { sem: { role: 'out', elem: size }, reason: 'one size returned; the name reads as a plural' },
  'cudaStreamGetCaptureInfo.dependencies_out': {
    sem: { role: 'out', elem: address },
    reason: 'the address of an array the runtime owns, valid until the next capture call',
  },
  'cudaStreamGetCaptureInfo.edgeData_out': { sem: { role: 'out', elem: address }, reason: 'the address of an array the runtime owns' },
  'cudaStreamGetCaptureInfo.numDependencies_out': { sem: { role: 'out', elem: size }, reason: 'the length of dependencies_out' },
  'cudaMemRangeGetAttribute.data': {
    sem: { role: 'pointer', nullable: false, size: 'dataSize' },
    reason: 'dataSize bytes written (count is the range length)',
  },
  'cudaMemRangeGetAttributes.data': {
    sem: { role: 'pointer', nullable: false },
    reason: 'an array of numAttributes caller pointers, each written with dataSizes[i] bytes',
  },
  'cudaMemRangeGetAttributes.dataSizes': { sem: { role: 'inArray', elem: size, count: 'numAttributes', nullable: false }, reason: 'one size per attribute' },
  'cudaMemRangeGetAttributes.numAttributes': { sem: { role: 'count', of: ['attributes', 'dataSizes'] }, reason: 'the length of both arrays' },
  'cudaMemRangeGetAttributes.count': { sem: { role: 'value', elem: size }, reason: 'the byte length of the range (not an array count)' },
  'cudaMemPoolGetAttribute.value': { sem: { role: 'attrValue', attr: 'attr', dir: 'out', table: 'mempool' }, reason: 'int or unsigned long long by attribute' },
  'cudaMemPoolSetAttribute.value': { sem: { role: 'attrValue', attr: 'attr', dir: 'in', table: 'mempool' }, reason: 'int or unsigned long long by attribute' },
  'cudaDeviceGetGraphMemAttribute.value': {
    sem: { role: 'attrValue', attr: 'attr', dir: 'out', table: 'graphMem' },
    reason: 'unsigned long long for every attribute',
  },
  'cudaDeviceSetGraphMemAttribute.value': {
    sem: { role: 'attrValue', attr: 'attr', dir: 'in', table: 'graphMem' },
    reason: 'unsigned long long for every attribute',
  },
};
for (const f of [
  'cudaMalloc.devPtr',
  'cudaMallocAsync.devPtr',
  'cudaMallocFromPoolAsync.ptr',
  'cudaMallocManaged.devPtr',
  'cudaMallocPitch.devPtr',
  'cudaHostGetDevicePointer.pDevice',
  'cudaGetSymbolAddress.devPtr',
  'cudaIpcOpenMemHandle.devPtr',
  'cudaMemPoolImportPointer.ptr',
  'cudaGraphicsResourceGetMappedPointer.devPtr',
  'cudaExternalMemoryGetMappedBuffer.devPtr',
  'cudaLibraryGetGlobal.dptr',
  'cudaLibraryGetManaged.dptr',
]) {
  params[f] = deviceOut;
}

export const runtime: ModuleOverrides = {
  params,
  attrTables: {
    mempool: {
      enum: 'cudaMemPoolAttr',
      values: {
        cudaMemPoolReuseFollowEventDependencies: i32,
        cudaMemPoolReuseAllowOpportunistic: i32,
        cudaMemPoolReuseAllowInternalDependencies: i32,
        cudaMemPoolAttrReleaseThreshold: u64,
        cudaMemPoolAttrReservedMemCurrent: u64,
        cudaMemPoolAttrReservedMemHigh: u64,
        cudaMemPoolAttrUsedMemCurrent: u64,
        cudaMemPoolAttrUsedMemHigh: u64,
      },
    },
    graphMem: {
      enum: 'cudaGraphMemAttributeType',
      values: {
        cudaGraphMemAttrUsedMemCurrent: u64,
        cudaGraphMemAttrUsedMemHigh: u64,
        cudaGraphMemAttrReservedMemCurrent: u64,
        cudaGraphMemAttrReservedMemHigh: u64,
      },
    },
  },
};
