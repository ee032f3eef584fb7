// Pageable host memory as a kernel argument, with the objects layer alone: `npx tsx examples/pageable-kernel-arg.ts`.
// On a system with pageable memory access (HMM or ATS: Device.properties.pageableMemoryAccess), a kernel
// reads and writes an ordinary Float32Array in place: it is passed as a 'ptr' argument like a buffer.
// Elsewhere the launch is refused with a TypeError saying why, and the program falls back to a
// PinnedHostBuffer; either way the host checks the result.
import { LaunchConfig, PinnedHostBuffer, Stream, compile, launch } from '../src';
import { done, requireGpu } from './gpu-check';

const NAME = 'pageable-kernel-arg';
const SOURCE = `
extern "C" __global__ void saxpy(float* y, const float* x, float a, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i];
}`;

async function main(): Promise<void> {
  const device = requireGpu(NAME);
  device.setCurrent();
  const { program, module } = compile(SOURCE, { name: 'pageable.cu' });
  const saxpy = module.kernel('saxpy', ['ptr', 'ptr', 'f32', 'u32']);
  const stream = Stream.create();
  const n = 1 << 20;
  const x = Float32Array.from({ length: n }, (_, i) => i);
  const y = new Float32Array(n).fill(1);
  let how: string;
  let result: Float32Array;
  if (device.properties.pageableMemoryAccess) {
    launch(stream, LaunchConfig.linear(n), saxpy, y, x, 2, n); // pageable memory, used in place
    await stream.synchronized(); // x and y stay reachable until the kernel is done
    result = y;
    how = 'pageable Float32Arrays used in place (the device reports pageable memory access)';
  } else {
    let refusal = '';
    try {
      launch(stream, LaunchConfig.linear(n), saxpy, y, x, 2, n);
    } catch (e) {
      refusal = (e as Error).message;
    }
    if (!/pageable memory access/.test(refusal)) return done(NAME, false, `a pageable argument was not refused clearly: '${refusal}'`);
    const [px, py] = [PinnedHostBuffer.from(x), PinnedHostBuffer.from(y)];
    launch(stream, LaunchConfig.linear(n), saxpy, py, px, 2, n);
    await stream.synchronized();
    result = py.array(Float32Array).slice();
    px.close();
    py.close();
    how = 'refused with a clear TypeError (no pageable memory access here), done with pinned buffers instead';
  }
  let bad = 0;
  for (let i = 0; i < n; i++) if (result[i] !== 2 * i + 1) bad++;
  for (const r of [stream, saxpy, module, program]) r.close();
  done(NAME, bad === 0, `${how}; ${n - bad}/${n} elements right`);
}
void main();
