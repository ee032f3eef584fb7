// What the GPU benchmark (bench/gpu.ts) measures and on what: its rows, the state the passes share,
// the C-shaped API they call, and the untimed setup through the typed layer.
import koffi from 'koffi';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALLOC_BYTES, BATCH, COPY_BYTES, REPO_ROOT, reason, scaled } from './common';
import type { Loader } from './startup';

export type Driver = typeof import('../generated/13.0/driver/index');
export type Raw = typeof import('../generated/13.0/driver/raw');

export const LOADER = (process.env.BENCH_LOADER as Loader) || 'js';
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim())) : undefined;
export const wants = (name: string) => !ONLY || ONLY.has(name);

export const SAXPY = `extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
`;

/** The C-shaped functions the raw passes call: koffi declarations or cuda-ts's raw layer. */
export interface RawApi {
  cuCtxGetCurrent(out: BigUint64Array): number;
  cuDeviceGetAttribute(out: Int32Array, attr: number, dev: number): number;
  cuLaunchKernel(
    f: number,
    gx: number,
    gy: number,
    gz: number,
    bx: number,
    by: number,
    bz: number,
    shmem: number,
    stream: number,
    params: unknown,
    extra: unknown,
  ): number;
  cuStreamSynchronize(stream: number): number;
  cuEventRecord(ev: number, stream: number): number;
  cuEventSynchronize(ev: number): number;
  cuEventElapsedTime(out: Float32Array, a: number, b: number): number;
  cuMemAllocAsync(out: BigUint64Array, bytes: number, stream: number): number;
  cuMemFreeAsync(p: number, stream: number): number;
  cuMemcpyHtoDAsync(dst: number, src: unknown, bytes: number, stream: number): number;
  cuMemcpyDtoHAsync(dst: unknown, src: number, bytes: number, stream: number): number;
}

export interface State {
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
  /** Whether the 256 MiB copy rows are set up (dBig, hPinned and hPageable allocated; else 0 and empty). */
  copies: boolean;
}

export type Passes = Record<string, (ops: number) => void>;

/**
 * Implementations' passes gathered one by one: `attempt(name, make)` keeps what `make` returns, or the
 * reason it gave (a string) or threw, as a note; names `wanted` refuses are left out.
 */
export function passCollector(wanted: (name: string) => boolean = () => true): {
  impls: Record<string, Passes>;
  notes: Record<string, string>;
  attempt: (name: string, make: () => Passes | string) => void;
} {
  const impls: Record<string, Passes> = {};
  const notes: Record<string, string> = {};
  const attempt = (name: string, make: () => Passes | string): void => {
    if (!wanted(name)) return;
    try {
      const p = make();
      if (typeof p === 'string') notes[name] = p;
      else impls[name] = p;
    } catch (e) {
      notes[name] = reason(e);
    }
  };
  return { impls, notes, attempt };
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
export const ROWS: [name: string, ops: () => number, warm: () => number, unit: 'ns' | 'GB/s', bytes: number, granule: number][] = [
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

export function findPtx(): string {
  for (const p of [process.env.BENCH_PTX, join(REPO_ROOT, 'bench', 'native', 'kernels.ptx')]) if (p && existsSync(p)) return p;
  throw new Error('kernels.ptx not found (set BENCH_PTX)');
}

/** The rows that copy 256 MiB: the only ones that need the copy buffers of {@link setup}. */
export const COPY_ROWS: readonly string[] = ROWS.filter((r) => r[3] === 'GB/s').map((r) => r[0]);

/** Whether any of `rows` is a copy row. */
export function wantsCopies(rows: readonly string[]): boolean {
  return rows.some((r) => COPY_ROWS.includes(r));
}

/**
 * Shared setup through the typed layer (not timed). `copies: false` leaves out the 256 MiB buffers of
 * the copy rows (and their passes): a process that times only calls and launches (bench/runtime-child.ts)
 * should not hold 256 MiB of JS memory it never copies, which V8 counts as external memory pressure and
 * answers with incremental marking, concurrent with the rows (`--trace-gc` under Deno: 0.75 s of it).
 */
export function setup(cu: Driver, { copies = true }: { copies?: boolean } = {}): { S: State; meta: Record<string, unknown>; cleanup: () => void } {
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
  const dBig = copies ? cu.cuMemAlloc(COPY_BYTES) : 0;
  const hPinned = copies ? cu.cuMemAllocHost(COPY_BYTES) : 0;
  if (copies) new Uint8Array(koffi.view(hPinned, COPY_BYTES)).fill(1);
  const hPageable = copies ? new Uint8Array(COPY_BYTES).fill(2) : new Uint8Array(0);
  const S: State = {
    dev,
    stream,
    fEmpty,
    fArgs4,
    fArgs16,
    params4,
    params16,
    evStart,
    evStop,
    dBig,
    hPinned,
    hPageable,
    attrSm: A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
    BATCH,
    ALLOC_BYTES,
    COPY_BYTES,
    copies,
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
    if (dBig) cu.cuMemFree(dBig);
    if (hPinned) cu.cuMemFreeHost(hPinned);
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
