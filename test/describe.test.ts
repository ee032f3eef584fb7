// checkKeys, the one check for an options object's unknown keys (src/describe.ts).
import { checkKeys } from '../src/describe';

describe('checkKeys', () => {
  test('known keys pass; an unknown one is named with the call, its noun and the known keys', () => {
    expect(() => checkKeys('Blas.gemm', { alpha: 1, beta: 0 }, ['alpha', 'beta'])).not.toThrow();
    expect(() => checkKeys('Blas.gemm', { alhpa: 1 }, ['alpha', 'beta'])).toThrow(new TypeError("Blas.gemm: unknown option 'alhpa' (expected alpha, beta)"));
    expect(() => checkKeys('Matmul.execute', { d: 1, z: 2 }, ['d'], 'operand')).toThrow(/^Matmul\.execute: unknown operand 'z'/);
  });

  test('an inherited enumerable key counts (a read of options.x sees it too); non-enumerable ones do not', () => {
    const inherited = Object.create({ alhpa: 1 }) as object;
    expect(() => checkKeys('Blas.gemm', inherited, ['alpha'])).toThrow(/unknown option 'alhpa'/);
    class Options {
      alpha = 1;
      method(): number {
        return this.alpha;
      }
    }
    expect(() => checkKeys('Blas.gemm', new Options(), ['alpha'])).not.toThrow();
    expect(() => checkKeys('Blas.gemm', Object.defineProperty({}, 'hidden', { value: 1, enumerable: false }), ['alpha'])).not.toThrow();
  });
});
