// docs/awaiting.md (the guide to awaiting GPU work): every TypeScript block type-checks against the real
// API (test/helpers/ts-blocks.ts, as test/docs/guides.test.ts does for the other guides), and what the
// page promises about settings and names is what the code has.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { typeCheck, typescriptBlocks, usesTopLevelAwait } from './helpers/ts-blocks';
import { configureWaits } from '../src/await/waiter';

const ROOT = join(__dirname, '..');
const page = readFileSync(join(ROOT, 'docs', 'awaiting.md'), 'utf8');

describe('docs/awaiting.md', () => {
  test('every TypeScript block type-checks', () => {
    const blocks = typescriptBlocks(page);
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-awaiting-'));
    try {
      const files = blocks.map((b) => {
        const f = join(dir, `line-${b.line}.${usesTopLevelAwait(b.code) ? 'mts' : 'cts'}`);
        writeFileSync(f, `${b.code}\nexport {};\n`);
        return f;
      });
      const errors = typeCheck(files);
      expect(Object.fromEntries(files.map((f) => [f.slice(dir.length + 1), errors.get(f) ?? []]))).toEqual(
        Object.fromEntries(files.map((f) => [f.slice(dir.length + 1), []])),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);

  test("the settings it names are the waiter's, with the defaults it states", () => {
    const s = configureWaits();
    expect(Object.keys(s).sort()).toEqual([
      'flags',
      'parkOn',
      'predict',
      'predictMaxKeys',
      'predictUpToMs',
      'spinMaxKeys',
      'spinMicros',
      'spinSliceMicros',
      'sweepMs',
    ]);
    for (const k of Object.keys(s)) expect(page).toContain(k);
    expect(s).toMatchObject({
      spinMicros: 300,
      spinSliceMicros: 250,
      spinMaxKeys: 8,
      parkOn: 'helper',
      predict: true,
      predictUpToMs: 50,
      predictMaxKeys: 4,
      sweepMs: 100,
      flags: 'crowd',
    });
    expect(page).toMatch(/first 300 µs/);
    expect(page).toMatch(/slices of at most 250 µs/);
    expect(page).toMatch(/Only while at most 8 streams or events are awaited at once \(`spinMaxKeys`\)/);
    expect(page).toMatch(/at most\s+50 ms, made and watched while at most 4/);
    expect(page).toMatch(/every 100 ms/);
  });
});
