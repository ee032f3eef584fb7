// The cases: for every typed function and parameter, each bad value the parameter's kind must reject,
// the other parameters neutral; for the raw layer, host memory shorter than the pointee (typed arrays,
// ArrayBuffers, DataViews), typed arrays of the wrong element size, strings and non-addresses for
// pointers. The support API's cases are in support-api.ts.
import { OWNED_HANDLES } from '../../generator/model';
import type { CType, FuzzParam, ModuleIR } from './model';
import { BAD_VALUES, BAD_VALUE_IDS, neutral, neutralCandidates, validity, type ArgSpec, type BadValueId, type TypedArrayName } from './values';

export interface FuzzCase {
  id: number;
  layer: 'typed' | 'raw' | 'support';
  module: string;
  fn: string;
  /** The parameter under test (named in the expected error). */
  param: string;
  position: number;
  /** The parameter's kind (typed) or its C pointee (raw), for reports. */
  accepts: string;
  /** The bad value, as a label (`NaN`, `'x'`, `Uint8Array(3) for 4-byte int`). */
  value: string;
  args: ArgSpec[];
}

let nextId = 0;

/** The typedefs that are handles: the IR's opaque ones and those the type model brands although their
 *  struct is complete (cuBLASLt's descriptors: passed by value as handles, not as memory). */
function handleTypedefs(ir: ModuleIR): Set<string> {
  return new Set([...ir.opaque, ...ir.typedefs.map((t) => t.name).filter((n) => Object.hasOwn(OWNED_HANDLES, n))]);
}

/** Every bad-value case of one module's typed layer; `only` limits it to those functions. */
export function typedCases(module: string, functions: Map<string, FuzzParam[]>, only?: Set<string>): FuzzCase[] {
  const cases: FuzzCase[] = [];
  for (const [fn, params] of functions) {
    if (only && !only.has(fn)) continue;
    const base = params.map(neutral);
    params.forEach((p, position) => {
      for (const value of BAD_VALUE_IDS) {
        if (validity(p, BAD_VALUES[value]()) !== 'bad') continue;
        const args = base.slice();
        args[position] = { bad: value as BadValueId };
        cases.push({ id: nextId++, layer: 'typed', module, fn, param: p.name, position, accepts: describeParam(p), value, args });
      }
      // a record object with one field of the wrong JS type, for every field a string cannot fill
      if (p.accepts === 'record') {
        for (const field of p.recordFields ?? []) {
          const args = base.slice();
          args[position] = { badField: field };
          cases.push({ id: nextId++, layer: 'typed', module, fn, param: p.name, position, accepts: 'record field', value: `{${field}:'x'}`, args });
        }
      }
    });
  }
  return cases;
}

/**
 * The same case with other neutral values: `choice[q]` picks parameter q's candidate. Undefined when a
 * choice runs past the candidates (nothing left to try).
 */
export function withNeutrals(c: FuzzCase, params: FuzzParam[], choice: number[]): FuzzCase | undefined {
  const args = c.args.slice();
  for (let q = 0; q < params.length; q++) {
    if (q === c.position) continue;
    const candidates = neutralCandidates(params[q]);
    if ((choice[q] ?? 0) >= candidates.length) return undefined;
    args[q] = candidates[choice[q] ?? 0];
  }
  return { ...c, args };
}

function describeParam(p: FuzzParam): string {
  if (p.accepts === 'int' || p.accepts === 'enum') return `${p.accepts}${p.bits ?? ''}${p.signed === false ? 'u' : ''}`;
  return p.nullable && p.accepts !== 'pointer' ? `${p.accepts}?` : p.accepts;
}

/** What a raw parameter's C type is to the fuzz: a sized pointee (scalar or record), or neither. */
type Pointee = { size: number; scalar: boolean; label: string } | undefined;

const SCALARS: Record<string, number> = {
  char: 1,
  'signed char': 1,
  'unsigned char': 1,
  short: 2,
  'unsigned short': 2,
  int: 4,
  'unsigned int': 4,
  long: 8,
  'unsigned long': 8,
  'long long': 8,
  'unsigned long long': 8,
  float: 4,
  double: 8,
  _Bool: 1,
  bool: 1,
  _Float16: 2,
};

function rawModel(ir: ModuleIR) {
  const typedefs = new Map(ir.typedefs.map((t) => [t.name, t.type]));
  const records = new Map(ir.records.map((r) => [r.name, r.size]));
  const enums = new Map(ir.enums.map((e) => [e.name, e.size]));
  const opaque = handleTypedefs(ir);
  /** Size of a value of type t (scalars, enums, handles, pointers, records), or undefined (void, functions). */
  const sizeOf = (t: CType, depth = 0): { size: number; scalar: boolean } | undefined => {
    if (depth > 10) return undefined;
    switch (t.kind) {
      case 'builtin':
        return t.name in SCALARS ? { size: SCALARS[t.name], scalar: true } : undefined;
      case 'pointer':
        return { size: 8, scalar: true };
      case 'named': {
        if (opaque.has(t.name) || t.name === 'size_t') return { size: 8, scalar: true };
        if (enums.has(t.name)) return { size: enums.get(t.name)!, scalar: true };
        if (records.has(t.name)) return { size: records.get(t.name)!, scalar: false };
        const td = typedefs.get(t.name);
        return td ? sizeOf(td, depth + 1) : undefined;
      }
      default:
        return undefined;
    }
  };
  /** The pointee of a non-const data pointer parameter (through typedefs that are not handles). */
  const pointee = (t: CType): Pointee => {
    if (t.kind !== 'pointer' || t.to.kind === 'function' || t.to.kind === 'array' || t.to.const) return undefined;
    const s = sizeOf(t.to);
    if (!s) return undefined;
    const label = t.to.kind === 'builtin' || t.to.kind === 'named' ? t.to.name : t.to.kind;
    return { ...s, label };
  };
  /** Whether the raw layer passes this parameter by value as a record (an object the fuzz cannot neutralise). */
  const byValueRecord = (t: CType): boolean => {
    const s = t.kind === 'named' ? sizeOf(t) : undefined;
    return !!s && !s.scalar;
  };
  return { pointee, byValueRecord, sizeOf };
}

/** A typed array whose element size differs from a scalar pointee's but covers its bytes. */
function wrongElement(size: number): { ctor: TypedArrayName; length: number } | undefined {
  if (size === 4) return { ctor: 'Float64Array', length: 1 };
  if (size === 8) return { ctor: 'Int32Array', length: 2 };
  if (size === 2) return { ctor: 'Int32Array', length: 1 };
  return undefined;
}

/** A raw parameter as the raw layer's guards see it: a function pointer, a `const char *` (strings
 *  welcome), another data pointer, or none of these (scalars, handles, records by value). */
type RawPointer = { k: 'funcptr' } | { k: 'cstring' } | { k: 'data'; ptr: CType } | undefined;

function rawPointerOf(ir: ModuleIR): (t: CType) => RawPointer {
  const typedefs = new Map(ir.typedefs.map((t) => [t.name, t.type]));
  const opaque = handleTypedefs(ir);
  const resolve = (t: CType): CType => {
    for (let depth = 0; depth < 10 && t.kind === 'named' && !opaque.has(t.name) && typedefs.has(t.name); depth++) {
      const next = typedefs.get(t.name)!;
      t = t.const && (next.kind === 'builtin' || next.kind === 'named') ? { ...next, const: true } : next;
    }
    return t;
  };
  return (t) => {
    const r = resolve(t);
    if (r.kind === 'array') return { k: 'data', ptr: r };
    if (r.kind !== 'pointer') return undefined;
    const to = resolve(r.to);
    if (to.kind === 'function') return { k: 'funcptr' };
    const constChar = (r.to.kind === 'builtin' || r.to.kind === 'named') && r.to.const;
    if (to.kind === 'builtin' && to.name === 'char' && (constChar || to.const)) return { k: 'cstring' };
    return { k: 'data', ptr: r };
  };
}

/**
 * Raw-layer cases of one module: each non-const sized pointer parameter given host memory one byte
 * shorter than its pointee in each form (Uint8Array, ArrayBuffer, DataView) and (scalar pointees) a
 * typed array of another element size; every pointer but a `const char *` given a string, a number
 * that is no address, and undefined; every function pointer a string and a buffer. The others are
 * 0 / null. `exported` limits them to the raw layer's exports.
 */
export function rawCases(module: string, ir: ModuleIR, exported: Set<string>, only?: Set<string>): FuzzCase[] {
  const m = rawModel(ir);
  const pointerOf = rawPointerOf(ir);
  const cases: FuzzCase[] = [];
  for (const f of ir.functions) {
    if (!exported.has(f.name) || (only && !only.has(f.name))) continue;
    if (f.params.some((p) => m.byValueRecord(p.type))) continue;
    const base: ArgSpec[] = f.params.map((p) => (pointerOf(p.type) ? { n: 'null' } : { n: 'zero' }));
    f.params.forEach((p, position) => {
      const kind = pointerOf(p.type);
      if (!kind || kind.k === 'cstring') return;
      const pt = kind.k === 'data' && kind.ptr.kind === 'pointer' ? m.pointee(kind.ptr) : undefined;
      const accepts = pt ? `${pt.label}* (${pt.size} B)` : kind.k === 'funcptr' ? 'function pointer' : 'pointer';
      const add = (arg: ArgSpec, value: string) => {
        const args = base.slice();
        args[position] = arg;
        cases.push({ id: nextId++, layer: 'raw', module, fn: f.name, param: p.name, position, accepts, value, args });
      };
      add({ bad: "'x'" }, "'x'");
      if (kind.k === 'funcptr') {
        add({ n: 'typed', ctor: 'Uint8Array', length: 8 }, 'Uint8Array(8)');
        return;
      }
      add({ bad: '1.5' }, '1.5');
      add({ bad: 'undefined' }, 'undefined');
      // a char * of unknown length (the call takes its length) may be empty: only pointees of 2 bytes or more
      if (!pt || pt.size < 2) return;
      add({ n: 'typed', ctor: 'Uint8Array', length: pt.size - 1 }, `Uint8Array(${pt.size - 1})`);
      add({ n: 'arraybuffer', size: pt.size - 1 }, `ArrayBuffer(${pt.size - 1})`);
      add({ n: 'dataview', size: pt.size - 1 }, `DataView(${pt.size - 1})`);
      const wrong = pt.scalar ? wrongElement(pt.size) : undefined;
      if (wrong) add({ n: 'typed', ...wrong }, `${wrong.ctor}(${wrong.length})`);
    });
  }
  return cases;
}
