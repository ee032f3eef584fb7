// Lowers clang's JSON AST (+ record layouts + macros) of one module to the IR. Pure: no I/O.
// Doc comments are read only to classify parameters (`docFacts`): the IR keeps a direction and a few
// cue words from a fixed vocabulary, never NVIDIA's prose.
import { basename } from 'node:path';
import type { CType, Constant, EnumDecl, Field, FunctionDecl, ModuleIR, ParamDoc, RecordDecl, TypedefDecl } from '../ir/schema';
import type { ModuleSpec } from '../modules';
import { anonKey, parseCType } from './ctype';
import type { RecordLayout } from './layout';
import { macroConstant, resolveIdentifier, type MacroTable } from './macros';
import { procFor, procTable } from './proc';

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

function walkDecls(ast: Node) {
  const tracker = new LocationTracker();
  const functions: (Node & { file: string })[] = [];
  const typedefs: { name: string; type: CType; file: string; owned?: string }[] = [];
  // clang ids of anonymous tag declarations: `typedef enum { … } X` prints its type as `enum X`
  const anonById = new Map<string, string>();
  const records: RawRecord[] = [];
  const incomplete = new Set<string>();
  const enums: RawEnum[] = [];

  const recordKey = (node: Node, where: { file: string; line: number; col: number }) =>
    node.name ? `${node.tagUsed} ${node.name}` : anonKey(`${where.file}:${where.line}:${where.col}`);

  const visitRecord = (node: Node, where: { file: string; line: number; col: number }): void => {
    const key = recordKey(node, where);
    if (!node.name && node.id) anonById.set(node.id, key);
    if (!node.completeDefinition) {
      incomplete.add(key);
      tracker.visit(node.inner ?? []);
      return;
    }
    const fields: RawRecord['fields'] = [];
    for (const child of node.inner ?? []) {
      if (child.kind === 'RecordDecl') {
        visitRecord(child, tracker.locate(child));
      } else if (child.kind === 'FieldDecl') {
        tracker.locate(child);
        tracker.visit(child.inner ?? []);
        const bitWidth = child.isBitfield ? bitWidthOf(child) : undefined;
        fields.push({ name: child.name ?? '', type: parseCType(child.type.qualType), ...(bitWidth !== undefined ? { bitWidth } : {}) });
      } else {
        tracker.visit(child);
      }
    }
    records.push({ key, kind: node.tagUsed, header: basename(where.file), fields });
  };

  const visitEnum = (node: Node, where: { file: string; line: number; col: number }): void => {
    const key = node.name ? `enum ${node.name}` : anonKey(`${where.file}:${where.line}:${where.col}`);
    if (!node.name && node.id) anonById.set(node.id, key);
    const members: RawEnum['members'] = [];
    let next = 0n;
    for (const c of node.inner ?? []) {
      if (c.kind !== 'EnumConstantDecl') {
        tracker.visit(c);
        continue;
      }
      tracker.locate(c);
      const value = findConstantValue(c);
      tracker.visit(c.inner ?? []);
      const v = value !== undefined ? BigInt(value) : next;
      members.push({ name: c.name, value: v });
      next = v + 1n;
    }
    if (members.length) enums.push({ key, header: basename(where.file), members });
  };

  for (const node of ast.inner ?? []) {
    const where = tracker.locate(node);
    switch (node.kind) {
      case 'FunctionDecl':
        tracker.visit(node.inner ?? []);
        functions.push({ ...node, file: where.file });
        break;
      case 'TypedefDecl':
        tracker.visit(node.inner ?? []);
        if (!node.isImplicit) {
          const ownedId: string | undefined = node.inner?.[0]?.ownedTagDecl?.id;
          const owned = ownedId !== undefined ? anonById.get(ownedId) : undefined;
          typedefs.push({ name: node.name, type: parseCType(node.type.qualType), file: where.file, ...(owned ? { owned } : {}) });
        }
        break;
      case 'RecordDecl':
        visitRecord(node, where);
        break;
      case 'EnumDecl':
        visitEnum(node, where);
        break;
      default:
        tracker.visit(node.inner ?? []);
    }
  }
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

export function lowerModule(input: LowerInput): ModuleIR {
  const { spec, ast, layouts, macros, ptdsMacros } = input;
  const decls = walkDecls(ast);
  const own = new Set(spec.ownHeaders.map((h) => basename(h)));
  const ownsName = (name: string) => spec.prefixes.some((p) => name.startsWith(p));

  // Anonymous records and enums take the name of their typedef, or `Outer_field`.
  const rename = new Map<string, string>();
  const typedefByAnon = new Map<string, string>();
  for (const td of decls.typedefs) {
    if (td.type.kind === 'named' && td.type.name.startsWith('@anon:') && !typedefByAnon.has(td.type.name)) typedefByAnon.set(td.type.name, td.name);
    // `typedef enum { … } X`: clang spells the type `enum X`; the declaration is anonymous
    if (td.owned && !typedefByAnon.has(td.owned) && td.type.kind === 'named' && td.type.name.endsWith(` ${td.name}`)) typedefByAnon.set(td.owned, td.name);
  }
  const recordKind = new Map(decls.records.map((r) => [r.key, r.kind]));
  for (const r of decls.records) {
    if (r.key.startsWith('@anon:') && typedefByAnon.has(r.key)) rename.set(r.key, `${r.kind} ${typedefByAnon.get(r.key)}`);
  }
  for (const e of decls.enums) {
    if (e.key.startsWith('@anon:') && typedefByAnon.has(e.key)) rename.set(e.key, `enum ${typedefByAnon.get(e.key)}`);
  }
  // Nested anonymous records: named after their parent and field, resolved outside-in.
  for (let changed = true; changed; ) {
    changed = false;
    for (const r of decls.records) {
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

  // Functions: declared in this module's headers, not inline. A function belongs to the module when
  // its user-facing name has one of the module's prefixes (the exported symbol may not: nvJitLink
  // exports `__nvJitLinkCreate_13_0` behind an inline `nvJitLinkCreate`).
  const seen = new Set<string>();
  const inOwn = (f: Node) => own.has(basename(f.file));
  const hasBody = (f: Node) => (f.inner ?? []).some((c: Node) => c.kind === 'CompoundStmt');
  const candidates = decls.functions.filter((f) => {
    if (!inOwn(f) || f.inline || f.storageClass === 'static' || hasBody(f)) return false;
    if (seen.has(f.name)) return false;
    seen.add(f.name);
    return true;
  });
  const declared = new Set(candidates.map((f) => f.name));
  // A documented API name is one with the module's prefix; `__x` and other internal spellings are not.
  const isApiName = (n: string) => ownsName(n) && !n.startsWith('_');

  // Aliases from macros (`#define cuMemAlloc cuMemAlloc_v2`) and from inline forwarding wrappers
  // (`static inline R f(a, b) { return __f_13_0(a, b); }`): user-facing names for declared functions.
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
    if (target && declared.has(target) && !isApiName(target)) addAlias(target, f.name);
  }
  const userName = (symbol: string): { name: string; others: string[] } => {
    const names = aliasTargets.get(symbol) ?? [];
    // `cuMemAlloc` → `cuMemAlloc_v2`: the versionless name is the user-facing one
    const versionless = names.find((n) => symbol.replace(/_v\d+$/, '') === n);
    // `nvJitLinkCreate` → `__nvJitLinkCreate_13_0`: an internal symbol takes its API alias's name
    const api = isApiName(symbol) ? undefined : names.find((n) => isApiName(n));
    const name = versionless ?? api ?? symbol;
    return { name, others: names.filter((n) => n !== name) };
  };
  const excluded = (n: string) => (spec.excludePrefixes ?? []).some((p) => n.startsWith(p));
  const fnNodes = candidates.filter((f) => {
    const n = userName(f.name).name;
    return isApiName(n) && !excluded(n);
  });

  const aliases: Record<string, string> = {};
  const functions: FunctionDecl[] = fnNodes.map((f) => {
    const { name, others } = userName(f.name);
    const docs = docFacts(f);
    for (const n of others) if (isApiName(n) || ownsName(n)) aliases[n] = name;
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
    return decl;
  });
  // A name declared both plainly and behind a renaming macro (`cuFileDriverClose` before
  // `#define cuFileDriverClose cuFileDriverClose_v2`): C code calls the macro's target, so do we.
  const byName = new Map<string, FunctionDecl>();
  for (const f of functions) {
    const prev = byName.get(f.name);
    if (!prev || (prev.symbol === prev.name && f.symbol !== f.name)) byName.set(f.name, f);
  }
  functions.splice(0, functions.length, ...byName.values());
  // cuGetProcAddress versions, where the AST carries the `PFN_*` typedefs (spec.procTables).
  const resolveTypedef = new Map([...typedefs.values()].map((td) => [td.name, td.type]));
  const procs = procTable(decls.typedefs, resolveTypedef);
  if (procs.size > 0) {
    for (const f of functions) {
      const proc = procFor(f, procs, resolveTypedef);
      if (proc) f.proc = proc;
    }
  }
  functions.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  // Types: everything declared in own headers plus whatever functions reach.
  const wanted = new Set<string>();
  const queue: string[] = [];
  const want = (t: CType) => {
    const refs: string[] = [];
    namedRefs(t, refs);
    for (const r of refs) if (!wanted.has(r)) {
      wanted.add(r);
      queue.push(r);
    }
  };
  functions.forEach((f) => {
    want(f.returns);
    f.params.forEach((p) => want(p.type));
  });
  for (const td of typedefs.values()) if (own.has(td.header) && !td.name.startsWith('_')) want({ kind: 'named', name: td.name });
  for (const [name, r] of records) if (own.has(r.header) && !name.startsWith('@anon:')) want({ kind: 'named', name });
  for (const [name, e] of enums) if (own.has(e.header) && !name.startsWith('@anon:')) want({ kind: 'named', name });
  while (queue.length) {
    const name = queue.pop()!;
    const td = typedefs.get(name);
    if (td) want(td.type);
    const r = records.get(name);
    if (r) r.fields.forEach((f) => want(f.type));
  }

  const irRecords: RecordDecl[] = [];
  for (const name of [...wanted].sort()) {
    const r = records.get(name);
    if (!r) continue;
    const layout = layoutOf.get(name);
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
    irRecords.push({ name, kind: r.kind, size: layout.size, align: layout.align, fields, header: r.header });
  }
  const irEnums: EnumDecl[] = [...wanted]
    .filter((n) => enums.has(n))
    .sort()
    .map((name) => {
      const e = enums.get(name)!;
      return {
        name,
        ...enumStorage(e.members.map((m) => m.value)),
        members: e.members.map((m) => ({ name: m.name, value: m.value.toString() })),
        header: e.header,
      };
    });
  const irTypedefs: TypedefDecl[] = [...wanted].filter((n) => typedefs.has(n)).sort().map((n) => typedefs.get(n)!);
  const completeRecords = new Set(records.keys());
  const opaque = irTypedefs
    .filter((td) => td.type.kind === 'pointer' && td.type.to.kind === 'named' && /^(struct|union) /.test(td.type.to.name) && !completeRecords.has(td.type.to.name))
    .map((td) => td.name);

  // Constants from macros with this module's prefixes.
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
  const ctx = {
    table: macros,
    castKind: (t: string): 'pointer' | 'int' | undefined => (resolvesToPointer(t) ? 'pointer' : isIntegral(t) ? 'int' : undefined),
  };
  const constants: Constant[] = [];
  const enumMembers = new Set(irEnums.flatMap((e) => e.members.map((m) => m.name)));
  for (const name of [...macros.objects.keys()].sort()) {
    if (!spec.macroPrefixes.some((p) => name.startsWith(p)) || name.startsWith('__') || enumMembers.has(name)) continue;
    if (resolveIdentifier(macros, name) !== undefined) continue; // aliases, not constants
    const c = macroConstant(ctx, name);
    if (c) constants.push(c);
  }
  let versionNumber: number;
  if (spec.versionMacro) {
    const version = constants.find((c) => c.name === spec.versionMacro) ?? macroConstant(ctx, spec.versionMacro);
    if (!version) throw new Error(`${spec.versionMacro} not found: are these the ${spec.title} headers?`);
    versionNumber = Number(version.value);
  } else {
    const [major, minor] = input.cudaVersion.split('.').map(Number);
    versionNumber = major * 1000 + minor * 10;
  }

  return {
    irVersion: 1,
    module: spec.name,
    cudaVersion: input.cudaVersion,
    versionNumber,
    functions,
    enums: irEnums,
    records: irRecords,
    typedefs: irTypedefs,
    opaque,
    constants,
    aliases: Object.fromEntries(Object.entries(aliases).sort(([a], [b]) => (a < b ? -1 : 1))),
  };
}

/** Cue words a parameter's documentation may carry (a fixed vocabulary: the prose itself is dropped). */
const CUES: [cue: ParamDoc['cues'][number], test: RegExp][] = [
  ['returns', /^\W*(returned|returns?\b|return(s)? the|location (to|where|of the (returned|output))|pointer to (the )?(returned|location|output|storage)|output\b|on (return|output)|upon return|will (be|contain|hold) (set|written|filled|returned)|filled (in )?with|written with|\(output\))/i],
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
