// VMM, batched copies, tensor maps and textures without a GPU (the fake driver of test/helpers/memory-fakes.ts):
// record encoding and validation are checked for real.
import koffi from 'koffi';
import { copyBatch, provideDriverVersion } from '../src/memory/copy-batch';
import { Stream } from '../src/stream';
import { TensorMap } from '../src/tensormap';
import { CudaArray, SurfaceObject, TextureObject } from '../src/texture';
import { VirtualMemoryResource } from '../src/memory/vmm';
import { fakeContext } from './helpers/fake-driver';
import { FakeBuffer, MiB, dv, installMemoryFakes, last, named } from './helpers/memory-fakes';

installMemoryFakes();

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
    expect(maps.map((a) => [a[0], a[1]])).toEqual([
      [0x7e0000000000, 2 * MiB],
      [0x7e0000000000 + 2 * MiB, 4 * MiB],
    ]);
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
    expect(() => VirtualMemoryResource.create({ maxSize: MiB, granularity: 'huge' as never, context: ctx })).toThrow(
      /granularity must be 'minimum' or 'recommended'/,
    );
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
    copyBatch(
      s,
      [
        { dst: a, src: b, bytes: 128 },
        { dst: b, src: host, dstOffset: 64 },
        { dst: a, src: b, srcOffset: 8, dstOffset: 128, bytes: 8 },
      ],
      { preferOverlapWithCompute: true },
    );
    const [dsts, srcs, sizes, n, attrs, idxs, numAttrs, h] = last('cuMemcpyBatchAsync') as [
      BigUint64Array,
      BigUint64Array,
      BigUint64Array,
      number,
      Uint8Array,
      BigUint64Array,
      number,
      number,
    ];
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
    copyBatch(
      s,
      [
        { dst: a, src: b },
        { dst: b, src: a },
      ],
      { srcAccessOrder: 'any' },
    );
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
    expect(() =>
      copyBatch(s, [
        { dst: a, src: a },
        { dst: new Uint8Array(4) as never, src: a },
      ]),
    ).toThrow(/copies\[1\].dst: host data cannot be a batched-copy destination/);
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
      expect(() => copyBatch(s, [{ dst: a, src: a }])).toThrow(
        /batched copies need a CUDA 13.0 driver .* the 12.8 form this driver has takes other arguments; the installed driver supports CUDA 12.8/,
      );
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
    expect(() => TensorMap.tiled({ ...base, shape: [1, 1, 1, 1, 1, 1], box: [1, 1, 1, 1, 1, 1] })).toThrow(
      /shape must be an array of 1 to 5 dimensions, got 6 entries/,
    );
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
    const map = TensorMap.im2col({
      buffer: a,
      dtype: 'f32',
      shape: [4, 8, 8, 2],
      pixelBoxLowerCorner: [-1, -1],
      pixelBoxUpperCorner: [1, 1],
      channelsPerPixel: 4,
      pixelsPerColumn: 32,
    });
    const args = last('cuTensorMapEncodeIm2col');
    expect(Array.from(args[6] as Int32Array)).toEqual([-1, -1]);
    expect(args.slice(8, 10)).toEqual([4, 32]);
    expect(map.mode).toBe('im2col');
    expect(() =>
      TensorMap.im2col({ buffer: a, dtype: 'f32', shape: [4, 8], pixelBoxLowerCorner: [], pixelBoxUpperCorner: [], channelsPerPixel: 4, pixelsPerColumn: 8 }),
    ).toThrow(/TensorMap.im2col: an im2col tensor has rank 3 to 5, got 2/);
    expect(() =>
      TensorMap.im2col({
        buffer: a,
        dtype: 'f32',
        shape: [4, 8, 8, 2],
        pixelBoxLowerCorner: [0],
        pixelBoxUpperCorner: [0, 0],
        channelsPerPixel: 4,
        pixelsPerColumn: 8,
      }),
    ).toThrow(/pixelBoxLowerCorner must have 2 entries/);
    expect(() =>
      TensorMap.im2col({
        buffer: a,
        dtype: 'f32',
        shape: [4, 8, 8, 2],
        pixelBoxLowerCorner: [0, 0],
        pixelBoxUpperCorner: [0, 0],
        channelsPerPixel: 0,
        pixelsPerColumn: 8,
      }),
    ).toThrow(/channelsPerPixel must be from 1 to 256/);
    map.close();
    a.close();
  });
});

describe('CudaArray, TextureObject, SurfaceObject (fake driver)', () => {
  const ctx = fakeContext(0xc0);

  test('array descriptor, whole-array copies, texture and surface descriptors; parents kept alive', () => {
    const arr = CudaArray.create({ width: 32, height: 16, format: 'f32', channels: 2, surface: true, context: ctx });
    const d = dv(last('cuArray3DCreate')[1]);
    expect([
      Number(d.getBigUint64(0, true)),
      Number(d.getBigUint64(8, true)),
      Number(d.getBigUint64(16, true)),
      d.getInt32(24, true),
      d.getUint32(28, true),
      d.getUint32(32, true),
    ]).toEqual([32, 16, 0, 0x20, 2, 2]);
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
    expect([
      res.getInt32(0, true),
      Number(res.getBigUint64(8, true)),
      res.getInt32(16, true),
      res.getUint32(20, true),
      Number(res.getBigUint64(24, true)),
    ]).toEqual([2, 0x7f6000000000, 1, 4, 4096]);
    expect(dv(last('cuTexObjectCreate')[2]).getUint32(16, true)).toBe(0); // normalized float: not read as integer
    const pitched = TextureObject.create({ buffer: b, format: 'f32', width: 16, height: 8, pitch: 128 });
    res = dv(last('cuTexObjectCreate')[1]);
    expect([res.getInt32(0, true), Number(res.getBigUint64(24, true)), Number(res.getBigUint64(32, true)), Number(res.getBigUint64(40, true))]).toEqual([
      3, 16, 8, 128,
    ]);
    b.close();
    lin.close();
    expect(b.freed).toBe(0);
    pitched.close();
    expect(b.freed).toBe(1);

    const c = new FakeBuffer(64, ctx);
    expect(() => TextureObject.create({ buffer: c, format: 'f64' as never })).toThrow(/TextureObject.create: format must be one of 'u8'/);
    expect(() => TextureObject.create({ buffer: c, format: 'f32', channels: 3 as never })).toThrow(/channels must be 1, 2 or 4, got number 3/);
    expect(() => TextureObject.create({ buffer: c, format: 'f32', width: 4, height: 8, pitch: 32 })).toThrow(
      /8 rows of pitch 32 do not fit in the buffer \(64 bytes\)/,
    );
    expect(() => TextureObject.create({ buffer: c, format: 'f32', width: 2, height: 2 })).toThrow(
      /pitch 8 is not a multiple of the device's texture pitch alignment \(32 bytes\)/,
    );
    expect(() => TextureObject.create({ buffer: new FakeBuffer(64, ctx, 0x7f6000000100), format: 'f32' })).toThrow(
      /TextureObject.create: the buffer's address 0x7f6000000100 is not aligned to the device's texture alignment \(512 bytes\)/,
    );
    expect(() => TextureObject.create({ buffer: c, format: 'f32' }, { filterMode: 'cubic' as never })).toThrow(/filterMode must be 'point' or 'linear'/);
    expect(() => TextureObject.create({ buffer: c, format: 'f32' }, { addressMode: 'repeat' as never })).toThrow(
      /addressMode must be 'wrap', 'clamp', 'mirror' or 'border'/,
    );
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
