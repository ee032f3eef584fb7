// The run-time support and a real call into this machine's libcudart (no GPU needed).
import { existsSync } from 'node:fs';
import { Binder, CudaError, CudaLibraryError, CudaSymbolError, Scratch, isPointerLike, libraryCandidates, loadLibrary, toAddress } from '../support';

function findCudart(): string | undefined {
  try {
    loadLibrary({ module: 'runtime', sonames: ['libcudart.so.13'], env: 'CUDA_TS_RUNTIME_LIBRARY' });
    return 'found';
  } catch {
    return undefined;
  }
}
const cudart = findCudart();
const hasDriver = ['/usr/lib/x86_64-linux-gnu/libcuda.so.1', '/usr/local/nvidia/lib64/libcuda.so.1', '/usr/lib64/libcuda.so.1'].some(existsSync);
const describeCudart = cudart ? describe : describe.skip;

describeCudart(`libcudart 13.0 through the generated runtime module${cudart ? '' : ' — skipped: libcudart.so.13 not found'}`, () => {
  const rt = require('../generated/13.0/runtime') as typeof import('../generated/13.0/runtime');
  test('cudaRuntimeGetVersion() returns 13000 through the typed layer', () => {
    expect(rt.cudaRuntimeGetVersion()).toBe(13000);
  });
  test('the raw layer returns the status and fills the out-parameter', () => {
    const raw = require('../generated/13.0/runtime/raw') as typeof import('../generated/13.0/runtime/raw');
    const out = new Int32Array(1);
    expect(raw.cudaRuntimeGetVersion(out)).toBe(rt.cudaError.cudaSuccess);
    expect(out[0]).toBe(13000);
  });
  test('the raw layer refuses host memory too small for the value C writes, in every form, before the call', () => {
    const raw = require('../generated/13.0/runtime/raw') as typeof import('../generated/13.0/runtime/raw');
    const backing = new Uint8Array(16).fill(0xaa);
    const tooSmall: [string, unknown][] = [
      ['an ArrayBuffer of 1 byte', new ArrayBuffer(1)],
      ['a SharedArrayBuffer of 3 bytes', new SharedArrayBuffer(3)],
      ['a DataView of 3 bytes', new DataView(backing.buffer, 4, 3)],
      ['a Uint8Array of 3 bytes', backing.subarray(4, 7)],
    ];
    for (const [, v] of tooSmall)
      expect(() => raw.cudaRuntimeGetVersion(v as ArrayBuffer)).toThrow(/^cudaRuntimeGetVersion: runtimeVersion is \d bytes, shorter than the 4-byte value/);
    expect([...backing]).toEqual(new Array(16).fill(0xaa)); // nothing written next to the view
    // large enough, each form works and holds the version
    const ab = new ArrayBuffer(4);
    expect(raw.cudaRuntimeGetVersion(ab)).toBe(0);
    expect(new Int32Array(ab)[0]).toBe(13000);
    const view = new DataView(backing.buffer, 8, 4);
    expect(raw.cudaRuntimeGetVersion(view)).toBe(0);
    expect(view.getInt32(0, true)).toBe(13000);
    expect(backing[7]).toBe(0xaa);
    expect(backing[12]).toBe(0xaa);
  });
  test('the raw layer refuses a string (or undefined, an object, a non-address number) for anything but const char *', () => {
    const raw = require('../generated/13.0/runtime/raw') as typeof import('../generated/13.0/runtime/raw');
    expect(() => raw.cudaRuntimeGetVersion('abcdefgh' as never)).toThrow(
      new TypeError('cudaRuntimeGetVersion: runtimeVersion must be a typed array, DataView, ArrayBuffer, an address or null, got "abcdefgh"'),
    );
    expect(() => raw.cudaMemcpy(new Uint8Array(4), 'abc' as never, 3, 1)).toThrow(/^cudaMemcpy: src must be a typed array/);
    expect(() => raw.cudaRuntimeGetVersion(undefined as never)).toThrow(/^cudaRuntimeGetVersion: runtimeVersion must be .* got undefined$/);
    expect(() => raw.cudaRuntimeGetVersion({} as never)).toThrow(TypeError);
    expect(() => raw.cudaRuntimeGetVersion(1.5)).toThrow(RangeError);
    expect(() => raw.cudaRuntimeGetVersion(-1)).toThrow(RangeError);
    expect(() => raw.cudaLaunchHostFunc(0 as never, 'code' as never, null)).toThrow(/^cudaLaunchHostFunc: fn must be a registered callback/);
    expect(() => raw.cudaLaunchHostFunc(0 as never, new Uint8Array(8) as never, null)).toThrow(/^cudaLaunchHostFunc: fn must be/);
    // a const char * still takes a string (cudaGetErrorName returns one: nothing refused on the way)
    expect(raw.cudaGetErrorName(0)).toBe('cudaSuccess');
  });
  (hasDriver ? test.skip : test)('cudaGetDeviceCount() without a driver throws a named CudaError', () => {
    let error: unknown;
    try {
      rt.cudaGetDeviceCount();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CudaError);
    expect(error).toBeInstanceOf(rt.RuntimeError);
    const e = error as CudaError;
    expect(e.name).toBe('cudaErrorInsufficientDriver');
    expect(e.code).toBe(35);
    expect(e.func).toBe('cudaGetDeviceCount');
    expect(e.message).toMatch(/^cudaGetDeviceCount failed: cudaErrorInsufficientDriver \(35\): .+/);
  });
  test('enums map names and values both ways; functions returning strings', () => {
    expect(rt.cudaError.cudaErrorMemoryAllocation).toBe(2);
    expect(rt.cudaError_t[2]).toBe('cudaErrorMemoryAllocation');
    expect(typeof rt.cudaGetErrorName(2)).toBe('string');
  });
  test('a record layout decodes from the koffi type (cudaDeviceProp)', () => {
    const koffi = require('koffi');
    expect(koffi.sizeof(rt.records.cudaDeviceProp())).toBe(1008);
  });
});

describe('library discovery', () => {
  const spec = { module: 'nothing', sonames: ['libcuda-ts-nothing.so.1'], env: 'CUDA_TS_NOTHING_LIBRARY' };
  test('search order: override, CUDA_HOME, system loader, default toolkit, python/conda', () => {
    const c = libraryCandidates(spec, { CUDA_TS_NOTHING_LIBRARY: '/x/libn.so', CUDA_HOME: '/opt/cuda', CONDA_PREFIX: '/conda' });
    expect(c[0]).toEqual({ path: '/x/libn.so', how: '$CUDA_TS_NOTHING_LIBRARY' });
    expect(c[1]).toEqual({ path: '/opt/cuda/lib64/libcuda-ts-nothing.so.1', how: '$CUDA_HOME' });
    const hows = [...new Set(c.map((x) => x.how))];
    expect(hows).toEqual(['$CUDA_TS_NOTHING_LIBRARY', '$CUDA_HOME', 'system loader', 'default toolkit', 'python/conda']);
  });
  test('a library that cannot be found lists every place tried', () => {
    let error: unknown;
    try {
      loadLibrary(spec, { CUDA_HOME: '/opt/none' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CudaLibraryError);
    const msg = (error as Error).message;
    expect(msg).toMatch(/cannot load the nothing library/);
    expect(msg).toMatch(/\/opt\/none\/lib64\/libcuda-ts-nothing\.so\.1 \(\$CUDA_HOME\): no such file/);
    expect(msg).toMatch(/libcuda-ts-nothing\.so\.1 \(system loader\)/);
    expect(msg).toMatch(/CUDA_TS_NOTHING_LIBRARY/);
  });
});

describeCudart('lazy binding', () => {
  const binder = () =>
    new Binder({
      module: 'runtime',
      cudaVersion: '13.0',
      cudaVersionNumber: 13000,
      sonames: ['libcudart.so.13'],
      env: 'CUDA_TS_RUNTIME_LIBRARY',
      resolve: 'symbol',
    });
  test('a missing symbol fails at call time, naming the release that introduced it', () => {
    expect(() => binder().bind('cudaFutureFunction', 'cudaFutureFunction', undefined, 'int', [], '13.1')).toThrow(CudaSymbolError);
    expect(() => binder().bind('cudaFutureFunction', 'cudaFutureFunction', undefined, 'int', [], '13.1')).toThrow(
      /cudaFutureFunction is not available: the loaded libcudart library does not export it; it needs CUDA 13\.1 \/ driver ≥ 590/,
    );
  });
  test('per-thread default stream variants are an opt-in, before the first call', () => {
    const b = binder();
    b.configure({ perThreadDefaultStream: true });
    expect(b.perThreadDefaultStream).toBe(true);
    const f = b.bind('cudaMemcpy', 'cudaMemcpy', 'cudaMemcpy_ptds', 'int', ['void *', 'void *', 'size_t', 'int']);
    expect(typeof f).toBe('function');
    expect(() => b.configure({ perThreadDefaultStream: false })).toThrow(/before the first function call/);
  });
});

describe('out-parameter scratch and addresses', () => {
  test('64-bit slots read as numbers without BigInt', () => {
    const s = new Scratch(2);
    s.u64[1] = 0x7fff_1234_5678n;
    expect(s.address(1)).toBe(0x7fff_1234_5678);
    s.u64[0] = 2n ** 60n;
    expect(s.size(0)).toBe(2 ** 60);
  });
  test('a slot index that is not one of the slots is refused, never passed on as NULL', () => {
    const s = new Scratch(2);
    expect(s.slot(1).byteLength).toBe(8);
    expect(() => s.slot(5)).toThrow(new RangeError('Scratch.slot: i must be a slot index in [0, 2), got 5'));
    expect(() => s.slot('length' as never)).toThrow(TypeError);
    expect(() => s.address(1.5)).toThrow(/^Scratch.address: i/);
    expect(() => new Scratch(1.5)).toThrow(/^new Scratch: slots/);
    expect(() => new Scratch(1, 12)).toThrow(/^new Scratch: slotBytes/);
    // slots wider than 8 bytes: address(i) reads slot i, not the i-th 8 bytes
    const wide = new Scratch(2, 16);
    wide.u64[2] = 0x1234n;
    expect(wide.address(1)).toBe(0x1234);
  });
  test('isPointerLike answers true only for what the typed layer takes as a pointer', () => {
    expect([null, 0, 4096, 2n ** 63n, new Uint8Array(1), new ArrayBuffer(1), new DataView(new ArrayBuffer(1))].map(isPointerLike)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    expect([-1.5, -1, 1.5, NaN, 2 ** 53 + 2, -1n, 2n ** 64n, 'x', undefined, {}].map(isPointerLike)).toEqual(new Array(10).fill(false));
  });
  test('koffi 64-bit results normalise to numbers, refusing what does not fit', () => {
    expect(toAddress(12n)).toBe(12);
    expect(toAddress(34)).toBe(34);
    expect(() => toAddress(2n ** 60n)).toThrow(RangeError);
  });
});

describe('JS callbacks given to CUDA, and blocking calls while one is pending', () => {
  const koffi = require('koffi') as typeof import('koffi');
  const cu = require('../generated/13.0/driver') as typeof import('../generated/13.0/driver');
  const { callbackSettled, hostCallbacks, oneShotCallback, HostCallbackPendingError } = require('../support') as typeof import('../support');

  test('a one-shot callback counts as pending until it has run, and blocking typed calls refuse meanwhile', async () => {
    const proto = koffi.proto('void OneShotTest(void *)');
    const seen: unknown[] = [];
    const cb = oneShotCallback(proto, (userData: unknown) => seen.push(userData));
    expect(hostCallbacks.pending).toBe(1);
    // refused before any library is loaded: cuStreamSynchronize would never return
    expect(() => cu.cuStreamSynchronize(0 as never)).toThrow(HostCallbackPendingError);
    expect(() => cu.cuMemcpyHtoD(0 as never, new Uint8Array(1), 1)).toThrow(/cuMemcpyHtoD would block the event loop/);
    koffi.call(cb.pointer, proto, null); // what the library's thread would do, here directly
    expect(seen).toEqual([null]);
    expect(hostCallbacks.pending).toBe(0);
    cb.cancel(); // settling twice changes nothing
    expect(hostCallbacks.pending).toBe(0);
    await new Promise((r) => setImmediate(r)); // the registration is released on the next turn
  });

  test('the pending count cannot go below zero: a settle with none pending is refused, the guard stays armed', () => {
    expect(hostCallbacks.pending).toBe(0);
    expect(() => callbackSettled()).toThrow(
      new RangeError('callbackSettled: no JS callback is pending (each callbackSettled() must follow one hostCallbacks.pending++)'),
    );
    expect(() => (hostCallbacks.pending = -1)).toThrow(RangeError);
    expect(() => (hostCallbacks.pending = 0.5)).toThrow(RangeError);
    expect(hostCallbacks.pending).toBe(0);
    hostCallbacks.pending++;
    expect(() => cu.cuStreamSynchronize(0 as never)).toThrow(HostCallbackPendingError);
    callbackSettled();
    expect(hostCallbacks.pending).toBe(0);
  });

  test('a callback the library refused is cancelled, and non-blocking calls are never refused', () => {
    const cb = oneShotCallback(cu.callbacks.CUhostFn(), () => undefined);
    expect(hostCallbacks.pending).toBe(1);
    cb.cancel();
    expect(hostCallbacks.pending).toBe(0);
    expect(cu.binder.spec.module).toBe('driver');
  });
});

test('the stack header shows the class and the status; name stays the status', () => {
  class DriverError extends CudaError {}
  const e = new DriverError('driver', 'cuMemAlloc', 2, 'CUDA_ERROR_OUT_OF_MEMORY', 'out of memory');
  expect(e.stack!.split('\n')[0]).toBe('DriverError [CUDA_ERROR_OUT_OF_MEMORY]: cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory');
  expect(e.name).toBe('CUDA_ERROR_OUT_OF_MEMORY');
  expect(e).toBeInstanceOf(CudaError);
  const missing = new CudaLibraryError('driver', 'none loaded', ['a: no such file']);
  expect(missing.stack!.split('\n')[0]).toBe('CudaLibraryError [CUDA_TS_LIBRARY_NOT_FOUND]: cannot load the driver library: none loaded');
  expect(missing.tried).toEqual(['a: no such file']);
});

// Node 21+ formats a stack on its first read through an accessor: a CudaError is formatted then, not
// when made (the first formatting of a process costs milliseconds), and the stack can be assigned.
const lazyStacks = typeof Object.getOwnPropertyDescriptor(new Error(), 'stack')?.get === 'function';
(lazyStacks ? test : test.skip)('a CudaError formats its stack on first read, not when made (Node 21+)', () => {
  const prepare = Error.prepareStackTrace;
  let formatted = 0;
  Error.prepareStackTrace = (err: Error, frames: unknown[]) => `${++formatted}: ${err.name}, ${frames.length > 0}`;
  try {
    class DriverError extends CudaError {}
    const e = new DriverError('driver', 'cuInit', 3, 'CUDA_ERROR_NOT_INITIALIZED');
    expect(formatted).toBe(0);
    expect(e.stack).toBe('1: DriverError [CUDA_ERROR_NOT_INITIALIZED], true');
    expect(e.stack).toBe('1: DriverError [CUDA_ERROR_NOT_INITIALIZED], true');
    expect(formatted).toBe(1);
    expect(e.name).toBe('CUDA_ERROR_NOT_INITIALIZED');
    e.stack = 'replaced';
    expect(e.stack).toBe('replaced');
  } finally {
    Error.prepareStackTrace = prepare;
  }
});
