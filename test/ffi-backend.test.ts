// The FFI seam: the same calls through koffi, node:ffi (Node 26+), bun:ffi (under Bun) and
// Deno.dlopen (under Deno), on this machine's libcudart (no GPU needed: cudaGetDeviceCount answers cudaErrorInsufficientDriver (35) without a
// driver, cudaRuntimeGetVersion and cudaGetErrorName need none). The node:ffi half skips with its
// reason where the running Node has no node:ffi. `CUDA_TS_FFI=node` runs the whole unit suite with
// the generated modules on node:ffi; the last block checks that the environment took effect.
import { existsSync } from 'node:fs';
import {
  Binder,
  type FfiBackend,
  Scratch,
  defaultFfi,
  jsRuntime,
  jsRuntimeVersion,
  koffi,
  loadLibrary,
  nodeFfi,
  nodeFfiParam,
  nodeFfiSignature,
  nodeFfiUnavailableReason,
} from '../support';
import { bunFfiSignature, bunFfiUnavailableReason } from '../support/bunffi';
import { nodeFfiMissing } from '../support/nodeffi';
import { FIX_ARGUMENTS, fixedCall } from '../support/fixed-call';
import { denoCallPlan, denoFfiUnavailableReason } from '../support/denoffi';

function hasCudart(): boolean {
  try {
    loadLibrary({ module: 'runtime', sonames: ['libcudart.so.13'], env: 'CUDA_TS_RUNTIME_LIBRARY' });
    return true;
  } catch {
    return false;
  }
}
const cudart = hasCudart();
const hasDriver = ['/usr/lib/x86_64-linux-gnu/libcuda.so.1', '/usr/local/nvidia/lib64/libcuda.so.1', '/usr/lib64/libcuda.so.1'].some(existsSync);
const nodeReason = nodeFfiUnavailableReason();

const runtimeSpec = {
  module: 'runtime',
  cudaVersion: '13.0',
  cudaVersionNumber: 13000,
  sonames: ['libcudart.so.13'],
  env: 'CUDA_TS_RUNTIME_LIBRARY',
  resolve: 'symbol' as const,
};
function binderFor(ffi: FfiBackend): Binder {
  const b = new Binder(runtimeSpec);
  b.configure({ ffi });
  return b;
}

describe('node:ffi signature mapping (no library needed)', () => {
  test('scalars, 64-bit integers and pointers map; records, bool and string results stay on koffi', () => {
    expect(nodeFfiParam('int32_t')).toEqual({ ffi: 'int32', conv: 'none' });
    expect(nodeFfiParam('uintptr_t')).toEqual({ ffi: 'uint64', conv: 'u64' });
    expect(nodeFfiParam('int64_t')).toEqual({ ffi: 'int64', conv: 'i64' });
    expect(nodeFfiParam('const char *')).toEqual({ ffi: 'pointer', conv: 'ptr' });
    expect(nodeFfiParam('bool')).toBeUndefined();
    expect(nodeFfiParam({} as unknown)).toBeUndefined();
    expect(nodeFfiSignature('int32_t', ['void *', 'uint64_t'])).toMatchObject({ result: ['int32', false] });
    expect(nodeFfiSignature('uint64_t', [])).toMatchObject({ result: ['uint64', true] });
    expect(nodeFfiSignature('const char *', ['int32_t'])).toMatch(/result type const char \* is not expressed/);
    expect(nodeFfiSignature('int32_t', ['int32_t', {}])).toMatch(/parameter 1 \(a record by value\)/);
  });
  test('configure() refuses an unknown backend, and only before the first call', () => {
    const b = new Binder(runtimeSpec);
    expect(() => b.configure({ ffi: 'ctypes' as FfiBackend })).toThrow(TypeError);
    expect(b.ffi).toBe(defaultFfi());
  });
});

describe('why node:ffi is unavailable (no library needed)', () => {
  test("under Bun or Deno the reason names that runtime, not the Node version it reports (Bun 1.4's v26.3.0)", () => {
    expect(nodeFfiMissing('bun', '1.4.5')).toBe("node:ffi is Node's own FFI; this is Bun 1.4.5, not Node");
    expect(nodeFfiMissing('deno', '2.9.6')).toBe("node:ffi is Node's own FFI; this is Deno 2.9.6, not Node");
    expect(nodeFfiMissing('node', 'v22.3.0')).toMatch(/^node v22\.3\.0 has no node:ffi \(Node 26 provides it/);
  });
  test('under Bun the reason says so (under Node: a process made to look like Bun 1.4.5, whose process.version is v26.3.0)', () => {
    if (jsRuntime() !== 'node') {
      // the real thing: Bun or Deno running the suite
      expect(nodeFfiUnavailableReason()).toBe(`node:ffi is Node's own FFI; this is ${jsRuntime() === 'bun' ? 'Bun' : 'Deno'} ${jsRuntimeVersion()}, not Node`);
      return;
    }
    const g = globalThis as { Bun?: unknown };
    const savedGet = Object.getOwnPropertyDescriptor(process, 'getBuiltinModule');
    const savedVersion = Object.getOwnPropertyDescriptor(process, 'version');
    g.Bun = { version: '1.4.5' };
    Object.defineProperty(process, 'getBuiltinModule', { value: () => undefined, configurable: true, writable: true });
    Object.defineProperty(process, 'version', { value: 'v26.3.0', configurable: true, writable: true });
    try {
      let reason = '';
      jest.isolateModules(() => {
        reason = (require('../support/nodeffi') as typeof import('../support/nodeffi')).nodeFfiUnavailableReason();
      });
      expect(reason).toBe("node:ffi is Node's own FFI; this is Bun 1.4.5, not Node");
    } finally {
      delete g.Bun;
      if (savedGet) Object.defineProperty(process, 'getBuiltinModule', savedGet);
      else delete (process as { getBuiltinModule?: unknown }).getBuiltinModule;
      if (savedVersion) Object.defineProperty(process, 'version', savedVersion);
    }
  });
});

describe('choosing the FFI (no library needed)', () => {
  test('CUDA_TS_FFI names one of four; unset, the runtime decides (its own FFI under Bun and Deno, koffi under Node)', () => {
    for (const b of ['koffi', 'node', 'bun', 'deno']) expect(defaultFfi(b)).toBe(b);
    expect(defaultFfi('ctypes')).toBe("CUDA_TS_FFI must be one of koffi, node, bun, deno, not 'ctypes'");
    expect(defaultFfi('')).toBe({ node: 'koffi', bun: 'bun', deno: 'deno' }[jsRuntime()]); // '' is unset (undefined would read the environment)
  });
  test('an unknown CUDA_TS_FFI fails the first call with a TypeError naming it; configure() overrides it', () => {
    const saved = process.env.CUDA_TS_FFI;
    process.env.CUDA_TS_FFI = 'ctypes';
    try {
      const b = new Binder(runtimeSpec);
      expect(() => b.bind('cudaGetLastError', 'cudaGetLastError', undefined, 'int32_t', [])).toThrow(
        /^cuda-ts runtime: cudaGetLastError: CUDA_TS_FFI must be one of koffi, node, bun, deno, not 'ctypes'$/,
      );
      const c = new Binder(runtimeSpec);
      c.configure({ ffi: 'koffi' });
      expect(c.ffi).toBe('koffi');
    } finally {
      if (saved === undefined) delete process.env.CUDA_TS_FFI;
      else process.env.CUDA_TS_FFI = saved;
    }
  });
  test('bun:ffi signatures: pointers as ptr (strings copied for char *), 64-bit results as numbers below 2^53; records and pointer results stay on koffi', () => {
    expect(bunFfiSignature('int32_t', ['void *', 'uintptr_t', 'const char *', 'uint32_t'])).toEqual({
      args: ['ptr', 'u64', 'ptr', 'u32'],
      returns: 'i32',
      strings: [2],
    });
    expect(bunFfiSignature('uint64_t', ['bool', 'double'])).toEqual({ args: ['bool', 'f64'], returns: 'u64_fast', strings: [] });
    expect(bunFfiSignature('const char *', ['int32_t'])).toMatch(/result type const char \* is not expressed through bun:ffi/);
    expect(bunFfiSignature('int32_t', [{}])).toMatch(/parameter 0 \(a record by value\)/);
  });
  test('Deno signatures: pointers and 64-bit integers as u64 bigints up to six parameters, their own types beyond; 8-32-bit integers and floats always their own', () => {
    const plan = (params: string[]) => denoCallPlan((nodeFfiSignature('int32_t', params) as { args: Parameters<typeof denoCallPlan>[0] }).args);
    expect(plan(['void *'])).toEqual({ direct: true, ffiArgs: ['u64'], padded: false });
    expect(plan(['void *', 'int32_t', 'float'])).toEqual({ direct: true, ffiArgs: ['u64', 'i32', 'f32'], padded: false });
    expect(plan(['uint8_t', 'int16_t', 'uint32_t', 'int64_t', 'size_t'])).toEqual({ direct: true, ffiArgs: ['u8', 'i16', 'u32', 'u64', 'u64'], padded: false });
    expect(plan(['void *', 'int32_t', 'uint64_t', 'void *', 'void *', 'void *', 'uint32_t'])).toEqual({
      direct: false,
      ffiArgs: ['u64', 'i32', 'u64', 'u64', 'u64', 'u64', 'u32'],
      padded: false,
    });
  });
});

const backends: [FfiBackend, string | undefined][] = [
  ['koffi', cudart ? undefined : 'libcudart.so.13 not found'],
  ['node', !cudart ? 'libcudart.so.13 not found' : nodeReason || undefined],
  ['bun', !cudart ? 'libcudart.so.13 not found' : bunFfiUnavailableReason() || undefined],
  ['deno', !cudart ? 'libcudart.so.13 not found' : denoFfiUnavailableReason() || undefined],
];

for (const [backend, skip] of backends) {
  (skip ? describe.skip : describe)(`libcudart calls through ${backend}${skip ? ` — skipped: ${skip}` : ''}`, () => {
    const b = binderFor(backend);
    const expected = (name: string) => expect(b.backendOf(name)?.backend).toBe(backend);

    test('no-argument call (cudaGetLastError) returns the library status', () => {
      const f = b.bind('cudaGetLastError', 'cudaGetLastError', undefined, 'int32_t', []);
      const status = f();
      expect(typeof status).toBe('number');
      expect(Number.isInteger(status)).toBe(true);
      expected('cudaGetLastError');
    });
    test('out-parameters as the typed layer passes them: Scratch slots (views at offset 0 and 8), Int32Array, DataView', () => {
      const f = b.bind('cudaRuntimeGetVersion', 'cudaRuntimeGetVersion', undefined, 'int32_t', ['void *']);
      const s = new Scratch(2);
      expect(f(s.slot(0))).toBe(0);
      expect(s.i32[0]).toBe(13000);
      expect(f(s.slot(1))).toBe(0); // a sub-view: its own address, not the buffer's
      expect(s.i32[2]).toBe(13000);
      s.i32[2] = 0;
      expect(f(s.slot(1))).toBe(0); // again, through the cached address
      expect(s.i32[2]).toBe(13000);
      const out = new Int32Array(3);
      expect(f(out.subarray(2))).toBe(0);
      expect([...out]).toEqual([0, 0, 13000]);
      const dv = new DataView(new ArrayBuffer(16), 4, 4);
      if (backend === 'koffi' && jsRuntime() === 'deno') {
        // koffi through Deno's N-API does not take a DataView as a pointer (a TypeError, nothing written)
        expect(() => f(dv)).toThrow(/Unexpected Buffer value, expected void \*/);
      } else {
        expect(f(dv)).toBe(0);
        expect(dv.getInt32(0, true)).toBe(13000);
      }
      expect(f(null)).not.toBe(0); // NULL: the library refuses it
      expected('cudaRuntimeGetVersion');
    });
    test("fixed arguments (Binder.nativeFixed, the typed layer's out-slot-only calls): the same slot every call, converted once where the FFI converts", () => {
      const f = b.bind('cudaRuntimeGetVersion', 'cudaRuntimeGetVersion', undefined, 'int32_t', ['void *']);
      const s = new Scratch(2);
      const call = fixedCall(f, [s.slot(1)]);
      expect(call.length).toBe(0);
      for (let i = 0; i < 3; i++) {
        s.i32[2] = 0;
        expect(call()).toBe(0);
        expect(s.i32[2]).toBe(13000); // its own slot (offset 8), not the buffer's start
        expect(s.i32[0]).toBe(0);
      }
      // node:ffi and Deno offer the converted form; koffi and bun:ffi take the memory as it is
      expect(FIX_ARGUMENTS in f).toBe(backend === 'node' || backend === 'deno');
      const g = b.bind('cudaDestroyTextureObject', 'cudaDestroyTextureObject', undefined, 'int32_t', ['uint64_t']);
      expect(fixedCall(g, [0])()).toBe(g(0));
      if (backend === 'node' || backend === 'deno') {
        // a bad argument is refused when fixed, naming the function, never at each call
        expect(() => fixedCall(g, [1.5])).toThrow(/^cudaDestroyTextureObject: Argument 0/);
        expect(() => fixedCall(g, [])).toThrow(/^cudaDestroyTextureObject: expected 1 argument, got 0/);
      }
      // through a Binder, as the generated typed layer calls it (the entry as the runtime module's table has it)
      const withTable = new Binder(runtimeSpec, 'cudaRuntimeGetVersion|cudaRuntimeGetVersion||int32_t|void *||\n');
      withTable.configure({ ffi: backend });
      const version = withTable.nativeFixed('cudaRuntimeGetVersion', [s.slot(0)]);
      s.i32[0] = 0;
      expect(version()).toBe(0);
      expect(s.i32[0]).toBe(13000);
    });
    (hasDriver ? test.skip : test)('a status without a driver: cudaGetDeviceCount answers cudaErrorInsufficientDriver (35)', () => {
      const f = b.bind('cudaGetDeviceCount', 'cudaGetDeviceCount', undefined, 'int32_t', ['void *']);
      expect(f(new Int32Array(1))).toBe(35);
    });
    test('a 64-bit integer parameter takes a number or a bigint (cudaDestroyTextureObject)', () => {
      const f = b.bind('cudaDestroyTextureObject', 'cudaDestroyTextureObject', undefined, 'int32_t', ['uint64_t']);
      const a = f(0);
      expect(typeof a).toBe('number');
      expect(f(0n)).toBe(a);
    });
    test('const char * results come back as JS strings (node:ffi, bun:ffi and Deno leave them on koffi)', () => {
      const f = b.bind('cudaGetErrorName', 'cudaGetErrorName', undefined, 'const char *', ['int32_t']);
      expect(f(35)).toBe('cudaErrorInsufficientDriver');
      expect(b.backendOf('cudaGetErrorName')?.backend).toBe('koffi');
      if (backend !== 'koffi') expect(b.backendOf('cudaGetErrorName')?.reason).toMatch(/const char \*/);
    });
    test('a JS callback (a koffi trampoline) passes through this FFI as a function pointer: libc qsort', () => {
      const libc = new Binder({
        module: 'libc',
        cudaVersion: '13.0',
        cudaVersionNumber: 13000,
        sonames: ['libc.so.6'],
        env: 'CUDA_TS_LIBC_LIBRARY',
        resolve: 'symbol',
      });
      libc.configure({ ffi: backend });
      const qsort = libc.bind('qsort', 'qsort', undefined, 'void', ['void *', 'size_t', 'size_t', 'void *']);
      expect(libc.backendOf('qsort')?.backend).toBe(backend);
      let calls = 0;
      const cmp = koffi.register(
        (a: unknown, b: unknown) => {
          calls++;
          return (koffi.decode(a, 'int') as number) - (koffi.decode(b, 'int') as number);
        },
        koffi.pointer(koffi.proto('int', ['const void *', 'const void *'])),
      );
      try {
        const values = new Int32Array([5, 3, 9, 1, 7]);
        qsort(values, values.length, 4, cmp);
        expect([...values]).toEqual([1, 3, 5, 7, 9]);
        expect(calls).toBeGreaterThan(0);
      } finally {
        koffi.unregister(cmp);
      }
    });
    test('a JS string given for const char * arrives as NUL-terminated UTF-8 (libc strlen), a size_t comes back as a number', () => {
      const libc = new Binder({
        module: 'libc',
        cudaVersion: '13.0',
        cudaVersionNumber: 13000,
        sonames: ['libc.so.6'],
        env: 'CUDA_TS_LIBC_LIBRARY',
        resolve: 'symbol',
      });
      libc.configure({ ffi: backend });
      const strlen = libc.bind('strlen', 'strlen', undefined, 'size_t', ['const char *']);
      expect(libc.backendOf('strlen')?.backend).toBe(backend);
      expect(strlen('héllo')).toBe(6);
      expect(strlen('')).toBe(0);
      expect(strlen('x'.repeat(1000))).toBe(1000);
    });
    test('a missing symbol still fails at call time with the usual error', () => {
      expect(() => b.bind('cudaFutureFunction', 'cudaFutureFunction', undefined, 'int32_t', [], '13.1')).toThrow(/cudaFutureFunction is not available/);
    });
  });
}

(nodeReason || !cudart ? describe.skip : describe)(`node:ffi argument checks${nodeReason ? ` — skipped: ${nodeReason}` : ''}`, () => {
  const b = binderFor('node');
  test('bad arguments are a TypeError or RangeError naming the function and the parameter, never a crash', () => {
    const version = b.bind('cudaRuntimeGetVersion', 'cudaRuntimeGetVersion', undefined, 'int32_t', ['void *']);
    expect(() => version(1.5)).toThrow(RangeError);
    expect(() => version(1.5)).toThrow(/^cudaRuntimeGetVersion: Argument 0: 1\.5 .*parameter 0: void \*/);
    expect(() => version(true)).toThrow(/^cudaRuntimeGetVersion: .*parameter 0: void \*/);
    expect(() => version()).toThrow(/cudaRuntimeGetVersion: expected 1 argument, got 0/);
    const name = b.bind('cudaDeviceCanAccessPeer', 'cudaDeviceCanAccessPeer', undefined, 'int32_t', ['void *', 'int32_t', 'int32_t']);
    expect(() => name(new Int32Array(1), 0.5, 0)).toThrow(TypeError);
    expect(() => name(new Int32Array(1), 0.5, 0)).toThrow(/^cudaDeviceCanAccessPeer: .*parameter 1: int32_t/);
    const destroy = b.bind('cudaDestroyTextureObject', 'cudaDestroyTextureObject', undefined, 'int32_t', ['uint64_t']);
    expect(() => destroy(-1)).toThrow(/^cudaDestroyTextureObject: Argument 0: -1 /);
    expect(() => destroy(2 ** 53)).toThrow(RangeError);
    expect(typeof destroy(2n ** 60n)).toBe('number'); // beyond 2^53 as a bigint: accepted
  });
  test('a detached buffer is refused, not written through a stale address', () => {
    const version = b.bind('cudaRuntimeGetVersion', 'cudaRuntimeGetVersion', undefined, 'int32_t', ['void *']);
    const buffer = new ArrayBuffer(16);
    const view = new Uint8Array(buffer, 8, 4);
    expect(version(view)).toBe(0); // caches view's address
    (buffer as ArrayBuffer & { transfer(): ArrayBuffer }).transfer();
    expect(() => version(view)).toThrow(TypeError);
  });
  test("nodeFfi() is the running Node's module", () => {
    expect(typeof nodeFfi()?.DynamicLibrary).toBe('function');
  });
});

(cudart ? describe : describe.skip)('the generated runtime module follows CUDA_TS_FFI', () => {
  const asked = defaultFfi();
  const reasons: Record<string, () => string> = { koffi: () => '', node: () => nodeReason, bun: bunFfiUnavailableReason, deno: denoFfiUnavailableReason };
  const want = reasons[asked]?.() === '' ? asked : 'koffi';
  test(`CUDA_TS_FFI=${process.env.CUDA_TS_FFI ?? '(unset)'} under ${jsRuntime()}: typed calls go through ${want}`, () => {
    const rt = require('../generated/13.0/runtime') as typeof import('../generated/13.0/runtime');
    expect(rt.cudaRuntimeGetVersion()).toBe(13000);
    expect(rt.binder.backendOf('cudaRuntimeGetVersion')?.backend ?? 'koffi').toBe(want);
  });
});
