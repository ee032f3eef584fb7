// The objects layer's own cost on the launch path, without a GPU: launch() with the driver replaced
// by a no-op (drv.provideNative), minus a direct call of that no-op with cuLaunchKernelEx's arguments. What is
// left is the JavaScript the objects layer adds per launch (validation, argument packing, binding
// check), which the GPU rows of bench/run.ts add on top of koffi's call and the driver's own work.
// Under Node 26 it also launches into a C no-op bound through node:ffi (built here with cc). Through tsx
// (`node|bun|deno scripts/run-ts.cjs bench/launch-js.ts`, as the bench's children run the objects layer)
// each imported name is read through a getter: the launch path holds the names it uses in module
// constants, so the figures come within ~20 ns of the compiled ones (before it did, 3-6x above them).
// Compiled, e.g.
//   npx tsc --outDir /tmp/lj --rootDir . --module commonjs --target ES2022 --esModuleInterop \
//     --skipLibCheck --types node bench/launch-js.ts && ln -s $PWD/node_modules /tmp/lj/ && node /tmp/lj/bench/launch-js.js
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as drv from '../src/driver';
import { Binder } from '../support';
import { Context } from '../src/context';
import { Core } from '../src/lifecycle';
import { DeviceBuffer } from '../src/memory/device-buffer';
import { Module, Kernel } from '../src/module';
import { LaunchConfig } from '../src/launch-config';
import { launch } from '../src/launch';
import { Stream } from '../src/stream';

function fake<T extends object>(proto: T, fields: Record<string, unknown>): T {
  return Object.assign(Object.create(proto) as T, fields);
}
const ctx = fake(Context.prototype, { core: new Core('Context', undefined), unusable: undefined, handle: 0x1234, device: 0, primary: true });
const mod = fake(Module.prototype, { core: new Core('Module', undefined), context: ctx, handle: 0x2000 });
const stream = fake(Stream.prototype, { core: new Core('Stream', undefined), context: ctx, handle: 0x3000, hostError: undefined });
let sizes: number[] = [];
drv.provideNative('cuCtxGetCurrent', ((o: BigUint64Array) => ((o[0] = BigInt(ctx.handle)), 0)) as never);
drv.provideNative('cuCtxSetCurrent', (() => 0) as never);
drv.provideNative('cuFuncGetParamInfo', ((_f: number, i: number, off: BigUint64Array, bytes: BigUint64Array) => (i < sizes.length ? ((off[0] = 0n), (bytes[0] = BigInt(sizes[i])), 0) : 1)) as never);
let calls = 0;
const noop = (..._a: unknown[]): number => (calls++, 0);
drv.provideNative('cuLaunchKernel', noop as never);
drv.provideNative('cuLaunchKernelEx', noop as never); // what launch() calls where the driver has it
sizes = [];
const k0 = new Kernel(mod, 0x4000 as never, 'k0', []);
sizes = [8, 8, 4, 4];
const k4 = new Kernel(mod, 0x4001 as never, 'k4', ['ptr', 'ptr', 'f32', 'u32']);
const buf = new (class extends DeviceBuffer {
  constructor() {
    super('DeviceBuffer', 0x7f0000000000, 1 << 20, ctx, () => undefined);
  }
})();
const cfg = new LaunchConfig({ grid: 1, block: 32 });
const table = new BigUint64Array(4);
const exConfig = new Uint8Array(56);

function time(n: number, f: () => void): number {
  for (let i = 0; i < 20000; i++) f();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f();
  return Number(process.hrtime.bigint() - t0) / n;
}
const N = 2_000_000;
const rows: Record<string, number[]> = { direct: [], launch0: [], launch4: [] };
for (let r = 0; r < 7; r++) {
  rows.direct.push(time(N, () => noop(exConfig, 0x4000, table, null)));
  rows.launch0.push(time(N, () => launch(stream, cfg, k0)));
  rows.launch4.push(time(N, () => launch(stream, cfg, k4, buf, buf, 1.5, 7)));
}
const med = (a: number[]): number => a.slice().sort((x, y) => x - y)[a.length >> 1];
console.log(`objects-layer JS per launch (no GPU; median of 7 × ${N}; node ${process.version}):`);
console.log(`  direct no-op call            ${med(rows.direct).toFixed(1)} ns`);
console.log(`  launch(), 0 args             ${med(rows.launch0).toFixed(1)} ns  (+${(med(rows.launch0) - med(rows.direct)).toFixed(1)} ns)`);
console.log(`  launch(), 4 args (2 buffers) ${med(rows.launch4).toFixed(1)} ns  (+${(med(rows.launch4) - med(rows.direct)).toFixed(1)} ns)`);
if (calls === 0) throw new Error('the no-op was never called');

// Under node:ffi (Node 26): the same launches into a C function that returns 0, bound with
// cuLaunchKernelEx's parameter types by a node:ffi Binder (what CUDA_TS_FFI=node binds), against
// node:ffi's own call of it with the arguments as bigints. The difference is what the objects layer
// and the node:ffi adapter add to a launch under node:ffi.
const ffi = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule?.('node:ffi') as
  | { DynamicLibrary: new (p: string) => { getFunction(n: string, s: { arguments: string[]; return: string }): (...a: bigint[]) => number }; getRawPointer(b: ArrayBuffer): bigint }
  | undefined;
if (ffi?.DynamicLibrary) {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-launch-js-'));
  writeFileSync(join(dir, 'noop.c'), 'int noop_launch(void *config, unsigned long f, void *params, void *extra) { (void)config; (void)f; (void)params; (void)extra; return 0; }\n');
  const so = join(dir, 'libnoop.so');
  execFileSync('cc', ['-O2', '-shared', '-fPIC', '-o', so, join(dir, 'noop.c')], { stdio: 'pipe' });
  const binder = new Binder({ module: 'noop', cudaVersion: '13.0', cudaVersionNumber: 13000, sonames: [so], env: 'CUDA_TS_NOOP_LIBRARY', resolve: 'symbol' });
  binder.configure({ ffi: 'node' });
  const bound = binder.bind('cuLaunchKernelEx', 'noop_launch', undefined, 'int32_t', ['void *', 'uintptr_t', 'void *', 'void *']);
  if (binder.backendOf('cuLaunchKernelEx')?.backend !== 'node') throw new Error(`not bound through node:ffi: ${binder.backendOf('cuLaunchKernelEx')?.reason}`);
  drv.provideNative('cuLaunchKernelEx', bound);
  const own = new ffi.DynamicLibrary(so).getFunction('noop_launch', { arguments: ['pointer', 'pointer', 'pointer', 'pointer'], return: 'int32' });
  const cfgAddress = ffi.getRawPointer(new ArrayBuffer(56));
  const rowsN: Record<string, number[]> = { direct: [], launch0: [], launch4: [] };
  for (let r = 0; r < 7; r++) {
    rowsN.direct.push(time(N, () => own(cfgAddress, 0x4000n, 0n, 0n)));
    rowsN.launch0.push(time(N, () => launch(stream, cfg, k0)));
    rowsN.launch4.push(time(N, () => launch(stream, cfg, k4, buf, buf, 1.5, 7)));
  }
  rmSync(dir, { recursive: true, force: true });
  console.log(`node:ffi: a C no-op bound as cuLaunchKernelEx (median of 7 × ${N}):`);
  console.log(`  node:ffi's own call          ${med(rowsN.direct).toFixed(1)} ns`);
  console.log(`  launch(), 0 args             ${med(rowsN.launch0).toFixed(1)} ns  (+${(med(rowsN.launch0) - med(rowsN.direct)).toFixed(1)} ns)`);
  console.log(`  launch(), 4 args (2 buffers) ${med(rowsN.launch4).toFixed(1)} ns  (+${(med(rowsN.launch4) - med(rowsN.direct)).toFixed(1)} ns)`);
}
