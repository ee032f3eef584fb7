// The parameter-semantics model, asserted for a reviewed sample of functions of every module (13.0).
// Each line was checked against the C signature and the header documentation (outputs, in/out values,
// arrays and what counts them, capacity/count pairs, versioned structs, attribute-typed values, records,
// memory the library keeps). A change of classification fails here and shows in the signature listing.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TypeModel } from '../generator/model';
import { parseIR } from '../generator/ir/store';
import { findModule } from '../generator/modules';
import { formatListing, overridesFor, resolveModule, staleOverrides, typedSignatures, type FunctionSem } from '../generator/semantics';

const root = join(__dirname, '..');
const models = new Map<string, { model: TypeModel; sems: Map<string, FunctionSem>; listing: string }>();
function moduleOf(name: string) {
  let m = models.get(name);
  if (!m) {
    const path = join(root, 'headers', '13.0', `${name}.json`);
    const ir = parseIR(readFileSync(path, 'utf8'), path);
    const model = new TypeModel(ir, findModule(name)!);
    const list = resolveModule(model);
    m = { model, sems: new Map(list.map((f) => [f.name, f])), listing: formatListing(ir, list) };
    models.set(name, m);
  }
  return m;
}

/** The listing line of one function, without the [doc]/[override] source marks. */
function line(module: string, fn: string): string | undefined {
  const l = moduleOf(module)
    .listing.split('\n')
    .find((x) => x.startsWith(`${fn}(`));
  return l?.replace(/ \[(doc|override)\]/g, '');
}

const REVIEWED: [module: string, signature: string][] = [
  ['driver', 'cuInit(Flags: in u32)'],
  ['driver', 'cuDeviceGet(device: out i32, ordinal: in i32)'],
  ['driver', 'cuDeviceGetCount(count: out i32)'],
  ['driver', 'cuDeviceGetName(name: out text[len], len: in i32, dev: in i32)'],
  ['driver', 'cuDeviceGetUuid(uuid: out struct CUuuid_st, dev: in i32)'],
  ['driver', 'cuDeviceGetAttribute(pi: out i32, attrib: in CUdevice_attribute, dev: in i32)'],
  ['driver', 'cuDeviceTotalMem(bytes: out size_t, dev: in i32)'],
  ['driver', 'cuCtxCreate(pctx: out CUcontext, ctxCreateParams: in struct CUctxCreateParams_st?, flags: in u32, dev: in i32)'],
  ['driver', 'cuCtxGetCurrent(pctx: out CUcontext)'],
  ['driver', 'cuCtxSetCurrent(ctx: in CUcontext)'],
  ['driver', 'cuMemAlloc(dptr: out CUdeviceptr, bytesize: in size_t)'],
  ['driver', 'cuMemFree(dptr: in CUdeviceptr)'],
  ['driver', 'cuMemcpyHtoD(dstDevice: in CUdeviceptr, srcHost: in pointer? covering ByteCount, ByteCount: in size_t)'],
  ['driver', 'cuMemcpyDtoH(dstHost: inout pointer? covering ByteCount, srcDevice: in CUdeviceptr, ByteCount: in size_t)'],
  ['driver', 'cuMemcpy3D(pCopy: in struct CUDA_MEMCPY3D_st)'],
  ['driver', 'cuMemGetInfo(free: out size_t, total: out size_t)'],
  ['driver', 'cuMemAllocAsync(dptr: out CUdeviceptr, bytesize: in size_t, hStream: in CUstream)'],
  ['driver', 'cuMemSetAccess(ptr: in CUdeviceptr, size: in size_t, desc: in struct CUmemAccessDesc_st[count], count: count of desc)'],
  ['driver', 'cuMemGetMemPool(pool: out CUmemoryPool, location: in struct CUmemLocation_st, type: in CUmemAllocationType)'],
  ['driver', 'cuMemSetMemPool(location: in struct CUmemLocation_st, type: in CUmemAllocationType, pool: in CUmemoryPool)'],
  ['driver', 'cuMemPoolGetAttribute(pool: in CUmemoryPool, attr: in CUmemPool_attribute, value: out value typed by attr (mempool))'],
  ['driver', 'cuMemPoolSetAttribute(pool: in CUmemoryPool, attr: in CUmemPool_attribute, value: in value typed by attr (mempool))'],
  ['driver', 'cuPointerGetAttribute(data: out value typed by attribute (pointer), attribute: in CUpointer_attribute, ptr: in CUdeviceptr)'],
  [
    'driver',
    'cuPointerGetAttributes(numAttributes: count of attributes, attributes: in CUpointer_attribute[numAttributes], data: out value typed by attributes (pointer), ptr: in CUdeviceptr)',
  ],
  [
    'driver',
    'cuGraphGetEdges(hGraph: in CUgraph, from: out CUgraphNode[*numEdges], to: out CUgraphNode[*numEdges], edgeData: out struct CUgraphEdgeData_st[*numEdges], numEdges: capacity/count of from, to, edgeData)',
  ],
  ['driver', 'cuGraphGetNodes(hGraph: in CUgraph, nodes: out CUgraphNode[*numNodes], numNodes: capacity/count of nodes)'],
  [
    'driver',
    'cuGraphNodeGetDependencies(hNode: in CUgraphNode, dependencies: out CUgraphNode[*numDependencies], edgeData: out struct CUgraphEdgeData_st[*numDependencies], numDependencies: capacity/count of dependencies, edgeData)',
  ],
  [
    'driver',
    'cuGraphAddKernelNode(phGraphNode: out CUgraphNode, hGraph: in CUgraph, dependencies: in CUgraphNode[numDependencies], numDependencies: count of dependencies, nodeParams: in struct CUDA_KERNEL_NODE_PARAMS_v2_st)',
  ],
  [
    'driver',
    'cuGraphAddMemcpyNode(phGraphNode: out CUgraphNode, hGraph: in CUgraph, dependencies: in CUgraphNode[numDependencies], numDependencies: count of dependencies, copyParams: in struct CUDA_MEMCPY3D_st, ctx: in CUcontext)',
  ],
  [
    'driver',
    'cuGraphAddMemAllocNode(phGraphNode: out CUgraphNode, hGraph: in CUgraph, dependencies: in CUgraphNode[numDependencies], numDependencies: count of dependencies, nodeParams: inout struct CUDA_MEM_ALLOC_NODE_PARAMS_v1_st)',
  ],
  [
    'driver',
    'cuGraphInstantiateWithParams(phGraphExec: out CUgraphExec, hGraph: in CUgraph, instantiateParams: inout struct CUDA_GRAPH_INSTANTIATE_PARAMS_st)',
  ],
  ['driver', 'cuStreamBatchMemOp(stream: in CUstream, count: count of paramArray, paramArray: in struct CUstreamBatchMemOpParams_union[count], flags: in u32)'],
  ['driver', 'cuStreamCreate(phStream: out CUstream, Flags: in u32)'],
  [
    'driver',
    'cuStreamGetCaptureInfo(hStream: in CUstream, captureStatus_out: out CUstreamCaptureStatus, id_out: out u64, graph_out: out CUgraph, dependencies_out: out address, edgeData_out: out address, numDependencies_out: out size_t)',
  ],
  ['driver', 'cuEventElapsedTime(pMilliseconds: out f32, hStart: in CUevent, hEnd: in CUevent)'],
  ['driver', 'cuEventCreate(phEvent: out CUevent, Flags: in u32)'],
  ['driver', 'cuOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks: out i32, func: in CUfunction, blockSize: in i32, dynamicSMemSize: in size_t)'],
  [
    'driver',
    'cuOccupancyMaxPotentialBlockSize(minGridSize: out i32, blockSize: out i32, func: in CUfunction, blockSizeToDynamicSMemSize: in callback, dynamicSMemSize: in size_t, blockSizeLimit: in i32)',
  ],
  [
    'driver',
    'cuTensorMapEncodeTiled(tensorMap: out struct CUtensorMap_st, tensorDataType: in CUtensorMapDataType, tensorRank: in u32, globalAddress: inout pointer?, globalDim: in u64[]?, globalStrides: in u64[]?, boxDim: in u32[]?, elementStrides: in u32[]?, interleave: in CUtensorMapInterleave, swizzle: in CUtensorMapSwizzle, l2Promotion: in CUtensorMapL2promotion, oobFill: in CUtensorMapFloatOOBfill)',
  ],
  ['driver', 'cuTensorMapReplaceAddress(tensorMap: inout struct CUtensorMap_st, globalAddress: inout pointer?)'],
  ['driver', 'cuThreadExchangeStreamCaptureMode(mode: inout CUstreamCaptureMode)'],
  ['driver', 'cuLogsDumpToMemory(iterator: inout u32, buffer: out text[*size = 4096], size: capacity/count of buffer, flags: in u32)'],
  [
    'driver',
    'cuDevSmResourceSplitByCount(result: out struct CUdevResource_st[*nbGroups], nbGroups: capacity/count of result, input: in struct CUdevResource_st, remaining: out struct CUdevResource_st, useFlags: in u32, minCount: in u32)',
  ],
  ['driver', 'cuTexRefSetBorderColor(hTexRef: in CUtexref, pBorderColor: in f32[])'],
  [
    'driver',
    'cuLaunchKernel(f: in CUfunction, gridDimX: in u32, gridDimY: in u32, gridDimZ: in u32, blockDimX: in u32, blockDimY: in u32, blockDimZ: in u32, sharedMemBytes: in u32, hStream: in CUstream, kernelParams: inout pointer?, extra: inout pointer?)',
  ],
  ['driver', 'cuLaunchKernelEx(config: in struct CUlaunchConfig_st, f: in CUfunction, kernelParams: inout pointer?, extra: inout pointer?)'],
  ['driver', 'cuLaunchHostFunc(hStream: in CUstream, fn: in callback, userData: inout pointer?)'],
  [
    'driver',
    'cuModuleLoadDataEx(module: out CUmodule, image: in pointer?, numOptions: count of options, optionValues, options: in CUjit_option[numOptions], optionValues: in address[numOptions])',
  ],
  ['driver', 'cuModuleGetFunction(hfunc: out CUfunction, hmod: in CUmodule, name: in string)'],
  ['driver', 'cuModuleGetGlobal(dptr: out CUdeviceptr, bytes: out size_t, hmod: in CUmodule, name: in string)'],
  ['driver', 'cuModuleEnumerateFunctions(functions: out CUfunction[numFunctions], numFunctions: in u32, mod: in CUmodule)'],
  ['driver', 'cuLibraryEnumerateKernels(kernels: out CUkernel[numKernels], numKernels: in u32, lib: in CUlibrary)'],
  [
    'driver',
    'cuLinkCreate(numOptions: count of options, optionValues, options: in CUjit_option[numOptions], optionValues: in address[numOptions], stateOut: out CUlinkState)',
  ],
  [
    'driver',
    'cuMemcpyBatchAsync(dsts: in CUdeviceptr[count], srcs: in CUdeviceptr[count], sizes: in size_t[count], count: count of dsts, srcs, sizes, attrs: in struct CUmemcpyAttributes_st[numAttrs], attrsIdxs: in size_t[numAttrs], numAttrs: count of attrs, attrsIdxs, hStream: in CUstream)',
  ],
  ['driver', 'cuDeviceGetGraphMemAttribute(device: in i32, attr: in CUgraphMem_attribute, value: out value typed by attr (graphMem))'],
  ['driver', 'cuCoredumpGetAttribute(attrib: in CUcoredumpSettings, value: inout pointer, size: inout size_t)'],
  ['driver', 'cuIpcOpenMemHandle(pdptr: out CUdeviceptr, handle: in struct CUipcMemHandle_st (by value), Flags: in u32)'],
  [
    'driver',
    'cuMemRangeGetAttributes(data: inout pointer, dataSizes: in size_t[numAttributes], attributes: in CUmem_range_attribute[numAttributes], numAttributes: count of attributes, dataSizes, devPtr: in CUdeviceptr, count: in size_t)',
  ],
  ['runtime', 'cudaGetDeviceCount(count: out i32)'],
  ['runtime', 'cudaGetDeviceProperties(prop: out struct cudaDeviceProp, device: in i32)'],
  ['runtime', 'cudaMalloc(devPtr: out DevicePointer, size: in size_t)'],
  ['runtime', 'cudaMallocAsync(devPtr: out DevicePointer, size: in size_t, hStream: in cudaStream_t)'],
  ['runtime', 'cudaFree(devPtr: inout pointer?)'],
  ['runtime', 'cudaMemcpy(dst: inout pointer? covering count, src: in pointer? covering count, count: in size_t, kind: in cudaMemcpyKind)'],
  [
    'runtime',
    'cudaMemcpyAsync(dst: inout pointer? covering count, src: in pointer? covering count, count: in size_t, kind: in cudaMemcpyKind, stream: in cudaStream_t)',
  ],
  ['runtime', 'cudaMemset(devPtr: inout pointer? covering count, value: in i32, count: in size_t)'],
  ['runtime', 'cudaEventElapsedTime(ms: out f32, start: in cudaEvent_t, end: in cudaEvent_t)'],
  [
    'runtime',
    'cudaGraphGetEdges(graph: in cudaGraph_t, from: out cudaGraphNode_t[*numEdges], to: out cudaGraphNode_t[*numEdges], edgeData: out struct cudaGraphEdgeData_st[*numEdges], numEdges: capacity/count of from, to, edgeData)',
  ],
  ['runtime', 'cudaGraphGetRootNodes(graph: in cudaGraph_t, pRootNodes: out cudaGraphNode_t[*pNumRootNodes], pNumRootNodes: capacity/count of pRootNodes)'],
  ['runtime', 'cudaPointerGetAttributes(attributes: out struct cudaPointerAttributes, ptr: in pointer?)'],
  ['runtime', 'cudaMemPoolGetAttribute(memPool: in cudaMemPool_t, attr: in cudaMemPoolAttr, value: out value typed by attr (mempool))'],
  ['runtime', 'cudaThreadExchangeStreamCaptureMode(mode: inout cudaStreamCaptureMode)'],
  ['runtime', 'cudaStreamCreateWithFlags(pStream: out cudaStream_t, flags: in u32)'],
  [
    'runtime',
    'cudaLaunchKernel(func: in pointer?, gridDim: in struct dim3 (by value), blockDim: in struct dim3 (by value), args: inout pointer?, sharedMem: in size_t, stream: in cudaStream_t)',
  ],
  ['runtime', 'cudaGetErrorName(error: in cudaError_t)'],
  ['runtime', 'cudaChooseDevice(device: out i32, prop: in struct cudaDeviceProp)'],
  ['runtime', 'cudaMemGetMemPool(memPool: out cudaMemPool_t, location: in struct cudaMemLocation, type: in cudaMemAllocationType)'],
  ['runtime', 'cudaDeviceGetGraphMemAttribute(device: in i32, attr: in cudaGraphMemAttributeType, value: out value typed by attr (graphMem))'],
  ['runtime', 'cudaMallocPitch(devPtr: out DevicePointer, pitch: out size_t, width: in size_t, height: in size_t)'],
  ['runtime', 'cudaHostAlloc(pHost: out address, size: in size_t, flags: in u32)'],
  [
    'runtime',
    'cudaStreamGetCaptureInfo(stream: in cudaStream_t, captureStatus_out: out cudaStreamCaptureStatus, id_out: out u64, graph_out: out cudaGraph_t, dependencies_out: out address, edgeData_out: out address, numDependencies_out: out size_t)',
  ],
  ['runtime', 'cudaLaunchHostFunc(stream: in cudaStream_t, fn: in callback, userData: inout pointer?)'],
  ['runtime', 'cudaDriverGetVersion(driverVersion: out i32)'],
  [
    'nvrtc',
    'nvrtcCreateProgram(prog: out nvrtcProgram, src: in string, name: in string?, numHeaders: count of headers, includeNames, headers: in cstring[numHeaders], includeNames: in cstring[numHeaders]?)',
  ],
  ['nvrtc', 'nvrtcCompileProgram(prog: in nvrtcProgram, numOptions: count of options, options: in cstring[numOptions])'],
  ['nvrtc', 'nvrtcGetPTXSize(prog: in nvrtcProgram, ptxSizeRet: out size_t)'],
  ['nvrtc', 'nvrtcGetPTX(prog: in nvrtcProgram, ptx: out pointer?)'],
  ['nvrtc', 'nvrtcGetLoweredName(prog: in nvrtcProgram, name_expression: in string, lowered_name: out cstring)'],
  ['nvrtc', 'nvrtcVersion(major: out i32, minor: out i32)'],
  ['nvrtc', 'nvrtcDestroyProgram(prog: inout nvrtcProgram)'],
  ['nvjitlink', 'nvJitLinkCreate(handle: out nvJitLinkHandle, numOptions: count of options, options: in cstring[numOptions])'],
  [
    'nvjitlink',
    'nvJitLinkAddData(handle: in nvJitLinkHandle, inputType: in nvJitLinkInputType, data: in pointer? covering size, size: in size_t, name: in string)',
  ],
  ['nvjitlink', 'nvJitLinkGetLinkedCubinSize(handle: in nvJitLinkHandle, size: out size_t)'],
  ['nvjitlink', 'nvJitLinkDestroy(handle: inout nvJitLinkHandle)'],
  ['nvfatbin', 'nvFatbinCreate(handle_indirect: out nvFatbinHandle, options: in cstring[optionsCount], optionsCount: count of options)'],
  [
    'nvfatbin',
    'nvFatbinAddPTX(handle: in nvFatbinHandle, code: in pointer covering size, size: in size_t, arch: in string, identifier: in string, optionsCmdLine: in string)',
  ],
  ['nvfatbin', 'nvFatbinSize(handle: in nvFatbinHandle, size: out size_t)'],
  ['cublas', 'cublasCreate(handle: out cublasHandle_t)'],
  [
    'cublas',
    'cublasSgemm(handle: in cublasHandle_t, transa: in cublasOperation_t, transb: in cublasOperation_t, m: in i32, n: in i32, k: in i32, alpha: scalar f32 (either), A: in device pointer?, lda: in i32, B: in device pointer?, ldb: in i32, beta: scalar f32 (either), C: inout device pointer?, ldc: in i32)',
  ],
  ['cublas', 'cublasSetStream(handle: in cublasHandle_t, streamId: in cudaStream_t)'],
  ['cublas', 'cublasGetVersion(handle: in cublasHandle_t, version: out i32)'],
  ['cublas', 'cublasSetPointerMode(handle: in cublasHandle_t, mode: in cublasPointerMode_t)'],
  ['cublas', 'cublasDestroy(handle: in cublasHandle_t)'],
  [
    'cublas',
    'cublasCaxpy(handle: in cublasHandle_t, n: in i32, alpha: scalar c64 (either), x: in device pointer?, incx: in i32, y: inout device pointer?, incy: in i32)',
  ],
  ['cublaslt', 'cublasLtCreate(lightHandle: out cublasLtHandle_t)'],
  ['cublaslt', 'cublasLtMatmulDescCreate(matmulDesc: out cublasLtMatmulDesc_t, computeType: in cublasComputeType_t, scaleType: in cudaDataType_t)'],
  ['cublaslt', 'cublasLtMatrixLayoutCreate(matLayout: out cublasLtMatrixLayout_t, type: in cudaDataType, rows: in u64, cols: in u64, ld: in i64)'],
  ['cublaslt', 'cublasLtMatmulPreferenceCreate(pref: out cublasLtMatmulPreference_t)'],
  ['cublaslt', 'cublasLtGetVersion()'],
  ['curand', 'curandCreateGenerator(generator: out curandGenerator_t, rng_type: in curandRngType_t)'],
  ['curand', 'curandGenerateUniform(generator: in curandGenerator_t, outputPtr: out device pointer? covering num elements of float, num: in size_t)'],
  ['curand', 'curandSetPseudoRandomGeneratorSeed(generator: in curandGenerator_t, seed: in u64)'],
  ['curand', 'curandGetVersion(version: out i32)'],
  ['cufft', 'cufftCreate(handle: out cufftHandle)'],
  ['cufft', 'cufftPlan1d(plan: out cufftHandle, nx: in i32, type: in cufftType, batch: in i32)'],
  ['cufft', 'cufftMakePlan1d(plan: in cufftHandle, nx: in i32, type: in cufftType, batch: in i32, workSize: out size_t (bytes))'],
  ['cufft', 'cufftExecC2C(plan: in cufftHandle, idata: inout device pointer?, odata: out device pointer?, direction: in i32)'],
  ['cufft', 'cufftGetSize(handle: in cufftHandle, workSize: out size_t (bytes))'],
  ['cufft', 'cufftXtSetCallback(plan: in cufftHandle, callback_routine: in pointer, cbType: in cufftXtCallbackType, caller_info: in pointer)'],
  [
    'cufft',
    'cufftXtSetJITCallback(plan: in cufftHandle, lto_callback_symbol_name: in string, lto_callback_fatbin: in pointer?, lto_callback_fatbin_size: in size_t, type: in cufftXtCallbackType, caller_info: in pointer)',
  ],
  ['cusparse', 'cusparseCreate(handle: out cusparseHandle_t)'],
  ['cusparse', 'cusparseCreateMatDescr(descrA: out cusparseMatDescr_t)'],
  [
    'cusparse',
    'cusparseSpMV_bufferSize(handle: in cusparseHandle_t, opA: in cusparseOperation_t, alpha: scalar untyped (either), matA: in cusparseConstSpMatDescr_t, vecX: in cusparseConstDnVecDescr_t, beta: scalar untyped (either), vecY: in cusparseDnVecDescr_t, computeType: in cudaDataType, alg: in cusparseSpMVAlg_t, bufferSize: out size_t (bytes))',
  ],
  ['cusparse', 'cusparseGetVersion(handle: in cusparseHandle_t, version: out i32)'],
  ['cusolver', 'cusolverDnCreate(handle: out cusolverDnHandle_t)'],
  ['cusolver', 'cusolverDnCreateParams(params: out cusolverDnParams_t)'],
  [
    'cusolver',
    'cusolverDnSgetrf_bufferSize(handle: in cusolverDnHandle_t, m: in i32, n: in i32, A: inout device pointer?, lda: in i32, Lwork: out i32 (elements))',
  ],
  [
    'cusolver',
    'cusolverDnSgetrf(handle: in cusolverDnHandle_t, m: in i32, n: in i32, A: inout device pointer?, lda: in i32, Workspace: inout device pointer?, devIpiv: inout device pointer?, devInfo: out device pointer?)',
  ],
  [
    'cusolver',
    'cusolverDnDSgesv(handle: in cusolverDnHandle_t, n: in i32, nrhs: in i32, dA: inout device pointer?, ldda: in i32, dipiv: inout device pointer?, dB: inout device pointer?, lddb: in i32, dX: inout device pointer?, lddx: in i32, dWorkspace: inout device pointer? covering lwork_bytes bytes, lwork_bytes: in size_t, iter: out i32, d_info: out device pointer?)',
  ],
  [
    'cusolver',
    'cusolverDnIRSXgesv(handle: in cusolverDnHandle_t, gesv_irs_params: in cusolverDnIRSParams_t, gesv_irs_infos: in cusolverDnIRSInfos_t, n: in i32, nrhs: in i32, dA: inout device pointer?, ldda: in i32, dB: inout device pointer?, lddb: in i32, dX: inout device pointer?, lddx: in i32, dWorkspace: inout device pointer? covering lwork_bytes bytes, lwork_bytes: in size_t, niters: out i32, d_info: out device pointer?)',
  ],
  ['nvml', 'nvmlInit()'],
  ['nvml', 'nvmlDeviceGetCount(deviceCount: out u32)'],
  ['nvml', 'nvmlDeviceGetHandleByIndex(index: in u32, device: out nvmlDevice_t)'],
  ['nvml', 'nvmlDeviceGetName(device: in nvmlDevice_t, name: out text[length], length: in u32)'],
  ['nvml', 'nvmlDeviceGetTemperatureV(device: in nvmlDevice_t, temperature: inout struct nvmlTemperature_v1_t version=0x100000c)'],
  ['nvml', 'nvmlDeviceGetMemoryInfo_v2(device: in nvmlDevice_t, memory: inout struct nvmlMemory_v2_st version=0x2000028)'],
  ['nvml', 'nvmlDeviceGetMemoryInfo(device: in nvmlDevice_t, memory: out struct nvmlMemory_st)'],
  ['nvml', 'nvmlDeviceGetSupportedMemoryClocks(device: in nvmlDevice_t, count: capacity/count of clocksMHz, clocksMHz: out u32[*count])'],
  ['nvml', 'nvmlDeviceGetAccountingPids(device: in nvmlDevice_t, count: capacity/count of pids, pids: out u32[*count])'],
  ['nvml', 'nvmlVgpuTypeGetName(vgpuTypeId: in u32, vgpuTypeName: out text[*size = 4096], size: capacity/count of vgpuTypeName)'],
  [
    'nvml',
    'nvmlDeviceGetComputeRunningProcesses(device: in nvmlDevice_t, infoCount: capacity/count of infos, infos: out struct nvmlProcessInfo_v2_st[*infoCount])',
  ],
  ['nvml', 'nvmlDeviceSetClockOffsets(device: in nvmlDevice_t, info: inout struct nvmlClockOffset_v1_t version=0x1000018)'],
  ['nvml', 'nvmlDeviceGetFieldValues(device: in nvmlDevice_t, valuesCount: in i32, values: inout struct nvmlFieldValue_st[valuesCount])'],
  ['nvml', 'nvmlDeviceGetPciInfo(device: in nvmlDevice_t, pci: out struct nvmlPciInfo_st)'],
  ['nvml', 'nvmlDeviceGetUUID(device: in nvmlDevice_t, uuid: out text[length], length: in u32)'],
  ['nvml', 'nvmlDeviceGetNumFans(device: in nvmlDevice_t, numFans: out u32)'],
  [
    'nvml',
    'nvmlDeviceGetTopologyNearestGpus(device: in nvmlDevice_t, level: in nvmlGpuTopologyLevel_t, count: capacity/count of deviceArray, deviceArray: out nvmlDevice_t[*count])',
  ],
  ['nvml', 'nvmlSystemGetDriverVersion(version: out text[length], length: in u32)'],
  ['nvml', 'nvmlDeviceModifyDrainState(pciInfo: in struct nvmlPciInfo_st, newState: in nvmlEnableState_t)'],
  ['nvml', 'nvmlGpmQueryDeviceSupport(device: in nvmlDevice_t, gpmSupport: inout struct nvmlGpmSupport_t version=0x1)'],
  ['cufile', 'cuFileHandleRegister(fh: out address, descr: in struct CUfileDescr_t)'],
  [
    'cufile',
    'cuFileReadAsync(fh: inout pointer?, bufPtr_base: inout pointer?, size_p: inout pointer (kept by the library), file_offset_p: inout pointer (kept by the library), bufPtr_offset_p: inout pointer (kept by the library), bytes_read_p: inout pointer (kept by the library), stream: in CUstream)',
  ],
  ['cufile', 'cuFileRead(fh: in pointer, bufPtr_base: inout pointer? covering size, size: in size_t, file_offset: in i64, bufPtr_offset: in i64)'],
  ['cufile', 'cuFileDriverOpen()'],
  ['cufile', 'cuFileGetVersion(version: out i32)'],
  ['cufile', 'cuFileBatchIOSubmit(batch_idp: inout pointer?, nr: count of iocbp, iocbp: in struct CUfileIOParams[nr], flags: in u32)'],
  ['cufile', 'cuFileBufRegister(bufPtr_base: in pointer?, length: in size_t, flags: in i32)'],
  ['cupti', 'cuptiGetVersion(version: out u32)'],
  ['cupti', 'cuptiEnumEventDomains(arraySizeBytes: inout size_t, domainArray: inout pointer)'],
  [
    'cupti',
    'cuptiEventGroupSetsCreate(context: in CUcontext, eventIdArraySizeBytes: in size_t, eventIdArray: in pointer covering eventIdArraySizeBytes, eventGroupPasses: out address)',
  ],
  ['cupti', 'cuptiEventGroupSetEnable(eventGroupSet: in pointer)'],
  ['cupti', 'cuptiGetNumEventDomains(numDomains: out u32)'],
  ['cupti', 'cuptiActivityGetNextRecord(buffer: inout pointer?, validBufferSizeBytes: in size_t, record: inout address)'],
  ['cudnn', 'cudnnCreate(handle: out cudnnHandle_t)'],
  ['cudnn', 'cudnnGetVersion()'],
  ['cudnn', 'cudnnCreateTensorDescriptor(tensorDesc: out cudnnTensorDescriptor_t)'],
  ['cudnn', 'cudnnSetStream(handle: in cudnnHandle_t, streamId: in cudaStream_t)'],
  ['cudnn', 'cudnnBackendCreateDescriptor(descriptorType: in cudnnBackendDescriptorType_t, descriptor: out address)'],
  ['nccl', 'ncclGetUniqueId(uniqueId: out struct ncclUniqueId)'],
  ['nccl', 'ncclCommInitRank(comm: out ncclComm_t, nranks: in i32, commId: in struct ncclUniqueId (by value), rank: in i32)'],
  ['nccl', 'ncclCommUserRank(comm: in ncclComm_t, rank: out i32)'],
  ['nccl', 'ncclCommCount(comm: in ncclComm_t, count: out i32)'],
  [
    'nccl',
    'ncclAllReduce(sendbuff: in device pointer? covering count elements of datatype, recvbuff: out device pointer? covering count elements of datatype, count: in size_t, datatype: in ncclDataType_t, op: in ncclRedOp_t, comm: in ncclComm_t, stream: in cudaStream_t)',
  ],
  ['nccl', 'ncclCommInitAll(comm: out host pointer covering ndev elements of ncclComm_t, ndev: in i32, devlist: in pointer?)'],
  ['nccl', 'ncclGetVersion(version: out i32)'],
  ['nccl', 'ncclCommGetAsyncError(comm: in ncclComm_t, asyncError: out ncclResult_t)'],
];

describe('parameter semantics (13.0, reviewed sample)', () => {
  test('the sample covers every module and at least 150 functions', () => {
    expect(new Set(REVIEWED.map(([m]) => m)).size).toBe(16);
    expect(REVIEWED.length).toBeGreaterThanOrEqual(150);
  });
  test.each(REVIEWED)('%s: %s', (module, signature) => {
    const fn = signature.slice(0, signature.indexOf('('));
    expect(line(module, fn)).toBe(signature);
  });
  test('every kind of semantics occurs in the sample', () => {
    const roles = new Set<string>();
    for (const [module, signature] of REVIEWED) {
      const fn = moduleOf(module).sems.get(signature.slice(0, signature.indexOf('(')))!;
      for (const p of fn.params) roles.add(p.sem.role === 'pointer' && p.sem.retained ? 'retained' : p.sem.role);
    }
    for (const role of [
      'value',
      'recordValue',
      'callback',
      'string',
      'pointer',
      'retained',
      'inRecord',
      'inArray',
      'count',
      'out',
      'inout',
      'outRecord',
      'inoutRecord',
      'outText',
      'outArray',
      'capacityArray',
      'capacity',
      'attrValue',
    ]) {
      expect([role, roles.has(role)]).toEqual([role, true]);
    }
  });
  test('NVML versioned structs carry NVML_STRUCT_VERSION (sizeof | version << 24)', () => {
    const sem = moduleOf('nvml').sems.get('nvmlDeviceGetMemoryInfo_v2')!.params[1].sem;
    expect(sem).toEqual({ role: 'inoutRecord', record: 'nvmlMemory_v2_st', version: 40 | (2 << 24) });
  });
  test.each(['driver', 'runtime', 'nvml', 'nccl', 'cufft', 'cufile', 'cupti', 'cublas', 'cublaslt', 'cusolver', 'nvrtc'])(
    'every %s override names a parameter of 13.0 and gives its reason',
    (module) => {
      const { model } = moduleOf(module);
      expect(staleOverrides(model)).toEqual([]);
      for (const [key, o] of Object.entries(overridesFor(module).params)) expect([key, o.reason.length > 10]).toEqual([key, true]);
    },
  );
  test('the typed parameter list drops outputs and derived counts', () => {
    const sig = typedSignatures(root, '13.0', 'driver');
    expect(sig.get('cuGraphGetEdges')!.map((p) => p.name)).toEqual(['hGraph']);
    expect(sig.get('cuMemSetAccess')!.map((p) => `${p.name}:${p.accepts}`)).toEqual(['ptr:deviceptr', 'size:int', 'desc:array']);
    expect(sig.get('cuStreamSynchronize')).toEqual([{ name: 'hStream', accepts: 'handle', nullable: true }]);
  });
});
