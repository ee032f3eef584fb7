// Host buffer lengths read from the engine, not from properties.
// The engine's own byteLength getters: they read the object's internal slot, so an own or inherited
// `byteLength` property a caller defines cannot make a buffer look longer than it is (C would then
// read or write past it). They work on views and buffers of any realm.
const TYPED_ARRAY_BYTE_LENGTH = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype) as object, 'byteLength')!.get!;
const DATA_VIEW_BYTE_LENGTH = Object.getOwnPropertyDescriptor(DataView.prototype, 'byteLength')!.get!;
const ARRAY_BUFFER_BYTE_LENGTH = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength')!.get!;
const SHARED_BYTE_LENGTH =
  typeof SharedArrayBuffer === 'undefined' ? undefined : Object.getOwnPropertyDescriptor(SharedArrayBuffer.prototype, 'byteLength')!.get!;

/** The bytes a host buffer (typed array, DataView, Buffer, ArrayBuffer) really spans; undefined for anything else. */
export function hostByteLength(v: unknown): number | undefined {
  if (ArrayBuffer.isView(v)) {
    try {
      return TYPED_ARRAY_BYTE_LENGTH.call(v) as number;
    } catch {
      return DATA_VIEW_BYTE_LENGTH.call(v) as number;
    }
  }
  if (typeof v !== 'object' || v === null) return undefined;
  try {
    return ARRAY_BUFFER_BYTE_LENGTH.call(v) as number;
  } catch {
    if (SHARED_BYTE_LENGTH === undefined) return undefined;
    try {
      return SHARED_BYTE_LENGTH.call(v) as number;
    } catch {
      return undefined;
    }
  }
}
