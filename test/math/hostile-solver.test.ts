// DenseSolver under hostile clients (no GPU): options that are not objects, hold unknown keys, or whose
// getters change their answers (an output validated on one read and another passed to cuSOLVER); closed,
// foreign-context, wrong-dtype, short and look-alike operands; LuFactors look-alikes. Every call (awaited
// or Sync) succeeds or throws TypeError/RangeError starting `DenseSolver.method:`, and nothing
// cuSOLVER's fake receives is a value no C function takes.
import { DeviceBuffer } from '../../src/memory/device-buffer';
import { StridedView } from '../../src/memory/strided-view';
import { Stream } from '../../src/stream';
import { DenseSolver, LuFactors } from '../../src/math/solver';
import { fakeContext, fakeDriver } from '../helpers/fake-driver';
import {
  type CallLog,
  NOT_OBJECTS,
  PROTO_KEYS,
  NOT_OPERANDS,
  dirtyCalls,
  flipFlop,
  optionVariants,
  outcome,
  outcomeAsync,
  sweep as sweepValues,
  bufferMaker,
} from './hostile-values';
import { SEALED, type Sealed } from '../../src/sealed';

const calls: CallLog = [];
const fakeCusolver = new Proxy({} as Record<string, unknown>, {
  get:
    (_t, name: string) =>
    (...args: unknown[]) => {
      calls.push([name, args]);
      if (name.endsWith('_bufferSize')) return name.includes('orgqr') ? 10 : { workspaceInBytesOnDevice: 0, workspaceInBytesOnHost: 0 };
      return undefined;
    },
});
jest.mock('../../src/releases', () => ({ ...jest.requireActual('../../src/releases'), loadCusolver: () => fakeCusolver }));

const ctx = fakeContext(0x5170);
const otherCtx = fakeContext(0x9999);
const buffer = bufferMaker(ctx, 0x7f7000000000);
type D = 'f32' | 'f64' | 'c64' | 'i32' | 'i64';
const SIZE: Record<D, number> = { f32: 4, f64: 8, c64: 8, i32: 4, i64: 8 };
function mat(dtype: D, rows: number, cols: number, order: 'row' | 'col' = 'col', context = ctx): StridedView {
  const strides = order === 'row' ? [Math.max(1, cols), 1] : [1, Math.max(1, rows)];
  return StridedView.of(buffer(Math.max(1, rows * cols) * SIZE[dtype], context), { dtype, shape: [rows, cols], strides });
}
const vec = (dtype: D, n: number, context = ctx) => StridedView.of(buffer(Math.max(1, n) * SIZE[dtype], context), { dtype, shape: [n] });
const isWork = (n: string) => !n.endsWith('_bufferSize') && n.startsWith('cusolverDn') && !/Destroy|SetStream|Create/.test(n);
const sweep = (where: string, values: readonly (readonly [string, unknown])[], call: (v: unknown) => unknown, expect: 'refused' | 'either') =>
  sweepValues(`DenseSolver.${where}`, values, call, expect, calls, isWork);

let fake: ReturnType<typeof fakeDriver>;
beforeAll(() => {
  fake = fakeDriver(ctx, { cuStreamSynchronize: () => 0, cuStreamQuery: () => 0 });
});
afterAll(() => fake.restore());

type SolverCtor = new (seal: Sealed, handle: number, params: number, stream: Stream) => DenseSolver;
let solver: DenseSolver;
beforeEach(() => {
  solver = new (DenseSolver as unknown as SolverCtor)(SEALED, 0xabc, 0xdef, Stream.legacyDefault(ctx));
  (solver.core as unknown as { destroyNative: () => void }).destroyNative = () => undefined;
  const slots = { take: () => 3, device: () => 0x7f00000f0000, copyBack: () => undefined, read: () => 0, release: () => undefined, close: () => undefined };
  (solver as unknown as { slots: unknown }).slots = slots;
  jest.spyOn(DeviceBuffer, 'alloc').mockImplementation((bytes: number) => buffer(bytes));
  calls.length = 0;
});
afterEach(() => {
  jest.restoreAllMocks();
  solver.close();
  expect(dirtyCalls(calls)).toEqual([]);
});

/** Each method (Sync form) with valid arguments and `o` as its options. */
const METHODS: Record<string, (s: DenseSolver, o?: unknown) => unknown> = {
  potrf: (s, o) => s.potrfSync(mat('f64', 3, 3), o as never),
  potrs: (s, o) => s.potrsSync(mat('f64', 3, 3), vec('f64', 3), o as never),
  getrf: (s, o) => s.getrfSync(mat('f64', 3, 3), o as never),
  geqrf: (s, o) => s.geqrfSync(mat('f64', 4, 3), o as never),
  syevd: (s, o) => s.syevdSync(mat('f64', 3, 3), o as never),
  gesvd: (s, o) => s.gesvdSync(mat('f64', 4, 3), o as never),
};
const VALID: Record<string, () => Record<string, unknown>> = {
  potrf: () => ({ lower: false }),
  potrs: () => ({ lower: true }),
  getrf: () => ({ pivots: vec('i64', 3) }),
  geqrf: () => ({ tau: vec('f64', 3) }),
  syevd: () => ({ lower: true, vectors: false, w: vec('f64', 3) }),
  gesvd: () => ({ vectors: 'all', s: vec('f64', 3), u: mat('f64', 4, 4), vt: mat('f64', 3, 3) }),
};

describe('options', () => {
  test.each(Object.keys(METHODS))('DenseSolver.%s: non-objects and unknown keys are refused', (name) => {
    const values = [...NOT_OBJECTS, ['unknown key', { zz: 1 }], ['flag a string', { lower: 'yes' }]] as const;
    const run = (o: unknown) => METHODS[name](solver, o);
    expect(sweep(name, name === 'getrf' || name === 'geqrf' || name === 'gesvd' ? values.slice(0, -1) : values, run, 'refused')).toEqual([]);
  });
  test.each(Object.keys(METHODS))('DenseSolver.%s: option variants work or are refused', (name) => {
    const run = (o: unknown) => METHODS[name](solver, o);
    expect(outcome(`DenseSolver.${name}`, () => run(VALID[name]()))).toBe('ok');
    const bad: string[] = [];
    for (const [label, o, want] of optionVariants(VALID[name]())) {
      bad.push(...sweep(name, [[label, o]], run, want === 'refused' ? 'refused' : 'either'));
      if (want === 'ok' && outcome(`DenseSolver.${name}`, () => run(o)) !== 'ok') bad.push(`${label}: refused`);
    }
    expect(bad).toEqual([]);
  });
  test.each([
    ['getrf', 'pivots', 'cusolverDnXgetrf', 7, () => vec('i64', 1)],
    ['geqrf', 'tau', 'cusolverDnXgeqrf', 8, () => vec('f64', 1)],
    ['syevd', 'w', 'cusolverDnXsyevd', 9, () => vec('f64', 1)],
    ['gesvd', 's', 'cusolverDnXgesvd', 10, () => vec('f64', 1)],
  ])('DenseSolver.%s: a %s getter cannot pass the check with nothing and hand cuSOLVER a short output', (name, key, fn, arg, short) => {
    // first read: undefined (nothing to check); later reads: a one-element output cuSOLVER would overrun
    const given = short();
    const o = flipFlop({ [key]: undefined }, key, given, 1);
    const got = outcome(`DenseSolver.${name}`, () => METHODS[name](solver, o));
    expect(got).toMatch(/^(ok|refused)$/);
    const passed = calls.filter(([n]) => n === fn).map(([, a]) => a[arg]);
    expect(passed).toHaveLength(got === 'ok' ? 1 : 0);
    expect(passed).not.toContain(given.address);
  });
});

test('choices named like Object.prototype members are refused (gesvd vectors)', () => {
  const values = PROTO_KEYS.map(([l, k]) => [`vectors ${l}`, { vectors: k }] as const);
  expect(sweep('gesvd', values, (o) => METHODS.gesvd(solver, o), 'refused')).toEqual([]);
});

test('an inherited option counts as an own one (lower: false from a prototype)', () => {
  solver.potrfSync(mat('f64', 3, 3), { lower: false });
  solver.potrfSync(mat('f64', 3, 3), Object.create({ lower: false }));
  const fills = calls.filter(([n]) => n === 'cusolverDnXpotrf').map(([, a]) => a[2]);
  expect(fills).toEqual([1, 1]); // CUBLAS_FILL_MODE_UPPER both times
});

describe('operands', () => {
  test('look-alike, closed, foreign-context, wrong-dtype and short operands are refused before cuSOLVER', () => {
    const closed = mat('f64', 3, 3);
    (closed.buffer as DeviceBuffer).close();
    const cases: [string, string, () => unknown][] = [
      ...NOT_OPERANDS.map(([l, v]) => [`potrf a ${l}`, 'potrf', () => solver.potrfSync(v as never)] as [string, string, () => unknown]),
      ...NOT_OPERANDS.map(([l, v]) => [`potrs b ${l}`, 'potrs', () => solver.potrsSync(mat('f64', 3, 3), v as never)] as [string, string, () => unknown]),
      ['potrf closed a', 'potrf', () => solver.potrfSync(closed)],
      ['potrf foreign a', 'potrf', () => solver.potrfSync(mat('f64', 3, 3, 'col', otherCtx))],
      ['potrs foreign b', 'potrs', () => solver.potrsSync(mat('f64', 3, 3), vec('f64', 3, otherCtx))],
      ['potrs short b', 'potrs', () => solver.potrsSync(mat('f64', 3, 3), vec('f64', 2))],
      ['potrs f32 b', 'potrs', () => solver.potrsSync(mat('f64', 3, 3), vec('f32', 3))],
      ['potrf i32 a', 'potrf', () => solver.potrfSync(mat('i32', 3, 3))],
      ['potrf row-major complex a', 'potrf', () => solver.potrfSync(mat('c64', 3, 3, 'row'))],
      ['getrf foreign pivots', 'getrf', () => solver.getrfSync(mat('f64', 3, 3), { pivots: vec('i64', 3, otherCtx) })],
      ['getrf i32 pivots', 'getrf', () => solver.getrfSync(mat('f64', 3, 3), { pivots: vec('i32', 3) })],
      ['geqrf foreign tau', 'geqrf', () => solver.geqrfSync(mat('f64', 4, 3), { tau: vec('f64', 3, otherCtx) })],
      ['orgqr foreign tau', 'orgqr', () => solver.orgqrSync(mat('f64', 4, 3), vec('f64', 3, otherCtx))],
      ['orgqr short tau', 'orgqr', () => solver.orgqrSync(mat('f64', 4, 3), vec('f64', 2))],
      ['orgqr wide a', 'orgqr', () => solver.orgqrSync(mat('f64', 3, 4), vec('f64', 3))],
      ['syevd foreign w', 'syevd', () => solver.syevdSync(mat('f64', 3, 3), { w: vec('f64', 3, otherCtx) })],
      ['gesvd foreign u', 'gesvd', () => solver.gesvdSync(mat('f64', 4, 3), { u: mat('f64', 4, 4, 'col', otherCtx), vt: mat('f64', 3, 3) })],
      ['gesvd u with none', 'gesvd', () => solver.gesvdSync(mat('f64', 4, 3), { vectors: 'none', u: mat('f64', 4, 4) })],
      ['gesvd vectors symbol', 'gesvd', () => solver.gesvdSync(mat('f64', 4, 3), { vectors: Symbol('v') as never })],
      ['getrs look-alike lu', 'getrs', () => solver.getrsSync({ a: mat('f64', 3, 3), pivots: vec('i64', 3), transposed: false } as never, vec('f64', 3))],
      ['getrs foreign b', 'getrs', () => solver.getrsSync(solver.getrfSync(mat('f64', 3, 3)), vec('f64', 3, otherCtx))],
    ];
    const bad = cases.map(([l, name, run]) => [l, outcome(`DenseSolver.${name}`, run)]).filter(([, got]) => got !== 'refused');
    expect(bad).toEqual([]);
    expect(calls.filter(([n]) => isWork(n) && n !== 'cusolverDnXgetrf')).toEqual([]);
  });
  test('LuFactors fields are read-only; getrs checks a hand-made LuFactors (short pivots, a non-boolean transposed)', () => {
    const lu = solver.getrfSync(mat('f64', 3, 3), { pivots: vec('i64', 3) });
    expect(() => Object.assign(lu, { pivots: vec('i64', 1) })).toThrow(TypeError);
    expect(() => Object.assign(lu, { transposed: true })).toThrow(TypeError);
    const Made = LuFactors as unknown as new (seal: Sealed, a: unknown, pivots: unknown, transposed: unknown, owns: boolean) => LuFactors;
    const short = new Made(SEALED, mat('f64', 3, 3), vec('i64', 1), false, false);
    expect(outcome('DenseSolver.getrs', () => solver.getrsSync(short, vec('f64', 3)))).toBe('refused');
    const truthy = new Made(SEALED, mat('f64', 3, 3), vec('i64', 3), 'yes', false);
    expect(outcome('DenseSolver.getrs', () => solver.getrsSync(truthy, vec('f64', 3)))).toBe('refused');
    expect(calls.filter(([n]) => n === 'cusolverDnXgetrs')).toEqual([]);
  });
  test('the awaited forms refuse the same way (a throw or a rejection naming the call)', async () => {
    const runs: [string, () => unknown][] = [
      ['potrf', () => solver.potrf(5 as never)],
      ['potrs', () => solver.potrs(mat('f64', 3, 3), null as never)],
      ['getrf', () => solver.getrf(mat('f64', 3, 3), { zz: 1 } as never)],
      ['getrs', () => solver.getrs({} as never, vec('f64', 3))],
      ['geqrf', () => solver.geqrf(mat('f64', 3, 4, 'row'))],
      ['orgqr', () => solver.orgqr(mat('f64', 4, 3), null as never)],
      ['syevd', () => solver.syevd(mat('f64', 3, 3), { vectors: 1 } as never)],
      ['gesvd', () => solver.gesvd(mat('f64', 4, 3), { vectors: 'some' } as never)],
    ];
    for (const [name, run] of runs) expect([name, await outcomeAsync(`DenseSolver.${name}`, run)]).toEqual([name, 'refused']);
  });
  test('a closed solver refuses every method; setStream refuses non-streams and foreign streams', () => {
    const values = [...NOT_OPERANDS.filter(([, v]) => v !== undefined), ['other context', Stream.legacyDefault(otherCtx)]] as const;
    expect(sweep('setStream', values, (s) => solver.setStream(s as never), 'refused')).toEqual([]);
    solver.close();
    for (const name of Object.keys(METHODS)) expect([name, outcome(`DenseSolver.${name}`, () => METHODS[name](solver))]).toEqual([name, 'refused']);
    expect(calls.filter(([n]) => isWork(n))).toEqual([]);
  });
});
