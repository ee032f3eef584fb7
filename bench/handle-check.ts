// What CUDA_TS_CHECK_HANDLES=1 costs per call (issue 25 §6), and that it costs nothing when off.
// On a GPU: the typed driver's cuStreamQuery(stream) and cuCtxGetCurrent(), loaded once without and once
// with the variable (each in its own isolated module copy); elsewhere the same two through libcudart
// (cudaStreamQuery on a declared stream returns an error status at once without a driver, which is
// enough to time the binding). Repetitions interleave the two; each row prints medians and their ratio.
//   npx tsx bench/handle-check.ts [--reps 15] [--calls 200000]
import { performance } from 'node:perf_hooks';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const reps = arg('reps', 15);
const calls = arg('calls', 200_000);

type Call = () => unknown;
interface Variant {
  label: string;
  rows: Record<string, Call>;
}

/** A fresh copy of the generated modules with the variable set (or not) while they load. */
function load(checks: boolean): typeof import('../support') & { rows: Record<string, Call> } {
  for (const key of Object.keys(require.cache)) if (/\/(generated|support)\//.test(key)) delete require.cache[key];
  if (checks) process.env.CUDA_TS_CHECK_HANDLES = '1';
  else delete process.env.CUDA_TS_CHECK_HANDLES;
  const support = require('../support') as typeof import('../support');
  const rows = gpuRows() ?? runtimeRows(support);
  // a first call binds each function now, from this copy's chunks (later, the cache holds the other copy)
  for (const f of Object.values(rows)) f();
  return { ...support, rows };
}

function gpuRows(): Record<string, Call> | undefined {
  try {
    const cu = require('../generated/13.0/driver/raw') as typeof import('../generated/13.0/driver/raw');
    if (cu.cuInit(0) !== 0) return undefined;
    const out = new BigUint64Array(1);
    const dev = new Int32Array(1);
    cu.cuDeviceGet(dev, 0);
    cu.cuDevicePrimaryCtxRetain(out, dev[0]);
    cu.cuCtxSetCurrent(Number(out[0]) as never);
    cu.cuStreamCreate(out, 0);
    const stream = Number(out[0]) as never;
    return { 'cuStreamQuery(stream)': () => cu.cuStreamQuery(stream), 'cuCtxGetCurrent(out)': () => cu.cuCtxGetCurrent(out) };
  } catch {
    return undefined; // no driver here
  }
}

function runtimeRows(support: typeof import('../support')): Record<string, Call> {
  const rt = require('../generated/13.0/runtime/raw') as typeof import('../generated/13.0/runtime/raw');
  const stream = 0x7f0000001000;
  support.registerHandle('CUstream_st', stream);
  const out = new Int32Array(1);
  return { 'cudaStreamQuery(stream)': () => rt.cudaStreamQuery(stream as never), 'cudaRuntimeGetVersion(out)': () => rt.cudaRuntimeGetVersion(out) };
}

function time(f: Call): number {
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) f();
  return ((performance.now() - t0) * 1e6) / calls;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function main(): void {
  const variants: Variant[] = [
    { label: 'off', rows: load(false).rows },
    { label: 'on', rows: load(true).rows },
  ];
  const names = Object.keys(variants[0].rows);
  const samples = new Map<string, number[]>();
  for (let r = 0; r < reps; r++) {
    for (const name of names) {
      for (const v of variants) {
        const key = `${name} ${v.label}`;
        samples.set(key, [...(samples.get(key) ?? []), time(v.rows[name])]);
      }
    }
  }
  for (const name of names) {
    const off = median(samples.get(`${name} off`)!);
    const on = median(samples.get(`${name} on`)!);
    console.log(`${name.padEnd(28)} off ${off.toFixed(1).padStart(7)} ns   on ${on.toFixed(1).padStart(7)} ns   (+${(on - off).toFixed(1)} ns, ${(on / off).toFixed(2)}×)`);
  }
}

main();
