// Matmul without a GPU: every argument check throws TypeError/RangeError naming the call before cuBLASLt
// is called (create's before it is even loaded), and valid calls reach the typed layer with the layouts,
// attributes and pointers worked out. cuBLASLt's typed layer is a fake that logs calls.
import { driverlessContext, fakeContext, fakeDriver, out } from '../helpers/fake-driver';
import { DeviceBuffer } from '../../src/memory/device-buffer';
import { StridedView } from '../../src/memory/strided-view';
import { Stream } from '../../src/stream';
import { Matmul } from '../../src/math/matmul';
import { EPILOGUES, auxLayout, epilogueTraits } from '../../src/math/matmul-layout';
import { matrix } from '../../src/math/matrix';

const calls: [string, unknown[]][] = [];
/** What the fake cublasLtMatmul does besides logging (a test's stand-in failure). */
let ltMatmulHook: (() => void) | undefined;
let nextHandle = 0x1000;
let heuristicCount = 3;
const { records } = jest.requireActual('../../generated/13.0/cublaslt/types');
const fakeLt = new Proxy({} as Record<string, unknown>, {
  get: (_t, name: string) => {
    if (name === 'records') return records;
    return (...args: unknown[]) => {
      calls.push([name, args]);
      if (name === 'cublasLtMatmul') ltMatmulHook?.();
      if (name.endsWith('Create')) return nextHandle++;
      if (name === 'cublasLtMatmulAlgoGetHeuristic') {
        return Array.from({ length: heuristicCount }, (_, i) => ({
          algo: { data: [i + 1, 0, 0, 0, 0, 0, 0, 0] },
          workspaceSize: 0,
          state: 0,
          wavesCount: 1 + i,
          reserved: [0, 0, 0, 0],
        }));
      }
      return undefined;
    };
  },
});
const loadCublasLt = jest.fn(() => fakeLt);
jest.mock('../../src/releases', () => ({ ...jest.requireActual('../../src/releases'), loadCublasLt: () => loadCublasLt() }));

const ctx = driverlessContext();
const stream = Stream.legacyDefault(ctx);
let base = 0x7f2000000000;
function buffer(bytes: number): DeviceBuffer {
  const b = DeviceBuffer.wrap(base, bytes, { context: ctx });
  base += 0x100000;
  return b;
}
type D = 'f32' | 'f16' | 'f64' | 'bf16';
const view = (rows: number, cols: number, dtype: D = 'f32', order: 'row' | 'col' = 'row') => matrix(buffer(8 * rows * cols + 64), { dtype, rows, cols, order });
const names = (): string[] => calls.map(([n]) => n);
const attrs = (fn: string) => calls.filter(([n]) => n === fn).map(([, a]) => [a[1], a[2]]);

beforeEach(() => {
  calls.length = 0;
  heuristicCount = 3;
  loadCublasLt.mockClear();
});

describe('Matmul.create', () => {
  const cases: [string, () => unknown, RegExp, ErrorConstructor][] = [
    ['options', () => Matmul.create(3 as never), /^Matmul.create: options must be an object/, TypeError],
    ['unknown option', () => Matmul.create({ a: view(2, 2), b: view(2, 2), epilogue: 'RELU' } as never), /Matmul.create: unknown option 'epilogue'/, TypeError],
    ['a DeviceBuffer', () => Matmul.create({ a: buffer(64) as never, b: view(2, 2) }), /Matmul.create: a must be a StridedView or a description/, TypeError],
    [
      'description dtype',
      () => Matmul.create({ a: { dtype: 'u16', shape: [2, 2] }, b: view(2, 2) }),
      /Matmul.create: a.dtype must be one of f16, bf16/,
      TypeError,
    ],
    [
      'description shape',
      () => Matmul.create({ a: { dtype: 'f32', shape: [2] }, b: view(2, 2) }),
      /Matmul.create: a.shape must be \[rows, cols\] or \[batch, rows, cols\]/,
      RangeError,
    ],
    [
      'description ld',
      () => Matmul.create({ a: { dtype: 'f32', shape: [2, 4], ld: 3 }, b: view(4, 2) }),
      /Matmul.create: a.ld must be ≥ 4 \(the cols\), got 3/,
      RangeError,
    ],
    ['description key', () => Matmul.create({ a: { dtype: 'f32', shape: [2, 4], stride: 3 } as never, b: view(4, 2) }), /unknown option 'stride'/, TypeError],
    ['a/b dtypes', () => Matmul.create({ a: view(2, 3), b: view(3, 2, 'f64') }), /Matmul.create: a holds f32 and b f64/, TypeError],
    ['inner dimensions', () => Matmul.create({ a: view(2, 3), b: view(4, 2) }), /Matmul.create: op\(a\) is 2×3 and op\(b\) is 4×2/, RangeError],
    ['transposed inner', () => Matmul.create({ a: view(2, 3), b: view(3, 2), transA: 'T' }), /op\(a\) is 3×2 and op\(b\) is 3×2/, RangeError],
    ['d shape', () => Matmul.create({ a: view(2, 3), b: view(3, 5), d: view(5, 2) }), /Matmul.create: d is 5×2 but op\(a\)·op\(b\) is 2×5/, RangeError],
    [
      'c/d dtypes',
      () => Matmul.create({ a: view(2, 3, 'f16'), b: view(3, 5, 'f16'), c: view(2, 5, 'f16'), d: view(2, 5) }),
      /c holds f16 and d f32/,
      TypeError,
    ],
    [
      'batches',
      () => Matmul.create({ a: { dtype: 'f32', shape: [3, 2, 3] }, b: { dtype: 'f32', shape: [4, 3, 5] } }),
      /Matmul.create: a holds 3 matrices, the product 4/,
      RangeError,
    ],
    [
      'd batch stride 0',
      () => Matmul.create({ a: { dtype: 'f32', shape: [3, 2, 3] }, b: view(3, 5), d: { dtype: 'f32', shape: [3, 2, 5], batchStride: 0 } }),
      /d has batch stride 0/,
      RangeError,
    ],
    [
      'compute type',
      () => Matmul.create({ a: view(2, 3, 'f16'), b: view(3, 5, 'f16'), computeType: '64F' }),
      /Matmul.create: computeType 64F takes/,
      TypeError,
    ],
    ['transA', () => Matmul.create({ a: view(2, 3), b: view(3, 5), transA: 'H' as never }), /Matmul.create: transA must be 'N', 'T' or 'C'/, TypeError],
  ];
  test.each(cases)('refuses %s before loading cuBLASLt', (_n, fn, message, type) => {
    expect(fn).toThrow(type);
    expect(fn).toThrow(message);
    expect(loadCublasLt).not.toHaveBeenCalled();
  });

  test('makes the handle, descriptor (transposes), preference and four layouts in their own order', () => {
    const mm = Matmul.create({ a: view(37, 19), b: view(53, 19, 'f32', 'col'), transB: 'T', d: view(37, 53, 'f32', 'col'), stream });
    expect([mm.m, mm.n, mm.k, mm.batch, mm.computeType]).toEqual([37, 53, 19, 1, '32F']);
    expect(names()).toEqual([
      'cublasLtCreate',
      'cublasLtMatmulDescCreate',
      'cublasLtMatmulDescSetAttribute',
      'cublasLtMatmulDescSetAttribute',
      'cublasLtMatmulPreferenceCreate',
      'cublasLtMatrixLayoutCreate',
      'cublasLtMatrixLayoutSetAttribute',
      'cublasLtMatrixLayoutCreate',
      'cublasLtMatrixLayoutCreate',
      'cublasLtMatrixLayoutCreate',
    ]);
    expect(calls[1][1]).toEqual([68, 0]);
    expect(attrs('cublasLtMatmulDescSetAttribute')).toEqual([
      [3, 0],
      [4, 1],
    ]);
    expect(calls[5][1]).toEqual([0, 37, 19, 19]); // a: row-major 37×19, ld 19, then ORDER = ROW
    expect(calls[6][1].slice(1)).toEqual([1, 1]);
    expect(calls[7][1]).toEqual([0, 53, 19, 53]);
    mm.close();
    mm.close();
    const destroyed = names().filter((n) => n.endsWith('Destroy'));
    expect(destroyed.sort()).toEqual([
      'cublasLtDestroy',
      'cublasLtMatmulDescDestroy',
      'cublasLtMatmulPreferenceDestroy',
      'cublasLtMatrixLayoutDestroy',
      'cublasLtMatrixLayoutDestroy',
      'cublasLtMatrixLayoutDestroy',
      'cublasLtMatrixLayoutDestroy',
    ]);
  });

  test('batched layouts: count and batch offsets, a broadcast operand at offset 0', () => {
    const mm = Matmul.create({ a: { dtype: 'f32', shape: [4, 8, 16] }, b: { dtype: 'f32', shape: [16, 8] }, stream });
    const layoutAttrs = attrs('cublasLtMatrixLayoutSetAttribute');
    expect(layoutAttrs).toEqual([
      [1, 1],
      [5, 4],
      [6, 128],
      [1, 1],
      [5, 4],
      [6, 0],
      [5, 4],
      [6, 64],
      [5, 4],
      [6, 64],
    ]);
    mm.close();
  });
});

describe('Matmul.plan and execute', () => {
  let mm: Matmul;
  let a: StridedView, b: StridedView, d: StridedView;
  beforeEach(() => {
    a = view(8, 16);
    b = view(16, 12);
    d = view(8, 12, 'f32', 'col');
    mm = Matmul.create({ a, b, d, stream });
    calls.length = 0;
  });
  afterEach(() => mm.close());

  test('plan refusals', () => {
    expect(() => mm.plan({ epilogue: 'SWISH' as never })).toThrow(/Matmul.plan: epilogue must be one of DEFAULT, RELU/);
    expect(() => mm.plan({ algorithms: 0 })).toThrow(/Matmul.plan: algorithms must be an integer ≥ 1/);
    expect(() => mm.plan({ algorithms: 65 })).toThrow(/at most 64/);
    expect(() => mm.plan({ maxWorkspaceBytes: -1 })).toThrow(RangeError);
    expect(() => mm.plan({ epilogue: 'RELU', bias: view(1, 8) as never })).toThrow(/Matmul.plan: the RELU epilogue takes no bias/);
    expect(() => mm.plan({ epilogue: 'BIAS', bias: StridedView.of(buffer(16), { dtype: 'f32', shape: [4] }) })).toThrow(
      /Matmul.plan: bias holds 4 elements; 8 needed/,
    );
    expect(() => mm.plan({ epilogue: 'BIAS', bias: StridedView.of(buffer(64), { dtype: 'f16', shape: [8] }) })).toThrow(/bias holds f16, expected f32/);
    expect(() => mm.plan({ frobnicate: 1 } as never)).toThrow(/Matmul.plan: unknown option 'frobnicate'/);
    const row = Matmul.create({ a, b, d: view(8, 12), stream });
    expect(() => row.plan({ epilogue: 'GELU_BIAS' })).toThrow(/Matmul.plan: the GELU_BIAS epilogue needs d column-major/);
    row.close();
    calls.length = 0;
    expect(() => mm.execute({ a, b, d })).toThrow(/Matmul.execute: call plan\(\) first/);
    expect(calls).toEqual([]);
  });

  test('plan sets the epilogue and bias, asks for n algorithms, keeps the usable ones', () => {
    const bias = buffer(64);
    heuristicCount = 4;
    mm.plan({ epilogue: 'RELU_BIAS', bias, algorithms: 4, maxWorkspaceBytes: 1 << 20 });
    expect(attrs('cublasLtMatmulDescSetAttribute')).toEqual([
      [7, EPILOGUES.RELU_BIAS],
      [8, bias.ptr],
      [10, 0],
      [11, 0],
      [12, 0],
      [13, 0],
    ]); // no aux: cleared
    expect(attrs('cublasLtMatmulPreferenceSetAttribute')).toEqual([
      [1, 1 << 20],
      [5, 256],
      [6, 256],
      [7, 256],
      [8, 256],
    ]);
    expect(calls.find(([n]) => n === 'cublasLtMatmulAlgoGetHeuristic')![1][7]).toBe(4);
    expect(mm.algorithms.map((x) => [x.index, x.wavesCount, x.algo.byteLength, x.algo[0]])).toEqual([
      [0, 1, 64, 1],
      [1, 2, 64, 2],
      [2, 3, 64, 3],
      [3, 4, 64, 4],
    ]);
    expect(mm.toString()).toBe('Matmul(8×12×16, RELU_BIAS)');
    heuristicCount = 0;
    expect(() => mm.plan()).toThrow(/Matmul.plan: cuBLASLt has no algorithm for this product with the DEFAULT epilogue/);
  });

  test('execute: operands checked against the plan, c = d in place, bias pointer set only when it changes', () => {
    const bias = buffer(64);
    mm.plan({ epilogue: 'BIAS', bias });
    calls.length = 0;
    mm.execute({ a, b, d, bias, alpha: 2 });
    expect(names()).toEqual(['cublasLtMatmul']);
    const args = calls[0][1];
    expect(args[3]).toBe(a.address);
    expect(args[5]).toBe(b.address);
    expect(args[8]).toBe(d.address); // c = d
    expect(args[10]).toBe(d.address);
    expect((args[2] as Float32Array)[0]).toBe(2);
    expect((args[12] as Uint8Array)[0]).toBe(1);
    const other = buffer(64);
    mm.execute({ a, b, d, bias: other });
    expect(names()).toEqual(['cublasLtMatmul', 'cublasLtMatmulDescSetAttribute', 'cublasLtMatmul']);
    mm.select(2).execute({ a, b, d, bias: other });
    expect((calls[calls.length - 1][1][12] as Uint8Array)[0]).toBe(3);
    expect(() => mm.select(3)).toThrow(/Matmul.select: index 3 is past the 3 planned algorithm\(s\)/);
  });

  test('execute refusals', () => {
    const bias = buffer(64);
    mm.plan({ epilogue: 'BIAS' });
    calls.length = 0;
    const cases: [() => unknown, RegExp][] = [
      [() => mm.execute(null as never), /Matmul.execute: operands must be an object/],
      [() => mm.execute({ a: view(8, 15), b, d, bias }), /Matmul.execute: a is f32 \[8, 15\]; the Matmul was made for f32 \[8, 16\]/],
      [
        () => mm.execute({ a: view(8, 16, 'f32', 'col'), b, d, bias }),
        /Matmul.execute: a is col-major with ld 8; the Matmul was made for row-major with ld 16/,
      ],
      [() => mm.execute({ a, b, d: view(8, 12), bias }), /d is row-major with ld 12; the Matmul was made for col-major with ld 8/],
      [() => mm.execute({ a, b, d }), /Matmul.execute: the BIAS epilogue needs a bias/],
      [() => mm.execute({ a, b, d, bias, aux: buffer(64) }), /the BIAS epilogue takes no aux/],
      [() => mm.execute({ a, b, c: d, d, bias }), /the Matmul was made without c/],
      [() => mm.execute({ a, b, d, bias, alpha: 'x' as never }), /Matmul.execute: alpha must be a number/],
      [
        () => mm.execute({ a: matrix(a.buffer as DeviceBuffer, { dtype: 'f32', rows: 8, cols: 16, byteOffset: 4 }), b, d, bias }),
        /Matmul.execute: a lies at an address aligned to 4 bytes; the plan assumed 256/,
      ],
      [
        () => mm.execute({ a, b, d, bias: StridedView.of(buffer(64), { dtype: 'f32', shape: [8], strides: [2] }) }),
        /bias must be contiguous \(stride 1\), got stride 2/,
      ],
    ];
    for (const [fn, message] of cases) expect(fn).toThrow(message);
    expect(calls).toEqual([]);
  });

  test('aux epilogues: layout sizes, the aux buffer checked, DRELU_BGRAD needs aux and biasGrad', () => {
    mm.plan({ epilogue: 'RELU_BIAS', bias: buffer(32) });
    calls.length = 0;
    mm.plan({ epilogue: 'RELU_AUX' });
    expect(mm.aux).toEqual({ ld: 128, batchStride: 128 * 12, bytes: 16 * 12, dtype: 'u8' });
    // the previous plan's bias is cleared from the reused descriptor; the aux pointer is a placeholder until execute
    expect(attrs('cublasLtMatmulDescSetAttribute')).toEqual([
      [7, EPILOGUES.RELU_AUX],
      [8, 0],
      [10, 0],
      [11, 256],
      [12, 128],
      [13, 1536],
    ]);
    calls.length = 0;
    expect(() => mm.execute({ a, b, d })).toThrow(/the RELU_AUX epilogue needs aux \(192 bytes, see Matmul.aux\)/);
    expect(() => mm.execute({ a, b, d, aux: buffer(100) })).toThrow(/Matmul.execute: aux must be 192 contiguous bytes/);
    expect(calls).toEqual([]);
    const aux = buffer(192);
    mm.execute({ a, b, d, aux });
    expect(attrs('cublasLtMatmulDescSetAttribute')).toEqual([[11, aux.ptr]]);
    mm.plan({ epilogue: 'DRELU_BGRAD' });
    expect(() => mm.execute({ a, b, d, aux })).toThrow(/the DRELU_BGRAD epilogue needs biasGrad/);
    mm.execute({ a, b, d, aux, biasGrad: buffer(32) });
  });
});

test('epilogue traits and aux layouts', () => {
  expect(epilogueTraits('GELU_AUX_BIAS')).toEqual({ bias: true, aux: 'gelu', auxDirection: 'out', biasGrad: undefined, columnMajorD: true });
  expect(epilogueTraits('DGELU')).toEqual({ bias: false, aux: 'gelu', auxDirection: 'in', biasGrad: undefined, columnMajorD: true });
  expect(epilogueTraits('BGRADB')).toMatchObject({ biasGrad: 'N' });
  expect(epilogueTraits('RELU')).toEqual({ bias: false, aux: undefined, auxDirection: undefined, biasGrad: undefined, columnMajorD: false });
  expect(auxLayout('gelu', 37, 5, 2, 'f16', 2)).toEqual({ ld: 40, batchStride: 200, bytes: 800, dtype: 'f16' });
  const { cublasLtEpilogue_t } = jest.requireActual('../../generated/13.0/cublaslt/types');
  for (const [name, code] of Object.entries(EPILOGUES)) expect(cublasLtEpilogue_t[`CUBLASLT_EPILOGUE_${name}`]).toBe(code);
});

describe('Matmul.execute on a created stream', () => {
  test('the same operands reuse the last resolution, the last binding is trusted, a call under another context is retried bound for real', () => {
    const own = fakeContext(0x4321);
    let current = 0;
    const driver = fakeDriver(own, { cuCtxGetCurrent: (slot: BigUint64Array) => out(slot, current), cuCtxSetCurrent: (h: number) => ((current = h), 0) });
    try {
      const s = Stream.adoptCreated(0x5eed as never, own);
      const [a, b, d] = [
        [8, 16],
        [16, 12],
        [8, 12],
      ].map(([r, c], i) => matrix(DeviceBuffer.wrap(0x7f5000000000 + i * 0x100000, 4096, { context: own }), { dtype: 'f32', rows: r, cols: c }));
      const mm = Matmul.create({ a, b, d, stream: s }).plan();
      const operands = { a, b, d };
      mm.execute(operands);
      driver.calls.length = 0;
      calls.length = 0;
      mm.execute(operands);
      mm.execute({ a, b, d, alpha: 3 });
      expect(driver.calls).toEqual([]); // no cuCtxGetCurrent: the door bound this context last
      expect(names()).toEqual(['cublasLtMatmul', 'cublasLtMatmul']);
      expect(calls[1][1].slice(3, 12)).toEqual(calls[0][1].slice(3, 12));
      current = 0x9999; // another context made current behind the door: the launch fails, nothing is enqueued
      ltMatmulHook = () => {
        if (current !== own.handle) throw Object.assign(new Error('cublasLtMatmul failed'), { code: 13 });
      };
      calls.length = 0;
      mm.execute(operands);
      expect(names()).toEqual(['cublasLtMatmul', 'cublasLtMatmul']);
      expect(current).toBe(own.handle);
      // a failure under our own context is not retried
      ltMatmulHook = () => {
        throw new Error('CUBLAS_STATUS_INVALID_VALUE');
      };
      calls.length = 0;
      expect(() => mm.execute(operands)).toThrow(/INVALID_VALUE/);
      expect(names()).toEqual(['cublasLtMatmul']);
      ltMatmulHook = undefined;
      (a.buffer as DeviceBuffer).close();
      calls.length = 0;
      expect(() => mm.execute(operands)).toThrow(/Matmul.execute: the DeviceBuffer.* is closed/);
      expect(calls).toEqual([]);
      mm.close();
    } finally {
      ltMatmulHook = undefined;
      driver.restore();
    }
  });
});
