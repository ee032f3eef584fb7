// When the waiter's spin runs (src/await/slices.ts), against the fake GPU: a new spin's first slice
// runs before the event loop turns, and back-to-back awaits of short work still let the loop turn.
import { Stream } from '../src/stream';
import { FakeGpu, expectWaiterClean, useFakeWaiter, type FakeChannel } from './helpers/await-gpu';
import type { Context } from '../src/context';

let ctx: Context;
let channel: FakeChannel;
let gpu: FakeGpu;
const fake = useFakeWaiter({ spinMicros: 1e6, predict: false, sweepMs: 50, flags: false });
beforeEach(() => ({ ctx, channel, gpu } = fake));

describe('spin slices', () => {
  /** A fake GPU whose streams in `doneAfter` report idle after that many more cuStreamQuery calls, each taking `us`. */
  function countingGpu(doneAfter: Map<number, number>, us = 0): void {
    gpu.restore();
    gpu = new FakeGpu(channel).install(ctx, {
      cuStreamQuery: (h: number) => {
        const until = performance.now() + us / 1000;
        while (performance.now() < until);
        const left = doneAfter.get(h);
        if (left === undefined) return (gpu.pending.get(h)?.length ?? 0) === 0 ? 0 : 600;
        doneAfter.set(h, left - 1);
        return left <= 1 ? 0 : 600; // CUDA_ERROR_NOT_READY
      },
    });
  }

  test("a new spin's first slice runs before the event loop turns: work ending in it resumes the code at once", async () => {
    const doneAfter = new Map<number, number>();
    countingGpu(doneAfter);
    const s = Stream.create({ context: ctx });
    void s.handle; // created: its queries count from here
    doneAfter.set(s.handle, 4); // busy for synchronized()'s own query and the spin's next two
    let turned = false;
    setImmediate(() => (turned = true)); // queued before the wait: a spin on the next turn would run after it
    await s.synchronized();
    expect(turned).toBe(false);
    expect(doneAfter.get(s.handle)).toBe(0);
    await expectWaiterClean(channel);
  });

  test('back-to-back awaits of short work still let the event loop turn (a slice of microtask spins per turn)', async () => {
    const doneAfter = new Map<number, number>();
    countingGpu(doneAfter, 50); // each query takes 50 µs: a wait spins ≥ 100 µs
    const s = Stream.create({ context: ctx });
    let turnsSeen = 0;
    let watching = true;
    const watch = (): void => {
      turnsSeen++;
      if (watching) setImmediate(watch);
    };
    setImmediate(watch);
    for (let i = 0; i < 40; i++) {
      doneAfter.set(s.handle, 3);
      await s.synchronized();
    }
    watching = false;
    // 40 waits of ≥ 100 µs each: ≥ 4 ms of spin, at most ~2 slices (0.5 ms) of it between two turns
    expect(turnsSeen).toBeGreaterThanOrEqual(6);
    await expectWaiterClean(channel);
  });
});
