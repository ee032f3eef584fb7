// A CommonJS copy of parts of the TypeScript tree, for the runtimes that cannot run its sources
// (Deno runs every .ts file as an ES module, where `require`, `module` and names defined at run time
// behind `export declare` do not exist; see issue 26) and for timing the same code under Node, Bun and
// Deno (bench/runtimes.ts, test/runtimes/smoke.cjs). Transpiles file by file (no type check: a
// second or two), mirrors the folders, marks the copy `"type": "commonjs"` (Deno reads that) and
// links the repository's node_modules beside it (koffi).
//   npx tsx scripts/cjs-tree.ts <outDir> [root…]   (roots default: support src generated/13.0; a root is a
//   folder or one .ts file, e.g. bench/runtime-child.ts)
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const REPO = resolve(__dirname, '..');
export const DEFAULT_ROOTS = ['support', 'src', 'generated/13.0'];

/** The .ts files (not .d.ts) of `dir`, recursively, or `dir` itself when it is one. */
export function* tsFiles(dir: string): Generator<string> {
  if (!statSync(dir).isDirectory()) {
    if (dir.endsWith('.ts') && !dir.endsWith('.d.ts')) yield dir;
    return;
  }
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* tsFiles(path);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) yield path;
  }
}

/**
 * Writes the CommonJS copy of `roots` (folders or .ts files of the repository) under `outDir`; returns
 * outDir. `removeComments`: as the published build emits (function sources as V8 compiles them there).
 */
export function buildCjsTree(outDir: string, roots: readonly string[] = DEFAULT_ROOTS, { removeComments = false } = {}): string {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.CommonJS,
    target: ts.ScriptTarget.ES2022,
    esModuleInterop: true,
    isolatedModules: true,
    removeComments,
  };
  for (const root of roots) {
    for (const file of tsFiles(join(REPO, root))) {
      const js = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions: options, fileName: file }).outputText;
      const out = join(outDir, relative(REPO, file)).replace(/\.ts$/, '.js');
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, js);
    }
  }
  writeFileSync(join(outDir, 'package.json'), JSON.stringify({ name: 'cuda-ts-cjs-tree', private: true, type: 'commonjs' }));
  if (!existsSync(join(outDir, 'node_modules'))) symlinkSync(join(REPO, 'node_modules'), join(outDir, 'node_modules'));
  return outDir;
}

if (require.main === module) {
  const [out, ...roots] = process.argv.slice(2);
  if (!out) {
    console.error('usage: tsx scripts/cjs-tree.ts <outDir> [root…]');
    process.exit(2);
  }
  console.log(buildCjsTree(resolve(out), roots.length ? roots : DEFAULT_ROOTS));
}
