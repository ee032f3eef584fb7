// The C floor in `npm run bench` (issue 26 §3): which method the run uses (bench/c-floor.ts's), the
// environment that carries it to the timing processes (bench/c-floor-pin.ts), and the one line under
// the table that says which floor every ratio uses, why, and how far the standalone process was from
// it in this run.
import { type FloorMethod, stableFloorMethod } from './c-floor';
import { type FloorRecord, H200_FINDING, floorEnv, floorRecordWords } from './c-floor-pin';
import { type ImplResult, isMeasured, reason } from './common';

/** The method of this run: the timing thread's core (undefined: not pinned), the launch warm-up, where they came from. */
export interface ChosenFloor {
  pinCpu?: number;
  warmupLaunches: number;
  source: string;
  words: string;
}

/**
 * Picks the run's floor method and writes it into `env` (BENCH_PIN, BENCH_FLOOR_WARMUP) for the
 * children: BENCH_PIN as given ('off': none), else the method of BENCH_FLOOR_JSON's c-floor.json,
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
  if (warmText && !(/^\d{1,9}$/.test(warmText) && Number(warmText) > 0)) throw new RangeError(`bench/run.ts: BENCH_FLOOR_WARMUP=${warmText} is not a positive number of launches`);
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

/** The line under the table: the floor every ratio uses, why (bench/c-floor.ts's finding), and this run's difference. */
export function floorLine(all: readonly ImplResult[], floor: ChosenFloor): string {
  const inproc = all.find((r) => r.impl === 'native-c-inproc' && !r.skipped);
  const how = inproc ? floorRecordWords(inproc.meta.floor as FloorRecord | undefined) : floor.words;
  const f = H200_FINDING;
  return (
    `C floor: every "C" ratio is against C in the same process (native-c-inproc, interleaved with the JS columns; ${how}): ` +
    `bench/c-floor.ts found on the H200 (${f.date}) standalone and in-process C agree (pinned ${pct(f.pinned.effect)}, noise ±${(f.pinned.noise * 100).toFixed(1)}%; unpinned ${pct(f.unpinned.effect)}) ` +
    `while one fresh standalone process is a lottery (launch_0args spread ${(f.lottery.unpinned * 100).toFixed(1)}% unpinned, ${(f.lottery.pinned * 100).toFixed(1)}% pinned, 3 processes); native-c is one such process. ` +
    `${thisRunWords(all)}. Reproduce: npx tsx bench/c-floor.ts`
  );
}
