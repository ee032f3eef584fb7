// Bounds on when each name of a module appeared, from the stored releases (the catalog's fixed list,
// oldest first): a name the module's oldest stored release lacks was added after the last stored release
// without it and is present in the first one with it. Only bounds: the stored list skips releases
// (12.0–12.4, 12.7–12.9), so no stored release is a name's first release unless a header says so
// (the driver's `introduced`). Functions by name, enum members as `Enum.MEMBER`, record fields as
// `Record.field`. A name the oldest stored release already has gets no entry.
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
  const facts: DocFacts = {
    module: ir.module,
    release: ir.cudaVersion,
    added: new Map(),
    oldest: older[0]?.cudaVersion ?? ir.cudaVersion,
    version: ir.versionNumber,
    names: new Set(ir.functions.map((f) => f.name)),
  };
  if (older.length === 0) return facts;
  const chain = [...older.map((o) => ({ release: o.cudaVersion, names: namesOf(o) })), { release: ir.cudaVersion, names: namesOf(ir) }];
  const added = new Map<string, { after: string; in: string }>();
  for (const name of chain[chain.length - 1].names) {
    // the last stored release without it, then the next (the first of the run of releases that have it)
    let i = chain.length - 1;
    while (i > 0 && chain[i - 1].names.has(name)) i--;
    if (i > 0) added.set(name, { after: chain[i - 1].release, in: chain[i].release });
  }
  return { ...facts, added };
}
