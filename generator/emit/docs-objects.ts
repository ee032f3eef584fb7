// Driver functions that an objects-layer method wraps: C name → `Class#method` (an instance member)
// or `Class.method` (a static one), for the `@see` of the generated TSDoc. Reviewed by hand: a test
// (test/docs/objects-links.test.ts) checks that each class is exported by cuda-ts/objects, that the
// member exists with that static-ness, and that its body names the C function, so no entry can rot.
// The generator reads no src/ file: this table is the one place the two layers meet in the docs.
export const OBJECTS_METHODS: Readonly<Record<string, string>> = {
  cuArray3DCreate: 'CudaArray.create',
  cuCtxCreate: 'Context.create',
  cuCtxGetExecAffinity: 'Context#executionAffinity',
  cuCtxGetStreamPriorityRange: 'Stream.priorityRange',
  cuCtxSynchronize: 'Context#synchronize',
  cuDevicePrimaryCtxRetain: 'Context.primary',
  cuDeviceGetAttribute: 'Device#attribute',
  cuDeviceGetCount: 'Device.count',
  cuDeviceGetDefaultMemPool: 'MemoryPool.default',
  cuDeviceGetLuid: 'Device#luid',
  cuDeviceGetName: 'Device#name',
  cuDeviceGetPCIBusId: 'Device#pciBusId',
  cuDeviceGetUuid: 'Device#uuid',
  cuDeviceTotalMem: 'Device#totalMemory',
  cuDevSmResourceSplitByCount: 'SmResource#split',
  cuEventCreate: 'Event.create',
  cuEventElapsedTime: 'Event#elapsedSince',
  cuEventQuery: 'Event#query',
  cuEventRecord: 'Event#record',
  cuEventSynchronize: 'Event#synchronize',
  cuFuncGetAttribute: 'Kernel#attribute',
  cuFuncSetAttribute: 'Kernel#setAttribute',
  cuGraphClone: 'Graph#clone',
  cuGraphCreate: 'Graph.create',
  cuGraphDebugDotPrint: 'Graph#writeDot',
  cuGraphExecUpdate: 'GraphExec#update',
  cuGraphGetNodes: 'Graph#nodes',
  cuGraphInstantiateWithFlags: 'Graph#instantiate',
  cuGraphLaunch: 'GraphExec#launch',
  cuGraphUpload: 'GraphExec#upload',
  cuGreenCtxCreate: 'GreenContext.create',
  cuGreenCtxStreamCreate: 'GreenContext#createStream',
  cuIpcGetEventHandle: 'Event#ipcHandle',
  cuIpcOpenEventHandle: 'Event.fromIpcHandle',
  cuLaunchHostFunc: 'Stream#launchHostFunc',
  cuLinkComplete: 'Linker#complete',
  cuMemAdvise: 'ManagedBuffer#advise',
  cuMemAlloc: 'DeviceBuffer.alloc',
  cuMemAllocManaged: 'ManagedBuffer.alloc',
  cuMemGetInfo: 'Context#memoryInfo',
  cuMemHostAlloc: 'PinnedHostBuffer.alloc',
  cuMemHostGetDevicePointer: 'PinnedHostBuffer#devicePointer',
  cuMemPoolCreate: 'MemoryPool.create',
  cuMemPoolTrimTo: 'MemoryPool#trim',
  cuMemPrefetchAsync: 'ManagedBuffer#prefetch',
  cuModuleGetFunction: 'Module#kernel',
  cuModuleGetGlobal: 'Module#global',
  cuModuleLoadDataEx: 'Module.load',
  cuOccupancyMaxActiveBlocksPerMultiprocessor: 'Kernel#maxActiveBlocksPerMultiprocessor',
  cuOccupancyMaxPotentialBlockSize: 'Kernel#maxPotentialBlockSize',
  cuStreamBeginCapture: 'Stream#beginCapture',
  cuStreamCreateWithPriority: 'Stream.create',
  cuStreamGetPriority: 'Stream#priority',
  cuStreamSynchronize: 'Stream#synchronize',
  cuStreamWaitEvent: 'Stream#wait',
  cuSurfObjectCreate: 'SurfaceObject.create',
  cuTensorMapEncodeTiled: 'TensorMap.tiled',
  cuTensorMapEncodeIm2col: 'TensorMap.im2col',
  cuTexObjectCreate: 'TextureObject.create',
};

/** The objects layer's import specifier, as TypeDoc names its module (scripts/typedoc-plugin.mjs). */
export const OBJECTS_MODULE = 'cuda-ts/objects';

/** Functions of the objects layer (not class members) that wrap a driver call, for the same `@see`.
 *  Checked like the table above by test/docs-facts-objects.test.ts. */
export const OBJECTS_FUNCTIONS: Readonly<Record<string, string>> = {
  cuLaunchKernelEx: 'launch',
};

/** Math-library calls an objects-layer method wraps (src/math), by module: C name → `Class#method`.
 *  Checked by test/docs-facts-objects.test.ts: the class is exported, the public member exists, and its
 *  class's file names the C function (the methods pick the C function of a dtype from a table). */
export const MATH_METHODS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  cublas: { cublasSgemm: 'Blas#gemm', cublasDgemm: 'Blas#gemm', cublasCgemm: 'Blas#gemm', cublasZgemm: 'Blas#gemm' },
  cublaslt: { cublasLtMatmul: 'Matmul#execute' },
  cufft: {
    cufftExecC2C: 'FftPlan#forward',
    cufftExecZ2Z: 'FftPlan#forward',
    cufftExecR2C: 'FftPlan#forward',
    cufftExecD2Z: 'FftPlan#forward',
    cufftExecC2R: 'FftPlan#inverse',
    cufftExecZ2D: 'FftPlan#inverse',
  },
  curand: { curandGenerateUniform: 'RandomGenerator#uniform', curandGenerateUniformDouble: 'RandomGenerator#uniform' },
  cusparse: { cusparseSpMV: 'Sparse#spmv' },
  cusolver: { cusolverDnXpotrf: 'DenseSolver#potrf' },
  cudnn: { cudnnConvolutionForward: 'Cudnn#convolutionForward' },
};

/** The objects-layer member or function wrapping `name` of `module`, or undefined. */
export function objectsWrapper(module: string, name: string): string | undefined {
  if (module === 'driver') return OBJECTS_METHODS[name] ?? OBJECTS_FUNCTIONS[name];
  return MATH_METHODS[module]?.[name];
}
