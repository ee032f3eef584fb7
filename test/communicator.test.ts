// Communicator and peer copies without a GPU or NCCL: argument validation happens before any native
// call, a missing libnccl says NCCL is needed, dtype/op mapping, and what a valid call hands to NCCL.
import { randomBytes } from 'node:crypto';
import * as nccl from '../generated/13.0/nccl';
import { StoreServer } from '../src/distributed/store';
import { Communicator, NCCL_DTYPES, NCCL_OPS, NcclUnavailableError, ncclDataType, ncclRedOp } from '../src/distributed/communicator';
import { Context } from '../src/context';
import { Device } from '../src/device';
import { DeviceBuffer } from '../src/memory/device-buffer';
import { copyPeer } from '../src/peer';
import * as streams from '../src/stream';
import { Stream } from '../src/stream';
import { CudaLibraryError, decodeRecord, encodeRecord, loadLibrary } from '../support';
import { driverlessContext } from './helpers/fake-driver';
import { SEALED, type Sealed } from '../src/sealed';

/** A Context stand-in that never calls the driver, one handle per device ordinal. */
const deviceContext = (device = 0): Context => driverlessContext(0x1000 + device, device);

/** A Device stand-in (passes instanceof) whose primary context is fake. */
function fakeDevice(ordinal: number): Device {
  const ctx = deviceContext(ordinal);
  const dev = Object.create(Device.prototype) as Device;
  Object.assign(dev, { ordinal, handle: ordinal, primaryContext: () => ctx, setCurrent: () => ctx });
  return dev;
}

class FakeBuffer extends DeviceBuffer {
  constructor(bytes: number, device = 0, address = 0x7f0000000000 + device * 0x10000000) {
    super(SEALED, 'DeviceBuffer', address, bytes, deviceContext(device), () => undefined);
  }
}

type CommCtor = new (seal: Sealed, handle: number, rank: number, count: number, device: Device, context: Context) => Communicator;
const made: Communicator[] = [];
/** A Communicator over a fake handle: collectives validate, then reach the spied NCCL functions. */
function fakeComm(rank = 0, count = 2, device = 0): Communicator {
  const dev = fakeDevice(device);
  const comm = new (Communicator as unknown as CommCtor)(SEALED, 0xc0de, rank, count, dev, dev.primaryContext());
  made.push(comm);
  return comm;
}

function ncclPresent(): boolean {
  try {
    loadLibrary(nccl.binder.spec);
    return true;
  } catch {
    return false;
  }
}
const haveNccl = ncclPresent();
const describeNoNccl = haveNccl ? describe.skip : describe;

afterEach(() => {
  // close what a test left open while NCCL is mocked, so no finalizer reaches for libnccl later
  jest.spyOn(nccl, 'ncclCommDestroy').mockImplementation(() => undefined);
  jest.spyOn(nccl, 'ncclCommAbort').mockImplementation(() => undefined);
  for (const c of made.splice(0)) c.close();
  jest.restoreAllMocks();
});

describe('dtype and op mapping', () => {
  test('every dtype maps to its ncclDataType_t and element size', () => {
    const D = nccl.ncclDataType_t;
    expect(ncclDataType('f32')).toEqual({ type: D.ncclFloat32, bytes: 4 });
    expect(ncclDataType('f64')).toEqual({ type: D.ncclFloat64, bytes: 8 });
    expect(ncclDataType('f16')).toEqual({ type: D.ncclFloat16, bytes: 2 });
    expect(ncclDataType('bf16')).toEqual({ type: D.ncclBfloat16, bytes: 2 });
    expect(ncclDataType('i8')).toEqual({ type: D.ncclInt8, bytes: 1 });
    expect(ncclDataType('u8')).toEqual({ type: D.ncclUint8, bytes: 1 });
    expect(ncclDataType('i32')).toEqual({ type: D.ncclInt32, bytes: 4 });
    expect(ncclDataType('u32')).toEqual({ type: D.ncclUint32, bytes: 4 });
    expect(ncclDataType('i64')).toEqual({ type: D.ncclInt64, bytes: 8 });
    expect(ncclDataType('u64')).toEqual({ type: D.ncclUint64, bytes: 8 });
    expect(ncclDataType('f8e4m3')).toEqual({ type: D.ncclFloat8e4m3, bytes: 1 });
    expect(ncclDataType('f8e5m2')).toEqual({ type: D.ncclFloat8e5m2, bytes: 1 });
    expect(Object.keys(NCCL_DTYPES)).toHaveLength(12);
    // every NCCL type but the count sentinel has a name
    expect(new Set(Object.values(NCCL_DTYPES).map((d) => d.type)).size).toBe(nccl.ncclDataType_t.ncclNumTypes);
  });

  test('ops map to ncclRedOp_t', () => {
    const O = nccl.ncclRedOp_t;
    expect(NCCL_OPS).toEqual({ sum: O.ncclSum, prod: O.ncclProd, max: O.ncclMax, min: O.ncclMin, avg: O.ncclAvg });
    expect(ncclRedOp('avg')).toBe(4);
  });

  test('unknown names are TypeErrors listing the choices', () => {
    expect(() => ncclDataType('float32', 'X.call')).toThrow(/^X\.call: dtype must be one of i8, u8, .*f32.*; got "float32"$/);
    expect(() => ncclDataType(undefined, 'X.call')).toThrow(/got none/);
    expect(() => ncclDataType('toString')).toThrow(TypeError); // not an inherited property
    expect(() => ncclRedOp('mean', 'X.call')).toThrow(/^X\.call: op must be one of sum, prod, max, min, avg; got "mean"$/);
  });
});

describe('argument validation before any native call', () => {
  let library: jest.SpyInstance;
  beforeEach(() => {
    library = jest.spyOn(nccl.binder, 'library');
  });
  afterEach(() => expect(library).not.toHaveBeenCalled());

  test('initAll', () => {
    expect(() => Communicator.initAll('0' as never)).toThrow(TypeError);
    expect(() => Communicator.initAll([])).toThrow(/Communicator.initAll: devices must not be empty/);
    expect(() => Communicator.initAll([-1])).toThrow(/Communicator.initAll: devices must be Devices or device ordinals, got -1/);
    expect(() => Communicator.initAll([0.5])).toThrow(TypeError);
    expect(() => Communicator.initAll([0, 1, 0])).toThrow(/device 0 is listed twice/);
    expect(() => Communicator.initAll([fakeDevice(1), 1])).toThrow(RangeError);
  });

  test('initRank', () => {
    const id = new Uint8Array(128);
    expect(() => Communicator.initRank(0, id, 0)).toThrow(/Communicator.initRank: nranks must be a positive integer, got 0/);
    expect(() => Communicator.initRank(2.5, id, 0)).toThrow(RangeError);
    expect(() => Communicator.initRank(2, id, 2)).toThrow(/rank must be an integer in \[0, 2\), got 2/);
    expect(() => Communicator.initRank(2, id, -1)).toThrow(RangeError);
    expect(() => Communicator.initRank(2, new Uint8Array(127), 0)).toThrow(/a unique id is 128 bytes, got 127/);
    expect(() => Communicator.initRank(2, new ArrayBuffer(129), 0)).toThrow(RangeError);
    expect(() => Communicator.initRank(2, 'ab', 0)).toThrow(/must be 256 hex digits/);
    expect(() => Communicator.initRank(2, 'zz'.repeat(128), 0)).toThrow(RangeError);
    expect(() => Communicator.initRank(2, [1, 2] as never, 0)).toThrow(TypeError);
    expect(() => Communicator.initRank(2, id, 0, 'gpu0' as never)).toThrow(/device must be a Device or a device ordinal/);
    expect(() => Communicator.initRank(2, id, 0, -1)).toThrow(TypeError);
  });

  test('group', () => {
    expect(() => Communicator.group('x' as never)).toThrow(/Communicator.group: expects a function/);
  });

  test('collectives: dtype, op, root, count and buffer sizes', () => {
    const comm = fakeComm(0, 2);
    const all = jest.spyOn(nccl, 'ncclAllReduce');
    const a = new FakeBuffer(64);
    const b = new FakeBuffer(64);
    expect(() => comm.allReduce(a, b, {} as never)).toThrow(/Communicator.allReduce: dtype must be one of/);
    expect(() => comm.allReduce(a, b, undefined as never)).toThrow(/Communicator.allReduce: options with a dtype are required/);
    expect(() => comm.allReduce(a, { dtype: 'f32', op: 'mean' as never })).toThrow(/op must be one of/);
    expect(() => comm.allReduce(a, b, { dtype: 'f32', count: 17 })).toThrow(/Communicator.allReduce: send buffer holds 64 bytes, the call needs 68/);
    expect(() => comm.allReduce(a, new FakeBuffer(60), { dtype: 'f32' })).toThrow(/recv buffer holds 60 bytes, the call needs 64/);
    expect(() => comm.allReduce(new FakeBuffer(62), b, { dtype: 'f32' })).toThrow(/not a whole number of 4-byte elements; pass count/);
    expect(() => comm.allReduce(a, b, { dtype: 'f32', count: -1 })).toThrow(RangeError);
    expect(() => comm.allReduce({} as never, b, { dtype: 'f32' })).toThrow(/send must be a DeviceBuffer/);
    expect(() => comm.allReduce(new FakeBuffer(64, 1), { dtype: 'f32' })).toThrow(/send buffer is on device 1, this communicator on device 0/);
    expect(() => comm.broadcast(a, { dtype: 'f32', root: 2 })).toThrow(/Communicator.broadcast: root must be a rank in \[0, 2\), got 2/);
    expect(() => comm.broadcast(new FakeBuffer(8), a, { dtype: 'f32', root: 0 })).toThrow(/send buffer holds 8 bytes, the call needs 64/);
    // reduceScatter: send holds count × ranks elements
    expect(() => comm.reduceScatter(new FakeBuffer(60), new FakeBuffer(32), { dtype: 'f32' })).toThrow(
      /Communicator.reduceScatter: send buffer holds 60 bytes, the call needs 64/,
    );
    // allGather: recv holds count × ranks elements
    expect(() => comm.allGather(new FakeBuffer(32), new FakeBuffer(60), { dtype: 'f32' })).toThrow(
      /Communicator.allGather: recv buffer holds 60 bytes, the call needs 64/,
    );
    const closed = new FakeBuffer(64);
    closed.close();
    expect(() => comm.allReduce(closed, { dtype: 'f32' })).toThrow(/send buffer is closed/);
    expect(all).not.toHaveBeenCalled();
  });

  test('a stream of another device is refused', () => {
    const comm = fakeComm(0, 2);
    const other = { context: deviceContext(1) };
    Object.setPrototypeOf(other, Stream.prototype);
    expect(() => comm.allReduce(new FakeBuffer(8), { dtype: 'f32', stream: other as never })).toThrow(
      /the stream is on device 1, this communicator on device 0/,
    );
  });

  test('copyPeer bounds and types', () => {
    const a = new FakeBuffer(64, 0);
    const b = new FakeBuffer(32, 1);
    expect(() => copyPeer(b, a)).toThrow(/copyPeer: destination bytes \[0, 64\) are out of bounds of a 32-byte buffer/);
    expect(() => copyPeer(a, b, { bytes: 33 })).toThrow(/copyPeer: source bytes \[0, 33\)/);
    expect(() => copyPeer(a, b, { srcOffset: 40 })).toThrow(/source bytes \[40, 40\) are out of bounds/);
    expect(() => copyPeer(a, b, { dstOffset: 40 })).toThrow(/destination bytes \[40, 72\)/);
    expect(() => copyPeer(a, b, { bytes: -1 })).toThrow(RangeError);
    expect(() => copyPeer(a, {} as never)).toThrow(/copyPeer: src must be a DeviceBuffer/);
    expect(() => copyPeer(null as never, a)).toThrow(/copyPeer: dst must be a DeviceBuffer/);
  });
});

describe('life cycle', () => {
  test('close destroys once, abort aborts once, use after either throws', () => {
    const destroy = jest.spyOn(nccl, 'ncclCommDestroy').mockImplementation(() => undefined);
    const abort = jest.spyOn(nccl, 'ncclCommAbort').mockImplementation(() => undefined);
    const c1 = fakeComm();
    expect([c1.rank, c1.count, c1.device.ordinal]).toEqual([0, 2, 0]);
    c1.close();
    c1.close();
    c1.abort();
    expect(destroy).toHaveBeenCalledTimes(1);
    expect(destroy).toHaveBeenCalledWith(0xc0de);
    expect(abort).not.toHaveBeenCalled();
    expect(() => c1.allReduce(new FakeBuffer(8), { dtype: 'f32' })).toThrow('Communicator is closed');
    expect(() => c1.asyncError()).toThrow('Communicator is closed');

    const c2 = fakeComm();
    {
      using c3 = fakeComm();
      void c3;
    }
    expect(destroy).toHaveBeenCalledTimes(2);
    c2.abort();
    c2.abort();
    c2.close();
    expect(abort).toHaveBeenCalledTimes(1);
    expect(destroy).toHaveBeenCalledTimes(2);
    expect(c2.closed).toBe(true);
    expect(() => c2.broadcast(new FakeBuffer(8), { dtype: 'f32' })).toThrow('Communicator is closed');
  });

  test('valid calls hand NCCL the pointers, count, dtype, op, root and stream', () => {
    const allReduce = jest.spyOn(nccl, 'ncclAllReduce').mockImplementation(() => undefined);
    const broadcast = jest.spyOn(nccl, 'ncclBroadcast').mockImplementation(() => undefined);
    const reduceScatter = jest.spyOn(nccl, 'ncclReduceScatter').mockImplementation(() => undefined);
    const allGather = jest.spyOn(nccl, 'ncclAllGather').mockImplementation(() => undefined);
    const comm = fakeComm(1, 4);
    const send = new FakeBuffer(64, 0, 0x10000);
    const recv = new FakeBuffer(256, 0, 0x20000);
    // a stream given through the protocol: its handle reaches NCCL (resolving it needs no driver here)
    const stream = { [Symbol.for('cuda.stream')]: () => 0x55 } as unknown as streams.StreamLike;
    jest.spyOn(streams, 'streamHandle').mockImplementation((s) => (s === stream ? 0x55 : 0) as never);
    comm.allReduce(send, recv, { dtype: 'f32', op: 'max', stream });
    expect(allReduce).toHaveBeenLastCalledWith(0x10000, 0x20000, 16, nccl.ncclDataType_t.ncclFloat32, nccl.ncclRedOp_t.ncclMax, 0xc0de, 0x55);
    comm.allReduce(send, { dtype: 'f64' });
    expect(allReduce).toHaveBeenLastCalledWith(0x10000, 0x10000, 8, nccl.ncclDataType_t.ncclFloat64, nccl.ncclRedOp_t.ncclSum, 0xc0de, 0);
    comm.broadcast(send, recv, { dtype: 'u8', root: 3 }); // not the root: only recv's size matters
    expect(broadcast).toHaveBeenLastCalledWith(0x10000, 0x20000, 256, nccl.ncclDataType_t.ncclUint8, 3, 0xc0de, 0);
    comm.reduceScatter(recv, send, { dtype: 'i32', op: 'min' });
    expect(reduceScatter).toHaveBeenLastCalledWith(0x20000, 0x10000, 16, nccl.ncclDataType_t.ncclInt32, nccl.ncclRedOp_t.ncclMin, 0xc0de, 0);
    comm.allGather(send, recv, { dtype: 'bf16', count: 32 });
    expect(allGather).toHaveBeenLastCalledWith(0x10000, 0x20000, 32, nccl.ncclDataType_t.ncclBfloat16, 0xc0de, 0);
  });

  test('ncclUniqueId encodes byte for byte as the by-value record', () => {
    const id = Uint8Array.from({ length: 128 }, (_, i) => (i * 37 + 200) & 0xff);
    const record: nccl.ncclUniqueId = { internal: Array.from(new Int8Array(id.buffer)) };
    const encoded = encodeRecord(nccl.records.ncclUniqueId(), record);
    expect(Array.from(encoded)).toEqual(Array.from(id));
    const back = decodeRecord<nccl.ncclUniqueId>(nccl.records.ncclUniqueId(), encoded);
    expect(back.internal).toEqual(record.internal);
  });
});

describeNoNccl('without libnccl (skipped where NCCL is installed)', () => {
  test('importing loaded nothing; first use says NCCL is needed, lists the paths tried', () => {
    expect((nccl.binder as unknown as { lib: unknown }).lib).toBeUndefined();
    let error: unknown;
    try {
      Communicator.uniqueId();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(NcclUnavailableError);
    expect(error).toBeInstanceOf(CudaLibraryError);
    const e = error as NcclUnavailableError;
    expect(e.message).toMatch(/^Communicator.uniqueId needs NCCL \(libnccl.so.2\), which could not be loaded: install NCCL/);
    expect(e.message).toMatch(/CUDA_TS_NCCL_LIBRARY/);
    expect(e.message).toMatch(/tried:\n {4}libnccl.so.2 \(system loader\)/);
    expect(e.tried.length).toBeGreaterThan(0);
    expect(e.module).toBe('nccl');
  });

  test('initAll, initRank and group fail the same way before touching the driver', () => {
    expect(() => Communicator.initAll([0])).toThrow(/^Communicator.initAll needs NCCL/);
    expect(() => Communicator.initAll()).toThrow(NcclUnavailableError);
    expect(() => Communicator.initRank(2, new Uint8Array(128), 1, 0)).toThrow(/^Communicator.initRank needs NCCL/);
    expect(() => Communicator.initRank(2, 'ab'.repeat(128), 1)).toThrow(NcclUnavailableError);
    let ran = false;
    expect(() => Communicator.group(() => (ran = true))).toThrow(/^Communicator.group needs NCCL/);
    expect(ran).toBe(false);
  });
});

describe('initRank hands NCCL the id by value on the device given (NCCL mocked)', () => {
  test('bytes, nranks, rank, device context bound first', () => {
    jest.spyOn(nccl.binder, 'library').mockReturnValue({} as never);
    const order: string[] = [];
    const dev = fakeDevice(3);
    const ctx = dev.primaryContext();
    (ctx as unknown as { bind: () => Context }).bind = () => (order.push('bind'), ctx);
    const init = jest.spyOn(nccl, 'ncclCommInitRank').mockImplementation(() => (order.push('init'), 0xabc as nccl.ncclComm_t));
    const id = Uint8Array.from({ length: 128 }, (_, i) => 255 - i);
    const comm = Communicator.initRank(4, Buffer.from(id).toString('hex'), 2, dev);
    expect(order).toEqual(['bind', 'init']);
    const [nranks, commId, rank] = init.mock.calls[0];
    expect([nranks, rank]).toEqual([4, 2]);
    expect(Uint8Array.from(commId.internal.map((b) => b & 0xff))).toEqual(id);
    expect([comm.rank, comm.count, comm.device, comm.handle]).toEqual([2, 4, dev, 0xabc]);
    expect(String(comm)).toBe('Communicator(rank 2 of 4, device 3)');
    jest.spyOn(nccl, 'ncclCommDestroy').mockImplementation(() => undefined);
    comm.close();
  });

  test('group: End runs when fn throws, and the error of fn wins', () => {
    jest.spyOn(nccl.binder, 'library').mockReturnValue({} as never);
    const calls: string[] = [];
    jest.spyOn(nccl, 'ncclGroupStart').mockImplementation(() => void calls.push('start'));
    jest.spyOn(nccl, 'ncclGroupEnd').mockImplementation(() => void calls.push('end'));
    expect(Communicator.group(() => 7)).toBe(7);
    expect(() =>
      Communicator.group(() => {
        throw new Error('inside');
      }),
    ).toThrow('inside');
    expect(calls).toEqual(['start', 'end', 'start', 'end']);
    expect(() => Communicator.group(async () => 1)).toThrow(/fn must be synchronous/);
  });
});

describe('rendezvous timeouts (issue 29 §3)', () => {
  test('timeoutMs: Infinity waits for the unique id instead of failing at once', async () => {
    jest.spyOn(nccl.binder, 'library').mockReturnValue({} as never); // NCCL "loads"; nothing else runs
    const token = randomBytes(32).toString('hex');
    const server = await StoreServer.listen({ port: 0, host: '127.0.0.1', token, log: () => undefined });
    const settled: string[] = [];
    const meeting = Communicator.rendezvous({ rank: 1, size: 2, address: `127.0.0.1:${server.port}`, token, timeoutMs: Infinity, device: 0 });
    meeting.then(
      () => settled.push('met'),
      (e: Error) => settled.push(e.message),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(settled).toEqual([]); // before the fix: "did not complete the handshake in time" after ~2 ms
    await server.close();
    await expect(meeting).rejects.toThrow(/store connection closed|closed the connection/);
    expect(settled[0]).not.toMatch(/time/);
  });
});
