// Passing a file descriptor from one process to another over a Unix domain socket (SCM_RIGHTS).
//
// Why: a CUDA pool exported with cuMemPoolExportToShareableHandle is a POSIX file descriptor of the
// exporting process; the importer needs a duplicate of that *open file description*. pidfd_getfd is
// often refused in containers (seccomp, Yama), and re-opening /proc/<pid>/fd/<n> opens a device or
// anon-inode file anew instead of duplicating it. Passing the descriptor with SCM_RIGHTS is what the
// kernel offers for exactly this, and needs neither ptrace permission nor /proc.
//
// API:
//   - serveDescriptor(fd) in the exporting process registers `fd` under a fresh random token and returns
//     a DescriptorTicket { socket, token, pid, threadId } (plain strings and numbers: JSON- and
//     postMessage-safe). The first call starts a node:net server on an abstract-namespace Unix socket
//     ('\0cuda-ts-fd-<pid>-<random hex>'; the ticket's `socket` is that name without the leading NUL).
//     The server is unref()ed: it never keeps the process alive. The caller keeps owning `fd`: it is not
//     closed here; close it only after withdrawing it (or once every importer has received it).
//   - withdrawDescriptor(ticket) unregisters it (later requests with that token are refused); when the
//     last registered descriptor is withdrawn the server closes (a later serveDescriptor starts a new one,
//     under a new name).
//   - receiveDescriptor(ticket, { timeoutMs = 10000 }) in the importing process connects, sends the token,
//     and returns a new descriptor (close-on-exec) for the same open file description. It is synchronous,
//     done entirely through libc (socket/connect/write/recvmsg via koffi), and bounded by timeoutMs
//     (SO_SNDTIMEO/SO_RCVTIMEO set to what is left of it before each step): it never hangs past it.
//
// Protocol: the client writes the token and '\n' (the server reads at most 256 bytes, and gives up after
// 3 s without a newline). Unknown token: the server answers the byte '0' and ends. Known token: it
// answers the byte '1' with the descriptor attached (sendmsg with SCM_RIGHTS on the connection's own fd;
// nothing else is written through libuv on that connection), then ends. 'E': the descriptor could not be
// sent (e.g. the exporter closed it). Anything malformed only destroys that connection.
//
// DEADLOCK CAVEAT: the exporter answers from its event loop. receiveDescriptor blocks its thread, so it
// must not run on the thread that served the descriptor (it would wait for itself until the timeout).
// It therefore refuses a ticket served by its own thread (same pid and threadId; for a ticket without
// threadId: same pid on the main thread): there, use the descriptor directly. A worker thread of the
// exporting process may receive it (the exporter's thread keeps running its event loop), and so may
// another process — as long as the exporting thread's event loop is not blocked (else: the timeout error).
//
// TRUST BOUNDARY: the token is the secret. Anyone who can connect to the socket (abstract Unix sockets
// are visible to every process in the same network namespace) and knows the token gets the descriptor —
// for a CUDA pool, read/write access to all of its memory. The server also checks the connecting peer's
// credentials (SO_PEERCRED) and refuses processes of another uid than its own, but share tickets only
// with processes you trust as much as the exporter, and withdraw them when done. Conversely the importer
// checks (SO_PEERCRED) that the socket it reached is held by ticket.pid and runs as its own uid before it
// sends the token, so a process that bound a look-alike name cannot collect it. (This also means the
// importer must see the exporter's pid as ticket.pid: same pid namespace.)
//
// Node quirk: Node 20's libuv binds an abstract name padded with NULs to the whole sun_path, newer ones
// with its exact length; these are different addresses, so the importer tries the exact one, then the
// padded one. Another local process may bind the form the exporter did not: the importer then finds a
// stranger there (SO_PEERCRED), sends it nothing and tries the other form, so a squatter cannot block
// the handover either.
//
// Tickets do not expire by themselves: a ticket is good until withdrawDescriptor, or until `ttlMs`
// when serveDescriptor was given one (the exporter cannot know how long importers take to come).
//
// Linux only (abstract sockets, SCM_RIGHTS layout of LP64 Linux: x86_64 and aarch64); elsewhere both
// serveDescriptor and receiveDescriptor throw.
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { koffi } from '../../support';
import { type Libc, type Ptr, loadLibc } from './libc';
import { OBJECTS_ERROR, ObjectsError } from '../errors';
import { MAX_TIMER_MS } from '../long-timeout';

/** What an importer needs to receive a served descriptor (JSON- and postMessage-safe). */
export interface DescriptorTicket {
  /** The abstract Unix socket name of the exporter's server, without its leading NUL byte. */
  readonly socket: string;
  /** The secret that names the descriptor (64 hex digits). */
  readonly token: string;
  /** The exporting process. */
  readonly pid: number;
  /** The worker_threads threadId of the exporting thread (0: main thread). Optional when checked. */
  readonly threadId?: number;
}

export interface ServeOptions {
  /** Withdraw the ticket by itself after this many ms (default: only withdrawDescriptor does). */
  ttlMs?: number;
}

export interface ReceiveOptions {
  /** Upper bound for the whole exchange, in milliseconds (default 10000). */
  timeoutMs?: number;
}

// --- constants (Linux, generic across x86_64 and aarch64) ---
const AF_UNIX = 1;
const SOCK_STREAM = 1;
const SOCK_CLOEXEC = 0x80000;
const SOL_SOCKET = 1;
const SCM_RIGHTS = 1;
const SO_PEERCRED = 17;
const SO_RCVTIMEO = 20;
const SO_SNDTIMEO = 21;
const MSG_NOSIGNAL = 0x4000;
const MSG_CTRUNC = 0x8;
const MSG_CMSG_CLOEXEC = 0x40000000;
const EINTR = 4;
const EAGAIN = 11;
const MAX_LINE = 256;
const LINE_TIMEOUT_MS = 3000;
// LP64 layouts
const MSGHDR_SIZE = 56;
const CMSG_HDR = 16; // CMSG_LEN(0)
const CMSG_LEN_INT = CMSG_HDR + 4; // 20
const CMSG_SPACE_INT = 24;

const ERRNO_NAMES: Record<number, string> = {
  1: 'EPERM',
  2: 'ENOENT',
  4: 'EINTR',
  9: 'EBADF',
  11: 'EAGAIN',
  12: 'ENOMEM',
  13: 'EACCES',
  22: 'EINVAL',
  24: 'EMFILE',
  32: 'EPIPE',
  90: 'EMSGSIZE',
  97: 'EAFNOSUPPORT',
  104: 'ECONNRESET',
  110: 'ETIMEDOUT',
  111: 'ECONNREFUSED',
  115: 'EINPROGRESS',
};
function errnoText(e: number): string {
  return `errno ${e}${ERRNO_NAMES[e] ? ' ' + ERRNO_NAMES[e] : ''}`;
}

function requireLinux(call: string): void {
  if (process.platform !== 'linux')
    throw new ObjectsError(
      call,
      OBJECTS_ERROR.unavailable,
      `${call}: passing descriptors over abstract Unix sockets is only supported on Linux (this is ${process.platform})`,
    );
}

/** Native memory C sees by pointer, with a DataView over it; always free() it. */
class NativeBlock {
  readonly ptr: Ptr;
  readonly view: DataView;
  readonly bytes: Uint8Array;
  constructor(readonly size: number) {
    this.ptr = BigInt(koffi.alloc('uint8_t', size) as bigint | number);
    const ab = koffi.view(this.ptr, size);
    this.view = new DataView(ab);
    this.bytes = new Uint8Array(ab);
    this.bytes.fill(0);
  }
  at(offset: number): Ptr {
    return this.ptr + BigInt(offset);
  }
  free(): void {
    koffi.free(this.ptr);
  }
}

function currentThreadId(): number {
  return (require('node:worker_threads') as typeof import('node:worker_threads')).threadId;
}
function onMainThread(): boolean {
  return (require('node:worker_threads') as typeof import('node:worker_threads')).isMainThread;
}

// ------------------------------------------------------------------------------------------------
// Exporting side
// ------------------------------------------------------------------------------------------------

let server: Server | undefined;
let serverName = ''; // without the NUL
const served = new Map<string, number>(); // token -> fd

function startServer(): void {
  const name = `cuda-ts-fd-${process.pid}-${randomBytes(8).toString('hex')}`;
  const s = createServer({ allowHalfOpen: false, pauseOnConnect: false }, (conn) => handleConnection(conn));
  s.on('error', () => {
    // Listening failed (or the server broke): forget it, so the next serveDescriptor starts anew.
    if (server === s) {
      server = undefined;
      serverName = '';
    }
  });
  s.listen('\0' + name); // binds and listens synchronously for a Unix socket
  s.unref();
  server = s;
  serverName = name;
}

function stopServerIfIdle(): void {
  if (served.size !== 0 || !server) return;
  const s = server;
  server = undefined;
  serverName = '';
  s.close();
}

/** The uid of the connected peer (SO_PEERCRED), or undefined when it cannot be read. */
function peerUid(fd: number): number | undefined {
  const c = loadLibc();
  const cred = new NativeBlock(12 + 4); // struct ucred { pid_t pid; uid_t uid; gid_t gid; } + socklen_t
  try {
    cred.view.setUint32(12, 12, true);
    if (c.getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred.ptr, cred.at(12)) !== 0) return undefined;
    return cred.view.getUint32(4, true);
  } finally {
    cred.free();
  }
}

/** Sends the byte '1' with `fd` as SCM_RIGHTS over the connected socket `sock`; false when sendmsg failed. */
function sendWithDescriptor(sock: number, fd: number): boolean {
  const c = loadLibc();
  // msghdr (56) | iovec (16) | data byte (8) | control (24)
  const m = new NativeBlock(MSGHDR_SIZE + 16 + 8 + CMSG_SPACE_INT);
  try {
    const iov = MSGHDR_SIZE,
      data = iov + 16,
      ctl = data + 8;
    m.bytes[data] = 0x31; // '1'
    m.view.setBigUint64(iov, m.at(data), true);
    m.view.setBigUint64(iov + 8, 1n, true);
    m.view.setBigUint64(ctl, BigInt(CMSG_LEN_INT), true); // cmsg_len
    m.view.setInt32(ctl + 8, SOL_SOCKET, true);
    m.view.setInt32(ctl + 12, SCM_RIGHTS, true);
    m.view.setInt32(ctl + 16, fd, true);
    m.view.setBigUint64(16, m.at(iov), true); // msg_iov
    m.view.setBigUint64(24, 1n, true); // msg_iovlen
    m.view.setBigUint64(32, m.at(ctl), true); // msg_control
    m.view.setBigUint64(40, BigInt(CMSG_SPACE_INT), true); // msg_controllen
    for (;;) {
      const n = c.sendmsg(sock, m.ptr, MSG_NOSIGNAL);
      if (n === 1) return true;
      if (n < 0 && koffi.errno() === EINTR) continue;
      return false;
    }
  } finally {
    m.free();
  }
}

function handleConnection(conn: Socket): void {
  conn.unref(); // like the server: a handover in progress never keeps the exporting process alive
  let chunks: Buffer[] = [];
  let length = 0;
  let done = false;
  const fail = (): void => {
    done = true;
    clearTimeout(timer);
    conn.destroy();
  };
  const timer = setTimeout(fail, LINE_TIMEOUT_MS);
  timer.unref();
  conn.on('error', fail);
  conn.on('end', () => {
    if (!done) fail();
  });
  try {
    const fd = (conn as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
    if (typeof fd !== 'number' || fd < 0) return fail();
    const uid = peerUid(fd);
    if (uid === undefined || (typeof process.getuid === 'function' && uid !== process.getuid())) return fail();
  } catch {
    return fail();
  }
  conn.on('data', (chunk: Buffer) => {
    if (done) return;
    try {
      const nl = chunk.indexOf(0x0a);
      const take = nl < 0 ? chunk : chunk.subarray(0, nl);
      length += take.length;
      if (length > MAX_LINE) return fail();
      chunks.push(take);
      if (nl < 0) return;
      done = true;
      clearTimeout(timer);
      conn.pause();
      const token = Buffer.concat(chunks).toString('latin1');
      chunks = [];
      answer(conn, token);
    } catch {
      fail();
    }
  });
}

function answer(conn: Socket, token: string): void {
  const fd = served.get(token);
  // The socket is paused (it never reads the client's FIN), so it is destroyed once the answer is out,
  // or it would stay open for good.
  if (fd === undefined) {
    conn.end('0', () => conn.destroy());
    return;
  }
  const sock = (conn as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  if (typeof sock !== 'number' || sock < 0) {
    conn.destroy();
    return;
  }
  if (sendWithDescriptor(sock, fd))
    conn.destroy(); // sendmsg queued the answer in the kernel already
  else conn.end('E', () => conn.destroy());
}

/**
 * Registers `fd` (a descriptor of this process) so that another process (or a worker thread) can receive
 * a duplicate of it with {@link receiveDescriptor}; returns the ticket to hand to it. Starts the
 * descriptor server on first use. `fd` stays owned by the caller: withdraw the ticket before closing it.
 */
export function serveDescriptor(fd: number, options: ServeOptions = {}): DescriptorTicket {
  const call = 'serveDescriptor';
  requireLinux(call);
  if (!Number.isInteger(fd) || fd < 0) throw new TypeError(`${call}: fd must be a non-negative integer`);
  if (typeof options !== 'object' || options === null) throw new TypeError(`${call}: options must be an object`);
  const { ttlMs } = options;
  if (ttlMs !== undefined && !(Number.isSafeInteger(ttlMs) && ttlMs > 0 && ttlMs <= MAX_TIMER_MS))
    throw new RangeError(`${call}: ttlMs must be an integer in [1, 2^31), got ${String(ttlMs)}`);
  if (!server) startServer();
  const token = randomBytes(32).toString('hex');
  served.set(token, fd);
  const ticket = { socket: serverName, token, pid: process.pid, threadId: currentThreadId() };
  if (ttlMs !== undefined) setTimeout(() => withdrawDescriptor(ticket), ttlMs).unref();
  return ticket;
}

/** Unregisters a served descriptor (does not close it); closes the server when none is left. */
export function withdrawDescriptor(ticket: DescriptorTicket): boolean {
  const t = checkTicket('withdrawDescriptor', ticket);
  const had = served.delete(t.token);
  stopServerIfIdle();
  return had;
}

// ------------------------------------------------------------------------------------------------
// Importing side
// ------------------------------------------------------------------------------------------------

function checkTicket(call: string, ticket: unknown): DescriptorTicket {
  if (typeof ticket !== 'object' || ticket === null) throw new TypeError(`${call}: ticket must be an object from serveDescriptor`);
  const t = ticket as Record<string, unknown>;
  if (typeof t.socket !== 'string' || t.socket.length === 0 || t.socket.includes('\0') || Buffer.byteLength(t.socket) > 107) {
    throw new TypeError(`${call}: ticket.socket must be a non-empty socket name (at most 107 bytes, no NUL)`);
  }
  if (typeof t.token !== 'string' || !/^[0-9a-f]{64}$/.test(t.token)) throw new TypeError(`${call}: ticket.token must be 64 lowercase hex digits`);
  if (!Number.isInteger(t.pid) || (t.pid as number) <= 0) throw new TypeError(`${call}: ticket.pid must be a process id`);
  if (t.threadId !== undefined && (!Number.isInteger(t.threadId) || (t.threadId as number) < 0))
    throw new TypeError(`${call}: ticket.threadId must be a non-negative integer when given`);
  return t as unknown as DescriptorTicket;
}

/**
 * Receives a duplicate of the descriptor a ticket names (from {@link serveDescriptor} in another process
 * or thread): synchronous, bounded by `timeoutMs`. The returned descriptor is close-on-exec and the
 * caller's to close.
 */
export function receiveDescriptor(ticket: DescriptorTicket, options: ReceiveOptions = {}): number {
  const call = 'receiveDescriptor';
  const t = checkTicket(call, ticket);
  const timeoutMs = options.timeoutMs ?? 10000;
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new TypeError(`${call}: timeoutMs must be a positive number`);
  requireLinux(call);
  refuseOwnThread(call, t);
  const x: Exchange = { call, c: loadLibc(), deadline: Date.now() + timeoutMs, timeoutMs, mem: new NativeBlock(CTL + CMSG_SPACE_INT), sock: -1 };
  try {
    connectToExporter(x, Buffer.from(t.socket, 'utf8'), t.pid);
    sendToken(x, Buffer.from(t.token + '\n', 'latin1'));
    return takeDescriptor(x, receiveAnswer(x));
  } finally {
    if (x.sock >= 0) x.c.close(x.sock);
    x.mem.free();
  }
}

/** A ticket served by this very thread would deadlock: its event loop must answer while we block it. */
function refuseOwnThread(call: string, t: DescriptorTicket): void {
  if (t.pid !== process.pid) return;
  const sameThread = t.threadId !== undefined ? t.threadId === currentThreadId() : onMainThread();
  if (sameThread) {
    throw new ObjectsError(
      call,
      OBJECTS_ERROR.unavailable,
      `${call}: this ticket was served by this very thread, whose event loop would have to answer while this call blocks it (a deadlock); use the descriptor directly (or receive it from a worker thread)`,
    );
  }
}

// The importer's native block: timeval (16) | sockaddr_un (110) pad to 112 | token (65) pad to 72 |
// msghdr (56) | iovec (16) | byte (8) | control (24)
const TV = 0,
  ADDR = 16,
  TOK = ADDR + 112,
  MSG = TOK + 72,
  IOV = MSG + MSGHDR_SIZE,
  DATA = IOV + 16,
  CTL = DATA + 8;

/** One receiveDescriptor exchange: its libc, native block, socket (-1: none yet) and deadline. */
interface Exchange {
  readonly call: string;
  readonly c: Libc;
  readonly mem: NativeBlock;
  readonly deadline: number;
  readonly timeoutMs: number;
  sock: number;
}

function timedOut(x: Exchange): ObjectsError {
  return new ObjectsError(
    x.call,
    OBJECTS_ERROR.timeout,
    `${x.call}: timed out after ${x.timeoutMs} ms (the exporter's event loop did not answer: is it blocked?)`,
  );
}

function failed(x: Exchange, what: string): ObjectsError {
  return new ObjectsError(x.call, OBJECTS_ERROR.unavailable, `${x.call}: ${what}`);
}

/** Sets SO_RCVTIMEO/SO_SNDTIMEO to what is left until the deadline; throws the timeout error when nothing is. */
function setTimeouts(x: Exchange): void {
  const left = x.deadline - Date.now();
  if (left <= 0) throw timedOut(x);
  x.mem.view.setBigInt64(TV, BigInt(Math.floor(left / 1000)), true);
  x.mem.view.setBigInt64(TV + 8, BigInt(Math.max(1, (left % 1000) * 1000)), true);
  for (const opt of [SO_RCVTIMEO, SO_SNDTIMEO]) {
    if (x.c.setsockopt(x.sock, SOL_SOCKET, opt, x.mem.at(TV), 16) !== 0)
      throw failed(x, `setsockopt(${opt === SO_RCVTIMEO ? 'SO_RCVTIMEO' : 'SO_SNDTIMEO'}) failed (${errnoText(koffi.errno())})`);
  }
}

/**
 * Connects `x.sock` to the abstract socket `name`. sockaddr_un { sa_family_t sun_family; char
 * sun_path[108]; }, abstract: '\0' + name. Node's libuv binds an abstract name either with its exact
 * length (newer libuv) or padded with NULs to the whole sun_path (Node 20): two different addresses, so
 * try the exact one, then the padded one.
 */
function connectToExporter(x: Exchange, name: Buffer, pid: number): void {
  x.mem.view.setUint16(ADDR, AF_UNIX, true);
  x.mem.bytes.set(name, ADDR + 3);
  let lastErrno = 0;
  let stranger: ObjectsError | undefined;
  for (const addrLen of [2 + 1 + name.length, 110]) {
    x.sock = x.c.socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (x.sock < 0) throw failed(x, `socket(AF_UNIX) failed (${errnoText(koffi.errno())})`);
    lastErrno = connectOnce(x, addrLen);
    if (lastErrno === 0) {
      stranger = exporterMismatch(x, pid);
      if (!stranger) return;
    }
    x.c.close(x.sock);
    x.sock = -1;
    // "nobody listens there" and "someone else listens there" are worth the other form
    if (lastErrno !== 0 && lastErrno !== 111 && lastErrno !== 2) break;
  }
  if (stranger) throw stranger;
  const e = lastErrno;
  throw failed(
    x,
    `connect to the exporter's descriptor socket failed (${errnoText(e)}${e === 111 || e === 2 ? ': is the exporting process alive, and has it not withdrawn all its descriptors?' : ''})`,
  );
}

/** connect() with the address at ADDR, retried on EINTR; 0 or the errno it failed with. */
function connectOnce(x: Exchange, addrLen: number): number {
  for (;;) {
    setTimeouts(x);
    if (x.c.connect(x.sock, x.mem.at(ADDR), addrLen) === 0) return 0;
    const e = koffi.errno();
    if (e === EINTR) continue;
    if (e === EAGAIN || e === 115 /* EINPROGRESS */) throw timedOut(x);
    return e;
  }
}

/**
 * Why the listening side is not the exporting process itself (SO_PEERCRED), or undefined when it is:
 * nobody who bound the other form of the name may collect the token.
 */
function exporterMismatch(x: Exchange, pid: number): ObjectsError | undefined {
  const { mem } = x;
  mem.view.setUint32(MSG + 12, 12, true);
  if (x.c.getsockopt(x.sock, SOL_SOCKET, SO_PEERCRED, mem.at(MSG), mem.at(MSG + 12)) !== 0)
    throw failed(x, `getsockopt(SO_PEERCRED) failed (${errnoText(koffi.errno())})`);
  const peerPid = mem.view.getInt32(MSG, true);
  const peerUid = mem.view.getUint32(MSG + 4, true);
  if (peerPid !== pid) {
    return failed(
      x,
      `the descriptor socket is held by process ${peerPid}, not by the exporting process ${pid} (is the importer in another pid namespace?); refusing to send the token`,
    );
  }
  if (typeof process.getuid === 'function' && peerUid !== process.getuid()) {
    return failed(x, `the exporting process runs as uid ${peerUid}, this one as ${process.getuid()}; refusing`);
  }
  return undefined;
}

/** Writes the token line. */
function sendToken(x: Exchange, token: Buffer): void {
  x.mem.bytes.set(token, TOK);
  let sent = 0;
  while (sent < token.length) {
    setTimeouts(x);
    const n = x.c.write(x.sock, x.mem.at(TOK + sent), token.length - sent);
    if (n > 0) {
      sent += n;
      continue;
    }
    const e = koffi.errno();
    if (n < 0 && e === EINTR) continue;
    if (n < 0 && e === EAGAIN) throw timedOut(x);
    throw failed(x, `sending the ticket's token failed (${errnoText(e)})`);
  }
}

/** Receives the answer (one byte, with the descriptor attached when it is '1'); recvmsg's result. */
function receiveAnswer(x: Exchange): number {
  const { mem } = x;
  for (;;) {
    setTimeouts(x);
    mem.bytes.fill(0, MSG, CTL + CMSG_SPACE_INT);
    mem.view.setBigUint64(IOV, mem.at(DATA), true);
    mem.view.setBigUint64(IOV + 8, 1n, true);
    mem.view.setBigUint64(MSG + 16, mem.at(IOV), true);
    mem.view.setBigUint64(MSG + 24, 1n, true);
    mem.view.setBigUint64(MSG + 32, mem.at(CTL), true);
    mem.view.setBigUint64(MSG + 40, BigInt(CMSG_SPACE_INT), true);
    const n = x.c.recvmsg(x.sock, mem.at(MSG), MSG_CMSG_CLOEXEC);
    if (n >= 0) return n;
    const e = koffi.errno();
    if (e === EINTR) continue;
    if (e === EAGAIN) throw timedOut(x);
    throw failed(x, `receiving the exporter's answer failed (${errnoText(e)})`);
  }
}

/** The descriptor the answer carried; any descriptor that arrived is closed when the answer is refused. */
function takeDescriptor(x: Exchange, n: number): number {
  const { mem } = x;
  let received = -1;
  const controlLen = Number(mem.view.getBigUint64(MSG + 40, true));
  if (controlLen >= CMSG_LEN_INT) {
    const cmsgLen = Number(mem.view.getBigUint64(CTL, true));
    const level = mem.view.getInt32(CTL + 8, true);
    const type = mem.view.getInt32(CTL + 12, true);
    if (level === SOL_SOCKET && type === SCM_RIGHTS && cmsgLen >= CMSG_LEN_INT) received = mem.view.getInt32(CTL + 16, true);
  }
  const flags = mem.view.getInt32(MSG + 48, true);
  const answerByte = n === 1 ? mem.bytes[DATA] : -1;
  const reject = (why: string): never => {
    if (received >= 0) x.c.close(received);
    throw failed(x, why);
  };
  if (n === 0) return reject('the exporter closed the connection without answering (its uid differs from this process, or it broke down)');
  if (flags & MSG_CTRUNC) return reject('the exporter sent more ancillary data than one descriptor (MSG_CTRUNC); refusing it');
  if (answerByte === 0x30) return reject('the exporter does not know this ticket (withdrawn?)');
  if (answerByte === 0x45) return reject('the exporter could not send the descriptor (was it closed before the ticket was withdrawn?)');
  if (answerByte !== 0x31) return reject(`unexpected answer byte ${answerByte} from the exporter`);
  if (received < 0) return reject('the exporter answered without attaching a descriptor');
  return received;
}
