// Flags the GPU writes: a stream wait enqueues cuStreamWriteValue32 of a sequence number into a slot of
// page-locked host memory right behind its marker, and the spin reads that slot instead of asking the
// driver. The write runs after the work before it and after a memory fence (no NO_MEMORY_BARRIER flag),
// so a slot that reached a wait's number means its work is done and visible; a read costs nanoseconds
// where a query costs a driver call. One slab of SLOTS slots per context; a context whose driver refuses
// the slab or the write (no stream memory operations) gets none and its waits spin on queries.
import { koffi } from '../../support';
import * as drv from '../driver';
import type { Context } from '../context';
import { perContext } from './markers';

const SLOTS = 1024;

interface Slab {
  /** The slab's device address (cuMemHostGetDevicePointer; the host address under unified addressing). */
  readonly device: number;
  readonly view: Int32Array;
  /** The last number posted to each slot: numbers only grow, so a late write of a reused slot is older. */
  readonly posted: Int32Array;
  readonly free: number[];
}

/** A slot of a context's slab, held by one queue of waits. */
export interface FlagSlot {
  readonly slab: Slab;
  readonly index: number;
}

/** null: this context has no slab (refused once, not asked again). */
const slabs = new Map<Context, Slab | null>();

function makeSlab(ctx: Context): Slab | null {
  try {
    drv.call(ctx, 'cuMemHostAlloc', drv.out64, 4 * SLOTS, drv.CU_MEMHOSTALLOC_PORTABLE | drv.CU_MEMHOSTALLOC_DEVICEMAP);
  } catch {
    return null; // no pinned memory to spare: queries do
  }
  const address = drv.outNumber();
  try {
    drv.call(ctx, 'cuMemHostGetDevicePointer', drv.out64, address, 0);
    const device = drv.outNumber();
    const view = new Int32Array(koffi.view(address, 4 * SLOTS));
    view.fill(0);
    return { device, view, posted: new Int32Array(SLOTS), free: Array.from({ length: SLOTS }, (_, i) => SLOTS - 1 - i) };
  } catch {
    // no device address or no view of it here: give the memory back; a wait never fails for want of a flag
    try {
      drv.release(ctx, 'cuMemFreeHost', address);
    } catch {
      // 4 KiB of page-locked memory stays with the context: nothing to report
    }
    return null;
  }
}

/** A free slot of `ctx`'s slab, or undefined (no slab, or every slot held). */
export function takeSlot(ctx: Context): FlagSlot | undefined {
  const slab = perContext(slabs, ctx, () => makeSlab(ctx)); // a destroyed context's slab went with it
  const index = slab?.free.pop();
  return index === undefined ? undefined : { slab: slab!, index };
}

/** Gives `slot` back (its writes still in flight carry older numbers than any later post). */
export function giveSlot(ctx: Context, slot: FlagSlot): void {
  if (!ctx.core.destroyed && slabs.get(ctx) === slot.slab) slot.slab.free.push(slot.index);
}

/**
 * Enqueues the write of the slot's next number on stream `h` (behind what is enqueued there now);
 * returns that number, or 0 when the driver refused (then the context gets no more flags).
 */
export function postFlag(ctx: Context, h: number, slot: FlagSlot): number {
  const { slab, index } = slot;
  const value = (slab.posted[index] + 1) | 0 || 1; // 0 means "no flag"
  try {
    drv.callOnStream(ctx, h, 'cuStreamWriteValue32', h, slab.device + 4 * index, value, 0);
  } catch {
    if (slabs.get(ctx) === slab) slabs.set(ctx, null); // not supported here: the slab stays (tiny), unused
    return 0;
  }
  slab.posted[index] = value;
  return value;
}

/** True when the slot holds `value` or a later number. */
export function flagReached(slot: FlagSlot, value: number): boolean {
  return ((slot.slab.view[slot.index] - value) | 0) >= 0;
}
