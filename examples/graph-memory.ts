// Graph memory, and enums by name, with the objects layer alone: `npx tsx examples/graph-memory.ts`.
// A graph allocates a scratch buffer inside itself (a memory-allocation node), fills it, reduces it into
// a result and frees it; replaying it reuses the memory the driver keeps for graphs. Device.graphMemory
// shows the used and reserved figures and their high-water marks, trimGraphMemory() returns the
// reserve, and a second graph is captured in CU_STREAM_CAPTURE_MODE_GLOBAL, named from cuda-ts/objects.
import { CUstreamCaptureMode, DeviceBuffer, Graph, Stream, type GraphMemoryStats } from '../src';
import { done, requireGpu } from './gpu-check';

const NAME = 'graph-memory';
const MiB = 2 ** 20;
const mib = (s: GraphMemoryStats): string =>
  `used ${s.used / MiB} (high ${s.usedHigh / MiB}) MiB, reserved ${s.reserved / MiB} (high ${s.reservedHigh / MiB}) MiB`;

async function main(): Promise<void> {
  const device = requireGpu(NAME);
  device.setCurrent();
  device.trimGraphMemory();
  device.resetGraphMemoryHighWatermarks();
  const stream = Stream.create();
  const result = DeviceBuffer.alloc(4096);
  const graph = Graph.create();
  const scratch = graph.addMemAllocNode([], 64 * MiB);
  const fill = graph.addMemsetNode([scratch.node], scratch, 7);
  const copy = graph.addMemcpyNode([fill], result, scratch, { byteLength: 4096 });
  graph.addMemFreeNode([copy], scratch);
  const exec = graph.instantiate();
  for (let i = 0; i < 3; i++) exec.launch(stream);
  await stream.synchronized();
  const replayed = device.graphMemory;
  const copied = result.toArray(Uint8Array).every((b) => b === 7); // the scratch's fill reached the result
  console.log(`after 3 replays: ${mib(replayed)}`);
  exec.close();
  graph.close();
  device.synchronize();
  device.trimGraphMemory();
  const trimmed = device.graphMemory;
  console.log(`after trim:      ${mib(trimmed)}`);
  const captured = Graph.capture(stream, (s) => result.memset(9, { stream: s }), CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL);
  const capturedExec = captured.instantiate();
  capturedExec.launch(stream);
  await stream.synchronized();
  const bytes = result.toArray(Uint8Array);
  const ok = copied && replayed.usedHigh >= 64 * MiB && replayed.reserved >= 64 * MiB && trimmed.reserved < replayed.reserved && bytes.every((b) => b === 9);
  for (const x of [capturedExec, captured, result, stream]) x.close();
  done(
    NAME,
    ok,
    `64 MiB graph scratch replayed 3 times: reserved ${replayed.reserved / MiB} MiB, ${trimmed.reserved / MiB} MiB after trim; a GLOBAL-mode capture ran`,
  );
}
void main();
