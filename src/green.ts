// Green contexts: a device's SMs split into groups (cuDeviceGetDevResource → cuDevSmResourceSplitByCount),
// each group a context of its own (cuDevResourceGenerateDesc → cuGreenCtxCreate) whose streams
// (cuGreenCtxStreamCreate) run work on those SMs only. A GreenContext owns the green context; its
// `context` (the CUcontext from cuCtxFromGreenCtx) is what modules, buffers and streams belong to, and
// it keeps the green context alive until everything made in it is gone.
import * as drv from './driver';
import { Context, deviceHandle } from './context';
import { checkKeys, describe } from './describe';
import { Resource, assertMayBlock } from './lifecycle';
import { Stream } from './stream';
import { Event } from './event';
import { SEALED, type Sealed, checkSealed } from './sealed';

const RESOURCE_BYTES = 144; // CUdevResource
const SM_OFFSET = 96; // CUdevResource.sm (CUdevSmResource: smCount, minSmPartitionSize, smCoscheduledAlignment)

/** A set of SMs of a device (a CUdevResource of type SM): the whole device's, or a group of a split. */
export class SmResource {
  /** @internal the CUdevResource bytes, as the driver filled them */
  readonly bytes: Uint8Array;
  /** The device ordinal the SMs belong to. */
  readonly device: number;

  /** @internal use SmResource.ofDevice or SmResource.split */
  constructor(seal: Sealed, bytes: Uint8Array, device: number) {
    checkSealed(seal, 'SmResource', 'SmResource.ofDevice()');
    this.bytes = bytes;
    this.device = device;
    Object.freeze(this);
  }

  /** Number of SMs in this set. */
  get smCount(): number {
    return new DataView(this.bytes.buffer, this.bytes.byteOffset).getUint32(SM_OFFSET, true);
  }

  /** The fewest SMs a group split from this set can have. */
  get minSmPartitionSize(): number {
    return new DataView(this.bytes.buffer, this.bytes.byteOffset).getUint32(SM_OFFSET + 4, true);
  }

  /** Group sizes are multiples of this many SMs (SMs guaranteed to be co-scheduled together). */
  get smCoscheduledAlignment(): number {
    return new DataView(this.bytes.buffer, this.bytes.byteOffset).getUint32(SM_OFFSET + 8, true);
  }

  /**
   * All SMs of device `ordinal` (cuDeviceGetDevResource, CU_DEV_RESOURCE_TYPE_SM).
   * @param ordinal The device's 0-based ordinal; default 0.
   */
  static ofDevice(ordinal = 0): SmResource {
    const dev = deviceHandle(ordinal);
    const bytes = new Uint8Array(RESOURCE_BYTES);
    drv.global('cuDeviceGetDevResource', dev, bytes, drv.CUdevResourceType.CU_DEV_RESOURCE_TYPE_SM);
    return new SmResource(SEALED, bytes, ordinal);
  }

  /**
   * Splits this set into up to `groups` groups of at least `minSmCount` SMs each (rounded up to the
   * device's partition size and alignment) and what is left (cuDevSmResourceSplitByCount). Fewer groups
   * come back when the SMs do not suffice. `ignoreCoscheduling` lowers the minimum size and alignment.
   * @param options `groups` (how many groups at most), `minSmCount` (the fewest SMs per group, rounded up to the device's partition size) and `ignoreCoscheduling` (true: lower the minimum size and alignment, giving up co-scheduling guarantees; default false).
   */
  split(options: { groups: number; minSmCount: number; ignoreCoscheduling?: boolean }): { groups: SmResource[]; remaining: SmResource } {
    const where = 'SmResource.split';
    if (typeof options !== 'object' || options === null)
      throw new TypeError(`${where}: options must be { groups, minSmCount, ignoreCoscheduling? }, got ${describe(options)}`);
    checkKeys(where, options, ['groups', 'minSmCount', 'ignoreCoscheduling']);
    const { groups, minSmCount, ignoreCoscheduling } = options;
    if (typeof groups !== 'number' || !Number.isInteger(groups) || groups < 1 || groups > 1024)
      throw new RangeError(`${where}: groups must be an integer from 1 to 1024, got ${describe(groups)}`);
    if (typeof minSmCount !== 'number' || !Number.isInteger(minSmCount) || minSmCount < 1 || minSmCount > 0xffffffff)
      throw new RangeError(`${where}: minSmCount must be a positive integer, got ${describe(minSmCount)}`);
    if (ignoreCoscheduling !== undefined && typeof ignoreCoscheduling !== 'boolean')
      throw new TypeError(`${where}: ignoreCoscheduling must be a boolean, got ${describe(ignoreCoscheduling)}`);
    if (minSmCount > this.smCount) throw new RangeError(`${where}: minSmCount ${minSmCount} is more than the ${this.smCount} SMs of this set`);
    const result = new Uint8Array(RESOURCE_BYTES * groups);
    const count = new Uint32Array([groups]);
    const remaining = new Uint8Array(RESOURCE_BYTES);
    const flags = ignoreCoscheduling ? drv.CUdevSmResourceSplit_flags.CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING : 0;
    drv.global('cuDevSmResourceSplitByCount', result, count, this.bytes, remaining, flags, minSmCount);
    const made = Array.from({ length: count[0] }, (_, i) => new SmResource(SEALED, result.slice(i * RESOURCE_BYTES, (i + 1) * RESOURCE_BYTES), this.device));
    return { groups: made, remaining: new SmResource(SEALED, remaining, this.device) };
  }
}

/** Options of {@link GreenContext.createStream}. */
export interface GreenStreamOptions {
  /** Lower numbers are higher priority (see Stream.priorityRange()). */
  priority?: number;
}

/**
 * A green context (cuGreenCtxCreate): a context whose work runs only on a given set of SMs. Load
 * modules and allocate in {@link GreenContext.context}, launch on streams from
 * {@link GreenContext.createStream}. close() (or `using`) destroys it once every stream, module and
 * buffer made in its context is closed too.
 */
export class GreenContext extends Resource {
  /** The driver handle (CUgreenCtx). */
  readonly handle: drv.CUgreenCtx;
  /** The CUcontext of the green context (cuCtxFromGreenCtx): pass it as `context` to Module.load, DeviceBuffer.alloc, …. */
  readonly context: Context;
  /** The device ordinal. */
  readonly device: number;

  private constructor(seal: Sealed, handle: drv.CUgreenCtx, context: Context, device: number) {
    checkSealed(seal, 'GreenContext', 'GreenContext.create()');
    super('GreenContext', () => context.close());
    this.handle = handle;
    this.context = context;
    this.device = device;
    drv.noteHandle(handle, 'CUgreenCtx');
  }

  /**
   * Creates a green context on the SMs of `resources` (one SmResource, or several of one device, e.g.
   * groups of {@link SmResource.split}) through cuDevResourceGenerateDesc and cuGreenCtxCreate.
   * @param resources The SMs to run on: one SmResource, or several of one device (e.g. groups of SmResource.split).
   */
  static create(resources: SmResource | readonly SmResource[]): GreenContext {
    const where = 'GreenContext.create';
    const list = resources instanceof SmResource ? [resources] : resources;
    if (!Array.isArray(list) || list.length === 0 || !list.every((r) => r instanceof SmResource))
      throw new TypeError(`${where}: resources must be an SmResource or a non-empty array of them, got ${describe(resources)}`);
    const device = list[0].device;
    if (list.some((r) => r.device !== device)) throw new TypeError(`${where}: the resources belong to different devices`);
    const dev = deviceHandle(device);
    const packed = new Uint8Array(RESOURCE_BYTES * list.length);
    list.forEach((r, i) => packed.set(r.bytes, i * RESOURCE_BYTES));
    drv.global('cuDevResourceGenerateDesc', drv.out64, packed, list.length);
    const desc = drv.outNumber();
    drv.global('cuGreenCtxCreate', drv.out64, desc, dev, drv.CUgreenCtxCreate_flags.CU_GREEN_CTX_DEFAULT_STREAM);
    const handle = drv.outNumber() as drv.CUgreenCtx;
    let ctxHandle: number;
    try {
      drv.global('cuCtxFromGreenCtx', drv.out64, handle);
      ctxHandle = drv.outNumber();
    } catch (e) {
      drv.global('cuGreenCtxDestroy', handle);
      throw e;
    }
    const context = Context.fromGreen(ctxHandle as drv.CUcontext, device, () => {
      drv.forgetHandle(handle);
      assertMayBlock('GreenContext.close()');
      drv.global('cuGreenCtxDestroy', handle);
    });
    return new GreenContext(SEALED, handle, context, device);
  }

  /**
   * Splits device `device`'s SMs into `groups` green contexts of at least `minSmCount` SMs each (fewer
   * when the SMs do not suffice): SmResource.ofDevice(device).split(…), then one create() per group.
   * @param options `device` (ordinal; default 0), `groups` (how many green contexts at most), `minSmCount` (the fewest SMs each, rounded up to the partition size) and `ignoreCoscheduling` (lower the minimum size and alignment; default false).
   */
  static split(options: { device?: number; groups: number; minSmCount: number; ignoreCoscheduling?: boolean }): GreenContext[] {
    if (typeof options !== 'object' || options === null)
      throw new TypeError(`GreenContext.split: options must be { device?, groups, minSmCount, ignoreCoscheduling? }, got ${describe(options)}`);
    const { device, ...rest } = options;
    const { groups } = SmResource.ofDevice(device ?? 0).split(rest);
    const made: GreenContext[] = [];
    try {
      for (const g of groups) made.push(GreenContext.create(g));
    } catch (e) {
      made.forEach((m) => m.close());
      throw e;
    }
    return made;
  }

  /** @internal */
  check(): void {
    this.assertOpen();
    this.context.check();
  }

  /** The SMs this green context runs on (cuGreenCtxGetDevResource). */
  get resource(): SmResource {
    this.check();
    const bytes = new Uint8Array(RESOURCE_BYTES);
    drv.global('cuGreenCtxGetDevResource', this.handle, bytes, drv.CUdevResourceType.CU_DEV_RESOURCE_TYPE_SM);
    return new SmResource(SEALED, bytes, this.device);
  }

  /** Number of SMs this green context runs on. */
  get smCount(): number {
    return this.resource.smCount;
  }

  /** The green context's unique id in this process (cuGreenCtxGetId). */
  get id(): number {
    this.check();
    drv.global('cuGreenCtxGetId', this.handle, drv.out64);
    return drv.outNumber();
  }

  /**
   * A new stream of this green context (cuGreenCtxStreamCreate; always non-blocking with respect to
   * the legacy default stream). Work launched on it runs on this green context's SMs only.
   * @param options `priority`: lower numbers are more urgent, within Stream.priorityRange() (default 0).
   */
  createStream(options: GreenStreamOptions = {}): Stream {
    this.check();
    if (typeof options !== 'object' || options === null) throw new TypeError(`GreenContext.createStream: options must be an object, got ${describe(options)}`);
    checkKeys('GreenContext.createStream', options, ['priority']);
    const p = options.priority ?? 0;
    if (typeof p !== 'number' || !Number.isInteger(p) || Math.abs(p) > 0x7fffffff)
      throw new RangeError(`GreenContext.createStream: priority must be a 32-bit integer, got ${describe(p)}`);
    drv.call(this.context, 'cuGreenCtxStreamCreate', drv.out64, this.handle, drv.CUstream_flags.CU_STREAM_NON_BLOCKING, p);
    return Stream.adoptCreated(drv.outNumber() as drv.CUstream, this.context);
  }

  /**
   * Records `event` on all work submitted to this green context so far (cuGreenCtxRecordEvent).
   * @param event An event of this green context's context (GreenContext.context).
   */
  recordEvent(event: Event): void {
    this.check();
    if (!(event instanceof Event)) throw new TypeError(`GreenContext.recordEvent: event must be an Event, got ${describe(event)}`);
    event.assertUsable();
    drv.call(this.context, 'cuGreenCtxRecordEvent', this.handle, event.handle);
  }

  /**
   * Makes later work submitted to this green context wait for `event` (cuGreenCtxWaitEvent).
   * @param event The event to wait for, recorded before the work that must finish first.
   */
  waitEvent(event: Event): void {
    this.check();
    if (!(event instanceof Event)) throw new TypeError(`GreenContext.waitEvent: event must be an Event, got ${describe(event)}`);
    event.assertUsable();
    drv.call(this.context, 'cuGreenCtxWaitEvent', this.handle, event.handle);
  }

  toString(): string {
    return `GreenContext(device ${this.device}, 0x${this.handle.toString(16)})`;
  }
}
