// The processes of the C floor experiment (bench/c-floor.ts): each one sets up bench.c's state once and
// then runs one timed pass per command, so that the orchestrator can alternate passes of several
// processes (A B A B …) and any drift of the machine hits all of them alike. Two kinds:
//   - bench.c's program in serve mode (`bench --serve`, optionally running libbench.so's passes through
//     dlopen, optionally with a spinning thread);
//   - a node process that loads libbench.so through koffi, as bench/gpu.ts does (bench/c-floor-child.ts).
// Both speak the same lines: "pass ROW OPS PIN" -> "ok NS CPU_BEFORE CPU_AFTER [JS_NS]".
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { join } from 'node:path';
import { BENCH_DIR, REPO_ROOT } from './common';

/** One process of the experiment: what it runs and how it is started. */
export interface VariantSpec {
  /** Unique within its group (e.g. "c-exe#1", "node koffi lazy"). */
  name: string;
  /** bench.c's own passes in its program; libbench.so's passes in that program (dlopen); or in node through koffi. */
  kind: 'exe' | 'exe-lib' | 'node';
  /** `taskset -c` this core: the whole process (every thread, set-up included) on it. */
  taskset?: number;
  /** exe-lib: dlopen RTLD_LAZY (default RTLD_NOW); node: koffi.load(lib, { lazy: true }). */
  lazy?: boolean;
  /** LD_BIND_NOW=1: every symbol of the program and its libraries bound at start-up. */
  bindNow?: boolean;
  /** exe, exe-lib: one more thread spinning all the time on this CPU (-1: anywhere). */
  spinCpu?: number;
  /** node: a worker thread allocating all the time, or about 20 ms of JS allocation before each pass. */
  busy?: 'worker' | 'between';
}

/** Where the built program, its library and the PTX are. */
export interface FloorPaths {
  bin: string;
  lib: string;
  ptx: string;
}

/** One timed pass: ns by C's clock (CLOCK_MONOTONIC in the pass), the CPU before and after, and (node) ns by JS's clock around the call. */
export interface PassResult {
  ns: number;
  cpuBefore: number;
  cpuAfter: number;
  jsNs?: number;
}

/** The command line that starts a variant. */
export function commandOf(spec: VariantSpec, paths: FloorPaths, device: number): { cmd: string; args: string[]; env: NodeJS.ProcessEnv } {
  let cmd: string;
  let args: string[];
  if (spec.kind === 'node') {
    cmd = process.execPath;
    const opts = { lib: paths.lib, ptx: paths.ptx, lazy: !!spec.lazy, busy: spec.busy ?? 'none', device };
    args = ['--require', 'tsx/cjs', join(BENCH_DIR, 'c-floor-child.ts'), JSON.stringify(opts)];
  } else {
    cmd = paths.bin;
    args = ['--serve', '--ptx', paths.ptx];
    if (spec.kind === 'exe-lib') args.push('--lib', paths.lib, ...(spec.lazy ? ['--lazy'] : []));
    if (spec.spinCpu !== undefined) args.push('--spin', String(spec.spinCpu));
  }
  if (spec.taskset !== undefined) {
    args = ['-c', String(spec.taskset), cmd, ...args];
    cmd = 'taskset';
  }
  const env: NodeJS.ProcessEnv = { ...process.env, BENCH_DEVICE: String(device) };
  if (spec.bindNow) env.LD_BIND_NOW = '1';
  else delete env.LD_BIND_NOW;
  return { cmd, args, env };
}

/** A started variant: send it passes, one at a time. */
export class FloorWorker {
  private readonly proc: ChildProcessWithoutNullStreams;
  private buffered = '';
  private stderrTail = '';
  private readonly waiting: { resolve: (line: string) => void; reject: (e: Error) => void }[] = [];
  private exited: string | undefined;
  readonly ready: Promise<number>;

  constructor(
    readonly spec: VariantSpec,
    paths: FloorPaths,
    device: number,
  ) {
    const { cmd, args, env } = commandOf(spec, paths, device);
    this.proc = spawn(cmd, args, { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stdout.on('data', (d: Buffer) => this.onData(d.toString()));
    this.proc.stderr.on('data', (d: Buffer) => (this.stderrTail = (this.stderrTail + d.toString()).slice(-2000)));
    this.proc.on('error', (e) => this.onExit(`cannot start ${cmd}: ${e.message}`));
    this.proc.on('exit', (code, sig) => this.onExit(`exited (${sig ?? code})`));
    this.ready = this.nextLine(120_000).then((l) => {
      const m = /^ready (\d+)/.exec(l);
      if (!m) throw new Error(`${spec.name}: expected "ready", got "${l}"`);
      return Number(m[1]);
    });
  }

  private onData(text: string): void {
    this.buffered += text;
    let nl: number;
    while ((nl = this.buffered.indexOf('\n')) >= 0) {
      const line = this.buffered.slice(0, nl).trim();
      this.buffered = this.buffered.slice(nl + 1);
      this.waiting.shift()?.resolve(line);
    }
  }

  private onExit(why: string): void {
    if (this.exited) return;
    this.exited = why;
    const err = new Error(`${this.spec.name} ${why}: ${this.stderrTail.trim().split('\n').slice(-3).join(' | ')}`);
    for (const w of this.waiting.splice(0)) w.reject(err);
  }

  private nextLine(timeoutMs: number): Promise<string> {
    if (this.exited) return Promise.reject(new Error(`${this.spec.name} ${this.exited}: ${this.stderrTail.trim()}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.spec.name}: no answer in ${timeoutMs / 1000} s`)), timeoutMs);
      this.waiting.push({
        resolve: (l) => (clearTimeout(timer), resolve(l)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
    });
  }

  /** One timed pass of `row` (`ops` operations), this process's main thread pinned to `pin` first (-1: its start-up affinity). */
  async pass(row: string, ops: number, pin: number): Promise<PassResult> {
    const answer = this.nextLine(60_000);
    this.proc.stdin.write(`pass ${row} ${ops} ${pin}\n`);
    const line = await answer;
    const m = /^ok (\d+) (-?\d+) (-?\d+)(?: (\d+))?$/.exec(line);
    if (!m) throw new Error(`${this.spec.name}: pass ${row} answered "${line}"`);
    return { ns: Number(m[1]), cpuBefore: Number(m[2]), cpuAfter: Number(m[3]), jsNs: m[4] === undefined ? undefined : Number(m[4]) };
  }

  /** Asks the process to quit; kills it if it has not within 5 s. */
  close(): Promise<void> {
    if (this.exited) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
      this.proc.on('exit', () => (clearTimeout(timer), resolve()));
      this.proc.stdin.write('quit\n');
    });
  }
}
