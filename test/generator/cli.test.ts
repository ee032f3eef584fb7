// cuda-ts-gen as users run it: pip-wheel layouts, missing optional headers, one module failing among
// others, and honest errors (nothing to check, corrupt or invalid IR, bad arguments). The plumbing runs
// on the project's own synthetic toolkit (test/generator/synthetic-toolkit.ts), so it runs in any clone;
// the same checks on NVIDIA's real headers run where ../shared/cuda-headers is beside the repository.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatorPackage, parseArgs, run, supportResolution } from '../../generator/cli';
import { IRError, parseIR, readIR } from '../../generator/ir/store';
import { toolkitLayout } from '../../generator/parse';
import { NVIDIA_HEADERS_13_0, SYNTHETIC_RELEASE, describeWithNvidiaHeaders, writeSyntheticToolkit } from './synthetic-toolkit';

const repo = join(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'cuda-ts-cli-'));

describe('pip wheel layouts (synthetic toolkit)', () => {
  const site = join(work, 'synthetic-venv', 'lib', 'python3.12', 'site-packages');
  beforeAll(() => {
    writeSyntheticToolkit(site, { layout: 'pip', nvrtcWheel: '13.6' });
    mkdirSync(join(site, 'nvidia', 'nccl', 'include'), { recursive: true });
  });

  test('site-packages, nvidia/ and nvidia/cu13 all find the same include folders', () => {
    const expected = [join(site, 'nvidia', 'cu13', 'include'), join(site, 'nvidia', 'nccl', 'include')];
    for (const dir of [site, join(site, 'nvidia'), join(site, 'nvidia', 'cu13')]) {
      const layout = toolkitLayout(dir);
      expect(layout.includeDirs).toEqual(expected);
      expect(layout.found).toMatch(/^pip layout under .*nvidia: include folders of cu13, nccl$/);
    }
  });

  test('generates from site-packages: profiler functions absent with one warning, component release named', () => {
    const out = join(work, 'synthetic-pip-out');
    const log: string[] = [];
    expect(run(['--toolkit', site, '--out', out, '--modules', 'driver,nvrtc'], (s) => log.push(s))).toBe(0);
    expect(log[0]).toMatch(new RegExp(`^CUDA ${SYNTHETIC_RELEASE.replace('.', '\\.')}: pip layout under `));
    expect(log.filter((l) => l.startsWith('warning:'))).toEqual([
      'warning: driver: cudaProfiler.h not found (pip wheels do not ship it): its functions are left out',
    ]);
    const driver = readIR(out, SYNTHETIC_RELEASE, 'driver');
    expect(driver.functions.some((f) => f.name === 'cuProfilerStart')).toBe(false);
    expect(driver.functions.some((f) => f.name === 'cuMemAlloc')).toBe(true);
    expect(log.find((l) => l.startsWith(`${SYNTHETIC_RELEASE} nvrtc`))).toMatch(/\[its headers are CUDA 13\.6, labelled 13\.5\]$/);
  });

  test('a module that fails is one line; the others still generate; the exit status is 1', () => {
    const broken = join(work, 'synthetic-broken');
    cpSync(join(site, 'nvidia'), join(broken, 'nvidia'), { recursive: true });
    writeFileSync(join(broken, 'nvidia', 'cu13', 'include', 'nvrtc.h'), '#include <nv/target>\n');
    const out = join(work, 'synthetic-broken-out');
    const log: string[] = [];
    expect(run(['--toolkit', join(broken, 'nvidia'), '--out', out, '--modules', 'nvrtc,driver'], (s) => log.push(s))).toBe(1);
    const failed = log.filter((l) => /FAILED/.test(l));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatch(/^13\.5 nvrtc +FAILED \(\d+ ms\): clang reported an error .*nv\/target/);
    expect(log.some((l) => /^13\.5 driver +\d+ functions/.test(l))).toBe(true);
    expect(log.find((l) => l.startsWith('failed:'))).toMatch(/^failed: 13\.5 nvrtc: /);
    expect(readIR(out, '13.5', 'driver').functions.map((f) => f.name)).toContain('cuSyntheticHint');
  });
});

describe('an --out tree outside the repository', () => {
  const version = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).version as string;

  test("its package.json names the support package at the generator's version, as a peer of the project around it", () => {
    const toolkit = writeSyntheticToolkit(join(work, 'synthetic-scaffold'));
    const out = join(work, 'scaffold-out');
    const log: string[] = [];
    expect(run(['--toolkit', toolkit, '--out', out, '--modules', 'nvrtc'], (s) => log.push(s))).toBe(0);
    const pkg = JSON.parse(readFileSync(join(out, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({ type: 'commonjs', peerDependencies: { '@cuda-ts/runtime-support': `^${version}`, koffi: expect.stringMatching(/^\^3\./) } });
    expect(pkg.dependencies).toBeUndefined();
    expect(pkg.description).toMatch(/Do not run npm install inside it/);
    expect(log[log.length - 1]).toMatch(/^note: @cuda-ts\/runtime-support is not installed in or above .*scaffold-out: keep the tree inside your project/);
  });

  test('the version comes from the generator\'s own package.json, not from the build\'s {"type"} one (installed @cuda-ts/gen)', () => {
    const installed = join(work, 'node_modules', '@cuda-ts', 'gen');
    mkdirSync(join(installed, 'dist', 'generator'), { recursive: true });
    writeFileSync(join(installed, 'package.json'), JSON.stringify({ name: '@cuda-ts/gen', version: '9.8.7' }));
    writeFileSync(join(installed, 'dist', 'package.json'), JSON.stringify({ type: 'commonjs' }));
    expect(generatorPackage(join(installed, 'dist', 'generator'))).toMatchObject({ dir: installed, name: '@cuda-ts/gen', version: '9.8.7' });
    expect(generatorPackage(join(repo, 'generator'))).toMatchObject({ dir: repo, name: 'cuda-ts', version });
    expect(() => generatorPackage(join(work, 'synthetic-scaffold'))).toThrow(/no package\.json of cuda-ts or @cuda-ts\/gen above/);
  });

  test("the run's last line says which support package the tree uses, and warns of a copy of its own", () => {
    const project = join(work, 'project');
    const support = join(project, 'node_modules', '@cuda-ts', 'runtime-support');
    mkdirSync(support, { recursive: true });
    writeFileSync(join(support, 'package.json'), JSON.stringify({ name: '@cuda-ts/runtime-support', version }));
    const tree = join(project, 'cuda-bindings');
    mkdirSync(tree);
    expect(supportResolution(tree)).toBe(`the tree uses @cuda-ts/runtime-support from ${support}`);
    const own = join(tree, 'node_modules', '@cuda-ts', 'runtime-support');
    mkdirSync(own, { recursive: true });
    writeFileSync(join(own, 'package.json'), JSON.stringify({ name: '@cuda-ts/runtime-support', version }));
    expect(supportResolution(tree)).toMatch(
      /^warning: .*cuda-bindings has its own copy of @cuda-ts\/runtime-support .* not instanceof the project's CudaError; remove .*cuda-bindings\/node_modules$/,
    );
  });
});

/** NVIDIA's CUDA 13 wheels as pip lays them out: site-packages/nvidia/cu13/include, nvidia/nccl/include,
 *  no profiler headers; nvJitLink's wheel newer than the rest. */
function pipSitePackages(): string {
  const site = join(work, 'venv', 'lib', 'python3.12', 'site-packages');
  const nvidia = join(site, 'nvidia');
  mkdirSync(join(nvidia, 'cu13'), { recursive: true });
  const r = spawnSync('tar', ['xzf', NVIDIA_HEADERS_13_0, '-C', join(nvidia, 'cu13'), 'include', 'extras/nccl'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  mkdirSync(join(nvidia, 'nccl'), { recursive: true });
  renameSync(join(nvidia, 'cu13', 'extras', 'nccl'), join(nvidia, 'nccl', 'include'));
  rmSync(join(nvidia, 'cu13', 'extras'), { recursive: true });
  for (const h of ['cudaProfiler.h', 'cuda_profiler_api.h', 'cudaProfilerTypedefs.h']) rmSync(join(nvidia, 'cu13', 'include', h), { force: true });
  mkdirSync(join(site, 'nvidia_nvjitlink-13.4.1.dist-info'));
  mkdirSync(join(site, 'nvidia_cuda_runtime-13.0.96.dist-info'));
  return site;
}

describeWithNvidiaHeaders('pip wheel layouts (NVIDIA 13.0 headers)', () => {
  let site: string;
  beforeAll(() => {
    site = pipSitePackages();
  });

  test('generates from site-packages: profiler functions absent with one warning, component release named', () => {
    const out = join(work, 'pip-out');
    const log: string[] = [];
    expect(run(['--toolkit', site, '--out', out, '--modules', 'driver,nvjitlink,nccl'], (s) => log.push(s))).toBe(0);
    expect(log[0]).toMatch(/^CUDA 13\.0: pip layout under /);
    const warnings = log.filter((l) => l.startsWith('warning:'));
    expect(warnings).toEqual(['warning: driver: cudaProfiler.h not found (pip wheels do not ship it): its functions are left out']);
    const driver = readIR(out, '13.0', 'driver');
    expect(driver.functions.some((f) => f.name === 'cuProfilerStart')).toBe(false);
    expect(driver.functions.some((f) => f.name === 'cuMemAlloc')).toBe(true);
    expect(log.find((l) => l.startsWith('13.0 nvjitlink'))).toMatch(/\[its headers are CUDA 13\.4, labelled 13\.0\]$/);
    expect(log.find((l) => l.startsWith('13.0 nccl'))).toMatch(/^13\.0 nccl +\d+ functions/);
  });

  test('a module that fails is one line; the others still generate; the exit status is 1', () => {
    // without nv/target (the cccl wheel) cuBLAS's headers do not compile; the driver's do
    const broken = join(work, 'broken');
    cpSync(join(site, 'nvidia'), join(broken, 'nvidia'), { recursive: true });
    rmSync(join(broken, 'nvidia', 'cu13', 'include', 'nv'), { recursive: true });
    const out = join(work, 'broken-out');
    const log: string[] = [];
    expect(run(['--toolkit', join(broken, 'nvidia'), '--out', out, '--modules', 'cublas,driver'], (s) => log.push(s))).toBe(1);
    const failed = log.filter((l) => /FAILED/.test(l));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatch(/^13\.0 cublas +FAILED \(\d+ ms\): clang reported an error .*nv\/target/);
    expect(log.some((l) => /^13\.0 driver +\d+ functions/.test(l))).toBe(true);
    expect(log.find((l) => l.startsWith('failed:'))).toMatch(/^failed: 13\.0 cublas: /);
    expect(readIR(out, '13.0', 'driver').functions.length).toBeGreaterThan(400);
  });
});

describe('honest errors', () => {
  test('--check with nothing to compare is an error', () => {
    const empty = join(work, 'empty');
    mkdirSync(empty);
    expect(() => run(['--check', '--out', empty], () => undefined)).toThrow(/nothing to check: no stored IR under .*empty\/headers/);
    expect(() => run(['--check', '--out', repo, '--modules', 'nccl'], () => undefined)).not.toThrow();
  });

  test('a missing toolkit says what it expected', () => {
    expect(() => run(['--toolkit', join(work, 'nope')], () => undefined)).toThrow(
      /toolkit not found: .*nope\/include does not exist \(give a CUDA toolkit, or a pip site-packages/,
    );
  });

  test('corrupt IR: file named, one line', () => {
    const root = join(work, 'corrupt');
    mkdirSync(join(root, 'headers', '13.0'), { recursive: true });
    const file = join(root, 'headers', '13.0', 'nvrtc.json');
    writeFileSync(file, '{"irVersion": 1, "module": ');
    let err: Error | undefined;
    try {
      run(['--check', '--out', root], () => undefined);
    } catch (e) {
      err = e as Error;
    }
    expect(err).toBeInstanceOf(IRError);
    expect(err!.message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not valid JSON \\(`));
    expect(err!.message).not.toContain('\n');
  });

  test('IR that would emit invalid code is refused at load, naming the entry', () => {
    const text = readFileSync(join(repo, 'headers', '13.0', 'nvrtc.json'), 'utf8');
    const ir = JSON.parse(text);
    const dup = { ...ir, functions: [...ir.functions, ir.functions[3]] };
    expect(() => parseIR(JSON.stringify(dup), 'x.json')).toThrow(
      new RegExp(`^x\\.json: functions\\[${ir.functions.length}\\] \\(${ir.functions[3].name}\\): duplicate function name$`),
    );
    const unknown = structuredClone(ir);
    unknown.functions[0].params[0].type = { kind: 'named', name: 'nvrtcNoSuchType' };
    expect(() => parseIR(JSON.stringify(unknown), 'x.json')).toThrow(/^x\.json: functions\[0\] \(\w+\) parameter 0 \(\w+\): unknown C type "nvrtcNoSuchType"$/);
    const badSchema = structuredClone(ir);
    badSchema.functions[2].name = 42;
    expect(() => parseIR(JSON.stringify(badSchema), 'x.json')).toThrow(/^x\.json: invalid IR at functions\[2\]\.name: .*expected string/);
    expect(() => parseIR(text, 'ok.json')).not.toThrow();
  });

  test('bad arguments', () => {
    expect(() => parseArgs(['--jobs', '0'])).toThrow(/--jobs needs a whole number ≥ 1, not "0"/);
    expect(() => parseArgs(['--out'])).toThrow(/--out needs a value/);
    expect(() => parseArgs(['--bogus'])).toThrow(/unknown argument --bogus/);
  });

  test('--help documents every option', () => {
    const log: string[] = [];
    expect(run(['--help'], (s) => log.push(s))).toBe(0);
    for (const opt of [
      '--toolkit',
      '--out',
      '--modules',
      '--include',
      '--jobs',
      '--check',
      '--from-ir',
      '--list',
      '--help',
      '@cuda-ts/runtime-support',
      'site-packages',
    ]) {
      expect(log.join('\n')).toContain(opt);
    }
  });

  test('--list shows the library names per release', () => {
    const log: string[] = [];
    run(['--list'], (s) => log.push(s));
    expect(log.find((l) => l.startsWith('runtime '))).toMatch(
      /11\.8: libcudart\.so\.11\.0; 12\.5: libcudart\.so\.12; 12\.6: libcudart\.so\.12; 13\.0: libcudart\.so\.13/,
    );
    expect(log.find((l) => l.startsWith('nvjitlink '))).toMatch(/11\.8: —/);
  });
});
