// Headers → IR for one module: runs clang three ways, then lowers (pure) to the IR.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ModuleIR } from '../ir/schema';
import type { ModuleSpec } from '../modules';
import { lowerModule } from './ast';
import { clangAst, clangLayouts, clangMacros, GeneratorError, type ClangJob } from './clang';
import { parseRecordLayouts } from './layout';
import { evaluateMacro, parseMacroDefinitions } from './macros';

export interface ParseOptions {
  clang: string;
  /** Include directories searched in order (the toolkit's `include/` first, then `--include` dirs). */
  includeDirs: string[];
  cudaVersion: string;
}

export function locateHeader(includeDirs: string[], header: string): string | undefined {
  return includeDirs.map((d) => join(d, header)).find((p) => existsSync(p));
}

export function parseModule(spec: ModuleSpec, opts: ParseOptions): ModuleIR {
  for (const h of spec.includes) {
    if (!locateHeader(opts.includeDirs, h)) {
      const hint = spec.includeHint ? ` (${spec.includeHint})` : '';
      throw new GeneratorError(`header ${h} for module ${spec.name} not found in ${opts.includeDirs.join(', ')}${hint}`);
    }
  }
  const job: ClangJob = { clang: opts.clang, includeDirs: opts.includeDirs, includes: spec.includes, defines: spec.defines };
  // The ABI-version typedefs ride along in the AST job only: they add no macros or layouts.
  const procTables = (spec.procTables ?? []).filter((h) => locateHeader(opts.includeDirs, h));
  if (spec.procTables?.length && procTables.length === 0) {
    // Without them every function would be asked of cuGetProcAddress at the wrong ABI version.
    throw new GeneratorError(`module ${spec.name} needs ${spec.procTables.join(' or ')} (the per-version function typedefs), not found in ${opts.includeDirs.join(', ')}`);
  }
  const ast = clangAst({ ...job, includes: [...job.includes, ...procTables] });
  const macros = parseMacroDefinitions(clangMacros(job));
  const ptds = spec.perThreadDefaultStream ?? [...macros.functions.keys()].some((n) => /PT(DS|SZ)$/.test(n));
  const ptdsMacros = ptds
    ? parseMacroDefinitions(clangMacros({ ...job, defines: [...(job.defines ?? []), 'CUDA_API_PER_THREAD_DEFAULT_STREAM'] }))
    : macros;
  const layouts = parseRecordLayouts(clangLayouts(job));
  return lowerModule({ spec, cudaVersion: opts.cudaVersion, ast, layouts, macros, ptdsMacros });
}

/** The toolkit's release from `CUDA_VERSION` in cuda.h (13000 → "13.0"). */
export function toolkitVersion(clang: string, includeDirs: string[]): string {
  if (!locateHeader(includeDirs, 'cuda.h')) throw new GeneratorError(`cuda.h not found in ${includeDirs.join(', ')}: is --toolkit a CUDA toolkit?`);
  const table = parseMacroDefinitions(clangMacros({ clang, includeDirs, includes: ['cuda.h'] }));
  const v = evaluateMacro({ table, castKind: () => undefined }, 'CUDA_VERSION');
  if (!v || v.int === undefined) throw new GeneratorError('CUDA_VERSION not found in cuda.h');
  const n = Number(v.int);
  return `${Math.floor(n / 1000)}.${(n % 1000) / 10}`;
}
