// The on-disk kernel cache on a GPU (src/kernel-cache.ts): a second process compiling the same
// kernel (NVRTC) and linking the same LTO-IR (nvJitLink) reads the cache instead, and the kernel it
// loads from there computes the same result. How fast that is belongs to the bench, not here.
// Children run under the runtime running this suite (Node, Bun or Deno; see scripts/run-ts.cjs).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeGpu } from './gpu-env';

const ROOT = join(__dirname, '..', '..');
const SOURCE = 'extern "C" __global__ void fill(int *out, int value, unsigned n) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = value + (int)i; }';

/** One child process: compiles, links, launches and prints what came from the cache and the result. */
const CHILD = `
const cuda = require(${JSON.stringify(join(ROOT, 'src', 'index.ts'))});
const device = cuda.Device.get(0);
device.setCurrent();
const program = new cuda.Program(${JSON.stringify(SOURCE)}).compile();
const module = program.load();
const lto = new cuda.Program(${JSON.stringify(SOURCE)}, { name: 'lto.cu' }).compile({ lto: true });
const linker = new cuda.Linker({ lto: true });
const linked = cuda.Module.fromCubin(linker.add('ltoir', lto.ltoir, 'fill.ltoir').complete());
const stream = cuda.Stream.create();
const results = [];
for (const m of [module, linked]) {
  const buf = cuda.DeviceBuffer.alloc(4 * 1000);
  cuda.launch(stream, cuda.LaunchConfig.linear(1000), m.kernel('fill', ['ptr', 'i32', 'u32']), buf, 7, 1000);
  stream.synchronize();
  const host = buf.copyTo(new Int32Array(1000));
  results.push(host.every((v, i) => v === 7 + i));
  buf.close();
}
process.stdout.write(JSON.stringify({ program: program.fromCache, lto: lto.fromCache, linker: linker.fromCache, results }));
`;

/** Runs CHILD under this suite's runtime with `env` added; its JSON answer. */
function runChild(dir: string, env: Record<string, string>): { program: boolean; lto: boolean; linker: boolean; results: boolean[] } {
  const file = join(dir, 'child.cjs');
  writeFileSync(file, CHILD);
  const runner = join(ROOT, 'scripts', 'run-ts.cjs');
  const args = process.versions.deno ? ['run', '-A', runner, file] : [runner, file];
  const r = spawnSync(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 120_000 });
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
    const first = runChild(dir, { CUDA_TS_CACHE_DIR: cache });
    expect(first).toEqual({ program: false, lto: false, linker: false, results: [true, true] });
    expect(readdirSync(cache).filter((f) => f.endsWith('.kc'))).toHaveLength(3);
    const second = runChild(dir, { CUDA_TS_CACHE_DIR: cache });
    expect(second).toEqual({ program: true, lto: true, linker: true, results: [true, true] });
  });

  test('CUDA_TS_CACHE=0 compiles again; a size bound below one entry keeps none', () => {
    const cache = join(dir, 'cache2');
    runChild(dir, { CUDA_TS_CACHE_DIR: cache });
    expect(runChild(dir, { CUDA_TS_CACHE_DIR: cache, CUDA_TS_CACHE: '0' })).toEqual({ program: false, lto: false, linker: false, results: [true, true] });
    const tiny = join(dir, 'tiny');
    runChild(dir, { CUDA_TS_CACHE_DIR: tiny, CUDA_TS_CACHE_MAX_BYTES: '64' });
    expect(runChild(dir, { CUDA_TS_CACHE_DIR: tiny, CUDA_TS_CACHE_MAX_BYTES: '64' })).toEqual({ program: false, lto: false, linker: false, results: [true, true] });
  });
});
