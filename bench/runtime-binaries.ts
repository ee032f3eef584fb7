// Where Bun's and Deno's binaries are, for the bench and the tests that start children under them. Its own
// module, importing nothing heavy: test helpers load it in every suite that asks.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Bun's and Deno's binaries where .ci/run installs them (npm's `bun` and `deno` packages under /tmp/bun, /tmp/deno). */
export const CI_RUNTIME_BINARIES = {
  bun: '/tmp/bun/node_modules/bun/bin/bun.exe',
  deno: '/tmp/deno/node_modules/@deno/linux-x64-glibc/deno',
} as const;

/** Where Bun's or Deno's binary is: $BUN / $DENO, else on PATH, else /tmp/bun/bun (/tmp/deno/deno), else where .ci/run installs it; or why none is. */
export function findRuntimeBinary(name: 'bun' | 'deno'): { path: string } | { missing: string } {
  const envName = name.toUpperCase();
  const env = process.env[envName];
  const fallbacks = [`/tmp/${name}/${name}`, CI_RUNTIME_BINARIES[name]];
  if (env) return existsSync(env) ? { path: env } : { missing: `${envName}=${env} does not exist` };
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  if (r.status === 0 && r.stdout.trim()) return { path: r.stdout.trim() };
  const found = fallbacks.find((f) => existsSync(f));
  return found ? { path: found } : { missing: `${name} not found (set ${envName}, put it on PATH or at ${fallbacks.join(' or ')})` };
}
