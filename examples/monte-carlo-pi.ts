// Monte Carlo π: cuRAND fills a device buffer with N uniform (x, y) pairs, an NVRTC kernel counts those
// inside the unit quarter circle with atomicAdd, and π ≈ 4·inside/N: `npx tsx examples/monte-carlo-pi.ts`.
//
// Checks: the GPU count equals a CPU count over the same numbers (exact), and the estimate is within
// 5 standard deviations of π, σ = 4·sqrt(p(1 − p)/N) with p = π/4.
import * as curand from '../generated/13.0/curand';
import { DeviceBuffer, Event, LaunchConfig, Program, Stream, launch } from '../src';
import { done, requireGpu } from './gpu-check';

const NAME = 'monte-carlo-pi';
const N = 1 << 24; // pairs
const SEED = 20240607;

// Grid-stride loop, a warp-level sum with shuffles, one atomicAdd per warp. __fmul_rn/__fadd_rn keep
// the compiler from contracting x*x + y*y into an FMA, so the CPU check below can match exactly.
const SOURCE = `
extern "C" __global__ void count_inside(const float* xy, unsigned n, unsigned* inside) {
  unsigned local = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float x = xy[2 * i], y = xy[2 * i + 1];
    local += __fadd_rn(__fmul_rn(x, x), __fmul_rn(y, y)) <= 1.0f ? 1u : 0u;
  }
  for (int offset = 16; offset > 0; offset >>= 1) local += __shfl_down_sync(0xffffffffu, local, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(inside, local);
}`;

async function main(): Promise<[boolean, string]> {
  const device = requireGpu(NAME);
  device.setCurrent();
  using program = new Program(SOURCE, { name: 'monte-carlo-pi.cu' }).compile();
  using module = program.load();
  using kernel = module.kernel('count_inside', ['ptr', 'u32', 'ptr']);
  using stream = Stream.create();
  using start = Event.create();
  using generated = Event.create();
  using end = Event.create();
  using xy = DeviceBuffer.alloc(2 * N * 4);
  using inside = DeviceBuffer.alloc(4);
  using rng = {
    gen: curand.curandCreateGenerator(curand.curandRngType_t.CURAND_RNG_PSEUDO_PHILOX4_32_10),
    [Symbol.dispose]() {
      curand.curandDestroyGenerator(this.gen);
    },
  };
  curand.curandSetPseudoRandomGeneratorSeed(rng.gen, SEED);
  curand.curandSetStream(rng.gen, stream.handle);

  inside.memset(0, { stream });
  start.record(stream);
  curand.curandGenerateUniform(rng.gen, xy, 2 * N); // floats in (0, 1]
  generated.record(stream);
  const blocks = device.multiprocessorCount * 8;
  launch(stream, new LaunchConfig({ grid: blocks, block: 256 }), kernel, xy, N, inside);
  end.record(stream);
  await end.synchronized();
  const hits = inside.toArray(Uint32Array)[0];
  const genMs = start.elapsed(generated);
  const countMs = generated.elapsed(end);

  // the same count on the CPU, over the same numbers, with the same fp32 rounding
  const host = xy.toArray(Float32Array);
  let cpuHits = 0;
  for (let i = 0; i < N; i++) {
    const x = host[2 * i];
    const y = host[2 * i + 1];
    if (Math.fround(Math.fround(x * x) + Math.fround(y * y)) <= 1) cpuHits++;
  }

  const pi = (4 * hits) / N;
  const p = Math.PI / 4;
  const sigma = 4 * Math.sqrt((p * (1 - p)) / N);
  const tolerance = 5 * sigma;
  const error = pi - Math.PI;
  const ok = hits === cpuHits && Math.abs(error) <= tolerance;
  const detail = `π ≈ ${pi.toFixed(6)} from ${N} points (error ${error.toExponential(2)}, tolerance 5σ = ${tolerance.toExponential(2)}); GPU count ${hits} ${hits === cpuHits ? '=' : '≠'} CPU count ${cpuHits}; cuRAND ${genMs.toFixed(3)} ms, count kernel ${countMs.toFixed(3)} ms`;
  return [ok, detail];
}

/** One line: the first line of the error's message (the original error where disposal failed too). */
function reason(e: unknown): string {
  const err = e instanceof Error && e.name === 'SuppressedError' ? (e as Error & { suppressed: unknown }).suppressed : e;
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}

main().then(
  ([ok, detail]) => done(NAME, ok, detail),
  (e) => done(NAME, false, reason(e)),
);
