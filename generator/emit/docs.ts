// TSDoc of the generated functions, enum members and record fields, built from facts the generator
// knows (never from header prose): each parameter's direction, array and count, capacity/count pairs,
// attribute-typed values, nullability and C type (the semantics model); the outputs; the release that
// introduced a name where a header states it (the driver's cudaTypedefs.h), else the bounds the stored
// releases give; the minimum driver; deprecation (a header attribute, marker macro or `\deprecated` command);
// the Doxygen group with NVIDIA's reference page; the objects-layer method that wraps the call. A
// user's own tree may also carry the headers' own text (`cuda-ts-gen --docs`, ./docs-header.ts).
// Each fact is one small function of a table; a doc block is `summary` then one tag per line.
import type { FunctionDecl, Param } from '../ir/schema';
import { formatCType } from '../parse/ctype';
import { elemText, type Elem, type FunctionSem, type ParamSem, type Sem } from '../semantics';
import { MIN_DRIVER, versionString } from '../../support/versions';
import { functionPage, groupPage, isCurrentPage, modulePage } from './docs-links';
import { OBJECTS_MODULE, objectsWrapper } from './docs-objects';
import type { HeaderDoc } from './docs-header';

/** What the doc builders of one module read, besides the IR. */
export interface DocFacts {
  module: string;
  release: string;
  /** Bounds on when each function, enum member (`Enum.MEMBER`) and field (`Record.field`) the module's
   *  oldest stored release lacks was added: after release `after`, present in `in` (./docs-history.ts). */
  added: ReadonlyMap<string, { after: string; in: string }>;
  /** The oldest stored release: what a name without an `added` entry is at least as old as. */
  oldest: string;
  /** The library version the release's headers declare (the IR's `versionNumber`): which pages of a
   *  library documented per version to link. Unknown: no such page is linked. */
  version?: number;
  /** The module's function names (cuBLAS anchors tell a type family from a single function by them). */
  names?: ReadonlySet<string>;
  /** Handle type → one function of the module that returns such a handle (./docs-makers.ts). */
  makers?: ReadonlyMap<string, string>;
  /** The headers' own documentation by exported symbol: only under `cuda-ts-gen --docs`. */
  headerDocs?: ReadonlyMap<string, HeaderDoc>;
}

/** No facts (a module emitted on its own): the docs keep only what the IR itself says. */
export function noDocFacts(module: string, release: string): DocFacts {
  return { module, release, added: new Map(), oldest: release };
}

/** The headers' own documentation of `fn` (--docs): by its exported symbol, else by its name (a comment
 *  on an inline wrapper or recovered from before an `#if`: ./docs-header.ts). */
function headerDocOfFn(f: DocFacts, fn: FunctionDecl): HeaderDoc | undefined {
  return f.headerDocs?.get(fn.symbol) ?? f.headerDocs?.get(fn.name);
}

/** `/** … *\/` body text: the first line, then one line per tag (the writer adds `/** ` and ` *\/`). */
export function docBlock(summary: string, tags: string[]): string {
  return [summary, ...tags].map(clean).join('\n * ');
}

/** The doc of an entry's lazy stub: the summary line alone, and `@function` (TypeDoc then documents the
 *  stub as the function it is, with the implementation's signature and TSDoc). Editors and TypeScript's
 *  quick info show the implementation's TSDoc (in the chunk file, tags included) wherever a stub is
 *  called, so the tags are written once per function instead of twice. */
export function stubDoc(doc: string): string {
  return `${doc.split('\n')[0]}\n * @function`;
}

/** Text safe inside a doc comment. */
function clean(text: string): string {
  // a multi-line text (the headers' own, under --docs) keeps its lines inside the comment
  return text.replace(/\*\//g, '*\u200b/').replace(/\n/g, '\n * ');
}

/** The C declaration of a parameter (`const char *name`), in backticks. */
function cDecl(p: Param): string {
  return `\`${formatCType(p.type, '').trim()}\``;
}

/** A scalar element as the docs name it: its C spelling for the typed layer's reader. */
function elemName(e: Elem): string {
  return e.t === 'cstring' ? 'C string' : e.t === 'address' ? 'address' : `\`${elemText(e)}\``;
}

/** "null allowed", said only where the typed layer takes null and a fact says the C call accepts it:
 *  the header's own tag (an `optional` cue on the parameter) or a reviewed override. The binding's
 *  leniency alone (it passes null through) is no such fact, so it is not said. */
const nullable = (yes: boolean | undefined, stated: boolean) => (yes && stated ? '; null allowed' : '');

const SCALAR_VALUE: Record<Extract<Sem, { role: 'scalar' }>['type'], string> = {
  f16: 'a number, stored as a half',
  bf16: 'a number, stored as a bfloat16',
  f32: 'a number',
  f64: 'a number',
  i8: 'an integer',
  u8: 'an integer',
  i32: 'an integer',
  u32: 'an integer',
  i64: 'a number or bigint',
  u64: 'a number or bigint',
  c64: '`{ re, im }`, `[re, im]` or a real number',
  c128: '`{ re, im }`, `[re, im]` or a real number',
  untyped: '',
};
const DIR_TEXT = { in: 'in', out: 'out', inout: 'in/out' } as const;
const SPACE_TEXT = { device: 'device memory', host: 'host memory', either: 'host or device memory' } as const;

/** A data pointer: its direction, where its memory lives, which parameter counts it in which unit. */
function pointerPhrase(s: Extract<Sem, { role: 'pointer' }>, p: Param): string {
  const where = s.space ? SPACE_TEXT[s.space] : 'address or host buffer';
  const of = s.count?.elem ? ` of \`${s.count.elem}\`` : s.count?.typeParam ? ` of \`${s.count.typeParam}\`` : '';
  const count = s.count ? `, \`${s.count.param}\` ${s.count.unit}${of}` : s.size ? ` covering \`${s.size}\` bytes` : '';
  const kept = s.retained ? ', kept by the library after the call' : '';
  return `${DIR_TEXT[s.dir ?? 'in']} ${cDecl(p)}: ${where}${count}${kept}${s.nullable && s.nullFact ? ', or null' : ''}`;
}

/** The typedef a parameter names, its `const` dropped (`const cusparseMatDescr_t` → cusparseMatDescr_t). */
const namedType = (p: Param) => (p.type.kind === 'named' ? p.type.name : undefined);

/** What an integer the typed layer checks may be, when no other parameter gives it a role. */
function integerRange(e: Extract<Elem, { t: 'int' }>): string {
  const sign = e.signed ? 'a signed' : 'an unsigned';
  return `${sign} ${e.bits}-bit integer${e.bits === 64 ? ' (a number, or a bigint past 2^53)' : ''}`;
}

/** What a by-value parameter is, from the facts the model holds about its type: an enum's values (linked
 *  to the enum the signature names), a handle (with a function of the module that returns one), a device
 *  address, else the values the typed layer accepts. `tsType` is the parameter's type in the signature. */
export function valuePhrase(s: Extract<Sem, { role: 'value' }>, p: Param, f: DocFacts, tsType?: string): string {
  const e = s.elem;
  const returnedBy = (...names: (string | undefined)[]) => {
    const maker = names.map((n) => (n ? f.makers?.get(n) : undefined)).find(Boolean);
    return maker ? `, such as \`${maker}\` returns` : '';
  };
  switch (e.t) {
    case 'enum':
      return `one of the ${tsType && /^T\.\w+$/.test(tsType) ? `{@link ${tsType}}` : `\`${namedType(p) ?? e.name}\``} values`;
    case 'handle':
      return `an opaque handle${returnedBy(e.name, namedType(p))}`;
    case 'deviceptr':
      return 'a device address';
    case 'int':
      return `${e.brand ? `a \`${e.brand}\` value` : integerRange(e)}${returnedBy(e.brand, namedType(p))}`;
    case 'float':
      return e.bits === 32 ? 'a number (stored as a 32-bit float)' : 'a number';
    case 'bool':
      return 'a boolean';
    default:
      return e.t === 'address' ? 'an address' : '';
  }
}

/** What a parameter of each role is, for the caller of the typed layer (`in …`, `in/out …`). */
const TYPED_PHRASES: { [R in Exclude<Sem['role'], 'value'>]: (s: Extract<Sem, { role: R }>, p: Param, stated: boolean) => string } = {
  recordValue: (s) => `in \`${s.record}\` by value: a {@link T.${s.record}} object, its fields checked before the call`,
  callback: (s, p, stated) => `in C callback ${cDecl(p)}${nullable(s.nullable, stated)}`,
  string: (s, p, stated) => `in string (\`const char *\`)${nullable(s.nullable, stated)}`,
  pointer: (s, p) => pointerPhrase(s, p),
  scalar: (s, p) =>
    `in ${cDecl(p)}: a scalar${s.type === 'untyped' ? ' whose C type another argument picks: a typed array holding the value' : `: the value itself (${SCALAR_VALUE[s.type]}), or a host buffer holding it`}${s.space === 'host' ? ' (host memory)' : ', or `{ ptr }` device memory holding it (device pointer mode)'}`,
  resultArray: (s) => `out array of ${elemName(s.elem)}: \`${s.capacity}\` allocated, returned at the length the call reports in \`${s.count}\``,
  countOut: (s) => `out: the length of \`${s.of}\` (read by the typed layer)`,
  attrSize: (s) => `the size of \`${s.of}\`, derived from the attribute`,
  inRecord: (s, p, stated) => `in ${cDecl(p)}: a \`${s.record}\` object or its bytes${nullable(s.nullable, stated)}`,
  inArray: (s, p, stated) => `${s.inout ? 'in/out' : 'in'} array of ${elemName(s.elem)}${nullable(s.nullable, stated)}`,
  count: (s) => `count of \`${s.of.join('`, `')}\``,
  out: (s, p) => `out ${cDecl(p)}${s.unit ? `: ${s.unit === 'bytes' ? 'a size in bytes' : 'a count in elements of the data type'}` : ''}`,
  inout: (s, p) => `in/out ${cDecl(p)}: this value in, the call's value returned`,
  outRecord: (s) => `out \`${s.record}\`${s.version !== undefined ? ` (version 0x${s.version.toString(16)} set for you)` : ''}`,
  inoutRecord: (s) =>
    `in/out \`${s.record}\`: fields given here in, the record the call fills returned${s.version !== undefined ? ` (version 0x${s.version.toString(16)} set for you)` : ''}`,
  outText: (s) => `out text (\`char *\`, ${typeof s.length === 'number' ? `${s.length} bytes` : `length \`${s.length}\``})`,
  outArray: (s) => `out array of ${elemName(s.elem)}, \`${s.count}\` long`,
  capacityArray: (s) => `out array of ${elemName(s.elem)}: its length asked first through \`${s.count}\` (capacity/count pair)`,
  capacity: (s) => `capacity/count of \`${s.of.join('`, `')}\`: asked, then filled`,
  attrValue: (s) => `${s.dir === 'in' ? 'in' : 'out'} value typed by \`${s.attr}\`: its type follows the attribute`,
};

/** A parameter's phrase; `ps` (its resolved semantics) says whether a fact states that null is accepted.
 *  A by-value parameter says what it is to the other parameters (./valueRole) or else what its type is
 *  (./valuePhrase). */
function phrase(f: DocFacts, sem: Sem, p: Param, ps?: ParamSem, fsem?: FunctionSem, tsType?: string): string {
  if (sem.role === 'value') {
    const role = fsem ? valueRole(fsem, p.name) : '';
    const what = role ? '' : valuePhrase(sem, p, f, tsType);
    return `in ${cDecl(p)}${role}${what ? `: ${what}` : ''}`;
  }
  const stated = ps?.source === 'override' || !!p.doc?.cues.includes('optional');
  return (TYPED_PHRASES[sem.role] as (s: Sem, p: Param, stated: boolean) => string)(sem, p, stated);
}

/** An array's length, said on the array: a count the typed layer passes for you (computed from the
 *  array), or a count argument the array must cover. */
function derivedCount(sem: FunctionSem, name: string): string {
  const count = sem.params.find((x) => x.sem.role === 'count' && x.sem.of.includes(name));
  if (count) return `; its length is passed as \`${count.name}\``;
  const own = sem.params.find((x) => x.name === name)?.sem;
  return own?.role === 'inArray' && own.count ? `; at least \`${own.count}\` long` : '';
}

/** What a by-value parameter is to the others, from their facts: the count, size, data type, length or
 *  capacity of a pointer or array, or the attribute that types a value. Empty when nothing refers to it. */
export function valueRole(sem: FunctionSem, name: string): string {
  const roles: string[] = [];
  for (const { name: other, sem: s } of sem.params) {
    if (s.role === 'pointer' && s.count?.param === name)
      roles.push(
        `count of \`${other}\` in ${s.count.unit}${s.count.elem ? ` of \`${s.count.elem}\`` : s.count.typeParam ? ` of \`${s.count.typeParam}\`` : ''}`,
      );
    if (s.role === 'pointer' && s.count?.typeParam === name) roles.push(`data type of \`${other}\``);
    if (s.role === 'pointer' && s.size === name) roles.push(`size of \`${other}\` in bytes`);
    if ((s.role === 'inArray' || s.role === 'outArray') && s.count === name) roles.push(`length of \`${other}\``);
    if (s.role === 'resultArray' && s.capacity === name) roles.push(`capacity of \`${other}\``);
    if (s.role === 'outText' && s.length === name) roles.push(`capacity of \`${other}\` in bytes`);
    if (s.role === 'attrValue' && s.attr === name) roles.push(`the attribute that types \`${other}\``);
  }
  return roles.length ? `: ${roles.join('; ')}` : '';
}

/** The `@param` text of one parameter of the typed layer, the header's own words first under --docs. */
function typedParam(f: DocFacts, fn: FunctionDecl, sem: FunctionSem, i: number, ident: string, tsType?: string): string {
  const p = fn.params[i];
  const own = headerDocOfFn(f, fn)?.params.get(p.name);
  const facts = `${phrase(f, sem.params[i].sem, p, sem.params[i], sem, tsType)}${derivedCount(sem, p.name)}.`;
  return `@param ${ident} ${own ? `${own} (${facts})` : facts}`;
}

/** The `@returns` of the typed layer: each output by name, with its role (and its header text under --docs). */
function typedReturns(f: DocFacts, fn: FunctionDecl, sem: FunctionSem, outs: string[], plain: string | undefined): string | undefined {
  const parts = outs.map((name) => {
    const i = fn.params.findIndex((p) => p.name === name);
    const own = headerDocOfFn(f, fn)?.params.get(name);
    const what = i < 0 ? '' : phrase(f, sem.params[i].sem, fn.params[i], sem.params[i], sem);
    return i < 0 ? `\`${name}\`` : `\`${name}\`: ${own ? `${own} (${what})` : what}`;
  });
  if (parts.length === 0) return plain ? `@returns ${plain}` : undefined;
  const shape = parts.length === 1 ? 'the value of' : `\`{ ${outs.join(', ')} }\`:`;
  return `@returns ${plain ? `\`{ result, … }\`: ${plain}; ` : `${shape} `}${parts.join('; ')}.`;
}

/** "Added after CUDA 11.8; present in CUDA 12.5": what the stored releases bound. */
export function addedBounds(b: { after: string; in: string }): string {
  return `added after CUDA ${b.after}; present in CUDA ${b.in}`;
}

/** The release facts of a function: the release that introduced its name where the headers state it
 *  (the driver's `PFN_<name>_v<N>` typedefs), with the release of its ABI and the oldest driver branch
 *  having that ABI; else the bounds the stored releases give. Nothing for a function the module's oldest
 *  stored release already declares and no header dates. */
function releaseFacts(f: DocFacts, fn: FunctionDecl): string | undefined {
  const abi = fn.proc ? versionString(fn.proc.version) : undefined;
  const driver = abi && MIN_DRIVER[abi] ? `, driver ≥ ${MIN_DRIVER[abi]}` : '';
  if (fn.introduced !== undefined) {
    const since = versionString(fn.introduced);
    return `Since CUDA ${since} (cudaTypedefs.h)${abi && abi !== since ? `; this ABI since CUDA ${abi}${driver}` : driver}`;
  }
  const bounds = f.added.get(fn.name);
  if (abi) return `ABI of CUDA ${abi}${driver}${bounds ? `; ${addedBounds(bounds)}` : ''}`;
  return bounds ? addedBounds(bounds).replace(/^a/, 'A') : undefined;
}

/** NVIDIA's reference for the function: its group's page (Doxygen modules), its own section (cuBLAS,
 *  cuDNN), else its module's page, each for the release (or library version) the bindings come from; a
 *  library's one current page says so. Nothing but the group where no page of that release is known. */
function referenceFact(f: DocFacts, fn: FunctionDecl): string | undefined {
  const current = isCurrentPage(f) ? ' (current version)' : '';
  const group = fn.group ? groupPage(f, fn.group) : undefined;
  if (group) return `[NVIDIA group \`${fn.group}\`${current}](${group})`;
  const own = functionPage(f, fn.name, fn.header);
  if (own) return `[NVIDIA reference](${own})`;
  const page = modulePage(f);
  const label = fn.group ? `Group \`${fn.group}\` · ` : '';
  return page ? `${label}[NVIDIA reference${current}](${page})` : fn.group ? `Group \`${fn.group}\`` : undefined;
}

/** What the headers' deprecation marker says, as a fact: that it is there, and the release it names. */
function deprecationFact(fn: FunctionDecl): string {
  return `The headers mark it deprecated${fn.deprecatedIn ? ` as of ${fn.deprecatedIn}` : ''}.`;
}

/** The `@remarks`, `@see` and `@deprecated` tags every function gets, in both layers. */
function commonTags(f: DocFacts, fn: FunctionDecl, layer: 'raw' | 'typed'): string[] {
  const tags: string[] = [];
  const facts = [releaseFacts(f, fn), referenceFact(f, fn)].filter(Boolean);
  if (facts.length) tags.push(`@remarks ${facts.join('. ')}.`);
  const own = headerDocOfFn(f, fn);
  if (own?.details) tags.push(`@remarks ${own.details}`);
  const wrapper = objectsWrapper(f.module, fn.name);
  if (wrapper && layer === 'typed') tags.push(`@see {@link ${OBJECTS_MODULE}!${wrapper} | ${wrapper.replace('#', '.')}} (objects layer)`);
  if (own?.see.length) tags.push(`@see ${own.see.join(', ')}`);
  if (fn.deprecated) tags.push(`@deprecated ${own?.deprecated ?? deprecationFact(fn)}`);
  return tags;
}

/** The first line: the header's brief under --docs, then the facts line the emitter built. */
function summary(f: DocFacts, fn: FunctionDecl, facts: string): string {
  const brief = headerDocOfFn(f, fn)?.brief;
  return brief ? `${brief}${/[.!?:]$/.test(brief) ? '' : '.'} ${facts}` : facts;
}

/** Whom the typed doc describes: the C function, its semantics, its TS parameters and outputs. */
export interface TypedDocInput {
  fn: FunctionDecl;
  sem: FunctionSem;
  /** C parameter index → its TS name, for the parameters the typed function takes. */
  params: { i: number; ident: string; tsType?: string }[];
  /** C names of the outputs it returns. */
  outs: string[];
  /** The return value's text when the C result is not a status (`result`), else undefined. */
  result?: string;
  /** The facts sentences the emitter already wrote (signature, header, notes, throws). */
  sentences: string[];
}

/** The hover's lead: the API group (a Doxygen group's identifier) and the objects-layer member or
 *  function that wraps the call, where there are. */
export function leadFact(f: DocFacts, fn: FunctionDecl): string | undefined {
  const wrapper = objectsWrapper(f.module, fn.name);
  const parts = [...(fn.group ? [`API group \`${fn.group}\``] : []), ...(wrapper ? [`wrapped by \`${wrapper.replace('#', '.')}\` (objects layer)`] : [])];
  const text = parts.join('; ');
  return text ? `${text[0].toUpperCase()}${text.slice(1)}.` : undefined;
}

/** The TSDoc body of a typed-layer function. */
export function typedFunctionDoc(f: DocFacts, d: TypedDocInput): string {
  const tags = d.params.map(({ i, ident, tsType }) => typedParam(f, d.fn, d.sem, i, ident, tsType));
  const returns = typedReturns(f, d.fn, d.sem, d.outs, d.result);
  if (returns) tags.push(returns);
  const own = headerDocOfFn(f, d.fn)?.returns;
  // a list of returns starts on its own line, so that its first item stays an item
  if (own) tags.push(`@remarks C returns:${own.includes('\n') ? '\n' : ' '}${own}`);
  const lead = leadFact(f, d.fn);
  return docBlock(summary(f, d.fn, [...(lead ? [lead] : []), ...d.sentences].join(' ')), [...tags, ...commonTags(f, d.fn, 'typed')]);
}

/** What a raw parameter is beyond its C type: what the raw caller passes (a typed array for outputs). */
const RAW_PHRASES: { [R in Sem['role']]?: (s: Extract<Sem, { role: R }>) => string } = {
  pointer: (s) =>
    [s.space ? `${s.space} memory` : '', s.count ? `\`${s.count.param}\` ${s.count.unit}` : s.size ? `covering \`${s.size}\` bytes` : '']
      .filter(Boolean)
      .join(', '),
  scalar: (s) => `scalar (${s.type}): its address`,
  inArray: (s) => `${s.inout ? 'in/out ' : ''}array${s.count ? `, \`${s.count}\` long` : ''}`,
  count: (s) => `length of \`${s.of.join('`, `')}\``,
  out: () => 'out: a typed array of one element',
  inout: () => 'in/out: a typed array of one element',
  outRecord: (s) => `out: bytes of a \`${s.record}\``,
  inoutRecord: (s) => `in/out: bytes of a \`${s.record}\``,
  outText: (s) => `out: a char buffer of ${typeof s.length === 'number' ? s.length : `\`${s.length}\``} bytes`,
  outArray: (s) => `out: an array of \`${s.count}\` elements`,
  capacityArray: (s) => `out: an array of \`*${s.count}\` elements (capacity/count pair)`,
  capacity: (s) => `in/out: capacity of \`${s.of.join('`, `')}\` in, count out`,
  attrValue: (s) => `${s.dir}: typed by \`${s.attr}\``,
};

/** The `@param` of a raw parameter: its C declaration and, where the model knows more, its role. */
function rawParam(f: DocFacts, fn: FunctionDecl, sem: FunctionSem | undefined, i: number, ident: string): string {
  const p = fn.params[i];
  const s = sem?.params[i]?.sem;
  const own = headerDocOfFn(f, fn)?.params.get(p.name);
  const role = s ? (RAW_PHRASES[s.role] as ((s: Sem) => string) | undefined)?.(s) : '';
  return `@param ${ident} ${own ? `${own} ` : ''}${cDecl(p)}${role ? `, ${role}` : ''}`;
}

/** The TSDoc body of a raw-layer function. */
export function rawFunctionDoc(f: DocFacts, fn: FunctionDecl, sem: FunctionSem | undefined, idents: string[], facts: string, returns: string): string {
  const tags = fn.params.map((_, i) => rawParam(f, fn, sem, i, idents[i]));
  tags.push(`@returns ${returns}`);
  return docBlock(summary(f, fn, facts), [...tags, ...commonTags(f, fn, 'raw')]);
}

/** An enum member's doc beyond its declared value (its C type is its enum's): the value in hex when it
 *  is a flag bit or a mask (16 and up), the release it appeared in. Undefined when there is nothing more. */
export function enumMemberDoc(f: DocFacts, enumName: string, member: string, value: string): string | undefined {
  const v = BigInt(value);
  const added = f.added.get(`${enumName}.${member}`);
  const bits = v >= 16n && ((v & (v - 1n)) === 0n || (v & (v + 1n)) === 0n);
  const parts = [...(bits ? [`0x${v.toString(16)}`] : []), ...(added ? [addedBounds(added)] : [])];
  return parts.length ? parts.join(' · ') : undefined;
}

/** A record field's doc: its C type, offset and the release it appeared in. */
export function fieldDoc(f: DocFacts, record: string, field: { name: string; type: Parameters<typeof formatCType>[0]; offset: number }): string {
  const added = f.added.get(`${record}.${field.name}`);
  return `\`${formatCType(field.type, '').trim()}\` at byte ${field.offset}${added ? ` · ${addedBounds(added)}` : ''}`;
}
