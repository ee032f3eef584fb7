// GPU part of `npm run bench`: bench.c's rows through a hand-declared koffi function (the floor a binding
// over koffi can reach), cuda-ts's raw, typed and objects layers, and C itself (libbench.so, in this
// process); plus NVRTC compile and awaiting a stream (imports are the import step's: bench/import.ts).
//
//   npx tsx bench/gpu.ts [out.json]     (prints ONE JSON list on stdout when no path is given)
//   env: BENCH_PTX, BENCH_SCALE, BENCH_DEVICE (as bench.c), BENCH_LOADER=js|dist|tsx (default js),
//        BENCH_REPS, BENCH_NATIVE_LIB (libbench.so), BENCH_PIN and BENCH_FLOOR_WARMUP (bench/floor.ts)
// Output: [{"impl": NAME, "meta": {...}, "rows": {"<row>": {median, unit, n, reps} | {skipped}}}, ...].
//
// Method (docs/performance.md): bench.c's PTX, context, stream and loop counts; the rows run interleaved
// over every implementation (gpu-interleaved.ts); a row no interleaved pass had is timed on its own
// (one warm-up pass, 5 timed). cuda-ts loads as compiled CommonJS by default (bench/.build/js, see
// startup.ts): tsx turns every export into a getter, a cost of tsx, not of the package. koffi and the
// raw layer run the same loops (rawPasses), each compiled from its source text anew (fresh()), so neither
// shares the other's inline caches.
import koffi from 'koffi';
import { Impl, type ImplResult, type MeasuredRow, log, measure, measureAsync, reason, scaled, writeJson } from './common';
import { loadModule } from './startup';
import { type Driver, LOADER, type Passes, ROWS, type Raw, type RawApi, SAXPY, type State, readPtx, setup } from './gpu-common';
import { fresh, koffiApi, type NvrtcRaw, nvrtcPass, rawPasses, typedPasses } from './gpu-passes';
import { type ObjectsApi, benchObjects } from './gpu-objects';
import { interleavedPhase } from './gpu-interleaved';

type Interleaved = ReturnType<typeof interleavedPhase>;
const C_SHAPED = ['koffi', 'cuda-ts-raw', 'cuda-ts-typed', 'native-c-inproc'];

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

/** NVRTC compile of SAXPY through the typed layer (options as strings), ms each. */
function typedNvrtcRow(arch: string): MeasuredRow {
  const nv = loadModule<typeof import('../generated/13.0/nvrtc/index')>('generated/13.0/nvrtc/index', LOADER);
  const optList = [`--gpu-architecture=${arch}`];
  const pass = (ops: number) => {
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
  };
  return measure(pass, 1, 1, 'ms');
}

/** cuStreamSynchronize through koffi's .async (worker thread, callback on the event loop) after each launch. */
function koffiAsyncSynchronizeRow(api: ReturnType<typeof koffiApi>, st: State): Promise<MeasuredRow> {
  const pass = async (ops: number) => {
    for (let i = 0; i < ops; i++) {
      const r = api.cuLaunchKernel(st.fEmpty, 1, 1, 1, 1, 1, 1, 0, st.stream, null, null);
      if (r !== 0) throw new Error(`cuLaunchKernel failed: ${r}`);
      await new Promise<void>((res, rej) =>
        api.asyncSync(st.stream, (err, code) => (err || code ? rej(err ?? new Error(`cuStreamSynchronize ${code}`)) : res())),
      );
    }
  };
  return measureAsync(pass, scaled(2000, 100), 100);
}

/** One C-shaped implementation: its passes, its NVRTC row, and any row only it has. */
interface CShaped {
  name: string;
  how?: string;
  passes: () => Passes;
  nvrtc: () => MeasuredRow;
  extra?: (impl: Impl) => Promise<void>;
}

function cShapedImpls(cu: Driver, S: State, arch: string): CShaped[] {
  const koffiFns = () => koffiApi(cu.binder.library());
  return [
    {
      name: 'koffi',
      how: 'lib.func() declarations on libcuda.so.1 (exported symbols), handles as uintptr_t numbers, preallocated typed-array out-params',
      passes: () => fresh(rawPasses)(koffiFns(), S),
      nvrtc: () => measure(nvrtcPass(koffiNvrtc(), arch), 1, 1, 'ms'),
      extra: (impl) => impl.row('launch_async_synchronize', () => koffiAsyncSynchronizeRow(koffiFns(), S)),
    },
    {
      name: 'cuda-ts-raw',
      passes: () => fresh(rawPasses)(loadModule<Raw>('generated/13.0/driver/raw', LOADER) as unknown as RawApi, S),
      nvrtc: () => measure(nvrtcPass(loadModule<NvrtcRaw>('generated/13.0/nvrtc/raw', LOADER), arch), 1, 1, 'ms'),
    },
    { name: 'cuda-ts-typed', passes: () => fresh(typedPasses)(cu, S), nvrtc: () => typedNvrtcRow(arch) },
  ];
}

/** An implementation's rows: the interleaved phase's, then what it did not measure, one row at a time. */
async function benchCShaped(c: CShaped, meta: Record<string, unknown>, inter: Interleaved | undefined): Promise<ImplResult> {
  const impl = new Impl(c.name);
  Object.assign(impl.rows, inter?.rows[c.name] ?? {});
  Object.assign(impl.meta, meta, c.how ? { how: c.how } : {});
  try {
    const passes = c.passes();
    for (const [name, ops, warm, unit, bytes] of ROWS) {
      const p = passes[name];
      if (p) await impl.row(name, () => measure(p, ops(), warm(), unit, bytes));
      else if (!impl.rows[name]) impl.skip(name, 'not implemented for this implementation');
    }
    await c.extra?.(impl);
    await impl.row('nvrtc_compile_small', c.nvrtc);
  } catch (e) {
    impl.meta.error = reason(e);
  }
  return impl.result();
}

/** Set-up through the typed layer, the interleaved phase, then each implementation's remaining rows. */
async function gpuResults(): Promise<ImplResult[]> {
  const results: ImplResult[] = [];
  let cu: Driver, S: State, meta: Record<string, unknown>, cleanup: () => void, ptx: Buffer;
  try {
    cu = loadModule<Driver>('generated/13.0/driver/index', LOADER);
    ptx = readPtx();
    ({ S, meta, cleanup } = setup(cu));
    log(`device ${meta.device} (sm ${meta.compute_capability}), driver ${meta.driver_version}, cuda-ts loaded as ${LOADER}`);
  } catch (e) {
    log(`setup failed: ${reason(e)}`);
    for (const n of [...C_SHAPED, 'cuda-ts-objects']) results.push({ impl: n, meta: {}, rows: {}, skipped: `setup failed: ${reason(e)}` });
    return results;
  }
  let inter: Interleaved | undefined;
  try {
    inter = interleavedPhase(cu, S, ptx, meta);
  } catch (e) {
    log(`interleaved phase failed: ${reason(e)}`);
  }
  for (const n of ['native-c-inproc', 'cuda-ts-raw-nodeffi', 'cuda-ts-typed-nodeffi', 'cuda-ts-objects-nodeffi']) {
    if (inter?.rows[n]) results.push({ impl: n, meta: { ...meta, interleaved: true }, rows: inter.rows[n] });
    else if (inter?.notes[n]) results.push({ impl: n, meta: {}, rows: {}, skipped: inter.notes[n] });
  }
  const arch = `compute_${String(meta.compute_capability).replace('.', '')}`;
  for (const c of cShapedImpls(cu, S, arch)) results.push(await benchCShaped(c, meta, inter));
  try {
    results.push(await benchObjects(loadModule<ObjectsApi>('src/index', LOADER), ptx, inter?.rows['cuda-ts-objects']));
  } catch (e) {
    log(`cuda-ts-objects skipped: ${reason(e)}`);
    results.push({ impl: 'cuda-ts-objects', meta: {}, rows: {}, skipped: reason(e) });
  }
  for (const [what, close] of [
    ['interleaved cleanup', () => inter?.close()],
    ['cleanup', cleanup],
  ] as const) {
    try {
      close();
    } catch (e) {
      log(`${what}: ${reason(e)}`);
    }
  }
  return results;
}

async function main(): Promise<void> {
  const results = await gpuResults();
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
