// The geometry of a cuFFT plan, worked out in JS before cuFFT loads: transform sizes, batch, and each
// side's layout as cuFFT's advanced layout (inembed/istride/idist) derived from row-major strides.
// cuFFT addresses element (b, x, y, z) of a side at b·dist + ((x·embed[1] + y)·embed[2] + z)·stride, so a
// side's strides (in elements, batch axis first) must be of that form: the last stride is `stride`, and
// each outer stride is a whole multiple of the next one, at least that dimension's extent apart.
import { describe } from '../describe';
import { StridedView, type DType } from '../memory/strided-view';
import { checkCount } from './common';

/** A transform's kind: complex to complex, real to complex (forward only), complex to real (inverse only). */
export type FftType = 'c2c' | 'r2c' | 'c2r';
/** Single (f32 / c64) or double (f64 / c128) precision. */
export type FftPrecision = 'single' | 'double';
/** Scaling like numpy's `norm`: 'none' (cuFFT's own: neither direction scaled), 'backward' (1/n on the inverse), 'ortho' (1/√n both), 'forward' (1/n on the forward). */
export type FftNormalize = 'none' | 'backward' | 'ortho' | 'forward';

export const FFT_TYPES: readonly FftType[] = ['c2c', 'r2c', 'c2r'];
export const FFT_NORMALIZE: readonly FftNormalize[] = ['none', 'backward', 'ortho', 'forward'];

/** One side (input or output) of a plan: what an operand must look like. */
export interface FftSide {
  /** The element type an operand must hold: f32/f64 on a real side, c64/c128 on a complex side. */
  readonly dtype: DType;
  /** [batch, ...the side's transform extents] (for the complex side of r2c/c2r the last is n/2 + 1). */
  readonly shape: readonly number[];
  /** Strides in elements of each axis of `shape` (batch first). */
  readonly strides: readonly number[];
  /** Elements an execution may touch from element 0 (the extent a buffer must hold). */
  readonly extent: number;
  /** True when the side is packed in C order (a DeviceBuffer of `extent` elements is then accepted). */
  readonly contiguous: boolean;
}

/** What a plan is made from. */
export interface FftGeometry {
  readonly type: FftType;
  readonly precision: FftPrecision;
  /** The logical transform sizes (the real side's for r2c/c2r), row-major: 1 to 3 of them. */
  readonly n: readonly number[];
  readonly batch: number;
  readonly input: FftSide;
  readonly output: FftSide;
}

/** cuFFT's advanced layout of one side. */
export interface CufftLayout {
  readonly embed: number[];
  readonly stride: number;
  readonly dist: number;
}

const DTYPES: Record<FftPrecision, { real: DType; complex: DType }> = {
  single: { real: 'f32', complex: 'c64' },
  double: { real: 'f64', complex: 'c128' },
};

/** The input and output dtypes of `type` at `precision`. */
export function fftDtypes(type: FftType, precision: FftPrecision): { input: DType; output: DType } {
  const d = DTYPES[precision];
  return { input: type === 'r2c' ? d.real : d.complex, output: type === 'c2r' ? d.real : d.complex };
}

/** The transform extents of a side: the complex side of r2c/c2r keeps n/2 + 1 of the last axis. */
export function sideExtents(n: readonly number[], complexHalf: boolean): number[] {
  const e = n.slice();
  if (complexHalf) e[e.length - 1] = Math.floor(e[e.length - 1] / 2) + 1;
  return e;
}

/** C-order strides of [batch, ...extents]. */
function packedStrides(extents: readonly number[]): number[] {
  const strides = new Array<number>(extents.length + 1);
  let step = 1;
  for (let d = extents.length - 1; d >= 0; d--) {
    strides[d + 1] = step;
    step *= extents[d];
  }
  strides[0] = step;
  return strides;
}

/** A side from its dtype, extents, batch and strides (default packed); RangeError for a layout cuFFT cannot express. */
export function makeSide(where: string, name: string, dtype: DType, extents: readonly number[], batch: number, strides?: readonly number[]): FftSide {
  const packed = packedStrides(extents);
  const s = strides === undefined ? packed : checkStrides(where, name, strides, extents.length + 1);
  const shape = [batch, ...extents];
  cufftLayout(where, name, shape, s); // refuses what cuFFT cannot address
  let extent = 1;
  for (let d = 0; d < shape.length; d++) extent += (shape[d] - 1) * s[d];
  // past 2**53 the sums above (and the byte counts made from them) are no longer exact
  if (!Number.isSafeInteger(extent * 16) || s.some((v) => !Number.isSafeInteger(v * 16)))
    throw new RangeError(
      `${where}: ${name.startsWith('input') ? 'an input' : 'an output'} of shape [${shape}] strides [${s}] spans more elements than JS counts exactly (2**53 bytes)`,
    );
  const contiguous = s.every((v, d) => shape[d] === 1 || v === packed[d]);
  return { dtype, shape, strides: s, extent, contiguous };
}

function checkStrides(where: string, name: string, v: unknown, length: number): number[] {
  if (!Array.isArray(v) || v.length !== length)
    throw new TypeError(
      `${where}: ${name} must be an array of ${length} strides in elements (batch axis first), got ${Array.isArray(v) ? `${v.length} entries` : describe(v)}`,
    );
  return Array.from(v, (x, i) => checkCount(where, `${name}[${i}]`, x, 1)); // Array.from visits holes (map skips them)
}

/**
 * cuFFT's embed/stride/dist for a side of `shape` [batch, ...extents] and `strides`: RangeError naming
 * `where` and `name` when an outer stride is not a whole multiple of the next or leaves too little room.
 */
export function cufftLayout(where: string, name: string, shape: readonly number[], strides: readonly number[]): CufftLayout {
  const rank = shape.length - 1;
  const stride = strides[rank];
  if (!(stride >= 1)) throw new RangeError(`${where}: ${name}'s innermost stride must be ≥ 1, got ${stride}`);
  const embed = new Array<number>(rank);
  embed[0] = shape[1];
  for (let d = rank - 1; d >= 1; d--) {
    const outer = strides[d];
    const inner = strides[d + 1];
    const ratio = outer / inner;
    if (!Number.isInteger(ratio) || ratio < shape[d + 1]) {
      throw new RangeError(
        `${where}: ${name}'s stride ${outer} of transform axis ${d - 1} must be a whole multiple ≥ ${shape[d + 1]} of the next axis's stride ${inner} (cuFFT's advanced layout); copy into a packed buffer first`,
      );
    }
    embed[d] = ratio;
  }
  const dist = shape[0] === 1 ? Math.max(strides[0], 1) : strides[0];
  if (!(dist >= 1)) throw new RangeError(`${where}: ${name}'s batch stride must be ≥ 1, got ${strides[0]}`);
  return { embed, stride, dist };
}

/** Checks `shape` is 1 to 3 positive sizes. */
export function checkFftShape(where: string, v: unknown): number[] {
  if (!Array.isArray(v) || v.length < 1 || v.length > 3)
    throw new TypeError(`${where}: shape must be an array of 1 to 3 transform sizes, got ${Array.isArray(v) ? `${v.length} entries` : describe(v)}`);
  return Array.from(v, (x, i) => checkCount(where, `shape[${i}]`, x, 1)); // Array.from visits holes (map skips them)
}

/** Checks a string option against its allowed values (TypeError naming it). */
export function checkChoice<T extends string>(where: string, name: string, v: unknown, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v))
    throw new TypeError(`${where}: ${name} must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${describe(v)}`);
  return v as T;
}

/** The geometry of a plan given by sizes: `n`, `batch`, and optional strides of each side. */
export function geometryFromSizes(
  where: string,
  type: FftType,
  precision: FftPrecision,
  n: readonly number[],
  batch: number,
  inputStrides?: readonly number[],
  outputStrides?: readonly number[],
): FftGeometry {
  const dt = fftDtypes(type, precision);
  const input = makeSide(where, 'inputStrides', dt.input, sideExtents(n, type === 'c2r'), batch, inputStrides);
  const output = makeSide(where, 'outputStrides', dt.output, sideExtents(n, type === 'r2c'), batch, outputStrides);
  return { type, precision, n, batch, input, output };
}

/** The type and precision two views' dtypes name, or a TypeError. */
export function typeOfDtypes(where: string, input: DType, output: DType): { type: FftType; precision: FftPrecision } {
  for (const precision of ['single', 'double'] as const) {
    for (const type of FFT_TYPES) {
      const dt = fftDtypes(type, precision);
      if (dt.input === input && dt.output === output) return { type, precision };
    }
  }
  throw new TypeError(
    `${where}: no cuFFT transform takes ${input} to ${output} (c64→c64, f32→c64, c64→f32 and their double forms c128→c128, f64→c128, c128→f64)`,
  );
}

/**
 * The geometry of a plan for two views over their last `rank` axes (the leading axes are the batch,
 * collapsed into one: they must be the same in both views and each a whole multiple of the next).
 */
export function geometryFromViews(where: string, input: StridedView, output: StridedView, rank?: number): FftGeometry {
  if (!(input instanceof StridedView)) throw new TypeError(`${where}: input must be a StridedView, got ${describe(input)}`);
  if (!(output instanceof StridedView)) throw new TypeError(`${where}: output must be a StridedView, got ${describe(output)}`);
  const { type, precision } = typeOfDtypes(where, input.dtype, output.dtype);
  const ndim = input.shape.length;
  if (output.shape.length !== ndim) throw new RangeError(`${where}: input has ${ndim} axes, output ${output.shape.length}`);
  const r = rank === undefined ? ndim : checkCount(where, 'rank', rank, 1);
  if (r > 3 || r > ndim)
    throw new RangeError(
      `${where}: rank must be 1 to 3 and at most the views' ${ndim} axes, got ${r}${rank === undefined ? ' (give rank: the number of trailing axes to transform)' : ''}`,
    );
  const lead = ndim - r;
  for (let d = 0; d < lead; d++)
    if (input.shape[d] !== output.shape[d])
      throw new RangeError(`${where}: batch axis ${d} is ${input.shape[d]} in the input, ${output.shape[d]} in the output`);
  const real = type === 'c2r' ? output : input;
  const n = real.shape.slice(lead);
  const want = { input: sideExtents(n, type === 'c2r'), output: sideExtents(n, type === 'r2c') };
  for (const [name, view] of [
    ['input', input],
    ['output', output],
  ] as const) {
    const got = view.shape.slice(lead);
    if (got.some((v, i) => v !== want[name][i]))
      throw new RangeError(`${where}: ${name}'s transform axes are [${got}], expected [${want[name]}] for a ${type} transform of [${n}]`);
  }
  if (n.some((v) => v < 1)) throw new RangeError(`${where}: transform sizes must be ≥ 1, got [${n}]`);
  const batchIn = collapseBatch(where, 'input', input, lead);
  const batchOut = collapseBatch(where, 'output', output, lead);
  return {
    type,
    precision,
    n,
    batch: batchIn.count,
    input: makeSide(where, 'input', input.dtype, want.input, batchIn.count, [batchIn.stride, ...input.strides.slice(lead)]),
    output: makeSide(where, 'output', output.dtype, want.output, batchOut.count, [batchOut.stride, ...output.strides.slice(lead)]),
  };
}

/** The leading `lead` axes of `view` as one batch axis: count and stride (RangeError when they do not collapse). */
function collapseBatch(where: string, name: string, view: StridedView, lead: number): { count: number; stride: number } {
  let count = 1;
  let stride = 0;
  for (let d = lead - 1; d >= 0; d--) {
    const extent = view.shape[d];
    if (extent === 1) continue;
    if (count === 1) stride = view.strides[d];
    else if (view.strides[d] !== stride * count)
      throw new RangeError(
        `${where}: ${name}'s batch axes [${view.shape.slice(0, lead)}] with strides [${view.strides.slice(0, lead)}] do not collapse into one batch stride; copy or reshape first`,
      );
    count *= extent;
  }
  if (count === 1) {
    let span = 1;
    for (let d = lead; d < view.shape.length; d++) span += (view.shape[d] - 1) * view.strides[d];
    stride = span;
  }
  return { count, stride };
}

/** Compact text naming a geometry (the plan cache's key). */
export function geometryKey(g: FftGeometry): string {
  return `${g.type}${g.precision[0]}|${g.n.join(',')}|${g.batch}|${g.input.strides.join(',')}|${g.output.strides.join(',')}`;
}

/** The factors each direction is scaled by under `normalize`, for `count` points per transform. */
export function normalizeFactors(normalize: FftNormalize, count: number): { forward: number; inverse: number } {
  switch (normalize) {
    case 'backward':
      return { forward: 1, inverse: 1 / count };
    case 'forward':
      return { forward: 1 / count, inverse: 1 };
    case 'ortho':
      return { forward: 1 / Math.sqrt(count), inverse: 1 / Math.sqrt(count) };
    default:
      return { forward: 1, inverse: 1 };
  }
}
