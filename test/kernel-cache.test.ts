// The on-disk kernel cache (src/kernel-cache.ts) and its use by Program.compile, with a fake NVRTC
// (counting compilations) in place of libnvrtc: no GPU, no CUDA toolkit needed.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DEFAULT_CACHE_MAX_BYTES,
  decodeEntry,
  encodeEntry,
  kernelCacheConfig,
  kernelCacheKey,
  kernelCacheStats,
  pruneKernelCache,
  readCachedKernel,
  writeCachedKernel,
} from '../src/kernel-cache';

const compiled: string[][] = [];
/** Every nvrtcVersion and nvrtcCreateProgram call: a hit keyed by NVRTC's file makes none. */
const nvrtcUsed: string[] = [];
const fakeNvrtc = {
  nvrtcVersion: () => (nvrtcUsed.push('nvrtcVersion'), { major: 13, minor: 0 }),
  nvrtcCreateProgram: (source: string) => (nvrtcUsed.push('nvrtcCreateProgram'), { source }),
  nvrtcDestroyProgram: () => undefined,
  nvrtcAddNameExpression: () => undefined,
  nvrtcCompileProgram: (_h: unknown, opts: string[]) => void compiled.push([...opts]),
  nvrtcGetProgramLogSize: () => 8,
  nvrtcGetProgramLog: (_h: unknown, b: Uint8Array) => b.set(new TextEncoder().encode('warn 1\0')),
  // the "CUBIN" is the source's bytes, so each program's output differs
  nvrtcGetCUBINSize: (h: { source: string }) => h.source.length,
  nvrtcGetCUBIN: (h: { source: string }, b: Uint8Array) => b.set(new TextEncoder().encode(h.source)),
  nvrtcGetPTXSize: () => 4,
  nvrtcGetPTX: (_h: unknown, b: Uint8Array) => b.set([0x70, 0x74, 0x78, 0]),
  nvrtcGetLTOIRSize: () => 0,
  nvrtcGetLTOIR: () => undefined,
  nvrtcGetLoweredName: (_h: unknown, e: string) => `_Z${e.length}lowered`,
};
const linked: string[][] = [];
const fakeNvJitLink = {
  nvJitLinkVersion: () => ({ major: 13, minor: 0 }),
  nvJitLinkCreate: (opts: string[]) => ({ opts, inputs: [] as Uint8Array[] }),
  nvJitLinkDestroy: () => undefined,
  nvJitLinkInputType: { NVJITLINK_INPUT_PTX: 1, NVJITLINK_INPUT_LTOIR: 4 },
  nvJitLinkAddData: (h: { inputs: Uint8Array[] }, _t: number, bytes: Uint8Array) => void h.inputs.push(bytes.slice()),
  nvJitLinkComplete: (h: { opts: string[] }) => void linked.push(h.opts),
  // the "CUBIN" is the inputs back to back
  nvJitLinkGetLinkedCubinSize: (h: { inputs: Uint8Array[] }) => h.inputs.reduce((n, b) => n + b.length, 0),
  nvJitLinkGetLinkedCubin: (h: { inputs: Uint8Array[] }, out: Uint8Array) => h.inputs.reduce((at, b) => (out.set(b, at), at + b.length), 0),
  nvJitLinkGetErrorLogSize: () => 0,
};
jest.mock('../src/releases', () => ({ ...jest.requireActual('../src/releases'), loadNvrtc: () => fakeNvrtc, loadNvJitLink: () => fakeNvJitLink }));
import { Program } from '../src/program';
import { Linker } from '../src/linker';
import { fileIsMapped, ldCacheLookup, libraryFile, searchOrder, systemLoaderPath } from '../src/library-file';
import { libraryCandidates } from '../support';
import { NVRTC_LIBRARY } from '../src/releases';

let dir: string;
const saved = { ...process.env };
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cuda-ts-kc-'));
  process.env.CUDA_TS_CACHE_DIR = dir;
  delete process.env.CUDA_TS_CACHE;
  delete process.env.CUDA_TS_CACHE_MAX_BYTES;
  compiled.length = 0;
  nvrtcUsed.length = 0;
  linked.length = 0;
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  process.env = { ...saved };
});

describe('kernel cache configuration', () => {
  test('directory: CUDA_TS_CACHE_DIR, else XDG_CACHE_HOME, else ~/.cache; on unless CUDA_TS_CACHE=0', () => {
    expect(kernelCacheConfig({ HOME: '/h' })).toEqual({ enabled: true, dir: '/h/.cache/cuda-ts/kernels', maxBytes: DEFAULT_CACHE_MAX_BYTES });
    expect(kernelCacheConfig({ HOME: '/h', XDG_CACHE_HOME: '/x' }).dir).toBe('/x/cuda-ts/kernels');
    expect(kernelCacheConfig({ HOME: '/h', CUDA_TS_CACHE_DIR: '/c', CUDA_TS_CACHE_MAX_BYTES: '1000' })).toMatchObject({ dir: '/c', maxBytes: 1000 });
    expect(kernelCacheConfig({ HOME: '/h', CUDA_TS_CACHE: '0' }).enabled).toBe(false);
  });
  test('a setting it does not understand is a RangeError naming the variable and the caller', () => {
    expect(() => kernelCacheConfig({ CUDA_TS_CACHE: 'yes' }, 'Program.compile')).toThrow(
      /^Program\.compile: CUDA_TS_CACHE must be 0 \(off\) or 1 \(on\), got 'yes'/,
    );
    for (const bad of ['-1', '1.5', 'lots', '0']) expect(() => kernelCacheConfig({ CUDA_TS_CACHE_MAX_BYTES: bad })).toThrow(RangeError);
  });
});

describe('keys and entries', () => {
  test('the key changes with every ingredient and its boundaries, never otherwise', () => {
    const base = kernelCacheKey('nvrtc', ['nvrtc 13.0', 'src', 'a.cu', '["--gpu-architecture=sm_90"]']);
    expect(base.name).toMatch(/^[0-9a-f]{16}$/);
    expect(kernelCacheKey('nvrtc', ['nvrtc 13.0', 'src', 'a.cu', '["--gpu-architecture=sm_90"]'])).toEqual(base);
    for (const other of [
      kernelCacheKey('nvjitlink', ['nvrtc 13.0', 'src', 'a.cu', '["--gpu-architecture=sm_90"]']),
      kernelCacheKey('nvrtc', ['nvrtc 13.1', 'src', 'a.cu', '["--gpu-architecture=sm_90"]']),
      kernelCacheKey('nvrtc', ['nvrtc 13.0', 'src ', 'a.cu', '["--gpu-architecture=sm_90"]']),
      kernelCacheKey('nvrtc', ['nvrtc 13.0', 'src', 'a.cu', '["--gpu-architecture=sm_100"]']),
      kernelCacheKey('nvrtc', ['nvrtc 13.0', 'sr', 'ca.cu', '["--gpu-architecture=sm_90"]']),
      kernelCacheKey('nvrtc', ['nvrtc 13.0', new Uint8Array([1]), 'a.cu', '["--gpu-architecture=sm_90"]']),
    ]) {
      expect(other.name).not.toBe(base.name);
      expect(Buffer.from(other.material).equals(base.material)).toBe(false);
    }
  });
  test('an entry of another key with the same file name (a hash collision) is a miss, never the other kernel', () => {
    const config = kernelCacheConfig();
    const a = kernelCacheKey('nvrtc', ['a']);
    const b = kernelCacheKey('nvrtc', ['b']);
    expect(writeCachedKernel(config, { name: a.name, material: b.material }, { meta: {}, blobs: { cubin: new Uint8Array([2]) } })).toBe(true);
    expect(readCachedKernel(config, a)).toBeUndefined();
    expect(readCachedKernel(config, { name: a.name, material: b.material })?.blobs).toEqual({ cubin: new Uint8Array([2]) });
    expect(readdirSync(dir)).toEqual([`${a.name}.kc`]); // left for its own key
  });
  test('an entry round-trips; a truncated or foreign file does not decode', () => {
    const entry = { meta: { log: 'ok', lowered: { 'f<int>': '_Z1fIiEvv' } }, blobs: { cubin: new Uint8Array([1, 2, 3]), ptx: new Uint8Array([0x2e, 0]) } };
    const bytes = encodeEntry(entry);
    expect(decodeEntry(bytes)).toEqual(entry);
    expect(decodeEntry(bytes.subarray(0, bytes.length - 1))).toBeUndefined();
    expect(decodeEntry(new Uint8Array([...bytes, 0]))).toBeUndefined();
    expect(decodeEntry(new TextEncoder().encode('{"not":"an entry"}'))).toBeUndefined();
    // the magic with a header that is JSON but not an entry's
    for (const header of [
      '{"meta":{}}',
      '{"meta":{},"blobs":[[1,0]]}',
      '{"meta":{},"blobs":[["a",-1]]}',
      '{"meta":{},"blobs":[["a","1"]]}',
      '{"meta":{},"blobs":[5]}',
      '{"meta":{},"blobs":[null]}',
      'null',
    ]) {
      const json = new TextEncoder().encode(header);
      const foreign = new Uint8Array([...bytes.subarray(0, 7), json.length, 0, 0, 0, ...json]);
      expect(decodeEntry(foreign)).toBeUndefined();
    }
  });
  test('write then read; a damaged entry is a miss and is removed; nothing is left but whole entries', () => {
    const config = kernelCacheConfig();
    const key = kernelCacheKey('nvrtc', ['x']);
    expect(readCachedKernel(config, key)).toBeUndefined();
    expect(writeCachedKernel(config, key, { meta: { a: 1 }, blobs: { cubin: new Uint8Array(10).fill(7) } })).toBe(true);
    expect(readCachedKernel(config, key)?.blobs.cubin).toEqual(new Uint8Array(10).fill(7));
    expect(readdirSync(dir)).toEqual([`${key.name}.kc`]);
    writeFileSync(join(dir, `${key.name}.kc`), 'garbage');
    expect(readCachedKernel(config, key)).toBeUndefined();
    expect(existsSync(join(dir, `${key.name}.kc`))).toBe(false);
    expect(readCachedKernel({ ...config, enabled: false }, key)).toBeUndefined();
    // JSON where the blob list should be, but not encodeEntry's: damaged too (no TypeError escapes)
    const magic = encodeEntry({ meta: {}, blobs: {} }).subarray(0, 7);
    const json = new TextEncoder().encode('{"meta":{},"blobs":[7]}');
    writeFileSync(join(dir, `${key.name}.kc`), new Uint8Array([...magic, json.length, 0, 0, 0, ...json]));
    expect(readCachedKernel(config, key)).toBeUndefined();
    expect(existsSync(join(dir, `${key.name}.kc`))).toBe(false);
  });
  test('the size bound drops least recently used entries first', () => {
    const config = { ...kernelCacheConfig(), maxBytes: 2500 };
    const keys = ['a', 'b', 'c'].map((k) => kernelCacheKey('nvrtc', [k]));
    keys.forEach((k, i) => {
      writeCachedKernel({ ...config, maxBytes: 1e9 }, k, { meta: {}, blobs: { cubin: new Uint8Array(1000) } });
      utimesSync(join(dir, `${k.name}.kc`), new Date(1e12 + i * 1e6), new Date(1e12 + i * 1e6));
    });
    readCachedKernel(config, keys[0]); // a is now the most recently used
    expect(pruneKernelCache(config)).toBeGreaterThan(0);
    expect(readdirSync(dir).sort()).toEqual([`${keys[0].name}.kc`, `${keys[2].name}.kc`].sort());
    expect(kernelCacheStats(process.env)).toMatchObject({ dir, entries: 2, enabled: true });
    expect(writeCachedKernel({ ...config, maxBytes: 10 }, kernelCacheKey('nvrtc', ['big']), { meta: {}, blobs: { cubin: new Uint8Array(100) } })).toBe(false);
  });
  test('a read touches an entry not used for a minute (pruned last), not one used just now', () => {
    const config = kernelCacheConfig();
    const key = kernelCacheKey('nvrtc', ['t']);
    writeCachedKernel(config, key, { meta: {}, blobs: { cubin: new Uint8Array(4) } });
    const file = join(dir, `${key.name}.kc`);
    const recent = new Date(Date.now() - 10_000);
    utimesSync(file, recent, recent);
    readCachedKernel(config, key);
    expect(Math.abs(statSync(file).mtimeMs - recent.getTime())).toBeLessThan(1);
    utimesSync(file, new Date(1e12), new Date(1e12));
    readCachedKernel(config, key);
    expect(Date.now() - statSync(file).mtimeMs).toBeLessThan(60_000);
  });
  test('processes writing and reading one key at once see whole entries only (atomic rename)', () => {
    const script = `
      const { kernelCacheConfig, kernelCacheKey, readCachedKernel, writeCachedKernel } = require(${JSON.stringify(join(__dirname, '../src/kernel-cache'))});
      const config = kernelCacheConfig();
      const same = kernelCacheKey('nvrtc', ['same']);
      let bad = 0;
      for (let i = 0; i < 200; i++) {
        writeCachedKernel(config, same, { meta: { i }, blobs: { cubin: new Uint8Array(65536).fill(i & 255) } });
        const e = readCachedKernel(config, same);
        if (!e || e.blobs.cubin.length !== 65536 || e.blobs.cubin.some((b) => b !== e.blobs.cubin[0])) bad++;
      }
      process.stdout.write(String(bad));`;
    // children under Node whatever runs the suite (tsx's -r hook is Node's): the file system is the subject
    const runs = Array.from({ length: 3 }, () => spawnSync('node', ['-r', require.resolve('tsx/cjs'), '-e', script], { env: process.env, encoding: 'utf8' }));
    for (const r of runs) expect([r.status, r.stderr.slice(0, 300), r.stdout]).toEqual([0, '', '0']);
    expect(readdirSync(dir)).toEqual([`${kernelCacheKey('nvrtc', ['same']).name}.kc`]);
  });
});

describe('Program.compile through the cache (fake NVRTC)', () => {
  const source = 'extern "C" __global__ void k() {}';
  test('a second program with the same source, options and NVRTC version compiles nothing and gives the same outputs', () => {
    const a = new Program(source, { nameExpressions: ['k'] }).compile({ arch: 'sm_90' });
    expect(compiled).toHaveLength(1);
    expect(a.fromCache).toBe(false);
    const b = new Program(source, { nameExpressions: ['k'] }).compile({ arch: 'sm_90' });
    expect(compiled).toHaveLength(1);
    expect(b.fromCache).toBe(true);
    expect(b.cubin).toEqual(a.cubin);
    expect(b.ptx).toBe(a.ptx);
    expect(b.log).toBe('warn 1');
    expect(b.loweredName('k')).toBe(a.loweredName('k'));
    expect(() => b.ltoir).toThrow(/has no LTO-IR/);
    expect(() => b.loweredName('toString')).toThrow(/was not registered/);
  });
  test('another architecture, option, header or source compiles again; cache: false and CUDA_TS_CACHE=0 never read it', () => {
    new Program(source).compile({ arch: 'sm_90' });
    new Program(source).compile({ arch: 'sm_100' });
    new Program(source).compile({ arch: 'sm_90', options: ['-lineinfo'] });
    new Program(source, { headers: { 'a.h': '#define A 1' } }).compile({ arch: 'sm_90' });
    new Program(`${source}\n`).compile({ arch: 'sm_90' });
    expect(compiled).toHaveLength(5);
    new Program(source).compile({ arch: 'sm_90', cache: false });
    process.env.CUDA_TS_CACHE = '0';
    new Program(source).compile({ arch: 'sm_90' });
    expect(compiled).toHaveLength(7);
    delete process.env.CUDA_TS_CACHE;
    new Program(source).compile({ arch: 'sm_90' });
    expect(compiled).toHaveLength(7);
  });
  test('a compilation that may read files the key cannot cover is never cached (include paths, quoted includes not given)', () => {
    const withInclude = `#include "local.h"\n${source}`;
    new Program(withInclude).compile({ arch: 'sm_90' });
    new Program(withInclude).compile({ arch: 'sm_90' });
    new Program(source).compile({ arch: 'sm_90', options: ['-I/some/dir'] });
    new Program(source).compile({ arch: 'sm_90', options: ['--include-path=/some/dir'] });
    new Program(source).compile({ arch: 'sm_90', options: ['--include-path=/some/dir'] });
    expect(compiled).toHaveLength(5);
    expect(readdirSync(dir)).toEqual([]);
    // the same include given as a header is covered by the key: cached
    const given = () => new Program(withInclude, { headers: { 'local.h': '#define X 1' } }).compile({ arch: 'sm_90' });
    expect([given().fromCache, given().fromCache]).toEqual([false, true]);
  });
  test('bad constructor arguments are TypeErrors naming the argument, before NVRTC', () => {
    const bad: [unknown, unknown, RegExp][] = [
      [1, {}, /^Program: source must be CUDA C\+\+ source text \(a string\), got number 1/],
      [source, null, /^Program: options must be an object, got null/],
      [source, { name: 2 }, /^Program: name must be a string, got number 2/],
      [source, { name: null }, /^Program: name must be a string, got null/],
      [source, { headers: 'a.h' }, /^Program: headers must be an object of include name → source text, got string "a\.h"/],
      [source, { headers: { 'a.h': 'ok', 'b.h': 3 } }, /^Program: header b\.h must be source text/],
      [source, { nameExpressions: 'k' }, /^Program: nameExpressions must be an array of strings, got string "k"/],
      [source, { nameExpressions: [1] }, /^Program\.addNameExpression: expression must be a string/],
      [source, { nmae: 'x' }, /^Program: unknown option 'nmae'/],
      ['a', { name: 'x\0' }, /^Program: name contains a NUL character/],
    ];
    for (const [src, options, message] of bad) expect(() => new Program(src as string, options as object)).toThrow(message);
    for (const [src, options] of bad) expect(() => new Program(src as string, options as object)).toThrow(TypeError);
    expect(new Program(source, { name: undefined, headers: undefined }).name).toBe('program.cu');
    expect(nvrtcUsed).toEqual([]);
  });
  test('bad cache settings are refused by name before anything compiles', () => {
    expect(() => new Program(source).compile({ arch: 'sm_90', cache: 'yes' as unknown as boolean })).toThrow(/^Program\.compile: cache must be a boolean/);
    // what NVRTC's typed layer checked on every compile, checked before the cache too
    expect(() => new Program(source).compile({ arch: 'sm_90', options: [1 as unknown as string] })).toThrow(
      /^Program\.compile: options must be an array of strings/,
    );
    expect(() => new Program(source).compile({ arch: 'sm_90', options: '-lineinfo' as unknown as string[] })).toThrow(
      /^Program\.compile: options must be an array/,
    );
    expect(() => new Program(source).compile({ arch: 'sm_90', options: ['-D\0'] })).toThrow(/without NUL/);
    expect(() => new Program(source).compile({ arch: 90 as unknown as string })).toThrow(/^Program\.compile: arch must be a string/);
    process.env.CUDA_TS_CACHE_MAX_BYTES = 'huge';
    expect(() => new Program(source).compile({ arch: 'sm_90' })).toThrow(/^Program\.compile: CUDA_TS_CACHE_MAX_BYTES/);
    expect(compiled).toHaveLength(0);
  });
});

describe('Linker.complete through the cache (fake nvJitLink)', () => {
  const ltoir = new Uint8Array([1, 2, 3, 4]);
  const link = (options: ConstructorParameters<typeof Linker>[0], ...inputs: Uint8Array[]): { cubin: Uint8Array; fromCache: boolean } => {
    const l = new Linker(options);
    inputs.forEach((b, i) => l.add('ltoir', b, `in${i}.ltoir`));
    const cubin = l.complete();
    const fromCache = l.fromCache;
    l.close();
    return { cubin, fromCache };
  };
  test('the same inputs, options and arch link once; the second linker reads the same CUBIN', () => {
    const first = link({ arch: 'sm_90', lto: true }, ltoir);
    expect(first.fromCache).toBe(false);
    const second = link({ arch: 'sm_90', lto: true }, ltoir);
    expect(second).toEqual({ cubin: first.cubin, fromCache: true });
    expect(linked).toHaveLength(1);
  });
  test('another input, input order, arch or option links again; cache: false never reads it', () => {
    link({ arch: 'sm_90', lto: true }, ltoir);
    link({ arch: 'sm_90', lto: true }, ltoir, new Uint8Array([9]));
    link({ arch: 'sm_90', lto: true }, new Uint8Array([9]), ltoir);
    link({ arch: 'sm_100', lto: true }, ltoir);
    link({ arch: 'sm_90', lto: true, options: ['-O0'] }, ltoir);
    expect(linked).toHaveLength(5);
    expect(link({ arch: 'sm_90', lto: true, cache: false }, ltoir).fromCache).toBe(false);
    expect(linked).toHaveLength(6);
    expect(() => new Linker({ arch: 'sm_90', cache: 1 as unknown as boolean })).toThrow(/^Linker: cache must be a boolean/);
  });
});

describe('NVRTC named by its library file: a hit loads no NVRTC, another NVRTC never hits', () => {
  const source = 'extern "C" __global__ void k() {}';
  // files mapped into this process (what fileIsMapped checks): node itself and a shared library
  const node = realpathSync(process.execPath);
  const sharedLibrary = readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .map((l) => l.trim().split(/\s+/).slice(5).join(' '))
    .find((f) => /\/lib[^/]*\.so[.\d]*$/.test(f))!;

  test("NVRTC_LIBRARY is the generated binder's spec", () => {
    const { binder } = require('../generated/13.0/nvrtc/binding');
    expect(binder.spec).toMatchObject({ module: NVRTC_LIBRARY.module, sonames: [...NVRTC_LIBRARY.sonames], env: NVRTC_LIBRARY.env });
  });
  test('the second program is answered without any NVRTC call; another NVRTC file compiles again', () => {
    process.env.CUDA_TS_NVRTC_LIBRARY = node;
    const a = new Program(source, { nameExpressions: ['k'] }).compile({ arch: 'sm_90' });
    expect([a.fromCache, compiled.length]).toEqual([false, 1]);
    nvrtcUsed.length = 0;
    const b = new Program(source, { nameExpressions: ['k'] }).compile({ arch: 'sm_90' });
    expect([b.fromCache, b.loweredName('k'), nvrtcUsed]).toEqual([true, a.loweredName('k'), []]);
    b.close();
    process.env.CUDA_TS_NVRTC_LIBRARY = sharedLibrary;
    expect(new Program(source, { nameExpressions: ['k'] }).compile({ arch: 'sm_90' }).fromCache).toBe(false);
    expect(compiled).toHaveLength(2);
  });
  test('reading handle makes the NVRTC program of a cached one; a name expression is checked by Program', () => {
    process.env.CUDA_TS_NVRTC_LIBRARY = node;
    new Program(source).compile({ arch: 'sm_90' });
    nvrtcUsed.length = 0;
    const p = new Program(source).compile({ arch: 'sm_90' });
    expect(nvrtcUsed).toEqual([]);
    expect(p.handle).toEqual({ source });
    expect(nvrtcUsed).toEqual(['nvrtcCreateProgram']);
    p.close();
    expect(() => p.handle).toThrow(/closed/);
    expect(() => new Program(source).addNameExpression(1 as unknown as string)).toThrow(/^Program\.addNameExpression: expression must be a string/);
    expect(() => new Program('a\0b')).toThrow(/^Program: source contains a NUL character/);
    expect(() => new Program(source, { headers: { 'a.h': 'x\0' } })).toThrow(/^Program: header a\.h contains a NUL/);
    expect(nvrtcUsed).toEqual(['nvrtcCreateProgram']);
  });
  test('an entry is written only when the file in its key is the NVRTC mapped into the process', () => {
    const copy = join(dir, 'libnvrtc.so.13');
    writeFileSync(copy, 'not loaded');
    process.env.CUDA_TS_NVRTC_LIBRARY = copy;
    new Program(source).compile({ arch: 'sm_90' });
    new Program(source).compile({ arch: 'sm_90' });
    expect(compiled).toHaveLength(2);
    expect(readdirSync(dir)).toEqual(['libnvrtc.so.13']);
  });
  test("the identity changes with the file's content, time or place; a missing override names no file", () => {
    const lib = join(dir, 'libnvrtc.so.13');
    writeFileSync(lib, 'v1');
    const spec = { ...NVRTC_LIBRARY, sonames: [...NVRTC_LIBRARY.sonames] };
    const first = libraryFile(spec, { CUDA_TS_NVRTC_LIBRARY: lib })!;
    expect(first).toMatchObject({ path: lib, inode: statSync(lib).ino });
    expect(libraryFile(spec, { CUDA_TS_NVRTC_LIBRARY: lib })).toEqual(first);
    utimesSync(lib, new Date(1e12), new Date(1e12));
    const touched = libraryFile(spec, { CUDA_TS_NVRTC_LIBRARY: lib })!;
    expect(touched.identity).not.toBe(first.identity);
    writeFileSync(lib, 'v2 longer');
    utimesSync(lib, new Date(1e12), new Date(1e12));
    expect(libraryFile(spec, { CUDA_TS_NVRTC_LIBRARY: lib })!.identity).not.toBe(touched.identity);
    // found through CUDA_HOME as the loader's search would, unless an earlier place has it
    mkdirSync(join(dir, 'home', 'lib64'), { recursive: true });
    writeFileSync(join(dir, 'home', 'lib64', 'libnvrtc.so.13'), 'v3');
    expect(libraryFile(spec, { CUDA_HOME: join(dir, 'home') })?.path).toBe(join(dir, 'home', 'lib64', 'libnvrtc.so.13'));
    expect(libraryFile(spec, { CUDA_TS_NVRTC_LIBRARY: join(dir, 'none.so') })).toBeUndefined();
  });
  test("the search walks support/library.ts's candidates in its order (overrides apart), and stops where told", () => {
    const spec = { module: 'm', sonames: ['liba.so.2', 'liba.so.1'], env: 'CUDA_TS_M_LIBRARY' };
    mkdirSync(join(dir, 'venv'));
    for (const env of [
      {},
      { CUDA_HOME: '/h' },
      { CUDA_PATH: '/p', CUDA_HOME: '/h', LD_LIBRARY_PATH: '/l' },
      { CONDA_PREFIX: '/c' },
      { VIRTUAL_ENV: join(dir, 'venv'), CUDA_HOME: '/h' },
    ]) {
      const walked: string[] = [];
      searchOrder(spec, env, (p) => walked.push(p) < 0);
      expect(walked).toEqual(libraryCandidates(spec, env).map((c) => c.path));
    }
    const walked: string[] = [];
    searchOrder(spec, { CUDA_HOME: '/h' }, (p) => walked.push(p) === 2);
    expect(walked).toEqual(['/h/lib64/liba.so.2', '/h/lib64/liba.so.1']);
  });
  test("the system loader's part: LD_LIBRARY_PATH, then the ld.so.cache (this ABI, no hwcap variants), then not found", () => {
    const cache = join(dir, 'ld.so.cache');
    const abi = (process.arch === 'arm64' ? 0x0a00 : 0x0300) | 3;
    writeFileSync(
      cache,
      ldCache([
        [abi, 'liba.so.1', '/x/liba.so.1', 0],
        [0x0003, 'libb.so.2', '/x32/libb.so.2', 0],
        [abi, 'libb.so.2', '/x/libb.so.2', 0],
        [abi, 'libh.so', '/h/libh.so', 1],
        // one name in two entries (each with a string of its own): the first entry wins, as in the loader; a hwcap variant anywhere makes it undecidable
        [abi, 'libd.so.1', '/first/libd.so.1', 0],
        [abi, 'libd.so.1', '/second/libd.so.1', 0],
        [abi, 'libe.so.1', '/e/libe.so.1', 0],
        [abi, 'libe.so.1', '/e/v3/libe.so.1', 2],
      ]),
    );
    expect(ldCacheLookup(cache, 'libd.so.1')).toBe('/first/libd.so.1');
    expect(ldCacheLookup(cache, 'libe.so.1')).toBeNull();
    expect(ldCacheLookup(cache, 'liba.so.1')).toBe('/x/liba.so.1');
    expect(ldCacheLookup(cache, 'libb.so.2')).toBe('/x/libb.so.2'); // the 32-bit entry is not ours
    expect(ldCacheLookup(cache, 'libh.so')).toBeNull();
    expect(ldCacheLookup(cache, 'a.so.1')).toBeUndefined(); // a tail of a name is not the name
    expect(ldCacheLookup(cache, 'libz.so')).toBeUndefined();
    writeFileSync(cache, 'ld.so-1.7.0 an old format');
    expect(ldCacheLookup(cache, 'liba.so.1')).toBeNull();
    writeFileSync(join(dir, 'liba.so.1'), '');
    expect(systemLoaderPath('liba.so.1', { LD_LIBRARY_PATH: `/nowhere::${dir}` }, cache)).toBe(join(dir, 'liba.so.1'));
    expect(systemLoaderPath('libcuda-ts-none.so.9', {}, join(dir, 'missing'))).toBeUndefined();
  });
  test('fileIsMapped: the resolved path and the inode of a line of /proc/self/maps', () => {
    const { ino } = statSync(node);
    expect(fileIsMapped({ path: process.execPath, inode: ino, identity: '' })).toBe(true);
    const lib = join(dir, 'libnvrtc.so.13.0.1');
    writeFileSync(lib, '');
    symlinkSync(lib, join(dir, 'libnvrtc.so.13'));
    const real = realpathSync(lib);
    const other = join(dir, 'libother.so');
    writeFileSync(other, '');
    const maps = join(dir, 'maps');
    writeFileSync(maps, `7f00-7f10 r-xp 00000000 fd:00 ${ino + 1}                     ${real}\n`);
    expect(fileIsMapped({ path: join(dir, 'libnvrtc.so.13'), inode: ino + 1, identity: '' }, maps)).toBe(true); // through the link
    expect(fileIsMapped({ path: lib, inode: ino + 2, identity: '' }, maps)).toBe(false); // another inode: replaced since
    expect(fileIsMapped({ path: other, inode: ino + 1, identity: '' }, maps)).toBe(false);
    expect(fileIsMapped({ path: join(dir, 'none.so'), inode: 1, identity: '' }, maps)).toBe(false);
    expect(fileIsMapped({ path: other, inode: 1, identity: '' }, join(dir, 'no-maps'))).toBe(false);
  });
});

/** An ld.so.cache in glibc's new format holding `entries` ([flags, name, path, hwcap]). */
function ldCache(entries: [number, string, string, number][]): Buffer {
  const strings: string[] = [];
  const header = 48 + entries.length * 24;
  let at = header;
  const offset = (s: string): number => {
    const o = at;
    strings.push(`${s}\0`);
    at += Buffer.byteLength(s) + 1;
    return o;
  };
  const out = Buffer.alloc(header);
  out.write('glibc-ld.so.cache1.1', 0, 'latin1');
  out.writeUInt32LE(entries.length, 20);
  entries.forEach(([flags, name, path, hwcap], i) => {
    const e = 48 + i * 24;
    out.writeInt32LE(flags, e);
    out.writeUInt32LE(offset(`x${name}`) + 1, e + 4); // the name as the tail of a longer string
    out.writeUInt32LE(offset(path), e + 8);
    out.writeBigUInt64LE(BigInt(hwcap), e + 16);
  });
  return Buffer.concat([out, Buffer.from(strings.join(''), 'utf8')]);
}
