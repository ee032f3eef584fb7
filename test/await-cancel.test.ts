// The waiter's cancellation against a fake GPU and a fake wake channel: AbortSignal and timeoutMs
// (any length, Infinity too) reject without leaving a listener, a timer or a watcher behind, options
// are checked before any driver call and read once.
import { CudaError, OBJECTS_ERROR } from '../src/errors';
import { waiterStats } from '../src/await/waiter';
import { markerStats } from '../src/await/markers';
import { AbortError } from '../src/await/abort';
import { FakeChannel, FakeGpu, expectWaiterClean, turns, useFakeWaiter } from './helpers/await-gpu';
import type { Context } from '../src/context';

let ctx: Context;
let channel: FakeChannel;
let gpu: FakeGpu;
const fake = useFakeWaiter({ spinMicros: 0, predict: false, sweepMs: 50, flags: false });
beforeEach(() => ({ ctx, channel, gpu } = fake));

describe('cancellation', () => {
  test('an abort while parked rejects with an AbortError CudaError, releases the channel, drains the helper', async () => {
    const s = gpu.busyStream(ctx);
    const ac = new AbortController();
    const p = s.synchronized({ signal: ac.signal });
    await turns(3);
    expect(channel.armed).toBe(true);
    const reason = new Error('client went away');
    ac.abort(reason);
    const e = await p.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AbortError);
    expect(e).toBeInstanceOf(CudaError);
    expect(e).toMatchObject({ name: 'AbortError', code: OBJECTS_ERROR.aborted, cause: reason });
    expect((e as Error).message).toMatch(/^Stream\.synchronized: the wait was aborted \(client went away\)/);
    await expectWaiterClean(channel);
    // it still waits for the marker: kept aside, not put in front of the next wait, not destroyed
    expect(markerStats()).toMatchObject({ helpersIdle: 0, helpersDraining: 1 });
    const other = gpu.busyStream(ctx);
    const q = other.synchronized();
    await turns(3);
    const helpers = gpu.calls.filter(([n]) => n === 'cuLaunchHostFunc').map(([, a]) => a[0]);
    expect(helpers).toHaveLength(2);
    expect(helpers[1]).not.toBe(helpers[0]);
    gpu.finish(other.handle);
    await q;
    gpu.finish(s.handle); // the stale host function only posts
    await turns(3);
    await expectWaiterClean(channel);
    expect(gpu.destroyedHelpers).toHaveLength(0);
    // drained: the next park takes it again, no new stream
    const third = gpu.busyStream(ctx);
    const r = third.synchronized();
    await turns(3);
    expect(gpu.count('cuStreamCreate')).toBe(2);
    gpu.finish(third.handle);
    await r;
    await expectWaiterClean(channel);
  });

  test('an abort of a later wait leaves the earlier one waiting, and the reverse', async () => {
    const s = gpu.busyStream(ctx);
    const a1 = new AbortController();
    const a2 = new AbortController();
    const p1 = s.synchronized({ signal: a1.signal });
    const p2 = s.synchronized({ signal: a2.signal });
    const p3 = s.synchronized();
    await turns(3);
    a2.abort();
    await expect(p2).rejects.toMatchObject({ name: 'AbortError' });
    a1.abort(); // the head: the next wait becomes the head and parks
    await expect(p1).rejects.toMatchObject({ name: 'AbortError' });
    await turns(3);
    expect(waiterStats()).toMatchObject({ pending: 1, parked: 1 });
    gpu.finish(s.handle);
    await p3;
    await expectWaiterClean(channel);
  });

  test('an already aborted signal rejects before any driver call', async () => {
    const s = gpu.busyStream(ctx);
    const before = gpu.calls.length;
    await expect(s.synchronized({ signal: AbortSignal.abort('stop') })).rejects.toMatchObject({ name: 'AbortError', cause: 'stop' });
    expect(gpu.calls.length).toBe(before);
    await expectWaiterClean(channel);
  });

  test('timeoutMs rejects with a timeout error and leaves nothing', async () => {
    const s = gpu.busyStream(ctx);
    const e = await s.synchronized({ timeoutMs: 20 }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: OBJECTS_ERROR.timeout, message: 'Stream.synchronized: timed out after 20 ms' });
    await expectWaiterClean(channel);
  });

  test('timeoutMs of 2^31 ms and more, or Infinity, keeps waiting (a plain setTimeout would fire after 1 ms)', async () => {
    const s = gpu.busyStream(ctx);
    const waits = [2 ** 31, 1e12, Infinity].map((timeoutMs) => s.synchronized({ timeoutMs }));
    const settled: unknown[] = [];
    for (const w of waits)
      w.then(
        () => settled.push('resolved'),
        (e: unknown) => settled.push(e),
      );
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toEqual([]);
    gpu.finish(s.handle);
    await Promise.all(waits);
    expect(settled).toEqual(['resolved', 'resolved', 'resolved']);
    await expectWaiterClean(channel); // and their timers are gone
  });

  test('options are read once: a getter cannot swap a checked value for another later', async () => {
    const s = gpu.busyStream(ctx);
    let reads = 0;
    const shifty = {
      get timeoutMs(): unknown {
        return reads++ === 0 ? 60_000 : 'soon';
      },
      get signal(): unknown {
        return reads > 1 ? { aborted: true } : undefined;
      },
    } as never;
    const p = s.synchronized(shifty);
    const e = await Promise.race([
      p.then(
        () => 'resolved',
        (x: unknown) => x,
      ),
      new Promise((r) => setTimeout(() => r('still waiting'), 20)),
    ]);
    expect(e).toBe('still waiting');
    gpu.finish(s.handle);
    await p;
    await expectWaiterClean(channel);
  });

  test('a resolved wait removes its abort listener and its timer', async () => {
    const s = gpu.busyStream(ctx);
    const ac = new AbortController();
    let listeners = 0;
    const add = ac.signal.addEventListener.bind(ac.signal);
    const remove = ac.signal.removeEventListener.bind(ac.signal);
    ac.signal.addEventListener = ((...a: Parameters<typeof add>) => (listeners++, add(...a))) as typeof add;
    ac.signal.removeEventListener = ((...a: Parameters<typeof remove>) => (listeners--, remove(...a))) as typeof remove;
    const p = s.synchronized({ signal: ac.signal, timeoutMs: 60_000 });
    await turns(2);
    expect(listeners).toBe(1);
    gpu.finish(s.handle);
    await p;
    expect(listeners).toBe(0);
    await expectWaiterClean(channel); // a 60 s timer left behind would keep jest's worker alive too
  });

  test('bad options are refused before any driver call', async () => {
    const s = gpu.busyStream(ctx);
    const before = gpu.calls.length;
    await expect(s.synchronized({ signal: {} as AbortSignal })).rejects.toThrow(TypeError);
    await expect(s.synchronized({ timeoutMs: -1 })).rejects.toThrow(/Stream.synchronized\(\): timeoutMs must be a non-negative number/);
    await expect(s.synchronized(5 as never)).rejects.toThrow(TypeError);
    expect(gpu.calls.length).toBe(before);
  });
});
