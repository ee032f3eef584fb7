// koffi type objects for C records, built on first use: defining a struct costs ~20 µs, and a module
// has hundreds, so importing a module defines none. Types are anonymous in koffi (names are global
// there, and two releases of one struct must coexist in one process).
import { type TypeObject } from 'koffi';
import { koffi } from './koffi';
import { lazyMember } from './lazy';
import { forEachRecordLine, readRecordSpec } from './tables/records';
import { argError, checkRecord, recordFactsOf } from './validate';

/** A koffi type object. */
export type KoffiType = TypeObject;
/** A record field's type: a koffi type name, a type object, or a lazy record's getter. */
export type FieldType = string | KoffiType | (() => KoffiType);
/** Layout details of a record field. */
export interface FieldOptions {
  /** Array length: the field is `type[n]`. */
  n?: number;
  /** How koffi decodes an array: as a JS array, or a string (char arrays). */
  hint?: 'Array' | 'String';
  /** Explicit alignment where the C layout differs from natural alignment (`aligned(N)`, packing). */
  align?: number;
}
/** One field of a record: name, type and options, in C order. */
export type FieldSpec = [name: string, type: FieldType, options?: FieldOptions];

function resolve(t: FieldType): string | KoffiType {
  return typeof t === 'function' ? t() : t;
}

/** A lazily built koffi struct or union; call it to get the type. */
export function lazyRecord(kind: 'struct' | 'union', fields: () => FieldSpec[], pack?: number): () => KoffiType {
  if (kind !== 'struct' && kind !== 'union') throw argError('lazyRecord', 'kind', "'struct' or 'union'", kind);
  if (typeof fields !== 'function') throw argError('lazyRecord', 'fields', 'a function returning the fields', fields);
  if (pack !== undefined && !(Number.isSafeInteger(pack) && pack >= 0))
    throw argError('lazyRecord', 'pack', 'undefined or a non-negative integer (non-zero: packed)', pack);
  let type: KoffiType | undefined;
  return () => {
    if (type) return type;
    const members: Record<string, string | KoffiType> = {};
    for (const [name, t, o] of fields()) {
      const base = resolve(t);
      const member = o?.n !== undefined ? koffi.array(base, o.n, o.hint ?? 'Array') : base;
      members[name] = o?.align ? ([o.align, member] as unknown as KoffiType) : member;
    }
    type = kind === 'struct' ? (pack ? koffi.pack(members) : koffi.struct(members)) : koffi.union(members);
    return type;
  };
}

/**
 * Defines a generated module's `records` from one table string (see ./tables/records):
 * `exports.records` is made on its first read, and each koffi type in it on its first call.
 */
export function lazyRecords(exports: Record<string, unknown>, table: string): void {
  if (typeof exports !== 'object' || exports === null) throw argError('lazyRecords', 'exports', "a module's exports object", exports);
  if (typeof table !== 'string') throw argError('lazyRecords', 'table', 'a records table string (see support/tables/records)', table);
  lazyMember(exports, 'records', () => recordsOf(table));
}

/** The record getters of a records table (see lazyRecords): one small closure per record. */
function recordsOf(table: string): Record<string, () => KoffiType> {
  const out: Record<string, () => KoffiType> = {};
  forEachRecordLine(table, (name, spec) => {
    let type: KoffiType | undefined;
    out[name] = () => (type ??= buildRecord(spec, out));
  });
  return out;
}

function buildRecord(spec: string, records: Record<string, () => KoffiType>): KoffiType {
  const { kind, fields } = readRecordSpec(spec);
  const members: Record<string, string | KoffiType> = {};
  for (const f of fields) {
    const dims = f.dims ?? [];
    let base: string | KoffiType = f.record ? records[f.type]() : f.type;
    for (let i = 0; i < dims.length - 1; i++) base = koffi.array(base, dims[i]);
    const member = dims.length ? koffi.array(base, dims[dims.length - 1], f.text ? 'String' : 'Array') : base;
    members[f.name] = f.align ? ([f.align, member] as unknown as KoffiType) : member;
  }
  return kind === 'union' ? koffi.union(members) : koffi.struct(members);
}

/** Encodes `value` (a record object: copied once into a plain object, every field of the copy
 *  checked, unknown fields refused) as `type` into `into` (zeroed first; at least the record's size)
 *  or a new buffer. Only the copy reaches koffi, so a getter or Proxy is read once. */
export function encodeRecord(type: KoffiType, value: object, into?: Uint8Array): Uint8Array {
  const { size } = recordFactsOf('encodeRecord', type);
  if (into !== undefined && !(into instanceof Uint8Array && into.byteLength >= size))
    throw (into instanceof Uint8Array ? RangeError : TypeError)(
      argError('encodeRecord', 'into', `undefined or a Uint8Array of at least ${size} bytes`, into).message,
    );
  const copy = checkRecord('encodeRecord', 'value', type, value);
  const buf = into ?? new Uint8Array(size);
  if (into) into.fill(0, 0, size);
  koffi.encode(buf, type, copy);
  return buf;
}

/** Decodes a record of koffi type `type` from bytes (at least the record's size) into a plain object. */
export function decodeRecord<T>(type: KoffiType, from: Uint8Array | ArrayBuffer): T {
  const { size } = recordFactsOf('decodeRecord', type);
  // an address here would make koffi read wherever it points
  const length = ArrayBuffer.isView(from) || isArrayBuffer(from) ? from.byteLength : undefined;
  if (length === undefined) throw new TypeError(argError('decodeRecord', 'from', 'a Uint8Array or an ArrayBuffer', from).message);
  if (length < size) throw new RangeError(`decodeRecord: from is ${length} bytes, shorter than the ${size}-byte record`);
  return koffi.decode(from, type) as T;
}

/** Reads a NUL-terminated C string at an address (0, 0n or null: null). The address must be one C
 *  gave: any other makes the process read where it points. */
export function readCString(address: number | bigint): string | null {
  if (address === 0 || address === 0n || address === null) return null;
  if (
    !(typeof address === 'number' ? address >= 4096 && Number.isSafeInteger(address) : typeof address === 'bigint' && address >= 4096n && address < 1n << 64n)
  ) {
    throw argError('readCString', 'address', 'an address C returned (an integer of at least 4096, or a bigint below 2**64), 0 or null', address);
  }
  return koffi.decode(address, 'char', -1) as string;
}

/** True for values the typed layer passes through as raw pointers rather than encoding: null, an
 *  address (a non-negative safe integer or a bigint below 2**64), a typed array, DataView or ArrayBuffer. */
export function isPointerLike(v: unknown): v is number | bigint | ArrayBufferView | ArrayBuffer | null {
  if (typeof v === 'number') return v >= 0 && Number.isSafeInteger(v);
  if (typeof v === 'bigint') return v >= 0n && v < 1n << 64n;
  return v === null || ArrayBuffer.isView(v) || isArrayBuffer(v);
}

const utf8 = new TextDecoder();
/** Text of a NUL-terminated C string written into a buffer. */
export function textFrom(bytes: Uint8Array): string {
  if (!(bytes instanceof Uint8Array) && !isUint8Array(bytes)) throw new TypeError(argError('textFrom', 'bytes', 'a Uint8Array', bytes).message);
  const end = bytes.indexOf(0);
  return utf8.decode(end < 0 ? bytes : bytes.subarray(0, end));
}

/** Realm-safe type checks: views from koffi or another vm context fail `instanceof`. */
export function isArrayBuffer(v: unknown): v is ArrayBuffer {
  return v instanceof ArrayBuffer || Object.prototype.toString.call(v) === '[object ArrayBuffer]';
}
/** True for a DataView, from any realm. */
export function isDataView(v: unknown): v is DataView {
  return Object.prototype.toString.call(v) === '[object DataView]';
}
/** True for a Uint8Array (Node Buffers included), from any realm. */
export function isUint8Array(v: unknown): v is Uint8Array {
  return ArrayBuffer.isView(v) && Object.prototype.toString.call(v) === '[object Uint8Array]';
}
