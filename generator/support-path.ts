// Where the run-time support package lives. The emitter writes its imports from here, the CLI rewrites
// them for a tree outside this repository, and the packaging scripts bundle and publish that folder:
// moving the package means changing this file alone.

/** The support package's folder in a cuda-ts checkout, relative to the repository root. */
export const SUPPORT_DIR = 'support';

/** The support package's name on npm: what generated code outside this repository imports. */
export const SUPPORT_PACKAGE = '@cuda-ts/runtime-support';

/**
 * How a generated file reaches the support package inside this repository: `generated/<release>/<module>/`
 * files are `depth` 0, the chunk files in its `typed/` and `raw-layer/` folders depth 1.
 */
export function supportSpecifier(depth: 0 | 1): string {
  return `${'../'.repeat(3 + depth)}${SUPPORT_DIR}`;
}
