// Calls with every argument fixed when bound: the typed layer's functions whose only parameters are
// out-parameter slots (cuCtxGetCurrent, cuDriverGetVersion, …) pass the same memory on every call. An
// FFI whose wrapper converts arguments per call (node:ffi and Deno.dlopen: addresses as bigints, see
// ./nodeffi's adapt) converts them once instead; for the others the call is a closure over them.
import type { NativeFunction } from './binder';

/** The property by which a wrapper offers a form of itself with its arguments converted once. */
export const FIX_ARGUMENTS: unique symbol = Symbol('cuda-ts.fixArguments');

/** A bound function that may offer a fixed-argument form of itself. */
type Fixable = NativeFunction & { [FIX_ARGUMENTS]?: (args: readonly unknown[]) => () => unknown };

/**
 * A function of no arguments that calls `fn` with `args`, keeping them alive as long as it lives
 * (memory whose address the FFI takes must outlive every call).
 */
export function fixedCall(fn: NativeFunction, args: readonly unknown[]): () => unknown {
  const fix = (fn as Fixable)[FIX_ARGUMENTS];
  if (fix !== undefined) return fix(args);
  // straight-line forms: a spread call costs tens of ns under Bun (see ./bunffi)
  const [a, b, c, d] = args;
  switch (args.length) {
    case 0:
      return () => fn();
    case 1:
      return () => fn(a);
    case 2:
      return () => fn(a, b);
    case 3:
      return () => fn(a, b, c);
    case 4:
      return () => fn(a, b, c, d);
    default:
      return () => fn(...args);
  }
}
