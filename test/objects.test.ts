// Objects layer without a GPU: argument validation, bounds checks, life cycle, deadlock guards.
import koffi from 'koffi';
import { stringArrayArg, textFrom } from '../support';
import { Device } from '../src/device';
import { Event } from '../src/event';
import { Graph } from '../src/graph';
import { ArgPack, arg, type ArgType } from '../src/kernel-args';
import { LaunchConfig } from '../src/launch-config';
import { launch, launchArgs } from '../src/launch';
import {
  Core,
  DeferredFreeError,
  HostCallbackPendingError,
  Resource,
  assertMayBlock,
  deferError,
  drainAfterHostFuncs,
  hostFuncs,
  throwDeferred,
  whenNoHostFuncs,
} from '../src/lifecycle';
import { DeviceBuffer } from '../src/memory';
import { Kernel, Module } from '../src/module';
import { invalidate } from '../src/validity';
import { Program } from '../src/program';
import { Stream, cudaStream, streamHandle } from '../src/stream';
import { poll } from '../src/poll';
import * as drv from '../src/driver';
import { driverlessContext, fakeDriver } from './helpers/fake-driver';
import { fakeStreamObject } from './helpers/fake-stream';
import { SEALED } from '../src/sealed';

class Thing extends Resource {
  constructor(destroy: () => void, parents: Resource[] = []) {
    super('Thing', destroy, parents);
  }
  use(): number {
    this.assertOpen();
    return 1;
  }
}

class FakeBuffer extends DeviceBuffer {
  constructor(bytes: number, ctx = driverlessContext()) {
    super(SEALED, 'DeviceBuffer', 0x7f0000000000, bytes, ctx, () => undefined);
  }
}

describe('lifecycle', () => {
  test('close is idempotent and use after close throws a clear Error', () => {
    let freed = 0;
    const t = new Thing(() => freed++);
    expect(t.use()).toBe(1);
    t.close();
    t.close();
    expect(freed).toBe(1);
    expect(() => t.use()).toThrow('Thing is closed');
    expect(t.closed).toBe(true);
  });

  test('using / Symbol.dispose and asyncDispose close', async () => {
    let freed = 0;
    {
      using t = new Thing(() => freed++);
      t.use();
    }
    expect(freed).toBe(1);
    const u = new Thing(() => freed++);
    await u[Symbol.asyncDispose]();
    expect(freed).toBe(2);
  });

  test('children keep parents alive: the parent is destroyed after its last child', () => {
    const order: string[] = [];
    const parent = new Thing(() => order.push('parent'));
    const a = new Thing(() => order.push('a'), [parent]);
    const b = new Thing(() => order.push('b'), [parent]);
    parent.close();
    expect(order).toEqual([]);
    expect(() => parent.use()).toThrow('closed');
    a.close();
    expect(order).toEqual(['a']);
    b.close();
    expect(order).toEqual(['a', 'b', 'parent']);
  });

  test('a failing destroy throws from close(); a failing parent destroy is reported at the next call', () => {
    const parent = new Thing(() => {
      throw new Error('parent free failed');
    });
    const child = new Thing(() => undefined, [parent]);
    parent.close();
    child.close(); // the parent's destroy fails here, where nobody asked for it
    const other = new Thing(() => undefined);
    expect(() => other.use()).toThrow(/parent free failed/);
    expect(other.use()).toBe(1); // reported once
    const bad = new Thing(() => {
      throw new Error('boom');
    });
    expect(() => bad.close()).toThrow('boom');
  });

  test('deferred errors are thrown once, grouped', () => {
    deferError(new Error('one'));
    deferError(new Error('two'));
    expect(() => throwDeferred()).toThrow(DeferredFreeError);
    expect(() => throwDeferred()).not.toThrow();
  });

  test('forgotten objects are reclaimed by the FinalizationRegistry (needs --expose-gc)', async () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    if (!gc) {
      console.log('skipped GC reclamation assertion: node runs without --expose-gc (the GPU suite checks it in a child process)');
      return;
    }
    let freed = 0;
    (() => {
      for (let i = 0; i < 100; i++) new Thing(() => freed++);
    })();
    for (let i = 0; i < 10 && freed < 100; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(freed).toBe(100);
  });
});

describe('host-callback deadlock guard', () => {
  afterEach(() => {
    hostFuncs.pending = 0;
  });

  test('blocking waits throw HostCallbackPendingError while a host callback is pending', () => {
    expect(() => assertMayBlock('x')).not.toThrow();
    hostFuncs.pending = 1;
    expect(() => assertMayBlock('Stream.synchronize()')).toThrow(HostCallbackPendingError);
    expect(() => assertMayBlock('Stream.synchronize()')).toThrow(/await stream.synchronized\(\)/);
  });

  test('frees that may block wait until host callbacks drain', () => {
    const ran: number[] = [];
    whenNoHostFuncs(() => ran.push(1));
    expect(ran).toEqual([1]);
    hostFuncs.pending = 1;
    whenNoHostFuncs(() => ran.push(2));
    expect(ran).toEqual([1]);
    hostFuncs.pending = 0;
    drainAfterHostFuncs();
    expect(ran).toEqual([1, 2]);
  });

  test('synchronous copies refuse while a host callback is pending', () => {
    const buf = new FakeBuffer(64);
    hostFuncs.pending = 1;
    expect(() => buf.copyFrom(new Uint8Array(8))).toThrow(HostCallbackPendingError);
    expect(() => buf.copyTo(new Uint8Array(8))).toThrow(HostCallbackPendingError);
    expect(() => buf.memset(0)).toThrow(HostCallbackPendingError);
  });

  test('poll() yields to the event loop and resolves', async () => {
    let n = 0;
    let ticks = 0;
    const t = setInterval(() => ticks++, 1);
    await poll(() => ++n > 50 && ticks > 2, 'test');
    clearInterval(t);
    expect(n).toBeGreaterThan(50);
    await expect(poll(() => false, 'never', { timeoutMs: 20 })).rejects.toThrow('never: timed out after 20 ms');
    await expect(
      poll(() => {
        throw new Error('query failed');
      }, 'x'),
    ).rejects.toThrow('query failed');
  });
});

describe('DeviceBuffer bounds checks (no driver call)', () => {
  test('copies out of bounds throw RangeError before the call', () => {
    const buf = new FakeBuffer(16);
    expect(() => buf.copyFrom(new Float32Array(5))).toThrow(RangeError);
    expect(() => buf.copyFrom(new Uint8Array(8), { offset: 9 })).toThrow(/out of bounds/);
    expect(() => buf.copyFrom(new Uint8Array(8), { byteLength: 9 })).toThrow(RangeError);
    expect(() => buf.copyFrom(new Uint8Array(8), { offset: -1 })).toThrow(RangeError);
    expect(() => buf.copyFrom(new FakeBuffer(32))).toThrow(RangeError);
    expect(() => buf.copyTo(new Uint8Array(8), { offset: 12, byteLength: 8 })).toThrow(RangeError);
    expect(() => buf.copyTo(new Uint8Array(8), { byteLength: 16 })).toThrow(/destination/);
    expect(() => buf.copyTo(new FakeBuffer(8), { byteLength: 16 })).toThrow(RangeError);
    expect(() => buf.copyTo(new Uint8Array(8), { offset: 16 })).toThrow(/at or past the end/);
    expect(() => buf.copyFrom('nope' as never)).toThrow(TypeError);
  });

  test('memset validates width, alignment, range and value', () => {
    const buf = new FakeBuffer(16);
    expect(() => buf.memset(0, { width: 3 as never })).toThrow(TypeError);
    expect(() => buf.memset(0, { width: 4, offset: 2 })).toThrow(/multiple of width/);
    expect(() => buf.memset(0, { width: 4, count: 5 })).toThrow(RangeError);
    expect(() => buf.memset(1.5)).toThrow(TypeError);
  });

  test('subarray views: bounds, shared life, close of the owner closes views', () => {
    const buf = new FakeBuffer(64);
    const v = buf.subarray(16, 32);
    expect(v.byteLength).toBe(16);
    expect(v.ptr).toBe(buf.ptr + 16);
    expect(buf.subarray(-8).byteLength).toBe(8);
    expect(() => buf.subarray(0, 65)).toThrow(RangeError);
    expect(() => v.copyFrom(new Uint8Array(17))).toThrow(RangeError);
    const vv = v.subarray(8);
    expect(vv.ptr).toBe(buf.ptr + 24);
    v.close();
    v.close();
    expect(() => v.ptr).toThrow('closed');
    expect(buf.ptr).toBeGreaterThan(0); // closing a view leaves the owner
    buf.close();
    buf.close();
    expect(() => buf.ptr).toThrow('DeviceBuffer is closed');
    expect(() => vv.ptr).toThrow('closed');
    expect(() => buf.copyFrom(new Uint8Array(1))).toThrow('closed');
  });

  test('toArray refuses a size that is not whole elements', () => {
    expect(() => new FakeBuffer(6).toArray(Float32Array)).toThrow(RangeError);
  });

  test('a sticky error on the context makes its buffers refuse', () => {
    const ctx = driverlessContext();
    const buf = new FakeBuffer(8, ctx);
    drv.fail(ctx, 'cuStreamSynchronize', drv.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS); // marks ctx unusable
    expect(() => buf.ptr).toThrow(/unusable after a sticky device error \(cuStreamSynchronize/);
  });
});

describe('kernel arguments', () => {
  test('layout follows C alignment', () => {
    const p = new ArgPack(['u8', 'f64', 'i16', 'ptr', { struct: 12, align: 4 }, 'f32']);
    expect(p.offsets).toEqual([0, 8, 16, 24, 32, 44]);
    expect(p.byteLength).toBe(48);
    const base = koffi.address(p.bytes.buffer);
    expect(Array.from(p.table, (a) => Number(a - base))).toEqual(p.offsets);
  });

  test('values are written little-endian at their offsets', () => {
    const p = new ArgPack(['ptr', 'f32', 'u32', 'i64', 'u64', 'i8', { struct: 4, align: 4 }]);
    p.write([new FakeBuffer(4), 2.5, 0xffffffff, -5, 2n ** 63n, -1, new Uint8Array([1, 2, 3, 4])], 0, 'k');
    const dv = p.view;
    expect(dv.getBigUint64(0, true)).toBe(0x7f0000000000n);
    expect(dv.getFloat32(8, true)).toBe(2.5);
    expect(dv.getUint32(12, true)).toBe(0xffffffff);
    expect(dv.getBigInt64(16, true)).toBe(-5n);
    expect(dv.getBigUint64(24, true)).toBe(2n ** 63n);
    expect(dv.getInt8(32)).toBe(-1);
    expect(Array.from(p.bytes.subarray(36, 40))).toEqual([1, 2, 3, 4]);
    p.write([0x123456789ab, 0, 0, -(2 ** 40) - 3, 7, 0, new Uint8Array(4)], 0, 'k');
    expect(dv.getBigUint64(0, true)).toBe(0x123456789abn);
    expect(dv.getBigInt64(16, true)).toBe(-(2n ** 40n) - 3n);
  });

  test('the fast kinds (ptr, f32, f64, i32, u32) check as the general path does', () => {
    const p = new ArgPack(['i32', 'u32', 'f64', 'f32']);
    p.write([-(2 ** 31), -0, Math.PI, Number.NaN], 0, 'k');
    expect([p.view.getInt32(0, true), p.view.getUint32(4, true), p.view.getFloat64(8, true), p.view.getFloat32(16, true)]).toEqual([
      -(2 ** 31),
      0,
      Math.PI,
      Number.NaN,
    ]);
    p.write([2 ** 31 - 1, 2 ** 32 - 1, -1.5, 1e39], 0, 'k');
    expect([p.view.getInt32(0, true), p.view.getUint32(4, true), p.view.getFloat64(8, true), p.view.getFloat32(16, true)]).toEqual([
      2 ** 31 - 1,
      2 ** 32 - 1,
      -1.5,
      Infinity,
    ]);
    expect(() => p.write([2 ** 31, 0, 0, 0], 0, 'k')).toThrow(/argument 0 \(i32\) out of range/);
    expect(() => p.write([0.5, 0, 0, 0], 0, 'k')).toThrow(TypeError);
    expect(() => p.write([Number.NaN, 0, 0, 0], 0, 'k')).toThrow(TypeError);
    expect(() => p.write([0, Number.POSITIVE_INFINITY, 0, 0], 0, 'k')).toThrow(TypeError);
    expect(() => p.write([0, 0, 1n, 0], 0, 'k')).toThrow(TypeError);
    expect(() => p.write([0, 0, 0, new FakeBuffer(4)], 0, 'k')).toThrow(/argument 3 \(f32\)/);
    expect(() => p.write([arg.i32(-7), arg.u32(7), arg.f64(0.25), arg.f32(0.5)], 0, 'k')).not.toThrow();
    expect([p.view.getInt32(0, true), p.view.getUint32(4, true), p.view.getFloat64(8, true), p.view.getFloat32(16, true)]).toEqual([-7, 7, 0.25, 0.5]);
  });

  test('wrong count or type is a TypeError, out of range a RangeError', () => {
    const p = new ArgPack(['ptr', 'f32', 'u32']);
    expect(() => p.write([null, 1], 0, 'launch k')).toThrow(/expected 3 argument\(s\) \(ptr, f32, u32\), got 2/);
    expect(() => p.write([null, '1', 3], 0, 'launch k')).toThrow(TypeError);
    expect(() => p.write([{}, 1, 3], 0, 'launch k')).toThrow(/argument 0 \(ptr\)/);
    expect(() => p.write([-1, 1, 3], 0, 'launch k')).toThrow(TypeError);
    expect(() => p.write([null, 1, 1.5], 0, 'launch k')).toThrow(TypeError);
    expect(() => p.write([null, 1, -1], 0, 'launch k')).toThrow(RangeError);
    expect(() => p.write([null, 1, 2 ** 32], 0, 'launch k')).toThrow(RangeError);
    expect(() => p.write([null, arg.f64(1), 3], 0, 'launch k')).toThrow(/declared f32/);
    expect(() => p.write([null, arg.f32(1), arg.u32(3)], 0, 'launch k')).not.toThrow();
    expect(() => new ArgPack(['float' as never])).toThrow(/unknown type 'float'/);
    expect(() => new ArgPack([{ struct: 0 }])).toThrow(TypeError);
    const s = new ArgPack([{ struct: 8 }]);
    expect(() => s.write([new Uint8Array(7)], 0, 'k')).toThrow(/8-byte struct, got 7/);
    const big = new ArgPack(['i64', 'u64']);
    expect(() => big.write([2n ** 63n, 0], 0, 'k')).toThrow(RangeError);
    expect(() => big.write([0, -1], 0, 'k')).toThrow(RangeError);
    expect(() => big.write([0, 1.5], 0, 'k')).toThrow(TypeError);
  });

  test("each signature's compiled writers agree with the general path, and stand in where new Function is forbidden (randomized)", () => {
    // the general path (writeSlot for every argument) is what an ArgPack made while the host forbids
    // compiling its writers uses; both must leave the same bytes and throw the same errors
    const compiled = (types: ArgType[]) => new ArgPack(types);
    const general = (types: ArgType[]) => {
      const original = globalThis.Function;
      globalThis.Function = function () {
        throw new EvalError('code generation from strings disallowed');
      } as unknown as FunctionConstructor;
      try {
        return new ArgPack(types);
      } finally {
        globalThis.Function = original;
      }
    };
    const kinds: ArgType[] = ['ptr', 'f32', 'f64', 'i32', 'u32', 'i8', 'u16', 'i64', 'u64', { struct: 12, align: 4 }];
    const buffer = new FakeBuffer(64);
    const values = [
      0,
      -0,
      1,
      -1,
      7,
      1.5,
      -2.75,
      2 ** 31,
      -(2 ** 31),
      2 ** 32 - 1,
      2 ** 32,
      2 ** 53,
      NaN,
      Infinity,
      1e39,
      5n,
      -1n,
      2n ** 64n,
      '3',
      null,
      undefined,
      {},
      buffer,
      arg.f32(0.25),
      arg.u32(9),
      arg.ptr(buffer),
      new Uint8Array(12),
      new Uint8Array(3),
    ];
    let seed = 12345; // xorshift32: the same cases every run
    const rand = (n: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const outcome = (p: ArgPack, run: () => void) => {
      p.bytes.fill(0xa5);
      try {
        run();
        return Array.from(p.bytes).join(',');
      } catch (e) {
        return `${(e as Error).constructor.name}: ${(e as Error).message}`;
      }
    };
    let writes = 0;
    let failures = 0;
    for (let round = 0; round < 300; round++) {
      const n = rand(7);
      const types = Array.from({ length: n }, () => kinds[rand(kinds.length)]);
      const [a, b] = [compiled(types), general(types)];
      expect(a.offsets).toEqual(b.offsets);
      for (let t = 0; t < 8; t++) {
        // mostly values of the declared type, some of any other (and sometimes one argument too few or many)
        const count = rand(10) === 0 ? Math.max(0, n + rand(3) - 1) : n;
        const args = Array.from({ length: count }, () => values[rand(values.length)]);
        const viaArray = outcome(a, () => a.write(['skipped', ...args], 1, 'launch k'));
        expect(viaArray).toBe(outcome(b, () => b.write(args, 0, 'launch k')));
        if (count <= 4) {
          const few = args.concat([undefined, undefined, undefined, undefined]);
          expect(outcome(a, () => a.writeFew(count, few[0], few[1], few[2], few[3], 'launch k'))).toBe(viaArray);
          expect(outcome(b, () => b.writeFew(count, few[0], few[1], few[2], few[3], 'launch k'))).toBe(viaArray);
        }
        writes++;
        if (/Error/.test(viaArray)) failures++;
      }
    }
    // both outcomes occur often: the model compares writes, not only errors
    expect(failures).toBeGreaterThan(writes / 5);
    expect(writes - failures).toBeGreaterThan(writes / 10);
  });

  test('a loop of launches checks its kernel and stream once, and again after anything closes or fails', () => {
    const ctx = driverlessContext();
    let launched = 0;
    const paramInfo = [8, 4];
    const fake = fakeDriver(ctx, {
      cuLaunchKernelEx: () => (launched++, 0),
      cuFuncGetParamInfo: (_f: unknown, i: number, offset: BigUint64Array, bytes: BigUint64Array) =>
        i < paramInfo.length ? ((offset[0] = 0n), (bytes[0] = BigInt(paramInfo[i])), 0) : 1,
      cuLaunchHostFunc: () => 0,
      cuStreamDestroy_v2: () => 0,
      cuStreamDestroy: () => 0,
    });
    try {
      const module = Object.assign(Object.create(Module.prototype) as Module, { core: new Core('Module', undefined), context: ctx, handle: 0x2000 });
      const kernel = new Kernel(SEALED, module, 0x4000 as never, 'k', ['ptr', 'u32']);
      const newStream = (handle: number) => fakeStreamObject(ctx, handle);
      const stream = newStream(0x3000);
      const buffer = new FakeBuffer(16, ctx);
      const cfg = new LaunchConfig({ grid: 1, block: 32 });
      const go = (s: Stream | undefined = stream) => launch(s, cfg, kernel, buffer, 3);
      for (let i = 0; i < 3; i++) go();
      kernel.launch(undefined, cfg, buffer, 4);
      expect(launched).toBe(4);
      go();
      // what the kernel remembers does not keep the Stream object alive (a stream left to the finalizer)
      expect(Object.values(kernel)).not.toContain(stream);
      // a host function's error, parked on its stream by the real trampoline, is the next launch's error
      stream.launchHostFunc(() => {
        throw new Error('host function failed');
      });
      const [, hostArgs] = fake.calls.filter(([n]) => n === 'cuLaunchHostFunc').pop()!;
      (koffi.decode(hostArgs[1] as bigint, koffi.proto('void', ['void *'])) as unknown as (p: bigint) => void)(hostArgs[2] as bigint);
      expect(() => go()).toThrow(/host function failed/);
      go(); // reported once
      // a free that failed unseen is the next launch's error
      deferError(new Error('late free failed'));
      expect(() => go()).toThrow(DeferredFreeError);
      go();
      // a closed stream, kernel, module or context is refused before the driver, even right after a launch on it
      const other = newStream(0x3100);
      go(other);
      other.close();
      expect(() => go(other)).toThrow(/closed/i);
      expect(launched).toBe(8);
      // a sticky error makes the context unusable
      drv.fail(ctx, 'cuStreamSynchronize', drv.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS);
      expect(() => go()).toThrow(/unusable after a sticky device error/);
      (ctx as unknown as { unusable: unknown }).unusable = undefined;
      invalidate();
      go();
      const second = new Kernel(SEALED, module, 0x4001 as never, 'k2', ['ptr', 'u32']);
      launch(stream, cfg, second, buffer, 1);
      kernel.close();
      expect(() => go()).toThrow(/closed/i);
      launch(stream, cfg, second, buffer, 2);
      module.close();
      expect(() => launch(stream, cfg, second, buffer, 3)).toThrow(/closed/i);
      expect(launched).toBe(11);
    } finally {
      fake.restore();
    }
  });

  test('launch validates before calling the driver', () => {
    let bound = 0;
    const ctx = driverlessContext();
    (ctx as unknown as { bind: () => void }).bind = () => bound++;
    const fakeKernel = (name: string, argPack: ArgPack | undefined) => {
      const k = Object.create(Kernel.prototype) as Kernel;
      Object.assign(k, { name, launchLabel: `launch ${name}`, handle: 1, argPack, check: () => ctx, checkLayout: () => undefined });
      return k;
    };
    const untyped = fakeKernel('k', undefined);
    const cfg = new LaunchConfig({ grid: 1, block: 32 });
    expect(() => launch(undefined, cfg, untyped, 1.0)).toThrow(/has no type: declare the kernel's signature/);
    const typedK = fakeKernel('saxpy', new ArgPack(['f32', 'ptr']));
    expect(() => launch(undefined, cfg, typedK, 1.0)).toThrow(TypeError);
    expect(() => launchArgs(undefined, cfg, typedK, [1.0, 'x'])).toThrow(TypeError);
    expect(() => launch({} as never, cfg, typedK, 1, null)).toThrow(/Symbol.for\("cuda.stream"\)/);
    expect(() => launch({ handle: 1 } as never, cfg, typedK, 1, null)).toThrow(TypeError);
    expect(() => launch(undefined, cfg, { name: 'k', check: () => ctx } as never, 1)).toThrow(/launch: kernel must be a Kernel, got Object/);
    // raw numbers are never streams, whatever their value
    for (const bad of [0xdeadbeef, 2 ** 53 + 1, 0, 1, NaN, Infinity, -1, '1', null, 99999n]) {
      expect(() => launch(bad as never, cfg, typedK, 1, null)).toThrow(TypeError);
      expect(() => launch(bad as never, cfg, typedK, 1, null)).toThrow(/launch saxpy: stream must be a Stream .*got/);
    }
    expect(() => launch(undefined, {} as never, typedK, 1, null)).toThrow(/LaunchConfig: grid is required/);
    expect(bound).toBe(0);
  });

  test('a launch is one cuLaunchKernelEx: the config encoded once, the stream and arguments of each launch', () => {
    const ctx = driverlessContext();
    const seen: { config: number[]; stream: bigint; f: unknown; params: unknown; extra: unknown; value: number }[] = [];
    drv.provideNative('cuCtxGetCurrent', ((slot: BigUint64Array) => ((slot[0] = BigInt(ctx.handle)), 0)) as never);
    drv.provideNative('cuCtxSetCurrent', (() => 0) as never);
    drv.provideNative('cuLaunchKernelEx', ((config: Uint8Array, f: unknown, params: BigUint64Array, extra: unknown) => {
      const dv = new DataView(config.buffer, config.byteOffset, 56);
      // the one argument's value, read through the parameter table's pointer as C would
      const value = koffi.decode(params[0], 'uint32_t') as number;
      seen.push({ config: [0, 4, 8, 12, 16, 20, 24].map((at) => dv.getUint32(at, true)), stream: dv.getBigUint64(32, true), f, params, extra, value });
      return dv.getBigUint64(40, true) === 0n && dv.getUint32(48, true) === 0 ? 0 : 1; // no attributes
    }) as never);
    try {
      const k = Object.create(Kernel.prototype) as Kernel;
      Object.assign(k, {
        name: 'k',
        launchLabel: 'launch k',
        handle: 0x4000,
        module: { context: ctx },
        argPack: new ArgPack(['u32']),
        check: () => ctx,
        checkLayout: () => undefined,
      });
      const stream = fakeStreamObject(ctx, 0x3000);
      const cfg = new LaunchConfig({ grid: [2, 3, 4], block: [64, 2], sharedMemBytes: 128 });
      launch(stream, cfg, k, 7);
      launch(undefined, cfg, k, 8);
      expect(seen.map((c) => [c.config, c.stream, c.f, c.extra, c.value])).toEqual([
        [[2, 3, 4, 64, 2, 1, 128], 0x3000n, 0x4000, null, 7],
        [[2, 3, 4, 64, 2, 1, 128], 0n, 0x4000, null, 8],
      ]);
    } finally {
      for (const n of ['cuCtxGetCurrent', 'cuCtxSetCurrent', 'cuLaunchKernelEx']) drv.provideNative(n, undefined);
    }
  });

  test('LaunchConfig validates and encodes cluster/cooperative attributes once', () => {
    expect(() => new LaunchConfig({ grid: 0, block: 1 })).toThrow(RangeError);
    expect(() => new LaunchConfig({ grid: [1, 1.5], block: 1 })).toThrow(RangeError);
    expect(() => new LaunchConfig({ grid: 1, block: 1, sharedMemBytes: -1 })).toThrow(RangeError);
    expect(() => new LaunchConfig({ grid: 3, block: 1, cluster: 2 })).toThrow(/multiple of cluster/);
    expect(() => new LaunchConfig(undefined as never)).toThrow(TypeError);
    const plain = new LaunchConfig({ grid: { x: 4, y: 2 }, block: [32, 4] });
    expect([plain.gx, plain.gy, plain.gz, plain.bx, plain.by, plain.bz]).toEqual([4, 2, 1, 32, 4, 1]);
    expect(plain.ex.attributes).toBe(0);
    expect(plain.blockThreads).toBe(128);
    const c = new LaunchConfig({ grid: [8, 2, 1], block: 128, sharedMemBytes: 1024, cluster: [2, 1, 1], cooperative: true });
    const dv = c.ex!.view;
    expect([0, 1, 2, 3, 4, 5, 6].map((i) => dv.getUint32(i * 4, true))).toEqual([8, 2, 1, 128, 1, 1, 1024]);
    expect(Number(dv.getBigUint64(40, true))).toBe(Number(koffi.address(dv.buffer)) + 56);
    expect(dv.getUint32(48, true)).toBe(2);
    expect(dv.getInt32(56, true)).toBe(4); // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    expect([dv.getUint32(64, true), dv.getUint32(68, true), dv.getUint32(72, true)]).toEqual([2, 1, 1]);
    expect(dv.getInt32(128, true)).toBe(2); // CU_LAUNCH_ATTRIBUTE_COOPERATIVE
    expect(dv.getInt32(136, true)).toBe(1);
    expect(LaunchConfig.linear(1000, 256).gx).toBe(4);
  });
});

describe('stream protocol and argument validation', () => {
  test('streams are Stream objects or the Symbol.for("cuda.stream") protocol, never bare numbers', () => {
    expect(cudaStream).toBe(Symbol.for('cuda.stream'));
    expect(streamHandle(undefined)).toBe(0);
    for (const bad of [42, 0, 1, 2, NaN, Infinity, 2 ** 53 + 1, 7n, 'x', null, true]) {
      expect(() => streamHandle(bad as never)).toThrow(TypeError);
      expect(() => streamHandle(bad as never, 'Event.record: stream')).toThrow(/^Event.record: stream must be a Stream/);
    }
    expect(() => streamHandle(42 as never)).toThrow(/Stream.wrap\(handle, \{ context \}\)/);
    expect(() => streamHandle(null as never)).toThrow(/^streamHandle: stream must be a Stream/); // named without a `where`
    expect(() => streamHandle({ [Symbol.for('cuda.stream')]: () => 'x' } as never)).toThrow(/a CUstream handle must be a number or bigint, got string "x"/);
    expect(() => streamHandle({ [Symbol.for('cuda.stream')]: () => -1 } as never)).toThrow(RangeError);
    expect(() => streamHandle({ [Symbol.for('cuda.stream')]: () => 2 ** 53 + 2 } as never)).toThrow(RangeError);
    expect(() => streamHandle({} as never)).toThrow(TypeError);
  });

  test('Stream.wrap checks a raw handle before the driver can see it', () => {
    const ctx = driverlessContext();
    expect(() => Stream.wrap(0xdeadbeef, { context: ctx })).toThrow(RangeError);
    expect(() => Stream.wrap(0xdeadbeef, { context: ctx })).toThrow(/not a CUstream handle \(no memory of this process is mapped there\)/);
    expect(() => Stream.wrap(2 ** 53 + 1, { context: ctx })).toThrow(/Stream.wrap: handle/);
    // a number out of range is a RangeError, another JS type a TypeError
    expect(() => Stream.wrap(NaN, { context: ctx })).toThrow(RangeError);
    expect(() => Stream.wrap(Infinity, { context: ctx })).toThrow(RangeError);
    expect(() => Stream.wrap(-5, { context: ctx })).toThrow(RangeError);
    expect(() => Stream.wrap('0x10' as never, { context: ctx })).toThrow(TypeError);
    expect(() => Stream.wrap(0x10000, { context: 1 as never })).toThrow(/Stream.wrap: context must be a Context, got number 1/);
    expect(() => Stream.wrap(0x10000, ctx as never)).toThrow(/options must be \{ context \}/);
    // handles of other kinds of objects are refused by kind
    drv.noteHandle(0x7777000, 'CUevent');
    expect(() => Stream.wrap(0x7777000, { context: ctx })).toThrow(/0x7777000 is a CUevent handle, not a CUstream/);
    drv.forgetHandle(0x7777000);
    drv.remember(ctx); // what the Context constructor does
    expect(() => Stream.wrap(ctx.handle, { context: ctx })).toThrow(/CUcontext handle/);
    // the default streams
    expect(Stream.wrap(0, { context: ctx }).handle).toBe(1);
    expect(Stream.wrap(2n, { context: ctx }).handle).toBe(2);
  });

  test('LaunchConfig rejects missing, malformed and mistyped fields with the field named', () => {
    const bad: [unknown, RegExp][] = [
      [{}, /grid is required/],
      [{ grid: 1 }, /block is required/],
      [{ grid: null, block: 1 }, /LaunchConfig: grid must be a number, \[x, y, z\] or \{ x, y, z \}, got null/],
      [{ grid: [], block: 1 }, /grid as an array has 1 to 3 dimensions/],
      [{ grid: [1, 2, 3, 4], block: 1 }, /grid as an array has 1 to 3 dimensions.*got 4/],
      [{ grid: ['2'], block: 1 }, /grid\[0\] must be a number, got string/],
      [{ grid: { y: 2 }, block: 1 }, /grid.x is required/],
      [{ grid: { x: 1, w: 2 }, block: 1 }, /grid has an unknown field 'w'/],
      [{ grid: 1, block: 1, cooperative: 'abc' }, /cooperative must be a boolean, got string/],
      [{ grid: 1, block: 1, cooperative: 1 }, /cooperative must be a boolean/],
      [{ grid: 1, block: 1, sharedMemBytes: '8' }, /sharedMemBytes must be a number/],
      [{ grid: 1, block: 1, blocks: 2 }, /unknown field 'blocks'/],
      [{ grid: 1, block: 1, cluster: [2, 0] }, /cluster\[1\] must be an integer from 1/],
    ];
    for (const [init, message] of bad) {
      expect(() => new LaunchConfig(init as never)).toThrow(message);
      let e: unknown;
      try {
        new LaunchConfig(init as never);
      } catch (x) {
        e = x;
      }
      expect(e instanceof TypeError || e instanceof RangeError).toBe(true);
    }
    expect(() => new LaunchConfig({ grid: [2 ** 32], block: 1 })).toThrow(RangeError);
    expect(() => LaunchConfig.linear(1000, -1)).toThrow(/LaunchConfig.linear: blockSize must be an integer from 1 to 1024, got -1/);
    expect(() => LaunchConfig.linear(1000, 2048)).toThrow(/blockSize/);
    expect(() => LaunchConfig.linear(0)).toThrow(/LaunchConfig.linear: n must be/);
    expect(() => LaunchConfig.linear('10' as never)).toThrow(TypeError);
    const c = new LaunchConfig({ grid: [3], block: { x: 32, z: 2 }, cooperative: false });
    expect([c.gx, c.gy, c.gz, c.bx, c.by, c.bz, c.cooperative]).toEqual([3, 1, 1, 32, 1, 2, false]);
  });

  test('memory entries name the method and the argument', () => {
    const buf = new FakeBuffer(16);
    expect(() => buf.memset(9, { count: 1.5 })).toThrow(/DeviceBuffer.memset: count must be a non-negative integer, got number 1.5/);
    expect(() => buf.memset(256)).toThrow(/does not fit in 1 byte/);
    expect(() => buf.memset(-129)).toThrow(RangeError);
    expect(() => buf.memset('1' as never)).toThrow(/memset: value must be an integer, got string/);
    expect(() => buf.memset(0, 5 as never)).toThrow(/DeviceBuffer.memset: options must be an object/);
    expect(() => buf.memset(0, { stream: 0xdeadbeef as never })).toThrow(/DeviceBuffer.memset: stream must be a Stream/);
    expect(() => buf.subarray(-1n as never)).toThrow(/DeviceBuffer.subarray: begin must be an integer, got bigint -1/);
    expect(() => buf.subarray(0, 2.5)).toThrow(/end must be an integer/);
    expect(() => buf.toArray(undefined as never)).toThrow(/DeviceBuffer.toArray: expected a TypedArray constructor .*got undefined/);
    expect(() => buf.toArray(Array as never)).toThrow(TypeError);
    expect(() => buf.toArray(Float32Array, 3 as never)).toThrow(/toArray: options must be an object/);
    expect(() => buf.copyFrom(new Uint8Array(4), { stream: 0xdeadbeef as never })).toThrow(/DeviceBuffer.copyFrom: stream must be a Stream/);
    expect(() => buf.copyFrom(new Uint8Array(4), { stream: NaN as never })).toThrow(TypeError);
    expect(() => buf.copyFrom(new Uint8Array(4), { offset: '2' as never })).toThrow(/copyFrom: offset must be a non-negative integer, got string/);
    expect(() => buf.copyTo(new Uint8Array(4), { byteLength: 1.5 })).toThrow(/copyTo: byteLength/);
    expect(() => DeviceBuffer.alloc(-1)).toThrow(/DeviceBuffer.alloc: byteLength must be a non-negative integer, got number -1/);
    // an integer JavaScript cannot hold exactly, and a bigint, are told so (not "must be a non-negative integer")
    expect(() => DeviceBuffer.alloc(2 ** 60)).toThrow(
      /DeviceBuffer.alloc: byteLength must be at most 2\^53 - 1 \(Number.MAX_SAFE_INTEGER\), got number 1152921504606847000/,
    );
    expect(() => DeviceBuffer.alloc(5n as never)).toThrow(/DeviceBuffer.alloc: byteLength must be a number \(a non-negative integer\), got bigint 5/);
    expect(() => DeviceBuffer.alloc(16, { context: '1' as never })).toThrow(/DeviceBuffer.alloc: context must be a Context, got string/);
    expect(() => DeviceBuffer.alloc(16, { stream: 99999 as never })).toThrow(/DeviceBuffer.alloc: stream must be a Stream.*Stream.wrap/);
    expect(() => DeviceBuffer.alloc(16, { stream: Infinity as never })).toThrow(TypeError);
    expect(() => DeviceBuffer.alloc(16, { pool: {} as never })).toThrow(/pool must be a MemoryPool/);
    expect(() => DeviceBuffer.alloc(16, { cache: 'no' as never, context: driverlessContext() })).toThrow(/cache must be a boolean/);
    expect(() => DeviceBuffer.alloc(16, 7 as never)).toThrow(/DeviceBuffer.alloc: options must be an object/);
  });

  test('ArgPack and arg.struct validate struct layouts', () => {
    expect(() => new ArgPack([{ struct: 8, align: 0 }])).toThrow(/ArgPack: signature\[0\]: struct align must be a power of two from 1 to 256, got number 0/);
    expect(() => new ArgPack([{ struct: 8, align: 3 }])).toThrow(RangeError);
    expect(() => new ArgPack([{ struct: 1.5 }])).toThrow(TypeError);
    expect(() => new ArgPack([null as never])).toThrow(/signature\[0\]/);
    expect(() => new ArgPack('ptr' as never)).toThrow(/ArgPack: a kernel signature is an array/);
    expect(() => new ArgPack(['toString' as never])).toThrow(/unknown type 'toString'/);
    expect(() => arg.struct(new Uint8Array(8), 0)).toThrow(/arg.struct: signature\[0\]: struct align/);
    expect(() => arg.struct('abc' as never)).toThrow(/arg.struct: bytes must be/);
  });

  test('validation that needs no driver', () => {
    expect(() => Device.get(-1)).toThrow(RangeError);
    expect(() => Device.get(1.5)).toThrow(RangeError);
    expect(() => Device.get(2 ** 40)).toThrow(/^Device.get: ordinal must be at most 2147483647, got number 1099511627776/);
    expect(() => Event.create({ interprocess: true })).toThrow(/timing: false/);
    expect(() => new Program(42 as never)).toThrow(TypeError);
    expect(() => Graph.capture({} as never, () => undefined)).toThrow(TypeError);
  });

  test('C string arrays for NVRTC/nvJitLink options (the typed layer takes string[])', () => {
    const a = stringArrayArg('nvrtcCompileProgram', 'options', ['-arch=sm_90', '-lto', 'ünï'], false);
    expect(a.count).toBe(3);
    expect(Array.from(a.data!, (p) => koffi.decode(p, 'char', -1))).toEqual(['-arch=sm_90', '-lto', 'ünï']);
    expect(stringArrayArg('nvrtcCompileProgram', 'options', [], false).data).toBeNull();
    expect(() => stringArrayArg('nvrtcCompileProgram', 'options', ['a\0b'], false)).toThrow(/nvrtcCompileProgram: options\[0\] contains a NUL/);
    expect(() => stringArrayArg('nvrtcCompileProgram', 'options', [1], false)).toThrow(/nvrtcCompileProgram: options\[0\] must be a string/);
    expect(textFrom(new Uint8Array([104, 105, 0, 120]))).toBe('hi');
  });
});
