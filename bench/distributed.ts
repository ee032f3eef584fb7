// Bus bandwidth of a 256 MiB f32 all-reduce between processes that met through the rendezvous
// (cuda-ts-run + Communicator.fromEnvironment), in two modes — default transports, and the network
// transport over loopback (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_SOCKET_IFNAME=lo)
// — each next to PyTorch (torchrun + torch.distributed, bench/python/bench_torch_rendezvous.py) with
// the same environment, in the same run. NCCL_NVLS_ENABLE=0 throughout.
//   npx tsx bench/distributed.ts [--nproc N]          (default: every GPU)
// Per mode and implementation: 5 warm-up all-reduces, then 5 passes of 20; busBW = bytes/time × 2(n−1)/n,
// the slowest rank's pass time counts (nccl-tests' convention); the median pass is reported.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const BYTES = 256 << 20;
const OPS = 20;
const PASSES = 5;

async function rank(): Promise<void> {
  const { Communicator, DeviceBuffer, Stream } = await import('../src/index.js');
  const comm = await Communicator.fromEnvironment();
  const stream = Stream.create({ context: comm.context });
  const buf = DeviceBuffer.alloc(BYTES, { context: comm.context });
  buf.memset(0);
  for (let i = 0; i < 5; i++) comm.allReduce(buf, { dtype: 'f32', stream });
  await comm.synchronized({ stream });
  const passes: number[] = [];
  for (let p = 0; p < PASSES; p++) {
    await comm.barrier();
    const t0 = performance.now();
    for (let i = 0; i < OPS; i++) comm.allReduce(buf, { dtype: 'f32', stream });
    stream.synchronize(); // blocking, as torch.cuda.synchronize(): polling would add up to its interval to each pass
    const ms = performance.now() - t0;
    // the slowest rank's time counts: share through the store
    await comm.store!.set(`bench/${p}/${comm.rank}`, String(ms));
    const all = await Promise.all(Array.from({ length: comm.count }, (_, r) => comm.store!.get(`bench/${p}/${r}`)));
    passes.push(Math.max(...all.map((b) => Number(b.toString()))));
  }
  const n = comm.count;
  const median = [...passes].sort((a, b) => a - b)[Math.floor(PASSES / 2)];
  const alg = (BYTES * OPS) / (median / 1000) / 1e9;
  if (comm.rank === 0)
    process.stdout.write(
      `${JSON.stringify({ impl: 'cuda-ts', ranks: n, algGBs: +alg.toFixed(2), busGBs: +((alg * 2 * (n - 1)) / n).toFixed(2), passesMs: passes.map((x) => +x.toFixed(2)) })}\n`,
    );
  await comm.barrier();
  buf.close();
  stream.close();
  comm.close();
}

function lastJson(out: string): Record<string, number> | undefined {
  const line = out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .pop();
  return line ? JSON.parse(line) : undefined;
}

function orchestrate(): void {
  const root = resolve(__dirname, '..');
  const i = process.argv.indexOf('--nproc');
  let nproc = i > 0 ? Number(process.argv[i + 1]) : NaN;
  if (!(nproc >= 1)) {
    const q = spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8' });
    nproc = (q.stdout ?? '').split('\n').filter((l) => l.startsWith('GPU ')).length;
  }
  if (nproc < 2) {
    console.log(`distributed bench: needs 2+ GPUs, found ${nproc}`);
    process.exit(1);
  }
  const modes: [string, NodeJS.ProcessEnv][] = [
    ['default transports', {}],
    ['network transport over loopback', { NCCL_P2P_DISABLE: '1', NCCL_SHM_DISABLE: '1', NCCL_IB_DISABLE: '1', NCCL_SOCKET_IFNAME: 'lo' }],
  ];
  const rows: string[] = [];
  for (const [mode, extra] of modes) {
    const env = { ...process.env, NCCL_NVLS_ENABLE: '0', ...extra };
    const ts = spawnSync(process.execPath, [resolve(root, 'bin/cuda-ts-run.js'), '--nproc-per-node', String(nproc), __filename], {
      env,
      encoding: 'utf8',
      timeout: 300_000,
    });
    const py = spawnSync('torchrun', ['--standalone', `--nproc-per-node=${nproc}`, resolve(root, 'bench/python/bench_torch_rendezvous.py')], {
      env,
      encoding: 'utf8',
      timeout: 300_000,
    });
    const a = lastJson(ts.stdout ?? '');
    const b = lastJson(py.stdout ?? '');
    if (!a) process.stderr.write(`cuda-ts (${mode}) failed: ${ts.stderr?.slice(-2000)}\n`);
    if (!b) process.stderr.write(`torch (${mode}) failed: ${py.error?.message ?? ''} ${py.stderr?.slice(-2000)}\n`);
    const ratio = a && b ? ` (${((a.busGBs / b.busGBs) * 100).toFixed(1)}% of PyTorch)` : '';
    rows.push(`${nproc} ranks, ${mode}: cuda-ts ${a ? `${a.busGBs} GB/s` : 'failed'}, PyTorch ${b ? `${b.busGBs} GB/s` : 'failed'}${ratio}`);
    console.log(`busbw 256MiB f32 all-reduce — ${rows.at(-1)}`);
  }
}

if (process.env.RANK !== undefined)
  rank().catch((e) => {
    console.error(e);
    process.exit(1);
  });
else orchestrate();
