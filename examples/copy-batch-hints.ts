// Batched copies with per-copy attributes, with the objects layer alone: `npx tsx examples/copy-batch-hints.ts`.
// One copyBatch call moves device data into managed memory that the host will read (destination hint:
// host), gathers device rows in any order (srcAccessOrder 'any': nothing earlier on the stream writes
// them), and uploads host data; each copy carries its own attribute set, and the host checks every byte.
import { DeviceBuffer, ManagedBuffer, Stream, copyBatch } from '../src';
import { done, requireGpu } from './gpu-check';

const NAME = 'copy-batch-hints';

async function main(): Promise<void> {
  const device = requireGpu(NAME);
  device.setCurrent();
  const n = 1 << 16;
  const stream = Stream.create();
  const source = DeviceBuffer.from(Uint32Array.from({ length: n }, (_, i) => i * 3));
  const forHost = ManagedBuffer.alloc(4 * n);
  const gathered = DeviceBuffer.alloc(4 * n);
  const upload = Uint32Array.from({ length: n / 2 }, (_, i) => i ^ 0x5a5a);
  const uploaded = DeviceBuffer.alloc(upload.byteLength);
  const half = 2 * n; // bytes
  // the halves of `source` swapped into `gathered`, the whole of it into managed memory, and an upload
  copyBatch(stream, [
    { dst: forHost, src: source, dstLocationHint: 'host', srcLocationHint: device.ordinal },
    { dst: gathered, src: source, bytes: half, srcOffset: half, srcAccessOrder: 'any' },
    { dst: gathered, src: source, bytes: half, dstOffset: half, srcAccessOrder: 'any', preferOverlapWithCompute: true },
    { dst: uploaded, src: upload }, // host data: read during the call
  ]);
  await stream.synchronized();
  const host = forHost.array(Uint32Array);
  const g = gathered.toArray(Uint32Array);
  const u = uploaded.toArray(Uint32Array);
  let bad = 0;
  for (let i = 0; i < n; i++) {
    if (host[i] !== i * 3) bad++;
    if (g[i] !== (i < n / 2 ? (i + n / 2) * 3 : (i - n / 2) * 3)) bad++;
    if (i < n / 2 && u[i] !== (i ^ 0x5a5a)) bad++;
  }
  for (const x of [source, forHost, gathered, uploaded, stream]) x.close();
  done(NAME, bad === 0, `4 copies with 4 attribute sets in one cuMemcpyBatchAsync; ${bad} wrong words of ${2.5 * n}`);
}
void main();
