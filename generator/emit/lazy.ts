// Lazy layers: the typed (`index.ts`) and raw (`raw.ts`) entries keep every export name and its
// TSDoc while the implementations live in chunk files per API family (`typed/<Chunk>.ts`,
// `raw-layer/<Chunk>.ts`), required on the first call of one of their functions:
//
//   lazyFunctions(module.exports, CHUNKS, (chunk) => { switch (chunk) { case 'Mem': return require('./typed/Mem'); … } });
//   /** TSDoc */
//   export declare const cuMemAlloc: typeof Mem.cuMemAlloc;
//
// The declarations emit no JavaScript; lazyFunctions defines a small stub per name, and the first
// call of any stub of a chunk requires the chunk and replaces every export of it on the module
// (`driver.cuMemAlloc(...)` then reaches the implementation directly). A caller holding a stub (a
// destructured import, the ESM wrapper) pays one small extra call. Measured (bench/import.ts):
// one top-level statement per export (`exports.x = …`, a stub function each) costs ~10 µs to
// compile and run, so a module of 450 functions would spend ~5 ms on its stubs alone; a table
// string read by one loop costs a fraction of that.
import { supportSpecifier } from '../support-path';
import { CHUNK_TABLE_HEADER, writeChunkTable } from '../../support/tables/chunks';
import { Writer } from './writer';

/** Chunks with fewer functions are merged with their alphabetical neighbours. */
export const CHUNK_MIN = 8;
/** Families with more functions are split by their next word. */
export const CHUNK_MAX = 48;

const WORD = /^(?:[A-Z]+(?![a-z])|[A-Z][a-z]*)[0-9]*/;

/** The camel-case words of a function name after its module prefix (`cuMemAlloc` → Mem, Alloc). */
export function nameWords(name: string): string[] {
  let rest = name.replace(/^[a-z0-9]+/, '');
  const words: string[] = [];
  for (;;) {
    const m = WORD.exec(rest);
    if (!m) break;
    words.push(m[0]);
    rest = rest.slice(m[0].length).replace(/^[^A-Za-z]+/, '');
  }
  return words;
}

/**
 * Function name → chunk name. A family is the first word after the module prefix (cuMemAlloc → Mem,
 * cudaStreamCreate → Stream); a family over {@link CHUNK_MAX} is split by its next word
 * (nvmlDeviceGetName → DeviceGet); families under {@link CHUNK_MIN} are merged with their
 * alphabetical neighbours (`First_Last`). Deterministic: depends on the names only.
 */
export function chunkPlan(names: readonly string[]): Map<string, string> {
  const words = new Map(names.map((n) => [n, nameWords(n)]));
  const families = new Map<string, string[]>();
  const group = (members: string[], depth: number): void => {
    const byKey = new Map<string, string[]>();
    for (const n of members) {
      const w = words.get(n)!;
      const key = w.slice(0, depth).join('') || 'Other';
      byKey.set(key, [...(byKey.get(key) ?? []), n]);
    }
    for (const [key, list] of byKey) {
      const deeper = list.some((n) => words.get(n)!.length > depth);
      if (list.length > CHUNK_MAX && deeper) group(list, depth + 1);
      else families.set(key, list);
    }
  };
  group([...names], 1);
  const keys = [...families.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const out = new Map<string, string>();
  let pending: string[] = [];
  let count = 0;
  const flush = () => {
    if (!pending.length) return;
    const chunk = pending.length === 1 ? pending[0] : `${pending[0]}_${pending[pending.length - 1]}`;
    for (const k of pending) for (const n of families.get(k)!) out.set(n, chunk);
    pending = [];
    count = 0;
  };
  keys.forEach((k, i) => {
    const size = families.get(k)!.length;
    // a big family stands alone; small ones gather until the chunk is big enough
    if (size >= CHUNK_MIN) {
      if (count > 0 && count < CHUNK_MIN) {
        pending.push(k);
        count += size;
        flush();
        return;
      }
      flush();
      pending.push(k);
      flush();
      return;
    }
    pending.push(k);
    count += size;
    if (count >= CHUNK_MIN || i === keys.length - 1) flush();
  });
  flush();
  return out;
}

/** One function of an entry: its name, the chunk export it binds to, its parameters and TSDoc. */
export interface StubFn {
  name: string;
  /** The chunk's export (differs from `name` for `#define` aliases). */
  target: string;
  chunk: string;
  params: string[];
  doc: string;
}

/**
 * Writes the entry's lazy functions: one `lazyFunctions` call whose table names each chunk's
 * functions and their parameter counts (a loop defines the stubs: one top-level statement per
 * export would cost more to compile than the stubs save), a loader with one static `require` per
 * chunk, and per function a type-only declaration carrying its TSDoc.
 */
export function writeStubs(w: Writer, dir: string, fns: StubFn[]): void {
  const chunks = [...new Set(fns.map((f) => f.chunk))].sort();
  w.line(`import { lazyFunctions } from '${supportSpecifier(0)}';`);
  for (const c of chunks) w.line(`import type * as ${c} from './${dir}/${c}';`);
  w.blank();
  w.line(CHUNK_TABLE_HEADER);
  w.line(`const CHUNKS = \``);
  const table = chunks.map((c) => ({
    chunk: c,
    members: fns.filter((f) => f.chunk === c).map((f) => ({ name: f.name, target: f.target, params: f.params.length })),
  }));
  w.lines(writeChunkTable(table));
  w.line(`\`;`);
  w.block(
    `lazyFunctions(module.exports, CHUNKS, (chunk) =>`,
    () => {
      w.block(`switch (chunk)`, () => {
        for (const c of chunks) {
          w.line(`// eslint-disable-next-line @typescript-eslint/no-require-imports`);
          w.line(`case '${c}': return require('./${dir}/${c}');`);
        }
        w.line(`default: throw new Error(\`no chunk \${chunk}\`);`);
      });
    },
    ');',
  );
  w.blank();
  for (const f of fns) {
    w.line(`/** ${f.doc} */`);
    w.line(`export declare const ${f.name}: typeof ${f.chunk}.${f.target};`);
  }
}
