// support/koffi.ts: koffi's native module loaded without koffi's JavaScript entry where koffi's own
// loader would find it, the entry otherwise; one koffi object per process either way.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import ts from 'typescript';
import { koffiNativePath } from '../support/koffi';

const repo = join(__dirname, '..');
const repoModules = [join(repo, 'node_modules')];
const koffiVersion = (JSON.parse(readFileSync(join(repo, 'node_modules/koffi/package.json'), 'utf8')) as { version: string }).version;
const shortWay = process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64');

describe('koffiNativePath', () => {
  (shortWay ? test : test.skip)('finds the prebuilt module of this platform beside koffi, with koffi’s version', () => {
    expect(koffiNativePath(repoModules)).toEqual({
      file: join(repo, `node_modules/@koromix/koffi-linux-${process.arch}/linux_${process.arch}/koffi.node`),
      version: koffiVersion,
    });
  });

  test('another platform or architecture, or no koffi in the folders: undefined (koffi’s entry loads it)', () => {
    expect(koffiNativePath(repoModules, 'darwin', 'arm64')).toBeUndefined();
    expect(koffiNativePath(repoModules, 'win32', 'x64')).toBeUndefined();
    expect(koffiNativePath(repoModules, 'linux', 'ia32')).toBeUndefined();
    expect(koffiNativePath([])).toBeUndefined();
    expect(koffiNativePath([join(repo, 'no-such-folder')])).toBeUndefined();
  });

  (shortWay ? test : test.skip)('with symlinks preserved (NODE_PRESERVE_SYMLINKS=1): undefined', () => {
    const before = process.env.NODE_PRESERVE_SYMLINKS;
    process.env.NODE_PRESERVE_SYMLINKS = '1';
    try {
      expect(koffiNativePath(repoModules)).toBeUndefined();
    } finally {
      if (before === undefined) delete process.env.NODE_PRESERVE_SYMLINKS;
      else process.env.NODE_PRESERVE_SYMLINKS = before;
    }
    expect(koffiNativePath(repoModules)).toBeDefined();
  });

  test('koffi without its platform package (built from source): undefined', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-koffi-'));
    try {
      mkdirSync(join(dir, 'node_modules/koffi'), { recursive: true });
      writeFileSync(join(dir, 'node_modules/koffi/package.json'), JSON.stringify({ name: 'koffi', version: koffiVersion }));
      expect(koffiNativePath([join(dir, 'node_modules')])).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the runtime’s koffi in a fresh process', () => {
  // koffi.ts as the build compiles it, in a folder of the repository (so its node_modules are found)
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(repo, 'test', '.koffi-loader-'));
    const source = readFileSync(join(repo, 'support/koffi.ts'), 'utf8');
    writeFileSync(
      join(dir, 'koffi.js'),
      ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true } }).outputText,
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function run(env: Record<string, string> = {}): Record<string, unknown> {
    const code = `
      const { koffi } = require(${JSON.stringify(join(dir, 'koffi.js'))});
      const entryLoaded = Object.keys(require.cache).some((f) => f.endsWith('/koffi/index.cjs'));
      const utilDiffLoaded = process.moduleLoadList.includes('NativeModule internal/util/diff');
      const works = koffi.sizeof('int') === 4 && typeof koffi.load === 'function';
      const same = require('koffi').default === koffi;
      console.log(JSON.stringify({ entryLoaded, utilDiffLoaded, works, same }));`;
    const r = spawnSync(process.execPath, ['-e', code], { cwd: repo, encoding: 'utf8', env: { ...process.env, ...env } });
    if (r.status !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  }

  (shortWay ? test : test.skip)('loads the native module only: koffi’s entry and the node:util internals it pulls in stay unloaded', () => {
    // and a later require('koffi') returns the same object (Node's cache holds one native module)
    expect(run()).toEqual({ entryLoaded: false, utilDiffLoaded: false, works: true, same: true });
  });

  test('CUDA_TS_KOFFI_ENTRY=1 loads koffi through its entry: the same object', () => {
    expect(run({ CUDA_TS_KOFFI_ENTRY: '1' })).toMatchObject({ entryLoaded: true, works: true, same: true });
  });
});
