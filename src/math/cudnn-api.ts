// What the cuDNN objects share below the objects themselves: the typed layer, loaded on first use,
// cuDNN's enum values by name (test/math/cudnn.test.ts compares them with the
// generated enums), and the dtypes cuDNN's legacy API takes. Nothing here loads cuDNN at import.
import { loadCudnn, type cudnn } from '../releases';
import type { DType } from '../memory/strided-view';

export type { cudnn as cudnnNative } from '../releases';

/** cuDNN's typed layer, as the objects use it (a seam: unit tests give a fake). @internal */
export type CudnnApi = typeof cudnn;

/** cuDNN's typed layer, required on first use (the library itself loads on its first call). @internal */
export function cudnnApi(): CudnnApi {
  return loadCudnn();
}

let lastId = 0;
/** A number naming one descriptor for the plan cache (never reused). @internal */
export function nextDescriptorId(): number {
  return ++lastId;
}

/** The dtypes the cuDNN objects take: half, single and double precision. */
export type CudnnDType = 'f16' | 'f32' | 'f64';
/** The dtypes, for checks and messages. @internal */
export const CUDNN_DTYPES: readonly CudnnDType[] = ['f16', 'f32', 'f64'];

/** cudnnDataType_t of each dtype (CUDNN_DATA_FLOAT, _DOUBLE, _HALF). @internal */
export const CUDNN_DATA_TYPE: Readonly<Record<CudnnDType, number>> = Object.freeze({ f32: 0, f64: 1, f16: 2 });

/** cudnnTensorFormat_t: CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NHWC. @internal */
export const CUDNN_FORMAT = Object.freeze({ NCHW: 0, NHWC: 1 });

/** How a convolution may use the GPU's tensor cores (cudnnMathType_t). */
export type ConvolutionMathType = 'default' | 'tensorOp' | 'tensorOpAllowConversion' | 'fma';
/** cudnnMathType_t of each math type. @internal */
export const CUDNN_MATH_TYPE: Readonly<Record<ConvolutionMathType, number>> = Object.freeze({ default: 0, tensorOp: 1, tensorOpAllowConversion: 2, fma: 3 });

/** 'crossCorrelation' (what deep-learning frameworks call convolution) or 'convolution' (the filter flipped). */
export type ConvolutionMode = 'crossCorrelation' | 'convolution';
/** cudnnConvolutionMode_t of each mode. @internal */
export const CUDNN_CONVOLUTION_MODE: Readonly<Record<ConvolutionMode, number>> = Object.freeze({ convolution: 0, crossCorrelation: 1 });

/** The activation functions cudnnActivationForward computes. */
export type ActivationMode = 'sigmoid' | 'relu' | 'tanh' | 'clippedRelu' | 'elu' | 'swish';
/** cudnnActivationMode_t of each mode (CUDNN_ACTIVATION_IDENTITY, 5, works only in fused calls). @internal */
export const CUDNN_ACTIVATION_MODE: Readonly<Record<ActivationMode, number>> = Object.freeze({
  sigmoid: 0,
  relu: 1,
  tanh: 2,
  clippedRelu: 3,
  elu: 4,
  swish: 6,
});

/** A forward convolution algorithm of cuDNN (cudnnConvolutionFwdAlgo_t), by name. */
export type ConvolutionForwardAlgorithm = 'implicitGemm' | 'implicitPrecompGemm' | 'gemm' | 'direct' | 'fft' | 'fftTiling' | 'winograd' | 'winogradNonfused';
/** The algorithms in cudnnConvolutionFwdAlgo_t order (the index is the enum value). @internal */
export const CONVOLUTION_FWD_ALGORITHMS: readonly ConvolutionForwardAlgorithm[] = Object.freeze([
  'implicitGemm',
  'implicitPrecompGemm',
  'gemm',
  'direct',
  'fft',
  'fftTiling',
  'winograd',
  'winogradNonfused',
]);

/** True for a dtype the cuDNN objects take. @internal */
export function isCudnnDType(d: DType): d is CudnnDType {
  return d === 'f16' || d === 'f32' || d === 'f64';
}
