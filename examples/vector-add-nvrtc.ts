// Vector add compiled at run time with NVRTC: `npx tsx examples/vector-add-nvrtc.ts`.
import { DeviceBuffer, LaunchConfig, Program, Stream, launch } from '../src';
import { done, requireGpu } from './gpu-check';

const device = requireGpu('vector-add-nvrtc');
device.setCurrent();
const source = `
extern "C" __global__ void vadd(const float* a, const float* b, float* c, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}`;
const n = 1 << 20;
using program = new Program(source, { name: 'vadd.cu' }).compile(); // default arch: this device's sm_XY
using module = program.load();
using vadd = module.kernel('vadd', ['ptr', 'ptr', 'ptr', 'u32']);
const ha = Float32Array.from({ length: n }, (_, i) => i);
const hb = Float32Array.from({ length: n }, (_, i) => 2 * i);
using stream = Stream.create();
using a = DeviceBuffer.from(ha);
using b = DeviceBuffer.from(hb);
using c = DeviceBuffer.alloc(4 * n);
launch(stream, LaunchConfig.linear(n, 256), vadd, a, b, c, n);
stream.synchronize();
const hc = c.toArray(Float32Array);
let bad = 0;
for (let i = 0; i < n; i++) if (hc[i] !== 3 * i) bad++;
done('vector-add-nvrtc', bad === 0, `${n} elements on ${device.name} (${device.arch}), ${bad} wrong`);
