// Several devices from one process: peer capability, peer access, per-device scopes and peer copies.
// Every device is used through its primary context (the one the runtime API and NCCL use too), so
// buffers, streams and communicators of one device share a context. Peer access is a property of a
// pair of contexts and one direction: enablePeerAccess(a, b) lets work in a's context read and write
// b's memory. Copies with cuMemcpyPeer work with or without it (staged through the host without).
import * as drv from './driver';
import { CudaError } from '../support';
import { Context } from './context';
import { describe } from './describe';
import type { Device } from './device';
import { assertMayBlock, checkSize } from './lifecycle';
import { DeviceBuffer } from './memory/device-buffer';
import { toStream, type StreamLike } from './stream';

const { CUresult } = drv;

function checkDevice(call: string, name: string, d: unknown): Device {
  const dev = d as Device | null | undefined;
  if (typeof dev !== 'object' || dev === null || typeof dev.primaryContext !== 'function' || !Number.isInteger(dev.ordinal)) {
    throw new TypeError(`${call}: ${name} must be a Device, got ${String(d)}`);
  }
  return dev;
}

/**
 * True when work on device `a` can access memory of device `b` directly (cuDeviceCanAccessPeer).
 * A device always reaches its own memory: `canAccessPeer(d, d)` is true.
 * @param a The device whose work would do the access.
 * @param b The device whose memory would be accessed.
 */
export function canAccessPeer(a: Device, b: Device): boolean {
  checkDevice('canAccessPeer', 'a', a);
  checkDevice('canAccessPeer', 'b', b);
  if (a.ordinal === b.ordinal) return true;
  drv.global('cuDeviceCanAccessPeer', drv.out32, a.handle, b.handle);
  return drv.out32[0] === 1;
}

/**
 * Lets work in `a`'s primary context access `b`'s memory (cuCtxEnablePeerAccess; one direction).
 * Idempotent: returns true when this call enabled it, false when it already was (or `a` is `b`).
 * Throws CUDA_ERROR_PEER_ACCESS_UNSUPPORTED where canAccessPeer(a, b) is false.
 * @param a The device whose primary context gains access.
 * @param b The device whose memory becomes accessible.
 */
export function enablePeerAccess(a: Device, b: Device): boolean {
  checkDevice('enablePeerAccess', 'a', a);
  checkDevice('enablePeerAccess', 'b', b);
  if (a.ordinal === b.ordinal) return false;
  const peer = b.primaryContext();
  peer.check();
  const ctx = a.primaryContext();
  try {
    drv.call(ctx, 'cuCtxEnablePeerAccess', peer.handle, 0);
    return true;
  } catch (e) {
    if (e instanceof CudaError && e.code === CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) return false;
    throw e;
  }
}

/**
 * Revokes what enablePeerAccess(a, b) granted (cuCtxDisablePeerAccess). Idempotent: returns true when
 * this call disabled it, false when it was not enabled (or `a` is `b`).
 * @param a The device whose primary context loses access.
 * @param b The device whose memory it could access.
 */
export function disablePeerAccess(a: Device, b: Device): boolean {
  checkDevice('disablePeerAccess', 'a', a);
  checkDevice('disablePeerAccess', 'b', b);
  if (a.ordinal === b.ordinal) return false;
  const peer = b.primaryContext();
  peer.check();
  const ctx = a.primaryContext();
  try {
    drv.call(ctx, 'cuCtxDisablePeerAccess', peer.handle);
    return true;
  } catch (e) {
    if (e instanceof CudaError && e.code === CUresult.CUDA_ERROR_PEER_ACCESS_NOT_ENABLED) return false;
    throw e;
  }
}

/**
 * Runs `fn` with `device`'s primary context current on this thread, then restores the context that was
 * current before. Objects created inside without an explicit context (buffers, streams, events) belong
 * to `device`. `fn` must be synchronous: the previous context is back once it returns.
 * @param device The device whose primary context is current while `fn` runs.
 * @param fn A synchronous function; what it returns is onDevice's result.
 */
export function onDevice<T>(device: Device, fn: () => T): T {
  checkDevice('onDevice', 'device', device);
  if (typeof fn !== 'function') throw new TypeError('onDevice: fn must be a function');
  // Restored through its Context wrapper where there is one, so the objects layer's binding cache stays true.
  const previous = drv.currentContextHandle() === 0 ? undefined : Context.current();
  device.setCurrent();
  try {
    return fn();
  } finally {
    if (previous) previous.bind();
    else drv.setCurrentHandle(0);
  }
}

/** Options of {@link copyPeer}. */
export interface PeerCopyOptions {
  /** Copy asynchronously on this stream (cuMemcpyPeerAsync); without one the copy is synchronous: done when copyPeer returns. */
  stream?: StreamLike;
  /** Bytes to copy (default: the source from `srcOffset` to its end). */
  bytes?: number;
  /** Byte offset into the source (default 0). */
  srcOffset?: number;
  /** Byte offset into the destination (default 0). */
  dstOffset?: number;
}

function bounds(what: string, offset: number, bytes: number, capacity: number): void {
  if (offset + bytes > capacity) {
    throw new RangeError(`copyPeer: ${what} bytes [${offset}, ${offset + bytes}) are out of bounds of a ${capacity}-byte buffer`);
  }
}

/**
 * Copies bytes between device buffers that may live on different devices (or contexts), through
 * cuMemcpyPeer, or cuMemcpyPeerAsync on `options.stream`. Bounds are checked (RangeError) before the
 * driver is called. The stream's context is made current for an async copy; the source's context for a
 * synchronous one.
 * @param dst The buffer to copy into (on any device or context).
 * @param src The buffer to copy from.
 * @param options `stream` (copy asynchronously on it; default synchronous), `bytes` (default: the source from `srcOffset` to its end), `srcOffset` and `dstOffset` (byte offsets; default 0).
 */
export function copyPeer(dst: DeviceBuffer, src: DeviceBuffer, options: PeerCopyOptions = {}): DeviceBuffer {
  if (!(dst instanceof DeviceBuffer)) throw new TypeError(`copyPeer: dst must be a DeviceBuffer, got ${describe(dst)}`);
  if (!(src instanceof DeviceBuffer)) throw new TypeError(`copyPeer: src must be a DeviceBuffer, got ${describe(src)}`);
  if (typeof options !== 'object' || options === null) throw new TypeError(`copyPeer: options must be an object, got ${describe(options)}`);
  const srcOffset = checkSize('copyPeer: srcOffset', options.srcOffset ?? 0);
  const dstOffset = checkSize('copyPeer: dstOffset', options.dstOffset ?? 0);
  bounds('source', srcOffset, 0, src.byteLength);
  const bytes = checkSize('copyPeer: bytes', options.bytes ?? src.byteLength - srcOffset);
  bounds('source', srcOffset, bytes, src.byteLength);
  bounds('destination', dstOffset, bytes, dst.byteLength);
  const to = dst.ptr + dstOffset; // .ptr throws once a buffer is closed
  const from = src.ptr + srcOffset;
  const stream = toStream(options.stream, 'copyPeer: stream');
  if (bytes === 0) return dst;
  try {
    if (stream === undefined) {
      assertMayBlock('copyPeer() without a stream');
      drv.callAndWait(src.context, 'cuMemcpyPeer', to, dst.context.handle, from, src.context.handle, bytes);
    } else {
      drv.callOnStream(stream.context, stream.handle, 'cuMemcpyPeerAsync', to, dst.context.handle, from, src.context.handle, bytes, stream.handle);
    }
  } catch (e) {
    drv.mark(dst.context, e);
    throw drv.mark(src.context, e);
  }
  return dst;
}
