// Where the gap between C and cuda-ts goes under Bun and Deno (issue 26 §2), on the GPU: each runtime's
// child (bench/runtime-child.ts, CommonJS copy of the tree) with BENCH_CHILD_BARE=1, so that one process
// times, interleaved, C (libbench.so), the runtime's own FFI with nothing of cuda-ts (bench/ffi-bare.ts),
// and cuda-ts's raw, typed and objects layers. Prints ns per operation, each column's ratio to C and the
// min-max of its per-repetition ratios. BENCH_PIN as in bench/c-floor-pin.ts.
//   npx tsx bench/runtimes-bare.ts            RUNTIMES=bun,deno (default) BUN=… DENO=… BENCH_REPS=…
//   BENCH_CHILD_ROWS=cuCtxGetCurrent,…        (default: the trivial calls and launches of 0 and 4 args)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildNative } from './c-floor';
import { BENCH_DIR, isMeasured, type Row } from './common';
import { ratioStats } from './interleave';
import type { ChildResult } from './runtime-child';
import { childCommand, childTree } from './runtimes-gpu';
import { findRuntimeBinary } from './runtime-binaries';
import { floorRecordWords, type FloorRecord } from './c-floor-pin';

const COLUMNS = ['native-c-inproc', 'ffi-bare', 'cuda-ts-raw', 'cuda-ts-typed', 'cuda-ts-objects'];
const ROWS = 'cuCtxGetCurrent,cuDeviceGetAttribute,launch_0args,launch_4args';

function median(row: unknown): number | undefined {
  return row && typeof row === 'object' && 'median' in row ? (row as { median: number }).median : undefined;
}

/** The min-max of a row's per-repetition ratios to C's (repetitions are interleaved: the same moments). */
function repSpread(row: Row | undefined, c: Row | undefined): string {
  if (!isMeasured(row) || !isMeasured(c) || !row.reps.length || row.reps.length !== c.reps.length) return '';
  const { min, max } = ratioStats(row.reps, c.reps);
  return ` [${min.toFixed(2)}-${max.toFixed(2)}]`;
}

function main(): void {
  const lib = buildNative(mkdtempSync(join(tmpdir(), 'cuda-ts-bench-bare-'))).lib; // bench.c's libbench.so, as c-floor builds it
  const dir = childTree();
  for (const rt of (process.env.RUNTIMES ?? 'bun,deno').split(',') as ('bun' | 'deno')[]) {
    const bin = findRuntimeBinary(rt);
    if ('missing' in bin) {
      console.log(`${rt}: skipped (${bin.missing})`);
      continue;
    }
    const out = join(mkdtempSync(join(tmpdir(), 'cuda-ts-bench-')), `${rt}.json`);
    const env: NodeJS.ProcessEnv = {
      ...process.env, BENCH_CHILD_OUT: out, BENCH_CHILD_BARE: '1', BENCH_NATIVE_LIB: lib,
      BENCH_PTX: process.env.BENCH_PTX ?? join(BENCH_DIR, 'native', 'kernels.ptx'), BENCH_CHILD_ROWS: process.env.BENCH_CHILD_ROWS ?? ROWS,
    };
    delete env.CUDA_TS_FFI;
    const [cmd, ...args] = childCommand(rt, bin.path, join(dir, 'bench', 'runtime-child.js'));
    const r = spawnSync(cmd, args, { cwd: dir, env, encoding: 'utf8', timeout: 300_000 });
    if (!existsSync(out)) {
      console.log(`${rt}: no result (exit ${r.status}): ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')}`);
      continue;
    }
    const res = JSON.parse(readFileSync(out, 'utf8')) as ChildResult;
    console.log(`\n${rt} ${res.version}  (${String(res.meta.ffi_bare ?? res.notes['ffi-bare'] ?? '')})${res.skipped ? `  skipped: ${res.skipped}` : ''}`);
    for (const [impl, why] of Object.entries(res.notes)) console.log(`  ${impl}: ${why}`);
    console.log(`  ${floorRecordWords(res.meta.floor as FloorRecord | undefined)}`);
    console.log(`  ${'row'.padEnd(22)}${COLUMNS.map((c) => c.replace('cuda-ts-', '').replace('native-c-inproc', 'C').padStart(30)).join('')}`);
    for (const row of (env.BENCH_CHILD_ROWS ?? ROWS).split(',')) {
      const cRow = res.rows['native-c-inproc']?.[row];
      const c = median(cRow);
      const cells = COLUMNS.map((impl) => {
        const m = median(res.rows[impl]?.[row]);
        if (m === undefined) return '—'.padStart(30);
        return `${m.toFixed(1)}${c ? ` (${(m / c).toFixed(3)}×)${impl === 'native-c-inproc' ? '' : repSpread(res.rows[impl]?.[row], cRow)}` : ''}`.padStart(30);
      });
      console.log(`  ${row.padEnd(22)}${cells.join('')}`);
    }
  }
}

main();
