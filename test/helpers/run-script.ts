// Runs a snippet of TypeScript-flavoured CommonJS (require()s of the sources) in a fresh process of the
// runtime running the tests. Node takes it as `node --require tsx/cjs -e CODE`; Bun and Deno run the
// sources through scripts/run-ts.cjs (their own loaders cannot link them, and Deno's translation of
// Node's flags does not take `--require tsx/cjs -e`), so there the snippet goes to a temporary .ts file.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const RUN_TS = join(__dirname, '..', '..', 'scripts', 'run-ts.cjs');

/** True under Bun or Deno (the test runner's own runtime). */
export const notNode = Boolean(process.versions.bun || process.versions.deno);

/** Runs `code` in a child of this runtime, in `cwd` with `env`; its output as text. */
export function runScript(code: string, options: { cwd: string; env?: NodeJS.ProcessEnv }): SpawnSyncReturns<string> {
  const spawnOptions = { cwd: options.cwd, encoding: 'utf8' as const, env: options.env ?? process.env };
  if (!notNode) return spawnSync(process.execPath, ['--require', 'tsx/cjs', '-e', code], spawnOptions);
  const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-script-'));
  try {
    const file = join(dir, 'script.ts');
    writeFileSync(file, code);
    return spawnSync(process.execPath, [RUN_TS, file], spawnOptions);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
