// Which release of each CUDA library the objects layer loads. This is the only file of src/ that
// names a `generated/<release>` folder (test/door.test.ts checks it): MAKING ANOTHER RELEASE THE
// DEFAULT IS A CHANGE TO THIS FILE ALONE (the paths below and the *_RELEASE constants).
//
// The driver is bound at import (src/driver.ts, the door, is its only user: the driver names below
// are for it). NVRTC, nvJitLink, NCCL and NVML load on first use through the loaders below, never at import:
// importing cuda-ts/objects must not load them (bench/import.ts measures it). Their `import type`
// lines cost nothing at run time; NCCL's enums (types only, no library) load at import as before.

// The driver: DriverError and the binder from their own files (the typed layer's entry, hundreds of
// stubs, is not loaded); the raw layer for the door's few C-exact callers; its types, enums, constants.
export { DriverError } from '../generated/13.0/driver/typed/shared';
export * as driverRaw from '../generated/13.0/driver/raw';
export { binder as driverBinder } from '../generated/13.0/driver/binding';
export * from '../generated/13.0/driver/types';

import type * as NvrtcApi from '../generated/13.0/nvrtc';
import type * as NvJitLinkApi from '../generated/13.0/nvjitlink';
import type * as NcclApi from '../generated/13.0/nccl';
import type * as NcclRawApi from '../generated/13.0/nccl/raw';
import type * as NvmlApi from '../generated/13.0/nvml';
import type * as CublasApi from '../generated/13.0/cublas';
import type * as CublasLtApi from '../generated/13.0/cublaslt';
import type * as CufftApi from '../generated/13.0/cufft';
import type * as CurandApi from '../generated/13.0/curand';
import type * as CusparseApi from '../generated/13.0/cusparse';
import type * as CusolverApi from '../generated/13.0/cusolver';
import type * as CudnnApi from '../generated/13.0/cudnn';

/** NCCL's enums and constants (no library load: types only). */
export * as ncclTypes from '../generated/13.0/nccl/types';

/** NVRTC's typed layer, as a type namespace (`import type { nvrtc } from './releases'`). */
export type * as nvrtc from '../generated/13.0/nvrtc';
/** nvJitLink's typed layer, as a type namespace. */
export type * as nvjitlink from '../generated/13.0/nvjitlink';
/** NCCL's typed layer, as a type namespace. */
export type * as nccl from '../generated/13.0/nccl';
/** NCCL's raw layer, as a type namespace. */
export type * as ncclRaw from '../generated/13.0/nccl/raw';
/** NVML's typed layer, as a type namespace. */
export type * as nvml from '../generated/13.0/nvml';

/** cuBLAS's typed layer, as a type namespace. */
export type * as cublas from '../generated/13.0/cublas';
/** cuBLASLt's typed layer, as a type namespace. */
export type * as cublaslt from '../generated/13.0/cublaslt';
/** cuFFT's typed layer, as a type namespace. */
export type * as cufft from '../generated/13.0/cufft';
/** cuRAND's typed layer, as a type namespace. */
export type * as curand from '../generated/13.0/curand';
/** cuSPARSE's typed layer, as a type namespace. */
export type * as cusparse from '../generated/13.0/cusparse';
/** cuSOLVER's typed layer, as a type namespace. */
export type * as cusolver from '../generated/13.0/cusolver';
/** cuDNN's typed layer, as a type namespace. */
export type * as cudnn from '../generated/13.0/cudnn';

/** The CUDA release whose driver ABI the objects layer calls. */
export const DRIVER_RELEASE = '13.0';
/** The release of the NVRTC bindings {@link loadNvrtc} loads. */
export const NVRTC_RELEASE = '13.0';
/**
 * NVRTC's library as its generated binder finds it (the spec in generated/13.0/nvrtc/binding.ts, which
 * test/kernel-cache.test.ts compares with this): the kernel cache resolves the file from it without
 * loading NVRTC, so a cache hit needs no libnvrtc.
 */
export const NVRTC_LIBRARY = { module: 'nvrtc', sonames: ['libnvrtc.so.13'], env: 'CUDA_TS_NVRTC_LIBRARY' } as const;
/** The release of the nvJitLink bindings {@link loadNvJitLink} loads. */
export const NVJITLINK_RELEASE = '13.0';
/** The release of the NCCL bindings {@link loadNccl} and {@link loadNcclRaw} load. */
export const NCCL_RELEASE = '13.0';
/** The release of the NVML bindings {@link loadNvml} loads. */
export const NVML_RELEASE = '13.0';
/** The release of the math libraries' bindings (cuBLAS, cuBLASLt, cuFFT, cuRAND, cuSPARSE, cuSOLVER, cuDNN) src/math loads. */
export const MATH_RELEASE = '13.0';

// Each loader `require`s its module on first use (a literal path, so bundlers and tsc see it).
/** `load`'s result, made on the first call and kept. */
function once<T>(load: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= load());
}
/** NVRTC's typed layer, loaded on first use. */
export const loadNvrtc = once(() => require('../generated/13.0/nvrtc') as typeof NvrtcApi);
/** nvJitLink's typed layer, loaded on first use. */
export const loadNvJitLink = once(() => require('../generated/13.0/nvjitlink') as typeof NvJitLinkApi);
/** NCCL's typed layer, loaded on first use. */
export const loadNccl = once(() => require('../generated/13.0/nccl') as typeof NcclApi);
/** NCCL's raw layer, loaded on first use. */
export const loadNcclRaw = once(() => require('../generated/13.0/nccl/raw') as typeof NcclRawApi);
/** NVML's typed layer (libnvidia-ml), loaded on first use (src/system.ts is its user). */
export const loadNvml = once(() => require('../generated/13.0/nvml') as typeof NvmlApi);
// The math libraries (src/math): each typed layer is required on the object's first use; the library
// itself loads on its first call (the generated binder is lazy), so `import` costs nothing.
/** cuBLAS's typed layer, loaded on first use. */
export const loadCublas = once(() => require('../generated/13.0/cublas') as typeof CublasApi);
/** cuBLASLt's typed layer, loaded on first use. */
export const loadCublasLt = once(() => require('../generated/13.0/cublaslt') as typeof CublasLtApi);
/** cuFFT's typed layer, loaded on first use. */
export const loadCufft = once(() => require('../generated/13.0/cufft') as typeof CufftApi);
/** cuRAND's typed layer, loaded on first use. */
export const loadCurand = once(() => require('../generated/13.0/curand') as typeof CurandApi);
/** cuSPARSE's typed layer, loaded on first use. */
export const loadCusparse = once(() => require('../generated/13.0/cusparse') as typeof CusparseApi);
/** cuSOLVER's typed layer, loaded on first use. */
export const loadCusolver = once(() => require('../generated/13.0/cusolver') as typeof CusolverApi);
/** cuDNN's typed layer, loaded on first use. */
export const loadCudnn = once(() => require('../generated/13.0/cudnn') as typeof CudnnApi);
