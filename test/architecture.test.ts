// The shape of the code base, as rules that fail with the offending files named:
//  - no run-time import cycle among support/, src/ and generator/;
//  - layers: support/ is the bottom (generated code imports it), src/ the objects layer over it, generator/
//    a build tool beside both: support/ imports neither, src/ does not import generator/, generator/ not src/;
//  - generator stages run parse → ir → semantics → emit: an earlier stage never imports a later one;
//  - sizes: no hand-written file over 800 lines, no function over 80, but for the exceptions listed below;
//    test/ is held to the file size alone.
// The import graph comes from dependency-cruiser (test/helpers/import-graph.mjs), the sizes from the
// TypeScript compiler's parser.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';

const ROOT = join(__dirname, '..');
const GRAPH_FOLDERS = ['support', 'src', 'generator'];
const SIZE_FOLDERS = ['support', 'src', 'generator', 'scripts', 'bin', 'bench', 'examples'];
/** Held to MAX_FILE_LINES but not MAX_FUNCTION_LINES (a test's describe body may be long). */
const FILE_SIZE_ONLY_FOLDERS = ['test'];
/** Folders inside those that hold no hand-written code: build output and emitted fixtures. */
const NOT_HAND_WRITTEN = ['bench/.build', 'test/fixtures/sample/golden', 'test/fuzz/fixture/generated'];
const MAX_FILE_LINES = 800;
const MAX_FUNCTION_LINES = 80;

/**
 * Functions allowed over MAX_FUNCTION_LINES, as `path:name`, each with its reason. A stale entry (the
 * function is gone or has become short) fails the size test too, so the list stays true.
 */
const LONG_FUNCTION_EXCEPTIONS: Record<string, string> = {
  'bench/gpu-passes.ts:rawPasses':
    'self-contained on purpose: fresh() re-evaluates its source text for koffi and for the raw layer (each gets its own inline caches), so it can call no helper outside itself',
};

/** Files allowed over MAX_FILE_LINES, each with its reason (stale entries fail as above). */
const LONG_FILE_EXCEPTIONS: Record<string, string> = {};

interface Edge {
  from: string;
  to: string;
  /** The import's text as written (`./nodeffi`). */
  specifier: string;
  /** dependency-cruiser's dependency types: `import`, `require`, `type-only`, `pre-compilation-only`… */
  types: string[];
}

function importGraph(): Edge[] {
  const r = spawnSync(process.execPath, [join(__dirname, 'helpers', 'import-graph.mjs'), ...GRAPH_FOLDERS], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) throw new Error(`import-graph.mjs failed (${r.status}): ${r.stderr}`);
  const modules = JSON.parse(r.stdout) as { source: string; dependencies: { resolved: string; module: string; dependencyTypes: string[] }[] }[];
  return modules.flatMap((m) => m.dependencies.map((d) => ({ from: m.source, to: d.resolved, specifier: d.module, types: d.dependencyTypes })));
}

/**
 * Imports that vanish from the compiled JavaScript (`import type`, imports of types alone): they order
 * nothing at load time, so they cannot make a module see another half-initialized, and they may
 * point anywhere a type is needed, cycles included.
 */
function isTypeOnly(e: Edge): boolean {
  return e.types.includes('pre-compilation-only');
}

const sourceCache = new Map<string, ts.SourceFile>();
function parse(path: string): ts.SourceFile {
  let sf = sourceCache.get(path);
  if (!sf) {
    sf = ts.createSourceFile(path, readFileSync(join(ROOT, path), 'utf8'), ts.ScriptTarget.Latest, true);
    sourceCache.set(path, sf);
  }
  return sf;
}

function insideFunction(node: ts.Node): boolean {
  for (let p = node.parent; p; p = p.parent) if (ts.isFunctionLike(p)) return true;
  return false;
}

/**
 * A lazy import: every `require('<specifier>')` or `import('<specifier>')` of the edge sits inside a
 * function, and no static import names it. It runs when the function is first called, after both
 * files have finished loading, so a cycle through it cannot expose a half-initialized module; such
 * requires exist on purpose (they keep a module off the import-time path: node:ffi, the device
 * property table, the doctor's probe).
 */
function isLazy(e: Edge): boolean {
  if (e.types.includes('import-equals') || !staticImportsAreTypeOnly(parse(e.from), e.specifier)) return false;
  const calls: ts.CallExpression[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) && n.arguments.length === 1 && ts.isStringLiteralLike(n.arguments[0]) && n.arguments[0].text === e.specifier) {
      const callee = n.expression;
      if ((ts.isIdentifier(callee) && callee.text === 'require') || callee.kind === ts.SyntaxKind.ImportKeyword) calls.push(n);
    }
    ts.forEachChild(n, visit);
  };
  visit(parse(e.from));
  return calls.length > 0 && calls.every(insideFunction);
}

/**
 * Whether every static `import`/`export … from` of `specifier` in `sf` is type-only (`import type`, or
 * named imports each marked `type`): such lines vanish from the JavaScript, so a file may name the
 * types of a module it requires lazily.
 */
function staticImportsAreTypeOnly(sf: ts.SourceFile, specifier: string): boolean {
  return sf.statements.every((st) => {
    if (!(ts.isImportDeclaration(st) || ts.isExportDeclaration(st))) return true;
    if (!st.moduleSpecifier || !ts.isStringLiteral(st.moduleSpecifier) || st.moduleSpecifier.text !== specifier) return true;
    if (ts.isExportDeclaration(st)) return st.isTypeOnly;
    const clause = st.importClause;
    if (!clause || clause.name) return clause?.isTypeOnly ?? false;
    if (clause.isTypeOnly) return true;
    const bindings = clause.namedBindings;
    return bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.every((el) => el.isTypeOnly);
  });
}

/** Strongly connected components with more than one file, or a file importing itself (Tarjan). */
function cycles(edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (next.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of next.keys()) if (!index.has(v)) connect(v);
  return found;
}

/** One concrete loop through a component, for the failure message: a → b → … → a. */
function loopThrough(component: string[], edges: Edge[]): string {
  const members = new Set(component);
  const start = component[0];
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const e of edges) {
      if (e.from !== v || !members.has(e.to)) continue;
      if (e.to === start) {
        const path = [start];
        for (let u: string | undefined = v; u !== undefined && u !== start; u = cameFrom.get(u)) path.splice(1, 0, u);
        return [...path, start].join(' → ');
      }
      if (!cameFrom.has(e.to)) {
        cameFrom.set(e.to, v);
        queue.push(e.to);
      }
    }
  }
  return component.join(', ');
}

/** Arrows that must not exist: from files under `from` to files under any of `to`. */
const FORBIDDEN: { rule: string; from: string; to: string[] }[] = [
  { rule: 'support/ is the bottom layer', from: 'support/', to: ['src/', 'generator/'] },
  { rule: 'src/ (the objects layer) does not use the generator', from: 'src/', to: ['generator/'] },
  { rule: 'the generator does not use the objects layer', from: 'generator/', to: ['src/'] },
  { rule: 'parse runs before semantics and emit', from: 'generator/parse/', to: ['generator/semantics/', 'generator/emit/'] },
  { rule: 'the IR is read by semantics and emit, never the reverse', from: 'generator/ir/', to: ['generator/semantics/', 'generator/emit/'] },
  { rule: 'semantics runs before emit', from: 'generator/semantics/', to: ['generator/emit/'] },
];

function forbiddenArrows(edges: Edge[]): string[] {
  const broken = edges.flatMap((e) =>
    FORBIDDEN.filter((f) => e.from.startsWith(f.from) && f.to.some((t) => e.to.startsWith(t))).map((f) => `  ${e.from} → ${e.to}   (${f.rule})`),
  );
  return [...new Set(broken)];
}

describe('architecture: imports', () => {
  let edges: Edge[];
  beforeAll(() => {
    edges = importGraph();
  }, 180_000);

  it('sees the import graph (a sanity floor, so an empty graph cannot pass)', () => {
    expect(edges.length).toBeGreaterThan(100);
    expect(edges.some((e) => e.from.startsWith('src/') && e.to.startsWith('support/'))).toBe(true);
  });

  it('has no run-time import cycle in support/, src/ and generator/ (type-only and lazy imports aside)', () => {
    const eager = edges.filter((e) => !isTypeOnly(e) && !isLazy(e));
    const loops = cycles(eager).map((c) => `  ${loopThrough(c, eager)}   (files: ${c.join(', ')})`);
    if (loops.length > 0) throw new Error(`import cycles (run-time imports only):\n${loops.join('\n')}`);
  });

  it('keeps the layers and the generator stages apart (type-only imports included)', () => {
    const broken = forbiddenArrows(edges);
    if (broken.length > 0) throw new Error(`forbidden imports:\n${broken.join('\n')}`);
  });

  it('the checks themselves find a cycle and a forbidden arrow (synthetic graph)', () => {
    const edge = (from: string, to: string): Edge => ({ from, to, specifier: to, types: ['local', 'import'] });
    const synthetic = [edge('src/a.ts', 'src/b.ts'), edge('src/b.ts', 'src/a.ts'), edge('src/c.ts', 'src/c.ts'), edge('support/x.ts', 'src/a.ts')];
    expect(cycles(synthetic)).toEqual([['src/a.ts', 'src/b.ts'], ['src/c.ts']]);
    expect(loopThrough(['src/a.ts', 'src/b.ts'], synthetic)).toBe('src/a.ts → src/b.ts → src/a.ts');
    expect(forbiddenArrows(synthetic)).toEqual(['  support/x.ts → src/a.ts   (support/ is the bottom layer)']);
  });
});

function handWrittenFiles(folder: string): string[] {
  const abs = join(ROOT, folder);
  return readdirSync(abs).flatMap((name) => {
    const path = join(abs, name);
    if (statSync(path).isDirectory())
      return name === 'node_modules' || NOT_HAND_WRITTEN.includes(relative(ROOT, path)) ? [] : handWrittenFiles(relative(ROOT, path));
    return /\.(ts|js|mjs|cjs)$/.test(name) && !name.endsWith('.d.ts') ? [relative(ROOT, path)] : [];
  });
}

function functionName(node: ts.SignatureDeclaration, sf: ts.SourceFile): string {
  if (node.name) return node.name.getText(sf);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const holder = node.parent;
  if ((ts.isVariableDeclaration(holder) || ts.isPropertyAssignment(holder) || ts.isPropertyDeclaration(holder)) && holder.name) return holder.name.getText(sf);
  return `<${ts.SyntaxKind[node.kind]} at line ${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}>`;
}

/** Every function, method, accessor and arrow function with a body, with its length in lines. */
function functionLengths(path: string): { key: string; lines: number }[] {
  const sf = parse(path);
  const out: { key: string; lines: number }[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isFunctionLike(n) && 'body' in n && n.body) {
      const first = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(n.end).line;
      out.push({ key: `${path}:${functionName(n, sf)}`, lines: last - first + 1 });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

describe('architecture: sizes', () => {
  const files = SIZE_FOLDERS.flatMap(handWrittenFiles);

  it(`has no hand-written file over ${MAX_FILE_LINES} lines (generated/ aside)`, () => {
    const lengths = new Map(
      [...files, ...FILE_SIZE_ONLY_FOLDERS.flatMap(handWrittenFiles)].map((f) => [f, readFileSync(join(ROOT, f), 'utf8').split('\n').length]),
    );
    const over = [...lengths].filter(([f, n]) => n > MAX_FILE_LINES && !(f in LONG_FILE_EXCEPTIONS)).map(([f, n]) => `  ${f}: ${n} lines`);
    const stale = Object.keys(LONG_FILE_EXCEPTIONS)
      .filter((f) => (lengths.get(f) ?? 0) <= MAX_FILE_LINES)
      .map((f) => `  ${f} (no longer over; remove it from LONG_FILE_EXCEPTIONS)`);
    if (over.length + stale.length > 0) throw new Error(`files over ${MAX_FILE_LINES} lines:\n${[...over, ...stale].join('\n')}`);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    const all = files.flatMap(functionLengths);
    const over = all.filter((f) => f.lines > MAX_FUNCTION_LINES && !(f.key in LONG_FUNCTION_EXCEPTIONS)).map((f) => `  ${f.key}: ${f.lines} lines`);
    const stale = Object.keys(LONG_FUNCTION_EXCEPTIONS)
      .filter((k) => !all.some((f) => f.key === k && f.lines > MAX_FUNCTION_LINES))
      .map((k) => `  ${k} (gone or no longer over; remove it from LONG_FUNCTION_EXCEPTIONS)`);
    if (over.length + stale.length > 0) throw new Error(`functions over ${MAX_FUNCTION_LINES} lines:\n${[...over, ...stale].join('\n')}`);
  });
});
