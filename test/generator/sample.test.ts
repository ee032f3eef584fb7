// The generator end to end on our own fixture header (test/fixtures/sample): parse → IR → emit.
import { cpSync, mkdtempSync, readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import koffi from 'koffi';
import { emitModule } from '../../generator/emit';
import { TypeModel } from '../../generator/model';
import { parseIR, serializeIR, storedReleases } from '../../generator/ir/store';
import type { ModuleIR } from '../../generator/ir/schema';
import type { ModuleSpec } from '../../generator/modules';
import { findClang } from '../../generator/parse/clang';
import { parseModule } from '../../generator/parse';
import { run } from '../../generator/cli';

const include = join(__dirname, '..', 'fixtures', 'sample', 'include');
const spec: ModuleSpec = {
  name: 'sample',
  title: 'sample test API',
  includes: ['sample.h'],
  ownHeaders: ['sample.h'],
  prefixes: ['smp'],
  macroPrefixes: ['SMP_'],
  versionMacro: 'SMP_VERSION',
  sonames: { '13': ['libsample.so.1'] },
  env: 'CUDA_TS_SAMPLE_LIBRARY',
  resolve: 'symbol',
  status: {
    type: 'smpStatus',
    success: 'SMP_SUCCESS',
    errorClass: 'SampleError',
    describe: { fn: 'smpStatusString', style: 'return' },
    answers: { smpQuery: ['SMP_ERROR_NOT_READY'] },
  },
  devicePointers: ['smpDevicePtr'],
};

let ir: ModuleIR;
beforeAll(() => {
  ir = parseModule(spec, { clang: findClang(), includeDirs: [include], cudaVersion: '13.0' });
});

const fn = (name: string) => ir.functions.find((f) => f.name === name)!;
const record = (name: string) => ir.records.find((r) => r.name === name)!;

describe('parse: functions', () => {
  test('every exported declaration, no inline helpers', () => {
    expect(ir.functions.map((f) => f.name)).toEqual([
      'smpAddNodes',
      'smpCopy',
      'smpCreate',
      'smpDescribe',
      'smpGetCallback',
      'smpGetCount',
      'smpGetInfo',
      'smpInit',
      'smpName',
      'smpQuery',
      'smpRunWithFlags',
      'smpSetCallback',
      'smpStatusString',
    ]);
  });
  test('versioned symbols get their user-facing names; other macro aliases are kept', () => {
    expect(fn('smpCreate').symbol).toBe('smpCreate_v2');
    expect(ir.aliases).toEqual({ smpRun: 'smpRunWithFlags' });
  });
  test('per-thread default stream variants', () => {
    expect(fn('smpCopy').ptdsSymbol).toBe('smpCopy_ptds');
    expect(fn('smpInit').ptdsSymbol).toBeUndefined();
  });
  test('C types with pointer depth and const', () => {
    expect(fn('smpCopy').params.map((p) => p.type)).toEqual([
      { kind: 'named', name: 'smpDevicePtr' },
      { kind: 'pointer', to: { kind: 'builtin', name: 'void', const: true } },
      { kind: 'named', name: 'size_t' },
    ]);
    expect(fn('smpStatusString').returns).toEqual({ kind: 'pointer', to: { kind: 'builtin', name: 'char', const: true } });
  });
});

describe('parse: types and constants', () => {
  test('enums keep exact values, negative and ≥ 2^31, with their storage', () => {
    const signed = ir.enums.find((e) => e.name === 'enum smpSigned_enum')!;
    expect(signed.members).toEqual([
      { name: 'SMP_NEG', value: '-2' },
      { name: 'SMP_ZERO', value: '-1' },
      { name: 'SMP_POS', value: '5' },
    ]);
    const wide = ir.enums.find((e) => e.name === 'enum smpWide_enum')!;
    expect(wide).toMatchObject({ size: 4, signed: false });
    expect(wide.members[1].value).toBe(String(0x80000000));
  });
  test('records: nested, anonymous union and struct, arrays, bitfields, with clang offsets', () => {
    const r = record('struct smpRecord_st');
    expect(r.size).toBe(80);
    expect(r.align).toBe(8);
    const off = Object.fromEntries(r.fields.map((f) => [f.name, f.offset]));
    expect(off).toMatchObject({ id: 0, inner: 8, either: 24, point: 28, bytes: 32, name: 38, stream: 56, address: 64, after: 76 });
    expect(r.fields.find((f) => f.name === 'either')!.type).toEqual({ kind: 'named', name: 'union smpRecord_st_either' });
    expect(record('union smpRecord_st_either')).toMatchObject({ kind: 'union', size: 4 });
    expect(record('struct smpRecord_st_point').fields.map((f) => f.name)).toEqual(['x', 'y']);
    const ready = r.fields.find((f) => f.name === 'ready')!;
    const mode = r.fields.find((f) => f.name === 'mode')!;
    expect([ready.bitWidth, ready.bitOffset, mode.bitWidth, mode.bitOffset]).toEqual([1, 576, 3, 577]);
  });
  test('opaque handles, function-pointer typedefs', () => {
    expect(ir.opaque).toEqual(['smpStream']);
    const cb = ir.typedefs.find((t) => t.name === 'smpCallback')!;
    expect(cb.type.kind).toBe('pointer');
    expect(cb.type.kind === 'pointer' && cb.type.to.kind).toBe('function');
  });
  test('numeric and pointer-valued #define constants, and the release', () => {
    const c = Object.fromEntries(ir.constants.map((x) => [x.name, x]));
    expect(ir.versionNumber).toBe(13000);
    expect(c.SMP_FLAG_B.value).toBe('16');
    expect(c.SMP_NEGATIVE.value).toBe('-7');
    expect(c.SMP_BIG.value).toBe('18446744073709551615');
    expect(c.SMP_RATIO).toEqual({ name: 'SMP_RATIO', kind: 'float', value: '0.5' });
    expect(c.SMP_STREAM_LEGACY).toEqual({ name: 'SMP_STREAM_LEGACY', kind: 'pointer', value: '0x1', type: 'smpStream' });
    expect(c.SMP_END.kind).toBe('pointer');
  });
  test('no header prose reaches the IR', () => {
    expect(serializeIR(ir)).not.toMatch(/A small header|written for/);
  });
});

describe('IR store', () => {
  test('round trip is lossless and validated', () => {
    const text = serializeIR(ir);
    expect(parseIR(text)).toEqual(JSON.parse(text));
    expect(serializeIR(parseIR(text))).toBe(text);
  });
  test('invalid IR is rejected with the path of the problem', () => {
    const broken = JSON.parse(serializeIR(ir));
    broken.functions[0].params[0].type = { kind: 'pointer' };
    expect(() => parseIR(JSON.stringify(broken), 'x.json')).toThrow(/x\.json: invalid IR at functions\[0\] \(smpAddNodes\)\.params\[0\] \(stream\)\.type/);
  });
});

describe('emit', () => {
  const golden = join(__dirname, '..', 'fixtures', 'sample', 'golden');
  test('matches the golden files (UPDATE_GOLDEN=1 rewrites them)', () => {
    const files = emitModule(ir, spec);
    for (const [name, text] of files) {
      const path = join(golden, name + '.txt');
      if (process.env.UPDATE_GOLDEN || !existsSync(path)) {
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, text);
      }
      expect(text).toBe(readFileSync(path, 'utf8'));
    }
  });
  test('is deterministic and starts with a one-line banner', () => {
    const a = emitModule(ir, spec);
    const b = emitModule(JSON.parse(serializeIR(ir)), spec);
    expect([...a.entries()]).toEqual([...b.entries()]);
    for (const text of a.values()) expect(text.split('\n')[0]).toMatch(/^(\/\/|#) Generated by cuda-ts-gen .* CUDA 13\.0 sample headers\. Do not edit\.$/);
  });
  test('typed layer returns out-parameters and throws the module error', () => {
    // the entry declares every function; the implementations live in the chunk files (typed/<family>.ts)
    const files = emitModule(ir, spec);
    expect(files.get('index.ts')!).toMatch(/export declare const smpGetCount: typeof \w+\.smpGetCount;/);
    const index = [...files]
      .filter(([name]) => name.startsWith('typed/'))
      .map(([, text]) => text)
      .join('\n');
    expect(index).toMatch(/export function smpGetCount\(\): number \{/);
    expect(index).toMatch(/export function smpGetInfo\(\): \{ free: number; total: number \}/);
    expect(index).toMatch(/export function smpCreate\(flags: number\): T\.smpStream/);
    expect(index).toMatch(/export function smpName\(len: number, device: number\): string/);
    expect(index).toMatch(/export function smpQuery\(stream: T\.smpStream \| null\): T\.smpStatus/);
    // an array in with its count derived from it (never passed by hand)
    expect(index).toMatch(/export function smpAddNodes\(stream: T\.smpStream \| null, nodes: readonly \(T\.smpStream\)\[\] \| BigUint64Array\): void/);
    expect(index).toMatch(/const numNodes\$n = nodes\$\.count;/);
    // every argument is checked before the call
    expect(index).toMatch(/if \(typeof flags !== 'number' \|\| \(flags >>> 0\) !== flags\) throw intError\('smpCreate', 'flags', 'u32', flags\);/);
    expect(index).toMatch(/export class SampleError extends CudaError/);
  });
  test('emitted koffi records reproduce the clang layout (bitfields as storage units excepted)', () => {
    const model = new TypeModel(ir, spec);
    void model;
    const types = emitModule(ir, spec).get('types.ts')!;
    expect(types).toMatch(/export type smpStream = Handle<'smpStream_st'>;/);
    expect(types).toMatch(/export type smpDevicePtr = DevicePointer;/);
    expect(types).toMatch(/SMP_WIDE_HIGH = 2147483648,/);
    expect(types).toMatch(/export const SMP_BIG = 18446744073709551615n;/);
    // the inner record's koffi type matches clang's layout
    const inner = record('struct smpInner_st');
    const t = koffi.struct({ tag: 'char', value: 'double' });
    expect([koffi.sizeof(t), koffi.alignof(t), koffi.offsetof(t, 'value')]).toEqual([inner.size, inner.align, inner.fields[1].offset]);
  });
});

describe('cuda-ts-gen --check', () => {
  test('passes on a faithful copy and fails once a generated file is edited', () => {
    const root = mkdtempSync(join(tmpdir(), 'cuda-ts-check-'));
    const repo = join(__dirname, '..', '..');
    // every stored release, whichever the repository holds (none is assumed)
    const releases = storedReleases(repo).filter((v) => existsSync(join(repo, 'headers', v, 'runtime.json')));
    expect(releases).toContain('13.0');
    for (const v of releases) {
      cpSync(join(repo, 'headers', v, 'runtime.json'), join(root, 'headers', v, 'runtime.json'));
      cpSync(join(repo, 'generated', v, 'runtime'), join(root, 'generated', v, 'runtime'), { recursive: true });
    }
    // a cuda-ts checkout: its generated code reaches the support sources by path
    mkdirSync(join(root, 'support'), { recursive: true });
    writeFileSync(join(root, 'support', 'index.ts'), '');
    const log: string[] = [];
    expect(run(['--check', '--out', root, '--modules', 'runtime'], (s) => log.push(s))).toBe(0);
    const raw = join(root, 'generated', '13.0', 'runtime', 'raw.ts');
    writeFileSync(raw, readFileSync(raw, 'utf8') + '\n// edited\n');
    expect(run(['--check', '--out', root, '--modules', 'runtime'], (s) => log.push(s))).toBe(1);
    expect(log.join('\n')).toMatch(/stale: generated\/13\.0\/runtime: raw\.ts differs/);
  });
  test('clear errors for a missing toolkit and an unknown module', () => {
    expect(() => run(['--toolkit', '/nonexistent'], () => undefined)).toThrow(/toolkit not found/);
    expect(() => run(['--check', '--modules', 'nope'], () => undefined)).toThrow(/unknown module "nope"/);
  });
});
