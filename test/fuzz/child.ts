// Child process of the fuzz: runs a batch of calls in order and reports each outcome on fd 3 as one JSON
// line, written synchronously before the next call starts — so when a call kills the process, the
// parent knows which one it was (the first without a line).
//   node --import tsx test/fuzz/child.ts < batch.json      (stdin: a ChildRequest)
import { readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { CudaError } from '../../support';
import { materialise, type ArgSpec } from './values';
import { callSupport } from './support-api';

export interface ChildCall {
  id: number;
  layer: 'typed' | 'raw' | 'support';
  module: string;
  fn: string;
  args: ArgSpec[];
}

export type ChildRequest =
  | { mode: 'run'; root: string; version: string; calls: ChildCall[] }
  | { mode: 'list'; root: string; version: string; modules: string[] };

/** What one call did, as the child saw it; the parent classifies it. */
export type ChildOutcome =
  | { id: number; r: 'returned'; value: string }
  | { id: number; r: 'threw'; kind: 'TypeError' | 'RangeError' | 'CudaError' | 'Error' | 'nonError'; cls: string; msg: string };

/** Exported functions of each layer of each module, with their declared arity (`fn.length`). */
export type ChildListing = Record<string, { typed: Record<string, number>; raw: Record<string, number> }>;

const RESULTS_FD = 3;
const emit = (line: unknown): void => {
  writeSync(RESULTS_FD, `${JSON.stringify(line)}\n`);
};

function describe(v: unknown): string {
  try {
    if (typeof v === 'bigint') return `${v}n`;
    if (typeof v === 'function') return 'function';
    if (typeof v === 'symbol') return String(v);
    const s = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
    return (s ?? String(v)).slice(0, 200);
  } catch {
    return Object.prototype.toString.call(v);
  }
}

function outcomeOf(id: number, e: unknown): ChildOutcome {
  if (!(e instanceof Error)) return { id, r: 'threw', kind: 'nonError', cls: typeof e, msg: describe(e) };
  const kind = e instanceof CudaError ? 'CudaError' : e instanceof RangeError ? 'RangeError' : e instanceof TypeError ? 'TypeError' : 'Error';
  return { id, r: 'threw', kind, cls: e.constructor?.name ?? 'Error', msg: e.message.slice(0, 400) };
}

async function main(): Promise<void> {
  const request = JSON.parse(readFileSync(0, 'utf8')) as ChildRequest;
  // The generated entries define their functions at run time (lazy stubs, see generator/emit/lazy.ts),
  // which an ES import's static scan of a CommonJS module does not see, and Bun's and Deno's ES loaders
  // cannot link the sources at all: require the module (this file runs as CommonJS under every runtime).
  const load = async (module: string, layer: 'typed' | 'raw'): Promise<Record<string, unknown>> =>
    require(join(request.root, 'generated', request.version, module, layer === 'raw' ? 'raw' : 'index')) as Record<string, unknown>;

  if (request.mode === 'list') {
    const listing: ChildListing = {};
    for (const module of request.modules) {
      const arity = (exports: Record<string, unknown>): Record<string, number> =>
        Object.fromEntries(Object.entries(exports).flatMap(([k, v]) => (typeof v === 'function' ? [[k, v.length]] : [])));
      listing[module] = { typed: arity(await load(module, 'typed')), raw: arity(await load(module, 'raw')) };
    }
    emit(listing);
    return;
  }

  const modules = new Map<string, Record<string, unknown>>();
  for (const call of request.calls) {
    const key = `${call.module}/${call.layer}`;
    if (call.layer !== 'support' && !modules.has(key)) modules.set(key, await load(call.module, call.layer));
    const fn =
      call.layer === 'support'
        ? (...args: unknown[]) => callSupport(call.fn, args)
        : (modules.get(key)![call.fn] as ((...args: unknown[]) => unknown) | undefined);
    let outcome: ChildOutcome;
    try {
      if (typeof fn !== 'function') throw new Error(`fuzz child: ${call.fn} is not exported by ${key}`);
      const value = fn(...call.args.map(materialise));
      if (value instanceof Promise) value.catch(() => undefined);
      outcome = { id: call.id, r: 'returned', value: describe(value) };
    } catch (e) {
      outcome = outcomeOf(call.id, e);
    }
    emit(outcome);
  }
}

// An error escaping a call's try/catch later (a callback, a promise) ends the batch abnormally; the
// parent attributes it to the call in flight.
process.on('uncaughtException', (e) => {
  process.stderr.write(`fuzz child: uncaught ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(70);
});
process.on('unhandledRejection', (e) => {
  process.stderr.write(`fuzz child: unhandled rejection ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(70);
});

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`fuzz child: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(71);
  },
);
