// The records table (`RECORDS`): the koffi layout of a generated module's C records. The generator
// writes it into `types.ts` (generator/emit/types.ts); lazyRecords (support/ffi.ts) reads it when a
// module's `records` is first read, and a record's line when its type is first built. Both sides use
// this module.
//
// One line per record, `Name|struct|field:type,field:type,…` (or `union`). A field's type is a koffi
// type name or `&Record` (another record of the table), then `[n]` groups (the last one is the
// field's array length, earlier ones arrays inside it: `int32_t[4][2]` is two arrays of four), `$`
// (a char array read as a string) and `@a` (explicit alignment).

/** One field of a record as koffi lays it out. */
export interface RecordField {
  name: string;
  /** A koffi type name, or a record of the same table when `record` is set. */
  type: string;
  record?: boolean;
  /** Array lengths, innermost first (`int32_t[4][2]`: [4, 2]). */
  dims?: number[];
  /** A char array read as a string. */
  text?: boolean;
  /** Explicit alignment. */
  align?: number;
}

/** One record of the table. */
export interface RecordEntry {
  name: string;
  kind: 'struct' | 'union';
  fields: RecordField[];
}

/** A field's spec in the table: `uint32_t`, `&Record`, `T[n]`, `char[n]$`, with `@a`. */
export function recordFieldSpec(f: RecordField): string {
  const dims = (f.dims ?? []).map((d) => `[${d}]`).join('');
  return `${f.name}:${f.record ? '&' : ''}${f.type}${dims}${f.text ? '$' : ''}${f.align ? `@${f.align}` : ''}`;
}

/** The table's lines; a field that cannot go in the table throws. */
export function writeRecordTable(records: readonly RecordEntry[]): string[] {
  return records.map((r) => {
    const fields = r.fields.map(recordFieldSpec);
    for (const f of fields) if (/[,|\n]/.test(f)) throw new Error(`record ${r.name}: field spec ${f} cannot go in the records table`);
    return `${r.name}|${r.kind}|${fields.join(',')}`;
  });
}

/** Calls `visit` with each record's name and the rest of its line (`kind|fields`, for {@link readRecordSpec}). */
export function forEachRecordLine(table: string, visit: (name: string, spec: string) => void): void {
  for (const line of table.split('\n')) {
    const bar = line.indexOf('|');
    if (bar >= 0) visit(line.slice(0, bar), line.slice(bar + 1));
  }
}

/** A record's kind and fields from the rest of its line (read when its koffi type is first built). */
export function readRecordSpec(spec: string): { kind: 'struct' | 'union'; fields: RecordField[] } {
  const bar = spec.indexOf('|');
  const fields: RecordField[] = [];
  const text = spec.slice(bar + 1);
  if (text) for (const field of text.split(',')) fields.push(readField(field));
  return { kind: spec.slice(0, bar) === 'union' ? 'union' : 'struct', fields };
}

function readField(field: string): RecordField {
  const colon = field.indexOf(':');
  const out: RecordField = { name: field.slice(0, colon), type: '' };
  let t = field.slice(colon + 1);
  const at = t.lastIndexOf('@');
  if (at >= 0) {
    out.align = Number(t.slice(at + 1));
    t = t.slice(0, at);
  }
  if (t.endsWith('$')) {
    out.text = true;
    t = t.slice(0, -1);
  }
  const dims: number[] = [];
  while (t.endsWith(']')) {
    const open = t.lastIndexOf('[');
    dims.unshift(Number(t.slice(open + 1, -1)));
    t = t.slice(0, open);
  }
  if (dims.length) out.dims = dims;
  if (t.startsWith('&')) {
    out.record = true;
    t = t.slice(1);
  }
  out.type = t;
  return out;
}

/** Every record of `table` (tools and tests). */
export function readRecordTable(table: string): RecordEntry[] {
  const out: RecordEntry[] = [];
  forEachRecordLine(table, (name, spec) => out.push({ name, ...readRecordSpec(spec) }));
  return out;
}
