// Decides, per parameter, what the typed layer does with it: take it as a value, return it as an
// out-parameter, encode a record, or pass a pointer through. C headers do not say which pointers are
// outputs, so this follows CUDA's conventions (documented below), with catalog overrides.
import type { FunctionDecl, Param } from '../ir/schema';
import { isConstCharPointer, safeIdent, type Kind, type TypeModel } from './model';

export type Plan =
  | { role: 'value'; p: Param; ident: string; kind: Kind }
  | { role: 'string'; p: Param; ident: string } // const char* in
  | { role: 'pointer'; p: Param; ident: string } // passed through as Pointer
  | { role: 'inRecord'; p: Param; ident: string; record: string } // const T* from an object or Pointer
  | { role: 'out'; p: Param; ident: string; kind: Kind; slot: number } // scalar/handle out
  | { role: 'inout'; p: Param; ident: string; kind: Kind; slot: number } // T* read and written (`Destroy(&handle)`)
  | { role: 'outAddress'; p: Param; ident: string; slot: number } // void** out
  | { role: 'outCString'; p: Param; ident: string; slot: number } // const char** out
  | { role: 'outRecord'; p: Param; ident: string; record: string; size: number }
  | { role: 'outText'; p: Param; ident: string; lengthParam: string }; // char* buf + length param

const SINGULAR_S = /(flags|bytes|status|ss|us|is|address|access|Props|Attrs|Args|Status|Flags|Bytes|Address|Access|Mbps)$/;

/** Integer out-parameter names in the math libraries (`lwork`, `bufferSize`, `version`, `plan`). */
const SCALAR_OUT = /^(p?[Ll]work|[Ll]work\w*|\w*[Ss]ize(InBytes)?|\w*[Vv]ersion|\w*[Cc]ount|value|mode|major|minor|patch|plan|[Ll]evel|seed)$/;

function isPlural(name: string): boolean {
  return /s$/.test(name) && !SINGULAR_S.test(name);
}

function stem(name: string): string {
  return name.toLowerCase().replace(/^(p|ph|pp)(?=[a-z])/, '').replace(/(ies)$/, 'y').replace(/s$/, '');
}

/** A pointer that is an array, or a count paired with one: `numDependencies` ↔ `dependencies`. */
function inArrayGroup(fn: FunctionDecl, p: Param): boolean {
  if (isPlural(p.name)) return true;
  const others = fn.params.filter((q) => q !== p);
  const counts = (q: Param) => {
    const m = /^(?:num|n)([A-Z]\w*)$/.exec(q.name) ?? /^(\w+?)(?:Count|Size)$/.exec(q.name);
    return m ? stem(m[1]) : undefined;
  };
  const mine = stem(p.name);
  // p is the array of some count parameter
  if (others.some((q) => counts(q) !== undefined && mine.startsWith(counts(q)!) && counts(q)!.length >= 3)) return true;
  // p is the count (pointer) of some array parameter
  const c = counts(p);
  if (c && others.some((q) => q.type.kind === 'pointer' && stem(q.name).startsWith(c))) return true;
  return false;
}

/** Names the typed layer's function bodies use for themselves: parameters must not shadow them. */
const TYPED_LOCALS = new Set(['s', 'status', 'raw', 'T', 'records', 'fail', 'result', 'describe']);

export function planParams(model: TypeModel, fn: FunctionDecl): Plan[] {
  const overrides = model.spec.paramOverrides ?? {};
  let slot = 0;
  return fn.params.map((p, i): Plan => {
    const base = safeIdent(p.name);
    const ident = TYPED_LOCALS.has(base) ? `${base}_` : base;
    const kind = model.kind(p.type);
    if (kind.k !== 'pointer') return { role: 'value', p, ident, kind };
    const override = overrides[`${fn.name}.${p.name}`];
    if (isConstCharPointer(kind)) return { role: 'string', p, ident };
    const target = kind.toKind;
    if (override === 'inout' && (target.k === 'handle' || target.k === 'deviceptr' || target.k === 'int' || target.k === 'enum')) {
      return { role: 'inout', p, ident, kind: target, slot: slot++ };
    }
    if (kind.constTarget || override === 'in') {
      if (target.k === 'record' && !isPlural(p.name) && override !== 'in') return { role: 'inRecord', p, ident, record: target.ts };
      return { role: 'pointer', p, ident };
    }
    if (override !== 'out' && inArrayGroup(fn, p)) return { role: 'pointer', p, ident };
    // Math libraries: a `float *`/`cuComplex *`/`int *` is data (device or host arrays, `devInfo`), not
    // a result; only size/count/version-like integers and handles/enums come back as out-parameters.
    if (model.spec.dataPointers && override !== 'out') {
      if (target.k === 'float' || target.k === 'record' || target.k === 'bool') return { role: 'pointer', p, ident };
      if (target.k === 'int' && !target.isChar && !target.isSize && !SCALAR_OUT.test(p.name)) return { role: 'pointer', p, ident };
    }
    switch (target.k) {
      case 'int':
        if (target.isChar) {
          const next = fn.params[i + 1];
          if (next && /^(len|length|size|bufferSize|maxLen|length)$/i.test(next.name) && model.kind(next.type).k === 'int') {
            return { role: 'outText', p, ident, lengthParam: TYPED_LOCALS.has(safeIdent(next.name)) ? `${safeIdent(next.name)}_` : safeIdent(next.name) };
          }
          return { role: 'pointer', p, ident };
        }
        return { role: 'out', p, ident, kind: target, slot: slot++ };
      case 'float':
      case 'bool':
      case 'enum':
      case 'handle':
      case 'deviceptr':
        return { role: 'out', p, ident, kind: target, slot: slot++ };
      case 'funcptr':
        return { role: 'outAddress', p, ident, slot: slot++ };
      case 'pointer': {
        const inner = target.toKind;
        if (isConstCharPointer(target)) return { role: 'outCString', p, ident, slot: slot++ };
        if (inner.k === 'void') return { role: 'outAddress', p, ident, slot: slot++ };
        return { role: 'pointer', p, ident };
      }
      case 'record':
        return { role: 'outRecord', p, ident, record: target.ts, size: target.decl.size };
      default:
        return { role: 'pointer', p, ident };
    }
  });
}

export function slotCount(plans: Plan[]): number {
  return plans.reduce((n, p) => ('slot' in p ? Math.max(n, p.slot + 1) : n), 0);
}
