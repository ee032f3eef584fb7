// A release newer than any stored (13.5, made at test time from the 13.0 headers) generates correctly
// into its own --out, beside the others, from a toolkit path full of awkward characters; the tree it
// writes type-checks by itself against the support package.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../generator/cli';
import type { ModuleIR } from '../../generator/ir/schema';
import { readIR } from '../../generator/ir/store';
import { supportSpecifier } from '../../generator/support-path';
import { FUTURE, FUTURE_BINDING_LINE, HEADERS_13_0, makeFutureToolkit } from './future-release-fixture';

const repo = join(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'cuda-ts-future-'));
// a space, parentheses, a comma, brackets and a star: anonymous records used to be named after this path
const toolkit = join(work, 'cuda 13.5 (future), [x] *');
const out = join(work, 'out');
const log: string[] = [];
let status: number;
let ir: ModuleIR;

beforeAll(() => {
  mkdirSync(toolkit, { recursive: true });
  makeFutureToolkit(toolkit, HEADERS_13_0);
  status = run(['--toolkit', toolkit, '--out', out, '--modules', 'driver,runtime'], (s) => log.push(s));
  ir = readIR(out, FUTURE.release, 'driver');
});

test('the release is read from the headers and both modules generate', () => {
  expect(status).toBe(0);
  expect(log.join('\n')).toMatch(/^CUDA 13\.5: headers in .*cuda 13\.5 \(future\), \[x\] \*\/include$/m);
  expect(log.some((l) => /^13\.5 driver +\d+ functions, \d+ types \(\d+ ms\)$/.test(l))).toBe(true);
  expect(log.some((l) => /^13\.5 runtime +\d+ functions/.test(l))).toBe(true);
  for (const m of ['driver', 'runtime']) for (const f of ['types.ts', 'binding.ts', 'raw.ts', 'index.ts']) {
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
  expect(binding.split('\n').find((l) => l.startsWith('cuCtxSynchronize_v2|'))!.split('|')[5]).toBe(storedSync.split('|')[5]);
  expect(storedSync.split('|')[5]).toBe('13.0');
  // the raw layer's implementations live in its chunk files (raw-layer/<family>.ts); raw.ts declares them
  const rawDir = join(out, 'generated', '13.5', 'driver', 'raw-layer');
  expect(readFileSync(join(out, 'generated', '13.5', 'driver', 'raw.ts'), 'utf8')).toMatch(new RegExp(`export declare const ${FUTURE.fn}: typeof \\w+\\.${FUTURE.fn};`));
  expect(readdirSync(rawDir).map((f) => readFileSync(join(rawDir, f), 'utf8')).join('\n')).toMatch(
    new RegExp(`export function ${FUTURE.fn}\\(dptr: T\\.CUdeviceptr, bytes: [^,]+, flags: number\\)`),
  );
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
  expect(Object.keys(pkg.dependencies).sort()).toEqual(['@cuda-ts/runtime-support', 'koffi']);
  // what its tsconfig needs to check: node's types and a TypeScript that knows `module: node20`
  expect(Object.keys(pkg.devDependencies).sort()).toEqual(['@types/node', 'typescript']);
  const scaffolded = JSON.parse(readFileSync(join(out, 'tsconfig.json'), 'utf8'));
  expect(scaffolded.compilerOptions).toMatchObject({ module: 'node20', moduleResolution: 'node16', types: ['node'] });
  // what `npm install` would provide, mapped onto this checkout; the scaffolded tsconfig otherwise as is
  // (no baseUrl: TypeScript 7 removed it, as it removed `moduleResolution: node10`)
  const config = join(out, 'tsconfig.check.json');
  const compilerOptions = {
    noEmit: true,
    typeRoots: [join(repo, 'node_modules', '@types')],
    paths: { '@cuda-ts/runtime-support': [join(repo, 'support', 'index.ts')], koffi: [join(repo, 'node_modules', 'koffi')] },
  };
  writeFileSync(config, JSON.stringify({ extends: './tsconfig.json', compilerOptions, include: ['generated/13.5/driver'] }));
  // TypeScript 5.9 (`typescript`) and 7 (`typescript7`, the native compiler)
  for (const pkgName of ['typescript', 'typescript7']) {
    const tsc = spawnSync(process.execPath, [join(repo, 'node_modules', pkgName, 'bin', 'tsc'), '-p', config], { encoding: 'utf8' });
    expect({ compiler: pkgName, output: tsc.stdout + tsc.stderr }).toEqual({ compiler: pkgName, output: '' });
    expect(tsc.status).toBe(0);
  }
});
