// SAXPY timed with events: `npx tsx examples/saxpy-events.ts`.
import { DeviceBuffer, Event, LaunchConfig, Stream, compile, launch } from '../src';
import { done, requireGpu } from './gpu-check';

async function main(): Promise<void> {
  const device = requireGpu('saxpy-events');
  device.setCurrent();
  const { program, module } = compile(`
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}`);
  const saxpy = module.kernel('saxpy', ['f32', 'ptr', 'ptr', 'u32']);
  const n = 1 << 24;
  const stream = Stream.create();
  const x = DeviceBuffer.from(new Float32Array(n).fill(1), { stream });
  const y = DeviceBuffer.from(new Float32Array(n).fill(2), { stream });
  const start = Event.create();
  const end = Event.create();
  const cfg = LaunchConfig.linear(n);
  start.record(stream);
  for (let i = 0; i < 10; i++) launch(stream, cfg, saxpy, 3, x, y, n);
  end.record(stream);
  await end.synchronized(); // does not block the event loop
  const ms = start.elapsed(end) / 10;
  const out = y.toArray(Float32Array);
  const ok = out[0] === 32 && out[n - 1] === 32;
  const gbs = (3 * 4 * n) / (ms / 1000) / 1e9;
  for (const r of [x, y, start, end, stream, saxpy, module, program]) r.close();
  done('saxpy-events', ok, `n=${n}: ${ms.toFixed(3)} ms per SAXPY (${gbs.toFixed(0)} GB/s), y=${out[0]}`);
}
void main();
