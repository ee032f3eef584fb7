// What the JS side adds to a math-library call, without a GPU: Blas.gemm, Matmul.execute, FftPlan.forward,
// fft() and Sparse.spmv run their real code (the binder, koffi, the typed layer, the door's context binding)
// against bench/native/fake-math.c, stand-ins for the libraries and cuCtxGetCurrent/cuCtxSetCurrent that do
// nothing, so each row's time per call is FFI + JS. `C` is the same no-op called from a C loop, `koffi` the
// bare FFI call, `typed` the typed layer the object calls; a row's excess over its base is the object's own
// cost (what the math step's small-size ratios are made of, beside the FFI transition and the typed layer).
//   npx tsx bench/math-cpu.ts [blas] [fft] [sparse]    (default all; gcc; OPS=200000 calls per pass, REPS=7
//   passes, median per call of this process's CPU time, CLOCK=wall for the wall clock; ONLY=<text> keeps
//   the rows naming it, e.g. for node --cpu-prof)
import koffi from 'koffi';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as cusparseRaw from '../generated/13.0/cusparse/raw';
import * as drv from '../src/driver';
import { Context } from '../src/context';
import { Core } from '../src/lifecycle';
import { Blas } from '../src/math/blas';
import { FftPlan } from '../src/math/fft';
import { fft } from '../src/math/fft-functions';
import { Matmul } from '../src/math/matmul';
import { matrix } from '../src/math/matrix';
import { Sparse } from '../src/math/sparse';
import { DenseVector, SparseMatrix } from '../src/math/sparse-matrix';
import { DeviceBuffer } from '../src/memory/device-buffer';
import { StridedView } from '../src/memory/strided-view';
import { loadCublas, loadCublasLt, loadCufft, loadCusparse } from '../src/releases';
import { Stream } from '../src/stream';
import { REPO_ROOT, fmt, median, nowNs, reason, table } from './common';
import { SEALED } from '../src/sealed';

type Pass = (ops: number) => void;
type Fn = (...a: unknown[]) => number;

const OPS = Number(process.env.OPS ?? 200_000);
const ROUNDS = Number(process.env.REPS ?? 7);
/** This process's CPU time (default; steadier than the wall clock on a shared machine) or, with CLOCK=wall, the wall clock. */
const CPU_CLOCK = process.env.CLOCK !== 'wall';
const at = (i: number): number => 0x7f0000000000 + i * 0x100000;
/** A pass of `ops` calls of `call`. */
const loop =
  (call: () => void): Pass =>
  (ops) => {
    for (let i = 0; i < ops; i++) call();
  };

/** A DeviceBuffer over an address nothing dereferences (the stand-ins never touch memory). */
class FakeBuffer extends DeviceBuffer {
  constructor(bytes: number, address: number, ctx: Context) {
    super(SEALED, 'DeviceBuffer', address, bytes, ctx, () => undefined);
  }
}

interface StandIn {
  lib: ReturnType<typeof koffi.load>;
  ctx: Context;
  /** A created stream and the legacy default stream, both over the fake context. */
  stream: Stream;
  legacy: Stream;
  /** A library function of the stand-in returning an int or a long. */
  fn(name: string, args?: string[]): Fn;
}

/**
 * Builds the stand-in, points every math library's variable (read when the library first loads) at it, gives
 * the driver its cuCtxGetCurrent / cuCtxSetCurrent, and binds a fake context (no constructor run) with two streams.
 */
function standIn(): StandIn {
  const dir = join(tmpdir(), 'cuda-ts-math-cpu');
  mkdirSync(dir, { recursive: true });
  const so = join(dir, 'libfakemath.so');
  const r = spawnSync(process.env.CC || 'gcc', ['-O2', '-shared', '-fPIC', join(REPO_ROOT, 'bench', 'native', 'fake-math.c'), '-o', so], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`gcc failed: ${r.stderr || String(r.error)}`);
  for (const v of ['CUBLAS', 'CUBLASLT', 'CUFFT', 'CUSPARSE']) process.env[`CUDA_TS_${v}_LIBRARY`] = so;
  const lib = koffi.load(so);
  for (const name of ['cuCtxGetCurrent', 'cuCtxSetCurrent'])
    drv.provideNative(name, lib.func(name, 'int', [name === 'cuCtxGetCurrent' ? 'void *' : 'uintptr_t']) as never);
  const ctx = Object.create(Context.prototype) as Context;
  Object.assign(ctx, { core: new Core('Context', undefined), unusable: undefined, handle: 0x5a5a000, device: 0, primary: true, allocCache: undefined });
  ctx.bind();
  const stream = Stream.adoptCreated(0x7e57000 as drv.CUstream, ctx);
  const fn = (name: string, args: string[] = []): Fn => lib.func(name, args.length ? 'int' : 'long', args) as Fn;
  return { lib, ctx, stream, legacy: Stream.legacyDefault(ctx), fn };
}

/** One library's rows: its passes, the stand-in counter they move, and each row's base (the excess column). */
interface CpuBench {
  title: string;
  passes: Record<string, Pass>;
  calls: () => number;
  base: (row: string, med: Record<string, number>) => number | undefined;
  baseName: string;
  /** Counters the timed passes must not move (context binds, descriptor re-points), by what they count. */
  still?: Record<string, () => number>;
  close(): void;
}

/** Each pass with OPS / 10 calls (warm-up), then ROUNDS rounds of every pass in rotating order; median ns per call. */
function runPasses(b: CpuBench): { names: string[]; med: Record<string, number> } {
  const only = process.env.ONLY; // a substring: only the rows naming it (for a profile), plus the base rows
  const names = Object.keys(b.passes).filter((k) => only === undefined || k === 'typed' || k === 'koffi' || k.includes(only));
  const ns: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  const before = b.calls();
  for (const k of names) b.passes[k](OPS / 10);
  const still = Object.entries(b.still ?? {}).map(([what, count]) => [what, count, count()] as const);
  for (let r = 0; r < ROUNDS; r++) {
    for (let j = 0; j < names.length; j++) {
      const k = names[(r + j) % names.length];
      const t0 = nowNs();
      const c0 = process.cpuUsage();
      b.passes[k](OPS);
      const cpu = process.cpuUsage(c0);
      ns[k].push(CPU_CLOCK ? ((cpu.user + cpu.system) * 1e3) / OPS : Number(nowNs() - t0) / OPS);
    }
  }
  const expected = names.length * (OPS / 10 + ROUNDS * OPS);
  if (b.calls() - before !== expected) throw new Error(`the stand-in ran ${b.calls() - before} times, expected ${expected}`);
  for (const [what, count, was] of still) if (count() !== was) throw new Error(`the timed passes made ${count() - was} ${what}`);
  return { names, med: Object.fromEntries(names.map((k) => [k, median(ns[k])])) };
}

function blasBench(s: StandIn): CpuBench {
  const sgemmArgs = 'uintptr_t, int32_t, int32_t, int32_t, int32_t, int32_t, void *, uintptr_t, int32_t, uintptr_t, int32_t, void *, uintptr_t, int32_t';
  const rawSgemm = s.lib.func(`int cublasSgemm_v2(${sgemmArgs})`) as Fn;
  const cPass = s.fn('fake_sgemm_pass', ['uint64_t', 'uint64_t', 'uint64_t', 'uint64_t', 'long']);
  const view = (i: number) => matrix(new FakeBuffer(64 * 64 * 4, at(i), s.ctx), { dtype: 'f32', rows: 64, cols: 64 });
  const [a, b, c] = [view(0), view(1), view(2)];
  const blas = Blas.create({ stream: s.stream });
  const onLegacy = Blas.create({ stream: s.legacy });
  const mm = Matmul.create({ a, b, d: c, stream: s.stream }).plan({ algorithms: 1 });
  const operands = { a, b, d: c };
  const typed = loadCublas().cublasSgemm;
  const typedLt = loadCublasLt().cublasLtMatmul;
  const algo = mm.algorithms[0].algo;
  const [alpha, beta] = [new Float32Array([1]), new Float32Array([0])];
  const h = blas.handle;
  const scaling = { alpha: 2, beta: 0.5 };
  const lt = [0x1000, 0x1001, 0x1002, 0x1003, 0x1004, 0x1005] as never[];
  return {
    title: 'a cublasSgemm / cublasLtMatmul',
    passes: {
      C: (ops) => void cPass(h, at(0), at(1), at(2), ops),
      koffi: loop(() => rawSgemm(h, 0, 0, 64, 64, 64, alpha, at(0), 64, at(1), 64, beta, at(2), 64)),
      typed: loop(() => typed(h, 0, 0, 64, 64, 64, 1, at(0), 64, at(1), 64, 0, at(2), 64)),
      'Blas.gemm': loop(() => blas.gemm(a, b, c)),
      'Blas.gemm {alpha, beta}': loop(() => blas.gemm(a, b, c, scaling)),
      'Blas.gemm, legacy stream': loop(() => onLegacy.gemm(a, b, c)),
      'typed cublasLtMatmul': loop(() =>
        typedLt(lt[0], lt[1], alpha, at(0), lt[2], at(1), lt[3], beta, at(2), lt[4], at(2), lt[5], algo, 0, 0, s.stream.handle as never),
      ),
      'Matmul.execute': loop(() => mm.execute(operands)),
    },
    calls: s.fn('fake_gemms'),
    base: (k, med) => (k.startsWith('Blas') ? med.typed : k === 'Matmul.execute' ? med['typed cublasLtMatmul'] : undefined),
    baseName: 'typed',
    still: { 'context binds (cuCtxSetCurrent)': s.fn('fake_binds') },
    close: () => [mm, blas, onLegacy].forEach((r) => r.close()),
  };
}

function fftBench(s: StandIn): CpuBench {
  const rawExec = s.lib.func('cufftExecC2C', 'int', ['int32_t', 'void *', 'void *', 'int32_t']) as Fn;
  const cPass = s.fn('fake_fft_pass', ['int', 'uint64_t', 'uint64_t', 'long']);
  const n = 1024;
  const [sx, sy] = [new FakeBuffer(n * 8, at(0), s.ctx), new FakeBuffer(n * 8, at(1), s.ctx)];
  const [vx, vy] = [StridedView.of(sx, { dtype: 'c64', shape: [n] }), StridedView.of(sy, { dtype: 'c64', shape: [n] })];
  const plan = FftPlan.create({ shape: [n], stream: s.stream });
  const onLegacy = FftPlan.create({ shape: [n], stream: s.legacy });
  const typed = loadCufft().cufftExecC2C;
  const h = plan.handle;
  const oneLiner = { out: vy, stream: s.stream, normalize: 'none' as const };
  // addresses read at run time from fields written more than once, as an object's are (constants would let
  // V8 fold the typed layer's per-address checks away)
  const addr = { input: 0, output: 0 };
  for (const b of [sy, sx]) [addr.input, addr.output] = [b.ptr, b === sx ? sy.ptr : sx.ptr];
  return {
    title: 'a 1k C2C cufftExecC2C',
    passes: {
      C: (ops) => void cPass(h, sx.ptr, sy.ptr, ops),
      koffi: loop(() => rawExec(h, at(0), at(1), -1)),
      typed: loop(() => typed(h, addr.input, addr.output, -1)),
      'forward(buffers)': loop(() => plan.forward(sx, sy)),
      'forward(views)': loop(() => plan.forward(vx, vy)),
      'forward, legacy stream': loop(() => onLegacy.forward(sx, sy)),
      'fft(view, {out, stream})': loop(() => fft(vx, oneLiner)),
    },
    calls: s.fn('fake_execs'),
    base: (k, med) => (k === 'C' || k === 'koffi' ? undefined : med.koffi),
    baseName: 'koffi',
    close: () => [plan, onLegacy].forEach((r) => r.close()),
  };
}

function sparseBench(s: StandIn): CpuBench {
  const [rows, nnz] = [10_000, 80_000];
  const spmvArgs = ['uintptr_t', 'int32_t', 'void *', 'uintptr_t', 'uintptr_t', 'void *', 'uintptr_t', 'int32_t', 'int32_t', 'void *'];
  const rawSpmv = s.lib.func('cusparseSpMV', 'int', spmvArgs) as Fn;
  const cPass = s.fn('fake_spmv_pass', ['uint64_t', 'uint64_t', 'uint64_t', 'uint64_t', 'long']);
  const vec = (dtype: 'i32' | 'f32', n: number, i: number) => StridedView.of(new FakeBuffer(n * 4, at(i), s.ctx), { dtype, shape: [n] });
  const A = SparseMatrix.csr({ rows, cols: rows, rowOffsets: vec('i32', rows + 1, 0), colIndices: vec('i32', nnz, 1), values: vec('f32', nnz, 2) });
  const [x, y] = [vec('f32', rows, 3), vec('f32', rows, 4)];
  const [xd, yd] = [DenseVector.of(x), DenseVector.of(y)];
  const sparse = Sparse.create({ stream: s.stream });
  const onLegacy = Sparse.create({ stream: s.legacy });
  const typed = loadCusparse().cusparseSpMV;
  const [alpha, beta] = [new Float32Array([1]), new Float32Array([0])];
  const scaling = { alpha: 2, beta: 0.5 };
  return {
    title: 'a cusparseSpMV',
    passes: {
      C: (ops) => void cPass(0x1000, A.descriptor, xd.descriptor, yd.descriptor, ops),
      koffi: loop(() => rawSpmv(0x1000, 0, alpha, A.descriptor, xd.descriptor, beta, yd.descriptor, 0, 0, 0)),
      raw: loop(() => cusparseRaw.cusparseSpMV(0x1000 as never, 0, alpha, A.descriptor, xd.descriptor, beta, yd.descriptor, 0, 0, 0)),
      typed: loop(() => typed(0x1000 as never, 0, alpha, A.descriptor, xd.descriptor, beta, yd.descriptor, 0, 0, 0)),
      'spmv(views)': loop(() => sparse.spmv(A, x, y)),
      'spmv(DenseVector)': loop(() => sparse.spmv(A, xd, yd)),
      'spmv(views, {alpha, beta})': loop(() => sparse.spmv(A, x, y, scaling)),
      'spmv, legacy stream': loop(() => onLegacy.spmv(A, x, y)),
    },
    calls: s.fn('fake_spmvs'),
    base: (k, med) => (['C', 'koffi', 'raw', 'typed'].includes(k) ? undefined : med.typed),
    baseName: 'typed',
    // the addresses never change: a repeated call must not re-point a descriptor
    still: { 'descriptor re-points (cusparseDnVecSetValues)': s.fn('fake_repoints') },
    close: () => [sparse, onLegacy, xd, yd, A].forEach((r) => r.close()),
  };
}

const BENCHES: Record<string, (s: StandIn) => CpuBench> = { blas: blasBench, fft: fftBench, sparse: sparseBench };

function main(): void {
  const which = process.argv.slice(2);
  for (const w of which) if (!(w in BENCHES)) throw new RangeError(`math-cpu: unknown library '${w}' (blas, fft or sparse)`);
  const s = standIn();
  for (const name of which.length ? which : Object.keys(BENCHES)) {
    const b = BENCHES[name](s);
    const run = runPasses(b);
    const rows = run.names.map((k) => {
      const base = b.base(k, run.med);
      return [k, fmt(run.med[k], 1), base === undefined ? '' : fmt(run.med[k] - base, 1)];
    });
    const clock = CPU_CLOCK ? 'process CPU time' : 'wall clock';
    console.log(`\nJS side of ${b.title} (stand-in C functions; ${OPS} calls per pass, median of ${ROUNDS}, ${clock}), ns per call:\n`);
    console.log(table(['row', 'ns/call', `over ${b.baseName}`], rows));
    console.log(JSON.stringify({ impl: `math-${name}-cpu`, ops: OPS, medians: run.med }));
    b.close();
  }
}

try {
  main();
} catch (e) {
  console.error(`math-cpu: ${reason(e)}`);
  process.exit(1);
}
