// GPU suites run only where a CUDA driver and a device answer; elsewhere they skip with one reason.
import { loadLibrary } from '../../support';

function probe(): string | undefined {
  let lib;
  try {
    // the same search the driver bindings use (CUDA_TS_DRIVER_LIBRARY, CUDA_HOME, the loader, …)
    lib = loadLibrary({ module: 'driver', sonames: ['libcuda.so.1', 'libcuda.so'], env: 'CUDA_TS_DRIVER_LIBRARY' });
  } catch {
    return 'no CUDA driver (libcuda.so.1 not found)';
  }
  const status = lib.func('cuInit', 'int', ['uint32_t'])(0);
  if (status !== 0) return `cuInit failed with CUresult ${status}`;
  const count = new Int32Array(1);
  lib.func('cuDeviceGetCount', 'int', ['void *'])(count);
  return count[0] > 0 ? undefined : 'no CUDA device';
}

/** Why GPU tests cannot run here, or undefined when they can. */
export const noGpuReason = probe();
if (noGpuReason) process.stderr.write(`GPU tests skipped: ${noGpuReason}\n`);

/** `describe` that runs on a GPU machine and otherwise skips with its reason in the title. */
export const describeGpu = (name: string, fn: () => void): void => {
  if (noGpuReason) describe.skip(`${name} — skipped: ${noGpuReason}`, fn);
  else describe(name, fn);
};
