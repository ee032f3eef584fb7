// The fake driver of the memory tests (test/memory*.test.ts): fakes that record what they were given
// (and, for host memory, hand out real koffi allocations).
import koffi from 'koffi';
import * as drv from '../../src/driver';
import type { Context } from '../../src/context';
import { provideDriverVersion } from '../../src/memory/copy-batch';
import { DeviceBuffer } from '../../src/memory';
import { out, type FakeFn as Fn } from './fake-driver';
import { SEALED } from '../../src/sealed';

type Call = [string, unknown[]];

/** Every faked driver call of the running test, in order: [name, arguments]. */
export const calls: Call[] = [];
let nextHandle = 0x5000;
let nextPtr = 0x7f0000000000;
const hostBlocks = new Map<number, unknown>();
export const MiB = 1 << 20;

export function hostAlloc(bytes: number): number {
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

/** Puts the fakes in the driver's place for the calling test file (and takes them out after it). */
export function installMemoryFakes(): void {
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
}

/** The arguments of every call of `name`. */
export const named = (name: string): unknown[][] => calls.filter(([n]) => n === name).map(([, a]) => a);
/** The arguments of the last call of `name` (throws when there was none). */
export const last = (name: string): unknown[] => {
  const all = named(name);
  if (all.length === 0) throw new Error(`${name} was not called`);
  return all[all.length - 1];
};

/** A device buffer whose free is counted. */
export class FakeBuffer extends DeviceBuffer {
  freed = 0;
  constructor(bytes: number, ctx: Context, address = 0x7f1000000000) {
    super(SEALED, 'DeviceBuffer', address, bytes, ctx, () => {
      this.freed++;
    });
  }
}

/** A DataView over recorded bytes. */
export const dv = (bytes: unknown): DataView => new DataView((bytes as Uint8Array).buffer, (bytes as Uint8Array).byteOffset, (bytes as Uint8Array).byteLength);
