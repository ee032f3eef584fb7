// Matmul under hostile clients (no GPU): descriptions with holes, bad numbers, past-int32 batches and
// getters; plan options, execute operands and autotune options that are not objects, hold unknown keys,
// or change their answers; closed, foreign-context and look-alike operands and streams. Every call
// succeeds or throws TypeError/RangeError starting `Matmul.method:`, and nothing cuBLASLt's fake
// receives is a value no C function takes.
import { driverlessContext } from '../helpers/fake-driver';
import { DeviceBuffer } from '../../src/memory/device-buffer';
import { StridedView } from '../../src/memory/strided-view';
import { Stream } from '../../src/stream';
import { Matmul } from '../../src/math/matmul';
import { matrix } from '../../src/math/matrix';
import {
  type CallLog,
  BAD_NUMBERS,
  PROTO_KEYS,
  NOT_OBJECTS,
  NOT_OPERANDS,
  dirtyCalls,
  optionVariants,
  outcome,
  outcomeAsync,
  sweep as sweepValues,
  writableFields,
  bufferMaker,
} from './hostile-values';

const calls: CallLog = [];
let nextHandle = 0x1000;
const { records } = jest.requireActual('../../generated/13.0/cublaslt/types');
const fakeLt = new Proxy({} as Record<string, unknown>, {
  get: (_t, name: string) => {
    if (name === 'records') return records;
    return (...args: unknown[]) => {
      calls.push([name, args]);
      if (name.endsWith('Create')) return nextHandle++;
      if (name === 'cublasLtMatmulAlgoGetHeuristic')
        return [{ algo: { data: [1, 0, 0, 0, 0, 0, 0, 0] }, workspaceSize: 0, state: 0, wavesCount: 1, reserved: [0, 0, 0, 0] }];
      return undefined;
    };
  },
});
const loadCublasLt = jest.fn(() => fakeLt);
jest.mock('../../src/releases', () => ({ ...jest.requireActual('../../src/releases'), loadCublasLt: () => loadCublasLt() }));

const ctx = driverlessContext();
const otherCtx = driverlessContext(0x9999);
const stream = Stream.legacyDefault(ctx);
const buffer = bufferMaker(ctx, 0x7f5000000000);
const view = (rows: number, cols: number, context = ctx) => matrix(buffer(8 * rows * cols + 64, context), { dtype: 'f32', rows, cols });
const isWork = (n: string) => n === 'cublasLtMatmul' || n === 'cublasLtMatmulAlgoGetHeuristic';
const sweep = (where: string, values: readonly (readonly [string, unknown])[], call: (v: unknown) => unknown, expect: 'refused' | 'either') =>
  sweepValues(`Matmul.${where}`, values, call, expect, calls, isWork);

let mm: Matmul;
beforeEach(() => {
  mm = Matmul.create({ a: { dtype: 'f32', shape: [4, 3] }, b: { dtype: 'f32', shape: [3, 2] }, stream });
  calls.length = 0;
  loadCublasLt.mockClear();
});
afterEach(() => {
  mm.close();
  expect(dirtyCalls(calls)).toEqual([]);
});

describe('Matmul.create', () => {
  const create = (o: unknown) => (Matmul.create(o as never) as Matmul).close();
  test('options and descriptions that are not objects, or hold unknown keys', () => {
    const values: (readonly [string, unknown])[] = [
      ...NOT_OBJECTS,
      ['unknown', { a: { dtype: 'f32', shape: [4, 3] }, b: { dtype: 'f32', shape: [3, 2] }, zz: 1 }],
      ...NOT_OPERANDS.map(([l, v]) => [`a ${l}`, { a: v, b: { dtype: 'f32', shape: [3, 2] } }] as const),
      ['a with an unknown key', { a: { dtype: 'f32', shape: [4, 3], zz: 1 }, b: { dtype: 'f32', shape: [3, 2] } }],
    ];
    expect(sweep('create', values, create, 'refused')).toEqual([]);
    expect(loadCublasLt).not.toHaveBeenCalled();
  });
  test('a description’s shape, ld and batchStride take no bad number, hole or past-int32 size', () => {
    const desc = (a: Record<string, unknown>) => ({ a: { dtype: 'f32', shape: [4, 3], ...a }, b: { dtype: 'f32', shape: [3, 2] }, stream });
    const values: (readonly [string, unknown])[] = [
      ['shape hole', desc({ shape: [, 3] })], // eslint-disable-line no-sparse-arrays
      ['shape of 4 axes', desc({ shape: [1, 1, 4, 3] })],
      ['shape typed array', desc({ shape: new Int32Array([4, 3]) })],
      ['batch past int32', { a: { dtype: 'f32', shape: [2 ** 31, 4, 3] }, b: { dtype: 'f32', shape: [3, 2] }, stream }],
      ['rows past int32', { a: { dtype: 'f32', shape: [2 ** 31, 3] }, b: { dtype: 'f32', shape: [3, 2] }, stream }],
      ...BAD_NUMBERS.map(([l, v]) => [`shape [${l}, 3]`, desc({ shape: [v, 3] })] as const),
      ...BAD_NUMBERS.filter(([, v]) => v !== null).map(([l, v]) => [`ld ${l}`, desc({ ld: v })] as const),
      ...BAD_NUMBERS.filter(([, v]) => v !== null).map(([l, v]) => [`batchStride ${l}`, desc({ shape: [2, 4, 3], batchStride: v })] as const),
    ];
    expect(sweep('create', values, create, 'refused')).toEqual([]);
  });
  test('a 3-D view whose batch passes int32 (batch stride 0) is refused', () => {
    const a = StridedView.of(buffer(64), { dtype: 'f32', shape: [2 ** 31, 4, 3], strides: [0, 3, 1] });
    expect(outcome('Matmul.create', () => create({ a, b: { dtype: 'f32', shape: [3, 2] }, stream }))).toBe('refused');
  });
  test('a closed view as a description is refused, named Matmul.create (a static method)', () => {
    const a = view(4, 3);
    (a.buffer as DeviceBuffer).close();
    expect(() => create({ a, b: { dtype: 'f32', shape: [3, 2] }, stream })).toThrow(/^Matmul.create: the DeviceBuffer \(wrapped\) is closed/);
  });
  test('a shape getter answering differently on each read', () => {
    let reads = 0;
    const a = {
      dtype: 'f32',
      get shape() {
        return reads++ === 0 ? [4, 3] : reads < 4 ? [4, 3] : [, 3]; // eslint-disable-line no-sparse-arrays
      },
    };
    expect(outcome('Matmul.create', () => create({ a, b: { dtype: 'f32', shape: [3, 2] }, stream }))).toMatch(/^(ok|refused)$/);
  });
  test('option variants work or are refused', () => {
    const valid = { a: { dtype: 'f32', shape: [4, 3] }, b: { dtype: 'f32', shape: [3, 2] }, transA: 'N', computeType: '32F', stream };
    const bad: string[] = [];
    for (const [label, o, want] of optionVariants(valid)) {
      bad.push(...sweep('create', [[label, o]], create, want === 'refused' ? 'refused' : 'either'));
      if (want === 'ok' && outcome('Matmul.create', () => create(o)) !== 'ok') bad.push(`${label}: refused`);
    }
    expect(bad).toEqual([]);
  });
});

test('choices named like Object.prototype members are refused (transA, computeType, epilogue, dtype, order)', () => {
  const b = { dtype: 'f32', shape: [3, 2] };
  const bad: string[] = [];
  for (const [l, k] of PROTO_KEYS) {
    const values: (readonly [string, unknown])[] = [
      [`transA ${l}`, { a: { dtype: 'f32', shape: [4, 3] }, b, transA: k, stream }],
      [`computeType ${l}`, { a: { dtype: 'f32', shape: [4, 3] }, b, computeType: k, stream }],
      [`a.dtype ${l}`, { a: { dtype: k, shape: [4, 3] }, b, stream }],
      [`a.order ${l}`, { a: { dtype: 'f32', shape: [4, 3], order: k }, b, stream }],
    ];
    bad.push(...sweep('create', values, (o) => Matmul.create(o as never).close(), 'refused'));
    bad.push(...sweep('plan', [[`epilogue ${l}`, { epilogue: k }]], (o) => mm.plan(o as never), 'refused'));
  }
  expect(bad).toEqual([]);
});

describe('plan, select, execute, autotune', () => {
  test('Matmul.plan: options that are not objects, unknown keys, bad numbers', () => {
    const values: (readonly [string, unknown])[] = [
      ...NOT_OBJECTS,
      ['unknown', { zz: 1 }],
      ['epilogue symbol', { epilogue: Symbol('e') }],
      ...BAD_NUMBERS.filter(([, v]) => v !== null).map(([l, v]) => [`maxWorkspaceBytes ${l}`, { maxWorkspaceBytes: v }] as const),
      ...BAD_NUMBERS.filter(([, v]) => v !== null).map(([l, v]) => [`algorithms ${l}`, { algorithms: v }] as const),
      ['algorithms 65', { algorithms: 65 }],
      ['algorithms 0', { algorithms: 0 }],
    ];
    expect(sweep('plan', values, (o) => mm.plan(o as never), 'refused')).toEqual([]);
  });
  test('Matmul.select takes an index of the plan only', () => {
    mm.plan();
    const values = [...BAD_NUMBERS, ['1 (one algorithm planned)', 1]] as const;
    expect(sweep('select', values, (i) => mm.select(i as never), 'refused')).toEqual([]);
    expect(outcome('Matmul.select', () => mm.select(-0))).toBe('ok');
  });
  test('Matmul.execute: operands that are not objects, unknown keys, bad views, foreign streams', () => {
    mm.plan();
    const ops = (extra: Record<string, unknown>) => ({ a: view(4, 3), b: view(3, 2), d: view(4, 2).transpose().transpose(), ...extra });
    const d = () => matrix(buffer(64), { dtype: 'f32', rows: 4, cols: 2, order: 'col' });
    const closed = view(4, 3);
    (closed.buffer as DeviceBuffer).close();
    const values: (readonly [string, unknown])[] = [
      ...NOT_OBJECTS,
      ['unknown key (a typo of alpha)', { a: view(4, 3), b: view(3, 2), d: d(), alhpa: 2 }],
      ...NOT_OPERANDS.map(([l, v]) => [`a ${l}`, { ...ops({}), a: v, d: d() }] as const),
      ['a closed', { a: closed, b: view(3, 2), d: d() }],
      ['a of another context', { a: view(4, 3, otherCtx), b: view(3, 2), d: d() }],
      ['stream of another context', { a: view(4, 3), b: view(3, 2), d: d(), stream: Stream.legacyDefault(otherCtx) }],
      ['stream a number', { a: view(4, 3), b: view(3, 2), d: d(), stream: 5 }],
      ['alpha a string', { a: view(4, 3), b: view(3, 2), d: d(), alpha: '2' }],
      ['alpha a bigint', { a: view(4, 3), b: view(3, 2), d: d(), alpha: 2n }],
      ['bias without a bias epilogue', { a: view(4, 3), b: view(3, 2), d: d(), bias: buffer(16) }],
    ];
    expect(outcome('Matmul.execute', () => mm.execute({ a: view(4, 3), b: view(3, 2), d: d() }))).toBe('ok');
    expect(sweep('execute', values, (o) => mm.execute(o as never), 'refused')).toEqual([]);
  });
  test('Matmul.execute reads each operand once: the view remembered is the view resolved', () => {
    mm.plan();
    const [v, w, b] = [view(4, 3), view(4, 3), view(3, 2)];
    const d = matrix(buffer(64), { dtype: 'f32', rows: 4, cols: 2, order: 'col' });
    let reads = 0;
    const ops = {
      get a() {
        return reads++ < 2 ? v : w; // v to the memo comparison and the checks, w to a third read
      },
      b,
      d,
    };
    mm.execute(ops);
    mm.execute({ a: w, b, d });
    const runs = calls.filter(([n]) => n === 'cublasLtMatmul').map(([, args]) => args[3]);
    expect(runs).toEqual([v.address, w.address]);
  });
  test('the planned algorithms cannot be changed from outside (workspace size, algo bytes)', () => {
    mm.plan();
    const d = matrix(buffer(64), { dtype: 'f32', rows: 4, cols: 2, order: 'col' });
    const [first] = mm.algorithms;
    expect(writableFields(first, { workspaceBytes: 2 ** 40 })).toEqual([]);
    first.algo.fill(0xff);
    mm.execute({ a: view(4, 3), b: view(3, 2), d });
    const [, args] = calls.filter(([n]) => n === 'cublasLtMatmul')[0];
    expect(args[14]).toBe(0); // the heuristic's workspace size
    expect(Array.from(args[12] as Uint8Array).every((x) => x !== 0xff)).toBe(true);
  });
  test('Matmul.execute before plan, and after close', () => {
    const d = matrix(buffer(64), { dtype: 'f32', rows: 4, cols: 2, order: 'col' });
    expect(outcome('Matmul.execute', () => mm.execute({ a: view(4, 3), b: view(3, 2), d }))).toBe('refused');
    mm.plan();
    mm.close();
    expect(outcome('Matmul.execute', () => mm.execute({ a: view(4, 3), b: view(3, 2), d }))).toBe('refused');
    expect(outcome('Matmul.plan', () => mm.plan())).toBe('refused');
    expect(calls.filter(([n]) => n === 'cublasLtMatmul')).toEqual([]);
  });
  test('Matmul.autotune: options and iterations', async () => {
    mm.plan();
    const d = matrix(buffer(64), { dtype: 'f32', rows: 4, cols: 2, order: 'col' });
    const ops = { a: view(4, 3), b: view(3, 2), d };
    const bad: string[] = [];
    const values = [
      ...NOT_OBJECTS,
      ['unknown', { zz: 1 }],
      ...BAD_NUMBERS.filter(([, v]) => v !== null).map(([l, v]) => [`iterations ${l}`, { iterations: v }] as const),
      ['iterations 2**53 - 1 (never ends)', { iterations: 2 ** 53 - 1 }],
    ];
    for (const [label, o] of values) {
      const got = await outcomeAsync('Matmul.autotune', () => mm.autotune(ops, o as never));
      if (got !== 'refused') bad.push(`${label}: ${got}`);
    }
    for (const [label, o] of NOT_OBJECTS) {
      const got = await outcomeAsync('Matmul.autotune', () => mm.autotune(o as never));
      if (got !== 'refused') bad.push(`operands ${label}: ${got}`);
    }
    expect(bad).toEqual([]);
    expect(calls.filter(([n]) => n === 'cublasLtMatmul')).toEqual([]);
  });
});
