// Where the objects layer's launch time goes, on the GPU, in one process, interleaved per repetition
// (bench/interleave.ts): bench.c's own pass (libbench.so, in process), koffi's cuLaunchKernel called
// directly on the objects' kernel and stream handles (with NULL params, then with the objects'
// empty argument table), node:ffi's own cuLaunchKernelEx where the running Node has node:ffi (the
// floor of the node:ffi backend, as koffi's own call is koffi's), and launch(). Each pass: 20,000 launches of the empty kernel, a
// synchronize every 1,000 (bench.c's launch_0args); then bench.c's launch_4args beside the objects launch of
// the same kernel with (ptr, ptr, f32, u32). With bench/before-tree.ts's build present, an earlier commit's
// objects launch runs in both groups. Prints ns per launch and ratios to C. Runs under Bun too (`bun bench/launch-breakdown.ts`).
//   npx tsx bench/launch-breakdown.ts        (BENCH_LOADER=js by default: compiled JS, as bench/run.ts)
//   CUDA_TS_FFI=node npx tsx bench/launch-breakdown.ts   (launch() through node:ffi; the koffi rows stay koffi's)
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import koffi from 'koffi';
import { jsRuntime, jsRuntimeVersion } from '../support/jsruntime';
import { BATCH, REPO_ROOT, median } from './common';
import { measureInterleaved, type Pass } from './interleave';
import { loadModule } from './startup';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

/** Builds bench.c's library once per machine (a temporary folder) and opens its pass in this process. */
function inProcessC(ptxPath: string): (row: string, ops: number) => number {
  const dir = join(tmpdir(), 'cuda-ts-bench-inproc');
  const lib = join(dir, 'libbench.so');
  if (!existsSync(lib)) {
    const b = spawnSync('bash', [join(REPO_ROOT, 'bench', 'native', 'build.sh'), dir], { encoding: 'utf8' });
    if (b.status !== 0) throw new Error(`build.sh failed: ${b.stderr}`);
  }
  const so = koffi.load(lib);
  const init = so.func('int bench_init(const char *ptx, int ordinal)');
  const pass = so.func('int bench_pass(const char *row, long ops)');
  if (init(ptxPath, 0) !== 0) throw new Error('bench_init failed');
  return pass;
}

/** The objects layer's device, stream and empty kernel, and the driver functions the koffi rows call on their handles. */
function objectsSetup(O: Any, drv: Any, ptxPath: string) {
  const dev = O.Device.get(0);
  dev.setCurrent();
  const stream = O.Stream.create({ nonBlocking: true });
  const mod = O.Module.fromPTX(readFileSync(ptxPath, 'utf8'));
  const k = mod.kernel('empty', []);
  const cfg = new O.LaunchConfig({ grid: 1, block: 1 });
  const launchK: (...a: Any[]) => number = drv.native('cuLaunchKernel');
  const syncK: (s: number) => number = drv.native('cuStreamSynchronize');
  const f = k.handle;
  const h = stream.handle;
  const emptyTable = new BigUint64Array(0);
  // CUlaunchConfig without attributes (56 bytes): grid, block, shared memory, stream at 32
  const exCfg = new Uint8Array(56);
  const exView = new DataView(exCfg.buffer);
  [1, 1, 1, 1, 1, 1, 0].forEach((v, i) => exView.setUint32(i * 4, v, true));
  exView.setBigUint64(32, BigInt(h), true);
  const launchExK: (...a: Any[]) => number = drv.native('cuLaunchKernelEx');
  const launch = O.launch;
  return { dev, stream, mod, k, cfg, launchK, syncK, f, h, emptyTable, exCfg, launchExK, launch };
}
type ObjectsSetup = ReturnType<typeof objectsSetup>;

/**
 * node:ffi's own cuLaunchKernelEx: four pointers as bigints (its direct fast call), the config in
 * an ArrayBuffer of its own (off the V8 heap, so its address holds); no function where Node has no node:ffi.
 */
function nodeFfiLaunchEx(f: Any, exCfg: Uint8Array): { launchExNode: ((...a: bigint[]) => number) | undefined; exCfgAddress: bigint; fBig: bigint } {
  const nodeFfi = (process as Any).getBuiltinModule?.('node:ffi');
  let launchExNode: ((...a: bigint[]) => number) | undefined;
  let exCfgAddress = 0n;
  const fBig = BigInt(f); // made once: BigInt of a large number costs ~40 ns
  if (nodeFfi?.DynamicLibrary) {
    const cuda = new nodeFfi.DynamicLibrary(process.env.CUDA_TS_DRIVER_LIBRARY || 'libcuda.so.1');
    launchExNode = cuda.getFunction('cuLaunchKernelEx', { arguments: ['pointer', 'pointer', 'pointer', 'pointer'], return: 'int32' });
    const own = new Uint8Array(new ArrayBuffer(56));
    own.set(exCfg);
    exCfgAddress = nodeFfi.getRawPointer(own.buffer);
    (globalThis as Any).__keepExCfg = own; // C reads it through the address: it must outlive every pass
  }
  return { launchExNode, exCfgAddress, fBig };
}

/** bench.c's launch_0args loop around one launch: a `sync` after every BATCH launches and at the end. */
const loop = (one: () => void, sync: () => void): Pass => (ops) => {
  for (let i = 0; i < ops; i++) {
    one();
    if ((i + 1) % BATCH === 0) sync();
  }
  if (ops % BATCH) sync();
};

function launchPasses(pass: (row: string, ops: number) => number, o: ObjectsSetup, ex: ReturnType<typeof nodeFfiLaunchEx>): Record<string, Pass> {
  const { stream, k, cfg, launchK, syncK, f, h, emptyTable, exCfg, launchExK, launch } = o;
  const { launchExNode, exCfgAddress, fBig } = ex;
  const rawSync = (): void => {
    if (syncK(h) !== 0) throw new Error('cuStreamSynchronize');
  };
  return {
    'c (bench.c in process)': (ops) => void pass('launch_0args', ops),
    'koffi, NULL params': loop(() => {
      if (launchK(f, 1, 1, 1, 1, 1, 1, 0, h, null, null) !== 0) throw new Error('launch');
    }, rawSync),
    'koffi, empty table': loop(() => {
      if (launchK(f, 1, 1, 1, 1, 1, 1, 0, h, emptyTable, null) !== 0) throw new Error('launch');
    }, rawSync),
    'koffi cuLaunchKernelEx (4 args), NULL params': loop(() => {
      if (launchExK(exCfg, f, null, null) !== 0) throw new Error('launchEx');
    }, rawSync),
    ...(launchExNode
      ? {
          'node:ffi cuLaunchKernelEx (4 args), NULL params': loop(() => {
            if (launchExNode!(exCfgAddress, fBig, 0n, 0n) !== 0) throw new Error('launchEx (node:ffi)');
          }, rawSync),
        }
      : {}),
    'objects launch(), raw sync': loop(() => launch(stream, cfg, k), rawSync),
    'objects launch() + Stream.synchronize()': loop(() => launch(stream, cfg, k), () => stream.synchronize()),
  };
}

/**
 * The objects layer of an earlier commit (bench/before-tree.ts), in the same process and clock, where it
 * is built: its launch of the empty kernel goes beside today's (`zero`), its four-argument launch beside
 * today's four-argument one (`four`).
 */
function addBeforeTreePasses(zero: Record<string, Pass>, four: Record<string, Pass>, dev: Any, ptxPath: string): void {
  const beforeDir = join(REPO_ROOT, 'bench', '.build', 'js-before');
  if (!existsSync(join(beforeDir, 'src', 'index.js'))) return;
  const commit = readFileSync(join(beforeDir, 'COMMIT'), 'utf8').trim();
  try {
    const B = require(join(beforeDir, 'src', 'index.js'));
    B.Device.get(0).setCurrent();
    const bs = B.Stream.create({ nonBlocking: true });
    const mod = B.Module.fromPTX(readFileSync(ptxPath, 'utf8'));
    const bk = mod.kernel('empty', []);
    const bk4 = mod.kernel('args4', ['ptr', 'ptr', 'f32', 'u32']);
    const [bA, bB] = [B.DeviceBuffer.alloc(4096), B.DeviceBuffer.alloc(4096)];
    const bcfg = new B.LaunchConfig({ grid: 1, block: 1 });
    zero[`objects launch() at ${commit} + its synchronize()`] = loop(() => B.launch(bs, bcfg, bk), () => bs.synchronize());
    four[`objects launch() at ${commit} + its synchronize()`] = loop(() => B.launch(bs, bcfg, bk4, bA, bB, 1.5, 1024), () => bs.synchronize());
  } catch (e) {
    console.log(`objects at ${commit}: not run (${(e as Error).message})`);
  }
  dev.setCurrent();
}

/** bench.c's launch_4args beside today's objects launch of the same kernel with (ptr, ptr, f32, u32). */
function fourArgPasses(pass: (row: string, ops: number) => number, O: Any, o: ObjectsSetup): Record<string, Pass> {
  const k4 = o.mod.kernel('args4', ['ptr', 'ptr', 'f32', 'u32']);
  const [dA, dB] = [O.DeviceBuffer.alloc(4096), O.DeviceBuffer.alloc(4096)];
  const { stream, cfg, launch } = o;
  return {
    'c (bench.c in process)': (ops) => void pass('launch_4args', ops),
    'objects launch() + Stream.synchronize()': loop(() => launch(stream, cfg, k4, dA, dB, 1.5, 1024), () => stream.synchronize()),
  };
}

function printBreakdown(row: string, got: Record<string, Any>, reps: number, backend: string): void {
  const c = got['c (bench.c in process)'] as Any;
  console.log(`${row} breakdown (${reps} interleaved repetitions × 20,000 launches; ${jsRuntime()} ${jsRuntimeVersion()}; objects launch through ${backend}):`);
  for (const [name, r] of Object.entries(got) as [string, Any][]) {
    if (!('median' in r)) {
      console.log(`  ${name.padEnd(42)} skipped: ${r.skipped}`);
      continue;
    }
    const ratios = r.reps.map((v: number, i: number) => v / c.reps[i]);
    console.log(`  ${name.padEnd(42)} ${r.median.toFixed(0).padStart(6)} ns  ${(median(ratios)).toFixed(3)}× C [${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}]`);
  }
}

function main(): void {
  const O = loadModule<Any>('src/index');
  const drv = loadModule<Any>('src/driver');
  const ptxPath = join(REPO_ROOT, 'bench', 'native', 'kernels.ptx');
  const pass = inProcessC(ptxPath);
  const o = objectsSetup(O, drv, ptxPath);
  const passes = launchPasses(pass, o, nodeFfiLaunchEx(o.f, o.exCfg));
  const four = fourArgPasses(pass, O, o);
  addBeforeTreePasses(passes, four, o.dev, ptxPath);
  const reps = Number(process.env.BENCH_REPS ?? 9);
  const got0 = measureInterleaved({ name: 'launch_0args', ops: 20_000, warm: 2000, unit: 'ns', passes }, reps);
  const got4 = measureInterleaved({ name: 'launch_4args', ops: 20_000, warm: 2000, unit: 'ns', passes: four }, reps);
  // asked after the launches: the binder binds a function on its first call
  const backend = JSON.stringify(loadModule<Any>('src/releases').driverBinder.backendOf('cuLaunchKernelEx'));
  printBreakdown('launch_0args', got0, reps, backend);
  printBreakdown('launch_4args', got4, reps, backend);
  o.stream.close();
}

main();
