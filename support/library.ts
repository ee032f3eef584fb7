// Finds and loads a module's shared library. Search order, first hit wins:
//   1. the module's environment override (e.g. CUDA_TS_RUNTIME_LIBRARY=/path/libcudart.so.13)
//   2. $CUDA_HOME / $CUDA_PATH: lib64, lib, targets/<arch>-linux/lib
//   3. the system loader by soname (LD_LIBRARY_PATH, ldconfig cache)
//   4. /usr/local/cuda/lib64 and /usr/local/cuda/targets/<arch>-linux/lib
//   5. NVIDIA's pip wheels (site-packages/nvidia/*/lib) and $CONDA_PREFIX/lib
// A failure lists every place tried.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { koffi } from './koffi';
import { CudaLibraryError } from './errors';

/** How to find a module's shared library. */
export interface LibrarySpec {
  /** The cuda-ts module (`driver`, `runtime`, `cublas`, …), named in messages. */
  module: string;
  /** Sonames, newest-compatible first. */
  sonames: readonly string[];
  /** Environment variable naming the library file. */
  env: string;
}

export type LoadedLibrary = ReturnType<typeof koffi.load>;

function archDir(): string {
  return process.arch === 'arm64' ? 'sbsa-linux' : 'x86_64-linux';
}

function pipWheelDirs(env: NodeJS.ProcessEnv): string[] {
  const roots = new Set<string>();
  for (const p of (env.PYTHONPATH ?? '').split(':').filter(Boolean)) roots.add(p);
  if (env.VIRTUAL_ENV) roots.add(env.VIRTUAL_ENV);
  const out: string[] = [];
  for (const root of roots) {
    for (const sp of [join(root, 'nvidia'), ...['lib', 'lib64'].map((l) => join(root, l))]) {
      if (!existsSync(sp)) continue;
      if (sp.endsWith('nvidia')) {
        for (const d of safeList(sp)) out.push(join(sp, d, 'lib'));
        continue;
      }
      for (const py of safeList(sp).filter((d) => d.startsWith('python'))) {
        const nv = join(sp, py, 'site-packages', 'nvidia');
        for (const d of safeList(nv)) out.push(join(nv, d, 'lib'));
      }
    }
  }
  return out;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** Checks a LibrarySpec and an environment given to a public entry (`where` names it): TypeErrors naming the field. */
export function checkLibrarySpec(where: string, spec: unknown, env?: unknown): asserts spec is LibrarySpec {
  if (typeof spec !== 'object' || spec === null)
    throw new TypeError(`${where}: spec must be { module, sonames, env }, got ${spec === null ? 'null' : typeof spec}`);
  const s = spec as Record<string, unknown>;
  if (typeof s.module !== 'string' || s.module === '') throw new TypeError(`${where}: spec.module must be a non-empty string`);
  if (!Array.isArray(s.sonames) || s.sonames.length === 0 || !s.sonames.every((x) => typeof x === 'string' && x !== '')) {
    throw new TypeError(`${where}: spec.sonames must be a non-empty array of library file names`);
  }
  if (typeof s.env !== 'string' || !/^[A-Z_][A-Z0-9_]*$/.test(s.env)) throw new TypeError(`${where}: spec.env must be an environment variable name`);
  if (env !== undefined && (typeof env !== 'object' || env === null)) throw new TypeError(`${where}: env must be an object of environment variables`);
}

/**
 * Candidate paths in search order (exported for tests and diagnostics): file paths, or bare sonames for
 * the system loader, each with the rule (`how`) that produced it.
 */
export function libraryCandidates(spec: LibrarySpec, env: NodeJS.ProcessEnv = process.env): { path: string; how: string }[] {
  checkLibrarySpec('libraryCandidates', spec, env);
  return [...candidates(spec, env)];
}

/** The candidates one by one: a search that finds the library early never lists the Python folders. */
function* candidates(spec: LibrarySpec, env: NodeJS.ProcessEnv): Generator<{ path: string; how: string }> {
  const override = env[spec.env];
  if (override) yield { path: override, how: `$${spec.env}` };
  for (const v of ['CUDA_HOME', 'CUDA_PATH']) {
    const root = env[v];
    if (!root) continue;
    for (const sub of ['lib64', 'lib', join('targets', archDir(), 'lib')]) {
      for (const so of spec.sonames) yield { path: join(root, sub, so), how: `$${v}` };
    }
  }
  for (const so of spec.sonames) yield { path: so, how: 'system loader' };
  for (const dir of ['/usr/local/cuda/lib64', join('/usr/local/cuda/targets', archDir(), 'lib')]) {
    for (const so of spec.sonames) yield { path: join(dir, so), how: 'default toolkit' };
  }
  const extra = pipWheelDirs(env);
  if (env.CONDA_PREFIX) extra.push(join(env.CONDA_PREFIX, 'lib'));
  for (const dir of extra) for (const so of spec.sonames) yield { path: join(dir, so), how: 'python/conda' };
}

const cache = new Map<string, LoadedLibrary>();
/** Where each loaded library came from (its path and the rule that found it), for messages. */
const origins = new WeakMap<object, { path: string; how: string }>();

/**
 * The path a library returned by {@link loadLibrary} was loaded from, and the rule that found it
 * (`$CUDA_TS_DRIVER_LIBRARY`, `system loader`, …): a symbol missing from a library the user named is
 * that file's fault, not the installed driver's.
 */
export function libraryOrigin(lib: object): { path: string; how: string } | undefined {
  return origins.get(lib);
}

/**
 * Loads the first candidate that loads (see {@link libraryCandidates}), once per process.
 * @param call the call that needs the library (the Binder gives the C function being bound), named first
 *   in the error's message and its `func`
 * @throws {@link CudaLibraryError} listing every path tried; at once when the module's variable names a
 * file that does not exist or does not load (an override that cannot be honoured is never passed over)
 */
export function loadLibrary(spec: LibrarySpec, env: NodeJS.ProcessEnv = process.env, call?: string): LoadedLibrary {
  checkLibrarySpec('loadLibrary', spec, env);
  if (call !== undefined && typeof call !== 'string') throw new TypeError(`loadLibrary: call must be a string or undefined, got ${typeof call}`);
  const key = `${spec.module}:${spec.sonames.join(',')}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const tried: string[] = [];
  for (const { path, how } of candidates(spec, env)) {
    const isPath = path.includes('/');
    const override = how === `$${spec.env}`;
    if (isPath && !existsSync(path)) {
      tried.push(`${path} (${how}): no such file`);
      if (override) throw new CudaLibraryError(spec.module, `${spec.env}=${path} names no file (unset it to search the usual places)`, tried, call);
      continue;
    }
    try {
      const lib = koffi.load(path);
      cache.set(key, lib);
      origins.set(lib, { path, how });
      return lib;
    } catch (e) {
      tried.push(`${path} (${how}): ${(e as Error).message.split('\n')[0]}`);
      if (override) throw new CudaLibraryError(spec.module, `${spec.env}=${path} does not load`, tried, call);
    }
  }
  throw new CudaLibraryError(spec.module, `none of ${spec.sonames.join(', ')} could be loaded (set ${spec.env} to its path)`, tried, call);
}
