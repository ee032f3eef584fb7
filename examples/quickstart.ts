// Quick start: what the generated bindings see on this machine. Runs with or without a GPU.
import * as cu from '../generated/13.0/driver';
import * as rt from '../generated/13.0/runtime';
import { CudaError } from '../support';

function main(): void {
  console.log(`cuda-ts bindings generated from CUDA ${cu.CUDA_RELEASE} headers`);
  try {
    console.log(`libcudart: CUDA runtime ${rt.cudaRuntimeGetVersion()}`);
  } catch (e) {
    console.log(`libcudart: not usable here (${(e as Error).message.split('\n')[0]})`);
  }
  try {
    cu.cuInit(0);
    const n = cu.cuDeviceGetCount();
    console.log(`driver: CUDA ${cu.cuDriverGetVersion()}, ${n} device(s)`);
    for (let i = 0; i < n; i++) {
      const dev = cu.cuDeviceGet(i);
      const major = cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
      const minor = cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
      console.log(`  ${i}: ${cu.cuDeviceGetName(256, dev)}, sm_${major}${minor}, ${(cu.cuDeviceTotalMem(dev) / 2 ** 30).toFixed(1)} GiB`);
    }
  } catch (e) {
    const why = e instanceof CudaError ? e.message.split('\n')[0] : String(e);
    console.log(`no GPU here: ${why}`);
  }
}
main();
