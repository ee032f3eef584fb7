// The rendezvous store under hostile clients, at full size (issue 29's "Done when"): while unauthenticated
// connections (idle, half frames, garbage; from 127.0.0.3) and wrong-token attempts (from 127.0.0.2) keep
// coming, legitimate ranks (on 127.0.0.1, spread over a few processes) rendezvous and run barriers and
// set/get round trips, every answer checked. The server runs in this process, which samples its memory.
// Prints its measurements and exits non-zero on any failure.
//
//   npm run stress:store                       # 64 ranks, 100,000 barriers, 10,000 set/get each,
//                                              # 2,000 unauthenticated connections, 5,000 wrong-token attempts
//   tsx scripts/store-stress.ts --ranks 8 --barriers 500 --setget 50 --idle 200 --wrong 100
//
// The wrong-token attempts come from the ranks' own address (127.0.0.1): the store reads every proof
// and shuts no address out (issue 47), so they must not delay a rank; each wrong proof waits for its
// refusal in the server's tarpit (README, "what the store protects").
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { StoreServer, TcpStore } from '../src/distributed/store';
import { BUSY, NONCE_BYTES, Op, frame, proof } from '../src/distributed/store-wire';

/** What a stress run does. */
export interface StressOptions {
  ranks: number;
  barriers: number;
  setget: number;
  idle: number;
  wrong: number;
  /** Processes the ranks are spread over. */
  processes: number;
  /** Largest growth of the server's JS heap + external memory allowed, in MiB. */
  maxServerMiB: number;
}

export const FULL_SIZE: StressOptions = { ranks: 64, barriers: 100_000, setget: 10_000, idle: 2000, wrong: 5000, processes: 4, maxServerMiB: 96 };

/** What a run measured; `failures` empty means it passed. */
export interface StressReport {
  options: StressOptions;
  /** The whole run, worker start-up included. */
  seconds: number;
  connectSeconds: number;
  /** The ranks' barrier and set/get work alone (the slowest process). */
  workSeconds: number;
  barriersPerSecond: number;
  idleOpened: number;
  wrongAttempts: number;
  /** Wrong-token attempts that got as far as the challenge and answered it. */
  wrongChallenged: number;
  /** Wrong-token attempts that were told "wrong token" (each one a proof the server read and checked). */
  wrongRefused: number;
  /** Wrong-token attempts told "busy" instead: refused at the door, or evicted in a flood before their proof was read. */
  wrongBusy: number;
  /** Wrong-token attempts closed with no reason at all (must be 0). */
  wrongSilent: number;
  authFailures: number;
  /**
   * The server's time listening until authFailures was read. Longer than `seconds`, which ends when the
   * ranks are done: the attackers wind down after that, still knocking.
   */
  serverSeconds: number;
  refused: number;
  serverKeysAtEnd: number;
  /**
   * growthMiB is what the limit judges: the peak over the start where the runtime's heap figure is
   * close to live memory (V8: Node, Deno); under Bun, whose heap figure keeps garbage its concurrent
   * collector has not reached (165 MiB "growth" in a loaded CI run against 2-10 MiB alone), what a
   * full collection (Bun.gc(true)) leaves at the end over what one left at the start (`judged`).
   */
  memory: { baselineMiB: number; peakMiB: number; growthMiB: number; peakRssMiB: number; judged: 'peak' | 'retained' };
  failures: string[];
}

interface WorkerConfig {
  role: 'ranks' | 'idle' | 'wrong';
  port: number;
  token: string;
  options: StressOptions;
  firstRank?: number;
  count?: number;
}

type WorkerMessage =
  | { type: 'connected'; ms: number }
  | { type: 'progress'; barriers: number }
  | { type: 'done'; failures: string[]; stats: Record<string, number> };

const MiB = 1 << 20;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------------------------------------
// Legitimate ranks
// ------------------------------------------------------------------------------------------------

/** One rank: barriers, with a set/get round trip (own key, then a neighbour's) every few of them. */
async function rankLoop(store: TcpStore, rank: number, o: StressOptions, stats: Record<string, number>): Promise<void> {
  const every = Math.max(1, Math.floor(o.barriers / Math.max(1, o.setget)));
  const neighbour = (rank + 1) % o.ranks;
  let done = 0;
  for (let i = 0; i < o.barriers; i++) {
    const round = i % every === 0 && done < o.setget;
    if (round) {
      await store.set(`k/${rank}`, `${rank}:${i}`);
      const back = (await store.get(`k/${rank}`)).toString();
      if (back !== `${rank}:${i}`) throw new Error(`rank ${rank}: read back ${back}, wrote ${rank}:${i}`);
      done++;
    }
    await store.barrier('stress', { timeoutMs: 120_000 });
    stats.barriers++;
    if (round) {
      const seen = (await store.get(`k/${neighbour}`)).toString();
      if (seen !== `${neighbour}:${i}` && seen !== `${neighbour}:${i + every}`)
        throw new Error(`rank ${rank}: neighbour's key holds ${seen} after barrier ${i}`);
      stats.sets++;
      stats.gets += 2;
    }
  }
}

async function ranksWorker(cfg: WorkerConfig, send: (m: WorkerMessage) => void): Promise<void> {
  const stats = { barriers: 0, sets: 0, gets: 0, loopMs: 0 };
  const failures: string[] = [];
  const ranks = Array.from({ length: cfg.count! }, (_, i) => cfg.firstRank! + i);
  const t0 = performance.now();
  const stores = await Promise.all(
    ranks.map(() => TcpStore.connect({ host: '127.0.0.1', port: cfg.port, token: cfg.token, timeoutMs: 120_000, size: cfg.options.ranks })),
  );
  send({ type: 'connected', ms: performance.now() - t0 });
  const t1 = performance.now();
  const progress = setInterval(() => send({ type: 'progress', barriers: stats.barriers }), 5000);
  await Promise.all(stores.map((s, j) => rankLoop(s, ranks[j], cfg.options, stats).catch((e: Error) => void failures.push(e.message))));
  clearInterval(progress);
  stats.loopMs = performance.now() - t1;
  for (const s of stores) await s.close();
  send({ type: 'done', failures, stats });
}

// ------------------------------------------------------------------------------------------------
// Attackers: they go on until their count is reached AND the main process says the ranks are done
// ------------------------------------------------------------------------------------------------

/** An unauthenticated connection: silent, a 1 MiB length prefix with a trickle, or garbage. */
function idleConnection(port: number, kind: number, stats: Record<string, number>): Promise<void> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port, localAddress: '127.0.0.3' });
    stats.opened++;
    const giveUp = setTimeout(() => s.destroy(), 3000);
    s.on('connect', () => {
      if (kind === 1) s.write(Buffer.from([0, 0x10, 0, 0, 1, 2, 3]));
      else if (kind === 2) s.write(Buffer.from('GET / HTTP/1.1\r\n\r\n'));
    });
    s.on('error', () => undefined);
    s.on('close', () => {
      clearTimeout(giveUp);
      stats.closed++;
      resolve();
    });
  });
}

/** A wrong-token attempt from the ranks' own address; counts whether it answered and was told "wrong token". */
function wrongAttempt(port: number, wrong: string, stats: Record<string, number>): Promise<void> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port, localAddress: '127.0.0.1' });
    stats.attempts++;
    let got = Buffer.alloc(0);
    let answered = false;
    s.on('data', (d) => {
      got = Buffer.concat([got, d]);
      if (!answered && got.length >= 9 + NONCE_BYTES) {
        answered = true;
        const mine = randomBytes(NONCE_BYTES);
        const nonce = got.subarray(9, 9 + NONCE_BYTES);
        s.write(frame(Op.Auth, 0, Buffer.concat([mine, proof(wrong, 'client', nonce, mine), proof(wrong, 'run', nonce, mine)])));
      }
      if (got.length > 9 + NONCE_BYTES + 4 && got[9 + NONCE_BYTES + 4] === Op.Welcome) stats.welcomed++;
    });
    s.on('error', () => undefined);
    s.on('close', () => {
      stats[answered ? 'evaluated' : 'unanswered']++;
      if (got.includes('wrong token')) stats.refusedWrong++;
      else if (got.includes(BUSY)) stats.refusedBusy++;
      else stats.silent++;
      resolve();
    });
    setTimeout(() => s.destroy(), 5000).unref();
  });
}

async function attackWorker(cfg: WorkerConfig, send: (m: WorkerMessage) => void, stop: () => boolean): Promise<void> {
  const stats: Record<string, number> = {
    opened: 0,
    closed: 0,
    attempts: 0,
    evaluated: 0,
    unanswered: 0,
    refusedWrong: 0,
    refusedBusy: 0,
    silent: 0,
    welcomed: 0,
  };
  const wrong = randomBytes(32).toString('hex');
  const target = cfg.role === 'idle' ? cfg.options.idle : cfg.options.wrong;
  const count = (): number => (cfg.role === 'idle' ? stats.opened : stats.attempts);
  let wave = 0;
  while (count() < target || !stop()) {
    // full speed up to the minimum, then a steady trickle for as long as the ranks work
    const reached = count() >= target;
    const n = cfg.role === 'idle' ? (reached ? 100 : 400) : reached ? 20 : 100;
    await Promise.all(
      Array.from({ length: n }, (_, i) => (cfg.role === 'idle' ? idleConnection(cfg.port, (wave + i) % 3, stats) : wrongAttempt(cfg.port, wrong, stats))),
    );
    wave++;
    if (reached) await sleep(1000);
  }
  send({ type: 'done', failures: stats.welcomed ? [`${stats.welcomed} wrong-token attempts were welcomed`] : [], stats });
}

/** A forked worker's entry point (argv: --worker JSON). */
async function worker(cfg: WorkerConfig): Promise<void> {
  const send = (m: WorkerMessage): void => void process.send!(m);
  let stopped = false;
  process.on('message', (m) => {
    if (m === 'stop') stopped = true;
  });
  try {
    if (cfg.role === 'ranks') await ranksWorker(cfg, send);
    else await attackWorker(cfg, send, () => stopped);
  } catch (e) {
    send({ type: 'done', failures: [`${cfg.role} worker: ${(e as Error).message}`], stats: {} });
  }
  process.disconnect();
}

// ------------------------------------------------------------------------------------------------
// The run
// ------------------------------------------------------------------------------------------------

interface Forked {
  child: ChildProcess;
  /** Resolves with the ms its ranks took to connect (and authenticate), from the first try. */
  connected: Promise<number>;
  /** Barrier passages of its ranks so far (updated every 5 s). */
  progress: { barriers: number };
  done: Promise<{ failures: string[]; stats: Record<string, number> }>;
}

/** Node preloads tsx; Bun and Deno run this file through scripts/run-ts.cjs (their loaders cannot link the sources). */
function workerCommand(cfg: WorkerConfig): { file: string; args: string[]; execArgv: string[] } {
  const args = ['--worker', JSON.stringify(cfg)];
  if (process.versions.bun || process.versions.deno) return { file: join(__dirname, 'run-ts.cjs'), args: [__filename, ...args], execArgv: [] };
  return { file: __filename, args, execArgv: ['--import', pathToFileURL(require.resolve('tsx')).href] };
}

function forkWorker(cfg: WorkerConfig): Forked {
  const { file, args, execArgv } = workerCommand(cfg);
  const child = fork(file, args, { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let connected!: (ms: number) => void;
  const connectedP = new Promise<number>((r) => (connected = r));
  const progress = { barriers: 0 };
  const done = new Promise<{ failures: string[]; stats: Record<string, number> }>((resolve) => {
    child.on('message', (m: WorkerMessage) => {
      if (m.type === 'connected') connected(m.ms);
      else if (m.type === 'progress') progress.barriers = m.barriers;
      else resolve({ failures: m.failures, stats: m.stats });
    });
    // 'close', not 'exit': a worker sends its report and disconnects at once, and under Bun the parent
    // can see the exit before that last message (a whole CI run failed so); 'close' comes after the
    // IPC channel has closed, every message delivered.
    child.on('close', (code, signal) => {
      connected(NaN); // a worker that died before connecting must not leave the run waiting
      resolve({ failures: [`${cfg.role} worker exited with ${code ?? signal} before reporting`], stats: {} });
    });
  });
  return { child, connected: connectedP, progress, done };
}

/** Bun's synchronous full collection, or undefined elsewhere (see StressReport.memory). */
function bunFullCollection(): (() => void) | undefined {
  const bun = (globalThis as { Bun?: { gc?: (force: boolean) => void } }).Bun;
  return typeof bun?.gc === 'function' ? () => bun.gc!(true) : undefined;
}

/** Samples the server's memory (this process) every 50 ms; under Bun also what a full collection leaves at the start and the end. */
function memorySampler(): { stop(): { baseline: number; peak: number; peakRss: number; retained?: number } } {
  const used = (): number => {
    const m = process.memoryUsage();
    return m.heapUsed + m.external;
  };
  const collect = bunFullCollection();
  collect?.();
  const baseline = used();
  let peak = baseline;
  let peakRss = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, used());
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 50);
  return {
    stop: () => {
      clearInterval(timer);
      if (!collect) return { baseline, peak, peakRss };
      collect();
      return { baseline, peak, peakRss, retained: used() };
    },
  };
}

function sum(results: { stats: Record<string, number> }[], key: string): number {
  return results.reduce((a, r) => a + (r.stats[key] ?? 0), 0);
}

/** Runs the whole scenario; the report's `failures` lists what went wrong (empty: passed). */
export async function runStress(o: StressOptions, say?: (line: string) => void): Promise<StressReport> {
  const token = randomBytes(32).toString('hex');
  const server = await StoreServer.listen({ port: 0, host: '127.0.0.1', token, log: () => undefined });
  const listening = performance.now();
  const memory = memorySampler();
  const t0 = performance.now();
  const base = { port: server.port, token, options: o };
  const attackers = [forkWorker({ ...base, role: 'idle' }), forkWorker({ ...base, role: 'wrong' })];
  await sleep(200); // the attack is under way before the first rank knocks
  const per = Math.ceil(o.ranks / o.processes);
  const rankers: Forked[] = [];
  for (let first = 0; first < o.ranks; first += per)
    rankers.push(forkWorker({ ...base, role: 'ranks', firstRank: first, count: Math.min(per, o.ranks - first) }));
  const connectSeconds = Math.max(...(await Promise.all(rankers.map((r) => r.connected)))) / 1000;
  const ticker =
    say &&
    setInterval(() => {
      const passed = rankers.reduce((a, r) => a + r.progress.barriers, 0) / o.ranks;
      say(`${Math.round(passed)} of ${o.barriers} barriers after ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    }, 30_000);
  const rankResults = await Promise.all(rankers.map((r) => r.done));
  if (ticker) clearInterval(ticker);
  const seconds = (performance.now() - t0) / 1000;
  for (const a of attackers) a.child.send('stop');
  const [idle, wrong] = await Promise.all(attackers.map((a) => a.done));
  const mem = memory.stop();
  const report = buildReport(o, server, { rankResults, idle, wrong, seconds, connectSeconds, mem, listening });
  await server.close();
  return report;
}

interface Measured {
  rankResults: { failures: string[]; stats: Record<string, number> }[];
  idle: { failures: string[]; stats: Record<string, number> };
  wrong: { failures: string[]; stats: Record<string, number> };
  seconds: number;
  connectSeconds: number;
  mem: { baseline: number; peak: number; peakRss: number; retained?: number };
  /** performance.now() when the server started listening. */
  listening: number;
}

function buildReport(o: StressOptions, server: StoreServer, m: Measured): StressReport {
  const failures = [...m.rankResults.flatMap((r) => r.failures), ...m.idle.failures, ...m.wrong.failures];
  const barriers = sum(m.rankResults, 'barriers');
  if (barriers !== o.ranks * o.barriers) failures.push(`${barriers} barrier passages, expected ${o.ranks * o.barriers}`);
  if (sum(m.rankResults, 'sets') !== o.ranks * Math.min(o.setget, o.barriers))
    failures.push(`${sum(m.rankResults, 'sets')} set/get rounds, expected ${o.ranks * Math.min(o.setget, o.barriers)}`);
  if ((m.idle.stats.opened ?? 0) < o.idle) failures.push(`only ${m.idle.stats.opened} unauthenticated connections`);
  if ((m.wrong.stats.attempts ?? 0) < o.wrong) failures.push(`only ${m.wrong.stats.attempts} wrong-token attempts`);
  const judged = m.mem.retained === undefined ? 'peak' : 'retained';
  const growth = ((m.mem.retained ?? m.mem.peak) - m.mem.baseline) / MiB;
  const workMs = Math.max(...m.rankResults.map((r) => r.stats.loopMs ?? 0));
  if (growth > o.maxServerMiB) failures.push(`the server's memory grew by ${growth.toFixed(1)} MiB (${judged}; limit ${o.maxServerMiB})`);
  if (server.size > o.ranks + 4) failures.push(`the server holds ${server.size} keys at the end (barriers not cleaned up?)`);
  return {
    options: o,
    seconds: Number(m.seconds.toFixed(1)),
    connectSeconds: Number(m.connectSeconds.toFixed(2)),
    workSeconds: Number((workMs / 1000).toFixed(1)),
    barriersPerSecond: Math.round(o.barriers / (workMs / 1000)),
    idleOpened: m.idle.stats.opened ?? 0,
    wrongAttempts: m.wrong.stats.attempts ?? 0,
    wrongChallenged: m.wrong.stats.evaluated ?? 0,
    wrongRefused: m.wrong.stats.refusedWrong ?? 0,
    wrongBusy: m.wrong.stats.refusedBusy ?? 0,
    wrongSilent: m.wrong.stats.silent ?? 0,
    authFailures: server.authFailures,
    serverSeconds: Number(((performance.now() - m.listening) / 1000).toFixed(1)),
    refused: server.refused,
    serverKeysAtEnd: server.size,
    memory: {
      baselineMiB: Number((m.mem.baseline / MiB).toFixed(1)),
      peakMiB: Number((m.mem.peak / MiB).toFixed(1)),
      growthMiB: Number(growth.toFixed(1)),
      peakRssMiB: Number((m.mem.peakRss / MiB).toFixed(1)),
      judged,
    },
    failures,
  };
}

function parseArgs(argv: string[]): StressOptions {
  const o = { ...FULL_SIZE };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()) as keyof StressOptions;
    const v = Number(argv[i + 1]);
    if (!(key in o) || !Number.isSafeInteger(v) || v < 0)
      throw new RangeError(`store-stress: bad option ${argv[i]} ${argv[i + 1] ?? ''} (options: ${Object.keys(o).join(', ')})`);
    o[key] = v;
  }
  if (o.ranks < 1 || o.processes < 1) throw new RangeError('store-stress: ranks and processes must be at least 1');
  return o;
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const r = await runStress(o, (line) => void process.stderr.write(`store-stress: ${line}\n`));
  process.stdout.write(`${JSON.stringify(r)}\n`);
  process.stdout.write(
    `${o.ranks} ranks: ${o.barriers} barriers and ${o.setget} set/get each in ${r.workSeconds} s, ${r.seconds} s in all (${r.barriersPerSecond} barriers/s; the slowest process's ranks connected in ${r.connectSeconds} s under attack)\n`,
  );
  process.stdout.write(
    `attack: ${r.idleOpened} unauthenticated connections, ${r.wrongAttempts} wrong-token attempts (${r.wrongChallenged} answered the challenge, ${r.wrongRefused} were told "wrong token", ${r.wrongBusy} "busy", ${r.wrongSilent} nothing); the server refused ${r.refused} connections and evaluated ${r.authFailures} wrong proofs\n`,
  );
  process.stdout.write(
    `server memory (heap + external): ${r.memory.baselineMiB} MiB at start, peak ${r.memory.peakMiB} MiB, growth judged on the ${r.memory.judged} +${r.memory.growthMiB} MiB; peak rss ${r.memory.peakRssMiB} MiB; ${r.serverKeysAtEnd} keys at the end\n`,
  );
  if (r.failures.length) {
    process.stdout.write(`FAILED:\n${r.failures.map((f) => `  ${f}`).join('\n')}\n`);
    process.exitCode = 1;
  } else process.stdout.write('passed\n');
}

if (process.argv[2] === '--worker') void worker(JSON.parse(process.argv[3]) as WorkerConfig);
else if (require.main === module || process.argv[1] === __filename) {
  main().catch((e: Error) => {
    process.stderr.write(`${e.stack ?? e.message}\n`);
    process.exitCode = 1;
  });
}
