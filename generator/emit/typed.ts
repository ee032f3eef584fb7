// Emits `index.ts`: the typed layer, from the parameter-semantics model (generator/semantics). Each
// function checks every argument in JS (koffi would convert or crash on bad values), calls the C
// function, throws the module's CudaError subclass on a failing status, and returns the outputs (one
// value, or an object named as in C). Scalar outputs go through a per-function preallocated Scratch.
import { supportSpecifier } from '../support-path';
import type { FunctionDecl } from '../ir/schema';
import { resolveModule, takesTypedArg, type Elem, type FunctionSem, type ModuleOverrides, type ParamSem, type Sem } from '../semantics';
import { overridesFor } from '../semantics/overrides';
import { cSignature, functionNotes, qualify, rawParamType, type EmitContext } from './raw';
import { safeIdent } from './model';
import { Writer } from './writer';
import { chunkPlan, writeStubs, type StubFn } from './lazy';

/** Names the typed layer's function bodies use for themselves: parameters must not shadow them. */
const TYPED_LOCALS = new Set(['s', 'status', 'raw', 'T', 'records', 'fail', 'result', 'describe', 'n', 'call']);
export function typedIdent(name: string): string {
  const base = safeIdent(name);
  return TYPED_LOCALS.has(base) ? `${base}_` : base;
}

const MAX_SAFE = '9007199254740991';

/** The C type tag of a scalar element for the run-time array helpers (`i32`, `u64`, `f32`, …). */
function ctypeTag(e: Elem): string {
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
function elemType(e: Elem): string {
  switch (e.t) {
    case 'int':
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
function elemInType(e: Elem): string {
  if (e.t === 'int' && e.bits === 64) return 'T.Int64';
  if (e.t === 'cstring') return 'string';
  if (e.t === 'address') return 'number | bigint';
  return elemType(e);
}

/** TS type of a returned array of elements. */
function arrayType(e: Elem): string {
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

/** Bytes one element takes in C. */
function elemBytes(e: Elem): number {
  switch (e.t) {
    case 'int':
    case 'float':
      return e.bits / 8;
    case 'enum':
      return e.bits / 8;
    case 'bool':
      return 1;
    case 'record':
      return e.size;
    default:
      return 8;
  }
}

/** JS that throws unless `v` is a valid value of element `e` (and, for 64-bit values, normalises). */
function checkScalar(fn: string, name: string, v: string, e: Elem, nullable: boolean): string[] {
  const where = `'${fn}', '${name}'`;
  switch (e.t) {
    case 'int':
    case 'enum': {
      const tag = `${e.signed ? 'i' : 'u'}${e.bits}`;
      if (e.bits === 64) return [`if (typeof ${v} !== 'number' || !(${v} >= ${e.signed ? `-${MAX_SAFE}` : '0'} && ${v} <= ${MAX_SAFE}) || ${v} % 1 !== 0) int64Arg(${where}, ${v}, ${e.signed});`];
      // the typeof first: a bigint would make the bit operations throw a TypeError naming nothing
      const test = `typeof ${v} !== 'number' || ` + (
        e.bits === 32 ? (e.signed ? `(${v} | 0) !== ${v}` : `(${v} >>> 0) !== ${v}`)
        : e.bits === 16 ? (e.signed ? `((${v} << 16) >> 16) !== ${v}` : `(${v} & 0xffff) !== ${v}`)
        : e.signed ? `((${v} << 24) >> 24) !== ${v}` : `(${v} & 0xff) !== ${v}`);
      return [`if (${test}) throw intError(${where}, '${tag}', ${v});`];
    }
    case 'float':
      return [`if (typeof ${v} !== 'number') throw argError(${where}, 'a number', ${v});`];
    case 'bool':
      return [`if (typeof ${v} !== 'boolean') throw argError(${where}, 'a boolean', ${v});`];
    case 'handle':
    case 'deviceptr':
    case 'address':
      return [`if (typeof ${v} !== 'number' || !(${v} >= 0 && ${v} <= ${MAX_SAFE}) || ${v} % 1 !== 0) ${v} = addressArg(${where}, ${v}, ${nullable}) as typeof ${v};`];
    case 'cstring':
      return [`if (typeof ${v} !== 'string'${nullable ? ` && ${v} !== null` : ''}) throw argError(${where}, 'a string${nullable ? ' or null' : ''}', ${v});`];
    case 'record':
      return [`checkRecord(${where}, records.${e.name}(), ${v});`];
  }
}

/** Reads slot `i` of the scratch as element `e`. */
function readSlot(e: Elem, i: number): string {
  switch (e.t) {
    case 'int':
      if (e.bits === 64) return e.size ? `s.size(${i})` : e.signed ? `s.i64[${i}]` : `s.u64[${i}]`;
      if (e.bits === 32) return e.signed ? `s.i32[${2 * i}]` : `s.u32[${2 * i}]`;
      if (e.bits === 16) return e.signed ? `s.i16[${4 * i}]` : `s.u16[${4 * i}]`;
      return e.signed ? `s.i8[${8 * i}]` : `s.bytes[${8 * i}]`;
    case 'float':
      return e.bits === 32 ? `s.f32[${2 * i}]` : `s.f64[${i}]`;
    case 'bool':
      return `s.bytes[${8 * i}] !== 0`;
    case 'enum': {
      const v = e.bits === 64 ? `Number(s.i64[${i}])` : e.bits === 16 ? `s.${e.signed ? 'i16' : 'u16'}[${4 * i}]` : e.bits === 8 ? `s.${e.signed ? 'i8' : 'bytes'}[${8 * i}]` : e.signed ? `s.i32[${2 * i}]` : `s.u32[${2 * i}]`;
      return `${v} as ${elemType(e)}`;
    }
    case 'handle':
    case 'deviceptr':
      return `s.address(${i}) as ${elemType(e)}`;
    case 'address':
      return `s.address(${i})`;
    case 'cstring':
      return `readCString(s.address(${i}))`;
    case 'record':
      throw new Error('records are not read from scratch slots');
  }
}

/** Writes value `v` (already checked) into slot `i` of the scratch as element `e`. */
function writeSlot(e: Elem, i: number, v: string): string {
  const bits = e.t === 'int' || e.t === 'enum' ? e.bits : e.t === 'float' ? e.bits : e.t === 'bool' ? 8 : 64;
  const signed = e.t === 'int' || e.t === 'enum' ? e.signed : false;
  if (e.t === 'float') return e.bits === 32 ? `s.f32[${2 * i}] = ${v};` : `s.f64[${i}] = ${v};`;
  if (e.t === 'bool') return `s.u64[${i}] = 0n; s.bytes[${8 * i}] = ${v} ? 1 : 0;`;
  if (bits === 64) return `s.${signed ? 'i64' : 'u64'}[${i}] = BigInt(${/^\d+$/.test(v) ? v : `${v} as number | bigint`});`;
  if (bits === 32) return `s.u64[${i}] = 0n; s.${signed ? 'i32' : 'u32'}[${2 * i}] = ${v};`;
  if (bits === 16) return `s.u64[${i}] = 0n; s.${signed ? 'i16' : 'u16'}[${4 * i}] = ${v};`;
  return `s.u64[${i}] = 0n; s.${signed ? 'i8' : 'bytes'}[${8 * i}] = ${v};`;
}

/** An array the call fills, returned in the element's JS form. */
function allocArray(e: Elem, n: string): string {
  if (e.t === 'record') return `new Uint8Array(Math.max(1, ${n}) * ${e.size})`;
  const tag = ctypeTag(e);
  const ctor: Record<string, string> = { i8: 'Int8Array', u8: 'Uint8Array', i16: 'Int16Array', u16: 'Uint16Array', i32: 'Int32Array', u32: 'Uint32Array', i64: 'BigInt64Array', u64: 'BigUint64Array', f32: 'Float32Array', f64: 'Float64Array', bool: 'Uint8Array', address: 'BigUint64Array' };
  return `new ${ctor[tag]}(Math.max(1, ${n}))`;
}
function finishArray(e: Elem, a: string, n: string): string {
  if (e.t === 'record') return `decodeRecords<T.${e.name}>(records.${e.name}(), ${a}, ${n})`;
  if (e.t === 'bool') return `Array.from(${a}.subarray(0, ${n}), (b) => b !== 0)`;
  if (e.t === 'int' && e.bits === 64 && e.size) return `Array.from(${a}.subarray(0, ${n}), Number)`;
  if (e.t === 'handle' || e.t === 'deviceptr' || e.t === 'address') return `Array.from(${a}.subarray(0, ${n}), (x) => Number(x) as ${elemType(e)})`;
  if (e.t === 'enum') return `Array.from(${a}.subarray(0, ${n}), (x) => x as ${elemType(e)})`;
  return `${a}.slice(0, ${n})`;
}

/** Records that are opaque bytes (one byte-array field): returned and taken as Uint8Array. */
function isOpaqueRecord(ctx: EmitContext, name: string): boolean {
  const r = ctx.model.records.get(`struct ${name}`) ?? ctx.model.records.get(`union ${name}`);
  return !!r && r.fields.length === 1 && /^(opaque|reserved|internal|data)$/.test(r.fields[0].name);
}

interface Out {
  name: string;
  type: string;
  value: string;
}

export function emitFunction(ctx: EmitContext, w: Writer, fn: FunctionDecl, sem: FunctionSem, overrides: ModuleOverrides, opts: {
  statusOf: (call: string) => string;
  isStatus: boolean;
  success: string;
  answers: string[];
  answerNames: string[];
  insufficient: string[];
  errorClass: string;
  codeType: string;
  blocking: boolean;
  oneShot: (p: string) => boolean;
}): { params: string[]; doc: string } {
  const { model } = ctx;
  const F = fn.name;
  const params = fn.params.map((p, i) => ({ p, i, ident: typedIdent(p.name), sem: sem.params[i].sem, ps: sem.params[i] as ParamSem }));
  const byName = new Map(params.map((x) => [x.p.name, x]));
  const sig: string[] = [];
  const pre: string[] = []; // checks and preparation, in parameter order
  const late: string[] = []; // allocations sized by parameters: after every check
  const register: string[] = []; // one-shot JS callbacks: registered last, once nothing else can throw
  const post: string[] = []; // after a successful call
  const outs: Out[] = [];
  const callArgs: string[] = [];
  const docNotes: string[] = [];
  let slot = 0;
  const slotOf = new Map<string, number>();
  const takeSlot = (name: string) => {
    const i = slot++;
    slotOf.set(name, i);
    return i;
  };
  let capacity: { count: string; arrays: { name: string; elem: Elem }[]; elem: Elem } | undefined;
  const derivedCounts: { name: string; of: string[] }[] = [];

  params.forEach((x, idx) => {
    const { p, ident } = x;
    const s: Sem = x.sem;
    const where = `'${F}', '${p.name}'`;
    const trailingOptional = params.slice(idx + 1).every((y) => !takesTypedArg(y.sem));
    switch (s.role) {
      case 'value': {
        sig.push(`${ident}: ${qualify(rawParamType(model, fn, x.i))}${s.elem.t === 'handle' ? ' | null' : ''}`);
        pre.push(...checkScalar(F, p.name, ident, s.elem, s.elem.t === 'handle'));
        callArgs.push(ident);
        break;
      }
      case 'recordValue':
        sig.push(`${ident}: T.${s.record}`);
        pre.push(`checkRecord(${where}, records.${s.record}(), ${ident});`);
        callArgs.push(ident);
        break;
      case 'callback': {
        const cbType = p.type.kind === 'named' ? p.type.name : undefined;
        const oneShot = opts.oneShot(p.name) && cbType;
        sig.push(`${ident}: ${qualify(rawParamType(model, fn, x.i))}${oneShot ? ' | JsCallback' : ''}`);
        if (oneShot) {
          pre.push(`if (typeof ${ident} !== 'function') callbackArg(${where}, ${ident}, ${s.nullable});`);
          register.push(`const ${ident}$cb = typeof ${ident} === 'function' ? oneShotCallback(T.callbacks.${cbType}(), ${ident}) : undefined;`);
          callArgs.push(`${ident}$cb ? ${ident}$cb.pointer : ${ident}`);
          docNotes.push(`\`${p.name}\` may be a JS function: it is registered for this one call and counts as pending until it has run.`);
        } else {
          pre.push(`callbackArg(${where}, ${ident}, ${s.nullable});`);
          callArgs.push(ident);
        }
        break;
      }
      case 'string':
        sig.push(`${ident}: string${s.nullable ? ' | null' : ''}`);
        pre.push(...checkScalar(F, p.name, ident, { t: 'cstring' }, s.nullable));
        callArgs.push(ident);
        break;
      case 'pointer': {
        sig.push(`${ident}: T.Pointer`);
        const size = s.size ? byName.get(s.size) : undefined;
        pre.push(`pointerArg(${where}, ${ident}, ${s.nullable}${size && takesTypedArg(size.sem) ? `, ${size.ident}` : ''});`);
        if (s.retained) docNotes.push(`The library keeps \`${p.name}\` past the call: keep that memory alive until the operation has completed.`);
        callArgs.push(ident);
        break;
      }
      case 'inRecord': {
        const opaque = isOpaqueRecord(ctx, s.record);
        sig.push(`${ident}: ${opaque ? 'Uint8Array' : `T.${s.record} | Uint8Array`}${s.nullable ? ' | null' : ''}`);
        pre.push(`const ${ident}$ = recordArg(${where}, records.${s.record}(), ${ident}, ${s.nullable});`);
        callArgs.push(`${ident}$`);
        break;
      }
      case 'inArray': {
        const e = s.elem;
        const tsElem = e.t === 'record' ? `T.${e.name}` : elemInType(e);
        const typed = e.t === 'record' || e.t === 'cstring' ? (e.t === 'record' ? ' | Uint8Array' : '') : ` | ${arrayType(e.t === 'int' && e.bits === 64 ? { ...e, size: false } : e.t === 'handle' || e.t === 'deviceptr' || e.t === 'address' ? { t: 'int', bits: 64, signed: false } : e.t === 'enum' ? { t: 'int', bits: e.bits as 8 | 16 | 32 | 64, signed: e.signed } : e)}`;
        sig.push(`${ident}: readonly (${tsElem})[]${typed}${s.nullable ? ' | null' : ''}`);
        if (e.t === 'record') pre.push(`const ${ident}$ = recordArrayArg(${where}, records.${e.name}(), ${ident}, ${s.nullable});`);
        else if (e.t === 'cstring') pre.push(`const ${ident}$ = stringArrayArg(${where}, ${ident}, ${s.nullable});`);
        else pre.push(`const ${ident}$ = scalarArrayArg(${where}, '${ctypeTag(e)}', ${ident}, ${s.nullable});`);
        callArgs.push(e.t === 'record' ? `${ident}$.bytes` : `${ident}$.data`);
        if (s.inout) {
          const type = e.t === 'record' ? `T.${e.name}[]` : arrayType(e);
          outs.push({ name: p.name, type, value: e.t === 'record' ? `decodeRecords<T.${e.name}>(records.${e.name}(), ${ident}$.bytes!, ${ident}$.count)` : `${ident}$.data as unknown as ${type}` });
        }
        break;
      }
      case 'count':
        derivedCounts.push({ name: p.name, of: s.of });
        callArgs.push(`${ident}$n`);
        break;
      case 'out': {
        const i = takeSlot(p.name);
        callArgs.push(`s.slot(${i})`);
        pre.push(`s.u64[${i}] = 0n;`);
        outs.push({ name: p.name, type: elemType(s.elem), value: readSlot(s.elem, i) });
        break;
      }
      case 'inout': {
        const i = takeSlot(p.name);
        sig.push(`${ident}: ${elemInType(s.elem)}${s.elem.t === 'handle' ? ' | null' : ''}`);
        pre.push(...checkScalar(F, p.name, ident, s.elem, s.elem.t === 'handle'));
        callArgs.push(`s.slot(${i})`);
        outs.push({ name: p.name, type: elemType(s.elem), value: readSlot(s.elem, i) });
        pre.push(writeSlot(s.elem, i, ident)); // a null handle was turned into 0 by its check
        break;
      }
      case 'outRecord': {
        const opaque = isOpaqueRecord(ctx, s.record);
        const size = model.records.get(`struct ${s.record}`)?.size ?? model.records.get(`union ${s.record}`)?.size;
        pre.push(`const ${ident}$ = new Uint8Array(${size ?? `records.${s.record}().size`});`);
        if (s.version !== undefined) pre.push(`new DataView(${ident}$.buffer).setUint32(0, 0x${s.version.toString(16)}, true); // version`);
        callArgs.push(`${ident}$`);
        outs.push({ name: p.name, type: opaque ? 'Uint8Array' : `T.${s.record}`, value: opaque ? `${ident}$` : `decodeRecord<T.${s.record}>(records.${s.record}(), ${ident}$)` });
        break;
      }
      case 'inoutRecord': {
        const opaque = isOpaqueRecord(ctx, s.record);
        const optional = trailingOptional ? '?' : '';
        sig.push(`${ident}${optional}: ${opaque ? 'Uint8Array' : `Partial<T.${s.record}> | Uint8Array`}${optional ? '' : ' | null'}`);
        pre.push(`const ${ident}$ = new Uint8Array(records.${s.record}().size);`);
        if (!optional) pre.push(`if (${ident} === undefined) throw argError(${where}, 'a record object, its encoded bytes or null', ${ident});`);
        pre.push(`if (${ident} != null) ${ident}$.set(new Uint8Array(recordArg(${where}, records.${s.record}(), ${ident}, false) as Uint8Array).subarray(0, ${ident}$.length));`);
        if (s.version !== undefined) pre.push(`new DataView(${ident}$.buffer).setUint32(0, 0x${s.version.toString(16)}, true); // NVML struct version`);
        callArgs.push(`${ident}$`);
        outs.push({ name: p.name, type: opaque ? 'Uint8Array' : `T.${s.record}`, value: opaque ? `${ident}$` : `decodeRecord<T.${s.record}>(records.${s.record}(), ${ident}$)` });
        break;
      }
      case 'outText': {
        if (s.capacity) {
          pre.push(`const ${ident}$ = new Uint8Array(${s.capacity});`);
          callArgs.push(`${ident}$`);
        } else {
          const len = byName.get(s.length)!;
          late.push(`const ${ident}$ = new Uint8Array(Math.max(1, allocLength('${F}', '${len.p.name}', ${len.ident})));`);
          callArgs.push(`${ident}$`);
        }
        outs.push({ name: p.name, type: 'string', value: `textFrom(${ident}$)` });
        break;
      }
      case 'outArray': {
        const count = byName.get(s.count)!;
        late.push(`const ${ident}$ = ${allocArray(s.elem, `allocLength('${F}', '${s.count}', ${count.ident})`)};`);
        callArgs.push(`${ident}$`);
        outs.push({ name: p.name, type: s.elem.t === 'record' ? `T.${s.elem.name}[]` : arrayType(s.elem), value: finishArray(s.elem, `${ident}$`, `Number(${count.ident})`) });
        break;
      }
      case 'capacityArray': {
        capacity ??= { count: s.count, arrays: [], elem: { t: 'int', bits: 64, signed: false, size: true } };
        capacity.arrays.push({ name: p.name, elem: s.elem });
        callArgs.push(`${ident}$`);
        outs.push({ name: p.name, type: s.elem.t === 'record' ? `T.${s.elem.name}[]` : arrayType(s.elem), value: finishArray(s.elem, `${ident}$`, 'n') });
        break;
      }
      case 'capacity': {
        if (s.of.length === 1 && params.find((y) => y.p.name === s.of[0])?.sem.role === 'outText') {
          // a text buffer's in/out length: filled with the buffer's capacity
          const i = takeSlot(p.name);
          const text = params.find((y) => y.p.name === s.of[0])!;
          pre.push(writeSlot(s.elem, i, String((text.sem as { capacity?: number }).capacity ?? 0)));
          callArgs.push(`s.slot(${i})`);
          break;
        }
        const i = takeSlot(p.name);
        capacity ??= { count: p.name, arrays: [], elem: s.elem };
        capacity.elem = s.elem;
        capacity.count = p.name;
        callArgs.push(`s.slot(${i})`);
        break;
      }
      case 'attrValue': {
        const table = overrides.attrTables?.[s.table];
        if (!table) throw new Error(`${F}.${p.name}: attribute table ${s.table} missing`);
        const enumDecl = [...model.enums.values()].find((e) => model.enumTsName.get(e.name) === table.enum || e.name === `enum ${table.enum}`) ??
          [...model.enums.values()].find((e) => ctx.model.ir.typedefs.some((t) => t.name === table.enum && t.type.kind === 'named' && t.type.name === e.name));
        if (!enumDecl) throw new Error(`${F}: enum ${table.enum} not found`);
        // members a release lacks (older headers) are left out of its table
        const cases = Object.entries(table.values).flatMap(([member, elem]) => {
          const m = enumDecl.members.find((x) => x.name === member);
          return m ? [{ value: m.value, elem }] : [];
        });
        const attr = byName.get(s.attr)!;
        const union = [...new Set(cases.map((c) => elemType(c.elem)))].join(' | ');
        const attrArray = attr.sem.role === 'inArray';
        if (s.dir === 'out' && !attrArray) {
          pre.push(`const ${ident}$ = new Uint8Array(16);`);
          callArgs.push(`${ident}$`);
          outs.push({ name: p.name, type: union, value: `attrDecode(${attr.ident} as number, ${ident}$)` });
          post.unshift(attrDecoder(F, attr.p.name, cases, union));
        } else if (s.dir === 'out') {
          // one caller pointer per attribute: a table of addresses into one buffer of 16-byte cells
          pre.push(`const ${ident}$cells = new Uint8Array(Math.max(1, ${attr.ident}$.count) * 16);`);
          pre.push(`const ${ident}$ = new BigUint64Array(Math.max(1, ${attr.ident}$.count));`);
          pre.push(`{ const base = BigInt(addressOf(${ident}$cells)); for (let k = 0; k < ${attr.ident}$.count; k++) ${ident}$[k] = base + BigInt(16 * k); }`);
          callArgs.push(`${ident}$`);
          outs.push({ name: p.name, type: `(${union})[]`, value: `Array.from({ length: ${attr.ident}$.count }, (_, k) => attrDecode(Number((${attr.ident}$.data as Uint32Array)[k]), ${ident}$cells.subarray(16 * k, 16 * k + 16)))` });
          post.unshift(attrDecoder(F, attr.p.name, cases, union));
        } else {
          sig.push(`${ident}: ${union.replace(/T\.CUDA_POINTER_ATTRIBUTE_P2P_TOKENS_st/, 'never')}`);
          pre.push(`const ${ident}$ = attrEncode(${attr.ident} as number, ${ident});`);
          callArgs.push(`${ident}$`);
          post.unshift(attrEncoder(F, p.name, attr.p.name, cases));
        }
        break;
      }
    }
  });

  // counts derived from the arrays they count
  for (const c of derivedCounts) {
    const arrays = c.of.map((a) => byName.get(a)!).filter(Boolean);
    if (arrays.length === 1) pre.push(`const ${typedIdent(c.name)}$n = ${arrays[0].ident}$.count;`);
    else pre.push(`const ${typedIdent(c.name)}$n = sameLength('${F}', [${arrays.map((a) => `'${a.p.name}'`).join(', ')}], [${arrays.map((a) => `${a.ident}$.count`).join(', ')}], [${arrays.map((a) => `${a.ident} !== null`).join(', ')}]);`);
  }
  // arrays whose count stays an input: they must hold at least that many elements
  for (const x of params) {
    if (x.sem.role === 'inArray' && x.sem.count) {
      const count = byName.get(x.sem.count);
      if (count && count.sem.role === 'value') pre.push(`if (${x.ident} !== null) coversCount('${F}', '${x.p.name}', ${x.ident}$.count, ${count.ident}, '${count.p.name}');`);
    }
  }

  const outFields = outs.map((o) => `${typedIdent(o.name)}: ${o.type}`);
  const r = qualify(model.tsType(fn.returns, 'return'));
  let retType: string;
  if (opts.isStatus) retType = outs.length === 0 ? (opts.answers.length ? `T.${opts.codeType}` : 'void') : outs.length === 1 ? outs[0].type : `{ ${outFields.join('; ')} }`;
  else retType = outs.length === 0 ? r : `{ result: ${r}; ${outFields.join('; ')} }`;

  const doc = [`\`${cSignature(fn)}\` · ${fn.header} · CUDA ${model.ir.cudaVersion}`];
  if (outs.length) doc.push(`Returns ${outs.map((o) => `\`${o.name}\``).join(', ')}.`);
  doc.push(...functionNotes(model, fn).filter((n) => !n.startsWith('Takes a C callback') || !params.some((x) => opts.oneShot(x.p.name))));
  doc.push(...docNotes);
  if (opts.blocking) doc.push('Waits on the calling thread: refused (HostCallbackPendingError) while a JS callback is pending.');
  if (opts.isStatus) doc.push(`Throws {@link ${opts.errorClass}}${opts.answers.length ? ` unless the status is ${opts.answerNames.join(' or ')}` : ''}; a bad argument throws TypeError or RangeError before any call.`);

  if (slot) w.line(`let ${F}$: Scratch | undefined;`);
  w.line(`let ${F}$c: NativeFunction | undefined;`);
  w.line(`/** ${doc.join(' ')} */`);
  const result = { params: sig.map((x) => /^[\w$]+/.exec(x)![0]), doc: doc.join(' ') };
  const callbacks = params.filter((x) => x.sem.role === 'callback' && opts.oneShot(x.p.name));
  w.block(`export function ${F}(${sig.join(', ')}): ${retType}`, () => {
    if (opts.blocking) w.line(`assertMayBlock('${F}');`);
    if (slot) w.line(`const s = (${F}$ ??= new Scratch(${slot}));`);
    for (const line of pre) w.line(line);
    for (const line of late) w.line(line);
    let native = `(${F}$c ??= binder.native('${F}'))`;
    if (register.length) {
      // bind before registering: a missing library or symbol must not leave a callback counted as pending
      w.line(`const native = ${native};`);
      native = 'native';
      for (const line of register) w.line(line);
    }
    const call = (args: string[]) => `${native}(${args.join(', ')})`;
    const check = (st: string, extra: string[] = []) => {
      const cond = [`${st} !== ${opts.success}`, ...opts.answers.map((a) => `${st} !== ${a}`), ...extra.map((a) => `${st} !== ${a}`)].join(' && ');
      if (callbacks.length) {
        w.block(`if (${cond})`, () => {
          for (const cb of callbacks) w.line(`${cb.ident}$cb?.cancel(); // refused: it will never run`);
          w.line(`throw fail('${F}', ${st});`);
        });
      } else w.line(`if (${cond}) throw fail('${F}', ${st});`);
    };
    if (capacity) {
      // ask the count first (null arrays, zero capacity), then fill
      const cap = capacity;
      const ci = slotOf.get(cap.count)!;
      const first = callArgs.map((a, k) => (cap.arrays.some((arr) => `${typedIdent(arr.name)}$` === a) ? 'null' : a));
      w.line(writeSlot(cap.elem, ci, '0'));
      w.line(`const asked = ${opts.statusOf(call(first))};`);
      check('asked', opts.insufficient);
      w.line(`let n = Number(${readSlot(cap.elem, ci)});`);
      for (const arr of cap.arrays) w.line(`const ${typedIdent(arr.name)}$ = ${allocArray(arr.elem, 'n')};`);
      w.block(`if (n > 0)`, () => {
        w.line(writeSlot(cap.elem, ci, 'n'));
        w.line(`const status = ${opts.statusOf(call(callArgs))};`);
        check('status');
        w.line(`n = Math.min(n, Number(${readSlot(cap.elem, ci)}));`);
      });
    } else if (opts.isStatus) {
      w.line(`const status = ${opts.statusOf(call(callArgs))};`);
      check('status');
    } else {
      w.line(`const result = ${call(callArgs)};`);
    }
    for (const line of post) w.line(line);
    const packed = outs.length === 1 ? outs[0].value : `{ ${outs.map((o) => `${typedIdent(o.name)}: ${o.value}`).join(', ')} }`;
    if (opts.isStatus || capacity) {
      if (outs.length) w.line(`return ${packed};`);
      else if (opts.answers.length) w.line(`return status;`);
    } else if (outs.length) w.line(`return { result, ${outs.map((o) => `${typedIdent(o.name)}: ${o.value}`).join(', ')} };`);
    else w.line(`return result;`);
  });
  return result;
}

function attrDecoder(fn: string, attr: string, cases: { value: string; elem: Elem }[], union: string): string {
  const lines = cases.map((c) => {
    const e = c.elem;
    let read: string;
    if (e.t === 'record') read = `decodeRecord<T.${e.name}>(records.${e.name}(), cell)`;
    else if (e.t === 'bool') read = 'cell[0] !== 0';
    else if (e.t === 'float') read = e.bits === 32 ? 'v.getFloat32(0, true)' : 'v.getFloat64(0, true)';
    else if (e.t === 'int' && e.bits === 64 && !e.size) read = e.signed ? 'v.getBigInt64(0, true)' : 'v.getBigUint64(0, true)';
    else if (e.t === 'int' && e.bits === 32) read = e.signed ? 'v.getInt32(0, true)' : 'v.getUint32(0, true)';
    else read = `Number(v.getBigUint64(0, true))${e.t === 'handle' || e.t === 'deviceptr' ? ` as ${elemType(e)}` : ''}`;
    return `case ${c.value}: return ${read};`;
  });
  return `function attrDecode(a: number, cell: Uint8Array): ${union} { const v = new DataView(cell.buffer, cell.byteOffset, cell.byteLength); void v; switch (a) { ${lines.join(' ')} default: throw new RangeError(\`${fn}: ${attr} \${a} has no known value type\`); } }`;
}

function attrEncoder(fn: string, param: string, attr: string, cases: { value: string; elem: Elem }[]): string {
  const lines = cases.map((c) => {
    const e = c.elem;
    let write: string;
    if (e.t === 'bool') write = `if (typeof x !== 'boolean' && x !== 0 && x !== 1) throw argError('${fn}', '${param}', 'a boolean', x); cell[0] = x ? 1 : 0;`;
    else if (e.t === 'int' && e.bits === 32) write = `if (typeof x !== 'number' || ${e.signed ? '(x | 0) !== x' : '(x >>> 0) !== x'}) throw intError('${fn}', '${param}', '${e.signed ? 'i32' : 'u32'}', x); v.${e.signed ? 'setInt32' : 'setUint32'}(0, x, true);`;
    else if (e.t === 'record') write = `throw argError('${fn}', '${param}', 'a settable attribute', x);`;
    else write = `v.setBigUint64(0, BigInt(int64Arg('${fn}', '${param}', x, false)), true);`;
    return `case ${c.value}: { ${write} return cell; }`;
  });
  return `function attrEncode(a: number, x: unknown): Uint8Array { const cell = new Uint8Array(16); const v = new DataView(cell.buffer); void v; switch (a) { ${lines.join(' ')} default: throw new RangeError(\`${fn}: ${attr} \${a} has no known value type\`); } }`;
}

export function emitTyped(ctx: EmitContext): Map<string, string> {
  const { model } = ctx;
  const { ir, spec } = model;
  const status = spec.status;
  // The status: an enum (`CUresult`), or a struct whose `status.field` is one (cuFile's CUfileError_t).
  const declaredStatus = model.kind({ kind: 'named', name: status.type });
  let statusKind = declaredStatus;
  if (declaredStatus.k === 'record') {
    const f = status.field ? declaredStatus.decl.fields.find((x) => x.name === status.field) : undefined;
    if (!f) throw new Error(`status type ${status.type} of ${spec.name} is a struct: the catalog must name its code field (status.field)`);
    statusKind = model.kind(f.type);
  }
  if (statusKind.k !== 'enum') throw new Error(`status type ${status.type} of ${spec.name} is not an enum (nor a struct holding one)`);
  const statusEnum = statusKind;
  const codeType = statusEnum.ts;
  const successMember = statusEnum.decl.members.find((m) => m.name === status.success);
  if (!successMember) throw new Error(`${status.success} not found in ${status.type}`);
  const success = successMember.value;
  const valueOf = (name: string) => {
    const m = statusEnum.decl.members.find((x) => x.name === name);
    if (!m) throw new Error(`status ${name} not found in ${status.type}`);
    return m.value;
  };
  const returnsStatus = (fn: FunctionDecl) => {
    const k = model.kind(fn.returns);
    if (declaredStatus.k === 'record') return k.k === 'record' && k.decl === declaredStatus.decl;
    return k.k === 'enum' && k.decl === statusEnum.decl;
  };
  const statusOf = (call: string) => (declaredStatus.k === 'record' ? `(${call} as { ${status.field}: number }).${status.field}` : call);

  const blocking = (fn: FunctionDecl) => !!spec.blocking?.test(fn.name);
  const oneShot = (fn: FunctionDecl, p: { name: string }) => (spec.oneShotCallbacks ?? []).includes(`${fn.name}.${p.name}`);
  const support = `'${supportSpecifier(1)}'`;

  // typed/shared.ts: the module's error class and its message lookup (from the library itself, at run time)
  const sh = new Writer();
  sh.line(ctx.banner);
  sh.line(`// The ${status.errorClass} class of the ${spec.title} and the failure helper its typed chunks share.`);
  sh.line(`import { CudaError, readCString } from ${support};`);
  sh.line(`import { binder } from '../binding';`);
  sh.line(`import * as T from '../types';`);
  sh.line(`void [binder, readCString];`);
  sh.blank();
  sh.line(`/** A failing ${status.type} from the ${spec.title}. \`name\` is the status name, \`func\` the C function. */`);
  sh.block(`export class ${status.errorClass} extends CudaError`, () => {
    sh.block(`constructor(func: string, code: number)`, () => {
      sh.line(`super('${spec.name}', func, code, T.${codeType}[code] ?? \`${codeType}(\${code})\`, describe(code));`);
    });
  });
  sh.blank();
  sh.line(`let describing = false;`);
  sh.block(`function describe(code: number): string | undefined`, () => {
    if (!status.describe) {
      sh.line(`void code;`);
      sh.line(`return undefined;`);
      return;
    }
    sh.line(`if (describing) return undefined; // a failure while describing a failure`);
    sh.line(`describing = true;`);
    sh.block(`try`, () => {
      sh.line(`const fn = binder.native('${status.describe!.fn}');`);
      if (status.describe!.style === 'return') {
        sh.line(`return fn(code) ?? undefined;`);
      } else {
        sh.line(`const out = new BigUint64Array(1);`);
        sh.line(`return fn(code, out) === ${success} ? (readCString(out[0]) ?? undefined) : undefined;`);
      }
    });
    sh.block(`catch`, () => sh.line(`return undefined;`));
    sh.block(`finally`, () => sh.line(`describing = false;`));
  });
  sh.blank();
  sh.line(`/** The error a failing status becomes. */`);
  sh.line(`export function fail(func: string, code: number): ${status.errorClass} {`);
  sh.line(`  return new ${status.errorClass}(func, code);`);
  sh.line(`}`);

  const overrides = overridesFor(spec.name);
  const sems = resolveModule(model, overrides);
  const insufficient = statusEnum.decl.members.filter((m) => /INSUFFICIENT_SIZE|InsufficientSize/.test(m.name)).map((m) => m.value);
  const plan = chunkPlan(ir.functions.map((f) => f.name));
  const chunkWriters = new Map<string, Writer>();
  const chunkFns = new Map<string, FunctionDecl[]>();
  for (const fn of ir.functions) chunkFns.set(plan.get(fn.name)!, [...(chunkFns.get(plan.get(fn.name)!) ?? []), fn]);
  for (const [chunk, fns] of chunkFns) {
    const cw = new Writer();
    cw.line(ctx.banner);
    cw.line(`// Typed layer of the ${spec.title}, ${chunk.replace('_', ' to ')} functions: loaded by ../index.ts on the first`);
    cw.line(`// call of one of them. Each function checks its arguments, calls the C function and throws ${status.errorClass}.`);
    const runtimeImports = [
      'Scratch', 'addressArg', 'allocLength', 'argError', 'callbackArg', 'checkRecord', 'coversCount', 'decodeRecord',
      'decodeRecords', 'int64Arg', 'intError', 'pointerArg', 'readCString', 'recordArg', 'recordArrayArg', 'sameLength', 'scalarArrayArg',
      'stringArrayArg', 'textFrom', 'addressOf',
    ];
    if (fns.some(blocking)) runtimeImports.push('assertMayBlock');
    if (fns.some((fn) => fn.params.some((p) => oneShot(fn, p)))) runtimeImports.push('oneShotCallback', 'type JsCallback');
    cw.line(`import { ${runtimeImports.join(', ')}, type NativeFunction } from ${support};`);
    cw.line(`import { binder } from '../binding';`);
    cw.line(`import * as T from '../types';`);
    cw.line(`import { records } from '../types';`);
    cw.line(`import { fail } from './shared';`);
    // (records inside a function: reading it here would build the module's record table at load)
    cw.line(`void [addressArg, allocLength, argError, callbackArg, checkRecord, coversCount, decodeRecord, decodeRecords, int64Arg, intError, pointerArg, readCString, recordArg, recordArrayArg, sameLength, scalarArrayArg, stringArrayArg, textFrom, addressOf, () => records];`);
    cw.blank();
    chunkWriters.set(chunk, cw);
  }
  const stubs: StubFn[] = [];
  const byName = new Map<string, StubFn>();
  ir.functions.forEach((fn, k) => {
    const answerNames = status.answers?.[fn.name] ?? [];
    const chunk = plan.get(fn.name)!;
    const got = emitFunction(ctx, chunkWriters.get(chunk)!, fn, sems[k], overrides, {
      statusOf,
      isStatus: returnsStatus(fn),
      success,
      answers: answerNames.map(valueOf),
      answerNames,
      insufficient,
      errorClass: status.errorClass,
      codeType,
      blocking: blocking(fn),
      oneShot: (p) => oneShot(fn, { name: p }),
    });
    const stub = { name: fn.name, target: fn.name, chunk, params: got.params, doc: got.doc };
    stubs.push(stub);
    byName.set(fn.name, stub);
  });
  for (const [alias, target] of Object.entries(ir.aliases)) {
    const t = byName.get(target);
    if (!t) throw new Error(`alias ${alias} of ${target}: no such function`);
    stubs.push({ ...t, name: alias, doc: `Alias of {@link ${target}} (\`#define ${alias} ${target}\`).` });
  }

  const w = new Writer();
  w.line(ctx.banner);
  w.line(`// Typed layer of the ${spec.title}: throws ${status.errorClass} (a CudaError) on failure and`);
  w.line(`// returns out-parameters. Each function calls the C function itself (the raw layer, \`./raw\`, is a`);
  w.line(`// separate import); types and constants are re-exported. The functions live in ./typed/<family>.ts,`);
  w.line(`// each loaded on the first call of one of its functions (see generator/emit/lazy.ts).`);
  w.line(`export * from './types';`);
  w.line(`export { binder, configure } from './binding';`);
  w.line(`export { ${status.errorClass} } from './typed/shared';`);
  writeStubs(w, 'typed', stubs);
  const files = new Map<string, string>([['index.ts', w.toString()], ['typed/shared.ts', sh.toString()]]);
  for (const [chunk, cw] of [...chunkWriters].sort((a, b) => (a[0] < b[0] ? -1 : 1))) files.set(`typed/${chunk}.ts`, cw.toString());
  return files;
}
