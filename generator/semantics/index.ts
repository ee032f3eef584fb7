// The parameter-semantics model of a module: resolved per function, listed one line per function
// (`headers/<ver>/<module>.signatures.txt`, compared by `cuda-ts-gen --check`), and described as the
// typed layer's parameter list for tests and tools.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModuleIR } from '../ir/schema';
import { parseIR } from '../ir/store';
import { findModule } from '../modules';
import { TypeModel } from '../model';
import type { Elem, FunctionSem, ModuleOverrides, ParamSem, ScalarType, Sem, Space } from './model';
import { overridesFor } from './overrides';
import { resolveFunction } from './resolve';

export * from './model';
export { resolveFunction, structVersion } from './resolve';
export { lookupOverride, overridesFor } from './overrides';
export { scalarTypeOf } from './resolve';

/** The semantics of every function of a module, in IR order. */
export function resolveModule(model: TypeModel, overrides: ModuleOverrides = overridesFor(model.spec.name)): FunctionSem[] {
  // Overrides are keyed by name across releases: one naming a parameter an older release lacks applies
  // to none of its functions (staleOverrides lists those, for review).
  return model.ir.functions.map((fn) => checkRecords(model, fn.name, resolveFunction(model, fn, overrides)));
}

/** Record names in the semantics must exist, and record sizes come from the layouts, never from a table. */
function checkRecords(model: TypeModel, fn: string, f: FunctionSem): FunctionSem {
  const sizeOf = (name: string) => {
    const r = model.records.get(`struct ${name}`) ?? model.records.get(`union ${name}`);
    if (!r) throw new Error(`${model.ir.cudaVersion} ${model.spec.name} ${fn}: semantics name record ${name}, which the headers do not define`);
    return r.size;
  };
  const fix = (e: Elem): Elem => (e.t === 'record' ? { ...e, size: sizeOf(e.name) } : e);
  return {
    ...f,
    params: f.params.map((p) => {
      const s = p.sem;
      if ('record' in s) sizeOf(s.record);
      if ('elem' in s) return { ...p, sem: { ...s, elem: fix(s.elem) } as Sem };
      return p;
    }),
  };
}

/** Override keys that name no parameter of this module's functions (patterns excluded). */
export function staleOverrides(model: TypeModel, overrides: ModuleOverrides = overridesFor(model.spec.name)): string[] {
  const known = new Set(model.ir.functions.flatMap((f) => f.params.map((p) => `${f.name}.${p.name}`)));
  const keys = [
    ...Object.keys(overrides.params),
    ...Object.keys(overrides.scalars ?? {}),
    ...Object.keys(overrides.pointers ?? {}),
    ...Object.keys(overrides.outUnits ?? {}),
  ];
  return keys.filter((k) => !k.includes('*') && !known.has(k));
}

/** One parameter whose role rests on a name or a default rather than a fact (header docs, const, an override). */
export interface GuessedParam {
  fn: string;
  param: string;
  /** The role as the listing writes it. */
  role: string;
  /** Which name rule or default decided it. */
  guess: string;
}

/** The parameters of these functions whose roles are guesses, in order: what a review decides from facts. */
export function guessedParams(sems: FunctionSem[]): GuessedParam[] {
  return sems.flatMap((f) =>
    f.params.flatMap((p) => (p.guess && p.source !== 'override' ? [{ fn: f.name, param: p.name, role: semText(p.sem), guess: p.guess }] : [])),
  );
}

export function elemText(e: Elem): string {
  switch (e.t) {
    case 'int':
      return e.brand ?? (e.size ? 'size_t' : `${e.signed ? 'i' : 'u'}${e.bits}`);
    case 'float':
      return `f${e.bits}`;
    case 'enum':
    case 'handle':
    case 'deviceptr':
      return e.name;
    case 'record':
      return `struct ${e.name}`;
    default:
      return e.t;
  }
}

export function semText(s: Sem): string {
  switch (s.role) {
    case 'value':
      return `in ${elemText(s.elem)}`;
    case 'recordValue':
      return `in struct ${s.record} (by value)`;
    case 'callback':
      return 'in callback';
    case 'string':
      return `in string${s.nullable ? '?' : ''}`;
    case 'pointer': {
      const count = s.count
        ? ` covering ${s.count.param} ${s.count.unit}${s.count.elem ? ` of ${s.count.elem}` : s.count.typeParam ? ` of ${s.count.typeParam}` : ''}`
        : s.size
          ? ` covering ${s.size}`
          : '';
      return `${s.dir ?? ''}${s.space ? ` ${s.space}` : ''}${s.dir || s.space ? ' ' : ''}pointer${s.nullable ? '?' : ''}${count}${s.retained ? ' (kept by the library)' : ''}`;
    }
    case 'scalar':
      return `scalar ${s.type} (${s.space})`;
    case 'resultArray':
      return `out ${elemText(s.elem)}[${s.capacity} → *${s.count}]`;
    case 'countOut':
      return `count of ${s.of} (read inside)`;
    case 'attrSize':
      return `size of ${s.of} (from the attribute)`;
    case 'inRecord':
      return `in struct ${s.record}${s.nullable ? '?' : ''}`;
    case 'inArray':
      return `${s.inout ? 'inout' : 'in'} ${elemText(s.elem)}[${s.count ?? ''}]${s.nullable ? '?' : ''}`;
    case 'count':
      return `count of ${s.of.join(', ')}`;
    case 'out':
      return `out ${elemText(s.elem)}${s.unit ? ` (${s.unit})` : ''}`;
    case 'inout':
      return `inout ${elemText(s.elem)}`;
    case 'outRecord':
      return `out struct ${s.record}${s.version !== undefined ? ` version=0x${s.version.toString(16)}` : ''}`;
    case 'inoutRecord':
      return `inout struct ${s.record}${s.version !== undefined ? ` version=0x${s.version.toString(16)}` : ''}`;
    case 'outText':
      return s.capacity ? `out text[*${s.length} = ${s.capacity}]` : `out text[${s.length}]`;
    case 'outArray':
      return `out ${elemText(s.elem)}[${s.count}]`;
    case 'capacityArray':
      return `out ${elemText(s.elem)}[*${s.count}]`;
    case 'capacity':
      return `capacity/count of ${s.of.join(', ')}`;
    case 'attrValue':
      return `${s.dir} value typed by ${s.attr} (${s.table})`;
  }
}

const SOURCE_MARK: Record<ParamSem['source'], string> = { c: '', doc: ' [doc]', override: ' [override]' };

/** One line per function: `name(param: semantics [source], …)`. */
export function formatListing(ir: ModuleIR, sems: FunctionSem[], banner = `# ${ir.module} ${ir.cudaVersion}`): string {
  const lines = [
    banner,
    '# The parameter semantics of the typed layer, one line per function: [doc] from the header documentation, [override] from the reviewed table, the rest from C types.',
  ];
  for (const f of sems) lines.push(`${f.name}(${f.params.map((p) => `${p.name}: ${semText(p.sem)}${SOURCE_MARK[p.source]}`).join(', ')})`);
  return lines.join('\n') + '\n';
}

export type Accept =
  | 'int'
  | 'float'
  | 'bool'
  | 'enum'
  | 'handle'
  | 'deviceptr'
  | 'string'
  | 'record'
  | 'array'
  | 'buffer'
  | 'pointer'
  | 'callback'
  | 'scalar'
  | 'device'
  | 'host'
  | 'memory';
export interface TypedParam {
  /** The JS parameter name in the typed function (as in C). */
  name: string;
  accepts: Accept;
  /** int/enum: 8, 16, 32, 64. */
  bits?: number;
  signed?: boolean;
  /** null accepted. */
  nullable: boolean;
  /** May be left out (undefined): a trailing in/out record the call fills from zero. */
  optional?: boolean;
  /** A value whose C type the attribute argument picks (int32 or uint64, or a boolean): its range is the attribute's. */
  attribute?: boolean;
  /** A scalar by pointer: its C type, and where its memory may live. */
  scalar?: ScalarType;
  space?: Space;
}

function acceptOf(e: Elem): Pick<TypedParam, 'accepts' | 'bits' | 'signed'> {
  switch (e.t) {
    case 'int':
      return { accepts: 'int', bits: e.bits, signed: e.signed };
    case 'enum':
      return { accepts: 'enum', bits: e.bits, signed: e.signed };
    case 'float':
    case 'bool':
    case 'handle':
    case 'deviceptr':
      return { accepts: e.t };
    case 'record':
      return { accepts: 'record' };
    default:
      return { accepts: 'pointer' };
  }
}

/** The typed function's parameters, in call order, from the semantics of its C parameters. */
export function typedParams(f: FunctionSem): TypedParam[] {
  const out: TypedParam[] = [];
  for (const p of f.params) {
    const s = p.sem;
    switch (s.role) {
      case 'value':
      case 'inout':
        out.push({ name: p.name, ...acceptOf(s.elem), nullable: s.elem.t === 'handle' });
        break;
      case 'recordValue':
        out.push({ name: p.name, accepts: 'record', nullable: false });
        break;
      case 'callback':
        out.push({ name: p.name, accepts: 'callback', nullable: s.nullable });
        break;
      case 'string':
        out.push({ name: p.name, accepts: 'string', nullable: s.nullable });
        break;
      case 'pointer':
        out.push({
          name: p.name,
          accepts: s.space === 'device' ? 'device' : s.space === 'host' ? 'host' : s.space === 'either' ? 'memory' : 'pointer',
          nullable: s.nullable,
        });
        break;
      case 'scalar':
        out.push({ name: p.name, accepts: 'scalar', nullable: false, scalar: s.type, space: s.space });
        break;
      case 'inRecord':
        out.push({ name: p.name, accepts: 'record', nullable: s.nullable });
        break;
      case 'inoutRecord':
        out.push({
          name: p.name,
          accepts: 'record',
          nullable: true,
          ...(f.params.slice(f.params.indexOf(p) + 1).every((q) => !takesTypedArg(q.sem)) ? { optional: true } : {}),
        });
        break;
      case 'inArray':
        out.push({ name: p.name, accepts: 'array', nullable: s.nullable });
        break;
      case 'attrValue':
        // its C type depends on the attribute: a number, bigint or boolean
        if (s.dir === 'in') out.push({ name: p.name, accepts: 'int', bits: 64, signed: true, nullable: false, attribute: true });
        break;
      default:
        break; // outputs and derived counts are not parameters of the typed function
    }
  }
  return out;
}

/** Whether a parameter of these semantics is a parameter of the typed function (outputs and derived counts are not). */
export function takesTypedArg(s: Sem): boolean {
  return (
    !['count', 'out', 'outRecord', 'outText', 'outArray', 'capacityArray', 'capacity', 'resultArray', 'countOut', 'attrSize'].includes(s.role) &&
    !(s.role === 'attrValue' && s.dir === 'out')
  );
}

/** The typed layer's parameters of every function of one stored module of one release. */
export function typedSignatures(root: string, version: string, module: string): Map<string, TypedParam[]> {
  const path = join(root, 'headers', version, `${module}.json`);
  const ir = parseIR(readFileSync(path, 'utf8'), path);
  const spec = findModule(module);
  if (!spec) throw new Error(`unknown module ${module}`);
  const model = new TypeModel(ir, spec);
  return new Map(resolveModule(model).map((f) => [f.name, typedParams(f)]));
}
