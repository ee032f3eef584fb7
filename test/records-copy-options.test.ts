// Options read once, before any length (issue 47 §6): a copy's options object may carry getters; one
// that shrinks the host buffer after the copy took its length would make the copy use the stale length
// (the driver then reads or writes past the buffer). DeviceBuffer.copyFrom/copyTo read every option into
// locals first, so the length they take is the buffer's length after every getter has run. The driver is
// a fake recording what it was given.
import * as drv from '../src/driver';
import { DeviceBuffer } from '../src/memory';
import type { Context } from '../src/context';
import { fakeContext, out, type FakeFn as Fn } from './helpers/fake-driver';
import { SEALED } from '../src/sealed';

const calls: [string, unknown[]][] = [];
const fakes: Record<string, Fn> = {
  cuCtxGetCurrent: (slot: BigUint64Array) => out(slot, 0xc0),
  cuCtxSetCurrent: () => 0,
  cuMemcpyHtoD: () => 0,
  cuMemcpyDtoH: () => 0,
  cuStreamSynchronize: () => 0,
};

beforeAll(() => {
  for (const [name, fn] of Object.entries(fakes)) {
    drv.provideNative(name, ((...args: unknown[]) => (calls.push([name, args]), fn(...args))) as never);
  }
});
afterAll(() => {
  for (const name of Object.keys(fakes)) drv.provideNative(name, undefined);
});
beforeEach(() => {
  calls.length = 0;
});

/** The byte count of the last call of `name`. */
const lastCount = (name: string): unknown => calls.filter(([n]) => n === name).at(-1)?.[1][2];

class FakeBuffer extends DeviceBuffer {
  constructor(bytes: number, ctx: Context) {
    super(SEALED, 'DeviceBuffer', 0x7f1000000000, bytes, ctx, () => undefined);
  }
}

/** A 64-byte host view tracking a resizable buffer, and options whose `byteLength` getter shrinks it to 4 bytes. */
function shrinking(): { view: Uint8Array; options: { byteLength?: number }; reads: () => number } {
  const ab = new (ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => ArrayBuffer & { resize(n: number): void })(64, {
    maxByteLength: 64,
  });
  const view = new Uint8Array(ab); // length-tracking: shrinks with the buffer
  let reads = 0;
  const options = {
    get byteLength(): undefined {
      reads++;
      ab.resize(4);
      return undefined;
    },
  };
  return { view, options, reads: () => reads };
}

describe("a copy reads its options once, before taking a host buffer's length", () => {
  const ctx = fakeContext(0xc0);

  test('copyFrom: a getter that shrinks the source leaves a 4-byte copy, not a stale 64-byte one', () => {
    const buf = new FakeBuffer(64, ctx);
    const { view, options, reads } = shrinking();
    buf.copyFrom(view, options);
    expect(lastCount('cuMemcpyHtoD')).toBe(4);
    expect(reads()).toBe(1);
  });

  test('copyTo: a getter that shrinks the destination leaves a 4-byte copy (no write past its end)', () => {
    const buf = new FakeBuffer(64, ctx);
    const { view, options, reads } = shrinking();
    buf.copyTo(view, options);
    expect(lastCount('cuMemcpyDtoH')).toBe(4);
    expect(reads()).toBe(1);
  });

  test('each option is read once (offset, stream and byteLength)', () => {
    const buf = new FakeBuffer(64, ctx);
    const reads: string[] = [];
    const options = new Proxy({ offset: 8, byteLength: 16 }, { get: (t, k, r) => (reads.push(String(k)), Reflect.get(t, k, r)) });
    buf.copyTo(new Uint8Array(32), options);
    buf.copyFrom(new Uint8Array(32), options);
    expect(reads.sort()).toEqual(['byteLength', 'byteLength', 'offset', 'offset', 'stream', 'stream']);
    expect(lastCount('cuMemcpyHtoD')).toBe(16);
  });
});
