// A CUDA graph built node by node with a conditional WHILE node and memcpy nodes:
// `npx tsx examples/graph-conditional.ts`.
//   memset(iterations = 0) ─┐
//   memcpy(pinned in → x) ──┴→ while (handle) { step: x += 1, ++iterations, handle = iterations < limit } → memcpy(x → pinned out)
// The loop runs on the GPU: the host launches the graph once and waits; the kernel decides when to stop.
import { DeviceBuffer, Graph, LaunchConfig, PinnedHostBuffer, Stream, compile } from '../src';
import { done, requireGpu } from './gpu-check';

const SOURCE = `
typedef __device_builtin__ unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);
extern "C" __global__ void step(cudaGraphConditionalHandle handle, float* x, unsigned n, unsigned* iterations, unsigned limit) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
  if (i == 0) {
    unsigned k = ++*iterations;
    cudaGraphSetConditional(handle, k < limit ? 1u : 0u); // read when the body has finished
  }
}`;

async function main(): Promise<void> {
  const device = requireGpu('graph-conditional');
  device.setCurrent();
  const { program, module } = compile(SOURCE, { name: 'graph-conditional.cu' });
  const step = module.kernel('step', ['u64', 'ptr', 'u32', 'ptr', 'u32']);
  const n = 1 << 16;
  const limit = 25;
  const input = PinnedHostBuffer.alloc(4 * n);
  const output = PinnedHostBuffer.alloc(4 * n);
  input.array(Float32Array).forEach((_, i, a) => (a[i] = i % 1000));
  const x = DeviceBuffer.alloc(4 * n);
  const iterations = DeviceBuffer.alloc(4);
  const stream = Stream.create();

  const graph = Graph.create();
  const reset = graph.addMemsetNode([], iterations, 0, { width: 4 });
  const upload = graph.addMemcpyNode([], x, input);
  const cond = graph.createConditional({ defaultValue: 1 }); // enter the loop on every launch
  const loop = graph.addWhileNode([reset, upload], cond);
  loop.body.addKernelNode([], LaunchConfig.linear(n), step, cond.value, x, n, iterations, limit);
  graph.addMemcpyNode([loop.node], output, x);
  const exec = graph.instantiate();

  exec.launch(stream);
  exec.launch(stream); // a replay starts again from the input
  await stream.synchronized();

  const out = output.array(Float32Array);
  const count = iterations.toArray(Uint32Array)[0];
  let bad = 0;
  for (let i = 0; i < n; i++) if (out[i] !== (i % 1000) + limit) bad++;
  const ok = count === limit && bad === 0;
  for (const r of [exec, graph, stream, iterations, x, output, input, step, module, program]) r.close();
  done(
    'graph-conditional',
    ok,
    `while node ran its body ${count} times per launch (expected ${limit}); ${n - bad}/${n} elements = input + ${limit} after memcpy nodes in and out`,
  );
}
void main();
