import { anonKey, formatCType, parseCType } from '../../generator/parse/ctype';

describe('C type spellings from clang', () => {
  test('builtins are canonicalised', () => {
    expect(parseCType('unsigned long long')).toEqual({ kind: 'builtin', name: 'unsigned long long' });
    expect(parseCType('long int')).toEqual({ kind: 'builtin', name: 'long' });
    expect(parseCType('unsigned')).toEqual({ kind: 'builtin', name: 'unsigned int' });
    expect(parseCType('signed char')).toEqual({ kind: 'builtin', name: 'signed char' });
  });
  test('pointers carry const on the level it qualifies', () => {
    expect(parseCType('const void *const *')).toEqual({
      kind: 'pointer',
      to: { kind: 'pointer', const: true, to: { kind: 'builtin', name: 'void', const: true } },
    });
    expect(parseCType('struct CUstream_st *')).toEqual({ kind: 'pointer', to: { kind: 'named', name: 'struct CUstream_st' } });
  });
  test('arrays, nested arrays and function pointers', () => {
    expect(parseCType('char[4]')).toEqual({ kind: 'array', of: { kind: 'builtin', name: 'char' }, length: 4 });
    expect(parseCType('int[2][3]')).toEqual({ kind: 'array', length: 2, of: { kind: 'array', length: 3, of: { kind: 'builtin', name: 'int' } } });
    const fp = parseCType('CUresult (*)(CUstream, CUresult, void *)');
    expect(fp).toEqual({
      kind: 'pointer',
      to: {
        kind: 'function',
        returns: { kind: 'named', name: 'CUresult' },
        params: [
          { kind: 'named', name: 'CUstream' },
          { kind: 'named', name: 'CUresult' },
          { kind: 'pointer', to: { kind: 'builtin', name: 'void' } },
        ],
      },
    });
    expect(parseCType('void (*)(void)')).toEqual({ kind: 'pointer', to: { kind: 'function', returns: { kind: 'builtin', name: 'void' }, params: [] } });
  });
  test('anonymous records become location keys', () => {
    expect(parseCType('struct (unnamed struct at /x/cuda.h:12:5)')).toEqual({ kind: 'named', name: '@anon:cuda.h:12:5' });
    expect(parseCType('struct Outer::(unnamed at /x/cuda.h:12:5)')).toEqual({ kind: 'named', name: '@anon:cuda.h:12:5' });
  });
  test('anonymous keys do not depend on the toolkit path, whatever characters it holds', () => {
    for (const dir of ['/opt/my cuda', '/t/a(b)', '/t/x,y', '/t/[z]', '/t/*', '/t/a (1), [2] *x']) {
      expect(parseCType(`union CUlaunchAttributeValue_union::(anonymous at ${dir}/include/cuda.h:548:9) *`)).toEqual({
        kind: 'pointer',
        to: { kind: 'named', name: '@anon:cuda.h:548:9' },
      });
    }
    expect(anonKey('/a dir (x)/include/cuda.h:7:3')).toBe('@anon:cuda.h:7:3');
  });
  test('round trip through formatCType', () => {
    for (const s of ['const char *', 'unsigned int', 'void **', 'CUresult (*)(CUstream, CUresult, void *)']) {
      expect(formatCType(parseCType(s))).toBe(s);
    }
    expect(formatCType(parseCType('char[16]'), 'name')).toBe('char name[16]');
  });
  test('garbage is rejected with the text in the message', () => {
    expect(() => parseCType('int @@')).toThrow(/int @@/);
  });
});
