// Preallocated out-parameter storage. A koffi `_Out_` JS array costs 250-680 ns per call; a
// typed-array slot passed as `void *` costs ~20 ns. Each typed function owns a Scratch, so a
// callback re-entering another function never clobbers the slots a caller is about to read.
import { argError } from './validate';

/**
 * Out-parameter slots for the typed layer: one buffer of `slots` slots, passed to C through
 * {@link Scratch.slot} and read back through the typed views below (all views share the buffer).
 */
export class Scratch {
  /** The buffer as bytes. */
  readonly bytes: Uint8Array;
  /** The buffer as int8. */
  readonly i8: Int8Array;
  /** The buffer as int16. */
  readonly i16: Int16Array;
  /** The buffer as uint16. */
  readonly u16: Uint16Array;
  /** The buffer as int32. */
  readonly i32: Int32Array;
  /** The buffer as uint32. */
  readonly u32: Uint32Array;
  /** The buffer as int64. */
  readonly i64: BigInt64Array;
  /** The buffer as uint64. */
  readonly u64: BigUint64Array;
  /** The buffer as float. */
  readonly f32: Float32Array;
  /** The buffer as double. */
  readonly f64: Float64Array;
  private readonly slotViews: Uint8Array[];
  /** How many slots there are. */
  readonly slots: number;
  private readonly slotWords: number;

  /** Allocates `slots` slots of `slotBytes` bytes each (8: any scalar or pointer; a multiple of 8). */
  constructor(slots: number, slotBytes = 8) {
    if (!Number.isSafeInteger(slots) || slots < 1 || slots > 4096) throw scratchError('new Scratch', 'slots', 'an integer in [1, 4096]', slots);
    if (!Number.isSafeInteger(slotBytes) || slotBytes < 8 || slotBytes % 8 !== 0 || slotBytes > 65536)
      throw scratchError('new Scratch', 'slotBytes', 'a multiple of 8 in [8, 65536]', slotBytes);
    this.slots = slots;
    this.slotWords = slotBytes / 4;
    const buffer = new ArrayBuffer(slots * slotBytes);
    this.bytes = new Uint8Array(buffer);
    this.i8 = new Int8Array(buffer);
    this.i16 = new Int16Array(buffer);
    this.u16 = new Uint16Array(buffer);
    this.i32 = new Int32Array(buffer);
    this.u32 = new Uint32Array(buffer);
    this.i64 = new BigInt64Array(buffer);
    this.u64 = new BigUint64Array(buffer);
    this.f32 = new Float32Array(buffer);
    this.f64 = new Float64Array(buffer);
    this.slotViews = Array.from({ length: slots }, (_, i) => new Uint8Array(buffer, i * slotBytes, slotBytes));
  }

  /** The pointer argument for slot `i` (8 bytes, 8-aligned). */
  slot(i: number): Uint8Array {
    const view = this.slotViews[i];
    // an index past the end (or 1.5, or 'length') would reach C as NULL or as another value
    if (typeof i !== 'number' || view === undefined) throw scratchError('Scratch.slot', 'i', `a slot index in [0, ${this.slots})`, i);
    return view;
  }

  /** The first 8 bytes of slot `i` read as a 64-bit address, as a number (no BigInt allocation). */
  address(i: number): number {
    if (!(typeof i === 'number' && i >>> 0 === i && i < this.slots)) throw scratchError('Scratch.address', 'i', `a slot index in [0, ${this.slots})`, i);
    const at = i * this.slotWords;
    const hi = this.u32[at + 1];
    if (hi >= 0x200000) return Number(this.u64[at / 2]); // beyond 2^53: exact path (never an address)
    return hi * 0x100000000 + this.u32[at];
  }

  /** The first 8 bytes of slot `i` as an unsigned 64-bit number (sizes); exact below 2^53. */
  size(i: number): number {
    if (!(typeof i === 'number' && i >>> 0 === i && i < this.slots)) throw scratchError('Scratch.size', 'i', `a slot index in [0, ${this.slots})`, i);
    return this.address(i);
  }
}

function scratchError(method: string, param: string, expected: string, got: unknown): TypeError | RangeError {
  return argError(method, param, expected, got);
}
