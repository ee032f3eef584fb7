// The conclusions of the C floor experiment (bench/c-floor.ts): per variant, the median and spread of
// its per-pass values; per comparison, the median and IQR of the per-round ratios of two variants
// (their passes ran next to each other in every round, so drift cancels); which factors moved the
// numbers beyond the noise; and the method that gives one stable floor. Pure functions of the
// records, so the same verdicts can be recomputed from a saved c-floor.json.

/** One timed pass of one variant. `unit` = "<variant>@<placement>", the thing compared. */
export interface PassRecord {
  group: string;
  unit: string;
  variant: string;
  placement: string;
  row: string;
  round: number;
  ops: number;
  /** ns per operation by C's clock inside the pass. */
  perOp: number;
  /** ns per operation by JS's clock around the koffi call (node variants). */
  jsPerOp?: number;
  cpuBefore: number;
  cpuAfter: number;
}

/** Median and spread of a sample. iqrRel = (q3 - q1) / median. */
export interface Stats {
  n: number;
  median: number;
  q1: number;
  q3: number;
  min: number;
  max: number;
  iqrRel: number;
}

function quantile(sorted: number[], q: number): number {
  if (!sorted.length) return NaN;
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

export function stats(values: number[]): Stats {
  const s = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  const median = quantile(s, 0.5);
  const q1 = quantile(s, 0.25);
  const q3 = quantile(s, 0.75);
  return { n: s.length, median, q1, q3, min: s[0] ?? NaN, max: s[s.length - 1] ?? NaN, iqrRel: median > 0 ? (q3 - q1) / median : NaN };
}

/**
 * Two units compared: `other` / `base`, per round. crossProcess: the two ran in different processes,
 * so the process-to-process spread ("lottery") counts as noise too.
 */
export interface Comparison {
  group: string;
  factor: string;
  label: string;
  base: string;
  other: string;
  crossProcess: boolean;
}

export interface ComparisonResult extends Comparison {
  row: string;
  ratio: Stats;
  /** ratio.median - 1 */
  effect: number;
  /** What the effect must exceed: half the ratios' IQR, 1 %, and for cross-process comparisons the lottery. */
  noise: number;
  moved: boolean;
}

/** The smallest effect called real, whatever the spread (1 %). */
export const MIN_EFFECT = 0.01;
/** The comparisons that measure the lottery: two processes of the same kind and placement. */
export const LOTTERY_FACTOR = 'process lottery';

function valuesBy(records: PassRecord[], group: string, unit: string, row: string): Map<number, number> {
  const m = new Map<number, number>();
  for (const r of records) if (r.group === group && r.unit === unit && r.row === row) m.set(r.round, r.perOp);
  return m;
}

/** Per-round ratios other/base over the rounds both ran. */
export function pairedRatios(records: PassRecord[], c: Comparison, row: string): number[] {
  const a = valuesBy(records, c.group, c.base, row);
  const b = valuesBy(records, c.group, c.other, row);
  const out: number[] = [];
  for (const [k, va] of a) {
    const vb = b.get(k);
    if (vb !== undefined && va > 0) out.push(vb / va);
  }
  return out;
}

function judgeOne(records: PassRecord[], c: Comparison, row: string, lottery: number): ComparisonResult | undefined {
  const ratios = pairedRatios(records, c, row);
  if (ratios.length < 3) return undefined;
  const ratio = stats(ratios);
  const effect = ratio.median - 1;
  const spread = (ratio.q3 - ratio.q1) / 2;
  const noise = Math.max(spread, MIN_EFFECT, c.crossProcess && c.factor !== LOTTERY_FACTOR ? lottery : 0);
  const excludesOne = ratio.q1 > 1 || ratio.q3 < 1;
  return { ...c, row, ratio, effect, noise, moved: excludesOne && Math.abs(effect) > noise };
}

/** Every comparison on every row; the lottery (largest same-kind process-to-process effect per row) is judged first and then counts as noise for the cross-process ones. */
export function judgeAll(records: PassRecord[], comparisons: Comparison[], rows: string[]): { results: ComparisonResult[]; lottery: Record<string, number> } {
  const lottery: Record<string, number> = {};
  const results: ComparisonResult[] = [];
  for (const row of rows) {
    const lot = comparisons.filter((c) => c.factor === LOTTERY_FACTOR).map((c) => judgeOne(records, c, row, 0)).filter((r): r is ComparisonResult => !!r);
    lottery[row] = Math.max(0, ...lot.map((r) => Math.abs(r.effect)));
    results.push(...lot);
    for (const c of comparisons) {
      if (c.factor === LOTTERY_FACTOR) continue;
      const r = judgeOne(records, c, row, lottery[row]);
      if (r) results.push(r);
    }
  }
  return { results, lottery };
}

/** Per unit and row, the stats of its per-op values (and the JS/C clock ratio where JS timed it too). */
export function unitStats(records: PassRecord[]): Record<string, Record<string, Stats & { jsOverC?: Stats; cpus: number[]; migrated: number }>> {
  const out: Record<string, Record<string, Stats & { jsOverC?: Stats; cpus: number[]; migrated: number }>> = {};
  const keys = new Set(records.map((r) => `${r.group}\t${r.unit}\t${r.row}`));
  for (const k of keys) {
    const [group, unit, row] = k.split('\t');
    const rs = records.filter((r) => r.group === group && r.unit === unit && r.row === row);
    const js = rs.filter((r) => r.jsPerOp !== undefined).map((r) => r.jsPerOp! / r.perOp);
    const cpus = [...new Set(rs.flatMap((r) => [r.cpuBefore, r.cpuAfter]))].sort((a, b) => a - b);
    (out[`${group}/${unit}`] ??= {})[row] = {
      ...stats(rs.map((r) => r.perOp)),
      ...(js.length ? { jsOverC: stats(js) } : {}),
      cpus,
      migrated: rs.filter((r) => r.cpuBefore !== r.cpuAfter).length,
    };
  }
  return out;
}

/** A process's first launches after set-up, in passes of `opsPerPass`, and its steady value. */
export interface WarmSeries {
  unit: string;
  opsPerPass: number;
  perOp: number[];
}

/**
 * How many passes of the series until it has settled: the first pass from which at most a fifth of
 * the passes lie outside ±`tol` of the steady value (the median of the series' second half), so that
 * one late outlier does not count as warm-up. `passes` = the series' length: it never settled.
 */
export function settledAfter(series: number[], tol = 0.05): { passes: number; steady: number; first: number } {
  const steady = stats(series.slice(Math.floor(series.length / 2))).median;
  const out = series.map((v) => v > steady * (1 + tol) || v < steady * (1 - tol));
  let passes = series.length;
  for (let i = series.length - 1; i >= 0; i--) {
    const tail = out.slice(i);
    if (!out[i] && tail.filter(Boolean).length <= tail.length / 5) passes = i;
  }
  return { passes, steady, first: series[0] };
}

/** The method the experiment recommends for one stable C floor (see stableFloorMethod in bench/c-floor.ts). */
export interface FloorMethod {
  /** in-process: bench.c's passes through libbench.so in the JS process (the ratio's both sides share the process); both: report both, they differ for a reason given. */
  floor: 'in-process' | 'standalone' | 'both';
  /** The core to pin the timing thread to after set-up (bench_pin_thread), or undefined: leave it to the scheduler. */
  pinCpu?: number;
  /** Launches to run, untimed, before the first timed pass. */
  warmupLaunches: number;
  /** Interleaved repetitions (A B A B …) whose median is the floor. */
  reps: number;
  /** Processes to take the median of the per-process medians over (1 when the process lottery is within the noise). */
  processes: number;
  reasons: string[];
}

const LAUNCH_ROWS = ['launch_0args', 'launch_4args'];
const WARM_WORDS = 'the series';

/**
 * A factor's verdict on the launch rows over all its comparisons: the median effect and noise, and
 * moved when more than half of them moved in the median's direction (one wild comparison cannot decide).
 */
export function factorEffect(results: ComparisonResult[], factor: string): { effect: number; moved: boolean; noise: number; n: number } {
  const rs = results.filter((r) => r.factor === factor && LAUNCH_ROWS.includes(r.row));
  if (!rs.length) return { effect: NaN, moved: false, noise: NaN, n: 0 };
  const effect = stats(rs.map((r) => r.effect)).median;
  const agreeing = rs.filter((r) => r.moved && Math.sign(r.effect) === Math.sign(effect)).length;
  return { effect, moved: agreeing > rs.length / 2, noise: stats(rs.map((r) => r.noise)).median, n: rs.length };
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;

/** The method, from the judged comparisons, the warm-up series and the cores; `reasons` say why each choice. */
export function recommend(results: ComparisonResult[], lottery: Record<string, number>, warm: WarmSeries[], cores: { local: number }, reps: number): FloorMethod {
  const reasons: string[] = [];
  const place = factorEffect(results, 'placement');
  const numa = factorEffect(results, 'NUMA node');
  // effect = pinned-local / unpinned - 1: pin unless pinning made the launch rows slower beyond the noise
  const pin = !(place.moved && place.effect > 0);
  reasons.push(
    place.moved
      ? `placement moved the launch rows: pinned to the GPU-local core ${pct(place.effect)} against unpinned (noise ±${(place.noise * 100).toFixed(1)}%)${pin ? '' : ': not pinned'}`
      : `pinning to the GPU-local core changed the launch rows by ${Number.isFinite(place.effect) ? pct(place.effect) : 'n/a'}, within the noise; pinned anyway, so that every run uses the same core`,
  );
  if (Number.isFinite(numa.effect)) reasons.push(`a core on the other NUMA node: ${pct(numa.effect)} against the local one${numa.moved ? ' (beyond the noise)' : ' (within the noise)'}`);
  // the lottery decides only where most of its comparisons moved beyond their own noise (and by > 2 %)
  const lot = Math.max(0, ...LAUNCH_ROWS.map((r) => lottery[r] ?? 0));
  const lotRs = results.filter((r) => r.factor === LOTTERY_FACTOR && LAUNCH_ROWS.includes(r.row));
  const lotMoved = lotRs.filter((r) => r.moved).length;
  const processes = lotRs.length && lotMoved * 2 >= lotRs.length && lot > 0.02 ? 3 : 1;
  reasons.push(`two processes of the same kind and placement differed by up to ${pct(lot)} on the launch rows (${lotMoved} of ${lotRs.length} comparisons beyond their noise): ${processes > 1 ? 'take the median over 3 processes' : 'one process is enough'}`);
  const settled = warm.map((w) => settledAfter(w.perOp).passes * w.opsPerPass);
  const never = warm.filter((w) => settledAfter(w.perOp).passes === w.perOp.length).length;
  const typical = settled.length ? stats(settled).q3 : 0;
  const warmup = Math.max(2000, Math.ceil((typical + 1000) / 1000) * 1000);
  reasons.push(`warm-up: 3 in 4 processes settled within 5% after ${Math.ceil(typical)} launches or fewer (per process: ${settled.join(', ')}${never ? `; ${never} never settled in ${WARM_WORDS}` : ''}): warm up ${warmup}`);
  const mode = factorEffect(results, 'standalone vs in-process');
  const agree = Number.isFinite(mode.effect) && !mode.moved;
  const floor = !Number.isFinite(mode.effect) ? 'standalone' : agree ? 'in-process' : 'both';
  reasons.push(
    !Number.isFinite(mode.effect)
      ? 'no in-process measurement: the standalone floor only'
      : agree
        ? `standalone and in-process agree when pinned (${pct(mode.effect)}, noise ±${(mode.noise * 100).toFixed(1)}%, ${mode.n} comparisons): one floor, measured in the JS process so that both sides of every ratio share it`
        : `standalone and in-process differ when pinned (in-process ${pct(mode.effect)}, noise ±${(mode.noise * 100).toFixed(1)}%, ${mode.n} comparisons): report both, ${explainMode(results)}`,
  );
  return { floor, pinCpu: pin ? cores.local : undefined, warmupLaunches: warmup, reps, processes, reasons };
}

/** The factor among loading, process kind, threads and taskset whose verdict moved most, as the likely cause. */
function explainMode(results: ComparisonResult[]): string {
  const cands = ['loading', 'process kind', 'threads', 'taskset'].map((f) => ({ f, ...factorEffect(results, f) })).filter((c) => c.moved);
  if (!cands.length) return 'no single factor measured here explains it (loading, process kind, runtime threads and taskset stayed within the noise)';
  const top = cands.reduce((a, b) => (Math.abs(b.effect) > Math.abs(a.effect) ? b : a));
  return `the largest measured cause: ${top.f} (${pct(top.effect)} over its ${top.n} comparisons on the launch rows)`;
}

/** One line per comparison result, for the log. */
export function resultLine(r: ComparisonResult): string {
  const verdict = r.moved ? `MOVED ${pct(r.effect)}` : `within noise (${pct(r.effect)})`;
  return `${r.row.padEnd(16)} ${r.factor.padEnd(26)} ${r.label.padEnd(52)} ${r.ratio.median.toFixed(3)}× [IQR ${r.ratio.q1.toFixed(3)}–${r.ratio.q3.toFixed(3)}, n=${r.ratio.n}] noise ±${(r.noise * 100).toFixed(1)}%  ${verdict}`;
}
