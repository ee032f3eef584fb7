// Issue 28 without a GPU: the system object (NVML faked through its seam), pointer introspection,
// multi-device virtual memory, per-copy batch attributes, graph memory, pageable 'ptr' arguments,
// strided views and DLPack. The driver is the shared fake; "device memory" is real host memory from
// koffi where a test reads it back, so gathers and DLPack round trips are checked on real bytes.
import koffi from 'koffi';
import * as drv from '../src/driver';
import { CudaError } from '../support';
import { NvmlUnavailableError, provideNvml, system, type NvmlApi } from '../src/system';
import { pointerInfo } from '../src/memory/pointer-info';
import { PhysicalMemory, VirtualAddressRange } from '../src/memory/virtual-range';
import { copyBatch, provideDriverVersion } from '../src/memory/copy-batch';
import { graphMemoryStats, resetGraphMemoryHighWatermarks, trimGraphMemory } from '../src/graph/graph-memory';
import { ArgPack, forgetPageableAccess } from '../src/kernel-args';
import { DeviceBuffer } from '../src/memory/device-buffer';
import { StridedView } from '../src/memory/strided-view';
import { DLPACK_VERSION, dlpackExportsAlive, fromDLPack, toDLPack } from '../src/memory/dlpack';
import { Stream } from '../src/stream';
import { fakeContext, fakeDriver, out, type FakeFn } from './helpers/fake-driver';

const ctx = fakeContext(0xc0, 0);

/** Real host memory standing in for device memory (kept until the test file ends). */
const blocks: unknown[] = [];
function hostMemory(bytes: number): number {
  const p = koffi.alloc('uint8_t', bytes);
  blocks.push(p);
  return Number(koffi.address(p));
}
afterAll(() => blocks.forEach((b) => koffi.free(b)));

/** A synchronous device-to-host copy over host memory standing in for device memory. */
const memcpyDtoH: FakeFn = (dst: Uint8Array, src: number, n: number) => {
  new Uint8Array(dst.buffer, dst.byteOffset, n).set(new Uint8Array(koffi.view(src, n)));
  return 0;
};

// ---------------------------------------------------------------------------------------------
// 1. system
// ---------------------------------------------------------------------------------------------

class FakeNvmlError extends CudaError {
  constructor(func: string, code: number) {
    super('nvml', func, code, `NVML_ERROR_${code}`);
  }
}

/** A two-GPU NVML whose second GPU has no fan and no power reading; every call is logged. */
function fakeNvml(log: string[]): NvmlApi {
  const R = { NVML_ERROR_NOT_SUPPORTED: 3, NVML_ERROR_FUNCTION_NOT_FOUND: 13, NVML_ERROR_NO_PERMISSION: 4 };
  // a fake of any NVML function: its arguments are whatever that function takes
  /* eslint-disable @typescript-eslint/no-explicit-any */
  const f =
    (name: string, fn: (...a: any[]) => unknown) =>
    (...a: any[]) => (log.push(name), fn(...a));
  /* eslint-enable @typescript-eslint/no-explicit-any */
  const unsupported = (name: string) => () => {
    throw new FakeNvmlError(name, 3);
  };
  const api = {
    nvmlReturn_t: R,
    nvmlTemperatureSensors_t: { NVML_TEMPERATURE_GPU: 0 },
    nvmlEnableState_t: { NVML_FEATURE_DISABLED: 0, NVML_FEATURE_ENABLED: 1 },
    nvmlClockType_t: { NVML_CLOCK_GRAPHICS: 0, NVML_CLOCK_SM: 1, NVML_CLOCK_MEM: 2 },
    NVML_DEVICE_NAME_V2_BUFFER_SIZE: 96,
    NVML_DEVICE_UUID_V2_BUFFER_SIZE: 96,
    NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE: 80,
    NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE: 80,
    nvmlInit: f('nvmlInit', () => undefined),
    nvmlShutdown: f('nvmlShutdown', () => undefined),
    nvmlSystemGetDriverVersion: f('nvmlSystemGetDriverVersion', () => '580.159.04'),
    nvmlSystemGetNVMLVersion: f('nvmlSystemGetNVMLVersion', () => '13.580.159.04'),
    nvmlDeviceGetCount: f('nvmlDeviceGetCount', () => 2),
    nvmlDeviceGetHandleByIndex: f('nvmlDeviceGetHandleByIndex', (i: number) => 0x100 + i),
    nvmlDeviceGetName: f('nvmlDeviceGetName', (h: number) => `GPU at ${h.toString(16)}`),
    nvmlDeviceGetUUID: f('nvmlDeviceGetUUID', (h: number) => `GPU-0000000${h - 0x100}-1111-2222-3333-444444444444`),
    nvmlDeviceGetPciInfo: f('nvmlDeviceGetPciInfo', () => ({
      busId: [...Buffer.from('00000000:1B:00.0'), 0, 0],
      busIdLegacy: '',
      domain: 0,
      bus: 0x1b,
      device: 0,
      pciDeviceId: 0x233510de,
      pciSubSystemId: 7,
    })),
    nvmlDeviceGetMemoryInfo: f('nvmlDeviceGetMemoryInfo', () => ({ total: 2n ** 37n, used: 1024, free: 2 ** 37 - 1024 })),
    nvmlDeviceGetTemperature: f('nvmlDeviceGetTemperature', () => 31),
    nvmlDeviceGetPowerUsage: f('nvmlDeviceGetPowerUsage', (h: number) => (h === 0x101 ? unsupported('nvmlDeviceGetPowerUsage')() : 75_500)),
    nvmlDeviceGetEnforcedPowerLimit: f('nvmlDeviceGetEnforcedPowerLimit', () => 700_000),
    nvmlDeviceGetPerformanceState: f('nvmlDeviceGetPerformanceState', (h: number) => (h === 0x101 ? 32 : 0)),
    nvmlDeviceGetFanSpeed: f('nvmlDeviceGetFanSpeed', unsupported('nvmlDeviceGetFanSpeed')),
    nvmlDeviceGetPersistenceMode: f('nvmlDeviceGetPersistenceMode', () => 1),
    nvmlDeviceGetEccMode: f('nvmlDeviceGetEccMode', () => ({ current: 1, pending: 0 })),
    nvmlDeviceGetUtilizationRates: f('nvmlDeviceGetUtilizationRates', () => ({ gpu: 12, memory: 3 })),
    nvmlDeviceGetComputeMode: f('nvmlDeviceGetComputeMode', (h: number) => (h === 0x101 ? 3 : 0)),
    nvmlDeviceGetClockInfo: f('nvmlDeviceGetClockInfo', (_h: number, t: number) => [1755, 1980, 2619][t]),
    nvmlDeviceGetCudaComputeCapability: f('nvmlDeviceGetCudaComputeCapability', () => ({ major: 9, minor: 0 })),
  };
  return api as unknown as NvmlApi;
}

describe('system', () => {
  afterEach(() => provideNvml(undefined));

  test('the driver version and device count come from the driver, with no NVML', () => {
    const log: string[] = [];
    provideNvml(fakeNvml(log));
    const { restore } = fakeDriver(ctx, {
      cuDriverGetVersion: (o: Int32Array) => ((o[0] = 12080), 0),
      cuInit: () => 0,
      cuDeviceGetCount: (o: Int32Array) => ((o[0] = 3), 0),
    });
    try {
      expect(system.driverVersion).toEqual({ major: 12, minor: 8, code: 12080 });
      expect(system.deviceCount).toBe(3);
    } finally {
      restore();
    }
    expect(log).toEqual([]); // NVML never initialised for these
  });

  test('NVML reads become typed properties; unsupported readings are undefined', () => {
    const log: string[] = [];
    provideNvml(fakeNvml(log));
    expect(system.kernelDriverVersion).toBe('580.159.04');
    expect(system.nvmlVersion).toBe('13.580.159.04');
    expect(log.filter((n) => n === 'nvmlInit')).toHaveLength(1); // initialised once
    expect(system.gpuCount).toBe(2);
    const [a, b] = system.gpus;
    expect(a.index).toBe(0);
    expect(a.name).toBe('GPU at 100');
    expect(a.pci).toEqual({ busId: '00000000:1B:00.0', domain: 0, bus: 0x1b, device: 0, pciDeviceId: 0x233510de, pciSubSystemId: 7 });
    expect(a.memory).toEqual({ total: 2 ** 37, used: 1024, free: 2 ** 37 - 1024 });
    expect(a.temperature).toBe(31);
    expect(a.powerUsage).toBe(75.5);
    expect(a.powerLimit).toBe(700);
    expect(a.performanceState).toBe(0);
    expect(a.fanSpeed).toBeUndefined();
    expect(a.persistenceMode).toBe(true);
    expect(a.eccMode).toEqual({ current: true, pending: false });
    expect(a.utilization).toEqual({ gpu: 12, memory: 3 });
    expect(a.computeMode).toBe('default');
    expect(a.clocks).toEqual({ sm: 1980, memory: 2619, graphics: 1755 });
    expect(a.computeCapability).toEqual([9, 0]);
    expect(b.powerUsage).toBeUndefined();
    expect(b.performanceState).toBeUndefined(); // NVML_PSTATE_UNKNOWN
    expect(b.computeMode).toBe('exclusiveProcess');
    expect(system.gpu(1).uuid).toBe('GPU-00000001-1111-2222-3333-444444444444');
  });

  test('a bad index fails before NVML loads; a missing NVML is one clear error naming the read', () => {
    const log: string[] = [];
    provideNvml(fakeNvml(log));
    expect(() => system.gpu(-1)).toThrow(/^system\.gpu: index must be a non-negative integer, got number -1/);
    expect(() => system.gpu(70000)).toThrow(/^system\.gpu: index must be at most 65535, got number 70000/);
    expect(() => system.gpu('0' as never)).toThrow(RangeError);
    expect(() => system.gpu(1.5)).toThrow(RangeError);
    expect(log).toEqual([]);
    expect(() => system.gpu(2)).toThrow(/system\.gpu: index 2 out of range: NVML sees 2 GPU/);
    const absent = {
      nvmlInit: () => {
        throw new Error('cannot load the nvml library: libnvidia-ml.so.1: cannot open shared object file');
      },
    } as unknown as NvmlApi;
    provideNvml(absent);
    const e = (() => {
      try {
        return system.gpus;
      } catch (x) {
        return x;
      }
    })();
    expect(e).toBeInstanceOf(NvmlUnavailableError);
    expect(e).toBeInstanceOf(CudaError);
    expect((e as Error).message).toMatch(
      /^system\.gpus: NVML \(libnvidia-ml\.so\.1, installed with the NVIDIA driver\) is needed and not usable here.*cannot open shared object file.*CUDA_TS_NVML_LIBRARY/,
    );
  });

  test('the real loader: a libnvidia-ml that does not load is NvmlUnavailableError, not a crash', () => {
    const saved = process.env.CUDA_TS_NVML_LIBRARY;
    process.env.CUDA_TS_NVML_LIBRARY = '/dev/null'; // an override that does not load is an error, never a fall-through
    try {
      expect(() => system.gpuCount).toThrow(NvmlUnavailableError);
      expect(() => system.kernelDriverVersion).toThrow(/^system\.kernelDriverVersion: NVML .* CUDA_TS_NVML_LIBRARY=\/dev\/null does not load/);
    } finally {
      if (saved === undefined) delete process.env.CUDA_TS_NVML_LIBRARY;
      else process.env.CUDA_TS_NVML_LIBRARY = saved;
    }
  });

  test('shutdownNvml shuts NVML down once; the next read initialises it again', () => {
    const log: string[] = [];
    provideNvml(fakeNvml(log));
    void system.gpuCount;
    system.shutdownNvml();
    system.shutdownNvml();
    void system.gpuCount;
    expect(log.filter((n) => n === 'nvmlInit' || n === 'nvmlShutdown')).toEqual(['nvmlInit', 'nvmlShutdown', 'nvmlInit']);
  });
});

// ---------------------------------------------------------------------------------------------
// 2. pointer introspection
// ---------------------------------------------------------------------------------------------

describe('pointerInfo', () => {
  const A = drv.CUpointer_attribute;
  /** A cuPointerGetAttributes answering `values` (attribute → value written at the slot's width). */
  function pointerAttributes(values: Partial<Record<number, number | boolean>>, width: Partial<Record<number, 1 | 4 | 8>> = {}): FakeFn {
    return (n: number, attrs: Int32Array, slots: BigUint64Array) => {
      for (let i = 0; i < n; i++) {
        const v = values[attrs[i]];
        if (v === undefined) continue;
        const view = new DataView(koffi.view(Number(slots[i]), 8));
        const w = width[attrs[i]] ?? (typeof v === 'boolean' ? 1 : 8);
        if (w === 1) view.setUint8(0, Number(v));
        else if (w === 4) view.setUint32(0, Number(v), true);
        else view.setBigUint64(0, BigInt(v), true);
      }
      return 0;
    };
  }

  test('device memory: type, device, accessibility, range and context from one call', () => {
    const { calls, restore } = fakeDriver(ctx, {
      cuInit: () => 0,
      cuPointerGetAttributes: pointerAttributes(
        {
          [A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE]: 2,
          [A.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL]: 1,
          [A.CU_POINTER_ATTRIBUTE_DEVICE_POINTER]: 0x7f0000001000,
          [A.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR]: 0x7f0000000000,
          [A.CU_POINTER_ATTRIBUTE_RANGE_SIZE]: 0x10000,
          [A.CU_POINTER_ATTRIBUTE_CONTEXT]: 0xc0,
          [A.CU_POINTER_ATTRIBUTE_BUFFER_ID]: 77,
        },
        { [A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE]: 4, [A.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL]: 4 },
      ),
    });
    try {
      const info = pointerInfo(0x7f0000001000);
      expect(info).toEqual({
        address: 0x7f0000001000,
        memoryType: 'device',
        device: 1,
        deviceAccessible: true,
        hostAccessible: false,
        devicePointer: 0x7f0000001000,
        hostPointer: undefined,
        range: { start: 0x7f0000000000, size: 0x10000 },
        context: 0xc0,
        bufferId: 77,
        pool: 0,
      });
      expect(calls.filter(([n]) => n === 'cuPointerGetAttributes')).toHaveLength(1);
    } finally {
      restore();
    }
  });

  test('managed, page-locked and unknown (pageable) memory', () => {
    const managed = fakeDriver(ctx, {
      cuInit: () => 0,
      cuPointerGetAttributes: pointerAttributes({
        [A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE]: 2,
        [A.CU_POINTER_ATTRIBUTE_IS_MANAGED]: true,
        [A.CU_POINTER_ATTRIBUTE_DEVICE_POINTER]: 0x5000,
        [A.CU_POINTER_ATTRIBUTE_HOST_POINTER]: 0x5000,
      }),
    });
    try {
      expect(pointerInfo(0x5000)).toMatchObject({ memoryType: 'managed', deviceAccessible: true, hostAccessible: true, hostPointer: 0x5000 });
    } finally {
      managed.restore();
    }
    const pinned = fakeDriver(ctx, {
      cuInit: () => 0,
      cuPointerGetAttributes: pointerAttributes({
        [A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE]: 1,
        [A.CU_POINTER_ATTRIBUTE_DEVICE_POINTER]: 0x6000,
        [A.CU_POINTER_ATTRIBUTE_HOST_POINTER]: 0x6000,
      }),
    });
    try {
      expect(pointerInfo(0x6000n)).toMatchObject({ memoryType: 'host', device: 0, deviceAccessible: true, hostAccessible: true });
    } finally {
      pinned.restore();
    }
    const pageable = fakeDriver(ctx, { cuInit: () => 0, cuPointerGetAttributes: pointerAttributes({}) });
    const host = new Float64Array(4);
    try {
      const info = pointerInfo(host.subarray(1));
      expect(info).toMatchObject({ memoryType: 'unregistered', device: undefined, deviceAccessible: false, hostAccessible: true, range: undefined });
      expect(info.address).toBe(Number(koffi.address(host.buffer)) + 8);
    } finally {
      pageable.restore();
    }
  });

  test('a buffer is asked about by its address; bad targets fail before any driver call', () => {
    const { calls, restore } = fakeDriver(ctx, { cuInit: () => 0, cuPointerGetAttributes: pointerAttributes({ [A.CU_POINTER_ATTRIBUTE_MEMORY_TYPE]: 2 }) });
    try {
      const buf = DeviceBuffer.wrap(0x7f0000002000, 64, { context: ctx });
      expect(pointerInfo(buf).address).toBe(0x7f0000002000);
      buf.close();
      calls.length = 0;
      expect(() => pointerInfo('0x1000' as never)).toThrow(/pointerInfo: target must be a DeviceBuffer/);
      expect(() => pointerInfo(-1)).toThrow(RangeError);
      expect(() => pointerInfo(1.5)).toThrow(RangeError);
      expect(() => pointerInfo(new ArrayBuffer(0))).toThrow(/empty ArrayBuffer/);
      expect(calls.filter(([n]) => n === 'cuPointerGetAttributes')).toHaveLength(0);
    } finally {
      restore();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// 3. virtual memory over several devices
// ---------------------------------------------------------------------------------------------

describe('PhysicalMemory and VirtualAddressRange', () => {
  const MiB = 1 << 20;
  let next = 0x900;
  const vmm = (): Record<string, FakeFn> => ({
    cuMemGetAllocationGranularity: (o) => out(o, 2 * MiB),
    cuMemCreate: (o) => out(o, ++next),
    cuMemRelease: () => 0,
    cuMemAddressReserve: (o) => out(o, 0x7e0000000000),
    cuMemAddressFree: () => 0,
    cuMemMap: () => 0,
    cuMemUnmap: () => 0,
    cuMemSetAccess: () => 0,
  });

  test('allocation properties are encoded: location, type, handle types, compression, RDMA', () => {
    const { calls, restore } = fakeDriver(ctx, vmm());
    try {
      const m = PhysicalMemory.create({
        size: 4 * MiB,
        location: { device: 1 },
        type: 'managed',
        handleTypes: ['posixFd', 'fabric'],
        compression: true,
        gpuDirectRdma: true,
        usage: ['hwDecompress'],
        context: ctx,
      });
      const [, [, size, prop]] = calls.find(([n]) => n === 'cuMemCreate')!;
      const v = new DataView((prop as Uint8Array).buffer);
      expect(size).toBe(4 * MiB);
      expect([
        v.getInt32(0, true),
        v.getInt32(4, true),
        v.getInt32(8, true),
        v.getInt32(12, true),
        (prop as Uint8Array)[24],
        (prop as Uint8Array)[25],
        v.getUint16(26, true),
      ]).toEqual([2, 1 | 8, 1, 1, 1, 1, 2]);
      expect(m.type).toBe('managed');
      expect(m.location).toEqual({ type: 1, id: 1 });
      expect(m.granularity).toBe(2 * MiB);
      m.close();
      expect(calls.filter(([n]) => n === 'cuMemRelease')).toHaveLength(1);
      const host = PhysicalMemory.create({ size: 2 * MiB, location: { hostNuma: 0 }, context: ctx });
      expect(host.location).toEqual({ type: drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST_NUMA, id: 0 });
      host.close();
    } finally {
      restore();
    }
  });

  test('bad options fail before the driver', () => {
    const { calls, restore } = fakeDriver(ctx, vmm());
    try {
      expect(() => PhysicalMemory.create({ size: 0, context: ctx })).toThrow(/PhysicalMemory\.create: size must be a positive integer/);
      expect(() => PhysicalMemory.create({ size: MiB, type: 'device' as never, context: ctx })).toThrow(/type must be 'pinned' or 'managed'/);
      expect(() => PhysicalMemory.create({ size: MiB, handleTypes: ['win32' as never], context: ctx })).toThrow(/handleTypes entries/);
      expect(() => PhysicalMemory.create({ size: MiB, compression: 1 as never, context: ctx })).toThrow(/compression must be a boolean/);
      expect(() => PhysicalMemory.create({ size: MiB, usage: ['sparse' as never], context: ctx })).toThrow(
        /usage entries must be 'tilePool' or 'hwDecompress'/,
      );
      expect(() => PhysicalMemory.create({ size: MiB, location: -1, context: ctx })).toThrow(RangeError);
      expect(() => PhysicalMemory.create({ size: MiB, location: 1, type: 'device' as never })).toThrow(/type must be 'pinned' or 'managed'/); // before any context is made
      expect(() => PhysicalMemory.granularity({ location: { device: -1 } })).toThrow(/location\.device must be a non-negative integer/);
      expect(() => VirtualAddressRange.reserve({ size: MiB, alignment: 3 * MiB, context: ctx })).toThrow(/alignment must be a power of two/);
      expect(() => VirtualAddressRange.reserve({ size: MiB, align: 2 } as never)).toThrow(/unknown option 'align'/);
      expect(calls.filter(([n]) => n !== 'cuCtxGetCurrent' && n !== 'cuCtxSetCurrent')).toEqual([]);
      expect(() => PhysicalMemory.create({ size: 3 * MiB, context: ctx })).toThrow(/size 3145728 is not a multiple of the 2097152-byte allocation granularity/);
      expect(calls.filter(([n]) => n === 'cuMemCreate')).toHaveLength(0);
    } finally {
      restore();
    }
  });

  test('one range striped over two devices: aligned reserve, chosen offsets, access for both, one buffer', () => {
    const { calls, restore } = fakeDriver(ctx, vmm());
    try {
      const range = VirtualAddressRange.reserve({ size: 8 * MiB, alignment: 4 * MiB, context: ctx });
      expect(calls.find(([n]) => n === 'cuMemAddressReserve')![1].slice(1)).toEqual([8 * MiB, 4 * MiB, 0, 0]);
      const chunks = [0, 1, 0, 1].map((d) => PhysicalMemory.create({ size: 2 * MiB, location: d, context: ctx }));
      chunks.forEach((c, i) => range.map(i * 2 * MiB, c, { accessFrom: [0, 1] }));
      const maps = calls.filter(([n]) => n === 'cuMemMap').map(([, a]) => [a[0], a[1], a[3]]);
      expect(maps).toEqual(chunks.map((c, i) => [0x7e0000000000 + i * 2 * MiB, 2 * MiB, c.handle]));
      const [, access] = calls.filter(([n]) => n === 'cuMemSetAccess')[0];
      const av = new DataView((access[2] as Uint8Array).buffer);
      expect([access[3], av.getInt32(0, true), av.getInt32(4, true), av.getInt32(12, true), av.getInt32(16, true), av.getInt32(20, true)]).toEqual([
        2, 1, 0, 1, 1, 3,
      ]);
      expect(range.mappings.map((m) => m.memory.location.id)).toEqual([0, 1, 0, 1]);
      chunks.forEach((c) => c.close()); // the range keeps them until it goes
      expect(calls.filter(([n]) => n === 'cuMemRelease')).toHaveLength(0);
      const all = range.buffer();
      expect([all.ptr, all.byteLength]).toEqual([0x7e0000000000, 8 * MiB]);
      all.close();
      range.close();
      expect(calls.filter(([n]) => n === 'cuMemUnmap')).toHaveLength(4);
      expect(calls.filter(([n]) => n === 'cuMemRelease')).toHaveLength(4);
      expect(calls.filter(([n]) => n === 'cuMemAddressFree')).toHaveLength(1);
    } finally {
      restore();
    }
  });

  test('map refuses misaligned, overlapping and out-of-range placements; buffer() needs mapped bytes', () => {
    const { calls, restore } = fakeDriver(ctx, vmm());
    try {
      const range = VirtualAddressRange.reserve({ size: 6 * MiB, context: ctx });
      const a = PhysicalMemory.create({ size: 4 * MiB, context: ctx });
      const b = PhysicalMemory.create({ size: 2 * MiB, context: ctx });
      expect(() => range.map(MiB, a)).toThrow(/offset 1048576 is not a multiple of the memory's 2097152-byte granularity/);
      expect(() => range.map(4 * MiB, a)).toThrow(/4194304 bytes at offset 4194304 run past the 6291456-byte range/);
      range.map(0, a);
      expect(() => range.map(2 * MiB, b)).toThrow(/overlap the mapping at \[0, 4194304\)/);
      expect(() => range.buffer()).toThrow(/are not all mapped \(nothing mapped at offset 4194304\)/);
      expect(() => range.map(4 * MiB, 'x' as never)).toThrow(/memory must be a PhysicalMemory/);
      expect(calls.filter(([n]) => n === 'cuMemMap')).toHaveLength(1);
      range.map(4 * MiB, b);
      range.unmap(0);
      expect(() => range.unmap(0)).toThrow(/no mapping starts at offset 0/);
      expect(range.mappings.map((m) => m.offset)).toEqual([4 * MiB]);
      for (const x of [range, a, b]) x.close();
      expect(calls.filter(([n]) => n === 'cuMemUnmap')).toHaveLength(2);
    } finally {
      restore();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// 4. copyBatch: per-copy attributes
// ---------------------------------------------------------------------------------------------

describe('copyBatch per-copy attributes', () => {
  beforeAll(() => provideDriverVersion(13000));
  afterAll(() => provideDriverVersion(undefined));
  let h = 0x4000;
  const fakes = (): Record<string, FakeFn> => ({
    cuStreamCreateWithPriority: (o) => out(o, (h += 0x10)),
    cuStreamDestroy: () => 0,
    cuMemcpyBatchAsync: () => 0,
  });

  test('each run of equal attributes gets one CUmemcpyAttributes, hints and flags included', () => {
    const { calls, restore } = fakeDriver(ctx, fakes());
    try {
      const s = Stream.create({ context: ctx });
      const a = DeviceBuffer.wrap(0x7f4000000000, 256, { context: ctx });
      const b = DeviceBuffer.wrap(0x7f4000001000, 256, { context: ctx });
      copyBatch(s, [
        { dst: a, src: b, bytes: 64, dstLocationHint: 'host' },
        { dst: a, src: b, bytes: 64, dstLocationHint: 'host', dstOffset: 64 },
        { dst: b, src: a, bytes: 64, srcAccessOrder: 'any', srcLocationHint: { device: 1 }, preferOverlapWithCompute: true },
        { dst: b, src: new Uint8Array(8), dstOffset: 128 },
      ]);
      const args = calls.find(([n]) => n === 'cuMemcpyBatchAsync')![1];
      const [attrs, starts, count] = [args[4] as Uint8Array, args[5] as BigUint64Array, args[6]];
      expect(count).toBe(3);
      expect(Array.from(starts, Number)).toEqual([0, 2, 3]);
      const v = new DataView(attrs.buffer);
      const row = (k: number) => [0, 4, 8, 12, 16, 20].map((o) => v.getInt32(24 * k + o, true));
      expect(row(0)).toEqual([1, 0, 0, 2, 0, 0]); // stream order, dst hint host
      expect(row(1)).toEqual([3, 1, 1, 0, 0, 1]); // any order, src hint device 1, overlap
      expect(row(2)).toEqual([2, 0, 0, 0, 0, 0]); // host data: read during the call
      for (const x of [a, b, s]) x.close();
    } finally {
      restore();
    }
  });

  test('bad per-copy attributes name the copy; host data takes no access order', () => {
    const { calls, restore } = fakeDriver(ctx, fakes());
    try {
      const s = Stream.create({ context: ctx });
      const a = DeviceBuffer.wrap(0x7f4000000000, 256, { context: ctx });
      expect(() => copyBatch(s, [{ dst: a, src: a, srcAccessOrder: 'now' as never }])).toThrow(/copies\[0\]\.srcAccessOrder must be 'stream' or 'any'/);
      expect(() =>
        copyBatch(s, [
          { dst: a, src: a },
          { dst: a, src: a, dstLocationHint: 'gpu' as never },
        ]),
      ).toThrow(/copies\[1\]\.dstLocationHint: a location is/);
      expect(() => copyBatch(s, [{ dst: a, src: new Uint8Array(4), srcAccessOrder: 'any' }])).toThrow(
        /copies\[0\]\.srcAccessOrder: host data is always read during the copyBatch call/,
      );
      expect(() => copyBatch(s, [{ dst: a, src: a, preferOverlapWithCompute: 'yes' as never }])).toThrow(/preferOverlapWithCompute must be a boolean/);
      expect(calls.filter(([n]) => n === 'cuMemcpyBatchAsync')).toHaveLength(0);
      a.close();
      s.close();
    } finally {
      restore();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// 5. graph memory
// ---------------------------------------------------------------------------------------------

describe('graph memory', () => {
  test('the four attributes read, the two watermarks reset with 0, trim', () => {
    const values = [1 << 20, 3 << 20, 32 << 20, 64 << 20];
    const { calls, restore } = fakeDriver(ctx, {
      cuDeviceGetGraphMemAttribute: (_d: number, attr: number, o: BigUint64Array) => out(o, values[attr]),
      cuDeviceSetGraphMemAttribute: () => 0,
      cuDeviceGraphMemTrim: () => 0,
    });
    try {
      expect(graphMemoryStats(ctx, 0)).toEqual({ used: 1 << 20, usedHigh: 3 << 20, reserved: 32 << 20, reservedHigh: 64 << 20 });
      resetGraphMemoryHighWatermarks(ctx, 0);
      const sets = calls.filter(([n]) => n === 'cuDeviceSetGraphMemAttribute').map(([, a]) => [a[1], Number((a[2] as BigUint64Array)[0])]);
      expect(sets).toEqual([
        [1, 0],
        [3, 0],
      ]);
      trimGraphMemory(ctx, 0);
      expect(calls.filter(([n]) => n === 'cuDeviceGraphMemTrim').map(([, a]) => a[0])).toEqual([0]);
    } finally {
      restore();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// 7. pageable host memory as a 'ptr' argument
// ---------------------------------------------------------------------------------------------

describe("pageable host memory as a 'ptr' argument", () => {
  afterEach(() => forgetPageableAccess());
  const notMapped: FakeFn = () => 1; // CUDA_ERROR_INVALID_VALUE: not page-locked memory

  test('passed as its own address where the device reports pageable memory access', () => {
    const { restore } = fakeDriver(ctx, {
      cuMemHostGetDevicePointer: notMapped,
      cuCtxGetDevice: (o: Int32Array) => ((o[0] = 0), 0),
      cuDeviceGetAttribute: (o: Int32Array, attr: number) => ((o[0] = attr === drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS ? 1 : 0), 0),
    });
    try {
      const host = new Float32Array(16);
      const pack = new ArgPack(['ptr']);
      pack.write([host.subarray(4)], 0, 'launch k');
      const written = new DataView(pack.bytes.buffer, pack.bytes.byteOffset).getBigUint64(pack.offsets[0], true);
      expect(Number(written)).toBe(Number(koffi.address(host.buffer)) + 16);
    } finally {
      restore();
    }
  });

  test('refused clearly where it does not, before the launch', () => {
    const { restore } = fakeDriver(ctx, {
      cuMemHostGetDevicePointer: notMapped,
      cuCtxGetDevice: (o: Int32Array) => ((o[0] = 2), 0),
      cuDeviceGetAttribute: (o: Int32Array) => ((o[0] = 0), 0),
    });
    try {
      const pack = new ArgPack(['ptr']);
      expect(() => pack.write([new Uint8Array(8)], 0, 'launch k')).toThrow(
        /launch k: argument 0 \(ptr\) is a Uint8Array over host memory the device cannot address.*pageable memory, and device 2 reports no pageable memory access.*PinnedHostBuffer/,
      );
    } finally {
      restore();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// 8. strided views and DLPack
// ---------------------------------------------------------------------------------------------

describe('StridedView', () => {
  test('bounds are checked for every reachable element, negative strides included', () => {
    const buf = DeviceBuffer.wrap(0x7f5000000000, 4 * 12, { context: ctx });
    const m = StridedView.of(buf, { dtype: 'f32', shape: [3, 4] });
    expect([m.strides, m.size, m.itemSize, m.isContiguous, m.memoryKind, m.address]).toEqual([[4, 1], 12, 4, true, 'device', 0x7f5000000000]);
    const t = m.transpose();
    expect([t.shape, t.strides, t.isContiguous]).toEqual([[4, 3], [1, 4], false]);
    expect(() => StridedView.of(buf, { dtype: 'f32', shape: [3, 5] })).toThrow(/reaches bytes \[0, 60\), outside the 48-byte buffer/);
    expect(() => StridedView.of(buf, { dtype: 'f32', shape: [4], strides: [-1] })).toThrow(/reaches bytes \[-12, 4\)/);
    expect(StridedView.of(buf, { dtype: 'f32', shape: [4], strides: [-1], byteOffset: 12 }).size).toBe(4);
    expect(() => StridedView.of(buf, { dtype: 'f32', shape: [2], byteOffset: 2 })).toThrow(/byteOffset 2 is not a multiple of the 4-byte f32 element/);
    expect(() => StridedView.of(buf, { dtype: 'float32' as never, shape: [2] })).toThrow(/dtype must be one of/);
    expect(() => StridedView.of(buf, { dtype: 'f32', shape: [2, -1] })).toThrow(/shape\[1\] must be an integer ≥ 0/);
    expect(() => StridedView.of(buf, { dtype: 'f32', shape: [2], strides: [1, 1] })).toThrow(/strides has 2 entries for 1 dimensions/);
    expect(() => m.transpose([0, 0])).toThrow(/axes must be a permutation/);
    expect(() => StridedView.of(new Uint8Array(8) as never, { dtype: 'u8', shape: [8] })).toThrow(/buffer must be a DeviceBuffer/);
    expect(StridedView.of(buf, { dtype: 'f32', shape: [0, 100] }).size).toBe(0); // empty: reaches nothing
    buf.close();
  });

  test('toArray gathers a transposed, offset view in C order', () => {
    const { restore } = fakeDriver(ctx, { cuMemcpyDtoH: memcpyDtoH });
    try {
      const base = hostMemory(4 * 12);
      new Int32Array(koffi.view(base, 48)).set(Array.from({ length: 12 }, (_, i) => i)); // [[0..3], [4..7], [8..11]]
      const buf = DeviceBuffer.wrap(base, 48, { context: ctx });
      const m = StridedView.of(buf, { dtype: 'i32', shape: [3, 4] });
      expect(Array.from(m.transpose().toArray() as Int32Array)).toEqual([0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
      const col = StridedView.of(buf, { dtype: 'i32', shape: [3], strides: [4], byteOffset: 8 }); // column 2
      expect(Array.from(col.toArray() as Int32Array)).toEqual([2, 6, 10]);
      const rev = StridedView.of(buf, { dtype: 'i32', shape: [2, 2], strides: [-4, -1], byteOffset: 4 * 11 });
      expect(Array.from(rev.toArray() as Int32Array)).toEqual([11, 10, 7, 6]);
      buf.close();
    } finally {
      restore();
    }
  });
});

describe('DLPack', () => {
  /** The fields of the DLManagedTensorVersioned at `p`, read back by offset. */
  function readStruct(p: bigint) {
    const v = new DataView(koffi.view(Number(p), 80));
    const ndim = v.getInt32(48, true);
    const i64s = (q: bigint) => Array.from(new BigInt64Array(koffi.view(Number(q), 8 * ndim)), Number);
    return {
      version: [v.getUint32(0, true), v.getUint32(4, true)],
      deleter: v.getBigUint64(16, true),
      flags: Number(v.getBigUint64(24, true)),
      data: Number(v.getBigUint64(32, true)),
      device: [v.getInt32(40, true), v.getInt32(44, true)],
      ndim,
      dtype: [v.getUint8(52), v.getUint8(53), v.getUint16(54, true)],
      shape: i64s(v.getBigUint64(56, true)),
      strides: i64s(v.getBigUint64(64, true)),
      byteOffset: Number(v.getBigUint64(72, true)),
    };
  }

  test("export writes DLPack 1.x with the view's layout; the deleter runs once and lets the buffer go", () => {
    const buf = DeviceBuffer.wrap(0x7f6000000000, 4 * 24, { context: ctx });
    const view = StridedView.of(buf, { dtype: 'f32', shape: [2, 3, 4] }).transpose([2, 0, 1]);
    const before = dlpackExportsAlive();
    const p = toDLPack(view);
    expect(dlpackExportsAlive()).toBe(before + 1);
    const s = readStruct(p);
    expect(s).toMatchObject({
      version: [DLPACK_VERSION.major, DLPACK_VERSION.minor],
      flags: 0,
      data: 0x7f6000000000,
      device: [2, 0],
      ndim: 3,
      dtype: [2, 32, 1],
      shape: [4, 2, 3],
      strides: [1, 12, 4],
      byteOffset: 0,
    });
    expect(s.deleter).not.toBe(0n);
    buf.close(); // the consumer still holds the tensor: the buffer's memory stays
    expect(buf.closed).toBe(true);
    const deleter = koffi.proto('void', ['void *']);
    koffi.call(s.deleter, deleter, p);
    expect(dlpackExportsAlive()).toBe(before);
    koffi.call(s.deleter, deleter, p); // a second call (a consumer bug) finds nothing and does nothing
    expect(dlpackExportsAlive()).toBe(before);
  });

  test('round trip: import of an export gives the same view; closing it runs the deleter exactly once', () => {
    const { restore } = fakeDriver(ctx, { cuMemcpyDtoH: memcpyDtoH });
    try {
      const base = hostMemory(8 * 6);
      new Float64Array(koffi.view(base, 48)).set([1, 2, 3, 4, 5, 6]);
      const buf = DeviceBuffer.wrap(base, 48, { context: ctx });
      const before = dlpackExportsAlive();
      const view = StridedView.of(buf, { dtype: 'f64', shape: [3, 2], readOnly: true }).transpose();
      const back = fromDLPack(toDLPack(view), { context: ctx });
      expect([back.dtype, back.shape, back.strides, back.readOnly, back.address]).toEqual(['f64', [2, 3], [1, 2], true, base]);
      expect(Array.from(back.toArray() as Float64Array)).toEqual([1, 3, 5, 2, 4, 6]);
      expect(dlpackExportsAlive()).toBe(before + 1);
      back.buffer.close();
      expect(dlpackExportsAlive()).toBe(before);
      buf.close();
    } finally {
      restore();
    }
  });

  /** A DLManagedTensorVersioned made by a "foreign producer": its deleter counts calls. */
  function foreign(fields: { major?: number; deviceType?: number; code?: number; bits?: number; lanes?: number; strides?: number[] | null; shape?: number[] }) {
    const shape = fields.shape ?? [4];
    const mem = koffi.alloc('uint8_t', 80 + 16 * shape.length);
    blocks.push(mem);
    const at = Number(koffi.address(mem));
    const v = new DataView(koffi.view(mem, 80 + 16 * shape.length));
    const count = { calls: 0, self: 0 };
    const cb = koffi.register(
      (self: bigint | number) => {
        count.calls++;
        count.self = Number(self);
      },
      koffi.pointer(koffi.proto('void', ['void *'])),
    );
    v.setUint32(0, fields.major ?? 1, true);
    v.setUint32(4, 3, true); // a newer minor version is readable
    v.setBigUint64(16, BigInt(cb), true);
    v.setBigUint64(32, BigInt(0x7f7000000000), true);
    v.setInt32(40, fields.deviceType ?? 2, true);
    v.setInt32(44, 0, true);
    v.setInt32(48, shape.length, true);
    v.setUint8(52, fields.code ?? 1);
    v.setUint8(53, fields.bits ?? 16);
    v.setUint16(54, fields.lanes ?? 1, true);
    v.setBigUint64(56, BigInt(at + 80), true);
    shape.forEach((n, d) => v.setBigInt64(80 + 8 * d, BigInt(n), true));
    const strides = fields.strides === undefined ? [1] : fields.strides;
    v.setBigUint64(64, strides === null ? 0n : BigInt(at + 80 + 8 * shape.length), true);
    (strides ?? []).forEach((n, d) => v.setBigInt64(80 + 8 * (shape.length + d), BigInt(n), true));
    v.setBigUint64(72, 8n, true);
    return { at, count, unregister: () => koffi.unregister(cb) };
  }

  test('a foreign tensor: NULL strides mean C order, a newer minor is read, the deleter runs once', () => {
    const t = foreign({ shape: [2, 3], strides: null });
    try {
      const view = fromDLPack(BigInt(t.at), { context: ctx });
      expect([view.dtype, view.shape, view.strides, view.address, view.memoryKind]).toEqual(['u16', [2, 3], [3, 1], 0x7f7000000000 + 8, 'device']);
      expect(t.count.calls).toBe(0);
      view.buffer.close();
      view.buffer.close();
      expect(t.count).toEqual({ calls: 1, self: t.at });
    } finally {
      t.unregister();
    }
  });

  test('a tensor it cannot take is released at once (deleter called once) and the error says why', () => {
    for (const [fields, why] of [
      [{ major: 2 }, /DLPack major version 2\.3 is not readable \(cuda-ts reads 1\.x\); the tensor was released/],
      [{ deviceType: 1 }, /device type 1 is not CUDA memory/],
      [{ lanes: 4 }, /DLDataType \{ code 1, bits 16, lanes 4 \} has no cuda-ts dtype/],
      [{ shape: [-2] }, /shape\[0\] must be an integer|byteLength/],
    ] as [Parameters<typeof foreign>[0], RegExp][]) {
      const t = foreign(fields);
      try {
        expect(() => fromDLPack(t.at, { context: ctx })).toThrow(why);
        expect(t.count.calls).toBe(1);
      } finally {
        t.unregister();
      }
    }
    expect(() => fromDLPack(0)).toThrow(/address must be a non-null pointer/);
    expect(() => fromDLPack('0x10' as never)).toThrow(TypeError);
  });
});
