// Device: a CUDA device by ordinal. Stateless apart from its primary context, retained on first use.
import * as drv from './driver';
import { Context, deviceHandle, init } from './context';
import { describe, integerRule } from './describe';
import { assertMayBlock } from './lifecycle';
import { canAccessPeer, disablePeerAccess, enablePeerAccess } from './peer';
import type { DeviceProperties } from './device-properties';
import { graphMemoryStats, resetGraphMemoryHighWatermarks, trimGraphMemory, type GraphMemoryStats } from './graph/graph-memory';
import { computeModeName, type ComputeMode } from './system';
import { SEALED, type Sealed, checkSealed } from './sealed';

export type { DeviceProperties };

const A = drv.CUdevice_attribute;
const devices = new Map<number, Device>();

/**
 * A CUDA device, by ordinal: one instance per ordinal (Device.get). It holds no state of its own; work
 * goes through its primary context, retained on first use and shared with the runtime API and NCCL.
 * @example
 * ```ts
 * import { Device } from 'cuda-ts/objects';
 *
 * console.log(`${Device.count()} device(s)`);
 * const device = Device.get(0);
 * device.setCurrent(); // streams, buffers and modules made next live in its primary context
 * console.log(`${device.name} (${device.arch}), ${device.multiprocessorCount} SMs`);
 * console.log(`${(device.freeMemory / 2 ** 30).toFixed(1)} GiB free of ${(device.totalMemory / 2 ** 30).toFixed(1)} GiB`);
 * ```
 */
export class Device {
  /** The CUdevice handle (equal to the ordinal on every driver so far, but kept distinct). */
  readonly handle: number;

  private constructor(
    seal: Sealed,
    /** Device ordinal (0-based, in the driver's enumeration order). */
    readonly ordinal: number,
    handle: number,
  ) {
    checkSealed(seal, 'Device', 'Device.get()');
    this.handle = handle;
  }

  /** Number of CUDA devices. */
  static count(): number {
    init();
    drv.global('cuDeviceGetCount', drv.out32);
    return drv.out32[0];
  }

  /**
   * Device `ordinal` (RangeError outside 0..count-1).
   * @param ordinal The device's 0-based ordinal in the driver's enumeration order (as CUDA_VISIBLE_DEVICES leaves it); default 0.
   */
  static get(ordinal = 0): Device {
    if (typeof ordinal !== 'number') throw new TypeError(`Device.get: ordinal must be a number, got ${describe(ordinal)}`);
    if (!Number.isInteger(ordinal) || ordinal < 0 || ordinal > 0x7fffffff)
      throw new RangeError(`Device.get: ordinal ${integerRule(ordinal, 0x7fffffff)}, got ${describe(ordinal)}`);
    const hit = devices.get(ordinal);
    if (hit) return hit;
    const n = Device.count();
    if (ordinal >= n) throw new RangeError(`Device.get: ordinal ${ordinal} out of range: ${n} device(s)`);
    const d = new Device(SEALED, ordinal, deviceHandle(ordinal));
    devices.set(ordinal, d);
    return d;
  }

  /** The device of the current context (device 0 when none is current). */
  static current(): Device {
    return Device.get(Context.current().device);
  }

  /** The product name (cuDeviceGetName), e.g. `NVIDIA H200`. */
  get name(): string {
    const buf = new Uint8Array(256);
    drv.global('cuDeviceGetName', buf, 256, this.handle);
    const end = buf.indexOf(0);
    return Buffer.from(buf.subarray(0, end < 0 ? 256 : end)).toString('utf8');
  }

  /** UUID as the usual 8-4-4-4-12 hex string (`GPU-` prefix not included). */
  get uuid(): string {
    const bytes = new Uint8Array(16);
    drv.global('cuDeviceGetUuid', bytes, this.handle);
    const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  /** `[major, minor]` (read once: see {@link Device.multiprocessorCount}). */
  get computeCapability(): [number, number] {
    this.ccMajor ??= this.attribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    this.ccMinor ??= this.attribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    return [this.ccMajor, this.ccMinor]; // a new array each time: the caller may change it
  }
  private ccMajor: number | undefined;
  private ccMinor: number | undefined;

  /** `sm_90`-style architecture name. */
  get arch(): string {
    const [major, minor] = this.computeCapability;
    return `sm_${major}${minor}`;
  }

  /** Total device memory in bytes (cuDeviceTotalMem). */
  get totalMemory(): number {
    drv.global('cuDeviceTotalMem', drv.out64, this.handle);
    return drv.outNumber();
  }

  /** Free memory now (through the primary context). */
  get freeMemory(): number {
    return this.primaryContext().memoryInfo().free;
  }

  /**
   * Reads a device attribute (cuDeviceGetAttribute), e.g. `CUdevice_attribute.CU_DEVICE_ATTRIBUTE_WARP_SIZE`:
   * asks the driver on every call (some attributes change while a process runs, e.g. the compute mode).
   * @param attr Which attribute to read, a `CUdevice_attribute` value (exported by name from cuda-ts/objects).
   */
  attribute(attr: drv.CUdevice_attribute): number {
    if (typeof attr !== 'number' || !Number.isInteger(attr) || attr < 1 || attr >= A.CU_DEVICE_ATTRIBUTE_MAX)
      throw new RangeError(`Device.attribute: attr must be a CUdevice_attribute, got ${describe(attr)}`);
    drv.global('cuDeviceGetAttribute', drv.out32, attr, this.handle);
    return drv.out32[0];
  }

  /**
   * Every device attribute in one frozen, typed object (one cuDeviceGetAttribute per attribute, read
   * once and cached: attributes do not change while the process runs), e.g. `dev.properties.warpSize`.
   */
  get properties(): DeviceProperties {
    if (this.cachedProperties !== undefined) return this.cachedProperties;
    const props: Record<string, number | undefined> = {};
    const value = new Int32Array(1);
    // the table (140 attributes) loads on the first read of any device's properties, not at import
    const { DEVICE_PROPERTY_TABLE } = require('./device-properties') as typeof import('./device-properties');
    for (const [name, attr, old] of DEVICE_PROPERTY_TABLE) {
      const status = drv.globalStatus('cuDeviceGetAttribute', value, attr, this.handle);
      if (status === 0) props[name] = value[0];
      else if (status === drv.CUresult.CUDA_ERROR_INVALID_VALUE && !old)
        props[name] = undefined; // a driver older than the attribute
      else throw drv.fail(undefined, 'cuDeviceGetAttribute', status);
    }
    this.cachedProperties = Object.freeze(props) as unknown as DeviceProperties;
    return this.cachedProperties;
  }
  private cachedProperties: DeviceProperties | undefined;

  /** The PCI bus id as `domain:bus:device.function` in hex (cuDeviceGetPCIBusId), e.g. `0000:1b:00.0`. */
  get pciBusId(): string {
    const buf = new Uint8Array(64);
    drv.global('cuDeviceGetPCIBusId', buf, buf.length, this.handle);
    const end = buf.indexOf(0);
    return Buffer.from(buf.subarray(0, end < 0 ? buf.length : end)).toString('ascii');
  }

  /**
   * The LUID (locally unique id, 8 bytes as 16 hex digits) and device node mask, where the driver gives
   * one (Windows with WDDM); undefined elsewhere, e.g. on Linux.
   */
  get luid(): { luid: string; deviceNodeMask: number } | undefined {
    const luid = new Uint8Array(8);
    const mask = new Uint32Array(1);
    const status = drv.globalStatus('cuDeviceGetLuid', luid, mask, this.handle);
    if (status !== 0) return undefined; // not supported on this platform (CUDA_ERROR_NOT_SUPPORTED / INVALID_VALUE)
    return { luid: Buffer.from(luid).toString('hex'), deviceNodeMask: mask[0] };
  }

  /**
   * Number of streaming multiprocessors (SMs). Read once per Device and cached, like
   * {@link Device.computeCapability}: both describe the chip, which does not change while the process
   * runs. The compute mode can (`nvidia-smi -c`): {@link Device.computeMode} and
   * {@link Device.attribute} ask the driver every time.
   */
  get multiprocessorCount(): number {
    return (this.sms ??= this.attribute(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  }
  private sms: number | undefined;

  /** The compute mode by name ('default', 'prohibited', 'exclusiveProcess'): CUcomputemode's value named. */
  get computeMode(): ComputeMode {
    return computeModeName(this.attribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_MODE));
  }

  /**
   * Graph memory of this device in bytes (what memory-allocation nodes of graphs use and the driver
   * keeps for them): current and high-water used and reserved figures, read through the primary context.
   */
  get graphMemory(): GraphMemoryStats {
    return graphMemoryStats(this.primaryContext(), this.handle);
  }

  /** Resets graphMemory's usedHigh and reservedHigh watermarks (the driver zeroes them; they then follow new peaks). */
  resetGraphMemoryHighWatermarks(): void {
    resetGraphMemoryHighWatermarks(this.primaryContext(), this.handle);
  }

  /**
   * Returns the graph memory this device keeps but no graph allocation uses to the system
   * (cuDeviceGraphMemTrim): graphMemory.reserved drops to what live graph allocations need.
   */
  trimGraphMemory(): void {
    trimGraphMemory(this.primaryContext(), this.handle);
  }

  /** The primary context (retained on first use). */
  primaryContext(): Context {
    return Context.primary(this.ordinal);
  }

  /** Makes the primary context current on this thread and returns it. */
  setCurrent(): Context {
    return this.primaryContext().bind();
  }

  /** Waits for all work on the primary context. Refuses while a JS host callback is pending. */
  synchronize(): void {
    assertMayBlock('Device.synchronize()');
    this.primaryContext().synchronize();
  }

  /**
   * True when work on this device can access `other`'s memory directly (always for itself).
   * @param other The device whose memory this one would read and write.
   */
  canAccessPeer(other: Device): boolean {
    return canAccessPeer(this, other);
  }

  /**
   * Lets this device's primary context access `other`'s memory; false when it already could.
   * @param other The device whose memory this device's kernels and copies may then access.
   */
  enablePeerAccess(other: Device): boolean {
    return enablePeerAccess(this, other);
  }

  /**
   * Revokes enablePeerAccess(other); false when it was not enabled.
   * @param other The device whose access was enabled by enablePeerAccess.
   */
  disablePeerAccess(other: Device): boolean {
    return disablePeerAccess(this, other);
  }

  /** `Device(<ordinal>)`. */
  toString(): string {
    return `Device(${this.ordinal})`;
  }
}
