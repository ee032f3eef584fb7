// The node side of the C floor experiment (bench/c-floor.ts starts it, one process per variant):
// bench.c's passes in a node process through koffi, as bench/gpu.ts runs them (libbench.so), answering
// the serve mode's lines on stdin: "pass ROW OPS PIN" -> "ok NS CPU_BEFORE CPU_AFTER JS_NS", "quit".
// NS is C's clock inside the pass; JS_NS the same pass by process.hrtime around the koffi call.
//   node --require tsx/cjs bench/c-floor-child.ts '{"lib":…,"ptx":…,"lazy":false,"busy":"none","device":0}'
// busy: "worker" runs a worker thread that allocates all the time (a runtime whose other threads are
// busy: V8's collector threads too); "between" runs ~20 ms of JS allocation on the main thread before
// each pass (as the interleaved bench runs JS passes between C's).
import koffi from 'koffi';
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';

interface ChildOptions {
  lib: string;
  ptx: string;
  lazy: boolean;
  busy: 'none' | 'worker' | 'between';
  device: number;
}

/** About `ms` of allocation and property access on the main thread, kept alive until the next call. */
let kept: unknown[] = [];
function churn(ms: number): void {
  const end = process.hrtime.bigint() + BigInt(ms * 1e6);
  const out: unknown[] = [];
  while (process.hrtime.bigint() < end) {
    const a: { i: number; s: string }[] = [];
    for (let i = 0; i < 1000; i++) a.push({ i, s: `x${i}` });
    out.push(a.length > 500 ? a : null);
  }
  kept = out;
}

const BUSY_WORKER = `
  let keep = [];
  for (;;) {
    const a = [];
    for (let i = 0; i < 1000; i++) a.push({ i, s: 'y' + i });
    keep.push(a);
    if (keep.length > 200) keep = [];
  }`;

function main(): void {
  const o = JSON.parse(process.argv[2] ?? '{}') as ChildOptions;
  const so = koffi.load(o.lib, { lazy: o.lazy });
  const init = so.func('int bench_init(const char *ptx, int ordinal)');
  const timePass = so.func('long long bench_time_pass(const char *row, long ops)');
  const pin = so.func('int bench_pin_thread(int cpu)');
  const cpuNow = so.func('int bench_current_cpu(void)');
  if (init(o.ptx, o.device | 0) !== 0) {
    process.stderr.write(`c-floor-child: bench_init(${o.ptx}) failed\n`);
    process.exit(2);
  }
  pin(-1); // remembers the start-up affinity
  if (o.busy === 'worker') new Worker(BUSY_WORKER, { eval: true });
  process.stdout.write(`ready ${process.pid}\n`);
  const rl = createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    if (line.startsWith('quit')) process.exit(0);
    const m = /^pass (\S+) (\d+) (-?\d+)$/.exec(line.trim());
    if (!m) return void process.stdout.write('err bad command\n');
    if (o.busy === 'between') churn(20);
    if ((pin(Number(m[3])) as number) !== 0) return void process.stdout.write('err cannot pin\n');
    const before = cpuNow() as number;
    const t0 = process.hrtime.bigint();
    const ns = Number(timePass(m[1], Number(m[2])));
    const js = process.hrtime.bigint() - t0;
    const after = cpuNow() as number;
    process.stdout.write(ns < 0 ? 'err unknown row\n' : `ok ${ns} ${before} ${after} ${js}\n`);
  });
  rl.on('close', () => process.exit(0));
  void kept;
}

main();
