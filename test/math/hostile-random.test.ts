// RandomGenerator under hostile clients (no GPU): bad seeds, offsets, dimensions, lambdas, means and
// stds; non-object and unknown-key options; getters changing their answers; closed, foreign-context,
// wrong-dtype and look-alike outputs. Every call succeeds or throws TypeError/RangeError starting
// `RandomGenerator.method:`, and nothing cuRAND's fake receives is a value no C function takes.
import { driverlessContext } from '../helpers/fake-driver';
import { DeviceBuffer } from '../../src/memory/device-buffer';
import { StridedView } from '../../src/memory/strided-view';
import { Stream } from '../../src/stream';
import { RandomGenerator } from '../../src/math/random';
import {
  type CallLog,
  BAD_NUMBERS,
  PROTO_KEYS,
  NOT_OBJECTS,
  NOT_OPERANDS,
  dirtyCalls,
  flipFlop,
  optionVariants,
  outcome,
  sweep as sweepValues,
  writableFields,
  bufferMaker,
  recordingLibrary,
} from './hostile-values';

const calls: CallLog = [];
const fakeCurand = recordingLibrary(calls, { curandCreateGenerator: 0xc0de });
const loadCurand = jest.fn(() => fakeCurand);
jest.mock('../../src/releases', () => ({ ...jest.requireActual('../../src/releases'), loadCurand: () => loadCurand() }));

const ctx = driverlessContext();
const otherCtx = driverlessContext(0x9999);
const stream = Stream.legacyDefault(ctx);
const buffer = bufferMaker(ctx, 0x7f3000000000);
const vec = (n: number, dtype: 'f32' | 'f64' | 'u32' | 'u64' | 'i32' = 'f32', context = ctx) =>
  StridedView.of(buffer(8 * Math.max(1, n), context), { dtype, shape: [n] });

const isWork = (n: string) => n.startsWith('curandGenerate') && n !== 'curandGenerateSeeds';
const sweep = (where: string, values: readonly (readonly [string, unknown])[], call: (v: unknown) => unknown, expect: 'refused' | 'either') =>
  sweepValues(`RandomGenerator.${where}`, values, call, expect, calls, isWork);

let gen: RandomGenerator;
beforeEach(() => {
  gen = RandomGenerator.create({ stream, seed: 1 });
  calls.length = 0;
});
afterEach(() => {
  gen.close();
  expect(dirtyCalls(calls)).toEqual([]);
});

const FILLS: Record<string, (o?: unknown) => unknown> = {
  uniform: (o) => gen.uniform(vec(8), o as never),
  normal: (o) => gen.normal(vec(8), o as never),
  logNormal: (o) => gen.logNormal(vec(8, 'f64'), o as never),
};
const VALID: Record<string, Record<string, unknown>> = {
  uniform: { dtype: 'f32' },
  normal: { mean: 1, std: 2, dtype: 'f32' },
  logNormal: { mean: 0, std: 0.5, dtype: 'f64' },
};

describe('RandomGenerator.create', () => {
  test('refuses hostile options before loading cuRAND', () => {
    loadCurand.mockClear();
    const values: (readonly [string, unknown])[] = [...NOT_OBJECTS, ['unknown key', { zz: 1 }], ['kind symbol', { kind: Symbol('k') }]];
    for (const key of ['seed', 'offset'])
      values.push(...BAD_NUMBERS.filter(([, v]) => typeof v !== 'bigint').map(([l, v]) => [`${key} ${l}`, { [key]: v }] as const));
    values.push(['seed 2n**64n', { seed: 2n ** 64n }], ['offset -1n', { offset: -1n }]);
    values.push(...BAD_NUMBERS.map(([l, v]) => [`dimensions ${l}`, { kind: 'sobol32', dimensions: v }] as const));
    values.push(['dimensions 20001', { kind: 'sobol32', dimensions: 20001 }], ['dimensions 0', { kind: 'sobol32', dimensions: 0 }]);
    expect(sweep('create', values, (o) => RandomGenerator.create(o as never), 'refused')).toEqual([]);
    expect(loadCurand).not.toHaveBeenCalled();
  });
  test('an option read once: a getter cannot slip a seed into a quasi generator or dimensions into a pseudo one', () => {
    const cases = [
      flipFlop({ kind: 'sobol32', seed: undefined, stream }, 'seed', 5),
      flipFlop({ kind: 'philox4_32_10', dimensions: undefined, stream }, 'dimensions', 5),
      flipFlop({ kind: 'mtgp32', offset: 0, stream }, 'offset', 7),
    ];
    for (const o of cases) {
      calls.length = 0;
      const got = outcome('RandomGenerator.create', () => RandomGenerator.create(o as never).close());
      expect(got).toMatch(/^(ok|refused)$/);
      const names = calls.map(([n]) => n);
      if (o.kind === 'sobol32') expect(names).not.toContain('curandSetPseudoRandomGeneratorSeed');
      if (o.kind === 'philox4_32_10') expect(names).not.toContain('curandSetQuasiRandomGeneratorDimensions');
      if (o.kind === 'mtgp32') expect(calls.filter(([n]) => n === 'curandSetGeneratorOffset').map(([, a]) => a[1])).not.toContain(7);
    }
  });
  test('option variants: frozen and null-prototype work; getters and Proxies work or are refused', () => {
    const valid = { kind: 'philox4_32_10', seed: 3, offset: 4, ordering: 'default', stream };
    const bad: string[] = [];
    for (const [label, o, want] of optionVariants(valid)) {
      const got = outcome('RandomGenerator.create', () => (RandomGenerator.create(o as never) as RandomGenerator).close());
      if (got !== 'ok' && got !== 'refused') bad.push(`${label}: ${got}`);
      if ((want === 'ok' && got !== 'ok') || (want === 'refused' && got !== 'refused')) bad.push(`${label}: ${got}`);
    }
    expect(bad).toEqual([]);
  });
});

describe('setSeed, setOffset, setStream', () => {
  test.each([['setSeed'], ['setOffset']])('RandomGenerator.%s refuses every bad number', (name) => {
    const values = [...BAD_NUMBERS.filter(([, v]) => typeof v !== 'bigint'), ['-1n', -1n], ['2n**64n', 2n ** 64n]] as const;
    const run = (v: unknown) => (name === 'setSeed' ? gen.setSeed(v as never) : gen.setOffset(v as never));
    expect(sweep(name, values, run, 'refused')).toEqual([]);
    expect(outcome(`RandomGenerator.${name}`, () => run(2n ** 64n - 1n))).toBe('ok');
    expect(outcome(`RandomGenerator.${name}`, () => run(-0))).toBe('ok');
  });
  test('RandomGenerator.setStream refuses non-streams and another context’s stream', () => {
    const values = [...NOT_OPERANDS.filter(([, v]) => v !== undefined), ['other context', Stream.legacyDefault(otherCtx)]] as const;
    expect(sweep('setStream', values, (s) => gen.setStream(s as never), 'refused')).toEqual([]);
  });
  test('a closed generator refuses every method before cuRAND', () => {
    gen.close();
    const runs = [
      ['setSeed', () => gen.setSeed(1)],
      ['setOffset', () => gen.setOffset(1)],
      ['uniform', () => gen.uniform(vec(8))],
      ['normal', () => gen.normal(vec(8))],
      ['poisson', () => gen.poisson(vec(8, 'u32'), 2)],
      ['bits', () => gen.bits(vec(8, 'u32'))],
      ['setStream', () => gen.setStream(stream)],
    ] as const;
    for (const [name, run] of runs) expect([name, outcome(`RandomGenerator.${name}`, run)]).toEqual([name, 'refused']);
    expect(calls.filter(([n]) => isWork(n))).toEqual([]);
  });
});

test('kind and dimensions are read-only (the count check and cuRAND agree)', () => {
  expect(writableFields(gen, { kind: 'sobol64', dimensions: 3, context: otherCtx })).toEqual([]);
});

test('choices named like Object.prototype members are refused (kind, ordering, dtype)', () => {
  const bad: string[] = [];
  for (const [l, k] of PROTO_KEYS) {
    const creates = [
      [`kind ${l}`, { kind: k }],
      [`ordering ${l}`, { ordering: k }],
    ] as const;
    bad.push(...sweep('create', creates, (o) => RandomGenerator.create(o as never).close(), 'refused'));
    bad.push(...sweep('uniform', [[`dtype ${l}`, { dtype: k }]], (o) => gen.uniform(buffer(64), o as never), 'refused'));
  }
  expect(bad).toEqual([]);
});

describe('fills', () => {
  test.each(Object.keys(FILLS))('RandomGenerator.%s: non-object and unknown-key options are refused', (name) => {
    const values = [...NOT_OBJECTS, ['unknown key', { ...VALID[name], zz: 1 }]] as const;
    expect(sweep(name, values, FILLS[name], 'refused')).toEqual([]);
  });
  test.each(Object.keys(FILLS))('RandomGenerator.%s: option variants work or are refused', (name) => {
    expect(outcome(`RandomGenerator.${name}`, () => FILLS[name](VALID[name]))).toBe('ok');
    const bad: string[] = [];
    for (const [label, o, want] of optionVariants(VALID[name])) {
      bad.push(...sweep(name, [[label, o]], FILLS[name], want === 'refused' ? 'refused' : 'either'));
      if (want === 'ok' && outcome(`RandomGenerator.${name}`, () => FILLS[name](o)) !== 'ok') bad.push(`${label}: refused`);
    }
    expect(bad).toEqual([]);
  });
  test.each([['normal'], ['logNormal']])('RandomGenerator.%s: mean and std take finite numbers only (std ≥ 0)', (name) => {
    for (const key of ['mean', 'std']) {
      const values = BAD_NUMBERS.filter(([l, v]) => v !== null && !(key === 'mean' && (l === '-1' || l === '1.5' || l === '2**53 + 1' || l === '1e300')));
      const filtered = key === 'std' ? values.filter(([l]) => l !== '1.5' && l !== '2**53 + 1' && l !== '1e300') : values;
      expect(sweep(name, filtered, (v) => FILLS[name]({ [key]: v }), 'refused')).toEqual([]);
    }
  });
  test('RandomGenerator.poisson: lambda > 0 and finite, a number', () => {
    const values = [...BAD_NUMBERS.filter(([l]) => !['1.5', '2**53 + 1', '1e300'].includes(l)), ['0', 0], ['-0', -0]] as const;
    expect(sweep('poisson', values, (v) => gen.poisson(vec(8, 'u32'), v as never), 'refused')).toEqual([]);
  });
  test.each([['uniform'], ['normal'], ['logNormal'], ['poisson'], ['bits']])(
    'RandomGenerator.%s: look-alike, closed, foreign and wrong-dtype outputs',
    (name) => {
      const closed = vec(8, 'u32');
      (closed.buffer as DeviceBuffer).close();
      const run = (out: unknown) =>
        name === 'poisson'
          ? gen.poisson(out as never, 2)
          : name === 'bits'
            ? gen.bits(out as never)
            : (gen as never as Record<string, (o: unknown) => unknown>)[name](out);
      const values = [
        ...NOT_OPERANDS,
        ['closed', closed],
        ['other context', vec(8, name === 'poisson' || name === 'bits' ? 'u32' : 'f32', otherCtx)],
        ['i32 view', vec(8, 'i32')],
        ['strided view', StridedView.of(buffer(64), { dtype: name === 'poisson' || name === 'bits' ? 'u32' : 'f32', shape: [4], strides: [2] })],
      ] as const;
      expect(sweep(name, values, run, 'refused')).toEqual([]);
    },
  );
  test('zero-sized outputs enqueue nothing', () => {
    gen.uniform(vec(0));
    gen.normal(vec(0));
    gen.poisson(vec(0, 'u32'), 1);
    gen.bits(vec(0, 'u32'));
    expect(calls.filter(([n]) => isWork(n))).toEqual([]);
  });
});
