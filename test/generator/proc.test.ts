import type { CType, FunctionDecl } from '../../generator/ir/schema';
import { parseCType } from '../../generator/parse/ctype';
import { procFor, procTable } from '../../generator/parse/proc';
import { join } from 'node:path';
import { readIR } from '../../generator/ir/store';

const resolve = new Map<string, CType>([
  ['CUcontext', parseCType('struct CUctx_st *')],
  ['CUresult', parseCType('enum cudaError_enum')],
  ['CUdeviceptr_v2', parseCType('unsigned long long')],
  ['CUdeviceptr', parseCType('CUdeviceptr_v2')],
]);
const pfn = (name: string, type: string) => ({ name, type: parseCType(type) });
const table = procTable(
  [
    pfn('PFN_cuCtxSynchronize_v2000', 'CUresult (*)(void)'),
    pfn('PFN_cuCtxSynchronize_v13000', 'CUresult (*)(CUcontext)'),
    pfn('PFN_cuMemAlloc_v3020', 'CUresult (*)(CUdeviceptr_v2 *, size_t)'),
    pfn('PFN_cuMemAlloc_v2000', 'CUresult (*)(unsigned int *, unsigned int)'),
    pfn('PFN_cuMemsetD8_v3020', 'CUresult (*)(CUdeviceptr, unsigned char, size_t)'),
    pfn('PFN_cuMemsetD8_v7000_ptds', 'CUresult (*)(CUdeviceptr, unsigned char, size_t)'),
    pfn('PFN_cuUuid_v9020', 'CUresult (*)(int)'),
    pfn('PFN_cuUuid_v11040', 'CUresult (*)(int)'),
    pfn('NotAPfn', 'int'),
  ],
  resolve,
);
const fn = (name: string, symbol: string, params: string[]): FunctionDecl => ({
  name,
  symbol,
  returns: parseCType('CUresult'),
  params: params.map((t, i) => ({ name: `p${i}`, type: parseCType(t) })),
  variadic: false,
  header: 'cuda.h',
});

describe('cuGetProcAddress versions from PFN typedefs', () => {
  test('an unsuffixed declaration gets the ABI matching its own signature, not the newest', () => {
    expect(procFor(fn('cuCtxSynchronize', 'cuCtxSynchronize', []), table, resolve)).toEqual({ name: 'cuCtxSynchronize', version: 2000 });
    expect(procFor(fn('cuCtxSynchronize_v2', 'cuCtxSynchronize_v2', ['CUcontext']), table, resolve)).toEqual({ name: 'cuCtxSynchronize', version: 13000 });
  });
  test('typedef names are resolved before comparing; per-thread variants get their own version', () => {
    expect(procFor(fn('cuMemAlloc', 'cuMemAlloc_v2', ['CUdeviceptr *', 'size_t']), table, resolve)).toEqual({ name: 'cuMemAlloc', version: 3020 });
    expect(procFor(fn('cuMemsetD8', 'cuMemsetD8_v2', ['CUdeviceptr', 'unsigned char', 'size_t']), table, resolve)).toEqual({
      name: 'cuMemsetD8',
      version: 3020,
      ptdsVersion: 7000,
    });
  });
  test('same signature in two versions: the `_vK` suffix picks the K-th', () => {
    expect(procFor(fn('cuUuid', 'cuUuid', ['int']), table, resolve)?.version).toBe(9020);
    expect(procFor(fn('cuUuid_v2', 'cuUuid_v2', ['int']), table, resolve)?.version).toBe(11040);
  });
  test('no typedef or no matching signature: none (the binder uses the exported symbol)', () => {
    expect(procFor(fn('cuOther', 'cuOther', []), table, resolve)).toBeUndefined();
    expect(procFor(fn('cuCtxSynchronize', 'cuCtxSynchronize', ['int', 'int']), table, resolve)).toBeUndefined();
  });
  test('the stored 13.0 driver IR asks every function at its own ABI version', () => {
    const ir = readIR(join(__dirname, '../..'), '13.0', 'driver');
    const by = new Map(ir.functions.map((f) => [f.name, f]));
    expect(ir.functions.every((f) => f.proc && f.proc.version <= ir.versionNumber)).toBe(true);
    expect(by.get('cuCtxSynchronize')?.proc).toEqual({ name: 'cuCtxSynchronize', version: 2000 });
    expect(by.get('cuCtxSynchronize_v2')?.proc).toEqual({ name: 'cuCtxSynchronize', version: 13000 });
  });
});
