// Resolves the semantics of every parameter of a function (pure). Order of authority: the module's
// reviewed override table, then the header documentation (explicit [in]/[out]/[in,out] and cue words),
// then C semantics (const, pointer depth, what the pointer points to). Names are used only to pair an
// array with the parameter that counts it (`numDependencies` ↔ `dependencies`), never for direction.
import type { FunctionDecl, Param } from '../ir/schema';
import { isConstCharPointer, type Kind, type TypeModel } from '../emit/model';
import type { Elem, FunctionSem, ModuleOverrides, ParamSem, Sem } from './model';

/** Integer out-parameter names in the math libraries, where a non-const `int *` is otherwise data. */
const SCALAR_OUT = /^(p?[Ll]work|[Ll]work\w*|\w*[Ss]ize(InBytes)?|\w*[Vv]ersion|\w*[Cc]ount|value|mode|major|minor|patch|plan|[Ll]evel|seed|rank|nranks|n[Rr]anks|handle|[Pp]ointerMode|[Aa]tomicsMode|[Mm]athMode|algo|[Ss]tream[Ii]d|[Pp]roperty|[Nn]um\w*)$/;
const SINGULAR_S = /(flags|bytes|status|ss|us|is|address|access|Props|Attrs|Args|args|Status|Flags|Bytes|Address|Access|Mbps|Params|params|Stats|stats|Caps|caps|Info|info|Bps|Hz|Properties|properties|Requirements|requirements|Settings|settings)$/;
const SIZE_NAMES = /^(ByteCount|byteCount|count|size|sizeInBytes|bytes|numBytes|nbytes|bufferSize|byteSize|sizeBytes|bufSize)$/;

function isPlural(name: string): boolean {
  return /[a-z]s$/.test(name) && !SINGULAR_S.test(name);
}
function stem(name: string): string {
  return name.toLowerCase().replace(/^(p|ph|pp)(?=[a-z])/, '').replace(/ies$/, 'y').replace(/(es|s)$/, '');
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
      return { t: 'int', bits: (kind.bytes * 8) as 8 | 16 | 32 | 64, signed: kind.signed, ...(kind.isSize ? { size: true } : {}) };
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
 *  `NVML_STRUCT_VERSION(Memory, 2)` = sizeof | 2 << 24 that must be stamped before the call. */
export function structVersion(kind: Kind): number | undefined {
  if (kind.k !== 'record') return undefined;
  const m = /^nvml\w*?_v(\d+)_(?:t|st)$/.exec(kind.ts);
  const first = kind.decl.fields[0];
  if (!m || !first || first.name !== 'version') return undefined;
  return (kind.decl.size | (Number(m[1]) << 24)) >>> 0;
}

interface Ctx {
  model: TypeModel;
  fn: FunctionDecl;
  kinds: Kind[];
}

/** Pointer parameters that are arrays, grouped with the parameter that counts them. */
function pairArrays(c: Ctx): Map<string, string> {
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

function sizeParam(c: Ctx, except: string): string | undefined {
  const cands = c.fn.params.filter((q, i) => q.name !== except && c.kinds[i].k === 'int' && SIZE_NAMES.test(q.name));
  return cands.length === 1 ? cands[0].name : undefined;
}

/** The semantics of every parameter of `fn`. */
export function resolveFunction(model: TypeModel, fn: FunctionDecl, overrides: ModuleOverrides): FunctionSem {
  const kinds = fn.params.map((p) => model.kind(p.type));
  const c: Ctx = { model, fn, kinds };
  const dataPointers = !!model.spec.dataPointers;
  const countOf = pairArrays(c);
  const result: ParamSem[] = [];
  // capacity/count pointers and value counts, filled once their arrays are known
  const arraysOfCount = new Map<string, { names: string[]; out: boolean }>();
  const textCapacities = new Map<string, string>(); // length pointer → its text buffer

  fn.params.forEach((p, i) => {
    const kind = kinds[i];
    const key = `${fn.name}.${p.name}`;
    const o = overrides.params[key] ?? (kind.k === 'pointer' ? overrides.params[`*.${p.name}`] : undefined);
    if (o) {
      // the override gives the role; a record's name comes from the C type (it differs between releases)
      let sem = o.sem;
      const pointee = kind.k === 'pointer' ? kind.toKind : undefined;
      if (pointee?.k === 'record') {
        if ('record' in sem) sem = { ...sem, record: pointee.ts } as Sem;
        if ('elem' in sem && sem.elem.t === 'record') sem = { ...sem, elem: { ...sem.elem, name: pointee.ts, size: pointee.decl.size } } as Sem;
      }
      result.push({ name: p.name, sem, source: 'override', reason: o.reason });
      return;
    }
    const push = (sem: Sem, source: ParamSem['source']) => result.push({ name: p.name, sem, source });
    const doc = p.doc;
    const docDir = doc?.dir ?? (doc?.cues.includes('inout') ? 'inout' : doc?.cues.includes('input') ? 'in' : doc?.cues.includes('returns') ? 'out' : undefined);
    const src: ParamSem['source'] = docDir ? 'doc' : 'c';
    const optional = !!doc?.cues.includes('optional');

    if (kind.k !== 'pointer') {
      if (kind.k === 'record') return push({ role: 'recordValue', record: kind.ts }, 'c');
      if (kind.k === 'funcptr') return push({ role: 'callback', nullable: true }, 'c');
      if (kind.k === 'array') return push({ role: 'pointer', nullable: true }, 'c');
      return push({ role: 'value', elem: elemOf(model, kind, p.type)! }, 'c');
    }
    if (isConstCharPointer(kind)) {
      // `const char *code, size_t size`: bytes with a length (PTX, a fatbin), not a NUL-terminated string
      const next = fn.params[i + 1];
      if (next && next.name === sizeParam(c, p.name)) return push({ role: 'pointer', nullable: false, size: next.name }, 'c');
      return push({ role: 'string', nullable: optional }, optional ? 'doc' : 'c');
    }
    const target = kind.toKind;
    const arrayCount = countOf.get(p.name);
    const elem = elemOf(model, target, kind.to);

    // an array counted by another parameter
    if (arrayCount && elem) {
      const qi = fn.params.findIndex((q) => q.name === arrayCount);
      const countIsPointer = kinds[qi].k === 'pointer';
      const input = kind.constTarget || docDir === 'in' || (!docDir && !doc?.cues.includes('returns') && !countIsPointer && !dataPointers);
      if (dataPointers && (elem.t !== 'record' || !kind.constTarget) && elem.t !== 'cstring') return push({ role: 'pointer', nullable: true, size: sizeParam(c, p.name) }, 'c');
      const entry = arraysOfCount.get(arrayCount) ?? { names: [], out: false };
      entry.names.push(p.name);
      arraysOfCount.set(arrayCount, entry);
      if (input && !countIsPointer) return push({ role: 'inArray', elem, count: arrayCount, nullable: optional }, kind.constTarget ? 'c' : src);
      if (countIsPointer) {
        entry.out = true;
        return push({ role: 'capacityArray', elem, count: arrayCount }, src);
      }
      entry.out = true;
      return push({ role: 'outArray', elem, count: arrayCount }, src);
    }

    if (kind.constTarget || docDir === 'in') {
      // math libraries: `const float *alpha` may be host or device memory (pointer mode): an address
      // or a typed array, never copied from a JS array
      if (dataPointers && !(target.k === 'pointer' && isConstCharPointer(target))) return push({ role: 'pointer', nullable: true, size: sizeParam(c, p.name) }, 'c');
      if (target.k === 'void') return push({ role: 'pointer', nullable: true, size: sizeParam(c, p.name) }, 'c');
      if (target.k === 'record') {
        const v = structVersion(target);
        if (v !== undefined && !kind.constTarget) return push({ role: 'inoutRecord', record: target.ts, version: v }, 'c');
        return push({ role: 'inRecord', record: target.ts, nullable: optional }, kind.constTarget ? 'c' : src);
      }
      if (elem && target.k !== 'pointer' && target.k !== 'funcptr') return push({ role: 'inArray', elem, nullable: true }, kind.constTarget ? 'c' : src);
      if (target.k === 'pointer' && isConstCharPointer(target)) return push({ role: 'inArray', elem: { t: 'cstring' }, nullable: true }, 'c');
      return push({ role: 'pointer', nullable: true }, 'c');
    }

    // non-const pointers
    if (target.k === 'void') return push({ role: 'pointer', nullable: true, size: sizeParam(c, p.name) }, 'c');
    if (target.k === 'int' && target.isChar) {
      const next = fn.params[i + 1];
      const lengthLike = (q?: Param) => q && /^(len|length|size|bufferSize|maxLen|bufSize|nameLength|buffer_size|length_?\w*)$/i.test(q.name);
      const lenParam = [next, fn.params[i - 1]].find((q) => lengthLike(q) && model.kind(q!.type).k === 'int');
      if (lenParam) return push({ role: 'outText', length: lenParam.name }, 'c');
      // `char *buf, size_t *size`: the size is a capacity in and a length out
      const capParam = [next, fn.params[i - 1]].find((q) => {
        const k = q && model.kind(q.type);
        return lengthLike(q) && k && k.k === 'pointer' && !k.constTarget && k.toKind.k === 'int';
      });
      if (capParam) {
        textCapacities.set(capParam.name, p.name);
        return push({ role: 'outText', length: capParam.name, capacity: 4096 }, 'c');
      }
      return push({ role: 'pointer', nullable: true }, 'c');
    }
    if (docDir === 'inout') {
      if (target.k === 'record') return push({ role: 'inoutRecord', record: target.ts, version: structVersion(target) }, src);
      if (elem && elem.t !== 'record' && elem.t !== 'address') return push({ role: 'inout', elem }, src);
    }
    if (target.k === 'record') {
      const v = structVersion(target);
      if (v !== undefined) return push({ role: 'inoutRecord', record: target.ts, version: v }, 'c');
      if (dataPointers && docDir !== 'out') return push({ role: 'pointer', nullable: true }, 'c');
      if (isPlural(p.name) || doc?.cues.includes('array')) return push({ role: 'pointer', nullable: true }, 'c');
      return push({ role: 'outRecord', record: target.ts }, src);
    }
    if (target.k === 'funcptr') return push({ role: 'out', elem: { t: 'address' } }, 'c');
    if (target.k === 'pointer') {
      if (isConstCharPointer(target)) return push({ role: 'out', elem: { t: 'cstring' } }, 'c');
      if (target.toKind.k === 'void' && !isPlural(p.name) && !doc?.cues.includes('array')) return push({ role: 'out', elem: { t: 'address' } }, 'c');
      return push({ role: 'pointer', nullable: true }, 'c');
    }
    if (!elem || target.k === 'array') return push({ role: 'pointer', nullable: true }, 'c');
    if (docDir === 'out' && !doc?.cues.includes('array')) return push({ role: 'out', elem }, src);
    // `uint8_t *` is a byte buffer the caller provides, not one byte returned
    if (target.k === 'int' && target.bytes === 1) return push({ role: 'pointer', nullable: true, size: sizeParam(c, p.name) }, 'c');
    // an array of unknown length stays a pointer the caller provides: never a one-element scratch slot
    if (isPlural(p.name) || doc?.cues.includes('array')) return push({ role: 'pointer', nullable: true, size: sizeParam(c, p.name) }, 'c');
    if (dataPointers && docDir !== 'out') {
      const scalarOut = target.k === 'handle' || target.k === 'enum' || (target.k === 'int' && (target.isSize || SCALAR_OUT.test(p.name)));
      if (!scalarOut) return push({ role: 'pointer', nullable: true }, 'c');
    }
    return push({ role: 'out', elem }, src);
  });

  // counts: derived from their input arrays, or a capacity when the arrays are filled by the call
  for (const [count, text] of textCapacities) {
    const at = result.findIndex((r) => r.name === count);
    if (result[at].source !== 'override') result[at] = { name: count, sem: { role: 'capacity', of: [text], elem: { t: 'int', bits: 64, signed: false, size: true } }, source: 'c' };
  }
  for (const [count, { names, out }] of arraysOfCount) {
    const at = result.findIndex((r) => r.name === count);
    if (result[at].source === 'override') continue;
    const qi = fn.params.findIndex((q) => q.name === count);
    const k = kinds[qi];
    const countElem = elemOf(model, k.k === 'pointer' ? k.toKind : k)!;
    if (k.k === 'pointer') result[at] = { name: count, sem: { role: 'capacity', of: names, elem: countElem }, source: 'c' };
    else if (!out) result[at] = { name: count, sem: { role: 'count', of: names }, source: 'c' };
    // a value count of an out array stays an input: the caller says how many elements to fill
  }
  return { name: fn.name, params: result };
}
