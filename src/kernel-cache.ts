// Compiled kernels cached on disk: Program.compile (NVRTC) and Linker (nvJitLink) results, keyed by
// everything that decides the output (source, options, headers, name expressions, target
// architecture, the compiler: NVRTC's library file, src/library-file.ts, or a linker's version), so a
// second process compiling the same kernel reads a file instead of spending ~17 ms in NVRTC (H200,
// the bench's small kernel) and ~10 ms loading it. The hit path is what a fresh process pays
// (`bench/kernel-cache.ts --stand-in` times it without a GPU): each distinct function's first use counts, so
// it avoids node:crypto (first digest ~0.4 ms) and keeps to a few fs calls.
//
// Where: CUDA_TS_CACHE_DIR, else $XDG_CACHE_HOME/cuda-ts/kernels, else ~/.cache/cuda-ts/kernels.
// CUDA_TS_CACHE=0 turns it off; CUDA_TS_CACHE_MAX_BYTES bounds its size (default 256 MiB): past it,
// the least recently used entries go. Safe with concurrent processes: an entry is written to a file
// of its own and renamed into place (atomic on POSIX), so a reader sees a whole entry or none; an
// entry that does not parse is removed and counted a miss. The cache never fails a compilation: a
// directory that cannot be written only means no caching (a bad setting, though, is a RangeError).
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Default size bound of the cache directory. */
export const DEFAULT_CACHE_MAX_BYTES = 256 * 1024 * 1024;
/** Bumped when the entry format or the key's ingredients change: older entries are never read. */
const FORMAT = 'cuda-ts-kernel-cache-2';
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
  // every compile() reads this: the checks inline, their messages in settingError (built on failure only)
  const flag = env.CUDA_TS_CACHE;
  const max = env.CUDA_TS_CACHE_MAX_BYTES;
  const maxBytes = max ? Number(max) : DEFAULT_CACHE_MAX_BYTES;
  if ((flag && flag !== '0' && flag !== '1') || !Number.isSafeInteger(maxBytes) || maxBytes <= 0) throw settingError(where, flag, max);
  const dir = env.CUDA_TS_CACHE_DIR || join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache'), 'cuda-ts', 'kernels');
  return { enabled: flag !== '0', dir, maxBytes };
}

/** The RangeError of a setting kernelCacheConfig does not understand, naming it. */
function settingError(where: string, flag: string | undefined, max: string | undefined): RangeError {
  if (flag && flag !== '0' && flag !== '1') return new RangeError(`${where}: CUDA_TS_CACHE must be 0 (off) or 1 (on), got '${flag}'`);
  return new RangeError(`${where}: CUDA_TS_CACHE_MAX_BYTES must be a positive integer (bytes), got '${max}'`);
}

/** A cached compilation: named text and byte sections (PTX, CUBIN, LTO-IR, log, lowered names…). */
export interface KernelCacheEntry {
  /** Small values (log, lowered names) as JSON. */
  meta: Record<string, unknown>;
  /** Binary outputs by name. */
  blobs: Record<string, Uint8Array>;
}

/**
 * The key of a compilation: every ingredient, in order, each length-prefixed (`material`), and the
 * entry's file name, a 64-bit hash of it. The entry keeps the material and a read compares it, so two
 * keys with one hash are a miss, never each other's kernel: the hash needs no strength, and a fast one
 * spares the hit path node:crypto's first digest (~0.4 ms in a fresh process, more than the rest of a
 * hit's work together).
 */
export interface KernelCacheKey {
  /** The entry's file name without its suffix: 16 hex digits. */
  name: string;
  /** The ingredients, length-prefixed. */
  material: Uint8Array;
}

/** The key of a compilation of `kind` from `ingredients` (see {@link KernelCacheKey}). */
export function kernelCacheKey(kind: 'nvrtc' | 'nvjitlink' | 'cuLink', ingredients: readonly (string | Uint8Array)[]): KernelCacheKey {
  // one string, each text part as `length:text`, each byte part as `length#` with its bytes after the
  // text in order: one encoding call (a fresh process pays per distinct call, not per byte)
  let text = `${FORMAT.length}:${FORMAT}${kind.length}:${kind}`;
  let binaries: Uint8Array[] | undefined;
  for (const part of ingredients) {
    if (typeof part === 'string') text += `${part.length}:${part}`;
    else {
      text += `${part.byteLength}#`;
      (binaries ??= []).push(part);
    }
  }
  const encoded = Buffer.from(text, 'utf8');
  const material = binaries ? Buffer.concat([encoded, ...binaries]) : encoded;
  return { name: hash64(material), material };
}

/**
 * Two 32-bit multiply-xorshift lanes over the bytes, 4 at a time (a fresh process runs this loop
 * interpreted: a quarter of the steps matters), each finished with murmur3's mixer: 16 hex digits.
 */
function hash64(bytes: Uint8Array): string {
  let a = 0x811c9dc5 ^ bytes.length;
  let b = 0x9e3779b9;
  const end = bytes.length & ~3;
  for (let i = 0; i < end; i += 4) {
    const w = bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24);
    a = Math.imul(a ^ w, 0x01000193);
    a ^= a >>> 15;
    b = Math.imul(b ^ w, 0x85ebca6b);
    b ^= b >>> 13;
  }
  for (let i = end; i < bytes.length; i++) {
    a = Math.imul(a ^ bytes[i], 0x01000193);
    b = Math.imul(b ^ bytes[i], 0x85ebca6b);
  }
  // murmur3's finaliser on each lane (inline: one function less to compile on a fresh process's hit)
  a = Math.imul(a ^ (a >>> 16), 0x85ebca6b);
  a = Math.imul(a ^ (a >>> 13), 0xc2b2ae35);
  b = Math.imul(b ^ (b >>> 16), 0x85ebca6b);
  b = Math.imul(b ^ (b >>> 13), 0xc2b2ae35);
  return ((a ^ (a >>> 16)) >>> 0).toString(16).padStart(8, '0') + ((b ^ (b >>> 16)) >>> 0).toString(16).padStart(8, '0');
}

/** The blob that keeps the key's material in an entry (not a name NVRTC or a linker output takes). */
const KEY_BLOB = '#key';

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
  const m = MAGIC.byteLength;
  if (bytes.byteLength < m + 4) return undefined;
  for (let i = 0; i < m; i++) if (bytes[i] !== MAGIC[i]) return undefined;
  let at = m + 4 + ((bytes[m] | (bytes[m + 1] << 8) | (bytes[m + 2] << 16) | (bytes[m + 3] << 24)) >>> 0); // + header length, little-endian as encodeEntry writes
  if (at > bytes.byteLength) return undefined;
  let header: { meta: Record<string, unknown>; blobs: unknown[] } | null;
  try {
    header = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + m + 4, at - m - 4).toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof header !== 'object' || header === null || !Array.isArray(header.blobs)) return undefined;
  const blobs: Record<string, Uint8Array> = {};
  for (const blob of header.blobs) {
    // [name, size]; anything else (JSON, but not written by encodeEntry) is a damaged entry
    const [name, size] = Array.isArray(blob) ? (blob as unknown[]) : [];
    if (typeof name !== 'string' || typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0 || at + size > bytes.byteLength) return undefined;
    blobs[name] = bytes.slice(at, at + size); // a copy: a caller may change what it is given
    at += size;
  }
  return at === bytes.byteLength ? { meta: header.meta, blobs } : undefined;
}

/**
 * The entry under `key`, or undefined: a miss, an unreadable or a damaged entry (removed), or the
 * entry of another key with the same hash (left for its own key). A hit marks the entry used (see
 * readAndTouch).
 */
export function readCachedKernel(config: KernelCacheConfig, key: KernelCacheKey): KernelCacheEntry | undefined {
  if (!config.enabled) return undefined;
  const file = join(config.dir, key.name + SUFFIX);
  const bytes = readAndTouch(file);
  const entry = bytes && decodeEntry(bytes);
  if (!entry) {
    if (bytes) tryUnlink(file);
    return undefined;
  }
  const material = entry.blobs[KEY_BLOB];
  if (!material || !Buffer.from(material.buffer, material.byteOffset, material.byteLength).equals(key.material)) return undefined;
  delete entry.blobs[KEY_BLOB];
  return entry;
}

/** An entry used within this long is not touched again: the size bound's order needs no finer time. */
const TOUCH_AFTER_MS = 60_000;

/**
 * The file's bytes (undefined when it cannot be read), its modification time set to now (recently
 * used: pruned last) unless it is that recent already. readFileSync and a stat, measured cheaper in a
 * fresh process than one open file read and stat by hand, than an unconditional utimes, and than the
 * touch deferred with setImmediate (each fs function, and setImmediate, costs most on first use).
 */
function readAndTouch(file: string): Uint8Array | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  try {
    const now = Date.now();
    if (now - statSync(file).mtimeMs > TOUCH_AFTER_MS) utimesSync(file, now / 1000, now / 1000);
  } catch {
    /* removed meanwhile, or a read-only cache: fine */
  }
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength); // blobs sliced from it are copies (Buffer's slice would not be)
}

/** Stores `entry` under `key` (write to a private file, rename into place), then bounds the size. */
export function writeCachedKernel(config: KernelCacheConfig, key: KernelCacheKey, entry: KernelCacheEntry): boolean {
  if (!config.enabled) return false;
  const bytes = encodeEntry({ meta: entry.meta, blobs: { ...entry.blobs, [KEY_BLOB]: key.material } });
  if (bytes.byteLength > config.maxBytes) return false;
  const file = join(config.dir, key.name + SUFFIX);
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
