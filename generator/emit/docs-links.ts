// NVIDIA's online reference for a module, a Doxygen group or one function, from the catalog's table of
// URL schemes (generator/modules.ts REFERENCE): addresses only, no NVIDIA text. Toolkit libraries link
// the archived pages of the release the bindings were generated from, versioned libraries the pages of
// the version their headers declare; a library with one current page links it only from the newest
// stored release, and nothing from older ones.
import { REFERENCE, RELEASES, releaseNumber, toolkitDocsRoot } from '../modules';

/** Whose reference: a module of a release, the library version its headers declare (`versionNumber`)
 *  and, for anchors that depend on the others, the module's function names. */
export interface LinkTarget {
  module: string;
  release: string;
  version?: number;
  names?: ReadonlySet<string>;
}

/** The newest release the project stores: a current, unversioned page describes it or a newer one. */
const NEWEST = RELEASES[RELEASES.length - 1];

/** The module's reference page for the target's release, or undefined where no page of that release is
 *  known (a module the table does not know, a versioned library without its version, an older release of
 *  a library with one current page). */
export function modulePage(t: LinkTarget): string | undefined {
  const s = REFERENCE[t.module];
  if (!s) return undefined;
  if (s.archived) return `${toolkitDocsRoot(t.release)}${s.page}`;
  const own = s.versioned && t.version !== undefined ? s.versioned(t.release, t.version) : undefined;
  if (own) return own;
  return releaseNumber(t.release) >= releaseNumber(NEWEST) && !s.versioned ? s.page : undefined;
}

/** Whether the page is one current page rather than the target release's own. */
export function isCurrentPage(t: LinkTarget): boolean {
  const s = REFERENCE[t.module];
  return !!s && !s.archived && modulePage(t) === s.page;
}

/** The page of `group` where the module has one per Doxygen group, else undefined. */
export function groupPage(t: LinkTarget, group: string): string | undefined {
  const page = modulePage(t);
  if (!page || !REFERENCE[t.module].groups) return undefined;
  return `${page.replace(/[^/]*$/, '')}group__${group.replace(/_/g, '__')}.html`;
}

/** A function's own section where the reference has one, else undefined. */
export function functionPage(t: LinkTarget, name: string, header: string): string | undefined {
  const page = modulePage(t);
  const own = page ? REFERENCE[t.module]?.fn?.(name, header, t.release, t.names ?? new Set([name])) : undefined;
  return page && own ? `${page.replace(/[^/]*$/, '')}${own}` : undefined;
}
