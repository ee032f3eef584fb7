// The lazy-enums table (`ENUMS`): the values of a generated module's enums. The generator writes it
// into `types.ts` (generator/emit/types.ts); lazyEnums (support/lazy.ts) reads it at every import of a
// generated module and builds each enum on its first access. Both sides use this module.
//
// One line per enum, `Name|MEMBER=value MEMBER=value …` (a value ending in `n` is a bigint: beyond
// 2^53), or per alias, `Alias=Name`.

/** An enum and its members, or another name of an enum. */
export type EnumEntry = { name: string; members: { name: string; value: number | bigint | string }[] } | { name: string; alias: string };

/** An enum object as TypeScript's `enum` makes it: name → value and value → name. */
export type EnumObject = Record<string | number, string | number>;

/** The table's lines. Values may be given as decimal strings (the IR's). */
export function writeEnumTable(entries: readonly EnumEntry[]): string[] {
  return entries.map((e) => ('alias' in e ? `${e.name}=${e.alias}` : `${e.name}|${e.members.map((m) => `${m.name}=${enumValueText(m.value)}`).join(' ')}`));
}

function enumValueText(value: number | bigint | string): string {
  const n = BigInt(value);
  return n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= -BigInt(Number.MAX_SAFE_INTEGER) ? String(n) : `${n}n`;
}

/**
 * Calls `visit` for each line of `table` with the enum's (or alias's) name, the offset of the
 * separator after it and the end of its line: the offsets are what {@link enumAliasOf} and
 * {@link enumObjectOf} read later. One pass with indexOf: it runs at every import.
 */
export function forEachEnumLine(table: string, visit: (name: string, sep: number, end: number) => void): void {
  const end = table.length;
  for (let start = 0; start < end; ) {
    let nl = table.indexOf('\n', start);
    if (nl < 0) nl = end;
    // `Name|members` or `Alias=Name`: the first separator tells which (members hold '=' after the bar)
    let bar = table.indexOf('|', start);
    let eq = table.indexOf('=', start);
    if (bar > nl) bar = -1;
    if (eq > nl) eq = -1;
    const sep = bar < 0 ? eq : eq < 0 || bar < eq ? bar : eq;
    if (sep > start) visit(table.slice(start, sep), sep, nl);
    start = nl + 1;
  }
}

/** The enum an alias line names, or undefined for an enum's own line. */
export function enumAliasOf(table: string, sep: number, end: number): string | undefined {
  return table[sep] === '=' ? table.slice(sep + 1, end) : undefined;
}

/** The enum object of an enum's line (`MEMBER=value …` between `sep` and `end`). */
export function enumObjectOf(table: string, sep: number, end: number): EnumObject {
  const e: EnumObject = {};
  const members = table.slice(sep + 1, end);
  if (members) {
    for (const m of members.split(' ')) {
      const eq = m.indexOf('=');
      const key = m.slice(0, eq);
      const text = m.slice(eq + 1);
      const value = text.endsWith('n') ? (BigInt(text.slice(0, -1)) as unknown as number) : Number(text);
      e[key] = value;
      e[String(value)] = key;
    }
  }
  return e;
}

/** Every entry of `table`, values as numbers or bigints (tools and tests; lazyEnums reads lazily). */
export function readEnumTable(table: string): EnumEntry[] {
  const out: EnumEntry[] = [];
  forEachEnumLine(table, (name, sep, end) => {
    const alias = enumAliasOf(table, sep, end);
    if (alias !== undefined) return void out.push({ name, alias });
    const members = table.slice(sep + 1, end);
    out.push({
      name,
      members: members
        ? members.split(' ').map((m) => {
            const [key, text] = m.split('=');
            return { name: key, value: text.endsWith('n') ? BigInt(text.slice(0, -1)) : Number(text) };
          })
        : [],
    });
  });
  return out;
}
