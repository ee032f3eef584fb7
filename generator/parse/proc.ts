// cuGetProcAddress versions from `PFN_<name>_v<version>[_ptds|_ptsz]` typedefs (cudaTypedefs.h). Pure.
//
// The driver hands out the newest ABI of a name at or below the version asked. Asking for
// `cuCtxSynchronize` at 13000 yields `cuCtxSynchronize_v2(CUcontext)`, not the `(void)` function the
// header declares under that name, so each declared symbol must be asked at the version of its own ABI.
// The typedefs list every ABI of every name; we pick the one whose signature equals the declaration.
import type { CType, FunctionDecl } from '../ir/schema';

export interface ProcEntry {
  version: number;
  ptds: boolean;
  signature: string;
}

const PFN = /^PFN_(\w+?)_v(\d+)(_ptds|_ptsz)?$/;

/** A type's canonical spelling: typedef names resolved (tags kept), `const` dropped. */
export function canonicalType(t: CType, typedefs: ReadonlyMap<string, CType>, depth = 0): string {
  switch (t.kind) {
    case 'builtin':
      return t.name;
    case 'named': {
      const target = typedefs.get(t.name);
      return target && depth < 32 ? canonicalType(target, typedefs, depth + 1) : t.name;
    }
    case 'pointer':
      return `${canonicalType(t.to, typedefs, depth)}*`;
    case 'array':
      return `${canonicalType(t.of, typedefs, depth)}[${t.length}]`;
    case 'function':
      return `${canonicalType(t.returns, typedefs, depth)}(${t.params.map((p) => canonicalType(p, typedefs, depth)).join(',')}${t.variadic ? ',...' : ''})`;
  }
}

/** Base name → every ABI the typedefs list for it, oldest first. */
export function procTable(typedefs: readonly { name: string; type: CType }[], resolve: ReadonlyMap<string, CType>): Map<string, ProcEntry[]> {
  const table = new Map<string, ProcEntry[]>();
  for (const td of typedefs) {
    const m = PFN.exec(td.name);
    if (!m || td.type.kind !== 'pointer' || td.type.to.kind !== 'function') continue;
    const list = table.get(m[1]) ?? [];
    list.push({ version: Number(m[2]), ptds: !!m[3], signature: canonicalType(td.type.to, resolve) });
    table.set(m[1], list);
  }
  for (const list of table.values()) list.sort((a, b) => a.version - b.version);
  return table;
}

/** The cuGetProcAddress name and versions for one declared function, or undefined when unlisted. */
export function procFor(fn: FunctionDecl, table: ReadonlyMap<string, ProcEntry[]>, resolve: ReadonlyMap<string, CType>): FunctionDecl['proc'] {
  const signature = canonicalType({ kind: 'function', returns: fn.returns, params: fn.params.map((p) => p.type), variadic: fn.variadic }, resolve);
  const suffix = /_v(\d+)$/.exec(fn.symbol);
  const base = [fn.symbol.replace(/_v\d+$/, ''), fn.name, fn.symbol].find((b) => table.has(b));
  if (!base) return undefined;
  const all = table.get(base)!;
  const pick = (entries: ProcEntry[]): ProcEntry | undefined => {
    const matches = entries.filter((e) => e.signature === signature);
    if (matches.length <= 1) return matches[0];
    // Same signature, different semantics (cuDeviceGetUuid, cuDeviceGetUuid_v2): `_vK` is the K-th ABI.
    const k = suffix ? Number(suffix[1]) : 1;
    const kth = entries[k - 1];
    return kth && matches.includes(kth) ? kth : suffix ? matches[matches.length - 1] : matches[0];
  };
  const plain = pick(all.filter((e) => !e.ptds));
  if (!plain) return undefined;
  const ptds = pick(all.filter((e) => e.ptds));
  return { name: base, version: plain.version, ...(ptds ? { ptdsVersion: ptds.version } : {}) };
}

/**
 * Base name → the oldest version of its `PFN_<name>_v<N>` typedefs, read from the typedef header's text:
 * the header keeps the oldest ABIs behind `__CUDA_API_VERSION_INTERNAL` (`PFN_cuMemAlloc_v2000`), which
 * the AST of a normal build leaves out. Only identifiers are read.
 */
export function oldestVersions(text: string): Map<string, number> {
  const oldest = new Map<string, number>();
  for (const [id] of text.matchAll(/\bPFN_\w+/g)) {
    const m = PFN.exec(id);
    if (!m || m[3] || Number(m[2]) < 1000) continue;
    const v = Number(m[2]);
    if (!(v >= (oldest.get(m[1]) ?? Infinity))) oldest.set(m[1], v);
  }
  return oldest;
}

/**
 * The CUDA version that introduced a declared function's name: the oldest typedef version of its base
 * name when the user-facing name is the base (`cuMemAlloc`: 2000, though its ABI is 3020's), else
 * (`cuCtxSynchronize_v2`, a name of its own) the version of its own ABI. Undefined without a `proc`.
 */
export function introducedVersion(fn: FunctionDecl, oldest: ReadonlyMap<string, number>): number | undefined {
  if (!fn.proc) return undefined;
  if (fn.name !== fn.proc.name) return fn.proc.version;
  return Math.min(oldest.get(fn.proc.name) ?? fn.proc.version, fn.proc.version);
}
