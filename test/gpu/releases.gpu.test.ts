// Releases side by side on one driver: the same alloc/copy/launch round trip through the raw driver
// bindings of every stored release (11.8, 12.5, 12.6, 13.0 where generated), the runtime bindings of
// each release against the runtime library that is installed (CUDA_TS_RUNTIME_LIBRARY, libcudart.so.13
// on the H200: cudaMalloc/cudaMemcpy/cudaFree keep their ABI across 11-13; libcudart 11.8 and 12.5 are
// not installed there), and a function of a release newer than the driver (the 13.5 fixture) failing
// with what it needs.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import koffi from 'koffi';
import { Binder, CudaSymbolError } from '../../support';
import { FUTURE, FUTURE_BINDING_LINE } from '../generator/future-release-fixture';
import { describeGpu } from './gpu-env';

const root = join(__dirname, '..', '..');
const releases = ['11.8', '12.5', '12.6', '13.0'].filter((r) => existsSync(join(root, 'generated', r, 'driver', 'raw.ts')));

// adds 1 to n unsigned ints: PTX 7.0 for sm_52, JIT-compiled by any driver of these releases
const PTX = `.version 7.0
.target sm_52
.address_size 64
.visible .entry inc(.param .u64 p, .param .u32 n) {
  .reg .pred %p; .reg .b32 %r<6>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %tid.x; mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p, %r5, %r1; @%p bra DONE;
  cvta.to.global.u64 %rd2, %rd1; mul.wide.u32 %rd3, %r5, 4; add.s64 %rd2, %rd2, %rd3;
  ld.global.u32 %r2, [%rd2]; add.s32 %r2, %r2, 1; st.global.u32 [%rd2], %r2;
DONE:
  ret;
}
`;

type Raw = Record<string, (...args: unknown[]) => number>;

describeGpu('releases side by side', () => {
  test('the releases under test', () => {
    expect(releases).toContain('13.0');
    console.log(`driver round trip through: ${releases.join(', ')}`);
  });

  test.each(releases)('driver %s: alloc, copy, launch, copy back', (release) => {
    const cu = require(join(root, 'generated', release, 'driver', 'raw.ts')) as Raw;
    const ok = (name: string, ...args: unknown[]) => expect([name, cu[name](...args)]).toEqual([name, 0]);
    ok('cuInit', 0);
    const dev = new Int32Array(1);
    ok('cuDeviceGet', dev, 0);
    const ctx = new BigUint64Array(1);
    ok('cuDevicePrimaryCtxRetain', ctx, dev[0]);
    ok('cuCtxSetCurrent', Number(ctx[0]));
    const n = 1000;
    const host = Uint32Array.from({ length: n }, (_, i) => i * 3);
    const dptr = new BigUint64Array(1);
    ok('cuMemAlloc', dptr, n * 4);
    const d = Number(dptr[0]);
    ok('cuMemcpyHtoD', d, host, n * 4);
    const mod = new BigUint64Array(1);
    ok('cuModuleLoadData', mod, Buffer.from(PTX + '\0'));
    const fn = new BigUint64Array(1);
    ok('cuModuleGetFunction', fn, Number(mod[0]), 'inc');
    // kernelParams: a table of the addresses of each argument, kept in native memory
    const argP = koffi.alloc('uint64_t', 1) as unknown as bigint;
    koffi.encode(argP, 'uint64_t', dptr[0]);
    const argN = koffi.alloc('uint32_t', 1) as unknown as bigint;
    koffi.encode(argN, 'uint32_t', n);
    const params = new BigUint64Array([BigInt(argP), BigInt(argN)]);
    ok('cuLaunchKernel', Number(fn[0]), Math.ceil(n / 128), 1, 1, 128, 1, 1, 0, 0, params, null);
    ok('cuCtxSynchronize');
    const back = new Uint32Array(n);
    ok('cuMemcpyDtoH', back, d, n * 4);
    expect(Array.from(back.slice(0, 4))).toEqual([1, 4, 7, 10]);
    expect(back.every((v, i) => v === i * 3 + 1)).toBe(true);
    ok('cuMemFree', d);
    ok('cuModuleUnload', Number(mod[0]));
    ok('cuDevicePrimaryCtxRelease', dev[0]);
    koffi.free(argP as never);
    koffi.free(argN as never);
  });

  test.each(releases)('runtime %s against the installed libcudart: malloc, copy, free', (release) => {
    if (!existsSync(join(root, 'generated', release, 'runtime', 'raw.ts'))) return;
    process.env.CUDA_TS_RUNTIME_LIBRARY ??= 'libcudart.so.13';
    const rt = require(join(root, 'generated', release, 'runtime', 'raw.ts')) as Raw;
    const ok = (name: string, ...args: unknown[]) => expect([name, rt[name](...args)]).toEqual([name, 0]);
    ok('cudaSetDevice', 0);
    const ptr = new BigUint64Array(1);
    ok('cudaMalloc', ptr, 4096);
    const src = Float32Array.from({ length: 1024 }, (_, i) => i / 2);
    ok('cudaMemcpy', Number(ptr[0]), src, 4096, 1); // host → device
    const dst = new Float32Array(1024);
    ok('cudaMemcpy', dst, Number(ptr[0]), 4096, 2); // device → host
    expect(dst).toEqual(src);
    ok('cudaFree', Number(ptr[0]));
  });

  test('a function of CUDA 13.5 on this driver: needs CUDA 13.5 / driver ≥ …', () => {
    const binder = new Binder(
      {
        module: 'driver',
        cudaVersion: FUTURE.release,
        cudaVersionNumber: FUTURE.version,
        sonames: ['libcuda.so.1', 'libcuda.so'],
        env: 'CUDA_TS_DRIVER_LIBRARY',
        resolve: 'procAddress',
      },
      FUTURE_BINDING_LINE,
    );
    const installed = binder.driverVersion()!;
    expect(installed).toBeLessThan(FUTURE.version);
    let err: unknown;
    try {
      binder.native(FUTURE.fn);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CudaSymbolError);
    const msg = (err as Error).message;
    console.log(msg);
    expect(msg).toContain(`${FUTURE.fn} is not available`);
    expect(msg).toMatch(/the installed driver supports CUDA \d+\.\d+ \(these bindings are pinned to CUDA 13\.5, newer than the driver\)/);
    expect(msg).toMatch(/it needs CUDA 13\.5 \/ driver ≥ \d+/);
  });
});
