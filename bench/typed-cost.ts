// What argument validation costs the typed layer (issue 11): trivial calls through a hand-declared koffi
// function, the raw layer, the typed layer, and (when present) the typed layer as it was before
// validation (bench/.scratch/before/<release>/<module>/index.ts, the emitter's output at the commit
// before; made by `npx tsx bench/typed-cost.ts --make-before <commit>`). Implementations are
// interleaved per repetition; each row prints the median per-repetition ratio and its spread.
//   npx tsx bench/typed-cost.ts            GPU: cuCtxGetCurrent, cuDeviceGetAttribute; else libcudart calls
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import koffi from 'koffi';
import { loadLibrary } from '../support';

const root = join(__dirname, '..');
const beforeDir = join(root, 'bench', '.scratch', 'before', '13.0');

if (process.argv[2] === '--make-before') {
  const commit = process.argv[3];
  for (const m of ['driver', 'runtime']) {
    const text = execFileSync('git', ['show', `${commit}:generated/13.0/${m}/index.ts`], { cwd: root, encoding: 'utf8' })
      .replace(/from '\.\/binding'/g, `from '../../../../../generated/13.0/${m}/binding'`)
      .replace(/from '\.\/types'/g, `from '../../../../../generated/13.0/${m}/types'`)
      .replace(/from '\.\.\/\.\.\/\.\.\/src\/runtime'/g, `from '../../../../../support'`);
    mkdirSync(join(beforeDir, m), { recursive: true });
    writeFileSync(join(beforeDir, m, 'index.ts'), text);
  }
  console.log(`typed layer of ${commit} written to ${beforeDir}`);
  process.exit(0);
}

type Impl = { name: string; run: (n: number) => void };
interface Row { name: string; impls: Impl[] }

function gpuRows(): Row[] | undefined {
  let lib;
  try {
    lib = loadLibrary({ module: 'driver', sonames: ['libcuda.so.1'], env: 'CUDA_TS_DRIVER_LIBRARY' });
  } catch {
    return undefined;
  }
  if (lib.func('cuInit', 'int', ['uint32_t'])(0) !== 0) return undefined;
  const typed = require('../generated/13.0/driver') as typeof import('../generated/13.0/driver');
  const raw = require('../generated/13.0/driver/raw') as typeof import('../generated/13.0/driver/raw');
  const before = existsSync(join(beforeDir, 'driver', 'index.ts')) ? (require(join(beforeDir, 'driver', 'index.ts')) as typeof typed) : undefined;
  const dev = typed.cuDeviceGet(0);
  typed.cuCtxSetCurrent(typed.cuDevicePrimaryCtxRetain(dev));
  const getCurrent = lib.func('cuCtxGetCurrent', 'int', ['void *']);
  const getAttr = lib.func('cuDeviceGetAttribute', 'int', ['void *', 'int', 'int']);
  const out64 = new BigUint64Array(1);
  const out32 = new Int32Array(1);
  const attr = typed.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
  const rows: Row[] = [
    {
      name: 'cuCtxGetCurrent',
      impls: [
        { name: 'koffi', run: (n) => { for (let i = 0; i < n; i++) getCurrent(out64); } },
        { name: 'raw', run: (n) => { for (let i = 0; i < n; i++) raw.cuCtxGetCurrent(out64); } },
        { name: 'typed', run: (n) => { for (let i = 0; i < n; i++) typed.cuCtxGetCurrent(); } },
      ],
    },
    {
      name: 'cuDeviceGetAttribute',
      impls: [
        { name: 'koffi', run: (n) => { for (let i = 0; i < n; i++) getAttr(out32, attr, dev); } },
        { name: 'raw', run: (n) => { for (let i = 0; i < n; i++) raw.cuDeviceGetAttribute(out32, attr, dev); } },
        { name: 'typed', run: (n) => { for (let i = 0; i < n; i++) typed.cuDeviceGetAttribute(attr, dev); } },
      ],
    },
  ];
  if (before) {
    rows[0].impls.push({ name: 'typed before', run: (n) => { for (let i = 0; i < n; i++) before.cuCtxGetCurrent(); } });
    rows[1].impls.push({ name: 'typed before', run: (n) => { for (let i = 0; i < n; i++) before.cuDeviceGetAttribute(attr, dev); } });
  }
  return rows;
}

function cpuRows(): Row[] {
  const lib = loadLibrary({ module: 'runtime', sonames: ['libcudart.so.13'], env: 'CUDA_TS_RUNTIME_LIBRARY' });
  const typed = require('../generated/13.0/runtime') as typeof import('../generated/13.0/runtime');
  const raw = require('../generated/13.0/runtime/raw') as typeof import('../generated/13.0/runtime/raw');
  const before = existsSync(join(beforeDir, 'runtime', 'index.ts')) ? (require(join(beforeDir, 'runtime', 'index.ts')) as typeof typed) : undefined;
  const version = lib.func('cudaRuntimeGetVersion', 'int', ['void *']);
  const out32 = new Int32Array(1);
  const rows: Row[] = [
    {
      name: 'cudaRuntimeGetVersion',
      impls: [
        { name: 'koffi', run: (n) => { for (let i = 0; i < n; i++) version(out32); } },
        { name: 'raw', run: (n) => { for (let i = 0; i < n; i++) raw.cudaRuntimeGetVersion(out32); } },
        { name: 'typed', run: (n) => { for (let i = 0; i < n; i++) typed.cudaRuntimeGetVersion(); } },
      ],
    },
  ];
  if (before) rows[0].impls.push({ name: 'typed before', run: (n) => { for (let i = 0; i < n; i++) before.cudaRuntimeGetVersion(); } });
  return rows;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const gpu = gpuRows();
const rows = gpu ?? cpuRows();
const REPS = Number(process.env.BENCH_REPS ?? 9);
const N = Number(process.env.BENCH_CALLS ?? 200_000);
console.log(`typed-layer cost: ${gpu ? 'GPU (libcuda)' : 'CPU (libcudart, no GPU)'}; ${REPS} interleaved repetitions of ${N} calls; ns per call`);
const results: Record<string, Record<string, number[]>> = {};
for (const row of rows) {
  const times: Record<string, number[]> = Object.fromEntries(row.impls.map((i) => [i.name, []]));
  for (const impl of row.impls) impl.run(N / 10); // warm
  for (let r = 0; r < REPS; r++) {
    const order = row.impls.map((_, k) => row.impls[(k + r) % row.impls.length]);
    for (const impl of order) {
      const t0 = process.hrtime.bigint();
      impl.run(N);
      times[impl.name].push(Number(process.hrtime.bigint() - t0) / N);
    }
  }
  results[row.name] = times;
  const ratio = (a: string, b: string) => {
    if (!times[a] || !times[b]) return '';
    const rs = times[a].map((t, k) => t / times[b][k]);
    return `${median(rs).toFixed(2)}× [${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)}]`;
  };
  const cells = row.impls.map((i) => `${i.name} ${median(times[i.name]).toFixed(1)}`).join(' | ');
  console.log(`${row.name}: ${cells}`);
  console.log(`  typed/koffi ${ratio('typed', 'koffi')} (target ≤ 1.2)  typed/raw ${ratio('typed', 'raw')} (target ≤ 1.3)` +
    (times['typed before'] ? `  before: typed/koffi ${ratio('typed before', 'koffi')}  typed/raw ${ratio('typed before', 'raw')}  after/before ${ratio('typed', 'typed before')}` : ''));
}
if (process.env.OUT) writeFileSync(join(process.env.OUT, 'typed-cost.json'), JSON.stringify(results, null, 1));
void koffi;
