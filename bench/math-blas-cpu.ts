// What the JS side adds to a cublasSgemm and a cublasLtMatmul, without a GPU: Blas.gemm and Matmul.execute
// run their real code (the binder, koffi, the typed layer, the door's context binding) against stand-ins for
// libcublas, libcublasLt and cuCtxGetCurrent/cuCtxSetCurrent that do nothing (bench/native/fake-cublas.c),
// so each row's time per call is FFI + JS. `C` is the same no-op called from a C loop, `koffi` the bare FFI
// call, `typed` the typed layer the object calls; a row minus `typed` is the object's own cost (what
// bench/math-blas.ts's gemm_64_f32 ratio is made of, beside the FFI transition and the typed layer).
//   npx tsx bench/math-blas-cpu.ts     (gcc; OPS=200000 calls per pass, REPS=7 passes, median per call;
//                                       process CPU time per pass, CLOCK=wall for the wall clock; ONLY=<text>
//                                       keeps the rows naming it, e.g. for node --cpu-prof)
import koffi from 'koffi';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as drv from '../src/driver';
import { Context } from '../src/context';
import { Core } from '../src/lifecycle';
import { DeviceBuffer } from '../src/memory/device-buffer';
import { Stream } from '../src/stream';
import { Blas } from '../src/math/blas';
import { Matmul } from '../src/math/matmul';
import { matrix } from '../src/math/matrix';
import { loadCublas, loadCublasLt } from '../src/releases';
import { REPO_ROOT, fmt, median, nowNs, table } from './common';

const OPS = Number(process.env.OPS ?? 200_000);
const ROUNDS = Number(process.env.REPS ?? 7);
/** This process's CPU time (default; steadier than the wall clock on a shared machine) or, with CLOCK=wall, the wall clock. */
const CPU_CLOCK = process.env.CLOCK !== 'wall';
const CONTEXT_HANDLE = 0x5a5a000;

/** Builds the stand-in library; its path. */
function build(): string {
  const dir = join(tmpdir(), 'cuda-ts-blas-cpu');
  mkdirSync(dir, { recursive: true });
  const so = join(dir, 'libfakecublas.so');
  const r = spawnSync(process.env.CC || 'gcc', ['-O2', '-shared', '-fPIC', join(REPO_ROOT, 'bench', 'native', 'fake-cublas.c'), '-o', so], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`gcc failed: ${r.stderr || String(r.error)}`);
  return so;
}

/** A Context over a fake handle (no constructor run), bound through the stand-in cuCtxGetCurrent. */
function fakeContext(): Context {
  const ctx = Object.create(Context.prototype) as Context;
  Object.assign(ctx, { core: new Core('Context', undefined), unusable: undefined, handle: CONTEXT_HANDLE, device: 0, primary: true, allocCache: undefined });
  return ctx;
}

class FakeBuffer extends DeviceBuffer {
  constructor(bytes: number, address: number, ctx: Context) {
    super('DeviceBuffer', address, bytes, ctx, () => undefined);
  }
}

type Pass = (ops: number) => void;

function main(): void {
  const so = build();
  process.env.CUDA_TS_CUBLAS_LIBRARY = so; // read when cuBLAS / cuBLASLt first load, below
  process.env.CUDA_TS_CUBLASLT_LIBRARY = so;
  const lib = koffi.load(so);
  for (const name of ['cuCtxGetCurrent', 'cuCtxSetCurrent']) drv.provideNative(name, lib.func(name, 'int', [name === 'cuCtxGetCurrent' ? 'void *' : 'uintptr_t']) as never);
  const rawSgemm = lib.func('cublasSgemm_v2', 'int', ['uintptr_t', 'int32_t', 'int32_t', 'int32_t', 'int32_t', 'int32_t', 'void *', 'uintptr_t', 'int32_t', 'uintptr_t', 'int32_t', 'void *', 'uintptr_t', 'int32_t']) as (...a: unknown[]) => number;
  const cPass = lib.func('fake_sgemm_pass', 'int', ['uint64_t', 'uint64_t', 'uint64_t', 'uint64_t', 'long']) as (...a: unknown[]) => number;
  const gemms = lib.func('fake_cublas_gemms', 'long', []) as () => number;
  const binds = lib.func('fake_cublas_binds', 'long', []) as () => number;

  const ctx = fakeContext();
  ctx.bind();
  const stream = Stream.adoptCreated(0x7e57000 as drv.CUstream, ctx);
  const legacy = Stream.legacyDefault(ctx);
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
    koffi: (ops) => { for (let i = 0; i < ops; i++) rawSgemm(h, 0, 0, 64, 64, 64, alpha, at(0), 64, at(1), 64, beta, at(2), 64); },
    typed: (ops) => { for (let i = 0; i < ops; i++) typed(h, 0, 0, 64, 64, 64, 1, at(0), 64, at(1), 64, 0, at(2), 64); },
    'Blas.gemm': (ops) => { for (let i = 0; i < ops; i++) blas.gemm(a, b, c); },
    'Blas.gemm {alpha, beta}': (ops) => { const o = { alpha: 2, beta: 0.5 }; for (let i = 0; i < ops; i++) blas.gemm(a, b, c, o); },
    'Blas.gemm, legacy stream': (ops) => { for (let i = 0; i < ops; i++) onLegacy.gemm(a, b, c); },
    'typed cublasLtMatmul': (ops) => { for (let i = 0; i < ops; i++) typedLt(0x1000 as never, 0x1001 as never, alpha, at(0), 0x1002 as never, at(1), 0x1003 as never, beta, at(2), 0x1004 as never, at(2), 0x1005 as never, algo, 0, 0, stream.handle as never); },
    'Matmul.execute': (ops) => { for (let i = 0; i < ops; i++) mm.execute(operands); },
  };
  const only = process.env.ONLY; // a substring: only the rows naming it (for a profile), plus typed
  const names = Object.keys(passes).filter((k) => only === undefined || k === 'typed' || k.includes(only));
  const ns: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  const before = gemms();
  for (const k of names) passes[k](OPS / 10);
  const bindsBefore = binds();
  for (let r = 0; r < ROUNDS; r++) {
    for (let j = 0; j < names.length; j++) {
      const k = names[(r + j) % names.length];
      const t0 = nowNs();
      const c0 = process.cpuUsage();
      passes[k](OPS);
      const cpu = process.cpuUsage(c0);
      ns[k].push(CPU_CLOCK ? ((cpu.user + cpu.system) * 1e3) / OPS : Number(nowNs() - t0) / OPS);
    }
  }
  const expected = names.length * (OPS / 10 + ROUNDS * OPS);
  if (gemms() - before !== expected) throw new Error(`the fake GEMMs ran ${gemms() - before} times, expected ${expected}`);
  const med = Object.fromEntries(names.map((k) => [k, median(ns[k])]));
  const base = (k: string): number | undefined => (k.startsWith('Blas') ? med.typed : k === 'Matmul.execute' ? med['typed cublasLtMatmul'] : undefined);
  const rows = names.map((k) => [k, fmt(med[k], 1), base(k) === undefined ? '' : fmt(med[k] - base(k)!, 1)]);
  console.log(`\nJS side of a cublasSgemm / cublasLtMatmul (stand-in C functions; ${OPS} calls per pass, median of ${ROUNDS}, ${CPU_CLOCK ? 'process CPU time' : 'wall clock'}), ns per call:\n`);
  console.log(table(['row', 'ns/call', 'over typed'], rows));
  console.log(`context binds (cuCtxSetCurrent) during the timed passes: ${binds() - bindsBefore}`);
  console.log(JSON.stringify({ impl: 'math-blas-cpu', ops: OPS, medians: med }));
  for (const r of [mm, blas, onLegacy]) r.close();
}

main();
