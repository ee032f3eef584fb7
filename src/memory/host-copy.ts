// Host copies split across helper threads, for the staged pageable copies (staging.ts): one thread's
// memmove between pageable and pinned memory may be slower than the DMA it feeds (the host side is the
// staged path's ceiling), so a copy can be cut into parts that helper threads (worker_threads, each
// copying through koffi views of raw addresses) make at the same time as the calling thread.
//
// The calling thread blocks until every part is done, so the copy is done when it returns, as a plain
// TypedArray.set is. Each part is handed over through a state slot in shared memory: posted, then claimed
// by its helper (compare-and-exchange), then done. The calling thread makes its own part, then takes back
// every part no helper has claimed yet (a helper still starting, or one that cannot load koffi) and makes
// it too: a part is made by exactly one thread, the calling thread waits only for parts being made, and
// no helper touches the arrays once the copy returned. A helper whose copy threw marks its part failed
// and the calling thread makes it again. Memory a part touches cannot go away meanwhile: the calling
// thread holds both arrays.
import { availableParallelism } from 'node:os';
import type { Worker as WorkerType } from 'node:worker_threads';
import { koffi } from '../../support';

/**
 * Helpers beside the calling thread never outnumber the other cores: a helper waiting for a core, or
 * watching (HELPER_WATCH_MS) on one another thread needs, slows the copy it was meant to speed up.
 */
let coreCap: number | undefined;
function helpersAllowed(): number {
  if (coreCap === undefined) {
    try {
      coreCap = Math.max(0, availableParallelism() - 1);
    } catch {
      coreCap = 0;
    }
  }
  return coreCap;
}

/** Below this many bytes a copy is made by the calling thread alone (waking helpers costs ~10-50 µs). */
export const PARALLEL_COPY_MIN_BYTES = 1 << 20;
/** Most helper threads. */
export const MAX_COPY_HELPERS = 8;
/**
 * How long a helper keeps watching for the next part after a round, before it sleeps, and how long the
 * calling thread watches for the helpers' parts to end before it sleeps (ms). A staged copy posts its
 * next chunk's parts within microseconds to about a chunk's time later (2 MiB parts: ~0.3 ms at 8 GB/s),
 * while a sleeping thread takes ~10-100 µs to wake: late enough, on a 1-2 MiB part, that the calling
 * thread may take the part back and the copy runs on fewer threads. The watch ends at this bound, so
 * idle helpers cost no CPU. Chosen against 0 (helpers that sleep at once) on staged 256 MiB copies.
 */
export const HELPER_WATCH_MS = 2;

// Shared memory: Int32 slots [0] generation (bumped to wake helpers), [1] done count, [2] set when a
// helper could not load koffi, [3] the watch after a part in µs, then per helper a state at [8 + i]
// (IDLE, POSTED, CLAIMED) and a failed flag at [16 + i]; Float64 jobs at byte 128: per helper dst, src, bytes.
const GEN = 0;
const DONE = 1;
const BROKEN = 2;
const WATCH = 3;
const STATE = 8;
const FAILED = 16;
const IDLE = 0;
const POSTED = 1;
const CLAIMED = 2;

// The helper's loop (CommonJS, evaluated in the worker). koffi.view(address, n) gives its view of memory.
const HELPER_SOURCE = `
const { workerData } = require('node:worker_threads');
const ctrl = new Int32Array(workerData.sab, 0, 32);
const jobs = new Float64Array(workerData.sab, 128, 3 * ${MAX_COPY_HELPERS});
const i = workerData.index;
let koffi;
try { const k = require(workerData.koffi); koffi = typeof k.view === 'function' ? k : k.default; } catch { koffi = undefined; }
if (koffi === undefined) { Atomics.store(ctrl, ${BROKEN}, 1); Atomics.notify(ctrl, ${DONE}); }
let gen = workerData.gen;
while (koffi !== undefined) {
  const until = performance.now() + Atomics.load(ctrl, ${WATCH}) / 1000;
  while (Atomics.load(ctrl, ${GEN}) === gen && performance.now() < until);
  Atomics.wait(ctrl, ${GEN}, gen);
  gen = Atomics.load(ctrl, ${GEN});
  if (Atomics.compareExchange(ctrl, ${STATE} + i, ${POSTED}, ${CLAIMED}) !== ${POSTED}) continue;
  try {
    const d = jobs[3 * i], s = jobs[3 * i + 1], n = jobs[3 * i + 2];
    if (n > 0) new Uint8Array(koffi.view(d, n)).set(new Uint8Array(koffi.view(s, n)));
  } catch {
    Atomics.store(ctrl, ${FAILED} + i, 1);
  }
  Atomics.store(ctrl, ${STATE} + i, ${IDLE});
  Atomics.add(ctrl, ${DONE}, 1);
  Atomics.notify(ctrl, ${DONE});
}`;

interface Helpers {
  readonly workers: WorkerType[];
  readonly ctrl: Int32Array;
  readonly jobs: Float64Array;
}

let helpers: Helpers | undefined;
/** What the helpers require for koffi (a test may name a module that fails to load). */
let koffiModulePath: string | undefined;
/** How long helpers and the calling thread watch before sleeping (ms; see HELPER_WATCH_MS). */
let watchMs = HELPER_WATCH_MS;
/** Why helpers are not used (they failed once), or undefined. */
let unavailable: string | undefined;
/** Parts made by helpers, and parts taken back by the calling thread (for tests and the bench). */
const partCounts = { helpers: 0, takenBack: 0 };

/** The helpers, started on first need (count grows up to `count`); undefined when they cannot be had. */
function helpersFor(count: number): Helpers | undefined {
  if (unavailable !== undefined) return undefined;
  if (helpers !== undefined && helpers.workers.length >= count) return helpers;
  try {
    const { Worker } = require('node:worker_threads') as typeof import('node:worker_threads');
    const sab = helpers?.ctrl.buffer ?? new SharedArrayBuffer(128 + 8 * 3 * MAX_COPY_HELPERS);
    const h: Helpers = helpers ?? { workers: [], ctrl: new Int32Array(sab, 0, 32), jobs: new Float64Array(sab, 128, 3 * MAX_COPY_HELPERS) };
    Atomics.store(h.ctrl, WATCH, Math.round(watchMs * 1000));
    const koffiPath = koffiModulePath ?? require.resolve('koffi');
    while (h.workers.length < count) {
      const w = new Worker(HELPER_SOURCE, { eval: true, workerData: { sab, index: h.workers.length, gen: Atomics.load(h.ctrl, GEN), koffi: koffiPath } });
      w.unref(); // never keeps the process alive
      w.on('error', () => undefined); // a helper that failed is noticed by its unclaimed part
      h.workers.push(w);
    }
    helpers = h;
    return h;
  } catch (e) {
    unavailable = (e as Error)?.message ?? String(e);
    return undefined;
  }
}

/**
 * Copies `src` into `dst` (same length), with up to `threads` helper threads beside the calling thread
 * (at most one fewer than the cores) when the copy is large enough; done when it returns.
 */
export function hostCopy(dst: Uint8Array, src: Uint8Array, threads: number): void {
  const n = src.length;
  threads = Math.min(threads, MAX_COPY_HELPERS, helpersAllowed());
  const h = threads > 0 && n >= PARALLEL_COPY_MIN_BYTES ? helpersFor(threads) : undefined;
  if (h === undefined) {
    dst.set(src);
    return;
  }
  const k = Math.min(threads, h.workers.length);
  // k + 1 parts, page multiples; the calling thread's part is the first
  const part = Math.ceil(n / (k + 1) / 4096) * 4096;
  const dstAt = Number(koffi.address(dst));
  const srcAt = Number(koffi.address(src));
  Atomics.store(h.ctrl, DONE, 0);
  for (let i = 0; i < k; i++) {
    const from = Math.min(n, part * (i + 1));
    h.jobs[3 * i] = dstAt + from;
    h.jobs[3 * i + 1] = srcAt + from;
    h.jobs[3 * i + 2] = Math.min(n, from + part) - from;
    Atomics.store(h.ctrl, FAILED + i, 0);
    Atomics.store(h.ctrl, STATE + i, POSTED);
  }
  Atomics.add(h.ctrl, GEN, 1);
  Atomics.notify(h.ctrl, GEN);
  dst.set(part >= n ? src : src.subarray(0, part));
  finishParts(h, k, dst, src, part);
}

/** Bytes [from, to) of helper i's part. */
function partOf(i: number, part: number, n: number): [number, number] {
  const from = Math.min(n, part * (i + 1));
  return [from, Math.min(n, from + part)];
}

/** Takes back the parts no helper claimed and makes them, then waits for the claimed ones (remaking failed ones). */
function finishParts(h: Helpers, k: number, dst: Uint8Array, src: Uint8Array, part: number): void {
  let claimed = 0;
  for (let i = k - 1; i >= 0; i--) {
    if (Atomics.compareExchange(h.ctrl, STATE + i, POSTED, IDLE) === POSTED) {
      const [from, to] = partOf(i, part, src.length);
      dst.set(src.subarray(from, to), from);
      partCounts.takenBack++;
    } else claimed++;
  }
  partCounts.helpers += claimed;
  // The helpers' parts end about when the calling thread's did: watch for them before sleeping (a
  // wake costs as much as a 1 MiB part).
  const until = performance.now() + watchMs;
  while (Atomics.load(h.ctrl, DONE) < claimed && performance.now() < until);
  for (let done = Atomics.load(h.ctrl, DONE); done < claimed; done = Atomics.load(h.ctrl, DONE)) Atomics.wait(h.ctrl, DONE, done);
  for (let i = 0; i < k; i++) {
    if (Atomics.load(h.ctrl, FAILED + i) === 0) continue;
    const [from, to] = partOf(i, part, src.length);
    dst.set(src.subarray(from, to), from);
    unavailable = 'a copy helper failed to copy its part';
  }
  if (Atomics.load(h.ctrl, BROKEN) !== 0) unavailable = 'a copy helper could not load koffi';
}

/** Parts made by helpers and parts the calling thread took back, since the start. @internal */
export function copyHelperParts(): { helpers: number; takenBack: number } {
  return { ...partCounts };
}

/** Why helpers were given up, or undefined while they are in use. @internal */
export function copyHelpersUnavailable(): string | undefined {
  return unavailable;
}

/** Sets how long helpers (running ones too) and the calling thread watch before sleeping, in ms (0: never). @internal */
export function setCopyHelperWatch(ms: number): number {
  if (typeof ms !== 'number' || !(ms >= 0 && ms <= 1000)) throw new RangeError(`setCopyHelperWatch: ms must be from 0 to 1000, got ${String(ms)}`);
  const before = watchMs;
  watchMs = ms;
  if (helpers !== undefined) Atomics.store(helpers.ctrl, WATCH, Math.round(ms * 1000));
  return before;
}

/**
 * Test seam: stops the helpers and forgets that they failed; the next helpers require `koffiPath` for
 * koffi (undefined: koffi's own entry). @internal
 */
export async function resetCopyHelpers(koffiPath?: string): Promise<void> {
  const old = helpers;
  helpers = undefined;
  unavailable = undefined;
  koffiModulePath = koffiPath;
  if (old !== undefined) await Promise.all(old.workers.map((w) => w.terminate()));
}
