// `cuda-ts doctor`: the bin run as a user runs it (a child process), and its judgement on made-up
// findings (a driver too old for the newest bindings, a GPU present, broken overrides).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { aboutCudaTs } from '../src/doctor/cli';
import { diagnose } from '../src/doctor/diagnose';
import { formatReport } from '../src/doctor/format';
import type { DoctorReport } from '../src/doctor/report';
import { jsRuntime, jsRuntimeVersion } from '../support/jsruntime';

const BIN = join(__dirname, '..', 'bin', 'cuda-ts.js');
const hasDriver = ['/usr/lib/x86_64-linux-gnu/libcuda.so.1', '/usr/lib64/libcuda.so.1', '/usr/lib/aarch64-linux-gnu/libcuda.so.1'].some(existsSync);
const cudart13 = ['/usr/local/cuda/lib64/libcudart.so.13', '/usr/local/cuda/lib/libcudart.so.13'].find(existsSync);

/** The environment without the variables the doctor reads, plus `extra`. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('CUDA_TS_') && !['CUDA_HOME', 'CUDA_PATH', 'CUDA_VISIBLE_DEVICES'].includes(k)) env[k] = v;
  }
  return { ...env, ...extra };
}

function doctor(args: string[], env = cleanEnv()): { status: number | null; stdout: string; stderr: string } {
  const runtimeArgs = process.versions.deno ? ['run', '--allow-all'] : []; // Deno: with its permissions
  const r = spawnSync(process.execPath, [...runtimeArgs, BIN, ...args], { env, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at .+\(.*:\d+:\d+\)/);

describe('cuda-ts doctor (the bin, in a child process)', () => {
  let tmp = '';
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'cuda-ts-doctor-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  (hasDriver ? test.skip : test)('without a driver: names the missing driver and its fix, the runtime it found, exits 1', () => {
    const r = doctor(['doctor']);
    expect(r.status).toBe(1);
    noStack(r.stdout + r.stderr);
    expect(r.stdout).toMatch(/^Driver\n {2}not found \(libcuda\.so\.1\)/m);
    expect(r.stdout).toMatch(/ERROR: no CUDA driver/);
    expect(r.stdout).toMatch(/fix: install the NVIDIA driver \(≥ \d{3} for the \d+\.\d+ bindings\)/);
    expect(r.stdout).toMatch(/^ {2}13\.0 +\d+ modules +needs driver ≥ 580$/m);
    if (cudart13) expect(r.stdout).toMatch(/^ {2}runtime +13\.\d+ +\S*libcudart\.so\.13 .*bindings 13\.0$/m);
    expect(r.stdout).toMatch(/CUDA is NOT usable here/);
  });

  (hasDriver ? test.skip : test)('--json: one JSON object with the same verdict', () => {
    const r = doctor(['doctor', '--json']);
    expect(r.status).toBe(1);
    const report = JSON.parse(r.stdout) as DoctorReport;
    expect(report.usable).toBe(false);
    expect(report.driver.found).toBe(false);
    expect(report.gpus).toEqual([]);
    expect(report.releases.map((x) => x.release)).toContain('13.0');
    expect(report.problems.filter((p) => p.severity === 'error').map((p) => p.message)).toEqual([expect.stringMatching(/^no CUDA driver/)]);
    if (cudart13) {
      const runtime = report.libraries.find((l) => l.module === 'runtime' && l.path);
      expect(runtime).toMatchObject({ fits: ['13.0'], version: expect.stringMatching(/^13\./) });
    }
  });

  test('an override naming a file that is not a library is an error naming the variable; overrides are listed', () => {
    const fake = join(tmp, 'not-a-library.so');
    writeFileSync(fake, 'not a shared library\n');
    const r = doctor(
      ['doctor', '--json'],
      cleanEnv({
        CUDA_TS_DRIVER_LIBRARY: fake,
        CUDA_TS_CUBLAS_LIBRARY: fake,
        CUDA_TS_CUBLASS_LIBRARY: fake,
        CUDA_HOME: join(tmp, 'no-such-toolkit'),
        CUDA_VISIBLE_DEVICES: '',
      }),
    );
    expect(r.status).toBe(1);
    const report = JSON.parse(r.stdout) as DoctorReport;
    expect(report.environment).toMatchObject({
      CUDA_TS_DRIVER_LIBRARY: fake,
      CUDA_TS_CUBLAS_LIBRARY: fake,
      CUDA_HOME: join(tmp, 'no-such-toolkit'),
      CUDA_VISIBLE_DEVICES: '',
    });
    const messages = report.problems.map((p) => `${p.severity}: ${p.message} | ${p.fix}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^error: the CUDA driver library did not load: \$CUDA_TS_DRIVER_LIBRARY names .*not-a-library\.so, which does not load/),
        expect.stringMatching(/^error: cublas: \$CUDA_TS_CUBLAS_LIBRARY names .*not-a-library\.so, which does not load.*\| point CUDA_TS_CUBLAS_LIBRARY at/),
        expect.stringMatching(/^warning: CUDA_TS_CUBLASS_LIBRARY is set but no module reads it/),
        expect.stringMatching(/^warning: CUDA_HOME=.*no-such-toolkit does not exist/),
        expect.stringMatching(/^warning: CUDA_VISIBLE_DEVICES="" hides every GPU/),
      ]),
    );
  });

  test('usage: --help exits 0, an unknown argument or command exits 2, with no stack trace', () => {
    const help = doctor(['doctor', '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: cuda-ts doctor \[--json\]/);
    const bad = doctor(['doctor', '--jsn']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/unknown argument --jsn/);
    const cmd = doctor(['docter']);
    expect(cmd.status).toBe(2);
    expect(cmd.stderr).toMatch(/unknown command docter/);
    noStack(bad.stderr + cmd.stderr);
  });
});

describe('doctor judgement (made-up findings)', () => {
  const releases = [
    { release: '13.0', modules: ['driver', 'runtime'], minDriver: 580 },
    { release: '12.6', modules: ['driver', 'runtime'], minDriver: 560 },
  ];
  const h200 = {
    ordinal: 0,
    name: 'NVIDIA H200',
    computeCapability: '9.0',
    memoryBytes: 150_000_000_000,
    mig: 'disabled' as const,
    persistence: 'enabled' as const,
  };
  function findings(driverCuda: number, gpus = [h200]): Omit<DoctorReport, 'problems' | 'usable'> {
    return {
      cudaTs: { version: '0.1.0', node: 'v22.0.0', platform: 'linux x64' },
      driver: {
        found: true,
        path: '/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15',
        version: '550.54.15',
        cudaVersion: `${Math.floor(driverCuda / 1000)}.${(driverCuda % 1000) / 10}`,
        cudaVersionNumber: driverCuda,
        initStatus: 0,
      },
      gpus,
      releases: releases.map((r) => ({ ...r, driverRuns: driverCuda >= Number(r.release.split('.')[0]) * 1000 + Number(r.release.split('.')[1]) * 10 })),
      libraries: [
        {
          module: 'nvrtc',
          path: '/usr/local/cuda/lib64/libnvrtc.so.13',
          version: '13.0',
          fits: ['13.0'],
          sonames: ['libnvrtc.so.13', 'libnvrtc.so.12'],
          env: 'CUDA_TS_NVRTC_LIBRARY',
        },
      ],
      environment: {},
    };
  }

  test('a 13.0 driver with a GPU: usable, no problem; the screen shows the GPU', () => {
    const f = findings(13000);
    const verdict = diagnose(f);
    expect(verdict).toEqual({ problems: [], usable: true });
    const text = formatReport({ ...f, ...verdict });
    expect(text).toMatch(/^ {2}0 +NVIDIA H200 +CC 9\.0, 139\.7 GiB, MIG disabled, persistence enabled$/m);
    expect(text).toMatch(/CUDA is usable here: 1 GPU\(s\)\./);
  });

  test('a driver supporting CUDA 12.4 with 13.0 and 12.6 bindings: nothing runs, update to ≥ 560', () => {
    const verdict = diagnose(findings(12040));
    expect(verdict.usable).toBe(false);
    expect(verdict.problems).toEqual([
      expect.objectContaining({
        severity: 'error',
        message: expect.stringMatching(/supports CUDA 12\.4: none of the installed bindings \(13\.0, 12\.6\)/),
        fix: expect.stringMatching(/≥ 560.*≥ 580 for 13\.0/),
      }),
    ]);
  });

  test('a driver supporting CUDA 12.8: the 12.6 bindings fit, a warning says to use them or update to ≥ 580', () => {
    const verdict = diagnose(findings(12080));
    expect(verdict.usable).toBe(true);
    expect(verdict.problems).toEqual([
      expect.objectContaining({ severity: 'warning', fix: expect.stringMatching(/use the `cuda-ts\/12\.6\/…` bindings .*update the driver to ≥ 580/) }),
    ]);
  });

  test('cuInit failing names the status and its fix; no GPU is not usable', () => {
    const f = findings(13000, []);
    f.driver = { ...f.driver, initStatus: 100, initError: 'CUDA_ERROR_NO_DEVICE' };
    const verdict = diagnose(f);
    expect(verdict.usable).toBe(false);
    expect(verdict.problems).toEqual([
      expect.objectContaining({ message: 'cuInit failed: CUDA_ERROR_NO_DEVICE (100)', fix: expect.stringMatching(/--gpus all/) }),
    ]);
  });

  test('no NVRTC next to a working driver: a warning about Program', () => {
    const f = findings(13000);
    f.libraries = [{ module: 'nvrtc', fits: [], sonames: ['libnvrtc.so.13'], env: 'CUDA_TS_NVRTC_LIBRARY', error: 'not found' }];
    const verdict = diagnose(f);
    expect(verdict.usable).toBe(true);
    expect(verdict.problems.map((p) => p.message)).toEqual([expect.stringMatching(/NVRTC was not found/)]);
  });
});

describe('cuda-ts doctor: runtime, FFI and kernel cache', () => {
  let tmp = '';
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'cuda-ts-doctor-cache-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  test('reports the runtime, the FFI in use and the cache place and size (JSON and text)', () => {
    writeFileSync(join(tmp, 'a.kc'), new Uint8Array(3000));
    const env = cleanEnv({ CUDA_TS_CACHE_DIR: tmp, CUDA_TS_CACHE_MAX_BYTES: String(2 ** 20) });
    const report = JSON.parse(doctor(['doctor', '--json'], env).stdout) as DoctorReport;
    // the bin runs under the runtime running this suite (process.execPath): Node, Bun or Deno
    const runtime = jsRuntime();
    const ffi = { node: 'koffi', bun: 'bun', deno: 'deno' }[runtime];
    expect(report.runtime).toEqual({ name: runtime, version: jsRuntimeVersion(), ffi });
    // Node's version only under Node: Bun and Deno report a process.version of their own (Bun 1.4: v26.3.0)
    expect(report.cudaTs.node).toBe(runtime === 'node' ? process.version : undefined);
    // --help lists every field of the JSON
    const fields = /fields: ([^;)]+)/.exec(doctor(['doctor', '--help']).stdout)?.[1].split(/,\s*/) ?? [];
    expect(Object.keys(report).filter((k) => !fields.includes(k))).toEqual([]);
    expect(report.kernelCache).toEqual({ enabled: true, dir: tmp, maxBytes: 2 ** 20, entries: 1, bytes: 3000 });
    const text = doctor(['doctor'], env).stdout;
    expect(text).toContain(
      `${{ node: 'Node', bun: 'Bun', deno: 'Deno' }[runtime]} ${jsRuntimeVersion()}, FFI ${{ node: 'koffi', bun: 'bun:ffi', deno: 'Deno.dlopen' }[runtime]}`,
    );
    expect(text).toContain(`${tmp}: 1 entries, 0.0 MiB of 1.0 MiB`);
  });
  test("cudaTs.node is Node's version under Node only; the text names the runtime (here one made to look like Bun)", () => {
    expect(aboutCudaTs()).toEqual(
      jsRuntime() === 'node' ? { node: process.version, platform: `${process.platform} ${process.arch}` } : { platform: `${process.platform} ${process.arch}` },
    );
    const g = globalThis as { Bun?: unknown };
    const hadBun = jsRuntime() === 'bun';
    if (!hadBun) g.Bun = { version: '1.4.5' };
    try {
      expect(aboutCudaTs()).toEqual({ platform: `${process.platform} ${process.arch}` });
    } finally {
      if (!hadBun) delete g.Bun;
    }
    const report = {
      cudaTs: { version: '0.1.0', platform: 'linux x64' },
      driver: { found: false },
      gpus: [],
      releases: [],
      libraries: [],
      environment: {},
      problems: [],
      usable: false,
    };
    expect(formatReport({ ...report, runtime: { name: 'bun', version: '1.4.5' } }).split('\n')[0]).toBe('cuda-ts doctor (cuda-ts 0.1.0, Bun 1.4.5, linux x64)');
    expect(formatReport({ ...report, runtime: { name: 'node', version: '22.3.0' } }).split('\n')[0]).toBe(
      'cuda-ts doctor (cuda-ts 0.1.0, Node v22.3.0, linux x64)',
    );
    expect(formatReport({ ...report, cudaTs: { ...report.cudaTs, node: 'v22.3.0' } }).split('\n')[0]).toBe(
      'cuda-ts doctor (cuda-ts 0.1.0, Node v22.3.0, linux x64)',
    );
  });
  test('a refused CUDA_TS_FFI or cache setting is an error with its fix; an FFI this runtime lacks is a warning', () => {
    const bad = JSON.parse(doctor(['doctor', '--json'], cleanEnv({ CUDA_TS_FFI: 'ctypes', CUDA_TS_CACHE: 'maybe' })).stdout) as DoctorReport;
    expect(bad.usable).toBe(false);
    expect(bad.problems.filter((p) => p.severity === 'error').map((p) => p.message)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/CUDA_TS_FFI must be one of koffi, node, bun, deno, not 'ctypes'/),
        expect.stringMatching(/CUDA_TS_CACHE must be 0 \(off\) or 1 \(on\)/),
      ]),
    );
    // an FFI of another runtime than the one running the bin
    const [other, name] = jsRuntime() === 'bun' ? ['deno', 'Deno'] : ['bun', 'Bun'];
    const r = JSON.parse(doctor(['doctor', '--json'], cleanEnv({ CUDA_TS_FFI: other, CUDA_TS_CACHE: '0' })).stdout) as DoctorReport;
    expect(r.runtime).toMatchObject({ ffi: other, ffiUnavailable: expect.stringMatching(`not running under ${name}`) });
    expect(r.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ severity: 'warning', message: expect.stringMatching(`CUDA_TS_FFI=${other} cannot be used: not running under ${name}`) }),
      ]),
    );
    expect(r.kernelCache?.enabled).toBe(false);
  });
});
