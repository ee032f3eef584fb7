// The math libraries as objects (cuBLAS, cuBLASLt, cuFFT, cuRAND, cuSPARSE, cuSOLVER, cuDNN): each bound
// to a Stream, each library loaded on its object's first use. One export line per file.
export { CUDA_DATA_TYPE, ScalarBox, type Complex, type Operand, type ResolvedOperand, type Scalar } from './common';
export { CUFFT_DIRECTION, CUFFT_TYPE, FftPlan, type FftNormalize, type FftPlanCommonOptions, type FftPlanLikeOptions, type FftPlanOptions, type FftPrecision, type FftSide, type FftType, type FftWorkspace } from './fft';
export { fft, fftn, fftPlanCache, ifft, ifftn, irfft, irfftn, rfft, rfftn, type FftCallOptions, type IrfftOptions } from './fft-functions';
export { CURAND_ORDERING, CURAND_RNG, RandomGenerator, type FillOptions, type NormalOptions, type RandomGeneratorOptions, type RandomKind, type RandomOrdering } from './random';
export { Blas, type BlasOptions, type ComputeType, type DotOptions, type GemmExOptions, type GemmOptions, type GemvOptions, type VectorOptions } from './blas';
export { matrix, type MatrixOptions, type Order, type Transpose } from './matrix';
