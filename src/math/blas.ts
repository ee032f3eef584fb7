// Blas: a cuBLAS handle bound to a Stream. GEMM on row-major or column-major views (src/math/matrix.ts
// reads the order off the strides and the call is mapped to column-major: no copy), GemmEx with compute
// types, batched and strided-batched GEMM, and the level-1/2 calls people use (axpy, scal, dot, nrm2,
// gemv). Scalars are JS numbers (complex as { re, im } / [re, im]) boxed into host memory: the handle stays
// in host pointer mode except for the device-result forms (dotInto, nrm2Into), which switch it themselves.
// Every argument is checked before cuBLAS is called; cuBLAS's own statuses throw CublasError.
import { loadCublas, type cublas } from '../releases';
import { describe } from '../describe';
import * as drv from '../driver';
import { whenNoHostFuncs } from '../lifecycle';
import { DeviceBuffer } from '../memory/device-buffer';
import type { DType, StridedView } from '../memory/strided-view';
import type { Stream, StreamLike } from '../stream';
import {
  ScalarBox,
  StreamBoundResource,
  checkDType,
  createStream,
  cudaDataType,
  isComplex,
  optionsOf,
  resolveStream,
  type Complex,
  type Operand,
  type Scalar,
} from './common';
import {
  CUBLAS_COMPUTE,
  GEMM_DEFAULT_ALGO,
  GemmCall,
  checkBatches,
  checkComputeType,
  checkIntegerGemm,
  defaultComputeType,
  gemmScaleType,
  isIntegerCompute,
  planGemm,
  type ComputeType,
} from './blas-gemm';
import { MatrixSlot, VectorSlot, checkTranspose, mappedOp, opCode, resolveMatrix, resolveVector, type Transpose } from './matrix';
import { level1Name, LEVEL1_DTYPES, type Level1DType } from './blas-level1';

export type { ComputeType } from './blas-gemm';
import type { BlasOptions, DotOptions, GemmExOptions, GemmOptions, GemvOptions, VectorOptions } from './blas-options';
import { SEALED, type Sealed, checkSealed } from '../sealed';

export type { BlasOptions, DotOptions, GemmExOptions, GemmOptions, GemvOptions, VectorOptions };

const GEMM_KEYS = ['transA', 'transB', 'alpha', 'beta'];
const GEMM_EX_KEYS = [...GEMM_KEYS, 'computeType', 'algo'];
const POINTER_MODE_HOST = 0;
const POINTER_MODE_DEVICE = 1;
/** cublasStatus_t CUBLAS_STATUS_EXECUTION_FAILED: what a launch into a stream of another context reports. */
const EXECUTION_FAILED = 13;
// read once: a namespace member is a getter call per use under some loaders (tsx, esbuild's CommonJS)
const { bindHinted, currentContextHandle } = drv;

/** The options gemmEx and the batched GEMMs share, checked: transposes and algo read once. */
function gemmExOptions(where: string, options: GemmExOptions | undefined): { o: Partial<GemmExOptions>; tA: Transpose; tB: Transpose; algo: number } {
  const o = optionsOf(where, options, GEMM_EX_KEYS);
  return { o, tA: checkTranspose(where, 'transA', o.transA), tB: checkTranspose(where, 'transB', o.transB), algo: checkAlgo(where, o.algo) };
}

/**
 * A cuBLAS handle on one Stream: `using blas = Blas.create({ stream })`, then `blas.gemm(a, b, c)` with
 * 2-D StridedViews. Work is enqueued on the stream (synchronize it before reading results); `dot` and
 * `nrm2` return numbers (`dotAsync`/`nrm2Async` without blocking, `dotInto`/`nrm2Into` into device memory).
 * @example
 * ```ts
 * import { Blas, DeviceBuffer, Stream, matrix } from 'cuda-ts/objects';
 *
 * using stream = Stream.create();
 * using blas = Blas.create({ stream }); // loads cuBLAS
 * using bufA = DeviceBuffer.from(new Float32Array([1, 2, 3, 4, 5, 6])); // 2×3, row-major
 * using bufB = DeviceBuffer.from(new Float32Array([1, 0, 0, 1, 1, 1])); // 3×2
 * using bufC = DeviceBuffer.alloc(2 * 2 * 4, { stream });
 * const a = matrix(bufA, { dtype: 'f32', rows: 2, cols: 3 });
 * const b = matrix(bufB, { dtype: 'f32', rows: 3, cols: 2 });
 * blas.gemm(a, b, matrix(bufC, { dtype: 'f32', rows: 2, cols: 2 })); // c = a·b, enqueued on the stream
 * console.log(bufC.toArray(Float32Array, { stream })); // Float32Array [4, 5, 10, 11]
 * ```
 */
export class Blas extends StreamBoundResource {
  /** The cublasHandle_t, for typed-layer calls beside the object's (keep the pointer mode at host, as found). */
  readonly handle: cublas.cublasHandle_t;
  private readonly api: typeof cublas;
  private pointerMode = POINTER_MODE_HOST;
  private readonly alphaBox = new ScalarBox();
  private readonly betaBox = new ScalarBox();
  private readonly result = new Float64Array(2);
  private readonly result32 = new Float32Array(this.result.buffer, 0, 2);
  private readonly sa = new MatrixSlot();
  private readonly sb = new MatrixSlot();
  private readonly sc = new MatrixSlot();
  private readonly vx = new VectorSlot();
  private readonly vy = new VectorSlot();
  /** conjugate of the dot being made (dotArgs read it once). */
  private conjugate = false;
  private readonly call = new GemmCall();
  /** What gemm resolved last (this.call holds its plan): views, transposes, the typed function (undefined: plan again). */
  private readonly memo: { a: unknown; b: unknown; c: unknown; tA: Transpose; tB: Transpose; real: boolean; fn: TypedGemm | undefined } = {
    a: undefined,
    b: undefined,
    c: undefined,
    tA: 'N',
    tB: 'N',
    real: true,
    fn: undefined,
  };

  private constructor(seal: Sealed, api: typeof cublas, handle: cublas.cublasHandle_t, stream: Stream) {
    checkSealed(seal, 'Blas', 'Blas.create()');
    const context = stream.context;
    super(
      'Blas',
      () =>
        whenNoHostFuncs(() => {
          if (context.bindForFree()) api.cublasDestroy(handle);
        }),
      stream,
    );
    this.api = api;
    this.handle = handle;
  }

  /**
   * A cuBLAS handle on `options.stream` (default: the legacy default stream of the current context). Loads cuBLAS.
   * @param options `stream`: the stream the handle's work is enqueued on (default: the current context's legacy default stream).
   */
  static create(options?: BlasOptions): Blas {
    const stream = createStream('Blas.create', options);
    const api = loadCublas();
    const handle = api.cublasCreate();
    try {
      api.cublasSetStream(handle, stream.handle);
      api.cublasSetPointerMode(handle, POINTER_MODE_HOST);
    } catch (e) {
      api.cublasDestroy(handle);
      throw e;
    }
    return new Blas(SEALED, api, handle, stream);
  }

  /**
   * Enqueues later work on `stream` (of the handle's context); the handle keeps it alive.
   * @param stream The stream later calls enqueue on: a Stream (or stream-protocol object) of the handle's context; the handle keeps it alive.
   */
  setStream(stream: StreamLike): this {
    this.checkUsable('Blas.setStream');
    const s = resolveStream('Blas.setStream', stream);
    if (s.context !== this.context) throw new TypeError(`Blas.setStream: the stream belongs to ${String(s.context)}, the handle to ${String(this.context)}`);
    this.context.bind();
    this.api.cublasSetStream(this.handle, s.handle);
    this.adoptStream(s);
    return this;
  }

  /**
   * Checks the handle, makes its context current and puts it in `mode` pointer mode. With `hinted`, a
   * context the door bound last is trusted without asking the driver (one native call less on the hot
   * path) when the stream is a created one: a launch into it from another context fails cleanly
   * (EXECUTION_FAILED, nothing enqueued) and {@link Blas.staleRetry} binds for real and calls again.
   * On a default stream a wrong context would run the work there, so those always bind for real.
   */
  private enter(where: string, mode = POINTER_MODE_HOST, hinted = false): void {
    this.checkUsable(where);
    if (hinted && this.stream.handle > 2) bindHinted(this.context);
    else this.context.bind();
    if (this.pointerMode !== mode) {
      this.api.cublasSetPointerMode(this.handle, mode);
      this.pointerMode = mode;
    }
  }

  private checkBuffer(where: string, name: string, b: DeviceBuffer | undefined): void {
    if (b !== undefined && b.context !== this.context)
      throw new TypeError(`${where}: ${name} belongs to ${String(b.context)}, the Blas to ${String(this.context)}`);
  }

  /** Resolves c, a and b (a and b preferring c's order where both fit) and checks contexts and dtypes. */
  private resolveGemm(where: string, a: unknown, b: unknown, c: unknown, batched: boolean): void {
    this.memo.fn = undefined; // the slots and this.call are about to change under gemm's memo
    const C = resolveMatrix(where, 'c', c, this.sc, 'row', batched);
    if ((c as StridedView).readOnly) throw new TypeError(`${where}: c is a read-only view`);
    const A = resolveMatrix(where, 'a', a, this.sa, C.order, batched);
    const B = resolveMatrix(where, 'b', b, this.sb, C.order, batched);
    if (A.dtype !== B.dtype) throw new TypeError(`${where}: a holds ${A.dtype} and b ${B.dtype}: they must match`);
    this.checkBuffer(where, 'a', A.buffer);
    this.checkBuffer(where, 'b', B.buffer);
    this.checkBuffer(where, 'c', C.buffer);
  }

  /**
   * c = alpha·op(a)·op(b) + beta·c, enqueued on the stream. a, b, c: 2-D StridedViews [rows, cols] of one
   * dtype, each row-major (strides [ld, 1]) or column-major (strides [1, ld]); f32/f64/c64/c128 call
   * cublas{S,D,C,Z}gemm, f16/bf16 cublasGemmEx with f32 compute. A 'C' transpose needs the operand in c's order.
   * @param a The left factor, a 2-D StridedView [rows, cols] of device memory, row-major (strides [ld, 1]) or column-major (strides [1, ld]); op(a) is m×k.
   * @param b The right factor, a 2-D view of a's dtype in either order; op(b) is k×n.
   * @param c The m×n result (read too when beta ≠ 0), a writable 2-D view of a's dtype in either order.
   * @param options `transA`/`transB` ('N' default, 'T' or 'C': the op applied to a / b), `alpha` (default 1) and `beta` (default 0: c is only written).
   */
  gemm(a: StridedView, b: StridedView, c: StridedView, options?: GemmOptions): this {
    const where = 'Blas.gemm';
    let tA: Transpose = 'N';
    let tB: Transpose = 'N';
    let alphaIn: unknown = 1;
    let betaIn: unknown = 0;
    if (options !== undefined) {
      const o = optionsOf(where, options, GEMM_KEYS);
      tA = checkTranspose(where, 'transA', o.transA);
      tB = checkTranspose(where, 'transB', o.transB);
      alphaIn = o.alpha ?? 1;
      betaIn = o.beta ?? 0;
    }
    // the views of the last call again (immutable, resolved and planned then): only their buffers' life is checked
    const memo = this.memo;
    if (a !== memo.a || b !== memo.b || c !== memo.c || tA !== memo.tA || tB !== memo.tB || memo.fn === undefined) {
      const dtype = this.planTypedGemm(where, a, b, c, tA, tB);
      if (dtype !== undefined) return this.runGemmEx(where, dtype, '32F', { alpha: alphaIn as Scalar, beta: betaIn as Scalar }, GEMM_DEFAULT_ALGO);
    } else {
      this.sa.buffer!.launchAddress();
      this.sb.buffer!.launchAddress();
      this.sc.buffer!.launchAddress();
    }
    const fn = memo.fn!;
    // real scalars go to the typed layer as values (it boxes them in its own scratch: the quickest path)
    const alpha = memo.real ? realScalar(where, 'alpha', alphaIn) : this.alphaBox.set(where, 'alpha', this.sc.dtype, alphaIn);
    const beta = memo.real ? realScalar(where, 'beta', betaIn) : this.betaBox.set(where, 'beta', this.sc.dtype, betaIn);
    this.enter(where, POINTER_MODE_HOST, true);
    const call = this.call;
    try {
      fn(this.handle, call.transa, call.transb, call.m, call.n, call.k, alpha, call.a, call.lda, call.b, call.ldb, beta, call.c, call.ldc);
    } catch (e) {
      if (!this.staleRetry(e)) throw e;
      fn(this.handle, call.transa, call.transb, call.m, call.n, call.k, alpha, call.a, call.lda, call.b, call.ldb, beta, call.c, call.ldc);
    }
    return this;
  }

  /**
   * Resolves and plans a gemm into this.call and remembers its views and typed function in the memo;
   * returns the dtype when it goes through cublasGemmEx instead (f16, bf16: nothing remembered).
   */
  private planTypedGemm(where: string, a: unknown, b: unknown, c: unknown, tA: Transpose, tB: Transpose): DType | undefined {
    const memo = this.memo;
    memo.fn = undefined;
    this.resolveGemm(where, a, b, c, false);
    const dtype = this.sc.dtype;
    if (this.sa.dtype !== dtype) throw new TypeError(`${where}: a and b hold ${this.sa.dtype}, c ${dtype}: gemm takes one dtype (gemmEx mixes them)`);
    planGemm(where, this.sa, tA, this.sb, tB, this.sc, this.call);
    const name = GEMM_NAMES[dtype as keyof typeof GEMM_NAMES];
    if (name === undefined) {
      if (dtype !== 'f16' && dtype !== 'bf16') throw new TypeError(`${where}: no GEMM of ${dtype} (f16, bf16, f32, f64, c64, c128; gemmEx takes i8 → i32)`);
      return dtype;
    }
    memo.a = a;
    memo.b = b;
    memo.c = c;
    memo.tA = tA;
    memo.tB = tB;
    memo.real = dtype === 'f32' || dtype === 'f64';
    memo.fn = this.api[name] as unknown as TypedGemm;
    return undefined;
  }

  /** After a hinted call failed: true (call again) when another context was current, now bound for real. */
  private staleRetry(e: unknown): boolean {
    if ((e as { code?: unknown })?.code !== EXECUTION_FAILED || currentContextHandle() === this.context.handle) return false;
    this.context.bind();
    return true;
  }

  /**
   * GEMM with mixed types (cublasGemmEx): a and b of one dtype (f16, bf16, f32, f64, c64, c128, i8), c of
   * the output dtype the compute type allows (f16/bf16 → f16/bf16 or f32, i8 → i32 with '32I' or f32, …).
   * alpha and beta are of the compute type's scale type (f16 for '16F', i32 for '32I', else f32/f64/c64/c128).
   * @param a The left factor (f16, bf16, f32, f64, c64, c128 or i8), a 2-D StridedView [rows, cols] of device memory, row-major (strides [ld, 1]) or
   * column-major (strides [1, ld]); op(a) is m×k.
   * @param b The right factor, a 2-D view of a's dtype in either order; op(b) is k×n.
   * @param c The m×n result, a writable 2-D view of the output dtype the compute type allows (f16/bf16 → f16/bf16 or f32, i8 → i32 or f32, else a's dtype).
   * @param options As {@link Blas.gemm}'s, plus `computeType` (default '32F' for f16/bf16/f32/c64 operands, '64F' for f64/c128, '32I' for i8 → i32) and
   * `algo` (a cublasGemmAlgo_t; default -1, CUBLAS_GEMM_DEFAULT).
   */
  gemmEx(a: StridedView, b: StridedView, c: StridedView, options?: GemmExOptions): this {
    const where = 'Blas.gemmEx';
    const { o, tA, tB, algo } = gemmExOptions(where, options);
    this.resolveGemm(where, a, b, c, false);
    const compute = this.computeOf(where, o.computeType);
    planGemm(where, this.sa, tA, this.sb, tB, this.sc, this.call);
    return this.runGemmEx(where, this.sc.dtype, compute, o, algo);
  }

  private computeOf(where: string, v: unknown): ComputeType {
    const ab = this.sa.dtype;
    const compute = v === undefined ? defaultComputeType(ab, this.sc.dtype) : checkComputeType(where, v);
    if (compute === undefined) throw new TypeError(`${where}: no GEMM of ${ab} operands`);
    return compute;
  }

  private runGemmEx(where: string, cType: DType, compute: ComputeType, o: Partial<GemmOptions>, algo: number): this {
    const ab = this.sa.dtype;
    const scale = gemmScaleType(where, ab, cType, compute);
    const alpha = this.alphaBox.set(where, 'alpha', scale, o.alpha ?? 1);
    const beta = this.betaBox.set(where, 'beta', scale, o.beta ?? 0);
    const abCode = cudaDataType(where, ab);
    const cCode = cudaDataType(where, cType);
    const call = this.call;
    if (isIntegerCompute(compute)) checkIntegerGemm(where, call);
    this.enter(where);
    this.api.cublasGemmEx(
      this.handle,
      call.transa,
      call.transb,
      call.m,
      call.n,
      call.k,
      alpha,
      call.a,
      abCode,
      call.lda,
      call.b,
      abCode,
      call.ldb,
      beta,
      call.c,
      cCode,
      call.ldc,
      CUBLAS_COMPUTE[compute],
      algo,
    );
    return this;
  }

  /**
   * A batch of GEMMs on 3-D views [batch, rows, cols] (cublasGemmStridedBatchedEx): the batch stride is
   * strides[0]; a or b may be 2-D (one matrix for every batch entry). Options as {@link Blas.gemmEx}.
   * @param a The left factors, a 3-D view [batch, rows, cols] (the batch stride is strides[0]) or a 2-D view used for every batch entry.
   * @param b The right factors, 3-D [batch, rows, cols] or 2-D (one matrix for every entry), of a's dtype.
   * @param c The results, a writable 3-D view [batch, m, n]; its batch count sets the batch.
   * @param options As {@link Blas.gemm}'s, plus `computeType` (default '32F' for f16/bf16/f32/c64 operands, '64F' for f64/c128, '32I' for i8 → i32) and
   * `algo` (a cublasGemmAlgo_t; default -1, CUBLAS_GEMM_DEFAULT).
   */
  gemmStridedBatched(a: StridedView, b: StridedView, c: StridedView, options?: GemmExOptions): this {
    const where = 'Blas.gemmStridedBatched';
    const { o, tA, tB, algo } = gemmExOptions(where, options);
    this.resolveGemm(where, a, b, c, true);
    const batch = checkBatches(where, this.sa, this.sb, this.sc);
    const compute = this.computeOf(where, o.computeType);
    const call = planGemm(where, this.sa, tA, this.sb, tB, this.sc, this.call);
    const ab = this.sa.dtype;
    const scale = gemmScaleType(where, ab, this.sc.dtype, compute);
    const alpha = this.alphaBox.set(where, 'alpha', scale, o.alpha ?? 1);
    const beta = this.betaBox.set(where, 'beta', scale, o.beta ?? 0);
    const abCode = cudaDataType(where, ab);
    const cCode = cudaDataType(where, this.sc.dtype);
    if (isIntegerCompute(compute)) checkIntegerGemm(where, call);
    if (batch === 0) return this;
    this.enter(where);
    this.api.cublasGemmStridedBatchedEx(
      this.handle,
      call.transa,
      call.transb,
      call.m,
      call.n,
      call.k,
      alpha,
      call.a,
      abCode,
      call.lda,
      call.strideA,
      call.b,
      abCode,
      call.ldb,
      call.strideB,
      beta,
      call.c,
      cCode,
      call.ldc,
      call.strideC,
      batch,
      CUBLAS_COMPUTE[compute],
      algo,
    );
    return this;
  }

  /**
   * A batch of GEMMs on arrays of 2-D views (cublasGemmBatchedEx): every a alike (shape, order, ld, dtype),
   * every b alike, every c alike. The pointer arrays are copied to a stream-ordered device buffer.
   * @param a The left factors, 2-D views sharing one shape, order, leading dimension and dtype.
   * @param b The right factors, as many as a, sharing one layout.
   * @param c The results, as many as a, writable 2-D views sharing one layout.
   * @param options As {@link Blas.gemm}'s, plus `computeType` (default '32F' for f16/bf16/f32/c64 operands, '64F' for f64/c128, '32I' for i8 → i32) and
   * `algo` (a cublasGemmAlgo_t; default -1, CUBLAS_GEMM_DEFAULT).
   */
  gemmBatched(a: readonly StridedView[], b: readonly StridedView[], c: readonly StridedView[], options?: GemmExOptions): this {
    const where = 'Blas.gemmBatched';
    const { o, tA, tB, algo } = gemmExOptions(where, options);
    const count = checkLists(where, a, b, c);
    if (count === 0) return this;
    const table = this.collectBatch(where, a, b, c, count);
    const compute = this.computeOf(where, o.computeType);
    const call = planGemm(where, this.sa, tA, this.sb, tB, this.sc, this.call);
    const ab = this.sa.dtype;
    const scale = gemmScaleType(where, ab, this.sc.dtype, compute);
    const alpha = this.alphaBox.set(where, 'alpha', scale, o.alpha ?? 1);
    const beta = this.betaBox.set(where, 'beta', scale, o.beta ?? 0);
    const abCode = cudaDataType(where, ab);
    const cCode = cudaDataType(where, this.sc.dtype);
    if (isIntegerCompute(compute)) {
      checkIntegerGemm(where, call);
      // every matrix of the lists, not only the last one the call was planned from (low halves: 2**32 is a multiple of 4)
      for (let i = 0; i < 3 * count; i++)
        if (table[2 * i] % 4 !== 0)
          throw new RangeError(
            `${where}: cuBLAS's i8 → i32 GEMM (computeType '32I') needs every matrix 4-byte aligned; ${'abc'[Math.floor(i / count)]}[${i % count}] is not`,
          );
    }
    this.enter(where);
    const pointers = DeviceBuffer.alloc(table.byteLength, { stream: this.stream });
    try {
      pointers.copyFrom(table, { stream: this.stream });
      const base = pointers.ptr;
      const [first, second] = call.swapped ? [base + 8 * count, base] : [base, base + 8 * count];
      this.api.cublasGemmBatchedEx(
        this.handle,
        call.transa,
        call.transb,
        call.m,
        call.n,
        call.k,
        alpha,
        first,
        abCode,
        call.lda,
        second,
        abCode,
        call.ldb,
        beta,
        base + 16 * count,
        cCode,
        call.ldc,
        count,
        CUBLAS_COMPUTE[compute],
        algo,
      );
    } finally {
      pointers.close(); // freed in stream order, after the GEMMs
    }
    return this;
  }

  /** Resolves every matrix of the three lists, checks each list is uniform; returns the address table (a | b | c, two u32 halves each). */
  // `count` is the length checkLists read: a list whose length getter changes its answer cannot leave NULLs in the table
  private collectBatch(where: string, a: readonly StridedView[], b: readonly StridedView[], c: readonly StridedView[], count: number): Uint32Array {
    const first = new MatrixSlot();
    const fa = new MatrixSlot();
    const fb = new MatrixSlot();
    // the addresses gathered first, the table made once every entry resolved: a holey list of 2**31 - 1
    // entries is refused at its first hole, not by a failed 48 GiB allocation
    const addresses: number[] = [];
    for (let i = 0; i < count; i++) {
      this.resolveGemm(where, a[i], b[i], c[i], false);
      if (i === 0) {
        Object.assign(first, this.sc);
        Object.assign(fa, this.sa);
        Object.assign(fb, this.sb);
      } else {
        sameLayout(where, `a[${i}]`, fa, this.sa);
        sameLayout(where, `b[${i}]`, fb, this.sb);
        sameLayout(where, `c[${i}]`, first, this.sc);
      }
      addresses.push(this.sa.address, this.sb.address, this.sc.address);
    }
    const table = new Uint32Array(6 * count);
    for (let i = 0; i < count; i++) {
      writeAddress(table, i, addresses[3 * i]);
      writeAddress(table, count + i, addresses[3 * i + 1]);
      writeAddress(table, 2 * count + i, addresses[3 * i + 2]);
    }
    return table;
  }

  // ── level 1 and 2 ─────────────────────────────────────────────────────────────────────────────

  // `withY`: y is an argument (an undefined y is refused, never left as the last call's y)
  private vectors(where: string, x: unknown, y: unknown, dtype: unknown, withY = true): Level1DType {
    const d = dtype === undefined ? undefined : checkDType(where, 'dtype', dtype, LEVEL1_DTYPES);
    const X = resolveVector(where, 'x', x, this.vx, d);
    const dt = checkDType(where, 'x dtype', X.dtype, LEVEL1_DTYPES);
    this.checkBuffer(where, 'x', X.buffer);
    if (withY) {
      const Y = resolveVector(where, 'y', y, this.vy, dt);
      if (Y.n !== X.n) throw new RangeError(`${where}: x holds ${X.n} elements and y ${Y.n}`);
      this.checkBuffer(where, 'y', Y.buffer);
    }
    return dt;
  }

  /**
   * y = alpha·x + y (cublas{S,D,C,Z}axpy), enqueued.
   * @param alpha The factor of x: a number, or { re, im } / [re, im] for complex vectors.
   * @param x The vector added, a 1-D StridedView of device memory (its stride, > 0, is the increment) or a DeviceBuffer read as a contiguous vector of
   * `options.dtype`.
   * @param y The vector updated in place, as many elements as x, of x's dtype.
   * @param options `dtype`: the element type (f32, f64, c64, c128) of DeviceBuffer operands; a 1-D view brings its own.
   */
  axpy(alpha: Scalar, x: Operand, y: Operand, options?: VectorOptions): this {
    const where = 'Blas.axpy';
    const o = optionsOf(where, options, ['dtype']);
    const dt = this.vectors(where, x, y, o.dtype);
    const a = this.alphaBox.set(where, 'alpha', dt, alpha);
    this.enter(where);
    this.api[level1Name('axpy', dt)](this.handle, this.vx.n, a, this.vx.address, this.vx.inc, this.vy.address, this.vy.inc);
    return this;
  }

  /**
   * x = alpha·x (cublas{S,D,C,Z}scal), enqueued.
   * @param alpha The factor: a number, or { re, im } / [re, im] for complex vectors.
   * @param x The vector scaled in place, a 1-D StridedView of device memory (its stride, > 0, is the increment) or a DeviceBuffer read as a contiguous vector
   * of `options.dtype`.
   * @param options `dtype`: the element type (f32, f64, c64, c128) of DeviceBuffer operands; a 1-D view brings its own.
   */
  scal(alpha: Scalar, x: Operand, options?: VectorOptions): this {
    const where = 'Blas.scal';
    const o = optionsOf(where, options, ['dtype']);
    const dt = this.vectors(where, x, undefined, o.dtype, false);
    const a = this.alphaBox.set(where, 'alpha', dt, alpha);
    this.enter(where);
    this.api[level1Name('scal', dt)](this.handle, this.vx.n, a, this.vx.address, this.vx.inc);
    return this;
  }

  /**
   * x·y (conjugating x with `conjugate` for complex vectors), returned as a number ({ re, im } for complex).
   * cuBLAS writes it to host memory, so the call waits for the stream's work: use dotAsync not to block.
   * @param x The first vector, a 1-D StridedView of device memory (its stride, > 0, is the increment) or a DeviceBuffer read as a contiguous vector of
   * `options.dtype`.
   * @param y The second vector, as many elements as x, of x's dtype.
   * @param options `dtype` (the element type of DeviceBuffer operands: f32, f64, c64, c128) and `conjugate` (complex vectors: conjugate x, dotc; default
   * false).
   */
  dot(x: Operand, y: Operand, options?: DotOptions): number | Complex {
    const where = 'Blas.dot';
    const dt = this.dotArgs(where, x, y, options);
    this.enter(where);
    this.api[level1Name(this.conjugate ? 'dotc' : 'dot', dt)](
      this.handle,
      this.vx.n,
      this.vx.address,
      this.vx.inc,
      this.vy.address,
      this.vy.inc,
      this.resultFor(dt),
    );
    return this.readResult(dt, false);
  }

  /**
   * x·y into element 0 of `result` (device memory of x's dtype), enqueued: nothing waits.
   * @param x The first vector, a 1-D StridedView of device memory (its stride, > 0, is the increment) or a DeviceBuffer read as a contiguous vector of
   * `options.dtype`.
   * @param y The second vector, as many elements as x, of x's dtype.
   * @param result Device memory whose element 0 (of x's dtype) receives the product: a DeviceBuffer or a 1-D view.
   * @param options `dtype` (the element type of DeviceBuffer operands: f32, f64, c64, c128) and `conjugate` (complex vectors: conjugate x, dotc; default
   * false).
   */
  dotInto(x: Operand, y: Operand, result: Operand, options?: DotOptions): this {
    const where = 'Blas.dotInto';
    const dt = this.dotArgs(where, x, y, options);
    const r = this.resultAddress(where, result, dt);
    this.enter(where, POINTER_MODE_DEVICE);
    this.api[level1Name(this.conjugate ? 'dotc' : 'dot', dt)](this.handle, this.vx.n, this.vx.address, this.vx.inc, this.vy.address, this.vy.inc, r);
    return this;
  }

  /**
   * x·y awaited without blocking the event loop (dotInto a scratch element, then the stream awaited).
   * @param x The first vector, a 1-D StridedView of device memory (its stride, > 0, is the increment) or a DeviceBuffer read as a contiguous vector of
   * `options.dtype`.
   * @param y The second vector, as many elements as x, of x's dtype.
   * @param options `dtype` (the element type of DeviceBuffer operands: f32, f64, c64, c128) and `conjugate` (complex vectors: conjugate x, dotc; default
   * false).
   */
  async dotAsync(x: Operand, y: Operand, options?: DotOptions): Promise<number | Complex> {
    const dt = this.dotArgs('Blas.dotAsync', x, y, options);
    return this.viaDevice(dt, false, (r) => this.dotInto(x, y, r, options));
  }

  private dotArgs(where: string, x: unknown, y: unknown, options: DotOptions | undefined): Level1DType {
    const o = optionsOf(where, options, ['dtype', 'conjugate']);
    const conjugate = o.conjugate; // read once: a getter cannot pass the check and then pick dotc
    if (conjugate !== undefined && typeof conjugate !== 'boolean') throw new TypeError(`${where}: conjugate must be a boolean, got ${describe(conjugate)}`);
    const dt = this.vectors(where, x, y, o.dtype);
    this.conjugate = conjugate === true;
    return dt;
  }

  /**
   * ‖x‖₂ as a number (a real number for complex x too); waits like {@link Blas.dot}.
   * @param x The vector, a 1-D StridedView of device memory (its stride, > 0, is the increment) or a DeviceBuffer read as a contiguous vector of
   * `options.dtype`.
   * @param options `dtype`: the element type (f32, f64, c64, c128) of DeviceBuffer operands; a 1-D view brings its own.
   */
  nrm2(x: Operand, options?: VectorOptions): number {
    const where = 'Blas.nrm2';
    const o = optionsOf(where, options, ['dtype']);
    const dt = this.vectors(where, x, undefined, o.dtype, false);
    this.enter(where);
    this.api[level1Name('nrm2', dt)](this.handle, this.vx.n, this.vx.address, this.vx.inc, this.resultFor(dt));
    return this.readResult(dt, true) as number;
  }

  /**
   * ‖x‖₂ into element 0 of `result` (device memory of x's real dtype: f32 for f32/c64, f64 for f64/c128), enqueued.
   * @param x The vector, a 1-D StridedView of device memory (its stride, > 0, is the increment) or a DeviceBuffer read as a contiguous vector of
   * `options.dtype`.
   * @param result Device memory whose element 0 receives the norm, of x's real dtype (f32 for f32/c64, f64 for f64/c128).
   * @param options `dtype`: the element type (f32, f64, c64, c128) of DeviceBuffer operands; a 1-D view brings its own.
   */
  nrm2Into(x: Operand, result: Operand, options?: VectorOptions): this {
    const where = 'Blas.nrm2Into';
    const o = optionsOf(where, options, ['dtype']);
    const dt = this.vectors(where, x, undefined, o.dtype, false);
    const r = this.resultAddress(where, result, realOf(dt));
    this.enter(where, POINTER_MODE_DEVICE);
    this.api[level1Name('nrm2', dt)](this.handle, this.vx.n, this.vx.address, this.vx.inc, r);
    return this;
  }

  /**
   * ‖x‖₂ awaited without blocking the event loop.
   * @param x The vector, a 1-D StridedView of device memory (its stride, > 0, is the increment) or a DeviceBuffer read as a contiguous vector of
   * `options.dtype`.
   * @param options `dtype`: the element type (f32, f64, c64, c128) of DeviceBuffer operands; a 1-D view brings its own.
   */
  async nrm2Async(x: Operand, options?: VectorOptions): Promise<number> {
    const o = optionsOf('Blas.nrm2Async', options, ['dtype']);
    const dt = this.vectors('Blas.nrm2Async', x, undefined, o.dtype, false);
    return (await this.viaDevice(realOf(dt), true, (r) => this.nrm2Into(x, r, options))) as number;
  }

  /**
   * y = alpha·op(a)·x + beta·y (cublas{S,D,C,Z}gemv), enqueued; a a 2-D view in either order.
   * @param a The matrix, a 2-D StridedView [rows, cols] of device memory, row-major (strides [ld, 1]) or column-major (strides [1, ld]), of dtype f32, f64,
   * c64 or c128.
   * @param x The input vector, of a's dtype, as many elements as op(a) has columns.
   * @param y The output vector (read too when beta ≠ 0), of a's dtype, as many elements as op(a) has rows.
   * @param options `trans` ('N' default, 'T' or 'C': the op applied to a), `alpha` (default 1), `beta` (default 0: y is only written) and `dtype` (of a
   * DeviceBuffer x).
   */
  gemv(a: StridedView, x: Operand, y: Operand, options?: GemvOptions): this {
    const where = 'Blas.gemv';
    const o = optionsOf(where, options, ['dtype', 'trans', 'alpha', 'beta']);
    const t = checkTranspose(where, 'trans', o.trans);
    this.memo.fn = undefined; // this.sa is about to change under gemm's memo
    const A = resolveMatrix(where, 'a', a, this.sa, 'col');
    const dt = checkDType(where, 'a dtype', A.dtype, LEVEL1_DTYPES);
    this.checkBuffer(where, 'a', A.buffer);
    this.vectors(where, x, undefined, o.dtype ?? dt, false);
    const Y = resolveVector(where, 'y', y, this.vy, dt);
    this.checkBuffer(where, 'y', Y.buffer);
    if (this.vx.dtype !== dt) throw new TypeError(`${where}: x holds ${this.vx.dtype}, a ${dt}`);
    const [rows, cols] = t === 'N' ? [A.rows, A.cols] : [A.cols, A.rows];
    if (this.vx.n !== cols) throw new RangeError(`${where}: op(a) is ${rows}×${cols} but x holds ${this.vx.n} elements`);
    if (Y.n !== rows) throw new RangeError(`${where}: op(a) is ${rows}×${cols} but y holds ${Y.n} elements`);
    // column-major memory: a row-major a is its transpose (cols×rows), so its op flips N ↔ T
    const op = opCode(mappedOp(where, 'a', A, t, 'col'));
    const [m, n] = A.order === 'col' ? [A.rows, A.cols] : [A.cols, A.rows];
    const alpha = this.alphaBox.set(where, 'alpha', dt, o.alpha ?? 1);
    const beta = this.betaBox.set(where, 'beta', dt, o.beta ?? 0);
    this.enter(where);
    this.api[level1Name('gemv', dt)](this.handle, op, m, n, alpha, A.address, A.ld, this.vx.address, this.vx.inc, beta, Y.address, Y.inc);
    return this;
  }

  // ── results ───────────────────────────────────────────────────────────────────────────────────

  private resultFor(dt: Level1DType): Float32Array | Float64Array {
    return dt === 'f32' || dt === 'c64' ? this.result32 : this.result;
  }

  private readResult(dt: Level1DType, real: boolean): number | Complex {
    const r = this.resultFor(dt);
    return real || !isComplex(dt) ? r[0] : { re: r[0], im: r[1] };
  }

  private resultAddress(where: string, result: unknown, dt: DType): number {
    const r = resolveVector(where, 'result', result, new VectorSlot(), dt);
    if (r.n < 1) throw new RangeError(`${where}: result must hold at least one ${dt} element`);
    this.checkBuffer(where, 'result', r.buffer);
    return r.address;
  }

  /** Runs `into` on a one-element scratch buffer, awaits the stream, then reads the element. */
  private async viaDevice(dt: DType, real: boolean, into: (r: DeviceBuffer) => unknown): Promise<number | Complex> {
    const size = dt === 'c128' ? 16 : dt === 'f64' || dt === 'c64' ? 8 : 4;
    const stream = this.stream;
    const scratch = DeviceBuffer.alloc(size, { stream });
    try {
      into(scratch);
      await stream.synchronized();
      const out = dt === 'f32' || dt === 'c64' ? scratch.toArray(Float32Array, { stream }) : scratch.toArray(Float64Array, { stream });
      return real || !isComplex(dt) ? out[0] : { re: out[0], im: out[1] };
    } finally {
      scratch.close();
    }
  }

  /** `Blas(stream …)`. */
  toString(): string {
    return `Blas(${this.closed ? 'closed' : String(this.stream)})`;
  }
}

/** The typed layer's S/D/C/Z GEMM as the object calls it: scalars as values (S, D) or boxed (C, Z). */
type TypedGemm = (
  handle: cublas.cublasHandle_t,
  transa: number,
  transb: number,
  m: number,
  n: number,
  k: number,
  alpha: number | ArrayBufferView,
  A: number,
  lda: number,
  B: number,
  ldb: number,
  beta: number | ArrayBufferView,
  C: number,
  ldc: number,
) => void;

/** cuBLAS's typed S/D/C/Z GEMM of each dtype. */
const GEMM_NAMES = { f32: 'cublasSgemm', f64: 'cublasDgemm', c64: 'cublasCgemm', c128: 'cublasZgemm' } as const;

/** `v` when it is a number, else a TypeError naming `where` and `name`. */
function realScalar(where: string, name: string, v: unknown): number {
  if (typeof v !== 'number') throw new TypeError(`${where}: ${name} must be a number, got ${describe(v)}`);
  return v;
}

function realOf(dt: Level1DType): 'f32' | 'f64' {
  return dt === 'f32' || dt === 'c64' ? 'f32' : 'f64';
}

function checkAlgo(where: string, v: unknown): number {
  if (v === undefined) return GEMM_DEFAULT_ALGO;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < -1 || v > 999)
    throw new TypeError(`${where}: algo must be a cublasGemmAlgo_t (an integer, -1 for the default), got ${describe(v)}`);
  return v;
}

function checkLists(where: string, a: unknown, b: unknown, c: unknown): number {
  for (const [name, v] of [
    ['a', a],
    ['b', b],
    ['c', c],
  ] as const) {
    if (!Array.isArray(v)) throw new TypeError(`${where}: ${name} must be an array of 2-D StridedViews, got ${describe(v)}`);
  }
  const n = (a as unknown[]).length;
  if ((b as unknown[]).length !== n || (c as unknown[]).length !== n) {
    throw new RangeError(`${where}: a, b and c must hold as many matrices (got ${n}, ${(b as unknown[]).length}, ${(c as unknown[]).length})`);
  }
  if (n > 2147483647) throw new RangeError(`${where}: at most 2**31 - 1 matrices`);
  return n;
}

function sameLayout(where: string, name: string, first: MatrixSlot, s: MatrixSlot): void {
  if (s.dtype !== first.dtype || s.rows !== first.rows || s.cols !== first.cols || s.order !== first.order || s.ld !== first.ld) {
    throw new RangeError(
      `${where}: ${name} is ${s.dtype} ${s.rows}×${s.cols} ${s.order}-major with ld ${s.ld}; the first is ${first.dtype} ${first.rows}×${first.cols} ${first.order}-major with ld ${first.ld} (a batch shares one layout)`,
    );
  }
}

function writeAddress(table: Uint32Array, i: number, address: number): void {
  table[2 * i] = address % 4294967296;
  table[2 * i + 1] = Math.floor(address / 4294967296);
}
