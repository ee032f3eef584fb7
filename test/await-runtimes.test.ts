// The waiter's real wake channel (libc sem_post + koffi .async sem_wait) under each runtime found here
// (Node; Bun and Deno where .ci/run installed them): one parked wait wakes, and nothing is left.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { runtimeCommands } from './helpers/runtimes';

const ROOT = join(__dirname, '..');
const linux = process.platform === 'linux';

(linux ? describe : describe.skip)('the semaphore wake channel under each runtime', () => {
  for (const [name, cmd] of runtimeCommands()) {
    test(`${name}: a parked wait is woken by sem_post and leaves nothing`, () => {
      const r = spawnSync(cmd[0], [...cmd.slice(1), join(ROOT, 'scripts', 'run-ts.cjs'), join(ROOT, 'test', 'fixtures', 'await-smoke.ts')], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(r.stderr.split('\n').filter((l) => /Error|error:/.test(l))).toEqual([]);
      expect(r.status).toBe(0);
      const line = JSON.parse(r.stdout.trim().split('\n').pop()!) as { channel: string; ms: number; parks: number; wakes: number; left: number };
      expect(line).toMatchObject({ channel: 'sem', parks: 1, left: 0 });
      expect(line.wakes).toBeGreaterThanOrEqual(1);
      expect(line.ms).toBeGreaterThanOrEqual(4);
    }, 90_000);
  }
});
