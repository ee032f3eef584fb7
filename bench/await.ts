// The "await" step of `npm run bench` (issue 46): awaiting GPU work against a blocking wait, in one process.
//   npx tsx bench/await.ts [out.json]      (alone: prints its table and PASS/FAIL per target)
// Resume latency = the instant the awaiting code runs again minus the instant the kernel's last store (a
// flag in pinned memory) became visible to the host, stamped by a worker thread spinning on that flag (one
// clock for both threads). Then the CPU and event-loop lag of a 200 ms await, 1,000 awaits over 64 streams,
// and the launch path with parked waits. Env: the waiter's (CUDA_TS_AWAIT*), BENCH_AWAIT_REPS (15), BENCH_AWAIT_PARTS
// (a comma list of latency, cpu, crowd, launch; default all) and BENCH_AWAIT_CROWD_WARMUPS (150).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type * as CudaTs from '../src';
import { koffi } from '../support';
import { median, reason, table } from './common';
import { type Loader, loadModule } from './startup';

// cuda-ts as the package ships it (compiled CommonJS, BENCH_LOADER as bench/gpu.ts): under tsx every
// export is a getter, which the waiter's hot paths would pay and a user's process does not
const LOADER = (process.env.BENCH_LOADER as Loader) || 'js';
const { Device, Event, LaunchConfig, PinnedHostBuffer, Program, Stream, configureWaits, launch, waiterStats } = loadModule<typeof CudaTs>('src/index', LOADER);
type Event = CudaTs.Event;
type Kernel<A extends readonly unknown[]> = CudaTs.Kernel<A>;
type PinnedHostBuffer = CudaTs.PinnedHostBuffer;
type Stream = CudaTs.Stream;
const { poll } = loadModule<typeof import('../src/poll')>('src/poll', LOADER);
const { markerStats } = loadModule<typeof import('../src/await/markers')>('src/await/markers', LOADER);
const { wakeChannel } = loadModule<typeof import('../src/await/wake')>('src/await/wake', LOADER);

const REPS = Number(process.env.BENCH_AWAIT_REPS ?? 15);
const PARTS = new Set((process.env.BENCH_AWAIT_PARTS ?? 'latency,cpu,crowd,launch').split(','));
const SOURCE = `
extern "C" __global__ void spin_flag(unsigned long long ns, int* flag, unsigned index, int value) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
  *(volatile int*)(flag + index) = value;
  __threadfence_system();
}`;
type SpinKernel = Kernel<readonly [number, PinnedHostBuffer, number, number]>;

// The stamping worker: spins while ctl[0] names a value to look for in flag[0].
const WATCHER = `
const { workerData } = require('node:worker_threads');
const k = require(workerData.koffi); const koffi = typeof k.view === 'function' ? k : k.default;
const flag = new Int32Array(koffi.view(workerData.address, 64));
const ctl = new Int32Array(workerData.sab, 0, 4);
const stamp = new BigInt64Array(workerData.sab, 16, 1);
while (Atomics.load(ctl, 1) === 0) {
  const want = Atomics.load(ctl, 0);
  if (want === 0) { Atomics.wait(ctl, 0, 0, 50); continue; }
  if (flag[0] === want) { stamp[0] = process.hrtime.bigint(); Atomics.store(ctl, 0, 0); }
}`;

interface Ctx {
  spin: SpinKernel;
  host: PinnedHostBuffer;
  ctl: Int32Array;
  stamp: BigInt64Array;
}
let seq = 1;

/** Arms the watcher for the next flag value and launches a kernel of `ns` on `s` that raises it at its end. */
function spinFlag(c: Ctx, s: Stream, ns: number): void {
  const v = ++seq;
  Atomics.store(c.ctl, 0, v);
  Atomics.notify(c.ctl, 0);
  launch(s, LaunchConfig.linear(1, 1), c.spin, ns, c.host, 0, v);
}

/** One kernel of `ns` on `s`, awaited by `wait`; returns µs from the flag's visibility to the resume. */
async function once(c: Ctx, s: Stream, ns: number, wait: (s: Stream) => Promise<void> | void): Promise<number> {
  spinFlag(c, s, ns);
  await wait(s);
  const resumed = process.hrtime.bigint();
  for (let i = 0; Atomics.load(c.ctl, 0) !== 0 && i < 1e7; i++);
  return Number(resumed - c.stamp[0]) / 1000;
}

/** `s.synchronized()` with the waiter's `flags` setting forced for this wait (it is read when the wait is made). */
function synchronizedWith(flags: boolean): (s: Stream) => Promise<void> {
  return (s) => {
    const before = configureWaits().flags;
    configureWaits({ flags });
    const p = s.synchronized();
    configureWaits({ flags: before });
    return p;
  };
}

const METHODS: Record<string, (s: Stream) => Promise<void> | void> = {
  'blocking synchronize()': (s) => s.synchronize(),
  'await stream.synchronized()': (s) => s.synchronized(),
  'the same, spinning on flags (flags: true)': synchronizedWith(true),
  'the same, spinning on queries (flags: false)': synchronizedWith(false),
  'await event.synchronized()': async (s) => {
    const e = Event.create({ timing: false }).record(s);
    try {
      await e.synchronized();
    } finally {
      e.close();
    }
  },
  "today's poll()": (s) => poll(() => s.query(), 'poll'),
  'a bare query loop (reference: no waiter)': bareQueryLoop,
};

/** The floor of a JavaScript spin: `s.query()` back to back in 250 µs slices of setImmediate, nothing else. */
function bareQueryLoop(s: Stream): Promise<void> {
  return new Promise((resolve) => {
    const slice = (): void => {
      const end = performance.now() + 0.25;
      do if (s.query()) return resolve();
      while (performance.now() < end);
      setImmediate(slice);
    };
    setImmediate(slice);
  });
}

/**
 * The worst lag (ms) a 1 ms monitorEventLoopDelay histogram saw: it records the whole interval between
 * its timer's runs (an idle loop reads min ≈ 1.02 ms), so the lag is what exceeds the 1 ms.
 */
function lagOf(h: ReturnType<typeof monitorEventLoopDelay>): number {
  return h.count === 0 ? 0 : Math.max(0, h.max / 1e6 - 1);
}

/**
 * CPU time (ms) of the calling thread, from clock_gettime(CLOCK_THREAD_CPUTIME_ID); NaN off glibc. Not
 * /proc/thread-self/schedstat: for the thread reading it, that lags by up to a scheduler tick (ms).
 */
const threadCpuMs: () => number = (() => {
  try {
    const clockGettime = koffi.load('libc.so.6').func('int clock_gettime(int, void *)');
    const timespec = new BigInt64Array(2);
    return () => (clockGettime(3, timespec) === 0 ? Number(timespec[0]) * 1e3 + Number(timespec[1]) / 1e6 : Number.NaN);
  } catch {
    return () => Number.NaN;
  }
})();

/** A thread's name for the report: Node's own threads all say "node"; CUDA's carry numbers ("cuda00001400006"). */
function threadName(tid: number, comm: string): string {
  if (tid === process.pid) return 'main';
  return comm === 'node' ? "Node's helpers (V8 compiler and GC)" : comm.replace(/[0-9]+$/, '');
}

/** Each thread's CPU time (ns, /proc/self/task/<tid>/schedstat) and name (Linux; empty elsewhere). */
function threadTimes(): Map<string, { name: string; ns: number }> {
  const times = new Map<string, { name: string; ns: number }>();
  if (!existsSync('/proc/self/task')) return times;
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      const comm = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      times.set(tid, { name: threadName(Number(tid), comm), ns });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return times;
}

/**
 * The process CPU (ms) between two snapshots, by thread name, largest first: "main 2.21, node 3.02, …".
 * The main thread's from threadCpuMs(), the others' from threadTimes() (they sleep when it reads them, mostly).
 */
function cpuByThread(before: CpuSnapshot, after: CpuSnapshot): string {
  const byName = new Map<string, number>([['main', after.main - before.main]]);
  for (const [tid, { name, ns }] of after.threads) {
    if (name !== 'main') byName.set(name, (byName.get(name) ?? 0) + (ns - (before.threads.get(tid)?.ns ?? 0)) / 1e6);
  }
  const parts = [...byName].filter(([, ms]) => ms >= 0.005).sort((a, b) => b[1] - a[1]);
  return parts.length === 0 ? 'not measured here' : parts.map(([name, ms]) => `${name} ${ms.toFixed(2)}`).join(', ');
}

interface CpuSnapshot {
  main: number;
  threads: Map<string, { name: string; ns: number }>;
}

/** At a window's start the main thread is read last, at its end first: reading /proc stays outside the window. */
function cpuSnapshot(end = false): CpuSnapshot {
  if (end) {
    const main = threadCpuMs();
    return { main, threads: threadTimes() };
  }
  const threads = threadTimes();
  return { threads, main: threadCpuMs() };
}

interface Verdict {
  target: string;
  value: string;
  verdict: 'PASS' | 'FAIL';
}

/**
 * Rounds of 50 µs kernels over every method before the judged ones: a fresh process runs the await
 * path interpreted (40-110 µs from the call to its spin on an H100 host, ~5 µs once V8 optimized it
 * after some 30 calls), which the first rounds' figures show and a serving process no longer pays.
 */
const LATENCY_WARMUPS = 40;

/**
 * The methods' order in round `r`: index (r + k·step) mod n for k = 0…n−1, the step going through the
 * numbers coprime to n, so that each method follows a different one from round to round (a plain
 * rotation kept every method right behind the same one: the await always behind the blocking wait).
 */
function roundOrder(n: number, r: number): number[] {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const steps = Array.from({ length: n }, (_, s) => s).filter((s) => s > 0 && gcd(s, n) === 1);
  const step = steps.length === 0 ? 1 : steps[r % steps.length];
  return Array.from({ length: n }, (_, k) => (r + k * step) % n);
}

async function latency(c: Ctx, verdicts: Verdict[]): Promise<string> {
  const names = Object.keys(METHODS);
  const rows: string[][] = [];
  const cold = names.map(() => [] as number[]);
  const warmStreams = names.map(() => Stream.create({ nonBlocking: true }));
  for (let r = 0; r < LATENCY_WARMUPS; r++)
    for (const i of roundOrder(names.length, r)) {
      const us = await once(c, warmStreams[i], 50e3, METHODS[names[i]]);
      if (r < 8) cold[i].push(us);
    }
  warmStreams.forEach((s) => s.close());
  const coldLine = `cold (the first 8 of ${LATENCY_WARMUPS} warm-up rounds of 50 µs kernels, not judged): ${names.map((n, i) => `${n.split(' (')[0]} ${median(cold[i]).toFixed(1)}`).join(', ')} µs`;
  for (const ms of [0.05, 1, 20]) {
    const streams = names.map(() => Stream.create({ nonBlocking: true }));
    const samples = names.map(() => [] as number[]);
    const parks = names.map(() => 0);
    const flags = names.map(() => 0);
    for (let r = 0; r < REPS + 2; r++) {
      for (const i of roundOrder(names.length, r)) {
        const name = names[i];
        const { parks: parks0, flagWrites: flags0 } = waiterStats();
        const us = await once(c, streams[i], ms * 1e6, METHODS[name]);
        if (r < 2) continue; // two warm-ups (and the predicted window learns)
        samples[i].push(us);
        parks[i] += waiterStats().parks - parks0;
        flags[i] += waiterStats().flagWrites - flags0;
      }
    }
    streams.forEach((s) => s.close());
    const block = median(samples[0]);
    for (const [i, name] of names.entries()) {
      const med = median(samples[i]);
      rows.push([`${ms * 1000} µs`, name, med.toFixed(1), Math.max(...samples[i]).toFixed(1), (med / block).toFixed(2), String(parks[i]), String(flags[i])]);
    }
    const st = median(samples[1]);
    const flagsOn = configureWaits().flags === true;
    const other = median(samples[flagsOn ? 3 : 2]);
    const bare = median(samples[names.length - 1]);
    verdicts.push({
      target: `resume after a ${ms * 1000} µs kernel: await stream.synchronized() ≤ 1.2× blocking and ≤ 50 µs`,
      value: `${st.toFixed(1)} µs (${(st / block).toFixed(2)}×; blocking ${block.toFixed(1)} µs; flags ${flagsOn ? 'off' : 'on'}: ${(other / block).toFixed(2)}×; a bare query loop: ${(bare / block).toFixed(2)}×)`,
      verdict: st <= 1.2 * block && st <= 50 ? 'PASS' : 'FAIL',
    });
  }
  return `resume latency, µs from the kernel's last store to the code resuming (median and max of ${REPS}, interleaved, a new order each repetition):\n${table(['kernel', 'method', 'median', 'max', '× blocking', 'parked', 'flag writes'], rows, 2)}\n${coldLine}`;
}

async function cpuWhileAwaiting(c: Ctx, verdicts: Verdict[]): Promise<string> {
  const rows: string[][] = [];
  let maxLag = 0;
  for (const [name, wait] of [
    ['await stream.synchronized()', METHODS['await stream.synchronized()']],
    ['await event.synchronized()', METHODS['await event.synchronized()']],
    ["today's poll()", METHODS["today's poll()"]],
  ] as const) {
    const s = Stream.create({ nonBlocking: true });
    const pcts: number[] = [];
    for (let r = 0; r < 4; r++) {
      launch(s, LaunchConfig.linear(1, 1), c.spin, 200e6, c.host, 1, r);
      // its 1 ms timer costs CPU: a 4th wait, not counted. A fresh histogram each time: one disabled
      // and enabled again records the whole pause as one delay (that was the "600 ms lag" of earlier runs)
      const lag = r === 3 && name !== "today's poll()" ? monitorEventLoopDelay({ resolution: 1 }) : undefined;
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      lag?.enable();
      await wait(s);
      lag?.disable();
      if (lag !== undefined) maxLag = Math.max(maxLag, lagOf(lag));
      const u = process.cpuUsage(cpu0);
      if (r < 3) pcts.push(((u.user + u.system) / 1000 / (performance.now() - t0)) * 100);
    }
    s.close();
    rows.push([name, ...pcts.map((p) => p.toFixed(2)), median(pcts).toFixed(2)]);
    if (name !== "today's poll()")
      verdicts.push({
        target: `CPU awaiting a 200 ms kernel (${name}) ≤ 2% of a core`,
        value: `${median(pcts).toFixed(2)}%`,
        verdict: median(pcts) <= 2 ? 'PASS' : 'FAIL',
      });
  }
  verdicts.push({ target: 'event loop worst lag during a 200 ms await ≤ 1 ms', value: `${maxLag.toFixed(2)} ms`, verdict: maxLag <= 1 ? 'PASS' : 'FAIL' });
  return `CPU of the process while awaiting a 200 ms kernel, % of one core (3 waits on one stream; their median):\n${table(['method', '1st', '2nd', '3rd', 'median'], rows)}`;
}

/**
 * 1,000 awaits over 64 streams: CPU measured without the lag monitor (its 1 ms timer costs CPU), lag with it.
 * Beside them the same GPU work with nothing awaited: the process CPU spent whether or not anything awaits.
 */
async function crowd(c: Ctx, verdicts: Verdict[]): Promise<string> {
  const floor = await settlingFloor();
  // a process's first crowds also pay V8 compiling the crowd's paths on its own threads (process CPU): against
  // the fake GPU, V8's threads still ran in 15 of 20 crowds after 8 warm-ups, in 5 of 20 after 150, so the
  // judged crowds are a warm process's (a server's steady state)
  const warmups: string[] = [];
  for (let i = 0; i < CROWD_WARMUPS; i++) warmups.push((await crowdOnce(c, false, i % 2 === 1)).value); // both kinds of crowd
  // judged: the median of CROWD_RUNS of each kind (V8 still compiles now and then, on its own threads), and
  // between them the same GPU work with nothing awaited
  const plain: CrowdRun[] = [];
  const apart: CrowdRun[] = [];
  const controls: { text: string; pct: number }[] = [];
  for (let i = 0; i < CROWD_RUNS; i++) {
    controls.push(await crowdControl(c));
    plain.push(await crowdOnce(c, false));
    apart.push(await crowdOnce(c, false, true));
  }
  const mid = <T extends { pct: number }>(runs: T[]): T => [...runs].sort((a, b) => a.pct - b.pct)[runs.length >> 1];
  const control = mid(controls);
  const second = await crowdOnce(c, true);
  const spread = (runs: CrowdRun[]): string => `median of ${runs.length} (${runs.map((r) => r.pct.toFixed(1)).join(', ')}%)`;
  const clean = [...plain, ...apart, second].every((r) => r.clean);
  const [plainMid, apartMid] = [mid(plain), mid(apart)];
  verdicts.push({
    target: '1,000 concurrent awaits over 64 streams: all resume, ≤ 5% of a core while awaiting, no watcher left',
    value: `${plainMid.value}, ${spread(plain)}; nothing awaited: ${control.pct.toFixed(1)}% (median of ${controls.length}); settling 1,000 promises alone: ${floor.ms.toFixed(2)} ms of CPU; each stream await at its own point: ${apartMid.value}, ${spread(apart)}`,
    verdict: clean && plainMid.pct <= 5 && apartMid.pct <= 5 ? 'PASS' : 'FAIL',
  });
  verdicts.push({
    target: 'event loop worst lag during the 1,000 awaits ≤ 1 ms',
    value: `${second.lagMs.toFixed(2)} ms`,
    verdict: second.lagMs <= 1 ? 'PASS' : 'FAIL',
  });
  const warm = `warm-up crowds (not judged), first and last two of ${CROWD_WARMUPS}: ${warmups[0]}; ${warmups.at(-2)}; ${warmups.at(-1)}`;
  return `${control.text}\n${floor.text}\n${warm}\n${plainMid.text}\n${second.text}\n${apartMid.text}`;
}

/**
 * What resuming 1,000 awaits costs with no waiter at all: 1,000 promises in 64 groups (as the crowd's
 * waits), a group resolved per turn of the event loop, awaited by Promise.allSettled; median of 5.
 */
async function settlingFloor(): Promise<{ text: string; ms: number }> {
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const resolvers: (() => void)[] = [];
    const waits = Array.from({ length: 1000 }, () => new Promise<void>((res) => resolvers.push(res)));
    const cpu = process.cpuUsage();
    const all = Promise.allSettled(waits);
    for (let g = 0; g < 64; g++) {
      await new Promise((res) => setImmediate(res));
      for (let i = g; i < 1000; i += 64) resolvers[i]();
    }
    await all;
    const u = process.cpuUsage(cpu);
    runs.push((u.user + u.system) / 1000);
  }
  const ms = median(runs);
  return { text: `settling 1,000 promises alone (64 groups, one per turn of the event loop, no GPU): ${ms.toFixed(2)} ms of CPU (median of 5)`, ms };
}

interface CrowdWork {
  streams: Stream[];
  gateStream: Stream;
  gate: Event;
}

/** 64 streams and the gate: a 25 ms kernel on a stream of its own and the event recorded behind it. */
function openGate(c: Ctx): CrowdWork {
  const streams = Array.from({ length: 64 }, () => Stream.create({ nonBlocking: true }));
  const gateStream = Stream.create({ nonBlocking: true });
  launch(gateStream, LaunchConfig.linear(1, 1), c.spin, GATE_MS * 1e6, c.host, GATE_FLAG, ++seq);
  return { streams, gateStream, gate: Event.create({ timing: false }).record(gateStream) };
}

/** On each of the 64 streams, a kernel of 5-11 ms that starts once the gate is done. */
function launchBehindGate(c: Ctx, { streams, gate }: CrowdWork): void {
  for (const [i, s] of streams.entries()) launch(s.wait(gate), LaunchConfig.linear(1, 1), c.spin, (5 + (i % 7)) * 1e6, c.host, 2 + i, i + 1);
}

function closeCrowd({ streams, gateStream, gate }: CrowdWork): void {
  gate.close();
  streams.forEach((s) => s.close());
  gateStream.close();
}

/** The crowd's GPU work (gate, 64 kernels) with nothing awaited: a timer past its end; the process CPU meanwhile. */
async function crowdControl(c: Ctx): Promise<{ text: string; pct: number }> {
  const work = openGate(c);
  const { streams } = work;
  launchBehindGate(c, work);
  const threads = cpuSnapshot();
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, GATE_MS + 15)); // past the gate and the longest kernel
  const used = process.cpuUsage(cpu);
  const ms = performance.now() - t0;
  const byThread = cpuByThread(threads, cpuSnapshot(true));
  for (const s of streams) s.synchronize();
  closeCrowd(work);
  const cpuMs = (used.user + used.system) / 1000;
  const pct = (cpuMs / ms) * 100;
  return {
    text: `the same GPU work with nothing awaited (a ${GATE_MS + 15} ms timer): ${cpuMs.toFixed(2)} ms of CPU over ${ms.toFixed(1)} ms (${pct.toFixed(1)}%; by thread, ms: ${byThread})`,
    pct,
  };
}

/** One crowd: its report line, its value for the verdict row, and what the verdict reads. */
interface CrowdRun {
  text: string;
  value: string;
  /** Every await resumed and nothing was left behind. */
  clean: boolean;
  pct: number;
  lagMs: number;
}

const GATE_FLAG = 200;
const CROWD_WARMUPS = Number(process.env.BENCH_AWAIT_CROWD_WARMUPS ?? 150);
const CROWD_RUNS = 7;
const GATE_MS = 25;

/**
 * The kernels (5-11 ms) start only after a 25 ms gate kernel, i.e. once every await is issued (issuing
 * takes 7-15 ms; started at launch, they ended while the 1,000 awaits were still being issued, and the
 * "awaiting" window measured the settling of finished work only). A timed gate, not one the host
 * opens: a gate waiting for the host deadlocked whenever a driver call of the host blocked behind it.
 */
async function crowdOnce(c: Ctx, withLag: boolean, apart = false): Promise<CrowdRun> {
  const work = openGate(c);
  const { streams } = work;
  // apart: an event recorded on the stream before each of its awaits but the first, so that no two
  // stream awaits share a point (plain awaits of one point share one wait)
  const between = apart ? streams.map(() => Event.create({ timing: false })) : [];
  const lag = monitorEventLoopDelay({ resolution: 1 });
  const parks0 = waiterStats().parks;
  const wakes0 = waiterStats().wakes;
  const cpuIssue = process.cpuUsage();
  const t0 = performance.now();
  launchBehindGate(c, work);
  const events = streams.map((s) => Event.create({ timing: false }).record(s));
  const waits: Promise<void>[] = [];
  for (let i = 0; i < 1000; i++) {
    if (apart && i % 4 !== 3 && i >= 64) between[i % 64].record(streams[i % 64]);
    waits.push(i % 4 === 3 ? events[i % 64].synchronized() : streams[i % 64].synchronized());
  }
  const waitsMade = waiterStats().pending;
  const issued = process.cpuUsage(cpuIssue);
  const threads = cpuSnapshot();
  const cpuWait = process.cpuUsage();
  const t1 = performance.now();
  if (withLag) lag.enable();
  const results = await Promise.allSettled(waits);
  const waitCpu = process.cpuUsage(cpuWait);
  const t2 = performance.now();
  const byThread = cpuByThread(threads, cpuSnapshot(true));
  lag.disable();
  const resumed = results.filter((r) => r.status === 'fulfilled').length;
  events.forEach((e) => e.close());
  between.forEach((e) => e.close());
  closeCrowd(work);
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  const st = waiterStats();
  const left = st.pending + st.parked + st.spinning + st.windowTimers + (st.timers ? 1 : 0) + (st.armed ? 1 : 0) + markerStats().helpersOut;
  const cpuMs = (waitCpu.user + waitCpu.system) / 1000;
  const waitPct = (cpuMs / (t2 - t1)) * 100;
  const value = `${resumed}/1000 resumed, ${waitPct.toFixed(1)}% of a core over ${(t2 - t1).toFixed(1)} ms (${cpuMs.toFixed(2)} µs of CPU per await), ${left} left`;
  const text =
    `1,000 awaits over 64 streams (${withLag ? 'with' : 'without'} the lag monitor; kernels of 5-11 ms after a ${GATE_MS} ms gate; 3 of 4 stream waits, 1 of 4 event waits${apart ? '; each stream await at its own point' : ''}; ${waitsMade} waits in the waiter): ` +
    `issuing ${((issued.user + issued.system) / 1000).toFixed(2)} ms of CPU over ${(t1 - t0).toFixed(1)} ms; ` +
    `from the last await issued (the gate opens ${GATE_MS} ms after the first launch) to the last resume ${(t2 - t1).toFixed(1)} ms, ${cpuMs.toFixed(2)} ms of CPU (${waitPct.toFixed(1)}%; by thread, ms: ${byThread}); ${st.parks - parks0} parks, ${st.wakes - wakes0} wakes` +
    (withLag ? `; worst lag ${lagOf(lag).toFixed(2)} ms` : '');
  return { text, value, clean: resumed === 1000 && left === 0, pct: waitPct, lagMs: lagOf(lag) };
}

/**
 * Launch enqueue cost (n launches of an empty kernel on a stream of its own) and a launch+synchronize
 * round trip, in three states interleaved per repetition: idle; 64 other streams busy with 50 ms
 * kernels and nothing awaited; the same with their 64 waits parked. The waiter's own effect is
 * "parked" against "busy" (the GPU's with 64 busy streams, whatever awaits them, is "busy" against "idle").
 */
async function launchPath(c: Ctx, verdicts: Verdict[]): Promise<string> {
  const s = Stream.create({ nonBlocking: true });
  const busy = Array.from({ length: 64 }, () => Stream.create({ nonBlocking: true }));
  const per = (n: number): number => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) launch(s, LaunchConfig.linear(1, 1), c.spin, 0, c.host, 70, i);
    const ns = Number(process.hrtime.bigint() - t0) / n;
    s.synchronize();
    return ns;
  };
  const roundTrip = (): number => {
    const us: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = process.hrtime.bigint();
      launch(s, LaunchConfig.linear(1, 1), c.spin, 0, c.host, 71, i);
      s.synchronize();
      us.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
    return median(us);
  };
  const states = ['idle', 'busy', 'parked'] as const;
  const got = Object.fromEntries(states.map((k) => [k, { n256: [] as number[], n2000: [] as number[], rt: [] as number[] }]));
  for (let r = 0; r < 11; r++) {
    for (const state of r % 2 === 0 ? states : [...states].reverse()) {
      let waits: Promise<void>[] = [];
      if (state !== 'idle') {
        busy.forEach((b, i) => launch(b, LaunchConfig.linear(1, 1), c.spin, 50e6, c.host, 80 + i, r));
        if (state === 'parked') waits = busy.map((b) => b.synchronized());
        await new Promise((res) => setTimeout(res, 2)); // past the spin: parked
      }
      got[state].rt.push(roundTrip());
      got[state].n256.push(per(256));
      got[state].n2000.push(per(2000));
      if (state === 'parked') await Promise.all(waits);
      else busy.forEach((b) => b.synchronize());
    }
  }
  busy.forEach((b) => b.close());
  s.close();
  const m = (state: (typeof states)[number], k: 'n256' | 'n2000' | 'rt'): number => median(got[state][k]);
  const ratio = m('parked', 'n2000') / m('busy', 'n2000');
  verdicts.push({
    target: 'launch path unchanged: launch with 64 parked waits ≤ 1.01× with the same 64 streams busy and nothing awaited',
    value: `${m('parked', 'n2000').toFixed(0)} vs ${m('busy', 'n2000').toFixed(0)} ns (${ratio.toFixed(3)}×; idle GPU ${m('idle', 'n2000').toFixed(0)} ns)`,
    verdict: ratio <= 1.01 ? 'PASS' : 'FAIL',
  });
  const rows = states.map((k) => [k, m(k, 'n256').toFixed(0), m(k, 'n2000').toFixed(0), m(k, 'rt').toFixed(1)]);
  return `launch enqueue, 4 arguments (medians of 11, interleaved, order alternated; parkOn '${configureWaits().parkOn}'): ns per launch over 256 and over 2,000 launches; launch+synchronize µs:\n${table(['state', '256', '2,000', 'round trip'], rows)}`;
}

export async function awaitSection(): Promise<{ text: string; verdicts: Verdict[] }> {
  Device.get(0).setCurrent();
  const program = new Program(SOURCE, { name: 'await-bench.cu' }).compile();
  const mod = program.load();
  const spin = mod.kernel('spin_flag', ['u64', 'ptr', 'u32', 'i32']) as unknown as SpinKernel;
  const host = PinnedHostBuffer.alloc(4096);
  const sab = new SharedArrayBuffer(32);
  const c: Ctx = { spin, host, ctl: new Int32Array(sab, 0, 4), stamp: new BigInt64Array(sab, 16, 1) };
  const worker = new Worker(WATCHER, {
    eval: true,
    workerData: { sab, address: (host as unknown as { address: number }).address, koffi: require.resolve('koffi') },
  });
  const verdicts: Verdict[] = [];
  const parts: string[] = [
    `awaiting GPU work (issue 46): cuda-ts loaded as ${LOADER}; wake channel ${wakeChannel()?.name ?? 'none (polling)'}; waiter ${JSON.stringify(configureWaits())}`,
  ];
  try {
    if (PARTS.has('latency')) parts.push(await latency(c, verdicts));
  } finally {
    Atomics.store(c.ctl, 1, 1);
    Atomics.notify(c.ctl, 0);
    await worker.terminate();
  }
  if (PARTS.has('cpu')) parts.push(await cpuWhileAwaiting(c, verdicts));
  if (PARTS.has('crowd')) parts.push(await crowd(c, verdicts));
  if (PARTS.has('launch')) parts.push(await launchPath(c, verdicts));
  host.close();
  mod.close();
  program.close();
  parts.push(
    `await targets:\n${table(
      ['target', 'value', 'verdict'],
      verdicts.map((v) => [v.target, v.value, v.verdict]),
      2,
    )}`,
  );
  return { text: parts.join('\n\n'), verdicts };
}

if (require.main === module || process.argv[1] === __filename) {
  awaitSection().then(
    ({ text, verdicts }) => {
      console.log(text);
      if (process.argv[2]) writeFileSync(process.argv[2], JSON.stringify({ text, verdicts }, null, 1));
      process.exit(0);
    },
    (e) => {
      console.error(`await: ${reason(e)}`);
      process.exit(1);
    },
  );
}
