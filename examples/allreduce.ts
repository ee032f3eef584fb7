// All-reduce across every GPU with NCCL, one process driving all devices: `npx tsx examples/allreduce.ts`.
import { Communicator, Device, DeviceBuffer, NcclUnavailableError, Stream } from '../src';
import { done, requireGpu } from './gpu-check';

process.env.NCCL_NVLS_ENABLE = '0'; // never NVLink multicast (NVLS); NCCL reads this at init

requireGpu('allreduce');
const devices = Array.from({ length: Device.count() }, (_, i) => Device.get(i));
let comms: Communicator[];
try {
  comms = Communicator.initAll(devices);
} catch (e) {
  if (!(e instanceof NcclUnavailableError)) throw e;
  console.log(`allreduce: SKIPPED — ${e.message.split('\n')[0]}`);
  process.exit(2);
}

const n = 1 << 22; // 16 MiB of float32 per GPU
const streams = comms.map((c) => Stream.create({ context: c.context }));
const buffers = comms.map((c) => DeviceBuffer.from(new Float32Array(n).fill(c.rank + 1), { context: c.context }));
// One thread drives every device: the per-device calls must form one group.
Communicator.group(() => comms.forEach((c, i) => c.allReduce(buffers[i], { dtype: 'f32', op: 'sum', stream: streams[i] })));
for (const s of streams) s.synchronize();

const r = comms.length;
const want = (r * (r + 1)) / 2;
let bad = 0;
for (const b of buffers) for (const x of b.toArray(Float32Array)) if (x !== want) bad++;
for (const list of [buffers, streams, comms]) for (const x of list) x.close();
done('allreduce', bad === 0, `${n} floats summed across ${r} GPU(s) (${devices.map((d) => d.name).join(', ')}): every element ${want}, ${bad} wrong`);
