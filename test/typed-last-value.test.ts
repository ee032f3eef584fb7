// A typed function whose one output is a 64-bit number from its Scratch (a handle, address or size)
// gives back the number it returned last while the slot holds the same value (generator/emit/typed.ts,
// lastKept: V8 would box a new one on every return). What a user can see of that: nothing. Each call
// returns what C wrote, whichever half of the value changed, on the stand-in driver of
// bench/native/fake-cuda-launch.c loaded as the driver module's library, in a child process (a library
// loaded as libcuda.so.1 would stay the driver of every later test file in this worker).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runScript } from './helpers/run-script';

const ROOT = join(__dirname, '..');
const A = 0x7f12_3456_7000;
/** Contexts made current in turn: the same twice, then the high half, the low half, both, null. */
const CONTEXTS = [A, A, A + 2 ** 32, A + 0x1000, 0, A, 2 ** 52 + 0x5000, 0x5000, 2 ** 32, 0, 2 ** 32];

const SCRIPT = `
const drv = require(${JSON.stringify(join(ROOT, 'generated', '13.0', 'driver'))});
const seen = [];
for (const v of ${JSON.stringify(CONTEXTS)}) {
  drv.cuCtxSetCurrent(v === 0 ? null : v);
  seen.push(drv.cuCtxGetCurrent(), drv.cuCtxGetCurrent());
}
const allocs = [drv.cuMemAlloc(1), drv.cuMemAlloc(1 << 20), drv.cuMemAlloc(1)];
console.log(JSON.stringify({ seen, allocs }));
`;

test("a typed getter returns what C wrote on every call: cuCtxGetCurrent after each cuCtxSetCurrent, cuMemAlloc's new addresses", () => {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-last-'));
  try {
    const lib = join(dir, 'libcuda.so.1');
    const built = spawnSync('gcc', ['-O2', '-shared', '-fPIC', '-Wl,-soname,libcuda.so.1', '-o', lib, join(ROOT, 'bench', 'native', 'fake-cuda-launch.c')], {
      encoding: 'utf8',
    });
    expect({ status: built.status, stderr: built.stderr }).toEqual({ status: 0, stderr: '' });
    const r = runScript(SCRIPT, { cwd: ROOT, env: { ...process.env, CUDA_TS_DRIVER_LIBRARY: lib } });
    // stderr is shown on a failure, not required empty: Node 26's node:ffi warns that it is experimental
    expect({ status: r.status, stderr: r.status === 0 ? '' : r.stderr }).toEqual({ status: 0, stderr: '' });
    const { seen, allocs } = JSON.parse(r.stdout.trim().split('\n').pop()!) as { seen: number[]; allocs: number[] };
    expect(seen).toEqual(CONTEXTS.flatMap((v) => [v, v]));
    // the stand-in hands out addresses 1 MiB apart: each call's own, never the one before
    expect([allocs[1] - allocs[0], allocs[2] - allocs[1]]).toEqual([1 << 20, 1 << 20]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
