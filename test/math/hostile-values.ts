// Hostile inputs for the math objects' unit tests (test/math/hostile*.test.ts), and the checks every
// hostile call must pass: it succeeds, or throws a TypeError/RangeError whose message starts with the
// call's `Class.method:`; and nothing the fake libraries receive is a value no C function takes.

import type { Context } from '../../src/context';
import { DeviceBuffer } from '../../src/memory/device-buffer';

/** A fake library: every function records its call in `calls` and returns `answers[name]` (else undefined). */
export function recordingLibrary(calls: CallLog, answers: Record<string, unknown> = {}): Record<string, unknown> {
  return new Proxy({} as Record<string, unknown>, {
    get:
      (_t, name: string) =>
      (...args: unknown[]) => {
        calls.push([name, args]);
        return answers[name];
      },
  });
}

/** DeviceBuffers wrapping fake addresses from `start`, `step` bytes apart, in `ctx` (or the context given). */
export function bufferMaker(ctx: Context, start: number, step = 0x100000): (bytes: number, context?: Context) => DeviceBuffer {
  let base = start;
  return (bytes, context = ctx) => {
    const b = DeviceBuffer.wrap(base, bytes, { context });
    base += step;
    return b;
  };
}

/** What a flip-flop getter returns once its valid reads are used up: no C function takes a string. */
export const POISON = 'POISON';

/** Numbers (and non-numbers) no count, size, index or seed may take. */
export const BAD_NUMBERS: readonly (readonly [string, unknown])[] = [
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['-Infinity', Number.NEGATIVE_INFINITY],
  ['2**53 + 1', 2 ** 53 + 1],
  ['1e300', 1e300],
  ['-1', -1],
  ['1.5', 1.5],
  ['bigint 2n', 2n],
  ['string "2"', '2'],
  ['null', null],
  ['true', true],
  ['{ valueOf }', { valueOf: () => 2 }],
  ['Symbol', Symbol('n')],
  ['[2]', [2]],
];

/** Strings that name Object.prototype members: a choice looked up as `TABLE[v]` finds them (a function, an object). */
export const PROTO_KEYS: readonly (readonly [string, string])[] = ['toString', '__proto__', 'constructor', 'hasOwnProperty', 'valueOf'].map(
  (k) => [`'${k}'`, k] as const,
);

/** Values that are not an options object (undefined excluded: it means "no options"). */
export const NOT_OBJECTS: readonly (readonly [string, unknown])[] = [
  ['null', null],
  ['number', 5],
  ['string', 'x'],
  ['true', true],
  ['Symbol', Symbol('o')],
  ['bigint', 1n],
];

/** Values that are not device operands (host arrays, plain objects, look-alikes). */
export const NOT_OPERANDS: readonly (readonly [string, unknown])[] = [
  ['undefined', undefined],
  ['null', null],
  ['number', 0x7f0000000000],
  ['Float32Array', new Float32Array(16)],
  ['ArrayBuffer', new ArrayBuffer(64)],
  ['plain object', { ptr: 0x7f0000000000, byteLength: 64, dtype: 'f32', shape: [4, 4], strides: [4, 1] }],
  ['array', [1, 2, 3]],
  ['string', 'x'],
];

/** An object whose `key` reads `valid` `validReads` times, then POISON (a getter changing its answer). */
export function flipFlop(base: Record<string, unknown>, key: string, poison: unknown = POISON, validReads = 1): Record<string, unknown> {
  const o: Record<string, unknown> = { ...base };
  let reads = 0;
  const valid = base[key];
  Object.defineProperty(o, key, { enumerable: true, get: () => (reads++ < validReads ? valid : poison) });
  return o;
}

/** A Proxy over `base` whose every read after the first of a key gives POISON. */
export function poisonProxy(base: Record<string, unknown>): Record<string, unknown> {
  const seen = new Set<PropertyKey>();
  return new Proxy(base, {
    get(t, k, r) {
      if (typeof k === 'string' && k in t && seen.has(k)) return POISON;
      seen.add(k);
      return Reflect.get(t, k, r);
    },
  });
}

/**
 * Variants of a valid options object: each either works as the valid one or is refused. An inherited
 * key or an unknown own key must be refused; a frozen copy, a null-prototype copy, a Symbol key must work.
 */
export function optionVariants(valid: Record<string, unknown>): (readonly [string, unknown, 'ok' | 'refused' | 'either'])[] {
  const variants: (readonly [string, unknown, 'ok' | 'refused' | 'either'])[] = [
    ['frozen', Object.freeze({ ...valid }), 'ok'],
    ['null prototype', Object.assign(Object.create(null), valid), 'ok'],
    ['unknown key', { ...valid, zzUnknown: 1 }, 'refused'],
    // an inherited key is never read as an option: refusing it is as good as ignoring it
    ['inherited unknown key', Object.assign(Object.create({ zzInherited: 1 }), valid), 'either'],
    ['Symbol key', { ...valid, [Symbol('s')]: 1 }, 'either'],
    ['Proxy poisoning second reads', poisonProxy({ ...valid }), 'either'],
  ];
  for (const key of Object.keys(valid)) {
    variants.push([`getter ${key}: valid, then POISON`, flipFlop(valid, key), 'either']);
    variants.push([`getter ${key}: valid twice, then POISON`, flipFlop(valid, key, POISON, 2), 'either']);
  }
  return variants;
}

/** The outcome of one hostile call: 'ok', 'refused' (the right error), or a line saying what went wrong. */
export function outcome(where: string, call: () => unknown): string {
  let result: unknown;
  try {
    result = call();
  } catch (e) {
    // ClosedObjectError is the documented error of a closed object (buffer, stream, handle)
    const known = e instanceof TypeError || e instanceof RangeError || (e as Error)?.constructor?.name === 'ClosedObjectError';
    if (!known) return `threw ${(e as Error)?.constructor?.name}: ${(e as Error)?.message}`;
    if (!(e as Error).message.startsWith(`${where}:`)) return `threw ${(e as Error).constructor.name} without '${where}:': ${(e as Error).message}`;
    return 'refused';
  }
  if (result instanceof Promise) result.catch(() => undefined);
  return 'ok';
}

/** As {@link outcome} for a call that may answer with a promise: a rejection counts as a throw. */
export async function outcomeAsync(where: string, call: () => unknown): Promise<string> {
  let settled: unknown;
  const sync = outcome(where, () => {
    settled = call();
  });
  if (sync !== 'ok' || !(settled instanceof Promise)) return sync;
  try {
    await settled;
    return 'ok';
  } catch (e) {
    return outcome(where, () => {
      throw e;
    });
  }
}

/** True for a value that C may receive from the math objects: a finite number within 2**64, a bigint pointer, bytes, a record of those. */
/** The bad numbers of BAD_NUMBERS no valid call passes on (the tests use none of them as a scalar): seen in C, one leaked through. */
const SENTINELS: readonly number[] = [1.5, 2 ** 53 + 1, 1e300];

function cleanValue(v: unknown, depth = 0): boolean {
  if (typeof v === 'number') return Number.isFinite(v) && Math.abs(v) < 2 ** 64 && !SENTINELS.includes(v);
  if (typeof v === 'bigint') return v >= -(2n ** 63n) && v < 2n ** 64n;
  if (v === null) return true; // a NULL pointer
  if (ArrayBuffer.isView(v)) return true;
  if (typeof v === 'object' && depth < 4) return Object.values(v as object).every((x) => cleanValue(x, depth + 1));
  return false;
}

/** Calls whose arguments hold a value no C function takes (NaN, a string, undefined, …), described. */
export function dirtyCalls(calls: readonly (readonly [string, readonly unknown[]])[]): string[] {
  const bad: string[] = [];
  for (const [name, args] of calls) {
    args.forEach((a, i) => {
      if (!cleanValue(a)) bad.push(`${name} arg ${i}: ${typeof a === 'symbol' ? 'Symbol' : String(a)}`);
    });
  }
  return bad;
}

/** A log of fake C calls: [function name, arguments]. */
export type CallLog = [string, unknown[]][];

/**
 * Runs `call` on each value; returns the lines that break the rules: a wrong error, a value `expect`
 * says must be refused accepted, a refusal after `isWork` calls were made, a bad value reaching C.
 */
export function sweep(
  where: string,
  values: readonly (readonly [string, unknown])[],
  call: (v: unknown) => unknown,
  expect: 'refused' | 'either',
  calls: CallLog,
  isWork: (name: string) => boolean,
): string[] {
  const bad: string[] = [];
  for (const [label, v] of values) {
    calls.length = 0;
    const got = outcome(where, () => call(v));
    if (got !== 'ok' && got !== 'refused') bad.push(`${label}: ${got}`);
    else if (expect === 'refused' && got === 'ok') bad.push(`${label}: accepted`);
    else if (got === 'refused' && calls.some(([n]) => isWork(n))) bad.push(`${label}: refused after the library was called`);
    const dirty = dirtyCalls(calls);
    if (dirty.length > 0) bad.push(`${label}: ${dirty.join('; ')}`);
  }
  return bad;
}

/** The keys of `o` that a hostile assignment of `values` changed (TypeScript's readonly is erased: each must refuse). */
export function writableFields(o: object, values: Record<string, unknown>): string[] {
  const changed: string[] = [];
  for (const [k, v] of Object.entries(values)) {
    const before = (o as Record<string, unknown>)[k];
    try {
      (o as Record<string, unknown>)[k] = v;
    } catch {
      // refused: what the calls check stays what C was given
    }
    if ((o as Record<string, unknown>)[k] !== before) changed.push(k);
  }
  return changed;
}
