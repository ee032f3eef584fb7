// Blas and Matmul on the GPU against CPU references: odd shapes (37×53×19), every transpose, row- and
// column-major operands with padded leading dimensions, batches, every dtype the objects take (f16/bf16
// within their precision), level-1/2 calls, the stream closed before the handle.
import * as cu from '../../generated/13.0/driver';
import { Context, DeviceBuffer, Device, Stream } from '../../src';
import { Blas, Matmul, matrix, type Order, type Transpose } from '../../src/math';
import { StridedView, type DType } from '../../src/memory/strided-view';
import { bfloat16Bits as toBfloat16Bits, halfBits as toHalfBits } from '../../support';
import { describeGpu } from './gpu-env';
import { HostMatrix, cpuGemm, fromHalf, fromBf16, maxRelativeError, type Reference } from './math-blas-helpers';

type GemmDType = 'f32' | 'f64' | 'c64' | 'c128' | 'f16' | 'bf16';

describeGpu('Blas (cuBLAS) on the GPU', () => {
  let stream: Stream;
  let blas: Blas;
  const buffers: DeviceBuffer[] = [];
  beforeAll(() => {
    Device.get(0).setCurrent();
    stream = Stream.create();
    blas = Blas.create({ stream });
  });
  afterAll(() => {
    blas?.close();
    for (const b of buffers) b.close();
    stream?.close();
  });

  /** A host matrix and its device view (ld padded by `pad`). */
  function upload(rows: number, cols: number, dtype: DType, order: Order, pad = 0, seed = 1): { host: HostMatrix; view: StridedView } {
    const host = new HostMatrix(rows, cols, dtype, order, pad, seed);
    const buf = DeviceBuffer.from(host.storage);
    buffers.push(buf);
    return { host, view: matrix(buf, { dtype, rows, cols, order, ld: host.ld }) };
  }

  const TOL: Record<GemmDType, number> = { f32: 1e-5, c64: 1e-5, f64: 1e-12, c128: 1e-12, f16: 2e-3, bf16: 1.6e-2 };

  describe.each(['f32', 'f64', 'c64', 'c128', 'f16', 'bf16'] as const)('gemm %s, 37×53×19', (dtype) => {
    const ops: Transpose[] = dtype === 'c64' || dtype === 'c128' ? ['N', 'T', 'C'] : ['N', 'T'];
    const cases: [Transpose, Transpose, Order, Order][] = [];
    for (const tA of ops)
      for (const tB of ops)
        for (const cOrder of ['row', 'col'] as Order[]) cases.push([tA, tB, cOrder, tA === 'C' || tB === 'C' ? cOrder : cOrder === 'row' ? 'col' : 'row']);
    test.each(cases)('transA %s transB %s, c %s-major, a/b %s-major, padded ld, alpha/beta', async (tA, tB, cOrder, abOrder) => {
      const [m, n, k] = [37, 53, 19];
      const a = upload(tA === 'N' ? m : k, tA === 'N' ? k : m, dtype, tA === 'C' ? cOrder : abOrder, 3, 1);
      const b = upload(tB === 'N' ? k : n, tB === 'N' ? n : k, dtype, tB === 'C' ? cOrder : abOrder, 0, 2);
      const c = upload(m, n, dtype, cOrder, 5, 3);
      const alpha = dtype.startsWith('c') ? { re: 0.75, im: -0.5 } : 0.75;
      const beta = dtype.startsWith('c') ? { re: 0.5, im: 0.25 } : 0.5;
      blas.gemm(a.view, b.view, c.view, { transA: tA, transB: tB, alpha, beta });
      await stream.synchronized();
      const ref = cpuGemm(a.host, tA, b.host, tB, c.host, alpha, beta);
      const err = maxRelativeError(HostMatrix.read(c.view), ref);
      expect(err).toBeLessThanOrEqual(TOL[dtype]);
    });
  });

  /** One gemmEx case against the CPU: undefined when within `tol`, else what went wrong (an error names its case). */
  async function gemmExCase(ab: DType, cType: DType, compute: string | undefined, tol: number, orders: [Order, Order, Order]): Promise<string | undefined> {
    const name = `${ab} → ${cType}${compute ? ` (${compute})` : ''}, a/b/c ${orders.join('/')}-major`;
    try {
      const a = upload(24, 16, ab, orders[0], 0, 4);
      const b = upload(16, 32, ab, orders[1], 0, 5);
      const c = upload(24, 32, cType, orders[2], 0, 6);
      blas.gemmEx(a.view, b.view, c.view, { computeType: compute as never, alpha: 1, beta: 0 });
      await stream.synchronized();
      const err = maxRelativeError(HostMatrix.read(c.view), cpuGemm(a.host, 'N', b.host, 'N', c.host, 1, 0));
      return err <= tol ? undefined : `${name}: error ${err} > ${tol}`;
    } catch (e) {
      return `${name}: ${String(e)}`;
    }
  }

  test('gemmEx: f16 → f32, bf16 → f32, f32 with TF32, f16 → f16 with 16F, i8 → i32 (32I) with K-contiguous a and b', async () => {
    const cases: [DType, DType, string | undefined, number, [Order, Order, Order]][] = [
      ['f16', 'f32', undefined, 2e-3, ['row', 'row', 'row']],
      ['bf16', 'f32', undefined, 1e-2, ['row', 'row', 'row']],
      ['f32', 'f32', '32F_FAST_TF32', 3e-3, ['row', 'row', 'row']],
      ['f16', 'f16', '16F', 1e-2, ['row', 'row', 'row']],
      ['i8', 'i32', '32I', 0, ['row', 'col', 'row']], // cuBLAS's IMMA path: the call is TN
      ['i8', 'i32', '32I', 0, ['row', 'col', 'col']],
    ];
    const failed: string[] = [];
    for (const [ab, cType, compute, tol, orders] of cases) {
      const why = await gemmExCase(ab, cType, compute, tol, orders);
      if (why !== undefined) failed.push(why);
    }
    expect(failed).toEqual([]);
  });

  test('gemmEx i8 → i32 (32I): a layout cuBLAS has no kernel for is refused before the call, naming the requirement', () => {
    const a = upload(24, 16, 'i8', 'row');
    const b = upload(16, 32, 'i8', 'row');
    const c = upload(24, 32, 'i32', 'row');
    expect(() => blas.gemmEx(a.view, b.view, c.view, { computeType: '32I' })).toThrow(
      /Blas.gemmEx: cuBLAS's i8 → i32 GEMM \(computeType '32I'\) needs K contiguous in a and b.*cuBLAS takes only TN/,
    );
    const odd = upload(24, 18, 'i8', 'row'); // k = 18: not a multiple of 4
    const oddB = upload(18, 32, 'i8', 'col');
    expect(() => blas.gemmEx(odd.view, oddB.view, c.view, { computeType: '32I' })).toThrow(/needs .* to be a multiple of 4, got 18/);
  });

  test('gemmEx i8 → f32 (32F): K-contiguous a and b, and both row-major', async () => {
    const failed: string[] = [];
    for (const orders of [
      ['row', 'col', 'row'],
      ['row', 'row', 'row'],
    ] as [Order, Order, Order][]) {
      const why = await gemmExCase('i8', 'f32', '32F', 1e-6, orders);
      if (why !== undefined) failed.push(why);
    }
    expect(failed).toEqual([]);
  });

  test('gemmStridedBatched (a broadcast) and gemmBatched equal per-matrix references', async () => {
    const batch = 7;
    const [m, n, k] = [13, 9, 11];
    const A = new HostMatrix(batch * m, k, 'f32', 'row', 0, 7);
    const bufA = DeviceBuffer.from(A.storage);
    const b = upload(k, n, 'f32', 'col', 2, 8);
    const bufC = DeviceBuffer.alloc(batch * m * n * 4, { stream });
    buffers.push(bufA, bufC);
    const a3 = StridedView.of(bufA, { dtype: 'f32', shape: [batch, m, k] });
    const c3 = StridedView.of(bufC, { dtype: 'f32', shape: [batch, m, n] });
    blas.gemmStridedBatched(a3, b.view, c3);
    const cs = Array.from({ length: batch }, (_, i) => matrix(bufC, { dtype: 'f32', rows: m, cols: n, byteOffset: i * m * n * 4 }));
    const as = Array.from({ length: batch }, (_, i) => matrix(bufA, { dtype: 'f32', rows: m, cols: k, byteOffset: i * m * k * 4 }));
    await stream.synchronized();
    for (let i = 0; i < batch; i++) {
      const ref = cpuGemm(A.block(i * m, m), 'N', b.host, 'N', undefined, 1, 0);
      expect(maxRelativeError(HostMatrix.read(cs[i]), ref)).toBeLessThanOrEqual(1e-5);
    }
    bufC.memset(0, { stream });
    blas.gemmBatched(
      as,
      as.map(() => b.view),
      cs,
    );
    await stream.synchronized();
    for (let i = 0; i < batch; i++) {
      const ref = cpuGemm(A.block(i * m, m), 'N', b.host, 'N', undefined, 1, 0);
      expect(maxRelativeError(HostMatrix.read(cs[i]), ref)).toBeLessThanOrEqual(1e-5);
    }
  });

  test('axpy, scal, dot (sync, async, into), nrm2, gemv on strided vectors', async () => {
    const n = 1001;
    const x = Float64Array.from({ length: 2 * n }, (_, i) => Math.sin(i * 0.37));
    const y = Float64Array.from({ length: n }, (_, i) => Math.cos(i * 0.11));
    const dx = DeviceBuffer.from(x);
    const dy = DeviceBuffer.from(y);
    buffers.push(dx, dy);
    const vx = StridedView.of(dx, { dtype: 'f64', shape: [n], strides: [2] });
    const vy = StridedView.of(dy, { dtype: 'f64', shape: [n] });
    let dotRef = 0;
    let nrmRef = 0;
    for (let i = 0; i < n; i++) {
      dotRef += x[2 * i] * y[i];
      nrmRef += x[2 * i] ** 2;
    }
    expect(blas.dot(vx, vy)).toBeCloseTo(dotRef, 10);
    expect(await blas.dotAsync(vx, vy)).toBeCloseTo(dotRef, 10);
    expect(blas.nrm2(vx)).toBeCloseTo(Math.sqrt(nrmRef), 10);
    expect(await blas.nrm2Async(vx)).toBeCloseTo(Math.sqrt(nrmRef), 10);
    const out = DeviceBuffer.alloc(8, { stream });
    buffers.push(out);
    blas.dotInto(vx, vy, out, { dtype: 'f64' });
    await stream.synchronized();
    expect(out.toArray(Float64Array)[0]).toBeCloseTo(dotRef, 10);
    blas.axpy(2, vx, vy).scal(0.5, vy);
    await stream.synchronized();
    const got = dy.toArray(Float64Array);
    for (const i of [0, 1, 500, n - 1]) expect(got[i]).toBeCloseTo((2 * x[2 * i] + y[i]) * 0.5, 12);
    // complex dot: dotu and dotc
    const cx = DeviceBuffer.from(new Float32Array([1, 2, 3, -1]));
    const cy = DeviceBuffer.from(new Float32Array([0.5, 1, -2, 0.25]));
    buffers.push(cx, cy);
    expect(blas.dot(cx, cy, { dtype: 'c64' })).toEqual({ re: -7.25, im: 4.75 });
    expect(blas.dot(cx, cy, { dtype: 'c64', conjugate: true })).toEqual({ re: -3.75, im: -1.25 });
  });

  test.each(['row', 'col'] as const)('gemv with a %s-major a, N and T', async (order) => {
    const a = upload(29, 17, 'f32', order, 2, 9);
    for (const t of ['N', 'T'] as const) {
      const [xn, yn] = t === 'N' ? [17, 29] : [29, 17];
      const x = Float32Array.from({ length: xn }, (_, i) => Math.sin(i + 1));
      const dx = DeviceBuffer.from(x);
      const dy = DeviceBuffer.alloc(yn * 4, { stream });
      buffers.push(dx, dy);
      blas.gemv(a.view, dx, dy, { trans: t, dtype: 'f32' });
      await stream.synchronized();
      const got = dy.toArray(Float32Array);
      for (let i = 0; i < yn; i++) {
        let s = 0;
        for (let j = 0; j < xn; j++) s += (t === 'N' ? a.host.get(i, j)[0] : a.host.get(j, i)[0]) * x[j];
        expect(Math.abs(got[i] - s)).toBeLessThanOrEqual(1e-5 * (1 + Math.abs(s)));
      }
    }
  });

  test('closing the stream first: the handle still works on it, the stream is destroyed after the handle', async () => {
    const s = Stream.create();
    const b = Blas.create({ stream: s });
    const x = upload(8, 8, 'f32', 'row');
    s.close();
    expect(s.core.destroyed).toBe(false);
    expect(() => b.gemm(x.view, x.view, x.view)).toThrow(/Blas.gemm: the Stream.* is closed/);
    b.close();
    expect(s.core.destroyed).toBe(true);
    expect(() => b.gemm(x.view, x.view, x.view)).toThrow(/Blas.gemm: the Blas is closed/);
  });

  test('another context made current behind the objects layer: a GEMM on a created stream still lands in the Blas context', async () => {
    const a = upload(16, 16, 'f32', 'row', 0, 61);
    const c = upload(16, 16, 'f32', 'row', 0, 62);
    const other = Context.create(0);
    try {
      blas.gemm(a.view, a.view, c.view); // the door binds the Blas context again
      cu.cuCtxSetCurrent(other.handle); // behind its back: the hinted bind trusts a stale hint
      blas.gemm(a.view, a.view, c.view, { alpha: 2 });
      await stream.synchronized();
      expect(maxRelativeError(HostMatrix.read(c.view), cpuGemm(a.host, 'N', a.host, 'N', undefined, 2, 0))).toBeLessThanOrEqual(1e-5);
    } finally {
      Device.get(0).setCurrent();
      other.close();
    }
  });

  test('setStream moves the work; the half conversions agree with the host', async () => {
    const s2 = Stream.create();
    try {
      blas.setStream(s2);
      expect(blas.stream).toBe(s2);
      const a = upload(4, 4, 'f32', 'row');
      const c = upload(4, 4, 'f32', 'row');
      blas.gemm(a.view, a.view, c.view);
      await s2.synchronized();
      expect(maxRelativeError(HostMatrix.read(c.view), cpuGemm(a.host, 'N', a.host, 'N', undefined, 1, 0))).toBeLessThanOrEqual(1e-5);
    } finally {
      blas.setStream(stream);
      s2.close();
    }
    expect(fromHalf(toHalfBits(1.5))).toBe(1.5);
    expect(fromBf16(toBfloat16Bits(-3))).toBe(-3);
  });
});

describeGpu('Matmul (cuBLASLt) on the GPU', () => {
  let stream: Stream;
  const buffers: DeviceBuffer[] = [];
  beforeAll(() => {
    Device.get(0).setCurrent();
    stream = Stream.create();
  });
  afterAll(() => {
    for (const b of buffers) b.close();
    stream?.close();
  });
  function upload(rows: number, cols: number, dtype: DType, order: Order, pad = 0, seed = 1): { host: HostMatrix; view: StridedView } {
    const host = new HostMatrix(rows, cols, dtype, order, pad, seed);
    const buf = DeviceBuffer.from(host.storage);
    buffers.push(buf);
    return { host, view: matrix(buf, { dtype, rows, cols, order, ld: host.ld }) };
  }
  function vector(values: number[], dtype: 'f32' | 'f16' = 'f32'): DeviceBuffer {
    const buf = DeviceBuffer.from(dtype === 'f32' ? Float32Array.from(values) : Uint16Array.from(values, toHalfBits));
    buffers.push(buf);
    return buf;
  }
  const gelu = (x: number): number => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
  /** The reference with a per-row bias and an activation applied, the magnitudes kept. */
  function withEpilogue(ref: Reference, bias: number[] | undefined, act: ((x: number) => number) | undefined): Reference {
    const out = { ...ref, re: Float64Array.from(ref.re), mag: Float64Array.from(ref.mag) };
    for (let i = 0; i < ref.rows; i++) {
      for (let j = 0; j < ref.cols; j++) {
        const p = i * ref.cols + j;
        const x = out.re[p] + (bias?.[i] ?? 0);
        out.re[p] = act ? act(x) : x;
        out.mag[p] += Math.abs(bias?.[i] ?? 0);
      }
    }
    return out;
  }

  test('37×53×19 f32, row-major a/b, column-major c and d, every planned algorithm agrees', async () => {
    const a = upload(37, 19, 'f32', 'row', 1, 11);
    const b = upload(19, 53, 'f32', 'row', 0, 12);
    const c = upload(37, 53, 'f32', 'col', 3, 13);
    const d = upload(37, 53, 'f32', 'col', 3, 14);
    using mm = Matmul.create({ a: a.view, b: b.view, c: c.view, d: d.view, stream });
    mm.plan({ algorithms: 4 });
    expect(mm.algorithms.length).toBeGreaterThanOrEqual(1);
    const ref = cpuGemm(a.host, 'N', b.host, 'N', c.host, 0.5, -1.5);
    for (let i = 0; i < mm.algorithms.length; i++) {
      mm.select(i).execute({ a: a.view, b: b.view, c: c.view, d: d.view, alpha: 0.5, beta: -1.5 });
      await stream.synchronized();
      expect([i, maxRelativeError(HostMatrix.read(d.view), ref) <= 1e-5]).toEqual([i, true]);
    }
  });

  test('transposes, row-major d, 3-D batches with a broadcast b', async () => {
    const batch = 3;
    const A = new HostMatrix(batch * 19, 37, 'f32', 'row', 0, 21); // each entry 19×37, op 'T' → 37×19
    const bufA = DeviceBuffer.from(A.storage);
    const b = upload(53, 19, 'f32', 'row', 0, 22); // op 'T' → 19×53
    const bufD = DeviceBuffer.alloc(batch * 37 * 53 * 4, { stream });
    buffers.push(bufA, bufD);
    const a3 = StridedView.of(bufA, { dtype: 'f32', shape: [batch, 19, 37] });
    const d3 = StridedView.of(bufD, { dtype: 'f32', shape: [batch, 37, 53] });
    using mm = Matmul.create({ a: a3, b: b.view, d: d3, transA: 'T', transB: 'T', stream });
    mm.plan().execute({ a: a3, b: b.view, d: d3 });
    await stream.synchronized();
    for (let i = 0; i < batch; i++) {
      const di = matrix(bufD, { dtype: 'f32', rows: 37, cols: 53, byteOffset: i * 37 * 53 * 4 });
      expect(maxRelativeError(HostMatrix.read(di), cpuGemm(A.block(i * 19, 19), 'T', b.host, 'T', undefined, 1, 0))).toBeLessThanOrEqual(1e-5);
    }
  });

  test.each([
    ['RELU_BIAS', (x: number) => Math.max(0, x)],
    ['GELU_BIAS', gelu],
    ['BIAS', undefined],
    ['RELU', (x: number) => Math.max(0, x)],
    ['GELU', gelu],
  ] as const)('%s epilogue (f32) against the CPU', async (epilogue, act) => {
    const a = upload(64, 24, 'f32', 'row', 0, 31);
    const b = upload(24, 40, 'f32', 'row', 0, 32);
    const d = upload(64, 40, 'f32', 'col', 0, 33);
    const biasValues = Array.from({ length: 64 }, (_, i) => Math.cos(i) * 0.5);
    const bias = epilogue.includes('BIAS') ? vector(biasValues) : undefined;
    using mm = Matmul.create({ a: a.view, b: b.view, d: d.view, stream });
    mm.plan({ epilogue, bias });
    mm.execute({ a: a.view, b: b.view, d: d.view, bias });
    await stream.synchronized();
    const ref = withEpilogue(cpuGemm(a.host, 'N', b.host, 'N', undefined, 1, 0), bias ? biasValues : undefined, act);
    expect(maxRelativeError(HostMatrix.read(d.view), ref)).toBeLessThanOrEqual(epilogue.startsWith('GELU') ? 2e-3 : 1e-5);
  });

  /** Counts the elements whose bit in the column-major RELU mask (`ldBytes` bytes per column) agrees with d > 0. */
  function maskAgreement(mask: Uint8Array, ldBytes: number, d: { rows: number; cols: number; get(i: number, j: number): [number, number] }): number {
    let agree = 0;
    for (let j = 0; j < d.cols; j++)
      for (let i = 0; i < d.rows; i++) if (((mask[j * ldBytes + (i >> 3)] >> (i & 7)) & 1) === (d.get(i, j)[0] > 0 ? 1 : 0)) agree++;
    return agree;
  }
  const relu = (x: number): number => Math.max(0, x);

  /** RELU_AUX on `mm` (planned here): d equals relu(a·b), the mask marks d > 0. */
  async function reluAuxStep(
    mm: Matmul,
    a: { host: HostMatrix; view: StridedView },
    b: { host: HostMatrix; view: StridedView },
    d: { view: StridedView },
    tol: number,
  ): Promise<void> {
    mm.plan({ epilogue: 'RELU_AUX' });
    const aux = DeviceBuffer.alloc(mm.aux!.bytes, { stream });
    buffers.push(aux);
    aux.memset(0, { stream });
    mm.execute({ a: a.view, b: b.view, d: d.view, aux });
    await stream.synchronized();
    const got = HostMatrix.read(d.view);
    expect(maxRelativeError(got, withEpilogue(cpuGemm(a.host, 'N', b.host, 'N', undefined, 1, 0), undefined, relu))).toBeLessThanOrEqual(tol);
    expect(maskAgreement(aux.toArray(Uint8Array), mm.aux!.ld / 8, got)).toBeGreaterThanOrEqual(got.rows * got.cols - 4); // an exact 0 may go either way
  }

  test('f16 operands into f16 with RELU_BIAS (f16 bias)', async () => {
    const a = upload(48, 32, 'f16', 'row', 0, 41);
    const b = upload(32, 24, 'f16', 'col', 0, 42);
    const d = upload(48, 24, 'f16', 'col', 0, 43);
    const biasValues = Array.from({ length: 48 }, (_, i) => fromHalf(toHalfBits(Math.sin(i) * 0.25)));
    const bias = vector(biasValues, 'f16');
    using mm = Matmul.create({ a: a.view, b: b.view, d: d.view, stream });
    mm.plan({ epilogue: 'RELU_BIAS', bias }).execute({ a: a.view, b: b.view, d: d.view, bias });
    await stream.synchronized();
    expect(maxRelativeError(HostMatrix.read(d.view), withEpilogue(cpuGemm(a.host, 'N', b.host, 'N', undefined, 1, 0), biasValues, relu))).toBeLessThanOrEqual(
      3e-3,
    );
  });

  test('f16 RELU_AUX planned on the Matmul that ran RELU_BIAS: writes its mask and d', async () => {
    const a = upload(48, 32, 'f16', 'row', 0, 44);
    const b = upload(32, 24, 'f16', 'col', 0, 45);
    const d = upload(48, 24, 'f16', 'col', 0, 46);
    const bias = vector(
      Array.from({ length: 48 }, () => 0),
      'f16',
    );
    using mm = Matmul.create({ a: a.view, b: b.view, d: d.view, stream });
    mm.plan({ epilogue: 'RELU_BIAS', bias }).execute({ a: a.view, b: b.view, d: d.view, bias });
    await reluAuxStep(mm, a, b, d, 3e-3);
  });

  test('f16 RELU_AUX on a fresh Matmul, every operand column-major', async () => {
    const a = upload(48, 32, 'f16', 'col', 0, 47);
    const b = upload(32, 24, 'f16', 'col', 0, 48);
    const d = upload(48, 24, 'f16', 'col', 0, 49);
    using mm = Matmul.create({ a: a.view, b: b.view, d: d.view, stream });
    await reluAuxStep(mm, a, b, d, 3e-3);
  });

  test('f32 RELU_AUX on a fresh Matmul: row-major a, column-major b and d', async () => {
    const a = upload(64, 24, 'f32', 'row', 0, 34);
    const b = upload(24, 40, 'f32', 'col', 0, 35);
    const d = upload(64, 40, 'f32', 'col', 0, 36);
    using mm = Matmul.create({ a: a.view, b: b.view, d: d.view, stream });
    await reluAuxStep(mm, a, b, d, 1e-5);
  });

  test('autotune times every algorithm and selects the fastest; results stay right', async () => {
    const a = upload(256, 128, 'f32', 'row', 0, 51);
    const b = upload(128, 192, 'f32', 'row', 0, 52);
    const d = upload(256, 192, 'f32', 'row', 0, 53);
    using mm = Matmul.create({ a: a.view, b: b.view, d: d.view, stream });
    mm.plan({ algorithms: 6 });
    const times = await mm.autotune({ a: a.view, b: b.view, d: d.view }, { iterations: 2 });
    expect(times).toHaveLength(mm.algorithms.length);
    expect(times.every((t) => t > 0)).toBe(true);
    expect(times[mm.selected]).toBe(Math.min(...times));
    mm.execute({ a: a.view, b: b.view, d: d.view });
    await stream.synchronized();
    expect(maxRelativeError(HostMatrix.read(d.view), cpuGemm(a.host, 'N', b.host, 'N', undefined, 1, 0))).toBeLessThanOrEqual(1e-5);
  });

  test('another context made current behind the objects layer: Matmul.execute on a created stream still lands in its context', async () => {
    const a = upload(16, 16, 'f32', 'row', 0, 63);
    const d = upload(16, 16, 'f32', 'col', 0, 64);
    using mm = Matmul.create({ a: a.view, b: a.view, d: d.view, stream }).plan();
    const other = Context.create(0);
    try {
      mm.execute({ a: a.view, b: a.view, d: d.view }); // the door binds the Matmul's context again
      cu.cuCtxSetCurrent(other.handle); // behind its back: the hinted bind trusts a stale hint, the retry binds for real
      mm.execute({ a: a.view, b: a.view, d: d.view, alpha: 2 });
      await stream.synchronized();
      expect(maxRelativeError(HostMatrix.read(d.view), cpuGemm(a.host, 'N', a.host, 'N', undefined, 2, 0))).toBeLessThanOrEqual(1e-5);
    } finally {
      Device.get(0).setCurrent();
      other.close();
    }
  });

  test('closing the stream first: the Matmul still works on it, the stream goes after the Matmul', async () => {
    const s = Stream.create();
    const a = upload(16, 16, 'f32', 'row');
    const mm = Matmul.create({ a: a.view, b: a.view, d: a.view, stream: s }).plan();
    s.close();
    expect(s.core.destroyed).toBe(false);
    expect(() => mm.execute({ a: a.view, b: a.view, d: a.view })).toThrow(/Matmul.execute: the Stream.* is closed/);
    mm.close();
    expect(s.core.destroyed).toBe(true);
    expect(() => mm.execute({ a: a.view, b: a.view, d: a.view })).toThrow(/Matmul.execute: the Matmul is closed/);
  });
});
