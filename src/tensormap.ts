// TensorMap: a CUtensorMap (the 128-byte descriptor Hopper's tensor memory accelerator reads) over a
// DeviceBuffer, encoded with cuTensorMapEncodeTiled or cuTensorMapEncodeIm2col and passed to kernels
// by value (`const __grid_constant__ CUtensorMap`). The map keeps the buffer it describes alive; after
// replaceAddress() it keeps the new buffer instead.
import { koffi } from '../support';
import * as drv from './driver';
import { checkKeys, describe } from './describe';
import { Core, Resource } from './lifecycle';
import { arg, type StructType, type TypedArg } from './kernel-args';
import { DeviceBuffer, ownerOf } from './memory/device-buffer';
import { SEALED, type Sealed, checkSealed } from './sealed';

/**
 * Element types of a tensor map. The packed `u4x16…`/`u6x16…` types (16 four- or six-bit values per
 * 8 or 16 bytes) need explicit `strides`.
 */
export type TensorMapDataType =
  | 'u8'
  | 'u16'
  | 'u32'
  | 'i32'
  | 'u64'
  | 'i64'
  | 'f16'
  | 'f32'
  | 'f64'
  | 'bf16'
  | 'f32ftz'
  | 'tf32'
  | 'tf32ftz'
  | 'u4x16align8'
  | 'u4x16align16'
  | 'u6x16align16';
/** Interleaving of a tensor map ('none' for ordinary layouts). */
export type TensorMapInterleave = 'none' | '16B' | '32B';
/** Shared-memory swizzle pattern of the loaded box. */
export type TensorMapSwizzle = 'none' | '32B' | '64B' | '128B' | '128B_atom32B' | '128B_atom32B_flip8B' | '128B_atom64B';
/** L2 promotion (the granularity of L2 fills). */
export type TensorMapL2Promotion = 'none' | '64B' | '128B' | '256B';
/** What out-of-bounds elements read as: zero, or NaN (floating-point types only). */
export type TensorMapOobFill = 'zero' | 'nan';

const DTYPES: Record<TensorMapDataType, [code: number, bytes: number | undefined]> = {
  u8: [0, 1],
  u16: [1, 2],
  u32: [2, 4],
  i32: [3, 4],
  u64: [4, 8],
  i64: [5, 8],
  f16: [6, 2],
  f32: [7, 4],
  f64: [8, 8],
  bf16: [9, 2],
  f32ftz: [10, 4],
  tf32: [11, 4],
  tf32ftz: [12, 4],
  u4x16align8: [13, undefined],
  u4x16align16: [14, undefined],
  u6x16align16: [15, undefined],
};
const INTERLEAVE: Record<TensorMapInterleave, number> = { none: 0, '16B': 1, '32B': 2 };
const SWIZZLE: Record<TensorMapSwizzle, number> = { none: 0, '32B': 1, '64B': 2, '128B': 3, '128B_atom32B': 4, '128B_atom32B_flip8B': 5, '128B_atom64B': 6 };
const L2: Record<TensorMapL2Promotion, number> = { none: 0, '64B': 1, '128B': 2, '256B': 3 };
const OOB: Record<TensorMapOobFill, number> = { zero: 0, nan: 1 };

/** Options shared by {@link TensorMap.tiled} and {@link TensorMap.im2col}. */
export interface TensorMapCommon {
  /** The global memory described (its address must be 16-byte aligned, 32 with 32B interleave). Kept alive by the map. */
  buffer: DeviceBuffer;
  /** Element type. */
  dtype: TensorMapDataType;
  /** Elements per dimension, innermost (contiguous) dimension first, as CUDA and PTX coordinates order them. Rank 1 to 5. */
  shape: readonly number[];
  /** Byte strides of dimensions 1 … rank−1 (multiples of 16; default: packed from `shape` and `dtype`). */
  strides?: readonly number[];
  /** Traversal step per dimension (default all 1). */
  elementStrides?: readonly number[];
  /** Interleave (default 'none'). */
  interleave?: TensorMapInterleave;
  /** Shared-memory swizzle (default 'none'). */
  swizzle?: TensorMapSwizzle;
  /** L2 promotion (default 'none'). */
  l2Promotion?: TensorMapL2Promotion;
  /** Out-of-bounds fill (default 'zero'). */
  oobFill?: TensorMapOobFill;
}

/** Options of {@link TensorMap.tiled}. */
export interface TiledTensorMapOptions extends TensorMapCommon {
  /** The box (tile) one load copies: elements per dimension, innermost first, each 1 to 256. */
  box: readonly number[];
}

/** Options of {@link TensorMap.im2col}. */
export interface Im2colTensorMapOptions extends TensorMapCommon {
  /** Lower corner of the bounding box per spatial dimension (rank − 2 values, innermost spatial first). */
  pixelBoxLowerCorner: readonly number[];
  /** Upper corner of the bounding box per spatial dimension (rank − 2 values). */
  pixelBoxUpperCorner: readonly number[];
  /** Channels per pixel one load copies (1 to 256). */
  channelsPerPixel: number;
  /** Pixels one load copies (1 to 1024). */
  pixelsPerColumn: number;
}

function pick<T extends string>(where: string, name: string, table: Record<T, number>, v: unknown, dflt: T): number {
  const key = v === undefined ? dflt : v;
  if (typeof key !== 'string' || !Object.prototype.hasOwnProperty.call(table, key))
    throw new TypeError(
      `${where}: ${name} must be one of ${Object.keys(table)
        .map((k) => `'${k}'`)
        .join(', ')}, got ${describe(v)}`,
    );
  return table[key as T];
}

function intList(where: string, name: string, v: unknown, length: number, min: number, max: number): number[] {
  if (!Array.isArray(v)) throw new TypeError(`${where}: ${name} must be an array of ${length} integers, got ${describe(v)}`);
  if (v.length !== length) throw new RangeError(`${where}: ${name} must have ${length} entries, got ${v.length}`);
  return v.map((x, i) => {
    if (typeof x !== 'number' || !Number.isSafeInteger(x)) throw new TypeError(`${where}: ${name}[${i}] must be an integer, got ${describe(x)}`);
    if (x < min || x > max) throw new RangeError(`${where}: ${name}[${i}] must be from ${min} to ${max}, got ${x}`);
    return x;
  });
}

function intArg(where: string, name: string, x: unknown, min: number, max: number): number {
  if (typeof x !== 'number' || !Number.isSafeInteger(x)) throw new TypeError(`${where}: ${name} must be an integer, got ${describe(x)}`);
  if (x < min || x > max) throw new RangeError(`${where}: ${name} must be from ${min} to ${max}, got ${x}`);
  return x;
}

/** A 64-byte-aligned 128-byte block (cuTensorMapEncode* require the alignment). */
function alignedBlock(): Uint8Array {
  const ab = new ArrayBuffer(128 + 64);
  const address = Number(koffi.address(ab));
  return new Uint8Array(ab, (64 - (address % 64)) % 64, 128);
}

interface Encoded {
  dtype: number;
  rank: number;
  dims: BigUint64Array;
  strides: BigUint64Array;
  elementStrides: Uint32Array;
  interleave: number;
  swizzle: number;
  l2: number;
  oob: number;
  /** Bytes the tensor spans from its first element (undefined for packed types). */
  extent: number | undefined;
  alignment: number;
}

/** Checks what both encodings share, and the buffer. */
function common(where: string, o: Record<string, unknown>, keys: readonly string[]): Encoded {
  checkKeys(where, o, keys);
  if (!(o.buffer instanceof DeviceBuffer)) throw new TypeError(`${where}: buffer must be a DeviceBuffer, got ${describe(o.buffer)}`);
  if (typeof o.dtype !== 'string' || !Object.prototype.hasOwnProperty.call(DTYPES, o.dtype))
    throw new TypeError(
      `${where}: dtype must be one of ${Object.keys(DTYPES)
        .map((k) => `'${k}'`)
        .join(', ')}, got ${describe(o.dtype)}`,
    );
  const [dtype, elem] = DTYPES[o.dtype as TensorMapDataType];
  if (!Array.isArray(o.shape) || o.shape.length < 1 || o.shape.length > 5)
    throw new RangeError(
      `${where}: shape must be an array of 1 to 5 dimensions, got ${Array.isArray(o.shape) ? `${o.shape.length} entries` : describe(o.shape)}`,
    );
  const rank = o.shape.length;
  const shape = intList(where, 'shape', o.shape, rank, 1, 2 ** 32);
  const interleave = pick(where, 'interleave', INTERLEAVE, o.interleave, 'none');
  let strides: number[];
  if (o.strides === undefined) {
    if (elem === undefined) throw new TypeError(`${where}: strides are required with the packed dtype '${o.dtype as string}'`);
    strides = [];
    let s = shape[0] * elem;
    for (let i = 1; i < rank; i++) {
      strides.push(s);
      s *= shape[i];
    }
  } else strides = intList(where, 'strides', o.strides, rank - 1, 1, 2 ** 40 - 1);
  const strideUnit = interleave === INTERLEAVE['32B'] ? 32 : 16;
  strides.forEach((s, i) => {
    if (s % strideUnit !== 0)
      throw new RangeError(
        `${where}: strides[${i}] = ${s} must be a multiple of ${strideUnit} bytes${o.strides === undefined ? ' (the packed stride: pad the rows, or give strides)' : ''}`,
      );
  });
  const elementStrides = o.elementStrides === undefined ? new Array<number>(rank).fill(1) : intList(where, 'elementStrides', o.elementStrides, rank, 1, 8);
  let extent: number | undefined;
  if (elem !== undefined) {
    extent = elem * shape[0];
    for (let i = 1; i < rank; i++) extent += (shape[i] - 1) * strides[i - 1];
  }
  return {
    dtype,
    rank,
    dims: BigUint64Array.from(shape, (x) => BigInt(x)),
    strides: BigUint64Array.from(strides.length > 0 ? strides : [0], (x) => BigInt(x)),
    elementStrides: Uint32Array.from(elementStrides),
    interleave,
    swizzle: pick(where, 'swizzle', SWIZZLE, o.swizzle, 'none'),
    l2: pick(where, 'l2Promotion', L2, o.l2Promotion, 'none'),
    oob: pick(where, 'oobFill', OOB, o.oobFill, 'zero'),
    extent,
    alignment: interleave === INTERLEAVE['32B'] || dtype === 14 || dtype === 15 ? 32 : 16,
  };
}

/** Checks that `buffer` is open, aligned and holds the tensor; returns its address. */
function checkBuffer(where: string, buffer: unknown, e: Pick<Encoded, 'extent' | 'alignment'>): number {
  if (!(buffer instanceof DeviceBuffer)) throw new TypeError(`${where}: buffer must be a DeviceBuffer, got ${describe(buffer)}`);
  const address = buffer.ptr as number; // throws once closed
  if (address % e.alignment !== 0) throw new RangeError(`${where}: the buffer's address 0x${address.toString(16)} is not ${e.alignment}-byte aligned`);
  if (e.extent !== undefined && e.extent > buffer.byteLength)
    throw new RangeError(`${where}: the tensor spans ${e.extent} bytes, the buffer holds ${buffer.byteLength}`);
  return address;
}

/** Keeps one buffer alive until closed (what the map holds; replaced by replaceAddress). */
function holdBuffer(buffer: DeviceBuffer): Core {
  return new Core('TensorMap (held buffer)', () => undefined, [ownerOf(buffer).core]);
}

/**
 * A tensor map (CUtensorMap) describing a tensor in a DeviceBuffer for TMA loads and stores, made with
 * {@link TensorMap.tiled} or {@link TensorMap.im2col}. Pass it to a kernel parameter declared
 * `const __grid_constant__ CUtensorMap` as {@link TensorMap.argType} in the kernel's signature with
 * {@link TensorMap.bytes} as the value, or as `map.arg` without a signature. The map keeps its buffer
 * alive until it is closed (or until replaceAddress() points it at another buffer).
 *
 * ```ts
 * using map = TensorMap.tiled({ buffer: a, dtype: 'f32', shape: [n, n], box: [8, 8] });
 * const k = module.kernel('tma_tile', [TensorMap.argType, 'ptr']);
 * launch(stream, { grid: 1, block: 32 }, k, map.bytes, out);
 * ```
 */
export class TensorMap extends Resource {
  /** The kernel-signature type of a CUtensorMap parameter: a 128-byte struct aligned to 64. */
  static readonly argType: StructType = Object.freeze({ struct: 128, align: 64 });

  /** 'tiled' or 'im2col'. */
  readonly mode: 'tiled' | 'im2col';
  /** Element type. */
  readonly dtype: TensorMapDataType;
  /** Elements per dimension, innermost first. */
  readonly shape: readonly number[];
  private readonly block: Uint8Array;
  private readonly state: { hold: Core; buffer: DeviceBuffer };
  private readonly encoded: Encoded;

  private constructor(seal: Sealed, mode: 'tiled' | 'im2col', dtype: TensorMapDataType, block: Uint8Array, buffer: DeviceBuffer, encoded: Encoded) {
    checkSealed(seal, 'TensorMap', 'TensorMap.tiled() or TensorMap.im2col()');
    const state = { hold: holdBuffer(buffer), buffer };
    super('TensorMap', () => state.hold.close(), [buffer.context]);
    this.mode = mode;
    this.dtype = dtype;
    this.shape = Object.freeze(Array.from(encoded.dims, Number));
    this.block = block;
    this.state = state;
    this.encoded = encoded;
  }

  /**
   * A tiled tensor map (cuTensorMapEncodeTiled): each TMA operation moves one `box` of the tensor.
   * Checks the arguments (rank 1–5, box entries 1–256, stride and address alignment, the tensor within
   * the buffer) before the driver, which checks the rest.
   * @param options `buffer` (the tensor's memory, 16-byte aligned), `dtype`, `shape` (elements per dimension, innermost first), `strides` (byte strides of dimensions 1 … rank−1; default packed), `elementStrides`, `interleave`, `swizzle`, `l2Promotion`, `oobFill` and `box` (the tile one TMA operation moves: elements per dimension, each 1 to 256).
   */
  static tiled(options: TiledTensorMapOptions): TensorMap {
    const where = 'TensorMap.tiled';
    if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options must be an object, got ${describe(options)}`);
    const o = options as unknown as Record<string, unknown>;
    const e = common(where, o, ['buffer', 'dtype', 'shape', 'strides', 'box', 'elementStrides', 'interleave', 'swizzle', 'l2Promotion', 'oobFill']);
    const box = intList(where, 'box', o.box, e.rank, 1, 256);
    const elem = DTYPES[o.dtype as TensorMapDataType][1];
    if (e.interleave === 0 && elem !== undefined && (box[0] * elem) % 16 !== 0)
      throw new RangeError(`${where}: box[0] × ${elem} bytes = ${box[0] * elem} must be a multiple of 16 bytes`);
    const buffer = o.buffer as DeviceBuffer;
    const address = checkBuffer(where, buffer, e);
    const block = alignedBlock();
    drv.call(
      buffer.context,
      'cuTensorMapEncodeTiled',
      block,
      e.dtype,
      e.rank,
      address,
      e.dims,
      e.strides,
      Uint32Array.from(box),
      e.elementStrides,
      e.interleave,
      e.swizzle,
      e.l2,
      e.oob,
    );
    return new TensorMap(SEALED, 'tiled', o.dtype as TensorMapDataType, block, buffer, e);
  }

  /**
   * An im2col tensor map (cuTensorMapEncodeIm2col) for convolutions: each TMA operation gathers
   * `pixelsPerColumn` pixels of `channelsPerPixel` channels from the bounding box the corners define.
   * The tensor is rank 3 to 5 (channels innermost, then the spatial dimensions, then the batch).
   * @param options `buffer` (the tensor's memory, 16-byte aligned), `dtype`, `shape` (elements per dimension, innermost first), `strides` (byte strides of dimensions 1 … rank−1; default packed), `elementStrides`, `interleave`, `swizzle`, `l2Promotion`, `oobFill`, `pixelBoxLowerCorner` and `pixelBoxUpperCorner` (the bounding box per spatial dimension), `channelsPerPixel` and `pixelsPerColumn`.
   */
  static im2col(options: Im2colTensorMapOptions): TensorMap {
    const where = 'TensorMap.im2col';
    if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options must be an object, got ${describe(options)}`);
    const o = options as unknown as Record<string, unknown>;
    const e = common(where, o, [
      'buffer',
      'dtype',
      'shape',
      'strides',
      'elementStrides',
      'interleave',
      'swizzle',
      'l2Promotion',
      'oobFill',
      'pixelBoxLowerCorner',
      'pixelBoxUpperCorner',
      'channelsPerPixel',
      'pixelsPerColumn',
    ]);
    if (e.rank < 3) throw new RangeError(`${where}: an im2col tensor has rank 3 to 5, got ${e.rank}`);
    const spatial = e.rank - 2;
    const bound = e.rank === 3 ? 2 ** 15 : e.rank === 4 ? 2 ** 7 : 2 ** 4;
    const lower = intList(where, 'pixelBoxLowerCorner', o.pixelBoxLowerCorner, spatial, -bound, bound - 1);
    const upper = intList(where, 'pixelBoxUpperCorner', o.pixelBoxUpperCorner, spatial, -bound, bound - 1);
    const channels = intArg(where, 'channelsPerPixel', o.channelsPerPixel, 1, 256);
    const pixels = intArg(where, 'pixelsPerColumn', o.pixelsPerColumn, 1, 1024);
    const buffer = o.buffer as DeviceBuffer;
    const address = checkBuffer(where, buffer, e);
    const block = alignedBlock();
    drv.call(
      buffer.context,
      'cuTensorMapEncodeIm2col',
      block,
      e.dtype,
      e.rank,
      address,
      e.dims,
      e.strides,
      Int32Array.from(lower),
      Int32Array.from(upper),
      channels,
      pixels,
      e.elementStrides,
      e.interleave,
      e.swizzle,
      e.l2,
      e.oob,
    );
    return new TensorMap(SEALED, 'im2col', o.dtype as TensorMapDataType, block, buffer, e);
  }

  /** The encoded CUtensorMap: the value for a {@link TensorMap.argType} kernel parameter (do not modify it). */
  get bytes(): Uint8Array {
    this.assertOpen();
    return this.block;
  }

  /** The map as a typed kernel argument (`launch(s, cfg, k, map.arg, …)` for kernels without a declared signature). */
  get arg(): TypedArg {
    return arg.struct(this.bytes, 64);
  }

  /** The buffer the map describes now. */
  get buffer(): DeviceBuffer {
    this.assertOpen();
    return this.state.buffer;
  }

  /**
   * Points the map at `buffer` (cuTensorMapReplaceAddress), keeping everything else: the new buffer
   * must hold the same tensor. The map then keeps `buffer` alive instead of the old one.
   * @param buffer The buffer to describe instead, holding a tensor of the same shape, type and strides (same alignment rules).
   */
  replaceAddress(buffer: DeviceBuffer): this {
    this.assertOpen();
    const address = checkBuffer('TensorMap.replaceAddress', buffer, this.encoded);
    drv.call(buffer.context, 'cuTensorMapReplaceAddress', this.block, address);
    const old = this.state.hold;
    this.state.hold = holdBuffer(buffer);
    this.state.buffer = buffer;
    old.close();
    return this;
  }
}
