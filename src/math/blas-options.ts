// The options Blas's methods take (src/math/blas.ts).
import type { StreamLike } from '../stream';
import type { Scalar } from './common';
import type { ComputeType } from './blas-gemm';
import type { Transpose } from './matrix';
import type { Level1DType } from './blas-level1';

/** Options of {@link Blas.create}. */
export interface BlasOptions {
  /** The stream the handle's work is enqueued on (default: the current context's legacy default stream). */
  stream?: StreamLike;
}

/** Options of {@link Blas.gemm} and {@link Blas.gemmStridedBatched}. */
export interface GemmOptions {
  /** op(a): 'N' (default), 'T' or 'C'. */
  transA?: Transpose;
  /** op(b): 'N' (default), 'T' or 'C'. */
  transB?: Transpose;
  /** Default 1. */
  alpha?: Scalar;
  /** Default 0 (c is then only written). */
  beta?: Scalar;
}

/** Options of {@link Blas.gemmEx} and {@link Blas.gemmBatched}. */
export interface GemmExOptions extends GemmOptions {
  /** How cuBLAS computes (default: '32F' for f16/bf16/f32/c64 operands, '64F' for f64/c128, '32I' for i8 → i32). */
  computeType?: ComputeType;
  /** A cublasGemmAlgo_t (default CUBLAS_GEMM_DEFAULT, -1). */
  algo?: number;
}

/** Options of the level-1 calls. */
export interface VectorOptions {
  /** The element type of DeviceBuffer operands (a 1-D StridedView brings its own). */
  dtype?: Level1DType;
}

/** Options of {@link Blas.dot}. */
export interface DotOptions extends VectorOptions {
  /** Complex vectors: conjugate x (dotc) instead of the plain product (dotu). Default false. */
  conjugate?: boolean;
}

/** Options of {@link Blas.gemv}. */
export interface GemvOptions extends VectorOptions {
  /** op(a): 'N' (default), 'T' or 'C'. */
  trans?: Transpose;
  /** The factor of op(a)·x (default 1); a complex for complex dtypes. */
  alpha?: Scalar;
  /** The factor of the old y (default 0: y is then only written). */
  beta?: Scalar;
}
