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
// Every admitted connection's answer is read and checked: nobody is shut out by address (a per-address
// budget let a client without the token lock out ranks on its host or NAT). A wrong proof is answered
// only after `authFailureDelayMs` (a tarpit: a client that waits for its answer makes one guess per
// delay); the connection meanwhile leaves its unauthenticated place, so the tarpit never crowds out a
// rank, and at most `maxDelayedRefusals` wait there (beyond, the oldest is answered at once). A flood
// that does not wait for answers is limited by admission alone: what keeps it from guessing the token is
// the token's strength (128 bits). Every wrong proof is counted (`authFailures`) and reported (`log`,
// the first at once, then one line per 10 s with the exact count and addresses).
//
// Memory: keys and values count in UTF-8 bytes against `maxStoredBytes`; blocked get/wait requests
// count against `maxWaiters` and, by the bytes of the keys they name, `maxWaitingBytes`. Waiters are
// indexed by key, so a set() looks only at the waiters of its own key.
import type * as net from 'node:net';
import { longTimeout, type LongTimer } from '../long-timeout';
import {
  AUTH_BYTES,
  BUSY,
  FrameReader,
  KEEPALIVE_MS,
  NONCE_BYTES,
  NO_TIMEOUT,
  Op,
  OTHER_RUN,
  PayloadReader,
  StoreError,
  crypto,
  frame,
  proof,
  runIdOf,
  storeToken,
} from './store-wire';
import { SEALED, type Sealed, checkSealed } from '../sealed';

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
  /** Most blocked get/wait requests held in all. Default 65536. */
  maxWaiters?: number;
  /** Most bytes of keys (UTF-8, plus 64 per key) that blocked get/wait requests name in all. Default 64 MiB. */
  maxWaitingBytes?: number;
  /** A client must authenticate within this many ms of connecting. Default 10000. */
  handshakeTimeoutMs?: number;
  /** Most connections not yet authenticated; a new one beyond it closes the oldest that has had its chance to answer (else it is refused as busy). Default 128. */
  maxUnauthenticated?: number;
  /** How long a wrong proof waits for its refusal, in ms (the tarpit). Default 1000. */
  authFailureDelayMs?: number;
  /** Most connections waiting in the tarpit; beyond it the oldest is refused at once. Default 256. */
  maxDelayedRefusals?: number;
  /** Most reply bytes queued to one client that does not read them; beyond it the client is dropped. Default 64 MiB. */
  maxQueuedReplyBytes?: number;
}

export const DEFAULT_LIMITS: Required<StoreLimits> = {
  maxMessageBytes: 1 << 20,
  maxKeys: 65536,
  maxStoredBytes: 256 << 20,
  maxConnections: 1024,
  maxWaitersPerConnection: 1024,
  maxWaiters: 65536,
  maxWaitingBytes: 64 << 20,
  handshakeTimeoutMs: 10_000,
  maxUnauthenticated: 128,
  authFailureDelayMs: 1000,
  maxDelayedRefusals: 256,
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
  /** The run it serves (default: $CUDA_TS_RUN_ID, else none): a client of another run is refused, told so. */
  runId?: string;
  /** Where failed authentications are reported (at most one line per 10 s). Default: standard error. */
  log?: (line: string) => void;
}

// The least time an unauthenticated connection keeps its place after its challenge left, in ms: about
// three times the longest in-process handshake measured under a same-process flood (Deno, 8-10 ms).
const CHANCE_MS = 25;
// How long a refused connection may take to receive the reason before it is dropped.
const REFUSAL_LINGER_MS = 1000;

interface Waiter {
  /** Its keys, each once. */
  keys: string[];
  /** How many of them are not set. */
  missing: number;
  /** What it counts against maxWaitingBytes. */
  bytes: number;
  conn: ServerConnection;
  done: () => void;
  timer: LongTimer;
}

// What a waiter costs beyond its keys' bytes, counted against maxWaitingBytes: per key, per waiter.
const WAITING_KEY_OVERHEAD = 64;
const WAITER_OVERHEAD = 128;

interface ServerConnection {
  socket: net.Socket;
  address: string;
  authed: boolean;
  waiters: Set<Waiter>;
  /** The admission batch during which its challenge left, and when (Infinity until then; see the top of this file). */
  challenged: { batch: number; ms: number };
  /** Why it is refused, once its wrong proof waits in the tarpit. */
  refusal?: string;
}

/** Counts failed authentications and reports them: the first at once, then one line per 10 s with the exact count. */
class FailureReport {
  private count = 0;
  private readonly addresses = new Set<string>();
  private last = '';
  private timer: NodeJS.Timeout | undefined;
  constructor(
    private readonly log: (line: string) => void,
    private readonly where: string,
  ) {}

  add(address: string, why: string): void {
    this.count++;
    if (this.addresses.size < 1024) this.addresses.add(address);
    this.last = `${address} (${why})`;
    if (this.timer) return;
    this.flush();
    this.timer = setInterval(() => (this.count ? this.flush() : this.stop()), 10_000);
    this.timer.unref();
  }

  private flush(): void {
    const from = this.addresses.size >= 1024 ? '1024 or more addresses' : `${this.addresses.size} address${this.addresses.size === 1 ? '' : 'es'}`;
    this.log(`StoreServer ${this.where}: ${this.count} failed authentication${this.count === 1 ? '' : 's'} from ${from}, the last from ${this.last}`);
    this.count = 0;
    this.addresses.clear();
  }

  /** Reports what is not reported yet and stops the timer. */
  stop(): void {
    if (this.count) this.flush();
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** The addresses to listen on for `host`: itself when it is an address, else all it resolves to. */
async function listenAddresses(host: string): Promise<string[]> {
  if (nodeNet().isIP(host)) return [host];
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
  /** Connections closed for bad input, a wrong token, another run, a handshake timeout, or crowding. */
  refused = 0;
  /** Failed authentications (a wrong token or a malformed handshake), each one proof read and checked. */
  authFailures = 0;
  /** Clients that knew the token but belong to another run (refused, told which run this is). */
  otherRuns = 0;
  /** The run it serves ('' when none was named). */
  readonly runId: string;
  /** Why the last connection was refused (for diagnostics). */
  lastRefusal: string | undefined;
  private readonly data = new Map<string, Buffer>();
  private stored = 0;
  /** Blocked requests by each key they name (set or not). */
  private readonly waitersByKey = new Map<string, Set<Waiter>>();
  private waiterCount = 0;
  private waitingBytes = 0;
  /** Connections whose wrong proof waits for its refusal (oldest first). */
  private readonly tarpit = new Map<ServerConnection, LongTimer>();
  private readonly connections = new Set<ServerConnection>();
  private readonly unauthenticated = new Set<ServerConnection>();
  private authed = 0;
  /** Connections accepted this turn, admitted together once its reads are done. */
  private arrivals: net.Socket[] = [];
  private batch = 0;
  private readonly report: FailureReport;

  private constructor(
    seal: Sealed,
    private readonly servers: net.Server[],
    private readonly token: string,
    private readonly limits: Required<StoreLimits>,
    port: number,
    host: string,
    runId: string,
    log: (line: string) => void,
  ) {
    checkSealed(seal, 'StoreServer', 'StoreServer.listen()');
    this.port = port;
    this.host = host;
    this.runId = runId;
    this.report = new FailureReport(log, `:${port}`);
  }

  /**
   * Starts serving; resolves once listening.
   * @param options `port` (0: any free port, read from `server.port`), `host` (the address or name to listen on; default '0.0.0.0': every interface), `token`
   * (the shared secret, ≥ 128 bits; default $CUDA_TS_STORE_TOKEN), `runId` (default $CUDA_TS_RUN_ID), `log` (where failed authentications are reported;
   * default standard error) and the limits of StoreLimits (each with its default).
   */
  static listen(options: StoreServerOptions): Promise<StoreServer> {
    const call = 'StoreServer.listen';
    if (typeof options !== 'object' || options === null) throw new TypeError(`${call}: options with a port are required`);
    const { port } = options;
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`${call}: port must be an integer in [0, 65535], got ${String(port)}`);
    const token = storeToken(options.token, call);
    const runId = runIdOf(options.runId, call);
    const limits = checkLimits(call, options);
    const host = options.host ?? '0.0.0.0';
    if (typeof host !== 'string' || host.length === 0) throw new TypeError(`${call}: host must be a non-empty string`);
    const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
    if (typeof log !== 'function') throw new TypeError(`${call}: log must be a function`);
    return StoreServer.start(host, port, token, runId, limits, log);
  }

  private static async start(
    host: string,
    port: number,
    token: string,
    runId: string,
    limits: Required<StoreLimits>,
    log: (line: string) => void,
  ): Promise<StoreServer> {
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
      const s = new StoreServer(SEALED, servers, token, limits, bound, host, runId, log);
      for (const server of servers) {
        server.on('connection', (socket) => s.accept(socket));
        server.on('error', () => undefined); // errors after listening concern single connections
      }
      return s;
    } catch (e) {
      for (const server of servers) server.close();
      const err = e as NodeJS.ErrnoException;
      throw new StoreError(
        `StoreServer.listen: cannot listen on ${host} port ${port}: ${notThisMachine(err, host) ? `${host} is not an address of this machine` : err.message}`,
      );
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

  /** Blocked get/wait requests held now. */
  get waiterCountNow(): number {
    return this.waiterCount;
  }

  /** Stops listening and closes every connection (blocked requests fail on the clients). */
  close(): Promise<void> {
    for (const c of this.connections) for (const w of c.waiters) this.dropWaiter(w);
    for (const timer of this.tarpit.values()) timer.cancel();
    this.tarpit.clear();
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

  /** A new connection: admitted with this turn's batch (nobody is turned away by address). */
  private accept(socket: net.Socket): void {
    socket.on('error', () => undefined); // 'close' follows
    socket.setKeepAlive(true, KEEPALIVE_MS);
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
    const conn: ServerConnection = {
      socket,
      address: socket.remoteAddress ?? '?',
      authed: false,
      waiters: new Set(),
      challenged: { batch: Infinity, ms: Infinity },
    };
    this.unauthenticated.add(conn);
    this.connections.add(conn);
    socket.setNoDelay(true);
    let reader = new FrameReader(AUTH_BYTES); // nothing bigger than the answer to the challenge
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
          else {
            handshake.cancel(); // answered: refused (now or from the tarpit) or in
            if (!this.authenticate(conn, nonce, f.op, f.payload)) return;
            reader = new FrameReader(this.limits.maxMessageBytes);
          }
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
    for (const w of conn.waiters) this.dropWaiter(w);
    this.tarpit.get(conn)?.cancel();
    this.tarpit.delete(conn);
    if (conn.authed) this.authed--;
    conn.authed = false;
    this.unauthenticated.delete(conn);
    this.connections.delete(conn);
  }

  /** Checks the answer to the challenge; true once authenticated, false when the connection was refused. */
  private authenticate(conn: ServerConnection, nonce: Buffer, op: number, payload: Buffer): boolean {
    this.unauthenticated.delete(conn);
    if (op !== Op.Auth || payload.length !== AUTH_BYTES) return this.failed(conn, 'expected authentication');
    const clientNonce = payload.subarray(0, NONCE_BYTES);
    if (!crypto().timingSafeEqual(proof(this.token, 'client', nonce, clientNonce), payload.subarray(NONCE_BYTES, 2 * NONCE_BYTES))) {
      return this.failed(conn, 'authentication failed: wrong token');
    }
    if (!crypto().timingSafeEqual(proof(this.token, 'run', nonce, clientNonce, this.runId), payload.subarray(2 * NONCE_BYTES))) {
      // it holds the token: telling it which run this is helps it, and tells an attacker nothing
      this.otherRuns++;
      this.refuse(conn, `${OTHER_RUN} ${JSON.stringify(this.runId)}`);
      return false;
    }
    if (this.authed >= this.limits.maxConnections) {
      this.refuse(conn, `the store serves its limit of ${this.limits.maxConnections} connections (maxConnections; openStore sizes it from the world size)`);
      return false;
    }
    conn.authed = true;
    this.authed++;
    conn.socket.write(frame(Op.Welcome, 0, proof(this.token, 'server', nonce, clientNonce, this.runId)));
    return true;
  }

  /**
   * A wrong or malformed proof: counted, reported, and refused after authFailureDelayMs (the tarpit,
   * outside the unauthenticated places; the oldest there is refused at once when it is full).
   */
  private failed(conn: ServerConnection, why: string): false {
    this.authFailures++;
    this.report.add(conn.address, why);
    conn.socket.pause(); // nothing more is read from it
    if (this.tarpit.size >= this.limits.maxDelayedRefusals) {
      const [oldest, timer] = this.tarpit.entries().next().value as [ServerConnection, LongTimer];
      timer.cancel();
      this.tarpit.delete(oldest);
      this.refuse(oldest, oldest.refusal ?? why);
    }
    conn.refusal = why;
    const timer = longTimeout(
      () => {
        this.tarpit.delete(conn);
        this.refuse(conn, why);
      },
      this.limits.authFailureDelayMs,
      true,
    );
    this.tarpit.set(conn, timer);
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
          this.stored -= old.length + Buffer.byteLength(key, 'utf8');
          this.data.delete(key);
          for (const w of this.waitersByKey.get(key) ?? []) w.missing++;
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
    const named: string[] = [];
    const n = op === Op.Get ? 1 : r.u16();
    for (let i = 0; i < n; i++) named.push(r.key());
    r.end();
    const answer = (): void => (op === Op.Get ? this.reply(conn, id, this.data.get(named[0])) : this.reply(conn, id));
    const keys = [...new Set(named)];
    const missing = keys.reduce((m, k) => m + (this.data.has(k) ? 0 : 1), 0);
    if (missing === 0) return answer();
    const refusal = this.waiterRefusal(conn, keys);
    if (refusal) return this.replyError(conn, id, refusal);
    const w: Waiter = {
      keys,
      missing,
      bytes: WAITER_OVERHEAD + keys.reduce((b, k) => b + Buffer.byteLength(k, 'utf8') + WAITING_KEY_OVERHEAD, 0),
      conn,
      done: answer,
      timer: longTimeout(
        () => {
          this.dropWaiter(w);
          this.replyError(
            conn,
            id,
            `timeout: ${keys
              .filter((k) => !this.data.has(k))
              .map((k) => JSON.stringify(k))
              .join(', ')} not set within ${timeoutMs} ms`,
          );
        },
        timeoutMs,
        true,
      ),
    };
    this.addWaiter(w);
  }

  /** Why a new waiter on `keys` would pass a limit, or undefined. */
  private waiterRefusal(conn: ServerConnection, keys: string[]): string | undefined {
    const { maxWaitersPerConnection, maxWaiters, maxWaitingBytes } = this.limits;
    if (conn.waiters.size >= maxWaitersPerConnection) return `too many blocked requests on one connection (${maxWaitersPerConnection})`;
    if (this.waiterCount >= maxWaiters) return `the store holds its limit of ${maxWaiters} blocked requests (maxWaiters)`;
    const bytes = WAITER_OVERHEAD + keys.reduce((b, k) => b + Buffer.byteLength(k, 'utf8') + WAITING_KEY_OVERHEAD, 0);
    if (this.waitingBytes + bytes > maxWaitingBytes) return `blocked requests would name more than ${maxWaitingBytes} bytes of keys (maxWaitingBytes)`;
    return undefined;
  }

  private addWaiter(w: Waiter): void {
    for (const k of w.keys) {
      let set = this.waitersByKey.get(k);
      if (!set) this.waitersByKey.set(k, (set = new Set()));
      set.add(w);
    }
    w.conn.waiters.add(w);
    this.waiterCount++;
    this.waitingBytes += w.bytes;
  }

  /** Forgets a waiter (answered, timed out, or its connection closed). */
  private dropWaiter(w: Waiter): void {
    if (!w.conn.waiters.delete(w)) return;
    w.timer.cancel();
    for (const k of w.keys) {
      const set = this.waitersByKey.get(k);
      set?.delete(w);
      if (set?.size === 0) this.waitersByKey.delete(k);
    }
    this.waiterCount--;
    this.waitingBytes -= w.bytes;
  }

  /** Stores `value` under `key` and wakes the waiters it completes; an error message when over a limit. */
  private put(key: string, value: Buffer): string | undefined {
    const old = this.data.get(key);
    const delta = value.length - (old ? old.length : -Buffer.byteLength(key, 'utf8'));
    if (!old && this.data.size >= this.limits.maxKeys) return `the store holds its limit of ${this.limits.maxKeys} keys`;
    if (this.stored + delta > this.limits.maxStoredBytes) return `the store would exceed its limit of ${this.limits.maxStoredBytes} bytes`;
    this.data.set(key, value);
    this.stored += delta;
    if (old) return undefined; // was set already: no waiter was missing it
    const waiting = this.waitersByKey.get(key);
    if (!waiting) return undefined;
    for (const w of [...waiting]) {
      if (--w.missing > 0) continue;
      this.dropWaiter(w);
      w.done();
    }
    return undefined;
  }
}
