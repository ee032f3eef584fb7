// koffi for the whole package: its native module, loaded without koffi's JavaScript entry where the
// module is found where koffi's own loader would find it.
//
// Why: koffi's entry (an esbuild bundle) wraps node:util with `__toESM`, which reads the descriptor of
// every property of util; on Node 22+ that materialises util's lazy properties and loads ~30 of Node's
// internal modules (streams, worker_threads, util/diff, util/colors…), for wrappers of deprecated koffi
// functions this package never calls. On the H200, require('koffi') + load + one call took 10.5 ms and
// the native module alone 2.2 ms (measured once with fresh processes; bench/import.ts times the koffi row).
//
// Where: koffi requires `@koromix/koffi-<platform>-<arch>` from its own folder, and that package loads
// `<libc>_<arch>/koffi.node`. Here only the common case takes the short way (Linux x64/arm64 with glibc,
// koffi found through this file's node_modules folders, the native module reporting koffi's version);
// anything else — another platform, musl, koffi built from source, NODE_PATH, --preserve-symlinks, a
// version mismatch, an error of any kind — requires koffi as usual. The native module is the object
// koffi's entry exports as its default, and Node's require cache makes it the same object whichever
// loads it first.
import { type default as Koffi } from 'koffi';

/** koffi's default export: the functions and types of koffi. */
export type KoffiModule = typeof Koffi;

/** The path of koffi's prebuilt native module for this process, or undefined where the short way does not apply. */
export function koffiNativePath(
  paths: readonly string[] = module.paths,
  platform: string = process.platform,
  arch: string = process.arch,
): { file: string; version: string } | undefined {
  if (platform !== 'linux' || (arch !== 'x64' && arch !== 'arm64')) return undefined;
  // with symlinks preserved, Node's require keys the module by a path this search does not compute
  // (koffi's entry could then load a second instance of the native module): koffi's entry decides
  if (process.env.NODE_PRESERVE_SYMLINKS === '1' || process.execArgv.includes('--preserve-symlinks')) return undefined;
  const fs = require('fs') as typeof import('fs');
  // a musl system (or one with musl's loader beside glibc's): koffi's entry picks the binary
  if (fs.existsSync(`/lib/ld-musl-${arch === 'x64' ? 'x86_64' : 'aarch64'}.so.1`)) return undefined;
  for (const dir of paths) {
    let text: string;
    try {
      text = fs.readFileSync(`${dir}/koffi/package.json`, 'utf8');
    } catch {
      continue; // not in this node_modules folder: Node's resolution looks in the next one too
    }
    const version = (JSON.parse(text) as { version?: unknown }).version;
    if (typeof version !== 'string') return undefined;
    // the platform package as koffi's require finds it: from koffi's real folder upwards
    // (Node's Module; under another module system, e.g. jest's, module.constructor is not it)
    type ModuleStatics = { _nodeModulePaths?(from: string): string[] };
    const nodeModulePaths = (module.constructor as ModuleStatics)._nodeModulePaths ?? (require('module') as ModuleStatics)._nodeModulePaths!;
    for (const up of nodeModulePaths(fs.realpathSync(`${dir}/koffi`))) {
      const file = `${up}/@koromix/koffi-linux-${arch}/linux_${arch}/koffi.node`;
      if (fs.existsSync(file)) return { file, version };
    }
    return undefined;
  }
  return undefined;
}

function load(): KoffiModule {
  if (process.env.CUDA_TS_KOFFI_ENTRY !== '1') {
    try {
      const found = koffiNativePath();
      if (found) {
        const native = require(found.file) as KoffiModule;
        if (native && native.version === found.version) return native;
      }
    } catch {
      // fall through to koffi's entry, which reports what is wrong in its own words
    }
  }
  return (require('koffi') as { default: KoffiModule }).default;
}

/** koffi (its default export), loaded once per process. `CUDA_TS_KOFFI_ENTRY=1` always loads it through koffi's entry. */
export const koffi: KoffiModule = load();
