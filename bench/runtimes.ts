// Trivial typed calls under Node, Bun and Deno, on the CPU machine too (run by test/gpu/run-all.sh):
// libcudart's cudaRuntimeGetVersion (no GPU needed) and, where a driver answers, cuCtxGetCurrent and
// cuDeviceGetAttribute; typed through the runtime's default FFI and forced onto koffi, and the bare call
// through koffi and through the runtime's own FFI. Each runtime runs the same CommonJS copy of the tree
// (scripts/cjs-tree.ts) in its own process; ns per call, median of REPEATS rounds of N calls.
//   npx tsx bench/runtimes.ts            BUN=… DENO=… (bench/runtime-binaries.ts); OUT=dir writes runtimes.json
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCjsTree } from '../scripts/cjs-tree';
import { findRuntimeBinary } from './runtime-binaries';

const N = Number(process.env.BENCH_N ?? 500_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 7);

/** The body each runtime runs: prints one JSON object, row → ns per call. */
const BODY = `
const N = ${N}, REPEATS = ${REPEATS};
const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
function time(f) {
  const rounds = [];
  for (let r = 0; r < REPEATS + 1; r++) {
    const t = performance.now();
    for (let i = 0; i < N; i++) f();
    if (r > 0) rounds.push(((performance.now() - t) * 1e6) / N); // the first round warms up
  }
  return +median(rounds).toFixed(1);
}
const rows = {};
const rt = require('./generated/13.0/runtime');
if (rt.cudaRuntimeGetVersion() !== 13000 && rt.cudaRuntimeGetVersion() < 12000) throw new Error('unexpected runtime version');
rows['typed, ' + (process.env.CUDA_TS_FFI || 'default FFI')] = time(() => rt.cudaRuntimeGetVersion());
rows.backend = rt.binder.backendOf('cudaRuntimeGetVersion');
const path = rt.binder.spec.sonames[0];
const out = new Int32Array(1);
if (!process.env.CUDA_TS_FFI) {
  const { koffi } = require('./support/koffi');
  const k = koffi.load(path).func('cudaRuntimeGetVersion', 'int', ['void *']);
  rows['raw koffi'] = time(() => k(out));
  if (process.versions.bun) {
    const f = require('bun:ffi').dlopen(path, { cudaRuntimeGetVersion: { args: ['ptr'], returns: 'i32' } }).symbols.cudaRuntimeGetVersion;
    rows['raw runtime FFI'] = time(() => f(out));
  } else if (typeof Deno !== 'undefined') {
    const f = Deno.dlopen(path, { cudaRuntimeGetVersion: { parameters: ['buffer'], result: 'i32' } }).symbols.cudaRuntimeGetVersion;
    rows['raw runtime FFI'] = time(() => f(out));
  } else {
    const ffi = process.getBuiltinModule && process.getBuiltinModule('node:ffi');
    if (ffi && ffi.DynamicLibrary) {
      const f = new ffi.DynamicLibrary(path).getFunction('cudaRuntimeGetVersion', { arguments: ['pointer'], return: 'int32' });
      rows['raw runtime FFI'] = time(() => f(out));
    }
  }
}
// on a GPU machine: the issue's trivial driver calls, typed, through the same default FFI
let cu;
try {
  cu = require('./generated/13.0/driver');
  cu.cuInit(0);
} catch {
  cu = undefined; // no driver here: the runtime-library rows only
}
if (cu) {
  const dev = cu.cuDeviceGet(0);
  cu.cuCtxSetCurrent(cu.cuDevicePrimaryCtxRetain(dev));
  const attr = cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
  rows['typed cuCtxGetCurrent, ' + (process.env.CUDA_TS_FFI || 'default FFI')] = time(() => cu.cuCtxGetCurrent());
  rows['typed cuDeviceGetAttribute, ' + (process.env.CUDA_TS_FFI || 'default FFI')] = time(() => cu.cuDeviceGetAttribute(attr, dev));
  rows.driverBackends = ['cuCtxGetCurrent', 'cuDeviceGetAttribute'].map((n) => n + ': ' + JSON.stringify(cu.binder.backendOf(n)));
}
process.stdout.write(JSON.stringify(rows));
`;

/** The runtimes found: name → command prefix. */
function runtimes(): Record<string, string[]> {
  const found: Record<string, string[]> = { Node: [process.execPath] };
  const bun = findRuntimeBinary('bun');
  if ('path' in bun) found.Bun = [bun.path];
  const deno = findRuntimeBinary('deno');
  if ('path' in deno) found.Deno = [deno.path, 'run', '--allow-ffi', '--allow-read', '--allow-env'];
  return found;
}

/** Runs the body under one runtime (with `ffi` as CUDA_TS_FFI, or the default); its rows, or the error. */
function measure(cmd: string[], dir: string, ffi?: string): Record<string, unknown> {
  const env = { ...process.env };
  delete env.CUDA_TS_FFI;
  if (ffi) env.CUDA_TS_FFI = ffi;
  const r = spawnSync(cmd[0], [...cmd.slice(1), join(dir, 'bench-body.js')], { cwd: dir, env, encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) return { error: (r.stderr || r.stdout || `exit ${r.status}`).split('\n').find((l) => l.trim()) ?? 'failed' };
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

function printTable(results: Record<string, Record<string, unknown>>): void {
  const columns = Object.keys(results);
  const rows = [...new Set(columns.flatMap((c) => Object.keys(results[c])))].filter((r) => !['backend', 'driverBackends', 'error'].includes(r));
  const cell = (v: unknown) => (typeof v === 'number' ? `${v} ns` : '—');
  console.log(`cudaRuntimeGetVersion, ns per call (median of ${REPEATS} × ${N}; this machine)`);
  console.log(['row'.padEnd(24), ...columns.map((c) => c.padStart(12))].join(''));
  for (const row of rows) console.log([row.padEnd(24), ...columns.map((c) => cell(results[c][row]).padStart(12))].join(''));
  for (const c of columns) {
    const b = results[c].backend as { backend?: string; reason?: string } | undefined;
    if (results[c].error) console.log(`${c}: ${String(results[c].error)}`);
    else
      console.log(
        `${c}: default typed call bound through ${b?.backend ?? '?'}${b?.reason ? ` (${b.reason})` : ''}${results[c].driverBackends ? `; ${(results[c].driverBackends as string[]).join(', ')}` : ''}`,
      );
  }
}

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-runtimes-'));
  try {
    buildCjsTree(dir, ['support', 'generated/13.0/runtime', 'generated/13.0/driver']);
    writeFileSync(join(dir, 'bench-body.js'), BODY);
    const results: Record<string, Record<string, unknown>> = {};
    for (const [name, cmd] of Object.entries(runtimes())) {
      results[name] = measure(cmd, dir);
      if (!results[name].error)
        Object.assign(results[name], { ...measure(cmd, dir, 'koffi'), backend: results[name].backend, driverBackends: results[name].driverBackends });
    }
    printTable(results);
    if (process.env.OUT) writeFileSync(join(process.env.OUT, 'runtimes.json'), JSON.stringify(results, null, 1));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) main();
