// GPU suites run only where a CUDA driver and a device answer; elsewhere they skip with one reason.
import koffi from 'koffi';

function probe(): string | undefined {
  let lib;
  try {
    lib = koffi.load(process.env.CUDA_TS_DRIVER_LIBRARY ?? 'libcuda.so.1');
  } catch {
    return 'no CUDA driver (libcuda.so.1 not found)';
  }
  const init = lib.func('cuInit', 'int', ['uint32_t']);
  const status = init(0);
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
