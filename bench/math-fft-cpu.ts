// What the JS side adds to a cuFFT execution, without a GPU: FftPlan.forward and the fft() one-liner run
// their real code (the binder, koffi, the typed layer, the door's context binding) against stand-ins
// for libcufft and cuCtxGetCurrent/cuCtxSetCurrent that do nothing (bench/native/fake-cufft.c), so
// each row's time per call is FFI + JS; the C row is the same no-op called from a C loop, `koffi` the
// bare FFI call from a JS loop, `typed` the generated typed function. A row's excess over `koffi` is
// what the wrapper adds (with the FFI transition itself, what bench/math-fft-rand.ts's fft_c2c_1k
// ratio is made of).
//   npx tsx bench/math-fft-cpu.ts        (gcc; OPS=200000 calls per pass, REPS=7 passes, median per call of
//   this process's CPU time, which a shared machine's other processes do not inflate as they do wall time)
import koffi from 'koffi';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as drv from '../src/driver';
import { Context } from '../src/context';
import { Core } from '../src/lifecycle';
import { DeviceBuffer } from '../src/memory/device-buffer';
import { StridedView } from '../src/memory/strided-view';
import { Stream } from '../src/stream';
import { FftPlan } from '../src/math/fft';
import { fft } from '../src/math/fft-functions';
import { loadCufft } from '../src/releases';
import { REPO_ROOT, fmt, median, table } from './common';

const OPS = Number(process.env.OPS ?? 200_000);
const ROUNDS = Number(process.env.REPS ?? 7);
const CONTEXT_HANDLE = 0x5a5a000;

/** Builds the stand-in library; its path. */
function build(): string {
  const dir = join(tmpdir(), 'cuda-ts-fft-cpu');
  mkdirSync(dir, { recursive: true });
  const so = join(dir, 'libfakecufft.so');
  const r = spawnSync(process.env.CC || 'gcc', ['-O2', '-shared', '-fPIC', join(REPO_ROOT, 'bench', 'native', 'fake-cufft.c'), '-o', so], { encoding: 'utf8' });
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

/** This process's CPU time in ns: on a shared machine, wall time counts the other processes' turns too. */
function cpuNs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
}

function main(): void {
  const so = build();
  process.env.CUDA_TS_CUFFT_LIBRARY = so; // read when cuFFT first loads, below
  const lib = koffi.load(so);
  for (const name of ['cuCtxGetCurrent', 'cuCtxSetCurrent']) drv.provideNative(name, lib.func(name, 'int', [name === 'cuCtxGetCurrent' ? 'void *' : 'uintptr_t']) as never);
  const rawExec = lib.func('cufftExecC2C', 'int', ['int32_t', 'void *', 'void *', 'int32_t']) as (...a: unknown[]) => number;
  const cPass = lib.func('fake_fft_pass', 'int', ['int', 'uint64_t', 'uint64_t', 'long']) as (...a: unknown[]) => number;
  const execs = lib.func('fake_cufft_execs', 'long', []) as () => number;

  const ctx = fakeContext();
  ctx.bind();
  const stream = Stream.adoptCreated(0x7e57000 as drv.CUstream, ctx);
  const legacy = Stream.legacyDefault(ctx);
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
    koffi: (ops) => { for (let i = 0; i < ops; i++) rawExec(h, 0x7f0000000000, 0x7f0000100000, -1); },
    typed: (ops) => { for (let i = 0; i < ops; i++) typed(h, at.input, at.output, -1); },
    'forward(buffers)': (ops) => { for (let i = 0; i < ops; i++) plan.forward(sx, sy); },
    'forward(views)': (ops) => { for (let i = 0; i < ops; i++) plan.forward(vx, vy); },
    'forward, legacy stream': (ops) => { for (let i = 0; i < ops; i++) onLegacy.forward(sx, sy); },
    'fft(view, {out, stream})': (ops) => { for (let i = 0; i < ops; i++) fft(vx, oneLiner); },
  };
  const names = Object.keys(passes);
  const ns: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
  const before = execs();
  for (const k of names) passes[k](OPS / 10);
  for (let r = 0; r < ROUNDS; r++) {
    for (let j = 0; j < names.length; j++) {
      const k = names[(r + j) % names.length];
      const t0 = cpuNs();
      passes[k](OPS);
      ns[k].push((cpuNs() - t0) / OPS);
    }
  }
  const expected = names.length * (OPS / 10 + ROUNDS * OPS);
  if (execs() - before !== expected) throw new Error(`the fake cufftExecC2C ran ${execs() - before} times, expected ${expected}`);
  const med = Object.fromEntries(names.map((k) => [k, median(ns[k])]));
  const rows = names.map((k) => [k, fmt(med[k], 1), k === 'C' || k === 'koffi' ? '' : fmt(med[k] - med.koffi, 1)]);
  console.log(`\nJS side of a 1k C2C cufftExecC2C (stand-in C functions; ${OPS} calls per pass, median of ${ROUNDS}), ns per call:\n`);
  console.log(table(['row', 'ns/call', 'over koffi'], rows));
  console.log(JSON.stringify({ impl: 'math-fft-cpu', ops: OPS, medians: med }));
  plan.close();
  onLegacy.close();
}

main();
