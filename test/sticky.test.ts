// Issue 47 §7 on the fake driver: after a sticky error nothing waits for what CUDA will never do.
// - host functions enqueued in the dead context are settled (CUDA never calls them after an error), so
//   blocking waits elsewhere are not refused for good and frees deferred behind them run;
// - a second copy of cuda-ts in the same realm (a require-cache reset, the CommonJS and ES builds side by
//   side) throws the sticky error before calling into that context (where a blocking wait could hang);
// - the out-of-memory relief neither waits on a dead context nor synchronizes while a JS callback is
//   pending (cuCtxSynchronize would wait for a callback that needs the calling thread).
import { hostFuncs, whenNoHostFuncs } from '../src/lifecycle';
import { Stream } from '../src/stream';
import * as drv from '../src/driver';
import { fakeContext, fakeDriver } from './helpers/fake-driver';
import { fakeStreamObject } from './helpers/fake-stream';

const ILLEGAL_ADDRESS = drv.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS;

function fakeStream(ctx: ReturnType<typeof fakeContext>, handle: number): Stream {
  return fakeStreamObject(ctx, handle);
}

test('a sticky error settles the host functions CUDA will never call; frees deferred behind them run', async () => {
  const ctx = fakeContext(0x7100);
  const other = fakeContext(0x7200);
  const fake = fakeDriver(ctx, { cuLaunchHostFunc: () => 0 });
  try {
    const dead = fakeStream(ctx, 0x7101);
    const alive = fakeStream(other, 0x7201);
    const ran: string[] = [];
    dead.launchHostFunc(() => ran.push('dead'));
    dead.launchHostFunc(() => ran.push('dead'));
    alive.launchHostFunc(() => ran.push('alive'));
    expect(hostFuncs.pending).toBe(3);
    let freed = false;
    whenNoHostFuncs(() => (freed = true));
    drv.fail(ctx, 'cuStreamSynchronize', ILLEGAL_ADDRESS);
    expect(ctx.unusable).toBeDefined();
    expect(dead.pendingHostFuncs).toBe(0);
    expect(alive.pendingHostFuncs).toBe(1); // another context's are still due
    expect(hostFuncs.pending).toBe(1);
    // the other context's callback runs; then nothing is pending and the deferred free runs
    const [, args] = fake.calls.filter(([n]) => n === 'cuLaunchHostFunc').pop()!;
    const koffi = require('koffi') as typeof import('koffi');
    (koffi.decode(args[1] as bigint, koffi.proto('void', ['void *'])) as unknown as (p: bigint) => void)(args[2] as bigint);
    expect(ran).toEqual(['alive']);
    expect(hostFuncs.pending).toBe(0);
    await new Promise((r) => setImmediate(r));
    expect(freed).toBe(true);
    // a blocking wait on the dead stream throws the sticky error, not HostCallbackPendingError
    expect(() => dead.synchronize()).toThrow(/unusable after a sticky device error/);
  } finally {
    fake.restore();
  }
});

test('another copy of cuda-ts in this realm throws the sticky error before calling into the dead context', () => {
  const ctx = fakeContext(0x7300);
  const fake = fakeDriver(ctx, {});
  try {
    drv.fail(ctx, 'cuCtxSynchronize', ILLEGAL_ADDRESS);
  } finally {
    fake.restore();
  }
  jest.isolateModules(() => {
    const drv2 = require('../src/driver') as typeof drv;
    const { fakeContext: fakeContext2 } = require('./helpers/fake-driver') as typeof import('./helpers/fake-driver');
    expect(drv2).not.toBe(drv); // a fresh copy, which never saw the error
    const fresh = fakeContext2(0x7300);
    const called: string[] = [];
    drv2.provideNative('cuCtxSynchronize', (() => (called.push('cuCtxSynchronize'), 0)) as never);
    drv2.provideNative('cuCtxGetCurrent', ((slot: BigUint64Array) => ((slot[0] = 0x7300n), 0)) as never);
    expect(() => drv2.call(fresh, 'cuCtxSynchronize')).toThrow(/unusable after a sticky device error.*ILLEGAL_ADDRESS/);
    expect(called).toEqual([]);
    expect(fresh.unusable).toBeDefined();
    expect(drv2.bindForRelease(fresh)).toBe(false); // frees are skipped, as in the copy that saw it
  });
});

test('out-of-memory relief: no cuCtxSynchronize while a JS callback is pending, no wait on a dead context', () => {
  const { DeviceBuffer } = require('../src/memory') as typeof import('../src/memory');
  const a = fakeContext(0x7400);
  const b = fakeContext(0x7500, 1);
  const calls: string[] = [];
  let current = 0;
  let failAllocs = 0;
  let nextPtr = 0x7f0000000000;
  let nextStream = 0x7600;
  const fakes: Record<string, (...args: never[]) => number> = {
    cuCtxGetCurrent: (slot: BigUint64Array) => ((slot[0] = BigInt(current)), 0),
    cuCtxSetCurrent: (h: number) => ((current = h), 0),
    cuCtxSynchronize: () => (calls.push('cuCtxSynchronize'), 0),
    cuStreamCreateWithPriority: (o: BigUint64Array) => ((o[0] = BigInt((nextStream += 0x10))), 0),
    cuStreamDestroy: () => 0,
    cuLaunchHostFunc: () => 0,
    cuMemAllocAsync: (o: BigUint64Array, bytes: number) => {
      calls.push('cuMemAllocAsync');
      if (failAllocs > 0 && failAllocs--) return drv.CUresult.CUDA_ERROR_OUT_OF_MEMORY;
      o[0] = BigInt(nextPtr);
      nextPtr += bytes;
      return 0;
    },
    cuMemFreeAsync: () => (calls.push('cuMemFreeAsync'), 0),
    cuDeviceGet: (o: Int32Array, ordinal: number) => ((o[0] = ordinal), 0),
    cuDeviceGetMemPool: (o: BigUint64Array) => ((o[0] = 0xd00n), 0),
    cuMemPoolTrimTo: () => (calls.push('cuMemPoolTrimTo'), 0),
  };
  for (const [name, fn] of Object.entries(fakes)) drv.provideNative(name, fn as never);
  try {
    const sa = Stream.create({ context: a });
    const sb = Stream.create({ context: b });
    DeviceBuffer.alloc(1 << 20, { stream: sa }).close(); // cached on a
    DeviceBuffer.alloc(1 << 20, { stream: sb }).close(); // cached on b
    // b dies with its block still cached; a's next allocation runs out of memory
    drv.fail(b, 'cuStreamSynchronize', ILLEGAL_ADDRESS);
    calls.length = 0;
    failAllocs = 1;
    DeviceBuffer.alloc(3 << 20, { stream: sa }).close(); // before, the relief threw b's sticky error here
    expect(calls).toEqual(['cuMemAllocAsync', 'cuMemFreeAsync', 'cuCtxSynchronize', 'cuMemPoolTrimTo', 'cuMemAllocAsync']);
    // with a JS host callback pending, the relief gives its blocks back but waits for nothing
    sa.launchHostFunc(() => undefined);
    calls.length = 0;
    failAllocs = 1;
    DeviceBuffer.alloc(8 << 20, { stream: sa }); // another size class: the cached 3 MiB block is given back
    expect(calls).toEqual(['cuMemAllocAsync', 'cuMemFreeAsync', 'cuMemAllocAsync']);
    drv.fail(a, 'cuStreamSynchronize', ILLEGAL_ADDRESS); // settles the pending callback (see above)
    expect(hostFuncs.pending).toBe(0);
  } finally {
    for (const name of Object.keys(fakes)) drv.provideNative(name, undefined);
  }
});
