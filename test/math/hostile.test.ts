// Blas under hostile clients (no GPU): NaN/Infinity/bigint/negative/fractional numbers, non-objects,
// options with unknown or inherited keys, getters and Proxies that change their answers, wrong-dtype,
// closed and foreign-context views, look-alike operands. Every call succeeds or throws TypeError/RangeError
// starting `Blas.method:`, and nothing cuBLAS's fake receives is a value no C function takes.
import { driverlessContext } from '../helpers/fake-driver';
import { DeviceBuffer } from '../../src/memory/device-buffer';
import { StridedView } from '../../src/memory/strided-view';
import { Stream } from '../../src/stream';
import { Blas } from '../../src/math/blas';
import { matrix } from '../../src/math/matrix';
import { operand } from '../../src/math/common';
import {
  type CallLog,
  BAD_NUMBERS,
  PROTO_KEYS,
  NOT_OBJECTS,
  NOT_OPERANDS,
  POISON,
  dirtyCalls,
  optionVariants,
  outcome,
  sweep as sweepValues,
  writableFields,
  bufferMaker,
  recordingLibrary,
} from './hostile-values';

const calls: CallLog = [];
const fakeCublas = recordingLibrary(calls, { cublasCreate: 0xb1a5 });
const loadCublas = jest.fn(() => fakeCublas);
jest.mock('../../src/releases', () => ({ ...jest.requireActual('../../src/releases'), loadCublas: () => loadCublas() }));

const ctx = driverlessContext();
const otherCtx = driverlessContext(0x9999);
const stream = Stream.legacyDefault(ctx);
const buffer = bufferMaker(ctx, 0x7f1000000000);
type D = 'f32' | 'f64' | 'c64' | 'i32' | 'f16';
const mat = (rows: number, cols: number, dtype: D = 'f32', context = ctx) => matrix(buffer(16 * Math.max(1, rows * cols), context), { dtype, rows, cols });
const vec = (n: number, dtype: D = 'f32', context = ctx) => StridedView.of(buffer(16 * Math.max(1, n), context), { dtype, shape: [n] });

let blas: Blas;
beforeEach(() => {
  blas = Blas.create({ stream });
  calls.length = 0;
  // gemmBatched's pointer table: a fake device buffer whose copy is logged
  jest.spyOn(DeviceBuffer, 'alloc').mockImplementation((bytes: number) => {
    const b = buffer(bytes);
    (b as unknown as { copyFrom: (t: unknown) => void }).copyFrom = (t) => void calls.push(['copyFrom', [t]]);
    return b;
  });
});
afterEach(() => {
  jest.restoreAllMocks();
  blas.close();
  expect(dirtyCalls(calls)).toEqual([]);
});

const isWork = (n: string) => !/^cublas(Create|SetStream|SetPointerMode|Destroy|GetPointerMode)/.test(n);
const sweep = (where: string, values: readonly (readonly [string, unknown])[], call: (v: unknown) => unknown, expect: 'refused' | 'either') =>
  sweepValues(where, values, call, expect, calls, isWork);

/** Every method of Blas with valid arguments, and a way to swap in one hostile argument. */
const METHODS: Record<string, (b: Blas, o?: unknown) => unknown> = {
  gemm: (b, o) => b.gemm(mat(4, 3), mat(3, 2), mat(4, 2), o as never),
  gemmEx: (b, o) => b.gemmEx(mat(4, 3), mat(3, 2), mat(4, 2), o as never),
  gemmStridedBatched: (b, o) => b.gemmStridedBatched(mat(4, 3), mat(3, 2), mat(4, 2), o as never),
  gemmBatched: (b, o) => b.gemmBatched([mat(4, 3)], [mat(3, 2)], [mat(4, 2)], o as never),
  axpy: (b, o) => b.axpy(2, vec(5), vec(5), o as never),
  scal: (b, o) => b.scal(2, vec(5), o as never),
  dot: (b, o) => b.dot(vec(5), vec(5), o as never),
  dotInto: (b, o) => b.dotInto(vec(5), vec(5), vec(1), o as never),
  nrm2: (b, o) => b.nrm2(vec(5), o as never),
  nrm2Into: (b, o) => b.nrm2Into(vec(5), vec(1), o as never),
  gemv: (b, o) => b.gemv(mat(4, 3), vec(3), vec(4), o as never),
};
const VALID_OPTIONS: Record<string, Record<string, unknown>> = {
  gemm: { transA: 'N', transB: 'T', alpha: 2, beta: 1 },
  gemmEx: { transA: 'N', alpha: 2, beta: 1, computeType: '32F', algo: -1 },
  gemmStridedBatched: { alpha: 2, beta: 1, computeType: '32F', algo: -1 },
  gemmBatched: { alpha: 2, beta: 1, computeType: '32F', algo: -1 },
  axpy: { dtype: 'f32' },
  scal: { dtype: 'f32' },
  dot: { dtype: 'f32', conjugate: false },
  dotInto: { dtype: 'f32', conjugate: false },
  nrm2: { dtype: 'f32' },
  nrm2Into: { dtype: 'f32' },
  gemv: { trans: 'N', alpha: 2, beta: 1 },
};

describe('options objects', () => {
  test.each(Object.keys(METHODS))('Blas.%s: non-objects are refused', (name) => {
    const bad = sweep(`Blas.${name}`, NOT_OBJECTS, (o) => METHODS[name](blas, o), 'refused');
    expect(bad).toEqual([]);
  });
  test.each(Object.keys(METHODS))('Blas.%s: unknown, inherited, Symbol keys, getters and Proxies', (name) => {
    const valid = VALID_OPTIONS[name];
    // transB 'T' needs b transposed: the valid call of gemm uses b 2×3
    const run = name === 'gemm' ? (o: unknown) => blas.gemm(mat(4, 3), mat(2, 3), mat(4, 2), o as never) : (o: unknown) => METHODS[name](blas, o);
    expect(outcome(`Blas.${name}`, () => run(valid))).toBe('ok');
    const bad: string[] = [];
    for (const [label, o, want] of optionVariants(valid)) {
      bad.push(...sweep(`Blas.${name}`, [[label, o]], run, want === 'refused' ? 'refused' : 'either'));
      if (want === 'ok' && outcome(`Blas.${name}`, () => run(o)) !== 'ok') bad.push(`${label}: refused`);
    }
    expect(bad).toEqual([]);
  });
  test.each([
    ['gemmEx', 'algo'],
    ['gemmStridedBatched', 'algo'],
    ['gemmBatched', 'algo'],
  ])('Blas.%s: %s takes no bad number', (name, key) => {
    const bad = sweep(`Blas.${name}`, BAD_NUMBERS, (v) => METHODS[name](blas, { ...VALID_OPTIONS[name], [key]: v }), 'either');
    // -1 is CUBLAS_GEMM_DEFAULT: the only bad number that may pass
    const accepted = BAD_NUMBERS.filter(([, v]) => outcome(`Blas.${name}`, () => METHODS[name](blas, { [key]: v })) === 'ok').map(([l]) => l);
    expect(bad).toEqual([]);
    expect(accepted).toEqual(['-1']);
  });
  test.each([['dot'], ['dotInto']])('Blas.%s: conjugate read once (a getter cannot switch dot to dotc)', (name) => {
    let reads = 0;
    const o = {
      get conjugate() {
        return reads++ < 2 ? false : true;
      },
    };
    const x = vec(5, 'c64');
    if (name === 'dot') blas.dot(x, vec(5, 'c64'), o);
    else blas.dotInto(x, vec(5, 'c64'), vec(1, 'c64'), o);
    expect(calls.filter(([n]) => isWork(n)).map(([n]) => n)).toEqual(['cublasCdotu']);
  });
});

describe('scalars', () => {
  const scalars: (readonly [string, unknown])[] = [
    // null is an absent option (`??`), the default scalar: not a bad value here
    ...BAD_NUMBERS.filter(([, v]) => typeof v !== 'number' && v !== null),
    ['{ re, im } on a real dtype', { re: 1, im: 0 }],
  ];
  test.each([['axpy'], ['scal']])('Blas.%s: alpha must be a number', (name) => {
    const run = (a: unknown) => (name === 'axpy' ? blas.axpy(a as never, vec(5), vec(5)) : blas.scal(a as never, vec(5)));
    expect(sweep(`Blas.${name}`, scalars, run, 'refused')).toEqual([]);
  });
  test.each([['gemm'], ['gemmEx'], ['gemmStridedBatched'], ['gemmBatched'], ['gemv']])('Blas.%s: alpha and beta must be numbers', (name) => {
    for (const key of ['alpha', 'beta']) expect(sweep(`Blas.${name}`, scalars, (v) => METHODS[name](blas, { [key]: v }), 'refused')).toEqual([]);
  });
  test('complex scalars: a getter or Proxy re/im is read once', () => {
    let reads = 0;
    const alpha = {
      get re() {
        return reads++ === 0 ? 1 : POISON;
      },
      im: 0,
    };
    const c = () => mat(2, 2, 'c64');
    expect(outcome('Blas.gemm', () => blas.gemm(c(), c(), c(), { alpha: alpha as never }))).toMatch(/ok|refused/);
    const tuple = new Proxy([1, 0], { get: (t, k, r) => (k === '0' && reads++ > 3 ? POISON : Reflect.get(t, k, r)) });
    expect(outcome('Blas.axpy', () => blas.axpy(tuple as never, vec(3, 'c64'), vec(3, 'c64')))).toMatch(/ok|refused/);
  });
});

describe('operands', () => {
  test.each(Object.keys(METHODS))('Blas.%s: look-alikes and host arrays are refused', (name) => {
    const sweeps: Record<string, (v: unknown) => unknown> = {
      gemm: (v) => blas.gemm(v as never, mat(3, 2), mat(4, 2)),
      gemmEx: (v) => blas.gemmEx(mat(4, 3), v as never, mat(4, 2)),
      gemmStridedBatched: (v) => blas.gemmStridedBatched(mat(4, 3), mat(3, 2), v as never),
      gemmBatched: (v) => blas.gemmBatched([mat(4, 3)], [v as never], [mat(4, 2)]),
      axpy: (v) => blas.axpy(1, vec(5), v as never),
      scal: (v) => blas.scal(1, v as never),
      dot: (v) => blas.dot(v as never, vec(5)),
      dotInto: (v) => blas.dotInto(vec(5), vec(5), v as never),
      nrm2: (v) => blas.nrm2(v as never),
      nrm2Into: (v) => blas.nrm2Into(vec(5), v as never),
      gemv: (v) => blas.gemv(mat(4, 3), v as never, vec(4)),
    };
    expect(sweep(`Blas.${name}`, NOT_OPERANDS, sweeps[name], 'refused')).toEqual([]);
  });
  test('closed buffers, other contexts, wrong dtypes, zero sizes', () => {
    const closed = mat(4, 3);
    (closed.buffer as DeviceBuffer).close();
    const parent = buffer(64);
    const orphan = parent.subarray(0, 20);
    parent.close();
    const closedVec = vec(5);
    (closedVec.buffer as DeviceBuffer).close();
    const cases: [string, string, () => unknown, 'ok' | 'refused'][] = [
      ['closed a', 'Blas.gemm', () => blas.gemm(closed, mat(3, 2), mat(4, 2)), 'refused'],
      ['a view of a subarray whose parent is closed', 'Blas.axpy', () => blas.axpy(1, orphan, vec(5), { dtype: 'f32' }), 'refused'],
      ['closed x', 'Blas.axpy', () => blas.axpy(1, closedVec, vec(5)), 'refused'],
      ['foreign c', 'Blas.gemm', () => blas.gemm(mat(4, 3), mat(3, 2), mat(4, 2, 'f32', otherCtx)), 'refused'],
      ['foreign y', 'Blas.axpy', () => blas.axpy(1, vec(5), vec(5, 'f32', otherCtx)), 'refused'],
      ['foreign result', 'Blas.dotInto', () => blas.dotInto(vec(5), vec(5), vec(1, 'f32', otherCtx)), 'refused'],
      ['foreign batch', 'Blas.gemmBatched', () => blas.gemmBatched([mat(4, 3)], [mat(3, 2, 'f32', otherCtx)], [mat(4, 2)]), 'refused'],
      ['i32 gemm', 'Blas.gemm', () => blas.gemm(mat(4, 3, 'i32'), mat(3, 2, 'i32'), mat(4, 2, 'i32')), 'refused'],
      ['mixed gemm', 'Blas.gemm', () => blas.gemm(mat(4, 3, 'f64'), mat(3, 2, 'f64'), mat(4, 2)), 'refused'],
      ['i32 axpy', 'Blas.axpy', () => blas.axpy(1, vec(5, 'i32'), vec(5, 'i32')), 'refused'],
      ['buffer of another dtype', 'Blas.axpy', () => blas.axpy(1, buffer(20), vec(5), { dtype: 'f64' }), 'refused'],
      ['empty result', 'Blas.dotInto', () => blas.dotInto(vec(5), vec(5), vec(0)), 'refused'],
      ['zero-sized gemm', 'Blas.gemm', () => blas.gemm(mat(0, 3), mat(3, 0), mat(0, 0)), 'ok'],
      ['zero-length axpy', 'Blas.axpy', () => blas.axpy(1, vec(0), vec(0)), 'ok'],
      ['zero-length nrm2', 'Blas.nrm2', () => blas.nrm2(vec(0)), 'ok'],
    ];
    const bad = cases.map(([label, where, run, want]) => [label, outcome(where, run), want]).filter(([, got, want]) => got !== want);
    expect(bad).toEqual([]);
  });
  test('Blas.gemmBatched: a list whose length or elements change while read is refused or read once', () => {
    const views = [mat(4, 3), mat(4, 3)];
    let lengthReads = 0;
    const shrinking = new Proxy(views, { get: (t, k, r) => (k === 'length' ? (lengthReads++ < 1 ? 2 : 1) : Reflect.get(t, k, r)) });
    const run = () => blas.gemmBatched(shrinking, [mat(3, 2), mat(3, 2)], [mat(4, 2), mat(4, 2)]);
    expect(outcome('Blas.gemmBatched', run)).toMatch(/ok|refused/);
    expect(calls.filter(([n]) => n === 'copyFrom').length).toBeLessThanOrEqual(1);
    // the pointer table copied to the GPU holds no NULL address
    const tables = calls.flatMap(([, args]) => args.filter((a): a is Uint32Array => a instanceof Uint32Array));
    for (const t of tables) for (let i = 0; i < t.length; i += 2) expect(t[i] + t[i + 1]).not.toBe(0);
  });
});

test('Blas.gemmBatched: holey lists of 2**31 - 1 entries are refused at their first hole, before a 48 GiB table is made', () => {
  const huge = (first: StridedView) => Object.assign(new Array(2 ** 31 - 1), { 0: first });
  const started = Date.now();
  expect(() => blas.gemmBatched(huge(mat(4, 3)), huge(mat(3, 2)), huge(mat(4, 2)))).toThrow(
    /^Blas.gemmBatched: c must be a 2-D StridedView of device memory, got undefined/,
  );
  expect(Date.now() - started).toBeLessThan(1000);
});

test('operand(): a view whose dtype answers differently on each read resolves to the dtype it was checked with', () => {
  const real = vec(4);
  let reads = 0;
  const flipping = new Proxy(real, { get: (t, k) => (k === 'dtype' ? (reads++ === 0 ? 'f32' : 'f16') : Reflect.get(t, k, t)) });
  expect(operand('T.m', 'x', flipping, 'f32').dtype).toBe('f32');
});

test('a handle’s context is read-only (the context checks compare against the handle’s own)', () => {
  expect(writableFields(blas, { context: otherCtx })).toEqual([]);
});

test('matrix(): options that are not objects, unknown keys, bad numbers', () => {
  const values: (readonly [string, unknown])[] = [
    ...NOT_OBJECTS,
    ['unknown key', { dtype: 'f32', rows: 2, cols: 2, zz: 1 }],
    ['dtype symbol', { dtype: Symbol('d'), rows: 2, cols: 2 }],
    ['order symbol', { dtype: 'f32', rows: 2, cols: 2, order: Symbol('o') }],
    ['past the buffer', { dtype: 'f64', rows: 64, cols: 64 }],
  ];
  for (const key of ['rows', 'cols', 'ld', 'byteOffset'])
    values.push(...BAD_NUMBERS.filter(([, v]) => v !== null).map(([l, v]) => [`${key} ${l}`, { dtype: 'f32', rows: 2, cols: 2, [key]: v }] as const));
  expect(sweep('matrix', values, (o) => matrix(buffer(4096), o as never), 'refused')).toEqual([]);
});

test('choices named like Object.prototype members are refused (trans, computeType, dtype)', () => {
  const bad: string[] = [];
  for (const [l, k] of PROTO_KEYS) {
    bad.push(...sweep('Blas.gemm', [[`transA ${l}`, { transA: k }]], (o) => METHODS.gemm(blas, o), 'refused'));
    bad.push(...sweep('Blas.gemmEx', [[`computeType ${l}`, { computeType: k }]], (o) => METHODS.gemmEx(blas, o), 'refused'));
    bad.push(...sweep('Blas.axpy', [[`dtype ${l}`, { dtype: k }]], (o) => blas.axpy(1, buffer(20), buffer(20), o as never), 'refused'));
    bad.push(...sweep('matrix', [[`dtype ${l}`, { dtype: k, rows: 2, cols: 2 }]], (o) => matrix(buffer(64), o as never), 'refused'));
  }
  expect(bad).toEqual([]);
});

describe('create and setStream', () => {
  test('Blas.create refuses hostile options before loading cuBLAS', () => {
    loadCublas.mockClear();
    const values = [
      ...NOT_OBJECTS,
      ['unknown key', { stream, zz: 1 }],
      ['inherited unknown', Object.create({ zz: 1 })],
      ['stream number', { stream: 5 }],
    ] as const;
    expect(sweep('Blas.create', values, (o) => Blas.create(o as never), 'refused')).toEqual([]);
    expect(loadCublas).not.toHaveBeenCalled();
  });
  test('Blas.setStream refuses non-streams and another context’s stream', () => {
    // undefined is the current context's default stream (documented): left out, as it needs the driver
    const values = [...NOT_OPERANDS.filter(([, v]) => v !== undefined), ['other context', Stream.legacyDefault(otherCtx)]] as const;
    expect(sweep('Blas.setStream', values, (s) => blas.setStream(s as never), 'refused')).toEqual([]);
  });
});
