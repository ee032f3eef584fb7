// Memory facts of the math libraries' data pointers and scalars, per family: where the memory lives
// (the libraries' documentation says "device memory" / "host memory" per parameter; cuBLAS's and
// cuSPARSE's scalars follow the handle's pointer mode), what the call does with it, and which
// parameter counts it in which unit. Reviewed against the 11.8-13.0 headers; a key's `*` matches any
// text (the exact key wins, then the pattern with the most literal text).
import type { ModuleOverrides, PointerFacts, ScalarFacts } from '../model';

type Facts = Pick<ModuleOverrides, 'scalars' | 'pointers' | 'outUnits'>;
const units = (unit: 'elements' | 'bytes', reason: string, keys: string[]) => Object.fromEntries(keys.map((k) => [k, { unit, reason }]));
const dev = (reason: string, extra: Omit<PointerFacts, 'reason' | 'space'> = {}): PointerFacts => ({ space: 'device', reason, ...extra });
const host = (reason: string, extra: Omit<PointerFacts, 'reason' | 'space'> = {}): PointerFacts => ({ space: 'host', reason, ...extra });
const all = (keys: string[], f: PointerFacts): Record<string, PointerFacts> => Object.fromEntries(keys.map((k) => [k, f]));
const scalar = (space: ScalarFacts['space'], reason: string): ScalarFacts => ({ space, reason });

const BLAS_MODE = "a scaling factor: host or device memory by the handle's pointer mode (cublasSetPointerMode)";
const BLAS_DATA = 'cuBLAS vectors and matrices live in device memory';
const cublas: Facts = {
  scalars: {
    '*.alpha': scalar('either', BLAS_MODE),
    '*.beta': scalar('either', BLAS_MODE),
    'cublas*rot*.c': scalar('either', 'the rotation cosine (const): host or device memory by the pointer mode'),
    'cublas*rot*.s': scalar('either', 'the rotation sine (const): host or device memory by the pointer mode'),
  },
  pointers: {
    ...all(
      [
        '*.A',
        '*.B',
        '*.C',
        '*.x',
        '*.y',
        '*.AP',
        '*.Aarray',
        '*.Barray',
        '*.Carray',
        '*.xarray',
        '*.yarray',
        '*.Ainv',
        '*.P',
        '*.devIpiv',
        '*.devInfoArray',
        '*.TauArray',
      ],
      dev(BLAS_DATA),
    ),
    '*.result': { space: 'either', dir: 'out', reason: 'the result scalar: host or device memory by the pointer mode' },
    'cublasSetVector*.x': host('the host vector copied to the device'),
    'cublasSetVector*.hostPtr': host('the host vector copied to the device'),
    'cublasSetVector*.devicePtr': dev('the device vector written', { dir: 'out' }),
    'cublasGetVector*.x': dev('the device vector read'),
    'cublasGetVector*.devicePtr': dev('the device vector read'),
    'cublasGetVector*.y': host('the host vector written', { dir: 'out' }),
    'cublasGetVector*.hostPtr': host('the host vector written', { dir: 'out' }),
    'cublasSetMatrix*.A': host('the host matrix copied to the device'),
    'cublasSetMatrix*.B': dev('the device matrix written', { dir: 'out' }),
    'cublasGetMatrix*.A': dev('the device matrix read'),
    'cublasGetMatrix*.B': host('the host matrix written', { dir: 'out' }),
  },
};

const SPARSE_MODE = "a scalar: host or device memory by the handle's pointer mode (cusparseSetPointerMode)";
const SPARSE_DATA = 'cuSPARSE matrix and vector arrays live in device memory';
const SPARSE_BUFFER = 'a device work buffer of the size the matching _bufferSize call returned, in bytes';
const cusparse: Facts = {
  outUnits: units('bytes', "cuSPARSE's buffer sizes are bytes", [
    '*.pBufferSizeInBytes',
    '*.pBufferSize',
    '*.bufferSizeInBytes',
    '*.bufferSize',
    '*.bufferSize1',
    '*.bufferSize2',
    '*.bufferSize3',
    '*.bufferSize4',
    '*.bufferSize5',
    '*.SpMMWorkspaceSize',
  ]),
  scalars: {
    '*.alpha': scalar('either', SPARSE_MODE),
    '*.beta': scalar('either', SPARSE_MODE),
    '*.c_coeff': scalar('either', SPARSE_MODE),
    '*.s_coeff': scalar('either', SPARSE_MODE),
    '*.threshold': scalar('either', SPARSE_MODE),
    '*.fractionToColor': scalar('either', SPARSE_MODE),
  },
  pointers: {
    ...all(
      [
        '*.values',
        '*.indices',
        '*.csrRowOffsets',
        '*.csrColInd',
        '*.csrValues',
        '*.cooRowInd',
        '*.cooColInd',
        '*.cooValues',
        '*.cscColOffsets',
        '*.cscRowInd',
        '*.cscValues',
        '*.bsrRowOffsets',
        '*.bsrColInd',
        '*.bsrValues',
        '*.ellColInd',
        '*.ellValue',
        '*.sellSliceOffsets',
        '*.sellColInd',
        '*.sellValues',
        '*.csrSorted*',
        '*.bsrSorted*',
        '*.x',
        '*.y',
        '*.dl',
        '*.d',
        '*.du',
        '*.dw',
        '*.ds',
        '*.xVal',
        '*.xInd',
      ],
      dev(SPARSE_DATA),
    ),
    ...all(
      ['*.externalBuffer', '*.externalBuffer1', '*.externalBuffer2', '*.externalBuffer3', '*.externalBuffer4', '*.externalBuffer5', '*.pBuffer'],
      dev(SPARSE_BUFFER, { nullable: true }),
    ),
    'cusparseCreateDnVec.values': dev(SPARSE_DATA, { count: { param: 'size', unit: 'elements', typeParam: 'valueType' } }),
    'cusparseCreateConstDnVec.values': dev(SPARSE_DATA, { count: { param: 'size', unit: 'elements', typeParam: 'valueType' } }),
    'cusparseDnVecSetValues.values': dev(SPARSE_DATA),
    '*.nnzTotalDevHostPtr': { space: 'either', dir: 'out', reason: 'the total nnz: host or device memory by the pointer mode' },
  },
};

const SOLVER_DATA = 'cuSOLVER dense matrices, pivots, info and workspaces live in device memory';
const LWORK = { param: 'Lwork', unit: 'elements' } as const;
const BOUND = 'an eigenvalue interval bound in host memory, of the type dataTypeW names (non-const in the header; the call reads it)';
const cusolver: Facts = {
  // cusolverDnXsyevdx, cusolverDnSyevdx (older releases) and their _bufferSize calls
  scalars: { 'cusolverDn*yevdx*.vl': { ...scalar('host', BOUND), nonConst: true }, 'cusolverDn*yevdx*.vu': { ...scalar('host', BOUND), nonConst: true } },
  outUnits: {
    ...units('elements', "the legacy API's workspace size counts elements of the data type (float, double, cuComplex…), not bytes", [
      'cusolver*.Lwork',
      'cusolver*.lwork',
    ]),
    ...units('bytes', 'the 64-bit and mixed-precision APIs size their workspaces in bytes', [
      'cusolver*.lwork_bytes',
      'cusolver*.workspaceInBytesOnDevice',
      'cusolver*.workspaceInBytesOnHost',
    ]),
  },
  pointers: {
    ...all(
      [
        'cusolverDn*.A',
        'cusolverDn*.B',
        'cusolverDn*.C',
        'cusolverDn*.W',
        'cusolverDn*.S',
        'cusolverDn*.U',
        'cusolverDn*.V',
        'cusolverDn*.VT',
        'cusolverDn*.tau',
        'cusolverDn*.TAU',
        'cusolverDn*.TAUQ',
        'cusolverDn*.TAUP',
        'cusolverDn*.E',
        'cusolverDn*.D',
        'cusolverDn*.d',
        'cusolverDn*.e',
        'cusolverDn*.Q',
        'cusolverDn*.ipiv',
        'cusolverDn*.devIpiv',
        'cusolverDn*.dipiv',
        'cusolverDn*.dA',
        'cusolverDn*.dB',
        'cusolverDn*.dX',
        'cusolverDn*.d_A',
        'cusolverDn*.d_S',
        'cusolverDn*.d_U',
        'cusolverDn*.d_V',
        'cusolverDn*.Aarray',
      ],
      dev(SOLVER_DATA),
    ),
    ...all(
      ['cusolverDn*.devInfo', 'cusolverDn*.info', 'cusolverDn*.d_info', 'cusolverDn*.infoArray'],
      dev('the status (0: success; < 0: a bad argument; > 0: the failing index) the solver writes in device memory', { dir: 'out' }),
    ),
    ...all(
      ['cusolverDn*.Workspace', 'cusolverDn*.work', 'cusolverDn*.Work'],
      dev("device workspace of Lwork elements of the data type (the _bufferSize call's Lwork)", { count: LWORK }),
    ),
    // the sparse solvers: device memory, except the …Host functions, which run on the CPU
    ...all(
      [
        'cusolverSp*.csrValA',
        'cusolverSp*.csrRowPtrA',
        'cusolverSp*.csrColIndA',
        'cusolverSp*.csrVal',
        'cusolverSp*.csrRowPtr',
        'cusolverSp*.csrColInd',
        'cusolverSp*.b',
        'cusolverSp*.x',
        'cusolverSp*.x0',
      ],
      dev("cuSOLVER's sparse solvers take device memory (the …Host variants host memory)"),
    ),
    ...all(
      [
        'cusolverSp*Host.csrValA',
        'cusolverSp*Host.csrRowPtrA',
        'cusolverSp*Host.csrColIndA',
        'cusolverSp*Host.csrVal',
        'cusolverSp*Host.csrRowPtr',
        'cusolverSp*Host.csrColInd',
        'cusolverSp*Host.b',
        'cusolverSp*Host.x',
        'cusolverSp*Host.x0',
      ],
      host('the …Host sparse solvers run on the CPU: host memory'),
    ),
    'cusolverDn*.dWorkspace': dev("device workspace of lwork_bytes bytes (the _bufferSize call's)", { count: { param: 'lwork_bytes', unit: 'bytes' } }),
    'cusolverDn*.bufferOnDevice': dev('device workspace of workspaceInBytesOnDevice bytes', {
      count: { param: 'workspaceInBytesOnDevice', unit: 'bytes' },
      nullable: true,
    }),
    'cusolverDn*.bufferOnHost': host('host workspace of workspaceInBytesOnHost bytes', {
      count: { param: 'workspaceInBytesOnHost', unit: 'bytes' },
      nullable: true,
    }),
  },
};

const RAND = 'the generated numbers, written to device memory (host generators: cuRAND host API, not bound here)';
const curand: Facts = {
  pointers: {
    ...all(
      [
        'curandGenerate.outputPtr',
        'curandGenerateUniform.outputPtr',
        'curandGenerateUniformDouble.outputPtr',
        'curandGenerateLongLong.outputPtr',
        'curandGenerateBinomial.outputPtr',
        'curandGenerateBinomialMethod.outputPtr',
      ],
      dev(RAND, { dir: 'out', count: { param: 'num', unit: 'elements' } }),
    ),
    ...all(
      [
        'curandGenerateNormal.outputPtr',
        'curandGenerateNormalDouble.outputPtr',
        'curandGenerateLogNormal.outputPtr',
        'curandGenerateLogNormalDouble.outputPtr',
        'curandGeneratePoisson.outputPtr',
        'curandGeneratePoissonMethod.outputPtr',
      ],
      dev(RAND, { dir: 'out', count: { param: 'n', unit: 'elements' } }),
    ),
  },
};

const FFT = 'cuFFT transforms device memory';
const cufft: Facts = {
  outUnits: units('bytes', "cuFFT's work sizes are bytes", ['*.workSize', '*.workArea']),
  pointers: {
    'cufftExec*.idata': dev(`${FFT} (the input may be overwritten by out-of-place C2R and multi-dimensional transforms)`),
    'cufftExec*.odata': dev(FFT, { dir: 'out' }),
    'cufftXtExec*.input': dev(FFT),
    'cufftXtExec*.output': dev(FFT, { dir: 'out' }),
    'cufftSetWorkArea.workArea': dev("the plan's device work area (cufftGetSize's bytes)"),
  },
};

const NCCL_COUNT = (param: string) => ({ param, unit: 'elements', typeParam: 'datatype' }) as const;
const NCCL = 'NCCL buffers live in device memory, counted in elements of datatype';
const nccl: Facts = {
  scalars: { 'ncclRedOpCreatePreMulSum.scalar': scalar('either', 'the multiplier: host or device memory as residence says, of datatype') },
  pointers: {
    ...all(
      [
        'ncclAllReduce.sendbuff',
        'ncclBroadcast.sendbuff',
        'ncclReduce.sendbuff',
        'ncclSend.sendbuff',
        'ncclAlltoAll.sendbuff',
        'ncclGather.sendbuff',
        'ncclScatter.sendbuff',
      ],
      dev(NCCL, { count: NCCL_COUNT('count') }),
    ),
    ...all(
      [
        'ncclAllReduce.recvbuff',
        'ncclBroadcast.recvbuff',
        'ncclReduce.recvbuff',
        'ncclRecv.recvbuff',
        'ncclAlltoAll.recvbuff',
        'ncclGather.recvbuff',
        'ncclScatter.recvbuff',
      ],
      dev(NCCL, { dir: 'out', count: NCCL_COUNT('count') }),
    ),
    'ncclAllGather.sendbuff': dev(NCCL, { count: NCCL_COUNT('sendcount') }),
    'ncclAllGather.recvbuff': dev(`${NCCL} (nranks × sendcount)`, { dir: 'out' }),
    'ncclReduceScatter.sendbuff': dev(`${NCCL} (nranks × recvcount)`),
    'ncclReduceScatter.recvbuff': dev(NCCL, { dir: 'out', count: NCCL_COUNT('recvcount') }),
    'ncclBcast.buff': dev(NCCL, { count: NCCL_COUNT('count') }),
  },
};

const DNN_SCALE = "a blending factor in host memory, of the type the tensors' data type picks (float, or double for double tensors)";
const DNN = 'cuDNN tensors, filters and workspaces live in device memory';
const cudnn: Facts = {
  outUnits: units('bytes', "cuDNN's workspace and reserve sizes are bytes", [
    '*.sizeInBytes',
    '*.workSpaceSizeInBytes',
    '*.reserveSpaceSizeInBytes',
    '*.workspaceSize',
  ]),
  scalars: {
    ...Object.fromEntries(
      ['alpha', 'beta', 'alpha1', 'alpha2', 'alphaDataDiff', 'betaDataDiff', 'alphaParamDiff', 'betaParamDiff', 'alphaDgrid', 'betaDgrid'].map((n) => [
        `*.${n}`,
        scalar('host', DNN_SCALE),
      ]),
    ),
    'cudnnSetTensor.valuePtr': scalar('host', "the one value every element is set to, in host memory, of the tensor's data type"),
  },
  pointers: all(
    [
      '*.x',
      '*.y',
      '*.dx',
      '*.dy',
      '*.w',
      '*.dw',
      '*.z',
      '*.xData',
      '*.yData',
      '*.dxData',
      '*.dyData',
      '*.zData',
      '*.dzData',
      '*.srcData',
      '*.destData',
      '*.bias',
      '*.reserveSpace',
      '*.bnScale',
      '*.bnBias',
      '*.savedMean',
      '*.savedInvVariance',
      '*.resultRunningMean',
      '*.resultRunningVariance',
      '*.resultSaveMean',
      '*.resultSaveInvVariance',
      '*.estimatedMean',
      '*.estimatedVariance',
    ],
    dev(DNN),
  ),
};

const BACKEND = 'the attribute values, in host memory: elements of the C type attributeType names';
cudnn.pointers!['cudnnBackendGetAttribute.arrayOfElements'] = host(BACKEND, {
  dir: 'out',
  nullable: true,
  count: { param: 'requestedElementCount', unit: 'elements', typeParam: 'attributeType' },
});
cudnn.pointers!['cudnnBackendSetAttribute.arrayOfElements'] = host(BACKEND, { count: { param: 'elementCount', unit: 'elements', typeParam: 'attributeType' } });

const WORKSPACE = (param: string) => dev('device workspace of the given byte size', { nullable: true, count: { param, unit: 'bytes' } });
cudnn.pointers!['*.workSpace'] = WORKSPACE('workSpaceSizeInBytes');

/** The memory facts of each math module, merged into its override table. */
export const MATH_FACTS: Record<string, Facts> = { cublas, cusparse, cusolver, curand, cufft, nccl, cudnn };
