// The fuzz report as people read it: one summary line per layer, then the failures grouped so that a
// pattern (every `-1` reaching C through a handle) reads as one line with examples.
import type { CaseResult, FuzzReport, LayerCounts } from './harness';

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** `fuzz: 13.0 driver+runtime: N functions, M cases, 0 crashes, 0 reached C, 0 unnamed errors, …` */
export function summaryLine(r: FuzzReport): string {
  const t = r.typed;
  const sources = [...new Set(Object.values(r.sources))].join('+');
  return (
    `fuzz: ${r.version} ${r.modules.join('+')}: ${plural(t.functions, 'function')}, ${plural(t.cases, 'case')}, ` +
    `${plural(t.crashes, 'crash', 'crashes')}, ${t.reachedC} reached C, ${plural(t.unnamed, 'unnamed error')}, ` +
    `${t.misattributed} misattributed, ${plural(r.mismatches.length, 'signature mismatch', 'signature mismatches')}` +
    ` (signatures: ${sources}${r.stopped ? '; STOPPED at the crash limit' : ''}; ${r.seconds.toFixed(0)} s)`
  );
}

/** `fuzz raw: … out-parameters too short or of the wrong element size …` */
export function rawSummaryLine(r: FuzzReport): string {
  const w = r.raw;
  return (
    `fuzz raw: ${r.version} ${r.modules.join('+')}: ${plural(w.functions, 'function')}, ${plural(w.cases, 'case')} ` +
    `(host memory too short as typed arrays, ArrayBuffers and DataViews, wrong element sizes, strings, non-addresses), ` +
    `${plural(w.crashes, 'crash', 'crashes')}, ${w.reachedC} reached C, ${w.unnamed + w.misattributed} not a TypeError/RangeError naming the parameter`
  );
}

/** `fuzz support: … public support helpers …` (empty when the run had no support cases). */
export function supportSummaryLine(r: FuzzReport): string {
  const s = r.support;
  return (
    `fuzz support: ${plural(s.functions, 'public helper')}, ${plural(s.cases, 'case')}, ${plural(s.crashes, 'crash', 'crashes')}, ` +
    `${s.reachedC} taken silently, ${s.unnamed + s.misattributed} not a TypeError/RangeError naming the helper and the argument`
  );
}

/** Whether the run met the contract: every case a correct rejection, every signature matched. */
export function clean(r: FuzzReport): boolean {
  const ok = (c: LayerCounts) => c.crashes + c.reachedC + c.unnamed + c.misattributed === 0;
  return ok(r.typed) && ok(r.raw) && ok(r.support) && r.mismatches.length === 0 && !r.stopped;
}

/** Failures grouped by layer, outcome, parameter kind and value, largest groups first, with examples. */
export function failureTable(r: FuzzReport, examples = 3, maxGroups = 60): string {
  const groups = new Map<string, CaseResult[]>();
  for (const f of r.failures) {
    const key = `${f.c.layer} ${f.outcome} ${f.c.accepts} ← ${f.c.value}`;
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  const lines: string[] = [];
  const sorted = [...groups].sort((a, b) => b[1].length - a[1].length);
  for (const [key, list] of sorted.slice(0, maxGroups)) {
    lines.push(`  ${String(list.length).padStart(5)}  ${key}`);
    for (const f of list.slice(0, examples)) {
      const confirmed = f.confirmed === false ? ' [not reproduced alone]' : '';
      lines.push(`           ${f.c.module}.${f.c.fn}(${f.c.param}): ${f.detail.split('\n')[0].slice(0, 160)}${confirmed}`);
    }
  }
  if (sorted.length > maxGroups) lines.push(`  … ${sorted.length - maxGroups} more groups (see the JSON report)`);
  for (const m of r.mismatches.slice(0, 40)) lines.push(`  signature: ${m.module}.${m.fn}: ${m.problem}`);
  if (r.mismatches.length > 40) lines.push(`  … ${r.mismatches.length - 40} more signature mismatches`);
  return lines.join('\n');
}

/** The report as JSON (bigints and functions never appear: cases carry labels, not values). */
export function reportJson(r: FuzzReport): string {
  return JSON.stringify(
    {
      summary: summaryLine(r),
      rawSummary: rawSummaryLine(r),
      supportSummary: supportSummaryLine(r),
      clean: clean(r),
      ...r,
      failures: r.failures.map((f) => ({
        layer: f.c.layer,
        module: f.c.module,
        fn: f.c.fn,
        param: f.c.param,
        position: f.c.position,
        accepts: f.c.accepts,
        value: f.c.value,
        outcome: f.outcome,
        detail: f.detail,
        ...(f.confirmed !== undefined ? { confirmed: f.confirmed } : {}),
      })),
    },
    null,
    1,
  );
}
