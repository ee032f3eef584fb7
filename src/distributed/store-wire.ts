// What both ends of the rendezvous store share: the wire format, the handshake's proof, the errors, the
// token rules and timers that accept any timeout. No CUDA, no sockets here.
//
// Wire format: frames of [u32 BE body length][body]; body = [u8 op][u32 BE request id][payload].
// Request ids are never 0: a frame with id 0 concerns the whole connection (the challenge, a refusal).
// A wait's timeout travels as a u32 where 0xffffffff means "no timeout".
import type * as Crypto from 'node:crypto';
import { OBJECTS_ERROR, ObjectsError, whereOf } from '../errors';
import { STORE_TOKEN_ENV, weakToken } from './rendezvous';

export { runIdOf } from './rendezvous';

// node:crypto loads when a store or server is made: importing cuda-ts does not load it.
export const crypto = (): typeof Crypto => require('node:crypto') as typeof Crypto;

// 2: the answer to the challenge carries a second proof, of the run id (issue 47).
export const PROTOCOL = 'cuda-ts-store/2';
export const NONCE_BYTES = 32;
/** The client's answer to the challenge: its nonce, its proof of the token, its proof of the run id. */
export const AUTH_BYTES = 3 * NONCE_BYTES;
/** TCP keepalive on both ends: probes start after this many idle ms (the kernel's interval and count then decide). */
export const KEEPALIVE_MS = 10_000;
/** How long after its timeout a request rejects at the latest when the server does not answer. */
export const ANSWER_SLACK_MS = 5000;
export const HEADER = 5; // op + request id
/** The wire's "wait without a timeout". */
export const NO_TIMEOUT = 0xffffffff;
/** A refusal the client should retry (the server is busy, not saying no). */
export const BUSY = 'busy:';
/** A refusal of a client that knows the token but belongs to another run; the server's run id follows. */
export const OTHER_RUN = 'other run:';

export const enum Op {
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

/**
 * The token from `token`, else from $CUDA_TS_STORE_TOKEN; a TypeError naming `call` when neither is set,
 * a RangeError when it is weak (under 128 bits by `tokenBits`, or fewer than 8 distinct characters):
 * one recorded handshake lets anyone test guesses offline, so the token must resist brute force.
 */
export function storeToken(token: unknown, call: string): string {
  const t = token ?? process.env[STORE_TOKEN_ENV];
  if (typeof t !== 'string' || t.length === 0) {
    throw new TypeError(
      `${call}: a shared token is required: pass { token } or set ${STORE_TOKEN_ENV} to the same secret in every process (cuda-ts-run sets it)`,
    );
  }
  if (t.length > 4096) throw new RangeError(`${call}: the token is ${t.length} characters; at most 4096`);
  const weak = weakToken(t);
  if (weak) throw new RangeError(`${call}: ${weak}`);
  return t;
}

/**
 * HMAC-SHA256 under the token of the role's label, the run id (length first, for 'server' and 'run') and
 * both nonces. 'client' proves the token alone, so a server can tell a wrong token (counted as a failed
 * guess) from a right token of another run (told which run it serves).
 */
export function proof(token: string, role: 'client' | 'server' | 'run', a: Buffer, b: Buffer, runId = ''): Buffer {
  const h = crypto().createHmac('sha256', token).update(`${PROTOCOL}/${role}`);
  if (role !== 'client') h.update(`${runId.length}:${runId}`);
  return h.update(a).update(b).digest();
}

export function frame(op: Op, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const out = Buffer.allocUnsafe(4 + HEADER + payload.length);
  out.writeUInt32BE(HEADER + payload.length, 0);
  out.writeUInt8(op, 4);
  out.writeUInt32BE(id >>> 0, 5);
  payload.copy(out, 9);
  return out;
}

export interface Frame {
  op: number;
  id: number;
  payload: Buffer;
}

/** Splits a byte stream into frames; refuses a frame longer than `max` as soon as its length is read. */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  constructor(private readonly max: number) {}

  /** Appends `data`; returns the complete frames (op, id, payload) or throws a StoreError. */
  push(data: Buffer): Frame[] {
    this.chunks.push(data);
    this.buffered += data.length;
    const frames: Frame[] = [];
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
export function encodeKey(key: string): Buffer {
  const k = Buffer.from(key, 'utf8');
  const out = Buffer.allocUnsafe(2 + k.length);
  out.writeUInt16BE(k.length, 0);
  k.copy(out, 2);
  return out;
}

export class PayloadReader {
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

/** A timeout argument: a non-negative safe integer of ms, or Infinity (no timeout). */
export function checkTimeout(call: string, v: unknown, name = 'timeoutMs'): number {
  if (typeof v !== 'number' || !(v === Infinity || (Number.isSafeInteger(v) && v >= 0))) {
    throw new RangeError(`${call}: ${name} must be a non-negative integer of ms or Infinity, got ${String(v)}`);
  }
  return v;
}

/** A wait's timeout as it travels: ms below 0xffffffff, else "no timeout". */
export function wireTimeout(ms: number): number {
  return ms >= NO_TIMEOUT ? NO_TIMEOUT : ms;
}
