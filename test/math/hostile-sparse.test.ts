// Sparse, SparseMatrix, DenseVector and DenseMatrix under hostile clients (no GPU): parts with bad
// counts, holes, getters and unknown keys; host arrays of odd lengths; options that are not objects;
// closed, foreign-context, wrong-dtype and look-alike operands and descriptors. Every call succeeds or
// throws TypeError/RangeError starting `Class.method:`, and nothing cuSPARSE's fake receives is a
// value no C function takes.
import { driverlessContext } from '../helpers/fake-driver';
import { DeviceBuffer } from '../../src/memory/device-buffer';
import { StridedView } from '../../src/memory/strided-view';
import { Stream } from '../../src/stream';
import { DenseMatrix, DenseVector, SparseMatrix } from '../../src/math/sparse-matrix';
import { Sparse } from '../../src/math/sparse';
import {
  type CallLog,
  BAD_NUMBERS,
  PROTO_KEYS,
  NOT_OBJECTS,
  NOT_OPERANDS,
  dirtyCalls,
  optionVariants,
  outcome,
  sweep as sweepValues,
  writableFields,
  bufferMaker,
} from './hostile-values';

const calls: CallLog = [];
let nextHandle = 0x100;
const fakeCusparse = new Proxy({} as Record<string, unknown>, {
  get:
    (_t, name: string) =>
    (...args: unknown[]) => {
      calls.push([name, args]);
      return name.startsWith('cusparseCreate') ? nextHandle++ : 0;
    },
});
const loadCusparse = jest.fn(() => fakeCusparse);
jest.mock('../../src/releases', () => ({ ...jest.requireActual('../../src/releases'), loadCusparse: () => loadCusparse() }));

const ctx = driverlessContext();
const otherCtx = driverlessContext(0x9999);
const stream = Stream.legacyDefault(ctx);
const buffer = bufferMaker(ctx, 0x7f6000000000);
type D = 'f32' | 'f64' | 'i32' | 'i64' | 'c64';
const vec = (dtype: D, n: number, context = ctx) => StridedView.of(buffer(16 * Math.max(1, n), context), { dtype, shape: [n] });
const mat = (rows: number, cols: number, dtype: D = 'f32', context = ctx) =>
  StridedView.of(buffer(16 * Math.max(1, rows * cols), context), { dtype, shape: [rows, cols] });
/** A 4×5 CSR matrix with 6 elements. */
const parts = (extra: Record<string, unknown> = {}) => ({
  rows: 4,
  cols: 5,
  rowOffsets: vec('i32', 5),
  colIndices: vec('i32', 6),
  values: vec('f32', 6),
  ...extra,
});
const isWork = (n: string) => /^cusparse(SpMV|SpMM|SpGEMM)/.test(n) || n.startsWith('cusparseCreateCsr') || n.startsWith('cusparseCreateDn');
const sweep = (where: string, values: readonly (readonly [string, unknown])[], call: (v: unknown) => unknown, expect: 'refused' | 'either') =>
  sweepValues(where, values, call, expect, calls, isWork);

let sp: Sparse;
beforeEach(() => {
  sp = Sparse.create({ stream });
  calls.length = 0;
  jest.spyOn(DeviceBuffer, 'from').mockImplementation(((a: ArrayBufferView) => buffer(Math.max(1, a.byteLength))) as never);
  jest.spyOn(DeviceBuffer, 'alloc').mockImplementation((bytes: number) => buffer(bytes));
});
afterEach(() => {
  jest.restoreAllMocks();
  sp.close();
  expect(dirtyCalls(calls)).toEqual([]);
});

describe('SparseMatrix.csr/coo/csc', () => {
  const csr = (p: unknown) => (SparseMatrix.csr(p as never) as SparseMatrix).close();
  test('parts that are not objects, hold unknown keys, or bad counts', () => {
    const values: (readonly [string, unknown])[] = [
      ...NOT_OBJECTS,
      ['unknown key', parts({ zz: 1 })],
      ...BAD_NUMBERS.map(([l, v]) => [`rows ${l}`, parts({ rows: v })] as const),
      ...BAD_NUMBERS.map(([l, v]) => [`cols ${l}`, parts({ cols: v })] as const),
      ...BAD_NUMBERS.filter(([, v]) => v !== null).map(([l, v]) => [`nnz ${l}`, parts({ nnz: v })] as const),
      ...BAD_NUMBERS.filter(([, v]) => v !== null).map(([l, v]) => [`indexBase ${l}`, parts({ indexBase: v })] as const),
      ['nnz 7 of 6 values', parts({ nnz: 7 })],
      ['rows past the offsets', parts({ rows: 5 })],
      ['rows 2**40 × cols 2**40 with i32 indices', parts({ rows: 2 ** 40, cols: 2 ** 40 })],
      ['i64 values', parts({ values: vec('i64', 6) })],
      ['f64 offsets', parts({ rowOffsets: vec('f64', 5) })],
      ['2-D values', parts({ values: mat(2, 3) })],
      ['strided values', parts({ values: StridedView.of(buffer(64), { dtype: 'f32', shape: [6], strides: [2] }) })],
      ['values of another context', parts({ values: vec('f32', 6, otherCtx) })],
    ];
    for (const [l, v] of NOT_OPERANDS) values.push([`values ${l}`, parts({ values: v })], [`rowOffsets ${l}`, parts({ rowOffsets: v })]);
    const closed = vec('f32', 6);
    (closed.buffer as DeviceBuffer).close();
    values.push(['closed values', parts({ values: closed })]);
    expect(sweep('SparseMatrix.csr', values, csr, 'refused')).toEqual([]);
  });
  test('option variants work or are refused', () => {
    const bad: string[] = [];
    for (const [label, o, want] of optionVariants(parts({ nnz: 6, dtype: 'f32', indexType: 'i32', indexBase: 0 }))) {
      bad.push(...sweep('SparseMatrix.csr', [[label, o]], csr, want === 'refused' ? 'refused' : 'either'));
      if (want === 'ok' && outcome('SparseMatrix.csr', () => csr(o)) !== 'ok') bad.push(`${label}: refused`);
    }
    expect(bad).toEqual([]);
  });
  test('fromHost: formats, host arrays, odd complex lengths, options', () => {
    const host = (extra: Record<string, unknown> = {}) => ({
      rows: 2,
      cols: 3,
      rowOffsets: new Int32Array([0, 2, 3]),
      colIndices: new Int32Array([0, 2, 1]),
      values: new Float32Array([1, 2, 3]),
      ...extra,
    });
    const values: (readonly [string, unknown])[] = [
      ['format', ['dense', host()]],
      ['format symbol', [Symbol('f'), host()]],
      ...NOT_OBJECTS.map(([l, v]) => [`parts ${l}`, ['csr', v]] as const),
      ...NOT_OBJECTS.map(([l, v]) => [`options ${l}`, ['csr', host(), v]] as const),
      ['options unknown key', ['csr', host(), { zz: 1 }]],
      ['values a plain array', ['csr', host({ values: [1, 2, 3] })]],
      ['indices a Uint32Array', ['csr', host({ colIndices: new Uint32Array([0, 2, 1]) })]],
      ['mixed index types', ['csr', host({ colIndices: new BigInt64Array([0n, 2n, 1n]) })]],
      ['c64 of an odd number of floats', ['csr', host({ dtype: 'c64' })]],
      ['c128 over a Float32Array', ['csr', host({ dtype: 'c128' })]],
      ['short offsets', ['csr', host({ rowOffsets: new Int32Array([0, 2]) })]],
      ...BAD_NUMBERS.map(([l, v]) => [`rows ${l}`, ['csr', host({ rows: v })]] as const),
    ];
    const run = (args: unknown) => (SparseMatrix.fromHost(...(args as [never, never, never])) as SparseMatrix).close();
    expect(sweep('SparseMatrix.fromHost', values, run, 'refused')).toEqual([]);
    expect(() => run(['csr', host({ dtype: 'c64' })])).toThrow(/values/);
  });
});

test('choices named like Object.prototype members are refused (op, dtype, indexType)', () => {
  const a = SparseMatrix.csr(parts());
  const bad: string[] = [];
  for (const [l, k] of PROTO_KEYS) {
    bad.push(...sweep('Sparse.spmv', [[`op ${l}`, { op: k }]], (o) => sp.spmv(a, vec('f32', 5), vec('f32', 4), o as never), 'refused'));
    bad.push(...sweep('Sparse.spmm', [[`opB ${l}`, { opB: k }]], (o) => sp.spmm(a, mat(5, 2), mat(4, 2), o as never), 'refused'));
    bad.push(...sweep('SparseMatrix.csr', [[`indexType ${l}`, parts({ indexType: k })]], (p) => SparseMatrix.csr(p as never).close(), 'refused'));
    bad.push(...sweep('DenseVector.of', [[`dtype ${l}`, { dtype: k }]], (o) => DenseVector.of(buffer(16), o as never).close(), 'refused'));
  }
  expect(bad).toEqual([]);
  a.close();
});

describe('DenseVector.of and DenseMatrix.of', () => {
  test('DenseVector.of: look-alikes, bad sizes, bad options', () => {
    const values: (readonly [string, unknown])[] = [
      ...NOT_OPERANDS.map(([l, v]) => [`v ${l}`, [v]] as const),
      ...NOT_OBJECTS.map(([l, v]) => [`options ${l}`, [vec('f32', 4), v]] as const),
      ['unknown option', [vec('f32', 4), { zz: 1 }]],
      ...BAD_NUMBERS.filter(([, v]) => v !== null).map(([l, v]) => [`size ${l}`, [vec('f32', 4), { size: v }]] as const),
      ['size 5 of 4', [vec('f32', 4), { size: 5 }]],
      ['i32 view', [vec('i32', 4)]],
      ['buffer without dtype', [buffer(16)]],
      ['2-D view', [mat(2, 2)]],
    ];
    const run = (args: unknown) => DenseVector.of(...(args as [never, never])).close();
    expect(sweep('DenseVector.of', values, run, 'refused')).toEqual([]);
  });
  test('DenseMatrix.of: look-alikes, 1-D, 3-D, non-unit strides', () => {
    const values: (readonly [string, unknown])[] = [
      ...NOT_OPERANDS,
      ['a buffer', buffer(64)],
      ['1-D', vec('f32', 4)],
      ['3-D', StridedView.of(buffer(64), { dtype: 'f32', shape: [2, 2, 2] })],
      ['every other column', StridedView.of(buffer(256), { dtype: 'f32', shape: [4, 4], strides: [8, 2] })],
      ['i32', mat(2, 2, 'i32')],
    ];
    expect(sweep('DenseMatrix.of', values, (v) => DenseMatrix.of(v as never).close(), 'refused')).toEqual([]);
  });
});

test('the fields the products check are read-only: a matrix cannot claim other dimensions than its descriptor', () => {
  const a = SparseMatrix.csr(parts());
  const dv = DenseVector.of(vec('f32', 5));
  const dm = DenseMatrix.of(mat(5, 2));
  expect(writableFields(a, { rows: 1, cols: 1, nnz: 0, dtype: 'f64', indexType: 'i64', format: 'coo', descriptor: 1 })).toEqual([]);
  expect(writableFields(dv, { size: 1, dtype: 'f64', descriptor: 1, operand: {} })).toEqual([]);
  expect(writableFields(dv.operand, { address: 0 })).toEqual([]);
  expect(writableFields(dm, { rows: 1, cols: 1, shape: {} })).toEqual([]);
  expect(writableFields(sp, { context: otherCtx })).toEqual([]);
  for (const o of [a, dv, dm]) o.close();
});

describe('Sparse.spmv, spmm, spgemm', () => {
  const A = () => SparseMatrix.csr(parts());
  test('options that are not objects, unknown keys, bad ops, algorithms and scalars', () => {
    const a = A();
    const values: (readonly [string, unknown])[] = [
      ...NOT_OBJECTS,
      ['unknown', { zz: 1 }],
      ...BAD_NUMBERS.map(([l, v]) => [`algorithm ${l}`, { algorithm: v }] as const),
      ['op symbol', { op: Symbol('o') }],
      ['op lower-case', { op: 'n' }],
      ['alpha string', { alpha: '1' }],
      ['alpha bigint', { alpha: 1n }],
      ['alpha complex on f32', { alpha: [1, 0] }],
    ];
    expect(sweep('Sparse.spmv', values, (o) => sp.spmv(a, vec('f32', 5), vec('f32', 4), o as never), 'refused')).toEqual([]);
    expect(sweep('Sparse.spmm', values, (o) => sp.spmm(a, mat(5, 2), mat(4, 2), o as never), 'refused')).toEqual([]);
    expect(sweep('Sparse.spgemm', values.slice(0, 8), (o) => sp.spgemm(a, a, o as never), 'refused')).toEqual([]);
    a.close();
  });
  test('spmv option variants work or are refused', () => {
    const a = A();
    const bad: string[] = [];
    const run = (o: unknown) => sp.spmv(a, vec('f32', 5), vec('f32', 4), o as never);
    for (const [label, o, want] of optionVariants({ alpha: 2, beta: 1, op: 'N', algorithm: 0 })) {
      bad.push(...sweep('Sparse.spmv', [[label, o]], run, want === 'refused' ? 'refused' : 'either'));
      if (want === 'ok' && outcome('Sparse.spmv', () => run(o)) !== 'ok') bad.push(`${label}: refused`);
    }
    expect(bad).toEqual([]);
    a.close();
  });
  test('closed, foreign-context and look-alike operands and descriptors', () => {
    const a = A();
    const foreignA = SparseMatrix.csr(parts({ rowOffsets: vec('i32', 5, otherCtx), colIndices: vec('i32', 6, otherCtx), values: vec('f32', 6, otherCtx) }));
    const closedA = A();
    closedA.close();
    const closedX = vec('f32', 5);
    (closedX.buffer as DeviceBuffer).close();
    const foreignDv = DenseVector.of(vec('f32', 5, otherCtx));
    const foreignDm = DenseMatrix.of(mat(5, 2, 'f32', otherCtx));
    const closedDm = DenseMatrix.of(mat(5, 2));
    closedDm.close();
    const cases: [string, string, () => unknown][] = [
      ...NOT_OPERANDS.map(
        ([l, v]) => [`spmv a ${l}`, 'Sparse.spmv', () => sp.spmv(v as never, vec('f32', 5), vec('f32', 4))] as [string, string, () => unknown],
      ),
      ...NOT_OPERANDS.map(([l, v]) => [`spmv x ${l}`, 'Sparse.spmv', () => sp.spmv(a, v as never, vec('f32', 4))] as [string, string, () => unknown]),
      ...NOT_OPERANDS.map(([l, v]) => [`spmm b ${l}`, 'Sparse.spmm', () => sp.spmm(a, v as never, mat(4, 2))] as [string, string, () => unknown]),
      ['spmv closed a', 'Sparse.spmv', () => sp.spmv(closedA, vec('f32', 5), vec('f32', 4))],
      ['spmv foreign a', 'Sparse.spmv', () => sp.spmv(foreignA, vec('f32', 5), vec('f32', 4))],
      ['spmv closed x', 'Sparse.spmv', () => sp.spmv(a, closedX, vec('f32', 4))],
      ['spmv foreign x', 'Sparse.spmv', () => sp.spmv(a, vec('f32', 5, otherCtx), vec('f32', 4))],
      ['spmv foreign DenseVector x', 'Sparse.spmv', () => sp.spmv(a, foreignDv, vec('f32', 4))],
      ['spmv f64 y', 'Sparse.spmv', () => sp.spmv(a, vec('f32', 5), vec('f64', 4))],
      ['spmm foreign DenseMatrix b', 'Sparse.spmm', () => sp.spmm(a, foreignDm, mat(4, 2))],
      ['spmm closed DenseMatrix b', 'Sparse.spmm', () => sp.spmm(a, closedDm, mat(4, 2))],
      ['spmm foreign c', 'Sparse.spmm', () => sp.spmm(a, mat(5, 2), mat(4, 2, 'f32', otherCtx))],
      ['spgemm foreign b', 'Sparse.spgemm', () => sp.spgemm(a, foreignA)],
      ['spgemm closed a', 'Sparse.spgemm', () => sp.spgemm(closedA, a)],
    ];
    const bad = cases.map(([l, where, run]) => [l, outcome(where, run)]).filter(([, got]) => got !== 'refused');
    expect(bad).toEqual([]);
    expect(calls.filter(([n]) => /^cusparse(SpMV|SpMM|SpGEMM)/.test(n))).toEqual([]);
    for (const o of [a, foreignA, foreignDv, foreignDm]) o.close();
  });
  test('the remembered spmv does not take a foreign or closed x on the next call', () => {
    const a = A();
    const x = vec('f32', 5);
    sp.spmv(a, x, vec('f32', 4));
    (x.buffer as DeviceBuffer).close();
    expect(outcome('Sparse.spmv', () => sp.spmv(a, x, vec('f32', 4)))).toBe('refused');
    a.close();
  });
  test('setStream refuses non-streams and another context’s stream; create refuses hostile options', () => {
    const values = [...NOT_OPERANDS.filter(([, v]) => v !== undefined), ['other context', Stream.legacyDefault(otherCtx)]] as const;
    expect(sweep('Sparse.setStream', values, (s) => sp.setStream(s as never), 'refused')).toEqual([]);
    const options = [...NOT_OBJECTS, ['unknown', { zz: 1 }], ['stream number', { stream: 5 }]] as const;
    expect(sweep('Sparse.create', options, (o) => Sparse.create(o as never).close(), 'refused')).toEqual([]);
  });
});
