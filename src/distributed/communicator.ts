// Communicator: an NCCL communicator of one device (one rank). Two ways to make them:
//   - one process drives every device: Communicator.initAll(devices) (ncclCommInitAll), one per device;
//     collectives over several of them from one thread must go in one Communicator.group(() => …);
//   - one process (or worker thread) per device: Communicator.uniqueId() once, hand the 128 bytes to the
//     others (postMessage, IPC, argv as hex), then Communicator.initRank(nranks, id, rank, device) in each.
// Collectives are asynchronous like kernels: they are enqueued on a stream of the communicator's device
// (the legacy default stream unless `stream` is given); synchronize that stream before reading results.
// Arguments are checked (TypeError/RangeError naming the call) before NCCL is called, and NCCL is loaded
// on first use, never at import, with an error saying NCCL is needed when it is missing.
import { ncclTypes, type nccl } from '../releases';
import { NCCL_DTYPES, NCCL_OPS, NcclUnavailableError, ncclApi, ncclDataType, ncclError, ncclRaw, ncclRedOp, requireNccl } from './nccl-library';
import { isArrayBuffer } from '../../support';
import { Context } from '../context';
import { Device } from '../device';
import { Resource, checkSize, whenNoHostFuncs } from '../lifecycle';
import { DeviceBuffer } from '../memory/device-buffer';
import { Stream, streamHandle, type StreamLike } from '../stream';
import * as drv from '../driver';
import { ClosedObjectError, OBJECTS_ERROR, ObjectsError, whereOf } from '../errors';
import { openStore, type TcpStore } from './store';
import { distributedEnvironment } from './rendezvous';
import type { BroadcastOptions, CollectiveOptions, NcclDtype, ReduceOp, ReduceOptions, RendezvousOptions, UniqueId, WaitOptions } from './communicator-options';
import { SEALED, type Sealed, checkSealed } from '../sealed';

export type { BroadcastOptions, CollectiveOptions, NcclDtype, ReduceOp, ReduceOptions, RendezvousOptions, UniqueId, WaitOptions };
export { NCCL_DTYPES, NCCL_OPS, NcclUnavailableError, ncclDataType, ncclRedOp, requireNccl };

const { ncclResult_t } = ncclTypes;

function uniqueIdBytes(id: unknown, call: string): Uint8Array {
  const n = ncclTypes.NCCL_UNIQUE_ID_BYTES;
  let bytes: Uint8Array;
  if (typeof id === 'string') {
    if (!/^[0-9a-fA-F]*$/.test(id) || id.length !== 2 * n)
      throw new RangeError(`${call}: a unique id string must be ${2 * n} hex digits, got ${id.length} characters`);
    bytes = Uint8Array.from(Buffer.from(id, 'hex'));
  } else if (isArrayBuffer(id)) bytes = new Uint8Array(id);
  else if (ArrayBuffer.isView(id)) bytes = new Uint8Array(id.buffer, id.byteOffset, id.byteLength);
  else throw new TypeError(`${call}: id must be the ${n}-byte unique id from Communicator.uniqueId() (Uint8Array, Buffer, ArrayBuffer or hex string)`);
  if (bytes.byteLength !== n) throw new RangeError(`${call}: a unique id is ${n} bytes, got ${bytes.byteLength}`);
  return bytes;
}

function toDevice(d: unknown, call: string, name: string): Device {
  if (d instanceof Device) return d;
  if (typeof d === 'number' && Number.isInteger(d) && d >= 0) return Device.get(d);
  throw new TypeError(`${call}: ${name} must be a Device or a device ordinal, got ${String(d)}`);
}

function isRank(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

/**
 * A collective (or a non-blocking init) did not complete within its timeout. The communicator was
 * aborted (ncclCommAbort) and is closed: a peer probably died or never came.
 */
export class CommunicatorTimeoutError extends ObjectsError {
  /**
   * Made by the Communicator; `where` (the `Communicator.method` that waited) defaults to the one the
   * message starts with.
   * @param message What timed out.
   * @param where The `Communicator.method` that waited (default: the one the message starts with).
   */
  constructor(message: string, where = whereOf(message, 'Communicator')) {
    super(where, OBJECTS_ERROR.timeout, message);
  }
}

const NCCL_IN_PROGRESS = 7; // ncclInProgress

/** A non-blocking communicator is destroyed in NCCL's order: finalize, wait until its state leaves
 *  ncclInProgress (bounded: 30 s, then abort), destroy. ncclCommDestroy alone may answer in progress. */
function destroyNonBlocking(handle: nccl.ncclComm_t): void {
  const settle = (what: string) => {
    const until = Date.now() + 30_000;
    for (;;) {
      const state = ncclRaw().ncclCommGetAsyncError(handle, asyncState);
      if (state !== ncclResult_t.ncclSuccess) throw ncclError('ncclCommGetAsyncError', state);
      if (asyncState[0] !== NCCL_IN_PROGRESS) return asyncState[0];
      if (Date.now() > until) {
        ncclRaw().ncclCommAbort(handle);
        throw ncclError(what, NCCL_IN_PROGRESS);
      }
      Atomics.wait(sleeper, 0, 0, 1);
    }
  };
  const finalized = ncclRaw().ncclCommFinalize(handle);
  if (finalized !== ncclResult_t.ncclSuccess && finalized !== NCCL_IN_PROGRESS) {
    ncclRaw().ncclCommAbort(handle);
    throw ncclError('ncclCommFinalize', finalized);
  }
  const state = settle('ncclCommFinalize');
  if (state !== ncclResult_t.ncclSuccess) {
    ncclRaw().ncclCommAbort(handle);
    throw ncclError('ncclCommFinalize', state);
  }
  const destroyed = ncclRaw().ncclCommDestroy(handle);
  if (destroyed !== ncclResult_t.ncclSuccess && destroyed !== NCCL_IN_PROGRESS) throw ncclError('ncclCommDestroy', destroyed);
}
const asyncState = new Int32Array(1);
const NCCL_CONFIG_BYTES = 80; // sizeof(ncclConfig_t) of NCCL 2.28
const stateSlot = new Int32Array(1);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
// Bumped when ncclGroupEnd returns ncclInProgress: non-blocking communicators settle before their next call.
let groupEpoch = 0;

/** A ncclConfig_t as NCCL_CONFIG_INITIALIZER makes it, with `blocking` set. NCCL copies min(size, its own). */
function ncclConfig(blocking: boolean): Uint8Array {
  const UNDEF = -2147483648; // NCCL_CONFIG_UNDEF_INT
  const v = new DataView(new ArrayBuffer(NCCL_CONFIG_BYTES));
  v.setBigUint64(0, BigInt(NCCL_CONFIG_BYTES), true);
  v.setUint32(8, 0xcafebeef, true);
  v.setUint32(12, 22809, true); // NCCL_VERSION(2, 28, 9): the layout written here
  for (const off of [16, 20, 24, 28, 40, 44, 56, 60, 64, 68, 72, 76]) v.setInt32(off, UNDEF, true);
  v.setInt32(16, blocking ? 1 : 0, true);
  return new Uint8Array(v.buffer);
}

function timeoutArg(call: string, name: string, v: unknown): number {
  if (typeof v !== 'number' || !(v >= 0) || (!Number.isSafeInteger(v) && v !== Infinity))
    throw new RangeError(`${call}: ${name} must be a non-negative number of ms, got ${String(v)}`);
  return v;
}

const storeGenerations = new WeakMap<TcpStore, number>();

/**
 * One rank of an NCCL communicator, bound to one device.
 * @example
 * ```ts
 * import { Communicator, DeviceBuffer, Stream } from 'cuda-ts/objects';
 *
 * // each rank, started by `cuda-ts-run --nproc-per-node 2 train.mjs` (or torchrun); an ES module
 * using comm = await Communicator.fromEnvironment({ timeoutMs: 60_000 }); // rank, size, device from the environment
 * using stream = Stream.create({ context: comm.context });
 * using grads = DeviceBuffer.from(new Float32Array(1024).fill(comm.rank), { stream });
 * await comm.allReduceAsync(grads, { dtype: 'f32', op: 'avg', stream, timeoutMs: 30_000 }); // a dead peer: an error, not a hang
 * console.log(comm.rank, grads.toArray(Float32Array, { stream })[0]); // the mean of the ranks
 * ```
 */
export class Communicator extends Resource {
  /** The NCCL handle (ncclComm_t). */
  readonly handle: nccl.ncclComm_t;
  /** This communicator's rank. */
  readonly rank: number;
  /** Number of ranks. */
  readonly count: number;
  /** The device this rank runs on. */
  readonly device: Device;
  /** The device's primary context, current for every call. */
  readonly context: Context;
  private readonly ending: { abort: boolean; nonBlocking: boolean };
  /** Default timeout of awaited collectives ({@link Communicator.synchronized}) in ms. */
  timeoutMs = 600_000;
  /** The store this communicator met through (rendezvous), for barriers and small values; undefined otherwise. */
  store: TcpStore | undefined;
  private ownsStore = false;
  // Non-blocking communicators (rendezvous): a call that returned ncclInProgress leaves `pending` set.
  private readonly nb = { nonBlocking: false, pending: false, epoch: 0 };

  private constructor(seal: Sealed, handle: nccl.ncclComm_t, rank: number, count: number, device: Device, context: Context) {
    checkSealed(seal, 'Communicator', 'Communicator.initAll(), initRank() or fromEnvironment()');
    const ending = { abort: false, nonBlocking: false };
    super(
      'Communicator',
      () =>
        whenNoHostFuncs(() => {
          // A context lost to a sticky error leaves nothing to flush: abort instead of waiting on it.
          const abort = ending.abort || !context.bindForFree();
          if (abort) ncclApi().ncclCommAbort(handle);
          else if (ending.nonBlocking) destroyNonBlocking(handle);
          else ncclApi().ncclCommDestroy(handle);
        }),
      [context],
    );
    this.handle = handle;
    this.rank = rank;
    this.count = count;
    this.device = device;
    this.context = context;
    this.ending = ending;
  }

  /**
   * One communicator per device, all in this process (ncclCommInitAll); rank i is `devices[i]`.
   * Default: every device. Collectives over several of them from one thread need Communicator.group().
   * @param devices The devices (Device objects or ordinals), one rank each in this order (default: every device).
   */
  static initAll(devices?: readonly (Device | number)[]): Communicator[] {
    const call = 'Communicator.initAll';
    if (devices !== undefined && !Array.isArray(devices)) throw new TypeError(`${call}: devices must be an array of Devices or ordinals`);
    if (devices !== undefined && devices.length === 0) throw new RangeError(`${call}: devices must not be empty`);
    if (devices !== undefined) {
      const seen = new Set<number>();
      for (const d of devices) {
        if (!(d instanceof Device) && !(typeof d === 'number' && Number.isInteger(d) && d >= 0))
          throw new TypeError(`${call}: devices must be Devices or device ordinals, got ${String(d)}`);
        const ordinal = d instanceof Device ? d.ordinal : d;
        if (seen.has(ordinal)) throw new RangeError(`${call}: device ${ordinal} is listed twice`);
        seen.add(ordinal);
      }
    }
    requireNccl(call);
    const list =
      devices !== undefined ? devices.map((d, i) => toDevice(d, call, `devices[${i}]`)) : Array.from({ length: Device.count() }, (_, i) => Device.get(i));
    if (list.length === 0) throw new RangeError(`${call}: no CUDA device`);
    // Retain the primary contexts first: NCCL then runs in the same contexts as this process's buffers.
    const contexts = list.map((d) => {
      const ctx = d.primaryContext();
      ctx.check();
      return ctx;
    });
    const comms = new BigUint64Array(list.length);
    const status = ncclRaw().ncclCommInitAll(
      comms,
      list.length,
      Int32Array.from(list, (d) => d.ordinal),
    );
    if (status !== 0) throw ncclError('ncclCommInitAll', status);
    return list.map((d, i) => new Communicator(SEALED, Number(comms[i]) as nccl.ncclComm_t, i, list.length, d, contexts[i]));
  }

  /** A new ncclUniqueId (128 bytes) for initRank; rank 0 usually makes it and sends it to the others. */
  static uniqueId(): Uint8Array {
    requireNccl('Communicator.uniqueId');
    return ncclApi().ncclGetUniqueId(); // the 128 opaque bytes of an ncclUniqueId
  }

  /**
   * Joins communicator `id` as `rank` of `nranks` on `device` (default: the current device), through
   * ncclCommInitRank. Blocks until every rank has joined, unless called inside Communicator.group().
   * @param nranks The number of ranks.
   * @param id The communicator's ncclUniqueId from Communicator.uniqueId() on one rank: 128 bytes, or 256 hex digits.
   * @param rank This rank, in [0, nranks).
   * @param device The device of this rank, a Device or an ordinal (default: the current device).
   */
  static initRank(nranks: number, id: UniqueId, rank: number, device?: Device | number): Communicator {
    const call = 'Communicator.initRank';
    if (!isRank(nranks) || nranks < 1) throw new RangeError(`${call}: nranks must be a positive integer, got ${String(nranks)}`);
    if (!isRank(rank) || rank < 0 || rank >= nranks) throw new RangeError(`${call}: rank must be an integer in [0, ${nranks}), got ${String(rank)}`);
    const bytes = uniqueIdBytes(id, call);
    if (device !== undefined && !(device instanceof Device) && !(typeof device === 'number' && Number.isInteger(device) && device >= 0)) {
      throw new TypeError(`${call}: device must be a Device or a device ordinal, got ${String(device)}`);
    }
    requireNccl(call);
    const dev = device === undefined ? Device.current() : toDevice(device, call, 'device');
    const ctx = dev.primaryContext();
    ctx.bind(); // NCCL takes the device of the current context
    const commId: nccl.ncclUniqueId = { internal: Array.from(new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)) };
    const handle = ncclApi().ncclCommInitRank(nranks, commId, rank);
    return new Communicator(SEALED, handle, rank, nranks, dev, ctx);
  }

  /**
   * Runs `fn` between ncclGroupStart and ncclGroupEnd (End runs even when `fn` throws): NCCL then
   * launches the collectives (or initRank calls) issued inside together. `fn` must be synchronous.
   * @param fn Issues the collectives (or initRank calls) to launch together; synchronous. What it returns is group()'s result.
   */
  static group<T>(fn: () => T): T {
    if (typeof fn !== 'function') throw new TypeError('Communicator.group: expects a function');
    requireNccl('Communicator.group');
    ncclApi().ncclGroupStart();
    let result: T;
    try {
      result = fn();
    } catch (e) {
      try {
        ncclApi().ncclGroupEnd();
      } catch {
        // the error of fn explains more than the group's
      }
      throw e;
    }
    try {
      ncclApi().ncclGroupEnd();
    } catch (e) {
      // non-blocking communicators finish the group in NCCL's threads; they settle before their next call
      if (e instanceof ncclApi().NcclError && e.code === NCCL_IN_PROGRESS) groupEpoch++;
      else throw e;
    }
    if (typeof (result as { then?: unknown } | null)?.then === 'function') {
      throw new TypeError('Communicator.group: fn must be synchronous (the group ended before its promise settled)');
    }
    return result;
  }

  /**
   * Elementwise reduction of every rank's `send` into every rank's `recv` (in place: allReduce(buf, options)).
   * @param buf This rank's input, replaced by the result (on the communicator's device).
   * @param options `dtype` (element type, required), `op` (the reduction: 'sum', the default, 'prod', 'max', 'min' or 'avg'), `count` (elements; default: from the buffer sizes) and `stream` (a stream of the communicator's device; default the legacy default stream).
   */
  allReduce(buf: DeviceBuffer, options: ReduceOptions): this;
  /**
   * Elementwise reduction of every rank's `send` into every rank's `recv`.
   * @param send This rank's input, on the communicator's device.
   * @param recv Where the result goes, on the communicator's device (may be `send`).
   * @param options `dtype` (element type, required), `op` (the reduction: 'sum', the default, 'prod', 'max', 'min' or 'avg'), `count` (elements; default: from the buffer sizes) and `stream` (a stream of the communicator's device; default the legacy default stream).
   */
  allReduce(send: DeviceBuffer, recv: DeviceBuffer, options: ReduceOptions): this;
  allReduce(send: DeviceBuffer, recvOrOptions: DeviceBuffer | ReduceOptions, maybeOptions?: ReduceOptions): this {
    const call = 'Communicator.allReduce';
    const { recv, options } = this.operands(call, send, recvOrOptions, maybeOptions);
    const { type, bytes } = ncclDataType(options.dtype, call);
    const op = ncclRedOp(options.op ?? 'sum', call);
    const count = this.elements(call, options, send, bytes);
    this.fits(call, 'send', send, count * bytes);
    this.fits(call, 'recv', recv, count * bytes);
    const s = this.stream(call, options.stream);
    const [sp, rp] = [send.ptr, recv.ptr];
    this.run(() => ncclApi().ncclAllReduce(sp, rp, count, type, op, this.handle, s));
    return this;
  }

  /**
   * Copies `count` elements of the root's `send` into every rank's `recv` (in place: broadcast(buf, options)).
   * @param buf The root's data; on the other ranks, replaced by it.
   * @param options `dtype` (element type, required), `root` (the rank whose data is sent; default 0), `count` (elements; default: from the buffer sizes) and `stream` (a stream of the communicator's device; default the legacy default stream).
   */
  broadcast(buf: DeviceBuffer, options: BroadcastOptions): this;
  /**
   * Copies `count` elements of the root's `send` into every rank's `recv`.
   * @param send The data to send (read on the root only).
   * @param recv Where every rank receives it.
   * @param options `dtype` (element type, required), `root` (the rank whose data is sent; default 0), `count` (elements; default: from the buffer sizes) and `stream` (a stream of the communicator's device; default the legacy default stream).
   */
  broadcast(send: DeviceBuffer, recv: DeviceBuffer, options: BroadcastOptions): this;
  broadcast(send: DeviceBuffer, recvOrOptions: DeviceBuffer | BroadcastOptions, maybeOptions?: BroadcastOptions): this {
    const call = 'Communicator.broadcast';
    const { recv, options } = this.operands(call, send, recvOrOptions, maybeOptions);
    const { type, bytes } = ncclDataType(options.dtype, call);
    const root = options.root ?? 0;
    if (!isRank(root) || root < 0 || root >= this.count) throw new RangeError(`${call}: root must be a rank in [0, ${this.count}), got ${String(root)}`);
    const count = this.elements(call, options, recv, bytes);
    if (this.rank === root) this.fits(call, 'send', send, count * bytes); // only the root's send is read
    this.fits(call, 'recv', recv, count * bytes);
    const s = this.stream(call, options.stream);
    const [sp, rp] = [send.ptr, recv.ptr];
    this.run(() => ncclApi().ncclBroadcast(sp, rp, count, type, root, this.handle, s));
    return this;
  }

  /**
   * Reduces every rank's `send` (count × ranks elements) and leaves block `rank` of the result
   * (`count` elements) in `recv`. Default count: recv's size in elements.
   * @param send This rank's input: count × ranks elements.
   * @param recv Where this rank's block of the result (`count` elements) goes.
   * @param options `dtype` (element type, required), `op` (the reduction: 'sum', the default, 'prod', 'max', 'min' or 'avg'), `count` (elements; per rank; default: recv's size in elements) and `stream` (a stream of the communicator's device; default the legacy default stream).
   */
  reduceScatter(send: DeviceBuffer, recv: DeviceBuffer, options: ReduceOptions): this {
    const call = 'Communicator.reduceScatter';
    const { options: o } = this.operands(call, send, recv, options);
    const { type, bytes } = ncclDataType(o.dtype, call);
    const op = ncclRedOp(o.op ?? 'sum', call);
    const count = this.elements(call, o, recv, bytes);
    this.fits(call, 'send', send, count * this.count * bytes);
    this.fits(call, 'recv', recv, count * bytes);
    const s = this.stream(call, o.stream);
    const [sp, rp] = [send.ptr, recv.ptr];
    this.run(() => ncclApi().ncclReduceScatter(sp, rp, count, type, op, this.handle, s));
    return this;
  }

  /**
   * Gathers every rank's `send` (`count` elements) into every rank's `recv` (count × ranks elements,
   * in rank order). Default count: send's size in elements.
   * @param send This rank's contribution: `count` elements.
   * @param recv Where every rank's contribution goes, in rank order: count × ranks elements.
   * @param options `dtype` (element type, required), `count` (elements per rank; default: send's size in elements) and `stream` (a stream of the communicator's device; default the legacy default stream).
   */
  allGather(send: DeviceBuffer, recv: DeviceBuffer, options: CollectiveOptions): this {
    const call = 'Communicator.allGather';
    const { options: o } = this.operands(call, send, recv, options);
    const { type, bytes } = ncclDataType(o.dtype, call);
    const count = this.elements(call, o, send, bytes);
    this.fits(call, 'send', send, count * bytes);
    this.fits(call, 'recv', recv, count * this.count * bytes);
    const s = this.stream(call, o.stream);
    const [sp, rp] = [send.ptr, recv.ptr];
    this.run(() => ncclApi().ncclAllGather(sp, rp, count, type, this.handle, s));
    return this;
  }

  /** An error NCCL hit asynchronously (e.g. a peer failed), or undefined (ncclCommGetAsyncError). */
  asyncError(): nccl.NcclError | undefined {
    this.assertOpen();
    const result = ncclApi().ncclCommGetAsyncError(this.handle);
    return result === ncclResult_t.ncclSuccess || result === ncclResult_t.ncclInProgress ? undefined : ncclError('ncclCommGetAsyncError', result);
  }

  /**
   * Aborts the communicator (ncclCommAbort): pending operations are cancelled and resources freed
   * without waiting for other ranks. Idempotent; a no-op once closed.
   */
  abort(): void {
    if (this.closed) return;
    this.ending.abort = true;
    this.close();
  }

  /**
   * Meets the other ranks and joins one communicator with them: rank 0 serves a small TCP store at
   * `address` and publishes a fresh ncclUniqueId there, the others fetch it, and every rank calls
   * ncclCommInitRankConfig — non-blocking, polled, so a rank that never comes makes the others fail
   * after `timeoutMs` instead of hanging. Works the same whether the ranks share a host or not.
   * The store needs a shared token (`token`, else $CUDA_TS_STORE_TOKEN) and stays open as `store`
   * (barriers, small values) until close().
   * @param options `rank` (this process's, in [0, size)), `size` (number of ranks) and `address` (rank 0's store, `host:port`), required; `timeoutMs` (longest wait to meet; default 300000), `collectiveTimeoutMs` (default for synchronized(); 600000), `device` (default $LOCAL_RANK, else the current device), `token` (default $CUDA_TS_STORE_TOKEN), `store`, `key`, `limits` and `listenHost` optional (see RendezvousOptions).
   */
  static async rendezvous(options: RendezvousOptions): Promise<Communicator> {
    const call = 'Communicator.rendezvous';
    if (typeof options !== 'object' || options === null) throw new TypeError(`${call}: options { rank, size, address } are required`);
    const { rank, size } = options;
    if (!isRank(size) || size < 1) throw new RangeError(`${call}: size must be a positive integer, got ${String(size)}`);
    if (!isRank(rank) || rank < 0 || rank >= size) throw new RangeError(`${call}: rank must be an integer in [0, ${size}), got ${String(rank)}`);
    const timeoutMs = timeoutArg(call, 'timeoutMs', options.timeoutMs ?? 300_000);
    const collectiveTimeoutMs = timeoutArg(call, 'collectiveTimeoutMs', options.collectiveTimeoutMs ?? 600_000);
    const prefix = options.key ?? 'cuda-ts/nccl';
    if (typeof prefix !== 'string' || prefix.length === 0) throw new TypeError(`${call}: key must be a non-empty string`);
    let device = options.device;
    if (device === undefined && process.env.LOCAL_RANK !== undefined && /^\d+$/.test(process.env.LOCAL_RANK)) device = Number(process.env.LOCAL_RANK);
    if (device !== undefined && !(device instanceof Device) && !(typeof device === 'number' && Number.isInteger(device) && device >= 0)) {
      throw new TypeError(`${call}: device must be a Device or a device ordinal, got ${String(device)}`);
    }
    requireNccl(call);
    const started = performance.now();
    const store =
      options.store ??
      (await openStore({ ...options.limits, rank, size, address: options.address, timeoutMs, token: options.token, listenHost: options.listenHost }));
    try {
      const gen = (storeGenerations.get(store) ?? 0) + 1; // each rendezvous on one store gets its own id
      storeGenerations.set(store, gen);
      const key = `${prefix}/${gen}/uniqueId`;
      let id: Uint8Array;
      if (rank === 0) {
        id = Communicator.uniqueId();
        await store.set(key, id);
      } else {
        id = await store.get(key, { timeoutMs: Math.max(0, Math.round(timeoutMs - (performance.now() - started))) }); // Infinity stays Infinity
      }
      const comm = Communicator.initNonBlocking(call, size, uniqueIdBytes(id, call), rank, device);
      comm.timeoutMs = collectiveTimeoutMs;
      comm.store = store;
      comm.ownsStore = options.store === undefined;
      await comm.settleAsync(call, Math.max(0, timeoutMs - (performance.now() - started)), `meeting ${size} ranks (ncclCommInitRankConfig)`);
      return comm;
    } catch (e) {
      if (options.store === undefined) await store.close();
      throw e;
    }
  }

  /**
   * {@link Communicator.rendezvous} with rank, size, address and device from the torchrun variables
   * (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), as cuda-ts-run and torchrun set them.
   * @param options Every rendezvous() option but `rank`, `size` and `address`, which the environment gives (e.g. `timeoutMs`, `token`, `device`).
   */
  static fromEnvironment(options: Omit<RendezvousOptions, 'rank' | 'size' | 'address'> = {}): Promise<Communicator> {
    const call = 'Communicator.fromEnvironment';
    const env = distributedEnvironment(call);
    return Communicator.rendezvous({ ...options, rank: env.rank, size: env.size, address: env.address, device: options.device ?? env.localRank });
  }

  /** ncclCommInitRankConfig with blocking = 0: returns at once; the caller settles it. */
  private static initNonBlocking(call: string, nranks: number, bytes: Uint8Array, rank: number, device: Device | number | undefined): Communicator {
    const dev = device === undefined ? Device.current() : toDevice(device, call, 'device');
    const ctx = dev.primaryContext();
    ctx.bind(); // NCCL takes the device of the current context
    const out = new BigUint64Array(1);
    const commId: nccl.ncclUniqueId = { internal: Array.from(new Int8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)) };
    const status = ncclRaw().ncclCommInitRankConfig(out, nranks, commId, rank, ncclConfig(false));
    const handle = Number(out[0]) as nccl.ncclComm_t;
    if (status !== 0 && status !== NCCL_IN_PROGRESS) {
      if (handle !== 0) ncclRaw().ncclCommAbort(handle);
      throw ncclError('ncclCommInitRankConfig', status);
    }
    const comm = new Communicator(SEALED, handle, rank, nranks, dev, ctx);
    comm.nb.nonBlocking = true;
    comm.ending.nonBlocking = true;
    comm.nb.pending = status === NCCL_IN_PROGRESS;
    comm.nb.epoch = groupEpoch;
    return comm;
  }

  /** True for communicators made non-blocking (rendezvous, fromEnvironment). */
  get nonBlocking(): boolean {
    return this.nb.nonBlocking;
  }

  /**
   * Resolves once the collectives enqueued on `stream` are done, without blocking the event loop:
   * polls the stream and ncclCommGetAsyncError. An NCCL error (a peer failed) or the timeout aborts
   * the communicator (ncclCommAbort) and rejects — NcclError or CommunicatorTimeoutError — so a dead
   * peer never hangs this process. (stream.synchronize() on such a stream would wait forever.)
   * @param options `stream` (the stream the collectives were enqueued on; default the legacy default stream) and `timeoutMs` (abort the communicator and reject past this many ms; default the communicator's `timeoutMs`).
   */
  async synchronized(options: WaitOptions = {}): Promise<void> {
    const call = 'Communicator.synchronized';
    if (typeof options !== 'object' || options === null) throw new TypeError(`${call}: options must be an object`);
    this.assertOpen();
    const timeoutMs = timeoutArg(call, 'timeoutMs', options.timeoutMs ?? this.timeoutMs);
    const h = this.stream(call, options.stream);
    const start = performance.now();
    let interval = 0;
    for (;;) {
      if (this.stateSettled(call)) {
        this.context.bind();
        if (drv.query(this.context, 'cuStreamQuery', h)) return;
      }
      const elapsed = performance.now() - start;
      if (elapsed > timeoutMs) throw this.timedOut(call, timeoutMs, 'the collectives');
      if (elapsed < 2) await new Promise((r) => setImmediate(r));
      else {
        interval = Math.min(2, interval + 0.25);
        await new Promise((r) => setTimeout(r, interval));
      }
    }
  }

  /**
   * allReduce, then awaits it ({@link Communicator.synchronized}); `timeoutMs` as there.
   * @param buf This rank's input, replaced by the result.
   * @param options `dtype` (element type, required), `op` (the reduction: 'sum', the default, 'prod', 'max', 'min' or 'avg'), `count` (elements; default: from the buffer sizes) and `stream` (a stream of the communicator's device; default the legacy default stream). Also `timeoutMs`: abort the communicator and reject past this many ms (default: the communicator's `timeoutMs`).
   */
  async allReduceAsync(buf: DeviceBuffer, options: ReduceOptions & WaitOptions): Promise<this>;
  /**
   * allReduce(send, recv, options), then awaits it ({@link Communicator.synchronized}).
   * @param send This rank's input, on the communicator's device.
   * @param recv Where the result goes, on the communicator's device (may be `send`).
   * @param options `dtype` (element type, required), `op` (the reduction: 'sum', the default, 'prod', 'max', 'min' or 'avg'), `count` (elements; default: from the buffer sizes) and `stream` (a stream of the communicator's device; default the legacy default stream). Also `timeoutMs`: abort the communicator and reject past this many ms (default: the communicator's `timeoutMs`).
   */
  async allReduceAsync(send: DeviceBuffer, recv: DeviceBuffer, options: ReduceOptions & WaitOptions): Promise<this>;
  async allReduceAsync(
    send: DeviceBuffer,
    recvOrOptions: DeviceBuffer | (ReduceOptions & WaitOptions),
    maybeOptions?: ReduceOptions & WaitOptions,
  ): Promise<this> {
    const options = recvOrOptions instanceof DeviceBuffer ? maybeOptions : recvOrOptions;
    await this.beforeAsync('Communicator.allReduceAsync', options);
    if (recvOrOptions instanceof DeviceBuffer) this.allReduce(send, recvOrOptions, maybeOptions as ReduceOptions);
    else this.allReduce(send, recvOrOptions);
    await this.synchronized({ stream: options?.stream, timeoutMs: options?.timeoutMs });
    return this;
  }

  /**
   * broadcast, then awaits it ({@link Communicator.synchronized}).
   * @param buf The root's data; on the other ranks, replaced by it.
   * @param options `dtype` (element type, required), `root` (the rank whose data is sent; default 0), `count` (elements; default: from the buffer sizes) and `stream` (a stream of the communicator's device; default the legacy default stream). Also `timeoutMs`: abort the communicator and reject past this many ms (default: the communicator's `timeoutMs`).
   */
  async broadcastAsync(buf: DeviceBuffer, options: BroadcastOptions & WaitOptions): Promise<this>;
  /**
   * broadcast(send, recv, options), then awaits it ({@link Communicator.synchronized}).
   * @param send The data to send (read on the root only).
   * @param recv Where every rank receives it.
   * @param options `dtype` (element type, required), `root` (the rank whose data is sent; default 0), `count` (elements; default: from the buffer sizes) and `stream` (a stream of the communicator's device; default the legacy default stream). Also `timeoutMs`: abort the communicator and reject past this many ms (default: the communicator's `timeoutMs`).
   */
  async broadcastAsync(send: DeviceBuffer, recv: DeviceBuffer, options: BroadcastOptions & WaitOptions): Promise<this>;
  async broadcastAsync(
    send: DeviceBuffer,
    recvOrOptions: DeviceBuffer | (BroadcastOptions & WaitOptions),
    maybeOptions?: BroadcastOptions & WaitOptions,
  ): Promise<this> {
    const options = recvOrOptions instanceof DeviceBuffer ? maybeOptions : recvOrOptions;
    await this.beforeAsync('Communicator.broadcastAsync', options);
    if (recvOrOptions instanceof DeviceBuffer) this.broadcast(send, recvOrOptions, maybeOptions as BroadcastOptions);
    else this.broadcast(send, recvOrOptions);
    await this.synchronized({ stream: options?.stream, timeoutMs: options?.timeoutMs });
    return this;
  }

  /**
   * reduceScatter, then awaits it ({@link Communicator.synchronized}).
   * @param send This rank's input: count × ranks elements.
   * @param recv Where this rank's block of the result (`count` elements) goes.
   * @param options `dtype` (element type, required), `op` (the reduction: 'sum', the default, 'prod', 'max', 'min' or 'avg'), `count` (elements; default: from the buffer sizes) and `stream` (a stream of the communicator's device; default the legacy default stream). Also `timeoutMs`: abort the communicator and reject past this many ms (default: the communicator's `timeoutMs`).
   */
  async reduceScatterAsync(send: DeviceBuffer, recv: DeviceBuffer, options: ReduceOptions & WaitOptions): Promise<this> {
    await this.beforeAsync('Communicator.reduceScatterAsync', options);
    this.reduceScatter(send, recv, options);
    await this.synchronized({ stream: options.stream, timeoutMs: options.timeoutMs });
    return this;
  }

  /**
   * allGather, then awaits it ({@link Communicator.synchronized}).
   * @param send This rank's contribution: `count` elements.
   * @param recv Where every rank's contribution goes, in rank order.
   * @param options `dtype` (element type, required), `count` (elements per rank; default: send's size in elements) and `stream` (a stream of the communicator's device; default the legacy default stream). Also `timeoutMs`: abort the communicator and reject past this many ms (default: the communicator's `timeoutMs`).
   */
  async allGatherAsync(send: DeviceBuffer, recv: DeviceBuffer, options: CollectiveOptions & WaitOptions): Promise<this> {
    await this.beforeAsync('Communicator.allGatherAsync', options);
    this.allGather(send, recv, options);
    await this.synchronized({ stream: options.stream, timeoutMs: options.timeoutMs });
    return this;
  }

  /**
   * Resolves once every rank called barrier() as often (through the store; rendezvous communicators only).
   * @param options `timeoutMs`: reject past this many ms (default: the store's timeout).
   */
  async barrier(options: { timeoutMs?: number } = {}): Promise<void> {
    this.assertOpen();
    if (!this.store) throw new TypeError('Communicator.barrier: this communicator has no store (make it with Communicator.rendezvous or fromEnvironment)');
    await this.store.barrier(`cuda-ts/communicator/${this.count}`, { timeoutMs: options.timeoutMs, size: this.count });
  }

  /** Destroys the communicator (ncclCommDestroy, or ncclCommAbort after abort()) and closes the store it opened. */
  override close(): void {
    const store = this.ownsStore ? this.store : undefined;
    this.ownsStore = false;
    try {
      super.close();
    } finally {
      if (store) void store.close();
    }
  }

  /** Checks options, and settles a non-blocking call still in progress without blocking the event loop. */
  private async beforeAsync(call: string, options: WaitOptions | undefined): Promise<void> {
    if (typeof options !== 'object' || options === null) throw new TypeError(`${call}: options with a dtype are required, e.g. { dtype: 'f32' }`);
    this.assertOpen();
    const timeoutMs = timeoutArg(call, 'timeoutMs', options.timeoutMs ?? this.timeoutMs);
    if (this.nb.nonBlocking && (this.nb.pending || this.nb.epoch !== groupEpoch)) await this.settleAsync(call, timeoutMs, 'a non-blocking NCCL call');
  }

  toString(): string {
    return `Communicator(rank ${this.rank} of ${this.count}, device ${this.device.ordinal})`;
  }

  /** Parses (buf, options) or (send, recv, options); checks buffers and options. */
  private operands<O extends CollectiveOptions>(
    call: string,
    send: unknown,
    recvOrOptions: unknown,
    maybeOptions: O | undefined,
  ): { recv: DeviceBuffer; options: O } {
    this.assertOpen();
    const inPlace = !(recvOrOptions instanceof DeviceBuffer);
    const recv = (inPlace ? send : recvOrOptions) as DeviceBuffer;
    const options = (inPlace ? recvOrOptions : maybeOptions) as O;
    if (!(send instanceof DeviceBuffer)) throw new TypeError(`${call}: send must be a DeviceBuffer`);
    if (typeof options !== 'object' || options === null) throw new TypeError(`${call}: options with a dtype are required, e.g. { dtype: 'f32' }`);
    for (const [name, b] of [
      ['send', send],
      ['recv', recv],
    ] as const) {
      if (b.closed) throw new ClosedObjectError(call, `${name} buffer`);
      if (b.context.device !== this.device.ordinal) {
        throw new TypeError(`${call}: ${name} buffer is on device ${b.context.device}, this communicator on device ${this.device.ordinal}`);
      }
    }
    return { recv, options };
  }

  /** The element count: options.count, else `basis`'s size in elements (which must be whole). */
  private elements(call: string, options: CollectiveOptions, basis: DeviceBuffer, bytes: number): number {
    if (options.count !== undefined) return checkSize(`${call}: count`, options.count);
    if (basis.byteLength % bytes !== 0)
      throw new RangeError(`${call}: a ${basis.byteLength}-byte buffer is not a whole number of ${bytes}-byte elements; pass count`);
    return basis.byteLength / bytes;
  }

  private fits(call: string, name: string, b: DeviceBuffer, need: number): void {
    if (b.byteLength < need) throw new RangeError(`${call}: ${name} buffer holds ${b.byteLength} bytes, the call needs ${need}`);
  }

  private stream(call: string, stream: StreamLike | undefined): nccl.cudaStream_t {
    if (stream instanceof Stream && stream.context && stream.context.device !== this.device.ordinal) {
      throw new TypeError(`${call}: the stream is on device ${stream.context.device}, this communicator on device ${this.device.ordinal}`);
    }
    return streamHandle(stream, `${call}: stream`);
  }

  private run(fn: () => void): void {
    this.context.bind();
    if (this.nb.nonBlocking && (this.nb.pending || this.nb.epoch !== groupEpoch)) this.settleSync('Communicator');
    try {
      fn();
    } catch (e) {
      // A non-blocking communicator may answer ncclInProgress: the call goes on in NCCL's threads.
      if (this.nb.nonBlocking && e instanceof ncclApi().NcclError && e.code === NCCL_IN_PROGRESS) {
        this.nb.pending = true;
        return;
      }
      throw this.context.fail(e);
    }
  }

  /**
   * One look at the communicator's state (ncclCommGetAsyncError): true when idle, false while a
   * non-blocking call is in progress; an NCCL error aborts the communicator and is thrown.
   */
  private stateSettled(call: string): boolean {
    this.assertOpen();
    const status = ncclRaw().ncclCommGetAsyncError(this.handle, stateSlot);
    const result = status !== 0 ? status : stateSlot[0];
    if (result === NCCL_IN_PROGRESS) return false;
    if (result === 0) {
      this.nb.pending = false;
      this.nb.epoch = groupEpoch;
      return true;
    }
    let detail: string | null = null;
    try {
      detail = ncclRaw().ncclGetLastError(this.handle);
    } catch {
      // the error itself says enough
    }
    const error = ncclError(status !== 0 ? 'ncclCommGetAsyncError' : `${call} (ncclCommGetAsyncError)`, result);
    if (detail) error.message += ` — ${detail}`;
    error.message += '; the communicator was aborted';
    this.abortQuietly();
    throw error;
  }

  private timedOut(call: string, ms: number, what: string): CommunicatorTimeoutError {
    this.abortQuietly();
    return new CommunicatorTimeoutError(
      `${call}: ${what} did not complete within ${ms} ms; the communicator (rank ${this.rank} of ${this.count}) was aborted — a peer may have died`,
    );
  }

  /** Waits (blocking, 1 ms sleeps) until a non-blocking call settles; bounded by timeoutMs. */
  private settleSync(call: string): void {
    const deadline = performance.now() + this.timeoutMs;
    while (!this.stateSettled(call)) {
      if (performance.now() > deadline) throw this.timedOut(call, this.timeoutMs, 'a non-blocking NCCL call');
      Atomics.wait(sleeper, 0, 0, 1);
    }
  }

  /** Awaits (without blocking the event loop) until a non-blocking call settles. */
  private async settleAsync(call: string, timeoutMs: number, what: string): Promise<void> {
    const start = performance.now();
    let interval = 0;
    while (!this.stateSettled(call)) {
      if (performance.now() - start > timeoutMs) throw this.timedOut(call, timeoutMs, what);
      interval = Math.min(5, interval + 0.25);
      await new Promise((r) => setTimeout(r, interval));
    }
  }

  private abortQuietly(): void {
    try {
      this.abort();
    } catch {
      // the error that led here is the one to report
    }
  }
}
