// Lazy module members, for the generated entries (see generator/emit/lazy.ts): a module's functions
// live in chunk files required on first use, and its enums are built on first access. Both are
// defined by one loop over a table string: a top-level statement per export costs far more to
// compile and run at import than the loop.
import type { NativeFunction } from './binder';
import { forEachChunkMember, readChunkLine } from './tables/chunks';
import { enumAliasOf, enumObjectOf, forEachEnumLine } from './tables/enums';

/** Requires a chunk of a generated entry by name (a `switch` of static `require`s). */
export type ChunkLoader = (chunk: string) => Record<string, unknown>;

/**
 * A stub taking `n` parameters that calls export `target` of chunk `chunk`, which `bind` loads.
 * Explicit parameters (no rest or spread) up to 16; the few C functions with more take a rest
 * parameter. One closure per stub (its context holds `fn`, `target`, `chunk` and `bind`).
 */
function stub(n: number, target: string, chunk: number, bind: (chunk: number) => Record<string, unknown>): NativeFunction {
  let fn: NativeFunction | undefined;
  switch (n) {
    case 0:
      return () => (fn ??= bind(chunk)[target] as NativeFunction)();
    case 1:
      return (a) => (fn ??= bind(chunk)[target] as NativeFunction)(a);
    case 2:
      return (a, b) => (fn ??= bind(chunk)[target] as NativeFunction)(a, b);
    case 3:
      return (a, b, c) => (fn ??= bind(chunk)[target] as NativeFunction)(a, b, c);
    case 4:
      return (a, b, c, d) => (fn ??= bind(chunk)[target] as NativeFunction)(a, b, c, d);
    case 5:
      return (a, b, c, d, e) => (fn ??= bind(chunk)[target] as NativeFunction)(a, b, c, d, e);
    case 6:
      return (a, b, c, d, e, f) => (fn ??= bind(chunk)[target] as NativeFunction)(a, b, c, d, e, f);
    case 7:
      return (a, b, c, d, e, f, g) => (fn ??= bind(chunk)[target] as NativeFunction)(a, b, c, d, e, f, g);
    case 8:
      return (a, b, c, d, e, f, g, h) => (fn ??= bind(chunk)[target] as NativeFunction)(a, b, c, d, e, f, g, h);
    case 9:
      return (a, b, c, d, e, f, g, h, i) => (fn ??= bind(chunk)[target] as NativeFunction)(a, b, c, d, e, f, g, h, i);
    case 10:
      return (a, b, c, d, e, f, g, h, i, j) => (fn ??= bind(chunk)[target] as NativeFunction)(a, b, c, d, e, f, g, h, i, j);
    case 11:
      return (a, b, c, d, e, f, g, h, i, j, k) => (fn ??= bind(chunk)[target] as NativeFunction)(a, b, c, d, e, f, g, h, i, j, k);
    case 12:
      return (a, b, c, d, e, f, g, h, i, j, k, l) => (fn ??= bind(chunk)[target] as NativeFunction)(a, b, c, d, e, f, g, h, i, j, k, l);
    case 13:
      return (a, b, c, d, e, f, g, h, i, j, k, l, m) => (fn ??= bind(chunk)[target] as NativeFunction)(a, b, c, d, e, f, g, h, i, j, k, l, m);
    case 14:
      return (a, b, c, d, e, f, g, h, i, j, k, l, m, o) => (fn ??= bind(chunk)[target] as NativeFunction)(a, b, c, d, e, f, g, h, i, j, k, l, m, o);
    case 15:
      return (a, b, c, d, e, f, g, h, i, j, k, l, m, o, p) => (fn ??= bind(chunk)[target] as NativeFunction)(a, b, c, d, e, f, g, h, i, j, k, l, m, o, p);
    case 16:
      return (a, b, c, d, e, f, g, h, i, j, k, l, m, o, p, q) => (fn ??= bind(chunk)[target] as NativeFunction)(a, b, c, d, e, f, g, h, i, j, k, l, m, o, p, q);
    default:
      return (...args) => (fn ??= bind(chunk)[target] as NativeFunction)(...args);
  }
}

/** The arguments every generated entry passes (its exports object and a table string), checked: these
 *  run once per module import, so the check costs nothing per call. */
function checkLazyArgs(helper: string, exports: unknown, table: unknown): void {
  if (typeof exports !== 'object' || exports === null)
    throw new TypeError(`${helper}: exports must be a module's exports object, got ${exports === null ? 'null' : typeof exports}`);
  if (typeof table !== 'string') throw new TypeError(`${helper}: table must be a table string written by the generator (see ./tables), got ${typeof table}`);
}

/**
 * Defines a generated entry's functions on `exports` as stubs, from its chunk table (see
 * ./tables/chunks). The first call of a stub requires its chunk and replaces every function of the
 * chunk on `exports` with the implementation, so later calls through the module go straight to it;
 * a caller holding a stub keeps calling through it (one extra call).
 */
export function lazyFunctions(exports: Record<string, unknown>, table: string, load: ChunkLoader): void {
  checkLazyArgs('lazyFunctions', exports, table);
  if (typeof load !== 'function') throw new TypeError(`lazyFunctions: load must be a function requiring a chunk by name, got ${typeof load}`);
  // One pass over the table, allocating only what stays: a stub per name (and its name). This runs
  // at import, in the interpreter, and what it allocates decides whether the import triggers another
  // young-generation GC; per-chunk member lists and aliases' maps are made on the first call instead,
  // from the line's offset.
  const lines: number[] = []; // chunk number → offset of its line
  const loaded: Record<string, unknown>[] = [];
  const bind = (chunk: number): Record<string, unknown> => loaded[chunk] ?? bindChunk(exports, table, lines[chunk], load, loaded, chunk);
  let current = -1;
  let aliased: Record<string, unknown> | undefined; // target → stub of the current chunk, once an alias is seen
  forEachChunkMember(table, (chunk, line, name, target, n) => {
    if (chunk !== current) {
      current = chunk;
      lines[chunk] = line;
      aliased = undefined;
    }
    if (target !== name) {
      // an alias and its target share one stub, as they share one implementation once loaded
      aliased ??= {};
      exports[name] = aliased[target] ??= (exports[target] as NativeFunction | undefined) ?? stub(n, target, chunk, bind);
    } else {
      exports[name] = (aliased?.[name] as NativeFunction | undefined) ?? stub(n, name, chunk, bind);
    }
  });
}

/** Requires chunk `chunk` (its line at `at`) and puts its functions on `exports` in place of the stubs. */
function bindChunk(
  exports: Record<string, unknown>,
  table: string,
  at: number,
  load: ChunkLoader,
  loaded: Record<string, unknown>[],
  chunk: number,
): Record<string, unknown> {
  const { chunk: file, members } = readChunkLine(table, at);
  const m = load(file);
  for (const { name, target } of members) exports[name] = m[target];
  return (loaded[chunk] = m);
}

/**
 * Defines a generated module's enums on `exports`, each built on its first access, from its enum
 * table (see ./tables/enums). An enum object is what TypeScript's `enum` makes: name → value and
 * value → name (`CUresult[0] === 'CUDA_SUCCESS'`); the declarations (`export declare enum`) carry
 * the types.
 */
export function lazyEnums(exports: Record<string, unknown>, table: string): void {
  checkLazyArgs('lazyEnums', exports, table);
  // one pass with indexOf, as lazyFunctions: a getter keeps its line's offsets, not a copy of it
  const accessor: PropertyDescriptor = { configurable: true, enumerable: true, get: undefined };
  forEachEnumLine(table, (name, sep, end) => {
    accessor.get = enumGetter(exports, table, name, sep, end);
    Object.defineProperty(exports, name, accessor);
  });
}

function enumGetter(exports: Record<string, unknown>, table: string, name: string, sep: number, end: number): (this: unknown) => unknown {
  return function (this: unknown) {
    // an alias is its enum's object: read through the module (which builds it once); the maker is
    // made here, at the first read, not one more closure per enum at import
    return settle(this, exports, name, () => {
      const alias = enumAliasOf(table, sep, end);
      return alias !== undefined ? exports[alias] : enumObjectOf(table, sep, end);
    });
  };
}

/**
 * Defines `exports[name]`, made by `make` on its first read (a generated module's `records`: built at
 * import, its hundred-odd closures were a good part of what an import allocates).
 */
export function lazyMember(exports: Record<string, unknown>, name: string, make: () => unknown): void {
  Object.defineProperty(exports, name, {
    configurable: true,
    enumerable: true,
    get(this: unknown) {
      return settle(this, exports, name, make);
    },
  });
}

/**
 * Replaces a lazy member's getter by its value, on the object it was read from. Later reads are
 * plain property reads, on this module and on an entry that re-exports it: `export *` copies the
 * getter as is onto the entry (index, raw), so the object read from, `this`, is the one to redefine
 * (redefining `exports` alone left the entry's copy calling the getter on every read, ~160 ns against
 * ~7 ns). The value is made once: a read through the entry and one through the module see one
 * object.
 */
function settle(at: unknown, exports: Record<string, unknown>, name: string, make: () => unknown): unknown {
  const own = Object.getOwnPropertyDescriptor(exports, name);
  // the module itself settled first (a read through it, or an alias): that object, not a second one
  const kept = own !== undefined && 'value' in own ? own.value : make();
  const settled = { value: kept, writable: true, configurable: true, enumerable: true };
  if (own !== undefined && !('value' in own)) Object.defineProperty(exports, name, settled);
  if (at !== null && typeof at === 'object' && at !== exports) Object.defineProperty(at, name, settled);
  return kept;
}
