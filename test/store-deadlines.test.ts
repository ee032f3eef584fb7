// Issue 47 §1: every store request rejects within its timeout plus ANSWER_SLACK_MS when the serving
// process stops answering (SIGSTOP: a stalled host, a hung event loop; its kernel still holds the
// connection open, so nothing closes). Before, set/add/check/delete and barrier waited forever.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { ANSWER_SLACK_MS, StoreTimeoutError, TcpStore } from '../src/distributed/store';

const token = randomBytes(32).toString('hex');
const RUNNER = resolve(__dirname, '../scripts/run-ts.cjs');
const SERVER = resolve(__dirname, 'fixtures/distributed/store-server.ts');
let child: ChildProcess | undefined;
let store: TcpStore | undefined;

/** Starts the fixture server in a child process; resolves with its port. */
function startServer(): Promise<number> {
  return new Promise((done, fail) => {
    child = spawn(process.execPath, [RUNNER, SERVER], { env: { ...process.env, CUDA_TS_STORE_TOKEN: token }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /\{"port":(\d+)\}/.exec(out);
      if (m) done(Number(m[1]));
    });
    child.once('exit', (code) => fail(new Error(`the store process exited (${code}) before listening`)));
  });
}

/** Sends `sig` to the server process. process.kill, not child.kill: under Deno 2.9 a ChildProcess sends
 *  no signal after its first kill() (the SIGSTOP), so the server outlived the suite, holding its output. */
function signal(sig: NodeJS.Signals): void {
  try {
    if (child?.pid) process.kill(child.pid, sig);
  } catch {
    // gone already
  }
}

/** Resolves once process `pid` is gone (reaped by its parent); throws after 5 s. */
async function gone(pid: number): Promise<void> {
  for (const end = Date.now() + 5_000; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
  }
  throw new Error(`the store process ${pid} outlived the test`);
}

afterEach(async () => {
  const pid = child?.pid;
  signal('SIGCONT');
  signal('SIGKILL');
  if (pid !== undefined) await gone(pid);
  child = undefined;
  await store?.close();
  store = undefined;
});

test('with the serving process stopped, every method rejects within its timeout + the slack', async () => {
  const port = await startServer();
  store = await TcpStore.connect({ host: '127.0.0.1', port, token, timeoutMs: 10_000, size: 2 });
  await store.set('k', 'v'); // it answers while running
  expect((await store.get('k')).toString()).toBe('v');
  signal('SIGSTOP');
  const timeoutMs = 500;
  const o = { timeoutMs };
  const calls: [string, () => Promise<unknown>][] = [
    ['set', () => store!.set('a', 'b', o)],
    ['get', () => store!.get('k', o)],
    ['add', () => store!.add('n', 1, o)],
    ['check', () => store!.check(['k'], o)],
    ['delete', () => store!.delete('k', o)],
    ['wait', () => store!.wait(['never'], o)],
    ['barrier', () => store!.barrier('b', o)],
  ];
  const t0 = performance.now();
  const results = await Promise.all(
    calls.map(async ([name, fn]) => {
      try {
        await fn();
        return { name, ms: performance.now() - t0, error: undefined as unknown };
      } catch (error) {
        return { name, ms: performance.now() - t0, error };
      }
    }),
  );
  for (const r of results) {
    expect([r.name, r.error]).toEqual([r.name, expect.any(StoreTimeoutError)]);
    expect((r.error as Error).message).toMatch(new RegExp(`^TcpStore\\.${r.name}`));
    expect(r.ms).toBeLessThan(timeoutMs + ANSWER_SLACK_MS + 1500);
  }
  // the barrier says what it saw
  expect((results[6].error as Error).message).toMatch(/its own arrival was not answered before the timeout of 500 ms/);
}, 30_000);

test('both ends set TCP keepalive (a dead host or a partition ends the connection)', async () => {
  const port = await startServer();
  store = await TcpStore.connect({ host: '127.0.0.1', port, token, timeoutMs: 10_000 });
  await store.set('k', 'v');
  // ss shows one timer per socket: while a reply's ACK is still in flight it shows the retransmit timer
  // ("on"), so read again until both ends are idle (at most ~2 s).
  let lines: string[] = [];
  for (let i = 0; i < 20; i++) {
    const ss = spawnSync('ss', ['-tnoH', 'state', 'established', `( sport = :${port} or dport = :${port} )`], { encoding: 'utf8' });
    if (ss.error) return; // no ss here: nothing to read the socket options with
    lines = ss.stdout.trim().split('\n');
    if (lines.every((l) => !/timer:\(on,/.test(l))) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(lines.length).toBe(2); // the client's end and the server's end
  for (const line of lines) expect(line).toMatch(/timer:\(keepalive/);
});
