// The on-disk kernel cache (issue 26 §5): `new Program(SAXPY).compile()` of the bench's small kernel
// in a fresh process with an empty cache (NVRTC compiles: ~17 ms on the H200), then in another fresh
// process with the entry the first left (target: ≤ 1 ms), and the same with CUDA_TS_CACHE=0. Each
// figure is the median over ROUNDS pairs of processes, timed inside the child around the constructor
// and compile(), after the import and the device's primary context (cuInit), which any CUDA program
// pays. Nothing is loaded beforehand: loading libnvrtc, when compile() needs it, is on the clock. A
// hit needs no libnvrtc (the key names NVRTC by its file: src/library-file.ts); the hit process says
// whether it mapped one, and loads it after the timed region to show what the hit spared.
// Needs a GPU (the default arch is the device's). Without one: bench/kernel-cache-cpu.ts.
//   npx tsx bench/kernel-cache.ts          ROUNDS=5; OUT=dir writes kernel-cache.json there
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileChildSource } from './kernel-cache-child';

const ROOT = join(__dirname, '..');
const ROUNDS = Number(process.env.ROUNDS ?? 5);

// loads libnvrtc after compile() if compile() did not: what a hit spares (loadMs)
const CHILD = compileChildSource(join(ROOT, 'src', 'index.ts'), { preload: false, nvrtcMapped: '/\\/libnvrtc\\.so/.test(maps)', timeLoad: true });

/** One child process compiling SAXPY with `env`; its compile time and whether the cache answered. */
function compileOnce(dir: string, env: Record<string, string>): { ms: number; loadMs: number; fromCache: boolean; cubin: number; nvrtcLoaded: boolean } {
  const file = join(dir, 'child.cjs');
  writeFileSync(file, CHILD);
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'run-ts.cjs'), file], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`child exited ${r.status}: ${r.stderr.slice(-1500)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-kc-bench-'));
  const miss: number[] = [];
  const hit: number[] = [];
  const off: number[] = [];
  const load: number[] = [];
  let hitLoadsNvrtc = false;
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const cache = join(dir, `cache${r}`);
      const first = compileOnce(dir, { CUDA_TS_CACHE_DIR: cache });
      const second = compileOnce(dir, { CUDA_TS_CACHE_DIR: cache });
      if (first.fromCache || !second.fromCache || first.cubin !== second.cubin) throw new Error(`round ${r}: expected a miss then a hit of the same CUBIN, got ${JSON.stringify([first, second])}`);
      miss.push(first.ms);
      hit.push(second.ms);
      load.push(second.loadMs);
      hitLoadsNvrtc ||= second.nvrtcLoaded;
      off.push(compileOnce(dir, { CUDA_TS_CACHE_DIR: cache, CUDA_TS_CACHE: '0' }).ms);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const result = { missMs: median(miss), hitMs: median(hit), offMs: median(off), nvrtcLoadMs: median(load), hitLoadsNvrtc, rounds: ROUNDS };
  console.log(`kernel cache, SAXPY, median of ${ROUNDS} fresh processes each (runtime ${process.versions.bun ? 'bun' : process.versions.deno ? 'deno' : 'node'})`);
  console.log(`  first process (compiles):        ${result.missMs.toFixed(2)} ms`);
  console.log(`  second process (cache hit):      ${result.hitMs.toFixed(2)} ms   target ≤ 1 ms: ${result.hitMs <= 1 ? 'MET' : 'NOT MET'}; libnvrtc ${hitLoadsNvrtc ? 'LOADED' : 'not loaded'}`);
  console.log(`  CUDA_TS_CACHE=0 (compiles):      ${result.offMs.toFixed(2)} ms`);
  console.log(`  loading libnvrtc, which the hit did without (timed after it): ${result.nvrtcLoadMs.toFixed(2)} ms`);
  if (process.env.OUT) writeFileSync(join(process.env.OUT, 'kernel-cache.json'), JSON.stringify(result, null, 1));
}

main();
