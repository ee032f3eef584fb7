// The typed layer's plan of one function, built from its parameter semantics by one small emitter per
// role (ROLE_EMITTERS): each adds to the plan's signature, checks, setup, call arguments, outputs and
// after-call code. The plan is written out by emitFunction (./typed.ts). Every check a role adds runs
// before the FFI call: koffi converts bad numbers silently and aborts on wrong types in records.
import type { FunctionDecl, Param } from '../ir/schema';
import { safeIdent } from '../model';
import { takesTypedArg, type Elem, type Sem } from '../semantics';
import type { ModuleEmitContext } from './context';
import { qualify, rawParamType } from './raw';
import {
  allocArray,
  arrayType,
  attrDecoder,
  attrEncoder,
  attrInType,
  attrSizer,
  checkScalar,
  ctypeTag,
  elemInType,
  elemType,
  finishArray,
  readSlot,
  readsAsNumber64,
  writeSlot,
  zeroSlot,
} from './typed-elem';

/** Names the typed layer's function bodies use for themselves: parameters must not shadow them. */
const TYPED_LOCALS = new Set(['s', 'status', 'raw', 'T', 'records', 'fail', 'result', 'describe', 'n', 'call']);
export function typedIdent(name: string): string {
  const base = safeIdent(name);
  return TYPED_LOCALS.has(base) ? `${base}_` : base;
}

/** One output of a typed function: its C name, its TS type and the expression that reads it. */
export interface Out {
  name: string;
  type: string;
  value: string;
  /** The Scratch slot whose two 32-bit halves make this value, a number that may exceed 2^31 (handles, addresses, sizes). */
  slot64?: number;
}

/** One C parameter as the role emitters see it. */
export interface ParamView {
  p: Param;
  /** Its position in the C parameter list. */
  i: number;
  /** Its JS name in the typed function. */
  ident: string;
  sem: Sem;
}

/** What a role emitter may read besides its parameter: the function and its other parameters. */
export interface FunctionEnv {
  ctx: ModuleEmitContext;
  fn: FunctionDecl;
  params: ParamView[];
  byName: Map<string, ParamView>;
  /** Whether the callback parameter of this name may be a JS function registered for one call. */
  oneShot: (param: string) => boolean;
}

/** The count/capacity pair of arrays the call fills: asked first with null arrays, then filled. */
export interface CapacityPlan {
  count: string;
  arrays: { name: string; elem: Elem }[];
  elem: Elem;
}

/** The parts of one typed function, filled parameter by parameter in C order. */
export interface FunctionPlan {
  /** `name: type` of each typed parameter. */
  sig: string[];
  /** Checks and preparation, in parameter order. */
  pre: string[];
  /** Allocations sized by parameters: after every check. */
  late: string[];
  /** One-shot JS callbacks: registered last, once nothing else can throw. */
  register: string[];
  /** After a successful call. */
  post: string[];
  outs: Out[];
  callArgs: string[];
  docNotes: string[];
  /** Scratch slots taken, and by which parameter. */
  slots: number;
  slotOf: Map<string, number>;
  capacity?: CapacityPlan;
  derivedCounts: { name: string; of: string[] }[];
}

type SemOf<R extends Sem['role']> = Extract<Sem, { role: R }>;
type RoleEmitter<R extends Sem['role']> = (s: SemOf<R>, x: ParamView, plan: FunctionPlan, env: FunctionEnv) => void;

function takeSlot(plan: FunctionPlan, name: string): number {
  const i = plan.slots++;
  plan.slotOf.set(name, i);
  return i;
}

/** The `'fn', 'param'` pair the run-time checks name in their errors. */
function where(env: FunctionEnv, x: ParamView): string {
  return `'${env.fn.name}', '${x.p.name}'`;
}

/** Records that are opaque bytes (one byte-array field): returned and taken as Uint8Array. */
function isOpaqueRecord(env: FunctionEnv, name: string): boolean {
  const { model } = env.ctx;
  const r = model.records.get(`struct ${name}`) ?? model.records.get(`union ${name}`);
  return !!r && r.fields.length === 1 && /^(opaque|reserved|internal|data)$/.test(r.fields[0].name);
}

/** A record returned (out or in/out): its bytes, decoded unless opaque. */
function recordOut(env: FunctionEnv, x: ParamView, record: string): Out {
  const opaque = isOpaqueRecord(env, record);
  const { ident } = x;
  return {
    name: x.p.name,
    type: opaque ? 'Uint8Array' : `T.${record}`,
    value: opaque ? `${ident}$` : `decodeRecord<T.${record}>(records.${record}(), ${ident}$)`,
  };
}

const emitValue: RoleEmitter<'value'> = (s, x, plan, env) => {
  plan.sig.push(`${x.ident}: ${qualify(rawParamType(env.ctx.model, env.fn, x.i))}${s.elem.t === 'handle' ? ' | null' : ''}`);
  plan.pre.push(...checkScalar(env.fn.name, x.p.name, x.ident, s.elem, s.elem.t === 'handle'));
  plan.callArgs.push(x.ident);
};

const emitRecordValue: RoleEmitter<'recordValue'> = (s, x, plan, env) => {
  plan.sig.push(`${x.ident}: T.${s.record}`);
  // the checked copy is what koffi reads: a getter or Proxy is read once (a second read could abort)
  plan.pre.push(`${x.ident} = checkRecord(${where(env, x)}, records.${s.record}(), ${x.ident});`);
  plan.callArgs.push(x.ident);
};

const emitCallback: RoleEmitter<'callback'> = (s, x, plan, env) => {
  const { p, ident } = x;
  const cbType = p.type.kind === 'named' ? p.type.name : undefined;
  const oneShot = env.oneShot(p.name) && cbType;
  plan.sig.push(`${ident}: ${qualify(rawParamType(env.ctx.model, env.fn, x.i))}${oneShot ? ' | JsCallback' : ''}`);
  if (oneShot) {
    plan.pre.push(`if (typeof ${ident} !== 'function') callbackArg(${where(env, x)}, ${ident}, ${s.nullable});`);
    plan.register.push(`const ${ident}$cb = typeof ${ident} === 'function' ? oneShotCallback(T.callbacks.${cbType}(), ${ident}) : undefined;`);
    plan.callArgs.push(`${ident}$cb ? ${ident}$cb.pointer : ${ident}`);
    plan.docNotes.push(`\`${p.name}\` may be a JS function: it is registered for this one call and counts as pending until it has run.`);
  } else {
    plan.pre.push(`callbackArg(${where(env, x)}, ${ident}, ${s.nullable});`);
    plan.callArgs.push(ident);
  }
};

const emitString: RoleEmitter<'string'> = (s, x, plan, env) => {
  plan.sig.push(`${x.ident}: string${s.nullable ? ' | null' : ''}`);
  plan.pre.push(...checkScalar(env.fn.name, x.p.name, x.ident, { t: 'cstring' }, s.nullable));
  plan.callArgs.push(x.ident);
};

/** The byte count a host buffer must cover for pointer `s`: its count in bytes, or elements × element size. */
function coveredBytes(s: SemOf<'pointer'>, env: FunctionEnv): { param?: ParamView; expr?: string } {
  const name = s.count?.param ?? s.size;
  const param = name ? env.byName.get(name) : undefined;
  if (!param || !takesTypedArg(param.sem)) return {};
  if (!s.count || s.count.unit === 'bytes') return { param, expr: param.ident };
  // elements of a known size; of a type another parameter picks, not checked here (device memory)
  return s.count.elemBytes ? { param, expr: `Number(${param.ident}) * ${s.count.elemBytes}` } : { param };
}

const MAX_SAFE = '9007199254740991';
const SPACE_TYPE = { device: 'T.DeviceMemory', host: 'T.HostMemory', either: 'T.AnyMemory' } as const;

const emitPointer: RoleEmitter<'pointer'> = (s, x, plan, env) => {
  const { ident } = x;
  plan.sig.push(`${ident}: ${s.space ? `${SPACE_TYPE[s.space]}${s.nullable ? ' | null' : ''}` : 'T.Pointer'}`);
  // device memory is never a host buffer to measure: no byte count to check
  const { param: size, expr: bytes } = s.space === 'device' ? {} : coveredBytes(s, env);
  // a size parameter after the buffer is checked first: the memory check refuses a size that is no count
  if (bytes && s.space !== 'device' && size!.i > x.i && size!.sem.role === 'value')
    plan.pre.push(...checkScalar(env.fn.name, size!.p.name, size!.ident, size!.sem.elem, false));
  const tail = `${s.nullable}${bytes ? `, ${bytes}` : ''}`;
  if (s.space === 'device') {
    // the common case inline (an address as a number); objects, bigints, null and refusals in deviceArg
    plan.pre.push(
      `const ${ident}$ = typeof ${ident} === 'number' && ${ident} >= 0 && ${ident} <= ${MAX_SAFE} && Math.floor(${ident}) === ${ident} ? ${ident} : deviceArg(${where(env, x)}, ${ident}, ${s.nullable});`,
    );
    plan.callArgs.push(`${ident}$`);
  } else if (s.space === 'either') {
    plan.pre.push(`const ${ident}$ = memoryArg(${where(env, x)}, ${ident}, ${tail});`);
    plan.callArgs.push(`${ident}$`);
  } else {
    plan.pre.push(`${s.space === 'host' ? 'hostArg' : 'pointerArg'}(${where(env, x)}, ${ident}, ${tail});`);
    plan.callArgs.push(ident);
  }
  if (s.retained) plan.docNotes.push(`The library keeps \`${x.p.name}\` past the call: keep that memory alive until the operation has completed.`);
};

/** The slot of parameter `name`, taken on first use (a result array and its count read each other's). */
function slotFor(plan: FunctionPlan, name: string): number {
  return plan.slotOf.get(name) ?? takeSlot(plan, name);
}

const SCALAR_TS: Record<SemOf<'scalar'>['type'], string> = {
  f16: 'T.RealScalar',
  bf16: 'T.RealScalar',
  f32: 'T.RealScalar',
  f64: 'T.RealScalar',
  i8: 'T.RealScalar',
  u8: 'T.RealScalar',
  i32: 'T.RealScalar',
  u32: 'T.RealScalar',
  i64: 'T.Int64Scalar',
  u64: 'T.Int64Scalar',
  c64: 'T.ComplexScalar',
  c128: 'T.ComplexScalar',
  untyped: 'T.UntypedScalar',
};

const emitScalar: RoleEmitter<'scalar'> = (s, x, plan, env) => {
  const { ident } = x;
  const i = takeSlot(plan, x.p.name);
  if (s.type === 'c128') takeSlot(plan, `${x.p.name}$hi`); // 16 bytes: two slots side by side
  plan.sig.push(`${ident}: ${SCALAR_TS[s.type]}`);
  const call = `scalarArg(${where(env, x)}, '${s.type}', '${s.space}', ${ident}, s.slot(${i}))`;
  // a plain float or double boxed inline (the common alpha/beta); every other form through scalarArg
  if (s.type === 'f32') plan.pre.push(`const ${ident}$ = typeof ${ident} === 'number' ? ((s.f32[${2 * i}] = ${ident}), s.slot(${i})) : ${call};`);
  else if (s.type === 'f64') plan.pre.push(`const ${ident}$ = typeof ${ident} === 'number' ? ((s.f64[${i}] = ${ident}), s.slot(${i})) : ${call};`);
  else plan.pre.push(`const ${ident}$ = ${call};`);
  plan.callArgs.push(`${ident}$`);
};

const emitResultArray: RoleEmitter<'resultArray'> = (s, x, plan, env) => {
  const cap = env.byName.get(s.capacity)!;
  const ci = slotFor(plan, s.count);
  const countElem = (env.byName.get(s.count)!.sem as SemOf<'countOut'>).elem;
  plan.late.push(`const ${x.ident}$ = ${allocArray(s.elem, `allocLength('${env.fn.name}', '${s.capacity}', ${cap.ident})`)};`);
  plan.callArgs.push(`${x.ident}$`);
  const n = `Math.min(Number(${cap.ident}), Math.max(0, ${readSlot(countElem, ci)}))`;
  plan.outs.push({ name: x.p.name, type: s.elem.t === 'record' ? `T.${s.elem.name}[]` : arrayType(s.elem), value: finishArray(s.elem, `${x.ident}$`, n) });
};

const emitCountOut: RoleEmitter<'countOut'> = (s, x, plan) => {
  const i = slotFor(plan, x.p.name);
  plan.pre.push(zeroSlot(i));
  plan.callArgs.push(`s.slot(${i})`);
};

const emitAttrSize: RoleEmitter<'attrSize'> = (s, x, plan, env) => {
  plan.callArgs.push(`${env.byName.get(s.of)!.ident}$size`);
};

const emitInRecord: RoleEmitter<'inRecord'> = (s, x, plan, env) => {
  // a record object (as another call decoded it: a heuristic's `algo`) or its bytes, opaque or not
  plan.sig.push(`${x.ident}: T.${s.record} | Uint8Array${s.nullable ? ' | null' : ''}`);
  plan.pre.push(`const ${x.ident}$ = recordArg(${where(env, x)}, records.${s.record}(), ${x.ident}, ${s.nullable});`);
  plan.callArgs.push(`${x.ident}$`);
};

/** The typed-array form an in-array also accepts (`| Int32Array`, …), '' for records' and strings' own forms. */
function inArrayTypedForm(e: Elem): string {
  if (e.t === 'record') return ' | Uint8Array';
  if (e.t === 'cstring') return '';
  const asArray: Elem =
    e.t === 'int' && e.bits === 64
      ? { ...e, size: false }
      : e.t === 'handle' || e.t === 'deviceptr' || e.t === 'address'
        ? { t: 'int', bits: 64, signed: false }
        : e.t === 'enum'
          ? { t: 'int', bits: e.bits as 8 | 16 | 32 | 64, signed: e.signed }
          : e;
  return ` | ${arrayType(asArray)}`;
}

const emitInArray: RoleEmitter<'inArray'> = (s, x, plan, env) => {
  const { ident } = x;
  const e = s.elem;
  const tsElem = e.t === 'record' ? `T.${e.name}` : elemInType(e);
  plan.sig.push(`${ident}: readonly (${tsElem})[]${inArrayTypedForm(e)}${s.nullable ? ' | null' : ''}`);
  if (e.t === 'record') plan.pre.push(`const ${ident}$ = recordArrayArg(${where(env, x)}, records.${e.name}(), ${ident}, ${s.nullable});`);
  else if (e.t === 'cstring') plan.pre.push(`const ${ident}$ = stringArrayArg(${where(env, x)}, ${ident}, ${s.nullable});`);
  else plan.pre.push(`const ${ident}$ = scalarArrayArg(${where(env, x)}, '${ctypeTag(e)}', ${ident}, ${s.nullable});`);
  plan.callArgs.push(e.t === 'record' ? `${ident}$.bytes` : `${ident}$.data`);
  if (s.inout) {
    const type = e.t === 'record' ? `T.${e.name}[]` : arrayType(e);
    plan.outs.push({
      name: x.p.name,
      type,
      value: e.t === 'record' ? `decodeRecords<T.${e.name}>(records.${e.name}(), ${ident}$.bytes!, ${ident}$.count)` : `${ident}$.data as unknown as ${type}`,
    });
  }
};

const emitCount: RoleEmitter<'count'> = (s, x, plan) => {
  plan.derivedCounts.push({ name: x.p.name, of: s.of });
  plan.callArgs.push(`${x.ident}$n`);
};

/** The output read from slot `i` of the Scratch. */
function slotOut(name: string, e: Elem, i: number): Out {
  return { name, type: elemType(e), value: readSlot(e, i), ...(readsAsNumber64(e) ? { slot64: i } : {}) };
}

const emitOut: RoleEmitter<'out'> = (s, x, plan) => {
  const i = takeSlot(plan, x.p.name);
  plan.callArgs.push(`s.slot(${i})`);
  plan.pre.push(zeroSlot(i));
  plan.outs.push(slotOut(x.p.name, s.elem, i));
};

const emitInout: RoleEmitter<'inout'> = (s, x, plan, env) => {
  const i = takeSlot(plan, x.p.name);
  plan.sig.push(`${x.ident}: ${elemInType(s.elem)}${s.elem.t === 'handle' ? ' | null' : ''}`);
  plan.pre.push(...checkScalar(env.fn.name, x.p.name, x.ident, s.elem, s.elem.t === 'handle'));
  plan.callArgs.push(`s.slot(${i})`);
  plan.outs.push(slotOut(x.p.name, s.elem, i));
  plan.pre.push(writeSlot(s.elem, i, x.ident)); // a null handle was turned into 0 by its check
};

const emitOutRecord: RoleEmitter<'outRecord'> = (s, x, plan, env) => {
  const { model } = env.ctx;
  const size = model.records.get(`struct ${s.record}`)?.size ?? model.records.get(`union ${s.record}`)?.size;
  plan.pre.push(`const ${x.ident}$ = new Uint8Array(${size ?? `records.${s.record}().size`});`);
  if (s.version !== undefined) plan.pre.push(`new DataView(${x.ident}$.buffer).setUint32(0, 0x${s.version.toString(16)}, true); // version`);
  plan.callArgs.push(`${x.ident}$`);
  plan.outs.push(recordOut(env, x, s.record));
};

const emitInoutRecord: RoleEmitter<'inoutRecord'> = (s, x, plan, env) => {
  const { ident } = x;
  const opaque = isOpaqueRecord(env, s.record);
  // a trailing in/out record may be left out: the call fills it from zero
  const optional = env.params.slice(x.i + 1).every((y) => !takesTypedArg(y.sem)) ? '?' : '';
  plan.sig.push(`${ident}${optional}: ${opaque ? 'Uint8Array' : `Partial<T.${s.record}> | Uint8Array`}${optional ? '' : ' | null'}`);
  plan.pre.push(`const ${ident}$ = new Uint8Array(records.${s.record}().size);`);
  if (!optional) plan.pre.push(`if (${ident} === undefined) throw argError(${where(env, x)}, 'a record object, its encoded bytes or null', ${ident});`);
  plan.pre.push(
    `if (${ident} != null) ${ident}$.set(new Uint8Array(recordArg(${where(env, x)}, records.${s.record}(), ${ident}, false) as Uint8Array).subarray(0, ${ident}$.length));`,
  );
  if (s.version !== undefined) plan.pre.push(`new DataView(${ident}$.buffer).setUint32(0, 0x${s.version.toString(16)}, true); // NVML struct version`);
  plan.callArgs.push(`${ident}$`);
  plan.outs.push(recordOut(env, x, s.record));
};

const emitOutText: RoleEmitter<'outText'> = (s, x, plan, env) => {
  const { ident } = x;
  if (s.capacity) {
    plan.pre.push(`const ${ident}$ = new Uint8Array(${s.capacity});`);
  } else if (typeof s.length === 'number') {
    plan.pre.push(`const ${ident}$ = new Uint8Array(${s.length});`); // a fixed size the API documents
  } else {
    const len = env.byName.get(s.length)!;
    plan.late.push(`const ${ident}$ = new Uint8Array(Math.max(1, allocLength('${env.fn.name}', '${len.p.name}', ${len.ident})));`);
  }
  plan.callArgs.push(`${ident}$`);
  plan.outs.push({ name: x.p.name, type: 'string', value: `textFrom(${ident}$)` });
};

const emitOutArray: RoleEmitter<'outArray'> = (s, x, plan, env) => {
  // a fixed element count the API documents, or the input that says how many
  const count = typeof s.count === 'number' ? undefined : env.byName.get(s.count)!;
  plan.late.push(`const ${x.ident}$ = ${allocArray(s.elem, count ? `allocLength('${env.fn.name}', '${s.count}', ${count.ident})` : String(s.count))};`);
  plan.callArgs.push(`${x.ident}$`);
  plan.outs.push({
    name: x.p.name,
    type: s.elem.t === 'record' ? `T.${s.elem.name}[]` : arrayType(s.elem),
    value: finishArray(s.elem, `${x.ident}$`, count ? `Number(${count.ident})` : String(s.count)),
  });
};

const emitCapacityArray: RoleEmitter<'capacityArray'> = (s, x, plan) => {
  plan.capacity ??= { count: s.count, arrays: [], elem: { t: 'int', bits: 64, signed: false, size: true } };
  plan.capacity.arrays.push({ name: x.p.name, elem: s.elem });
  plan.callArgs.push(`${x.ident}$`);
  plan.outs.push({ name: x.p.name, type: s.elem.t === 'record' ? `T.${s.elem.name}[]` : arrayType(s.elem), value: finishArray(s.elem, `${x.ident}$`, 'n') });
};

const emitCapacity: RoleEmitter<'capacity'> = (s, x, plan, env) => {
  const text = s.of.length === 1 ? env.params.find((y) => y.p.name === s.of[0]) : undefined;
  const i = takeSlot(plan, x.p.name);
  plan.callArgs.push(`s.slot(${i})`);
  if (text?.sem.role === 'outText') {
    // a text buffer's in/out length: filled with the buffer's capacity
    plan.pre.push(writeSlot(s.elem, i, String(text.sem.capacity ?? 0)));
    return;
  }
  plan.capacity ??= { count: x.p.name, arrays: [], elem: s.elem };
  plan.capacity.elem = s.elem;
  plan.capacity.count = x.p.name;
};

/** The attribute enum's members this release has, each with the element type of its value. */
function attrCases(env: FunctionEnv, x: ParamView, table: string): { value: string; elem: Elem }[] {
  const { model, overrides } = env.ctx;
  const F = env.fn.name;
  const t = overrides.attrTables?.[table];
  if (!t) throw new Error(`${F}.${x.p.name}: attribute table ${table} missing`);
  const enumDecl =
    [...model.enums.values()].find((e) => model.enumTsName.get(e.name) === t.enum || e.name === `enum ${t.enum}`) ??
    [...model.enums.values()].find((e) => model.ir.typedefs.some((d) => d.name === t.enum && d.type.kind === 'named' && d.type.name === e.name));
  if (!enumDecl) throw new Error(`${F}: enum ${t.enum} not found`);
  // members a release lacks (older headers) are left out of its table
  return Object.entries(t.values).flatMap(([member, elem]) => {
    const m = enumDecl.members.find((y) => y.name === member);
    return m ? [{ value: m.value, elem }] : [];
  });
}

const emitAttrValue: RoleEmitter<'attrValue'> = (s, x, plan, env) => {
  const F = env.fn.name;
  const { ident } = x;
  const cases = attrCases(env, x, s.table);
  const attr = env.byName.get(s.attr)!;
  const union = [...new Set(cases.map((c) => elemType(c.elem)))].join(' | ');
  plan.callArgs.push(`${ident}$`);
  if (env.params.some((y) => y.sem.role === 'attrSize' && y.sem.of === x.p.name)) {
    // the size argument: the attribute's own (a wrong size is refused by the library, or overruns it)
    plan.pre.push(`const ${ident}$size = attrBytes(${attr.ident} as number);`);
    plan.post.unshift(attrSizer(F, attr.p.name, cases));
  }
  if (s.dir === 'in') {
    const inUnion = [...new Set(cases.map((c) => attrInType(c.elem)))].join(' | ');
    plan.sig.push(`${ident}: ${inUnion.replace(/T\.CUDA_POINTER_ATTRIBUTE_P2P_TOKENS_st/, 'never')}`);
    plan.pre.push(`const ${ident}$ = attrEncode(${attr.ident} as number, ${ident});`);
    plan.post.unshift(attrEncoder(F, x.p.name, attr.p.name, cases));
    return;
  }
  if (attr.sem.role !== 'inArray') {
    plan.pre.push(`const ${ident}$ = new Uint8Array(16);`);
    plan.outs.push({ name: x.p.name, type: union, value: `attrDecode(${attr.ident} as number, ${ident}$)` });
  } else {
    // one caller pointer per attribute: a table of addresses into one buffer of 16-byte cells
    plan.pre.push(`const ${ident}$cells = new Uint8Array(Math.max(1, ${attr.ident}$.count) * 16);`);
    plan.pre.push(`const ${ident}$ = new BigUint64Array(Math.max(1, ${attr.ident}$.count));`);
    plan.pre.push(`{ const base = BigInt(addressOf(${ident}$cells)); for (let k = 0; k < ${attr.ident}$.count; k++) ${ident}$[k] = base + BigInt(16 * k); }`);
    plan.outs.push({
      name: x.p.name,
      type: `(${union})[]`,
      value: `Array.from({ length: ${attr.ident}$.count }, (_, k) => attrDecode(Number((${attr.ident}$.data as Uint32Array)[k]), ${ident}$cells.subarray(16 * k, 16 * k + 16)))`,
    });
  }
  plan.post.unshift(attrDecoder(F, attr.p.name, cases, union));
};

/** One emitter per parameter role: what a parameter of that role adds to its function's plan. */
const ROLE_EMITTERS: { [R in Sem['role']]: RoleEmitter<R> } = {
  value: emitValue,
  recordValue: emitRecordValue,
  callback: emitCallback,
  string: emitString,
  pointer: emitPointer,
  inRecord: emitInRecord,
  inArray: emitInArray,
  count: emitCount,
  out: emitOut,
  inout: emitInout,
  outRecord: emitOutRecord,
  inoutRecord: emitInoutRecord,
  outText: emitOutText,
  outArray: emitOutArray,
  capacityArray: emitCapacityArray,
  capacity: emitCapacity,
  attrValue: emitAttrValue,
  scalar: emitScalar,
  resultArray: emitResultArray,
  countOut: emitCountOut,
  attrSize: emitAttrSize,
};

/** Counts derived from the arrays they count, and arrays whose count stays an input: they must hold at least that many. */
function addCountChecks(plan: FunctionPlan, env: FunctionEnv): void {
  const F = env.fn.name;
  for (const c of plan.derivedCounts) {
    const arrays = c.of.map((a) => env.byName.get(a)!).filter(Boolean);
    if (arrays.length === 1) plan.pre.push(`const ${typedIdent(c.name)}$n = ${arrays[0].ident}$.count;`);
    else
      plan.pre.push(
        `const ${typedIdent(c.name)}$n = sameLength('${F}', [${arrays.map((a) => `'${a.p.name}'`).join(', ')}], [${arrays.map((a) => `${a.ident}$.count`).join(', ')}], [${arrays.map((a) => `${a.ident} !== null`).join(', ')}]);`,
      );
  }
  for (const x of env.params) {
    if (x.sem.role === 'inArray' && x.sem.count) {
      const count = env.byName.get(x.sem.count);
      if (count && count.sem.role === 'value')
        plan.pre.push(`if (${x.ident} !== null) coversCount('${F}', '${x.p.name}', ${x.ident}$.count, ${count.ident}, '${count.p.name}');`);
    }
  }
}

/** The plan of one typed function: every parameter through its role's emitter, in C order, then the count checks. */
export function planFunction(env: FunctionEnv): FunctionPlan {
  const plan: FunctionPlan = {
    sig: [],
    pre: [],
    late: [],
    register: [],
    post: [],
    outs: [],
    callArgs: [],
    docNotes: [],
    slots: 0,
    slotOf: new Map(),
    derivedCounts: [],
  };
  for (const x of env.params) {
    const emit = ROLE_EMITTERS[x.sem.role] as RoleEmitter<Sem['role']>;
    emit(x.sem, x, plan, env);
  }
  addCountChecks(plan, env);
  return plan;
}
