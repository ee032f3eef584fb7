// Batched copies (cuMemcpyBatchAsync, CUDA 13.0 drivers): `npx tsx examples/batched-copies.ts`.
// 64 arrays of different sizes go host → device, device → device (doubled by a kernel in between) and
// device → one pinned buffer at packed offsets, each direction as ONE `copyBatch` call instead of 64
// copies. Host sources are read before copyBatch returns, so they need not outlive the call.
import { DeviceBuffer, LaunchConfig, PinnedHostBuffer, Stream, compile, copyBatch, launch, type BatchCopy } from '../src';
import { done, requireGpu } from './gpu-check';

const SOURCE = `
extern "C" __global__ void twice(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}`;

async function main(): Promise<void> {
  const device = requireGpu('batched-copies');
  device.setCurrent();
  const { program, module } = compile(SOURCE, { name: 'batched-copies.cu' });
  const twice = module.kernel('twice', ['ptr', 'u32']);
  const stream = Stream.create();
  const count = 64;
  const lengths = Array.from({ length: count }, (_, k) => 1000 + 997 * k); // elements: 1000 … 63811
  const hosts = lengths.map((n, k) => Float32Array.from({ length: n }, (_, i) => k * 1e5 + i));
  const first = lengths.map((n) => DeviceBuffer.alloc(4 * n, { stream }));
  const second = lengths.map((n) => DeviceBuffer.alloc(4 * n, { stream }));
  const total = lengths.reduce((s, n) => s + n, 0);
  const pinned = PinnedHostBuffer.alloc(4 * total);

  copyBatch(
    stream,
    hosts.map((src, k): BatchCopy => ({ dst: first[k], src })),
  ); // host → device
  for (let k = 0; k < count; k++) launch(stream, LaunchConfig.linear(lengths[k]), twice, first[k], lengths[k]);
  copyBatch(
    stream,
    first.map((src, k): BatchCopy => ({ dst: second[k], src })),
  ); // device → device
  let offset = 0;
  const toPinned: BatchCopy[] = second.map((src) => {
    const c = { dst: pinned, src, dstOffset: offset };
    offset += src.byteLength;
    return c;
  });
  copyBatch(stream, toPinned, { preferOverlapWithCompute: true }); // device → pinned, packed
  await stream.synchronized();

  const got = pinned.array(Float32Array);
  let bad = 0;
  let at = 0;
  for (let k = 0; k < count; k++) {
    for (let i = 0; i < lengths[k]; i++) if (got[at + i] !== 2 * hosts[k][i]) bad++;
    at += lengths[k];
  }
  for (const x of [...first, ...second, pinned, stream, twice, module, program]) x.close();
  done(
    'batched-copies',
    bad === 0,
    `3 copyBatch calls of ${count} copies each (host→device, device→device, device→pinned at packed offsets), ` +
      `${((4 * total) / 2 ** 20).toFixed(1)} MiB per direction; ${total - bad}/${total} elements = 2 × input`,
  );
}
void main();
