// Typed signatures derived from the IR and the generated typed layer's declarations, where a root has
// no generator/semantics (the harness's fixture; checkouts from before the model, to compare). The
// parameter list comes from each `export function` line of generated/<ver>/<module>/index.ts; each
// parameter's kind from its C type (through typedefs) and, for pointers, the TypeScript type emitted.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CType, FuzzParam, ModuleIR } from './model';

const INTS: Record<string, [number, boolean]> = {
  char: [8, true],
  'signed char': [8, true],
  'unsigned char': [8, false],
  short: [16, true],
  'unsigned short': [16, false],
  int: [32, true],
  'unsigned int': [32, false],
  long: [64, true],
  'unsigned long': [64, false],
  'long long': [64, true],
  'unsigned long long': [64, false],
  _Float16: [16, false],
};

const DEVICE_POINTERS = new Set(['CUdeviceptr', 'CUdeviceptr_v2']);

/** Splits a parameter list at its top-level commas. */
function splitParams(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of list) {
    if ('<({['.includes(ch)) depth++;
    if ('>)}]'.includes(ch)) depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

export function adapterSignatures(root: string, version: string, module: string, ir: ModuleIR): Map<string, FuzzParam[]> {
  const typedefs = new Map(ir.typedefs.map((t) => [t.name, t.type]));
  const enums = new Map(ir.enums.map((e) => [e.name, e]));
  const records = new Set(ir.records.map((r) => r.name));
  const opaque = new Set(ir.opaque);
  const cFunctions = new Map(ir.functions.map((f) => [f.name, f]));

  const classify = (t: CType, ts: string, optional: boolean): Omit<FuzzParam, 'name'> => {
    switch (t.kind) {
      case 'builtin': {
        if (t.name === 'float' || t.name === 'double') return { accepts: 'float', nullable: false };
        if (t.name === '_Bool' || t.name === 'bool') return { accepts: 'bool', nullable: false };
        const [bits, signed] = INTS[t.name] ?? [32, true];
        return { accepts: 'int', bits, signed, nullable: false };
      }
      case 'named': {
        if (DEVICE_POINTERS.has(t.name)) return { accepts: 'deviceptr', nullable: false };
        if (opaque.has(t.name)) return { accepts: 'handle', nullable: false };
        if (t.name === 'size_t') return { accepts: 'int', bits: 64, signed: false, nullable: false };
        const e = enums.get(t.name);
        if (e) return { accepts: 'enum', bits: e.size * 8, signed: e.signed, nullable: false };
        if (t.name.startsWith('enum ')) return { accepts: 'enum', bits: 32, signed: true, nullable: false };
        if (records.has(t.name)) return { accepts: 'record', nullable: false };
        const td = typedefs.get(t.name);
        if (td) return classify(td, ts, optional);
        return { accepts: 'pointer', nullable: true };
      }
      case 'pointer': {
        const nullable = /\bnull\b|Pointer/.test(ts) || optional;
        if (/JsCallback/.test(ts)) return { accepts: 'callback', nullable: true };
        if (/\bstring\b/.test(ts)) return { accepts: 'string', nullable };
        if (/^Uint8Array\b/.test(ts)) return { accepts: 'buffer', nullable };
        if (/^T\.\w+ \| T\.Pointer$/.test(ts)) return { accepts: 'record', nullable: true };
        return { accepts: 'pointer', nullable: true };
      }
      default:
        return { accepts: 'pointer', nullable: true };
    }
  };

  const source = readFileSync(join(root, 'generated', version, module, 'index.ts'), 'utf8');
  const out = new Map<string, FuzzParam[]>();
  for (const m of source.matchAll(/^export function (\w+)\((.*)\): .* \{$/gm)) {
    const cfn = cFunctions.get(m[1]);
    if (!cfn) continue; // helpers, not C functions
    const params: FuzzParam[] = [];
    for (const decl of splitParams(m[2])) {
      const pm = /^(\w+)(\??): (.*)$/.exec(decl);
      if (!pm) throw new Error(`adapter: cannot read parameter "${decl}" of ${m[1]}`);
      const [, ident, q, ts] = pm;
      const cname = ident.replace(/_$/, '');
      const cparam = cfn.params.find((p) => p.name === ident || p.name === cname);
      if (!cparam) throw new Error(`adapter: ${m[1]}(${ident}) has no C parameter of that name`);
      params.push({ name: ident, ...classify(cparam.type, ts, q === '?'), ...(q === '?' ? { optional: true } : {}) });
    }
    out.set(m[1], params);
  }
  return out;
}
