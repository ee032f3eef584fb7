// Records read once (issue 47 §4): every record argument is copied once into plain objects of our own
// (each property read exactly once), the copy checked, and only the copy reaches koffi. koffi aborts the
// process (SIGABRT, uncatchable) on a field of the wrong JS type, so a getter or Proxy answering a number
// when checked and a string when koffi read again used to kill the process: those cases run in a child.
// Also §6: a string holding a NUL never reaches a `const char *` (C would see a shorter string).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { checkRecord, cstringArg, encodeRecord, koffi, lazyRecord, recordArg, recordArrayArg, type KoffiType } from '../support';
import { runScript } from './helpers/run-script';

const ROOT = join(__dirname, '..');
const cudart = ['/usr/local/cuda/lib64/libcudart.so.13', '/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.13'].some(existsSync);

/** An object whose `x` answers 1 on the first read and 'boom' afterwards; `reads` counts the reads. */
function flaky(rest: Record<string, unknown> = { y: 1, z: 1 }): { reads: number; x: unknown } {
  const o = { reads: 0, ...rest } as { reads: number; x: unknown };
  Object.defineProperty(o, 'x', { enumerable: true, get: () => (o.reads++ === 0 ? 1 : 'boom') });
  Object.defineProperty(o, 'reads', { enumerable: false });
  return o;
}

const inner = lazyRecord('struct', () => [
  ['a', 'int32_t'],
  ['b', 'uint64_t'],
]);
const outer = lazyRecord('struct', () => [
  ['n', 'uint32_t'],
  ['inner', inner],
  ['dims', 'int32_t', { n: 3 }],
  ['name', 'char', { n: 8, hint: 'String' }],
  ['text', 'const char *'],
  ['many', inner, { n: 2 }],
]);
const dim3 = (): KoffiType => koffi.struct({ x: 'uint32_t', y: 'uint32_t', z: 'uint32_t' });

describe('a record is read once, checked and passed as a copy', () => {
  test('checkRecord returns a plain copy, each property read exactly once, nested records and arrays too', () => {
    const reads: string[] = [];
    const spy = <T extends object>(name: string, o: T): T =>
      new Proxy(o, { get: (t, k, r) => (typeof k === 'string' && reads.push(`${name}.${k}`), Reflect.get(t, k, r)) });
    const value = spy('v', { n: 1, inner: spy('inner', { a: -2, b: 3n }), dims: spy('dims', [1, 2, 3]), many: [spy('m0', { a: 1 })] });
    const copy = checkRecord('f', 'p', outer(), value);
    expect(copy).not.toBe(value);
    expect(copy).toEqual({ n: 1, inner: { a: -2, b: 3n }, dims: [1, 2, 3], many: [{ a: 1 }] });
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(reads.sort()).toEqual(
      ['dims.0', 'dims.1', 'dims.2', 'dims.length', 'inner.a', 'inner.b', 'm0.a', 'm0.b', 'v.dims', 'v.inner', 'v.many', 'v.n', 'v.name', 'v.text'].sort(),
    );
  });

  test('the copy keeps the first answer of a getter; koffi encodes the copy', () => {
    const v = flaky();
    const bytes = encodeRecord(dim3(), v);
    expect([...new Uint32Array(bytes.buffer, 0, 3)]).toEqual([1, 1, 1]);
    expect(v.reads).toBe(1);
  });

  test('a wrong field found in the copy is a TypeError naming the call and the full path', () => {
    const v = { n: 1, inner: { a: 'x' } };
    expect(() => checkRecord('cuThing', 'desc', outer(), v)).toThrow(
      new TypeError('cuThing: desc.inner.a must be an integer in [-2147483648, 2147483647], got "x"'),
    );
    expect(() => checkRecord('cuThing', 'desc', outer(), { many: [{ a: 1 }, { b: -1 }] })).toThrow(
      new RangeError('cuThing: desc.many[1].b must be a non-negative safe integer or a bigint below 2**64, got -1'),
    );
    expect(() => checkRecord('cuThing', 'desc', outer(), { dims: [1, 2, 3, 4] })).toThrow(new RangeError('cuThing: desc.dims holds at most 3 elements, got 4'));
    expect(() => checkRecord('cuThing', 'desc', outer(), { bogus: 1 })).toThrow(/^cuThing: desc has no field "bogus"/);
    // the failure of one call leaves nothing behind for the next
    expect(checkRecord('cuThing', 'desc', outer(), { n: 2 })).toEqual({ n: 2 });
  });

  test('a Proxy array answering a length that is no length is refused, not looped over', () => {
    const hostile = new Proxy([1, 2], { get: (t, k, r) => (k === 'length' ? 'boom' : Reflect.get(t, k, r)) });
    expect(() => checkRecord('f', 'p', outer(), { dims: hostile })).toThrow(new TypeError('f: p.dims must be an array with a length, got a length of "boom"'));
    const huge = new Proxy([], { get: (t, k, r) => (k === 'length' ? 2 ** 32 : Reflect.get(t, k, r)) });
    expect(() => recordArrayArg('f', 'p', inner(), huge, false)).toThrow(TypeError);
  });

  test('a typed array field is copied by its real length: an own `length` property cannot hide elements', () => {
    const ta = new Int32Array([5, 6, 7, 8]);
    Object.defineProperty(ta, 'length', { value: 1 });
    expect(() => checkRecord('f', 'p', outer(), { dims: ta })).toThrow(new RangeError('f: p.dims holds at most 3 elements, got 4'));
    const ok = new Int32Array([5, 6]);
    const copy = checkRecord('f', 'p', outer(), { dims: ok }) as unknown as { dims: Uint8Array };
    ok[0] = 99; // the copy is ours: later writes to the caller's array do not reach it
    expect([...new Int32Array(copy.dims.buffer)]).toEqual([5, 6]);
  });

  test('recordArg and recordArrayArg encode copies read once', () => {
    const v = flaky();
    const bytes = recordArg('f', 'p', dim3(), v, false) as Uint8Array;
    expect([...new Uint32Array(bytes.buffer, 0, 3)]).toEqual([1, 1, 1]);
    const w = flaky();
    const { bytes: many, count } = recordArrayArg('f', 'p', dim3(), [w, { x: 4 }], false);
    expect(count).toBe(2);
    expect([...new Uint32Array(many!.buffer, 0, 6)]).toEqual([1, 1, 1, 4, 0, 0]);
    expect([v.reads, w.reads]).toEqual([1, 1]);
  });
});

describe('a string holding a NUL never reaches a const char *', () => {
  test('cstringArg refuses it with a TypeError naming the call and the parameter; null where allowed', () => {
    expect(() => cstringArg('nvrtcCreateProgram', 'src', 'a\0b', false)).toThrow(
      new TypeError('nvrtcCreateProgram: src must not contain a NUL character (C would see the string end at index 1), got "a\\u0000b"'),
    );
    expect(() => cstringArg('f', 'p', null, false)).toThrow(new TypeError('f: p must be a string, got null'));
    expect(() => cstringArg('f', 'p', 5, true)).toThrow(new TypeError('f: p must be a string or null, got 5'));
    expect(() => cstringArg('f', 'p', 'fine', false)).not.toThrow();
    expect(() => cstringArg('f', 'p', null, true)).not.toThrow();
  });

  test('nor a record field: a const char * field or a char array read as text', () => {
    expect(() => checkRecord('f', 'p', outer(), { text: 'ab\0c' })).toThrow(/^f: p\.text must not contain a NUL character/);
    expect(() => checkRecord('f', 'p', outer(), { name: 'ab\0c' })).toThrow(/^f: p\.name must not contain a NUL character/);
    expect(checkRecord('f', 'p', outer(), { name: 'abc', text: 'def' })).toEqual({ name: 'abc', text: 'def' });
  });

  (cudart ? test : test.skip)('the typed and raw layers refuse it before the call (libcudart)', () => {
    const rt = require('../generated/13.0/runtime') as typeof import('../generated/13.0/runtime');
    const raw = require('../generated/13.0/runtime/raw') as typeof import('../generated/13.0/runtime/raw');
    expect(() => rt.cudaDeviceGetByPCIBusId('0000:01:00.0\0junk')).toThrow(/^cudaDeviceGetByPCIBusId: pciBusId must not contain a NUL character/);
    expect(() => raw.cudaDeviceGetByPCIBusId(new Int32Array(1), '0000:01:00.0\0junk')).toThrow(
      /^cudaDeviceGetByPCIBusId: pciBusId must not contain a NUL character/,
    );
    expect(() => rt.cudaDeviceGetByPCIBusId(7 as never)).toThrow(new TypeError('cudaDeviceGetByPCIBusId: pciBusId must be a string, got 7'));
  });
});

/** Runs `body` in a child process with the hostile helpers defined; its result. */
function hostileChild(body: string): { status: number | null; signal: NodeJS.Signals | null; out: string } {
  const code = `
    function flaky() { let n = 0; const o = { y: 1, z: 1 }; Object.defineProperty(o, 'x', { enumerable: true, get: () => (n++ === 0 ? 1 : 'boom') }); return o; }
    function flakyProxy(keys) { const n = {}; return new Proxy({}, {
      ownKeys: () => keys, getOwnPropertyDescriptor: () => ({ value: 1, enumerable: true, configurable: true }),
      get: (_t, k) => (keys.includes(k) ? ((n[k] = (n[k] || 0) + 1) === 1 ? 1 : 'boom') : undefined) }); }
    const fromRoot = (p) => require(require('node:path').join(${JSON.stringify(ROOT)}, p)); // the snippet may run from a temporary file (Bun, Deno)
    try { ${body} } catch (e) { console.log('threw ' + e.constructor.name + ': ' + e.message); }`;
  const r = runScript(code, { cwd: ROOT });
  return { status: r.status, signal: r.signal, out: `${r.stdout}${r.stderr}` };
}

(cudart ? describe : describe.skip)('getters and Proxies answering differently the second time do not abort the process (child processes)', () => {
  test('raw cudaLaunchKernel with a dim3 getter: the call runs with the first answer', () => {
    const r = hostileChild(
      `const raw = fromRoot('generated/13.0/runtime/raw'); console.log('status ' + raw.cudaLaunchKernel(0, flaky(), flakyProxy(['x', 'y', 'z']), null, 0, 0));`,
    );
    expect({ status: r.status, signal: r.signal }).toEqual({ status: 0, signal: null });
    expect(r.out).toMatch(/^status \d+$/m); // libcudart's status without a GPU: the arguments were encoded
  });

  test('typed cudaChooseDevice with a Proxy cudaDeviceProp: CUDA answers (no device here), koffi never sees the Proxy', () => {
    const r = hostileChild(`const rt = fromRoot('generated/13.0/runtime'); console.log('device ' + rt.cudaChooseDevice(flakyProxy(['major', 'minor'])));`);
    expect({ status: r.status, signal: r.signal }).toEqual({ status: 0, signal: null });
    expect(r.out).toMatch(/^(device \d+|threw RuntimeError: cudaChooseDevice failed.*)$/m);
  });

  test('typed cudaLaunchKernel with a getter dim3 and encodeRecord with a Proxy', () => {
    const r = hostileChild(`
      const rt = fromRoot('generated/13.0/runtime'); const { encodeRecord } = fromRoot('support');
      console.log('bytes ' + [...encodeRecord(rt.records.dim3(), flakyProxy(['x', 'y', 'z']))].join(','));
      try { rt.cudaLaunchKernel(0, flaky(), flaky(), null, 0, 0); } catch (e) { console.log('threw ' + e.constructor.name); }`);
    expect({ status: r.status, signal: r.signal }).toEqual({ status: 0, signal: null });
    expect(r.out).toMatch(/^bytes 1,0,0,0,1,0,0,0,1,0,0,0$/m);
    expect(r.out).toMatch(/^threw RuntimeError$/m);
  });

  test('a nested record field answering a string the second time (recordArrayArg, encodeRecord)', () => {
    const r = hostileChild(`
      const { encodeRecord, recordArrayArg, koffi } = fromRoot('support');
      const inner = koffi.struct({ a: 'int' }); const outer = koffi.struct({ i: inner, v: koffi.array('int', 2) });
      let n = 0; const arr = new Proxy([0, 0], { get: (t, k, r) => (k === '0' ? (n++ === 0 ? 7 : 'boom') : Reflect.get(t, k, r)) });
      console.log('bytes ' + [...encodeRecord(outer, { i: flakyProxy(['a']), v: arr })].join(','));
      console.log('count ' + recordArrayArg('f', 'p', inner, [flakyProxy(['a'])], false).count);`);
    expect({ status: r.status, signal: r.signal }).toEqual({ status: 0, signal: null });
    expect(r.out).toMatch(/^bytes 1,0,0,0,7,0,0,0,0,0,0,0$/m);
    expect(r.out).toMatch(/^count 1$/m);
  });
});

describe('a complex scalar is read once', () => {
  test('scalarArg boxes the first answer of re/im getters', () => {
    const { scalarArg } = require('../support') as typeof import('../support');
    let reads = 0;
    const v = {
      get re() {
        return reads++ === 0 ? 1.5 : 'boom';
      },
      im: 2,
    };
    const box = new Uint8Array(16);
    expect(scalarArg('f', 'alpha', 'c128', 'host', v, box)).toBe(box);
    expect([...new Float64Array(box.buffer, 0, 2)]).toEqual([1.5, 2]);
    expect(reads).toBe(1);
    expect(scalarArg('f', 'alpha', 'c64', 'host', [3, 4], box)).toBe(box);
    expect([...new Float32Array(box.buffer, 0, 2)]).toEqual([3, 4]);
    expect(() => scalarArg('f', 'alpha', 'c64', 'host', [3], box)).toThrow(TypeError);
  });
});
