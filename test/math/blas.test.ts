// Blas without a GPU: every argument check throws TypeError/RangeError naming the call before cuBLAS
// is called, and valid calls reach the typed layer with the column-major arguments worked out from
// row-major or column-major views. cuBLAS's typed layer is a fake that logs calls (no library loads).
import { driverlessContext } from '../helpers/fake-driver';
import { DeviceBuffer } from '../../src/memory/device-buffer';
import { StridedView } from '../../src/memory/strided-view';
import { Stream } from '../../src/stream';
import { Blas } from '../../src/math/blas';
import { CUBLAS_COMPUTE, defaultComputeType, gemmScaleType } from '../../src/math/blas-gemm';
import { matrix } from '../../src/math/matrix';

const calls: [string, unknown[]][] = [];
const HANDLE = 0xb1a5;
const fakeCublas = new Proxy({} as Record<string, unknown>, {
  get:
    (_t, name: string) =>
    (...args: unknown[]) => {
      calls.push([name, args]);
      return name === 'cublasCreate' ? HANDLE : undefined;
    },
});
const loadCublas = jest.fn(() => fakeCublas);
jest.mock('../../src/releases', () => ({ ...jest.requireActual('../../src/releases'), loadCublas: () => loadCublas() }));

const ctx = driverlessContext();
const stream = Stream.legacyDefault(ctx);
let base = 0x7f1000000000;
function buffer(bytes: number): DeviceBuffer {
  const b = DeviceBuffer.wrap(base, bytes, { context: ctx });
  base += 0x100000;
  return b;
}
const view = (
  rows: number,
  cols: number,
  dtype: 'f32' | 'f64' | 'f16' | 'bf16' | 'c64' | 'c128' | 'i8' | 'i32' = 'f32',
  order: 'row' | 'col' = 'row',
  ld?: number,
) => matrix(buffer(8 * 16 * 1024), { dtype, rows, cols, order, ld });
const names = (): string[] => calls.map(([n]) => n);
const last = (): [string, unknown[]] => calls[calls.length - 1];

let blas: Blas;
beforeEach(() => {
  calls.length = 0;
  blas = Blas.create({ stream });
  calls.length = 0;
});
afterEach(() => blas.close());

test('the compute-type codes equal the generated cublasComputeType_t', () => {
  const { cublasComputeType_t } = jest.requireActual('../../generated/13.0/cublas/types');
  for (const [name, code] of Object.entries(CUBLAS_COMPUTE)) expect(cublasComputeType_t[`CUBLAS_COMPUTE_${name}`]).toBe(code);
});

describe('Blas.create', () => {
  test('refuses bad options before loading cuBLAS', () => {
    loadCublas.mockClear();
    expect(() => Blas.create(5 as never)).toThrow(/^Blas.create: options must be an object, got number 5/);
    expect(() => Blas.create({ steam: stream } as never)).toThrow(/Blas.create: unknown option 'steam'/);
    expect(() => Blas.create({ stream: 'x' as never })).toThrow(TypeError);
    expect(loadCublas).not.toHaveBeenCalled();
  });
  test('creates the handle on the stream in host pointer mode; close destroys it once', () => {
    calls.length = 0;
    const b = Blas.create({ stream });
    expect(names()).toEqual(['cublasCreate', 'cublasSetStream', 'cublasSetPointerMode']);
    expect(calls[1][1]).toEqual([HANDLE, stream.handle]);
    expect(calls[2][1]).toEqual([HANDLE, 0]);
    b.close();
    b.close();
    expect(names().filter((n) => n === 'cublasDestroy')).toHaveLength(1);
    expect(() => b.gemm(view(2, 2), view(2, 2), view(2, 2))).toThrow(/Blas.gemm: the Blas is closed/);
  });
  test('a stream closed first stays alive until the handle is closed', () => {
    const s = Stream.legacyDefault(ctx);
    const b = Blas.create({ stream: s });
    s.close();
    expect(s.core.destroyed).toBe(false);
    b.close();
    expect(s.core.destroyed).toBe(true);
  });
});

describe('Blas.gemm maps views to one column-major call', () => {
  test('row-major c: a and b swapped, m/n swapped, ld = row strides', () => {
    const a = view(37, 19, 'f32', 'row', 24);
    const b = view(19, 53);
    const c = view(37, 53);
    blas.gemm(a, b, c, { alpha: 2, beta: 0.5 });
    const [name, args] = last();
    expect(name).toBe('cublasSgemm');
    expect(args.slice(0, 6)).toEqual([HANDLE, 0, 0, 53, 37, 19]);
    expect(args[6]).toBe(2); // real scalars go as values
    expect(args[7]).toBe(b.address);
    expect(args[8]).toBe(53);
    expect(args[9]).toBe(a.address);
    expect(args[10]).toBe(24);
    expect(args[11]).toBe(0.5);
    expect(args.slice(12)).toEqual([c.address, 53]);
  });
  test('column-major c: as is, ld = column strides; a row-major operand flips N ↔ T', () => {
    const a = view(19, 37, 'f64', 'row'); // transA 'T': op(a) is 37×19, its memory is aᵀ column-major = op(a): N
    const b = view(19, 53, 'f64', 'col', 20);
    const c = view(37, 53, 'f64', 'col', 40);
    blas.gemm(a, b, c, { transA: 'T' });
    const [name, args] = last();
    expect(name).toBe('cublasDgemm');
    expect(args.slice(0, 6)).toEqual([HANDLE, 0, 0, 37, 53, 19]);
    expect(args[8]).toBe(37);
    expect(args[10]).toBe(20);
    expect(args[13]).toBe(40);
  });
  test('a transposed view (StridedView.transpose) is the column-major operand', () => {
    const a = view(19, 37).transpose(); // 37×19, strides [1, 37]
    const b = view(19, 53);
    const c = view(37, 53);
    blas.gemm(a, b, c);
    const args = last()[1];
    expect(args.slice(1, 3)).toEqual([0, 1]); // b as is (row = c's order), a flipped
    expect(args[10]).toBe(37);
  });
  test('an m×1 or 1×n operand fits both orders: it takes the order of c, so no flip (an outer product)', () => {
    const a = view(37, 1); // row-major strides [1, 1]
    const b = view(1, 53);
    const c = view(37, 53, 'f32', 'col');
    blas.gemm(a, b, c);
    const args = last()[1];
    expect(args.slice(1, 6)).toEqual([0, 0, 37, 53, 1]);
    expect([args[8], args[10], args[13]]).toEqual([37, 1, 37]);
  });
  test('the same views again reuse the last plan; other calls in between, new transposes and closed buffers are seen', () => {
    const a = view(37, 19, 'f32', 'row', 24);
    const b = view(19, 53);
    const c = view(37, 53);
    blas.gemm(a, b, c, { alpha: 2 });
    const first = last()[1];
    blas.gemm(a, b, c, { alpha: 3, beta: 1 });
    expect(last()[1]).toEqual([...first.slice(0, 6), 3, ...first.slice(7, 11), 1, ...first.slice(12)]);
    // gemv and gemmEx resolve into the same slots: gemm must not run on what they left there
    blas.gemv(view(8, 4, 'f32', 'col'), buffer(16), buffer(32), { dtype: 'f32' });
    blas.gemm(a, b, c, { alpha: 2 });
    expect(last()[1]).toEqual(first);
    blas.gemmEx(view(4, 4, 'f16'), view(4, 4, 'f16'), view(4, 4, 'f32'));
    blas.gemm(a, b, c, { alpha: 2 });
    expect(last()[1]).toEqual(first);
    blas.gemm(a, view(53, 19), c, { transB: 'T', alpha: 2 });
    expect(last()[1].slice(1, 3)).toEqual([1, 0]);
    blas.gemm(a, b, c, { alpha: 2 });
    expect(last()[1]).toEqual(first);
    expect(() => blas.gemm(a, b, c, { alpha: 'x' as never })).toThrow(/Blas.gemm: alpha must be a number, got/);
    (c.buffer as DeviceBuffer).close();
    calls.length = 0;
    expect(() => blas.gemm(a, b, c)).toThrow(/Blas.gemm: the DeviceBuffer.* is closed/);
    expect(calls).toEqual([]);
  });
  test('empty products reach cuBLAS with leading dimensions ≥ 1', () => {
    blas.gemm(view(0, 4), view(4, 3), view(0, 3));
    expect(last()[1].slice(3, 6)).toEqual([3, 0, 4]);
    expect(last()[1][13]).toBe(3);
  });
  test('complex alpha and f16 through GemmEx with f32 compute', () => {
    blas.gemm(view(4, 4, 'c64'), view(4, 4, 'c64'), view(4, 4, 'c64'), { alpha: { re: 1, im: -2 }, transA: 'C' });
    expect(last()[0]).toBe('cublasCgemm');
    expect(Array.from((last()[1][6] as Float32Array).slice(0, 2))).toEqual([1, -2]);
    expect(last()[1][2]).toBe(2); // swapped (row-major c): a goes second, its 'C' passes through (same order as c)
    blas.gemm(view(4, 4, 'f16'), view(4, 4, 'f16'), view(4, 4, 'f16'));
    const [name, args] = last();
    expect(name).toBe('cublasGemmEx');
    expect(args[8]).toBe(2); // CUDA_R_16F
    expect(args[17]).toBe(CUBLAS_COMPUTE['32F']);
    expect(args[6]).toBeInstanceOf(Float32Array);
  });
});

describe('Blas.gemm refuses before calling cuBLAS', () => {
  const cases: [string, () => unknown, RegExp, ErrorConstructor][] = [
    [
      'a DeviceBuffer',
      () => blas.gemm(buffer(64) as never, view(2, 2), view(2, 2)),
      /Blas.gemm: a must be a 2-D StridedView of device memory, got DeviceBuffer \(a DeviceBuffer has no shape/,
      TypeError,
    ],
    ['a host array', () => blas.gemm(new Float32Array(4) as never, view(2, 2), view(2, 2)), /a host array: copy it to the GPU first/, TypeError],
    [
      'a 1-D view',
      () => blas.gemm(StridedView.of(buffer(64), { dtype: 'f32', shape: [4] }), view(2, 2), view(2, 2)),
      /Blas.gemm: a must be 2-D \[rows, cols\], got shape \[4\]/,
      RangeError,
    ],
    [
      'inner dimensions',
      () => blas.gemm(view(3, 4), view(5, 2), view(3, 2)),
      /Blas.gemm: op\(a\) is 3×4 and op\(b\) is 5×2: the inner dimensions differ/,
      RangeError,
    ],
    ['output shape', () => blas.gemm(view(3, 4), view(4, 2), view(2, 3)), /Blas.gemm: c is 2×3 but op\(a\)·op\(b\) is 3×2/, RangeError],
    ['dtype mismatch a/b', () => blas.gemm(view(2, 2), view(2, 2, 'f64'), view(2, 2)), /Blas.gemm: a holds f32 and b f64: they must match/, TypeError],
    ['dtype mismatch c', () => blas.gemm(view(2, 2), view(2, 2), view(2, 2, 'f64')), /a and b hold f32, c f64: gemm takes one dtype/, TypeError],
    [
      'no unit stride',
      () => blas.gemm(StridedView.of(buffer(256), { dtype: 'f32', shape: [2, 2], strides: [4, 2] }), view(2, 2), view(2, 2)),
      /a \(shape \[2,2\], strides \[4,2\]\) is neither row-major/,
      RangeError,
    ],
    [
      'ld below the extent',
      () => blas.gemm(StridedView.of(buffer(256), { dtype: 'f32', shape: [3, 4], strides: [2, 1] }), view(4, 2), view(3, 2)),
      /neither row-major \(strides \[ld, 1\], ld ≥ cols\)/,
      RangeError,
    ],
    [
      'transA',
      () => blas.gemm(view(2, 2), view(2, 2), view(2, 2), { transA: 'X' as never }),
      /Blas.gemm: transA must be 'N', 'T' or 'C', got string "X"/,
      TypeError,
    ],
    ['unknown option', () => blas.gemm(view(2, 2), view(2, 2), view(2, 2), { tranA: 'T' } as never), /Blas.gemm: unknown option 'tranA'/, TypeError],
    ['alpha', () => blas.gemm(view(2, 2), view(2, 2), view(2, 2), { alpha: '1' as never }), /Blas.gemm: alpha must be a number, got string/, TypeError],
    [
      'complex beta',
      () => blas.gemm(view(2, 2, 'c64'), view(2, 2, 'c64'), view(2, 2, 'c64'), { beta: { re: 1 } as never }),
      /Blas.gemm: beta must be a number or a complex/,
      TypeError,
    ],
    [
      'conjugate across orders',
      () => blas.gemm(view(2, 2, 'c64', 'col'), view(2, 2, 'c64'), view(2, 2, 'c64'), { transA: 'C' }),
      /a conjugate transpose of a needs a in the same storage order as the output \(row-major\)/,
      RangeError,
    ],
    [
      'read-only c',
      () => blas.gemm(view(2, 2), view(2, 2), StridedView.of(buffer(64), { dtype: 'f32', shape: [2, 2], readOnly: true })),
      /Blas.gemm: c is a read-only view/,
      TypeError,
    ],
    ['i8 operands', () => blas.gemm(view(2, 2, 'i8'), view(2, 2, 'i8'), view(2, 2, 'i8')), /Blas.gemm: no GEMM of i8/, TypeError],
    [
      'another context',
      () =>
        blas.gemm(
          matrix(DeviceBuffer.wrap(0x7f9000000000, 64, { context: driverlessContext(0x999) }), { dtype: 'f32', rows: 2, cols: 2 }),
          view(2, 2),
          view(2, 2),
        ),
      /Blas.gemm: a belongs to/,
      TypeError,
    ],
  ];
  test.each(cases)('%s', (_name, fn, message, type) => {
    expect(fn).toThrow(type);
    expect(fn).toThrow(message);
    expect(calls).toEqual([]);
  });
});

describe('Blas.gemmEx', () => {
  test('mixed types: f16 → f32 with 32F, bf16, i8 → i32 with 32I (i32 scalars), TF32', () => {
    blas.gemmEx(view(8, 8, 'f16'), view(8, 8, 'f16'), view(8, 8, 'f32'));
    expect(last()[1][15]).toBe(0); // c: CUDA_R_32F
    blas.gemmEx(view(8, 8, 'i8'), view(8, 8, 'i8', 'col'), view(8, 8, 'i32'), { alpha: 2 });
    expect(last()[1][17]).toBe(CUBLAS_COMPUTE['32I']);
    expect(last()[1].slice(1, 3)).toEqual([1, 0]); // K contiguous in a and b: the TN call cuBLAS's IMMA kernels take
    expect(last()[1][6]).toBeInstanceOf(Int32Array);
    blas.gemmEx(view(8, 8), view(8, 8), view(8, 8), { computeType: '32F_FAST_TF32', algo: 99 });
    expect(last()[1].slice(17)).toEqual([77, 99]);
    blas.gemmEx(view(8, 8, 'f16'), view(8, 8, 'f16'), view(8, 8, 'f16'), { computeType: '16F' });
    expect(last()[1][6]).toBeInstanceOf(Uint16Array);
  });
  test('refuses combinations cuBLAS does not take', () => {
    expect(() => blas.gemmEx(view(2, 2, 'f16'), view(2, 2, 'f16'), view(2, 2, 'f32'), { computeType: '16F' })).toThrow(
      /Blas.gemmEx: computeType 16F takes a\/b → c of f16 → f16; got f16 → f32/,
    );
    expect(() => blas.gemmEx(view(2, 2, 'f64'), view(2, 2, 'f64'), view(2, 2, 'f32'))).toThrow(/computeType 64F takes .*got f64 → f32/);
    expect(() => blas.gemmEx(view(2, 2, 'f16'), view(2, 2, 'f16'), view(2, 2), { computeType: '32F_FAST_TF32' })).toThrow(
      /32F_FAST_TF32 takes a\/b → c of f32 → f32, c64 → c64/,
    );
    expect(() => blas.gemmEx(view(2, 2), view(2, 2), view(2, 2), { computeType: 'F32' as never })).toThrow(/Blas.gemmEx: computeType must be one of 16F/);
    expect(() => blas.gemmEx(view(2, 2), view(2, 2), view(2, 2), { algo: 1.5 })).toThrow(/Blas.gemmEx: algo must be a cublasGemmAlgo_t/);
    expect(() => blas.gemmEx(view(2, 2, 'i8'), view(2, 2, 'i8'), view(2, 2, 'i32'), { alpha: 1.5 })).toThrow(RangeError);
    expect(calls).toEqual([]);
  });
  test('i8 → i32 (32I): layouts cuBLAS has no IMMA kernel for are refused before the call, naming the requirement', () => {
    const k = /needs K contiguous in a and b: op\(a\) row-major and op\(b\) column-major.*would be NN, cuBLAS takes only TN/;
    expect(() => blas.gemmEx(view(8, 8, 'i8'), view(8, 8, 'i8'), view(8, 8, 'i32'))).toThrow(k); // both row-major
    expect(() => blas.gemmEx(view(8, 8, 'i8', 'col'), view(8, 8, 'i8', 'col'), view(8, 8, 'i32', 'col'))).toThrow(/would be NN/);
    expect(() => blas.gemmEx(view(8, 8, 'i8', 'col'), view(8, 8, 'i8', 'row'), view(8, 8, 'i32', 'col'))).toThrow(/would be NT/);
    expect(() => blas.gemmEx(view(8, 8, 'i8'), view(8, 8, 'i8', 'col'), view(8, 8, 'i32'), { transA: 'T' })).toThrow(/would be TT/);
    expect(() => blas.gemmEx(view(8, 6, 'i8'), view(6, 8, 'i8', 'col'), view(8, 8, 'i32'))).toThrow(
      /Blas.gemmEx: .*needs the ld of b to be a multiple of 4, got 6/,
    );
    expect(() => blas.gemmEx(view(6, 8, 'i8'), view(8, 8, 'i8', 'col'), view(6, 8, 'i32', 'col'))).toThrow(/needs the ld of c to be a multiple of 4, got 6/);
    const a = matrix(buffer(256), { dtype: 'i8', rows: 8, cols: 8, byteOffset: 2 });
    expect(() => blas.gemmEx(a, view(8, 8, 'i8', 'col'), view(8, 8, 'i32'))).toThrow(/needs a to be a multiple of 4 bytes/);
    expect(() => blas.gemmStridedBatched(view(8, 8, 'i8'), view(8, 8, 'i8'), view(8, 8, 'i32'))).toThrow(/Blas.gemmStridedBatched: .*would be NN/);
    expect(() => blas.gemmBatched([view(8, 8, 'i8')], [view(8, 8, 'i8')], [view(8, 8, 'i32')])).toThrow(/Blas.gemmBatched: .*would be NN/);
    // i8 → f32 with 32F is not the IMMA path: no such check
    blas.gemmEx(view(8, 8, 'i8'), view(8, 8, 'i8'), view(8, 8, 'f32'));
    expect(names()).toEqual(['cublasGemmEx']);
  });
  test('defaults and scale types', () => {
    expect(defaultComputeType('bf16', 'bf16')).toBe('32F');
    expect(defaultComputeType('c128', 'c128')).toBe('64F');
    expect(gemmScaleType('w', 'c64', 'c64', '32F_FAST_16BF')).toBe('c64');
    expect(gemmScaleType('w', 'c128', 'c128', '64F_PEDANTIC')).toBe('c128');
  });
});

describe('batches', () => {
  const batched = (batch: number, rows: number, cols: number, dtype: 'f32' | 'f64' = 'f32') =>
    StridedView.of(buffer(8 * batch * rows * cols), { dtype, shape: [batch, rows, cols] });
  test('strided-batched: 3-D views, a 2-D operand broadcast with stride 0', () => {
    const a = batched(5, 3, 4);
    const b = view(4, 2);
    const c = batched(5, 3, 2);
    blas.gemmStridedBatched(a, b, c);
    const [name, args] = last();
    expect(name).toBe('cublasGemmStridedBatchedEx');
    expect(args.slice(3, 6)).toEqual([2, 3, 4]);
    expect(args[7]).toBe(b.address); // swapped: b first, stride 0
    expect(args[10]).toBe(0);
    expect(args[14]).toBe(12); // a's batch stride
    expect(args[19]).toBe(6);
    expect(args[20]).toBe(5);
  });
  test('strided-batched refusals', () => {
    expect(() => blas.gemmStridedBatched(batched(4, 3, 4), batched(5, 4, 2), batched(5, 3, 2))).toThrow(/Blas.gemmStridedBatched: a holds 4 matrices, c 5/);
    expect(() =>
      blas.gemmStridedBatched(batched(2, 3, 4), batched(2, 4, 2), StridedView.of(buffer(64), { dtype: 'f32', shape: [2, 3, 2], strides: [0, 2, 1] })),
    ).toThrow(/c has batch stride 0/);
    expect(() => blas.gemmStridedBatched(batched(2, 3, 4), batched(2, 4, 2), batched(2, 3, 2, 'f64'))).toThrow(/computeType 32F takes/);
    expect(calls).toEqual([]);
  });
  test('batched: pointer arrays uploaded in stream order, uniform layouts checked', () => {
    expect(() => blas.gemmBatched([view(2, 3)], [view(3, 2), view(3, 2)], [view(2, 2)])).toThrow(
      /Blas.gemmBatched: a, b and c must hold as many matrices \(got 1, 2, 1\)/,
    );
    expect(() => blas.gemmBatched(view(2, 2) as never, [], [])).toThrow(/Blas.gemmBatched: a must be an array of 2-D StridedViews/);
    expect(() => blas.gemmBatched([view(2, 3), view(2, 3, 'f32', 'row', 4)], [view(3, 2), view(3, 2)], [view(2, 2), view(2, 2)])).toThrow(
      /Blas.gemmBatched: a\[1\] is f32 2×3 row-major with ld 4; the first is f32 2×3 row-major with ld 3/,
    );
    expect(calls).toEqual([]);
    expect(blas.gemmBatched([], [], [])).toBe(blas);
    expect(calls).toEqual([]);
  });
});

describe('level 1 and 2', () => {
  const vec = (n: number, dtype: 'f32' | 'f64' | 'c64' | 'c128' = 'f32', stride = 1) =>
    StridedView.of(buffer(16 * n * stride + 16), { dtype, shape: [n], strides: [stride] });
  test('axpy, scal, dot, nrm2, gemv reach the S/D/C/Z functions with increments', () => {
    const x = vec(10, 'f32', 2);
    const y = vec(10);
    blas.axpy(3, x, y);
    expect(last()[0]).toBe('cublasSaxpy');
    expect(last()[1].slice(3)).toEqual([x.address, 2, y.address, 1]);
    blas.scal({ re: 0, im: 1 }, vec(4, 'c128'));
    expect(last()[0]).toBe('cublasZscal');
    expect(blas.dot(vec(3, 'c64'), vec(3, 'c64'), { conjugate: true })).toEqual({ re: 0, im: 0 });
    expect(last()[0]).toBe('cublasCdotc');
    expect(blas.nrm2(vec(3, 'c128'))).toBe(0);
    expect(last()[0]).toBe('cublasDznrm2');
    blas.axpy(1, buffer(40), buffer(40), { dtype: 'f64' });
    expect(last()[1][1]).toBe(5);
    const a = view(3, 5); // row-major: cuBLAS sees 5×3, op flipped to T
    blas.gemv(a, vec(5), vec(3));
    expect(last()[0]).toBe('cublasSgemv');
    expect(last()[1].slice(1, 4)).toEqual([1, 5, 3]);
    blas.dotInto(vec(3), vec(3), vec(1));
    expect(names().slice(-2)).toEqual(['cublasSetPointerMode', 'cublasSdot']);
    blas.scal(2, vec(3));
    expect(names().slice(-2)).toEqual(['cublasSetPointerMode', 'cublasSscal']); // back to host mode
  });
  test('refusals', () => {
    expect(() => blas.axpy(1, buffer(40), buffer(40))).toThrow(/Blas.axpy: x is a DeviceBuffer without a dtype/);
    expect(() => blas.axpy(1, vec(3), vec(4))).toThrow(/Blas.axpy: x holds 3 elements and y 4/);
    expect(() => blas.axpy(1, vec(3), vec(3, 'f64'))).toThrow(/Blas.axpy: y holds f64, expected f32/);
    expect(() => blas.axpy(1, vec(3), vec(3), { dtype: 'f16' as never })).toThrow(/Blas.axpy: dtype must be one of f32, f64, c64, c128/);
    expect(() => blas.axpy(1, view(2, 2), vec(3))).toThrow(/Blas.axpy: x must be a 1-D view/);
    expect(() => blas.scal(1, StridedView.of(buffer(64), { dtype: 'f32', shape: [3], strides: [0] }))).toThrow(
      /Blas.scal: x must have a positive stride, got 0/,
    );
    expect(() => blas.dot(vec(3), vec(3), { conjugate: 1 as never })).toThrow(/Blas.dot: conjugate must be a boolean/);
    expect(() => blas.dotInto(vec(3), vec(3), StridedView.of(buffer(8), { dtype: 'f32', shape: [0] }))).toThrow(
      /Blas.dotInto: result must hold at least one f32 element/,
    );
    expect(() => blas.nrm2Into(vec(3, 'c64'), vec(1, 'c64'))).toThrow(/Blas.nrm2Into: result holds c64, expected f32/);
    expect(() => blas.gemv(view(3, 5), vec(3), vec(3))).toThrow(/Blas.gemv: op\(a\) is 3×5 but x holds 3 elements/);
    expect(() => blas.gemv(view(3, 5), vec(5), vec(5))).toThrow(/Blas.gemv: op\(a\) is 3×5 but y holds 5 elements/);
    expect(() => blas.gemv(view(3, 5, 'c64', 'row'), vec(3, 'c64'), vec(5, 'c64'), { trans: 'C' })).toThrow(
      /a conjugate transpose of a needs a in the same storage order/,
    );
    expect(() => blas.gemv(view(3, 5, 'f16'), vec(5), vec(3))).toThrow(/Blas.gemv: a dtype must be one of f32, f64, c64, c128, got 'f16'/);
    expect(calls).toEqual([]);
  });
  test('dotAsync refuses synchronously-checked arguments as a rejection', async () => {
    await expect(blas.dotAsync(vec(3), vec(4))).rejects.toThrow(/Blas.dotAsync: x holds 3 elements and y 4/);
    expect(calls).toEqual([]);
  });
});

test('matrix() refuses bad layouts', () => {
  expect(() => matrix(buffer(64), { dtype: 'f32', rows: 2, cols: 4, ld: 3 })).toThrow(/matrix: ld must be an integer ≥ cols/);
  expect(() => matrix(buffer(64), { dtype: 'f32', rows: 2, cols: 4, order: 'C' as never })).toThrow(/matrix: order must be 'row' or 'col'/);
  expect(() => matrix(buffer(16), { dtype: 'f32', rows: 2, cols: 4 })).toThrow(/^matrix: shape \[2,4\] .* outside the 16-byte buffer/);
  expect(() => matrix(buffer(64), { dtype: 'f32', rows: -1, cols: 4 })).toThrow(/matrix: rows must be an integer ≥ 0/);
  expect(matrix(buffer(64), { dtype: 'f32', rows: 2, cols: 3, order: 'col', ld: 4 }).strides).toEqual([1, 4]);
});
