// Processes that meet and share: cuda-ts-run + Communicator.fromEnvironment all-reducing across two
// processes (NVLink/shared memory, then forced onto the network transport over loopback), a rank killed
// mid-collective (the others fail within 30 s, the launcher fails, nothing hangs), and GPU memory
// shared between processes and worker threads (pool IPC, legacy IPC, IPC events). The children run
// TypeScript through tsx (under Bun and Deno through scripts/run-ts.cjs). Cases needing two GPUs skip with their reason on one.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import * as nccl from '../../generated/13.0/nccl';
import { Device } from '../../src';
import { loadLibrary } from '../../support';
import { describeGpu, noGpuReason, rankScript, TS_RUNNER } from './gpu-env';

const ROOT = resolve(__dirname, '../..');
const RUN = resolve(ROOT, 'bin/cuda-ts-run.js');
const RANK = resolve(__dirname, 'fixtures/distributed-rank.ts');
const IPC = resolve(__dirname, 'fixtures/ipc-role.ts');
const NETWORK_ONLY = { NCCL_P2P_DISABLE: '1', NCCL_SHM_DISABLE: '1', NCCL_IB_DISABLE: '1', NCCL_SOCKET_IFNAME: 'lo' };

const deviceCount = noGpuReason ? 0 : Device.count();
const noNccl = ((): string | undefined => {
  try {
    loadLibrary(nccl.binder.spec);
    return undefined;
  } catch (e) {
    return `NCCL not found: ${(e as Error).message.split('\n')[0]}`;
  }
})();
function describeWith(n: number, name: string, fn: () => void): void {
  const reason = noGpuReason ?? (deviceCount < n ? `needs ${n}+ GPUs, this machine has ${deviceCount}` : noNccl);
  if (reason) describe.skip(`${name} — skipped: ${reason}`, fn);
  else describe(name, fn);
}

interface Result {
  code: number | null;
  signal: string | null;
  lines: Record<string, unknown>[];
  stderr: string;
  ms: number;
}

/** Runs `node args` with `env`; kills it (and fails) after `limitMs`; parses JSON lines of stdout. */
function run(
  args: string[],
  env: NodeJS.ProcessEnv,
  limitMs: number,
  stdin?: (write: (s: string) => void, line: Record<string, unknown>) => void,
): Promise<Result> {
  const t0 = Date.now();
  return new Promise((done, fail) => {
    const p = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, NCCL_NVLS_ENABLE: '0', ...env }, detached: true });
    const lines: Record<string, unknown>[] = [];
    let buffered = '';
    let stderr = '';
    p.stdout.on('data', (d) => {
      buffered += d;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (!line.startsWith('{')) continue;
        const o = JSON.parse(line) as Record<string, unknown>;
        lines.push(o);
        stdin?.((s) => p.stdin.write(s), o);
      }
    });
    p.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      try {
        process.kill(-p.pid!, 'SIGKILL');
      } catch {
        // gone
      }
      fail(new Error(`still running after ${limitMs} ms (a hang)\nstdout: ${JSON.stringify(lines)}\nstderr: ${stderr.slice(-3000)}`));
    }, limitMs);
    p.on('exit', (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, lines, stderr, ms: Date.now() - t0 });
    });
  });
}

describeWith(2, 'rendezvous: two processes, one GPU each, through cuda-ts-run', () => {
  const ranks = 2;
  for (const [mode, env] of [
    ['default transports', {}],
    ['network transport over loopback', NETWORK_ONLY],
  ] as const) {
    test(`all-reduce is correct (${mode})`, async () => {
      const r = await run([RUN, '--nproc-per-node', String(ranks), ...rankScript(RANK), 'allreduce'], env, 180_000);
      if (r.code !== 0) console.log(`${JSON.stringify(r.lines).slice(-3000)}\n${r.stderr.slice(-4000)}`);
      expect(r.code).toBe(0);
      const rows = r.lines.filter((l) => 'bad' in l).sort((a, b) => (a.rank as number) - (b.rank as number));
      expect(rows.map((l) => [l.rank, l.size, l.device, l.bad, l.first, l.nonBlocking])).toEqual(
        Array.from({ length: ranks }, (_, i) => [i, ranks, i, 0, (ranks * (ranks + 1)) / 2, true]),
      );
      console.log(`rendezvous ${mode}: ${ranks} ranks met in ${rows.map((l) => l.meetMs).join(' / ')} ms, 0 wrong elements`);
    });
  }

  test('a rank killed mid-collective: the others error within 30 s, the launcher exits non-zero, nothing hangs', async () => {
    const r = await run([RUN, '--nproc-per-node', String(ranks), '--kill-grace-ms', '45000', ...rankScript(RANK), 'kill'], {}, 120_000);
    console.log(`kill test: launcher exit ${r.code} after ${r.ms} ms; ${JSON.stringify(r.lines)}`);
    expect(r.code).not.toBe(0);
    const survivors = r.lines.filter((l) => 'error' in l);
    expect(survivors.map((l) => l.rank)).toEqual(Array.from({ length: ranks - 1 }, (_, i) => i));
    for (const s of survivors) {
      expect(s.errorAfterMs as number).toBeLessThan(30_000);
      expect(s.aborted).toBe(true);
      expect(String(s.errorName)).toMatch(/CommunicatorTimeoutError|NcclError/);
    }
    expect(r.stderr).toMatch(/rank 1 \(local 1\) was killed by SIGKILL/);
  });
});

describeGpu('GPU memory between processes (IPC)', () => {
  test("producer process → consumer process: pool IPC (descriptor passed over the exporter's Unix socket), legacy IPC, IPC event; every element checked", async () => {
    let consumer: Promise<Result> | undefined;
    const producer = await run([TS_RUNNER, IPC, 'producer'], {}, 120_000, (write, line) => {
      if (!line.handles) return;
      consumer = run([TS_RUNNER, IPC, 'consumer', JSON.stringify(line.handles)], {}, 60_000);
      void consumer.then(
        () => write('done\n'),
        () => write('done\n'),
      );
    });
    const c = await consumer!.catch((e: Error) => {
      console.log(`consumer: ${e.message}\nproducer stderr: ${producer.stderr.slice(-2000)}`);
      throw e;
    });
    if (c.code !== 0) console.log(c.stderr.slice(-3000), JSON.stringify(c.lines));
    expect(producer.code).toBe(0);
    expect(c.code).toBe(0);
    const got = c.lines.at(-1)!;
    console.log(`IPC across processes: ${JSON.stringify(got)}`);
    expect(got).toMatchObject({ elements: 16 << 20, bad: 0, legacyElements: 1 << 20, badLegacy: 0, eventDone: true });
    expect(got.via).toBe('socket'); // SCM_RIGHTS from the exporter: no ptrace permission or /proc needed
    expect(producer.lines.at(-1)).toEqual({ producerSees: -1 }); // the consumer's write reached the producer's memory
  }, 200_000);

  test('producer starts the consumer with the pool descriptor in its stdio (no pidfd/procfs)', async () => {
    const r = await run([TS_RUNNER, IPC, 'producer', 'spawn'], {}, 120_000);
    if (r.code !== 0) console.log(r.stderr.slice(-3000));
    expect(r.code).toBe(0);
    const [first, second] = r.lines;
    expect(first).toMatchObject({ consumerExit: 0, consumer: { via: 'given', elements: 16 << 20, bad: 0, badLegacy: 0 } });
    expect(second).toEqual({ producerSees: -1 });
  });

  test('across worker threads: handles posted with postMessage, every element checked', async () => {
    const r = await run([TS_RUNNER, IPC, 'threads'], {}, 120_000);
    if (r.code !== 0) console.log(r.stderr.slice(-3000));
    expect(r.code).toBe(0);
    expect(r.lines.at(-1)).toMatchObject({ worker: { via: 'same-process', elements: 16 << 20, bad: 0, badLegacy: 0, eventDone: true }, producerSees: -1 });
  });
});
