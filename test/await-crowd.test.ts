// Crowds of parked waits (src/await/waiter.ts) against the fake GPU: more streams than helper streams,
// so most queues ride. A helper given back skips the riders that are done already, and a wake that
// settled a wait asks the riders too, at most every 2 ms: a crowd's waits tend to end together. With
// flags: 'crowd', a rider's stream wait carries a flag, read instead of a query.
import * as drv from '../src/driver';
import { Stream } from '../src/stream';
import { Event } from '../src/event';
import { configureWaits, waiterStats } from '../src/await/waiter';
import { HELPERS_PER_CONTEXT } from '../src/await/markers';
import { FakeChannel, FakeGpu, expectWaiterClean, sleep, turns, until, useFakeWaiter } from './helpers/await-gpu';
import type { Context } from '../src/context';

let ctx: Context;
let channel: FakeChannel;
let gpu: FakeGpu;
// the 100 ms full sweep stays out of the way; the riders' own 4 ms check does not
const fake = useFakeWaiter({ spinMicros: 0, predict: false, sweepMs: 10_000, flags: false });
beforeEach(() => ({ ctx, channel, gpu } = fake));

let work = 0x7a0000;
/** A stream with one piece of work enqueued (an event the test finishes). */
function busyStream(): Stream {
  const s = Stream.create({ context: ctx });
  const h = (work += 0x10);
  gpu.events.set(h, { gen: 1, done: false });
  gpu.pending.set(s.handle, [h]);
  return s;
}
/** The marker the parked wait of `s` asks (the event last recorded on it). */
function markerOf(s: Stream): unknown {
  return gpu.calls.filter(([n, a]) => n === 'cuEventRecord' && a[1] === s.handle).at(-1)?.[1][0];
}
/** Which of `streams` (by index) each wake asked, one list per wake. */
function recordWakes(streams: Stream[]): { asked: number[] }[] {
  const handles = streams.map((s) => s.handle); // read once, before any wait: a read marks pending points
  const wakes: { asked: number[] }[] = [];
  const arm = channel.arm.bind(channel);
  channel.arm = (onWake) =>
    arm(() => {
      const from = gpu.calls.length;
      onWake();
      const asked = new Set(gpu.streamsAsked(from));
      wakes.push({ asked: handles.flatMap((h, i) => (asked.has(h) ? [i] : [])) });
    });
  return wakes;
}

describe('a crowd of parked waits', () => {
  test('a helper given back settles the riders done already and parks the first one still running', async () => {
    const holders = Array.from({ length: HELPERS_PER_CONTEXT }, () => busyStream());
    const riders = [busyStream(), busyStream(), busyStream()];
    const held = holders.map((s) => s.synchronized());
    const rode = riders.map((s) => s.synchronized());
    await turns(3);
    expect(waiterStats()).toMatchObject({ parked: HELPERS_PER_CONTEXT + 3, riding: 3 });
    const hostFns = gpu.count('cuLaunchHostFunc');
    const settled: number[] = [];
    rode.forEach((p, i) => void p.then(() => settled.push(i)));
    // the first two riders and one holder end together; the holder's host function wakes the loop
    gpu.finish(riders[0].handle);
    gpu.finish(riders[1].handle);
    gpu.finish(holders[0].handle);
    await held[0];
    await turns(2);
    expect(settled.sort()).toEqual([0, 1]);
    // its helper went to the one rider still running: one host function, behind that rider's marker
    expect(gpu.count('cuLaunchHostFunc')).toBe(hostFns + 1);
    const waitedFor = gpu.calls.filter(([n]) => n === 'cuStreamWaitEvent').at(-1)![1][1];
    expect(waitedFor).toBe(markerOf(riders[2]));
    expect(waiterStats()).toMatchObject({ parked: HELPERS_PER_CONTEXT, riding: 0 });
    for (const s of [...holders, riders[2]]) gpu.finish(s.handle);
    await Promise.all([...held, ...rode]);
    await expectWaiterClean(channel);
  });

  test('a wake that settled a wait asks the riders too, at most every 2 ms; one that settled none does not', async () => {
    // timers and performance.now() on a fake clock: the 4 ms ride check runs only when the test says
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const holders = Array.from({ length: HELPERS_PER_CONTEXT }, () => busyStream());
      const riders = Array.from({ length: 12 }, () => busyStream());
      const wakes = recordWakes(riders); // before the first park arms the channel
      const held = holders.map((s) => s.synchronized());
      const rode = riders.map((s) => s.synchronized());
      await turns(3);
      jest.advanceTimersByTime(3); // not yet the ride check (4 ms)
      // a rider that is not first in line ends with a holder: the wake finds it, no ride check needed;
      // the holder's helper goes to the first rider (still running)
      gpu.finish(riders[3].handle);
      gpu.finish(holders[0].handle);
      await Promise.all([held[0], rode[3]]);
      expect(wakes).toHaveLength(1);
      expect(wakes[0].asked).toContain(3);
      expect(wakes[0].asked.length).toBeGreaterThan(2);
      // at once, the next wake asks only the queues that could post (rider 0 holds the first helper
      // given back) and rider 1, promoted onto the second
      gpu.finish(holders[1].handle);
      await held[1];
      await turns(1);
      expect(wakes.map((w) => w.asked)).toEqual([wakes[0].asked, [0, 1]]);
      // 2 ms after the last time, a wake that settled a wait asks the riders again
      jest.advanceTimersByTime(2);
      gpu.finish(holders[2].handle);
      await held[2];
      await turns(1);
      expect(wakes).toHaveLength(3);
      expect(wakes[2].asked.length).toBeGreaterThan(2);
      // a stale host function (nothing settled): only the queues that could post are asked
      jest.advanceTimersByTime(2);
      channel.post();
      await turns(2);
      expect(wakes).toHaveLength(4);
      expect(wakes[3].asked.filter((i) => i > 2)).toEqual([]); // riders 0-2 hold the helpers given back
      for (const s of [...holders, ...riders]) gpu.finish(s.handle);
      jest.advanceTimersByTime(10);
      await Promise.all([...held, ...rode]);
      await turns(3);
      expect(waiterStats()).toMatchObject({ pending: 0, parked: 0, timers: false });
    } finally {
      jest.useRealTimers();
    }
  });

  test('a crowd does not spin: once more than spinMaxKeys keys are awaited, the spinning waits park, the oldest on the helpers', async () => {
    configureWaits({ spinMicros: 1e6 }); // without a crowd, these waits would spin for a second
    const first = Array.from({ length: HELPERS_PER_CONTEXT }, () => busyStream());
    const waits = first.map((s) => s.synchronized());
    expect(waiterStats()).toMatchObject({ spinning: HELPERS_PER_CONTEXT, parked: 0 });
    const late = busyStream();
    const lateHandle = late.handle; // read before its wait: a read marks pending points
    waits.push(late.synchronized());
    // at once, before any turn of the loop: nothing spins, the first eight hold the helpers, the ninth rides
    expect(waiterStats()).toMatchObject({ spinning: 0, parked: HELPERS_PER_CONTEXT + 1, riding: 1 });
    const waitedFor = gpu.calls.filter(([n]) => n === 'cuStreamWaitEvent').map(([, a]) => a[1]);
    expect(waitedFor).toEqual(first.map(markerOf));
    const passes = waiterStats().spinPasses;
    await turns(5);
    expect(waiterStats().spinPasses).toBe(passes);
    for (const s of first) gpu.finish(s.handle);
    gpu.finish(lateHandle);
    await Promise.all(waits);
    await expectWaiterClean(channel);
  });

  test('in a crowd, a queue whose check settled some of its waits asks the rest again next turn before it parks', async () => {
    const holders = Array.from({ length: HELPERS_PER_CONTEXT + 1 }, () => busyStream()); // the ninth rides
    const held = holders.map((s) => s.synchronized());
    const s = busyStream();
    const first = s.synchronized();
    gpu.pending.get(s.handle)!.push(gpu.workEvent()); // reading the handle marks the first point
    const second = s.synchronized();
    await turns(3);
    expect(waiterStats()).toMatchObject({ parked: HELPERS_PER_CONTEXT + 2, riding: 2 });
    const parks = waiterStats().parks;
    // the first point's work and marker end; a ride check settles its wait
    gpu.finish(s.handle, 2);
    await first;
    // the rest ends before the next turn (the GPU was still running what lay between the points)
    gpu.finish(s.handle);
    await second;
    expect(waiterStats().parks).toBe(parks); // not parked again: no host function, no wake
    // work that takes longer: the look on the next turn finds it running, and the queue parks
    const later = busyStream();
    const early = later.synchronized();
    gpu.pending.get(later.handle)!.push(gpu.workEvent());
    const late = later.synchronized();
    await turns(3);
    const before = waiterStats().parks;
    gpu.finish(later.handle, 2);
    await early;
    await turns(3);
    expect(waiterStats().parks).toBe(before + 1);
    gpu.finish(later.handle);
    await late;
    for (const h of holders) gpu.finish(h.handle);
    await Promise.all(held);
    await expectWaiterClean(channel);
  });

  test('in a crowd, stream waits carry flags: ride checks read them and ask the driver nothing; a helper goes to them once it thins', async () => {
    configureWaits({ flags: 'crowd' });
    const holders = Array.from({ length: HELPERS_PER_CONTEXT }, () => busyStream());
    const riders = [busyStream(), busyStream(), busyStream()];
    const riderHandles = riders.map((s) => s.handle); // read before the waits: a read marks pending points
    const held = holders.map((s) => s.synchronized());
    const rode = riders.map((s) => s.synchronized());
    // waits made while at most 8 keys were awaited write no flag; the three made after do, on their own stream
    expect(gpu.writeLog.map((w) => w.stream)).toEqual(riderHandles);
    await turns(3);
    expect(waiterStats()).toMatchObject({ parked: HELPERS_PER_CONTEXT + 3, riding: 3 });
    // a flagged rider needs no marker, and its ride checks (every 4 ms) make no driver call
    const from = gpu.calls.length;
    await sleep(15);
    expect(gpu.calls.slice(from).filter(([n]) => /Query|Record/.test(n))).toEqual([]);
    expect(markerOf(riders[0])).toBeUndefined();
    // its work done, the flag lands: the next ride check settles it, still without a query
    gpu.finish(riders[0].handle);
    await rode[0];
    expect(gpu.streamsAsked(from)).toEqual([]);
    // a helper given back while 9 keys are still awaited stays free: the flagged riders read memory
    const hostFns = gpu.count('cuLaunchHostFunc');
    gpu.finish(holders[0].handle);
    await held[0];
    await turns(2);
    expect(gpu.count('cuLaunchHostFunc')).toBe(hostFns);
    expect(waiterStats().riding).toBe(2);
    // down to 8 keys, each rider left takes one of the helpers given back: its marker, then a host function
    gpu.finish(holders[1].handle);
    await held[1];
    await turns(2);
    expect(waiterStats()).toMatchObject({ riding: 0, parked: HELPERS_PER_CONTEXT });
    expect(gpu.count('cuLaunchHostFunc')).toBe(hostFns + 2);
    expect(markerOf(riders[1])).toBeDefined();
    for (const s of [...holders, ...riders]) gpu.finish(s.handle);
    await Promise.all([...held, ...rode]);
    await expectWaiterClean(channel);
  });

  test('in a crowd, a helper given back goes to a rider that must be queried (an event) before a flagged one', async () => {
    configureWaits({ flags: 'crowd' });
    const holders = Array.from({ length: HELPERS_PER_CONTEXT }, () => busyStream());
    const flagged = busyStream();
    const evStream = busyStream();
    const ev = Event.create({ context: ctx, timing: false }).record(evStream);
    const after = Event.create({ context: ctx, timing: false }).record(evStream); // work after ev: ev's record is not the stream's end
    const extra = busyStream(); // keeps the waiter crowded once a holder is done
    const held = holders.map((s) => s.synchronized());
    const rode = [flagged.synchronized(), ev.synchronized(), extra.synchronized()];
    await turns(3);
    expect(waiterStats().riding).toBe(3);
    gpu.finish(holders[0].handle);
    await held[0];
    await turns(2);
    // the helper given back waits for the event, not for the flagged stream first in line
    const waitedFor = gpu.calls.filter(([n]) => n === 'cuStreamWaitEvent').at(-1)![1][1];
    expect(waitedFor).toBe(ev.handle);
    expect(waiterStats().riding).toBe(2);
    for (const s of holders) gpu.finish(s.handle);
    gpu.finishAll();
    await Promise.all([...held, ...rode]);
    ev.close();
    after.close();
    await expectWaiterClean(channel);
  });

  test("in a crowd, an event wait whose record is its stream's end carries a flag there; recorded again, it asks the driver", async () => {
    configureWaits({ flags: 'crowd' });
    const holders = Array.from({ length: HELPERS_PER_CONTEXT }, () => busyStream());
    const [s1, s2, s3, s4, s5] = [busyStream(), busyStream(), busyStream(), busyStream(), busyStream()];
    const handles = [s1, s2, s3].map((s) => s.handle); // read before the waits: a read marks pending points
    const atEnd = Event.create({ context: ctx, timing: false }).record(s1);
    const notAtEnd = Event.create({ context: ctx, timing: false }).record(s2);
    const after = Event.create({ context: ctx, timing: false }).record(s2); // work enqueued after notAtEnd
    const moved = Event.create({ context: ctx, timing: false }).record(s3);
    const beforeLibrary = Event.create({ context: ctx, timing: false }).record(s5);
    s5.beforeEnqueue(); // a library bound to s5 enqueues next, without reading its handle
    const held = holders.map((s) => s.synchronized());
    const waits = [atEnd.synchronized(), notAtEnd.synchronized(), moved.synchronized()];
    const libraryWait = beforeLibrary.synchronized();
    const settled: number[] = [];
    waits.forEach((p, i) => void p.then(() => settled.push(i)));
    // made past 8 keys: flags on s1 and s3, where those records are the end; none for notAtEnd or beforeLibrary
    expect(gpu.writeLog.map((w) => w.stream)).toEqual([handles[0], handles[2]]);
    await turns(3);
    expect(waiterStats().riding).toBe(4);
    const asked = (from: number, ev: Event): number => gpu.calls.slice(from).filter(([n, a]) => n === 'cuEventQuery' && a[0] === ev.handle).length;
    const from = gpu.calls.length;
    // ride checks (every 4 ms; later on a loaded machine) read the flags of atEnd and moved; notAtEnd has
    // none, so they ask the driver
    await until(() => asked(from, notAtEnd) > 0, 5000);
    expect(asked(from, atEnd) + asked(from, moved)).toBe(0);
    gpu.finish(s1.handle);
    await waits[0];
    expect(asked(from, atEnd)).toBe(0);
    // recorded again on a stream still busy: the flag that lands on s3 no longer ends its wait, and a
    // wait made now gets no flag (the old write could land after a new one)
    moved.record(s4);
    const writes = gpu.writeLog.length;
    const movedAgain = moved.synchronized();
    expect(gpu.writeLog.length).toBe(writes);
    const finished = gpu.calls.length;
    gpu.finish(s3.handle);
    await until(() => asked(finished, moved) > 0, 5000); // a ride check after s3's flag landed asked the driver
    await turns(3);
    expect(settled).toEqual([0]);
    gpu.finishAll();
    await Promise.all([...held, ...waits, movedAgain, libraryWait]);
    expect(settled.sort()).toEqual([0, 1, 2]);
    for (const e of [atEnd, notAtEnd, after, moved, beforeLibrary]) e.close();
    await expectWaiterClean(channel);
  });

  test('a promotion skips a flagged rider that a nested drop settled meanwhile (its flag landed during the pass)', async () => {
    configureWaits({ flags: 'crowd' });
    const holders = Array.from({ length: HELPERS_PER_CONTEXT }, () => busyStream());
    const aborts = holders.map(() => new AbortController());
    const held = holders.map((s, i) => s.synchronized({ signal: aborts[i].signal }));
    const flaggedStream = busyStream();
    const flaggedHandle = flaggedStream.handle; // read before the wait: a read marks pending points
    const flagged = flaggedStream.synchronized(); // 9th key: a flag, and it rides
    const evStream = busyStream();
    const ev = Event.create({ context: ctx, timing: false }).record(evStream);
    const after = Event.create({ context: ctx, timing: false }).record(evStream); // ev is not its stream's end: no flag
    const queried = ev.synchronized(); // 10th key: rides, asked by queries
    await turns(3);
    expect(waiterStats()).toMatchObject({ riding: 2 });
    // three holders cancelled: their helpers drain (no promotion), so both riders still ride with 7 keys
    for (const a of aborts.slice(0, 3)) a.abort();
    await Promise.allSettled(held.slice(0, 3));
    await turns(2);
    expect(waiterStats()).toMatchObject({ queues: 7, riding: 2 });
    // the next holder's helper comes back; the promotion reads the flagged rider (not done), then asks the
    // event, whose query lands the flag too: the event's drop promotes again and settles the flagged rider
    const flagMark = gpu.writeLog.find((w) => w.stream === flaggedHandle)!.mark;
    const fakeQuery = drv.native('cuEventQuery');
    drv.provideNative('cuEventQuery', ((h: number) => {
      if (h === ev.handle) {
        gpu.land(flagMark);
        gpu.events.get(h)!.done = true;
      }
      return fakeQuery(h);
    }) as never);
    try {
      gpu.finish(holders[3].handle);
      await held[3];
      await Promise.all([flagged, queried]);
    } finally {
      drv.provideNative('cuEventQuery', fakeQuery);
    }
    gpu.finishAll();
    await Promise.allSettled(held);
    ev.close();
    after.close();
    await expectWaiterClean(channel);
  });

  test('a full sweep asks the driver about one flagged rider per context; the others read their flags', async () => {
    configureWaits({ flags: 'crowd', sweepMs: 100 });
    const holders = Array.from({ length: HELPERS_PER_CONTEXT }, () => busyStream());
    const riders = [busyStream(), busyStream(), busyStream(), busyStream()];
    const handles: unknown[] = riders.map((s) => s.handle); // read before the waits: a read marks pending points
    const held = holders.map((s) => s.synchronized());
    const rode = riders.map((s) => s.synchronized());
    await turns(3);
    const from = gpu.calls.length;
    const t0 = performance.now();
    await until(() => gpu.streamsAsked(from).some((h) => handles.includes(h)), 5000); // the first full sweep
    // the context answered for all of them (within 8 sweeps of riding: a late timer could reach the rotation)
    const asked = gpu.streamsAsked(from).filter((h) => handles.includes(h));
    if (performance.now() - t0 < 700) expect(new Set(asked)).toEqual(new Set([handles[0]]));
    expect(waiterStats().riding).toBe(riders.length);
    // every stream is still checked: flags landing settle the rest, the one asked settles too
    for (const s of [...riders, ...holders]) gpu.finish(s.handle);
    await Promise.all([...held, ...rode]);
    await expectWaiterClean(channel);
  });

  test('a failed context fails every flagged rider at the full sweep, though one query per context is made', async () => {
    configureWaits({ flags: 'crowd', sweepMs: 30 });
    const holders = Array.from({ length: HELPERS_PER_CONTEXT }, () => busyStream());
    const riders = [busyStream(), busyStream(), busyStream()];
    const held = holders.map((s) => s.synchronized().catch((e: unknown) => e));
    const rode = riders.map((s) => s.synchronized().catch((e: unknown) => e));
    await until(() => waiterStats().riding === riders.length, 5000);
    // an illegal address fails the context: every query of it fails, and no flag is written
    const queries = ['cuStreamQuery', 'cuEventQuery'] as const;
    const natives = queries.map((n) => drv.native(n));
    for (const n of queries) drv.provideNative(n, (() => drv.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS) as never);
    try {
      const errors = (await Promise.all([...held, ...rode])) as Error[];
      for (const e of errors) expect(e.message).toMatch(/cu(Stream|Event)Query.*ILLEGAL_ADDRESS|ILLEGAL_ADDRESS.*cu(Stream|Event)Query/s);
    } finally {
      queries.forEach((n, i) => drv.provideNative(n, natives[i]));
    }
    await expectWaiterClean(channel);
  });

  test('a flagged rider whose stream alone fails is asked within 8 full sweeps', async () => {
    configureWaits({ flags: 'crowd', sweepMs: 15 });
    const holders = Array.from({ length: HELPERS_PER_CONTEXT }, () => busyStream());
    const riders = [busyStream(), busyStream(), busyStream()];
    const bad = riders[2].handle; // read before the waits: a read marks pending points
    const t0 = performance.now(); // before any rider began riding
    const held = holders.map((s) => s.synchronized());
    const rode = riders.map((s) =>
      s.synchronized().then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    const fakeQuery = drv.native('cuStreamQuery');
    drv.provideNative('cuStreamQuery', ((h: number) => (h === bad ? drv.CUresult.CUDA_ERROR_INVALID_HANDLE : fakeQuery(h))) as never);
    try {
      const e = (await rode[2]) as Error;
      expect(e.message).toMatch(/cuStreamQuery/);
      // riders[0] answers for the context at first; riders[2] is asked once 8 sweeps passed since it began riding
      expect(performance.now() - t0).toBeGreaterThanOrEqual(8 * 15);
    } finally {
      drv.provideNative('cuStreamQuery', fakeQuery);
    }
    for (const s of [...riders, ...holders]) gpu.finish(s.handle);
    expect(await Promise.all(rode.slice(0, 2))).toEqual([undefined, undefined]);
    await Promise.all(held);
    await expectWaiterClean(channel);
  });

  test("a flagged rider's failing stream is found by the full sweep, which queries where ride checks only read the flag", async () => {
    configureWaits({ flags: 'crowd' }); // the suite's 10 s sweep: ride checks only, until the test shortens it
    const holders = Array.from({ length: HELPERS_PER_CONTEXT }, () => busyStream());
    const rider = busyStream();
    const riderHandle = rider.handle; // read before the wait: a read marks pending points
    const held = holders.map((s) => s.synchronized());
    let settled = false;
    const failed = rider.synchronized().then(
      () => undefined,
      (e: unknown) => e,
    );
    void failed.then(() => (settled = true));
    let riderAsked = 0;
    const fakeQuery = drv.native('cuStreamQuery');
    drv.provideNative('cuStreamQuery', ((h: number) => (h === riderHandle ? (riderAsked++, drv.CUresult.CUDA_ERROR_INVALID_HANDLE) : fakeQuery(h))) as never);
    try {
      await until(() => waiterStats().riding === 1, 5000);
      const from = gpu.calls.length;
      // ride checks (every 4 ms) read the flag: they neither ask the failing stream nor settle the wait
      await sleep(15);
      expect({ riderAsked, settled }).toEqual({ riderAsked: 0, settled: false });
      configureWaits({ sweepMs: 40 }); // the next sweep is a full one: it queries the rider
      const e = (await failed) as Error;
      expect(e).toBeInstanceOf(Error);
      expect(e.message).toMatch(/cuStreamQuery/);
      expect(riderAsked).toBeGreaterThan(0);
      expect(gpu.calls.slice(from).filter(([n]) => n === 'cuEventRecord')).toEqual([]);
    } finally {
      drv.provideNative('cuStreamQuery', fakeQuery);
    }
    for (const s of holders) gpu.finish(s.handle);
    await Promise.all(held);
    await expectWaiterClean(channel);
  });
});
