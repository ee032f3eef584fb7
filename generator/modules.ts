// The module catalog: the one place that knows CUDA's libraries — which headers each module parses,
// which symbols belong to it, which shared libraries export them and how its status codes read.
// Generated code receives these facts as data; nothing else hard-codes CUDA libraries.
//
// The release axis: library names are keyed by the first release that uses them, functions a library
// does not export by the exact release whose libraries were surveyed, and the minimum driver of each
// release lives once in src/runtime/versions.ts. `specForRelease` resolves them into the plain view
// the emitter reads (`sonames[major]`, `notExported`).
import { MIN_DRIVER, minimumDriver } from '../support/versions';

export { MIN_DRIVER, minimumDriver };

export interface StatusSpec {
  /** The C type functions return as status (`CUresult`). */
  type: string;
  success: string;
  /** Error class name thrown by the typed layer; it extends CudaError. */
  errorClass: string;
  /** How to get a readable message from the library: `return` = `const char* f(status)`,
   *  `out` = `status f(status, const char** out)`. */
  describe?: { fn: string; style: 'return' | 'out' };
  /** When the status is a struct (cuFile's `CUfileError_t`): the field holding the enum code. */
  field?: string;
  /** Functions for which these statuses are answers, not errors: the typed layer returns them. */
  answers?: Record<string, string[]>;
}

export interface ModuleSpec {
  name: string;
  title: string;
  /** Headers to `#include`, relative to an include directory. */
  includes: string[];
  /** Headers whose declarations belong to this module (others only supply referenced types). */
  ownHeaders: string[];
  /** Function name prefixes that belong to this module. */
  prefixes: string[];
  /** Macro name prefixes kept as constants. */
  macroPrefixes: string[];
  /** The macro giving the library's version number (`CUDA_VERSION` → 13000); absent: the CUDA release. */
  versionMacro?: string;
  /** Library sonames keyed by the first CUDA release that uses them (`'11.0'`, `'12.0'`; a bare major
   *  `'13'` means `'13.0'`), newest-compatible first: a release uses the entry with the greatest key
   *  at or below it. Resolve with {@link librariesFor}. */
  sonames: Record<string, string[]>;
  /** Environment variable naming the library file explicitly. */
  env: string;
  /** `procAddress`: resolve through cuGetProcAddress (driver); `symbol`: plain dlsym. */
  resolve: 'procAddress' | 'symbol';
  status: StatusSpec;
  /** Typedefs that hold device addresses (numbers at run time, branded). */
  devicePointers?: string[];
  /** Where the headers of a module outside the toolkit usually live (hint for `--include`). */
  includeHint?: string;
  /** Extra `-D` defines. */
  defines?: string[];
  /** Headers of `includes` that a toolkit may lack (no pip wheel ships the profiler headers): when
   *  missing, only their declarations are absent, with one warning. */
  optionalIncludes?: string[];
  /** Functions the headers declare but the library does not export, by the exact release whose
   *  libraries were surveyed (`'13.0'`): never applied to another release. */
  notExportedIn?: Record<string, string[]>;
  /** The resolved view for one release ({@link specForRelease}): generated, documented as such, and
   *  raising CudaSymbolError when called. Catalog entries leave it unset. */
  notExported?: string[];
  /** The headers have per-thread-default-stream variants (`CUDA_API_PER_THREAD_DEFAULT_STREAM`);
   *  undefined: detected from `…PTDS(api)`/`…PTSZ(api)` macros (one more clang run). */
  perThreadDefaultStream?: boolean;
  /** Non-const pointers to numbers and records are data arrays (math libraries), not out-parameters. */
  dataPointers?: boolean;
  /** Types kept in the IR although no function of the module names them: the enums its attribute values
   *  take (cuBLASLt's CUBLASLT_MATMUL_DESC_TRANSA is a cublasOperation_t), so that the module exports them. */
  keepTypes?: string[];
  /** Functions whose callback argument the library may call from a thread of its own. */
  foreignThreadCallbacks?: string[];
  /** Of those, the ones that call their callback exactly once (`fn.param`): the typed layer also takes
   *  a JS function there, registers it for that one call and counts it as pending until it ran. */
  oneShotCallbacks?: string[];
  /** Functions that wait on the calling thread for device work (synchronize, synchronous copies,
   *  frees): the typed layer refuses them while a JS callback is pending (they would never return). */
  blocking?: RegExp;
  /** Name prefixes of declarations in own headers that are not part of the API (internal, deprecated). */
  excludePrefixes?: string[];
  /** Headers of `PFN_<name>_v<version>` typedefs (`cudaTypedefs.h`): the version at which each exact
   *  ABI is asked of cuGetProcAddress (`cuCtxSynchronize` is 2000, `cuCtxSynchronize_v2` 13000). */
  procTables?: string[];
}

const driverAnswers = ['CUDA_ERROR_NOT_READY'];
const runtimeAnswers = ['cudaErrorNotReady'];

export const MODULES: readonly ModuleSpec[] = [
  {
    name: 'driver',
    title: 'CUDA driver API',
    includes: ['cuda.h', 'cudaProfiler.h'],
    optionalIncludes: ['cudaProfiler.h'],
    ownHeaders: ['cuda.h', 'cudaProfiler.h'],
    prefixes: ['cu'],
    macroPrefixes: ['CU_', 'CUDA_', 'MAX_PLANES'],
    versionMacro: 'CUDA_VERSION',
    sonames: { '11.0': ['libcuda.so.1', 'libcuda.so'] },
    env: 'CUDA_TS_DRIVER_LIBRARY',
    resolve: 'procAddress',
    status: {
      type: 'CUresult',
      success: 'CUDA_SUCCESS',
      errorClass: 'DriverError',
      describe: { fn: 'cuGetErrorString', style: 'out' },
      answers: { cuStreamQuery: driverAnswers, cuEventQuery: driverAnswers },
    },
    devicePointers: ['CUdeviceptr', 'CUdeviceptr_v2'],
    perThreadDefaultStream: true,
    procTables: ['cudaTypedefs.h', 'cudaProfilerTypedefs.h'],
    foreignThreadCallbacks: ['cuLaunchHostFunc', 'cuStreamAddCallback', 'cuUserObjectCreate'],
    oneShotCallbacks: ['cuLaunchHostFunc.fn', 'cuStreamAddCallback.callback', 'cuUserObjectCreate.destroy'],
    blocking: /^cu(Memcpy(?!\w*Async)\w*|Memset(?!\w*Async)\w*|MemFree|MemFreeHost|CtxSynchronize(_v2)?|StreamSynchronize|EventSynchronize|CtxDestroy|DevicePrimaryCtxReset)$/,
  },
  {
    name: 'runtime',
    title: 'CUDA runtime API',
    includes: ['cuda_runtime_api.h', 'cuda_profiler_api.h'],
    optionalIncludes: ['cuda_profiler_api.h'],
    ownHeaders: [
      'cuda_runtime_api.h',
      'cuda_profiler_api.h',
      'driver_types.h',
      'vector_types.h',
      'surface_types.h',
      'texture_types.h',
      'library_types.h',
    ],
    prefixes: ['cuda'],
    macroPrefixes: ['cuda', 'CUDA'],
    versionMacro: 'CUDART_VERSION',
    sonames: { '11.0': ['libcudart.so.11.0'], '12.0': ['libcudart.so.12'], '13.0': ['libcudart.so.13'] },
    env: 'CUDA_TS_RUNTIME_LIBRARY',
    resolve: 'symbol',
    status: {
      type: 'cudaError_t',
      success: 'cudaSuccess',
      errorClass: 'RuntimeError',
      describe: { fn: 'cudaGetErrorString', style: 'return' },
      answers: { cudaStreamQuery: runtimeAnswers, cudaEventQuery: runtimeAnswers },
    },
    perThreadDefaultStream: true,
    foreignThreadCallbacks: ['cudaLaunchHostFunc', 'cudaStreamAddCallback', 'cudaUserObjectCreate'],
    oneShotCallbacks: ['cudaLaunchHostFunc.fn', 'cudaStreamAddCallback.callback', 'cudaUserObjectCreate.destroy'],
    blocking: /^cuda(Memcpy(?!\w*Async)\w*|Memset(?!\w*Async)\w*|Free|FreeHost|FreeArray|FreeMipmappedArray|DeviceSynchronize|StreamSynchronize|EventSynchronize|DeviceReset)$/,
  },
  {
    name: 'nvrtc',
    title: 'NVRTC runtime compilation API',
    includes: ['nvrtc.h'],
    ownHeaders: ['nvrtc.h'],
    prefixes: ['nvrtc'],
    macroPrefixes: ['NVRTC_'],
    sonames: { '11.2': ['libnvrtc.so.11.2'], '12.0': ['libnvrtc.so.12'], '13.0': ['libnvrtc.so.13'] },
    env: 'CUDA_TS_NVRTC_LIBRARY',
    resolve: 'symbol',
    perThreadDefaultStream: false,
    status: {
      type: 'nvrtcResult',
      success: 'NVRTC_SUCCESS',
      errorClass: 'NvrtcError',
      describe: { fn: 'nvrtcGetErrorString', style: 'return' },
    },
  },
  {
    name: 'nvjitlink',
    title: 'nvJitLink JIT linker API',
    includes: ['nvJitLink.h'],
    ownHeaders: ['nvJitLink.h'],
    prefixes: ['nvJitLink'],
    macroPrefixes: ['NVJITLINK_'],
    sonames: { '12.0': ['libnvJitLink.so.12'], '13.0': ['libnvJitLink.so.13'] },
    env: 'CUDA_TS_NVJITLINK_LIBRARY',
    resolve: 'symbol',
    perThreadDefaultStream: false,
    status: { type: 'nvJitLinkResult', success: 'NVJITLINK_SUCCESS', errorClass: 'NvJitLinkError' },
  },
  {
    name: 'nvfatbin',
    title: 'nvFatbin fatbinary creation API',
    includes: ['nvFatbin.h'],
    ownHeaders: ['nvFatbin.h'],
    prefixes: ['nvFatbin'],
    macroPrefixes: ['NVFATBIN_'],
    sonames: { '12.4': ['libnvfatbin.so.12'], '13.0': ['libnvfatbin.so.13'] },
    env: 'CUDA_TS_NVFATBIN_LIBRARY',
    resolve: 'symbol',
    perThreadDefaultStream: false,
    status: {
      type: 'nvFatbinResult',
      success: 'NVFATBIN_SUCCESS',
      errorClass: 'NvFatbinError',
      describe: { fn: 'nvFatbinGetErrorString', style: 'return' },
    },
  },
  {
    name: 'cublas',
    title: 'cuBLAS (v2 API)',
    includes: ['cublas_v2.h'],
    ownHeaders: ['cublas_v2.h', 'cublas_api.h'],
    prefixes: ['cublas'],
    excludePrefixes: ['cublasLt', 'cublasXt'],
    macroPrefixes: ['CUBLAS_'],
    versionMacro: 'CUBLAS_VERSION',
    sonames: { '11.0': ['libcublas.so.11'], '12.0': ['libcublas.so.12'], '13.0': ['libcublas.so.13'] },
    env: 'CUDA_TS_CUBLAS_LIBRARY',
    resolve: 'symbol',
    perThreadDefaultStream: false,
    dataPointers: true,
    status: {
      type: 'cublasStatus_t',
      success: 'CUBLAS_STATUS_SUCCESS',
      errorClass: 'CublasError',
      describe: { fn: 'cublasGetStatusString', style: 'return' },
    },
  },
  {
    name: 'cublaslt',
    title: 'cuBLASLt',
    includes: ['cublasLt.h'],
    ownHeaders: ['cublasLt.h'],
    prefixes: ['cublasLt'],
    macroPrefixes: ['CUBLASLT_'],
    sonames: { '11.0': ['libcublasLt.so.11'], '12.0': ['libcublasLt.so.12'], '13.0': ['libcublasLt.so.13'] },
    env: 'CUDA_TS_CUBLASLT_LIBRARY',
    resolve: 'symbol',
    perThreadDefaultStream: false,
    dataPointers: true,
    keepTypes: ['cublasOperation_t', 'cublasFillMode_t'],
    // Declared but not exported by the CUDA 13.0 library (symbol survey on the H200, test/gpu/modules.gpu.test.ts).
    notExportedIn: { '13.0': ['cublasLtDisableCpuInstructionsSetMask'] },
    status: {
      type: 'cublasStatus_t',
      success: 'CUBLAS_STATUS_SUCCESS',
      errorClass: 'CublasLtError',
      describe: { fn: 'cublasLtGetStatusString', style: 'return' },
    },
  },
  {
    name: 'curand',
    title: 'cuRAND host API',
    includes: ['curand.h'],
    ownHeaders: ['curand.h'],
    prefixes: ['curand'],
    macroPrefixes: ['CURAND_'],
    versionMacro: 'CURAND_VERSION',
    sonames: { '11.0': ['libcurand.so.10'] },
    env: 'CUDA_TS_CURAND_LIBRARY',
    resolve: 'symbol',
    perThreadDefaultStream: false,
    dataPointers: true,
    // Declared but not exported by the CUDA 13.0 library (symbol survey on the H200, test/gpu/modules.gpu.test.ts).
    notExportedIn: { '13.0': ['curandGenerateBinomial', 'curandGenerateBinomialMethod'] },
    status: { type: 'curandStatus_t', success: 'CURAND_STATUS_SUCCESS', errorClass: 'CurandError' },
  },
  {
    name: 'cufft',
    title: 'cuFFT (with cuFFTXt)',
    includes: ['cufft.h', 'cufftXt.h'],
    ownHeaders: ['cufft.h', 'cufftXt.h', 'cudalibxt.h'],
    prefixes: ['cufft'],
    macroPrefixes: ['CUFFT_', 'MAX_CUDA_DESCRIPTOR_GPUS'],
    versionMacro: 'CUFFT_VERSION',
    sonames: { '11.0': ['libcufft.so.10'], '12.0': ['libcufft.so.11'], '13.0': ['libcufft.so.12'] },
    env: 'CUDA_TS_CUFFT_LIBRARY',
    resolve: 'symbol',
    perThreadDefaultStream: false,
    dataPointers: true,
    status: { type: 'cufftResult', success: 'CUFFT_SUCCESS', errorClass: 'CufftError' },
  },
  {
    name: 'cusparse',
    title: 'cuSPARSE',
    includes: ['cusparse.h'],
    ownHeaders: ['cusparse.h'],
    prefixes: ['cusparse'],
    macroPrefixes: ['CUSPARSE_'],
    versionMacro: 'CUSPARSE_VERSION',
    sonames: { '11.0': ['libcusparse.so.11'], '12.0': ['libcusparse.so.12'] },
    env: 'CUDA_TS_CUSPARSE_LIBRARY',
    resolve: 'symbol',
    perThreadDefaultStream: false,
    dataPointers: true,
    // Declared but not exported by the CUDA 13.0 library (symbol survey on the H200, test/gpu/modules.gpu.test.ts).
    notExportedIn: { '13.0': [
      ...['bsric02', 'bsrilu02', 'bsrsm2', 'bsrsv2', 'csr2gebsr', 'csric02', 'csrilu02', 'gebsr2gebsc', 'gebsr2gebsr'].flatMap((op) =>
        ['S', 'D', 'C', 'Z'].map((t) => `cusparse${t}${op}_bufferSizeExt`),
      ),
      'cusparseXgebsr2csr',
    ] },
    status: {
      type: 'cusparseStatus_t',
      success: 'CUSPARSE_STATUS_SUCCESS',
      errorClass: 'CusparseError',
      describe: { fn: 'cusparseGetErrorString', style: 'return' },
    },
  },
  {
    name: 'cusolver',
    title: 'cuSOLVER (Dn, Sp, Rf)',
    includes: ['cusolverDn.h', 'cusolverSp.h', 'cusolverRf.h'],
    ownHeaders: ['cusolverDn.h', 'cusolverSp.h', 'cusolverRf.h', 'cusolver_common.h'],
    prefixes: ['cusolver'],
    macroPrefixes: ['CUSOLVER'],
    versionMacro: 'CUSOLVER_VERSION',
    sonames: { '11.0': ['libcusolver.so.11'], '13.0': ['libcusolver.so.12'] },
    env: 'CUDA_TS_CUSOLVER_LIBRARY',
    resolve: 'symbol',
    perThreadDefaultStream: false,
    dataPointers: true,
    // Declared but not exported by the CUDA 13.0 library (symbol survey on the H200, test/gpu/modules.gpu.test.ts).
    notExportedIn: { '13.0': [
      'cusolverDnLoggerForceDisable', 'cusolverDnLoggerOpenFile', 'cusolverDnLoggerSetCallback',
      'cusolverDnLoggerSetFile', 'cusolverDnLoggerSetLevel', 'cusolverDnLoggerSetMask',
    ] },
    status: { type: 'cusolverStatus_t', success: 'CUSOLVER_STATUS_SUCCESS', errorClass: 'CusolverError' },
  },
  {
    name: 'nvml',
    title: 'NVML management library',
    includes: ['nvml.h'],
    ownHeaders: ['nvml.h'],
    prefixes: ['nvml'],
    macroPrefixes: ['NVML_', 'nvml'],
    versionMacro: 'NVML_API_VERSION',
    sonames: { '11.0': ['libnvidia-ml.so.1'] },
    env: 'CUDA_TS_NVML_LIBRARY',
    resolve: 'symbol',
    perThreadDefaultStream: false,
    status: {
      type: 'nvmlReturn_t',
      success: 'NVML_SUCCESS',
      errorClass: 'NvmlError',
      describe: { fn: 'nvmlErrorString', style: 'return' },
    },
  },
  {
    name: 'cufile',
    title: 'cuFile (GPUDirect Storage)',
    includes: ['cufile.h'],
    ownHeaders: ['cufile.h'],
    prefixes: ['cuFile'],
    macroPrefixes: ['CU_FILE_', 'CUFILE_'],
    sonames: { '11.0': ['libcufile.so.0'] },
    env: 'CUDA_TS_CUFILE_LIBRARY',
    resolve: 'symbol',
    perThreadDefaultStream: false,
    status: { type: 'CUfileError_t', field: 'err', success: 'CU_FILE_SUCCESS', errorClass: 'CufileError' },
  },
  {
    name: 'cupti',
    title: 'CUPTI profiling tools interface',
    includes: ['cupti.h'],
    ownHeaders: [
      'cupti.h', 'cupti_result.h', 'cupti_version.h', 'cupti_activity.h', 'cupti_activity_deprecated.h', 'cupti_callbacks.h',
      'cupti_events.h', 'cupti_metrics.h', 'cupti_common.h', 'cupti_driver_cbid.h', 'cupti_runtime_cbid.h', 'cupti_nvtx_cbid.h',
    ],
    prefixes: ['cupti'],
    macroPrefixes: ['CUPTI_'],
    versionMacro: 'CUPTI_API_VERSION',
    sonames: { '11.8': ['libcupti.so.11.8'], '12.0': ['libcupti.so.12'], '13.0': ['libcupti.so.13'] },
    env: 'CUDA_TS_CUPTI_LIBRARY',
    resolve: 'symbol',
    perThreadDefaultStream: false,
    status: {
      type: 'CUptiResult',
      success: 'CUPTI_SUCCESS',
      errorClass: 'CuptiError',
      describe: { fn: 'cuptiGetResultString', style: 'out' },
    },
    foreignThreadCallbacks: ['cuptiSubscribe', 'cuptiActivityRegisterCallbacks'],
  },
  {
    name: 'cudnn',
    title: 'cuDNN',
    includes: ['cudnn.h'],
    ownHeaders: ['cudnn.h', 'cudnn_version.h', 'cudnn_graph.h', 'cudnn_ops.h', 'cudnn_cnn.h', 'cudnn_adv.h', 'cudnn_backend.h'],
    prefixes: ['cudnn'],
    macroPrefixes: ['CUDNN_'],
    versionMacro: 'CUDNN_VERSION',
    sonames: { '11.0': ['libcudnn.so.9'] },
    env: 'CUDA_TS_CUDNN_LIBRARY',
    resolve: 'symbol',
    perThreadDefaultStream: false,
    dataPointers: true,
    status: {
      type: 'cudnnStatus_t',
      success: 'CUDNN_STATUS_SUCCESS',
      errorClass: 'CudnnError',
      describe: { fn: 'cudnnGetErrorString', style: 'return' },
    },
    includeHint:
      'cuDNN ships outside the toolkit: pass --include with the directory holding cudnn.h, e.g. /usr/include, ' +
      '$CONDA_PREFIX/include or site-packages/nvidia/cudnn/include',
  },
  {
    name: 'nccl',
    title: 'NCCL collective communications',
    includes: ['nccl.h'],
    ownHeaders: ['nccl.h'],
    prefixes: ['nccl'],
    macroPrefixes: ['NCCL_'],
    versionMacro: 'NCCL_VERSION_CODE',
    sonames: { '11.0': ['libnccl.so.2'] },
    env: 'CUDA_TS_NCCL_LIBRARY',
    resolve: 'symbol',
    perThreadDefaultStream: false,
    dataPointers: true,
    // Declared but not exported by the CUDA 13.0 library (symbol survey on the H200, test/gpu/modules.gpu.test.ts).
    notExportedIn: { '13.0': ['ncclCommRevoke'] },
    status: {
      type: 'ncclResult_t',
      success: 'ncclSuccess',
      errorClass: 'NcclError',
      describe: { fn: 'ncclGetErrorString', style: 'return' },
    },
    includeHint:
      'NCCL ships outside the toolkit: pass --include with the directory holding nccl.h, e.g. /usr/include, ' +
      '$CONDA_PREFIX/include or site-packages/nvidia/nccl/include',
  },
];

export function findModule(name: string): ModuleSpec | undefined {
  return MODULES.find((m) => m.name === name);
}

/** The releases this project generates and stores, oldest first (a fixed, committed list). */
export const RELEASES: readonly string[] = ['11.8', '12.5', '12.6', '13.0'];

/** The first release of the `since` annotations: a function declared by it carries none, one that
 *  appeared later names the first release of {@link RELEASES} (from this one on) declaring it. Fixed,
 *  so storing another release never rewrites the annotations of the others. */
export const SINCE_BASELINE = '12.6';

/** "11.8" → 11080 (a bare major "13" → 13000). */
export function releaseNumber(release: string): number {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(release);
  if (!m) throw new Error(`not a CUDA release: "${release}"`);
  return Number(m[1]) * 1000 + Number(m[2] ?? 0) * 10;
}

/** The library names of a module in one release, or undefined when the catalog knows none. */
export function librariesFor(spec: ModuleSpec, release: string): string[] | undefined {
  const n = releaseNumber(release);
  let best: { from: number; names: string[] } | undefined;
  for (const [from, names] of Object.entries(spec.sonames)) {
    const f = releaseNumber(from);
    if (f <= n && (!best || f > best.from)) best = { from: f, names };
  }
  return best?.names;
}

/** The functions a release's library is known not to export: only releases that were surveyed. */
export function notExportedFor(spec: ModuleSpec, release: string): string[] {
  return spec.notExportedIn?.[release] ?? [];
}

/** The view of a module the emitter reads for one release: `sonames` holds that release's names under
 *  its major, `notExported` that release's list. Throws when the catalog knows no library name. */
export function specForRelease(spec: ModuleSpec, release: string): ModuleSpec {
  const names = librariesFor(spec, release);
  if (!names) {
    const known = Object.keys(spec.sonames).join(', ');
    throw new Error(`the catalog knows no library name of ${spec.name} for CUDA ${release} (it knows releases from ${known})`);
  }
  return { ...spec, sonames: { [String(Math.floor(releaseNumber(release) / 1000))]: names }, notExported: notExportedFor(spec, release) };
}

/**
 * How NVIDIA's online reference addresses each module (addresses only, never NVIDIA text): its page,
 * whether it has one Doxygen page per group (`group__CUDA__MEM.html` for the driver's CUDA_MEM), and
 * the page and anchor of one function where each function has its own section. `archived`: the CUDA
 * toolkit's documentation keeps each release (`/cuda/archive/12.6.0/…`), so every stored release links
 * its own pages (groups a later release removed stay reachable); the others publish one current page.
 */
export interface ReferenceScheme {
  /** The module's page, relative to the toolkit docs' root when `archived`, else absolute. */
  page: string;
  archived?: boolean;
  groups?: boolean;
  /** A function's page (relative to `page`'s folder) and anchor, from its name and header. */
  fn?: (name: string, header: string) => string;
}

const CUDNN_PAGES: Readonly<Record<string, string>> = { 'cudnn_ops.h': 'ops', 'cudnn_cnn.h': 'cnn', 'cudnn_adv.h': 'adv', 'cudnn_graph.h': 'graph' };

export const REFERENCE: Readonly<Record<string, ReferenceScheme>> = {
  driver: { page: 'cuda-driver-api/index.html', archived: true, groups: true },
  runtime: { page: 'cuda-runtime-api/index.html', archived: true, groups: true },
  nvrtc: { page: 'nvrtc/index.html', archived: true },
  nvjitlink: { page: 'nvjitlink/index.html', archived: true },
  nvfatbin: { page: 'nvfatbin/index.html', archived: true },
  cublas: { page: 'cublas/index.html', archived: true },
  cublaslt: { page: 'cublas/index.html', archived: true },
  cufft: { page: 'cufft/index.html', archived: true },
  curand: { page: 'curand/index.html', archived: true },
  cusolver: { page: 'cusolver/index.html', archived: true },
  cusparse: { page: 'cusparse/index.html', archived: true },
  nvml: { page: 'https://docs.nvidia.com/deploy/nvml-api/index.html', groups: true },
  cupti: { page: 'https://docs.nvidia.com/cupti/api/index.html', groups: true },
  cufile: { page: 'https://docs.nvidia.com/gpudirect-storage/api-reference-guide/index.html' },
  // cuDNN 9: one page per sub-library, one section per function (`#cudnnsettensornddescriptor`)
  cudnn: {
    page: 'https://docs.nvidia.com/deeplearning/cudnn/backend/latest/api/overview.html',
    fn: (name, header) => (CUDNN_PAGES[header] ? `cudnn-${CUDNN_PAGES[header]}-library.html#${name.toLowerCase()}` : 'overview.html'),
  },
  nccl: { page: 'https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/api.html' },
};

/** The root of a CUDA release's archived toolkit documentation ("12.6" → …/cuda/archive/12.6.0/). */
export function toolkitDocsRoot(release: string): string {
  return `https://docs.nvidia.com/cuda/archive/${release}.0/`;
}
