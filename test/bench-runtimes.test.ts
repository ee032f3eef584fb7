// bench/runtimes-report.ts and bench/runtimes-gpu.ts (issue 26 §2, §3): the Node / Bun / Deno table, its
// verdicts against C of the same process, and the chart's per-runtime base, on fabricated results (no GPU).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ImplResult, MeasuredRow } from '../bench/common';
import { findRuntimeBinary } from '../bench/runtime-binaries';
import { chartRowsFrom } from '../bench/chart';
import { CHILD_IMPLS, anyRuntime, runtimeImpl, runtimeTable, runtimeVerdicts } from '../bench/runtimes-report';
import { type Spawn, childCommand, childImpls, childTree, runtimeGpu, skippedImpls } from '../bench/runtimes-gpu';
import type { ChildResult } from '../bench/runtime-child';

const BENCH = join(__dirname, '..', 'bench');

/** An interleaved row whose repetitions are `reps` (ns). */
const row = (...reps: number[]): MeasuredRow => ({ median: [...reps].sort((a, b) => a - b)[reps.length >> 1], unit: 'ns', n: 1000, reps, interleaved: true });
const impl = (name: string, rows: Record<string, MeasuredRow>): ImplResult => ({ impl: name, meta: {}, rows });

/** Node, Bun and Deno columns: C 10 ns / 2000 ns; Bun's typed call 1.5× C, Deno's 3×; launches per runtime as given. */
function results(launch: { node: number[]; bun: number[]; deno: number[] }): ImplResult[] {
  const out: ImplResult[] = [];
  for (const rt of ['node', 'bun', 'deno'] as const) {
    const C = [2000, 2000, 2000];
    out.push(
      impl(runtimeImpl('native-c-inproc', rt), {
        cuCtxGetCurrent: row(10, 10, 10),
        cuDeviceGetAttribute: row(10, 10, 10),
        launch_0args: row(...C),
        launch_4args: row(...C),
      }),
    );
    const typed = rt === 'deno' ? 30 : 15;
    out.push(impl(runtimeImpl('cuda-ts-typed', rt), { cuCtxGetCurrent: row(typed, typed, typed), cuDeviceGetAttribute: row(typed, typed, typed) }));
    out.push(impl(runtimeImpl('cuda-ts-objects', rt), { launch_0args: row(...launch[rt]), launch_4args: row(...launch[rt]) }));
  }
  return out;
}

describe('runtimeVerdicts', () => {
  test("trivial typed call ≤ 2× C per child runtime, each against its own process's C", () => {
    const v = runtimeVerdicts(results({ node: [2200, 2200, 2200], bun: [2000, 2040, 2050], deno: [2100, 2100, 2100] }));
    const trivial = v.filter((x) => x.target.includes('trivial'));
    expect(trivial.map((x) => [x.target.split(':')[0], x.row, x.verdict])).toEqual([
      ['Bun', 'cuCtxGetCurrent', 'PASS'],
      ['Bun', 'cuDeviceGetAttribute', 'PASS'],
      ['Deno', 'cuCtxGetCurrent', 'FAIL'],
      ['Deno', 'cuDeviceGetAttribute', 'FAIL'],
    ]);
    expect(trivial[0].judged).toBe('cuda-ts-typed-bun vs native-c-inproc-bun');
    expect(trivial[0].value).toBe("1.500x [1.500-1.500]; all reps: only 3 of 3 quiet (C ≤ 1.3× the run's quiet floor 10.00 ns)");
  });

  test('trivial calls are judged on the quiet repetitions: C within 1.3× of the quietest C of the run, any process', () => {
    const all = results({ node: [2000, 2000, 2000], bun: [2000, 2000, 2000], deno: [2000, 2000, 2000] });
    // Deno's process: C 7 ns and typed 13 ns in 8 quiet repetitions, C 12 and typed 27 in 13 contended ones
    const deno = (quiet: number, contended: number) => row(...Array(8).fill(quiet), ...Array(13).fill(contended));
    all.find((r) => r.impl === 'native-c-inproc-deno')!.rows!.cuCtxGetCurrent = deno(7, 12);
    all.find((r) => r.impl === 'cuda-ts-typed-deno')!.rows!.cuCtxGetCurrent = deno(13, 27);
    const v = runtimeVerdicts(all).find((x) => x.target.startsWith('Deno: trivial') && x.row === 'cuCtxGetCurrent')!;
    expect(v.verdict).toBe('PASS');
    expect(v.value).toMatch(/^1\.857x \[1\.857-1\.857\] on 8 of 21 quiet reps \(C ≤ 1\.3× the run's quiet floor 7\.00 ns\); all reps 2\.250x/);
    // every process contended throughout: nothing quieter sets the floor, so it is 12 ns, every repetition
    // counts as quiet against it, and the verdict is the one over all of them
    for (const rt of ['node', 'bun'] as const) all.find((r) => r.impl === runtimeImpl('native-c-inproc', rt))!.rows!.cuCtxGetCurrent = row(12, 12, 12);
    all.find((r) => r.impl === 'native-c-inproc-deno')!.rows!.cuCtxGetCurrent = row(...Array(21).fill(12));
    all.find((r) => r.impl === 'cuda-ts-typed-deno')!.rows!.cuCtxGetCurrent = row(...Array(21).fill(27));
    const w = runtimeVerdicts(all).find((x) => x.target.startsWith('Deno: trivial') && x.row === 'cuCtxGetCurrent')!;
    expect(w.verdict).toBe('FAIL');
    expect(w.value).toContain('21 of 21 quiet reps');
  });

  test('objects launch ≤ 1.03× C: one line per runtime, and one "under at least one runtime" that a noisy runtime does not pass', () => {
    const v = runtimeVerdicts(results({ node: [2200, 2200, 2200], bun: [2000, 2040, 2080], deno: [2100, 2100, 2100] }));
    const l0 = v.filter((x) => x.row === 'launch_0args');
    expect(l0.map((x) => x.verdict)).toEqual(['FAIL', 'noisy', 'FAIL', 'noisy']);
    expect(l0[3].target).toBe('objects launch ≤ 1.03× C under at least one runtime');
    const pass = runtimeVerdicts(results({ node: [2200, 2200, 2200], bun: [2000, 2040, 2050], deno: [2100, 2100, 2100] })).filter(
      (x) => x.row === 'launch_4args',
    );
    expect(pass.map((x) => x.verdict)).toEqual(['FAIL', 'PASS', 'FAIL', 'PASS']);
    expect(pass[3].judged).toBe('cuda-ts-objects, cuda-ts-objects-bun, cuda-ts-objects-deno');
  });

  test('a runtime that did not run is SKIP with its reason, never a crash', () => {
    const all = results({ node: [2000, 2000, 2000], bun: [1, 1, 1], deno: [1, 1, 1] }).filter((r) => !r.impl.endsWith('-bun') && !r.impl.endsWith('-deno'));
    all.push(
      ...skippedImpls('bun', 'bun not found (set BUN, put it on PATH or at /tmp/bun/bun)'),
      ...skippedImpls('deno', 'deno 2.9.6: driver setup failed: no GPU'),
    );
    const v = runtimeVerdicts(all);
    const bun = v.find((x) => x.target.startsWith('Bun: trivial'))!;
    expect(bun.verdict).toBe('SKIP');
    expect(bun.why).toContain('bun not found');
    expect(v.find((x) => x.target.startsWith('Deno: objects'))!.why).toContain('no GPU');
    expect(v.filter((x) => x.target.includes('at least one')).map((x) => x.verdict)).toEqual(['PASS', 'PASS']);
    expect(
      anyRuntime(
        't',
        'r',
        v.filter((x) => x.verdict === 'SKIP'),
      ).verdict,
    ).toBe('SKIP');
  });
});

describe('runtimeTable', () => {
  test("per runtime its C, raw, typed, objects, ratios to that runtime's C; skipped runtimes named by reason", () => {
    const all = results({ node: [2200, 2200, 2200], bun: [2000, 2000, 2000], deno: [2100, 2100, 2100] }).filter((r) => !r.impl.endsWith('-deno'));
    all.push(...skippedImpls('deno', 'deno not found (set DENO, put it on PATH or at /tmp/deno/deno)'));
    const text = runtimeTable(all);
    const header = text.split('\n')[1];
    for (const col of ['Node C', 'Node typed', 'Bun C', 'Bun objects', 'Deno raw', 'Deno objects']) expect(header).toContain(col);
    const ctx = text.split('\n').find((l) => l.startsWith('cuCtxGetCurrent'))!;
    expect(ctx).toContain('15.00 1.50x');
    const l0 = text.split('\n').find((l) => l.startsWith('launch_0args'))!;
    expect(l0).toContain('2200 1.10x');
    expect(l0).toContain('2000 1.00x');
    expect(l0).toContain('skip[');
    expect(text).toMatch(/\[\d+\] deno not found/);
  });

  test('says which FFI each child runtime bound the timed functions through and how it loaded C', () => {
    const all = results({ node: [1], bun: [1], deno: [1] });
    all.find((r) => r.impl === 'cuda-ts-typed-bun')!.meta = {
      version: '1.4.5',
      backends: { cuCtxGetCurrent: { backend: 'bun' }, cuLaunchKernel: { backend: 'koffi', reason: 'too many arguments' } },
      native_c_loaded_by: 'bun:ffi dlopen',
    };
    expect(runtimeTable(all)).toContain('  Bun 1.4.5: cuCtxGetCurrent via bun, cuLaunchKernel via koffi (too many arguments); C loaded by bun:ffi dlopen');
  });
});

describe('runtimes-gpu', () => {
  test("a child result becomes the runtime's columns; an implementation without passes is skipped with its note", () => {
    const res = {
      runtime: 'bun',
      version: '1.4.5',
      meta: { native_c_loaded_by: 'bun:ffi dlopen' },
      rows: { 'native-c-inproc': { launch_0args: row(1, 2, 3) }, 'cuda-ts-typed': { cuCtxGetCurrent: row(4, 5, 6) } },
      notes: { 'cuda-ts-objects': 'Module.fromPTX: no GPU' },
    };
    const impls = childImpls('bun', res);
    expect(impls.map((r) => r.impl)).toEqual(CHILD_IMPLS.map((i) => `${i}-bun`));
    expect(impls[0].rows.launch_0args).toEqual(row(1, 2, 3));
    expect(impls[0].meta.how).toBe('bun 1.4.5, same process as C (libbench.so through bun:ffi dlopen)');
    expect(impls.find((r) => r.impl === 'cuda-ts-objects-bun')!.skipped).toBe('Module.fromPTX: no GPU');
    expect(impls.find((r) => r.impl === 'cuda-ts-raw-bun')!.skipped).toBe('not measured');
  });

  test('Deno runs the child with `run` and its permissions, Bun runs it directly', () => {
    expect(childCommand('deno', '/d/deno', 'x.js')).toEqual(['/d/deno', 'run', '--allow-all', 'x.js']);
    expect(childCommand('bun', '/b/bun', 'x.js')).toEqual(['/b/bun', 'x.js']);
  });
});

describe('chartRowsFrom with runtime columns', () => {
  test('a -bun / -deno column is divided by C of its own process, and that C draws no bar', () => {
    const rows = chartRowsFrom(results({ node: [2200, 2200, 2200], bun: [3000, 3000, 3000], deno: [4000, 4000, 4000] }));
    const l0 = rows.find((r) => r.label === 'launch_0args')!;
    expect(l0.ratios).toEqual({ 'cuda-ts-objects': 1.1, 'cuda-ts-objects-bun': 1.5, 'cuda-ts-objects-deno': 2 });
    const bunC = results({ node: [1], bun: [1], deno: [1] }).find((r) => r.impl === 'native-c-inproc-bun')!;
    bunC.rows.launch_0args = row(1000, 1000, 1000);
    const halved = chartRowsFrom([
      ...results({ node: [2200, 2200, 2200], bun: [3000, 3000, 3000], deno: [4000, 4000, 4000] }).filter((r) => r.impl !== 'native-c-inproc-bun'),
      bunC,
    ]);
    expect(halved.find((r) => r.label === 'launch_0args')!.ratios['cuda-ts-objects-bun']).toBe(3);
  });
});

describe('the Bun and Deno children, without a driver', () => {
  // The real path of npm run bench: the CommonJS copy of the tree, bench/runtime-child.js under the
  // runtime, its result file. A driver library that does not exist makes setup fail on any machine.
  const spawn: Spawn = (cmd, args, timeoutS, env, cwd) => {
    const r = spawnSync(cmd, args, { env: { ...env, CUDA_TS_DRIVER_LIBRARY: '/nonexistent/libcuda.so.1' }, cwd, encoding: 'utf8', timeout: timeoutS * 1000 });
    return Promise.resolve({ code: r.status, stdout: r.stdout, stderr: r.stderr });
  };
  for (const rt of ['bun', 'deno'] as const) {
    const found = 'path' in findRuntimeBinary(rt);
    (found ? test : test.skip)(
      `${rt}: the child loads the tree and reports driver setup's failure as the reason, no crash`,
      async () => {
        await expect(runtimeGpu(rt, spawn, undefined)).rejects.toThrow(
          new RegExp(`^${rt} [0-9.]+: driver setup failed: .*CUDA_TS_DRIVER_LIBRARY=/nonexistent/libcuda.so.1 names no file`),
        );
      },
      120_000,
    );
  }
});

describe('the Node, Bun and Deno children on a stand-in driver', () => {
  // bench/native/fake-cuda-launch.c as libcuda.so.1, and libbench.so built against it: the child's whole
  // path runs (set-up, C through the runtime's own FFI and the pinning, cuda-ts's layers beside it) with
  // nothing of a GPU. Frequent collections under Deno: an out-array only its address outlived, written
  // by C after the collector freed it, corrupted Deno's heap in an earlier version, so the exit status is
  // the check that matters.
  const cudaH = existsSync('/usr/local/cuda/include/cuda.h') || existsSync(join(process.env.CUDA_HOME ?? '', 'include', 'cuda.h'));
  const canBuild = cudaH && spawnSync('gcc', ['--version']).status === 0;
  let dir: string;
  beforeAll(() => {
    if (!canBuild) return;
    dir = mkdtempSync(join(tmpdir(), 'cuda-ts-child-'));
    const fake = spawnSync(
      'gcc',
      ['-O2', '-shared', '-fPIC', '-Wl,-soname,libcuda.so.1', '-o', join(dir, 'libcuda.so.1'), join(BENCH, 'native', 'fake-cuda-launch.c')],
      {
        encoding: 'utf8',
      },
    );
    expect(fake.stderr).toBe('');
    const lib = spawnSync('bash', [join(BENCH, 'native', 'build.sh'), join(dir, 'native')], {
      env: { ...process.env, LIBCUDA: join(dir, 'libcuda.so.1') },
      encoding: 'utf8',
    });
    expect({ status: lib.status, built: existsSync(join(dir, 'native', 'libbench.so')) }).toEqual({ status: 0, built: true });
  }, 120_000);
  afterAll(() => dir && rmSync(dir, { recursive: true, force: true }));

  // Under Bun or Deno (as .ci/run also runs jest) process.execPath is that runtime, not Node: the node case
  // runs only where jest runs under Node, and that runtime's own case covers the rest.
  const underNode = !process.versions.bun && !process.versions.deno;
  for (const rt of ['node', 'bun', 'deno'] as const) {
    const bin = rt === 'node' ? (underNode ? { path: process.execPath } : { skipped: 'jest is not running under Node' }) : findRuntimeBinary(rt);
    (canBuild && 'path' in bin ? test : test.skip)(
      `${rt}: C, raw, typed and objects rows, pinned, and a clean exit`,
      () => {
        const out = join(dir, `${rt}.json`);
        const tree = childTree();
        const script = join(tree, 'bench', 'runtime-child.js');
        const [cmd, ...args] = rt === 'node' ? [process.execPath, script] : childCommand(rt, (bin as { path: string }).path, script);
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          LD_LIBRARY_PATH: dir,
          BENCH_SCALE: '0.02',
          BENCH_REPS: '3',
          BENCH_PIN: '0',
          BENCH_CHILD_OUT: out,
          BENCH_NATIVE_LIB: join(dir, 'native', 'libbench.so'),
          BENCH_CHILD_ROWS: 'cuCtxGetCurrent,cuDeviceGetAttribute,launch_4args',
          BENCH_PTX: join(BENCH, 'native', 'kernels.ptx'),
          DENO_V8_FLAGS: '--gc-interval=20000',
        };
        for (const k of ['CUDA_TS_FFI', 'CUDA_TS_DRIVER_LIBRARY']) delete env[k];
        const r = spawnSync(cmd, args, { cwd: tree, env, encoding: 'utf8', timeout: 120_000 });
        expect({ status: r.status, signal: r.signal, stderr: r.stderr.split('\n').slice(-5).join('\n') }).toEqual({
          status: 0,
          signal: null,
          stderr: expect.any(String),
        });
        const res = JSON.parse(readFileSync(out, 'utf8')) as ChildResult;
        expect(res.skipped).toBeUndefined();
        expect(res.meta.native_c_loaded_by).toBe({ node: 'koffi', bun: 'bun:ffi dlopen', deno: 'Deno.dlopen' }[rt]);
        expect(res.meta.floor).toMatchObject({ pin_cpu: 0, pinned_rows: ['cuCtxGetCurrent', 'cuDeviceGetAttribute', 'launch_4args'] });
        const three = ['cuCtxGetCurrent', 'cuDeviceGetAttribute', 'launch_4args'];
        for (const impl of ['native-c-inproc', 'cuda-ts-raw', 'cuda-ts-typed']) expect([impl, Object.keys(res.rows[impl]).sort()]).toEqual([impl, three]);
        expect(Object.keys(res.rows['cuda-ts-objects']).sort()).toEqual(['cuDeviceGetAttribute', 'launch_4args']);
        for (const rows of Object.values(res.rows)) for (const m of Object.values(rows)) expect('median' in m && m.median > 0).toBe(true);
      },
      180_000,
    );
  }
});
