// The buffer model engine (test/model/buffer-model.ts) on a simulated device: streams are queues that run
// only when synchronized, so any call whose completion the engine assumes but the device does not keep
// shows. A faithful device gives 0 mismatches; one whose "synchronous" memset returns before it ran (the
// bug of issue 25 §1) is caught, and the failure shrinks to a handful of operations. The same engine runs
// on the H200 against the objects layer (test/gpu/buffer-model.gpu.test.ts, test/model/cli.ts).
import {
  NO_STREAM,
  PINNED_BYTES,
  PINNED_SLOTS,
  STREAMS,
  bump,
  generate,
  memsetBytes,
  patternBytes,
  replay,
  runModel,
  shrink,
  slotSizes,
  type Executor,
  type Op,
  type View,
} from './model/buffer-model';

type Bug = 'none' | 'late-memset' | 'late-d2d';

class SimulatedDevice implements Executor {
  device: Uint8Array[] = [];
  pinned: Uint8Array[] = [];
  private ordered: number[] = [];
  private queues: (() => void)[][] = STREAMS.map(() => []);
  /** Work a buggy "synchronous" call left behind: it runs at the next context synchronize only. */
  private late: (() => void)[] = [];
  constructor(private readonly bug: Bug) {}

  reset(sizes: readonly number[]): void {
    this.device = sizes.map((n) => new Uint8Array(n));
    this.pinned = Array.from({ length: PINNED_SLOTS }, () => new Uint8Array(PINNED_BYTES));
    this.ordered = sizes.map(() => NO_STREAM);
    this.queues = STREAMS.map(() => []);
    this.late = [];
  }

  private at(slot: number, view: View, offset: number, len: number): Uint8Array {
    const a = (view ? view[0] : 0) + offset;
    return this.device[slot].subarray(a, a + len);
  }

  /** Runs `work` on stream `s` (queued), or as a synchronous call: after the blocking streams' work, at once. */
  private submit(s: number, work: () => void, late = false): void {
    if (s !== NO_STREAM) return void this.queues[s].push(work);
    STREAMS.forEach((st, t) => !st.nonBlocking && this.flush(t));
    if (late) this.late.push(work);
    else work();
  }

  private flush(t: number): void {
    for (const w of this.queues[t].splice(0)) w();
  }

  private own(slot: number, stream: number): number {
    return stream !== NO_STREAM ? stream : this.ordered[slot];
  }

  run(op: Op): Uint8Array | undefined {
    switch (op.k) {
      case 'memset': {
        const pattern = memsetBytes(op.value, op.width);
        const dst = this.at(op.buf, op.view, op.offset, op.count * op.width);
        this.submit(
          this.own(op.buf, op.stream),
          () => dst.forEach((_, i, a) => (a[i] = pattern[i % op.width])),
          this.bug === 'late-memset' && this.own(op.buf, op.stream) === NO_STREAM,
        );
        return undefined;
      }
      case 'h2d': {
        const data = patternBytes(op.seed, op.len);
        this.submit(this.own(op.buf, op.stream), () => this.at(op.buf, op.view, op.offset, op.len).set(data));
        return undefined;
      }
      case 'p2d': {
        const s = op.via === 'device' ? this.own(op.buf, op.stream) : op.stream;
        this.submit(s, () => this.at(op.buf, op.view, op.offset, op.len).set(this.pinned[op.pin].subarray(op.pinOffset, op.pinOffset + op.len)));
        return undefined;
      }
      case 'd2d': {
        const s = this.own(op.via === 'copyFrom' ? op.dst : op.src, op.stream);
        this.submit(
          s,
          () => this.at(op.dst, op.dview, op.doff, op.len).set(this.at(op.src, op.sview, op.soff, op.len).slice()),
          this.bug === 'late-d2d' && s === NO_STREAM,
        );
        return undefined;
      }
      case 'd2h': {
        const out = new Uint8Array(op.len);
        this.submit(this.own(op.buf, op.stream), () => out.set(this.at(op.buf, op.view, op.offset, op.len)));
        return out;
      }
      case 'd2p': {
        const s = op.via === 'device' ? this.own(op.buf, op.stream) : op.stream;
        this.submit(s, () => this.pinned[op.pin].set(this.at(op.buf, op.view, op.offset, op.len)));
        return undefined;
      }
      case 'pfill':
        this.pinned[op.pin].set(patternBytes(op.seed, op.len), op.offset);
        return undefined;
      case 'kernel':
        this.submit(op.stream, () => this.at(op.buf, op.view, op.offset, op.len).forEach((b, i, a) => (a[i] = bump(b))));
        return undefined;
      case 'sync':
        if (op.stream === NO_STREAM) this.synchronizeAll();
        else this.flush(op.stream);
        return undefined;
      case 'realloc': {
        this.ordered[op.buf] = op.ordered;
        const data = patternBytes(op.seed, this.device[op.buf].length);
        this.device[op.buf].fill(0xee); // fresh memory holds anything
        this.submit(op.ordered, () => this.device[op.buf].set(data));
        return undefined;
      }
      case 'pcheck':
        return undefined;
    }
  }

  synchronizeAll(): void {
    for (const w of this.late.splice(0)) w();
    STREAMS.forEach((_, t) => this.flush(t));
  }

  contents(space: 'device' | 'pinned', slot: number): Uint8Array {
    return (space === 'device' ? this.device : this.pinned)[slot].slice();
  }

  close(): void {
    this.device = [];
  }
}

describe('buffer model engine (simulated device)', () => {
  test('generation is a pure function of the seed, and covers every operation kind', () => {
    const sizes = slotSizes(7);
    expect(slotSizes(7)).toEqual(sizes);
    const ops = generate(7, 5000, sizes);
    expect(generate(7, 5000, sizes)).toEqual(ops);
    expect(generate(8, 5000, sizes)).not.toEqual(ops);
    const kinds = new Set(ops.map((o) => o.k));
    for (const k of ['memset', 'h2d', 'p2d', 'd2d', 'd2h', 'd2p', 'pfill', 'pcheck', 'kernel', 'sync', 'realloc']) expect(kinds).toContain(k);
    // every region stays inside its slot
    for (const op of ops) {
      if (op.k === 'memset') expect((op.view ? op.view[0] : 0) + op.offset + op.count * op.width).toBeLessThanOrEqual(op.view ? op.view[1] : sizes[op.buf]);
      if (op.k === 'd2d') expect((op.dview ? op.dview[0] : 0) + op.doff + op.len).toBeLessThanOrEqual(op.dview ? op.dview[1] : sizes[op.dst]);
    }
  });

  test('a faithful device: 0 mismatches in both modes', () => {
    for (const mode of ['sync', 'none'] as const) {
      const r = runModel(new SimulatedDevice('none'), { seed: 3, count: 40_000, mode, batch: 10_000 });
      expect(r.mismatch).toBeUndefined();
      expect(r.ops).toBe(40_000);
    }
  });

  test.each(['late-memset', 'late-d2d'] as const)(
    'a "synchronous" call that returns before it ran (%s) is caught in mode none, and shrinks to a few operations',
    (bug) => {
      const exec = new SimulatedDevice(bug);
      const r = runModel(exec, { seed: 3, count: 40_000, mode: 'none', batch: 10_000 });
      expect(r.mismatch).toBeDefined();
      const m = r.mismatch!;
      const small = shrink(exec, m.sizes, m.ops.slice(0, m.mismatch.index + 1), 'none');
      expect(small.mismatch).toBeDefined();
      expect(small.ops.length).toBeLessThanOrEqual(4);
      const kind = bug === 'late-memset' ? 'memset' : 'd2d';
      const culprit = small.ops.find((o) => o.k === kind) as Extract<Op, { stream: number }>;
      expect(culprit.stream).toBe(NO_STREAM);
      // the shrunk sequence fails on replay, and passes on a faithful device
      expect(replay(new SimulatedDevice(bug), m.sizes, small.ops, 'none')).toBeDefined();
      expect(replay(new SimulatedDevice('none'), m.sizes, small.ops, 'none')).toBeUndefined();
    },
  );

  test('mode sync hides the late call only where a synchronize follows it at once: the faithful run and the buggy run agree', () => {
    // with a context synchronize after every operation the late work runs before anything reads it
    const r = runModel(new SimulatedDevice('late-memset'), { seed: 5, count: 20_000, mode: 'sync', batch: 10_000 });
    expect(r.mismatch).toBeUndefined();
  });

  test('a device that corrupts data is caught by the reads and the full checks', () => {
    class Corrupt extends SimulatedDevice {
      n = 0;
      override run(op: Op): Uint8Array | undefined {
        const out = super.run(op);
        if (op.k === 'kernel' && ++this.n === 50) this.device[op.buf][op.view ? op.view[0] : 0] ^= 1;
        return out;
      }
    }
    const r = runModel(new Corrupt('none'), { seed: 11, count: 5000, mode: 'sync' });
    expect(r.mismatch?.mismatch.message).toMatch(/byte \d+ of \d+ is \d+, the mirror says \d+/);
  });
});
