// The waiter (src/await/) against a fake GPU and a fake wake channel: spin then park, one host
// function per stream however many waits, ordering, enqueueHost, the polling fallback, the predicted
// window, a destroyed context (cancellation: await-cancel.test.ts).
import { Stream } from '../src/stream';
import { Event } from '../src/event';
import { CudaError } from '../src/errors';
import { configureWaits, waiterStats } from '../src/await/waiter';
import { HELPERS_PER_CONTEXT, markerStats } from '../src/await/markers';
import { setWakeChannel } from '../src/await/wake';
import { poll } from '../src/poll';
import { pipeline } from '../src/await/pipeline';
import { FakeChannel, FakeGpu, expectWaiterClean, sleep, turns, until, useFakeWaiter } from './helpers/await-gpu';
import type { Context } from '../src/context';

let ctx: Context;
let channel: FakeChannel;
let gpu: FakeGpu;
const fake = useFakeWaiter({ spinMicros: 0, predict: false, sweepMs: 50, flags: false });
beforeEach(() => ({ ctx, channel, gpu } = fake));

/** A stream with `n` pieces of work enqueued (events the test finishes). */
function busyStream(n = 1): Stream {
  return gpu.busyStream(ctx, n);
}
/** A query's answer after 20 µs of busy time (a slow driver): 0, or CUDA_ERROR_NOT_READY. */
function slowly(ready: boolean): number {
  const until = performance.now() + 0.02;
  while (performance.now() < until);
  return ready ? 0 : 600;
}

describe('Stream.synchronized through the waiter', () => {
  test('an idle stream resolves with one cuStreamQuery and no marker', async () => {
    const s = Stream.create({ context: ctx });
    await s.synchronized();
    expect(gpu.count('cuEventRecord')).toBe(0);
    expect(gpu.count('cuLaunchHostFunc')).toBe(0);
    await expectWaiterClean(channel);
  });

  test('a busy stream parks: a helper stream waits for the marker, then runs the channel host function', async () => {
    const s = busyStream();
    let resolved = false;
    const p = s.synchronized().then(() => (resolved = true));
    await turns(3);
    expect(resolved).toBe(false);
    const launch = gpu.calls.find(([n]) => n === 'cuLaunchHostFunc')!;
    expect(launch[1][1]).toBe(channel.hostFn);
    expect(launch[1][2]).toBe(channel.userData);
    expect(launch[1][0]).not.toBe(s.handle); // on a helper stream, not the program's
    expect(channel.armed).toBe(true);
    expect(waiterStats().parked).toBe(1);
    gpu.finish(s.handle);
    await p;
    expect(resolved).toBe(true);
    await expectWaiterClean(channel);
    expect(markerStats().helpersIdle).toBe(1); // kept for the next park
  });

  test('work that ends during the spin resolves without parking', async () => {
    configureWaits({ spinMicros: 1e6 });
    const s = busyStream();
    const p = s.synchronized();
    await turns(5);
    expect(waiterStats().spinning).toBe(1);
    gpu.finish(s.handle);
    await p;
    expect(gpu.count('cuLaunchHostFunc')).toBe(0);
    await expectWaiterClean(channel);
  });

  test('waits on one stream resolve in order, each when its own point is reached', async () => {
    const s = busyStream();
    const order: number[] = [];
    const p1 = s.synchronized().then(() => order.push(1));
    gpu.pending.get(s.handle)!.push(gpu.workEvent()); // more work after the first wait
    const p2 = s.synchronized().then(() => order.push(2));
    await turns(3);
    gpu.finish(s.handle, 2); // the first work and the first marker
    await p1;
    await turns(3);
    expect(order).toEqual([1]);
    gpu.finish(s.handle);
    await p2;
    expect(order).toEqual([1, 2]);
    await expectWaiterClean(channel);
  });

  test('a spin over hundreds of queues yields to the event loop within a slice, not after a whole pass', async () => {
    configureWaits({ spinMicros: 1e6, spinMaxKeys: 300 });
    // slow queries (20 µs each): a whole pass over 300 queues takes ~12 ms
    gpu.restore();
    gpu = new FakeGpu(channel).install(ctx, {
      cuStreamQuery: (h: number) => slowly((gpu.pending.get(h)?.length ?? 0) === 0),
      cuEventQuery: (ev: number) => slowly(gpu.events.get(ev)?.done === true),
    });
    const streams = Array.from({ length: 300 }, () => busyStream());
    const waits = streams.map((s) => s.synchronized());
    const perTurn: number[] = [];
    let last = gpu.calls.length;
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setImmediate(r));
      perTurn.push(gpu.calls.length - last);
      last = gpu.calls.length;
    }
    expect(waiterStats().spinning).toBe(300);
    // a 250 µs slice holds ~12 slow queries; a whole pass would be ~600
    expect(Math.max(...perTurn)).toBeLessThan(100);
    for (const s of streams) gpu.finish(s.handle);
    await Promise.all(waits);
    await expectWaiterClean(channel);
  });

  test('a wake out of time mid-queue leaves the rest planned: they resolve when their work ends', async () => {
    // slow queries (20 µs each): 31 of them outlast a turn's 0.5 ms of settling
    gpu.restore();
    gpu = new FakeGpu(channel).install(ctx, {
      cuEventQuery: (ev: number) => slowly(gpu.events.get(ev)?.done === true),
    });
    const s = busyStream();
    const waits = Array.from({ length: 40 }, () => {
      const p = s.synchronized();
      gpu.pending.get(s.handle)!.push(gpu.workEvent()); // reading the handle marks the point: each wait has its own
      return p;
    });
    let settled = 0;
    for (const p of waits) void p.then(() => settled++);
    await turns(3);
    // the work of the first 31 points ends (work and marker each): one wake, which runs out of time at the 32nd
    gpu.finish(s.handle, 62);
    await until(() => settled === 31, 2000);
    await turns(3);
    expect(settled).toBe(31);
    gpu.finish(s.handle);
    await until(() => settled === 40, 2000);
    await expectWaiterClean(channel);
  });

  test('sixteen waits at one point of a stream park one host function', async () => {
    const s = busyStream();
    const all = Array.from({ length: 16 }, () => s.synchronized());
    await turns(3);
    expect(gpu.count('cuLaunchHostFunc')).toBe(1);
    gpu.finish(s.handle);
    await Promise.all(all);
    await expectWaiterClean(channel);
  });

  test('1,024 waits over 64 streams all resume on at most 8 helper streams, and leave nothing', async () => {
    const streams = Array.from({ length: 64 }, () => busyStream());
    const waits = streams.flatMap((s) => Array.from({ length: 16 }, () => s.synchronized()));
    // the plain awaits of one point share one wait: 64 waits, each awaited 16 times
    expect(new Set(waits).size).toBe(64);
    await turns(3);
    // one host function per helper; the other 56 streams ride on their wakes
    expect(waiterStats()).toMatchObject({ pending: 64, queues: 64, parked: 64, riding: 56 });
    expect(gpu.count('cuStreamCreate')).toBe(HELPERS_PER_CONTEXT);
    expect(gpu.count('cuLaunchHostFunc')).toBe(HELPERS_PER_CONTEXT);
    // a wake asks the queues with a host function of their own (riders promoted onto a freed helper
    // among them), a query or two each; the 56 riders only when it settled one, at most every 2 ms
    const askedInWakes: [number, number][] = [];
    const arm = channel.arm.bind(channel);
    channel.arm = (onWake) =>
      arm(() => {
        const from = gpu.calls.length;
        const t = performance.now();
        onWake();
        askedInWakes.push([t, gpu.streamsAsked(from).length]);
      });
    for (const [i, s] of streams.entries()) if (i % 2 === 0) gpu.finish(s.handle);
    await turns(5);
    expect(askedInWakes.length).toBeGreaterThan(0);
    const wide = askedInWakes.filter(([, n]) => n > 2 * HELPERS_PER_CONTEXT).map(([t]) => t);
    for (let i = 1; i < wide.length; i++) expect(wide[i] - wide[i - 1]).toBeGreaterThanOrEqual(2);
    // the riders' checks (every few ms; later on a loaded machine) find the rest of the half that finished
    await until(() => waiterStats().pending <= 32, 5000);
    expect(waiterStats().pending).toBe(32);
    for (const s of streams) gpu.finish(s.handle);
    await Promise.all(waits);
    expect(gpu.count('cuStreamCreate')).toBe(HELPERS_PER_CONTEXT);
    expect(gpu.count('cuLaunchHostFunc')).toBeLessThanOrEqual(64);
    expect(channel.arms).toBeLessThanOrEqual(64);
    await expectWaiterClean(channel);
  });

  test("a second crowd of 900 waits reuses the first one's markers: no event made or destroyed", async () => {
    const crowd = async (): Promise<void> => {
      const streams = Array.from({ length: 64 }, () => busyStream());
      const waits = Array.from({ length: 900 }, (_, i) => {
        const s = streams[i % 64];
        gpu.pending.get(s.handle)!.push(gpu.workEvent()); // work between the waits: each needs its own marker
        return s.synchronized();
      });
      await turns(3);
      for (const s of streams) gpu.finish(s.handle);
      await Promise.all(waits);
    };
    await crowd();
    const made = gpu.count('cuEventCreate');
    expect(made).toBeGreaterThanOrEqual(900);
    const destroyed = gpu.count('cuEventDestroy');
    await crowd();
    expect(gpu.count('cuEventCreate')).toBe(made);
    expect(gpu.count('cuEventDestroy')).toBe(destroyed);
    await expectWaiterClean(channel);
  });

  test('a riding wait resolves within a few ms without any wake, then takes a helper given back', async () => {
    configureWaits({ sweepMs: 10_000 }); // the parked holders' sweep: only the ride check can find the rider
    const holders = Array.from({ length: HELPERS_PER_CONTEXT }, () => busyStream());
    const held = holders.map((s) => s.synchronized());
    const rider = busyStream();
    const p = rider.synchronized();
    await turns(3);
    expect(waiterStats()).toMatchObject({ parked: HELPERS_PER_CONTEXT + 1, riding: 1 });
    // the ride checks ask the rider only: the parked holders wake on their own
    const from = gpu.calls.length;
    const riderHandle = rider.handle;
    const riderAsked = (): number => gpu.streamsAsked(from).filter((h) => h === riderHandle).length;
    await until(() => riderAsked() >= 2, 5000); // a check every 4 ms; later on a loaded machine
    const asked = gpu.streamsAsked(from);
    expect(riderAsked()).toBeGreaterThanOrEqual(2);
    expect(asked.filter((h) => holders.some((s) => s.handle === h))).toEqual([]);
    gpu.finish(rider.handle); // no host function of its own posts: the ride check finds it
    const t0 = performance.now();
    await p;
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(waiterStats().riding).toBe(0);
    // a rider promoted when a holder's queue ends: it parks on that helper, no new stream
    const late = busyStream();
    const q = late.synchronized();
    await turns(3);
    expect(waiterStats().riding).toBe(1);
    gpu.finish(holders[0].handle);
    await held[0];
    await turns(3);
    expect(waiterStats()).toMatchObject({ riding: 0, parked: HELPERS_PER_CONTEXT });
    expect(gpu.count('cuStreamCreate')).toBe(HELPERS_PER_CONTEXT);
    gpu.finish(late.handle);
    await q;
    for (const s of holders) gpu.finish(s.handle);
    await Promise.all(held);
    await expectWaiterClean(channel);
  });
});

describe('stream awaits without a marker until one is needed', () => {
  test('an await that ends in its spin records nothing on the stream: its idle stream ends it', async () => {
    configureWaits({ spinMicros: 1e6 });
    const s = busyStream();
    const h = s.handle; // read before the await: reading it later marks the point, as an enqueue would
    const p = s.synchronized();
    await turns(5);
    gpu.finish(h);
    await p;
    expect(gpu.count('cuEventRecord')).toBe(0);
    await expectWaiterClean(channel);
  });

  test('work enqueued after an await is not awaited: reading the handle to enqueue marks the point first', async () => {
    configureWaits({ spinMicros: 1e6 });
    const s = busyStream();
    let resolved = false;
    const p = s.synchronized().then(() => (resolved = true));
    const later = Event.create({ context: ctx, timing: false });
    later.record(s); // enqueued after the await
    const records = gpu.calls.filter(([n]) => n === 'cuEventRecord').map(([, a]) => a[0]);
    expect(records).toHaveLength(2);
    expect(records[1]).toBe(later.handle); // the marker went first
    gpu.finish(s.handle, 2); // the work and the marker; the later record still pending
    await p;
    expect(resolved).toBe(true);
    expect(s.query()).toBe(false);
    gpu.finish(s.handle);
    later.close();
    await expectWaiterClean(channel);
  });

  test('plain awaits of one point share one wait; an enqueue, options or a record start a new one', async () => {
    configureWaits({ spinMicros: 1e6 });
    const s = busyStream();
    const h = s.handle;
    const a = s.synchronized();
    expect(s.synchronized()).toBe(a);
    expect(s.synchronized({ timeoutMs: 60_000 })).not.toBe(a); // its own wait: it can time out alone
    const ev = Event.create({ context: ctx, timing: false });
    ev.record(s); // work after the point
    const b = s.synchronized();
    expect(b).not.toBe(a);
    expect(s.synchronized()).toBe(b);
    const e1 = ev.synchronized();
    expect(ev.synchronized()).toBe(e1);
    ev.record(s);
    expect(ev.synchronized()).not.toBe(e1);
    expect(waiterStats().pending).toBe(5);
    gpu.finish(h);
    await Promise.all([a, b, e1]);
    // settled: the next plain await starts afresh (here: idle at once)
    await s.synchronized();
    ev.close();
    await expectWaiterClean(channel);
  });

  test('a plain event await while one is pending resolves at once when the event is done', async () => {
    const s = busyStream();
    const ev = Event.create({ context: ctx, timing: false }).record(s);
    const first = ev.synchronized();
    await turns(3);
    expect(waiterStats().parked).toBe(1);
    gpu.events.get(ev.handle)!.done = true; // done, and the parked wait not woken yet
    let second = false;
    const p = ev.synchronized().then(() => (second = true));
    await turns(1);
    expect(second).toBe(true);
    gpu.finish(s.handle);
    await Promise.all([first, p]);
    ev.close();
    await expectWaiterClean(channel);
  });

  test('parking marks the point once for every await made since the last enqueue', async () => {
    const s = busyStream();
    const h = s.handle;
    const all = Array.from({ length: 12 }, () => s.synchronized());
    await turns(3);
    expect(waiterStats().parked).toBe(1);
    expect(gpu.count('cuEventRecord')).toBe(1);
    gpu.finish(h);
    await Promise.all(all);
    expect(markerStats().markersIdle).toBe(1); // given back once, by the last of the twelve
    await expectWaiterClean(channel);
  });

  test('awaits marked together give their marker back once, when the last of them settles', async () => {
    const s = busyStream();
    const first = s.synchronized({ timeoutMs: 60_000 }); // options: a wait of its own; it parks, marked alone
    await turns(2);
    const request = new AbortController();
    const second = s.synchronized({ signal: request.signal });
    const third = s.synchronized({ timeoutMs: 60_000 });
    const h = s.handle; // an enqueue: the two awaits not marked yet share one marker
    expect(gpu.count('cuEventRecord')).toBe(2);
    request.abort(new Error('no longer needed'));
    await expect(second).rejects.toMatchObject({ name: 'AbortError' });
    expect(markerStats().markersIdle).toBe(0); // the third still uses the shared marker
    gpu.finish(h);
    await Promise.all([first, third]);
    expect(markerStats().markersIdle).toBe(2); // the first's and the shared one, each given back once
    await expectWaiterClean(channel);
  });

  test('an await whose marker cannot be recorded polls its stream, and rejects with what that query throws', async () => {
    const s = busyStream();
    const h = s.handle;
    gpu.restore();
    let streamStatus = 600; // CUDA_ERROR_NOT_READY
    gpu = new FakeGpu(channel).install(ctx, {
      cuEventRecord: () => 1, // CUDA_ERROR_INVALID_VALUE: no marker
      cuStreamQuery: () => streamStatus,
    });
    const p = s.synchronized();
    await sleep(5);
    expect(waiterStats().pending).toBe(1); // polling, not lost
    streamStatus = 709; // CUDA_ERROR_CONTEXT_IS_DESTROYED
    await expect(p).rejects.toMatchObject({ func: 'cuStreamQuery' });
    expect(h).toBe(s.handle);
    await expectWaiterClean(channel);
  });

  test('a stream closed while its await could not be marked rejects that await, naming the call', async () => {
    const s = busyStream();
    gpu.restore();
    gpu = new FakeGpu(channel).install(ctx, { cuEventRecord: () => 1, cuStreamQuery: () => 600 });
    const p = s.synchronized();
    await sleep(3);
    s.close(); // its marker cannot be recorded either: the handle names nothing of this wait any more
    await expect(p).rejects.toThrow(/^Stream\.synchronized: the stream was closed before the awaited point could be marked/);
    await expectWaiterClean(channel);
  });

  test('closing the stream marks the point of its pending awaits, which then resolve', async () => {
    configureWaits({ spinMicros: 1e6 });
    const s = busyStream();
    const p = s.synchronized();
    await turns(2);
    const h = s.handle;
    s.close();
    expect(gpu.count('cuEventRecord')).toBe(1);
    gpu.finish(h);
    await p;
    await expectWaiterClean(channel);
  });
});

describe('Event.synchronized and Stream.enqueueHost', () => {
  test('an event wait parks on a helper and resolves when the event completes', async () => {
    const s = busyStream();
    const ev = Event.create({ context: ctx }).record(s);
    const p = ev.synchronized();
    await turns(3);
    expect(waiterStats().parked).toBe(1);
    gpu.finish(s.handle);
    await p;
    await expectWaiterClean(channel);
  });

  test('enqueueHost runs fn after the GPU reached the point, returns its value, and fn may block', async () => {
    const s = busyStream();
    let ran = false;
    const p = s.enqueueHost(() => {
      ran = true;
      s.synchronize(); // a blocking wait: allowed, nothing is pending in CUDA's callback thread
      return 42;
    });
    await turns(3);
    expect(ran).toBe(false);
    gpu.finish(s.handle);
    await expect(p).resolves.toBe(42);
    expect(gpu.count('cuStreamSynchronize')).toBe(1);
    await expectWaiterClean(channel);
  }, 10_000);

  test('enqueueHost: fn throwing rejects; a cancelled call never runs fn; a promise is awaited', async () => {
    const s = busyStream();
    const ac = new AbortController();
    let ran = 0;
    const cancelled = s.enqueueHost(() => ran++, { signal: ac.signal });
    const failing = s.enqueueHost(() => {
      throw new Error('host failed');
    });
    const later = s.enqueueHost(async () => 'later');
    ac.abort();
    await expect(cancelled).rejects.toMatchObject({ name: 'AbortError' });
    gpu.finish(s.handle);
    await expect(failing).rejects.toThrow('host failed');
    await expect(later).resolves.toBe('later');
    expect(ran).toBe(0);
    await expect(s.enqueueHost(5 as never)).rejects.toThrow(/Stream.enqueueHost: fn must be a function/);
    await expectWaiterClean(channel);
  });
});

describe('fallbacks and safety nets', () => {
  test('without a wake channel the waits poll, and cancel the same way', async () => {
    setWakeChannel(null);
    const s = busyStream();
    const p = s.synchronized();
    const ac = new AbortController();
    const q = s.synchronized({ signal: ac.signal });
    await sleep(5);
    ac.abort();
    await expect(q).rejects.toMatchObject({ name: 'AbortError' });
    gpu.finish(s.handle);
    await p;
    expect(gpu.count('cuLaunchHostFunc')).toBe(0);
  });

  test('a destroyed context rejects parked waits through the sweep (its host functions never run)', async () => {
    const s = busyStream();
    const p = s.synchronized().catch((e: unknown) => e);
    await turns(3);
    expect(waiterStats().parked).toBe(1);
    (ctx.core as { destroyed: boolean }).destroyed = true;
    const e = await p;
    expect(e).toBeInstanceOf(CudaError);
    expect((e as Error).message).toMatch(/closed|destroyed/i);
    await expectWaiterClean(channel);
  });

  test('the predicted window: a repeated wait sleeps, then spins again around its predicted end', async () => {
    // a long first wait and a wide predictUpToMs: a loaded machine's late timers (CI, Bun) stay far
    // inside the margins, and the waits for what must happen next have deadlines, not fixed sleeps
    configureWaits({ predict: true, spinMicros: 100, predictUpToMs: 5000 });
    const s = Stream.create({ context: ctx });
    gpu.pending.set(s.handle, [gpu.workEvent()]);
    const first = s.synchronized();
    await sleep(200);
    gpu.finish(s.handle); // learns >= 200 ms
    await first;
    gpu.pending.set(s.handle, [gpu.workEvent()]);
    const records = gpu.count('cuEventRecord');
    const second = s.synchronized();
    const started = performance.now();
    await turns(3);
    // asleep until the window (>= 197 ms), not parked: parking would record a marker behind the work,
    // and the window's spin would then see the stream idle only once the GPU ran the marker too
    expect(waiterStats()).toMatchObject({ parked: 0, spinning: 0, windowTimers: 1 });
    const ticksAsleep = waiterStats().spinTicks;
    await sleep(60);
    if (performance.now() - started < 150) {
      expect(waiterStats().spinTicks).toBe(ticksAsleep); // no spin while asleep (a query per ms)
      expect(gpu.count('cuEventRecord')).toBe(records);
    }
    await until(() => waiterStats().spinTicks > ticksAsleep, 5000); // it spun in the window
    // past the window (a loaded machine runs it late): parked, with its marker now
    await until(() => waiterStats().parked === 1, 5000);
    expect(waiterStats()).toMatchObject({ spinning: 0, parked: 1 });
    expect(gpu.count('cuEventRecord')).toBe(records + 1);
    gpu.finish(s.handle);
    await second;
    await expectWaiterClean(channel);
  }, 20_000);

  test('poll() takes a signal, and leaves no timer once settled', async () => {
    const ac = new AbortController();
    const p = poll(() => false, 'Thing.wait()', { signal: ac.signal });
    await sleep(3);
    ac.abort('bye');
    await expect(p).rejects.toMatchObject({ name: 'AbortError', cause: 'bye', message: 'Thing.wait: the wait was aborted (bye)' });
    await expect(poll(() => false, 'Thing.wait()', { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('pipeline (for await over a ring of streams)', () => {
  test('yields in order once each item is done, with at most N in flight, and checks its arguments', async () => {
    const streams = [busyStream(0), busyStream(0)];
    const inFlight: number[] = [];
    const got: number[] = [];
    const it = pipeline([10, 11, 12, 13], {
      streams,
      enqueue: (item: number, s: Stream) => {
        gpu.pending.set(s.handle, [...(gpu.pending.get(s.handle) ?? []), gpu.workEvent()]); // the item's work
        inFlight.push(item);
        return item * 2;
      },
    });
    const consumer = (async () => {
      for await (const { item, result, index } of it) {
        expect(result).toBe(item * 2);
        expect(index).toBe(item - 10);
        got.push(item);
      }
    })();
    await turns(5);
    expect(inFlight).toEqual([10, 11]); // two streams: two in flight
    expect(got).toEqual([]);
    gpu.finish(streams[1].handle); // the second finishes first: nothing is yielded out of order
    await turns(5);
    expect(got).toEqual([]);
    gpu.finish(streams[0].handle);
    for (let i = 0; i < 50 && got.length < 4; i++) {
      await turns(3);
      gpu.finishAll();
    }
    await consumer;
    expect(got).toEqual([10, 11, 12, 13]);
    await expectWaiterClean(channel);
    await expect(pipeline([1], { streams: [], enqueue: () => 0 }).next()).rejects.toThrow(/pipeline: streams must be a non-empty array/);
  });
});

describe('spin slices, one query for a crowd at one point, parkOn stream, predictions from the stream', () => {
  test('the spin queries back to back within a slice, and the event loop still turns between slices', async () => {
    configureWaits({ spinMicros: 1e6, spinSliceMicros: 1000 });
    const s = busyStream();
    const p = s.synchronized();
    let timerRan = false;
    setTimeout(() => (timerRan = true), 1);
    const before = gpu.count('cuEventQuery') + gpu.count('cuStreamQuery');
    await turns(1);
    // one setImmediate turn, many queries (a loaded machine may take the thread away for part of the slice)
    expect(gpu.count('cuEventQuery') + gpu.count('cuStreamQuery') - before).toBeGreaterThan(8);
    await sleep(5);
    expect(timerRan).toBe(true); // a slice yields: timers still run
    gpu.finish(s.handle);
    await p;
    expect(gpu.count('cuLaunchHostFunc')).toBe(0);
    await expectWaiterClean(channel);
  });

  test('a lone spinning wait resumes the awaiting code before the waiter re-plans; an await made there still waits', async () => {
    configureWaits({ spinMicros: 1e6 });
    const s = busyStream();
    const h = s.handle;
    const p = s.synchronized();
    gpu.finish(h);
    await p;
    expect(waiterStats().queues).toBe(1); // its books are kept right after this code, in the same turn
    gpu.pending.set(s.handle, [gpu.workEvent()]); // more work on the stream
    expect(gpu.count('cuEventRecord')).toBe(0); // reading the handle marked nothing: the await was resolved
    const p2 = s.synchronized();
    await turns(3);
    expect(waiterStats().pending).toBe(1); // it waits for its own point
    gpu.finish(s.handle);
    await p2;
    await expectWaiterClean(channel);
  });

  test('a lone spin whose query fails hands over to the pass, which rejects with that error', async () => {
    let status = 600; // CUDA_ERROR_NOT_READY, then CUDA_ERROR_INVALID_VALUE
    gpu.install(ctx, { cuStreamQuery: () => status }); // the same fakes again, this one replaced
    configureWaits({ spinMicros: 1e6 });
    const p = Stream.create({ context: ctx }).synchronized();
    await turns(2);
    status = 1;
    await expect(p).rejects.toMatchObject({ func: 'cuStreamQuery', code: 1 });
    await expectWaiterClean(channel);
  });

  test('a spin asks the stream first; with work enqueued after the marker, the marker still ends the wait', async () => {
    configureWaits({ spinMicros: 1e6 });
    const s = busyStream();
    const p = s.synchronized();
    gpu.pending.get(s.handle)!.push(gpu.workEvent()); // the stream stays busy after the marker
    await turns(2);
    expect(gpu.count('cuStreamQuery')).toBeGreaterThan(gpu.count('cuEventQuery')); // one query per pass, mostly the stream's
    gpu.finish(s.handle, 2); // the work before the wait and its marker
    await p;
    expect(gpu.pending.get(s.handle)).toHaveLength(1);
    await expectWaiterClean(channel);
  });

  test('sixteen parked waits at one point settle with one query', async () => {
    const s = busyStream();
    const all = Array.from({ length: 16 }, () => s.synchronized());
    await turns(3);
    const before = gpu.count('cuEventQuery') + gpu.count('cuStreamQuery');
    gpu.finish(s.handle);
    await Promise.all(all);
    expect(gpu.count('cuEventQuery') + gpu.count('cuStreamQuery') - before).toBeLessThanOrEqual(2);
    await expectWaiterClean(channel);
  });

  test('sixteen parked waits on one event settle with one query per check', async () => {
    const s = busyStream();
    const ev = Event.create({ context: ctx }).record(s);
    const all = Array.from({ length: 16 }, () => ev.synchronized());
    await turns(3);
    const before = gpu.count('cuEventQuery');
    gpu.finish(s.handle);
    await Promise.all(all);
    expect(gpu.count('cuEventQuery') - before).toBeLessThanOrEqual(2);
    await expectWaiterClean(channel);
  });

  test("parkOn 'stream': the wake host function goes right behind the marker on the awaited stream, no helper", async () => {
    configureWaits({ parkOn: 'stream' });
    const s = busyStream();
    const order: number[] = [];
    const p1 = s.synchronized().then(() => order.push(1));
    gpu.pending.get(s.handle)!.push(gpu.workEvent()); // more work after the first wait
    const p2 = s.synchronized().then(() => order.push(2));
    const hosts = gpu.calls.filter(([n]) => n === 'cuLaunchHostFunc');
    expect(hosts.map(([, a]) => a[0])).toEqual([s.handle, s.handle]); // at once, on the program's stream
    expect(gpu.count('cuStreamCreate')).toBe(0);
    await turns(3);
    expect(waiterStats().parked).toBe(1);
    gpu.finish(s.handle, 3); // the first work, the first marker, its host function
    await p1;
    await turns(3);
    expect(order).toEqual([1]);
    gpu.finish(s.handle);
    await p2;
    expect(order).toEqual([1, 2]);
    expect(gpu.count('cuStreamWaitEvent')).toBe(0);
    await expectWaiterClean(channel);
  });

  test("parkOn 'stream': an aborted wait leaves nothing; its host function only posts later", async () => {
    configureWaits({ parkOn: 'stream' });
    const s = busyStream();
    const ac = new AbortController();
    const p = s.synchronized({ signal: ac.signal });
    await turns(3);
    ac.abort();
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
    await expectWaiterClean(channel);
    gpu.finish(s.handle);
    await turns(3);
    await expectWaiterClean(channel);
    expect(gpu.destroyedHelpers).toHaveLength(0);
  });

  test("a fresh event recorded on a stream is predicted from that stream's last wait", async () => {
    configureWaits({ predict: true, spinMicros: 100, predictUpToMs: 5000 }); // late timers stay predictable
    const s = Stream.create({ context: ctx });
    gpu.pending.set(s.handle, [gpu.workEvent()]);
    const first = s.synchronized();
    await sleep(200);
    gpu.finish(s.handle); // the stream learns >= 200 ms
    await first;
    gpu.pending.set(s.handle, [gpu.workEvent()]);
    const ev = Event.create({ context: ctx }).record(s);
    const p = ev.synchronized();
    await turns(3);
    expect(waiterStats()).toMatchObject({ parked: 1, windowTimers: 1 }); // asleep until its predicted window
    gpu.finish(s.handle);
    await p;
    await expectWaiterClean(channel);
  });

  test('a crowd spins in no predicted window: not one planned before it formed, nor one of its own waits', async () => {
    configureWaits({ predict: true, spinMicros: 0, predictUpToMs: 5000 }); // no first spin: every spin tick is a window's
    const s = Stream.create({ context: ctx });
    gpu.pending.set(s.handle, [gpu.workEvent()]);
    const first = s.synchronized();
    await sleep(100);
    gpu.finish(s.handle); // the stream learns >= 100 ms
    await first;
    gpu.pending.set(s.handle, [gpu.workEvent()]);
    const planned = s.synchronized(); // alone: asleep until its window
    const started = performance.now();
    await turns(3);
    expect(waiterStats()).toMatchObject({ windowTimers: 1, spinning: 0 });
    // a crowd forms (more keys than predictMaxKeys), and s gets a wait at a later point, made in it
    const others = Array.from({ length: 6 }, () => busyStream());
    const crowd = others.map((o) => o.synchronized());
    gpu.pending.get(s.handle)!.push(gpu.workEvent()); // reading the handle marked the planned wait's point
    const later = s.synchronized();
    const ticks = waiterStats().spinTicks;
    await until(() => performance.now() - started > 150, 5000); // past the planned window
    await turns(3);
    expect(waiterStats().spinTicks).toBe(ticks);
    // the crowd thins to s alone; its next head was made in the crowd: parked, no window
    for (const o of others) gpu.finish(o.handle);
    await Promise.all(crowd);
    gpu.finish(s.handle, 2); // the planned wait's work and marker, not the later work
    await planned;
    await turns(3);
    expect(waiterStats()).toMatchObject({ pending: 1, parked: 1, spinning: 0, windowTimers: 0 });
    expect(waiterStats().spinTicks).toBe(ticks);
    gpu.finish(s.handle);
    await later;
    await expectWaiterClean(channel);
  });

  test('configureWaits checks the slice, the sweep, the key limits and parkOn', () => {
    expect(() => configureWaits({ spinMaxKeys: -1 })).toThrow(/configureWaits: spinMaxKeys must be a non-negative integer, got -1/);
    expect(() => configureWaits({ spinMaxKeys: 2.5 })).toThrow(RangeError);
    expect(() => configureWaits({ predictMaxKeys: '4' as never })).toThrow(/configureWaits: predictMaxKeys must be a non-negative integer, got 4/);
    expect(() => configureWaits({ sweepMs: 2 ** 31 })).toThrow(/configureWaits: sweepMs must be a number in \(0, 2147483647\], got 2147483648/);
    expect(() => configureWaits({ sweepMs: 2 ** 31 - 0.5 })).toThrow(/configureWaits: sweepMs must be a number in \(0, 2147483647\], got 2147483647.5/);
    expect(() => configureWaits({ sweepMs: Infinity })).toThrow(RangeError);
    expect(() => configureWaits({ spinSliceMicros: 0 })).toThrow(RangeError);
    expect(() => configureWaits({ spinSliceMicros: 5000 })).toThrow(/spinSliceMicros must be a number in \(0, 1000\]/);
    expect(() => configureWaits({ parkOn: 'gpu' as never })).toThrow(/parkOn must be 'helper' or 'stream'/);
  });
});
