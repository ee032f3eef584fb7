// A host buffer's length comes from the engine, never from a `byteLength` property the caller defined:
// a 1-byte view claiming 4 bytes would let C write past it (issue 47's "record read twice" family).
import { existsSync } from 'node:fs';
import { hostByteLength, pointerArg } from '../support';
import { hostBytes } from '../src/memory/arguments';

/** `v` with an own byteLength property claiming `claim` bytes. */
function lying<T extends object>(v: T, claim: number): T {
  Object.defineProperty(v, 'byteLength', { value: claim });
  return v;
}

describe('hostByteLength', () => {
  test('reads typed arrays, DataViews, Buffers and ArrayBuffers from their internal slot', () => {
    expect(hostByteLength(lying(new Uint8Array(1), 1 << 20))).toBe(1);
    expect(hostByteLength(lying(new Float64Array(3), 4))).toBe(24);
    expect(hostByteLength(lying(new DataView(new ArrayBuffer(8), 2, 3), 100))).toBe(3);
    expect(hostByteLength(lying(Buffer.alloc(5), 500))).toBe(5);
    expect(hostByteLength(lying(new ArrayBuffer(7), 70))).toBe(7);
    expect(hostByteLength(lying(new SharedArrayBuffer(9), 90))).toBe(9);
  });
  test('anything else is not host memory', () => {
    for (const v of [{ byteLength: 8 }, new Proxy(new Uint8Array(4), {}), 8, null, undefined, 'abcd']) expect(hostByteLength(v)).toBeUndefined();
  });
});

describe('the checks that size host memory use it', () => {
  test('pointerArg: a 1-byte view claiming 4 bytes is shorter than the 4 the call touches', () => {
    expect(() => pointerArg('cuFake', 'p', lying(new Uint8Array(1), 4), false, 4)).toThrow(/cuFake: p is a host buffer of 1 bytes, shorter than the 4 bytes/);
  });
  test('hostBytes (the objects layer copies): the real length, and a DataView keeps its own window', () => {
    expect(hostBytes('DeviceBuffer.copyFrom', lying(new Uint8Array(2), 1 << 30)).byteLength).toBe(2);
    const backing = new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7]);
    const dv = new DataView(backing.buffer, 4, 2);
    Object.defineProperty(dv, 'buffer', { value: new ArrayBuffer(1 << 20) });
    Object.defineProperty(dv, 'byteOffset', { value: 0 });
    const { ptr, byteLength } = hostBytes('DeviceBuffer.copyFrom', lying(dv, 1 << 20));
    expect(byteLength).toBe(2);
    expect(Array.from(ptr as Uint8Array)).toEqual([4, 5]);
  });
  const cudart = ['/usr/local/cuda/lib64/libcudart.so.13', '/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.13'].some(existsSync);
  (cudart ? test : test.skip)('the raw layer refuses it before the call (cudaGetDeviceCount writes 4 bytes)', () => {
    const raw = require('../generated/13.0/runtime/raw') as typeof import('../generated/13.0/runtime/raw');
    expect(() => raw.cudaGetDeviceCount(lying(new Uint8Array(1), 4))).toThrow(/cudaGetDeviceCount: count is 1 bytes, shorter than the 4-byte value/);
    expect(() => raw.cudaGetDeviceCount(lying(new Int32Array(1), 4))).not.toThrow();
  });
});
