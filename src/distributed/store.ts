// A small TCP key-value store for meeting other processes, like PyTorch's TCPStore: one process
// serves (StoreServer, store-server.ts), every process connects (TcpStore) and uses
// set/get/add/wait/check/delete and barriers. Nothing here touches CUDA.
//
// Trust boundary: anyone who can reach the port AND knows the shared token can read and write every
// key (the NCCL unique id travels through it). Both sides prove they know the token (HMAC-SHA256 over
// fresh nonces: the token itself never crosses the wire), but the traffic after that is not encrypted
// (anyone on the path reads the values, the NCCL unique id included, and could join the NCCL
// communicator with it): keep the port on a trusted network. The token must carry 128 bits or more
// (one recorded handshake lets anyone test guesses offline). Every frame is bounded (maxMessageBytes)
// and checked before it is buffered, so garbage, oversized frames or a wrong token close that one
// connection, never the server. The wire format is in store-wire.ts.
import type * as net from 'node:net';
import { longTimeout, type LongTimer } from '../long-timeout';
import {
  ANSWER_SLACK_MS,
  AUTH_BYTES,
  BUSY,
  FrameReader,
  KEEPALIVE_MS,
  NONCE_BYTES,
  Op,
  OTHER_RUN,
  PROTOCOL,
  StoreError,
  StoreTimeoutError,
  checkTimeout,
  crypto,
  encodeKey,
  frame,
  proof,
  runIdOf,
  storeToken,
  wireTimeout,
} from './store-wire';
import { DEFAULT_LIMITS, StoreServer, type StoreLimits } from './store-server';
import { RUN_ID_ENV, STORE_SERVED_ENV, STORE_TOKEN_ENV, parseAddress } from './rendezvous';
import { SEALED, type Sealed, checkSealed } from '../sealed';

// node:net loads when a store is made: importing cuda-ts does not load it.
const nodeNet = (): typeof net => require('node:net') as typeof net;

// The token's variable and the address parser live with the environment convention (src/distributed/
// rendezvous.ts: no CUDA, no support package, so cuda-ts-run's launcher imports them without koffi).
export { RUN_ID_ENV, STORE_SERVED_ENV, STORE_TOKEN_ENV, parseAddress, storeToken, StoreError, StoreTimeoutError, StoreServer, ANSWER_SLACK_MS };
export { tokenBits } from './rendezvous';
export type { StoreLimits, StoreServerOptions } from './store-server';

/** The environment variable that makes rank 0 listen elsewhere than MASTER_ADDR ('0.0.0.0' or '::': every interface). */
export const STORE_LISTEN_ENV = 'CUDA_TS_STORE_LISTEN';

/** Options of {@link TcpStore.connect}. */
export interface StoreConnectOptions {
  /** Server host name or address. */
  host: string;
  /** Server port. */
  port: number;
  /** The shared secret (default: $CUDA_TS_STORE_TOKEN). */
  token?: string;
  /**
   * How long to keep trying to connect (the server may start later), and the default timeout of every
   * request (set, get, add, check, delete, wait, barrier). Default 300000.
   */
  timeoutMs?: number;
  /** The run this process belongs to (default: $CUDA_TS_RUN_ID, else none); must match the server's. */
  runId?: string;
  /** Number of processes taking part, for barrier(). */
  size?: number;
  /** Largest value this client sends or accepts, in bytes. Default 1 MiB (as the server's default). */
  maxMessageBytes?: number;
}

interface Pending {
  /** The `TcpStore.method` that made the request (the server's refusals are prefixed with it). */
  call: string;
  resolve: (payload: Buffer) => void;
  reject: (e: Error) => void;
  timer?: LongTimer;
}

/** A request's own timeout option (default: the store's `timeoutMs`). */
export interface RequestOptions {
  /** Reject with StoreTimeoutError when no answer came within this many ms (+ ANSWER_SLACK_MS); Infinity: never. */
  timeoutMs?: number;
}

// The most a client turned away as busy waits before it tries again, in ms (plus 5).
const BUSY_RETRY_MS = 45;
// Connect errors worth another try within the timeout: nobody listens yet, the server is busy, or the
// connection was closed or reset before the handshake ended (crowded out by unauthenticated ones).
const RETRY_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'STORE_BUSY',
  'STORE_CLOSED',
]);

/** What one connect attempt needs. */
interface Attempt {
  host: string;
  port: number;
  token: string;
  runId: string;
  deadline: number;
  size: number | undefined;
  timeoutMs: number;
  maxMessageBytes: number;
}

/** The error for the server's refusal `why` during the handshake (busy ones are retried). */
function refusalError(host: string, port: number, why: string, runId: string): Error {
  if (why.startsWith(OTHER_RUN)) {
    const theirs = why.slice(OTHER_RUN.length).trim();
    return new StoreError(
      `TcpStore.connect: ${host}:${port} serves another run (run id ${theirs}), not this process's (${JSON.stringify(runId)}; ${RUN_ID_ENV}): another job holds that port with the same token. Give each job its own port and its own token`,
    );
  }
  return attemptError(`TcpStore.connect: the store refused: ${why}`, why.startsWith(BUSY) ? 'STORE_BUSY' : undefined);
}

/** A connect attempt's failure, with the code that says whether to try again. */
function attemptError(message: string, code?: string, timeout = false): Error {
  const e = timeout ? new StoreTimeoutError(message) : new StoreError(message);
  if (code) Object.assign(e, { code });
  return e;
}

function keyList(call: string, keys: unknown): readonly string[] {
  const list = typeof keys === 'string' ? [keys] : keys;
  if (!Array.isArray(list) || list.length === 0 || list.length > 0xffff) throw new TypeError(`${call}: keys must be a key or a non-empty array of keys`);
  return list as readonly string[];
}

function checkKey(call: string, key: unknown): string {
  if (typeof key !== 'string' || key.length === 0)
    throw new TypeError(`${call}: key must be a non-empty string, got ${typeof key === 'string' ? '""' : typeof key}`);
  if (Buffer.byteLength(key, 'utf8') > 0xffff) throw new RangeError(`${call}: key is longer than 65535 bytes`);
  return key;
}

/**
 * A client of a StoreServer. Requests may run concurrently; each resolves on its own answer.
 * @example
 * ```ts
 * import { StoreServer, TcpStore } from 'cuda-ts/objects';
 *
 * const token = process.env.CUDA_TS_STORE_TOKEN!; // the same secret in every process, ≥ 128 bits (openssl rand -hex 32)
 * const server = await StoreServer.listen({ port: 0, host: '127.0.0.1', token }); // one process serves; port 0: any free one
 * const store = await TcpStore.connect({ host: '127.0.0.1', port: server.port, token, size: 1 }); // every process connects
 * try {
 *   await store.set('id', new Uint8Array([1, 2, 3]));
 *   console.log(await store.get('id'), await store.add('step', 5)); // <Buffer 01 02 03> 5
 *   console.log(await store.check(['id', 'other'])); // false: not every key is set
 * } finally {
 *   await store.close();
 *   await server.close();
 * }
 * ```
 */
export class TcpStore {
  /** Number of processes taking part (barrier() needs it), when given to connect(). */
  readonly size: number | undefined;
  /** Default timeout of get, wait and barrier in ms. */
  readonly timeoutMs: number;
  /** The server this store runs, on the process that serves (see {@link openStore}). */
  server: StoreServer | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly barriers = new Map<string, number>();
  private closedWith: Error | undefined;
  private corked = false;

  private constructor(
    seal: Sealed,
    private readonly socket: net.Socket,
    reader: FrameReader,
    timeoutMs: number,
    size: number | undefined,
    private readonly maxMessageBytes: number,
  ) {
    checkSealed(seal, 'TcpStore', 'TcpStore.connect()');
    this.timeoutMs = timeoutMs;
    this.size = size;
    socket.on('data', (data: Buffer) => {
      try {
        for (const f of reader.push(data)) this.answer(f.op, f.id, f.payload);
      } catch (e) {
        this.fail(new StoreError(`store connection: ${(e as Error).message}`));
        socket.destroy();
      }
    });
    socket.on('error', (e) => this.fail(new StoreError(`store connection failed: ${e.message}`)));
    socket.on('close', () => this.fail(new StoreError('store connection closed')));
  }

  /**
   * Connects and authenticates, retrying refused, reset or crowded-out connections until `timeoutMs`
   * (the server may not be up yet, or busy). Rejects with StoreError on a wrong token, StoreTimeoutError
   * when nothing answers in time. `timeoutMs` may be Infinity.
   * @param options `host` and `port` of the server (required), `token` (the shared secret; default $CUDA_TS_STORE_TOKEN), `timeoutMs` (how long to keep
   * trying to connect, and every request's default timeout; default 300000), `runId` (default $CUDA_TS_RUN_ID; must match the server's), `size` (processes
   * taking part, for barrier()) and `maxMessageBytes` (default 1 MiB).
   */
  static async connect(options: StoreConnectOptions): Promise<TcpStore> {
    const call = 'TcpStore.connect';
    if (typeof options !== 'object' || options === null) throw new TypeError(`${call}: options with host and port are required`);
    const { host, port } = options;
    if (typeof host !== 'string' || host.length === 0) throw new TypeError(`${call}: host must be a non-empty string`);
    if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new RangeError(`${call}: port must be an integer in [1, 65535], got ${String(port)}`);
    const token = storeToken(options.token, call);
    const runId = runIdOf(options.runId, call);
    const timeoutMs = checkTimeout(call, options.timeoutMs ?? 300_000);
    if (options.size !== undefined && (!Number.isInteger(options.size) || options.size < 1))
      throw new RangeError(`${call}: size must be a positive integer, got ${String(options.size)}`);
    const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_LIMITS.maxMessageBytes;
    if (!Number.isSafeInteger(maxMessageBytes) || maxMessageBytes <= 0) throw new RangeError(`${call}: maxMessageBytes must be a positive integer`);
    const deadline = Date.now() + timeoutMs;
    let delay = 10;
    for (;;) {
      try {
        return await TcpStore.attempt({ host, port, token, runId, deadline, size: options.size, timeoutMs, maxMessageBytes });
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === undefined || !RETRY_CODES.has(code)) throw e;
        // jittered: crowded-out ranks do not come back together. A busy server is up and admits some
        // of every turn's newcomers by lot, so a rank it turned away tries again soon (within 50 ms);
        // nobody listening yet backs off to a second.
        const wait = code === 'STORE_BUSY' ? 5 + Math.random() * BUSY_RETRY_MS : delay / 2 + Math.random() * delay;
        if (Date.now() + wait > deadline)
          throw new StoreTimeoutError(`${call}: no store at ${host}:${port} within ${timeoutMs} ms (${code}: ${(e as Error).message})`);
        await new Promise((r) => setTimeout(r, wait));
        if (code !== 'STORE_BUSY') delay = Math.min(1000, delay * 2);
      }
    }
  }

  private static attempt(a: Attempt): Promise<TcpStore> {
    const { host, port, token, runId } = a;
    return new Promise((resolve, reject) => {
      const socket = nodeNet().connect({ host, port });
      socket.setNoDelay(true);
      socket.setKeepAlive(true, KEEPALIVE_MS);
      const reader = new FrameReader(Math.max(a.maxMessageBytes, AUTH_BYTES));
      const clientNonce = crypto().randomBytes(NONCE_BYTES);
      let serverNonce: Buffer | undefined;
      const timer = longTimeout(
        () => {
          socket.destroy();
          reject(attemptError(`TcpStore.connect: ${host}:${port} did not complete the handshake in time`, undefined, true));
        },
        Math.max(1, a.deadline - Date.now()),
      );
      const fail = (e: Error): void => {
        timer.cancel();
        socket.destroy();
        reject(e);
      };
      const onData = (data: Buffer): void => {
        try {
          for (const f of reader.push(data)) {
            if (f.op === Op.Challenge && !serverNonce && f.payload.length === NONCE_BYTES) {
              serverNonce = Buffer.from(f.payload);
              socket.write(
                frame(
                  Op.Auth,
                  0,
                  Buffer.concat([clientNonce, proof(token, 'client', serverNonce, clientNonce), proof(token, 'run', serverNonce, clientNonce, runId)]),
                ),
              );
            } else if (f.op === Op.Welcome && serverNonce) {
              if (f.payload.length !== 32 || !crypto().timingSafeEqual(f.payload, proof(token, 'server', serverNonce, clientNonce, runId))) {
                return fail(new StoreError(`TcpStore.connect: ${host}:${port} does not know the shared token`));
              }
              timer.cancel();
              socket.off('data', onData);
              socket.off('error', fail);
              socket.off('close', onClose);
              return resolve(new TcpStore(SEALED, socket, reader, a.timeoutMs, a.size, a.maxMessageBytes));
            } else if (f.op === Op.Error) {
              return fail(refusalError(host, port, f.payload.toString('utf8'), runId));
            } else {
              return fail(new StoreError(`TcpStore.connect: ${host}:${port} does not speak ${PROTOCOL}`));
            }
          }
        } catch (e) {
          fail(new StoreError(`TcpStore.connect: ${host}:${port}: ${(e as Error).message}`));
        }
      };
      const onClose = (): void => fail(attemptError(`TcpStore.connect: ${host}:${port} closed the connection during the handshake`, 'STORE_CLOSED'));
      socket.on('data', onData);
      socket.once('error', fail);
      socket.once('close', onClose);
    });
  }

  /**
   * Stores `value` (bytes, or a string stored as UTF-8) under `key`.
   * @param key The key: a non-empty string of at most 65535 UTF-8 bytes.
   * @param value The value: bytes, or a string stored as UTF-8; at most maxMessageBytes with its header.
   * @param options `timeoutMs`: reject with StoreTimeoutError when no answer came within this many ms (+ ANSWER_SLACK_MS); default the store's `timeoutMs`;
   * Infinity: never.
   */
  async set(key: string, value: string | Uint8Array, options: RequestOptions = {}): Promise<void> {
    const call = 'TcpStore.set';
    checkKey(call, key);
    let v: Buffer;
    if (typeof value === 'string') v = Buffer.from(value, 'utf8');
    else if (value instanceof Uint8Array) v = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    else throw new TypeError(`${call}: value must be a string or a Uint8Array`);
    const t = this.timeoutOf(call, options);
    const k = encodeKey(key);
    if (k.length + v.length > this.maxMessageBytes)
      throw new RangeError(`${call}: a ${v.length}-byte value exceeds the message limit of ${this.maxMessageBytes} bytes`);
    await this.send(call, Op.Set, Buffer.concat([k, v]), t);
  }

  /**
   * The value of `key`, waiting until some process sets it (StoreTimeoutError after `timeoutMs`).
   * @param key The key to read; the call waits until some process sets it.
   * @param options `timeoutMs`: reject with StoreTimeoutError when no answer came within this many ms (+ ANSWER_SLACK_MS); default the store's `timeoutMs`;
   * Infinity: never.
   */
  async get(key: string, options: RequestOptions = {}): Promise<Buffer> {
    const call = 'TcpStore.get';
    checkKey(call, key);
    const t = this.timeoutOf(call, options);
    const head = Buffer.allocUnsafe(4);
    head.writeUInt32BE(wireTimeout(t));
    return this.send(call, Op.Get, Buffer.concat([head, encodeKey(key)]), t);
  }

  /**
   * Adds `delta` to the integer held by `key` (0 when unset) and returns the new value.
   * @param key The key: a non-empty string of at most 65535 UTF-8 bytes.
   * @param delta What to add to the integer the key holds (0 when unset): a safe integer or a bigint; default 1.
   * @param options `timeoutMs`: reject with StoreTimeoutError when no answer came within this many ms (+ ANSWER_SLACK_MS); default the store's `timeoutMs`;
   * Infinity: never.
   */
  async add(key: string, delta: number | bigint = 1, options: RequestOptions = {}): Promise<number> {
    const call = 'TcpStore.add';
    checkKey(call, key);
    if (!(typeof delta === 'bigint' || Number.isSafeInteger(delta)))
      throw new TypeError(`${call}: delta must be a safe integer or a bigint, got ${String(delta)}`);
    const t = this.timeoutOf(call, options);
    const d = Buffer.allocUnsafe(8);
    d.writeBigInt64BE(BigInt.asIntN(64, BigInt(delta)));
    const out = await this.send(call, Op.Add, Buffer.concat([encodeKey(key), d]), t);
    return Number(out.readBigInt64BE(0));
  }

  /**
   * Resolves once every key is set (StoreTimeoutError after `timeoutMs`).
   * @param keys One key, or a non-empty array of keys (at most 65535).
   * @param options `timeoutMs`: reject with StoreTimeoutError when no answer came within this many ms (+ ANSWER_SLACK_MS); default the store's `timeoutMs`;
   * Infinity: never.
   */
  async wait(keys: string | readonly string[], options: RequestOptions = {}): Promise<void> {
    const call = 'TcpStore.wait';
    const list = keyList(call, keys);
    const t = this.timeoutOf(call, options);
    const head = Buffer.allocUnsafe(6);
    head.writeUInt32BE(wireTimeout(t), 0);
    head.writeUInt16BE(list.length, 4);
    await this.send(call, Op.Wait, Buffer.concat([head, ...list.map((k) => encodeKey(checkKey(call, k)))]), t);
  }

  /**
   * True when every key is set (does not wait).
   * @param keys One key, or a non-empty array of keys (at most 65535).
   * @param options `timeoutMs`: reject with StoreTimeoutError when no answer came within this many ms (+ ANSWER_SLACK_MS); default the store's `timeoutMs`;
   * Infinity: never.
   */
  async check(keys: string | readonly string[], options: RequestOptions = {}): Promise<boolean> {
    const call = 'TcpStore.check';
    const list = keyList(call, keys);
    const t = this.timeoutOf(call, options);
    const head = Buffer.allocUnsafe(2);
    head.writeUInt16BE(list.length);
    const out = await this.send(call, Op.Check, Buffer.concat([head, ...list.map((k) => encodeKey(checkKey(call, k)))]), t);
    return out[0] === 1;
  }

  /**
   * Deletes `key`; true when it existed.
   * @param key The key: a non-empty string of at most 65535 UTF-8 bytes.
   * @param options `timeoutMs`: reject with StoreTimeoutError when no answer came within this many ms (+ ANSWER_SLACK_MS); default the store's `timeoutMs`;
   * Infinity: never.
   */
  async delete(key: string, options: RequestOptions = {}): Promise<boolean> {
    const call = 'TcpStore.delete';
    const k = encodeKey(checkKey(call, key));
    const out = await this.send(call, Op.Delete, k, this.timeoutOf(call, options));
    return out[0] === 1;
  }

  /**
   * Resolves once all `size` processes called barrier(name) the same number of times (each call is
   * its own generation, so the same name can be reused). StoreTimeoutError after `timeoutMs` (+ the
   * slack): the arrival and the wait for the others run under one deadline. The last to arrive deletes
   * what earlier generations left, so a barrier per step never fills the store.
   * @param name The barrier's name (default 'default'); calling it again with the same name is the next generation.
   * @param options `timeoutMs` (one deadline for the arrival and the wait; default the store's) and `size` (how many processes meet; default the store's
   * size).
   */
  async barrier(name = 'default', options: { timeoutMs?: number; size?: number } = {}): Promise<void> {
    const call = 'TcpStore.barrier';
    const size = options.size ?? this.size;
    if (size === undefined || !Number.isInteger(size) || size < 1)
      throw new TypeError(`${call}: the number of processes is unknown: pass { size } here or to connect()`);
    if (typeof name !== 'string' || name.length === 0) throw new TypeError(`${call}: name must be a non-empty string`);
    const t = this.timeoutOf(call, options);
    const deadline = performance.now() + t;
    const left = (): number => (t === Infinity ? Infinity : Math.max(0, Math.round(deadline - performance.now())));
    const gen = (this.barriers.get(name) ?? 0) + 1;
    this.barriers.set(name, gen);
    const base = `__barrier/${name}/${gen}`;
    // Arrive and start waiting in one write (one round trip for all but the last to arrive); both run
    // under the deadline, so a silent server fails the barrier in time even before the arrival is answered.
    const arriving = this.add(`${base}/count`, 1, { timeoutMs: t });
    const released = this.wait(`${base}/done`, { timeoutMs: t });
    released.catch(() => undefined); // awaited below; this only keeps an early failure from going unhandled
    let arrived: number | undefined;
    try {
      arrived = await arriving;
      if (arrived === size) {
        // Everyone arrived here, so everyone left the previous generation: its key is nobody's any more.
        const previous = gen > 1 ? this.delete(`__barrier/${name}/${gen - 1}/done`, { timeoutMs: left() }) : undefined;
        await Promise.all([this.set(`${base}/done`, '1', { timeoutMs: left() }), this.delete(`${base}/count`, { timeoutMs: left() }), previous]);
      }
      await released;
    } catch (e) {
      if (!(e instanceof StoreTimeoutError)) throw e;
      const seen = arrived === undefined ? 'its own arrival was not answered' : `${arrived} of ${size} processes arrived (at least)`;
      throw new StoreTimeoutError(`${call}(${JSON.stringify(name)}): ${seen} before the timeout of ${t} ms`);
    }
  }

  /** Closes the connection (and the server, on the process that serves). Pending requests reject. */
  async close(): Promise<void> {
    this.fail(new StoreError('store closed'));
    this.socket.destroy();
    const server = this.server;
    this.server = undefined;
    await server?.close();
  }

  /** The request's timeout: its option, else the store's. */
  private timeoutOf(call: string, options: RequestOptions): number {
    if (typeof options !== 'object' || options === null) throw new TypeError(`${call}: options must be an object`);
    return checkTimeout(call, options.timeoutMs ?? this.timeoutMs);
  }

  /**
   * Sends one request; it rejects at the latest `timeoutMs` + ANSWER_SLACK_MS after it was made (a wait
   * is answered by the server itself at `timeoutMs`; the slack covers a server that went silent). A
   * late answer is dropped by answer().
   */
  private send(call: string, op: Op, payload: Buffer, timeoutMs: number): Promise<Buffer> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.nextId;
    this.nextId = (this.nextId % 0xfffffffe) + 1;
    return new Promise<Buffer>((resolve, reject) => {
      const p: Pending = { call, resolve, reject };
      if (timeoutMs !== Infinity) {
        p.timer = longTimeout(() => {
          this.pending.delete(id);
          reject(
            new StoreTimeoutError(
              `${call}: no answer from the store within ${timeoutMs} ms + ${ANSWER_SLACK_MS} ms: the serving process is stopped, hung or unreachable`,
            ),
          );
        }, timeoutMs + ANSWER_SLACK_MS);
      }
      this.pending.set(id, p);
      if (!this.corked) {
        // requests made in one tick leave in one write
        this.corked = true;
        this.socket.cork();
        process.nextTick(() => {
          this.corked = false;
          this.socket.uncork();
        });
      }
      this.socket.write(frame(op, id, payload));
    });
  }

  private answer(op: number, id: number, payload: Buffer): void {
    const p = this.pending.get(id);
    if (!p) {
      // id 0: the server refuses the whole connection. Any other id: a late answer to a request that
      // already timed out here; dropped, it concerns nobody.
      if (op === Op.Error && id === 0) this.fail(new StoreError(`the store closed the connection: ${payload.toString('utf8')}`));
      return;
    }
    this.pending.delete(id);
    p.timer?.cancel();
    if (op === Op.Ok) return p.resolve(Buffer.from(payload));
    const message = `${p.call}: ${payload.toString('utf8')}`;
    p.reject(payload.subarray(0, 8).toString('latin1') === 'timeout:' ? new StoreTimeoutError(message) : new StoreError(message));
  }

  private fail(e: Error): void {
    this.closedWith ??= e;
    for (const p of this.pending.values()) {
      p.timer?.cancel();
      p.reject(e);
    }
    this.pending.clear();
  }
}

/** Options of {@link openStore}. */
export interface OpenStoreOptions extends StoreLimits {
  /** This process's rank; rank 0 serves. */
  rank: number;
  /** Number of processes. */
  size: number;
  /** The server's `host:port` (IPv6 as `[addr]:port`). */
  address: string;
  /** Connect timeout and default timeout of every request. Default 300000 ms. */
  timeoutMs?: number;
  /** The shared secret (default: $CUDA_TS_STORE_TOKEN). */
  token?: string;
  /** The run's id, the same in every process (default: $CUDA_TS_RUN_ID, else none; cuda-ts-run sets it). */
  runId?: string;
  /**
   * Where rank 0 listens. Default: $CUDA_TS_STORE_LISTEN, else the address's host itself (an address:
   * that interface only; a name: every address it resolves to, IPv4 and IPv6). '0.0.0.0' or '::':
   * every interface.
   */
  listenHost?: string;
}

/** True when the launcher already serves the store at `address` (rank 0 then connects like the others). */
function servedByLauncher(address: string): boolean {
  return process.env[STORE_SERVED_ENV] === address;
}

/** Where rank 0 listens: the option, else $CUDA_TS_STORE_LISTEN, else the host the others connect to. */
function listenHostOf(call: string, option: unknown, host: string): string {
  const v = option ?? process.env[STORE_LISTEN_ENV] ?? host;
  if (typeof v !== 'string' || v.length === 0) throw new TypeError(`${call}: listenHost (or ${STORE_LISTEN_ENV}) must be a non-empty address or name`);
  return v;
}

/**
 * The store of a group of processes: rank 0 serves at `address` and connects to itself, the others
 * connect (retrying until `timeoutMs`). Closing rank 0's store stops the server.
 * @example
 * ```ts
 * import { openStore } from 'cuda-ts/objects';
 *
 * // in each of 2 processes, with RANK set and CUDA_TS_STORE_TOKEN the same secret of ≥ 128 bits in both
 * const rank = Number(process.env.RANK);
 * const store = await openStore({ rank, size: 2, address: '127.0.0.1:29500', timeoutMs: 60_000 });
 * try {
 *   if (rank === 0) await store.set('config', JSON.stringify({ lr: 0.1 }));
 *   const config = JSON.parse((await store.get('config')).toString()); // waits until rank 0 set it
 *   await store.barrier(); // every rank got here
 *   console.log(rank, config.lr);
 * } finally {
 *   await store.close(); // rank 0's close stops the server
 * }
 * ```
 * @param options `rank` (rank 0 serves) and `size` (processes taking part), `address` (the server's host:port; IPv6 as [addr]:port), `timeoutMs` (connect
 * timeout and every request's default; default 300000), `token` (default $CUDA_TS_STORE_TOKEN), `runId` (default $CUDA_TS_RUN_ID), `listenHost` (where rank 0
 * listens; default $CUDA_TS_STORE_LISTEN, else the address's host) and the server's limits (StoreLimits).
 */
export async function openStore(options: OpenStoreOptions): Promise<TcpStore> {
  const call = 'openStore';
  if (typeof options !== 'object' || options === null) throw new TypeError(`${call}: options { rank, size, address } are required`);
  const { rank, size } = options;
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`${call}: size must be a positive integer, got ${String(size)}`);
  if (!Number.isInteger(rank) || rank < 0 || rank >= size) throw new RangeError(`${call}: rank must be an integer in [0, ${size}), got ${String(rank)}`);
  const { host, port } = parseAddress(options.address, call);
  const token = storeToken(options.token, call);
  const runId = runIdOf(options.runId, call);
  const listenHost = listenHostOf(call, options.listenHost, host);
  let server: StoreServer | undefined;
  if (rank === 0 && !servedByLauncher(options.address)) {
    // every rank holds one connection: the limit grows with the world (a few spare for tools)
    const maxConnections = options.maxConnections ?? Math.max(DEFAULT_LIMITS.maxConnections, size + 64);
    server = await StoreServer.listen({ ...options, maxConnections, port, host: listenHost, token, runId });
  }
  try {
    const store = await TcpStore.connect({ host, port, token, runId, timeoutMs: options.timeoutMs, size, maxMessageBytes: options.maxMessageBytes });
    store.server = server;
    return store;
  } catch (e) {
    await server?.close();
    throw e;
  }
}
