// Pageable copies staged through pinned chunks (src/memory/staging.ts), without a GPU: a simulated
// device whose streams are queues that run only when something waits for them (an event synchronize
// runs its stream up to the event, a stream synchronize all of it). A DMA reads or writes its pinned
// chunk when it runs, not when it is enqueued: a chunk overwritten before its DMA ran, or a copy that
// returns before its data moved, shows as wrong bytes. Device memory is a host array.
import koffi from 'koffi';
import * as drv from '../src/driver';
import { Context } from '../src/context';
import { DeviceBuffer, PinnedHostBuffer } from '../src/memory';
import {
  configureStaging,
  dropStaging,
  stagingFromEnvironment,
  stagingSettings,
  stagingStats,
  trimStaging,
  STAGING_DEFAULTS,
  type StagingSettings,
} from '../src/memory/staging';
import { Stream } from '../src/stream';
import { fakeContext, fakeDriver, out, type FakeFn } from './helpers/fake-driver';

const NOT_READY = 600;
const DEV_BASE = 0x7f0000000000;
const heap = new Uint8Array(1 << 24);
let devTop = 0;
let nextHandle = 0x5000;
const hostBlocks = new Map<number, { mem: unknown; bytes: number }>();
const queues = new Map<number, (() => void)[]>();
const events = new Map<number, { done: boolean; stream: number }>();
/** name → remaining successful calls before one fails with `status` (tests set it). */
const failures = new Map<string, { after: number; status: number }>();

function dev(addr: number, n: number): Uint8Array {
  return heap.subarray(addr - DEV_BASE, addr - DEV_BASE + n);
}
function host(p: unknown, n: number): Uint8Array {
  if (typeof p === 'number') return new Uint8Array(koffi.view(p, n));
  const v = p as ArrayBufferView;
  return new Uint8Array(v.buffer, v.byteOffset, n);
}
function queue(h: number): (() => void)[] {
  let q = queues.get(h);
  if (q === undefined) queues.set(h, (q = []));
  return q;
}
function flush(h: number): void {
  const q = queue(h);
  while (q.length) q.shift()!();
}
function flushAll(): void {
  for (const h of queues.keys()) flush(h);
}
/** Streams created with CU_STREAM_NON_BLOCKING: the legacy default stream neither waits for them nor they for it. */
const nonBlocking = new Set<number>();
/** Enqueues `work` on `h`, ordered as the legacy default stream orders it against the blocking streams. */
function enqueue(h: number, work: () => void): void {
  if (h === 0) for (const k of queues.keys()) if (k !== 0 && !nonBlocking.has(k)) flush(k);
  if (h !== 0 && !nonBlocking.has(h)) flush(0);
  queue(h).push(work);
}
/** What synchronizing the legacy default stream waits for: itself and the blocking streams. */
function flushLegacy(): void {
  for (const h of queues.keys()) if (!nonBlocking.has(h)) flush(h);
}
function pending(): number {
  let n = 0;
  for (const q of queues.values()) n += q.length;
  return n;
}
function failing(name: string, fn: FakeFn): FakeFn {
  return (...args) => {
    const f = failures.get(name);
    if (f !== undefined && f.after-- === 0) {
      failures.delete(name);
      return f.status;
    }
    return fn(...args);
  };
}

const fakes: Record<string, FakeFn> = {
  cuInit: () => 0,
  cuDeviceGet: (o: Int32Array, ordinal: number) => ((o[0] = ordinal), 0),
  cuCtxCreate: (o) => out(o, 0xd0),
  cuCtxDestroy: () => 0,
  cuStreamCreateWithPriority: (o, flags: number) => {
    nextHandle += 0x100;
    if (flags & 1) nonBlocking.add(nextHandle);
    return out(o, nextHandle);
  },
  cuStreamDestroy: () => 0,
  cuStreamBeginCapture: () => 0,
  cuStreamEndCapture: (_h: number, o: BigUint64Array) => out(o, 0),
  cuStreamGetCaptureInfo: (_h: number, status: Int32Array, id: BigUint64Array) => ((status[0] = 1), (id[0] = 77n), 0),
  cuMemAlloc: (o, bytes: number) => {
    out(o, DEV_BASE + devTop);
    devTop += Math.ceil(bytes / 256) * 256;
    return 0;
  },
  cuMemFree: () => 0,
  cuMemHostAlloc: failing('cuMemHostAlloc', (o, bytes: number) => {
    const mem = koffi.alloc('uint8', bytes);
    const a = Number(koffi.address(mem));
    hostBlocks.set(a, { mem, bytes });
    return out(o, a);
  }),
  cuMemFreeHost: (a: number) => {
    koffi.free(hostBlocks.get(a)!.mem);
    hostBlocks.delete(a);
    return 0;
  },
  cuMemHostGetDevicePointer: (o, a: number) => out(o, a),
  cuPointerGetAttributes: (_n: number, _attrs: Int32Array, slots: BigUint64Array, p: number) => {
    const known = [...hostBlocks].some(([a, b]) => p >= a && p < a + b.bytes);
    new BigUint64Array(koffi.view(Number(slots[0]), 8))[0] = known ? 2n : 0n; // CU_MEMORYTYPE_HOST, else unknown
    return 0;
  },
  cuEventCreate: (o) => {
    const h = (nextHandle += 0x10);
    events.set(h, { done: true, stream: 0 });
    return out(o, h);
  },
  cuEventDestroy: (h: number) => (events.delete(h), 0),
  cuEventRecord: failing('cuEventRecord', (h: number, s: number) => {
    const e = events.get(h)!;
    e.done = false;
    e.stream = s;
    enqueue(s, () => (e.done = true));
    return 0;
  }),
  cuEventQuery: (h: number) => (events.get(h)!.done ? 0 : NOT_READY),
  cuEventSynchronize: (h: number) => {
    const e = events.get(h)!;
    const q = queue(e.stream);
    while (!e.done) q.shift()!();
    return 0;
  },
  cuStreamSynchronize: failing('cuStreamSynchronize', (h: number) => (h === 0 ? flushLegacy() : flush(h), 0)),
  // The driver's own pageable paths: host to device snapshots the source at once; device to host is done on return.
  cuMemcpyHtoD: (d: number, s: unknown, n: number) => (flushAll(), dev(d, n).set(host(s, n)), 0),
  cuMemcpyDtoH: (d: unknown, s: number, n: number) => (flushAll(), host(d, n).set(dev(s, n)), 0),
  cuMemcpyHtoDAsync: failing('cuMemcpyHtoDAsync', (d: number, s: unknown, n: number, h: number) => {
    if (typeof s !== 'number') {
      const snapshot = host(s, n).slice();
      enqueue(h, () => dev(d, n).set(snapshot));
    } else enqueue(h, () => dev(d, n).set(host(s, n)));
    return 0;
  }),
  cuMemcpyDtoHAsync: failing('cuMemcpyDtoHAsync', (d: unknown, s: number, n: number, h: number) => {
    enqueue(h, () => host(d, n).set(dev(s, n)));
    if (typeof d !== 'number') flush(h);
    return 0;
  }),
  cuMemsetD8Async: (d: number, v: number, n: number, h: number) => (enqueue(h, () => dev(d, n).fill(v)), 0),
};

const ctx = fakeContext(0xc0);
let driver: ReturnType<typeof fakeDriver>;
let saved: StagingSettings;
const names = () => driver.calls.map(([n]) => n);
const count = (name: string) => driver.calls.filter(([n]) => n === name).length;

/** Bytes i*7+seed (mod 256) filling `n` bytes. */
function pattern(n: number, seed = 1): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 7 + seed) & 0xff;
  return out;
}

beforeAll(() => {
  driver = fakeDriver(ctx, fakes);
  saved = configureStaging({ minBytes: 0, chunkBytes: 1000, maxChunks: 2, chunksPerCopy: 2 });
});
afterAll(() => {
  dropStaging(ctx);
  configureStaging(saved);
  driver.restore();
});
beforeEach(() => {
  flushAll();
  driver.calls.length = 0;
  failures.clear();
});

describe('staged copies move the right bytes', () => {
  const sizes = [1, 999, 1000, 1001, 1999, 2000, 2001, 4567];

  test.each(sizes)('%i bytes, host to device and back, without a stream (done on return)', (n) => {
    const buf = DeviceBuffer.alloc(n + 13, { context: ctx });
    const data = pattern(n, n);
    buf.copyFrom(data, { offset: 13 });
    expect(pending()).toBe(0);
    expect(dev(buf.ptr + 13, n)).toEqual(data);
    expect(count('cuMemcpyHtoD')).toBe(0);
    expect(count('cuMemcpyHtoDAsync')).toBe(Math.ceil(n / 1000));
    const back = buf.copyTo(new Uint8Array(n), { offset: 13 });
    expect(pending()).toBe(0);
    expect(back).toEqual(data);
    expect(count('cuMemcpyDtoH')).toBe(0);
    expect(count('cuMemcpyDtoHAsync')).toBe(Math.ceil(n / 1000));
    expect(stagingStats(ctx)).toMatchObject({ chunks: 2, leased: 0, pending: 0 });
    buf.close();
  });

  test.each(sizes)('%i bytes on a stream: the source may be reused at once; the copy back is done on return', (n) => {
    const s = Stream.create({ context: ctx });
    const buf = DeviceBuffer.alloc(n, { context: ctx });
    const data = pattern(n, 3);
    const src = data.slice();
    buf.copyFrom(src, { stream: s });
    src.fill(0); // allowed once the call returned
    const back = new Uint8Array(n);
    buf.copyTo(back, { stream: s });
    expect(back).toEqual(data);
    s.close();
    buf.close();
  });

  test('sources and destinations at odd places: subarrays, DataViews, ArrayBuffers, wider elements, byteLength', () => {
    const n = 3333;
    const buf = DeviceBuffer.alloc(10000, { context: ctx });
    const big = pattern(n + 17, 9);
    buf.copyFrom(big.subarray(17), { offset: 5 });
    expect(dev(buf.ptr + 5, n)).toEqual(big.subarray(17));
    const dv = new DataView(big.buffer, 3, 2500);
    buf.copyFrom(dv, { offset: 4000 });
    expect(dev(buf.ptr + 4000, 2500)).toEqual(big.subarray(3, 2503));
    const ab = pattern(2048, 11).buffer as ArrayBuffer;
    buf.copyFrom(ab, { offset: 8499, byteLength: 1500 });
    expect(dev(buf.ptr + 8499, 1500)).toEqual(new Uint8Array(ab, 0, 1500));
    const f64 = Float64Array.from({ length: 300 }, (_, i) => i * 1.5);
    buf.copyFrom(f64, { offset: 7000 });
    expect(buf.copyTo(new Float64Array(300), { offset: 7000 })).toEqual(f64);
    // into the middle of a larger array, through a view of the buffer, a byteLength shorter than both
    const into = new Uint8Array(5000).fill(0xee);
    buf.subarray(5).copyTo(into.subarray(101), { byteLength: 3000 });
    expect(into.subarray(101, 3101)).toEqual(big.subarray(17, 3017));
    expect(into[100]).toBe(0xee);
    expect(into[3101]).toBe(0xee);
    // a SharedArrayBuffer's bytes, at an offset
    const shared = new Uint8Array(new SharedArrayBuffer(3000), 9, 2900);
    shared.set(pattern(2900, 13));
    buf.copyFrom(shared, { offset: 3 });
    expect(count('cuMemcpyHtoD')).toBe(0);
    expect(buf.copyTo(new Uint8Array(new SharedArrayBuffer(2900)), { offset: 3 })).toEqual(new Uint8Array(pattern(2900, 13)));
    buf.copyFrom(big.subarray(17), { offset: 5 }); // restore what the lines below read
    const dvOut = new DataView(new ArrayBuffer(2600), 50, 2500);
    buf.copyTo(dvOut, { offset: 4000 });
    expect(new Uint8Array(dvOut.buffer, 50, 2500)).toEqual(big.subarray(3, 2503));
    buf.close();
  });

  test('each chunk boundary lands where it should: the DMAs are chunk-sized, in order, at the right addresses', () => {
    const buf = DeviceBuffer.alloc(2500, { context: ctx });
    buf.copyFrom(pattern(2500));
    const dmas = driver.calls.filter(([n]) => n === 'cuMemcpyHtoDAsync').map(([, a]) => [(a[0] as number) - buf.ptr, a[2], a[3]]);
    expect(dmas).toEqual([
      [0, 1000, 0],
      [1000, 1000, 0],
      [2000, 500, 0],
    ]);
    const pinned = driver.calls.filter(([n]) => n === 'cuMemcpyHtoDAsync').map(([, a]) => a[1]);
    expect(pinned[0]).not.toBe(pinned[1]);
    expect(pinned[2]).toBe(pinned[0]); // double-buffered: chunk 2 reuses chunk 0's pinned memory …
    const i2 = driver.calls.findIndex(
      ([n], i) => n === 'cuMemcpyHtoDAsync' && i > 0 && driver.calls.slice(0, i).filter(([m]) => m === 'cuMemcpyHtoDAsync').length === 2,
    );
    expect(driver.calls.slice(0, i2).map(([n]) => n)).toContain('cuEventSynchronize'); // … after waiting for its DMA
    expect(names().at(-1)).toBe('cuStreamSynchronize');
    expect(driver.calls.at(-1)![1]).toEqual([0]);
    buf.close();
  });

  test('device to host issues chunk k+1 before copying chunk k out', () => {
    const buf = DeviceBuffer.alloc(3000, { context: ctx });
    dev(buf.ptr, 3000).set(pattern(3000, 5));
    driver.calls.length = 0;
    expect(buf.copyTo(new Uint8Array(3000))).toEqual(pattern(3000, 5));
    const seq = names().filter((n) => n === 'cuMemcpyDtoHAsync' || n === 'cuEventSynchronize');
    expect(seq).toEqual(['cuMemcpyDtoHAsync', 'cuMemcpyDtoHAsync', 'cuEventSynchronize', 'cuMemcpyDtoHAsync', 'cuEventSynchronize', 'cuEventSynchronize']);
    buf.close();
  });

  test.each([3, 4])('%i chunks per copy: the DMAs run that many chunks ahead, each chunk reused only after its DMA, byte for byte', (chunksPerCopy) => {
    const before = configureStaging({ chunksPerCopy, maxChunks: 6 });
    try {
      trimStaging(ctx);
      const s = Stream.create({ context: ctx });
      const buf = DeviceBuffer.alloc(6500, { context: ctx });
      for (const stream of [undefined, s]) {
        driver.calls.length = 0;
        buf.copyFrom(pattern(6500, chunksPerCopy), { stream });
        const pinned = driver.calls.filter(([n]) => n === 'cuMemcpyHtoDAsync').map(([, a]) => a[1]);
        expect(pinned).toHaveLength(7);
        expect(new Set(pinned).size).toBe(chunksPerCopy); // a ring of that many chunks, in turn
        for (let k = chunksPerCopy; k < 7; k++) expect(pinned[k]).toBe(pinned[k - chunksPerCopy]);
        driver.calls.length = 0;
        expect(buf.copyTo(new Uint8Array(6500), { stream })).toEqual(pattern(6500, chunksPerCopy));
        const seq = names().filter((n) => n === 'cuMemcpyDtoHAsync' || n === 'cuEventSynchronize');
        expect(seq.filter((n) => n === 'cuMemcpyDtoHAsync')).toHaveLength(7);
        if (stream === undefined) {
          // every chunk idle (the upload was done on return): chunksPerCopy DMAs in flight before the
          // first wait, then one issued per chunk copied out
          expect(seq.slice(0, chunksPerCopy + 1)).toEqual([...Array(chunksPerCopy).fill('cuMemcpyDtoHAsync'), 'cuEventSynchronize']);
          expect(stagingStats(ctx)).toMatchObject({ chunks: chunksPerCopy, leased: 0 });
        } else {
          // the upload's chunks may still be in flight on s: the download took new ones, within the bound
          expect(stagingStats(ctx)).toMatchObject({ chunks: Math.min(6, 2 * chunksPerCopy), leased: 0 });
        }
      }
      // a copy of fewer chunks leases fewer (two at least)
      trimStaging(ctx);
      buf.copyFrom(pattern(1500, 3));
      expect(buf.copyTo(new Uint8Array(1500))).toEqual(pattern(1500, 3));
      expect(stagingStats(ctx).chunks).toBe(2);
      s.close();
      buf.close();
    } finally {
      configureStaging(before);
      trimStaging(ctx);
    }
  });
});

test('with helper threads for the host side: both directions, on a stream and without, byte for byte', async () => {
  const before = configureStaging({ chunkBytes: (3 << 20) / 2 + 5, hostThreads: 2 });
  try {
    const n = (7 << 20) / 2 + 3;
    const s = Stream.create({ context: ctx });
    const buf = DeviceBuffer.alloc(n, { context: ctx });
    for (let round = 0; round < 4; round++) {
      const data = pattern(n, round);
      buf.copyFrom(data, round & 1 ? { stream: s } : undefined);
      expect(Buffer.compare(buf.copyTo(new Uint8Array(n), round & 1 ? { stream: s } : undefined), data)).toBe(0);
      await new Promise((r) => setTimeout(r, 20)); // helpers start meanwhile
    }
    s.close();
    buf.close();
  } finally {
    configureStaging(before);
    trimStaging(ctx);
  }
});

describe('when to stage', () => {
  test('below minBytes, and for memory the driver knows (a typed array over pinned memory), the copy goes direct', () => {
    const before = configureStaging({ minBytes: 4096 });
    try {
      const buf = DeviceBuffer.alloc(8192, { context: ctx });
      buf.copyFrom(pattern(4095));
      expect(names()).toEqual(expect.arrayContaining(['cuMemcpyHtoD']));
      expect(count('cuMemcpyHtoDAsync')).toBe(0);
      driver.calls.length = 0;
      buf.copyFrom(pattern(4096));
      expect(count('cuMemcpyHtoD')).toBe(0);
      expect(count('cuMemcpyHtoDAsync')).toBe(5);
      const p = PinnedHostBuffer.alloc(8192, { context: ctx });
      p.array(Uint8Array).set(pattern(8192, 2));
      driver.calls.length = 0;
      buf.copyFrom(p.array());
      expect(count('cuPointerGetAttributes')).toBe(1);
      expect(count('cuMemcpyHtoD')).toBe(1);
      expect(buf.copyTo(new Uint8Array(8192))).toEqual(pattern(8192, 2));
      driver.calls.length = 0;
      buf.copyTo(p.array());
      expect(count('cuMemcpyDtoH')).toBe(1);
      p.close();
      buf.close();
    } finally {
      configureStaging(before);
    }
  });

  test.each([
    ['uploads staged, downloads direct', { upload: { minBytes: 4096 }, download: { minBytes: Infinity } }, true, false],
    ['downloads staged, uploads direct', { upload: { minBytes: Infinity }, download: { minBytes: 4096 } }, false, true],
    ['each direction its own threshold', { upload: { minBytes: 6000 }, download: { minBytes: 4096 } }, false, true],
  ] as const)('per direction: %s', (_what, change, up, down) => {
    const before = configureStaging(change);
    try {
      const buf = DeviceBuffer.alloc(5000, { context: ctx });
      driver.calls.length = 0;
      buf.copyFrom(pattern(5000, 6));
      expect([count('cuMemcpyHtoD'), count('cuMemcpyHtoDAsync')]).toEqual(up ? [0, 5] : [1, 0]);
      expect(count('cuPointerGetAttributes')).toBe(up ? 1 : 0); // a direction not staged at this size asks nothing
      driver.calls.length = 0;
      expect(buf.copyTo(new Uint8Array(5000))).toEqual(pattern(5000, 6));
      expect([count('cuMemcpyDtoH'), count('cuMemcpyDtoHAsync')]).toEqual(down ? [0, 5] : [1, 0]);
      expect(count('cuPointerGetAttributes')).toBe(down ? 1 : 0);
      // on a stream too
      const s = Stream.create({ context: ctx });
      driver.calls.length = 0;
      buf.copyFrom(pattern(5000, 8), { stream: s });
      expect(buf.copyTo(new Uint8Array(5000), { stream: s })).toEqual(pattern(5000, 8));
      expect([count('cuMemcpyHtoDAsync'), count('cuMemcpyDtoHAsync')]).toEqual([up ? 5 : 1, down ? 5 : 1]);
      s.close();
      buf.close();
    } finally {
      configureStaging(before);
    }
  });

  test('Infinity turns staging off; pinned buffers and device buffers never stage', () => {
    const buf = DeviceBuffer.alloc(5000, { context: ctx });
    const before = configureStaging({ minBytes: Infinity });
    try {
      buf.copyFrom(pattern(5000));
      expect(names()).not.toContain('cuPointerGetAttributes');
      expect(count('cuMemcpyHtoD')).toBe(1);
    } finally {
      configureStaging(before);
    }
    driver.calls.length = 0;
    const p = PinnedHostBuffer.alloc(5000, { context: ctx });
    buf.copyFrom(p);
    buf.copyTo(p);
    expect(names()).not.toContain('cuPointerGetAttributes');
    p.close();
    buf.close();
  });

  test('a capturing stream never stages: pageable copies are refused before any chunk is touched', () => {
    const s = Stream.create({ context: ctx });
    const buf = DeviceBuffer.alloc(3000, { context: ctx });
    const stats = stagingStats(ctx);
    s.beginCapture();
    driver.calls.length = 0;
    expect(() => buf.copyFrom(pattern(3000), { stream: s })).toThrow(/DeviceBuffer.copyFrom: a copy from pageable memory cannot be captured/);
    expect(() => buf.copyTo(new Uint8Array(3000), { stream: s })).toThrow(/DeviceBuffer.copyTo: a copy into pageable memory cannot be captured/);
    expect(names()).toEqual([]);
    expect(stagingStats(ctx)).toEqual(stats);
    s.endCaptureHandle();
    s.close();
    buf.close();
  });

  test('settings: validated, restorable, and read from the environment', () => {
    expect(() => configureStaging({ chunkBytes: 0 })).toThrow(/configureStaging: chunkBytes must be an integer from 1 to 2\*\*31, got 0/);
    expect(() => configureStaging({ maxChunks: 1 })).toThrow(/configureStaging: maxChunks must be an integer from 2 to 64/);
    expect(() => configureStaging({ chunksPerCopy: 1 })).toThrow(/configureStaging: chunksPerCopy must be an integer from 2 to 64, got 1/);
    expect(stagingFromEnvironment({ CUDA_TS_STAGING_CHUNKS_PER_COPY: '4' }).chunksPerCopy).toBe(4);
    expect(() => configureStaging({ minBytes: -1 })).toThrow(RangeError);
    expect(() => configureStaging({ minBytes: 1.5 })).toThrow(RangeError);
    expect(() => configureStaging({ chunk: 4 } as never)).toThrow(/configureStaging: unknown setting 'chunk'/);
    expect(() => configureStaging(null as never)).toThrow(TypeError);
    const both = (minBytes: number, hostThreads: number) => ({ minBytes, hostThreads });
    const T = STAGING_DEFAULTS.upload.hostThreads;
    const U = STAGING_DEFAULTS.download.hostThreads;
    expect(stagingSettings()).toEqual({ upload: both(0, T), download: both(0, U), chunkBytes: 1000, maxChunks: 2, chunksPerCopy: 2 });
    expect(stagingFromEnvironment({})).toEqual({
      upload: { ...STAGING_DEFAULTS.upload },
      download: { ...STAGING_DEFAULTS.download },
      chunkBytes: STAGING_DEFAULTS.chunkBytes,
      maxChunks: STAGING_DEFAULTS.maxChunks,
      chunksPerCopy: STAGING_DEFAULTS.chunksPerCopy,
    });
    const off = stagingFromEnvironment({ CUDA_TS_STAGING: '0', CUDA_TS_STAGING_UPLOAD_MIN_BYTES: '5' });
    expect([off.upload.minBytes, off.download.minBytes]).toEqual([Infinity, Infinity]);
    // the two-direction variables set both; the per-direction ones win over them
    expect(
      stagingFromEnvironment({
        CUDA_TS_STAGING_MIN_BYTES: '65536',
        CUDA_TS_STAGING_CHUNK_BYTES: '4194304',
        CUDA_TS_STAGING_CHUNKS: '4',
        CUDA_TS_STAGING_THREADS: '3',
      }),
    ).toEqual({ upload: both(65536, 3), download: both(65536, 3), chunkBytes: 4194304, maxChunks: 4, chunksPerCopy: STAGING_DEFAULTS.chunksPerCopy });
    expect(
      stagingFromEnvironment({
        CUDA_TS_STAGING_MIN_BYTES: '65536',
        CUDA_TS_STAGING_THREADS: '1',
        CUDA_TS_STAGING_DOWNLOAD_MIN_BYTES: 'off',
        CUDA_TS_STAGING_UPLOAD_THREADS: '6',
      }),
    ).toEqual({
      upload: both(65536, 6),
      download: both(Infinity, 1),
      chunkBytes: STAGING_DEFAULTS.chunkBytes,
      maxChunks: STAGING_DEFAULTS.maxChunks,
      chunksPerCopy: STAGING_DEFAULTS.chunksPerCopy,
    });
    expect(stagingFromEnvironment({ CUDA_TS_STAGING_UPLOAD_MIN_BYTES: '1048576', CUDA_TS_STAGING_DOWNLOAD_THREADS: '0' })).toEqual({
      upload: both(1 << 20, STAGING_DEFAULTS.upload.hostThreads),
      download: both(STAGING_DEFAULTS.download.minBytes, 0),
      chunkBytes: STAGING_DEFAULTS.chunkBytes,
      maxChunks: STAGING_DEFAULTS.maxChunks,
      chunksPerCopy: STAGING_DEFAULTS.chunksPerCopy,
    });
    expect(() => stagingFromEnvironment({ CUDA_TS_STAGING_UPLOAD_THREADS: 'off' })).toThrow(
      /CUDA_TS_STAGING_UPLOAD_THREADS must be a non-negative integer, got 'off'/,
    );
    expect(() => stagingFromEnvironment({ CUDA_TS_STAGING_DOWNLOAD_MIN_BYTES: '-1' })).toThrow(
      /CUDA_TS_STAGING_DOWNLOAD_MIN_BYTES must be a non-negative integer or 'off', got '-1'/,
    );
    expect(() => stagingFromEnvironment({ CUDA_TS_STAGING_DOWNLOAD_THREADS: '9' })).toThrow(/download.hostThreads must be an integer from 0 to 8, got 9/);
    expect(() => configureStaging({ hostThreads: 9 })).toThrow(/configureStaging: upload.hostThreads must be an integer from 0 to 8, got 9/);
    expect(() => configureStaging({ download: { minBytes: NaN } })).toThrow(
      /configureStaging: download.minBytes must be a non-negative integer or Infinity, got NaN/,
    );
    expect(() => configureStaging({ upload: { min: 1 } as never })).toThrow(
      /configureStaging: upload: unknown setting 'min' \(expected minBytes, hostThreads\)/,
    );
    expect(() => configureStaging({ upload: 5 as never })).toThrow(/configureStaging: upload must be an object, got 5/);
    // a failed change changes nothing; a per-direction change wins over the two-direction one
    expect(stagingSettings()).toEqual({ upload: both(0, T), download: both(0, U), chunkBytes: 1000, maxChunks: 2, chunksPerCopy: 2 });
    const before = configureStaging({ minBytes: 7, download: { minBytes: 9 } });
    try {
      expect(stagingSettings()).toEqual({ upload: both(7, T), download: both(9, U), chunkBytes: 1000, maxChunks: 2, chunksPerCopy: 2 });
    } finally {
      configureStaging(before);
    }
    expect(stagingSettings()).toEqual(before);
    expect(() => stagingFromEnvironment({ CUDA_TS_STAGING_CHUNK_BYTES: '8M' })).toThrow(/CUDA_TS_STAGING_CHUNK_BYTES must be a non-negative integer, got '8M'/);
    expect(() => stagingFromEnvironment({ CUDA_TS_STAGING_CHUNKS: '1' })).toThrow(/maxChunks must be an integer from 2 to 64/);
  });

  test('a new chunk size replaces the idle chunks of the old one', () => {
    const buf = DeviceBuffer.alloc(3000, { context: ctx });
    buf.copyFrom(pattern(3000));
    expect(stagingStats(ctx)).toMatchObject({ chunks: 2, bytes: 2000 });
    const before = configureStaging({ chunkBytes: 1500 });
    try {
      buf.copyFrom(pattern(3000, 4));
      expect(stagingStats(ctx)).toMatchObject({ chunks: 2, bytes: 3000 });
      expect(dev(buf.ptr, 3000)).toEqual(pattern(3000, 4));
    } finally {
      configureStaging(before);
    }
    buf.close();
  });
});

describe('several streams', () => {
  test('a copy on another stream waits for the chunks still in flight (bound 2): neither copy is corrupted', () => {
    const s1 = Stream.create({ context: ctx });
    const s2 = Stream.create({ context: ctx });
    const a = DeviceBuffer.alloc(2500, { context: ctx });
    const b = DeviceBuffer.alloc(2500, { context: ctx });
    a.copyFrom(pattern(2500, 1), { stream: s1 });
    expect(queue(s1.handle).length).toBeGreaterThan(0); // its last DMAs are still queued
    expect(stagingStats(ctx)).toMatchObject({ chunks: 2, pending: 2, leased: 0 });
    b.copyFrom(pattern(2500, 2), { stream: s2 });
    // and device to host on s2 into chunks s1 might still read
    a.copyFrom(pattern(2500, 3), { stream: s1 });
    const back = b.copyTo(new Uint8Array(2500), { stream: s2 });
    expect(back).toEqual(pattern(2500, 2));
    s1.synchronize();
    expect(dev(a.ptr, 2500)).toEqual(pattern(2500, 3));
    expect(stagingStats(ctx).chunks).toBe(2);
    for (const x of [a, b, s1, s2]) x.close();
  });

  test('a one-chunk synchronous copy leases a chunk in flight on a non-blocking stream as its spare: that chunk stays pending, so the next copy cannot overwrite it before its DMA ran', () => {
    // found by the buffer model on the H200 (4 operations): the default stream's sync marked both chunks idle
    const nb = Stream.create({ context: ctx, nonBlocking: true });
    const a = DeviceBuffer.alloc(3000, { context: ctx });
    a.copyFrom(pattern(600, 1), { stream: nb }); // chunk A in flight on nb (its queue has not run)
    a.copyFrom(pattern(400, 2), { offset: 1000 }); // synchronous, one chunk (B), A leased as the spare
    expect(queue(nb.handle).length).toBeGreaterThan(0); // the default stream did not wait for nb
    const back = a.copyTo(new Uint8Array(500), { offset: 2000 }); // synchronous again: must not reuse A before nb read it
    expect(back.length).toBe(500);
    nb.synchronize();
    expect(dev(a.ptr, 600)).toEqual(pattern(600, 1));
    expect(dev(a.ptr + 1000, 400)).toEqual(pattern(400, 2));
    for (const x of [a, nb]) x.close();
  });

  test('chunks in flight on two other streams: a copy back on a third waits for both before the DMA writes them', () => {
    const [s1, s2, s3] = [0, 1, 2].map(() => Stream.create({ context: ctx }));
    const a = DeviceBuffer.alloc(900, { context: ctx });
    const b = DeviceBuffer.alloc(900, { context: ctx });
    const c = DeviceBuffer.alloc(2000, { context: ctx });
    dev(c.ptr, 2000).set(pattern(2000, 30));
    a.copyFrom(pattern(900, 10), { stream: s1 }); // one chunk, in flight on s1
    b.copyFrom(pattern(900, 20), { stream: s2 }); // the other, in flight on s2
    expect(stagingStats(ctx)).toMatchObject({ chunks: 2, pending: 2 });
    expect(c.copyTo(new Uint8Array(2000), { stream: s3 })).toEqual(pattern(2000, 30));
    s1.synchronize();
    s2.synchronize();
    expect(dev(a.ptr, 900)).toEqual(pattern(900, 10));
    expect(dev(b.ptr, 900)).toEqual(pattern(900, 20));
    for (const x of [a, b, c, s1, s2, s3]) x.close();
  });

  test('with room in the bound, a second stream gets chunks of its own and leaves the first stream queued', () => {
    const before = configureStaging({ maxChunks: 4 });
    try {
      const s1 = Stream.create({ context: ctx });
      const s2 = Stream.create({ context: ctx });
      const a = DeviceBuffer.alloc(2000, { context: ctx });
      const b = DeviceBuffer.alloc(2000, { context: ctx });
      a.copyFrom(pattern(2000, 5), { stream: s1 });
      const queued = queue(s1.handle).length;
      b.copyFrom(pattern(2000, 6), { stream: s2 });
      expect(queue(s1.handle).length).toBe(queued); // s2's copy did not wait for s1
      expect(stagingStats(ctx)).toMatchObject({ chunks: 4, pending: 4 });
      s2.synchronize();
      s1.synchronize();
      expect(dev(a.ptr, 2000)).toEqual(pattern(2000, 5));
      expect(dev(b.ptr, 2000)).toEqual(pattern(2000, 6));
      // idle chunks are taken first; the pool never grows past the bound
      a.copyFrom(pattern(2000, 7), { stream: s1 });
      b.copyFrom(pattern(2000, 8), { stream: s2 });
      a.copyFrom(pattern(2000, 9), { stream: s1 });
      expect(stagingStats(ctx).chunks).toBe(4);
      s1.synchronize();
      s2.synchronize();
      expect(dev(a.ptr, 2000)).toEqual(pattern(2000, 9));
      expect(dev(b.ptr, 2000)).toEqual(pattern(2000, 8));
      // a lowered bound frees the idle chunks past it at the next copy
      configureStaging({ maxChunks: 2 });
      a.copyFrom(pattern(2000, 10));
      expect(stagingStats(ctx).chunks).toBe(2);
      expect(dev(a.ptr, 2000)).toEqual(pattern(2000, 10));
      for (const x of [a, b, s1, s2]) x.close();
    } finally {
      trimStaging(ctx);
      configureStaging(before);
    }
    expect(stagingStats(ctx).chunks).toBe(0);
  });

  test('a synchronous copy after stream-ordered work on the same memory sees it (the default stream orders it)', () => {
    const s = Stream.create({ context: ctx });
    const buf = DeviceBuffer.alloc(2200, { context: ctx });
    buf.copyFrom(pattern(2200, 1), { stream: s });
    drv.call(ctx, 'cuMemsetD8Async', buf.ptr + 100, 0xab, 10, s.handle);
    const back = buf.copyTo(new Uint8Array(2200));
    const want = pattern(2200, 1);
    want.fill(0xab, 100, 110);
    expect(back).toEqual(want);
    s.close();
    buf.close();
  });
});

describe('errors mid-way leave no chunk leased and the pool usable', () => {
  const check = (buf: DeviceBuffer, seed: number) => {
    expect(stagingStats(ctx).leased).toBe(0);
    buf.copyFrom(pattern(3500, seed));
    expect(buf.copyTo(new Uint8Array(3500))).toEqual(pattern(3500, seed));
  };

  test('a failing DMA of chunk 2 (host to device), and of chunk 1 (device to host)', () => {
    const s = Stream.create({ context: ctx });
    const buf = DeviceBuffer.alloc(3500, { context: ctx });
    failures.set('cuMemcpyHtoDAsync', { after: 2, status: 1 });
    expect(() => buf.copyFrom(pattern(3500), { stream: s })).toThrow(/cuMemcpyHtoDAsync/);
    check(buf, 2);
    failures.set('cuMemcpyDtoHAsync', { after: 1, status: 1 });
    expect(() => buf.copyTo(new Uint8Array(3500))).toThrow(/cuMemcpyDtoHAsync/);
    check(buf, 3);
    s.close();
    buf.close();
  });

  test('an event that cannot be recorded after its DMA: the stream is waited for before the chunk is reused', () => {
    const s = Stream.create({ context: ctx });
    const buf = DeviceBuffer.alloc(3500, { context: ctx });
    failures.set('cuEventRecord', { after: 1, status: 1 });
    expect(() => buf.copyFrom(pattern(3500, 4), { stream: s })).toThrow(/cuEventRecord/);
    expect(driver.calls.filter(([n, a]) => n === 'cuStreamSynchronize' && a[0] === s.handle)).toHaveLength(1);
    expect(dev(buf.ptr, 2000)).toEqual(pattern(3500, 4).subarray(0, 2000)); // what was enqueued ran
    check(buf, 5);
    expect(stagingStats(ctx).chunks).toBe(2);
    s.close();
    buf.close();
  });

  test('when even that wait fails, the chunk leaves the pool and a new one takes its place', () => {
    const s = Stream.create({ context: ctx });
    const buf = DeviceBuffer.alloc(3500, { context: ctx });
    failures.set('cuEventRecord', { after: 0, status: 1 });
    failures.set('cuStreamSynchronize', { after: 0, status: 1 });
    expect(() => buf.copyFrom(pattern(3500, 6), { stream: s })).toThrow(/cuEventRecord/);
    expect(stagingStats(ctx).chunks).toBe(1);
    check(buf, 7);
    expect(stagingStats(ctx).chunks).toBe(2);
    s.close();
    buf.close();
  });

  test('no pinned memory: the copy goes to the driver directly', () => {
    trimStaging(ctx);
    const buf = DeviceBuffer.alloc(3500, { context: ctx });
    failures.set('cuMemHostAlloc', { after: 0, status: drv.CUresult.CUDA_ERROR_OUT_OF_MEMORY });
    buf.copyFrom(pattern(3500, 8));
    expect(count('cuMemcpyHtoD')).toBe(1);
    expect(dev(buf.ptr, 3500)).toEqual(pattern(3500, 8));
    check(buf, 9);
    buf.close();
  });
});

describe('the pool lives and dies with its context', () => {
  test('dropStaging frees every chunk (events too), after waiting for DMAs in flight', () => {
    const s = Stream.create({ context: ctx });
    const buf = DeviceBuffer.alloc(2000, { context: ctx });
    buf.copyFrom(pattern(2000, 1), { stream: s });
    const chunks = stagingStats(ctx).chunks;
    expect(chunks).toBe(2);
    const hostBefore = hostBlocks.size;
    driver.calls.length = 0;
    dropStaging(ctx);
    expect(hostBlocks.size).toBe(hostBefore - 2);
    expect(count('cuEventDestroy')).toBe(2);
    expect(count('cuEventSynchronize')).toBe(2);
    expect(dev(buf.ptr, 2000)).toEqual(pattern(2000, 1));
    expect(stagingStats(ctx).chunks).toBe(0);
    s.close();
    buf.close();
  });

  test('closing a created context frees its chunks before cuCtxDestroy', () => {
    const created = Context.create(0);
    const buf = DeviceBuffer.alloc(1500, { context: created });
    buf.copyFrom(pattern(1500));
    expect(stagingStats(created).chunks).toBe(2);
    buf.close();
    driver.calls.length = 0;
    created.close();
    const order = names().filter((n) => n === 'cuMemFreeHost' || n === 'cuCtxDestroy');
    expect(order).toEqual(['cuMemFreeHost', 'cuMemFreeHost', 'cuCtxDestroy']);
    expect(stagingStats(created).chunks).toBe(0);
  });
});
