// CUDA_TS_CHECK_HANDLES=1 on a GPU: the probes of issue 25 §6 that crash the process without the checks
// (a context given as a stream, 0xdeadbeef, a destroyed stream, a double destroy, a number as a function
// pointer) throw a TypeError/RangeError naming the function and the parameter instead, and valid handles
// still work. The driver module is loaded in an isolated registry with the variable set: everything
// runs inside it (a chunk required from outside would bind through the registry's unchecked copy).
import { describeGpu } from './gpu-env';
import { HANDLE_CHECKS_ENV } from '../../support';

type Driver = typeof import('../../generated/13.0/driver');

/** Loads the typed driver layer with the checks on and runs `fn` with it, inside the isolated registry. */
function withCheckedDriver(fn: (cu: Driver) => void): void {
  const before = process.env[HANDLE_CHECKS_ENV];
  process.env[HANDLE_CHECKS_ENV] = '1';
  try {
    jest.isolateModules(() => {
      const cu = require('../../generated/13.0/driver') as Driver;
      cu.cuInit(0);
      const ctx = cu.cuDevicePrimaryCtxRetain(cu.cuDeviceGet(0));
      cu.cuCtxSetCurrent(ctx);
      try {
        fn(cu);
      } finally {
        cu.cuCtxSetCurrent(null);
        cu.cuDevicePrimaryCtxRelease(cu.cuDeviceGet(0));
      }
    });
  } finally {
    if (before === undefined) delete process.env[HANDLE_CHECKS_ENV];
    else process.env[HANDLE_CHECKS_ENV] = before;
  }
}

describeGpu('CUDA_TS_CHECK_HANDLES=1: garbage handles throw instead of crashing the process', () => {
  test('valid handles work: create, synchronize, destroy a stream; the primary context as a context', () => {
    withCheckedDriver((cu) => {
      const s = cu.cuStreamCreate(0);
      cu.cuStreamSynchronize(s);
      cu.cuStreamSynchronize(null);
      expect(cu.cuStreamGetCtx(s)).toBe(cu.cuCtxGetCurrent());
      cu.cuStreamDestroy(s);
    });
  });

  test('a context given as a stream is a TypeError naming the kinds', () => {
    withCheckedDriver((cu) => {
      const ctx = cu.cuCtxGetCurrent()!;
      expect(() => cu.cuStreamSynchronize(ctx as never)).toThrow(/^cuStreamSynchronize: hStream is a CUctx_st handle \(0x[0-9a-f]+\), not a CUstream_st/);
    });
  });

  test('0xdeadbeef is a RangeError: no stream this process has seen', () => {
    withCheckedDriver((cu) => {
      expect(() => cu.cuStreamSynchronize(0xdeadbeef as never)).toThrow(/^cuStreamSynchronize: hStream = 0xdeadbeef is no CUstream_st handle/);
    });
  });

  test('a destroyed stream, used or destroyed again, is a RangeError', () => {
    withCheckedDriver((cu) => {
      const s = cu.cuStreamCreate(0);
      cu.cuStreamDestroy(s);
      expect(() => cu.cuStreamSynchronize(s)).toThrow(/^cuStreamSynchronize: hStream is a CUstream_st handle \(0x[0-9a-f]+\) that was destroyed/);
      expect(() => cu.cuStreamDestroy(s)).toThrow(/^cuStreamDestroy: hStream is a CUstream_st handle .* that was destroyed/);
    });
  });

  test('a number given as a function pointer is a RangeError', () => {
    withCheckedDriver((cu) => {
      const s = cu.cuStreamCreate(0);
      expect(() => cu.cuLaunchHostFunc(s, 0x1234, null)).toThrow(/^cuLaunchHostFunc: fn is not a function pointer koffi.register returned/);
      cu.cuStreamDestroy(s);
    });
  });
});
