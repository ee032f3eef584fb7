// Type-checking the TypeScript blocks of a markdown page as a user's files (README.md, docs/*.md): the
// package names resolve to this repository's sources (`cuda-ts/objects` → src/index.ts,
// `cuda-ts/13.0/driver/raw` → generated/13.0/driver/raw.ts, `@cuda-ts/driver` → the newest release's
// driver, …). A block that uses top-level await is checked as an ES module (an .mts file); the others
// as CommonJS (.cts); both kinds in one program under module node16, as Node would load them.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..');

/** One fenced TypeScript block: its 1-based line in README.md and its text. */
export interface ReadmeBlock {
  line: number;
  code: string;
}

/** Every ```ts / ```typescript block of a markdown text. */
export function typescriptBlocks(markdown: string): ReadmeBlock[] {
  const blocks: ReadmeBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(```+|~~~+)\s*(ts|typescript|tsx)\b/.exec(lines[i]);
    if (!open) continue;
    const fence = open[2];
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !lines[j].trimStart().startsWith(fence); j++) body.push(lines[j]);
    blocks.push({ line: i + 1, code: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** True when the block awaits at its top level (outside any function), so it must be an ES module. */
export function usesTopLevelAwait(code: string): boolean {
  const file = ts.createSourceFile('block.ts', code, ts.ScriptTarget.ES2022, true);
  let found = false;
  const visit = (node: ts.Node): void => {
    if (found || ts.isFunctionLike(node) || ts.isClassLike(node)) return;
    if (ts.isAwaitExpression(node) || (ts.isForOfStatement(node) && node.awaitModifier)) found = true;
    else ts.forEachChild(node, visit);
  };
  ts.forEachChild(file, visit);
  return found;
}

/** `paths` mapping the published package names onto the repository's sources. */
function packagePaths(): Record<string, string[]> {
  const releases = readdirSync(join(ROOT, 'generated')).filter((r) => /^\d+\.\d+$/.test(r));
  const newest = releases.sort(
    (a, b) => Number(b.split('.')[0]) * 1000 + Number(b.split('.')[1]) - (Number(a.split('.')[0]) * 1000 + Number(a.split('.')[1])),
  )[0];
  return {
    'cuda-ts': [`generated/${newest}/driver/index.ts`],
    'cuda-ts/objects': ['src/index.ts'],
    'cuda-ts/runtime-support': ['support/index.ts'],
    'cuda-ts/driver': [`generated/${newest}/driver/index.ts`],
    'cuda-ts/runtime': [`generated/${newest}/runtime/index.ts`],
    'cuda-ts/*/raw': ['generated/*/raw.ts'],
    'cuda-ts/*/types': ['generated/*/types.ts'],
    'cuda-ts/*': ['generated/*/index.ts'],
    '@cuda-ts/runtime-support': ['support/index.ts'],
    '@cuda-ts/*/raw': [`generated/${newest}/*/raw.ts`],
    '@cuda-ts/*/types': [`generated/${newest}/*/types.ts`],
    '@cuda-ts/*': [`generated/${newest}/*/index.ts`],
  };
}

/** The compiler options a user's file is checked under (Node16 modules, strict), with the given import paths. */
export function userCompilerOptions(paths: Record<string, string[]> = packagePaths()): ts.CompilerOptions {
  return {
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts'],
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    strict: true,
    esModuleInterop: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules', '@types')],
    baseUrl: ROOT,
    paths,
  };
}

/**
 * Type-checks `files` (absolute paths) as one program (a program costs seconds: the generated modules
 * are large); the errors found in each of those files, by file. Node's own rules decide each file's
 * module kind: `.mts` is an ES module (top-level await allowed), `.cts` CommonJS.
 */
export function typeCheck(files: string[]): Map<string, string[]> {
  const options = userCompilerOptions();
  const program = ts.createProgram(files, options);
  const byFile = new Map<string, string[]>();
  for (const file of files) {
    const errors: string[] = [];
    byFile.set(file, errors);
    const source = program.getSourceFile(file);
    if (!source) {
      errors.push(`${file}: not in the program`);
      continue;
    }
    for (const d of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const { line } = d.start !== undefined ? source.getLineAndCharacterOfPosition(d.start) : { line: 0 };
      errors.push(`line ${line + 1} of the block: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    }
  }
  return byFile;
}
