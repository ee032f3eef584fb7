// The Blas object's GEMM against the same cuBLAS call made from C in the same process, and CuPy:
// `npx tsx bench/math-blas.ts` (GPU machine; gcc builds bench/native/math-blas.c, python3 runs CuPy if installed).
//
// Rows (issue 43 part C): gemm_64_f32 (host path: target objects ≤ 1.05× C), gemm_4096_f32 and gemm_4096_f16
// (throughput: objects ≈ C; f16 goes through cublasGemmEx with f32 compute on both sides). A pass is `ops`
// calls then a stream synchronize, timed on this process's clock around the whole pass (C's loop runs inside
// the shared library on a handle made once, as the object's is); the passes alternate within each of the 5
// repetitions, the row reports the median per call. Extra columns on the small row: Matmul.execute
// (cuBLASLt, planned once) against `C Lt` (its very cublasLtMatmul call from C), and what the objects row is made of: `typed` (the typed layer's cublasSgemm the
// object calls) and `koffi` (cublasSgemm_v2 bound bare through koffi: the FFI floor). Env: BENCH_SCALE (ops), CUDA_HOME (default /usr/local/cuda), PYTHON, CC.
import koffi from 'koffi';
import { DeviceBuffer, Stream } from '../src';
import { Blas, Matmul, matrix } from '../src/math';
import { loadCublas } from '../src/releases';
import { REPS, fmt, log, median, scaled, table } from './common';
import { buildNative as buildLibrary, cupyRows, interleave, ok, runBench, startGpuBench, verdict } from './math-common';

const SONAMES = ['libcublas.so.13', 'libcudart.so.13', 'libcublasLt.so.13'];

interface NativeBlas {
  /** cublasSgemm_v2 bound straight through koffi (the FFI floor of the JS rows). */
  sgemm: (...args: unknown[]) => number;
  create(stream: number): number;
  /** The Matmul's own cublasLtMatmul (handle, descriptor, layouts, algorithm, workspace) `ops` times from C. */
  ltPass(
    lt: number,
    desc: number,
    la: number,
    lb: number,
    lc: number,
    ld: number,
    a: number,
    b: number,
    d: number,
    algo: Uint8Array,
    ws: number,
    wsSize: number,
    ops: number,
    stream: number,
  ): number;
  pass(state: number, half: number, n: number, a: number, b: number, c: number, ops: number, stream: number): number;
  destroy(state: number): number;
}

/** bench/native/math-blas.c built into a shared library and loaded here, or why not. */
function buildNative(): NativeBlas | string {
  const built = buildLibrary('math-blas.c', 'libblasbench.so', SONAMES);
  if (typeof built === 'string') return built;
  const { lib, libs } = built;
  const cublas = koffi.load(libs[0]);
  return {
    sgemm: cublas.func('cublasSgemm_v2', 'int', [
      'uintptr_t',
      'int32_t',
      'int32_t',
      'int32_t',
      'int32_t',
      'int32_t',
      'void *',
      'uintptr_t',
      'int32_t',
      'uintptr_t',
      'int32_t',
      'void *',
      'uintptr_t',
      'int32_t',
    ]) as (...args: unknown[]) => number,
    create: lib.func('uint64_t mb_create(uint64_t)'),
    pass: lib.func('int mb_gemm_pass(uint64_t, int, int, uint64_t, uint64_t, uint64_t, long, uint64_t)'),
    destroy: lib.func('int mb_destroy(uint64_t)'),
    ltPass: lib.func(
      'int mb_lt_pass(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, void *, uint64_t, uint64_t, long, uint64_t)',
    ),
  } as NativeBlas;
}

interface BenchRow {
  name: string;
  n: number;
  half: boolean;
  ops: number;
  passes: Record<string, (ops: number) => void>;
}

/** One GEMM row: n×n operands (row-major views for the object, the same memory for C), its passes. */
function gemmRow(
  name: string,
  n: number,
  half: boolean,
  ops: number,
  env: { blas: Blas; stream: Stream; native: NativeBlas | string; cState: number; owned: { close(): void }[] },
): BenchRow {
  const dtype = half ? 'f16' : 'f32';
  const bytes = n * n * (half ? 2 : 4);
  const [a, b, c] = [0, 1, 2].map(() => DeviceBuffer.alloc(bytes, { stream: env.stream }).memset(0, { stream: env.stream }));
  env.owned.push(a, b, c);
  const [va, vb, vc] = [a, b, c].map((buf) => matrix(buf, { dtype, rows: n, cols: n }));
  const { blas, stream, native, cState } = env;
  const passes: Record<string, (ops: number) => void> = {
    objects: (k) => {
      for (let i = 0; i < k; i++) blas.gemm(va, vb, vc);
      stream.synchronize();
    },
  };
  if (n === 64 && !half) {
    // the typed layer the object calls, and the bare FFI call: what the object's row is made of
    const typed = loadCublas().cublasSgemm;
    const [pa, pb, pc] = [a.ptr, b.ptr, c.ptr];
    passes.typed = (k) => {
      for (let i = 0; i < k; i++) typed(blas.handle, 0, 0, n, n, n, 1, pa, n, pb, n, 0, pc, n);
      stream.synchronize();
    };
    if (typeof native !== 'string') {
      const [one, zero] = [new Float32Array([1]), new Float32Array([0])];
      passes.koffi = (k) => {
        for (let i = 0; i < k; i++) native.sgemm(blas.handle, 0, 0, n, n, n, one, pa, n, pb, n, zero, pc, n);
        stream.synchronize();
      };
    }
    const mm = Matmul.create({ a: va, b: vb, d: vc, stream }).plan({ algorithms: 1 });
    env.owned.push(mm);
    const operands = { a: va, b: vb, d: vc };
    passes['Matmul.execute'] = (k) => {
      for (let i = 0; i < k; i++) mm.execute(operands);
      stream.synchronize();
    };
    if (typeof native !== 'string') {
      // the very call Matmul.execute makes (its handle, descriptor, layouts, algorithm, workspace), from C
      const h = (mm as unknown as { handles: number[] }).handles;
      const ws = (mm as unknown as { owned: { workspace?: DeviceBuffer } }).owned.workspace;
      const algo = mm.algorithms[0];
      passes['C Lt'] = (k) => {
        ok(native.ltPass(h[0], h[1], h[2], h[3], h[4], h[5], pa, pb, pc, algo.algo, ws?.ptr ?? 0, algo.workspaceBytes, k, stream.handle), 'mb_lt_pass');
      };
    }
  }
  if (typeof native !== 'string') {
    passes.C = (k) => ok(native.pass(cState, half ? 1 : 0, n, a.ptr, b.ptr, c.ptr, k, stream.handle), 'mb_gemm_pass');
  }
  return { name, n, half, ops, passes };
}

function main(): void {
  const { device, stream, native } = startGpuBench(buildNative, 'column');
  const cState = typeof native === 'string' ? 0 : native.create(stream.handle);
  if (typeof native !== 'string' && cState === 0) throw new Error('the C side could not make its cuBLAS handle');
  const blas = Blas.create({ stream });
  const owned: { close(): void }[] = [];
  const env = { blas, stream, native, cState, owned };
  const opsSmall = scaled(20000, 100);
  const opsLarge = scaled(20, 1);
  const rows = [
    gemmRow('gemm_64_f32', 64, false, opsSmall, env),
    gemmRow('gemm_4096_f32', 4096, false, opsLarge, env),
    gemmRow('gemm_4096_f16', 4096, true, opsLarge, env),
  ];
  const results = rows.map((row) => ({ row, reps: interleave(row.passes, row.ops, REPS) }));
  const fromCupy = cupyRows('bench_cupy_gemm.py', ['--ops-small', String(opsSmall), '--ops-large', String(opsLarge)]);
  const cupy = typeof fromCupy === 'string' ? fromCupy : fromCupy.rows;
  if (typeof cupy === 'string') log(`CuPy column skipped: ${cupy}`);

  const lines: string[][] = [];
  const verdicts: string[] = [];
  for (const { row, reps } of results) {
    const med = Object.fromEntries(Object.entries(reps).map(([k, v]) => [k, median(v)]));
    const theirs = typeof cupy === 'string' ? undefined : cupy[row.name];
    const flops = 2 * row.n ** 3;
    const show = (ns: number | undefined) =>
      ns === undefined ? '—' : row.n >= 1024 ? `${fmt(ns / 1e6, 3)} ms (${fmt(flops / ns / 1e3)} TFLOP/s)` : `${fmt(ns / 1e3, 2)} µs`;
    const ratio = (ns: number | undefined) => (ns === undefined || med.C === undefined ? '—' : `${fmt(ns / med.C, 3)}×`);
    const ltRatio = med['C Lt'] === undefined ? '—' : `${fmt(med['Matmul.execute'] / med['C Lt'], 3)}×`;
    lines.push([
      row.name,
      show(med.objects),
      show(med.typed),
      show(med.koffi),
      show(med.C),
      show(med['Matmul.execute']),
      show(med['C Lt']),
      show(theirs),
      ratio(med.objects),
      ratio(med.typed),
      ratio(med.koffi),
      ltRatio,
      ratio(theirs),
    ]);
    const target = row.n >= 1024 ? 1.02 : 1.05;
    if (med.C !== undefined) verdicts.push(verdict(row.name, 'objects/C', med.objects / med.C, target));
    if (med['C Lt'] !== undefined) verdicts.push(verdict(row.name, 'Matmul.execute/C Lt', med['Matmul.execute'] / med['C Lt'], target));
  }
  console.log(
    `\nBlas.gemm vs C (same process) and CuPy on ${device.name}: per call, median of ${REPS} interleaved repetitions (${opsSmall} calls small, ${opsLarge} large):\n`,
  );
  console.log(
    table(['row', 'objects', 'typed', 'koffi', 'C', 'Matmul.execute', 'C Lt', 'CuPy', 'objects/C', 'typed/C', 'koffi/C', 'Matmul/C Lt', 'CuPy/C'], lines),
  );
  for (const v of verdicts) console.log(v);
  console.log(JSON.stringify({ impl: 'math-blas', device: device.name, rows: Object.fromEntries(results.map(({ row, reps }) => [row.name, reps])), cupy }));

  if (typeof native !== 'string') native.destroy(cState);
  for (const r of owned.reverse()) r.close();
  blas.close();
  stream.close();
}

runBench('math-blas', main);
