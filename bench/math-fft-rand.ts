// The FFT and Random objects against the same cuFFT / cuRAND calls made from C in the same process, and
// beside CuPy: `npx tsx bench/math-fft-rand.ts` (GPU machine; gcc builds bench/native/math-fft-rand.c).
//
// Rows (issue 43 part C): a 1024-point C2C forward FFT (FftPlan.forward; the fft() one-liner beside it),
// a 1M-element uniform fill (RandomGenerator.uniform), each ≤ 1.05× C (the one-liner ≤ 1.3×: its options
// and layouts are compared per call); and a 2²⁴-point C2C FFT, whose
// throughput must equal C's. A pass is `ops` calls then a stream synchronize, timed on this process's
// clock around the whole pass (C's pass runs its loop inside the shared library); the implementations'
// passes alternate within each of the 5 repetitions, and each row reports the median per call.
// CuPy's rows come from bench/python/bench_cupy_fft_rand.py (skipped with a reason where CuPy is absent).
// Env: BENCH_SCALE (ops), CUDA_HOME (default /usr/local/cuda), PYTHON (default python3), CC (default gcc).
import { DeviceBuffer, FftPlan, RandomGenerator, type Stream, StridedView, fft } from '../src';
import { REPS, fmt, log, median, scaled, table } from './common';
import { type Pass, buildNative as buildLibrary, cupyRows as runCupy, interleave, ok, runBench, startGpuBench, verdict } from './math-common';

interface BenchRow {
  name: string;
  ops: number;
  /** Bytes each call moves (for GB/s), 0 for call-cost rows. */
  bytes: number;
  /** The ratio objects / C this row must stay under. */
  target: number;
  passes: Record<string, Pass>;
}

/** The one-liner's bound at 1k: its options read and layouts compared per call, beside FftPlan's path. */
const ONE_LINER_TARGET = 1.3;
const SONAMES = ['libcufft.so.12', 'libcurand.so.10', 'libcudart.so.13'];

/** The C side: bench/native/math-fft-rand.c built into a shared library and loaded here, or why not. */
interface NativeMath {
  fftPlan(n: number, batch: number, stream: number): number;
  fftPass(plan: number, idata: number, odata: number, ops: number, stream: number): number;
  fftDestroy(plan: number): number;
  randCreate(seed: number, stream: number): number;
  randPass(gen: number, out: number, n: number, ops: number, stream: number): number;
  randDestroy(gen: number): number;
}

function buildNative(): NativeMath | string {
  const built = buildLibrary('math-fft-rand.c', 'libmathbench.so', SONAMES);
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

/** CuPy's rows (ns per call), or why there are none. */
function cupyRows(ops: Record<string, number>): Record<string, number> | string {
  const args = ['--ops-1k', String(ops.fft_c2c_1k), '--ops-fill', String(ops.uniform_1M), '--ops-large', String(ops.fft_c2c_16M)];
  const r = runCupy('bench_cupy_fft_rand.py', args);
  return typeof r === 'string' ? r : r.rows;
}

/** Prints the table (per call: objects, fft(), C, CuPy and the ratios to C), the verdicts and one JSON line. */
function report(deviceName: string, results: { row: BenchRow; reps: Record<string, number[]> }[], cupy: Record<string, number> | string): void {
  const lines: string[][] = [];
  const verdicts: string[] = [];
  for (const { row, reps } of results) {
    const med = Object.fromEntries(Object.entries(reps).map(([k, v]) => [k, median(v)]));
    const c = med.C;
    const theirs = typeof cupy === 'string' ? undefined : cupy[row.name];
    const show = (ns: number | undefined) =>
      ns === undefined ? '—' : row.bytes ? `${fmt(ns / 1e6, 3)} ms (${fmt(row.bytes / ns)} GB/s)` : `${fmt(ns / 1e3, 2)} µs`;
    const ratio = (ns: number | undefined) => (ns === undefined || c === undefined ? '—' : `${fmt(ns / c, 3)}×`);
    lines.push([row.name, show(med.objects), show(med['fft()']), show(c), show(theirs), ratio(med.objects), ratio(med['fft()']), ratio(theirs)]);
    if (c !== undefined) verdicts.push(verdict(row.name, 'objects/C', med.objects / c, row.target));
    const oneLine = med['fft()'];
    if (c !== undefined && oneLine !== undefined) verdicts.push(verdict(row.name, 'fft()/C', oneLine / c, ONE_LINER_TARGET));
  }
  console.log(`\nFFT and Random objects vs C (same process) and CuPy on ${deviceName}, per call, median of ${REPS} interleaved repetitions:\n`);
  console.log(table(['row', 'objects', 'fft()', 'C', 'CuPy', 'objects/C', 'fft()/C', 'CuPy/C'], lines));
  for (const v of verdicts) console.log(v);
  console.log(JSON.stringify({ impl: 'math-fft-rand', device: deviceName, rows: Object.fromEntries(results.map(({ row, reps }) => [row.name, reps])), cupy }));
}

/** The buffers, plans and generator of the rows: a 1k and a 16M C2C transform, 1M uniform floats. */
function operands(stream: Stream) {
  const small = { n: 1024, bytes: 1024 * 8 };
  const large = { n: 1 << 24, bytes: (1 << 24) * 8 };
  const sx = DeviceBuffer.alloc(small.bytes, { stream }).memset(0, { stream });
  const sy = DeviceBuffer.alloc(small.bytes, { stream });
  const lx = DeviceBuffer.alloc(large.bytes, { stream }).memset(0, { stream });
  const ly = DeviceBuffer.alloc(large.bytes, { stream });
  const fill = DeviceBuffer.alloc((1 << 20) * 4, { stream });
  const smallPlan = FftPlan.create({ shape: [small.n], stream });
  const largePlan = FftPlan.create({ shape: [large.n], stream });
  const gen = RandomGenerator.create({ seed: 1, stream });
  const vx = StridedView.of(sx, { dtype: 'c64', shape: [small.n] });
  const vy = StridedView.of(sy, { dtype: 'c64', shape: [small.n] });
  return { small, large, sx, sy, lx, ly, fill, smallPlan, largePlan, gen, vx, vy };
}

function main(): void {
  const { device, stream, native } = startGpuBench(buildNative, 'rows');
  const h = stream.handle;

  const { small, large, sx, sy, lx, ly, fill, smallPlan, largePlan, gen, vx, vy } = operands(stream);
  const oneLiner = { out: vy, stream, normalize: 'none' as const };
  const f32 = { dtype: 'f32' as const };

  const cSmall = typeof native === 'string' ? 0 : native.fftPlan(small.n, 1, h);
  const cLarge = typeof native === 'string' ? 0 : native.fftPlan(large.n, 1, h);
  const cGen = typeof native === 'string' ? 0 : native.randCreate(1, h);
  if (cSmall < 0 || cLarge < 0 || (typeof native !== 'string' && cGen === 0))
    throw new Error(`the C side's plans or generator failed (cufftPlan1d status ${-Math.min(cSmall, cLarge, 0) - 1}, generator ${cGen})`);
  const cPasses = (make: (c: NativeMath) => Pass): Record<string, Pass> => (typeof native === 'string' ? {} : { C: make(native) });

  const rows: BenchRow[] = [
    {
      name: 'fft_c2c_1k',
      ops: scaled(20000, 100),
      bytes: 0,
      target: 1.05,
      passes: {
        objects: (ops) => {
          for (let i = 0; i < ops; i++) smallPlan.forward(sx, sy);
          stream.synchronize();
        },
        'fft()': (ops) => {
          for (let i = 0; i < ops; i++) fft(vx, oneLiner);
          stream.synchronize();
        },
        ...cPasses((c) => (ops) => ok(c.fftPass(cSmall, sx.ptr, sy.ptr, ops, h), 'mfr_fft_pass')),
      },
    },
    {
      name: 'uniform_1M',
      ops: scaled(2000, 10),
      bytes: 0,
      target: 1.05,
      passes: {
        objects: (ops) => {
          for (let i = 0; i < ops; i++) gen.uniform(fill, f32);
          stream.synchronize();
        },
        ...cPasses((c) => (ops) => ok(c.randPass(cGen, fill.ptr, 1 << 20, ops, h), 'mfr_rand_pass')),
      },
    },
    {
      name: 'fft_c2c_16M',
      ops: scaled(20, 1),
      bytes: 2 * large.bytes,
      target: 1.05,
      passes: {
        objects: (ops) => {
          for (let i = 0; i < ops; i++) largePlan.forward(lx, ly);
          stream.synchronize();
        },
        ...cPasses((c) => (ops) => ok(c.fftPass(cLarge, lx.ptr, ly.ptr, ops, h), 'mfr_fft_pass')),
      },
    },
  ];

  const results = rows.map((row) => ({ row, reps: interleave(row.passes, row.ops, REPS) }));
  const cupy = cupyRows(Object.fromEntries(rows.map((r) => [r.name, r.ops])));
  if (typeof cupy === 'string') log(`CuPy rows skipped: ${cupy}`);

  report(device.name, results, cupy);

  if (typeof native !== 'string') {
    native.fftDestroy(cSmall);
    native.fftDestroy(cLarge);
    native.randDestroy(cGen);
  }
  for (const r of [smallPlan, largePlan, gen, sx, sy, lx, ly, fill]) r.close();
  stream.close();
}

runBench('math-fft-rand', main);
