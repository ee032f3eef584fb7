// Headers → IR for one module: runs clang three ways, then lowers (pure) to the IR. Also finds the
// include folders of a toolkit as users have it: a CUDA install, or NVIDIA's pip wheels.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { ModuleIR } from '../ir/schema';
import type { ModuleSpec } from '../modules';
import { lowerModule } from './ast';
import { headerDeprecations } from './deprecation';
import { headerGroups } from './groups';
import { clangAst, clangLayouts, clangMacros, GeneratorError, HeadersNotFoundError, type ClangJob } from './clang';
import { parseRecordLayouts } from './layout';
import { oldestVersions } from './proc';
import { evaluateMacro, parseMacroDefinitions } from './macros';

export interface ParseOptions {
  clang: string;
  /** Include directories searched in order (the toolkit's `include/` first, then `--include` dirs). */
  includeDirs: string[];
  cudaVersion: string;
  /** Receives one line per optional header that is missing (its declarations are left out). */
  warn?: (line: string) => void;
}

export function locateHeader(includeDirs: string[], header: string): string | undefined {
  return includeDirs.map((d) => join(d, header)).find((p) => existsSync(p));
}

export function parseModule(spec: ModuleSpec, opts: ParseOptions): ModuleIR {
  const optional = new Set(spec.optionalIncludes ?? []);
  const missingOptional: string[] = [];
  for (const h of spec.includes) {
    if (locateHeader(opts.includeDirs, h)) continue;
    if (optional.has(h)) {
      missingOptional.push(h);
      continue;
    }
    const hint = spec.includeHint ? ` (${spec.includeHint})` : '';
    throw new HeadersNotFoundError(`header ${h} for module ${spec.name} not found in ${opts.includeDirs.join(', ')}${hint}`);
  }
  if (missingOptional.length) {
    opts.warn?.(`warning: ${spec.name}: ${missingOptional.join(', ')} not found (pip wheels do not ship it): its functions are left out`);
  }
  const includes = spec.includes.filter((h) => !missingOptional.includes(h));
  const job: ClangJob = { clang: opts.clang, includeDirs: opts.includeDirs, includes, defines: spec.defines };
  // The ABI-version typedefs ride along in the AST job only: they add no macros or layouts.
  const procTables = (spec.procTables ?? []).filter((h) => locateHeader(opts.includeDirs, h));
  if (spec.procTables?.length && procTables.length === 0) {
    // Without them every function would be asked of cuGetProcAddress at the wrong ABI version.
    throw new HeadersNotFoundError(
      `module ${spec.name} needs ${spec.procTables.join(' or ')} (the per-version function typedefs), not found in ${opts.includeDirs.join(', ')}`,
    );
  }
  const ast = clangAst({ ...job, includes: [...job.includes, ...procTables] });
  const oldestProcVersions = oldestVersions(procTables.map((h) => readFileSync(locateHeader(opts.includeDirs, h)!, 'utf8')).join('\n'));
  const macros = parseMacroDefinitions(clangMacros(job));
  const ptds = spec.perThreadDefaultStream ?? [...macros.functions.keys()].some((n) => /PT(DS|SZ)$/.test(n));
  const ptdsMacros = ptds ? parseMacroDefinitions(clangMacros({ ...job, defines: [...(job.defines ?? []), 'CUDA_API_PER_THREAD_DEFAULT_STREAM'] })) : macros;
  const layouts = parseRecordLayouts(clangLayouts(job));
  const lowered = missingOptional.length ? { ...spec, includes } : spec;
  return lowerModule({
    spec: lowered,
    cudaVersion: opts.cudaVersion,
    ast,
    layouts,
    macros,
    ptdsMacros,
    groupAt: headerGroups(),
    deprecationAt: headerDeprecations(),
    oldestProcVersions,
  });
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

/** Where a toolkit's headers are, and how they were found (one line for the user). */
export interface ToolkitLayout {
  includeDirs: string[];
  found: string;
  /** Pip layouts: the folder holding NVIDIA's `*.dist-info` (component versions). */
  sitePackages?: string;
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((d) => isDir(join(dir, d)))
      .sort();
  } catch {
    return [];
  }
}

/**
 * The include folders of `--toolkit DIR`: `DIR/include` of a CUDA install, or NVIDIA's pip wheels
 * given as `site-packages`, `site-packages/nvidia` or `nvidia/cu1X`: the newest `nvidia/cu1X/include`
 * (CUDA 13 wheels) first, then every component's `nvidia/<component>/include` (cuDNN, NCCL, and the
 * per-component CUDA 12 wheels).
 */
export function toolkitLayout(dir: string): ToolkitLayout {
  let nvidia: string | undefined;
  let preferred: string | undefined;
  if (basename(dir) === 'nvidia' && isDir(dir)) nvidia = dir;
  else if (isDir(join(dir, 'nvidia')) && !isDir(join(dir, 'include'))) nvidia = join(dir, 'nvidia');
  else if (basename(dirname(dir)) === 'nvidia' && isDir(join(dir, 'include'))) {
    nvidia = dirname(dir);
    preferred = basename(dir);
  }
  if (!nvidia) {
    const include = join(dir, 'include');
    if (!isDir(include)) {
      throw new GeneratorError(`toolkit not found: ${include} does not exist (give a CUDA toolkit, or a pip site-packages, nvidia/ or nvidia/cu1X folder)`);
    }
    return { includeDirs: [include], found: `headers in ${include}` };
  }
  const withInclude = subdirs(nvidia).filter((d) => isDir(join(nvidia!, d, 'include')));
  const releases = withInclude.filter((d) => /^cu\d+$/.test(d)).sort((a, b) => Number(b.slice(2)) - Number(a.slice(2)));
  const main = preferred && /^cu\d+$/.test(preferred) ? preferred : releases[0];
  const components = withInclude.filter((d) => !/^cu\d+$/.test(d) && d !== preferred);
  const first = preferred && !/^cu\d+$/.test(preferred) ? [preferred] : main ? [main] : [];
  const chosen = [...first, ...components];
  if (chosen.length === 0) throw new GeneratorError(`toolkit not found: no nvidia/*/include folder under ${nvidia}`);
  const others = releases.filter((r) => r !== main);
  const found =
    `pip layout under ${nvidia}: include folders of ${chosen.join(', ')}` +
    (others.length ? ` (also found ${others.join(', ')}: pass --toolkit ${join(nvidia, others[0])} for it)` : '');
  return { includeDirs: chosen.map((d) => join(nvidia!, d, 'include')), found, sitePackages: dirname(nvidia) };
}

/** Pip distributions whose version is a CUDA release (the wheel's version is the component's). */
const RELEASE_VERSIONED: Record<string, string> = {
  runtime: 'cuda_runtime',
  nvrtc: 'cuda_nvrtc',
  nvjitlink: 'nvjitlink',
  nvfatbin: 'nvfatbin',
  cupti: 'cuda_cupti',
};

/** Module → the CUDA release of its installed pip wheel (`nvidia_nvjitlink-13.4.1.dist-info` → 13.4). */
export function componentReleases(sitePackages: string): Map<string, string> {
  const byDist = new Map<string, string>();
  let entries: string[] = [];
  try {
    entries = readdirSync(sitePackages);
  } catch {
    /* none */
  }
  for (const e of entries) {
    const m = /^nvidia_(.+?)(?:_cu\d+)?-(\d+)\.(\d+)[^-]*\.dist-info$/.exec(e);
    if (m) byDist.set(m[1], `${m[2]}.${m[3]}`);
  }
  const out = new Map<string, string>();
  for (const [module, dist] of Object.entries(RELEASE_VERSIONED)) {
    const v = byDist.get(dist);
    if (v) out.set(module, v);
  }
  return out;
}
