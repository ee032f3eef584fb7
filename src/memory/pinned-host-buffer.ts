// PinnedHostBuffer: page-locked host memory mapped into the device address space (cuMemHostAlloc).
// array() is a zero-copy view over native memory that V8 cannot detach: close() frees the memory at once,
// and views made by array() must not be used after it.
import { isArrayBuffer, koffi } from '../../support';
import * as drv from '../driver';
import { Context, contextOf } from '../context';
import { checkKeys, describe } from '../describe';
import { Resource, assertMayBlock, whenNoHostFuncs } from '../lifecycle';
import { toStream } from '../stream';
import { noteUse } from '../graph/capture';
import {
  checkedSize,
  type CopyOptions,
  elementType,
  hostBytes,
  type HostData,
  type MemsetOptions,
  optionsObject,
  rangeCheck,
  type TypedArrayConstructor,
} from './arguments';
import { pinnedHostBufferBrand } from './brands';
import { DeviceBuffer, ownerOf } from './device-buffer';
import { SEALED, type Sealed, checkSealed } from '../sealed';

/** Options of {@link PinnedHostBuffer.alloc} and {@link PinnedHostBuffer.from}. */
export interface PinnedOptions {
  /** CU_MEMHOSTALLOC_WRITECOMBINED: fast host→device, slow host reads. */
  writeCombined?: boolean;
  /** The context to allocate in (default: the current one, else device 0's primary context). */
  context?: Context;
}

/**
 * Page-locked host memory mapped into the device address space; `array()` is a zero-copy view.
 * close() frees the memory at once (so a create/close loop keeps RSS flat): views made by array()
 * must not be used after close() — V8 cannot detach them, and reading one reads freed memory.
 * @example
 * ```ts
 * import { DeviceBuffer, PinnedHostBuffer, Stream } from 'cuda-ts/objects';
 *
 * async function main(): Promise<void> {
 *   using stream = Stream.create();
 *   using host = PinnedHostBuffer.alloc(1024 * 4);
 *   host.array(Float32Array).fill(1.5); // write straight into page-locked memory
 *   using dev = DeviceBuffer.alloc(host.byteLength);
 *   dev.copyFrom(host, { stream }); // a truly asynchronous upload
 *   await stream.synchronized(); // `host` may be reused after this
 * }
 * main().catch(console.error);
 * ```
 */
export class PinnedHostBuffer extends Resource {
  /** Size in bytes. */
  readonly byteLength: number;
  /** The context the memory was allocated in. */
  readonly context: Context;
  private readonly address: number;
  private device: drv.CUdeviceptr | undefined;

  private constructor(seal: Sealed, address: number, byteLength: number, context: Context) {
    checkSealed(seal, 'PinnedHostBuffer', 'PinnedHostBuffer.alloc() or from()');
    super('PinnedHostBuffer', address === 0 ? undefined : () => whenNoHostFuncs(() => drv.release(context, 'cuMemFreeHost', address)), [context]);
    this.address = address;
    this.byteLength = byteLength;
    this.context = context;
    pinnedHostBufferBrand.mark(this);
  }

  /**
   * Allocates `byteLength` bytes of page-locked host memory (cuMemHostAlloc, portable and device-mapped).
   * @param byteLength Bytes to allocate (a non-negative integer).
   * @param options `writeCombined` (true: fast host-to-device, slow host reads; default false) and `context` (default: the current one, else device 0's primary context).
   */
  static alloc(byteLength: number, options: PinnedOptions = {}): PinnedHostBuffer {
    checkedSize('PinnedHostBuffer.alloc: byteLength', byteLength);
    const o = optionsObject('PinnedHostBuffer.alloc', options) ?? {};
    checkKeys('PinnedHostBuffer.alloc', o, ['writeCombined', 'context']);
    if (o.writeCombined !== undefined && typeof o.writeCombined !== 'boolean')
      throw new TypeError(`PinnedHostBuffer.alloc: writeCombined must be a boolean, got ${describe(o.writeCombined)}`);
    const ctx = contextOf(o.context, 'PinnedHostBuffer.alloc: context');
    ctx.check();
    let flags = drv.CU_MEMHOSTALLOC_PORTABLE | drv.CU_MEMHOSTALLOC_DEVICEMAP;
    if (o.writeCombined) flags |= drv.CU_MEMHOSTALLOC_WRITECOMBINED;
    let ptr = 0;
    if (byteLength > 0) {
      drv.allocate(ctx, 'cuMemHostAlloc', drv.out64, byteLength, flags);
      ptr = drv.outNumber();
    }
    return new PinnedHostBuffer(SEALED, ptr, byteLength, ctx);
  }

  /**
   * Allocates pinned memory holding a copy of `data`.
   * @param data The bytes to copy: a TypedArray, DataView, Buffer or ArrayBuffer; the buffer gets its byte length.
   * @param options `writeCombined` (true: fast host-to-device, slow host reads; default false) and `context` (default: the current one, else device 0's primary context).
   */
  static from(data: HostData, options: PinnedOptions = {}): PinnedHostBuffer {
    const { byteLength } = hostBytes('PinnedHostBuffer.from', data);
    const buf = PinnedHostBuffer.alloc(byteLength, options);
    const src = isArrayBuffer(data) ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    buf.array(Uint8Array).set(src);
    return buf;
  }

  /** @internal the host address */
  get hostAddress(): number {
    this.assertOpen();
    return this.address;
  }

  /** The device address of this memory (kernels can read and write it directly). */
  get devicePointer(): drv.CUdeviceptr {
    this.assertOpen();
    if (this.address === 0) return 0 as drv.CUdeviceptr;
    if (this.device === undefined) {
      drv.call(this.context, 'cuMemHostGetDevicePointer', drv.out64, this.address, 0);
      this.device = drv.outNumber() as drv.CUdeviceptr;
    }
    return this.device;
  }

  /**
   * A zero-copy TypedArray over the pinned memory, valid until close() (do not use it after).
   * @param ctor The element type of the view, a TypedArray class such as Float32Array (default Uint8Array); the byte length must be a multiple of its element size.
   */
  array<T extends ArrayBufferView>(ctor: TypedArrayConstructor<T> = Uint8Array as unknown as TypedArrayConstructor<T>): T {
    this.assertOpen();
    const C = elementType<T>('PinnedHostBuffer.array', ctor);
    if (this.byteLength === 0) return new C(0);
    return new C(koffi.view(this.address, this.byteLength), 0, Math.floor(this.byteLength / C.BYTES_PER_ELEMENT));
  }

  /** Bytes [offset, offset + n) of this memory as a Uint8Array (n > 0). */
  private bytes(offset: number, n: number): Uint8Array {
    return new Uint8Array(koffi.view(this.address, this.byteLength), offset, n);
  }

  /**
   * Copies `src` into this buffer at `options.offset`. From a DeviceBuffer or another PinnedHostBuffer
   * the copy runs on `options.stream` when given (asynchronous: synchronize before reading), else
   * synchronously; from host data (a TypedArray, ArrayBuffer, …) it is a plain host copy, made at once
   * (a stream is refused: nothing would order it).
   * @param src What to copy: host data (a TypedArray, DataView, Buffer or ArrayBuffer), a DeviceBuffer or another PinnedHostBuffer.
   * @param options `stream` (device or pinned sources only: run the copy on it; default synchronous), `offset` (byte offset into this buffer; default 0) and `byteLength` (bytes to copy; default: all of the source).
   */
  copyFrom(src: HostData | DeviceBuffer | PinnedHostBuffer, options?: CopyOptions): this {
    this.assertOpen();
    const o = optionsObject('PinnedHostBuffer.copyFrom', options);
    // each option read once, before any length is: a getter cannot shrink a buffer after its length was taken
    const { offset: offsetOption, stream: streamOption, byteLength: lengthOption } = (o ?? {}) as Record<string, unknown>;
    const offset = checkedSize('PinnedHostBuffer.copyFrom: offset', offsetOption ?? 0);
    const s = toStream(streamOption, 'PinnedHostBuffer.copyFrom: stream');
    const dst = this.address + offset;
    if (src instanceof DeviceBuffer) {
      src.check();
      const n = checkedSize('PinnedHostBuffer.copyFrom: byteLength', lengthOption ?? src.byteLength);
      rangeCheck('PinnedHostBuffer.copyFrom (source)', 0, n, src.byteLength);
      rangeCheck('PinnedHostBuffer.copyFrom', offset, n, this.byteLength);
      if (n === 0) return this;
      if (s === undefined) {
        assertMayBlock('PinnedHostBuffer.copyFrom() without a stream');
        drv.call(src.context, 'cuMemcpyDtoH', dst, src.ptr, n);
      } else {
        noteUse(s.context, s.handle, this, ownerOf(src));
        drv.callOnStream(s.context, s.handle, 'cuMemcpyDtoHAsync', dst, src.ptr, n, s.handle);
      }
      return this;
    }
    if (src instanceof PinnedHostBuffer) {
      const from = src.hostAddress;
      const n = checkedSize('PinnedHostBuffer.copyFrom: byteLength', lengthOption ?? src.byteLength);
      rangeCheck('PinnedHostBuffer.copyFrom (source)', 0, n, src.byteLength);
      rangeCheck('PinnedHostBuffer.copyFrom', offset, n, this.byteLength);
      if (n === 0) return this;
      if (s !== undefined) {
        noteUse(s.context, s.handle, this, src);
        drv.callOnStream(s.context, s.handle, 'cuMemcpyAsync', dst, from, n, s.handle); // unified addressing: host to host
      } else if (src === this) this.bytes(0, this.byteLength).copyWithin(offset, 0, n);
      else this.bytes(offset, n).set(src.bytes(0, n));
      return this;
    }
    const host = hostBytes('PinnedHostBuffer.copyFrom: src', src);
    if (s !== undefined)
      throw new TypeError(
        'PinnedHostBuffer.copyFrom: a copy from host data is a host copy made at once: omit stream (synchronize first if the device uses this buffer)',
      );
    const n = checkedSize('PinnedHostBuffer.copyFrom: byteLength', lengthOption ?? host.byteLength);
    rangeCheck('PinnedHostBuffer.copyFrom (source)', 0, n, host.byteLength);
    rangeCheck('PinnedHostBuffer.copyFrom', offset, n, this.byteLength);
    if (n === 0) return this;
    const view = host.ptr;
    this.bytes(offset, n).set(isArrayBuffer(view) ? new Uint8Array(view, 0, n) : new Uint8Array(view.buffer, view.byteOffset, n));
    return this;
  }

  /**
   * Copies bytes [offset, offset + byteLength) of this buffer into `dst` (default length: what fits).
   * Into a DeviceBuffer or another PinnedHostBuffer the copy runs on `options.stream` when given, else
   * synchronously; into host data it is a plain host copy made at once (a stream is refused).
   * @param dst Where to copy to: host data, a DeviceBuffer or another PinnedHostBuffer; returned.
   * @param options `stream` (device or pinned destinations only: run the copy on it; default synchronous), `offset` (byte offset into this buffer to copy from; default 0) and `byteLength` (bytes to copy; default: what fits).
   */
  copyTo<D extends HostData | DeviceBuffer | PinnedHostBuffer>(dst: D, options?: CopyOptions): D {
    this.assertOpen();
    const o = optionsObject('PinnedHostBuffer.copyTo', options);
    // each option read once, before any length is: a getter cannot shrink a buffer after its length was taken
    const { offset: offsetOption, stream: streamOption, byteLength: lengthOption } = (o ?? {}) as Record<string, unknown>;
    const offset = checkedSize('PinnedHostBuffer.copyTo: offset', offsetOption ?? 0);
    const s = toStream(streamOption, 'PinnedHostBuffer.copyTo: stream');
    const src = this.address + offset;
    if (dst instanceof DeviceBuffer || dst instanceof PinnedHostBuffer) {
      if (dst instanceof DeviceBuffer) dst.check();
      const to = dst instanceof DeviceBuffer ? dst.ptr : dst.hostAddress;
      if (lengthOption === undefined && offset > this.byteLength)
        throw new RangeError(`PinnedHostBuffer.copyTo: offset ${offset} is past the end of a ${this.byteLength}-byte buffer`);
      const n = checkedSize('PinnedHostBuffer.copyTo: byteLength', lengthOption ?? Math.min(dst.byteLength, this.byteLength - offset));
      rangeCheck('PinnedHostBuffer.copyTo', offset, n, this.byteLength);
      rangeCheck('PinnedHostBuffer.copyTo (destination)', 0, n, dst.byteLength);
      if (n === 0) return dst;
      if (dst instanceof DeviceBuffer) {
        if (s === undefined) {
          assertMayBlock('PinnedHostBuffer.copyTo() without a stream');
          drv.callAndWait(dst.context, 'cuMemcpyHtoD', to, src, n); // done on return, as documented
        } else {
          noteUse(s.context, s.handle, this, ownerOf(dst));
          drv.callOnStream(s.context, s.handle, 'cuMemcpyHtoDAsync', to, src, n, s.handle);
        }
      } else if (s !== undefined) {
        noteUse(s.context, s.handle, this, dst);
        drv.callOnStream(s.context, s.handle, 'cuMemcpyAsync', to, src, n, s.handle); // unified addressing: host to host
      } else if ((dst as PinnedHostBuffer) === this) this.bytes(0, this.byteLength).copyWithin(0, offset, offset + n);
      else (dst as PinnedHostBuffer).bytes(0, n).set(this.bytes(offset, n));
      return dst;
    }
    const host = hostBytes('PinnedHostBuffer.copyTo: dst', dst);
    if (s !== undefined)
      throw new TypeError(
        'PinnedHostBuffer.copyTo: a copy into host data is a host copy made at once: omit stream (synchronize first if the device writes this buffer)',
      );
    if (lengthOption === undefined && offset > this.byteLength)
      throw new RangeError(`PinnedHostBuffer.copyTo: offset ${offset} is past the end of a ${this.byteLength}-byte buffer`);
    const n = checkedSize('PinnedHostBuffer.copyTo: byteLength', lengthOption ?? Math.min(host.byteLength, this.byteLength - offset));
    rangeCheck('PinnedHostBuffer.copyTo', offset, n, this.byteLength);
    rangeCheck('PinnedHostBuffer.copyTo (destination)', 0, n, host.byteLength);
    if (n === 0) return dst;
    const view = host.ptr;
    (isArrayBuffer(view) ? new Uint8Array(view, 0, n) : new Uint8Array(view.buffer, view.byteOffset, n)).set(this.bytes(offset, n));
    return dst;
  }

  /**
   * Fills `count` elements of `width` bytes (1, 2 or 4) from byte `offset` with `value` (defaults: width
   * 1, to the end). On `options.stream` it is a stream-ordered memset of the mapped memory
   * (cuMemsetD8/16/32Async); without one, a host fill made at once.
   * @param value The element value: an integer that fits `width` bytes, signed or unsigned.
   * @param options `stream` (a stream-ordered memset on it; default: a host fill made at once), `width` (1, 2 or 4 bytes; default 1), `offset` (byte offset of the first element, a multiple of `width`; default 0) and `count` (elements; default: to the end).
   */
  fill(value: number, options?: MemsetOptions): this {
    this.assertOpen();
    const o = optionsObject('PinnedHostBuffer.fill', options);
    const width = o?.width ?? 1;
    if (width !== 1 && width !== 2 && width !== 4) throw new TypeError(`PinnedHostBuffer.fill: width must be 1, 2 or 4, got ${describe(width)}`);
    const offset = checkedSize('PinnedHostBuffer.fill: offset', o?.offset ?? 0);
    if (offset % width !== 0) throw new RangeError(`PinnedHostBuffer.fill: offset ${offset} is not a multiple of width ${width}`);
    const count = checkedSize('PinnedHostBuffer.fill: count', o?.count ?? Math.floor(Math.max(0, this.byteLength - offset) / width));
    rangeCheck('PinnedHostBuffer.fill', offset, count * width, this.byteLength);
    if (typeof value !== 'number' || !Number.isInteger(value)) throw new TypeError(`PinnedHostBuffer.fill: value must be an integer, got ${describe(value)}`);
    const bits = 8 * width;
    if (value < -(2 ** (bits - 1)) || value > 2 ** bits - 1) throw new RangeError(`PinnedHostBuffer.fill: value ${value} does not fit in ${width} byte(s)`);
    const v = width === 4 ? value >>> 0 : value & (width === 2 ? 0xffff : 0xff);
    const s = toStream(o?.stream, 'PinnedHostBuffer.fill: stream');
    if (count === 0) return this;
    if (s !== undefined) {
      const name = width === 1 ? 'cuMemsetD8Async' : width === 2 ? 'cuMemsetD16Async' : 'cuMemsetD32Async';
      noteUse(s.context, s.handle, this);
      drv.callOnStream(s.context, s.handle, name, this.devicePointer + offset, v, count, s.handle);
      return this;
    }
    const C = width === 1 ? Uint8Array : width === 2 ? Uint16Array : Uint32Array;
    new C(koffi.view(this.address, this.byteLength), offset, count).fill(v);
    return this;
  }
}
