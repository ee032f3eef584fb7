// system's NVML readings of issue 43 point 8, without a GPU: a fake NVML typed layer (provideNvml)
// answers, every call logged. The energy counter, running processes (with NVML's "not available"
// values and the count/fill race), memory v2, display state, the power management limits, the
// exposed handle and `system.nvml` (the initialised typed layer, no second nvmlInit).
import { CudaError } from '../support';
import { gpuProcesses, provideNvml, system, type NvmlApi } from '../src/system';

class FakeNvmlError extends CudaError {
  constructor(func: string, code: number) {
    super('nvml', func, code, `NVML_ERROR_${code}`);
  }
}

const R = { NVML_ERROR_NOT_SUPPORTED: 3, NVML_ERROR_NO_PERMISSION: 4, NVML_ERROR_INSUFFICIENT_SIZE: 7, NVML_ERROR_FUNCTION_NOT_FOUND: 13 };
const NOT_AVAILABLE = 2n ** 64n - 1n;

/**
 * Two GPUs: 0x100 answers everything; 0x101 supports none of the new readings. `race` makes the
 * process list fail with INSUFFICIENT_SIZE that many times first (a process started between count and fill).
 */
function fakeNvml(log: string[], race = { compute: 0 }): NvmlApi {
  // a fake of any NVML function: its arguments are whatever that function takes
  /* eslint-disable @typescript-eslint/no-explicit-any */
  const f =
    (name: string, fn: (...a: any[]) => unknown) =>
    (...a: any[]) => (log.push(name), fn(...a));
  /* eslint-enable @typescript-eslint/no-explicit-any */
  const onlyFirst =
    <T>(name: string, v: () => T) =>
    (h: number): T => {
      if (h !== 0x100) throw new FakeNvmlError(name, R.NVML_ERROR_NOT_SUPPORTED);
      return v();
    };
  const api = {
    nvmlReturn_t: R,
    nvmlEnableState_t: { NVML_FEATURE_DISABLED: 0, NVML_FEATURE_ENABLED: 1 },
    nvmlInit: f('nvmlInit', () => undefined),
    nvmlShutdown: f('nvmlShutdown', () => undefined),
    nvmlDeviceGetCount: f('nvmlDeviceGetCount', () => 2),
    nvmlDeviceGetHandleByIndex: f('nvmlDeviceGetHandleByIndex', (i: number) => 0x100 + i),
    nvmlDeviceGetTotalEnergyConsumption: f(
      'nvmlDeviceGetTotalEnergyConsumption',
      onlyFirst('nvmlDeviceGetTotalEnergyConsumption', () => 123_456_789_012n),
    ),
    nvmlDeviceGetMemoryInfo_v2: f(
      'nvmlDeviceGetMemoryInfo_v2',
      onlyFirst('nvmlDeviceGetMemoryInfo_v2', () => ({
        version: 0x2000028,
        total: 2n ** 37n,
        reserved: 512 * 2 ** 20,
        used: 2 ** 20,
        free: 2 ** 37 - 513 * 2 ** 20,
      })),
    ),
    nvmlDeviceGetComputeRunningProcesses: f('nvmlDeviceGetComputeRunningProcesses', (h: number) => {
      if (h !== 0x100) throw new FakeNvmlError('nvmlDeviceGetComputeRunningProcesses', R.NVML_ERROR_NO_PERMISSION);
      if (race.compute > 0) {
        race.compute--;
        throw new FakeNvmlError('nvmlDeviceGetComputeRunningProcesses', R.NVML_ERROR_INSUFFICIENT_SIZE);
      }
      return [
        { pid: 4242, usedGpuMemory: 3 * 2 ** 30, gpuInstanceId: 0xffffffff, computeInstanceId: 0xffffffff },
        { pid: 17, usedGpuMemory: NOT_AVAILABLE, gpuInstanceId: 1, computeInstanceId: 0 },
      ];
    }),
    nvmlDeviceGetGraphicsRunningProcesses: f(
      'nvmlDeviceGetGraphicsRunningProcesses',
      onlyFirst('nvmlDeviceGetGraphicsRunningProcesses', () => []),
    ),
    nvmlDeviceGetDisplayActive: f(
      'nvmlDeviceGetDisplayActive',
      onlyFirst('nvmlDeviceGetDisplayActive', () => 0),
    ),
    nvmlDeviceGetDisplayMode: f(
      'nvmlDeviceGetDisplayMode',
      onlyFirst('nvmlDeviceGetDisplayMode', () => 1),
    ),
    nvmlDeviceGetEnforcedPowerLimit: f(
      'nvmlDeviceGetEnforcedPowerLimit',
      onlyFirst('nvmlDeviceGetEnforcedPowerLimit', () => 600_000),
    ),
    nvmlDeviceGetPowerManagementLimit: f(
      'nvmlDeviceGetPowerManagementLimit',
      onlyFirst('nvmlDeviceGetPowerManagementLimit', () => 650_000),
    ),
    nvmlDeviceGetPowerManagementDefaultLimit: f(
      'nvmlDeviceGetPowerManagementDefaultLimit',
      onlyFirst('nvmlDeviceGetPowerManagementDefaultLimit', () => 700_000),
    ),
    nvmlDeviceGetPowerManagementLimitConstraints: f(
      'nvmlDeviceGetPowerManagementLimitConstraints',
      onlyFirst('nvmlDeviceGetPowerManagementLimitConstraints', () => ({ minLimit: 200_000, maxLimit: 700_000 })),
    ),
  };
  return api as unknown as NvmlApi;
}

describe('system: NVML readings of issue 43 point 8', () => {
  afterEach(() => {
    system.shutdownNvml();
    provideNvml(undefined);
  });

  test('energy counter in mJ, power management limits beside the enforced one, display state', () => {
    provideNvml(fakeNvml([]));
    const [a, b] = system.gpus;
    expect(a.totalEnergyConsumption).toBe(123_456_789_012); // a u64 counter (bigint below 2^53 → number)
    expect(a.powerLimit).toBe(600); // enforced
    expect(a.powerManagementLimit).toBe(650);
    expect(a.powerManagementDefaultLimit).toBe(700);
    expect(a.powerManagementLimitConstraints).toEqual({ min: 200, max: 700 });
    expect(a.displayActive).toBe(false);
    expect(a.displayMode).toBe(true);
    // a board without these readings answers NOT_SUPPORTED: undefined, never a throw
    for (const v of [
      b.totalEnergyConsumption,
      b.powerManagementLimit,
      b.powerManagementDefaultLimit,
      b.powerManagementLimitConstraints,
      b.displayActive,
      b.displayMode,
      b.memoryBreakdown,
      b.graphicsProcesses,
    ])
      expect(v).toBeUndefined();
  });

  test('memory v2: total, reserved, used (without reserved) and free as numbers', () => {
    const log: string[] = [];
    provideNvml(fakeNvml(log));
    expect(system.gpu(0).memoryBreakdown).toEqual({ total: 2 ** 37, reserved: 512 * 2 ** 20, used: 2 ** 20, free: 2 ** 37 - 513 * 2 ** 20 });
    expect(log).toContain('nvmlDeviceGetMemoryInfo_v2'); // the versioned query (the typed layer sets `version`)
  });

  test('running processes: pid and bytes; NVML\'s "not available" and non-MIG ids become undefined', () => {
    provideNvml(fakeNvml([]));
    const a = system.gpu(0);
    expect(a.computeProcesses).toEqual([
      { pid: 4242, usedMemory: 3 * 2 ** 30, gpuInstanceId: undefined, computeInstanceId: undefined },
      { pid: 17, usedMemory: undefined, gpuInstanceId: 1, computeInstanceId: 0 },
    ]);
    expect(a.graphicsProcesses).toEqual([]);
    expect(system.gpu(1).computeProcesses).toBeUndefined(); // NO_PERMISSION (a container) reads as unknown
    expect(gpuProcesses([{ pid: 1, usedGpuMemory: 2n ** 60n, gpuInstanceId: 2, computeInstanceId: 3 }])).toEqual([
      { pid: 1, usedMemory: 2 ** 60, gpuInstanceId: 2, computeInstanceId: 3 },
    ]);
  });

  test('a process starting between the count and the fill (INSUFFICIENT_SIZE) is asked again, a few times at most', () => {
    const log: string[] = [];
    const race = { compute: 2 };
    provideNvml(fakeNvml(log, race));
    expect(system.gpu(0).computeProcesses).toHaveLength(2);
    expect(log.filter((n) => n === 'nvmlDeviceGetComputeRunningProcesses')).toHaveLength(3);
    race.compute = 100; // a list that never settles is reported, not looped on forever
    expect(() => system.gpu(0).computeProcesses).toThrow(FakeNvmlError);
    expect(race.compute).toBe(95);
  });

  test('the NVML handle is exposed, and system.nvml is the initialised typed layer: no second nvmlInit', () => {
    const log: string[] = [];
    const fake = fakeNvml(log);
    provideNvml(fake);
    const gpu = system.gpu(1);
    expect(gpu.handle).toBe(0x101);
    const api = system.nvml;
    expect(api).toBe(fake);
    expect(api.nvmlDeviceGetEnforcedPowerLimit(system.gpu(0).handle)).toBe(600_000);
    expect(log.filter((n) => n === 'nvmlInit')).toEqual(['nvmlInit']);
  });
});
