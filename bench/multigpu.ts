// `npm run bench:multigpu` (= tsx bench/multigpu.ts) on a machine with 2+ GPUs: cuda-ts against PyTorch.
//
//   cuda-ts (this process)                      PyTorch (python3 bench/python/bench_torch_allreduce.py)
//   peer_copy_sync_256MiB   copyPeer GPU 0 → 1, then both devices synchronized    dst.copy_(src) + synchronize
//   peer_copy_async_256MiB  copyPeer on a stream  copy_ enqueued, one synchronize per pass
//   allreduce_256MiB_f32_*  Communicator.initAll  torch.distributed NCCL, one process per GPU (spawn)
//
// Method of bench/common.ts: one untimed warm-up pass, 5 timed passes, median; GB/s = bytes × ops / ns.
// All-reduce: in place, sum of 64 Mi float32 on every GPU, all ranks in one group per iteration;
// algBW = bytes / time per all-reduce, busBW = algBW × 2(n−1)/n (nccl-tests). NCCL_NVLS_ENABLE=0 for
// both sides: no NVLink multicast. Prints one table; writes bench/results/multigpu.json (and
// $OUT/multigpu.json when $OUT is set). Env: BENCH_SCALE (pass length), PYTHON (default python3).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ncclGetVersion } from '../generated/13.0/nccl';
import { Communicator, Device, DeviceBuffer, Stream, canAccessPeer, copyPeer, enablePeerAccess } from '../src';
import {
  BENCH_DIR,
  COPY_BYTES,
  Impl,
  type ImplResult,
  type MeasuredRow,
  REPO_ROOT,
  RESULTS_DIR,
  fmt,
  isMeasured,
  log,
  measure,
  reason,
  scaled,
  table,
  writeJson,
} from './common';

process.env.NCCL_NVLS_ENABLE = '0'; // read by NCCL when it initialises (first communicator), not at import

const ROWS = ['peer_copy_sync_256MiB', 'peer_copy_async_256MiB', 'allreduce_256MiB_f32_busbw', 'allreduce_256MiB_f32_algbw'];

function closeAll(...lists: { close(): void }[][]): void {
  for (const list of lists) for (const r of list) r.close();
}

/** `r` with every value multiplied by `factor` (algBW → busBW). */
function scaleRow(r: MeasuredRow, factor: number): MeasuredRow {
  const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;
  return { ...r, median: round4(r.median * factor), reps: r.reps.map((x) => round4(x * factor)) };
}

async function peerCopies(impl: Impl, d0: Device, d1: Device): Promise<void> {
  const src = DeviceBuffer.alloc(COPY_BYTES, { context: d0.primaryContext() });
  const dst = DeviceBuffer.alloc(COPY_BYTES, { context: d1.primaryContext() });
  const stream = Stream.create({ context: d0.primaryContext() }); // the source's stream, as PyTorch copies
  try {
    src.memset(1);
    dst.memset(0);
    const ops = scaled(10, 1);
    await impl.row('peer_copy_sync_256MiB', () =>
      measure(
        (k) => {
          // cuMemcpyPeer may return before a device-to-device copy ends: wait for both devices, per copy
          // (as the PyTorch row does with torch.cuda.synchronize on each device)
          for (let i = 0; i < k; i++) {
            copyPeer(dst, src);
            d0.synchronize();
            d1.synchronize();
          }
        },
        ops,
        2,
        'GB/s',
        COPY_BYTES,
      ),
    );
    const head = dst.subarray(0, 4).toArray(Uint8Array);
    const tail = dst.subarray(COPY_BYTES - 4).toArray(Uint8Array);
    if (![...head, ...tail].every((x) => x === 1)) impl.skip('peer_copy_sync_256MiB', 'copied data is wrong');
    await impl.row('peer_copy_async_256MiB', () =>
      measure(
        (k) => {
          for (let i = 0; i < k; i++) copyPeer(dst, src, { stream });
          stream.synchronize();
        },
        ops,
        2,
        'GB/s',
        COPY_BYTES,
      ),
    );
  } finally {
    closeAll([src, dst, stream]);
  }
}

async function allReduce(impl: Impl, devices: Device[]): Promise<void> {
  const comms = Communicator.initAll(devices);
  const streams = comms.map((c) => Stream.create({ context: c.context }));
  const bufs = comms.map((c) => DeviceBuffer.alloc(COPY_BYTES, { context: c.context }));
  try {
    const n = comms.length;
    // correctness first: rank r holds r + 1 everywhere, the sum is n(n+1)/2
    const bits = new Uint32Array(new Float32Array([0]).buffer);
    comms.forEach((c, i) => {
      new Float32Array(bits.buffer)[0] = c.rank + 1;
      bufs[i].memset(bits[0], { width: 4 });
    });
    const iteration = (): void => Communicator.group(() => comms.forEach((c, i) => c.allReduce(bufs[i], { dtype: 'f32', op: 'sum', stream: streams[i] })));
    iteration();
    streams.forEach((s) => s.synchronize());
    const want = (n * (n + 1)) / 2;
    for (const b of bufs) {
      const ends = [...b.subarray(0, 4).toArray(Float32Array), ...b.subarray(COPY_BYTES - 4).toArray(Float32Array)];
      if (!ends.every((x) => x === want)) throw new Error(`all-reduce result is wrong: ${ends.join(', ')} (want ${want})`);
    }
    bufs.forEach((b) => b.memset(0)); // timing on zeros: sums never overflow; values do not change NCCL's speed

    let alg: MeasuredRow | undefined;
    await impl.row('allreduce_256MiB_f32_busbw', () => {
      alg = measure(
        (k) => {
          for (let i = 0; i < k; i++) iteration();
          streams.forEach((s) => s.synchronize());
        },
        scaled(20, 1),
        5,
        'GB/s',
        COPY_BYTES,
      );
      return scaleRow(alg, (2 * (n - 1)) / n);
    });
    if (alg) impl.rows.allreduce_256MiB_f32_algbw = alg;
  } finally {
    closeAll(bufs, streams, comms);
  }
}

async function cudaTs(): Promise<{ impl: ImplResult; count: number }> {
  const impl = new Impl('cuda-ts');
  let count = 0;
  try {
    count = Device.count();
  } catch (e) {
    log(`cuda-ts: no usable GPU: ${reason(e)}`);
    return { impl: { ...impl.result(), skipped: `no usable GPU: ${reason(e)}` }, count };
  }
  const devices = Array.from({ length: count }, (_, i) => Device.get(i));
  impl.meta.gpus = devices.map((d) => d.name);
  if (count < 2) {
    for (const r of ROWS) impl.skip(r, `needs 2+ GPUs, found ${count}`);
    return { impl: impl.result(), count };
  }
  const [d0, d1] = devices;
  impl.meta.peerAccess = devices.map((a) => devices.map((b) => canAccessPeer(a, b)));
  for (const a of devices) for (const b of devices) if (a !== b && canAccessPeer(a, b)) enablePeerAccess(a, b);
  try {
    await peerCopies(impl, d0, d1);
  } catch (e) {
    for (const r of ROWS.slice(0, 2)) if (!isMeasured(impl.rows[r])) impl.skip(r, reason(e));
  }
  try {
    await allReduce(impl, devices);
    impl.meta.nccl = ncclGetVersion();
  } catch (e) {
    for (const r of ROWS.slice(2)) if (!isMeasured(impl.rows[r])) impl.skip(r, reason(e));
  }
  return { impl: impl.result(), count };
}

/** Runs the PyTorch side; its JSON is the last line of its stdout (its progress goes to stderr, passed through). */
function pytorch(): ImplResult {
  const py = process.env.PYTHON || 'python3';
  const script = join(BENCH_DIR, 'python', 'bench_torch_allreduce.py');
  const r = spawnSync(py, [script], {
    cwd: REPO_ROOT,
    env: { ...process.env, NCCL_NVLS_ENABLE: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    timeout: 300_000,
  });
  const last = (r.stdout ?? '')
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .pop();
  if (r.status === 0 && last) return JSON.parse(last) as ImplResult;
  return { impl: 'pytorch', meta: {}, rows: {}, skipped: `${script} exited ${r.status ?? r.signal}${r.error ? `: ${reason(r.error)}` : ''}` };
}

function cell(r: ImplResult, name: string): string {
  const row = r.rows?.[name];
  return isMeasured(row) ? fmt(row.median) : 'skipped';
}

async function main(): Promise<void> {
  log('--- cuda-ts');
  const { impl: ts, count } = await cudaTs();
  log('--- pytorch');
  const torch = count >= 2 ? pytorch() : { impl: 'pytorch', meta: {}, rows: {}, skipped: `needs 2+ GPUs, found ${count}` };
  const rows = ROWS.map((name) => {
    const a = ts.rows[name];
    const b = torch.rows?.[name];
    const ratio = isMeasured(a) && isMeasured(b) ? `${(a.median / b.median).toFixed(2)}×` : '-';
    return [name, cell(ts, name), cell(torch, name), ratio];
  });
  const text = table(['GB/s (median of 5)', 'cuda-ts', 'PyTorch', 'cuda-ts/PyTorch'], rows);
  const notes = [ts, torch].flatMap((r) => [
    ...(r.skipped ? [`${r.impl}: skipped: ${r.skipped}`] : []),
    ...Object.entries(r.rows ?? {})
      .filter(([, v]) => !isMeasured(v))
      .map(([k, v]) => `${r.impl} ${k}: ${(v as { skipped: string }).skipped}`),
  ]);
  console.log(`multi-GPU: ${count} GPU(s)${ts.meta.gpus ? ` (${(ts.meta.gpus as string[]).join(', ')})` : ''}, NCCL_NVLS_ENABLE=0`);
  console.log(text);
  for (const n of [...new Set(notes)]) console.log(`  ${n}`);
  const result = {
    date: new Date().toISOString(),
    gpus: count,
    env: { NCCL_NVLS_ENABLE: '0', BENCH_SCALE: process.env.BENCH_SCALE ?? '1' },
    results: [ts, torch],
    table: text,
  };
  writeJson(join(RESULTS_DIR, 'multigpu.json'), result);
  if (process.env.OUT) writeJson(join(process.env.OUT, 'multigpu.json'), result);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
