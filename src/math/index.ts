// The math libraries as objects (cuBLAS, cuBLASLt, cuFFT, cuRAND, cuSPARSE, cuSOLVER, cuDNN): each bound
// to a Stream, each library loaded on its object's first use. One export line per file.
export { CUDA_DATA_TYPE, ScalarBox, type Complex, type Operand, type ResolvedOperand, type Scalar } from './common';
