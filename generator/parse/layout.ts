// Reads clang's `-fdump-record-layouts-complete` text: sizeof, align and direct-field offsets per record.
import { anonKey } from './ctype';

export interface FieldLayout {
  name: string;
  offset: number;
  bitOffset?: number; // bits from the record start, bitfields only
  bitWidth?: number;
}
export interface RecordLayout {
  key: string; // `struct X`, `union X`, or `@anon:FILE:L:C`
  size: number;
  align: number;
  fields: FieldLayout[];
}

/** `struct X`, `union X::(unnamed at F:L:C)` → lookup key. F may hold `)` and spaces: the location
 *  runs to the last `:line:col)`. */
export function layoutKey(typeText: string): string {
  const anon = /\((?:unnamed|anonymous)(?: (?:struct|union))? at (.+:\d+:\d+)\)/.exec(typeText);
  if (anon) return anonKey(anon[1]);
  return typeText.trim();
}

const LINE = /^\s*(\d+)(?::(\d+)-(\d+))? \|( +)(.*)$/;

export function parseRecordLayouts(text: string): Map<string, RecordLayout> {
  const out = new Map<string, RecordLayout>();
  for (const section of text.split('*** Dumping AST Record Layout').slice(1)) {
    const lines = section.split('\n').filter((l) => l.trim() !== '');
    const head = LINE.exec(lines[0]);
    if (!head) continue;
    const depth = head[4].length;
    const key = layoutKey(head[5]);
    const fields: FieldLayout[] = [];
    let size = -1;
    let align = -1;
    for (const line of lines.slice(1)) {
      const sz = /\[sizeof=(\d+),.*?align=(\d+)/.exec(line);
      if (sz && /^\s*\|/.test(line)) {
        size = Number(sz[1]);
        align = Number(sz[2]);
        break;
      }
      const m = LINE.exec(line);
      if (!m || m[4].length !== depth + 2) continue; // deeper lines belong to nested records
      const offset = Number(m[1]);
      const decl = m[5].trim();
      // `TYPE NAME`; an unnamed bitfield or anonymous member has no trailing name
      const name = /\)$/.test(decl) ? '' : (/(\w+)$/.exec(decl)?.[1] ?? '');
      const f: FieldLayout = { name, offset };
      if (m[2] !== undefined) {
        const lo = Number(m[2]);
        const hi = Number(m[3]);
        f.bitOffset = offset * 8 + lo;
        f.bitWidth = hi - lo + 1;
      }
      fields.push(f);
    }
    if (size < 0) continue;
    if (!out.has(key)) out.set(key, { key, size, align, fields });
  }
  return out;
}
