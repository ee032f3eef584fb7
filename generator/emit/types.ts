// Emits `types.ts`: enums (with name↔value lookup), handle brands, typedefs, record interfaces
// plus their lazily built koffi types, callback prototypes and constants.
import { supportSpecifier } from '../support-path';
import type { CType, Field, RecordDecl } from '../ir/schema';
import { formatCType } from '../parse/ctype';
import { arrayOf, bareName, charArrayIsText, safeIdent, type Kind, type TypeModel } from '../model';
import { writeEnumTable, type EnumEntry } from '../../support/tables/enums';
import { writeRecordTable, type RecordEntry, type RecordField } from '../../support/tables/records';
import { Writer } from './writer';
import { enumMemberDoc, fieldDoc, noDocFacts, type DocFacts } from './docs';

export function fieldTsType(model: TypeModel, f: Field): string {
  const kind = model.kind(f.type);
  if (kind.k === 'array') {
    if (kind.of.k === 'int' && kind.of.isChar && charArrayIsText(kind, f.name)) return 'string';
    return arrayOf(model.tsType(kind.ofType, 'field'));
  }
  return model.tsType(f.type, 'field');
}

/** koffi field spec source: `'uint32_t'`, `records.X`, or with an array length. */
export function fieldFfi(model: TypeModel, f: Field): string {
  const kind = model.kind(f.type);
  if (kind.k === 'array') {
    const hint = kind.of.k === 'int' && kind.of.isChar && charArrayIsText(kind, f.name) ? 'String' : 'Array';
    return `${elementFfi(model, kind.of)}, { n: ${kind.length}${hint === 'String' ? `, hint: 'String'` : ''} }`;
  }
  return elementFfi(model, kind);
}

/** A field of the records table (support/tables/records): `uint32_t`, `&Record`, `T[n]`, `char[n]$`. */
export function recordField(model: TypeModel, f: Field, align?: number): RecordField {
  const kind = model.kind(f.type);
  const out: RecordField = { name: f.name, type: '' };
  const lengths: number[] = [];
  let el = kind;
  for (; el.k === 'array'; el = el.of) lengths.push(el.length);
  if (el.k === 'record') {
    out.type = el.ts;
    out.record = true;
  } else out.type = model.ffiScalar(el, 'field');
  if (lengths.length) out.dims = lengths.reverse(); // innermost first
  if (kind.k === 'array' && kind.of.k === 'int' && kind.of.isChar && charArrayIsText(kind, f.name)) out.text = true;
  if (align) out.align = align;
  return out;
}

function elementFfi(model: TypeModel, kind: Kind): string {
  if (kind.k === 'record') return `records.${kind.ts}`;
  if (kind.k === 'array') return `koffi.array(${elementFfi(model, kind.of)}, ${kind.length})`;
  return `'${model.ffiScalar(kind, 'field')}'`;
}

/** koffi aligns members to at most 8 bytes. */
const KOFFI_MAX_ALIGN = 8;

interface KoffiLayout {
  /** Explicit alignment per field, where the natural one would misplace it. */
  aligns: (number | undefined)[];
  /** Padding bytes inserted before each field (where an alignment alone cannot place it). */
  padBefore: number[];
  /** Padding bytes after the last field, so that sizeof matches clang (records aligned beyond 8). */
  tail: number;
}

/**
 * How to make koffi reproduce clang's layout: explicit member alignments (≤ 8, koffi's limit) and,
 * where clang aligns beyond 8 (`float4`, `CUtensorMap`), explicit padding. Such records then have
 * clang's size and offsets, and alignment 8 in koffi.
 */
export function koffiLayout(model: TypeModel, r: RecordDecl): KoffiLayout {
  let offset = 0;
  let maxAlign = 1;
  let maxSize = 0;
  const aligns: (number | undefined)[] = [];
  const padBefore: number[] = [];
  for (const f of r.fields) {
    const { size } = model.sizeAlign(model.kind(f.type));
    const align = Math.min(KOFFI_MAX_ALIGN, model.sizeAlign(model.kind(f.type)).align);
    let explicit: number | undefined;
    let pad = 0;
    if (r.kind === 'struct') {
      const natural = Math.ceil(offset / align) * align;
      if (natural !== f.offset) {
        explicit = largestPow2Dividing(f.offset, KOFFI_MAX_ALIGN);
        const placed = Math.ceil(offset / explicit) * explicit;
        if (placed !== f.offset) pad = f.offset - offset;
      }
      offset = f.offset + size;
    } else {
      maxSize = Math.max(maxSize, size);
    }
    aligns.push(explicit);
    padBefore.push(pad);
    maxAlign = Math.max(maxAlign, explicit ?? align);
  }
  // an `aligned(N)` record: raise its alignment through the first field
  const want = Math.min(KOFFI_MAX_ALIGN, r.align);
  if (want > maxAlign && r.fields.length) {
    aligns[0] = want;
    maxAlign = want;
  }
  const end = r.kind === 'struct' ? offset : maxSize;
  const koffiSize = Math.ceil(end / maxAlign) * maxAlign;
  const tail = r.size > koffiSize ? r.size - end : 0;
  return { aligns, padBefore, tail };
}

function largestPow2Dividing(n: number, cap: number): number {
  if (n === 0) return cap;
  let p = 1;
  while (n % (p * 2) === 0 && p * 2 <= cap) p *= 2;
  return p;
}

export interface BitfieldMember {
  name: string;
  unit: string;
  shift: number;
  width: number;
}

const UNIT_TYPES: Record<number, string> = { 1: 'unsigned char', 2: 'unsigned short', 4: 'unsigned int', 8: 'unsigned long long' };

/**
 * The fields koffi sees. koffi has no bitfields, so each run of bitfields sharing a storage unit
 * becomes one unsigned integer field `_bitsN` (N = its byte offset); `members` says where each
 * bitfield sits in its unit, for the generated accessors.
 */
export function storageFields(model: TypeModel, r: RecordDecl): { fields: Field[]; members: BitfieldMember[] } {
  const fields: Field[] = [];
  const members: BitfieldMember[] = [];
  let unit: { offset: number; size: number; field: Field; members: (BitfieldMember & { bit: number })[] } | undefined;
  const close = () => {
    if (!unit) return;
    unit.field.name = `_bits${unit.offset}`;
    unit.field.type = { kind: 'builtin', name: UNIT_TYPES[unit.size] };
    unit.field.offset = unit.offset;
    for (const m of unit.members) members.push({ name: m.name, unit: unit.field.name, shift: m.bit - unit.offset * 8, width: m.width });
    unit = undefined;
  };
  for (const f of r.fields) {
    if (f.bitWidth === undefined || f.bitOffset === undefined) {
      close();
      fields.push(f);
      continue;
    }
    const size = Math.max(1, model.sizeAlign(model.kind(f.type)).size);
    const offset = Math.floor(f.bitOffset / (size * 8)) * size;
    if (unit && offset < unit.offset + unit.size && offset + size > unit.offset) {
      // overlaps the open unit: widen it to a naturally aligned unit covering both
      const lo = Math.min(unit.offset, offset);
      const hi = Math.max(unit.offset + unit.size, offset + size);
      let sz = 1;
      while (sz < hi - lo || lo % sz !== 0) sz *= 2;
      unit.offset = Math.floor(lo / sz) * sz;
      unit.size = sz;
    } else {
      close();
      const field: Field = { name: '', type: f.type, offset };
      fields.push(field);
      unit = { offset, size, field, members: [] };
    }
    if (f.bitWidth > 0 && f.name && !/^anon\d+$/.test(f.name)) unit.members.push({ name: f.name, unit: '', shift: 0, bit: f.bitOffset, width: f.bitWidth });
  }
  close();
  return { fields, members };
}

export function emitTypes(model: TypeModel, banner: string, docs: DocFacts = noDocFacts(model.spec.name, model.ir.cudaVersion)): string {
  const { ir } = model;
  const w = new Writer();
  w.line(banner);
  w.line(`// Types of the ${model.spec.title}: facts from the CUDA ${ir.cudaVersion} headers.`);
  // koffi through the run-time support: a bare \`require('koffi')\` from another folder costs ~2 ms
  // at import (Node walks node_modules and resolves koffi's package exports once per folder)
  const shared =
    'AnyMemory, Complex, ComplexScalar, DeviceMemory, DevicePointer, Handle, HasDevicePointer, HostMemory, Int64, Int64Scalar, Pointer, RealScalar, ScalarArg, UntypedScalar';
  w.line(
    `import { koffi, lazyEnums, lazyRecords, type KoffiType, ${shared
      .split(', ')
      .map((t) => `type ${t}`)
      .join(', ')} } from '${supportSpecifier(0)}';`,
  );
  w.line(`export type { ${[...shared.split(', '), 'KoffiType'].sort().join(', ')} };`);
  w.line(`void koffi; // used by callback prototypes`);
  w.blank();

  w.line(`/** The CUDA release these bindings were generated from. */`);
  w.line(`export const CUDA_RELEASE = '${ir.cudaVersion}';`);
  w.line(`/** ${model.spec.versionMacro ?? 'The CUDA release (as CUDA_VERSION)'} of the headers these bindings were generated from. */`);
  w.line(`export const HEADER_VERSION = ${ir.versionNumber};`);
  w.blank();
  const enumTable = [...writeEnums(w, model, docs), ...writeTypedefs(w, model)];
  w.blank();
  if (enumTable.length) {
    w.line(`// The enums' values, read on first access (Name|MEMBER=value …, or Alias=Name; see lazyEnums).`);
    w.line(`const ENUMS = \``);
    w.lines(writeEnumTable(enumTable));
    w.line(`\`;`);
    w.line(`lazyEnums(module.exports, ENUMS);`);
    w.blank();
  }
  writeRecordInterfaces(w, model, docs);
  writeBitfields(w, model);
  w.blank();
  writeRecordsTable(w, model);
  writeCallbacks(w, model);
  writeConstants(w, model);
  return w.toString();
}

/**
 * Enums: declared (types, TSDoc; no JavaScript), their objects built on first access by lazyEnums
 * from the ENUMS table, as TypeScript's enums are: name ↔ value lookup (`CUresult[0] ===
 * 'CUDA_SUCCESS'`). Hundreds of enum bodies run at import cost milliseconds. Returns their entries.
 */
function writeEnums(w: Writer, model: TypeModel, docs: DocFacts): EnumEntry[] {
  const { ir } = model;
  const table: EnumEntry[] = [];
  for (const e of ir.enums) {
    const ts = model.enumTsName.get(e.name)!;
    w.line(`/** \`${e.name}\` · ${e.header} · CUDA ${ir.cudaVersion} */`);
    w.block(`export declare enum ${ts}`, () => {
      for (const m of e.members) {
        const doc = enumMemberDoc(docs, e.name, m.name, m.value);
        w.line(`${doc ? `/** ${doc} */ ` : ''}${enumMember(m.name, m.value)}`);
      }
    });
    table.push({ name: ts, members: e.members });
    if (bareName(e.name) !== ts && !model.typedefs.has(bareName(e.name))) {
      w.line(`export type ${bareName(e.name)} = ${ts};`);
      w.line(`export declare const ${bareName(e.name)}: typeof ${ts};`);
      table.push({ name: bareName(e.name), alias: ts });
    }
    w.blank();
  }
  return table;
}

/** Typedefs: handles are branded numbers; aliases of enums and records keep their target's name.
 *  Returns the enum aliases they declare (entries of the ENUMS table). */
function writeTypedefs(w: Writer, model: TypeModel): EnumEntry[] {
  const table: EnumEntry[] = [];
  for (const td of model.ir.typedefs) {
    if (td.name.startsWith('__') || /^(u?int\d+_t|size_t|ptrdiff_t|wchar_t|u?intptr_t)$/.test(td.name)) continue;
    const line = typedefLine(model, td.name, td.type);
    if (!line) continue;
    w.line(`/** \`typedef ${formatCType(td.type, td.name)}\` · ${td.header} */`);
    w.lines(line);
    for (const l of line) {
      const alias = /^export declare const (\w+): typeof (\w+);$/.exec(l);
      if (alias) table.push({ name: alias[1], alias: alias[2] });
    }
  }
  return table;
}

/** Records: an interface for values (bitfields noted on their storage unit). */
function writeRecordInterfaces(w: Writer, model: TypeModel, docs: DocFacts): void {
  for (const r of model.ir.records) {
    const ts = bareName(r.name);
    w.line(`/** \`${r.name}\` · ${r.size} bytes, align ${r.align} · ${r.header} */`);
    const { fields, members } = storageFields(model, r);
    w.block(`export interface ${ts}`, () => {
      for (const f of fields) {
        const inUnit = members.filter((m) => m.unit === f.name);
        const bits = inUnit.length ? ` // bitfields ${inUnit.map((m) => `${m.name}:${m.width}@${m.shift}`).join(', ')}: use bitfields.${ts}` : '';
        const own = r.fields.find((x) => x.name === f.name);
        if (own) w.line(`/** ${fieldDoc(docs, r.name, own)} */`);
        w.line(`${safeProp(f.name)}: ${fieldTsType(model, f)};${bits}`);
      }
    });
  }
}

/** The Bitfield class and `bitfields`, accessors of the records that have bitfields. */
function writeBitfields(w: Writer, model: TypeModel): void {
  const withBits = model.ir.records.map((r) => ({ r, members: storageFields(model, r).members })).filter((x) => x.members.length);
  if (!withBits.length) return;
  w.blank();
  w.line(`/** A bitfield inside an integer storage unit field (koffi has no bitfields). */`);
  w.block(`export class Bitfield`, () => {
    w.line(`constructor(readonly unit: string, readonly shift: number, readonly width: number) {}`);
    w.line(`/** Reads the bitfield from a decoded record value. */`);
    w.block(`get(value: object): number`, () => {
      w.line(`const u = (value as Record<string, number | bigint>)[this.unit];`);
      w.line(`return Number((BigInt(u) >> BigInt(this.shift)) & ((1n << BigInt(this.width)) - 1n));`);
    });
    w.line(`/** Writes the bitfield into a record value (its unit must already be a number or bigint). */`);
    w.block(`set(value: object, bits: number): void`, () => {
      w.line(`const v = value as Record<string, number | bigint>;`);
      w.line(`const u = BigInt(v[this.unit] ?? 0);`);
      w.line(`const mask = ((1n << BigInt(this.width)) - 1n) << BigInt(this.shift);`);
      w.line(`const next = (u & ~mask) | ((BigInt(bits) << BigInt(this.shift)) & mask);`);
      w.line(`v[this.unit] = typeof v[this.unit] === 'bigint' ? next : Number(next);`);
    });
  });
  w.line(`/** Bitfield accessors per record: \`bitfields.X.field.get(value)\`. */`);
  w.block(
    `export const bitfields =`,
    () => {
      for (const { r, members } of withBits) {
        w.line(`${bareName(r.name)}: { ${members.map((m) => `${safeProp(m.name)}: new Bitfield('${m.unit}', ${m.shift}, ${m.width})`).join(', ')} },`);
      }
    },
    ';',
  );
}

/** `records`: the koffi types of the records, from one table string read by lazyRecords (a line per
 *  record costs far less to load than an entry of JavaScript code per record). */
function writeRecordsTable(w: Writer, model: TypeModel): void {
  const { ir } = model;
  w.line(`/** koffi types of this module's C records, each built on first call: \`records.CUlaunchConfig_st()\`. */`);
  w.block(`export interface Records`, () => {
    for (const r of ir.records) w.line(`readonly ${bareName(r.name)}: () => KoffiType;`);
  });
  w.line(`const RECORDS = \``);
  w.lines(writeRecordTable(ir.records.map((r) => recordEntry(model, r))));
  w.line(`\`;`);
  w.line(`/** koffi types of this module's C records (made on first read), each built on first call. */`);
  w.line(`export declare const records: Records;`);
  w.line(`lazyRecords(module.exports, RECORDS);`);
  w.blank();
}

/** A record as koffi lays it out: its storage fields, with the alignments and padding clang's layout needs. */
function recordEntry(model: TypeModel, record: RecordDecl): RecordEntry {
  const r = { ...record, fields: storageFields(model, record).fields };
  const { aligns, padBefore, tail } = koffiLayout(model, r);
  const fields = r.fields.flatMap((f, i): RecordField[] => {
    const pad: RecordField[] = padBefore[i] ? [{ name: `_pad${f.offset - padBefore[i]}`, type: 'uint8_t', dims: [padBefore[i]] }] : [];
    return [...pad, recordField(model, f, aligns[i])];
  });
  if (tail)
    fields.push(r.kind === 'union' ? { name: '_pad', type: 'uint8_t', dims: [r.size] } : { name: `_pad${r.size - tail}`, type: 'uint8_t', dims: [tail] });
  return { name: bareName(r.name), kind: r.kind, fields };
}

/** Callback prototypes (function-pointer typedefs), each built on first call. */
function writeCallbacks(w: Writer, model: TypeModel): void {
  const protos = model.ir.typedefs.filter((td) => td.type.kind === 'pointer' && td.type.to.kind === 'function');
  if (!protos.length) return;
  w.line(`/** Callback prototypes (function-pointer typedefs), built on first call; register with`);
  w.line(` *  \`koffi.register(fn, koffi.pointer(callbacks.X()))\`. */`);
  w.block(
    `export const callbacks =`,
    () => {
      for (const td of protos) {
        const fn = (td.type as CType & { kind: 'pointer' }).to as CType & { kind: 'function' };
        const ret = ffiOf(model, fn.returns, 'return');
        const params = fn.params.map((p) => ffiOf(model, p, 'param'));
        w.line(`${td.name}: once(() => koffi.proto(${ret}, [${params.join(', ')}])),`);
      }
    },
    ';',
  );
  w.line(`function once<T>(make: () => T): () => T {`);
  w.line(`  let value: T | undefined;`);
  w.line(`  return () => (value ??= make());`);
  w.line(`}`);
  w.blank();
}

/** Constants (#define) of the headers. */
function writeConstants(w: Writer, model: TypeModel): void {
  const { ir } = model;
  if (!ir.constants.length) return;
  w.line(`// Constants (#define) of the headers.`);
  for (const c of ir.constants) {
    if (c.kind === 'pointer') {
      const ts = c.type && /^\w+$/.test(c.type) && model.typedefs.has(c.type) ? c.type : 'number';
      w.line(`export const ${c.name} = ${Number(BigInt(c.value))} as ${ts === 'number' ? 'number' : ts};`);
    } else if (c.kind === 'int') {
      w.line(`export const ${c.name} = ${safeInteger(c.value) ? c.value : `${c.value}n`};`);
    } else {
      w.line(`export const ${c.name} = ${c.value};`);
    }
  }
}

function ffiOf(model: TypeModel, t: CType, position: 'param' | 'return'): string {
  const kind = model.kind(t);
  if (kind.k === 'record') return `records.${kind.ts}()`;
  return `'${model.ffiScalar(kind, position)}'`;
}

function safeInteger(v: string): boolean {
  const n = BigInt(v);
  return n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= -BigInt(Number.MAX_SAFE_INTEGER);
}
/** A member of a declared enum: a value beyond 2^53 is a bigint at run time, which a declared
 *  (ambient) enum cannot state: the member is left computed, its value in a comment. */
function enumMember(name: string, v: string): string {
  return safeInteger(v) ? `${name} = ${v},` : `${name}, // = ${v}n (a bigint)`;
}

function safeProp(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : `'${name}'`;
}

function typedefLine(model: TypeModel, name: string, t: CType): string[] | undefined {
  if (model.devicePointers.has(name)) return [`export type ${name} = DevicePointer;`];
  if (model.opaque.has(name)) {
    const k = model.kind({ kind: 'named', name });
    return [`export type ${name} = Handle<'${k.k === 'handle' ? k.tag : name}'>;`];
  }
  const own = model.kind({ kind: 'named', name });
  if (own.k === 'int' && own.brand) return [`export type ${name} = Handle<'${own.brand}'>;`];
  if (t.kind === 'named') {
    if (t.name.startsWith('enum ')) {
      const ts = model.enumTsName.get(t.name);
      if (!ts || ts === name) return undefined;
      return [`export type ${name} = ${ts};`, `export declare const ${name}: typeof ${ts};`];
    }
    if (t.name.startsWith('struct ') || t.name.startsWith('union ')) {
      if (!model.records.has(t.name)) return [`export type ${name} = Pointer;`];
      return bareName(t.name) === name ? undefined : [`export type ${name} = ${bareName(t.name)};`];
    }
    const k = model.kind(t);
    if (k.k === 'enum') return [`export type ${name} = ${t.name};`, `export declare const ${name}: typeof ${t.name};`];
    if (k.k === 'handle' || k.k === 'deviceptr') return [`export type ${name} = ${t.name};`];
  }
  const k = model.kind(t);
  switch (k.k) {
    case 'int':
      return [`export type ${name} = ${k.bytes === 8 && !k.isSize ? 'number | bigint' : 'number'};`];
    case 'float':
      return [`export type ${name} = number;`];
    case 'bool':
      return [`export type ${name} = boolean;`];
    case 'pointer':
    case 'funcptr':
      return [`export type ${name} = Pointer;`];
    case 'record':
      return bareName(k.decl.name) === name ? undefined : [`export type ${name} = ${bareName(k.decl.name)};`];
    case 'array':
      return [`export type ${name} = ${arrayOf(model.tsType(k.ofType, 'field'))};`];
    default:
      return undefined;
  }
}

export { safeIdent };
