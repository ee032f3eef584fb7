// The serving side of the rendezvous store (see store.ts for the client and the trust boundary).
//
// Admission, so that a client without the token can neither lock ranks out nor make the server hold
// memory: an unauthenticated connection gets a 64-byte frame limit and a place among at most
// `maxUnauthenticated` of its kind (when full, the oldest is closed: a real client answers the
// challenge within one round trip, an idle one has had its chance), and never counts against
// `maxConnections`, which counts authenticated clients alone.
//
// "Had its chance" holds under every runtime's accept pace: Node accepts about one connection per
// event-loop turn, Bun and Deno a whole backlog at once (a same-process flood: 16-20 a turn), which
// closed connections of that very batch before their answer could be read. So arrivals are admitted
// once per turn, as a batch, after that turn's reads, and the oldest is closed only once its challenge
// has been out for a batch in between and CHANCE_MS (its client had time to answer, this server a turn
// to read it). When every place is held by such a young one, the newcomer is refused as busy (the
// client retries within 50 ms), and who of a batch gets the free places is drawn by lot: a flood
// cannot put itself first in line, it can only make a rank try a few times.
//
// Failed authentications are counted per remote address: past `maxAuthFailuresPerMinute`, that
// address's new connections are closed at once until its budget refills, and the failures are reported
// (`log`, at most one line per 10 s).
import type * as net from 'node:net';
import { BUSY, FrameReader, NONCE_BYTES, NO_TIMEOUT, Op, PayloadReader, StoreError, crypto, frame, longTimeout, proof, storeToken, type LongTimer } from './store-wire';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const nodeNet = (): typeof net => require('node:net') as typeof net;

/** Limits a StoreServer enforces on every connection. */
export interface StoreLimits {
  /** Largest frame body in bytes (a value plus ~70 bytes of header). Default 1 MiB. */
  maxMessageBytes?: number;
  /** Most keys held. Default 65536. */
  maxKeys?: number;
  /** Most bytes of keys and values held in all. Default 256 MiB. */
  maxStoredBytes?: number;
  /** Most authenticated connections at once. Default 1024 (openStore raises it to the world size + 64). */
  maxConnections?: number;
  /** Most blocked get/wait requests per connection. Default 1024. */
  maxWaitersPerConnection?: number;
  /** A client must authenticate within this many ms of connecting. Default 10000. */
  handshakeTimeoutMs?: number;
  /** Most connections not yet authenticated; a new one beyond it closes the oldest that has had its chance to answer (else it is refused as busy). Default 128. */
  maxUnauthenticated?: number;
  /** Failed authentications one remote address may make per minute before it is shut out. Default 10. */
  maxAuthFailuresPerMinute?: number;
  /** Most reply bytes queued to one client that does not read them; beyond it the client is dropped. Default 64 MiB. */
  maxQueuedReplyBytes?: number;
}

export const DEFAULT_LIMITS: Required<StoreLimits> = {
  maxMessageBytes: 1 << 20,
  maxKeys: 65536,
  maxStoredBytes: 256 << 20,
  maxConnections: 1024,
  maxWaitersPerConnection: 1024,
  handshakeTimeoutMs: 10_000,
  maxUnauthenticated: 128,
  maxAuthFailuresPerMinute: 10,
  maxQueuedReplyBytes: 64 << 20,
};

/** Options of {@link StoreServer.listen}. */
export interface StoreServerOptions extends StoreLimits {
  /** Port to listen on (0: any free port; read it from `server.port`). */
  port: number;
  /**
   * Address to listen on: an IPv4 or IPv6 address, or a name (every address it resolves to, both
   * families). '0.0.0.0' / '::' listen on every interface. Default '0.0.0.0'.
   */
  host?: string;
  /** The shared secret (default: $CUDA_TS_STORE_TOKEN); at least 128 bits. */
  token?: string;
  /** Where failed authentications are reported (at most one line per 10 s). Default: standard error. */
  log?: (line: string) => void;
}

// The least time an unauthenticated connection keeps its place after its challenge left, in ms: about
// three times the longest in-process handshake measured under a same-process flood (Deno, 8-10 ms).
const CHANCE_MS = 25;
// How long a refused connection may take to receive the reason before it is dropped.
const REFUSAL_LINGER_MS = 1000;

interface Waiter {
  keys: string[];
  conn: ServerConnection;
  done: () => void;
  timer: LongTimer;
}

interface ServerConnection {
  socket: net.Socket;
  address: string;
  authed: boolean;
  waiters: Set<Waiter>;
  /** The admission batch during which its challenge left, and when (Infinity until then; see the top of this file). */
  challenged: { batch: number; ms: number };
}

/** A token bucket of failed authentications per remote address (bounded: the oldest address is forgotten). */
class FailureBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(private readonly perMinute: number, private readonly maxAddresses = 4096) {}

  private bucket(address: string): { tokens: number; at: number } {
    const now = Date.now();
    let b = this.buckets.get(address);
    if (!b) {
      b = { tokens: this.perMinute, at: now };
      if (this.buckets.size >= this.maxAddresses) this.buckets.delete(this.buckets.keys().next().value as string);
      this.buckets.set(address, b);
    }
    b.tokens = Math.min(this.perMinute, b.tokens + ((now - b.at) * this.perMinute) / 60_000);
    b.at = now;
    return b;
  }

  /** True when `address` has no failure left to spend. */
  shutOut(address: string): boolean {
    return this.buckets.has(address) && this.bucket(address).tokens < 1;
  }

  fail(address: string): void {
    const b = this.bucket(address);
    b.tokens = Math.max(0, b.tokens - 1);
  }
}

/** Counts failed authentications and reports them: the first at once, then a summary per 10 s. */
class FailureReport {
  private count = 0;
  private shutOut = 0;
  private last = '';
  private timer: NodeJS.Timeout | undefined;
  constructor(private readonly log: (line: string) => void, private readonly where: string) {}

  add(address: string, why: string, shutOut: boolean): void {
    this.count++;
    if (shutOut) this.shutOut++;
    this.last = `${address} (${why})`;
    if (this.timer) return;
    this.flush();
    this.timer = setInterval(() => (this.count ? this.flush() : this.stop()), 10_000);
    this.timer.unref();
  }

  private flush(): void {
    this.log(`StoreServer ${this.where}: ${this.count} failed authentication${this.count === 1 ? '' : 's'}, the last from ${this.last}${this.shutOut ? `; ${this.shutOut} connections refused while an address was shut out` : ''}`);
    this.count = 0;
    this.shutOut = 0;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** The addresses to listen on for `host`: itself when it is an address, else all it resolves to. */
async function listenAddresses(host: string): Promise<string[]> {
  if (nodeNet().isIP(host)) return [host];
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const dns = require('node:dns') as typeof import('node:dns');
  const found = await dns.promises.lookup(host, { all: true });
  const unique = [...new Set(found.map((a) => a.address))];
  if (unique.length === 0) throw new StoreError(`StoreServer.listen: ${host} resolves to no address`);
  return unique;
}

/** Whether listening failed because `address` is not this machine's (Deno says EINVAL where Node says EADDRNOTAVAIL). */
function notThisMachine(err: NodeJS.ErrnoException, address: string): boolean {
  if (err.code === 'EADDRNOTAVAIL') return true;
  if (err.code !== 'EINVAL' || !nodeNet().isIP(address)) return false;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const os = require('node:os') as typeof import('node:os');
  return !Object.values(os.networkInterfaces()).some((list) => list?.some((a) => a.address === address));
}

function listenOne(server: net.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, ipv6Only: host.includes(':') && host !== '::' }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function checkLimits(call: string, options: StoreLimits): Required<StoreLimits> {
  const limits = { ...DEFAULT_LIMITS };
  for (const k of Object.keys(DEFAULT_LIMITS) as (keyof StoreLimits)[]) {
    const v = options[k];
    if (v === undefined) continue;
    if (!Number.isSafeInteger(v) || v <= 0) throw new RangeError(`${call}: ${k} must be a positive integer, got ${String(v)}`);
    limits[k] = v;
  }
  return limits;
}

/**
 * The serving side of the store: holds the keys, answers authenticated clients. Survives any input a
 * client sends (a bad connection is closed, counted in `refused`). close() ends every connection.
 */
export class StoreServer {
  /** The port it listens on. */
  readonly port: number;
  /** The address it listens on (as given). */
  readonly host: string;
  /** Connections closed for bad input, a wrong token, a handshake timeout, or crowding. */
  refused = 0;
  /** Failed authentications (a wrong token or a malformed handshake). */
  authFailures = 0;
  /** Why the last connection was refused (for diagnostics). */
  lastRefusal: string | undefined;
  private readonly data = new Map<string, Buffer>();
  private stored = 0;
  private readonly waiters = new Set<Waiter>();
  private readonly connections = new Set<ServerConnection>();
  private readonly unauthenticated = new Set<ServerConnection>();
  private authed = 0;
  /** Connections accepted this turn, admitted together once its reads are done. */
  private arrivals: net.Socket[] = [];
  private batch = 0;
  private readonly budget: FailureBudget;
  private readonly report: FailureReport;

  private constructor(private readonly servers: net.Server[], private readonly token: string, private readonly limits: Required<StoreLimits>, port: number, host: string, log: (line: string) => void) {
    this.port = port;
    this.host = host;
    this.budget = new FailureBudget(limits.maxAuthFailuresPerMinute);
    this.report = new FailureReport(log, `:${port}`);
  }

  /** Starts serving; resolves once listening. */
  static listen(options: StoreServerOptions): Promise<StoreServer> {
    const call = 'StoreServer.listen';
    if (typeof options !== 'object' || options === null) throw new TypeError(`${call}: options with a port are required`);
    const { port } = options;
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`${call}: port must be an integer in [0, 65535], got ${String(port)}`);
    const token = storeToken(options.token, call);
    const limits = checkLimits(call, options);
    const host = options.host ?? '0.0.0.0';
    if (typeof host !== 'string' || host.length === 0) throw new TypeError(`${call}: host must be a non-empty string`);
    const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
    if (typeof log !== 'function') throw new TypeError(`${call}: log must be a function`);
    return StoreServer.start(host, port, token, limits, log);
  }

  private static async start(host: string, port: number, token: string, limits: Required<StoreLimits>, log: (line: string) => void): Promise<StoreServer> {
    const servers: net.Server[] = [];
    try {
      let bound = port;
      for (const address of await listenAddresses(host)) {
        const server = nodeNet().createServer();
        // a backstop only: admission below keeps the counts far under it
        server.maxConnections = limits.maxConnections + limits.maxUnauthenticated + 64;
        servers.push(server);
        await listenOne(server, bound, address);
        bound = (server.address() as net.AddressInfo).port; // every address on the first one's port
      }
      const s = new StoreServer(servers, token, limits, bound, host, log);
      for (const server of servers) {
        server.on('connection', (socket) => s.accept(socket));
        server.on('error', () => undefined); // errors after listening concern single connections
      }
      return s;
    } catch (e) {
      for (const server of servers) server.close();
      const err = e as NodeJS.ErrnoException;
      throw new StoreError(`StoreServer.listen: cannot listen on ${host} port ${port}: ${notThisMachine(err, host) ? `${host} is not an address of this machine` : err.message}`);
    }
  }

  /** Number of keys held. */
  get size(): number {
    return this.data.size;
  }

  /** Most authenticated connections it serves at once. */
  get maxConnections(): number {
    return this.limits.maxConnections;
  }

  /** Connections that have not authenticated yet. */
  get unauthenticatedCount(): number {
    return this.unauthenticated.size;
  }

  /** Stops listening and closes every connection (blocked requests fail on the clients). */
  close(): Promise<void> {
    for (const w of this.waiters) w.timer.cancel();
    this.waiters.clear();
    this.report.stop();
    // end(), not destroy(): answers already written (the last barrier's, typically: the serving rank
    // leaves the barrier and closes while the others' replies are in flight) still reach their clients.
    for (const c of this.connections) {
      c.socket.end();
      setTimeout(() => c.socket.destroy(), 2000).unref();
    }
    this.connections.clear();
    this.unauthenticated.clear();
    for (const socket of this.arrivals.splice(0)) socket.destroy();
    return Promise.all(this.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())))).then(() => undefined);
  }

  private refuse(conn: ServerConnection, why: string): void {
    this.refuseSocket(conn.socket, why);
  }

  private refuseSocket(socket: net.Socket, why: string): void {
    this.refused++;
    this.lastRefusal = why;
    if (socket.destroyed || socket.writableEnded) return;
    // The reason leaves first: destroy() right after end() drops it under Deno (its writes are
    // asynchronous), and the client would see a bare close. Nothing more is read meanwhile, and a
    // peer that does not take even this small frame is dropped after REFUSAL_LINGER_MS.
    socket.pause();
    socket.end(frame(Op.Error, 0, Buffer.from(why, 'utf8')), () => socket.destroy());
    setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS).unref();
  }

  /** A new connection: closed at once when its address is shut out, else admitted with this turn's batch. */
  private accept(socket: net.Socket): void {
    socket.on('error', () => undefined); // 'close' follows
    const address = socket.remoteAddress ?? '?';
    if (this.budget.shutOut(address)) {
      this.refused++;
      this.report.add(address, 'shut out after too many failures', true);
      socket.destroy();
      return;
    }
    this.arrivals.push(socket);
    if (this.arrivals.length === 1) setImmediate(() => this.admitBatch());
  }

  /** Admits this turn's arrivals, in an order drawn by lot, while there is room (see the top of this file). */
  private admitBatch(): void {
    const batch = this.arrivals;
    this.arrivals = [];
    this.batch++;
    for (let i = batch.length - 1; i > 0; i--) {
      const j = crypto().randomInt(i + 1);
      [batch[i], batch[j]] = [batch[j], batch[i]];
    }
    for (const socket of batch) {
      if (socket.destroyed) continue;
      if (this.makeRoom()) this.serve(socket);
      else this.refuseSocket(socket, `${BUSY} every place for unauthenticated connections is taken by one still due its first answer`);
    }
  }

  /** True when an unauthenticated connection may be added: a place is free, or the oldest has had its chance and is closed. */
  private makeRoom(): boolean {
    if (this.unauthenticated.size < this.limits.maxUnauthenticated) return true;
    const oldest = this.unauthenticated.values().next().value as ServerConnection;
    const { challenged } = oldest;
    if (challenged.batch >= this.batch - 1 || performance.now() - challenged.ms < CHANCE_MS) return false; // not had its chance yet
    this.unauthenticated.delete(oldest);
    this.refuse(oldest, `${BUSY} too many unauthenticated connections; closed the oldest`);
    return true;
  }

  /** Challenges an admitted connection and serves it. */
  private serve(socket: net.Socket): void {
    const conn: ServerConnection = { socket, address: socket.remoteAddress ?? '?', authed: false, waiters: new Set(), challenged: { batch: Infinity, ms: Infinity } };
    this.unauthenticated.add(conn);
    this.connections.add(conn);
    socket.setNoDelay(true);
    let reader = new FrameReader(2 * NONCE_BYTES); // nothing bigger than the answer to the challenge
    const nonce = crypto().randomBytes(NONCE_BYTES);
    const handshake = longTimeout(() => this.refuse(conn, 'no authentication within the handshake timeout'), this.limits.handshakeTimeoutMs, true);
    socket.on('close', () => this.closed(conn, handshake));
    socket.on('drain', () => socket.resume());
    socket.write(frame(Op.Challenge, 0, nonce), () => (conn.challenged = { batch: this.batch, ms: performance.now() }));
    socket.on('data', (data: Buffer) => {
      if (socket.destroyed || socket.writableEnded) return; // refused: its reason is on its way out
      socket.cork(); // the replies to one chunk of requests leave in one write
      try {
        for (const f of reader.push(data)) {
          if (conn.authed) this.request(conn, f.op, f.id, f.payload);
          else if (this.authenticate(conn, nonce, f.op, f.payload)) {
            handshake.cancel();
            reader = new FrameReader(this.limits.maxMessageBytes);
          } else return;
        }
      } catch (e) {
        this.refuse(conn, e instanceof StoreError ? e.message : `internal error: ${String(e)}`);
      } finally {
        socket.uncork();
      }
      // a client that sends requests without reading the answers: stop reading until they drain
      if (socket.writableLength > 2 * this.limits.maxMessageBytes) socket.pause();
    });
  }

  private closed(conn: ServerConnection, handshake: LongTimer): void {
    handshake.cancel();
    for (const w of conn.waiters) {
      w.timer.cancel();
      this.waiters.delete(w);
    }
    conn.waiters.clear();
    if (conn.authed) this.authed--;
    conn.authed = false;
    this.unauthenticated.delete(conn);
    this.connections.delete(conn);
  }

  /** Checks the answer to the challenge; true once authenticated, false when the connection was refused. */
  private authenticate(conn: ServerConnection, nonce: Buffer, op: number, payload: Buffer): boolean {
    if (this.budget.shutOut(conn.address)) {
      // admitted before its address ran out of failures: its guess is not even looked at
      this.unauthenticated.delete(conn);
      this.refuse(conn, `${BUSY} this address made too many failed authentications; try later`);
      return false;
    }
    let why: string | undefined;
    if (op !== Op.Auth || payload.length !== 2 * NONCE_BYTES) why = 'expected authentication';
    else {
      const clientNonce = payload.subarray(0, NONCE_BYTES);
      const want = proof(this.token, 'client', nonce, clientNonce);
      if (!crypto().timingSafeEqual(want, payload.subarray(NONCE_BYTES))) why = 'authentication failed: wrong token';
      else {
        this.unauthenticated.delete(conn);
        if (this.authed >= this.limits.maxConnections) {
          this.refuse(conn, `the store serves its limit of ${this.limits.maxConnections} connections (maxConnections; openStore sizes it from the world size)`);
          return false;
        }
        conn.authed = true;
        this.authed++;
        conn.socket.write(frame(Op.Welcome, 0, proof(this.token, 'server', nonce, clientNonce)));
        return true;
      }
    }
    this.authFailures++;
    this.budget.fail(conn.address);
    this.report.add(conn.address, why, false);
    this.unauthenticated.delete(conn);
    this.refuse(conn, why);
    return false;
  }

  private send(conn: ServerConnection, out: Buffer): void {
    const { socket } = conn;
    if (socket.destroyed) return;
    if (socket.writableLength + out.length > this.limits.maxQueuedReplyBytes) {
      this.refuse(conn, `more than ${this.limits.maxQueuedReplyBytes} bytes of replies queued: the client does not read them`);
      return;
    }
    socket.write(out);
  }

  private reply(conn: ServerConnection, id: number, payload?: Buffer): void {
    this.send(conn, frame(Op.Ok, id, payload));
  }

  private replyError(conn: ServerConnection, id: number, message: string): void {
    this.send(conn, frame(Op.Error, id, Buffer.from(message, 'utf8')));
  }

  /** Handles one authenticated request; malformed input throws (and closes the connection). */
  private request(conn: ServerConnection, op: number, id: number, payload: Buffer): void {
    const r = new PayloadReader(payload);
    switch (op) {
      case Op.Set: {
        const key = r.key();
        const err = this.put(key, Buffer.from(r.rest())); // own copy: the frame's buffer is reused
        return err ? this.replyError(conn, id, err) : this.reply(conn, id);
      }
      case Op.Add:
        return this.add(conn, id, r);
      case Op.Get:
      case Op.Wait:
        return this.wait(conn, op, id, r);
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

  // add works on 64-bit integers held as decimal text: a longer text is not parsed (BigInt of a
  // megabyte of digits costs a third of a second of the server's only thread).
  private add(conn: ServerConnection, id: number, r: PayloadReader): void {
    const key = r.key();
    const delta = r.i64();
    r.end();
    const old = this.data.get(key);
    const text = old === undefined ? '0' : old.length <= 20 ? old.toString('utf8') : '';
    if (!/^-?\d{1,19}$/.test(text)) return this.replyError(conn, id, `add: key ${JSON.stringify(key)} does not hold a 64-bit integer`);
    const now = BigInt(text) + delta;
    if (now !== BigInt.asIntN(64, now)) return this.replyError(conn, id, `add: key ${JSON.stringify(key)} would overflow 64 bits`);
    const err = this.put(key, Buffer.from(now.toString(), 'utf8'));
    if (err) return this.replyError(conn, id, err);
    const out = Buffer.allocUnsafe(8);
    out.writeBigInt64BE(now);
    return this.reply(conn, id, out);
  }

  private wait(conn: ServerConnection, op: number, id: number, r: PayloadReader): void {
    const wireMs = r.u32();
    const timeoutMs = wireMs === NO_TIMEOUT ? Infinity : wireMs;
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
      timer: longTimeout(() => {
        this.waiters.delete(w);
        conn.waiters.delete(w);
        this.replyError(conn, id, `timeout: ${keys.filter((k) => !this.data.has(k)).map((k) => JSON.stringify(k)).join(', ')} not set within ${timeoutMs} ms`);
      }, timeoutMs, true),
    };
    this.waiters.add(w);
    conn.waiters.add(w);
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
      w.timer.cancel();
      this.waiters.delete(w);
      w.conn.waiters.delete(w);
      w.done();
    }
    return undefined;
  }
}
