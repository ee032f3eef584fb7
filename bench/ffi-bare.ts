// The floor of a runtime's own FFI under cuda-ts (issue 26 §2): the driver's functions declared straight
// to bun:ffi or Deno.dlopen, called with precomputed handles and addresses, no adapter, no checks: what a
// call costs before cuda-ts adds anything. bench/runtime-child.ts runs these passes beside C and cuda-ts's
// layers when BENCH_CHILD_BARE=1 (implementation `ffi-bare`), so the gap between C and the raw layer
// splits into the FFI's own part and cuda-ts's part. Rows: the trivial calls and the launches.
// Self-contained: no cuda-ts code (that is the point).
import type { Passes, State } from './gpu-common';

type Fn = (...a: unknown[]) => number;
interface Globals {
  Bun?: unknown;
  Deno?: {
    dlopen(path: string, symbols: Record<string, { parameters: string[]; result: string }>): { symbols: Record<string, Fn> };
    UnsafePointer: { of(b: ArrayBufferView): unknown; value(p: unknown): bigint | number };
  };
}

/** The driver's functions the rows call, through this runtime's FFI, and how a pointer is passed to them. */
interface Bare {
  fns: Record<'ctx' | 'attr' | 'launch' | 'sync', Fn>;
  /** A handle or address as the FFI takes it fastest (Deno: a bigint; Bun: a number). */
  word: (v: number | bigint) => unknown;
  /** The address of memory (see offHeap). */
  addressOf: (b: ArrayBufferView) => number | bigint;
  how: string;
}

/** The driver library cuda-ts binds: CUDA_TS_DRIVER_LIBRARY where set, else the loader's libcuda.so.1. */
const LIBCUDA = process.env.CUDA_TS_DRIVER_LIBRARY || 'libcuda.so.1';

/**
 * `b`, its bytes moved off the JS heap for good: V8 keeps a small typed array's bytes on its heap, where
 * a collection moves them, so an address taken before would go stale and C would write into whatever
 * lies there. Reading `.buffer` gives the array an ArrayBuffer of its own, off the heap; cuda-ts's
 * adapter does the same.
 */
function offHeap<T extends ArrayBufferView>(b: T): T {
  void b.buffer;
  return b;
}

function denoBare(): Bare {
  const d = (globalThis as Globals).Deno!;
  const w = 'u64';
  const s = d.dlopen(LIBCUDA, {
    cuCtxGetCurrent: { parameters: [w], result: 'i32' },
    cuDeviceGetAttribute: { parameters: [w, 'i32', 'i32'], result: 'i32' },
    cuLaunchKernel: { parameters: [w, 'u32', 'u32', 'u32', 'u32', 'u32', 'u32', 'u32', w, w, w], result: 'i32' },
    cuStreamSynchronize: { parameters: [w], result: 'i32' },
  }).symbols;
  return {
    fns: { ctx: s.cuCtxGetCurrent, attr: s.cuDeviceGetAttribute, launch: s.cuLaunchKernel, sync: s.cuStreamSynchronize },
    word: (v) => BigInt(v),
    addressOf: (b) => BigInt(d.UnsafePointer.value(d.UnsafePointer.of(offHeap(b)))),
    how: 'Deno.dlopen, u64 parameters given bigints',
  };
}

function bunBare(): Bare {
  const ffi = require('bun:ffi') as {
    dlopen(p: string, s: Record<string, { args: string[]; returns: string }>): { symbols: Record<string, Fn> };
    ptr(b: ArrayBufferView): number;
  };
  const s = ffi.dlopen(LIBCUDA, {
    cuCtxGetCurrent: { args: ['ptr'], returns: 'i32' },
    cuDeviceGetAttribute: { args: ['ptr', 'i32', 'i32'], returns: 'i32' },
    cuLaunchKernel: { args: ['ptr', 'u32', 'u32', 'u32', 'u32', 'u32', 'u32', 'u32', 'ptr', 'ptr', 'ptr'], returns: 'i32' },
    cuStreamSynchronize: { args: ['ptr'], returns: 'i32' },
  }).symbols;
  return {
    fns: { ctx: s.cuCtxGetCurrent, attr: s.cuDeviceGetAttribute, launch: s.cuLaunchKernel, sync: s.cuStreamSynchronize },
    word: (v) => Number(v),
    addressOf: (b) => ffi.ptr(offHeap(b)),
    how: 'bun:ffi, ptr parameters given numbers',
  };
}

/** The bare passes under Bun or Deno, or why there are none (Node: bench/gpu.ts has koffi's and node:ffi's own rows). */
export function barePasses(S: State): { passes: Passes; how: string } | string {
  const g = globalThis as Globals;
  const bare = g.Deno ? denoBare() : g.Bun ? bunBare() : 'Node: koffi and node:ffi have their own rows in bench/gpu.ts';
  if (typeof bare === 'string') return bare;
  const { ctx, attr, launch, sync } = bare.fns;
  // Every pass reads its out-array (and a launch its argument table) after its loop: an FFI given an
  // address does not keep the memory alive, and an array only its address outlived was collected and
  // written after free (valgrind, Deno: the first version of this file corrupted the heap so).
  const out64 = new BigUint64Array(new ArrayBuffer(8));
  const out32 = new Int32Array(new ArrayBuffer(8));
  const pOut64 = bare.word(bare.addressOf(out64));
  const pOut32 = bare.word(bare.addressOf(out32));
  const stream = bare.word(S.stream);
  const zero = bare.word(0);
  const BATCH = S.BATCH;
  const fail = (what: string, st: number): never => {
    throw new Error(`${what} failed: CUresult ${st}`);
  };
  const launches = (fn: number, params: BigUint64Array | null) => {
    const f = bare.word(fn);
    const p = params ? bare.word(bare.addressOf(params)) : zero;
    return (ops: number) => {
      for (let i = 0; i < ops; i++) {
        const st = launch(f, 1, 1, 1, 1, 1, 1, 0, stream, p, zero);
        if (st !== 0) fail('cuLaunchKernel', st);
        if ((i + 1) % BATCH === 0 && sync(stream) !== 0) fail('cuStreamSynchronize', -1);
      }
      if (ops % BATCH && sync(stream) !== 0) fail('cuStreamSynchronize', -1);
      if (params && params.length === 0) fail('kernel parameters', -1);
    };
  };
  const passes: Passes = {
    cuCtxGetCurrent: (ops) => {
      for (let i = 0; i < ops; i++) {
        const st = ctx(pOut64);
        if (st !== 0) fail('cuCtxGetCurrent', st);
      }
      if (out64[0] === 0n) fail('cuCtxGetCurrent: no context', 0);
    },
    cuDeviceGetAttribute: (ops) => {
      const a = S.attrSm;
      const dev = S.dev;
      for (let i = 0; i < ops; i++) {
        const st = attr(pOut32, a, dev);
        if (st !== 0) fail('cuDeviceGetAttribute', st);
      }
      if (out32[0] <= 0) fail('cuDeviceGetAttribute: no SMs', 0);
    },
    launch_0args: launches(S.fEmpty, null),
    launch_4args: launches(S.fArgs4, S.params4),
    launch_16args: launches(S.fArgs16, S.params16),
  };
  return { passes, how: bare.how };
}
