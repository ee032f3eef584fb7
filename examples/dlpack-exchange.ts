// Strided views and DLPack, with the objects layer alone: `npx tsx examples/dlpack-exchange.ts`.
// A producer fills a 4×6 matrix on the GPU, views it transposed (a StridedView: no copy) and exports
// it as a DLPack 1.x DLManagedTensorVersioned — the address a native addon or another library in the
// process would receive. A consumer imports that address (fromDLPack), scales the tensor in place with
// a kernel and reads it back in its own (transposed) order; closing its buffer runs the producer's
// deleter exactly once. Managed memory goes through the same round trip.
import { DeviceBuffer, LaunchConfig, ManagedBuffer, Stream, StridedView, compile, dlpackExportsAlive, fromDLPack, launch, toDLPack } from '../src';
import { done, requireGpu } from './gpu-check';

const NAME = 'dlpack-exchange';
const SOURCE = `
extern "C" __global__ void fill(float* p, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < rows * cols) p[i] = (float)((i / cols) * 10 + i % cols);
}
extern "C" __global__ void scale(float* p, float k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= k;
}`;
const [ROWS, COLS] = [4, 6];

/** The transposed matrix the consumer should read after scaling by `k`. */
function expected(k: number): number[] {
  const out: number[] = [];
  for (let c = 0; c < COLS; c++) for (let r = 0; r < ROWS; r++) out.push(k * (r * 10 + c));
  return out;
}

async function main(): Promise<void> {
  const device = requireGpu(NAME);
  device.setCurrent();
  const { program, module } = compile(SOURCE, { name: 'dlpack.cu' });
  const [fill, scale] = [module.kernel('fill', ['ptr', 'i32', 'i32']), module.kernel('scale', ['ptr', 'f32', 'i32'])];
  const stream = Stream.create();
  const results: string[] = [];
  let ok = true;
  for (const [kind, buffer] of [
    ['device', DeviceBuffer.alloc(4 * ROWS * COLS)],
    ['managed', ManagedBuffer.alloc(4 * ROWS * COLS)],
  ] as const) {
    launch(stream, LaunchConfig.linear(ROWS * COLS), fill, buffer, ROWS, COLS);
    await stream.synchronized();
    const producerView = StridedView.of(buffer, { dtype: 'f32', shape: [ROWS, COLS] }).transpose();
    const address = toDLPack(producerView); // what a native consumer would be handed
    buffer.close(); // the producer is done; the exported tensor keeps the memory
    const tensor = fromDLPack(address); // the consumer's side
    launch(stream, LaunchConfig.linear(ROWS * COLS), scale, tensor.buffer, 3, ROWS * COLS);
    await stream.synchronized();
    const got = Array.from(tensor.toArray() as Float32Array);
    const right =
      got.every((v, i) => v === expected(3)[i]) &&
      tensor.shape.join() === `${COLS},${ROWS}` &&
      tensor.strides.join() === `1,${COLS}` &&
      tensor.memoryKind === kind;
    const alive = dlpackExportsAlive();
    tensor.buffer.close(); // the consumer is done: the deleter runs, once
    const released = dlpackExportsAlive() === alive - 1;
    ok &&= right && released;
    results.push(
      `${kind}: shape [${tensor.shape}] strides [${tensor.strides}] ${right ? 'read back right' : 'WRONG'}, deleter ${released ? 'ran once' : 'did not run'}`,
    );
  }
  for (const r of [stream, fill, scale, module, program]) r.close();
  done(NAME, ok && dlpackExportsAlive() === 0, results.join('; '));
}
void main();
