// Run-time representations shared by every generated module.
//
// Handles (`CUstream`, `cudaEvent_t`, …) and device pointers are plain JS numbers: user-space addresses
// on x86-64 and aarch64 fit in 48 bits, far below 2^53, and numbers are the fastest values to pass
// through koffi. TypeScript brands keep them apart: a `CUstream` is not a `CUevent`. The driver's
// `CUstream` and the runtime's `cudaStream_t` name the same C struct and share one brand, so handles
// pass between the two APIs freely.

declare const handleTag: unique symbol;
/** An opaque CUDA handle: a number branded with its C struct tag. */
export type Handle<Tag extends string> = number & { readonly [handleTag]: Tag };
/** A device address (`CUdeviceptr`). */
export type DevicePointer = number & { readonly [handleTag]: 'CUdeviceptr' };
/** Anything koffi accepts for a `T*` parameter: an address, a typed array or buffer, or null. */
export type Pointer = number | bigint | ArrayBufferView | ArrayBuffer | null;
/** 64-bit integers: numbers in, bigint or number accepted. */
export type Int64 = number | bigint;

/** Normalises a 64-bit value koffi returned (number below 2^53, bigint above) to a number address. */
export function toAddress(v: number | bigint): number {
  if (typeof v === 'number' && v >= 0 && Number.isSafeInteger(v)) return v;
  if (typeof v === 'bigint' && v >= 0n && v <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(v);
  if (typeof v === 'bigint' && v >= 0n && v < 1n << 64n) throw new RangeError(`toAddress: v = 0x${v.toString(16)} does not fit in 53 bits`);
  const what = typeof v === 'bigint' ? `${v}n` : typeof v === 'number' ? String(v) : typeof v === 'string' ? JSON.stringify(v) : v === null ? 'null' : typeof v;
  const message = `toAddress: v must be a non-negative safe integer or a bigint below 2**64, got ${what}`;
  throw typeof v === 'number' || typeof v === 'bigint' ? new RangeError(message) : new TypeError(message);
}
