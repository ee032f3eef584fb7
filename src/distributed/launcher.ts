// cuda-ts-run: starts one process per GPU of this node with the torchrun environment (RANK, WORLD_SIZE,
// LOCAL_RANK, LOCAL_WORLD_SIZE, NODE_RANK/GROUP_RANK, MASTER_ADDR, MASTER_PORT) and the store token,
// forwards SIGINT/SIGTERM/SIGHUP, and fails as a whole: when one rank fails, the others are stopped
// (SIGTERM, then SIGKILL after a grace period) and the launcher exits with the failing rank's status.
//   cuda-ts-run --nproc-per-node N [--nnodes M --node-rank K --master ADDR:PORT --run-id ID] script.ts [args...]
// TypeScript scripts (.ts, .mts, .cts) run under `node --import tsx`; anything else under plain node.
//
// Orphans: each rank leads its own process group, so a launcher that dies without stopping them (SIGKILL,
// a crash) would leave them running under init, holding their GPUs. A small reaper process, in its own
// session, holds a pipe from the launcher: when the pipe closes without the launcher's "done", it stops
// every rank's group (SIGTERM, then SIGKILL after the grace period). The launcher tells it of each rank
// that exits, so it never signals a group whose id the system may have handed out again. A process that
// left its rank's group (setsid, a daemon) is found by the launch's mark in its environment
// ($CUDA_TS_LAUNCH_ID, read from /proc on Linux): the reaper and the launcher's own stop signal those
// too. One that clears its environment escapes; nothing short of a cgroup holds every descendant.
//
// Run identity: every launch has a run id ($CUDA_TS_RUN_ID in each rank; random on one node, --run-id on
// several, the same on every node), which the store's handshake proves beside the token: a rank of
// another job on the same port with the same token is refused with an error that says so.
//
// The store (one node, no --master): the launcher serves it itself on 127.0.0.1 and a port it binds and
// holds from the start (no port released for rank 0 that another process could take in between), and
// tells the ranks so ($CUDA_TS_STORE_SERVED): rank 0 connects like the others.
import type { ChildProcess } from 'node:child_process';
import { RUN_ID_ENV, STORE_SERVED_ENV, STORE_TOKEN_ENV, parseAddress, runIdOf, weakToken } from './rendezvous';
import type { StoreServer } from './store-server';
import { describe } from '../describe';
import { MAX_TIMER_MS } from '../long-timeout';

// node:child_process, node:crypto and node:url load when the launcher runs: importing
// cuda-ts loads none of them.
const childProcess = (): typeof import('node:child_process') => require('node:child_process') as typeof import('node:child_process');
const crypto = (): typeof import('node:crypto') => require('node:crypto') as typeof import('node:crypto');
const url = (): typeof import('node:url') => require('node:url') as typeof import('node:url');
const os = (): typeof import('node:os') => require('node:os') as typeof import('node:os');
// The store server loads only where the launcher serves the store (it brings the support package).
const storeServer = (): typeof import('./store-server') => require('./store-server') as typeof import('./store-server');

/** What cuda-ts-run was asked to do. */
export interface LaunchOptions {
  /** Processes on this node (one per GPU). */
  nprocPerNode: number;
  /** Nodes taking part. Default 1. */
  nnodes?: number;
  /** This node's index in [0, nnodes). Default 0. */
  nodeRank?: number;
  /** Rank 0's store address `host:port`. Default for one node: 127.0.0.1 and a port the launcher serves the store on. */
  master?: string;
  /** The run's id, the same on every node (default: $CUDA_TS_RUN_ID, else a random one on one node; required on several). */
  runId?: string;
  /** The script to run, and its arguments. */
  script: string;
  /** Arguments passed to the script after its path. */
  args?: string[];
  /** Milliseconds between SIGTERM and SIGKILL when stopping ranks. Default 5000. */
  killGraceMs?: number;
  /** Extra environment for every rank (on top of process.env). */
  env?: NodeJS.ProcessEnv;
  /** Where the ranks' output goes. Default 'inherit'. */
  stdio?: 'inherit' | 'pipe' | 'ignore';
  /** Called with each rank's process once started (tests read their output). */
  onSpawn?: (localRank: number, child: ChildProcess) => void;
}

const USAGE = `usage: cuda-ts-run --nproc-per-node N [--nnodes M --node-rank K --master ADDR:PORT --run-id ID] [--kill-grace-ms MS] script.(ts|js) [args...]
Starts N processes on this node with RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, NODE_RANK, MASTER_ADDR,
MASTER_PORT, ${STORE_TOKEN_ENV} and ${RUN_ID_ENV} set (a random token and run id on one node; on several nodes set
${STORE_TOKEN_ENV} to the same secret and pass the same --run-id on every node, both new for each job). When one
rank fails the others are stopped and cuda-ts-run exits non-zero.`;

/**
 * Parses the command line (torchrun's spellings --nproc_per_node/--node_rank are accepted).
 * @param argv cuda-ts-run's arguments without node and the launcher's path (process.argv.slice(2)): the options, then the script and its arguments.
 */
export function parseLauncherArgs(argv: readonly string[]): LaunchOptions | 'help' {
  if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string'))
    throw new TypeError(`parseLauncherArgs: argv must be an array of strings (process.argv.slice(2)), got ${describe(argv)}`);
  const opts: Partial<LaunchOptions> = {};
  let i = 0;
  const int = (name: string, v: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const n = Number(v);
    if (v === undefined || !/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in [${min}, ${max}]`;
      throw new RangeError(`cuda-ts-run: ${name} must be an integer ${range}, got ${v === undefined ? 'nothing' : JSON.stringify(v)}`);
    }
    return n;
  };
  for (; i < argv.length; i++) {
    let a = argv[i];
    if (a === '--') {
      i++;
      break;
    }
    if (!a.startsWith('-')) break;
    if (a === '-h' || a === '--help') return 'help';
    let value: string | undefined;
    const eq = a.indexOf('=');
    if (eq > 0) {
      value = a.slice(eq + 1);
      a = a.slice(0, eq);
    } else value = argv[++i];
    switch (a.replace(/_/g, '-')) {
      case '--nproc-per-node':
        opts.nprocPerNode = int('--nproc-per-node', value, 1);
        break;
      case '--nnodes':
        opts.nnodes = int('--nnodes', value, 1);
        break;
      case '--node-rank':
        opts.nodeRank = int('--node-rank', value, 0);
        break;
      case '--master':
      case '--master-addr-port':
        if (value === undefined) throw new RangeError('cuda-ts-run: --master needs ADDR:PORT');
        opts.master = value;
        break;
      case '--run-id':
        if (value === undefined) throw new RangeError('cuda-ts-run: --run-id needs an id');
        opts.runId = runIdOf(value, 'cuda-ts-run: --run-id');
        break;
      case '--kill-grace-ms':
        opts.killGraceMs = int('--kill-grace-ms', value, 0, MAX_TIMER_MS);
        break;
      default:
        throw new RangeError(`cuda-ts-run: unknown option ${a}\n${USAGE}`);
    }
  }
  if (i >= argv.length) throw new RangeError(`cuda-ts-run: no script given\n${USAGE}`);
  if (opts.nprocPerNode === undefined) throw new RangeError(`cuda-ts-run: --nproc-per-node is required\n${USAGE}`);
  return { ...opts, nprocPerNode: opts.nprocPerNode, script: argv[i], args: argv.slice(i + 1) };
}

/**
 * The store this launcher serves (one node, no --master): listening on 127.0.0.1 and a port bound until
 * the launch ends, so nothing can take the port before the ranks connect.
 */
function serveStore(token: string, runId: string, world: number): Promise<StoreServer> {
  return storeServer().StoreServer.listen({ port: 0, host: '127.0.0.1', token, runId, maxConnections: Math.max(1024, world + 64) });
}

/**
 * The runtime's arguments that run `script`: under Node, TypeScript through tsx's loader; under Bun and
 * Deno (which run TypeScript themselves) and for JavaScript, the script as is, except from a checkout's
 * sources (see sourceTreeRunner). A script named like an
 * option (`-x.js`) is passed as `./-x.js`, or the runtime would read it as one.
 */
export function nodeArgsFor(script: string): string[] {
  const path = script.startsWith('-') ? `./${script}` : script;
  // Bun and Deno run TypeScript themselves (and neither takes Node's --import of tsx: Bun reads it as a
  // preload, Deno's Node-flag translation drops the script's arguments after it).
  if (!/\.(c|m)?ts$/.test(script)) return [path];
  if (!process.versions.bun && !process.versions.deno) return ['--import', url().pathToFileURL(tsxLoader(script)).href, path];
  const runner = sourceTreeRunner();
  return runner === undefined ? [path] : [runner, path];
}

/**
 * scripts/run-ts.cjs when this launcher runs from the TypeScript sources (a checkout, not the built
 * package): Bun's and Deno's own loaders cannot link those CommonJS-flavoured sources, which a rank
 * importing cuda-ts from the checkout loads. The built package needs no runner.
 */
function sourceTreeRunner(): string | undefined {
  if (!__filename.endsWith('.ts')) return undefined;
  const runner = (require('node:path') as typeof import('node:path')).join(__dirname, '..', '..', 'scripts', 'run-ts.cjs');
  return (require('node:fs') as typeof import('node:fs')).existsSync(runner) ? runner : undefined;
}

/** tsx, from the project that runs the script (its working folder), else from beside cuda-ts. */
function tsxLoader(script: string): string {
  try {
    return require.resolve('tsx', { paths: [process.cwd(), __dirname] });
  } catch {
    throw new Error(
      `cuda-ts-run: ${script} is TypeScript, which Node runs through tsx, and tsx is not installed: run \`npm install --save-dev tsx\` in your project (or compile the script to .js, or run it with Bun or Deno)`,
    );
  }
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** The node's layout, checked: processes per node, nodes, this node's index. */
interface NodeLayout {
  readonly nproc: number;
  readonly nnodes: number;
  readonly nodeRank: number;
}

function checkLayout(call: string, options: LaunchOptions): NodeLayout {
  const nnodes = options.nnodes ?? 1;
  const nodeRank = options.nodeRank ?? 0;
  const nproc = options.nprocPerNode;
  if (!Number.isInteger(nproc) || nproc < 1) throw new RangeError(`${call}: nprocPerNode must be a positive integer`);
  if (!Number.isInteger(nnodes) || nnodes < 1) throw new RangeError(`${call}: nnodes must be a positive integer`);
  if (!Number.isInteger(nodeRank) || nodeRank < 0 || nodeRank >= nnodes) throw new RangeError(`${call}: node rank must be in [0, ${nnodes}), got ${nodeRank}`);
  if (nnodes > 1 && options.master === undefined)
    throw new RangeError(`${call}: --master ADDR:PORT is required with several nodes (rank 0's node, reachable from every node)`);
  return { nproc, nnodes, nodeRank };
}

/** The store token: the environment's, else (one node only) a fresh random one. */
function storeToken(call: string, env: NodeJS.ProcessEnv, nnodes: number): string {
  const token = env[STORE_TOKEN_ENV];
  if (token) {
    const weak = weakToken(token);
    if (weak) throw new RangeError(`${call}: ${STORE_TOKEN_ENV}: ${weak}`);
    return token;
  }
  if (nnodes > 1) throw new RangeError(`${call}: set ${STORE_TOKEN_ENV} to the same secret on every node (the store refuses processes without it)`);
  return crypto().randomBytes(24).toString('hex');
}

/** The run id: the option's, else the environment's, else (one node only) a fresh random one. */
function runIdFor(call: string, options: LaunchOptions, env: NodeJS.ProcessEnv, nnodes: number): string {
  const id = runIdOf(options.runId ?? (env[RUN_ID_ENV] || undefined), call, {});
  if (id) return id;
  if (nnodes > 1)
    throw new RangeError(
      `${call}: pass --run-id ID (or set ${RUN_ID_ENV}), the same on every node and new for each job: the store refuses ranks of another run`,
    );
  return crypto().randomBytes(8).toString('hex');
}

/** What every rank's environment shares: process.env with the options' env, the store's address, token and run. */
interface RankEnvironment {
  readonly env: NodeJS.ProcessEnv;
  readonly host: string;
  readonly port: number;
  readonly token: string;
  readonly runId: string;
  /** The mark every rank and its descendants carry ($CUDA_TS_LAUNCH_ID): how a stop finds who left the group. */
  readonly launchId: string;
  /** True when this launcher serves the store. */
  readonly served: boolean;
}

/** The variable that marks the processes of one launch (see the top of the file). */
export const LAUNCH_ID_ENV = 'CUDA_TS_LAUNCH_ID';

// The reaper's program (run as `node -e`, argv[1] = grace ms): reads "+PID" (a rank's group), "-PID"
// (it exited) and "done" lines; at the end of its input without "done" (the launcher died), it stops
// the groups it still knows.
const REAPER = `'use strict';
const grace = Number(process.env.CUDA_TS_REAPER_GRACE_MS) || 0;
const mark = Buffer.from('\\0' + (process.env.CUDA_TS_REAPER_MARK || '') + '\\0');
const groups = new Set();
let done = false;
let buf = '';
const marked = () => {
  const fs = require('node:fs');
  let names = [];
  try { names = fs.readdirSync('/proc'); } catch {}
  const found = [];
  for (const n of names) {
    if (!/^\\d+$/.test(n) || Number(n) === process.pid || mark.length <= 2) continue;
    let env;
    try { env = Buffer.concat([Buffer.from('\\0'), fs.readFileSync('/proc/' + n + '/environ')]); } catch { continue; }
    if (env.includes(mark)) found.push(Number(n));
  }
  return found;
};
const signal = (s) => {
  for (const g of groups) { try { process.kill(-g, s); } catch {} }
  for (const p of marked()) { try { process.kill(p, s); } catch {} }
};
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  buf += d;
  for (let i = buf.indexOf('\\n'); i >= 0; i = buf.indexOf('\\n')) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    if (line === 'done') done = true;
    else if (line[0] === '+') groups.add(Number(line.slice(1)));
    else if (line[0] === '-') groups.delete(Number(line.slice(1)));
  }
});
const end = () => {
  if (done || groups.size === 0) process.exit(0);
  signal('SIGTERM');
  setTimeout(() => { signal('SIGKILL'); process.exit(0); }, grace);
};
process.stdin.on('end', end);
process.stdin.on('error', end);
`;

/** The reaper of this launch (see the top of the file); a launch without one still runs. */
class Reaper {
  private readonly child: ChildProcess | undefined;

  constructor(graceMs: number, mark: string) {
    try {
      // the grace travels in the environment: Deno's translation of Node's -e takes no argument after the code
      const env = { ...process.env, CUDA_TS_REAPER_GRACE_MS: String(graceMs), CUDA_TS_REAPER_MARK: mark };
      this.child = childProcess().spawn(process.execPath, ['-e', REAPER], { detached: true, env, stdio: ['pipe', 'ignore', 'ignore'] });
      this.child.on('error', () => undefined);
      this.child.stdin?.on('error', () => undefined);
      this.child.unref();
    } catch {
      this.child = undefined;
    }
  }

  private say(line: string): void {
    if (this.child?.stdin?.writable) this.child.stdin.write(`${line}\n`);
  }

  watch(pid: number): void {
    this.say(`+${pid}`);
  }

  forget(pid: number): void {
    this.say(`-${pid}`);
  }

  /** Every rank exited: the reaper leaves without signalling anyone. */
  done(): void {
    this.say('done');
    this.child?.stdin?.end();
  }
}

/**
 * The running ranks of this node and the launcher's exit status: the first failure (or forwarded
 * signal) decides it, and stops the others (SIGTERM, then SIGKILL after the grace period).
 */
class RankGroup {
  readonly children: (ChildProcess | undefined)[] = [];
  readonly exited = new Set<number>();
  status: number | undefined;
  private killTimer: NodeJS.Timeout | undefined;
  readonly reaper: Reaper;

  constructor(
    private readonly graceMs: number,
    private readonly mark: string,
  ) {
    this.reaper = new Reaper(graceMs, mark);
  }

  // Each rank leads its own process group, so stopping a rank stops what it started too; what left
  // the group (setsid) is found by the launch's mark.
  signalAll(sig: NodeJS.Signals): void {
    for (const pid of markedProcesses(this.mark)) {
      try {
        process.kill(pid, sig);
      } catch {
        // gone meanwhile
      }
    }
    this.children.forEach((c, i) => {
      if (!c || this.exited.has(i) || c.pid === undefined) return;
      try {
        process.kill(-c.pid, sig);
      } catch {
        try {
          c.kill(sig);
        } catch {
          // already gone
        }
      }
    });
  }

  stopAll(): void {
    this.signalAll('SIGTERM');
    this.killLater();
  }

  /** A signal the launcher got: passed on to every rank (its number decides the status unless one failed). */
  readonly forward = (sig: NodeJS.Signals): void => {
    this.status ??= 128 + signalNumber(sig);
    this.signalAll(sig);
    this.killLater();
  };

  private killLater(): void {
    this.killTimer ??= setTimeout(() => this.signalAll('SIGKILL'), this.graceMs);
  }

  dispose(): void {
    if (this.killTimer) clearTimeout(this.killTimer);
    this.reaper.done();
  }
}

/**
 * Processes other than this one whose initial environment holds `mark` (`NAME=value`), read from /proc
 * (Linux; elsewhere none): what a launch's ranks started, whatever group or session they moved to.
 */
export function markedProcesses(mark: string): number[] {
  const fs = require('node:fs') as typeof import('node:fs');
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  const needle = Buffer.from(`\0${mark}\0`);
  const found: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let env: Buffer;
    try {
      env = Buffer.concat([Buffer.from('\0'), fs.readFileSync(`/proc/${name}/environ`)]);
    } catch {
      continue; // gone, or another user's
    }
    if (env.includes(needle)) found.push(Number(name));
  }
  return found;
}

/** Starts local rank `local` in its own process group, with the torchrun environment. */
function spawnRank(options: LaunchOptions, layout: NodeLayout, rankEnv: RankEnvironment, local: number): ChildProcess {
  const { nproc, nnodes, nodeRank } = layout;
  const rank = nodeRank * nproc + local;
  return childProcess().spawn(process.execPath, [...nodeArgsFor(options.script), ...(options.args ?? [])], {
    stdio: options.stdio ?? 'inherit',
    detached: true,
    env: {
      ...rankEnv.env,
      RANK: String(rank),
      WORLD_SIZE: String(nnodes * nproc),
      LOCAL_RANK: String(local),
      LOCAL_WORLD_SIZE: String(nproc),
      NODE_RANK: String(nodeRank),
      GROUP_RANK: String(nodeRank),
      MASTER_ADDR: rankEnv.host,
      MASTER_PORT: String(rankEnv.port),
      [STORE_TOKEN_ENV]: rankEnv.token,
      [RUN_ID_ENV]: rankEnv.runId,
      [LAUNCH_ID_ENV]: rankEnv.launchId,
      [STORE_SERVED_ENV]: rankEnv.served ? `${rankEnv.host}:${rankEnv.port}` : '',
    },
  });
}

/** Calls `onExit` when the rank exits, or with 127 when it could not start. */
function watchRank(child: ChildProcess, rank: number, onExit: (code: number | null, signal: NodeJS.Signals | null) => void): void {
  child.once('exit', onExit);
  child.once('error', (e) => {
    process.stderr.write(`cuda-ts-run: rank ${rank} could not start: ${e.message}\n`);
    onExit(127, null);
  });
}

/** Starts every rank of this node; resolves with the group's status once all have exited. */
function runRanks(options: LaunchOptions, layout: NodeLayout, rankEnv: RankEnvironment, group: RankGroup): Promise<number> {
  const { nproc, nodeRank } = layout;
  return new Promise<number>((resolve) => {
    for (let local = 0; local < nproc; local++) {
      const rank = nodeRank * nproc + local;
      const child = spawnRank(options, layout, rankEnv, local);
      if (child.pid !== undefined) group.reaper.watch(child.pid);
      const done = (code: number | null, signal: NodeJS.Signals | null): void => {
        if (group.exited.has(local)) return;
        group.exited.add(local);
        if (child.pid !== undefined) group.reaper.forget(child.pid);
        if (code !== 0 && group.status === undefined) {
          group.status = code ?? 128 + signalNumber(signal);
          process.stderr.write(
            `cuda-ts-run: rank ${rank} (local ${local}) ${signal ? `was killed by ${signal}` : `exited with ${code}`}; stopping the other ranks\n`,
          );
          group.stopAll();
        }
        if (group.exited.size === nproc) resolve(group.status ?? 0);
      };
      group.children.push(child);
      options.onSpawn?.(local, child);
      watchRank(child, rank, done);
    }
  });
}

/**
 * Runs the ranks of this node; resolves with the exit status the launcher should exit with (0 when
 * every rank exited 0, else the first failing rank's code, or 128 + signal number).
 * @param options `nprocPerNode` (processes on this node, one per GPU) and `script` (required), `nnodes` (default 1), `nodeRank` (default 0), `master` (rank
 * 0's store host:port; default on one node: 127.0.0.1 and a port the launcher serves), `runId`, `args`, `killGraceMs` (ms between SIGTERM and SIGKILL;
 * default 5000), `env` (added to process.env), `stdio` (default 'inherit') and `onSpawn`.
 */
export async function launchRanks(options: LaunchOptions): Promise<number> {
  const call = 'cuda-ts-run';
  const layout = checkLayout(call, options);
  const env = { ...process.env, ...options.env };
  const token = storeToken(call, env, layout.nnodes);
  const runId = runIdFor(call, options, env, layout.nnodes);
  if (options.master !== undefined) parseAddress(options.master, call);
  const launchId = `${process.pid}-${crypto().randomBytes(8).toString('hex')}`;
  const group = new RankGroup(checkGrace(call, options.killGraceMs), `${LAUNCH_ID_ENV}=${launchId}`);
  for (const s of SIGNALS) process.on(s, group.forward); // before the store starts: a signal then starts no rank
  let server: StoreServer | undefined;
  try {
    server = options.master === undefined ? await serveStore(token, runId, layout.nproc) : undefined;
    if (group.status !== undefined) return group.status;
    const { host, port } = parseAddress(options.master ?? `127.0.0.1:${server!.port}`, call);
    return await runRanks(options, layout, { env, host, port, token, runId, launchId, served: server !== undefined }, group);
  } finally {
    group.dispose();
    for (const s of SIGNALS) process.off(s, group.forward);
    await server?.close();
  }
}

/**
 * `killGraceMs`: an integer of ms in [0, 2^31) (about 24.8 days); default 5000. The launcher's and the
 * reaper's setTimeout take it as is, and would fire a longer delay after 1 ms.
 */
function checkGrace(call: string, graceMs: unknown): number {
  if (graceMs === undefined) return 5000;
  if (typeof graceMs !== 'number' || !Number.isSafeInteger(graceMs) || graceMs < 0 || graceMs > MAX_TIMER_MS)
    throw new RangeError(`${call}: killGraceMs must be an integer in [0, ${MAX_TIMER_MS}], got ${describe(graceMs)}`);
  return graceMs;
}

/** A signal's number (SIGBUS 7, SIGQUIT 3, …), 15 for an unknown name. */
function signalNumber(sig: NodeJS.Signals | null): number {
  return (sig && (os().constants.signals as Partial<Record<NodeJS.Signals, number>>)[sig]) || 15;
}

/** The command line entry point: parses `argv`, runs the ranks, exits with their status. */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  let options: LaunchOptions | 'help';
  try {
    options = parseLauncherArgs(argv);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(2);
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  try {
    process.exitCode = await launchRanks(options);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exitCode = 2;
  }
}
