// src/memory/fd-passing.ts: descriptors passed over an abstract Unix socket with SCM_RIGHTS, for real (no mocks).
// The exporter is a child process (test/fixtures/fd-passing-exporter.ts, run through tsx); this process
// receives synchronously through libc.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';
import koffi from 'koffi';
import { receiveDescriptor, serveDescriptor, withdrawDescriptor, type DescriptorTicket } from '../src/memory/fd-passing';

const ROOT = join(__dirname, '..');
const FIXTURE = join(__dirname, 'fixtures', 'fd-passing-exporter.ts');
const linux = process.platform === 'linux';
const d = linux ? describe : describe.skip;

interface Exporter {
  child: ChildProcessWithoutNullStreams;
  next(): Promise<string>;
  send(cmd: string): Promise<string>;
  stderr(): string;
}

function startExporter(mode: 'serve' | 'block' | 'linger'): Exporter {
  // Node preloads tsx's CommonJS hook; Bun and Deno take the repository's runner (their ES loaders cannot link the sources)
  const runner = process.versions.bun || process.versions.deno ? [join(ROOT, 'scripts', 'run-ts.cjs')] : ['--require', 'tsx/cjs'];
  const child = spawn(process.execPath, [...runner, FIXTURE, mode], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const lines: string[] = [];
  const waiters: Array<(l: string) => void> = [];
  createInterface({ input: child.stdout }).on('line', (l) => {
    const w = waiters.shift();
    if (w) w(l);
    else lines.push(l);
  });
  const next = (): Promise<string> =>
    lines.length
      ? Promise.resolve(lines.shift()!)
      : new Promise((resolve, reject) => {
          const t = setTimeout(() => reject(new Error(`exporter did not answer; stderr: ${err}`)), 15000);
          waiters.push((l) => {
            clearTimeout(t);
            resolve(l);
          });
        });
  return {
    child,
    next,
    send: (cmd) => {
      child.stdin.write(cmd + '\n');
      return next();
    },
    stderr: () => err,
  };
}

/** Kills the exporter (SIGKILL: gone without any cleanup) and removes its temp file's folder, if any. */
async function stop(e: Exporter, tempFile?: string): Promise<void> {
  if (e.child.exitCode === null && e.child.signalCode === null) {
    await new Promise<void>((resolve) => {
      e.child.once('exit', () => resolve());
      e.child.kill('SIGKILL');
    });
  }
  if (tempFile) rmSync(dirname(tempFile), { recursive: true, force: true });
}

// The received descriptors are this process's own descriptor numbers: the test reads, writes and closes
// them through libc, as a C library handed one would. (node:fs would do under Node and Bun, but Deno's
// node:fs takes its own resource numbers, not the process's descriptors.)
const libc = linux ? koffi.load('libc.so.6') : undefined;
const libcRead = libc?.func('intptr_t read(int fd, _Out_ uint8_t *buf, size_t count)');
const libcWrite = libc?.func('intptr_t write(int fd, const uint8_t *buf, size_t count)');
const libcClose = libc?.func('int close(int fd)');

function closeFd(fd: number): void {
  if (libcClose!(fd) !== 0) throw new Error(`close(${fd}) failed`);
}

function writeFd(fd: number, text: string): void {
  const b = Buffer.from(text);
  if (Number(libcWrite!(fd, b, b.length)) !== b.length) throw new Error(`write(${fd}) failed`);
}

/** Reads exactly n bytes from a (blocking) descriptor. */
function readExactly(fd: number, n: number): string {
  const buf = Buffer.alloc(n);
  let got = 0;
  while (got < n) {
    const part = Buffer.alloc(n - got);
    const r = Number(libcRead!(fd, part, n - got));
    if (r < 0) throw new Error(`read(${fd}) failed`);
    if (r === 0) break;
    part.copy(buf, got, 0, r);
    got += r;
  }
  return buf.subarray(0, got).toString();
}

/** Sends raw bytes to the exporter's socket; resolves with what came back once the server closed it. */
function rawExchange(ticket: DescriptorTicket, payload: Buffer | string): Promise<{ reply: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const s = connect('\0' + ticket.socket);
    let reply = '';
    s.on('data', (b: Buffer) => (reply += b.toString('latin1')));
    s.on('error', () => {
      /* a reset is a close too */
    });
    s.on('close', () => resolve({ reply, ms: Date.now() - t0 }));
    s.on('connect', () => s.write(payload));
    setTimeout(() => reject(new Error('server never closed the connection')), 10000).unref();
  });
}

d('fd-passing across processes', () => {
  let exp: Exporter;
  let tickets: { pipe: DescriptorTicket; file: DescriptorTicket; path: string };

  beforeAll(async () => {
    exp = startExporter('serve');
    tickets = JSON.parse(await exp.next());
  }, 30000);
  afterAll(async () => {
    await stop(exp, tickets?.path);
  });

  test('the ticket is plain JSON data', () => {
    const t = tickets.pipe;
    expect(t.pid).toBe(exp.child.pid);
    expect(t.token).toMatch(/^[0-9a-f]{64}$/);
    expect(t.socket).toMatch(/^cuda-ts-fd-\d+-[0-9a-f]+$/);
    expect(JSON.parse(JSON.stringify(t))).toEqual(t);
  });

  test('the received pipe end is the same pipe: bytes the child writes afterwards arrive', async () => {
    const fd = receiveDescriptor(tickets.pipe);
    try {
      expect(fd).toBeGreaterThanOrEqual(0);
      expect(await exp.send('pipe-write')).toBe('ok');
      expect(readExactly(fd, 'hello-from-child'.length)).toBe('hello-from-child');
    } finally {
      closeFd(fd);
    }
  });

  test('the received file descriptor shares the open file description (file offset)', async () => {
    const fd = receiveDescriptor(tickets.file);
    try {
      // The child wrote 'abcdef' (offset 6). Writing at the current offset here continues at 6 only if the
      // offset is shared (a re-open through /proc would start at 0 and overwrite 'abc').
      writeFd(fd, 'XYZ');
      expect(await exp.send('file-write')).toBe('ok');
      expect(readFileSync(tickets.path, 'utf8')).toBe('abcdefXYZ123');
    } finally {
      closeFd(fd);
    }
  });

  test('a wrong token is refused clearly, and the server keeps serving', () => {
    const wrong = { ...tickets.pipe, token: 'f'.repeat(64) };
    expect(() => receiveDescriptor(wrong)).toThrow(/receiveDescriptor: the exporter does not know this ticket/);
    const fd = receiveDescriptor(tickets.pipe);
    expect(fd).toBeGreaterThanOrEqual(0);
    closeFd(fd);
  });

  test('garbage, oversized lines and silent clients only lose their own connection', async () => {
    const [oversized, garbage, silent] = await Promise.all([
      rawExchange(tickets.pipe, Buffer.alloc(300, 0x78)),
      rawExchange(tickets.pipe, Buffer.from([0xff, 0xfe, 0x00, 0x0a, 0x31, 0x32])),
      rawExchange(tickets.pipe, 'abc'),
    ]);
    expect(oversized.reply).toBe('');
    expect(garbage.reply).toBe('0');
    expect(silent.reply).toBe('');
    expect(silent.ms).toBeGreaterThanOrEqual(2500);
    expect(silent.ms).toBeLessThan(6000);
    const fd = receiveDescriptor(tickets.pipe);
    expect(fd).toBeGreaterThanOrEqual(0);
    closeFd(fd);
  }, 15000);

  test('a squatter on the other form of the socket name neither gets the token nor blocks the handover', () => {
    // Node 20 binds the name padded to the whole sun_path; the importer tries the exact-length form
    // first. A local process that bound that form must be passed over (SO_PEERCRED), not trusted and
    // not fatal. (On newer Node the exporter holds the exact form itself and the bind fails: no squatter.)
    const libc = koffi.load('libc.so.6');
    const socket = libc.func('int socket(int, int, int)');
    const bind = libc.func('int bind(int, void *, uint32_t)');
    const listen = libc.func('int listen(int, int)');
    const close = libc.func('int close(int)');
    const name = Buffer.from(tickets.file.socket, 'utf8');
    const addr = Buffer.alloc(110);
    addr.writeUInt16LE(1, 0); // AF_UNIX, then '\0' + name
    name.copy(addr, 3);
    const squatter = socket(1, 1, 0) as number;
    try {
      const bound = bind(squatter, addr, 3 + name.length) === 0 && listen(squatter, 4) === 0;
      const fd = receiveDescriptor(tickets.file, { timeoutMs: 3000 });
      expect(fd).toBeGreaterThanOrEqual(0);
      closeFd(fd);
      if (process.versions.node.startsWith('20.')) expect(bound).toBe(true);
    } finally {
      close(squatter);
    }
  });

  test('a ticket served with ttlMs withdraws itself; bad ttlMs is a RangeError', async () => {
    const t = serveDescriptor(0, { ttlMs: 100 }); // stdin: any descriptor of this process will do
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(withdrawDescriptor(t)).toBe(false); // already withdrawn by its ttl
    const kept = serveDescriptor(0);
    expect(withdrawDescriptor(kept)).toBe(true);
    expect(() => serveDescriptor(0, { ttlMs: 0 })).toThrow(/serveDescriptor: ttlMs must be an integer/);
    expect(() => serveDescriptor(0, { ttlMs: 2 ** 31 })).toThrow(RangeError);
  });

  test('a withdrawn ticket is refused', async () => {
    expect(await exp.send('withdraw-pipe')).toBe('ok');
    expect(() => receiveDescriptor(tickets.pipe)).toThrow(/does not know this ticket \(withdrawn\?\)/);
    // the file is still served
    const fd = receiveDescriptor(tickets.file);
    closeFd(fd);
  });

  test('a gone exporter fails fast, without hanging', async () => {
    const other = startExporter('serve');
    const t = JSON.parse(await other.next()) as { pipe: DescriptorTicket; path: string };
    await stop(other, t.path);
    const t0 = Date.now();
    expect(() => receiveDescriptor(t.pipe, { timeoutMs: 2000 })).toThrow(
      /receiveDescriptor: connect to the exporter's descriptor socket failed \(errno 111 ECONNREFUSED/,
    );
    expect(Date.now() - t0).toBeLessThan(3000);
  }, 30000);

  test('after a handover (and a refused request) nothing keeps the exporter alive: it exits when its own work ends', async () => {
    const lingering = startExporter('linger');
    try {
      const t0 = Date.now();
      const t = JSON.parse(await lingering.next()) as { pipe: DescriptorTicket };
      const fd = receiveDescriptor(t.pipe);
      closeFd(fd);
      expect(() => receiveDescriptor({ ...t.pipe, token: 'f'.repeat(64) })).toThrow(/does not know this ticket/);
      const code = await new Promise<number | null>((resolve) => lingering.child.once('exit', (c) => resolve(c)));
      expect(code).toBe(0);
      expect(Date.now() - t0).toBeLessThan(6000); // its 2 s timer, not a connection, decided when it ended
    } finally {
      await stop(lingering);
    }
  }, 30000);

  test('an exporter whose event loop is blocked makes it time out, in about timeoutMs', async () => {
    const blocked = startExporter('block');
    try {
      const t = JSON.parse(await blocked.next()) as { pipe: DescriptorTicket };
      const t0 = Date.now();
      expect(() => receiveDescriptor(t.pipe, { timeoutMs: 1000 })).toThrow(
        /receiveDescriptor: timed out after 1000 ms \(the exporter's event loop did not answer/,
      );
      const ms = Date.now() - t0;
      expect(ms).toBeGreaterThanOrEqual(900);
      expect(ms).toBeLessThan(2000);
    } finally {
      await stop(blocked);
    }
  }, 30000);
});

d('fd-passing within one process', () => {
  test('the serving thread itself is refused; a worker thread receives it', async () => {
    const fds = new Int32Array(2);
    const koffi = require('koffi');
    const pipe2 = koffi.load('libc.so.6').func('int pipe2(void *fds, int flags)');
    expect(pipe2(fds, 0x80000)).toBe(0);
    const [r, w] = [fds[0], fds[1]];
    const ticket = serveDescriptor(r);
    try {
      expect(() => receiveDescriptor(ticket)).toThrow(/receiveDescriptor: this ticket was served by this very thread.*use the descriptor directly/);
      const code = `
        require('tsx/cjs');
        const { parentPort, workerData } = require('node:worker_threads');
        const { receiveDescriptor } = require(workerData.module);
        try { parentPort.postMessage({ fd: receiveDescriptor(workerData.ticket, { timeoutMs: 5000 }) }); }
        catch (e) { parentPort.postMessage({ error: String(e && e.message) }); }
      `;
      const got = await new Promise<{ fd?: number; error?: string }>((resolve, reject) => {
        const worker = new Worker(code, { eval: true, workerData: { ticket, module: join(ROOT, 'src', 'memory', 'fd-passing.ts') } });
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      expect(got.error).toBeUndefined();
      const fd = got.fd!;
      expect(fd).not.toBe(r);
      writeFd(w, 'same-process');
      expect(readExactly(fd, 'same-process'.length)).toBe('same-process');
      closeFd(fd);
    } finally {
      expect(withdrawDescriptor(ticket)).toBe(true);
      closeFd(r);
      closeFd(w);
    }
  }, 30000);
});

describe('fd-passing ticket validation', () => {
  const good: DescriptorTicket = { socket: 'cuda-ts-fd-1-abcd', token: 'a'.repeat(64), pid: 1 };
  test.each([
    ['null', null, /ticket must be an object/],
    ['a string', 'ticket', /ticket must be an object/],
    ['no socket', { token: good.token, pid: 1 }, /ticket\.socket/],
    ['a numeric socket', { ...good, socket: 5 }, /ticket\.socket/],
    ['an empty socket', { ...good, socket: '' }, /ticket\.socket/],
    ['a socket with NUL', { ...good, socket: 'a\0b' }, /ticket\.socket/],
    ['no token', { socket: good.socket, pid: 1 }, /ticket\.token/],
    ['a short token', { ...good, token: 'abc' }, /ticket\.token/],
    ['no pid', { socket: good.socket, token: good.token }, /ticket\.pid/],
    ['a string pid', { ...good, pid: '1' }, /ticket\.pid/],
    ['a negative pid', { ...good, pid: -3 }, /ticket\.pid/],
    ['a fractional threadId', { ...good, threadId: 1.5 }, /ticket\.threadId/],
  ])('%s → TypeError naming the field', (_name, ticket, message) => {
    expect(() => receiveDescriptor(ticket as unknown as DescriptorTicket)).toThrow(TypeError);
    expect(() => receiveDescriptor(ticket as unknown as DescriptorTicket)).toThrow(message);
  });
  test('bad timeoutMs and bad fds are TypeErrors', () => {
    expect(() => receiveDescriptor(good, { timeoutMs: -1 })).toThrow(TypeError);
    expect(() => serveDescriptor(-1)).toThrow(TypeError);
    expect(() => serveDescriptor(1.5 as number)).toThrow(TypeError);
  });
});
