// A kernel writes straight into pinned host memory, read through a zero-copy TypedArray:
// `npx tsx examples/pinned-zero-copy.ts`.
import { LaunchConfig, PinnedHostBuffer, Stream, compile, launch } from '../src';
import { done, requireGpu } from './gpu-check';

const device = requireGpu('pinned-zero-copy');
device.setCurrent();
const { program, module } = compile(`
extern "C" __global__ void squares(unsigned* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * i;
}`);
const squares = module.kernel('squares', ['ptr', 'u32']);
const n = 1 << 16;
const pinned = PinnedHostBuffer.alloc(4 * n);
const view = pinned.array(Uint32Array); // zero-copy: no cuMemcpy anywhere below
const stream = Stream.create();
launch(stream, LaunchConfig.linear(n), squares, pinned, n);
stream.synchronize();
let bad = 0;
for (let i = 0; i < n; i++) if (view[i] !== Math.imul(i, i) >>> 0) bad++;
for (const r of [stream, pinned, squares, module, program]) r.close();
done('pinned-zero-copy', bad === 0, `kernel wrote ${n} values into pinned host memory read in place, ${bad} wrong`);
