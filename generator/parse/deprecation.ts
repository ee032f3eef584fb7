// Deprecation markers written on a function's declaration, read from the header's text: a macro such
// as cuDNN's `CUDNN_DEPRECATED` or NVML's `DEPRECATED(13.0)` marks a declaration even where the macro
// expands to nothing in this build (so clang's AST shows no attribute). Only the marker's presence and
// a release it names are kept; comments and prose are skipped, never read.
import { readFileSync } from 'node:fs';

export interface DeprecationMark {
  /** The release the marker names (`DEPRECATED(13.0)` → "13.0"). */
  version?: string;
}

const MARKER =
  /(?:\b[A-Z_]*DEPRECATED[A-Z_]*\b|__attribute__\s*\(\(\s*deprecated\b|\[\[deprecated\b|__declspec\s*\(\s*deprecated\b)(?:\s*\(\s*([^()]*?)\s*\))?/;
/** A line that ends the declaration before (or is no part of a declaration). */
const BOUNDARY = /(^$|^#|^\/\/|[;{}]$|\*\/$|^\/?\*)/;

/** The declaration text before the function's name (the first of `names` found on its line): that line up to the name, and the lines above
 *  it back to the previous declaration's end, a comment, a preprocessor line or a blank line. */
export function declarationPrefix(lines: readonly string[], line: number, names: readonly string[]): string {
  const own = lines[line - 1] ?? '';
  const at = names.map((n) => own.search(new RegExp(`\\b${n}\\s*\\(`))).find((i) => i >= 0) ?? -1;
  const parts = [at >= 0 ? own.slice(0, at) : own];
  for (let i = line - 2; i >= 0 && line - i < 8; i--) {
    const text = lines[i].trim();
    if (BOUNDARY.test(text)) break;
    parts.unshift(text);
  }
  return parts.join(' ').replace(/\/\*.*?\*\//g, ' ');
}

/** The deprecation marker before the declared function (any of `names`, as the header spells it) at
 *  1-based `line` of `lines`, or undefined. */
export function deprecationIn(lines: readonly string[], line: number, names: readonly string[]): DeprecationMark | undefined {
  const m = MARKER.exec(declarationPrefix(lines, line, names));
  if (!m) return undefined;
  return m[1] && /^\d+\.\d+$/.test(m[1]) ? { version: m[1] } : {};
}

/** A lookup by header path, line and declared name that reads each header once. */
export function headerDeprecations(): (file: string, line: number, names: readonly string[]) => DeprecationMark | undefined {
  const byFile = new Map<string, string[]>();
  return (file, line, names) => {
    let lines = byFile.get(file);
    if (!lines) {
      try {
        lines = readFileSync(file, 'utf8').split('\n');
      } catch {
        lines = []; // a location clang names but we cannot read (a built-in)
      }
      byFile.set(file, lines);
    }
    return deprecationIn(lines, line, names);
  };
}
