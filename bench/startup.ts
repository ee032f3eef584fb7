// How the benches load cuda-ts (bench/import.ts times imports). Loaders: "js" (default) the TypeScript
// sources transpiled one-to-one into bench/.build/js, comments stripped as the build ships them; "dist"
// dist/ from `npm run build`, where it exists; "tsx" the .ts sources through tsx.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { REPO_ROOT } from './common';

export type Loader = 'js' | 'dist' | 'tsx';

const BUILD_DIR = join(REPO_ROOT, 'bench', '.build', 'js');
const DIST_ROOT = join(REPO_ROOT, 'dist');

function resolveTs(fromDir: string, spec: string): string | undefined {
  const base = join(fromDir, spec);
  return [`${base}.ts`, join(base, 'index.ts')].find((c) => existsSync(c));
}

/** The plain-JS tree of `entries` (transpileTree into bench/.build/js, under the repository so `require('koffi')` resolves). */
export function jsTree(entries: string[] = ['generated/13.0/driver/index', 'generated/13.0/runtime/index']): { root: string; how: string } {
  transpileTree(REPO_ROOT, entries, BUILD_DIR);
  return { root: BUILD_DIR, how: 'typescript.transpileModule of the sources into bench/.build/js (the CommonJS the build ships: comments stripped)' };
}

/** A copy of a plain-JS tree in bench/.build/bundle with its entries bundled as `npm run build` bundles dist/ (scripts/bundle.ts). */
export function bundledTree(root: string): string {
  const out = join(REPO_ROOT, 'bench', '.build', 'bundle');
  rmSync(out, { recursive: true, force: true });
  cpSync(root, out, { recursive: true });
  const { bundleTree } = require('../scripts/bundle') as typeof import('../scripts/bundle');
  bundleTree(out);
  return out;
}

/**
 * Transpiles the TypeScript files that `entries` (paths under `root`, without extension) reach through
 * relative requires into `outDir`, mirroring `root`'s layout; a file whose output is newer is kept.
 * Returns how many files the tree has.
 */
export function transpileTree(root: string, entries: string[], outDir: string): number {
  const ts = require('typescript') as typeof import('typescript');
  const options = { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, esModuleInterop: true, isolatedModules: true, removeComments: true };
  const seen = new Set<string>();
  const queue = entries.map((e) => resolveTs(root, e)).filter((f): f is string => !!f);
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const outFile = join(outDir, relative(root, file).replace(/\.ts$/, '.js'));
    let text: string;
    if (existsSync(outFile) && statSync(outFile).mtimeMs >= statSync(file).mtimeMs) text = readFileSync(outFile, 'utf8');
    else {
      text = ts.transpileModule(readFileSync(file, 'utf8'), { fileName: file, compilerOptions: options }).outputText;
      mkdirSync(dirname(outFile), { recursive: true });
      writeFileSync(outFile, text);
    }
    for (const m of text.matchAll(/require\(["'](\.{1,2}\/[^"']+)["']\)/g)) {
      const dep = resolveTs(dirname(file), m[1].replace(/\.js$/, ''));
      if (dep) queue.push(dep);
    }
  }
  return seen.size;
}

/** The file a loader requires for `modulePath`. */
function moduleFile(modulePath: string, loader: Loader): string {
  if (loader === 'tsx') return join(REPO_ROOT, `${modulePath}.ts`);
  if (loader === 'dist') return join(DIST_ROOT, `${modulePath}.js`);
  return join(jsTree([modulePath]).root, `${modulePath}.js`);
}

/** Loads a cuda-ts module the way the benchmarks measure it: compiled JS (default), dist/ or tsx (BENCH_LOADER). */
export function loadModule<T>(modulePath: string, loader: Loader = (process.env.BENCH_LOADER as Loader) || 'js'): T {
  return require(moduleFile(modulePath, loader)) as T;
}
