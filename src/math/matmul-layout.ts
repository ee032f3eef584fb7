// What the Matmul object (src/math/matmul.ts) knows before cuBLASLt loads: operand descriptions
// (dtype, shape, order, leading dimension, batch stride) from a StridedView or a plain object, the
// epilogues cuBLASLt has with the inputs and outputs each one takes, and the auxiliary buffers' sizes.
// cuBLASLt takes row-major layouts itself (CUBLASLT_ORDER_ROW), so nothing is swapped here: each
// matrix is described as it lies.
import { checkKeys, describe } from '../describe';
import { DeviceBuffer } from '../memory/device-buffer';
import { StridedView, type DType } from '../memory/strided-view';
import { checkCount, checkDType } from './common';
import { INT32_MAX, MatrixSlot, resolveMatrix, type Order } from './matrix';

/** A matrix operand of a Matmul: a StridedView (its dtype, shape and strides are read) or a description. */
export type MatrixDescription =
  | StridedView
  | {
      /** The element type: 'f16', 'bf16', 'f32', 'f64', 'c64', 'c128', 'i8' or 'i32'. */
      dtype: DType;
      /** [rows, cols] or [batch, rows, cols]. */
      shape: readonly number[];
      /** Storage order (default 'row'). */
      order?: Order;
      /** Leading dimension in elements (default: cols for 'row', rows for 'col'). */
      ld?: number;
      /** Elements from one matrix of the batch to the next (default rows·cols for contiguous matrices; 0: broadcast). */
      batchStride?: number;
    };

/** The dtypes of Matmul operands. */
export const MATMUL_DTYPES = ['f16', 'bf16', 'f32', 'f64', 'c64', 'c128', 'i8', 'i32'] as const;

/** cuBLASLt's epilogues (cublasLtEpilogue_t) by name: the nvmath-python `MatmulEpilog` names. */
export const EPILOGUES = Object.freeze({
  /** No epilogue: d = alpha·op(a)·op(b) + beta·c. */
  DEFAULT: 1,
  /** ReLU of the product: max(0, x) element by element. */
  RELU: 2,
  /** ReLU, also writing to `aux` a bit mask of the elements it kept (what DRELU reads in the backward pass). */
  RELU_AUX: 130,
  /** Adds the bias vector (one value per row of d) to the product. */
  BIAS: 4,
  /** Adds the bias, then ReLU. */
  RELU_BIAS: 6,
  /** Adds the bias, then ReLU, also writing the ReLU bit mask to `aux`. */
  RELU_AUX_BIAS: 134,
  /** Backward ReLU: the product times ReLU's derivative, read from the bit mask in `aux`. */
  DRELU: 136,
  /** DRELU, also writing the bias gradient (the result summed along each row, length M) to `biasGrad`. */
  DRELU_BGRAD: 152,
  /** GELU (tanh approximation) of the product. */
  GELU: 32,
  /** GELU, also writing its inputs to `aux` (what DGELU reads in the backward pass). */
  GELU_AUX: 160,
  /** Adds the bias, then GELU. */
  GELU_BIAS: 36,
  /** Adds the bias, then GELU, also writing GELU's inputs to `aux`. */
  GELU_AUX_BIAS: 164,
  /** Backward GELU: the product times GELU's derivative at the inputs saved in `aux`. */
  DGELU: 192,
  /** DGELU, also writing the bias gradient (length M) to `biasGrad`. */
  DGELU_BGRAD: 208,
  /** The plain product, also writing to `biasGrad` the bias gradient taken from a: op(a) summed along K (length M). */
  BGRADA: 256,
  /** The plain product, also writing to `biasGrad` the bias gradient taken from b: op(b) summed along K (length N). */
  BGRADB: 512,
} as const);
/** An epilogue applied to the product inside the kernel: 'RELU', 'GELU_BIAS', 'DRELU_BGRAD', … */
export type Epilogue = keyof typeof EPILOGUES;

/** What an epilogue reads and writes besides a, b, c and d. */
export interface EpilogueTraits {
  /** Reads a bias vector of d's dtype, one element per row of d (length M). */
  readonly bias: boolean;
  /** The auxiliary matrix: written by the forward epilogue ('out'), read by its gradient ('in'). */
  readonly aux: 'relu' | 'gelu' | undefined;
  readonly auxDirection: 'in' | 'out' | undefined;
  /** Writes a bias gradient: 'M' (length M: BGRADA, DRELU_BGRAD, DGELU_BGRAD) or 'N' (BGRADB). */
  readonly biasGrad: 'M' | 'N' | undefined;
  /** cuBLASLt needs d column-major for it. */
  readonly columnMajorD: boolean;
}

/** The traits of `e` (see {@link EpilogueTraits}). */
export function epilogueTraits(e: Epilogue): EpilogueTraits {
  const bias = e === 'BIAS' || e.endsWith('_BIAS');
  const aux = e.includes('RELU_AUX') || e.startsWith('DRELU') ? 'relu' : e.includes('GELU_AUX') || e.startsWith('DGELU') ? 'gelu' : undefined;
  const auxDirection = aux === undefined ? undefined : e.startsWith('D') ? 'in' : 'out';
  const biasGrad = e === 'BGRADB' ? 'N' : e.endsWith('BGRAD') || e === 'BGRADA' ? 'M' : undefined;
  const columnMajorD = bias || aux !== undefined || biasGrad !== undefined;
  return { bias, aux, auxDirection, biasGrad, columnMajorD };
}

/** Checks `v` names an epilogue (TypeError naming `where`); undefined is 'DEFAULT'. */
export function checkEpilogue(where: string, v: unknown): Epilogue {
  if (v === undefined) return 'DEFAULT';
  if (typeof v === 'string' && Object.hasOwn(EPILOGUES, v)) return v as Epilogue;
  throw new TypeError(`${where}: epilogue must be one of ${Object.keys(EPILOGUES).join(', ')}, got ${describe(v)}`);
}

/** A matrix as described: the slot's fields without a buffer (address 0 for a plain description). */
export function describeMatrix(where: string, name: string, v: unknown): MatrixSlot {
  const slot = new MatrixSlot();
  if (v instanceof StridedView) {
    resolveMatrix(where, name, v, slot, 'row', true);
    checkDType(where, `${name} dtype`, slot.dtype, MATMUL_DTYPES);
    slot.buffer = undefined; // the address stays: plan() reads its alignment
    return slot;
  }
  if (typeof v !== 'object' || v === null || v instanceof DeviceBuffer || ArrayBuffer.isView(v)) {
    throw new TypeError(`${where}: ${name} must be a StridedView or a description { dtype, shape, order?, ld?, batchStride? }, got ${describe(v)}`);
  }
  checkKeys(`${where}: ${name}`, v, ['dtype', 'shape', 'order', 'ld', 'batchStride']);
  const d = v as { dtype: unknown; shape: unknown; order?: unknown; ld?: unknown; batchStride?: unknown };
  slot.dtype = checkDType(where, `${name}.dtype`, d.dtype, MATMUL_DTYPES);
  const given = d.shape; // read once: a getter cannot pass the checks with one shape and give another
  if (!Array.isArray(given) || (given.length !== 2 && given.length !== 3))
    throw new RangeError(`${where}: ${name}.shape must be [rows, cols] or [batch, rows, cols], got ${describe(given)}`);
  const shape = Array.from(given, (x, i) => checkCount(where, `${name}.shape[${i}]`, x)); // Array.from visits holes
  // cuBLASLt's batch count is an int32; rows and cols as a view's (resolveMatrix)
  if (shape.some((x) => x > INT32_MAX)) throw new RangeError(`${where}: ${name}.shape has a size above 2**31 - 1, got [${shape}]`);
  const order = d.order ?? 'row';
  if (order !== 'row' && order !== 'col') throw new TypeError(`${where}: ${name}.order must be 'row' or 'col', got ${describe(order)}`);
  slot.rows = shape[shape.length - 2];
  slot.cols = shape[shape.length - 1];
  slot.order = order;
  const extent = Math.max(1, order === 'row' ? slot.cols : slot.rows);
  slot.ld = d.ld === undefined ? extent : checkCount(where, `${name}.ld`, d.ld, 1);
  if (slot.ld < extent || slot.ld > INT32_MAX)
    throw new RangeError(`${where}: ${name}.ld must be ≥ ${extent} (the ${order === 'row' ? 'cols' : 'rows'}), got ${slot.ld}`);
  slot.batch = shape.length === 3 ? shape[0] : 1;
  const span = slot.ld * (order === 'row' ? slot.rows : slot.cols);
  slot.batchStride = slot.batch <= 1 ? 0 : d.batchStride === undefined ? span : checkCount(where, `${name}.batchStride`, d.batchStride);
  return slot;
}

/** Throws a RangeError naming what differs between the described matrix and the one given to execute. */
export function checkSameLayout(where: string, name: string, described: MatrixSlot, given: MatrixSlot): void {
  if (given.dtype !== described.dtype || given.rows !== described.rows || given.cols !== described.cols || given.batch !== described.batch) {
    throw new RangeError(
      `${where}: ${name} is ${given.dtype} [${given.batch > 1 ? `${given.batch}, ` : ''}${given.rows}, ${given.cols}]; the Matmul was made for ${described.dtype} [${described.batch > 1 ? `${described.batch}, ` : ''}${described.rows}, ${described.cols}]`,
    );
  }
  if (given.order !== described.order || given.ld !== described.ld || (given.batch > 1 && given.batchStride !== described.batchStride)) {
    throw new RangeError(
      `${where}: ${name} is ${given.order}-major with ld ${given.ld}${given.batch > 1 ? ` and batch stride ${given.batchStride}` : ''}; the Matmul was made for ${described.order}-major with ld ${described.ld}${described.batch > 1 ? ` and batch stride ${described.batchStride}` : ''}`,
    );
  }
}

/** The auxiliary matrix of a RELU/GELU epilogue (column-major, per batch entry): its leading dimension and bytes. */
export interface AuxLayout {
  /** Leading dimension in elements (RELU: bits, so bytes × 8). */
  readonly ld: number;
  /** Elements from one batch entry to the next. */
  readonly batchStride: number;
  /** Bytes the whole auxiliary buffer needs. */
  readonly bytes: number;
  /** Its dtype: 'u8' (a RELU bit mask) or d's dtype (GELU inputs). */
  readonly dtype: DType;
}

const roundUp = (x: number, to: number): number => Math.ceil(x / to) * to;

/**
 * The layout cuBLASLt expects of the auxiliary output of an m×n (× batch) product: RELU keeps one bit per
 * element with rows padded to 16 bytes; GELU keeps its inputs in d's dtype with rows padded to 8 elements.
 */
export function auxLayout(kind: 'relu' | 'gelu', m: number, n: number, batch: number, dType: DType, itemSize: number): AuxLayout {
  if (kind === 'relu') {
    const rowBytes = roundUp(Math.ceil(m / 8), 16);
    return { ld: rowBytes * 8, batchStride: rowBytes * 8 * n, bytes: rowBytes * n * batch, dtype: 'u8' };
  }
  const ld = roundUp(m, 8);
  return { ld, batchStride: ld * n, bytes: ld * n * batch * itemSize, dtype: dType };
}
