// What bench/gpu.ts (Node) and bench/runtime-child.ts (Bun, Deno) share: the rows, the state the passes
// use, the untimed set-up through the typed layer, C's passes from libbench.so, and the interleaved loop.
import koffi from 'koffi';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALLOC_BYTES, BATCH, COPY_BYTES, type MeasuredRow, REPO_ROOT, log, reason, scaled } from './common';
import { measureInterleaved } from './interleave';
import { type FloorRecord, RowPinner, floorSettings, floorWarm } from './floor';
import type { Loader } from './startup';

export type Driver = typeof import('../generated/13.0/driver/index');
export type Raw = typeof import('../generated/13.0/driver/raw');

export const LOADER = (process.env.BENCH_LOADER as Loader) || 'js';

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
/** Rows by implementation, as a process reports them. */
export type RowsByImpl = Record<string, Record<string, MeasuredRow | { skipped: string }>>;

/**
 * Implementations' passes gathered one by one: `attempt(name, make)` keeps what `make` returns, or the
 * reason it gave (a string) or threw, as a note.
 */
export function passCollector(): {
  impls: Record<string, Passes>;
  notes: Record<string, string>;
  attempt: (name: string, make: () => Passes | string) => void;
} {
  const impls: Record<string, Passes> = {};
  const notes: Record<string, string> = {};
  const attempt = (name: string, make: () => Passes | string): void => {
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
 * The rows: name, bench.c's ops per repetition, warm-up ops, unit, bytes per op, and the granule (a
 * sub-block of the interleaved phase is a multiple of it: BATCH where a pass synchronizes every BATCH ops).
 * Warm-ups are longer than bench.c's so that every JS loop runs optimized code before the timed blocks.
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

/** kernels.ptx NUL-terminated, as cuModuleLoadData takes it. */
export function readPtx(): Buffer {
  return Buffer.concat([readFileSync(findPtx()), Buffer.from([0])]);
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
  const ptx = readPtx();
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

/** libbench.so's pinning of the timing thread: `pin(cpu)` (-1: back to the start-up affinity; 0 or -errno), `cpuNow()` (sched_getcpu). */
export type PinFns = { pin: (cpu: number) => number; cpuNow: () => number };
type NativeFns = PinFns & { init: (ptx: Uint8Array, ordinal: number) => number; pass: (row: Uint8Array, ops: number) => number; how: string };
type Symbols = Record<string, (...a: unknown[]) => number>;
type Dlopen = (path: string, symbols: Record<string, Record<string, unknown>>) => { symbols: Symbols };

/** libbench.so's functions: parameter and result types in bun:ffi's words (Deno calls a pointer 'buffer'). */
const NATIVE_SYMBOLS: Record<string, [string[], string]> = {
  bench_init: [['ptr', 'i32'], 'i32'],
  bench_pass: [['ptr', 'i64'], 'i32'],
  bench_pin_thread: [['i32'], 'i32'],
  bench_current_cpu: [[], 'i32'],
};

/** libbench.so's functions through the runtime's own FFI (Node: koffi). */
function nativeFunctions(lib: string): NativeFns {
  const g = globalThis as { Bun?: unknown; Deno?: { dlopen: Dlopen } };
  const declare = (f: (params: string[], result: string) => Record<string, unknown>) =>
    Object.fromEntries(Object.entries(NATIVE_SYMBOLS).map(([name, [params, result]]) => [name, f(params, result)]));
  let s: Symbols;
  let how: string;
  if (g.Bun) {
    s = (require('bun:ffi') as { dlopen: Dlopen }).dlopen(
      lib,
      declare((args, returns) => ({ args, returns })),
    ).symbols;
    how = 'bun:ffi dlopen';
  } else if (g.Deno) {
    s = g.Deno.dlopen(
      lib,
      declare((params, result) => ({ parameters: params.map((t) => (t === 'ptr' ? 'buffer' : t)), result })),
    ).symbols;
    how = 'Deno.dlopen';
  } else {
    const so = koffi.load(lib);
    const ctype: Record<string, string> = { ptr: 'void *', i32: 'int', i64: 'int64_t' };
    s = Object.fromEntries(
      Object.entries(NATIVE_SYMBOLS).map(([name, [params, result]]) => [
        name,
        so.func(`${ctype[result]} ${name}(${params.map((t) => ctype[t]).join(', ')})`) as never,
      ]),
    );
    how = 'koffi';
  }
  return { init: s.bench_init, pass: s.bench_pass, pin: s.bench_pin_thread, cpuNow: s.bench_current_cpu, how } as NativeFns;
}

/** bench.c's passes of `rows` in this process (libbench.so at `lib`), or why not; `pins` gets its pinning functions. */
export function nativePasses(lib: string, rows: readonly string[], meta: Record<string, unknown>, pins: Partial<PinFns>): Passes | string {
  const fns = nativeFunctions(lib);
  meta.native_c_loaded_by = fns.how;
  Object.assign(pins, { pin: fns.pin, cpuNow: fns.cpuNow });
  const cstr = (s: string) => new TextEncoder().encode(`${s}\0`);
  const st = fns.init(cstr(findPtx()), Number(process.env.BENCH_DEVICE ?? 0) | 0);
  if (st !== 0) return `bench_init failed (${st})`;
  const out: Passes = {};
  const pass = fns.pass;
  for (const name of rows) {
    const row = cstr(name);
    out[name] = (ops) => {
      if (pass(row, ops) !== 0) throw new Error(`bench_pass: no row ${name}`);
    };
  }
  return out;
}

/**
 * The rows of ROWS that `rows` names, each measured interleaved over `impls` (bench/interleave.ts), the
 * timing thread pinned for the per-operation rows (bench/floor.ts; the copies keep the start-up affinity).
 */
export function measureRows(
  impls: Record<string, Passes>,
  rows: readonly string[],
  reps: number,
  pins: Partial<PinFns>,
): { rows: RowsByImpl; floor: FloorRecord } {
  const settings = floorSettings();
  const pinner = new RowPinner(settings, pins.pin, pins.cpuNow);
  const out: RowsByImpl = {};
  try {
    for (const [name, ops, warm, unit, bytes, granule] of ROWS) {
      if (!rows.includes(name)) continue;
      const passes: Passes = {};
      for (const [impl, p] of Object.entries(impls)) if (p[name]) passes[impl] = p[name];
      pinner.beforeRow(name, unit);
      const got = measureInterleaved({ name, ops: ops(), warm: floorWarm(name, warm(), granule, settings), unit, bytesPerOp: bytes, granule, passes }, reps);
      pinner.afterRow();
      for (const [impl, r] of Object.entries(got)) {
        (out[impl] ??= {})[name] = 'median' in r ? { ...r, interleaved: true } : r;
        log(`${impl.padEnd(24)} ${name.padEnd(24)} ${'median' in r ? `${r.median.toFixed(3).padStart(12)} ${unit}` : `skipped: ${r.skipped}`}`);
      }
    }
  } finally {
    pinner.release(); // later work and the processes started after keep the start-up affinity
  }
  return { rows: out, floor: pinner.record };
}
