// How the waiter waits (src/await/waiter.ts): the settings of this JS thread, read from the environment
// at load and changed with configureWaits.
import { MAX_TIMER_MS } from '../long-timeout';

/** How the waiter waits; see {@link configureWaits}. */
export interface WaiterSettings {
  /** Spin (query back to back, yielding between slices) this long before parking, in µs. Default 300 (CUDA_TS_AWAIT_SPIN_US). */
  spinMicros: number;
  /** Spin only while at most this many keys (streams, events) are awaited at once (a crowd's spin holds a core and rarely ends a wait). Default 8. */
  spinMaxKeys: number;
  /** The longest the spin holds the event loop before yielding to it, in µs. Default 250. */
  spinSliceMicros: number;
  /** Spin again around the end predicted from the key's last wait. Default true (CUDA_TS_AWAIT_PREDICT=0: off). */
  predict: boolean;
  /** While waits are parked, check them this often anyway (a destroyed context never wakes them), in ms, at most 2^31 - 1. Default 100. */
  sweepMs: number;
  /** Predict only waits that lasted at most this long (ms; longer ones gain nothing measurable). Default 50. */
  predictUpToMs: number;
  /** Predict only waits made and watched while at most this many keys (streams, events) are awaited at once (a crowd wants CPU, not µs). Default 4. */
  predictMaxKeys: number;
  /**
   * Where a parked stream wait's wake host function goes: 'helper' (a helper stream waits for the
   * marker event, then posts; the program's stream gets nothing) or 'stream' (enqueued on the awaited
   * stream itself right after the marker: no cross-stream wait, but later work on that stream waits
   * for the post). Event waits always use a helper. Default 'helper' (CUDA_TS_AWAIT_PARK).
   */
  parkOn: 'helper' | 'stream';
  /**
   * A stream wait enqueues a flag write behind its marker (cuStreamWriteValue32 into page-locked memory)
   * and the spin reads the flag instead of querying the driver: true for every stream wait; 'crowd' for
   * those made while more streams and events are awaited than there are helper streams (most of them ride,
   * and a rider's check then reads memory); false for none. Default 'crowd' (CUDA_TS_AWAIT_FLAGS=1: true, 0: false).
   */
  flags: boolean | 'crowd';
}

function envNumber(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return process.env[name] !== undefined && process.env[name] !== '' && Number.isFinite(v) && v >= 0 ? v : fallback;
}

export const settings: WaiterSettings = {
  spinMicros: envNumber('CUDA_TS_AWAIT_SPIN_US', 300),
  spinMaxKeys: 8,
  spinSliceMicros: 250,
  predict: process.env.CUDA_TS_AWAIT_PREDICT !== '0',
  sweepMs: 100,
  predictUpToMs: 50,
  predictMaxKeys: 4,
  parkOn: process.env.CUDA_TS_AWAIT_PARK === 'stream' ? 'stream' : 'helper',
  flags: process.env.CUDA_TS_AWAIT_FLAGS === '1' ? true : process.env.CUDA_TS_AWAIT_FLAGS === '0' ? false : 'crowd',
};

/**
 * Changes how awaited waits wait (for this JS thread); returns the settings now in force.
 * @param changes The settings to change, others kept: `spinMicros`, `spinSliceMicros` (µs), `spinMaxKeys`, `predict`, `sweepMs`, `predictUpToMs` (ms), `predictMaxKeys`,
 * `parkOn` ('helper' or 'stream') and `flags` (true, false or 'crowd'); default {} (only read them).
 */
export function configureWaits(changes: Partial<WaiterSettings> = {}): WaiterSettings {
  if (typeof changes !== 'object' || changes === null) throw new TypeError(`configureWaits: changes must be an object, got ${String(changes)}`);
  for (const k of Object.keys(changes))
    if (!(k in settings)) throw new TypeError(`configureWaits: unknown setting '${k}' (${Object.keys(settings).join(', ')})`);
  const { spinMicros, spinSliceMicros, spinMaxKeys, predict, sweepMs, predictUpToMs, predictMaxKeys, parkOn, flags } = changes;
  if (spinMicros !== undefined && !(typeof spinMicros === 'number' && spinMicros >= 0 && Number.isFinite(spinMicros)))
    throw new RangeError(`configureWaits: spinMicros must be a non-negative number, got ${String(spinMicros)}`);
  if (spinSliceMicros !== undefined && !(typeof spinSliceMicros === 'number' && spinSliceMicros > 0 && spinSliceMicros <= 1000))
    throw new RangeError(`configureWaits: spinSliceMicros must be a number in (0, 1000], got ${String(spinSliceMicros)}`);
  if (parkOn !== undefined && parkOn !== 'helper' && parkOn !== 'stream')
    throw new TypeError(`configureWaits: parkOn must be 'helper' or 'stream', got ${String(parkOn)}`);
  if (predict !== undefined && typeof predict !== 'boolean') throw new TypeError(`configureWaits: predict must be a boolean, got ${String(predict)}`);
  if (flags !== undefined && typeof flags !== 'boolean' && flags !== 'crowd')
    throw new TypeError(`configureWaits: flags must be true, false or 'crowd', got ${String(flags)}`);
  // the sweep is a setTimeout, which fires a delay past MAX_TIMER_MS (2147483647.5 too) after 1 ms
  if (sweepMs !== undefined && !(typeof sweepMs === 'number' && sweepMs > 0 && sweepMs <= MAX_TIMER_MS))
    throw new RangeError(`configureWaits: sweepMs must be a number in (0, ${MAX_TIMER_MS}], got ${String(sweepMs)}`);
  if (predictUpToMs !== undefined && !(typeof predictUpToMs === 'number' && predictUpToMs >= 0))
    throw new RangeError(`configureWaits: predictUpToMs must be a non-negative number, got ${String(predictUpToMs)}`);
  for (const [name, v] of [
    ['spinMaxKeys', spinMaxKeys],
    ['predictMaxKeys', predictMaxKeys],
  ] as const)
    if (v !== undefined && !(Number.isSafeInteger(v) && v >= 0))
      throw new RangeError(`configureWaits: ${name} must be a non-negative integer, got ${String(v)}`);
  Object.assign(settings, changes);
  return { ...settings };
}
