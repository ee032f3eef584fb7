// What the JS side adds to a cublasSgemm and a cublasLtMatmul, without a GPU: Blas.gemm and Matmul.execute
// run their real code (the binder, koffi, the typed layer, the door's context binding) against stand-ins for
// libcublas, libcublasLt and cuCtxGetCurrent/cuCtxSetCurrent that do nothing (bench/native/fake-cublas.c),
// so each row's time per call is FFI + JS. `C` is the same no-op called from a C loop, `koffi` the bare FFI
// call, `typed` the typed layer the object calls; a row minus `typed` is the object's own cost (what
// bench/math-blas.ts's gemm_64_f32 ratio is made of, beside the FFI transition and the typed layer).
//   npx tsx bench/math-blas-cpu.ts     (gcc; OPS=200000 calls per pass, REPS=7 passes, median per call;
//                                       process CPU time per pass, CLOCK=wall for the wall clock; ONLY=<text>
//                                       keeps the rows naming it, e.g. for node --cpu-prof)
import { Blas } from '../src/math/blas';
import { Matmul } from '../src/math/matmul';
import { matrix } from '../src/math/matrix';
import { loadCublas, loadCublasLt } from '../src/releases';
import { CPU_CLOCK, CPU_OPS, CPU_ROUNDS, FakeBuffer, type Pass, reportCpu, runCpuPasses, standIn } from './math-common';

function main(): void {
  // the env vars are read when cuBLAS / cuBLASLt first load, below
  const { lib, ctx, stream, legacy } = standIn('fake-cublas.c', 'cuda-ts-blas-cpu', 'libfakecublas.so', ['CUDA_TS_CUBLAS_LIBRARY', 'CUDA_TS_CUBLASLT_LIBRARY']);
  const sgemmArgs = 'uintptr_t, int32_t, int32_t, int32_t, int32_t, int32_t, void *, uintptr_t, int32_t, uintptr_t, int32_t, void *, uintptr_t, int32_t';
  const rawSgemm = lib.func(`int cublasSgemm_v2(${sgemmArgs})`) as (...a: unknown[]) => number;
  const cPass = lib.func('fake_sgemm_pass', 'int', ['uint64_t', 'uint64_t', 'uint64_t', 'uint64_t', 'long']) as (...a: unknown[]) => number;
  const gemms = lib.func('fake_cublas_gemms', 'long', []) as () => number;
  const binds = lib.func('fake_cublas_binds', 'long', []) as () => number;
  const at = (i: number): number => 0x7f0000000000 + i * 0x100000;
  const view = (i: number) => matrix(new FakeBuffer(64 * 64 * 4, at(i), ctx), { dtype: 'f32', rows: 64, cols: 64 });
  const [a, b, c] = [view(0), view(1), view(2)];
  const blas = Blas.create({ stream });
  const onLegacy = Blas.create({ stream: legacy });
  const mm = Matmul.create({ a, b, d: c, stream }).plan({ algorithms: 1 });
  const operands = { a, b, d: c };
  const typed = loadCublas().cublasSgemm;
  const lt = loadCublasLt();
  const typedLt = lt.cublasLtMatmul;
  const algo = mm.algorithms[0].algo;
  const alpha = new Float32Array([1]);
  const beta = new Float32Array([0]);
  const h = blas.handle;
  const passes: Record<string, Pass> = {
    C: (ops) => void cPass(h, at(0), at(1), at(2), ops),
    koffi: (ops) => {
      for (let i = 0; i < ops; i++) rawSgemm(h, 0, 0, 64, 64, 64, alpha, at(0), 64, at(1), 64, beta, at(2), 64);
    },
    typed: (ops) => {
      for (let i = 0; i < ops; i++) typed(h, 0, 0, 64, 64, 64, 1, at(0), 64, at(1), 64, 0, at(2), 64);
    },
    'Blas.gemm': (ops) => {
      for (let i = 0; i < ops; i++) blas.gemm(a, b, c);
    },
    'Blas.gemm {alpha, beta}': (ops) => {
      const o = { alpha: 2, beta: 0.5 };
      for (let i = 0; i < ops; i++) blas.gemm(a, b, c, o);
    },
    'Blas.gemm, legacy stream': (ops) => {
      for (let i = 0; i < ops; i++) onLegacy.gemm(a, b, c);
    },
    'typed cublasLtMatmul': (ops) => {
      for (let i = 0; i < ops; i++)
        typedLt(
          0x1000 as never,
          0x1001 as never,
          alpha,
          at(0),
          0x1002 as never,
          at(1),
          0x1003 as never,
          beta,
          at(2),
          0x1004 as never,
          at(2),
          0x1005 as never,
          algo,
          0,
          0,
          stream.handle as never,
        );
    },
    'Matmul.execute': (ops) => {
      for (let i = 0; i < ops; i++) mm.execute(operands);
    },
  };
  let bindsBefore = 0;
  const only = process.env.ONLY; // a substring: only the rows naming it (for a profile), plus typed
  const run = runCpuPasses(passes, {
    what: 'the fake GEMMs',
    calls: gemms,
    cpuClock: CPU_CLOCK,
    only,
    keep: 'typed',
    afterWarmUp: () => (bindsBefore = binds()),
  });
  const base = (k: string): number | undefined => (k.startsWith('Blas') ? run.med.typed : k === 'Matmul.execute' ? run.med['typed cublasLtMatmul'] : undefined);
  const title = `JS side of a cublasSgemm / cublasLtMatmul (stand-in C functions; ${CPU_OPS} calls per pass, median of ${CPU_ROUNDS}, ${CPU_CLOCK ? 'process CPU time' : 'wall clock'})`;
  reportCpu('math-blas-cpu', title, run, 'typed', base, [`context binds (cuCtxSetCurrent) during the timed passes: ${binds() - bindsBefore}`]);
  for (const r of [mm, blas, onLegacy]) r.close();
}

main();
