// A model test of the buffer API (issue 25 §2): seeded random sequences of memsets, copies between host
// data, pinned and device buffers (whole buffers and subarray views, at offsets), kernel launches,
// stream and context synchronizations and buffer re-allocations, run by an Executor (the objects layer
// on a GPU, or a simulated device in the unit test) and checked against a host mirror of every buffer.
//
// The mirror follows the documented ordering of each call, nothing more:
//   - a call given a stream (or, without one, on a stream-ordered buffer: its allocating stream) is
//     enqueued there: its effect reaches the mirror when that stream (or the context) is synchronized;
//   - a call without a stream on other buffers is done when it returns, and ordered after the work
//     enqueued before it on blocking streams (CUDA's legacy default stream);
//   - host reads and writes of pinned memory happen at once.
// Where the documented order leaves two calls unordered and they touch the same bytes (a race the
// program would own), the engine synchronizes the earlier stream first, as a correct program must; it
// derives these syncs itself, so any subsequence of a failing sequence is a valid program too, and a
// failure shrinks to the shortest sequence that still fails.
//
// Mode 'sync' synchronizes the context after every operation; mode 'none' never does beyond the
// ordering above, so a call that returns before it keeps its documented promise shows as a mismatch.

/** No stream: a synchronous call (or the allocating stream of a stream-ordered buffer). */
export const NO_STREAM = -1;
/** Streams the model uses: 0 is blocking, 1 and 2 are non-blocking. */
export const STREAMS = [{ nonBlocking: false }, { nonBlocking: true }, { nonBlocking: true }] as const;
export const DEVICE_SLOTS = 4;
export const PINNED_SLOTS = 2;
export const PINNED_BYTES = 8192;

/** A byte range [a, b) of a device slot used as a subarray view (the whole buffer when absent). */
export type View = [number, number] | null;

export type Op =
  | { k: 'memset'; buf: number; view: View; width: 1 | 2 | 4; offset: number; count: number; value: number; stream: number }
  | { k: 'h2d'; buf: number; view: View; offset: number; len: number; seed: number; skew: number; stream: number }
  | { k: 'p2d'; buf: number; view: View; offset: number; pin: number; pinOffset: number; len: number; stream: number; via: 'device' | 'pinned' }
  | { k: 'd2d'; dst: number; dview: View; doff: number; src: number; sview: View; soff: number; len: number; stream: number; via: 'copyFrom' | 'copyTo' }
  | { k: 'd2h'; buf: number; view: View; offset: number; len: number; stream: number }
  | { k: 'd2p'; buf: number; view: View; offset: number; pin: number; len: number; stream: number; via: 'device' | 'pinned' }
  | { k: 'pfill'; pin: number; offset: number; len: number; seed: number }
  | { k: 'pcheck'; pin: number }
  | { k: 'kernel'; buf: number; view: View; offset: number; len: number; spin: number; stream: number }
  | { k: 'sync'; stream: number }
  | { k: 'realloc'; buf: number; ordered: number; seed: number };

/** What the engine asks of a device: the objects layer on a GPU, or a simulation. */
export interface Executor {
  /** Fresh buffers: device slots of `sizes` bytes (not stream-ordered) and PINNED_SLOTS pinned ones. */
  reset(sizes: readonly number[]): void;
  /** Runs one operation; for d2h returns the host array the copy fills (read after the documented completion). */
  run(op: Op, data?: Uint8Array): Uint8Array | undefined;
  /** Synchronizes the context (every stream). */
  synchronizeAll(): void;
  /** The bytes of a device slot (after synchronizeAll) or of a pinned slot (at once). */
  contents(space: 'device' | 'pinned', slot: number): Uint8Array;
  /** Frees everything. */
  close(): void;
}

/** xorshift32: small, fast, reproducible. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 0x9e3779b9;
  }
  next(): number {
    let x = this.s;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.s = x >>> 0;
    return this.s;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return this.next() % n;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
}

/** The bytes an h2d/pfill/realloc writes: a function of (seed, length) only. */
export function patternBytes(seed: number, len: number): Uint8Array {
  const r = new Rng(seed);
  const out = new Uint8Array(len);
  for (let i = 0; i < len; i++) out[i] = r.next() & 0xff;
  return out;
}

/** What the bump kernel does to one byte. */
export const bump = (b: number): number => (b * 3 + 1) & 0xff;

/** Little-endian bytes of a memset value of `width` bytes. */
export function memsetBytes(value: number, width: 1 | 2 | 4): number[] {
  const v = width === 4 ? value >>> 0 : value & (width === 2 ? 0xffff : 0xff);
  return Array.from({ length: width }, (_, i) => (v >>> (8 * i)) & 0xff);
}

// ---------------------------------------------------------------------------------------------
// Regions and effects
// ---------------------------------------------------------------------------------------------

interface Region {
  space: 'device' | 'pinned';
  slot: number;
  a: number;
  b: number;
}

const overlaps = (x: Region, y: Region): boolean => x.space === y.space && x.slot === y.slot && x.a < y.b && y.a < x.b;

/** The mirror: the bytes each slot holds once every effect applied so far has completed. */
export class Mirror {
  device: Uint8Array[] = [];
  pinned: Uint8Array[] = [];
  constructor(sizes: readonly number[]) {
    this.device = sizes.map((n) => new Uint8Array(n));
    this.pinned = Array.from({ length: PINNED_SLOTS }, () => new Uint8Array(PINNED_BYTES));
  }
  bytes(r: Region): Uint8Array {
    return (r.space === 'device' ? this.device : this.pinned)[r.slot].subarray(r.a, r.b);
  }
}

/** One operation's effect on the mirror, with what it reads and writes (for ordering) and what it checks. */
interface Effect {
  index: number;
  reads: Region[];
  writes: Region[];
  apply(m: Mirror): void;
  /** A read's check, run once the effect completed: undefined when right, else what was wrong. */
  check?: (m: Mirror) => string | undefined;
}

const abs = (view: View, offset: number): number => (view ? view[0] : 0) + offset;

/** Where (device slot, byte range) an op on `view` at `offset` for `len` bytes lands. */
const deviceRegion = (slot: number, view: View, offset: number, len: number): Region => ({
  space: 'device',
  slot,
  a: abs(view, offset),
  b: abs(view, offset) + len,
});
const pinnedRegion = (slot: number, a: number, len: number): Region => ({ space: 'pinned', slot, a, b: a + len });

function compare(what: string, got: Uint8Array, want: Uint8Array): string | undefined {
  for (let i = 0; i < want.length; i++) {
    if (got[i] !== want[i]) return `${what}: byte ${i} of ${want.length} is ${got[i]}, the mirror says ${want[i]}`;
  }
  return undefined;
}

/** The effect of `op` (index `index` in the sequence); `host` is the array a d2h fills. */
function effectOf(op: Op, index: number, sizes: readonly number[], host: Uint8Array | undefined): Effect {
  switch (op.k) {
    case 'memset': {
      const r = deviceRegion(op.buf, op.view, op.offset, op.count * op.width);
      const pattern = memsetBytes(op.value, op.width);
      return { index, reads: [], writes: [r], apply: (m) => m.bytes(r).forEach((_, i, a) => (a[i] = pattern[i % op.width])) };
    }
    case 'h2d': {
      const r = deviceRegion(op.buf, op.view, op.offset, op.len);
      const data = patternBytes(op.seed, op.len);
      return { index, reads: [], writes: [r], apply: (m) => m.bytes(r).set(data) };
    }
    case 'p2d': {
      const r = deviceRegion(op.buf, op.view, op.offset, op.len);
      const from = pinnedRegion(op.pin, op.pinOffset, op.len);
      return { index, reads: [from], writes: [r], apply: (m) => m.bytes(r).set(m.bytes(from)) };
    }
    case 'd2d': {
      const r = deviceRegion(op.dst, op.dview, op.doff, op.len);
      const from = deviceRegion(op.src, op.sview, op.soff, op.len);
      return { index, reads: [from], writes: [r], apply: (m) => m.bytes(r).set(m.bytes(from).slice()) };
    }
    case 'd2h': {
      const from = deviceRegion(op.buf, op.view, op.offset, op.len);
      let want: Uint8Array | undefined;
      return {
        index,
        reads: [from],
        writes: [],
        apply: (m) => (want = m.bytes(from).slice()),
        check: () => compare(`d2h of device slot ${op.buf} [${from.a}, ${from.b})`, host!, want!),
      };
    }
    case 'd2p': {
      const from = deviceRegion(op.buf, op.view, op.offset, op.len);
      const r = pinnedRegion(op.pin, 0, op.len);
      return { index, reads: [from], writes: [r], apply: (m) => m.bytes(r).set(m.bytes(from)) };
    }
    case 'kernel': {
      const r = deviceRegion(op.buf, op.view, op.offset, op.len);
      return { index, reads: [r], writes: [r], apply: (m) => m.bytes(r).forEach((b, i, a) => (a[i] = bump(b))) };
    }
    case 'realloc': {
      const r: Region = { space: 'device', slot: op.buf, a: 0, b: sizes[op.buf] };
      const data = patternBytes(op.seed, sizes[op.buf]);
      return { index, reads: [], writes: [r], apply: (m) => m.bytes(r).set(data) };
    }
    case 'pfill': {
      const r = pinnedRegion(op.pin, op.offset, op.len);
      const data = patternBytes(op.seed, op.len);
      return { index, reads: [], writes: [r], apply: (m) => m.bytes(r).set(data) };
    }
    case 'pcheck':
    case 'sync':
      return { index, reads: [], writes: [], apply: () => undefined };
  }
}

const conflicts = (e: Effect, reads: Region[], writes: Region[]): boolean =>
  e.writes.some((w) => reads.some((r) => overlaps(w, r)) || writes.some((x) => overlaps(w, x))) || e.reads.some((r) => writes.some((w) => overlaps(r, w)));

// ---------------------------------------------------------------------------------------------
// The engine
// ---------------------------------------------------------------------------------------------

export type Mode = 'sync' | 'none';

/** A mismatch: the operation whose check failed (its index in the sequence) and what was wrong. */
export interface Mismatch {
  index: number;
  message: string;
}

/** The state of one replay: slot kinds (the stream a stream-ordered slot was allocated on) and pending effects. */
class Replay {
  readonly mirror: Mirror;
  /** The allocating stream of each device slot, NO_STREAM when not stream-ordered. */
  readonly ordered: number[];
  readonly pending: Effect[][] = STREAMS.map(() => []);
  mismatch: Mismatch | undefined;

  constructor(
    private readonly exec: Executor,
    readonly sizes: readonly number[],
  ) {
    this.mirror = new Mirror(sizes);
    this.ordered = sizes.map(() => NO_STREAM);
  }

  /** The stream an op runs on as documented: its own, else a stream-ordered buffer's allocating stream. */
  effectiveStream(op: Op): number {
    switch (op.k) {
      case 'memset':
      case 'h2d':
      case 'd2h':
        return op.stream !== NO_STREAM ? op.stream : this.ordered[op.buf];
      case 'p2d':
      case 'd2p':
        // PinnedHostBuffer's own methods take only their option; DeviceBuffer's default to the allocating stream
        return op.stream !== NO_STREAM || op.via === 'pinned' ? op.stream : this.ordered[op.buf];
      case 'd2d':
        return op.stream !== NO_STREAM ? op.stream : this.ordered[op.via === 'copyFrom' ? op.dst : op.src];
      case 'kernel':
        return op.stream;
      default:
        return NO_STREAM;
    }
  }

  /** Completes stream `s`'s pending effects in the mirror, running their checks. */
  complete(s: number): void {
    for (const e of this.pending[s]) this.finish(e);
    this.pending[s] = [];
  }

  finish(e: Effect): void {
    e.apply(this.mirror);
    const bad = e.check?.(this.mirror);
    if (bad !== undefined && this.mismatch === undefined) this.mismatch = { index: e.index, message: bad };
  }

  /** Synchronizes, on the device and in the mirror, every stream whose pending work races with `e` on `s`. */
  orderBefore(e: Effect, s: number, host: boolean): void {
    for (let t = 0; t < STREAMS.length; t++) {
      if (t === s || this.pending[t].length === 0) continue;
      // a synchronous call waits for blocking streams (legacy default stream semantics); host code waits for nothing
      if (!host && s === NO_STREAM && !STREAMS[t].nonBlocking) continue;
      if (this.pending[t].some((p) => conflicts(p, e.reads, e.writes))) this.syncStream(t);
    }
  }

  syncStream(t: number): void {
    this.exec.run({ k: 'sync', stream: t });
    this.complete(t);
  }
}

/** Runs `ops` from a fresh state; returns the first mismatch, or undefined. */
export function replay(exec: Executor, sizes: readonly number[], ops: readonly Op[], mode: Mode, checkEvery = 256): Mismatch | undefined {
  exec.reset(sizes);
  const st = new Replay(exec, sizes);
  // the initial contents: every slot written synchronously (its pattern from a seed of its own)
  for (let slot = 0; slot < sizes.length; slot++)
    step(st, exec, { k: 'h2d', buf: slot, view: null, offset: 0, len: sizes[slot], seed: 0x51ab + slot, skew: 0, stream: NO_STREAM }, -1 - slot);
  for (let pin = 0; pin < PINNED_SLOTS; pin++) step(st, exec, { k: 'pfill', pin, offset: 0, len: PINNED_BYTES, seed: 0x71ab + pin }, -10 - pin);
  for (let i = 0; i < ops.length && st.mismatch === undefined; i++) {
    step(st, exec, ops[i], i);
    if (mode === 'sync') syncAll(st, exec);
    if ((i + 1) % checkEvery === 0) fullCheck(st, exec, i);
  }
  if (st.mismatch === undefined) fullCheck(st, exec, ops.length - 1);
  return st.mismatch;
}

function syncAll(st: Replay, exec: Executor): void {
  exec.synchronizeAll();
  for (let s = 0; s < STREAMS.length; s++) st.complete(s);
}

/** Synchronizes everything and compares every slot with the mirror. */
function fullCheck(st: Replay, exec: Executor, index: number): void {
  syncAll(st, exec);
  for (const [space, all] of [
    ['device', st.mirror.device],
    ['pinned', st.mirror.pinned],
  ] as const) {
    for (let slot = 0; slot < all.length && st.mismatch === undefined; slot++) {
      const bad = compare(`full check of ${space} slot ${slot} after operation ${index}`, exec.contents(space, slot), all[slot]);
      if (bad !== undefined) st.mismatch = { index, message: bad };
    }
  }
}

/** One operation: order it after what it races with, run it, and account for its effect. */
function step(st: Replay, exec: Executor, op: Op, index: number): void {
  if (op.k === 'sync') {
    exec.run(op);
    if (op.stream === NO_STREAM) syncAll(st, exec);
    else st.complete(op.stream);
    return;
  }
  const host = op.k === 'pfill' || op.k === 'pcheck';
  const s = host ? NO_STREAM : st.effectiveStream(op);
  const e = effectOf(op, index, st.sizes, undefined);
  if (op.k === 'pcheck') {
    // the host reads: everything writing this slot must be done
    st.orderBefore({ ...e, reads: [pinnedRegion(op.pin, 0, PINNED_BYTES)] }, NO_STREAM, true);
    const bad = compare(`pinned slot ${op.pin}`, exec.contents('pinned', op.pin), st.mirror.pinned[op.pin]);
    if (bad !== undefined && st.mismatch === undefined) st.mismatch = { index, message: bad };
    return;
  }
  if (op.k === 'realloc') {
    // the old buffer is closed: everything using it must be done (freed on its stream, reused by anyone)
    const whole: Region = { space: 'device', slot: op.buf, a: 0, b: st.sizes[op.buf] };
    for (let t = 0; t < STREAMS.length; t++) if (st.pending[t].some((p) => conflicts(p, [whole], [whole]))) st.syncStream(t);
    st.ordered[op.buf] = op.ordered;
  }
  const on = op.k === 'realloc' ? op.ordered : s;
  st.orderBefore(e, on, host);
  const out = exec.run(op);
  // a synchronous call ran after the work enqueued before it on blocking streams: that is done too now
  if (!host && on === NO_STREAM) for (let t = 0; t < STREAMS.length; t++) if (!STREAMS[t].nonBlocking) st.complete(t);
  const done = op.k === 'd2h' ? effectOf(op, index, st.sizes, out) : e;
  if (host || on === NO_STREAM) st.finish(done);
  else st.pending[on].push(done);
}

// ---------------------------------------------------------------------------------------------
// Generation and shrinking
// ---------------------------------------------------------------------------------------------

/** Slot sizes for a seed: 1 to 16 KiB, odd sizes included. */
export function slotSizes(seed: number): number[] {
  const r = new Rng(seed ^ 0x5eed);
  return Array.from({ length: DEVICE_SLOTS }, () => 1024 + r.int(15 * 1024 + 1));
}

function pickView(r: Rng, size: number, aligned: boolean): View {
  if (r.int(2) === 0) return null;
  let a = r.int(size);
  if (aligned) a -= a % 4;
  const b = a + 1 + r.int(size - a);
  return [a, b];
}

const viewLength = (view: View, size: number): number => (view ? view[1] - view[0] : size);

/** A random stream choice: no stream half the time. */
const pickStream = (r: Rng): number => (r.int(2) === 0 ? NO_STREAM : r.int(STREAMS.length));

/** A sub-range [offset, offset + len) of a view of `length` bytes (len ≥ 1). */
function range(r: Rng, length: number): { offset: number; len: number } {
  const offset = r.int(length);
  return { offset, len: 1 + r.int(Math.min(length - offset, 4096)) };
}

function memsetOp(r: Rng, sizes: readonly number[]): Op {
  const buf = r.int(sizes.length);
  const width = r.pick([1, 2, 4] as const);
  const view = pickView(r, sizes[buf], true);
  const length = viewLength(view, sizes[buf]);
  const count = Math.floor(length / width);
  if (count === 0) return { k: 'memset', buf, view: null, width: 1, offset: 0, count: 1, value: r.int(256), stream: pickStream(r) };
  const first = r.int(count);
  const value = width === 4 ? r.next() : r.int(2 ** (8 * width));
  return { k: 'memset', buf, view, width, offset: first * width, count: 1 + r.int(count - first), value, stream: pickStream(r) };
}

type Gen = (r: Rng, sizes: readonly number[]) => Op;

/** Generators with their weights. */
const GENERATORS: [number, Gen][] = [
  [12, memsetOp],
  [
    12,
    (r, sizes) => {
      const buf = r.int(sizes.length);
      const view = pickView(r, sizes[buf], false);
      return { k: 'h2d', buf, view, ...range(r, viewLength(view, sizes[buf])), seed: r.next(), skew: r.int(8), stream: pickStream(r) };
    },
  ],
  [
    8,
    (r, sizes) => {
      const buf = r.int(sizes.length);
      const view = pickView(r, sizes[buf], false);
      const { offset, len } = range(r, Math.min(viewLength(view, sizes[buf]), PINNED_BYTES));
      const via = r.pick(['device', 'pinned'] as const);
      return {
        k: 'p2d',
        buf,
        view,
        offset,
        pin: r.int(PINNED_SLOTS),
        pinOffset: via === 'pinned' ? r.int(PINNED_BYTES - len + 1) : 0,
        len,
        stream: pickStream(r),
        via,
      };
    },
  ],
  [
    12,
    (r, sizes) => {
      const dst = r.int(sizes.length);
      const src = r.int(sizes.length);
      const dview = pickView(r, sizes[dst], false);
      const sview = pickView(r, sizes[src], false);
      const dl = viewLength(dview, sizes[dst]);
      const sl = viewLength(sview, sizes[src]);
      const doff = r.int(dl);
      const soff = r.int(sl);
      let len = 1 + r.int(Math.min(dl - doff, sl - soff));
      // the same slot: no overlap between source and destination (memcpy's rule)
      if (dst === src) {
        const a = abs(dview, doff);
        const b = abs(sview, soff);
        if (a < b + len && b < a + len) len = Math.max(0, Math.abs(a - b));
        if (len === 0) return { k: 'sync', stream: NO_STREAM };
      }
      return { k: 'd2d', dst, dview, doff, src, sview, soff, len, stream: pickStream(r), via: r.pick(['copyFrom', 'copyTo'] as const) };
    },
  ],
  [
    10,
    (r, sizes) => {
      const buf = r.int(sizes.length);
      const view = pickView(r, sizes[buf], false);
      return { k: 'd2h', buf, view, ...range(r, viewLength(view, sizes[buf])), stream: pickStream(r) };
    },
  ],
  [
    6,
    (r, sizes) => {
      const buf = r.int(sizes.length);
      const view = pickView(r, sizes[buf], false);
      const { offset, len } = range(r, viewLength(view, sizes[buf]));
      return {
        k: 'd2p',
        buf,
        view,
        offset,
        pin: r.int(PINNED_SLOTS),
        len: Math.min(len, PINNED_BYTES),
        stream: pickStream(r),
        via: r.pick(['device', 'pinned'] as const),
      };
    },
  ],
  [
    4,
    (r) => {
      const offset = r.int(PINNED_BYTES);
      return { k: 'pfill', pin: r.int(PINNED_SLOTS), offset, len: 1 + r.int(PINNED_BYTES - offset), seed: r.next() };
    },
  ],
  [3, (r) => ({ k: 'pcheck', pin: r.int(PINNED_SLOTS) })],
  [
    12,
    (r, sizes) => {
      const buf = r.int(sizes.length);
      const view = pickView(r, sizes[buf], false);
      // mostly short; sometimes ~0.1 ms or ~1 ms of spinning, to leave work in flight behind later calls
      const spin = r.pick([0, 0, 0, 0, 0, 0, 200_000, 200_000, 2_000_000]);
      return { k: 'kernel', buf, view, ...range(r, viewLength(view, sizes[buf])), spin, stream: r.int(STREAMS.length) };
    },
  ],
  [4, (r) => ({ k: 'sync', stream: r.int(STREAMS.length + 1) - 1 })],
  [2, (r, sizes) => ({ k: 'realloc', buf: r.int(sizes.length), ordered: pickStream(r), seed: r.next() })],
];
const TOTAL_WEIGHT = GENERATORS.reduce((n, [w]) => n + w, 0);

/** The operations of a seed (a pure function of seed and count). */
export function generate(seed: number, count: number, sizes: readonly number[]): Op[] {
  const r = new Rng(seed);
  const ops: Op[] = [];
  for (let i = 0; i < count; i++) {
    let w = r.int(TOTAL_WEIGHT);
    let g = GENERATORS[0][1];
    for (const [weight, gen] of GENERATORS) {
      if (w < weight) {
        g = gen;
        break;
      }
      w -= weight;
    }
    ops.push(g(r, sizes));
  }
  return ops;
}

/**
 * The shortest subsequence of `ops` (greedy chunk removal, halving the chunk down to one op) that still
 * fails, within `budget` replays. Returns it with its mismatch.
 */
export function shrink(
  exec: Executor,
  sizes: readonly number[],
  ops: readonly Op[],
  mode: Mode,
  budget = 400,
): { ops: Op[]; mismatch: Mismatch | undefined; replays: number } {
  let best = ops.slice();
  let mismatch = replay(exec, sizes, best, mode);
  let replays = 1;
  if (mismatch === undefined) return { ops: best, mismatch, replays };
  best = best.slice(0, mismatch.index + 1);
  for (let chunk = Math.max(1, best.length >> 1); chunk >= 1 && replays < budget; chunk >>= 1) {
    for (let at = 0; at < best.length && replays < budget; ) {
      const candidate = [...best.slice(0, at), ...best.slice(at + chunk)];
      const m = candidate.length > 0 ? replay(exec, sizes, candidate, mode) : undefined;
      replays++;
      if (m !== undefined) {
        best = candidate.slice(0, m.index + 1);
        mismatch = m;
      } else at += chunk;
    }
  }
  return { ops: best, mismatch, replays };
}

/** Runs `count` operations of `seed` in batches (a fresh replay each), stopping at the first mismatch. */
export function runModel(
  exec: Executor,
  options: { seed: number; count: number; mode: Mode; batch?: number },
): { ops: number; mismatch?: { seed: number; mismatch: Mismatch; sizes: number[]; ops: Op[] } } {
  const batch = options.batch ?? 20_000;
  let done = 0;
  for (let b = 0; done < options.count; b++) {
    const seed = (options.seed + b * 0x9e37) >>> 0;
    const sizes = slotSizes(seed);
    const ops = generate(seed, Math.min(batch, options.count - done), sizes);
    const mismatch = replay(exec, sizes, ops, options.mode);
    if (mismatch !== undefined) return { ops: done + mismatch.index + 1, mismatch: { seed, mismatch, sizes, ops } };
    done += ops.length;
  }
  return { ops: done };
}
