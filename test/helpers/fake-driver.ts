// The fake driver the unit tests share (no GPU): Context stand-ins, out-parameter writes, and
// driver functions replaced through drv.provideNative with every call logged.
import * as drv from '../../src/driver';
import { Context } from '../../src/context';
import { Core } from '../../src/lifecycle';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type FakeFn = (...args: any[]) => number;

/** The handle a fake context has unless a test names another. */
export const FAKE_CONTEXT_HANDLE = 0x1234;

/**
 * A Context stand-in (passes instanceof, runs no constructor): it binds through the driver, so a
 * test's fake cuCtxGetCurrent should report `handle`.
 */
export function fakeContext(handle = FAKE_CONTEXT_HANDLE, device = 0): Context {
  const ctx = Object.create(Context.prototype) as Context;
  Object.assign(ctx, { core: new Core('Context', undefined), unusable: undefined, handle, device, primary: true, allocCache: undefined });
  return ctx;
}

/** A Context stand-in that never calls the driver: bind and the bind before a free do nothing. */
export function driverlessContext(handle = FAKE_CONTEXT_HANDLE, device = 0): Context {
  const ctx = fakeContext(handle, device);
  (ctx as unknown as { bind: () => Context }).bind = () => ctx;
  (ctx as unknown as { bindForFree: () => boolean }).bindForFree = () => true;
  return ctx;
}

/** Writes `v` to a handle out-parameter (a one-element BigUint64Array) and returns CUDA_SUCCESS. */
export function out(slot: unknown, v: number | bigint): number {
  (slot as BigUint64Array)[0] = BigInt(v);
  return 0;
}

/**
 * Installs fake driver functions (cuCtxGetCurrent reporting `ctx` and a no-op cuCtxSetCurrent unless
 * `fakes` names them) until `restore`; every call is logged as [name, args].
 */
export function fakeDriver(ctx: Context, fakes: Record<string, FakeFn>): { calls: [string, unknown[]][]; restore: () => void } {
  const calls: [string, unknown[]][] = [];
  const all: Record<string, FakeFn> = {
    cuCtxGetCurrent: (slot: BigUint64Array) => out(slot, ctx.handle),
    cuCtxSetCurrent: () => 0,
    ...fakes,
  };
  for (const [name, fn] of Object.entries(all)) {
    drv.provideNative(name, ((...args: unknown[]) => {
      calls.push([name, args]);
      return fn(...args);
    }) as never);
  }
  return { calls, restore: () => Object.keys(all).forEach((n) => drv.provideNative(n, undefined)) };
}
