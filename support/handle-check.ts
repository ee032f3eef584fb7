// Opt-in handle checks (CUDA_TS_CHECK_HANDLES=1), in the spirit of compute-sanitizer: the typed and raw
// layers are C-exact about handles, so a destroyed stream, a context given as a stream, 0xdeadbeef or a
// number given as a function pointer reaches the library, which may crash the process. With the variable
// set when a module loads, every function of that module that takes a handle or a function pointer is
// bound through a wrapper that checks each one against what this process has seen:
//   - a handle is known once a call returned it through an out-parameter (cuStreamCreate, cuCtxGetCurrent,
//     cuGraphGetNodes, …) or registerHandle() declared it; it is dead once a destroying call succeeded;
//   - a function pointer must be an address koffi.register returned (and not yet unregistered).
// A handle of another kind is a TypeError, an unknown or dead one a RangeError, both naming the function
// and the parameter, thrown before the call. 0 (NULL) always passes, and so do the special streams 1 and 2
// (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD). Not seen: handles a destroyed context took with it, and
// handles another library created (declare them with registerHandle).
// Off (the default), nothing is wrapped: the bound functions are koffi's own, at no cost per call.
import type { NativeFunction } from './binder';
import { koffi } from './koffi';
import { describeValue } from './validate';

/** The environment variable that turns the checks on (`1`), read when each module loads. */
export const HANDLE_CHECKS_ENV = 'CUDA_TS_CHECK_HANDLES';

/** Functions that destroy the handle they take at a position (a reviewed list: the headers say nothing
 *  about ownership). Driver and runtime names; each module's table covers its own functions. */
const DESTROYS: Readonly<Record<string, number>> = {
  cuCtxDestroy: 0,
  cuStreamDestroy: 0,
  cuEventDestroy: 0,
  cuModuleUnload: 0,
  cuLibraryUnload: 0,
  cuLinkDestroy: 0,
  cuGraphDestroy: 0,
  cuGraphExecDestroy: 0,
  cuGraphDestroyNode: 0,
  cuMemPoolDestroy: 0,
  cuArrayDestroy: 0,
  cuMipmappedArrayDestroy: 0,
  cuTexObjectDestroy: 0,
  cuSurfObjectDestroy: 0,
  cuDestroyExternalMemory: 0,
  cuDestroyExternalSemaphore: 0,
  cuGreenCtxDestroy: 0,
  cudaStreamDestroy: 0,
  cudaEventDestroy: 0,
  cudaGraphDestroy: 0,
  cudaGraphExecDestroy: 0,
  cudaGraphDestroyNode: 0,
  cudaMemPoolDestroy: 0,
  cudaFreeArray: 0,
  cudaFreeMipmappedArray: 0,
  cudaDestroyTextureObject: 0,
  cudaDestroySurfaceObject: 0,
  cudaDestroyExternalMemory: 0,
  cudaDestroyExternalSemaphore: 0,
  cudaLibraryUnload: 0,
};

/** What a parameter is to the checks: a handle taken (`h`), a handle written (`o`), a function pointer (`f`). */
interface Mark {
  at: number;
  kind: 'h' | 'o' | 'f';
  tag: string;
  name: string;
}

// Keys: a number up to 2**53 - 1, a bigint beyond (a bigint handle must not slip past as "no handle")
const live = new Map<number | bigint, string>(); // address → struct tag of a handle seen alive
const dead = new Map<number | bigint, string>(); // address → tag of a handle destroyed since
const callbacks = new Set<number | bigint>(); // addresses koffi.register returned
const SPECIAL_STREAMS = new Set<number | bigint>([1, 2]);
/** Kinds CUDA takes in place of another: a CUkernel wherever a CUfunction is expected (CUDA 12). */
const TAKEN_FOR: Readonly<Record<string, string>> = { CUkern_st: 'CUfunc_st' };

/** Whether the checks are on in this process (the variable as it is now). */
export function handleChecksEnabled(): boolean {
  return process.env[HANDLE_CHECKS_ENV] === '1';
}

/** Declares a handle made elsewhere (another library, another binding) as alive, of struct tag `tag`
 *  (`'CUstream_st'`, `'CUctx_st'`, …), for the handle checks. */
export function registerHandle(tag: string, handle: number | bigint): void {
  if (typeof tag !== 'string' || !/^\w+$/.test(tag))
    throw new TypeError(`registerHandle: tag must be a C struct tag such as 'CUstream_st', got ${describeValue(tag)}`);
  const at = typeof handle === 'bigint' && handle > 0n && handle <= MAX_SAFE_BIGINT ? Number(handle) : handle;
  if (typeof at !== 'number' || !Number.isSafeInteger(at) || at <= 0)
    throw new RangeError(`registerHandle: handle must be a non-zero address, got ${describeValue(handle)}`);
  live.set(at, tag);
  dead.delete(at);
}

/** Reads `name|h:TAG:param,,o:TAG:param,f::param` lines into each function's marks. */
function readTable(table: string): Map<string, Mark[]> {
  const out = new Map<string, Mark[]>();
  for (const line of table.split('\n')) {
    const bar = line.indexOf('|');
    if (bar < 0) continue;
    const marks: Mark[] = [];
    line
      .slice(bar + 1)
      .split(',')
      .forEach((m, at) => {
        if (!m) return;
        const [kind, tag, name] = m.split(':');
        marks.push({ at, kind: kind as Mark['kind'], tag, name });
      });
    out.set(line.slice(0, bar), marks);
  }
  return out;
}

const MAX_SAFE_BIGINT = BigInt(Number.MAX_SAFE_INTEGER);
/** The key of a handle value: a number as it is, a bigint as a number up to 2**53 - 1 and as itself
 *  beyond (any bigint: one above 2**53 or below 0 is a handle value too, checked like the others). */
function asAddress(v: unknown): number | bigint | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return v >= 0n && v <= MAX_SAFE_BIGINT ? Number(v) : v;
  return undefined;
}

/** Throws unless argument `v` of `fn` is what mark `m` takes. */
function checkArg(fn: string, m: Mark, v: unknown): void {
  const at = asAddress(v);
  if (v === null || at === 0) return;
  if (m.kind === 'f') {
    if (at !== undefined && callbacks.has(at)) return;
    throw new RangeError(
      `${fn}: ${m.name} is not a function pointer koffi.register returned (or it was unregistered), got ${describeValue(v)} (${HANDLE_CHECKS_ENV})`,
    );
  }
  if (at === undefined) return; // not a handle value at all: the typed layer's own checks answer for it
  if (m.tag === 'CUstream_st' && SPECIAL_STREAMS.has(at)) return;
  const tag = live.get(at);
  if (tag === m.tag || (tag !== undefined && TAKEN_FOR[tag] === m.tag)) return;
  const hex = `0x${at.toString(16)}`;
  if (tag !== undefined) throw new TypeError(`${fn}: ${m.name} is a ${tag} handle (${hex}), not a ${m.tag} (${HANDLE_CHECKS_ENV})`);
  const was = dead.get(at);
  if (was !== undefined) throw new RangeError(`${fn}: ${m.name} is a ${was} handle (${hex}) that was destroyed (${HANDLE_CHECKS_ENV})`);
  throw new RangeError(
    `${fn}: ${m.name} = ${hex} is no ${m.tag} handle this process has seen: not returned by a CUDA call, nor declared with registerHandle (${HANDLE_CHECKS_ENV})`,
  );
}

/** Records the handles a successful call wrote through out-parameter `v` (one, or an array of them). */
function recordOut(m: Mark, v: unknown): void {
  let words: BigUint64Array | undefined;
  if (v instanceof BigUint64Array || v instanceof BigInt64Array) words = new BigUint64Array(v.buffer, v.byteOffset, v.length);
  else if (ArrayBuffer.isView(v) && v.byteOffset % 8 === 0) words = new BigUint64Array(v.buffer, v.byteOffset, Math.floor(v.byteLength / 8));
  else if (v instanceof ArrayBuffer) words = new BigUint64Array(v, 0, Math.floor(v.byteLength / 8));
  if (!words) return;
  for (const w of words) {
    if (w === 0n) continue;
    const at = asAddress(w)!;
    live.set(at, m.tag);
    dead.delete(at);
  }
}

function checked(fn: string, native: NativeFunction, marks: Mark[]): NativeFunction {
  const destroys = DESTROYS[fn];
  return (...args: unknown[]) => {
    for (const m of marks) if (m.kind !== 'o') checkArg(fn, m, args[m.at]);
    const result = native(...args);
    if (result === 0 || result === undefined) {
      for (const m of marks) if (m.kind === 'o') recordOut(m, args[m.at]);
      const gone = destroys !== undefined ? asAddress(args[destroys]) : undefined;
      if (gone) {
        dead.set(gone, live.get(gone) ?? '?');
        live.delete(gone);
      }
    }
    return result;
  };
}

let registerTracked = false;
/** Tracks koffi.register / koffi.unregister, so that function pointers can be checked. */
function trackCallbacks(): void {
  if (registerTracked) return;
  registerTracked = true;
  const k = koffi as unknown as { register: (...a: unknown[]) => unknown; unregister: (p: unknown) => void };
  const register = k.register.bind(koffi);
  const unregister = k.unregister.bind(koffi);
  k.register = (...a: unknown[]) => {
    const p = register(...a);
    const at = asAddress(p);
    if (at !== undefined) callbacks.add(at);
    return p;
  };
  k.unregister = (p: unknown) => {
    const at = asAddress(p);
    if (at !== undefined) callbacks.delete(at);
    unregister(p);
  };
}

/**
 * Called by each generated module's binding.ts with its handle table: with CUDA_TS_CHECK_HANDLES=1, the
 * module's `binder.native(name)` returns checking wrappers for the functions listed; otherwise nothing
 * changes. @internal
 */
export function checkHandles(binder: { native(name: string): NativeFunction }, table: string): void {
  if (typeof binder !== 'object' || binder === null || typeof binder.native !== 'function')
    throw new TypeError(`checkHandles: binder must be a module's Binder, got ${describeValue(binder)}`);
  if (typeof table !== 'string') throw new TypeError(`checkHandles: table must be a handle table string, got ${describeValue(table)}`);
  if (!handleChecksEnabled()) return;
  trackCallbacks();
  const marks = readTable(table);
  const native = binder.native.bind(binder);
  binder.native = (name: string): NativeFunction => {
    const f = native(name);
    const m = marks.get(name);
    return m && m.length ? checked(name, f, m) : f;
  };
}
