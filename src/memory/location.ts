// Memory locations: where memory lives, or is advised or prefetched to (CUmemLocation).
import * as drv from '../driver';
import { describe, integerRule } from '../describe';

/**
 * A place memory lives in, or is advised / prefetched to:
 * - `'host'`: host memory (no particular NUMA node);
 * - `'hostNumaCurrent'`: the NUMA node of the calling thread (prefetch and advice only);
 * - a number or `{ device: n }`: device `n`'s memory;
 * - `{ hostNuma: n }`: host NUMA node `n`.
 */
export type MemoryLocation =
  | 'host'
  | 'hostNumaCurrent'
  | number
  | {
      /** Device ordinal. */
      device: number;
    }
  | {
      /** Host NUMA node id. */
      hostNuma: number;
    };

/** A CUmemLocation ({ type, id }) for `loc`; `'device'` means `defaultDevice`. @internal */
export function encodeLocation(where: string, loc: unknown, defaultDevice?: number): { type: number; id: number } {
  const T = drv.CUmemLocationType;
  const ordinal = (name: string, v: unknown): number => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0x7fffffff)
      throw new RangeError(`${where}: ${name} ${integerRule(v, 0x7fffffff)}, got ${describe(v)}`);
    return v;
  };
  if (loc === 'host') return { type: T.CU_MEM_LOCATION_TYPE_HOST, id: 0 };
  if (loc === 'hostNumaCurrent') return { type: T.CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, id: 0 };
  if (loc === 'device' && defaultDevice !== undefined) return { type: T.CU_MEM_LOCATION_TYPE_DEVICE, id: defaultDevice };
  if (typeof loc === 'number') return { type: T.CU_MEM_LOCATION_TYPE_DEVICE, id: ordinal('device ordinal', loc) };
  if (typeof loc === 'object' && loc !== null) {
    const keys = Object.keys(loc);
    if (keys.length === 1 && keys[0] === 'device')
      return { type: T.CU_MEM_LOCATION_TYPE_DEVICE, id: ordinal('location.device', (loc as { device: unknown }).device) };
    if (keys.length === 1 && keys[0] === 'hostNuma')
      return { type: T.CU_MEM_LOCATION_TYPE_HOST_NUMA, id: ordinal('location.hostNuma', (loc as { hostNuma: unknown }).hostNuma) };
  }
  const device = defaultDevice !== undefined ? "'device', " : '';
  throw new TypeError(`${where}: a location is ${device}'host', 'hostNumaCurrent', a device ordinal, { device: n } or { hostNuma: n }, got ${describe(loc)}`);
}
