// What the driver knows of a pointer, with the objects layer alone: `npx tsx examples/pointer-info.ts`.
// A program handed an address (from a library, a DLPack tensor, a kernel argument) asks `pointerInfo`
// what it is: device, managed, page-locked or pageable memory, its device, whether kernels and the host
// can reach it, and the allocation it belongs to. Checks the answers against what each buffer is.
import { DeviceBuffer, ManagedBuffer, PinnedHostBuffer, pointerInfo, type PointerInfo } from '../src';
import { done, requireGpu } from './gpu-check';

const NAME = 'pointer-info';

/** `info` in one line. */
function describeInfo(what: string, info: PointerInfo): string {
  const range = info.range ? `allocation 0x${info.range.start.toString(16)} + ${info.range.size}` : 'no allocation';
  return `${what.padEnd(26)} ${info.memoryType.padEnd(13)} device ${String(info.device ?? '-').padEnd(3)} kernels ${info.deviceAccessible ? 'yes' : 'no '}  host ${info.hostAccessible ? 'yes' : 'no '}  ${range}`;
}

function main(): void {
  const device = requireGpu(NAME);
  const ctx = device.setCurrent();
  const dev = DeviceBuffer.alloc(1 << 20);
  const inner = dev.subarray(4096, 8192); // an address inside an allocation finds the whole allocation
  const managed = ManagedBuffer.alloc(1 << 16);
  const pinned = PinnedHostBuffer.alloc(1 << 16);
  const pageable = new Float32Array(1024);
  const cases: [string, PointerInfo, (i: PointerInfo) => boolean][] = [
    [
      'device buffer (a view)',
      pointerInfo(inner),
      (i) =>
        i.memoryType === 'device' &&
        i.device === device.ordinal &&
        i.deviceAccessible &&
        !i.hostAccessible &&
        i.range?.start === dev.ptr &&
        i.range.size >= dev.byteLength &&
        i.context === ctx.handle,
    ],
    ['managed buffer', pointerInfo(managed), (i) => i.memoryType === 'managed' && i.deviceAccessible && i.hostAccessible],
    [
      'pinned host buffer',
      pointerInfo(pinned),
      (i) => i.memoryType === 'host' && i.deviceAccessible && i.hostAccessible && i.hostPointer === pinned.hostAddress,
    ],
    ['pageable Float32Array', pointerInfo(pageable), (i) => i.memoryType === 'unregistered' && !i.deviceAccessible && i.hostAccessible],
  ];
  const wrong: string[] = [];
  for (const [what, info, ok] of cases) {
    console.log(describeInfo(what, info));
    if (!ok(info)) wrong.push(what);
  }
  for (const x of [inner, dev, managed, pinned]) x.close();
  done(
    NAME,
    wrong.length === 0,
    wrong.length ? `unexpected answers for ${wrong.join(', ')}` : `${cases.length} kinds of memory told apart by one cuPointerGetAttributes each`,
  );
}
main();
