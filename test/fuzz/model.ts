// What the fuzz needs to know about each typed function: its parameters in call order, each with the
// kind of JS value it accepts. The source of truth is the generator's parameter-semantics model
// (generator/semantics); where a root has none (the harness's own fixture, or an older checkout), an
// adapter derives the same shape from the IR and the generated typed layer (see adapter.ts).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Accept, TypedParam } from '../../generator/semantics';
export type { Accept, TypedParam };

/** A parameter as the fuzz uses it: the model's facts plus the record size from the IR (for neutral values). */
export interface FuzzParam extends TypedParam {
  /** Not in the model (yet): a parameter that may be left out, so `undefined` is valid. */
  optional?: boolean;
  recordSize?: number;
  /** Fields of the record (top level) to which a string is plainly wrong: numbers, enums, pointers, records, non-char arrays. */
  recordFields?: string[];
}

export interface ModuleSignatures {
  /** Where the signatures came from: the generator's model, or the temporary adapter. */
  source: 'semantics' | 'adapter';
  functions: Map<string, FuzzParam[]>;
}

/** A C type as the IR (headers/<ver>/<module>.json) writes it. */
export type CType =
  | { kind: 'builtin'; name: string; const?: boolean }
  | { kind: 'named'; name: string; const?: boolean }
  | { kind: 'pointer'; to: CType; const?: boolean }
  | { kind: 'array'; of: CType; length: number }
  | { kind: 'function'; returns: CType; params: CType[] };

export interface IRFunction {
  name: string;
  symbol: string;
  params: { name: string; type: CType }[];
}

export interface ModuleIR {
  functions: IRFunction[];
  enums: { name: string; size: number; signed: boolean }[];
  records: { name: string; size: number; fields?: { name: string; type: CType }[] }[];
  typedefs: { name: string; type: CType }[];
  opaque: string[];
}

export function readIR(root: string, version: string, module: string): ModuleIR {
  return JSON.parse(readFileSync(join(root, 'headers', version, `${module}.json`), 'utf8')) as ModuleIR;
}

const SEMANTICS = 'generator/semantics/index.ts';

/** Whether the generator's parameter-semantics model is present in this checkout. */
export function semanticsAvailable(root: string): boolean {
  return existsSync(join(root, SEMANTICS));
}

/**
 * The typed parameters of every function of one module: from generator/semantics when present
 * (FUZZ_SIGNATURES=adapter forces the temporary adapter), each param given its record size from the IR.
 */
export function loadSignatures(root: string, version: string, module: string): ModuleSignatures {
  const ir = readIR(root, version, module);
  const recordOf = recordLookup(ir);
  let source: ModuleSignatures['source'];
  let raw: Map<string, TypedParam[]>;
  if (process.env.FUZZ_SIGNATURES !== 'adapter' && semanticsAvailable(root)) {
    const semantics = require(join(root, SEMANTICS)) as { typedSignatures(root: string, version: string, module: string): Map<string, TypedParam[]> };
    raw = semantics.typedSignatures(root, version, module);
    source = 'semantics';
  } else {
    const { adapterSignatures } = require('./adapter') as typeof import('./adapter');
    raw = adapterSignatures(root, version, module, ir);
    source = 'adapter';
  }
  const byName = new Map(ir.functions.map((f) => [f.name, f]));
  const functions = new Map<string, FuzzParam[]>();
  for (const [name, params] of raw) {
    const cfn = byName.get(name);
    functions.set(
      name,
      params.map((p) => {
        if (p.accepts !== 'record') return { ...p };
        const ctype = cfn?.params.find((q) => q.name === p.name)?.type;
        const record = ctype ? recordOf(ctype) : undefined;
        return { ...p, recordSize: record?.size, recordFields: record?.stringIsWrong };
      }),
    );
  }
  return { source, functions };
}

/** The record a C type is or points to (through typedefs): its size and the fields a string cannot fill. */
function recordLookup(ir: ModuleIR): (t: CType) => { size: number; stringIsWrong: string[] } | undefined {
  const typedefs = new Map(ir.typedefs.map((t) => [t.name, t.type]));
  const records = new Map(ir.records.map((r) => [r.name, r]));
  const isChar = (t: CType): boolean => {
    for (let depth = 0; depth < 10; depth++) {
      if (t.kind === 'builtin') return /char$/.test(t.name);
      if (t.kind !== 'named' || !typedefs.has(t.name)) return false;
      t = typedefs.get(t.name)!;
    }
    return false;
  };
  const find = (t: CType, depth: number): { size: number; stringIsWrong: string[] } | undefined => {
    if (depth > 8) return undefined;
    if (t.kind === 'pointer') return depth === 0 ? find(t.to, 1) : undefined;
    if (t.kind !== 'named') return undefined;
    const r = records.get(t.name);
    if (r) return { size: r.size, stringIsWrong: (r.fields ?? []).filter((f) => f.name && !(f.type.kind === 'array' && isChar(f.type.of))).map((f) => f.name) };
    const td = typedefs.get(t.name);
    return td ? find(td, depth === 0 ? 0 : depth + 1) : undefined;
  };
  return (t) => find(t, 0);
}
