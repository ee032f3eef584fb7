// docs/from-cuda-python.md: every TypeScript block type-checks against the real API, as the README's do
// (test/helpers/ts-blocks.ts), and the page maps the names it promises (cuda.core classes, cuda.bindings
// calls, CuPy) to cuda-ts names that exist.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { typeCheck, typescriptBlocks, usesTopLevelAwait } from '../helpers/ts-blocks';
import * as objects from '../../src';

const ROOT = join(__dirname, '..', '..');
const page = readFileSync(join(ROOT, 'docs', 'from-cuda-python.md'), 'utf8');
const blocks = typescriptBlocks(page).map((b) => ({ ...b, esm: usesTopLevelAwait(b.code) }));
let dir = '';
const results = new Map<string, string[]>();
const fileOf = (line: number, esm: boolean) => join(dir, `migration-line-${line}.${esm ? 'mts' : 'cts'}`);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cuda-ts-migration-'));
  const files = blocks.map((b) => {
    const file = fileOf(b.line, b.esm);
    writeFileSync(file, `${b.code}\nexport {};\n`);
    return file;
  });
  for (const [f, e] of typeCheck(files)) results.set(f, e);
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('docs/from-cuda-python.md', () => {
  test('has TypeScript blocks for the objects, typed and raw layers', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    expect(page).toMatch(/from 'cuda-ts\/objects'/);
    expect(page).toMatch(/from 'cuda-ts\/driver'/);
    expect(page).toMatch(/from 'cuda-ts\/13\.0\/driver\/raw'/);
  });

  for (const block of blocks) {
    test(`the block at line ${block.line} type-checks (${block.esm ? 'ES module' : 'CommonJS'})`, () => {
      expect(results.get(fileOf(block.line, block.esm))).toEqual([]);
    });
  }

  test('every objects-layer class the tables name in `Name.` or `new Name(` form is exported by cuda-ts/objects', () => {
    const named = new Set([...page.matchAll(/`(?:new )?([A-Z]\w+)[.(]/g)].map((m) => m[1]));
    const python = new Set([
      'Device',
      'Program',
      'ProgramOptions',
      'LaunchConfig',
      'Linker',
      'LinkerOptions',
      'ObjectCode',
      'Buffer',
      'Kernel',
      'Graph',
      'Stream',
      'Event',
      'Tensor',
    ]);
    const ours = [...named].filter((n) => !python.has(n) || n in objects);
    expect(ours.length).toBeGreaterThan(10);
    expect(ours.filter((n) => !(n in objects) && !(n in globalThis) && !/^CU|^Driver/.test(n))).toEqual([]);
  });
});
