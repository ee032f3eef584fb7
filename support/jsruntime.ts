// Which JavaScript runtime runs this process (Node, Bun or Deno), and its version: the Binder picks
// its default FFI by it and `cuda-ts doctor` reports it. Bun and Deno both define `process` (Node
// compatibility), so their own globals decide, or `process.versions` where code runs in a vm context
// without them (Jest's test environment under Bun).

/** The JavaScript runtimes cuda-ts runs under. */
export type JsRuntime = 'node' | 'bun' | 'deno';

interface RuntimeGlobals {
  Bun?: { version?: string };
  Deno?: { version?: { deno?: string } };
}

/** The runtime running this process. */
export function jsRuntime(): JsRuntime {
  const g = globalThis as RuntimeGlobals;
  if (g.Bun !== undefined || process.versions.bun !== undefined) return 'bun';
  if (g.Deno !== undefined || process.versions.deno !== undefined) return 'deno';
  return 'node';
}

/** The running runtime's version (`1.4.5` for Bun, `2.9.6` for Deno, `26.10.0` for Node). */
export function jsRuntimeVersion(): string {
  const g = globalThis as RuntimeGlobals;
  switch (jsRuntime()) {
    case 'bun':
      return g.Bun?.version ?? process.versions.bun ?? 'unknown';
    case 'deno':
      return g.Deno?.version?.deno ?? process.versions.deno ?? 'unknown';
    default:
      return process.versions.node;
  }
}

/** How messages name `runtime` (`Node`, `Bun`, `Deno`). */
export function jsRuntimeName(runtime: JsRuntime = jsRuntime()): string {
  return { node: 'Node', bun: 'Bun', deno: 'Deno' }[runtime];
}
