// The on-disk kernel cache (issue 26 §5): `new Program(SAXPY).compile()` of the bench's small kernel
// in a fresh process with an empty cache (NVRTC compiles: ~17 ms on the H200), then in another fresh
// process with the entry the first left, and the same with CUDA_TS_CACHE=0. Each figure is the median
// over ROUNDS pairs of processes, timed inside the child around the constructor and compile(), after
// the import, the device's primary context (cuInit), which any CUDA program pays, and the first read
// of `Program` (kernel-cache-child.ts). Nothing is loaded beforehand: loading libnvrtc, when compile()
// needs it, is on the clock. A hit needs no libnvrtc (the key names NVRTC by its file:
// src/library-file.ts); the hit process says whether it mapped one, and loads it after the timed
// region to show what the hit spared.
// Two rows: `built`, the objects layer as `npm run build` makes it (what users run: CommonJS,
// bundled, with the bundles' V8 code cache; see buildLikeDist), THE TARGET ROW (hit ≤ 1 ms), also
// giving the first read of `Program`, which loads program.js and its imports there; and `tsx`, the
// TypeScript sources through scripts/run-ts.cjs (tsx transpiles each file on first require).
// Needs a GPU (the default arch is the device's). Without one: bench/kernel-cache-cpu.ts.
//   npx tsx bench/kernel-cache.ts          ROUNDS=5; MODES=built,tsx; OUT=dir writes kernel-cache.json there
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from './common';
import { buildLikeDist, compileChildSource, runCompileChild, type ChildRun } from './kernel-cache-child';

const ROOT = join(__dirname, '..');
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const MODES = (process.env.MODES ?? 'built,tsx').split(',');

/** One child process compiling SAXPY with `env`; its compile time and whether the cache answered. */
const compileOnce = (file: string, viaTsx: boolean, env: Record<string, string>): ChildRun => runCompileChild(file, viaTsx, env, 120_000);

/** ROUNDS of miss, hit and off in fresh processes of one mode; medians in ms. */
function measure(dir: string, mode: string, entry: string): Record<string, number | boolean> {
  const file = join(dir, `child-${mode}.cjs`);
  // loads libnvrtc after compile() if compile() did not: what a hit spares (loadMs)
  writeFileSync(file, compileChildSource(entry, { preload: false, nvrtcMapped: '/\\/libnvrtc\\.so/.test(maps)', timeLoad: true }));
  const rows: Record<string, number[]> = { miss: [], hit: [], off: [], load: [], program: [] };
  let hitLoadsNvrtc = false;
  for (let r = 0; r < ROUNDS; r++) {
    // the built tree's code cache in a folder of its own, written by the first process
    const env = { CUDA_TS_CACHE_DIR: join(dir, `cache-${mode}-${r}`), CUDA_TS_CODE_CACHE: join(dir, `v8-${mode}`) };
    const first = compileOnce(file, mode === 'tsx', env);
    const second = compileOnce(file, mode === 'tsx', env);
    if (first.fromCache || !second.fromCache || first.cubin !== second.cubin)
      throw new Error(`${mode} round ${r}: expected a miss then a hit of the same CUBIN, got ${JSON.stringify([first, second])}`);
    rows.miss.push(first.ms);
    rows.hit.push(second.ms);
    rows.load.push(second.loadMs!); // the child times the load (timeLoad)
    rows.program.push(second.programMs);
    hitLoadsNvrtc ||= second.nvrtcLoaded;
    rows.off.push(compileOnce(file, mode === 'tsx', { ...env, CUDA_TS_CACHE: '0' }).ms);
  }
  return {
    missMs: median(rows.miss),
    hitMs: median(rows.hit),
    offMs: median(rows.off),
    nvrtcLoadMs: median(rows.load),
    programMs: median(rows.program),
    hitLoadsNvrtc,
  };
}

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-kc-bench-'));
  const results: Record<string, Record<string, number | boolean>> = {};
  try {
    for (const mode of MODES) {
      if (mode !== 'built' && mode !== 'tsx') throw new RangeError(`MODES: 'built' or 'tsx', got '${mode}'`);
      const entry = mode === 'tsx' ? join(ROOT, 'src', 'index.ts') : (mkdirSync(join(dir, 'js')), buildLikeDist(join(dir, 'js')));
      results[mode] = measure(dir, mode, entry);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `kernel cache, SAXPY, median of ${ROUNDS} fresh processes each (runtime ${process.versions.bun ? 'bun' : process.versions.deno ? 'deno' : `node ${process.versions.node}`})`,
  );
  for (const [mode, r] of Object.entries(results)) {
    const hit = r.hitMs as number;
    console.log(`  ${mode}${mode === 'built' ? ' (what users run: the target row)' : ' (TypeScript sources through tsx)'}`);
    console.log(`    first process (compiles):        ${(r.missMs as number).toFixed(2)} ms`);
    console.log(
      `    second process (cache hit):      ${hit.toFixed(2)} ms${mode === 'built' ? `   target ≤ 1 ms: ${hit <= 1 ? 'MET' : 'NOT MET'}` : ''}; libnvrtc ${r.hitLoadsNvrtc ? 'LOADED' : 'not loaded'}`,
    );
    console.log(`    CUDA_TS_CACHE=0 (compiles):      ${(r.offMs as number).toFixed(2)} ms`);
    console.log(`    loading libnvrtc, which the hit did without (timed after it): ${(r.nvrtcLoadMs as number).toFixed(2)} ms`);
    if (mode === 'built') console.log(`    first read of Program (loads program.js and its imports; untimed above): ${(r.programMs as number).toFixed(2)} ms`);
  }
  if (process.env.OUT) writeFileSync(join(process.env.OUT, 'kernel-cache.json'), JSON.stringify({ rounds: ROUNDS, results }, null, 1));
}

main();
