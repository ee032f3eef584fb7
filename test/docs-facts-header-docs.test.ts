// `cuda-ts-gen --docs` keeps the structure of the headers' comments (generator/emit/docs-header.ts), on a
// synthetic header written here (no NVIDIA text): lines and list items stay lines, a \code block becomes a
// fenced block with its indentation, every \return is kept, aliases clang does not know leave nothing,
// and a code span's trailing punctuation stays outside it. Skipped with the reason when clang is absent.
import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { headerDocs } from '../generator/emit/docs-header';
import { docBlock } from '../generator/emit/docs';
import { clangAst, findClang } from '../generator/parse/clang';

const HEADER = `/**
 * \\brief Adds one.
 *
 * The first line of the details
 * goes on here, naming \\p value, then more.
 * - one item
 * - another item
 *
 * \\code
   int y = add_one(1);
     if (y) go();
 * \\endcode
 *
 * \\param value - the input
 * \\return ::OK when it worked
 * \\return ::FAILED otherwise
 * \\note_made_up_alias
 * \\madeupfnerr
 * \\note A note.
 */
int add_one(int value);
`;

function clangOrUndefined(): string | undefined {
  try {
    return findClang();
  } catch {
    return undefined;
  }
}
const clang = clangOrUndefined();
if (!clang) console.warn('docs-facts-header-docs.test.ts skipped: clang is not installed');

(clang ? describe : describe.skip)('--docs keeps the structure of a header comment', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-hdoc-'));
  writeFileSync(join(dir, 'h.h'), HEADER);
  const doc = headerDocs(clangAst({ clang: clang!, includeDirs: [dir], includes: ['h.h'] })).get('add_one')!;
  rmSync(dir, { recursive: true, force: true });

  test('lines, list items and the code block, indentation kept', () => {
    expect(doc.brief).toBe('Adds one.');
    expect(doc.details).toBe(['The first line of the details', 'goes on here, naming `value`, then more.', '- one item', '- another item', '', '```c', 'int y = add_one(1);', '  if (y) go();', '```', '', 'Note: A note.'].join('\n'));
  });
  test('every \\return, and nothing of the unknown aliases', () => {
    expect(doc.returns).toBe('`OK` when it worked\n`FAILED` otherwise');
    expect(JSON.stringify(doc)).not.toMatch(/made_?up|_alias|fnerr/);
  });
  test('the TSDoc block keeps the lines inside the comment', () => {
    const block = docBlock('summary', [`@remarks ${doc.details}`]);
    expect(block.split('\n').length).toBeGreaterThan(8);
    expect(block).toContain('\n * - one item\n * - another item');
    expect(block).not.toMatch(/\*\//);
  });
});
