// A small CUDA toolkit this project writes itself: a handful of driver and NVRTC declarations of our own
// (names and signatures only, no NVIDIA text; two doc comments in our own words, shaped as the headers
// shape theirs, for `--docs`), enough for the generator's plumbing — layouts (a toolkit,
// NVIDIA's pip wheels), a release read from CUDA_VERSION, --out trees — to run in any clone, with no
// header set beside the repository. The tests that need NVIDIA's real headers skip without them
// (see `nvidiaHeaders`).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The release a synthetic toolkit declares by default: newer than any the catalog stores. */
export const SYNTHETIC_RELEASE = '13.5';

/** The functions the synthetic driver declares, as the IR names them (macro-renamed ones by their C name). */
export const SYNTHETIC_DRIVER_FUNCTIONS = [
  'cuInit',
  'cuDriverGetVersion',
  'cuGetErrorString',
  'cuDeviceGet',
  'cuDeviceGetCount',
  'cuMemAlloc',
  'cuMemFree',
  'cuSyntheticHint',
  'cuProfilerStart',
] as const;

/** The function only a release newer than any stored declares (asked of cuGetProcAddress at its version). */
export const SYNTHETIC_NEW_FUNCTION = 'cuSyntheticHint';

function cudaH(version: number): string {
  return `#ifndef SYNTHETIC_CUDA_H
#define SYNTHETIC_CUDA_H
#include <stddef.h>
#define CUDA_VERSION ${version}
#define CUDAAPI
#define CU_SYNTHETIC_FLAG 4
typedef unsigned long long CUdeviceptr_v2;
typedef CUdeviceptr_v2 CUdeviceptr;
typedef int CUdevice_v1;
typedef CUdevice_v1 CUdevice;
typedef struct CUctx_st *CUcontext;
typedef enum cudaError_enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_UNKNOWN = 999
} CUresult;
typedef struct CUsynthetic_desc_st {
  size_t bytes;
  unsigned int flags;
} CUsynthetic_desc;
#define cuMemAlloc cuMemAlloc_v2
#define cuMemFree cuMemFree_v2
CUresult CUDAAPI cuInit(unsigned int flags);
/**
 * \\brief Tells which synthetic release this is.
 *
 * \\return ::CUDA_SUCCESS when the number was written
 * \\return ::CUDA_ERROR_INVALID_VALUE when there was nowhere to write it
 * \\sa ::cuInit,
 * ::cuDeviceGetCount
 */
CUresult CUDAAPI cuDriverGetVersion(int *version);
CUresult CUDAAPI cuGetErrorString(CUresult status, const char **text);
CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal);
/**
 * \\brief Counts the synthetic devices.
 *
 * \\return
 *   - \\link #CUresult CUDA_SUCCESS \\endlink
 *   - \\link #CUresult CUDA_ERROR_NOT_INITIALIZED\\endlink
 *   - \\link #CUresult CUDA_ERROR_NO_DEVICE\\endlink
 *
 * Zero devices is an answer too, see \\ref cuDeviceGet.
 *
 * \\see cuDeviceGet
 */
CUresult CUDAAPI cuDeviceGetCount(int *count);
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytes);
CUresult CUDAAPI cuMemFree(CUdeviceptr dptr);
CUresult CUDAAPI cuSyntheticHint(CUdeviceptr dptr, const CUsynthetic_desc *desc);
#endif
`;
}

function cudaTypedefsH(version: number): string {
  return `#ifndef SYNTHETIC_CUDA_TYPEDEFS_H
#define SYNTHETIC_CUDA_TYPEDEFS_H
#include <cuda.h>
typedef CUresult (CUDAAPI *PFN_cuInit_v2000)(unsigned int flags);
typedef CUresult (CUDAAPI *PFN_cuDriverGetVersion_v2020)(int *version);
typedef CUresult (CUDAAPI *PFN_cuGetErrorString_v6000)(CUresult status, const char **text);
typedef CUresult (CUDAAPI *PFN_cuDeviceGet_v2000)(CUdevice_v1 *device, int ordinal);
typedef CUresult (CUDAAPI *PFN_cuDeviceGetCount_v2000)(int *count);
typedef CUresult (CUDAAPI *PFN_cuMemAlloc_v3020)(CUdeviceptr_v2 *dptr, size_t bytes);
typedef CUresult (CUDAAPI *PFN_cuMemFree_v3020)(CUdeviceptr_v2 dptr);
typedef CUresult (CUDAAPI *PFN_cuSyntheticHint_v${version})(CUdeviceptr_v2 dptr, const CUsynthetic_desc *desc);
#endif
`;
}

const NVRTC_H = `#ifndef SYNTHETIC_NVRTC_H
#define SYNTHETIC_NVRTC_H
#include <stddef.h>
typedef enum { NVRTC_SUCCESS = 0, NVRTC_ERROR_OUT_OF_MEMORY = 1, NVRTC_ERROR_INVALID_INPUT = 3 } nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;
const char *nvrtcGetErrorString(nvrtcResult result);
nvrtcResult nvrtcVersion(int *major, int *minor);
nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t *ptxSizeRet);
#endif
`;

const PROFILER_H = `#ifndef SYNTHETIC_CUDA_PROFILER_H
#define SYNTHETIC_CUDA_PROFILER_H
#include <cuda.h>
CUresult CUDAAPI cuProfilerStart(void);
#endif
`;

const PROFILER_TYPEDEFS_H = `#ifndef SYNTHETIC_CUDA_PROFILER_TYPEDEFS_H
#define SYNTHETIC_CUDA_PROFILER_TYPEDEFS_H
#include <cudaProfiler.h>
typedef CUresult (CUDAAPI *PFN_cuProfilerStart_v4000)(void);
#endif
`;

export interface SyntheticOptions {
  /** The release written into CUDA_VERSION (default {@link SYNTHETIC_RELEASE}). */
  release?: string;
  /** `toolkit`: DIR/include (with the profiler header); `pip`: DIR is a site-packages holding
   *  nvidia/cu<major>/include (no profiler header, as NVIDIA's wheels) and the wheels' dist-info folders. */
  layout?: 'toolkit' | 'pip';
  /** pip only: the release of the NVRTC wheel, when it differs (NVIDIA ships components separately). */
  nvrtcWheel?: string;
}

/** Writes the synthetic toolkit into `dir`; returns the folder to give `--toolkit`. */
export function writeSyntheticToolkit(dir: string, options: SyntheticOptions = {}): string {
  const release = options.release ?? SYNTHETIC_RELEASE;
  const [major, minor] = release.split('.').map(Number);
  const version = major * 1000 + minor * 10;
  const include = options.layout === 'pip' ? join(dir, 'nvidia', `cu${major}`, 'include') : join(dir, 'include');
  mkdirSync(include, { recursive: true });
  writeFileSync(join(include, 'cuda.h'), cudaH(version));
  writeFileSync(join(include, 'cudaTypedefs.h'), cudaTypedefsH(version));
  writeFileSync(join(include, 'nvrtc.h'), NVRTC_H);
  if (options.layout === 'pip') {
    mkdirSync(join(dir, `nvidia_cuda_runtime_cu${major}-${release}.1.dist-info`), { recursive: true });
    mkdirSync(join(dir, `nvidia_cuda_nvrtc_cu${major}-${options.nvrtcWheel ?? release}.2.dist-info`), { recursive: true });
  } else {
    writeFileSync(join(include, 'cudaProfiler.h'), PROFILER_H);
    writeFileSync(join(include, 'cudaProfilerTypedefs.h'), PROFILER_TYPEDEFS_H);
  }
  return dir;
}

/** NVIDIA's 13.0 header set beside the repository (../shared/cuda-headers), when this clone has it. */
export const NVIDIA_HEADERS_13_0 = join(__dirname, '..', '..', '..', 'shared', 'cuda-headers', 'cuda-13.0.tar.gz');

/** `describe` when NVIDIA's headers are beside the repository, else a describe.skip saying why in one line. */
export function describeWithNvidiaHeaders(name: string, body: () => void): void {
  if (existsSync(NVIDIA_HEADERS_13_0)) describe(name, body);
  else describe.skip(`${name} — skipped: needs NVIDIA's headers at ../shared/cuda-headers/cuda-13.0.tar.gz (absent in this clone)`, body);
}
