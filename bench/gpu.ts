// GPU part of the benchmark suite: the rows of bench/native/bench.c through cuda-ts's raw layer, its typed
// layer, a hand-declared koffi function (the floor a binding over koffi can reach) and the objects layer,
// plus NVRTC compile, `await stream.synchronized()` latency, and import + first call in a fresh process.
//
//   npx tsx bench/gpu.ts [out.json]     (prints ONE JSON list on stdout when no path is given)
//   env: BENCH_PTX, BENCH_SCALE, BENCH_DEVICE (as bench.c), BENCH_LOADER=js|dist|tsx (default js),
//        BENCH_ONLY=koffi,cuda-ts-raw,cuda-ts-typed,cuda-ts-objects,startup
//
// Output: [{"impl": NAME, "meta": {...}, "rows": {"<row>": {median, unit, n, reps} | {skipped}}}, ...]
// with impl names koffi, cuda-ts-raw, cuda-ts-typed, cuda-ts-objects, cuda-ts-startup.
//
// Method: the one of bench.c (see its top comment): same PTX (bench/native/kernels.ptx, cuModuleLoadData),
// one primary context, one CU_STREAM_NON_BLOCKING stream; per row one untimed warm-up pass then timed
// passes (the interleaved phase below: BENCH_REPS repetitions, each split into sub-blocks, see
// bench/interleave.ts; rows outside it: 5 timed passes); launches grid 1x1x1 block 1x1x1, a cuStreamSynchronize after every 1000 launches inside the
// timed region; every status checked inside the loops; same loop counts (scaled by BENCH_SCALE).
// Kernel arguments: written once into one koffi.alloc block, a BigUint64Array table of their addresses
// passed as `void **kernelParams` (the void*[] of bench.c, built once).
//
// cuda-ts is loaded as compiled CommonJS by default (bench/.build/js, what tsc emits, see startup.ts):
// tsx's esbuild output turns every export into a getter and adds ~100-150 ns per call (bench/cpu.ts
// shows it), which is a property of tsx, not of the package.
//
// Fairness: the loops of koffi and cuda-ts-raw are the same source (rawPasses below) but compiled
// separately for each (re-evaluated from its text), so each has its own inline caches and neither
// pays for the other's call targets.
import koffi from 'koffi';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALLOC_BYTES, BATCH, COPY_BYTES, Impl, REPO_ROOT, type ImplResult, type MeasuredRow, log, measure, measureAsync, reason, scaled, writeJson } from './common';
import { hasDist, jsTree, loadModule, measureStartup, type Loader } from './startup';
import { BLOCKS, measureInterleaved, repetitionWords } from './interleave';
import { cpSync, rmSync } from 'node:fs';

type Driver = typeof import('../generated/13.0/driver/index');
type Raw = typeof import('../generated/13.0/driver/raw');

const LOADER = (process.env.BENCH_LOADER as Loader) || 'js';
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim())) : undefined;
const wants = (name: string) => !ONLY || ONLY.has(name);

const SAXPY = `extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
`;

/** The C-shaped functions the raw passes call: koffi declarations or cuda-ts's raw layer. */
interface RawApi {
  cuCtxGetCurrent(out: BigUint64Array): number;
  cuDeviceGetAttribute(out: Int32Array, attr: number, dev: number): number;
  cuLaunchKernel(f: number, gx: number, gy: number, gz: number, bx: number, by: number, bz: number, shmem: number, stream: number, params: unknown, extra: unknown): number;
  cuStreamSynchronize(stream: number): number;
  cuEventRecord(ev: number, stream: number): number;
  cuEventSynchronize(ev: number): number;
  cuEventElapsedTime(out: Float32Array, a: number, b: number): number;
  cuMemAllocAsync(out: BigUint64Array, bytes: number, stream: number): number;
  cuMemFreeAsync(p: number, stream: number): number;
  cuMemcpyHtoDAsync(dst: number, src: unknown, bytes: number, stream: number): number;
  cuMemcpyDtoHAsync(dst: unknown, src: number, bytes: number, stream: number): number;
}

interface State {
  dev: number;
  stream: number;
  fEmpty: number;
  fArgs4: number;
  fArgs16: number;
  params4: BigUint64Array;
  params16: BigUint64Array;
  evStart: number;
  evStop: number;
  dBig: number;
  hPinned: number;
  hPageable: Uint8Array;
  attrSm: number;
  BATCH: number;
  ALLOC_BYTES: number;
  COPY_BYTES: number;
}

type Passes = Record<string, (ops: number) => void>;

// Self-contained (re-evaluated from its source text for each implementation: no outer references).
function rawPasses(apiIn: RawApi, S: State): Passes {
  // The functions the passes call, copied into a small plain object: every implementation is called
  // the same way (as local bindings or ESM named imports would be), so the property lookup on a
  // module's exports (a dictionary of ~1,500 names for a generated module) is in no row. Inline:
  // fresh() recompiles this function from its source, without the module's scope.
  const api = {} as RawApi;
  for (const n of ['cuCtxGetCurrent', 'cuDeviceGetAttribute', 'cuEventElapsedTime', 'cuEventRecord', 'cuEventSynchronize', 'cuLaunchKernel', 'cuMemAllocAsync', 'cuMemFreeAsync', 'cuMemcpyDtoHAsync', 'cuMemcpyHtoDAsync', 'cuStreamSynchronize']) (api as unknown as Record<string, unknown>)[n] = (apiIn as unknown as Record<string, unknown>)[n];
  const out64 = new BigUint64Array(1);
  const out64lo = new Uint32Array(out64.buffer);
  const out32 = new Int32Array(1);
  const outF = new Float32Array(1);
  const fail = (what: string, st: number): never => {
    throw new Error(`${what} failed: CUresult ${st}`);
  };
  const stream = S.stream;
  const BATCH = S.BATCH;
  const launchBatched = (f: number, params: BigUint64Array | null) => (ops: number) => {
    for (let i = 0; i < ops; i++) {
      const st = api.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, params, null);
      if (st !== 0) fail('cuLaunchKernel', st);
      if ((i + 1) % BATCH === 0) {
        const s2 = api.cuStreamSynchronize(stream);
        if (s2 !== 0) fail('cuStreamSynchronize', s2);
      }
    }
    if (ops % BATCH) {
      const s2 = api.cuStreamSynchronize(stream);
      if (s2 !== 0) fail('cuStreamSynchronize', s2);
    }
  };
  const copy = (h2d: boolean, host: number | Uint8Array) => (ops: number) => {
    for (let i = 0; i < ops; i++) {
      const st = h2d ? api.cuMemcpyHtoDAsync(S.dBig, host, S.COPY_BYTES, stream) : api.cuMemcpyDtoHAsync(host, S.dBig, S.COPY_BYTES, stream);
      if (st !== 0) fail(h2d ? 'cuMemcpyHtoDAsync' : 'cuMemcpyDtoHAsync', st);
    }
    const s2 = api.cuStreamSynchronize(stream);
    if (s2 !== 0) fail('cuStreamSynchronize', s2);
  };
  return {
    cuCtxGetCurrent: (ops) => {
      for (let i = 0; i < ops; i++) {
        const st = api.cuCtxGetCurrent(out64);
        if (st !== 0) fail('cuCtxGetCurrent', st);
      }
    },
    cuDeviceGetAttribute: (ops) => {
      const dev = S.dev;
      const attr = S.attrSm;
      for (let i = 0; i < ops; i++) {
        const st = api.cuDeviceGetAttribute(out32, attr, dev);
        if (st !== 0) fail('cuDeviceGetAttribute', st);
      }
    },
    launch_0args: launchBatched(S.fEmpty, null),
    launch_4args: launchBatched(S.fArgs4, S.params4),
    launch_16args: launchBatched(S.fArgs16, S.params16),
    launch_sync: (ops) => {
      const f = S.fEmpty;
      for (let i = 0; i < ops; i++) {
        const st = api.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, null, null);
        if (st !== 0) fail('cuLaunchKernel', st);
        const s2 = api.cuStreamSynchronize(stream);
        if (s2 !== 0) fail('cuStreamSynchronize', s2);
      }
    },
    event_record_elapsed: (ops) => {
      const a = S.evStart;
      const b = S.evStop;
      for (let i = 0; i < ops; i++) {
        let st = api.cuEventRecord(a, stream);
        if (st !== 0) fail('cuEventRecord', st);
        st = api.cuEventRecord(b, stream);
        if (st !== 0) fail('cuEventRecord', st);
        st = api.cuEventSynchronize(b);
        if (st !== 0) fail('cuEventSynchronize', st);
        st = api.cuEventElapsedTime(outF, a, b);
        if (st !== 0) fail('cuEventElapsedTime', st);
      }
    },
    alloc_free_async_1MiB: (ops) => {
      const bytes = S.ALLOC_BYTES;
      for (let i = 0; i < ops; i++) {
        let st = api.cuMemAllocAsync(out64, bytes, stream);
        if (st !== 0) fail('cuMemAllocAsync', st);
        st = api.cuMemFreeAsync(out64lo[1] * 0x100000000 + out64lo[0], stream);
        if (st !== 0) fail('cuMemFreeAsync', st);
        if ((i + 1) % BATCH === 0) {
          st = api.cuStreamSynchronize(stream);
          if (st !== 0) fail('cuStreamSynchronize', st);
        }
      }
      if (ops % BATCH) {
        const s2 = api.cuStreamSynchronize(stream);
        if (s2 !== 0) fail('cuStreamSynchronize', s2);
      }
    },
    h2d_pinned_256MiB: copy(true, S.hPinned),
    d2h_pinned_256MiB: copy(false, S.hPinned),
    h2d_pageable_256MiB: copy(true, S.hPageable),
    d2h_pageable_256MiB: copy(false, S.hPageable),
  };
}

// Same rows through the typed layer (throws on failure, returns out-parameters).
function typedPasses(cuIn: Driver, S: State): Passes {
  const cu = {} as Driver; // as in rawPasses
  for (const n of ['cuCtxGetCurrent', 'cuDeviceGetAttribute', 'cuEventElapsedTime', 'cuEventRecord', 'cuEventSynchronize', 'cuLaunchKernel', 'cuMemAllocAsync', 'cuMemFreeAsync', 'cuMemcpyDtoHAsync', 'cuMemcpyHtoDAsync', 'cuStreamSynchronize']) (cu as unknown as Record<string, unknown>)[n] = (cuIn as unknown as Record<string, unknown>)[n];
  const outF = new Float32Array(1);
  const COPY_BYTES = S.COPY_BYTES;
  const ALLOC_BYTES = S.ALLOC_BYTES;
  const st = S.stream as unknown as import('../generated/13.0/driver/types').CUstream;
  const BATCH = S.BATCH;
  const launchBatched = (f: number, params: BigUint64Array | null) => (ops: number) => {
    const fn = f as unknown as import('../generated/13.0/driver/types').CUfunction;
    for (let i = 0; i < ops; i++) {
      cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st, params, null);
      if ((i + 1) % BATCH === 0) cu.cuStreamSynchronize(st);
    }
    if (ops % BATCH) cu.cuStreamSynchronize(st);
  };
  const dBig = S.dBig as unknown as import('../generated/13.0/driver/types').CUdeviceptr;
  const evA = S.evStart as unknown as import('../generated/13.0/driver/types').CUevent;
  const evB = S.evStop as unknown as import('../generated/13.0/driver/types').CUevent;
  const copy = (h2d: boolean, host: number | Uint8Array) => (ops: number) => {
    for (let i = 0; i < ops; i++) {
      if (h2d) cu.cuMemcpyHtoDAsync(dBig, host, COPY_BYTES, st);
      else cu.cuMemcpyDtoHAsync(host, dBig, COPY_BYTES, st);
    }
    cu.cuStreamSynchronize(st);
  };
  const attr = S.attrSm as import('../generated/13.0/driver/types').CUdevice_attribute;
  return {
    cuCtxGetCurrent: (ops) => {
      let acc = 0;
      for (let i = 0; i < ops; i++) acc += cu.cuCtxGetCurrent() === 0 ? 1 : 0;
      if (acc) throw new Error('cuCtxGetCurrent returned no context');
    },
    cuDeviceGetAttribute: (ops) => {
      let acc = 0;
      const dev = S.dev;
      for (let i = 0; i < ops; i++) acc += cu.cuDeviceGetAttribute(attr, dev);
      if (acc <= 0) throw new Error('cuDeviceGetAttribute returned no SMs');
    },
    launch_0args: launchBatched(S.fEmpty, null),
    launch_4args: launchBatched(S.fArgs4, S.params4),
    launch_16args: launchBatched(S.fArgs16, S.params16),
    launch_sync: (ops) => {
      const f = S.fEmpty as unknown as import('../generated/13.0/driver/types').CUfunction;
      for (let i = 0; i < ops; i++) {
        cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, st, null, null);
        cu.cuStreamSynchronize(st);
      }
    },
    event_record_elapsed: (ops) => {
      for (let i = 0; i < ops; i++) {
        cu.cuEventRecord(evA, st);
        cu.cuEventRecord(evB, st);
        cu.cuEventSynchronize(evB);
        outF[0] = cu.cuEventElapsedTime(evA, evB);
      }
    },
    alloc_free_async_1MiB: (ops) => {
      for (let i = 0; i < ops; i++) {
        cu.cuMemFreeAsync(cu.cuMemAllocAsync(ALLOC_BYTES, st), st);
        if ((i + 1) % BATCH === 0) cu.cuStreamSynchronize(st);
      }
      if (ops % BATCH) cu.cuStreamSynchronize(st);
    },
    h2d_pinned_256MiB: copy(true, S.hPinned),
    d2h_pinned_256MiB: copy(false, S.hPinned),
    h2d_pageable_256MiB: copy(true, S.hPageable),
    d2h_pageable_256MiB: copy(false, S.hPageable),
  };
}

/** Re-evaluates a self-contained function from its text, so that it gets its own feedback/JIT state. */
function fresh<F extends (...args: never[]) => unknown>(fn: F): F {
  // esbuild (tsx) may insert __name(...) calls when keeping names: give it an identity helper.
  return new Function('__name', `return (${fn.toString()});`)((f: unknown) => f) as F;
}

/**
 * Row list, loop counts of bench.c (ops per repetition), warm-up counts, and the granule: in the
 * interleaved phase a repetition's ops split into sub-blocks of a multiple of it (BATCH where the pass
 * synchronizes every BATCH ops, so that a sub-block amortizes the sync exactly as a whole pass does).
 * Warm-up: one untimed pass per implementation before the row, long enough that every JS loop runs
 * optimized code when the timed sub-blocks start: bench.c's counts (100 for launch_sync and
 * event_record_elapsed, 1000 launches, 100,000 trivial calls) are for C; on a loaded 2-core machine
 * bench/cpu.ts showed the typed layer's first repetition 30-100% slow after a 100,000-call warm-up
 * (optimized code not ready yet), in every run, old method and new.
 */
const ROWS: [name: string, ops: () => number, warm: () => number, unit: 'ns' | 'GB/s', bytes: number, granule: number][] = [
  ['cuCtxGetCurrent', () => scaled(1_000_000, 1000), () => scaled(500_000, 1000), 'ns', 0, 1000],
  ['cuDeviceGetAttribute', () => scaled(1_000_000, 1000), () => scaled(500_000, 1000), 'ns', 0, 1000],
  ['launch_0args', () => scaled(20_000, BATCH), () => 5 * BATCH, 'ns', 0, BATCH],
  ['launch_4args', () => scaled(20_000, BATCH), () => 5 * BATCH, 'ns', 0, BATCH],
  ['launch_16args', () => scaled(20_000, BATCH), () => 5 * BATCH, 'ns', 0, BATCH],
  ['launch_sync', () => scaled(5000, 100), () => 1000, 'ns', 0, 100],
  ['event_record_elapsed', () => scaled(5000, 100), () => 1000, 'ns', 0, 100],
  ['alloc_free_async_1MiB', () => scaled(20_000, BATCH), () => 5 * BATCH, 'ns', 0, BATCH],
  ['h2d_pinned_256MiB', () => scaled(4, 1), () => 1, 'GB/s', COPY_BYTES, 1],
  ['d2h_pinned_256MiB', () => scaled(4, 1), () => 1, 'GB/s', COPY_BYTES, 1],
  ['h2d_pageable_256MiB', () => scaled(2, 1), () => 1, 'GB/s', COPY_BYTES, 1],
  ['d2h_pageable_256MiB', () => scaled(2, 1), () => 1, 'GB/s', COPY_BYTES, 1],
];

async function runPasses(impl: Impl, passes: Passes): Promise<void> {
  for (const [name, ops, warm, unit, bytes] of ROWS) {
    const p = passes[name];
    if (!p) {
      impl.skip(name, 'not implemented for this implementation');
      continue;
    }
    await impl.row(name, () => measure(p, ops(), warm(), unit, bytes));
  }
}

function findPtx(): string {
  for (const p of [process.env.BENCH_PTX, join(REPO_ROOT, 'bench', 'native', 'kernels.ptx')]) if (p && existsSync(p)) return p;
  throw new Error('kernels.ptx not found (set BENCH_PTX)');
}

/** Shared setup through the typed layer (not timed). */
function setup(cu: Driver): { S: State; meta: Record<string, unknown>; cleanup: () => void } {
  const ptxPath = findPtx();
  const ptx = Buffer.concat([readFileSync(ptxPath), Buffer.from([0])]);
  cu.cuInit(0);
  const ordinal = Number(process.env.BENCH_DEVICE ?? 0) | 0;
  const dev = cu.cuDeviceGet(ordinal);
  const A = cu.CUdevice_attribute;
  const ccMajor = cu.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  const ccMinor = cu.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  const ctx = cu.cuDevicePrimaryCtxRetain(dev);
  cu.cuCtxSetCurrent(ctx);
  const stream = cu.cuStreamCreate(cu.CUstream_flags.CU_STREAM_NON_BLOCKING);
  const mod = cu.cuModuleLoadData(ptx);
  const fEmpty = cu.cuModuleGetFunction(mod, 'empty');
  const fArgs4 = cu.cuModuleGetFunction(mod, 'args4');
  const fArgs16 = cu.cuModuleGetFunction(mod, 'args16');
  const dA = cu.cuMemAlloc(4096);
  const dB = cu.cuMemAlloc(4096);
  // Argument values: one native block; [0] dA [8] dB [16] alpha f32 [20] n u32 [32 + 8i] p16[i].
  const block = koffi.alloc('uint8_t', 256);
  const base = Number(koffi.address(block));
  const view = new DataView(koffi.view(block, 256));
  view.setBigUint64(0, BigInt(dA), true);
  view.setBigUint64(8, BigInt(dB), true);
  view.setFloat32(16, 1.5, true);
  view.setUint32(20, 1024, true);
  for (let i = 0; i < 16; i++) view.setBigUint64(32 + 8 * i, BigInt(i & 1 ? dB : dA), true);
  const params4 = BigUint64Array.from([0, 8, 16, 20].map((o) => BigInt(base + o)));
  const params16 = BigUint64Array.from(Array.from({ length: 16 }, (_, i) => BigInt(base + 32 + 8 * i)));
  const evStart = cu.cuEventCreate(0);
  const evStop = cu.cuEventCreate(0);
  const dBig = cu.cuMemAlloc(COPY_BYTES);
  const hPinned = cu.cuMemAllocHost(COPY_BYTES);
  new Uint8Array(koffi.view(hPinned, COPY_BYTES)).fill(1);
  const hPageable = new Uint8Array(COPY_BYTES).fill(2);
  const S: State = {
    dev, stream, fEmpty, fArgs4, fArgs16, params4, params16, evStart, evStop, dBig, hPinned, hPageable,
    attrSm: A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, BATCH, ALLOC_BYTES, COPY_BYTES,
  };
  const meta = {
    device: cu.cuDeviceGetName(256, dev),
    compute_capability: `${ccMajor}.${ccMinor}`,
    driver_version: cu.cuDriverGetVersion(),
    ptx: ptxPath,
    loader: LOADER,
    node: process.version,
    koffi: koffi.version,
  };
  const cleanup = () => {
    cu.cuStreamSynchronize(stream);
    cu.cuMemFreeHost(hPinned);
    cu.cuMemFree(dBig);
    cu.cuMemFree(dA);
    cu.cuMemFree(dB);
    cu.cuEventDestroy(evStart);
    cu.cuEventDestroy(evStop);
    cu.cuModuleUnload(mod);
    cu.cuStreamDestroy(stream);
    koffi.free(block);
    // the primary context stays retained (the objects layer uses it next)
  };
  return { S, meta, cleanup };
}

/** Hand-declared koffi functions on the same libcuda (exported symbols, handles as numbers). */
function koffiApi(lib: ReturnType<typeof koffi.load>): RawApi & { asyncSync: ((s: number, cb: (e: unknown, r: number) => void) => void) } {
  const f = (decl: string) => lib.func(decl) as never;
  const sync = lib.func('int cuStreamSynchronize(uintptr_t hStream)');
  return {
    cuCtxGetCurrent: f('int cuCtxGetCurrent(void *pctx)'),
    cuDeviceGetAttribute: f('int cuDeviceGetAttribute(void *pi, int attrib, int dev)'),
    cuLaunchKernel: f('int cuLaunchKernel(uintptr_t f, uint gx, uint gy, uint gz, uint bx, uint by, uint bz, uint shmem, uintptr_t hStream, void *kernelParams, void *extra)'),
    cuStreamSynchronize: sync as never,
    cuEventRecord: f('int cuEventRecord(uintptr_t hEvent, uintptr_t hStream)'),
    cuEventSynchronize: f('int cuEventSynchronize(uintptr_t hEvent)'),
    cuEventElapsedTime: f('int cuEventElapsedTime_v2(void *pMilliseconds, uintptr_t hStart, uintptr_t hEnd)'),
    cuMemAllocAsync: f('int cuMemAllocAsync(void *dptr, uint64_t bytesize, uintptr_t hStream)'),
    cuMemFreeAsync: f('int cuMemFreeAsync(uintptr_t dptr, uintptr_t hStream)'),
    cuMemcpyHtoDAsync: f('int cuMemcpyHtoDAsync_v2(uintptr_t dst, void *src, uint64_t bytes, uintptr_t hStream)'),
    cuMemcpyDtoHAsync: f('int cuMemcpyDtoHAsync_v2(void *dst, uintptr_t src, uint64_t bytes, uintptr_t hStream)'),
    asyncSync: (s, cb) => (sync as unknown as { async: (s: number, cb: (e: unknown, r: number) => void) => void }).async(s, cb),
  };
}

/** NVRTC compile of SAXPY (create + compile + PTX size + PTX + destroy), ms each; C-shaped API. */
interface NvrtcRaw {
  nvrtcCreateProgram(prog: BigUint64Array, src: string, name: string, nh: number, h: null, n: null): number;
  nvrtcCompileProgram(prog: number, nopt: number, opts: BigUint64Array): number;
  nvrtcGetPTXSize(prog: number, size: BigUint64Array): number;
  nvrtcGetPTX(prog: number, buf: Uint8Array): number;
  nvrtcDestroyProgram(prog: BigUint64Array): number;
}
function nvrtcPass(api: NvrtcRaw, arch: string): (ops: number) => void {
  const opt = Buffer.from(`--gpu-architecture=${arch}\0`);
  const optBlock = koffi.alloc('uint8_t', opt.length);
  new Uint8Array(koffi.view(optBlock, opt.length)).set(opt);
  const opts = BigUint64Array.of(BigInt(koffi.address(optBlock)));
  const prog = new BigUint64Array(1);
  const size = new BigUint64Array(1);
  const ck = (what: string, st: number) => {
    if (st !== 0) throw new Error(`${what} failed: nvrtcResult ${st}`);
  };
  return (ops) => {
    for (let i = 0; i < ops; i++) {
      ck('nvrtcCreateProgram', api.nvrtcCreateProgram(prog, SAXPY, 'saxpy.cu', 0, null, null));
      const p = Number(prog[0]);
      try {
        ck('nvrtcCompileProgram', api.nvrtcCompileProgram(p, 1, opts));
        ck('nvrtcGetPTXSize', api.nvrtcGetPTXSize(p, size));
        const buf = new Uint8Array(Number(size[0]));
        ck('nvrtcGetPTX', api.nvrtcGetPTX(p, buf));
        if (!Buffer.from(buf.buffer).includes('.entry saxpy')) throw new Error('NVRTC output has no saxpy entry');
      } finally {
        api.nvrtcDestroyProgram(prog);
      }
    }
  };
}

// ---------------------------------------------------------------------------------------------
// Objects layer (src/, being written): loaded dynamically and feature-detected, so that this file
// compiles and runs whatever its state; anything missing becomes a skipped row with the reason.
// ---------------------------------------------------------------------------------------------
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

function loadObjects(): Any {
  if (existsSync(join(REPO_ROOT, 'src', 'index.ts'))) return loadModule<Any>('src/index', LOADER);
  const merged: Any = {};
  const parts = ['context', 'device', 'stream', 'event', 'memory', 'module', 'kernel', 'launch', 'program'];
  const found: string[] = [];
  for (const p of parts) {
    if (!existsSync(join(REPO_ROOT, 'src', `${p}.ts`))) continue;
    Object.assign(merged, loadModule<Any>(`src/${p}`, LOADER));
    found.push(p);
  }
  if (!found.length) throw new Error('no objects layer in src/ (src/index.ts missing)');
  merged.__parts = found;
  return merged;
}

/** The objects layer's copies as a pass: `ops` copies of `big` from (h2d) or to `host` on `stream`, then one wait. */
function objectCopies(big: Any, host: Any, h2d: boolean, stream: Any): (ops: number) => void {
  return (ops) => {
    for (let i = 0; i < ops; i++) {
      if (h2d) big.copyFrom(host, { stream });
      else big.copyTo(host, { stream });
    }
    stream.synchronize();
  };
}

/** The objects layer's event round trip as a pass: record a, record b, wait for b, read the time between. */
function eventRoundTrips(a: Any, b: Any, stream: Any): (ops: number) => void {
  return (ops) => {
    let ms = 0;
    for (let i = 0; i < ops; i++) {
      a.record(stream);
      b.record(stream);
      b.synchronize();
      ms += b.elapsedSince(a);
    }
    if (!(ms >= 0)) throw new Error('bad elapsed time');
  };
}

async function benchObjects(ptx: Buffer, cu: Driver, S: State | undefined, preset: Record<string, MeasuredRow | { skipped: string }> = {}): Promise<ImplResult> {
  const impl = new Impl('cuda-ts-objects');
  Object.assign(impl.rows, preset);
  const t0 = performance.now();
  const O = loadObjects();
  impl.meta.import_ms = Math.round((performance.now() - t0) * 100) / 100;
  impl.meta.exports = Object.keys(O).filter((k) => !k.startsWith('__')).sort();
  if (O.__parts) impl.meta.loaded = `src/{${O.__parts.join(',')}}.ts (no src/index.ts)`;
  const ordinal = Number(process.env.BENCH_DEVICE ?? 0) | 0;
  const dev = O.Device.get(ordinal);
  dev.setCurrent();
  const stream = O.Stream.create({ nonBlocking: true });
  impl.meta.device = dev.name;

  // Trivial calls through the objects API (informative: not the same operation as a bare C call).
  await impl.row('cuDeviceGetAttribute', () => {
    const n = scaled(1_000_000, 1000);
    return measure((ops) => {
      let acc = 0;
      for (let i = 0; i < ops; i++) acc += dev.multiprocessorCount;
      if (acc <= 0) throw new Error('no SMs');
    }, n, scaled(100_000, 1000));
  });

  // Kernels and launch through the objects API: declared signatures, one LaunchConfig, direct calls
  // (no argument arrays built per launch, as a user's hot loop would be written).
  const mod = O.Module.fromPTX(ptx.toString('utf8'));
  const kEmpty = mod.kernel('empty', []);
  const kArgs4 = mod.kernel('args4', ['ptr', 'ptr', 'f32', 'u32']);
  const kArgs16 = mod.kernel('args16', new Array(16).fill('ptr'));
  const cfg = new O.LaunchConfig({ grid: 1, block: 1 });
  const launch = O.launch as (...a: Any[]) => void;
  const dA = O.DeviceBuffer.alloc(4096);
  const dB = O.DeviceBuffer.alloc(4096);
  impl.meta.launch = 'launch(stream, new LaunchConfig({grid: 1, block: 1}), kernel, ...args) with a declared signature';
  const batched = (one: () => void) => (ops: number) => {
    for (let i = 0; i < ops; i++) {
      one();
      if ((i + 1) % BATCH === 0) stream.synchronize();
    }
    if (ops % BATCH) stream.synchronize();
  };
  const launchRows: [string, () => MeasuredRow][] = [
    ['launch_0args', () => measure(batched(() => launch(stream, cfg, kEmpty)), scaled(20_000, BATCH), BATCH)],
    ['launch_4args', () => measure(batched(() => launch(stream, cfg, kArgs4, dA, dB, 1.5, 1024)), scaled(20_000, BATCH), BATCH)],
    ['launch_16args', () => measure(batched(() => launch(stream, cfg, kArgs16, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB)), scaled(20_000, BATCH), BATCH)],
    ['launch_sync', () => measure((ops) => {
      for (let i = 0; i < ops; i++) {
        launch(stream, cfg, kEmpty);
        stream.synchronize();
      }
    }, scaled(5000, 100), 100)],
  ];
  for (const [name, thunk] of launchRows) await impl.row(name, thunk);

  const enqueue = () => launch(stream, cfg, kEmpty);
  impl.meta.synchronized_rows_launch = 'objects launch()';
  if (enqueue) {
    await impl.row('launch_blocking_synchronize', () => measure((ops) => {
      for (let i = 0; i < ops; i++) {
        enqueue();
        stream.synchronize();
      }
    }, scaled(5000, 100), 100));
    await impl.row('launch_await_synchronized', () => measureAsync(async (ops) => {
      for (let i = 0; i < ops; i++) {
        enqueue();
        await stream.synchronized();
      }
    }, scaled(5000, 100), 100));
    await impl.row('await_synchronized_idle', () => measureAsync(async (ops) => {
      for (let i = 0; i < ops; i++) await stream.synchronized();
    }, scaled(5000, 100), 100));
  }

  await impl.row('event_record_elapsed', () => {
    const a = O.Event.create();
    const b = O.Event.create();
    try {
      return measure(eventRoundTrips(a, b, stream), scaled(5000, 100), 100);
    } finally {
      a.close();
      b.close();
    }
  });

  await impl.row('alloc_free_async_1MiB', () => measure((ops) => {
    for (let i = 0; i < ops; i++) {
      O.DeviceBuffer.alloc(ALLOC_BYTES, { stream }).close();
      if ((i + 1) % BATCH === 0) stream.synchronize();
    }
    if (ops % BATCH) stream.synchronize();
  }, scaled(20_000, BATCH), BATCH));

  // Copies: DeviceBuffer.copyFrom / copyTo with a PinnedHostBuffer or a pageable Uint8Array, on the stream.
  let big: Any;
  let pinned: Any;
  try {
    big = O.DeviceBuffer.alloc(COPY_BYTES);
    pinned = O.PinnedHostBuffer.alloc(COPY_BYTES);
    const pageable = new Uint8Array(COPY_BYTES).fill(2);
    const copier = (h2d: boolean, host: Any) => objectCopies(big, host, h2d, stream);
    await impl.row('h2d_pinned_256MiB', () => measure(copier(true, pinned), scaled(4, 1), 1, 'GB/s', COPY_BYTES));
    await impl.row('d2h_pinned_256MiB', () => measure(copier(false, pinned), scaled(4, 1), 1, 'GB/s', COPY_BYTES));
    await impl.row('h2d_pageable_256MiB', () => measure(copier(true, pageable), scaled(2, 1), 1, 'GB/s', COPY_BYTES));
    await impl.row('d2h_pageable_256MiB', () => measure(copier(false, pageable), scaled(2, 1), 1, 'GB/s', COPY_BYTES));
  } catch (e) {
    for (const r of ['h2d_pinned_256MiB', 'd2h_pinned_256MiB', 'h2d_pageable_256MiB', 'd2h_pageable_256MiB']) if (!impl.rows[r]) impl.skip(r, reason(e));
  } finally {
    try {
      stream.synchronize();
      big?.close();
      pinned?.close();
    } catch {
      /* reported by the rows */
    }
  }

  // NVRTC through the objects layer's Program, if present.
  if (O.Program) {
    await impl.row('nvrtc_compile_small', () => measure((ops) => {
      for (let i = 0; i < ops; i++) {
        const p = new O.Program(SAXPY, { name: 'saxpy.cu' });
        try {
          const out = p.compile?.({ target: 'ptx' }) ?? p.compile?.();
          if (!out) throw new Error('Program.compile returned nothing');
        } finally {
          p.close?.();
        }
      }
    }, 1, 1, 'ms'));
  } else impl.skip('nvrtc_compile_small', 'objects layer has no Program yet');

  try {
    stream.synchronize();
    dA.close();
    dB.close();
    stream.close();
  } catch (e) {
    impl.meta.cleanup_error = reason(e);
  }
  return impl.result();
}

// ---------------------------------------------------------------------------------------------
// Interleaved phase: the rows of bench.c through every implementation, their sub-blocks taking turns
// in rotating order within each repetition (bench/interleave.ts), C included through libbench.so
// (bench.c's passes, timed by this clock).
// ---------------------------------------------------------------------------------------------

/** bench.c's passes in this process (libbench.so from bench/native/build.sh), or why not. */
function nativePasses(ptxPath: string): Passes | string {
  let lib = process.env.BENCH_NATIVE_LIB;
  if (!lib || !existsSync(lib)) {
    const { spawnSync } = require('node:child_process') as typeof import('node:child_process');
    const dir = join(require('node:os').tmpdir(), 'cuda-ts-bench-inproc');
    const b = spawnSync('bash', [join(REPO_ROOT, 'bench', 'native', 'build.sh'), dir], { encoding: 'utf8' });
    lib = join(dir, 'libbench.so');
    if (b.status !== 0 || !existsSync(lib)) return `libbench.so not built: ${(b.stderr || '').trim().split('\n').slice(-2).join(' | ')}`;
  }
  const so = koffi.load(lib);
  const init = so.func('int bench_init(const char *ptx, int ordinal)');
  const pass = so.func('int bench_pass(const char *row, long ops)');
  const st = init(ptxPath, Number(process.env.BENCH_DEVICE ?? 0) | 0) as number;
  if (st !== 0) return `bench_init failed (${st})`;
  const out: Passes = {};
  for (const [name] of ROWS) {
    out[name] = (ops) => {
      if (pass(name, ops) !== 0) throw new Error(`bench_pass: no row ${name}`);
    };
  }
  return out;
}

/** The objects layer's passes of the shared rows (declared kernels, one LaunchConfig, direct calls). */
function objectsPasses(O: Any, ptx: Buffer): { passes: Passes; close: () => void } {
  const dev = O.Device.get(Number(process.env.BENCH_DEVICE ?? 0) | 0);
  dev.setCurrent();
  const stream = O.Stream.create({ nonBlocking: true });
  const mod = O.Module.fromPTX(ptx.toString('utf8'));
  const kEmpty = mod.kernel('empty', []);
  const kArgs4 = mod.kernel('args4', ['ptr', 'ptr', 'f32', 'u32']);
  const kArgs16 = mod.kernel('args16', new Array(16).fill('ptr'));
  const cfg = new O.LaunchConfig({ grid: 1, block: 1 });
  const launch = O.launch as (...a: Any[]) => void;
  const dA = O.DeviceBuffer.alloc(4096);
  const dB = O.DeviceBuffer.alloc(4096);
  const batched = (one: () => void) => (ops: number) => {
    for (let i = 0; i < ops; i++) {
      one();
      if ((i + 1) % BATCH === 0) stream.synchronize();
    }
    if (ops % BATCH) stream.synchronize();
  };
  const passes: Passes = {
    cuDeviceGetAttribute: (ops) => {
      let acc = 0;
      for (let i = 0; i < ops; i++) acc += dev.multiprocessorCount;
      if (acc <= 0) throw new Error('no SMs');
    },
    launch_0args: batched(() => launch(stream, cfg, kEmpty)),
    launch_4args: batched(() => launch(stream, cfg, kArgs4, dA, dB, 1.5, 1024)),
    launch_16args: batched(() => launch(stream, cfg, kArgs16, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB, dA, dB)),
    launch_sync: (ops) => {
      for (let i = 0; i < ops; i++) {
        launch(stream, cfg, kEmpty);
        stream.synchronize();
      }
    },
    alloc_free_async_1MiB: (ops) => {
      for (let i = 0; i < ops; i++) {
        O.DeviceBuffer.alloc(ALLOC_BYTES, { stream }).close();
        if ((i + 1) % BATCH === 0) stream.synchronize();
      }
      if (ops % BATCH) stream.synchronize();
    },
  };
  // The event and copy rows, as benchObjects measures them, so that they run interleaved with C too
  // (the copy target compares them per repetition). A failure here leaves them to benchObjects.
  const extras: { close(): void }[] = [];
  try {
    const a = O.Event.create();
    extras.push(a);
    const b = O.Event.create();
    extras.push(b);
    passes.event_record_elapsed = eventRoundTrips(a, b, stream);
  } catch (e) {
    log(`objects event_record_elapsed not interleaved: ${reason(e)}`);
  }
  try {
    const big = O.DeviceBuffer.alloc(COPY_BYTES);
    extras.push(big);
    const pinned = O.PinnedHostBuffer.alloc(COPY_BYTES);
    extras.push(pinned);
    const pageable = new Uint8Array(COPY_BYTES).fill(2);
    const copier = (h2d: boolean, host: Any) => objectCopies(big, host, h2d, stream);
    passes.h2d_pinned_256MiB = copier(true, pinned);
    passes.d2h_pinned_256MiB = copier(false, pinned);
    passes.h2d_pageable_256MiB = copier(true, pageable);
    passes.d2h_pageable_256MiB = copier(false, pageable);
  } catch (e) {
    log(`objects copies not interleaved: ${reason(e)}`);
  }
  return {
    passes,
    close: () => {
      stream.synchronize();
      for (const x of extras.reverse()) x.close();
      dA.close();
      dB.close();
      stream.close();
    },
  };
}

/**
 * A second copy of the compiled tree whose modules bind through node:ffi (CUDA_TS_FFI=node while it
 * loads): the same code as the koffi columns, in the same process, with its own Binders.
 */
function loadNodeFfiTree<T>(modulePath: string): T {
  const { root } = jsTree(['generated/13.0/driver/index', 'generated/13.0/driver/raw', 'src/index']);
  const copy = join(REPO_ROOT, 'bench', '.build', 'js-nodeffi');
  if (!existsSync(join(copy, `${modulePath}.js`))) {
    rmSync(copy, { recursive: true, force: true });
    cpSync(root, copy, { recursive: true });
  }
  const saved = process.env.CUDA_TS_FFI;
  process.env.CUDA_TS_FFI = 'node';
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(join(copy, `${modulePath}.js`)) as T;
  } finally {
    if (saved === undefined) delete process.env.CUDA_TS_FFI;
    else process.env.CUDA_TS_FFI = saved;
  }
}

/** Every implementation's passes, then ROWS measured interleaved; returns rows by implementation. */
function interleavedPhase(cu: Driver, S: State, ptx: Buffer, ptxPath: string, meta: Record<string, unknown>): { rows: Record<string, Record<string, MeasuredRow | { skipped: string }>>; notes: Record<string, string>; close: () => void } {
  const impls: Record<string, Passes> = {};
  const notes: Record<string, string> = {};
  const closers: (() => void)[] = [];
  const attempt = (name: string, make: () => Passes | string) => {
    if (!wants(name) && !wants(name.replace(/-nodeffi$/, ''))) return;
    try {
      const p = make();
      if (typeof p === 'string') notes[name] = p;
      else impls[name] = p;
    } catch (e) {
      notes[name] = reason(e);
    }
  };
  attempt('native-c-inproc', () => nativePasses(ptxPath));
  attempt('koffi', () => fresh(rawPasses)(koffiApi(cu.binder.library()), S));
  attempt('cuda-ts-raw', () => fresh(rawPasses)(loadModule<Raw>('generated/13.0/driver/raw', LOADER) as unknown as RawApi, S));
  attempt('cuda-ts-typed', () => fresh(typedPasses)(cu, S));
  attempt('cuda-ts-objects', () => {
    const o = objectsPasses(loadObjects(), ptx);
    closers.push(o.close);
    return o.passes;
  });
  const nodeWhy = (require('../support/nodeffi') as typeof import('../support/nodeffi')).nodeFfiUnavailableReason();
  for (const n of ['cuda-ts-raw-nodeffi', 'cuda-ts-typed-nodeffi', 'cuda-ts-objects-nodeffi']) {
    if (nodeWhy) {
      notes[n] = nodeWhy;
      continue;
    }
    attempt(n, () => {
      if (n === 'cuda-ts-raw-nodeffi') return fresh(rawPasses)(loadNodeFfiTree<RawApi>('generated/13.0/driver/raw'), S);
      if (n === 'cuda-ts-typed-nodeffi') return fresh(typedPasses)(loadNodeFfiTree<Driver>('generated/13.0/driver/index'), S);
      const o = objectsPasses(loadNodeFfiTree<Any>('src/index'), ptx);
      closers.push(o.close);
      return o.passes;
    });
  }
  const reps = Number(process.env.BENCH_REPS ?? 7) | 0 || 7;
  meta.interleaved = { implementations: Object.keys(impls), reps, blocks_per_rep: BLOCKS, repetition: repetitionWords(reps), not_run: notes };
  const rows: Record<string, Record<string, MeasuredRow | { skipped: string }>> = {};
  for (const [name, ops, warm, unit, bytes, granule] of ROWS) {
    const passes: Record<string, (ops: number) => void> = {};
    for (const [impl, p] of Object.entries(impls)) if (p[name]) passes[impl] = p[name];
    const got = measureInterleaved({ name, ops: ops(), warm: warm(), unit, bytesPerOp: bytes, granule, passes }, reps);
    for (const [impl, r] of Object.entries(got)) {
      (rows[impl] ??= {})[name] = 'median' in r ? { ...r, interleaved: true } : r;
      log(`${impl.padEnd(24)} ${name.padEnd(24)} ${'median' in r ? `${r.median.toFixed(3).padStart(12)} ${unit}` : `skipped: ${r.skipped}`}`);
    }
  }
  return { rows, notes, close: () => closers.forEach((c) => c()) };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const results: ImplResult[] = [];
  const skipAll = (names: string[], why: string) => {
    for (const n of names) if (wants(n)) results.push({ impl: n, meta: {}, rows: {}, skipped: why });
  };
  let cu: Driver | undefined;
  let S: State | undefined;
  let meta: Record<string, unknown> = {};
  let cleanup: (() => void) | undefined;
  let ptx: Buffer | undefined;
  try {
    cu = loadModule<Driver>('generated/13.0/driver/index', LOADER);
    ptx = Buffer.concat([readFileSync(findPtx()), Buffer.from([0])]);
    ({ S, meta, cleanup } = setup(cu));
    log(`device ${meta.device} (sm ${meta.compute_capability}), driver ${meta.driver_version}, cuda-ts loaded as ${LOADER}`);
  } catch (e) {
    skipAll(['koffi', 'cuda-ts-raw', 'cuda-ts-typed'], `setup failed: ${reason(e)}`);
  }

  let inter: ReturnType<typeof interleavedPhase> | undefined;
  if (cu && S && ptx && process.env.BENCH_INTERLEAVE !== '0') {
    try {
      inter = interleavedPhase(cu, S, ptx, findPtx(), meta);
    } catch (e) {
      log(`interleaved phase failed: ${reason(e)}`);
    }
  }
  const preset = (impl: Impl) => Object.assign(impl.rows, inter?.rows[impl.name] ?? {});
  if (inter) {
    for (const n of ['native-c-inproc', 'cuda-ts-raw-nodeffi', 'cuda-ts-typed-nodeffi', 'cuda-ts-objects-nodeffi']) {
      if (inter.rows[n]) results.push({ impl: n, meta: { ...meta, interleaved: true }, rows: inter.rows[n] });
      else if (inter.notes[n]) results.push({ impl: n, meta: {}, rows: {}, skipped: inter.notes[n] });
    }
  }

  if (cu && S) {
    const arch = `compute_${String(meta.compute_capability).replace('.', '')}`;
    // koffi, hand-declared
    if (wants('koffi')) {
      const impl = new Impl('koffi');
      preset(impl);
      Object.assign(impl.meta, meta, { how: 'lib.func() declarations on libcuda.so.1 (exported symbols), handles as uintptr_t numbers, preallocated typed-array out-params' });
      try {
        const api = koffiApi(cu.binder.library());
        await runPasses(impl, fresh(rawPasses)(api, S));
        // cuStreamSynchronize through koffi's .async (worker thread, callback on the event loop)
        const launch = api.cuLaunchKernel;
        const st = S;
        await impl.row('launch_async_synchronize', () => measureAsync(async (ops) => {
          for (let i = 0; i < ops; i++) {
            const r = launch(st.fEmpty, 1, 1, 1, 1, 1, 1, 0, st.stream, null, null);
            if (r !== 0) throw new Error(`cuLaunchKernel failed: ${r}`);
            await new Promise<void>((res, rej) => api.asyncSync(st.stream, (err, code) => (err || code ? rej(err ?? new Error(`cuStreamSynchronize ${code}`)) : res())));
          }
        }, scaled(2000, 100), 100));
        await impl.row('nvrtc_compile_small', () => {
          const nv = koffi.load(process.env.CUDA_TS_NVRTC_LIBRARY || 'libnvrtc.so.13');
          const api2: NvrtcRaw = {
            nvrtcCreateProgram: nv.func('int nvrtcCreateProgram(void *prog, const char *src, const char *name, int nh, void *h, void *n)') as never,
            nvrtcCompileProgram: nv.func('int nvrtcCompileProgram(uintptr_t prog, int n, void *opts)') as never,
            nvrtcGetPTXSize: nv.func('int nvrtcGetPTXSize(uintptr_t prog, void *size)') as never,
            nvrtcGetPTX: nv.func('int nvrtcGetPTX(uintptr_t prog, void *ptx)') as never,
            nvrtcDestroyProgram: nv.func('int nvrtcDestroyProgram(void *prog)') as never,
          };
          const pass = nvrtcPass(api2, arch);
          return measure(pass, 1, 1, 'ms');
        });
      } catch (e) {
        impl.meta.error = reason(e);
      }
      results.push(impl.result());
    }
    if (wants('cuda-ts-raw')) {
      const impl = new Impl('cuda-ts-raw');
      preset(impl);
      Object.assign(impl.meta, meta);
      try {
        await runPasses(impl, fresh(rawPasses)(loadModule<Raw>('generated/13.0/driver/raw', LOADER) as unknown as RawApi, S));
        await impl.row('nvrtc_compile_small', () => {
          const nv = loadModule<NvrtcRaw>('generated/13.0/nvrtc/raw', LOADER);
          return measure(nvrtcPass(nv, arch), 1, 1, 'ms');
        });
      } catch (e) {
        impl.meta.error = reason(e);
      }
      results.push(impl.result());
    }
    if (wants('cuda-ts-typed')) {
      const impl = new Impl('cuda-ts-typed');
      preset(impl);
      Object.assign(impl.meta, meta);
      try {
        await runPasses(impl, fresh(typedPasses)(cu, S));
        await impl.row('nvrtc_compile_small', () => {
          type Nv = typeof import('../generated/13.0/nvrtc/index');
          const nv = loadModule<Nv>('generated/13.0/nvrtc/index', LOADER);
          const opt = Buffer.from(`--gpu-architecture=${arch}\0`);
          const optBlock = koffi.alloc('uint8_t', opt.length);
          new Uint8Array(koffi.view(optBlock, opt.length)).set(opt);
          const opts = BigUint64Array.of(BigInt(koffi.address(optBlock)));
          void opts;
          const optList = [`--gpu-architecture=${arch}`]; // the typed layer takes the options as strings
          return measure((ops) => {
            for (let i = 0; i < ops; i++) {
              const prog = nv.nvrtcCreateProgram(SAXPY, 'saxpy.cu', [], null);
              try {
                nv.nvrtcCompileProgram(prog, optList);
                const buf = new Uint8Array(nv.nvrtcGetPTXSize(prog));
                nv.nvrtcGetPTX(prog, buf);
                if (!Buffer.from(buf.buffer).includes('.entry saxpy')) throw new Error('NVRTC output has no saxpy entry');
              } finally {
                nv.nvrtcDestroyProgram(prog);
              }
            }
          }, 1, 1, 'ms');
        });
      } catch (e) {
        impl.meta.error = reason(e);
      }
      results.push(impl.result());
    }
  }

  if (wants('cuda-ts-objects')) {
    try {
      if (!cu || !ptx) throw new Error('driver setup failed (see the other implementations)');
      results.push(await benchObjects(ptx, cu, S, inter?.rows['cuda-ts-objects']));
    } catch (e) {
      log(`cuda-ts-objects skipped: ${reason(e)}`);
      if (process.env.BENCH_DEBUG) console.error(e);
      results.push({ impl: 'cuda-ts-objects', meta: {}, rows: {}, skipped: reason(e) });
    }
  }
  try {
    inter?.close();
  } catch (e) {
    log(`interleaved cleanup: ${reason(e)}`);
  }
  try {
    cleanup?.();
  } catch (e) {
    log(`cleanup: ${reason(e)}`);
  }

  // Import + first call in fresh processes (cuDriverGetVersion needs no cuInit).
  if (wants('startup')) {
    const impl = new Impl('cuda-ts-startup');
    impl.meta.method = 'fresh `node -e` per sample: require() then first call, timed inside the child with performance.now(); median of 5 after 1 untimed; see bench/startup.ts';
    const loaders: Loader[] = hasDist('generated/13.0/driver/index') ? ['js', 'dist', 'tsx'] : ['js', 'tsx'];
    const startups: unknown[] = [];
    const one = async (row: string, what: string, mod: string, call: string, loader: Loader) => {
      await impl.row(`${row}_${loader}`, () => {
        const r = measureStartup(what, mod, call, loader);
        startups.push(r);
        if (r.result && typeof r.result === 'object' && 'error' in (r.result as object)) throw new Error(`first call failed: ${(r.result as { error: string }).error}`);
        return { median: r.median.total_ms, unit: 'ms', n: 1, reps: [r.median.total_ms], note: `require ${r.median.require_ms} ms + first call ${r.median.first_call_ms} ms; since process start ${r.median.process_ms} ms${r.js_source ? `; ${r.js_source}` : ''}` };
      });
    };
    for (const loader of loaders) {
      await one('import_first_call_driver', 'cuda-ts/driver: require + cuDriverGetVersion()', 'generated/13.0/driver/index', 'm.cuDriverGetVersion()', loader);
    }
    const objectsEntry = existsSync(join(REPO_ROOT, 'src', 'index.ts')) ? 'src/index' : existsSync(join(REPO_ROOT, 'src', 'device.ts')) ? 'src/device' : undefined;
    for (const loader of loaders) {
      if (!objectsEntry || (loader === 'dist' && !hasDist(objectsEntry))) {
        impl.skip(`import_first_call_objects_${loader}`, objectsEntry ? 'dist/ has no objects layer build' : 'no objects layer in src/');
        continue;
      }
      // First call that needs no cuInit: the driver version through the driver module the objects layer loaded.
      await one('import_first_call_objects', `objects (${objectsEntry}): require + driver version`, objectsEntry, `require(${JSON.stringify(join(loader === 'tsx' ? REPO_ROOT : loader === 'dist' ? join(REPO_ROOT, 'dist') : join(REPO_ROOT, 'bench', '.build', 'js'), 'generated', '13.0', 'driver', loader === 'tsx' ? 'index.ts' : 'index.js'))}).cuDriverGetVersion()`, loader);
    }
    impl.meta.details = startups;
    results.push(impl.result());
  }

  const outPath = process.argv[2];
  if (outPath) {
    writeJson(outPath, results);
    log(`wrote ${outPath}`);
  } else process.stdout.write(`${JSON.stringify(results)}\n`);
}

export { fresh, rawPasses, typedPasses, type RawApi, type State };

if (require.main === module) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
