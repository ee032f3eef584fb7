// The lazy-functions table (`CHUNKS`): which chunk file of a generated entry holds each function. The
// generator writes it into `index.ts` and `raw.ts` (generator/emit/lazy.ts); lazyFunctions
// (support/lazy.ts) reads it at every import of a generated module. Both sides use this module.
//
// One line per chunk: `Chunk|name/n name=export/n …`, `n` the parameter count, `=export` when the
// chunk's export has another name (`#define` aliases).

/** One function of a chunk. */
export interface ChunkMember {
  name: string;
  /** The chunk's export it calls (differs from `name` for `#define` aliases). */
  target: string;
  /** Its parameter count. */
  params: number;
}

/** One chunk (one line of the table). */
export interface ChunkEntry {
  chunk: string;
  members: ChunkMember[];
}

/** The comment line the generator puts above the table. */
export const CHUNK_TABLE_HEADER = '// chunk|name/parameters name=chunk export/parameters … (read by lazyFunctions of the runtime support)';

/** The table's lines. */
export function writeChunkTable(chunks: readonly ChunkEntry[]): string[] {
  return chunks.map((c) => `${c.chunk}|${c.members.map((m) => `${m.name}${m.target !== m.name ? `=${m.target}` : ''}/${m.params}`).join(' ')}`);
}

/** Receives one function of the table: see {@link forEachChunkMember}. */
export type ChunkMemberVisitor = (chunk: number, line: number, name: string, target: string, params: number) => void;

/**
 * Calls `visit` for each function of `table`, in order, with its chunk's number (0, 1, … by line),
 * the offset of that chunk's line (for {@link readChunkLine}), its name, the export it calls (the
 * same string as `name` unless aliased) and its parameter count. This runs at every import, in the
 * interpreter: one pass with indexOf, allocating only the names.
 */
export function forEachChunkMember(table: string, visit: ChunkMemberVisitor): void {
  const end = table.length;
  let chunk = -1;
  // the next '=' in the table (an alias), found once and passed by: searching from every member
  // scanned on to the next alias, ~1.2 MB of text for the driver's 11 KB table
  let nextEq = table.indexOf('=');
  if (nextEq < 0) nextEq = end;
  for (let start = 0; start < end; ) {
    let nl = table.indexOf('\n', start);
    if (nl < 0) nl = end;
    const bar = table.indexOf('|', start);
    if (bar > start && bar < nl) {
      chunk++;
      for (let i = bar + 1; i < nl; ) {
        let sp = table.indexOf(' ', i);
        if (sp < 0 || sp > nl) sp = nl;
        const slash = table.lastIndexOf('/', sp);
        let n = 0; // the parameter count, read without a string of its own
        for (let j = slash + 1; j < sp; j++) n = n * 10 + table.charCodeAt(j) - 48;
        if (nextEq < i) {
          nextEq = table.indexOf('=', i);
          if (nextEq < 0) nextEq = end;
        }
        if (nextEq < slash) visit(chunk, start, table.slice(i, nextEq), table.slice(nextEq + 1, slash), n);
        else {
          const name = table.slice(i, slash);
          visit(chunk, start, name, name, n);
        }
        i = sp + 1;
      }
    }
    start = nl + 1;
  }
}

/** The chunk whose line starts at offset `at` of `table` (read on the first call of one of its functions). */
export function readChunkLine(table: string, at: number): ChunkEntry {
  let nl = table.indexOf('\n', at);
  if (nl < 0) nl = table.length;
  const bar = table.indexOf('|', at);
  const members = table
    .slice(bar + 1, nl)
    .split(' ')
    .map((member): ChunkMember => {
      const slash = member.lastIndexOf('/');
      const eq = member.indexOf('=');
      const name = member.slice(0, eq < 0 ? slash : eq);
      return { name, target: eq < 0 ? name : member.slice(eq + 1, slash), params: Number(member.slice(slash + 1)) };
    });
  return { chunk: table.slice(at, bar), members };
}

/** Every chunk of `table` (tools and tests; lazyFunctions reads with {@link forEachChunkMember}). */
export function readChunkTable(table: string): ChunkEntry[] {
  const lines: number[] = [];
  forEachChunkMember(table, (chunk, line) => void (lines[chunk] = line));
  return lines.map((at) => readChunkLine(table, at));
}
