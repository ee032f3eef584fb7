// README truth: every ```ts block of README.md is type-checked as a user's file would be, with the
// package names resolving to this repository's sources (`cuda-ts/objects` → src/index.ts,
// `cuda-ts/13.0/driver/raw` → generated/13.0/driver/raw.ts, `@cuda-ts/driver` → the newest release's
// driver, …). A block that uses top-level await is checked as an ES module (an .mts file); the others
// as CommonJS (.cts); both kinds in one program under module node16, as Node would load them. No GPU
// needed: nothing runs.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { typeCheck, typescriptBlocks, usesTopLevelAwait } from './helpers/ts-blocks';

export { typeCheck, typescriptBlocks, usesTopLevelAwait, type ReadmeBlock } from './helpers/ts-blocks';

const ROOT = join(__dirname, '..');

// One program per module kind for every block, plus the checker's own probes: a file with a real type
// error (it must be reported) and a correct ESM file (it must not).
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const blocks = typescriptBlocks(readme).map((b) => ({ ...b, esm: usesTopLevelAwait(b.code) }));
const PROBE_BAD = "import { cuInit } from 'cuda-ts/driver';\ncuInit('0');\n";
const PROBE_GOOD =
  "import * as raw from 'cuda-ts/13.0/driver/raw';\nconst n = new Int32Array(1);\nconst s: number = raw.cuDeviceGetCount(n);\nawait Promise.resolve(s);\n";
let dir = '';
const results = new Map<string, string[]>();
const fileOf = (name: string, esm: boolean) => join(dir, `${name}.${esm ? 'mts' : 'cts'}`);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cuda-ts-readme-'));
  const files: string[] = [];
  const add = (name: string, code: string, esm: boolean) => {
    const file = fileOf(name, esm);
    // `export {}` keeps a block without imports a module of its own (no clash between blocks' names).
    writeFileSync(file, `${code}\nexport {};\n`);
    files.push(file);
  };
  for (const b of blocks) add(`readme-line-${b.line}`, b.code, b.esm);
  add('probe-bad', PROBE_BAD, false);
  add('probe-good', PROBE_GOOD, true);
  for (const [f, e] of typeCheck(files)) results.set(f, e);
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('README.md: every TypeScript block type-checks', () => {
  test('the README has TypeScript blocks to check, none with top-level await (they run in an `npm init -y` CommonJS project)', () => {
    expect(blocks.length).toBeGreaterThan(0);
    expect(blocks.filter((b) => b.esm).map((b) => b.line)).toEqual([]);
  });

  for (const block of blocks) {
    test(`the block at README.md line ${block.line} (${block.esm ? 'ES module: top-level await' : 'CommonJS'})`, () => {
      expect(results.get(fileOf(`readme-line-${block.line}`, block.esm))).toEqual([]);
    });
  }
});

describe('the README block checker itself', () => {
  test('finds fenced ts blocks with their lines, ignores other languages', () => {
    const md = 'text\n```ts\nconst a = 1;\n```\n```js\nconst b = 2;\n```\n```typescript\nlet c: number = 3;\n```\n';
    expect(typescriptBlocks(md)).toEqual([
      { line: 2, code: 'const a = 1;' },
      { line: 8, code: 'let c: number = 3;' },
    ]);
  });

  test('tells top-level await from await inside a function', () => {
    expect(usesTopLevelAwait('await Promise.resolve(1);')).toBe(true);
    expect(usesTopLevelAwait('async function f() { await 1; }')).toBe(false);
    expect(usesTopLevelAwait('for await (const x of []) {}')).toBe(true);
  });

  test('reports a real type error in a block (CommonJS), and none in a correct ES module with top-level await', () => {
    expect(results.get(fileOf('probe-bad', false))).toEqual([expect.stringMatching(/^line 2 of the block: TS2345 /)]);
    expect(results.get(fileOf('probe-good', true))).toEqual([]);
  });
});
