// The module catalog: the one place that knows CUDA's libraries — which headers each module parses,
// which symbols belong to it, which shared libraries export them and how its status codes read.
// Generated code receives these facts as data; nothing else hard-codes CUDA libraries.

export interface StatusSpec {
  /** The C type functions return as status (`CUresult`). */
  type: string;
  success: string;
  /** Error class name thrown by the typed layer; it extends CudaError. */
  errorClass: string;
  /** How to get a readable message from the library: `return` = `const char* f(status)`,
   *  `out` = `status f(status, const char** out)`. */
  describe?: { fn: string; style: 'return' | 'out' };
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
  /** Library sonames by CUDA major release, newest-compatible first. */
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
  /** Functions the headers declare but the library does not export (known from the real libraries):
   *  generated, documented as such, and raising CudaSymbolError when called. */
  notExported?: string[];
  /** Name prefixes of declarations in own headers that are not part of the API (internal, deprecated). */
  excludePrefixes?: string[];
  /** Parameters whose direction the heuristics get wrong: `fn.param` → `in` (array/pointer input) or `out`. */
  paramOverrides?: Record<string, 'in' | 'out' | 'inout'>;
}

const driverAnswers = ['CUDA_ERROR_NOT_READY'];
const runtimeAnswers = ['cudaErrorNotReady'];

export const MODULES: readonly ModuleSpec[] = [
  {
    name: 'driver',
    title: 'CUDA driver API',
    includes: ['cuda.h', 'cudaProfiler.h'],
    ownHeaders: ['cuda.h', 'cudaProfiler.h'],
    prefixes: ['cu'],
    macroPrefixes: ['CU_', 'CUDA_', 'MAX_PLANES'],
    versionMacro: 'CUDA_VERSION',
    sonames: { '12': ['libcuda.so.1', 'libcuda.so'], '13': ['libcuda.so.1', 'libcuda.so'] },
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
    paramOverrides: {
      'cuLaunchKernel.kernelParams': 'in',
      'cuLaunchKernel.extra': 'in',
      'cuLaunchCooperativeKernel.kernelParams': 'in',
      'cuLaunchKernelEx.kernelParams': 'in',
      'cuLaunchKernelEx.extra': 'in',
    },
  },
  {
    name: 'runtime',
    title: 'CUDA runtime API',
    includes: ['cuda_runtime_api.h', 'cuda_profiler_api.h'],
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
    sonames: { '12': ['libcudart.so.12'], '13': ['libcudart.so.13'] },
    env: 'CUDA_TS_RUNTIME_LIBRARY',
    resolve: 'symbol',
    status: {
      type: 'cudaError_t',
      success: 'cudaSuccess',
      errorClass: 'RuntimeError',
      describe: { fn: 'cudaGetErrorString', style: 'return' },
      answers: { cudaStreamQuery: runtimeAnswers, cudaEventQuery: runtimeAnswers },
    },
    paramOverrides: {
      'cudaLaunchKernel.args': 'in',
      'cudaLaunchCooperativeKernel.args': 'in',
    },
  },
  {
    name: 'nvrtc',
    title: 'NVRTC runtime compilation API',
    includes: ['nvrtc.h'],
    ownHeaders: ['nvrtc.h'],
    prefixes: ['nvrtc'],
    macroPrefixes: ['NVRTC_'],
    sonames: { '12': ['libnvrtc.so.12'], '13': ['libnvrtc.so.13'] },
    env: 'CUDA_TS_NVRTC_LIBRARY',
    resolve: 'symbol',
    status: {
      type: 'nvrtcResult',
      success: 'NVRTC_SUCCESS',
      errorClass: 'NvrtcError',
      describe: { fn: 'nvrtcGetErrorString', style: 'return' },
    },
    paramOverrides: { 'nvrtcDestroyProgram.prog': 'inout', 'nvrtcGetNumSupportedArchs.numArchs': 'out' },
  },
  {
    name: 'nvjitlink',
    title: 'nvJitLink JIT linker API',
    includes: ['nvJitLink.h'],
    ownHeaders: ['nvJitLink.h'],
    prefixes: ['nvJitLink'],
    macroPrefixes: ['NVJITLINK_'],
    sonames: { '12': ['libnvJitLink.so.12'], '13': ['libnvJitLink.so.13'] },
    env: 'CUDA_TS_NVJITLINK_LIBRARY',
    resolve: 'symbol',
    status: { type: 'nvJitLinkResult', success: 'NVJITLINK_SUCCESS', errorClass: 'NvJitLinkError' },
    paramOverrides: { 'nvJitLinkDestroy.handle': 'inout' },
  },
];

export function findModule(name: string): ModuleSpec | undefined {
  return MODULES.find((m) => m.name === name);
}

/** CUDA release → the oldest Linux driver that supports it (for "needs driver ≥ N" messages). */
export const MIN_DRIVER: Record<string, number> = {
  '12.0': 525, '12.1': 530, '12.2': 535, '12.3': 545, '12.4': 550, '12.5': 555,
  '12.6': 560, '12.8': 570, '12.9': 575, '13.0': 580, '13.1': 590,
};
