// The cuBLAS level-1/2 functions the Blas object calls, by operation and dtype (S, D, C, Z).
// Names only: the typed layer is looked up on the call (its functions load per family on first use).

/** Dtypes of the level-1/2 calls (axpy, scal, dot, nrm2, gemv). */
export const LEVEL1_DTYPES = ['f32', 'f64', 'c64', 'c128'] as const;
export type Level1DType = (typeof LEVEL1_DTYPES)[number];

const NAMES = {
  axpy: { f32: 'cublasSaxpy', f64: 'cublasDaxpy', c64: 'cublasCaxpy', c128: 'cublasZaxpy' },
  scal: { f32: 'cublasSscal', f64: 'cublasDscal', c64: 'cublasCscal', c128: 'cublasZscal' },
  dot: { f32: 'cublasSdot', f64: 'cublasDdot', c64: 'cublasCdotu', c128: 'cublasZdotu' },
  dotc: { f32: 'cublasSdot', f64: 'cublasDdot', c64: 'cublasCdotc', c128: 'cublasZdotc' },
  nrm2: { f32: 'cublasSnrm2', f64: 'cublasDnrm2', c64: 'cublasScnrm2', c128: 'cublasDznrm2' },
  gemv: { f32: 'cublasSgemv', f64: 'cublasDgemv', c64: 'cublasCgemv', c128: 'cublasZgemv' },
} as const;

type Names = typeof NAMES;
export type Level1Op = keyof Names;

/** The typed-layer function of `op` on `dtype` (e.g. 'cublasSaxpy'). */
export function level1Name<O extends Level1Op>(op: O, dtype: Level1DType): Names[O][Level1DType] {
  return NAMES[op][dtype] as Names[O][Level1DType];
}
