// Documentation coverage of the committed bindings: per module, the share of functions (raw and typed
// layers) with a summary line and an `@param` with text for every parameter. The driver, runtime and
// NVRTC must reach 95% in every stored release, with an `@param` for every parameter the semantics
// model knows (all of them: 100%); docs/reference.md carries the 13.0 table, checked here against the files.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { coverageTable, layerCoverage, moduleCoverage } from './doc-coverage';

const ROOT = join(__dirname, '..', '..');
const RELEASES = readdirSync(join(ROOT, 'generated')).filter((r) => /^\d+\.\d+$/.test(r)).sort();

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
    writeFileSync(join(dir, 'a.ts'), [
      '/** Summary.\n * @param x the x.\n * @param y the y. */\nexport function full(x: number, y: number): void {}',
      '/** Summary.\n * @param x the x. */\nexport function halfParams(x: number, y: number): void {}',
      '/** @param x the x. */\nexport function noSummary(x: number): void {}',
      '/** Summary.\n * @param x\n */\nexport function emptyParam(x: number): void {}',
      'function notExported(x: number): void {}',
    ].join('\n'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('counts only functions with a summary and text for every parameter', () => {
    const c = layerCoverage(dir);
    expect(c.functions).toBe(4);
    expect(c.documented).toBe(1);
    expect([c.params, c.paramsDocumented]).toEqual([6, 4]);
    expect(c.missing).toEqual(['halfParams (no @param y)', 'noSummary (no summary)', 'emptyParam (no @param x)']);
  });
});
