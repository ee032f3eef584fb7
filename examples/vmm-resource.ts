// A growable device buffer through CUDA's virtual memory management: `npx tsx examples/vmm-resource.ts`.
// `VirtualMemoryResource` reserves 1 GiB of address space (no memory yet), maps one chunk, then grows
// chunk by chunk (cuMemCreate → cuMemMap → cuMemSetAccess) while a kernel appends to it. The address
// never moves, so what was written before each growth is still there and the first buffer stays valid.
import { LaunchConfig, Stream, VirtualMemoryResource, compile, launch } from '../src';
import { done, requireGpu } from './gpu-check';

const SOURCE = `
extern "C" __global__ void fill(unsigned* p, unsigned long long first, unsigned long long n) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i < n) p[first + i] = (unsigned)((first + i) * 2654435761ull);
}`;

async function main(): Promise<void> {
  const device = requireGpu('vmm-resource');
  device.setCurrent();
  const { program, module } = compile(SOURCE, { name: 'vmm-resource.cu' });
  const fill = module.kernel('fill', ['ptr', 'u64', 'u64']);
  const stream = Stream.create();
  const vm = VirtualMemoryResource.create({ maxSize: 1 << 30 });
  const address = vm.address;
  const first = vm.buffer(0, 0); // a buffer made before any growth stays valid (it keeps the region alive)
  const steps = 8;
  let written = 0;
  for (let step = 0; step < steps; step++) {
    const mapped = vm.grow(vm.granularity * (step + 1)); // each growth maps a bigger chunk after the last
    const words = mapped / 4;
    const region = vm.buffer();
    launch(stream, LaunchConfig.linear(words - written), fill, region, written, words - written);
    written = words;
    region.close();
  }
  await stream.synchronized();
  const all = vm.buffer().toArray(Uint32Array);
  let bad = 0;
  for (let i = 0; i < all.length; i++) if (all[i] !== Number((BigInt(i) * 2654435761n) & 0xffffffffn)) bad++;
  const stable = vm.address === address && first.ptr === address;
  const summary =
    `reserved ${vm.reservedSize / 2 ** 20} MiB at 0x${address.toString(16)}, grew to ${vm.mappedSize / 2 ** 20} MiB in ${vm.chunkCount} chunks ` +
    `(granularity ${vm.granularity / 2 ** 20} MiB); address stable: ${stable}; ${all.length - bad}/${all.length} words written across growths read back`;
  for (const x of [first, vm, stream, fill, module, program]) x.close();
  done('vmm-resource', bad === 0 && stable && all.length === written, summary);
}
void main();
