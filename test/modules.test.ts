// Per module and release: the typed surface (functions exported by generated/<ver>/<m>/index.ts) is
// exactly the IR's functions plus its aliases, and so is the raw surface. Importing loads nothing.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readIR, storedReleases } from '../generator/ir/store';
import { findModule, librariesFor, notExportedFor, RELEASES, specForRelease } from '../generator/modules';

const root = join(__dirname, '..');
const cases = storedReleases(root).flatMap((release) =>
  readdirSync(join(root, 'headers', release))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.replace(/\.json$/, ''))
    .filter((m) => existsSync(join(root, 'generated', release, m, 'index.ts')))
    .sort()
    .map((m) => [release, m] as const),
);

/** Functions the headers declare in 13.0 (declared ∩ exported per FACTS.md, where they differ, in the comment). */
const DECLARED_13_0: Record<string, number> = {
  driver: 452,
  runtime: 312,
  cublas: 517,
  cusolver: 467, // 461 exported on the H200
  cusparse: 448, // 411 exported
  nvml: 375,
  cudnn: 220,
  cupti: 100,
  cufft: 56,
  cublaslt: 50, // 49 exported (+5 static inline *Init helpers not bindable)
  cufile: 42,
  nccl: 41, // 40 exported
  curand: 29, // 27 exported
  nvrtc: 24,
  nvjitlink: 14,
  nvfatbin: 11,
};

function functionNames(mod: Record<string, unknown>, exclude: Set<string>): string[] {
  return Object.keys(mod)
    .filter((k) => typeof mod[k] === 'function' && !exclude.has(k) && !/^[A-Z]/.test(k))
    .sort();
}

test('every catalog module of 13.0 is generated', () => {
  const have = cases.filter(([r]) => r === '13.0').map(([, m]) => m);
  expect(have.sort()).toEqual(Object.keys(DECLARED_13_0).sort());
});

describe('catalog release axis', () => {
  const names = (module: string, release: string) => librariesFor(findModule(module)!, release);
  test('CUDA 11 library names', () => {
    expect(names('runtime', '11.8')).toEqual(['libcudart.so.11.0']);
    expect(names('cublas', '11.8')).toEqual(['libcublas.so.11']);
    expect(names('cublaslt', '11.8')).toEqual(['libcublasLt.so.11']);
    expect(names('nvrtc', '11.8')).toEqual(['libnvrtc.so.11.2']);
    expect(names('cufft', '11.8')).toEqual(['libcufft.so.10']);
    expect(names('curand', '11.8')).toEqual(['libcurand.so.10']);
    expect(names('cusolver', '11.8')).toEqual(['libcusolver.so.11']);
    expect(names('cusparse', '11.8')).toEqual(['libcusparse.so.11']);
    expect(names('nvjitlink', '11.8')).toBeUndefined(); // nvJitLink arrived with 12.0
  });
  test('a release takes the newest entry at or below it', () => {
    expect(names('cufft', '12.5')).toEqual(['libcufft.so.11']);
    expect(names('cufft', '13.0')).toEqual(['libcufft.so.12']);
    expect(names('cusolver', '12.6')).toEqual(['libcusolver.so.11']);
    expect(names('runtime', '13.5')).toEqual(['libcudart.so.13']);
    expect(names('nvfatbin', '12.3')).toBeUndefined();
  });
  test('functions not exported are facts of the surveyed release only', () => {
    const cusparse = findModule('cusparse')!;
    expect(notExportedFor(cusparse, '13.0')).toContain('cusparseXgebsr2csr');
    for (const r of RELEASES.filter((x) => x !== '13.0')) expect(notExportedFor(cusparse, r)).toEqual([]);
    expect(specForRelease(cusparse, '12.6').notExported).toEqual([]);
    expect(specForRelease(cusparse, '12.6').sonames).toEqual({ '12': ['libcusparse.so.12'] });
    expect(() => specForRelease(findModule('nvjitlink')!, '11.8')).toThrow(/no library name of nvjitlink for CUDA 11\.8/);
  });
});

describe.each(cases)('module surface %s %s', (release, module) => {
  const ir = readIR(root, release, module);
  const spec = findModule(module)!;
  const expected = [...ir.functions.map((f) => f.name), ...Object.keys(ir.aliases)].sort();

  test('typed layer exports exactly the IR functions and aliases', () => {
    const typed = require(join(root, 'generated', release, module, 'index.ts')) as Record<string, unknown>;
    const exclude = new Set(['configure', 'once']);
    expect(functionNames(typed, exclude)).toEqual(expected);
    expect(typeof typed[spec.status.errorClass]).toBe('function');
    // importing loaded nothing: the binder has bound no function yet
    expect((typed.binder as { bound: number }).bound).toBe(0);
  });

  test('raw layer exports exactly the IR functions and aliases', () => {
    const raw = require(join(root, 'generated', release, module, 'raw.ts')) as Record<string, unknown>;
    expect(functionNames(raw, new Set(['configure', 'once']))).toEqual(expected);
  });

  test("functions the library does not export are listed in the generated metadata (that release's survey only)", () => {
    const raw = require(join(root, 'generated', release, module, 'raw.ts')) as { notExported?: readonly string[] };
    const listed = notExportedFor(spec, release).filter((n) => ir.functions.some((f) => f.name === n));
    expect([...(raw.notExported ?? [])].sort()).toEqual(listed.sort());
  });

  test("the binding looks for this release's library names", () => {
    const binding = require(join(root, 'generated', release, module, 'binding.ts')) as { binder: { spec: { sonames: readonly string[] } } };
    expect([...binding.binder.spec.sonames]).toEqual(librariesFor(spec, release));
  });

  if (release === '13.0') {
    test('function count matches the 13.0 headers', () => {
      expect(ir.functions.length).toBe(DECLARED_13_0[module]);
    });
  }
});
