// The guides (docs/*.md) and the README read as a user's guide: every TypeScript block of the guides
// type-checks against the real API, as the README's do (test/helpers/ts-blocks.ts); their relative links
// lead to files that exist; and no user document carries run history (timestamps, commit hashes).
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { typeCheck, typescriptBlocks, usesTopLevelAwait } from '../helpers/ts-blocks';

const ROOT = join(__dirname, '..', '..');
/** Pages other helpers own and check themselves (math objects, awaiting) are left to their own tests. */
const OWN_TESTS = new Set(['math.md', 'awaiting.md', 'from-cuda-python.md']);
const pages = readdirSync(join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .sort();
const guides = pages.filter((f) => !OWN_TESTS.has(f));
const blocks = guides.flatMap((page) =>
  typescriptBlocks(readFileSync(join(ROOT, 'docs', page), 'utf8')).map((b) => ({ ...b, page, esm: usesTopLevelAwait(b.code) })),
);
let dir = '';
const results = new Map<string, string[]>();
const fileOf = (b: { page: string; line: number; esm: boolean }) => join(dir, `${b.page.replace(/\W/g, '-')}-line-${b.line}.${b.esm ? 'mts' : 'cts'}`);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cuda-ts-guides-'));
  const files = blocks.map((b) => {
    writeFileSync(fileOf(b), `${b.code}\nexport {};\n`);
    return fileOf(b);
  });
  for (const [f, e] of typeCheck(files)) results.set(f, e);
}, 300_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('docs/: every TypeScript block type-checks', () => {
  test('the guides have blocks to check', () => {
    expect(blocks.length).toBeGreaterThan(5);
  });
  for (const b of blocks) {
    test(`docs/${b.page} line ${b.line} (${b.esm ? 'ES module' : 'CommonJS'})`, () => {
      expect(results.get(fileOf(b))).toEqual([]);
    });
  }
});

describe('user documents', () => {
  const documents = ['README.md', ...pages.map((p) => `docs/${p}`)];

  test('relative links lead to files that exist', () => {
    const broken: string[] = [];
    for (const doc of documents) {
      const text = readFileSync(join(ROOT, doc), 'utf8');
      for (const m of text.matchAll(/\]\((?!https?:|#|mailto:)([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (!existsSync(join(ROOT, dirname(doc), m[1]))) broken.push(`${doc}: ${m[1]}`);
      }
    }
    expect(broken).toEqual([]);
  });

  test("no run history: no times of day, UTC stamps or commit hashes (the README's bench summary names its date once)", () => {
    const found: string[] = [];
    for (const doc of documents) {
      const text = readFileSync(join(ROOT, doc), 'utf8').replace(/<!-- bench-summary -->\n[^\n]*\n/, '');
      for (const m of text.matchAll(/\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2} UTC\b|\bat (?:commit )?[0-9a-f]{7,40}\b|\bcommit [0-9a-f]{7,40}\b/g))
        found.push(`${doc}: ${m[0]}`);
    }
    expect(found).toEqual([]);
  });

  test('the README stays a guide: at most ~400 lines, install before line 40', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
    expect(readme.length).toBeLessThanOrEqual(400);
    expect(readme.findIndex((l) => l === '## Install')).toBeLessThan(40);
  });
});
