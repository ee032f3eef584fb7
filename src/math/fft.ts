// FftPlan: a cuFFT plan (cufftHandle) for 1-D, 2-D or 3-D transforms, C2C / R2C / C2R in single or
// double precision, batched, with each side's layout taken from row-major strides (src/math/fft-layout.ts),
// bound to a Stream. Made once, executed many times: the hot path is a few property reads (operands seen
// by the last call and unchanged since, by the validity count, are not checked again), the door's cached
// context binding on a created stream, and the cuFFT C function. Its workspace comes from the caching
// allocator by default (cuFFT's auto-allocation off, cufftSetWorkArea), so plans kept alive hold no
// cudaMalloc'd scratch of their own.
// cuFFT loads on the first plan, never at import. fft()/ifft()/… with a plan cache: fft-functions.ts.
import { describe, checkKeys } from '../describe';
import { whenNoHostFuncs } from '../lifecycle';
import { DeviceBuffer } from '../memory/device-buffer';
import { StridedView } from '../memory/strided-view';
import { anyCapture, noteUse } from '../graph/capture';
import * as drv from '../driver';
import { loadCufft, type cufft } from '../releases';
import { validity } from '../validity';
import type { Stream, StreamLike } from '../stream';
import type { Context } from '../context';
import { StreamBoundResource, checkCount, lockFields, resolveStream, type Operand, checkOpen } from './common';
import {
  FFT_NORMALIZE,
  FFT_TYPES,
  checkChoice,
  checkFftShape,
  cufftLayout,
  geometryFromSizes,
  geometryFromViews,
  normalizeFactors,
  type FftGeometry,
  type FftNormalize,
  type FftPrecision,
  type FftSide,
  type FftType,
} from './fft-layout';
import { scalePlan, scaleSide, type ScalePlan } from './fft-scale';
import { SEALED, type Sealed, checkSealed } from '../sealed';

export type { FftNormalize, FftPrecision, FftSide, FftType } from './fft-layout';

type CufftApi = ReturnType<typeof loadCufft>;
type PlanHandle = ReturnType<CufftApi['cufftCreate']>;

/** cuFFT's cufftType codes (cufft.h; test/math/fft.test.ts compares them with the generated enum). */
export const CUFFT_TYPE: Readonly<Record<FftPrecision, Record<FftType, number>>> = Object.freeze({
  single: { c2c: 0x29, r2c: 0x2a, c2r: 0x2c },
  double: { c2c: 0x69, r2c: 0x6a, c2r: 0x6c },
});
/** cuFFT's direction codes (CUFFT_FORWARD, CUFFT_INVERSE). */
export const CUFFT_DIRECTION = Object.freeze({
  /** The forward transform (exponent sign −1). */
  forward: -1,
  /** The inverse transform (exponent sign +1), unnormalized. */
  inverse: 1,
});

/** Where a plan's workspace comes from: the caching allocator (default) or cuFFT's own cudaMalloc. */
export type FftWorkspace = 'pool' | 'cufft';

/** Options shared by {@link FftPlan.create} and {@link FftPlan.like}. */
export interface FftPlanCommonOptions {
  /** Scaling applied after each execution (default 'none', cuFFT's own: inverse(forward(x)) = n·x). See docs/math.md. */
  normalize?: FftNormalize;
  /** The stream executions are enqueued on (default: the current context's legacy default stream). */
  stream?: StreamLike;
  /** 'pool' (default): the workspace is a DeviceBuffer from the caching allocator; 'cufft': cuFFT allocates it. */
  workspace?: FftWorkspace;
}

/** Options of {@link FftPlan.create}: a plan given by sizes. */
export interface FftPlanOptions extends FftPlanCommonOptions {
  /** The transform sizes, row-major (last varies fastest), 1 to 3 of them; for r2c/c2r the real side's sizes. */
  shape: readonly number[];
  /** 'c2c' (default), 'r2c' (forward only) or 'c2r' (inverse only). */
  type?: FftType;
  /** 'single' (default: f32/c64) or 'double' (f64/c128). */
  precision?: FftPrecision;
  /** Transforms per execution (default 1). */
  batch?: number;
  /** The input's strides in elements of [batch, ...axes] (default packed C order). */
  inputStrides?: readonly number[];
  /** The output's strides in elements of [batch, ...axes] (default packed C order). */
  outputStrides?: readonly number[];
}

/** Options of {@link FftPlan.like}: a plan for two views. */
export interface FftPlanLikeOptions extends FftPlanCommonOptions {
  /** How many trailing axes to transform (1 to 3; default: every axis). The leading axes are the batch. */
  rank?: number;
}

const EXEC: Record<FftPrecision, Record<FftType, 'cufftExecC2C' | 'cufftExecR2C' | 'cufftExecC2R' | 'cufftExecZ2Z' | 'cufftExecD2Z' | 'cufftExecZ2D'>> = {
  single: { c2c: 'cufftExecC2C', r2c: 'cufftExecR2C', c2r: 'cufftExecC2R' },
  double: { c2c: 'cufftExecZ2Z', r2c: 'cufftExecD2Z', c2r: 'cufftExecZ2D' },
};
/** A cufftExec* C function (the one the typed layer calls): returns the cufftResult. */
type Exec = (plan: PlanHandle, idata: number, odata: number, direction: number) => number;
type ExecName = (typeof EXEC)[FftPrecision][FftType];

/** What a plan calls once made (the typed module; unit tests hand in a stand-in). @internal */
export type PlanApi = Pick<CufftApi, 'binder' | 'cufftSetStream' | 'cufftSetWorkArea' | 'CufftError'>;

/**
 * The C function behind each cufftExec* typed function, bound once per process through the typed
 * module's own binder. The plan calls it directly: its operands were checked once (and the addresses
 * are numbers of a checked buffer), while the typed function would check each address again per call,
 * an `x % 1` on a heap number apiece (15-30 ns a call on the dev machine: bench/math-cpu.ts fft's typed
 * row). A failing status becomes the typed layer's own CufftError.
 */
const execs = new WeakMap<PlanApi, Map<ExecName, Exec>>();
function execOf(api: PlanApi, name: ExecName): Exec {
  let byName = execs.get(api);
  if (byName === undefined) execs.set(api, (byName = new Map()));
  let fn = byName.get(name);
  if (fn === undefined) byName.set(name, (fn = api.binder.native(name) as Exec));
  return fn;
}

const FORWARD = CUFFT_DIRECTION.forward;
const INVERSE = CUFFT_DIRECTION.inverse;

// What every execution uses from other modules, held in module constants as src/launch.ts does: an
// imported name is read off its module object at each use (a getter call in tsx's and esbuild's CommonJS).
const counts = validity;
const capturing = anyCapture;
const bindHinted = drv.bindHinted;

/** After a call under the cached binding failed: binds for real and returns true when another context was current (call again). */
function rebindIfOther(ctx: Context): boolean {
  if (drv.currentContextHandle() === ctx.handle) return false;
  ctx.bind();
  return true;
}

/** What the destroy closure frees: the handle and the workspace (which setStream may replace). */
interface PlanState {
  workspace: DeviceBuffer | undefined;
}

function destroyPlan(ctx: Context, handle: PlanHandle, state: PlanState): void {
  whenNoHostFuncs(() => {
    try {
      if (ctx.bindForFree()) loadCufft().cufftDestroy(handle);
    } finally {
      state.workspace?.close();
    }
  });
}

/**
 * A cuFFT plan on a Stream. `FftPlan.create({ shape: [1024], batch: 8 })` or `FftPlan.like(x, y)`;
 * then `plan.forward(x, y)` / `plan.inverse(y, x)` as often as needed; `close()` (or `using`) destroys it.
 * Operands are StridedViews whose dtype, shape and strides equal the plan's sides, or DeviceBuffers
 * holding a packed side. Executions are asynchronous on the plan's stream, like kernels.
 * @example
 * ```ts
 * import { DeviceBuffer, FftPlan, Stream } from 'cuda-ts/objects';
 *
 * using stream = Stream.create();
 * const signal = Float32Array.from({ length: 8 }, (_, k) => Math.cos((2 * Math.PI * k) / 8));
 * using x = DeviceBuffer.from(signal, { stream }); // 8 real samples (f32)
 * using spectrum = DeviceBuffer.alloc((8 / 2 + 1) * 8, { stream }); // n/2 + 1 complex (c64) bins
 * using plan = FftPlan.create({ shape: [8], type: 'r2c', stream }); // loads cuFFT; made once
 * plan.forward(x, spectrum); // executed as often as needed, enqueued on the stream
 * console.log(spectrum.toArray(Float32Array, { stream })); // [re, im] pairs: bin 1 is 4 + 0i (n/2), the rest ~0
 * ```
 */
export class FftPlan extends StreamBoundResource {
  /** 'c2c', 'r2c' (forward only) or 'c2r' (inverse only). */
  readonly type: FftType;
  /** 'single' (f32 / c64 operands) or 'double' (f64 / c128). */
  readonly precision: FftPrecision;
  /** The logical transform sizes (the real side's for r2c/c2r). */
  readonly shape: readonly number[];
  /** Transforms done per execution (the leading axis of each side). */
  readonly batch: number;
  /** What an input operand must look like. */
  readonly input: FftSide;
  /** What an output operand must look like. */
  readonly output: FftSide;
  /** The scaling applied after each execution ('none': cuFFT's own, inverse(forward(x)) = n·x). */
  readonly normalize: FftNormalize;
  /** Bytes of the workspace cuFFT asked for. */
  readonly workspaceBytes: number;
  private readonly h: PlanHandle;
  private readonly state: PlanState;
  private readonly api: PlanApi;
  private readonly exec: Exec;
  private readonly execName: ExecName;
  private readonly inputBytes: number;
  private readonly outputBytes: number;
  private readonly forwardFactor: number;
  private readonly inverseFactor: number;
  private readonly scaling: ScalePlan | undefined;
  /** True when an input may be transformed in place (c2c with equal input and output layouts). */
  private readonly inPlaceOk: boolean;
  /** The current stream is a created one (not a default stream): the cached context binding is enough. */
  private hinted: boolean;
  // The last call's operands and their addresses, valid while the validity count stays at `checkedEpoch`
  // (any close, sticky error or parked host error moves it): the same operands again skip every check.
  private lastInput: Operand | undefined;
  private lastOutput: Operand | undefined;
  // Addresses past 2³¹ are heap numbers: a field that starts undefined holds them by reference (V8's
  // tagged representation), so reading one for the call allocates nothing (a double field would copy).
  private lastIp: number | undefined = undefined;
  private lastOp: number | undefined = undefined;
  private checkedEpoch = -1;

  private constructor(
    seal: Sealed,
    g: FftGeometry,
    stream: Stream,
    h: PlanHandle,
    state: PlanState,
    workspaceBytes: number,
    normalize: FftNormalize,
    api: PlanApi,
  ) {
    checkSealed(seal, 'FftPlan', 'FftPlan.create()');
    const ctx = stream.context;
    super('FftPlan', () => destroyPlan(ctx, h, state), stream);
    this.type = g.type;
    this.precision = g.precision;
    this.shape = Object.freeze(g.n.slice());
    this.batch = g.batch;
    this.input = freezeSide(g.input);
    this.output = freezeSide(g.output);
    this.normalize = normalize;
    this.workspaceBytes = workspaceBytes;
    this.h = h;
    this.state = state;
    this.api = api;
    this.execName = EXEC[g.precision][g.type];
    this.exec = execOf(api, this.execName);
    this.inputBytes = g.input.extent * sizeOf(g.input);
    this.outputBytes = g.output.extent * sizeOf(g.output);
    const factors = normalizeFactors(
      normalize,
      g.n.reduce((a, b) => a * b, 1),
    );
    this.forwardFactor = factors.forward;
    this.inverseFactor = factors.inverse;
    this.scaling = normalize === 'none' ? undefined : scalePlan(g.output);
    this.inPlaceOk = g.type === 'c2c' && sameLayout(g.input, g.output);
    this.hinted = stream.handle > 2;
    // the executions check operands against these: they stay the layout cuFFT planned
    lockFields(this as FftPlan, ['type', 'precision', 'shape', 'batch', 'input', 'output', 'normalize', 'workspaceBytes']);
  }

  /**
   * A plan given by sizes: `FftPlan.create({ shape: [12, 35], type: 'r2c', batch: 4 })`.
   * @param options `shape` (the transform sizes, row-major, 1 to 3; the real side's for r2c/c2r), `type` ('c2c' default, 'r2c', 'c2r'), `precision` ('single'
   * default, 'double'), `batch` (default 1), `inputStrides`/`outputStrides` (elements of [batch, ...axes]; default packed), `normalize` (default 'none'),
   * `stream` (default: the current context's legacy default stream) and `workspace` ('pool' default, 'cufft').
   */
  static create(options: FftPlanOptions): FftPlan {
    const where = 'FftPlan.create';
    if (typeof options !== 'object' || options === null)
      throw new TypeError(`${where}: options must be an object { shape, type?, precision?, batch?, … }, got ${describe(options)}`);
    checkKeys(where, options, ['shape', 'type', 'precision', 'batch', 'inputStrides', 'outputStrides', 'normalize', 'stream', 'workspace']);
    const n = checkFftShape(where, options.shape);
    const type = options.type === undefined ? 'c2c' : checkChoice(where, 'type', options.type, FFT_TYPES);
    const precision = options.precision === undefined ? 'single' : checkChoice(where, 'precision', options.precision, ['single', 'double'] as const);
    const batch = options.batch === undefined ? 1 : checkCount(where, 'batch', options.batch, 1);
    const common = commonOptions(where, options);
    const g = geometryFromSizes(where, type, precision, n, batch, options.inputStrides, options.outputStrides);
    return FftPlan.make(where, g, common);
  }

  /**
   * A plan for `input` → `output` StridedViews over their last `rank` axes (default all), the leading
   * axes collapsed into the batch: the transform type and precision follow the dtypes (c64→c64 C2C,
   * f32→c64 R2C, c64→f32 C2R; c128/f64 for double). Any views with the same layout work with it later.
   * @param input A view of what the plan will transform: its dtype picks type and precision (c64 → c64 C2C, f32 → c64 R2C, c64 → f32 C2R; c128/f64 double),
   * its shape and strides the input layout.
   * @param output A view of where results go: shape and strides of the output layout (for R2C/C2R the complex side's last axis is n/2 + 1).
   * @param options `rank` (how many trailing axes to transform, 1 to 3; default all, the leading ones being the batch), `normalize` (default 'none'),
   * `stream` and `workspace`, as {@link FftPlan.create}.
   */
  static like(input: StridedView, output: StridedView, options: FftPlanLikeOptions = {}): FftPlan {
    const where = 'FftPlan.like';
    if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options must be an object, got ${describe(options)}`);
    checkKeys(where, options, ['rank', 'normalize', 'stream', 'workspace']);
    const common = commonOptions(where, options);
    const g = geometryFromViews(where, input, output, options.rank);
    return FftPlan.make(where, g, common);
  }

  /** Makes the cuFFT plan of `g` on the stream. @internal (fft-functions.ts's cache calls it too) */
  static make(where: string, g: FftGeometry, o: ResolvedCommon): FftPlan {
    const stream = resolveStream(where, o.stream);
    const api = loadCufft();
    stream.context.bind();
    const h = api.cufftCreate();
    const state: PlanState = { workspace: undefined };
    let bytes: number;
    try {
      if (o.workspace === 'pool') api.cufftSetAutoAllocation(h, 0);
      bytes = makePlanMany(api, h, g);
      api.cufftSetStream(h, stream.handle as unknown as cufft.cudaStream_t);
      if (o.workspace === 'pool' && bytes > 0) {
        state.workspace = DeviceBuffer.alloc(bytes, { stream });
        api.cufftSetWorkArea(h, state.workspace.ptr);
      }
    } catch (e) {
      state.workspace?.close();
      try {
        api.cufftDestroy(h);
      } catch {
        // the first error is the one to report
      }
      throw e;
    }
    return new FftPlan(SEALED, g, stream, h, state, bytes, o.normalize, api);
  }

  /** The cufftHandle, for typed-layer calls (`cufft.cufftGetSize(plan.handle)`); valid until close(). */
  get handle(): PlanHandle {
    this.assertOpen('FftPlan.handle');
    return this.h;
  }

  /**
   * The forward transform (C2C or R2C) of `input` into `output` (default: in place, C2C only). Returns `output`.
   * @param input The signal: a StridedView of device memory with the plan's input dtype, shape and strides (a batch axis of 1 may be left out), or a
   * DeviceBuffer holding a packed input side.
   * @param output Where the spectrum goes, matching the plan's output side the same way; default `input` (in place, C2C only).
   */
  forward<O extends Operand>(input: Operand, output?: O): O {
    if (this.type === 'c2r') throw new TypeError('FftPlan.forward: a c2r plan transforms inverse only (use inverse)');
    const out = output === undefined ? (input as O) : output;
    this.run('FftPlan.forward', false, input, out);
    return out;
  }

  /**
   * The inverse transform (C2C or C2R) of `input` into `output` (default: in place, C2C only). Returns `output`. C2R overwrites its input (cuFFT's own rule).
   * @param input The spectrum: a StridedView with the plan's input dtype, shape and strides, or a DeviceBuffer holding a packed input side; C2R overwrites
   * it.
   * @param output Where the signal goes, matching the plan's output side the same way; default `input` (in place, C2C only).
   */
  inverse<O extends Operand>(input: Operand, output?: O): O {
    if (this.type === 'r2c') throw new TypeError('FftPlan.inverse: an r2c plan transforms forward only (use forward)');
    const out = output === undefined ? (input as O) : output;
    this.run('FftPlan.inverse', true, input, out);
    return out;
  }

  private run(where: string, inverse: boolean, input: Operand, output: Operand): void {
    if (input !== this.lastInput || output !== this.lastOutput || this.checkedEpoch !== counts.epoch) this.resolve(where, input, output);
    this.enqueue(inverse, this.lastIp!, this.lastOp!, input, output, false);
  }

  /** Checks the plan, its stream and both operands, and remembers their addresses for the calls that follow. */
  private resolve(where: string, input: Operand, output: Operand): void {
    this.checkUsable(where);
    if (output === input && this.type !== 'c2c')
      throw new TypeError(`${where}: an in-place ${this.type} transform needs two views of one buffer (real and complex), not the same operand twice`);
    const ip = addressOf(where, 'input', input, this.input, this.inputBytes, this.context);
    const op = output === input ? ip : addressOf(where, 'output', output, this.output, this.outputBytes, this.context);
    if (ip === op && this.type === 'c2c' && !this.inPlaceOk) throw new RangeError(`${where}: in place, the input and output layouts must be equal`);
    this.lastInput = input;
    this.lastOutput = output;
    this.lastIp = ip;
    this.lastOp = op;
    this.checkedEpoch = counts.epoch;
  }

  /**
   * Binds the context and calls cuFFT on operands already checked at `ip` → `op`, then scales as
   * `normalize` says. `bound`: the caller just saw the plan's context current. On a created stream the door's
   * cached binding is trusted (a cuFFT call under another context fails, since the stream is not that
   * context's, or runs in the stream's own): after a failure with another context current, it binds
   * for real and calls again. The default streams belong to whichever context is current: a real bind.
   * @internal (fft-functions.ts calls it with operands it checked itself)
   */
  enqueue(inverse: boolean, ip: number, op: number, input: Operand, output: Operand, bound: boolean): void {
    const ctx = this.context;
    const direction = inverse ? INVERSE : FORWARD;
    const hinted = this.hinted && !bound;
    if (hinted) bindHinted(ctx);
    else if (!bound) ctx.bind();
    if (capturing()) noteUse(ctx, this.stream.handle, this, bufferOf(input), bufferOf(output));
    let status = this.callExec(ip, op, direction);
    if (status !== 0 && hinted && rebindIfOther(ctx)) status = this.callExec(ip, op, direction);
    if (status !== 0) throw new this.api.CufftError(this.execName, status);
    const factor = inverse ? this.inverseFactor : this.forwardFactor;
    if (factor !== 1) scaleSide(this.stream, op, this.scaling!, factor);
  }

  /** The cufftExec* call: C2C/Z2Z take the direction, the real transforms do not (koffi counts arguments). */
  private callExec(ip: number, op: number, direction: number): number {
    return this.type === 'c2c'
      ? this.exec(this.h, ip, op, direction)
      : (this.exec as (plan: PlanHandle, idata: number, odata: number) => number)(this.h, ip, op);
  }

  /**
   * Moves the plan to `stream` (cufftSetStream); a pool workspace is reallocated there, the old one
   * freed in order on the old stream. Work already enqueued stays where it was.
   * @param stream The stream later executions enqueue on: a Stream (or stream-protocol object) of the plan's context.
   */
  setStream(stream: StreamLike): this {
    const where = 'FftPlan.setStream';
    this.checkUsable(where);
    const s = resolveStream(where, stream);
    if (s === this.stream) return this;
    this.adoptStream(s);
    this.hinted = s.handle > 2;
    this.checkedEpoch = -1;
    const api = this.api;
    this.context.bind();
    api.cufftSetStream(this.h, s.handle as unknown as cufft.cudaStream_t);
    const old = this.state.workspace;
    if (old !== undefined) {
      const fresh = DeviceBuffer.alloc(this.workspaceBytes, { stream: s });
      api.cufftSetWorkArea(this.h, fresh.ptr);
      this.state.workspace = fresh;
      old.close();
    }
    return this;
  }

  /** Destroys the plan (its workspace goes back to the pool) and forgets the last operands. */
  override close(): void {
    this.lastInput = undefined;
    this.lastOutput = undefined;
    this.checkedEpoch = -1;
    super.close();
  }

  /** `FftPlan(c2c single [1024] × 8, stream)`. */
  toString(): string {
    return `FftPlan(${this.type} ${this.precision} [${this.shape}] × ${this.batch}${this.closed ? ', closed' : ''})`;
  }
}

/** The common options, checked. @internal */
export interface ResolvedCommon {
  normalize: FftNormalize;
  stream: StreamLike | undefined;
  workspace: FftWorkspace;
}

/** Checks normalize and workspace (the stream is checked when resolved). @internal */
export function commonOptions(where: string, o: FftPlanCommonOptions, defaultNormalize: FftNormalize = 'none'): ResolvedCommon {
  const normalize = o.normalize === undefined ? defaultNormalize : checkChoice(where, 'normalize', o.normalize, FFT_NORMALIZE);
  const workspace = o.workspace === undefined ? 'pool' : checkChoice(where, 'workspace', o.workspace, ['pool', 'cufft'] as const);
  return { normalize, stream: o.stream, workspace };
}

/** A side with its arrays frozen (a plan's layout, checked against every operand). */
function freezeSide(side: FftSide): FftSide {
  return Object.freeze({ ...side, shape: Object.freeze(side.shape.slice()), strides: Object.freeze(side.strides.slice()) });
}

function sizeOf(side: FftSide): number {
  return side.dtype === 'c128' ? 16 : side.dtype === 'f32' ? 4 : 8;
}

function sameLayout(a: FftSide, b: FftSide): boolean {
  return a.dtype === b.dtype && a.strides.every((v, i) => v === b.strides[i]);
}

function bufferOf(v: Operand): DeviceBuffer | undefined {
  return v instanceof StridedView ? (v.buffer instanceof DeviceBuffer ? v.buffer : undefined) : v;
}

function foreign(where: string, name: string, b: DeviceBuffer, ctx: Context): TypeError {
  return new TypeError(`${where}: ${name} belongs to ${String(b.context)}, the plan to ${String(ctx)}`);
}

/**
 * The device address of `v` as `side`: a StridedView with the side's dtype, shape and strides, or a
 * DeviceBuffer (packed sides only) holding at least `bytes`. Throws TypeError/RangeError naming `where`.
 */
function addressOf(where: string, name: string, v: Operand, side: FftSide, bytes: number, ctx: Context): number {
  if (v instanceof StridedView) {
    const buf = v.buffer;
    if (!(buf instanceof DeviceBuffer)) throw new TypeError(`${where}: ${name} must view device memory, got a view of ${describe(buf)}`);
    if (buf.context !== ctx) throw foreign(where, name, buf, ctx);
    if (v.dtype !== side.dtype) throw new TypeError(`${where}: ${name} holds ${v.dtype}, the plan takes ${side.dtype}`);
    if (!matches(v, side))
      throw new RangeError(
        `${where}: ${name} has shape [${v.shape}] strides [${v.strides}], the plan's ${name} is shape [${side.shape}] strides [${side.strides}] (a leading batch axis of 1 may be left out)`,
      );
    checkOpen(where, buf);
    return buf.ptr + v.byteOffset;
  }
  if (v instanceof DeviceBuffer) {
    if (v.context !== ctx) throw foreign(where, name, v, ctx);
    if (!side.contiguous) throw new TypeError(`${where}: the plan's ${name} is strided: pass a StridedView of shape [${side.shape}] strides [${side.strides}]`);
    if (v.byteLength < bytes)
      throw new RangeError(`${where}: ${name} holds ${v.byteLength} bytes, the plan's ${name} needs ${bytes} (${side.extent} ${side.dtype})`);
    checkOpen(where, v);
    return v.ptr;
  }
  throw new TypeError(
    `${where}: ${name} must be a DeviceBuffer or a StridedView of device memory, got ${describe(v)}${ArrayBuffer.isView(v) ? ' (a host array: copy it to the GPU first)' : ''}`,
  );
}

/** True when the view's axes are the side's, with or without the batch axis when the batch is 1, or with the batch split over several leading axes that collapse. */
function matches(v: StridedView, side: FftSide): boolean {
  const rank = side.shape.length - 1;
  const lead = v.shape.length - rank;
  if (lead < 0) return false;
  for (let d = 0; d < rank; d++) {
    const a = v.shape[lead + d];
    if (a !== side.shape[d + 1] || (a > 1 && v.strides[lead + d] !== side.strides[d + 1])) return false;
  }
  if (lead === 1) return v.shape[0] === side.shape[0] && (v.shape[0] === 1 || v.strides[0] === side.strides[0]);
  let count = 1;
  for (let d = lead - 1; d >= 0; d--) {
    if (v.shape[d] === 1) continue;
    if (v.strides[d] !== side.strides[0] * count) return false;
    count *= v.shape[d];
  }
  return count === side.shape[0];
}

/**
 * cufftMakePlanMany64 with the geometry's layouts; returns the workspace size. A C2C plan whose sides
 * are both packed gets cuFFT's basic layout (NULL embeds), the plan cufftPlan1d/2d/3d make from C: the
 * same kernels as C code's (packed C2C addresses the same elements in place and out of place). Real
 * transforms keep the explicit layout, since cuFFT's basic layout pads the real side when in place.
 */
function makePlanMany(api: CufftApi, h: PlanHandle, g: FftGeometry): number {
  const rank = g.n.length;
  const n = BigInt64Array.from(g.n, BigInt);
  const type = CUFFT_TYPE[g.precision][g.type] as cufft.cufftType;
  if (g.type === 'c2c' && g.input.contiguous && g.output.contiguous) return api.cufftMakePlanMany64(h, rank, n, null, 1, 0, null, 1, 0, type, g.batch);
  const i = cufftLayout('FftPlan', 'input', g.input.shape, g.input.strides);
  const o = cufftLayout('FftPlan', 'output', g.output.shape, g.output.strides);
  return api.cufftMakePlanMany64(
    h,
    rank,
    n,
    BigInt64Array.from(i.embed, BigInt),
    i.stride,
    i.dist,
    BigInt64Array.from(o.embed, BigInt),
    o.stride,
    o.dist,
    type,
    g.batch,
  );
}
