// The C floor of `npm run bench` (docs/performance.md, "The C floor"): C in the same process as the JS
// columns, the timing thread pinned to a core near the GPU after set-up, launch rows warmed up. bench/run.ts
// picks the method once (chooseFloor) and passes it down by environment to every process that times C and
// JS interleaved (bench/gpu.ts under Node, bench/runtime-child.ts under Bun and Deno) and to the
// standalone C program:
//   BENCH_PIN            the core the timing thread is pinned to after set-up (bench.c reads it too);
//                        'off': the threads stay where the OS puts them; unset: a GPU-local core
//   BENCH_FLOOR_WARMUP   launches of the untimed warm-up pass of each launch_* row (at least)
//   BENCH_FLOOR_JSON     a saved {"method": FloorMethod} to use instead of this machine's default
// Pinned: the rows timed per operation (calls, launches, allocations, events). Not pinned: the 256 MiB
// copy rows, with the start-up affinity back: the objects layer's staged pageable copies use helper
// threads (worker_threads) created on first use, which would inherit the one core and share it.
// No FFI here (the Bun and Deno children import it): each process pins through libbench.so's
// bench_pin_thread with its own FFI.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { type ImplResult, isMeasured, reason } from './common';

/** How the floor is measured: the timing thread's core (undefined: not pinned) and the launch warm-up. */
export interface FloorMethod {
  pinCpu?: number;
  warmupLaunches: number;
  reasons: string[];
}

const DEVICE = Number(process.env.BENCH_DEVICE ?? 0) | 0;

/** What one process applies: the core (undefined: not pinned, `why` says why) and the launch warm-up. */
export interface FloorSettings {
  pinCpu?: number;
  warmupLaunches: number;
  why?: string;
}

/** The launch warm-up where nothing says otherwise (docs/performance.md, "The C floor"). */
export const DEFAULT_WARMUP_LAUNCHES = 4000;

/** The environment a timing process gets from bench/run.ts for a method (pinCpu undefined: 'off'). */
export function floorEnv(m: { pinCpu?: number; warmupLaunches: number }): { BENCH_PIN: string; BENCH_FLOOR_WARMUP: string } {
  return { BENCH_PIN: m.pinCpu === undefined ? 'off' : String(m.pinCpu), BENCH_FLOOR_WARMUP: String(m.warmupLaunches) };
}

/** The settings of this process from its environment; text that is not a count or a core is named in `why`. */
export function floorSettings(env: Record<string, string | undefined> = process.env): FloorSettings {
  const pinText = (env.BENCH_PIN ?? '').trim();
  const warmText = (env.BENCH_FLOOR_WARMUP ?? '').trim();
  const warm = /^\d{1,9}$/.test(warmText) && Number(warmText) > 0 ? Number(warmText) : DEFAULT_WARMUP_LAUNCHES;
  const warmWhy = warmText && warm !== Number(warmText) ? `BENCH_FLOOR_WARMUP=${warmText} is not a positive count: ${warm} launches` : undefined;
  if (pinText === '' || pinText === 'off')
    return { warmupLaunches: warm, why: [`not pinned (BENCH_PIN ${pinText ? 'off' : 'unset'})`, warmWhy].filter(Boolean).join('; ') };
  if (!/^\d{1,4}$/.test(pinText))
    return { warmupLaunches: warm, why: [`not pinned: BENCH_PIN=${pinText} is not a CPU number`, warmWhy].filter(Boolean).join('; ') };
  return { pinCpu: Number(pinText), warmupLaunches: warm, why: warmWhy };
}

/** Whether a row is timed on the pinned core: the rows timed per operation (unit ns), not the copies. */
export function isPinnedRow(unit: string): boolean {
  return unit === 'ns';
}

/** A row's warm-up: a launch_* row gets at least the floor's launches (rounded up to its granule). */
export function floorWarm(row: string, warm: number, granule: number, s: FloorSettings): number {
  if (!row.startsWith('launch_')) return warm;
  const g = Math.max(1, granule);
  return Math.max(warm, Math.ceil(s.warmupLaunches / g) * g);
}

/** What a process records of its pinning (its result's meta.floor). */
export interface FloorRecord {
  pin_cpu: number | null;
  warmup_launches: number;
  pinned_rows: string[];
  unpinned_rows: string[];
  /** The CPUs the timing thread was on after each pinned row (sched_getcpu), where known. */
  cpus_seen: number[];
  why?: string;
}

/**
 * Pins the timing thread per row: `pin(cpu)` pins it (0 or -errno), `pin(-1)` restores its start-up
 * affinity (bench_pin_thread of libbench.so); `cpuNow` says where it runs. Without `pin` nothing is
 * pinned and the record says why.
 */
export class RowPinner {
  private pinned = false;
  readonly record: FloorRecord;

  constructor(
    private readonly settings: FloorSettings,
    private readonly pin: ((cpu: number) => number) | undefined,
    private readonly cpuNow?: () => number,
  ) {
    const why = settings.pinCpu !== undefined && !pin ? 'not pinned: libbench.so (bench_pin_thread) not loaded' : settings.why;
    this.record = { pin_cpu: null, warmup_launches: settings.warmupLaunches, pinned_rows: [], unpinned_rows: [], cpus_seen: [], why };
  }

  /** Before a row: pins for a per-operation row, restores the start-up affinity for the others. */
  beforeRow(row: string, unit: string): void {
    const want = this.settings.pinCpu !== undefined && !!this.pin && isPinnedRow(unit);
    if (want && !this.pinned) {
      const st = this.pin!(this.settings.pinCpu!);
      if (st !== 0) {
        this.record.why = `bench_pin_thread(${this.settings.pinCpu}) failed (${st}): not pinned`;
        this.record.unpinned_rows.push(row);
        return;
      }
      this.pinned = true;
      this.record.pin_cpu = this.settings.pinCpu!;
    } else if (!want) this.release();
    (this.pinned ? this.record.pinned_rows : this.record.unpinned_rows).push(row);
  }

  /** After a row: notes the CPU the thread is on. */
  afterRow(): void {
    if (!this.pinned || !this.cpuNow) return;
    const c = this.cpuNow();
    if (c >= 0 && !this.record.cpus_seen.includes(c)) this.record.cpus_seen.push(c);
  }

  /** Back to the start-up affinity (the process's later work and the processes it starts get it). */
  release(): void {
    if (this.pinned) this.pin!(-1);
    this.pinned = false;
  }
}

/** One line of a process's record, for logs and the bench's floor line. */
export function floorRecordWords(r: FloorRecord | undefined): string {
  if (!r) return 'pinning not reported';
  const where =
    r.pin_cpu === null
      ? (r.why ?? 'not pinned')
      : `timing thread pinned to core ${r.pin_cpu} after set-up (seen on ${r.cpus_seen.join(',') || '?'}) for ${r.pinned_rows.length} rows`;
  return `${where}; launch rows warmed up ≥ ${r.warmup_launches} launches`;
}

// ---------------------------------------------------------------------------------------------------
// Where the GPU is: the core to pin to

/** "0-3,8,10-11" -> [0,1,2,3,8,10,11]; undefined for text that is not a CPU list. */
export function parseCpuList(text: string): number[] | undefined {
  const out: number[] = [];
  for (const part of text.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) return undefined;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (b < a || b - a > 4096) return undefined;
    for (let c = a; c <= b; c++) out.push(c);
  }
  return out.length ? out : undefined;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The CPUs this process may run on (Cpus_allowed_list), else every online CPU. */
export function allowedCpus(): number[] {
  const status = readText('/proc/self/status') ?? '';
  const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(status);
  return (m && parseCpuList(m[1])) ?? parseCpuList(readText('/sys/devices/system/cpu/online') ?? '') ?? [0];
}

/** NUMA node -> its CPUs, from /sys/devices/system/node (empty where the machine shows none). */
export function numaNodes(): Map<number, number[]> {
  const nodes = new Map<number, number[]>();
  let names: string[] = [];
  try {
    names = readdirSync('/sys/devices/system/node');
  } catch {
    return nodes;
  }
  for (const n of names) {
    const m = /^node(\d+)$/.exec(n);
    const cpus = m && parseCpuList(readText(`/sys/devices/system/node/${n}/cpulist`) ?? '');
    if (m && cpus) nodes.set(Number(m[1]), cpus);
  }
  return nodes;
}

/** What `nvidia-smi topo -m` says of GPU `ordinal`: its CPU affinity and NUMA node, where it prints them. */
export function parseTopo(text: string, ordinal: number): { cpus?: number[]; numa?: number } {
  const lines = text.split('\n');
  const header = lines.find((l) => /CPU Affinity/.test(l));
  const row = lines.find((l) => l !== header && new RegExp(`^\\s*GPU${ordinal}\\b`).test(l));
  if (!header || !row) return {};
  // The row: link cells (X, SYS, NV18, PIX, NODE…, never a number), then CPU Affinity, NUMA Affinity,
  // GPU NUMA ID; the tab counts vary between versions, so take the first cell that is a CPU list.
  const cells = row
    .split(/\t| {2,}/)
    .map((s) => s.trim())
    .filter(Boolean)
    .slice(1);
  const i = cells.findIndex((c) => parseCpuList(c) !== undefined);
  if (i < 0) return {};
  const numaText = cells[i + 1];
  return { cpus: parseCpuList(cells[i]), numa: numaText && /^\d+$/.test(numaText) ? Number(numaText) : undefined };
}

/** The GPU's local CPUs and NUMA node, and where that came from. */
export interface GpuPlacement {
  cpus?: number[];
  numa?: number;
  source: string;
}

function run(cmd: string, args: string[]): string | undefined {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 15_000 });
  return r.status === 0 ? r.stdout : undefined;
}

/** `nvidia-smi topo -m` first; else /sys/bus/pci/devices/<the GPU's bus id>/{local_cpulist,numa_node}. */
export function gpuPlacement(ordinal: number): GpuPlacement & { topo?: string } {
  const topo = run('nvidia-smi', ['topo', '-m']);
  const fromTopo = topo ? parseTopo(topo, ordinal) : {};
  if (fromTopo.cpus) return { ...fromTopo, source: 'nvidia-smi topo -m', topo };
  const bus = run('nvidia-smi', ['--query-gpu=pci.bus_id', '--format=csv,noheader', `-i`, String(ordinal)])
    ?.trim()
    .toLowerCase();
  // nvidia-smi prints an 8-digit domain (00000000:1B:00.0); sysfs uses 4 (0000:1b:00.0)
  const dev = bus && `/sys/bus/pci/devices/${bus.replace(/^0000(?=[0-9a-f]{4}:)/, '')}`;
  if (dev && existsSync(dev)) {
    const numa = Number(readText(`${dev}/numa_node`) ?? -1);
    return { cpus: parseCpuList(readText(`${dev}/local_cpulist`) ?? ''), numa: numa >= 0 ? numa : undefined, source: `sysfs ${dev}`, topo };
  }
  return { source: topo ? 'nvidia-smi topo -m (no CPU affinity for this GPU)' : 'unknown (no nvidia-smi)', topo };
}

/**
 * The timing thread's core: `local`, a core on the GPU's NUMA node (not CPU 0, which takes most
 * interrupts, where another is allowed); `remote`, one on another node where the machine has one;
 * `spare`, a second local core; all within the allowed CPUs.
 */
export function pickCores(allowed: number[], gpu: GpuPlacement, nodes: Map<number, number[]>): { local: number; remote?: number; spare?: number; why: string } {
  const ok = new Set(allowed);
  const localNode = gpu.numa !== undefined ? nodes.get(gpu.numa) : undefined;
  const localSet = (gpu.cpus ?? localNode ?? allowed).filter((c) => ok.has(c));
  const local = localSet.length ? localSet : allowed;
  const pick = [...local].reverse().find((c) => c !== 0) ?? local[0];
  const spare = [...local].reverse().find((c) => c !== 0 && c !== pick);
  const localAll = new Set(gpu.cpus ?? localNode ?? []);
  let remote: number | undefined;
  for (const [, cpus] of nodes) {
    if (!localAll.size || cpus.some((c) => localAll.has(c))) continue; // unknown GPU placement: no remote
    remote = [...cpus].reverse().find((c) => ok.has(c) && c !== 0) ?? remote;
  }
  const note = localSet.length || !gpu.cpus ? '' : ", none of them allowed here: 'local' is any allowed core";
  const why =
    `local core ${pick} (GPU's CPUs ${gpu.cpus ? compact(gpu.cpus) : 'unknown'}, via ${gpu.source}${note}), ` +
    (remote !== undefined
      ? `remote core ${remote}`
      : `no remote core (${nodes.size <= 1 ? 'one NUMA node' : !localAll.size ? "the GPU's node is unknown" : 'no allowed CPU off the GPU node'})`);
  return { local: pick, remote, spare, why };
}

/** [0,1,2,3,8] -> "0-3,8". */
export function compact(cpus: number[]): string {
  const s = [...cpus].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < s.length; ) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j] + 1) j++;
    parts.push(j > i ? `${s[i]}-${s[j]}` : `${s[i]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** The method: a saved one (BENCH_FLOOR_JSON's file), else a GPU-local core and the default warm-up. */
export function stableFloorMethod(saved?: string): FloorMethod {
  if (saved) return (JSON.parse(readFileSync(saved, 'utf8')) as { method: FloorMethod }).method;
  const cores = pickCores(allowedCpus(), gpuPlacement(DEVICE), numaNodes());
  return { pinCpu: cores.local, warmupLaunches: DEFAULT_WARMUP_LAUNCHES, reasons: [`default: ${cores.why}`] };
}

// ---------------------------------------------------------------------------------------------------
// The run's method and the line under the table

/** The method of this run: the timing thread's core (undefined: not pinned), the launch warm-up, where they came from. */
export interface ChosenFloor {
  pinCpu?: number;
  warmupLaunches: number;
  source: string;
  words: string;
}

/**
 * Picks the run's floor method and writes it into `env` (BENCH_PIN, BENCH_FLOOR_WARMUP) for the
 * children: BENCH_PIN as given ('off': none), else the method of BENCH_FLOOR_JSON's file,
 * else this machine's default (a GPU-local core); BENCH_FLOOR_WARMUP as given, else the method's.
 */
export function chooseFloor(env: NodeJS.ProcessEnv, methodOf: (saved?: string) => FloorMethod = stableFloorMethod): ChosenFloor {
  let m: FloorMethod;
  let source: string;
  const saved = env.BENCH_FLOOR_JSON?.trim();
  try {
    m = methodOf(saved || undefined);
    source = saved ? `BENCH_FLOOR_JSON=${saved}` : (m.reasons[0] ?? 'the default method');
  } catch (e) {
    m = methodOf();
    source = `BENCH_FLOOR_JSON=${saved} unreadable (${reason(e)}); ${m.reasons[0] ?? 'the default method'}`;
  }
  const pinText = env.BENCH_PIN?.trim();
  let pinCpu = m.pinCpu;
  if (pinText === 'off') pinCpu = undefined;
  else if (pinText) {
    if (!/^\d{1,4}$/.test(pinText)) throw new RangeError(`bench/run.ts: BENCH_PIN=${pinText} is not a CPU number (or 'off')`);
    pinCpu = Number(pinText);
    source = `BENCH_PIN=${pinText}`;
  }
  const warmText = env.BENCH_FLOOR_WARMUP?.trim();
  if (warmText && !(/^\d{1,9}$/.test(warmText) && Number(warmText) > 0))
    throw new RangeError(`bench/run.ts: BENCH_FLOOR_WARMUP=${warmText} is not a positive number of launches`);
  const warmupLaunches = warmText ? Number(warmText) : m.warmupLaunches;
  Object.assign(env, floorEnv({ pinCpu, warmupLaunches }));
  const words = `${pinCpu === undefined ? 'timing threads not pinned' : `timing thread pinned to core ${pinCpu} after set-up`}, launch rows warmed up ≥ ${warmupLaunches} launches (${source})`;
  return { pinCpu, warmupLaunches, source, words };
}

/** The standalone program's environment: bench.c takes BENCH_PIN as a CPU number only, so 'off' is left out. */
export function standaloneEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  if (!/^\d+$/.test(out.BENCH_PIN?.trim() ?? '')) delete out.BENCH_PIN;
  return out;
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;

/** The standalone process's median against the in-process floor's, per launch row and the trivial call. */
function thisRunWords(all: readonly ImplResult[]): string {
  const byImpl = new Map(all.map((r) => [r.impl, r]));
  const nat = byImpl.get('native-c');
  const inproc = byImpl.get('native-c-inproc');
  if (!nat || nat.skipped || !inproc || inproc.skipped) {
    const why = !nat || nat.skipped ? `native-c: ${nat?.skipped ?? 'not run'}` : `native-c-inproc: ${inproc?.skipped ?? 'not run'}`;
    return `standalone vs in-process in this run: not measured (${why.split('\n')[0].slice(0, 160)})`;
  }
  const diffs = ['launch_0args', 'launch_4args', 'cuCtxGetCurrent'].flatMap((row) => {
    const a = nat.rows[row];
    const b = inproc.rows[row];
    return isMeasured(a) && isMeasured(b) ? [`${row} ${pct(a.median / b.median - 1)}`] : [];
  });
  const pin = typeof nat.meta.pin === 'number' ? `BENCH_PIN=${nat.meta.pin}` : 'not pinned';
  if (!diffs.length) return 'standalone vs in-process in this run: no row measured by both';
  return `in this run the standalone process (native-c: one process, ${pin}) vs the in-process floor: ${diffs.join(', ')} (ratio of medians, not interleaved: within ±10% is the process lottery)`;
}

/** The line under the table: the floor every ratio uses, why (docs/performance.md), and this run's difference. */
export function floorLine(all: readonly ImplResult[], floor: ChosenFloor): string {
  const inproc = all.find((r) => r.impl === 'native-c-inproc' && !r.skipped);
  const how = inproc ? floorRecordWords(inproc.meta.floor as FloorRecord | undefined) : floor.words;
  return (
    `C floor: every "C" ratio is against C in the same process (native-c-inproc, interleaved with the JS columns; ${how}); ` +
    `pinned and warmed up, standalone and in-process C agree within the noise, while one fresh standalone process is a ±10% lottery (docs/performance.md). ` +
    `${thisRunWords(all)}.`
  );
}
