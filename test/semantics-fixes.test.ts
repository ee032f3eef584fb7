// Issue 25 §5: the typed signatures an independent comparison with NVIDIA's own bindings found wrong,
// each asserted as the typed layer emits it (13.0). In/out and input records that were taken as outputs,
// iterators read and written, fixed-size outputs returned instead of passed through, math-library getters
// whose scalar and address outputs were left as pointers, two-phase buffer sizes, NVML outputs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { emitModule } from '../generator/emit';
import { parseIR } from '../generator/ir/store';
import type { ModuleIR } from '../generator/ir/schema';
import { TypeModel } from '../generator/model';
import { findModule } from '../generator/modules';
import { guessedParams, resolveModule, semText, type FunctionSem } from '../generator/semantics';

const root = join(__dirname, '..');
const irs = new Map<string, ModuleIR>();
function irOf(module: string): ModuleIR {
  let ir = irs.get(module);
  if (!ir) {
    const path = join(root, 'headers', '13.0', `${module}.json`);
    ir = parseIR(readFileSync(path, 'utf8'), path);
    irs.set(module, ir);
  }
  return ir;
}
const sems = new Map<string, FunctionSem[]>();
function semsOf(module: string): FunctionSem[] {
  let s = sems.get(module);
  if (!s) sems.set(module, (s = resolveModule(new TypeModel(irOf(module), findModule(module)!))));
  return s;
}
function semOf(module: string, fn: string, param: string): string {
  const p = semsOf(module)
    .find((f) => f.name === fn)
    ?.params.find((q) => q.name === param);
  if (!p) throw new Error(`${module} ${fn}.${param} not found`);
  return semText(p.sem);
}
const typedText = new Map<string, string[]>();
/** The `export function …` line the typed layer emits for `fn`, without its body. */
function typedSignature(module: string, fn: string): string | undefined {
  let lines = typedText.get(module);
  if (!lines) {
    const files = emitModule(irOf(module), findModule(module)!);
    lines = [...files].filter(([path]) => path.startsWith('typed')).flatMap(([, text]) => text.split('\n'));
    typedText.set(module, lines);
  }
  return lines.find((l) => l.startsWith(`export function ${fn}(`))?.replace(/ \{$/, '');
}

const FIXED: [module: string, signature: string][] = [
  ['driver', 'export function cuGraphNodeSetParams(hNode: T.CUgraphNode | null, nodeParams: T.CUgraphNodeParams_st | Uint8Array): void'],
  [
    'driver',
    'export function cuGraphExecNodeSetParams(hGraphExec: T.CUgraphExec | null, hNode: T.CUgraphNode | null, nodeParams: T.CUgraphNodeParams_st | Uint8Array): void',
  ],
  ['driver', 'export function cuLogsDumpToFile(iterator: number, pathToFile: string, flags: number): number'],
  ['driver', 'export function cuDeviceGetLuid(dev: number): { luid: Uint8Array; deviceNodeMask: number }'],
  ['driver', 'export function cuMemGetHandleForAddressRange(dptr: T.CUdeviceptr, size: T.Int64, handleType: T.CUmemRangeHandleType, flags: T.Int64): number'],
  ['driver', 'export function cuTexRefGetBorderColor(hTexRef: T.CUtexref | null): Float32Array'],
  ['runtime', 'export function cudaGraphNodeSetParams(node: T.cudaGraphNode_t | null, nodeParams: T.cudaGraphNodeParams | Uint8Array): void'],
  [
    'runtime',
    'export function cudaGraphExecNodeSetParams(graphExec: T.cudaGraphExec_t | null, node: T.cudaGraphNode_t | null, nodeParams: T.cudaGraphNodeParams | Uint8Array): void',
  ],
  [
    'runtime',
    'export function cudaGraphAddNode(graph: T.cudaGraph_t | null, pDependencies: readonly (T.cudaGraphNode_t)[] | BigUint64Array, dependencyData: T.cudaGraphEdgeData_st | Uint8Array | null, nodeParams?: Partial<T.cudaGraphNodeParams> | Uint8Array): { pGraphNode: T.cudaGraphNode_t; nodeParams: T.cudaGraphNodeParams }',
  ],
  [
    'runtime',
    'export function cudaGraphAddMemAllocNode(graph: T.cudaGraph_t | null, pDependencies: readonly (T.cudaGraphNode_t)[] | BigUint64Array, nodeParams?: Partial<T.cudaMemAllocNodeParams> | Uint8Array): { pGraphNode: T.cudaGraphNode_t; nodeParams: T.cudaMemAllocNodeParams }',
  ],
  [
    'runtime',
    'export function cudaGraphInstantiateWithParams(graph: T.cudaGraph_t | null, instantiateParams?: Partial<T.cudaGraphInstantiateParams_st> | Uint8Array): { pGraphExec: T.cudaGraphExec_t; instantiateParams: T.cudaGraphInstantiateParams_st }',
  ],
  ['runtime', 'export function cudaGraphMemFreeNodeGetParams(node: T.cudaGraphNode_t | null): T.DevicePointer'],
  ['runtime', 'export function cudaLibraryEnumerateKernels(numKernels: number, lib: T.cudaLibrary_t | null): T.cudaKernel_t[]'],
  ['runtime', 'export function cudaLogsDumpToFile(iterator: number, pathToFile: string, flags: number): number'],
  ['runtime', 'export function cudaLogsDumpToMemory(iterator: number, flags: number): { iterator: number; buffer: string }'],
  ['nvml', 'export function nvmlDeviceDiscoverGpus(pciInfo: T.nvmlPciInfo_st | Uint8Array): void'],
  [
    'nvml',
    'export function nvmlDeviceGetConfComputeGpuAttestationReport(device: T.nvmlDevice_t | null, gpuAtstReport?: Partial<T.nvmlConfComputeGpuAttestationReport_st> | Uint8Array): T.nvmlConfComputeGpuAttestationReport_st',
  ],
  [
    'nvml',
    'export function nvmlDeviceSetTemperatureThreshold(device: T.nvmlDevice_t | null, thresholdType: T.nvmlTemperatureThresholds_t, temp: number): number',
  ],
  ['nvml', 'export function nvmlDeviceGetGspFirmwareVersion(device: T.nvmlDevice_t | null): string'],
  ['nvml', 'export function nvmlDeviceGetCpuAffinity(device: T.nvmlDevice_t | null, cpuSetSize: number): BigUint64Array'],
  ['nvml', 'export function nvmlDeviceGetCpuAffinityWithinScope(device: T.nvmlDevice_t | null, cpuSetSize: number, scope: number): BigUint64Array'],
  ['nvml', 'export function nvmlDeviceGetMemoryAffinity(device: T.nvmlDevice_t | null, nodeSetSize: number, scope: number): BigUint64Array'],
  [
    'nvml',
    'export function nvmlSystemGetConfComputeKeyRotationThresholdInfo(pKeyRotationThrInfo?: Partial<T.nvmlConfComputeGetKeyRotationThresholdInfo_st> | Uint8Array): T.nvmlConfComputeGetKeyRotationThresholdInfo_st',
  ],
  [
    'nvml',
    'export function nvmlSystemSetConfComputeKeyRotationThresholdInfo(pKeyRotationThrInfo?: Partial<T.nvmlConfComputeSetKeyRotationThresholdInfo_st> | Uint8Array): T.nvmlConfComputeSetKeyRotationThresholdInfo_st',
  ],
  ['cublas', 'export function cublasGetSmCountTarget(handle: T.cublasHandle_t | null): number'],
  ['cublas', 'export function cublasGetFixedPointEmulationMantissaBitOffset(handle: T.cublasHandle_t | null): number'],
  ['cublas', 'export function cublasGetFixedPointEmulationMantissaBitCountPointer(handle: T.cublasHandle_t | null): number'],
  ['cublas', 'export function cublasSetFixedPointEmulationMantissaBitCountPointer(handle: T.cublasHandle_t | null, mantissaBitCount: T.Pointer): void'],
  [
    'cusparse',
    'export function cusparseCsrGet(spMatDescr: T.cusparseSpMatDescr_t | null): { rows: bigint; cols: bigint; nnz: bigint; csrRowOffsets: number; csrColInd: number; csrValues: number; csrRowOffsetsType: T.cusparseIndexType_t; csrColIndType: T.cusparseIndexType_t; idxBase: T.cusparseIndexBase_t; valueType: T.cudaDataType }',
  ],
  [
    'cusparse',
    'export function cusparseConstDnVecGet(dnVecDescr: T.cusparseConstDnVecDescr_t | null): { size: bigint; values: number; valueType: T.cudaDataType }',
  ],
  ['cusparse', 'export function cusparseSpMatGetSize(spMatDescr: T.cusparseConstSpMatDescr_t | null): { rows: bigint; cols: bigint; nnz: bigint }'],
  ['cusparse', 'export function cusparseSpGEMM_getNumProducts(spgemmDescr: T.cusparseSpGEMMDescr_t | null): bigint'],
  [
    'cusparse',
    'export function cusparseSpGEMM_workEstimation(handle: T.cusparseHandle_t | null, opA: T.cusparseOperation_t, opB: T.cusparseOperation_t, alpha: T.UntypedScalar, matA: T.cusparseConstSpMatDescr_t | null, matB: T.cusparseConstSpMatDescr_t | null, beta: T.UntypedScalar, matC: T.cusparseSpMatDescr_t | null, computeType: T.cudaDataType, alg: T.cusparseSpGEMMAlg_t, spgemmDescr: T.cusparseSpGEMMDescr_t | null, bufferSize1: T.Int64, externalBuffer1: T.DeviceMemory | null): number',
  ],
  [
    'cusparse',
    'export function cusparseSpGEMM_estimateMemory(handle: T.cusparseHandle_t | null, opA: T.cusparseOperation_t, opB: T.cusparseOperation_t, alpha: T.UntypedScalar, matA: T.cusparseConstSpMatDescr_t | null, matB: T.cusparseConstSpMatDescr_t | null, beta: T.UntypedScalar, matC: T.cusparseSpMatDescr_t | null, computeType: T.cudaDataType, alg: T.cusparseSpGEMMAlg_t, spgemmDescr: T.cusparseSpGEMMDescr_t | null, chunk_fraction: number, bufferSize3: T.Int64, externalBuffer3: T.DeviceMemory | null): { bufferSize3: number; bufferSize2: number }',
  ],
  [
    'cusparse',
    'export function cusparseSpGEMMreuse_nnz(handle: T.cusparseHandle_t | null, opA: T.cusparseOperation_t, opB: T.cusparseOperation_t, matA: T.cusparseConstSpMatDescr_t | null, matB: T.cusparseConstSpMatDescr_t | null, matC: T.cusparseSpMatDescr_t | null, alg: T.cusparseSpGEMMAlg_t, spgemmDescr: T.cusparseSpGEMMDescr_t | null, bufferSize2: T.Int64, externalBuffer2: T.DeviceMemory | null, bufferSize3: T.Int64, externalBuffer3: T.DeviceMemory | null, bufferSize4: T.Int64, externalBuffer4: T.DeviceMemory | null): { bufferSize2: number; bufferSize3: number; bufferSize4: number }',
  ],
  ['cusolver', 'export function cusolverDnXsyevjGetResidual(handle: T.cusolverDnHandle_t | null, info: T.syevjInfo_t | null): number'],
  ['cusolver', 'export function cusolverDnIRSInfosGetMaxIters(infos: T.cusolverDnIRSInfos_t | null): number'],
  ['cusolver', 'export function cusolverRfGetNumericProperties(handle: T.cusolverRfHandle_t | null): { zero: number; boost: number }'],
  [
    'cusolver',
    'export function cusolverRfAccessBundledFactorsDevice(handle: T.cusolverRfHandle_t | null): { nnzM: number; Mp: number; Mi: number; Mx: number }',
  ],
  ['cufft', 'export function cufftXtSetWorkArea(plan: T.cufftHandle, workArea: T.Pointer): void'],
  ['cufft', 'export function cufftXtSetWorkAreaPolicy(plan: T.cufftHandle, policy: T.cufftXtWorkAreaPolicy, workSize: T.Pointer): void'],
];

describe("issue 25 §5: the typed signatures NVIDIA's bindings disagreed with (13.0, as emitted)", () => {
  test.each(FIXED)('%s: %s', (module, signature) => {
    const fn = signature.slice('export function '.length, signature.indexOf('('));
    expect(typedSignature(module, fn)).toBe(signature);
  });
});

describe('the rules behind them', () => {
  test("a node's parameters set by the caller are read, never returned", () => {
    expect(semOf('driver', 'cuGraphNodeSetParams', 'nodeParams')).toBe('in struct CUgraphNodeParams_st');
    expect(semOf('runtime', 'cudaGraphExecNodeSetParams', 'nodeParams')).toBe('in struct cudaGraphNodeParams');
    // the nodes that write results back into the record (allocated address, conditional graph) stay in/out
    expect(semOf('runtime', 'cudaGraphAddMemAllocNode', 'nodeParams')).toBe('inout struct cudaMemAllocNodeParams');
    expect(semOf('driver', 'cuGraphAddMemAllocNode', 'nodeParams')).toBe('inout struct CUDA_MEM_ALLOC_NODE_PARAMS_v1_st');
  });
  test('a math-library getter returns its scalars and addresses; data pointers elsewhere stay pointers', () => {
    expect(semOf('cusparse', 'cusparseCsrGet', 'rows')).toBe('out i64');
    expect(semOf('cusparse', 'cusparseCsrGet', 'csrValues')).toBe('out address');
    expect(semOf('cusolver', 'cusolverRfExtractBundledFactorsHost', 'h_Mp')).toBe('out address');
    // a getter's void * is the caller's buffer (cublasGetMatrix copies into it: host memory)
    expect(semOf('cublas', 'cublasGetMatrix', 'B')).toBe('out host pointer?');
    // not a getter: device arrays the call fills
    expect(semOf('cusparse', 'cusparseCreateIdentityPermutation', 'p')).toBe('inout pointer?');
  });
  test('a size_t * just before the buffer it sizes is in/out; a size alone is returned', () => {
    expect(semOf('cusparse', 'cusparseSpGEMM_workEstimation', 'bufferSize1')).toBe('inout size_t');
    expect(semOf('cusparse', 'cusparseSpGEMM_estimateMemory', 'bufferSize3')).toBe('inout size_t');
    expect(semOf('cusparse', 'cusparseSpGEMM_estimateMemory', 'bufferSize2')).toBe('out size_t (bytes)');
    expect(semOf('cusparse', 'cusparseSpMV_bufferSize', 'bufferSize')).toBe('out size_t (bytes)');
  });
  test('an NVML struct versioned by its typedef (…_v1_t) is stamped like one versioned by its own name', () => {
    // sizeof 16 | 1 << 24: NVML_STRUCT_VERSION(ConfComputeGetKeyRotationThresholdInfo, 1)
    expect(semOf('nvml', 'nvmlSystemGetConfComputeKeyRotationThresholdInfo', 'pKeyRotationThrInfo')).toBe(
      'inout struct nvmlConfComputeGetKeyRotationThresholdInfo_st version=0x1000010',
    );
    expect(semOf('nvml', 'nvmlDeviceGetMemoryInfo_v2', 'memory')).toBe('inout struct nvmlMemory_v2_st version=0x2000028');
  });
});

describe('guessedParams: the review list of roles that rest on a name or a default', () => {
  test('lists a direction taken by default and a math-library role taken by name, with why', () => {
    const list = guessedParams(semsOf('driver'));
    expect(list).toContainEqual({ fn: 'cuCtxGetFlags', param: 'flags', role: 'out u32', guess: expect.stringContaining('by default') });
    const solver = guessedParams(semsOf('cusolver'));
    expect(solver).toContainEqual({ fn: 'cusolverDnSgetrf_bufferSize', param: 'Lwork', role: 'out i32 (elements)', guess: expect.stringContaining('by name') });
  });
  test('leaves out what a fact decided: an override, the header docs, const, a getter rule', () => {
    const keys = new Set(guessedParams(semsOf('driver')).map((g) => `${g.fn}.${g.param}`));
    expect(keys.has('cuGraphNodeSetParams.nodeParams')).toBe(false); // reviewed override
    expect(keys.has('cuMemAlloc.dptr')).toBe(false); // documented as returned
    expect(keys.has('cuMemcpy3D.pCopy')).toBe(false); // const
    const sparse = new Set(guessedParams(semsOf('cusparse')).map((g) => `${g.fn}.${g.param}`));
    expect(sparse.has('cusparseCsrGet.rows')).toBe(false);
  });
});
