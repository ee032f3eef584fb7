// Matmul: a cuBLASLt matrix product planned once and executed many times, in the style of nvmath-python's
// stateful Matmul. Made from operand descriptions (dtype, shape, order, ld, batch; StridedViews or plain
// objects) and transposes; plan() sets the epilogue, asks cuBLASLt's heuristic for several algorithms
// under a workspace cap and allocates the workspace; execute() checks the operands against the
// descriptions and enqueues D = epilogue(alpha·op(A)·op(B) + beta·C). autotune() times the planned
// algorithms with events and keeps the fastest. Handle, descriptors and layouts are Resources closed
// with the Matmul. Checks throw TypeError/RangeError before cuBLASLt is called; its statuses CublasLtError.
import { loadCublasLt, type cublaslt } from '../releases';
import { encodeRecord } from '../../support';
import { checkKeys, describe } from '../describe';
import * as drv from '../driver';
import { Event } from '../event';
import { Resource, whenNoHostFuncs } from '../lifecycle';
import { DeviceBuffer } from '../memory/device-buffer';
import { DTYPE_SIZES, type StridedView } from '../memory/strided-view';
import type { Stream, StreamLike } from '../stream';
import { ScalarBox, StreamBoundResource, checkCount, cudaDataType, optionsOf, resolveStream, type Operand, type Scalar } from './common';
import { CUBLAS_COMPUTE, checkComputeType, defaultComputeType, gemmScaleType, type ComputeType } from './blas-gemm';
import { MatrixSlot, VectorSlot, checkTranspose, opCode, opCols, opRows, resolveMatrix, resolveVector, type Transpose } from './matrix';
import {
  EPILOGUES,
  auxLayout,
  checkEpilogue,
  checkSameLayout,
  describeMatrix,
  epilogueTraits,
  type AuxLayout,
  type Epilogue,
  type EpilogueTraits,
  type MatrixDescription,
} from './matmul-layout';
import { SEALED, type Sealed, checkSealed } from '../sealed';

export type { AuxLayout, Epilogue, MatrixDescription } from './matmul-layout';

/** Options of {@link Matmul.create}. */
export interface MatmulOptions {
  /** The left matrix A: the view execute will get, or its description ([rows, cols] or [batch, rows, cols], before transA). */
  a: MatrixDescription;
  /** The right matrix B, of a's dtype: a view or a description, before transB. */
  b: MatrixDescription;
  /** Described when execute takes a c other than d; omitted: d is read as c (in place, with beta). */
  c?: MatrixDescription;
  /** Default: c's description, else a's dtype, shape [batch?, M, N], column-major. */
  d?: MatrixDescription;
  /** op(a): 'N' (default), 'T' or 'C'. */
  transA?: Transpose;
  /** op(b): 'N' (default), 'T' or 'C'. */
  transB?: Transpose;
  /** Default: '32F' for f16/bf16/f32/c64 operands, '64F' for f64/c128, '32I' for i8 → i32. */
  computeType?: ComputeType;
  /** The default stream of execute (default: the legacy default stream of the current context). */
  stream?: StreamLike;
}

/** Options of {@link Matmul.plan}. */
export interface MatmulPlanOptions {
  /** Default 'DEFAULT' (no epilogue). */
  epilogue?: Epilogue;
  /** The bias vector execute will usually get (its address guides the plan; execute may pass another). */
  bias?: Operand;
  /** Workspace cap in bytes (default 32 MiB). */
  maxWorkspaceBytes?: number;
  /** How many algorithms to ask the heuristic for (default 8, 1 to 64). */
  algorithms?: number;
}

/** One algorithm the heuristic proposed. */
export interface MatmulAlgorithm {
  /** Its rank in the heuristic's answer (0: the one it expects fastest). */
  readonly index: number;
  /** Device workspace it needs, in bytes (at most the plan's maxWorkspaceBytes). */
  readonly workspaceBytes: number;
  /** The heuristic's estimate of how many waves of thread blocks it runs over the GPU's SMs (a fraction just under a whole number uses the GPU well). */
  readonly wavesCount: number;
  /** The encoded cublasLtMatmulAlgo_t (64 bytes), passed to cublasLtMatmul as is. */
  readonly algo: Uint8Array;
  /** Milliseconds per execute measured by {@link Matmul.autotune}, when run. */
  time?: number;
}

/** The operands of {@link Matmul.execute}. */
export interface MatmulOperands {
  /** The left matrix A, matching the Matmul's description of a (dtype, shape, order, ld, batch stride). */
  a: StridedView;
  /** The right matrix B, matching the Matmul's description of b. */
  b: StridedView;
  /** Required when the Matmul was made with a c; otherwise d is read as c. */
  c?: StridedView;
  /** Where the result goes, matching the Matmul's description of d (read as c too when no c was described). */
  d: StridedView;
  /** Default 1. */
  alpha?: Scalar;
  /** Default 0. */
  beta?: Scalar;
  /** The bias vector (length M, d's dtype) of the *_BIAS epilogues. */
  bias?: Operand;
  /** The auxiliary buffer of the *_AUX epilogues (written) and of DRELU/DGELU (read): {@link Matmul.aux} bytes. */
  aux?: Operand;
  /** Where the BGRAD epilogues write the bias gradient (length M, or N for BGRADB; d's dtype). */
  biasGrad?: Operand;
  /** Default: the Matmul's stream. */
  stream?: StreamLike;
}

const DEFAULT_WORKSPACE = 32 << 20;
/** Executes autotune times per algorithm at most (timing needs a few; more only waits). */
const MAX_AUTOTUNE_ITERATIONS = 10000;
// read once: a namespace member is a getter call per use under some loaders (tsx, esbuild's CommonJS)
const { bindHinted, currentContextHandle } = drv;
// cublasLtMatmulDescAttributes_t, cublasLtMatrixLayoutAttribute_t, cublasLtMatmulPreferenceAttributes_t
const DESC = { TRANSA: 3, TRANSB: 4, EPILOGUE: 7, BIAS_POINTER: 8, BIAS_BATCH_STRIDE: 10, AUX_POINTER: 11, AUX_LD: 12, AUX_BATCH_STRIDE: 13 } as const;
const LAYOUT = { ORDER: 1, BATCH_COUNT: 5, STRIDED_BATCH_OFFSET: 6 } as const;
const PREF = { MAX_WORKSPACE_BYTES: 1, MIN_ALIGNMENT_A: 5, MIN_ALIGNMENT_B: 6, MIN_ALIGNMENT_C: 7, MIN_ALIGNMENT_D: 8 } as const;

/** A cuBLASLt handle, descriptor, layout or preference: freed once, with the Matmul or by the finalizer. */
class LtObject<H> extends Resource {
  constructor(
    kind: string,
    readonly handle: H,
    destroy: (h: H) => void,
  ) {
    super(kind, () => whenNoHostFuncs(() => destroy(handle)));
  }
}

/** The largest power of two (≤ 256) dividing `address`: the alignment cuBLASLt may assume. */
function alignmentOf(address: number): number {
  let a = 256;
  while (a > 1 && address % a !== 0) a /= 2;
  return a;
}

/**
 * A planned cuBLASLt matrix product: `Matmul.create({ a, b, d })`, `plan({ epilogue: 'RELU_BIAS', bias })`,
 * then `execute({ a, b, d, bias })` as often as needed (work enqueued on the stream).
 * @example
 * ```ts
 * import { DeviceBuffer, Matmul, Stream, matrix } from 'cuda-ts/objects';
 *
 * using stream = Stream.create();
 * using bufX = DeviceBuffer.from(new Float32Array(64 * 32).fill(1));
 * using bufW = DeviceBuffer.from(new Float32Array(32 * 16).fill(0.5));
 * using bufBias = DeviceBuffer.from(new Float32Array(64).fill(-1)); // one value per row of d
 * using bufD = DeviceBuffer.alloc(64 * 16 * 4, { stream });
 * const x = matrix(bufX, { dtype: 'f32', rows: 64, cols: 32 }); // row-major
 * const w = matrix(bufW, { dtype: 'f32', rows: 32, cols: 16, order: 'col' });
 * const d = matrix(bufD, { dtype: 'f32', rows: 64, cols: 16, order: 'col' }); // bias epilogues write d column-major
 * using mm = Matmul.create({ a: x, b: w, d, stream }); // loads cuBLASLt
 * mm.plan({ epilogue: 'RELU_BIAS', bias: bufBias }); // the heuristic's algorithms, the workspace
 * mm.execute({ a: x, b: w, d, bias: bufBias }); // d = ReLU(x·w + bias), as often as needed
 * console.log(bufD.toArray(Float32Array, { stream })[0]); // 15 (32 · 0.5 − 1)
 * ```
 */
export class Matmul extends StreamBoundResource {
  /** M: rows of op(a) and of d. */
  readonly m: number;
  /** N: columns of op(b) and of d. */
  readonly n: number;
  /** K: columns of op(a) and rows of op(b), the dimension summed over. */
  readonly k: number;
  /** Products per execute (1 for 2-D operands; an operand holding one matrix is broadcast over the batch). */
  readonly batch: number;
  /** How cuBLASLt computes: the computeType option, or its default for the operands' dtype. */
  readonly computeType: ComputeType;
  private readonly api: typeof cublaslt;
  private readonly desc: { a: MatrixSlot; b: MatrixSlot; c: MatrixSlot | undefined; d: MatrixSlot };
  private readonly lt: LtObjects;
  private readonly scale: ReturnType<typeof gemmScaleType>;
  private readonly alphaBox = new ScalarBox();
  private readonly betaBox = new ScalarBox();
  private readonly slots = { a: new MatrixSlot(), b: new MatrixSlot(), c: new MatrixSlot(), d: new MatrixSlot(), v: new VectorSlot() };
  private planned: Planned | undefined;
  /** What execute resolved last (this.resolved: a, b, c, d), for the plan it was checked against (undefined: resolve again). */
  private readonly memo: { a: unknown; b: unknown; c: unknown; d: unknown; plan: Planned | undefined } = {
    a: undefined,
    b: undefined,
    c: undefined,
    d: undefined,
    plan: undefined,
  };
  private resolved: MatrixSlot[] = [];
  /** cublasLtMatmul of the typed layer, and its handle, descriptor and A/B/C/D layouts (read once, not per execute). */
  private readonly ltMatmul: typeof cublaslt.cublasLtMatmul;
  private readonly handles: [
    cublaslt.cublasLtHandle_t,
    cublaslt.cublasLtMatmulDesc_t,
    cublaslt.cublasLtMatrixLayout_t,
    cublaslt.cublasLtMatrixLayout_t,
    cublaslt.cublasLtMatrixLayout_t,
    cublaslt.cublasLtMatrixLayout_t,
  ];
  /** The bias and aux addresses epilogueOperands worked out (no object per execute). */
  private readonly epilogue = { bias: 0, aux: 0 };
  private algos: MatmulAlgorithm[] = [];
  private chosen = 0;
  /** The workspace, shared with the destroy function (which frees it with the descriptors). */
  private readonly owned: { workspace: DeviceBuffer | undefined };
  /** Addresses last set on the descriptor (set again only when they change). */
  private readonly pointers = { bias: -1, aux: -1 };

  private constructor(seal: Sealed, init: MatmulInit) {
    checkSealed(seal, 'Matmul', 'Matmul.create()');
    const { api, lt } = init;
    const owned: { workspace: DeviceBuffer | undefined } = { workspace: undefined };
    super(
      'Matmul',
      () => {
        owned.workspace?.close();
        for (const o of [lt.op, lt.pref, ...lt.layouts, lt.handle]) o.close();
      },
      init.stream,
    );
    this.owned = owned;
    this.api = api;
    this.lt = lt;
    this.desc = init.desc;
    this.m = init.m;
    this.n = init.n;
    this.k = init.k;
    this.batch = init.batch;
    this.computeType = init.compute;
    this.scale = init.scale;
    this.ltMatmul = api.cublasLtMatmul;
    this.handles = [lt.handle.handle, lt.op.handle, ...lt.layouts.map((l) => l.handle)] as unknown as typeof this.handles;
  }

  /**
   * A Matmul of `options.a` × `options.b` (→ d): checks the shapes, loads cuBLASLt, makes the handle, descriptor and layouts.
   * @param options What is multiplied: `a` and `b` (views or descriptions { dtype, shape, order?, ld?, batchStride? }), optional `c` and `d` (d defaults to
   * c's layout, else a packed column-major M×N of a's dtype), `transA`/`transB` ('N' default, 'T', 'C'), `computeType` (default by dtype, as {@link
   * Blas.gemmEx}) and `stream` (execute's default; default: the current context's legacy default stream).
   */
  static create(options: MatmulOptions): Matmul {
    const where = 'Matmul.create';
    const shape = matmulShape(where, options);
    const stream = resolveStream(where, options.stream);
    stream.context.bind();
    const api = loadCublasLt();
    const made: LtObject<unknown>[] = [];
    const track = <H>(o: LtObject<H>): LtObject<H> => (made.push(o), o);
    try {
      const handle = track(new LtObject('cublasLtHandle', api.cublasLtCreate(), (h) => api.cublasLtDestroy(h)));
      const op = track(
        new LtObject('cublasLtMatmulDesc', api.cublasLtMatmulDescCreate(CUBLAS_COMPUTE[shape.compute], cudaDataType(where, shape.scale)), (h) =>
          api.cublasLtMatmulDescDestroy(h),
        ),
      );
      api.cublasLtMatmulDescSetAttribute(op.handle, DESC.TRANSA, opCode(shape.tA));
      api.cublasLtMatmulDescSetAttribute(op.handle, DESC.TRANSB, opCode(shape.tB));
      const pref = track(new LtObject('cublasLtMatmulPreference', api.cublasLtMatmulPreferenceCreate(), (h) => api.cublasLtMatmulPreferenceDestroy(h)));
      const { a, b, c, d } = shape.desc;
      const layouts = [a, b, c ?? d, d].map((s) => track(layoutOf(api, where, s, shape.batch)));
      return new Matmul(SEALED, { ...shape, api, stream, lt: { handle, op, pref, layouts } });
    } catch (e) {
      for (const o of made.reverse()) o.close();
      throw e;
    }
  }

  /** The auxiliary buffer the planned epilogue writes or reads (bytes, ld, dtype), or undefined. */
  get aux(): AuxLayout | undefined {
    return this.planned?.aux;
  }

  /** The algorithms of the last plan, in the heuristic's order. */
  get algorithms(): readonly MatmulAlgorithm[] {
    // copies: what execute hands cuBLASLt (the algo bytes, the workspace size it may use) cannot be changed from outside
    return this.algos.map((a) => Object.freeze({ ...a, algo: a.algo.slice() }));
  }

  /** The index (in {@link Matmul.algorithms}) execute uses. */
  get selected(): number {
    return this.chosen;
  }

  /**
   * Makes execute use algorithm `index` of the plan.
   * @param index The position in {@link Matmul.algorithms} of the algorithm execute uses from now on (0: the heuristic's first choice).
   */
  select(index: number): this {
    const i = checkCount('Matmul.select', 'index', index);
    if (i >= this.algos.length) throw new RangeError(`Matmul.select: index ${i} is past the ${this.algos.length} planned algorithm(s)`);
    this.chosen = i;
    return this;
  }

  /**
   * Sets the epilogue and asks cuBLASLt's heuristic for up to `algorithms` algorithms that need at most
   * `maxWorkspaceBytes`; allocates the largest workspace they need. Planning again replaces the plan.
   * @param options `epilogue` (default 'DEFAULT': none), `bias` (the bias vector execute will usually get, length M), `maxWorkspaceBytes` (the workspace cap,
   * default 32 MiB) and `algorithms` (how many to ask the heuristic for, 1 to 64, default 8).
   */
  plan(options: MatmulPlanOptions = {}): this {
    const where = 'Matmul.plan';
    if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options must be an object, got ${describe(options)}`);
    checkKeys(where, options, PLAN_KEYS);
    const epilogue = checkEpilogue(where, options.epilogue);
    const traits = epilogueTraits(epilogue);
    const maxBytes = options.maxWorkspaceBytes === undefined ? DEFAULT_WORKSPACE : checkCount(where, 'maxWorkspaceBytes', options.maxWorkspaceBytes);
    const count = options.algorithms === undefined ? 8 : checkCount(where, 'algorithms', options.algorithms, 1);
    if (count > 64) throw new RangeError(`${where}: algorithms must be at most 64, got ${count}`);
    const { d } = this.desc;
    if (traits.columnMajorD && d.order !== 'col')
      throw new RangeError(
        `${where}: the ${epilogue} epilogue needs d column-major (cuBLASLt); d is described row-major: describe it { order: 'col' } (matrix(buf, { order: 'col', … }))`,
      );
    if (options.bias !== undefined && !traits.bias) throw new TypeError(`${where}: the ${epilogue} epilogue takes no bias`);
    const bias = options.bias === undefined ? 256 : this.vector(where, 'bias', options.bias, this.m).address;
    const aux = traits.aux === undefined ? undefined : auxLayout(traits.aux, this.m, this.n, this.batch, d.dtype, DTYPE_SIZES[d.dtype]);
    const alignment = Math.min(
      ...Object.values(this.desc)
        .filter((s): s is MatrixSlot => s !== undefined)
        .map((s) => (s.address === 0 ? 256 : alignmentOf(s.address))),
    );
    this.checkUsable(where);
    this.context.bind();
    this.configure(epilogue, traits, aux, bias, maxBytes, alignment);
    const results = this.api.cublasLtMatmulAlgoGetHeuristic(
      this.lt.handle.handle,
      this.lt.op.handle,
      this.lt.layouts[0].handle,
      this.lt.layouts[1].handle,
      this.lt.layouts[2].handle,
      this.lt.layouts[3].handle,
      this.lt.pref.handle,
      count,
    );
    const usable = results.filter((r) => r.state === 0);
    if (usable.length === 0)
      throw new RangeError(`${where}: cuBLASLt has no algorithm for this product with the ${epilogue} epilogue within ${maxBytes} bytes of workspace`);
    const recordType = this.api.records.cublasLtMatmulAlgo_t();
    this.algos = usable.map((r, index) => ({
      index,
      workspaceBytes: Number(r.workspaceSize),
      wavesCount: r.wavesCount,
      algo: encodeRecord(recordType, r.algo),
    }));
    this.chosen = 0;
    this.planned = { epilogue, traits, aux, alignment };
    this.allocateWorkspace(Math.max(...this.algos.map((a) => a.workspaceBytes)));
    return this;
  }

  /** Writes the epilogue's attributes and the preference (the descriptors are reused from plan to plan). */
  private configure(epilogue: Epilogue, traits: EpilogueTraits, aux: AuxLayout | undefined, bias: number, maxBytes: number, alignment: number): void {
    const api = this.api;
    const op = this.lt.op.handle;
    api.cublasLtMatmulDescSetAttribute(op, DESC.EPILOGUE, EPILOGUES[epilogue]);
    // the descriptor outlives plans: what the previous epilogue set is cleared, not left for this one to read
    const biased = traits.bias || traits.biasGrad !== undefined;
    api.cublasLtMatmulDescSetAttribute(op, DESC.BIAS_POINTER, biased ? bias : 0);
    api.cublasLtMatmulDescSetAttribute(op, DESC.BIAS_BATCH_STRIDE, traits.biasGrad === undefined ? 0 : traits.biasGrad === 'N' ? this.n : this.m);
    this.pointers.bias = biased ? bias : 0;
    // cuBLASLt refuses to plan an AUX epilogue without an aux pointer: an aligned placeholder until execute
    api.cublasLtMatmulDescSetAttribute(op, DESC.AUX_POINTER, aux === undefined ? 0 : 256);
    api.cublasLtMatmulDescSetAttribute(op, DESC.AUX_LD, aux === undefined ? 0 : aux.ld);
    api.cublasLtMatmulDescSetAttribute(op, DESC.AUX_BATCH_STRIDE, aux === undefined ? 0 : aux.batchStride);
    this.pointers.aux = aux === undefined ? 0 : 256;
    const pref = this.lt.pref.handle;
    api.cublasLtMatmulPreferenceSetAttribute(pref, PREF.MAX_WORKSPACE_BYTES, maxBytes);
    for (const attr of [PREF.MIN_ALIGNMENT_A, PREF.MIN_ALIGNMENT_B, PREF.MIN_ALIGNMENT_C, PREF.MIN_ALIGNMENT_D])
      api.cublasLtMatmulPreferenceSetAttribute(pref, attr, alignment);
  }

  private allocateWorkspace(bytes: number): void {
    const owned = this.owned;
    if (owned.workspace !== undefined && owned.workspace.byteLength >= bytes) return;
    owned.workspace?.close();
    owned.workspace = undefined;
    // synchronous memory: any stream may use it (executes on different streams must be ordered: they share it)
    if (bytes > 0) owned.workspace = DeviceBuffer.alloc(bytes, { context: this.context });
  }

  /** A vector operand of d's dtype holding at least `length` contiguous elements; its address. */
  private vector(where: string, name: string, v: unknown, length: number): VectorSlot {
    const s = resolveVector(where, name, v, this.slots.v, this.desc.d.dtype);
    if (s.n < length) throw new RangeError(`${where}: ${name} holds ${s.n} elements; ${length} needed`);
    if (s.inc !== 1 && s.n > 1) throw new RangeError(`${where}: ${name} must be contiguous (stride 1), got stride ${s.inc}`);
    if (s.buffer!.context !== this.context)
      throw new TypeError(`${where}: ${name} belongs to ${String(s.buffer!.context)}, the Matmul to ${String(this.context)}`);
    return s;
  }

  /** Resolves one matrix operand, checks it matches its description and the planned alignment. */
  private operand(where: string, name: 'a' | 'b' | 'c' | 'd', v: unknown, described: MatrixSlot, alignment: number): MatrixSlot {
    const s = resolveMatrix(where, name, v, this.slots[name], described.order, true);
    checkSameLayout(where, name, described, s);
    if (s.buffer!.context !== this.context)
      throw new TypeError(`${where}: ${name} belongs to ${String(s.buffer!.context)}, the Matmul to ${String(this.context)}`);
    if (s.address % alignment !== 0)
      throw new RangeError(
        `${where}: ${name} lies at an address aligned to ${alignmentOf(s.address)} bytes; the plan assumed ${alignment} (plan with operands so aligned, or StridedViews at this offset)`,
      );
    return s;
  }

  /**
   * Enqueues D = epilogue(alpha·op(A)·op(B) + beta·C) with the selected algorithm.
   * @param operands `a`, `b`, `d` (and `c` when described), each matching its description; `alpha` (default 1), `beta` (default 0); `bias`, `aux`, `biasGrad`
   * as the planned epilogue needs them; `stream` (default: the Matmul's).
   */
  execute(operands: MatmulOperands): this {
    const where = 'Matmul.execute';
    const plan = this.planned;
    if (plan === undefined) throw new TypeError(`${where}: call plan() first`);
    checkOperands(where, operands);
    // the views of the last execute again (immutable, checked against this plan then): only their buffers' life is checked
    const memo = this.memo;
    // read once: the views compared with the memo are the views resolved and remembered
    const { a, b, c, d } = operands;
    if (a !== memo.a || b !== memo.b || c !== memo.c || d !== memo.d || plan !== memo.plan) this.resolveOperands(where, plan, a, b, c, d);
    else for (let i = 0; i < 4; i++) this.resolved[i].buffer!.launchAddress();
    const t = plan.traits;
    let bias = this.pointers.bias;
    let aux = this.pointers.aux;
    if (
      t.bias ||
      t.aux !== undefined ||
      t.biasGrad !== undefined ||
      operands.bias !== undefined ||
      operands.aux !== undefined ||
      operands.biasGrad !== undefined
    ) {
      this.epilogueOperands(where, plan, operands);
      bias = this.epilogue.bias;
      aux = this.epilogue.aux;
    }
    const alpha = this.alphaBox.set(where, 'alpha', this.scale, operands.alpha ?? 1);
    const beta = this.betaBox.set(where, 'beta', this.scale, operands.beta ?? 0);
    const stream = this.streamOf(where, operands.stream);
    this.checkUsable(where);
    // a created stream carries its context: trust the door's last binding (a stale one fails cleanly and is
    // retried below); a default stream would run in whichever context is current, so those bind for real
    const hinted = stream.handle > 2;
    if (hinted) bindHinted(this.context);
    else this.context.bind();
    if (bias !== this.pointers.bias) this.setPointer(DESC.BIAS_POINTER, 'bias', bias);
    if (aux !== this.pointers.aux) this.setPointer(DESC.AUX_POINTER, 'aux', aux);
    const ws = this.owned.workspace;
    const wsAddress = ws === undefined ? 0 : ws.launchAddress();
    try {
      this.enqueue(alpha, beta, wsAddress, stream.handle);
    } catch (e) {
      // another context current behind the door: nothing was enqueued on our stream; bind for real, call again
      if (!hinted || currentContextHandle() === this.context.handle) throw e;
      this.context.bind();
      this.enqueue(alpha, beta, wsAddress, stream.handle);
    }
    return this;
  }

  /** The Matmul's stream, or `s` resolved: a stream of the Matmul's context (another's would run the product there). */
  private streamOf(where: string, s: StreamLike | undefined): Stream {
    if (s === undefined) return this.stream;
    const stream = resolveStream(where, s);
    if (stream.context !== this.context)
      throw new TypeError(`${where}: the stream belongs to ${String(stream.context)}, the Matmul to ${String(this.context)}`);
    return stream;
  }

  /** The cublasLtMatmul of execute(), on the resolved operands and the chosen algorithm. */
  private enqueue(alpha: ArrayBufferView, beta: ArrayBufferView, wsAddress: number, stream: Stream['handle']): void {
    const algo = this.algos[this.chosen];
    const h = this.handles;
    const r = this.resolved;
    this.ltMatmul(
      h[0],
      h[1],
      alpha,
      r[0].address,
      h[2],
      r[1].address,
      h[3],
      beta,
      r[2].address,
      h[4],
      r[3].address,
      h[5],
      algo.algo,
      wsAddress,
      algo.workspaceBytes,
      stream,
    );
  }

  /** Resolves a, b, c and d against the plan into this.resolved and remembers them (execute's memo). */
  private resolveOperands(where: string, plan: Planned, a: unknown, b: unknown, c: unknown, d: unknown): void {
    const memo = this.memo;
    memo.plan = undefined;
    const al = plan.alignment;
    const A = this.operand(where, 'a', a, this.desc.a, al);
    const B = this.operand(where, 'b', b, this.desc.b, al);
    const D = this.operand(where, 'd', d, this.desc.d, al);
    if ((d as StridedView).readOnly) throw new TypeError(`${where}: d is a read-only view`);
    let C = D;
    if (this.desc.c !== undefined) {
      if (c === undefined) throw new TypeError(`${where}: c is missing (the Matmul was made with a c)`);
      C = this.operand(where, 'c', c, this.desc.c, al);
    } else if (c !== undefined) throw new TypeError(`${where}: the Matmul was made without c (d is read as c): describe c in Matmul.create to pass one`);
    this.resolved = [A, B, C, D];
    memo.a = a;
    memo.b = b;
    memo.c = c;
    memo.d = d;
    memo.plan = plan;
  }

  private setPointer(attr: number, key: 'bias' | 'aux', address: number): void {
    this.api.cublasLtMatmulDescSetAttribute(this.lt.op.handle, attr, address);
    this.pointers[key] = address;
  }

  /** Checks the bias/aux/biasGrad operands the epilogue needs (and no others); their addresses into this.epilogue. */
  private epilogueOperands(where: string, plan: Planned, o: MatmulOperands): void {
    const t = plan.traits;
    if (t.bias !== (o.bias !== undefined)) throw new TypeError(`${where}: the ${plan.epilogue} epilogue ${t.bias ? 'needs a bias' : 'takes no bias'}`);
    if ((t.aux !== undefined) !== (o.aux !== undefined))
      throw new TypeError(`${where}: the ${plan.epilogue} epilogue ${t.aux ? `needs aux (${plan.aux!.bytes} bytes, see Matmul.aux)` : 'takes no aux'}`);
    if ((t.biasGrad !== undefined) !== (o.biasGrad !== undefined))
      throw new TypeError(`${where}: the ${plan.epilogue} epilogue ${t.biasGrad ? 'needs biasGrad' : 'takes no biasGrad'}`);
    const out = this.epilogue;
    out.bias = this.pointers.bias;
    out.aux = this.pointers.aux;
    if (o.bias !== undefined || o.biasGrad !== undefined) {
      const length = t.biasGrad === undefined ? this.m : (t.biasGrad === 'N' ? this.n : this.m) * this.batch;
      out.bias = this.vector(where, o.bias !== undefined ? 'bias' : 'biasGrad', o.bias ?? o.biasGrad, length).address;
    }
    if (o.aux !== undefined) {
      const aux = plan.aux!;
      const s = resolveVector(where, 'aux', o.aux, this.slots.v, 'u8');
      if (s.inc !== 1 || s.n < aux.bytes)
        throw new RangeError(
          `${where}: aux must be ${aux.bytes} contiguous bytes (a DeviceBuffer of at least that size), got ${s.n} byte(s)${s.inc !== 1 ? ` with stride ${s.inc}` : ''}`,
        );
      if (s.address % 256 !== 0) throw new RangeError(`${where}: aux must be 256-byte aligned`);
      out.aux = s.address;
    }
  }

  /**
   * Times every planned algorithm on `operands` (`iterations` executes each, between two events, after one
   * warm-up) and selects the fastest. d is overwritten (and read where beta ≠ 0 without c): use scratch data.
   * Resolves to the milliseconds per execute of each algorithm, in plan order.
   * @param operands The operands to time on, as {@link Matmul.execute} takes them; d is overwritten, so pass scratch data or data about to be computed.
   * @param options `iterations`: executes timed per algorithm, after one warm-up (1 to 10000; default 3).
   */
  async autotune(operands: MatmulOperands, options: { iterations?: number } = {}): Promise<number[]> {
    const where = 'Matmul.autotune';
    const { iterations: iterationsIn } = optionsOf(where, options, ['iterations']);
    const iterations = iterationsIn === undefined ? 3 : checkCount(where, 'iterations', iterationsIn, 1);
    // a bound, so a hostile count (2**53 - 1) cannot keep the GPU and the caller busy for ever
    if (iterations > MAX_AUTOTUNE_ITERATIONS) throw new RangeError(`${where}: iterations must be at most ${MAX_AUTOTUNE_ITERATIONS}, got ${iterations}`);
    const plan = this.planned;
    if (plan === undefined) throw new TypeError(`${where}: call plan() first`);
    // the operands checked here, named as autotune's, before any event or product
    checkOperands(where, operands);
    this.resolveOperands(where, plan, operands.a, operands.b, operands.c, operands.d);
    this.epilogueOperands(where, plan, operands);
    const stream: Stream = this.streamOf(where, operands.stream);
    const start = Event.create({ context: this.context });
    const end = Event.create({ context: this.context });
    const times: number[] = [];
    try {
      for (let i = 0; i < this.algos.length; i++) {
        this.chosen = i;
        this.execute(operands);
        start.record(stream);
        for (let r = 0; r < iterations; r++) this.execute(operands);
        end.record(stream);
        await end.synchronized();
        times.push((this.algos[i].time = start.elapsed(end) / iterations));
      }
    } finally {
      start.close();
      end.close();
    }
    this.chosen = times.indexOf(Math.min(...times));
    return times;
  }

  /** `Matmul(M×N×K, epilogue, …)`. */
  toString(): string {
    return `Matmul(${this.m}×${this.n}×${this.k}${this.batch > 1 ? ` ×${this.batch}` : ''}, ${this.planned?.epilogue ?? 'not planned'}${this.closed ? ', closed' : ''})`;
  }
}

/** What plan() settled: the epilogue, its traits and aux layout, the alignment the heuristic was told. */
interface Planned {
  epilogue: Epilogue;
  traits: EpilogueTraits;
  aux: AuxLayout | undefined;
  alignment: number;
}

interface MatmulShape {
  m: number;
  n: number;
  k: number;
  batch: number;
  tA: Transpose;
  tB: Transpose;
  compute: ComputeType;
  scale: ReturnType<typeof gemmScaleType>;
  desc: { a: MatrixSlot; b: MatrixSlot; c: MatrixSlot | undefined; d: MatrixSlot };
}

interface MatmulInit extends MatmulShape {
  api: typeof cublaslt;
  stream: Stream;
  lt: LtObjects;
}

/** The cuBLASLt objects of one Matmul. */
interface LtObjects {
  handle: LtObject<cublaslt.cublasLtHandle_t>;
  op: LtObject<cublaslt.cublasLtMatmulDesc_t>;
  pref: LtObject<cublaslt.cublasLtMatmulPreference_t>;
  layouts: LtObject<cublaslt.cublasLtMatrixLayout_t>[];
}

const OPERAND_KEYS = ['a', 'b', 'c', 'd', 'alpha', 'beta', 'bias', 'aux', 'biasGrad', 'stream'];
const PLAN_KEYS = ['epilogue', 'bias', 'maxWorkspaceBytes', 'algorithms'];
const CREATE_KEYS = ['a', 'b', 'c', 'd', 'transA', 'transB', 'computeType', 'stream'];

/** An operands object of execute/autotune, holding no unknown key (a typo such as `alhpa` would silently be alpha 1). */
function checkOperands(where: string, operands: unknown): void {
  if (typeof operands !== 'object' || operands === null)
    throw new TypeError(`${where}: operands must be an object { a, b, c?, d, alpha?, beta?, bias?, aux?, biasGrad?, stream? }, got ${describe(operands)}`);
  checkKeys(where, operands, OPERAND_KEYS, 'operand');
}

/** Checks the options of Matmul.create and works out M, N, K, the batch and the types (no library call). */
function matmulShape(where: string, options: MatmulOptions): MatmulShape {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`${where}: options must be an object { a, b, c?, d?, transA?, transB?, computeType?, stream? }, got ${describe(options)}`);
  checkKeys(where, options, CREATE_KEYS);
  const tA = checkTranspose(where, 'transA', options.transA);
  const tB = checkTranspose(where, 'transB', options.transB);
  const a = describeMatrix(where, 'a', options.a);
  const b = describeMatrix(where, 'b', options.b);
  if (a.dtype !== b.dtype) throw new TypeError(`${where}: a holds ${a.dtype} and b ${b.dtype}: they must match`);
  const m = opRows(a, tA);
  const k = opCols(a, tA);
  if (opRows(b, tB) !== k) throw new RangeError(`${where}: op(a) is ${m}×${k} and op(b) is ${opRows(b, tB)}×${opCols(b, tB)}: the inner dimensions differ`);
  const n = opCols(b, tB);
  const c = options.c === undefined ? undefined : describeMatrix(where, 'c', options.c);
  const batch = Math.max(a.batch, b.batch, c?.batch ?? 1, 1);
  const d =
    options.d !== undefined
      ? describeMatrix(where, 'd', options.d)
      : c !== undefined
        ? Object.assign(new MatrixSlot(), c)
        : describeMatrix(where, 'd', { dtype: a.dtype === 'i8' ? 'i32' : a.dtype, shape: batch > 1 ? [batch, m, n] : [m, n], order: 'col' });
  for (const [name, s] of [
    ['c', c],
    ['d', d],
  ] as const) {
    if (s === undefined) continue;
    if (s.rows !== m || s.cols !== n) throw new RangeError(`${where}: ${name} is ${s.rows}×${s.cols} but op(a)·op(b) is ${m}×${n}`);
    if (c !== undefined && s.dtype !== c.dtype) throw new TypeError(`${where}: c holds ${c.dtype} and d ${s.dtype}: they must match`);
  }
  for (const [name, s] of [
    ['a', a],
    ['b', b],
    ['c', c],
    ['d', d],
  ] as const) {
    if (s !== undefined && s.batch !== batch && s.batch !== 1) throw new RangeError(`${where}: ${name} holds ${s.batch} matrices, the product ${batch}`);
  }
  if (d.batch !== batch) throw new RangeError(`${where}: d must hold all ${batch} results, got ${d.batch}`);
  if (batch > 1 && d.batchStride === 0) throw new RangeError(`${where}: d has batch stride 0: every result would overwrite the same matrix`);
  const compute = options.computeType === undefined ? defaultComputeType(a.dtype, d.dtype) : checkComputeType(where, options.computeType);
  if (compute === undefined) throw new TypeError(`${where}: no matrix product of ${a.dtype} operands`);
  const scale = gemmScaleType(where, a.dtype, d.dtype, compute);
  return { m, n, k, batch, tA, tB, compute, scale, desc: { a, b, c, d } };
}

/** The cuBLASLt layout of a described matrix: order, and the batch (a single matrix broadcast with offset 0). */
function layoutOf(api: typeof cublaslt, where: string, s: MatrixSlot, batch: number): LtObject<cublaslt.cublasLtMatrixLayout_t> {
  const layout = new LtObject('cublasLtMatrixLayout', api.cublasLtMatrixLayoutCreate(cudaDataType(where, s.dtype), s.rows, s.cols, s.ld), (h) =>
    api.cublasLtMatrixLayoutDestroy(h),
  );
  try {
    if (s.order === 'row') api.cublasLtMatrixLayoutSetAttribute(layout.handle, LAYOUT.ORDER, 1);
    if (batch > 1) {
      api.cublasLtMatrixLayoutSetAttribute(layout.handle, LAYOUT.BATCH_COUNT, batch);
      api.cublasLtMatrixLayoutSetAttribute(layout.handle, LAYOUT.STRIDED_BATCH_OFFSET, s.batch === 1 ? 0 : s.batchStride);
    }
  } catch (e) {
    layout.close();
    throw e;
  }
  return layout;
}
