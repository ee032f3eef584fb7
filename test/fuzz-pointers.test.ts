// Bad-input fuzz of the pointer rules (issue 43 part A) over every 13.0 math module, crash-isolated:
// scalars by pointer (numbers are values; an untyped scalar refuses them), device memory (host buffers
// refused), host memory ({ ptr } refused), either-space memory, result arrays sized by their count and
// cuBLASLt's typed attributes. A deterministic sample of each module's functions that have such a
// parameter, plus the functions the issue names; the whole-module fuzz (test/fuzz.test.ts) sends the
// same values everywhere. The raw layer's cases of the same functions run too.
import { join } from 'node:path';
import { runFuzz, type FuzzReport } from './fuzz/harness';
import { loadSignatures } from './fuzz/model';
import { typedCases } from './fuzz/cases';
import { clean, failureTable, rawSummaryLine, summaryLine } from './fuzz/report';

const root = join(__dirname, '..');
const MODULES = ['cublas', 'cublaslt', 'cudnn', 'cufft', 'curand', 'cusolver', 'cusparse', 'nccl'];
const NAMED = new Set([
  'cublasSgemm',
  'cublasCaxpy',
  'cublasGemmEx',
  'cublasGetVector',
  'cublasLtMatmul',
  'cublasLtMatmulAlgoGetHeuristic',
  'cublasLtMatmulDescSetAttribute',
  'cublasLtMatrixLayoutSetAttribute',
  'cublasLtMatmulPreferenceSetAttribute',
  'cudnnConvolutionForward',
  'cudnnGetConvolutionForwardAlgorithm_v7',
  'cufftExecC2C',
  'curandGenerateUniform',
  'curandGenerateNormal',
  'cusolverDnSpotrf',
  'cusolverDnXpotrf',
  'cusparseCreateDnVec',
  'cusparseSpMV',
  'ncclAllReduce',
  'ncclCommInitAll',
  'ncclRedOpCreatePreMulSum',
]);
const NEW_KINDS = new Set(['scalar', 'device', 'host', 'memory']);
const EVERY = 10; // one function in EVERY of those with a new kind of parameter, per module

/** The functions fuzzed: the named ones, and every EVERY-th function of a module with a scalar or space-typed parameter. */
function sample(): string[] {
  const picked: string[] = [];
  for (const module of MODULES) {
    const { functions } = loadSignatures(root, '13.0', module);
    const withNew = [...functions]
      .filter(([, params]) => params.some((p) => NEW_KINDS.has(p.accepts)))
      .map(([fn]) => fn)
      .sort();
    picked.push(
      ...withNew.filter((fn, i) => i % EVERY === 0 || NAMED.has(fn)),
      ...[...functions.keys()].filter((fn) => NAMED.has(fn) && !withNew.includes(fn)),
    );
  }
  return picked;
}

describe('bad-input fuzz of the pointer rules: 13.0 math modules, crash-isolated', () => {
  let report: FuzzReport;
  const only = sample();
  beforeAll(async () => {
    report = await runFuzz({ root, version: '13.0', modules: MODULES, only, raw: true, jobs: 2, batchSize: 3000 });
  }, 900_000);

  test('the sample holds every new kind of parameter in every module that has one, and the functions the issue names', () => {
    expect(only.filter((fn) => NAMED.has(fn)).sort()).toEqual([...NAMED].sort());
    const kinds = new Set<string>();
    for (const module of MODULES) {
      const { functions } = loadSignatures(root, '13.0', module);
      for (const c of typedCases(module, functions, new Set(only))) kinds.add(c.accepts.replace(/\?$/, ''));
    }
    expect([...NEW_KINDS].filter((k) => !kinds.has(k))).toEqual([]);
    expect(report.typed.functions).toBeGreaterThan(100);
    expect(report.typed.cases).toBeGreaterThan(20_000);
    expect(report.raw.cases).toBeGreaterThan(1000);
  });

  test('0 crashes, 0 bad values reaching C, every error names the function and the parameter', () => {
    if (!clean(report)) process.stderr.write(`${failureTable(report)}\n${summaryLine(report)}\n${rawSummaryLine(report)}\n`);
    const counts = (c: FuzzReport['typed']) => ({ crashes: c.crashes, reachedC: c.reachedC, unnamed: c.unnamed, misattributed: c.misattributed });
    const none = { crashes: 0, reachedC: 0, unnamed: 0, misattributed: 0 };
    // the raw layer too: its device-memory parameters refuse host buffers
    expect({ typed: counts(report.typed), raw: counts(report.raw), stopped: report.stopped }).toEqual({ typed: none, raw: none, stopped: false });
  });
});
