// The scaling behind FftPlan's `normalize` (cuFFT itself never scales): one small kernel, compiled with
// NVRTC on first use in each context (then read from the on-disk kernel cache by later processes),
// multiplies every element of the plan's output side in place, addressing it by the side's own strides,
// so the gaps of a strided or padded output are never touched. One launch on the plan's stream after
// the transform: stream-ordered like the transform, captured into graphs with it.
import type { Context } from '../context';
import { launch } from '../launch';
import type { Kernel } from '../module';
import { compile } from '../program';
import type { Stream } from '../stream';
import type { FftSide } from './fft-layout';

const SOURCE = `
template <typename T>
__device__ void scale(T *p, long long total, long long e1, long long e2, long long e3,
                      long long s0, long long s1, long long s2, long long s3, int comps, T a) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
    long long j = i / comps;
    long long c = i - j * comps;
    long long i3 = j % e3; j /= e3;
    long long i2 = j % e2; j /= e2;
    long long i1 = j % e1;
    long long i0 = j / e1;
    p[i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3 + c] *= a;
  }
}
extern "C" __global__ void cuda_ts_fft_scale_f32(float *p, long long total, long long e1, long long e2, long long e3,
    long long s0, long long s1, long long s2, long long s3, int comps, float a) { scale(p, total, e1, e2, e3, s0, s1, s2, s3, comps, a); }
extern "C" __global__ void cuda_ts_fft_scale_f64(double *p, long long total, long long e1, long long e2, long long e3,
    long long s0, long long s1, long long s2, long long s3, int comps, double a) { scale(p, total, e1, e2, e3, s0, s1, s2, s3, comps, a); }
`;

const SIGNATURE_F32 = ['ptr', 'i64', 'i64', 'i64', 'i64', 'i64', 'i64', 'i64', 'i64', 'i32', 'f32'] as const;
const SIGNATURE_F64 = ['ptr', 'i64', 'i64', 'i64', 'i64', 'i64', 'i64', 'i64', 'i64', 'i32', 'f64'] as const;

interface ScaleKernels {
  f32: Kernel;
  f64: Kernel;
}
/** The kernels of each context, compiled and loaded on first use; they live as long as the context object. */
const kernels = new WeakMap<Context, ScaleKernels>();

function kernelsOf(context: Context): ScaleKernels {
  let k = kernels.get(context);
  if (k === undefined) {
    context.bind();
    const { program, module } = compile(SOURCE, { name: 'cuda-ts-fft-scale.cu' });
    program.close();
    k = { f32: module.kernel('cuda_ts_fft_scale_f32', SIGNATURE_F32), f64: module.kernel('cuda_ts_fft_scale_f64', SIGNATURE_F64) };
    kernels.set(context, k);
  }
  return k;
}

/** The launch arguments of one side: its [batch, …extents] padded to four axes, strides in real scalars. */
export interface ScalePlan {
  readonly double: boolean;
  readonly total: number;
  readonly extents: readonly [number, number, number];
  readonly strides: readonly [number, number, number, number];
  readonly comps: number;
  readonly grid: number;
}

/** Precomputes the scaling launch of `side` (done once per plan). */
export function scalePlan(side: FftSide): ScalePlan {
  const complex = side.dtype === 'c64' || side.dtype === 'c128';
  const comps = complex ? 2 : 1;
  const shape = [side.shape[0], 1, 1, 1];
  const strides = [side.strides[0] * comps, 0, 0, 0];
  const rank = side.shape.length - 1;
  for (let d = 0; d < rank; d++) {
    shape[4 - rank + d] = side.shape[d + 1];
    strides[4 - rank + d] = side.strides[d + 1] * comps;
  }
  const total = shape[0] * shape[1] * shape[2] * shape[3] * comps;
  const grid = Math.max(1, Math.min(Math.ceil(total / 256), 8192));
  return {
    double: side.dtype === 'f64' || side.dtype === 'c128',
    total,
    extents: [shape[1], shape[2], shape[3]],
    strides: strides as [number, number, number, number],
    comps,
    grid,
  };
}

/** Multiplies the side at `address` by `factor` on `stream` (compiling the kernel on its context's first use). */
export function scaleSide(stream: Stream, address: number, p: ScalePlan, factor: number): void {
  const k = kernelsOf(stream.context);
  const [e1, e2, e3] = p.extents;
  const [s0, s1, s2, s3] = p.strides;
  const kernel = p.double ? k.f64 : k.f32;
  (launch as (...a: unknown[]) => void)(stream, { grid: p.grid, block: 256 }, kernel, address, p.total, e1, e2, e3, s0, s1, s2, s3, p.comps, factor);
}
