import { evaluateMacro, macroConstant, parseMacroDefinitions, resolveIdentifier } from '../../generator/parse/macros';

const table = parseMacroDefinitions(
  [
    '#define A 0x10',
    '#define B (A | (1 << 2))',
    '#define NEG (-7)',
    '#define BIG 0xFFFFFFFFFFFFFFFFULL',
    '#define F 0.25f',
    '#define PTR ((CUstream)0x2)',
    '#define DEV ((CUdevice)-1)',
    '#define END_AS_INT 0x00',
    '#define END ((void*)END_AS_INT)',
    '#define __PTDS(api) api ## _ptds',
    '#define cuMemcpy __PTDS(cuMemcpy)',
    '#define cuMemAlloc cuMemAlloc_v2',
    '#define STR "text"',
    '#define GUARD',
  ].join('\n'),
);
const ctx = { table, castKind: (t: string) => (t === 'CUstream' ? ('pointer' as const) : t === 'CUdevice' ? ('int' as const) : undefined) };

describe('macro constants', () => {
  test('integer expressions, exact beyond 2^53', () => {
    expect(macroConstant(ctx, 'B')).toEqual({ name: 'B', kind: 'int', value: '20' });
    expect(macroConstant(ctx, 'NEG')?.value).toBe('-7');
    expect(macroConstant(ctx, 'BIG')?.value).toBe('18446744073709551615');
    expect(macroConstant(ctx, 'DEV')).toEqual({ name: 'DEV', kind: 'int', value: '-1' });
  });
  test('floats and pointer-valued casts', () => {
    expect(macroConstant(ctx, 'F')).toEqual({ name: 'F', kind: 'float', value: '0.25' });
    expect(macroConstant(ctx, 'PTR')).toEqual({ name: 'PTR', kind: 'pointer', value: '0x2', type: 'CUstream' });
    expect(macroConstant(ctx, 'END')).toEqual({ name: 'END', kind: 'pointer', value: '0x0', type: 'void *' });
  });
  test('non-constants are not constants', () => {
    expect(evaluateMacro(ctx, 'STR')).toBeUndefined();
    expect(evaluateMacro(ctx, 'GUARD')).toBeUndefined();
    expect(evaluateMacro(ctx, 'cuMemAlloc')).toBeUndefined();
  });
  test('aliases resolve through function-like macros', () => {
    expect(resolveIdentifier(table, 'cuMemAlloc')).toBe('cuMemAlloc_v2');
    expect(resolveIdentifier(table, 'cuMemcpy')).toBe('cuMemcpy_ptds');
    expect(resolveIdentifier(table, 'A')).toBeUndefined();
  });
});
