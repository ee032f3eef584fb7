// The types of Communicator's arguments (src/distributed/communicator.ts re-exports them): types only,
// kept apart so that communicator.ts stays within the size limit with its reference docs.
import type { Device } from '../device';
import type { StreamLike } from '../stream';
import type { StoreLimits, TcpStore } from './store';

/** Element types of NCCL collectives. */
export type NcclDtype = 'i8' | 'u8' | 'i32' | 'u32' | 'i64' | 'u64' | 'f16' | 'bf16' | 'f32' | 'f64' | 'f8e4m3' | 'f8e5m2';

/** Reduction operators. */
export type ReduceOp = 'sum' | 'prod' | 'max' | 'min' | 'avg';

/** Options of every collective; {@link Communicator.allGather} takes just these. */
export interface CollectiveOptions {
  /** Element type (required: device buffers carry none). */
  dtype: NcclDtype;
  /** Elements (per rank, see each collective). Default: derived from the buffer sizes. */
  count?: number;
  /** Stream of the communicator's device to enqueue on (default: the legacy default stream). */
  stream?: StreamLike;
}
/** Options of {@link Communicator.allReduce} and {@link Communicator.reduceScatter}. */
export interface ReduceOptions extends CollectiveOptions {
  /** Reduction operator (default 'sum'). */
  op?: ReduceOp;
}
/** Options of {@link Communicator.broadcast}. */
export interface BroadcastOptions extends CollectiveOptions {
  /** Rank whose data is sent (default 0). */
  root?: number;
}

/** A 128-byte ncclUniqueId: any byte view or ArrayBuffer of 128 bytes, or those bytes as 256 hex digits. */
export type UniqueId = ArrayBufferView | ArrayBuffer | string;

/** Options of {@link Communicator.rendezvous}. */
export interface RendezvousOptions {
  /** This process's rank in [0, size). */
  rank: number;
  /** Number of ranks. */
  size: number;
  /** Rank 0's store, `host:port` (rank 0 listens there; IPv6 as `[addr]:port`). */
  address: string;
  /** Longest wait to meet (store connection, unique id, NCCL init), in ms (Infinity: no limit). Default 300000. */
  timeoutMs?: number;
  /** Default timeout of awaited collectives ({@link Communicator.synchronized}), in ms. Default 600000. */
  collectiveTimeoutMs?: number;
  /** The device of this rank. Default: $LOCAL_RANK when set, else the current device. */
  device?: Device | number;
  /** The shared store secret. Default: $CUDA_TS_STORE_TOKEN (cuda-ts-run sets it). */
  token?: string;
  /** An open store to meet through instead of opening one (it stays open when the communicator closes). */
  store?: TcpStore;
  /** Key prefix in the store, to hold several communicators in one store. Default 'cuda-ts/nccl'. */
  key?: string;
  /** Limits of the store rank 0 serves. */
  limits?: StoreLimits;
  /** Where rank 0's store listens (see openStore's listenHost). Default: $CUDA_TS_STORE_LISTEN, else the address's host. */
  listenHost?: string;
}

/** Options of {@link Communicator.synchronized} (and of the awaited collectives, on top of their own). */
export interface WaitOptions {
  /** The stream the collectives were enqueued on (default: the legacy default stream). */
  stream?: StreamLike;
  /** Abort the communicator and reject after this many ms (default: the communicator's `timeoutMs`). */
  timeoutMs?: number;
}
