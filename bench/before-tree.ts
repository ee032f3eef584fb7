// Compiles the objects layer of an earlier commit into bench/.build/js-before (CommonJS, as the build ships
// it), for `npx tsx test/model/cli.ts --tree bench/.build/js-before` to show a bug the model finds there.
// The tree is followed from src/index through relative requires; koffi resolves from the repository's node_modules.
//   npx tsx bench/before-tree.ts <commit>
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { SUPPORT_DIR } from '../generator/support-path';
import { REPO_ROOT } from './common';
import { transpileTree } from './startup';

const BEFORE_DIR = join(REPO_ROOT, 'bench', '.build', 'js-before');

function main(): void {
  const commit = process.argv[2];
  if (!commit) throw new Error('usage: npx tsx bench/before-tree.ts <commit>');
  const src = mkdtempSync(join(tmpdir(), 'cuda-ts-before-'));
  try {
    // the support package sits in src/runtime before the layout of issue 24, in SUPPORT_DIR after it
    // (transpileTree follows relative requires into either)
    const paths = ['src', SUPPORT_DIR, 'generated/13.0'].filter(
      (p) => execFileSync('git', ['ls-tree', '--name-only', commit, p], { cwd: REPO_ROOT, encoding: 'utf8' }).trim() !== '',
    );
    const tar = execFileSync('git', ['archive', commit, ...paths], { cwd: REPO_ROOT, maxBuffer: 1 << 30 });
    execFileSync('tar', ['-x', '-C', src], { input: tar });
    rmSync(BEFORE_DIR, { recursive: true, force: true });
    const files = transpileTree(src, ['src/index'], BEFORE_DIR);
    writeFileSync(join(BEFORE_DIR, 'COMMIT'), `${execFileSync('git', ['rev-parse', '--short', commit], { cwd: REPO_ROOT, encoding: 'utf8' }).trim()}\n`);
    console.log(`bench/before-tree: ${files} files of ${commit} → ${relative(REPO_ROOT, BEFORE_DIR)}`);
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
}

if (require.main === module) main();
