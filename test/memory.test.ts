// Memory resources, buffers, copies, tensor maps and textures without a GPU: the driver is replaced by fakes (drv.provideNative)
// that record what they were given (and, for host memory, hand out real koffi allocations), so record
// encoding, validation, deallocation streams and parents kept alive are checked for real.
import * as drv from '../src/driver';
import { CachingAllocator } from '../src/memory/allocator';
import { DeviceBuffer, ManagedBuffer, MemoryPool, PinnedHostBuffer } from '../src/memory';
import { Stream } from '../src/stream';
import { fakeContext } from './helpers/fake-driver';
import { FakeBuffer, MiB, calls, dv, installMemoryFakes, last, named } from './helpers/memory-fakes';

installMemoryFakes();

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
    expect([dv(desc).getInt32(0, true), dv(desc).getInt32(4, true), dv(desc).getInt32(8, true)]).toEqual([
      drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE,
      0,
      3,
    ]);
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
    expect(() => MemoryPool.managed({ context: ctx, preferredLocation: 'gpu' as never })).toThrow(
      /MemoryPool.managed: preferredLocation: a location is 'host'/,
    );
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
    expect(() => DeviceBuffer.wrap('0x10' as never, 16, { context: ctx })).toThrow(
      /DeviceBuffer.wrap: pointer must be an address \(number or bigint\), got string/,
    );
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
