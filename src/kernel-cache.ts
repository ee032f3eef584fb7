// Compiled kernels cached on disk: Program.compile (NVRTC) and Linker (nvJitLink) results, keyed by
// everything that decides the output (source, options, headers, name expressions, target
// architecture, the compiler's version), so a second process compiling the same kernel reads a file
// instead of spending ~17 ms in NVRTC (H200, the bench's small kernel).
//
// Where: CUDA_TS_CACHE_DIR, else $XDG_CACHE_HOME/cuda-ts/kernels, else ~/.cache/cuda-ts/kernels.
// CUDA_TS_CACHE=0 turns it off; CUDA_TS_CACHE_MAX_BYTES bounds its size (default 256 MiB): past it,
// the least recently used entries go. Safe with concurrent processes: an entry is written to a file
// of its own and renamed into place (atomic on POSIX), so a reader sees a whole entry or none; an
// entry that does not parse is removed and counted a miss. The cache never fails a compilation: a
// directory that cannot be written only means no caching (a bad setting, though, is a RangeError).
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Default size bound of the cache directory. */
export const DEFAULT_CACHE_MAX_BYTES = 256 * 1024 * 1024;
/** Bumped when the entry format or the key's ingredients change: older entries are never read. */
const FORMAT = 'cuda-ts-kernel-cache-1';
const MAGIC = new TextEncoder().encode('CTSKC1\n');
const SUFFIX = '.kc';

/** Where the cache lives and whether it is on (see the file comment for the variables). */
export interface KernelCacheConfig {
  /** False when CUDA_TS_CACHE=0 (or the options of one call turned it off). */
  enabled: boolean;
  /** The cache directory. */
  dir: string;
  /** Size bound in bytes. */
  maxBytes: number;
}

/**
 * The cache configuration from the environment.
 * @throws RangeError for a CUDA_TS_CACHE or CUDA_TS_CACHE_MAX_BYTES that is not understood, naming it
 */
export function kernelCacheConfig(env: NodeJS.ProcessEnv = process.env, where = 'kernel cache'): KernelCacheConfig {
  const flag = env.CUDA_TS_CACHE;
  if (flag !== undefined && flag !== '' && flag !== '0' && flag !== '1') throw new RangeError(`${where}: CUDA_TS_CACHE must be 0 (off) or 1 (on), got '${flag}'`);
  const max = env.CUDA_TS_CACHE_MAX_BYTES;
  let maxBytes = DEFAULT_CACHE_MAX_BYTES;
  if (max !== undefined && max !== '') {
    maxBytes = Number(max);
    if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) throw new RangeError(`${where}: CUDA_TS_CACHE_MAX_BYTES must be a positive integer (bytes), got '${max}'`);
  }
  const home = env.HOME || homedir();
  const dir = env.CUDA_TS_CACHE_DIR || join(env.XDG_CACHE_HOME || join(home, '.cache'), 'cuda-ts', 'kernels');
  return { enabled: flag !== '0', dir, maxBytes };
}

/** A cached compilation: named text and byte sections (PTX, CUBIN, LTO-IR, log, lowered names…). */
export interface KernelCacheEntry {
  /** Small values (log, lowered names) as JSON. */
  meta: Record<string, unknown>;
  /** Binary outputs by name. */
  blobs: Record<string, Uint8Array>;
}

/** The key of a compilation: a SHA-256 over every ingredient, in order, each length-prefixed. */
export function kernelCacheKey(kind: 'nvrtc' | 'nvjitlink' | 'cuLink', ingredients: readonly (string | Uint8Array)[]): string {
  const h = createHash('sha256');
  const length = new Uint32Array(1);
  for (const part of [FORMAT, kind, ...ingredients]) {
    const bytes = typeof part === 'string' ? Buffer.from(part, 'utf8') : part;
    length[0] = bytes.byteLength;
    h.update(new Uint8Array(length.buffer));
    h.update(bytes);
  }
  return h.digest('hex');
}

/** Encodes an entry: magic, JSON header length, header (meta and blob sizes), then the blobs. */
export function encodeEntry(entry: KernelCacheEntry): Uint8Array {
  const names = Object.keys(entry.blobs);
  const header = Buffer.from(JSON.stringify({ meta: entry.meta, blobs: names.map((n) => [n, entry.blobs[n].byteLength]) }), 'utf8');
  const total = MAGIC.byteLength + 4 + header.byteLength + names.reduce((s, n) => s + entry.blobs[n].byteLength, 0);
  const out = new Uint8Array(total);
  out.set(MAGIC, 0);
  new DataView(out.buffer).setUint32(MAGIC.byteLength, header.byteLength, true);
  let at = MAGIC.byteLength + 4;
  out.set(header, at);
  at += header.byteLength;
  for (const n of names) {
    out.set(entry.blobs[n], at);
    at += entry.blobs[n].byteLength;
  }
  return out;
}

/** Decodes an entry, or undefined when the bytes are not a whole entry of this format. */
export function decodeEntry(bytes: Uint8Array): KernelCacheEntry | undefined {
  if (bytes.byteLength < MAGIC.byteLength + 4 || MAGIC.some((b, i) => bytes[i] !== b)) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(MAGIC.byteLength, true);
  let at = MAGIC.byteLength + 4;
  if (at + headerLength > bytes.byteLength) return undefined;
  let header: { meta: Record<string, unknown>; blobs: [string, number][] };
  try {
    header = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + at, headerLength).toString('utf8'));
  } catch {
    return undefined;
  }
  at += headerLength;
  const blobs: Record<string, Uint8Array> = {};
  for (const [name, size] of header.blobs) {
    if (at + size > bytes.byteLength) return undefined;
    blobs[name] = bytes.slice(at, at + size);
    at += size;
  }
  return at === bytes.byteLength ? { meta: header.meta, blobs } : undefined;
}

/** The entry under `key`, or undefined (a miss, an unreadable or a damaged entry: removed). */
export function readCachedKernel(config: KernelCacheConfig, key: string): KernelCacheEntry | undefined {
  if (!config.enabled) return undefined;
  const file = join(config.dir, key + SUFFIX);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  const entry = decodeEntry(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  if (!entry) {
    tryUnlink(file);
    return undefined;
  }
  try {
    const now = new Date();
    utimesSync(file, now, now); // recently used: pruned last
  } catch {
    /* read-only cache: fine */
  }
  return entry;
}

/** Stores `entry` under `key` (write to a private file, rename into place), then bounds the size. */
export function writeCachedKernel(config: KernelCacheConfig, key: string, entry: KernelCacheEntry): boolean {
  if (!config.enabled) return false;
  const bytes = encodeEntry(entry);
  if (bytes.byteLength > config.maxBytes) return false;
  const file = join(config.dir, key + SUFFIX);
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    mkdirSync(config.dir, { recursive: true });
    writeFileSync(tmp, bytes);
    renameSync(tmp, file);
  } catch {
    tryUnlink(tmp);
    return false;
  }
  pruneKernelCache(config);
  return true;
}

/** Entries of the cache with their sizes and last use, oldest first. */
function listEntries(dir: string): { file: string; size: number; used: number }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: { file: string; size: number; used: number }[] = [];
  for (const name of names) {
    if (!name.endsWith(SUFFIX)) continue;
    try {
      const s = statSync(join(dir, name));
      out.push({ file: join(dir, name), size: s.size, used: s.mtimeMs });
    } catch {
      /* removed by another process meanwhile */
    }
  }
  return out.sort((a, b) => a.used - b.used);
}

/** Removes least recently used entries until the cache is within its bound; returns bytes freed. */
export function pruneKernelCache(config: KernelCacheConfig): number {
  const entries = listEntries(config.dir);
  let total = entries.reduce((s, e) => s + e.size, 0);
  let freed = 0;
  for (const e of entries) {
    if (total <= config.maxBytes) break;
    tryUnlink(e.file);
    total -= e.size;
    freed += e.size;
  }
  return freed;
}

/** The cache's place, whether it is on, and what it holds (for `cuda-ts doctor`). */
export function kernelCacheStats(env: NodeJS.ProcessEnv = process.env): KernelCacheConfig & { entries: number; bytes: number } {
  const config = kernelCacheConfig(env, 'cuda-ts doctor');
  const entries = listEntries(config.dir);
  return { ...config, entries: entries.length, bytes: entries.reduce((s, e) => s + e.size, 0) };
}

function tryUnlink(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    /* already gone */
  }
}
