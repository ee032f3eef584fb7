// Resolves the semantics of every parameter of a function (pure). Order of authority: the module's
// reviewed override table, then the header documentation (explicit [in]/[out]/[in,out] and cue words),
// then C semantics (const, pointer depth, what the pointer points to). Names are used only to pair an
// array with the parameter that counts it (`numDependencies` ↔ `dependencies`), never for direction.
import type { FunctionDecl, Param } from '../ir/schema';
import { isConstCharPointer, type Kind, type TypeModel } from '../model';
import type { Elem, FunctionSem, ModuleOverrides, Override, ParamSem, ScalarType, Sem } from './model';
import { lookupOverride } from './overrides';
import { pointerFacts } from './pointer-facts';

/** Integer out-parameter names in the math libraries, where a non-const `int *` is otherwise data. */
const SCALAR_OUT =
  /^(p?[Ll]work|[Ll]work\w*|\w*[Ss]ize(InBytes)?|\w*[Vv]ersion|\w*[Cc]ount|value|mode|major|minor|patch|plan|[Ll]evel|seed|rank|nranks|n[Rr]anks|handle|[Pp]ointerMode|[Aa]tomicsMode|[Mm]athMode|algo|[Ss]tream[Ii]d|[Pp]roperty|[Nn]um\w*)$/;
const SINGULAR_S =
  /(flags|bytes|status|ss|us|is|address|access|Props|Attrs|Args|args|Status|Flags|Bytes|Address|Access|Mbps|Params|params|Stats|stats|Caps|caps|Info|info|Bps|Hz|Properties|properties|Requirements|requirements|Settings|settings)$/;
const SIZE_NAMES = /^(ByteCount|byteCount|count|size|sizeInBytes|bytes|numBytes|nbytes|bufferSize|byteSize|sizeBytes|bufSize)$/;

function isPlural(name: string): boolean {
  return /[a-z]s$/.test(name) && !SINGULAR_S.test(name);
}
function stem(name: string): string {
  return name
    .toLowerCase()
    .replace(/^(p|ph|pp)(?=[a-z])/, '')
    .replace(/ies$/, 'y')
    .replace(/(es|s)$/, '');
}
/** The thing a count parameter counts (`numDependencies` → `dependenc`), '' for a bare `count`. */
function countStem(q: Param): string | undefined {
  const n = q.name;
  if (/^(count|num|n|numElements|nelem|numEntries|arraySize|length|len)$/.test(n)) return '';
  const m = /^p?(?:[Nn]um|n|nb|[Nn]umber)_?([A-Z]\w*)$/.exec(n) ?? /^(\w+?)(?:Count|Num|Len|Length)$/.exec(n);
  if (m) return stem(m[1]);
  if (q.doc?.cues.includes('count')) return '?'; // documented as a count of something unnamed
  return undefined;
}

export function elemOf(model: TypeModel, kind: Kind, t?: import('../ir/schema').CType): Elem | undefined {
  switch (kind.k) {
    case 'int':
      return {
        t: 'int',
        bits: (kind.bytes * 8) as 8 | 16 | 32 | 64,
        signed: kind.signed,
        ...(kind.isSize ? { size: true } : {}),
        ...(kind.brand ? { brand: kind.brand } : {}),
      };
    case 'float':
      return { t: 'float', bits: (kind.bytes * 8) as 32 | 64 };
    case 'bool':
      return { t: 'bool' };
    case 'enum':
      return { t: 'enum', name: kind.ts, bits: kind.decl.size * 8, signed: kind.decl.signed };
    case 'handle':
      return { t: 'handle', name: t && t.kind === 'named' && !t.name.includes(' ') ? t.name : kind.ts };
    case 'deviceptr':
      return { t: 'deviceptr', name: t && t.kind === 'named' ? t.name : kind.ts };
    case 'record':
      return { t: 'record', name: kind.ts, size: kind.decl.size };
    case 'funcptr':
      return { t: 'address' };
    case 'pointer':
      if (isConstCharPointer(kind)) return { t: 'cstring' };
      return { t: 'address' };
    default:
      return undefined;
  }
}

/** NVML's versioned structs (`nvmlMemory_v2_t` with a leading `version` field): the value
 *  `NVML_STRUCT_VERSION(Memory, 2)` = sizeof | 2 << 24 that must be stamped before the call. The
 *  version is in the struct's name or in the typedef that names it (`typedef struct
 *  nvmlConfComputeGetKeyRotationThresholdInfo_st {…} nvmlConfComputeGetKeyRotationThresholdInfo_v1_t`). */
export function structVersion(kind: Kind, model?: TypeModel): number | undefined {
  if (kind.k !== 'record') return undefined;
  const first = kind.decl.fields[0];
  if (!first || first.name !== 'version') return undefined;
  const VERSIONED = /^nvml\w*?_v(\d+)_(?:t|st)$/;
  const typedefs = model ? model.ir.typedefs.filter((t) => t.type.kind === 'named' && t.type.name === kind.decl.name).map((t) => t.name) : [];
  const m = [kind.ts, ...typedefs].map((n) => VERSIONED.exec(n)).find((x) => x);
  return m ? (kind.decl.size | (Number(m[1]) << 24)) >>> 0 : undefined;
}

/** The function being resolved: its parameters' kinds, and the pairings found before any role. */
interface FunctionFacts {
  model: TypeModel;
  fn: FunctionDecl;
  kinds: Kind[];
}

interface Ctx extends FunctionFacts {
  /** Math-library data pointers (`spec.dataPointers`): host or device memory, never copied arrays. */
  dataPointers: boolean;
  /** Array parameter → the parameter counting it. */
  countOf: Map<string, string>;
  /** Count parameter → the arrays it counts, and whether the call fills one: resolved once the arrays are known. */
  arraysOfCount: Map<string, { names: string[]; out: boolean }>;
  /** In/out length pointer → the text buffer it sizes. */
  textCapacities: Map<string, string>;
}

type PointerKind = Extract<Kind, { k: 'pointer' }>;
type Source = ParamSem['source'];
interface Resolved {
  sem: Sem;
  source: Source;
  /** The role rests on a name or a default rather than a fact: which one (for review, never emitted). */
  guess?: string;
}
const resolved = (sem: Sem, source: Source, guess?: string): Resolved => (guess ? { sem, source, guess } : { sem, source });

// Why a role is a guess: the labels `guessedParams` lists.
const BY_DEFAULT_OUT = 'non-const pointer without a documented direction: written by default';
const BY_DEFAULT_IN = 'non-const array without a documented direction: read by default';
const BY_NAME_PLURAL = 'plural-looking name: caller memory of unknown length';
const BY_NAME_COUNT = 'array paired with its count by name';
const BY_NAME_SCALAR = 'math-library scalar output by name';
const BY_DEFAULT_DATA = 'math-library non-const pointer: device or host data by default';

/** A getter of cuBLAS, cuSPARSE or cuSOLVER (`cusparseCsrGet`, `cublasGetSmCountTarget`,
 *  `cusparseSpGEMM_getNumProducts`, `cusolverRfExtractBundledFactorsHost`): its non-const scalar
 *  pointers are host outputs and its `T **` the addresses it returns, never data, as in NVIDIA's own
 *  bindings of these libraries (cuDNN's and cuFFT's getters also take arrays: not covered). */
const MATH_GETTER = /(?:[a-z0-9](?:Get|Access|Extract)|_get)(?=[A-Z0-9_]|$)/;
const GETTER_MODULES = new Set(['cublas', 'cusparse', 'cusolver']);

/** What a parameter's header documentation says of its direction, and whether it is optional. */
interface DocFacts {
  dir?: 'in' | 'out' | 'inout';
  /** The source of a role the direction decided: the documentation when it gave one. */
  src: Source;
  optional: boolean;
}

function docFacts(p: Param): DocFacts {
  const doc = p.doc;
  const dir = doc?.dir ?? (doc?.cues.includes('inout') ? 'inout' : doc?.cues.includes('input') ? 'in' : doc?.cues.includes('returns') ? 'out' : undefined);
  return { dir, src: dir ? 'doc' : 'c', optional: !!doc?.cues.includes('optional') };
}

/** Pointer parameters that are arrays, grouped with the parameter that counts them. */
function pairArrays(c: FunctionFacts): Map<string, string> {
  const { fn, kinds } = c;
  const countOf = new Map<string, string>(); // array name → count name
  const isIntLike = (k: Kind) => k.k === 'int' && !k.isChar;
  const counts = fn.params.filter((q, i) => {
    const k = kinds[i];
    if (isIntLike(k)) return countStem(q) !== undefined;
    // a pointer count is a capacity the call updates: never a `const` one (that is an array in)
    return k.k === 'pointer' && !k.constTarget && isIntLike(k.toKind) && countStem(q) !== undefined;
  });
  const arrayish = fn.params.filter((p, i) => {
    const k = kinds[i];
    if (k.k !== 'pointer' || isConstCharPointer(k)) return false;
    if (counts.includes(p)) return false;
    if (k.toKind.k === 'void' && !(k.toKind.k === 'void' && p.doc?.cues.includes('array'))) return false;
    return !!p.doc?.cues.includes('array') || isPlural(p.name) || /(Array|List|Arr)$/.test(p.name);
  });
  // specific counts first (`numAttrs` ↔ `attrs`), then a bare `count` takes the arrays left
  const ordered = [...counts].sort((a, b) => (countStem(b) ?? '').length - (countStem(a) ?? '').length);
  for (const q of ordered) {
    const s = countStem(q)!;
    const free = arrayish.filter((p) => !countOf.has(p.name));
    const byName = s.length >= 3 ? free.filter((p) => stem(p.name).startsWith(s) || (stem(p.name).length >= 3 && s.startsWith(stem(p.name)))) : [];
    // a bare `count` counts the arrays left; a count known only from its documentation, only a lone array
    const mine = byName.length ? byName : s === '' ? free : s === '?' && free.length === 1 ? free : [];
    for (const p of mine) countOf.set(p.name, q.name);
  }
  return countOf;
}

function sizeParam(c: FunctionFacts, except: string): string | undefined {
  const cands = c.fn.params.filter((q, i) => q.name !== except && c.kinds[i].k === 'int' && SIZE_NAMES.test(q.name));
  return cands.length === 1 ? cands[0].name : undefined;
}

/** The override's role; a record's name comes from the C type (it differs between releases). */
function fromOverride(p: Param, kind: Kind, o: Override): ParamSem {
  let sem = o.sem;
  const pointee = kind.k === 'pointer' ? kind.toKind : undefined;
  if (pointee?.k === 'record') {
    if ('record' in sem) sem = { ...sem, record: pointee.ts } as Sem;
    if ('elem' in sem && sem.elem.t === 'record') sem = { ...sem, elem: { ...sem.elem, name: pointee.ts, size: pointee.decl.size } } as Sem;
  }
  return { name: p.name, sem, source: 'override', reason: o.reason };
}

/** A parameter that is not a pointer: passed by value. */
function valueSem(c: Ctx, p: Param, kind: Kind): Resolved {
  if (kind.k === 'record') return resolved({ role: 'recordValue', record: kind.ts }, 'c');
  if (kind.k === 'funcptr') return resolved({ role: 'callback', nullable: true }, 'c');
  if (kind.k === 'array') return resolved({ role: 'pointer', nullable: true }, 'c');
  return resolved({ role: 'value', elem: elemOf(c.model, kind, p.type)! }, 'c');
}

/** `const char *`: a string, unless a size follows it. */
function constCharSem(c: Ctx, p: Param, i: number, d: DocFacts): Resolved {
  // `const char *code, size_t size`: bytes with a length (PTX, a fatbin), not a NUL-terminated string
  const next = c.fn.params[i + 1];
  if (next && next.name === sizeParam(c, p.name)) return resolved({ role: 'pointer', nullable: false, size: next.name }, 'c');
  return resolved({ role: 'string', nullable: d.optional }, d.optional ? 'doc' : 'c');
}

/** An array counted by another parameter: in, filled up to a capacity, or filled to a count given. */
function countedArraySem(c: Ctx, p: Param, kind: PointerKind, elem: Elem, arrayCount: string, d: DocFacts): Resolved {
  const qi = c.fn.params.findIndex((q) => q.name === arrayCount);
  const countIsPointer = c.kinds[qi].k === 'pointer';
  const input = kind.constTarget || d.dir === 'in' || (!d.dir && !p.doc?.cues.includes('returns') && !countIsPointer && !c.dataPointers);
  if (c.dataPointers && (elem.t !== 'record' || !kind.constTarget) && elem.t !== 'cstring')
    return resolved({ role: 'pointer', nullable: true, size: sizeParam(c, p.name) }, 'c');
  const entry = c.arraysOfCount.get(arrayCount) ?? { names: [], out: false };
  entry.names.push(p.name);
  c.arraysOfCount.set(arrayCount, entry);
  const guess = !kind.constTarget && !d.dir ? (input ? BY_DEFAULT_IN : BY_DEFAULT_OUT) : BY_NAME_COUNT;
  if (input && !countIsPointer) return resolved({ role: 'inArray', elem, count: arrayCount, nullable: d.optional }, kind.constTarget ? 'c' : d.src, guess);
  entry.out = true;
  if (countIsPointer) return resolved({ role: 'capacityArray', elem, count: arrayCount }, d.src, guess);
  return resolved({ role: 'outArray', elem, count: arrayCount }, d.src, guess);
}

/** A pointer the call reads: const, or documented [in]. */
function inPointerSem(c: Ctx, p: Param, kind: PointerKind, elem: Elem | undefined, d: DocFacts): Resolved {
  const target = kind.toKind;
  // math libraries: `const float *alpha` may be host or device memory (pointer mode): an address
  // or a typed array, never copied from a JS array
  if (c.dataPointers && !(target.k === 'pointer' && isConstCharPointer(target)))
    return resolved({ role: 'pointer', nullable: true, size: sizeParam(c, p.name) }, 'c');
  if (target.k === 'void') return resolved({ role: 'pointer', nullable: true, size: sizeParam(c, p.name) }, 'c');
  if (target.k === 'record') {
    const v = structVersion(target, c.model);
    if (v !== undefined && !kind.constTarget) return resolved({ role: 'inoutRecord', record: target.ts, version: v }, 'c');
    return resolved({ role: 'inRecord', record: target.ts, nullable: d.optional }, kind.constTarget ? 'c' : d.src);
  }
  if (elem && target.k !== 'pointer' && target.k !== 'funcptr') return resolved({ role: 'inArray', elem, nullable: true }, kind.constTarget ? 'c' : d.src);
  if (target.k === 'pointer' && isConstCharPointer(target)) return resolved({ role: 'inArray', elem: { t: 'cstring' }, nullable: true }, 'c');
  return resolved({ role: 'pointer', nullable: true }, 'c');
}

/** A non-const `char *`: a text buffer the call fills, sized by a length beside it. */
function charBufferSem(c: Ctx, p: Param, i: number): Resolved {
  const { model, fn } = c;
  const next = fn.params[i + 1];
  const lengthLike = (q?: Param) => q && /^(len|length|size|bufferSize|maxLen|bufSize|nameLength|buffer_size|length_?\w*)$/i.test(q.name);
  const lenParam = [next, fn.params[i - 1]].find((q) => lengthLike(q) && model.kind(q!.type).k === 'int');
  if (lenParam) return resolved({ role: 'outText', length: lenParam.name }, 'c');
  // `char *buf, size_t *size`: the size is a capacity in and a length out
  const capParam = [next, fn.params[i - 1]].find((q) => {
    const k = q && model.kind(q.type);
    return lengthLike(q) && k && k.k === 'pointer' && !k.constTarget && k.toKind.k === 'int';
  });
  if (capParam) {
    c.textCapacities.set(capParam.name, p.name);
    return resolved({ role: 'outText', length: capParam.name, capacity: 4096 }, 'c');
  }
  return resolved({ role: 'pointer', nullable: true }, 'c');
}

/** Facts of the math libraries' C conventions that decide a non-const pointer before any default:
 *  a getter's scalars and `T **` are outputs; a `size_t *` directly before the `void *` buffer it
 *  sizes is that buffer's size in and the size needed out (cusparseSpGEMM_workEstimation: asked with
 *  NULL, then called again with the buffer and its size). */
function mathPointerSem(c: Ctx, p: Param, i: number, kind: PointerKind, elem: Elem | undefined): Resolved | undefined {
  const target = kind.toKind;
  const next = c.kinds[i + 1];
  if (target.k === 'int' && target.isSize && next?.k === 'pointer' && next.toKind.k === 'void' && !next.constTarget)
    return resolved({ role: 'inout', elem: elem! }, 'c');
  if (!GETTER_MODULES.has(c.model.spec.name) || !MATH_GETTER.test(c.fn.name)) return undefined;
  if (target.k === 'pointer') return resolved({ role: 'out', elem: { t: 'address' } }, 'c');
  const scalar = target.k === 'float' || target.k === 'enum' || target.k === 'handle' || target.k === 'bool' || (target.k === 'int' && !target.isChar);
  return scalar && elem ? resolved({ role: 'out', elem }, 'c') : undefined;
}

/** A non-const pointer: an output, an in/out value or record, or memory the caller provides. */
function outPointerSem(c: Ctx, p: Param, i: number, kind: PointerKind, elem: Elem | undefined, d: DocFacts): Resolved {
  const target = kind.toKind;
  const doc = p.doc;
  const math = c.dataPointers && !d.dir ? mathPointerSem(c, p, i, kind, elem) : undefined;
  if (math) return math;
  if (target.k === 'void') return resolved({ role: 'pointer', nullable: true, size: sizeParam(c, p.name) }, 'c');
  if (target.k === 'int' && target.isChar) return charBufferSem(c, p, i);
  if (d.dir === 'inout') {
    if (target.k === 'record') return resolved({ role: 'inoutRecord', record: target.ts, version: structVersion(target, c.model) }, d.src);
    if (elem && elem.t !== 'record' && elem.t !== 'address') return resolved({ role: 'inout', elem }, d.src);
  }
  if (target.k === 'record') {
    const v = structVersion(target, c.model);
    if (v !== undefined) return resolved({ role: 'inoutRecord', record: target.ts, version: v }, 'c');
    if (c.dataPointers && d.dir !== 'out') return resolved({ role: 'pointer', nullable: true }, 'c', BY_DEFAULT_DATA);
    if (isPlural(p.name) || doc?.cues.includes('array'))
      return resolved({ role: 'pointer', nullable: true }, 'c', doc?.cues.includes('array') ? undefined : BY_NAME_PLURAL);
    return resolved({ role: 'outRecord', record: target.ts }, d.src, d.dir ? undefined : BY_DEFAULT_OUT);
  }
  if (target.k === 'funcptr') return resolved({ role: 'out', elem: { t: 'address' } }, 'c');
  if (target.k === 'pointer') {
    if (isConstCharPointer(target)) return resolved({ role: 'out', elem: { t: 'cstring' } }, 'c');
    if (target.toKind.k === 'void' && !isPlural(p.name) && !doc?.cues.includes('array'))
      return resolved({ role: 'out', elem: { t: 'address' } }, 'c', d.dir ? undefined : BY_DEFAULT_OUT);
    return resolved({ role: 'pointer', nullable: true }, 'c', doc?.cues.includes('array') || target.toKind.k !== 'void' ? undefined : BY_NAME_PLURAL);
  }
  if (!elem || target.k === 'array') return resolved({ role: 'pointer', nullable: true }, 'c');
  if (d.dir === 'out' && !doc?.cues.includes('array')) return resolved({ role: 'out', elem }, d.src);
  // `uint8_t *` is a byte buffer the caller provides, not one byte returned
  if (target.k === 'int' && target.bytes === 1) return resolved({ role: 'pointer', nullable: true, size: sizeParam(c, p.name) }, 'c');
  // an array of unknown length stays a pointer the caller provides: never a one-element scratch slot
  if (isPlural(p.name) || doc?.cues.includes('array'))
    return resolved({ role: 'pointer', nullable: true, size: sizeParam(c, p.name) }, 'c', doc?.cues.includes('array') ? undefined : BY_NAME_PLURAL);
  if (c.dataPointers && d.dir !== 'out') {
    const byName = target.k === 'int' && !target.isSize && SCALAR_OUT.test(p.name);
    const scalarOut = target.k === 'handle' || target.k === 'enum' || (target.k === 'int' && target.isSize) || byName;
    if (!scalarOut) return resolved({ role: 'pointer', nullable: true }, 'c', BY_DEFAULT_DATA);
    if (byName) return resolved({ role: 'out', elem }, 'c', BY_NAME_SCALAR);
  }
  return resolved({ role: 'out', elem }, d.src, d.dir ? undefined : BY_DEFAULT_OUT);
}

/** The role of parameter `i` from the documentation and the C types (no override). */
function resolveParam(c: Ctx, p: Param, i: number): Resolved {
  const kind = c.kinds[i];
  if (kind.k !== 'pointer') return valueSem(c, p, kind);
  const d = docFacts(p);
  if (isConstCharPointer(kind)) return constCharSem(c, p, i, d);
  const arrayCount = c.countOf.get(p.name);
  const elem = elemOf(c.model, kind.toKind, kind.to);
  if (arrayCount && elem) return countedArraySem(c, p, kind, elem, arrayCount, d);
  if (kind.constTarget || d.dir === 'in') return inPointerSem(c, p, kind, elem, d);
  return outPointerSem(c, p, i, kind, elem, d);
}

/** Counts: derived from their input arrays, or a capacity when the arrays are filled by the call. */
function resolveCounts(c: Ctx, result: ParamSem[]): void {
  for (const [count, text] of c.textCapacities) {
    const at = result.findIndex((r) => r.name === count);
    if (result[at].source !== 'override')
      result[at] = { name: count, sem: { role: 'capacity', of: [text], elem: { t: 'int', bits: 64, signed: false, size: true } }, source: 'c' };
  }
  for (const [count, { names, out }] of c.arraysOfCount) {
    const at = result.findIndex((r) => r.name === count);
    if (result[at].source === 'override') continue;
    const qi = c.fn.params.findIndex((q) => q.name === count);
    const k = c.kinds[qi];
    const countElem = elemOf(c.model, k.k === 'pointer' ? k.toKind : k)!;
    if (k.k === 'pointer') result[at] = { name: count, sem: { role: 'capacity', of: names, elem: countElem }, source: 'c' };
    else if (!out) result[at] = { name: count, sem: { role: 'count', of: names }, source: 'c' };
    // a value count of an out array stays an input: the caller says how many elements to fill
  }
}

/** The C type of a scalar passed by pointer, from what the pointer points to. */
export function scalarTypeOf(target: Kind): ScalarType | undefined {
  switch (target.k) {
    case 'void':
      return 'untyped';
    case 'float':
      return target.bytes === 4 ? 'f32' : 'f64';
    case 'int': {
      const t = `${target.signed ? 'i' : 'u'}${target.bytes * 8}`;
      return ['i8', 'u8', 'i32', 'u32', 'i64', 'u64'].includes(t) && !target.isChar ? (t as ScalarType) : undefined;
    }
    case 'record': {
      const f = target.decl.fields;
      if (target.decl.size === 2) return /bfloat16/i.test(target.ts) ? 'bf16' : /half/i.test(target.ts) ? 'f16' : undefined;
      if (f.length === 2 && (target.decl.size === 8 || target.decl.size === 16)) return target.decl.size === 8 ? 'c64' : 'c128';
      return undefined;
    }
    default:
      return undefined;
  }
}

/** A reviewed scalar-by-pointer parameter: the exact key for any pointer, a pattern for a const one. */
function scalarSem(fn: FunctionDecl, p: Param, kind: Kind, overrides: ModuleOverrides): ParamSem | undefined {
  if (kind.k !== 'pointer' || !overrides.scalars) return undefined;
  const exact = overrides.scalars[`${fn.name}.${p.name}`];
  const pattern = exact ? undefined : lookupOverride(overrides.scalars, fn.name, p.name);
  const facts = exact ?? (pattern && (kind.constTarget || pattern.nonConst) ? pattern : undefined);
  if (!facts) return undefined;
  const type = scalarTypeOf(kind.toKind);
  if (!type) throw new Error(`${fn.name}.${p.name}: listed as a scalar by pointer, but its pointee is no scalar C type`);
  return { name: p.name, sem: { role: 'scalar', type, space: facts.space }, source: 'override', reason: facts.reason };
}

/**
 * Result arrays of records (or integers) sized by their count parameter: a non-const pointer the call
 * fills, an input `requested…` count giving its capacity, and an out-parameter `return(ed)…Count` the
 * call sets to how many it wrote (cublasLtMatmulAlgoGetHeuristic, cuDNN's Find/Get…Algorithm). The
 * array is allocated that many and returned at the reported length.
 */
function resultArrays(c: FunctionFacts): Map<string, Sem> {
  const found = new Map<string, Sem>();
  const { fn, kinds } = c;
  const at = (re: RegExp, ok: (k: Kind) => boolean) => fn.params.map((p, i) => ({ p, i })).filter(({ p, i }) => re.test(p.name) && ok(kinds[i]));
  const isInt = (k: Kind) => k.k === 'int' && !k.isChar;
  const capacity = at(/^requested\w*Count$/, isInt);
  const count = at(/^return(?:ed)?\w*Count$/, (k) => k.k === 'pointer' && !k.constTarget && isInt(k.toKind));
  if (capacity.length !== 1 || count.length !== 1) return found;
  const arrays = fn.params
    .map((p, i) => ({ p, k: kinds[i] }))
    .filter(({ p, k }) => p !== count[0].p && k.k === 'pointer' && !k.constTarget && (k.toKind.k === 'record' || isInt(k.toKind)));
  if (arrays.length !== 1) return found;
  const { p, k } = arrays[0];
  const elem = elemOf(c.model, (k as PointerKind).toKind, (k as PointerKind).to)!;
  found.set(p.name, { role: 'resultArray', elem, capacity: capacity[0].p.name, count: count[0].p.name });
  found.set(count[0].p.name, { role: 'countOut', of: p.name, elem: elemOf(c.model, (kinds[count[0].i] as PointerKind).toKind)! });
  return found;
}

/** The semantics of every parameter of `fn`. */
export function resolveFunction(model: TypeModel, fn: FunctionDecl, overrides: ModuleOverrides): FunctionSem {
  const facts: FunctionFacts = { model, fn, kinds: fn.params.map((p) => model.kind(p.type)) };
  const c: Ctx = { ...facts, dataPointers: !!model.spec.dataPointers, countOf: pairArrays(facts), arraysOfCount: new Map(), textCapacities: new Map() };
  const results = resultArrays(facts);
  const result = fn.params.map((p, i): ParamSem => {
    const kind = c.kinds[i];
    // a `*` key applies to pointers only (the name of a value parameter says nothing of a pointer's role)
    const o = overrides.params[`${fn.name}.${p.name}`] ?? (kind.k === 'pointer' ? lookupOverride(overrides.params, fn.name, p.name) : undefined);
    if (o) return fromOverride(p, kind, o);
    const scalar = scalarSem(fn, p, kind, overrides);
    if (scalar) return scalar;
    const found = results.get(p.name);
    if (found) return { name: p.name, sem: found, source: 'c' };
    const { sem, source, guess } = resolveParam(c, p, i);
    return guess ? { name: p.name, sem, source, guess } : { name: p.name, sem, source };
  });
  resolveCounts(c, result);
  return {
    name: fn.name,
    params: result.map((r, i) => (r.sem.role === 'pointer' ? pointerFacts(model, fn, i, r, overrides) : r.sem.role === 'out' ? outUnit(fn, r, overrides) : r)),
  };
}

/** A returned size with the unit a reviewed table gives it. */
function outUnit(fn: FunctionDecl, r: ParamSem, overrides: ModuleOverrides): ParamSem {
  const facts = lookupOverride(overrides.outUnits, fn.name, r.name);
  return facts ? { ...r, sem: { ...(r.sem as Extract<Sem, { role: 'out' }>), unit: facts.unit } } : r;
}
