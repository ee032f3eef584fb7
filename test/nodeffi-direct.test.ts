// The node:ffi adapter's direct calls (support/nodeffi.ts): a function of at most six parameters
// is declared to node:ffi with its integers as 64-bit `pointer` registers (one lone parameter padded
// with an unused second one) and called with bigints. These tests call libc functions whose results
// show what C received (abs, labs, ldexp, htonl, ntohs, memset, strlen), through the direct path and
// through the declared-types path other ABIs use, and check the pointer rules: addresses of live,
// attached memory only, the buffer behind the last address held until the next call.
import { spawnSync } from 'node:child_process';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { Binder, Scratch } from '../support';
import { NodeFfiLibrary, nodeFfiCallPlan, nodeFfiSignature, nodeFfiUnavailableReason } from '../support/nodeffi';

const libcSpec = {
  module: 'libc (test)',
  cudaVersion: '13.0',
  cudaVersionNumber: 13000,
  sonames: ['libc.so.6'],
  env: 'CUDA_TS_TEST_LIBC',
  resolve: 'symbol' as const,
};
function libcReason(): string | undefined {
  const why = nodeFfiUnavailableReason();
  if (why) return why;
  try {
    NodeFfiLibrary.open(libcSpec);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}
const skip = libcReason();
const wideAbi = process.arch === 'x64' || process.arch === 'arm64';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Fn = (...args: any[]) => any;
/** A libc function bound through a fresh node:ffi handle (one signature per symbol and handle). */
function libc(symbol: string, result: string, params: string[], wide: boolean): Fn {
  const f = NodeFfiLibrary.open(libcSpec).bind(symbol, symbol, result, params, wide);
  if (typeof f === 'string') throw new Error(f);
  return f;
}
const transfer = (b: ArrayBuffer) => (b as ArrayBuffer & { transfer(): ArrayBuffer }).transfer();

describe('how a signature is called (no library needed)', () => {
  const plan = (params: string[], wide = true) => {
    const sig = nodeFfiSignature('int32_t', params);
    if (typeof sig === 'string') throw new Error(sig);
    return nodeFfiCallPlan(sig, wide);
  };
  test('up to six parameters: integers become 64-bit pointer registers, floats stay, one lone parameter is padded', () => {
    expect(plan([])).toEqual({ direct: true, ffiArgs: [], padded: false });
    expect(plan(['void *'])).toEqual({ direct: true, ffiArgs: ['pointer', 'pointer'], padded: true });
    expect(plan(['int32_t'])).toEqual({ direct: true, ffiArgs: ['pointer', 'pointer'], padded: true });
    expect(plan(['double'])).toEqual({ direct: true, ffiArgs: ['double'], padded: false });
    expect(plan(['void *', 'int32_t', 'int32_t'])).toEqual({ direct: true, ffiArgs: ['pointer', 'pointer', 'pointer'], padded: false });
    expect(plan(['double', 'int32_t', 'float', 'uint64_t', 'int16_t', 'void *'])).toEqual({
      direct: true,
      ffiArgs: ['double', 'pointer', 'float', 'pointer', 'pointer', 'pointer'],
      padded: false,
    });
  });
  test('seven parameters or more, or another ABI: every parameter keeps its own node:ffi type', () => {
    const seven = ['uintptr_t', 'uint32_t', 'uint32_t', 'uint32_t', 'uint32_t', 'uint32_t', 'void *'];
    expect(plan(seven)).toEqual({ direct: false, ffiArgs: ['uint64', 'uint32', 'uint32', 'uint32', 'uint32', 'uint32', 'pointer'], padded: false });
    expect(plan(['void *', 'int32_t'], false)).toEqual({ direct: false, ffiArgs: ['pointer', 'int32'], padded: false });
    expect(plan([], false)).toEqual({ direct: true, ffiArgs: [], padded: false });
  });
});

const paths: [string, boolean][] = wideAbi
  ? [
      ['direct (widened)', true],
      ['declared types', false],
    ]
  : [['declared types', false]];
for (const [label, wide] of paths) {
  (skip ? describe.skip : describe)(`libc through node:ffi, ${label}${skip ? ` — skipped: ${skip}` : ''}`, () => {
    test('32-bit integers reach C with their sign; small, large and repeated values alike', () => {
      const abs = libc('abs', 'int32_t', ['int32_t'], wide);
      expect([5, -7, -3000, -3000, 4000, -2147483647, 0, -1].map((v) => abs(v))).toEqual([5, 7, 3000, 3000, 4000, 2147483647, 0, 1]);
    });
    test('8- and 16-bit integers are sign-extended as C expects', () => {
      expect(libc('abs', 'int32_t', ['int16_t'], wide)(-300)).toBe(300);
      expect(libc('abs', 'int32_t', ['int8_t'], wide)(-100)).toBe(100);
    });
    (endianness() === 'LE' ? test : test.skip)('unsigned 16/32-bit integers keep every bit (ntohs, htonl on a little-endian host)', () => {
      const ntohs = libc('ntohs', 'uint16_t', ['uint16_t'], wide);
      const htonl = libc('htonl', 'uint32_t', ['uint32_t'], wide);
      expect(ntohs(0x0102)).toBe(0x0201);
      expect(ntohs(0xff00)).toBe(0x00ff);
      expect(htonl(0x01020304)).toBe(0x04030201);
      expect(htonl(0x80000001)).toBe(0x01000080);
      expect(htonl(0xffffffff)).toBe(0xffffffff);
    });
    test('integers out of their C type are a TypeError naming the function and parameter, before any call', () => {
      const abs = libc('abs', 'int32_t', ['int32_t'], wide);
      for (const bad of [2 ** 31, -(2 ** 31) - 1, 1.5, NaN, '3', 3n, null]) {
        expect(() => abs(bad)).toThrow(/^abs: Argument 0 must be an int32 \(parameter 0: int32_t\)/);
      }
      expect(() => libc('abs', 'int32_t', ['int8_t'], wide)(128)).toThrow(/^abs: Argument 0 must be an int8/);
      expect(() => libc('abs', 'int32_t', ['int16_t'], wide)(-32769)).toThrow(/^abs: Argument 0 must be an int16/);
      expect(() => libc('htonl', 'uint32_t', ['uint32_t'], wide)(-1)).toThrow(/^htonl: Argument 0 must be a uint32/);
      expect(() => libc('ntohs', 'uint16_t', ['uint16_t'], wide)(65536)).toThrow(/^ntohs: Argument 0 must be a uint16/);
      expect(() => abs()).toThrow(/^abs: expected 1 argument, got 0/);
      expect(() => abs(1, 2)).toThrow(/^abs: expected 1 argument, got 2/);
    });
    test('64-bit integers: numbers and bigints, signed and unsigned, checked against their type', () => {
      const labs = libc('labs', 'int64_t', ['int64_t'], wide);
      expect([-5, -(2 ** 40), 2 ** 52, -5, 7].map((v) => labs(v))).toEqual([5, 2 ** 40, 2 ** 52, 5, 7]);
      expect(labs(-5n)).toBe(5);
      expect(labs(-(2n ** 62n))).toBe(2n ** 62n); // beyond 2^53: the bigint, as koffi gives it
      expect(() => labs(2n ** 63n)).toThrow(/^labs: Argument 0 must be an int64/);
      expect(() => labs(1.5)).toThrow(RangeError);
      expect(() => labs('1')).toThrow(TypeError);
      const ulabs = libc('labs', 'uint64_t', ['uint64_t'], wide); // labs of a value below 2^63 is that value
      expect(ulabs(2 ** 52)).toBe(2 ** 52);
      expect(ulabs(12345678901234n)).toBe(12345678901234);
      expect(() => ulabs(-1)).toThrow(/^labs: Argument 0: -1 is not a non-negative integer/);
      expect(() => ulabs(2n ** 64n)).toThrow(/^labs: Argument 0 must be a uint64/);
      expect(() => ulabs(-1n)).toThrow(/^labs: Argument 0 must be a uint64/);
    });
    test('doubles and floats between integer parameters keep their registers (ldexp, ldexpf)', () => {
      expect(libc('ldexp', 'double', ['double', 'int32_t'], wide)(1.5, -2)).toBe(0.375);
      expect(libc('ldexp', 'double', ['double', 'int32_t'], wide)(3, 10)).toBe(3072);
      expect(libc('ldexpf', 'float', ['float', 'int32_t'], wide)(0.75, 3)).toBe(6);
    });
    test('pointers: buffers and views by their address (sub-views, DataViews, the ArrayBuffer), numbers, bigints, NULL', () => {
      const where = libc('labs', 'int64_t', ['void *'], wide); // the address C received
      const buf = new ArrayBuffer(32);
      const base = where(new Uint8Array(buf));
      expect(base).toBeGreaterThan(0);
      expect(where(buf)).toBe(base);
      const sub = new Uint8Array(buf, 8, 8);
      expect(where(sub)).toBe(base + 8);
      expect(where(sub)).toBe(base + 8); // again, remembered
      expect(where(new DataView(buf, 16))).toBe(base + 16);
      expect(where(new Float64Array(buf, 24, 1))).toBe(base + 24);
      const small = new Int32Array(2); // a small typed array starts on the V8 heap
      expect(where(small)).toBe(where(small));
      expect(where(null)).toBe(0);
      expect(where(undefined)).toBe(0);
      expect(where(0x12345678)).toBe(0x12345678);
      expect(where(2n ** 40n)).toBe(2 ** 40);
      expect(() => where(-1)).toThrow(RangeError);
      expect(() => where(-1n)).toThrow(/^labs: .*parameter 0: void \*/);
      expect(() => where({})).toThrow(/^labs: .*parameter 0: void \*/);
      expect(() => where(true)).toThrow(TypeError);
    });
    test("C writes land at the view's own offset (memset)", () => {
      const memset = libc('memset', 'uint64_t', ['void *', 'int32_t', 'size_t'], wide);
      const bytes = new Uint8Array(16);
      memset(new Uint8Array(bytes.buffer, 5, 3), 0x7f, 3);
      expect([...bytes]).toEqual([0, 0, 0, 0, 0, 0x7f, 0x7f, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0]);
      const s = new Scratch(2);
      memset(s.slot(1), 0x11, 8);
      memset(s.slot(1), 0x22, 4);
      expect(s.u64[0]).toBe(0n);
      expect(s.u64[1]).toBe(0x1111111122222222n);
      const dv = new DataView(bytes.buffer, 12, 4);
      memset(dv, 1, 4);
      expect(dv.getUint32(0)).toBe(0x01010101);
    });
    test('strings are copied as NUL-terminated UTF-8 (strlen)', () => {
      const strlen = libc('strlen', 'size_t', ['const char *'], wide);
      expect(strlen('hello')).toBe(5);
      expect(strlen('héllo')).toBe(6);
    });
    test('a detached buffer is refused before the call, also after its address was remembered', () => {
      const memset = libc('memset', 'uint64_t', ['void *', 'int32_t', 'size_t'], wide);
      const buf = new ArrayBuffer(16);
      const view = new Uint8Array(buf, 4, 4);
      const dv = new DataView(buf, 8, 4);
      memset(view, 1, 4);
      memset(dv, 1, 4);
      memset(buf, 0, 1);
      const moved = transfer(buf);
      expect(() => memset(view, 2, 4)).toThrow(/^memset: Argument 0 is an ArrayBufferView backed by a detached ArrayBuffer \(parameter 0: void \*\)/);
      expect(() => memset(buf, 2, 4)).toThrow(/^memset: Argument 0 is a detached ArrayBuffer/);
      expect(() => memset(dv, 2, 4)).toThrow(TypeError);
      expect([...new Uint8Array(moved)]).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0]); // nothing written after the transfer
      const s = new Scratch(1);
      memset(s.slot(0), 3, 8);
      transfer(s.bytes.buffer as ArrayBuffer);
      expect(() => memset(s.slot(0), 4, 8)).toThrow(TypeError);
    });
  });
}

(skip ? describe.skip : describe)(`the Binder binds through the direct path${skip ? ` — skipped: ${skip}` : ''}`, () => {
  test('configure({ ffi: "node" }): libc calls go through node:ffi with the platform\'s plan', () => {
    const b = new Binder(libcSpec);
    b.configure({ ffi: 'node' });
    const abs = b.bind('abs', 'abs', undefined, 'int32_t', ['int32_t']);
    expect(abs(-42)).toBe(42);
    expect(b.backendOf('abs')).toEqual({ backend: 'node' });
  });
  test('a function of seven parameters or more stays on koffi (node:ffi passes those through a slower shared buffer)', () => {
    const b = new Binder(libcSpec);
    b.configure({ ffi: 'node' });
    // declared with seven parameters (C ignores the extra ones): bound, and called once through koffi
    const abs7 = b.bind('abs7', 'abs', undefined, 'int32_t', ['int32_t', 'int32_t', 'int32_t', 'int32_t', 'int32_t', 'int32_t', 'int32_t']);
    expect(abs7(-5, 0, 0, 0, 0, 0, 0)).toBe(5);
    expect(b.backendOf('abs7')).toEqual({ backend: 'koffi', reason: '7 parameters: node:ffi passes more than 6 through a shared buffer, slower than koffi' });
    const abs6 = b.bind('abs6', 'abs', undefined, 'int32_t', ['int32_t', 'int32_t', 'int32_t', 'int32_t', 'int32_t', 'int32_t']);
    expect(abs6(-6, 0, 0, 0, 0, 0)).toBe(6);
    expect(b.backendOf('abs6')).toEqual({ backend: 'node' });
  });
});

// The last buffer passed to each pointer parameter stays reachable until the next call replaces it,
// so that a collection during the call cannot free the memory behind the address C writes through.
// Checked with a WeakRef and forced collections in a child Node (--expose-gc), and under collection
// pressure with temporaries that nothing else references.
(skip ? describe.skip : describe)(`the memory behind an address outlives the call${skip ? ` — skipped: ${skip}` : ''}`, () => {
  test('held until the next call, released after; temporaries under forced collections stay exact', () => {
    const runtime = join(__dirname, '..', 'support');
    const code = `
      const { Binder } = require(${JSON.stringify(runtime)});
      const b = new Binder(${JSON.stringify(libcSpec)});
      b.configure({ ffi: 'node' });
      const memset = b.bind('memset', 'memset', undefined, 'uint64_t', ['void *', 'int32_t', 'size_t']);
      const tick = () => new Promise((r) => setTimeout(r, 0));
      (async () => {
        let ref;
        (() => { const tmp = new Uint8Array(64); memset(tmp, 1, 64); ref = new WeakRef(tmp); })();
        await tick(); gc(); await tick(); gc();
        const held = ref.deref() !== undefined;
        memset(new Uint8Array(8), 2, 8);
        await tick(); gc(); await tick(); gc();
        const released = ref.deref() === undefined;
        let wrong = 0;
        for (let i = 0; i < 3000; i++) {
          const t = new Uint8Array(8 + (i % 57));
          memset(t, i & 0xff, t.length);
          for (let j = 0; j < t.length; j++) if (t[j] !== (i & 0xff)) wrong++;
          if (i % 250 === 0) gc();
        }
        process.stdout.write(JSON.stringify({ held, released, wrong }));
      })();`;
    const r = spawnSync(process.execPath, ['--expose-gc', '--no-warnings', '--require', 'tsx/cjs', '-e', code], {
      cwd: join(__dirname, '..'),
      encoding: 'utf8',
      timeout: 60000,
    });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ held: true, released: true, wrong: 0 });
  });
});
