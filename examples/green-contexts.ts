// Green contexts: the device's SMs split into two groups, each a context with its own stream:
// `npx tsx examples/green-contexts.ts`. Each kernel records the SM (%smid) every block ran on; the
// check is that each green context's blocks stayed on at most its SM count and that the two sets of
// SMs are disjoint.
import { DeviceBuffer, GreenContext, LaunchConfig, SmResource, compile, launch } from '../src';
import { done, requireGpu } from './gpu-check';

const SOURCE = `
extern "C" __global__ void where(unsigned* smids, unsigned blocks) {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  long long t0 = clock64(); while (clock64() - t0 < 20000) {}  // long enough for blocks to spread out
  if (threadIdx.x == 0 && blockIdx.x < blocks) smids[blockIdx.x] = id;
}`;

async function main(): Promise<void> {
  const device = requireGpu('green-contexts');
  const all = SmResource.ofDevice(device.ordinal);
  const { groups } = all.split({ groups: 2, minSmCount: 16 });
  if (groups.length < 2) done('green-contexts', false, `the ${all.smCount} SMs did not split into two groups of 16`);
  const blocks = 4096;
  const seen: Set<number>[] = [];
  const sizes: number[] = [];
  for (const group of groups) {
    using green = GreenContext.create(group);
    const { program, module } = compile(SOURCE, { name: 'green.cu', context: green.context });
    const where = module.kernel('where', ['ptr', 'u32']);
    const stream = green.createStream();
    const smids = DeviceBuffer.alloc(4 * blocks, { context: green.context });
    launch(stream, new LaunchConfig({ grid: blocks, block: 128 }), where, smids, blocks);
    await stream.synchronized();
    seen.push(new Set(smids.toArray(Uint32Array)));
    sizes.push(green.smCount);
    for (const r of [smids, stream, where, module, program]) r.close();
  }
  const overlap = [...seen[0]].filter((s) => seen[1].has(s)).length;
  const ok = seen.every((s, i) => s.size > 0 && s.size <= sizes[i]) && overlap === 0;
  done(
    'green-contexts',
    ok,
    `${all.smCount} SMs split into green contexts of ${sizes.join(' and ')} SMs; ${blocks} blocks each ran on ${seen.map((s) => s.size).join(' and ')} distinct SMs, ${overlap} shared`,
  );
}
void main();
