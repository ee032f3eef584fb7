// Kernel launch: the hot path. A launch validates, writes the arguments into the kernel's ArgPack
// (kernel-args.ts) and calls cuLaunchKernelEx with the CUlaunchConfig its LaunchConfig encoded once
// (launch-config.ts; cuLaunchKernel on a driver without it): no allocation for up to four arguments
// (use `launchArgs` with a reused array beyond that).
import { CudaSymbolError, koffi, type NativeFunction } from '../support';
import * as drv from './driver';
import { describe } from './describe';
import { DeviceBuffer, ownerOf } from './memory/device-buffer';
import { PinnedHostBuffer } from './memory/pinned-host-buffer';
import { Stream, toStream, type StreamLike } from './stream';
import type { Kernel } from './module';
import { anyCapture, captureOf } from './graph/capture';
import { validity } from './validity';
import { ArgPack, KERNEL, TypedArgValue, packForTypedArgs, writeU64 } from './kernel-args';
import { LaunchConfig, configOf, type LaunchConfigInit } from './launch-config';

// What every launch uses from other modules, held in module constants: an imported name is read off
// its module object at each use (a getter call in tsx's and esbuild's CommonJS), which costs this
// path several nanoseconds a name (measured under Bun, Deno and Node).
const LaunchConfigClass = LaunchConfig;
const kernelBrand: typeof KERNEL = KERNEL;
const StreamClass = Stream;
const counts = validity;
const capturing = anyCapture;
const bindHinted = drv.bindHinted;

/**
 * Launches `kernel` on `stream` with `args` (the hot path: validates, writes, one FFI call). `stream`
 * is a Stream or a stream-protocol object; undefined launches on the legacy default stream.
 * @param stream The stream to launch on, a Stream or a stream-protocol object (undefined: the legacy default stream).
 * @param config Grid, block, shared memory and launch attributes: a LaunchConfig, or the object one is made from (encoded on each call).
 * @param kernel The kernel to launch.
 * @param args The kernel's arguments in an array (or array-like): DeviceBuffers or addresses for pointers, numbers or bigints for scalars, `arg.*` values without a signature.
 * @param from Index in `args` of the first kernel argument (default 0).
 */
export function launchArgs(stream: StreamLike | undefined, config: LaunchConfig | LaunchConfigInit, kernel: Kernel, args: ArrayLike<unknown>, from = 0): void {
  const s = launchStream(stream, kernel);
  const cfg = config instanceof LaunchConfigClass ? config : configOf(config, kernel.launchLabel);
  const pack = kernel.argPack ?? packForUntyped(kernel, args, from, kernel.launchLabel);
  pack.write(args, from, kernel.launchLabel);
  if (capturing()) noteLaunch(kernel, s, args, from, args.length);
  submit(cfg, kernel, s, pack);
}

/**
 * {@link launchArgs} for `n` (at most four) arguments given one by one, with no array: what launch()
 * and Kernel.launch() call. @internal
 */
export function launchFew(
  stream: StreamLike | undefined,
  config: LaunchConfig | LaunchConfigInit,
  kernel: Kernel,
  n: number,
  a0: unknown,
  a1: unknown,
  a2: unknown,
  a3: unknown,
): void {
  // a kernel without a declared signature (or a value that is no kernel: launchArgs says so) takes the
  // array path, which lays its arguments out from their types
  const pack = (kernel as Kernel | undefined)?.argPack;
  if (pack === undefined) {
    launchArgs(stream, config, kernel, [a0, a1, a2, a3].slice(0, n), 0);
    return;
  }
  const s = launchStream(stream, kernel);
  const cfg = config instanceof LaunchConfigClass ? config : configOf(config, kernel.launchLabel);
  pack.writeFew(n, a0, a1, a2, a3, kernel.launchLabel);
  if (capturing()) noteLaunch(kernel, s, [a0, a1, a2, a3], 0, n);
  submit(cfg, kernel, s, pack);
}

/**
 * The stream a launch of `kernel` goes to, checked: the kernel is a Kernel; it, its module, the stream
 * and their context are open and usable; the stream belongs to the kernel's context. The full check
 * runs once per kernel, stream and validity count (./validity): a loop of launches then compares two
 * fields. The kernel remembers the stream by its Core, which does not keep the Stream object alive (a
 * stream left to the finalizer is not held back by the kernels launched on it).
 */
function launchStream(stream: StreamLike | undefined, kernel: Kernel): Stream | undefined {
  // The Kernel brand on Kernel.prototype (module.ts): as strict as instanceof, one property load, and no
  // run-time import of module.ts (which imports this module for Kernel.launch).
  if ((kernel as { [KERNEL]?: true } | null | undefined)?.[kernelBrand] !== true)
    throw new TypeError(`launch: kernel must be a Kernel, got ${describe(kernel)}`);
  const key = stream === undefined ? DEFAULT_STREAM : stream instanceof StreamClass ? stream.core : undefined;
  if (kernel.checkedEpoch === counts.epoch && kernel.checkedStream === key && key !== undefined) return stream as Stream | undefined;
  const ctx = kernel.check();
  const s = stream instanceof StreamClass ? stream : toStream(stream, `${kernel.launchLabel}: stream`);
  if (s !== undefined) {
    s.check('launch');
    if (s.context !== ctx) throw new TypeError(`${kernel.launchLabel}: the stream belongs to ${String(s.context)}, the kernel to ${String(ctx)}`);
  }
  // a protocol object's Stream is looked up again each time (its handle may change)
  if (key !== undefined) {
    kernel.checkedStream = key;
    kernel.checkedEpoch = counts.epoch;
  }
  return s;
}
/** What a kernel remembers for launches on the legacy default stream (no Stream). */
const DEFAULT_STREAM = {};

/** Enqueues the launch whose arguments `pack` holds (the kernel and stream checked, the arguments written). */
function submit(cfg: LaunchConfig, kernel: Kernel, s: Stream | undefined, pack: ArgPack): void {
  const ctx = kernel.module.context;
  const h = s === undefined ? 0 : s.handle;
  // A launch of a function of another context fails and enqueues nothing, so the cached binding is
  // enough here (the door binds for real and launches again when it was stale).
  bindHinted(ctx);
  let status = enqueue(cfg, kernel, h, pack);
  if (status !== 0 && drv.rebindIfStale(ctx, status)) status = enqueue(cfg, kernel, h, pack);
  if (status !== 0) throw drv.fail(ctx, launchEx || cfg.ex.attributes > 0 ? 'cuLaunchKernelEx' : 'cuLaunchKernel', status);
}

/** Registers what a launch uses with the capture its stream takes part in (the graph keeps it alive). */
function noteLaunch(kernel: Kernel, s: Stream | undefined, args: ArrayLike<unknown>, from: number, to: number): void {
  const holder = captureOf(kernel.module.context, s === undefined ? 0 : s.handle);
  if (holder === undefined) return;
  holder.core.hold(kernel.core);
  if (s !== undefined) holder.core.hold(s.core);
  for (let i = from; i < to; i++) {
    let v = args[i];
    if (v instanceof TypedArgValue) v = v.value;
    if (v instanceof DeviceBuffer) holder.core.hold(ownerOf(v).core);
    else if (v instanceof PinnedHostBuffer) holder.core.hold(v.core);
  }
}

/** The argument layout of an untyped launch, checked once against the kernel's parameters (cuFuncGetParamInfo). */
function packForUntyped(kernel: Kernel, args: ArrayLike<unknown>, from: number, what: string): ArgPack {
  const pack = packForTypedArgs(args, from, what);
  kernel.checkLayout(pack);
  return pack;
}

// The C functions of the launch path, resolved by the door and held here: a lookup per launch would
// cost more than this path's whole budget.
let cuLaunchKernel: NativeFunction | undefined;
let cuLaunchKernelEx: NativeFunction | undefined;
/**
 * Whether launches go through cuLaunchKernelEx (decided at the first launch): its four arguments
 * cost less to pass than cuLaunchKernel's eleven through either FFI (measured on the H200: koffi's
 * cuLaunchKernelEx with a pre-encoded config 1.056× C against cuLaunchKernel's 1.100×; node:ffi takes
 * four arguments as one direct call, eleven through a JS wrapper). cuLaunchKernel where the driver has
 * no cuLaunchKernelEx (before CUDA 12.0).
 */
let launchEx: boolean | undefined;
drv.onProvideNative(() => {
  cuLaunchKernel = cuLaunchKernelEx = launchEx = undefined;
});
function hasLaunchEx(): boolean {
  try {
    cuLaunchKernelEx ??= drv.native('cuLaunchKernelEx');
    return true;
  } catch (e) {
    if (e instanceof CudaSymbolError) return false;
    throw e;
  }
}

function enqueue(cfg: LaunchConfig, kernel: Kernel, h: number, pack: ArgPack): number {
  const ex = cfg.ex;
  if (!(launchEx ??= hasLaunchEx()) && ex.attributes === 0) {
    return (cuLaunchKernel ??= drv.native('cuLaunchKernel'))(
      kernel.handle,
      cfg.gx,
      cfg.gy,
      cfg.gz,
      cfg.bx,
      cfg.by,
      cfg.bz,
      cfg.sharedMemBytes,
      h,
      pack.table,
      null,
    );
  }
  if (ex.stream !== h) {
    // the stream of the config's last launch stays written: a loop on one stream writes it once
    writeU64(ex.view, 32, h);
    ex.stream = h;
  }
  return (cuLaunchKernelEx ??= drv.native('cuLaunchKernelEx'))(ex.bytes, kernel.handle, pack.table, null);
}

/**
 * `launch(stream, config, kernel, ...args)`: arguments typed by the kernel's signature or with `arg.*`.
 * For a kernel declared with a literal signature (`module.kernel('saxpy', ['ptr', 'f32', 'u32'])`) the
 * arguments are also checked by the compiler: a string where a pointer goes does not type-check.
 * @param stream The stream to launch on, a Stream or a stream-protocol object (undefined: the legacy default stream).
 * @param config Grid, block, shared memory and launch attributes: a LaunchConfig, or the object one is made from (encoded on each call).
 * @param kernel The kernel to launch (from Module.kernel).
 * @param args The kernel's arguments, in order: DeviceBuffers or addresses for pointers, numbers (or bigints for 64-bit integers) for scalars; `arg.f32(x)` and friends give the type of each when the kernel has no declared signature.
 * @example
 * ```ts
 * import { DeviceBuffer, LaunchConfig, Program, Stream, launch } from 'cuda-ts/objects';
 *
 * const source = 'extern "C" __global__ void axpy(float a, const float* x, float* y, unsigned n) {' +
 *   ' unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] += a * x[i]; }';
 * using program = new Program(source).compile();
 * using module = program.load();
 * using axpy = module.kernel('axpy', ['f32', 'ptr', 'ptr', 'u32']);
 * using stream = Stream.create();
 * using x = DeviceBuffer.from(new Float32Array([1, 2, 3]));
 * using y = DeviceBuffer.from(new Float32Array([10, 20, 30]));
 * launch(stream, LaunchConfig.linear(3), axpy, 2, x, y, 3); // enqueued on `stream`
 * console.log(y.toArray(Float32Array, { stream })); // Float32Array [12, 24, 36]
 * ```
 */
export function launch<A extends readonly unknown[]>(
  stream: StreamLike | undefined,
  config: LaunchConfig | LaunchConfigInit,
  kernel: Kernel<A>,
  ...args: NoInfer<A>
): void;
// Up to four arguments arrive as parameters, counted by `arguments.length`: a rest parameter would be
// an array made per launch (JavaScriptCore does not elide it: ~15 ns a launch under Bun).
export function launch(
  stream: StreamLike | undefined,
  config: LaunchConfig | LaunchConfigInit,
  kernel: Kernel,
  a0?: unknown,
  a1?: unknown,
  a2?: unknown,
  a3?: unknown,
): void {
  const n = arguments.length - 3;
  // eslint-disable-next-line prefer-rest-params
  if (n > 4) launchArgs(stream, config, kernel, Array.prototype.slice.call(arguments, 3), 0);
  else launchFew(stream, config, kernel, n, a0, a1, a2, a3);
}

/** @internal: encodes kernel node params (CUDA_KERNEL_NODE_PARAMS_v2, 72 bytes) for graphs. */
export function encodeKernelNodeParams(kernel: Kernel, config: LaunchConfig, pack: ArgPack, into = new Uint8Array(72)): Uint8Array {
  const dv = new DataView(into.buffer, into.byteOffset, 72);
  into.fill(0);
  writeU64(dv, 0, kernel.handle);
  [config.gx, config.gy, config.gz, config.bx, config.by, config.bz, config.sharedMemBytes].forEach((v, i) => dv.setUint32(8 + i * 4, v, true));
  writeU64(dv, 40, Number(koffi.address(pack.table.buffer)) + pack.table.byteOffset);
  return into;
}

/** @internal */
export function packFor(kernel: Kernel, args: ArrayLike<unknown>, what: string): ArgPack {
  const pack = kernel.argPack ?? packForUntyped(kernel, args, 0, what);
  pack.write(args, 0, what);
  return pack;
}
