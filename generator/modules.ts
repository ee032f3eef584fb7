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
    blocking:
      /^cu(Memcpy(?!\w*Async)\w*|Memset(?!\w*Async)\w*|MemFree|MemFreeHost|CtxSynchronize(_v2)?|StreamSynchronize|EventSynchronize|CtxDestroy|DevicePrimaryCtxReset)$/,
  },
  {
    name: 'runtime',
    title: 'CUDA runtime API',
    includes: ['cuda_runtime_api.h', 'cuda_profiler_api.h'],
    optionalIncludes: ['cuda_profiler_api.h'],
    ownHeaders: ['cuda_runtime_api.h', 'cuda_profiler_api.h', 'driver_types.h', 'vector_types.h', 'surface_types.h', 'texture_types.h', 'library_types.h'],
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
    blocking:
      /^cuda(Memcpy(?!\w*Async)\w*|Memset(?!\w*Async)\w*|Free|FreeHost|FreeArray|FreeMipmappedArray|DeviceSynchronize|StreamSynchronize|EventSynchronize|DeviceReset)$/,
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
    notExportedIn: {
      '13.0': [
        ...['bsric02', 'bsrilu02', 'bsrsm2', 'bsrsv2', 'csr2gebsr', 'csric02', 'csrilu02', 'gebsr2gebsc', 'gebsr2gebsr'].flatMap((op) =>
          ['S', 'D', 'C', 'Z'].map((t) => `cusparse${t}${op}_bufferSizeExt`),
        ),
        'cusparseXgebsr2csr',
      ],
    },
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
    notExportedIn: {
      '13.0': [
        'cusolverDnLoggerForceDisable',
        'cusolverDnLoggerOpenFile',
        'cusolverDnLoggerSetCallback',
        'cusolverDnLoggerSetFile',
        'cusolverDnLoggerSetLevel',
        'cusolverDnLoggerSetMask',
      ],
    },
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
      'cupti.h',
      'cupti_result.h',
      'cupti_version.h',
      'cupti_activity.h',
      'cupti_activity_deprecated.h',
      'cupti_callbacks.h',
      'cupti_events.h',
      'cupti_metrics.h',
      'cupti_common.h',
      'cupti_driver_cbid.h',
      'cupti_runtime_cbid.h',
      'cupti_nvtx_cbid.h',
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
 * How NVIDIA's online reference addresses each module (addresses only, never NVIDIA text). Each scheme was
 * checked against real docs.nvidia.com addresses; where a library publishes no page per release, or its
 * anchors are Doxygen hashes (NVRTC, cuRAND) or sections shared by several functions (cuFFT, cuSPARSE,
 * cuSOLVER), the table stops at the page rather than guess.
 * - `archived`: the CUDA toolkit's documentation keeps each release (`/cuda/archive/12.6.0/…`).
 * - `versioned`: the library keeps each of its own versions, named by the version its headers declare
 *   (the IR's `versionNumber`): cuDNN (`/cudnn/backend/v9.6.0/`), NCCL (`/nccl/archives/nccl_2289/`),
 *   CUPTI (`/cupti/13.0.0/`, one folder per CUDA release from 13.0; older releases have none we confirmed).
 * - neither: one current page, linked only from the newest stored release (and any newer one): an older
 *   tree links nothing rather than a page that may describe another version (NVML, whose archives go by
 *   driver branch, which no header states; cuFile).
 */
export interface ReferenceScheme {
  /** The module's page, relative to the toolkit docs' root when `archived`, else absolute. */
  page: string;
  archived?: boolean;
  /** The page of a release, from the CUDA release and the library version its headers declare;
   *  undefined where no page of that version is known. */
  versioned?: (release: string, version: number) => string | undefined;
  groups?: boolean;
  /** A function's page (relative to `page`'s folder) and anchor, from its name, header and the module's
   *  other function names; undefined where the function has no section of its own we can address. */
  fn?: (name: string, header: string, release: string, names: ReadonlySet<string>) => string | undefined;
}

const CUDNN_PAGES: Readonly<Record<string, string>> = { 'cudnn_ops.h': 'ops', 'cudnn_cnn.h': 'cnn', 'cudnn_adv.h': 'adv', 'cudnn_graph.h': 'graph' };

/** "major.minor.patch" of a `major*10000 + minor*100 + patch` version code (CUDNN_VERSION ≥ 9,
 *  NCCL_VERSION_CODE ≥ 2.9); undefined for a code of another shape. */
function tripleOf(code: number, minMajor: number): [number, number, number] | undefined {
  const t: [number, number, number] = [Math.floor(code / 10000), Math.floor(code / 100) % 100, code % 100];
  return t[0] >= minMajor && code < 1_000_000 ? t : undefined;
}

// cuBLAS's reference (Sphinx since CUDA 12: checked on the 12.2, 12.6, 12.8, 12.9 and 13.1 archives) gives
// one section per function or per type family: `cublas<t>gemm()` → `#cublas-t-gemm` (cublasSgemm, …Zgemm,
// Hgemm and the `_v2`/`_64` forms), `cublasI<t>amax()` → `#cublasi-t-amax`, `cublasGemmEx()` → `#cublasgemmex`,
// `cublasLtMatmul()` → `#cublasltmatmul`. 11.8's pages use other anchors (`#cublas-GemmEx`): no anchor there.
const BLAS_TYPE_CODES = ['Sc', 'Dz', 'Cs', 'Zd', 'S', 'D', 'C', 'Z', 'H'];
/** Functions a family section documents under another operation's name (`cublasCdotu` in `<t>dot`). */
const BLAS_SAME_SECTION: Readonly<Record<string, string>> = { dotu: 'dot', dotc: 'dot', geru: 'ger', gerc: 'ger' };
/** Functions with no section we could confirm (not a family, no own heading seen): the page alone. */
const BLAS_UNADDRESSED = /^cublas(Cgemm3mBatched|Cgemm3mStridedBatched|Uint8gemmBias|Xerbla|[HT][SH][HS]gemv\w*|Lt\w*_internal)(_64)?$/;

/** The name a section documents: without the `_v2` and `_64` ABI suffixes (`cublasSgemm_v2_64`). */
const blasBase = (name: string) => name.replace(/(_v2)?(_64)?$/, '');

/** The index prefix and operation of a `cublas<t>op` family member, else undefined: a family has members
 *  of two type codes or more, so `cublasCreate` is no `C` + "reate" and `cublasCsymm` is `C` + "symm". */
function blasFamily(name: string, names: ReadonlySet<string>): { i: string; op: string } | undefined {
  const rest = blasBase(name).replace(/^cublas/, '');
  // the index functions spell their type in lower case (`cublasIsamax`)
  for (const [i, codes] of rest.startsWith('I')
    ? ([
        ['I', ['s', 'd', 'c', 'z']],
        ['', BLAS_TYPE_CODES],
      ] as const)
    : ([['', BLAS_TYPE_CODES]] as const)) {
    for (const code of codes) {
      const raw = rest.slice(i.length);
      if (!raw.startsWith(code) || !/^[a-z]/.test(raw.slice(code.length))) continue;
      const op = BLAS_SAME_SECTION[raw.slice(code.length)] ?? raw.slice(code.length);
      const forms = [op, ...Object.keys(BLAS_SAME_SECTION).filter((k) => BLAS_SAME_SECTION[k] === op)];
      const members = codes.filter((t) => forms.some((o) => names.has(`cublas${i}${t}${o}`) || names.has(`cublas${i}${t}${o}_v2`)));
      if (members.length >= 2) return { i, op };
    }
  }
  return undefined;
}

/** A cuBLAS or cuBLASLt function's anchor on the cuBLAS page (CUDA 12 and later). */
export function cublasAnchor(name: string, release: string, names: ReadonlySet<string>): string | undefined {
  if (releaseNumber(release) < 12000 || BLAS_UNADDRESSED.test(name)) return undefined;
  const family = name.startsWith('cublasLt') ? undefined : blasFamily(name, names);
  return family ? `index.html#cublas${family.i.toLowerCase()}-t-${family.op.toLowerCase()}` : `index.html#${blasBase(name).toLowerCase()}`;
}

export const REFERENCE: Readonly<Record<string, ReferenceScheme>> = {
  driver: { page: 'cuda-driver-api/index.html', archived: true, groups: true },
  runtime: { page: 'cuda-runtime-api/index.html', archived: true, groups: true },
  nvrtc: { page: 'nvrtc/index.html', archived: true },
  nvjitlink: { page: 'nvjitlink/index.html', archived: true },
  nvfatbin: { page: 'nvfatbin/index.html', archived: true },
  cublas: { page: 'cublas/index.html', archived: true, fn: (name, _h, release, names) => cublasAnchor(name, release, names) },
  cublaslt: { page: 'cublas/index.html', archived: true, fn: (name, _h, release, names) => cublasAnchor(name, release, names) },
  cufft: { page: 'cufft/index.html', archived: true },
  curand: { page: 'curand/index.html', archived: true },
  cusolver: { page: 'cusolver/index.html', archived: true },
  cusparse: { page: 'cusparse/index.html', archived: true },
  nvml: { page: 'https://docs.nvidia.com/deploy/nvml-api/index.html', groups: true },
  // CUPTI 13: one folder per CUDA release (`/cupti/13.0.0/api/group__CUPTI__ACTIVITY__API.html`)
  cupti: {
    page: 'https://docs.nvidia.com/cupti/api/index.html',
    groups: true,
    versioned: (release) => (releaseNumber(release) >= 13000 ? `https://docs.nvidia.com/cupti/${release}.0/api/index.html` : undefined),
  },
  cufile: { page: 'https://docs.nvidia.com/gpudirect-storage/api-reference-guide/index.html' },
  // cuDNN 9: one folder per version (`/backend/v9.17.1/`), one page per sub-library, one section per
  // function (`#cudnnsettensornddescriptor`)
  cudnn: {
    page: 'https://docs.nvidia.com/deeplearning/cudnn/backend/latest/api/overview.html',
    versioned: (_release, version) => {
      const t = tripleOf(version, 9);
      return t ? `https://docs.nvidia.com/deeplearning/cudnn/backend/v${t.join('.')}/api/overview.html` : undefined;
    },
    fn: (name, header) => (CUDNN_PAGES[header] ? `cudnn-${CUDNN_PAGES[header]}-library.html#${name.toLowerCase()}` : 'overview.html'),
  },
  // NCCL: one folder per version (`/archives/nccl_2183/` for 2.18.3)
  nccl: {
    page: 'https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/api.html',
    versioned: (_release, version) => {
      const t = tripleOf(version, 2);
      return t ? `https://docs.nvidia.com/deeplearning/nccl/archives/nccl_${t.join('')}/user-guide/docs/api.html` : undefined;
    },
  },
};

/** The root of a CUDA release's archived toolkit documentation ("12.6" → …/cuda/archive/12.6.0/). */
export function toolkitDocsRoot(release: string): string {
  return `https://docs.nvidia.com/cuda/archive/${release}.0/`;
}
