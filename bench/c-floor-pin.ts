// How `npm run bench` applies the floor method of bench/c-floor.ts (issue 26 §3) in every process that
// times C and JS interleaved (bench/gpu.ts under Node, bench/runtime-child.ts under Bun and Deno) and in
// the standalone C program. bench/run.ts picks the method once and passes it down by environment:
//   BENCH_PIN            the core the timing thread is pinned to after set-up (bench.c reads it too);
//                        unset or 'off': the threads stay where the OS puts them
//   BENCH_FLOOR_WARMUP   launches of the untimed warm-up pass of each launch_* row (at least)
// Pinned: the rows timed per operation (calls, launches, allocations, events). Not pinned: the 256 MiB
// copy rows, with the start-up affinity back: the objects layer's staged pageable copies use helper
// threads (worker_threads) created on first use, which would inherit the one core and share it.
// No FFI here: each process pins through libbench.so's bench_pin_thread with its own FFI.

/** What one process applies: the core (undefined: not pinned, `why` says why) and the launch warm-up. */
export interface FloorSettings {
  pinCpu?: number;
  warmupLaunches: number;
  why?: string;
}

/** What bench/c-floor.ts recommended on the H200 (bench/c-floor.ts's run of 2026-12-01, /work/.device/4). */
export const H200_FINDING = {
  date: '2026-12-01',
  /** Standalone vs in-process C, launch rows, pinned: median effect and its noise (10 comparisons). */
  pinned: { effect: 0.008, noise: 0.036 },
  /** The same unpinned (4 comparisons). */
  unpinned: { effect: -0.003, noise: 0.036 },
  /** The classic standalone method (one fresh process per run): launch_0args spread over 3 processes. */
  lottery: { unpinned: 0.103, pinned: 0.1 },
  warmupLaunches: 4000,
  reps: 21,
} as const;

/** The launch warm-up where nothing says otherwise: the H200 finding's. */
export const DEFAULT_WARMUP_LAUNCHES = H200_FINDING.warmupLaunches;

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
  if (pinText === '' || pinText === 'off') return { warmupLaunches: warm, why: [`not pinned (BENCH_PIN ${pinText ? 'off' : 'unset'})`, warmWhy].filter(Boolean).join('; ') };
  if (!/^\d{1,4}$/.test(pinText)) return { warmupLaunches: warm, why: [`not pinned: BENCH_PIN=${pinText} is not a CPU number`, warmWhy].filter(Boolean).join('; ') };
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

  constructor(private readonly settings: FloorSettings, private readonly pin: ((cpu: number) => number) | undefined, private readonly cpuNow?: () => number) {
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
  const where = r.pin_cpu === null ? r.why ?? 'not pinned' : `timing thread pinned to core ${r.pin_cpu} after set-up (seen on ${r.cpus_seen.join(',') || '?'}) for ${r.pinned_rows.length} rows`;
  return `${where}; launch rows warmed up ≥ ${r.warmup_launches} launches`;
}
