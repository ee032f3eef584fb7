// The FFT and Random objects against the same cuFFT / cuRAND calls made from C in the same process, and
// beside CuPy: `npx tsx bench/math-fft-rand.ts` (GPU machine; gcc builds bench/native/math-fft-rand.c).
// Rows (issue 43): a 1024-point C2C forward FFT (FftPlan.forward, and the fft() one-liner ≤ 1.3× C: its options
// and layouts are compared per call), a 1M-element uniform fill (RandomGenerator.uniform), each ≤ 1.05× C; a
// 2²⁴-point C2C FFT, whose throughput must equal C's. A pass is `ops` calls then a stream synchronize, timed
// around the whole pass (C's pass runs its loop inside the shared library).
// Env: BENCH_SCALE (ops), CUDA_HOME (default /usr/local/cuda), PYTHON (default python3), CC (default gcc).
import { DeviceBuffer, FftPlan, RandomGenerator, type Stream, StridedView, fft } from '../src';
import { REPS, scaled } from './common';
import { type MathRow, type Pass, buildNative, cupyRows, ok, runBench, runMath, startGpuBench } from './math-common';

interface NativeMath {
  fftPlan(n: number, batch: number, stream: number): number;
  fftPass(plan: number, idata: number, odata: number, ops: number, stream: number): number;
  fftDestroy(plan: number): number;
  randCreate(seed: number, stream: number): number;
  randPass(gen: number, out: number, n: number, ops: number, stream: number): number;
  randDestroy(gen: number): number;
}

/** The C side: bench/native/math-fft-rand.c built into a shared library and loaded here, or why not. */
function loadNative(): NativeMath | string {
  const built = buildNative('math-fft-rand.c', 'libmathbench.so', ['libcufft.so.12', 'libcurand.so.10', 'libcudart.so.13']);
  if (typeof built === 'string') return built;
  const { lib } = built;
  return {
    fftPlan: lib.func('int mfr_fft_plan(int, int, uint64_t)'),
    fftPass: lib.func('int mfr_fft_pass(int, uint64_t, uint64_t, long, uint64_t)'),
    fftDestroy: lib.func('int mfr_fft_destroy(int)'),
    randCreate: lib.func('uint64_t mfr_rand_create(uint64_t, uint64_t)'),
    randPass: lib.func('int mfr_rand_pass(uint64_t, uint64_t, uint64_t, long, uint64_t)'),
    randDestroy: lib.func('int mfr_rand_destroy(uint64_t)'),
  } as NativeMath;
}

/** The buffers, plans and generator of the rows: a 1k and a 16M C2C transform, 1M uniform floats. */
function operands(stream: Stream) {
  const [small, large] = [1024, 1 << 24];
  const sx = DeviceBuffer.alloc(small * 8, { stream }).memset(0, { stream });
  const sy = DeviceBuffer.alloc(small * 8, { stream });
  const lx = DeviceBuffer.alloc(large * 8, { stream }).memset(0, { stream });
  const ly = DeviceBuffer.alloc(large * 8, { stream });
  const fill = DeviceBuffer.alloc((1 << 20) * 4, { stream });
  const smallPlan = FftPlan.create({ shape: [small], stream });
  const largePlan = FftPlan.create({ shape: [large], stream });
  const gen = RandomGenerator.create({ seed: 1, stream });
  const vx = StridedView.of(sx, { dtype: 'c64', shape: [small] });
  const vy = StridedView.of(sy, { dtype: 'c64', shape: [small] });
  return { small, large, sx, sy, lx, ly, fill, smallPlan, largePlan, gen, vx, vy };
}

/** `ops` calls of `call`, then a synchronize of `stream`. */
const synced =
  (stream: Stream, call: () => void): Pass =>
  (ops) => {
    for (let i = 0; i < ops; i++) call();
    stream.synchronize();
  };

function main(): void {
  const { device, stream, native } = startGpuBench(loadNative);
  const h = stream.handle;
  const o = operands(stream);
  const oneLiner = { out: o.vy, stream, normalize: 'none' as const };
  const f32 = { dtype: 'f32' as const };
  const c = typeof native === 'string' ? undefined : native;
  const [cSmall, cLarge, cGen] = c ? [c.fftPlan(o.small, 1, h), c.fftPlan(o.large, 1, h), c.randCreate(1, h)] : [0, 0, 0];
  if (cSmall < 0 || cLarge < 0 || (c && cGen === 0))
    throw new Error(`the C side's plans or generator failed (cufftPlan1d status ${-Math.min(cSmall, cLarge, 0) - 1}, generator ${cGen})`);
  const cPass = (make: (c: NativeMath) => Pass): Record<string, Pass> => (c ? { C: make(c) } : {});
  const rows: MathRow[] = [
    {
      name: 'fft_c2c_1k',
      ops: scaled(20000, 100),
      target: 1.05,
      passes: {
        objects: synced(stream, () => o.smallPlan.forward(o.sx, o.sy)),
        'fft()': synced(stream, () => fft(o.vx, oneLiner)),
        ...cPass((c) => (ops) => ok(c.fftPass(cSmall, o.sx.ptr, o.sy.ptr, ops, h), 'mfr_fft_pass')),
      },
    },
    {
      name: 'uniform_1M',
      ops: scaled(2000, 10),
      target: 1.05,
      passes: {
        objects: synced(stream, () => o.gen.uniform(o.fill, f32)),
        ...cPass((c) => (ops) => ok(c.randPass(cGen, o.fill.ptr, 1 << 20, ops, h), 'mfr_rand_pass')),
      },
    },
    {
      name: 'fft_c2c_16M',
      ops: scaled(20, 1),
      target: 1.05,
      work: { amount: 2 * o.large * 8, unit: 'GB/s' },
      passes: {
        objects: synced(stream, () => o.largePlan.forward(o.lx, o.ly)),
        ...cPass((c) => (ops) => ok(c.fftPass(cLarge, o.lx.ptr, o.ly.ptr, ops, h), 'mfr_fft_pass')),
      },
    },
  ];
  const ops = Object.fromEntries(rows.map((r) => [r.name, String(r.ops)]));
  runMath(
    device,
    {
      impl: 'math-fft-rand',
      title: 'FFT and Random objects vs C (same process) and CuPy',
      reps: REPS,
      columns: ['objects', 'fft()', 'C'],
      verdicts: [
        { pass: 'objects', base: 'C' },
        { pass: 'fft()', base: 'C', target: 1.3 },
      ],
    },
    rows,
    () => cupyRows('fft-rand', ['--ops-1k', ops.fft_c2c_1k, '--ops-fill', ops.uniform_1M, '--ops-large', ops.fft_c2c_16M]),
  );
  if (c) [cSmall, cLarge].forEach((p) => c.fftDestroy(p));
  if (c) c.randDestroy(cGen);
  for (const r of [o.smallPlan, o.largePlan, o.gen, o.sx, o.sy, o.lx, o.ly, o.fill]) r.close();
  stream.close();
}

runBench('math-fft-rand', main);
