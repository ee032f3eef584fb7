// bundle: turns each entry of a compiled CommonJS tree into one file (`npm run build` runs it on dist/).
//
//   tsx scripts/bundle.ts [DIST]        (default: dist; bundles the entries listed by distEntries)
//
// Why: every file Node loads costs ~0.3–0.5 ms before its code runs (resolution, stat, realpath, read,
// wrapper compile), and an entry of cuda-ts reached 15–20 files at import. A bundle holds the entry and
// the files it requires at top level (its "eager graph") inside one folder — its package boundary — so
// an import reads one file. Files required lazily (a module's chunk files, the node:ffi backend) stay
// files of their own and load on first use, as before.
//
// Three files per entry: `<entry>.js` becomes a small loader that compiles `<entry>.body.js` (the
// bundle) with a private V8 code cache (see stub()); `<entry>.plain.js` keeps the entry as compiled,
// for module systems whose require.cache is not Node's (jest, bundlers).
//
// A file that a lazy re-export loads (lazyReexports: `Program` loads program.js) becomes a bundle
// entry of its own, with the same boundary (bundleTree finds them): its first use then compiles
// nothing the code cache holds either, while the objects entry's import stays as small as before.
// Its bundle inlines the files of its eager graph that are neither entries nor inlined in the first
// bundles (those load as themselves, from their own bundle or require.cache), so a helper that
// several lazy files require may lie in each of their bundles: whichever loads it first registers
// it, and the others find it in require.cache (one instance, as below).
//
// One instance per file, whatever loads first: each inlined file runs with a module object of its own,
// registered in require.cache under the file's real path before its code runs, exactly as Node's
// loader would. A later `require` of that path from anywhere (a chunk file, another bundle that
// inlined the same file, user code) gets the same exports, and a bundle that finds a file already in
// require.cache uses that instance instead of its own copy. So one CudaError class, one library cache.
//
// Package boundaries: the support folder (SUPPORT_DIR, @cuda-ts/runtime-support when packed) is one
// package and is never inlined elsewhere; each generated module folder is one package; the objects
// layer is src/. A require that leaves the bundle keeps a specifier relative to the bundle's folder, so
// scripts/pack-modules.ts rewrites the support package's as before.
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { SUPPORT_DIR } from '../generator/support-path';

/** The first line of a bundle; a tree whose entry starts with it is not bundled again. */
export const BUNDLE_BANNER = '// cuda-ts bundle (scripts/bundle.ts):';

/** One bundle to make: the entry file and the folder its inlined files must lie in. */
export interface BundleSpec {
  /** The entry, relative to the tree's root (e.g. `generated/13.0/driver/index.js`). */
  entry: string;
  /** The package boundary, relative to the root: only files inside it are inlined. */
  boundary: string;
  /** Sub-folders of the boundary that are other packages (never inlined). */
  exclude?: string[];
  /**
   * Files required only to re-export their names load when a name is first read (see
   * lazyReexports), and stay files of their own: the objects layer's entry then loads only what a
   * program touches.
   */
  lazyReexports?: boolean;
}

const REQUIRE = /\brequire\((["'])([^"'\n]+)\1\)/g;
/** A require that lazyReexports moved into getters. */
const LAZY_REQUIRE = /\?\?= require\((["'])(\.[^"'\n]+)\1\)/g;

/** What bundleEntry makes of one entry. */
export interface Bundle {
  /** The entry's new text: the loader (stub()). */
  text: string;
  /** The bundle's code, written to `bodyName` beside the entry. */
  body: string;
  bodyName: string;
  /** The entry as compiled, written to `plainName` beside it. */
  plain: string;
  plainName: string;
  /** The files inlined, as paths inside the entry's folder, the entry first. */
  files: string[];
  /** Files inside the boundary that lazy re-exports load and that are not inlined, relative to the root with '/'. */
  lazy: string[];
}

/** The file a relative specifier names, as Node's CommonJS resolution finds it (x, x.js, x/index.js). */
function resolveFile(fromDir: string, spec: string): string | undefined {
  const base = resolve(fromDir, spec);
  for (const c of [base, `${base}.js`, join(base, 'index.js')]) {
    if (existsSync(c) && statSync(c).isFile()) return c;
  }
  return undefined;
}

/** A require on an unindented line, outside a function, runs when its file loads: tsc prints top-level statements unindented. */
function isTopLevel(text: string, at: number): boolean {
  const lineStart = text.lastIndexOf('\n', at) + 1;
  if (text.startsWith('??= ', at - 4)) return false; // a lazy re-export (lazyReexports)
  if (/=>|\bfunction\b/.test(text.slice(lineStart, at))) return false; // in a one-line function
  return text.charCodeAt(lineStart) !== 32 && text.charCodeAt(lineStart) !== 9;
}

/**
 * tsc compiles `export { A } from './a'` to a top-level `var a_1 = require("./a")` and a getter
 * `get: function () { return a_1.A; }`. Where a module variable is used by such getters only, its
 * require moves into them (`(a_1 ??= require("./a")).A`): the file loads on the first read of one of
 * its names instead of at import. A variable used in any other way keeps its eager require.
 */
export function lazyReexports(text: string): string {
  let out = text;
  for (const m of text.matchAll(/^var (\w+) = require\(("\.[^"]+")\);\n/gm)) {
    const [line, v, spec] = m;
    const uses = out.match(new RegExp(`\\b${v}\\b`, 'g'))?.length ?? 0;
    const getter = new RegExp(`get: function \\(\\) \\{ return ${v}\\.(\\w+); \\}`, 'g');
    const getters = out.match(getter)?.length ?? 0;
    if (getters === 0 || uses !== getters + 1) continue;
    out = out.replace(line, `var ${v};\n`).replace(getter, (_, name: string) => `get: function () { return (${v} ??= require(${spec})).${name}; }`);
  }
  return out;
}

function inside(file: string, dir: string, exclude: string[]): boolean {
  const within = (d: string): boolean => file.startsWith(d.endsWith(sep) ? d : d + sep);
  return within(dir) && !exclude.some(within);
}

/** Forward slashes, and `./` in front of a specifier that does not leave the folder. */
function specifier(fromDir: string, file: string): string {
  let rel = relative(fromDir, file).split(sep).join('/');
  if (rel.endsWith('/index.js')) rel = rel.slice(0, -'/index.js'.length);
  else if (rel.endsWith('.js')) rel = rel.slice(0, -3);
  if (rel === 'index') rel = '.';
  return rel.startsWith('.') ? rel : `./${rel}`;
}

/**
 * The bundle of `spec` in the tree at `root`, as text: the entry's code with the files of its eager
 * graph inside the boundary inlined, less those in `notInlined` (absolute paths) and the files only
 * they require. Returns undefined when the entry is already a bundle.
 */
export function bundleEntry(root: string, spec: BundleSpec, notInlined?: ReadonlySet<string>): Bundle | undefined {
  const entry = join(root, spec.entry);
  const read = (file: string): string => (spec.lazyReexports ? lazyReexports(readFileSync(file, 'utf8')) : readFileSync(file, 'utf8'));
  const entryText = read(entry);
  if (entryText.startsWith(BUNDLE_BANNER) || entry.endsWith(BODY_SUFFIX) || entry.endsWith(PLAIN_SUFFIX)) return undefined;
  const boundary = join(root, spec.boundary);
  const exclude = (spec.exclude ?? []).map((e) => join(root, e));
  const bundleDir = dirname(entry);
  const texts = new Map<string, string>([[entry, entryText]]);

  // the eager graph inside the boundary, in first-required order
  const order: string[] = [entry];
  for (let i = 0; i < order.length; i++) {
    const file = order[i];
    const text = texts.get(file)!;
    for (const m of text.matchAll(REQUIRE)) {
      if (!m[2].startsWith('.') || !isTopLevel(text, m.index!)) continue;
      const dep = resolveFile(dirname(file), m[2]);
      if (!dep || texts.has(dep) || !inside(dep, boundary, exclude) || notInlined?.has(dep)) continue;
      texts.set(dep, read(dep));
      order.push(dep);
    }
  }
  // an inlined file may lie above the entry's folder (a lazily loaded `graph/index.js` inlines
  // `errors.js`): inside() kept it in the boundary, and the loader joins a `../` key with path.join
  const key = (file: string): string => relative(bundleDir, file).split(sep).join('/');

  // Every relative require: an inlined file → the bundle's loader; any other file → the real require,
  // with its specifier made relative to the bundle's folder (where the real require resolves from).
  const rewrite = (file: string): string =>
    texts.get(file)!.replace(REQUIRE, (whole, q: string, s: string) => {
      if (!s.startsWith('.')) return whole;
      const dep = resolveFile(dirname(file), s);
      if (!dep) return whole;
      if (texts.has(dep)) return `__cudaTsRequire(${JSON.stringify(key(dep))})`;
      return `require(${q}${specifier(bundleDir, dep)}${q})`;
    });

  const inlined = order.slice(1);
  const parts = bundleParts(
    inlined.map((file) => ({ key: key(file), code: rewrite(file) })),
    rewrite(entry),
  );
  // the function the entry calls, written whole: joining it to the file's text at run time made V8 copy
  // the text once more (flattening the joined string)
  const body = `(function (exports, require, module, __filename, __dirname) {\n${loadFaster(parts.join('\n'))}\n})\n`;
  const bodyName = `${basename(entry, '.js')}${BODY_SUFFIX}`;
  const plainName = `${basename(entry, '.js')}${PLAIN_SUFFIX}`;
  const text = stub(bodyName, plainName, createHash('sha256').update(body).digest('hex').slice(0, 20), inlined.length + 1);
  return {
    text,
    body,
    bodyName,
    plain: readFileSync(entry, 'utf8'),
    plainName,
    files: order.map(key),
    lazy: lazyFiles(root, texts, (f) => inside(f, boundary, exclude)),
  };
}

/** The files that lazy re-exports in `texts` load, inside the boundary and not inlined (see Bundle.lazy). */
function lazyFiles(root: string, texts: Map<string, string>, inBoundary: (file: string) => boolean): string[] {
  const out = new Set<string>();
  for (const [file, text] of texts) {
    for (const m of text.matchAll(LAZY_REQUIRE)) {
      const dep = resolveFile(dirname(file), m[2]);
      if (dep && !texts.has(dep) && inBoundary(dep)) out.add(relative(root, dep).split(sep).join('/'));
    }
  }
  return [...out];
}

/** A bundle's code, as lines: the inlined files (by key: their path inside the entry's folder) with
 *  the loader that runs each once under its own path, then the entry's own code. */
function bundleParts(inlined: { key: string; code: string }[], entryCode: string): string[] {
  return [
    `${BUNDLE_BANNER} ${inlined.length + 1} files in one; each keeps its own module object in require.cache. Generated; do not edit.`,
    "'use strict';",
    // the loader: a file runs once, under its own path, with its own module object (see the header)
    'const __cudaTsFiles = {',
    ...inlined.map((f) => `${JSON.stringify(f.key)}: (function (exports, module, __filename, __dirname) {\n${f.code}\n}),`),
    '};',
    // keys are relative paths with '/' inside the entry's folder: joined by hand where '/' is the
    // separator (path.join and _nodeModulePaths run cold, once per file, at every import)
    'const __cudaTsPaths = new Map();',
    "const __cudaTsSlash = require('path').sep === '/';",
    'function __cudaTsRequire(key) {',
    "  const slash = __cudaTsSlash && key[0] !== '.';",
    "  const file = slash ? __dirname + '/' + key : require('path').join(__dirname, key);",
    '  const cached = require.cache[file];',
    '  if (cached !== undefined) return cached.exports;',
    '  const Module = module.constructor;',
    "  const at = key.lastIndexOf('/');",
    "  const dir = !slash ? require('path').dirname(file) : at < 0 ? __dirname : __dirname + '/' + key.slice(0, at);",
    '  const m = new Module(file, module);',
    '  m.filename = file;',
    '  m.exports = __cudaTsExports();',
    '  let paths = __cudaTsPaths.get(dir);',
    '  if (paths === undefined) __cudaTsPaths.set(dir, (paths = Module._nodeModulePaths(dir)));',
    '  m.paths = paths.slice();',
    '  require.cache[file] = m;',
    '  try {',
    '    __cudaTsFiles[key].call(m.exports, m.exports, m, file, dir);',
    '  } catch (e) {',
    '    delete require.cache[file];',
    '    throw e;',
    '  }',
    '  m.loaded = true;',
    '  return m.exports;',
    '}',
    // Exports objects start in dictionary mode: a generated module defines hundreds of names, and
    // adding them one by one to a fast-mode object copies its descriptor array at every step.
    'function __cudaTsExports() {',
    '  const o = { a: 0, b: 0 };',
    '  delete o.a;',
    '  delete o.b;',
    '  return o;',
    '}',
    // the entry's own code last: it runs as this file, with this module
    '(function (exports) {',
    entryCode.replace(/^(["'])use strict\1;\n?/, ''),
    '}).call(module.exports = __cudaTsExports(), module.exports);',
  ];
}

/** The file beside an entry that holds its bundled code: `index.js` → `index.body.js`. */
export const BODY_SUFFIX = '.body.js';
/** The file beside an entry that keeps it as compiled (`index.plain.js`), for other module systems. */
export const PLAIN_SUFFIX = '.plain.js';

/**
 * The entry file: it compiles the bundle's code (`bodyName`, beside it) with a V8 code cache of its
 * own, so that a process after the first neither parses nor compiles what the import runs (measured:
 * parsing and compiling were ~45% of the instructions the driver's import adds to koffi's).
 *
 * The cache is private to the user: `$CUDA_TS_CODE_CACHE` (a folder; `0` turns it off), else
 * `$XDG_CACHE_HOME/cuda-ts`, else `~/.cache/cuda-ts`. A cache file is read only when it and its folder
 * belong to this user and nobody else may write them, since V8 trusts what it loads. It is named by
 * the bundle's content hash (fixed at build time: V8 itself checks only the source's length), the Node
 * version, the architecture, the node flags and the body's path; V8 rejects data made under other V8 flags, and a
 * rejected or missing cache is written again (to a temporary name, then renamed) when the process
 * exits, so that it holds every function the process compiled; the data of earlier builds of the
 * same file is removed then. Any failure only means compiling as Node would. The code that does
 * this (LOADER) is compiled once per process and shared by the bundles of the same build.
 */
function stub(bodyName: string, plainName: string, hash: string, files: number): string {
  return `${BUNDLE_BANNER} the code of ${files} files is in ${bodyName}, compiled here with a private code cache. Generated; do not edit.
'use strict';
// Under another module system (jest's registry, a bundler's require) the bundle could not share its
// files' instances with that system's modules: the entry as compiled, ${plainName}, loads instead.
// (A template literal: Node's ESM import reads \`module.exports = require('…')\` as a re-export, then
// reads that file's re-exports and puts an empty, unloaded module in require.cache for each.)
// (\`module.constructor\` is Node's Module: requiring 'module' costs more than the check.)
if (require.cache !== module.constructor._cache) module.exports = require(\`./${plainName}\`);
else (process[Symbol.for('${LOADER_KEY}')] ?? loader())(module, require, __dirname, '${bodyName}', '${hash}');

// one loader for every bundle of this build in the process: the first defines it, the others only
// parse it (each entry compiling a loader of its own made the first read of Program ~2 ms slower)
function loader() {
  const load = ${LOADER};
  Object.defineProperty(process, Symbol.for('${LOADER_KEY}'), { value: load });
  return load;
}
`;
}

/** What a bundle's entry runs to compile its body (stub()): the same text in every entry of a build. */
const LOADER = `function (module, require, __dirname, bodyName, hash) {
  const fs = require('fs');
  const file = __dirname + '/' + bodyName;
  const source = fs.readFileSync(file, 'latin1');
  const cache = (() => {
    const env = process.env.CUDA_TS_CODE_CACHE;
    if (env === '0' || typeof process.getuid !== 'function') return undefined;
    const base = process.env.XDG_CACHE_HOME || (process.env.HOME ? process.env.HOME + '/.cache' : '');
    const dir = env || (base && base + '/cuda-ts');
    if (!dir) return undefined;
    // the flags and this file's path name the data too: V8 rejects data made under other flags, and
    // code it accepts keeps the file name it was first compiled under (stack traces would show it).
    // Flags are the long options less an eval's code (\`node -e CODE\` puts CODE in execArgv).
    const flags = process.execArgv.filter((a, i, all) => a.startsWith('--') && !/^--(eval|print)(=|$)/.test(a) && !/^(-e|-p|--eval|--print)$/.test(all[i - 1] ?? ''));
    // Deno leaves execArgv empty; its V8 flags are on its command line (Node's flags become --v8-flags=…)
    if (process.versions.deno) try { flags.push(...fs.readFileSync('/proc/self/cmdline', 'latin1').split('\\0').filter((a) => a.startsWith('--v8-flags'))); } catch {}
    let where = 0;
    for (const c of flags.join(' ') + ' ' + file) where = (where * 31 + c.charCodeAt(0)) >>> 0;
    const suffix = '-' + process.version + '-' + process.arch + '-' + where.toString(36) + '.v8';
    return { dir, path: dir + '/' + hash + suffix, suffix };
  })();
  const own = (path) => {
    const s = fs.statSync(path);
    return s.uid === process.getuid() && (s.mode & 0o022) === 0;
  };
  let cachedData;
  if (cache !== undefined) {
    try {
      if (own(cache.dir) && own(cache.path)) cachedData = fs.readFileSync(cache.path);
    } catch {}
  }
  const script = new (require('vm').Script)(source, { filename: file, cachedData });
  script.runInThisContext().call(module.exports, module.exports, require, module, module.filename, __dirname);
  if (cache !== undefined && (cachedData === undefined || script.cachedDataRejected)) {
    // at exit: the cache then holds every function this process compiled, not only the import's
    // (a later process that finds the cache compiles nothing it covers, and the cache is not
    // rewritten while V8 accepts it). One exit listener for every bundle of the process (a program
    // loading all modules has dozens), found through a registered symbol.
    const writers = Symbol.for('cuda-ts.codeCacheWriters');
    if (process[writers] === undefined) {
      const list = [];
      Object.defineProperty(process, writers, { value: list });
      process.once('exit', () => list.forEach((write) => write()));
    }
    process[writers].push(() => {
      try {
        fs.mkdirSync(cache.dir, { recursive: true, mode: 0o700 });
        if (!own(cache.dir)) return;
        const temporary = cache.path + '.' + process.pid + '.tmp';
        fs.writeFileSync(temporary, script.createCachedData(), { mode: 0o600 });
        fs.renameSync(temporary, cache.path);
        // the data of earlier builds of this file (same location, flags and Node; another hash)
        // is never read again: removed, so the folder does not grow with every update
        for (const name of fs.readdirSync(cache.dir)) {
          if (name.endsWith(cache.suffix) && /^[0-9a-f]{20}-/.test(name) && !name.startsWith(hash + '-')) fs.unlinkSync(cache.dir + '/' + name);
        }
      } catch {}
    });
  }
}`;
/** The loader's name on \`process\`: a build's loaders are shared, another text is another name. */
const LOADER_KEY = `cuda-ts.bundleLoader.${createHash('sha256').update(LOADER).digest('hex').slice(0, 12)}`;

/**
 * What V8 parses fastest, with the same meaning: (1) ASCII only — one character outside Latin-1 makes
 * V8 hold and scan the whole file as UTF-16 (twice the memory, a slower scanner), so every non-ASCII
 * character becomes a `\\uXXXX` escape (they occur only in string, template and regex literals: the
 * build strips comments); (2) the generated table strings (`const ENUMS = \`…\``, RECORDS, FUNCTIONS,
 * CHUNKS: multi-line template literals without substitutions) become plain string literals, which
 * V8 scans several times faster than a template span.
 */
export function loadFaster(text: string): string {
  const tables = text.replace(
    /\b((?:const|var|let) (?:ENUMS|RECORDS|FUNCTIONS|CHUNKS) = )`([^`\\$]*)`;/g,
    (_, head: string, body: string) => `${head}${JSON.stringify(body)};`,
  );
  return tables.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The entries of a dist/ tree: the support code, the objects layer and each module's three entries. */
export function distEntries(root: string): BundleSpec[] {
  const out: BundleSpec[] = [];
  if (existsSync(join(root, SUPPORT_DIR, 'index.js'))) out.push({ entry: `${SUPPORT_DIR}/index.js`, boundary: SUPPORT_DIR });
  if (existsSync(join(root, 'src/index.js'))) out.push({ entry: 'src/index.js', boundary: 'src', lazyReexports: true });
  const gen = join(root, 'generated');
  if (existsSync(gen)) {
    for (const release of readdirSync(gen).sort()) {
      for (const mod of readdirSync(join(gen, release)).sort()) {
        const dir = `generated/${release}/${mod}`;
        for (const layer of ['index.js', 'raw.js', 'types.js']) {
          if (existsSync(join(root, dir, layer))) out.push({ entry: `${dir}/${layer}`, boundary: dir });
        }
      }
    }
  }
  return out;
}

/**
 * Bundles `specs` in the tree at `root` in place, and each file their lazy re-exports load (Bundle.lazy)
 * as an entry of its own, with the same boundary. Every bundle is made from the files as they were
 * (all are read before any is written), so bundles never contain bundles.
 * @returns the entries written and how many files each holds
 */
export function bundleTree(root: string, specs: BundleSpec[] = distEntries(root)): { entry: string; files: number }[] {
  const made = specs.map((s) => ({ s, b: bundleEntry(root, s) }));
  // the lazily loaded files, found through the lazy re-exports of every bundle's whole graph
  const lazy: BundleSpec[] = [];
  const queued = new Set(specs.map((s) => s.entry));
  for (let i = 0; i < made.length + lazy.length; i++) {
    const s = i < made.length ? made[i].s : lazy[i - made.length];
    const b = i < made.length ? made[i].b : bundleEntry(root, s);
    for (const entry of b?.lazy ?? []) {
      if (!queued.has(entry)) lazy.push({ entry, boundary: s.boundary, exclude: s.exclude, lazyReexports: true });
      queued.add(entry);
    }
  }
  // each inlines what no entry and no first bundle holds
  const held = new Set([...queued].map((e) => resolve(root, e)));
  for (const { s, b } of made) b?.files.forEach((f) => held.add(resolve(root, dirname(s.entry), f)));
  for (const s of lazy) {
    const own = resolve(root, s.entry);
    made.push({ s, b: bundleEntry(root, s, new Set([...held].filter((f) => f !== own))) });
  }
  const out: { entry: string; files: number }[] = [];
  for (const { s, b } of made) {
    if (!b) continue;
    writeFileSync(join(root, dirname(s.entry), b.bodyName), b.body);
    writeFileSync(join(root, dirname(s.entry), b.plainName), b.plain);
    writeFileSync(join(root, s.entry), b.text);
    out.push({ entry: s.entry, files: b.files.length });
  }
  return out;
}

if (require.main === module) {
  const root = resolve(process.argv[2] ?? 'dist');
  const done = bundleTree(root);
  const files = done.reduce((n, d) => n + d.files, 0);
  console.log(`bundle: ${done.length} entries of ${root} bundled (${files} files in them)`);
}
