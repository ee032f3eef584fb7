// CUDA_TS_CHECK_HANDLES=1: the opt-in handle checks (support/handle-check.ts). The logic on a fake
// module (no library), then the generated runtime module on this machine's libcudart (no GPU needed);
// the driver probes of issue 25 §6 run in test/gpu/handle-check.gpu.test.ts.
import { existsSync } from 'node:fs';
import { Binder, checkHandles, HANDLE_CHECKS_ENV, registerHandle, Scratch, type NativeFunction } from '../support';

/** Runs `fn` with the checks turned on (the variable is read when a module loads). */
function withChecks<T>(fn: () => T): T {
  const before = process.env[HANDLE_CHECKS_ENV];
  process.env[HANDLE_CHECKS_ENV] = '1';
  try {
    return fn();
  } finally {
    if (before === undefined) delete process.env[HANDLE_CHECKS_ENV];
    else process.env[HANDLE_CHECKS_ENV] = before;
  }
}

/** A module of four functions that succeed (status 0), as a library would, writing handle 0x5000 on create. */
function fakeModule(): { native(name: string): NativeFunction; calls: string[] } {
  const calls: string[] = [];
  const impl: Record<string, NativeFunction> = {
    cuStreamCreate: (out: BigUint64Array) => ((out[0] = 0x5000n), calls.push('create'), 0),
    cuStreamSynchronize: () => (calls.push('sync'), 0),
    cuStreamDestroy: () => (calls.push('destroy'), 0),
    cuLaunchHostFunc: () => (calls.push('launchHostFunc'), 0),
  };
  return { calls, native: (name) => impl[name] };
}
const TABLE = [
  'cuStreamCreate|o:CUstream_st:phStream,',
  'cuStreamSynchronize|h:CUstream_st:hStream',
  'cuStreamDestroy|h:CUstream_st:hStream',
  'cuLaunchHostFunc|h:CUstream_st:hStream,f::fn,',
].join('\n');

describe('handle checks on a fake module', () => {
  test("off by default: the functions bound are the library's own", () => {
    const m = fakeModule();
    const native = m.native;
    checkHandles(m, TABLE);
    expect(m.native).toBe(native);
  });

  test('a created handle passes until destroyed; then using or destroying it again throws before the call', () => {
    const m = fakeModule();
    withChecks(() => checkHandles(m, TABLE));
    const out = new BigUint64Array(1);
    expect(m.native('cuStreamCreate')(out)).toBe(0);
    expect(m.native('cuStreamSynchronize')(0x5000)).toBe(0);
    expect(m.native('cuStreamSynchronize')(0)).toBe(0); // NULL: the legacy stream
    expect(m.native('cuStreamSynchronize')(2)).toBe(0); // CU_STREAM_PER_THREAD
    expect(m.native('cuStreamDestroy')(0x5000)).toBe(0);
    expect(() => m.native('cuStreamSynchronize')(0x5000)).toThrow(
      new RangeError('cuStreamSynchronize: hStream is a CUstream_st handle (0x5000) that was destroyed (CUDA_TS_CHECK_HANDLES)'),
    );
    expect(() => m.native('cuStreamDestroy')(0x5000)).toThrow(/^cuStreamDestroy: hStream is a CUstream_st handle \(0x5000\) that was destroyed/);
    expect(m.calls).toEqual(['create', 'sync', 'sync', 'sync', 'destroy']);
  });

  test('a call bound with its out-slot fixed (Binder.nativeFixed, as the typed layer binds getters) still learns the handle it writes', () => {
    const b = new Binder({
      module: 'fake',
      cudaVersion: '13.0',
      cudaVersionNumber: 13000,
      sonames: ['libnone.so'],
      env: 'CUDA_TS_TEST_NONE',
      resolve: 'symbol',
    });
    const impl: Record<string, NativeFunction> = {
      cuCtxGetCurrent: (out: Uint8Array) => ((new BigUint64Array(out.buffer, out.byteOffset, 1)[0] = 0x9000n), 0),
      cuCtxSetCurrent: () => 0,
    };
    b.native = (name: string) => impl[name];
    withChecks(() => checkHandles(b, 'cuCtxGetCurrent|o:CUctx_st:pctx\ncuCtxSetCurrent|h:CUctx_st:ctx'));
    expect(() => b.native('cuCtxSetCurrent')(0x9000)).toThrow(/^cuCtxSetCurrent: ctx = 0x9000 is no CUctx_st handle this process has seen/);
    const s = new Scratch(1);
    expect(b.nativeFixed('cuCtxGetCurrent', [s.bytes])()).toBe(0);
    expect(s.address(0)).toBe(0x9000);
    expect(b.native('cuCtxSetCurrent')(0x9000)).toBe(0);
  });

  test('a handle of another kind, an unknown one and a number as a function pointer are refused', () => {
    const m = fakeModule();
    withChecks(() => checkHandles(m, TABLE));
    registerHandle('CUctx_st', 0x7000);
    expect(() => m.native('cuStreamSynchronize')(0x7000)).toThrow(
      new TypeError('cuStreamSynchronize: hStream is a CUctx_st handle (0x7000), not a CUstream_st (CUDA_TS_CHECK_HANDLES)'),
    );
    expect(() => m.native('cuStreamSynchronize')(0xdeadbeef)).toThrow(
      /^cuStreamSynchronize: hStream = 0xdeadbeef is no CUstream_st handle this process has seen/,
    );
    registerHandle('CUstream_st', 0x8000n);
    expect(() => m.native('cuLaunchHostFunc')(0x8000, 0x1234, null)).toThrow(/^cuLaunchHostFunc: fn is not a function pointer koffi.register returned/);
    expect(m.calls).toEqual([]);
  });

  test('a CUkernel passes where a CUfunction is expected, as CUDA takes it', () => {
    const calls: string[] = [];
    const m = {
      native:
        (_name: string): NativeFunction =>
        () => (calls.push('launch'), 0),
    };
    withChecks(() => checkHandles(m, 'cuLaunchKernel|h:CUfunc_st:f'));
    registerHandle('CUkern_st', 0xa000);
    expect(m.native('cuLaunchKernel')(0xa000)).toBe(0);
    registerHandle('CUmod_st', 0xb000);
    expect(() => m.native('cuLaunchKernel')(0xb000)).toThrow(/^cuLaunchKernel: f is a CUmod_st handle \(0xb000\), not a CUfunc_st/);
    expect(calls).toEqual(['launch']);
  });

  test('a function pointer koffi.register returned passes, until unregistered', () => {
    const m = fakeModule();
    withChecks(() => checkHandles(m, TABLE));
    const { koffi } = require('../support') as typeof import('../support');
    registerHandle('CUstream_st', 0x9000);
    const fn = koffi.register(() => undefined, koffi.pointer(koffi.proto('void HandleCheckTest(void *)')));
    expect(m.native('cuLaunchHostFunc')(0x9000, fn, null)).toBe(0);
    koffi.unregister(fn);
    expect(() => m.native('cuLaunchHostFunc')(0x9000, fn, null)).toThrow(RangeError);
  });

  test('a bigint handle above 2**53 is checked like any other (it used to pass unchecked)', () => {
    const m = fakeModule();
    withChecks(() => checkHandles(m, TABLE));
    expect(() => m.native('cuStreamSynchronize')(2n ** 60n)).toThrow(
      new RangeError(
        'cuStreamSynchronize: hStream = 0x1000000000000000 is no CUstream_st handle this process has seen: not returned by a CUDA call, nor declared with registerHandle (CUDA_TS_CHECK_HANDLES)',
      ),
    );
    expect(() => m.native('cuStreamSynchronize')(2n ** 64n - 1n)).toThrow(RangeError);
    expect(() => m.native('cuStreamSynchronize')(-5n)).toThrow(RangeError);
    expect(() => m.native('cuLaunchHostFunc')(0, 2n ** 60n, null)).toThrow(/^cuLaunchHostFunc: fn is not a function pointer koffi.register returned/);
    // a registered handle given as a bigint is the same handle as its number
    registerHandle('CUstream_st', 0x6000);
    expect(m.native('cuStreamSynchronize')(0x6000n)).toBe(0);
    expect(m.calls).toEqual(['sync']);
  });

  test('a handle above 2**53 that a call writes is learned as a bigint', () => {
    const calls: string[] = [];
    const m = {
      native: (name: string): NativeFunction => (name === 'cuStreamCreate' ? (o: BigUint64Array) => ((o[0] = 2n ** 55n + 3n), 0) : () => (calls.push(name), 0)),
    };
    withChecks(() => checkHandles(m, TABLE));
    m.native('cuStreamCreate')(new BigUint64Array(1));
    expect(m.native('cuStreamSynchronize')(2n ** 55n + 3n)).toBe(0);
    expect(() => m.native('cuStreamSynchronize')(2n ** 55n + 4n)).toThrow(RangeError);
    expect(m.native('cuStreamDestroy')(2n ** 55n + 3n)).toBe(0);
    expect(() => m.native('cuStreamSynchronize')(2n ** 55n + 3n)).toThrow(
      /^cuStreamSynchronize: hStream is a CUstream_st handle \(0x80000000000003\) that was destroyed/,
    );
    expect(calls).toEqual(['cuStreamSynchronize', 'cuStreamDestroy']);
  });

  test('registerHandle refuses what is no handle', () => {
    expect(() => registerHandle('CUstream_st', 0)).toThrow(/^registerHandle: handle/);
    expect(() => registerHandle('CUstream_st', 1.5)).toThrow(RangeError);
    expect(() => registerHandle(5 as never, 0x1000)).toThrow(/^registerHandle: tag/);
  });
});

const cudart = ['/usr/local/cuda/lib64/libcudart.so.13', '/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.13'].some(existsSync);
(cudart ? describe : describe.skip)('handle checks in the generated runtime module (libcudart, no GPU)', () => {
  test('with the variable set when the module loads, a garbage stream throws naming the function and the parameter', () => {
    // everything inside the isolated registry: a chunk required later from outside it would get the
    // registry's other copy of binding.ts, loaded without the variable
    withChecks(() =>
      jest.isolateModules(() => {
        const rt = require('../generated/13.0/runtime') as typeof import('../generated/13.0/runtime');
        expect(() => rt.cudaStreamSynchronize(0xdeadbeef as never)).toThrow(/^cudaStreamSynchronize: stream = 0xdeadbeef is no CUstream_st handle/);
        expect(Object.prototype.hasOwnProperty.call(rt.binder, 'native')).toBe(true);
      }),
    );
  });

  test("without it, the module binds koffi's functions unwrapped", () => {
    let rt: typeof import('../generated/13.0/runtime') | undefined;
    jest.isolateModules(() => {
      rt = require('../generated/13.0/runtime');
    });
    expect(Object.prototype.hasOwnProperty.call(rt!.binder, 'native')).toBe(false);
  });
});
