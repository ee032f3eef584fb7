// DenseSolver without a GPU or cuSOLVER: every argument check throws its TypeError/RangeError before
// cuSOLVER loads; the enum codes; what valid calls hand to cuSOLVER (fill mode and transposition for
// row-major views, byte-sized workspaces); and cuSOLVER's info turned into its error, awaited and
// blocking (a solver over a fake handle, fake info slots, the driver's stream waits faked).
import * as solverTypes from '../../generated/13.0/cusolver/types';
import * as releases from '../../src/releases';
import { CudaError } from '../../src/errors';
import { DeviceBuffer } from '../../src/memory/device-buffer';
import { StridedView } from '../../src/memory/strided-view';
import { Stream } from '../../src/stream';
import { ConvergenceError, DenseSolver, LuFactors, NotPositiveDefiniteError, SingularMatrixError, SolverError } from '../../src/math/solver';
import { fakeContext, fakeDriver } from '../helpers/fake-driver';
import { SEALED, type Sealed } from '../../src/sealed';

const ctx = fakeContext(0x5170);
const BASE = 0x7f0000000000;

class FakeBuffer extends DeviceBuffer {
  constructor(bytes: number, address = BASE) {
    super(SEALED, 'DeviceBuffer', address, bytes, ctx, () => undefined);
  }
}
type D = 'f32' | 'f64' | 'c64' | 'c128' | 'i32' | 'i64';
const SIZE: Record<D, number> = { f32: 4, f64: 8, c64: 8, c128: 16, i32: 4, i64: 8 };
/** A row-major (default) or column-major ('col') view over a fresh fake buffer. */
function mat(dtype: D, rows: number, cols: number, order: 'row' | 'col' = 'row', address = BASE): StridedView {
  const strides = order === 'row' ? [Math.max(1, cols), 1] : [1, Math.max(1, rows)];
  return StridedView.of(new FakeBuffer(Math.max(1, rows * cols) * SIZE[dtype], address), { dtype, shape: [rows, cols], strides });
}
const vec = (dtype: D, n: number, address = BASE + 0x100000): StridedView =>
  StridedView.of(new FakeBuffer(Math.max(1, n) * SIZE[dtype], address), { dtype, shape: [n] });

let fake: ReturnType<typeof fakeDriver>;
beforeAll(() => {
  fake = fakeDriver(ctx, { cuStreamSynchronize: () => 0, cuStreamQuery: () => 0 });
});
afterAll(() => fake.restore());

let loader: jest.SpyInstance;
beforeEach(() => {
  loader = jest.spyOn(releases, 'loadCusolver');
});
afterEach(() => jest.restoreAllMocks());

test('fill, operation and eigen-mode codes equal the generated enums', () => {
  expect(solverTypes.cublasFillMode_t.CUBLAS_FILL_MODE_LOWER).toBe(0);
  expect(solverTypes.cublasFillMode_t.CUBLAS_FILL_MODE_UPPER).toBe(1);
  expect(solverTypes.cublasOperation_t.CUBLAS_OP_N).toBe(0);
  expect(solverTypes.cublasOperation_t.CUBLAS_OP_T).toBe(1);
  expect(solverTypes.cusolverEigMode_t.CUSOLVER_EIG_MODE_VECTOR).toBe(1);
  expect(['A', 'S', 'N'].map((c) => c.charCodeAt(0))).toEqual([65, 83, 78]);
});

const SIZES = { workspaceInBytesOnDevice: 0, workspaceInBytesOnHost: 0 };
const API = [
  'cusolverDnXpotrf_bufferSize',
  'cusolverDnXpotrf',
  'cusolverDnXpotrs',
  'cusolverDnXgetrf_bufferSize',
  'cusolverDnXgetrf',
  'cusolverDnXgetrs',
  'cusolverDnXgeqrf_bufferSize',
  'cusolverDnXgeqrf',
  'cusolverDnDorgqr_bufferSize',
  'cusolverDnDorgqr',
  'cusolverDnSorgqr_bufferSize',
  'cusolverDnSorgqr',
  'cusolverDnXsyevd_bufferSize',
  'cusolverDnXsyevd',
  'cusolverDnXgesvd_bufferSize',
  'cusolverDnXgesvd',
  'cusolverDnDestroy',
  'cusolverDnDestroyParams',
  'cusolverDnSetStream',
];
type SolverCtor = new (seal: Sealed, handle: number, params: number, stream: Stream) => DenseSolver;

/** A solver over a fake handle whose info slot reads `info`; its cuSOLVER API is a set of spies. */
function fakeSolver(info = 0): { solver: DenseSolver; api: Record<string, jest.Mock>; slots: Record<string, jest.Mock> } {
  const solver = new (DenseSolver as unknown as SolverCtor)(SEALED, 0xabc, 0xdef, Stream.legacyDefault(ctx));
  (solver.core as unknown as { destroyNative: () => void }).destroyNative = () => undefined;
  const api = Object.fromEntries(API.map((n) => [n, jest.fn(() => (n.endsWith('_bufferSize') ? (n.includes('orgqr') ? 10 : SIZES) : undefined))]));
  const slots = {
    take: jest.fn(() => 3),
    device: jest.fn(() => BASE + 0xf00),
    copyBack: jest.fn(),
    read: jest.fn(() => info),
    release: jest.fn(),
    close: jest.fn(),
  };
  (solver as unknown as { slots: unknown }).slots = slots;
  return { solver, api, slots };
}

describe('DenseSolver.create: argument checks', () => {
  test.each([
    [null, TypeError, /DenseSolver.create: options must be an object/],
    [{ handle: 1 }, TypeError, /unknown option 'handle'/],
    [{ stream: 'default' }, TypeError, /DenseSolver.create: stream must be a Stream/],
  ])('%p', (options, type, message) => {
    expect(() => DenseSolver.create(options as never)).toThrow(type);
    expect(() => DenseSolver.create(options as never)).toThrow(message);
    expect(loader).not.toHaveBeenCalled();
  });
});

describe('argument checks of every method (cuSOLVER not loaded)', () => {
  const sq = (): StridedView => mat('f32', 3, 3);
  test.each([
    ['potrf: a buffer', (s: DenseSolver) => s.potrfSync(new FakeBuffer(36) as never), TypeError, /DenseSolver.potrf: a must be a 2-D StridedView/],
    ['potrf: 1-D a', (s: DenseSolver) => s.potrfSync(vec('f32', 9)), TypeError, /a must be 2-D, got shape \[9\]/],
    ['potrf: i32 a', (s: DenseSolver) => s.potrfSync(mat('i32', 3, 3)), TypeError, /a's dtype must be one of f32, f64, c64, c128, got 'i32'/],
    ['potrf: not square', (s: DenseSolver) => s.potrfSync(mat('f32', 3, 4)), RangeError, /a must be square, got 3×4/],
    [
      'potrf: strided both ways',
      (s: DenseSolver) => s.potrfSync(StridedView.of(new FakeBuffer(400), { dtype: 'f32', shape: [3, 3], strides: [6, 2] })),
      TypeError,
      /row-major \(strides \[ld ≥ cols, 1\]\) or column-major/,
    ],
    ['potrf: lower', (s: DenseSolver) => s.potrfSync(sq(), { lower: 'yes' as never }), TypeError, /lower must be a boolean, got string/],
    ['potrf: option', (s: DenseSolver) => s.potrfSync(sq(), { upper: true } as never), TypeError, /DenseSolver.potrf: unknown option 'upper'/],
    ['potrf: row-major complex', (s: DenseSolver) => s.potrfSync(mat('c64', 3, 3)), TypeError, /row-major complex a is the conjugate.*column-major view/],
    [
      'potrs: host b',
      (s: DenseSolver) => s.potrsSync(sq(), new Float32Array(3) as never),
      TypeError,
      /DenseSolver.potrs: b must be a DeviceBuffer or a StridedView of device memory.*host array/,
    ],
    [
      'potrs: row-major b',
      (s: DenseSolver) => s.potrsSync(sq(), mat('f32', 3, 2)),
      TypeError,
      /b must be column-major \(strides \[1, ld\]\) for several right-hand sides/,
    ],
    ['potrs: b rows', (s: DenseSolver) => s.potrsSync(sq(), mat('f32', 4, 2, 'col')), RangeError, /b must have 3 rows, got 4/],
    ['potrs: short b', (s: DenseSolver) => s.potrsSync(sq(), vec('f32', 2)), RangeError, /b holds 2 elements, needs 3/],
    ['potrs: b dtype', (s: DenseSolver) => s.potrsSync(sq(), vec('f64', 3)), TypeError, /b holds f64, expected f32/],
    ['getrf: pivots i32', (s: DenseSolver) => s.getrfSync(sq(), { pivots: vec('i32', 3) }), TypeError, /pivots holds i32, expected i64/],
    [
      'getrf: short pivots',
      (s: DenseSolver) => s.getrfSync(mat('f64', 4, 3, 'col'), { pivots: vec('i64', 2) }),
      RangeError,
      /pivots holds 2 elements, needs 3/,
    ],
    ['getrs: not LuFactors', (s: DenseSolver) => s.getrsSync({ a: sq() } as never, vec('f32', 3)), TypeError, /lu must be the LuFactors getrf returned/],
    [
      'getrs: not square',
      (s: DenseSolver) => s.getrsSync(new LuFactors(SEALED, mat('f32', 3, 4), vec('i64', 3), false, false), vec('f32', 3)),
      RangeError,
      /lu.a must be square/,
    ],
    ['geqrf: row-major', (s: DenseSolver) => s.geqrfSync(mat('f32', 4, 3)), TypeError, /DenseSolver.geqrf: a must be column-major/],
    ['geqrf: short tau', (s: DenseSolver) => s.geqrfSync(mat('f32', 4, 3, 'col'), { tau: vec('f32', 2) }), RangeError, /tau holds 2 elements, needs 3/],
    ['orgqr: wide', (s: DenseSolver) => s.orgqrSync(mat('f64', 2, 3, 'col'), vec('f64', 2)), RangeError, /a must have rows ≥ cols, got 2×3/],
    ['orgqr: tau dtype', (s: DenseSolver) => s.orgqrSync(mat('f64', 3, 2, 'col'), vec('f32', 2)), TypeError, /tau holds f32, expected f64/],
    ['syevd: vectors', (s: DenseSolver) => s.syevdSync(sq(), { vectors: 1 as never }), TypeError, /vectors must be a boolean/],
    ['syevd: w dtype', (s: DenseSolver) => s.syevdSync(mat('c64', 3, 3, 'col'), { w: vec('c64', 3) }), TypeError, /w holds c64, expected f32/],
    ['syevd: not square', (s: DenseSolver) => s.syevdSync(mat('f64', 2, 3)), RangeError, /a must be square/],
    ['gesvd: vectors', (s: DenseSolver) => s.gesvdSync(sq(), { vectors: 'some' as never }), TypeError, /vectors must be 'all', 'thin' or 'none'/],
    ['gesvd: u with none', (s: DenseSolver) => s.gesvdSync(sq(), { vectors: 'none', u: sq() }), TypeError, /u and vt are not computed with vectors 'none'/],
    ['gesvd: wide column-major', (s: DenseSolver) => s.gesvdSync(mat('f32', 2, 3, 'col')), RangeError, /needs rows ≥ cols.*column-major 2×3 a is not/],
    ['gesvd: tall row-major', (s: DenseSolver) => s.gesvdSync(mat('f32', 3, 2)), RangeError, /row-major 3×2 a is not: decompose its transpose/],
    ['gesvd: s dtype', (s: DenseSolver) => s.gesvdSync(mat('c128', 4, 3, 'col'), { s: vec('c128', 3) }), TypeError, /s holds c128, expected f64/],
    [
      'gesvd: u shape',
      (s: DenseSolver) => s.gesvdSync(mat('f32', 4, 3, 'col'), { u: mat('f32', 4, 3, 'col') }),
      RangeError,
      /u must be 4×4, got shape \[4,3\]/,
    ],
    [
      'gesvd: u layout',
      (s: DenseSolver) => s.gesvdSync(mat('f32', 4, 3, 'col'), { vectors: 'thin', u: mat('f32', 4, 3) }),
      TypeError,
      /u must be column-major \(strides \[1, ld\]\) like a/,
    ],
  ])('%s', (_name, call, type, message) => {
    const { solver } = fakeSolver();
    expect(() => call(solver)).toThrow(type);
    expect(() => call(solver)).toThrow(message);
    expect(loader).not.toHaveBeenCalled();
    solver.close();
  });

  test('the awaited forms check the same way, synchronously', () => {
    const { solver } = fakeSolver();
    expect(() => solver.potrf(mat('f32', 2, 3))).toThrow(/DenseSolver.potrf: a must be square/);
    expect(() => solver.gesvd(mat('f32', 3, 2))).toThrow(RangeError);
    expect(loader).not.toHaveBeenCalled();
    solver.close();
    expect(() => solver.potrfSync(mat('f32', 2, 2))).toThrow(/DenseSolver.potrf: the DenseSolver is closed/);
    expect(loader).not.toHaveBeenCalled();
  });
});

describe('what cuSOLVER receives', () => {
  test('potrf: cuSOLVER fill mode follows the layout (a row-major lower triangle is its upper)', () => {
    const { solver, api, slots } = fakeSolver();
    loader.mockReturnValue(api);
    solver.potrfSync(mat('f64', 3, 3, 'col'));
    solver.potrfSync(mat('f64', 3, 3, 'row'));
    solver.potrfSync(mat('f64', 3, 3, 'row'), { lower: false });
    expect(api.cusolverDnXpotrf.mock.calls.map((c) => c[2])).toEqual([0, 1, 0]);
    const [h, p, , n, dt, A, lda, ct, , , , , info] = api.cusolverDnXpotrf.mock.calls[0];
    expect([h, p, n, dt, A, lda, ct, info]).toEqual([0xabc, 0xdef, 3, 1, BASE, 3, 1, BASE + 0xf00]);
    expect(slots.copyBack).toHaveBeenCalledTimes(3);
    expect(slots.release).toHaveBeenCalledTimes(3);
    solver.close();
  });

  test('getrf of a row-major a factors Aᵀ; getrs solves with the transposed operation', () => {
    const { solver, api } = fakeSolver();
    loader.mockReturnValue(api);
    const pivots = vec('i64', 4, BASE + 0x7000);
    const lu = solver.getrfSync(mat('f32', 4, 4), { pivots });
    expect(lu.transposed).toBe(true);
    expect(api.cusolverDnXgetrf.mock.calls[0].slice(2, 8)).toEqual([4, 4, 0, BASE, 4, BASE + 0x7000]);
    solver.getrsSync(lu, mat('f32', 4, 2, 'col', BASE + 0x9000));
    expect(api.cusolverDnXgetrs.mock.calls[0].slice(2, 5)).toEqual([1, 4, 2]);
    const col = solver.getrfSync(mat('f32', 4, 4, 'col'), { pivots });
    solver.getrsSync(col, vec('f32', 4));
    expect(api.cusolverDnXgetrs.mock.calls[1].slice(2, 5)).toEqual([0, 4, 1]);
    solver.close();
  });

  test('orgqr: the legacy element count becomes bytes of the dtype', () => {
    const { solver, api } = fakeSolver();
    loader.mockReturnValue(api);
    const alloc = jest.spyOn(DeviceBuffer, 'alloc').mockImplementation((bytes: number) => new FakeBuffer(bytes, BASE + 0xa000));
    solver.orgqrSync(mat('f64', 5, 3, 'col'), vec('f64', 3));
    expect(alloc).toHaveBeenCalledWith(80, expect.anything()); // lwork 10 elements × 8 bytes
    expect(api.cusolverDnDorgqr.mock.calls[0].slice(1, 10)).toEqual([5, 3, 3, BASE, 5, BASE + 0x100000, BASE + 0xa000, 10, BASE + 0xf00]);
    solver.close();
  });

  test('gesvd of a wide row-major a: cuSOLVER sees Aᵀ and writes our vt as its U, our u as its Vᵀ', () => {
    const { solver, api } = fakeSolver();
    loader.mockReturnValue(api);
    const u = mat('f32', 2, 2, 'row', BASE + 0x1000);
    const vt = mat('f32', 3, 3, 'row', BASE + 0x2000);
    const s = vec('f32', 2, BASE + 0x3000);
    const out = solver.gesvdSync(mat('f32', 2, 3), { s, u, vt });
    expect(out).toEqual({ s, u, vt });
    const c = api.cusolverDnXgesvd.mock.calls[0];
    expect(c.slice(2, 9)).toEqual([65, 65, 3, 2, 0, BASE, 3]); // jobs 'A', m = cols, n = rows, lda 3
    expect(c.slice(10, 18)).toEqual([BASE + 0x3000, 0, BASE + 0x2000, 3, 0, BASE + 0x1000, 2, 0]);
    solver.close();
  });
});

describe("cuSOLVER's info becomes an error", () => {
  test('potrf: NotPositiveDefiniteError with the index, blocking and awaited', async () => {
    const { solver, api } = fakeSolver(3);
    loader.mockReturnValue(api);
    let caught: unknown;
    try {
      solver.potrfSync(mat('f32', 4, 4));
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(NotPositiveDefiniteError);
    expect(caught).toBeInstanceOf(SolverError);
    expect(caught).toBeInstanceOf(CudaError);
    expect(caught).toMatchObject({ index: 2, info: 3, code: 3, func: 'cusolverDnXpotrf', module: 'cusolver', name: 'CUSOLVER_INFO_NOT_POSITIVE_DEFINITE' });
    expect((caught as Error).message).toMatch(/^DenseSolver.potrf: the matrix is not positive definite: the leading minor of order 3 \(row\/column 2\)/);
    await expect(solver.potrf(mat('f32', 4, 4))).rejects.toMatchObject({ index: 2, name: 'CUSOLVER_INFO_NOT_POSITIVE_DEFINITE' });
    solver.close();
  });

  test('getrf: SingularMatrixError; the pivots getrf allocated are freed', async () => {
    const { solver, api } = fakeSolver(2);
    loader.mockReturnValue(api);
    const made: FakeBuffer[] = [];
    jest.spyOn(DeviceBuffer, 'alloc').mockImplementation((bytes: number) => {
      const b = new FakeBuffer(bytes, BASE + 0xb000);
      made.push(b);
      return b;
    });
    await expect(solver.getrf(mat('f64', 3, 3, 'col'))).rejects.toThrow(SingularMatrixError);
    await expect(solver.getrf(mat('f64', 3, 3, 'col'))).rejects.toMatchObject({
      index: 1,
      message: expect.stringMatching(/^DenseSolver.getrf: the matrix is singular: U\[1\]\[1\] is exactly zero/),
    });
    expect(made.length).toBe(2);
    expect(made.every((b) => b.closed)).toBe(true);
    solver.close();
  });

  test('syevd and gesvd: ConvergenceError; a negative info names the parameter', async () => {
    const { solver, api } = fakeSolver(1);
    loader.mockReturnValue(api);
    jest.spyOn(DeviceBuffer, 'alloc').mockImplementation((bytes: number) => new FakeBuffer(bytes, BASE + 0xc000));
    expect(() => solver.syevdSync(mat('f32', 3, 3))).toThrow(ConvergenceError);
    await expect(solver.gesvd(mat('f64', 4, 3, 'col'), { vectors: 'none' })).rejects.toMatchObject({ unconverged: 1, func: 'cusolverDnXgesvd' });
    const bad = fakeSolver(-6);
    loader.mockReturnValue(bad.api);
    expect(() => bad.solver.geqrfSync(mat('f32', 3, 3, 'col'))).toThrow(/DenseSolver.geqrf: cuSOLVER refused parameter 6 \(cusolverDnXgeqrf info = -6\)/);
    solver.close();
    bad.solver.close();
  });
});
