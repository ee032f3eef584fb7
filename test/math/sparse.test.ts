// Sparse, SparseMatrix, DenseVector and DenseMatrix without a GPU or cuSPARSE: every argument check
// throws its TypeError/RangeError before cuSPARSE loads; the enum codes; and what valid products hand
// to cuSPARSE (a handle over a fake handle on a driverless context, the typed layer replaced by spies).
import * as cusparseTypes from '../../generated/13.0/cusparse/types';
import * as releases from '../../src/releases';
import { DeviceBuffer } from '../../src/memory/device-buffer';
import { StridedView } from '../../src/memory/strided-view';
import { Stream } from '../../src/stream';
import { CUSPARSE_INDEX_TYPE, CUSPARSE_ORDER, DenseMatrix, DenseVector, SparseMatrix } from '../../src/math/sparse-matrix';
import { Sparse } from '../../src/math/sparse';
import { driverlessContext, fakeContext, fakeDriver, out } from '../helpers/fake-driver';
import type { Context } from '../../src/context';
import { SEALED, type Sealed } from '../../src/sealed';

const ctx = driverlessContext();
const BASE = 0x7f0000000000;

class FakeBuffer extends DeviceBuffer {
  constructor(bytes: number, address = BASE, context: Context = ctx) {
    super(SEALED, 'DeviceBuffer', address, bytes, context, () => undefined);
  }
}
const view = (bytes: number, dtype: 'f32' | 'f64' | 'i32' | 'i64' | 'c64', shape: number[], strides?: number[], address = BASE): StridedView =>
  StridedView.of(new FakeBuffer(bytes, address), { dtype, shape, strides });

let loader: jest.SpyInstance;
beforeEach(() => {
  loader = jest.spyOn(releases, 'loadCusparse');
});
afterEach(() => {
  jest.restoreAllMocks();
});
/** Asserts that nothing loaded cuSPARSE (the argument-check tests). */
const notLoaded = (): void => expect(loader).not.toHaveBeenCalled();

test('index type and order codes equal the generated enums', () => {
  expect(CUSPARSE_INDEX_TYPE).toEqual({ i32: cusparseTypes.cusparseIndexType_t.CUSPARSE_INDEX_32I, i64: cusparseTypes.cusparseIndexType_t.CUSPARSE_INDEX_64I });
  expect(CUSPARSE_ORDER).toEqual({ col: cusparseTypes.cusparseOrder_t.CUSPARSE_ORDER_COL, row: cusparseTypes.cusparseOrder_t.CUSPARSE_ORDER_ROW });
  expect(cusparseTypes.cusparseOperation_t.CUSPARSE_OPERATION_TRANSPOSE).toBe(1);
  expect(cusparseTypes.cusparseOperation_t.CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE).toBe(2);
});

describe('SparseMatrix.csr/coo/csc: argument checks (cuSPARSE not loaded)', () => {
  // a 4×5 CSR matrix with 6 elements: offsets 5 × i32, indices 6 × i32, values 6 × f32
  const parts = (): Record<string, unknown> => ({
    rows: 4,
    cols: 5,
    rowOffsets: view(20, 'i32', [5]),
    colIndices: view(24, 'i32', [6]),
    values: view(24, 'f32', [6]),
  });
  test.each([
    ['null parts', null, TypeError, /SparseMatrix.csr: parts must be an object/],
    ['unknown key', { extra: 1 }, TypeError, /SparseMatrix.csr: unknown option 'extra'/],
    ['negative rows', { rows: -1 }, RangeError, /rows must be an integer ≥ 0, got -1/],
    ['string cols', { cols: '5' }, TypeError, /cols must be an integer, got string/],
    ['missing rowOffsets', { rowOffsets: undefined }, TypeError, /rowOffsets is required/],
    ['CSC part on CSR', { colOffsets: view(24, 'i32', [6]) }, TypeError, /a CSR matrix takes no colOffsets/],
    ['value dtype i32', { values: view(24, 'i32', [6]) }, TypeError, /dtype must be one of f32, f64, c64, c128, got 'i32'/],
    ['index dtype u32', { indexType: 'u32' }, TypeError, /indexType must be one of i32, i64/],
    ['index base 2', { indexBase: 2 }, RangeError, /indexBase must be 0 or 1/],
    ['host values', { values: new Float32Array(6) }, TypeError, /values must be a DeviceBuffer or a StridedView of device memory.*DeviceBuffer.from/],
    ['short row offsets', { rowOffsets: view(16, 'i32', [4]) }, RangeError, /rowOffsets holds 4 i32 elements, needs 5/],
    ['short col indices', { colIndices: view(20, 'i32', [5]) }, RangeError, /colIndices holds 5 i32 elements, needs 6/],
    ['nnz over rows × cols', { rows: 1, cols: 2, nnz: 3 }, RangeError, /nnz 3 exceeds rows × cols = 2/],
    ['2-D values', { values: view(24, 'f32', [2, 3]) }, TypeError, /values must be a 1-D contiguous array/],
    ['strided values', { values: view(48, 'f32', [6], [2]) }, TypeError, /values must be a 1-D contiguous array/],
    ['dtype against the view', { dtype: 'f64' }, TypeError, /values holds f32, expected f64/],
    ['index view of another type', { colIndices: view(48, 'i64', [6]) }, TypeError, /colIndices holds i64, expected i32/],
    ['DeviceBuffer values without dtype', { values: new FakeBuffer(24) }, TypeError, /dtype must be one of f32, f64, c64, c128, got undefined/],
  ])('%s', (_name, change, type, message) => {
    const p = change === null ? null : { ...parts(), ...(change as object) };
    expect(() => SparseMatrix.csr(p as never)).toThrow(type);
    expect(() => SparseMatrix.csr(p as never)).toThrow(message);
    notLoaded();
  });

  test('COO and CSC name their own arrays; DeviceBuffers take the dtype and index type options', () => {
    expect(() => SparseMatrix.coo({ rows: 2, cols: 2, rowOffsets: view(12, 'i32', [3]), values: view(8, 'f32', [2]) } as never)).toThrow(
      /a COO matrix takes no rowOffsets/,
    );
    expect(() =>
      SparseMatrix.csc({ rows: 2, cols: 3, colOffsets: view(12, 'i32', [3]), rowIndices: view(8, 'i32', [2]), values: view(8, 'f32', [2]) }),
    ).toThrow(/colOffsets holds 3 i32 elements, needs 4/);
    // 16 bytes of f64 values: nnz 2; 8 bytes of i64 row indices hold one
    expect(() =>
      SparseMatrix.coo({
        rows: 2,
        cols: 2,
        rowIndices: new FakeBuffer(8),
        colIndices: new FakeBuffer(16),
        values: new FakeBuffer(16),
        dtype: 'f64',
        indexType: 'i64',
      }),
    ).toThrow(/rowIndices holds 1 i64 elements, needs 2/);
    notLoaded();
  });
});

describe('SparseMatrix.fromHost: argument checks before any upload', () => {
  const ok = { rows: 2, cols: 2, rowOffsets: new Int32Array([0, 1, 2]), colIndices: new Int32Array([0, 1]), values: new Float32Array([1, 2]) };
  test.each([
    ['format', 'bsr', ok, TypeError, /format must be 'csr', 'coo' or 'csc'/],
    ['unknown part', 'csr', { ...ok, nnz: 2 }, TypeError, /unknown option 'nnz'/],
    ['rows', 'csr', { ...ok, rows: -2 }, RangeError, /rows must be an integer ≥ 0/],
    ['values type', 'csr', { ...ok, values: new Int32Array(2) }, TypeError, /values must be a Float32Array or Float64Array/],
    ['index type', 'csr', { ...ok, rowOffsets: new Float32Array(3) }, TypeError, /rowOffsets must be an Int32Array or BigInt64Array/],
    ['mixed index types', 'csr', { ...ok, colIndices: new BigInt64Array(2) }, TypeError, /rowOffsets and colIndices must have one index type/],
    ['dtype against values', 'csr', { ...ok, dtype: 'f64' }, TypeError, /dtype 'f64' does not match values, a Float32Array/],
    ['complex dtype of f64 pairs from f32', 'csr', { ...ok, dtype: 'c128' }, TypeError, /dtype 'c128' does not match values/],
    [
      'missing second array',
      'coo',
      { rows: 2, cols: 2, rowIndices: new Int32Array(2), values: new Float64Array(2) },
      TypeError,
      /colIndices must be an Int32Array/,
    ],
  ])('%s', (_name, format, parts, type, message) => {
    const alloc = jest.spyOn(DeviceBuffer, 'from');
    expect(() => SparseMatrix.fromHost(format as never, parts as never)).toThrow(type);
    expect(() => SparseMatrix.fromHost(format as never, parts as never)).toThrow(message);
    expect(alloc).not.toHaveBeenCalled();
    notLoaded();
  });

  test('options must be an object with stream only', () => {
    expect(() => SparseMatrix.fromHost('csr', ok, null as never)).toThrow(/options must be an object/);
    expect(() => SparseMatrix.fromHost('csr', ok, { context: ctx } as never)).toThrow(/unknown option 'context'/);
    notLoaded();
  });
});

describe('DenseVector.of / DenseMatrix.of: argument checks (cuSPARSE not loaded)', () => {
  test.each([
    [() => DenseVector.of(new FakeBuffer(16)), TypeError, /DenseVector.of: dtype must be one of f32, f64, c64, c128, got undefined/],
    [() => DenseVector.of(new FakeBuffer(16), { dtype: 'f32', size: 5 }), RangeError, /v holds 4 elements, needs 5/],
    [() => DenseVector.of(view(24, 'f32', [2, 3])), TypeError, /v must be a 1-D contiguous vector/],
    [() => DenseVector.of(view(24, 'i32', [6])), TypeError, /dtype must be one of f32, f64, c64, c128, got 'i32'/],
    [() => DenseVector.of(new Float32Array(4) as never, { dtype: 'f32' }), TypeError, /a host array: copy it to the GPU first/],
    [() => DenseVector.of(view(16, 'f32', [4]), { count: 4 } as never), TypeError, /unknown option 'count'/],
    [() => DenseMatrix.of(new FakeBuffer(16) as never), TypeError, /DenseMatrix.of: dtype must be one of/],
    [() => DenseMatrix.of(view(64, 'f32', [2, 2], [4, 2])), TypeError, /must be row-major \(strides \[ld ≥ cols, 1\]\) or column-major/],
    [() => DenseMatrix.of(view(64, 'f32', [4])), TypeError, /v must be 2-D, got shape \[4\]/],
  ])('%#', (call, type, message) => {
    expect(call).toThrow(type);
    expect(call).toThrow(message);
    notLoaded();
  });
});

describe('Sparse.create: argument checks', () => {
  test.each([
    [null, TypeError, /Sparse.create: options must be an object/],
    [{ streams: 1 }, TypeError, /unknown option 'streams'/],
    [{ stream: 3 }, TypeError, /Sparse.create: stream must be a Stream/],
  ])('%p', (options, type, message) => {
    expect(() => Sparse.create(options as never)).toThrow(type);
    expect(() => Sparse.create(options as never)).toThrow(message);
    notLoaded();
  });
});

// ── products on a fake handle ────────────────────────────────────────────────────────────────────

type ResolvedLike = { address: number; dtype: string; shape: number[]; strides: number[]; buffer: DeviceBuffer };
const resolved = (address: number, dtype: string, n: number, context = ctx): ResolvedLike => ({
  address,
  dtype,
  shape: [n],
  strides: [1],
  buffer: new FakeBuffer(n * 8, address, context),
});

/** A rows×cols CSR (or `format`) matrix over fake arrays and a fake descriptor; closing it calls nothing. */
function fakeMatrix(rows: number, cols: number, nnz: number, dtype = 'f32', format = 'csr', indexType = 'i32', context = ctx): SparseMatrix {
  const p = {
    rows,
    cols,
    nnz,
    dtype,
    indexType,
    indexBase: 0,
    first: resolved(BASE + 0x1000, indexType, rows + 1, context),
    second: resolved(BASE + 0x2000, indexType, nnz, context),
    values: resolved(BASE + 0x3000, dtype, nnz, context),
  };
  const m = new SparseMatrix(SEALED, format as never, p as never, 0x5a as never, []);
  (m.core as unknown as { destroyNative: () => void }).destroyNative = () => undefined;
  return m;
}

const API = [
  'cusparseCreateDnVec',
  'cusparseDnVecSetValues',
  'cusparseDestroyDnVec',
  'cusparseCreateDnMat',
  'cusparseDnMatSetValues',
  'cusparseDestroyDnMat',
  'cusparseSpMV_bufferSize',
  'cusparseSpMV',
  'cusparseSpMM_bufferSize',
  'cusparseSpMM',
  'cusparseDestroy',
  'cusparseSetStream',
  'cusparseSpGEMM_createDescr',
];
type SparseCtor = new (seal: Sealed, handle: number, stream: Stream) => Sparse;

function fakeSparse(stream = Stream.legacyDefault(ctx)): { sp: Sparse; api: Record<string, jest.Mock> } {
  const sp = new (Sparse as unknown as SparseCtor)(SEALED, 0xabc, stream);
  (sp.core as unknown as { destroyNative: () => void }).destroyNative = () => undefined;
  let next = 0x100;
  const api = Object.fromEntries(API.map((n) => [n, jest.fn(() => (n.startsWith('cusparseCreate') ? next++ : 0))]));
  return { sp, api };
}

describe('Sparse.spmv / spmm / spgemm: argument checks (cuSPARSE not called)', () => {
  const A = (): SparseMatrix => fakeMatrix(3, 4, 5);
  const x = (): StridedView => view(16, 'f32', [4], undefined, BASE + 0x10000);
  const y = (): StridedView => view(12, 'f32', [3], undefined, BASE + 0x20000);
  test.each([
    ['a is not a SparseMatrix', (s: Sparse) => s.spmv({} as never, x(), y()), TypeError, /Sparse.spmv: a must be a SparseMatrix/],
    ['unknown option', (s: Sparse) => s.spmv(A(), x(), y(), { gamma: 1 } as never), TypeError, /Sparse.spmv: unknown option 'gamma'/],
    ['op', (s: Sparse) => s.spmv(A(), x(), y(), { op: 'H' as never }), TypeError, /op must be 'N', 'T' or 'C', got string "H"/],
    ['algorithm', (s: Sparse) => s.spmv(A(), x(), y(), { algorithm: 1.5 }), TypeError, /algorithm must be a cuSPARSE algorithm enum value/],
    ['alpha', (s: Sparse) => s.spmv(A(), x(), y(), { alpha: '2' as never }), TypeError, /alpha must be a number, got string/],
    ['complex beta on f32', (s: Sparse) => s.spmv(A(), x(), y(), { beta: { re: 1, im: 0 } as never }), TypeError, /beta must be a number/],
    ['short x', (s: Sparse) => s.spmv(A(), view(12, 'f32', [3]), y()), RangeError, /Sparse.spmv: x holds 3 elements, needs 4/],
    [
      'x transposed is rows long',
      (s: Sparse) => s.spmv(A(), x(), view(12, 'f32', [3]), { op: 'T' }),
      RangeError,
      /x holds 4 elements, needs 3|y holds 3 elements, needs 4/,
    ],
    ['x of f64', (s: Sparse) => s.spmv(A(), view(32, 'f64', [4]), y()), TypeError, /x holds f64, expected f32/],
    ['x on the host', (s: Sparse) => s.spmv(A(), new Float32Array(4) as never, y()), TypeError, /x must be a DeviceBuffer or a StridedView of device memory/],
    ['y 2-D', (s: Sparse) => s.spmv(A(), x(), view(48, 'f32', [3, 4])), TypeError, /y must be a 1-D contiguous vector/],
    ['spmm b as a buffer', (s: Sparse) => s.spmm(A(), new FakeBuffer(64), view(48, 'f32', [3, 4])), TypeError, /Sparse.spmm: b must be a 2-D StridedView/],
    ['spmm inner size', (s: Sparse) => s.spmm(A(), view(60, 'f32', [5, 3]), view(36, 'f32', [3, 3])), RangeError, /op\(A\) is 3×4 but op\(B\) is 5×3/],
    ['spmm c shape', (s: Sparse) => s.spmm(A(), view(48, 'f32', [4, 3]), view(48, 'f32', [4, 3])), RangeError, /c must be 3×3, got 4×3/],
    ['spmm opB', (s: Sparse) => s.spmm(A(), view(48, 'f32', [4, 3]), view(36, 'f32', [3, 3]), { opB: 'X' as never }), TypeError, /opB must be 'N', 'T' or 'C'/],
    ['spgemm COO', (s: Sparse) => s.spgemm(fakeMatrix(3, 4, 5, 'f32', 'coo'), fakeMatrix(4, 2, 3)), TypeError, /SpGEMM takes CSR matrices, got COO × CSR/],
    ['spgemm dtypes', (s: Sparse) => s.spgemm(A(), fakeMatrix(4, 2, 3, 'f64')), TypeError, /a holds f32, b f64/],
    ['spgemm index types', (s: Sparse) => s.spgemm(A(), fakeMatrix(4, 2, 3, 'f32', 'csr', 'i64')), TypeError, /a has i32 indices, b i64/],
    ['spgemm shapes', (s: Sparse) => s.spgemm(A(), fakeMatrix(3, 2, 3)), RangeError, /a is 3×4, b 3×2: a.cols must equal b.rows/],
    ['spgemm option', (s: Sparse) => s.spgemm(A(), fakeMatrix(4, 2, 3), { beta: 1 } as never), TypeError, /unknown option 'beta'/],
  ])('%s', (_name, call, type, message) => {
    const { sp, api } = fakeSparse();
    loader.mockReturnValue(api);
    expect(() => call(sp)).toThrow(type);
    expect(() => call(sp)).toThrow(message);
    for (const fn of ['cusparseSpMV', 'cusparseSpMM', 'cusparseSpGEMM_createDescr', 'cusparseSpMV_bufferSize']) expect(api[fn]).not.toHaveBeenCalled();
    sp.close();
  });

  test('a closed handle or matrix is refused', () => {
    const { sp, api } = fakeSparse();
    loader.mockReturnValue(api);
    const a = A();
    a.close();
    expect(() => sp.spmv(a, x(), y())).toThrow(/Sparse.spmv: the SparseMatrix \(CSR\) is closed/);
    sp.close();
    expect(() => sp.spmv(A(), x(), y())).toThrow(/Sparse.spmv: the Sparse is closed/);
    expect(api.cusparseSpMV).not.toHaveBeenCalled();
  });
});

describe('Sparse.spmv / spmm: what cuSPARSE receives', () => {
  test('spmv: boxed scalars, element-count descriptors, one buffer-size query per shape, a descriptor per address', () => {
    const { sp, api } = fakeSparse();
    loader.mockReturnValue(api);
    const A = fakeMatrix(3, 4, 5);
    sp.spmv(A, view(16, 'f32', [4], undefined, BASE + 0x10000), view(12, 'f32', [3], undefined, BASE + 0x20000), { alpha: 2, beta: 0.5 });
    // size counts elements (4 and 3), the address is a number, CUDA_R_32F
    expect(api.cusparseCreateDnVec.mock.calls).toEqual([
      [4, BASE + 0x10000, 0],
      [3, BASE + 0x20000, 0],
    ]);
    expect(api.cusparseSpMV_bufferSize).toHaveBeenCalledTimes(1);
    const [h, op, alpha, descr, X, beta, Y, ct, alg, work] = api.cusparseSpMV.mock.calls[0];
    expect([h, op, descr, X, Y, ct, alg, work]).toEqual([0xabc, 0, 0x5a, 0x100, 0x101, 0, 0, 0]);
    expect(alpha).toBeInstanceOf(Float32Array);
    expect([(alpha as Float32Array)[0], (beta as Float32Array)[0]]).toEqual([2, 0.5]);
    // the same shape again, x elsewhere (new view objects): no size query, a descriptor for the new address, nothing re-pointed
    sp.spmv(A, view(16, 'f32', [4], undefined, BASE + 0x30000), view(12, 'f32', [3], undefined, BASE + 0x20000), { op: 'N' });
    expect(api.cusparseSpMV_bufferSize).toHaveBeenCalledTimes(1);
    expect(api.cusparseCreateDnVec.mock.calls.slice(2)).toEqual([[4, BASE + 0x30000, 0]]);
    expect(api.cusparseDnVecSetValues).not.toHaveBeenCalled();
    expect(api.cusparseSpMV.mock.calls[1].slice(4, 7)).toEqual([0x102, expect.any(Float32Array), 0x101]);
    expect([(api.cusparseSpMV.mock.calls[1][2] as Float32Array)[0], (api.cusparseSpMV.mock.calls[1][5] as Float32Array)[0]]).toEqual([1, 0]);
    // transposed: x has rows elements, y cols, another workspace key
    sp.spmv(A, view(12, 'f32', [3], undefined, BASE + 0x40000), view(16, 'f32', [4], undefined, BASE + 0x50000), { op: 'T' });
    expect(api.cusparseSpMV.mock.calls[2][1]).toBe(1);
    expect(api.cusparseSpMV_bufferSize).toHaveBeenCalledTimes(2);
    sp.close();
    expect(api.cusparseDestroyDnVec).toHaveBeenCalledTimes(0); // destroyNative replaced: the fake handle frees nothing
  });

  test('spmv repeated with the operands of one of the last two calls makes one cuSPARSE call, ping-pong included', () => {
    const { sp, api } = fakeSparse();
    loader.mockReturnValue(api);
    const A = fakeMatrix(3, 4, 5);
    const x1 = view(16, 'f32', [4], undefined, BASE + 0x10000);
    const x2 = view(16, 'f32', [4], undefined, BASE + 0x30000);
    const y = view(12, 'f32', [3], undefined, BASE + 0x20000);
    sp.spmv(A, x1, y);
    const counts = (): Record<string, number> => Object.fromEntries(Object.entries(api).map(([k, f]) => [k, f.mock.calls.length]));
    const before = counts();
    const alphaNow = (): number => (api.cusparseSpMV.mock.calls.at(-1)![2] as Float32Array)[0]; // the box, read right after the call
    sp.spmv(A, x1, y, { alpha: 3 });
    expect(alphaNow()).toBe(3);
    sp.spmv(A, x1, y);
    expect(alphaNow()).toBe(1);
    expect(counts()).toEqual({ ...before, cusparseSpMV: before.cusparseSpMV + 2 });
    sp.spmv(A, x2, y); // a second call: a descriptor of its own
    const second = counts();
    for (let i = 0; i < 3; i++) {
      sp.spmv(A, x1, y);
      sp.spmv(A, x2, y);
    }
    expect(counts()).toEqual({ ...second, cusparseSpMV: second.cusparseSpMV + 6 });
    expect(api.cusparseSpMV.mock.calls.slice(-2).map((c) => c[4])).toEqual([0x100, 0x102]);
    expect(api.cusparseDnVecSetValues).not.toHaveBeenCalled();
    // y = B u, u = B y on a square matrix: two calls alternating, each with its descriptors as resolved
    const B = fakeMatrix(4, 4, 5);
    const u = view(16, 'f32', [4], undefined, BASE + 0x40000);
    const v = view(16, 'f32', [4], undefined, BASE + 0x50000);
    sp.spmv(B, u, v);
    sp.spmv(B, v, u);
    const pingPong = counts();
    for (let i = 0; i < 3; i++) {
      sp.spmv(B, u, v);
      sp.spmv(B, v, u);
    }
    expect(counts()).toEqual({ ...pingPong, cusparseSpMV: pingPong.cusparseSpMV + 6 });
    const [last2, last] = api.cusparseSpMV.mock.calls.slice(-2);
    expect([last[4], last[6]]).toEqual([last2[6], last2[4]]);
    expect(last[4]).not.toBe(last[6]);
    x1.buffer.close();
    expect(() => sp.spmv(A, x1, y)).toThrow(/DeviceBuffer is closed/);
    sp.close();
  });

  test('past 8 addresses of one shape the oldest descriptor is re-pointed; a kept call whose descriptor moved resolves again', () => {
    const { sp, api } = fakeSparse();
    loader.mockReturnValue(api);
    const A = fakeMatrix(3, 4, 5);
    const y = view(12, 'f32', [3], undefined, BASE + 0x20000);
    const xs = Array.from({ length: 9 }, (_, i) => view(16, 'f32', [4], undefined, BASE + 0x100000 * (i + 1)));
    for (let i = 0; i < 8; i++) sp.spmv(A, xs[i], y); // 8 x descriptors (0x100, then 0x102… after y's 0x101)
    sp.spmv(A, xs[0], y); // xs[0] again: its descriptor, the oldest, unchanged
    expect(api.cusparseCreateDnVec).toHaveBeenCalledTimes(9);
    expect(api.cusparseDnVecSetValues).not.toHaveBeenCalled();
    sp.spmv(A, xs[8], y); // a ninth address: xs[0]'s descriptor is re-pointed at it
    expect(api.cusparseDnVecSetValues.mock.calls).toEqual([[0x100, BASE + 0x900000]]);
    expect(api.cusparseSpMV.mock.calls.at(-1)![4]).toBe(0x100);
    // xs[0]'s call is still kept, but its descriptor now points elsewhere: it resolves again (the oldest, xs[1]'s, moves to it)
    sp.spmv(A, xs[0], y);
    expect(api.cusparseDnVecSetValues.mock.calls[1]).toEqual([0x102, BASE + 0x100000]);
    expect(api.cusparseSpMV.mock.calls.at(-1)![4]).toBe(0x102);
    expect(api.cusparseCreateDnVec).toHaveBeenCalledTimes(9);
    expect(api.cusparseSpMV_bufferSize).toHaveBeenCalledTimes(1);
    sp.close();
  });

  test('a closed operand or matrix buffer is refused on the repeat path', () => {
    const { sp, api } = fakeSparse();
    loader.mockReturnValue(api);
    const A = fakeMatrix(3, 4, 5);
    const x = DenseVector.of(view(16, 'f32', [4], undefined, BASE + 0x10000));
    const yBuffer = new FakeBuffer(12, BASE + 0x20000);
    const y = DenseVector.of(StridedView.of(yBuffer, { dtype: 'f32', shape: [3] }));
    const xv = view(16, 'f32', [4], undefined, BASE + 0x30000);
    sp.spmv(A, x, y);
    sp.spmv(A, xv, y);
    yBuffer.close(); // the DenseVector keeps the memory, but the buffer was closed: refused as a closed view is
    expect(() => sp.spmv(A, xv, y)).toThrow(/Sparse.spmv: the buffer under DenseVector y was closed/);
    const y2 = DenseVector.of(view(12, 'f32', [3], undefined, BASE + 0x40000));
    sp.spmv(A, x, y2);
    x.close();
    expect(() => sp.spmv(A, x, y2)).toThrow(/Sparse.spmv: x is a closed DenseVector/);
    sp.spmv(A, xv, y2);
    A.buffers[1].close();
    expect(() => sp.spmv(A, xv, y2)).toThrow(/Sparse.spmv: a buffer of the CSR matrix was closed/);
    expect(api.cusparseSpMV).toHaveBeenCalledTimes(4);
    for (const r of [y, y2, sp]) r.close();
  });

  test('on a created stream a repeat trusts the last bind; a failure under another context binds and calls once more', () => {
    const hctx = fakeContext(0x4c4c);
    let current = 0;
    const fake = fakeDriver(hctx, { cuCtxGetCurrent: (slot: unknown) => out(slot, current), cuCtxSetCurrent: (h: number) => ((current = h), 0) });
    try {
      const { sp, api } = fakeSparse(Stream.adoptCreated(0x5e5e as never, hctx));
      loader.mockReturnValue(api);
      const A = fakeMatrix(3, 4, 5, 'f32', 'csr', 'i32', hctx);
      const x = StridedView.of(new FakeBuffer(16, BASE + 0x10000, hctx), { dtype: 'f32', shape: [4] });
      const y = StridedView.of(new FakeBuffer(12, BASE + 0x20000, hctx), { dtype: 'f32', shape: [3] });
      sp.spmv(A, x, y);
      expect(current).toBe(0x4c4c);
      const driverCalls = (): string[] => fake.calls.map(([name]) => name);
      const bound = driverCalls().length;
      for (let i = 0; i < 5; i++) sp.spmv(A, x, y);
      expect(driverCalls().slice(bound)).toEqual([]); // no cuCtxGetCurrent per call
      // native code made another context current behind the door's back: the launch fails, the door binds, calls again
      current = 0x9999;
      api.cusparseSpMV.mockImplementation(() => {
        if (current !== 0x4c4c) throw new Error('cusparseSpMV: CUSPARSE_STATUS_EXECUTION_FAILED');
        return 0;
      });
      const before = api.cusparseSpMV.mock.calls.length;
      sp.spmv(A, x, y);
      expect(api.cusparseSpMV.mock.calls.length - before).toBe(2);
      expect(current).toBe(0x4c4c);
      expect(driverCalls().slice(bound)).toEqual(['cuCtxGetCurrent', 'cuCtxGetCurrent', 'cuCtxSetCurrent']);
      // a failure under the right context is cuSPARSE's own: thrown, not retried
      api.cusparseSpMV.mockImplementation(() => {
        throw new Error('cusparseSpMV: CUSPARSE_STATUS_INTERNAL_ERROR');
      });
      const failed = api.cusparseSpMV.mock.calls.length;
      expect(() => sp.spmv(A, x, y)).toThrow(/INTERNAL_ERROR/);
      expect(api.cusparseSpMV.mock.calls.length - failed).toBe(1);
      sp.close();
    } finally {
      fake.restore();
    }
  });

  test('on a default stream every call binds for real (a wrong context would run the work there)', () => {
    const hctx = fakeContext(0x4d4d);
    const fake = fakeDriver(hctx, {});
    try {
      const { sp, api } = fakeSparse(Stream.legacyDefault(hctx));
      loader.mockReturnValue(api);
      const A = fakeMatrix(3, 4, 5, 'f32', 'csr', 'i32', hctx);
      const x = StridedView.of(new FakeBuffer(16, BASE + 0x10000, hctx), { dtype: 'f32', shape: [4] });
      const y = StridedView.of(new FakeBuffer(12, BASE + 0x20000, hctx), { dtype: 'f32', shape: [3] });
      sp.spmv(A, x, y);
      const bound = fake.calls.length;
      for (let i = 0; i < 3; i++) sp.spmv(A, x, y);
      expect(fake.calls.slice(bound).map(([name]) => name)).toEqual(['cuCtxGetCurrent', 'cuCtxGetCurrent', 'cuCtxGetCurrent']);
      sp.close();
    } finally {
      fake.restore();
    }
  });

  test('spmv takes DenseVector descriptors as they are', () => {
    const { sp, api } = fakeSparse();
    loader.mockReturnValue(api);
    const x = DenseVector.of(view(16, 'f32', [4]));
    const y = DenseVector.of(view(12, 'f32', [3], undefined, BASE + 0x20000));
    sp.spmv(fakeMatrix(3, 4, 5), x, y);
    expect(api.cusparseSpMV.mock.calls[0][4]).toBe(x.descriptor);
    expect(api.cusparseSpMV.mock.calls[0][6]).toBe(y.descriptor);
    expect(() => sp.spmv(fakeMatrix(3, 4, 5), y, x)).toThrow(/Sparse.spmv: x has 3 elements, needs 4/);
    x.close();
    expect(() => sp.spmv(fakeMatrix(3, 4, 5), x, y)).toThrow(/x is a closed DenseVector/);
    expect(api.cusparseDestroyDnVec).toHaveBeenCalledWith(x.descriptor);
    y.close();
    sp.close();
  });

  test('spmm: row- and column-major dense operands with their order and leading dimension', () => {
    const { sp, api } = fakeSparse();
    loader.mockReturnValue(api);
    const A = fakeMatrix(3, 4, 5, 'f64');
    const b = view(4 * 8 * 8, 'f64', [4, 2], [1, 8]); // column-major, ld 8
    const c = view(3 * 5 * 8, 'f64', [3, 2], [5, 1], BASE + 0x9000); // row-major, ld 5
    sp.spmm(A, b, c, { alpha: 3 });
    expect(api.cusparseCreateDnMat.mock.calls).toEqual([
      [4, 2, 8, BASE, 1, CUSPARSE_ORDER.col],
      [3, 2, 5, BASE + 0x9000, 1, CUSPARSE_ORDER.row],
    ]);
    expect((api.cusparseSpMM.mock.calls[0][3] as Float64Array)[0]).toBe(3);
    sp.close();
  });
});
