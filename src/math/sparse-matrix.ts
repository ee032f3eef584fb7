// cuSPARSE's generic-API descriptors as Resources: SparseMatrix (CSR, COO, CSC over device buffers,
// borrowed or uploaded from host arrays and owned), DenseVector and DenseMatrix (cusparseCreateDnVec /
// DnMat over an operand). A descriptor only records addresses and sizes: the buffers it names are kept
// alive (not freed, even once closed) until the descriptor is closed. Arguments are checked before
// cuSPARSE is loaded; the library loads on the first descriptor made.
import { loadCusparse, type cusparse } from '../releases';
import { checkKeys, describe } from '../describe';
import { Resource } from '../lifecycle';
import { DeviceBuffer, ownerOf } from '../memory/device-buffer';
import { DTYPE_SIZES, StridedView } from '../memory/strided-view';
import type { StreamLike } from '../stream';
import { checkCount, checkDType, cudaDataType, lockFields, operand, type DType, type ResolvedOperand } from './common';
import { SEALED, type Sealed, checkSealed } from '../sealed';

/** Element types of sparse values and dense operands. */
export type SparseValueType = 'f32' | 'f64' | 'c64' | 'c128';
/** Index types of sparse matrices (CUSPARSE_INDEX_32I / 64I). */
export type SparseIndexType = 'i32' | 'i64';
/** Storage formats of {@link SparseMatrix}. */
export type SparseFormat = 'csr' | 'coo' | 'csc';

export const SPARSE_VALUE_TYPES: readonly SparseValueType[] = ['f32', 'f64', 'c64', 'c128'];
export const SPARSE_INDEX_TYPES: readonly SparseIndexType[] = ['i32', 'i64'];
/** cusparseIndexType_t of each index type (cusparse.h; test/math/sparse.test.ts compares with the generated enum). */
export const CUSPARSE_INDEX_TYPE: Readonly<Record<SparseIndexType, number>> = Object.freeze({ i32: 2, i64: 3 });
/** cusparseOrder_t: CUSPARSE_ORDER_COL 1, CUSPARSE_ORDER_ROW 2. */
export const CUSPARSE_ORDER = Object.freeze({ col: 1, row: 2 });

/** A device array of a sparse matrix: a DeviceBuffer (typed by the matrix's dtype/indexType) or a 1-D contiguous StridedView. */
export type SparseArray = DeviceBuffer | StridedView;

/** The parts of {@link SparseMatrix.csr}, {@link SparseMatrix.coo} and {@link SparseMatrix.csc}, on the device. */
export interface SparseParts {
  /** Number of rows of the matrix. */
  rows: number;
  /** Number of columns of the matrix. */
  cols: number;
  /** CSR: rows + 1 offsets into colIndices/values. */
  rowOffsets?: SparseArray;
  /** CSC: cols + 1 offsets into rowIndices/values. */
  colOffsets?: SparseArray;
  /** COO and CSC: the row of each stored element. */
  rowIndices?: SparseArray;
  /** COO and CSR: the column of each stored element. */
  colIndices?: SparseArray;
  /** The stored elements. */
  values: SparseArray;
  /** Stored elements (default: what `values` holds). */
  nnz?: number;
  /** Value type; required when `values` is a DeviceBuffer, else the view's. */
  dtype?: SparseValueType;
  /** Index type; default the views' dtype, else 'i32'. */
  indexType?: SparseIndexType;
  /** 0 (default) or 1: the first row/column index. */
  indexBase?: 0 | 1;
}

/** Host arrays of {@link SparseMatrix.fromHost}: Int32Array/BigInt64Array indices, Float32Array/Float64Array values (complex interleaved). */
export interface HostSparseParts {
  /** Number of rows of the matrix. */
  rows: number;
  /** Number of columns of the matrix. */
  cols: number;
  /** CSR: rows + 1 offsets into colIndices/values (Int32Array gives an 'i32' matrix, BigInt64Array 'i64'). */
  rowOffsets?: Int32Array | BigInt64Array;
  /** CSC: cols + 1 offsets into rowIndices/values. */
  colOffsets?: Int32Array | BigInt64Array;
  /** COO and CSC: the row of each stored element (the same array type as the other index array). */
  rowIndices?: Int32Array | BigInt64Array;
  /** COO and CSR: the column of each stored element (the same array type as the other index array). */
  colIndices?: Int32Array | BigInt64Array;
  /** The stored elements; complex ones interleaved re, im (so twice nnz numbers). */
  values: Float32Array | Float64Array;
  /** 'c64'/'c128' for interleaved complex values (default: f32 for Float32Array, f64 for Float64Array). */
  dtype?: SparseValueType;
  /** 0 (default) or 1: the first row/column index. */
  indexBase?: 0 | 1;
}

/** Which arrays each format holds: [offsets or first indices, second indices], with their lengths. */
const LAYOUT: Readonly<Record<SparseFormat, readonly [keyof SparseParts, keyof SparseParts]>> = {
  csr: ['rowOffsets', 'colIndices'],
  coo: ['rowIndices', 'colIndices'],
  csc: ['colOffsets', 'rowIndices'],
};
const PART_KEYS = ['rows', 'cols', 'rowOffsets', 'colOffsets', 'rowIndices', 'colIndices', 'values', 'nnz', 'dtype', 'indexType', 'indexBase'];

/** Elements the first index array of `format` holds for a rows × cols matrix with nnz elements. */
function firstLength(format: SparseFormat, rows: number, cols: number, nnz: number): number {
  return format === 'csr' ? rows + 1 : format === 'csc' ? cols + 1 : nnz;
}

/** A device array resolved as a 1-D contiguous vector of `dtype`, at least `length` elements. */
function deviceArray(where: string, name: string, v: unknown, dtype: DType, length: number): ResolvedOperand {
  const r = operand(where, name, v, dtype);
  if (r.shape.length !== 1 || (r.shape[0] > 1 && r.strides[0] !== 1))
    throw new TypeError(`${where}: ${name} must be a 1-D contiguous array, got shape [${r.shape}] strides [${r.strides}]`);
  if (r.shape[0] < length) throw new RangeError(`${where}: ${name} holds ${r.shape[0]} ${dtype} elements, needs ${length}`);
  return r;
}

/** The dtype a view brings, or undefined for a DeviceBuffer. */
function viewDType(v: unknown): DType | undefined {
  return v instanceof StridedView ? v.dtype : undefined;
}

/** Validated parts: dtype, index type, nnz and the three resolved arrays. */
interface CheckedParts {
  rows: number;
  cols: number;
  nnz: number;
  dtype: SparseValueType;
  indexType: SparseIndexType;
  indexBase: 0 | 1;
  first: ResolvedOperand;
  second: ResolvedOperand;
  values: ResolvedOperand;
}

function checkParts(where: string, format: SparseFormat, parts: SparseParts): CheckedParts {
  if (typeof parts !== 'object' || parts === null) throw new TypeError(`${where}: parts must be an object { rows, cols, …, values }, got ${describe(parts)}`);
  checkKeys(where, parts, PART_KEYS);
  const rows = checkCount(where, 'rows', parts.rows);
  const cols = checkCount(where, 'cols', parts.cols);
  const [firstName, secondName] = LAYOUT[format];
  for (const key of ['rowOffsets', 'colOffsets', 'rowIndices', 'colIndices'] as const) {
    if (key !== firstName && key !== secondName && parts[key] !== undefined) throw new TypeError(`${where}: a ${format.toUpperCase()} matrix takes no ${key}`);
  }
  if (parts[firstName] === undefined) throw new TypeError(`${where}: ${firstName} is required`);
  if (parts[secondName] === undefined) throw new TypeError(`${where}: ${secondName} is required`);
  // device memory first: a host array gets the hint to upload it, not a complaint about its dtype
  if (!(parts.values instanceof DeviceBuffer) && !(parts.values instanceof StridedView)) operand(where, 'values', parts.values, 'f32');
  const dtype = checkDType(where, 'dtype', parts.dtype ?? viewDType(parts.values), SPARSE_VALUE_TYPES);
  const indexType = checkDType(where, 'indexType', parts.indexType ?? viewDType(parts[firstName]) ?? 'i32', SPARSE_INDEX_TYPES);
  const indexBase = parts.indexBase ?? 0;
  if (indexBase !== 0 && indexBase !== 1) throw new RangeError(`${where}: indexBase must be 0 or 1, got ${describe(indexBase)}`);
  const valuesAll = operand(where, 'values', parts.values, dtype);
  const nnz = parts.nnz === undefined ? valuesAll.shape[0] : checkCount(where, 'nnz', parts.nnz);
  if (rows * cols < nnz) throw new RangeError(`${where}: nnz ${nnz} exceeds rows × cols = ${rows * cols}`);
  const values = deviceArray(where, 'values', parts.values, dtype, nnz);
  const first = deviceArray(where, firstName, parts[firstName], indexType, firstLength(format, rows, cols, nnz));
  const second = deviceArray(where, secondName, parts[secondName], indexType, nnz);
  const ctx = values.buffer.context;
  if (first.buffer.context !== ctx || second.buffer.context !== ctx) throw new TypeError(`${where}: every array must belong to one context`);
  return { rows, cols, nnz, dtype, indexType, indexBase, first, second, values };
}

/** Makes the cuSPARSE descriptor of `format` over checked parts. */
function createDescriptor(format: SparseFormat, p: CheckedParts): cusparse.cusparseSpMatDescr_t {
  const api = loadCusparse();
  const it = CUSPARSE_INDEX_TYPE[p.indexType];
  const vt = cudaDataType('SparseMatrix', p.dtype);
  if (format === 'coo') return api.cusparseCreateCoo(p.rows, p.cols, p.nnz, p.first.address, p.second.address, p.values.address, it, p.indexBase, vt);
  const create = format === 'csr' ? api.cusparseCreateCsr : api.cusparseCreateCsc;
  return create(p.rows, p.cols, p.nnz, p.first.address, p.second.address, p.values.address, it, it, p.indexBase, vt);
}

/**
 * A sparse matrix in CSR, COO or CSC form: a cuSPARSE descriptor over device arrays. Made from device
 * arrays ({@link SparseMatrix.csr}, `coo`, `csc`: borrowed, kept alive until close) or from host arrays
 * ({@link SparseMatrix.fromHost}: uploaded, owned and freed by close).
 * @example
 * ```ts
 * import { DeviceBuffer, SparseMatrix, Stream } from 'cuda-ts/objects';
 *
 * using stream = Stream.create();
 * // [[1, 0, 2], [0, 3, 0]] from host arrays: uploaded on `stream`, owned by the matrix (loads cuSPARSE)
 * using a = SparseMatrix.fromHost('csr', { rows: 2, cols: 3, rowOffsets: new Int32Array([0, 2, 3]),
 *   colIndices: new Int32Array([0, 2, 1]), values: new Float32Array([1, 2, 3]) }, { stream });
 * // the same over device arrays you keep: borrowed, kept alive until the matrix is closed
 * using offsets = DeviceBuffer.from(new Int32Array([0, 2, 3]));
 * using indices = DeviceBuffer.from(new Int32Array([0, 2, 1]));
 * using values = DeviceBuffer.from(new Float32Array([1, 2, 3]));
 * using b = SparseMatrix.csr({ rows: 2, cols: 3, rowOffsets: offsets, colIndices: indices, values, dtype: 'f32' });
 * console.log(a.nnz, b.toHost().values); // 3 Float32Array [1, 2, 3]
 * ```
 */
export class SparseMatrix extends Resource {
  /** The storage format: 'csr', 'coo' or 'csc'. */
  readonly format: SparseFormat;
  /** Number of rows of the matrix. */
  readonly rows: number;
  /** Number of columns of the matrix. */
  readonly cols: number;
  /** Stored elements. */
  readonly nnz: number;
  /** The type of the stored values. */
  readonly dtype: SparseValueType;
  /** The type of the offsets and indices: 'i32' or 'i64'. */
  readonly indexType: SparseIndexType;
  /** The first row/column index: 0 (C style) or 1 (Fortran style). */
  readonly indexBase: 0 | 1;
  /** The arrays: CSR [rowOffsets, colIndices], COO [rowIndices, colIndices], CSC [colOffsets, rowIndices]; then values. */
  private readonly arrays: readonly [ResolvedOperand, ResolvedOperand, ResolvedOperand];
  /** The cusparseSpMatDescr_t. @internal */
  readonly descriptor: cusparse.cusparseSpMatDescr_t;

  /** @internal use csr / coo / csc / fromHost */
  constructor(seal: Sealed, format: SparseFormat, p: CheckedParts, descriptor: cusparse.cusparseSpMatDescr_t, owned: readonly DeviceBuffer[]) {
    checkSealed(seal, 'SparseMatrix', 'SparseMatrix.csr(), coo(), csc() or fromHost()');
    super(
      `SparseMatrix (${format.toUpperCase()})`,
      () => {
        try {
          loadCusparse().cusparseDestroySpMat(descriptor);
        } finally {
          for (const b of owned) b.close();
        }
      },
      owned.length > 0 ? [] : [ownerOf(p.first.buffer), ownerOf(p.second.buffer), ownerOf(p.values.buffer)],
    );
    this.format = format;
    this.rows = p.rows;
    this.cols = p.cols;
    this.nnz = p.nnz;
    this.dtype = p.dtype;
    this.indexType = p.indexType;
    this.indexBase = p.indexBase;
    this.arrays = [p.first, p.second, p.values];
    this.descriptor = descriptor;
    lockFields(this as SparseMatrix, ['format', 'rows', 'cols', 'nnz', 'dtype', 'indexType', 'indexBase', 'descriptor']);
  }

  private static make(where: string, format: SparseFormat, parts: SparseParts): SparseMatrix {
    const p = checkParts(where, format, parts);
    return new SparseMatrix(SEALED, format, p, createDescriptor(format, p), []);
  }

  /**
   * A CSR matrix over device arrays `rowOffsets` (rows + 1), `colIndices` and `values` (nnz each).
   * @param parts `rows` and `cols`, `rowOffsets` (rows + 1 elements) and `colIndices` (nnz) (DeviceBuffers typed by `dtype`/`indexType`, or 1-D contiguous
   * views of device memory, borrowed and kept alive until close), `values`, and optional `nnz` (default: what values holds), `dtype` (required for a
   * DeviceBuffer values), `indexType` ('i32' or 'i64'; default the views', else 'i32') and `indexBase` (0 default, or 1).
   */
  static csr(parts: SparseParts): SparseMatrix {
    return SparseMatrix.make('SparseMatrix.csr', 'csr', parts);
  }

  /**
   * A COO matrix over device arrays `rowIndices`, `colIndices` and `values` (nnz each).
   * @param parts `rows` and `cols`, `rowIndices` and `colIndices` (nnz each) (DeviceBuffers typed by `dtype`/`indexType`, or 1-D contiguous views of device
   * memory, borrowed and kept alive until close), `values`, and optional `nnz` (default: what values holds), `dtype` (required for a DeviceBuffer values),
   * `indexType` ('i32' or 'i64'; default the views', else 'i32') and `indexBase` (0 default, or 1).
   */
  static coo(parts: SparseParts): SparseMatrix {
    return SparseMatrix.make('SparseMatrix.coo', 'coo', parts);
  }

  /**
   * A CSC matrix over device arrays `colOffsets` (cols + 1), `rowIndices` and `values` (nnz each).
   * @param parts `rows` and `cols`, `colOffsets` (cols + 1 elements) and `rowIndices` (nnz) (DeviceBuffers typed by `dtype`/`indexType`, or 1-D contiguous
   * views of device memory, borrowed and kept alive until close), `values`, and optional `nnz` (default: what values holds), `dtype` (required for a
   * DeviceBuffer values), `indexType` ('i32' or 'i64'; default the views', else 'i32') and `indexBase` (0 default, or 1).
   */
  static csc(parts: SparseParts): SparseMatrix {
    return SparseMatrix.make('SparseMatrix.csc', 'csc', parts);
  }

  /**
   * Uploads host arrays (Int32Array or BigInt64Array indices, Float32Array or Float64Array values) to
   * new device buffers (on `options.stream` when given) and makes a `format` matrix owning them.
   * @param format The storage format to make: 'csr', 'coo' or 'csc'; it says which index arrays `parts` holds.
   * @param parts Host arrays: `rows`, `cols`, the format's index arrays (Int32Array for an 'i32' matrix, BigInt64Array for 'i64'), `values` (Float32Array or
   * Float64Array; complex interleaved re, im), optional `dtype` ('c64'/'c128' for complex) and `indexBase` (0 default, or 1).
   * @param options `stream`: the stream the uploads are enqueued on (default: synchronous copies).
   */
  static fromHost(format: SparseFormat, parts: HostSparseParts, options: { stream?: StreamLike } = {}): SparseMatrix {
    const where = 'SparseMatrix.fromHost';
    if (format !== 'csr' && format !== 'coo' && format !== 'csc')
      throw new TypeError(`${where}: format must be 'csr', 'coo' or 'csc', got ${describe(format)}`);
    if (typeof parts !== 'object' || parts === null) throw new TypeError(`${where}: parts must be an object, got ${describe(parts)}`);
    checkKeys(where, parts, ['rows', 'cols', 'rowOffsets', 'colOffsets', 'rowIndices', 'colIndices', 'values', 'dtype', 'indexBase']);
    if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options must be an object, got ${describe(options)}`);
    checkKeys(where, options, ['stream']);
    checkCount(where, 'rows', parts.rows);
    checkCount(where, 'cols', parts.cols);
    const [firstName, secondName] = LAYOUT[format] as [keyof HostSparseParts, keyof HostSparseParts];
    const first = parts[firstName];
    const second = parts[secondName];
    const values = parts.values;
    if (!(values instanceof Float32Array) && !(values instanceof Float64Array))
      throw new TypeError(`${where}: values must be a Float32Array or Float64Array, got ${describe(values)}`);
    const dtype = parts.dtype ?? (values instanceof Float32Array ? 'f32' : 'f64');
    checkDType(where, 'dtype', dtype, SPARSE_VALUE_TYPES);
    if ((dtype === 'f32' || dtype === 'c64') !== values instanceof Float32Array)
      throw new TypeError(`${where}: dtype '${dtype}' does not match values, a ${values.constructor.name}`);
    const complex = dtype === 'c64' || dtype === 'c128';
    if (complex && values.length % 2 !== 0) throw new RangeError(`${where}: values holds ${values.length} numbers: ${dtype} needs (re, im) pairs`);
    for (const [name, a] of [
      [firstName, first],
      [secondName, second],
    ] as const) {
      if (!(a instanceof Int32Array) && !(a instanceof BigInt64Array))
        throw new TypeError(`${where}: ${name} must be an Int32Array or BigInt64Array, got ${describe(a)}`);
    }
    if (first instanceof Int32Array !== second instanceof Int32Array) throw new TypeError(`${where}: ${firstName} and ${secondName} must have one index type`);
    const indexType: SparseIndexType = first instanceof Int32Array ? 'i32' : 'i64';
    const upload = { stream: options.stream };
    const owned: DeviceBuffer[] = [];
    try {
      for (const a of [first, second, values] as ArrayBufferView[])
        owned.push(a.byteLength > 0 ? DeviceBuffer.from(a, upload) : DeviceBuffer.alloc(DTYPE_SIZES[dtype], upload));
      const nnz = values.length / (complex ? 2 : 1);
      const device: SparseParts = { rows: parts.rows, cols: parts.cols, values: owned[2], dtype, indexType, nnz, indexBase: parts.indexBase };
      (device as unknown as Record<string, unknown>)[firstName] = owned[0];
      (device as unknown as Record<string, unknown>)[secondName] = owned[1];
      const p = checkParts(where, format, device);
      return new SparseMatrix(SEALED, format, p, createDescriptor(format, p), owned);
    } catch (e) {
      for (const b of owned) b.close();
      throw e;
    }
  }

  /** The device arrays, in the format's order: [offsets or row indices, indices, values]. */
  get buffers(): readonly [DeviceBuffer, DeviceBuffer, DeviceBuffer] {
    this.assertOpen('SparseMatrix.buffers');
    return [this.arrays[0].buffer, this.arrays[1].buffer, this.arrays[2].buffer];
  }

  /** The context the arrays belong to. */
  get context(): DeviceBuffer['context'] {
    return this.arrays[2].buffer.context;
  }

  /** Throws a ClosedObjectError naming `where` once closed (or once a buffer it reads was closed). @internal */
  check(where: string): void {
    this.assertOpen(where);
    for (const a of this.arrays) if (a.buffer.closed) throw new TypeError(`${where}: a buffer of the ${this.format.toUpperCase()} matrix was closed`);
  }

  /**
   * Copies the three arrays to new host arrays (synchronously): Int32Array or BigInt64Array indices,
   * Float32Array/Float64Array values (complex interleaved).
   */
  toHost(): { first: Int32Array | BigInt64Array; second: Int32Array | BigInt64Array; values: Float32Array | Float64Array } {
    this.check('SparseMatrix.toHost');
    const Index = this.indexType === 'i32' ? Int32Array : BigInt64Array;
    const Value = this.dtype === 'f32' || this.dtype === 'c64' ? Float32Array : Float64Array;
    const perValue = this.dtype === 'c64' || this.dtype === 'c128' ? 2 : 1;
    const read = <T extends ArrayBufferView>(r: ResolvedOperand, out: T): T => {
      if (out.byteLength > 0) r.buffer.copyTo(out, { offset: r.address - r.buffer.ptr, byteLength: out.byteLength });
      return out;
    };
    const n1 = firstLength(this.format, this.rows, this.cols, this.nnz);
    return {
      first: read(this.arrays[0], new Index(n1)),
      second: read(this.arrays[1], new Index(this.nnz)),
      values: read(this.arrays[2], new Value(this.nnz * perValue)),
    };
  }

  toString(): string {
    return `SparseMatrix(${this.format.toUpperCase()}, ${this.rows}×${this.cols}, nnz ${this.nnz}, ${this.dtype}, ${this.indexType})`;
  }
}

/** A dense operand resolved for cuSPARSE: a vector (size) or a matrix (rows, cols, ld, order). @internal */
export interface DenseShape {
  readonly r: ResolvedOperand;
  readonly rows: number;
  readonly cols: number;
  readonly ld: number;
  readonly order: number;
}

/** A 1-D contiguous operand of `dtype` (a DeviceBuffer counts whole elements). @internal */
export function denseVector(where: string, name: string, v: unknown, dtype: DType, size: number): ResolvedOperand {
  const r = operand(where, name, v, dtype);
  if (r.shape.length !== 1 || (r.shape[0] > 1 && r.strides[0] !== 1))
    throw new TypeError(`${where}: ${name} must be a 1-D contiguous vector, got shape [${r.shape}] strides [${r.strides}]`);
  if (r.shape[0] < size) throw new RangeError(`${where}: ${name} holds ${r.shape[0]} elements, needs ${size}`);
  return r;
}

/** A 2-D view, row-major (strides [ld, 1]) or column-major (strides [1, ld]). @internal */
export function denseMatrix(where: string, name: string, v: unknown, dtype: DType): DenseShape {
  if (!(v instanceof StridedView)) throw new TypeError(`${where}: ${name} must be a 2-D StridedView (row- or column-major), got ${describe(v)}`);
  const r = operand(where, name, v, dtype);
  if (r.shape.length !== 2) throw new TypeError(`${where}: ${name} must be 2-D, got shape [${r.shape}]`);
  const [rows, cols] = r.shape;
  const [s0, s1] = r.strides;
  if (s1 === 1 && s0 >= Math.max(1, cols)) return { r, rows, cols, ld: Math.max(1, s0), order: CUSPARSE_ORDER.row };
  if (s0 === 1 && s1 >= Math.max(1, rows)) return { r, rows, cols, ld: Math.max(1, s1), order: CUSPARSE_ORDER.col };
  throw new TypeError(`${where}: ${name} must be row-major (strides [ld ≥ cols, 1]) or column-major (strides [1, ld ≥ rows]), got strides [${r.strides}]`);
}

/** A dense vector descriptor (cusparseCreateDnVec) over a 1-D contiguous operand; kept alive until close. */
export class DenseVector extends Resource {
  /** Length of the vector, in elements. */
  readonly size: number;
  /** The element type. */
  readonly dtype: SparseValueType;
  /** @internal */
  readonly descriptor: cusparse.cusparseDnVecDescr_t;
  /** @internal */
  readonly operand: ResolvedOperand;

  private constructor(seal: Sealed, r: ResolvedOperand, size: number, dtype: SparseValueType, descriptor: cusparse.cusparseDnVecDescr_t) {
    checkSealed(seal, 'DenseVector', 'DenseVector.of()');
    super('DenseVector', () => loadCusparse().cusparseDestroyDnVec(descriptor), [ownerOf(r.buffer)]);
    this.size = size;
    this.dtype = dtype;
    this.descriptor = descriptor;
    this.operand = Object.freeze({ ...r });
    lockFields(this as DenseVector, ['size', 'dtype', 'descriptor', 'operand']);
  }

  /**
   * A descriptor over `v` (a 1-D StridedView, or a DeviceBuffer with `dtype`): `size` elements (default all).
   * @param v The vector's device memory: a 1-D contiguous StridedView, or a DeviceBuffer (read with `options.dtype`); kept alive until the descriptor is
   * closed.
   * @param options `dtype` (f32, f64, c64 or c128: required for a DeviceBuffer, default a view's own) and `size` (elements, never bytes; default all that v
   * holds).
   */
  static of(v: DeviceBuffer | StridedView, options: { dtype?: SparseValueType; size?: number } = {}): DenseVector {
    const where = 'DenseVector.of';
    if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options must be an object, got ${describe(options)}`);
    checkKeys(where, options, ['dtype', 'size']);
    const dtype = checkDType(where, 'dtype', options.dtype ?? viewDType(v), SPARSE_VALUE_TYPES);
    const size = options.size === undefined ? operand(where, 'v', v, dtype).shape[0] : checkCount(where, 'size', options.size);
    const r = denseVector(where, 'v', v, dtype, size);
    // size counts elements (cusparseCreateDnVec's unit), never bytes
    return new DenseVector(SEALED, r, size, dtype, loadCusparse().cusparseCreateDnVec(size, r.address, cudaDataType(where, dtype)));
  }
}

/** A dense matrix descriptor (cusparseCreateDnMat) over a row- or column-major 2-D view; kept alive until close. */
export class DenseMatrix extends Resource {
  /** Number of rows of the matrix. */
  readonly rows: number;
  /** Number of columns of the matrix. */
  readonly cols: number;
  /** The element type. */
  readonly dtype: SparseValueType;
  /** 'row' or 'col' (the view's layout). */
  readonly order: 'row' | 'col';
  /** @internal */
  readonly descriptor: cusparse.cusparseDnMatDescr_t;
  /** @internal */
  readonly shape: DenseShape;

  private constructor(seal: Sealed, s: DenseShape, dtype: SparseValueType, descriptor: cusparse.cusparseDnMatDescr_t) {
    checkSealed(seal, 'DenseMatrix', 'DenseMatrix.of()');
    super('DenseMatrix', () => loadCusparse().cusparseDestroyDnMat(descriptor), [ownerOf(s.r.buffer)]);
    this.rows = s.rows;
    this.cols = s.cols;
    this.dtype = dtype;
    this.order = s.order === CUSPARSE_ORDER.row ? 'row' : 'col';
    this.descriptor = descriptor;
    this.shape = Object.freeze({ ...s, r: Object.freeze({ ...s.r }) });
    lockFields(this as DenseMatrix, ['rows', 'cols', 'dtype', 'order', 'descriptor', 'shape']);
  }

  /**
   * A descriptor over the 2-D view `v` (its dtype one of f32, f64, c64, c128).
   * @param v A 2-D view of device memory, row-major (strides [ld, 1]) or column-major (strides [1, ld]), of dtype f32, f64, c64 or c128; kept alive until the
   * descriptor is closed.
   */
  static of(v: StridedView): DenseMatrix {
    const where = 'DenseMatrix.of';
    const dtype = checkDType(where, 'dtype', viewDType(v), SPARSE_VALUE_TYPES);
    const s = denseMatrix(where, 'v', v, dtype);
    return new DenseMatrix(SEALED, s, dtype, loadCusparse().cusparseCreateDnMat(s.rows, s.cols, s.ld, s.r.address, cudaDataType(where, dtype), s.order));
  }
}
