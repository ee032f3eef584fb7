// GEMM argument planning for the Blas object (src/math/blas.ts): which dtypes and compute types cuBLAS
// takes together, and how row-major or column-major operands become one column-major cuBLAS call.
// Pure functions over resolved operands (src/math/matrix.ts): no library is loaded here.
import { describe } from '../describe';
import type { DType } from '../memory/strided-view';
import { isComplex } from './common';
import { mappedOp, opCode, opCols, opRows, type MatrixSlot, type Transpose } from './matrix';

/** cuBLAS compute types by the name after `CUBLAS_COMPUTE_` (cublasComputeType_t). */
export const CUBLAS_COMPUTE = Object.freeze({
  /** Half-precision arithmetic and accumulation (f16 operands and result). */
  '16F': 64,
  /** '16F' with every step in half precision: no faster mode of the handle applies. */
  '16F_PEDANTIC': 65,
  /** Single-precision accumulation: the default for f16, bf16, f32 and c64 operands. */
  '32F': 68,
  /** '32F' with every step in single precision (no TF32 or other reduced-precision shortcut). */
  '32F_PEDANTIC': 69,
  /** f32 operands may be rounded to f16 to run on tensor cores; accumulation stays f32. */
  '32F_FAST_16F': 74,
  /** f32 operands may be rounded to bf16 to run on tensor cores; accumulation stays f32. */
  '32F_FAST_16BF': 75,
  /** f32 operands may be rounded to TF32 (10-bit mantissa) to run on tensor cores; accumulation stays f32. */
  '32F_FAST_TF32': 77,
  /** Double-precision arithmetic: the default for f64 and c128 operands. */
  '64F': 70,
  /** '64F' with every step in double precision. */
  '64F_PEDANTIC': 71,
  /** Integer accumulation in 32 bits: i8 operands, i32 result (the default for i8). */
  '32I': 72,
  /** '32I' with no shortcut of the handle's math mode. */
  '32I_PEDANTIC': 73,
} as const);
/** A compute type of {@link Blas.gemmEx}: `'32F'`, `'32F_FAST_TF32'`, `'64F'`, `'16F'`, `'32I'`, … */
export type ComputeType = keyof typeof CUBLAS_COMPUTE;

/** CUBLAS_GEMM_DEFAULT: cuBLAS picks the algorithm. */
export const GEMM_DEFAULT_ALGO = -1;

/** The operand dtypes (A and B alike) and output dtypes each compute-type family takes (cuBLAS's GemmEx table). */
const FAMILY_TYPES: Readonly<Record<string, readonly (readonly [DType, DType])[]>> = {
  '16F': [['f16', 'f16']],
  '32F': [
    ['f16', 'f16'],
    ['bf16', 'bf16'],
    ['f16', 'f32'],
    ['bf16', 'f32'],
    ['i8', 'f32'],
    ['f32', 'f32'],
    ['c64', 'c64'],
  ],
  '32F_FAST': [
    ['f32', 'f32'],
    ['c64', 'c64'],
  ],
  '64F': [
    ['f64', 'f64'],
    ['c128', 'c128'],
  ],
  '32I': [['i8', 'i32']],
};

function family(c: ComputeType): string {
  if (c.startsWith('32F_FAST')) return '32F_FAST';
  return c.replace('_PEDANTIC', '');
}

/** The compute type GEMM uses on (ab, c) operands unless told: f32 accumulation for 16-bit and 8-bit floats, f64 for f64. */
export function defaultComputeType(ab: DType, c: DType): ComputeType | undefined {
  switch (ab) {
    case 'f16':
    case 'bf16':
    case 'f32':
    case 'c64':
      return '32F';
    case 'f64':
    case 'c128':
      return '64F';
    case 'i8':
      return c === 'i32' ? '32I' : '32F';
    default:
      return undefined;
  }
}

/** Checks `v` names a compute type (TypeError naming `where`). */
export function checkComputeType(where: string, v: unknown): ComputeType {
  if (typeof v === 'string' && Object.hasOwn(CUBLAS_COMPUTE, v)) return v as ComputeType;
  throw new TypeError(`${where}: computeType must be one of ${Object.keys(CUBLAS_COMPUTE).join(', ')}, got ${describe(v)}`);
}

/**
 * The scalar dtype (alpha, beta) of a GEMM of `ab` operands into `c` computed in `compute`, or a
 * TypeError naming the combinations that compute type takes.
 */
export function gemmScaleType(where: string, ab: DType, c: DType, compute: ComputeType): DType {
  const f = family(compute);
  const allowed = FAMILY_TYPES[f];
  if (!allowed.some(([x, y]) => x === ab && y === c)) {
    throw new TypeError(`${where}: computeType ${compute} takes a/b → c of ${allowed.map(([x, y]) => `${x} → ${y}`).join(', ')}; got ${ab} → ${c}`);
  }
  if (f === '16F') return 'f16';
  if (f === '32I') return 'i32';
  if (f === '64F') return isComplex(ab) ? 'c128' : 'f64';
  return isComplex(ab) ? 'c64' : 'f32';
}

/** One column-major cuBLAS GEMM: what planGemm works out, reused call after call. */
export class GemmCall {
  transa = 0;
  transb = 0;
  m = 0;
  n = 0;
  k = 0;
  a = 0;
  lda = 1;
  strideA = 0;
  b = 0;
  ldb = 1;
  strideB = 0;
  c = 0;
  ldc = 1;
  strideC = 0;
  batch = 1;
  /** True when A and B were swapped (a row-major output: the call computes Cᵀ = op(B)ᵀ·op(A)ᵀ). */
  swapped = false;
}

/**
 * Works out the column-major call for C = op(A)·op(B): checks the shapes (m×k · k×n → m×n), then, for a
 * column-major C, passes A and B as they lie; for a row-major C (whose memory is Cᵀ column-major) swaps
 * them and computes Cᵀ = op(B)ᵀ·op(A)ᵀ. An operand stored in the other order than C changes N ↔ T.
 */
export function planGemm(where: string, A: MatrixSlot, tA: Transpose, B: MatrixSlot, tB: Transpose, C: MatrixSlot, call: GemmCall): GemmCall {
  const m = opRows(A, tA);
  const k = opCols(A, tA);
  const kb = opRows(B, tB);
  const n = opCols(B, tB);
  if (kb !== k) throw new RangeError(`${where}: op(a) is ${m}×${k} and op(b) is ${kb}×${n}: the inner dimensions differ`);
  if (C.rows !== m || C.cols !== n) throw new RangeError(`${where}: c is ${C.rows}×${C.cols} but op(a)·op(b) is ${m}×${n}`);
  call.k = k;
  call.c = C.address;
  call.ldc = C.ld;
  call.strideC = C.batchStride;
  if (C.order === 'col') {
    call.swapped = false;
    call.transa = opCode(mappedOp(where, 'a', A, tA, 'col'));
    call.transb = opCode(mappedOp(where, 'b', B, tB, 'col'));
    call.m = m;
    call.n = n;
    fillOperands(call, A, B);
  } else {
    call.swapped = true;
    call.transa = opCode(mappedOp(where, 'b', B, tB, 'row'));
    call.transb = opCode(mappedOp(where, 'a', A, tA, 'row'));
    call.m = n;
    call.n = m;
    fillOperands(call, B, A);
  }
  return call;
}

function fillOperands(call: GemmCall, first: MatrixSlot, second: MatrixSlot): void {
  call.a = first.address;
  call.lda = first.ld;
  call.strideA = first.batchStride;
  call.b = second.address;
  call.ldb = second.ld;
  call.strideB = second.batchStride;
}

/** True for the integer compute types ('32I', '32I_PEDANTIC'): cuBLAS runs them on its IMMA kernels. */
export function isIntegerCompute(c: ComputeType): boolean {
  return c === '32I' || c === '32I_PEDANTIC';
}

/**
 * Refuses an i8 → i32 GEMM ('32I') cuBLAS has no kernel for, before it is called: its IMMA kernels take
 * a and b with K contiguous (the column-major call op(A) = T, op(B) = N: a row-major a and a column-major
 * b, or either stored the other way and transposed), leading dimensions, m and k multiples of 4, and
 * 4-byte-aligned matrices. cuBLAS 13 answers CUBLAS_STATUS_NOT_SUPPORTED otherwise (a · b both row-major).
 */
export function checkIntegerGemm(where: string, call: GemmCall): void {
  const [opA, opB] = call.swapped ? ['b', 'a'] : ['a', 'b'];
  if (call.transa !== 1 || call.transb !== 0) {
    throw new RangeError(
      `${where}: cuBLAS's i8 → i32 GEMM (computeType '32I') needs K contiguous in a and b: op(a) row-major and op(b) column-major (a row-major a with transA 'N' or a column-major one with 'T'; a column-major b with transB 'N' or a row-major one with 'T'); the column-major call here would be ${OP_NAMES[call.transa]}${OP_NAMES[call.transb]}, cuBLAS takes only TN`,
    );
  }
  const fours: [string, number][] = [
    [`the ld of ${opA}`, call.lda],
    [`the ld of ${opB}`, call.ldb],
    ['the ld of c', call.ldc],
    [call.swapped ? "n (c's columns)" : "m (c's rows)", call.m],
    ['k', call.k],
  ];
  for (const [name, v] of fours)
    if (v % 4 !== 0) throw new RangeError(`${where}: cuBLAS's i8 → i32 GEMM (computeType '32I') needs ${name} to be a multiple of 4, got ${v}`);
  const bytes: [string, number][] = [
    [opA, call.a],
    [opB, call.b],
    ['c', call.c],
    [`${opA}'s batch stride`, call.strideA],
    [`${opB}'s batch stride`, call.strideB],
  ];
  for (const [name, v] of bytes)
    if (v % 4 !== 0) throw new RangeError(`${where}: cuBLAS's i8 → i32 GEMM (computeType '32I') needs ${name} to be a multiple of 4 bytes, got ${v}`);
}

const OP_NAMES = ['N', 'T', 'C'] as const;

/**
 * Checks the batch sizes of a strided-batched GEMM: C's batch is the count; A and B have the same
 * batch or are one matrix for all (2-D, batch stride 0). C may not repeat a matrix (batch stride 0).
 */
export function checkBatches(where: string, A: MatrixSlot, B: MatrixSlot, C: MatrixSlot): number {
  const count = C.batch;
  if (A.batch !== count && A.batch !== 1) throw new RangeError(`${where}: a holds ${A.batch} matrices, c ${count}`);
  if (B.batch !== count && B.batch !== 1) throw new RangeError(`${where}: b holds ${B.batch} matrices, c ${count}`);
  if (A.batch === 1) A.batchStride = 0;
  if (B.batch === 1) B.batchStride = 0;
  if (count > 1 && C.batchStride === 0) throw new RangeError(`${where}: c has batch stride 0: every result would overwrite the same matrix`);
  return count;
}
