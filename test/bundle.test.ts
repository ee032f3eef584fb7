// scripts/bundle.ts: one file per entry, one instance per file, lazy files stay lazy.
import { chmodSync, existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { BUNDLE_BANNER, bundleEntry, bundleTree, distEntries, lazyReexports, loadFaster } from '../scripts/bundle';
import { SUPPORT_DIR, supportSpecifier } from '../generator/support-path';

let root: string;

function write(rel: string, text: string): void {
  const file = join(root, rel);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, text);
}

/** Runs `code` in a fresh node (require.cache starts empty) and returns what it prints, parsed. */
function run(code: string, env: Record<string, string> = {}): unknown {
  const r = spawnSync(process.execPath, ['-e', code], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, CUDA_TS_CODE_CACHE: join(root, 'cache'), ...env },
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'cuda-ts-bundle-'));
  // pkg/index.js requires a (top level) and b (inside a function); a requires c; c requires the
  // entry back (a cycle); ext/x.js lies outside the boundary; loads are counted on globalThis.
  write(
    'pkg/index.js',
    [
      '"use strict";',
      'globalThis.loads = (globalThis.loads || []).concat("index");',
      'const a_1 = require("./a");',
      'const x_1 = require("../ext/x");',
      'exports.a = a_1;',
      'exports.x = x_1;',
      'exports.text = "caf\u00e9 \u2014 \u{1F600}";',
      'exports.lazyB = () => require("./sub/b");',
      'exports.table = TABLE;',
      'const TABLE = `',
      'one|1',
      'two|2',
      '`;',
    ]
      .join('\n')
      .replace('exports.table = TABLE;\n', '') + '\nexports.table = TABLE;\n',
  );
  write(
    'pkg/a.js',
    '"use strict";\nglobalThis.loads = (globalThis.loads || []).concat("a");\nconst c_1 = require("./sub/c");\nexports.c = c_1;\nexports.file = __filename;\n',
  );
  write(
    'pkg/sub/c.js',
    '"use strict";\nglobalThis.loads = (globalThis.loads || []).concat("c");\nconst entry = require("..");\nexports.entrySeenEarly = typeof entry;\nexports.dir = __dirname;\n',
  );
  write('pkg/sub/b.js', '"use strict";\nglobalThis.loads = (globalThis.loads || []).concat("b");\nexports.c = require("./c");\n');
  write('ext/x.js', '"use strict";\nglobalThis.loads = (globalThis.loads || []).concat("x");\nexports.x = 1;\n');
  write('pkg/bad.js', '"use strict";\nconst f = require("./fails");\nexports.f = f;\n');
  write('pkg/fails.js', '"use strict";\nglobalThis.failsRan = (globalThis.failsRan || 0) + 1;\nthrow new Error("boom");\n');
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('bundleEntry', () => {
  it('inlines the eager graph inside the boundary, and nothing else', () => {
    const b = bundleEntry(root, { entry: 'pkg/index.js', boundary: 'pkg' })!;
    expect(b.files).toEqual(['index.js', 'a.js', 'sub/c.js']);
    expect(b.text.startsWith(BUNDLE_BANNER)).toBe(true);
    expect(b.bodyName).toBe('index.body.js');
    // outside the boundary and lazy requires stay real requires, relative to the bundle's folder
    expect(b.body).toContain('require("../ext/x")');
    expect(b.body).toContain('require("./sub/b")');
  });

  it('runs like the unbundled tree: same order, same values, one instance per file', () => {
    const before = run(
      `const m = require('./pkg'); const b = m.lazyB(); console.log(JSON.stringify({ loads: globalThis.loads, text: m.text, table: m.table, file: m.a.file, dir: m.a.c.dir, early: m.a.c.entrySeenEarly, sameC: b.c === m.a.c, sameA: require('./pkg/a') === m.a }))`,
    );
    bundleTree(root, [{ entry: 'pkg/index.js', boundary: 'pkg' }]);
    const after = run(
      `const m = require('./pkg'); const b = m.lazyB(); console.log(JSON.stringify({ loads: globalThis.loads, text: m.text, table: m.table, file: m.a.file, dir: m.a.c.dir, early: m.a.c.entrySeenEarly, sameC: b.c === m.a.c, sameA: require('./pkg/a') === m.a }))`,
    );
    expect(after).toEqual(before);
    expect(after).toMatchObject({ loads: ['index', 'a', 'c', 'x', 'b'], sameC: true, sameA: true, early: 'object' });
    // the bundle is ASCII, and the table became a plain string literal
    const text = readFileSync(join(root, 'pkg/index.body.js'), 'utf8');
    expect(/[^\x00-\x7f]/.test(text)).toBe(false);
    expect(text).toContain('const TABLE = `'); // not a table name the build converts: left as it is
  });

  it('uses an instance that is already loaded instead of its own copy', () => {
    bundleTree(root, [{ entry: 'pkg/index.js', boundary: 'pkg' }]);
    const r = run(`const a = require('./pkg/a'); const m = require('./pkg'); console.log(JSON.stringify({ same: m.a === a, loads: globalThis.loads }))`);
    // a.js (and c.js, which requires the entry: the bundle's real file) loaded from disk first
    expect(r).toEqual({ same: true, loads: ['a', 'c', 'index', 'x'] });
  });

  it('forgets a file whose code threw, as Node does, so the next require runs it again', () => {
    write(
      'pkg/entry2.js',
      '"use strict";\nexports.load = () => { try { require("./bad"); } catch (e) { return e.message; } };\nconst bad_1 = require("./bad");\n',
    );
    // the entry fails at import: nothing half-made stays in require.cache
    bundleTree(root, [{ entry: 'pkg/entry2.js', boundary: 'pkg' }]);
    const r = run(
      `let first; try { require('./pkg/entry2'); } catch (e) { first = e.message; } let second; try { require('./pkg/bad'); } catch (e) { second = e.message; } console.log(JSON.stringify({ first, second, ran: globalThis.failsRan }))`,
    );
    expect(r).toEqual({ first: 'boom', second: 'boom', ran: 2 });
  });

  it('under another module system (this jest) loads the entry as compiled, with one instance per file', () => {
    bundleTree(root, [{ entry: 'pkg/index.js', boundary: 'pkg' }]);
    expect(readFileSync(join(root, 'pkg/index.plain.js'), 'utf8')).toContain('require("./a")');
    // jest's require.cache is not Node's: the bundle could not share its instances, so it steps aside
    const m = require(join(root, 'pkg')) as { a: { c: unknown; file: string }; text: string; lazyB(): { c: unknown } };
    expect(require(join(root, 'pkg/a'))).toBe(m.a);
    expect(m.lazyB().c).toBe(m.a.c);
    expect(m.text).toBe('caf\u00e9 \u2014 \u{1F600}');
    expect(m.a.file).toBe(join(root, 'pkg/a.js'));
  });

  it('is imported from an ES module with every file whole', () => {
    // tsc's `export * from './parts'`: Node's ESM import reads such re-exports ahead of running a file
    write(
      'pkg2/index.js',
      [
        '"use strict";',
        'var __exportStar = function (m, e) { for (var p in m) if (p !== "default" && !Object.prototype.hasOwnProperty.call(e, p)) e[p] = m[p]; };',
        'Object.defineProperty(exports, "__esModule", { value: true });',
        '__exportStar(require("./parts"), exports);',
        '',
      ].join('\n'),
    );
    write('pkg2/parts.js', '"use strict";\nexports.X = 1;\nexports.Y = "two";\n');
    bundleTree(root, [{ entry: 'pkg2/index.js', boundary: 'pkg2' }]);
    writeFileSync(
      join(root, 'check.mjs'),
      "const m = await import('./pkg2/index.js'); const p = await import('./pkg2/parts.js'); console.log(JSON.stringify({ X: m.default.X, Y: m.default.Y, same: p.default.X === m.default.X }));\n",
    );
    const r = spawnSync(process.execPath, [join(root, 'check.mjs')], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, CUDA_TS_CODE_CACHE: join(root, 'cache') },
    });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ X: 1, Y: 'two', same: true });
  });

  it('does not bundle a bundle', () => {
    bundleTree(root, [{ entry: 'pkg/index.js', boundary: 'pkg' }]);
    expect(bundleEntry(root, { entry: 'pkg/index.js', boundary: 'pkg' })).toBeUndefined();
  });

  it('keeps an excluded folder out', () => {
    const b = bundleEntry(root, { entry: 'pkg/index.js', boundary: 'pkg', exclude: ['pkg/sub'] })!;
    expect(b.files).toEqual(['index.js', 'a.js']);
  });
});

// The code cache is V8's: Node and Deno write and read it. Bun (JavaScriptCore) has none, and its
// require.cache is not Node's, so there the bundle takes its plain entry, as under jest: the V8 tests are
// skipped under Bun (reported as skipped) and the test after them checks what Bun users get instead.
const v8 = !process.versions.bun;
(v8 ? describe : describe.skip)('the code cache', () => {
  const code = `const m = require('./pkg'); console.log(JSON.stringify({ text: m.text, c: m.a.c.entrySeenEarly }))`;
  const cacheFiles = (): string[] => (existsSync(join(root, 'cache')) ? readdirSync(join(root, 'cache')) : []);
  beforeEach(() => bundleTree(root, [{ entry: 'pkg/index.js', boundary: 'pkg' }]));

  it('is written by the first process, private to the user, and read by the next without rewriting it', () => {
    expect(run(code)).toEqual({ text: 'caf\u00e9 \u2014 \u{1F600}', c: 'object' });
    const files = cacheFiles();
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^[0-9a-f]{20}-v\d+\.\d+\.\d+-\w+-\w+\.v8$/);
    const file = join(root, 'cache', files[0]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, 'cache')).mode & 0o777).toBe(0o700);
    const before = statSync(file).mtimeMs;
    const bytes = readFileSync(file);
    expect(run(code)).toEqual({ text: 'caf\u00e9 \u2014 \u{1F600}', c: 'object' });
    expect(statSync(file).mtimeMs).toBe(before);
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });

  it('holds what the first process compiled up to its exit, not only its import', () => {
    // pkg's exports.lazyB runs after the import (a timer): its function is compiled then; a process
    // that never calls it writes less
    run(code);
    const importOnly = statSync(join(root, 'cache', cacheFiles()[0])).size;
    rmSync(join(root, 'cache'), { recursive: true });
    const later = `const m = require('./pkg'); setTimeout(() => { m.lazyB(); console.log(JSON.stringify(globalThis.loads)); }, 1);`;
    expect(run(later)).toEqual(['index', 'a', 'c', 'x', 'b']);
    expect(statSync(join(root, 'cache', cacheFiles()[0])).size).toBeGreaterThan(importOnly);
  });

  it("removes the data of an earlier build of the same file when it writes a new build's", () => {
    run(code);
    const [first] = cacheFiles();
    write('other/keep.v8', 'x'); // unrelated files stay
    writeFileSync(join(root, 'cache', 'notes.txt'), 'mine');
    write('pkg/index.js', readFileSync(join(root, 'pkg/index.plain.js'), 'utf8') + 'exports.more = 1;\n');
    bundleTree(root, [{ entry: 'pkg/index.js', boundary: 'pkg' }]);
    expect(run(code)).toEqual({ text: 'caf\u00e9 \u2014 \u{1F600}', c: 'object' });
    const now = cacheFiles();
    expect(now).toHaveLength(2);
    expect(now).toContain('notes.txt');
    expect(now).not.toContain(first);
    expect(now.find((f) => f.endsWith('.v8'))!.slice(20)).toBe(first.slice(20)); // same Node, flags, location
  });

  it('writes the caches of every bundle of a process from one exit listener', () => {
    bundleTree(root, [{ entry: 'ext/x.js', boundary: 'ext' }]);
    const both = `const before = process.listenerCount('exit'); require('./pkg'); require('./ext/x'); console.log(JSON.stringify(process.listenerCount('exit') - before))`;
    expect(run(both)).toBe(1);
    expect(cacheFiles()).toHaveLength(2);
  });

  it('compiles its body with one loader per process, shared by every bundle of the build', () => {
    bundleTree(root, [{ entry: 'ext/x.js', boundary: 'ext' }]);
    const loaders = `const loaders = () => Object.getOwnPropertySymbols(process).filter((s) => s.description.startsWith('cuda-ts.bundleLoader.')).map((s) => process[s]);`;
    const both = `${loaders} require('./pkg'); const one = loaders(); require('./ext/x'); const two = loaders(); console.log(JSON.stringify({ one: one.length, two: two.length, same: one[0] === two[0] }))`;
    expect(run(both)).toEqual({ one: 1, two: 1, same: true });
    expect(cacheFiles()).toHaveLength(2);
  });

  it('rejects damaged data and writes it again; the code runs the same', () => {
    run(code);
    const file = join(root, 'cache', cacheFiles()[0]);
    const good = readFileSync(file);
    writeFileSync(file, Buffer.alloc(good.length, 7), { mode: 0o600 });
    expect(run(code)).toEqual({ text: 'caf\u00e9 \u2014 \u{1F600}', c: 'object' });
    expect(readFileSync(file).equals(Buffer.alloc(good.length, 7))).toBe(false);
  });

  it('ignores a cache file that others may write (and replaces it with a private one)', () => {
    run(code);
    const file = join(root, 'cache', cacheFiles()[0]);
    writeFileSync(file, 'not V8 data');
    chmodSync(file, 0o666);
    expect(run(code)).toEqual({ text: 'caf\u00e9 \u2014 \u{1F600}', c: 'object' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'latin1')).not.toBe('not V8 data');
  });

  it('keeps data per location: a copy elsewhere gets its own, and its stack traces name its own files', () => {
    write('pkg/index.js', readFileSync(join(root, 'pkg/index.plain.js'), 'utf8') + 'exports.fail = () => { throw new Error("from the bundle"); };\n');
    bundleTree(root, [{ entry: 'pkg/index.js', boundary: 'pkg' }]);
    const copy = join(root, 'copy');
    mkdirSync(copy);
    for (const f of ['index.js', 'index.body.js', 'index.plain.js', 'a.js', 'sub/c.js', 'sub/b.js'])
      write(`copy/${f}`, readFileSync(join(root, 'pkg', f), 'utf8'));
    // the same node flags (-e and its code included) for both: only the location differs
    const code = `let s; try { require(process.env.DIR).fail(); } catch (e) { s = e.stack; } console.log(JSON.stringify(s.split('\\n')[1]))`;
    const where = (dir: string): string => run(code, { DIR: `./${dir}` }) as string;
    expect(where('pkg')).toContain(join(root, 'pkg', 'index.body.js'));
    expect(cacheFiles()).toHaveLength(1);
    expect(where('copy')).toContain(join(root, 'copy', 'index.body.js'));
    expect(cacheFiles()).toHaveLength(2);
  });

  it('is shared by processes with other eval code, and kept apart for other node flags', () => {
    run(code);
    run(`${code}; void 'another script'`);
    expect(cacheFiles()).toHaveLength(1);
    const r = spawnSync(process.execPath, ['--max-old-space-size=300', '-e', code], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, CUDA_TS_CODE_CACHE: join(root, 'cache') },
    });
    expect(JSON.parse(r.stdout)).toEqual({ text: 'caf\u00e9 \u2014 \u{1F600}', c: 'object' });
    expect(cacheFiles()).toHaveLength(2);
  });

  it('is off with CUDA_TS_CODE_CACHE=0', () => {
    // DENO_DIR: Deno's own cache goes elsewhere than the HOME this test watches (Node ignores it)
    expect(run(code, { CUDA_TS_CODE_CACHE: '0', HOME: join(root, 'home'), XDG_CACHE_HOME: '', DENO_DIR: join(root, 'deno') })).toEqual({
      text: 'caf\u00e9 \u2014 \u{1F600}',
      c: 'object',
    });
    expect(cacheFiles()).toEqual([]);
    expect(existsSync(join(root, 'home'))).toBe(false);
  });

  it('defaults to $XDG_CACHE_HOME/cuda-ts', () => {
    run(code, { CUDA_TS_CODE_CACHE: '', XDG_CACHE_HOME: join(root, 'xdg') });
    expect(readdirSync(join(root, 'xdg', 'cuda-ts'))).toHaveLength(1);
  });
});

if (process.versions.bun) {
  it('under Bun takes the plain entry: the same values and instances as unbundled, no code cache written', () => {
    const code = `const m = require('./pkg'); const b = m.lazyB(); console.log(JSON.stringify({ loads: globalThis.loads, text: m.text, sameC: b.c === m.a.c, sameA: require('./pkg/a') === m.a }))`;
    const before = run(code);
    bundleTree(root, [{ entry: 'pkg/index.js', boundary: 'pkg' }]);
    expect(run(code)).toEqual(before);
    expect(before).toEqual({ loads: ['index', 'a', 'c', 'x', 'b'], text: 'caf\u00e9 \u2014 \u{1F600}', sameC: true, sameA: true });
    expect(existsSync(join(root, 'cache'))).toBe(false);
  });
}

(v8 ? describe : describe.skip)('a file that a lazy re-export loads', () => {
  // objs/index.js re-exports Prog and Other lazily and shared eagerly; prog and other both require
  // helper (no entry of its own) and shared (inlined in the first bundle)
  const reexport = (v: string, spec: string, name: string): string =>
    `var ${v} = require("${spec}");\nObject.defineProperty(exports, "${name}", { enumerable: true, get: function () { return ${v}.${name}; } });\n`;
  const load = (name: string): string => `"use strict";\nglobalThis.loads = (globalThis.loads || []).concat("${name}");\n`;
  beforeEach(() => {
    write(
      'objs/index.js',
      `${load('index')}${reexport('p_1', './prog', 'Prog')}${reexport('o_1', './sub/other', 'Other')}exports.shared = require("./shared");\n`,
    );
    write('objs/shared.js', `${load('shared')}exports.id = {};\n`);
    write('objs/helper.js', `${load('helper')}exports.id = {};\n`);
    write('objs/prog.js', `${load('prog')}const h = require("./helper");\nconst s = require("./shared");\nexports.Prog = { h, s, file: __filename };\n`);
    write('objs/sub/other.js', `${load('other')}const h = require("../helper");\nexports.Other = { h };\n`);
  });
  const code = [
    "const m = require('./objs'); const before = globalThis.loads; const P = m.Prog; const O = m.Other;",
    'console.log(JSON.stringify({ before, loads: globalThis.loads, sameHelper: P.h === O.h, sameShared: P.s === m.shared,',
    "sameProg: require('./objs/prog').Prog === P, file: P.file, stub: require.cache[require.resolve('./objs/prog')].exports === require('./objs/prog') }))",
  ].join(' ');

  it('becomes a bundle entry of its own, inlining only what no other entry holds', () => {
    const made = bundleTree(root, [{ entry: 'objs/index.js', boundary: 'objs', lazyReexports: true }]);
    expect(made).toEqual([
      { entry: 'objs/index.js', files: 2 },
      { entry: 'objs/prog.js', files: 2 },
      { entry: 'objs/sub/other.js', files: 2 },
    ]);
    expect(readFileSync(join(root, 'objs/prog.js'), 'utf8').startsWith(BUNDLE_BANNER)).toBe(true);
    // helper in both lazy bundles (an inlined file above the entry's folder gets a '../' key); shared only in the first
    const other = readFileSync(join(root, 'objs/sub/other.body.js'), 'utf8');
    expect(other).toContain('"../helper.js": (function');
    expect(readFileSync(join(root, 'objs/prog.body.js'), 'utf8')).toContain('"helper.js": (function');
    expect(readFileSync(join(root, 'objs/prog.body.js'), 'utf8')).not.toContain('"shared.js"');
    expect(readFileSync(join(root, 'objs/index.body.js'), 'utf8')).not.toContain('"prog.js"');
  });

  it('gets and uses its own code cache, with one instance per file whoever loads it', () => {
    bundleTree(root, [{ entry: 'objs/index.js', boundary: 'objs', lazyReexports: true }]);
    const expected = {
      before: ['index', 'shared'],
      loads: ['index', 'shared', 'prog', 'helper', 'other'],
      sameHelper: true,
      sameShared: true,
      sameProg: true,
      file: join(root, 'objs/prog.js'),
      stub: true,
    };
    expect(run(code)).toEqual(expected);
    const hashOf = (body: string): string =>
      createHash('sha256')
        .update(readFileSync(join(root, body)))
        .digest('hex')
        .slice(0, 20);
    const cacheOf = (body: string): string => join(root, 'cache', readdirSync(join(root, 'cache')).find((f) => f.startsWith(`${hashOf(body)}-`))!);
    const files = ['objs/index.body.js', 'objs/prog.body.js', 'objs/sub/other.body.js'].map(cacheOf);
    expect(readdirSync(join(root, 'cache'))).toHaveLength(3);
    const mtimes = files.map((f) => statSync(f).mtimeMs);
    // the next process reads each cache, and V8 accepts it: nothing is written again
    const reads = `const fs = require('fs'); const read = fs.readFileSync; globalThis.cacheReads = []; fs.readFileSync = function (p, ...a) { if (String(p).endsWith('.v8')) globalThis.cacheReads.push(p); return read.call(this, p, ...a); };`;
    const second = run(`${reads} ${code.replace('console.log(JSON.stringify({', 'console.log(JSON.stringify({ cacheReads: globalThis.cacheReads,')}`) as {
      cacheReads: string[];
    };
    expect(second).toEqual({ ...expected, cacheReads: files });
    expect(files.map((f) => statSync(f).mtimeMs)).toEqual(mtimes);
  });

  it('loaded first, directly, is the same instance its re-export then gives', () => {
    bundleTree(root, [{ entry: 'objs/index.js', boundary: 'objs', lazyReexports: true }]);
    const first = `const P = require('./objs/prog').Prog; const m = require('./objs'); console.log(JSON.stringify({ same: m.Prog === P, sameShared: P.s === m.shared, loads: globalThis.loads }))`;
    expect(run(first)).toEqual({ same: true, sameShared: true, loads: ['prog', 'helper', 'shared', 'index'] });
  });

  it('under another module system (this jest) loads as compiled, with one instance per file', () => {
    bundleTree(root, [{ entry: 'objs/index.js', boundary: 'objs', lazyReexports: true }]);
    const m = require(join(root, 'objs')) as { Prog: { h: unknown; s: unknown }; Other: { h: unknown }; shared: unknown };
    expect(m.Prog.h).toBe(m.Other.h);
    expect(m.Prog.s).toBe(m.shared);
  });
});

describe('lazyReexports', () => {
  const compiled = [
    '"use strict";',
    'var a_1 = require("./a");',
    'Object.defineProperty(exports, "A", { enumerable: true, get: function () { return a_1.A; } });',
    'Object.defineProperty(exports, "B", { enumerable: true, get: function () { return a_1.B; } });',
    'var c_1 = require("./c");',
    'Object.defineProperty(exports, "C", { enumerable: true, get: function () { return c_1.C; } });',
    'c_1.sideEffect();',
    '',
  ].join('\n');

  it('moves a require used only by re-export getters into them', () => {
    const out = lazyReexports(compiled);
    expect(out).toContain('var a_1;\n');
    expect(out).toContain('get: function () { return (a_1 ??= require("./a")).A; }');
    expect(out).toContain('get: function () { return (a_1 ??= require("./a")).B; }');
  });

  it('keeps a require whose module is used otherwise', () => {
    const out = lazyReexports(compiled);
    expect(out).toContain('var c_1 = require("./c");');
    expect(out).toContain('return c_1.C;');
  });

  it('loads a re-exported file on the first read of one of its names', () => {
    write('lazy/index.js', lazyReexports(compiled.replace('c_1.sideEffect();\n', '').replace(/var c_1[^]*$/, '')));
    write('lazy/a.js', '"use strict";\nglobalThis.loads = (globalThis.loads || []).concat("a");\nexports.A = 1;\nexports.B = 2;\n');
    bundleTree(root, [{ entry: 'lazy/index.js', boundary: 'lazy', lazyReexports: true }]);
    const r = run(
      `const m = require('./lazy'); const before = globalThis.loads ?? []; const a = m.A; const b = m.B; console.log(JSON.stringify({ before, a, b, loads: globalThis.loads }))`,
    );
    expect(r).toEqual({ before: [], a: 1, b: 2, loads: ['a'] });
  });
});

describe('distEntries', () => {
  // a compiled tree in miniature: the support package, the objects layer and one module, each
  // requiring the support package the way the real tree does
  beforeEach(() => {
    write(`${SUPPORT_DIR}/index.js`, '"use strict";\nexports.errors = require("./errors");\n');
    write(`${SUPPORT_DIR}/errors.js`, '"use strict";\nexports.CudaError = class CudaError extends Error {};\n');
    write('src/index.js', `"use strict";\nexports.support = require("../${SUPPORT_DIR}");\nexports.part = require("./part");\n`);
    write('src/part.js', `"use strict";\nexports.support = require("../${SUPPORT_DIR}");\n`);
    write('generated/13.0/driver/index.js', `"use strict";\nexports.support = require(${JSON.stringify(supportSpecifier(0))});\n`);
  });

  it('bundles the support package, the objects layer and each module layer, the support package a boundary of its own', () => {
    expect(distEntries(root).map((e) => e.entry)).toEqual([`${SUPPORT_DIR}/index.js`, 'src/index.js', 'generated/13.0/driver/index.js']);
    const done = bundleTree(root);
    expect(done).toEqual([
      { entry: `${SUPPORT_DIR}/index.js`, files: 2 },
      { entry: 'src/index.js', files: 2 },
      { entry: 'generated/13.0/driver/index.js', files: 1 },
    ]);
    // the support package's code is in its own bundle only: the others require it, relative to their folder
    expect(readFileSync(join(root, 'src/index.body.js'), 'utf8')).toContain(`require("../${SUPPORT_DIR}")`);
    expect(readFileSync(join(root, 'src/index.body.js'), 'utf8')).not.toContain('CudaError');
    expect(readFileSync(join(root, 'generated/13.0/driver/index.body.js'), 'utf8')).toContain(`require("${supportSpecifier(0)}")`);
    const r = run(
      `const s = require('./${SUPPORT_DIR}'); console.log(JSON.stringify({ objects: require('./src').support === s && require('./src').part.support === s, driver: require('./generated/13.0/driver').support === s }))`,
    );
    expect(r).toEqual({ objects: true, driver: true });
  });
});

describe('loadFaster', () => {
  it('escapes non-ASCII characters and turns table templates into string literals with the same value', () => {
    const src = 'const ENUMS = `\nA|x=1\nB|y=2\n`;\nconst s = "\u00d7 \u2014 \u{1F600}";\nmodule.exports = { ENUMS, s, re: /\u2026/.test("a\u2026") };\n';
    const out = loadFaster(src);
    expect(/[^\x00-\x7f]/.test(out)).toBe(false);
    expect(out).toContain('const ENUMS = "\\nA|x=1\\nB|y=2\\n";');
    const evalIn = (code: string): unknown => {
      const module = { exports: {} as unknown };
      new Function('module', code)(module);
      return module.exports;
    };
    expect(evalIn(out)).toEqual(evalIn(src));
  });

  it('leaves a template with substitutions or escapes alone', () => {
    const src = 'const CHUNKS = `a${1}`;\nconst RECORDS = `a\\nb`;\n';
    expect(loadFaster(src)).toBe(src);
  });
});
