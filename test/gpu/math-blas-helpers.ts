// Host-side matrices and CPU references for the BLAS/Matmul GPU suites: deterministic values already
// rounded to each dtype (so the GPU and the CPU start from the same numbers), a float64 GEMM with the
// magnitude Σ|a||b| per element for error bounds, and readers of device views.
import type { DType, StridedView } from '../../src/memory/strided-view';
import type { Order, Transpose } from '../../src/math';
import { bfloat16Bits as toBfloat16Bits, halfBits as toHalfBits } from '../../support';

/** A real or complex scalar as the tests pass them. */
export type TestScalar = number | { re: number; im: number };

/** Any matrix the references read: element (i, j) as [re, im]. */
export interface MatrixLike {
  readonly rows: number;
  readonly cols: number;
  get(i: number, j: number): [number, number];
}

/** IEEE half bits → number. */
export function fromHalf(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

/** bfloat16 bits → number. */
export function fromBf16(b: number): number {
  return new Float32Array(new Uint32Array([b << 16]).buffer)[0];
}

const complexTypes = new Set<DType>(['c64', 'c128']);

function storageFor(dtype: DType, n: number): ArrayBufferView & { [i: number]: number; readonly length: number } {
  switch (dtype) {
    case 'f32':
    case 'c64':
      return new Float32Array(n);
    case 'f64':
    case 'c128':
      return new Float64Array(n);
    case 'f16':
    case 'bf16':
      return new Uint16Array(n);
    case 'i8':
      return new Int8Array(n);
    case 'i32':
      return new Int32Array(n);
    default:
      throw new Error(`no test storage for ${dtype}`);
  }
}

function encode(dtype: DType, x: number): number {
  return dtype === 'f16' ? toHalfBits(x) : dtype === 'bf16' ? toBfloat16Bits(x) : x;
}

function decode(dtype: DType, x: number): number {
  return dtype === 'f16' ? fromHalf(x) : dtype === 'bf16' ? fromBf16(x) : x;
}

/** A rows×cols matrix in host memory laid out as the device copy will be (order, ld = extent + pad). */
export class HostMatrix implements MatrixLike {
  readonly ld: number;
  readonly storage: ArrayBufferView & { [i: number]: number; readonly length: number };
  private readonly parts: number;

  constructor(
    readonly rows: number,
    readonly cols: number,
    readonly dtype: DType,
    readonly order: Order,
    pad = 0,
    seed = 1,
  ) {
    this.ld = (order === 'row' ? cols : rows) + pad;
    this.parts = complexTypes.has(dtype) ? 2 : 1;
    const outer = order === 'row' ? rows : cols;
    this.storage = storageFor(dtype, Math.max(1, this.ld * outer) * this.parts);
    for (let k = 0; k < this.storage.length; k++) {
      const v = Math.sin(k * 12.9898 + seed * 78.233) * 0.5;
      this.storage[k] = dtype === 'i8' || dtype === 'i32' ? Math.round(v * 16) : encode(dtype, v);
    }
  }

  private at(i: number, j: number): number {
    return (this.order === 'row' ? i * this.ld + j : j * this.ld + i) * this.parts;
  }

  get(i: number, j: number): [number, number] {
    const p = this.at(i, j);
    return [decode(this.dtype, this.storage[p]), this.parts === 2 ? this.storage[p + 1] : 0];
  }

  /** Rows [start, start + rows) as a matrix. */
  block(start: number, rows: number): MatrixLike {
    return { rows, cols: this.cols, get: (i, j) => this.get(start + i, j) };
  }

  /** A device view read back (C order), decoded. */
  static read(view: StridedView): MatrixLike {
    const data = view.toArray() as unknown as { [i: number]: number };
    const [rows, cols] = view.shape;
    const parts = complexTypes.has(view.dtype) ? 2 : 1;
    return { rows, cols, get: (i, j) => [decode(view.dtype, data[(i * cols + j) * parts]), parts === 2 ? data[(i * cols + j) * parts + 1] : 0] };
  }
}

/** A reference result: values and Σ|alpha·a·b| + |beta·c| per element (the scale errors are measured against). */
export interface Reference {
  rows: number;
  cols: number;
  re: Float64Array;
  im: Float64Array;
  mag: Float64Array;
}

function parts(s: TestScalar): [number, number] {
  return typeof s === 'number' ? [s, 0] : [s.re, s.im];
}

function opGet(x: MatrixLike, t: Transpose, i: number, j: number): [number, number] {
  if (t === 'N') return x.get(i, j);
  const [re, im] = x.get(j, i);
  return t === 'C' ? [re, -im] : [re, im];
}

/** alpha·op(a)·op(b) + beta·c in float64 (c undefined: beta ignored). */
export function cpuGemm(a: MatrixLike, tA: Transpose, b: MatrixLike, tB: Transpose, c: MatrixLike | undefined, alpha: TestScalar, beta: TestScalar): Reference {
  const m = tA === 'N' ? a.rows : a.cols;
  const k = tA === 'N' ? a.cols : a.rows;
  const n = tB === 'N' ? b.cols : b.rows;
  const [ar, ai] = parts(alpha);
  const [br, bi] = parts(beta);
  const ref: Reference = { rows: m, cols: n, re: new Float64Array(m * n), im: new Float64Array(m * n), mag: new Float64Array(m * n) };
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sr = 0,
        si = 0,
        mag = 0;
      for (let l = 0; l < k; l++) {
        const [xr, xi] = opGet(a, tA, i, l);
        const [yr, yi] = opGet(b, tB, l, j);
        sr += xr * yr - xi * yi;
        si += xr * yi + xi * yr;
        mag += Math.hypot(xr, xi) * Math.hypot(yr, yi);
      }
      let re = ar * sr - ai * si;
      let im = ar * si + ai * sr;
      mag *= Math.hypot(ar, ai);
      if (c !== undefined) {
        const [cr, ci] = c.get(i, j);
        re += br * cr - bi * ci;
        im += br * ci + bi * cr;
        mag += Math.hypot(br, bi) * Math.hypot(cr, ci);
      }
      ref.re[i * n + j] = re;
      ref.im[i * n + j] = im;
      ref.mag[i * n + j] = mag;
    }
  }
  return ref;
}

/** max |got − ref| / (Σ|a||b| + |beta·c|) over every element (NaN counts as Infinity). */
export function maxRelativeError(got: MatrixLike, ref: Reference): number {
  if (got.rows !== ref.rows || got.cols !== ref.cols) throw new Error(`shape ${got.rows}×${got.cols} vs reference ${ref.rows}×${ref.cols}`);
  let worst = 0;
  for (let i = 0; i < ref.rows; i++) {
    for (let j = 0; j < ref.cols; j++) {
      const [re, im] = got.get(i, j);
      const p = i * ref.cols + j;
      const e = Math.hypot(re - ref.re[p], im - ref.im[p]) / (ref.mag[p] + 1e-30);
      worst = Math.max(worst, Number.isNaN(e) ? Infinity : e);
    }
  }
  return worst;
}
