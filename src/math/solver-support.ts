// What DenseSolver (solver.ts) builds on: the errors cuSOLVER's `info` becomes, the slots `info` is
// read through without blocking (a device int copied back into pinned host memory on the stream, read
// once the stream is awaited), and the solver's view of a matrix operand (column-major; a row-major
// view is its transpose to cuSOLVER).
import * as drv from '../driver';
import type { Context } from '../context';
import { describe } from '../describe';
import { CudaError } from '../errors';
import { DeviceBuffer } from '../memory/device-buffer';
import { PinnedHostBuffer } from '../memory/pinned-host-buffer';
import { DTYPE_SIZES, StridedView } from '../memory/strided-view';
import type { Stream } from '../stream';
import { checkDType, isComplex, operand, type DType, type ResolvedOperand } from './common';

/** Element types DenseSolver factors. */
export type SolverDType = 'f32' | 'f64' | 'c64' | 'c128';
export const SOLVER_DTYPES: readonly SolverDType[] = ['f32', 'f64', 'c64', 'c128'];
/** The real type of each solver dtype (eigenvalues and singular values are real). */
export const REAL_OF: Readonly<Record<SolverDType, 'f32' | 'f64'>> = Object.freeze({ f32: 'f32', f64: 'f64', c64: 'f32', c128: 'f64' });

// ── errors ───────────────────────────────────────────────────────────────────────────────────────

/**
 * A factorization or decomposition reported a non-zero `info` (cuSOLVER's devInfo): `info` is that
 * value, `func` the cuSOLVER function, `code` equals `info`, and the message starts with the
 * `DenseSolver.method` called. The subclasses say which failure it was.
 */
export class SolverError extends CudaError {
  /** cuSOLVER's info: > 0 a numerical failure (see the subclass), < 0 the -info-th parameter was wrong. */
  readonly info: number;
  /**
   * Made by DenseSolver from a non-zero info.
   * @param where The `DenseSolver.method` that reported it; the message starts with it.
   * @param func The cuSOLVER C function that wrote the info (e.g. 'cusolverDnXpotrf').
   * @param info cuSOLVER's info, non-zero: > 0 a numerical failure, < 0 the -info-th parameter was wrong.
   * @param name The error's name, as a status name reads (e.g. 'CUSOLVER_INFO_SINGULAR').
   * @param message What went wrong, after `where:`; the function and info are appended.
   */
  constructor(where: string, func: string, info: number, name: string, message: string) {
    super('cusolver', func, info, name, undefined, `${where}: ${message} (${func} info = ${info})`);
    this.info = info;
  }
}

/** Cholesky (potrf) met a leading minor that is not positive: the matrix is not positive definite. */
export class NotPositiveDefiniteError extends SolverError {
  /** 0-based row/column where the factorization stopped: the leading minor of order index + 1 is not positive. */
  readonly index: number;
  /**
   * Made by DenseSolver when potrf reports a positive `info`; `where` is the `DenseSolver.method` called.
   * @param where The `DenseSolver.method` that reported it; the message starts with it.
   * @param func The cuSOLVER C function that wrote the info (e.g. 'cusolverDnXpotrf').
   * @param info potrf's positive info: the order of the leading minor that is not positive (index + 1).
   */
  constructor(where: string, func: string, info: number) {
    super(
      where,
      func,
      info,
      'CUSOLVER_INFO_NOT_POSITIVE_DEFINITE',
      `the matrix is not positive definite: the leading minor of order ${info} (row/column ${info - 1}) is not positive`,
    );
    this.index = info - 1;
  }
}

/** LU (getrf) found an exactly zero pivot: U[index][index] is 0 and the matrix is singular. */
export class SingularMatrixError extends SolverError {
  /** 0-based index of the zero diagonal element of U. */
  readonly index: number;
  /**
   * Made by DenseSolver when getrf reports a positive `info`; `where` is the `DenseSolver.method` called.
   * @param where The `DenseSolver.method` that reported it; the message starts with it.
   * @param func The cuSOLVER C function that wrote the info (e.g. 'cusolverDnXpotrf').
   * @param info getrf's positive info: the 1-based index of the zero pivot (index + 1).
   */
  constructor(where: string, func: string, info: number) {
    super(where, func, info, 'CUSOLVER_INFO_SINGULAR', `the matrix is singular: U[${info - 1}][${info - 1}] is exactly zero`);
    this.index = info - 1;
  }
}

/** An eigen or singular value decomposition (syevd, gesvd) did not converge. */
export class ConvergenceError extends SolverError {
  /** Off-diagonal elements (syevd) or superdiagonals (gesvd) that did not converge to zero. */
  readonly unconverged: number;
  /**
   * Made by DenseSolver when syevd or gesvd reports a positive `info`; `where` is the `DenseSolver.method` called.
   * @param where The `DenseSolver.method` that reported it; the message starts with it.
   * @param func The cuSOLVER C function that wrote the info (e.g. 'cusolverDnXpotrf').
   * @param info syevd's or gesvd's positive info: how many off-diagonal elements or superdiagonals did not converge.
   */
  constructor(where: string, func: string, info: number) {
    super(where, func, info, 'CUSOLVER_INFO_NO_CONVERGENCE', `the decomposition did not converge: ${info} element(s) did not converge to zero`);
    this.unconverged = info;
  }
}

/** The error of `info` for `func`: undefined for 0, an illegal-argument SolverError below 0, else `positive(info)`. */
export function infoError(where: string, func: string, info: number, positive?: (info: number) => SolverError): SolverError | undefined {
  if (info === 0) return undefined;
  if (info < 0) return new SolverError(where, func, info, 'CUSOLVER_INFO_ILLEGAL_ARGUMENT', `cuSOLVER refused parameter ${-info}`);
  return positive !== undefined ? positive(info) : new SolverError(where, func, info, 'CUSOLVER_INFO_FAILED', 'the call reported a failure');
}

// ── info slots ───────────────────────────────────────────────────────────────────────────────────

const SLOTS_PER_CHUNK = 64;

/**
 * cuSOLVER writes `info` into device memory; each call takes a slot (a device int and a pinned host
 * int), the call's info is copied back on its stream, and read after the stream was awaited. Slots
 * are reused; the memory is freed once the solver is closed and no call is pending.
 */
export class InfoSlots {
  private readonly chunks: { device: DeviceBuffer; host: PinnedHostBuffer; view: Int32Array }[] = [];
  private readonly free: number[] = [];
  private pending = 0;
  private closing = false;

  constructor(private readonly context: Context) {}

  /** A free slot (more memory when every slot is taken). */
  take(): number {
    if (this.free.length === 0) this.grow();
    this.pending++;
    return this.free.pop()!;
  }

  private grow(): void {
    const bytes = 4 * SLOTS_PER_CHUNK;
    const device = DeviceBuffer.alloc(bytes, { context: this.context });
    let host: PinnedHostBuffer;
    try {
      host = PinnedHostBuffer.alloc(bytes, { context: this.context });
    } catch (e) {
      device.close();
      throw e;
    }
    const base = this.chunks.length * SLOTS_PER_CHUNK;
    this.chunks.push({ device, host, view: host.array(Int32Array) });
    for (let i = SLOTS_PER_CHUNK - 1; i >= 0; i--) this.free.push(base + i);
  }

  /** The device address cuSOLVER writes the slot's info to. */
  device(slot: number): number {
    return this.chunks[Math.floor(slot / SLOTS_PER_CHUNK)].device.ptr + 4 * (slot % SLOTS_PER_CHUNK);
  }

  /** Enqueues the copy of the slot's info to pinned host memory on `stream` (after the call that writes it). */
  copyBack(slot: number, stream: Stream): void {
    const chunk = this.chunks[Math.floor(slot / SLOTS_PER_CHUNK)];
    const i = slot % SLOTS_PER_CHUNK;
    chunk.view[i] = 0;
    drv.callOnStream(stream.context, stream.handle, 'cuMemcpyDtoHAsync', chunk.host.hostAddress + 4 * i, chunk.device.ptr + 4 * i, 4, stream.handle);
  }

  /** The info copied back (valid once the stream passed the copy). */
  read(slot: number): number {
    return this.chunks[Math.floor(slot / SLOTS_PER_CHUNK)].view[slot % SLOTS_PER_CHUNK];
  }

  /** Gives the slot back; frees the memory when the solver was closed and this was the last pending call. */
  release(slot: number): void {
    this.free.push(slot);
    this.pending--;
    if (this.closing && this.pending === 0) this.freeAll();
  }

  /** Frees the memory now, or after the last pending call. */
  close(): void {
    this.closing = true;
    if (this.pending === 0) this.freeAll();
  }

  private freeAll(): void {
    for (const c of this.chunks.splice(0)) {
      c.device.close();
      c.host.close();
    }
    this.free.length = 0;
  }
}

// ── operands ─────────────────────────────────────────────────────────────────────────────────────

/**
 * A matrix as cuSOLVER sees it (column-major m × n with leading dimension ld). A row-major view
 * [rows, cols] is the column-major cols × rows matrix Aᵀ: `colMajor` false says so.
 */
export interface SolverMatrix {
  readonly r: ResolvedOperand;
  readonly dtype: SolverDType;
  /** The view's shape. */
  readonly rows: number;
  readonly cols: number;
  /** cuSOLVER's m, n, lda. */
  readonly m: number;
  readonly n: number;
  readonly ld: number;
  readonly colMajor: boolean;
}

/** Resolves a 2-D view, row-major (strides [ld ≥ cols, 1]) or column-major (strides [1, ld ≥ rows]). */
export function solverMatrix(where: string, name: string, v: unknown, dtype?: SolverDType): SolverMatrix {
  if (!(v instanceof StridedView)) throw new TypeError(`${where}: ${name} must be a 2-D StridedView (row- or column-major), got ${describe(v)}`);
  const dt = checkDType(where, `${name}'s dtype`, v.dtype, SOLVER_DTYPES);
  if (dtype !== undefined && dt !== dtype) throw new TypeError(`${where}: ${name} holds ${dt}, expected ${dtype}`);
  const r = operand(where, name, v, dt);
  if (r.shape.length !== 2) throw new TypeError(`${where}: ${name} must be 2-D, got shape [${r.shape}]`);
  const [rows, cols] = r.shape;
  const [s0, s1] = r.strides;
  if (s0 === 1 && s1 >= Math.max(1, rows)) return { r, dtype: dt, rows, cols, m: rows, n: cols, ld: Math.max(1, s1, rows), colMajor: true };
  if (s1 === 1 && s0 >= Math.max(1, cols)) return { r, dtype: dt, rows, cols, m: cols, n: rows, ld: Math.max(1, s0, cols), colMajor: false };
  throw new TypeError(`${where}: ${name} must be row-major (strides [ld ≥ cols, 1]) or column-major (strides [1, ld ≥ rows]), got strides [${r.strides}]`);
}

/** Refuses a non-square matrix. */
export function checkSquare(where: string, name: string, a: SolverMatrix): number {
  if (a.rows !== a.cols) throw new RangeError(`${where}: ${name} must be square, got ${a.rows}×${a.cols}`);
  return a.n;
}

/** Refuses a row-major complex matrix where its transpose is not the same problem (it is the conjugate). */
export function checkComplexLayout(where: string, name: string, a: SolverMatrix): void {
  if (isComplex(a.dtype) && !a.colMajor) {
    throw new TypeError(`${where}: a row-major complex ${name} is the conjugate of the matrix cuSOLVER would see: pass a column-major view (strides [1, ld])`);
  }
}

/** Refuses a row-major matrix where the call needs the matrix itself in column-major order. */
export function checkColMajor(where: string, name: string, a: SolverMatrix): void {
  if (!a.colMajor) throw new TypeError(`${where}: ${name} must be column-major (strides [1, ld]): cuSOLVER would factor its transpose; see docs/math.md`);
}

/** Right-hand sides: a 1-D contiguous vector of n elements, or a column-major [n, nrhs] view. */
export function rightHandSides(where: string, name: string, v: unknown, dtype: SolverDType, n: number): { r: ResolvedOperand; nrhs: number; ld: number } {
  const r = operand(where, name, v, dtype);
  if (r.shape.length === 1) {
    if (r.shape[0] > 1 && r.strides[0] !== 1) throw new TypeError(`${where}: ${name} must be contiguous, got stride ${r.strides[0]}`);
    if (r.shape[0] < n) throw new RangeError(`${where}: ${name} holds ${r.shape[0]} elements, needs ${n}`);
    return { r, nrhs: 1, ld: Math.max(1, n) };
  }
  if (r.shape.length !== 2) throw new TypeError(`${where}: ${name} must be a vector or a 2-D view, got shape [${r.shape}]`);
  const [rows, cols] = r.shape;
  if (rows !== n) throw new RangeError(`${where}: ${name} must have ${n} rows, got ${rows}`);
  if (r.strides[0] === 1 && r.strides[1] >= Math.max(1, rows)) return { r, nrhs: cols, ld: Math.max(1, r.strides[1], n) };
  if (cols === 1 && (rows <= 1 || r.strides[0] === 1)) return { r, nrhs: 1, ld: Math.max(1, n) };
  throw new TypeError(`${where}: ${name} must be column-major (strides [1, ld]) for several right-hand sides: cuSOLVER solves each column in place`);
}

/** A new column-major (or row-major) rows × cols view of `dtype` on `stream`, owned by the caller. */
export function allocMatrix(dtype: DType, rows: number, cols: number, colMajor: boolean, stream: Stream): StridedView {
  const size = DTYPE_SIZES[dtype];
  const buf = DeviceBuffer.alloc(Math.max(1, rows * cols) * size, { stream });
  return StridedView.of(buf, { dtype, shape: [rows, cols], strides: colMajor ? [1, Math.max(1, rows)] : [Math.max(1, cols), 1] });
}

/** A new 1-D view of `length` elements of `dtype` on `stream`. */
export function allocVector(dtype: DType, length: number, stream: Stream): StridedView {
  const size = DTYPE_SIZES[dtype];
  const buf = DeviceBuffer.alloc(Math.max(1, length) * size, { stream });
  return StridedView.of(buf, { dtype, shape: [length] });
}

/** An output matrix given by the caller: a view of `dtype`, rows × cols, in the layout the call writes. */
export function outputMatrix(
  where: string,
  name: string,
  v: unknown,
  dtype: DType,
  rows: number,
  cols: number,
  colMajor: boolean,
): { address: number; ld: number } {
  const r = operand(where, name, v, dtype);
  if (r.shape.length !== 2 || r.shape[0] !== rows || r.shape[1] !== cols)
    throw new RangeError(`${where}: ${name} must be ${rows}×${cols}, got shape [${r.shape}]`);
  const [s0, s1] = r.strides;
  if (colMajor && (rows <= 1 || s0 === 1) && s1 >= Math.max(1, rows)) return { address: r.address, ld: Math.max(1, s1, rows) };
  if (!colMajor && (cols <= 1 || s1 === 1) && s0 >= Math.max(1, cols)) return { address: r.address, ld: Math.max(1, s0, cols) };
  throw new TypeError(
    `${where}: ${name} must be ${colMajor ? 'column-major (strides [1, ld])' : 'row-major (strides [ld, 1])'} like a, got strides [${r.strides}]`,
  );
}

/** An output vector given by the caller: 1-D contiguous, at least `length` elements of `dtype`. */
export function outputVector(where: string, name: string, v: unknown, dtype: DType, length: number): number {
  const r = operand(where, name, v, dtype);
  if (r.shape.length !== 1 || (r.shape[0] > 1 && r.strides[0] !== 1))
    throw new TypeError(`${where}: ${name} must be a 1-D contiguous vector, got shape [${r.shape}]`);
  if (r.shape[0] < length) throw new RangeError(`${where}: ${name} holds ${r.shape[0]} elements, needs ${length}`);
  return r.address;
}
