// What `cuda-ts doctor` found: plain data (the `--json` output), made by probe.ts, judged by
// diagnose.ts and printed by format.ts.
import type { KernelCacheFinding, RuntimeFinding } from './js-runtime';

/** One shared library as found on this machine. */
export interface LibraryFinding {
  /** The cuda-ts module (`driver`, `runtime`, `cublas`, …). */
  module: string;
  /** The file that loaded (resolved through /proc/self/maps when the system loader found it). */
  path?: string;
  /** The soname or path that was asked for. */
  loadedAs?: string;
  /** How it was found: `$CUDA_TS_…_LIBRARY`, `$CUDA_HOME`, `system loader`, `default toolkit`, `python/conda`. */
  how?: string;
  /** The library's own version, as it reports it (`13.0`, `12.9.1`, `9.10.2`), when it has a way to say. */
  version?: string;
  /** Releases under generated/ whose bindings name this library's soname (and need no newer one). */
  fits: string[];
  /** Why nothing loaded, or the override's failure. */
  error?: string;
  /** Sonames asked for, across releases, newest first. */
  sonames: string[];
  /** The environment variable that names this module's library. */
  env: string;
}

/** The CUDA driver (libcuda) and what it supports. */
export interface DriverFinding {
  found: boolean;
  path?: string;
  how?: string;
  /** The newest CUDA version the driver supports (cuDriverGetVersion), `12.4`. */
  cudaVersion?: string;
  /** That version as CUDA_VERSION (12040). */
  cudaVersionNumber?: number;
  /** The driver's own version (`580.82.07`), from NVML or the library's file name. */
  version?: string;
  /** cuInit's status: 0 when the driver initialised. */
  initStatus?: number;
  /** cuInit's status name (`CUDA_ERROR_NO_DEVICE`). */
  initError?: string;
  error?: string;
}

/** One GPU, as the driver and (when present) NVML describe it. */
export interface GpuFinding {
  ordinal: number;
  name: string;
  /** Compute capability, `9.0`. */
  computeCapability?: string;
  /** Total memory in bytes. */
  memoryBytes?: number;
  multiprocessors?: number;
  /** `0000:19:00.0`. */
  pciBusId?: string;
  /** From NVML: MIG mode on, off, or not supported (undefined). */
  mig?: 'enabled' | 'disabled';
  /** From NVML: persistence mode. */
  persistence?: 'enabled' | 'disabled';
}

/** A bindings release installed with cuda-ts (a folder of generated/). */
export interface ReleaseFinding {
  release: string;
  modules: string[];
  /** The oldest driver branch that runs it (`580`), when known. */
  minDriver?: number;
  /** True when the installed driver supports this release. */
  driverRuns?: boolean;
}

/** Something wrong here, and how to fix it. */
export interface Problem {
  /** `error`: CUDA (or a library the user asked for) cannot be used; `warning`: works, with a caveat. */
  severity: 'error' | 'warning';
  message: string;
  fix: string;
}

/** Everything the doctor reports. */
export interface DoctorReport {
  /** The package's version, the platform and, under Node only, Node's version (`process.version`; Bun and
   *  Deno report one of their own, so `runtime` names the runtime). */
  cudaTs: { version?: string; node?: string; platform: string };
  driver: DriverFinding;
  gpus: GpuFinding[];
  releases: ReleaseFinding[];
  libraries: LibraryFinding[];
  /** The variables that change where cuda-ts looks or what it binds, as set in this process. */
  environment: Record<string, string>;
  /** NVML's view, when libnvidia-ml loaded. */
  nvml?: { version?: string; error?: string };
  /** The JavaScript runtime and the FFI the bindings use there (./runtime). */
  runtime?: RuntimeFinding;
  /** The on-disk kernel cache: where, whether on, how big (./runtime). */
  kernelCache?: KernelCacheFinding;
  problems: Problem[];
  /** True when the driver initialised and at least one GPU is visible to a release installed here. */
  usable: boolean;
}
