// The Node / Bun / Deno part of `npm run bench` (issue 26 §2, §3): the table of the GPU call and launch rows
// per JavaScript runtime, each runtime's columns against C measured in that runtime's own process
// (Node: bench/gpu.ts's interleaved phase, native-c-inproc; Bun and Deno: bench/runtime-child.ts,
// native-c-inproc-bun / -deno), and the issue's verdicts. Pure: results in, text and verdicts out.
import { type ImplResult, type MeasuredRow, type Row, fmt, isMeasured, table } from './common';
import { MIN_QUIET_REPS, QUIET_SLACK, type RatioStats, judgeRatios, quietFloor, quietRatioStats, ratioStats, ratioWords } from './interleave';
import type { StagingVerdict } from './staging-report';
import { type FloorRecord, floorRecordWords } from './floor';

/** The runtimes of the table; Node's columns are bench/gpu.ts's, the others' come from a child each. */
export const JS_RUNTIMES = ['node', 'bun', 'deno'] as const;
export type JsRuntimeName = (typeof JS_RUNTIMES)[number];
/** The runtimes measured in a child process of their own (bench/runtimes-gpu.ts). */
export const CHILD_RUNTIMES = ['bun', 'deno'] as const;
export type ChildRuntime = (typeof CHILD_RUNTIMES)[number];

/** The rows the children measure: bench.c's call and launch rows (the 256 MiB copies stay with bench/gpu.ts). */
export const CHILD_ROWS = [
  'cuCtxGetCurrent',
  'cuDeviceGetAttribute',
  'launch_0args',
  'launch_4args',
  'launch_16args',
  'launch_sync',
  'event_record_elapsed',
  'alloc_free_async_1MiB',
];
/**
 * A child's repetitions per row (BENCH_CHILD_REPS, else BENCH_REPS): its rows are short (about 2 s a
 * repetition for all of them), and the verdicts judge the median's 95% interval, which at 21
 * repetitions lies between the 6th smallest and 6th largest ratio: one runtime state that holds a
 * few repetitions (Deno's slow spells, docs/runtimes.md) no longer decides the verdict alone, as it
 * does when every one of 7 must meet the target.
 */
export const CHILD_REPS = 21;
/** A child's implementations, before the runtime's suffix (`cuda-ts-typed` → `cuda-ts-typed-bun`). */
export const CHILD_IMPLS = ['native-c-inproc', 'cuda-ts-raw', 'cuda-ts-typed', 'cuda-ts-objects'] as const;

/** An implementation's name under a runtime: Node's is the plain name (bench/gpu.ts), the others' carry the runtime. */
export function runtimeImpl(impl: string, rt: JsRuntimeName): string {
  return rt === 'node' ? impl : `${impl}-${rt}`;
}

const TITLE: Record<JsRuntimeName, string> = { node: 'Node', bun: 'Bun', deno: 'Deno' };

type Verdict = StagingVerdict;
type GetRow = (impl: string, row: string) => Row | undefined;

function lookup(all: readonly ImplResult[]): GetRow {
  const byImpl = new Map(all.map((r) => [r.impl, r]));
  return (impl, row) => {
    const r = byImpl.get(impl);
    if (!r) return { skipped: 'not run' };
    if (r.skipped) return { skipped: r.skipped };
    return r.rows?.[row];
  };
}

/** `value` against `base`: per-repetition ratios where both ran interleaved, else the ratio of medians. */
function ratioOf(value: MeasuredRow, base: MeasuredRow): RatioStats & { interleaved: boolean } {
  if (value.interleaved && base.interleaved && value.reps.length && base.reps.length) return { ...ratioStats(value.reps, base.reps), interleaved: true };
  const r = value.median / base.median;
  return { median: r, min: r, max: r, lo: r, hi: r, n: 1, interleaved: false };
}

/** First line of a reason, cut to n characters. */
function short(text: string, n: number): string {
  const one = text.split(/ tried: |\n/)[0];
  return one.length <= n ? one : `${one.slice(0, n)}...`;
}

/** The table: one line per row, per runtime its C and cuda-ts's layers (value and ratio to that runtime's C). */
export function runtimeTable(all: readonly ImplResult[]): string {
  const get = lookup(all);
  const notes = new Map<string, number>();
  const noteFor = (why: string) => {
    if (!notes.has(why)) notes.set(why, notes.size + 1);
    return `skip[${notes.get(why)}]`;
  };
  const header = ['row', 'unit'];
  for (const rt of JS_RUNTIMES) for (const impl of CHILD_IMPLS) header.push(`${TITLE[rt]} ${impl === 'native-c-inproc' ? 'C' : impl.replace('cuda-ts-', '')}`);
  const lines = CHILD_ROWS.map((row) => {
    const cells = [row, 'ns'];
    for (const rt of JS_RUNTIMES) {
      const c = get(runtimeImpl('native-c-inproc', rt), row);
      for (const impl of CHILD_IMPLS) {
        const r = get(runtimeImpl(impl, rt), row);
        if (r === undefined) cells.push('');
        else if (!isMeasured(r)) cells.push(noteFor(r.skipped));
        else if (impl === 'native-c-inproc' || !isMeasured(c)) cells.push(fmt(r.median));
        else cells.push(`${fmt(r.median)} ${ratioOf(r, c).median.toFixed(2)}x`);
      }
    }
    return cells;
  });
  const out = [
    "Node, Bun and Deno: ns per operation, and the ratio to C measured in the same process (libbench.so, interleaved with the JS columns; Node: koffi by default, Bun: bun:ffi, Deno: Deno.dlopen, each the runtime's default FFI):",
    table(header, lines, 2),
  ];
  out.push(...howLines(all));
  if (notes.size) {
    out.push('skipped:');
    for (const [why, n] of notes) out.push(`  [${n}] ${short(why, 300)}`);
  }
  return out.join('\n');
}

/** Per child runtime that ran: its version, the FFI each timed driver function was bound through, how C was loaded, its pinning. */
function howLines(all: readonly ImplResult[]): string[] {
  const lines: string[] = [];
  for (const rt of CHILD_RUNTIMES) {
    const meta = all.find((r) => r.impl === runtimeImpl('cuda-ts-typed', rt) && !r.skipped)?.meta;
    if (!meta) continue;
    const backends = Object.entries((meta.backends ?? {}) as Record<string, { backend?: string; reason?: string }>).map(
      ([fn, b]) => `${fn} via ${b?.backend ?? '?'}${b?.reason ? ` (${b.reason})` : ''}`,
    );
    lines.push(
      `  ${TITLE[rt]} ${String(meta.version ?? '?')}: ${backends.join(', ') || 'backends not reported'}; C loaded by ${String(meta.native_c_loaded_by ?? '?')}; ${floorRecordWords(meta.floor as FloorRecord | undefined)}`,
    );
  }
  const floors = floorsLine(all);
  if (floors) lines.push(floors);
  return lines;
}

/** Each runtime's C floor on the launch rows beside the standalone process's (one process: a ±10% lottery, docs/performance.md). */
export function floorsLine(all: readonly ImplResult[]): string | undefined {
  const get = lookup(all);
  const cell = (impl: string) =>
    ['launch_0args', 'launch_4args']
      .map((row) => {
        const r = get(impl, row);
        return isMeasured(r) ? fmt(r.median) : '-';
      })
      .join(' / ');
  const parts = JS_RUNTIMES.filter((rt) => isMeasured(get(runtimeImpl('native-c-inproc', rt), 'launch_0args'))).map(
    (rt) => `${TITLE[rt]} ${cell(runtimeImpl('native-c-inproc', rt))}`,
  );
  if (!parts.length) return undefined;
  const standalone = isMeasured(get('native-c', 'launch_0args')) ? `; standalone native-c (one process) ${cell('native-c')}` : '';
  return `  C floor per runtime, launch_0args / launch_4args ns (in-process, pinned as each line says): ${parts.join(', ')}${standalone}`;
}

/**
 * A trivial-call target judged on the quiet repetitions (C within {@link QUIET_SLACK} of the run's quiet
 * floor, over every runtime's process): a call of a few ns measures the core's neighbours as much as
 * cuda-ts when the core is contended. The value gives the quiet repetitions' ratio and every
 * repetition's; with fewer than {@link MIN_QUIET_REPS} quiet ones the verdict judges them all.
 */
function judgeQuiet(get: GetRow, target: string, row: string, impl: string, base: string, limit: number): Verdict {
  const plain = judgeOne(get, target, row, impl, base, limit);
  const v = get(impl, row);
  const b = get(base, row);
  if (plain.verdict === 'SKIP' || !isMeasured(v) || !isMeasured(b) || !v.interleaved || !b.interleaved) return plain;
  const floor = quietFloor(
    JS_RUNTIMES.map((rt) => get(runtimeImpl('native-c-inproc', rt), row))
      .filter(isMeasured)
      .map((r) => r.reps),
  );
  const q = quietRatioStats(v.reps, b.reps, floor);
  const rule = `C ≤ ${QUIET_SLACK}× the run's quiet floor ${fmt(floor)} ns`;
  // plain.value is every repetition's ratio in words (both rows are interleaved here)
  if (q.quiet < MIN_QUIET_REPS) return { ...plain, value: `${plain.value}; all reps: only ${q.quiet} of ${q.of} quiet (${rule})` };
  return {
    ...plain,
    value: `${ratioWords(q)} on ${q.quiet} of ${q.of} quiet reps (${rule}); all reps ${plain.value}`,
    verdict: judgeRatios(q, limit, 'lower'),
  };
}

/** One ratio target on one runtime's columns: `impl` against the runtime's own C, ≤ limit. */
function judgeOne(get: GetRow, target: string, row: string, impl: string, base: string, limit: number): Verdict {
  const v = get(impl, row);
  const b = get(base, row);
  if (!isMeasured(v) || !isMeasured(b)) {
    const missing = !isMeasured(v) ? ([impl, v] as const) : ([base, b] as const);
    return {
      target,
      row,
      judged: `${impl} vs ${base}`,
      verdict: 'SKIP',
      why: `${missing[0]} has no ${row}${missing[1] && !isMeasured(missing[1]) ? `: ${missing[1].skipped}` : ''}`,
    };
  }
  const q = ratioOf(v, b);
  const verdict = q.interleaved ? judgeRatios(q, limit, 'lower') : q.median <= limit ? 'PASS' : 'FAIL';
  const value = q.interleaved ? ratioWords(q) : `${q.median.toFixed(3)}x (medians; not interleaved)`;
  return { target, row, judged: `${impl} vs ${base}`, value, verdict };
}

/** Several runtimes' verdicts of one target as one: PASS if one passes, else noisy if one is, else FAIL if one fails, else SKIP. */
export function anyRuntime(target: string, row: string, each: readonly Verdict[]): Verdict {
  const of = (v: Verdict['verdict']) => each.filter((e) => e.verdict === v);
  const verdict = (['PASS', 'noisy', 'FAIL'] as const).find((v) => of(v).length) ?? 'SKIP';
  const judged =
    each
      .filter((e) => e.verdict !== 'SKIP')
      .map((e) => e.judged.split(' vs ')[0])
      .join(', ') || '-';
  const value =
    each
      .filter((e) => e.value)
      .map((e) => `${e.judged.split(' vs ')[0]} ${e.value!.split(' ')[0]}`)
      .join('; ') || undefined;
  return { target, row, judged, value, verdict, why: verdict === 'SKIP' ? 'no runtime measured it' : undefined };
}

/**
 * Issue 26's targets: trivial typed call ≤ 2× C under Bun and under Deno; objects launch (0 and 4 args)
 * ≤ 1.03× C under at least one runtime (each runtime's line, then the combined one). C: the same process.
 * The trivial calls are judged on their quiet repetitions ({@link judgeQuiet}), the launches on all.
 */
export function runtimeVerdicts(all: readonly ImplResult[]): Verdict[] {
  const get = lookup(all);
  const out: Verdict[] = [];
  for (const rt of CHILD_RUNTIMES) {
    for (const row of ['cuCtxGetCurrent', 'cuDeviceGetAttribute'])
      out.push(
        judgeQuiet(
          get,
          `${TITLE[rt]}: trivial call, typed ≤ 2× C (same process, quiet reps)`,
          row,
          runtimeImpl('cuda-ts-typed', rt),
          runtimeImpl('native-c-inproc', rt),
          2,
        ),
      );
  }
  for (const row of ['launch_0args', 'launch_4args']) {
    const each = JS_RUNTIMES.map((rt) =>
      judgeOne(get, `${TITLE[rt]}: objects launch ≤ 1.03× C (same process)`, row, runtimeImpl('cuda-ts-objects', rt), runtimeImpl('native-c-inproc', rt), 1.03),
    );
    out.push(...each, anyRuntime('objects launch ≤ 1.03× C under at least one runtime', row, each));
  }
  return out;
}
