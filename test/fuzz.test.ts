// Bad-input fuzz of the typed layer of every 13.0 module (and of the raw layer's out-parameters),
// each call in a child process: 0 crashes, 0 bad values reaching C, every TypeError/RangeError naming the
// function and the parameter. The harness is first checked on a fixture module that does each wrong thing.
import { join } from 'node:path';
import { runFuzz, type FuzzReport } from './fuzz/harness';
import { supportCases } from './fuzz/support-api';
import { clean, failureTable, rawSummaryLine, summaryLine, supportSummaryLine } from './fuzz/report';

const root = join(__dirname, '..');

describe('fuzz harness (fixture module: one function per kind of failure)', () => {
  let report: FuzzReport;
  beforeAll(async () => {
    report = await runFuzz({
      root: join(__dirname, 'fuzz/fixture'),
      version: '0.0',
      modules: ['sample'],
      jobs: 2,
      timeoutBaseMs: 3000,
      timeoutPerCallMs: 0,
      neutralRounds: 1,
    });
  }, 120_000);

  const outcomes = (fn: string) => [...new Set(report.failures.filter((f) => f.c.fn === fn).map((f) => f.outcome))];

  test('tells each failure apart and says where it happened', () => {
    expect(report.sources).toEqual({ sample: 'adapter' });
    expect(outcomes('checks')).toEqual([]);
    expect(outcomes('leaks')).toEqual(['reachedC']);
    expect(outcomes('aborts')).toEqual(['crash']);
    expect(outcomes('vague')).toEqual(['unnamed']);
    expect(outcomes('blames')).toEqual(['misattributed']);
    expect(outcomes('hangs')).toEqual(['timeout']);
    expect(outcomes('getValue')).toEqual([]);
    expect(outcomes('getSize')).toEqual(['reachedC']);
    expect(report.failures.find((f) => f.c.fn === 'aborts')!.detail).toMatch(/SIGABRT/);
    // each crashing value is charged to its own call, confirmed alone; the other values still ran
    const aborts = report.failures.filter((f) => f.c.fn === 'aborts');
    expect(aborts.map((f) => f.c.value).sort()).toEqual(["''", "'1'", "'x'"]);
    expect(aborts.every((f) => f.confirmed)).toBe(true);
    expect(report.failures.filter((f) => f.c.fn === 'hangs').map((f) => f.c.value)).toEqual(['null']);
    expect(clean(report)).toBe(false);
  });

  test('sends only values the parameter kind must refuse', () => {
    const values = (fn: string) => report.failures.filter((f) => f.c.fn === fn).map((f) => f.c.value);
    expect(values('vague')).not.toContain('NaN'); // NaN and ±Infinity are valid floats
    expect(values('vague')).not.toContain('Infinity');
    expect(values('vague')).toContain("'x'");
    expect(values('leaks')).not.toContain('-1'); // a valid int32
    expect(values('leaks')).toEqual(expect.arrayContaining(['NaN', '1.5', '2**31', '2**32+1', '2**53+1', '-1n', '2n**64n', 'null', 'undefined']));
    expect(values('blames')).toContain('-1'); // not a uint32
  });
});

/**
 * The fuzz of `modules` of 13.0 as one suite: the report must cover at least `least` (so that it
 * cannot pass vacuously), and nothing may crash, reach C, or throw an error that does not name the
 * function and the parameter.
 */
function fuzzSuite(
  title: string,
  modules: string[],
  batchSize: number,
  least: { typedFunctions: number; typedCases: number; rawFunctions: number; rawCases: number },
): void {
  describe(title, () => {
    let report: FuzzReport;
    beforeAll(async () => {
      report = await runFuzz({ root, version: '13.0', modules, jobs: 2, batchSize });
    }, 900_000);

    test(`covers every typed function of ${modules.join(', ')} (the counts cannot pass vacuously)`, () => {
      expect(report.mismatches).toEqual([]);
      expect(report.typed.functions).toBeGreaterThan(least.typedFunctions);
      expect(report.typed.cases).toBeGreaterThan(least.typedCases);
      expect(report.raw.functions).toBeGreaterThan(least.rawFunctions);
      expect(report.raw.cases).toBeGreaterThan(least.rawCases);
    });

    test('0 crashes, 0 bad values reaching C, every error names the function and the parameter', () => {
      const counts = (c: FuzzReport['typed']) => ({ crashes: c.crashes, reachedC: c.reachedC, unnamed: c.unnamed, misattributed: c.misattributed });
      if (!clean(report)) process.stderr.write(`${failureTable(report)}\n${summaryLine(report)}\n${rawSummaryLine(report)}\n`);
      expect({ typed: counts(report.typed), raw: counts(report.raw), stopped: report.stopped }).toEqual({
        typed: { crashes: 0, reachedC: 0, unnamed: 0, misattributed: 0 },
        raw: { crashes: 0, reachedC: 0, unnamed: 0, misattributed: 0 },
        stopped: false,
      });
    });
  });
}

describe('bad-input fuzz: the public support helpers (cuda-ts/runtime-support), crash-isolated', () => {
  let report: FuzzReport;
  beforeAll(async () => {
    report = await runFuzz({ root, version: '13.0', modules: [], support: true, raw: false, jobs: 2, batchSize: 2500 });
  }, 300_000);

  test('covers every public helper that takes arguments, with the values the issue named', () => {
    expect(report.support.functions).toBeGreaterThanOrEqual(39);
    expect(report.support.cases).toBeGreaterThan(4000);
    const sent = new Set(supportCases(0).map((c) => `${c.fn}(${c.param} = ${c.value})`));
    const named = [
      'encodeRecord(value = Uint8Array(1))',
      'encodeRecord(value = [])',
      'encodeRecord(value = {aa:1})',
      'encodeRecord(value = {a:1.9})',
      'encodeRecord(value = {a:2**32+3})',
      'encodeRecord(value = {a:NaN})',
      "encodeRecord(value = {a:'x'})",
      'allocLength(n = 1.5)',
      'sameLength(counts = [1.5])',
      'coversCount(count = NaN)',
      'scalarArrayArg(value = Int8Array(2))',
      'versionString(n = 1.5)',
      'Scratch.slot(i = 12345)',
      'readCString(address = 1.5)',
      'decodeRecord(from = 12345)',
      'toAddress(v = 1.5)',
      'hostCallbacks.pending(value = -1)',
    ];
    expect(named.filter((c) => !sent.has(c))).toEqual([]);
  });

  test('0 crashes, 0 values taken silently, every error names the helper (or the call it checks) and the argument', () => {
    if (!clean(report)) process.stderr.write(`${failureTable(report)}\n${supportSummaryLine(report)}\n`);
    const s = report.support;
    expect({ crashes: s.crashes, taken: s.reachedC, unnamed: s.unnamed, misattributed: s.misattributed, stopped: report.stopped }).toEqual({
      crashes: 0,
      taken: 0,
      unnamed: 0,
      misattributed: 0,
      stopped: false,
    });
  });
});

fuzzSuite('bad-input fuzz: 13.0 driver + runtime typed layer, crash-isolated', ['driver', 'runtime'], 4000, {
  typedFunctions: 650,
  typedCases: 25_000,
  rawFunctions: 350,
  rawCases: 500,
});

// The libraries' modules (cuBLAS … NVML): no library is installed in CI, so a call that validation lets
// through fails to load its library: that CudaLibraryError counts as "reached C", as it would have
// reached C on a machine with the library.
fuzzSuite(
  'bad-input fuzz: 13.0 library modules, crash-isolated',
  ['cublas', 'cublaslt', 'cudnn', 'cufft', 'cufile', 'cupti', 'curand', 'cusolver', 'cusparse', 'nccl', 'nvfatbin', 'nvjitlink', 'nvml', 'nvrtc'],
  6000,
  { typedFunctions: 2200, typedCases: 250_000, rawFunctions: 1700, rawCases: 5000 },
);
