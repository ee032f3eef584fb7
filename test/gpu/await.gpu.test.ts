// Awaited waits on a GPU (src/await/): the real wake channel (libc sem_post as a host function, one
// koffi .async sem_wait), correctness of what is awaited, cancellation, enqueueHost beside a JS host
// callback, 1,000 awaits over 64 streams, and nothing left behind. Skips with one reason without a GPU.
import { Event, LaunchConfig, PinnedHostBuffer, Stream, launch, type Kernel, type Module } from '../../src';
import { configureWaits, waiterStats } from '../../src/await/waiter';
import { markerStats } from '../../src/await/markers';
import { pipeChannel, setWakeChannel, wakeChannel } from '../../src/await/wake';
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { compileForSuite, describeGpu } from './gpu-env';

// spins `ns` nanoseconds of the GPU's clock, then writes `value` to `out[index]`
const SOURCE = `
extern "C" __global__ void spin_write(unsigned long long ns, int* out, unsigned index, int value) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
  out[index] = value;
  __threadfence_system();
}
`;

describeGpu('awaited waits (the waiter)', () => {
  const suite = compileForSuite(SOURCE, { name: 'await.cu' });
  let mod: Module;
  let spin: Kernel<readonly [number, PinnedHostBuffer, number, number]>;
  let host: PinnedHostBuffer;
  const one = LaunchConfig.linear(1, 1);
  beforeAll(() => {
    mod = suite.module;
    spin = mod.kernel('spin_write', ['u64', 'ptr', 'u32', 'i32']) as never;
    host = PinnedHostBuffer.alloc(4096);
  });
  afterAll(() => host.close());
  const flag = (i = 0): number => host.array(Int32Array)[i];
  const nothingLeft = async (): Promise<void> => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    const st = waiterStats();
    expect({ pending: st.pending, parked: st.parked, spinning: st.spinning, timers: st.timers, armed: st.armed, windowTimers: st.windowTimers }).toEqual({
      pending: 0,
      parked: 0,
      spinning: 0,
      timers: false,
      armed: false,
      windowTimers: 0,
    });
    expect(markerStats().helpersOut).toBe(0);
  };

  test('the semaphore channel is in use; stream and event waits resolve only once the kernel wrote', async () => {
    expect(wakeChannel()?.name).toBe('sem');
    using s = Stream.create({ nonBlocking: true });
    for (const ms of [0.05, 1, 20]) {
      host.array(Int32Array)[0] = 0;
      launch(s, one, spin, ms * 1e6, host, 0, 7);
      await s.synchronized();
      expect(flag()).toBe(7);
      host.array(Int32Array)[0] = 0;
      launch(s, one, spin, ms * 1e6, host, 0, 8);
      using ev = Event.create({ timing: false }).record(s);
      await ev.synchronized();
      expect(flag()).toBe(8);
    }
    expect(waiterStats().parks).toBeGreaterThan(0); // the 20 ms waits parked
    await nothingLeft();
  });

  test('an await is not held by work enqueued after it, in its spin, its predicted window or parked', async () => {
    using s = Stream.create({ nonBlocking: true });
    for (const ms of [0.05, 1, 2, 20]) {
      const t = host.array(Int32Array);
      t[2] = t[3] = 0;
      launch(s, one, spin, ms * 1e6, host, 2, 41);
      const awaited = s.synchronized().then(() => [flag(2), flag(3)]);
      launch(s, one, spin, 300e6, host, 3, 42); // enqueued after the await: 300 ms more
      const t0 = performance.now();
      expect(await awaited).toEqual([41, 0]);
      expect(performance.now() - t0).toBeLessThan(200);
      s.synchronize();
      expect(flag(3)).toBe(42);
    }
    await nothingLeft();
  });

  test("the pipe channel and parkOn 'stream' wake parked waits too, in order, leaving nothing", async () => {
    const before = configureWaits();
    setWakeChannel(pipeChannel());
    try {
      for (const parkOn of ['helper', 'stream'] as const) {
        configureWaits({ spinMicros: 0, predict: false, parkOn });
        using s = Stream.create({ nonBlocking: true });
        const t = host.array(Int32Array);
        t[0] = t[1] = 0;
        const parks0 = waiterStats().parks;
        launch(s, one, spin, 5e6, host, 0, 31);
        const first = s.synchronized().then(() => [flag(0), flag(1)]);
        launch(s, one, spin, 5e6, host, 1, 32);
        const second = s.synchronized().then(() => flag(1));
        expect(await first).toEqual([31, 0]); // between the two kernels
        expect(await second).toBe(32);
        expect(waiterStats().parks - parks0).toBeGreaterThanOrEqual(2);
        expect(waiterStats().channel).toBe('pipe');
        await nothingLeft();
      }
    } finally {
      configureWaits(before);
      setWakeChannel(undefined);
    }
  });

  test('a spinning stream wait ends on its flag write: the kernel before it wrote, the one after still runs', async () => {
    const before = configureWaits();
    configureWaits({ spinMicros: 200_000, flags: true }); // opt-in; the whole wait spins: the flag (or a 64th-pass query) ends it
    try {
      using s = Stream.create({ nonBlocking: true });
      host.array(Int32Array).fill(0, 0, 2);
      const { flagWrites: writes0, parks: parks0 } = waiterStats();
      launch(s, one, spin, 2e6, host, 0, 41);
      const first = s.synchronized();
      launch(s, one, spin, 100e6, host, 1, 42);
      await first;
      expect([flag(0), flag(1)]).toEqual([41, 0]);
      expect(s.query()).toBe(false); // the 100 ms kernel still runs
      expect(waiterStats().flagWrites - writes0).toBe(1);
      expect(waiterStats().parks).toBe(parks0); // the spin covered it
      await s.synchronized();
      expect(flag(1)).toBe(42);
      await nothingLeft();
    } finally {
      configureWaits(before);
    }
  });

  test('a wait is for the work enqueued before it, not after', async () => {
    using s = Stream.create({ nonBlocking: true });
    host.array(Int32Array).fill(0, 0, 2);
    launch(s, one, spin, 5e6, host, 0, 1);
    const first = s.synchronized();
    launch(s, one, spin, 150e6, host, 1, 2); // a long kernel enqueued after the wait began
    await first;
    expect([flag(0), flag(1)]).toEqual([1, 0]); // resumed between the two kernels
    await s.synchronized();
    expect(flag(1)).toBe(2);
    await nothingLeft();
  });

  test('AbortSignal and timeoutMs reject a parked wait with nothing left behind; the stream still completes', async () => {
    configureWaits({ spinMicros: 50 });
    try {
      using s = Stream.create({ nonBlocking: true });
      launch(s, one, spin, 300e6, host, 0, 3);
      const ac = new AbortController();
      const aborted = s.synchronized({ signal: ac.signal });
      const timedOut = s.synchronized({ timeoutMs: 20 });
      setTimeout(() => ac.abort(new Error('not needed')), 10);
      await expect(aborted).rejects.toMatchObject({
        name: 'AbortError',
        message: expect.stringMatching(/^Stream.synchronized: the wait was aborted \(not needed\)/),
      });
      await expect(timedOut).rejects.toThrow('Stream.synchronized: timed out after 20 ms');
      await nothingLeft();
      await s.synchronized(); // the kernel is still there; a new wait parks afresh
      expect(flag()).toBe(3);
      await nothingLeft();
    } finally {
      configureWaits({ spinMicros: 200 });
    }
  });

  test('1,000 concurrent awaits over 64 streams (kernels of 5-11 ms) all resume, and nothing is left', async () => {
    const streams = Array.from({ length: 64 }, () => Stream.create({ nonBlocking: true }));
    try {
      host.array(Int32Array).fill(0, 0, 64);
      for (const [i, s] of streams.entries()) launch(s, one, spin, (5 + (i % 7)) * 1e6, host, i, 100 + i);
      const events = streams.map((s) => Event.create({ timing: false }).record(s));
      const waits: Promise<void>[] = [];
      for (let i = 0; i < 1000; i++) waits.push(i % 4 === 3 ? events[i % 64].synchronized() : streams[i % 64].synchronized());
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await Promise.all(waits);
      const wall = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      expect(Array.from({ length: 64 }, (_, i) => flag(i))).toEqual(Array.from({ length: 64 }, (_, i) => 100 + i)); // every kernel wrote
      expect(wall).toBeLessThan(200);
      process.stdout.write(
        `1000 awaits / 64 streams: ${wall.toFixed(1)} ms, CPU ${(((cpu.user + cpu.system) / 1000 / wall) * 100).toFixed(1)}% of a core, ${waiterStats().parks} parks so far\n`,
      );
      events.forEach((e) => e.close());
      await nothingLeft();
    } finally {
      streams.forEach((s) => s.close());
    }
  });

  test('enqueueHost runs after the GPU reached the point, beside a JS host callback, and a blocking wait inside it is allowed', async () => {
    using s = Stream.create({ nonBlocking: true });
    host.array(Int32Array)[0] = 0;
    const seen: number[] = [];
    launch(s, one, spin, 2e6, host, 0, 11);
    s.launchHostFunc(() => seen.push(flag())); // a JS host callback (koffi, main loop) before the point
    const r = s.enqueueHost(() => {
      seen.push(flag());
      s.synchronize(); // no JS callback is pending any more: allowed, and returns
      return 'done';
    });
    await expect(r).resolves.toBe('done');
    expect(seen).toEqual([11, 11]);
    await nothingLeft();
  });

  test('a worker thread opens a stream and an event by descriptor, awaits them, and the owner closes them once', async () => {
    const s = Stream.create({ nonBlocking: true });
    const ev = Event.create({ timing: false });
    host.array(Int32Array)[5] = 0;
    launch(s, one, spin, 50e6, host, 5, 21);
    ev.record(s);
    const source = `
      require('tsx/cjs');
      const { parentPort, workerData } = require('node:worker_threads');
      const { Stream, Event } = require(${JSON.stringify(join(__dirname, '../../src/index.ts'))});
      (async () => {
        const s = Stream.fromDescriptor(workerData.stream);
        const ev = Event.fromDescriptor(workerData.event);
        await ev.synchronized();
        await s.synchronized();
        const owned = [s.owned];
        s.close(); ev.close(); // wrappers only
        parentPort.postMessage({ ok: true, owned });
      })().catch((e) => parentPort.postMessage({ error: String(e && e.stack || e) }));`;
    const w = new Worker(source, { eval: true, workerData: { stream: s.descriptor(), event: ev.descriptor() } });
    try {
      const reply = await new Promise<{ ok?: boolean; owned?: boolean[]; error?: string }>((res, rej) => {
        w.once('message', res);
        w.once('error', rej);
      });
      expect(reply).toEqual({ ok: true, owned: [false] });
      expect(flag(5)).toBe(21); // the worker resumed after the kernel wrote
      launch(s, one, spin, 1e6, host, 5, 22); // the stream and event still work here
      await ev.record(s).synchronized();
      expect(flag(5)).toBe(22);
    } finally {
      await w.terminate();
      ev.close();
      s.close();
    }
    await nothingLeft();
  }, 60_000);
});
