// `#define alias target` names (ir.aliases): each entry layer (raw and typed) exports an alias as a stub
// of its target's chunk function, so both build their alias stubs here, the same way.
import type { StubFn } from './lazy';

/** One stub per alias, bound to its target's chunk export; `byName` holds the layer's function stubs. */
export function aliasStubs(aliases: Record<string, string>, byName: ReadonlyMap<string, StubFn>): StubFn[] {
  return Object.entries(aliases).map(([alias, target]) => {
    const t = byName.get(target);
    if (!t) throw new Error(`alias ${alias} of ${target}: no such function`);
    return { ...t, name: alias, doc: `Alias of {@link ${target}} (\`#define ${alias} ${target}\`).` };
  });
}
