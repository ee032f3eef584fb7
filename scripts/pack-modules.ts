// pack-modules: builds the publishable packages of this repository and `npm pack`s them.
//
//   tsx scripts/pack-modules.ts [--only a,b] [--dist DIR] [--out DIR] [--no-build] [--no-pack] [--revision N]
//
// Packages (tarballs in dist/packages/, with manifest.json listing them):
//   cuda-ts                     every module of the default release (the one its "main" names, 13.0), the
//                               objects layer and the `cuda-ts` and `cuda-ts-run` bins; older releases are
//                               the @cuda-ts/<module> packages (`du -sh node_modules/cuda-ts` after installing
//                               the tarball: 85 MB with every release, 26 MB with the default one);
//                               its package.json is the root one (same "exports"), less scripts and dev tools,
//                               plus a dependency on the support package: its `cuda-ts/runtime-support` entry
//                               re-exports that package, and its code imports it (rewritten from relative
//                               imports of support/), so one CudaError class serves cuda-ts and every
//                               @cuda-ts/<module> installed with it.
//   @cuda-ts/runtime-support    support/ compiled: the support code generated modules import.
//   @cuda-ts/gen                the generator (generator/ compiled) and its `cuda-ts-gen` bin; depends on zod.
//   @cuda-ts/<module>           one module of one release, versioned <release>.<revision> (13.0.100,
//                               12.6.100: two versions of one package); depends on koffi and the support
//                               package only (its `../../../support` imports are rewritten to it).
// The support package's folder and npm name come from generator/support-path.ts (named there once).
//
// Module formats. tsc emits CommonJS (dist/<path>.js, as `npm run build` always did). The ES module
// entries (dist/esm/<path>.js) are thin wrappers generated here that import that CommonJS build and
// re-export every name by list, so `import` and `require` share one instance (one CudaError class, one
// library cache) and nothing depends on Node's CommonJS export detection. Each wrapper has a .d.ts
// (`export * from` the CommonJS declarations) in a {"type":"module"} folder, so TypeScript sees the ESM
// entry as ESM under node16 and bundler resolution.
//
// Nothing here needs a GPU or the network: tsc, node (to list export names; importing loads no CUDA
// library) and `npm pack` on staged directories.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { MODULES } from '../generator/modules';
import { SUPPORT_DIR, SUPPORT_PACKAGE, supportSpecifier } from '../generator/support-path';
import { BODY_SUFFIX, PLAIN_SUFFIX, bundleTree } from './bundle';

const ROOT = resolve(__dirname, '..');
const SCOPE = '@cuda-ts';
const SUPPORT = SUPPORT_PACKAGE;
/** The support package's entry in a compiled tree (relative to dist, no extension). */
const SUPPORT_ENTRY = `${SUPPORT_DIR}/index`;

export interface PackOptions {
  /** Package selectors: `cuda-ts`, `runtime-support`, `<release>/<module>`, `<module>` (every release),
   *  `<release>` (every module of it). Default: all packages. */
  only?: string[];
  /** Where tsc writes and the ESM wrappers go (default: dist/, the root package's build). */
  dist?: string;
  /** Where tarballs and manifest.json go (default: dist/packages). */
  out?: string;
  build?: boolean;
  pack?: boolean;
  /** The patch number of module packages (default: from the root version, see moduleRevision). */
  revision?: number;
}

export interface PackedPackage {
  name: string;
  version: string;
  /** Absolute path of the tarball. */
  file: string;
  /** `<release>/<module>` for module packages. */
  module?: string;
}

export interface PackResult {
  packages: PackedPackage[];
  /** Seconds spent per step. */
  timings: Record<string, number>;
}

interface RootPackage {
  name: string;
  version: string;
  description: string;
  license: string;
  engines: Record<string, string>;
  dependencies: Record<string, string>;
  exports: Record<string, unknown>;
  main?: string;
  types?: string;
  [key: string]: unknown;
}

/** A generated module of one release: `generated/<release>/<module>/{index,raw,types}.ts`. */
interface ModuleEntry {
  release: string;
  module: string;
}

/** The release cuda-ts carries (its "main" names it: `dist/generated/13.0/driver/index.js`); the other
 *  releases are published as @cuda-ts/<module> packages only. */
export function defaultRelease(root: { main?: string }): string {
  const m = /generated\/(\d+\.\d+)\//.exec(root.main ?? '');
  if (!m) throw new Error(`package.json "main" (${root.main}) names no generated/<release>/ folder`);
  return m[1];
}

/** A module's public entry points (ESM wrappers, "exports"); its other files (binding) are internal. */
const LAYERS = ['index', 'raw', 'types'] as const;

/** Every file of a generated module (`index`, `raw`, `types`, `binding`, the chunk files `typed/<family>`
 *  and `raw-layer/<family>`, … as the generator emits them), as paths relative to the module, `/`-separated. */
function moduleFiles(e: ModuleEntry): string[] {
  return (readdirSync(join(ROOT, 'generated', e.release, e.module), { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => f.slice(0, -3).split(sep).join('/'))
    .sort();
}

// ---------------------------------------------------------------------------------------------------
// Versions

/** Module packages are versioned `<CUDA release>.<revision>`; the revision follows the repository's
 *  version, major*10000 + minor*100 + patch (cuda-ts 0.1.0 → 13.0.100 and 12.6.100), so every release
 *  of this repository republishes every module under a higher patch within its CUDA release line. */
export function moduleRevision(rootVersion: string): { revision: number; prerelease: string } {
  const m = /^(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?$/.exec(rootVersion);
  if (!m) throw new Error(`package.json version ${rootVersion} is not major.minor.patch[-pre]`);
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (minor > 99 || patch > 99) throw new Error(`version ${rootVersion}: minor and patch must stay below 100 (pass --revision)`);
  return { revision: major * 10000 + minor * 100 + patch, prerelease: m[4] ?? '' };
}

// ---------------------------------------------------------------------------------------------------
// What exists and what is selected

function listModules(): ModuleEntry[] {
  const out: ModuleEntry[] = [];
  for (const release of readdirSync(join(ROOT, 'generated')).sort()) {
    const dir = join(ROOT, 'generated', release);
    if (!statSync(dir).isDirectory()) continue;
    for (const module of readdirSync(dir).sort()) {
      if (existsSync(join(dir, module, 'index.ts'))) out.push({ release, module });
    }
  }
  return out;
}

/** The `.ts` sources under `folder` (relative to the repository), as repository-relative paths without
 *  extension: `src` (the objects layer), SUPPORT_DIR (the support package), `generator`. */
function listSources(folder: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, folder)).sort()) {
    const rel = `${folder}/${name}`;
    if (statSync(join(ROOT, rel)).isDirectory()) out.push(...listSources(rel));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(rel.slice(0, -3));
  }
  return out;
}

interface Selection {
  main: boolean;
  support: boolean;
  gen: boolean;
  modules: ModuleEntry[];
}

function select(only: string[] | undefined, all: ModuleEntry[]): Selection {
  if (!only || only.length === 0) return { main: true, support: true, gen: true, modules: all };
  const sel: Selection = { main: false, support: false, gen: false, modules: [] };
  for (const raw of only) {
    const s = raw.trim();
    if (!s) continue;
    if (s === 'cuda-ts') sel.main = true;
    else if (s === 'gen' || s === `${SCOPE}/gen`) sel.gen = true;
    else if (s === 'runtime-support' || s === SUPPORT) sel.support = true;
    else {
      const name = s.startsWith(`${SCOPE}/`) ? s.slice(SCOPE.length + 1) : s;
      const hits = all.filter((e) => name === `${e.release}/${e.module}` || name === e.module || name === e.release);
      if (hits.length === 0) throw new Error(`--only ${s}: no such package (modules: ${[...new Set(all.map((e) => e.module))].join(', ')})`);
      for (const h of hits) if (!sel.modules.includes(h)) sel.modules.push(h);
    }
  }
  // Module packages and cuda-ts are unusable without the support package they depend on.
  if (sel.modules.length > 0 || sel.main) sel.support = true;
  return sel;
}

// ---------------------------------------------------------------------------------------------------
// Build: tsc (CommonJS) for the selected entries, then the ESM wrappers

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const r = spawnSync(cmd, args, { cwd: opts.cwd ?? ROOT, env: opts.env ?? process.env, encoding: 'utf8', maxBuffer: 256 << 20 });
  if (r.status !== 0) {
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-40).join('\n');
    throw new Error(`${[cmd, ...args].join(' ')} failed (${r.error?.message ?? `exit ${r.status}`})\n${out}`);
  }
  return r.stdout;
}

/** Compiles only what the selected packages ship into `dist`, as `npm run build` does: JavaScript
 *  without comments (tsconfig.build.json), then the declarations with them (tsconfig.build-types.json). */
function compile(dist: string, sources: string[]): void {
  for (const base of ['tsconfig.build.json', 'tsconfig.build-types.json']) {
    const config = {
      extends: join(ROOT, base),
      compilerOptions: { outDir: dist, rootDir: ROOT, typeRoots: [join(ROOT, 'node_modules', '@types')] },
      files: sources.map((s) => join(ROOT, `${s}.ts`)),
      include: [],
    };
    const tmp = join(tmpdir(), `cuda-ts-pack-${process.pid}-${Date.now()}.json`);
    writeFileSync(tmp, JSON.stringify(config, null, 2));
    try {
      run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', tmp]);
    } finally {
      rmSync(tmp, { force: true });
    }
  }
}

/** The run-time export names of compiled CommonJS entries (paths relative to `dist`, no extension),
 *  read in a plain node child (requiring a module loads no CUDA library). */
function exportNames(dist: string, entries: string[]): Record<string, string[]> {
  const missing = entries.filter((e) => !existsSync(join(dist, `${e}.js`)));
  if (missing.length > 0)
    throw new Error(`missing build output in ${dist}: ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''} (build first, or drop --no-build)`);
  const script = `
    const path = require('node:path');
    const [dist, entries] = [process.argv[1], JSON.parse(process.argv[2])];
    const out = {};
    for (const e of entries) out[e] = Object.keys(require(path.join(dist, e + '.js')));
    process.stdout.write(JSON.stringify(out));`;
  // NODE_PATH: a dist outside the repository still finds koffi in the repository's node_modules.
  const env = { ...process.env, NODE_PATH: join(ROOT, 'node_modules') };
  return JSON.parse(run(process.execPath, ['-e', script, dist, JSON.stringify(entries)], { env })) as Record<string, string[]>;
}

const LOCAL = '__cudaTsCommonJS';
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** An ES module that re-exports the CommonJS module at `target` (relative, with extension). In Node a
 *  namespace import of CommonJS has `default` = module.exports; bundlers that honour `__esModule` give
 *  the names on the namespace itself, hence `default ?? namespace`. */
function esmWrapper(target: string, names: string[]): string {
  const list = names.filter((n) => n !== 'default' && n !== LOCAL && IDENTIFIER.test(n));
  const lines = [
    '// ES module entry: re-exports the CommonJS build (one instance for import and require). Generated by scripts/pack-modules.ts.',
    `import * as ns from ${JSON.stringify(target)};`,
    `const ${LOCAL} = ns.default ?? ns;`,
  ];
  if (list.length > 0) lines.push(`export const {\n  ${list.join(',\n  ')},\n} = ${LOCAL};`);
  return `${lines.join('\n')}\n`;
}

function esmDeclarations(target: string): string {
  return `export * from ${JSON.stringify(target)};\n`;
}

function relTarget(fromFile: string, toFile: string): string {
  const r = relative(dirname(fromFile), toFile).split('\\').join('/');
  return r.startsWith('.') ? r : `./${r}`;
}

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

type Names = Record<string, string[]>;

/** dist/esm/<entry>.{js,d.ts} for each entry, plus the "type" markers of both trees. */
function writeEsm(dist: string, names: Names): void {
  write(join(dist, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
  write(join(dist, 'esm', 'package.json'), `${JSON.stringify({ type: 'module' })}\n`);
  for (const [entry, list] of Object.entries(names)) {
    const file = join(dist, 'esm', `${entry}.js`);
    const target = relTarget(file, join(dist, `${entry}.js`));
    write(file, esmWrapper(target, list));
    write(join(dist, 'esm', `${entry}.d.ts`), esmDeclarations(target));
  }
}

/** A package's dist/esm/<layer>.{js,d.ts}, wrapping its dist/cjs/<layer>.js. */
function writePackageEsm(dir: string, layer: string, list: string[] | undefined): void {
  if (!list) throw new Error(`no export names for ${layer} of ${dir}`);
  write(join(dir, 'dist', 'esm', `${layer}.js`), esmWrapper(`../cjs/${layer}.js`, list));
  write(join(dir, 'dist', 'esm', `${layer}.d.ts`), esmDeclarations(`../cjs/${layer}.js`));
}

// ---------------------------------------------------------------------------------------------------
// Staging

function copy(from: string, to: string, transform?: (text: string) => string): void {
  if (!existsSync(from)) throw new Error(`missing build output ${from} (build first, or drop --no-build)`);
  mkdirSync(dirname(to), { recursive: true });
  if (transform) writeFileSync(to, transform(readFileSync(from, 'utf8')));
  else copyFileSync(from, to);
  // a bundled entry's code, and the entry as compiled, lie beside it (scripts/bundle.ts): they go where
  // the entry goes, rewritten alike
  if (from.endsWith('.js') && !from.endsWith(BODY_SUFFIX) && !from.endsWith(PLAIN_SUFFIX)) {
    for (const suffix of [BODY_SUFFIX, PLAIN_SUFFIX]) {
      const beside = `${from.slice(0, -3)}${suffix}`;
      if (existsSync(beside)) copy(beside, `${to.slice(0, -3)}${suffix}`, transform);
    }
  }
}

/** Nested conditions: `import` → ESM wrapper, `require` → CommonJS, each with its own declarations. */
function conditional(esm: string, cjs: string): unknown {
  return {
    import: { types: `./${esm}.d.ts`, default: `./${esm}.js` },
    require: { types: `./${cjs}.d.ts`, default: `./${cjs}.js` },
  };
}

/** Rewrites a generated module's imports of the support folder to the support package and proves none
 *  is left (`file` is `<release>/<module>/<path>`: a chunk file one folder down imports `../` once more). */
function toSupport(file: string): (text: string) => string {
  const depth = file.split('/').length - 3; // folders between the module's root and the file
  const spec = `${'../'.repeat(depth)}${supportSpecifier(0)}`;
  const outside = new RegExp(`(?:require\\(\\s*|from\\s+|import\\(\\s*)["'](?:\\.\\./){${depth + 1}}`);
  return (text) => {
    const out = text.split(`"${spec}"`).join(`"${SUPPORT}"`).split(`'${spec}'`).join(`'${SUPPORT}'`);
    if (outside.test(out)) throw new Error(`${file}: an import outside the module is left after rewriting ${spec}`);
    return out;
  };
}

/** The Node.js lines of `engines` in words: "^20 || ^22" → "Node.js 20 or 22". */
export function nodeLines(engines: Record<string, string> | undefined): string {
  const range = engines?.node ?? '';
  const majors = [...range.matchAll(/\^(\d+)/g)].map((m) => m[1]);
  if (majors.length > 0) return `Node.js ${majors.slice(0, -1).join(', ')}${majors.length > 1 ? ' or ' : ''}${majors[majors.length - 1]}`;
  return range ? `Node.js ${range}` : 'Node.js';
}

function readme(root: RootPackage, title: string, body: string): string {
  return `# ${title}\n\n${body.trim()}\n\nPart of [cuda-ts](https://www.npmjs.com/package/cuda-ts): CUDA bindings generated from NVIDIA's headers, called through [koffi](https://koffi.dev). Needs ${nodeLines(root.engines)} and, to call anything, the CUDA library at run time; importing loads nothing. MIT licensed (LICENSE).\n`;
}

/** Rewrites the imports of the support folder in the compiled file `rel` (relative to dist, no
 *  extension) to the support package, and proves that nothing inside that folder is still imported by path. */
function supportImports(rel: string): (text: string) => string {
  const spec = relTarget(join(ROOT, `${rel}.js`), join(ROOT, SUPPORT_DIR));
  return (text) => {
    const out = text.split(`"${spec}"`).join(`"${SUPPORT}"`).split(`'${spec}'`).join(`'${SUPPORT}'`);
    if (out.includes(`"${spec}/`) || out.includes(`'${spec}/`))
      throw new Error(`${rel}: imports a file inside ${SUPPORT_DIR}/ (${spec}/…); only its index is in ${SUPPORT}`);
    return out;
  };
}

function writeJson(file: string, value: unknown): void {
  write(file, `${JSON.stringify(value, null, 2)}\n`);
}

function common(root: RootPackage): Record<string, unknown> {
  return { license: root.license, engines: root.engines, sideEffects: false };
}

function stageSupport(root: RootPackage, dist: string, dir: string, sources: string[], names: Names): void {
  // `sources` are the support folder's, repository-relative: the package's dist/cjs is that folder
  for (const s of sources) {
    const base = s.slice(`${SUPPORT_DIR}/`.length);
    for (const ext of ['.js', '.d.ts']) copy(join(dist, `${s}${ext}`), join(dir, 'dist', 'cjs', `${base}${ext}`));
  }
  writePackageEsm(dir, 'index', names[SUPPORT_ENTRY]);
  writeJson(join(dir, 'dist', 'cjs', 'package.json'), { type: 'commonjs' });
  writeJson(join(dir, 'dist', 'esm', 'package.json'), { type: 'module' });
  writeJson(join(dir, 'package.json'), {
    name: SUPPORT,
    version: root.version,
    type: 'commonjs',
    description: 'Support code of the cuda-ts generated bindings: library discovery, lazy binder, CudaError, koffi helpers',
    ...common(root),
    main: './dist/cjs/index.js',
    types: './dist/cjs/index.d.ts',
    exports: { '.': conditional('dist/esm/index', 'dist/cjs/index'), './package.json': './package.json' },
    dependencies: { koffi: root.dependencies.koffi },
    publishConfig: { access: 'public' },
  });
  write(
    join(dir, 'README.md'),
    readme(
      root,
      SUPPORT,
      `The run-time support that every \`${SCOPE}/<module>\` package imports: finding and loading CUDA's shared libraries, binding functions on first call, \`CudaError\` and its subclasses, koffi type helpers. You rarely import it yourself; \`import { CudaError } from '${SUPPORT}'\` catches the errors of every module, and \`cuda-ts\` depends on this package too (its \`cuda-ts/runtime-support\` entry is this package), so one \`CudaError\` class serves all of them.`,
    ),
  );
}

function stageModule(root: RootPackage, dist: string, dir: string, e: ModuleEntry, version: string, names: Names): void {
  const src = join(dist, 'generated', e.release, e.module);
  for (const file of moduleFiles(e)) {
    for (const ext of ['.js', '.d.ts']) {
      copy(join(src, `${file}${ext}`), join(dir, 'dist', 'cjs', `${file}${ext}`), toSupport(`${e.release}/${e.module}/${file}${ext}`));
    }
  }
  for (const layer of LAYERS) writePackageEsm(dir, layer, names[`generated/${e.release}/${e.module}/${layer}`]);
  writeJson(join(dir, 'dist', 'cjs', 'package.json'), { type: 'commonjs' });
  writeJson(join(dir, 'dist', 'esm', 'package.json'), { type: 'module' });
  const spec = MODULES.find((m) => m.name === e.module);
  const title = spec?.title ?? `${e.module} API`;
  const name = `${SCOPE}/${e.module}`;
  // A real function of this module for the README's example (typed-layer functions start lowercase).
  // (C functions: cu…, nv…, nccl…; a version query when there is one, as it needs no set-up.)
  const functions = (names[`generated/${e.release}/${e.module}/index`] ?? []).filter((n) => /^(cu|nv|nccl)[A-Z]/.test(n));
  const versions = functions.filter((n) => /Version$/.test(n)).sort((a, b) => a.length - b.length);
  const example =
    functions.find((n) => ['cuDriverGetVersion', 'cudaRuntimeGetVersion', 'nvmlSystemGetDriverVersion'].includes(n)) ??
    versions[0] ??
    functions[0] ??
    'configure';
  writeJson(join(dir, 'package.json'), {
    name,
    version,
    type: 'commonjs',
    description: `${title} for Node.js and TypeScript, CUDA ${e.release}: bindings generated from the CUDA headers, called through koffi`,
    keywords: ['cuda', 'nvidia', 'gpu', 'ffi', 'koffi', e.module, `cuda-${e.release}`],
    ...common(root),
    main: './dist/cjs/index.js',
    types: './dist/cjs/index.d.ts',
    exports: {
      '.': conditional('dist/esm/index', 'dist/cjs/index'),
      './raw': conditional('dist/esm/raw', 'dist/cjs/raw'),
      './types': conditional('dist/esm/types', 'dist/cjs/types'),
      './package.json': './package.json',
    },
    dependencies: { koffi: root.dependencies.koffi, [SUPPORT]: `^${root.version}` },
    publishConfig: { access: 'public' },
    cudaTs: { module: e.module, cudaRelease: e.release },
  });
  write(
    join(dir, 'README.md'),
    readme(
      root,
      `${name} ${version}`,
      `
${title}, generated from the CUDA ${e.release} headers. The version is \`${e.release}.<revision>\`: install \`${name}@~${e.release}.0\` to stay on the CUDA ${e.release} bindings. It depends on \`${SUPPORT}\` (library discovery, the lazy binder, \`CudaError\`), which every installed module shares.

\`\`\`js
import { ${example} } from '${name}';   // typed: throws a CudaError subclass, returns out-parameters
import * as raw from '${name}/raw';     // C-exact: returns the status code
\`\`\`

CommonJS works the same way (\`const { ${example} } = require('${name}')\`). A call loads the library on first use; when it cannot be found, the call throws \`CudaLibraryError\` listing every path tried (set \`${spec?.env ?? `CUDA_TS_${e.module.toUpperCase()}_LIBRARY`}\` to the file to choose one).`,
    ),
  );
}

function stageMain(root: RootPackage, dist: string, dir: string, sources: string[], modules: ModuleEntry[]): void {
  // Every import of the support folder becomes the support package: one copy of it, however packages
  // combine. `sources` are the objects layer's (src/), repository-relative.
  const both = (rel: string): void => {
    for (const ext of ['.js', '.d.ts']) {
      copy(join(dist, `${rel}${ext}`), join(dir, 'dist', `${rel}${ext}`), supportImports(rel));
    }
  };
  for (const s of sources) both(s);
  for (const e of modules) for (const file of moduleFiles(e)) both(`generated/${e.release}/${e.module}/${file}`);
  // The `cuda-ts/runtime-support` entry: the support package itself.
  write(
    join(dir, 'dist', `${SUPPORT_ENTRY}.js`),
    `'use strict';\n// cuda-ts/runtime-support is ${SUPPORT}: one CudaError class for cuda-ts and every ${SCOPE}/<module>.\nmodule.exports = require(${JSON.stringify(SUPPORT)});\n`,
  );
  write(join(dir, 'dist', `${SUPPORT_ENTRY}.d.ts`), `export * from ${JSON.stringify(SUPPORT)};\n`);
  copy(join(ROOT, 'bin', 'cuda-ts.js'), join(dir, 'bin', 'cuda-ts.js'));
  copy(join(ROOT, 'bin', 'cuda-ts-run.js'), join(dir, 'bin', 'cuda-ts-run.js'));
  for (const entry of ['src/index', SUPPORT_ENTRY, ...modules.flatMap((e) => LAYERS.map((l) => `generated/${e.release}/${e.module}/${l}`))]) {
    for (const ext of ['.js', '.d.ts']) copy(join(dist, 'esm', `${entry}${ext}`), join(dir, 'dist', 'esm', `${entry}${ext}`));
  }
  copy(join(dist, 'package.json'), join(dir, 'dist', 'package.json'));
  copy(join(dist, 'esm', 'package.json'), join(dir, 'dist', 'esm', 'package.json'));
  // The root package.json less what only the repository uses (scripts, dev tools, the generator's bin,
  // which is @cuda-ts/gen's), plus the support package as a dependency.
  const { scripts: _s, devDependencies: _d, bin: _b, private: _p, ...published } = root;
  writeJson(join(dir, 'package.json'), {
    ...published,
    // Stated in every package's manifest: Deno reads a .js file outside node_modules (a vendored or
    // unpacked package) as ESM unless the nearest package.json says "commonjs" (bin/ has none of its own).
    type: 'commonjs',
    bin: { 'cuda-ts': 'bin/cuda-ts.js', 'cuda-ts-run': 'bin/cuda-ts-run.js' },
    dependencies: { ...root.dependencies, [SUPPORT]: `^${root.version}` },
  });
  copy(join(ROOT, 'README.md'), join(dir, 'README.md'));
}

/** `sources` (compiled, relative to dist) and every file they require by relative path, transitively
 *  (the generator imports a few facts of the support folder, e.g. the minimum driver of each release). */
function withRelativeRequires(dist: string, sources: string[]): string[] {
  const seen = new Set<string>();
  const queue = [...sources];
  while (queue.length > 0) {
    const rel = queue.pop()!;
    if (seen.has(rel)) continue;
    seen.add(rel);
    const text = readFileSync(join(dist, `${rel}.js`), 'utf8');
    for (const m of text.matchAll(/require\("(\.\.?\/[^"]+)"\)/g)) {
      const target = relative(dist, resolve(dist, dirname(rel), m[1]))
        .split('\\')
        .join('/')
        .replace(/\.js$/, '');
      queue.push(existsSync(join(dist, `${target}.js`)) ? target : `${target}/index`);
    }
  }
  return [...seen].sort();
}

function stageGen(root: RootPackage, dist: string, dir: string, sources: string[]): void {
  for (const s of withRelativeRequires(dist, sources)) copy(join(dist, `${s}.js`), join(dir, 'dist', `${s}.js`));
  copy(join(ROOT, 'bin', 'cuda-ts-gen.js'), join(dir, 'bin', 'cuda-ts-gen.js'));
  writeJson(join(dir, 'dist', 'package.json'), { type: 'commonjs' });
  const zod = (root.devDependencies as Record<string, string> | undefined)?.zod ?? (root.dependencies as Record<string, string>).zod;
  if (!zod) throw new Error('package.json names no zod version (the generator validates its IR with zod)');
  writeJson(join(dir, 'package.json'), {
    name: `${SCOPE}/gen`,
    version: root.version,
    type: 'commonjs',
    description: "cuda-ts-gen: generates cuda-ts bindings from a CUDA toolkit's C headers (clang JSON AST → IR → TypeScript)",
    keywords: ['cuda', 'nvidia', 'bindings', 'generator', 'clang'],
    license: root.license,
    engines: root.engines,
    bin: { 'cuda-ts-gen': 'bin/cuda-ts-gen.js' },
    dependencies: { zod },
    publishConfig: { access: 'public' },
  });
  write(
    join(dir, 'README.md'),
    `# ${SCOPE}/gen

\`cuda-ts-gen\`, the generator of [cuda-ts](https://www.npmjs.com/package/cuda-ts): it reads a CUDA toolkit's C headers
with clang (\`clang\` or \`clang-19\` must be installed) and writes the IR (\`headers/<release>/<module>.json\`) and the
bindings (\`generated/<release>/<module>/\`) under \`--out\`.

\`\`\`sh
npm install cuda-ts && npm install --save-dev ${SCOPE}/gen
npx cuda-ts-gen --list                                   # the modules it knows
npx cuda-ts-gen --toolkit /usr/local/cuda --out cuda-bindings --modules driver,runtime
\`\`\`

Generate into a folder of the project that uses the bindings, which has \`cuda-ts\` installed, and import
the tree by path (\`./cuda-bindings/generated/<release>/driver\`). Its code imports \`${SUPPORT}\` by
name, which resolves to your project's copy: one \`CudaError\` class for \`cuda-ts\` and the tree. Do not
run \`npm install\` inside the tree (a second copy of the support package would make \`instanceof
CudaError\` false); the run's last line says which copy the tree uses. The published \`cuda-ts\` and
\`${SCOPE}/<module>\` packages already hold the bindings of the supported releases; generate when you need
another toolkit's. Needs ${nodeLines(root.engines)}. MIT licensed (LICENSE).
`,
  );
}

// ---------------------------------------------------------------------------------------------------

export function packModules(opts: PackOptions = {}): PackResult {
  const timings: Record<string, number> = {};
  const timed = <T>(step: string, f: () => T): T => {
    const t0 = Date.now();
    try {
      return f();
    } finally {
      timings[step] = (Date.now() - t0) / 1000;
    }
  };
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as RootPackage;
  const dist = resolve(opts.dist ?? join(ROOT, 'dist'));
  const out = resolve(opts.out ?? join(dist, 'packages'));
  const all = listModules();
  const sel = select(opts.only, all);
  // The support package ships the support folder; the main package src/ (compiled with it).
  const objectsSources = listSources('src');
  const supportSources = listSources(SUPPORT_DIR);
  const sources = [...(sel.main ? objectsSources : []), ...(sel.support || sel.main ? supportSources : [])];
  const genSources = sel.gen ? listSources('generator') : [];
  const mainModules = sel.main ? all.filter((e) => e.release === defaultRelease(root)) : [];
  const modules = [...mainModules, ...sel.modules.filter((e) => !mainModules.includes(e))];
  const entries = [
    ...(sel.main ? ['src/index'] : []),
    ...(sel.support || sel.main ? [SUPPORT_ENTRY] : []),
    ...modules.flatMap((e) => LAYERS.map((l) => `generated/${e.release}/${e.module}/${l}`)),
  ];

  if (opts.build !== false) {
    timed('tsc', () =>
      compile(dist, [...sources, ...genSources, ...modules.flatMap((e) => moduleFiles(e).map((f) => `generated/${e.release}/${e.module}/${f}`))]),
    );
    // one file per entry, as `npm run build` makes them (scripts/bundle.ts)
    timed('bundle', () => bundleTree(dist));
  }
  const names = timed('esm', () => {
    const n = exportNames(dist, entries);
    writeEsm(dist, n);
    return n;
  });
  if (opts.pack === false) return { packages: [], timings };

  const { revision: derived, prerelease } = moduleRevision(root.version);
  const revision = opts.revision ?? derived;
  // Only the packer's own files are removed from `out` (it may be a folder the caller named).
  mkdirSync(out, { recursive: true });
  for (const f of readdirSync(out)) if (f.endsWith('.tgz') || f === 'manifest.json') rmSync(join(out, f));
  const stage = join(out, '.stage');
  rmSync(stage, { recursive: true, force: true });
  const staged = timed('stage', () => stagePackages({ root, dist, stage, sel, all, objectsSources, supportSources, genSources, names, revision, prerelease }));

  // One `npm pack` for all staged folders; --json names each tarball.
  const packed = timed(
    'npm pack',
    () =>
      JSON.parse(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out, ...staged.map((s) => s.dir)])) as {
        name: string;
        version: string;
        filename: string;
      }[],
  );
  const packages: PackedPackage[] = staged.map((s) => {
    const p = packed.find((x) => x.name === s.name && x.version === s.version);
    if (!p) throw new Error(`npm pack did not report ${s.name}@${s.version}`);
    return { name: s.name, version: s.version, file: join(out, p.filename), ...(s.module ? { module: s.module } : {}) };
  });
  rmSync(stage, { recursive: true, force: true });
  writeJson(
    join(out, 'manifest.json'),
    packages.map((p) => ({ ...p, file: relative(out, p.file) })),
  );
  return { packages, timings };
}

interface StagePlan {
  root: RootPackage;
  dist: string;
  /** The folder each package is staged in, one sub-folder per package. */
  stage: string;
  sel: Selection;
  all: ModuleEntry[];
  objectsSources: string[];
  supportSources: string[];
  genSources: string[];
  names: Names;
  /** The patch number and pre-release suffix of module packages (moduleRevision). */
  revision: number;
  prerelease: string;
}

/** A package's staged folder, its name and version (and `<release>/<module>` for module packages). */
interface StagedPackage {
  dir: string;
  name: string;
  version: string;
  module?: string;
}

/** Stages the selected packages (a folder each, ready for `npm pack`) and names them. */
function stagePackages(plan: StagePlan): StagedPackage[] {
  const { root, dist, stage, sel, names } = plan;
  const staged: StagedPackage[] = [];
  if (sel.main) {
    const dir = join(stage, 'cuda-ts');
    stageMain(
      root,
      dist,
      dir,
      plan.objectsSources,
      plan.all.filter((e) => e.release === defaultRelease(root)),
    );
    staged.push({ dir, name: root.name, version: root.version });
  }
  if (sel.support) {
    const dir = join(stage, 'runtime-support');
    stageSupport(root, dist, dir, plan.supportSources, names);
    staged.push({ dir, name: SUPPORT, version: root.version });
  }
  if (sel.gen) {
    const dir = join(stage, 'gen');
    stageGen(root, dist, dir, plan.genSources);
    staged.push({ dir, name: `${SCOPE}/gen`, version: root.version });
  }
  for (const e of sel.modules) {
    const dir = join(stage, `${e.module}-${e.release}`);
    const version = `${e.release}.${plan.revision}${plan.prerelease}`;
    stageModule(root, dist, dir, e, version, names);
    staged.push({ dir, name: `${SCOPE}/${e.module}`, version, module: `${e.release}/${e.module}` });
  }
  for (const { dir } of staged) copy(join(ROOT, 'LICENSE'), join(dir, 'LICENSE'));
  return staged;
}

const USAGE = `usage: tsx scripts/pack-modules.ts [--only a,b] [--dist DIR] [--out DIR] [--no-build] [--no-pack] [--revision N]
  --only a,b     packages: cuda-ts, runtime-support, gen, <release>/<module> (13.0/driver), <module> (all
                 releases), <release> (all modules); cuda-ts and module packages bring runtime-support. Default: all
  --dist DIR     tsc output and ESM wrappers (default: dist/, the root package's build)
  --out DIR      tarballs and manifest.json (default: DIST/packages)
  --no-build     use the existing tsc output in DIST
  --no-pack      stop after the build and the ESM wrappers (what \`npm run build\` does)
  --revision N   patch number of module packages (default: from the root version, 0.1.0 → 100)`;

export function main(argv = process.argv.slice(2)): void {
  const opts: PackOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value\n${USAGE}`);
      return v;
    };
    if (a === '--only') opts.only = value().split(',');
    else if (a === '--dist') opts.dist = value();
    else if (a === '--out') opts.out = value();
    else if (a === '--no-build') opts.build = false;
    else if (a === '--no-pack') opts.pack = false;
    else if (a === '--revision') opts.revision = Number(value());
    else if (a === '--help' || a === '-h') {
      console.log(USAGE);
      return;
    } else throw new Error(`unknown argument ${a}\n${USAGE}`);
  }
  if (opts.revision !== undefined && !(Number.isInteger(opts.revision) && opts.revision >= 0)) throw new Error('--revision must be a whole number');
  const r = packModules(opts);
  for (const p of r.packages) console.log(`${p.name}@${p.version}  ${relative(process.cwd(), p.file)}`);
  console.log(
    `timings (s): ${Object.entries(r.timings)
      .map(([k, v]) => `${k} ${v.toFixed(1)}`)
      .join(', ')}`,
  );
}

if (require.main === module) {
  try {
    main();
  } catch (e) {
    console.error((e as Error).message);
    process.exit(1);
  }
}
