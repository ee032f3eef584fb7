// `const char *const *` arrays for NVRTC/nvJitLink options: each string in its own NUL-terminated
// ArrayBuffer (off the V8 heap, never moved), their addresses in a BigUint64Array. Keep the returned
// object alive until the call returns.
import koffi from 'koffi';

export interface CStringArray {
  readonly count: number;
  /** Pass as the `const char *const *` argument (null when empty). */
  readonly pointers: BigUint64Array | null;
  /** @internal keeps the string storage alive */
  readonly storage: ArrayBuffer[];
}

export function cStringArray(strings: readonly string[]): CStringArray {
  const storage: ArrayBuffer[] = [];
  const pointers = new BigUint64Array(Math.max(1, strings.length));
  strings.forEach((s, i) => {
    if (typeof s !== 'string') throw new TypeError(`option ${i} must be a string, got ${typeof s}`);
    if (s.includes('\0')) throw new TypeError(`option ${i} contains a NUL character`);
    const bytes = Buffer.from(s, 'utf8');
    const ab = new ArrayBuffer(bytes.length + 1);
    new Uint8Array(ab).set(bytes);
    storage.push(ab);
    pointers[i] = koffi.address(ab);
  });
  return { count: strings.length, pointers: strings.length ? pointers : null, storage };
}
