// The rendezvous store on the GPU path (issue 29): Communicator.fromEnvironment through cuda-ts-run with
// timeoutMs: Infinity, then 40,000 comm.barrier() calls (past the old 32,768 limit), on as many GPUs as
// there are (one is enough; two when lent).
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import * as nccl from '../../generated/13.0/nccl';
import { Device } from '../../src';
import { loadLibrary } from '../../support';
import { describeGpu, noGpuReason, rankScript } from './gpu-env';

const ROOT = resolve(__dirname, '../..');
const RUN = resolve(ROOT, 'bin/cuda-ts-run.js');
const RANK = resolve(__dirname, 'fixtures/store-rank.ts');
const noNccl = ((): string | undefined => {
  try {
    loadLibrary(nccl.binder.spec);
    return undefined;
  } catch (e) {
    return `NCCL not found: ${(e as Error).message.split('\n')[0]}`;
  }
})();

interface Result {
  code: number | null;
  lines: Record<string, unknown>[];
  stderr: string;
}

function run(args: string[], limitMs: number): Promise<Result> {
  return new Promise((done, fail) => {
    const p = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, NCCL_NVLS_ENABLE: '0' }, detached: true });
    let out = '';
    let stderr = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      try {
        process.kill(-p.pid!, 'SIGKILL');
      } catch {
        // gone
      }
      fail(new Error(`still running after ${limitMs} ms\n${out}\n${stderr.slice(-3000)}`));
    }, limitMs);
    p.on('exit', (code) => {
      clearTimeout(timer);
      const lines = out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      done({ code, lines, stderr });
    });
  });
}

describeGpu('rendezvous store on the GPU path (issue 29)', () => {
  const ranks = noGpuReason ? 1 : Math.min(2, Device.count());
  (noNccl ? test.skip : test)(
    `${ranks} rank(s): timeoutMs Infinity meets, all-reduce is right, 40,000 barriers pass and leave the store small`,
    async () => {
      // --master: rank 0 serves the store (without it the launcher serves it, and rank 0 cannot count its keys)
      const port = await new Promise<number>((done) => {
        const probe = createServer().listen(0, '127.0.0.1', () => {
          const { port: p } = probe.address() as AddressInfo;
          probe.close(() => done(p));
        });
      });
      const r = await run([RUN, '--nproc-per-node', String(ranks), '--master', `127.0.0.1:${port}`, ...rankScript(RANK), '40000'], 540_000);
      expect(r.code).toBe(0);
      expect(r.lines).toHaveLength(ranks);
      for (const l of r.lines) expect(l).toMatchObject({ size: ranks, bad: 0, barriers: 40000 });
      const rank0 = r.lines.find((l) => l.rank === 0)!;
      expect(rank0.keys as number).toBeLessThan(16); // finished barriers were deleted
      process.stdout.write(`store on the GPU path: ${JSON.stringify(r.lines)}\n`);
    },
    600_000,
  );
});
