// Runs clang (argv arrays, never a shell) and returns its raw outputs: JSON AST, macros, record layouts.
import { spawnSync } from 'node:child_process';

export class GeneratorError extends Error {}
/** A header a module needs is in none of the include folders: a module not named with --modules is skipped, not failed. */
export class HeadersNotFoundError extends GeneratorError {}

/**
 * The oldest clang whose output the committed IR was made with. clang 14 parses the headers too, but
 * attaches their doc comments differently: the driver's IR then loses the cues (returned, optional,
 * array, count) that typed signatures rest on, and the generated tree silently differs from ours.
 */
export const MIN_CLANG_MAJOR = 19;

/** The major version `clang --version` printed, or undefined when it is not clang's banner. */
export function clangMajor(versionText: string): number | undefined {
  const m = /clang version (\d+)\./.exec(versionText);
  return m ? Number(m[1]) : undefined;
}

/**
 * The clang to run: $CLANG when set (an explicit choice is refused, never replaced), else the first of
 * clang-21, clang-20, clang-19, clang at version ≥ MIN_CLANG_MAJOR.
 */
export function findClang(env: NodeJS.ProcessEnv = process.env): string {
  const candidates = env.CLANG ? [env.CLANG] : ['clang-21', 'clang-20', 'clang-19', 'clang'];
  const tooOld: string[] = [];
  for (const c of candidates) {
    const r = spawnSync(c, ['--version'], { encoding: 'utf8' });
    if (r.status !== 0) continue;
    const major = clangMajor(r.stdout ?? '');
    if (major !== undefined && major >= MIN_CLANG_MAJOR) return c;
    tooOld.push(`${c} is clang ${major ?? '(unknown version)'}`);
  }
  if (tooOld.length) {
    throw new GeneratorError(
      `clang ${MIN_CLANG_MAJOR} or newer is needed (${tooOld.join('; ')}): older clang attaches the headers' doc comments differently, and the IR would lose facts the typed layer rests on. Install it (e.g. \`apt-get install clang-${MIN_CLANG_MAJOR}\`) or set CLANG to one`,
    );
  }
  throw new GeneratorError(
    `clang not found (tried ${candidates.join(', ')}): install clang ${MIN_CLANG_MAJOR} or newer, e.g. \`apt-get install clang-${MIN_CLANG_MAJOR}\``,
  );
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
    '-x',
    'c',
    '-std=gnu11',
    '-w',
    '-ferror-limit=1',
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
