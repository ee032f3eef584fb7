// The binding table: one line of binding facts per C function. The generator writes it into each
// module's `binding.ts` (generator/emit/raw.ts); the Binder reads a line on a function's first call.
// Both sides use this module, so the format is defined once.
//
// `name|symbol|ptdsSymbol|result|param,param,…|since|procName:version:ptdsVersion`; empty fields are
// absent, `@Name` is a record by value. One string literal costs next to nothing to load, unlike a
// function body per C function, so a module's import stays small however many functions it has.

/** The binding facts of one C function. */
export interface BindingEntry {
  /** User-facing name (`cuMemAlloc`). */
  name: string;
  /** Exported symbol (`cuMemAlloc_v2`). */
  symbol: string;
  /** Per-thread-default-stream symbol, if any. */
  ptdsSymbol?: string;
  /** koffi type of the result (`@Name`: a record by value). */
  result: string;
  /** koffi types of the parameters (`@Name`: a record by value). */
  params: string[];
  /** The release that introduced the function, when newer than the oldest stored one. */
  since?: string;
  /** How cuGetProcAddress names this exact ABI: `[name, version, ptdsVersion?]`. */
  proc?: readonly [name: string, version: number, ptdsVersion?: number];
}

/** The comment line the generator puts above the table. */
export const BINDING_TABLE_HEADER = '// name|symbol|per-thread symbol|result|params|since|cuGetProcAddress name:version:per-thread version';

/** The table's lines. The table is a template literal: a character that would need escaping throws. */
export function writeBindingTable(entries: readonly BindingEntry[]): string[] {
  return entries.map((e) => {
    const proc = e.proc ? [e.proc[0], e.proc[1], ...(e.proc[2] !== undefined ? [e.proc[2]] : [])].join(':') : '';
    const line = [e.name, e.symbol, e.ptdsSymbol ?? '', e.result, e.params.join(','), e.since ?? '', proc].join('|');
    if (/[`\\$\n]/.test(line)) throw new Error(`binding line needs escaping: ${line}`);
    return line;
  });
}

/** The entry of `name` in `table`, or undefined. Finds the line in the table text: a first call
 *  splits no table of hundreds of lines. */
export function readBindingEntry(table: string, name: string): BindingEntry | undefined {
  const first = table.startsWith(`${name}|`);
  const at = first ? 0 : table.indexOf(`\n${name}|`) + 1;
  if (at === 0 && !first) return undefined;
  const end = table.indexOf('\n', at);
  const [, symbol, ptds, result, params, since, proc] = (end < 0 ? table.slice(at) : table.slice(at, end)).split('|');
  const entry: BindingEntry = { name, symbol, result, params: params ? params.split(',') : [] };
  if (ptds) entry.ptdsSymbol = ptds;
  if (since) entry.since = since;
  if (proc) {
    const [procName, version, ptdsVersion] = proc.split(':');
    entry.proc = ptdsVersion ? [procName, Number(version), Number(ptdsVersion)] : [procName, Number(version)];
  }
  return entry;
}
