// Which file a shared library would load from, found without loading it, so the kernel cache can key
// a compilation by the compiler's file (path, inode, size, modification time) and answer a hit with
// no libnvrtc in the process (loading it costs ~10 ms on the H200). The search is support/library.ts's
// (libraryCandidates) with the system loader's part done by hand: LD_LIBRARY_PATH, /etc/ld.so.cache,
// the default directories. Where that cannot be decided (an unknown ld.so.cache format, hwcap
// variants), the answer is undefined and the caller falls back to asking the library its version.
// A resolution that disagrees with what the loader really picked is caught where it matters: an
// entry is written only when the file named in its key is the one mapped into the writing process
// (fileIsMapped), so a key never names a library other than the one that produced the entry.
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { libraryCandidates, type LibrarySpec } from '../support';

/** The identity of the file the library would load from, or undefined when it cannot be told. */
export interface LibraryFile {
  /** The path found (the loader's candidate: symbolic links not followed). */
  path: string;
  /** The inode of the file it names, as /proc/self/maps shows it. */
  inode: number;
  /** Device, inode, size and modification time of that file in one string: the cache key's ingredient. */
  identity: string;
}

/**
 * The file `spec`'s library would load from in this environment, found without loading it: the first
 * candidate (support/library.ts's order) that exists; a bare soname resolved as the system loader would.
 */
export function libraryFile(spec: LibrarySpec, env: NodeJS.ProcessEnv = process.env): LibraryFile | undefined {
  const override = env[spec.env];
  if (override) return identify(override); // the only candidate then: loadLibrary never passes it over
  let found: LibraryFile | null | undefined;
  searchOrder(spec, env, (path) => {
    const file = path.includes('/') ? path : systemLoaderPath(path, env);
    found = file === null ? null : file === undefined ? undefined : identify(file); // null: the loader's choice cannot be told
    return found !== undefined;
  });
  return found ?? undefined;
}

const LIB_DIRS = ['lib64', 'lib', join('targets', process.arch === 'arm64' ? 'sbsa-linux' : 'x86_64-linux', 'lib')];
const TOOLKIT_DIRS = ['/usr/local/cuda/lib64', join('/usr/local/cuda/targets', process.arch === 'arm64' ? 'sbsa-linux' : 'x86_64-linux', 'lib')];

/**
 * Calls `visit` with support/library.ts's candidates without an override (file paths, or bare sonames
 * for the system loader), in its order, until `visit` returns true. The common case is walked here by
 * hand (a fresh process spends ~0.2 ms in libraryCandidates' generator and Python-folder scan);
 * with PYTHONPATH, VIRTUAL_ENV or CONDA_PREFIX set, libraryCandidates itself is walked.
 * test/kernel-cache.test.ts checks the two orders agree.
 */
export function searchOrder(spec: LibrarySpec, env: NodeJS.ProcessEnv, visit: (path: string) => boolean): void {
  if (env.PYTHONPATH || env.VIRTUAL_ENV || env.CONDA_PREFIX) {
    for (const { path, how } of libraryCandidates(spec, env)) if (how !== `$${spec.env}` && visit(path)) return;
    return;
  }
  for (const root of [env.CUDA_HOME, env.CUDA_PATH]) {
    if (root) for (const sub of LIB_DIRS) for (const so of spec.sonames) if (visit(join(root, sub, so))) return;
  }
  for (const so of spec.sonames) if (visit(so)) return;
  for (const dir of TOOLKIT_DIRS) for (const so of spec.sonames) if (visit(join(dir, so))) return;
}

function identify(path: string): LibraryFile | undefined {
  // the file a link leads to: dev and inode name it (its path is resolved only to check a mapping)
  const s = statSync(path, { throwIfNoEntry: false });
  return s?.isFile() ? { path, inode: s.ino, identity: `${s.dev}|${s.ino}|${s.size}|${s.mtimeMs}` } : undefined;
}

const TRIPLET = process.arch === 'arm64' ? 'aarch64-linux-gnu' : 'x86_64-linux-gnu';
const DEFAULT_DIRS = [`/lib/${TRIPLET}`, `/usr/lib/${TRIPLET}`, '/lib64', '/usr/lib64', '/lib', '/usr/lib'];

/**
 * Where dlopen(soname) would look: LD_LIBRARY_PATH, then the ld.so.cache, then the default
 * directories. undefined: not found; null: cannot be told (hwcap variants, an unreadable cache format).
 */
export function systemLoaderPath(soname: string, env: NodeJS.ProcessEnv = process.env, cacheFile = '/etc/ld.so.cache'): string | undefined | null {
  for (const dir of (env.LD_LIBRARY_PATH ?? '').split(':')) {
    if (dir && exists(join(dir, soname))) return join(dir, soname);
  }
  const cached = ldCacheLookup(cacheFile, soname);
  if (cached !== undefined) return cached;
  for (const dir of DEFAULT_DIRS) if (exists(join(dir, soname))) return join(dir, soname);
  return undefined;
}

function exists(file: string): boolean {
  return statSync(file, { throwIfNoEntry: false }) !== undefined;
}

const CACHE_MAGIC = 'glibc-ld.so.cache1.1';
// flags of an entry: ELF libc6 (3) for this machine's 64-bit ABI (x86-64 0x0300, AArch64 0x0a00)
const ABI_FLAGS = (process.arch === 'arm64' ? 0x0a00 : 0x0300) | 3;
let parsedCache: { stamp: string; bytes: Buffer } | undefined;

/**
 * The path the ld.so.cache gives `soname` for this machine's ABI; undefined when it has none, null
 * when its answer cannot be told (a format other than glibc's new one, hwcap-specific entries).
 */
export function ldCacheLookup(cacheFile: string, soname: string): string | undefined | null {
  let stamp: string;
  try {
    const s = statSync(cacheFile);
    stamp = `${cacheFile}|${s.ino}|${s.size}|${s.mtimeMs}`;
  } catch {
    return undefined; // no cache: the loader searches the default directories only
  }
  if (parsedCache?.stamp !== stamp) parsedCache = { stamp, bytes: readFileSync(cacheFile) };
  return findInLdCache(parsedCache.bytes, soname);
}

/**
 * Looks `soname` up in an ld.so.cache (glibc's format since 2.32, `glibc-ld.so.cache1.1`): the
 * positions of the name in the string table, then the entries whose key is one of them, found with
 * indexOf (native) rather than by reading each of the cache's hundreds of entries in JavaScript, which
 * a fresh process runs interpreted.
 */
function findInLdCache(bytes: Buffer, soname: string): string | undefined | null {
  // struct cache_file_new: magic+version (20), nlibs, len_strings, flags (1) + padding (3), extension offset, 3 unused; entries of 24 bytes
  if (bytes.byteLength < 48 || bytes.toString('latin1', 0, CACHE_MAGIC.length) !== CACHE_MAGIC) return null;
  const nlibs = bytes.readUInt32LE(20);
  const table = 48 + nlibs * 24;
  if (table > bytes.byteLength) return null;
  const needle = Buffer.from(`${soname}\0`, 'latin1');
  // every place the string at which is `soname` (keys may point into a path: ldconfig shares tails),
  // then every entry whose key field (4 bytes into it) holds that place, in table order
  const entries: number[] = [];
  const key = Buffer.alloc(4);
  for (let i = bytes.indexOf(needle, table); i >= 0; i = bytes.indexOf(needle, i + 1)) {
    key.writeUInt32LE(i);
    for (let j = bytes.indexOf(key, 48); j >= 0 && j < table; j = bytes.indexOf(key, j + 1)) if ((j - 48) % 24 === 4) entries.push(j - 4);
  }
  if (entries.length === 0) return undefined;
  let found: string | undefined;
  for (const e of entries.sort((x, y) => x - y)) {
    if (bytes.readInt32LE(e) !== ABI_FLAGS) continue;
    if (bytes.readUInt32LE(e + 16) !== 0 || bytes.readUInt32LE(e + 20) !== 0) return null; // hwcap variants: the loader's pick depends on the CPU
    const value = bytes.readUInt32LE(e + 8);
    found ??= bytes.toString('utf8', value, bytes.indexOf(0, value)); // the first entry wins, as in the loader
  }
  return found;
}

const mapped = new Set<string>();

/**
 * True when `file` (that path and inode) is mapped into this process, i.e. it is the library that was
 * loaded; false when it is not or /proc/self/maps cannot be read. Positive answers are remembered
 * (a library, once loaded, stays).
 */
export function fileIsMapped(file: LibraryFile, mapsFile = '/proc/self/maps'): boolean {
  let path: string;
  let maps: string;
  try {
    path = realpathSync.native(file.path); // the maps show resolved paths
    if (mapped.has(`${path}|${file.inode}`)) return true;
    maps = readFileSync(mapsFile, 'utf8');
  } catch {
    return false;
  }
  // a line: address perms offset dev inode path
  for (const line of maps.split('\n')) {
    if (!line.endsWith(path)) continue;
    const fields = line.trim().split(/\s+/);
    if (fields.length >= 6 && Number(fields[4]) === file.inode && fields.slice(5).join(' ') === path) {
      mapped.add(`${path}|${file.inode}`);
      return true;
    }
  }
  return false;
}
