// Lowers clang's JSON AST (+ record layouts + macros) of one module to the IR. Pure: no I/O.
// Doc comments are read only to classify parameters (`docFacts`): the IR keeps a direction and a few
// cue words from a fixed vocabulary, never NVIDIA's prose.
import { basename } from 'node:path';
import type { CType, Constant, EnumDecl, Field, FunctionDecl, ModuleIR, ParamDoc, RecordDecl, TypedefDecl } from '../ir/schema';
import type { ModuleSpec } from '../modules';
import { anonKey, parseCType } from './ctype';
import type { RecordLayout } from './layout';
import { macroConstant, resolveIdentifier, type EvalContext, type MacroTable } from './macros';
import { introducedVersion, procFor, procTable } from './proc';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Node = any;

export interface LowerInput {
  spec: ModuleSpec;
  cudaVersion: string;
  ast: Node;
  layouts: Map<string, RecordLayout>;
  macros: MacroTable;
  /** Macros with `CUDA_API_PER_THREAD_DEFAULT_STREAM` defined. */
  ptdsMacros: MacroTable;
  /** The Doxygen group at a header line (./groups.ts); absent: functions carry no group. */
  groupAt?: (file: string, line: number) => string | undefined;
  /** The deprecation marker written on the declaration at a header line (./deprecation.ts). */
  deprecationAt?: (file: string, line: number, names: readonly string[]) => { version?: string } | undefined;
  /** Base name → the oldest `PFN_<name>_v<N>` version in the typedef header's text (./proc.ts). */
  oldestProcVersions?: ReadonlyMap<string, number>;
}

interface RawRecord {
  key: string; // `struct X` or `@anon:F:L:C`
  kind: 'struct' | 'union';
  header: string;
  fields: { name: string; type: CType; bitWidth?: number }[];
}

interface RawEnum {
  key: string;
  header: string;
  members: { name: string; value: bigint }[];
}

/** Tracks clang's delta-encoded source locations while walking nodes in document order. */
class LocationTracker {
  file = '';
  line = 0;
  visit(value: Node): void {
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const v of value) this.visit(v);
      return;
    }
    if ('offset' in value && ('col' in value || 'file' in value || 'line' in value)) {
      if (typeof value.file === 'string') this.file = value.file;
      if (typeof value.line === 'number') this.line = value.line;
      return;
    }
    for (const k of Object.keys(value)) {
      if (k === 'inner' || k === 'type') continue; // children are visited by the caller, in order
      if (value[k] !== null && typeof value[k] === 'object') this.visit(value[k]);
    }
  }
  /** Location of a node's `loc` (the expansion location for macro-spelled declarations). */
  locate(node: Node): { file: string; line: number; col: number } {
    const loc = node.loc ?? {};
    this.visit(loc);
    const where = loc.expansionLoc ?? loc;
    const col = where.col ?? 0;
    const here = { file: this.file, line: this.line, col };
    this.visit(node.range);
    return here;
  }
}

type Where = { file: string; line: number; col: number };

/** Collects the top-level declarations of clang's AST, in document order (locations are delta-encoded). */
class DeclWalker {
  readonly tracker = new LocationTracker();
  readonly functions: (Node & { file: string; line: number })[] = [];
  readonly typedefs: { name: string; type: CType; file: string; owned?: string }[] = [];
  readonly records: RawRecord[] = [];
  readonly incomplete = new Set<string>();
  readonly enums: RawEnum[] = [];
  // clang ids of anonymous tag declarations: `typedef enum { … } X` prints its type as `enum X`
  private readonly anonById = new Map<string, string>();

  walk(ast: Node): this {
    for (const node of ast.inner ?? []) {
      const where = this.tracker.locate(node);
      switch (node.kind) {
        case 'FunctionDecl':
          this.tracker.visit(node.inner ?? []);
          this.functions.push({ ...node, file: where.file, line: where.line });
          break;
        case 'TypedefDecl':
          this.visitTypedef(node, where);
          break;
        case 'RecordDecl':
          this.visitRecord(node, where);
          break;
        case 'EnumDecl':
          this.visitEnum(node, where);
          break;
        default:
          this.tracker.visit(node.inner ?? []);
      }
    }
    return this;
  }

  private visitTypedef(node: Node, where: Where): void {
    this.tracker.visit(node.inner ?? []);
    if (node.isImplicit) return;
    const ownedId: string | undefined = node.inner?.[0]?.ownedTagDecl?.id;
    const owned = ownedId !== undefined ? this.anonById.get(ownedId) : undefined;
    this.typedefs.push({ name: node.name, type: parseCType(node.type.qualType), file: where.file, ...(owned ? { owned } : {}) });
  }

  private visitRecord(node: Node, where: Where): void {
    const key = node.name ? `${node.tagUsed} ${node.name}` : anonKey(`${where.file}:${where.line}:${where.col}`);
    if (!node.name && node.id) this.anonById.set(node.id, key);
    if (!node.completeDefinition) {
      this.incomplete.add(key);
      this.tracker.visit(node.inner ?? []);
      return;
    }
    const fields: RawRecord['fields'] = [];
    for (const child of node.inner ?? []) {
      if (child.kind === 'RecordDecl') {
        this.visitRecord(child, this.tracker.locate(child));
      } else if (child.kind === 'FieldDecl') {
        this.tracker.locate(child);
        this.tracker.visit(child.inner ?? []);
        const bitWidth = child.isBitfield ? bitWidthOf(child) : undefined;
        fields.push({ name: child.name ?? '', type: parseCType(child.type.qualType), ...(bitWidth !== undefined ? { bitWidth } : {}) });
      } else {
        this.tracker.visit(child);
      }
    }
    this.records.push({ key, kind: node.tagUsed, header: basename(where.file), fields });
  }

  private visitEnum(node: Node, where: Where): void {
    const key = node.name ? `enum ${node.name}` : anonKey(`${where.file}:${where.line}:${where.col}`);
    if (!node.name && node.id) this.anonById.set(node.id, key);
    const members: RawEnum['members'] = [];
    let next = 0n;
    for (const c of node.inner ?? []) {
      if (c.kind !== 'EnumConstantDecl') {
        this.tracker.visit(c);
        continue;
      }
      this.tracker.locate(c);
      const value = findConstantValue(c);
      this.tracker.visit(c.inner ?? []);
      const v = value !== undefined ? BigInt(value) : next;
      members.push({ name: c.name, value: v });
      next = v + 1n;
    }
    if (members.length) this.enums.push({ key, header: basename(where.file), members });
  }
}

function walkDecls(ast: Node) {
  const { functions, typedefs, records, incomplete, enums } = new DeclWalker().walk(ast);
  return { functions, typedefs, records, incomplete, enums };
}

function bitWidthOf(field: Node): number | undefined {
  const find = (n: Node): string | undefined => {
    if (!n || typeof n !== 'object') return undefined;
    if (n.kind === 'ConstantExpr' && n.value !== undefined) return n.value;
    if (n.kind === 'IntegerLiteral') return n.value;
    for (const c of n.inner ?? []) {
      const v = find(c);
      if (v !== undefined) return v;
    }
    return undefined;
  };
  const v = find(field);
  return v === undefined ? undefined : Number(v);
}

/** `{ return g(a, b); }` (through implicit casts) → `g`, for a function whose whole body forwards. */
function forwardedCall(f: Node): string | undefined {
  const body = (f.inner ?? []).find((c: Node) => c.kind === 'CompoundStmt');
  const stmts = body?.inner ?? [];
  if (stmts.length !== 1 || stmts[0].kind !== 'ReturnStmt') return undefined;
  let e = stmts[0].inner?.[0];
  while (e && (e.kind === 'ImplicitCastExpr' || e.kind === 'ParenExpr')) e = e.inner?.[0];
  if (!e || e.kind !== 'CallExpr') return undefined;
  let callee = e.inner?.[0];
  while (callee && (callee.kind === 'ImplicitCastExpr' || callee.kind === 'ParenExpr')) callee = callee.inner?.[0];
  return callee?.kind === 'DeclRefExpr' ? callee.referencedDecl?.name : undefined;
}

function findConstantValue(c: Node): string | undefined {
  for (const child of c.inner ?? []) {
    if (child.kind === 'ConstantExpr' && child.value !== undefined) return child.value;
    const deeper = findConstantValue(child);
    if (deeper !== undefined) return deeper;
  }
  return undefined;
}

function mapNamed(t: CType, f: (name: string) => string): CType {
  switch (t.kind) {
    case 'named':
      return { ...t, name: f(t.name) };
    case 'builtin':
      return t;
    case 'pointer':
      return { ...t, to: mapNamed(t.to, f) };
    case 'array':
      return { ...t, of: mapNamed(t.of, f) };
    case 'function':
      return { ...t, returns: mapNamed(t.returns, f), params: t.params.map((p) => mapNamed(p, f)) };
  }
}

function namedRefs(t: CType, out: string[]): void {
  switch (t.kind) {
    case 'named':
      out.push(t.name);
      break;
    case 'pointer':
      namedRefs(t.to, out);
      break;
    case 'array':
      namedRefs(t.of, out);
      break;
    case 'function':
      namedRefs(t.returns, out);
      t.params.forEach((p) => namedRefs(p, out));
      break;
  }
}

function enumStorage(values: bigint[]): { size: number; signed: boolean } {
  const min = values.reduce((a, b) => (b < a ? b : a), 0n);
  const max = values.reduce((a, b) => (b > a ? b : a), 0n);
  if (min >= -(2n ** 31n) && max < 2n ** 31n) return { size: 4, signed: true };
  if (min >= 0n && max < 2n ** 32n) return { size: 4, signed: false };
  return { size: 8, signed: min < 0n };
}

/**
 * Lowers one module: a sequence of passes, each a function below. Declarations are walked once;
 * anonymous types get names; the module's functions are chosen and named; the types they and the
 * module's headers reach are kept; macros give constants and the header version.
 */
export function lowerModule(input: LowerInput): ModuleIR {
  const { spec } = input;
  const decls = walkDecls(input.ast);
  const scope = moduleScope(spec);
  const tables = declarationTables(decls, input.layouts, nameAnonymousTypes(decls));
  const { functions, aliases } = lowerFunctions(input, decls, tables, scope);
  const wanted = reachableTypes(functions, tables, scope.own, spec.keepTypes ?? []);
  const enums = lowerEnums(wanted, tables);
  const typedefs = [...wanted]
    .filter((n) => tables.typedefs.has(n))
    .sort()
    .map((n) => tables.typedefs.get(n)!);
  const ctx = macroContext(input.macros, tables);
  const constants = macroConstants(spec, ctx, enums);
  return {
    irVersion: 1,
    module: spec.name,
    cudaVersion: input.cudaVersion,
    versionNumber: headerVersion(input, ctx, constants),
    functions,
    enums,
    records: lowerRecords(wanted, tables),
    typedefs,
    opaque: opaqueHandles(typedefs, tables),
    constants,
    aliases,
  };
}

type Decls = ReturnType<typeof walkDecls>;

/** Which headers and names belong to the module. */
interface ModuleScope {
  /** Basenames of the module's own headers. */
  own: Set<string>;
  /** The name has one of the module's prefixes. */
  ownsName(name: string): boolean;
  /** A documented API name: the module's prefix, and not `__x` or another internal spelling. */
  isApiName(name: string): boolean;
  /** Left out by the catalog (spec.excludePrefixes). */
  excluded(name: string): boolean;
}

function moduleScope(spec: ModuleSpec): ModuleScope {
  const ownsName = (name: string) => spec.prefixes.some((p) => name.startsWith(p));
  return {
    own: new Set(spec.ownHeaders.map((h) => basename(h))),
    ownsName,
    isApiName: (n) => ownsName(n) && !n.startsWith('_'),
    excluded: (n) => (spec.excludePrefixes ?? []).some((p) => n.startsWith(p)),
  };
}

/** Anonymous records and enums take the name of their typedef, or `Outer_field`: `@anon:…` key → name. */
function nameAnonymousTypes(decls: Decls): Map<string, string> {
  const rename = new Map<string, string>();
  const typedefByAnon = new Map<string, string>();
  for (const td of decls.typedefs) {
    if (td.type.kind === 'named' && td.type.name.startsWith('@anon:') && !typedefByAnon.has(td.type.name)) typedefByAnon.set(td.type.name, td.name);
    // `typedef enum { … } X`: clang spells the type `enum X`; the declaration is anonymous
    if (td.owned && !typedefByAnon.has(td.owned) && td.type.kind === 'named' && td.type.name.endsWith(` ${td.name}`)) typedefByAnon.set(td.owned, td.name);
  }
  for (const r of decls.records) {
    if (r.key.startsWith('@anon:') && typedefByAnon.has(r.key)) rename.set(r.key, `${r.kind} ${typedefByAnon.get(r.key)}`);
  }
  for (const e of decls.enums) {
    if (e.key.startsWith('@anon:') && typedefByAnon.has(e.key)) rename.set(e.key, `enum ${typedefByAnon.get(e.key)}`);
  }
  nameNestedAnonymousRecords(decls.records, rename);
  return rename;
}

/** Nested anonymous records: named after their parent and field, resolved outside-in. */
function nameNestedAnonymousRecords(records: RawRecord[], rename: Map<string, string>): void {
  const recordKind = new Map(records.map((r) => [r.key, r.kind]));
  for (let changed = true; changed; ) {
    changed = false;
    for (const r of records) {
      const parent = rename.get(r.key) ?? (r.key.startsWith('@anon:') ? undefined : r.key);
      if (!parent) continue;
      r.fields.forEach((f, i) => {
        let t = f.type;
        while (t.kind === 'array') t = t.of; // `struct { … } utilization[4]`
        if (t.kind === 'named' && t.name.startsWith('@anon:') && !rename.has(t.name)) {
          const kind = recordKind.get(t.name) ?? 'struct';
          const bare = parent.replace(/^(struct|union|enum) /, '');
          rename.set(t.name, `${kind} ${bare}_${f.name || `anon${i}`}`);
          changed = true;
        }
      });
    }
  }
}

/** The module's declarations by their final names (the first declaration of a name wins). */
interface DeclTables {
  typedefs: Map<string, TypedefDecl>;
  records: Map<string, RawRecord>;
  layoutOf: Map<string, RecordLayout>;
  enums: Map<string, RawEnum>;
  /** A type with anonymous names replaced by their final ones. */
  fix(t: CType): CType;
}

function declarationTables(decls: Decls, layouts: Map<string, RecordLayout>, rename: Map<string, string>): DeclTables {
  const fix = (t: CType) => mapNamed(t, (n) => rename.get(n) ?? n);
  const typedefs = new Map<string, TypedefDecl>();
  for (const td of decls.typedefs) {
    if (!typedefs.has(td.name)) typedefs.set(td.name, { name: td.name, type: fix(td.type), header: basename(td.file) });
  }
  const records = new Map<string, RawRecord>();
  for (const r of decls.records) {
    const name = rename.get(r.key) ?? r.key;
    if (!records.has(name)) records.set(name, { ...r, fields: r.fields.map((f) => ({ ...f, type: fix(f.type) })) });
  }
  const layoutOf = new Map<string, RecordLayout>();
  for (const r of decls.records) {
    const l = layouts.get(r.key);
    if (l) layoutOf.set(rename.get(r.key) ?? r.key, l);
  }
  const enums = new Map<string, RawEnum>();
  for (const e of decls.enums) {
    const name = rename.get(e.key) ?? e.key;
    if (!enums.has(name)) enums.set(name, e);
  }
  return { typedefs, records, layoutOf, enums, fix };
}

const hasBody = (f: Node) => (f.inner ?? []).some((c: Node) => c.kind === 'CompoundStmt');

/**
 * The module's functions, under their user-facing names, and the other names (aliases) they have.
 * Functions: declared in this module's headers, not inline. A function belongs to the module when
 * its user-facing name has one of the module's prefixes (the exported symbol may not: nvJitLink
 * exports `__nvJitLinkCreate_13_0` behind an inline `nvJitLinkCreate`).
 */
function lowerFunctions(
  input: LowerInput,
  decls: Decls,
  tables: DeclTables,
  scope: ModuleScope,
): { functions: FunctionDecl[]; aliases: Record<string, string> } {
  const inOwn = (f: Node) => scope.own.has(basename(f.file));
  const seen = new Set<string>();
  const candidates = decls.functions.filter((f) => {
    if (!inOwn(f) || f.inline || f.storageClass === 'static' || hasBody(f)) return false;
    if (seen.has(f.name)) return false;
    seen.add(f.name);
    return true;
  });
  const declared = new Set(candidates.map((f) => f.name));
  const userName = userNames(input.macros, decls, declared, inOwn, scope);
  const aliases: Record<string, string> = {};
  const functions: FunctionDecl[] = [];
  for (const f of candidates) {
    const { name, others } = userName(f.name);
    if (!scope.isApiName(name) || scope.excluded(name)) continue;
    for (const n of others) if (scope.isApiName(n) || scope.ownsName(n)) aliases[n] = name;
    functions.push(functionDecl(f, name, input.ptdsMacros, tables.fix, input));
  }
  const chosen = preferMacroTargets(functions);
  attachProcVersions(chosen, decls, tables, input.oldestProcVersions ?? new Map());
  chosen.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { functions: chosen, aliases: Object.fromEntries(Object.entries(aliases).sort(([a], [b]) => (a < b ? -1 : 1))) };
}

/**
 * Aliases from macros (`#define cuMemAlloc cuMemAlloc_v2`) and from inline forwarding wrappers
 * (`static inline R f(a, b) { return __f_13_0(a, b); }`): user-facing names for declared functions.
 * Returns the naming of a declared symbol: its user-facing name and its other names.
 */
function userNames(
  macros: MacroTable,
  decls: Decls,
  declared: Set<string>,
  inOwn: (f: Node) => boolean,
  scope: ModuleScope,
): (symbol: string) => { name: string; others: string[] } {
  const aliasTargets = new Map<string, string[]>();
  const addAlias = (target: string, name: string) => {
    const list = aliasTargets.get(target) ?? [];
    if (!list.includes(name)) aliasTargets.set(target, [...list, name]);
  };
  for (const name of [...macros.objects.keys()].sort()) {
    const target = resolveIdentifier(macros, name);
    if (target && target !== name && declared.has(target)) addAlias(target, name);
  }
  for (const f of decls.functions) {
    if (!inOwn(f) || !hasBody(f) || declared.has(f.name)) continue;
    const target = forwardedCall(f);
    if (target && declared.has(target) && !scope.isApiName(target)) addAlias(target, f.name);
  }
  return (symbol) => {
    const names = aliasTargets.get(symbol) ?? [];
    // `cuMemAlloc` → `cuMemAlloc_v2`: the versionless name is the user-facing one
    const versionless = names.find((n) => symbol.replace(/_v\d+$/, '') === n);
    // `nvJitLinkCreate` → `__nvJitLinkCreate_13_0`: an internal symbol takes its API alias's name
    const api = scope.isApiName(symbol) ? undefined : names.find((n) => scope.isApiName(n));
    const name = versionless ?? api ?? symbol;
    return { name, others: names.filter((n) => n !== name) };
  };
}

/** The IR of one function declaration named `name`. */
function functionDecl(
  f: Node,
  name: string,
  ptdsMacros: MacroTable,
  fix: (t: CType) => CType,
  at: Pick<LowerInput, 'groupAt' | 'deprecationAt'>,
): FunctionDecl {
  const docs = docFacts(f);
  const params = (f.inner ?? [])
    .filter((c: Node) => c.kind === 'ParmVarDecl')
    .map((p: Node, i: number) => {
      const param: FunctionDecl['params'][number] = { name: p.name ?? `arg${i}`, type: fix(parseCType(p.type.qualType)) };
      const doc = docs.get(param.name);
      if (doc) param.doc = doc;
      return param;
    });
  const fnType = parseCType(f.type.qualType);
  const returns = fnType.kind === 'function' ? fix(fnType.returns) : fix(fnType);
  const ptds = resolveIdentifier(ptdsMacros, name);
  const decl: FunctionDecl = {
    name,
    symbol: f.name,
    returns,
    params,
    variadic: fnType.kind === 'function' && !!fnType.variadic,
    header: basename(f.file),
  };
  if (ptds && ptds !== f.name && /_pt(ds|sz)$/.test(ptds)) decl.ptdsSymbol = ptds;
  const group = at.groupAt?.(f.file, f.line);
  if (group) decl.group = group;
  markDeprecation(decl, f, at.deprecationAt?.(f.file, f.line, [f.name, name, f.name.replace(/_v\d+$/, '')]));
  return decl;
}

/** Deprecation, from the declaration's attribute, a marker macro on it (with the release it names) or a
 *  Doxygen `\deprecated` command in its comment (the command only: its text is never read). */
function markDeprecation(decl: FunctionDecl, f: Node, mark: { version?: string } | undefined): void {
  const inner: Node[] = f.inner ?? [];
  const comment = inner.find((c) => c.kind === 'FullComment');
  const command = (comment?.inner ?? []).some((c: Node) => c.kind === 'BlockCommandComment' && c.name === 'deprecated');
  if (mark || command || inner.some((c) => c.kind === 'DeprecatedAttr')) decl.deprecated = true;
  if (mark?.version) decl.deprecatedIn = mark.version;
}

/** A name declared both plainly and behind a renaming macro (`cuFileDriverClose` before
 *  `#define cuFileDriverClose cuFileDriverClose_v2`): C code calls the macro's target, so do we. */
function preferMacroTargets(functions: FunctionDecl[]): FunctionDecl[] {
  const byName = new Map<string, FunctionDecl>();
  for (const f of functions) {
    const prev = byName.get(f.name);
    if (!prev || (prev.symbol === prev.name && f.symbol !== f.name)) byName.set(f.name, f);
  }
  return [...byName.values()];
}

/** cuGetProcAddress versions, where the AST carries the `PFN_*` typedefs (spec.procTables). */
function attachProcVersions(functions: FunctionDecl[], decls: Decls, tables: DeclTables, oldest: ReadonlyMap<string, number>): void {
  const resolveTypedef = new Map([...tables.typedefs.values()].map((td) => [td.name, td.type]));
  const procs = procTable(decls.typedefs, resolveTypedef);
  if (procs.size === 0) return;
  for (const f of functions) {
    const proc = procFor(f, procs, resolveTypedef);
    if (proc) f.proc = proc;
    const introduced = introducedVersion(f, oldest);
    if (introduced !== undefined) f.introduced = introduced;
  }
}

/** Types: everything declared in own headers plus whatever functions reach. */
function reachableTypes(functions: FunctionDecl[], tables: DeclTables, own: Set<string>, keep: string[] = []): Set<string> {
  const wanted = new Set<string>();
  const queue: string[] = [];
  const want = (t: CType) => {
    const refs: string[] = [];
    namedRefs(t, refs);
    for (const r of refs)
      if (!wanted.has(r)) {
        wanted.add(r);
        queue.push(r);
      }
  };
  functions.forEach((f) => {
    want(f.returns);
    f.params.forEach((p) => want(p.type));
  });
  for (const name of keep) want({ kind: 'named', name }); // the catalog's keepTypes
  for (const td of tables.typedefs.values()) if (own.has(td.header) && !td.name.startsWith('_')) want({ kind: 'named', name: td.name });
  for (const [name, r] of tables.records) if (own.has(r.header) && !name.startsWith('@anon:')) want({ kind: 'named', name });
  for (const [name, e] of tables.enums) if (own.has(e.header) && !name.startsWith('@anon:')) want({ kind: 'named', name });
  while (queue.length) {
    const name = queue.pop()!;
    const td = tables.typedefs.get(name);
    if (td) want(td.type);
    const r = tables.records.get(name);
    if (r) r.fields.forEach((f) => want(f.type));
  }
  return wanted;
}

/** The wanted records with clang's layout (sizes, offsets, bitfields), checked against the AST. */
function lowerRecords(wanted: Set<string>, tables: DeclTables): RecordDecl[] {
  const out: RecordDecl[] = [];
  for (const name of [...wanted].sort()) {
    const r = tables.records.get(name);
    if (!r) continue;
    const layout = tables.layoutOf.get(name);
    if (!layout) throw new Error(`no record layout from clang for ${name}`);
    if (layout.fields.length !== r.fields.length) throw new Error(`layout of ${name} has ${layout.fields.length} fields, AST has ${r.fields.length}`);
    const fields: Field[] = r.fields.map((f, i) => {
      const l = layout.fields[i];
      if (l.name && f.name && l.name !== f.name) throw new Error(`layout of ${name}: field ${i} is ${l.name}, AST says ${f.name}`);
      const field: Field = { name: f.name || `anon${i}`, type: f.type, offset: l.offset };
      if (l.bitWidth !== undefined) {
        field.bitWidth = l.bitWidth;
        field.bitOffset = l.bitOffset;
      }
      return field;
    });
    out.push({ name, kind: r.kind, size: layout.size, align: layout.align, fields, header: r.header });
  }
  return out;
}

/** The wanted enums, with their storage (size and signedness from their values). */
function lowerEnums(wanted: Set<string>, tables: DeclTables): EnumDecl[] {
  return [...wanted]
    .filter((n) => tables.enums.has(n))
    .sort()
    .map((name) => {
      const e = tables.enums.get(name)!;
      return {
        name,
        ...enumStorage(e.members.map((m) => m.value)),
        members: e.members.map((m) => ({ name: m.name, value: m.value.toString() })),
        header: e.header,
      };
    });
}

/** Typedefs of pointers to records the headers never complete: opaque handles. */
function opaqueHandles(typedefs: TypedefDecl[], tables: DeclTables): string[] {
  return typedefs
    .filter(
      (td) => td.type.kind === 'pointer' && td.type.to.kind === 'named' && /^(struct|union) /.test(td.type.to.name) && !tables.records.has(td.type.to.name),
    )
    .map((td) => td.name);
}

/** How macro evaluation classifies the type of a cast, from the module's typedefs and enums. */
function macroContext(macros: MacroTable, tables: DeclTables) {
  const { typedefs, enums } = tables;
  const resolvesToPointer = (name: string, depth = 0): boolean => {
    const td = typedefs.get(name);
    if (!td || depth > 10) return false;
    if (td.type.kind === 'pointer') return true;
    return td.type.kind === 'named' ? resolvesToPointer(td.type.name, depth + 1) : false;
  };
  const isIntegral = (name: string, depth = 0): boolean => {
    if (/^(unsigned |signed )?(char|short|int|long|long long)$|^unsigned$|^size_t$/.test(name)) return true;
    const td = typedefs.get(name);
    if (!td || depth > 10) return enums.has(`enum ${name}`);
    if (td.type.kind === 'builtin') return td.type.name !== 'void' && !/float|double/.test(td.type.name);
    if (td.type.kind === 'named') return td.type.name.startsWith('enum ') || isIntegral(td.type.name, depth + 1);
    return false;
  };
  return {
    table: macros,
    castKind: (t: string): 'pointer' | 'int' | undefined => (resolvesToPointer(t) ? 'pointer' : isIntegral(t) ? 'int' : undefined),
  };
}

/** Constants from macros with this module's prefixes (not aliases, not enum members). */
function macroConstants(spec: ModuleSpec, ctx: EvalContext, enums: EnumDecl[]): Constant[] {
  const constants: Constant[] = [];
  const enumMembers = new Set(enums.flatMap((e) => e.members.map((m) => m.name)));
  for (const name of [...ctx.table.objects.keys()].sort()) {
    if (!spec.macroPrefixes.some((p) => name.startsWith(p)) || name.startsWith('__') || enumMembers.has(name)) continue;
    if (resolveIdentifier(ctx.table, name) !== undefined) continue; // aliases, not constants
    const c = macroConstant(ctx, name);
    if (c) constants.push(c);
  }
  return constants;
}

/** The headers' version: the module's version macro, else the CUDA release as CUDA_VERSION. */
function headerVersion(input: LowerInput, ctx: EvalContext, constants: Constant[]): number {
  const { spec } = input;
  if (spec.versionMacro) {
    const version = constants.find((c) => c.name === spec.versionMacro) ?? macroConstant(ctx, spec.versionMacro);
    if (!version) throw new Error(`${spec.versionMacro} not found: are these the ${spec.title} headers?`);
    return Number(version.value);
  }
  const [major, minor] = input.cudaVersion.split('.').map(Number);
  return major * 1000 + minor * 10;
}

/** Cue words a parameter's documentation may carry (a fixed vocabulary: the prose itself is dropped). */
const CUES: [cue: ParamDoc['cues'][number], test: RegExp][] = [
  [
    'returns',
    /^\W*(returned|returns?\b|return(s)? the|location (to|where|of the (returned|output))|pointer to (the )?(returned|location|output|storage)|output\b|on (return|output)|upon return|will (be|contain|hold) (set|written|filled|returned)|filled (in )?with|written with|\(output\))/i,
  ],
  ['returns', /\((output|out)\)/i],
  ['inout', /\((input\/output|in\/out|inout)\)|\binput\/output\b/i],
  ['input', /\((input|in)\)/i],
  ['array', /^\W*(an? |the )?(\w+[- ])?(array|list|vector) of\b|\barray of\b/i],
  ['count', /^\W*(the )?(number|count) of\b|\bsize of (the )?(array|list)\b|\bnumber of (elements|entries|bytes)\b/i],
  ['optional', /\b(may|can|could) be (null|NULL)\b|\boptional(ly)?\b|\bif (not )?null\b|\bor NULL\b/i],
];

/** The documented facts of each parameter of a function: explicit `[in]`/`[out]`/`[in,out]`, cue words. */
function docFacts(f: Node): Map<string, ParamDoc> {
  const out = new Map<string, ParamDoc>();
  const comment = (f.inner ?? []).find((c: Node) => c.kind === 'FullComment');
  if (!comment) return out;
  const text = (n: Node): string => (typeof n.text === 'string' ? n.text : '') + (n.inner ?? []).map(text).join('');
  for (const c of comment.inner ?? []) {
    if (c.kind !== 'ParamCommandComment' || typeof c.param !== 'string') continue;
    const doc: ParamDoc = { cues: [] };
    if (c.explicit && (c.direction === 'in' || c.direction === 'out' || c.direction === 'in,out')) doc.dir = c.direction === 'in,out' ? 'inout' : c.direction;
    const words = text(c).replace(/\s+/g, ' ').trim();
    for (const [cue, test] of CUES) if (test.test(words) && !doc.cues.includes(cue)) doc.cues.push(cue);
    if (doc.dir || doc.cues.length) out.set(c.param, doc);
  }
  return out;
}
