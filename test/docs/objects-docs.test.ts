// The objects layer's reference (issue 44, point D): every parameter of the public classes and functions
// that cuda-ts/objects (src/index.ts) exports has `@param` text, each core class carries an `@example`,
// and every example type-checks as a user's file (`import … from 'cuda-ts/objects'`, mapped onto
// src/index.ts as test/helpers/ts-blocks.ts maps it for the guides). One ts-morph program does both: the
// walk needs its checker to follow the door's re-exports, and the examples are checked in it.
import { join, relative } from 'node:path';
import { Node, Project, ts, type SourceFile } from 'ts-morph';
import { typescriptBlocks, userCompilerOptions, usesTopLevelAwait } from '../helpers/ts-blocks';

const ROOT = join(__dirname, '..', '..');

/**
 * The files whose exports are held to the rule, relative to the repository root: `dir/` takes the whole
 * folder, `dir/*.ts` its flat files, anything else one file. Not yet held: src/distributed/store-wire.ts
 * (StoreError, StoreTimeoutError and storeToken pass the door from there).
 */
const SCOPE = [
  'src/*.ts',
  'src/memory/',
  'src/graph/',
  'src/math/',
  'src/await/',
  'src/distributed/communicator.ts',
  'src/distributed/communicator-options.ts',
  'src/distributed/rendezvous.ts',
  'src/distributed/store.ts',
  'src/distributed/store-server.ts',
  'src/distributed/launcher.ts',
  'src/distributed/index.ts',
];
const NOT_IN_SCOPE = ['src/index.ts'];

/** The classes (and launch(), pipeline(), openStore()) a user meets first: each carries an `@example`. */
const CORE = [
  'Device',
  'Context',
  'Stream',
  'Event',
  'DeviceBuffer',
  'PinnedHostBuffer',
  'ManagedBuffer',
  'MemoryPool',
  'Program',
  'Module',
  'Kernel',
  'Linker',
  'LaunchConfig',
  'launch',
  'Graph',
  'GraphExec',
  'Communicator',
  'Blas',
  'Matmul',
  'FftPlan',
  'RandomGenerator',
  'SparseMatrix',
  'Sparse',
  'DenseSolver',
  'Cudnn',
  'pipeline',
  'TcpStore',
  'openStore',
];

function inScope(file: string): boolean {
  const rel = relative(ROOT, file);
  if (NOT_IN_SCOPE.includes(rel)) return false;
  return SCOPE.some((s) =>
    s.endsWith('/*.ts')
      ? rel.startsWith(s.slice(0, -4)) && !rel.slice(s.length - 4).includes('/') && rel.endsWith('.ts')
      : s.endsWith('/')
        ? rel.startsWith(s)
        : rel === s,
  );
}

/** The options a user's file is checked under, cuda-ts/objects mapped to the sources. */
// (ts-morph bundles its own TypeScript: the same options under its types)
const OPTIONS = userCompilerOptions({ 'cuda-ts/objects': [join(ROOT, 'src', 'index.ts')] }) as unknown as ts.CompilerOptions;

/** A function-like thing of the public surface: where it is, its parameters, the node its doc sits on. */
interface Callable {
  where: string;
  node: ts.SignatureDeclaration;
}

const hidden = (node: ts.Node): boolean => {
  const mods = ts.canHaveModifiers(node) ? (ts.getModifiers(node) ?? []) : [];
  if (mods.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword)) return true;
  const name = (node as ts.NamedDeclaration).name;
  return (name !== undefined && ts.isPrivateIdentifier(name)) || ts.getJSDocTags(node).some((t) => t.tagName.text === 'internal');
};

/** The signatures a user sees: the overloads when there are some, else the declaration itself. */
function signatures<T extends ts.SignatureDeclaration & { body?: ts.Node }>(all: readonly T[]): T[] {
  const overloads = all.filter((d) => d.body === undefined);
  return overloads.length > 0 ? overloads : [...all];
}

function classCallables(name: string, cls: ts.ClassDeclaration): Callable[] {
  const out: Callable[] = [];
  const ctors = signatures(cls.members.filter(ts.isConstructorDeclaration)).filter((c) => !hidden(c));
  for (const c of ctors) out.push({ where: `${name} constructor`, node: c });
  const methods = new Map<string, (ts.MethodDeclaration | ts.SetAccessorDeclaration)[]>();
  for (const m of cls.members) {
    if (!(ts.isMethodDeclaration(m) || ts.isSetAccessorDeclaration(m)) || hidden(m) || !(ts.isIdentifier(m.name) || ts.isStringLiteral(m.name))) continue;
    const isStatic = ts.getModifiers(m)?.some((x) => x.kind === ts.SyntaxKind.StaticKeyword) ?? false;
    const key = `${name}${isStatic ? '.' : '#'}${m.name.text}`;
    methods.set(key, [...(methods.get(key) ?? []), m]);
  }
  for (const [key, decls] of methods) for (const d of signatures(decls)) out.push({ where: key, node: d });
  return out;
}

/**
 * The public callables of one exported declaration: a class's members, an interface's methods (`Kernel`
 * merges one to type launch()), a function, a const holding functions.
 */
function callables(name: string, decl: ts.Node): Callable[] {
  if (ts.isClassDeclaration(decl)) return hidden(decl) ? [] : classCallables(name, decl);
  if (ts.isInterfaceDeclaration(decl)) {
    return decl.members
      .filter((m): m is ts.MethodSignature => ts.isMethodSignature(m) && ts.isIdentifier(m.name) && !hidden(m))
      .map((m) => ({ where: `${name}#${m.name.getText()}`, node: m }));
  }
  if (ts.isFunctionDeclaration(decl)) {
    const siblings: readonly ts.Statement[] = ts.isSourceFile(decl.parent) || ts.isModuleBlock(decl.parent) ? decl.parent.statements : [];
    const overloaded = siblings.some((s) => ts.isFunctionDeclaration(s) && s !== decl && s.name?.text === decl.name?.text && s.body === undefined);
    return decl.body === undefined || !overloaded ? [{ where: name, node: decl }] : [];
  }
  if (!ts.isVariableDeclaration(decl) || !decl.initializer) return [];
  const init = decl.initializer;
  if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) return [{ where: name, node: init }];
  if (!ts.isObjectLiteralExpression(init)) return [];
  return init.properties.flatMap((p): Callable[] => {
    if (ts.isMethodDeclaration(p)) return [{ where: `${name}.${p.name.getText()}`, node: p }];
    if (ts.isPropertyAssignment(p) && (ts.isArrowFunction(p.initializer) || ts.isFunctionExpression(p.initializer)))
      return [{ where: `${name}.${p.name.getText()}`, node: p.initializer }];
    return [];
  });
}

/** The parameters of `c` with no `@param` text (a destructured one is matched by position). */
function undocumented(c: Callable): string[] {
  const host = ts.isArrowFunction(c.node) || ts.isFunctionExpression(c.node) ? c.node.parent : c.node;
  const tags: ts.JSDocParameterTag[] = [];
  for (const d of ts.getJSDocCommentsAndTags(host)) {
    if (ts.isJSDoc(d)) for (const t of d.tags ?? []) if (ts.isJSDocParameterTag(t)) tags.push(t);
  }
  return c.node.parameters.flatMap((p, i) => {
    const name = ts.isIdentifier(p.name) ? p.name.text : undefined;
    const tag = name !== undefined ? tags.find((t) => t.name.getText() === name) : tags[i];
    return (ts.getTextOfJSDocComment(tag?.comment) ?? '').replace(/^[\s-]+/, '').trim() === '' ? [`${c.where}(${name ?? `#${i}`})`] : [];
  });
}

/** The fenced TypeScript blocks of a declaration's `@example` tags, read from the comment's own text. */
function examples(decl: ts.Node): string[] {
  const docs = ts.getJSDocCommentsAndTags(decl).filter(ts.isJSDoc);
  return docs.flatMap((d) => {
    const lines = d
      .getText()
      .replace(/^\/\*\*|\*\/$/g, '')
      .split('\n')
      .map((l) => l.replace(/^\s*\* ?/, ''));
    const out: string[] = [];
    let inExample = false;
    let fenced = false;
    let section: string[] = [];
    const flush = () => {
      if (inExample) out.push(...typescriptBlocks(section.join('\n')).map((b) => b.code));
      section = [];
    };
    for (const line of lines) {
      if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
      const tag = fenced ? null : /^\s*@(\w+)/.exec(line);
      if (tag) {
        flush();
        inExample = tag[1] === 'example';
      } else section.push(line);
    }
    flush();
    return out;
  });
}

interface Surface {
  params: number;
  missing: string[];
  /** Every example by its exported name (several when one declaration has several). */
  examples: Map<string, string[]>;
  exported: Set<string>;
  project: Project;
}

function walk(): Surface {
  const project = new Project({ compilerOptions: OPTIONS, skipAddingFilesFromTsConfig: true });
  const index: SourceFile = project.addSourceFileAtPath(join(ROOT, 'src', 'index.ts'));
  project.resolveSourceFileDependencies();
  const surface: Surface = { params: 0, missing: [], examples: new Map(), exported: new Set(), project };
  for (const [name, decls] of index.getExportedDeclarations()) {
    surface.exported.add(name);
    for (const decl of decls) {
      if (!inScope(decl.getSourceFile().getFilePath())) continue;
      const node = decl.compilerNode;
      for (const c of callables(name, node)) {
        surface.params += c.node.parameters.length;
        surface.missing.push(...undocumented(c));
      }
      const found = examples(Node.isVariableDeclaration(decl) ? decl.getVariableStatementOrThrow().compilerNode : node);
      if (found.length > 0) surface.examples.set(name, [...(surface.examples.get(name) ?? []), ...found]);
    }
  }
  surface.missing = [...new Set(surface.missing)];
  return surface;
}

/** Type-checks each example as a user's file; the diagnostics of each, by `Name #k`. */
function checkExamples(surface: Surface): Map<string, string[]> {
  const dir = join(ROOT, 'test', 'docs', '.objects-examples');
  const files = new Map<string, SourceFile>();
  for (const [name, codes] of [...surface.examples, [CONTROL, [CONTROL_CODE]] as const]) {
    codes.forEach((code, k) => {
      const file = join(dir, `${name.replace(/\W/g, '_')}-${k + 1}.${usesTopLevelAwait(code) ? 'mts' : 'cts'}`);
      files.set(`${name} #${k + 1}`, surface.project.createSourceFile(file, `${code}\nexport {};\n`, { overwrite: true }));
    });
  }
  const program = surface.project.getProgram().compilerObject;
  const out = new Map<string, string[]>();
  for (const [key, sf] of files) {
    const source = program.getSourceFile(sf.getFilePath())!;
    out.set(
      key,
      [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((d) => {
        const line = d.start !== undefined ? source.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
        return `line ${line}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      }),
    );
  }
  return out;
}

/** An example that must fail: proves the check sees the API (a wrong method, a wrong argument type). */
const CONTROL = '(control)';
const CONTROL_CODE = "import { Device } from 'cuda-ts/objects';\nDevice.get('0').nosuchMethod();";

let surface: Surface;
let checked: Map<string, string[]>;
beforeAll(() => {
  surface = walk();
  checked = checkExamples(surface);
}, 120_000);

describe("the objects layer's TSDoc (cuda-ts/objects)", () => {
  test("the walk reaches the door's exports and their parameters", () => {
    for (const name of CORE) expect(surface.exported).toContain(name);
    expect(surface.params).toBeGreaterThan(200);
  });

  test('every public parameter has @param text', () => {
    expect(surface.missing).toEqual([]);
  });

  test('each core class (and launch) carries an @example', () => {
    expect(CORE.filter((name) => !surface.examples.has(name))).toEqual([]);
  });

  test("every @example type-checks as a user's file importing cuda-ts/objects", () => {
    expect(checked.size).toBeGreaterThan(CORE.length);
    expect(checked.get(`${CONTROL} #1`)).toEqual([expect.stringContaining('TS2345'), expect.stringContaining('TS2339')]);
    const failing = Object.fromEntries([...checked].filter(([key, errors]) => key !== `${CONTROL} #1` && errors.length > 0));
    expect(failing).toEqual({});
  });

  test('every @example imports from cuda-ts/objects, as a user writes it', () => {
    const others = [...surface.examples]
      .filter(([, codes]) => codes.some((c) => !/from 'cuda-ts\/objects'/.test(c) || /from '\.\.?\//.test(c)))
      .map(([n]) => n);
    expect(others).toEqual([]);
  });
});
