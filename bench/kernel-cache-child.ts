// What both kernel-cache benches share (kernel-cache.ts on the GPU, kernel-cache-cpu.ts with stand-in
// libraries): the child process, a fresh process that compiles SAXPY once, timed around the
// constructor and compile() alone, printing one JSON line { ms, fromCache, cubin, nvrtcLoaded,
// programMs[, loadMs] }, and how to run it; and the `built` tree, the objects layer as `npm run build` makes it.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SAXPY } from './gpu-common';

const ROOT = join(__dirname, '..');

export interface ChildOptions {
  /** Load libnvrtc before the timer (Program.version()), as a process that used NVRTC before would have. */
  preload: boolean;
  /** A JavaScript expression over `maps` (/proc/self/maps) that is true when libnvrtc is mapped. */
  nvrtcMapped: string;
  /** After compile(): time loading libnvrtc (loadMs), what a hit that did without it spared. */
  timeLoad: boolean;
}

/**
 * The child's CommonJS source, requiring the objects layer from `entry`. `Program` is read before the
 * timer (programMs): in the built package the objects layer's entry loads program.js and what it
 * imports on that first read, which is import, not compile(), and the other modes load at import.
 */
export function compileChildSource(entry: string, o: ChildOptions): string {
  return `
const { readFileSync } = require('node:fs');
const cuda = require(${JSON.stringify(entry)});
cuda.Device.get(0).setCurrent();
${o.preload ? 'cuda.Program.version();' : ''}
const t0 = performance.now();
const { Program } = cuda;
const programMs = performance.now() - t0;
const t = performance.now();
const p = new Program(${JSON.stringify(SAXPY)}, { name: 'saxpy.cu' }).compile();
const ms = performance.now() - t;
const cubin = p.cubin.byteLength;
const fromCache = p.fromCache;
p.close();
const maps = readFileSync('/proc/self/maps', 'utf8');
const nvrtcLoaded = ${o.nvrtcMapped};
const result = { ms, fromCache, cubin, nvrtcLoaded, programMs };
${o.timeLoad ? 'const t1 = performance.now();\ncuda.Program.version();\nresult.loadMs = performance.now() - t1;' : ''}
process.stdout.write(JSON.stringify(result));
`;
}

/** What a child printed (see compileChildSource). */
export interface ChildRun {
  ms: number;
  loadMs?: number;
  fromCache: boolean;
  cubin: number;
  nvrtcLoaded: boolean;
  programMs: number;
}

/** Runs the child `file` (through scripts/run-ts.cjs when `viaTsx`) in a fresh process with `env` added. */
export function runCompileChild(file: string, viaTsx: boolean, env: Record<string, string>, timeoutMs: number): ChildRun {
  const args = viaTsx ? [join(ROOT, 'scripts', 'run-ts.cjs'), file] : [file];
  // NODE_PATH: the built tree lives outside the repository and requires koffi
  const r = spawnSync(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), ...env },
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  if (r.status !== 0) throw new Error(`child exited ${r.status}: ${r.stderr.slice(-1500)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

/** The .ts files under `dir` (scripts/cjs-tree's walk; required here, as it loads TypeScript). */
function tsFiles(dir: string): string[] {
  return [...(require('../scripts/cjs-tree') as typeof import('../scripts/cjs-tree')).tsFiles(dir)];
}

/** esbuild's CommonJS emit of src/, support/ and generated/ under `dir`, unbundled (this bench's former `built`); returns the entry. */
export function transpileWithEsbuild(dir: string): string {
  const esbuild = require('esbuild') as typeof import('esbuild');
  const files = ['src', 'support', 'generated'].flatMap((d) => tsFiles(join(ROOT, d)));
  esbuild.buildSync({
    entryPoints: files,
    outdir: dir,
    outbase: ROOT,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    legalComments: 'none',
    logLevel: 'error',
  });
  writeFileSync(join(dir, 'package.json'), '{"type":"commonjs"}');
  return join(dir, 'src', 'index.js');
}

/**
 * The objects layer as users run it (dist/: CommonJS, `npm run build`) under `dir`; returns its entry.
 * src/ and support/ are TypeScript's own emit with tsconfig.build.json's options, file by file (the
 * hit path's code as users get it: esbuild's emit differs, e.g. a getter per export, each one more
 * function to compile on first use), then bundled with scripts/bundle.ts (one file and a private V8
 * code cache per entry, kept in `codeCache`: point CUDA_TS_CODE_CACHE at it). generated/ (61 MB,
 * ~40 s for TypeScript) is esbuild's emit and left unbundled: the hit runs none of it, and its
 * import is not timed.
 */
export function buildLikeDist(dir: string): string {
  const esbuild = require('esbuild') as typeof import('esbuild');
  const { buildCjsTree } = require('../scripts/cjs-tree') as typeof import('../scripts/cjs-tree');
  const { bundleTree, distEntries } = require('../scripts/bundle') as typeof import('../scripts/bundle');
  buildCjsTree(dir, ['src', 'support'], { removeComments: true });
  esbuild.buildSync({
    entryPoints: tsFiles(join(ROOT, 'generated')),
    outdir: dir,
    outbase: ROOT,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    legalComments: 'none',
    logLevel: 'error',
  });
  bundleTree(
    dir,
    distEntries(dir).filter((s) => !s.entry.startsWith('generated/')),
  );
  return join(dir, 'src', 'index.js');
}
