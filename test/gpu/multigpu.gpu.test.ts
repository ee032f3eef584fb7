// Several GPUs: peer access and copies, NCCL communicators (one process for all devices, one worker
// thread or process per device), groups, abort/close, bad input. Cases that need two GPUs skip with
// their reason on one; the one-GPU cases (self peer, NCCL on one device) run wherever a GPU does.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import * as nccl from '../../generated/13.0/nccl';
import {
  Communicator,
  Context,
  CudaError,
  Device,
  DeviceBuffer,
  NcclUnavailableError,
  Stream,
  canAccessPeer,
  copyPeer,
  disablePeerAccess,
  enablePeerAccess,
  onDevice,
} from '../../src';
import { loadLibrary } from '../../support';
import { TS_RUNNER, describeGpu, noGpuReason } from './gpu-env';

const ROOT = resolve(__dirname, '../..');
// Never multicast (NVLS): the lent machines must not use it, and it is not what these tests cover.
process.env.NCCL_NVLS_ENABLE = '0';

const deviceCount = noGpuReason ? 0 : Device.count();
const noNcclReason = ((): string | undefined => {
  try {
    loadLibrary(nccl.binder.spec);
    return undefined;
  } catch (e) {
    return `NCCL (libnccl.so.2) not found: ${(e as Error).message.split('\n')[0]}`;
  }
})();

/** `describe` that needs `n` GPUs (and NCCL when `needsNccl`): otherwise skipped, the reason in its title. */
function describeWith(n: number, needsNccl: boolean, name: string, fn: () => void): void {
  const reason = deviceCount < n ? `needs ${n}+ GPUs, this machine has ${deviceCount}` : needsNccl ? noNcclReason : undefined;
  if (reason) describe.skip(`${name} — skipped: ${reason}`, fn);
  else describe(name, fn);
}

function pattern(n: number, seed: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => ((i * 7 + seed) % 1000) - 500);
}

/** Index of the first element where `got` differs from `want(i)`, or -1. */
function firstMismatch(got: ArrayLike<number>, want: (i: number) => number): number {
  for (let i = 0; i < got.length; i++) if (got[i] !== want(i)) return i;
  return -1;
}

/** One buffer per communicator holding `fill(rank)`, on that communicator's device. */
function buffersFor(comms: Communicator[], n: number, fill: (rank: number, i: number) => number): DeviceBuffer[] {
  return comms.map((c) =>
    DeviceBuffer.from(
      Float32Array.from({ length: n }, (_, i) => fill(c.rank, i)),
      { context: c.context },
    ),
  );
}

function closeAll(...lists: { close(): void }[][]): void {
  for (const list of lists) for (const r of list) r.close();
}

describeGpu('multi-GPU', () => {
  describe('one GPU: self peer, per-device scope', () => {
    test('a device reaches its own memory; enable/disable on itself are no-ops', () => {
      const d0 = Device.get(0);
      expect(canAccessPeer(d0, d0)).toBe(true);
      expect(d0.canAccessPeer(d0)).toBe(true);
      expect(d0.enablePeerAccess(d0)).toBe(false);
      expect(enablePeerAccess(d0, d0)).toBe(false);
      expect(d0.disablePeerAccess(d0)).toBe(false);
      expect(disablePeerAccess(d0, d0)).toBe(false);
      expect(() => canAccessPeer(d0, 0 as never)).toThrow(/canAccessPeer: b must be a Device/);
    });

    test('copyPeer within one device, sync and on a stream, with offsets; bounds checked', () => {
      const d0 = Device.get(0);
      const n = 1 << 20;
      const host = pattern(n, 3);
      const src = DeviceBuffer.from(host, { context: d0.primaryContext() });
      const dst = DeviceBuffer.alloc(4 * n, { context: d0.primaryContext() });
      dst.memset(0);
      copyPeer(dst, src);
      expect(firstMismatch(dst.toArray(Float32Array), (i) => host[i])).toBe(-1);
      const stream = Stream.create({ context: d0.primaryContext() });
      dst.memset(0);
      copyPeer(dst, src, { stream, srcOffset: 4 * 10, dstOffset: 4 * 20, bytes: 4 * 100 });
      stream.synchronize();
      const out = dst.toArray(Float32Array);
      expect(out[19]).toBe(0);
      expect(firstMismatch(out.subarray(20, 120), (i) => host[10 + i])).toBe(-1);
      expect(out[120]).toBe(0);
      expect(() => copyPeer(dst, src, { srcOffset: 8 })).not.toThrow();
      expect(() => copyPeer(dst, src, { dstOffset: 8 })).toThrow(RangeError);
      src.close();
      expect(() => copyPeer(dst, src)).toThrow(/closed/);
      closeAll([dst, stream]);
    });

    test('onDevice makes the device current and restores the previous context', () => {
      const d0 = Device.get(0);
      const before = d0.setCurrent();
      const buf = onDevice(d0, () => DeviceBuffer.alloc(64));
      expect(buf.context).toBe(d0.primaryContext());
      expect(Context.current()).toBe(before);
      expect(() =>
        onDevice(d0, () => {
          throw new Error('inside');
        }),
      ).toThrow('inside');
      expect(Context.current()).toBe(before);
      buf.close();
    });
  });

  describeWith(1, true, 'NCCL on one GPU', () => {
    test('initAll([device 0]): allReduce, broadcast, reduceScatter, allGather, group, close', () => {
      const [comm] = Communicator.initAll([Device.get(0)]);
      expect([comm.rank, comm.count, comm.device.ordinal]).toEqual([0, 1, 0]);
      const n = 4096;
      const host = pattern(n, 1);
      const a = DeviceBuffer.from(host, { context: comm.context });
      const b = DeviceBuffer.alloc(4 * n, { context: comm.context });
      const stream = Stream.create({ context: comm.context });
      comm.allReduce(a, b, { dtype: 'f32', stream });
      stream.synchronize();
      expect(firstMismatch(b.toArray(Float32Array), (i) => host[i])).toBe(-1);
      b.memset(0);
      comm.broadcast(a, b, { dtype: 'f32', root: 0, stream });
      comm.reduceScatter(a, b, { dtype: 'f32', op: 'max', stream, count: n });
      comm.allGather(a, b, { dtype: 'i32', stream }); // bytes travel unchanged whatever the type
      Communicator.group(() => {
        comm.allReduce(a, { dtype: 'f32', op: 'prod', stream });
      });
      stream.synchronize();
      expect(firstMismatch(b.toArray(Float32Array), (i) => host[i])).toBe(-1);
      expect(firstMismatch(a.toArray(Float32Array), (i) => host[i])).toBe(-1);
      expect(comm.asyncError()).toBeUndefined();
      // bad input is refused before NCCL sees it
      const small = DeviceBuffer.alloc(8, { context: comm.context });
      expect(() => comm.allReduce(a, small, { dtype: 'f32' })).toThrow(/recv buffer holds 8 bytes/);
      expect(() => comm.broadcast(a, { dtype: 'f32', root: 1 })).toThrow(RangeError);
      expect(() => comm.allGather(a, b, { dtype: 'complex' as never })).toThrow(TypeError);
      comm.close();
      comm.close();
      expect(comm.closed).toBe(true);
      expect(() => comm.allReduce(a, { dtype: 'f32' })).toThrow('Communicator is closed');
      closeAll([a, b, small, stream]);
    });

    test('uniqueId is 128 bytes and initRank with one rank works; abort is idempotent', () => {
      const id = Communicator.uniqueId();
      expect(id).toBeInstanceOf(Uint8Array);
      expect(id.byteLength).toBe(128);
      expect(id.some((x) => x !== 0)).toBe(true);
      const comm = Communicator.initRank(1, id, 0, 0);
      expect([comm.rank, comm.count]).toEqual([0, 1]);
      expect(comm.device).toBe(Device.get(0));
      const buf = DeviceBuffer.from(new Int32Array([1, 2, 3, 4]), { context: comm.context });
      comm.allReduce(buf, { dtype: 'i32', op: 'sum' });
      comm.context.synchronize();
      expect(Array.from(buf.toArray(Int32Array))).toEqual([1, 2, 3, 4]);
      comm.abort();
      comm.abort();
      comm.close();
      expect(() => comm.allReduce(buf, { dtype: 'i32' })).toThrow('Communicator is closed');
      buf.close();
    });

    test('NcclUnavailableError is exported for callers that handle a missing NCCL', () => {
      expect(NcclUnavailableError.prototype).toBeInstanceOf(CudaError);
    });
  });

  describeWith(2, false, 'two or more GPUs: peer access and peer copies', () => {
    const devices = (): Device[] => Array.from({ length: deviceCount }, (_, i) => Device.get(i));

    test('canAccessPeer agrees with the driver; enable/disable are idempotent', () => {
      const [d0, d1] = devices();
      const can = canAccessPeer(d0, d1);
      expect(can).toBe(d0.canAccessPeer(d1));
      console.log(`peer access 0→1: ${can}, 1→0: ${canAccessPeer(d1, d0)}`);
      if (!can) {
        expect(() => enablePeerAccess(d0, d1)).toThrow(/CUDA_ERROR_PEER_ACCESS_UNSUPPORTED/);
        return;
      }
      disablePeerAccess(d0, d1); // a known state whatever earlier suites did
      expect(d0.enablePeerAccess(d1)).toBe(true);
      expect(d0.enablePeerAccess(d1)).toBe(false);
      expect(d0.disablePeerAccess(d1)).toBe(true);
      expect(d0.disablePeerAccess(d1)).toBe(false);
      for (const a of devices()) for (const b of devices()) if (a !== b && canAccessPeer(a, b)) enablePeerAccess(a, b);
    });

    test('per-device buffers and streams from one process', () => {
      const [d0, d1] = devices();
      const b0 = onDevice(d0, () => DeviceBuffer.alloc(1024));
      const b1 = onDevice(d1, () => DeviceBuffer.alloc(1024));
      const s1 = Stream.create({ context: d1.primaryContext() });
      expect([b0.context.device, b1.context.device, s1.context?.device]).toEqual([0, 1, 1]);
      b1.memset(7, { stream: s1 });
      s1.synchronize();
      expect(b1.toArray(Uint8Array).every((x) => x === 7)).toBe(true);
      closeAll([b0, b1, s1]);
    });

    test("copyPeer between devices: synchronous, async on either device's stream, offsets, both directions", () => {
      const [d0, d1] = devices();
      const n = 4 << 20; // 16 MiB
      const host = pattern(n, 11);
      const src = DeviceBuffer.from(host, { context: d0.primaryContext() });
      const dst = DeviceBuffer.alloc(4 * n, { context: d1.primaryContext() });
      dst.memset(0);
      d1.primaryContext().synchronize(); // a memset of device memory is asynchronous to the host
      copyPeer(dst, src);
      expect(firstMismatch(dst.toArray(Float32Array), (i) => host[i])).toBe(-1);

      const s0 = Stream.create({ context: d0.primaryContext() });
      const s1 = Stream.create({ context: d1.primaryContext() });
      const back = DeviceBuffer.alloc(4 * n, { context: d0.primaryContext() });
      back.memset(0);
      d0.primaryContext().synchronize();
      copyPeer(back, dst, { stream: s1 }); // device 1 → device 0 on device 1's stream
      s1.synchronize();
      expect(firstMismatch(back.toArray(Float32Array), (i) => host[i])).toBe(-1);

      dst.memset(0);
      d1.primaryContext().synchronize(); // else the copy on device 0's stream may run before it
      copyPeer(dst, src, { stream: s0, srcOffset: 4 * 1000, dstOffset: 4 * 5, bytes: 4 * 4096 }); // on the source's stream
      s0.synchronize();
      const out = dst.toArray(Float32Array);
      expect(out[4]).toBe(0);
      expect(firstMismatch(out.subarray(5, 5 + 4096), (i) => host[1000 + i])).toBe(-1);
      expect(out[5 + 4096]).toBe(0);

      expect(() => copyPeer(dst, src, { dstOffset: 4 })).toThrow(/copyPeer: destination bytes \[4, \d+\) are out of bounds/);
      expect(() => copyPeer(dst, src, { bytes: 4 * n + 1 })).toThrow(RangeError);
      closeAll([src, dst, back, s0, s1]);
    });
  });

  describeWith(2, true, 'two or more GPUs: NCCL communicators', () => {
    let comms: Communicator[] = [];
    let streams: Stream[] = [];
    const n = 1 << 16;

    beforeAll(() => {
      comms = Communicator.initAll();
      streams = comms.map((c) => Stream.create({ context: c.context }));
    });
    afterAll(() => closeAll(streams, comms));

    const sync = (): void => streams.forEach((s) => s.synchronize());

    test('initAll: one communicator per device, rank i on device i', () => {
      expect(comms).toHaveLength(deviceCount);
      comms.forEach((c, i) => expect([c.rank, c.count, c.device.ordinal, c.context]).toEqual([i, deviceCount, i, Device.get(i).primaryContext()]));
    });

    test('allReduce sum, max and avg (grouped: one thread drives every device)', () => {
      const r = deviceCount;
      const send = buffersFor(comms, n, (rank, i) => rank + 1 + (i % 3));
      const recv = comms.map((c) => DeviceBuffer.alloc(4 * n, { context: c.context }));
      const inPlace = buffersFor(comms, n, (rank) => rank * 10);
      Communicator.group(() => comms.forEach((c, k) => c.allReduce(send[k], recv[k], { dtype: 'f32', op: 'sum', stream: streams[k] })));
      Communicator.group(() => comms.forEach((c, k) => c.allReduce(inPlace[k], { dtype: 'f32', op: 'max', stream: streams[k] })));
      sync();
      const sum = (i: number): number => (r * (r + 1)) / 2 + r * (i % 3);
      for (const b of recv) expect(firstMismatch(b.toArray(Float32Array), sum)).toBe(-1);
      for (const b of inPlace) expect(firstMismatch(b.toArray(Float32Array), () => (r - 1) * 10)).toBe(-1);
      Communicator.group(() => comms.forEach((c, k) => c.allReduce(send[k], recv[k], { dtype: 'f32', op: 'avg', stream: streams[k] })));
      sync();
      for (const b of recv) expect(firstMismatch(b.toArray(Float32Array), (i) => sum(i) / r)).toBe(-1);
      closeAll(send, recv, inPlace);
    });

    test('broadcast from the last rank', () => {
      const root = deviceCount - 1;
      const host = pattern(n, 5);
      const bufs = buffersFor(comms, n, (rank, i) => (rank === root ? host[i] : -1));
      Communicator.group(() => comms.forEach((c, k) => c.broadcast(bufs[k], { dtype: 'f32', root, stream: streams[k] })));
      sync();
      for (const b of bufs) expect(firstMismatch(b.toArray(Float32Array), (i) => host[i])).toBe(-1);
      closeAll(bufs);
    });

    test('reduceScatter: rank k gets block k of the sum', () => {
      const r = deviceCount;
      const block = 1024;
      const send = buffersFor(comms, block * r, (rank, i) => rank + i);
      const recv = comms.map((c) => DeviceBuffer.alloc(4 * block, { context: c.context }));
      Communicator.group(() => comms.forEach((c, k) => c.reduceScatter(send[k], recv[k], { dtype: 'f32', stream: streams[k] })));
      sync();
      recv.forEach((b, k) => expect(firstMismatch(b.toArray(Float32Array), (i) => (r * (r - 1)) / 2 + r * (k * block + i))).toBe(-1));
      closeAll(send, recv);
    });

    test('allGather: blocks in rank order', () => {
      const r = deviceCount;
      const block = 1000;
      const send = buffersFor(comms, block, (rank, i) => rank * 100000 + i);
      const recv = comms.map((c) => DeviceBuffer.alloc(4 * block * r, { context: c.context }));
      Communicator.group(() => comms.forEach((c, k) => c.allGather(send[k], recv[k], { dtype: 'f32', stream: streams[k] })));
      sync();
      for (const b of recv) expect(firstMismatch(b.toArray(Float32Array), (i) => Math.floor(i / block) * 100000 + (i % block))).toBe(-1);
      closeAll(send, recv);
    });

    test('one group holding several collectives per communicator', () => {
      const r = deviceCount;
      const a = buffersFor(comms, n, (rank) => rank + 1);
      const g = comms.map((c) => DeviceBuffer.alloc(4 * r, { context: c.context }));
      const one = buffersFor(comms, 1, (rank) => rank);
      Communicator.group(() => {
        comms.forEach((c, k) => c.allReduce(a[k], { dtype: 'f32', stream: streams[k] }));
        comms.forEach((c, k) => c.allGather(one[k], g[k], { dtype: 'f32', stream: streams[k] }));
      });
      sync();
      for (const b of a) expect(firstMismatch(b.toArray(Float32Array), () => (r * (r + 1)) / 2)).toBe(-1);
      for (const b of g) expect(Array.from(b.toArray(Float32Array))).toEqual(Array.from({ length: r }, (_, i) => i));
      closeAll(a, g, one);
    });

    test('bad input: a buffer or stream of another device, sizes, closed buffers', () => {
      const onOne = DeviceBuffer.alloc(4 * n, { context: comms[1].context });
      const onZero = DeviceBuffer.alloc(4 * n, { context: comms[0].context });
      expect(() => comms[0].allReduce(onOne, { dtype: 'f32' })).toThrow(/send buffer is on device 1, this communicator on device 0/);
      expect(() => comms[0].allReduce(onZero, onOne, { dtype: 'f32' })).toThrow(TypeError);
      expect(() => comms[0].allReduce(onZero, { dtype: 'f32', stream: streams[1] })).toThrow(/the stream is on device 1/);
      expect(() => comms[0].reduceScatter(onZero, onZero, { dtype: 'f32' })).toThrow(/send buffer holds \d+ bytes, the call needs/);
      expect(() => comms[0].allGather(onZero, onZero, { dtype: 'f32' })).toThrow(/recv buffer holds \d+ bytes, the call needs/);
      onZero.close();
      expect(() => comms[0].allReduce(onZero, { dtype: 'f32' })).toThrow(/closed/);
      onOne.close();
    });

    test('initRank for every device inside one group (one process, one thread)', () => {
      const id = Communicator.uniqueId();
      const ranks = Communicator.group(() => comms.map((c) => Communicator.initRank(deviceCount, id, c.rank, c.device)));
      const bufs = buffersFor(ranks, 256, (rank) => 2 ** rank);
      Communicator.group(() => ranks.forEach((c, k) => c.allReduce(bufs[k], { dtype: 'f32', stream: streams[k] })));
      sync();
      for (const b of bufs) expect(firstMismatch(b.toArray(Float32Array), () => 2 ** deviceCount - 1)).toBe(-1);
      closeAll(bufs, ranks);
    });

    test('abort every communicator of a set; use after abort throws', () => {
      const set = Communicator.initAll();
      for (const c of set) c.abort();
      for (const c of set) {
        expect(c.closed).toBe(true);
        c.abort();
        c.close();
        expect(() => c.asyncError()).toThrow('Communicator is closed');
      }
    });
  });

  describeWith(2, true, 'two or more GPUs: one rank per worker thread / per process', () => {
    // The rank's side: join, all-reduce (rank+1) everywhere, check, report. CommonJS; tsx compiles src.
    const rankCode = (get: string, report: string): string => `
      const cuda = require(${JSON.stringify(resolve(ROOT, 'src/index.ts'))});
      const { nranks, rank, id } = ${get};
      const device = cuda.Device.get(rank);
      const comm = cuda.Communicator.initRank(nranks, id, rank, device);
      const stream = cuda.Stream.create({ context: comm.context });
      const n = 1 << 20;
      const buf = cuda.DeviceBuffer.from(new Float32Array(n).fill(rank + 1), { context: comm.context });
      comm.allReduce(buf, { dtype: 'f32', op: 'sum', stream });
      stream.synchronize();
      const out = buf.toArray(Float32Array);
      const want = (nranks * (nranks + 1)) / 2;
      const bad = out.filter((x) => x !== want).length;
      const result = { rank, device: comm.device.ordinal, count: comm.count, first: out[0], bad };
      buf.close(); stream.close(); comm.close();
      ${report};`;

    // a rank that hangs (NCCL waits for every rank) fails its test before jest's own timeout
    const RANK_TIMEOUT_MS = 90_000;

    test('worker_threads: the unique id is posted to one worker per device', async () => {
      const nranks = deviceCount;
      const id = Communicator.uniqueId();
      const code = `
        require(${JSON.stringify(require.resolve('tsx/cjs'))});
        const { parentPort, workerData } = require('node:worker_threads');
        parentPort.once('message', (msg) => {
          try {
            ${rankCode('{ ...workerData, id: msg.id }', 'parentPort.postMessage({ ok: true, result })')}
          } catch (e) {
            parentPort.postMessage({ ok: false, error: String(e && e.stack || e) });
          }
        });`;
      const results = await Promise.all(
        Array.from(
          { length: nranks },
          (_, rank) =>
            new Promise<{ ok: boolean; result?: Record<string, number>; error?: string }>((done, fail) => {
              const w = new Worker(code, { eval: true, workerData: { nranks, rank }, env: { ...process.env, NCCL_NVLS_ENABLE: '0' } });
              const timer = setTimeout(() => {
                fail(new Error(`rank ${rank}: no answer after ${RANK_TIMEOUT_MS} ms`));
                void w.terminate();
              }, RANK_TIMEOUT_MS);
              w.once('message', (m) => {
                clearTimeout(timer);
                done(m);
                void w.terminate();
              });
              w.once('error', (e) => {
                clearTimeout(timer);
                fail(e);
              });
              w.postMessage({ id }); // a Uint8Array is structured-cloned
            }),
        ),
      );
      for (const [rank, r] of results.entries()) {
        expect(r.error).toBeUndefined();
        expect(r.result).toEqual({ rank, device: rank, count: nranks, first: (nranks * (nranks + 1)) / 2, bad: 0 });
      }
    }, 150_000);

    test('child processes: the unique id travels as hex on the command line', async () => {
      const nranks = deviceCount;
      const hex = Buffer.from(Communicator.uniqueId()).toString('hex');
      const code = rankCode(
        `{ nranks: ${nranks}, rank: Number(process.env.CUDA_TS_TEST_RANK), id: ${JSON.stringify(hex)} }`,
        'console.log(JSON.stringify(result))',
      );
      const runs = await Promise.all(
        Array.from(
          { length: nranks },
          (_, rank) =>
            new Promise<{ status: number | null; out: string; err: string }>((done) => {
              const env = { ...process.env, NCCL_NVLS_ENABLE: '0', CUDA_TS_TEST_RANK: String(rank) };
              // a file run through scripts/run-ts.cjs: Node, Bun and Deno alike (Deno takes no `--require tsx/cjs -e`)
              const file = join(mkdtempSync(join(tmpdir(), 'cuda-ts-rank-')), 'rank.cjs');
              writeFileSync(file, code);
              const p = spawn(process.execPath, [TS_RUNNER, file], { cwd: ROOT, env });
              let out = '';
              let err = '';
              p.stdout.on('data', (d: Buffer) => (out += d));
              p.stderr.on('data', (d: Buffer) => (err += d));
              const timer = setTimeout(() => p.kill('SIGKILL'), RANK_TIMEOUT_MS);
              p.on('close', (status) => {
                clearTimeout(timer);
                done({ status, out, err });
              });
            }),
        ),
      );
      for (const [rank, r] of runs.entries()) {
        expect({ rank, status: r.status, err: r.status === 0 ? '' : r.err }).toEqual({ rank, status: 0, err: '' });
        const line =
          r.out
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .pop() ?? '{}'; // NCCL may print too
        expect(JSON.parse(line)).toEqual({ rank, device: rank, count: nranks, first: (nranks * (nranks + 1)) / 2, bad: 0 });
      }
    }, 150_000);
  });
});
