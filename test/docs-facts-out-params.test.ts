// Issue 45 §10: the last out-parameters NVIDIA's bindings return and ours took as bare pointers, decided
// from the headers: cublasLtMatmulAlgoGetIds fills `algoIdsArray` to the count it writes (an array
// returned); `ncclCommCuDevice`'s `int *device` is the device number ("Returns the cuda device number");
// `cufftGetPlanPropertyInt64`'s `long long *returnPtrValue` the getter's value; `cusolverDnXsyevdx`'s
// `int64_t *meig64` the eigenvalue count (the 64-bit `meig`); `cusolverDnXgesvdp`'s `double *h_err_sigma`
// a host (`h_`) error bound. Each is returned by the typed layer and no longer a parameter.
import { describe, expect, test } from '@jest/globals';
import { layerDocs } from './docs-facts-lib';

const CASES: [module: string, fn: string, param: string][] = [
  ['cublaslt', 'cublasLtMatmulAlgoGetIds', 'algoIdsArray'],
  ['nccl', 'ncclCommCuDevice', 'device'],
  ['cufft', 'cufftGetPlanPropertyInt64', 'returnPtrValue'],
  ['cusolver', 'cusolverDnXsyevdx', 'meig64'],
  ['cusolver', 'cusolverDnXgesvdp', 'h_err_sigma'],
];

describe('out-parameters returned, as in the headers (13.0 typed layer)', () => {
  test.each(CASES)('%s: %s returns %s', (module, fn, param) => {
    const doc = layerDocs('13.0', module, 'typed').get(fn)!;
    expect(doc.params.has(param)).toBe(false);
    expect(doc.text).toMatch(new RegExp(`@returns[^\\n]*\`${param}\``));
  });
});
