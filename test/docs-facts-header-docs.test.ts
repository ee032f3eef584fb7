// `cuda-ts-gen --docs` keeps the structure of the headers' comments (generator/emit/docs-header.ts), on a
// synthetic header written here (no NVIDIA text): lines and list items stay lines, a \code block becomes a
// fenced block with its indentation, every \return is kept (several: one list item each), aliases clang
// does not know leave nothing, and a code span's trailing punctuation stays outside it. On the synthetic
// toolkit (test/generator/synthetic-toolkit.ts, our own comments): a \link list clang leaves open keeps one
// item per line, the text after it is details and \see a link; the emitted TSDoc puts the returns list
// under its own line and see-also in its own @see tag. Skipped with the reason when clang is absent.
import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../generator/cli';
import { detachedCommentSource, headerDocs } from '../generator/emit/docs-header';
import { docBlock } from '../generator/emit/docs';
import { clangAst, findClang } from '../generator/parse/clang';
import { SYNTHETIC_RELEASE, writeSyntheticToolkit } from './generator/synthetic-toolkit';

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
    expect(doc.details).toBe(
      [
        'The first line of the details',
        'goes on here, naming `value`, then more.',
        '- one item',
        '- another item',
        '',
        '```c',
        'int y = add_one(1);',
        '  if (y) go();',
        '```',
        '',
        'Note: A note.',
      ].join('\n'),
    );
  });
  test('every \\return, each its own list item, and nothing of the unknown aliases', () => {
    expect(doc.returns).toBe('- `OK` when it worked\n- `FAILED` otherwise');
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
  const header = [
    '/**',
    ' * \\brief Kept apart.',
    ' */',
    '#if defined(__cplusplus)',
    'int apart(int x = 0);',
    '#else',
    'int apart(int x);',
    '#endif',
    '',
    '/** \\brief Adjacent. */',
    'int adjacent(void);',
    '/** \\brief Inline wrapper. */',
    '#ifndef NO_INLINE',
    'static inline int wrapped(void) { return __wrapped_1(); }',
    '#endif',
  ].join('\n');
  test('the comment above the directives is recovered for its declaration; adjacent ones are left to clang', () => {
    const source = detachedCommentSource(header, ['apart', 'adjacent', 'wrapped', 'absent']);
    expect(source).toBe(
      ['/**', ' * \\brief Kept apart.', ' */', 'void apart(void);', '', '/** \\brief Inline wrapper. */', 'void wrapped(void);', ''].join('\n'),
    );
  });
  (clang ? test : test.skip)('clang reads the recovered comments', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-hdoc-'));
    writeFileSync(join(dir, 'd.h'), detachedCommentSource(header, ['apart', 'wrapped']));
    const docs = headerDocs(clangAst({ clang: clang!, includeDirs: [dir], includes: ['d.h'] }));
    rmSync(dir, { recursive: true, force: true });
    expect([docs.get('apart')?.brief, docs.get('wrapped')?.brief]).toEqual(['Kept apart.', 'Inline wrapper.']);
  });
});

/** The doc comment above `function name(` in a layer's chunk files. */
function emittedDoc(dir: string, name: string): string {
  for (const f of readdirSync(dir)) {
    const text = readFileSync(join(dir, f), 'utf8');
    const at = text.search(new RegExp(`function ${name}\\(`));
    if (at >= 0) return text.slice(text.lastIndexOf('/**', at), at);
  }
  throw new Error(`no function ${name} under ${dir}`);
}

(clang ? describe : describe.skip)('--docs on the synthetic toolkit: \\return items and see-also stay apart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-hdoc-'));
  const out = join(dir, 'out');
  const log: string[] = [];
  const code = run(['--docs', '--toolkit', writeSyntheticToolkit(join(dir, 'tk')), '--out', out, '--modules', 'driver', '--jobs', '1'], (l) => log.push(l));
  const typed = join(out, 'generated', SYNTHETIC_RELEASE, 'driver', 'typed');
  const docs = headerDocs(clangAst({ clang: clang!, includeDirs: [join(dir, 'tk', 'include')], includes: ['cuda.h'] }));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('a \\link list clang leaves open: one item per line, the text after it details, \\see a link', () => {
    expect(code).toBe(0);
    expect(docs.get('cuDeviceGetCount')).toEqual({
      brief: 'Counts the synthetic devices.',
      details: 'Zero devices is an answer too, see cuDeviceGet.',
      params: new Map(),
      returns: '- `CUDA_SUCCESS`\n- `CUDA_ERROR_NOT_INITIALIZED`\n- `CUDA_ERROR_NO_DEVICE`',
      see: ['{@link cuDeviceGet}'],
    });
  });
  test('several \\return: each its own list item; \\sa its own links', () => {
    expect(docs.get('cuDriverGetVersion')!.returns).toBe(
      '- `CUDA_SUCCESS` when the number was written\n- `CUDA_ERROR_INVALID_VALUE` when there was nowhere to write it',
    );
    expect(docs.get('cuDriverGetVersion')!.see).toEqual(['{@link cuInit}', '{@link cuDeviceGetCount}']);
  });
  test('the emitted TSDoc: the returns list under its own line, see-also a tag of its own', () => {
    const count = emittedDoc(typed, 'cuDeviceGetCount');
    expect(count).toContain('@remarks C returns:\n * - `CUDA_SUCCESS`\n * - `CUDA_ERROR_NOT_INITIALIZED`\n * - `CUDA_ERROR_NO_DEVICE`\n * @');
    expect(count).toMatch(/\n \* @see \{@link cuDeviceGet\}(\n| \*\/)/);
    const version = emittedDoc(typed, 'cuDriverGetVersion');
    expect(version).toContain(
      '@remarks C returns:\n * - `CUDA_SUCCESS` when the number was written\n * - `CUDA_ERROR_INVALID_VALUE` when there was nowhere to write it\n',
    );
    expect(version).toMatch(/\n \* @see \{@link cuInit\}, \{@link cuDeviceGetCount\}(\n| \*\/)/);
    // the returns block (up to the next tag) holds no see-also text
    for (const doc of [count, version]) expect(/C returns:[\s\S]*?(?=\n \* @)/.exec(doc)![0]).not.toMatch(/\\|\bsee\b|\bsa\b|\{@link/);
  });
});
