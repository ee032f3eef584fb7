// Streams and events handed to worker threads by descriptor (src/await/share.ts, Stream/Event
// .descriptor and .fromDescriptor), without a GPU: the descriptor is plain data that survives
// postMessage to a real worker, is refused from another process or of another kind before any driver
// call, and what a thread opens from it owns nothing (the owner destroys the handle, once).
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { Context } from '../src/context';
import { Stream } from '../src/stream';
import { Event } from '../src/event';
import { checkDescriptor } from '../src/await/share';
import { fakeDriver, out, FAKE_CONTEXT_HANDLE } from './helpers/fake-driver';

function fakes(): ReturnType<typeof fakeDriver> {
  let next = 0x9000;
  const ctxStandIn = { handle: FAKE_CONTEXT_HANDLE } as Context;
  return fakeDriver(ctxStandIn, {
    cuInit: () => 0,
    cuDeviceGetCount: (o: Int32Array) => ((o[0] = 1), 0),
    cuDeviceGet: (o: Int32Array, n: number) => ((o[0] = n), 0),
    cuDevicePrimaryCtxRetain: (o: BigUint64Array) => out(o, FAKE_CONTEXT_HANDLE),
    cuDevicePrimaryCtxRelease: () => 0,
    cuStreamCreateWithPriority: (o: BigUint64Array) => out(o, (next += 0x10)),
    cuStreamDestroy: () => 0,
    cuEventCreate: (o: BigUint64Array) => out(o, (next += 0x10)),
    cuEventDestroy: () => 0,
  });
}

describe('descriptors for worker threads', () => {
  test('a stream and an event: described, cloned, opened again, and destroyed once by their owner', () => {
    const f = fakes();
    try {
      const ctx = Context.primary(0);
      const s = Stream.create({ context: ctx });
      const ev = Event.create({ context: ctx, timing: false });
      const sd = structuredClone(s.descriptor());
      const ed = structuredClone(ev.descriptor());
      expect(sd).toEqual({ kind: 'cuda-ts/stream', pid: process.pid, handle: s.handle, device: 0 });
      expect(ed).toEqual({ kind: 'cuda-ts/event', pid: process.pid, handle: ev.handle, device: 0, flags: ev.flags });
      const s2 = Stream.fromDescriptor(sd);
      const e2 = Event.fromDescriptor(ed);
      expect([s2.handle, s2.owned, e2.handle, e2.flags]).toEqual([s.handle, false, ev.handle, ev.flags]);
      s2.close();
      e2.close();
      expect(f.calls.filter(([n]) => n === 'cuStreamDestroy' || n === 'cuEventDestroy')).toEqual([]);
      s.close();
      ev.close();
      expect(f.calls.filter(([n]) => n === 'cuStreamDestroy' || n === 'cuEventDestroy').map(([n]) => n)).toEqual(['cuStreamDestroy', 'cuEventDestroy']);
      ctx.close();
    } finally {
      f.restore();
    }
  });

  test('refused before any driver call: another process, another kind, a bad handle', () => {
    const f = fakes();
    try {
      const d = { kind: 'cuda-ts/stream', pid: process.pid, handle: 0x9010, device: 0 } as const;
      expect(() => Stream.fromDescriptor({ ...d, pid: process.pid + 1 })).toThrow(
        /Stream.fromDescriptor: the descriptor comes from process \d+; a handle is valid only in the threads of the process that made it/,
      );
      expect(() => Event.fromDescriptor(d as never)).toThrow(/Event.fromDescriptor: expected a descriptor of kind 'cuda-ts\/event'/);
      expect(() => Stream.fromDescriptor({ ...d, handle: -1 })).toThrow(RangeError);
      expect(() => Stream.fromDescriptor({ ...d, device: 1.5 })).toThrow(RangeError);
      expect(() => Stream.fromDescriptor(null as never)).toThrow(TypeError);
      expect(f.calls).toEqual([]);
    } finally {
      f.restore();
    }
  });

  test('a descriptor crosses postMessage to a real worker thread and is accepted there (same process)', async () => {
    const d = { kind: 'cuda-ts/stream', pid: process.pid, handle: 0x9010, device: 0 };
    const source = `
      require('tsx/cjs');
      const { parentPort } = require('node:worker_threads');
      const { checkDescriptor } = require(${JSON.stringify(join(__dirname, '../src/await/share.ts'))});
      parentPort.once('message', (d) => {
        try { parentPort.postMessage({ ok: checkDescriptor('worker', d, 'cuda-ts/stream') }); }
        catch (e) { parentPort.postMessage({ error: e.message }); }
      });`;
    const w = new Worker(source, { eval: true });
    try {
      const reply = new Promise<{ ok?: unknown; error?: string }>((res) => w.once('message', res));
      w.postMessage(d);
      expect(await reply).toEqual({ ok: d });
    } finally {
      await w.terminate();
    }
    expect(checkDescriptor('here', d, 'cuda-ts/stream')).toBe(d);
  }, 30_000);
});
