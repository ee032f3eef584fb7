// Two kernels with programmatic dependent launch (PDL, sm_90+): `npx tsx examples/pdl-pair.ts`.
// The secondary kernel is launched with `programmaticDependentLaunch: true`, so it may start while the
// primary still runs (once every primary block has executed griddepcontrol.launch_dependents); it does
// its independent work first, then waits with griddepcontrol.wait before reading what the primary wrote.
import { DeviceBuffer, LaunchConfig, Stream, compile, launch } from '../src';
import { done, requireGpu } from './gpu-check';

const SOURCE = `
extern "C" __global__ void primary(float* a, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 2.0f * i;
  asm volatile("griddepcontrol.launch_dependents;");   // let the dependent grid start launching
}
extern "C" __global__ void secondary(const float* a, float* b, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float independent = (i < n) ? 1.0f + i : 0.0f;      // work that does not need the primary's output
  asm volatile("griddepcontrol.wait;" ::: "memory");  // the primary grid has completed, its writes are visible
  if (i < n) b[i] = a[i] + independent;
}`;

async function main(): Promise<void> {
  const device = requireGpu('pdl-pair');
  const [major] = device.computeCapability;
  if (major < 9) done('pdl-pair', false, `programmatic dependent launch needs sm_90+, this device is ${device.arch}`);
  device.setCurrent();
  const { program, module } = compile(SOURCE, { name: 'pdl-pair.cu' });
  const primary = module.kernel('primary', ['ptr', 'u32']);
  const secondary = module.kernel('secondary', ['ptr', 'ptr', 'u32']);
  const n = 1 << 20;
  const stream = Stream.create();
  const a = DeviceBuffer.alloc(4 * n);
  const b = DeviceBuffer.alloc(4 * n);
  const cfg = LaunchConfig.linear(n);
  const pdl = new LaunchConfig({ grid: cfg.gx, block: cfg.bx, programmaticDependentLaunch: true });
  const rounds = 100;
  for (let r = 0; r < rounds; r++) {
    a.memset(0, { stream });
    launch(stream, cfg, primary, a, n);
    launch(stream, pdl, secondary, a, b, n);
  }
  await stream.synchronized();
  const out = b.toArray(Float32Array);
  let bad = 0;
  for (let i = 0; i < n; i++) if (out[i] !== 3 * i + 1) bad++;
  for (const x of [b, a, stream, secondary, primary, module, program]) x.close();
  done('pdl-pair', bad === 0, `${rounds} primary→secondary pairs with programmatic dependent launch; ${n - bad}/${n} elements b[i] = a[i] + i + 1 = 3i + 1`);
}
void main();
