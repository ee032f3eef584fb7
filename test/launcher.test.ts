// cuda-ts-run on the CPU: N processes of a tiny script with the torchrun environment; one failing rank
// stops the others and fails the launcher; signals are forwarded; nothing hangs.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { launchRanks, nodeArgsFor, parseLauncherArgs } from '../src/distributed/launcher';

const ROOT = resolve(__dirname, '..');
const RANK_JS = resolve(__dirname, 'fixtures/distributed/rank.js');
const RANK_TS = resolve(__dirname, 'fixtures/distributed/rank.ts');
const SIGNAL_JS = resolve(__dirname, 'fixtures/distributed/signal-rank.js');
const STORE_RANK_TS = resolve(__dirname, 'fixtures/distributed/store-rank.ts');
const BIN = resolve(ROOT, 'bin/cuda-ts-run.js');
const SHARED = 'f3a9c1d07e5b4a2896c4e1f0b7d3a5c9';

interface Run {
  code: number | null;
  lines: Record<string, unknown>[];
  stderr: string;
  ms: number;
}

/** Runs bin/cuda-ts-run.js with `args`; `signalAfterLines` sends SIGTERM to the launcher once that many JSON lines came. */
function runBin(args: string[], env: NodeJS.ProcessEnv = {}, signalAfterLines?: number, cwd = ROOT): Promise<Run> {
  const t0 = Date.now();
  return new Promise((done, fail) => {
    const p = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    let signalled = false;
    p.stdout.on('data', (d) => {
      out += d;
      if (signalAfterLines === undefined || signalled || out.split('\n').filter((l) => l.startsWith('{')).length < signalAfterLines) return;
      signalled = true;
      setTimeout(() => p.kill('SIGTERM'), 200); // the ranks install nothing: 200 ms lets them reach their sleep
    });
    p.stderr.on('data', (d) => (err += d));
    const guard = setTimeout(() => {
      p.kill('SIGKILL');
      fail(new Error(`launcher still running after 30 s\n${err}`));
    }, 30_000);
    p.on('exit', (code) => {
      clearTimeout(guard);
      const lines = out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      done({ code, lines, stderr: err, ms: Date.now() - t0 });
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('parses torchrun-style arguments and refuses bad ones', () => {
  expect(parseLauncherArgs(['--nproc-per-node', '2', 'x.ts', '--flag', 'v'])).toMatchObject({ nprocPerNode: 2, script: 'x.ts', args: ['--flag', 'v'] });
  expect(parseLauncherArgs(['--nproc_per_node=4', '--nnodes', '2', '--node_rank', '1', '--master', '10.0.0.1:29500', 'x.js'])).toMatchObject({
    nprocPerNode: 4,
    nnodes: 2,
    nodeRank: 1,
    master: '10.0.0.1:29500',
  });
  expect(parseLauncherArgs(['--help'])).toBe('help');
  expect(() => parseLauncherArgs(undefined as never)).toThrow(/^parseLauncherArgs: argv must be an array of strings/);
  expect(() => parseLauncherArgs(['--nproc-per-node', 2] as never)).toThrow(/^parseLauncherArgs: argv must be an array of strings/);
  expect(parseLauncherArgs(['--nproc-per-node', '1', '--run-id', 'job-7.a', 'x.js'])).toMatchObject({ runId: 'job-7.a' });
  expect(() => parseLauncherArgs(['--nproc-per-node', '1', '--run-id', 'a b', 'x.js'])).toThrow(/cuda-ts-run: --run-id: the run id/);
  expect(() => parseLauncherArgs(['x.ts'])).toThrow(/--nproc-per-node is required/);
  expect(() => parseLauncherArgs(['--nproc-per-node', '0', 'x.ts'])).toThrow(/--nproc-per-node must be an integer >= 1/);
  expect(() => parseLauncherArgs(['--nproc-per-node', '2'])).toThrow(/no script given/);
  expect(() => parseLauncherArgs(['--bogus', '1', 'x.ts'])).toThrow(/unknown option --bogus/);
  // a setTimeout of 2^31 ms or more fires after 1 ms: such a grace would SIGKILL at once
  expect(parseLauncherArgs(['--nproc-per-node', '1', '--kill-grace-ms', '2147483647', 'x.ts'])).toMatchObject({ killGraceMs: 2 ** 31 - 1 });
  expect(() => parseLauncherArgs(['--nproc-per-node', '1', '--kill-grace-ms', '2147483648', 'x.ts'])).toThrow(
    /cuda-ts-run: --kill-grace-ms must be an integer in \[0, 2147483647\], got "2147483648"/,
  );
  // Node runs TypeScript through tsx's loader; from the checkout's sources, Bun and Deno run a rank through scripts/run-ts.cjs (their loaders cannot link them)
  if (process.versions.bun || process.versions.deno) expect(nodeArgsFor('a.ts')).toEqual([resolve(ROOT, 'scripts/run-ts.cjs'), 'a.ts']);
  else expect(nodeArgsFor('a.ts')[0]).toBe('--import');
  expect(nodeArgsFor('a.js')).toEqual(['a.js']);
});

test('launchRanks refuses a killGraceMs that is not an integer in [0, 2^31) before it starts anything', async () => {
  for (const killGraceMs of [-1, 1.5, 2 ** 31, Infinity, '500' as never]) {
    await expect(launchRanks({ nprocPerNode: 1, script: RANK_JS, args: ['ok'], killGraceMs })).rejects.toThrow(
      /^cuda-ts-run: killGraceMs must be an integer in \[0, 2147483647\]/,
    );
  }
});

test('N processes with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_* and a token; exit 0', async () => {
  const r = await runBin(['--nproc-per-node', '3', RANK_JS, 'ok', 'extra']);
  expect(r.code).toBe(0);
  expect(r.lines).toHaveLength(3);
  const envs = r.lines.map((l) => l.env as Record<string, string>).sort((a, b) => Number(a.RANK) - Number(b.RANK));
  const token = envs[0].CUDA_TS_STORE_TOKEN;
  expect(token).toMatch(/^[0-9a-f]{48}$/);
  const runId = envs[0].CUDA_TS_RUN_ID;
  expect(runId).toMatch(/^[0-9a-f]{16}$/); // one per launch
  envs.forEach((e, i) => {
    expect(e).toMatchObject({
      RANK: String(i),
      LOCAL_RANK: String(i),
      WORLD_SIZE: '3',
      LOCAL_WORLD_SIZE: '3',
      NODE_RANK: '0',
      MASTER_ADDR: '127.0.0.1',
      CUDA_TS_STORE_TOKEN: token,
      CUDA_TS_RUN_ID: runId,
    });
    expect(Number(e.MASTER_PORT)).toBeGreaterThan(0);
    expect(e.MASTER_PORT).toBe(envs[0].MASTER_PORT);
  });
  expect(r.lines[0].args).toEqual(['extra']);
});

test('several nodes: ranks are offset by the node rank; the token must come from the environment', async () => {
  const r = await runBin(['--nproc-per-node', '2', '--nnodes', '3', '--node-rank', '2', '--master', '127.0.0.1:29999', '--run-id', 'job-7', RANK_JS, 'ok'], {
    CUDA_TS_STORE_TOKEN: SHARED,
  });
  expect(r.code).toBe(0);
  const ranks = r.lines.map((l) => (l.env as Record<string, string>).RANK).sort();
  expect(ranks).toEqual(['4', '5']);
  expect(r.lines.every((l) => (l.env as Record<string, string>).WORLD_SIZE === '6' && (l.env as Record<string, string>).CUDA_TS_STORE_TOKEN === SHARED)).toBe(
    true,
  );
  expect(r.lines.every((l) => (l.env as Record<string, string>).CUDA_TS_RUN_ID === 'job-7')).toBe(true);
  const noRunId = await runBin(['--nproc-per-node', '1', '--nnodes', '2', '--master', '127.0.0.1:29999', RANK_JS], {
    CUDA_TS_STORE_TOKEN: SHARED,
    CUDA_TS_RUN_ID: '',
  });
  expect(noRunId.code).toBe(2);
  expect(noRunId.stderr).toMatch(/pass --run-id ID \(or set CUDA_TS_RUN_ID\), the same on every node and new for each job/);
  const weak = await runBin(['--nproc-per-node', '1', '--nnodes', '2', '--master', '127.0.0.1:29999', RANK_JS], { CUDA_TS_STORE_TOKEN: 'shared' });
  expect(weak.code).toBe(2);
  expect(weak.stderr).toMatch(/CUDA_TS_STORE_TOKEN: the token is too weak/);
  const noToken = await runBin(['--nproc-per-node', '1', '--nnodes', '2', '--master', '127.0.0.1:29999', RANK_JS], { CUDA_TS_STORE_TOKEN: '' });
  expect(noToken.code).toBe(2);
  expect(noToken.stderr).toMatch(/set CUDA_TS_STORE_TOKEN/);
  const noMaster = await runBin(['--nproc-per-node', '1', '--nnodes', '2', RANK_JS]);
  expect(noMaster.code).toBe(2);
});

test('TypeScript scripts run through tsx', async () => {
  const r = await runBin(['--nproc-per-node', '2', RANK_TS]);
  expect(r.code).toBe(0);
  expect(r.lines.map((l) => l.rank).sort()).toEqual([0, 1]);
  expect(r.lines.every((l) => l.ts === true && l.world === 2)).toBe(true);
});

test('one rank exiting non-zero stops the others and the launcher exits with its code', async () => {
  const r = await runBin(['--nproc-per-node', '3', RANK_JS, 'fail:1']);
  expect(r.code).toBe(3);
  expect(r.stderr).toMatch(/rank 1 \(local 1\) exited with 3; stopping the other ranks/);
  expect(r.ms).toBeLessThan(15_000); // the others would have slept 60 s
  for (const l of r.lines) expect(alive(l.pid as number)).toBe(false);
});

test('ranks that ignore SIGTERM are killed after the grace period', async () => {
  const r = await runBin(['--nproc-per-node', '2', '--kill-grace-ms', '500', RANK_JS, 'stubborn:0']);
  expect(r.code).toBe(3);
  expect(r.ms).toBeLessThan(15_000);
  for (const l of r.lines) expect(alive(l.pid as number)).toBe(false);
});

test('SIGTERM to the launcher is forwarded: every rank stops, the launcher exits non-zero', async () => {
  const r = await runBin(['--nproc-per-node', '2', RANK_JS, 'sleep'], {}, 2);
  expect(r.code).not.toBe(0);
  expect(r.ms).toBeLessThan(15_000);
  expect(r.lines).toHaveLength(2);
  for (const l of r.lines) expect(alive(l.pid as number)).toBe(false);
});

test('launchRanks in-process: a missing script fails the launch', async () => {
  const code = await launchRanks({ nprocPerNode: 2, script: resolve(__dirname, 'fixtures/distributed/missing.js'), stdio: 'ignore' });
  expect(code).not.toBe(0);
});

test('a launcher killed with SIGKILL leaves no rank behind: the reaper stops them', async () => {
  const p = spawn(process.execPath, [BIN, '--nproc-per-node', '2', '--kill-grace-ms', '500', RANK_JS, 'stubborn:9'], { cwd: ROOT });
  const pids: number[] = [];
  let out = '';
  await new Promise<void>((started, fail) => {
    const guard = setTimeout(() => fail(new Error('the ranks did not start')), 20_000);
    p.stdout.on('data', (d) => {
      out += d;
      for (const l of out.split('\n').filter((x) => x.startsWith('{'))) {
        const pid = (JSON.parse(l) as { pid: number }).pid;
        if (!pids.includes(pid)) pids.push(pid);
      }
      if (pids.length === 2) {
        clearTimeout(guard);
        started();
      }
    });
  });
  await new Promise((r) => setTimeout(r, 300)); // the ranks install their SIGTERM handlers
  p.kill('SIGKILL');
  const t0 = Date.now();
  while (pids.some(alive) && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 100));
  const left = pids.filter(alive);
  for (const pid of left) process.kill(pid, 'SIGKILL'); // do not leak them when the test fails
  expect(left).toEqual([]);
});

// Under Deno the rank gives the signal its default action back through libc first (Deno itself survives
// SIGBUS and SIGQUIT): what a user relies on there is this report when a rank does die of one.
test('a rank killed by SIGBUS or SIGQUIT is reported with its own number (128 + 7, 128 + 3)', async () => {
  for (const [sig, code] of [
    ['SIGBUS', 135],
    ['SIGQUIT', 131],
  ] as const) {
    const r = await runBin(['--nproc-per-node', '1', SIGNAL_JS, sig]);
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(new RegExp(`was killed by ${sig}`));
  }
});

test('a script whose name starts with "-" runs as a script, not as a node option', async () => {
  expect(nodeArgsFor('-x.js')).toEqual(['./-x.js']);
  const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-run-'));
  try {
    copyFileSync(RANK_JS, join(dir, '-rank.js'));
    const r = await runBin(['--nproc-per-node', '1', '--', '-rank.js', 'ok'], {}, undefined, dir);
    expect(r.code).toBe(0);
    expect(r.lines).toHaveLength(1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('issue 47', () => {
  test('one node: the launcher holds the store port from the start (no free-port race)', async () => {
    // before, the launcher released a free port for rank 0 to bind later: a rank could bind it first
    const r = await runBin(['--nproc-per-node', '2', RANK_JS, 'probe-port']);
    expect(r.code).toBe(0);
    expect(r.lines.filter((l) => 'probe' in l).map((l) => l.probe)).toEqual(['EADDRINUSE', 'EADDRINUSE']);
  });

  test('ranks meet through the store the launcher serves; each launch has its own run id', async () => {
    const r = await runBin(['--nproc-per-node', '2', STORE_RANK_TS]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(
      r.lines
        .filter((l) => l.met === true)
        .map((l) => [l.rank, l.serves])
        .sort(),
    ).toEqual([
      [0, false],
      [1, false],
    ]);
  });

  test('a process a rank moved to its own session (setsid) is stopped with the ranks', async () => {
    const r = await runBin(['--nproc-per-node', '2', '--kill-grace-ms', '500', RANK_JS, 'setsid:1']);
    expect(r.code).toBe(3);
    const escaped = r.lines.filter((l) => 'escaped' in l).map((l) => l.escaped as number);
    expect(escaped).toHaveLength(2);
    const t0 = Date.now();
    while (escaped.some(alive) && Date.now() - t0 < 5000) await new Promise((res) => setTimeout(res, 100));
    const left = escaped.filter(alive);
    for (const pid of left) process.kill(pid, 'SIGKILL');
    expect(left).toEqual([]);
  });

  test('a launcher killed with SIGKILL: the reaper stops what left the groups too', async () => {
    const p = spawn(process.execPath, [BIN, '--nproc-per-node', '1', '--kill-grace-ms', '500', RANK_JS, 'setsid:9'], { cwd: ROOT });
    let out = '';
    const escaped = await new Promise<number>((found, fail) => {
      const guard = setTimeout(() => fail(new Error('the rank did not start')), 20_000);
      p.stdout.on('data', (d) => {
        out += d;
        const m = /"escaped":(\d+)/.exec(out);
        if (m) {
          clearTimeout(guard);
          found(Number(m[1]));
        }
      });
    });
    p.kill('SIGKILL');
    const t0 = Date.now();
    while (alive(escaped) && Date.now() - t0 < 10_000) await new Promise((res) => setTimeout(res, 100));
    const left = alive(escaped);
    if (left) process.kill(escaped, 'SIGKILL');
    expect(left).toBe(false);
  });

  test('a rank of another job on the same port with the same token is refused, saying so; the first job is undisturbed', async () => {
    const port = await new Promise<number>((done) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = probe.address() as AddressInfo;
        probe.close(() => done(p));
      });
    });
    const master = `127.0.0.1:${port}`;
    const jobA = spawn(process.execPath, [BIN, '--nproc-per-node', '2', '--master', master, '--run-id', 'job-a', STORE_RANK_TS, '6000'], {
      cwd: ROOT,
      env: { ...process.env, CUDA_TS_STORE_TOKEN: SHARED },
    });
    let outA = '';
    let errA = '';
    jobA.stderr.on('data', (d) => (errA += d));
    const exitA = new Promise<number | null>((done) => jobA.on('exit', done));
    await new Promise<void>((met, fail) => {
      const guard = setTimeout(() => fail(new Error(`job A did not meet: ${errA}`)), 25_000);
      jobA.stdout.on('data', (d) => {
        outA += d;
        if ((outA.match(/"met":true/g) ?? []).length === 2) {
          clearTimeout(guard);
          met();
        }
      });
    });
    // job B's rank 1 (its node 1 of 2) reaches job A's store with the same token
    const b = await runBin(['--nproc-per-node', '1', '--nnodes', '2', '--node-rank', '1', '--master', master, '--run-id', 'job-b', STORE_RANK_TS], {
      CUDA_TS_STORE_TOKEN: SHARED,
    });
    expect(b.code).toBe(4);
    expect(b.stderr).toMatch(/rank 1: TcpStore.connect: 127\.0\.0\.1:\d+ serves another run \(run id "job-a"\), not this process's \("job-b"/);
    expect(await exitA).toBe(0);
    expect(errA).toBe('');
  }, 45_000);
});
