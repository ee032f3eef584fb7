// system: the machine as a whole, like cuda.core's `system`. The CUDA driver's own version and device
// count come from the driver (no NVML); everything an nvidia-smi-style program reads (kernel driver
// version, per-GPU PCI, power, temperature, ECC, fans, clocks, utilisation, compute mode) comes from
// NVML (libnvidia-ml), which loads on the first such read, never at import. NVML is initialised once
// (nvmlInit) and stays so until system.shutdownNvml().
import * as drv from './driver';
import { init } from './context';
import { describe, integerRule } from './describe';
import { OBJECTS_ERROR, ObjectsError } from './errors';
import { loadNvml, type nvml } from './releases';
import { CudaError } from '../support';
import { SEALED, type Sealed, checkSealed } from './sealed';

/** What system.ts uses of NVML's typed layer (a seam: unit tests give a fake). @internal */
export type NvmlApi = typeof nvml;

/** How a GPU computes for processes: the driver's and NVML's compute-mode enums, by name. */
export type ComputeMode = 'default' | 'exclusiveThread' | 'prohibited' | 'exclusiveProcess';
const COMPUTE_MODES: readonly ComputeMode[] = ['default', 'exclusiveThread', 'prohibited', 'exclusiveProcess'];

/** A compute-mode enum value (CUcomputemode or nvmlComputeMode_t: the numbers agree) by name. @internal */
export function computeModeName(value: number): ComputeMode {
  const name = COMPUTE_MODES[value];
  if (name === undefined) throw new ObjectsError('computeMode', OBJECTS_ERROR.missing, `computeMode: the driver reported an unknown compute mode ${value}`);
  return name;
}

/** NVML could not be loaded or initialised (no libnvidia-ml, or no NVIDIA kernel driver). */
export class NvmlUnavailableError extends ObjectsError {
  /**
   * Made by the objects layer: `where` is the read that needed NVML, `cause` what failed.
   * @param where The read that needed NVML (e.g. 'system.gpuCount'); the message starts with it.
   * @param cause What failed: the load or nvmlInit error (its first line is quoted); it becomes the error's `cause`.
   */
  constructor(where: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
    super(
      where,
      OBJECTS_ERROR.unavailable,
      `NVML (libnvidia-ml.so.1, installed with the NVIDIA driver) is needed and not usable here: ${why}. ` +
        'Install the NVIDIA driver, or set CUDA_TS_NVML_LIBRARY to the library path',
      { cause },
    );
  }
}

let provided: NvmlApi | undefined;
let initialised: NvmlApi | undefined;

/** Test seam: makes system use `api` instead of loading NVML (undefined: load it again). @internal */
export function provideNvml(api: NvmlApi | undefined): void {
  provided = api;
  initialised = undefined;
}

/** NVML, loaded and initialised on first use; NvmlUnavailableError naming `where` when it cannot be. */
function nvmlFor(where: string): NvmlApi {
  if (initialised !== undefined) return initialised;
  let api: NvmlApi;
  try {
    api = provided ?? loadNvml();
    api.nvmlInit();
  } catch (e) {
    if (e instanceof CudaError || e instanceof Error) throw new NvmlUnavailableError(where, e);
    throw e;
  }
  initialised = api;
  return api;
}

/** `f()`, or undefined where NVML says this GPU or driver does not support it (a fan on a passive board). */
function optional<T>(api: NvmlApi, f: () => T): T | undefined {
  try {
    return f();
  } catch (e) {
    const R = api.nvmlReturn_t;
    if (
      e instanceof CudaError &&
      (e.code === R.NVML_ERROR_NOT_SUPPORTED || e.code === R.NVML_ERROR_FUNCTION_NOT_FOUND || e.code === R.NVML_ERROR_NO_PERMISSION)
    )
      return undefined;
    throw e;
  }
}

/** A C string NVML returned inside a record (a string, or char codes up to the first NUL). */
function chars(v: unknown): string {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v) && !ArrayBuffer.isView(v)) return '';
  const codes = Array.from(v as ArrayLike<number>);
  const end = codes.indexOf(0);
  return String.fromCharCode(...(end < 0 ? codes : codes.slice(0, end)));
}

/** A GPU's PCI location as NVML reports it. */
export interface PciInfo {
  /** `domain:bus:device.function`, e.g. `00000000:1B:00.0`. */
  busId: string;
  /** The PCI domain (segment). */
  domain: number;
  /** The PCI bus number. */
  bus: number;
  /** The PCI device number on its bus. */
  device: number;
  /** The combined 16-bit device id and 16-bit vendor id. */
  pciDeviceId: number;
  /** The 32-bit sub-system device id. */
  pciSubSystemId: number;
}

/** A process using a GPU, as NVML lists it (`computeProcesses`, `graphicsProcesses`). */
export interface GpuProcess {
  /** The process id (in the host's pid namespace: inside a container it may not be this container's pid). */
  pid: number;
  /** Device memory the process holds, in bytes; undefined where NVML cannot tell (a container without access, Windows WDDM). */
  usedMemory: number | undefined;
  /** The MIG GPU instance the process runs in; undefined when the GPU is not in MIG mode. */
  gpuInstanceId: number | undefined;
  /** The MIG compute instance the process runs in; undefined when the GPU is not in MIG mode. */
  computeInstanceId: number | undefined;
}

/** Device memory as NVML's v2 query splits it, in bytes: `used` excludes `reserved` (what nvidia-smi shows). */
export interface MemoryBreakdown {
  /** All the device memory, in bytes: `reserved + used + free`. */
  total: number;
  /** Memory the driver and firmware keep for themselves. */
  reserved: number;
  /** Memory held by contexts and allocations, in bytes (without `reserved`). */
  used: number;
  /** Memory still available to allocate, in bytes. */
  free: number;
}

// NVML's "not available" for a 64-bit reading, and for an unsigned int id (MIG ids outside MIG mode).
const NOT_AVAILABLE_U64 = 2n ** 64n - 1n;
const NOT_AVAILABLE_U32 = 0xffffffff;

/** A 64-bit reading NVML returned (number below 2^53, else bigint) as a number, or undefined for "not available". */
function u64Reading(v: number | bigint): number | undefined {
  if (typeof v === 'number') return v;
  return v === NOT_AVAILABLE_U64 ? undefined : Number(v);
}

/** NVML's process records as GpuProcess values. @internal */
export function gpuProcesses(infos: readonly nvml.nvmlProcessInfo_v2_st[]): GpuProcess[] {
  return infos.map((p) => ({
    pid: p.pid,
    usedMemory: u64Reading(p.usedGpuMemory),
    gpuInstanceId: p.gpuInstanceId === NOT_AVAILABLE_U32 ? undefined : p.gpuInstanceId,
    computeInstanceId: p.computeInstanceId === NOT_AVAILABLE_U32 ? undefined : p.computeInstanceId,
  }));
}

/**
 * `list()` again while NVML answers INSUFFICIENT_SIZE: the typed layer asks the count, then fills an
 * array that long, and a process starting between the two calls makes the second one too short.
 */
function processList(api: NvmlApi, list: () => nvml.nvmlProcessInfo_v2_st[]): nvml.nvmlProcessInfo_v2_st[] {
  for (let attempt = 0; ; attempt++) {
    try {
      return list();
    } catch (e) {
      if (attempt < 4 && e instanceof CudaError && e.code === api.nvmlReturn_t.NVML_ERROR_INSUFFICIENT_SIZE) continue;
      throw e;
    }
  }
}

/** Milliwatts as watts, keeping undefined. */
function watts(mw: number | undefined): number | undefined {
  return mw === undefined ? undefined : mw / 1000;
}

/**
 * One GPU as NVML sees it (`system.gpu(i)`): typed properties, each read when asked (one NVML call).
 * A property this GPU or driver does not support is undefined (fans on a passively cooled board, …).
 * NVML's index order is PCI order, which may differ from CUDA's ordinals: `cudaOrdinal` maps it.
 */
export class NvmlDevice {
  /** @internal */
  constructor(
    seal: Sealed,
    /** NVML's index of the GPU (0-based, PCI order). */
    readonly index: number,
    /**
     * NVML's handle of this GPU (`nvmlDevice_t`), for calls of NVML's typed layer that the properties do
     * not cover: `system.nvml.nvmlDeviceGetXxx(gpu.handle)` needs no nvmlInit of its own. Valid until
     * `system.shutdownNvml()`.
     */
    readonly handle: nvml.nvmlDevice_t,
    private readonly api: NvmlApi,
  ) {
    checkSealed(seal, 'NvmlDevice', 'system.gpu() or system.gpus');
  }

  /** Product name, e.g. `NVIDIA H200`. */
  get name(): string {
    return this.api.nvmlDeviceGetName(this.handle, this.api.NVML_DEVICE_NAME_V2_BUFFER_SIZE);
  }
  /** `GPU-xxxxxxxx-xxxx-…` (or `MIG-…`). */
  get uuid(): string {
    return this.api.nvmlDeviceGetUUID(this.handle, this.api.NVML_DEVICE_UUID_V2_BUFFER_SIZE);
  }
  /** PCI location and ids. */
  get pci(): PciInfo {
    const p = this.api.nvmlDeviceGetPciInfo(this.handle);
    return {
      busId: chars(p.busId) || chars(p.busIdLegacy),
      domain: p.domain,
      bus: p.bus,
      device: p.device,
      pciDeviceId: p.pciDeviceId,
      pciSubSystemId: p.pciSubSystemId,
    };
  }
  /** Device memory in bytes: total, used and free (NVML's view: includes other processes). */
  get memory(): { total: number; used: number; free: number } {
    const m = this.api.nvmlDeviceGetMemoryInfo(this.handle);
    return { total: Number(m.total), used: Number(m.used), free: Number(m.free) };
  }
  /** GPU core temperature in °C. */
  get temperature(): number | undefined {
    return optional(this.api, () => this.api.nvmlDeviceGetTemperature(this.handle, this.api.nvmlTemperatureSensors_t.NVML_TEMPERATURE_GPU));
  }
  /** Power draw in watts. */
  get powerUsage(): number | undefined {
    const mw = optional(this.api, () => this.api.nvmlDeviceGetPowerUsage(this.handle));
    return mw === undefined ? undefined : mw / 1000;
  }
  /**
   * The power limit in force (NVML's enforced limit: the lowest of the management limit and any other
   * cap), in watts.
   */
  get powerLimit(): number | undefined {
    return watts(optional(this.api, () => this.api.nvmlDeviceGetEnforcedPowerLimit(this.handle)));
  }
  /** The power management limit set on the board (nvidia-smi's `power.limit`), in watts. */
  get powerManagementLimit(): number | undefined {
    return watts(optional(this.api, () => this.api.nvmlDeviceGetPowerManagementLimit(this.handle)));
  }
  /** The power management limit the board comes with (`power.default_limit`), in watts. */
  get powerManagementDefaultLimit(): number | undefined {
    return watts(optional(this.api, () => this.api.nvmlDeviceGetPowerManagementDefaultLimit(this.handle)));
  }
  /** The range the power management limit may be set in (`power.min_limit`, `power.max_limit`), in watts. */
  get powerManagementLimitConstraints(): { min: number; max: number } | undefined {
    const c = optional(this.api, () => this.api.nvmlDeviceGetPowerManagementLimitConstraints(this.handle));
    return c === undefined ? undefined : { min: c.minLimit / 1000, max: c.maxLimit / 1000 };
  }
  /**
   * Energy the GPU consumed since the driver was last loaded, in millijoules (a counter: read it twice
   * and subtract for the energy of the work between).
   */
  get totalEnergyConsumption(): number | undefined {
    const mj = optional(this.api, () => this.api.nvmlDeviceGetTotalEnergyConsumption(this.handle));
    return mj === undefined ? undefined : u64Reading(mj);
  }
  /**
   * Device memory split as nvidia-smi shows it (NVML's versioned v2 query): total, reserved (by the
   * driver and firmware), used (excluding reserved) and free, in bytes. {@link memory} is the v1 view,
   * whose `used` includes the reserved memory.
   */
  get memoryBreakdown(): MemoryBreakdown | undefined {
    const m = optional(this.api, () => this.api.nvmlDeviceGetMemoryInfo_v2(this.handle));
    return m === undefined ? undefined : { total: Number(m.total), reserved: Number(m.reserved), used: Number(m.used), free: Number(m.free) };
  }
  /** Processes with a compute context on this GPU (CUDA programs), with the memory each holds. */
  get computeProcesses(): GpuProcess[] | undefined {
    const list = optional(this.api, () => processList(this.api, () => this.api.nvmlDeviceGetComputeRunningProcesses(this.handle)));
    return list === undefined ? undefined : gpuProcesses(list);
  }
  /** Processes with a graphics context on this GPU (OpenGL, Vulkan, a display server). */
  get graphicsProcesses(): GpuProcess[] | undefined {
    const list = optional(this.api, () => processList(this.api, () => this.api.nvmlDeviceGetGraphicsRunningProcesses(this.handle)));
    return list === undefined ? undefined : gpuProcesses(list);
  }
  /** Whether a display is initialised on the GPU (a framebuffer exists, with or without a monitor attached). */
  get displayActive(): boolean | undefined {
    const m = optional(this.api, () => this.api.nvmlDeviceGetDisplayActive(this.handle));
    return m === undefined ? undefined : m === this.api.nvmlEnableState_t.NVML_FEATURE_ENABLED;
  }
  /** Whether a monitor is connected to one of the GPU's outputs. */
  get displayMode(): boolean | undefined {
    const m = optional(this.api, () => this.api.nvmlDeviceGetDisplayMode(this.handle));
    return m === undefined ? undefined : m === this.api.nvmlEnableState_t.NVML_FEATURE_ENABLED;
  }
  /** Performance state 0 (fastest) to 15; undefined when unknown or unsupported. */
  get performanceState(): number | undefined {
    const p = optional(this.api, () => this.api.nvmlDeviceGetPerformanceState(this.handle));
    return p === undefined || p > 15 ? undefined : p;
  }
  /** Fan speed in percent of the maximum; undefined on a board without fans NVML can read. */
  get fanSpeed(): number | undefined {
    return optional(this.api, () => this.api.nvmlDeviceGetFanSpeed(this.handle));
  }
  /** Whether persistence mode is on (Linux). */
  get persistenceMode(): boolean | undefined {
    const m = optional(this.api, () => this.api.nvmlDeviceGetPersistenceMode(this.handle));
    return m === undefined ? undefined : m === this.api.nvmlEnableState_t.NVML_FEATURE_ENABLED;
  }
  /** ECC: whether it is on now, and whether it will be after the next reboot. */
  get eccMode(): { current: boolean; pending: boolean } | undefined {
    const m = optional(this.api, () => this.api.nvmlDeviceGetEccMode(this.handle));
    const on = this.api.nvmlEnableState_t.NVML_FEATURE_ENABLED;
    return m === undefined ? undefined : { current: m.current === on, pending: m.pending === on };
  }
  /** Percent of time over the last sample period the GPU computed, and the memory was read or written. */
  get utilization(): { gpu: number; memory: number } | undefined {
    const u = optional(this.api, () => this.api.nvmlDeviceGetUtilizationRates(this.handle));
    return u === undefined ? undefined : { gpu: u.gpu, memory: u.memory };
  }
  /** The compute mode, by name. */
  get computeMode(): ComputeMode | undefined {
    const m = optional(this.api, () => this.api.nvmlDeviceGetComputeMode(this.handle));
    return m === undefined ? undefined : computeModeName(m);
  }
  /** Current clocks in MHz: SM, memory and graphics. */
  get clocks(): { sm: number | undefined; memory: number | undefined; graphics: number | undefined } {
    const C = this.api.nvmlClockType_t;
    const clock = (t: nvml.nvmlClockType_t): number | undefined => optional(this.api, () => this.api.nvmlDeviceGetClockInfo(this.handle, t));
    return { sm: clock(C.NVML_CLOCK_SM), memory: clock(C.NVML_CLOCK_MEM), graphics: clock(C.NVML_CLOCK_GRAPHICS) };
  }
  /** CUDA compute capability `[major, minor]`. */
  get computeCapability(): [number, number] {
    const c = this.api.nvmlDeviceGetCudaComputeCapability(this.handle);
    return [c.major, c.minor];
  }
  /**
   * The CUDA ordinal of this GPU (matched by UUID with cuDeviceGetUuid), or undefined when CUDA does
   * not see it (CUDA_VISIBLE_DEVICES, MIG).
   */
  get cudaOrdinal(): number | undefined {
    const mine = this.uuid.replace(/^GPU-/, '').toLowerCase();
    const n = system.deviceCount;
    const bytes = new Uint8Array(16);
    for (let i = 0; i < n; i++) {
      drv.global('cuDeviceGet', drv.out32, i);
      drv.global('cuDeviceGetUuid', bytes, drv.out32[0]);
      const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
      if (`${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}` === mine) return i;
    }
    return undefined;
  }
  /** `NvmlDevice(<index>)`. */
  toString(): string {
    return `NvmlDevice(${this.index})`;
  }
}

/** The machine's CUDA driver, devices and (through NVML) GPUs: see {@link system}. */
export class System {
  /** @internal */
  constructor() {}

  /**
   * The CUDA version the installed driver supports (cuDriverGetVersion; no NVML, no context), e.g.
   * `{ major: 13, minor: 0, code: 13000 }`.
   */
  get driverVersion(): { major: number; minor: number; code: number } {
    drv.global('cuDriverGetVersion', drv.out32);
    const code = drv.out32[0];
    return { major: Math.floor(code / 1000), minor: Math.floor((code % 1000) / 10), code };
  }
  /** Number of CUDA devices this process sees (cuDeviceGetCount: honours CUDA_VISIBLE_DEVICES). */
  get deviceCount(): number {
    init();
    drv.global('cuDeviceGetCount', drv.out32);
    return drv.out32[0];
  }
  /** The kernel driver's version string from NVML, e.g. `580.159.04`. */
  get kernelDriverVersion(): string {
    const api = nvmlFor('system.kernelDriverVersion');
    return api.nvmlSystemGetDriverVersion(api.NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE);
  }
  /** NVML's own version string, e.g. `13.580.159.04`. */
  get nvmlVersion(): string {
    const api = nvmlFor('system.nvmlVersion');
    return api.nvmlSystemGetNVMLVersion(api.NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE);
  }
  /** Number of GPUs NVML sees (every GPU of the machine: CUDA_VISIBLE_DEVICES does not apply). */
  get gpuCount(): number {
    return nvmlFor('system.gpuCount').nvmlDeviceGetCount();
  }
  /**
   * GPU `index` in NVML's order (RangeError outside 0..gpuCount-1; checked before NVML loads where it can be).
   * @param index The GPU's position in NVML's order, 0 to gpuCount − 1 (every GPU of the machine, whatever CUDA_VISIBLE_DEVICES says: not a CUDA ordinal).
   */
  gpu(index: number): NvmlDevice {
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > 0xffff)
      throw new RangeError(`system.gpu: index ${integerRule(index, 0xffff)}, got ${describe(index)}`);
    const api = nvmlFor('system.gpu');
    const n = api.nvmlDeviceGetCount();
    if (index >= n) throw new RangeError(`system.gpu: index ${index} out of range: NVML sees ${n} GPU(s)`);
    return new NvmlDevice(SEALED, index, api.nvmlDeviceGetHandleByIndex(index), api);
  }
  /** Every GPU NVML sees, in its order. */
  get gpus(): NvmlDevice[] {
    const api = nvmlFor('system.gpus');
    const n = api.nvmlDeviceGetCount();
    return Array.from({ length: n }, (_, i) => new NvmlDevice(SEALED, i, api.nvmlDeviceGetHandleByIndex(i), api));
  }
  /**
   * NVML's typed layer, loaded and initialised (once, shared with every `system` read): for the calls
   * the properties do not cover, with `gpu.handle`. Needs no nvmlInit or nvmlShutdown of its own.
   */
  get nvml(): NvmlApi {
    return nvmlFor('system.nvml');
  }
  /** Shuts NVML down if it was initialised (the next NVML read initialises it again). */
  shutdownNvml(): void {
    const api = initialised;
    initialised = undefined;
    api?.nvmlShutdown();
  }
  /** `System`. */
  toString(): string {
    return 'System';
  }
}

/**
 * The machine: `system.driverVersion` (the CUDA driver, no NVML), `system.deviceCount`, and through
 * NVML, loaded on first use: `system.kernelDriverVersion`, `system.gpus`, `system.gpu(i).temperature`, …
 * Without NVML those reads throw {@link NvmlUnavailableError}.
 */
export const system = new System();
