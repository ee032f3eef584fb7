// Bad-input fuzz of the typed and raw layers of the driver and runtime and of the public support
// helpers, each call in a child process so a crash is caught and named. Prints the summary lines;
// exits 1 unless clean.
//   npx tsx scripts/fuzz.ts [--modules driver,runtime] [--jobs 2] [--batch 1500] [--only fnA,fnB]
//                           [--no-raw] [--no-support] [--no-confirm] [--max-crashes N] [--quiet]
// With $OUT set, the full report is written to $OUT/fuzz.json.
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runFuzz } from '../test/fuzz/harness';
import { clean, failureTable, rawSummaryLine, reportJson, summaryLine, supportSummaryLine } from '../test/fuzz/report';

function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const flag = (name: string): boolean => process.argv.includes(`--${name}`);

async function main(): Promise<void> {
  const root = resolve(__dirname, '..');
  const quiet = flag('quiet');
  const report = await runFuzz({
    root,
    version: option('version') ?? '13.0',
    modules: option('modules')?.split(','),
    jobs: option('jobs') ? Number(option('jobs')) : undefined,
    batchSize: option('batch') ? Number(option('batch')) : undefined,
    maxCrashes: option('max-crashes') ? Number(option('max-crashes')) : undefined,
    only: option('only')?.split(','),
    raw: !flag('no-raw'),
    support: !flag('no-support'),
    confirmCrashes: !flag('no-confirm'),
    log: quiet ? undefined : (line) => process.stderr.write(`${line}\n`),
  });
  const ok = clean(report);
  if (!ok) console.log(failureTable(report));
  console.log(summaryLine(report));
  console.log(rawSummaryLine(report));
  if (report.support.cases) console.log(supportSummaryLine(report));
  if (process.env.OUT) {
    const file = join(process.env.OUT, 'fuzz.json');
    writeFileSync(file, reportJson(report));
    console.log(`report: ${file}`);
  }
  process.exitCode = ok ? 0 : 1;
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.stack : e);
  process.exitCode = 2;
});
