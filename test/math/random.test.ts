// RandomGenerator without a GPU or cuRAND: every argument check throws its TypeError/RangeError before
// cuRAND loads, the curandRngType_t / curandOrdering_t codes, and what valid fills hand to cuRAND (a
// generator over a fake handle, a driverless context and a spied API object).
import * as curandTypes from '../../generated/13.0/curand/types';
import * as releases from '../../src/releases';
import { DeviceBuffer } from '../../src/memory/device-buffer';
import { StridedView } from '../../src/memory/strided-view';
import { Stream } from '../../src/stream';
import { CURAND_ORDERING, CURAND_RNG, RandomGenerator } from '../../src/math/random';
import { driverlessContext } from '../helpers/fake-driver';
import { SEALED } from '../../src/sealed';

const ctx = driverlessContext();
const BASE = 0x7f0000000000;

class FakeBuffer extends DeviceBuffer {
  constructor(bytes: number, address = BASE) {
    super(SEALED, 'DeviceBuffer', address, bytes, ctx, () => undefined);
  }
}

let loader: jest.SpyInstance;
beforeEach(() => {
  loader = jest.spyOn(releases, 'loadCurand');
});
afterEach(() => {
  expect(loader).not.toHaveBeenCalled(); // no test here may load cuRAND
  jest.restoreAllMocks();
});

test('CURAND_RNG and CURAND_ORDERING equal the generated enums', () => {
  const R = curandTypes.curandRngType_t;
  expect(CURAND_RNG).toEqual({
    xorwow: R.CURAND_RNG_PSEUDO_XORWOW,
    mrg32k3a: R.CURAND_RNG_PSEUDO_MRG32K3A,
    mtgp32: R.CURAND_RNG_PSEUDO_MTGP32,
    mt19937: R.CURAND_RNG_PSEUDO_MT19937,
    philox4_32_10: R.CURAND_RNG_PSEUDO_PHILOX4_32_10,
    sobol32: R.CURAND_RNG_QUASI_SOBOL32,
    scrambled_sobol32: R.CURAND_RNG_QUASI_SCRAMBLED_SOBOL32,
    sobol64: R.CURAND_RNG_QUASI_SOBOL64,
    scrambled_sobol64: R.CURAND_RNG_QUASI_SCRAMBLED_SOBOL64,
  });
  const O = curandTypes.curandOrdering_t;
  expect(CURAND_ORDERING).toEqual({
    best: O.CURAND_ORDERING_PSEUDO_BEST,
    default: O.CURAND_ORDERING_PSEUDO_DEFAULT,
    seeded: O.CURAND_ORDERING_PSEUDO_SEEDED,
    legacy: O.CURAND_ORDERING_PSEUDO_LEGACY,
    dynamic: O.CURAND_ORDERING_PSEUDO_DYNAMIC,
    quasiDefault: O.CURAND_ORDERING_QUASI_DEFAULT,
  });
});

describe('RandomGenerator.create: argument checks (cuRAND not loaded)', () => {
  test.each([
    [null, TypeError, /RandomGenerator.create: options must be an object/],
    [{ kind: 'pcg' }, TypeError, /kind must be one of 'xorwow', .*got string "pcg"/],
    [{ seed: 1, rng: 2 }, TypeError, /unknown option 'rng'/],
    [{ seed: -1 }, RangeError, /seed must be a non-negative safe integer/],
    [{ seed: 1.5 }, RangeError, /seed must be a non-negative safe integer/],
    [{ seed: 2n ** 64n }, RangeError, /seed must be in \[0, 2\*\*64\)/],
    [{ seed: '42' }, TypeError, /seed must be a number or a bigint, got string "42"/],
    [{ offset: -3 }, RangeError, /offset must be a non-negative safe integer/],
    [{ kind: 'mtgp32', offset: 10 }, RangeError, /mtgp32 cannot start at an offset/],
    [{ kind: 'mt19937', offset: 1n }, RangeError, /mt19937 cannot start at an offset/],
    [{ ordering: 'fast' }, TypeError, /ordering must be one of 'default', 'best', 'seeded', 'legacy', 'dynamic'/],
    [{ kind: 'sobol32', ordering: 'best' }, TypeError, /a quasi generator \(sobol32\) takes ordering 'default' only/],
    [{ kind: 'sobol64', seed: 3 }, TypeError, /a quasi generator \(sobol64\) takes no seed/],
    [{ kind: 'xorwow', dimensions: 2 }, TypeError, /dimensions are for the quasi generators/],
    [{ kind: 'sobol32', dimensions: 0 }, RangeError, /dimensions must be an integer ≥ 1, got 0/],
    [{ kind: 'sobol32', dimensions: 20001 }, RangeError, /dimensions must be 1 to 20000/],
    [{ stream: 3 }, TypeError, /RandomGenerator.create: stream must be a Stream/],
  ])('%p', (options, type, message) => {
    expect(() => RandomGenerator.create(options as never)).toThrow(type);
    expect(() => RandomGenerator.create(options as never)).toThrow(message);
  });
});

type GenCtor = new (...args: unknown[]) => RandomGenerator;
const API_NAMES = [
  'curandGenerateUniform',
  'curandGenerateUniformDouble',
  'curandGenerateNormal',
  'curandGenerateNormalDouble',
  'curandGenerateLogNormal',
  'curandGenerateLogNormalDouble',
  'curandGeneratePoisson',
  'curandGenerate',
  'curandGenerateLongLong',
  'curandSetPseudoRandomGeneratorSeed',
  'curandSetGeneratorOffset',
  'curandSetStream',
];

/** A generator over a fake handle on a driverless context's legacy stream; its cuRAND API is a set of spies. */
function fakeGenerator(kind = 'philox4_32_10', dimensions = 1): { gen: RandomGenerator; api: Record<string, jest.Mock> } {
  const api = Object.fromEntries(API_NAMES.map((n) => [n, jest.fn()]));
  const gen = new (RandomGenerator as unknown as GenCtor)(SEALED, kind, dimensions, Stream.legacyDefault(ctx), 0xabc, api);
  (gen.core as unknown as { destroyNative: () => void }).destroyNative = () => undefined;
  return { gen, api };
}

describe('fills (fake generator)', () => {
  test('the count comes from the view or the buffer; the address from the view', () => {
    const { gen, api } = fakeGenerator();
    const buf = new FakeBuffer(4000);
    gen.uniform(buf, { dtype: 'f32' });
    expect(api.curandGenerateUniform).toHaveBeenLastCalledWith(0xabc, BASE, 1000);
    gen.uniform(buf, { dtype: 'f64' });
    expect(api.curandGenerateUniformDouble).toHaveBeenLastCalledWith(0xabc, BASE, 500);
    gen.uniform(StridedView.of(buf, { dtype: 'f32', shape: [10, 30], byteOffset: 16 }));
    expect(api.curandGenerateUniform).toHaveBeenLastCalledWith(0xabc, BASE + 16, 300);
    gen.normal(StridedView.of(buf, { dtype: 'f64', shape: [64] }), { mean: 2, std: 0.5 });
    expect(api.curandGenerateNormalDouble).toHaveBeenLastCalledWith(0xabc, BASE, 64, 2, 0.5);
    gen.logNormal(buf, { dtype: 'f32' });
    expect(api.curandGenerateLogNormal).toHaveBeenLastCalledWith(0xabc, BASE, 1000, 0, 1);
    gen.poisson(buf, 3.5);
    expect(api.curandGeneratePoisson).toHaveBeenLastCalledWith(0xabc, BASE, 1000, 3.5);
    gen.bits(buf);
    expect(api.curandGenerate).toHaveBeenLastCalledWith(0xabc, BASE, 1000);
    gen.uniform(StridedView.of(buf, { dtype: 'f32', shape: [0] }));
    expect(api.curandGenerateUniform).toHaveBeenCalledTimes(2); // nothing to fill: no call
    gen.setSeed(42n).setOffset(7);
    expect(api.curandSetPseudoRandomGeneratorSeed).toHaveBeenCalledWith(0xabc, 42n);
    expect(api.curandSetGeneratorOffset).toHaveBeenCalledWith(0xabc, 7);
    expect(gen.toString()).toBe('RandomGenerator(philox4_32_10)');
    gen.close();
    expect(() => gen.uniform(buf, { dtype: 'f32' })).toThrow(/RandomGenerator.uniform.*closed/);
  });

  test('bad outputs and parameters are refused before cuRAND', () => {
    const { gen, api } = fakeGenerator();
    const buf = new FakeBuffer(4000);
    expect(() => gen.uniform(buf)).toThrow(/RandomGenerator.uniform: out is a DeviceBuffer without a dtype: pass \{ dtype: 'f32' \| 'f64' \}/);
    expect(() => gen.uniform(buf, { dtype: 'i32' as never })).toThrow(/RandomGenerator.uniform: dtype must be 'f32' or 'f64'/);
    expect(() => gen.uniform(new Float32Array(8) as never)).toThrow(/out must be a DeviceBuffer or a StridedView.*host array/);
    expect(() => gen.uniform(StridedView.of(buf, { dtype: 'c64', shape: [4] }))).toThrow(/out holds c64, expected f32 or f64/);
    expect(() => gen.uniform(StridedView.of(buf, { dtype: 'f32', shape: [4] }), { dtype: 'f64' })).toThrow(/out holds f32, the dtype option says f64/);
    expect(() => gen.uniform(StridedView.of(buf, { dtype: 'f32', shape: [4, 4], strides: [8, 1] }))).toThrow(/RandomGenerator.uniform: out must be contiguous/);
    expect(() => gen.normal(buf, { dtype: 'f32', std: -1 })).toThrow(/RandomGenerator.normal: std must be ≥ 0, got -1/);
    expect(() => gen.normal(buf, { dtype: 'f32', mean: NaN })).toThrow(/mean must be a finite number/);
    expect(() => gen.logNormal(buf, { dtype: 'f32', std: '1' as never })).toThrow(/RandomGenerator.logNormal: std must be a finite number/);
    expect(() => gen.normal(buf, 3 as never)).toThrow(/options must be an object/);
    expect(() => gen.poisson(buf, 0)).toThrow(/RandomGenerator.poisson: lambda must be a finite number > 0, got 0/);
    expect(() => gen.poisson(buf, '2' as never)).toThrow(/lambda must be a number/);
    expect(() => gen.poisson(StridedView.of(buf, { dtype: 'i32', shape: [4] }), 2)).toThrow(/out holds i32, expected u32/);
    expect(() => gen.bits(StridedView.of(buf, { dtype: 'u64', shape: [4] }))).toThrow(/out holds u64, expected u32/);
    expect(() => gen.setSeed(-1)).toThrow(RangeError);
    expect(() => gen.setStream(7 as never)).toThrow(/RandomGenerator.setStream: stream must be a Stream/);
    for (const fn of Object.values(api)) expect(fn).not.toHaveBeenCalled();
    gen.close();
  });

  test('quasi generators: whole multiples of the dimensions, no seed, 64-bit bits', () => {
    const { gen, api } = fakeGenerator('sobol64', 4);
    const buf = new FakeBuffer(4096);
    expect(() => gen.uniform(StridedView.of(buf, { dtype: 'f64', shape: [10] }))).toThrow(
      /a sobol64 generator of 4 dimensions fills whole multiples of 4 values, got 10/,
    );
    expect(() => gen.setSeed(1)).toThrow(/RandomGenerator.setSeed: a quasi generator \(sobol64\) takes no seed/);
    gen.bits(buf);
    expect(api.curandGenerateLongLong).toHaveBeenLastCalledWith(0xabc, BASE, 512);
    gen.normal(StridedView.of(buf, { dtype: 'f32', shape: [12] }));
    expect(api.curandGenerateNormal).toHaveBeenLastCalledWith(0xabc, BASE, 12, 0, 1);
    gen.close();
    const mt = fakeGenerator('mtgp32');
    expect(() => mt.gen.setOffset(3)).toThrow(/RandomGenerator.setOffset: mtgp32 cannot start at an offset/);
    mt.gen.close();
  });

  test('close() destroys the generator once, with or without using', () => {
    const destroyed = jest.fn();
    {
      using gen = fakeGenerator().gen;
      (gen.core as unknown as { destroyNative: () => void }).destroyNative = destroyed;
      gen.close();
      expect(gen.closed).toBe(true);
      expect(() => gen.handle).toThrow(/RandomGenerator.handle.*closed/);
    }
    expect(destroyed).toHaveBeenCalledTimes(1);
  });

  test('an even count at a pair-aligned address goes straight to cuRAND', () => {
    const { gen, api } = fakeGenerator();
    const buf = new FakeBuffer(4096);
    gen.normal(StridedView.of(buf, { dtype: 'f32', shape: [100], byteOffset: 8 }));
    expect(api.curandGenerateNormal).toHaveBeenLastCalledWith(0xabc, BASE + 8, 100, 0, 1);
    gen.close();
  });
});
