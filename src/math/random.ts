// RandomGenerator: a cuRAND device generator (curandGenerator_t) on a Stream, filling device memory with
// uniform, normal, log-normal, Poisson or raw bits. The count is the operand's: a contiguous StridedView's
// size, or a DeviceBuffer's whole elements of the dtype given. cuRAND makes normal and log-normal values
// in pairs with the pseudo generators (an odd count, or an output not aligned to a pair, is refused by
// cuRAND): the generator fills the even head in place and the last value through a two-element scratch
// from the caching allocator, so any count works. Quasi generators (Sobol) need counts that are whole
// multiples of their dimensions, checked here. cuRAND loads on the first generator, never at import.
import { checkKeys, describe } from '../describe';
import { whenNoHostFuncs } from '../lifecycle';
import { DeviceBuffer } from '../memory/device-buffer';
import { DTYPE_SIZES, StridedView, type DType } from '../memory/strided-view';
import { anyCapture, noteUse } from '../graph/capture';
import { loadCurand, type curand } from '../releases';
import type { Context } from '../context';
import type { Stream, StreamLike } from '../stream';
import { StreamBoundResource, checkCount, lockFields, optionsOf, resolveStream, type Operand, checkOpen } from './common';
import { SEALED, type Sealed, checkSealed } from '../sealed';

type CurandApi = ReturnType<typeof loadCurand>;
type GeneratorHandle = ReturnType<CurandApi['curandCreateGenerator']>;

/** cuRAND's generators: pseudo-random (seeded) and quasi-random (Sobol, with dimensions). */
export type RandomKind = 'philox4_32_10' | 'xorwow' | 'mrg32k3a' | 'mtgp32' | 'mt19937' | 'sobol32' | 'scrambled_sobol32' | 'sobol64' | 'scrambled_sobol64';
/** How results are ordered in memory (cuRAND's curandOrdering_t): 'default' for every generator, the others for pseudo generators. */
export type RandomOrdering = 'default' | 'best' | 'seeded' | 'legacy' | 'dynamic';

/** cuRAND's curandRngType_t codes (curand.h; test/math/random.test.ts compares them with the generated enum). */
export const CURAND_RNG: Readonly<Record<RandomKind, number>> = Object.freeze({
  xorwow: 101,
  mrg32k3a: 121,
  mtgp32: 141,
  mt19937: 142,
  philox4_32_10: 161,
  sobol32: 201,
  scrambled_sobol32: 202,
  sobol64: 203,
  scrambled_sobol64: 204,
});
/** curandOrdering_t codes of the pseudo generators' orderings, and the quasi generators' default. */
export const CURAND_ORDERING = Object.freeze({
  /** The ordering cuRAND finds fastest for the generator. */
  best: 100,
  /** The generator's default ordering (what `ordering: 'default'` selects). */
  default: 101,
  /** XORWOW's faster-seeding ordering, trading some statistical quality: a different sequence from the default. */
  seeded: 102,
  /** The ordering older cuRAND releases used: the same sequences as those releases for a given seed. */
  legacy: 103,
  /** An ordering cuRAND may pick per GPU for speed: sequences can differ between GPU models and releases. */
  dynamic: 104,
  /** The only ordering of the quasi (Sobol) generators; set for them whatever `ordering` says. */
  quasiDefault: 201,
});

const KINDS = Object.keys(CURAND_RNG) as RandomKind[];
const ORDERINGS: readonly RandomOrdering[] = ['default', 'best', 'seeded', 'legacy', 'dynamic'];

/** Options of {@link RandomGenerator.create}. */
export interface RandomGeneratorOptions {
  /** The generator (default 'philox4_32_10': counter-based, so offsets cost nothing). */
  kind?: RandomKind;
  /** Seed of a pseudo generator: a number (safe integer) or a bigint below 2⁶⁴ (default: cuRAND's own). */
  seed?: number | bigint;
  /** Skip this many values ahead (absolute offset; not for mtgp32 / mt19937). Default 0. */
  offset?: number | bigint;
  /** Ordering of results (default 'default'). */
  ordering?: RandomOrdering;
  /** Dimensions of a quasi generator, 1 to 20000 (default 1). */
  dimensions?: number;
  /** The stream fills are enqueued on (default: the current context's legacy default stream). */
  stream?: StreamLike;
}

/** The dtype option of a fill: needed for a DeviceBuffer, checked against a StridedView's. */
export interface FillOptions<D extends DType = DType> {
  /** The element type to generate: required when `out` is a DeviceBuffer (its whole elements are filled), must equal a StridedView's own. */
  dtype?: D;
}
/** Options of {@link RandomGenerator.normal} and {@link RandomGenerator.logNormal}. */
export interface NormalOptions extends FillOptions<'f32' | 'f64'> {
  /** Mean (of the underlying normal, for log-normal). Default 0. */
  mean?: number;
  /** Standard deviation (of the underlying normal, for log-normal), ≥ 0. Default 1. */
  std?: number;
}

const FLOATS = ['f32', 'f64'] as const;
const NORMAL_KEYS = ['mean', 'std', 'dtype'];

function isQuasi(kind: RandomKind): boolean {
  return kind.includes('sobol');
}

function checkU64(where: string, name: string, v: unknown): number | bigint {
  if (typeof v === 'bigint') {
    if (v < 0n || v >= 1n << 64n) throw new RangeError(`${where}: ${name} must be in [0, 2**64), got ${v}`);
    return v;
  }
  if (typeof v !== 'number') throw new TypeError(`${where}: ${name} must be a number or a bigint, got ${describe(v)}`);
  if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`${where}: ${name} must be a non-negative safe integer (or a bigint), got ${v}`);
  return v;
}

/** Checks every option of create() and returns them resolved (nothing loaded). */
function checkOptions(
  where: string,
  options: unknown,
): { kind: RandomKind; seed?: number | bigint; offset?: number | bigint; ordering: RandomOrdering; dimensions?: number; stream?: StreamLike } {
  if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options must be an object, got ${describe(options)}`);
  const o = options as RandomGeneratorOptions;
  checkKeys(where, o, ['kind', 'seed', 'offset', 'ordering', 'dimensions', 'stream']);
  // each option read once: a getter cannot pass a check with one answer and reach cuRAND with another
  const { kind = 'philox4_32_10', ordering = 'default', seed: seedIn, offset: offsetIn, dimensions: dimensionsIn, stream } = o;
  if (!KINDS.includes(kind)) throw new TypeError(`${where}: kind must be one of ${KINDS.map((k) => `'${k}'`).join(', ')}, got ${describe(kind)}`);
  if (!ORDERINGS.includes(ordering))
    throw new TypeError(`${where}: ordering must be one of ${ORDERINGS.map((k) => `'${k}'`).join(', ')}, got ${describe(ordering)}`);
  const quasi = isQuasi(kind);
  if (quasi && ordering !== 'default') throw new TypeError(`${where}: a quasi generator (${kind}) takes ordering 'default' only, got '${ordering}'`);
  if (quasi && seedIn !== undefined) throw new TypeError(`${where}: a quasi generator (${kind}) takes no seed (use offset or the scrambled kinds)`);
  if (!quasi && dimensionsIn !== undefined) throw new TypeError(`${where}: dimensions are for the quasi generators (sobol…), not ${kind}`);
  const seed = seedIn === undefined ? undefined : checkU64(where, 'seed', seedIn);
  const offset = offsetIn === undefined ? undefined : checkU64(where, 'offset', offsetIn);
  if (offset !== undefined && offset !== 0 && offset !== 0n && (kind === 'mtgp32' || kind === 'mt19937'))
    throw new RangeError(`${where}: ${kind} cannot start at an offset (cuRAND does not support it)`);
  const dimensions = dimensionsIn === undefined ? undefined : checkCount(where, 'dimensions', dimensionsIn, 1);
  if (dimensions !== undefined && dimensions > 20000) throw new RangeError(`${where}: dimensions must be 1 to 20000, got ${dimensions}`);
  return { kind, seed, offset, ordering, dimensions, stream };
}

function destroyGenerator(ctx: Context, handle: GeneratorHandle): void {
  whenNoHostFuncs(() => {
    if (ctx.bindForFree()) loadCurand().curandDestroyGenerator(handle);
  });
}

/** An output resolved: address and element count. */
interface Target {
  address: number;
  count: number;
  buffer: DeviceBuffer;
}

/**
 * A cuRAND generator on a Stream: `RandomGenerator.create({ seed: 42 })`, then
 * `gen.uniform(view)`, `gen.normal(buf, { mean: 0, std: 2, dtype: 'f32' })`, `gen.poisson(counts, 3.5)`.
 * Fills are asynchronous on the generator's stream; the sequence continues from call to call.
 * `close()` (or `using`) destroys it.
 * @example
 * ```ts
 * import { DeviceBuffer, RandomGenerator, Stream } from 'cuda-ts/objects';
 *
 * using stream = Stream.create();
 * using gen = RandomGenerator.create({ seed: 42, stream }); // philox4_32_10; loads cuRAND
 * using noise = DeviceBuffer.alloc(1001 * 4, { stream });
 * gen.normal(noise, { mean: 0, std: 2, dtype: 'f32' }); // any count, odd included; enqueued
 * using u = DeviceBuffer.alloc(1024 * 4, { stream });
 * gen.uniform(u, { dtype: 'f32' }); // in (0, 1]; the sequence goes on from the last fill
 * const values = u.toArray(Float32Array, { stream });
 * console.log(values.reduce((sum, v) => sum + v, 0) / values.length); // ≈ 0.5
 * ```
 */
export class RandomGenerator extends StreamBoundResource {
  /** The cuRAND generator algorithm it runs (the `kind` option; default 'philox4_32_10'). */
  readonly kind: RandomKind;
  /** Dimensions of a quasi generator (1 for pseudo generators): counts must be whole multiples of it. */
  readonly dimensions: number;
  private readonly h: GeneratorHandle;
  private readonly api: CurandApi;

  private constructor(seal: Sealed, kind: RandomKind, dimensions: number, stream: Stream, h: GeneratorHandle, api: CurandApi) {
    checkSealed(seal, 'RandomGenerator', 'RandomGenerator.create()');
    const ctx = stream.context;
    super('RandomGenerator', () => destroyGenerator(ctx, h), stream);
    this.kind = kind;
    this.dimensions = dimensions;
    this.h = h;
    this.api = api;
    lockFields(this as RandomGenerator, ['kind', 'dimensions']);
  }

  /**
   * Makes a generator (cuRAND loads here on first use).
   * @param options `kind` (default 'philox4_32_10'), `seed` (pseudo generators; default cuRAND's own), `offset` (values skipped ahead; default 0), `ordering`
   * (default 'default'), `dimensions` (quasi generators, 1 to 20000; default 1) and `stream` (default: the current context's legacy default stream).
   */
  static create(options: RandomGeneratorOptions = {}): RandomGenerator {
    const where = 'RandomGenerator.create';
    const o = checkOptions(where, options);
    const stream = resolveStream(where, o.stream);
    const api = loadCurand();
    stream.context.bind();
    const h = api.curandCreateGenerator(CURAND_RNG[o.kind] as curand.curandRngType_t);
    try {
      api.curandSetStream(h, stream.handle as unknown as curand.cudaStream_t);
      if (o.seed !== undefined) api.curandSetPseudoRandomGeneratorSeed(h, o.seed);
      if (o.offset !== undefined) api.curandSetGeneratorOffset(h, o.offset);
      const quasi = isQuasi(o.kind);
      if (o.ordering !== 'default' || quasi)
        api.curandSetGeneratorOrdering(h, (quasi ? CURAND_ORDERING.quasiDefault : CURAND_ORDERING[o.ordering]) as curand.curandOrdering_t);
      if (o.dimensions !== undefined) api.curandSetQuasiRandomGeneratorDimensions(h, o.dimensions);
    } catch (e) {
      try {
        api.curandDestroyGenerator(h);
      } catch {
        // the first error is the one to report
      }
      throw e;
    }
    return new RandomGenerator(SEALED, o.kind, o.dimensions ?? 1, stream, h, api);
  }

  /** The curandGenerator_t, for typed-layer calls; valid until close(). */
  get handle(): GeneratorHandle {
    this.assertOpen('RandomGenerator.handle');
    return this.h;
  }

  /**
   * Sets a pseudo generator's seed (the sequence restarts at offset 0, cuRAND's rule).
   * @param seed The new seed: a non-negative safe integer or a bigint below 2⁶⁴.
   */
  setSeed(seed: number | bigint): this {
    const where = 'RandomGenerator.setSeed';
    const s = checkU64(where, 'seed', seed);
    if (isQuasi(this.kind)) throw new TypeError(`${where}: a quasi generator (${this.kind}) takes no seed`);
    this.checkUsable(where);
    this.context.bind();
    this.api.curandSetPseudoRandomGeneratorSeed(this.h, s);
    return this;
  }

  /**
   * Sets the absolute offset into the sequence (not for mtgp32 / mt19937).
   * @param offset How many values of the sequence to skip, counted from its start (not from the current position): a non-negative safe integer or a bigint
   * below 2⁶⁴.
   */
  setOffset(offset: number | bigint): this {
    const where = 'RandomGenerator.setOffset';
    const v = checkU64(where, 'offset', offset);
    if (this.kind === 'mtgp32' || this.kind === 'mt19937')
      throw new RangeError(`${where}: ${this.kind} cannot start at an offset (cuRAND does not support it)`);
    this.checkUsable(where);
    this.context.bind();
    this.api.curandSetGeneratorOffset(this.h, v);
    return this;
  }

  /**
   * Moves the generator to `stream` (curandSetStream).
   * @param stream The stream later fills enqueue on: a Stream (or stream-protocol object) of the generator's context.
   */
  setStream(stream: StreamLike): this {
    const where = 'RandomGenerator.setStream';
    this.checkUsable(where);
    const s = resolveStream(where, stream);
    this.adoptStream(s);
    this.context.bind();
    this.api.curandSetStream(this.h, s.handle as unknown as curand.cudaStream_t);
    return this;
  }

  /**
   * Uniform values in (0, 1] (f32 or f64; cuRAND's interval). Returns `out`.
   * @param out The device memory filled (f32 or f64): a contiguous StridedView (its size is the count) or a DeviceBuffer (its whole elements of the dtype); a
   * quasi generator needs a count that is a whole multiple of its dimensions.
   * @param options `dtype` ('f32' or 'f64'): required for a DeviceBuffer out, must equal a view's own.
   */
  uniform<O extends Operand>(out: O, options?: FillOptions<'f32' | 'f64'>): O {
    const where = 'RandomGenerator.uniform';
    const t = this.target(where, out, optionsOf(where, options, ['dtype']).dtype, FLOATS);
    if (t.count === 0) return out;
    if (t.dtype === 'f32') this.api.curandGenerateUniform(this.h, t.address, t.count);
    else this.api.curandGenerateUniformDouble(this.h, t.address, t.count);
    return out;
  }

  /**
   * Normal values of `mean` and `std` (default 0 and 1), any count (see the file comment). Returns `out`.
   * @param out The device memory filled (f32 or f64), any count: a contiguous StridedView (its size is the count) or a DeviceBuffer (its whole elements of
   * the dtype); a quasi generator needs a count that is a whole multiple of its dimensions.
   * @param options `mean` (default 0), `std` (≥ 0, default 1) and `dtype` ('f32' or 'f64': required for a DeviceBuffer out).
   */
  normal<O extends Operand>(out: O, options?: NormalOptions): O {
    return this.paired('RandomGenerator.normal', out, options, false);
  }

  /**
   * Log-normal values: exp of a normal of `mean` and `std` (default 0 and 1). Returns `out`.
   * @param out The device memory filled (f32 or f64), any count: a contiguous StridedView (its size is the count) or a DeviceBuffer (its whole elements of
   * the dtype); a quasi generator needs a count that is a whole multiple of its dimensions.
   * @param options `mean` and `std` of the underlying normal (default 0 and 1; std ≥ 0) and `dtype` ('f32' or 'f64': required for a DeviceBuffer out).
   */
  logNormal<O extends Operand>(out: O, options?: NormalOptions): O {
    return this.paired('RandomGenerator.logNormal', out, options, true);
  }

  /**
   * Poisson counts of mean `lambda` (> 0) into u32 elements. Returns `out`.
   * @param out The device memory filled with u32 counts: a contiguous StridedView (its size is the count) or a DeviceBuffer (its whole elements of the
   * dtype); a quasi generator needs a count that is a whole multiple of its dimensions.
   * @param lambda The mean of the distribution: a finite number > 0.
   */
  poisson<O extends Operand>(out: O, lambda: number): O {
    const where = 'RandomGenerator.poisson';
    if (typeof lambda !== 'number') throw new TypeError(`${where}: lambda must be a number, got ${describe(lambda)}`);
    if (!(lambda > 0) || !Number.isFinite(lambda)) throw new RangeError(`${where}: lambda must be a finite number > 0, got ${lambda}`);
    const t = this.target(where, out, 'u32', ['u32'] as const);
    if (t.count > 0) this.api.curandGeneratePoisson(this.h, t.address, t.count, lambda);
    return out;
  }

  /**
   * Raw random bits: u32 elements (pseudo generators and the 32-bit Sobol kinds) or u64 (the 64-bit Sobol kinds). Returns `out`.
   * @param out The device memory filled with raw bits: u32 elements (pseudo generators, 32-bit Sobol) or u64 (64-bit Sobol); a contiguous StridedView, or a
   * DeviceBuffer (its whole elements).
   */
  bits<O extends Operand>(out: O): O {
    const where = 'RandomGenerator.bits';
    const wide = this.kind === 'sobol64' || this.kind === 'scrambled_sobol64';
    const dtype = wide ? 'u64' : 'u32';
    const t = this.target(where, out, out instanceof StridedView ? undefined : dtype, [dtype] as const);
    if (t.count === 0) return out;
    if (wide) this.api.curandGenerateLongLong(this.h, t.address, t.count);
    else this.api.curandGenerate(this.h, t.address, t.count);
    return out;
  }

  /** `RandomGenerator(philox4_32_10)`. */
  toString(): string {
    return `RandomGenerator(${this.kind}${this.closed ? ', closed' : ''})`;
  }

  private paired<O extends Operand>(where: string, out: O, options: NormalOptions | undefined, log: boolean): O {
    const o = optionsOf(where, options, NORMAL_KEYS);
    const mean = o.mean ?? 0;
    const std = o.std ?? 1;
    if (typeof mean !== 'number' || !Number.isFinite(mean)) throw new TypeError(`${where}: mean must be a finite number, got ${describe(mean)}`);
    if (typeof std !== 'number' || !Number.isFinite(std)) throw new TypeError(`${where}: std must be a finite number, got ${describe(std)}`);
    if (std < 0) throw new RangeError(`${where}: std must be ≥ 0, got ${std}`);
    const t = this.target(where, out, o.dtype, FLOATS);
    if (t.count === 0) return out;
    const f32 = t.dtype === 'f32';
    const gen = f32
      ? log
        ? this.api.curandGenerateLogNormal
        : this.api.curandGenerateNormal
      : log
        ? this.api.curandGenerateLogNormalDouble
        : this.api.curandGenerateNormalDouble;
    const size = f32 ? 4 : 8;
    // Pseudo generators make pairs: an even count at a pair-aligned address goes straight in.
    if (isQuasi(this.kind) || (t.count % 2 === 0 && t.address % (2 * size) === 0)) {
      gen(this.h, t.address, t.count, mean, std);
      return out;
    }
    this.unpaired(t, size, (address, count) => gen(this.h, address, count, mean, std));
    return out;
  }

  /** An odd count or an unaligned output: pairs in place where aligned, the rest through a scratch pair (or a scratch of the whole). */
  private unpaired(t: Target & { dtype: DType }, size: number, gen: (address: number, count: number) => void): void {
    const stream = this.stream;
    const aligned = t.address % (2 * size) === 0;
    const head = aligned ? t.count - (t.count % 2) : 0;
    const rest = t.count - head;
    if (head > 0) gen(t.address, head);
    const scratch = DeviceBuffer.alloc((rest + (rest % 2)) * size, { stream });
    try {
      gen(scratch.ptr, rest + (rest % 2));
      const start = t.address - t.buffer.ptr + head * size;
      const tail = t.buffer.subarray(start, start + rest * size);
      tail.copyFrom(scratch, { byteLength: rest * size, stream });
      tail.close();
    } finally {
      scratch.close(); // freed in stream order, after the copy
    }
  }

  /**
   * Resolves `out` as `dtype` (one of `allowed`): a contiguous StridedView (its size is the count) or a
   * DeviceBuffer (its whole elements). Checks the count against the quasi dimensions, binds the context.
   */
  private target<D extends DType>(where: string, out: Operand, dtype: D | undefined, allowed: readonly D[]): Target & { dtype: D } {
    this.checkUsable(where);
    let t: Target & { dtype: D };
    if (out instanceof StridedView) {
      const buffer = out.buffer;
      if (!(buffer instanceof DeviceBuffer)) throw new TypeError(`${where}: out must view device memory, got a view of ${describe(buffer)}`);
      if (!(allowed as readonly DType[]).includes(out.dtype)) throw new TypeError(`${where}: out holds ${out.dtype}, expected ${allowed.join(' or ')}`);
      if (dtype !== undefined && dtype !== out.dtype) throw new TypeError(`${where}: out holds ${out.dtype}, the dtype option says ${dtype}`);
      if (!out.isContiguous)
        throw new RangeError(`${where}: out must be contiguous (cuRAND writes consecutive elements), got strides [${out.strides}] for shape [${out.shape}]`);
      checkOpen(where, buffer);
      t = { address: buffer.ptr + out.byteOffset, count: out.size, buffer, dtype: out.dtype as D };
    } else if (out instanceof DeviceBuffer) {
      if (dtype === undefined)
        throw new TypeError(`${where}: out is a DeviceBuffer without a dtype: pass { dtype: ${allowed.map((d) => `'${d}'`).join(' | ')} } or a StridedView`);
      if (!(allowed as readonly DType[]).includes(dtype))
        throw new TypeError(`${where}: dtype must be ${allowed.map((d) => `'${d}'`).join(' or ')}, got ${describe(dtype)}`);
      checkOpen(where, out);
      t = { address: out.ptr, count: Math.floor(out.byteLength / DTYPE_SIZES[dtype]), buffer: out, dtype };
    } else {
      throw new TypeError(
        `${where}: out must be a DeviceBuffer or a StridedView of device memory, got ${describe(out)}${ArrayBuffer.isView(out) ? ' (a host array: cuRAND writes device memory; allocate a DeviceBuffer)' : ''}`,
      );
    }
    if (t.buffer.context !== this.context)
      throw new TypeError(`${where}: out belongs to ${String(t.buffer.context)}, the generator to ${String(this.context)}`);
    if (t.count % this.dimensions !== 0)
      throw new RangeError(
        `${where}: a ${this.kind} generator of ${this.dimensions} dimensions fills whole multiples of ${this.dimensions} values, got ${t.count}`,
      );
    this.context.bind();
    if (anyCapture()) noteUse(this.context, this.stream.handle, this, t.buffer);
    return t;
  }
}
