// cuda-ts-gen: CUDA headers → IR (headers/<ver>/<module>.json) → bindings (generated/<ver>/<module>/).
import { fork } from 'node:child_process';
import { SUPPORT_DIR, SUPPORT_PACKAGE, supportSpecifier } from './support-path';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { emitModule } from './emit';
import type { ModuleIR } from './ir/schema';
import { compareVersions, IRError, irPath, readIR, serializeIR, storedReleases, writeIR } from './ir/store';
import { findModule, librariesFor, MODULES, RELEASES, SINCE_BASELINE, specForRelease, type ModuleSpec } from './modules';
import { GeneratorError, HeadersNotFoundError, clangAst, findClang } from './parse/clang';
import { componentReleases, locateHeader, parseModule, toolkitLayout, toolkitVersion } from './parse';
import { docFactsFor } from './emit/docs-history';
import { versionString } from '../support/versions';
import { detachedCommentSource, headerDocs, type HeaderDoc } from './emit/docs-header';

export interface CliOptions {
  toolkit?: string;
  out: string;
  modules?: string[];
  include: string[];
  check: boolean;
  fromIr: boolean;
  list: boolean;
  help: boolean;
  /** Worker processes for a --toolkit run (default: one per CPU); 1 runs in this process. */
  jobs?: number;
  /** Carry the headers' own documentation into the TSDoc (a --toolkit run outside a cuda-ts checkout). */
  docs: boolean;
}

export { SUPPORT_PACKAGE };
/** How generated code inside this repository reaches the support code (generated/<ver>/<module>/*.ts). */
const IN_REPO_SUPPORT = supportSpecifier(0);

const USAGE = `usage: cuda-ts-gen --toolkit DIR [--out DIR] [--modules a,b] [--include DIR]... [--jobs N] [--check]
       cuda-ts-gen --check | --from-ir [--out DIR] [--modules a,b]
       cuda-ts-gen --list | --help

  --toolkit DIR   the CUDA headers: a toolkit (DIR/include), or NVIDIA's pip wheels given as a
                  site-packages, site-packages/nvidia or nvidia/cu1X folder (the newest cu1X/include
                  and every nvidia/<component>/include are used; the run says what it found).
                  The release is CUDA_VERSION of its cuda.h; outputs go to headers/<release>/ and
                  generated/<release>/. Omitted: --check or --from-ir work from the stored IR.
  --out DIR       root holding headers/ and generated/ (default: the current directory). A root
                  without ${SUPPORT_DIR}/ (not a cuda-ts checkout) gets code importing the support
                  package by its name (${SUPPORT_PACKAGE}) plus a package.json and tsconfig.json
                  when absent. Use it from inside your project, which has cuda-ts installed:
                    npm i cuda-ts && npm i -D @cuda-ts/gen
                    npx cuda-ts-gen --toolkit /usr/local/cuda --out cuda-bindings --modules driver
                    import { cuInit } from './cuda-bindings/generated/13.0/driver';
                  The tree uses the project's ${SUPPORT_PACKAGE} (one CudaError class for cuda-ts
                  and the tree). Do not run npm install inside it: a copy of its own would make
                  instanceof CudaError false. The run ends with a line saying which copy it uses.
  --modules a,b   modules to process (default: all whose headers are found; see --list). A module
                  named here whose headers are missing is a failure, not a skip.
  --include DIR   extra include directory, repeatable (cuDNN, NCCL live outside the toolkit)
  --jobs N        worker processes for a --toolkit run (default: the number of CPUs)
  --docs          also carry the headers' own documentation (brief, details, parameters, returns,
                  notes, see-also, deprecation) into the TSDoc of the tree written. NVIDIA's text: for
                  your own tree only, so refused when --out is a cuda-ts checkout; off by default
  --check         compare instead of writing; exit 1 when anything is stale, 2 when there is
                  nothing to compare (no stored IR, no module found)
  --from-ir       without --toolkit: re-emit generated/ from the stored IR (no clang)
  --list          list the modules of the catalog with their library names per release
  -h, --help      this text

Each module prints one line with its time. A module that fails prints one line and the others still
run; the exit status is then 1. Optional headers (the profiler's, absent from pip wheels) leave out
only their functions, with one warning line. Invalid IR (bad JSON, schema, duplicate names, unknown
types) is refused at load with the file and entry named. Exit status: 0 ok, 1 stale or a module
failed, 2 bad usage or input.`;

export function parseArgs(argv: string[]): CliOptions {
  const o: CliOptions = { out: process.cwd(), include: [], check: false, fromIr: false, list: false, help: false, docs: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new GeneratorError(`${a} needs a value`);
      return v;
    };
    if (a === '--toolkit') o.toolkit = value();
    else if (a === '--out') o.out = value();
    else if (a === '--modules')
      o.modules = value()
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    else if (a === '--include') o.include.push(value());
    else if (a === '--jobs') {
      const v = value();
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1) throw new GeneratorError(`--jobs needs a whole number ≥ 1, not "${v}"`);
      o.jobs = n;
    } else if (a === '--check') o.check = true;
    else if (a === '--docs') o.docs = true;
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

/** The generator's own package.json names: a cuda-ts checkout, or the installed @cuda-ts/gen. */
const GENERATOR_PACKAGES = ['cuda-ts', '@cuda-ts/gen'];

/** The folder and package.json of the package this file belongs to (a cuda-ts checkout or build, or the
 *  installed @cuda-ts/gen), found by name: the build's dist/ holds a package.json of its own (only
 *  `"type"`), which must not be taken for it. */
export function generatorPackage(from = __dirname): { dir: string; name: string; version: string; devDependencies?: Record<string, string> } {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    const pkg = existsSync(file)
      ? (JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string; devDependencies?: Record<string, string> })
      : undefined;
    if (pkg?.name && GENERATOR_PACKAGES.includes(pkg.name) && pkg.version)
      return { dir, name: pkg.name, version: pkg.version, devDependencies: pkg.devDependencies };
    if (dirname(dir) === dir)
      throw new GeneratorError(`no package.json of ${GENERATOR_PACKAGES.join(' or ')} above ${from}: the generator is installed incompletely`);
  }
}

/** This repository's root (or the installed generator package's folder): where stored IR and bin/ are. */
export function repositoryRoot(): string {
  return generatorPackage().dir;
}

/**
 * For each function of `ir` whose headers state the release that introduced it (the driver's
 * `introduced`, from cudaTypedefs.h), that release when after {@link SINCE_BASELINE}: the raw layer's
 * "(since X)" and the binder's "it needs CUDA X". Functions without such a fact get none (the binder
 * then names the release they are part of): the stored releases give only bounds, never a first release.
 */
export function sinceMap(root: string, ir: ModuleIR): Map<string, string> {
  void root;
  const since = new Map<string, string>();
  for (const fn of ir.functions) {
    if (fn.introduced === undefined) continue;
    const release = versionString(fn.introduced);
    if (compareVersions(release, SINCE_BASELINE) > 0) since.set(fn.name, release);
  }
  return since;
}

function filesOf(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  if (!existsSync(dir)) return out;
  for (const f of readdirSync(dir, { recursive: true }) as string[])
    if (f.endsWith('.ts') || f === 'signatures.txt') out.set(f, readFileSync(join(dir, f), 'utf8'));
  return out;
}

/** A root holding the support sources (a cuda-ts checkout) reaches them by path; any other root
 *  imports the support package by its name. */
export function hasSupportSources(root: string): boolean {
  return existsSync(join(root, SUPPORT_DIR, 'index.ts'));
}

/** The stored IR of `ir`'s module in each catalog release before `ir`'s, oldest first (from `root`, else
 *  this repository): what dates each name in the docs. */
function olderReleases(root: string, ir: ModuleIR): ModuleIR[] {
  const repo = repositoryRoot();
  return RELEASES.filter((r) => compareVersions(r, ir.cudaVersion) < 0).flatMap((r) => {
    const from = [root, repo].find((d) => existsSync(irPath(d, r, ir.module)));
    return from ? [readIR(from, r, ir.module)] : [];
  });
}

/** The headers' documentation of a module's functions, by symbol, and by name for comments clang left
 *  unattached (an `#if` before the declaration: docs-header.ts) (--docs only: NVIDIA's text). */
function headerDocsFor(spec: ModuleSpec, job: ModuleJob, ir: ModuleIR): Map<string, HeaderDoc> {
  const includes = spec.includes.filter((h) => locateHeader(job.includeDirs, h));
  const docs = headerDocs(clangAst({ clang: job.clang, includeDirs: job.includeDirs, includes, defines: spec.defines }));
  const missing = ir.functions.filter((f) => !docs.has(f.symbol) && !docs.has(f.name));
  const texts = [...new Set(missing.map((f) => locateHeader(job.includeDirs, f.header)).filter((p): p is string => !!p))];
  const source = texts
    .map((p) =>
      detachedCommentSource(
        readFileSync(p, 'utf8'),
        missing.filter((f) => locateHeader(job.includeDirs, f.header) === p).map((f) => f.name),
      ),
    )
    .join('\n');
  if (!source.trim()) return docs;
  const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-detached-'));
  try {
    writeFileSync(join(dir, 'detached.h'), source);
    for (const [name, doc] of headerDocs(clangAst({ clang: job.clang, includeDirs: [dir], includes: ['detached.h'] })))
      if (!docs.has(name)) docs.set(name, doc);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return docs;
}

/** Emitted files for `root` (see {@link hasSupportSources}). */
function emitFor(root: string, ir: ModuleIR, spec: ModuleSpec, own?: Map<string, HeaderDoc>): Map<string, string> {
  const docs = { ...docFactsFor(ir, olderReleases(root, ir)), ...(own ? { headerDocs: own } : {}) };
  const files = emitModule(ir, specForRelease(spec, ir.cudaVersion), sinceMap(root, ir), docs);
  if (hasSupportSources(root)) return files;
  const out = new Map<string, string>();
  // chunk files (typed/, raw/) sit one folder deeper
  for (const [name, text] of files)
    out.set(
      name,
      text.split(`from '${IN_REPO_SUPPORT}'`).join(`from '${SUPPORT_PACKAGE}'`).split(`from '../${IN_REPO_SUPPORT}'`).join(`from '${SUPPORT_PACKAGE}'`),
    );
  return out;
}

/**
 * The scaffolded tsconfig, for editors and a check of the tree by itself. `module: node20` with
 * `moduleResolution: node16` (TypeScript 7 removed `node10`): the generated code stays CommonJS (the
 * scaffolded package.json says `"type": "commonjs"`, so a project of ES modules around it changes
 * nothing), reads the support package's `exports`, and may use koffi's types (an ES module).
 */
const SCAFFOLD_COMPILER_OPTIONS = {
  target: 'ES2022',
  module: 'node20',
  moduleResolution: 'node16',
  lib: ['ES2022', 'ESNext.Disposable'],
  types: ['node'],
  strict: true,
  esModuleInterop: true,
  skipLibCheck: true,
  isolatedModules: true,
};

/**
 * The one documented way to use an --out tree: inside the project that uses it, which has cuda-ts
 * installed. Its imports of the support package then resolve to that project's copy (node walks up from
 * the tree to the project's node_modules), so one CudaError class serves cuda-ts and the tree. The
 * package.json names the support package as a peer (the project provides it) and says not to install
 * inside the tree: a node_modules of its own would bring a second copy, and `instanceof` would fail.
 */
export const OUT_TREE_ADVICE = `keep the tree inside your project (one that has cuda-ts installed) and import it by path; it uses that project's ${SUPPORT_PACKAGE}. Do not run npm install inside it: a second copy of the support package would make instanceof CudaError false`;

/** A root outside the repository gets a package.json and tsconfig.json when it has none. */
function scaffold(root: string): void {
  if (hasSupportSources(root)) return;
  mkdirSync(root, { recursive: true });
  const pkg = join(root, 'package.json');
  if (!existsSync(pkg)) {
    const generator = generatorPackage();
    const peerDependencies = { [SUPPORT_PACKAGE]: `^${generator.version}`, koffi: '^3.3.4' };
    const description = `Bindings written by cuda-ts-gen ${generator.version}: ${OUT_TREE_ADVICE}.`;
    writeFileSync(pkg, JSON.stringify({ name: 'cuda-ts-generated', private: true, type: 'commonjs', description, peerDependencies }, null, 2) + '\n');
  }
  const tsconfig = join(root, 'tsconfig.json');
  if (!existsSync(tsconfig)) {
    writeFileSync(tsconfig, JSON.stringify({ compilerOptions: SCAFFOLD_COMPILER_OPTIONS, include: ['generated'] }, null, 2) + '\n');
  }
}

/** The folder a package resolves to from `root`, or undefined when it is not installed there or above. */
function installedFrom(root: string, name: string): string | undefined {
  try {
    return dirname(require.resolve(`${name}/package.json`, { paths: [root] }));
  } catch {
    return undefined;
  }
}

/** One line on where an --out tree's support package comes from (see {@link OUT_TREE_ADVICE}). */
export function supportResolution(root: string): string {
  // the tree's own copy is looked for on disk: require.resolve caches what it found for a folder
  const own = join(root, 'node_modules', ...SUPPORT_PACKAGE.split('/'));
  const found = existsSync(join(own, 'package.json')) ? own : installedFrom(root, SUPPORT_PACKAGE);
  if (!found) return `note: ${SUPPORT_PACKAGE} is not installed in or above ${root}: ${OUT_TREE_ADVICE}`;
  const outer = found === own ? installedFrom(dirname(root), SUPPORT_PACKAGE) : undefined;
  if (outer)
    return `warning: ${root} has its own copy of ${SUPPORT_PACKAGE} (${found}) besides the project's (${outer}): errors it throws are not instanceof the project's CudaError; remove ${join(root, 'node_modules')}`;
  return `the tree uses ${SUPPORT_PACKAGE} from ${found}`;
}

function writeModule(dir: string, files: Map<string, string>): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of files) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
}

/** What one module of a --toolkit run needs; plain data, so a worker process can receive it. */
export interface ModuleJob {
  root: string;
  release: string;
  includeDirs: string[];
  clang: string;
  check: boolean;
  /** Named with --modules: missing headers are a failure, not a skip. */
  explicit: boolean;
  module: string;
  /** The release of this module's own pip wheel, when it differs from the toolkit's. */
  component?: string;
  /** --docs: the headers' own documentation goes into the TSDoc. */
  docs?: boolean;
}

/** The result of one module: lines to print, stale entries, or a one-line failure. */
export interface ModuleOutcome {
  lines: string[];
  stale: string[];
  failed?: string;
  skipped?: boolean;
}

function oneLine(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return msg.split('\n')[0];
}

/** Parses, emits and writes (or compares) one module. Never throws: a failure is an outcome. */
export function generateModule(job: ModuleJob): ModuleOutcome {
  const spec = findModule(job.module)!;
  const out: ModuleOutcome = { lines: [], stale: [] };
  const label = `${job.release} ${spec.name.padEnd(9)}`;
  const t0 = Date.now();
  try {
    if (!librariesFor(spec, job.release)) {
      if (!job.explicit) return { ...out, skipped: true, lines: [`${label} skipped: not part of CUDA ${job.release} (the catalog knows no library of it)`] };
    }
    const ir = parseModule(spec, { clang: job.clang, includeDirs: job.includeDirs, cudaVersion: job.release, warn: (l) => out.lines.push(l) });
    if (job.component && job.component !== job.release) ir.componentVersion = job.component;
    const files = emitFor(job.root, ir, spec, job.docs ? headerDocsFor(spec, job, ir) : undefined);
    const dir = join(job.root, 'generated', job.release, spec.name);
    const counts = `${String(ir.functions.length).padStart(4)} functions, ${ir.records.length + ir.enums.length + ir.typedefs.length} types`;
    const component = job.component ? ` [its headers are CUDA ${job.component}, labelled ${job.release}]` : '';
    if (job.check) {
      const path = irPath(job.root, job.release, spec.name);
      const irStale = !existsSync(path) || readFileSync(path, 'utf8') !== serializeIR(ir) ? 'IR differs from the headers' : '';
      const diff = compareFiles(files, filesOf(dir));
      if (irStale) out.stale.push(`headers/${job.release}/${spec.name}.json: ${irStale}`);
      if (diff) out.stale.push(`generated/${job.release}/${spec.name}: ${diff}`);
      out.lines.push(`${label} ${counts} ${irStale || diff ? 'STALE' : 'ok'} (${Date.now() - t0} ms)${component}`);
    } else {
      writeIR(job.root, ir);
      writeModule(dir, files);
      out.lines.push(`${label} ${counts} (${Date.now() - t0} ms)${component}`);
    }
  } catch (e) {
    const missing = e instanceof HeadersNotFoundError;
    if (missing && !job.explicit) return { ...out, skipped: true, lines: [...out.lines, `${label} skipped: ${oneLine(e)}`] };
    out.failed = `${job.release} ${spec.name}: ${oneLine(e)}`;
    out.lines.push(`${label} FAILED (${Date.now() - t0} ms): ${oneLine(e)}`);
  }
  return out;
}

/** Everything a --toolkit run decides before its modules: the release, include folders, jobs. */
function planToolkit(o: CliOptions, log: (s: string) => void): ModuleJob[] {
  const root = resolve(o.out);
  // NVIDIA's documentation text must never reach this repository's committed tree
  if (o.docs && hasSupportSources(root))
    throw new GeneratorError(`--docs writes the headers' own documentation (NVIDIA's text): give --out a folder outside a cuda-ts checkout, not ${root}`);
  const layout = toolkitLayout(resolve(o.toolkit!));
  const includeDirs = [...layout.includeDirs, ...o.include.map((d) => resolve(d))];
  const clang = findClang();
  const release = toolkitVersion(clang, includeDirs);
  log(`CUDA ${release}: ${layout.found}`);
  const components = layout.sitePackages ? componentReleases(layout.sitePackages) : new Map<string, string>();
  return selectModules(o.modules).map((spec) => {
    const component = components.get(spec.name);
    return {
      root,
      release,
      includeDirs,
      clang,
      check: o.check,
      explicit: !!o.modules,
      module: spec.name,
      ...(component && component !== release ? { component } : {}),
      ...(o.docs ? { docs: true } : {}),
    };
  });
}

function summarize(outcomes: ModuleOutcome[], o: CliOptions, t0: number, log: (s: string) => void): number {
  const failed = outcomes.filter((x) => x.failed).map((x) => x.failed!);
  const done = outcomes.filter((x) => !x.failed && !x.skipped).length;
  if (done === 0 && failed.length === 0) {
    throw new GeneratorError(`nothing to ${o.check ? 'check' : 'generate'}: no module's headers were found`);
  }
  log(
    `${done} module(s) ${o.check ? 'checked' : 'generated'}${failed.length ? `, ${failed.length} failed` : ''} in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
  const stale = outcomes.flatMap((x) => x.stale);
  if (failed.length) log(`failed: ${failed.join('; ')}`);
  if (!o.check && done > 0 && !hasSupportSources(resolve(o.out))) log(supportResolution(resolve(o.out)));
  return Math.max(finish(stale, log), failed.length ? 1 : 0);
}

/** Runs the generator in this process (no workers). Returns the exit status. */
export function run(argv: string[], log: (s: string) => void = console.log): number {
  const o = parseArgs(argv);
  const early = runWithoutToolkit(o, log);
  if (early !== undefined) return early;
  const t0 = Date.now();
  const jobs = planToolkit(o, log);
  if (!o.check) scaffold(resolve(o.out));
  const outcomes = jobs.map((job) => {
    const r = generateModule(job);
    for (const l of r.lines) log(l);
    return r;
  });
  return summarize(outcomes, o, t0, log);
}

/** Runs the generator with `jobs` worker processes for the modules of a --toolkit run. */
export async function runParallel(argv: string[], log: (s: string) => void = console.log): Promise<number> {
  const o = parseArgs(argv);
  const early = runWithoutToolkit(o, log);
  if (early !== undefined) return early;
  const t0 = Date.now();
  const jobs = planToolkit(o, log);
  if (!o.check) scaffold(resolve(o.out));
  const workers = Math.min(o.jobs ?? availableParallelism(), jobs.length);
  if (workers <= 1)
    return summarize(
      jobs.map((j) => {
        const r = generateModule(j);
        r.lines.forEach((l) => log(l));
        return r;
      }),
      o,
      t0,
      log,
    );
  const outcomes: ModuleOutcome[] = new Array(jobs.length);
  let next = 0;
  const entry = join(repositoryRoot(), 'bin', 'cuda-ts-gen.js');
  await Promise.all(
    Array.from(
      { length: workers },
      () =>
        new Promise<void>((done, fail) => {
          const child = fork(entry, [], { env: { ...process.env, CUDA_TS_GEN_WORKER: '1' }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
          let current = -1;
          const feed = () => {
            if (next >= jobs.length) return void child.send({ quit: true });
            current = next++;
            child.send({ job: jobs[current] });
          };
          child.on('message', (r: ModuleOutcome) => {
            outcomes[current] = r;
            for (const l of r.lines) log(l);
            feed();
          });
          child.on('exit', (code) => (code === 0 ? done() : fail(new GeneratorError(`a worker process exited with status ${code}`))));
          feed();
        }),
    ),
  );
  return summarize(outcomes, o, t0, log);
}

/** Worker side of {@link runParallel}: generates the modules it is sent, one at a time. */
function serveWorker(): void {
  process.on('message', (m: { job?: ModuleJob; quit?: boolean }) => {
    if (m.quit || !m.job) return process.disconnect();
    process.send!(generateModule(m.job));
  });
}

/** --help, --list, and the runs from stored IR (--check, --from-ir without --toolkit). */
function runWithoutToolkit(o: CliOptions, log: (s: string) => void): number | undefined {
  if (o.help) {
    log(USAGE);
    return 0;
  }
  if (o.list) {
    for (const m of MODULES) {
      const libs = RELEASES.map((r) => `${r}: ${librariesFor(m, r)?.join(', ') ?? '—'}`).join('; ');
      log(`${m.name.padEnd(10)} ${m.title} — ${m.includes.join(', ')} — ${libs}`);
    }
    return 0;
  }
  if (o.toolkit) return undefined;
  if (o.docs) throw new GeneratorError(`--docs reads the headers: it needs --toolkit\n${USAGE}`);
  if (!o.check && !o.fromIr) throw new GeneratorError(`--toolkit is required (only --check and --from-ir run from the stored IR)\n${USAGE}`);
  const root = resolve(o.out);
  const t0 = Date.now();
  const stale: string[] = [];
  const specs = selectModules(o.modules);
  let compared = 0;
  if (!o.check) scaffold(root);
  for (const release of storedReleases(root)) {
    for (const spec of specs) {
      if (!existsSync(irPath(root, release, spec.name))) continue;
      const t1 = Date.now();
      const ir = readIR(root, release, spec.name);
      const files = emitFor(root, ir, spec);
      const dir = join(root, 'generated', release, spec.name);
      compared++;
      if (!o.check) {
        writeModule(dir, files);
        log(`${release} ${spec.name.padEnd(9)} ${String(ir.functions.length).padStart(4)} functions re-emitted (${Date.now() - t1} ms)`);
        continue;
      }
      const diff = compareFiles(files, filesOf(dir));
      if (diff) stale.push(`generated/${release}/${spec.name}: ${diff}`);
      log(`${release} ${spec.name.padEnd(9)} ${String(ir.functions.length).padStart(4)} functions ${diff ? 'STALE' : 'ok'} (${Date.now() - t1} ms)`);
    }
  }
  if (compared === 0) {
    const which = o.modules ? ` of ${o.modules.join(', ')}` : '';
    throw new GeneratorError(
      `nothing to ${o.check ? 'check' : 're-emit'}: no stored IR${which} under ${join(root, 'headers')} (give --toolkit, or --out a root holding headers/<release>/)`,
    );
  }
  log(`${compared} module(s) ${o.check ? 'checked' : 're-emitted'} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  if (!o.check && !hasSupportSources(root)) log(supportResolution(root));
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

/** Expected failures (bad usage, bad input, invalid IR) print one line; anything else is a bug. */
function report(e: unknown): void {
  const expected = e instanceof GeneratorError || e instanceof IRError;
  console.error(`cuda-ts-gen: ${expected ? (e as Error).message : ((e as Error).stack ?? String(e))}`);
  process.exitCode = 2;
}

export function main(argv = process.argv.slice(2)): void {
  if (process.env.CUDA_TS_GEN_WORKER === '1' && process.send) return serveWorker();
  try {
    const o = parseArgs(argv);
    if (o.toolkit && !o.list && !o.help && (o.jobs ?? availableParallelism()) > 1) {
      runParallel(argv).then((code) => (process.exitCode = code), report);
      return;
    }
    process.exitCode = run(argv);
  } catch (e) {
    report(e);
  }
}

if (require.main === module) main();
