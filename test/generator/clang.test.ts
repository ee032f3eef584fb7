// Which clang the generator runs (generator/parse/clang.ts): 19 or newer, since clang 14 parses the
// headers but attaches their doc comments differently and the IR loses facts the typed layer rests on
// (on 2026-12-02 a fresh clone's `npm run setup` with only Debian's clang 14 rewrote 442 lines of
// headers/13.0/driver.json and changed typed signatures, with every check green). Fake clangs here: shell
// scripts that print a version banner.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clangMajor, findClang, GeneratorError, MIN_CLANG_MAJOR } from '../../generator/parse/clang';

const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-clang-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A fake clang printing `banner` to `--version`. */
function fakeClang(name: string, banner: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\necho '${banner}'\n`);
  chmodSync(path, 0o755);
  return path;
}

test('the major version from the banners Debian and LLVM print', () => {
  expect(clangMajor('Debian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu')).toBe(14);
  expect(clangMajor('Debian clang version 19.1.7 (3+b1)')).toBe(19);
  expect(clangMajor('clang version 21.0.0git (https://github.com/llvm/llvm-project abc)')).toBe(21);
  expect(clangMajor('gcc (Debian 12.2.0-14) 12.2.0')).toBeUndefined();
  expect(MIN_CLANG_MAJOR).toBe(19);
});

test('$CLANG at 19 or newer is taken as given', () => {
  const c = fakeClang('clang-new', 'Debian clang version 19.1.7');
  expect(findClang({ CLANG: c })).toBe(c);
});

test('$CLANG older than 19 is refused, naming it and its version, never replaced by another clang', () => {
  const c = fakeClang('clang-old', 'Debian clang version 14.0.6');
  expect(() => findClang({ CLANG: c })).toThrow(GeneratorError);
  expect(() => findClang({ CLANG: c })).toThrow(`clang 19 or newer is needed (${c} is clang 14)`);
});

test('no clang at all: says what was tried and what to install', () => {
  expect(() => findClang({ CLANG: join(dir, 'absent') })).toThrow(
    `clang not found (tried ${join(dir, 'absent')}): install clang 19 or newer, e.g. \`apt-get install clang-19\``,
  );
});
