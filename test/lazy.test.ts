// The generated entries load their implementations lazily (generator/emit/lazy.ts): importing a
// module loads no chunk file, the first call of a function loads its chunk once and replaces the
// chunk's exports on the module, a stub held by a caller keeps working without loading again, and
// enums are built on first access with TypeScript's name ↔ value lookup.
import { runScript } from './helpers/run-script';
import { join } from 'node:path';
import koffi from 'koffi';
import { lazyEnums, lazyFunctions, lazyRecords } from '../support';
import { lazyMember } from '../support/lazy';

describe('lazyFunctions', () => {
  test('loads a chunk once, on the first call, and replaces every export of it', () => {
    const loads: string[] = [];
    const impl = {
      fooA: (a: number, b: number) => a + b,
      fooB: () => 'b',
      fooWithFlags: (a: number) => a * 2,
    };
    const exports: Record<string, unknown> = {};
    lazyFunctions(exports, '\nFoo|fooA/2 fooB/0 fooWithFlags/1 foo=fooWithFlags/1\nBar|barX/1\n', (chunk) => {
      loads.push(chunk);
      if (chunk === 'Foo') return impl;
      return { barX: (x: number) => -x };
    });
    expect(loads).toEqual([]);
    expect(Object.keys(exports).sort()).toEqual(['barX', 'foo', 'fooA', 'fooB', 'fooWithFlags']);
    expect(exports.foo).toBe(exports.fooWithFlags); // an alias is its target before loading too
    const stubA = exports.fooA as (a: number, b: number) => number;
    expect(stubA.length).toBe(2);
    expect((exports.fooWithFlags as (a: number) => number).length).toBe(1);
    expect(stubA(2, 3)).toBe(5);
    expect(loads).toEqual(['Foo']);
    // every function of the chunk is replaced on the module, the alias by its target
    expect(exports.fooA).toBe(impl.fooA);
    expect(exports.fooB).toBe(impl.fooB);
    expect(exports.foo).toBe(impl.fooWithFlags);
    // a held stub still works and loads nothing again
    expect(stubA(4, 5)).toBe(9);
    expect(loads).toEqual(['Foo']);
    expect(exports.barX).not.toBe(undefined);
    expect((exports.barX as (x: number) => number)(3)).toBe(-3);
    expect(loads).toEqual(['Foo', 'Bar']);
  });
  test('a stub passes every argument, past 16 too', () => {
    const exports: Record<string, unknown> = {};
    lazyFunctions(exports, 'C|f3/3 f20/20', () => ({ f3: (...a: unknown[]) => a, f20: (...a: unknown[]) => a }));
    expect((exports.f3 as (...a: number[]) => unknown)(1, 2, 3)).toEqual([1, 2, 3]);
    const twenty = Array.from({ length: 20 }, (_, i) => i);
    expect((exports.f20 as (...a: number[]) => unknown)(...twenty)).toEqual(twenty);
  });
});

describe('lazyEnums', () => {
  test('builds an enum on first access, with name → value and value → name, aliases and bigints', () => {
    const exports: Record<string, unknown> = {};
    lazyEnums(exports, '\nE|A=0 B=1 C=-1 BIG=18446744073709551615n\nE_enum=E\nEmpty|\n');
    expect(Object.getOwnPropertyDescriptor(exports, 'E')!.get).toBeDefined();
    const e = exports.E as Record<string | number, unknown>;
    expect(e.A).toBe(0);
    expect(e[1]).toBe('B');
    expect(e.C).toBe(-1);
    expect(e[-1]).toBe('C');
    expect(e.BIG).toBe(18446744073709551615n);
    expect(exports.E_enum).toBe(e);
    expect(exports.E).toBe(e);
    expect(Object.getOwnPropertyDescriptor(exports, 'E')!.value).toBe(e); // a plain property once built
    expect(exports.Empty).toEqual({});
  });

  test('an entry re-exporting the getter (export *) gets a plain property on its first read', () => {
    const types: Record<string, unknown> = { __esModule: true };
    lazyEnums(types, '\nE|A=0\n');
    const entry: Record<string, unknown> = {};
    Object.defineProperty(entry, 'E', Object.getOwnPropertyDescriptor(types, 'E')!); // what TypeScript's export * does
    const e = entry.E;
    expect(Object.getOwnPropertyDescriptor(entry, 'E')!.value).toBe(e);
    expect(types.E).toBe(e); // one enum object for both
  });
});

describe('lazyMember', () => {
  test('makes the value once, whether the module or an entry re-exporting it is read first', () => {
    for (const first of ['module', 'entry']) {
      let made = 0;
      const types: Record<string, unknown> = { __esModule: true };
      lazyMember(types, 'table', () => ({ made: ++made }));
      const entry: Record<string, unknown> = {};
      Object.defineProperty(entry, 'table', Object.getOwnPropertyDescriptor(types, 'table')!);
      const [a, b] = first === 'module' ? [types.table, entry.table] : [entry.table, types.table];
      expect(a).toBe(b);
      expect(made).toBe(1);
      expect(Object.getOwnPropertyDescriptor(entry, 'table')!.value).toBe(a);
      expect(Object.getOwnPropertyDescriptor(types, 'table')!.value).toBe(a);
    }
  });
});

describe('lazyRecords', () => {
  test('records is made on its first read (through the module or an entry re-exporting it), each type on its first call', () => {
    const types: Record<string, unknown> = { __esModule: true };
    lazyRecords(types, '\nP|struct|x:int32_t,y:int32_t\nQ|union|p:&P,z:uint8_t[3]\n');
    expect(Object.getOwnPropertyDescriptor(types, 'records')!.get).toBeDefined();
    const entry: Record<string, unknown> = {};
    Object.defineProperty(entry, 'records', Object.getOwnPropertyDescriptor(types, 'records')!);
    const records = entry.records as Record<string, () => unknown>;
    expect(Object.getOwnPropertyDescriptor(entry, 'records')!.value).toBe(records);
    expect(types.records).toBe(records);
    const p = records.P();
    expect(koffi.sizeof(p as Parameters<typeof koffi.sizeof>[0])).toBe(8);
    expect(records.P()).toBe(p);
    expect(koffi.sizeof(records.Q() as Parameters<typeof koffi.sizeof>[0])).toBe(8);
  });
});

describe('a generated entry', () => {
  test('importing the driver loads no chunk; a call loads its chunk only; enums as before', () => {
    const root = join(__dirname, '..');
    const script = `
      const loaded = () => Object.keys(require.cache).filter((f) => /[\\\\/](typed|raw-layer)[\\\\/]/.test(f) && !/shared/.test(f)).map((f) => f.split(/[\\\\/]/).slice(-2).join('/'));
      const d = require(${JSON.stringify(join(root, 'generated', '13.0', 'driver', 'index.ts'))});
      const out = { atImport: loaded() };
      const stub = d.cuDriverGetVersion;
      try { stub(); } catch (e) { out.error = e.constructor.name; }
      out.afterCall = loaded();
      // loading a chunk builds no record type table: cuDriverGetVersion takes no record
      out.recordsMade = 'value' in Object.getOwnPropertyDescriptor(require(${JSON.stringify(join(root, 'generated', '13.0', 'driver', 'types.ts'))}), 'records');
      out.replaced = d.cuDriverGetVersion !== stub && typeof d.cuDriverGetVersion === 'function';
      try { stub(); } catch (e) {}
      out.afterSecond = loaded();
      out.success = d.CUresult.CUDA_SUCCESS;
      out.name = d.CUresult[1];
      out.error2 = (() => { try { d.cuMemAlloc(-1); } catch (e) { return e.constructor.name + ': ' + e.message.split(':')[0]; } })();
      process.stdout.write(JSON.stringify(out));
    `;
    const r = runScript(script, { cwd: root, env: { ...process.env, CUDA_TS_DRIVER_LIBRARY: '/nonexistent/libcuda.so.1' } });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    expect(out.atImport).toEqual([]);
    expect(out.afterCall).toHaveLength(1);
    expect(out.afterCall[0]).toMatch(/^typed\/\w+\.ts$/);
    expect(out.error).toBe('CudaLibraryError');
    expect(out.recordsMade).toBe(false);
    expect(out.replaced).toBe(true);
    expect(out.afterSecond).toEqual(out.afterCall);
    expect(out.success).toBe(0);
    expect(out.name).toBe('CUDA_ERROR_INVALID_VALUE');
    expect(out.error2).toBe('RangeError: cuMemAlloc');
  });
});
