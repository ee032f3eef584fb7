// The on-disk kernel cache on a GPU (src/kernel-cache.ts): a second process compiling the same
// kernel (NVRTC) and linking the same LTO-IR (nvJitLink) reads the cache instead, and the kernel it
// loads from there computes the same result. How fast that is belongs to the bench, not here.
// Children run under the runtime running this suite (Node, Bun or Deno; see scripts/run-ts.cjs).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describeGpu } from './gpu-env';

const ROOT = join(__dirname, '..', '..');
const SOURCE =
  'extern "C" __global__ void fill(int *out, int value, unsigned n) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = value + (int)i; }';

/** One child process (test/gpu/fixtures/kernel-cache-child.ts): compiles, links, launches and prints what came from the cache and the result. */
const CHILD = join(ROOT, 'test', 'gpu', 'fixtures', 'kernel-cache-child.ts');

/** Runs the child under this suite's runtime with `env` added; its JSON answer. */
function runChild(env: Record<string, string>): { program: boolean; lto: boolean; linker: boolean; results: boolean[]; nvrtc: string | null } {
  const runner = join(ROOT, 'scripts', 'run-ts.cjs');
  const args = process.versions.deno ? ['run', '-A', runner, CHILD] : [runner, CHILD];
  const r = spawnSync(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env, KERNEL_CACHE_SOURCE: SOURCE }, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`child exited ${r.status}: ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

describeGpu('kernel cache (NVRTC and nvJitLink) across processes', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cuda-ts-kc-gpu-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('the first process compiles and links; the second reads all three from the cache and computes the same', () => {
    const cache = join(dir, 'cache');
    const first = runChild({ CUDA_TS_CACHE_DIR: cache });
    expect(first).toMatchObject({ program: false, lto: false, linker: false, results: [true, true] });
    expect(first.nvrtc).toMatch(/libnvrtc\.so/);
    expect(readdirSync(cache).filter((f) => f.endsWith('.kc'))).toHaveLength(3);
    const second = runChild({ CUDA_TS_CACHE_DIR: cache });
    // both compilations answered from the cache: libnvrtc never loaded
    expect(second).toEqual({ program: true, lto: true, linker: true, results: [true, true], nvrtc: null });
  });

  test('another libnvrtc file (a copy: another inode) misses, compiles with it, then hits for it', () => {
    const cache = join(dir, 'cache3');
    const real = runChild({ CUDA_TS_CACHE_DIR: cache }).nvrtc!;
    const copy = join(dir, 'libnvrtc.so.13');
    copyFileSync(real, copy);
    // NVRTC may look for its builtins library beside itself
    for (const f of readdirSync(dirname(real)).filter((n) => n.startsWith('libnvrtc-builtins'))) copyFileSync(join(dirname(real), f), join(dir, f));
    const other = runChild({ CUDA_TS_CACHE_DIR: cache, CUDA_TS_NVRTC_LIBRARY: copy });
    expect(other).toMatchObject({ program: false, lto: false, results: [true, true], nvrtc: realpathSync(copy) });
    expect(runChild({ CUDA_TS_CACHE_DIR: cache, CUDA_TS_NVRTC_LIBRARY: copy })).toMatchObject({ program: true, lto: true, results: [true, true], nvrtc: null });
    expect(runChild({ CUDA_TS_CACHE_DIR: cache })).toMatchObject({ program: true, lto: true, nvrtc: null });
  });

  test('CUDA_TS_CACHE=0 compiles again; a size bound below one entry keeps none', () => {
    const cache = join(dir, 'cache2');
    runChild({ CUDA_TS_CACHE_DIR: cache });
    expect(runChild({ CUDA_TS_CACHE_DIR: cache, CUDA_TS_CACHE: '0' })).toMatchObject({ program: false, lto: false, linker: false, results: [true, true] });
    const tiny = join(dir, 'tiny');
    runChild({ CUDA_TS_CACHE_DIR: tiny, CUDA_TS_CACHE_MAX_BYTES: '64' });
    expect(runChild({ CUDA_TS_CACHE_DIR: tiny, CUDA_TS_CACHE_MAX_BYTES: '64' })).toMatchObject({
      program: false,
      lto: false,
      linker: false,
      results: [true, true],
    });
  });
});
