// The errors every argument check throws, and the small tests they share (the lowest leaf of the checks:
// ./validate and the record checks build on it). Messages name the function and the parameter.
/** What a rejected value was, in a few words (never the whole value). */
export function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'string') return v.length > 40 ? `a string of ${v.length} characters` : JSON.stringify(v);
  if (typeof v === 'function') return 'a function';
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (ArrayBuffer.isView(v)) return `a ${v.constructor.name} of ${v.byteLength} bytes`;
  if (v instanceof ArrayBuffer) return `an ArrayBuffer of ${v.byteLength} bytes`;
  const name = (v as object).constructor?.name;
  return name && name !== 'Object' ? `a ${name}` : 'an object';
}

/** A TypeError (wrong JS type) or RangeError (right type, out of range) naming function and parameter. */
export function argError(fn: string, param: string, expected: string, got: unknown): TypeError | RangeError {
  if (typeof fn !== 'string' || typeof param !== 'string' || typeof expected !== 'string') throw namesError('argError', fn, param, expected);
  return makeArgError(fn, param, expected, got);
}

export function makeArgError(fn: string, param: string, expected: string, got: unknown): TypeError | RangeError {
  const message = `${fn}: ${param} must be ${expected}, got ${describeValue(got)}`;
  const rangeLike = typeof got === 'number' || typeof got === 'bigint';
  return rangeLike ? new RangeError(message) : new TypeError(message);
}

/** The TypeError for a helper given a non-string where it takes the names its errors carry. */
export function namesError(helper: string, fn: unknown, param: unknown, third?: unknown): TypeError {
  const [name, v] = typeof fn !== 'string' ? ['fn', fn] : typeof param !== 'string' ? ['param', param] : ['expected', third];
  return new TypeError(`${helper}: ${name} must be a string (it names the call in errors), got ${describeValue(v)}`);
}

/** The TypeError for a helper given a non-boolean `nullable` (a truthy string would let null through). */
export function flagError(helper: string, name: string, v: unknown): TypeError {
  return new TypeError(`${helper}: ${name} must be a boolean, got ${describeValue(v)}`);
}

/** Throws unless `fn` and `param` are strings and `nullable` a boolean: what every argument helper takes from its caller. */
export function checkCaller(helper: string, fn: unknown, param: unknown, flag: unknown, flagName = 'nullable'): void {
  if (typeof fn !== 'string' || typeof param !== 'string') throw namesError(helper, fn, param);
  if (typeof flag !== 'boolean') throw flagError(helper, flagName, flag);
}

export const INT_TEXT: Record<string, string> = {
  i8: 'an integer in [-128, 127]',
  u8: 'an integer in [0, 255]',
  i16: 'an integer in [-32768, 32767]',
  u16: 'an integer in [0, 65535]',
  i32: 'an integer in [-2**31, 2**31)',
  u32: 'an integer in [0, 2**32)',
  i64: 'a safe integer or a bigint in [-2**63, 2**63)',
  u64: 'a non-negative safe integer or a bigint below 2**64',
};

/** Throws for a value that is not an integer of the C type (`i32`, `u64`, …). */
export function intError(fn: string, param: string, ctype: string, got: unknown): TypeError | RangeError {
  if (typeof fn !== 'string' || typeof param !== 'string') throw namesError('intError', fn, param);
  if (typeof ctype !== 'string' || !Object.prototype.hasOwnProperty.call(INT_TEXT, ctype))
    throw makeArgError('intError', 'ctype', `one of ${Object.keys(INT_TEXT).join(', ')}`, ctype);
  return makeArgError(fn, param, INT_TEXT[ctype], got);
}

/** A safe integer, or a bigint, within the range of a 64-bit C integer. */
export function isInt64(v: unknown, signed: boolean): boolean {
  if (typeof v === 'number') return Number.isSafeInteger(v) && (signed || v >= 0);
  return typeof v === 'bigint' && (signed ? v >= -(1n << 63n) && v < 1n << 63n : v >= 0n && v < 1n << 64n);
}

/** An address as JS holds one: a non-negative safe integer, or a bigint below 2**64. */
export function isAddress(v: unknown): v is number | bigint {
  return isInt64(v, false);
}
