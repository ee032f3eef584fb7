// Argument checks the typed layer runs before every FFI call. koffi converts NaN, 1.5 or 2**53+1 to
// some integer silently, takes any number as a pointer, and aborts the process when a record field
// has the wrong JS type, so nothing reaches it unchecked. Errors name the function and the parameter:
// `cuMemAlloc: bytesize must be a non-negative integer below 2**64, got 1.5`.
// Scalar checks are inlined by the generator (`(x | 0) !== x` for an int32); the helpers here take the
// cases that need more than one expression.
import { koffi } from './koffi';
import type { KoffiType } from './ffi';
import { hostByteLength } from './host-bytes';
import { INT_TEXT, argError, checkCaller, describeValue, intError, isAddress, isInt64, makeArgError, namesError } from './arg-errors';

export { argError, describeValue, intError } from './arg-errors';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** A 64-bit integer argument: a safe integer, or a bigint in range. Returns it unchanged. */
export function int64Arg(fn: string, param: string, v: unknown, signed: boolean): number | bigint {
  checkCaller('int64Arg', fn, param, signed, 'signed');
  if (isInt64(v, signed)) return v as number | bigint;
  throw intError(fn, param, signed ? 'i64' : 'u64', v);
}

/** A handle or device address: a non-negative safe integer (or bigint below 2**64); `null` → 0 when allowed. */
export function addressArg(fn: string, param: string, v: unknown, nullable: boolean): number | bigint {
  checkCaller('addressArg', fn, param, nullable);
  if (isAddress(v)) return v;
  if (v === null && nullable) return 0;
  throw argError(fn, param, `a non-negative safe integer address${nullable ? ' or null' : ''}`, v);
}

function byteLengthOf(v: unknown): number | undefined {
  return hostByteLength(v);
}

/** Memory passed as a pointer: an address, a host buffer (covering `size` bytes when given), or null. */
export function pointerArg(fn: string, param: string, v: unknown, nullable: boolean, size?: number | bigint): void {
  checkCaller('pointerArg', fn, param, nullable);
  if (size !== undefined && !isInt64(size, false))
    throw makeArgError('pointerArg', 'size', 'undefined or a non-negative safe integer (or bigint) byte count', size);
  if (v === null) {
    if (nullable) return;
    throw argError(fn, param, 'an address or a host buffer (not null)', v);
  }
  if (typeof v === 'number' || typeof v === 'bigint') {
    if (isAddress(v)) return;
    throw argError(fn, param, 'a non-negative safe integer (or bigint below 2**64) address, or a host buffer', v);
  }
  const length = byteLengthOf(v);
  if (length === undefined) throw argError(fn, param, `an address, an ArrayBuffer or a typed array${nullable ? ', or null' : ''}`, v);
  if (size !== undefined && length < Number(size)) {
    throw new RangeError(`${fn}: ${param} is a host buffer of ${length} bytes, shorter than the ${size} bytes the call touches`);
  }
}

/** A C callback argument: a registered koffi callback (or its address); null when allowed. */
export function callbackArg(fn: string, param: string, v: unknown, nullable: boolean): void {
  checkCaller('callbackArg', fn, param, nullable);
  // koffi.register returns the callback's address as a bigint
  if (v === null ? nullable : isAddress(v)) return;
  throw argError(fn, param, `a registered callback (the address koffi.register returns)${nullable ? ' or null' : ''}`, v);
}

/** A `const char *` argument: a string without a NUL character (C would see the string end there), or
 *  null when allowed. */
export function cstringArg(fn: string, param: string, v: unknown, nullable: boolean): void {
  checkCaller('cstringArg', fn, param, nullable);
  if (typeof v === 'string') {
    if (!v.includes('\0')) return;
    throw new TypeError(`${fn}: ${param} must not contain a NUL character (C would see the string end at index ${v.indexOf('\0')}), got ${describeValue(v)}`);
  }
  if (v === null && nullable) return;
  throw new TypeError(makeArgError(fn, param, `a string${nullable ? ' or null' : ''}`, v).message); // a number too: the wrong JS type
}

// ── records ──────────────────────────────────────────────────────────────────────────────────────
// A record argument is copied once into a plain object of our own (each property read exactly once),
// the copy checked, and the copy handed to koffi: a getter or Proxy answering a number when checked
// and a string when koffi reads again would otherwise make koffi abort the process (SIGABRT).

/** Copies a field as koffi will encode it, or returns FAIL after noting why (see {@link failed}). */
type Snapshot = (v: unknown) => unknown;

const FAIL: unique symbol = Symbol('cuda-ts record problem');
/** The last problem found: its text after the path, whether the JS type was wrong (TypeError, else
 *  RangeError), and the path's segments innermost first (built on the way out, never on success). */
let failText = '';
let failWrongType = false;
const failPath: string[] = [];

function failed(wrongType: boolean, text: string): typeof FAIL {
  failWrongType = wrongType;
  failText = text;
  failPath.length = 0;
  return FAIL;
}

interface KoffiInfo {
  primitive: string;
  size: number;
  length?: number;
  hint?: string;
  ref?: KoffiInfo;
  members?: Record<string, { name: string; type: KoffiInfo }>;
}

const INT_RANGES: Record<string, [number, number]> = {
  Int8: [-128, 127],
  UInt8: [0, 255],
  Int16: [-32768, 32767],
  UInt16: [0, 65535],
  Int32: [-2147483648, 2147483647],
  UInt32: [0, 4294967295],
};

/** A C string's text: any string but one holding a NUL (C would see it end there). */
function textProblem(v: string): typeof FAIL | string {
  return v.includes('\0') ? failed(true, `must not contain a NUL character (C would see the string end there), got ${describeValue(v)}`) : v;
}

function scalarSnapshot(info: KoffiInfo): Snapshot {
  const p = info.primitive;
  const range = INT_RANGES[p];
  if (range) {
    const [lo, hi] = range;
    return (v) =>
      typeof v === 'number' && Number.isInteger(v) && v >= lo && v <= hi
        ? v
        : failed(typeof v !== 'number', `must be an integer in [${lo}, ${hi}], got ${describeValue(v)}`);
  }
  if (p === 'Int64' || p === 'UInt64') {
    const signed = p === 'Int64';
    return (v) =>
      isInt64(v, signed) ? v : failed(typeof v !== 'number' && typeof v !== 'bigint', `must be ${INT_TEXT[signed ? 'i64' : 'u64']}, got ${describeValue(v)}`);
  }
  if (p === 'Float32' || p === 'Float64') return (v) => (typeof v === 'number' ? v : failed(true, `must be a number, got ${describeValue(v)}`));
  if (p === 'Bool') return (v) => (typeof v === 'boolean' ? v : failed(true, `must be a boolean, got ${describeValue(v)}`));
  if (p === 'String' || p === 'String16' || p === 'String32')
    return (v) => (v === null ? v : typeof v === 'string' ? textProblem(v) : failed(true, `must be a string or null, got ${describeValue(v)}`));
  if (p === 'Pointer' || p === 'Callback') {
    // a host buffer stands for its address: passed as it is (C may write through it)
    return (v) =>
      v === null || isAddress(v) || ArrayBuffer.isView(v)
        ? v
        : failed(typeof v !== 'number' && typeof v !== 'bigint', `must be an address or null, got ${describeValue(v)}`);
  }
  return () => failed(false, `has a C type this binding cannot encode (${p})`);
}

// The intrinsic accessors of typed arrays: an own `length` or `byteLength` property defined on the
// instance cannot make a view look shorter than the memory koffi copies.
const TypedArrayProto = Object.getPrototypeOf(Uint8Array.prototype) as object;
const intrinsic = (name: PropertyKey): ((this: unknown) => unknown) => Object.getOwnPropertyDescriptor(TypedArrayProto, name)!.get!;
const typedLength = intrinsic('length');
const typedBuffer = intrinsic('buffer');
const typedByteOffset = intrinsic('byteOffset');
const typedByteLength = intrinsic('byteLength');
const typedArrayName = intrinsic(Symbol.toStringTag); // undefined for anything but a typed array (a DataView too)

/** A typed array's bytes, copied (koffi copies a typed array in a record byte for byte). */
function typedArrayBytes(v: ArrayBufferView): Uint8Array {
  const view = new Uint8Array(typedBuffer.call(v) as ArrayBuffer, typedByteOffset.call(v) as number, typedByteLength.call(v) as number);
  return new Uint8Array(view);
}

function recordSnapshot(info: KoffiInfo): Snapshot {
  const members = Object.values(info.members ?? {}).map((m) => [m.name, buildSnapshot(m.type)] as const);
  const names = new Set(members.map(([n]) => n));
  const notObject = (v: unknown): typeof FAIL => failed(true, `must be an object, got ${describeValue(v)}`);
  const unknownField = (key: string): typeof FAIL => failed(true, `has no field "${key}" (fields: ${[...names].join(', ')})`);
  if (info.primitive === 'Record')
    return compiledStructSnapshot(members, names, notObject, unknownField) ?? unionSnapshot(members, names, notObject, unknownField, false);
  return unionSnapshot(members, names, notObject, unknownField, true);
}

/**
 * A struct's snapshot as straight-line code (compiled once per type): each field read into a local,
 * copied, and the copy returned as one object literal of a fixed shape (koffi encodes an undefined field
 * as zero, as it does an absent one). Undefined where the host forbids `new Function`. Field names
 * reach the source only as JSON string literals.
 */
function compiledStructSnapshot(
  members: readonly (readonly [string, Snapshot])[],
  names: Set<string>,
  notObject: (v: unknown) => typeof FAIL,
  unknownField: (key: string) => typeof FAIL,
): Snapshot | undefined {
  if (names.has('__proto__')) return undefined; // an object literal would set the prototype instead
  const reads = members.map(
    ([name], i) =>
      `const f${i} = v[${JSON.stringify(name)}]; let c${i}; if (f${i} !== undefined && (c${i} = s[${i}](f${i})) === FAIL) return failAt(${JSON.stringify(`.${name}`)});`,
  );
  const source = `return function snapshot(v) {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || ArrayBuffer.isView(v)) return notObject(v);
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) if (!names.has(keys[i])) return unknownField(keys[i]);
  ${reads.join('\n  ')}
  return { ${members.map(([name], i) => `${JSON.stringify(name)}: c${i}`).join(', ')} };
};`;
  const failAt = (segment: string): typeof FAIL => (failPath.push(segment), FAIL);
  try {
    return new Function('s', 'FAIL', 'names', 'notObject', 'unknownField', 'failAt', source)(
      members.map(([, f]) => f),
      FAIL,
      names,
      notObject,
      unknownField,
      failAt,
    ) as Snapshot;
  } catch {
    return undefined; // no code generation here (a CSP, --disallow-code-generation-from-strings)
  }
}

/** A union's snapshot (or a struct's where code cannot be compiled): only the members set are copied. */
function unionSnapshot(
  members: readonly (readonly [string, Snapshot])[],
  names: Set<string>,
  notObject: (v: unknown) => typeof FAIL,
  unknownField: (key: string) => typeof FAIL,
  isUnion: boolean,
): Snapshot {
  return (v) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v) || ArrayBuffer.isView(v)) return notObject(v);
    for (const key of Object.keys(v)) {
      if (!names.has(key)) return unknownField(key);
    }
    const out: Record<string, unknown> = {};
    let set = 0;
    for (const [name, snapshot] of members) {
      const field = (v as Record<string, unknown>)[name]; // the one read of this property
      if (field === undefined) continue; // absent fields encode as zero
      set++;
      const copy = snapshot(field);
      if (copy === FAIL) return (failPath.push(`.${name}`), FAIL);
      out[name] = copy;
    }
    if (isUnion && set > 1) return failed(false, `is a union: set one member, not ${set}`);
    return out;
  };
}

function arraySnapshot(info: KoffiInfo): Snapshot {
  const n = info.length ?? 0;
  const elem = buildSnapshot(info.ref!);
  const text = info.hint === 'String';
  return (v) => {
    if (text && typeof v === 'string') return Buffer.byteLength(v) < n ? textProblem(v) : failed(false, `must be shorter than ${n} bytes`);
    if (ArrayBuffer.isView(v) && typedArrayName.call(v) !== undefined) {
      const count = typedLength.call(v) as number;
      return count <= n ? typedArrayBytes(v) : failed(false, `holds at most ${n} elements, got ${count}`);
    }
    if (!Array.isArray(v)) return failed(true, `must be an array${text ? ' or a string' : ''} of at most ${n} elements, got ${describeValue(v)}`);
    const length: unknown = v.length; // a Proxy may answer anything
    if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0)
      return failed(true, `must be an array with a length, got a length of ${describeValue(length)}`);
    if (length > n) return failed(false, `holds at most ${n} elements, got ${length}`);
    const out: unknown[] = [];
    for (let i = 0; i < length; i++) {
      const copy = elem(v[i]);
      if (copy === FAIL) return (failPath.push(`[${i}]`), FAIL);
      out.push(copy);
    }
    return out;
  };
}

function buildSnapshot(info: KoffiInfo): Snapshot {
  if (info.primitive === 'Record' || info.primitive === 'Union') return recordSnapshot(info);
  if (info.primitive === 'Array') return arraySnapshot(info);
  return scalarSnapshot(info);
}

interface RecordFacts {
  /** The checked copy of a record value, or FAIL. */
  snapshot: Snapshot;
  size: number;
}
const recordFacts = new WeakMap<object, RecordFacts>();

/** The snapshot function and size of a koffi record or union type; a TypeError naming `helper` for anything else.
 *  @internal (for the support package's own helpers) */
export function recordFactsOf(helper: string, type: unknown): RecordFacts {
  if (typeof helper !== 'string') throw new TypeError(`recordFactsOf: helper must be a string, got ${describeValue(helper)}`);
  const known = typeof type === 'object' && type !== null ? recordFacts.get(type) : undefined;
  if (known) return known;
  let info: KoffiInfo | undefined;
  try {
    info = typeof type === 'object' && type !== null ? (koffi as unknown as { type(t: unknown): KoffiInfo }).type(type) : undefined;
  } catch {
    info = undefined; // not a koffi type object
  }
  if (!info || (info.primitive !== 'Record' && info.primitive !== 'Union')) {
    throw new TypeError(
      `${helper}: type must be a koffi struct or union type (a module's records.X()), got ${info ? `a koffi ${info.primitive} type` : describeValue(type)}`,
    );
  }
  const facts = { snapshot: buildSnapshot(info), size: info.size };
  recordFacts.set(type as object, facts);
  return facts;
}

/** The TypeError (wrong JS type) or RangeError (out of range) for the problem just found under `path`. */
function recordProblem(fn: string, path: string): TypeError | RangeError {
  const message = `${fn}: ${path}${failPath.reverse().join('')} ${failText}`;
  failPath.length = 0;
  return failWrongType ? new TypeError(message) : new RangeError(message);
}

/** `value` copied into plain objects and arrays of our own, each property read once, and checked: what
 *  koffi can encode as `type` (every field's JS type, no unknown field); throws naming `fn` and `path`. */
function snapshotRecord(fn: string, path: string, snapshot: Snapshot, value: unknown): object {
  const copy = snapshot(value);
  if (copy === FAIL) throw recordProblem(fn, path);
  return copy as object;
}

/** Checks a record argument and returns its copy, which is what to pass: a plain object read once
 *  from `value` (getters and Proxies answer once), every field's JS type checked, no unknown field. */
export function checkRecord<T>(fn: string, param: string, type: KoffiType, value: T): T {
  if (typeof fn !== 'string' || typeof param !== 'string') throw namesError('checkRecord', fn, param);
  return snapshotRecord(fn, param, recordFactsOf('checkRecord', type).snapshot, value) as T;
}

/** A record argument behind a pointer: a record object (copied once, checked, then encoded) or bytes
 *  already encoded (at least the record's size); null when allowed. Returns what to pass. */
export function recordArg(
  fn: string,
  param: string,
  type: KoffiType,
  value: unknown,
  nullable: boolean,
  into?: Uint8Array,
): Uint8Array | ArrayBufferView | ArrayBuffer | null {
  checkCaller('recordArg', fn, param, nullable);
  const { snapshot, size } = recordFactsOf('recordArg', type);
  if (into !== undefined && !(into instanceof Uint8Array && hostByteLength(into)! >= size))
    throw (into instanceof Uint8Array ? RangeError : TypeError)(
      makeArgError('recordArg', 'into', `undefined or a Uint8Array of at least ${size} bytes`, into).message,
    );
  if (value === null && nullable) return null;
  const length = byteLengthOf(value);
  if (length !== undefined) {
    if (length < size) throw new RangeError(`${fn}: ${param} is ${length} bytes, shorter than the ${size}-byte record`);
    return value as ArrayBufferView | ArrayBuffer;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw argError(fn, param, `a record object or its encoded bytes${nullable ? ', or null' : ''}`, value);
  const copy = snapshotRecord(fn, param, snapshot, value);
  const buf = into ?? new Uint8Array(size);
  if (into) into.fill(0);
  koffi.encode(buf, type, copy);
  return buf;
}

/** Records in an array: objects (each copied once and checked) or bytes holding whole records. Returns the bytes. */
export function recordArrayArg(fn: string, param: string, type: KoffiType, value: unknown, nullable: boolean): { bytes: Uint8Array | null; count: number } {
  checkCaller('recordArrayArg', fn, param, nullable);
  const { snapshot, size } = recordFactsOf('recordArrayArg', type);
  if (value === null && nullable) return { bytes: null, count: 0 };
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
    const bytes = value instanceof ArrayBuffer ? new Uint8Array(value) : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    if (bytes.byteLength % size !== 0) throw new RangeError(`${fn}: ${param} is ${bytes.byteLength} bytes, not a whole number of ${size}-byte records`);
    return { bytes, count: bytes.byteLength / size };
  }
  if (!Array.isArray(value)) throw argError(fn, param, `an array of records or their encoded bytes${nullable ? ', or null' : ''}`, value);
  const count: unknown = value.length; // read once: a Proxy may answer anything
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0 || count > 0x7fffffff / size)
    throw argError(fn, param, 'an array of records (with a length)', value);
  const copies: object[] = [];
  for (let i = 0; i < count; i++) copies.push(snapshotRecord(fn, `${param}[${i}]`, snapshot, value[i]));
  const bytes = new Uint8Array(Math.max(1, count) * size);
  for (let i = 0; i < count; i++) koffi.encode(bytes, i * size, type, copies[i]);
  return { bytes, count };
}

/** Decodes `count` records laid out back to back in `bytes` (which must hold them all). */
export function decodeRecords<T>(type: KoffiType, bytes: Uint8Array, count: number): T[] {
  const { size } = recordFactsOf('decodeRecords', type);
  if (!(bytes instanceof Uint8Array)) throw new TypeError(makeArgError('decodeRecords', 'bytes', 'a Uint8Array', bytes).message);
  if (!Number.isSafeInteger(count) || count < 0) throw makeArgError('decodeRecords', 'count', 'a non-negative safe integer', count);
  if (bytes.byteLength < count * size)
    throw new RangeError(`decodeRecords: count = ${count} records of ${size} bytes do not fit in bytes (${bytes.byteLength} bytes)`);
  const out: T[] = [];
  for (let i = 0; i < count; i++) out.push(koffi.decode(bytes.subarray(i * size, (i + 1) * size), type) as T);
  return out;
}

// ── scalar arrays ────────────────────────────────────────────────────────────────────────────────

type ArrayCtor =
  | Int8ArrayConstructor
  | Uint8ArrayConstructor
  | Int16ArrayConstructor
  | Uint16ArrayConstructor
  | Int32ArrayConstructor
  | Uint32ArrayConstructor
  | BigInt64ArrayConstructor
  | BigUint64ArrayConstructor
  | Float32ArrayConstructor
  | Float64ArrayConstructor;
const ARRAYS: Record<string, ArrayCtor> = {
  i8: Int8Array,
  u8: Uint8Array,
  i16: Int16Array,
  u16: Uint16Array,
  i32: Int32Array,
  u32: Uint32Array,
  i64: BigInt64Array,
  u64: BigUint64Array,
  f32: Float32Array,
  f64: Float64Array,
  bool: Uint8Array,
};
/** The typed arrays each element type takes (by their tag, so that views from another realm pass too). */
const ARRAY_TAGS: Record<string, string[]> = Object.fromEntries(
  Object.entries(ARRAYS).map(([key, Ctor]) => [key, Ctor === Uint8Array ? ['Uint8Array', 'Uint8ClampedArray'] : [Ctor.name]]),
);

/** An array of C scalars (`i32`, `u64`, `f32`, `bool`, `address`…): the matching typed array passes as
 *  it is; a JS array is checked element by element and copied. Returns what to pass and its length. */
export function scalarArrayArg(fn: string, param: string, ctype: string, value: unknown, nullable: boolean): { data: ArrayBufferView | null; count: number } {
  checkCaller('scalarArrayArg', fn, param, nullable);
  const key = ctype === 'address' ? 'u64' : ctype;
  const Ctor = typeof key === 'string' && Object.prototype.hasOwnProperty.call(ARRAYS, key) ? ARRAYS[key] : undefined;
  if (!Ctor) throw makeArgError('scalarArrayArg', 'ctype', `one of address, ${Object.keys(ARRAYS).join(', ')}`, ctype);
  if (value === null && nullable) return { data: null, count: 0 };
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    // the exact element type: an Int8Array for u8 (or Uint32Array for i32) would reach C as other values
    if (!(value instanceof Ctor) && !ARRAY_TAGS[key].includes(Object.prototype.toString.call(value).slice(8, -1))) {
      throw new RangeError(`${fn}: ${param} must hold ${key} elements (${ARRAY_TAGS[key].join(' or ')}), got a ${value.constructor.name}`);
    }
    return { data: value, count: (value as unknown as { length: number }).length };
  }
  if (!Array.isArray(value)) throw argError(fn, param, `a ${Ctor.name} or an array of numbers${nullable ? ', or null' : ''}`, value);
  const out = new Ctor(Math.max(1, value.length));
  for (let i = 0; i < value.length; i++) {
    const v = value[i];
    if (key === 'f32' || key === 'f64') {
      if (typeof v !== 'number') throw argError(fn, `${param}[${i}]`, 'a number', v);
      (out as Float64Array)[i] = v;
    } else if (key === 'bool') {
      if (typeof v !== 'boolean') throw argError(fn, `${param}[${i}]`, 'a boolean', v);
      (out as Uint8Array)[i] = v ? 1 : 0;
    } else if (key === 'i64' || key === 'u64') {
      const x = ctype === 'address' ? addressArg(fn, `${param}[${i}]`, v, true) : int64Arg(fn, `${param}[${i}]`, v, key === 'i64');
      (out as BigInt64Array)[i] = BigInt(x);
    } else {
      const bits = Ctor.BYTES_PER_ELEMENT * 8;
      const signed = key.startsWith('i');
      const lo = signed ? -(2 ** (bits - 1)) : 0;
      const hi = signed ? 2 ** (bits - 1) - 1 : 2 ** bits - 1;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) throw intError(fn, `${param}[${i}]`, key, v);
      (out as Int32Array)[i] = v;
    }
  }
  return { data: out, count: value.length };
}

/** `const char *const *`: strings copied into NUL-terminated storage, their addresses in a table.
 *  Keep the result alive until the call returns. */
export function stringArrayArg(
  fn: string,
  param: string,
  value: unknown,
  nullable: boolean,
): { data: BigUint64Array | null; count: number; storage: ArrayBuffer[] } {
  checkCaller('stringArrayArg', fn, param, nullable);
  if (value === null && nullable) return { data: null, count: 0, storage: [] };
  if (value instanceof BigUint64Array) return { data: value, count: value.length, storage: [] };
  if (!Array.isArray(value)) throw argError(fn, param, `an array of strings${nullable ? ', or null' : ''}`, value);
  const storage: ArrayBuffer[] = [];
  const table = new BigUint64Array(Math.max(1, value.length));
  value.forEach((s, i) => {
    if (typeof s !== 'string') throw argError(fn, `${param}[${i}]`, 'a string', s);
    if (s.includes('\0')) throw new TypeError(`${fn}: ${param}[${i}] contains a NUL character`);
    const bytes = Buffer.from(s, 'utf8');
    const ab = new ArrayBuffer(bytes.length + 1);
    new Uint8Array(ab).set(bytes);
    storage.push(ab);
    table[i] = BigInt(koffi.address(ab) as unknown as number | bigint);
  });
  return { data: value.length ? table : null, count: value.length, storage };
}

/** Arrays whose lengths one count parameter gives: all of the same length. `counts[i]` is the
 *  length of array `names[i]`, taken into account where `present[i]` (the array was given). */
export function sameLength(fn: string, names: string[], counts: number[], present: boolean[]): number {
  if (typeof fn !== 'string') throw namesError('sameLength', fn, '');
  checkLengths(names, counts, present);
  let n = -1;
  for (let i = 0; i < counts.length; i++) {
    if (!present[i]) continue;
    if (n >= 0 && counts[i] !== n) throw new RangeError(`${fn}: ${names.join(', ')} must have the same length (got ${counts.join(', ')})`);
    n = counts[i];
  }
  return Math.max(0, n);
}

/** sameLength's own arguments: three arrays of one length, of names, element counts and flags. */
function checkLengths(names: unknown, counts: unknown, present: unknown): void {
  if (!Array.isArray(names)) throw makeArgError('sameLength', 'names', 'an array of strings', names);
  for (let i = 0; i < names.length; i++) if (typeof names[i] !== 'string') throw makeArgError('sameLength', `names[${i}]`, 'a string', names[i]);
  if (!Array.isArray(counts) || counts.length !== names.length)
    throw makeArgError('sameLength', 'counts', `an array of ${names.length} element counts`, counts);
  if (!Array.isArray(present) || present.length !== names.length) throw makeArgError('sameLength', 'present', `an array of ${names.length} booleans`, present);
  for (let i = 0; i < names.length; i++) {
    const c = counts[i] as unknown;
    if (typeof present[i] !== 'boolean') throw makeArgError('sameLength', `present[${i}]`, 'a boolean', present[i]);
    if (!Number.isSafeInteger(c) || (c as number) < 0) throw makeArgError('sameLength', `counts[${i}]`, 'a non-negative safe integer', c);
  }
}

/** An array given with an explicit count: it must hold at least that many elements. */
export function coversCount(fn: string, param: string, length: number, count: number | bigint, countName: string): void {
  // the common case in one expression (generated calls make it per call); anything else is checked in full below
  if (
    typeof count === 'number' &&
    typeof length === 'number' &&
    length >= 0 &&
    length <= MAX_SAFE &&
    count <= length &&
    count >= -MAX_SAFE &&
    count % 1 === 0 &&
    length % 1 === 0 &&
    typeof fn === 'string' &&
    typeof param === 'string' &&
    typeof countName === 'string'
  )
    return;
  if (typeof fn !== 'string' || typeof param !== 'string') throw namesError('coversCount', fn, param);
  if (typeof countName !== 'string') throw makeArgError('coversCount', 'countName', 'a string', countName);
  if (!Number.isSafeInteger(length) || length < 0) throw makeArgError('coversCount', 'length', 'a non-negative safe integer', length);
  if (!isInt64(count, true)) throw makeArgError('coversCount', 'count', 'a safe integer or a bigint', count);
  if (length < count) throw new RangeError(`${fn}: ${param} holds ${length} elements, fewer than ${countName} = ${count}`);
}

/** A byte length the typed layer allocates (text buffers, counts): an integer in [0, 2**31). */
export function allocLength(fn: string, param: string, n: number | bigint): number {
  if (typeof n === 'number' && n >= 0 && n <= 0x7fffffff && n % 1 === 0 && typeof fn === 'string' && typeof param === 'string') return n;
  if (typeof fn !== 'string' || typeof param !== 'string') throw namesError('allocLength', fn, param);
  if (typeof n === 'number' ? Number.isInteger(n) && n >= 0 && n <= 0x7fffffff : typeof n === 'bigint' && n >= 0n && n <= 0x7fffffffn) return Number(n);
  if (typeof n === 'number' || typeof n === 'bigint')
    throw new RangeError(`${fn}: ${param} = ${describeValue(n)} is not a buffer length this call can allocate (an integer in [0, 2**31))`);
  throw makeArgError(fn, param, 'an integer buffer length', n);
}

/**
 * Raw layer: what may stand for a C pointer. null, an address (a non-negative safe integer or a bigint
 * below 2**64), or host memory: a typed array, DataView, ArrayBuffer or SharedArrayBuffer, which must
 * cover `bytes` (the pointee the call writes; 0 when unknown) and, for a typed array, hold elements of
 * `elemBytes` (or bytes). Strings (koffi would pass a temporary copy the call overruns), undefined and
 * other objects are refused. The generated raw functions inline the common cases and call this for the rest.
 */
export function rawCovers(fn: string, param: string, v: unknown, bytes: number, elemBytes: number): void {
  if (typeof fn !== 'string' || typeof param !== 'string') throw namesError('rawCovers', fn, param);
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw makeArgError('rawCovers', 'bytes', 'a non-negative safe integer', bytes);
  if (!Number.isSafeInteger(elemBytes) || elemBytes < 1) throw makeArgError('rawCovers', 'elemBytes', 'a positive safe integer', elemBytes);
  if (v === null || isAddress(v)) return;
  if (typeof v === 'number' || typeof v === 'bigint')
    throw makeArgError(fn, param, 'an address (a non-negative safe integer or a bigint below 2**64), null or host memory', v);
  const length = byteLengthOf(v);
  if (length === undefined) throw makeArgError(fn, param, 'a typed array, DataView, ArrayBuffer, an address or null', v);
  if (length < bytes) throw new RangeError(`${fn}: ${param} is ${length} bytes, shorter than the ${bytes}-byte value the call writes`);
  const bpe = (v as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT;
  if (elemBytes > 1 && bpe !== undefined && bpe !== 1 && bpe !== elemBytes) {
    throw new RangeError(`${fn}: ${param} holds ${bpe}-byte elements; the call writes ${elemBytes}-byte values (use a matching typed array or a Uint8Array)`);
  }
}

/** The largest address the typed layer takes as a number (2**53 - 1); larger ones must be bigints. */
export const MAX_SAFE_INTEGER_ADDRESS = MAX_SAFE;

/** The address of a host buffer (off-heap ArrayBuffer storage does not move). */
export function addressOf(buf: ArrayBufferView | ArrayBuffer): number | bigint {
  if (byteLengthOf(buf) === undefined) throw new TypeError(makeArgError('addressOf', 'buf', 'a typed array, DataView or ArrayBuffer', buf).message);
  return koffi.address(buf as unknown as ArrayBuffer) as unknown as number | bigint;
}

// ── memory spaces and scalars by pointer ─────────────────────────────────────────────────────────

/** The device address an object holds (`{ ptr }`: a DeviceBuffer, a view), or undefined when it holds none. */
function heldAddress(v: unknown): number | bigint | undefined {
  if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return undefined;
  if (!('ptr' in v)) return undefined;
  const p = (v as { ptr: unknown }).ptr;
  return isAddress(p) ? p : undefined;
}

/** Device memory: an address, `{ ptr }` (a DeviceBuffer, a view) or null where allowed; a host buffer
 *  is refused (the library would read or write host memory as if it were the GPU's). Returns the address. */
export function deviceArg(fn: string, param: string, v: unknown, nullable: boolean): number | bigint | null {
  checkCaller('deviceArg', fn, param, nullable);
  if (isAddress(v)) return v;
  if (v === null && nullable) return null;
  const held = heldAddress(v);
  if (held !== undefined) return held;
  if (byteLengthOf(v) !== undefined)
    throw new TypeError(`${fn}: ${param} needs device memory (a DeviceBuffer, a view of one, or a device address), got ${describeValue(v)} in host memory`);
  throw argError(fn, param, `device memory (a DeviceBuffer, a view of one, { ptr }, or a device address)${nullable ? ' or null' : ''}`, v);
}

/** Throws unless `bytes` (a helper's byte count to cover) is undefined or a non-negative count. */
function checkBytes(helper: string, bytes: unknown): void {
  if (bytes !== undefined && !isInt64(bytes, false))
    throw makeArgError(helper, 'bytes', 'undefined or a non-negative safe integer (or bigint) byte count', bytes);
}

/** Host memory: a host buffer covering `bytes` when given, a host address, or null where allowed; an
 *  object holding a device address is refused. */
export function hostArg(fn: string, param: string, v: unknown, nullable: boolean, bytes?: number | bigint): void {
  checkCaller('hostArg', fn, param, nullable);
  checkBytes('hostArg', bytes);
  if (heldAddress(v) !== undefined)
    throw new TypeError(`${fn}: ${param} needs host memory (a typed array, DataView or ArrayBuffer), got ${describeValue(v)} holding a device address`);
  pointerArg(fn, param, v, nullable, bytes);
}

/** Memory in either space (the library looks at the pointer mode): host buffers (covering `bytes` when
 *  given), addresses, `{ ptr }` device memory, null where allowed. Returns what to pass. */
export function memoryArg(fn: string, param: string, v: unknown, nullable: boolean, bytes?: number | bigint): unknown {
  checkCaller('memoryArg', fn, param, nullable);
  checkBytes('memoryArg', bytes);
  const held = heldAddress(v);
  if (held !== undefined) return held;
  pointerArg(fn, param, v, nullable, bytes);
  return v;
}

const SCALAR_BYTES: Record<string, number> = { f16: 2, bf16: 2, f32: 4, f64: 8, c64: 8, c128: 16, i8: 1, u8: 1, i32: 4, u32: 4, i64: 8, u64: 8, untyped: 2 };
const SCALAR_TEXT: Record<string, string> = {
  f16: 'a number (stored as a half)',
  bf16: 'a number (stored as a bfloat16)',
  f32: 'a number',
  f64: 'a number',
  c64: 'a complex number ({ re, im }, [re, im] or a real number)',
  c128: 'a complex number ({ re, im }, [re, im] or a real number)',
  i8: INT_TEXT.i8,
  u8: INT_TEXT.u8,
  i32: INT_TEXT.i32,
  u32: INT_TEXT.u32,
  i64: INT_TEXT.i64,
  u64: INT_TEXT.u64,
};

/** IEEE binary16 bits of a number (round to nearest even), for `const __half *` scalars. */
export function halfBits(x: number): number {
  if (typeof x !== 'number') throw new TypeError(makeArgError('halfBits', 'x', 'a number', x).message);
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer)[0];
  const sign = (u >>> 16) & 0x8000;
  const exp = (u >>> 23) & 0xff;
  let mant = u & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // Inf, NaN
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow: Inf
  if (e <= 0) {
    // a subnormal half: round the whole 24-bit significand once (shifting first would drop the bits
    // that decide a value just above halfway)
    if (e < -10) return sign; // below half the smallest subnormal: ±0
    mant |= 0x800000;
    const shift = 14 - e;
    const kept = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    return sign | (kept + (rest > mid || (rest === mid && (kept & 1) === 1) ? 1 : 0));
  }
  const rounded = (mant + 0xfff + ((mant >>> 13) & 1)) >>> 13;
  return (sign | (e << 10)) + rounded; // a carry rolls into the exponent, as rounding should
}

/** The two parts of a complex value, or undefined when `v` is not one. */
export function complexParts(v: unknown): [number, number] | undefined {
  if (typeof v === 'number') return [v, 0]; // a real number: no imaginary part
  // each part read once: a getter answering a number, then something else, cannot slip past
  const [re, im] = Array.isArray(v)
    ? v.length === 2
      ? [v[0], v[1]]
      : []
    : typeof v === 'object' && v !== null && !ArrayBuffer.isView(v)
      ? [(v as { re?: unknown }).re, (v as { im?: unknown }).im]
      : [];
  return typeof re === 'number' && typeof im === 'number' ? [re, im] : undefined;
}

/** Writes value `v` of scalar type `type` into `box` (little-endian); false when `v` is no such value. */
function boxScalar(type: string, v: unknown, box: DataView): boolean {
  if (type === 'c64' || type === 'c128') {
    const c = complexParts(v);
    if (!c) return false;
    if (type === 'c64') {
      box.setFloat32(0, c[0], true);
      box.setFloat32(4, c[1], true);
    } else {
      box.setFloat64(0, c[0], true);
      box.setFloat64(8, c[1], true);
    }
    return true;
  }
  if (type === 'i64' || type === 'u64') {
    if (!isInt64(v, type === 'i64')) return false;
    if (type === 'i64') box.setBigInt64(0, BigInt(v as number | bigint), true);
    else box.setBigUint64(0, BigInt(v as number | bigint), true);
    return true;
  }
  if (typeof v !== 'number') return false;
  if (type === 'f32') box.setFloat32(0, v, true);
  else if (type === 'f64') box.setFloat64(0, v, true);
  else if (type === 'f16') box.setUint16(0, halfBits(v), true);
  else if (type === 'bf16') box.setUint16(0, bfloat16Bits(v), true);
  if (type[0] === 'f' || type === 'bf16') return true;
  const [lo, hi] = type === 'i8' ? [-128, 127] : type === 'u8' ? [0, 255] : type === 'i32' ? [-(2 ** 31), 2 ** 31 - 1] : [0, 2 ** 32 - 1];
  if (!Number.isInteger(v) || v < lo || v > hi) return false;
  if (type === 'i8') box.setInt8(0, v);
  else if (type === 'u8') box.setUint8(0, v);
  else if (type === 'i32') box.setInt32(0, v, true);
  else box.setUint32(0, v, true);
  return true;
}

/** bfloat16 bits of a number (round to nearest even; NaN kept quiet). */
export function bfloat16Bits(x: number): number {
  const u = new Uint32Array(new Float32Array([x]).buffer)[0];
  if ((u & 0x7fffffff) > 0x7f800000) return ((u >>> 16) | 0x40) & 0xffff;
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}

/**
 * A scalar passed by pointer (alpha, beta…) of C type `type` in memory space `space`: its value (boxed
 * into `box`, the function's own scratch, and `box` returned), a host buffer holding it (returned as it
 * is), or `{ ptr }` device memory (its address returned; refused for a host-only scalar). A number is
 * the value, never an address; an `untyped` scalar (`const void *` typed by another parameter) refuses it.
 */
export function scalarArg(fn: string, param: string, type: string, space: string, v: unknown, box: Uint8Array): unknown {
  if (typeof fn !== 'string' || typeof param !== 'string') throw namesError('scalarArg', fn, param);
  if (typeof type !== 'string' || !Object.hasOwn(SCALAR_BYTES, type))
    throw makeArgError('scalarArg', 'type', `one of ${Object.keys(SCALAR_BYTES).join(', ')}`, type);
  if (space !== 'device' && space !== 'host' && space !== 'either') throw makeArgError('scalarArg', 'space', 'device, host or either', space);
  if (!(box instanceof Uint8Array) || box.buffer.byteLength - box.byteOffset < SCALAR_BYTES[type])
    throw makeArgError('scalarArg', 'box', `a Uint8Array with ${SCALAR_BYTES[type]} bytes from its start`, box);
  const where = space === 'host' ? 'a host buffer holding it' : 'a host buffer holding it, or { ptr } device memory';
  const held = heldAddress(v);
  if (held !== undefined) {
    if (space === 'host')
      throw new TypeError(
        `${fn}: ${param} is read from host memory: pass the value or a host buffer holding it, not ${describeValue(v)} holding a device address`,
      );
    return held;
  }
  const length = byteLengthOf(v);
  if (length !== undefined) {
    if (length < SCALAR_BYTES[type]) throw new RangeError(`${fn}: ${param} is ${length} bytes, shorter than the ${SCALAR_BYTES[type]}-byte ${type} scalar`);
    return v;
  }
  if (type === 'untyped') {
    throw new TypeError(
      `${fn}: ${param} is a scalar whose C type another argument picks: pass a typed array holding the value (a Float32Array for float, a Float64Array for double…)${space === 'host' ? '' : ' or { ptr } device memory'}, got ${describeValue(v)}`,
    );
  }
  if (boxScalar(type, v, new DataView(box.buffer, box.byteOffset, SCALAR_BYTES[type]))) return box;
  const expected = `${SCALAR_TEXT[type]} (the value itself, never an address), or ${where}`;
  throw typeof v === 'number' || typeof v === 'bigint'
    ? new RangeError(`${fn}: ${param} must be ${expected}, got ${describeValue(v)}`)
    : new TypeError(`${fn}: ${param} must be ${expected}, got ${describeValue(v)}`);
}
