// src/memory/host-copy.ts with real helper threads: parts made by helpers and by the calling thread land
// where they belong (odd sizes, offsets into larger buffers, many rounds in a row), and helpers that cannot
// load koffi never stop a copy: the calling thread takes their parts back, then stops using helpers.
import { availableParallelism } from 'node:os';
import {
  HELPER_WATCH_MS,
  MAX_COPY_HELPERS,
  PARALLEL_COPY_MIN_BYTES,
  copyHelperParts,
  copyHelpersUnavailable,
  hostCopy,
  resetCopyHelpers,
  setCopyHelperWatch,
} from '../src/memory/host-copy';

function noise(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed * 2654435761 || 1;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterAll(() => resetCopyHelpers());

test('below the minimum or with no threads, a plain copy', () => {
  const src = noise(1000, 1);
  const dst = new Uint8Array(1000);
  hostCopy(dst, src, 3);
  expect(dst).toEqual(src);
  const big = noise(PARALLEL_COPY_MIN_BYTES + 5, 2);
  const out = new Uint8Array(big.length);
  hostCopy(out, big, 0);
  expect(out).toEqual(big);
});

test.each([1, 2, 3, MAX_COPY_HELPERS])('%i helper(s): every byte where it belongs, round after round', async (threads) => {
  const before = copyHelperParts().helpers;
  for (const n of [PARALLEL_COPY_MIN_BYTES, PARALLEL_COPY_MIN_BYTES + 1, 3 * PARALLEL_COPY_MIN_BYTES + 4097, 5_000_011]) {
    const src = noise(n + 13, n).subarray(13);
    const into = new Uint8Array(n + 20).fill(0xee);
    const dst = into.subarray(7, 7 + n);
    hostCopy(dst, src, threads);
    expect(Buffer.compare(dst, src)).toBe(0);
    expect([into[6], into[7 + n]]).toEqual([0xee, 0xee]);
    await sleep(5); // helpers start at their own pace: later rounds find them running
  }
  // once started, helpers make parts (rounds until one did, each checked the same way). A round's copy is
  // long enough (16 MiB) that a helper woken from sleep claims its part before the calling thread, done
  // with its own, takes it back: with 2 MiB a fresh clone's `npm test` on 2 busy cores once saw no helper
  // part in 100 rounds.
  const src = noise(16 * PARALLEL_COPY_MIN_BYTES + 1, threads);
  for (let round = 0; round < 100 && copyHelperParts().helpers === before; round++) {
    const dst = new Uint8Array(src.length);
    hostCopy(dst, src, threads);
    expect(Buffer.compare(dst, src)).toBe(0);
    await sleep(20);
  }
  expect(copyHelperParts().helpers).toBeGreaterThan(before);
  expect(copyHelpersUnavailable()).toBeUndefined();
});

test('helpers that cannot load koffi: every copy is still whole, and helpers are given up', async () => {
  await resetCopyHelpers('/nonexistent/koffi-for-the-test.js');
  const src = noise(3 * PARALLEL_COPY_MIN_BYTES + 3, 9);
  for (let round = 0; round < 200 && copyHelpersUnavailable() === undefined; round++) {
    const dst = new Uint8Array(src.length);
    hostCopy(dst, src, 2);
    expect(Buffer.compare(dst, src)).toBe(0);
    await sleep(10);
  }
  expect(copyHelpersUnavailable()).toBe('a copy helper could not load koffi');
  const dst = new Uint8Array(src.length);
  hostCopy(dst, src, 2);
  expect(Buffer.compare(dst, src)).toBe(0);
  await resetCopyHelpers();
});

test.each([0, 0.5, 50])('helpers watching %f ms for the next part: back-to-back copies are whole, every part made once', async (watch) => {
  setCopyHelperWatch(watch); // running helpers read it at their next part
  const src = noise(4 * PARALLEL_COPY_MIN_BYTES + 4099, 21);
  // start the helpers, then copy back to back (no pause: what a staged copy's chunks do)
  for (let round = 0; round < 100 && copyHelperParts().helpers === 0; round++) {
    hostCopy(new Uint8Array(src.length), src, 3);
    await sleep(20);
  }
  const before = copyHelperParts();
  for (let round = 0; round < 40; round++) {
    const into = new Uint8Array(src.length + 9).fill(0xab);
    const dst = into.subarray(4, 4 + src.length);
    hostCopy(dst, src, 3);
    expect(Buffer.compare(dst, src)).toBe(0);
    expect([into[3], into[4 + src.length]]).toEqual([0xab, 0xab]);
  }
  const after = copyHelperParts();
  // every part of the 40 copies made once, by a helper or taken back; helpers never outnumber the other cores
  expect(after.helpers - before.helpers + after.takenBack - before.takenBack).toBe(40 * Math.min(3, availableParallelism() - 1));
  expect(copyHelpersUnavailable()).toBeUndefined();
  setCopyHelperWatch(HELPER_WATCH_MS);
});

test('helpers never outnumber the other cores, whatever is asked', () => {
  const src = noise(3 * PARALLEL_COPY_MIN_BYTES, 5);
  const before = copyHelperParts();
  const dst = new Uint8Array(src.length);
  hostCopy(dst, src, MAX_COPY_HELPERS);
  expect(Buffer.compare(dst, src)).toBe(0);
  const after = copyHelperParts();
  expect(after.helpers - before.helpers + after.takenBack - before.takenBack).toBe(Math.min(MAX_COPY_HELPERS, availableParallelism() - 1));
});

test('the watch is checked', () => {
  expect(() => setCopyHelperWatch(-1)).toThrow(/setCopyHelperWatch: ms must be from 0 to 1000, got -1/);
  expect(() => setCopyHelperWatch(NaN)).toThrow(RangeError);
  expect(() => setCopyHelperWatch('1' as never)).toThrow(RangeError);
  expect(setCopyHelperWatch(HELPER_WATCH_MS)).toBe(HELPER_WATCH_MS);
});
