// DenseSolver (cuSOLVER) on the GPU against CPU references in f64: Cholesky and LU solves (residuals),
// QR (R upper triangular, QᴴQ = I, QR = A), syevd eigenpairs, gesvd singular values against a CPU
// Jacobi eigensolver of AᵀA and the reconstruction U·diag(s)·Vᵀ; row- and column-major operands,
// every dtype, odd sizes; a matrix that is not positive definite and a singular one throw their error
// with the right index; awaited and blocking forms.
import { DeviceBuffer, Device, Stream } from '../../src';
import { DenseSolver, NotPositiveDefiniteError, SingularMatrixError, matrix, type SolverDType } from '../../src/math';
import { StridedView } from '../../src/memory/strided-view';
import { describeGpu } from './gpu-env';

type Order = 'row' | 'col';
const isComplex = (d: SolverDType): boolean => d === 'c64' || d === 'c128';
const single = (d: SolverDType): boolean => d === 'f32' || d === 'c64';
const TOL: Record<SolverDType, number> = { f32: 2e-4, c64: 2e-4, f64: 1e-10, c128: 1e-10 };

function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return (s / 2 ** 32) * 2 - 1;
  };
}

/** A complex matrix on the host (im 0 for real dtypes), element (i, j) at i * cols + j. */
class M {
  readonly re: Float64Array;
  readonly im: Float64Array;
  constructor(
    readonly rows: number,
    readonly cols: number,
  ) {
    this.re = new Float64Array(rows * cols);
    this.im = new Float64Array(rows * cols);
  }
  static random(rows: number, cols: number, dtype: SolverDType, seed: number): M {
    const m = new M(rows, cols);
    const r = random(seed);
    for (let i = 0; i < rows * cols; i++) {
      m.re[i] = r();
      m.im[i] = isComplex(dtype) ? r() : 0;
    }
    return m;
  }
  /** B Bᴴ + n I: Hermitian positive definite. */
  static spd(n: number, dtype: SolverDType, seed: number): M {
    const b = M.random(n, n, dtype, seed);
    const a = b.mul(b.h());
    for (let i = 0; i < n; i++) a.re[i * n + i] += n;
    return a;
  }
  static diag(values: number[]): M {
    const m = new M(values.length, values.length);
    values.forEach((v, i) => (m.re[i * values.length + i] = v));
    return m;
  }
  mul(o: M): M {
    const out = new M(this.rows, o.cols);
    for (let i = 0; i < this.rows; i++)
      for (let k = 0; k < this.cols; k++) {
        const [ar, ai] = [this.re[i * this.cols + k], this.im[i * this.cols + k]];
        for (let j = 0; j < o.cols; j++) {
          const [br, bi] = [o.re[k * o.cols + j], o.im[k * o.cols + j]];
          out.re[i * o.cols + j] += ar * br - ai * bi;
          out.im[i * o.cols + j] += ar * bi + ai * br;
        }
      }
    return out;
  }
  /** Conjugate transpose. */
  h(): M {
    const t = new M(this.cols, this.rows);
    for (let i = 0; i < this.rows; i++)
      for (let j = 0; j < this.cols; j++) {
        t.re[j * this.rows + i] = this.re[i * this.cols + j];
        t.im[j * this.rows + i] = -this.im[i * this.cols + j];
      }
    return t;
  }
  sub(o: M): M {
    const out = new M(this.rows, this.cols);
    for (let i = 0; i < this.re.length; i++) [out.re[i], out.im[i]] = [this.re[i] - o.re[i], this.im[i] - o.im[i]];
    return out;
  }
  /** The columns [from, to). */
  columns(from: number, to: number): M {
    const out = new M(this.rows, to - from);
    for (let i = 0; i < this.rows; i++)
      for (let j = from; j < to; j++)
        [out.re[i * out.cols + j - from], out.im[i * out.cols + j - from]] = [this.re[i * this.cols + j], this.im[i * this.cols + j]];
    return out;
  }
  norm(): number {
    let s = 0;
    for (let i = 0; i < this.re.length; i++) s += this.re[i] ** 2 + this.im[i] ** 2;
    return Math.sqrt(s);
  }
  storage(dtype: SolverDType, order: Order, ld = order === 'row' ? this.cols : this.rows): Float32Array | Float64Array {
    const per = isComplex(dtype) ? 2 : 1;
    const n = Math.max(1, (order === 'row' ? this.rows : this.cols) * ld) * per;
    const out = single(dtype) ? new Float32Array(n) : new Float64Array(n);
    for (let i = 0; i < this.rows; i++)
      for (let j = 0; j < this.cols; j++) {
        const at = (order === 'row' ? i * ld + j : j * ld + i) * per;
        out[at] = this.re[i * this.cols + j];
        if (per === 2) out[at + 1] = this.im[i * this.cols + j];
      }
    return out;
  }
  static read(view: StridedView, dtype: SolverDType): M {
    const [rows, cols] = view.shape.length === 1 ? [view.shape[0], 1] : view.shape;
    const data = view.toArray() as Float32Array | Float64Array; // C order, complex interleaved
    const m = new M(rows, cols);
    const per = isComplex(dtype) ? 2 : 1;
    for (let i = 0; i < rows * cols; i++) [m.re[i], m.im[i]] = [data[i * per], per === 2 ? data[i * per + 1] : 0];
    return m;
  }
}

/** Eigenvalues of a real symmetric matrix (cyclic Jacobi, f64), ascending. */
function jacobiEigenvalues(a: M): number[] {
  const n = a.rows;
  const x = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => a.re[i * n + j]));
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += x[p][q] ** 2;
    if (off < 1e-30) break;
    for (let p = 0; p < n; p++)
      for (let q = p + 1; q < n; q++) {
        if (Math.abs(x[p][q]) < 1e-300) continue;
        const theta = (x[q][q] - x[p][p]) / (2 * x[p][q]);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) [x[k][p], x[k][q]] = [c * x[k][p] - s * x[k][q], s * x[k][p] + c * x[k][q]];
        for (let k = 0; k < n; k++) [x[p][k], x[q][k]] = [c * x[p][k] - s * x[q][k], s * x[p][k] + c * x[q][k]];
      }
  }
  return x.map((row, i) => row[i]).sort((u, v) => u - v);
}

/** What `p` rejects with (fails the test when it resolves). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describeGpu('DenseSolver (cuSOLVER) on the GPU', () => {
  let stream: Stream;
  let solver: DenseSolver;
  const buffers: DeviceBuffer[] = [];
  beforeAll(() => {
    Device.get(0).setCurrent();
    stream = Stream.create();
    solver = DenseSolver.create({ stream });
  });
  afterAll(() => {
    solver?.close();
    for (const b of buffers) b.close();
    stream?.close();
  });

  /** `m` on the device as a rows × cols view in `order` (ld padded by `pad`). */
  function upload(m: M, dtype: SolverDType, order: Order, pad = 0): StridedView {
    const ld = (order === 'row' ? m.cols : m.rows) + pad;
    const buf = DeviceBuffer.from(m.storage(dtype, order, ld));
    buffers.push(buf);
    return matrix(buf, { dtype, rows: m.rows, cols: m.cols, order, ld });
  }
  const vectorOf = (m: M, dtype: SolverDType): StridedView => {
    const buf = DeviceBuffer.from(m.storage(dtype, 'row'));
    buffers.push(buf);
    return StridedView.of(buf, { dtype, shape: [m.rows] });
  };
  /** |a x - b| / (|a| |x| + |b|). */
  const residual = (a: M, x: M, b: M): number => a.mul(x).sub(b).norm() / (a.norm() * x.norm() + b.norm());

  const layouts: [SolverDType, Order][] = [
    ['f32', 'row'],
    ['f32', 'col'],
    ['f64', 'row'],
    ['f64', 'col'],
    ['c64', 'col'],
    ['c128', 'col'],
  ];

  test.each(layouts)('Cholesky %s %s-major, n = 37: potrf + potrs, one and three right-hand sides', async (dtype, order) => {
    const n = 37;
    const A = M.spd(n, dtype, 1);
    const a = upload(A, dtype, order, 3);
    await solver.potrf(a);
    const b1 = M.random(n, 1, dtype, 2);
    const x1 = vectorOf(b1, dtype);
    await solver.potrs(a, x1);
    expect(residual(A, M.read(x1, dtype), b1)).toBeLessThan(TOL[dtype]);
    const b3 = M.random(n, 3, dtype, 3);
    const x3 = upload(b3, dtype, 'col', 2);
    solver.potrsSync(a, x3);
    expect(residual(A, M.read(x3, dtype), b3)).toBeLessThan(TOL[dtype]);
  });

  test.each(layouts)('Cholesky %s %s-major, upper: Uᴴ U = A', async (dtype, order) => {
    const n = 9;
    const A = M.spd(n, dtype, 4);
    const a = upload(A, dtype, order);
    solver.potrfSync(a, { lower: false });
    const full = M.read(a, dtype);
    const U = new M(n, n);
    for (let i = 0; i < n; i++) for (let j = i; j < n; j++) [U.re[i * n + j], U.im[i * n + j]] = [full.re[i * n + j], full.im[i * n + j]];
    expect(U.h().mul(U).sub(A).norm() / A.norm()).toBeLessThan(TOL[dtype]);
  });

  test.each([
    ['f32', 'row'],
    ['f64', 'col'],
    ['c128', 'col'],
  ] as [SolverDType, Order][])('a matrix that is not positive definite: NotPositiveDefiniteError at the right index (%s %s)', async (dtype, order) => {
    const A = M.diag([4, 2, 3, -1, 5]);
    const e = await rejection(solver.potrf(upload(A, dtype, order)));
    expect(e).toBeInstanceOf(NotPositiveDefiniteError);
    expect(e).toMatchObject({ index: 3, info: 4, func: 'cusolverDnXpotrf' });
    expect(() => solver.potrfSync(upload(M.diag([1, 0, 2]), dtype, order))).toThrow(
      /DenseSolver.potrf: the matrix is not positive definite: the leading minor of order 2/,
    );
  });

  test.each(layouts)('LU %s %s-major, n = 41: getrf + getrs', async (dtype, order) => {
    const n = 41;
    const A = M.random(n, n, dtype, 5);
    const a = upload(A, dtype, order, 2);
    const lu = await solver.getrf(a);
    expect(lu.transposed).toBe(order === 'row');
    const b = M.random(n, 1, dtype, 6);
    const x = vectorOf(b, dtype);
    await solver.getrs(lu, x);
    expect(residual(A, M.read(x, dtype), b)).toBeLessThan(TOL[dtype] * 10);
    const b2 = M.random(n, 4, dtype, 7);
    const x2 = upload(b2, dtype, 'col');
    solver.getrsSync(lu, x2);
    expect(residual(A, M.read(x2, dtype), b2)).toBeLessThan(TOL[dtype] * 10);
    lu.close();
  });

  test.each([
    ['f64', 'col'],
    ['f32', 'row'],
  ] as [SolverDType, Order][])('a singular matrix: SingularMatrixError with the zero pivot (%s %s)', async (dtype, order) => {
    const A = M.random(6, 6, dtype, 8);
    // a zero column (column-major) or row (row-major: cuSOLVER factors Aᵀ, whose column it is): U[2][2] = 0
    for (let k = 0; k < 6; k++) {
      if (order === 'col') A.re[k * 6 + 2] = 0;
      else A.re[2 * 6 + k] = 0;
    }
    const e = await rejection(solver.getrf(upload(A, dtype, order)));
    expect(e).toBeInstanceOf(SingularMatrixError);
    expect(e).toMatchObject({ index: 2, info: 3, func: 'cusolverDnXgetrf' });
  });

  test.each(['f32', 'f64', 'c64', 'c128'] as SolverDType[])('QR %s 11×7: R upper triangular, Q orthonormal, QR = A', async (dtype) => {
    const [m, n] = [11, 7];
    const A = M.random(m, n, dtype, 9);
    const a = upload(A, dtype, 'col', 1);
    const tau = await solver.geqrf(a);
    const packed = M.read(a, dtype);
    const R = new M(n, n);
    for (let i = 0; i < n; i++) for (let j = i; j < n; j++) [R.re[i * n + j], R.im[i * n + j]] = [packed.re[i * n + j], packed.im[i * n + j]];
    for (let i = 0; i < n; i++) expect(Math.abs(R.re[i * n + i])).toBeGreaterThan(0);
    await solver.orgqr(a, tau);
    const Q = M.read(a, dtype);
    const I = M.diag(Array(n).fill(1));
    expect(Q.h().mul(Q).sub(I).norm()).toBeLessThan(TOL[dtype] * 10);
    expect(Q.mul(R).sub(A).norm() / A.norm()).toBeLessThan(TOL[dtype] * 10);
    (tau as StridedView).buffer.close();
  });

  test.each(layouts)('syevd %s %s-major, n = 17: A v = λ v, λ ascending and equal to the CPU', async (dtype, order) => {
    const n = 17;
    const A = M.spd(n, dtype, 10).sub(M.diag(Array(n).fill(2 * n))); // indefinite: some λ < 0
    const a = upload(A, dtype, order);
    const w = await solver.syevd(a);
    const lambda = M.read(w as StridedView, single(dtype) ? 'f32' : 'f64').re;
    for (let j = 1; j < n; j++) expect(lambda[j]).toBeGreaterThanOrEqual(lambda[j - 1]);
    const V = M.read(a, dtype);
    // eigenvector j: column j of a column-major a, row j of a row-major one
    const vectors = order === 'col' ? V : V.h();
    if (order === 'row') for (let i = 0; i < vectors.im.length; i++) vectors.im[i] = -vectors.im[i];
    for (let j = 0; j < n; j++) {
      const v = vectors.columns(j, j + 1);
      const lv = new M(n, 1);
      for (let i = 0; i < n; i++) [lv.re[i], lv.im[i]] = [lambda[j] * v.re[i], lambda[j] * v.im[i]];
      expect(A.mul(v).sub(lv).norm() / A.norm()).toBeLessThan(TOL[dtype] * 10);
    }
    if (!isComplex(dtype)) jacobiEigenvalues(A).forEach((l, j) => expect(Math.abs(l - lambda[j]) / A.norm()).toBeLessThan(TOL[dtype] * 10));
    (w as StridedView).buffer.close();
  });

  const svdCases: [SolverDType, Order, 'all' | 'thin'][] = [
    ['f32', 'col', 'all'],
    ['f64', 'col', 'thin'],
    ['f64', 'row', 'all'],
    ['f32', 'row', 'thin'],
    ['c64', 'col', 'thin'],
    ['c128', 'row', 'all'],
  ];
  test.each(svdCases)('gesvd %s %s-major (%s vectors): s equals the CPU, U diag(s) Vᵀ = A', async (dtype, order, vectors) => {
    // cuSOLVER needs rows ≥ cols of what it sees: a tall column-major a or a wide row-major a
    const [rows, cols] = order === 'col' ? [13, 8] : [8, 13];
    const A = M.random(rows, cols, dtype, 11);
    const a = upload(A, dtype, order, 1);
    const { s, u, vt } = await solver.gesvd(a, { vectors });
    const k = Math.min(rows, cols);
    const sigma = M.read(s as StridedView, single(dtype) ? 'f32' : 'f64').re;
    for (let j = 1; j < k; j++) expect(sigma[j]).toBeLessThanOrEqual(sigma[j - 1]);
    if (!isComplex(dtype)) {
      const gram = order === 'col' ? A.h().mul(A) : A.mul(A.h());
      const cpu = jacobiEigenvalues(gram)
        .reverse()
        .slice(0, k)
        .map((l) => Math.sqrt(Math.max(0, l)));
      cpu.forEach((v, j) => expect(Math.abs(v - sigma[j]) / sigma[0]).toBeLessThan(TOL[dtype] * 10));
    }
    const U = M.read(u as StridedView, dtype).columns(0, k);
    const VT = M.read(vt as StridedView, dtype);
    const thinVT = new M(k, cols);
    for (let i = 0; i < k; i++) for (let j = 0; j < cols; j++) [thinVT.re[i * cols + j], thinVT.im[i * cols + j]] = [VT.re[i * cols + j], VT.im[i * cols + j]];
    const US = new M(rows, k);
    for (let i = 0; i < rows; i++) for (let j = 0; j < k; j++) [US.re[i * k + j], US.im[i * k + j]] = [U.re[i * k + j] * sigma[j], U.im[i * k + j] * sigma[j]];
    expect(US.mul(thinVT).sub(A).norm() / A.norm()).toBeLessThan(TOL[dtype] * 10);
    for (const v of [s, u, vt]) (v as StridedView).buffer.close();
  });

  test('the stream may close before the solver; a closed solver refuses', async () => {
    const s2 = Stream.create();
    const sol2 = DenseSolver.create({ stream: s2 });
    const A = M.spd(5, 'f64', 12);
    const a = upload(A, 'f64', 'col');
    const pending = sol2.potrf(a);
    s2.close();
    await pending;
    expect(() => sol2.potrfSync(a)).toThrow(/DenseSolver.potrf: the Stream is closed/);
    sol2.close();
    expect(() => sol2.potrfSync(a)).toThrow(/DenseSolver.potrf: the DenseSolver is closed/);
  });
});
