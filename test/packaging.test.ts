// Packaging, as a user gets the packages: runs scripts/pack-modules.ts for the support package,
// @cuda-ts/driver and @cuda-ts/nvrtc (CUDA 13.0), the main cuda-ts package and @cuda-ts/gen, installs
// combinations of the tarballs into empty projects without the network (koffi, its prebuilt binary and
// zod are packed from node_modules; the npm cache is a fresh empty folder, and --offline forbids the
// registry), then imports every entry point from ESM (.mjs) and CommonJS (.cjs) in child node
// processes, runs both bins, checks one CudaError class however the packages combine, and type-checks
// a small file under moduleResolution node16 and bundler, with TypeScript 5 and TypeScript 7. No GPU: importing must load no CUDA library,
// and calls fail with CudaLibraryError because the library variables name a file that is not a library.
// Slow (a tsc build and four npm installs): it runs in .ci/run and `npm run test:packaging`, not `npm test`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PackedPackage } from '../scripts/pack-modules';
import { SUPPORT_DIR } from '../generator/support-path';
import { SYNTHETIC_RELEASE, writeSyntheticToolkit } from './generator/synthetic-toolkit';

const ROOT = join(__dirname, '..');
const MODULES = join(ROOT, 'node_modules');

function attempt(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (exit ${r.status}${r.error ? `, ${r.error.message}` : ''})\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** Every entry point checked: the export names that must be there and their typeof. */
const ENTRIES: Record<string, Record<string, string>> = {
  '@cuda-ts/runtime-support': { CudaError: 'function', CudaLibraryError: 'function', loadLibrary: 'function', Binder: 'function' },
  '@cuda-ts/driver': {
    cuInit: 'function',
    cuDeviceGet: 'function',
    cuMemAlloc: 'function',
    DriverError: 'function',
    CUresult: 'object',
    configure: 'function',
  },
  '@cuda-ts/driver/raw': { cuInit: 'function', cuDriverGetVersion: 'function' },
  '@cuda-ts/driver/types': { CUresult: 'object', CUDA_RELEASE: 'string' },
  '@cuda-ts/nvrtc': { nvrtcVersion: 'function', nvrtcCreateProgram: 'function', NvrtcError: 'function' },
  '@cuda-ts/nvrtc/raw': { nvrtcVersion: 'function' },
  'cuda-ts': { cuInit: 'function' },
  'cuda-ts/driver': { cuInit: 'function', CUDA_RELEASE: 'string' },
  'cuda-ts/runtime': { cudaRuntimeGetVersion: 'function' },
  'cuda-ts/13.0/driver': { cuInit: 'function', CUDA_RELEASE: 'string' },
  'cuda-ts/13.0/driver/raw': { cuInit: 'function' },
  'cuda-ts/13.0/nvrtc': { nvrtcVersion: 'function' },
  'cuda-ts/13.0/cublas/types': { CUDA_RELEASE: 'string' },
  'cuda-ts/objects': { Device: 'function', Stream: 'function', DeviceBuffer: 'function', launch: 'function', CudaError: 'function' },
  'cuda-ts/runtime-support': { CudaError: 'function' },
};

/** The child's checks, the same for both module systems: `load` is `require` or `import()`. */
function childScript(kind: 'esm' | 'cjs'): string {
  const body = `
  const entries = JSON.parse(process.argv[2]);
  const report = { types: {}, releases: {}, mapped: [], errors: {}, shared: {} };
  const mods = {};
  for (const spec of Object.keys(entries)) {
    const m = await load(spec);
    mods[spec] = m;
    report.types[spec] = Object.fromEntries(Object.keys(entries[spec]).map((n) => [n, typeof m[n]]));
  }
  report.releases = { driver: mods['cuda-ts/driver'].CUDA_RELEASE, pinned: mods['cuda-ts/13.0/driver'].CUDA_RELEASE, pkg: mods['@cuda-ts/driver/types'].CUDA_RELEASE };
  // Importing loaded no CUDA library.
  if (process.platform === 'linux') {
    report.mapped = require('node:fs').readFileSync('/proc/self/maps', 'utf8').split('\\n')
      .filter((l) => /lib(cuda|cudart|nvrtc|nvJitLink|cublas)[^/]*\\.so/.test(l)).map((l) => l.trim());
  }
  // A call loads the library: here a file that is not one, so CudaLibraryError from the one support instance.
  const support = mods['@cuda-ts/runtime-support'];
  const call = (name, f) => {
    try { f(); report.errors[name] = 'no error'; }
    catch (e) { report.errors[name] = { name: e.name, code: e.code, supportInstance: e instanceof support.CudaError, mainInstance: e instanceof mods['cuda-ts/runtime-support'].CudaError }; }
  };
  call('@cuda-ts/driver cuInit', () => mods['@cuda-ts/driver'].cuInit(0));
  call('@cuda-ts/nvrtc nvrtcVersion', () => mods['@cuda-ts/nvrtc'].nvrtcVersion());
  call('cuda-ts/driver cuInit', () => mods['cuda-ts/driver'].cuInit(0));
  // import and require give the same objects (the ESM entries wrap the CommonJS build). Functions are
  // lazy stubs until their first call replaces them on the CommonJS exports (the ESM names keep the
  // stub, which calls the same function), so the module's binder is what proves one instance.
  report.shared = {
    driver: require('@cuda-ts/driver').binder === mods['@cuda-ts/driver'].binder && require('@cuda-ts/driver').DriverError === mods['@cuda-ts/driver'].DriverError,
    support: require('@cuda-ts/runtime-support').CudaError === support.CudaError,
    driverUsesSupport: Object.getPrototypeOf(mods['@cuda-ts/driver'].DriverError) === support.CudaError,
    objects: require('cuda-ts/objects').Device === mods['cuda-ts/objects'].Device,
    objectsUseMainSupport: mods['cuda-ts/objects'].CudaError === mods['cuda-ts/runtime-support'].CudaError,
    mainIsSupport: mods['cuda-ts/runtime-support'].CudaError === support.CudaError,
  };
  process.stdout.write(JSON.stringify(report));`;
  return kind === 'esm'
    ? `import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\nconst load = (s) => import(s);\n${body}\n`
    : `'use strict';\nconst load = async (s) => require(s);\n(async () => {${body}\n})().catch((e) => { console.error(e); process.exit(1); });\n`;
}

const TYPECHECK = {
  esm: `import { cuInit, cuDeviceGet, DriverError, CUresult } from '@cuda-ts/driver';
import * as raw from '@cuda-ts/driver/raw';
import { nvrtcVersion } from '@cuda-ts/nvrtc';
import { CudaError } from '@cuda-ts/runtime-support';
import * as cu from 'cuda-ts/driver';
import * as cu130 from 'cuda-ts/13.0/driver';
import { cuInit as rawInit } from 'cuda-ts/13.0/driver/raw';
import { Device, DeviceBuffer } from 'cuda-ts/objects';
const init: (flags: number) => void = cuInit;
const status: CUresult = raw.cuInit(0);
const version: { major: number; minor: number } = nvrtcVersion();
const err: CudaError = new DriverError('cuInit', 1);
const release: '13.0' | string = cu.CUDA_RELEASE;
const init130: (flags: number) => void = cu130.cuInit;
const code: number = rawInit(0);
// @ts-expect-error cuInit takes a number (the types are real, not any)
cuInit('0');
export { init, status, version, err, release, init130, code, cuDeviceGet, Device, DeviceBuffer };
`,
  cjs: `import driver = require('@cuda-ts/driver');
import raw = require('@cuda-ts/driver/raw');
import objects = require('cuda-ts/objects');
import support = require('cuda-ts/runtime-support');
const init: (flags: number) => void = driver.cuInit;
const status: number = raw.cuInit(0);
const device: typeof objects.Device = objects.Device;
const errorClass: typeof support.CudaError = support.CudaError;
// @ts-expect-error cuInit takes a number
driver.cuInit('0');
export { init, status, device, errorClass };
`,
};

/** `file(line,col): error TS1479|TS1542: …` at an import of koffi (see the type-check test). */
function isKoffiFormatError(line: string): boolean {
  const m = /^(.+?)\((\d+),\d+\): error TS(1479|1542):/.exec(line);
  if (!m) return false;
  if (m[3] === '1479') return line.includes('import("koffi")');
  const source = readFileSync(join(PROJECT_OF_ERRORS.dir, m[1]), 'utf8').split('\n')[Number(m[2]) - 1] ?? '';
  return /["']koffi["']/.test(source);
}
const PROJECT_OF_ERRORS = { dir: '' };

/** The TypeScript compilers a consumer project is checked with: the repository's (5.x) and TypeScript 7
 *  (native; what new users get), from the `typescript7` devDependency or else through npx. */
const COMPILERS: Record<'tsc5' | 'tsc7', () => { cmd: string; args: string[] }> = {
  tsc5: () => ({ cmd: process.execPath, args: [join(MODULES, 'typescript', 'bin', 'tsc')] }),
  tsc7: () => {
    const bin = join(MODULES, 'typescript7', 'bin', 'tsc');
    return existsSync(bin) ? { cmd: process.execPath, args: [bin] } : { cmd: 'npx', args: ['-y', '-p', 'typescript@7.0.2', 'tsc'] };
  },
};

describe('packages: pack, install offline, import from ESM and CommonJS, type-check', () => {
  let tmp = '';
  let project = '';
  let packages: PackedPackage[] = [];
  let vendor: string[] = [];
  let env: NodeJS.ProcessEnv = {};
  const timings: Record<string, number> = {};
  const tarball = (name: string): string => {
    const p = packages.find((x) => x.name === name && x.module !== '12.6/driver');
    if (!p) throw new Error(`no tarball for ${name}`);
    return p.file;
  };
  let tsxVendor: string[] = [];
  /** `npm pack` of folders of node_modules into `dest`; the tarballs. */
  const packFrom = (sources: string[], dest: string): string[] => {
    mkdirSync(dest);
    run('npm', ['pack', '--ignore-scripts', '--pack-destination', dest, ...sources], tmp);
    return readdirSync(dest)
      .filter((f) => f.endsWith('.tgz'))
      .map((f) => join(dest, f));
  };
  const npmInstall = (dir: string, tarballs: string[]): string =>
    run('npm', ['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--cache', join(tmp, 'npm-cache'), ...tarballs], dir);
  /** A fresh project (`npm init -y`, as a user makes one) with `tarballs` (and the vendored koffi, zod) installed offline; its path. */
  const install = (name: string, tarballs: string[]): string => {
    const dir = join(tmp, name);
    mkdirSync(dir);
    run('npm', ['init', '-y', '--offline', '--cache', join(tmp, 'npm-cache')], dir);
    npmInstall(dir, [...tarballs, ...vendor]);
    return dir;
  };

  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'cuda-ts-packaging-'));
    let t0 = Date.now();
    // The packer, as `npm run pack:modules` runs it (tsx), on a subset; tsc writes under tmp.
    const tsx = require.resolve('tsx/cli');
    run(
      process.execPath,
      [tsx, 'scripts/pack-modules.ts', '--only', 'cuda-ts,gen,13.0/driver,13.0/nvrtc,12.6/driver', '--dist', join(tmp, 'dist'), '--out', join(tmp, 'packages')],
      ROOT,
    );
    packages = (JSON.parse(readFileSync(join(tmp, 'packages', 'manifest.json'), 'utf8')) as PackedPackage[]).map((p) => ({
      ...p,
      file: join(tmp, 'packages', p.file),
    }));
    timings.pack = Date.now() - t0;

    // koffi and its prebuilt binary (@koromix/koffi-<platform>), and zod (@cuda-ts/gen's dependency),
    // as tarballs from node_modules, in a folder of their own.
    t0 = Date.now();
    const sources = [join(MODULES, 'koffi'), join(MODULES, 'zod')];
    const koromix = join(MODULES, '@koromix');
    if (existsSync(koromix)) for (const d of readdirSync(koromix)) sources.push(join(koromix, d));
    vendor = packFrom(sources, join(tmp, 'vendor'));
    // tsx and esbuild (with its platform binary), installed only where a test adds them
    const esbuild = join(MODULES, '@esbuild');
    tsxVendor = packFrom(
      [join(MODULES, 'tsx'), join(MODULES, 'esbuild'), ...(existsSync(esbuild) ? readdirSync(esbuild).map((d) => join(esbuild, d)) : [])],
      join(tmp, 'vendor-tsx'),
    );

    // --offline with an empty cache: any registry request fails. --ignore-scripts: nothing needs one.
    // every package but the 12.6 driver (one @cuda-ts/driver per project; the pinning test installs it)
    project = install(
      'project',
      packages.filter((p) => p.module !== '12.6/driver').map((p) => p.file),
    );
    PROJECT_OF_ERRORS.dir = project;
    timings.install = Date.now() - t0;

    const notALibrary = join(tmp, 'not-a-library.so');
    writeFileSync(notALibrary, 'not a shared library\n');
    env = { ...process.env, CUDA_TS_DRIVER_LIBRARY: notALibrary, CUDA_TS_NVRTC_LIBRARY: notALibrary, NODE_PATH: '' };
  }, 900_000);

  afterAll(() => {
    if (tmp && !process.env.CUDA_TS_KEEP_PACKAGING) rmSync(tmp, { recursive: true, force: true });
    if (process.env.CUDA_TS_TEST_VERBOSE) process.stderr.write(`packaging timings (ms): ${JSON.stringify(timings)}\n`);
  });

  test('the packer made the support, module and main packages with the right versions and dependencies', () => {
    const byName = Object.fromEntries(packages.filter((p) => p.module !== '12.6/driver').map((p) => [p.name, p]));
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(packages.map((p) => p.module ?? p.name).sort()).toEqual([
      '12.6/driver',
      '13.0/driver',
      '13.0/nvrtc',
      '@cuda-ts/gen',
      '@cuda-ts/runtime-support',
      'cuda-ts',
    ]);
    expect(byName['@cuda-ts/driver'].version).toMatch(/^13\.0\.\d+/);
    expect(packages.find((p) => p.module === '12.6/driver')?.version).toMatch(/^12\.6\.\d+/);
    expect(byName['@cuda-ts/nvrtc'].version).toBe(byName['@cuda-ts/driver'].version);
    expect(byName['cuda-ts'].version).toBe(root.version);
    for (const p of packages) expect(statSync(p.file).size).toBeGreaterThan(0);

    const installed = (name: string) => JSON.parse(readFileSync(join(project, 'node_modules', name, 'package.json'), 'utf8'));
    for (const name of ['@cuda-ts/driver', '@cuda-ts/nvrtc']) {
      const pkg = installed(name);
      expect(Object.keys(pkg.dependencies).sort()).toEqual(['@cuda-ts/runtime-support', 'koffi']);
      expect(pkg.sideEffects).toBe(false);
      expect(pkg.scripts).toBeUndefined();
    }
    expect(Object.keys(installed('@cuda-ts/runtime-support').dependencies)).toEqual(['koffi']);
    const main = installed('cuda-ts');
    expect(main.exports).toEqual(root.exports);
    // cuda-ts depends on the support package instead of bundling a copy of it.
    expect(main.dependencies).toEqual({ ...root.dependencies, '@cuda-ts/runtime-support': `^${root.version}` });
    expect(main.bin).toEqual({ 'cuda-ts': 'bin/cuda-ts.js', 'cuda-ts-run': 'bin/cuda-ts-run.js' });
    expect(main.engines).toEqual(root.engines);
    expect(main.scripts).toBeUndefined();
    expect(main.devDependencies).toBeUndefined();
    const gen = installed('@cuda-ts/gen');
    expect(gen.bin).toEqual({ 'cuda-ts-gen': 'bin/cuda-ts-gen.js' });
    expect(Object.keys(gen.dependencies)).toEqual(['zod']);
    // Every manifest says "commonjs": Deno reads a .js file (bin/cuda-ts.js) of a package unpacked outside
    // node_modules as ESM without it ("require is not defined"); the ESM builds carry their own "module".
    for (const name of new Set(packages.map((p) => p.name))) expect({ name, type: installed(name).type }).toEqual({ name, type: 'commonjs' });
    expect(JSON.parse(readFileSync(join(project, 'node_modules/cuda-ts/dist/esm/package.json'), 'utf8')).type).toBe('module');
  });

  test('every package carries the LICENSE, and each README names what that package has', () => {
    const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} cuda-ts contributors\n/);
    for (const p of packages)
      expect({ name: p.name, license: readFileSync(join(project, 'node_modules', p.name, 'LICENSE'), 'utf8') }).toEqual({ name: p.name, license });
    for (const name of ['@cuda-ts/driver', '@cuda-ts/nvrtc']) {
      const text = readFileSync(join(project, 'node_modules', name, 'README.md'), 'utf8');
      const example = /import \{ (\w+) \} from '([^']+)'/.exec(text);
      expect(example?.[2]).toBe(name);
      // The README's example is a real function of the package.
      const exported = run(
        process.execPath,
        ['-e', `process.stdout.write(typeof require(${JSON.stringify(name)})[${JSON.stringify(example?.[1])}])`],
        project,
        env,
      );
      expect({ name, example: example?.[1], exported }).toEqual({ name, example: example?.[1], exported: 'function' });
      expect(text).toContain('@cuda-ts/runtime-support');
      expect(text).not.toContain('…');
    }
    const engines = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).engines.node as string;
    const majors = [...engines.matchAll(/\^(\d+)/g)].map((m) => m[1]);
    for (const name of ['@cuda-ts/driver', '@cuda-ts/runtime-support', '@cuda-ts/gen']) {
      const text = readFileSync(join(project, 'node_modules', name, 'README.md'), 'utf8');
      for (const major of majors) expect({ name, mentions: text.includes(major) }).toEqual({ name, mentions: true });
    }
  });

  test(`cuda-ts ships no copy of the support code: its ${SUPPORT_DIR}/ is one re-export of the support package`, () => {
    const dist = join(project, 'node_modules/cuda-ts/dist');
    // the compiled layout: the objects layer, the support entry, the modules, the ESM wrappers
    expect(readdirSync(dist).sort()).toEqual(['esm', 'generated', 'package.json', 'src', SUPPORT_DIR].sort());
    const supportDir = join(dist, SUPPORT_DIR);
    expect(readdirSync(supportDir).sort()).toEqual(['index.d.ts', 'index.js']);
    expect(readFileSync(join(supportDir, 'index.js'), 'utf8')).toContain('require("@cuda-ts/runtime-support")');
    // no relative import of the support folder (nor of src/runtime, where it was) is left
    const relativeSupport = new RegExp(`["'](?:\\.\\.?/)+(?:${SUPPORT_DIR}|(?:src/)?runtime)(?:/[^"']*)?["']`);
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const full = join(dir, e.name);
        if (e.isDirectory()) walk(full);
        else if (/\.(js|d\.ts)$/.test(e.name) && relativeSupport.test(readFileSync(full, 'utf8'))) offenders.push(full);
      }
    };
    walk(join(dist, 'src'));
    walk(join(dist, 'generated'));
    expect(offenders).toEqual([]);
  });

  test('the bins work as installed: `cuda-ts doctor` reports and exits 0/1, `cuda-ts-gen --list` lists the catalog', () => {
    const doctor = attempt(process.execPath, [join(project, 'node_modules/.bin/cuda-ts'), 'doctor', '--json'], project, { ...process.env, NODE_PATH: '' });
    expect([0, 1]).toContain(doctor.status);
    expect(doctor.stderr).toBe('');
    const report = JSON.parse(doctor.stdout);
    expect(report.releases.map((r: { release: string }) => r.release)).toEqual(['13.0']);
    expect(report.usable).toBe(doctor.status === 0);
    const launcher = attempt(process.execPath, [join(project, 'node_modules/.bin/cuda-ts-run'), '--help'], project, { ...process.env, NODE_PATH: '' });
    expect(`${launcher.stdout}${launcher.stderr}`).toMatch(/--nproc-per-node/);
    const gen = attempt(process.execPath, [join(project, 'node_modules/.bin/cuda-ts-gen'), '--list'], project, { ...process.env, NODE_PATH: '' });
    expect({ status: gen.status, stderr: gen.stderr }).toEqual({ status: 0, stderr: '' });
    expect(gen.stdout).toMatch(/\bdriver\b/);
    expect(gen.stdout).toMatch(/\bcublas\b/);
  });

  test("`npm publish --dry-run` of every tarball is clean (no warning but the dry run's not-logged-in notice)", () => {
    for (const p of packages) {
      const r = attempt('npm', ['publish', '--dry-run', '--ignore-scripts', '--offline', '--cache', join(tmp, 'npm-cache'), p.file], tmp);
      const warnings = `${r.stdout}${r.stderr}`.split('\n').filter((l) => /^npm (warn|err)/i.test(l) && !/requires you to be logged in/.test(l));
      expect({ name: p.name, status: r.status, warnings }).toEqual({ name: p.name, status: 0, warnings: [] });
    }
  });

  test('one CudaError class however the packages combine: a module alone, cuda-ts alone', () => {
    const check = `
      const support = require('@cuda-ts/runtime-support');
      const out = {};
      for (const [spec, fn] of JSON.parse(process.argv[1])) {
        try { require(spec)[fn](0); out[spec] = 'no error'; }
        catch (e) { out[spec] = { name: e.name, isCudaError: e instanceof support.CudaError }; }
      }
      try { out.objects = require('cuda-ts/objects').CudaError === support.CudaError && require('cuda-ts/runtime-support').CudaError === support.CudaError; } catch (e) { out.objects = e.code; }
      process.stdout.write(JSON.stringify(out));`;
    const notFound = { name: 'CUDA_TS_LIBRARY_NOT_FOUND', isCudaError: true };
    const moduleAlone = install('module-alone', [tarball('@cuda-ts/runtime-support'), tarball('@cuda-ts/driver')]);
    expect(JSON.parse(run(process.execPath, ['-e', check, JSON.stringify([['@cuda-ts/driver', 'cuInit']])], moduleAlone, env))).toEqual({
      '@cuda-ts/driver': notFound,
      objects: 'MODULE_NOT_FOUND',
    });
    const mainAlone = install('main-alone', [tarball('cuda-ts'), tarball('@cuda-ts/runtime-support')]);
    expect(
      JSON.parse(
        run(
          process.execPath,
          [
            '-e',
            check,
            JSON.stringify([
              ['cuda-ts/driver', 'cuInit'],
              ['cuda-ts/13.0/driver', 'cuInit'],
            ]),
          ],
          mainAlone,
          env,
        ),
      ),
    ).toEqual({ 'cuda-ts/driver': notFound, 'cuda-ts/13.0/driver': notFound, objects: true });
  });

  test('a module tarball without the support tarball does not install, and npm names the missing package', () => {
    const dir = join(tmp, 'module-without-support');
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'packaging-alone', version: '1.0.0', private: true }));
    const r = attempt(
      'npm',
      ['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--cache', join(tmp, 'npm-cache'), tarball('@cuda-ts/driver'), ...vendor],
      dir,
    );
    expect(r.status).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`).toMatch(/@cuda-ts(\/|%2f)runtime-support/i);
  });

  test('module packages import the support package, never a path outside themselves', () => {
    for (const name of ['@cuda-ts/driver', '@cuda-ts/nvrtc']) {
      for (const dir of ['dist/cjs', 'dist/esm']) {
        const full = join(project, 'node_modules', name, dir);
        for (const f of readdirSync(full).filter((x) => x.endsWith('.js') || x.endsWith('.d.ts'))) {
          const text = readFileSync(join(full, f), 'utf8');
          expect({ file: `${name}/${dir}/${f}`, outside: /(?:require\(\s*|from\s+|import\(\s*)["']\.\.\/\.\./.test(text) }).toEqual({
            file: `${name}/${dir}/${f}`,
            outside: false,
          });
        }
      }
    }
    const cjs = join(project, 'node_modules/@cuda-ts/driver/dist/cjs');
    const users = readdirSync(cjs).filter((f) => f.endsWith('.js') && readFileSync(join(cjs, f), 'utf8').includes('require("@cuda-ts/runtime-support")'));
    expect(users.length).toBeGreaterThan(0);
  });

  for (const kind of ['esm', 'cjs'] as const) {
    test(`every entry point loads from ${kind === 'esm' ? 'an ES module (.mjs)' : 'CommonJS (.cjs)'} without loading a CUDA library`, () => {
      const file = join(project, `check.${kind === 'esm' ? 'mjs' : 'cjs'}`);
      writeFileSync(file, childScript(kind));
      const t0 = Date.now();
      const report = JSON.parse(run(process.execPath, [file, JSON.stringify(ENTRIES)], project, env));
      timings[kind] = Date.now() - t0;
      expect(report.types).toEqual(ENTRIES);
      expect(report.releases).toEqual({ driver: '13.0', pinned: '13.0', pkg: '13.0' });
      expect(report.mapped).toEqual([]);
      const notFound = { name: 'CUDA_TS_LIBRARY_NOT_FOUND', code: -2 };
      // One CudaError: cuda-ts and the module packages share the one support package.
      expect(report.errors).toEqual({
        '@cuda-ts/driver cuInit': { ...notFound, supportInstance: true, mainInstance: true },
        '@cuda-ts/nvrtc nvrtcVersion': { ...notFound, supportInstance: true, mainInstance: true },
        'cuda-ts/driver cuInit': { ...notFound, supportInstance: true, mainInstance: true },
      });
      expect(report.shared).toEqual({ driver: true, support: true, driverUsesSupport: true, objects: true, objectsUseMainSupport: true, mainIsSupport: true });
    });
  }

  for (const [compiler, resolution] of [
    ['tsc5', 'node16'],
    ['tsc5', 'bundler'],
    ['tsc7', 'node16'],
    ['tsc7', 'bundler'],
  ] as const) {
    test(`the installed packages type-check under moduleResolution ${resolution} (${compiler === 'tsc7' ? 'TypeScript 7' : 'TypeScript 5'})`, () => {
      const files: Record<string, string> =
        resolution === 'node16' ? { 'check-types.mts': TYPECHECK.esm, 'check-types.cts': TYPECHECK.cjs } : { 'check-bundler.ts': TYPECHECK.esm };
      for (const [f, text] of Object.entries(files)) writeFileSync(join(project, f), text);
      const config = `tsconfig.${resolution}.json`;
      writeFileSync(
        join(project, config),
        JSON.stringify({
          compilerOptions: {
            module: resolution === 'node16' ? 'node16' : 'preserve',
            moduleResolution: resolution,
            target: 'ES2022',
            lib: ['ES2022', 'ESNext.Disposable'],
            strict: true,
            noEmit: true,
            skipLibCheck: false,
            types: ['node'],
            typeRoots: [join(MODULES, '@types')],
          },
          files: Object.keys(files),
        }),
      );
      const t0 = Date.now();
      const tsc = COMPILERS[compiler]();
      const r = spawnSync(tsc.cmd, [...tsc.args, '-p', config, '--pretty', 'false'], { cwd: project, encoding: 'utf8', maxBuffer: 64 << 20 });
      timings[`${compiler}-${resolution}`] = Date.now() - t0;
      // skipLibCheck is off so our declarations are checked too. One tolerated kind of error: koffi's
      // declarations are ESM-only (its package.json has "type": "module" and one "types" for import
      // and require), so under node16 TypeScript flags every CommonJS .d.ts that refers to koffi
      // (TS1479, TS1542). With skipLibCheck (tsc --init's default) they are not reported.
      const output = `${r.stdout}${r.stderr}`;
      const reported = output.split('\n').filter((l) => /error TS\d+/.test(l));
      expect(reported.filter((l) => !isKoffiFormatError(l))).toEqual([]);
      expect(r.error).toBeUndefined();
      // a compiler that failed without a type error (one that did not start: no TypeScript 7 here, no
      // registry for npx) fails the test instead of passing it
      if (reported.length === 0) expect({ compiler, status: r.status, output }).toEqual({ compiler, status: 0, output: expect.any(String) });
    });
  }
  test('cuda-ts carries the default release only, at most 40 MB installed; an older release is its module package', () => {
    const dist = join(project, 'node_modules', 'cuda-ts', 'dist');
    expect(readdirSync(join(dist, 'generated'))).toEqual(['13.0']);
    // the size npm reports and `du --apparent-size` measures: every file's length
    const size = (dir: string): number =>
      readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? size(join(dir, e.name)) : statSync(join(dir, e.name)).size), 0);
    const mb = size(join(project, 'node_modules', 'cuda-ts')) / 1e6;
    timings.installedMB = Math.round(mb);
    expect(mb).toBeLessThanOrEqual(40);
    const older = attempt(process.execPath, ['-e', "require('cuda-ts/12.6/driver')"], project, env);
    expect(older.status).not.toBe(0);
    expect(older.stderr).toMatch(/Cannot find module .*dist\/generated\/12\.6\/driver\/index\.js/);
    // pinned by version: @cuda-ts/driver@12.6.x holds the 12.6 bindings and shares the one support package
    const pinned = install('pinned-12.6', [tarball('@cuda-ts/runtime-support'), packages.find((p) => p.module === '12.6/driver')!.file]);
    const check = `const d = require('@cuda-ts/driver'); const { CudaError } = require('@cuda-ts/runtime-support');
      let e; try { d.cuInit(0); } catch (x) { e = x; }
      console.log(JSON.stringify({ release: require('@cuda-ts/driver/types').CUDA_RELEASE, isCudaError: e instanceof CudaError }));`;
    expect(JSON.parse(run(process.execPath, ['-e', check], pinned, env))).toEqual({ release: '12.6', isCudaError: true });
  });

  // The documented way to use a regenerated tree (cuda-ts-gen --help, README): generate into a folder of
  // the project that has cuda-ts installed and import it by path; its imports of the support package
  // resolve to the project's copy, so one CudaError class serves cuda-ts and the tree.
  describe('regenerate with the installed cuda-ts-gen and use the tree from the project', () => {
    let consumer = '';
    let gen: { status: number | null; stdout: string; stderr: string };
    const consumerSource = `import { cuInit, CUDA_RELEASE } from './cuda-bindings/generated/${SYNTHETIC_RELEASE}/driver';
import { CudaError } from 'cuda-ts/runtime-support';
import { DriverError } from 'cuda-ts/driver';
import * as pinned from 'cuda-ts/13.0/driver';
let caught: unknown;
try {
  cuInit(0);
} catch (e) {
  caught = e;
}
const name: string = caught instanceof Error ? caught.name : String(caught);
console.log(JSON.stringify({ release: CUDA_RELEASE, pinned: pinned.CUDA_RELEASE, name, isCudaError: caught instanceof CudaError, driverErrorIsCudaError: DriverError.prototype instanceof CudaError }));
`;
    beforeAll(() => {
      consumer = install('consumer', [tarball('cuda-ts'), tarball('@cuda-ts/runtime-support'), tarball('@cuda-ts/gen')]);
      const toolkit = writeSyntheticToolkit(join(tmp, 'synthetic toolkit'));
      gen = attempt(
        process.execPath,
        [join(consumer, 'node_modules/.bin/cuda-ts-gen'), '--toolkit', toolkit, '--out', 'cuda-bindings', '--modules', 'driver,nvrtc', '--jobs', '2'],
        consumer,
        { ...process.env, NODE_PATH: '' },
      );
      writeFileSync(join(consumer, 'main.ts'), consumerSource);
    }, 600_000);

    test('cuda-ts-gen --toolkit --out runs for real (two worker processes) and says which support package the tree uses', () => {
      expect({ status: gen.status, stderr: gen.stderr }).toEqual({ status: 0, stderr: '' });
      expect(gen.stdout).toMatch(new RegExp(`^${SYNTHETIC_RELEASE.replace('.', '\\.')} driver +\\d+ functions`, 'm'));
      const lines = gen.stdout.trim().split('\n');
      expect(lines[lines.length - 1]).toBe(`the tree uses @cuda-ts/runtime-support from ${join(consumer, 'node_modules', '@cuda-ts', 'runtime-support')}`);
      const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
      const pkg = JSON.parse(readFileSync(join(consumer, 'cuda-bindings', 'package.json'), 'utf8'));
      expect(pkg.peerDependencies['@cuda-ts/runtime-support']).toBe(`^${version}`);
      expect(JSON.stringify(pkg)).not.toContain('undefined');
    });

    for (const compiler of ['tsc5', 'tsc7'] as const) {
      test(`a TypeScript consumer compiles with ${compiler === 'tsc7' ? 'TypeScript 7' : 'TypeScript 5.9'} (node16) and runs: the tree's error is instanceof the installed CudaError; 13.0 pinned by path`, () => {
        const config = `tsconfig.consumer-${compiler}.json`;
        writeFileSync(
          join(consumer, config),
          JSON.stringify({
            compilerOptions: {
              module: 'node16',
              moduleResolution: 'node16',
              target: 'ES2022',
              lib: ['ES2022', 'ESNext.Disposable'],
              strict: true,
              skipLibCheck: true,
              types: ['node'],
              typeRoots: [join(MODULES, '@types')],
              outDir: `build-${compiler}`,
              rootDir: '.',
            },
            files: ['main.ts'],
          }),
        );
        const tsc = COMPILERS[compiler]();
        const r = spawnSync(tsc.cmd, [...tsc.args, '-p', config, '--pretty', 'false'], { cwd: consumer, encoding: 'utf8' });
        expect({ compiler, output: `${r.stdout}${r.stderr}`, status: r.status }).toEqual({ compiler, output: '', status: 0 });
        const out = JSON.parse(run(process.execPath, [join(consumer, `build-${compiler}`, 'main.js')], consumer, env));
        expect(out).toEqual({ release: SYNTHETIC_RELEASE, pinned: '13.0', name: 'CUDA_TS_LIBRARY_NOT_FOUND', isCudaError: true, driverErrorIsCudaError: true });
      });

      test(`the consumer type-checks under moduleResolution bundler (${compiler === 'tsc7' ? 'TypeScript 7' : 'TypeScript 5.9'})`, () => {
        const config = `tsconfig.consumer-bundler-${compiler}.json`;
        writeFileSync(
          join(consumer, config),
          JSON.stringify({
            compilerOptions: {
              module: 'preserve',
              moduleResolution: 'bundler',
              target: 'ES2022',
              lib: ['ES2022', 'ESNext.Disposable'],
              strict: true,
              skipLibCheck: true,
              noEmit: true,
              types: ['node'],
              typeRoots: [join(MODULES, '@types')],
            },
            files: ['main.ts'],
          }),
        );
        const tsc = COMPILERS[compiler]();
        const r = spawnSync(tsc.cmd, [...tsc.args, '-p', config, '--pretty', 'false'], { cwd: consumer, encoding: 'utf8' });
        expect({ compiler, output: `${r.stdout}${r.stderr}`, status: r.status }).toEqual({ compiler, output: '', status: 0 });
      });
    }
  });

  test('cuda-ts-run starts .js ranks; a .ts rank without tsx says what to install, and runs once tsx is installed', () => {
    const dir = install('launcher', [tarball('cuda-ts'), tarball('@cuda-ts/runtime-support')]);
    const rank = 'console.log(`rank ${process.env.RANK} of ${process.env.WORLD_SIZE}`);\n';
    writeFileSync(join(dir, 'rank.js'), rank);
    writeFileSync(join(dir, 'rank.ts'), `const world: string = process.env.WORLD_SIZE ?? '?';\n${rank.replace('process.env.WORLD_SIZE', 'world')}`);
    const launch = (script: string) =>
      attempt(process.execPath, [join(dir, 'node_modules/.bin/cuda-ts-run'), '--nproc-per-node', '2', script], dir, { ...process.env, NODE_PATH: '' });
    const ranks = (stdout: string) => stdout.trim().split('\n').sort();
    const js = launch('rank.js');
    expect({ status: js.status, ranks: ranks(js.stdout) }).toEqual({ status: 0, ranks: ['rank 0 of 2', 'rank 1 of 2'] });
    const noTsx = launch('rank.ts');
    expect(noTsx.status).toBe(2);
    expect(noTsx.stderr).toMatch(/^cuda-ts-run: rank\.ts is TypeScript, .*tsx is not installed: run `npm install --save-dev tsx` in your project/);
    npmInstall(dir, tsxVendor);
    const ts = launch('rank.ts');
    expect({ status: ts.status, stderr: ts.stderr, ranks: ranks(ts.stdout) }).toEqual({ status: 0, stderr: '', ranks: ['rank 0 of 2', 'rank 1 of 2'] });
  });
});
