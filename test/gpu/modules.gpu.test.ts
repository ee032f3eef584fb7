// GPU smoke tests, one per CUDA library module: each proves its generated 13.0 binding end to end on a
// real GPU (an H100 or H200). Memory goes through the driver's typed layer; each library through its own.
// Device addresses pass as the numbers cuMemAlloc returns (or `{ ptr }` objects); typed scalars
// (alpha, beta) as numbers; `const void *` scalars as typed arrays holding the value.
import * as cu from '../../generated/13.0/driver';
import * as nvrtc from '../../generated/13.0/nvrtc';
import * as jit from '../../generated/13.0/nvjitlink';
import * as fatbin from '../../generated/13.0/nvfatbin';
import * as cublas from '../../generated/13.0/cublas';
import * as cublaslt from '../../generated/13.0/cublaslt';
import * as curand from '../../generated/13.0/curand';
import * as cufft from '../../generated/13.0/cufft';
import * as sp from '../../generated/13.0/cusparse';
import * as sol from '../../generated/13.0/cusolver';
import * as nvml from '../../generated/13.0/nvml';
import * as cufile from '../../generated/13.0/cufile';
import * as cupti from '../../generated/13.0/cupti';
import * as cudnn from '../../generated/13.0/cudnn';
import * as nccl from '../../generated/13.0/nccl';
import { CudaError } from '../../support';
import { describeGpu } from './gpu-env';

// NCCL: no NVLink SHARP / multicast on the lent machines
process.env.NCCL_NVLS_ENABLE = '0';

const KERNEL = `extern "C" __global__ void saxpy(float a, const float *x, float *y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}`;

function upload(data: ArrayBufferView): cu.CUdeviceptr {
  const ptr = cu.cuMemAlloc(data.byteLength);
  cu.cuMemcpyHtoD(ptr, data, data.byteLength);
  return ptr;
}

function download<T extends Float32Array | Int32Array>(into: T, ptr: cu.CUdeviceptr): T {
  cu.cuMemcpyDtoH(into, ptr, into.byteLength);
  return into;
}

/** Compiles KERNEL with NVRTC; throws with the program log on error. */
function compile(options: string[]): nvrtc.nvrtcProgram {
  const prog = nvrtc.nvrtcCreateProgram(KERNEL, 'saxpy.cu', [], null);
  try {
    nvrtc.nvrtcCompileProgram(prog, options);
  } catch (e) {
    const size = nvrtc.nvrtcGetProgramLogSize(prog);
    const log = new Uint8Array(size);
    nvrtc.nvrtcGetProgramLog(prog, log);
    throw new Error(`${(e as Error).message}\n${Buffer.from(log).toString('utf8')}`);
  }
  return prog;
}

describeGpu('CUDA library modules (13.0 bindings)', () => {
  let dev: number;
  beforeAll(() => {
    cu.cuInit(0);
    dev = cu.cuDeviceGet(0);
    cu.cuCtxSetCurrent(cu.cuDevicePrimaryCtxRetain(dev));
  });
  afterAll(() => {
    cu.cuDevicePrimaryCtxRelease(dev);
  });

  test('every declared function: how many the installed libraries export', () => {
    // Reports the declared-but-not-exported functions of each module (for the catalog's notExported).
    const mods = { nvrtc, nvjitlink: jit, nvfatbin: fatbin, cublas, cublaslt, curand, cufft, cusparse: sp, cusolver: sol, nvml, cufile, cupti, cudnn, nccl };
    const ir = require('../../generator/ir/store') as typeof import('../../generator/ir/store');
    const root = require('node:path').join(__dirname, '..', '..');
    for (const [name, mod] of Object.entries(mods)) {
      let lib;
      try {
        lib = mod.binder.library();
      } catch (e) {
        console.log(`${name}: library not loadable: ${(e as Error).message.split('\n')[0]}`);
        continue;
      }
      const missing: string[] = [];
      const fns = ir.readIR(root, '13.0', name).functions;
      for (const f of fns) {
        try {
          lib.func(f.symbol, 'void', []);
        } catch {
          missing.push(f.name);
        }
      }
      console.log(`${name}: ${fns.length - missing.length} of ${fns.length} exported${missing.length ? `; not exported: ${missing.join(', ')}` : ''}`);
    }
  });

  test('NVRTC compiles a kernel to PTX and CUBIN', () => {
    const [major, minor] = [nvrtc.nvrtcVersion().major, nvrtc.nvrtcVersion().minor];
    expect(major).toBe(13);
    expect(minor).toBeGreaterThanOrEqual(0);
    const ptxProg = compile(['--gpu-architecture=compute_90']);
    const ptx = new Uint8Array(nvrtc.nvrtcGetPTXSize(ptxProg));
    nvrtc.nvrtcGetPTX(ptxProg, ptx);
    expect(Buffer.from(ptx).toString('latin1')).toMatch(/\.entry saxpy/);
    nvrtc.nvrtcDestroyProgram(ptxProg);

    const cubinProg = compile(['--gpu-architecture=sm_90']);
    const cubin = new Uint8Array(nvrtc.nvrtcGetCUBINSize(cubinProg));
    nvrtc.nvrtcGetCUBIN(cubinProg, cubin);
    expect([...cubin.subarray(0, 4)]).toEqual([0x7f, 0x45, 0x4c, 0x46]); // ELF
    nvrtc.nvrtcDestroyProgram(cubinProg);
    // a compile error reports NVRTC_ERROR_COMPILATION through NvrtcError
    const bad = nvrtc.nvrtcCreateProgram('this is not C++', 'bad.cu', [], null);
    expect(() => nvrtc.nvrtcCompileProgram(bad, [])).toThrow(nvrtc.NvrtcError);
    nvrtc.nvrtcDestroyProgram(bad);
  });

  test('nvJitLink links LTO-IR produced by NVRTC with -dlto', () => {
    const prog = compile(['--gpu-architecture=sm_90', '-dlto', '--relocatable-device-code=true']);
    const ltoir = new Uint8Array(nvrtc.nvrtcGetLTOIRSize(prog));
    nvrtc.nvrtcGetLTOIR(prog, ltoir);
    nvrtc.nvrtcDestroyProgram(prog);
    expect(ltoir.length).toBeGreaterThan(0);

    const opts = ['-arch=sm_90', '-lto'];
    const h = jit.nvJitLinkCreate(opts);
    try {
      jit.nvJitLinkAddData(h, jit.nvJitLinkInputType.NVJITLINK_INPUT_LTOIR, ltoir, ltoir.length, 'saxpy');
      try {
        jit.nvJitLinkComplete(h);
      } catch (e) {
        const log = new Uint8Array(jit.nvJitLinkGetErrorLogSize(h));
        jit.nvJitLinkGetErrorLog(h, log);
        throw new Error(`${(e as Error).message}\n${Buffer.from(log).toString('utf8')}`);
      }
      const cubin = new Uint8Array(jit.nvJitLinkGetLinkedCubinSize(h));
      jit.nvJitLinkGetLinkedCubin(h, cubin);
      expect([...cubin.subarray(0, 4)]).toEqual([0x7f, 0x45, 0x4c, 0x46]);
      // the linked cubin loads and has the kernel
      const mod = cu.cuModuleLoadData(cubin);
      expect(cu.cuModuleGetFunction(mod, 'saxpy')).not.toBe(0);
      cu.cuModuleUnload(mod);
    } finally {
      jit.nvJitLinkDestroy(h);
    }
  });

  test('nvFatbin builds a fatbin from PTX and CUBIN', () => {
    const p1 = compile(['--gpu-architecture=compute_90']);
    const ptx = new Uint8Array(nvrtc.nvrtcGetPTXSize(p1));
    nvrtc.nvrtcGetPTX(p1, ptx);
    nvrtc.nvrtcDestroyProgram(p1);
    const p2 = compile(['--gpu-architecture=sm_90']);
    const cubin = new Uint8Array(nvrtc.nvrtcGetCUBINSize(p2));
    nvrtc.nvrtcGetCUBIN(p2, cubin);
    nvrtc.nvrtcDestroyProgram(p2);

    const h = fatbin.nvFatbinCreate([]);
    try {
      fatbin.nvFatbinAddPTX(h, ptx, ptx.length, '90', 'saxpy_ptx', '');
      fatbin.nvFatbinAddCubin(h, cubin, cubin.length, '90', 'saxpy_cubin');
      const out = new Uint8Array(fatbin.nvFatbinSize(h));
      fatbin.nvFatbinGet(h, out);
      expect(out.length).toBeGreaterThan(cubin.length);
      expect(new DataView(out.buffer).getUint32(0, true)).toBe(0xba55ed50); // fatbin magic
      const mod = cu.cuModuleLoadData(out);
      cu.cuModuleUnload(mod);
    } finally {
      fatbin.nvFatbinDestroy(h);
    }
  });

  test('cuBLAS SGEMM 256x256 equals a CPU reference (max |error| ≤ 1e-3)', () => {
    const n = 256;
    const rnd = (k: number) => Math.sin(k * 12.9898) * 0.5; // deterministic values in [-0.5, 0.5]
    const A = new Float32Array(n * n).map((_, i) => rnd(i));
    const B = new Float32Array(n * n).map((_, i) => rnd(i + 7919));
    const dA = upload(A);
    const dB = upload(B);
    const dC = cu.cuMemAlloc(n * n * 4);
    const h = cublas.cublasCreate();
    try {
      const OP_N = cublas.cublasOperation_t.CUBLAS_OP_N;
      cublas.cublasSgemm(h, OP_N, OP_N, n, n, n, 1, dA, n, dB, n, 0, dC, n); // alpha = 1, beta = 0: values
      cu.cuCtxSynchronize();
      const C = download(new Float32Array(n * n), dC);
      let maxErr = 0;
      for (let j = 0; j < n; j++) {
        for (let i = 0; i < n; i++) {
          let s = 0;
          for (let k = 0; k < n; k++) s += A[k * n + i] * B[j * n + k]; // column-major
          maxErr = Math.max(maxErr, Math.abs(s - C[j * n + i]));
        }
      }
      console.log(`cuBLAS SGEMM 256x256: max |error| vs CPU (fp64 accumulate) = ${maxErr.toExponential(2)}`);
      expect(maxErr).toBeLessThanOrEqual(1e-3);
      expect(cublas.cublasGetVersion(h)).toBeGreaterThanOrEqual(130000);
    } finally {
      cublas.cublasDestroy(h);
      [dA, dB, dC].forEach((p) => cu.cuMemFree(p));
    }
  });

  test('cuBLASLt: handle and version', () => {
    const h = cublaslt.cublasLtCreate();
    expect(cublaslt.cublasLtGetVersion()).toBeGreaterThanOrEqual(130000);
    cublaslt.cublasLtDestroy(h);
  });

  test("cuBLASLt: D = A·B + bias through typed attributes, the heuristic's records and its algo as decoded", () => {
    const [m, n, k] = [64, 48, 32];
    const rnd = (i: number) => Math.sin(i * 0.37) * 0.5;
    const A = new Float32Array(m * k).map((_, i) => rnd(i)); // column-major m×k
    const B = new Float32Array(k * n).map((_, i) => rnd(i + 101)); // k×n
    const bias = new Float32Array(m).map((_, i) => i / m);
    const [dA, dB, dBias] = [upload(A), upload(B), upload(bias)];
    const dD = cu.cuMemAlloc(m * n * 4);
    const workBytes = 1 << 22;
    const dWork = cu.cuMemAlloc(workBytes);
    const lt = cublaslt;
    const h = lt.cublasLtCreate();
    const desc = lt.cublasLtMatmulDescCreate(lt.cublasComputeType_t.CUBLAS_COMPUTE_32F, lt.cudaDataType_t.CUDA_R_32F);
    const R32F = lt.cudaDataType_t.CUDA_R_32F;
    const [aL, bL, dL] = [
      lt.cublasLtMatrixLayoutCreate(R32F, m, k, m),
      lt.cublasLtMatrixLayoutCreate(R32F, k, n, k),
      lt.cublasLtMatrixLayoutCreate(R32F, m, n, m),
    ];
    const pref = lt.cublasLtMatmulPreferenceCreate();
    const D = lt.cublasLtMatmulDescAttributes_t;
    try {
      lt.cublasLtMatmulDescSetAttribute(desc, D.CUBLASLT_MATMUL_DESC_TRANSA, lt.cublasOperation_t.CUBLAS_OP_N); // re-exported by cuBLASLt
      lt.cublasLtMatmulDescSetAttribute(desc, D.CUBLASLT_MATMUL_DESC_EPILOGUE, lt.cublasLtEpilogue_t.CUBLASLT_EPILOGUE_BIAS);
      lt.cublasLtMatmulDescSetAttribute(desc, D.CUBLASLT_MATMUL_DESC_BIAS_POINTER, dBias);
      lt.cublasLtMatmulPreferenceSetAttribute(pref, lt.cublasLtMatmulPreferenceAttributes_t.CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workBytes);
      expect(lt.cublasLtMatmulDescGetAttribute(desc, D.CUBLASLT_MATMUL_DESC_EPILOGUE)).toBe(lt.cublasLtEpilogue_t.CUBLASLT_EPILOGUE_BIAS);
      expect(lt.cublasLtMatmulDescGetAttribute(desc, D.CUBLASLT_MATMUL_DESC_BIAS_POINTER)).toBe(dBias);
      expect(lt.cublasLtMatrixLayoutGetAttribute(aL, lt.cublasLtMatrixLayoutAttribute_t.CUBLASLT_MATRIX_LAYOUT_ROWS)).toBe(BigInt(m));
      // eight asked for: the array is allocated for eight and cut at the count the library reports
      const results = lt.cublasLtMatmulAlgoGetHeuristic(h, desc, aL, bL, dL, dL, pref, 8);
      console.log(`cuBLASLt heuristic: ${results.length} of 8 results, first workspace ${results[0]?.workspaceSize} B`);
      expect(results.length).toBeGreaterThanOrEqual(1);
      expect(results.length).toBeLessThanOrEqual(8);
      expect(results.every((r) => r.state === 0)).toBe(true);
      // alpha and beta: const void * typed by the scale type (float here), so typed arrays
      lt.cublasLtMatmul(h, desc, new Float32Array([1]), dA, aL, dB, bL, new Float32Array([0]), dD, dL, dD, dL, results[0].algo, dWork, workBytes, null);
      cu.cuCtxSynchronize();
      const out = download(new Float32Array(m * n), dD);
      let maxErr = 0;
      for (let j = 0; j < n; j++) {
        for (let i = 0; i < m; i++) {
          let s = bias[i];
          for (let q = 0; q < k; q++) s += A[q * m + i] * B[j * k + q];
          maxErr = Math.max(maxErr, Math.abs(s - out[j * m + i]));
        }
      }
      expect(maxErr).toBeLessThan(1e-4);
    } finally {
      lt.cublasLtMatmulPreferenceDestroy(pref);
      [aL, bL, dL].forEach((l) => lt.cublasLtMatrixLayoutDestroy(l));
      lt.cublasLtMatmulDescDestroy(desc);
      lt.cublasLtDestroy(h);
      [dA, dB, dBias, dD, dWork].forEach((p) => cu.cuMemFree(p));
    }
  });

  test('cuRAND: 1e6 uniforms have mean within 1e-3 of 0.5', () => {
    const count = 1_000_000;
    const d = cu.cuMemAlloc(count * 4);
    const gen = curand.curandCreateGenerator(curand.curandRngType_t.CURAND_RNG_PSEUDO_DEFAULT);
    try {
      curand.curandSetPseudoRandomGeneratorSeed(gen, 1234);
      curand.curandGenerateUniform(gen, d, count);
      cu.cuCtxSynchronize();
      const xs = download(new Float32Array(count), d);
      let sum = 0;
      for (const x of xs) sum += x;
      const mean = sum / count;
      console.log(`cuRAND: mean of ${count} uniforms = ${mean}`);
      expect(Math.abs(mean - 0.5)).toBeLessThan(1e-3);
      expect(xs.every((x) => x > 0 && x <= 1)).toBe(true);
    } finally {
      curand.curandDestroyGenerator(gen);
      cu.cuMemFree(d);
    }
  });

  test('cuFFT: forward C2C of a cosine puts N/2 in bins k0 and N-k0', () => {
    const N = 1024;
    const k0 = 17;
    const signal = new Float32Array(2 * N);
    for (let i = 0; i < N; i++) signal[2 * i] = Math.cos((2 * Math.PI * k0 * i) / N);
    const d = upload(signal);
    const plan = cufft.cufftPlan1d(N, cufft.cufftType.CUFFT_C2C, 1);
    try {
      cufft.cufftExecC2C(plan, d, d, cufft.CUFFT_FORWARD);
      cu.cuCtxSynchronize();
      const out = download(new Float32Array(2 * N), d);
      const mag = (k: number) => Math.hypot(out[2 * k], out[2 * k + 1]);
      expect(mag(k0)).toBeCloseTo(N / 2, 1);
      expect(mag(N - k0)).toBeCloseTo(N / 2, 1);
      let other = 0;
      for (let k = 0; k < N; k++) if (k !== k0 && k !== N - k0) other = Math.max(other, mag(k));
      expect(other).toBeLessThan(1e-2);
    } finally {
      cufft.cufftDestroy(plan);
      cu.cuMemFree(d);
    }
  });

  test('cuSPARSE: CSR SpMV equals a CPU reference', () => {
    // 4x4: [[1,0,2,0],[0,3,0,0],[4,0,5,6],[0,0,0,7]]
    const rowPtr = new Int32Array([0, 2, 3, 6, 7]);
    const colInd = new Int32Array([0, 2, 1, 0, 2, 3, 3]);
    const vals = new Float32Array([1, 2, 3, 4, 5, 6, 7]);
    const x = new Float32Array([1, 2, 3, 4]);
    const expected = new Float32Array(4);
    for (let r = 0; r < 4; r++) for (let k = rowPtr[r]; k < rowPtr[r + 1]; k++) expected[r] += vals[k] * x[colInd[k]];
    const bufs = [upload(rowPtr), upload(colInd), upload(vals), upload(x), cu.cuMemAlloc(16)];
    const [dRow, dCol, dVal, dX, dY] = bufs;
    const h = sp.cusparseCreate();
    const I32 = sp.cusparseIndexType_t.CUSPARSE_INDEX_32I;
    const R32F = sp.cudaDataType.CUDA_R_32F;
    const A = sp.cusparseCreateCsr(4, 4, 7, dRow, dCol, dVal, I32, I32, sp.cusparseIndexBase_t.CUSPARSE_INDEX_BASE_ZERO, R32F);
    const vx = sp.cusparseCreateDnVec(4, dX, R32F);
    const vy = sp.cusparseCreateDnVec(4, dY, R32F);
    const alpha = new Float32Array([1]);
    const beta = new Float32Array([0]);
    const op = sp.cusparseOperation_t.CUSPARSE_OPERATION_NON_TRANSPOSE;
    const alg = sp.cusparseSpMVAlg_t.CUSPARSE_SPMV_ALG_DEFAULT;
    const size = sp.cusparseSpMV_bufferSize(h, op, alpha, A, vx, beta, vy, R32F, alg);
    const work = cu.cuMemAlloc(Math.max(size, 1));
    try {
      sp.cusparseSpMV(h, op, alpha, A, vx, beta, vy, R32F, alg, work);
      cu.cuCtxSynchronize();
      expect(download(new Float32Array(4), dY)).toEqual(expected);
    } finally {
      sp.cusparseDestroySpMat(A);
      sp.cusparseDestroyDnVec(vx);
      sp.cusparseDestroyDnVec(vy);
      sp.cusparseDestroy(h);
      [...bufs, work].forEach((p) => cu.cuMemFree(p));
    }
  });

  test('cuSOLVER: getrf + getrs solve Ax = b', () => {
    const n = 3;
    const A = new Float32Array([4, 2, 1, /* col 1 */ 1, 5, 2, /* col 2 */ 2, 1, 6]); // column-major, diagonally dominant
    const xTrue = [1, -2, 3];
    const b = new Float32Array(n);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) b[i] += A[j * n + i] * xTrue[j];
    const dA = upload(A);
    const dB = upload(b);
    const dIpiv = cu.cuMemAlloc(n * 4);
    const dInfo = cu.cuMemAlloc(4);
    const h = sol.cusolverDnCreate();
    const lwork = sol.cusolverDnSgetrf_bufferSize(h, n, n, dA, n);
    const dWork = cu.cuMemAlloc(Math.max(lwork, 1) * 4);
    try {
      sol.cusolverDnSgetrf(h, n, n, dA, n, dWork, dIpiv, dInfo);
      sol.cusolverDnSgetrs(h, sol.cublasOperation_t.CUBLAS_OP_N, n, 1, dA, n, dIpiv, dB, n, dInfo);
      cu.cuCtxSynchronize();
      expect(download(new Int32Array(1), dInfo)[0]).toBe(0);
      const x = download(new Float32Array(n), dB);
      x.forEach((v, i) => expect(v).toBeCloseTo(xTrue[i], 4));
    } finally {
      sol.cusolverDnDestroy(h);
      [dA, dB, dIpiv, dInfo, dWork].forEach((p) => cu.cuMemFree(p));
    }
  });

  test('NVML reports the same GPU as the driver: name and memory', () => {
    nvml.nvmlInit();
    try {
      expect(nvml.nvmlDeviceGetCount()).toBeGreaterThanOrEqual(1);
      const d = nvml.nvmlDeviceGetHandleByIndex(0);
      const name = nvml.nvmlDeviceGetName(d, nvml.NVML_DEVICE_NAME_V2_BUFFER_SIZE);
      const mem = nvml.nvmlDeviceGetMemoryInfo(d);
      console.log(`NVML: ${name}, ${Number(mem.total) / 2 ** 30} GiB total, ${Number(mem.used) / 2 ** 30} GiB used`);
      // One GPU on the lent machines: NVML's index 0 is the driver's device 0.
      expect(name).toBe(cu.cuDeviceGetName(256, dev));
      expect(Number(mem.total)).toBeGreaterThanOrEqual(cu.cuDeviceTotalMem(dev));
      expect(Number(mem.total)).toBeLessThan(cu.cuDeviceTotalMem(dev) + 2 * 2 ** 30);
      expect(() => nvml.nvmlDeviceGetHandleByIndex(1_000_000)).toThrow(nvml.NvmlError);
    } finally {
      nvml.nvmlShutdown();
    }
  });

  test('cuDNN version and one activation forward (ReLU)', () => {
    const version = cudnn.cudnnGetVersion();
    console.log(`cuDNN version ${version}`);
    expect(version).toBeGreaterThanOrEqual(90000);
    const n = 8;
    const x = new Float32Array([-3, -2, -1, 0, 1, 2, 3, 4]);
    const dX = upload(x);
    const dY = cu.cuMemAlloc(n * 4);
    const h = cudnn.cudnnCreate();
    const desc = cudnn.cudnnCreateTensorDescriptor();
    const act = cudnn.cudnnCreateActivationDescriptor();
    try {
      cudnn.cudnnSetTensor4dDescriptor(desc, cudnn.cudnnTensorFormat_t.CUDNN_TENSOR_NCHW, cudnn.cudnnDataType_t.CUDNN_DATA_FLOAT, 1, 1, 1, n);
      cudnn.cudnnSetActivationDescriptor(act, cudnn.cudnnActivationMode_t.CUDNN_ACTIVATION_RELU, cudnn.cudnnNanPropagation_t.CUDNN_NOT_PROPAGATE_NAN, 0);
      cudnn.cudnnActivationForward(h, act, new Float32Array([1]), desc, dX, new Float32Array([0]), desc, dY);
      cu.cuCtxSynchronize();
      expect([...download(new Float32Array(n), dY)]).toEqual([0, 0, 0, 0, 1, 2, 3, 4]);
    } finally {
      cudnn.cudnnDestroyActivationDescriptor(act);
      cudnn.cudnnDestroyTensorDescriptor(desc);
      cudnn.cudnnDestroy(h);
      cu.cuMemFree(dX);
      cu.cuMemFree(dY);
    }
  });

  test('NCCL all-reduce (sum) on one GPU', () => {
    console.log(`NCCL version ${nccl.ncclGetVersion()}`);
    const comms = new BigUint64Array(1); // one communicator per device
    nccl.ncclCommInitAll(comms, 1, new Int32Array([0]));
    const comm = Number(comms[0]) as nccl.ncclComm_t;
    const n = 1024;
    const src = new Float32Array(n).map((_, i) => i);
    const dS = upload(src);
    const dR = cu.cuMemAlloc(n * 4);
    try {
      nccl.ncclAllReduce(dS, dR, n, nccl.ncclDataType_t.ncclFloat32, nccl.ncclRedOp_t.ncclSum, comm, 0 as nccl.cudaStream_t);
      cu.cuCtxSynchronize();
      expect(download(new Float32Array(n), dR)).toEqual(src); // one rank: the sum is the input
    } finally {
      nccl.ncclCommDestroy(comm);
      cu.cuMemFree(dS);
      cu.cuMemFree(dR);
    }
  });

  test('CUPTI version', () => {
    const v = cupti.cuptiGetVersion();
    console.log(`CUPTI API version ${v} (headers: ${cupti.CUPTI_API_VERSION})`);
    expect(v).toBeGreaterThan(0);
    expect(cupti.CUPTI_API_VERSION).toBeGreaterThan(0); // the headers' version, for comparison in the log
  });

  test('cuFile: driver open, or its clear error', () => {
    try {
      cufile.cuFileDriverOpen();
      console.log('cuFile driver opened');
      cufile.cuFileDriverClose();
    } catch (e) {
      // no GPUDirect Storage (nvidia-fs) on the machine: a CufileError naming the function and status,
      // or a CudaLibraryError listing every path tried
      expect(e).toBeInstanceOf(CudaError);
      console.log(`cuFile: ${(e as Error).message.split('\n')[0]}`);
      if (e instanceof cufile.CufileError) {
        expect(e.func).toBe('cuFileDriverOpen');
        expect(e.name).toMatch(/^CU_FILE_/);
      }
    }
  });
});
