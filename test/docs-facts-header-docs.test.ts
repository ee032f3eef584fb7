// `cuda-ts-gen --docs` keeps the structure of the headers' comments (generator/emit/docs-header.ts), on a
// synthetic header written here (no NVIDIA text): lines and list items stay lines, a \code block becomes a
// fenced block with its indentation, every \return is kept, aliases clang does not know leave nothing,
// and a code span's trailing punctuation stays outside it. Skipped with the reason when clang is absent.
import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { detachedCommentSource, headerDocs } from '../generator/emit/docs-header';
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

describe('doc comments an #if separates from their declaration', () => {
  const header = ['/**', ' * \\brief Kept apart.', ' */', '#if defined(__cplusplus)', 'int apart(int x = 0);', '#else', 'int apart(int x);', '#endif', '', '/** \\brief Adjacent. */', 'int adjacent(void);', '/** \\brief Inline wrapper. */', '#ifndef NO_INLINE', 'static inline int wrapped(void) { return __wrapped_1(); }', '#endif'].join('\n');
  test('the comment above the directives is recovered for its declaration; adjacent ones are left to clang', () => {
    const source = detachedCommentSource(header, ['apart', 'adjacent', 'wrapped', 'absent']);
    expect(source).toBe(['/**', ' * \\brief Kept apart.', ' */', 'void apart(void);', '', '/** \\brief Inline wrapper. */', 'void wrapped(void);', ''].join('\n'));
  });
  (clang ? test : test.skip)('clang reads the recovered comments', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-hdoc-'));
    writeFileSync(join(dir, 'd.h'), detachedCommentSource(header, ['apart', 'wrapped']));
    const docs = headerDocs(clangAst({ clang: clang!, includeDirs: [dir], includes: ['d.h'] }));
    rmSync(dir, { recursive: true, force: true });
    expect([docs.get('apart')?.brief, docs.get('wrapped')?.brief]).toEqual(['Kept apart.', 'Inline wrapper.']);
  });
});
