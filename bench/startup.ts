// How the benches load cuda-ts, and the import + first-call time of a module in a fresh Node process.
// Loaders: "js" (default) the TypeScript sources transpiled one-to-one into bench/.build/js, comments
// stripped as the build ships them; "dist" dist/ from `npm run build`, where it exists; "tsx" the .ts
// sources through tsx (its on-disk transform cache is warm after the first, untimed spawn).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { REPO_ROOT, median } from './common';

export type Loader = 'js' | 'dist' | 'tsx';

/** One fresh process's times (ms): the require, the first call (loads the library), both, and since process start. */
export interface StartupSample {
  require_ms: number;
  first_call_ms: number;
  total_ms: number;
  process_ms: number;
  result?: unknown;
}

export interface StartupResult {
  what: string;
  loader: Loader;
  module: string;
  call: string;
  samples: number;
  median: Omit<StartupSample, 'result'>;
  result?: unknown;
  js_source?: string;
}

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

export function hasDist(modulePath: string): boolean {
  return existsSync(join(DIST_ROOT, `${modulePath}.js`));
}

/** The file a loader requires for `modulePath`, the node arguments it needs, and where the JS came from. */
function entry(modulePath: string, loader: Loader): { file: string; args: string[]; how?: string } {
  if (loader === 'tsx') return { file: join(REPO_ROOT, `${modulePath}.ts`), args: ['--require', 'tsx/cjs'] };
  if (loader === 'dist') return { file: join(DIST_ROOT, `${modulePath}.js`), args: [], how: 'dist/ (npm run build)' };
  const { root, how } = jsTree([modulePath]);
  return { file: join(root, `${modulePath}.js`), args: [], how };
}

/** Loads a cuda-ts module the way the benchmarks measure it: compiled JS (default), dist/ or tsx (BENCH_LOADER). */
export function loadModule<T>(modulePath: string, loader: Loader = (process.env.BENCH_LOADER as Loader) || 'js'): T {
  return require(entry(modulePath, loader).file) as T;
}

/** Import + first call (`call`, an expression on the module `m`) in `samples` fresh `node -e` after one untimed: the medians. */
export function measureStartup(what: string, modulePath: string, call: string, loader: Loader, samples = 5): StartupResult {
  const { file, args, how } = entry(modulePath, loader);
  const script = `
const { performance } = require('node:perf_hooks');
const t0 = performance.now();
const m = require(${JSON.stringify(file)});
const t1 = performance.now();
let result;
try { result = (${call}); } catch (e) { result = { error: String(e && e.message || e) }; }
const t2 = performance.now();
if (typeof result === 'bigint') result = String(result);
process.stdout.write(JSON.stringify({ require_ms: t1 - t0, first_call_ms: t2 - t1, total_ms: t2 - t0, process_ms: t2, result }));
`;
  const run = (): StartupSample => {
    const r = spawnSync(process.execPath, [...args, '-e', script], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`child exited ${r.status ?? r.signal}: ${(r.stderr || r.stdout || '').trim().split('\n').slice(-12).join(' | ')}`);
    return JSON.parse(r.stdout.trim().split('\n').pop()!) as StartupSample;
  };
  run(); // untimed: fills the OS file cache and tsx's transform cache
  const got = Array.from({ length: samples }, run);
  const med = (k: keyof Omit<StartupSample, 'result'>) => Math.round(median(got.map((s) => s[k])) * 100) / 100;
  return {
    what,
    loader,
    module: modulePath,
    call,
    samples,
    median: { require_ms: med('require_ms'), first_call_ms: med('first_call_ms'), total_ms: med('total_ms'), process_ms: med('process_ms') },
    result: got[got.length - 1].result,
    js_source: how,
  };
}
