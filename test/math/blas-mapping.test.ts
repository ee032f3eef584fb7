// The row-/column-major mapping of Blas.gemm and gemv checked by arithmetic, without a GPU: the fake
// cuBLAS below really computes the column-major GEMM/GEMV it is called with, over host arrays standing
// for the device buffers. Every order of a, b, c and every transpose (conjugate included) must give
// op(a)·op(b) of the views as written.
import { driverlessContext } from '../helpers/fake-driver';
import { DeviceBuffer } from '../../src/memory/device-buffer';
import { StridedView } from '../../src/memory/strided-view';
import { Stream } from '../../src/stream';
import { Blas } from '../../src/math/blas';
import { matrix, type Order, type Transpose } from '../../src/math/matrix';

const memory = new Map<number, Float64Array>(); // buffer address → its elements (f64 parts)
function at(address: number): [Float64Array, number] {
  for (const [base, data] of memory) if (address >= base && address < base + data.byteLength) return [data, (address - base) / 8];
  throw new Error(`no fake memory at ${address}`);
}
type Cx = [number, number];
function scalar(v: unknown, complex: boolean): Cx {
  if (typeof v === 'number') return [v, 0]; // the typed layer takes real scalars as values
  const a = v as Float64Array;
  return complex ? [a[0], a[1]] : [a[0], 0];
}
/** Column-major C = alpha·op(A)·op(B) + beta·C over fake memory (parts = 1 real, 2 complex). */
function gemm(
  parts: number,
  ta: number,
  tb: number,
  m: number,
  n: number,
  k: number,
  alpha: Cx,
  A: number,
  lda: number,
  B: number,
  ldb: number,
  beta: Cx,
  C: number,
  ldc: number,
): void {
  const [a, a0] = at(A);
  const [b, b0] = at(B);
  const [c, c0] = at(C);
  const get = (mem: Float64Array, base: number, t: number, ld: number, i: number, j: number): Cx => {
    const p = base + parts * (t === 0 ? i + j * ld : j + i * ld);
    return [mem[p], parts === 2 ? (t === 2 ? -mem[p + 1] : mem[p + 1]) : 0];
  };
  const mul = (x: Cx, y: Cx): Cx => [x[0] * y[0] - x[1] * y[1], x[0] * y[1] + x[1] * y[0]];
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s: Cx = [0, 0];
      for (let l = 0; l < k; l++) {
        const p = mul(get(a, a0, ta, lda, i, l), get(b, b0, tb, ldb, l, j));
        s = [s[0] + p[0], s[1] + p[1]];
      }
      const q = c0 + parts * (i + j * ldc);
      const old: Cx = [c[q], parts === 2 ? c[q + 1] : 0];
      const r = mul(alpha, s);
      const bc = mul(beta, old);
      c[q] = r[0] + bc[0];
      if (parts === 2) c[q + 1] = r[1] + bc[1];
    }
  }
}
const fake: Record<string, (...args: never[]) => unknown> = {
  cublasCreate: () => 1,
  cublasSetStream: () => undefined,
  cublasSetPointerMode: () => undefined,
  cublasDestroy: () => undefined,
  cublasDgemm: ((
    h: number,
    ta: number,
    tb: number,
    m: number,
    n: number,
    k: number,
    al: unknown,
    A: number,
    lda: number,
    B: number,
    ldb: number,
    be: unknown,
    C: number,
    ldc: number,
  ) => gemm(1, ta, tb, m, n, k, scalar(al, false), A, lda, B, ldb, scalar(be, false), C, ldc)) as never,
  cublasZgemm: ((
    h: number,
    ta: number,
    tb: number,
    m: number,
    n: number,
    k: number,
    al: unknown,
    A: number,
    lda: number,
    B: number,
    ldb: number,
    be: unknown,
    C: number,
    ldc: number,
  ) => gemm(2, ta, tb, m, n, k, scalar(al, true), A, lda, B, ldb, scalar(be, true), C, ldc)) as never,
  // gemv as a GEMM with n = 1: y (m' = op rows) = alpha·op(A)·x + beta·y
  cublasDgemv: ((
    h: number,
    t: number,
    m: number,
    n: number,
    al: unknown,
    A: number,
    lda: number,
    x: number,
    incx: number,
    be: unknown,
    y: number,
    incy: number,
  ) => {
    if (incx !== 1 || incy !== 1) throw new Error('the mapping test uses unit increments');
    const [rows, cols] = t === 0 ? [m, n] : [n, m];
    gemm(1, t, 0, rows, 1, cols, scalar(al, false), A, lda, x, Math.max(1, cols), scalar(be, false), y, Math.max(1, rows));
  }) as never,
};
jest.mock('../../src/releases', () => ({ ...jest.requireActual('../../src/releases'), loadCublas: () => fake }));

const ctx = driverlessContext();
const stream = Stream.legacyDefault(ctx);
let base = 0x7f3000000000;
const rnd = (i: number): number => Math.round(Math.sin(i * 12.9898 + 78.233) * 8) / 4; // exact in f64

/** A rows×cols matrix stored in `order` with `pad` extra leading elements, filled with small exact values. */
function hostMatrix(rows: number, cols: number, complex: boolean, order: Order, pad: number, seed: number): StridedView {
  const parts = complex ? 2 : 1;
  const ld = (order === 'row' ? cols : rows) + pad;
  const elements = ld * (order === 'row' ? rows : cols);
  const data = Float64Array.from({ length: elements * parts }, (_, i) => rnd(i + 1000 * seed));
  const buf = DeviceBuffer.wrap(base, data.byteLength, { context: ctx });
  memory.set(base, data);
  base += 0x100000;
  return matrix(buf, { dtype: complex ? 'c128' : 'f64', rows, cols, order, ld });
}
function element(v: StridedView, i: number, j: number): Cx {
  const [mem, e] = at(v.address);
  const parts = v.dtype === 'c128' ? 2 : 1;
  const p = e + parts * (i * v.strides[0] + j * v.strides[1]);
  return [mem[p], parts === 2 ? mem[p + 1] : 0];
}
function opElement(v: StridedView, t: Transpose, i: number, j: number): Cx {
  if (t === 'N') return element(v, i, j);
  const [re, im] = element(v, j, i);
  return t === 'C' ? [re, -im] : [re, im];
}

let blas: Blas;
beforeAll(() => {
  blas = Blas.create({ stream });
});
afterAll(() => blas.close());

const orders: Order[] = ['row', 'col'];
const realCases: [Transpose, Transpose, Order, Order, Order][] = [];
for (const tA of ['N', 'T'] as Transpose[])
  for (const tB of ['N', 'T'] as Transpose[]) for (const oa of orders) for (const ob of orders) for (const oc of orders) realCases.push([tA, tB, oa, ob, oc]);

test.each(realCases)('f64 transA %s transB %s, a %s-major, b %s-major, c %s-major (padded)', (tA, tB, oa, ob, oc) => {
  const [m, n, k] = [5, 7, 3];
  const a = hostMatrix(tA === 'N' ? m : k, tA === 'N' ? k : m, false, oa, 2, 1);
  const b = hostMatrix(tB === 'N' ? k : n, tB === 'N' ? n : k, false, ob, 1, 2);
  const c = hostMatrix(m, n, false, oc, 3, 3);
  const before = Array.from({ length: m }, (_, i) => Array.from({ length: n }, (_, j) => element(c, i, j)[0]));
  blas.gemm(a, b, c, { transA: tA, transB: tB, alpha: 2, beta: -1 });
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let l = 0; l < k; l++) s += opElement(a, tA, i, l)[0] * opElement(b, tB, l, j)[0];
      expect(element(c, i, j)[0]).toBe(2 * s - before[i][j]);
    }
  }
});

const complexCases: [Transpose, Transpose, Order][] = [];
for (const tA of ['N', 'T', 'C'] as Transpose[]) for (const tB of ['N', 'T', 'C'] as Transpose[]) for (const o of orders) complexCases.push([tA, tB, o]);

test.each(complexCases)('c128 transA %s transB %s, everything %s-major: conjugates land where written', (tA, tB, o) => {
  const [m, n, k] = [4, 3, 5];
  const a = hostMatrix(tA === 'N' ? m : k, tA === 'N' ? k : m, true, o, 1, 4);
  const b = hostMatrix(tB === 'N' ? k : n, tB === 'N' ? n : k, true, o, 0, 5);
  const c = hostMatrix(m, n, true, o, 0, 6);
  blas.gemm(a, b, c, { transA: tA, transB: tB, alpha: [0, 1] });
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let re = 0,
        im = 0;
      for (let l = 0; l < k; l++) {
        const [xr, xi] = opElement(a, tA, i, l);
        const [yr, yi] = opElement(b, tB, l, j);
        re += xr * yr - xi * yi;
        im += xr * yi + xi * yr;
      }
      expect(element(c, i, j).map((v) => v + 0)).toEqual([-im + 0, re + 0]); // alpha = i (+ 0: -0 and 0 alike)
    }
  }
});

test.each(['row', 'col'] as const)('gemv with a %s-major a, N and T', (order) => {
  const a = hostMatrix(4, 6, false, order, 2, 7);
  for (const t of ['N', 'T'] as const) {
    const [xn, yn] = t === 'N' ? [6, 4] : [4, 6];
    const x = hostMatrix(xn, 1, false, 'col', 0, 8);
    const y = hostMatrix(yn, 1, false, 'col', 0, 9);
    const xv = StridedView.of(x.buffer as DeviceBuffer, { dtype: 'f64', shape: [xn] });
    const yv = StridedView.of(y.buffer as DeviceBuffer, { dtype: 'f64', shape: [yn] });
    blas.gemv(a, xv, yv, { trans: t, alpha: 1, beta: 0 });
    for (let i = 0; i < yn; i++) {
      let s = 0;
      for (let j = 0; j < xn; j++) s += opElement(a, t, i, j)[0] * element(x, j, 0)[0];
      expect(element(y, i, 0)[0]).toBe(s);
    }
  }
});
