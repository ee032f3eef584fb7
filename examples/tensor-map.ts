// A TMA kernel (Hopper's tensor memory accelerator, sm_90+): `npx tsx examples/tensor-map.ts`.
// A `TensorMap` describes a 60×60 float matrix in a DeviceBuffer, tiled in 16×16 boxes. Each block of
// the kernel loads one box into shared memory with one `cp.async.bulk.tensor` instruction (the 4×4 boxes
// overhang the matrix: out-of-bounds elements arrive as zeros), then writes factor × tile back out.
// `replaceAddress` then points the same map at a second matrix for a second launch.
import { DeviceBuffer, LaunchConfig, Stream, TensorMap, compile, launch } from '../src';
import { done, requireGpu } from './gpu-check';

const TILE = 16;
const SOURCE = String.raw`
struct alignas(64) TensorMap { unsigned long long opaque[16]; }; // CUtensorMap: 128 opaque bytes
extern "C" __global__ void scale_tiles(const __grid_constant__ TensorMap map, float* out, unsigned width, unsigned height,
                                       float factor, unsigned* oobNonZero) {
  __shared__ alignas(128) float tile[${TILE} * ${TILE}];
  __shared__ alignas(8) unsigned long long bar;
  unsigned barAddr = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned tileAddr = (unsigned)__cvta_generic_to_shared(tile);
  int x0 = blockIdx.x * ${TILE}, y0 = blockIdx.y * ${TILE};
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(barAddr));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(barAddr), "r"(${TILE * TILE * 4}) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(tileAddr), "l"(&map), "r"(x0), "r"(y0), "r"(barAddr) : "memory");
    asm volatile("{\n .reg .pred p;\n WAIT%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra WAIT%=;\n }" :: "r"(barAddr) : "memory");
  }
  __syncthreads();
  for (int i = threadIdx.x; i < ${TILE * TILE}; i += blockDim.x) {
    int x = x0 + i % ${TILE}, y = y0 + i / ${TILE};
    if (x < width && y < height) out[y * width + x] = factor * tile[i];
    else if (tile[i] != 0.0f) atomicAdd(oobNonZero, 1u);
  }
}`;

async function main(): Promise<void> {
  const device = requireGpu('tensor-map');
  const [major] = device.computeCapability;
  if (major < 9) done('tensor-map', false, `TMA needs sm_90+, this device is ${device.arch}`);
  device.setCurrent();
  const { program, module } = compile(SOURCE, { name: 'tensor-map.cu', arch: `${device.arch}a` });
  const kernel = module.kernel('scale_tiles', [TensorMap.argType, 'ptr', 'u32', 'u32', 'f32', 'ptr']);
  const width = 60;
  const height = 60; // 60 × 4 = 240-byte rows: a multiple of 16, as TMA strides must be
  const hostA = Float32Array.from({ length: width * height }, (_, i) => i + 1);
  const hostB = Float32Array.from({ length: width * height }, (_, i) => -(i % 97) - 1);
  const a = DeviceBuffer.from(hostA);
  const b = DeviceBuffer.from(hostB);
  const out = DeviceBuffer.alloc(4 * width * height);
  const oob = DeviceBuffer.alloc(4);
  oob.memset(0);
  const stream = Stream.create();
  const map = TensorMap.tiled({ buffer: a, dtype: 'f32', shape: [width, height], box: [TILE, TILE] });
  const cfg = new LaunchConfig({ grid: [Math.ceil(width / TILE), Math.ceil(height / TILE)], block: 128 });

  const check = (host: Float32Array, factor: number): number => {
    const got = out.toArray(Float32Array);
    let bad = 0;
    for (let i = 0; i < host.length; i++) if (got[i] !== factor * host[i]) bad++;
    return bad;
  };
  launch(stream, cfg, kernel, map.bytes, out, width, height, 2, oob);
  await stream.synchronized();
  const badA = check(hostA, 2);
  map.replaceAddress(b); // same shape, another matrix: the map now keeps b alive instead of a
  launch(stream, cfg, kernel, map.bytes, out, width, height, 3, oob);
  await stream.synchronized();
  const badB = check(hostB, 3);
  const oobNonZero = oob.toArray(Uint32Array)[0];
  const tiles = cfg.gx * cfg.gy;
  for (const x of [map, oob, out, b, a, stream, kernel, module, program]) x.close();
  done(
    'tensor-map',
    badA === 0 && badB === 0 && oobNonZero === 0,
    `${tiles} TMA tile loads of ${TILE}×${TILE} per launch over a ${width}×${height} f32 matrix; 2·A: ${width * height - badA}/${width * height} exact, ` +
      `after replaceAddress 3·B: ${width * height - badB}/${width * height} exact; out-of-bounds elements zero-filled (${oobNonZero} non-zero)`,
  );
}
void main();
