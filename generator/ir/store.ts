// Reads and writes `headers/<cuda-version>/<module>.json`, validating both ways: the schema (zod) and
// what the emitter relies on (unique names, every named type defined), so an IR that would emit code
// that does not compile is refused at load, naming the file and the entry in one line.
import { mkdirSync, readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ModuleIRSchema, type CType, type ModuleIR } from './schema';

/** An IR file that cannot be used; the message names the file and the entry, on one line. */
export class IRError extends Error {}

export function irPath(root: string, cudaVersion: string, module: string): string {
  return join(root, 'headers', cudaVersion, `${module}.json`);
}

/** Stable text: validated, two-space indented, trailing newline. */
export function serializeIR(ir: ModuleIR): string {
  return JSON.stringify(ModuleIRSchema.parse(ir), null, 1) + '\n';
}

/** Names the entry at a zod path: `functions[3] (cuMemAlloc).params`. */
function describePath(data: unknown, path: readonly PropertyKey[]): string {
  let node: unknown = data;
  let out = '';
  for (const key of path) {
    node = node !== null && typeof node === 'object' ? (node as Record<PropertyKey, unknown>)[key] : undefined;
    const name = node !== null && typeof node === 'object' && typeof (node as { name?: unknown }).name === 'string' ? (node as { name: string }).name : '';
    out += typeof key === 'number' ? `[${key}]${name ? ` (${name})` : ''}` : `${out ? '.' : ''}${String(key)}`;
  }
  return out || '(top level)';
}

export function parseIR(text: string, where = 'IR'): ModuleIR {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new IRError(`${where}: not valid JSON (${(e as Error).message.split('\n')[0]})`);
  }
  const result = ModuleIRSchema.safeParse(data);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new IRError(`${where}: invalid IR at ${describePath(data, issue.path)}: ${issue.message}`);
  }
  checkEmittable(result.data, where);
  return result.data;
}

/** The emitter's preconditions: unique names per kind, every named C type defined, no anonymous keys. */
export function checkEmittable(ir: ModuleIR, where = 'IR'): void {
  const fail = (entry: string, why: string): never => {
    throw new IRError(`${where}: ${entry}: ${why}`);
  };
  const unique = (kind: string, names: string[]) => {
    const seen = new Set<string>();
    names.forEach((n, i) => {
      if (seen.has(n)) fail(`${kind}[${i}] (${n})`, `duplicate ${kind.replace(/s$/, '')} name`);
      seen.add(n);
    });
  };
  unique(
    'functions',
    ir.functions.map((f) => f.name),
  );
  unique(
    'enums',
    ir.enums.map((e) => e.name),
  );
  unique(
    'records',
    ir.records.map((r) => r.name),
  );
  unique(
    'typedefs',
    ir.typedefs.map((t) => t.name),
  );
  unique(
    'constants',
    ir.constants.map((c) => c.name),
  );
  const typedefs = new Set(ir.typedefs.map((t) => t.name));
  const known = (name: string) => name === 'size_t' || typedefs.has(name) || /^(struct|union|enum) [A-Za-z_]\w*$/.test(name);
  const check = (t: CType, entry: string): void => {
    switch (t.kind) {
      case 'named':
        if (!known(t.name)) fail(entry, `unknown C type "${t.name}"`);
        return;
      case 'pointer':
        return check(t.to, entry);
      case 'array':
        return check(t.of, entry);
      case 'function':
        check(t.returns, entry);
        for (const p of t.params) check(p, entry);
        return;
      case 'builtin':
        return;
    }
  };
  ir.functions.forEach((f, i) => {
    check(f.returns, `functions[${i}] (${f.name}) result`);
    f.params.forEach((p, k) => check(p.type, `functions[${i}] (${f.name}) parameter ${k} (${p.name})`));
  });
  ir.records.forEach((r, i) => r.fields.forEach((f) => check(f.type, `records[${i}] (${r.name}) field ${f.name}`)));
  ir.typedefs.forEach((t, i) => check(t.type, `typedefs[${i}] (${t.name})`));
  for (const name of ir.opaque) if (!typedefs.has(name)) fail(`opaque (${name})`, 'handle type without its typedef');
  const fns = new Set(ir.functions.map((f) => f.name));
  for (const [alias, target] of Object.entries(ir.aliases)) {
    if (!fns.has(target)) fail(`aliases.${alias}`, `aliases "${target}", which is not a function of this module`);
    if (fns.has(alias)) fail(`aliases.${alias}`, 'is also the name of a function');
  }
}

export function writeIR(root: string, ir: ModuleIR): string {
  const path = irPath(root, ir.cudaVersion, ir.module);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, serializeIR(ir));
  return path;
}

export function readIR(root: string, cudaVersion: string, module: string): ModuleIR {
  const path = irPath(root, cudaVersion, module);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new IRError(`${path}: cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return parseIR(text, path);
}

/** Releases with stored IR, oldest first ("12.6", "13.0"). */
export function storedReleases(root: string): string[] {
  const dir = join(root, 'headers');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((d) => /^\d+\.\d+$/.test(d))
    .sort(compareVersions);
}

export function compareVersions(a: string, b: string): number {
  const [am, an] = a.split('.').map(Number);
  const [bm, bn] = b.split('.').map(Number);
  return am - bm || an - bn;
}
