// Stream-ordered alloc + free of 1 MiB, all in one run (issue 12's target: the objects layer's pair at
// most 0.5× C's cuMemAllocAsync + cuMemFreeAsync):
//   - c:               bench/native's alloc_free_async_1MiB row (built with bench/native/build.sh when
//                      missing; BENCH_NATIVE names another binary; skipped without gcc/cuda.h);
//   - raw pair:        cuMemAllocAsync + cuMemFreeAsync through the objects layer's door (one koffi call each);
//   - objects cached:  DeviceBuffer.alloc(1 MiB, { stream }).close() through the caching allocator;
//   - objects uncached: the same with { cache: false } (a driver call each way);
//   - cupy pool:       CuPy's default memory pool, malloc + free on a stream (skipped without CuPy).
// Method as bench.c's: same stream kind (CU_STREAM_NON_BLOCKING), a synchronize every 1000 pairs inside
// the timed region, one warm-up pass, median of 5 passes.
//
//   npx tsx bench/allocator.ts            (or BENCH_LOADER=js|tsx; prints a table and one JSON line)
// Exit status 0 always; the PASS/FAIL is in the output (`allocator target: PASS …`).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ALLOC_BYTES, BATCH, REPO_ROOT, measure, reason, scaled, type MeasuredRow } from './common';
import { loadModule, type Loader } from './startup';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const LOADER = (process.env.BENCH_LOADER as Loader) || 'js';
const OPS = scaled(20_000, BATCH);

function nativeC(): number | string {
  const bin = process.env.BENCH_NATIVE ?? '/tmp/cuda-ts-bench/bench';
  try {
    if (!existsSync(bin)) execFileSync('bash', [join(REPO_ROOT, 'bench/native/build.sh'), join(bin, '..')], { stdio: ['ignore', 'ignore', 'pipe'] });
    const r = spawnSync(bin, [], { encoding: 'utf8', timeout: 300_000 });
    if (r.status !== 0) return `native bench failed: ${r.stderr.trim().split('\n').pop()}`;
    const rows = JSON.parse(r.stdout).rows as Record<string, { median: number }>;
    return rows.alloc_free_async_1MiB.median;
  } catch (e) {
    return `native bench unavailable: ${reason(e)}`;
  }
}

function cupyPool(): number | string {
  const py = `
import time, cupy
s = cupy.cuda.Stream(non_blocking=True)
mp = cupy.get_default_memory_pool()
def run(n):
    with s:
        for i in range(n):
            p = mp.malloc(${ALLOC_BYTES}); del p
            if (i + 1) % ${BATCH} == 0: s.synchronize()
        s.synchronize()
run(${BATCH})
reps = []
for k in range(5):
    t0 = time.perf_counter_ns(); run(${OPS}); reps.append((time.perf_counter_ns() - t0) / ${OPS})
reps.sort(); print(reps[2])
`;
  const r = spawnSync(process.env.BENCH_PYTHON ?? 'python3', ['-c', py], { encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) return `CuPy unavailable: ${(r.stderr || r.error?.message || '').trim().split('\n').pop()}`;
  return Number(r.stdout.trim());
}

function main(): void {
  const O: Any = loadModule<Any>('src/index', LOADER);
  const drv: Any = loadModule<Any>('src/driver', LOADER);
  O.Device.get(Number(process.env.BENCH_DEVICE ?? 0)).setCurrent();
  const stream = O.Stream.create({ nonBlocking: true });
  const ctx = stream.context;
  const h = stream.handle;

  const rows: Record<string, number | string> = {};
  // Node first (the C binary and Python run in their own processes afterwards).
  const alloc = drv.native('cuMemAllocAsync');
  const free = drv.native('cuMemFreeAsync');
  const out = new BigUint64Array(1);
  ctx.bind();
  const pass = (one: () => void) => (ops: number) => {
    for (let i = 0; i < ops; i++) {
      one();
      if ((i + 1) % BATCH === 0) stream.synchronize();
    }
    stream.synchronize();
  };
  const rowOf = (m: MeasuredRow) => m.median;
  rows['raw pair (door, 2 koffi calls)'] = rowOf(
    measure(
      pass(() => {
        if (alloc(out, ALLOC_BYTES, h) !== 0) throw new Error('cuMemAllocAsync failed');
        if (free(Number(out[0]), h) !== 0) throw new Error('cuMemFreeAsync failed');
      }),
      OPS,
      BATCH,
    ),
  );
  const opts = { stream };
  rows['objects, caching allocator'] = rowOf(
    measure(
      pass(() => O.DeviceBuffer.alloc(ALLOC_BYTES, opts).close()),
      OPS,
      BATCH,
    ),
  );
  const uncached = { stream, cache: false };
  rows['objects, { cache: false }'] = rowOf(
    measure(
      pass(() => O.DeviceBuffer.alloc(ALLOC_BYTES, uncached).close()),
      OPS,
      BATCH,
    ),
  );
  const stats = O.CachingAllocator.stats(ctx);
  stream.close();
  rows['c (bench/native)'] = nativeC();
  rows['cupy pool (malloc + free)'] = cupyPool();

  const c = rows['c (bench/native)'];
  const cached = rows['objects, caching allocator'] as number;
  console.log('| alloc + free 1 MiB, stream-ordered | ns per pair | × C |');
  console.log('|---|---|---|');
  for (const [name, v] of Object.entries(rows)) {
    console.log(`| ${name} | ${typeof v === 'number' ? v.toFixed(0) : v} | ${typeof v === 'number' && typeof c === 'number' ? (v / c).toFixed(2) : ''} |`);
  }
  if (typeof c === 'number')
    console.log(
      `allocator target: ${cached <= 0.5 * c ? 'PASS' : 'FAIL'} (objects caching allocator ${cached.toFixed(0)} ns = ${(cached / c).toFixed(2)}× C ${c.toFixed(0)} ns; target ≤ 0.5×)`,
    );
  else console.log(`allocator target: not judged (${c})`);
  console.log(JSON.stringify({ loader: LOADER, ops: OPS, rows, stats }));
}

main();
