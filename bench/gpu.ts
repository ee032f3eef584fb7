// GPU part of the benchmark suite: the rows of bench/native/bench.c through cuda-ts's raw layer, its typed
// layer, a hand-declared koffi function (the floor a binding over koffi can reach) and the objects layer,
// plus NVRTC compile, `await stream.synchronized()` latency, and import + first call in a fresh process.
//
//   npx tsx bench/gpu.ts [out.json]     (prints ONE JSON list on stdout when no path is given)
//   env: BENCH_PTX, BENCH_SCALE, BENCH_DEVICE (as bench.c), BENCH_LOADER=js|dist|tsx (default js), BENCH_PIN, BENCH_FLOOR_WARMUP,
//        BENCH_ONLY=koffi,cuda-ts-raw,cuda-ts-typed,cuda-ts-objects,startup
//
// Output: [{"impl": NAME, "meta": {...}, "rows": {"<row>": {median, unit, n, reps} | {skipped}}}, ...]
// with impl names koffi, cuda-ts-raw, cuda-ts-typed, cuda-ts-objects, cuda-ts-startup.
//
// Method: the one of bench.c (see its top comment): same PTX (bench/native/kernels.ptx, cuModuleLoadData),
// one primary context, one CU_STREAM_NON_BLOCKING stream; per row one untimed warm-up pass then timed
// passes (the interleaved phase, gpu-interleaved.ts: BENCH_REPS repetitions, each split into sub-blocks, see
// bench/interleave.ts; rows outside it: 5 timed passes); launches grid 1x1x1 block 1x1x1, a cuStreamSynchronize after every 1000 launches inside the
// timed region; every status checked inside the loops; same loop counts (scaled by BENCH_SCALE).
// C floor (bench/floor.ts): after set-up, the interleaved phase pins this
// thread to BENCH_PIN's core for its per-operation rows (copies keep the start-up affinity), warms the
// launch rows up BENCH_FLOOR_WARMUP launches, and gives the start-up affinity back before the later rows.
// Kernel arguments: written once into one koffi.alloc block, a BigUint64Array table of their addresses
// passed as `void **kernelParams` (the void*[] of bench.c, built once).
//
// cuda-ts is loaded as compiled CommonJS by default (bench/.build/js, what tsc emits, see startup.ts):
// tsx's esbuild output turns every export into a getter and adds ~100-150 ns per call (bench/cpu.ts
// shows it), which is a property of tsx, not of the package.
//
// Fairness: the loops of koffi and cuda-ts-raw are the same source (rawPasses, gpu-passes.ts) but compiled
// separately for each (re-evaluated from its text), so each has its own inline caches and neither
// pays for the other's call targets.
//
// The code: gpu-common.ts (rows, state, setup), gpu-passes.ts (koffi, raw, typed, NVRTC),
// gpu-objects.ts (the objects layer), gpu-interleaved.ts (the interleaved phase); main() here.
import koffi from 'koffi';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Impl, REPO_ROOT, type ImplResult, type MeasuredRow, log, measure, measureAsync, reason, scaled, writeJson } from './common';
import { hasDist, loadModule, measureStartup, type Loader } from './startup';
import { type Driver, LOADER, type Raw, type RawApi, SAXPY, type State, findPtx, setup, wants } from './gpu-common';
import { fresh, koffiApi, type NvrtcRaw, nvrtcPass, rawPasses, runPasses, typedPasses } from './gpu-passes';
import { benchObjects } from './gpu-objects';
import { interleavedPhase } from './gpu-interleaved';

// ---------------------------------------------------------------------------------------------

type Interleaved = ReturnType<typeof interleavedPhase>;

/** The driver module, the benchmark state and the PTX; a part left undefined where setup failed before it. */
interface DriverSetup {
  cu: Driver | undefined;
  S: State | undefined;
  meta: Record<string, unknown>;
  cleanup: (() => void) | undefined;
  ptx: Buffer | undefined;
}

/** Loads the driver and sets the state up; where that fails, the C-shaped implementations asked for are skipped in `results`. */
function driverSetup(results: ImplResult[]): DriverSetup {
  const skipAll = (names: string[], why: string) => {
    for (const n of names) if (wants(n)) results.push({ impl: n, meta: {}, rows: {}, skipped: why });
  };
  let cu: Driver | undefined;
  let S: State | undefined;
  let meta: Record<string, unknown> = {};
  let cleanup: (() => void) | undefined;
  let ptx: Buffer | undefined;
  try {
    cu = loadModule<Driver>('generated/13.0/driver/index', LOADER);
    ptx = Buffer.concat([readFileSync(findPtx()), Buffer.from([0])]);
    ({ S, meta, cleanup } = setup(cu));
    log(`device ${meta.device} (sm ${meta.compute_capability}), driver ${meta.driver_version}, cuda-ts loaded as ${LOADER}`);
  } catch (e) {
    skipAll(['koffi', 'cuda-ts-raw', 'cuda-ts-typed', 'native-c-inproc'], `setup failed: ${reason(e)}`);
  }
  return { cu, S, meta, cleanup, ptx };
}

function runInterleavedPhase({ cu, S, ptx, meta }: DriverSetup): Interleaved | undefined {
  if (cu && S && ptx && process.env.BENCH_INTERLEAVE !== '0') {
    try {
      return interleavedPhase(cu, S, ptx, findPtx(), meta);
    } catch (e) {
      log(`interleaved phase failed: ${reason(e)}`);
    }
  }
  return undefined;
}

/** The implementations only the interleaved phase measures, each as its own result. */
function pushInterleavedResults(results: ImplResult[], inter: Interleaved, meta: Record<string, unknown>): void {
  for (const n of ['native-c-inproc', 'cuda-ts-raw-nodeffi', 'cuda-ts-typed-nodeffi', 'cuda-ts-objects-nodeffi']) {
    if (inter.rows[n]) results.push({ impl: n, meta: { ...meta, interleaved: true }, rows: inter.rows[n] });
    else if (inter.notes[n]) results.push({ impl: n, meta: {}, rows: {}, skipped: inter.notes[n] });
  }
}

/** An implementation's result, holding the rows the interleaved phase measured already. */
function presetImpl(name: string, inter: Interleaved | undefined): Impl {
  const impl = new Impl(name);
  Object.assign(impl.rows, inter?.rows[impl.name] ?? {});
  return impl;
}

// cuStreamSynchronize through koffi's .async (worker thread, callback on the event loop)
async function koffiAsyncSynchronizeRow(impl: Impl, api: ReturnType<typeof koffiApi>, st: State): Promise<void> {
  const launch = api.cuLaunchKernel;
  await impl.row('launch_async_synchronize', () =>
    measureAsync(
      async (ops) => {
        for (let i = 0; i < ops; i++) {
          const r = launch(st.fEmpty, 1, 1, 1, 1, 1, 1, 0, st.stream, null, null);
          if (r !== 0) throw new Error(`cuLaunchKernel failed: ${r}`);
          await new Promise<void>((res, rej) =>
            api.asyncSync(st.stream, (err, code) => (err || code ? rej(err ?? new Error(`cuStreamSynchronize ${code}`)) : res())),
          );
        }
      },
      scaled(2000, 100),
      100,
    ),
  );
}

/** NVRTC's C functions hand-declared through koffi. */
function koffiNvrtc(): NvrtcRaw {
  const nv = koffi.load(process.env.CUDA_TS_NVRTC_LIBRARY || 'libnvrtc.so.13');
  return {
    nvrtcCreateProgram: nv.func('int nvrtcCreateProgram(void *prog, const char *src, const char *name, int nh, void *h, void *n)') as never,
    nvrtcCompileProgram: nv.func('int nvrtcCompileProgram(uintptr_t prog, int n, void *opts)') as never,
    nvrtcGetPTXSize: nv.func('int nvrtcGetPTXSize(uintptr_t prog, void *size)') as never,
    nvrtcGetPTX: nv.func('int nvrtcGetPTX(uintptr_t prog, void *ptx)') as never,
    nvrtcDestroyProgram: nv.func('int nvrtcDestroyProgram(void *prog)') as never,
  };
}

// koffi, hand-declared
async function benchKoffi(cu: Driver, S: State, meta: Record<string, unknown>, arch: string, inter: Interleaved | undefined): Promise<ImplResult> {
  const impl = presetImpl('koffi', inter);
  Object.assign(impl.meta, meta, {
    how: 'lib.func() declarations on libcuda.so.1 (exported symbols), handles as uintptr_t numbers, preallocated typed-array out-params',
  });
  try {
    const api = koffiApi(cu.binder.library());
    await runPasses(impl, fresh(rawPasses)(api, S));
    await koffiAsyncSynchronizeRow(impl, api, S);
    await impl.row('nvrtc_compile_small', () => {
      const api2 = koffiNvrtc();
      const pass = nvrtcPass(api2, arch);
      return measure(pass, 1, 1, 'ms');
    });
  } catch (e) {
    impl.meta.error = reason(e);
  }
  return impl.result();
}

async function benchRawLayer(S: State, meta: Record<string, unknown>, arch: string, inter: Interleaved | undefined): Promise<ImplResult> {
  const impl = presetImpl('cuda-ts-raw', inter);
  Object.assign(impl.meta, meta);
  try {
    await runPasses(impl, fresh(rawPasses)(loadModule<Raw>('generated/13.0/driver/raw', LOADER) as unknown as RawApi, S));
    await impl.row('nvrtc_compile_small', () => {
      const nv = loadModule<NvrtcRaw>('generated/13.0/nvrtc/raw', LOADER);
      return measure(nvrtcPass(nv, arch), 1, 1, 'ms');
    });
  } catch (e) {
    impl.meta.error = reason(e);
  }
  return impl.result();
}

/** NVRTC compile of SAXPY through the typed layer, ms each. */
function typedNvrtcRow(arch: string): MeasuredRow {
  type Nv = typeof import('../generated/13.0/nvrtc/index');
  const nv = loadModule<Nv>('generated/13.0/nvrtc/index', LOADER);
  const opt = Buffer.from(`--gpu-architecture=${arch}\0`);
  const optBlock = koffi.alloc('uint8_t', opt.length);
  new Uint8Array(koffi.view(optBlock, opt.length)).set(opt);
  const opts = BigUint64Array.of(BigInt(koffi.address(optBlock)));
  void opts;
  const optList = [`--gpu-architecture=${arch}`]; // the typed layer takes the options as strings
  return measure(
    (ops) => {
      for (let i = 0; i < ops; i++) {
        const prog = nv.nvrtcCreateProgram(SAXPY, 'saxpy.cu', [], null);
        try {
          nv.nvrtcCompileProgram(prog, optList);
          const buf = new Uint8Array(nv.nvrtcGetPTXSize(prog));
          nv.nvrtcGetPTX(prog, buf);
          if (!Buffer.from(buf.buffer).includes('.entry saxpy')) throw new Error('NVRTC output has no saxpy entry');
        } finally {
          nv.nvrtcDestroyProgram(prog);
        }
      }
    },
    1,
    1,
    'ms',
  );
}

async function benchTypedLayer(cu: Driver, S: State, meta: Record<string, unknown>, arch: string, inter: Interleaved | undefined): Promise<ImplResult> {
  const impl = presetImpl('cuda-ts-typed', inter);
  Object.assign(impl.meta, meta);
  try {
    await runPasses(impl, fresh(typedPasses)(cu, S));
    await impl.row('nvrtc_compile_small', () => typedNvrtcRow(arch));
  } catch (e) {
    impl.meta.error = reason(e);
  }
  return impl.result();
}

async function benchObjectsOrSkip({ cu, S, ptx }: DriverSetup, inter: Interleaved | undefined): Promise<ImplResult> {
  try {
    if (!cu || !ptx) throw new Error('driver setup failed (see the other implementations)');
    return await benchObjects(ptx, cu, S, inter?.rows['cuda-ts-objects']);
  } catch (e) {
    log(`cuda-ts-objects skipped: ${reason(e)}`);
    if (process.env.BENCH_DEBUG) console.error(e);
    return { impl: 'cuda-ts-objects', meta: {}, rows: {}, skipped: reason(e) };
  }
}

function closeAll(inter: Interleaved | undefined, cleanup: (() => void) | undefined): void {
  try {
    inter?.close();
  } catch (e) {
    log(`interleaved cleanup: ${reason(e)}`);
  }
  try {
    cleanup?.();
  } catch (e) {
    log(`cleanup: ${reason(e)}`);
  }
}

/** The first call of the objects rows: the driver version through the driver module the objects layer loaded (no cuInit needed). */
function objectsFirstCall(loader: Loader): string {
  return `require(${JSON.stringify(join(loader === 'tsx' ? REPO_ROOT : loader === 'dist' ? join(REPO_ROOT, 'dist') : join(REPO_ROOT, 'bench', '.build', 'js'), 'generated', '13.0', 'driver', loader === 'tsx' ? 'index.ts' : 'index.js'))}).cuDriverGetVersion()`;
}

// Import + first call in fresh processes (cuDriverGetVersion needs no cuInit).
async function benchStartup(): Promise<ImplResult> {
  const impl = new Impl('cuda-ts-startup');
  impl.meta.method =
    'fresh `node -e` per sample: require() then first call, timed inside the child with performance.now(); median of 5 after 1 untimed; see bench/startup.ts';
  const loaders: Loader[] = hasDist('generated/13.0/driver/index') ? ['js', 'dist', 'tsx'] : ['js', 'tsx'];
  const startups: unknown[] = [];
  const one = async (row: string, what: string, mod: string, call: string, loader: Loader) => {
    await impl.row(`${row}_${loader}`, () => {
      const r = measureStartup(what, mod, call, loader);
      startups.push(r);
      if (r.result && typeof r.result === 'object' && 'error' in (r.result as object))
        throw new Error(`first call failed: ${(r.result as { error: string }).error}`);
      return {
        median: r.median.total_ms,
        unit: 'ms',
        n: 1,
        reps: [r.median.total_ms],
        note: `require ${r.median.require_ms} ms + first call ${r.median.first_call_ms} ms; since process start ${r.median.process_ms} ms${r.js_source ? `; ${r.js_source}` : ''}`,
      };
    });
  };
  for (const loader of loaders) {
    await one('import_first_call_driver', 'cuda-ts/driver: require + cuDriverGetVersion()', 'generated/13.0/driver/index', 'm.cuDriverGetVersion()', loader);
  }
  const objectsEntry = existsSync(join(REPO_ROOT, 'src', 'index.ts'))
    ? 'src/index'
    : existsSync(join(REPO_ROOT, 'src', 'device.ts'))
      ? 'src/device'
      : undefined;
  for (const loader of loaders) {
    if (!objectsEntry || (loader === 'dist' && !hasDist(objectsEntry))) {
      impl.skip(`import_first_call_objects_${loader}`, objectsEntry ? 'dist/ has no objects layer build' : 'no objects layer in src/');
      continue;
    }
    await one('import_first_call_objects', `objects (${objectsEntry}): require + driver version`, objectsEntry, objectsFirstCall(loader), loader);
  }
  impl.meta.details = startups;
  return impl.result();
}

async function main(): Promise<void> {
  const results: ImplResult[] = [];
  const driver = driverSetup(results);
  const { cu, S, meta } = driver;
  const inter = runInterleavedPhase(driver);
  if (inter) pushInterleavedResults(results, inter, meta);

  if (cu && S) {
    const arch = `compute_${String(meta.compute_capability).replace('.', '')}`;
    if (wants('koffi')) results.push(await benchKoffi(cu, S, meta, arch, inter));
    if (wants('cuda-ts-raw')) results.push(await benchRawLayer(S, meta, arch, inter));
    if (wants('cuda-ts-typed')) results.push(await benchTypedLayer(cu, S, meta, arch, inter));
  }
  if (wants('cuda-ts-objects')) results.push(await benchObjectsOrSkip(driver, inter));
  closeAll(inter, driver.cleanup);
  if (wants('startup')) results.push(await benchStartup());

  const outPath = process.argv[2];
  if (outPath) {
    writeJson(outPath, results);
    log(`wrote ${outPath}`);
  } else process.stdout.write(`${JSON.stringify(results)}\n`);
}

export { fresh, rawPasses, typedPasses, type RawApi, type State };

if (require.main === module) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
