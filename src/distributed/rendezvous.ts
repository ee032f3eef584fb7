// The torchrun environment convention, read and checked: RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, NODE_RANK (or GROUP_RANK), MASTER_ADDR, MASTER_PORT. cuda-ts-run and torchrun set them.
// Nothing here touches CUDA.
import { describe } from '../describe';

/** Where this process stands in a group started by cuda-ts-run or torchrun. */
export interface DistributedEnvironment {
  /** Global rank (RANK). */
  rank: number;
  /** Number of processes (WORLD_SIZE). */
  size: number;
  /** Rank on this node (LOCAL_RANK; default: rank): the GPU ordinal to use. */
  localRank: number;
  /** Processes on this node (LOCAL_WORLD_SIZE; default: size). */
  localSize: number;
  /** This node's index (NODE_RANK or GROUP_RANK; default 0). */
  nodeRank: number;
  /** Rank 0's store, `MASTER_ADDR:MASTER_PORT` (IPv6 in brackets). */
  address: string;
}

function int(env: NodeJS.ProcessEnv, name: string, call: string, fallback?: number): number {
  const v = env[name];
  if (v === undefined || v === '') {
    if (fallback !== undefined) return fallback;
    throw new TypeError(`${call}: ${name} is not set (start the processes with cuda-ts-run or torchrun, or set RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT)`);
  }
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw new RangeError(`${call}: ${name} must be a non-negative integer, got ${JSON.stringify(v)}`);
  return Number(v);
}

/**
 * Reads the torchrun variables from `env` (default process.env); TypeError/RangeError naming `call` when missing or wrong.
 * @param call The call named in the TypeError or RangeError for a missing or wrong variable (default 'distributedEnvironment').
 * @param env The environment to read RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT, … from (default process.env).
 */
export function distributedEnvironment(call = 'distributedEnvironment', env: NodeJS.ProcessEnv = process.env): DistributedEnvironment {
  if (typeof call !== 'string') throw new TypeError(`distributedEnvironment: call must be a string (the call named in errors), got ${describe(call)}`);
  if (typeof env !== 'object' || env === null) throw new TypeError(`${call}: env must be an object of environment variables, got ${describe(env)}`);
  const size = int(env, 'WORLD_SIZE', call);
  if (size < 1) throw new RangeError(`${call}: WORLD_SIZE must be at least 1, got ${size}`);
  const rank = int(env, 'RANK', call);
  if (rank >= size) throw new RangeError(`${call}: RANK ${rank} is not below WORLD_SIZE ${size}`);
  const localRank = int(env, 'LOCAL_RANK', call, rank);
  const localSize = int(env, 'LOCAL_WORLD_SIZE', call, size);
  const nodeRank = int(env, 'NODE_RANK', call, int(env, 'GROUP_RANK', call, 0));
  const addr = env.MASTER_ADDR;
  if (!addr) throw new TypeError(`${call}: MASTER_ADDR is not set`);
  const port = int(env, 'MASTER_PORT', call);
  if (port < 1 || port > 65535) throw new RangeError(`${call}: MASTER_PORT must be in [1, 65535], got ${port}`);
  return { rank, size, localRank, localSize, nodeRank, address: addr.includes(':') ? `[${addr}]:${port}` : `${addr}:${port}` };
}

/** The environment variable holding the shared token (set by cuda-ts-run, or by you on every node). */
export const STORE_TOKEN_ENV = 'CUDA_TS_STORE_TOKEN';

/**
 * Splits `host:port` / `[v6]:port`; RangeError naming `call` otherwise.
 * @param address `host:port` or `[ipv6]:port`, the port in [1, 65535].
 * @param call The call named in the error for a bad address.
 */
export function parseAddress(address: unknown, call: string): { host: string; port: number } {
  if (typeof address !== 'string') throw new TypeError(`${call}: address must be a "host:port" string`);
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(address) ?? /^([^:]+):(\d+)$/.exec(address);
  const port = m ? Number(m[2]) : NaN;
  if (!m || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new RangeError(`${call}: address must be "host:port" with a port in [1, 65535], got ${JSON.stringify(address)}`);
  return { host: m[1], port };
}

/** Bits a store token must carry at least (estimated by `tokenBits`). */
export const MIN_TOKEN_BITS = 128;

/**
 * A generous estimate of a token's strength in bits: length × log2(alphabet), the alphabet being the
 * kinds of characters it uses (hex digits only: 16). A guessable token (a word, a date) scores far
 * higher than it deserves, so this only refuses what is weak for sure.
 */
export function tokenBits(token: string): number {
  if (/^[0-9a-f]+$/i.test(token)) return token.length * 4;
  let alphabet = 0;
  if (/[0-9]/.test(token)) alphabet += 10;
  if (/[a-z]/.test(token)) alphabet += 26;
  if (/[A-Z]/.test(token)) alphabet += 26;
  if (/[^0-9a-zA-Z]/.test(token)) alphabet += 33;
  return token.length * Math.log2(alphabet);
}

/** Bits the part of a token no pattern explains must still carry (see {@link patternedBits}). */
export const MIN_UNPATTERNED_BITS = 96;

/**
 * {@link tokenBits} of the characters no pattern explains: runs of 5 or more that step by -1, 0 or +1
 * (`aaaaa`, `abcde`, `54321`: all but the first two count as explained) and any 5 characters seen
 * earlier in the token (`0123456789abcdef` twice). A random token loses a few bits at most (of a million
 * random 32-hex-digit tokens none fell under 100); a patterned one loses most of them.
 */
export function patternedBits(token: string): number {
  const n = token.length;
  const explained = new Uint8Array(n);
  const code = (i: number): number => token.charCodeAt(i);
  for (let start = 0; start + 1 < n; ) {
    const step = code(start + 1) - code(start);
    let end = start + 1;
    while (Math.abs(step) <= 1 && end + 1 < n && code(end + 1) - code(end) === step) end++;
    if (end - start + 1 >= 5) explained.fill(1, start + 2, end + 1);
    start = end;
  }
  const seen = new Set<string>();
  for (let i = 0; i + 5 <= n; i++) {
    const gram = token.slice(i, i + 5);
    if (seen.has(gram)) explained.fill(1, i, i + 5);
    else seen.add(gram);
  }
  let left = '';
  for (let i = 0; i < n; i++) if (!explained[i]) left += token[i];
  return left.length === 0 ? 0 : left.length * (tokenBits(token) / n);
}

/**
 * Why `token` is too weak for the store, or undefined: under 128 bits, fewer than 8 distinct characters,
 * or under 96 bits once runs and repeats are taken out ({@link patternedBits}). One recorded handshake
 * lets anyone test guesses offline, so it must resist brute force. A phrase of words passes these checks
 * and is still guessable: make tokens with a random generator.
 */
export function weakToken(token: string): string | undefined {
  const bits = tokenBits(token);
  const distinct = new Set(token).size;
  const unpatterned = patternedBits(token);
  if (bits >= MIN_TOKEN_BITS && distinct >= 8 && unpatterned >= MIN_UNPATTERNED_BITS) return undefined;
  const why =
    bits >= MIN_TOKEN_BITS && distinct >= 8
      ? `patterned: runs and repeats leave about ${Math.floor(unpatterned)} bits, at least ${MIN_UNPATTERNED_BITS} are needed`
      : `about ${Math.floor(bits)} bits, ${distinct} distinct characters; at least ${MIN_TOKEN_BITS} bits and 8 distinct characters are needed`;
  return `the token is too weak (${why}): use 32 or more random hex digits, e.g. \`openssl rand -hex 32\``;
}

/**
 * The variable cuda-ts-run sets to the `host:port` of the store it serves itself (one node, no --master:
 * it holds the port from the start, so no other process can take it before rank 0 would have).
 */
export const STORE_SERVED_ENV = 'CUDA_TS_STORE_SERVED';

/** The environment variable naming the run (cuda-ts-run sets it; --run-id or your own on several nodes). */
export const RUN_ID_ENV = 'CUDA_TS_RUN_ID';

/**
 * The run id from `runId`, else $CUDA_TS_RUN_ID, else '' (no run named): at most 128 characters of
 * letters, digits, '.', '_', ':' and '-'. Mixed into the store's authentication, so a process of another
 * run (another job on the same port with the same token) cannot join.
 */
export function runIdOf(runId: unknown, call: string, env: NodeJS.ProcessEnv = process.env): string {
  const v = runId ?? env[RUN_ID_ENV] ?? '';
  if (typeof v !== 'string' || !/^[A-Za-z0-9._:-]{0,128}$/.test(v)) {
    throw new RangeError(
      `${call}: the run id (runId or ${RUN_ID_ENV}) must be at most 128 letters, digits, '.', '_', ':' or '-', got ${JSON.stringify(typeof v === 'string' ? v.slice(0, 140) : typeof v)}`,
    );
  }
  return v;
}
