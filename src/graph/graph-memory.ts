// Graph memory: the memory a device keeps for allocations made inside graphs (memory-allocation nodes),
// read through cuDeviceGetGraphMemAttribute and released with cuDeviceGraphMemTrim. Device exposes
// them as Device.graphMemory, Device.resetGraphMemoryHighWatermarks() and Device.trimGraphMemory().
import * as drv from '../driver';

/** Graph memory of one device, in bytes (see {@link Device.graphMemory}). */
export interface GraphMemoryStats {
  /** Bytes currently in use by graph allocations. */
  used: number;
  /** The most bytes in use since the watermark was last reset. */
  usedHigh: number;
  /** Bytes the driver has reserved for graph allocations (used or cached). */
  reserved: number;
  /** The most bytes reserved since the watermark was last reset. */
  reservedHigh: number;
}

const value = new BigUint64Array(1);

/** One CUgraphMem_attribute of the device of `ctx` (a primary context: graph memory is per device). @internal */
function read(ctx: drv.Bindable, device: number, attr: drv.CUgraphMem_attribute): number {
  drv.call(ctx, 'cuDeviceGetGraphMemAttribute', device, attr, value);
  return Number(value[0]);
}

/** The four graph-memory figures of `device`, read under `ctx`. @internal */
export function graphMemoryStats(ctx: drv.Bindable, device: number): GraphMemoryStats {
  const A = drv.CUgraphMem_attribute;
  return {
    used: read(ctx, device, A.CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT),
    usedHigh: read(ctx, device, A.CU_GRAPH_MEM_ATTR_USED_MEM_HIGH),
    reserved: read(ctx, device, A.CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT),
    reservedHigh: read(ctx, device, A.CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH),
  };
}

/** Resets both high watermarks (the driver accepts only 0 for them). @internal */
export function resetGraphMemoryHighWatermarks(ctx: drv.Bindable, device: number): void {
  const A = drv.CUgraphMem_attribute;
  const zero = new BigUint64Array(1);
  drv.call(ctx, 'cuDeviceSetGraphMemAttribute', device, A.CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, zero);
  drv.call(ctx, 'cuDeviceSetGraphMemAttribute', device, A.CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, zero);
}

/** Returns graph memory the device caches but no graph uses to the system (cuDeviceGraphMemTrim). @internal */
export function trimGraphMemory(ctx: drv.Bindable, device: number): void {
  drv.call(ctx, 'cuDeviceGraphMemTrim', device);
}
