// The Blas object's GEMM against the same cuBLAS call made from C in the same process, and CuPy:
// `npx tsx bench/math-blas.ts` (GPU machine; gcc builds bench/native/math-blas.c, python3 runs CuPy if installed).
// Rows (issue 43): gemm_64_f32 (host path: objects ≤ 1.05× C; beside it Matmul.execute, cuBLASLt planned once,
// against its very cublasLtMatmul call from C, `C Lt`), gemm_4096_f32 and gemm_4096_f16 (throughput: ≤ 1.02×;
// f16 goes through cublasGemmEx with f32 compute on both sides). A pass is `ops` calls then a stream synchronize,
// timed around the whole pass (C's loop runs inside the shared library on a handle made once, as the object's is).
// Env: BENCH_SCALE (ops), CUDA_HOME (default /usr/local/cuda), PYTHON, CC.
import { DeviceBuffer, Stream, type StridedView } from '../src';
import { Blas, Matmul, matrix } from '../src/math';
import { REPS, scaled } from './common';
import { type MathRow, type Pass, buildNative, cupyRows, ok, runBench, runMath, startGpuBench } from './math-common';

interface NativeBlas {
  create(stream: number): number;
  /** `ops` GEMMs (f32: cublasSgemm; f16: cublasGemmEx), then a synchronize. */
  pass(state: number, half: number, n: number, a: number, b: number, c: number, ops: number, stream: number): number;
  /** The Matmul's own cublasLtMatmul (handle, descriptor, layouts, algorithm, workspace) `ops` times from C, then a synchronize. */
  ltPass(...args: (number | Uint8Array)[]): number;
  destroy(state: number): number;
}

/** bench/native/math-blas.c built into a shared library and loaded here, or why not. */
function loadNative(): NativeBlas | string {
  const built = buildNative('math-blas.c', 'libblasbench.so', ['libcublas.so.13', 'libcudart.so.13', 'libcublasLt.so.13']);
  if (typeof built === 'string') return built;
  const { lib } = built;
  return {
    create: lib.func('uint64_t mb_create(uint64_t)'),
    pass: lib.func('int mb_gemm_pass(uint64_t, int, int, uint64_t, uint64_t, uint64_t, long, uint64_t)'),
    destroy: lib.func('int mb_destroy(uint64_t)'),
    ltPass: lib.func(
      'int mb_lt_pass(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, void *, uint64_t, uint64_t, long, uint64_t)',
    ),
  } as NativeBlas;
}

interface Env {
  blas: Blas;
  stream: Stream;
  native: NativeBlas | string;
  cState: number;
  owned: { close(): void }[];
}

/** The small row's Matmul.execute and, from C, the very call it makes (its handle, descriptor, layouts, algorithm, workspace). */
function matmulPasses(env: Env, views: { a: StridedView; b: StridedView; d: StridedView }, ptrs: number[]): Record<string, Pass> {
  const { stream, native } = env;
  const mm = Matmul.create({ ...views, stream }).plan({ algorithms: 1 });
  env.owned.push(mm);
  const operands = { a: views.a, b: views.b, d: views.d };
  const passes: Record<string, Pass> = {
    'Matmul.execute': (k) => {
      for (let i = 0; i < k; i++) mm.execute(operands);
      stream.synchronize();
    },
  };
  if (typeof native !== 'string') {
    const h = (mm as unknown as { handles: number[] }).handles;
    const ws = (mm as unknown as { owned: { workspace?: DeviceBuffer } }).owned.workspace;
    const algo = mm.algorithms[0];
    passes['C Lt'] = (k) => ok(native.ltPass(...h.slice(0, 6), ...ptrs, algo.algo, ws?.ptr ?? 0, algo.workspaceBytes, k, stream.handle), 'mb_lt_pass');
  }
  return passes;
}

/** One GEMM row: n×n operands (row-major views for the object, the same memory for C), its passes. */
function gemmRow(name: string, n: number, half: boolean, ops: number, env: Env): MathRow {
  const dtype = half ? 'f16' : 'f32';
  const [a, b, c] = [0, 1, 2].map(() => DeviceBuffer.alloc(n * n * (half ? 2 : 4), { stream: env.stream }).memset(0, { stream: env.stream }));
  env.owned.push(a, b, c);
  const [va, vb, vc] = [a, b, c].map((buf) => matrix(buf, { dtype, rows: n, cols: n }));
  const { blas, stream, native, cState } = env;
  const passes: Record<string, Pass> = {
    objects: (k) => {
      for (let i = 0; i < k; i++) blas.gemm(va, vb, vc);
      stream.synchronize();
    },
  };
  if (typeof native !== 'string') passes.C = (k) => ok(native.pass(cState, half ? 1 : 0, n, a.ptr, b.ptr, c.ptr, k, stream.handle), 'mb_gemm_pass');
  if (n === 64 && !half) Object.assign(passes, matmulPasses(env, { a: va, b: vb, d: vc }, [a.ptr, b.ptr, c.ptr]));
  return { name, ops, target: n >= 1024 ? 1.02 : 1.05, passes, work: n >= 1024 ? { amount: 2 * n ** 3, unit: 'TFLOP/s' } : undefined };
}

function main(): void {
  const { device, stream, native } = startGpuBench(loadNative);
  const cState = typeof native === 'string' ? 0 : native.create(stream.handle);
  if (typeof native !== 'string' && cState === 0) throw new Error('the C side could not make its cuBLAS handle');
  const env: Env = { blas: Blas.create({ stream }), stream, native, cState, owned: [] };
  const [opsSmall, opsLarge] = [scaled(20000, 100), scaled(20, 1)];
  const rows = [
    gemmRow('gemm_64_f32', 64, false, opsSmall, env),
    gemmRow('gemm_4096_f32', 4096, false, opsLarge, env),
    gemmRow('gemm_4096_f16', 4096, true, opsLarge, env),
  ];
  runMath(
    device,
    {
      impl: 'math-blas',
      title: `Blas.gemm vs C (same process) and CuPy (${opsSmall} calls small, ${opsLarge} large)`,
      reps: REPS,
      columns: ['objects', 'C', 'Matmul.execute', 'C Lt'],
      ratios: [
        ['objects', 'C'],
        ['Matmul.execute', 'C Lt'],
        ['CuPy', 'C'],
      ],
      verdicts: [
        { pass: 'objects', base: 'C' },
        { pass: 'Matmul.execute', base: 'C Lt' },
      ],
    },
    rows,
    () => cupyRows('gemm', ['--ops-small', String(opsSmall), '--ops-large', String(opsLarge)]),
  );
  if (typeof native !== 'string') native.destroy(cState);
  for (const r of env.owned.reverse()) r.close();
  env.blas.close();
  stream.close();
}

runBench('math-blas', main);
