// The facts of a data pointer that its `pointer` role carries besides its nullability: the pointee's
// direction (const ⇒ in; non-const ⇒ out when documented [out], else inout: a call that may write
// through a pointer never reads as "in"), and, from the reviewed per-family tables, where its memory
// lives and which parameter counts it in which unit.
import type { FunctionDecl } from '../ir/schema';
import { formatCType } from '../parse/ctype';
import type { Kind, TypeModel } from '../model';
import type { Dir, ModuleOverrides, ParamSem, PointerCount, Sem } from './model';
import { lookupOverride } from './overrides';

type PointerSem = Extract<Sem, { role: 'pointer' }>;

/** The direction C and the header's tag give a pointer parameter. */
function directionOf(kind: Kind, docDir: string | undefined): Dir {
  const constant = kind.k === 'pointer' ? kind.constTarget : kind.k === 'array' ? !!kind.ofType.const : false;
  if (constant) return 'in';
  return docDir === 'out' ? 'out' : 'inout';
}

/** A count's element: the pointee's C type and size when the pointer is typed (`float *`: 4 bytes). */
function countElement(model: TypeModel, kind: Kind, count: PointerCount): PointerCount {
  if (count.unit !== 'elements' || count.typeParam || count.elem || kind.k !== 'pointer' || kind.toKind.k === 'void') return count;
  const { size } = model.sizeAlign(kind.toKind);
  const elem = formatCType({ ...kind.to, const: false }, '').trim();
  return size > 0 ? { ...count, elem, elemBytes: size } : { ...count, elem };
}

/** Parameter `i` of `fn` (resolved as a pointer) with its direction, space and count. */
export function pointerFacts(model: TypeModel, fn: FunctionDecl, i: number, r: ParamSem, overrides: ModuleOverrides): ParamSem {
  const p = fn.params[i];
  const kind = model.kind(p.type);
  const s = r.sem as PointerSem;
  const facts = lookupOverride(overrides.pointers, fn.name, p.name);
  const dir = facts?.dir ?? s.dir ?? directionOf(kind, p.doc?.dir);
  const nullFact = facts?.nullable === true || !!p.doc?.cues.includes('optional') || (r.source === 'override' && s.nullable);
  let sem: PointerSem = { ...s, dir, ...(nullFact && s.nullable ? { nullFact: true } : {}) };
  if (facts) {
    // a family's count parameter, as each function spells it (`Lwork`, `lwork`); none: the count is not known here
    const counter = facts.count && fn.params.find((q) => q.name.toLowerCase() === facts.count!.param.toLowerCase());
    const { size, ...rest } = sem;
    sem = {
      ...rest,
      ...(facts.space ? { space: facts.space } : {}),
      ...(facts.nullable !== undefined ? { nullable: facts.nullable, nullFact: facts.nullable } : {}),
    };
    if (facts.count && counter) sem.count = countElement(model, kind, { ...facts.count, param: counter.name });
    else if (size && !facts.count) sem.size = size;
    return { ...r, sem, source: r.source === 'c' ? 'override' : r.source, reason: r.reason ?? facts.reason };
  }
  return { ...r, sem };
}
