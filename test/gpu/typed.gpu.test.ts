// The typed layer's fixed signatures, run for real: outputs returned, arrays with derived counts,
// capacity/count pairs, versioned NVML structs, attribute-typed values, in/out records.
import { closeSync, openSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as cu from '../../generated/13.0/driver';
import * as nvrtc from '../../generated/13.0/nvrtc';
import { addressOf, CudaError } from '../../support';
import { tmaTileKernel } from './fixtures/tma-kernel';
import { describeGpu } from './gpu-env';

// One 8×8 tile of a 16×16 float tensor loaded by the Hopper tensor-memory accelerator through a
// CUtensorMap passed by value (__grid_constant__), then copied out; and a kernel to keep a stream busy.
const TMA_KERNEL = `${tmaTileKernel(0, 0)}extern "C" __global__ void spin(float* x) { x[threadIdx.x] += 1.0f; }
`;

function compile(source: string, arch: string): Uint8Array {
  const prog = nvrtc.nvrtcCreateProgram(source, 'typed.cu', [], null);
  try {
    try {
      nvrtc.nvrtcCompileProgram(prog, [`--gpu-architecture=${arch}`, '-std=c++17']);
    } catch (e) {
      const log = new Uint8Array(nvrtc.nvrtcGetProgramLogSize(prog));
      nvrtc.nvrtcGetProgramLog(prog, log);
      throw new Error(`compile failed: ${new TextDecoder().decode(log)}`);
    }
    const cubin = new Uint8Array(nvrtc.nvrtcGetCUBINSize(prog));
    nvrtc.nvrtcGetCUBIN(prog, cubin);
    return cubin;
  } finally {
    nvrtc.nvrtcDestroyProgram(prog);
  }
}

describeGpu('typed layer on the GPU (issue 11 calls)', () => {
  let ctx: cu.CUcontext;
  let dev: number;
  let mod: cu.CUmodule;
  let arch: string;
  beforeAll(() => {
    cu.cuInit(0);
    dev = cu.cuDeviceGet(0);
    ctx = cu.cuDevicePrimaryCtxRetain(dev);
    cu.cuCtxSetCurrent(ctx);
    const major = cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    const minor = cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    arch = `sm_${major}${minor}${major >= 9 ? 'a' : ''}`;
    mod = cu.cuModuleLoadData(compile(TMA_KERNEL, arch));
  });
  afterAll(() => {
    if (mod) cu.cuModuleUnload(mod);
    // the primary context stays retained: the libraries below (cuFFT through the runtime) use it
  });

  test('cuTensorMapEncodeTiled + cuTensorMapReplaceAddress drive a TMA kernel', () => {
    const n = 16;
    const bytes = n * n * 4;
    const a = cu.cuMemAlloc(bytes);
    const b = cu.cuMemAlloc(bytes);
    const out = cu.cuMemAlloc(64 * 4);
    const hostA = Float32Array.from({ length: n * n }, (_, i) => i);
    const hostB = Float32Array.from({ length: n * n }, (_, i) => -i);
    cu.cuMemcpyHtoD(a, hostA, bytes);
    cu.cuMemcpyHtoD(b, hostB, bytes);
    const map = cu.cuTensorMapEncodeTiled(
      cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
      2,
      a,
      [n, n],
      [n * 4],
      [8, 8],
      [1, 1],
      cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
      cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
      cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
      cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    );
    expect(map).toBeInstanceOf(Uint8Array);
    expect(map.byteLength).toBe(128);
    const fn = cu.cuModuleGetFunction(mod, 'tma_tile');
    const run = (tensorMap: Uint8Array) => {
      const mapArg = new ArrayBuffer(128);
      new Uint8Array(mapArg).set(tensorMap);
      const outArg = BigUint64Array.of(BigInt(out));
      const params = BigUint64Array.of(BigInt(addressOf(mapArg)), BigInt(addressOf(outArg)));
      cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, null, params, null);
      cu.cuCtxSynchronize();
      const got = new Float32Array(64);
      cu.cuMemcpyDtoH(got, out, 64 * 4);
      return got;
    };
    const expected = (host: Float32Array) => Float32Array.from({ length: 64 }, (_, i) => host[Math.floor(i / 8) * n + (i % 8)]);
    expect(Array.from(run(map))).toEqual(Array.from(expected(hostA)));
    const moved = cu.cuTensorMapReplaceAddress(map, b);
    expect(moved).not.toEqual(map); // the address changed inside the opaque map
    expect(Array.from(run(moved))).toEqual(Array.from(expected(hostB)));
    for (const p of [a, b, out]) cu.cuMemFree(p);
  });

  test('cuGraphGetEdges returns 3 edges (capacity asked, then filled)', () => {
    const g = cu.cuGraphCreate(0);
    const root = cu.cuGraphAddEmptyNode(g, []);
    const x = cu.cuGraphAddEmptyNode(g, [root]);
    const y = cu.cuGraphAddEmptyNode(g, [root]);
    const z = cu.cuGraphAddEmptyNode(g, [x]);
    const { from, to, edgeData } = cu.cuGraphGetEdges(g);
    expect(from).toHaveLength(3);
    const edges = from.map((f, i) => `${f}->${to[i]}`).sort();
    expect(edges).toEqual([`${root}->${x}`, `${root}->${y}`, `${x}->${z}`].sort());
    expect(edgeData).toHaveLength(3);
    expect(cu.cuGraphGetNodes(g)).toHaveLength(4);
    expect(cu.cuGraphNodeGetDependencies(z).dependencies).toEqual([x]);
    cu.cuGraphDestroy(g);
  });

  test('cuMemSetAccess takes 2 descriptors (count derived)', () => {
    const prop = {
      type: cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED,
      location: { type: cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, id: dev },
    } as never;
    const gran = cu.cuMemGetAllocationGranularity(prop, cu.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    expect(gran).toBeGreaterThan(0);
    const size = 2 * gran;
    const handle = cu.cuMemCreate(size, prop, 0);
    const va = cu.cuMemAddressReserve(size, 0, 0 as cu.CUdeviceptr, 0);
    cu.cuMemMap(va, size, 0, handle, 0);
    const rw = cu.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    const loc = { type: cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, id: dev };
    // the same device twice: two descriptors reach the driver (a one-record encoding would pass count 1)
    cu.cuMemSetAccess(va, size, [
      { location: loc, flags: rw },
      { location: loc, flags: rw },
    ] as never);
    cu.cuMemsetD32(va, 0x3f800000, size / 4);
    const back = new Float32Array(4);
    cu.cuMemcpyDtoH(back, va, 16);
    expect(Array.from(back)).toEqual([1, 1, 1, 1]);
    expect(() => cu.cuMemSetAccess(va, size, [{ location: { type: 'x' }, flags: rw }] as never)).toThrow(TypeError);
    cu.cuMemUnmap(va, size);
    cu.cuMemAddressFree(va, size);
    cu.cuMemRelease(handle);
  });

  test('cuOccupancyMaxActiveBlocksPerMultiprocessor and cuEventElapsedTime return numbers', () => {
    const fn = cu.cuModuleGetFunction(mod, 'spin');
    const blocks = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, 128, 0);
    expect(typeof blocks).toBe('number');
    expect(blocks).toBeGreaterThan(0);
    const e0 = cu.cuEventCreate(0);
    const e1 = cu.cuEventCreate(0);
    cu.cuEventRecord(e0, null);
    cu.cuEventRecord(e1, null);
    cu.cuEventSynchronize(e1);
    const ms = cu.cuEventElapsedTime(e0, e1);
    expect(typeof ms).toBe('number');
    expect(ms).toBeGreaterThanOrEqual(0);
    cu.cuEventDestroy(e0);
    cu.cuEventDestroy(e1);
  });

  test('cuPointerGetAttributes decodes 3 attributes by their types', () => {
    const p = cu.cuMemAlloc(4096);
    const A = cu.CUpointer_attribute;
    const [context, memoryType, ordinal] = cu.cuPointerGetAttributes(
      [A.CU_POINTER_ATTRIBUTE_CONTEXT, A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, A.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL],
      p,
    );
    expect(context).toBe(ctx);
    expect(memoryType).toBe(cu.CUmemorytype.CU_MEMORYTYPE_DEVICE);
    expect(ordinal).toBe(dev);
    expect(cu.cuPointerGetAttribute(A.CU_POINTER_ATTRIBUTE_RANGE_SIZE, p)).toBeGreaterThanOrEqual(4096);
    cu.cuMemFree(p);
  });

  test('bad input is refused before the driver sees it', () => {
    expect(() => cu.cuMemAlloc(1.5)).toThrow(/cuMemAlloc: bytesize/);
    expect(() => cu.cuStreamSynchronize(-1 as never)).toThrow(/cuStreamSynchronize: hStream/);
    expect(() => cu.cuMemcpyDtoH(new Uint8Array(4), 0 as cu.CUdeviceptr, 4096)).toThrow(RangeError);
    expect(() => cu.cuLaunchKernelEx({ gridDimX: '1' } as never, 0 as never, null, null)).toThrow(TypeError);
  });
});

describeGpu('typed layer: cuFFT, NVML, cuFile', () => {
  test('cufftCreate returns a handle', () => {
    const fft = require('../../generated/13.0/cufft') as typeof import('../../generated/13.0/cufft');
    const plan = fft.cufftCreate();
    expect(typeof plan).toBe('number');
    const size = fft.cufftMakePlan1d(plan, 1024, fft.cufftType_t.CUFFT_C2C, 1);
    expect(typeof size).toBe('number');
    fft.cufftDestroy(plan);
  });

  test('NVML: versioned structs stamped, capacity/count handled', () => {
    const nvml = require('../../generated/13.0/nvml') as typeof import('../../generated/13.0/nvml');
    nvml.nvmlInit();
    try {
      const device = nvml.nvmlDeviceGetHandleByIndex(0);
      const t = nvml.nvmlDeviceGetTemperatureV(device, { sensorType: 0 });
      expect(t.temperature).toBeGreaterThan(0);
      expect(t.temperature).toBeLessThan(120);
      const mem = nvml.nvmlDeviceGetMemoryInfo_v2(device);
      // Any lent GPU (H100 80 GB, H200 141 GB); memory v2's parts add up to its total.
      expect(mem.total).toBeGreaterThan(64 * 2 ** 30);
      expect(Number(mem.used) + Number(mem.free) + Number(mem.reserved)).toBe(Number(mem.total));
      expect(mem.used).toBeLessThanOrEqual(mem.total);
      const clocks = nvml.nvmlDeviceGetSupportedMemoryClocks(device);
      expect(clocks.length).toBeGreaterThan(0);
      expect(clocks[0]).toBeGreaterThan(100);
      const procs = nvml.nvmlDeviceGetComputeRunningProcesses(device);
      expect(Array.isArray(procs)).toBe(true);
      process.stderr.write(
        `nvml: ${t.temperature} C, ${(Number(mem.total) / 2 ** 30).toFixed(1)} GiB, ${clocks.length} memory clocks, ${procs.length} compute processes\n`,
      );
    } finally {
      nvml.nvmlShutdown();
    }
  });

  test('cuFile: register a file descriptor, or a clear error when its driver cannot open', () => {
    const file = require('../../generated/13.0/cufile') as typeof import('../../generated/13.0/cufile');
    const path = join(tmpdir(), `cuda-ts-cufile-${process.pid}`);
    writeFileSync(path, Buffer.alloc(4096, 7));
    const fd = openSync(path, 'r');
    try {
      try {
        file.cuFileDriverOpen();
      } catch (e) {
        expect(e).toBeInstanceOf(CudaError);
        expect((e as Error).message).toMatch(/cuFileDriverOpen failed/);
        process.stderr.write(`cuFile: ${(e as Error).message}\n`);
        return;
      }
      try {
        const handle = file.cuFileHandleRegister({ type: file.CUfileFileHandleType.CU_FILE_HANDLE_TYPE_OPAQUE_FD, handle: { fd } } as never);
        expect(handle).toBeGreaterThan(0);
        file.cuFileHandleDeregister(handle as never);
        process.stderr.write('cuFile: file descriptor registered\n');
      } catch (e) {
        expect(e).toBeInstanceOf(CudaError);
        expect((e as Error).message).toMatch(/cuFileHandleRegister failed/);
        process.stderr.write(`cuFile: ${(e as Error).message}\n`);
      } finally {
        file.cuFileDriverClose();
      }
    } finally {
      closeSync(fd);
      unlinkSync(path);
    }
  });
});
