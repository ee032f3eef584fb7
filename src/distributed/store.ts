// A small TCP key-value store for meeting other processes, like PyTorch's TCPStore: one process
// serves (StoreServer), every process connects (TcpStore) and uses set/get/add/wait/check/delete and
// barriers. Nothing here touches CUDA.
//
// Trust boundary: anyone who can reach the port AND knows the shared token can read and write every
// key (the NCCL unique id travels through it). Both sides prove they know the token (HMAC-SHA256 over
// fresh nonces: the token itself never crosses the wire), but the traffic after that is not encrypted:
// keep the port on a trusted network. Every frame is bounded (maxMessageBytes) and checked before it is
// buffered, so garbage, oversized frames or a wrong token close that one connection, never the server.
//
// Wire format: frames of [u32 BE body length][body]; body = [u8 op][u32 BE request id][payload].
import type * as Crypto from 'node:crypto';
import type * as net from 'node:net';
import { OBJECTS_ERROR, ObjectsError, whereOf } from '../errors';
import { STORE_TOKEN_ENV, parseAddress } from './rendezvous';

// node:crypto and node:net load when a store or server is made: importing cuda-ts loads neither.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const crypto = (): typeof Crypto => require('node:crypto') as typeof Crypto;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nodeNet = (): typeof net => require('node:net') as typeof net;

// The token's variable and the address parser live with the environment convention (src/distributed/
// rendezvous.ts: no CUDA, no support package, so cuda-ts-run's launcher imports them without koffi).
export { STORE_TOKEN_ENV, parseAddress };

const PROTOCOL = 'cuda-ts-store/1';
const NONCE_BYTES = 32;
const HEADER = 5; // op + request id

const enum Op {
  Challenge = 0x01, // server → client: server nonce
  Auth = 0x02, // client → server: client nonce + proof
  Welcome = 0x03, // server → client: server proof
  Set = 0x10,
  Get = 0x11,
  Add = 0x12,
  Check = 0x13,
  Delete = 0x14,
  Wait = 0x15,
  Ok = 0x80,
  Error = 0x81,
}

/** Limits a StoreServer enforces on every connection. */
export interface StoreLimits {
  /** Largest frame body in bytes (a value plus ~70 bytes of header). Default 1 MiB. */
  maxMessageBytes?: number;
  /** Most keys held. Default 65536. */
  maxKeys?: number;
  /** Most bytes of keys and values held in all. Default 256 MiB. */
  maxStoredBytes?: number;
  /** Most connections at once. Default 1024. */
  maxConnections?: number;
  /** Most blocked get/wait requests per connection. Default 1024. */
  maxWaitersPerConnection?: number;
  /** A client must authenticate within this many ms of connecting. Default 10000. */
  handshakeTimeoutMs?: number;
}

const DEFAULT_LIMITS: Required<StoreLimits> = {
  maxMessageBytes: 1 << 20,
  maxKeys: 65536,
  maxStoredBytes: 256 << 20,
  maxConnections: 1024,
  maxWaitersPerConnection: 1024,
  handshakeTimeoutMs: 10_000,
};

/**
 * A store request failed: the server refused it, the connection closed, or it timed out. An
 * ObjectsError named `StoreError`; the message starts with the `TcpStore.method` (or the store side)
 * that failed.
 */
export class StoreError extends ObjectsError {
  /** `where` defaults to the `Class.method` the message starts with, else `TcpStore`. */
  constructor(message: string, where = whereOf(message, 'TcpStore')) {
    super(where, new.target === StoreTimeoutError ? OBJECTS_ERROR.timeout : OBJECTS_ERROR.store, message);
  }
}
/** A store request (get, wait, barrier, connect) did not complete within its timeout. */
export class StoreTimeoutError extends StoreError {}

/** The token from `token`, else from $CUDA_TS_STORE_TOKEN; a TypeError naming `call` when neither is set. */
export function storeToken(token: unknown, call: string): string {
  const t = token ?? process.env[STORE_TOKEN_ENV];
  if (typeof t !== 'string' || t.length === 0) {
    throw new TypeError(`${call}: a shared token is required: pass { token } or set ${STORE_TOKEN_ENV} to the same secret in every process (cuda-ts-run sets it)`);
  }
  if (t.length > 4096) throw new RangeError(`${call}: the token is ${t.length} characters; at most 4096`);
  return t;
}

function proof(token: string, role: 'client' | 'server', a: Buffer, b: Buffer): Buffer {
  return crypto().createHmac('sha256', token).update(`${PROTOCOL}/${role}`).update(a).update(b).digest();
}

function frame(op: Op, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const out = Buffer.allocUnsafe(4 + HEADER + payload.length);
  out.writeUInt32BE(HEADER + payload.length, 0);
  out.writeUInt8(op, 4);
  out.writeUInt32BE(id >>> 0, 5);
  payload.copy(out, 9);
  return out;
}

/** Splits a byte stream into frames; refuses a frame longer than `max` as soon as its length is read. */
class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  constructor(private readonly max: number) {}

  /** Appends `data`; returns the complete frames (op, id, payload) or throws a StoreError. */
  push(data: Buffer): { op: number; id: number; payload: Buffer }[] {
    this.chunks.push(data);
    this.buffered += data.length;
    const frames: { op: number; id: number; payload: Buffer }[] = [];
    for (;;) {
      if (this.buffered < 4) break;
      const head = this.peek(4);
      const len = head.readUInt32BE(0);
      if (len < HEADER) throw new StoreError(`malformed frame: body of ${len} bytes`);
      if (len > this.max + HEADER) throw new StoreError(`message of ${len} bytes exceeds the limit of ${this.max} bytes`);
      if (this.buffered < 4 + len) break;
      const whole = this.take(4 + len);
      frames.push({ op: whole.readUInt8(4), id: whole.readUInt32BE(5), payload: whole.subarray(9) });
    }
    return frames;
  }

  private peek(n: number): Buffer {
    if (this.chunks[0].length >= n) return this.chunks[0];
    const all = Buffer.concat(this.chunks);
    this.chunks = [all];
    return all;
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length ? [rest] : [];
    this.buffered = rest.length;
    return out;
  }
}

// Payload fields: a key is [u16 BE length][utf8]; the value is the rest of the payload.
function encodeKey(key: string): Buffer {
  const k = Buffer.from(key, 'utf8');
  const out = Buffer.allocUnsafe(2 + k.length);
  out.writeUInt16BE(k.length, 0);
  k.copy(out, 2);
  return out;
}

class PayloadReader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}
  u8(): number {
    this.need(1);
    return this.buf.readUInt8(this.at++);
  }
  u16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.at);
    this.at += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.at);
    this.at += 4;
    return v;
  }
  i64(): bigint {
    this.need(8);
    const v = this.buf.readBigInt64BE(this.at);
    this.at += 8;
    return v;
  }
  key(): string {
    const n = this.u16();
    if (n === 0) throw new StoreError('malformed request: empty key');
    this.need(n);
    const k = this.buf.toString('utf8', this.at, this.at + n);
    this.at += n;
    return k;
  }
  rest(): Buffer {
    const out = this.buf.subarray(this.at);
    this.at = this.buf.length;
    return out;
  }
  end(): void {
    if (this.at !== this.buf.length) throw new StoreError('malformed request: trailing bytes');
  }
  private need(n: number): void {
    if (this.at + n > this.buf.length) throw new StoreError('malformed request: truncated');
  }
}

interface Waiter {
  keys: string[];
  conn: ServerConnection;
  done: () => void;
  timer: NodeJS.Timeout;
}

interface ServerConnection {
  socket: net.Socket;
  waiters: Set<Waiter>;
}

/** Options of {@link StoreServer.listen}. */
export interface StoreServerOptions extends StoreLimits {
  /** Port to listen on (0: any free port; read it from `server.port`). */
  port: number;
  /** Address to listen on. Default '0.0.0.0' (every interface). */
  host?: string;
  /** The shared secret (default: $CUDA_TS_STORE_TOKEN). */
  token?: string;
}

/**
 * The serving side of the store: holds the keys, answers authenticated clients. Survives any input a
 * client sends (a bad connection is closed, counted in `refused`). close() ends every connection.
 */
export class StoreServer {
  /** The port it listens on. */
  readonly port: number;
  /** The address it listens on. */
  readonly host: string;
  /** Connections closed for bad input, a wrong token or a handshake timeout. */
  refused = 0;
  /** Why the last connection was refused (for diagnostics). */
  lastRefusal: string | undefined;
  private readonly data = new Map<string, Buffer>();
  private stored = 0;
  private readonly waiters = new Set<Waiter>();
  private readonly connections = new Set<ServerConnection>();

  private constructor(private readonly server: net.Server, private readonly token: string, private readonly limits: Required<StoreLimits>, port: number, host: string) {
    this.port = port;
    this.host = host;
  }

  /** Starts serving; resolves once listening. */
  static listen(options: StoreServerOptions): Promise<StoreServer> {
    const call = 'StoreServer.listen';
    if (typeof options !== 'object' || options === null) throw new TypeError(`${call}: options with a port are required`);
    const { port } = options;
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`${call}: port must be an integer in [0, 65535], got ${String(port)}`);
    const token = storeToken(options.token, call);
    const limits = { ...DEFAULT_LIMITS };
    for (const k of Object.keys(DEFAULT_LIMITS) as (keyof StoreLimits)[]) {
      const v = options[k];
      if (v === undefined) continue;
      if (!Number.isSafeInteger(v) || v <= 0) throw new RangeError(`${call}: ${k} must be a positive integer, got ${String(v)}`);
      limits[k] = v;
    }
    const host = options.host ?? '0.0.0.0';
    return new Promise((resolve, reject) => {
      const server = nodeNet().createServer();
      server.maxConnections = limits.maxConnections;
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        const addr = server.address() as net.AddressInfo;
        const s = new StoreServer(server, token, limits, addr.port, host);
        server.on('connection', (socket) => s.accept(socket));
        server.on('error', () => undefined); // errors after listening concern single connections
        resolve(s);
      });
    });
  }

  /** Number of keys held. */
  get size(): number {
    return this.data.size;
  }

  /** Stops listening and closes every connection (blocked requests fail on the clients). */
  close(): Promise<void> {
    for (const w of this.waiters) clearTimeout(w.timer);
    this.waiters.clear();
    // end(), not destroy(): answers already written (the last barrier's, typically: the serving rank
    // leaves the barrier and closes while the others' replies are in flight) still reach their clients.
    for (const c of this.connections) {
      c.socket.end();
      setTimeout(() => c.socket.destroy(), 2000).unref();
    }
    this.connections.clear();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private refuse(conn: ServerConnection, why: string): void {
    this.refused++;
    this.lastRefusal = why;
    if (!conn.socket.destroyed) conn.socket.end(frame(Op.Error, 0, Buffer.from(why, 'utf8')));
    conn.socket.destroy();
  }

  private accept(socket: net.Socket): void {
    const conn: ServerConnection = { socket, waiters: new Set() };
    this.connections.add(conn);
    socket.setNoDelay(true);
    const reader = new FrameReader(this.limits.maxMessageBytes);
    const nonce = crypto().randomBytes(NONCE_BYTES);
    let authed = false;
    const handshake = setTimeout(() => this.refuse(conn, 'no authentication within the handshake timeout'), this.limits.handshakeTimeoutMs);
    handshake.unref();
    socket.on('error', () => undefined); // 'close' follows
    socket.on('close', () => {
      clearTimeout(handshake);
      for (const w of conn.waiters) {
        clearTimeout(w.timer);
        this.waiters.delete(w);
      }
      conn.waiters.clear();
      this.connections.delete(conn);
    });
    socket.write(frame(Op.Challenge, 0, nonce));
    socket.on('data', (data: Buffer) => {
      if (socket.destroyed) return;
      try {
        for (const f of reader.push(data)) {
          if (!authed) {
            if (f.op !== Op.Auth || f.payload.length !== 2 * NONCE_BYTES) throw new StoreError('expected authentication');
            const clientNonce = f.payload.subarray(0, NONCE_BYTES);
            const want = proof(this.token, 'client', nonce, clientNonce);
            if (!crypto().timingSafeEqual(want, f.payload.subarray(NONCE_BYTES))) throw new StoreError('authentication failed: wrong token');
            authed = true;
            clearTimeout(handshake);
            socket.write(frame(Op.Welcome, 0, proof(this.token, 'server', nonce, clientNonce)));
            continue;
          }
          this.request(conn, f.op, f.id, f.payload);
        }
      } catch (e) {
        this.refuse(conn, e instanceof StoreError ? e.message : `internal error: ${String(e)}`);
      }
    });
  }

  private reply(conn: ServerConnection, id: number, payload?: Buffer): void {
    if (!conn.socket.destroyed) conn.socket.write(frame(Op.Ok, id, payload));
  }

  private replyError(conn: ServerConnection, id: number, message: string): void {
    if (!conn.socket.destroyed) conn.socket.write(frame(Op.Error, id, Buffer.from(message, 'utf8')));
  }

  /** Handles one authenticated request; malformed input throws (and closes the connection). */
  private request(conn: ServerConnection, op: number, id: number, payload: Buffer): void {
    const r = new PayloadReader(payload);
    switch (op) {
      case Op.Set: {
        const key = r.key();
        const value = Buffer.from(r.rest()); // own copy: the frame's buffer is reused
        const err = this.put(key, value);
        if (err) return this.replyError(conn, id, err);
        return this.reply(conn, id);
      }
      case Op.Add: {
        const key = r.key();
        const delta = r.i64();
        r.end();
        const old = this.data.get(key);
        let now: bigint;
        try {
          now = (old === undefined ? 0n : BigInt(old.toString('utf8'))) + delta;
        } catch {
          return this.replyError(conn, id, `add: key ${JSON.stringify(key)} does not hold an integer`);
        }
        const err = this.put(key, Buffer.from(now.toString(), 'utf8'));
        if (err) return this.replyError(conn, id, err);
        const out = Buffer.allocUnsafe(8);
        out.writeBigInt64BE(BigInt.asIntN(64, now));
        return this.reply(conn, id, out);
      }
      case Op.Get:
      case Op.Wait: {
        const timeoutMs = r.u32();
        const keys: string[] = [];
        const n = op === Op.Get ? 1 : r.u16();
        for (let i = 0; i < n; i++) keys.push(r.key());
        r.end();
        const answer = (): void => (op === Op.Get ? this.reply(conn, id, this.data.get(keys[0])) : this.reply(conn, id));
        if (keys.every((k) => this.data.has(k))) return answer();
        if (conn.waiters.size >= this.limits.maxWaitersPerConnection) return this.replyError(conn, id, `too many blocked requests on one connection (${this.limits.maxWaitersPerConnection})`);
        const w: Waiter = {
          keys,
          conn,
          done: answer,
          timer: setTimeout(() => {
            this.waiters.delete(w);
            conn.waiters.delete(w);
            this.replyError(conn, id, `timeout: ${keys.filter((k) => !this.data.has(k)).map((k) => JSON.stringify(k)).join(', ')} not set within ${timeoutMs} ms`);
          }, timeoutMs),
        };
        w.timer.unref();
        this.waiters.add(w);
        conn.waiters.add(w);
        return;
      }
      case Op.Check: {
        const n = r.u16();
        let all = true;
        for (let i = 0; i < n; i++) all = this.data.has(r.key()) && all;
        r.end();
        return this.reply(conn, id, Buffer.from([all ? 1 : 0]));
      }
      case Op.Delete: {
        const key = r.key();
        r.end();
        const old = this.data.get(key);
        if (old) {
          this.stored -= old.length + key.length;
          this.data.delete(key);
        }
        return this.reply(conn, id, Buffer.from([old ? 1 : 0]));
      }
      default:
        throw new StoreError(`unknown request 0x${op.toString(16)}`);
    }
  }

  /** Stores `value` under `key` and wakes the waiters it completes; an error message when over a limit. */
  private put(key: string, value: Buffer): string | undefined {
    const old = this.data.get(key);
    const delta = value.length - (old ? old.length : -key.length);
    if (!old && this.data.size >= this.limits.maxKeys) return `the store holds its limit of ${this.limits.maxKeys} keys`;
    if (this.stored + delta > this.limits.maxStoredBytes) return `the store would exceed its limit of ${this.limits.maxStoredBytes} bytes`;
    this.data.set(key, value);
    this.stored += delta;
    for (const w of this.waiters) {
      if (!w.keys.includes(key) || !w.keys.every((k) => this.data.has(k))) continue;
      clearTimeout(w.timer);
      this.waiters.delete(w);
      w.conn.waiters.delete(w);
      w.done();
    }
    return undefined;
  }
}

/** Options of {@link TcpStore.connect}. */
export interface StoreConnectOptions {
  /** Server host name or address. */
  host: string;
  /** Server port. */
  port: number;
  /** The shared secret (default: $CUDA_TS_STORE_TOKEN). */
  token?: string;
  /** How long to keep trying to connect (the server may start later), and the default timeout of get/wait/barrier. Default 300000. */
  timeoutMs?: number;
  /** Number of processes taking part, for barrier(). */
  size?: number;
  /** Largest value this client sends or accepts, in bytes. Default 1 MiB (as the server's default). */
  maxMessageBytes?: number;
}

interface Pending {
  resolve: (payload: Buffer) => void;
  reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
}

function checkTimeout(call: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`${call}: timeoutMs must be an integer in [0, 2^32), got ${String(v)}`);
  return v;
}

function checkKey(call: string, key: unknown): string {
  if (typeof key !== 'string' || key.length === 0) throw new TypeError(`${call}: key must be a non-empty string, got ${typeof key === 'string' ? '""' : typeof key}`);
  if (Buffer.byteLength(key, 'utf8') > 0xffff) throw new RangeError(`${call}: key is longer than 65535 bytes`);
  return key;
}

/** A client of a StoreServer. Requests may run concurrently; each resolves on its own answer. */
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

  private constructor(private readonly socket: net.Socket, reader: FrameReader, timeoutMs: number, size: number | undefined, private readonly maxMessageBytes: number) {
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
   * Connects and authenticates, retrying refused connections until `timeoutMs` (the server may not be
   * up yet). Rejects with StoreError on a wrong token, StoreTimeoutError when nothing answers in time.
   */
  static async connect(options: StoreConnectOptions): Promise<TcpStore> {
    const call = 'TcpStore.connect';
    if (typeof options !== 'object' || options === null) throw new TypeError(`${call}: options with host and port are required`);
    const { host, port } = options;
    if (typeof host !== 'string' || host.length === 0) throw new TypeError(`${call}: host must be a non-empty string`);
    if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new RangeError(`${call}: port must be an integer in [1, 65535], got ${String(port)}`);
    const token = storeToken(options.token, call);
    const timeoutMs = checkTimeout(call, options.timeoutMs ?? 300_000);
    if (options.size !== undefined && (!Number.isInteger(options.size) || options.size < 1)) throw new RangeError(`${call}: size must be a positive integer, got ${String(options.size)}`);
    const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_LIMITS.maxMessageBytes;
    if (!Number.isSafeInteger(maxMessageBytes) || maxMessageBytes <= 0) throw new RangeError(`${call}: maxMessageBytes must be a positive integer`);
    const deadline = Date.now() + timeoutMs;
    let delay = 10;
    for (;;) {
      try {
        return await TcpStore.attempt(host, port, token, deadline, options.size, timeoutMs, maxMessageBytes);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        const retry = code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EHOSTUNREACH' || code === 'ENOTFOUND' || code === 'EAI_AGAIN';
        if (!retry) throw e;
        if (Date.now() + delay > deadline) throw new StoreTimeoutError(`${call}: no store at ${host}:${port} within ${timeoutMs} ms (${code})`);
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(1000, delay * 2);
      }
    }
  }

  private static attempt(host: string, port: number, token: string, deadline: number, size: number | undefined, timeoutMs: number, maxMessageBytes: number): Promise<TcpStore> {
    return new Promise((resolve, reject) => {
      const socket = nodeNet().connect({ host, port });
      socket.setNoDelay(true);
      const reader = new FrameReader(Math.max(maxMessageBytes, 2 * NONCE_BYTES));
      const clientNonce = crypto().randomBytes(NONCE_BYTES);
      let serverNonce: Buffer | undefined;
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new StoreTimeoutError(`TcpStore.connect: ${host}:${port} did not complete the handshake in time`));
      }, Math.max(1, deadline - Date.now()));
      const fail = (e: Error): void => {
        clearTimeout(timer);
        socket.destroy();
        reject(e);
      };
      const onData = (data: Buffer): void => {
        try {
          for (const f of reader.push(data)) {
            if (f.op === Op.Challenge && !serverNonce && f.payload.length === NONCE_BYTES) {
              serverNonce = Buffer.from(f.payload);
              socket.write(frame(Op.Auth, 0, Buffer.concat([clientNonce, proof(token, 'client', serverNonce, clientNonce)])));
            } else if (f.op === Op.Welcome && serverNonce) {
              if (f.payload.length !== 32 || !crypto().timingSafeEqual(f.payload, proof(token, 'server', serverNonce, clientNonce))) {
                return fail(new StoreError(`TcpStore.connect: ${host}:${port} does not know the shared token`));
              }
              clearTimeout(timer);
              socket.off('data', onData);
              socket.off('error', fail);
              socket.off('close', onClose);
              return resolve(new TcpStore(socket, reader, timeoutMs, size, maxMessageBytes));
            } else if (f.op === Op.Error) {
              return fail(new StoreError(`TcpStore.connect: the store refused: ${f.payload.toString('utf8')}`));
            } else {
              return fail(new StoreError(`TcpStore.connect: ${host}:${port} does not speak ${PROTOCOL}`));
            }
          }
        } catch (e) {
          fail(new StoreError(`TcpStore.connect: ${host}:${port}: ${(e as Error).message}`));
        }
      };
      const onClose = (): void => fail(new StoreError(`TcpStore.connect: ${host}:${port} closed the connection during the handshake`));
      socket.on('data', onData);
      socket.once('error', fail);
      socket.once('close', onClose);
    });
  }

  /** Stores `value` (bytes, or a string stored as UTF-8) under `key`. */
  async set(key: string, value: string | Uint8Array): Promise<void> {
    const call = 'TcpStore.set';
    checkKey(call, key);
    let v: Buffer;
    if (typeof value === 'string') v = Buffer.from(value, 'utf8');
    else if (value instanceof Uint8Array) v = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    else throw new TypeError(`${call}: value must be a string or a Uint8Array`);
    const k = encodeKey(key);
    if (k.length + v.length > this.maxMessageBytes) throw new RangeError(`${call}: a ${v.length}-byte value exceeds the message limit of ${this.maxMessageBytes} bytes`);
    await this.send(Op.Set, Buffer.concat([k, v]));
  }

  /** The value of `key`, waiting until some process sets it (StoreTimeoutError after `timeoutMs`). */
  async get(key: string, options: { timeoutMs?: number } = {}): Promise<Buffer> {
    const call = 'TcpStore.get';
    checkKey(call, key);
    const t = checkTimeout(call, options.timeoutMs ?? this.timeoutMs);
    const head = Buffer.allocUnsafe(4);
    head.writeUInt32BE(t);
    return this.send(Op.Get, Buffer.concat([head, encodeKey(key)]), t);
  }

  /** Adds `delta` to the integer held by `key` (0 when unset) and returns the new value. */
  async add(key: string, delta: number | bigint = 1): Promise<number> {
    const call = 'TcpStore.add';
    checkKey(call, key);
    if (!(typeof delta === 'bigint' || Number.isSafeInteger(delta))) throw new TypeError(`${call}: delta must be a safe integer or a bigint, got ${String(delta)}`);
    const d = Buffer.allocUnsafe(8);
    d.writeBigInt64BE(BigInt.asIntN(64, BigInt(delta)));
    const out = await this.send(Op.Add, Buffer.concat([encodeKey(key), d]));
    return Number(out.readBigInt64BE(0));
  }

  /** Resolves once every key is set (StoreTimeoutError after `timeoutMs`). */
  async wait(keys: string | readonly string[], options: { timeoutMs?: number } = {}): Promise<void> {
    const call = 'TcpStore.wait';
    const list = typeof keys === 'string' ? [keys] : keys;
    if (!Array.isArray(list) || list.length === 0 || list.length > 0xffff) throw new TypeError(`${call}: keys must be a key or a non-empty array of keys`);
    const t = checkTimeout(call, options.timeoutMs ?? this.timeoutMs);
    const head = Buffer.allocUnsafe(6);
    head.writeUInt32BE(t, 0);
    head.writeUInt16BE(list.length, 4);
    await this.send(Op.Wait, Buffer.concat([head, ...list.map((k) => encodeKey(checkKey(call, k)))]), t);
  }

  /** True when every key is set (does not wait). */
  async check(keys: string | readonly string[]): Promise<boolean> {
    const call = 'TcpStore.check';
    const list = typeof keys === 'string' ? [keys] : keys;
    if (!Array.isArray(list) || list.length === 0 || list.length > 0xffff) throw new TypeError(`${call}: keys must be a key or a non-empty array of keys`);
    const head = Buffer.allocUnsafe(2);
    head.writeUInt16BE(list.length);
    const out = await this.send(Op.Check, Buffer.concat([head, ...list.map((k) => encodeKey(checkKey(call, k)))]));
    return out[0] === 1;
  }

  /** Deletes `key`; true when it existed. */
  async delete(key: string): Promise<boolean> {
    const out = await this.send(Op.Delete, encodeKey(checkKey('TcpStore.delete', key)));
    return out[0] === 1;
  }

  /**
   * Resolves once all `size` processes called barrier(name) the same number of times (each call is
   * its own generation, so the same name can be reused). StoreTimeoutError after `timeoutMs`.
   */
  async barrier(name = 'default', options: { timeoutMs?: number; size?: number } = {}): Promise<void> {
    const call = 'TcpStore.barrier';
    const size = options.size ?? this.size;
    if (size === undefined || !Number.isInteger(size) || size < 1) throw new TypeError(`${call}: the number of processes is unknown: pass { size } here or to connect()`);
    if (typeof name !== 'string' || name.length === 0) throw new TypeError(`${call}: name must be a non-empty string`);
    const gen = (this.barriers.get(name) ?? 0) + 1;
    this.barriers.set(name, gen);
    const base = `__barrier/${name}/${gen}`;
    const arrived = await this.add(`${base}/count`, 1);
    if (arrived === size) await this.set(`${base}/done`, '1');
    try {
      await this.wait(`${base}/done`, { timeoutMs: options.timeoutMs ?? this.timeoutMs });
    } catch (e) {
      if (e instanceof StoreTimeoutError) throw new StoreTimeoutError(`${call}(${JSON.stringify(name)}): ${arrived} of ${size} processes arrived (at least) before the timeout`);
      throw e;
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

  private send(op: Op, payload: Buffer, waitMs?: number): Promise<Buffer> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.nextId;
    this.nextId = (this.nextId % 0xfffffffe) + 1;
    return new Promise<Buffer>((resolve, reject) => {
      const p: Pending = { resolve, reject };
      // The server answers a timed-out wait itself; this later timer only covers a server that went silent.
      if (waitMs !== undefined) {
        p.timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new StoreTimeoutError(`store request timed out after ${waitMs} ms (no answer from the server)`));
        }, waitMs + 5000);
      }
      this.pending.set(id, p);
      this.socket.write(frame(op, id, payload));
    });
  }

  private answer(op: number, id: number, payload: Buffer): void {
    const p = this.pending.get(id);
    if (!p) {
      if (op === Op.Error) this.fail(new StoreError(`the store closed the connection: ${payload.toString('utf8')}`));
      return;
    }
    this.pending.delete(id);
    if (p.timer) clearTimeout(p.timer);
    if (op === Op.Ok) return p.resolve(Buffer.from(payload));
    const message = payload.toString('utf8');
    p.reject(message.startsWith('timeout:') ? new StoreTimeoutError(message) : new StoreError(message));
  }

  private fail(e: Error): void {
    this.closedWith ??= e;
    for (const p of this.pending.values()) {
      if (p.timer) clearTimeout(p.timer);
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
  /** Connect timeout and default timeout of waits. Default 300000 ms. */
  timeoutMs?: number;
  /** The shared secret (default: $CUDA_TS_STORE_TOKEN). */
  token?: string;
  /** Where rank 0 listens. Default: the address's host when it is a loopback address, else '0.0.0.0'. */
  listenHost?: string;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/**
 * The store of a group of processes: rank 0 serves at `address` and connects to itself, the others
 * connect (retrying until `timeoutMs`). Closing rank 0's store stops the server.
 */
export async function openStore(options: OpenStoreOptions): Promise<TcpStore> {
  const call = 'openStore';
  if (typeof options !== 'object' || options === null) throw new TypeError(`${call}: options { rank, size, address } are required`);
  const { rank, size } = options;
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`${call}: size must be a positive integer, got ${String(size)}`);
  if (!Number.isInteger(rank) || rank < 0 || rank >= size) throw new RangeError(`${call}: rank must be an integer in [0, ${size}), got ${String(rank)}`);
  const { host, port } = parseAddress(options.address, call);
  const token = storeToken(options.token, call);
  let server: StoreServer | undefined;
  if (rank === 0) {
    server = await StoreServer.listen({ ...options, port, host: options.listenHost ?? (isLoopback(host) ? host : '0.0.0.0'), token });
  }
  try {
    const store = await TcpStore.connect({ host, port, token, timeoutMs: options.timeoutMs, size, maxMessageBytes: options.maxMessageBytes });
    store.server = server;
    return store;
  } catch (e) {
    await server?.close();
    throw e;
  }
}
