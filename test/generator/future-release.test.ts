// A release newer than any stored (13.5) generates correctly into its own --out, beside the others, from
// a toolkit path full of awkward characters; the tree it writes type-checks by itself against the support
// package. Once from the project's synthetic toolkit (any clone), once from NVIDIA's 13.0 headers made
// into 13.5 (where ../shared/cuda-headers is beside the repository; the GPU suite binds its new function).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../generator/cli';
import type { ModuleIR } from '../../generator/ir/schema';
import { readIR } from '../../generator/ir/store';
import { supportSpecifier } from '../../generator/support-path';
import { FUTURE, FUTURE_BINDING_LINE, makeFutureToolkit } from './future-release-fixture';
import {
  NVIDIA_HEADERS_13_0,
  SYNTHETIC_DRIVER_FUNCTIONS,
  SYNTHETIC_NEW_FUNCTION,
  SYNTHETIC_RELEASE,
  describeWithNvidiaHeaders,
  writeSyntheticToolkit,
} from './synthetic-toolkit';

const repo = join(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'cuda-ts-future-'));

/** The --out tree's own tsconfig, with what `npm install` in a project would provide mapped onto this
 *  checkout (no baseUrl: TypeScript 7 removed it, as it removed `moduleResolution: node10`): TypeScript
 *  5.9 (`typescript`) and 7 (`typescript7`, the native compiler) both check `include` clean. */
function expectTypeChecks(out: string, include: string): void {
  const config = join(out, 'tsconfig.check.json');
  const compilerOptions = {
    noEmit: true,
    typeRoots: [join(repo, 'node_modules', '@types')],
    paths: { '@cuda-ts/runtime-support': [join(repo, 'support', 'index.ts')], koffi: [join(repo, 'node_modules', 'koffi')] },
  };
  writeFileSync(config, JSON.stringify({ extends: './tsconfig.json', compilerOptions, include: [`${include}/**/*`] }));
  for (const pkgName of ['typescript', 'typescript7']) {
    const tsc = spawnSync(process.execPath, [join(repo, 'node_modules', pkgName, 'bin', 'tsc'), '-p', config], { encoding: 'utf8' });
    expect({ compiler: pkgName, output: tsc.stdout + tsc.stderr, status: tsc.status }).toEqual({ compiler: pkgName, output: '', status: 0 });
  }
}

// a space, parentheses, a comma, brackets and a star: anonymous records used to be named after this path
const ODD = 'cuda 13.5 (future), [x] *';

describe('a future release from the synthetic toolkit (any clone)', () => {
  const toolkit = join(work, 'synthetic', ODD);
  const out = join(work, 'synthetic-out');
  const log: string[] = [];
  let status: number;
  beforeAll(() => {
    writeSyntheticToolkit(toolkit);
    status = run(['--toolkit', toolkit, '--out', out, '--modules', 'driver,nvrtc'], (s) => log.push(s));
  });

  test('the release is read from CUDA_VERSION, through an awkward path, and both modules generate', () => {
    expect(status).toBe(0);
    expect(log[0]).toBe(`CUDA ${SYNTHETIC_RELEASE}: headers in ${join(toolkit, 'include')}`);
    expect(log.filter((l) => /^13\.5 (driver|nvrtc) +\d+ functions, \d+ types \(\d+ ms\)$/.test(l))).toHaveLength(2);
    expect(
      readIR(out, SYNTHETIC_RELEASE, 'driver')
        .functions.map((f) => f.name)
        .sort(),
    ).toEqual([...SYNTHETIC_DRIVER_FUNCTIONS].sort());
    expect(readFileSync(join(out, 'headers', '13.5', 'driver.json'), 'utf8')).not.toContain(work);
  });

  test('the new function is asked of cuGetProcAddress at its version and annotated since the new release', () => {
    const line = readFileSync(join(out, 'generated', '13.5', 'driver', 'binding.ts'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${SYNTHETIC_NEW_FUNCTION}|`));
    expect(line?.split('|').slice(5)).toEqual(['13.5', `${SYNTHETIC_NEW_FUNCTION}:13050`]);
  });

  test('the --out tree imports the support package by name and type-checks by itself', () => {
    expect(readFileSync(join(out, 'generated', '13.5', 'driver', 'binding.ts'), 'utf8')).toContain(`from '@cuda-ts/runtime-support'`);
    expect(readFileSync(join(out, 'generated', '13.5', 'driver', 'raw.ts'), 'utf8')).not.toContain(`'${supportSpecifier(0)}'`);
    expectTypeChecks(out, 'generated/13.5');
  });
});

describeWithNvidiaHeaders("a future release made from NVIDIA's 13.0 headers", () => {
  const toolkit = join(work, ODD);
  const out = join(work, 'out');
  const log: string[] = [];
  let status: number;
  let ir: ModuleIR;

  beforeAll(() => {
    mkdirSync(toolkit, { recursive: true });
    makeFutureToolkit(toolkit, NVIDIA_HEADERS_13_0);
    status = run(['--toolkit', toolkit, '--out', out, '--modules', 'driver,runtime'], (s) => log.push(s));
    ir = readIR(out, FUTURE.release, 'driver');
  });

  test('the release is read from the headers and both modules generate', () => {
    expect(status).toBe(0);
    expect(log.join('\n')).toMatch(/^CUDA 13\.5: headers in .*cuda 13\.5 \(future\), \[x\] \*\/include$/m);
    expect(log.some((l) => /^13\.5 driver +\d+ functions, \d+ types \(\d+ ms\)$/.test(l))).toBe(true);
    expect(log.some((l) => /^13\.5 runtime +\d+ functions/.test(l))).toBe(true);
    for (const m of ['driver', 'runtime'])
      for (const f of ['types.ts', 'binding.ts', 'raw.ts', 'index.ts']) {
        expect(existsSync(join(out, 'generated', '13.5', m, f))).toBe(true);
      }
  });

  test('the new function is asked of cuGetProcAddress at 13050 and annotated since 13.5', () => {
    const fn = ir.functions.find((f) => f.name === FUTURE.fn);
    expect(fn?.proc).toEqual({ name: FUTURE.fn, version: FUTURE.version });
    const binding = readFileSync(join(out, 'generated', '13.5', 'driver', 'binding.ts'), 'utf8');
    const line = binding.split('\n').find((l) => l.startsWith(`${FUTURE.fn}|`));
    expect(line).toBeDefined();
    const fields = line!.split('|');
    expect(fields[1]).toBe(FUTURE.fn);
    expect(fields[5]).toBe(FUTURE.release); // since
    expect(fields[6]).toBe(`${FUTURE.fn}:${FUTURE.version}`);
    // the GPU test (test/gpu/releases.gpu.test.ts) binds exactly this line on a 13.0 driver
    expect(line).toBe(FUTURE_BINDING_LINE);
    // a function of 13.0 keeps the annotation the stored 13.0 output gives it (the fixed release list)
    const stored = readFileSync(join(repo, 'generated', '13.0', 'driver', 'binding.ts'), 'utf8');
    const storedSync = stored.split('\n').find((l) => l.startsWith('cuCtxSynchronize_v2|'))!;
    expect(
      binding
        .split('\n')
        .find((l) => l.startsWith('cuCtxSynchronize_v2|'))!
        .split('|')[5],
    ).toBe(storedSync.split('|')[5]);
    expect(storedSync.split('|')[5]).toBe('13.0');
    // the raw layer's implementations live in its chunk files (raw-layer/<family>.ts); raw.ts declares them
    const rawDir = join(out, 'generated', '13.5', 'driver', 'raw-layer');
    expect(readFileSync(join(out, 'generated', '13.5', 'driver', 'raw.ts'), 'utf8')).toMatch(
      new RegExp(`export declare const ${FUTURE.fn}: typeof \\w+\\.${FUTURE.fn};`),
    );
    expect(
      readdirSync(rawDir)
        .map((f) => readFileSync(join(rawDir, f), 'utf8'))
        .join('\n'),
    ).toMatch(new RegExp(`export function ${FUTURE.fn}\\(dptr: T\\.CUdeviceptr, bytes: [^,]+, flags: number\\)`));
  });

  test('the new enum member and the new record field', () => {
    const e = ir.enums.find((x) => x.members.some((m) => m.name === 'CUDA_ERROR_UNKNOWN'))!;
    expect(e.members.find((m) => m.name === FUTURE.enumMember)).toEqual({ name: FUTURE.enumMember, value: FUTURE.enumValue });
    const types = readFileSync(join(out, 'generated', '13.5', 'driver', 'types.ts'), 'utf8');
    expect(types).toMatch(new RegExp(`\\b${FUTURE.enumMember} = ${FUTURE.enumValue}\\b`));
    const r = ir.records.find((x) => x.name === FUTURE.record)!;
    const last = r.fields[r.fields.length - 1];
    expect(last).toMatchObject({ name: FUTURE.field, type: { kind: 'builtin', name: 'unsigned int' } });
    const channels = r.fields.find((f) => f.name === 'NumChannels')!;
    expect(last.offset).toBe(channels.offset + 4);
    expect(r.size).toBe(32); // 8 + 8 + 4 + 4 + 4, aligned to 8
  });

  test('anonymous records carry no trace of the toolkit path', () => {
    const text = readFileSync(join(out, 'headers', '13.5', 'driver.json'), 'utf8');
    expect(text).not.toContain(work);
    expect(text).not.toContain('@anon');
  });

  test('the --out tree imports the support package by name and type-checks by itself', () => {
    const raw = readFileSync(join(out, 'generated', '13.5', 'driver', 'raw.ts'), 'utf8');
    expect(raw).not.toContain(`'${supportSpecifier(0)}'`);
    const binding = readFileSync(join(out, 'generated', '13.5', 'driver', 'binding.ts'), 'utf8');
    expect(binding).toContain(`from '@cuda-ts/runtime-support'`);
    const pkg = JSON.parse(readFileSync(join(out, 'package.json'), 'utf8'));
    expect(Object.keys(pkg.peerDependencies).sort()).toEqual(['@cuda-ts/runtime-support', 'koffi']);
    const scaffolded = JSON.parse(readFileSync(join(out, 'tsconfig.json'), 'utf8'));
    expect(scaffolded.compilerOptions).toMatchObject({ module: 'node20', moduleResolution: 'node16', types: ['node'] });
    expectTypeChecks(out, 'generated/13.5/driver');
  });
});
