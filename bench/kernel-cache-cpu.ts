// The kernel cache's hit path without a GPU (issue 26 §5): bench/kernel-cache.ts's measurement, run
// against stand-in libcuda and libnvrtc built from bench/native/fake-cuda.c, so everything else is the
// real code (koffi, the binder, the door, Program.compile, src/kernel-cache.ts). Each figure is the
// median over ROUNDS fresh processes, timed inside the child around `new Program(SAXPY).compile()`
// after `Device.get(0).setCurrent()` and the first read of `Program` (kernel-cache-child.ts):
//   miss     empty cache: the fake NVRTC "compiles" (sleeps FAKE_NVRTC_COMPILE_MS, default 15)
//   hit      the entry the miss left; nothing loaded beforehand: what a user's second process waits for
//   hit, nvrtc preloaded   Program.version() first, outside the timer
//   off      CUDA_TS_CACHE=0
// and whether libnvrtc was mapped into the hit process at all (/proc/self/maps). Modes: `built` (the
// objects layer as `npm run build` makes it: TypeScript's emit, bundled, with the bundles' V8 code
// cache, which the first process writes; see buildLikeDist; also the time of the first read of
// `Program`, which loads program.js and what it imports), `tsx` (scripts/run-ts.cjs, as
// bench/kernel-cache.ts's tsx row: tsx transpiles on first require), both with the stand-ins named by
// CUDA_TS_*_LIBRARY; `search`: built, libnvrtc found by the loader's search (LD_LIBRARY_PATH), as on a
// machine where nothing names it; `esbuild` (not run by default): esbuild's emit, unbundled, this
// bench's `built` until 2026-12-01. Needs gcc and Linux.
//   npx tsx bench/kernel-cache-cpu.ts       ROUNDS=9; MODES=built,tsx,search; OUT=dir writes kernel-cache-cpu.json
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { median } from './common';
import { buildLikeDist, compileChildSource, runCompileChild, transpileWithEsbuild, type ChildRun } from './kernel-cache-child';

const ROOT = join(__dirname, '..');
const ROUNDS = Number(process.env.ROUNDS ?? 9);
const MODES = (process.env.MODES ?? 'built,tsx,search').split(',');

/** Builds the stand-in libraries into `dir`; returns their paths. */
function buildFakes(dir: string): { driver: string; nvrtc: string } {
  const src = join(ROOT, 'bench', 'native', 'fake-cuda.c');
  const driver = join(dir, 'libcuda.so.1');
  const nvrtc = join(dir, 'libnvrtc.so.13');
  for (const [def, out] of [
    ['FAKE_DRIVER', driver],
    ['FAKE_NVRTC', nvrtc],
  ]) {
    const r = spawnSync('gcc', ['-O2', '-shared', '-fPIC', `-D${def}`, '-o', out, src], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`gcc failed: ${r.stderr}`);
  }
  return { driver, nvrtc };
}

const child = (entry: string, nvrtcPath: string, preload: boolean): string =>
  compileChildSource(entry, { preload, nvrtcMapped: `maps.includes(${JSON.stringify(nvrtcPath)})`, timeLoad: false });

const runChild = (file: string, viaTsx: boolean, env: Record<string, string>): ChildRun => runCompileChild(file, viaTsx, env, 60_000);

/** ROUNDS of miss, hit, preloaded hit and off, each in a fresh process; medians in ms. */
function measure(work: string, entry: string, mode: string, libs: { driver: string; nvrtc: string }): Record<string, number | boolean> {
  const viaTsx = mode === 'tsx';
  const plain = join(work, 'child.cjs');
  const preloaded = join(work, 'child-preload.cjs');
  writeFileSync(plain, child(entry, libs.nvrtc, false));
  writeFileSync(preloaded, child(entry, libs.nvrtc, true));
  // the built tree's code cache: its own folder per mode, written by the first process
  const base: Record<string, string> = { CUDA_TS_DRIVER_LIBRARY: libs.driver, CUDA_TS_CODE_CACHE: join(work, `v8-${mode}`) };
  if (mode === 'search') base.LD_LIBRARY_PATH = dirname(libs.nvrtc);
  else base.CUDA_TS_NVRTC_LIBRARY = libs.nvrtc;
  const rows: Record<string, number[]> = { miss: [], hit: [], hitPreloaded: [], off: [], program: [] };
  let hitLoadsNvrtc = false;
  for (let r = 0; r < ROUNDS; r++) {
    const env = { ...base, CUDA_TS_CACHE_DIR: join(work, `cache-${mode}-${r}`) };
    const first = runChild(plain, viaTsx, env);
    const second = runChild(plain, viaTsx, env);
    if (first.fromCache || !second.fromCache || first.cubin !== second.cubin)
      throw new Error(`round ${r}: expected a miss then a hit of the same CUBIN, got ${JSON.stringify([first, second])}`);
    hitLoadsNvrtc ||= second.nvrtcLoaded;
    rows.miss.push(first.ms);
    rows.hit.push(second.ms);
    rows.program.push(second.programMs);
    rows.hitPreloaded.push(runChild(preloaded, viaTsx, env).ms);
    rows.off.push(runChild(plain, viaTsx, { ...env, CUDA_TS_CACHE: '0' }).ms);
  }
  return {
    missMs: median(rows.miss),
    hitMs: median(rows.hit),
    hitPreloadedMs: median(rows.hitPreloaded),
    offMs: median(rows.off),
    programMs: median(rows.program),
    hitLoadsNvrtc,
  };
}

function main(): void {
  const work = mkdtempSync(join(tmpdir(), 'cuda-ts-kc-cpu-'));
  const results: Record<string, Record<string, number | boolean>> = {};
  try {
    const libs = buildFakes(work);
    let built: string | undefined;
    for (const mode of MODES) {
      if (!['built', 'tsx', 'search', 'esbuild'].includes(mode)) throw new RangeError(`MODES: 'built', 'tsx', 'search' or 'esbuild', got '${mode}'`);
      let entry = join(ROOT, 'src', 'index.ts');
      if (mode === 'built' || mode === 'search') entry = built ??= (mkdirSync(join(work, 'js')), buildLikeDist(join(work, 'js')));
      else if (mode === 'esbuild') entry = (mkdirSync(join(work, 'esbuild')), transpileWithEsbuild(join(work, 'esbuild')));
      results[mode] = measure(work, entry, mode, libs);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  console.log(`kernel cache hit path, stand-in libcuda/libnvrtc, SAXPY, median of ${ROUNDS} fresh processes (node ${process.versions.node})`);
  for (const [mode, r] of Object.entries(results)) {
    const program = (r.programMs as number) >= 0.05 ? ` | first read of Program ${(r.programMs as number).toFixed(2)} ms (untimed above)` : '';
    console.log(
      `  ${mode.padEnd(7)} miss ${(r.missMs as number).toFixed(2)} ms | hit ${(r.hitMs as number).toFixed(2)} ms (libnvrtc ${r.hitLoadsNvrtc ? 'loaded' : 'not loaded'}) | hit, nvrtc preloaded ${(r.hitPreloadedMs as number).toFixed(2)} ms | off ${(r.offMs as number).toFixed(2)} ms${program}`,
    );
  }
  if (process.env.OUT) writeFileSync(join(process.env.OUT, 'kernel-cache-cpu.json'), JSON.stringify({ rounds: ROUNDS, results }, null, 1));
}

main();
