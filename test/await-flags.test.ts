// The waiter's flags (src/await/flags.ts) against the fake GPU: a stream wait posts a flag write behind
// its marker; the spin reads the flag instead of querying; a refused write falls back to queries; slots
// are given back and a late write of a reused slot never ends a newer wait.
import { Stream } from '../src/stream';
import { configureWaits, resetWaiterForTests, waiterStats } from '../src/await/waiter';
import { forgetMarkerPools } from '../src/await/markers';
import { setWakeChannel } from '../src/await/wake';
import { AbortError } from '../src/await/abort';
import * as drv from '../src/driver';
import { fakeContext } from './helpers/fake-driver';
import { FakeChannel, FakeGpu, expectWaiterClean, turns, until } from './helpers/await-gpu';
import type { Context } from '../src/context';

let ctx: Context;
let channel: FakeChannel;
let gpu: FakeGpu;
const defaults = configureWaits();

function setUp(extra: Record<string, (...a: never[]) => number> = {}): void {
  gpu?.restore();
  ctx = fakeContext();
  channel = new FakeChannel();
  setWakeChannel(channel);
  forgetMarkerPools();
  resetWaiterForTests();
  configureWaits({ ...defaults, spinMicros: 1e6, predict: false, sweepMs: 50, flags: true });
  gpu = new FakeGpu(channel).install(ctx, extra);
}
beforeEach(() => setUp());
afterEach(() => {
  gpu.restore();
  setWakeChannel(undefined);
  configureWaits(defaults);
});

function busyStream(): Stream {
  const s = Stream.create({ context: ctx });
  const work = 0x70000 + 0x10 * gpu.pending.size;
  gpu.events.set(work, { gen: 1, done: false });
  gpu.pending.set(s.handle, [work]);
  return s;
}
function calls(name: string): unknown[][] {
  return gpu.calls.filter(([n]) => n === name).map(([, a]) => a);
}
function queries(): number {
  return calls('cuEventQuery').length + calls('cuStreamQuery').length;
}
describe('flags the GPU writes', () => {
  test('a stream wait posts one write behind its marker and resolves when the flag lands, on the flag alone', async () => {
    const s = busyStream();
    let resolved = false;
    const p = s.synchronized().then(() => (resolved = true));
    const [w] = gpu.writeLog;
    expect(gpu.writeLog).toHaveLength(1);
    expect(w).toMatchObject({ stream: s.handle, value: 1 });
    const order = gpu.pending.get(s.handle)!;
    expect(gpu.events.has(order[1])).toBe(true); // the marker event, then the write
    expect(order[2]).toBe(w.mark);
    await turns(3);
    expect(resolved).toBe(false);
    gpu.land(w.mark); // the flag lands; the fake's marker is still unfinished: only the flag can end it
    await p;
    expect(gpu.events.get(order[1])!.done).toBe(false);
    expect(calls('cuLaunchHostFunc')).toHaveLength(0); // no park
    gpu.finish(s.handle);
    await expectWaiterClean(channel);
  });

  test('a spinning pass reads memory: one query in 64 passes, against one or more a pass on queries', async () => {
    const PASSES = 8200;
    const spinFor = async (flags: boolean): Promise<{ queries: number; passes: number }> => {
      setUp();
      configureWaits({ flags });
      const s = busyStream();
      const p = s.synchronized();
      const q0 = queries();
      const p0 = waiterStats().spinPasses;
      // thousands of passes: a count that drifted (a query every 63rd pass) would show
      await until(() => waiterStats().spinPasses - p0 >= PASSES, 10_000); // a loaded machine spins late
      const got = { queries: queries() - q0, passes: waiterStats().spinPasses - p0 };
      gpu.finish(s.handle);
      await p;
      return got;
    };
    const onQueries = await spinFor(false);
    const onFlags = await spinFor(true);
    expect(onQueries.passes).toBeGreaterThanOrEqual(PASSES);
    expect(onQueries.queries).toBeGreaterThanOrEqual(onQueries.passes);
    expect(onFlags.passes).toBeGreaterThanOrEqual(PASSES);
    expect(onFlags.queries).toBeLessThanOrEqual(2 * Math.ceil(onFlags.passes / 64)); // a 64th pass asks the stream and the marker
    await expectWaiterClean(channel);
  });

  test('waits on one stream take growing numbers of one slot and resolve in order', async () => {
    const s = busyStream();
    const order: number[] = [];
    const p1 = s.synchronized().then(() => order.push(1));
    gpu.pending.get(s.handle)!.push(0x7fff0); // more work between the two waits
    gpu.events.set(0x7fff0, { gen: 1, done: false });
    const p2 = s.synchronized().then(() => order.push(2));
    const [w1, w2] = gpu.writeLog;
    expect([w1.value, w2.value]).toEqual([1, 2]);
    expect(w2.address).toBe(w1.address);
    gpu.land(w1.mark);
    await p1;
    await turns(3);
    expect(order).toEqual([1]);
    gpu.land(w2.mark);
    await p2;
    expect(order).toEqual([1, 2]);
    gpu.finish(s.handle);
    await expectWaiterClean(channel);
  });

  test('a driver that refuses the write: the wait queries instead, and the context is not asked again', async () => {
    setUp({ cuStreamWriteValue32: () => drv.CUresult.CUDA_ERROR_NOT_SUPPORTED });
    for (let i = 0; i < 2; i++) {
      const s = busyStream();
      const p = s.synchronized();
      await turns(2);
      gpu.finish(s.handle);
      await p;
    }
    expect(calls('cuStreamWriteValue32')).toHaveLength(1);
    await expectWaiterClean(channel);
  });

  test('no page-locked memory for the slab: no writes, the waits query', async () => {
    setUp({ cuMemHostAlloc: () => drv.CUresult.CUDA_ERROR_OUT_OF_MEMORY });
    const s = busyStream();
    const p = s.synchronized();
    await turns(2);
    gpu.finish(s.handle);
    await p;
    expect(calls('cuStreamWriteValue32')).toHaveLength(0);
    expect(calls('cuMemHostAlloc').length).toBeGreaterThan(0);
    await expectWaiterClean(channel);
  });

  test('no device address for the slab: its memory goes back, no writes, the waits query', async () => {
    setUp({ cuMemHostGetDevicePointer: () => drv.CUresult.CUDA_ERROR_NOT_SUPPORTED, cuMemFreeHost: () => 0 });
    const s = busyStream();
    const p = s.synchronized();
    await turns(2);
    gpu.finish(s.handle);
    await p;
    expect(calls('cuStreamWriteValue32')).toHaveLength(0);
    expect(calls('cuMemFreeHost')).toHaveLength(1);
    await expectWaiterClean(channel);
  });

  test('a parked flagged wait still wakes through the channel and leaves nothing', async () => {
    configureWaits({ spinMicros: 0 });
    const s = busyStream();
    const p = s.synchronized();
    await turns(3);
    expect(waiterStats().parked).toBe(1);
    gpu.finish(s.handle);
    await p;
    await expectWaiterClean(channel);
  });

  test('an aborted wait gives its slot back; the late write of its number does not end the next wait there', async () => {
    const a = busyStream();
    const ac = new AbortController();
    const pa = a.synchronized({ signal: ac.signal });
    ac.abort(new Error('gone'));
    await expect(pa).rejects.toBeInstanceOf(AbortError);
    const b = busyStream();
    let resolved = false;
    const pb = b.synchronized().then(() => (resolved = true));
    const [wa, wb] = gpu.writeLog;
    expect(wb.address).toBe(wa.address); // the slot was given back and taken again
    expect(wb.value).toBe(2);
    gpu.land(wa.mark); // the aborted wait's number lands: older than b's, it ends nothing
    await turns(3);
    expect(resolved).toBe(false);
    gpu.land(wb.mark);
    await pb;
    expect(resolved).toBe(true);
    gpu.finish(a.handle);
    await expectWaiterClean(channel);
  });

  test('configureWaits checks flags', () => {
    expect(() => configureWaits({ flags: 1 as never })).toThrow(/configureWaits: flags must be true, false or 'crowd', got 1/);
    expect(() => configureWaits({ flags: 'all' as never })).toThrow(/configureWaits: flags must be true, false or 'crowd', got all/);
    expect(configureWaits({ flags: 'crowd' }).flags).toBe('crowd');
  });
});
