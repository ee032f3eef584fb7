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

/** Anything holding a device address: a DeviceBuffer, one of its views, or `{ ptr }` of your own. */
export interface HasDevicePointer {
  /** The device address (bigints above 2^53 are refused). */
  readonly ptr: number | bigint;
}
/** Device memory as the typed layer takes it: an object holding a device address (a DeviceBuffer, a
 *  view), or the address itself. Host typed arrays are refused (the GPU cannot write them). */
export type DeviceMemory = HasDevicePointer | number | bigint;
/** Host memory: a typed array, DataView or ArrayBuffer, or the address of host memory (pinned). */
export type HostMemory = ArrayBufferView | ArrayBuffer | number | bigint;
/** Memory a library takes in either space (cuBLAS's pointer mode): host buffers, device objects, addresses. */
export type AnyMemory = HasDevicePointer | ArrayBufferView | ArrayBuffer | number | bigint;

/** A complex number: `{ re, im }` or `[re, im]`. */
export type Complex =
  | {
      /** The real part. */
      readonly re: number;
      /** The imaginary part. */
      readonly im: number;
    }
  | readonly [number, number];
/**
 * A scalar passed by pointer (alpha, beta…), given as its value `V` (boxed for the call in host memory),
 * as a host buffer already holding it, or as `{ ptr }` device memory holding it (device pointer mode).
 * A number is never taken as an address here.
 */
export type ScalarArg<V> = V | ArrayBufferView | ArrayBuffer | HasDevicePointer;
/** A real or 32-bit integer scalar (`const float *alpha`, `const double *`, `const int *`, `const __half *`). */
export type RealScalar = ScalarArg<number>;
/** A 64-bit integer scalar: a number or a bigint. */
export type Int64Scalar = ScalarArg<number | bigint>;
/** A complex scalar (`const cuComplex *alpha`, `const cuDoubleComplex *`); a plain number is its real part. */
export type ComplexScalar = ScalarArg<Complex | number>;
/** A scalar whose C type another parameter picks (`const void *alpha` of cublasGemmEx, cuDNN, cuBLASLt):
 *  a typed array holding the value (a Float32Array for float, …) or `{ ptr }` device memory; a plain
 *  number is refused, its width being unknown. */
export type UntypedScalar = ArrayBufferView | ArrayBuffer | HasDevicePointer;
