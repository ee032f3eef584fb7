// NVIDIA's online reference for a module, a Doxygen group or one function, from the catalog's table of
// URL schemes (generator/modules.ts REFERENCE): addresses only, no NVIDIA text. Toolkit libraries link
// the archived pages of the release the bindings were generated from.
import { REFERENCE, toolkitDocsRoot } from '../modules';

/** The module's reference page for `release`, or undefined for a module the table does not know. */
export function modulePage(module: string, release: string): string | undefined {
  const s = REFERENCE[module];
  if (!s) return undefined;
  return s.archived ? `${toolkitDocsRoot(release)}${s.page}` : s.page;
}

/** The page of `group` where the module has one per Doxygen group, else undefined. */
export function groupPage(module: string, release: string, group: string): string | undefined {
  const page = modulePage(module, release);
  if (!page || !REFERENCE[module].groups) return undefined;
  return `${page.replace(/[^/]*$/, '')}group__${group.replace(/_/g, '__')}.html`;
}

/** A function's own section where the reference has one, else undefined. */
export function functionPage(module: string, release: string, name: string, header: string): string | undefined {
  const page = modulePage(module, release);
  const fn = REFERENCE[module]?.fn;
  return page && fn ? `${page.replace(/[^/]*$/, '')}${fn(name, header)}` : undefined;
}
