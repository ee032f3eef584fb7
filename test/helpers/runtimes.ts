// The JavaScript runtimes a test can start children under: the one running the tests, and Bun and Deno
// where .ci/run installed them (npm's `bun` and `deno` packages, under /tmp/bun and /tmp/deno).
import { existsSync } from 'node:fs';
import { CI_RUNTIME_BINARIES } from '../../bench/runtime-binaries';

/** Bun's binary as .ci/run installs it. */
export const BUN_BIN = CI_RUNTIME_BINARIES.bun;
/** Deno's binary as .ci/run installs it. */
export const DENO_BIN = CI_RUNTIME_BINARIES.deno;

/**
 * name → command prefix: this runtime first (Deno with --allow-all), then Node on PATH when this is
 * not Node and `nodeOnPath` asks (as .ci/run sets PATH), then Bun and Deno where installed (Deno with
 * the permissions docs/runtimes.md lists).
 */
export function runtimeCommands(options: { nodeOnPath?: boolean } = {}): [string, string[]][] {
  const self = process.versions.bun ? 'bun' : process.versions.deno ? 'deno' : 'node';
  const found: [string, string[]][] = [[self, self === 'deno' ? [process.execPath, 'run', '--allow-all'] : [process.execPath]]];
  if (options.nodeOnPath && self !== 'node') found.push(['node', ['node']]);
  if (self !== 'bun' && existsSync(BUN_BIN)) found.push(['bun', [BUN_BIN]]);
  if (self !== 'deno' && existsSync(DENO_BIN))
    found.push(['deno', [DENO_BIN, 'run', '--allow-ffi', '--allow-read', '--allow-env', '--allow-sys', '--allow-write', '--allow-run']]);
  return found;
}
