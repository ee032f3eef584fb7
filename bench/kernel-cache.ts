// The on-disk kernel cache (issue 26 §5): `new Program(SAXPY).compile()` of the bench's small kernel in a
// fresh process with an empty cache (NVRTC compiles: ~17 ms on the H200), then in another fresh process with
// the entry the first left (target: ≤ 1 ms in the built tree), and with CUDA_TS_CACHE=0. Each figure is the
// median over ROUNDS such rounds, timed inside the child around the constructor and compile(), after the
// import, the primary context and the first read of `Program`. Nothing is loaded beforehand: loading
// libnvrtc, when compile() needs it, is on the clock; a hit needs none (the key names NVRTC by its file), so
// the child says whether it mapped one and times loading it afterwards. Modes: `built`, the objects layer as
// `npm run build` makes it (what users run; see buildLikeDist), and `tsx`, the TypeScript sources through
// scripts/run-ts.cjs. With --stand-in, libcuda and libnvrtc are bench/native/fake-cuda.c (no GPU needed;
// its NVRTC "compiles" for FAKE_NVRTC_COMPILE_MS, default 15).
//   npx tsx bench/kernel-cache.ts [--stand-in]     ROUNDS=5; MODES=built,tsx; OUT=dir writes kernel-cache.json there
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from './common';
import { SAXPY } from './gpu-common';

const ROOT = join(__dirname, '..');
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const MODES = (process.env.MODES ?? 'built,tsx').split(',');
const STAND_IN = process.argv.includes('--stand-in');

/** The child (CommonJS, requiring the objects layer from `entry`): one compile, printed as { ms, fromCache, cubin, nvrtcLoaded, programMs, loadMs }. */
function childSource(entry: string): string {
  // `Program` is read before the timer: in the built package that first read loads program.js and its imports
  return `
const { readFileSync } = require('node:fs');
const cuda = require(${JSON.stringify(entry)});
cuda.Device.get(0).setCurrent();
const t0 = performance.now();
const { Program } = cuda;
const programMs = performance.now() - t0;
const t = performance.now();
const p = new Program(${JSON.stringify(SAXPY)}, { name: 'saxpy.cu' }).compile();
const ms = performance.now() - t;
const result = { ms, fromCache: p.fromCache, cubin: p.cubin.byteLength, programMs };
p.close();
result.nvrtcLoaded = /\\/libnvrtc\\.so/.test(readFileSync('/proc/self/maps', 'utf8'));
const t1 = performance.now();
Program.version();
result.loadMs = performance.now() - t1;
process.stdout.write(JSON.stringify(result));
`;
}

interface ChildRun {
  ms: number;
  loadMs: number;
  fromCache: boolean;
  cubin: number;
  nvrtcLoaded: boolean;
  programMs: number;
}

/** Runs the child `file` (through scripts/run-ts.cjs when `viaTsx`) in a fresh process with `env` added. */
function runChild(file: string, viaTsx: boolean, env: Record<string, string>): ChildRun {
  const args = viaTsx ? [join(ROOT, 'scripts', 'run-ts.cjs'), file] : [file];
  // NODE_PATH: the built tree lives outside the repository and requires koffi
  const r = spawnSync(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (r.status !== 0) throw new Error(`child exited ${r.status}: ${r.stderr.slice(-1500)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

/** The .ts files under `dir` (scripts/cjs-tree's walk; required here, as it loads TypeScript). */
function tsFiles(dir: string): string[] {
  return [...(require('../scripts/cjs-tree') as typeof import('../scripts/cjs-tree')).tsFiles(dir)];
}

/**
 * The objects layer as users run it (dist/: CommonJS, `npm run build`) under `dir`; returns its entry. src/ and
 * support/ are TypeScript's own emit with tsconfig.build.json's options, bundled with scripts/bundle.ts (one
 * file and a private V8 code cache per entry: point CUDA_TS_CODE_CACHE at it). generated/ (61 MB) is esbuild's
 * emit and left unbundled: the hit runs none of it, and its import is not timed.
 */
function buildLikeDist(dir: string): string {
  const esbuild = require('esbuild') as typeof import('esbuild');
  const { buildCjsTree } = require('../scripts/cjs-tree') as typeof import('../scripts/cjs-tree');
  const { bundleTree, distEntries } = require('../scripts/bundle') as typeof import('../scripts/bundle');
  buildCjsTree(dir, ['src', 'support'], { removeComments: true });
  const common = { outdir: dir, outbase: ROOT, format: 'cjs', platform: 'node', target: 'node20', legalComments: 'none', logLevel: 'error' } as const;
  esbuild.buildSync({ entryPoints: tsFiles(join(ROOT, 'generated')), ...common });
  bundleTree(
    dir,
    distEntries(dir).filter((s) => !s.entry.startsWith('generated/')),
  );
  return join(dir, 'src', 'index.js');
}

/** libcuda.so.1 and libnvrtc.so.13 built from bench/native/fake-cuda.c into `dir`, as the variables that name them. */
function standIns(dir: string): Record<string, string> {
  const src = join(ROOT, 'bench', 'native', 'fake-cuda.c');
  const libs = { CUDA_TS_DRIVER_LIBRARY: ['FAKE_DRIVER', 'libcuda.so.1'], CUDA_TS_NVRTC_LIBRARY: ['FAKE_NVRTC', 'libnvrtc.so.13'] };
  return Object.fromEntries(
    Object.entries(libs).map(([env, [def, name]]) => {
      const r = spawnSync('gcc', ['-O2', '-shared', '-fPIC', `-D${def}`, '-o', join(dir, name), src], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`gcc failed: ${r.stderr}`);
      return [env, join(dir, name)];
    }),
  );
}

/** ROUNDS of miss, hit and off in fresh processes of one mode; medians in ms. */
function measure(dir: string, mode: string, entry: string, base: Record<string, string>): Record<string, number | boolean> {
  const file = join(dir, `child-${mode}.cjs`);
  writeFileSync(file, childSource(entry));
  const rows: Record<string, number[]> = { miss: [], hit: [], off: [], load: [], program: [] };
  let hitLoadsNvrtc = false;
  for (let r = 0; r < ROUNDS; r++) {
    // the built tree's code cache in a folder of its own, written by the first process
    const env = { ...base, CUDA_TS_CACHE_DIR: join(dir, `cache-${mode}-${r}`), CUDA_TS_CODE_CACHE: join(dir, `v8-${mode}`) };
    const first = runChild(file, mode === 'tsx', env);
    const second = runChild(file, mode === 'tsx', env);
    if (first.fromCache || !second.fromCache || first.cubin !== second.cubin)
      throw new Error(`${mode} round ${r}: expected a miss then a hit of the same CUBIN, got ${JSON.stringify([first, second])}`);
    rows.miss.push(first.ms);
    rows.hit.push(second.ms);
    rows.load.push(second.loadMs);
    rows.program.push(second.programMs);
    hitLoadsNvrtc ||= second.nvrtcLoaded;
    rows.off.push(runChild(file, mode === 'tsx', { ...env, CUDA_TS_CACHE: '0' }).ms);
  }
  const [missMs, hitMs, offMs, nvrtcLoadMs, programMs] = ['miss', 'hit', 'off', 'load', 'program'].map((k) => median(rows[k]));
  return { missMs, hitMs, offMs, nvrtcLoadMs, programMs, hitLoadsNvrtc };
}

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-kc-bench-'));
  const results: Record<string, Record<string, number | boolean>> = {};
  try {
    const base = STAND_IN ? standIns(dir) : {};
    for (const mode of MODES) {
      if (mode !== 'built' && mode !== 'tsx') throw new RangeError(`MODES: 'built' or 'tsx', got '${mode}'`);
      const entry = mode === 'tsx' ? join(ROOT, 'src', 'index.ts') : (mkdirSync(join(dir, 'js')), buildLikeDist(join(dir, 'js')));
      results[mode] = measure(dir, mode, entry, base);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const ms = (x: number | boolean) => `${(x as number).toFixed(2)} ms`;
  console.log(
    `kernel cache, SAXPY, median of ${ROUNDS} fresh processes each (node ${process.versions.node}${STAND_IN ? ', stand-in libcuda and libnvrtc' : ''})`,
  );
  for (const [mode, r] of Object.entries(results)) {
    const target = mode === 'built' ? ` (target ≤ 1 ms: ${(r.hitMs as number) <= 1 ? 'MET' : 'NOT MET'})` : '';
    console.log(
      `  ${mode.padEnd(5)} miss ${ms(r.missMs)} | hit ${ms(r.hitMs)}${target}, libnvrtc ${r.hitLoadsNvrtc ? 'LOADED' : 'not loaded'} | CUDA_TS_CACHE=0 ${ms(r.offMs)} | ` +
        `loading libnvrtc, which the hit spared, ${ms(r.nvrtcLoadMs)} | first read of Program (untimed above) ${ms(r.programMs)}`,
    );
  }
  if (process.env.OUT) writeFileSync(join(process.env.OUT, 'kernel-cache.json'), JSON.stringify({ rounds: ROUNDS, standIn: STAND_IN, results }, null, 1));
}

main();
