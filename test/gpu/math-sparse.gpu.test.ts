// Sparse (cuSPARSE) on the GPU against CPU references in f64: SpMV on CSR, COO and CSC with every
// operation, both index types and every value type; SpMM with row- and column-major dense operands;
// SpGEMM against the dense CPU product; odd shapes (37×53), alpha/beta, descriptors reused and re-pointed,
// ping-pong operands, another context current behind the handle's back, the stream closed before the handle.
import * as cu from '../../generated/13.0/driver';
import { Context, DeviceBuffer, Device, Stream } from '../../src';
import { DenseVector, Sparse, SparseMatrix, matrix, type SparseFormat, type SparseOp, type SparseValueType } from '../../src/math';
import { StridedView } from '../../src/memory/strided-view';
import { CusparseError } from '../../generated/13.0/cusparse';
import { describeGpu } from './gpu-env';

const isComplex = (d: SparseValueType): boolean => d === 'c64' || d === 'c128';
const single = (d: SparseValueType): boolean => d === 'f32' || d === 'c64';
const TOL: Record<SparseValueType, number> = { f32: 2e-5, c64: 2e-5, f64: 1e-12, c128: 1e-12 };

/** xorshift in [-1, 1). */
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

/** A dense complex matrix on the host (im all 0 for real dtypes), row-major. */
class Dense {
  readonly re: Float64Array;
  readonly im: Float64Array;
  constructor(
    readonly rows: number,
    readonly cols: number,
  ) {
    this.re = new Float64Array(rows * cols);
    this.im = new Float64Array(rows * cols);
  }
  static random(rows: number, cols: number, dtype: SparseValueType, seed: number, density = 1): Dense {
    const d = new Dense(rows, cols);
    const r = random(seed);
    for (let i = 0; i < rows * cols; i++) {
      if ((r() + 1) / 2 >= density) continue;
      d.re[i] = r();
      d.im[i] = isComplex(dtype) ? r() : 0;
    }
    return d;
  }
  /** op(this) · other (op: N, T, or C = conjugate transpose). */
  times(other: Dense, op: SparseOp = 'N', opB: SparseOp = 'N'): Dense {
    const a = this.op(op);
    const b = other.op(opB);
    const out = new Dense(a.rows, b.cols);
    for (let i = 0; i < a.rows; i++)
      for (let k = 0; k < a.cols; k++) {
        const [ar, ai] = [a.re[i * a.cols + k], a.im[i * a.cols + k]];
        if (ar === 0 && ai === 0) continue;
        for (let j = 0; j < b.cols; j++) {
          const [br, bi] = [b.re[k * b.cols + j], b.im[k * b.cols + j]];
          out.re[i * b.cols + j] += ar * br - ai * bi;
          out.im[i * b.cols + j] += ar * bi + ai * br;
        }
      }
    return out;
  }
  op(op: SparseOp): Dense {
    if (op === 'N') return this;
    const t = new Dense(this.cols, this.rows);
    for (let i = 0; i < this.rows; i++)
      for (let j = 0; j < this.cols; j++) {
        t.re[j * this.rows + i] = this.re[i * this.cols + j];
        t.im[j * this.rows + i] = (op === 'C' ? -1 : 1) * this.im[i * this.cols + j];
      }
    return t;
  }
  /** alpha · this + beta · other, complex scalars as [re, im]. */
  axpby(alpha: [number, number], beta: [number, number], other: Dense): Dense {
    const out = new Dense(this.rows, this.cols);
    for (let i = 0; i < this.re.length; i++) {
      out.re[i] = alpha[0] * this.re[i] - alpha[1] * this.im[i] + beta[0] * other.re[i] - beta[1] * other.im[i];
      out.im[i] = alpha[0] * this.im[i] + alpha[1] * this.re[i] + beta[0] * other.im[i] + beta[1] * other.re[i];
    }
    return out;
  }
  /** The elements in `order` as the dtype's host array (complex interleaved), with leading dimension ld. */
  storage(dtype: SparseValueType, order: 'row' | 'col' = 'row', ld = order === 'row' ? this.cols : this.rows): Float32Array | Float64Array {
    const per = isComplex(dtype) ? 2 : 1;
    const n = (order === 'row' ? this.rows : this.cols) * ld;
    const out = single(dtype) ? new Float32Array(Math.max(1, n) * per) : new Float64Array(Math.max(1, n) * per);
    for (let i = 0; i < this.rows; i++)
      for (let j = 0; j < this.cols; j++) {
        const at = (order === 'row' ? i * ld + j : j * ld + i) * per;
        out[at] = this.re[i * this.cols + j];
        if (per === 2) out[at + 1] = this.im[i * this.cols + j];
      }
    return out;
  }
  /** Reads a device result back (same layout as `storage`). */
  static read(
    data: Float32Array | Float64Array,
    rows: number,
    cols: number,
    dtype: SparseValueType,
    order: 'row' | 'col' = 'row',
    ld = order === 'row' ? cols : rows,
  ): Dense {
    const d = new Dense(rows, cols);
    const per = isComplex(dtype) ? 2 : 1;
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++) {
        const at = (order === 'row' ? i * ld + j : j * ld + i) * per;
        d.re[i * cols + j] = data[at];
        d.im[i * cols + j] = per === 2 ? data[at + 1] : 0;
      }
    return d;
  }
  /** max |this - other| / max(1, max |other|). */
  error(ref: Dense): number {
    let diff = 0;
    let scale = 1;
    for (let i = 0; i < this.re.length; i++) {
      diff = Math.max(diff, Math.hypot(this.re[i] - ref.re[i], this.im[i] - ref.im[i]));
      scale = Math.max(scale, Math.hypot(ref.re[i], ref.im[i]));
    }
    return diff / scale;
  }
  /** The host arrays of `format` (entries in row order for CSR/COO, column order for CSC). */
  sparse(format: SparseFormat, dtype: SparseValueType, indexType: 'i32' | 'i64'): Parameters<typeof SparseMatrix.fromHost>[1] {
    const entries: [number, number][] = [];
    const outer = format === 'csc' ? this.cols : this.rows;
    const inner = format === 'csc' ? this.rows : this.cols;
    for (let o = 0; o < outer; o++)
      for (let q = 0; q < inner; q++) {
        const [i, j] = format === 'csc' ? [q, o] : [o, q];
        if (this.re[i * this.cols + j] !== 0 || this.im[i * this.cols + j] !== 0) entries.push([i, j]);
      }
    const Index = indexType === 'i32' ? Int32Array : BigInt64Array;
    const ix = (v: number): number | bigint => (indexType === 'i32' ? v : BigInt(v));
    const per = isComplex(dtype) ? 2 : 1;
    const values = single(dtype) ? new Float32Array(entries.length * per) : new Float64Array(entries.length * per);
    entries.forEach(([i, j], k) => {
      values[k * per] = this.re[i * this.cols + j];
      if (per === 2) values[k * per + 1] = this.im[i * this.cols + j];
    });
    const offsets = new Index(outer + 1) as Int32Array & BigInt64Array;
    const counts = new Int32Array(outer + 1);
    entries.forEach(([i, j]) => counts[(format === 'csc' ? j : i) + 1]++);
    for (let o = 0; o < outer; o++) counts[o + 1] += counts[o];
    counts.forEach((c, o) => (offsets[o] = ix(c) as never));
    const indices = (list: number[]): Int32Array | BigInt64Array => (indexType === 'i32' ? Int32Array.from(list) : BigInt64Array.from(list.map(BigInt)));
    const rowsOf = indices(entries.map(([i]) => i));
    const colsOf = indices(entries.map(([, j]) => j));
    const base = { rows: this.rows, cols: this.cols, values, dtype };
    if (format === 'csr') return { ...base, rowOffsets: offsets, colIndices: colsOf };
    if (format === 'coo') return { ...base, rowIndices: rowsOf, colIndices: colsOf };
    return { ...base, colOffsets: offsets, rowIndices: rowsOf };
  }
}

describeGpu('Sparse (cuSPARSE) on the GPU', () => {
  let stream: Stream;
  let sparse: Sparse;
  const buffers: DeviceBuffer[] = [];
  const matrices: SparseMatrix[] = [];
  beforeAll(() => {
    Device.get(0).setCurrent();
    stream = Stream.create();
    sparse = Sparse.create({ stream });
  });
  afterAll(() => {
    sparse?.close();
    for (const m of matrices) m.close();
    for (const b of buffers) b.close();
    stream?.close();
  });

  function device(data: Float32Array | Float64Array): DeviceBuffer {
    const b = DeviceBuffer.from(data);
    buffers.push(b);
    return b;
  }
  const vector = (d: Dense, dtype: SparseValueType): StridedView => StridedView.of(device(d.storage(dtype)), { dtype, shape: [d.rows * d.cols] });
  const readBack = (v: StridedView): Float32Array | Float64Array => v.toArray() as Float32Array | Float64Array;
  const upload = (A: Dense, format: SparseFormat, dtype: SparseValueType, indexType: 'i32' | 'i64' = 'i32'): SparseMatrix => {
    const m = SparseMatrix.fromHost(format, A.sparse(format, dtype, indexType), { stream });
    matrices.push(m);
    return m;
  };
  const scalars = (dtype: SparseValueType): { alpha: [number, number]; beta: [number, number] } =>
    isComplex(dtype) ? { alpha: [0.75, -0.5], beta: [0.5, 0.25] } : { alpha: [0.75, 0], beta: [0.5, 0] };
  const boxed = (v: [number, number], dtype: SparseValueType): number | { re: number; im: number } => (isComplex(dtype) ? { re: v[0], im: v[1] } : v[0]);

  const cases: [SparseFormat, SparseValueType, 'i32' | 'i64', SparseOp][] = [];
  for (const format of ['csr', 'coo', 'csc'] as SparseFormat[])
    for (const dtype of ['f32', 'f64', 'c64', 'c128'] as SparseValueType[]) {
      for (const op of (isComplex(dtype) ? ['N', 'T', 'C'] : ['N', 'T']) as SparseOp[]) cases.push([format, dtype, 'i32', op]);
    }
  cases.push(['csr', 'f64', 'i64', 'N'], ['coo', 'f32', 'i64', 'T']);

  test.each(cases)('spmv %s %s (%s indices), op %s, 37×53, alpha/beta', async (format, dtype, indexType, op) => {
    const A = Dense.random(37, 53, dtype, 11, 0.15);
    const m = upload(A, format, dtype, indexType);
    expect([m.rows, m.cols, m.format, m.indexType]).toEqual([37, 53, format, indexType]);
    const [xn, yn] = op === 'N' ? [53, 37] : [37, 53];
    const x = Dense.random(xn, 1, dtype, 12);
    const y0 = Dense.random(yn, 1, dtype, 13);
    const { alpha, beta } = scalars(dtype);
    const xv = vector(x, dtype);
    const yv = vector(y0, dtype);
    sparse.spmv(m, xv, yv, { op, alpha: boxed(alpha, dtype), beta: boxed(beta, dtype) });
    await stream.synchronized();
    const ref = A.times(x, op).axpby(alpha, beta, y0);
    expect(Dense.read(readBack(yv), yn, 1, dtype).error(ref)).toBeLessThan(TOL[dtype]);
  });

  test('spmv again with other vectors of the same shape (descriptors re-pointed), and through DenseVectors', async () => {
    const A = Dense.random(101, 77, 'f32', 21, 0.05);
    const m = upload(A, 'csr', 'f32');
    for (let seed = 0; seed < 3; seed++) {
      const x = Dense.random(77, 1, 'f32', 30 + seed);
      const y = vector(new Dense(101, 1), 'f32');
      sparse.spmv(m, vector(x, 'f32'), y);
      await stream.synchronized();
      expect(Dense.read(readBack(y), 101, 1, 'f32').error(A.times(x))).toBeLessThan(TOL.f32);
    }
    const x = Dense.random(77, 1, 'f32', 40);
    const xd = DenseVector.of(vector(x, 'f32'));
    const yv = vector(new Dense(101, 1), 'f32');
    const yd = DenseVector.of(yv);
    sparse.spmv(m, xd, yd, { alpha: 2 });
    await stream.synchronized();
    expect(Dense.read(readBack(yv), 101, 1, 'f32').error(A.times(x).axpby([2, 0], [0, 0], new Dense(101, 1)))).toBeLessThan(TOL.f32);
    xd.close();
    yd.close();
  });

  test('spmv ping-pong (x→y, y→x) and more vector addresses than a shape keeps: every result right', async () => {
    const A = Dense.random(40, 40, 'f64', 81, 0.2);
    const m = upload(A, 'csr', 'f64');
    const x0 = Dense.random(40, 1, 'f64', 82);
    const x = vector(x0, 'f64');
    const y = vector(new Dense(40, 1), 'f64');
    sparse.spmv(m, x, y); // y = A x0
    sparse.spmv(m, y, x); // x = A² x0: the two calls alternate from here on
    sparse.spmv(m, x, y);
    sparse.spmv(m, y, x, { alpha: 0.5 });
    await stream.synchronized();
    const a2 = A.times(A.times(x0));
    expect(Dense.read(readBack(y), 40, 1, 'f64').error(A.times(a2))).toBeLessThan(TOL.f64);
    expect(Dense.read(readBack(x), 40, 1, 'f64').error(A.times(A.times(a2)).axpby([0.5, 0], [0, 0], new Dense(40, 1)))).toBeLessThan(TOL.f64);
    // 12 inputs at 12 addresses: past 8 per shape the oldest descriptor is re-pointed
    const inputs = Array.from({ length: 12 }, (_, i) => Dense.random(40, 1, 'f64', 90 + i));
    const outputs = inputs.map(() => vector(new Dense(40, 1), 'f64'));
    inputs.forEach((xi, i) => sparse.spmv(m, vector(xi, 'f64'), outputs[i]));
    await stream.synchronized();
    inputs.forEach((xi, i) => expect(Dense.read(readBack(outputs[i]), 40, 1, 'f64').error(A.times(xi))).toBeLessThan(TOL.f64));
  });

  test('another context made current behind the objects layer: a repeated spmv on a created stream still lands in the Sparse context', async () => {
    const A = Dense.random(30, 20, 'f32', 85, 0.3);
    const m = upload(A, 'csr', 'f32');
    const x0 = Dense.random(20, 1, 'f32', 86);
    const x = vector(x0, 'f32');
    const y = vector(new Dense(30, 1), 'f32');
    const other = Context.create(0);
    try {
      sparse.spmv(m, x, y); // resolves the call, binding the Sparse context
      cu.cuCtxSetCurrent(other.handle); // behind its back: the hinted bind trusts a stale hint
      sparse.spmv(m, x, y, { alpha: 2 });
      await stream.synchronized();
      expect(Dense.read(readBack(y), 30, 1, 'f32').error(A.times(x0).axpby([2, 0], [0, 0], new Dense(30, 1)))).toBeLessThan(TOL.f32);
    } finally {
      Device.get(0).setCurrent();
      other.close();
    }
  });

  describe.each(['f32', 'f64', 'c64', 'c128'] as SparseValueType[])('spmm %s', (dtype) => {
    test.each([
      ['row', 'row'],
      ['col', 'col'],
      ['col', 'row'],
    ] as const)('b %s-major, c %s-major, 37×53 · 53×7, padded ld', async (bOrder, cOrder) => {
      const A = Dense.random(37, 53, dtype, 51, 0.2);
      const m = upload(A, 'csr', dtype);
      const B = Dense.random(53, 7, dtype, 52);
      const C0 = Dense.random(37, 7, dtype, 53);
      const bLd = bOrder === 'row' ? 9 : 55;
      const cLd = cOrder === 'row' ? 8 : 40;
      const b = matrix(device(B.storage(dtype, bOrder, bLd)), { dtype, rows: 53, cols: 7, order: bOrder, ld: bLd });
      const cBuf = device(C0.storage(dtype, cOrder, cLd));
      const c = matrix(cBuf, { dtype, rows: 37, cols: 7, order: cOrder, ld: cLd });
      const { alpha, beta } = scalars(dtype);
      try {
        sparse.spmm(m, b, c, { alpha: boxed(alpha, dtype), beta: boxed(beta, dtype) });
      } catch (e) {
        // cuSPARSE may refuse mixed orders for an algorithm: that is its status, named
        expect(bOrder).not.toBe(cOrder);
        expect((e as Error).message).toMatch(/cusparseSpMM/);
        return;
      }
      await stream.synchronized();
      const out = Dense.read(single(dtype) ? cBuf.toArray(Float32Array) : cBuf.toArray(Float64Array), 37, 7, dtype, cOrder, cLd);
      expect(out.error(A.times(B).axpby(alpha, beta, C0))).toBeLessThan(TOL[dtype]);
    });
  });

  test.each([
    ['f32', 'i32'],
    ['f64', 'i32'],
    ['c64', 'i32'],
    ['f64', 'i64'],
  ] as const)('spgemm %s (%s indices): 37×53 · 53×29 equals the dense product', (dtype, indexType) => {
    const A = Dense.random(37, 53, dtype, 61, 0.1);
    const B = Dense.random(53, 29, dtype, 62, 0.1);
    const a = upload(A, 'csr', dtype, indexType);
    const b = upload(B, 'csr', dtype, indexType);
    let c: SparseMatrix;
    try {
      c = sparse.spgemm(a, b, { alpha: dtype === 'c64' ? { re: 1.5, im: 0 } : 1.5 });
    } catch (e) {
      if (indexType === 'i64') return expect((e as Error).message).toMatch(/cusparseSpGEMM/); // 64-bit indices: cuSPARSE's NOT_SUPPORTED is acceptable, named
      throw e;
    }
    try {
      expect([c.rows, c.cols, c.format, c.dtype, c.indexType]).toEqual([37, 29, 'csr', dtype, indexType]);
      const { first, second, values } = c.toHost();
      const got = new Dense(37, 29);
      const per = isComplex(dtype) ? 2 : 1;
      for (let i = 0; i < 37; i++)
        for (let k = Number(first[i]); k < Number(first[i + 1]); k++) {
          const j = Number(second[k]);
          got.re[i * 29 + j] += values[k * per];
          got.im[i * 29 + j] += per === 2 ? values[k * per + 1] : 0;
        }
      expect(Number(first[37])).toBe(c.nnz);
      expect(got.error(A.times(B).axpby([1.5, 0], [0, 0], new Dense(37, 29)))).toBeLessThan(TOL[dtype]);
    } finally {
      c.close();
    }
  });

  test('a cuSPARSE status is a CusparseError; the stream may close before the handle', async () => {
    const s2 = Stream.create();
    const sp2 = Sparse.create({ stream: s2 });
    const A = Dense.random(10, 10, 'f64', 71, 0.3);
    const m = upload(A, 'csr', 'f64');
    const x = Dense.random(10, 1, 'f64', 72);
    const xv = vector(x, 'f64');
    const y = vector(new Dense(10, 1), 'f64');
    let caught: unknown;
    try {
      sp2.spmv(m, xv, y, { algorithm: 999 });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(CusparseError);
    expect((caught as Error).message).toMatch(/cusparseSpMV/);
    sp2.spmv(m, xv, y);
    await s2.synchronized();
    expect(Dense.read(readBack(y), 10, 1, 'f64').error(A.times(x))).toBeLessThan(TOL.f64);
    s2.close();
    expect(() => sp2.spmv(m, xv, y)).toThrow(/Sparse.spmv: the Stream is closed/);
    sp2.close();
  });
});
