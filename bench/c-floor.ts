// The C floor experiment (issue 26 §3): bench.c's launch loop ran as its own process (native-c) and
// inside the JS process (native-c-inproc) and the two disagreed, in opposite directions in two runs.
// This measures cuCtxGetCurrent, launch_0args and launch_4args per call under controlled variants,
// every variant a long-lived process that runs one timed pass per command, the passes of a group's
// processes alternating (rotating order, A B C, B C A, …) over many rounds so that drift hits all alike:
//   - process lottery: two processes of the same kind side by side (bench/c-floor-groups.ts);
//   - standalone program vs node + koffi + libbench.so, each unpinned / pinned to a GPU-local core /
//     a core on another NUMA node (per pass, same process), and whole-process `taskset -c`;
//   - loading: the program's own code, libbench.so by dlopen RTLD_NOW / RTLD_LAZY, LD_BIND_NOW, koffi lazy;
//   - the runtime's threads: C with a spinning thread; node idle, with a busy worker, with JS between passes;
//   - warm-up: each process's first 20 passes of 1,000 launches; clocks: C's inside the pass and JS's around it;
//   - the bench's classic standalone method (BENCH_ROWS=… bench, 5 reps), three processes;
//   - CPU frequency (cpufreq governor and scaling_cur_freq, /proc/cpuinfo) before and after each group.
// Then it prints which factors moved the numbers beyond the noise and the method it recommends.
//
//   npx tsx bench/c-floor.ts            (OUT=dir also writes dir/c-floor.json; ≤ 3 minutes on the H200)
// Env: BENCH_DEVICE (0), CFLOOR_REPS (rounds per group, 21), CFLOOR_BUDGET_S (170: groups shorten their
//      rounds to fit, at least 5 each), CFLOOR_BUILD_DIR (where build.sh builds, a temporary folder).
// Exit 2 with one line where no GPU answers.
//
// For bench/run.ts: stableFloorMethod() (the method, from a saved c-floor.json or this machine's
// defaults), measureFloor() (the C floor by that method) and pinThisThread() (the JS main thread
// on the method's core, through libbench.so) — see their comments.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import koffi from 'koffi';
import { BENCH_DIR } from './common';
import { type ComparisonResult, type FloorMethod, type PassRecord, type Stats, type WarmSeries, factorEffect, judgeAll, recommend, resultLine, settledAfter, stats, unitStats } from './c-floor-analysis';
import { type Cores, type Group, type Unit, experimentGroups, unitsOf } from './c-floor-groups';
import { type FreqSnapshot, allowedCpus, compact, cpuFreq, freqWords, gpuPlacement, noGpuReason, numaNodes, pickCores } from './c-floor-host';
import { type FloorPaths, FloorWorker, type VariantSpec } from './c-floor-workers';
import { H200_FINDING } from './c-floor-pin';

export type { FloorMethod } from './c-floor-analysis';

/** The rows and their operations per timed pass (a launch pass synchronizes every 1,000, as bench.c's). */
export const FLOOR_ROWS: [string, number][] = [
  ['cuCtxGetCurrent', 200_000],
  ['launch_0args', 10_000],
  ['launch_4args', 10_000],
];
const WARM_SERIES = { passes: 20, ops: 1000 };
const DEVICE = Number(process.env.BENCH_DEVICE ?? 0) | 0;
const T0 = Date.now();
const say = (s: string): void => void process.stdout.write(`${s}\n`);

/** Builds bench.c (program and libbench.so) with bench/native/build.sh. */
export function buildNative(dir = process.env.CFLOOR_BUILD_DIR || join(tmpdir(), 'cuda-ts-cfloor')): FloorPaths {
  mkdirSync(dir, { recursive: true });
  const b = spawnSync('bash', [join(BENCH_DIR, 'native', 'build.sh'), dir], { encoding: 'utf8' });
  if (b.status !== 0) throw new Error(`build.sh failed: ${(b.stderr || '').trim().split('\n').slice(-3).join(' | ')}`);
  return { bin: join(dir, 'bench'), lib: join(dir, 'libbench.so'), ptx: join(dir, 'kernels.ptx') };
}

/** Starts a group's processes; those that fail to start are named in `failed` and left out. */
async function startAll(specs: VariantSpec[], paths: FloorPaths): Promise<{ workers: FloorWorker[]; failed: Record<string, string> }> {
  const all = specs.map((s) => new FloorWorker(s, paths, DEVICE));
  const failed: Record<string, string> = {};
  const ok = await Promise.all(all.map((w) => w.ready.then(() => true, (e: Error) => ((failed[w.spec.name] = e.message), false))));
  return { workers: all.filter((_, i) => ok[i]), failed };
}

/** Each process's first WARM_SERIES.passes passes of launch_0args (its warm-up curve), at `pin`. */
async function warmSeries(group: string, w: FloorWorker, pin: number): Promise<WarmSeries> {
  const perOp: number[] = [];
  for (let i = 0; i < WARM_SERIES.passes; i++) perOp.push((await w.pass('launch_0args', WARM_SERIES.ops, pin)).ns / WARM_SERIES.ops);
  return { unit: `${group}/${w.spec.name}`, opsPerPass: WARM_SERIES.ops, perOp };
}

/** One round: every row, every unit once, the order rotated per round and row. */
async function runRound(group: string, units: (Unit & { worker: FloorWorker })[], round: number, rows: [string, number][], out: PassRecord[]): Promise<void> {
  for (const [ri, [row, ops]] of rows.entries()) {
    const k = (round * rows.length + ri) % units.length;
    for (const u of units.slice(k).concat(units.slice(0, k))) {
      const r = await u.worker.pass(row, ops, u.placement.pin);
      out.push({
        group, unit: u.name, variant: u.spec.name, placement: u.placement.label, row, round, ops,
        perOp: r.ns / ops, jsPerOp: r.jsNs === undefined ? undefined : r.jsNs / ops, cpuBefore: r.cpuBefore, cpuAfter: r.cpuAfter,
      });
    }
  }
}

interface GroupRun {
  name: string;
  about: string;
  rounds: number;
  failed: Record<string, string>;
  freq: FreqSnapshot[];
  seconds: number;
}

/** Runs a group: start, warm-up series, one untimed pass per unit and row, then rounds until `reps` or the deadline (at least 5). */
async function runGroup(g: Group, paths: FloorPaths, reps: number, deadline: number, records: PassRecord[], warm: WarmSeries[], cpus: number[]): Promise<GroupRun> {
  const t = Date.now();
  const freq = [cpuFreq(cpus, T0)];
  const { workers, failed } = await startAll(g.variants, paths);
  const units = unitsOf(g).flatMap((u) => {
    const worker = workers.find((w) => w.spec === u.spec);
    return worker ? [{ ...u, worker }] : [];
  });
  let rounds = 0;
  try {
    for (const w of workers) {
      const ps = g.placements(w.spec);
      warm.push(await warmSeries(g.name, w, (ps.find((p) => p.label === 'local') ?? ps[0]).pin));
    }
    for (const u of units) for (const [row, ops] of FLOOR_ROWS) await u.worker.pass(row, ops, u.placement.pin);
    for (; rounds < reps && (rounds < 5 || Date.now() < deadline); rounds++) await runRound(g.name, units, rounds, FLOOR_ROWS, records);
  } catch (e) {
    failed['(group stopped)'] = `after ${rounds} rounds: ${(e as Error).message}`; // the other groups still run
  } finally {
    await Promise.all(workers.map((w) => w.close()));
  }
  freq.push(cpuFreq(cpus, T0));
  return { name: g.name, about: g.about, rounds, failed, freq, seconds: (Date.now() - t) / 1000 };
}

/** The per-process medians of the bench's classic standalone method, and why it stopped early if it did. */
interface ClassicRuns {
  medians: Record<string, number>[];
  failed?: string;
}

/**
 * The bench's standalone method as run.ts runs it (bench, 5 reps of 20,000 launches after 1,000),
 * restricted to the floor rows, `n` processes one after another, alternately unpinned and with
 * BENCH_PIN=`pin` (the main thread pinned after set-up): one result per process.
 */
function classicRuns(paths: FloorPaths, n: number, pin: number): { unpinned: ClassicRuns; pinned: ClassicRuns } {
  const out = { unpinned: { medians: [] } as ClassicRuns, pinned: { medians: [] } as ClassicRuns };
  for (let i = 0; i < 2 * n; i++) {
    const into = i % 2 ? out.pinned : out.unpinned;
    if (into.failed) continue;
    const env: NodeJS.ProcessEnv = { ...process.env, BENCH_ROWS: FLOOR_ROWS.map(([r]) => r).join(','), BENCH_DEVICE: String(DEVICE) };
    if (i % 2) env.BENCH_PIN = String(pin);
    else delete env.BENCH_PIN;
    const r = spawnSync(paths.bin, [paths.ptx], { encoding: 'utf8', env, timeout: 60_000 });
    if (r.status !== 0) {
      into.failed = `bench exited ${r.status}: ${(r.stderr || '').trim().split('\n').pop()}`;
      continue;
    }
    const rows = (JSON.parse(r.stdout.trim().split('\n').pop()!) as { rows: Record<string, { median: number }> }).rows;
    into.medians.push(Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, v.median])));
  }
  return out;
}

const ns = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(2));

function printGroupTable(run: GroupRun, byUnit: ReturnType<typeof unitStats>): void {
  say(`\n== ${run.name}: ${run.about} (${run.rounds} rounds, ${run.seconds.toFixed(1)} s)`);
  for (const [v, why] of Object.entries(run.failed)) say(`   not run: ${v}: ${why}`);
  for (const [key, rows] of Object.entries(byUnit)) {
    if (!key.startsWith(`${run.name}/`)) continue;
    const cells = FLOOR_ROWS.map(([r]) => {
      const s = rows[r];
      return s ? `${r} ${ns(s.median)} [${ns(s.q1)}–${ns(s.q3)}]` : `${r} -`;
    });
    const l = rows.launch_0args;
    const where = l ? ` cpus ${compact(l.cpus)}${l.migrated ? `, ${l.migrated} passes migrated` : ''}` : '';
    const clock = l?.jsOverC ? `, JS clock/C clock ${l.jsOverC.median.toFixed(4)}` : '';
    say(`   ${key.slice(run.name.length + 1).padEnd(28)} ${cells.join('  ')} ns/op;${where}${clock}`);
  }
  say(`   cpu frequency: ${run.freq.map(freqWords).join(' -> ')}`);
}

function printWarm(warm: WarmSeries[]): void {
  say('\n== warm-up: each process\'s first 20 passes of 1,000 launches (launch_0args), first pass / steady, launches until within 5%');
  for (const w of warm) {
    const s = settledAfter(w.perOp);
    say(`   ${w.unit.padEnd(36)} first ${ns(s.first)} ns, steady ${ns(s.steady)} ns (${(s.first / s.steady).toFixed(2)}×), settled after ${s.passes * w.opsPerPass}`);
  }
}

/** The factors that moved the launch rows, largest first, and those that did not. */
function printFactors(results: ComparisonResult[], lottery: Record<string, number>): void {
  say('\n== comparisons (ratio = other / base per round; noise = max(half the ratios\' IQR, 1%, and for two processes the lottery))');
  for (const r of results) say(`   ${resultLine(r)}`);
  say(`\n== process lottery (largest same-kind process-to-process effect): ${Object.entries(lottery).map(([k, v]) => `${k} ${(v * 100).toFixed(1)}%`).join(', ')}`);
  say('== verdict per factor on the launch rows (median over its comparisons; moved = more than half moved that way):');
  for (const f of [...new Set(results.map((r) => r.factor))]) {
    const v = factorEffect(results, f);
    if (!v.n) continue;
    const moved = results.filter((r) => r.factor === f && r.moved && r.row.startsWith('launch_')).length;
    say(`   ${f.padEnd(36)} ${v.moved ? 'MOVED' : 'within noise'} ${(v.effect * 100).toFixed(1)}% (noise ±${(v.noise * 100).toFixed(1)}%; ${moved} of ${v.n} comparisons beyond their noise)`);
  }
}

/** The classic standalone method's per-process medians and their spread (max / min - 1). */
function printClassic(label: string, classic: ClassicRuns): void {
  if (!classic.medians.length) return say(`c-floor: classic standalone method, ${label}: not run: ${classic.failed}`);
  const cells = FLOOR_ROWS.map(([r]) => {
    const v = classic.medians.map((m) => m[r]).filter((x) => x > 0);
    return `${r} ${v.map(ns).join(' / ')} (spread ${((Math.max(...v) / Math.min(...v) - 1) * 100).toFixed(1)}%)`;
  });
  say(`c-floor: classic standalone method (bench: 5 reps after 1,000 warm-up), ${label}, ${classic.medians.length} processes: ${cells.join('; ')}${classic.failed ? ` (then: ${classic.failed})` : ''}`);
}

/** The whole experiment; returns what c-floor.json holds. */
async function experiment(): Promise<Record<string, unknown>> {
  const cpus = allowedCpus();
  const nodes = numaNodes();
  const gpu = gpuPlacement(DEVICE);
  const cores: Cores & { why: string } = pickCores(cpus, gpu, nodes);
  say(`c-floor: node ${process.version}, device ${DEVICE}, CPUs allowed ${compact(cpus)}, NUMA nodes ${[...nodes].map(([n, c]) => `${n}:${compact(c)}`).join(' ') || 'none shown'}`);
  say(`c-floor: ${cores.why}; ${freqWords(cpuFreq(cpus, T0))}`);
  const paths = buildNative();
  const reps = Math.max(5, Number(process.env.CFLOOR_REPS ?? 21) | 0);
  const end = T0 + 1000 * Number(process.env.CFLOOR_BUDGET_S ?? 170);
  const classic = classicRuns(paths, 3, cores.local);
  printClassic('unpinned', classic.unpinned);
  printClassic(`BENCH_PIN=${cores.local}`, classic.pinned);
  const records: PassRecord[] = [];
  const warm: WarmSeries[] = [];
  const groups = experimentGroups(cores);
  const runs: GroupRun[] = [];
  for (const [i, g] of groups.entries()) {
    const deadline = Date.now() + (end - Date.now() - 5000) / (groups.length - i);
    runs.push(await runGroup(g, paths, reps, deadline, records, warm, cpus));
  }
  const byUnit = unitStats(records);
  for (const run of runs) printGroupTable(run, byUnit);
  printWarm(warm);
  const { results, lottery } = judgeAll(records, groups.flatMap((g) => g.comparisons), FLOOR_ROWS.map(([r]) => r));
  printFactors(results, lottery);
  const method = recommend(results, lottery, warm, cores, reps);
  const spread = (c: ClassicRuns) => {
    const v = c.medians.map((m) => m.launch_0args).filter((x) => x > 0);
    return v.length > 1 ? `${((Math.max(...v) / Math.min(...v) - 1) * 100).toFixed(1)}%` : 'n/a';
  };
  method.reasons.push(`the classic standalone method's launch_0args varied ${spread(classic.unpinned)} between processes unpinned, ${spread(classic.pinned)} with BENCH_PIN=${cores.local}`);
  say(`\n== recommended method: ${methodWords(method)}`);
  for (const r of method.reasons) say(`   - ${r}`);
  say(`c-floor: ${((Date.now() - T0) / 1000).toFixed(1)} s`);
  return { node: process.version, device: DEVICE, cpus, numa: Object.fromEntries(nodes), gpu: { ...gpu, topo: undefined }, topo: gpu.topo, cores, rows: FLOOR_ROWS, classic, groups: runs, units: byUnit, warm, comparisons: results, lottery, method, records };
}

/** The method in one line. */
export function methodWords(m: FloorMethod): string {
  return `${m.floor === 'both' ? 'report both floors (standalone and in-process)' : `one floor, ${m.floor}`}; ${m.pinCpu !== undefined ? `timing thread pinned to core ${m.pinCpu} after set-up` : 'not pinned'}; warm-up ${m.warmupLaunches} launches; median of ${m.reps} interleaved repetitions${m.processes > 1 ? `, median over ${m.processes} processes` : ''}`;
}

/**
 * The method for a stable C floor. With a saved result (c-floor.json's path or its parsed object),
 * the method it recommended; without, this machine's default: in-process, the timing thread pinned
 * to a core on the GPU's NUMA node (not CPU 0), and the warm-up and repetitions this experiment
 * recommended on the H200 (H200_FINDING: 4,000 launches, 21), 1 process.
 */
export function stableFloorMethod(saved?: string | { method: FloorMethod }): FloorMethod {
  if (saved) return (typeof saved === 'string' ? (JSON.parse(readFileSync(saved, 'utf8')) as { method: FloorMethod }) : saved).method;
  const cores = pickCores(allowedCpus(), gpuPlacement(DEVICE), numaNodes());
  const { warmupLaunches, reps, date } = H200_FINDING;
  return { floor: 'in-process', pinCpu: cores.local, warmupLaunches, reps, processes: 1, reasons: [`default (no c-floor.json): ${cores.why}; warm-up and repetitions from the H200 run of ${date}`] };
}

/**
 * Pins the calling thread through libbench.so's bench_pin_thread (a fresh declaration per call: for
 * one-off use; bench/gpu.ts and the runtime children bind it once, bench/c-floor-pin.ts). 0 or -errno.
 */
export function pinThisThread(lib: string, cpu: number): number {
  return koffi.load(lib).func('int bench_pin_thread(int cpu)')(cpu) as number;
}

/**
 * The C floor by a method: `method.processes` standalone processes (bench --serve), and as many node
 * processes with libbench.so where `inProcess`, their passes alternating over `method.reps` rounds
 * after the warm-up, pinned per the method. Per kind and row: the median over processes of each
 * process's median, with the spread of all its passes.
 */
export async function measureFloor(opts: { paths: FloorPaths; method?: FloorMethod; rows?: [string, number][]; inProcess?: boolean }): Promise<Record<'standalone' | 'in-process', Record<string, Stats & { perProcess: number[] }>>> {
  const m = opts.method ?? stableFloorMethod();
  const rows = opts.rows ?? FLOOR_ROWS;
  const specs: VariantSpec[] = [];
  for (let i = 1; i <= m.processes; i++) specs.push({ name: `standalone#${i}`, kind: 'exe' }, ...(opts.inProcess ? [{ name: `in-process#${i}`, kind: 'node' as const }] : []));
  const { workers, failed } = await startAll(specs, opts.paths);
  if (Object.keys(failed).length) throw new Error(`measureFloor: ${Object.entries(failed).map(([k, v]) => `${k}: ${v}`).join('; ')}`);
  const pin = m.pinCpu ?? -1;
  const units = workers.map((worker) => ({ spec: worker.spec, placement: { label: 'floor', pin }, name: worker.spec.name, worker }));
  const records: PassRecord[] = [];
  try {
    for (const w of workers) await w.pass('launch_0args', m.warmupLaunches, pin);
    for (const u of units) for (const [row, ops] of rows) await u.worker.pass(row, ops, pin);
    for (let k = 0; k < m.reps; k++) await runRound('floor', units, k, rows, records);
  } finally {
    await Promise.all(workers.map((w) => w.close()));
  }
  const out = { standalone: {}, 'in-process': {} } as Record<'standalone' | 'in-process', Record<string, Stats & { perProcess: number[] }>>;
  for (const kind of ['standalone', 'in-process'] as const) {
    for (const [row] of rows) {
      const mine = records.filter((r) => r.variant.startsWith(kind) && r.row === row);
      if (!mine.length) continue;
      const perProcess = [...new Set(mine.map((r) => r.variant))].map((v) => stats(mine.filter((r) => r.variant === v).map((r) => r.perOp)).median);
      out[kind][row] = { ...stats(mine.map((r) => r.perOp)), median: stats(perProcess).median, perProcess };
    }
  }
  return out;
}

async function main(): Promise<void> {
  const why = noGpuReason(DEVICE);
  if (why) {
    process.stderr.write(`c-floor: no GPU here (${why}); this experiment needs the GPU machine\n`);
    process.exit(2);
  }
  const result = await experiment();
  if (process.env.OUT) {
    mkdirSync(process.env.OUT, { recursive: true });
    writeFileSync(join(process.env.OUT, 'c-floor.json'), `${JSON.stringify(result, null, 1)}\n`);
    say(`c-floor: wrote ${join(process.env.OUT, 'c-floor.json')}`);
  }
}

if (require.main === module) {
  main().catch((e: unknown) => {
    process.stderr.write(`c-floor: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
}
