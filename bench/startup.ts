// Import + first-call time of a cuda-ts module in a fresh Node process.
//
// Each sample spawns `node -e SCRIPT` (a new process, so nothing is cached in memory; the OS file cache
// is warm after the untimed first spawn). Inside the child, performance.now() is read before the
// require, after it, and after the first call; the child prints those as JSON. Reported:
//   require_ms     the require() of the module (and everything it imports)
//   first_call_ms  the first call (binds the function: loads the library, resolves the symbol)
//   total_ms       require_ms + first_call_ms   <- the figure the issue's ≤ 25 ms target is about
//   process_ms     node's timeOrigin (process start) to the end of the first call, i.e. total_ms plus
//                  node's own bootstrap (and, for tsx, the loader's registration)
//   wall_ms        spawn → exit as seen by the parent (includes process teardown)
// Three ways of loading the code, each reported separately:
//   "js"   plain CommonJS: the TypeScript sources transpiled one-to-one with typescript.transpileModule
//          into bench/.build/js, comments stripped as in the published build (docs ship in the .d.ts)
//   "dist" plain CommonJS from dist/ (npm run build), when it exists (it may be older than the sources)
//   "tsx"  node --require tsx/cjs, requiring the .ts sources (tsx's on-disk transform cache is warm
//          after the first, untimed spawn)
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { REPO_ROOT, median } from './common';
import { rotation } from './interleave';
import { koffiNativePath } from '../support/koffi';

export interface StartupSample {
  require_ms: number;
  first_call_ms: number;
  total_ms: number;
  process_ms: number;
  wall_ms: number;
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

function resolveTs(fromDir: string, spec: string): string | undefined {
  const base = join(fromDir, spec);
  for (const c of [`${base}.ts`, join(base, 'index.ts')]) if (existsSync(c)) return c;
  return undefined;
}

/**
 * Plain-JS tree: the TypeScript sources an entry point needs (followed through relative imports),
 * transpiled one-to-one into bench/.build/js (kept under the repository so `require('koffi')`
 * resolves; a file is re-emitted when its source is newer). Returns the root that mirrors the
 * repository layout, and how it was made.
 */
export function jsTree(entries: string[] = ['generated/13.0/driver/index', 'generated/13.0/runtime/index']): { root: string; how: string } {
  transpileTree(REPO_ROOT, entries, BUILD_DIR);
  return {
    root: BUILD_DIR,
    how: 'typescript.transpileModule of the sources into bench/.build/js (the CommonJS the build ships: comments stripped, docs live in the .d.ts)',
  };
}

/**
 * A copy of a plain-JS tree (jsTree) in bench/.build/bundle with its entries bundled the way
 * `npm run build` bundles dist/ (scripts/bundle.ts distEntries). Returns the copy's root.
 */
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
  const seen = new Set<string>();
  const queue = entries.map((e) => resolveTs(root, e)).filter((f): f is string => !!f);
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const outFile = join(outDir, relative(root, file).replace(/\.ts$/, '.js'));
    let text: string;
    if (existsSync(outFile) && statSync(outFile).mtimeMs >= statSync(file).mtimeMs) {
      text = readFileSync(outFile, 'utf8');
    } else {
      text = ts.transpileModule(readFileSync(file, 'utf8'), {
        fileName: file,
        compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, esModuleInterop: true, isolatedModules: true, removeComments: true },
      }).outputText;
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

export const DIST_ROOT = join(REPO_ROOT, 'dist');
export function hasDist(modulePath: string): boolean {
  return existsSync(join(DIST_ROOT, `${modulePath}.js`));
}

/** Loads a cuda-ts module the way the benchmarks measure it: compiled JS (default) or tsx (BENCH_LOADER=tsx). */
export function loadModule<T>(modulePath: string, loader: Loader = (process.env.BENCH_LOADER as Loader) || 'js'): T {
  const file =
    loader === 'tsx'
      ? join(REPO_ROOT, `${modulePath}.ts`)
      : loader === 'dist'
        ? join(DIST_ROOT, `${modulePath}.js`)
        : join(jsTree([modulePath]).root, `${modulePath}.js`);
  return require(file) as T;
}

export type Loader = 'js' | 'dist' | 'tsx';

export function measureStartup(what: string, modulePath: string, call: string, loader: Loader, samples = 5): StartupResult {
  let target: string;
  let args: string[];
  let jsSource: string | undefined;
  if (loader === 'js') {
    const { root, how } = jsTree([modulePath]);
    target = join(root, `${modulePath}.js`);
    jsSource = how;
    args = [];
  } else if (loader === 'dist') {
    target = join(DIST_ROOT, `${modulePath}.js`);
    jsSource = 'dist/ (npm run build)';
    args = [];
  } else {
    target = join(REPO_ROOT, `${modulePath}.ts`);
    args = ['--require', 'tsx/cjs'];
  }
  const script = `
const { performance } = require('node:perf_hooks');
const t0 = performance.now();
const m = require(${JSON.stringify(target)});
const t1 = performance.now();
let result;
try { result = (${call}); } catch (e) { result = { error: String(e && e.message || e) }; }
const t2 = performance.now();
if (typeof result === 'bigint') result = String(result);
process.stdout.write(JSON.stringify({ require_ms: t1 - t0, first_call_ms: t2 - t1, total_ms: t2 - t0, process_ms: t2, result }));
`;
  const run = (): StartupSample => {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [...args, '-e', script], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000, env: process.env });
    const wall = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.status !== 0) throw new Error(`child exited ${r.status ?? r.signal}: ${(r.stderr || r.stdout || '').trim().split('\n').slice(-12).join(' | ')}`);
    const s = JSON.parse(r.stdout.trim().split('\n').pop()!) as StartupSample;
    return { ...s, wall_ms: wall };
  };
  run(); // untimed: fills the OS file cache and tsx's transform cache
  const got: StartupSample[] = [];
  for (let i = 0; i < samples; i++) got.push(run());
  const med = (k: keyof Omit<StartupSample, 'result'>) => Math.round(median(got.map((s) => s[k] as number)) * 100) / 100;
  return {
    what,
    loader,
    module: modulePath,
    call,
    samples,
    median: {
      require_ms: med('require_ms'),
      first_call_ms: med('first_call_ms'),
      total_ms: med('total_ms'),
      process_ms: med('process_ms'),
      wall_ms: med('wall_ms'),
    },
    result: got[got.length - 1].result,
    js_source: jsSource,
  };
}

/** One case of {@link measureImports}: a script run in a fresh `node -e`, timed inside the child. */
export interface ImportCase {
  /** Row name (`koffi`, `driver`, `objects`, …). */
  name: string;
  /** What is timed, in words. */
  what: string;
  /** Code run before the clock starts (nothing is loaded by it). */
  setup?: string;
  /** The timed code: `require(...)`s and the first call; the value of the last expression is kept as `result`. */
  timed: string;
}

/** Per case: one value per round (ms; the median of that round's spawns), their median, and the spawns. */
export interface ImportResult {
  name: string;
  what: string;
  /** Per round, the median of its spawns of this case (ms). */
  samples: number[];
  median: number;
  result?: unknown;
  /** Per round, every spawn's time (ms), in the order they ran. */
  spawns?: number[][];
}

/**
 * Import + first call of several cases in fresh processes, interleaved: after one untimed spawn of
 * each case (OS file cache), `rounds` rounds; in each, every case is spawned `perRound` times, the
 * cases taking turns in rotating order (A B C, B C A, …), and the round's value for a case is the
 * median of its spawns. Load on a shared machine moves every case of a round alike, and one slow
 * spawn (a preemption, a page-cache miss) cannot set the round's value, so the per-round differences
 * to koffi (bench/import.ts) show the real spread.
 */
export function measureImports(
  cases: ImportCase[],
  rounds = 5,
  perRound = 3,
  spawn: (c: ImportCase) => { ms: number; result?: unknown } = spawnImportCase,
): ImportResult[] {
  for (const c of cases) spawn(c); // untimed: OS file cache
  const got = cases.map(() => [] as number[][]);
  const last: unknown[] = [];
  let s = 0;
  for (let k = 0; k < rounds; k++) {
    for (const g of got) g.push([]);
    for (let j = 0; j < perRound; j++, s++) {
      for (const i of rotation(
        cases.map((_, i) => i),
        s,
      )) {
        const r = spawn(cases[i]);
        got[i][k].push(Math.round(r.ms * 100) / 100);
        last[i] = r.result;
      }
    }
  }
  const r2 = (x: number) => Math.round(x * 100) / 100;
  return cases.map((c, i) => {
    const values = got[i].map((round) => r2(median(round)));
    return { name: c.name, what: c.what, samples: values, median: r2(median(values)), result: last[i], spawns: got[i] };
  });
}

/** One fresh `node -e` of an import case: the time of its timed code (ms, measured inside the child) and its result. */
export function spawnImportCase(c: ImportCase): { ms: number; result?: unknown } {
  const script = (c: ImportCase) => `
${c.setup ?? ''}
const { performance } = require('node:perf_hooks');
const t0 = performance.now();
let result;
try { result = (() => { ${c.timed} })(); } catch (e) { result = { error: String(e && e.message || e).split('\\n')[0] }; }
const t1 = performance.now();
if (typeof result === 'bigint') result = String(result);
process.stdout.write(JSON.stringify({ ms: t1 - t0, result }));
`;
  const r = spawnSync(process.execPath, ['-e', script(c)], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000, env: process.env });
  if (r.status !== 0)
    throw new Error(`${c.name}: child exited ${r.status ?? r.signal}: ${(r.stderr || r.stdout || '').trim().split('\n').slice(-6).join(' | ')}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

/**
 * The import cases of issue 17 on compiled JS (the `js` tree, what the build ships): koffi alone
 * (require + load + declare + one call: the floor any koffi binding pays), `cuda-ts/driver` and
 * `cuda-ts/objects` (require + first call), and `cuda-ts/runtime` on libcudart.
 * @param gpu true on a machine with a driver: the first call is cuDriverGetVersion() (loads libcuda
 *   through the binder) and koffi's baseline loads libcuda.so.1. false (CPU, no libcuda): the driver
 *   and objects first call is the same cuDriverGetVersion(), which fails fast at library load — so
 *   those rows are import + binder creation + a failed library search — and koffi's baseline loads
 *   libcudart; the runtime row (import + cudaRuntimeGetVersion(), which loads libcudart) is then the
 *   like-for-like comparison with koffi's.
 */
export function importCases(gpu: boolean): ImportCase[] {
  // the package as built: one bundled file per entry (scripts/bundle.ts), as `npm run build` ships it
  const root = bundledTree(jsTree(['generated/13.0/driver/index', 'generated/13.0/runtime/index', 'src/index']).root);
  const js = (p: string) => JSON.stringify(join(root, `${p}.js`));
  const koffiLib = gpu ? "process.env.CUDA_TS_DRIVER_LIBRARY || 'libcuda.so.1'" : "process.env.CUDA_TS_RUNTIME_LIBRARY || 'libcudart.so.13'";
  const koffiCall = gpu ? "lib.func('int cuDriverGetVersion(void *)')(out)" : "lib.func('int cudaRuntimeGetVersion(void *)')(out)";
  const koffiTimed = (load: string) =>
    `const koffi = ${load}; const lib = koffi.load(${koffiLib}); const out = new Int32Array(1); ${koffiCall}; return out[0];`;
  return [
    {
      name: 'koffi',
      what: `require('koffi') + koffi.load(${gpu ? 'libcuda.so.1' : 'libcudart.so.13'}) + one declared call`,
      timed: koffiTimed("require('koffi')"),
    },
    // what cuda-ts's runtime loads (support/koffi.ts): koffi's native module without koffi's entry
    ...nativeKoffiCase(koffiTimed),
    {
      name: 'driver',
      what: `cuda-ts/driver: require + cuDriverGetVersion()${gpu ? '' : ' (fails fast here: no libcuda)'}`,
      timed: `const m = require(${js('generated/13.0/driver/index')}); return m.cuDriverGetVersion();`,
    },
    {
      name: 'objects',
      what: `cuda-ts/objects: require + driver version through the driver module it loaded${gpu ? '' : ' (fails fast here)'}`,
      timed: `const m = require(${js('src/index')}); return require(${js('generated/13.0/driver/index')}).cuDriverGetVersion();`,
    },
    {
      name: 'runtime',
      what: 'cuda-ts/runtime: require + cudaRuntimeGetVersion() (loads libcudart)',
      timed: `const m = require(${js('generated/13.0/runtime/index')}); return m.cudaRuntimeGetVersion();`,
    },
    // the rows above run with the bundles' code cache warm (the untimed first spawn writes it); this one
    // shows a process that finds none (a first run, or CUDA_TS_CODE_CACHE=0)
    {
      name: 'driver-no-cache',
      what: 'cuda-ts/driver as above, code cache off (CUDA_TS_CODE_CACHE=0: what a first run costs)',
      timed: `process.env.CUDA_TS_CODE_CACHE = '0'; const m = require(${js('generated/13.0/driver/index')}); return m.cuDriverGetVersion();`,
    },
  ];
}

/** The koffi case with koffi's native module required directly; none where it is not found. */
function nativeKoffiCase(koffiTimed: (load: string) => string): ImportCase[] {
  const found = koffiNativePath([join(REPO_ROOT, 'node_modules')]);
  if (!found) return [];
  return [
    {
      name: 'koffi-native',
      what: "koffi's native module alone (what cuda-ts loads; koffi's entry adds its wrappers of node:util) + load + one declared call",
      timed: koffiTimed(`require(${JSON.stringify(found.file)})`),
    },
  ];
}

/** Issue 17's import targets: each row's median minus koffi's, against its allowance. */
export const IMPORT_TARGETS: Record<string, number> = { driver: 6, objects: 15 };
