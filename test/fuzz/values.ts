// The values the fuzz feeds: bad ones (wrong JS types and edge numbers), neutral valid ones for the
// other parameters, and the rule deciding which values a parameter kind must accept — a value that is
// valid for the kind is never sent as a bad case.
import type { FuzzParam } from './model';

/** Bad-value ids; the child process builds each value from its id (values cross as JSON). */
export const BAD_VALUES = {
  NaN: () => NaN,
  Infinity: () => Infinity,
  '-Infinity': () => -Infinity,
  '-1': () => -1,
  '1.5': () => 1.5,
  '2**31': () => 2 ** 31,
  '2**32+1': () => 2 ** 32 + 1,
  '2**53+1': () => 2 ** 53 + 1,
  '2**64': () => 2 ** 64,
  '-1n': () => -1n,
  '2n**63n': () => 2n ** 63n,
  '2n**64n': () => 2n ** 64n,
  "'x'": () => 'x',
  "'1'": () => '1',
  "''": () => '',
  '{}': () => ({}),
  '{bad:"x"}': () => ({ bad: 'x' }),
  '[]': () => [],
  null: () => null,
  undefined: () => undefined,
  true: () => true,
  function: () => () => 0,
  'Uint8Array(1)': () => new Uint8Array(1),
  /** An object holding a device address (a DeviceBuffer's shape): refused where host memory is needed. */
  '{ptr:4096}': () => ({ ptr: 4096 }),
  '{re:1,im:2}': () => ({ re: 1, im: 2 }),
} as const satisfies Record<string, () => unknown>;

export type BadValueId = keyof typeof BAD_VALUES;
export const BAD_VALUE_IDS = Object.keys(BAD_VALUES) as BadValueId[];

/** An argument the child builds: a neutral valid value, or a bad one by id. */
export type ArgSpec =
  | { n: 'zero' }
  | { n: 'int'; v: number }
  | { n: 'null' }
  | { n: 'object' }
  | { n: 'true' }
  | { n: 'str' }
  | { n: 'false' }
  | { n: 'bytes'; size: number }
  | { n: 'jsarray' }
  | { n: 'fn' }
  | { n: 'typed'; ctor: TypedArrayName; length: number }
  | { n: 'arraybuffer'; size: number }
  | { n: 'dataview'; size: number }
  | { bad: BadValueId }
  | { badField: string }
  /** A value of the support-API fuzz, by id (see support-api.ts). */
  | { s: string };

const TYPED_ARRAYS = { Uint8Array, Int16Array, Int32Array, Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array };

export type TypedArrayName = 'Uint8Array' | 'Int16Array' | 'Int32Array' | 'Uint32Array' | 'Float32Array' | 'Float64Array' | 'BigInt64Array' | 'BigUint64Array';

/** Where a record's size is unknown, a zeroed buffer this large stands in (bigger than any CUDA record). */
export const UNKNOWN_RECORD_BYTES = 1 << 16;

/**
 * Valid values for a parameter, the one that asks the least of C first: 0, null, '', a zeroed record, an
 * empty array. When the typed layer refuses one (a case rejected naming this parameter instead of the one
 * under test), the harness retries that function's cases with the next.
 */
export function neutralCandidates(p: FuzzParam): ArgSpec[] {
  switch (p.accepts) {
    case 'int':
    case 'enum':
      // an attribute-typed value needs an attribute with a known type: try a few small ones
      return [{ n: 'zero' }, { n: 'int', v: 1 }, { n: 'int', v: 2 }, { n: 'int', v: 3 }, { n: 'int', v: 4 }];
    case 'float':
      return [{ n: 'zero' }, { n: 'int', v: 1 }];
    case 'bool':
      return [{ n: 'false' }, { n: 'true' }];
    case 'handle':
    case 'deviceptr':
      return p.nullable ? [{ n: 'null' }, { n: 'zero' }] : [{ n: 'zero' }];
    case 'string':
      return p.nullable ? [{ n: 'str' }, { n: 'null' }] : [{ n: 'str' }];
    case 'record':
      return [{ n: 'bytes', size: p.recordSize ?? UNKNOWN_RECORD_BYTES }, { n: 'object' }];
    case 'array':
      return [{ n: 'jsarray' }, { n: 'typed', ctor: 'Uint8Array', length: 0 }];
    case 'buffer':
      return [
        { n: 'bytes', size: 16 },
        { n: 'bytes', size: 4096 },
      ];
    case 'pointer':
      return p.nullable ? [{ n: 'null' }, { n: 'bytes', size: 64 }, { n: 'zero' }] : [{ n: 'bytes', size: 64 }, { n: 'zero' }];
    case 'callback':
      return p.nullable ? [{ n: 'null' }, { n: 'fn' }] : [{ n: 'fn' }];
    case 'scalar':
      // a host buffer holding the value: valid for every scalar type and space
      return [{ n: 'bytes', size: 16 }];
    case 'device':
      return p.nullable ? [{ n: 'null' }, { n: 'zero' }] : [{ n: 'zero' }];
    case 'host':
    case 'memory':
      return p.nullable ? [{ n: 'null' }, { n: 'bytes', size: 64 }, { n: 'zero' }] : [{ n: 'bytes', size: 64 }, { n: 'zero' }];
  }
}

/** The first neutral candidate. */
export function neutral(p: FuzzParam): ArgSpec {
  return neutralCandidates(p)[0];
}

export function materialise(a: ArgSpec): unknown {
  if ('bad' in a) return BAD_VALUES[a.bad]();
  if ('s' in a) return (require('./support-api') as typeof import('./support-api')).supportValue(a.s);
  if ('badField' in a) return { [a.badField]: 'x' }; // a string in a numeric/pointer/record field: koffi.encode aborts on it
  switch (a.n) {
    case 'zero':
      return 0;
    case 'int':
      return a.v;
    case 'object':
      return {};
    case 'true':
      return true;
    case 'null':
      return null;
    case 'str':
      return '';
    case 'false':
      return false;
    case 'bytes':
      return new Uint8Array(a.size);
    case 'jsarray':
      return [];
    case 'fn':
      return () => undefined;
    case 'typed':
      return new TYPED_ARRAYS[a.ctor](a.length);
    case 'arraybuffer':
      return new ArrayBuffer(a.size);
    case 'dataview':
      // a view into a larger buffer: a call writing past the view's end would land in real memory
      return new DataView(new ArrayBuffer(a.size + 16), 8, a.size);
  }
}

export type Validity = 'valid' | 'bad' | 'unsure';

function intRange(bits: number, signed: boolean): [bigint, bigint] {
  const b = BigInt(bits);
  return signed ? [-(1n << (b - 1n)), (1n << (b - 1n)) - 1n] : [0n, (1n << b) - 1n];
}

function isIntIn(v: unknown, bits: number, signed: boolean): boolean {
  const [lo, hi] = intRange(bits, signed);
  if (typeof v === 'number') return Number.isSafeInteger(v) && BigInt(v) >= lo && BigInt(v) <= hi;
  if (typeof v === 'bigint') return bits === 64 && v >= lo && v <= hi;
  return false;
}

/** A non-negative safe integer, or a bigint below 2**64: an address or handle value. */
function isAddress(v: unknown): boolean {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0;
  if (typeof v === 'bigint') return v >= 0n && v < 1n << 64n;
  return false;
}

const isBinary = (v: unknown): boolean => ArrayBuffer.isView(v) || v instanceof ArrayBuffer;
const isPlainObject = (v: unknown): boolean => typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

/**
 * Whether the typed layer must accept `v` for `p` (the contract with generator/semantics), must reject
 * it, or may do either (a plain object for a record: valid when its fields are; never sent as bad).
 */
export function validity(p: FuzzParam, v: unknown): Validity {
  if (v === null) return p.nullable ? 'valid' : 'bad';
  if (v === undefined) return p.optional ? 'valid' : 'bad';
  const yes = (ok: boolean): Validity => (ok ? 'valid' : 'bad');
  // an attribute-typed value: whether a number is in range depends on the attribute chosen
  if (p.attribute && (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean')) return 'unsure';
  switch (p.accepts) {
    case 'int':
    case 'enum':
      return yes(isIntIn(v, p.bits ?? 32, p.signed ?? true));
    case 'float':
      return yes(typeof v === 'number');
    case 'bool':
      return yes(typeof v === 'boolean');
    case 'handle':
    case 'deviceptr':
      return yes(isAddress(v));
    case 'string':
      return yes(typeof v === 'string');
    case 'record':
      if (isPlainObject(v)) return 'unsure';
      if (v instanceof Uint8Array || v instanceof ArrayBuffer) {
        return p.recordSize === undefined ? 'unsure' : yes(v.byteLength >= p.recordSize);
      }
      return isBinary(v) ? 'unsure' : 'bad';
    case 'array':
      return yes(Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView)));
    case 'buffer':
      return yes(isBinary(v));
    case 'pointer':
      return yes(isAddress(v) || isBinary(v));
    case 'callback':
      return yes(typeof v === 'function' || isAddress(v) || isBinary(v));
    case 'device':
      return yes(isAddress(v) || holdsAddress(v));
    case 'host':
      return yes(isAddress(v) || isBinary(v));
    case 'memory':
      return yes(isAddress(v) || isBinary(v) || holdsAddress(v));
    case 'scalar':
      return scalarValidity(p, v);
  }
}

/** `{ ptr }` holding an address: a DeviceBuffer's shape. */
function holdsAddress(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !isBinary(v) && 'ptr' in v && isAddress((v as { ptr: unknown }).ptr);
}

const SCALAR_BYTES: Record<string, number> = { f16: 2, bf16: 2, f32: 4, f64: 8, c64: 8, c128: 16, i8: 1, u8: 1, i32: 4, u32: 4, i64: 8, u64: 8, untyped: 2 };

/** A scalar by pointer: its value (never an address), a host buffer holding it, or `{ ptr }` device memory where the space allows. */
function scalarValidity(p: FuzzParam, v: unknown): Validity {
  const type = p.scalar ?? 'untyped';
  if (isBinary(v)) return (v as ArrayBufferView).byteLength >= SCALAR_BYTES[type] ? 'valid' : 'bad';
  if (holdsAddress(v)) return p.space === 'host' ? 'bad' : 'valid';
  if (type === 'untyped') return 'bad';
  if (type === 'c64' || type === 'c128') {
    const pair = Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === 'number');
    const obj = typeof v === 'object' && v !== null && typeof (v as { re?: unknown }).re === 'number' && typeof (v as { im?: unknown }).im === 'number';
    return pair || obj || typeof v === 'number' ? 'valid' : 'bad';
  }
  if (type[0] === 'f' || type === 'bf16') return typeof v === 'number' ? 'valid' : 'bad';
  return isIntIn(v, Number(type.slice(1)), type[0] === 'i') ? 'valid' : 'bad';
}
