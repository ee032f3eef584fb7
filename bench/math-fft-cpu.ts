// What the JS side adds to a cuFFT execution, without a GPU: FftPlan.forward and the fft() one-liner run
// their real code (the binder, koffi, the typed layer, the door's context binding) against stand-ins
// for libcufft and cuCtxGetCurrent/cuCtxSetCurrent that do nothing (bench/native/fake-cufft.c), so
// each row's time per call is FFI + JS; the C row is the same no-op called from a C loop, `koffi` the
// bare FFI call from a JS loop, `typed` the generated typed function. A row's excess over `koffi` is
// what the wrapper adds (with the FFI transition itself, what bench/math-fft-rand.ts's fft_c2c_1k
// ratio is made of).
//   npx tsx bench/math-fft-cpu.ts        (gcc; OPS=200000 calls per pass, REPS=7 passes, median per call of
//   this process's CPU time, which a shared machine's other processes do not inflate as they do wall time)
import { StridedView } from '../src/memory/strided-view';
import { FftPlan } from '../src/math/fft';
import { fft } from '../src/math/fft-functions';
import { loadCufft } from '../src/releases';
import { CPU_OPS, CPU_ROUNDS, FakeBuffer, type Pass, reportCpu, runCpuPasses, standIn } from './math-common';

function main(): void {
  // the env var is read when cuFFT first loads, below
  const { lib, ctx, stream, legacy } = standIn('fake-cufft.c', 'cuda-ts-fft-cpu', 'libfakecufft.so', ['CUDA_TS_CUFFT_LIBRARY']);
  const rawExec = lib.func('cufftExecC2C', 'int', ['int32_t', 'void *', 'void *', 'int32_t']) as (...a: unknown[]) => number;
  const cPass = lib.func('fake_fft_pass', 'int', ['int', 'uint64_t', 'uint64_t', 'long']) as (...a: unknown[]) => number;
  const execs = lib.func('fake_cufft_execs', 'long', []) as () => number;

  const n = 1024;
  const sx = new FakeBuffer(n * 8, 0x7f0000000000, ctx);
  const sy = new FakeBuffer(n * 8, 0x7f0000100000, ctx);
  const vx = StridedView.of(sx, { dtype: 'c64', shape: [n] });
  const vy = StridedView.of(sy, { dtype: 'c64', shape: [n] });
  const plan = FftPlan.create({ shape: [n], stream });
  const onLegacy = FftPlan.create({ shape: [n], stream: legacy });
  const typed = loadCufft().cufftExecC2C;
  const h = plan.handle;
  const oneLiner = { out: vy, stream, normalize: 'none' as const };
  // addresses read at run time from fields written more than once, as an object's are (constants would let
  // V8 fold the typed layer's per-address checks away)
  const at = { input: 0, output: 0 };
  for (const b of [sy, sx]) {
    at.input = b.ptr;
    at.output = b === sx ? sy.ptr : sx.ptr;
  }

  const passes: Record<string, Pass> = {
    C: (ops) => void cPass(h, sx.ptr, sy.ptr, ops),
    koffi: (ops) => {
      for (let i = 0; i < ops; i++) rawExec(h, 0x7f0000000000, 0x7f0000100000, -1);
    },
    typed: (ops) => {
      for (let i = 0; i < ops; i++) typed(h, at.input, at.output, -1);
    },
    'forward(buffers)': (ops) => {
      for (let i = 0; i < ops; i++) plan.forward(sx, sy);
    },
    'forward(views)': (ops) => {
      for (let i = 0; i < ops; i++) plan.forward(vx, vy);
    },
    'forward, legacy stream': (ops) => {
      for (let i = 0; i < ops; i++) onLegacy.forward(sx, sy);
    },
    'fft(view, {out, stream})': (ops) => {
      for (let i = 0; i < ops; i++) fft(vx, oneLiner);
    },
  };
  // always this process's CPU time: on a shared machine, wall time counts the other processes' turns too
  const run = runCpuPasses(passes, { what: 'the fake cufftExecC2C', calls: execs, cpuClock: true });
  const base = (k: string): number | undefined => (k === 'C' || k === 'koffi' ? undefined : run.med.koffi);
  reportCpu('math-fft-cpu', `JS side of a 1k C2C cufftExecC2C (stand-in C functions; ${CPU_OPS} calls per pass, median of ${CPU_ROUNDS})`, run, 'koffi', base);
  plan.close();
  onLegacy.close();
}

main();
