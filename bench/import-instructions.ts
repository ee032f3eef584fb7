// Import + first call counted in CPU instructions (valgrind's callgrind), not milliseconds: the same
// count, within ~0.5%, run after run, however loaded the machine is. The wall-clock import rows
// (bench/import.ts) move by milliseconds between runs on a shared machine; this says whether a change
// made the import cheaper. Cases as bench/import.ts (importCases: koffi's own require + load + one
// call, cuda-ts/driver, cuda-ts/objects, on the bundled build), each run as a script file in a fresh
// process, once untimed (it writes the code cache), then BENCH_INSTR_RUNS times (default 3) under
// callgrind; a row is the median count and its excess over koffi's.
//   npx tsx bench/import-instructions.ts [--gpu]        (needs valgrind; setarch -R where present)
// Node's own flags matter: --hash-seed or --single-threaded make V8 reject the code cache compiled into
// the node binary for Node's own modules, which then add ~47M instructions of parsing to every case
// (koffi's included); `--random-seed=1 --v8-pool-size=0` keep that cache and take the background
// threads' work onto the main thread, where the count does not depend on their timing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, median } from './common';
import { importCases } from './startup';

const FLAGS = ['--random-seed=1', '--v8-pool-size=0'];
const RUNS = Math.max(1, Number(process.env.BENCH_INSTR_RUNS ?? 3) | 0 || 3);

/** The instructions callgrind counts for `node FLAGS script` (one fresh process). */
function instructions(script: string): number {
  const setarch = spawnSync('setarch', ['--help'], { encoding: 'utf8' }).status === 0;
  const valgrind = ['valgrind', '--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, ...FLAGS, script];
  const [cmd, ...args] = setarch ? ['setarch', '-R', ...valgrind] : valgrind;
  const r = spawnSync(cmd, args, { cwd: REPO_ROOT, encoding: 'utf8', env: process.env });
  const m = /refs:\s+([\d,]+)/.exec(r.stderr ?? '');
  if (r.status !== 0 || !m) throw new Error(`callgrind of ${script} failed: ${(r.stderr || '').trim().split('\n').slice(-4).join(' | ')}`);
  return Number(m[1].replace(/,/g, ''));
}

function main(): void {
  if (spawnSync('valgrind', ['--version'], { encoding: 'utf8' }).status !== 0) {
    console.error('bench/import-instructions: valgrind is not installed (apt-get install valgrind)');
    process.exit(1);
  }
  const gpu = process.argv.includes('--gpu');
  const dir = join(REPO_ROOT, 'bench', '.build', 'instructions');
  mkdirSync(dir, { recursive: true });
  const cases = importCases(gpu).filter((c) => ['koffi', 'koffi-native', 'driver', 'objects'].includes(c.name));
  const rows = cases.map((c) => {
    // a file in the repository, so that `require('koffi')` resolves as in bench/import.ts's spawns
    const script = join(dir, `${c.name}.js`);
    writeFileSync(script, `${c.setup ?? ''}\ntry { (() => { ${c.timed} })(); } catch {}\n`);
    const warm = spawnSync(process.execPath, [...FLAGS, script], { cwd: REPO_ROOT, encoding: 'utf8' }); // writes the code cache
    if (warm.status !== 0) throw new Error(`${c.name}: ${warm.stderr}`);
    const counts = Array.from({ length: RUNS }, () => instructions(script));
    return { name: c.name, what: c.what, counts, median: median(counts) };
  });
  const koffi = rows.find((r) => r.name === 'koffi')!.median;
  const M = (n: number) => `${(n / 1e6).toFixed(1)}M`;
  console.log(`import + first call, instructions (callgrind; node ${process.version} ${FLAGS.join(' ')}; median of ${RUNS}; ${gpu ? 'first calls load libcuda' : 'no libcuda: the driver and objects first calls fail fast'}):`);
  for (const r of rows) {
    const spread = `${M(Math.min(...r.counts))}..${M(Math.max(...r.counts))}`;
    console.log(`  ${r.name.padEnd(12)} ${M(r.median).padStart(8)}  ${r.name === 'koffi' ? '         ' : `${r.median >= koffi ? '+' : '-'}${M(Math.abs(r.median - koffi))}`.padStart(9)}  [${spread}]  ${r.what}`);
  }
  if (!existsSync(join(REPO_ROOT, 'bench', 'results'))) mkdirSync(join(REPO_ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(REPO_ROOT, 'bench', 'results', 'import-instructions.json'), JSON.stringify({ node: process.version, flags: FLAGS, gpu, rows }, null, 2));
}

if (require.main === module) main();
