// Matrices and vectors as the column-major BLAS libraries (cuBLAS, cuBLASLt) see them. A matrix operand
// is a 2-D StridedView [rows, cols] (a 3-D one [batch, rows, cols] for batches) in either storage
// order: row-major (strides [ld, 1], the default of StridedView.of) or column-major (strides [1, ld],
// e.g. a row-major view's transpose()). The objects read the order off the strides and map the call to
// column-major themselves, so no copy and no transpose is asked of the caller. Nothing here loads a library.
import { checkKeys, describe } from '../describe';
import { DeviceBuffer } from '../memory/device-buffer';
import { DTYPE_SIZES, StridedView, type DType } from '../memory/strided-view';
import { checkCount, checkOpen } from './common';

/** How a matrix lies in memory: 'row' (row-major, C order) or 'col' (column-major, Fortran order). */
export type Order = 'row' | 'col';
/** A BLAS operation on an operand: 'N' as is, 'T' transposed, 'C' conjugate-transposed. */
export type Transpose = 'N' | 'T' | 'C';

/** The largest value cuBLAS's `int` dimensions take. */
export const INT32_MAX = 2147483647;

/** One matrix operand resolved; the objects keep one per slot and refill it each call (no allocation). */
export class MatrixSlot {
  address = 0;
  dtype: DType = 'f32';
  rows = 0;
  cols = 0;
  order: Order = 'row';
  /** Leading dimension of the column-major matrix the memory holds (rows for 'col', cols for 'row'). */
  ld = 1;
  /** Matrices in the batch (1 for a 2-D view). */
  batch = 1;
  /** Elements from one matrix of the batch to the next (0: the same matrix for every batch entry). */
  batchStride = 0;
  buffer: DeviceBuffer | undefined;
}

/** Options of {@link matrix}. */
export interface MatrixOptions {
  /** The element type the buffer holds. */
  dtype: DType;
  /** Number of rows of the matrix. */
  rows: number;
  /** Number of columns of the matrix. */
  cols: number;
  /** Storage order (default 'row'). */
  order?: Order;
  /** Leading dimension in elements (default: cols for 'row', rows for 'col'). */
  ld?: number;
  /** Byte offset of element [0, 0] in the buffer (default 0). */
  byteOffset?: number;
}

/**
 * A 2-D view of `buffer` as a rows×cols matrix: `matrix(buf, { dtype: 'f32', rows: 3, cols: 4 })` (row-major)
 * or `{ …, order: 'col', ld: 8 }` (column-major, as cuBLAS stores it, leading dimension 8).
 * @param buffer The device memory holding the matrix (bounds are checked against it).
 * @param options `dtype`, `rows` and `cols` (required), `order` ('row' default, or 'col'), `ld` (the leading dimension in elements; default cols for 'row',
 * rows for 'col') and `byteOffset` of element [0, 0] (default 0).
 */
export function matrix(buffer: DeviceBuffer, options: MatrixOptions): StridedView {
  const where = 'matrix';
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`${where}: options must be an object { dtype, rows, cols, order?, ld?, byteOffset? }, got ${describe(options)}`);
  checkKeys(where, options, ['dtype', 'rows', 'cols', 'order', 'ld', 'byteOffset']);
  const order = options.order ?? 'row';
  if (order !== 'row' && order !== 'col') throw new TypeError(`${where}: order must be 'row' or 'col', got ${describe(order)}`);
  const rows = checkCount(where, 'rows', options.rows);
  const cols = checkCount(where, 'cols', options.cols);
  const ld = options.ld ?? Math.max(1, order === 'row' ? cols : rows);
  if (typeof ld !== 'number' || !Number.isSafeInteger(ld) || ld < (order === 'row' ? cols : rows) || ld < 1) {
    throw new RangeError(`${where}: ld must be an integer ≥ ${order === 'row' ? 'cols' : 'rows'} (and ≥ 1), got ${describe(ld)}`);
  }
  try {
    return StridedView.of(buffer, {
      dtype: options.dtype,
      shape: [rows, cols],
      strides: order === 'row' ? [ld, 1] : [1, ld],
      byteOffset: options.byteOffset ?? 0,
    });
  } catch (e) {
    // StridedView.of checks dtype, byteOffset and bounds: its refusal is this call's, named so
    const prefix = 'StridedView.of: ';
    if ((e instanceof TypeError || e instanceof RangeError) && e.message.startsWith(prefix))
      throw new (e instanceof TypeError ? TypeError : RangeError)(`${where}: ${e.message.slice(prefix.length)}`);
    throw e;
  }
}

/** The leading dimension `order` gives a rows×cols matrix of strides [sr, sc], or -1 where that order does not fit. */
function leadingDimension(order: Order, rows: number, cols: number, sr: number, sc: number): number {
  if (order === 'col') {
    if (rows > 1 && sr !== 1) return -1;
    const ld = cols <= 1 ? Math.max(1, rows) : sc;
    return ld >= Math.max(1, rows) ? ld : -1;
  }
  if (cols > 1 && sc !== 1) return -1;
  const ld = rows <= 1 ? Math.max(1, cols) : sr;
  return ld >= Math.max(1, cols) ? ld : -1;
}

function notMatrix(where: string, name: string, v: unknown, dims: string): TypeError {
  const host = ArrayBuffer.isView(v) ? ' (a host array: copy it to the GPU first, e.g. DeviceBuffer.from(array), and view it with matrix())' : '';
  const buf = v instanceof DeviceBuffer ? ' (a DeviceBuffer has no shape: view it with matrix(buffer, { dtype, rows, cols }) or StridedView.of)' : '';
  return new TypeError(`${where}: ${name} must be a ${dims} StridedView of device memory, got ${describe(v)}${host}${buf}`);
}

/**
 * Fills `slot` from `v`: a 2-D view (or, with `batched`, a 3-D view [batch, rows, cols]; a 2-D one is
 * then one matrix for every batch entry). The order is read off the strides (`prefer` when both fit,
 * e.g. a 1×n matrix); RangeError when neither fits cuBLAS (no unit stride, or ld below the extent).
 */
export function resolveMatrix(where: string, name: string, v: unknown, slot: MatrixSlot, prefer: Order, batched = false): MatrixSlot {
  if (!(v instanceof StridedView)) throw notMatrix(where, name, v, batched ? '2-D or 3-D' : '2-D');
  const buffer = v.buffer;
  if (!(buffer instanceof DeviceBuffer)) throw notMatrix(where, name, v, batched ? '2-D or 3-D' : '2-D');
  const shape = v.shape;
  const strides = v.strides;
  const nd = shape.length;
  if (nd !== 2 && !(batched && nd === 3))
    throw new RangeError(`${where}: ${name} must be ${batched ? '2-D [rows, cols] or 3-D [batch, rows, cols]' : '2-D [rows, cols]'}, got shape [${shape}]`);
  const rows = shape[nd - 2];
  const cols = shape[nd - 1];
  const sr = strides[nd - 2];
  const sc = strides[nd - 1];
  let order: Order = prefer;
  let ld = leadingDimension(prefer, rows, cols, sr, sc);
  if (ld < 0) {
    order = prefer === 'row' ? 'col' : 'row';
    ld = leadingDimension(order, rows, cols, sr, sc);
  }
  if (ld < 0) {
    throw new RangeError(
      `${where}: ${name} (shape [${shape}], strides [${strides}]) is neither row-major (strides [ld, 1], ld ≥ cols) nor column-major (strides [1, ld], ld ≥ rows)`,
    );
  }
  if (rows > INT32_MAX || cols > INT32_MAX || ld > INT32_MAX || (nd === 3 && shape[0] > INT32_MAX))
    throw new RangeError(`${where}: ${name} has a dimension, batch or leading dimension above 2**31 - 1 (shape [${shape}], ld ${ld})`);
  checkOpen(where, buffer);
  slot.address = buffer.ptr + v.byteOffset;
  slot.dtype = v.dtype;
  slot.rows = rows;
  slot.cols = cols;
  slot.order = order;
  slot.ld = ld;
  slot.buffer = buffer;
  slot.batch = nd === 3 ? shape[0] : 1;
  slot.batchStride = nd === 3 ? (shape[0] <= 1 ? 0 : strides[0]) : 0;
  if (slot.batchStride < 0) throw new RangeError(`${where}: ${name} has a negative batch stride (${strides[0]})`);
  return slot;
}

/** One vector operand resolved (a 1-D view, or a DeviceBuffer of `dtype`). */
export class VectorSlot {
  address = 0;
  dtype: DType = 'f32';
  n = 0;
  inc = 1;
  buffer: DeviceBuffer | undefined;
}

/**
 * Fills `slot` from `v`: a 1-D StridedView (its stride is the increment, > 0), or a DeviceBuffer read as a
 * contiguous vector of `dtype` (needed then; a view's dtype must equal it when given).
 */
export function resolveVector(where: string, name: string, v: unknown, slot: VectorSlot, dtype: DType | undefined): VectorSlot {
  if (v instanceof StridedView) {
    const buffer = v.buffer;
    if (!(buffer instanceof DeviceBuffer)) throw notVector(where, name, v);
    if (v.shape.length !== 1) throw new RangeError(`${where}: ${name} must be a 1-D view (a vector), got shape [${v.shape}]`);
    if (dtype !== undefined && v.dtype !== dtype) throw new TypeError(`${where}: ${name} holds ${v.dtype}, expected ${dtype}`);
    const inc = v.shape[0] <= 1 ? 1 : v.strides[0];
    if (inc <= 0) throw new RangeError(`${where}: ${name} must have a positive stride, got ${v.strides[0]}`);
    if (v.shape[0] > INT32_MAX || inc > INT32_MAX) throw new RangeError(`${where}: ${name} is longer (or more strided) than cuBLAS's int takes`);
    checkOpen(where, buffer);
    slot.address = buffer.ptr + v.byteOffset;
    slot.dtype = v.dtype;
    slot.n = v.shape[0];
    slot.inc = inc;
    slot.buffer = buffer;
    return slot;
  }
  if (v instanceof DeviceBuffer) {
    if (dtype === undefined) throw new TypeError(`${where}: ${name} is a DeviceBuffer without a dtype: pass a 1-D StridedView or the dtype option`);
    const n = Math.floor(v.byteLength / DTYPE_SIZES[dtype]);
    if (n > INT32_MAX) throw new RangeError(`${where}: ${name} holds ${n} elements, more than cuBLAS's int takes`);
    checkOpen(where, v);
    slot.address = v.ptr;
    slot.dtype = dtype;
    slot.n = n;
    slot.inc = 1;
    slot.buffer = v;
    return slot;
  }
  throw notVector(where, name, v);
}

function notVector(where: string, name: string, v: unknown): TypeError {
  const host = ArrayBuffer.isView(v) ? ' (a host array: copy it to the GPU first, e.g. DeviceBuffer.from(array))' : '';
  return new TypeError(`${where}: ${name} must be a DeviceBuffer or a 1-D StridedView of device memory, got ${describe(v)}${host}`);
}

/** Checks `t` is 'N', 'T' or 'C' (TypeError naming `where`/`name`); undefined is 'N'. */
export function checkTranspose(where: string, name: string, t: unknown): Transpose {
  if (t === undefined || t === 'N') return 'N';
  if (t === 'T' || t === 'C') return t;
  throw new TypeError(`${where}: ${name} must be 'N', 'T' or 'C', got ${describe(t)}`);
}

/** Rows and columns of op(X) for a rows×cols X. */
export function opRows(s: MatrixSlot, t: Transpose): number {
  return t === 'N' ? s.rows : s.cols;
}
export function opCols(s: MatrixSlot, t: Transpose): number {
  return t === 'N' ? s.cols : s.rows;
}

/**
 * The operation to pass for operand `x` (of op `t`) when the column-major call sees memory in `target`
 * order: the same op when x lies in that order, else N ↔ T (its memory is the transpose). A 'C' of an
 * operand in the other order would need a conjugate without transpose, which cuBLAS has not: RangeError.
 */
export function mappedOp(where: string, name: string, x: MatrixSlot, t: Transpose, target: Order): Transpose {
  if (x.order === target) return t;
  if (t === 'C')
    throw new RangeError(
      `${where}: a conjugate transpose of ${name} needs ${name} in the same storage order as the output (${target}-major); ${name} is ${x.order}-major`,
    );
  return t === 'N' ? 'T' : 'N';
}

/** cublasOperation_t of a Transpose. */
export function opCode(t: Transpose): number {
  return t === 'N' ? 0 : t === 'T' ? 1 : 2;
}
