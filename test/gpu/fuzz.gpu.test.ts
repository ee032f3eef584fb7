// The bad-input fuzz on a GPU machine: the same cases as test/fuzz.test.ts, but here a call that gets
// past validation runs for real in the driver (there is a libcuda), so a missed check shows as a crash.
// Writes the report to $OUT/fuzz.json when OUT is set; prints the summary lines either way.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runFuzz, type FuzzReport } from '../fuzz/harness';
import { clean, failureTable, rawSummaryLine, reportJson, summaryLine } from '../fuzz/report';
import { describeGpu } from './gpu-env';

describeGpu('bad-input fuzz on the GPU: 13.0 driver + runtime, crash-isolated', () => {
  let report: FuzzReport;
  beforeAll(async () => {
    // smaller batches than on CPU: a call that reaches the driver may hang, and a hang costs its batch's timeout
    report = await runFuzz({ root: join(__dirname, '..', '..'), version: '13.0', modules: ['driver', 'runtime'], jobs: 4, batchSize: 1000 });
    process.stderr.write(`${summaryLine(report)}\n${rawSummaryLine(report)}\n`);
    if (!clean(report)) process.stderr.write(`${failureTable(report)}\n`);
    if (process.env.OUT) writeFileSync(join(process.env.OUT, 'fuzz.json'), reportJson(report));
  }, 600_000);

  test('0 crashes (signals, abnormal exits, hangs)', () => {
    const crashes = report.failures.filter((f) => f.outcome === 'crash' || f.outcome === 'timeout');
    expect(crashes.map((f) => `${f.c.layer} ${f.c.fn}(${f.c.param} = ${f.c.value}): ${f.detail}`)).toEqual([]);
    expect(report.typed.cases).toBeGreaterThan(25_000);
  });

  test('0 bad values reaching the driver, every error names the function and the parameter', () => {
    expect({
      typed: report.typed.reachedC + report.typed.unnamed + report.typed.misattributed,
      raw: report.raw.reachedC + report.raw.unnamed + report.raw.misattributed,
    }).toEqual({ typed: 0, raw: 0 });
  });
});
