// cuDNN through the Cudnn object: `npx tsx examples/cudnn-conv.ts`.
//
// One convolution layer as a framework runs it: a batch of 8 RGB 33×31 images (f32, NCHW) convolved
// with 16 filters of 3×3 (padding 1, stride 2), then ReLU in place. The output shape comes from the
// descriptors; the algorithm from cuDNN's heuristics (its workspace from the caching allocator). Every
// output is checked against a CPU convolution; the layer is then run 100 times and timed with Events.
import { DeviceBuffer, Event, Stream } from '../src';
import { ActivationDescriptor, ConvolutionDescriptor, Cudnn, FilterDescriptor, TensorDescriptor } from '../src/math';
import { done, requireGpu } from './gpu-check';

const NAME = 'cudnn-conv';
const [N, C, H, W, K, R, S] = [8, 3, 33, 31, 16, 3, 3];
const PAD = 1;
const STRIDE = 2;

/** Multiples of 1/8 in [-0.75, 0.75]: exact in f32 and TF32, so the GPU's sums equal the CPU's. */
const values = (n: number, seed: number): Float32Array => Float32Array.from({ length: n }, (_, i) => (((i * 7 + seed * 13) % 13) - 6) / 8);

/** ReLU(x ∗ w) on the CPU, NCHW, cross-correlation with zero padding. */
function reference(x: Float32Array, w: Float32Array, ho: number, wo: number): Float64Array {
  const y = new Float64Array(N * K * ho * wo);
  for (let n = 0; n < N; n++)
    for (let k = 0; k < K; k++)
      for (let i = 0; i < ho; i++)
        for (let j = 0; j < wo; j++) {
          let acc = 0;
          for (let c = 0; c < C; c++)
            for (let r = 0; r < R; r++)
              for (let s = 0; s < S; s++) {
                const [yy, xx] = [i * STRIDE - PAD + r, j * STRIDE - PAD + s];
                if (yy >= 0 && yy < H && xx >= 0 && xx < W) acc += x[((n * C + c) * H + yy) * W + xx] * w[((k * C + c) * R + r) * S + s];
              }
          y[((n * K + k) * ho + i) * wo + j] = Math.max(0, acc);
        }
  return y;
}

async function main(): Promise<[boolean, string]> {
  const device = requireGpu(NAME);
  device.setCurrent();
  using stream = Stream.create();
  using dnn = Cudnn.create({ stream });
  using conv = new ConvolutionDescriptor({ padding: PAD, stride: STRIDE });
  using relu = new ActivationDescriptor('relu');
  using xDesc = new TensorDescriptor({ dtype: 'f32', shape: [N, C, H, W] });
  using wDesc = new FilterDescriptor({ dtype: 'f32', shape: [K, C, R, S] });
  const yShape = conv.outputShape(xDesc, wDesc); // [8, 16, 17, 16]
  using yDesc = new TensorDescriptor({ dtype: 'f32', shape: yShape });
  const [x, w] = [values(xDesc.size, 1), values(wDesc.size, 2)];
  using dx = DeviceBuffer.from(x, { stream });
  using dw = DeviceBuffer.from(w, { stream });
  using dy = DeviceBuffer.alloc(yDesc.size * 4, { stream });

  const layer = (): void => {
    dnn.convolutionForward(conv, xDesc, dx, wDesc, dw, yDesc, dy);
    dnn.activationForward(relu, yDesc, dy, yDesc, dy);
  };
  layer();
  stream.synchronize();
  const got = dy.toArray(Float32Array);
  const want = reference(x, w, yShape[2], yShape[3]);
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));

  using t0 = Event.create();
  using t1 = Event.create();
  t0.record(stream);
  for (let i = 0; i < 100; i++) layer();
  t1.record(stream);
  await t1.synchronized();
  const perLayer = (t0.elapsed(t1) / 100) * 1000;
  const best = dnn.convolutionAlgorithms(conv, xDesc, wDesc, yDesc).find((p) => p.status === 0);
  console.log(
    `cuDNN ${Cudnn.version}: [${xDesc.shape}] ∗ [${wDesc.shape}] → [${yShape}], algorithm ${best?.algorithm} (${best?.mathType} math), ${perLayer.toFixed(1)} µs per conv + ReLU`,
  );
  const ok = worst < 1e-4 && want.some((v) => v > 0);
  return [
    ok,
    ok
      ? `${want.length} outputs equal the CPU's (max |diff| ${worst.toExponential(1)}), ${perLayer.toFixed(1)} µs per layer`
      : `max |diff| ${worst} against the CPU`,
  ];
}

main().then(
  ([ok, detail]) => done(NAME, ok, detail),
  (e) => done(NAME, false, (e instanceof Error ? e.message : String(e)).split('\n')[0]),
);
