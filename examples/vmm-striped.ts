// One address range striped over every GPU with the objects layer alone: `npx tsx examples/vmm-striped.ts`.
// Reserves an aligned virtual range, creates one physical chunk per stripe on alternating devices
// (PhysicalMemory), maps each at its chosen offset and gives every device access, then one kernel on
// device 0 writes the whole range as one buffer and the host reads it back. pointerInfo confirms where
// each stripe lives. On one GPU the stripes all land on it (the program is the same).
import { Device, LaunchConfig, PhysicalMemory, Stream, VirtualAddressRange, compile, launch, pointerInfo } from '../src';
import { done, requireGpu } from './gpu-check';

const NAME = 'vmm-striped';
const SOURCE = `
extern "C" __global__ void stamp(unsigned* p, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) p[i] = (unsigned)(i * 2654435761ull);
}`;

async function main(): Promise<void> {
  requireGpu(NAME);
  const devices = Array.from({ length: Device.count() }, (_, i) => i);
  Device.get(0).setCurrent();
  const stripe = Math.max(...devices.map((d) => PhysicalMemory.granularity({ location: d })));
  const stripes = 2 * devices.length;
  const range = VirtualAddressRange.reserve({ size: stripes * stripe, alignment: stripe });
  for (let i = 0; i < stripes; i++) {
    const memory = PhysicalMemory.create({ size: stripe, location: devices[i % devices.length] });
    range.map(i * stripe, memory, { accessFrom: devices });
    memory.close(); // the mapping keeps it
  }
  const placed = range.mappings.map((m) => pointerInfo(range.address + m.offset).device);
  const { program, module } = compile(SOURCE, { name: 'vmm-striped.cu' });
  const stamp = module.kernel('stamp', ['ptr', 'u64']);
  const all = range.buffer();
  const words = all.byteLength / 4;
  const stream = Stream.create();
  launch(stream, LaunchConfig.linear(words), stamp, all, words);
  await stream.synchronized();
  const back = all.toArray(Uint32Array);
  let bad = 0;
  for (let i = 0; i < words; i++) if (back[i] !== Number((BigInt(i) * 2654435761n) & 0xffffffffn)) bad++;
  const aligned = range.address % stripe === 0;
  const where = placed.every((d, i) => d === devices[i % devices.length]);
  for (const x of [all, range, stream, stamp, module, program]) x.close();
  done(
    NAME,
    bad === 0 && aligned && where,
    `${stripes} stripes of ${stripe / 2 ** 20} MiB on device(s) [${placed.join(', ')}], range aligned: ${aligned}; ${words - bad}/${words} words read back`,
  );
}
void main();
