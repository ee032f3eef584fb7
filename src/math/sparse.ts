// Sparse: a cuSPARSE handle bound to a Stream, running the generic API's products on SparseMatrix
// operands: SpMV (y = α op(A) x + β y), SpMM (C = α op(A) op(B) + β C) and SpGEMM (C = α A B, the
// result allocated and returned). Buffer sizing is inside: each product's workspace comes from the
// caching allocator on the handle's stream and is kept per operation shape, so a repeated call makes
// one cuSPARSE call. Dense operands are DenseVector/DenseMatrix descriptors or plain operands, for
// which the handle keeps descriptors: vectors by dtype, size and address (a few per shape, the oldest
// re-pointed past that), matrices one per role and shape, re-pointed (cusparseDn*SetValues). spmv keeps
// its last two calls as resolved, so a loop (ping-pong included) costs checks and the one cuSPARSE call.
// Scalars are JS numbers (complex as { re, im } / [re, im]) boxed for the host pointer mode.
import { loadCusparse, type cusparse } from '../releases';
import { checkKeys, describe } from '../describe';
import * as drv from '../driver';
import { DeviceBuffer } from '../memory/device-buffer';
import { DTYPE_SIZES } from '../memory/strided-view';
import type { StreamLike } from '../stream';
import type { Context } from '../context';
import { ScalarBox, StreamBoundResource, createStream, cudaDataType, resolveStream, type Operand, type Scalar } from './common';
import { CUSPARSE_INDEX_TYPE, DenseMatrix, DenseVector, SparseMatrix, denseMatrix, denseVector, type DenseShape, type SparseValueType } from './sparse-matrix';
import { SEALED, type Sealed, checkSealed } from '../sealed';

/** A sparse operand's operation: 'N' as is, 'T' transposed, 'C' conjugate-transposed. */
export type SparseOp = 'N' | 'T' | 'C';
const OPS: Readonly<Record<SparseOp, number>> = Object.freeze({ N: 0, T: 1, C: 2 });

/** Options of {@link Sparse.spmv}. */
export interface SpmvOptions {
  /** Default 1. */
  alpha?: Scalar;
  /** Default 0 (y is then only written). */
  beta?: Scalar;
  /** Operation on A (default 'N'). */
  op?: SparseOp;
  /** cusparseSpMVAlg_t (default CUSPARSE_SPMV_ALG_DEFAULT, 0). */
  algorithm?: number;
}
/** Options of {@link Sparse.spmm}. */
export interface SpmmOptions {
  /** The factor α of op(A)·op(B) (default 1); a complex for complex matrices. */
  alpha?: Scalar;
  /** The factor β of the old C (default 0: C is then only written). */
  beta?: Scalar;
  /** Operation on A (default 'N'). */
  opA?: SparseOp;
  /** Operation on B (default 'N'). */
  opB?: SparseOp;
  /** cusparseSpMMAlg_t (default CUSPARSE_SPMM_ALG_DEFAULT, 0). */
  algorithm?: number;
}
/** Options of {@link Sparse.spgemm}. */
export interface SpgemmOptions {
  /** The factor α of A·B (default 1); a complex for complex matrices. */
  alpha?: Scalar;
  /** cusparseSpGEMMAlg_t (default CUSPARSE_SPGEMM_DEFAULT, 0). */
  algorithm?: number;
}

/** A cached dense descriptor and the address it points at now. */
interface CachedDense {
  readonly descriptor: number;
  address: number;
}

/**
 * A dense vector operand as a call resolved it: its descriptor, the cache entry that descriptor came
 * from (undefined for a DenseVector, which brings its own), the buffer read or written and the address.
 */
interface ResolvedVector {
  readonly descriptor: cusparse.cusparseDnVecDescr_t;
  readonly entry: CachedDense | undefined;
  readonly buffer: DeviceBuffer;
  /** Bytes from the buffer's address to the vector's. */
  readonly offset: number;
  readonly address: number;
}

/** An spmv as a recent call resolved it: the operand objects it was made for, then what cuSPARSE gets. */
interface SpmvCall {
  readonly a: SparseMatrix;
  readonly x: unknown;
  readonly y: unknown;
  readonly op: number;
  readonly alg: number;
  readonly rx: ResolvedVector;
  readonly ry: ResolvedVector;
  readonly computeType: number;
  /** The workspace address (0: none). */
  readonly work: number;
  /** The typed layer's cusparseSpMV, looked up once. */
  readonly run: typeof cusparse.cusparseSpMV;
}

/**
 * True when operand `v` (the very object `r` was resolved from) still resolves to it: an open
 * DenseVector over an open buffer, or a buffer still at the address the cached descriptor points at
 * (the entry may have been re-pointed for another address since). A closed buffer throws, as the
 * first call would have (launchAddress: ptr's check less the context's, which the call checked).
 */
function stillCurrent(r: ResolvedVector, v: unknown): boolean {
  if (r.entry === undefined) return !(v as DenseVector).closed && !r.buffer.closed;
  return r.entry.address === r.address && r.buffer.launchAddress() + r.offset === r.address;
}

/** How many workspaces and descriptors a handle keeps before dropping the oldest. */
const CACHE_LIMIT = 64;
/** How many vector descriptors of one dtype and size a handle keeps, by address, before re-pointing the oldest. */
const ADDRESSES_PER_SHAPE = 8;
/** The options of a call passing none (no object made per call). */
const NO_OPTIONS: Readonly<Record<string, undefined>> = Object.freeze({});
const SPMV_KEYS = ['alpha', 'beta', 'op', 'algorithm'];
// Imported names the spmv hot path uses, held in module constants (an imported name is a getter call
// per use in tsx's and esbuild's CommonJS; see src/launch.ts).
const bindHinted = drv.bindHinted;

function opArg(where: string, name: string, v: unknown): number {
  if (v === undefined) return 0;
  // own keys only: OPS['toString'] is Object.prototype's function, not an op
  const code = typeof v === 'string' && Object.hasOwn(OPS, v) ? OPS[v as SparseOp] : undefined;
  if (code === undefined) throw new TypeError(`${where}: ${name} must be 'N', 'T' or 'C', got ${describe(v)}`);
  return code;
}

function algorithmArg(where: string, v: unknown): number {
  if (v === undefined) return 0;
  if (typeof v !== 'number' || (v | 0) !== v || v < 0)
    throw new TypeError(`${where}: algorithm must be a cuSPARSE algorithm enum value (integer ≥ 0), got ${describe(v)}`);
  return v;
}

function optionsArg<T extends object>(where: string, v: T | undefined, keys: string[]): Partial<T> {
  if (v === undefined) return {};
  if (typeof v !== 'object' || v === null) throw new TypeError(`${where}: options must be an object, got ${describe(v)}`);
  checkKeys(where, v, keys);
  return v;
}

function sparseArg(where: string, name: string, v: unknown): SparseMatrix {
  if (!(v instanceof SparseMatrix)) throw new TypeError(`${where}: ${name} must be a SparseMatrix, got ${describe(v)}`);
  v.check(where);
  return v;
}

/**
 * A cuSPARSE handle on a Stream (default: the current context's legacy default stream). Products are
 * enqueued on the stream: synchronize it (or await `stream.synchronized()`) before reading results.
 * @example
 * ```ts
 * import { DeviceBuffer, Sparse, SparseMatrix, Stream, StridedView } from 'cuda-ts/objects';
 *
 * using stream = Stream.create();
 * using sparse = Sparse.create({ stream }); // loads cuSPARSE
 * using a = SparseMatrix.fromHost('csr', { rows: 2, cols: 3, rowOffsets: new Int32Array([0, 2, 3]),
 *   colIndices: new Int32Array([0, 2, 1]), values: new Float32Array([1, 2, 3]) }, { stream }); // [[1, 0, 2], [0, 3, 0]]
 * using xBuf = DeviceBuffer.from(new Float32Array([1, 1, 1]), { stream });
 * using yBuf = DeviceBuffer.alloc(2 * 4, { stream });
 * const x = StridedView.of(xBuf, { dtype: 'f32', shape: [3] });
 * const y = StridedView.of(yBuf, { dtype: 'f32', shape: [2] });
 * sparse.spmv(a, x, y); // y = a·x, enqueued; the workspace is sized and kept inside
 * console.log(yBuf.toArray(Float32Array, { stream })); // Float32Array [3, 3]
 * ```
 */
export class Sparse extends StreamBoundResource {
  private readonly handle: cusparse.cusparseHandle_t;
  private readonly alphaBox = new ScalarBox();
  private readonly betaBox = new ScalarBox();
  /** Workspaces by operation shape. */
  private readonly workspaces: Map<string, DeviceBuffer | undefined>;
  /** Descriptors of plain dense vectors: by dtype and size, then by address (ping-pong operands keep one each). */
  private readonly vectors: Map<string, Map<number, CachedDense>>;
  /** Descriptors of plain dense matrices by role and shape. */
  private readonly matrices: Map<string, CachedDense>;
  /** The last two spmv calls as resolved (a loop alternating two operand sets finds both). */
  private lastSpmv: SpmvCall | undefined;
  private prevSpmv: SpmvCall | undefined;

  private constructor(seal: Sealed, handle: cusparse.cusparseHandle_t, stream: ReturnType<typeof resolveStream>) {
    checkSealed(seal, 'Sparse', 'Sparse.create()');
    const vectors = new Map<string, Map<number, CachedDense>>();
    const matrices = new Map<string, CachedDense>();
    const workspaces = new Map<string, DeviceBuffer | undefined>();
    super(
      'Sparse',
      () => {
        const api = loadCusparse();
        for (const w of workspaces.values()) w?.close();
        for (const shape of vectors.values()) for (const v of shape.values()) api.cusparseDestroyDnVec(v.descriptor as cusparse.cusparseDnVecDescr_t);
        for (const m of matrices.values()) api.cusparseDestroyDnMat(m.descriptor as cusparse.cusparseDnMatDescr_t);
        if (stream.context.bindForFree()) api.cusparseDestroy(handle);
      },
      stream,
    );
    this.handle = handle;
    this.vectors = vectors;
    this.matrices = matrices;
    this.workspaces = workspaces;
  }

  /**
   * A handle on `options.stream` (default: the legacy default stream of the current context).
   * @param options `stream`: the stream products are enqueued on (default: the current context's legacy default stream).
   */
  static create(options: { stream?: StreamLike } = {}): Sparse {
    const stream = createStream('Sparse.create', options);
    const api = loadCusparse();
    const h = api.cusparseCreate();
    try {
      api.cusparseSetStream(h, stream.handle as cusparse.cudaStream_t);
    } catch (e) {
      api.cusparseDestroy(h);
      throw e;
    }
    return new Sparse(SEALED, h, stream);
  }

  /**
   * Enqueues later products on `stream` (of the handle's context); cached workspaces are released on the old one.
   * @param stream The stream later products enqueue on: a Stream (or stream-protocol object) of the handle's context.
   */
  setStream(stream: StreamLike): this {
    this.checkUsable('Sparse.setStream');
    const s = resolveStream('Sparse.setStream', stream);
    if (s === this.stream) return this;
    this.adoptStream(s);
    this.context.bind();
    loadCusparse().cusparseSetStream(this.handle, s.handle as cusparse.cudaStream_t);
    for (const w of this.workspaces.values()) w?.close();
    this.workspaces.clear();
    this.forgetCalls();
    return this;
  }

  /** Drops the resolved spmv calls (they may name a freed workspace or descriptor). */
  private forgetCalls(): void {
    this.lastSpmv = undefined;
    this.prevSpmv = undefined;
  }

  /** The workspace of `key`, sized by `size()` on first use (bytes; none when 0). */
  private workspace(key: string, size: () => number): DeviceBuffer | undefined {
    let w = this.workspaces.get(key);
    if (w === undefined && !this.workspaces.has(key)) {
      const bytes = size();
      w = bytes > 0 ? DeviceBuffer.alloc(bytes, { stream: this.stream }) : undefined;
      if (this.workspaces.size >= CACHE_LIMIT) this.evict(this.workspaces, (b) => b?.close());
      this.workspaces.set(key, w);
    }
    return w;
  }

  private evict<V>(map: Map<string, V>, free: (v: V) => void): void {
    this.forgetCalls();
    const first = map.keys().next().value as string;
    free(map.get(first) as V);
    map.delete(first);
  }

  /** TypeError naming `name` unless `context` (its buffer's) is the handle's. */
  private sameContext(where: string, name: string, context: Context): void {
    if (context !== this.context) throw new TypeError(`${where}: ${name} belongs to another context than the handle`);
  }

  /**
   * The descriptor of a DenseVector, or the cached one of a plain operand's dtype, size and address;
   * past ADDRESSES_PER_SHAPE addresses, the oldest of that shape is re-pointed (cusparseDnVecSetValues).
   */
  private vector(where: string, name: string, v: unknown, dtype: SparseValueType, size: number): ResolvedVector {
    if (v instanceof DenseVector) {
      if (v.closed) throw new TypeError(`${where}: ${name} is a closed DenseVector`);
      if (v.operand.buffer.closed) throw new TypeError(`${where}: the buffer under DenseVector ${name} was closed`);
      if (v.dtype !== dtype) throw new TypeError(`${where}: ${name} holds ${v.dtype}, the matrix ${dtype}`);
      this.sameContext(where, name, v.operand.buffer.context);
      if (v.size !== size) throw new RangeError(`${where}: ${name} has ${v.size} elements, needs ${size}`);
      const r = v.operand;
      return { descriptor: v.descriptor, entry: undefined, buffer: r.buffer, offset: r.address - r.buffer.ptr, address: r.address };
    }
    const r = denseVector(where, name, v, dtype, size);
    this.sameContext(where, name, r.buffer.context);
    const api = loadCusparse();
    const key = `${dtype}|${size}`;
    let shape = this.vectors.get(key);
    if (shape === undefined) {
      if (this.vectors.size >= CACHE_LIMIT)
        this.evict(this.vectors, (s) => s.forEach((d) => api.cusparseDestroyDnVec(d.descriptor as cusparse.cusparseDnVecDescr_t)));
      shape = new Map();
      this.vectors.set(key, shape);
    }
    let c = shape.get(r.address);
    if (c === undefined) {
      if (shape.size >= ADDRESSES_PER_SHAPE) {
        // re-point the oldest (a resolved call naming it sees its address change)
        const oldest = shape.keys().next().value as number;
        c = shape.get(oldest)!;
        shape.delete(oldest);
        api.cusparseDnVecSetValues(c.descriptor as cusparse.cusparseDnVecDescr_t, r.address);
        c.address = r.address;
      } else {
        c = { descriptor: api.cusparseCreateDnVec(size, r.address, cudaDataType(where, dtype)), address: r.address };
      }
      shape.set(r.address, c);
    }
    return { descriptor: c.descriptor as cusparse.cusparseDnVecDescr_t, entry: c, buffer: r.buffer, offset: r.address - r.buffer.ptr, address: r.address };
  }

  /** The descriptor of a DenseMatrix, or the cached one re-pointed at a plain 2-D view; with its shape. */
  private matrix(where: string, name: string, v: unknown, dtype: SparseValueType): { descriptor: number; rows: number; cols: number } {
    if (v instanceof DenseMatrix) {
      if (v.closed) throw new TypeError(`${where}: ${name} is a closed DenseMatrix`);
      if (v.dtype !== dtype) throw new TypeError(`${where}: ${name} holds ${v.dtype}, the matrix ${dtype}`);
      this.sameContext(where, name, v.shape.r.buffer.context);
      return { descriptor: v.descriptor, rows: v.rows, cols: v.cols };
    }
    const s: DenseShape = denseMatrix(where, name, v, dtype);
    this.sameContext(where, name, s.r.buffer.context);
    const key = `${name}|${dtype}|${s.rows}|${s.cols}|${s.ld}|${s.order}`;
    const api = loadCusparse();
    let c = this.matrices.get(key);
    if (c === undefined) {
      if (this.matrices.size >= CACHE_LIMIT) this.evict(this.matrices, (d) => api.cusparseDestroyDnMat(d.descriptor as cusparse.cusparseDnMatDescr_t));
      c = { descriptor: api.cusparseCreateDnMat(s.rows, s.cols, s.ld, s.r.address, cudaDataType(where, dtype), s.order), address: s.r.address };
      this.matrices.set(key, c);
    } else if (c.address !== s.r.address) {
      api.cusparseDnMatSetValues(c.descriptor as cusparse.cusparseDnMatDescr_t, s.r.address);
      c.address = s.r.address;
    }
    return { descriptor: c.descriptor, rows: s.rows, cols: s.cols };
  }

  /**
   * y = α op(A) x + β y (cusparseSpMV), enqueued on the handle's stream. x and y are DenseVectors or
   * 1-D contiguous operands of A's dtype (a DeviceBuffer counts whole elements; only the first
   * op(A).cols / op(A).rows are used).
   * @param a The sparse matrix A (CSR, COO or CSC), open, with its buffers open.
   * @param x The input vector: a DenseVector, or a 1-D contiguous view (or DeviceBuffer, whole elements) of A's dtype holding at least op(A)'s column count.
   * @param y The output vector (read too when beta ≠ 0), as x, holding at least op(A)'s row count.
   * @param options `alpha` (default 1), `beta` (default 0: y is only written), `op` ('N' default, 'T' or 'C': the operation on A) and `algorithm` (a
   * cusparseSpMVAlg_t; default 0).
   */
  spmv(a: SparseMatrix, x: Operand | DenseVector, y: Operand | DenseVector, options?: SpmvOptions): void {
    const where = 'Sparse.spmv';
    this.checkUsable(where);
    const o = options === undefined ? (NO_OPTIONS as SpmvOptions) : optionsArg(where, options, SPMV_KEYS);
    const op = opArg(where, 'op', o.op);
    const alg = algorithmArg(where, o.algorithm);
    // a loop repeats the operands of one of the last two calls: their descriptors, workspace and function as resolved
    let call = this.lastSpmv;
    if (call === undefined || call.a !== a || call.x !== x || call.y !== y || call.op !== op || call.alg !== alg) {
      const prev = this.prevSpmv;
      call = prev !== undefined && prev.a === a && prev.x === x && prev.y === y && prev.op === op && prev.alg === alg ? prev : undefined;
    }
    if (call !== undefined) {
      a.check(where);
      if (!stillCurrent(call.rx, x) || !stillCurrent(call.ry, y)) call = undefined;
    }
    const m = call === undefined ? sparseArg(where, 'a', a) : a;
    if (call === undefined) this.sameContext(where, 'a', m.context);
    const alpha = this.alphaBox.set(where, 'alpha', m.dtype, o.alpha ?? 1);
    const beta = this.betaBox.set(where, 'beta', m.dtype, o.beta ?? 0);
    if (call === undefined) call = this.resolveSpmv(where, m, x, y, op, alg, alpha, beta);
    else if (call !== this.lastSpmv) {
      this.prevSpmv = this.lastSpmv;
      this.lastSpmv = call;
    }
    const hinted = this.enter();
    try {
      call.run(this.handle, op, alpha, m.descriptor, call.rx.descriptor, beta, call.ry.descriptor, call.computeType, alg, call.work);
    } catch (e) {
      if (!hinted || !this.rebound()) throw e;
      call.run(this.handle, op, alpha, m.descriptor, call.rx.descriptor, beta, call.ry.descriptor, call.computeType, alg, call.work);
    }
  }

  /** A new spmv's descriptors and workspace (sized with the boxed scalars), kept as the last call. */
  private resolveSpmv(
    where: string,
    m: SparseMatrix,
    x: unknown,
    y: unknown,
    op: number,
    alg: number,
    alpha: ArrayBufferView,
    beta: ArrayBufferView,
  ): SpmvCall {
    const dtype = m.dtype;
    const rx = this.vector(where, 'x', x, dtype, op === 0 ? m.cols : m.rows);
    const ry = this.vector(where, 'y', y, dtype, op === 0 ? m.rows : m.cols);
    const api = loadCusparse();
    const computeType = cudaDataType(where, dtype);
    this.context.bind();
    const key = `mv|${m.format}|${m.rows}|${m.cols}|${m.nnz}|${m.indexType}|${dtype}|${op}|${alg}`;
    const h = this.handle;
    const work = this.workspace(key, () => api.cusparseSpMV_bufferSize(h, op, alpha, m.descriptor, rx.descriptor, beta, ry.descriptor, computeType, alg));
    const call: SpmvCall = { a: m, x, y, op, alg, rx, ry, computeType, work: work === undefined ? 0 : work.ptr, run: api.cusparseSpMV };
    this.prevSpmv = this.lastSpmv;
    this.lastSpmv = call;
    return call;
  }

  /**
   * Makes the handle's context current. On a created stream the door's last bind is trusted without
   * asking the driver (true returned): a launch into that stream under another context fails and
   * enqueues nothing, and {@link Sparse.rebound} binds for real before the one retry. On a default
   * stream a wrong context would run the work there, so those always bind for real.
   */
  private enter(): boolean {
    if (this.stream.handle > 2) {
      bindHinted(this.context);
      return true;
    }
    this.context.bind();
    return false;
  }

  /** After a hinted call failed: true (call again) when another context was current, now bound for real. */
  private rebound(): boolean {
    if (drv.currentContextHandle() === this.context.handle) return false;
    this.context.bind();
    return true;
  }

  /**
   * C = α op(A) op(B) + β C (cusparseSpMM), enqueued on the handle's stream. B and C are DenseMatrices
   * or 2-D views, row-major or column-major (cuSPARSE takes either; both of one order is the usual case).
   * @param a The sparse matrix A (CSR, COO or CSC), open, with its buffers open.
   * @param b The dense right factor: a DenseMatrix, or a 2-D view of A's dtype, row-major or column-major.
   * @param c The dense result (read too when beta ≠ 0): a DenseMatrix or a 2-D view of A's dtype, in either order.
   * @param options `alpha` (default 1), `beta` (default 0: c is only written), `opA`/`opB` ('N' default, 'T' or 'C') and `algorithm` (a cusparseSpMMAlg_t;
   * default 0).
   */
  spmm(a: SparseMatrix, b: Operand | DenseMatrix, c: Operand | DenseMatrix, options?: SpmmOptions): void {
    const where = 'Sparse.spmm';
    this.checkUsable(where);
    const m = sparseArg(where, 'a', a);
    const o = optionsArg(where, options, ['alpha', 'beta', 'opA', 'opB', 'algorithm']);
    const opA = opArg(where, 'opA', o.opA);
    const opB = opArg(where, 'opB', o.opB);
    const alg = algorithmArg(where, o.algorithm);
    const dtype = m.dtype;
    this.sameContext(where, 'a', m.context);
    const alpha = this.alphaBox.set(where, 'alpha', dtype, o.alpha ?? 1);
    const beta = this.betaBox.set(where, 'beta', dtype, o.beta ?? 0);
    const B = this.matrix(where, 'b', b, dtype);
    const C = this.matrix(where, 'c', c, dtype);
    const [am, ak] = opA === 0 ? [m.rows, m.cols] : [m.cols, m.rows];
    const [bk, bn] = opB === 0 ? [B.rows, B.cols] : [B.cols, B.rows];
    if (bk !== ak) throw new RangeError(`${where}: op(A) is ${am}×${ak} but op(B) is ${bk}×${bn}`);
    if (C.rows !== am || C.cols !== bn) throw new RangeError(`${where}: c must be ${am}×${bn}, got ${C.rows}×${C.cols}`);
    const api = loadCusparse();
    const ct = cudaDataType(where, dtype);
    this.context.bind();
    const h = this.handle;
    const Bd = B.descriptor as cusparse.cusparseDnMatDescr_t;
    const Cd = C.descriptor as cusparse.cusparseDnMatDescr_t;
    const key = `mm|${m.format}|${m.rows}|${m.cols}|${m.nnz}|${m.indexType}|${dtype}|${opA}|${opB}|${bn}|${alg}`;
    const work = this.workspace(key, () => api.cusparseSpMM_bufferSize(h, opA, opB, alpha, m.descriptor, Bd, beta, Cd, ct, alg));
    api.cusparseSpMM(h, opA, opB, alpha, m.descriptor, Bd, beta, Cd, ct, alg, work === undefined ? 0 : work.ptr);
  }

  /**
   * C = α A B of two CSR matrices (cusparseSpGEMM: work estimation, compute, copy), returned as a new
   * CSR SparseMatrix owning its buffers (allocated on the handle's stream). Blocks while cuSPARSE
   * learns C's nnz (its compute phase waits for the GPU).
   * @param a The left factor, a CSR matrix.
   * @param b The right factor, a CSR matrix of a's dtype and index type, with as many rows as a has columns.
   * @param options `alpha` (the factor of a·b, default 1) and `algorithm` (a cusparseSpGEMMAlg_t; default 0).
   */
  spgemm(a: SparseMatrix, b: SparseMatrix, options?: SpgemmOptions): SparseMatrix {
    const where = 'Sparse.spgemm';
    this.checkUsable(where);
    const A = sparseArg(where, 'a', a);
    const B = sparseArg(where, 'b', b);
    const o = optionsArg(where, options, ['alpha', 'algorithm']);
    const alg = algorithmArg(where, o.algorithm);
    if (A.format !== 'csr' || B.format !== 'csr')
      throw new TypeError(`${where}: cuSPARSE's SpGEMM takes CSR matrices, got ${A.format.toUpperCase()} × ${B.format.toUpperCase()}`);
    if (A.dtype !== B.dtype) throw new TypeError(`${where}: a holds ${A.dtype}, b ${B.dtype}`);
    if (A.indexType !== B.indexType) throw new TypeError(`${where}: a has ${A.indexType} indices, b ${B.indexType}`);
    if (A.indexBase !== B.indexBase) throw new TypeError(`${where}: a and b have different index bases`);
    if (A.cols !== B.rows) throw new RangeError(`${where}: a is ${A.rows}×${A.cols}, b ${B.rows}×${B.cols}: a.cols must equal b.rows`);
    if (A.context !== this.context || B.context !== this.context) throw new TypeError(`${where}: a and b must belong to the handle's context`);
    const alpha = this.alphaBox.set(where, 'alpha', A.dtype, o.alpha ?? 1);
    const beta = this.betaBox.set(where, 'beta', A.dtype, 0);
    this.context.bind();
    return runSpgemm(this.handle, A, B, alpha, beta, alg, this.stream);
  }

  toString(): string {
    return `Sparse(${this.closed ? 'closed' : String(this.stream)})`;
  }
}

/** The multi-phase SpGEMM: every temporary freed (stream-ordered) whatever happens; C owned by the result. */
function runSpgemm(
  h: cusparse.cusparseHandle_t,
  A: SparseMatrix,
  B: SparseMatrix,
  alpha: ArrayBufferView,
  beta: ArrayBufferView,
  alg: number,
  stream: ReturnType<typeof resolveStream>,
): SparseMatrix {
  const api = loadCusparse();
  const where = 'Sparse.spgemm';
  const ct = cudaDataType(where, A.dtype);
  const it = CUSPARSE_INDEX_TYPE[A.indexType];
  const isz = DTYPE_SIZES[A.indexType];
  const temps: DeviceBuffer[] = [];
  const owned: DeviceBuffer[] = [];
  const alloc = (bytes: number, keep: DeviceBuffer[]): DeviceBuffer => {
    const buf = DeviceBuffer.alloc(Math.max(bytes, 1), { stream });
    keep.push(buf);
    return buf;
  };
  const offsets = alloc((A.rows + 1) * isz, owned);
  const desc = api.cusparseSpGEMM_createDescr();
  let C: cusparse.cusparseSpMatDescr_t | undefined;
  try {
    C = api.cusparseCreateCsr(A.rows, B.cols, 0, offsets.ptr, 0, 0, it, it, A.indexBase, ct);
    const N = 0;
    // each phase: ask the size with a null buffer, then run with a buffer of that size
    const size1 = api.cusparseSpGEMM_workEstimation(h, N, N, alpha, A.descriptor, B.descriptor, beta, C, ct, alg, desc, 0, 0);
    api.cusparseSpGEMM_workEstimation(h, N, N, alpha, A.descriptor, B.descriptor, beta, C, ct, alg, desc, size1, alloc(size1, temps).ptr);
    const size2 = api.cusparseSpGEMM_compute(h, N, N, alpha, A.descriptor, B.descriptor, beta, C, ct, alg, desc, 0, 0);
    api.cusparseSpGEMM_compute(h, N, N, alpha, A.descriptor, B.descriptor, beta, C, ct, alg, desc, size2, alloc(size2, temps).ptr);
    const nnz = Number(api.cusparseSpMatGetSize(C).nnz);
    const cols = alloc(nnz * isz, owned);
    const values = alloc(nnz * DTYPE_SIZES[A.dtype], owned);
    api.cusparseCsrSetPointers(C, offsets.ptr, cols.ptr, values.ptr);
    api.cusparseSpGEMM_copy(h, N, N, alpha, A.descriptor, B.descriptor, beta, C, ct, alg, desc);
    const parts = { rows: A.rows, cols: B.cols, nnz, dtype: A.dtype, indexType: A.indexType, indexBase: A.indexBase } as const;
    const first = { address: offsets.ptr, dtype: A.indexType, shape: [A.rows + 1], strides: [1], buffer: offsets };
    const second = { address: cols.ptr, dtype: A.indexType, shape: [nnz], strides: [1], buffer: cols };
    const vals = { address: values.ptr, dtype: A.dtype, shape: [nnz], strides: [1], buffer: values };
    const result = new SparseMatrix(SEALED, 'csr', { ...parts, first, second, values: vals }, C, owned);
    C = undefined;
    return result;
  } catch (e) {
    if (C !== undefined) api.cusparseDestroySpMat(C);
    for (const b of owned) b.close();
    throw e;
  } finally {
    api.cusparseSpGEMM_destroyDescr(desc);
    for (const b of temps) b.close();
  }
}
