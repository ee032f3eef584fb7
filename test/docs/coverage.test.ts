// Documentation coverage of the committed bindings: per module, the share of functions (raw and typed
// layers) with a summary line and an `@param` with text for every parameter. The driver, runtime and
// NVRTC must reach 95% in every stored release, with an `@param` for every parameter the semantics
// model knows (all of them: 100%); docs/reference.md carries the 13.0 table, checked here against the files.
// The typed layer's @params say a role, not just the C type: under 1% restate it in any stored release.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESTATES_TYPE, TYPE_ONLY, coverageTable, layerCoverage, moduleCoverage } from './doc-coverage';

const ROOT = join(__dirname, '..', '..');
const RELEASES = readdirSync(join(ROOT, 'generated'))
  .filter((r) => /^\d+\.\d+$/.test(r))
  .sort();

describe('TSDoc coverage of the committed bindings', () => {
  for (const release of RELEASES) {
    for (const module of ['driver', 'runtime', 'nvrtc']) {
      test(`${release} ${module}: ≥ 95% of functions documented, every parameter has an @param`, () => {
        const { raw, typed } = moduleCoverage(ROOT, release, module);
        for (const layer of [raw, typed]) {
          expect(layer.functions).toBeGreaterThan(0);
          const share = layer.documented / layer.functions;
          if (share < 0.95) throw new Error(`${release} ${module}: ${(100 * share).toFixed(1)}% documented; missing: ${layer.missing.slice(0, 10).join('; ')}`);
          expect(layer.paramsDocumented).toBe(layer.params);
        }
      });
    }
  }

  // Issue 45 measured 62.6% of the typed layer's @params restating the C type; each now says a role
  // (count, size, data type, attribute, handle, enum values, memory) or, for an integer nothing refers
  // to, the values accepted. Records passed by value were the last restating ones.
  test.each(RELEASES)("%s: under 1% of the typed layer's @params only restate the C type; under 35% say no role", (release) => {
    let params = 0;
    let restating = 0;
    let typeOnly = 0;
    const sample: string[] = [];
    for (const module of readdirSync(join(ROOT, 'generated', release))) {
      const { typed } = moduleCoverage(ROOT, release, module);
      params += typed.paramsDocumented;
      restating += typed.restating;
      typeOnly += typed.typeOnly;
      sample.push(...typed.restatingSample.map((x) => `${module} ${x}`));
    }
    expect(params).toBeGreaterThan(5000);
    if (restating / params >= 0.01)
      throw new Error(`${release}: ${((100 * restating) / params).toFixed(1)}% restate the C type, e.g. ${sample.slice(0, 5).join('; ')}`);
    expect(typeOnly / params).toBeLessThan(0.35);
  });

  test('docs/reference.md carries the 13.0 table as the files have it', () => {
    const page = readFileSync(join(ROOT, 'docs', 'reference.md'), 'utf8');
    const m = /<!-- docs-coverage 13\.0 -->\n([\s\S]*?)\n<!-- \/docs-coverage -->/.exec(page);
    expect(m).not.toBeNull();
    expect(m![1]).toBe(coverageTable(ROOT, '13.0'));
  });
});

describe('the coverage measure itself', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cuda-ts-cov-'));
    writeFileSync(
      join(dir, 'a.ts'),
      [
        '/** Summary.\n * @param x the x.\n * @param y the y. */\nexport function full(x: number, y: number): void {}',
        '/** Summary.\n * @param x the x. */\nexport function halfParams(x: number, y: number): void {}',
        '/** @param x the x. */\nexport function noSummary(x: number): void {}',
        '/** Summary.\n * @param x\n */\nexport function emptyParam(x: number): void {}',
        'function notExported(x: number): void {}',
      ].join('\n'),
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('counts only functions with a summary and text for every parameter', () => {
    const c = layerCoverage(dir);
    expect(c.functions).toBe(4);
    expect(c.documented).toBe(1);
    expect([c.params, c.paramsDocumented]).toEqual([6, 4]);
    expect(c.missing).toEqual(['halfParams (no @param y)', 'noSummary (no summary)', 'emptyParam (no @param x)']);
  });

  test('an @param restates the C type when it says only a direction and the type', () => {
    for (const t of ['in `int`.', 'in `cublasHandle_t`.', 'out `int *`', 'in `float2` by value.', '`size_t`'])
      expect([t, RESTATES_TYPE.test(t)]).toEqual([t, true]);
    for (const t of [
      'in `int`: count of `x` in elements.',
      'in `cublasHandle_t`: an opaque handle, such as `cublasCreate` returns.',
      'in `cublasOperation_t`: one of the {@link T.cublasOperation_t} values.',
      'in/out `float *`: device memory.',
    ])
      expect([t, RESTATES_TYPE.test(t)]).toEqual([t, false]);
    expect(TYPE_ONLY.test('in `int`: a signed 32-bit integer.')).toBe(true);
    expect(TYPE_ONLY.test('in `size_t`: an unsigned 64-bit integer (a number, or a bigint past 2^53).')).toBe(true);
    expect(TYPE_ONLY.test('in `int`: length of `x`.')).toBe(false);
  });
});
