// Capture a stream into a CUDA graph and replay it 1000×: `npx tsx examples/graph-replay.ts`.
import { DeviceBuffer, Graph, LaunchConfig, Stream, compile, launch } from '../src';
import { done, requireGpu } from './gpu-check';

async function main(): Promise<void> {
  const device = requireGpu('graph-replay');
  device.setCurrent();
  const { program, module } = compile(`
extern "C" __global__ void inc(int* p, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}`);
  const inc = module.kernel('inc', ['ptr', 'u32']);
  const n = 4096;
  const stream = Stream.create();
  const counter = DeviceBuffer.alloc(4 * n);
  counter.memset(0, { stream });
  const cfg = LaunchConfig.linear(n);
  const graph = Graph.capture(stream, (s) => {
    launch(s, cfg, inc, counter, n);
    launch(s, cfg, inc, counter, n);
  });
  const exec = graph.instantiate();
  const t0 = performance.now();
  for (let i = 0; i < 1000; i++) exec.launch(stream);
  await stream.synchronized();
  const ms = performance.now() - t0;
  const out = counter.toArray(Int32Array);
  const ok = out.every((v) => v === 2000);
  for (const r of [exec, graph, counter, stream, inc, module, program]) r.close();
  done('graph-replay', ok, `1000 replays of a 2-kernel graph in ${ms.toFixed(1)} ms, counter=${out[0]} (expected 2000)`);
}
void main();
