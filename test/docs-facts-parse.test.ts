// The parser's release and deprecation facts on small inputs: the oldest PFN typedef of a name (the
// header's internal block included), and deprecation markers on a declaration, with the release they name.
import { describe, expect, test } from '@jest/globals';
import { deprecationIn } from '../generator/parse/deprecation';
import { groupLines } from '../generator/parse/groups';
import { introducedVersion, oldestVersions } from '../generator/parse/proc';
import type { FunctionDecl } from '../generator/ir/schema';

const fn = (name: string, proc: FunctionDecl['proc']): FunctionDecl => ({
  name,
  symbol: name,
  proc,
  returns: { kind: 'builtin', name: 'int' },
  params: [],
  variadic: false,
  header: 'cuda.h',
});

describe('introduction releases from cudaTypedefs.h', () => {
  const text = [
    'typedef CUresult (CUDAAPI *PFN_cuMemAlloc_v3020)(CUdeviceptr_v2 *dptr, size_t bytesize);',
    'typedef CUresult (CUDAAPI *PFN_cuMemsetD8_v7000_ptds)(CUdeviceptr dstDevice, unsigned char uc, size_t N);',
    'typedef CUresult (CUDAAPI *PFN_cuMemsetD8_v3020)(CUdeviceptr dstDevice, unsigned char uc, size_t N);',
    '#if defined(__CUDA_API_VERSION_INTERNAL)',
    '    typedef CUresult (CUDAAPI *PFN_cuMemAlloc_v2000)(CUdeviceptr_v1 *dptr, unsigned int bytesize);',
    '#endif',
  ].join('\n');
  const oldest = oldestVersions(text);
  test('the oldest version of each base name, internal block included, per-thread variants left out', () => {
    expect(oldest.get('cuMemAlloc')).toBe(2000);
    expect(oldest.get('cuMemsetD8')).toBe(3020);
  });
  test('a versionless name dates from its base name; a `_vN` name of its own from its ABI', () => {
    expect(introducedVersion(fn('cuMemAlloc', { name: 'cuMemAlloc', version: 3020 }), oldest)).toBe(2000);
    expect(introducedVersion(fn('cuCtxSynchronize_v2', { name: 'cuCtxSynchronize', version: 13000 }), oldest)).toBe(13000);
    expect(introducedVersion(fn('cuOther', undefined), oldest)).toBeUndefined();
  });
});

describe('deprecation markers on a declaration', () => {
  const lines = [
    '/* a comment */',
    'DEPRECATED(13.0) nvmlReturn_t DECLDIR nvmlDeviceGetHandleBySerial(const char *serial, nvmlDevice_t *device);',
    'nvmlReturn_t DECLDIR nvmlDeviceGetCount(unsigned int *count);',
    '',
    'CUDNN_DEPRECATED cudnnStatus_t CUDNNWINAPI',
    'cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *filterDesc);',
    '',
    'cudnnStatus_t CUDNNWINAPI',
    'cudnnCreate(cudnnHandle_t *handle);',
    '  CUSOLVER_DEPRECATED(cusolverDnXpotrf)',
    '  cusolverStatus_t CUSOLVERAPI cusolverDnPotrf(',
    ' * DEPRECATED in prose is not a marker',
    'int plain(void);',
  ];
  test('a macro with a release, one without, one naming a replacement; none on plain declarations', () => {
    expect(deprecationIn(lines, 2, ['nvmlDeviceGetHandleBySerial'])).toEqual({ version: '13.0' });
    expect(deprecationIn(lines, 3, ['nvmlDeviceGetCount'])).toBeUndefined();
    expect(deprecationIn(lines, 6, ['cudnnCreateFilterDescriptor'])).toEqual({});
    expect(deprecationIn(lines, 9, ['cudnnCreate'])).toBeUndefined();
    expect(deprecationIn(lines, 11, ['cusolverDnPotrf'])).toEqual({});
    expect(deprecationIn(lines, 13, ['plain'])).toBeUndefined();
  });
});

describe('Doxygen groups', () => {
  test('an \\ingroup that nests a \\defgroup places no declaration (the profiler headers)', () => {
    const at = groupLines(
      [
        '/**',
        ' * \\ingroup CUDA_DRIVER',
        ' * \\defgroup CUDA_PROFILER Title',
        ' * @{',
        ' */',
        'int cuProfilerStart(void);',
        '/** @} */',
        'int after(void);',
      ].join('\n'),
    );
    expect([at(6), at(8)]).toEqual(['CUDA_PROFILER', undefined]);
  });
});
