// The math libraries as objects (cuBLAS, cuBLASLt, cuFFT, cuRAND, cuSPARSE, cuSOLVER, cuDNN): each bound
// to a Stream, each library loaded on its object's first use. One export line per file.
export { CUDA_DATA_TYPE, ScalarBox, type Complex, type Operand, type ResolvedOperand, type Scalar } from './common';
export {
  CUFFT_DIRECTION,
  CUFFT_TYPE,
  FftPlan,
  type FftNormalize,
  type FftPlanCommonOptions,
  type FftPlanLikeOptions,
  type FftPlanOptions,
  type FftPrecision,
  type FftSide,
  type FftType,
  type FftWorkspace,
} from './fft';
export { fft, fftn, fftPlanCache, ifft, ifftn, irfft, irfftn, rfft, rfftn, type FftCallOptions, type IrfftOptions } from './fft-functions';
export {
  CURAND_ORDERING,
  CURAND_RNG,
  RandomGenerator,
  type FillOptions,
  type NormalOptions,
  type RandomGeneratorOptions,
  type RandomKind,
  type RandomOrdering,
} from './random';
export { CUBLAS_COMPUTE } from './blas-gemm';
export { Blas, type BlasOptions, type ComputeType, type DotOptions, type GemmExOptions, type GemmOptions, type GemvOptions, type VectorOptions } from './blas';
export { matrix, type MatrixOptions, type Order, type Transpose } from './matrix';
export {
  DenseMatrix,
  DenseVector,
  SparseMatrix,
  type HostSparseParts,
  type SparseFormat,
  type SparseArray,
  type SparseIndexType,
  type SparseParts,
  type SparseValueType,
} from './sparse-matrix';
export { Sparse, type SparseOp, type SpgemmOptions, type SpmmOptions, type SpmvOptions } from './sparse';
export {
  ConvergenceError,
  DenseSolver,
  LuFactors,
  NotPositiveDefiniteError,
  SingularMatrixError,
  SolverError,
  type SolverDType,
  type SvdResult,
} from './solver';
export {
  ActivationDescriptor,
  ConvolutionDescriptor,
  FilterDescriptor,
  TensorDescriptor,
  channelsLastStrides,
  type ActivationOptions,
  type ConvolutionOptions,
  type FilterDescriptorOptions,
  type TensorDescriptorOptions,
  type TensorLayout,
} from './cudnn-descriptors';
export {
  Cudnn,
  type ActivationForwardOptions,
  type ConvolutionAlgorithmChoice,
  type ConvolutionAlgorithmPerf,
  type ConvolutionForwardOptions,
  type CudnnOptions,
} from './cudnn';
export type { ActivationMode, ConvolutionForwardAlgorithm, ConvolutionMathType, ConvolutionMode, CudnnDType } from './cudnn-api';
export { EPILOGUES } from './matmul-layout';
export {
  Matmul,
  type AuxLayout,
  type Epilogue,
  type MatmulAlgorithm,
  type MatmulOperands,
  type MatmulOptions,
  type MatmulPlanOptions,
  type MatrixDescription,
} from './matmul';
