// The C floor of `npm run bench` (docs/performance.md, "The C floor"): C in the same process as the JS
// columns, the timing thread pinned to a core near the GPU after set-up, launch rows warmed up. bench/run.ts
// picks the method once (chooseFloor) and passes it by environment to every process that times rows:
//   BENCH_PIN            the timing thread's core ('off': not pinned; unset: a GPU-local core); bench.c reads it too
//   BENCH_FLOOR_WARMUP   launches of the untimed warm-up pass of each launch_* row (at least)
// The 256 MiB copy rows run unpinned: staged pageable copies use helper threads, which would inherit the one
// core. No FFI here (the Bun and Deno children import this file): each process pins through libbench.so's
// bench_pin_thread with its own FFI.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { ImplResult } from './common';

/** What one process applies: the core (undefined: not pinned, `why` says why) and the launch warm-up. */
export interface FloorSettings {
  pinCpu?: number;
  warmupLaunches: number;
  why?: string;
}

/** The launch warm-up where nothing says otherwise: the first few thousand launches after start-up run slower. */
export const DEFAULT_WARMUP_LAUNCHES = 4000;

/** The environment a timing process gets from bench/run.ts (pinCpu undefined: 'off'). */
export function floorEnv(m: { pinCpu?: number; warmupLaunches: number }): { BENCH_PIN: string; BENCH_FLOOR_WARMUP: string } {
  return { BENCH_PIN: m.pinCpu === undefined ? 'off' : String(m.pinCpu), BENCH_FLOOR_WARMUP: String(m.warmupLaunches) };
}

/** The settings of this process from its environment; text that is not a count or a core is named in `why`. */
export function floorSettings(env: Record<string, string | undefined> = process.env): FloorSettings {
  const pinText = (env.BENCH_PIN ?? '').trim();
  const warmText = (env.BENCH_FLOOR_WARMUP ?? '').trim();
  const warm = /^\d{1,9}$/.test(warmText) && Number(warmText) > 0 ? Number(warmText) : DEFAULT_WARMUP_LAUNCHES;
  const warmWhy = warmText && warm !== Number(warmText) ? `BENCH_FLOOR_WARMUP=${warmText} is not a positive count: ${warm} launches` : undefined;
  const because = (pinWhy: string) => ({ warmupLaunches: warm, why: [pinWhy, warmWhy].filter(Boolean).join('; ') });
  if (pinText === '' || pinText === 'off') return because(`not pinned (BENCH_PIN ${pinText ? 'off' : 'unset'})`);
  if (!/^\d{1,4}$/.test(pinText)) return because(`not pinned: BENCH_PIN=${pinText} is not a CPU number`);
  return { pinCpu: Number(pinText), warmupLaunches: warm, why: warmWhy };
}

/** Whether a row is timed on the pinned core: the rows timed per operation (unit ns), not the copies. */
export function isPinnedRow(unit: string): boolean {
  return unit === 'ns';
}

/** A row's warm-up: a launch_* row gets at least the floor's launches (rounded up to its granule). */
export function floorWarm(row: string, warm: number, granule: number, s: Pick<FloorSettings, 'warmupLaunches'>): number {
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

/** "0-3,8,10-11" -> [0,1,2,3,8,10,11]; undefined for text that is not a CPU list. */
export function parseCpuList(text: string): number[] | undefined {
  const out: number[] = [];
  for (const part of text.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) return undefined;
    const [a, b] = [Number(m[1]), m[2] === undefined ? Number(m[1]) : Number(m[2])];
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
function allowedCpus(): number[] {
  const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(readText('/proc/self/status') ?? '');
  return (m && parseCpuList(m[1])) ?? parseCpuList(readText('/sys/devices/system/cpu/online') ?? '') ?? [0];
}

/** The CPU affinity `nvidia-smi topo -m` prints for GPU `ordinal`, where it prints one. */
export function parseTopo(text: string, ordinal: number): number[] | undefined {
  const lines = text.split('\n');
  const header = lines.find((l) => /CPU Affinity/.test(l));
  const row = lines.find((l) => l !== header && new RegExp(`^\\s*GPU${ordinal}\\b`).test(l));
  if (!header || !row) return undefined;
  // link cells (X, SYS, NV18, PIX…, never a number) come first and tab counts vary between versions:
  // take the first cell that is a CPU list
  const cells = row
    .split(/\t| {2,}/)
    .map((s) => s.trim())
    .filter(Boolean)
    .slice(1);
  return cells.map(parseCpuList).find((c) => c !== undefined);
}

/** The GPU's local CPUs, and where that came from. */
export interface GpuPlacement {
  cpus?: number[];
  source: string;
}

function run(cmd: string, args: string[]): string | undefined {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 15_000 });
  return r.status === 0 ? r.stdout : undefined;
}

/** `nvidia-smi topo -m` first; else /sys/bus/pci/devices/<the GPU's bus id>/local_cpulist. */
function gpuPlacement(ordinal: number): GpuPlacement {
  const topo = run('nvidia-smi', ['topo', '-m']);
  const cpus = topo ? parseTopo(topo, ordinal) : undefined;
  if (cpus) return { cpus, source: 'nvidia-smi topo -m' };
  const bus = run('nvidia-smi', ['--query-gpu=pci.bus_id', '--format=csv,noheader', '-i', String(ordinal)])
    ?.trim()
    .toLowerCase();
  // nvidia-smi prints an 8-digit domain (00000000:1B:00.0); sysfs uses 4 (0000:1b:00.0)
  const dev = bus && `/sys/bus/pci/devices/${bus.replace(/^0000(?=[0-9a-f]{4}:)/, '')}`;
  if (dev && existsSync(dev)) return { cpus: parseCpuList(readText(`${dev}/local_cpulist`) ?? ''), source: `sysfs ${dev}` };
  return { source: topo ? 'nvidia-smi topo -m (no CPU affinity for this GPU)' : 'unknown (no nvidia-smi)' };
}

/** The timing thread's core: the highest allowed GPU-local core, not CPU 0 (it takes most interrupts) where another is allowed. */
export function pickCore(allowed: number[], gpu: GpuPlacement): { cpu: number; why: string } {
  const ok = new Set(allowed);
  const localSet = (gpu.cpus ?? allowed).filter((c) => ok.has(c));
  const local = localSet.length ? localSet : allowed;
  const cpu = [...local].reverse().find((c) => c !== 0) ?? local[0];
  const note = localSet.length || !gpu.cpus ? '' : ', none of them allowed here: any allowed core';
  return { cpu, why: `local core ${cpu} (GPU's CPUs ${gpu.cpus ? compact(gpu.cpus) : 'unknown'}, via ${gpu.source}${note})` };
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

/** This machine's default core for the timing thread. */
export function gpuLocalCore(): { cpu: number; why: string } {
  return pickCore(allowedCpus(), gpuPlacement(Number(process.env.BENCH_DEVICE ?? 0) | 0));
}

/** The method of this run: the timing thread's core (undefined: not pinned), the launch warm-up, where they came from. */
export interface ChosenFloor {
  pinCpu?: number;
  warmupLaunches: number;
  source: string;
  words: string;
}

/**
 * Picks the run's floor method and writes it into `env` (BENCH_PIN, BENCH_FLOOR_WARMUP) for the children:
 * BENCH_PIN as given ('off': none), else `defaultCore()`; BENCH_FLOOR_WARMUP as given, else the default.
 * @throws RangeError for a BENCH_PIN or BENCH_FLOOR_WARMUP that is not a core or a positive count
 */
export function chooseFloor(env: NodeJS.ProcessEnv, defaultCore: () => { cpu: number; why: string } = gpuLocalCore): ChosenFloor {
  const pinText = env.BENCH_PIN?.trim();
  if (pinText && pinText !== 'off' && !/^\d{1,4}$/.test(pinText)) throw new RangeError(`bench/run.ts: BENCH_PIN=${pinText} is not a CPU number (or 'off')`);
  const warmText = env.BENCH_FLOOR_WARMUP?.trim();
  if (warmText && !(/^\d{1,9}$/.test(warmText) && Number(warmText) > 0))
    throw new RangeError(`bench/run.ts: BENCH_FLOOR_WARMUP=${warmText} is not a positive number of launches`);
  const core = pinText ? undefined : defaultCore();
  const pinCpu = pinText === 'off' ? undefined : pinText ? Number(pinText) : core!.cpu;
  const source = pinText ? `BENCH_PIN=${pinText}` : `default: ${core!.why}`;
  const warmupLaunches = warmText ? Number(warmText) : DEFAULT_WARMUP_LAUNCHES;
  Object.assign(env, floorEnv({ pinCpu, warmupLaunches }));
  const pinWords = pinCpu === undefined ? 'timing threads not pinned' : `timing thread pinned to core ${pinCpu} after set-up`;
  return { pinCpu, warmupLaunches, source, words: `${pinWords}, launch rows warmed up ≥ ${warmupLaunches} launches (${source})` };
}

/** The standalone program's environment: bench.c takes BENCH_PIN as a CPU number only, so 'off' is left out. */
export function standaloneEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  if (!/^\d+$/.test(out.BENCH_PIN?.trim() ?? '')) delete out.BENCH_PIN;
  return out;
}

/** The line under the table: the floor every ratio uses and how it was measured. */
export function floorLine(all: readonly ImplResult[], floor: ChosenFloor): string {
  const inproc = all.find((r) => r.impl === 'native-c-inproc' && !r.skipped);
  const how = inproc ? floorRecordWords(inproc.meta.floor as FloorRecord | undefined) : floor.words;
  return `C floor: every "C" ratio is against C in the same process (native-c-inproc, interleaved with the JS columns; ${how}); native-c, one standalone process pinned alike, is the Python columns' base (docs/performance.md).`;
}
