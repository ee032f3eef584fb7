// The generated driver and runtime bindings on a real GPU (any lent H100 or H200), through 13.0 and 12.6-pinned
// modules. nvidia-smi (NVML, not our bindings) says what device 0 is.
import { execFileSync } from 'node:child_process';
import * as cu from '../../generated/13.0/driver';
import * as cu126 from '../../generated/12.6/driver';
import * as rt from '../../generated/13.0/runtime';
import { CudaError, HostCallbackPendingError, hostCallbacks } from '../../support';
import { describeGpu } from './gpu-env';

type Driver = typeof cu | typeof cu126;

interface SmiFacts {
  name: string;
  /** Total memory, MiB. */
  memoryMiB: number;
  capability: [number, number];
}

/** nvidia-smi's facts of the GPU at `busId` (as cuDeviceGetPCIBusId writes it). */
function smiFacts(busId: string): SmiFacts {
  const out = execFileSync('nvidia-smi', ['--query-gpu=pci.bus_id,name,memory.total,compute_cap', '--format=csv,noheader,nounits'], { encoding: 'utf8' });
  // nvidia-smi writes an 8-digit PCI domain (00000000:19:00.0), the driver 4 (0000:19:00.0)
  const key = (id: string): string =>
    id
      .trim()
      .toLowerCase()
      .replace(/^0+(?=[0-9a-f]{4}:)/, '');
  const line = out.split('\n').find((l) => l.includes(',') && key(l.split(',')[0]) === key(busId));
  if (line === undefined) throw new Error(`nvidia-smi lists no GPU at ${busId}:\n${out}`);
  const [, name, mem, cap] = line.split(',').map((f) => f.trim());
  const [major, minor] = cap.split('.').map(Number);
  return { name, memoryMiB: Number(mem), capability: [major, minor] };
}

/** CUDA's total (bytes) is nvidia-smi's framebuffer total less what the driver reserves (~0.6% on an H100). */
function expectTotalOf(bytes: number, smi: SmiFacts): void {
  const mib = bytes / 2 ** 20;
  expect(mib).toBeLessThanOrEqual(smi.memoryMiB);
  expect(mib).toBeGreaterThan(0.97 * smi.memoryMiB);
}

/** Device 0's facts from nvidia-smi, found by the PCI bus id the 13.0 driver bindings give. */
function device0(): SmiFacts {
  cu.cuInit(0);
  return smiFacts(cu.cuDeviceGetPCIBusId(32, cu.cuDeviceGet(0)));
}

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
    const smi = device0();
    expect(name).toBe(smi.name);
    const major = cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    const minor = cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    expect([major, minor]).toEqual(smi.capability);
    expectTotalOf(cu.cuDeviceTotalMem(dev), smi);
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
    const smi = device0();
    expect(cu126.cuDeviceGetName(256, dev)).toBe(smi.name);
    expectTotalOf(cu126.cuDeviceTotalMem(dev), smi);
  });
  test('allocate, copy both ways, free', () => roundTrip(cu126, 1 << 20));
});

describeGpu('runtime API, CUDA 13.0 bindings', () => {
  test('device count and properties', () => {
    expect(rt.cudaGetDeviceCount()).toBeGreaterThanOrEqual(1);
    const prop = rt.cudaGetDeviceProperties(0);
    const smi = device0();
    expect(prop.name).toBe(smi.name);
    expect([prop.major, prop.minor]).toEqual(smi.capability);
    expectTotalOf(Number(prop.totalGlobalMem), smi);
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
