// The GPU call and launch rows under Bun and Deno, for `npm run bench` (issue 26 §2, §3): builds the
// CommonJS copy of the tree once (scripts/cjs-tree.ts: Deno cannot run the TypeScript sources) and runs
// bench/runtime-child.ts in it under each runtime, in a process of its own, with C (libbench.so) measured
// in that same process. Returns the child's implementations with the runtime in their names
// (cuda-ts-typed-bun, native-c-inproc-deno, …); throws with the reason where the runtime is missing or
// its child measured nothing (no GPU, no driver), which bench/run.ts reports as the step's skip. The child
// inherits BENCH_PIN and BENCH_FLOOR_WARMUP (the floor method bench/run.ts picked; bench/floor.ts).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCjsTree } from '../scripts/cjs-tree';
import { BENCH_DIR, type ImplResult } from './common';
import { findRuntimeBinary } from './runtime-binaries';
import { CHILD_IMPLS, type ChildRuntime, runtimeImpl } from './runtimes-report';
import type { ChildResult } from './runtime-child';

/** How bench/run.ts runs a child: its exit code and output (stderr is passed through as progress). */
export type Spawn = (
  cmd: string,
  args: string[],
  timeoutS: number,
  env: NodeJS.ProcessEnv,
  cwd: string,
) => Promise<{ code: number | null; stdout: string; stderr: string }>;

/** The folders and bench files the child needs, in the CommonJS copy. */
const TREE_ROOTS = [
  'support',
  'src',
  ...['driver', 'nvrtc', 'nvjitlink', 'nccl', 'nvml'].map((m) => `generated/13.0/${m}`),
  ...['runtime-child', 'runtimes-report', 'common', 'interleave', 'gpu-common', 'gpu-passes', 'gpu-objects', 'floor'].map((f) => `bench/${f}.ts`),
];

/** Seconds a child may run (at BENCH_SCALE=1 it takes well under a minute on the H200). */
const CHILD_TIMEOUT_S = 180;

let tree: string | undefined;
/** The CommonJS copy, built on first use (a few seconds), removed at exit. */
export function childTree(): string {
  if (tree && existsSync(join(tree, 'bench', 'runtime-child.js'))) return tree;
  const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-bench-cjs-'));
  buildCjsTree(dir, TREE_ROOTS);
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  tree = dir;
  return dir;
}

/** The command line that runs `script` under `rt` (Deno: every permission; what it measures is the FFI, not them). */
export function childCommand(rt: ChildRuntime, binary: string, script: string): string[] {
  return rt === 'deno' ? [binary, 'run', '--allow-all', script] : [binary, script];
}

function tail(text: string, n = 3): string {
  return text.trim().split('\n').slice(-n).join(' | ').slice(0, 600);
}

/** A child's result as the bench's implementations, the runtime in their names. */
export function childImpls(rt: ChildRuntime, res: ChildResult): ImplResult[] {
  const how = `${rt} ${res.version}, same process as C (libbench.so through ${String(res.meta.native_c_loaded_by ?? '?')})`;
  return CHILD_IMPLS.map((impl) => {
    const name = runtimeImpl(impl, rt);
    if (res.rows[impl]) return { impl: name, meta: { ...res.meta, how }, rows: res.rows[impl] };
    return { impl: name, meta: { how }, rows: {}, skipped: res.notes[impl] ?? res.skipped ?? 'not measured' };
  });
}

/** Runs the rows under `rt`; its implementations, or throws with why there are none. */
export async function runtimeGpu(rt: ChildRuntime, spawn: Spawn, nativeLib: string | undefined): Promise<ImplResult[]> {
  const bin = findRuntimeBinary(rt);
  if ('missing' in bin) throw new Error(bin.missing);
  const dir = childTree();
  const out = join(mkdtempSync(join(tmpdir(), 'cuda-ts-bench-')), `${rt}.json`);
  const env: NodeJS.ProcessEnv = { ...process.env, BENCH_CHILD_OUT: out, BENCH_PTX: process.env.BENCH_PTX ?? join(BENCH_DIR, 'native', 'kernels.ptx') };
  delete env.CUDA_TS_FFI; // each runtime's default FFI
  if (nativeLib) env.BENCH_NATIVE_LIB = nativeLib;
  const [cmd, ...args] = childCommand(rt, bin.path, join(dir, 'bench', 'runtime-child.js'));
  const r = await spawn(cmd, args, CHILD_TIMEOUT_S, env, dir);
  if (!existsSync(out)) throw new Error(`${rt} child exited ${r.code} without a result: ${tail(r.stderr || r.stdout)}`);
  const res = JSON.parse(readFileSync(out, 'utf8')) as ChildResult;
  if (res.skipped && !Object.keys(res.rows).length) throw new Error(res.skipped);
  return childImpls(rt, res);
}

/** Placeholders for a runtime whose step was skipped, so that its columns say why. */
export function skippedImpls(rt: ChildRuntime, why: string): ImplResult[] {
  return CHILD_IMPLS.map((impl) => ({ impl: runtimeImpl(impl, rt), meta: {}, rows: {}, skipped: why }));
}
