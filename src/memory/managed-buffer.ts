// ManagedBuffer: unified memory (cuMemAllocManaged, or a managed pool's), usable from the device and,
// through array(), from the host; advised (cuMemAdvise) and prefetched (cuMemPrefetchAsync) by range.
import * as drv from '../driver';
import { Context, contextOf } from '../context';
import { checkKeys, describe } from '../describe';
import { Core, whenNoHostFuncs } from '../lifecycle';
import { toStream, type Stream, type StreamLike } from '../stream';
import { noteUse } from '../graph/capture';
import { makeRoomForManaged } from './allocator';
import { checkedSize, optionsObject, rangeCheck } from './arguments';
import { DeviceBuffer } from './device-buffer';
import { encodeLocation, type MemoryLocation } from './location';
import type { MemoryPool } from './memory-pool';
import { SEALED, type Sealed, checkSealed } from '../sealed';

/**
 * Unified memory (cuMemAllocManaged): usable from the device and, through `array()`, from the host.
 * close() frees it at once: views made by array() must not be used after close().
 * @example
 * ```ts
 * import { ManagedBuffer, Stream } from 'cuda-ts/objects';
 *
 * using stream = Stream.create();
 * using data = ManagedBuffer.alloc(1 << 20);
 * data.array(Float32Array).fill(1); // written on the host, no copy
 * data.advise('readMostly'); // kernels get read-only copies of the pages
 * data.prefetch('device', stream); // move the pages before kernels touch them
 * // … launch kernels on `stream` reading `data` …
 * stream.synchronize();
 * ```
 */
export class ManagedBuffer extends DeviceBuffer {
  private constructor(
    seal: Sealed,
    address: number,
    byteLength: number,
    context: Context,
    destroy: (() => void) | Core | undefined,
    stream?: Stream,
    pool?: MemoryPool,
  ) {
    checkSealed(seal, 'ManagedBuffer', 'ManagedBuffer.alloc()');
    super(seal, 'ManagedBuffer', address, byteLength, context, destroy, stream, pool);
  }

  /** A managed pool's allocation (freed by `core` on its stream). @internal */
  static adopt(address: number, byteLength: number, context: Context, core: Core, stream: Stream, pool: MemoryPool): ManagedBuffer {
    return new ManagedBuffer(SEALED, address, byteLength, context, core, stream, pool);
  }

  /**
   * Allocates `byteLength` bytes of managed memory (cuMemAllocManaged) in `options.context` (default:
   * the current one). It is attached globally, or to the host only with `hostOnlyAttach`. For
   * stream-ordered managed memory, allocate from {@link MemoryPool.managed}.
   * @param byteLength Bytes to allocate (a non-negative integer).
   * @param options `context` (default: the current one, else device 0's primary context) and `hostOnlyAttach` (true: attached to the host only, CU_MEM_ATTACH_HOST; default false, attached globally).
   */
  static override alloc(byteLength: number, options: { context?: Context; hostOnlyAttach?: boolean } = {}): ManagedBuffer {
    checkedSize('ManagedBuffer.alloc: byteLength', byteLength);
    const o = optionsObject('ManagedBuffer.alloc', options) ?? {};
    checkKeys('ManagedBuffer.alloc', o, ['context', 'hostOnlyAttach']);
    if (o.hostOnlyAttach !== undefined && typeof o.hostOnlyAttach !== 'boolean')
      throw new TypeError(`ManagedBuffer.alloc: hostOnlyAttach must be a boolean, got ${describe(o.hostOnlyAttach)}`);
    const ctx = contextOf(o.context, 'ManagedBuffer.alloc: context');
    ctx.check();
    const flags = o.hostOnlyAttach ? drv.CUmemAttach_flags.CU_MEM_ATTACH_HOST : drv.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL;
    let ptr = 0;
    if (byteLength > 0) {
      makeRoomForManaged(ctx, byteLength);
      drv.allocate(ctx, 'cuMemAllocManaged', drv.out64, byteLength, flags);
      ptr = drv.outNumber();
    }
    const address = ptr;
    return new ManagedBuffer(SEALED, ptr, byteLength, ctx, ptr === 0 ? undefined : () => whenNoHostFuncs(() => drv.release(ctx, 'cuMemFree', address)));
  }

  /** Always true: managed memory is reachable from the host (`array()`). */
  override get hostAccessible(): boolean {
    return true;
  }

  /** Bytes [offset, offset + byteLength) of this buffer, checked: the range of advise() and prefetch(). */
  private range(where: string, range: unknown): { address: number; byteLength: number } {
    const o = optionsObject(where, range);
    if (o !== undefined) checkKeys(where, o, ['offset', 'byteLength']);
    const offset = checkedSize(`${where}: offset`, o?.offset ?? 0);
    if (offset > this.byteLength) throw new RangeError(`${where}: offset ${offset} is past the end of a ${this.byteLength}-byte buffer`);
    const n = checkedSize(`${where}: byteLength`, o?.byteLength ?? this.byteLength - offset);
    rangeCheck(where, offset, n, this.byteLength);
    return { address: this.address + offset, byteLength: n };
  }

  /**
   * Advises the driver how the memory (or bytes [offset, offset + byteLength) of it) will be used
   * (cuMemAdvise): `readMostly` (read-only copies on each accessor), `preferredLocation` (where pages
   * should live), `accessedBy` (keep mapped for `location`), and their `unset…` forms. `location`
   * (default `'device'`: this buffer's device) is ignored by readMostly.
   * @param advice The hint: 'readMostly', 'preferredLocation', 'accessedBy' or their 'unset…' forms.
   * @param location The location the hint names: 'device' (this buffer's device, the default), 'host', a device ordinal, `{ device }`, `{ hostNuma }` or 'hostNumaCurrent'; ignored by readMostly.
   * @param range `offset` and `byteLength`: the bytes of this buffer it applies to (default: the whole buffer).
   */
  advise(advice: ManagedAdvice, location: MemoryLocation | 'device' = 'device', range?: { offset?: number; byteLength?: number }): this {
    this.check();
    const code = typeof advice === 'string' && Object.prototype.hasOwnProperty.call(ADVICE, advice) ? ADVICE[advice] : undefined;
    if (code === undefined) throw new TypeError(`ManagedBuffer.advise: advice must be one of ${Object.keys(ADVICE).join(', ')}, got ${describe(advice)}`);
    const loc = encodeLocation('ManagedBuffer.advise: location', location, this.context.device);
    const r = this.range('ManagedBuffer.advise', range);
    if (r.byteLength === 0) return this;
    drv.call(this.context, 'cuMemAdvise', r.address, r.byteLength, code, loc);
    return this;
  }

  /**
   * Prefetches the memory (or bytes [offset, offset + byteLength) of it) to `to` on `stream` (default:
   * the legacy default stream): `'device'` (this buffer's device), `'host'`, a device ordinal,
   * `{ device }`, `{ hostNuma }` or `'hostNumaCurrent'` (cuMemPrefetchAsync).
   * @param to Where to move the pages: 'device' (this buffer's device), 'host', a device ordinal, `{ device }`, `{ hostNuma }` or 'hostNumaCurrent'.
   * @param stream The stream to order the prefetch on (default: the legacy default stream).
   * @param range `offset` and `byteLength`: the bytes of this buffer it applies to (default: the whole buffer).
   */
  prefetch(to: MemoryLocation | 'device', stream?: StreamLike, range?: { offset?: number; byteLength?: number }): this {
    this.check();
    const location = encodeLocation('ManagedBuffer.prefetch: to', to, this.context.device);
    const s = toStream(stream, 'ManagedBuffer.prefetch: stream');
    const r = this.range('ManagedBuffer.prefetch', range);
    if (r.byteLength === 0) return this;
    const h = s?.handle ?? 0;
    if (s !== undefined) noteUse(s.context, h, this);
    drv.callOnStream(s?.context ?? this.context, h, 'cuMemPrefetchAsync', r.address, r.byteLength, location, 0, h);
    return this;
  }
}

/** Usage advice for managed memory (see {@link ManagedBuffer.advise}). */
export type ManagedAdvice = 'readMostly' | 'unsetReadMostly' | 'preferredLocation' | 'unsetPreferredLocation' | 'accessedBy' | 'unsetAccessedBy';
const ADVICE: Record<ManagedAdvice, number> = {
  readMostly: drv.CUmem_advise.CU_MEM_ADVISE_SET_READ_MOSTLY,
  unsetReadMostly: drv.CUmem_advise.CU_MEM_ADVISE_UNSET_READ_MOSTLY,
  preferredLocation: drv.CUmem_advise.CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
  unsetPreferredLocation: drv.CUmem_advise.CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
  accessedBy: drv.CUmem_advise.CU_MEM_ADVISE_SET_ACCESSED_BY,
  unsetAccessedBy: drv.CUmem_advise.CU_MEM_ADVISE_UNSET_ACCESSED_BY,
};
