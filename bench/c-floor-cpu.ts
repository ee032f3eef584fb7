// `npm run bench` end to end on a machine without a GPU, to check the floor method's plumbing (issue 26
// §3): builds a stand-in libcuda.so.1 from bench/native/fake-cuda-launch.c, runs bench/run.ts against it
// (LD_LIBRARY_PATH; bench.c and libbench.so linked with LIBCUDA) at a small BENCH_SCALE, and checks in its
// bench.json that every process that times C pinned as asked: the standalone program (meta.pin), Node's
// interleaved phase and the Bun and Deno children (meta.floor: the core, the CPU the thread was seen on,
// the copy rows left unpinned, the launch warm-up). The figures are the stand-in's, not a GPU's.
//   npx tsx bench/c-floor-cpu.ts     env: BENCH_SCALE (0.05), BENCH_SKIP (python,cpu,import,staging),
//                                    FLOOR_CPU_PIN (the core; default the last allowed one), KEEP=1 keeps the folder
// Exit 0 when every check passes (a runtime that is not installed is reported and not checked), else 1.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FloorRecord } from './c-floor-pin';
import { allowedCpus } from './c-floor-host';
import type { ImplResult } from './common';

const ROOT = join(__dirname, '..');
const say = (s: string): void => void process.stdout.write(`${s}\n`);

function buildFake(dir: string): string {
  const lib = join(dir, 'libcuda.so.1');
  const r = spawnSync('gcc', ['-O2', '-shared', '-fPIC', '-Wl,-soname,libcuda.so.1', '-o', lib, join(ROOT, 'bench', 'native', 'fake-cuda-launch.c')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`gcc failed: ${r.stderr}`);
  return lib;
}

/** The checks on one process that timed C in-process: pinned to `cpu`, seen there, copies unpinned, warm-up. */
export function checkRecord(name: string, rec: FloorRecord | undefined, cpu: number, warm: number): string[] {
  if (!rec) return [`${name}: no meta.floor`];
  const bad: string[] = [];
  if (rec.pin_cpu !== cpu) bad.push(`${name}: pinned to ${rec.pin_cpu} (${rec.why ?? ''}), asked ${cpu}`);
  if (rec.cpus_seen.some((c) => c !== cpu) || !rec.cpus_seen.length) bad.push(`${name}: seen on CPUs ${rec.cpus_seen.join(',') || 'none'}`);
  if (!rec.pinned_rows.includes('launch_0args')) bad.push(`${name}: launch_0args not pinned`);
  if (rec.pinned_rows.some((r) => r.includes('256MiB'))) bad.push(`${name}: a copy row was pinned`);
  if (rec.warmup_launches !== warm) bad.push(`${name}: warm-up ${rec.warmup_launches}, asked ${warm}`);
  return bad;
}

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-floor-cpu-'));
  const cpus = allowedCpus();
  const cpu = Number(process.env.FLOOR_CPU_PIN ?? cpus[cpus.length - 1]);
  const warm = 4000;
  try {
    const lib = buildFake(dir);
    const env: NodeJS.ProcessEnv = {
      ...process.env, LIBCUDA: lib, LD_LIBRARY_PATH: [dir, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'), OUT: join(dir, 'out'),
      BENCH_SCALE: process.env.BENCH_SCALE ?? '0.05', BENCH_SKIP: process.env.BENCH_SKIP ?? 'python,cpu,import,staging', BENCH_PIN: String(cpu), BENCH_FLOOR_WARMUP: String(warm),
    };
    const t = Date.now();
    const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', join(ROOT, 'bench', 'run.ts')], { cwd: ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 900_000 });
    say(`c-floor-cpu: bench/run.ts exited ${r.status} after ${((Date.now() - t) / 1000).toFixed(1)} s`);
    const json = JSON.parse(readFileSync(join(dir, 'out', 'bench.json'), 'utf8')) as { results: ImplResult[]; table: string; steps: Record<string, { skipped?: string }> };
    const by = new Map(json.results.map((x) => [x.impl, x]));
    const bad: string[] = [];
    const nat = by.get('native-c');
    if (nat?.meta.pin !== cpu || nat?.meta.launch_warmup !== warm) bad.push(`native-c: pin ${String(nat?.meta.pin)}, launch_warmup ${String(nat?.meta.launch_warmup)} (${nat?.skipped ?? ''})`);
    bad.push(...checkRecord('node', by.get('native-c-inproc')?.meta.floor as FloorRecord | undefined, cpu, warm));
    for (const rt of ['bun', 'deno']) {
      const c = by.get(`native-c-inproc-${rt}`);
      if (json.steps[rt]?.skipped) say(`c-floor-cpu: ${rt}: step skipped (${json.steps[rt].skipped}), not checked`);
      else bad.push(...checkRecord(rt, c?.meta.floor as FloorRecord | undefined, cpu, warm));
    }
    const line = json.table.split('\n').find((l) => l.startsWith('C floor:'));
    if (!line || !/in this run the standalone process \(native-c: one process, BENCH_PIN=\d+\) vs the in-process floor: launch_0args [+-]/.test(line)) bad.push(`the floor line is missing or has no standalone vs in-process figures: ${line}`);
    say(`c-floor-cpu: ${line}`);
    for (const l of json.table.split('\n').filter((x) => /^ {2}(Bun|Deno) |C floor per runtime/.test(x))) say(`c-floor-cpu: ${l.trim()}`);
    for (const b of bad) say(`c-floor-cpu: FAIL ${b}`);
    say(`c-floor-cpu: ${bad.length ? 'FAIL' : 'PASS'}: standalone, Node${['bun', 'deno'].filter((rt) => !json.steps[rt]?.skipped).map((rt) => `, ${rt}`).join('')} pinned to core ${cpu}, launch warm-up ${warm}`);
    process.exitCode = bad.length ? 1 : 0;
  } finally {
    if (process.env.KEEP) say(`c-floor-cpu: kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) main();
