// Texture and surface objects: `npx tsx examples/texture-sampling.ts`.
// A 64×32 float image in a `CudaArray` is read through a `TextureObject` with hardware linear
// filtering (each sample halfway between two texels, clamped at the edge) and the result written
// through a `SurfaceObject` into a second array; a linear-memory texture over a `DeviceBuffer` is
// fetched element by element. Every value is checked against the filter's arithmetic on the host.
import { CudaArray, DeviceBuffer, LaunchConfig, Stream, SurfaceObject, TextureObject, compile, launch } from '../src';
import { done, requireGpu } from './gpu-check';

const SOURCE = `
extern "C" __global__ void sample(cudaTextureObject_t tex, cudaSurfaceObject_t surf, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  float v = tex2D<float>(tex, x + 1.0f, y + 0.5f);   // texel centres sit at i + 0.5: halfway between x and x + 1
  surf2Dwrite(v, surf, x * (int)sizeof(float), y);    // surface x is in bytes
}
extern "C" __global__ void fetch(cudaTextureObject_t tex, float* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(tex, i) + 1.0f;
}`;

async function main(): Promise<void> {
  const device = requireGpu('texture-sampling');
  device.setCurrent();
  const { program, module } = compile(SOURCE, { name: 'texture-sampling.cu' });
  const sample = module.kernel('sample', ['u64', 'u64', 'i32', 'i32']);
  const fetch = module.kernel('fetch', ['u64', 'ptr', 'u32']);
  const stream = Stream.create();
  const w = 64;
  const h = 32;
  const image = Float32Array.from({ length: w * h }, (_, i) => (i % w) + 100 * Math.floor(i / w)); // f(x, y) = x + 100y
  const source = CudaArray.create({ width: w, height: h, format: 'f32' }).copyFrom(image);
  const target = CudaArray.create({ width: w, height: h, format: 'f32', surface: true });
  const tex = TextureObject.create(source, { filterMode: 'linear', addressMode: 'clamp' });
  const surf = SurfaceObject.create(target);
  launch(stream, new LaunchConfig({ grid: [w / 16, h / 16], block: [16, 16] }), sample, tex.handle, surf.handle, w, h);

  const n = 4096;
  // a linear texture's address must be a multiple of the device's texture alignment (cuMemAlloc promises 256)
  const align = device.properties.textureAlignment;
  const backing = DeviceBuffer.alloc(4 * n + align);
  const start = (align - (backing.ptr % align)) % align;
  const linear = backing.subarray(start, start + 4 * n).copyFrom(Float32Array.from({ length: n }, (_, i) => i * 0.25));
  const fetched = DeviceBuffer.alloc(4 * n);
  const linearTex = TextureObject.create({ buffer: linear, format: 'f32' });
  launch(stream, LaunchConfig.linear(n), fetch, linearTex.handle, fetched, n);
  await stream.synchronized();

  const filtered = target.copyTo(new Float32Array(w * h));
  let bad = 0;
  let worst = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const expected = x < w - 1 ? (image[y * w + x] + image[y * w + x + 1]) / 2 : image[y * w + x]; // clamp at the right edge
      const err = Math.abs(filtered[y * w + x] - expected);
      worst = Math.max(worst, err);
      if (err > 1e-3) bad++;
    }
  }
  const got = fetched.toArray(Float32Array);
  let badFetch = 0;
  for (let i = 0; i < n; i++) if (got[i] !== i * 0.25 + 1) badFetch++;
  // the texture keeps its array alive: closing the array first defers its destroy to the texture's
  for (const x of [source, tex, surf, target, linearTex, backing, fetched, stream, sample, fetch, module, program]) x.close();
  done(
    'texture-sampling',
    bad === 0 && badFetch === 0,
    `${w}×${h} CudaArray sampled with linear filtering + clamp through a TextureObject, written through a SurfaceObject: ` +
      `${w * h - bad}/${w * h} within 1e-3 (worst ${worst.toExponential(1)}); ${n - badFetch}/${n} linear-memory tex1Dfetch values exact`,
  );
}
void main();
