// Texture and surface objects: CudaArray (cuArray3DCreate: 1-D, 2-D, 3-D or layered, optionally
// surface-writable), TextureObject (cuTexObjectCreate over an array, linear memory or pitched 2-D
// memory: filtered, normalized or clamped reads) and SurfaceObject (cuSurfObjectCreate over an array:
// typed loads and stores). A texture or surface keeps what it reads alive; handles are 64-bit values
// passed to kernels as 'u64' (cudaTextureObject_t / cudaSurfaceObject_t).
import { koffi } from '../support';
import * as drv from './driver';
import { Context, contextOf, deviceHandle } from './context';
import { checkKeys, describe } from './describe';
import { Resource, assertMayBlock, whenNoHostFuncs } from './lifecycle';
import { isArrayBuffer } from '../support';
import { DeviceBuffer, ownerOf } from './memory/device-buffer';
import { PinnedHostBuffer } from './memory/pinned-host-buffer';
import type { HostData } from './memory/arguments';
import { toStream, type StreamLike } from './stream';
import { noteUse } from './graph/capture';
import { SEALED, type Sealed, checkSealed } from './sealed';

/** Channel formats of arrays and textures: each channel's type. */
export type ChannelFormat = 'u8' | 'u16' | 'u32' | 'i8' | 'i16' | 'i32' | 'f16' | 'f32';
const FORMATS: Record<ChannelFormat, [code: number, bytes: number]> = {
  u8: [0x01, 1],
  u16: [0x02, 2],
  u32: [0x03, 4],
  i8: [0x08, 1],
  i16: [0x09, 2],
  i32: [0x0a, 4],
  f16: [0x10, 2],
  f32: [0x20, 4],
};

function format(where: string, v: unknown): [number, number] {
  if (typeof v !== 'string' || !Object.prototype.hasOwnProperty.call(FORMATS, v))
    throw new TypeError(
      `${where}: format must be one of ${Object.keys(FORMATS)
        .map((k) => `'${k}'`)
        .join(', ')}, got ${describe(v)}`,
    );
  return FORMATS[v as ChannelFormat];
}

function channelCount(where: string, v: unknown): 1 | 2 | 4 {
  if (v === undefined) return 1;
  if (v !== 1 && v !== 2 && v !== 4) throw new RangeError(`${where}: channels must be 1, 2 or 4, got ${describe(v)}`);
  return v;
}

function dim(where: string, name: string, v: unknown, min: number): number {
  if (typeof v !== 'number') throw new TypeError(`${where}: ${name} must be an integer, got ${describe(v)}`);
  if (!Number.isSafeInteger(v) || v < min) throw new RangeError(`${where}: ${name} must be an integer ≥ ${min}, got ${describe(v)}`);
  return v;
}

function keysOf(where: string, o: unknown, keys: readonly string[]): Record<string, unknown> {
  if (o === undefined) return {};
  if (typeof o !== 'object' || o === null) throw new TypeError(`${where}: options must be an object, got ${describe(o)}`);
  checkKeys(where, o, keys);
  return o as Record<string, unknown>;
}

/** Options of {@link CudaArray.create}. */
export interface CudaArrayOptions {
  /** Width in elements. */
  width: number;
  /** Height in elements (default 0: a 1-D array). */
  height?: number;
  /** Depth in elements, or layers of a layered array (default 0: 1-D or 2-D). */
  depth?: number;
  /** Channel type. */
  format: ChannelFormat;
  /** Channels per element: 1, 2 or 4 (default 1). */
  channels?: 1 | 2 | 4;
  /** A layered array: `depth` counts layers (CUDA_ARRAY3D_LAYERED). */
  layered?: boolean;
  /** Writable through a SurfaceObject (CUDA_ARRAY3D_SURFACE_LDST). */
  surface?: boolean;
  /** The context to allocate in (default: the current one). */
  context?: Context;
}

/** Options of {@link CudaArray.copyFrom} and {@link CudaArray.copyTo}. */
export interface ArrayCopyOptions {
  /** Stream to copy on (DeviceBuffer or PinnedHostBuffer endpoints only; default: synchronous). */
  stream?: StreamLike;
}

const MEMORYTYPE_HOST = 1;
const MEMORYTYPE_DEVICE = 2;
const MEMORYTYPE_ARRAY = 3;

/**
 * A CUDA array (CUarray, cuArray3DCreate): opaque, texture-cache-friendly storage of `width` ×
 * `height` × `depth` elements of `channels` × `format`, read through a TextureObject and written
 * through a SurfaceObject (when created with `surface: true`) or by whole-array copies.
 */
export class CudaArray extends Resource {
  /** The driver handle (CUarray). */
  readonly handle: number;
  /** The context the array belongs to. */
  readonly context: Context;
  /** Width in elements. */
  readonly width: number;
  /** Height in elements (0 for a 1-D array). */
  readonly height: number;
  /** Depth in elements or layers (0 for 1-D and 2-D arrays). */
  readonly depth: number;
  /** Channel type. */
  readonly format: ChannelFormat;
  /** Channels per element. */
  readonly channels: 1 | 2 | 4;
  /** True when a SurfaceObject can be made over it. */
  readonly surface: boolean;
  /** True for a layered array. */
  readonly layered: boolean;
  /** Bytes per element (channels × channel size). */
  readonly elementBytes: number;

  private constructor(seal: Sealed, handle: number, ctx: Context, o: Required<Omit<CudaArrayOptions, 'context'>>, elementBytes: number) {
    checkSealed(seal, 'CudaArray', 'CudaArray.create()');
    super('CudaArray', () => whenNoHostFuncs(() => drv.release(ctx, 'cuArrayDestroy', handle)), [ctx]);
    this.handle = handle;
    this.context = ctx;
    this.width = o.width;
    this.height = o.height;
    this.depth = o.depth;
    this.format = o.format;
    this.channels = o.channels;
    this.surface = o.surface;
    this.layered = o.layered;
    this.elementBytes = elementBytes;
  }

  /**
   * Allocates an array (cuArray3DCreate).
   * @param options `width`, `height` and `depth` in elements (height and depth default 0: fewer dimensions), `format` (the channel type), `channels` (1, 2 or 4; default 1), `layered` (depth counts layers), `surface` (writable through a SurfaceObject) and `context` (default: the current one).
   */
  static create(options: CudaArrayOptions): CudaArray {
    const where = 'CudaArray.create';
    if (typeof options !== 'object' || options === null)
      throw new TypeError(`${where}: options must be an object with width and format, got ${describe(options)}`);
    const o = keysOf(where, options, ['width', 'height', 'depth', 'format', 'channels', 'layered', 'surface', 'context']);
    const width = dim(where, 'width', o.width, 1);
    const height = dim(where, 'height', o.height ?? 0, 0);
    const depth = dim(where, 'depth', o.depth ?? 0, 0);
    if (depth > 0 && height === 0 && !o.layered) throw new RangeError(`${where}: a 3-D array needs a height (depth ${depth} with height 0)`);
    const [code, bytes] = format(where, o.format);
    const channels = channelCount(where, o.channels);
    for (const k of ['layered', 'surface'] as const)
      if (o[k] !== undefined && typeof o[k] !== 'boolean') throw new TypeError(`${where}: ${k} must be a boolean, got ${describe(o[k])}`);
    if (o.layered && depth === 0) throw new RangeError(`${where}: a layered array needs depth (the layer count) ≥ 1`);
    const ctx = contextOf(o.context, `${where}: context`);
    ctx.check();
    const desc = new DataView(new ArrayBuffer(40)); // CUDA_ARRAY3D_DESCRIPTOR
    desc.setBigUint64(0, BigInt(width), true);
    desc.setBigUint64(8, BigInt(height), true);
    desc.setBigUint64(16, BigInt(depth), true);
    desc.setInt32(24, code, true);
    desc.setUint32(28, channels, true);
    desc.setUint32(32, (o.layered ? drv.CUDA_ARRAY3D_LAYERED : 0) | (o.surface ? drv.CUDA_ARRAY3D_SURFACE_LDST : 0), true);
    drv.call(ctx, 'cuArray3DCreate', drv.out64, new Uint8Array(desc.buffer));
    const fields = { width, height, depth, format: o.format as ChannelFormat, channels, layered: o.layered === true, surface: o.surface === true };
    return new CudaArray(SEALED, drv.outNumber(), ctx, fields, bytes * channels);
  }

  /** Bytes of the whole array's elements (what copyFrom and copyTo move). */
  get byteLength(): number {
    return this.width * Math.max(1, this.height) * Math.max(1, this.depth) * this.elementBytes;
  }

  /** @internal */
  check(): void {
    this.assertOpen();
    this.context.check();
  }

  /** Encodes a whole-array CUDA_MEMCPY3D between this array and linear memory. */
  private memcpy3d(
    where: string,
    other: unknown,
    toArray: boolean,
    stream: unknown,
  ): { bytes: Uint8Array; s: ReturnType<typeof toStream>; keep: unknown; holder: Resource | undefined } {
    this.check();
    const s = toStream(stream, `${where}: stream`);
    let type: number;
    let address: number;
    let length: number;
    let holder: Resource | undefined;
    let keep: unknown;
    if (other instanceof DeviceBuffer) {
      type = MEMORYTYPE_DEVICE;
      address = other.ptr;
      length = other.byteLength;
      holder = ownerOf(other);
    } else if (other instanceof PinnedHostBuffer) {
      type = MEMORYTYPE_HOST;
      address = other.hostAddress;
      length = other.byteLength;
      holder = other;
    } else if (isArrayBuffer(other) || ArrayBuffer.isView(other)) {
      if (s !== undefined) throw new TypeError(`${where}: a copy with pageable host data runs synchronously: omit stream (or use a PinnedHostBuffer)`);
      const view = other as ArrayBufferView | ArrayBuffer;
      const buffer = isArrayBuffer(view) ? view : view.buffer;
      type = MEMORYTYPE_HOST;
      length = view.byteLength;
      address = length === 0 ? 0 : Number(koffi.address(buffer as ArrayBuffer)) + (isArrayBuffer(view) ? 0 : view.byteOffset);
      keep = view;
    } else {
      throw new TypeError(
        `${where}: ${toArray ? 'src' : 'dst'} must be a DeviceBuffer, a PinnedHostBuffer or host data (TypedArray, DataView, ArrayBuffer), got ${describe(other)}`,
      );
    }
    if (length < this.byteLength)
      throw new RangeError(`${where}: the array holds ${this.byteLength} bytes, the ${toArray ? 'source' : 'destination'} ${length}`);
    const bytes = new Uint8Array(200);
    const dv = new DataView(bytes.buffer);
    const rowBytes = this.width * this.elementBytes;
    const rows = Math.max(1, this.height);
    // linear side: base + memory type + pitch/height; array side: the handle
    const [lin, arr] = toArray ? [0, 88] : [88, 0];
    dv.setInt32(lin + 32, type, true);
    dv.setBigUint64(lin + (type === MEMORYTYPE_HOST ? 40 : 48), BigInt(address), true);
    dv.setBigUint64(lin + 72, BigInt(rowBytes), true); // pitch
    dv.setBigUint64(lin + 80, BigInt(rows), true); // height
    dv.setInt32(arr + 32, MEMORYTYPE_ARRAY, true);
    dv.setBigUint64(arr + 56, BigInt(this.handle), true);
    dv.setBigUint64(176, BigInt(rowBytes), true); // WidthInBytes
    dv.setBigUint64(184, BigInt(rows), true); // Height
    dv.setBigUint64(192, BigInt(Math.max(1, this.depth)), true); // Depth
    return { bytes, s, keep, holder };
  }

  private run(where: string, c: ReturnType<CudaArray['memcpy3d']>): void {
    if (c.s === undefined) {
      assertMayBlock(`${where}() without a stream`);
      drv.callAndWait(this.context, 'cuMemcpy3D', c.bytes); // done on return, even device-side copies
    } else {
      noteUse(c.s.context, c.s.handle, this, c.holder);
      drv.callOnStream(c.s.context, c.s.handle, 'cuMemcpy3DAsync', c.bytes, c.s.handle);
    }
    void c.keep;
  }

  /**
   * Fills the whole array from `src` (its first byteLength bytes, rows packed), on `options.stream` or synchronously.
   * @param src The elements, rows packed: host data, a DeviceBuffer or a PinnedHostBuffer of at least the array's byte size.
   * @param options `stream`: copy on it (DeviceBuffer or PinnedHostBuffer sources only; default synchronous).
   */
  copyFrom(src: HostData | DeviceBuffer | PinnedHostBuffer, options: ArrayCopyOptions = {}): this {
    const o = keysOf('CudaArray.copyFrom', options, ['stream']);
    this.run('CudaArray.copyFrom', this.memcpy3d('CudaArray.copyFrom', src, true, o.stream));
    return this;
  }

  /**
   * Copies the whole array into `dst` (rows packed), on `options.stream` or synchronously.
   * @param dst Where to copy to, rows packed: host data, a DeviceBuffer or a PinnedHostBuffer of at least the array's byte size; returned.
   * @param options `stream`: copy on it (DeviceBuffer or PinnedHostBuffer destinations only; default synchronous).
   */
  copyTo<D extends HostData | DeviceBuffer | PinnedHostBuffer>(dst: D, options: ArrayCopyOptions = {}): D {
    const o = keysOf('CudaArray.copyTo', options, ['stream']);
    this.run('CudaArray.copyTo', this.memcpy3d('CudaArray.copyTo', dst, false, o.stream));
    return dst;
  }
}

/** How a texture addresses coordinates outside [0, size). */
export type AddressMode = 'wrap' | 'clamp' | 'mirror' | 'border';
const ADDRESS: Record<AddressMode, number> = { wrap: 0, clamp: 1, mirror: 2, border: 3 };

/** Options of {@link TextureObject.create}. */
export interface TextureOptions {
  /** Out-of-range coordinates, for every dimension or per dimension (default 'clamp'). 'wrap' and 'mirror' need normalized coordinates. */
  addressMode?: AddressMode | readonly [AddressMode, AddressMode?, AddressMode?];
  /** 'point' (nearest element, default) or 'linear' (interpolated; float reads only). */
  filterMode?: 'point' | 'linear';
  /** Coordinates in [0, 1) instead of [0, size) (default false). */
  normalizedCoordinates?: boolean;
  /**
   * 'elementType' (default): integer formats read as integers; 'normalizedFloat': 8- and 16-bit
   * integers read as floats in [0, 1] (or [−1, 1] when signed).
   */
  readMode?: 'elementType' | 'normalizedFloat';
  /** sRGB → linear conversion on reads (default false). */
  sRGB?: boolean;
  /** Value read outside the texture with address mode 'border' (default zeros). */
  borderColor?: readonly [number, number, number, number];
}

/** Linear memory as a 1-D texture: `buffer` holds elements of `channels` × `format`. */
export interface LinearTextureSource {
  /** The memory read (kept alive by the texture). */
  buffer: DeviceBuffer;
  /** Channel type. */
  format: ChannelFormat;
  /** Channels per element (default 1). */
  channels?: 1 | 2 | 4;
  /** Bytes the texture spans (default: the whole buffer). */
  byteLength?: number;
}

/** Pitched 2-D memory as a 2-D texture: `height` rows of `width` elements, rows `pitch` bytes apart. */
export interface Pitch2DTextureSource {
  /** The memory read (kept alive by the texture). */
  buffer: DeviceBuffer;
  /** Channel type. */
  format: ChannelFormat;
  /** Channels per element (default 1). */
  channels?: 1 | 2 | 4;
  /** Row width in elements. */
  width: number;
  /** Rows. */
  height: number;
  /** Bytes from one row to the next (default: width × element bytes; the device's texture pitch alignment applies). */
  pitch?: number;
}

/** What a texture reads: a CudaArray, linear memory or pitched 2-D memory. */
export type TextureSource = CudaArray | LinearTextureSource | Pitch2DTextureSource;

function textureDesc(where: string, options: unknown): Uint8Array {
  const o = keysOf(where, options, ['addressMode', 'filterMode', 'normalizedCoordinates', 'readMode', 'sRGB', 'borderColor']);
  const desc = new DataView(new ArrayBuffer(104)); // CUDA_TEXTURE_DESC
  const am = o.addressMode ?? 'clamp';
  const modes = Array.isArray(am) ? am : [am, am, am];
  if (modes.length < 1 || modes.length > 3) throw new RangeError(`${where}: addressMode must be one mode or 1 to 3 modes, got ${modes.length}`);
  for (let i = 0; i < 3; i++) {
    const m = modes[i] ?? modes[modes.length - 1];
    if (typeof m !== 'string' || !Object.prototype.hasOwnProperty.call(ADDRESS, m))
      throw new TypeError(`${where}: addressMode must be 'wrap', 'clamp', 'mirror' or 'border', got ${describe(m)}`);
    desc.setInt32(4 * i, ADDRESS[m as AddressMode], true);
  }
  const filter = o.filterMode ?? 'point';
  if (filter !== 'point' && filter !== 'linear') throw new TypeError(`${where}: filterMode must be 'point' or 'linear', got ${describe(filter)}`);
  desc.setInt32(12, filter === 'linear' ? 1 : 0, true);
  for (const k of ['normalizedCoordinates', 'sRGB'] as const)
    if (o[k] !== undefined && typeof o[k] !== 'boolean') throw new TypeError(`${where}: ${k} must be a boolean, got ${describe(o[k])}`);
  const readMode = o.readMode ?? 'elementType';
  if (readMode !== 'elementType' && readMode !== 'normalizedFloat')
    throw new TypeError(`${where}: readMode must be 'elementType' or 'normalizedFloat', got ${describe(readMode)}`);
  let flags = 0;
  if (readMode === 'elementType') flags |= drv.CU_TRSF_READ_AS_INTEGER;
  if (o.normalizedCoordinates) flags |= drv.CU_TRSF_NORMALIZED_COORDINATES;
  if (o.sRGB) flags |= drv.CU_TRSF_SRGB;
  desc.setUint32(16, flags, true);
  if (o.borderColor !== undefined) {
    const c = o.borderColor;
    if (!Array.isArray(c) || c.length !== 4 || c.some((x) => typeof x !== 'number' || !Number.isFinite(x)))
      throw new TypeError(`${where}: borderColor must be 4 finite numbers, got ${describe(c)}`);
    c.forEach((x: number, i: number) => desc.setFloat32(40 + 4 * i, x, true));
  }
  return new Uint8Array(desc.buffer);
}

const alignments = new Map<string, number>();
/** A device's texture alignment ('address': CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT) or pitch alignment, cached. */
function alignment(device: number, which: 'address' | 'pitch'): number {
  const key = `${device}:${which}`;
  let a = alignments.get(key);
  if (a === undefined) {
    const attr =
      which === 'address' ? drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT : drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT;
    drv.global('cuDeviceGetAttribute', drv.out32, attr, deviceHandle(device));
    a = drv.out32[0];
    alignments.set(key, a);
  }
  return a;
}

/** CUDA_RESOURCE_DESC for `source`, with the context and the resource kept alive. */
function resourceDesc(where: string, source: unknown, forSurface: boolean): { desc: Uint8Array; ctx: Context; parent: Resource } {
  const desc = new DataView(new ArrayBuffer(144));
  if (source instanceof CudaArray) {
    source.check();
    if (forSurface && !source.surface) throw new TypeError(`${where}: the array was not created with surface: true (CUDA_ARRAY3D_SURFACE_LDST)`);
    desc.setInt32(0, drv.CUresourcetype.CU_RESOURCE_TYPE_ARRAY, true);
    desc.setBigUint64(8, BigInt(source.handle), true);
    return { desc: new Uint8Array(desc.buffer), ctx: source.context, parent: source };
  }
  if (forSurface) throw new TypeError(`${where}: a surface is made over a CudaArray created with surface: true, got ${describe(source)}`);
  if (typeof source !== 'object' || source === null || !((source as { buffer?: unknown }).buffer instanceof DeviceBuffer)) {
    throw new TypeError(
      `${where}: source must be a CudaArray, { buffer, format, channels?, byteLength? } (linear) or { buffer, format, channels?, width, height, pitch? } (pitched 2-D), got ${describe(source)}`,
    );
  }
  const pitched = 'width' in source || 'height' in source;
  const o = keysOf(where, source, pitched ? ['buffer', 'format', 'channels', 'width', 'height', 'pitch'] : ['buffer', 'format', 'channels', 'byteLength']);
  const buffer = o.buffer as DeviceBuffer;
  const address = buffer.ptr as number;
  const [code, bytes] = format(where, o.format);
  const channels = channelCount(where, o.channels);
  const aligned = alignment(buffer.context.device, 'address');
  if (aligned > 0 && address % aligned !== 0)
    throw new RangeError(`${where}: the buffer's address 0x${address.toString(16)} is not aligned to the device's texture alignment (${aligned} bytes)`);
  desc.setBigUint64(8, BigInt(address), true);
  desc.setInt32(16, code, true);
  desc.setUint32(20, channels, true);
  if (!pitched) {
    const n = o.byteLength === undefined ? buffer.byteLength : dim(where, 'byteLength', o.byteLength, 1);
    if (n > buffer.byteLength) throw new RangeError(`${where}: byteLength ${n} is larger than the buffer (${buffer.byteLength} bytes)`);
    if (n === 0) throw new RangeError(`${where}: the buffer is empty`);
    desc.setInt32(0, drv.CUresourcetype.CU_RESOURCE_TYPE_LINEAR, true);
    desc.setBigUint64(24, BigInt(n), true);
  } else {
    const width = dim(where, 'width', o.width, 1);
    const height = dim(where, 'height', o.height, 1);
    const pitch = o.pitch === undefined ? width * bytes * channels : dim(where, 'pitch', o.pitch, 1);
    if (pitch < width * bytes * channels) throw new RangeError(`${where}: pitch ${pitch} is less than a row (${width * bytes * channels} bytes)`);
    const pitchAlign = alignment(buffer.context.device, 'pitch');
    if (pitchAlign > 0 && pitch % pitchAlign !== 0)
      throw new RangeError(`${where}: pitch ${pitch} is not a multiple of the device's texture pitch alignment (${pitchAlign} bytes)`);
    if (pitch * (height - 1) + width * bytes * channels > buffer.byteLength)
      throw new RangeError(`${where}: ${height} rows of pitch ${pitch} do not fit in the buffer (${buffer.byteLength} bytes)`);
    desc.setInt32(0, drv.CUresourcetype.CU_RESOURCE_TYPE_PITCH2D, true);
    desc.setBigUint64(24, BigInt(width), true);
    desc.setBigUint64(32, BigInt(height), true);
    desc.setBigUint64(40, BigInt(pitch), true);
  }
  return { desc: new Uint8Array(desc.buffer), ctx: buffer.context, parent: ownerOf(buffer) };
}

/**
 * A texture object (CUtexObject, cuTexObjectCreate): read-only, cached, optionally filtered and
 * normalized access to a CudaArray, linear memory or pitched 2-D memory. Pass {@link handle} to a
 * kernel as 'u64' (`cudaTextureObject_t`). It keeps its source alive until closed.
 */
export class TextureObject extends Resource {
  /** The texture handle, for a 'u64' kernel parameter (throws once closed). */
  get handle(): number {
    this.assertOpen();
    return this.value;
  }
  /** The context the texture belongs to. */
  readonly context: Context;
  /** What the texture reads. */
  readonly source: TextureSource;
  private readonly value: number;

  private constructor(seal: Sealed, value: number, ctx: Context, source: TextureSource, parent: Resource) {
    checkSealed(seal, 'TextureObject', 'TextureObject.create()');
    super('TextureObject', () => whenNoHostFuncs(() => drv.release(ctx, 'cuTexObjectDestroy', value)), [ctx, parent]);
    this.value = value;
    this.context = ctx;
    this.source = source;
  }

  /**
   * Creates a texture over `source` with `options` (sampling, addressing, read mode).
   * @param source What to sample: a CudaArray, `{ buffer, format, channels?, byteLength? }` (linear memory) or `{ buffer, format, channels?, width, height, pitch }` (pitched 2-D memory).
   * @param options `addressMode` (default 'clamp'), `filterMode` ('point', the default, or 'linear'), `normalizedCoordinates`, `readMode`, `sRGB` and `borderColor` (see TextureOptions).
   */
  static create(source: TextureSource, options: TextureOptions = {}): TextureObject {
    const where = 'TextureObject.create';
    const r = resourceDesc(where, source, false);
    const tex = textureDesc(where, options);
    r.ctx.check();
    drv.call(r.ctx, 'cuTexObjectCreate', drv.out64, r.desc, tex, null);
    return new TextureObject(SEALED, drv.outNumber(), r.ctx, source, r.parent);
  }
}

/**
 * A surface object (CUsurfObject, cuSurfObjectCreate) over a CudaArray created with `surface: true`:
 * typed loads and stores from kernels (x in bytes). Pass {@link handle} to a kernel as 'u64'
 * (`cudaSurfaceObject_t`). It keeps its array alive until closed.
 */
export class SurfaceObject extends Resource {
  /** The surface handle, for a 'u64' kernel parameter (throws once closed). */
  get handle(): number {
    this.assertOpen();
    return this.value;
  }
  /** The context the surface belongs to. */
  readonly context: Context;
  /** The array the surface reads and writes. */
  readonly array: CudaArray;
  private readonly value: number;

  private constructor(seal: Sealed, value: number, array: CudaArray) {
    checkSealed(seal, 'SurfaceObject', 'SurfaceObject.create()');
    const ctx = array.context;
    super('SurfaceObject', () => whenNoHostFuncs(() => drv.release(ctx, 'cuSurfObjectDestroy', value)), [ctx, array]);
    this.value = value;
    this.context = ctx;
    this.array = array;
  }

  /**
   * Creates a surface over `array` (which must have been created with `surface: true`).
   * @param array An array created with `surface: true`; the surface keeps it alive.
   */
  static create(array: CudaArray): SurfaceObject {
    const r = resourceDesc('SurfaceObject.create', array, true);
    drv.call(r.ctx, 'cuSurfObjectCreate', drv.out64, r.desc);
    return new SurfaceObject(SEALED, drv.outNumber(), array);
  }
}
