// Runs clang (argv arrays, never a shell) and returns its raw outputs: JSON AST, macros, record layouts.
import { spawnSync } from 'node:child_process';

export class GeneratorError extends Error {}
/** A header a module needs is in none of the include folders: a module not named with --modules is skipped, not failed. */
export class HeadersNotFoundError extends GeneratorError {}

export function findClang(env: NodeJS.ProcessEnv = process.env): string {
  const candidates = [env.CLANG, 'clang', 'clang-21', 'clang-20', 'clang-19', 'clang-18', 'clang-17', 'clang-16', 'clang-15', 'clang-14'].filter(
    (c): c is string => !!c,
  );
  for (const c of candidates) {
    const r = spawnSync(c, ['--version'], { encoding: 'utf8' });
    if (r.status === 0) return c;
  }
  throw new GeneratorError('clang not found (tried $CLANG, clang, clang-21 … clang-14): install it, e.g. `apt-get install clang`');
}

export interface ClangJob {
  clang: string;
  includeDirs: string[];
  includes: string[];
  defines?: string[];
}

function run(job: ClangJob, mode: string[], what: string): string {
  const source = job.includes.map((h) => `#include <${h}>`).join('\n') + '\n';
  const args = [
    '-x', 'c', '-std=gnu11', '-w', '-ferror-limit=1',
    ...job.includeDirs.flatMap((d) => ['-I', d]),
    ...(job.defines ?? []).map((d) => `-D${d}`),
    ...mode,
    '-',
  ];
  const r = spawnSync(job.clang, args, { input: source, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.error) throw new GeneratorError(`${job.clang} failed to start: ${r.error.message}`);
  const firstError = (r.stderr ?? '').split('\n').find((l) => /\berror\b/.test(l));
  if (r.status !== 0 || firstError) {
    throw new GeneratorError(`clang reported an error while reading ${what} (${job.includes.join(', ')}): ${firstError ?? r.stderr.trim().split('\n')[0]}`);
  }
  return r.stdout;
}

export function clangAst(job: ClangJob): unknown {
  return JSON.parse(run(job, ['-fsyntax-only', '-Xclang', '-ast-dump=json'], 'the AST'));
}

export function clangMacros(job: ClangJob): string {
  return run(job, ['-E', '-dM'], 'macros');
}

export function clangLayouts(job: ClangJob): string {
  return run(job, ['-fsyntax-only', '-Xclang', '-fdump-record-layouts-complete'], 'record layouts');
}
