// The type model: what each C type of a module is at run time (its koffi spelling, its TypeScript type,
// its size). Built once per module from the IR; read by the semantics resolver and by every emitter, so
// it sits between them: parse → ir → model → semantics → emit, and imports nothing of the later stages.
import type { CType, EnumDecl, ModuleIR, RecordDecl } from '../ir/schema';
import type { ModuleSpec } from '../modules';

export type Kind =
  | { k: 'void' }
  | { k: 'int'; bytes: 1 | 2 | 4 | 8; signed: boolean; isSize?: boolean; isChar?: boolean; brand?: string }
  | { k: 'float'; bytes: 4 | 8 }
  | { k: 'bool' }
  | { k: 'enum'; decl: EnumDecl; ts: string }
  | { k: 'handle'; ts: string; tag: string }
  | { k: 'deviceptr'; ts: string }
  | { k: 'pointer'; to: CType; toKind: Kind; constTarget: boolean }
  | { k: 'funcptr'; fn: CType & { kind: 'function' } }
  | { k: 'record'; decl: RecordDecl; ts: string }
  | { k: 'array'; of: Kind; ofType: CType; length: number };

const BUILTINS: Record<string, Kind> = {
  void: { k: 'void' },
  _Bool: { k: 'bool' },
  bool: { k: 'bool' },
  char: { k: 'int', bytes: 1, signed: true, isChar: true },
  'signed char': { k: 'int', bytes: 1, signed: true },
  'unsigned char': { k: 'int', bytes: 1, signed: false },
  short: { k: 'int', bytes: 2, signed: true },
  'unsigned short': { k: 'int', bytes: 2, signed: false },
  int: { k: 'int', bytes: 4, signed: true },
  'unsigned int': { k: 'int', bytes: 4, signed: false },
  long: { k: 'int', bytes: 8, signed: true },
  'unsigned long': { k: 'int', bytes: 8, signed: false },
  'long long': { k: 'int', bytes: 8, signed: true },
  'unsigned long long': { k: 'int', bytes: 8, signed: false },
  float: { k: 'float', bytes: 4 },
  double: { k: 'float', bytes: 8 },
  _Float16: { k: 'int', bytes: 2, signed: false },
};

/** Typedefs that name handles although the headers complete the struct they point to: the library
 *  allocates and owns it (cuBLASLt's descriptors, created by `…Create` and freed by `…Destroy`; the
 *  struct is only there for the `…Init_internal` variants). Branded like opaque handles, so that one
 *  descriptor kind is not taken for another. */
export const OWNED_HANDLES: Readonly<Record<string, string>> = {
  cublasLtMatmulDesc_t: 'created by cublasLtMatmulDescCreate, freed by cublasLtMatmulDescDestroy',
  cublasLtMatrixLayout_t: 'created by cublasLtMatrixLayoutCreate, freed by cublasLtMatrixLayoutDestroy',
  cublasLtMatmulPreference_t: 'created by cublasLtMatmulPreferenceCreate, freed by cublasLtMatmulPreferenceDestroy',
  cublasLtMatrixTransformDesc_t: 'created by cublasLtMatrixTransformDescCreate, freed by cublasLtMatrixTransformDescDestroy',
  cublasLtEmulationDesc_t: 'created by cublasLtEmulationDescCreate, freed by cublasLtEmulationDescDestroy',
};

/** Integer typedefs that are handles (cuFFT's plans are `typedef int cufftHandle`): branded numbers,
 *  so that a handle of another library does not type-check where a plan is expected. */
export const INTEGER_HANDLES: ReadonlySet<string> = new Set(['cufftHandle']);

const RESERVED = new Set(
  'break case catch class const continue debugger default delete do else enum export extends false finally for function if import in instanceof new null return super switch this throw true try typeof var void while with yield let static implements interface package private protected public await arguments eval'.split(
    ' ',
  ),
);
export function safeIdent(name: string): string {
  return RESERVED.has(name) ? `${name}_` : name;
}

/** `struct CUlaunchConfig_st` → `CUlaunchConfig_st`. */
export function bareName(name: string): string {
  return name.replace(/^(struct|union|enum) /, '');
}

export class TypeModel {
  readonly typedefs: Map<string, CType>;
  readonly records: Map<string, RecordDecl>;
  readonly enums: Map<string, EnumDecl>;
  readonly opaque: Set<string>;
  readonly devicePointers: Set<string>;
  /** TS name chosen for each enum (its typedef when one names it directly). */
  readonly enumTsName = new Map<string, string>();

  constructor(
    readonly ir: ModuleIR,
    readonly spec: ModuleSpec,
  ) {
    this.typedefs = new Map(ir.typedefs.map((t) => [t.name, t.type]));
    this.records = new Map(ir.records.map((r) => [r.name, r]));
    this.enums = new Map(ir.enums.map((e) => [e.name, e]));
    this.opaque = new Set([...ir.opaque, ...ir.typedefs.filter((t) => Object.hasOwn(OWNED_HANDLES, t.name)).map((t) => t.name)]);
    this.devicePointers = new Set(spec.devicePointers ?? []);
    for (const e of ir.enums) {
      const td = ir.typedefs.find((t) => t.type.kind === 'named' && t.type.name === e.name);
      this.enumTsName.set(e.name, td ? td.name : bareName(e.name));
    }
  }

  kind(t: CType): Kind {
    switch (t.kind) {
      case 'builtin': {
        const b = BUILTINS[t.name];
        if (!b) throw new Error(`unsupported builtin C type ${t.name}`);
        return b;
      }
      case 'pointer':
        if (t.to.kind === 'function') return { k: 'funcptr', fn: t.to };
        return { k: 'pointer', to: t.to, toKind: this.kind(t.to), constTarget: !!t.to.const };
      case 'array':
        return { k: 'array', of: this.kind(t.of), ofType: t.of, length: t.length };
      case 'function':
        throw new Error('bare function type');
      case 'named': {
        const n = t.name;
        if (this.devicePointers.has(n)) return { k: 'deviceptr', ts: n };
        if (this.opaque.has(n)) {
          const target = this.typedefs.get(n)!;
          const tag = target.kind === 'pointer' && target.to.kind === 'named' ? bareName(target.to.name) : n;
          return { k: 'handle', ts: n, tag };
        }
        if (n.startsWith('enum ')) {
          const decl = this.enums.get(n);
          if (!decl) return { k: 'int', bytes: 4, signed: true };
          return { k: 'enum', decl, ts: this.enumTsName.get(n)! };
        }
        if (n.startsWith('struct ') || n.startsWith('union ')) {
          const decl = this.records.get(n);
          if (!decl) return { k: 'void' }; // incomplete record: only ever used behind a pointer
          return { k: 'record', decl, ts: bareName(n) };
        }
        if (n === 'size_t') return { k: 'int', bytes: 8, signed: false, isSize: true };
        const td = this.typedefs.get(n);
        if (!td) throw new Error(`unknown C type ${n}`);
        const inner = this.kind(td);
        if (inner.k === 'enum') return { ...inner, ts: n };
        if (inner.k === 'int' && INTEGER_HANDLES.has(n)) return { ...inner, brand: n };
        return inner;
      }
    }
  }

  sizeAlign(kind: Kind): { size: number; align: number } {
    switch (kind.k) {
      case 'void':
        return { size: 0, align: 1 };
      case 'int':
      case 'float':
        return { size: kind.bytes, align: kind.bytes };
      case 'bool':
        return { size: 1, align: 1 };
      case 'enum':
        return { size: kind.decl.size, align: kind.decl.size };
      case 'handle':
      case 'deviceptr':
      case 'pointer':
      case 'funcptr':
        return { size: 8, align: 8 };
      case 'record':
        return { size: kind.decl.size, align: kind.decl.align };
      case 'array': {
        const e = this.sizeAlign(kind.of);
        return { size: e.size * kind.length, align: e.align };
      }
    }
  }

  /** koffi scalar type name for a value of this kind (records excluded). */
  ffiScalar(kind: Kind, position: 'param' | 'return' | 'field'): string {
    switch (kind.k) {
      case 'void':
        return 'void';
      case 'bool':
        return 'bool';
      case 'int':
        if (kind.isChar) return 'char';
        return `${kind.signed ? 'int' : 'uint'}${kind.bytes * 8}_t`;
      case 'float':
        return kind.bytes === 4 ? 'float' : 'double';
      case 'enum':
        return `${kind.decl.signed ? 'int' : 'uint'}${kind.decl.size * 8}_t`;
      case 'handle':
      case 'deviceptr':
      case 'funcptr':
        return position === 'param' && kind.k === 'funcptr' ? 'void *' : 'uintptr_t';
      case 'pointer':
        if (isConstCharPointer(kind) && position !== 'field') return 'const char *';
        return position === 'param' ? 'void *' : 'uintptr_t';
      case 'record':
      case 'array':
        throw new Error('records and arrays have no scalar koffi type');
    }
  }

  /** TypeScript type of a value of C type `t` (as a field or a value parameter). */
  tsType(t: CType, position: 'param' | 'return' | 'field'): string {
    const kind = this.kind(t);
    switch (kind.k) {
      case 'void':
        return 'void';
      case 'bool':
        return 'boolean';
      case 'int':
        if (kind.brand) return kind.brand;
        if (kind.bytes === 8 && !kind.isSize) return position === 'param' ? 'Int64' : 'number | bigint';
        if (kind.bytes === 8) return position === 'param' ? 'Int64' : 'number';
        return 'number'; // integer typedefs read as plain `number`: simpler for users than aliases
      case 'float':
        return 'number';
      case 'enum':
        return kind.ts;
      case 'handle':
      case 'deviceptr':
        return t.kind === 'named' ? t.name : kind.ts;
      case 'funcptr':
        return position === 'param' ? 'Pointer' : 'number';
      case 'pointer':
        if (isConstCharPointer(kind)) return position === 'param' ? 'string | Pointer' : position === 'return' ? 'string | null' : 'number';
        return position === 'param' ? 'Pointer' : 'number';
      case 'record':
        return kind.ts;
      case 'array':
        if (kind.of.k === 'int' && kind.of.isChar && charArrayIsText(kind)) return 'string';
        return arrayOf(this.tsType(kind.ofType, position));
    }
  }
}

/** `T[]`, parenthesized when T is a union (`(number | bigint)[]`, not `number | bigint[]`). */
export function arrayOf(t: string): string {
  return /[|&]/.test(t) ? `(${t})[]` : `${t}[]`;
}

export function isConstCharPointer(kind: Kind): boolean {
  return kind.k === 'pointer' && kind.constTarget && kind.toKind.k === 'int' && !!kind.toKind.isChar;
}

/** Character arrays decode as strings unless they are byte blobs. */
export function charArrayIsText(_kind: Kind, fieldName = ''): boolean {
  return !/bytes|reserved|pad|data|handle|uuid|internal|opaque|key|id$/i.test(fieldName);
}
