// The generated driver and runtime bindings on a real GPU (the H200), through 13.0 and 12.6-pinned modules.
import * as cu from '../../generated/13.0/driver';
import * as cu126 from '../../generated/12.6/driver';
import * as rt from '../../generated/13.0/runtime';
import { CudaError, HostCallbackPendingError, hostCallbacks } from '../../support';
import { describeGpu } from './gpu-env';

type Driver = typeof cu | typeof cu126;

function roundTrip(d: Driver, bytes: number): void {
  const dev = d.cuDeviceGet(0);
  const ctx = d.cuDevicePrimaryCtxRetain(dev);
  try {
    d.cuCtxSetCurrent(ctx);
    const ptr = d.cuMemAlloc(bytes);
    try {
      const src = new Float32Array(bytes / 4).map((_, i) => i * 0.5);
      const back = new Float32Array(bytes / 4);
      d.cuMemcpyHtoD(ptr, src, bytes);
      d.cuMemsetD8(ptr, 0, 0); // zero bytes: a no-op that must still succeed
      d.cuMemcpyDtoH(back, ptr, bytes);
      expect(back).toEqual(src);
    } finally {
      d.cuMemFree(ptr);
    }
  } finally {
    d.cuDevicePrimaryCtxRelease(dev);
  }
}

describeGpu('driver API, CUDA 13.0 bindings', () => {
  beforeAll(() => cu.cuInit(0));
  test('device count, name, compute capability, memory', () => {
    expect(cu.cuDeviceGetCount()).toBeGreaterThanOrEqual(1);
    const dev = cu.cuDeviceGet(0);
    const name = cu.cuDeviceGetName(256, dev);
    console.log(`device 0: ${name}`);
    expect(name).toMatch(/H200/);
    const major = cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    const minor = cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    expect([major, minor]).toEqual([9, 0]);
    expect(cu.cuDeviceTotalMem(dev)).toBeGreaterThan(100 * 2 ** 30);
    expect(cu.cuDriverGetVersion()).toBeGreaterThanOrEqual(13000);
  });
  test('allocate, copy both ways, free', () => roundTrip(cu, 1 << 20));
  test('handles and device pointers are numbers', () => {
    const dev = cu.cuDeviceGet(0);
    const ctx = cu.cuDevicePrimaryCtxRetain(dev);
    cu.cuCtxSetCurrent(ctx);
    const stream = cu.cuStreamCreate(cu.CUstream_flags.CU_STREAM_NON_BLOCKING);
    expect(typeof stream).toBe('number');
    expect(cu.cuStreamQuery(stream)).toBe(cu.CUresult.CUDA_SUCCESS);
    const p = cu.cuMemAlloc(256);
    expect(typeof p).toBe('number');
    expect(Number.isSafeInteger(p)).toBe(true);
    cu.cuMemFree(p);
    cu.cuStreamDestroy(stream);
    cu.cuDevicePrimaryCtxRelease(dev);
  });
  test('cuLaunchHostFunc with a JS function: blocking calls refuse while it is pending, polling returns', async () => {
    const dev = cu.cuDeviceGet(0);
    const ctx = cu.cuDevicePrimaryCtxRetain(dev);
    cu.cuCtxSetCurrent(ctx);
    const stream = cu.cuStreamCreate(cu.CUstream_flags.CU_STREAM_NON_BLOCKING);
    const ptr = cu.cuMemAlloc(64 << 20);
    try {
      const ran: number[] = [];
      cu.cuMemsetD8Async(ptr, 1, 64 << 20, stream);
      cu.cuLaunchHostFunc(stream, () => ran.push(1), null);
      cu.cuLaunchHostFunc(stream, () => ran.push(2), null);
      // these would never return (the callbacks run on this event loop): refused, not hung
      expect(() => cu.cuStreamSynchronize(stream)).toThrow(HostCallbackPendingError);
      expect(() => cu.cuCtxSynchronize()).toThrow(HostCallbackPendingError);
      const deadline = Date.now() + 30_000;
      while (cu.cuStreamQuery(stream) !== cu.CUresult.CUDA_SUCCESS || hostCallbacks.pending !== 0) {
        if (Date.now() > deadline) throw new Error('host functions did not run within 30 s');
        await new Promise((r) => setTimeout(r, 1));
      }
      expect(ran).toEqual([1, 2]);
      cu.cuStreamSynchronize(stream); // safe again
    } finally {
      cu.cuMemFree(ptr);
      cu.cuStreamDestroy(stream);
      cu.cuDevicePrimaryCtxRelease(dev);
    }
  });
  test('a failing call throws DriverError with name, code, message and function', () => {
    let error: unknown;
    try {
      cu.cuDeviceGet(9999);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CudaError);
    expect(error).toBeInstanceOf(cu.DriverError);
    expect((error as CudaError).name).toBe('CUDA_ERROR_INVALID_DEVICE');
    expect((error as CudaError).func).toBe('cuDeviceGet');
    expect((error as CudaError).message).toMatch(/cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE \(101\): .+/);
  });
  test('aliases: cuGraphInstantiate is cuGraphInstantiateWithFlags', () => {
    expect(cu.cuGraphInstantiate).toBe(cu.cuGraphInstantiateWithFlags);
  });
});

describeGpu('driver API, 12.6-pinned bindings on the 13.0 driver', () => {
  beforeAll(() => cu126.cuInit(0));
  test('pinned release and the same device facts', () => {
    expect(cu126.CUDA_RELEASE).toBe('12.6');
    const dev = cu126.cuDeviceGet(0);
    expect(cu126.cuDeviceGetName(256, dev)).toMatch(/H200/);
    expect(cu126.cuDeviceTotalMem(dev)).toBeGreaterThan(100 * 2 ** 30);
  });
  test('allocate, copy both ways, free', () => roundTrip(cu126, 1 << 20));
});

describeGpu('runtime API, CUDA 13.0 bindings', () => {
  test('device count and properties', () => {
    expect(rt.cudaGetDeviceCount()).toBeGreaterThanOrEqual(1);
    const prop = rt.cudaGetDeviceProperties(0);
    expect(prop.name).toMatch(/H200/);
    expect([prop.major, prop.minor]).toEqual([9, 0]);
    expect(Number(prop.totalGlobalMem)).toBeGreaterThan(100 * 2 ** 30);
  });
  test('malloc, memcpy, free', () => {
    const p = rt.cudaMalloc(4096);
    const src = new Uint8Array(4096).map((_, i) => i & 255);
    const back = new Uint8Array(4096);
    rt.cudaMemcpy(p, src, 4096, rt.cudaMemcpyKind.cudaMemcpyHostToDevice);
    rt.cudaMemcpy(back, p, 4096, rt.cudaMemcpyKind.cudaMemcpyDeviceToHost);
    expect(back).toEqual(src);
    rt.cudaFree(p);
  });
});
