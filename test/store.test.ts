// The TCP store on loopback: set/get/wait/add/check/delete/barrier, timeouts, and bad input (oversized
// frames, a wrong token, garbage bytes) refused on that connection without harming the server.
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import { StoreError, StoreServer, StoreTimeoutError, TcpStore, openStore, parseAddress, storeToken } from '../src/distributed/store';

const token = randomBytes(32).toString('hex');
const wrongToken = randomBytes(32).toString('hex');
let server: StoreServer;
const clients: TcpStore[] = [];

async function client(extra: Partial<Parameters<typeof TcpStore.connect>[0]> = {}): Promise<TcpStore> {
  const c = await TcpStore.connect({ host: '127.0.0.1', port: server.port, token, timeoutMs: 5000, ...extra });
  clients.push(c);
  return c;
}

/** Opens a raw socket, writes `bytes`, resolves with what came back once the server closes it. */
function raw(bytes: Buffer, afterChallenge = false): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port: server.port });
    const got: Buffer[] = [];
    let sent = false;
    s.on('data', (d) => {
      got.push(d);
      if (afterChallenge && !sent) {
        sent = true;
        s.write(bytes);
      }
    });
    s.on('connect', () => {
      if (!afterChallenge) s.write(bytes);
    });
    s.on('error', () => undefined);
    s.on('close', () => resolve(Buffer.concat(got)));
    setTimeout(() => reject(new Error('the server did not close the connection')), 5000).unref();
  });
}

beforeEach(async () => {
  server = await StoreServer.listen({ port: 0, host: '127.0.0.1', token, maxMessageBytes: 4096, handshakeTimeoutMs: 500, log: () => undefined });
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await server.close();
});

test('set/get round trips bytes and strings; get waits for a later set', async () => {
  const a = await client();
  const b = await client();
  await a.set('k', new Uint8Array([1, 2, 3, 255]));
  expect(Array.from(await b.get('k'))).toEqual([1, 2, 3, 255]);
  const later = b.get('later');
  await new Promise((r) => setTimeout(r, 50));
  await a.set('later', 'hello');
  expect((await later).toString()).toBe('hello');
  await a.set('k', 'replaced');
  expect((await b.get('k')).toString()).toBe('replaced');
  expect(server.size).toBe(2);
});

test('add counts atomically across clients; check, delete, wait on several keys', async () => {
  const cs = await Promise.all([client(), client(), client()]);
  const results = await Promise.all(cs.flatMap((c) => [c.add('n'), c.add('n'), c.add('n', 10n)]));
  expect(results.sort((x, y) => x - y).at(-1)).toBe(3 * 12);
  expect((await cs[0].get('n')).toString()).toBe('36');
  expect(await cs[0].add('n', -36)).toBe(0);
  expect(await cs[1].check(['n'])).toBe(true);
  expect(await cs[1].check(['n', 'missing'])).toBe(false);
  const both = cs[2].wait(['x', 'y']);
  await cs[0].set('x', '1');
  expect(await cs[1].check(['x', 'y'])).toBe(false);
  await cs[1].set('y', '2');
  await both;
  expect(await cs[0].delete('x')).toBe(true);
  expect(await cs[0].delete('x')).toBe(false);
  await cs[0].set('text', 'abc');
  await expect(cs[0].add('text')).rejects.toThrow(/does not hold a 64-bit integer/);
});

test('barrier releases only when every process arrived, and is reusable', async () => {
  const cs = await Promise.all([client({ size: 3 }), client({ size: 3 }), client({ size: 3 })]);
  let released = 0;
  const first = cs.slice(0, 2).map((c) => c.barrier('b').then(() => released++));
  await new Promise((r) => setTimeout(r, 100));
  expect(released).toBe(0);
  await Promise.all([...first, cs[2].barrier('b')]);
  expect(released).toBe(2);
  await Promise.all(cs.map((c) => c.barrier('b'))); // second generation
  await expect(cs[0].barrier('lonely', { timeoutMs: 100 })).rejects.toThrow(StoreTimeoutError);
  await expect((await client()).barrier()).rejects.toThrow(/number of processes is unknown/);
});

test('get and wait time out with StoreTimeoutError naming the key', async () => {
  const a = await client();
  const t0 = Date.now();
  await expect(a.get('never', { timeoutMs: 200 })).rejects.toThrow(StoreTimeoutError);
  await expect(a.wait(['never', 'nope'], { timeoutMs: 100 })).rejects.toThrow(/"never", "nope" not set within 100 ms/);
  expect(Date.now() - t0).toBeLessThan(3000);
  await a.set('ok', '1'); // the connection still works after timeouts
  expect((await a.get('ok', { timeoutMs: 0 })).toString()).toBe('1');
});

test('connect retries until the server starts, and times out when none does', async () => {
  const port = server.port;
  await server.close();
  const late = TcpStore.connect({ host: '127.0.0.1', port, token, timeoutMs: 5000 });
  await new Promise((r) => setTimeout(r, 200));
  server = await StoreServer.listen({ port, host: '127.0.0.1', token });
  const c = await late;
  clients.push(c);
  await c.set('a', 'b');
  await expect(TcpStore.connect({ host: '127.0.0.1', port: 1, token, timeoutMs: 200 })).rejects.toThrow(StoreTimeoutError);
});

test('a wrong token is refused on both sides; the server keeps serving', async () => {
  await expect(TcpStore.connect({ host: '127.0.0.1', port: server.port, token: wrongToken, timeoutMs: 2000 })).rejects.toThrow(/wrong token/);
  expect(server.refused).toBe(1);
  // a server holding another token refuses this client too
  const other = await StoreServer.listen({ port: 0, host: '127.0.0.1', token: wrongToken, log: () => undefined });
  await expect(TcpStore.connect({ host: '127.0.0.1', port: other.port, token, timeoutMs: 2000 })).rejects.toThrow(StoreError);
  await other.close();
  const ok = await client();
  await ok.set('still', 'alive');
  expect((await ok.get('still')).toString()).toBe('alive');
});

test('oversized messages are refused before they are buffered, by client and server', async () => {
  const a = await client({ maxMessageBytes: 4096 });
  await expect(a.set('big', new Uint8Array(5000))).rejects.toThrow(/exceeds the message limit of 4096 bytes/);
  const b = await client({ maxMessageBytes: 1 << 20 }); // believes the limit is larger: the server refuses
  await expect(b.set('big', new Uint8Array(100_000))).rejects.toThrow(StoreError);
  expect(server.lastRefusal).toMatch(/exceeds the limit of 4096 bytes/);
  // a length prefix of 4 GiB after the handshake would be refused at once as well
  const head = Buffer.alloc(4);
  head.writeUInt32BE(0xffffffff);
  const answer = await raw(head, true);
  expect(answer.toString('latin1')).toMatch(/exceeds the limit/);
  await a.set('small', new Uint8Array(100));
  expect((await a.get('small')).length).toBe(100);
});

test('garbage bytes, truncated frames and silent clients are refused without crashing', async () => {
  const before = server.refused;
  await raw(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
  await raw(Buffer.from([0, 0, 0, 1, 9])); // a body shorter than a header
  await raw(Buffer.from([0, 0, 0, 5, 0x10, 0, 0, 0, 1]), true); // a request before authenticating
  await raw(Buffer.alloc(0)); // says nothing: the handshake times out (500 ms here)
  expect(server.refused - before).toBe(4);
  const a = await client();
  await a.set('k', 'v');
  expect((await a.get('k')).toString()).toBe('v');
});

test('bad arguments are TypeErrors/RangeErrors naming the call', async () => {
  const a = await client();
  await expect(a.set('', 'x')).rejects.toThrow(/TcpStore.set: key must be a non-empty string/);
  await expect(a.set('k', 5 as never)).rejects.toThrow(TypeError);
  await expect(a.get('k', { timeoutMs: -1 })).rejects.toThrow(/TcpStore.get: timeoutMs/);
  await expect(a.add('k', 1.5)).rejects.toThrow(/TcpStore.add: delta/);
  await expect(a.wait([])).rejects.toThrow(TypeError);
  expect(() => StoreServer.listen({ port: 70000, token })).toThrow(RangeError);
  await expect(TcpStore.connect({ host: '127.0.0.1', port: 0, token })).rejects.toThrow(/port must be/);
  expect(() => parseAddress('nohost', 'x')).toThrow(/x: address must be "host:port"/);
  expect(parseAddress('[::1]:29500', 'x')).toEqual({ host: '::1', port: 29500 });
  const saved = process.env.CUDA_TS_STORE_TOKEN;
  delete process.env.CUDA_TS_STORE_TOKEN;
  try {
    expect(() => storeToken(undefined, 'call')).toThrow(/call: a shared token is required/);
  } finally {
    if (saved !== undefined) process.env.CUDA_TS_STORE_TOKEN = saved;
  }
});

test('openStore: rank 0 serves, the others connect; closing rank 0 stops the server', async () => {
  const probe = await StoreServer.listen({ port: 0, host: '127.0.0.1', token });
  const port = probe.port;
  await probe.close();
  const address = `127.0.0.1:${port}`;
  const [s1, s0, s2] = await Promise.all([
    openStore({ rank: 1, size: 3, address, token, timeoutMs: 5000 }),
    openStore({ rank: 0, size: 3, address, token, timeoutMs: 5000 }),
    openStore({ rank: 2, size: 3, address, token, timeoutMs: 5000 }),
  ]);
  expect(s0.server).toBeDefined();
  expect(s1.server).toBeUndefined();
  await s0.set('id', new Uint8Array(128).fill(7));
  expect((await s2.get('id')).every((x) => x === 7)).toBe(true);
  await Promise.all([s0, s1, s2].map((s) => s.barrier()));
  await s0.close();
  await expect(s1.get('id')).rejects.toThrow(StoreError);
  await s1.close();
  await s2.close();
  await expect(openStore({ rank: 3, size: 3, address, token })).rejects.toThrow(RangeError);
});

test('the serving rank may close right after the last barrier: the others still get their release', async () => {
  // what every rendezvous does at the end: rank 0 (which serves) leaves the barrier and closes at once
  const own = await StoreServer.listen({ port: 0, host: '127.0.0.1', token });
  const rank0 = await TcpStore.connect({ host: '127.0.0.1', port: own.port, token, timeoutMs: 5000, size: 2 });
  const rank1 = await TcpStore.connect({ host: '127.0.0.1', port: own.port, token, timeoutMs: 5000, size: 2 });
  const other = rank1.barrier('end');
  await rank0.barrier('end');
  await rank0.close();
  const closing = own.close();
  await expect(other).resolves.toBeUndefined();
  await rank1.close();
  await closing;
});
