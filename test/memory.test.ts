// Memory resources, buffers, copies, tensor maps and textures without a GPU: the driver is replaced by fakes (drv.provideNative)
// that record what they were given (and, for host memory, hand out real koffi allocations), so record
// encoding, validation, deallocation streams and parents kept alive are checked for real.
import koffi from 'koffi';
import * as drv from '../src/driver';
import { Context } from '../src/context';
import { CachingAllocator } from '../src/memory/allocator';
import { copyBatch, provideDriverVersion } from '../src/memory/copy-batch';
import { DeviceBuffer, ManagedBuffer, MemoryPool, PinnedHostBuffer } from '../src/memory';
import { Stream } from '../src/stream';
import { TensorMap } from '../src/tensormap';
import { CudaArray, SurfaceObject, TextureObject } from '../src/texture';
import { VirtualMemoryResource } from '../src/memory/vmm';
import { fakeContext, out, type FakeFn as Fn } from './helpers/fake-driver';

type Call = [string, unknown[]];

const calls: Call[] = [];
let nextHandle = 0x5000;
let nextPtr = 0x7f0000000000;
const hostBlocks = new Map<number, unknown>();
const MiB = 1 << 20;

function hostAlloc(bytes: number): number {
  const p = koffi.alloc('uint8', bytes);
  const a = Number(koffi.address(p));
  hostBlocks.set(a, p);
  return a;
}

const fakes: Record<string, Fn> = {
  cuCtxGetCurrent: (slot: BigUint64Array) => out(slot, 0xc0),
  cuCtxSetCurrent: () => 0,
  cuInit: () => 0,
  cuDeviceGet: (o: Int32Array, ordinal: number) => ((o[0] = ordinal), 0),
  cuDeviceGetAttribute: (o: Int32Array, attr: number) => ((o[0] = attr === drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT ? 512 : 32), 0),
  cuStreamCreateWithPriority: (o) => out(o, (nextHandle += 0x100)),
  cuStreamDestroy: () => 0,
  cuMemAllocAsync: (o, bytes: number) => {
    out(o, nextPtr);
    nextPtr += bytes;
    return 0;
  },
  cuMemAllocFromPoolAsync: (o, bytes: number) => {
    out(o, nextPtr);
    nextPtr += bytes;
    return 0;
  },
  cuMemFreeAsync: () => 0,
  cuMemAlloc: (o, bytes: number) => {
    out(o, nextPtr);
    nextPtr += bytes;
    return 0;
  },
  cuMemFree: () => 0,
  cuMemAllocManaged: (o, bytes: number) => out(o, hostAlloc(bytes)),
  cuMemGetInfo: (free, total) => (out(free, 2 ** 34), out(total, 2 ** 35)), // room for any managed allocation here
  cuMemHostAlloc: (o, bytes: number) => out(o, hostAlloc(bytes)),
  cuMemHostGetDevicePointer: (o, host: number) => out(o, host),
  cuMemFreeHost: (a: number) => {
    koffi.free(hostBlocks.get(a));
    hostBlocks.delete(a);
    return 0;
  },
  cuMemPoolCreate: (o) => out(o, (nextHandle += 0x10)),
  cuMemPoolDestroy: () => 0,
  cuMemPoolSetAccess: () => 0,
  cuMemPoolGetAccess: (o: Int32Array) => ((o[0] = 1), 0),
  cuMemPoolSetAttribute: () => 0,
  cuMemAdvise: () => 0,
  cuMemPrefetchAsync: () => 0,
  cuMemcpyHtoD: () => 0,
  cuMemcpyDtoH: () => 0,
  cuMemcpyDtoD: () => 0,
  cuMemsetD8: () => 0,
  cuMemsetD16: () => 0,
  cuMemsetD32: () => 0,
  cuMemsetD8Async: () => 0,
  cuStreamSynchronize: () => 0,
  cuMemcpyDtoHAsync: () => 0,
  cuMemcpyHtoDAsync: () => 0,
  cuMemcpyAsync: () => 0,
  cuMemsetD32Async: () => 0,
  cuMemGetAllocationGranularity: (o) => out(o, 2 * MiB),
  cuMemAddressReserve: (o) => out(o, 0x7e0000000000),
  cuMemCreate: (o) => out(o, (nextHandle += 1)),
  cuMemMap: () => 0,
  cuMemSetAccess: () => 0,
  cuMemUnmap: () => 0,
  cuMemRelease: () => 0,
  cuMemAddressFree: () => 0,
  cuMemcpyBatchAsync: () => 0,
  cuTensorMapEncodeTiled: (block: Uint8Array) => (block.fill(0xab), 0),
  cuTensorMapEncodeIm2col: (block: Uint8Array) => (block.fill(0xcd), 0),
  cuTensorMapReplaceAddress: (block: Uint8Array) => ((block[0] = 0x11), 0),
  cuArray3DCreate: (o) => out(o, 0xa000),
  cuArrayDestroy: () => 0,
  cuMemcpy3D: () => 0,
  cuTexObjectCreate: (o) => out(o, 7),
  cuTexObjectDestroy: () => 0,
  cuSurfObjectCreate: (o) => out(o, 9),
  cuSurfObjectDestroy: () => 0,
};

beforeAll(() => {
  for (const [name, fn] of Object.entries(fakes)) {
    drv.provideNative(name, ((...args: unknown[]) => {
      calls.push([name, args]);
      return fn(...args);
    }) as never);
  }
  provideDriverVersion(13000);
});
afterAll(() => {
  for (const name of Object.keys(fakes)) drv.provideNative(name, undefined);
  provideDriverVersion(undefined);
});
beforeEach(() => {
  calls.length = 0;
});

const named = (name: string): unknown[][] => calls.filter(([n]) => n === name).map(([, a]) => a);
const last = (name: string): unknown[] => {
  const all = named(name);
  if (all.length === 0) throw new Error(`${name} was not called`);
  return all[all.length - 1];
};

/** A device buffer whose free is counted. */
class FakeBuffer extends DeviceBuffer {
  freed = 0;
  constructor(bytes: number, ctx: Context, address = 0x7f1000000000) {
    super('DeviceBuffer', address, bytes, ctx, () => {
      this.freed++;
    });
  }
}

const dv = (bytes: unknown): DataView => new DataView((bytes as Uint8Array).buffer, (bytes as Uint8Array).byteOffset, (bytes as Uint8Array).byteLength);

describe('MemoryPool: pinned, managed, wrapped', () => {
  const ctx = fakeContext(0xc0);

  test('pinned(): a host-location pool, device access granted, pinnedHost memory', () => {
    const pool = MemoryPool.pinned({ context: ctx, maxSize: 64 * MiB });
    const props = dv(last('cuMemPoolCreate')[1]);
    expect(props.getInt32(0, true)).toBe(drv.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED);
    expect(props.getInt32(8, true)).toBe(drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST);
    expect(Number(props.getBigUint64(24, true))).toBe(64 * MiB);
    const [handle, desc, count] = last('cuMemPoolSetAccess');
    expect(handle).toBe(pool.handle);
    expect(count).toBe(1);
    expect([dv(desc).getInt32(0, true), dv(desc).getInt32(4, true), dv(desc).getInt32(8, true)]).toEqual([drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, 0, 3]);
    expect(pool.memoryType).toBe('pinnedHost');
    expect(pool.owned).toBe(true);
    pool.close();
    expect(last('cuMemPoolDestroy')[0]).toBe(pool.handle);
  });

  test('pinned({ numaNode }) uses a host NUMA location; bad options name the method', () => {
    MemoryPool.pinned({ context: ctx, numaNode: 1, accessFrom: [] }).close();
    const props = dv(last('cuMemPoolCreate')[1]);
    expect([props.getInt32(8, true), props.getInt32(12, true)]).toEqual([drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST_NUMA, 1]);
    expect(named('cuMemPoolSetAccess')).toHaveLength(0);
    expect(() => MemoryPool.pinned({ context: ctx, numaNode: -1 })).toThrow(/MemoryPool.pinned: numaNode: location.hostNuma must be a non-negative integer/);
    expect(() => MemoryPool.pinned({ context: ctx, accessFrom: 0 as never })).toThrow(/accessFrom must be an array of device ordinals/);
    expect(() => MemoryPool.pinned({ context: ctx, accessFrom: [1.5] })).toThrow(RangeError);
    expect(() => MemoryPool.pinned({ context: ctx, device: 0 } as never)).toThrow(/MemoryPool.pinned: unknown option 'device'/);
    expect(() => MemoryPool.pinned({ context: ctx, maxSize: -1 })).toThrow(/MemoryPool.pinned: maxSize must be a non-negative integer/);
  });

  test('managed(): CU_MEM_ALLOCATION_TYPE_MANAGED, no preferred location unless given', () => {
    MemoryPool.managed({ context: ctx }).close();
    let props = dv(last('cuMemPoolCreate')[1]);
    expect(props.getInt32(0, true)).toBe(drv.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_MANAGED);
    expect(props.getInt32(8, true)).toBe(drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_NONE);
    MemoryPool.managed({ context: ctx, preferredLocation: { device: 0 } }).close();
    props = dv(last('cuMemPoolCreate')[1]);
    expect([props.getInt32(8, true), props.getInt32(12, true)]).toEqual([drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, 0]);
    MemoryPool.managed({ context: ctx, preferredLocation: 'host' }).close();
    expect(dv(last('cuMemPoolCreate')[1]).getInt32(8, true)).toBe(drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST);
    expect(() => MemoryPool.managed({ context: ctx, preferredLocation: 'hostNumaCurrent' })).toThrow(/not a pool location/);
    expect(() => MemoryPool.managed({ context: ctx, preferredLocation: 'gpu' as never })).toThrow(/MemoryPool.managed: preferredLocation: a location is 'host'/);
  });

  test('alloc(): a managed pool gives ManagedBuffers, a pinned pool host-accessible buffers, a device pool neither', () => {
    const s = Stream.create({ context: ctx });
    const managed = MemoryPool.managed({ context: ctx });
    const m = managed.alloc(4096, s);
    expect(m).toBeInstanceOf(ManagedBuffer);
    expect(m.hostAccessible).toBe(true);
    expect(m.pool).toBe(managed);
    const device = MemoryPool.create({ context: ctx });
    const d = device.alloc(4096, s);
    expect(d).not.toBeInstanceOf(ManagedBuffer);
    expect(d.hostAccessible).toBe(false);
    expect(() => d.array(Float32Array)).toThrow(/DeviceBuffer.array: this is device memory, not host-accessible/);
    const pinned = MemoryPool.pinned({ context: ctx });
    const p = pinned.alloc(4096, s);
    expect(p.hostAccessible).toBe(true);
    expect(p.subarray(16).hostAccessible).toBe(true);
    // pools live while their buffers do
    managed.close();
    expect(named('cuMemPoolDestroy')).toHaveLength(0);
    const mp = m.ptr;
    m.close();
    expect(last('cuMemFreeAsync')).toEqual([mp, s.handle]);
    expect(last('cuMemPoolDestroy')[0]).toBe(managed.handle);
    for (const x of [d, p, device, pinned, s]) x.close();
  });

  test('wrap(): not owned by default (close leaves the pool), owned on request; handle checked', () => {
    const foreign = MemoryPool.wrap(0x4242, { context: ctx });
    expect(foreign.owned).toBe(false);
    expect(foreign.memoryType).toBe('device');
    foreign.close();
    expect(named('cuMemPoolDestroy')).toHaveLength(0);
    expect(() => foreign.trim()).toThrow(/MemoryPool \(wrapped\) is closed/);
    const owned = MemoryPool.wrap(0x4343n, { context: ctx, owned: true, memoryType: 'managed' });
    expect(owned.handle).toBe(0x4343);
    owned.close();
    expect(last('cuMemPoolDestroy')[0]).toBe(0x4343);
    expect(() => MemoryPool.wrap('p' as never, { context: ctx })).toThrow(/MemoryPool.wrap: handle must be a non-zero CUmemoryPool handle/);
    expect(() => MemoryPool.wrap(0, { context: ctx })).toThrow(TypeError);
    expect(() => MemoryPool.wrap(1, { context: ctx, memoryType: 'host' as never })).toThrow(/memoryType must be 'device', 'pinnedHost' or 'managed'/);
    expect(() => MemoryPool.wrap(1, { context: ctx, owned: 1 as never })).toThrow(/owned must be a boolean/);
  });

  test('setAccess / accessFrom encode CUmemAccessDesc and CUmemLocation', () => {
    const pool = MemoryPool.create({ context: ctx });
    pool.setAccess(1, 'read');
    const desc = dv(last('cuMemPoolSetAccess')[1]);
    expect([desc.getInt32(0, true), desc.getInt32(4, true), desc.getInt32(8, true)]).toEqual([1, 1, 1]);
    expect(pool.accessFrom(1)).toBe('read');
    expect(Array.from(last('cuMemPoolGetAccess')[2] as Int32Array)).toEqual([1, 1]);
    expect(() => pool.setAccess(0, 'write' as never)).toThrow(/MemoryPool.setAccess: access must be 'none', 'read' or 'readWrite'/);
    expect(() => pool.setAccess(-1)).toThrow(/MemoryPool.setAccess: device/);
    pool.close();
    expect(() => pool.setAccess(0)).toThrow(/MemoryPool is closed/);
  });
});

describe('deallocation stream', () => {
  const ctx = fakeContext(0xc0);

  test('a cached block goes back to the chosen stream: its bin serves that stream next', () => {
    const s1 = Stream.create({ context: ctx });
    const s2 = Stream.create({ context: ctx });
    const a = DeviceBuffer.alloc(1000, { stream: s1 });
    expect(a.deallocationStream).toBe(s1);
    a.deallocationStream = s2;
    expect(a.deallocationStream).toBe(s2);
    const ptr = a.ptr;
    a.close();
    const hits = CachingAllocator.stats(ctx).hits;
    calls.length = 0;
    const b = DeviceBuffer.alloc(1000, { stream: s2 });
    expect(b.ptr).toBe(ptr);
    expect(named('cuMemAllocAsync')).toHaveLength(0);
    expect(CachingAllocator.stats(ctx).hits).toBe(hits + 1);
    for (const x of [b, s1, s2]) x.close();
  });

  test('the deallocation stream is kept alive: closing it first defers its destroy until the free', () => {
    const s1 = Stream.create({ context: ctx });
    const s2 = Stream.create({ context: ctx });
    const a = DeviceBuffer.alloc(1000, { stream: s1 }).setDeallocationStream(s2);
    const ptr = a.ptr;
    s2.close();
    expect(named('cuStreamDestroy')).toHaveLength(0);
    a.close();
    // the block went to s2's bin, then s2's destroy gave it back to the driver on s2, then destroyed s2
    expect(calls.filter(([n]) => n === 'cuMemFreeAsync' || n === 'cuStreamDestroy')).toEqual([
      ['cuMemFreeAsync', [ptr, s2.handle]],
      ['cuStreamDestroy', [s2.handle]],
    ]);
    s1.close();
  });

  test('pool and uncached buffers: cuMemFreeAsync on the chosen stream', () => {
    const s1 = Stream.create({ context: ctx });
    const s2 = Stream.create({ context: ctx });
    const pool = MemoryPool.create({ context: ctx });
    const a = pool.alloc(256, s1).setDeallocationStream(s2);
    const ap = a.ptr;
    a.close();
    expect(last('cuMemFreeAsync')).toEqual([ap, s2.handle]);
    const b = DeviceBuffer.alloc(256, { stream: s1, cache: false });
    b.setDeallocationStream(s2);
    const bp = b.ptr;
    b.close();
    expect(last('cuMemFreeAsync')).toEqual([bp, s2.handle]);
    for (const x of [pool, s1, s2]) x.close();
  });

  test('synchronous buffers, views and streams of another context are refused', () => {
    const s = Stream.create({ context: ctx });
    const sync = DeviceBuffer.alloc(64, { context: ctx });
    expect(sync.deallocationStream).toBeUndefined();
    expect(() => sync.setDeallocationStream(s)).toThrow(/only stream-ordered buffers .* this DeviceBuffer is freed synchronously/);
    const ordered = DeviceBuffer.alloc(64, { stream: s });
    expect(() => ordered.subarray(8).setDeallocationStream(s)).toThrow(/this is a view: set it on the buffer it was made from/);
    const other = Stream.create({ context: fakeContext(0xc9) });
    expect(() => ordered.setDeallocationStream(other)).toThrow(/DeviceBuffer.setDeallocationStream: the stream belongs to/);
    expect(() => ordered.setDeallocationStream(undefined as never)).toThrow(/stream is required/);
    expect(() => ordered.setDeallocationStream(7 as never)).toThrow(/must be a Stream/);
    ordered.close();
    expect(() => ordered.setDeallocationStream(s)).toThrow(/DeviceBuffer is closed/);
    sync.close();
  });
});

describe('calls without a stream are done when they return', () => {
  const ctx = fakeContext(0xc0);
  // the driver names called by `fn`, in order, from the log
  const sequence = (fn: () => void): string[] => {
    calls.length = 0;
    fn();
    return calls.map(([n]) => n).filter((n) => n !== 'cuCtxGetCurrent' && n !== 'cuCtxSetCurrent');
  };

  test('memsets of every width, device-to-device and host-to-device copies wait for the default stream; a copy to the host is done on return', () => {
    const a = new FakeBuffer(64, ctx, 0x7f3000000000);
    const b = new FakeBuffer(64, ctx, 0x7f3000001000);
    for (const width of [1, 2, 4] as const) {
      const name = `cuMemsetD${8 * width}`;
      expect(sequence(() => a.memset(1, { width }))).toEqual([name, 'cuStreamSynchronize']);
      expect(last('cuStreamSynchronize')).toEqual([0]);
    }
    expect(sequence(() => a.copyFrom(b))).toEqual(['cuMemcpyDtoD', 'cuStreamSynchronize']);
    expect(sequence(() => a.copyTo(b.subarray(8, 24), { offset: 16 }))).toEqual(['cuMemcpyDtoD', 'cuStreamSynchronize']);
    expect(sequence(() => a.copyFrom(new Uint8Array(8), { offset: 8 }))).toEqual(['cuMemcpyHtoD', 'cuStreamSynchronize']);
    expect(sequence(() => a.subarray(4).copyFrom(new Float32Array(2)))).toEqual(['cuMemcpyHtoD', 'cuStreamSynchronize']);
    expect(sequence(() => a.copyTo(new Uint8Array(8)))).toEqual(['cuMemcpyDtoH']);
    a.close();
    b.close();
  });

  test('a call given a stream only enqueues: no wait', () => {
    const s = Stream.create({ context: ctx });
    const a = new FakeBuffer(64, ctx, 0x7f3000002000);
    expect(sequence(() => a.memset(1, { stream: s }))).toEqual(['cuMemsetD8Async']);
    a.close();
    s.close();
  });

  test('a failing wait is a DriverError naming cuStreamSynchronize', () => {
    const a = new FakeBuffer(64, ctx, 0x7f3000003000);
    drv.provideNative('cuStreamSynchronize', (() => 700) as never);
    try {
      expect(() => a.memset(0)).toThrow(/cuStreamSynchronize/);
    } finally {
      drv.provideNative('cuStreamSynchronize', ((...args: unknown[]) => (calls.push(['cuStreamSynchronize', args]), 0)) as never);
    }
    a.close();
  });
});

describe('DeviceBuffer.wrap', () => {
  const ctx = fakeContext(0xc0);

  test('never frees the memory; keeps an owner Resource alive until closed', () => {
    const owner = new FakeBuffer(1024, ctx, 0x7f2000000000);
    const w = DeviceBuffer.wrap(owner.ptr + 256, 512, { owner, context: ctx });
    expect(w.ptr).toBe(0x7f2000000100);
    expect(w.byteLength).toBe(512);
    owner.close();
    expect(owner.freed).toBe(0);
    w.copyFrom(new Uint8Array(512));
    expect(last('cuMemcpyHtoD')[0]).toBe(0x7f2000000100);
    w.close();
    expect(owner.freed).toBe(1);
    expect(named('cuMemFree')).toHaveLength(0);
    expect(() => w.ptr).toThrow(/DeviceBuffer \(wrapped\) is closed/);
  });

  test('bigint pointers, any owner object, host-accessible flag; bad input names the argument', () => {
    const keep = { name: 'foreign allocation' };
    const w = DeviceBuffer.wrap(0x7f3000000000n, 16, { owner: keep, context: ctx, hostAccessible: true });
    expect(w.ptr).toBe(0x7f3000000000);
    expect(w.hostAccessible).toBe(true);
    expect(() => DeviceBuffer.wrap('0x10' as never, 16, { context: ctx })).toThrow(/DeviceBuffer.wrap: pointer must be an address \(number or bigint\), got string/);
    expect(() => DeviceBuffer.wrap(-1, 16, { context: ctx })).toThrow(RangeError);
    expect(() => DeviceBuffer.wrap(1.5, 16, { context: ctx })).toThrow(/pointer must be a non-negative integer address/);
    expect(() => DeviceBuffer.wrap(0, 16, { context: ctx })).toThrow(/a null pointer cannot hold 16 bytes/);
    expect(() => DeviceBuffer.wrap(0x1000, -2, { context: ctx })).toThrow(/DeviceBuffer.wrap: byteLength must be a non-negative integer/);
    expect(() => DeviceBuffer.wrap(0x1000, 8, { context: ctx, free: true } as never)).toThrow(/unknown option 'free'/);
    const closed = new FakeBuffer(8, ctx);
    closed.close();
    expect(() => DeviceBuffer.wrap(0x1000, 8, { context: ctx, owner: closed })).toThrow(/DeviceBuffer.wrap: the DeviceBuffer is closed/);
  });
});

describe('PinnedHostBuffer copy and fill', () => {
  const ctx = fakeContext(0xc0);

  test('fill without a stream is a host fill; with one, cuMemsetD32Async at the mapped address', () => {
    const p = PinnedHostBuffer.alloc(64, { context: ctx });
    p.fill(0xff);
    p.fill(0, { width: 4, count: 8 });
    p.fill(0x01020304, { width: 4, offset: 8, count: 4 });
    expect(Array.from(p.array(Uint32Array).subarray(0, 8))).toEqual([0, 0, 0x01020304, 0x01020304, 0x01020304, 0x01020304, 0, 0]);
    const s = Stream.create({ context: ctx });
    p.fill(7, { width: 4, offset: 16, count: 2, stream: s });
    expect(last('cuMemsetD32Async')).toEqual([p.devicePointer + 16, 7, 2, s.handle]);
    expect(() => p.fill(256)).toThrow(/PinnedHostBuffer.fill: value 256 does not fit in 1 byte/);
    expect(() => p.fill(1, { width: 4, offset: 2 })).toThrow(/offset 2 is not a multiple of width 4/);
    expect(() => p.fill(1, { count: 65 })).toThrow(RangeError);
    expect(() => p.fill(1.5)).toThrow(/value must be an integer/);
    p.close();
    expect(() => p.fill(0)).toThrow(/PinnedHostBuffer is closed/);
    s.close();
  });

  test('host data in and out at offsets; pinned to pinned; a stream is refused for host data', () => {
    const p = PinnedHostBuffer.alloc(16, { context: ctx });
    p.fill(0);
    p.copyFrom(new Uint8Array([1, 2, 3, 4]), { offset: 4 });
    expect(Array.from(p.array(Uint8Array).subarray(0, 10))).toEqual([0, 0, 0, 0, 1, 2, 3, 4, 0, 0]);
    const outArr = new Uint8Array(3);
    p.copyTo(outArr, { offset: 5 });
    expect(Array.from(outArr)).toEqual([2, 3, 4]);
    const q = PinnedHostBuffer.alloc(16, { context: ctx });
    q.fill(9);
    q.copyFrom(p, { byteLength: 8 });
    expect(Array.from(q.array(Uint8Array).subarray(0, 10))).toEqual([0, 0, 0, 0, 1, 2, 3, 4, 9, 9]);
    p.copyTo(q, { offset: 4, byteLength: 2 });
    expect(Array.from(q.array(Uint8Array).subarray(0, 3))).toEqual([1, 2, 0]);
    const s = Stream.create({ context: ctx });
    expect(() => p.copyFrom(new Uint8Array(4), { stream: s })).toThrow(/PinnedHostBuffer.copyFrom: a copy from host data is a host copy made at once/);
    expect(() => p.copyTo(new Uint8Array(4), { stream: s })).toThrow(/PinnedHostBuffer.copyTo: a copy into host data/);
    expect(() => p.copyFrom(new Uint8Array(20))).toThrow(/out of bounds of a 16-byte buffer/);
    expect(() => p.copyFrom('abc' as never)).toThrow(/PinnedHostBuffer.copyFrom: src: expected a TypedArray/);
    q.copyFrom(p, { stream: s, byteLength: 4 });
    expect(last('cuMemcpyAsync')).toEqual([q.hostAddress, p.hostAddress, 4, s.handle]);
    for (const x of [p, q, s]) x.close();
  });

  test('device buffers: cuMemcpyDtoH / HtoD, synchronous or on a stream', () => {
    const p = PinnedHostBuffer.alloc(256, { context: ctx });
    const d = new FakeBuffer(128, ctx);
    p.copyFrom(d, { offset: 64 });
    expect(last('cuMemcpyDtoH')).toEqual([p.hostAddress + 64, d.ptr, 128]);
    const s = Stream.create({ context: ctx });
    p.copyTo(d, { stream: s, offset: 16 });
    expect(last('cuMemcpyHtoDAsync')).toEqual([d.ptr, p.hostAddress + 16, 128, s.handle]);
    p.copyFrom(d, { stream: s, byteLength: 32 });
    expect(last('cuMemcpyDtoHAsync')).toEqual([p.hostAddress, d.ptr, 32, s.handle]);
    expect(() => p.copyFrom(d, { offset: 200 })).toThrow(RangeError);
    for (const x of [p, d, s]) x.close();
  });
});

describe('ManagedBuffer advise and prefetch', () => {
  const ctx = fakeContext(0xc0);

  test('advice and locations become CUmem_advise and CUmemLocation; ranges are checked', () => {
    const m = ManagedBuffer.alloc(4096, { context: ctx });
    m.advise('readMostly');
    expect(last('cuMemAdvise')).toEqual([m.ptr, 4096, drv.CUmem_advise.CU_MEM_ADVISE_SET_READ_MOSTLY, { type: 1, id: 0 }]);
    m.advise('preferredLocation', 'host', { offset: 1024, byteLength: 1024 });
    expect(last('cuMemAdvise')).toEqual([m.ptr + 1024, 1024, drv.CUmem_advise.CU_MEM_ADVISE_SET_PREFERRED_LOCATION, { type: 2, id: 0 }]);
    m.advise('accessedBy', { device: 0 });
    expect((last('cuMemAdvise')[3] as { type: number }).type).toBe(1);
    m.prefetch({ hostNuma: 1 });
    expect(last('cuMemPrefetchAsync').slice(0, 3)).toEqual([m.ptr, 4096, { type: 3, id: 1 }]);
    m.prefetch('device', undefined, { offset: 4000 });
    expect(last('cuMemPrefetchAsync').slice(0, 3)).toEqual([m.ptr + 4000, 96, { type: 1, id: 0 }]);
    expect(() => m.advise('mostlyRead' as never)).toThrow(/ManagedBuffer.advise: advice must be one of readMostly/);
    expect(() => m.advise('accessedBy', 'everywhere' as never)).toThrow(/ManagedBuffer.advise: location: a location is 'device', 'host'/);
    expect(() => m.advise('readMostly', 'device', { offset: 5000 })).toThrow(/offset 5000 is past the end/);
    expect(() => m.prefetch('host', undefined, { length: 3 } as never)).toThrow(/unknown option 'length'/);
    expect(() => m.prefetch(-1)).toThrow(RangeError);
    expect(m.array(Uint8Array).byteLength).toBe(4096);
    m.close();
    expect(() => m.advise('readMostly')).toThrow(/ManagedBuffer is closed/);
  });
});

describe('VirtualMemoryResource (fake driver)', () => {
  const ctx = fakeContext(0xc0);

  test('reserve, grow in granularity chunks mapped end to end, buffers keep it alive, close frees all', () => {
    const vm = VirtualMemoryResource.create({ maxSize: 9 * MiB, initialSize: 1, context: ctx });
    expect(vm.granularity).toBe(2 * MiB);
    expect(vm.reservedSize).toBe(10 * MiB);
    expect(last('cuMemAddressReserve').slice(1)).toEqual([10 * MiB, 0, 0, 0]);
    expect(vm.mappedSize).toBe(2 * MiB);
    const prop = dv(last('cuMemCreate')[2]);
    expect([prop.getInt32(0, true), prop.getInt32(8, true), prop.getInt32(12, true)]).toEqual([1, 1, 0]);
    expect(vm.grow(3 * MiB)).toBe(6 * MiB);
    const maps = named('cuMemMap');
    expect(maps.map((a) => [a[0], a[1]])).toEqual([[0x7e0000000000, 2 * MiB], [0x7e0000000000 + 2 * MiB, 4 * MiB]]);
    const access = last('cuMemSetAccess');
    expect(access.slice(0, 2)).toEqual([0x7e0000000000 + 2 * MiB, 4 * MiB]);
    expect(access[3]).toBe(1);
    expect(dv(access[2]).getInt32(8, true)).toBe(3);
    expect(vm.chunkCount).toBe(2);
    expect(() => vm.grow(5 * MiB)).toThrow(/VirtualMemoryResource.grow: 6291456 more bytes .* would pass the reserved 10485760 bytes/);
    expect(vm.ensure(4 * MiB)).toBe(6 * MiB);
    const buf = vm.buffer(MiB);
    expect(buf.ptr).toBe(0x7e0000000000 + MiB);
    expect(buf.byteLength).toBe(5 * MiB);
    expect(() => vm.buffer(0, 7 * MiB)).toThrow(/are past the 6291456 mapped bytes/);
    vm.close();
    expect(named('cuMemUnmap')).toHaveLength(0); // the buffer keeps the region
    buf.close();
    expect(named('cuMemUnmap')).toEqual([[0x7e0000000000, 6 * MiB]]);
    expect(named('cuMemRelease')).toHaveLength(2);
    expect(last('cuMemAddressFree')).toEqual([0x7e0000000000, 10 * MiB]);
    expect(() => vm.grow(1)).toThrow(/VirtualMemoryResource is closed/);
  });

  test('options are checked before the driver', () => {
    expect(() => VirtualMemoryResource.create(undefined as never)).toThrow(/VirtualMemoryResource.create: options must be an object with maxSize/);
    expect(() => VirtualMemoryResource.create({ maxSize: 0, context: ctx })).toThrow(/maxSize must be positive/);
    expect(() => VirtualMemoryResource.create({ maxSize: 'big' as never, context: ctx })).toThrow(TypeError);
    expect(() => VirtualMemoryResource.create({ maxSize: MiB, granularity: 'huge' as never, context: ctx })).toThrow(/granularity must be 'minimum' or 'recommended'/);
    expect(() => VirtualMemoryResource.create({ maxSize: MiB, accessFrom: [], context: ctx })).toThrow(/accessFrom must be a non-empty array/);
    expect(() => VirtualMemoryResource.create({ maxSize: MiB, size: 3, context: ctx } as never)).toThrow(/unknown option 'size'/);
    expect(() => VirtualMemoryResource.create({ maxSize: MiB, initialSize: 4 * MiB, context: ctx })).toThrow(/initialSize 4194304 is larger than maxSize/);
    expect(named('cuMemAddressReserve')).toHaveLength(0);
  });
});

describe('copyBatch (fake driver)', () => {
  const ctx = fakeContext(0xc0);

  test('arrays of addresses and sizes; one attribute per run of source kinds', () => {
    const s = Stream.create({ context: ctx });
    const a = new FakeBuffer(256, ctx, 0x7f4000000000);
    const b = new FakeBuffer(256, ctx, 0x7f4000001000);
    const host = new Float32Array(16);
    copyBatch(s, [
      { dst: a, src: b, bytes: 128 },
      { dst: b, src: host, dstOffset: 64 },
      { dst: a, src: b, srcOffset: 8, dstOffset: 128, bytes: 8 },
    ], { preferOverlapWithCompute: true });
    const [dsts, srcs, sizes, n, attrs, idxs, numAttrs, h] = last('cuMemcpyBatchAsync') as [BigUint64Array, BigUint64Array, BigUint64Array, number, Uint8Array, BigUint64Array, number, number];
    expect(n).toBe(3);
    expect(Array.from(dsts, Number)).toEqual([0x7f4000000000, 0x7f4000001000 + 64, 0x7f4000000000 + 128]);
    expect(Number(srcs[0])).toBe(0x7f4000001000);
    expect(Number(srcs[1])).toBe(Number(koffi.address(host.buffer)));
    expect(Number(srcs[2])).toBe(0x7f4000001000 + 8);
    expect(Array.from(sizes, Number)).toEqual([128, 64, 8]);
    expect(numAttrs).toBe(3);
    expect(Array.from(idxs, Number)).toEqual([0, 1, 2]);
    const av = dv(attrs);
    expect([av.getInt32(0, true), av.getInt32(24, true), av.getInt32(48, true)]).toEqual([1, 2, 1]); // stream, during the call, stream
    expect(av.getUint32(20, true)).toBe(1);
    expect(h).toBe(s.handle);
    copyBatch(s, [{ dst: a, src: b }, { dst: b, src: a }], { srcAccessOrder: 'any' });
    const [, , , , attrs2, idxs2, num2] = last('cuMemcpyBatchAsync') as [unknown, unknown, unknown, unknown, Uint8Array, BigUint64Array, number];
    expect(num2).toBe(1);
    expect(Array.from(idxs2, Number)).toEqual([0]);
    expect(dv(attrs2).getInt32(0, true)).toBe(3);
    for (const x of [a, b, s]) x.close();
  });

  test('bad batches fail before the driver, naming the copy and field', () => {
    const s = Stream.create({ context: ctx });
    const a = new FakeBuffer(64, ctx);
    expect(() => copyBatch(undefined as never, [{ dst: a, src: a }])).toThrow(/copyBatch: stream is required/);
    expect(() => copyBatch(s, [])).toThrow(/copyBatch: copies is empty/);
    expect(() => copyBatch(s, {} as never)).toThrow(/copies must be an array/);
    expect(() => copyBatch(s, [{ dst: a, src: a, bytes: 65 }])).toThrow(/copyBatch: copies\[0\]: 65 bytes from offset 0 run past the end of the source/);
    expect(() => copyBatch(s, [{ dst: a, src: 0x1000 }])).toThrow(/copies\[0\]: bytes is required when src is an address/);
    expect(() => copyBatch(s, [{ dst: a, src: a }, { dst: new Uint8Array(4) as never, src: a }])).toThrow(/copies\[1\].dst: host data cannot be a batched-copy destination/);
    expect(() => copyBatch(s, [{ dst: a, src: a, size: 4 } as never])).toThrow(/unknown field 'size'/);
    expect(() => copyBatch(s, [{ dst: a, src: a }], { srcAccessOrder: 'duringApiCall' as never })).toThrow(/srcAccessOrder must be 'stream' or 'any'/);
    expect(() => copyBatch(s, [{ dst: 'x' as never, src: a }])).toThrow(/copies\[0\].dst must be a DeviceBuffer/);
    expect(named('cuMemcpyBatchAsync')).toHaveLength(0);
    a.close();
    expect(() => copyBatch(s, [{ dst: a, src: new Uint8Array(4) }])).toThrow(/DeviceBuffer is closed/);
    s.close();
  });

  test('a driver older than CUDA 13.0 gets a clear error', () => {
    const s = Stream.create({ context: ctx });
    const a = new FakeBuffer(64, ctx);
    try {
      provideDriverVersion(12080);
      expect(() => copyBatch(s, [{ dst: a, src: a }])).toThrow(/batched copies need a CUDA 13.0 driver .* the 12.8 form this driver has takes other arguments; the installed driver supports CUDA 12.8/);
      provideDriverVersion(12040);
      expect(() => copyBatch(s, [{ dst: a, src: a }])).toThrow(/added in CUDA 12.8.*supports CUDA 12.4/);
    } finally {
      provideDriverVersion(13000);
    }
    expect(named('cuMemcpyBatchAsync')).toHaveLength(0);
    a.close();
    s.close();
  });
});

describe('TensorMap (fake driver)', () => {
  const ctx = fakeContext(0xc0);

  test('tiled: arguments encoded, a 64-byte-aligned map, the buffer kept alive and replaced', () => {
    const a = new FakeBuffer(16 * 16 * 4, ctx, 0x7f5000000000);
    const map = TensorMap.tiled({ buffer: a, dtype: 'f32', shape: [16, 16], box: [8, 8], swizzle: '128B', l2Promotion: '128B', oobFill: 'nan' });
    const args = last('cuTensorMapEncodeTiled');
    const block = args[0] as Uint8Array;
    expect((Number(koffi.address(block.buffer)) + block.byteOffset) % 64).toBe(0);
    expect(args.slice(1, 4)).toEqual([7, 2, 0x7f5000000000]);
    expect(Array.from(args[4] as BigUint64Array, Number)).toEqual([16, 16]);
    expect(Array.from(args[5] as BigUint64Array, Number)).toEqual([64]);
    expect(Array.from(args[6] as Uint32Array)).toEqual([8, 8]);
    expect(Array.from(args[7] as Uint32Array)).toEqual([1, 1]);
    expect(args.slice(8)).toEqual([0, 3, 2, 1]);
    expect(map.bytes).toHaveLength(128);
    expect(map.bytes[0]).toBe(0xab);
    expect(TensorMap.argType).toEqual({ struct: 128, align: 64 });
    expect(map.arg.type).toEqual({ struct: 128, align: 64 });
    a.close();
    expect(a.freed).toBe(0); // the map keeps it
    const b = new FakeBuffer(16 * 16 * 4, ctx, 0x7f5000010000);
    map.replaceAddress(b);
    expect(last('cuTensorMapReplaceAddress')[1]).toBe(0x7f5000010000);
    expect(map.bytes[0]).toBe(0x11);
    expect(map.buffer).toBe(b);
    expect(a.freed).toBe(1); // released at the replace
    b.close();
    expect(b.freed).toBe(0);
    map.close();
    expect(b.freed).toBe(1);
    expect(() => map.bytes).toThrow(/TensorMap is closed/);
  });

  test('tiled validation: box, strides, alignment, extent, dtype, rank', () => {
    const a = new FakeBuffer(4096, ctx, 0x7f5000000000);
    const base = { buffer: a, dtype: 'f32' as const, shape: [16, 16], box: [8, 8] };
    expect(() => TensorMap.tiled({ ...base, box: [2, 8] })).toThrow(/TensorMap.tiled: box\[0\] × 4 bytes = 8 must be a multiple of 16 bytes/);
    expect(() => TensorMap.tiled({ ...base, box: [8, 300] })).toThrow(/box\[1\] must be from 1 to 256/);
    expect(() => TensorMap.tiled({ ...base, shape: [3, 4], box: [4, 4] })).toThrow(/strides\[0\] = 12 must be a multiple of 16 bytes \(the packed stride/);
    expect(() => TensorMap.tiled({ ...base, shape: [32, 33] })).toThrow(/the tensor spans 4224 bytes, the buffer holds 4096/);
    expect(() => TensorMap.tiled({ ...base, buffer: new FakeBuffer(4096, ctx, 0x7f5000000008) })).toThrow(/is not 16-byte aligned/);
    expect(() => TensorMap.tiled({ ...base, dtype: 'f8' as never })).toThrow(/dtype must be one of 'u8'/);
    expect(() => TensorMap.tiled({ ...base, shape: [1, 1, 1, 1, 1, 1], box: [1, 1, 1, 1, 1, 1] })).toThrow(/shape must be an array of 1 to 5 dimensions, got 6 entries/);
    expect(() => TensorMap.tiled({ ...base, swizzle: '256B' as never })).toThrow(/swizzle must be one of 'none'/);
    expect(() => TensorMap.tiled({ ...base, strides: [64, 64] })).toThrow(/strides must have 1 entries/);
    expect(() => TensorMap.tiled({ ...base, buffer: 0x1000 as never })).toThrow(/buffer must be a DeviceBuffer/);
    expect(() => TensorMap.tiled({ ...base, dtype: 'u4x16align8' })).toThrow(/strides are required with the packed dtype/);
    expect(() => TensorMap.tiled({ ...base, tile: [8, 8] } as never)).toThrow(/unknown option 'tile'/);
    expect(named('cuTensorMapEncodeTiled')).toHaveLength(0);
    a.close();
    expect(() => TensorMap.tiled(base)).toThrow(/DeviceBuffer is closed/);
  });

  test('im2col: rank 3 to 5, corners per spatial dimension', () => {
    const a = new FakeBuffer(8 * 8 * 8 * 4 * 2, ctx);
    const map = TensorMap.im2col({ buffer: a, dtype: 'f32', shape: [4, 8, 8, 2], pixelBoxLowerCorner: [-1, -1], pixelBoxUpperCorner: [1, 1], channelsPerPixel: 4, pixelsPerColumn: 32 });
    const args = last('cuTensorMapEncodeIm2col');
    expect(Array.from(args[6] as Int32Array)).toEqual([-1, -1]);
    expect(args.slice(8, 10)).toEqual([4, 32]);
    expect(map.mode).toBe('im2col');
    expect(() => TensorMap.im2col({ buffer: a, dtype: 'f32', shape: [4, 8], pixelBoxLowerCorner: [], pixelBoxUpperCorner: [], channelsPerPixel: 4, pixelsPerColumn: 8 })).toThrow(/TensorMap.im2col: an im2col tensor has rank 3 to 5, got 2/);
    expect(() => TensorMap.im2col({ buffer: a, dtype: 'f32', shape: [4, 8, 8, 2], pixelBoxLowerCorner: [0], pixelBoxUpperCorner: [0, 0], channelsPerPixel: 4, pixelsPerColumn: 8 })).toThrow(/pixelBoxLowerCorner must have 2 entries/);
    expect(() => TensorMap.im2col({ buffer: a, dtype: 'f32', shape: [4, 8, 8, 2], pixelBoxLowerCorner: [0, 0], pixelBoxUpperCorner: [0, 0], channelsPerPixel: 0, pixelsPerColumn: 8 })).toThrow(/channelsPerPixel must be from 1 to 256/);
    map.close();
    a.close();
  });
});

describe('CudaArray, TextureObject, SurfaceObject (fake driver)', () => {
  const ctx = fakeContext(0xc0);

  test('array descriptor, whole-array copies, texture and surface descriptors; parents kept alive', () => {
    const arr = CudaArray.create({ width: 32, height: 16, format: 'f32', channels: 2, surface: true, context: ctx });
    const d = dv(last('cuArray3DCreate')[1]);
    expect([Number(d.getBigUint64(0, true)), Number(d.getBigUint64(8, true)), Number(d.getBigUint64(16, true)), d.getInt32(24, true), d.getUint32(28, true), d.getUint32(32, true)]).toEqual([32, 16, 0, 0x20, 2, 2]);
    expect(arr.byteLength).toBe(32 * 16 * 8);
    const host = new Float32Array(32 * 16 * 2);
    arr.copyFrom(host);
    const m = dv(last('cuMemcpy3D')[0]);
    expect(m.getInt32(32, true)).toBe(1); // src host
    expect(Number(m.getBigUint64(40, true))).toBe(Number(koffi.address(host.buffer)));
    expect(Number(m.getBigUint64(72, true))).toBe(256); // pitch: a packed row
    expect(m.getInt32(120, true)).toBe(3); // dst array
    expect(Number(m.getBigUint64(144, true))).toBe(0xa000);
    expect([Number(m.getBigUint64(176, true)), Number(m.getBigUint64(184, true)), Number(m.getBigUint64(192, true))]).toEqual([256, 16, 1]);
    const dev = new FakeBuffer(arr.byteLength, ctx);
    arr.copyTo(dev);
    const m2 = dv(last('cuMemcpy3D')[0]);
    expect([m2.getInt32(32, true), m2.getInt32(120, true)]).toEqual([3, 2]);
    expect(Number(m2.getBigUint64(136, true))).toBe(dev.ptr);
    expect(() => arr.copyFrom(new Float32Array(4))).toThrow(/CudaArray.copyFrom: the array holds 4096 bytes, the source 16/);

    const tex = TextureObject.create(arr, { filterMode: 'linear', addressMode: ['clamp', 'border'], normalizedCoordinates: true, borderColor: [1, 2, 3, 4] });
    const [, res, td, view] = last('cuTexObjectCreate');
    expect(dv(res).getInt32(0, true)).toBe(0);
    expect(Number(dv(res).getBigUint64(8, true))).toBe(0xa000);
    const t = dv(td);
    expect([t.getInt32(0, true), t.getInt32(4, true), t.getInt32(8, true), t.getInt32(12, true), t.getUint32(16, true)]).toEqual([1, 3, 3, 1, 1 | 2]);
    expect(t.getFloat32(52, true)).toBe(4);
    expect(view).toBeNull();
    expect(tex.handle).toBe(7);
    const surf = SurfaceObject.create(arr);
    expect(surf.handle).toBe(9);
    arr.close();
    expect(named('cuArrayDestroy')).toHaveLength(0);
    tex.close();
    expect(named('cuTexObjectDestroy')).toEqual([[7]]);
    expect(named('cuArrayDestroy')).toHaveLength(0);
    surf.close();
    expect(named('cuArrayDestroy')).toEqual([[0xa000]]);
    expect(() => tex.handle).toThrow(/TextureObject is closed/);
    dev.close();
  });

  test('linear and pitched textures over a buffer keep it alive; validation names the argument', () => {
    const b = new FakeBuffer(4096, ctx, 0x7f6000000000);
    const lin = TextureObject.create({ buffer: b, format: 'u8', channels: 4 }, { readMode: 'normalizedFloat' });
    let res = dv(last('cuTexObjectCreate')[1]);
    expect([res.getInt32(0, true), Number(res.getBigUint64(8, true)), res.getInt32(16, true), res.getUint32(20, true), Number(res.getBigUint64(24, true))]).toEqual([2, 0x7f6000000000, 1, 4, 4096]);
    expect(dv(last('cuTexObjectCreate')[2]).getUint32(16, true)).toBe(0); // normalized float: not read as integer
    const pitched = TextureObject.create({ buffer: b, format: 'f32', width: 16, height: 8, pitch: 128 });
    res = dv(last('cuTexObjectCreate')[1]);
    expect([res.getInt32(0, true), Number(res.getBigUint64(24, true)), Number(res.getBigUint64(32, true)), Number(res.getBigUint64(40, true))]).toEqual([3, 16, 8, 128]);
    b.close();
    lin.close();
    expect(b.freed).toBe(0);
    pitched.close();
    expect(b.freed).toBe(1);

    const c = new FakeBuffer(64, ctx);
    expect(() => TextureObject.create({ buffer: c, format: 'f64' as never })).toThrow(/TextureObject.create: format must be one of 'u8'/);
    expect(() => TextureObject.create({ buffer: c, format: 'f32', channels: 3 as never })).toThrow(/channels must be 1, 2 or 4, got number 3/);
    expect(() => TextureObject.create({ buffer: c, format: 'f32', width: 4, height: 8, pitch: 32 })).toThrow(/8 rows of pitch 32 do not fit in the buffer \(64 bytes\)/);
    expect(() => TextureObject.create({ buffer: c, format: 'f32', width: 2, height: 2 })).toThrow(/pitch 8 is not a multiple of the device's texture pitch alignment \(32 bytes\)/);
    expect(() => TextureObject.create({ buffer: new FakeBuffer(64, ctx, 0x7f6000000100), format: 'f32' })).toThrow(/TextureObject.create: the buffer's address 0x7f6000000100 is not aligned to the device's texture alignment \(512 bytes\)/);
    expect(() => TextureObject.create({ buffer: c, format: 'f32' }, { filterMode: 'cubic' as never })).toThrow(/filterMode must be 'point' or 'linear'/);
    expect(() => TextureObject.create({ buffer: c, format: 'f32' }, { addressMode: 'repeat' as never })).toThrow(/addressMode must be 'wrap', 'clamp', 'mirror' or 'border'/);
    expect(() => TextureObject.create({ buffer: c, format: 'f32' }, { borderColor: [1, 2] as never })).toThrow(/borderColor must be 4 finite numbers/);
    expect(() => TextureObject.create(42 as never)).toThrow(/TextureObject.create: source must be a CudaArray/);
    const plain = CudaArray.create({ width: 8, format: 'u8', context: ctx });
    expect(() => SurfaceObject.create(plain)).toThrow(/SurfaceObject.create: the array was not created with surface: true/);
    expect(() => SurfaceObject.create(c as never)).toThrow(/a surface is made over a CudaArray/);
    expect(() => CudaArray.create({ width: 0, format: 'u8', context: ctx })).toThrow(/CudaArray.create: width must be an integer ≥ 1/);
    expect(() => CudaArray.create({ width: 4, depth: 2, format: 'u8', context: ctx })).toThrow(/a 3-D array needs a height/);
    expect(() => CudaArray.create({ width: 4, format: 'u8', layered: true, context: ctx })).toThrow(/a layered array needs depth/);
    plain.close();
    expect(() => TextureObject.create(plain)).toThrow(/CudaArray is closed/);
    c.close();
  });
});
