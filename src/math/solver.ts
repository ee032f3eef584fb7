// DenseSolver: a cuSOLVER dense handle (cusolverDn) bound to a Stream, with Cholesky (potrf/potrs),
// LU (getrf/getrs), QR (geqrf, orgqr), the symmetric eigensolver (syevd) and the SVD (gesvd) for f32,
// f64, c64 and c128. It calls the 64-bit generic API (cusolverDnX*): one code path for every dtype
// (the dtype is an argument), 64-bit sizes, and workspace sizes in BYTES for a device and a host
// workspace (the legacy *_bufferSize count elements of the data type, a unit easy to get wrong); orgqr
// has no X form and uses the legacy call, its element count turned into bytes here.
//
// Each operation exists twice: `await solver.potrf(a)` enqueues, awaits the stream without blocking
// the event loop (`stream.synchronized()`), then reads cuSOLVER's `info` and throws its error
// (NotPositiveDefiniteError, SingularMatrixError, ConvergenceError); `solver.potrfSync(a)` does the same
// but blocks the thread in cuStreamSynchronize. Both wait for everything enqueued on the stream before.
//
// Layout: cuSOLVER is column-major. A column-major view (strides [1, ld]) is taken as is. A row-major
// view (strides [ld, 1]) is the transpose to cuSOLVER, which each call handles where it can: Cholesky
// and the eigensolver of a real symmetric matrix (the transpose is the matrix), LU (the factors of Aᵀ,
// solved with the transposed operation), SVD (Aᵀ = V Σ Uᵀ: U and Vᵀ swap roles). QR needs column-major.
import { loadCusolver, type cusolver } from '../releases';
import { checkKeys, describe } from '../describe';
import { DeviceBuffer } from '../memory/device-buffer';
import { DTYPE_SIZES, StridedView } from '../memory/strided-view';
import type { Stream, StreamLike } from '../stream';
import { StreamBoundResource, createStream, cudaDataType, lockFields, operand, resolveStream, type Operand } from './common';
import {
  ConvergenceError,
  InfoSlots,
  NotPositiveDefiniteError,
  REAL_OF,
  SingularMatrixError,
  allocMatrix,
  allocVector,
  checkColMajor,
  checkComplexLayout,
  checkSquare,
  infoError,
  outputMatrix,
  outputVector,
  rightHandSides,
  solverMatrix,
  type SolverError,
} from './solver-support';
import { SEALED, type Sealed, checkSealed } from '../sealed';

export { ConvergenceError, NotPositiveDefiniteError, SingularMatrixError, SolverError, type SolverDType } from './solver-support';

// cuBLAS/cuSOLVER enum values (cublas_api.h, cusolver_common.h; test/math/solver.test.ts compares them with the generated enums)
const FILL_LOWER = 0;
const FILL_UPPER = 1;
const OP_N = 0;
const OP_T = 1;
const JOBS = Object.freeze({ all: 65, thin: 83, none: 78 }); // 'A', 'S', 'N'
const INT32_MAX = 0x7fffffff;
/** The legacy orgqr/ungqr of each dtype (no cusolverDnX form exists). */
const ORGQR = Object.freeze({ f32: 'cusolverDnSorgqr', f64: 'cusolverDnDorgqr', c64: 'cusolverDnCungqr', c128: 'cusolverDnZungqr' } as const);

/** The factors getrf leaves: `a` (L and U in place), the pivots, and whether cuSOLVER factored Aᵀ (a row-major a). */
export class LuFactors {
  /** @internal */
  constructor(
    seal: Sealed,
    /** The factored matrix (L below the diagonal, U on and above, in cuSOLVER's column-major view). */
    readonly a: StridedView,
    /** The row interchanges (i64, 1-based as LAPACK's). */
    readonly pivots: Operand,
    /** True when a was row-major: cuSOLVER factored Aᵀ and getrs solves with the transposed factors. */
    readonly transposed: boolean,
    private readonly ownsPivots: boolean,
  ) {
    checkSealed(seal, 'LuFactors', 'solver.getrfSync()');
    lockFields(this as LuFactors, ['a', 'pivots', 'transposed']);
  }

  /** Frees the pivots when getrf allocated them. */
  close(): void {
    if (this.ownsPivots) (this.pivots as StridedView).buffer.close();
  }

  /** The same as {@link LuFactors.close}, for `using`. */
  [Symbol.dispose](): void {
    this.close();
  }
}

/** Singular values and, unless `vectors: 'none'`, the singular vectors: a = u · diag(s) · vt. */
export interface SvdResult {
  /** The min(rows, cols) singular values, largest first, of a's real type (f32 for f32/c64 a, f64 for f64/c128). */
  s: Operand;
  /** The left singular vectors, in a's layout: rows × rows ('all') or rows × min(rows, cols) ('thin'); absent with 'none'. */
  u?: Operand;
  /** The right singular vectors transposed (conjugated for complex a), in a's layout: cols × cols ('all') or min(rows, cols) × cols ('thin'); absent with 'none'. */
  vt?: Operand;
}

/** The outputs a call allocated (closed when the call fails) and what it resolves to. */
interface Pending<T> {
  readonly slot: number;
  readonly stream: Stream;
  readonly where: string;
  readonly func: string;
  readonly positive: ((info: number) => SolverError) | undefined;
  readonly value: T;
  readonly allocated: readonly DeviceBuffer[];
  /** The host workspace, kept until the call is done. */
  readonly host: Uint8Array | null;
}

type Sizes = { workspaceInBytesOnDevice: number; workspaceInBytesOnHost: number };
type Run = (device: number, deviceBytes: number, host: Uint8Array | null, hostBytes: number, info: number) => void;

function options<T extends object>(where: string, v: T | undefined, keys: string[]): Partial<T> {
  if (v === undefined) return {};
  if (typeof v !== 'object' || v === null) throw new TypeError(`${where}: options must be an object, got ${describe(v)}`);
  checkKeys(where, v as Record<string, unknown>, keys);
  // a copy: each option read once, so a getter cannot pass a check (an output's length) and then give another value;
  // read by name, so an inherited option counts as it does in the other objects' options
  const copy: Record<string, unknown> = {};
  for (const k of keys) copy[k] = (v as Record<string, unknown>)[k];
  return copy as Partial<T>;
}

function flag(where: string, name: string, v: unknown, fallback: boolean): boolean {
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw new TypeError(`${where}: ${name} must be a boolean, got ${describe(v)}`);
  return v;
}

/** cuSOLVER's fill mode for the user's triangle: a row-major view's lower triangle is cuSOLVER's upper. */
function fill(lower: boolean, colMajor: boolean): number {
  return lower === colMajor ? FILL_LOWER : FILL_UPPER;
}

/**
 * A cuSOLVER dense handle on a Stream (default: the current context's legacy default stream). Every
 * method has an awaited form (resolves after the stream is done, without blocking the event loop) and
 * a `…Sync` form that blocks; both throw cuSOLVER's info as a SolverError subclass.
 * @example
 * ```ts
 * import { DenseSolver, DeviceBuffer, Stream, matrix } from 'cuda-ts/objects';
 *
 * using stream = Stream.create();
 * using solver = DenseSolver.create({ stream }); // loads cuSOLVER
 * using aBuf = DeviceBuffer.from(new Float64Array([4, 2, 2, 3]), { stream }); // symmetric positive definite
 * using bBuf = DeviceBuffer.from(new Float64Array([6, 5]), { stream }); // one right-hand side, a's dtype
 * const a = matrix(aBuf, { dtype: 'f64', rows: 2, cols: 2 });
 * await solver.potrf(a); // a = L Lᵀ in place; awaited without blocking the event loop
 * await solver.potrs(a, bBuf); // b = a⁻¹ b in place
 * console.log(bBuf.toArray(Float64Array, { stream })); // Float64Array [1, 1]
 * ```
 */
export class DenseSolver extends StreamBoundResource {
  private readonly handle: cusolver.cusolverDnHandle_t;
  private readonly params: cusolver.cusolverDnParams_t;
  private readonly slots: InfoSlots;

  private constructor(seal: Sealed, handle: cusolver.cusolverDnHandle_t, params: cusolver.cusolverDnParams_t, stream: Stream) {
    checkSealed(seal, 'DenseSolver', 'DenseSolver.create()');
    const slots = new InfoSlots(stream.context);
    super(
      'DenseSolver',
      () => {
        slots.close();
        if (!stream.context.bindForFree()) return;
        const api = loadCusolver();
        try {
          api.cusolverDnDestroyParams(params);
        } finally {
          api.cusolverDnDestroy(handle);
        }
      },
      stream,
    );
    this.handle = handle;
    this.params = params;
    this.slots = slots;
  }

  /**
   * A handle on `options.stream` (default: the legacy default stream of the current context).
   * @param options `stream`: the stream calls are enqueued on (default: the current context's legacy default stream).
   */
  static create(options: { stream?: StreamLike } = {}): DenseSolver {
    const stream = createStream('DenseSolver.create', options);
    const api = loadCusolver();
    const h = api.cusolverDnCreate();
    let params: cusolver.cusolverDnParams_t | undefined;
    try {
      api.cusolverDnSetStream(h, stream.handle as cusolver.cudaStream_t);
      params = api.cusolverDnCreateParams();
    } catch (e) {
      api.cusolverDnDestroy(h);
      throw e;
    }
    return new DenseSolver(SEALED, h, params, stream);
  }

  /**
   * Enqueues later calls on `stream` (of the handle's context).
   * @param stream The stream later calls enqueue on: a Stream (or stream-protocol object) of the handle's context.
   */
  setStream(stream: StreamLike): this {
    this.checkUsable('DenseSolver.setStream');
    const s = resolveStream('DenseSolver.setStream', stream);
    if (s === this.stream) return this;
    this.adoptStream(s);
    this.context.bind();
    loadCusolver().cusolverDnSetStream(this.handle, s.handle as cusolver.cudaStream_t);
    return this;
  }

  // ── the machinery every call shares ──────────────────────────────────────────────────────────

  /** Takes an info slot and workspaces, runs `run`, enqueues the info copy; frees what it can at once. */
  private launch<T>(
    where: string,
    func: string,
    sizes: Sizes | undefined,
    run: Run,
    positive: Pending<T>['positive'],
    value: T,
    allocated: DeviceBuffer[],
  ): Pending<T> {
    const stream = this.stream;
    let slot = -1;
    let work: DeviceBuffer | undefined;
    try {
      slot = this.slots.take();
      const deviceBytes = sizes?.workspaceInBytesOnDevice ?? 0;
      const hostBytes = sizes?.workspaceInBytesOnHost ?? 0;
      // the device workspace is freed stream-ordered right after the call: the cache reuses it safely
      if (deviceBytes > 0) work = DeviceBuffer.alloc(deviceBytes, { stream });
      const host = hostBytes > 0 ? new Uint8Array(hostBytes) : null;
      run(work?.ptr ?? 0, deviceBytes, host, hostBytes, this.slots.device(slot));
      this.slots.copyBack(slot, stream);
      return { slot, stream, where, func, positive, value, allocated, host };
    } catch (e) {
      if (slot >= 0) this.slots.release(slot);
      for (const b of allocated) b.close();
      throw e;
    } finally {
      work?.close();
    }
  }

  private finish<T>(p: Pending<T>): T {
    const info = this.slots.read(p.slot);
    this.slots.release(p.slot);
    const error = infoError(p.where, p.func, info, p.positive);
    if (error !== undefined) {
      for (const b of p.allocated) b.close();
      throw error;
    }
    return p.value;
  }

  private async settle<T>(p: Pending<T>): Promise<T> {
    try {
      await p.stream.synchronized();
    } catch (e) {
      this.slots.release(p.slot);
      for (const b of p.allocated) b.close();
      throw e;
    }
    return this.finish(p);
  }

  private settleSync<T>(p: Pending<T>): T {
    try {
      p.stream.synchronize();
    } catch (e) {
      this.slots.release(p.slot);
      for (const b of p.allocated) b.close();
      throw e;
    }
    return this.finish(p);
  }

  /** The typed layer, with the handle's context current; `operands` (resolved, or given outputs) must be of that context. */
  private api(where: string, operands: Record<string, unknown> = {}): ReturnType<typeof loadCusolver> {
    this.checkUsable(where);
    for (const name in operands) {
      const v = operands[name];
      // a view, a DeviceBuffer, or a resolved operand ({ buffer })
      const b = v instanceof StridedView ? v.buffer : v instanceof DeviceBuffer ? v : (v as { buffer?: unknown } | undefined)?.buffer;
      if (b instanceof DeviceBuffer && b.context !== this.context)
        throw new TypeError(`${where}: ${name} belongs to ${String(b.context)}, the solver to ${String(this.context)}`);
    }
    const api = loadCusolver();
    this.context.bind();
    return api;
  }

  // ── Cholesky ─────────────────────────────────────────────────────────────────────────────────

  /**
   * Cholesky factorization in place: a = L Lᴴ (`lower`, the default; L in a's lower triangle) or
   * Uᴴ U. a is square, real symmetric in either layout, or complex Hermitian in column-major order.
   * Throws NotPositiveDefiniteError (with the index) when a is not positive definite.
   * @param a The symmetric (Hermitian: column-major only) positive definite matrix, factored in place: a square 2-D view of device memory (f32, f64, c64 or
   * c128), column-major (strides [1, ld]) or row-major (strides [ld, 1]; real only).
   * @param opts `lower`: factor the lower triangle, a = L Lᴴ (default true), or the upper one, a = Uᴴ U; named in a's own layout.
   */
  potrf(a: StridedView, opts?: { lower?: boolean }): Promise<void> {
    return this.settle(this.enqueuePotrf(a, opts));
  }

  /**
   * {@link DenseSolver.potrf}, blocking until done.
   * @param a The symmetric (Hermitian: column-major only) positive definite matrix, factored in place: a square 2-D view of device memory (f32, f64, c64 or
   * c128), column-major (strides [1, ld]) or row-major (strides [ld, 1]; real only).
   * @param opts `lower`: factor the lower triangle, a = L Lᴴ (default true), or the upper one, a = Uᴴ U; named in a's own layout.
   */
  potrfSync(a: StridedView, opts?: { lower?: boolean }): void {
    this.settleSync(this.enqueuePotrf(a, opts));
  }

  private enqueuePotrf(a: StridedView, opts: { lower?: boolean } | undefined): Pending<void> {
    const where = 'DenseSolver.potrf';
    const o = options(where, opts, ['lower']);
    const lower = flag(where, 'lower', o.lower, true);
    const A = solverMatrix(where, 'a', a);
    const n = checkSquare(where, 'a', A);
    checkComplexLayout(where, 'a', A);
    const api = this.api(where, { a: A.r });
    const [h, p, uplo, dt] = [this.handle, this.params, fill(lower, A.colMajor), cudaDataType(where, A.dtype)];
    const sizes = api.cusolverDnXpotrf_bufferSize(h, p, uplo, n, dt, A.r.address, A.ld, dt);
    return this.launch(
      where,
      'cusolverDnXpotrf',
      sizes,
      (w, wb, hw, hb, info) => api.cusolverDnXpotrf(h, p, uplo, n, dt, A.r.address, A.ld, dt, w, wb, hw, hb, info),
      (info) => new NotPositiveDefiniteError(where, 'cusolverDnXpotrf', info),
      undefined,
      [],
    );
  }

  /**
   * Solves a x = b in place in b with a's Cholesky factor from potrf (same `lower`). b is a vector of
   * n elements or a column-major [n, nrhs] view.
   * @param a The Cholesky factor potrf left in place (same matrix, same layout).
   * @param b The right-hand sides, overwritten by the solution: a vector of n elements, or a column-major [n, nrhs] view, of a's dtype.
   * @param opts `lower`: the triangle potrf factored (default true); must match the potrf call.
   */
  potrs(a: StridedView, b: Operand, opts?: { lower?: boolean }): Promise<void> {
    return this.settle(this.enqueuePotrs(a, b, opts));
  }

  /**
   * {@link DenseSolver.potrs}, blocking until done.
   * @param a The Cholesky factor potrf left in place (same matrix, same layout).
   * @param b The right-hand sides, overwritten by the solution: a vector of n elements, or a column-major [n, nrhs] view, of a's dtype.
   * @param opts `lower`: the triangle potrf factored (default true); must match the potrf call.
   */
  potrsSync(a: StridedView, b: Operand, opts?: { lower?: boolean }): void {
    this.settleSync(this.enqueuePotrs(a, b, opts));
  }

  private enqueuePotrs(a: StridedView, b: Operand, opts: { lower?: boolean } | undefined): Pending<void> {
    const where = 'DenseSolver.potrs';
    const o = options(where, opts, ['lower']);
    const lower = flag(where, 'lower', o.lower, true);
    const A = solverMatrix(where, 'a', a);
    const n = checkSquare(where, 'a', A);
    checkComplexLayout(where, 'a', A);
    const B = rightHandSides(where, 'b', b, A.dtype, n);
    const api = this.api(where, { a: A.r, b: B.r });
    const [h, p, uplo, dt] = [this.handle, this.params, fill(lower, A.colMajor), cudaDataType(where, A.dtype)];
    return this.launch(
      where,
      'cusolverDnXpotrs',
      undefined,
      (_w, _wb, _hw, _hb, info) => api.cusolverDnXpotrs(h, p, uplo, n, B.nrhs, dt, A.r.address, A.ld, dt, B.r.address, B.ld, info),
      undefined,
      undefined,
      [],
    );
  }

  // ── LU ───────────────────────────────────────────────────────────────────────────────────────

  /**
   * LU factorization with partial pivoting in place (cusolverDnXgetrf). A row-major a is factored as
   * Aᵀ (`transposed` in the result), which getrs accounts for. Throws SingularMatrixError (with the
   * index of the zero pivot) when U is exactly singular. The pivots are allocated (i64) unless given.
   * @param a The matrix factored in place (L below the diagonal, U on and above): a square 2-D view of device memory (f32, f64, c64 or c128), column-major
   * (strides [1, ld]) or row-major (strides [ld, 1]).
   * @param opts `pivots`: device memory for the min(rows, cols) row interchanges (i64, 1-based); default allocated stream-ordered and freed by the result's
   * close().
   */
  getrf(a: StridedView, opts?: { pivots?: Operand }): Promise<LuFactors> {
    return this.settle(this.enqueueGetrf(a, opts));
  }

  /**
   * {@link DenseSolver.getrf}, blocking until done.
   * @param a The matrix factored in place (L below the diagonal, U on and above): a square 2-D view of device memory (f32, f64, c64 or c128), column-major
   * (strides [1, ld]) or row-major (strides [ld, 1]).
   * @param opts `pivots`: device memory for the min(rows, cols) row interchanges (i64, 1-based); default allocated stream-ordered and freed by the result's
   * close().
   */
  getrfSync(a: StridedView, opts?: { pivots?: Operand }): LuFactors {
    return this.settleSync(this.enqueueGetrf(a, opts));
  }

  private enqueueGetrf(a: StridedView, opts: { pivots?: Operand } | undefined): Pending<LuFactors> {
    const where = 'DenseSolver.getrf';
    const o = options(where, opts, ['pivots']);
    const A = solverMatrix(where, 'a', a);
    const k = Math.min(A.m, A.n);
    if (o.pivots !== undefined) outputVector(where, 'pivots', o.pivots, 'i64', k);
    const api = this.api(where, { a: A.r, pivots: o.pivots });
    const pivots = o.pivots ?? allocVector('i64', k, this.stream);
    const allocated = o.pivots === undefined ? [(pivots as StridedView).buffer as DeviceBuffer] : [];
    const ipiv = operand(where, 'pivots', pivots, 'i64').address;
    const [h, p, dt] = [this.handle, this.params, cudaDataType(where, A.dtype)];
    let sizes: Sizes;
    try {
      sizes = api.cusolverDnXgetrf_bufferSize(h, p, A.m, A.n, dt, A.r.address, A.ld, dt);
    } catch (e) {
      for (const b of allocated) b.close();
      throw e;
    }
    const lu = new LuFactors(SEALED, a, pivots, !A.colMajor, allocated.length > 0);
    return this.launch(
      where,
      'cusolverDnXgetrf',
      sizes,
      (w, wb, hw, hb, info) => api.cusolverDnXgetrf(h, p, A.m, A.n, dt, A.r.address, A.ld, ipiv, dt, w, wb, hw, hb, info),
      (info) => new SingularMatrixError(where, 'cusolverDnXgetrf', info),
      lu,
      allocated,
    );
  }

  /**
   * Solves a x = b in place in b from getrf's factors (a square). b: a vector or a column-major [n, nrhs] view.
   * @param lu What getrf returned for the square a (its factors, pivots and layout).
   * @param b The right-hand sides, overwritten by the solution: a vector of n elements, or a column-major [n, nrhs] view, of a's dtype.
   */
  getrs(lu: LuFactors, b: Operand): Promise<void> {
    return this.settle(this.enqueueGetrs(lu, b));
  }

  /**
   * {@link DenseSolver.getrs}, blocking until done.
   * @param lu What getrf returned for the square a (its factors, pivots and layout).
   * @param b The right-hand sides, overwritten by the solution: a vector of n elements, or a column-major [n, nrhs] view, of a's dtype.
   */
  getrsSync(lu: LuFactors, b: Operand): void {
    this.settleSync(this.enqueueGetrs(lu, b));
  }

  private enqueueGetrs(lu: LuFactors, b: Operand): Pending<void> {
    const where = 'DenseSolver.getrs';
    if (!(lu instanceof LuFactors)) throw new TypeError(`${where}: lu must be the LuFactors getrf returned, got ${describe(lu)}`);
    const A = solverMatrix(where, 'lu.a', lu.a);
    const n = checkSquare(where, 'lu.a', A);
    const B = rightHandSides(where, 'b', b, A.dtype, n);
    // LuFactors' fields are writable in JS: pivots checked as getrf's output was (n contiguous i64), transposed a boolean
    const ipiv = outputVector(where, 'lu.pivots', lu.pivots, 'i64', n);
    if (typeof lu.transposed !== 'boolean') throw new TypeError(`${where}: lu.transposed must be a boolean, got ${describe(lu.transposed)}`);
    const api = this.api(where, { 'lu.a': A.r, b: B.r, 'lu.pivots': lu.pivots });
    const [h, p, dt, trans] = [this.handle, this.params, cudaDataType(where, A.dtype), lu.transposed ? OP_T : OP_N];
    return this.launch(
      where,
      'cusolverDnXgetrs',
      undefined,
      (_w, _wb, _hw, _hb, info) => api.cusolverDnXgetrs(h, p, trans, n, B.nrhs, dt, A.r.address, A.ld, ipiv, dt, B.r.address, B.ld, info),
      undefined,
      undefined,
      [],
    );
  }

  // ── QR ───────────────────────────────────────────────────────────────────────────────────────

  /**
   * QR factorization in place of a column-major m × n a (cusolverDnXgeqrf): R on and above the
   * diagonal, the Householder reflectors below, their scalars in tau (min(m, n) elements, allocated
   * unless given). orgqr turns them into Q.
   * @param a The m × n matrix factored in place (R on and above the diagonal, the reflectors below): a column-major 2-D view (strides [1, ld]) of device
   * memory, f32, f64, c64 or c128.
   * @param opts `tau`: device memory for the min(m, n) reflector scalars, of a's dtype; default allocated stream-ordered (close its buffer when done).
   */
  geqrf(a: StridedView, opts?: { tau?: Operand }): Promise<Operand> {
    return this.settle(this.enqueueGeqrf(a, opts));
  }

  /**
   * {@link DenseSolver.geqrf}, blocking until done.
   * @param a The m × n matrix factored in place (R on and above the diagonal, the reflectors below): a column-major 2-D view (strides [1, ld]) of device
   * memory, f32, f64, c64 or c128.
   * @param opts `tau`: device memory for the min(m, n) reflector scalars, of a's dtype; default allocated stream-ordered (close its buffer when done).
   */
  geqrfSync(a: StridedView, opts?: { tau?: Operand }): Operand {
    return this.settleSync(this.enqueueGeqrf(a, opts));
  }

  private enqueueGeqrf(a: StridedView, opts: { tau?: Operand } | undefined): Pending<Operand> {
    const where = 'DenseSolver.geqrf';
    const o = options(where, opts, ['tau']);
    const A = solverMatrix(where, 'a', a);
    checkColMajor(where, 'a', A);
    const k = Math.min(A.m, A.n);
    if (o.tau !== undefined) outputVector(where, 'tau', o.tau, A.dtype, k);
    const api = this.api(where, { a: A.r, tau: o.tau });
    const tau = o.tau ?? allocVector(A.dtype, k, this.stream);
    const allocated = o.tau === undefined ? [(tau as StridedView).buffer as DeviceBuffer] : [];
    const tauAddress = operand(where, 'tau', tau, A.dtype).address;
    const [h, p, dt] = [this.handle, this.params, cudaDataType(where, A.dtype)];
    let sizes: Sizes;
    try {
      sizes = api.cusolverDnXgeqrf_bufferSize(h, p, A.m, A.n, dt, A.r.address, A.ld, dt, tauAddress, dt);
    } catch (e) {
      for (const b of allocated) b.close();
      throw e;
    }
    return this.launch(
      where,
      'cusolverDnXgeqrf',
      sizes,
      (w, wb, hw, hb, info) => api.cusolverDnXgeqrf(h, p, A.m, A.n, dt, A.r.address, A.ld, dt, tauAddress, dt, w, wb, hw, hb, info),
      undefined,
      tau,
      allocated,
    );
  }

  /**
   * Overwrites the column-major m × n a (m ≥ n) holding geqrf's reflectors with the first n columns of
   * Q (cusolverDn{S,D}orgqr / {C,Z}ungqr, whose 32-bit sizes limit m and n to 2³¹ − 1).
   * @param a geqrf's output, overwritten with the first n columns of Q: a column-major 2-D view (strides [1, ld]) of device memory, f32, f64, c64 or c128, m
   * ≥ n.
   * @param tau The reflector scalars geqrf returned (min(m, n) elements of a's dtype).
   */
  orgqr(a: StridedView, tau: Operand): Promise<void> {
    return this.settle(this.enqueueOrgqr(a, tau));
  }

  /**
   * {@link DenseSolver.orgqr}, blocking until done.
   * @param a geqrf's output, overwritten with the first n columns of Q: a column-major 2-D view (strides [1, ld]) of device memory, f32, f64, c64 or c128, m
   * ≥ n.
   * @param tau The reflector scalars geqrf returned (min(m, n) elements of a's dtype).
   */
  orgqrSync(a: StridedView, tau: Operand): void {
    this.settleSync(this.enqueueOrgqr(a, tau));
  }

  private enqueueOrgqr(a: StridedView, tau: Operand): Pending<void> {
    const where = 'DenseSolver.orgqr';
    const A = solverMatrix(where, 'a', a);
    checkColMajor(where, 'a', A);
    if (A.m < A.n) throw new RangeError(`${where}: a must have rows ≥ cols, got ${A.m}×${A.n}`);
    if (A.m > INT32_MAX || A.ld > INT32_MAX) throw new RangeError(`${where}: orgqr takes 32-bit sizes, a is ${A.m}×${A.n} (ld ${A.ld})`);
    const k = A.n;
    const tauAddress = outputVector(where, 'tau', tau, A.dtype, k);
    const api = this.api(where, { a: A.r, tau });
    const fn = ORGQR[A.dtype];
    const h = this.handle;
    // the legacy call counts its workspace in elements of the data type
    const lwork = (api[`${fn}_bufferSize`] as typeof api.cusolverDnSorgqr_bufferSize)(h, A.m, A.n, k, A.r.address, A.ld, tauAddress);
    const sizes = { workspaceInBytesOnDevice: lwork * DTYPE_SIZES[A.dtype], workspaceInBytesOnHost: 0 };
    return this.launch(
      where,
      fn,
      sizes,
      (w, _wb, _hw, _hb, info) => (api[fn] as typeof api.cusolverDnSorgqr)(h, A.m, A.n, k, A.r.address, A.ld, tauAddress, w, lwork, info),
      undefined,
      undefined,
      [],
    );
  }

  // ── eigen and singular values ────────────────────────────────────────────────────────────────

  /**
   * Eigenvalues (ascending, real: f32 for f32/c64, f64 for f64/c128; allocated unless `w` is given) and,
   * with `vectors` (default true), eigenvectors of the symmetric/Hermitian a, read from its `lower`
   * (default) triangle. The eigenvectors overwrite a: column j of a column-major a, row j of a row-major
   * (real) a, is the eigenvector of w[j]. Throws ConvergenceError when the solver does not converge.
   * @param a The symmetric or Hermitian matrix (a square 2-D view of device memory (f32, f64, c64 or c128), column-major (strides [1, ld]) or row-major
   * (strides [ld, 1]; real only)); the eigenvectors overwrite it (columns of a column-major a, rows of a row-major one).
   * @param opts `lower` (read the lower triangle, default true, else the upper; in a's own layout), `vectors` (compute the eigenvectors, default true) and
   * `w` (device memory for the n eigenvalues, of a's real dtype; default allocated stream-ordered).
   */
  syevd(a: StridedView, opts?: { lower?: boolean; vectors?: boolean; w?: Operand }): Promise<Operand> {
    return this.settle(this.enqueueSyevd(a, opts));
  }

  /**
   * {@link DenseSolver.syevd}, blocking until done.
   * @param a The symmetric or Hermitian matrix (a square 2-D view of device memory (f32, f64, c64 or c128), column-major (strides [1, ld]) or row-major
   * (strides [ld, 1]; real only)); the eigenvectors overwrite it (columns of a column-major a, rows of a row-major one).
   * @param opts `lower` (read the lower triangle, default true, else the upper; in a's own layout), `vectors` (compute the eigenvectors, default true) and
   * `w` (device memory for the n eigenvalues, of a's real dtype; default allocated stream-ordered).
   */
  syevdSync(a: StridedView, opts?: { lower?: boolean; vectors?: boolean; w?: Operand }): Operand {
    return this.settleSync(this.enqueueSyevd(a, opts));
  }

  private enqueueSyevd(a: StridedView, opts: { lower?: boolean; vectors?: boolean; w?: Operand } | undefined): Pending<Operand> {
    const where = 'DenseSolver.syevd';
    const o = options(where, opts, ['lower', 'vectors', 'w']);
    const lower = flag(where, 'lower', o.lower, true);
    const jobz = flag(where, 'vectors', o.vectors, true) ? 1 : 0;
    const A = solverMatrix(where, 'a', a);
    const n = checkSquare(where, 'a', A);
    checkComplexLayout(where, 'a', A);
    const real = REAL_OF[A.dtype];
    if (o.w !== undefined) outputVector(where, 'w', o.w, real, n);
    const api = this.api(where, { a: A.r, w: o.w });
    const w = o.w ?? allocVector(real, n, this.stream);
    const allocated = o.w === undefined ? [(w as StridedView).buffer as DeviceBuffer] : [];
    const wAddress = operand(where, 'w', w, real).address;
    const [h, p, uplo, dt, rt] = [this.handle, this.params, fill(lower, A.colMajor), cudaDataType(where, A.dtype), cudaDataType(where, real)];
    let sizes: Sizes;
    try {
      sizes = api.cusolverDnXsyevd_bufferSize(h, p, jobz, uplo, n, dt, A.r.address, A.ld, rt, wAddress, dt);
    } catch (e) {
      for (const b of allocated) b.close();
      throw e;
    }
    return this.launch(
      where,
      'cusolverDnXsyevd',
      sizes,
      (ws, wb, hw, hb, info) => api.cusolverDnXsyevd(h, p, jobz, uplo, n, dt, A.r.address, A.ld, rt, wAddress, dt, ws, wb, hw, hb, info),
      (info) => new ConvergenceError(where, 'cusolverDnXsyevd', info),
      w,
      allocated,
    );
  }

  /**
   * Singular value decomposition a = u · diag(s) · vt (cusolverDnXgesvd; a is overwritten). `vectors`:
   * 'all' (default: u and vt square), 'thin' (min(m, n) columns of u / rows of vt) or 'none'. Outputs are
   * allocated unless given, in a's layout. cuSOLVER needs rows ≥ cols of the matrix it sees: a tall
   * column-major a or a wide row-major a (for the others, decompose aᵀ = v · diag(s) · uᵀ).
   * @param a The m × n matrix, destroyed: a 2-D view of device memory (f32, f64, c64 or c128), tall column-major or wide row-major (cuSOLVER needs rows ≥
   * cols of what it sees).
   * @param opts `vectors` ('all' default: square u and vt; 'thin': min(m, n) columns of u / rows of vt; 'none'), and `s`, `u`, `vt`: device memory for the
   * outputs in a's layout (default allocated stream-ordered; close their buffers when done).
   */
  gesvd(a: StridedView, opts?: { vectors?: 'all' | 'thin' | 'none'; s?: Operand; u?: Operand; vt?: Operand }): Promise<SvdResult> {
    return this.settle(this.enqueueGesvd(a, opts));
  }

  /**
   * {@link DenseSolver.gesvd}, blocking until done.
   * @param a The m × n matrix, destroyed: a 2-D view of device memory (f32, f64, c64 or c128), tall column-major or wide row-major (cuSOLVER needs rows ≥
   * cols of what it sees).
   * @param opts `vectors` ('all' default: square u and vt; 'thin': min(m, n) columns of u / rows of vt; 'none'), and `s`, `u`, `vt`: device memory for the
   * outputs in a's layout (default allocated stream-ordered; close their buffers when done).
   */
  gesvdSync(a: StridedView, opts?: { vectors?: 'all' | 'thin' | 'none'; s?: Operand; u?: Operand; vt?: Operand }): SvdResult {
    return this.settleSync(this.enqueueGesvd(a, opts));
  }

  private enqueueGesvd(a: StridedView, opts: { vectors?: 'all' | 'thin' | 'none'; s?: Operand; u?: Operand; vt?: Operand } | undefined): Pending<SvdResult> {
    const where = 'DenseSolver.gesvd';
    const { o, mode, A, shapes, real } = gesvdArgs(where, a, opts);
    const api = this.api(where, { a: A.r, s: o.s, u: o.u, vt: o.vt });
    const allocated: DeviceBuffer[] = [];
    const made = (v: Operand | undefined, alloc: () => StridedView): Operand => {
      if (v !== undefined) return v;
      const view = alloc();
      allocated.push(view.buffer as DeviceBuffer);
      return view;
    };
    try {
      const s = made(o.s, () => allocVector(real, A.n, this.stream));
      const u = mode === 'none' ? undefined : made(o.u, () => allocMatrix(A.dtype, shapes.u[0], shapes.u[1], A.colMajor, this.stream));
      const vt = mode === 'none' ? undefined : made(o.vt, () => allocMatrix(A.dtype, shapes.vt[0], shapes.vt[1], A.colMajor, this.stream));
      // a row-major a is Aᵀ = V Σ Uᵀ to cuSOLVER: its U is our vt (read row-major), its Vᵀ our u;
      // without vectors, null arrays with the leading dimensions cuSOLVER checks (m and n)
      let [cuU, cuVT] = [
        { address: 0, ld: A.m },
        { address: 0, ld: A.n },
      ];
      if (u !== undefined && vt !== undefined) {
        const uOut = outputMatrix(where, 'u', u, A.dtype, shapes.u[0], shapes.u[1], A.colMajor);
        const vtOut = outputMatrix(where, 'vt', vt, A.dtype, shapes.vt[0], shapes.vt[1], A.colMajor);
        [cuU, cuVT] = A.colMajor ? [uOut, vtOut] : [vtOut, uOut];
      }
      const sAddress = operand(where, 's', s, real).address;
      const [h, p, job, dt, rt] = [this.handle, this.params, JOBS[mode], cudaDataType(where, A.dtype), cudaDataType(where, real)];
      const args = [h, p, job, job, A.m, A.n, dt, A.r.address, A.ld, rt, sAddress, dt, cuU.address, cuU.ld, dt, cuVT.address, cuVT.ld, dt] as const;
      const sizes = api.cusolverDnXgesvd_bufferSize(...args);
      const run: Run = (w, wb, hw, hb, info) => api.cusolverDnXgesvd(...args, w, wb, hw, hb, info);
      const value: SvdResult = mode === 'none' ? { s } : { s, u, vt };
      return this.launch(where, 'cusolverDnXgesvd', sizes, run, (info) => new ConvergenceError(where, 'cusolverDnXgesvd', info), value, allocated);
    } catch (e) {
      for (const b of allocated) if (!b.closed) b.close();
      throw e;
    }
  }

  toString(): string {
    return `DenseSolver(${this.closed ? 'closed' : String(this.stream)})`;
  }
}

/**
 * The shapes (in a's layout) of u and vt. cuSOLVER sees m × n (m ≥ n) and writes U m × m ('all') or
 * m × n ('thin') and Vᵀ n × n; for a row-major a those are our vt and u read row-major.
 */
function svdShapes(A: { m: number; n: number; colMajor: boolean }, mode: 'all' | 'thin' | 'none'): { u: [number, number]; vt: [number, number] } {
  const uCols = mode === 'all' ? A.m : A.n;
  if (A.colMajor) return { u: [A.m, uCols], vt: [A.n, A.n] };
  return { u: [A.n, A.n], vt: [uCols, A.m] };
}

/** gesvd's arguments checked: the options, the vectors mode, a as cuSOLVER sees it, the output shapes and real dtype. */
function gesvdArgs(where: string, a: StridedView, opts: { vectors?: 'all' | 'thin' | 'none'; s?: Operand; u?: Operand; vt?: Operand } | undefined) {
  const o = options(where, opts, ['vectors', 's', 'u', 'vt']);
  const mode = o.vectors ?? 'all';
  if (mode !== 'all' && mode !== 'thin' && mode !== 'none') throw new TypeError(`${where}: vectors must be 'all', 'thin' or 'none', got ${describe(mode)}`);
  if (mode === 'none' && (o.u !== undefined || o.vt !== undefined)) throw new TypeError(`${where}: u and vt are not computed with vectors 'none'`);
  const A = solverMatrix(where, 'a', a);
  if (A.m < A.n) {
    throw new RangeError(
      `${where}: cuSOLVER's gesvd needs rows ≥ cols of the column-major matrix; a ${A.colMajor ? 'column' : 'row'}-major ${A.rows}×${A.cols} a is not: decompose its transpose (aᵀ = v · diag(s) · uᵀ)`,
    );
  }
  const shapes = svdShapes(A, mode);
  const real = REAL_OF[A.dtype];
  if (o.s !== undefined) outputVector(where, 's', o.s, real, A.n);
  for (const [name, v, [r, c]] of [
    ['u', o.u, shapes.u],
    ['vt', o.vt, shapes.vt],
  ] as const)
    if (v !== undefined) outputMatrix(where, name, v, A.dtype, r, c, A.colMajor);
  return { o, mode, A, shapes, real };
}
