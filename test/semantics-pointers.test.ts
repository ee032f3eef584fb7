// Pointer semantics (issue 43 part A), with no GPU: scalars by pointer take values, never addresses;
// device memory refuses host buffers; result arrays are sized by their count; cuBLASLt's attribute
// setters take typed values. Every check here throws before any library loads. The walks cover every
// module of every stored release.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readIR } from '../generator/ir/store';
import { findModule } from '../generator/modules';
import { TypeModel } from '../generator/model';
import { resolveModule, scalarTypeOf, type FunctionSem } from '../generator/semantics';
import { CudaLibraryError, deviceArg, halfBits, hostArg, memoryArg, scalarArg } from '../support';
import * as cublas from '../generated/13.0/cublas';
import * as lt from '../generated/13.0/cublaslt';
import * as curand from '../generated/13.0/curand';
import * as curandRaw from '../generated/13.0/curand/raw';
import * as sparse from '../generated/13.0/cusparse';
import * as nccl from '../generated/13.0/nccl';
import * as cudnn from '../generated/13.0/cudnn';

const root = join(__dirname, '..');
// no library is ever loaded here: a call whose arguments pass fails to find its library
for (const m of ['CUBLAS', 'CUBLASLT', 'CURAND', 'CUSPARSE', 'NCCL', 'CUDNN']) process.env[`CUDA_TS_${m}_LIBRARY`] = '/nonexistent/cuda-ts-test.so';

const RELEASES = readdirSync(join(root, 'headers')).filter((d) => /^\d+\.\d+$/.test(d));
const MODULES = (release: string) =>
  readdirSync(join(root, 'headers', release))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.replace(/\.json$/, ''));

interface Walked {
  release: string;
  module: string;
  model: TypeModel;
  sems: FunctionSem[];
}
let walked: Walked[] | undefined;
/** The semantics of every module of every stored release (resolved once for the whole file). */
function everyModule(): Walked[] {
  walked ??= RELEASES.flatMap((release) =>
    MODULES(release).map((module) => {
      const model = new TypeModel(readIR(root, release, module), findModule(module)!);
      return { release, module, model, sems: resolveModule(model) };
    }),
  );
  return walked;
}

/** The cross-check list: parameter names that are scalars by pointer wherever they are a pointer to a scalar C type. */
const SCALAR_NAMES = new Set([
  'alpha',
  'beta',
  'alpha1',
  'alpha2',
  'alphaDataDiff',
  'betaDataDiff',
  'alphaParamDiff',
  'betaParamDiff',
  'alphaDgrid',
  'betaDgrid',
  'c_coeff',
  's_coeff',
  'threshold',
  'fractionToColor',
  'valuePtr',
]);

describe('crash class 1: no public function takes a JS number as the address of a scalar', () => {
  test('every scalar-by-pointer parameter of every module and release has the scalar role', () => {
    const plain: string[] = [];
    let scalars = 0;
    for (const { release, module, model, sems } of everyModule()) {
      for (const f of sems) {
        const decl = model.ir.functions.find((x) => x.name === f.name)!;
        f.params.forEach((p, i) => {
          const kind = model.kind(decl.params[i].type);
          if (p.sem.role === 'scalar') scalars++;
          if (kind.k !== 'pointer' || !kind.constTarget || !scalarTypeOf(kind.toKind)) return;
          // cuBLAS's rotations: c and s are the cosine and sine (the rotg family writes them: non-const)
          const listed = SCALAR_NAMES.has(p.name) || (module === 'cublas' && /rot/.test(f.name) && (p.name === 'c' || p.name === 's'));
          if (listed && p.sem.role !== 'scalar') plain.push(`${release} ${module} ${f.name}.${p.name}: ${p.sem.role}`);
        });
      }
    }
    expect(plain).toEqual([]);
    expect(scalars).toBeGreaterThan(2000); // cuBLAS, cuSPARSE, cuBLASLt, cuDNN, NCCL in four releases
  });

  test('cublasSgemm takes alpha and beta as numbers: the checks pass and the call goes on to load cuBLAS', () => {
    const OP_N = cublas.cublasOperation_t.CUBLAS_OP_N;
    expect(() => cublas.cublasSgemm(0 as cublas.cublasHandle_t, OP_N, OP_N, 4, 4, 4, 1.5, 4096, 4, 8192, 4, 0, 12288, 4)).toThrow(CudaLibraryError);
    // a host buffer holding the value and a device object holding it pass too
    expect(() =>
      cublas.cublasSgemm(0 as cublas.cublasHandle_t, OP_N, OP_N, 4, 4, 4, new Float32Array([1]), { ptr: 4096 }, 4, 8192, 4, { ptr: 16384 }, 12288, 4),
    ).toThrow(CudaLibraryError);
  });

  test('a scalar of the wrong form is refused, naming the function and the parameter', () => {
    const OP_N = cublas.cublasOperation_t.CUBLAS_OP_N;
    const h = 0 as cublas.cublasHandle_t;
    expect(() => cublas.cublasSgemm(h, OP_N, OP_N, 4, 4, 4, 'x' as never, 4096, 4, 8192, 4, 0, 12288, 4)).toThrow(
      /^cublasSgemm: alpha must be a number \(the value itself, never an address\)/,
    );
    expect(() => cublas.cublasSgemm(h, OP_N, OP_N, 4, 4, 4, new Uint8Array(2), 4096, 4, 8192, 4, 0, 12288, 4)).toThrow(
      new RangeError('cublasSgemm: alpha is 2 bytes, shorter than the 4-byte f32 scalar'),
    );
    expect(() => cublas.cublasCaxpy(h, 4, 'x' as never, 4096, 1, 8192, 1)).toThrow(/^cublasCaxpy: alpha must be a complex number/);
    expect(() => cublas.cublasCaxpy(h, 4, 2, 4096, 1, 8192, 1)).toThrow(CudaLibraryError); // a real number: im = 0
    expect(() => cublas.cublasCaxpy(h, 4, { re: 1, im: 2 }, 4096, 1, 8192, 1)).toThrow(CudaLibraryError);
    expect(() => cublas.cublasZaxpy(h, 4, [1, 2], 4096, 1, 8192, 1)).toThrow(CudaLibraryError);
  });

  test('an untyped scalar (const void *, typed by another argument) refuses a plain number with a TypeError', () => {
    const OP_N = cublas.cublasOperation_t.CUBLAS_OP_N;
    const R32F = cublas.cudaDataType.CUDA_R_32F;
    const call = (alpha: unknown) => () =>
      cublas.cublasGemmEx(
        0 as cublas.cublasHandle_t,
        OP_N,
        OP_N,
        4,
        4,
        4,
        alpha as never,
        4096,
        R32F,
        4,
        8192,
        R32F,
        4,
        new Float32Array(1),
        12288,
        R32F,
        4,
        cublas.cublasComputeType_t.CUBLAS_COMPUTE_32F,
        cublas.cublasGemmAlgo_t.CUBLAS_GEMM_DEFAULT,
      );
    expect(call(1)).toThrow(TypeError);
    expect(call(1)).toThrow(/^cublasGemmEx: alpha is a scalar whose C type another argument picks: pass a typed array holding the value/);
    expect(call(new Float32Array([1]))).toThrow(CudaLibraryError);
    // cuDNN's blending factors are host memory: a device object is refused
    expect(() =>
      cudnn.cudnnAddTensor(
        0 as cudnn.cudnnHandle_t,
        { ptr: 4096 } as never,
        0 as cudnn.cudnnTensorDescriptor_t,
        4096,
        new Float32Array(1),
        0 as cudnn.cudnnTensorDescriptor_t,
        8192,
      ),
    ).toThrow(/^cudnnAddTensor: alpha is read from host memory/);
  });
});

describe('memory spaces: device parameters refuse host buffers, host ones refuse device objects', () => {
  test("cuRAND's output, cuBLAS's matrices and NCCL's buffers need device memory", () => {
    const gen = 0 as curand.curandGenerator_t;
    expect(() => curand.curandGenerateUniform(gen, new Float32Array(4) as never, 4)).toThrow(
      new TypeError(
        'curandGenerateUniform: outputPtr needs device memory (a DeviceBuffer, a view of one, or a device address), got a Float32Array of 16 bytes in host memory',
      ),
    );
    expect(() => curand.curandGenerateUniform(gen, { ptr: 4096 }, 4)).toThrow(CudaLibraryError);
    expect(() => curand.curandGenerateUniform(gen, 4096n, 4)).toThrow(CudaLibraryError);
    const OP_N = cublas.cublasOperation_t.CUBLAS_OP_N;
    expect(() => cublas.cublasSgemm(0 as cublas.cublasHandle_t, OP_N, OP_N, 4, 4, 4, 1, 4096, 4, 8192, 4, 0, new Float32Array(16) as never, 4)).toThrow(
      /^cublasSgemm: C needs device memory/,
    );
    expect(() =>
      nccl.ncclAllReduce(
        new Float32Array(4) as never,
        4096,
        4,
        nccl.ncclDataType_t.ncclFloat32,
        nccl.ncclRedOp_t.ncclSum,
        0 as nccl.ncclComm_t,
        0 as nccl.cudaStream_t,
      ),
    ).toThrow(/^ncclAllReduce: sendbuff needs device memory/);
    expect(() => sparse.cusparseCreateDnVec(4, new Float32Array(4) as never, sparse.cudaDataType.CUDA_R_32F)).toThrow(
      /^cusparseCreateDnVec: values needs device memory/,
    );
    // a { ptr } that holds no address is no device memory either
    expect(() => curand.curandGenerateUniform(gen, { ptr: -1 } as never, 4)).toThrow(/^curandGenerateUniform: outputPtr must be device memory/);
  });

  test('the raw layer refuses a host buffer for device memory too (and still takes addresses)', () => {
    expect(() => curandRaw.curandGenerateUniform(0 as curand.curandGenerator_t, new Float32Array(4), 4)).toThrow(
      /^curandGenerateUniform: outputPtr needs device memory/,
    );
    expect(() => curandRaw.curandGenerateUniform(0 as curand.curandGenerator_t, 4096, 4)).toThrow(CudaLibraryError);
  });

  test('cublasGetVector writes host memory: a device object is refused there', () => {
    expect(() => cublas.cublasGetVector(4, 4, 4096, 1, { ptr: 4096 } as never, 1)).toThrow(/^cublasGetVector: y needs host memory/);
    expect(() => cublas.cublasGetVector(4, 4, { ptr: 4096 }, 1, new Float32Array(4), 1)).toThrow(CudaLibraryError);
  });

  test('the helpers: deviceArg returns the address, memoryArg the address or the buffer, hostArg checks the bytes', () => {
    expect(deviceArg('f', 'p', { ptr: 4096 }, false)).toBe(4096);
    expect(deviceArg('f', 'p', 5n, false)).toBe(5n);
    expect(deviceArg('f', 'p', null, true)).toBeNull();
    expect(() => deviceArg('f', 'p', null, false)).toThrow(TypeError);
    expect(() => deviceArg('f', 'p', new ArrayBuffer(8), false)).toThrow(/^f: p needs device memory/);
    const buf = new Float32Array(2);
    expect(memoryArg('f', 'p', buf, false, 8)).toBe(buf);
    expect(memoryArg('f', 'p', { ptr: 64 }, false)).toBe(64);
    expect(() => memoryArg('f', 'p', buf, false, 12)).toThrow(RangeError);
    expect(() => hostArg('f', 'p', buf, false, 12)).toThrow(new RangeError('f: p is a host buffer of 8 bytes, shorter than the 12 bytes the call touches'));
    expect(() => hostArg('f', 'p', { ptr: 64 }, false)).toThrow(/^f: p needs host memory/);
  });
});

describe('scalarArg: values boxed per C type', () => {
  const boxed = (type: string, v: unknown, bytes = 16) => {
    const box = new Uint8Array(bytes);
    expect(scalarArg('f', 'alpha', type, 'either', v, box)).toBe(box);
    return new DataView(box.buffer);
  };
  test('real, integer, complex and half values land in the box, little-endian', () => {
    expect(boxed('f32', 1.5).getFloat32(0, true)).toBe(1.5);
    expect(boxed('f64', -2.25).getFloat64(0, true)).toBe(-2.25);
    expect(boxed('i32', -7).getInt32(0, true)).toBe(-7);
    expect(boxed('u64', 2n ** 63n).getBigUint64(0, true)).toBe(2n ** 63n);
    const c = boxed('c64', { re: 1, im: -2 });
    expect([c.getFloat32(0, true), c.getFloat32(4, true)]).toEqual([1, -2]);
    const r = boxed('c64', 3);
    expect([r.getFloat32(0, true), r.getFloat32(4, true)]).toEqual([3, 0]);
    const z = boxed('c128', [3, 4]);
    expect([z.getFloat64(0, true), z.getFloat64(8, true)]).toEqual([3, 4]);
    expect(boxed('f16', 1).getUint16(0, true)).toBe(0x3c00);
    expect(boxed('bf16', 1).getUint16(0, true)).toBe(0x3f80);
  });
  test('half rounding: to nearest even, overflow to infinity, tiny values to subnormals', () => {
    expect(halfBits(65504)).toBe(0x7bff);
    expect(halfBits(70000)).toBe(0x7c00);
    expect(halfBits(-0.5)).toBe(0xb800);
    expect(halfBits(2 ** -24)).toBe(0x0001);
    // subnormal halves round the whole significand: just above halfway rounds up (numpy's float16 agrees)
    expect(halfBits(2.98048554725483e-8)).toBe(0x0001);
    expect(halfBits(-3.6627057852456346e-5)).toBe(0x8267);
    expect(halfBits(1.9371573216631077e-6)).toBe(0x0021);
    expect(halfBits(2 ** -25)).toBe(0x0000); // exactly halfway: to even
    expect(halfBits(3 * 2 ** -25)).toBe(0x0002);
    expect(halfBits(NaN) & 0x7e00).toBe(0x7e00);
    expect(() => halfBits('1' as never)).toThrow(TypeError);
  });
  test("an integer out of its type's range, a bigint for a float, a bad complex are refused", () => {
    expect(() => scalarArg('f', 'alpha', 'i32', 'either', 2 ** 31, new Uint8Array(8))).toThrow(RangeError);
    expect(() => scalarArg('f', 'alpha', 'f32', 'either', 1n, new Uint8Array(8))).toThrow(RangeError);
    expect(() => scalarArg('f', 'alpha', 'c64', 'either', [1], new Uint8Array(8))).toThrow(TypeError);
    expect(() => scalarArg('f', 'alpha', 'c128', 'either', [1, 2], new Uint8Array(8))).toThrow(/^scalarArg: box must be a Uint8Array with 16 bytes/);
  });
});

describe('crash class 2: result arrays of records are sized by their count', () => {
  test('no function of any module and release returns a record array as one record', () => {
    const single: string[] = [];
    let arrays = 0;
    for (const { release, module, sems } of everyModule()) {
      for (const f of sems) {
        const requested = f.params.some((p) => /^requested\w*Count$/.test(p.name));
        for (const p of f.params) {
          if (p.sem.role === 'resultArray') arrays++;
          if (requested && (p.sem.role === 'outRecord' || p.sem.role === 'inoutRecord')) single.push(`${release} ${module} ${f.name}.${p.name}: ${p.sem.role}`);
        }
      }
    }
    expect(single).toEqual([]);
    expect(arrays).toBeGreaterThanOrEqual(4 * 2 + 2 * 9); // cuBLASLt's two in four releases, cuDNN's nine in the two that have it
  });

  test('cublasLtMatmulAlgoGetHeuristic takes requestedAlgoCount and checks it before any call', () => {
    const h = 0 as lt.cublasLtHandle_t;
    const call = (n: unknown) => () =>
      lt.cublasLtMatmulAlgoGetHeuristic(
        h,
        0 as lt.cublasLtMatmulDesc_t,
        0 as lt.cublasLtMatrixLayout_t,
        0 as lt.cublasLtMatrixLayout_t,
        0 as lt.cublasLtMatrixLayout_t,
        0 as lt.cublasLtMatrixLayout_t,
        0 as lt.cublasLtMatmulPreference_t,
        n as number,
      );
    expect(call(-1)).toThrow(/^cublasLtMatmulAlgoGetHeuristic: requestedAlgoCount = -1 is not a buffer length/);
    expect(call(1.5)).toThrow(RangeError);
    expect(call(8)).toThrow(CudaLibraryError);
  });
});

describe('cuBLASLt attributes: typed values, the size derived', () => {
  const desc = 0 as lt.cublasLtMatmulDesc_t;
  const A = lt.cublasLtMatmulDescAttributes_t;
  test('each attribute takes its own C type', () => {
    expect(() => lt.cublasLtMatmulDescSetAttribute(desc, A.CUBLASLT_MATMUL_DESC_TRANSA, 1)).toThrow(CudaLibraryError);
    expect(() => lt.cublasLtMatmulDescSetAttribute(desc, A.CUBLASLT_MATMUL_DESC_TRANSA, 1.5)).toThrow(
      new RangeError('cublasLtMatmulDescSetAttribute: buf must be an integer in [-2**31, 2**31), got 1.5'),
    );
    expect(() => lt.cublasLtMatmulDescSetAttribute(desc, A.CUBLASLT_MATMUL_DESC_EPILOGUE, -1)).toThrow(/must be an integer in \[0, 2\*\*32\)/);
    expect(() => lt.cublasLtMatmulDescSetAttribute(desc, A.CUBLASLT_MATMUL_DESC_BIAS_POINTER, { ptr: 4096 })).toThrow(CudaLibraryError);
    expect(() => lt.cublasLtMatmulDescSetAttribute(desc, A.CUBLASLT_MATMUL_DESC_BIAS_POINTER, new Float32Array(4) as never)).toThrow(
      /^cublasLtMatmulDescSetAttribute: buf needs device memory/,
    );
    expect(() => lt.cublasLtMatmulDescSetAttribute(desc, 9999 as never, 1)).toThrow(
      new RangeError('cublasLtMatmulDescSetAttribute: attr 9999 has no known value type'),
    );
    const L = lt.cublasLtMatrixLayoutAttribute_t;
    expect(() => lt.cublasLtMatrixLayoutSetAttribute(0 as lt.cublasLtMatrixLayout_t, L.CUBLASLT_MATRIX_LAYOUT_LD, -5n)).toThrow(CudaLibraryError);
    expect(() => lt.cublasLtMatrixLayoutSetAttribute(0 as lt.cublasLtMatrixLayout_t, L.CUBLASLT_MATRIX_LAYOUT_ROWS, -5)).toThrow(RangeError);
    const P = lt.cublasLtMatmulPreferenceAttributes_t;
    expect(() => lt.cublasLtMatmulPreferenceSetAttribute(0 as lt.cublasLtMatmulPreference_t, P.CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, 1 << 22)).toThrow(
      CudaLibraryError,
    );
  });

  test('cuBLASLt exports the enums its attribute values take (cublasOperation_t, cublasFillMode_t), in every release', () => {
    expect(lt.cublasOperation_t.CUBLAS_OP_T).toBe(1);
    expect(lt.cublasFillMode_t.CUBLAS_FILL_MODE_FULL).toBe(2);
    for (const release of RELEASES)
      expect(readIR(root, release, 'cublaslt').enums.map((e) => e.name)).toEqual(expect.arrayContaining(['enum cublasOperation_t', 'enum cublasFillMode_t']));
    expect(() => lt.cublasLtMatmulDescSetAttribute(desc, A.CUBLASLT_MATMUL_DESC_TRANSB, lt.cublasOperation_t.CUBLAS_OP_T)).toThrow(CudaLibraryError);
  });

  test('the listing shows the size derived and the size written read inside', () => {
    const sems = resolveModule(new TypeModel(readIR(root, '13.0', 'cublaslt'), findModule('cublaslt')!));
    const get = sems.find((f) => f.name === 'cublasLtMatmulDescGetAttribute')!;
    expect(get.params.map((p) => p.sem.role)).toEqual(['value', 'value', 'attrValue', 'attrSize', 'countOut']);
    const mm = sems.find((f) => f.name === 'cublasLtMatmul')!;
    expect(mm.params.find((p) => p.name === 'algo')!.sem).toEqual({ role: 'inRecord', record: 'cublasLtMatmulAlgo_t', nullable: true });
  });
});

describe('direction, space and count of data pointers, as the model states them', () => {
  test('a non-const pointer never reads as "in" unless a reviewed override says so', () => {
    const wrong: string[] = [];
    for (const { release, module, model, sems } of everyModule()) {
      for (const f of sems) {
        const decl = model.ir.functions.find((x) => x.name === f.name)!;
        f.params.forEach((p, i) => {
          const kind = model.kind(decl.params[i].type);
          if (p.sem.role !== 'pointer') return;
          if (!p.sem.dir) wrong.push(`${release} ${module} ${f.name}.${p.name}: no direction`);
          if (kind.k === 'pointer' && !kind.constTarget && p.sem.dir === 'in' && p.source !== 'override')
            wrong.push(`${release} ${module} ${f.name}.${p.name}: in`);
        });
      }
    }
    expect(wrong).toEqual([]);
  });

  test('units: cusparseCreateDnVec counts elements of valueType, cuRAND num elements, NCCL count elements of datatype, cuSOLVER Lwork elements', () => {
    const sem = (module: string, fn: string, param: string) =>
      resolveModule(new TypeModel(readIR(root, '13.0', module), findModule(module)!))
        .find((f) => f.name === fn)!
        .params.find((p) => p.name === param)!.sem;
    expect(sem('cusparse', 'cusparseCreateDnVec', 'values')).toMatchObject({
      role: 'pointer',
      space: 'device',
      count: { param: 'size', unit: 'elements', typeParam: 'valueType' },
    });
    expect(sem('curand', 'curandGenerateNormal', 'outputPtr')).toMatchObject({
      space: 'device',
      dir: 'out',
      count: { param: 'n', unit: 'elements', elem: 'float', elemBytes: 4 },
    });
    expect(sem('nccl', 'ncclAllReduce', 'recvbuff')).toMatchObject({
      space: 'device',
      dir: 'out',
      count: { param: 'count', unit: 'elements', typeParam: 'datatype' },
    });
    expect(sem('cusolver', 'cusolverDnDpotrf', 'Workspace')).toMatchObject({
      space: 'device',
      count: { param: 'Lwork', unit: 'elements', elem: 'double', elemBytes: 8 },
    });
    expect(sem('cusolver', 'cusolverDnXpotrf', 'bufferOnHost')).toMatchObject({ space: 'host', count: { param: 'workspaceInBytesOnHost', unit: 'bytes' } });
    expect(sem('cublaslt', 'cublasLtMatmul', 'workspace')).toMatchObject({ space: 'device', count: { param: 'workspaceSizeInBytes', unit: 'bytes' } });
    // the sizes the _bufferSize calls return say their unit
    expect(sem('cusolver', 'cusolverDnSpotrf_bufferSize', 'Lwork')).toEqual({ role: 'out', elem: { t: 'int', bits: 32, signed: true }, unit: 'elements' });
    expect(sem('cusolver', 'cusolverDnXpotrf_bufferSize', 'workspaceInBytesOnDevice')).toMatchObject({ role: 'out', unit: 'bytes' });
    expect(sem('cusparse', 'cusparseSpMV_bufferSize', 'bufferSize')).toMatchObject({ role: 'out', unit: 'bytes' });
  });

  test("a host buffer is checked in the count's unit: elements times the element size", () => {
    // ncclCommInitAll writes ndev communicators (8 bytes each) into host memory
    expect(() => nccl.ncclCommInitAll(new BigUint64Array(1), 2, new Int32Array([0, 1]))).toThrow(
      new RangeError('ncclCommInitAll: comm is a host buffer of 8 bytes, shorter than the 16 bytes the call touches'),
    );
  });
});

/**
 * Type-level checks, compiled by `npm run typecheck` and never run: each `@ts-expect-error` line must be
 * a type error (TypeScript fails on an unused one). Brands keep one library's handles and descriptors
 * from standing for another's; scalars and device memory take what their semantics say.
 */
export function typeLevelChecks(
  blasHandle: cublas.cublasHandle_t,
  matmulDesc: lt.cublasLtMatmulDesc_t,
  layout: lt.cublasLtMatrixLayout_t,
  plan: import('../generated/13.0/cufft').cufftHandle,
): void {
  const cufft = require('../generated/13.0/cufft') as typeof import('../generated/13.0/cufft');
  lt.cublasLtMatrixLayoutDestroy(layout);
  // @ts-expect-error a matmul descriptor is no matrix layout
  lt.cublasLtMatrixLayoutDestroy(matmulDesc);
  cufft.cufftDestroy(plan);
  // @ts-expect-error a cuBLAS handle is no cuFFT plan
  cufft.cufftDestroy(blasHandle);
  // @ts-expect-error a plain number is no cuFFT plan either
  cufft.cufftDestroy(3);
  const OP_N = cublas.cublasOperation_t.CUBLAS_OP_N;
  cublas.cublasSgemm(blasHandle, OP_N, OP_N, 1, 1, 1, 1, { ptr: 4096 }, 1, 4096, 1, 0, 4096n, 1);
  // @ts-expect-error a host typed array is no device memory
  cublas.cublasSgemm(blasHandle, OP_N, OP_N, 1, 1, 1, 1, new Float32Array(1), 1, 4096, 1, 0, 4096, 1);
  cublas.cublasCaxpy(blasHandle, 1, { re: 1, im: 0 }, 4096, 1, 4096, 1);
  // @ts-expect-error an untyped scalar refuses a plain number
  lt.cublasLtMatmul(0 as lt.cublasLtHandle_t, matmulDesc, 1, 4096, layout, 4096, layout, 0, 4096, layout, 4096, layout, null, null, 0, null);
  const results: lt.cublasLtMatmulHeuristicResult_t[] = lt.cublasLtMatmulAlgoGetHeuristic(
    0 as lt.cublasLtHandle_t,
    matmulDesc,
    layout,
    layout,
    layout,
    layout,
    0 as lt.cublasLtMatmulPreference_t,
    4,
  );
  lt.cublasLtMatmul(
    0 as lt.cublasLtHandle_t,
    matmulDesc,
    new Float32Array([1]),
    4096,
    layout,
    4096,
    layout,
    new Float32Array([0]),
    4096,
    layout,
    4096,
    layout,
    results[0].algo,
    null,
    0,
    null,
  );
  const data: (number | bigint)[] = results[0].algo.data;
  void data;
}
