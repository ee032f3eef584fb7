// How the typed layer spells one scalar element (generator/semantics `Elem`) in generated code: its TS
// types, the JS check that guards it before the FFI call (koffi would convert a bad number silently or
// abort on a wrong type), how it is read from and written to a scratch slot, how arrays of it are
// allocated and returned, and the encoders/decoders of attribute-typed values.
import type { Elem } from '../semantics';

const MAX_SAFE = '9007199254740991';

/** The C type tag of a scalar element for the run-time array helpers (`i32`, `u64`, `f32`, …). */
export function ctypeTag(e: Elem): string {
  switch (e.t) {
    case 'int':
      return `${e.signed ? 'i' : 'u'}${e.bits}`;
    case 'enum':
      return `${e.signed ? 'i' : 'u'}${e.bits}`;
    case 'float':
      return `f${e.bits}`;
    case 'bool':
      return 'bool';
    default:
      return 'address'; // handles, device pointers, addresses
  }
}

/** TS type of one element as the typed layer returns it. */
export function elemType(e: Elem): string {
  switch (e.t) {
    case 'int':
      if (e.brand) return `T.${e.brand}`;
      return e.bits === 64 && !e.size ? 'bigint' : 'number';
    case 'float':
      return 'number';
    case 'bool':
      return 'boolean';
    case 'enum':
    case 'handle':
    case 'deviceptr':
      return e.name === 'DevicePointer' ? 'T.DevicePointer' : `T.${e.name}`;
    case 'address':
      return 'number';
    case 'cstring':
      return 'string | null';
    case 'record':
      return `T.${e.name}`;
  }
}

/** TS type of one element as the typed layer takes it. */
export function elemInType(e: Elem): string {
  if (e.t === 'int' && e.bits === 64) return 'T.Int64';
  if (e.t === 'cstring') return 'string';
  if (e.t === 'address') return 'number | bigint';
  return elemType(e);
}

/** TS type of a returned array of elements. */
export function arrayType(e: Elem): string {
  switch (e.t) {
    case 'int':
      if (e.bits === 64) return e.size ? 'number[]' : e.signed ? 'BigInt64Array' : 'BigUint64Array';
      return `${e.signed ? 'Int' : 'Uint'}${e.bits}Array`;
    case 'enum':
      return `${elemType(e)}[]`;
    case 'float':
      return e.bits === 32 ? 'Float32Array' : 'Float64Array';
    case 'bool':
      return 'boolean[]';
    default:
      return `${elemType(e)}[]`;
  }
}

/** JS that throws unless `v` is a valid value of element `e` (and, for 64-bit values, normalises). */
export function checkScalar(fn: string, name: string, v: string, e: Elem, nullable: boolean): string[] {
  const where = `'${fn}', '${name}'`;
  switch (e.t) {
    case 'int':
    case 'enum': {
      const tag = `${e.signed ? 'i' : 'u'}${e.bits}`;
      if (e.bits === 64)
        return [
          `if (typeof ${v} !== 'number' || !(${v} >= ${e.signed ? `-${MAX_SAFE}` : '0'} && ${v} <= ${MAX_SAFE}) || Math.floor(${v}) !== ${v}) int64Arg(${where}, ${v}, ${e.signed});`,
        ];
      // the typeof first: a bigint would make the bit operations throw a TypeError naming nothing
      const test =
        `typeof ${v} !== 'number' || ` +
        (e.bits === 32
          ? e.signed
            ? `(${v} | 0) !== ${v}`
            : `(${v} >>> 0) !== ${v}`
          : e.bits === 16
            ? e.signed
              ? `((${v} << 16) >> 16) !== ${v}`
              : `(${v} & 0xffff) !== ${v}`
            : e.signed
              ? `((${v} << 24) >> 24) !== ${v}`
              : `(${v} & 0xff) !== ${v}`);
      return [`if (${test}) throw intError(${where}, '${tag}', ${v});`];
    }
    case 'float':
      return [`if (typeof ${v} !== 'number') throw argError(${where}, 'a number', ${v});`];
    case 'bool':
      return [`if (typeof ${v} !== 'boolean') throw argError(${where}, 'a boolean', ${v});`];
    case 'handle':
    case 'deviceptr':
    case 'address':
      return [
        `if (typeof ${v} !== 'number' || !(${v} >= 0 && ${v} <= ${MAX_SAFE}) || Math.floor(${v}) !== ${v}) ${v} = addressArg(${where}, ${v}, ${nullable}) as typeof ${v};`,
      ];
    case 'cstring':
      // a NUL inside would end the string early in C
      return [`if (typeof ${v} === 'string' ? ${v}.includes('\\0') : ${nullable ? `${v} !== null` : 'true'}) cstringArg(${where}, ${v}, ${nullable});`];
    case 'record':
      return [`${v} = checkRecord(${where}, records.${e.name}(), ${v});`];
  }
}

/**
 * Slot `i`'s eight bytes as an unsigned number, from its two 32-bit halves: what Scratch.address(i)
 * returns (exact below 2^53, beyond rounded once, as Number(bigint) rounds), read inline: the method
 * call cost ~1-1.5 ns a call under Bun and Deno on a handle returned by a trivial call.
 */
function slotNumber(i: number): string {
  return `(s.u32[${2 * i + 1}] * 4294967296 + s.u32[${2 * i}])`;
}

/** Whether `readSlot` makes element `e` from the slot's two 32-bit halves (a number that may exceed 2^31): read off readSlot itself. */
export function readsAsNumber64(e: Elem): boolean {
  return e.t !== 'record' && readSlot(e, 0).startsWith(slotNumber(0));
}

/** Reads slot `i` of the scratch as element `e`. */
export function readSlot(e: Elem, i: number): string {
  switch (e.t) {
    case 'int':
      if (e.bits === 64) return e.size ? slotNumber(i) : e.signed ? `s.i64[${i}]` : `s.u64[${i}]`;
      if (e.bits === 32) return `${e.signed ? `s.i32[${2 * i}]` : `s.u32[${2 * i}]`}${e.brand ? ` as T.${e.brand}` : ''}`;
      if (e.bits === 16) return e.signed ? `s.i16[${4 * i}]` : `s.u16[${4 * i}]`;
      return e.signed ? `s.i8[${8 * i}]` : `s.bytes[${8 * i}]`;
    case 'float':
      return e.bits === 32 ? `s.f32[${2 * i}]` : `s.f64[${i}]`;
    case 'bool':
      return `s.bytes[${8 * i}] !== 0`;
    case 'enum': {
      const v =
        e.bits === 64
          ? `Number(s.i64[${i}])`
          : e.bits === 16
            ? `s.${e.signed ? 'i16' : 'u16'}[${4 * i}]`
            : e.bits === 8
              ? `s.${e.signed ? 'i8' : 'bytes'}[${8 * i}]`
              : e.signed
                ? `s.i32[${2 * i}]`
                : `s.u32[${2 * i}]`;
      return `${v} as ${elemType(e)}`;
    }
    case 'handle':
    case 'deviceptr':
      return `${slotNumber(i)} as ${elemType(e)}`;
    case 'address':
      return slotNumber(i);
    case 'cstring':
      return `readCString(s.address(${i}))`;
    case 'record':
      throw new Error('records are not read from scratch slots');
  }
}

/**
 * Zeroes slot `i` of the scratch: one float64 store of 0 (all eight bytes zero), not `u64[i] = 0n`,
 * whose BigInt store costs ~10 ns a call under Bun (JavaScriptCore); V8 does both alike.
 */
export function zeroSlot(i: number): string {
  return `s.f64[${i}] = 0;`;
}

/** Writes value `v` (already checked) into slot `i` of the scratch as element `e`. */
export function writeSlot(e: Elem, i: number, v: string): string {
  const bits = e.t === 'int' || e.t === 'enum' ? e.bits : e.t === 'float' ? e.bits : e.t === 'bool' ? 8 : 64;
  const signed = e.t === 'int' || e.t === 'enum' ? e.signed : false;
  if (e.t === 'float') return e.bits === 32 ? `s.f32[${2 * i}] = ${v};` : `s.f64[${i}] = ${v};`;
  if (e.t === 'bool') return `${zeroSlot(i)} s.bytes[${8 * i}] = ${v} ? 1 : 0;`;
  if (bits === 64) return `s.${signed ? 'i64' : 'u64'}[${i}] = BigInt(${/^\d+$/.test(v) ? v : `${v} as number | bigint`});`;
  if (bits === 32) return `${zeroSlot(i)} s.${signed ? 'i32' : 'u32'}[${2 * i}] = ${v};`;
  if (bits === 16) return `${zeroSlot(i)} s.${signed ? 'i16' : 'u16'}[${4 * i}] = ${v};`;
  return `${zeroSlot(i)} s.${signed ? 'i8' : 'bytes'}[${8 * i}] = ${v};`;
}

/** An array the call fills, returned in the element's JS form. */
export function allocArray(e: Elem, n: string): string {
  if (e.t === 'record') return `new Uint8Array(Math.max(1, ${n}) * ${e.size})`;
  const tag = ctypeTag(e);
  const ctor: Record<string, string> = {
    i8: 'Int8Array',
    u8: 'Uint8Array',
    i16: 'Int16Array',
    u16: 'Uint16Array',
    i32: 'Int32Array',
    u32: 'Uint32Array',
    i64: 'BigInt64Array',
    u64: 'BigUint64Array',
    f32: 'Float32Array',
    f64: 'Float64Array',
    bool: 'Uint8Array',
    address: 'BigUint64Array',
  };
  return `new ${ctor[tag]}(Math.max(1, ${n}))`;
}
export function finishArray(e: Elem, a: string, n: string): string {
  if (e.t === 'record') return `decodeRecords<T.${e.name}>(records.${e.name}(), ${a}, ${n})`;
  if (e.t === 'bool') return `Array.from(${a}.subarray(0, ${n}), (b) => b !== 0)`;
  if (e.t === 'int' && e.bits === 64 && e.size) return `Array.from(${a}.subarray(0, ${n}), Number)`;
  if (e.t === 'handle' || e.t === 'deviceptr' || e.t === 'address') return `Array.from(${a}.subarray(0, ${n}), (x) => Number(x) as ${elemType(e)})`;
  if (e.t === 'enum') return `Array.from(${a}.subarray(0, ${n}), (x) => x as ${elemType(e)})`;
  return `${a}.slice(0, ${n})`;
}
export function attrDecoder(fn: string, attr: string, cases: { value: string; elem: Elem }[], union: string): string {
  const lines = cases.map((c) => {
    const e = c.elem;
    let read: string;
    if (e.t === 'record') read = `decodeRecord<T.${e.name}>(records.${e.name}(), cell)`;
    else if (e.t === 'bool') read = 'cell[0] !== 0';
    else if (e.t === 'float') read = e.bits === 32 ? 'v.getFloat32(0, true)' : 'v.getFloat64(0, true)';
    else if (e.t === 'int' && e.bits === 64 && !e.size) read = e.signed ? 'v.getBigInt64(0, true)' : 'v.getBigUint64(0, true)';
    else if (e.t === 'int' && e.bits === 32) read = e.signed ? 'v.getInt32(0, true)' : 'v.getUint32(0, true)';
    else if (e.t === 'int' && e.bits === 16) read = e.signed ? 'v.getInt16(0, true)' : 'v.getUint16(0, true)';
    else if (e.t === 'int' && e.bits === 8) read = e.signed ? 'v.getInt8(0)' : 'v.getUint8(0)';
    else if (e.t === 'enum' && e.bits === 32) read = `${e.signed ? 'v.getInt32(0, true)' : 'v.getUint32(0, true)'} as ${elemType(e)}`;
    else read = `Number(v.getBigUint64(0, true))${e.t === 'handle' || e.t === 'deviceptr' ? ` as ${elemType(e)}` : ''}`;
    return `case ${c.value}: return ${read};`;
  });
  return `function attrDecode(a: number, cell: Uint8Array): ${union} { const v = new DataView(cell.buffer, cell.byteOffset, cell.byteLength); void v; switch (a) { ${lines.join(' ')} default: throw new RangeError(\`${fn}: ${attr} \${a} has no known value type\`); } }`;
}

/** TS type of an attribute value as a setter takes it. */
export function attrInType(e: Elem): string {
  if (e.t === 'int' && e.bits === 64) return 'T.Int64';
  if (e.t === 'deviceptr') return 'T.DeviceMemory';
  if (e.t === 'address') return 'number | bigint';
  return elemType(e);
}

/** The byte size of an attribute value of element `e`. */
function attrByteSize(e: Elem): number {
  if (e.t === 'int' || e.t === 'enum' || e.t === 'float') return e.bits / 8;
  if (e.t === 'bool') return 1;
  if (e.t === 'record') return e.size;
  return 8; // handles, addresses
}

/** `attrBytes(a)`: the size of attribute `a`'s value, what the setters and getters pass as its size. */
export function attrSizer(fn: string, attr: string, cases: { value: string; elem: Elem }[]): string {
  const bySize = new Map<number, string[]>();
  for (const c of cases) bySize.set(attrByteSize(c.elem), [...(bySize.get(attrByteSize(c.elem)) ?? []), c.value]);
  const lines = [...bySize].map(([n, values]) => `${values.map((v) => `case ${v}:`).join(' ')} return ${n};`);
  return `function attrBytes(a: number): number { switch (a) { ${lines.join(' ')} default: throw new RangeError(\`${fn}: ${attr} \${a} has no known value type\`); } }`;
}

/** The statement writing attribute value `x` of element `e` into `cell` (through DataView `v`). */
function attrWrite(fn: string, param: string, e: Elem): string {
  if (e.t === 'bool') return `if (typeof x !== 'boolean' && x !== 0 && x !== 1) throw argError('${fn}', '${param}', 'a boolean', x); cell[0] = x ? 1 : 0;`;
  if (e.t === 'float')
    return `if (typeof x !== 'number') throw argError('${fn}', '${param}', 'a number', x); v.${e.bits === 32 ? 'setFloat32' : 'setFloat64'}(0, x, true);`;
  if ((e.t === 'int' || e.t === 'enum') && e.bits <= 32) {
    const tag = `${e.signed ? 'i' : 'u'}${e.bits}`;
    const test =
      e.bits === 32
        ? e.signed
          ? '(x | 0) !== x'
          : '(x >>> 0) !== x'
        : e.bits === 16
          ? e.signed
            ? '((x << 16) >> 16) !== x'
            : '(x & 0xffff) !== x'
          : e.signed
            ? '((x << 24) >> 24) !== x'
            : '(x & 0xff) !== x';
    const set =
      e.bits === 32 ? (e.signed ? 'setInt32' : 'setUint32') : e.bits === 16 ? (e.signed ? 'setInt16' : 'setUint16') : e.signed ? 'setInt8' : 'setUint8';
    return `if (typeof x !== 'number' || ${test}) throw intError('${fn}', '${param}', '${tag}', x); v.${set}(0, x${e.bits > 8 ? ', true' : ''});`;
  }
  if (e.t === 'int' && e.signed) return `v.setBigInt64(0, BigInt(int64Arg('${fn}', '${param}', x, true)), true);`;
  if (e.t === 'record') return `throw argError('${fn}', '${param}', 'a settable attribute', x);`;
  if (e.t === 'deviceptr') return `v.setBigUint64(0, BigInt(deviceArg('${fn}', '${param}', x, true) ?? 0), true);`;
  return `v.setBigUint64(0, BigInt(int64Arg('${fn}', '${param}', x, false)), true);`;
}

export function attrEncoder(fn: string, param: string, attr: string, cases: { value: string; elem: Elem }[]): string {
  const lines = cases.map((c) => `case ${c.value}: { ${attrWrite(fn, param, c.elem)} return cell; }`);
  return `function attrEncode(a: number, x: unknown): Uint8Array { const cell = new Uint8Array(16); const v = new DataView(cell.buffer); void v; switch (a) { ${lines.join(' ')} default: throw new RangeError(\`${fn}: ${attr} \${a} has no known value type\`); } }`;
}
