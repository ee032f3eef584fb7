// cuda-ts-gen: CUDA headers → IR (headers/<ver>/<module>.json) → bindings (generated/<ver>/<module>/).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { emitModule } from './emit';
import type { ModuleIR } from './ir/schema';
import { compareVersions, readIR, serializeIR, storedReleases, writeIR, irPath } from './ir/store';
import { findModule, MODULES, type ModuleSpec } from './modules';
import { GeneratorError, findClang } from './parse/clang';
import { parseModule, toolkitVersion } from './parse';

export interface CliOptions {
  toolkit?: string;
  out: string;
  modules?: string[];
  include: string[];
  check: boolean;
  fromIr: boolean;
  list: boolean;
  help: boolean;
}

const USAGE = `usage: cuda-ts-gen --toolkit DIR [--out DIR] [--modules a,b] [--include DIR]... [--check] [--list]
  --toolkit DIR   CUDA toolkit (headers under DIR/include); omitted with --check: re-emit from stored IR
  --out DIR       project root holding headers/ and generated/ (default: current directory)
  --modules a,b   modules to process (default: all whose headers are found; see --list)
  --include DIR   extra include directory, repeatable (cuDNN, NCCL live outside the toolkit)
  --check         compare instead of writing; exit 1 when anything is stale
  --from-ir       without --toolkit: re-emit generated/ from the stored IR (no clang)
  --list          list the modules of the catalog`;

export function parseArgs(argv: string[]): CliOptions {
  const o: CliOptions = { out: process.cwd(), include: [], check: false, fromIr: false, list: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new GeneratorError(`${a} needs a value`);
      return v;
    };
    if (a === '--toolkit') o.toolkit = value();
    else if (a === '--out') o.out = value();
    else if (a === '--modules') o.modules = value().split(',').map((s) => s.trim()).filter(Boolean);
    else if (a === '--include') o.include.push(value());
    else if (a === '--check') o.check = true;
    else if (a === '--from-ir') o.fromIr = true;
    else if (a === '--list') o.list = true;
    else if (a === '-h' || a === '--help') o.help = true;
    else throw new GeneratorError(`unknown argument ${a}\n${USAGE}`);
  }
  return o;
}

function selectModules(names: string[] | undefined): ModuleSpec[] {
  if (!names) return [...MODULES];
  return names.map((n) => {
    const m = findModule(n);
    if (!m) throw new GeneratorError(`unknown module "${n}" (known: ${MODULES.map((x) => x.name).join(', ')})`);
    return m;
  });
}

/** For each function of `ir`, the oldest stored release declaring it, when older releases exist. */
export function sinceMap(root: string, ir: ModuleIR, override?: ModuleIR): Map<string, string> {
  const releases = storedReleases(root).filter((r) => compareVersions(r, ir.cudaVersion) < 0 && existsSync(irPath(root, r, ir.module)));
  const since = new Map<string, string>();
  if (releases.length === 0) return since;
  const older = releases.map((r) => (override && override.cudaVersion === r ? override : readIR(root, r, ir.module)));
  for (const fn of ir.functions) {
    const first = older.find((o) => o.functions.some((f) => f.name === fn.name));
    since.set(fn.name, first ? first.cudaVersion : ir.cudaVersion);
  }
  // only the functions newer than the oldest release carry a "since"
  for (const [k, v] of since) if (v === releases[0]) since.delete(k);
  return since;
}

function filesOf(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  if (!existsSync(dir)) return out;
  for (const f of readdirSync(dir)) if (f.endsWith('.ts')) out.set(f, readFileSync(join(dir, f), 'utf8'));
  return out;
}

export function run(argv: string[], log: (s: string) => void = console.log): number {
  const o = parseArgs(argv);
  if (o.help) {
    log(USAGE);
    return 0;
  }
  if (o.list) {
    for (const m of MODULES) log(`${m.name.padEnd(10)} ${m.title} — ${m.includes.join(', ')} — ${Object.values(m.sonames).flat().join(', ')}`);
    return 0;
  }
  const root = resolve(o.out);
  const stale: string[] = [];

  if (!o.toolkit) {
    if (!o.check && !o.fromIr) throw new GeneratorError(`--toolkit is required (only --check and --from-ir run from the stored IR)\n${USAGE}`);
    // Re-emit every stored IR and compare with generated/: no clang needed.
    const specs = selectModules(o.modules);
    for (const release of storedReleases(root)) {
      for (const spec of specs) {
        if (!existsSync(irPath(root, release, spec.name))) continue;
        const t0 = Date.now();
        const ir = readIR(root, release, spec.name);
        const files = emitModule(ir, spec, sinceMap(root, ir));
        const dir = join(root, 'generated', release, spec.name);
        if (!o.check) {
          rmSync(dir, { recursive: true, force: true });
          mkdirSync(dir, { recursive: true });
          for (const [name, text] of files) writeFileSync(join(dir, name), text);
          log(`${release} ${spec.name.padEnd(9)} ${String(ir.functions.length).padStart(4)} functions re-emitted (${Date.now() - t0} ms)`);
          continue;
        }
        const diff = compareFiles(files, filesOf(dir));
        if (diff) stale.push(`generated/${release}/${spec.name}: ${diff}`);
        log(`${release} ${spec.name.padEnd(9)} ${String(ir.functions.length).padStart(4)} functions ${diff ? 'STALE' : 'ok'} (${Date.now() - t0} ms)`);
      }
    }
    return finish(stale, log);
  }

  const toolkit = resolve(o.toolkit);
  const toolkitInclude = join(toolkit, 'include');
  if (!existsSync(toolkitInclude)) throw new GeneratorError(`toolkit not found: ${toolkitInclude} does not exist`);
  const includeDirs = [toolkitInclude, ...o.include.map((d) => resolve(d))];
  const clang = findClang();
  const cudaVersion = toolkitVersion(clang, includeDirs);
  const specs = selectModules(o.modules);
  const explicit = !!o.modules;
  for (const spec of specs) {
    const t0 = Date.now();
    let ir: ModuleIR;
    try {
      ir = parseModule(spec, { clang, includeDirs, cudaVersion });
    } catch (e) {
      if (!explicit && e instanceof GeneratorError && /not found in/.test(e.message)) {
        log(`${cudaVersion} ${spec.name.padEnd(9)} skipped: ${e.message}`);
        continue;
      }
      throw e;
    }
    const files = emitModule(ir, spec, sinceMap(root, ir));
    const dir = join(root, 'generated', cudaVersion, spec.name);
    const ms = Date.now() - t0;
    const counts = `${String(ir.functions.length).padStart(4)} functions, ${ir.records.length + ir.enums.length + ir.typedefs.length} types`;
    if (o.check) {
      const path = irPath(root, cudaVersion, spec.name);
      const irStale = !existsSync(path) || readFileSync(path, 'utf8') !== serializeIR(ir) ? 'IR differs from the headers' : '';
      const diff = compareFiles(files, filesOf(dir));
      if (irStale) stale.push(`headers/${cudaVersion}/${spec.name}.json: ${irStale}`);
      if (diff) stale.push(`generated/${cudaVersion}/${spec.name}: ${diff}`);
      log(`${cudaVersion} ${spec.name.padEnd(9)} ${counts} ${irStale || diff ? 'STALE' : 'ok'} (${ms} ms)`);
    } else {
      writeIR(root, ir);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      for (const [name, text] of files) writeFileSync(join(dir, name), text);
      log(`${cudaVersion} ${spec.name.padEnd(9)} ${counts} (${ms} ms)`);
    }
  }
  return finish(stale, log);
}

function compareFiles(expected: Map<string, string>, actual: Map<string, string>): string {
  for (const [name, text] of expected) {
    if (!actual.has(name)) return `${name} missing`;
    if (actual.get(name) !== text) return `${name} differs`;
  }
  for (const name of actual.keys()) if (!expected.has(name)) return `${name} is not generated`;
  return '';
}

function finish(stale: string[], log: (s: string) => void): number {
  if (stale.length) {
    log(`stale: ${stale.join('; ')} — run cuda-ts-gen --toolkit <dir> to regenerate`);
    return 1;
  }
  return 0;
}

export function main(argv = process.argv.slice(2)): void {
  try {
    process.exitCode = run(argv);
  } catch (e) {
    const msg = e instanceof GeneratorError ? e.message : (e as Error).stack ?? String(e);
    console.error(`cuda-ts-gen: ${msg}`);
    process.exitCode = 2;
  }
}

if (require.main === module) main();
