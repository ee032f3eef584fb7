// The Node / Bun / Deno part of `npm run bench` (issue 26 §2, §3): the call and launch rows per JavaScript
// runtime, each against C measured in that runtime's own process (Node: bench/gpu.ts, native-c-inproc;
// Bun and Deno: bench/runtime-child.ts, native-c-inproc-bun / -deno), and the issue's verdicts.
import { type GetRow, type ImplResult, SkipNotes, type Verdict, fmt, isMeasured, rowGetter, table } from './common';
import { type FloorRecord, floorRecordWords } from './floor';
import { MIN_QUIET_REPS, QUIET_SLACK, judgeRatio, judgeRatios, quietFloor, quietRatioStats, ratioOf, ratioWords } from './interleave';

const JS_RUNTIMES = ['node', 'bun', 'deno'] as const;
type JsRuntimeName = (typeof JS_RUNTIMES)[number];
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
 * A child's repetitions per row (its rows are short): at 21 the median's 95% interval lies between the
 * 6th smallest and largest ratio, so a runtime state that holds a few repetitions cannot decide a verdict alone.
 */
export const CHILD_REPS = 21;
/** A child's implementations, before the runtime's suffix (`cuda-ts-typed` → `cuda-ts-typed-bun`). */
export const CHILD_IMPLS = ['native-c-inproc', 'cuda-ts-raw', 'cuda-ts-typed', 'cuda-ts-objects'] as const;

/** An implementation's name under a runtime: Node's is the plain name (bench/gpu.ts), the others' carry the runtime. */
export function runtimeImpl(impl: string, rt: JsRuntimeName): string {
  return rt === 'node' ? impl : `${impl}-${rt}`;
}

const TITLE: Record<JsRuntimeName, string> = { node: 'Node', bun: 'Bun', deno: 'Deno' };

/** The table: one line per row, per runtime its C and cuda-ts's layers (value and ratio to that runtime's C). */
export function runtimeTable(all: readonly ImplResult[]): string {
  const get = rowGetter(all);
  const notes = new SkipNotes();
  const header = ['row', 'unit'];
  for (const rt of JS_RUNTIMES) for (const impl of CHILD_IMPLS) header.push(`${TITLE[rt]} ${impl === 'native-c-inproc' ? 'C' : impl.replace('cuda-ts-', '')}`);
  const lines = CHILD_ROWS.map((row) => {
    const cells = [row, 'ns'];
    for (const rt of JS_RUNTIMES) {
      const c = get(runtimeImpl('native-c-inproc', rt), row);
      for (const impl of CHILD_IMPLS) {
        const r = get(runtimeImpl(impl, rt), row);
        if (r === undefined) cells.push('');
        else if (!isMeasured(r)) cells.push(notes.cell(r.skipped));
        else if (impl === 'native-c-inproc' || !isMeasured(c)) cells.push(fmt(r.median));
        else cells.push(`${fmt(r.median)} ${ratioOf(r, c).median.toFixed(2)}x`);
      }
    }
    return cells;
  });
  return [
    "Node, Bun and Deno: ns per operation, and the ratio to C measured in the same process (libbench.so, interleaved with the JS columns; Node: koffi by default, Bun: bun:ffi, Deno: Deno.dlopen, each the runtime's default FFI):",
    table(header, lines, 2),
    ...howLines(all),
    ...notes.lines(),
  ].join('\n');
}

/** Per child runtime that ran: its version, the FFI each timed driver function was bound through, how C was loaded, its pinning. */
function howLines(all: readonly ImplResult[]): string[] {
  return CHILD_RUNTIMES.flatMap((rt) => {
    const meta = all.find((r) => r.impl === runtimeImpl('cuda-ts-typed', rt) && !r.skipped)?.meta;
    if (!meta) return [];
    const backends = Object.entries((meta.backends ?? {}) as Record<string, { backend?: string; reason?: string }>).map(
      ([fn, b]) => `${fn} via ${b?.backend ?? '?'}${b?.reason ? ` (${b.reason})` : ''}`,
    );
    const floor = floorRecordWords(meta.floor as FloorRecord | undefined);
    return [
      `  ${TITLE[rt]} ${String(meta.version ?? '?')}: ${backends.join(', ') || 'backends not reported'}; C loaded by ${String(meta.native_c_loaded_by ?? '?')}; ${floor}`,
    ];
  });
}

/**
 * A trivial-call target judged on the quiet repetitions (C within {@link QUIET_SLACK} of the run's quiet
 * floor over every runtime's process): a call of a few ns measures the core's neighbours as much as
 * cuda-ts when the core is contended. With fewer than {@link MIN_QUIET_REPS} quiet ones it judges them all.
 */
function judgeQuiet(get: GetRow, target: string, row: string, impl: string, base: string, limit: number): Verdict {
  const plain = judgeRatio(get, { target, row, impl, base, limit });
  const [v, b] = [get(impl, row), get(base, row)];
  if (plain.verdict === 'SKIP' || !isMeasured(v) || !isMeasured(b) || !v.interleaved || !b.interleaved) return plain;
  const cReps = JS_RUNTIMES.map((rt) => get(runtimeImpl('native-c-inproc', rt), row))
    .filter(isMeasured)
    .map((r) => r.reps);
  const floor = quietFloor(cReps);
  const q = quietRatioStats(v.reps, b.reps, floor);
  const rule = `C ≤ ${QUIET_SLACK}× the run's quiet floor ${fmt(floor)} ns`;
  if (q.quiet < MIN_QUIET_REPS) return { ...plain, value: `${plain.value}; all reps: only ${q.quiet} of ${q.of} quiet (${rule})` };
  return {
    ...plain,
    value: `${ratioWords(q)} on ${q.quiet} of ${q.of} quiet reps (${rule}); all reps ${plain.value}`,
    verdict: judgeRatios(q, limit, 'lower'),
  };
}

/** Several runtimes' verdicts of one target as one: PASS if one passes, else noisy if one is, else FAIL if one fails, else SKIP. */
export function anyRuntime(target: string, row: string, each: readonly Verdict[]): Verdict {
  const verdict = (['PASS', 'noisy', 'FAIL'] as const).find((v) => each.some((e) => e.verdict === v)) ?? 'SKIP';
  const who = (e: Verdict) => e.judged.split(' vs ')[0];
  const judged =
    each
      .filter((e) => e.verdict !== 'SKIP')
      .map(who)
      .join(', ') || '-';
  const value =
    each
      .filter((e) => e.value)
      .map((e) => `${who(e)} ${e.value!.split(' ')[0]}`)
      .join('; ') || undefined;
  return { target, row, judged, value, verdict, why: verdict === 'SKIP' ? 'no runtime measured it' : undefined };
}

/**
 * Issue 26's targets: trivial typed call ≤ 2× C under Bun and under Deno (on quiet repetitions); objects
 * launch (0 and 4 args) ≤ 1.03× C under at least one runtime (each runtime's line, then the combined one).
 */
export function runtimeVerdicts(all: readonly ImplResult[]): Verdict[] {
  const get = rowGetter(all);
  const out: Verdict[] = [];
  for (const rt of CHILD_RUNTIMES)
    for (const row of ['cuCtxGetCurrent', 'cuDeviceGetAttribute']) {
      const target = `${TITLE[rt]}: trivial call, typed ≤ 2× C (same process, quiet reps)`;
      out.push(judgeQuiet(get, target, row, runtimeImpl('cuda-ts-typed', rt), runtimeImpl('native-c-inproc', rt), 2));
    }
  for (const row of ['launch_0args', 'launch_4args']) {
    const each = JS_RUNTIMES.map((rt) =>
      judgeRatio(get, {
        target: `${TITLE[rt]}: objects launch ≤ 1.03× C (same process)`,
        row,
        impl: runtimeImpl('cuda-ts-objects', rt),
        base: runtimeImpl('native-c-inproc', rt),
        limit: 1.03,
      }),
    );
    out.push(...each, anyRuntime('objects launch ≤ 1.03× C under at least one runtime', row, each));
  }
  return out;
}
