// A fake GPU for the waiter's unit tests: streams whose work finishes when a test says so, events
// recorded on them, helper streams that wait for events and run host functions, and a fake wake
// channel standing in for the libc semaphore (counts posts; an armed wait wakes on the next turn).
import * as drv from '../../src/driver';
import type { Context } from '../../src/context';
import { Stream } from '../../src/stream';
import { setWakeChannel, type WakeChannel } from '../../src/await/wake';
import { configureWaits, resetWaiterForTests, waiterStats, type WaiterSettings } from '../../src/await/waiter';
import { forgetMarkerPools, markerStats } from '../../src/await/markers';
import { fakeContext, fakeDriver, out } from './fake-driver';
import { koffi } from '../../support';

interface FakeEvent {
  /** Bumped by every record: a stream wait takes the generation it saw. */
  gen: number;
  done: boolean;
}
type Op = { kind: 'wait'; ev: number; gen: number } | { kind: 'host'; fn: unknown; data: unknown };

/** The fake semaphore channel: `post()` is what the host function does. */
export class FakeChannel implements WakeChannel {
  readonly name = 'fake';
  readonly hostFn = 0xf00dn;
  readonly userData = 0xbeefn;
  armed = false;
  count = 0;
  arms = 0;
  private onWake: (() => void) | undefined;
  arm(onWake: () => void): void {
    if (this.armed) return;
    this.armed = true;
    this.arms++;
    this.onWake = onWake;
    if (this.count > 0) this.fire();
  }
  release(): void {
    if (this.armed) this.post();
  }
  post(): void {
    this.count++;
    if (this.armed) this.fire();
  }
  private fire(): void {
    setImmediate(() => {
      this.count = 0; // the real channel drains every post before onWake
      this.armed = false;
      this.onWake!();
    });
  }
}

/** The fake GPU: install() gives the driver functions the waiter and Stream/Event call. */
export class FakeGpu {
  readonly events = new Map<number, FakeEvent>();
  /** Events recorded on each stream and not finished yet, in order. */
  readonly pending = new Map<number, number[]>();
  /** Ops of streams made by cuStreamCreate (the waiter's helpers). */
  readonly helpers = new Map<number, Op[]>();
  readonly destroyedHelpers: number[] = [];
  /** Host functions enqueued on program streams (parkOn 'stream'): entries of `pending` that post. */
  readonly streamHosts = new Set<number>();
  hostLaunches = 0;
  /** Each fake GPU numbers its handles apart: a finalizer of an earlier test's object must not destroy this one's. */
  private static base = 0x9000;
  private next = (FakeGpu.base += 0x100000);
  calls: [string, unknown[]][] = [];
  restore: () => void = () => {};
  /** Flag writes (cuStreamWriteValue32) enqueued on program streams, by the mark standing in `pending`. */
  readonly writes = new Map<number, { address: number; value: number }>();
  /** Every flag write enqueued, in order (landed or not), with the mark {@link land} takes. */
  readonly writeLog: { stream: number; address: number; value: number; mark: number }[] = [];
  /** The stream of each event's last record. */
  private readonly recordedOn = new Map<number, number>();
  /** Page-locked memory handed out by cuMemHostAlloc (kept alive here). */
  private readonly hostBlocks: unknown[] = [];

  constructor(readonly channel: FakeChannel) {}

  /** A piece of GPU work the test finishes: a fresh event, not done yet. */
  workEvent(): number {
    const h = (this.next += 0x10);
    this.events.set(h, { gen: 1, done: false });
    return h;
  }

  /** A stream of `ctx` with `n` pieces of work enqueued (events the test finishes). */
  busyStream(ctx: Context, n = 1): Stream {
    const s = Stream.create({ context: ctx });
    for (let i = 0; i < n; i++) this.pending.set(s.handle, [...(this.pending.get(s.handle) ?? []), this.workEvent()]);
    return s;
  }

  install(ctx: Context, extra: Record<string, (...a: never[]) => number> = {}): this {
    const f = fakeDriver(ctx, {
      cuStreamCreateWithPriority: (slot: BigUint64Array) => out(slot, (this.next += 0x10)),
      cuStreamCreate: (slot: BigUint64Array) => {
        const h = (this.next += 0x10);
        this.helpers.set(h, []);
        return out(slot, h);
      },
      cuStreamDestroy: (h: number) => {
        if (this.helpers.delete(h)) this.destroyedHelpers.push(h);
        return 0;
      },
      cuStreamSynchronize: () => 0,
      // a helper is busy while it has ops its event waits hold back
      cuStreamQuery: (h: number) =>
        (this.pending.get(h)?.length ?? 0) === 0 && (this.helpers.get(h)?.length ?? 0) === 0 ? 0 : drv.CUresult.CUDA_ERROR_NOT_READY,
      cuEventCreate: (slot: BigUint64Array) => {
        const h = (this.next += 0x10);
        this.events.set(h, { gen: 0, done: true });
        return out(slot, h);
      },
      cuEventDestroy: (h: number) => (this.events.delete(h), 0),
      cuEventRecord: (ev: number, h: number) => {
        const e = this.events.get(ev);
        if (e === undefined) return drv.CUresult.CUDA_ERROR_INVALID_HANDLE;
        e.gen++;
        e.done = false;
        this.recordedOn.set(ev, h);
        const list = this.pending.get(h) ?? [];
        list.push(ev);
        this.pending.set(h, list);
        return 0;
      },
      cuEventQuery: (ev: number) => {
        const e = this.events.get(ev);
        if (e === undefined) return drv.CUresult.CUDA_ERROR_INVALID_HANDLE;
        return e.done ? 0 : drv.CUresult.CUDA_ERROR_NOT_READY;
      },
      cuStreamWaitEvent: (h: number, ev: number) => {
        this.helpers.get(h)?.push({ kind: 'wait', ev, gen: this.events.get(ev)?.gen ?? 0 });
        this.runHelpers();
        return 0;
      },
      cuLaunchHostFunc: (h: number, fn: unknown, data: unknown) => {
        this.hostLaunches++;
        const ops = this.helpers.get(h);
        if (ops !== undefined) {
          ops.push({ kind: 'host', fn, data });
          this.runHelpers();
        } else if (fn === this.channel.hostFn && data === this.channel.userData) {
          const mark = (this.next += 0x10); // runs when the stream's work before it is done
          this.streamHosts.add(mark);
          this.pending.set(h, [...(this.pending.get(h) ?? []), mark]);
        }
        return 0;
      },
      cuMemHostAlloc: (slot: BigUint64Array, bytes: number) => {
        const block = koffi.alloc('int32', Math.ceil(bytes / 4));
        this.hostBlocks.push(block);
        return out(slot, Number(koffi.address(block)));
      },
      cuMemHostGetDevicePointer: (slot: BigUint64Array, address: number) => out(slot, address),
      cuStreamWriteValue32: (h: number, address: number, value: number) => {
        const mark = (this.next += 0x10); // lands when the stream's work before it is done
        this.writes.set(mark, { address, value });
        this.writeLog.push({ stream: h, address, value, mark });
        this.pending.set(h, [...(this.pending.get(h) ?? []), mark]);
        return 0;
      },
      ...extra,
    });
    this.calls = f.calls;
    this.restore = f.restore;
    return this;
  }

  /** The work enqueued on stream `h` so far is done: its events complete, helpers move on. */
  finish(h: number, count = Infinity): void {
    const list = this.pending.get(h) ?? [];
    const done = list.splice(0, Math.min(count, list.length));
    for (const ev of done) {
      if (this.streamHosts.delete(ev)) this.channel.post();
      this.land(ev);
      const e = this.events.get(ev);
      // an event recorded again elsewhere completes with its new record, not with this stream
      if (e !== undefined && this.recordedOn.get(ev) === h) e.done = true;
    }
    this.runHelpers();
  }

  /** Makes flag write `mark` visible to the host (alone: the events before it stay unfinished). */
  land(mark: number): void {
    const write = this.writes.get(mark);
    if (write === undefined) return;
    this.writes.delete(mark);
    new Int32Array(koffi.view(write.address, 4))[0] = write.value;
  }

  /** Marks every pending event of every stream done. */
  finishAll(): void {
    for (const h of [...this.pending.keys()]) this.finish(h);
  }

  /** Runs each helper stream's ops as far as their event waits allow. */
  runHelpers(): void {
    for (const ops of this.helpers.values()) {
      while (ops.length > 0) {
        const op = ops[0];
        if (op.kind === 'wait') {
          const e = this.events.get(op.ev);
          if (e !== undefined && e.gen === op.gen && !e.done) break;
        } else if (op.fn === this.channel.hostFn && op.data === this.channel.userData) {
          this.channel.post();
        }
        ops.shift();
      }
    }
  }

  /** How many times the driver function `name` was called. */
  count(name: string): number {
    return this.calls.filter(([n]) => n === name).length;
  }

  /** The streams that queries made from call `from` to `to` asked about: a cuStreamQuery's, or the stream a queried marker was recorded on. */
  streamsAsked(from: number, to = this.calls.length): number[] {
    const recordedOn = new Map<unknown, unknown>();
    for (const [n, a] of this.calls) if (n === 'cuEventRecord') recordedOn.set(a[0], a[1]);
    return this.calls
      .slice(from, to)
      .flatMap(([n, a]) => (n === 'cuStreamQuery' ? [a[0] as number] : n === 'cuEventQuery' ? [recordedOn.get(a[0]) as number] : []));
  }

  /** Host functions enqueued on helpers and not yet run. */
  hostFunctionsPending(): number {
    let n = 0;
    for (const ops of this.helpers.values()) n += ops.filter((o) => o.kind === 'host').length;
    return n;
  }
}

/** Resolves after `n` turns of the event loop. */
export async function turns(n = 1): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

/** After a test's waits settled: no wait, queue, park, spin, timer or armed channel is left, and every helper is back. */
export async function expectWaiterClean(channel: FakeChannel): Promise<void> {
  await turns(3);
  const st = waiterStats();
  expect({
    pending: st.pending,
    queues: st.queues,
    parked: st.parked,
    spinning: st.spinning,
    windowTimers: st.windowTimers,
    timers: st.timers,
    armed: channel.armed,
  }).toEqual({ pending: 0, queues: 0, parked: 0, spinning: 0, windowTimers: 0, timers: false, armed: false });
  expect(markerStats().helpersOut).toBe(0);
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Resolves once `done()` holds, checked every 2 ms; throws when it still does not after `ms`. */
export async function until(done: () => boolean, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!done()) {
    if (performance.now() > end) throw new Error(`until: not done after ${ms} ms`);
    await sleep(2);
  }
}

/** The fakes {@link useFakeWaiter} makes afresh for each test. */
export interface FakeWaiter {
  ctx: Context;
  channel: FakeChannel;
  gpu: FakeGpu;
}

/**
 * Registers beforeEach/afterEach: each test gets a fresh fake context, wake channel and GPU, and the
 * waiter reset with `settings`; after it, its pending waits end and the real driver and settings return.
 */
export function useFakeWaiter(settings: Partial<WaiterSettings>): FakeWaiter {
  const defaults = configureWaits();
  const fake = {} as FakeWaiter;
  beforeEach(() => {
    fake.ctx = fakeContext();
    fake.channel = new FakeChannel();
    setWakeChannel(fake.channel);
    forgetMarkerPools();
    resetWaiterForTests();
    configureWaits({ ...defaults, ...settings });
    fake.gpu = new FakeGpu(fake.channel).install(fake.ctx);
  });
  afterEach(async () => {
    // a failed test's waits end here, or their timers would reach the real driver after restore()
    fake.gpu.finishAll();
    await turns(5);
    fake.gpu.restore();
    setWakeChannel(undefined);
    configureWaits(defaults);
  });
  return fake;
}
