// The "await" section of the bench (issue 46): awaiting GPU work against a blocking wait, in one process.
//   npx tsx bench/await.ts [out.json]      (alone: prints its table and PASS/FAIL per target)
// bench/run.ts runs it as a child (step 'await') and appends the same text and verdicts.
//
// Resume latency = the instant the awaiting code runs again minus the instant the kernel's last store
// (a flag in pinned memory, after a spin on %globaltimer) became visible to the host, which a worker
// thread spinning on that flag stamps (process.hrtime, one clock for both threads). Methods, interleaved
// per repetition, each on its own stream: blocking synchronize(), `await stream.synchronized()`,
// `await event.synchronized()`, the waiter parked from the start (no spin, no prediction), today's
// polling (poll(): setImmediate 2 ms, then timers), a JS loop on cuStreamQuery and one on cuEventQuery
// (both hold the event loop: the floor of any JS detector), koffi's `.async` cuStreamSynchronize; the
// `parked` column counts the waits that parked. Then the hops of a parked wake apart, the CPU and
// event-loop lag of a 200 ms await, 1,000 awaits over 64 streams, and the launch path.
// Env: the waiter's (CUDA_TS_AWAIT=pipe|poll, CUDA_TS_AWAIT_PARK=stream, CUDA_TS_AWAIT_SPIN_US) and
// BENCH_AWAIT_REPS (15).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import * as net from 'node:net';
import { writeFileSync } from 'node:fs';
import { Device, Event, LaunchConfig, PinnedHostBuffer, Program, Stream, launch, type Kernel } from '../src';
import * as drv from '../src/driver';
import { poll } from '../src/poll';
import { configureWaits, waiterStats } from '../src/await/waiter';
import { markerStats } from '../src/await/markers';
import { wakeChannel } from '../src/await/wake';
import { median, table } from './common';
import { koffi } from '../support';

const REPS = Number(process.env.BENCH_AWAIT_REPS ?? 15);
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
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

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

const asyncSync = drv.native('cuStreamSynchronize') as unknown as { async?: (h: number, cb: (e: unknown, r: number) => void) => void };
const METHODS: Record<string, (s: Stream) => Promise<void> | void> = {
  'blocking synchronize()': (s) => s.synchronize(),
  'await stream.synchronized()': (s) => s.synchronized(),
  'await event.synchronized()': async (s) => {
    const e = Event.create({ timing: false }).record(s);
    try {
      await e.synchronized();
    } finally {
      e.close();
    }
  },
  'waiter parked at once': async (s) => {
    const before = configureWaits();
    configureWaits({ spinMicros: 0, predict: false });
    try {
      await s.synchronized();
    } finally {
      configureWaits(before);
    }
  },
  "today's poll()": (s) => poll(() => s.query(), 'poll'),
  'cuStreamQuery loop (blocks)': (s) => {
    while (!s.query()); // the floor of any JS detector; holds the event loop (diagnostic only)
  },
  'cuEventQuery loop (blocks)': (s) => {
    const e = Event.create({ timing: false }).record(s);
    while (!e.query()); // the same on an event recorded after the kernel (what a stream wait's marker is)
    e.close();
  },
  '.async cuStreamSynchronize': (s) =>
    new Promise<void>((res, rej) => asyncSync.async!(s.handle, (e, r) => (e || r ? rej(e ?? new Error(`status ${r}`)) : res()))),
};

/**
 * The worst lag (ms) a 1 ms monitorEventLoopDelay histogram saw: it records the whole interval between
 * its timer's runs (an idle loop reads min ≈ 1.02 ms), so the lag is what exceeds the 1 ms.
 */
function lagOf(h: ReturnType<typeof monitorEventLoopDelay>): number {
  return h.count === 0 ? 0 : Math.max(0, h.max / 1e6 - 1);
}

interface Verdict {
  target: string;
  value: string;
  verdict: 'PASS' | 'FAIL';
}

async function latency(c: Ctx, verdicts: Verdict[]): Promise<string> {
  const names = Object.keys(METHODS).filter((m) => !m.startsWith('.async') || typeof asyncSync.async === 'function');
  const rows: string[][] = [];
  for (const ms of [0.05, 1, 20]) {
    const streams = names.map(() => Stream.create({ nonBlocking: true }));
    const samples = names.map(() => [] as number[]);
    const parks = names.map(() => 0);
    for (let r = 0; r < REPS + 2; r++) {
      for (const [i, name] of names.entries()) {
        const parks0 = waiterStats().parks;
        const us = await once(c, streams[i], ms * 1e6, METHODS[name]);
        if (r >= 2) samples[i].push(us); // two warm-ups (and the predicted window learns)
        if (r >= 2) parks[i] += waiterStats().parks - parks0;
      }
    }
    streams.forEach((s) => s.close());
    const block = median(samples[0]);
    for (const [i, name] of names.entries()) {
      const med = median(samples[i]);
      rows.push([`${ms * 1000} µs`, name, med.toFixed(1), Math.max(...samples[i]).toFixed(1), (med / block).toFixed(2), String(parks[i])]);
    }
    const st = median(samples[1]);
    verdicts.push({
      target: `resume after a ${ms * 1000} µs kernel: await stream.synchronized() ≤ 1.2× blocking and ≤ 50 µs`,
      value: `${st.toFixed(1)} µs (${(st / block).toFixed(2)}×; blocking ${block.toFixed(1)} µs)`,
      verdict: st <= 1.2 * block && st <= 50 ? 'PASS' : 'FAIL',
    });
  }
  return `resume latency, µs from the kernel's last store to the code resuming (median and max of ${REPS}, interleaved):\n${table(['kernel', 'method', 'median', 'max', '× blocking', 'parked'], rows, 2)}`;
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

/** 1,000 awaits over 64 streams; run twice: CPU measured without the lag monitor (its 1 ms timer costs CPU), lag with it. */
async function crowd(c: Ctx, verdicts: Verdict[]): Promise<string> {
  const first = await crowdOnce(c, false);
  const second = await crowdOnce(c, true);
  verdicts.push({
    target: '1,000 concurrent awaits over 64 streams: all resume, ≤ 5% of a core while awaiting, no watcher left',
    value: first.value,
    verdict: first.pass && second.pass ? 'PASS' : 'FAIL',
  });
  verdicts.push({
    target: 'event loop worst lag during the 1,000 awaits ≤ 1 ms',
    value: `${second.lagMs.toFixed(2)} ms`,
    verdict: second.lagMs <= 1 ? 'PASS' : 'FAIL',
  });
  return `${first.text}\n${second.text}`;
}

const GATE_FLAG = 200;
const GATE_MS = 25;

/**
 * The kernels (5-11 ms) start only after a 25 ms gate kernel, i.e. once every await is issued (issuing
 * takes 7-15 ms; started at launch, they ended while the 1,000 awaits were still being issued, and the
 * "awaiting" window measured the settling of finished work only). A timed gate, not one the host
 * opens: a gate waiting for the host deadlocked whenever a driver call of the host blocked behind it.
 */
async function crowdOnce(c: Ctx, withLag: boolean): Promise<{ text: string; value: string; pass: boolean; lagMs: number }> {
  const streams = Array.from({ length: 64 }, () => Stream.create({ nonBlocking: true }));
  const gateStream = Stream.create({ nonBlocking: true });
  launch(gateStream, LaunchConfig.linear(1, 1), c.spin, GATE_MS * 1e6, c.host, GATE_FLAG, ++seq);
  const gate = Event.create({ timing: false }).record(gateStream);
  const lag = monitorEventLoopDelay({ resolution: 1 });
  const parks0 = waiterStats().parks;
  const wakes0 = waiterStats().wakes;
  const cpuIssue = process.cpuUsage();
  const t0 = performance.now();
  for (const [i, s] of streams.entries()) launch(s.wait(gate), LaunchConfig.linear(1, 1), c.spin, (5 + (i % 7)) * 1e6, c.host, 2 + i, i + 1);
  const events = streams.map((s) => Event.create({ timing: false }).record(s));
  const waits: Promise<void>[] = [];
  for (let i = 0; i < 1000; i++) waits.push(i % 4 === 3 ? events[i % 64].synchronized() : streams[i % 64].synchronized());
  const issued = process.cpuUsage(cpuIssue);
  const cpuWait = process.cpuUsage();
  const t1 = performance.now();
  if (withLag) lag.enable();
  const results = await Promise.allSettled(waits);
  const waitCpu = process.cpuUsage(cpuWait);
  const t2 = performance.now();
  lag.disable();
  const resumed = results.filter((r) => r.status === 'fulfilled').length;
  events.forEach((e) => e.close());
  gate.close();
  streams.forEach((s) => s.close());
  gateStream.close();
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  const st = waiterStats();
  const left = st.pending + st.parked + st.spinning + st.windowTimers + (st.timers ? 1 : 0) + (st.armed ? 1 : 0) + markerStats().helpersOut;
  const cpuMs = (waitCpu.user + waitCpu.system) / 1000;
  const waitPct = (cpuMs / (t2 - t1)) * 100;
  const value = `${resumed}/1000 resumed, ${waitPct.toFixed(1)}% of a core over ${(t2 - t1).toFixed(1)} ms (${cpuMs.toFixed(2)} µs of CPU per await), ${left} left`;
  const pass = resumed === 1000 && left === 0 && (withLag || waitPct <= 5);
  const text =
    `1,000 awaits over 64 streams (${withLag ? 'with' : 'without'} the lag monitor; kernels of 5-11 ms after a ${GATE_MS} ms gate; 3 of 4 stream waits, 1 of 4 event waits): ` +
    `issuing ${((issued.user + issued.system) / 1000).toFixed(2)} ms of CPU over ${(t1 - t0).toFixed(1)} ms; ` +
    `from the last await issued (the gate opens ${GATE_MS} ms after the first launch) to the last resume ${(t2 - t1).toFixed(1)} ms, ${cpuMs.toFixed(2)} ms of CPU (${waitPct.toFixed(1)}%); ${st.parks - parks0} parks, ${st.wakes - wakes0} wakes` +
    (withLag ? `; worst lag ${lagOf(lag).toFixed(2)} ms` : '');
  return { text, value, pass, lagMs: lagOf(lag) };
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

// The hops of a parked wake, measured apart: a worker thread posts a semaphore (stamped) that the main
// thread sleeps on through koffi's .async (pool thread, then uv_async_send to the loop); and a worker
// sleeping in a plain sem_wait that a host function (sem_post, after a 50 µs kernel) wakes.
const HOPPER = `
const { workerData } = require('node:worker_threads');
const k = require(workerData.koffi); const koffi = typeof k.view === 'function' ? k : k.default;
const libc = koffi.load('libc.so.6');
const semPost = libc.func('int sem_post(void *)');
const semWait = libc.func('int sem_wait(void *)');
const fflush = libc.func('int fflush(void *)');
const ctl = new Int32Array(workerData.sab, 0, 4);
const stamp = new BigInt64Array(workerData.sab, 16, 2);
for (;;) {
  Atomics.wait(ctl, 0, 0);
  const mode = Atomics.load(ctl, 0);
  if (mode === 9) break;
  if (mode === 1) { stamp[0] = process.hrtime.bigint(); semPost(workerData.semA); }
  if (mode === 2) { semWait(workerData.semB); stamp[1] = process.hrtime.bigint(); }
  if (mode === 3) { stamp[0] = process.hrtime.bigint(); fflush(workerData.file); }
  Atomics.store(ctl, 0, 0);
}`;

/** What kernelHops needs of hops' rig: the hopper worker's control and stamps, its semaphore, the pipe's FILE. */
interface HopRig {
  ctl: Int32Array;
  stamp: BigInt64Array;
  semB: bigint;
  file: bigint;
  fputc: (ch: number, f: bigint) => number;
  dlsym: (h: null, n: string) => bigint;
  order: (mode: number) => void;
  /** When the pipe's read end next sees data. */
  nextData: () => Promise<bigint>;
}

/** Kernel end (flag) -> a host function (sem_post, fflush) -> the side that waits on it: report lines. */
async function kernelHops(c: Ctx, s: Stream, h: HopRig): Promise<string[]> {
  const lines: string[] = [];
  // kernel end (flag) -> host function sem_post -> a thread asleep in sem_wait runs
  const postAddr = h.dlsym(null, 'sem_post');
  const hostFunc = drv.native('cuLaunchHostFunc') as unknown as (stream: number, fn: bigint, data: bigint) => number;
  const gpuHop: number[] = [];
  for (let r = 0; r < 21; r++) {
    h.order(2);
    await sleep(1);
    spinFlag(c, s, 50e3);
    if (hostFunc(s.handle, postAddr, h.semB) !== 0) throw new Error('cuLaunchHostFunc failed');
    for (let i = 0; Atomics.load(h.ctl, 0) !== 0 && i < 1e9; i++) if ((i & 1023) === 0) await sleep(0);
    for (let i = 0; Atomics.load(c.ctl, 0) !== 0 && i < 1e7; i++);
    gpuHop.push(Number(h.stamp[1] - c.stamp[0]) / 1000);
  }
  lines.push(
    `kernel end (flag) -> host function sem_post -> a thread asleep in sem_wait: median ${median(gpuHop).toFixed(1)} µs, max ${Math.max(...gpuHop).toFixed(1)}`,
  );
  const flushAddr = h.dlsym(null, 'fflush');
  const gpuPipe: number[] = [];
  for (let r = 0; r < 21; r++) {
    h.fputc(120, h.file);
    const back = h.nextData();
    await sleep(1);
    spinFlag(c, s, 50e3);
    if (hostFunc(s.handle, flushAddr, h.file) !== 0) throw new Error('cuLaunchHostFunc failed');
    const t = await back;
    for (let i = 0; Atomics.load(c.ctl, 0) !== 0 && i < 1e7; i++);
    gpuPipe.push(Number(t - c.stamp[0]) / 1000);
  }
  lines.push(
    `kernel end (flag) -> host function fflush -> pipe -> JS on the main loop: median ${median(gpuPipe).toFixed(1)} µs, max ${Math.max(...gpuPipe).toFixed(1)}`,
  );
  return lines;
}

async function hops(c: Ctx): Promise<string> {
  const libc = koffi.load('libc.so.6');
  const malloc = libc.func('void *malloc(size_t)') as unknown as (n: number) => bigint;
  const semInit = libc.func('int sem_init(void *, int, unsigned int)') as unknown as (p: bigint, a: number, b: number) => number;
  const semWait = libc.func('int sem_wait(void *)') as unknown as { async(p: bigint, cb: (e: unknown, r: number) => void): void };
  const dlsym = libc.func('void *dlsym(void *, const char *)') as unknown as (h: null, n: string) => bigint;
  const semA = BigInt(malloc(64));
  const semB = BigInt(malloc(64));
  semInit(semA, 0, 0);
  semInit(semB, 0, 0);
  const sab = new SharedArrayBuffer(32);
  const ctl = new Int32Array(sab, 0, 4);
  const stamp = new BigInt64Array(sab, 16, 2);
  // a pipe whose write end is a buffered FILE: fflush (one pointer argument, a host function) writes
  // the byte fputc left there, and the main loop's epoll sees the read end (net.Socket) at once
  const pipeFn = libc.func('int pipe(_Out_ int *fds)') as unknown as (fds: Int32Array) => number;
  const fds = new Int32Array(2);
  if (pipeFn(fds) !== 0) throw new Error('pipe failed');
  const file = BigInt((libc.func('void *fdopen(int, const char *)') as unknown as (fd: number, m: string) => bigint)(fds[1], 'w'));
  const fputc = libc.func('int fputc(int, void *)') as unknown as (ch: number, f: bigint) => number;
  const sock = new net.Socket({ fd: fds[0], readable: true, writable: false });
  let onData: ((t: bigint) => void) | undefined;
  sock.on('data', () => onData?.(process.hrtime.bigint()));
  const w = new Worker(HOPPER, { eval: true, workerData: { sab, semA, semB, file, koffi: require.resolve('koffi') } });
  const order = (mode: number): void => {
    Atomics.store(ctl, 0, mode);
    Atomics.notify(ctl, 0);
  };
  const lines: string[] = [];
  // a turn of the event loop while something spins on setImmediate
  let turnsDone = 0;
  const tTurn = performance.now();
  while (performance.now() - tTurn < 20) await new Promise((r) => setImmediate(r)).then(() => turnsDone++);
  lines.push(`a setImmediate turn of the event loop: ${((20 * 1000) / turnsDone).toFixed(2)} µs`);
  const s = Stream.create({ nonBlocking: true });
  const ev = Event.create({ timing: false }).record(s);
  s.synchronize();
  const tq = process.hrtime.bigint();
  for (let i = 0; i < 10_000; i++) s.query();
  const tq2 = process.hrtime.bigint();
  for (let i = 0; i < 10_000; i++) ev.query();
  lines.push(
    `cuStreamQuery through Stream.query(): ${(Number(tq2 - tq) / 1e4).toFixed(0)} ns; cuEventQuery through Event.query(): ${(Number(process.hrtime.bigint() - tq2) / 1e4).toFixed(0)} ns`,
  );
  // sem_post in a worker -> koffi .async sem_wait returns -> JS callback on the (sleeping) main loop
  const asyncHop: number[] = [];
  for (let r = 0; r < 21; r++) {
    const back = new Promise<bigint>((res) => semWait.async(semA, () => res(process.hrtime.bigint())));
    await sleep(2);
    order(1);
    asyncHop.push(Number((await back) - stamp[0]) / 1000);
    while (Atomics.load(ctl, 0) !== 0);
  }
  lines.push(`sem_post (worker) -> koffi .async sem_wait -> JS callback: median ${median(asyncHop).toFixed(1)} µs, max ${Math.max(...asyncHop).toFixed(1)}`);
  const pipeHop: number[] = [];
  for (let r = 0; r < 21; r++) {
    fputc(120, file);
    const back = new Promise<bigint>((res) => (onData = res));
    await sleep(2);
    order(3);
    pipeHop.push(Number((await back) - stamp[0]) / 1000);
    while (Atomics.load(ctl, 0) !== 0);
  }
  lines.push(`fflush (worker) -> pipe -> net.Socket 'data' on the main loop: median ${median(pipeHop).toFixed(1)} µs, max ${Math.max(...pipeHop).toFixed(1)}`);
  lines.push(...(await kernelHops(c, s, { ctl, stamp, semB, file, fputc, dlsym, order, nextData: () => new Promise<bigint>((res) => (onData = res)) })));
  sock.destroy();
  s.synchronize();
  ev.close();
  s.close();
  order(9);
  await w.terminate();
  return `hops of a wake:\n  ${lines.join('\n  ')}`;
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
  const parts: string[] = [`awaiting GPU work (issue 46): wake channel ${wakeChannel()?.name ?? 'none (polling)'}; waiter ${JSON.stringify(configureWaits())}`];
  try {
    parts.push(await latency(c, verdicts));
    parts.push(await hops(c));
  } finally {
    Atomics.store(c.ctl, 1, 1);
    Atomics.notify(c.ctl, 0);
    await worker.terminate();
  }
  parts.push(await cpuWhileAwaiting(c, verdicts));
  parts.push(await crowd(c, verdicts));
  parts.push(await launchPath(c, verdicts));
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
      console.error(e);
      process.exit(1);
    },
  );
}
