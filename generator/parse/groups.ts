// The Doxygen group each line of a header sits in, from the header's structure: `\defgroup NAME` or
// `\addtogroup NAME` followed by `@{` opens NAME until its `@}`; an `\ingroup NAME` in a doc comment
// (nvrtc.h) places the declaration that follows, up to its `;`. Only the group's identifier is kept
// (`CUDA_MEM`): it names NVIDIA's reference page for the group. The group titles and prose are never read.
import { readFileSync } from 'node:fs';

const GROUP_COMMAND = /[\\@](?:defgroup|addtogroup)\s+(\w+)/;
const OPEN = /[\\@]\{/;
const CLOSE = /[\\@]\}/;
const INGROUP = /[\\@]ingroup\s+(\w+)/;
/** A line of code (not of a comment) ending a declaration. */
const DECLARATION_END = /^\s*[^/*\s].*;/;

/** Line (1-based) → the innermost open group of `text`, or undefined outside every group. */
export function groupLines(text: string): (line: number) => string | undefined {
  const at: (string | undefined)[] = [undefined];
  const stack: string[] = [];
  let pending: string | undefined;
  let placed: string | undefined;
  for (const line of text.split('\n')) {
    placed = INGROUP.exec(line)?.[1] ?? placed;
    const named = GROUP_COMMAND.exec(line);
    // `\ingroup CUDA_DRIVER` then `\defgroup CUDA_PROFILER` in one comment nests the group: it places
    // no declaration (the profiler headers' first function would otherwise land in CUDA_DRIVER)
    if (named) [pending, placed] = [named[1], undefined];
    if (OPEN.test(line) && pending) {
      stack.push(pending);
      pending = undefined;
    } else if (CLOSE.test(line)) stack.pop();
    at.push(placed ?? stack[stack.length - 1]);
    if (placed && DECLARATION_END.test(line)) placed = undefined;
  }
  return (line) => at[line];
}

/** A lookup by header path and line that reads each header once. */
export function headerGroups(): (file: string, line: number) => string | undefined {
  const byFile = new Map<string, (line: number) => string | undefined>();
  return (file, line) => {
    let of = byFile.get(file);
    if (!of) {
      let text = '';
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        // a location clang names but we cannot read (a built-in): no group
      }
      of = groupLines(text);
      byFile.set(file, of);
    }
    return of(line);
  };
}
