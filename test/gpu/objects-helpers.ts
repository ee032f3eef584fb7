// What the objects-layer GPU suites share (objects, objects-robustness; graph uses child()): the
// kernels they compile, the process's RSS, and a child process for what may crash or needs --expose-gc.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { TS_RUNNER } from './gpu-env';

const ROOT = resolve(__dirname, '../..');

export const SOURCE = `
struct Pair { int a; double b; };
extern "C" __global__ void vadd(const float* a, const float* b, float* c, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void pairk(Pair p, long long q, unsigned char u, short s, double* out) { out[0] = p.a + p.b + q + u + s; }
extern "C" __global__ void fill(int* p, int v, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v;
}
extern "C" __global__ void slowfill(int* p, int v, unsigned n, long long spin) {
  long long t0 = clock64(); while (clock64() - t0 < spin) {}
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v;
}
template <typename T> __global__ void scale(T* x, T s, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= s;
}
`;

export function rssMiB(): number {
  return Math.round(process.memoryUsage().rss / 2 ** 20);
}

/** Runs `code` (CommonJS, may `require(ROOT + '/src')`) in this runtime with --expose-gc, through scripts/run-ts.cjs. */
export function child(code: string): { status: number | null; stdout: string; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-'));
  const file = join(dir, 'child.js');
  writeFileSync(
    file,
    `const cuda = require(${JSON.stringify(join(ROOT, 'src/index.ts'))});\n(async () => {\n${code}\n})().catch((e) => { console.error('CHILD-ERROR', e && e.stack || e); process.exit(3); });\n`,
  );
  const r = spawnSync(process.execPath, ['--expose-gc', TS_RUNNER, file], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
