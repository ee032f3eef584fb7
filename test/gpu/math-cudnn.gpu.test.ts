// cuDNN objects on a GPU against CPU references: convolution forward with odd sizes, padding, stride,
// dilation, groups (depthwise too), NCHW and NHWC, 2-D and 3-D, f16/f32/f64, strided tensors, alpha and
// beta, every way of choosing the algorithm; activation forward (relu, sigmoid, tanh, elu, clippedRelu,
// swish) in each dtype and in place; the handle on a stream that is closed first; CudnnError from cuDNN.
// Inputs are multiples of 1/8 below 1: exact in TF32 and f16, so even tensor-core math is checked tightly
// (1e-5 relative for f32 leaves room for Winograd and FFT algorithms' rounding).
import { Device, DeviceBuffer, Stream, StridedView } from '../../src';
import { ClosedObjectError } from '../../src/errors';
import {
  ActivationDescriptor,
  ConvolutionDescriptor,
  Cudnn,
  FilterDescriptor,
  TensorDescriptor,
  channelsLastStrides,
  type ActivationMode,
  type ConvolutionOptions,
  type CudnnDType,
} from '../../src/math';
import { halfBits as toHalfBits } from '../../support';
import { CudnnError } from '../../generated/13.0/cudnn';
import { describeGpu } from './gpu-env';

/** Deterministic values k/8, k in -6..6. */
const values = (n: number, seed: number): Float64Array => Float64Array.from({ length: n }, (_, i) => (((i * 7 + seed * 13) % 13) - 6) / 8);
const product = (s: readonly number[]): number => s.reduce((a, b) => a * b, 1);
const cStrides = (s: readonly number[]): number[] => s.map((_, d) => product(s.slice(d + 1)));

function fromHalf(h: number): number {
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  const v = e === 0 ? m * 2 ** -24 : e === 31 ? (m ? NaN : Infinity) : (1 + m / 1024) * 2 ** (e - 15);
  return h & 0x8000 ? -v : v;
}

/** Logical C-order values laid out in memory with `strides` (`span` elements, gaps `fill`), as `dtype`. */
function layout(logical: Float64Array, shape: readonly number[], strides: readonly number[], span: number, dtype: CudnnDType, fill = 0): ArrayBufferView {
  const out = dtype === 'f64' ? new Float64Array(span) : dtype === 'f32' ? new Float32Array(span) : new Uint16Array(span);
  out.fill(dtype === 'f16' ? toHalfBits(fill) : fill);
  const idx = new Array<number>(shape.length).fill(0);
  for (let k = 0; k < logical.length; k++) {
    const at = idx.reduce((a, i, d) => a + i * strides[d], 0);
    out[at] = dtype === 'f16' ? toHalfBits(logical[k]) : logical[k];
    for (let d = shape.length - 1; d >= 0 && ++idx[d] === shape[d]; d--) idx[d] = 0;
  }
  return out;
}

/** The logical C-order values of a tensor read back from `raw` laid out with `strides`. */
function gather(raw: ArrayBufferView, shape: readonly number[], strides: readonly number[], dtype: CudnnDType): Float64Array {
  const a = raw as unknown as ArrayLike<number>;
  const out = new Float64Array(product(shape));
  const idx = new Array<number>(shape.length).fill(0);
  for (let k = 0; k < out.length; k++) {
    const v = a[idx.reduce((s, i, d) => s + i * strides[d], 0)];
    out[k] = dtype === 'f16' ? fromHalf(v) : v;
    for (let d = shape.length - 1; d >= 0 && ++idx[d] === shape[d]; d--) idx[d] = 0;
  }
  return out;
}

interface ConvSpec {
  pad: number[];
  stride: number[];
  dil: number[];
  groups: number;
  flip?: boolean;
}

/** CPU convolution (cross-correlation, or convolution when `flip`) of C-order x [N, C, …] by w [K, C/g, …]. */
function convRef(x: Float64Array, xs: number[], w: Float64Array, ws: number[], c: ConvSpec, ys: number[]): Float64Array {
  const sp = xs.length - 2;
  const y = new Float64Array(product(ys));
  const [xst, wst, yst] = [cStrides(xs), cStrides(ws), cStrides(ys)];
  const cg = ws[1];
  const kg = ys[1] / c.groups;
  const taps = product(ws.slice(2));
  for (let o = 0; o < y.length; o++) {
    const oi = yst.map((s, d) => Math.floor(o / s) % ys[d]);
    const [n, k] = oi;
    const g = Math.floor(k / kg);
    let acc = 0;
    for (let ci = 0; ci < cg; ci++) {
      for (let t = 0; t < taps; t++) {
        const ti = ws.slice(2).map((_, d) => Math.floor(t / product(ws.slice(3 + d))) % ws[2 + d]);
        let xAt = n * xst[0] + (g * cg + ci) * xst[1];
        let inside = true;
        for (let d = 0; d < sp; d++) {
          const tap = c.flip ? ws[2 + d] - 1 - ti[d] : ti[d];
          const pos = oi[2 + d] * c.stride[d] - c.pad[d] + tap * c.dil[d];
          if (pos < 0 || pos >= xs[2 + d]) inside = false;
          xAt += pos * xst[2 + d];
        }
        if (!inside) continue;
        const wAt = k * wst[0] + ci * wst[1] + ti.reduce((a, i, d) => a + i * wst[2 + d], 0);
        acc += x[xAt] * w[wAt];
      }
    }
    y[o] = acc;
  }
  return y;
}

function expectClose(got: Float64Array, want: Float64Array, tol: number, what: string): void {
  expect(got.length).toBe(want.length);
  let worst = 0;
  for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]) / Math.max(1, Math.abs(want[i])));
  if (!(worst <= tol)) throw new Error(`${what}: worst relative error ${worst} > ${tol}`);
}

const upload = (a: ArrayBufferView, stream: Stream): DeviceBuffer => DeviceBuffer.from(a, { stream });
const readBack = (b: DeviceBuffer, dtype: CudnnDType, stream: Stream): ArrayBufferView => {
  stream.synchronize();
  return dtype === 'f64' ? b.toArray(Float64Array) : dtype === 'f32' ? b.toArray(Float32Array) : b.toArray(Uint16Array);
};

describeGpu('cuDNN objects: convolution and activation forward against CPU references', () => {
  let stream: Stream;
  let dnn: Cudnn;
  beforeAll(() => {
    Device.get(0).setCurrent();
    stream = Stream.create();
    dnn = Cudnn.create({ stream });
    console.log(`cuDNN ${Cudnn.version}`);
  });
  afterAll(() => {
    dnn.close();
    stream.close();
  });

  interface Case {
    name: string;
    dtype: CudnnDType;
    xs: number[];
    ws: number[];
    opts: ConvolutionOptions;
    layout?: 'NCHW' | 'NHWC';
    tol: number;
  }

  /** Runs one convolution through the objects and compares it with convRef; returns y's logical values. */
  function runConv(cs: Case, run: { alpha?: number; beta?: number; algorithm?: 'heuristic' | 'find' | 'implicitGemm' | 'gemm'; yInit?: number } = {}): void {
    const { dtype, xs, ws } = cs;
    const conv = new ConvolutionDescriptor(cs.opts);
    const lay = cs.layout ?? 'NCHW';
    const xDesc = new TensorDescriptor({ dtype, shape: xs, layout: lay });
    const wDesc = new FilterDescriptor({ dtype, shape: ws, layout: lay });
    const ys = conv.outputShape(xDesc, wDesc);
    expect(dnn.convolutionOutputShape(conv, xDesc, wDesc)).toEqual(ys); // our formula agrees with cuDNN
    const yDesc = new TensorDescriptor({ dtype, shape: ys, layout: lay });
    const [x, w] = [values(product(xs), 1), values(product(ws), 2)];
    const yInit = new Float64Array(product(ys)).fill(run.yInit ?? 0);
    const dx = upload(layout(x, xs, xDesc.strides, xDesc.extent, dtype), stream);
    const dw = upload(layout(w, ws, wDesc.strides, wDesc.size, dtype), stream);
    const dy = upload(layout(yInit, ys, yDesc.strides, yDesc.extent, dtype), stream);
    try {
      dnn.convolutionForward(conv, xDesc, dx, wDesc, dw, yDesc, dy, { alpha: run.alpha, beta: run.beta, algorithm: run.algorithm });
      const got = gather(readBack(dy, dtype, stream), ys, yDesc.strides, dtype);
      const pad = conv.perDimension(conv.padding, xs.length - 2);
      const spec = {
        pad,
        stride: conv.perDimension(conv.stride, xs.length - 2),
        dil: conv.perDimension(conv.dilation, xs.length - 2),
        groups: conv.groups,
        flip: conv.mode === 'convolution',
      };
      const want = convRef(x, xs, w, ws, spec, ys).map((v, i) => (run.alpha ?? 1) * v + (run.beta ?? 0) * yInit[i]);
      expectClose(got, want, cs.tol, `${cs.name} (${run.algorithm ?? 'heuristic'})`);
    } finally {
      [dx, dw, dy, conv, xDesc, wDesc, yDesc].forEach((r) => r.close());
    }
  }

  const cases: Case[] = [
    {
      name: 'f32 odd sizes, asymmetric padding/stride/dilation',
      dtype: 'f32',
      xs: [2, 3, 7, 9],
      ws: [5, 3, 3, 2],
      opts: { padding: [1, 0], stride: [2, 1], dilation: [1, 2], mathType: 'fma' },
      tol: 1e-5,
    },
    { name: 'f32 two groups, padding 1', dtype: 'f32', xs: [1, 6, 11, 5], ws: [4, 3, 3, 3], opts: { padding: 1, groups: 2 }, tol: 1e-5 },
    { name: 'f32 depthwise, stride 2', dtype: 'f32', xs: [3, 4, 9, 8], ws: [4, 1, 3, 3], opts: { padding: 1, stride: 2, groups: 4 }, tol: 1e-5 },
    { name: 'f32 1x1', dtype: 'f32', xs: [2, 5, 3, 7], ws: [3, 5, 1, 1], opts: {}, tol: 1e-5 },
    {
      name: 'f32 convolution mode (flipped filter)',
      dtype: 'f32',
      xs: [1, 2, 6, 5],
      ws: [2, 2, 3, 2],
      opts: { mode: 'convolution', padding: [2, 1] },
      tol: 1e-5,
    },
    { name: 'f32 NHWC', dtype: 'f32', xs: [2, 4, 5, 7], ws: [8, 4, 3, 3], opts: { padding: 1 }, layout: 'NHWC', tol: 1e-5 },
    { name: 'f32 3-D (NCDHW)', dtype: 'f32', xs: [1, 2, 5, 4, 6], ws: [3, 2, 3, 2, 3], opts: { padding: [1, 0, 1], stride: [1, 2, 1] }, tol: 1e-5 },
    {
      name: 'f64 odd sizes, stride and dilation',
      dtype: 'f64',
      xs: [2, 3, 9, 7],
      ws: [4, 3, 3, 3],
      opts: { padding: 2, stride: [1, 2], dilation: 2 },
      tol: 1e-12,
    },
    { name: 'f16 (f32 accumulation)', dtype: 'f16', xs: [2, 8, 7, 7], ws: [8, 8, 3, 3], opts: { padding: 1 }, tol: 2e-3 },
    { name: 'f16 NHWC, groups 2', dtype: 'f16', xs: [1, 8, 6, 6], ws: [8, 4, 3, 3], opts: { padding: 1, groups: 2 }, layout: 'NHWC', tol: 2e-3 },
  ];
  test.each(cases.map((c) => [c.name, c] as const))('convolution forward: %s', (_name, cs) => runConv(cs));

  test('alpha and beta: y = 2·conv + 0.5·y, f32 and f64', () => {
    runConv(cases[1], { alpha: 2, beta: 0.5, yInit: 1.5 });
    runConv(cases[7], { alpha: -1, beta: 1, yInit: 0.25 });
  });

  test('every way of choosing the algorithm gives the same result; the ranking lists usable algorithms', () => {
    const plain: Case = { name: 'f32 plain 3x3', dtype: 'f32', xs: [2, 3, 7, 9], ws: [5, 3, 3, 3], opts: { padding: 1 }, tol: 1e-5 };
    for (const algorithm of ['find', 'implicitGemm', 'gemm'] as const) runConv(plain, { algorithm });
    runConv(cases[0], { algorithm: 'find' }); // dilation and asymmetric settings, timed choice
    const conv = new ConvolutionDescriptor({ padding: 1 });
    const x = new TensorDescriptor({ dtype: 'f32', shape: [4, 16, 32, 32] });
    const w = new FilterDescriptor({ dtype: 'f32', shape: [32, 16, 3, 3] });
    const y = new TensorDescriptor({ dtype: 'f32', shape: conv.outputShape(x, w) });
    const ranked = dnn.convolutionAlgorithms(conv, x, w, y);
    console.log(`heuristics: ${ranked.map((p) => `${p.algorithm} ${p.status} ${p.memory}B ${p.mathType}`).join('; ')}`);
    expect(ranked.some((p) => p.status === 0)).toBe(true);
    const timed = dnn.convolutionAlgorithms(conv, x, w, y, { find: true });
    expect(timed.filter((p) => p.status === 0).every((p) => p.time >= 0)).toBe(true);
    [conv, x, w, y].forEach((r) => r.close());
  });

  test('strided tensors: x a window of a wider buffer (explicit strides, a StridedView at an offset)', () => {
    const xs = [1, 2, 5, 6];
    const strides = [2 * 5 * 9, 5 * 9, 9, 1]; // rows 9 wide, 6 used
    const offset = 3;
    const xDesc = new TensorDescriptor({ dtype: 'f32', shape: xs, strides });
    const wDesc = new FilterDescriptor({ dtype: 'f32', shape: [3, 2, 2, 3] });
    const conv = new ConvolutionDescriptor({ padding: [0, 1], mathType: 'fma' });
    const ys = conv.outputShape(xDesc, wDesc);
    const yDesc = new TensorDescriptor({ dtype: 'f32', shape: ys });
    const [x, w] = [values(product(xs), 3), values(product(wDesc.shape), 4)];
    const raw = new Float32Array(offset + xDesc.extent).fill(NaN); // the gaps must not be read
    raw.set(layout(x, xs, strides, xDesc.extent, 'f32', NaN) as Float32Array, offset);
    const dx = upload(raw, stream);
    const dw = upload(layout(w, wDesc.shape, wDesc.strides, wDesc.size, 'f32'), stream);
    const dy = DeviceBuffer.alloc(yDesc.size * 4, { stream });
    try {
      const xView = StridedView.of(dx, { dtype: 'f32', shape: xs, strides, byteOffset: offset * 4 });
      dnn.convolutionForward(conv, xDesc, xView, wDesc, dw, yDesc, StridedView.of(dy, { dtype: 'f32', shape: ys }));
      const want = convRef(x, xs, w, [...wDesc.shape], { pad: [0, 1], stride: [1, 1], dil: [1, 1], groups: 1 }, ys);
      expectClose(gather(readBack(dy, 'f32', stream), ys, yDesc.strides, 'f32'), want, 1e-5, 'strided x');
    } finally {
      [dx, dw, dy, xDesc, wDesc, yDesc, conv].forEach((r) => r.close());
    }
  });

  test('cuDNN refusing a configuration is a CudnnError (FFT with stride 2)', () => {
    const conv = new ConvolutionDescriptor({ stride: 2 });
    const x = new TensorDescriptor({ dtype: 'f32', shape: [1, 1, 8, 8] });
    const w = new FilterDescriptor({ dtype: 'f32', shape: [1, 1, 3, 3] });
    const y = new TensorDescriptor({ dtype: 'f32', shape: conv.outputShape(x, w) });
    const [dx, dw, dy] = [DeviceBuffer.alloc(256, { stream }), DeviceBuffer.alloc(36, { stream }), DeviceBuffer.alloc(36, { stream })];
    try {
      expect(() => dnn.convolutionForward(conv, x, dx, w, dw, y, dy, { algorithm: 'fft' })).toThrow(CudnnError);
    } finally {
      [dx, dw, dy, conv, x, w, y].forEach((r) => r.close());
    }
  });

  const sigmoid = (v: number): number => 1 / (1 + Math.exp(-v));
  const acts: [ActivationMode, ConstructorParameters<typeof ActivationDescriptor>[1], (v: number) => number][] = [
    ['relu', {}, (v) => Math.max(0, v)],
    ['sigmoid', {}, sigmoid],
    ['tanh', {}, Math.tanh],
    ['elu', { alpha: 0.7 }, (v) => (v > 0 ? v : 0.7 * (Math.exp(v) - 1))],
    ['clippedRelu', { ceiling: 0.5 }, (v) => Math.min(Math.max(0, v), 0.5)],
    ['swish', { beta: 1.5 }, (v) => v * sigmoid(1.5 * v)],
  ];
  test.each(acts.flatMap(([m, o, f]) => (['f32', 'f64', 'f16'] as const).map((d) => [m, d, o, f] as const)))(
    'activation forward: %s, %s',
    (mode, dtype, options, f) => {
      const shape = [3, 5, 7, 2];
      const desc = new TensorDescriptor({ dtype, shape });
      const act = new ActivationDescriptor(mode, options);
      const x = values(desc.size, 5).map((v, i) => v * (1 + (i % 3))); // some beyond ±1
      const dx = upload(layout(x, shape, desc.strides, desc.size, dtype), stream);
      const dy = upload(layout(new Float64Array(desc.size).fill(0.25), shape, desc.strides, desc.size, dtype), stream);
      try {
        dnn.activationForward(act, desc, dx, desc, dy, { alpha: 2, beta: 1 });
        const want = x.map((v) => 2 * f(v) + 0.25);
        expectClose(
          gather(readBack(dy, dtype, stream), shape, desc.strides, dtype),
          want,
          dtype === 'f16' ? 4e-3 : dtype === 'f32' ? 1e-5 : 1e-10,
          `${mode} ${dtype}`,
        );
        dnn.activationForward(act, desc, dx, desc, dx); // in place
        expectClose(
          gather(readBack(dx, dtype, stream), shape, desc.strides, dtype),
          x.map(f),
          dtype === 'f16' ? 4e-3 : dtype === 'f32' ? 1e-5 : 1e-10,
          `${mode} ${dtype} in place`,
        );
      } finally {
        [dx, dy, desc, act].forEach((r) => r.close());
      }
    },
  );

  test('activation from an NCHW tensor into an NHWC one (strides differ, shape the same)', () => {
    const shape = [2, 3, 4, 5];
    const xDesc = new TensorDescriptor({ dtype: 'f32', shape });
    const yDesc = new TensorDescriptor({ dtype: 'f32', shape, layout: 'NHWC' });
    const x = values(xDesc.size, 6);
    const dx = upload(layout(x, shape, xDesc.strides, xDesc.size, 'f32'), stream);
    const dy = DeviceBuffer.alloc(yDesc.size * 4, { stream });
    try {
      dnn.activationForward(new ActivationDescriptor('relu'), xDesc, dx, yDesc, dy);
      expectClose(
        gather(readBack(dy, 'f32', stream), shape, channelsLastStrides(shape), 'f32'),
        x.map((v) => Math.max(0, v)),
        0,
        'relu NCHW → NHWC',
      );
    } finally {
      [dx, dy, xDesc, yDesc].forEach((r) => r.close());
    }
  });

  test('the handle on its own stream: setStream, and the stream closed before the handle', () => {
    const s = Stream.create();
    const h = Cudnn.create({ stream: s });
    const other = Stream.create();
    h.setStream(other);
    expect(h.stream).toBe(other);
    s.close(); // no longer the handle's stream: destroyed now or once the handle goes
    const desc = new TensorDescriptor({ dtype: 'f32', shape: [1, 1, 1, 4] });
    const buf = upload(new Float32Array([-1, 2, -3, 4]), other);
    h.activationForward(new ActivationDescriptor('relu'), desc, buf, desc, buf);
    other.synchronize();
    expect([...buf.toArray(Float32Array)]).toEqual([0, 2, 0, 4]);
    other.close(); // the handle's stream closed first: its destroy waits for the handle
    expect(() => h.activationForward(new ActivationDescriptor('relu'), desc, buf, desc, buf)).toThrow(ClosedObjectError);
    buf.close();
    h.close(); // destroys the handle, then the deferred stream
    expect(() => h.activationForward(new ActivationDescriptor('relu'), desc, buf, desc, buf)).toThrow(ClosedObjectError);
    desc.close();
  });
});
