// describe(): how an argument error names the value it got. A leaf (it imports nothing), so that every
// module's validation can use it without importing context.ts. checkKeys beside it, for the same reason.

/**
 * Refuses an options object's unknown keys (a misspelt option would otherwise be ignored silently); `noun` names them in
 * the message. for-in makes no key array per call (hot paths call it) and also sees inherited keys, which reads see too.
 */
export function checkKeys(where: string, o: object, keys: readonly string[], noun = 'option'): void {
  for (const k in o) if (!keys.includes(k)) throw new TypeError(`${where}: unknown ${noun} '${k}' (expected ${keys.join(', ')})`);
}

/**
 * What a non-negative integer argument of at most `max` must be, said for the value `v` it got (the message
 * reads `${where} ${integerRule(v)}, got ${describe(v)}`): 2^60 is an integer, but not one JavaScript holds exactly.
 */
export function integerRule(v: unknown, max = Number.MAX_SAFE_INTEGER): string {
  if (typeof v === 'bigint') return 'must be a number (a non-negative integer)';
  if (typeof v === 'number' && Number.isInteger(v) && v > max)
    return `must be at most ${max === Number.MAX_SAFE_INTEGER ? '2^53 - 1 (Number.MAX_SAFE_INTEGER)' : max}`;
  return 'must be a non-negative integer';
}

/** A short description of a bad argument for error messages. */
export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'object') return (v as object).constructor?.name ?? 'object';
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  if (typeof v === 'function') return 'a function';
  return `${typeof v} ${String(v)}`;
}
