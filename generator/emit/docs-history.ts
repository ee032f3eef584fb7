// When each name of a module appeared: the first of the stored releases (the catalog's fixed list,
// oldest first) whose IR declares it. Functions by name, enum members as `Enum.MEMBER`, record fields as
// `Record.field`. A name the oldest stored release already has gets no entry (it is at least that old).
import type { ModuleIR } from '../ir/schema';
import type { DocFacts } from './docs';

/** The names of one release's IR that the docs date. */
function namesOf(ir: ModuleIR): Set<string> {
  const names = new Set<string>(ir.functions.map((f) => f.name));
  for (const e of ir.enums) for (const m of e.members) names.add(`${e.name}.${m.name}`);
  for (const r of ir.records) for (const f of r.fields) names.add(`${r.name}.${f.name}`);
  return names;
}

/** The doc facts of `ir`, given the IR of the stored releases before it (oldest first). */
export function docFactsFor(ir: ModuleIR, older: readonly ModuleIR[]): DocFacts {
  const facts: DocFacts = { module: ir.module, release: ir.cudaVersion, introduced: new Map(), oldest: older[0]?.cudaVersion ?? ir.cudaVersion };
  if (older.length === 0) return facts;
  const declared = older.map((o) => ({ release: o.cudaVersion, names: namesOf(o) }));
  const introduced = new Map<string, string>();
  for (const name of namesOf(ir)) {
    const first = declared.find((d) => d.names.has(name));
    const release = first ? first.release : ir.cudaVersion;
    if (release !== facts.oldest) introduced.set(name, release);
  }
  return { ...facts, introduced };
}
