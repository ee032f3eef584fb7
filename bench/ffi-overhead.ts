// What each layer adds to a trivial driver call, per JavaScript runtime and FFI backend, without a GPU
// (issue 26 §2): cuCtxGetCurrent and cuDeviceGetAttribute against the stand-in libcuda of
// bench/native/fake-cuda.c, in ns per call, as
//   C        a loop of the calls in C (bench/native/ffi-loop.c), called once per pass from this process
//   raw      generated/13.0/driver/raw: a caller's own out-array (as bench/gpu-passes.ts's rawPasses)
//   typed    generated/13.0/driver/index: returns the out-parameter (as typedPasses)
//   objects  Context.current() / Device#attribute(MULTIPROCESSOR_COUNT) (as bench/gpu-objects.ts)
// Each figure is the median of ROUNDS rounds; a round runs every column once, interleaved, so drift on
// this shared machine hits every column alike. The fake functions do almost nothing, so C's column is
// the call itself and the other columns are what the bindings add. Every runtime runs the same
// CommonJS copy of the tree (scripts/cjs-tree.ts), with each backend named by CUDA_TS_FFI:
//   node 20 / node 26: koffi; node 26 also node:ffi; bun: koffi and bun:ffi; deno: koffi and Deno.dlopen.
//   npx tsx bench/ffi-overhead.ts     ROUNDS=15 OPS=200000 NODE26=… BUN=… DENO=… (else /tmp/…); OUT=file.json
//   RUNS=node20:koffi,deno:deno      only those runtime:backend pairs
// Needs gcc and Linux. The child mode (`child`, in the copied tree) is what each runtime runs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');
const COLUMNS = ['C', 'raw', 'typed', 'objects'] as const;
const FUNCTIONS = ['cuCtxGetCurrent', 'cuDeviceGetAttribute'] as const;
const MULTIPROCESSOR_COUNT = 16; // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT

type Pass = (ops: number) => void;
/** One child's answer: function → column → ns per call; the backend each function was bound through. */
interface ChildResult {
  ns: Record<string, Record<string, number>>;
  backends: Record<string, unknown>;
  error?: string;
}

// ---- child: runs inside the CommonJS tree under one runtime -----------------------------------------

interface LoopFns {
  ctx(n: number): number;
  attr(n: number, attr: number): number;
}

/** ffi_loop_ctx / ffi_loop_attr through the runtime's own FFI (koffi under Node). */
function loopFunctions(lib: string): LoopFns {
  const g = globalThis as {
    Bun?: unknown;
    Deno?: { dlopen(p: string, s: Record<string, { parameters: string[]; result: string }>): { symbols: Record<string, (...a: unknown[]) => unknown> } };
  };
  if (g.Bun) {
    const { dlopen } = require('bun:ffi') as {
      dlopen(p: string, s: Record<string, { args: string[]; returns: string }>): { symbols: Record<string, (...a: unknown[]) => number> };
    };
    const s = dlopen(lib, { ffi_loop_ctx: { args: ['i64'], returns: 'i64' }, ffi_loop_attr: { args: ['i64', 'i32'], returns: 'i64' } }).symbols;
    return { ctx: (n) => Number(s.ffi_loop_ctx(n)), attr: (n, a) => Number(s.ffi_loop_attr(n, a)) };
  }
  if (g.Deno) {
    const s = g.Deno.dlopen(lib, {
      ffi_loop_ctx: { parameters: ['i64'], result: 'i64' },
      ffi_loop_attr: { parameters: ['i64', 'i32'], result: 'i64' },
    }).symbols;
    return { ctx: (n) => Number(s.ffi_loop_ctx(BigInt(n))), attr: (n, a) => Number(s.ffi_loop_attr(BigInt(n), a)) };
  }
  const koffi = require('koffi') as typeof import('koffi');
  const so = koffi.load(lib);
  const ctx = so.func('int64_t ffi_loop_ctx(int64_t n)') as (n: number) => number;
  const attr = so.func('int64_t ffi_loop_attr(int64_t n, int attr)') as (n: number, a: number) => number;
  return { ctx: (n) => Number(ctx(n)), attr: (n, a) => Number(attr(n, a)) };
}

/** Every column's pass of both functions (each its own closure: no call site shared between columns). */
function childPasses(loopLib: string): { passes: Record<string, Record<string, Pass>>; backends: () => Record<string, unknown> } {
  const raw = require('../generated/13.0/driver/raw') as Record<string, (...a: unknown[]) => number>;
  const cu = require('../generated/13.0/driver/index') as Record<string, (...a: unknown[]) => number> & { binder: { backendOf(n: string): unknown } };
  const O = require('../src/index') as {
    Device: { get(i: number): { attribute(a: number): number; setCurrent(): void } };
    Context: { current(): { handle: number } };
  };
  const loop = loopFunctions(loopLib);
  const device = O.Device.get(0);
  device.setCurrent();
  const out64 = new BigUint64Array(1);
  const out32 = new Int32Array(1);
  // one call through each module first: its chunk loads and replaces the lazy stubs on the module
  // (bench/gpu-passes.ts takes the functions after setup has called into the same chunks)
  raw.cuCtxGetCurrent(out64);
  raw.cuDeviceGetAttribute(out32, MULTIPROCESSOR_COUNT, 0);
  cu.cuCtxGetCurrent();
  cu.cuDeviceGetAttribute(MULTIPROCESSOR_COUNT, 0);
  const rawCtx = raw.cuCtxGetCurrent;
  const rawAttr = raw.cuDeviceGetAttribute;
  const typedCtx = cu.cuCtxGetCurrent;
  const typedAttr = cu.cuDeviceGetAttribute;
  const check = (ok: boolean, what: string) => {
    if (!ok) throw new Error(`${what} gave a wrong answer`);
  };
  const passes: Record<string, Record<string, Pass>> = {
    cuCtxGetCurrent: {
      C: (ops) => check(loop.ctx(ops) === 0, 'ffi_loop_ctx'),
      raw: (ops) => {
        let bad = 0;
        for (let i = 0; i < ops; i++) bad += rawCtx(out64) === 0 ? 0 : 1;
        check(bad === 0 && out64[0] !== 0n, 'raw cuCtxGetCurrent');
      },
      typed: (ops) => {
        let none = 0;
        for (let i = 0; i < ops; i++) none += typedCtx() === 0 ? 1 : 0;
        check(none === 0, 'typed cuCtxGetCurrent');
      },
      objects: (ops) => {
        let none = 0;
        for (let i = 0; i < ops; i++) none += O.Context.current().handle === 0 ? 1 : 0;
        check(none === 0, 'Context.current()');
      },
    },
    cuDeviceGetAttribute: {
      C: (ops) => check(loop.attr(ops, MULTIPROCESSOR_COUNT) === 0, 'ffi_loop_attr'),
      raw: (ops) => {
        let bad = 0;
        for (let i = 0; i < ops; i++) bad += rawAttr(out32, MULTIPROCESSOR_COUNT, 0) === 0 ? 0 : 1;
        check(bad === 0 && out32[0] > 0, 'raw cuDeviceGetAttribute');
      },
      typed: (ops) => {
        let acc = 0;
        for (let i = 0; i < ops; i++) acc += typedAttr(MULTIPROCESSOR_COUNT, 0);
        check(acc === ops * typedAttr(MULTIPROCESSOR_COUNT, 0) && acc > 0, 'typed cuDeviceGetAttribute');
      },
      objects: (ops) => {
        let acc = 0;
        for (let i = 0; i < ops; i++) acc += device.attribute(MULTIPROCESSOR_COUNT); // a driver call (multiprocessorCount is cached)
        check(acc > 0, 'Device#attribute');
      },
    },
  };
  // read after the passes ran: a function has a backend from its first call on
  const backends = () => Object.fromEntries(FUNCTIONS.map((f) => [f, cu.binder.backendOf(f)]));
  return { passes, backends };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Measures every pass: a warm-up, then ROUNDS interleaved rounds of OPS calls; medians in ns per call. */
function runChild(): ChildResult {
  const rounds = Number(process.env.ROUNDS ?? 15) | 0 || 15;
  const ops = Number(process.env.OPS ?? 200_000) | 0 || 200_000;
  const { passes, backends } = childPasses(process.env.FFI_LOOP_LIB ?? '');
  const samples: Record<string, Record<string, number[]>> = {};
  for (const [fn, cols] of Object.entries(passes)) {
    samples[fn] = {};
    for (const [col, pass] of Object.entries(cols)) {
      pass(Math.max(1000, ops >> 1)); // warm-up: bind, compile, settle
      samples[fn][col] = [];
    }
  }
  for (let r = 0; r < rounds; r++) {
    for (const [fn, cols] of Object.entries(passes)) {
      for (const [col, pass] of Object.entries(cols)) {
        const t = performance.now();
        pass(ops);
        samples[fn][col].push(((performance.now() - t) * 1e6) / ops);
      }
    }
  }
  const ns: ChildResult['ns'] = {};
  for (const [fn, cols] of Object.entries(samples)) ns[fn] = Object.fromEntries(Object.entries(cols).map(([c, xs]) => [c, Math.round(median(xs) * 10) / 10]));
  return { ns, backends: backends() };
}

// ---- parent: builds the stand-ins and the tree, runs each runtime:backend ---------------------------

function gcc(args: string[]): void {
  const r = spawnSync('gcc', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`gcc ${args.join(' ')} failed: ${r.stderr}`);
}

/** The stand-in libcuda.so.1 and the C loop library linked against it, in `dir`. */
function buildNative(dir: string): { driver: string; loop: string } {
  const driver = join(dir, 'libcuda.so.1');
  const loop = join(dir, 'libffiloop.so');
  gcc(['-O2', '-shared', '-fPIC', '-DFAKE_DRIVER', '-o', driver, join(ROOT, 'bench', 'native', 'fake-cuda.c')]);
  gcc(['-O2', '-shared', '-fPIC', '-o', loop, join(ROOT, 'bench', 'native', 'ffi-loop.c'), driver, `-Wl,-rpath,${dir}`]);
  return { driver, loop };
}

/** runtime:backend → the command prefix; missing runtimes are left out (named on stderr). */
function runs(): Record<string, { cmd: string[]; ffi: string }> {
  const node26 = process.env.NODE26 ?? '/tmp/node26/node_modules/node/bin/node';
  const bun = process.env.BUN ?? '/tmp/bun/bun';
  const deno = process.env.DENO ?? '/tmp/deno/deno';
  const all: Record<string, { cmd: string[]; ffi: string }> = {
    'node20:koffi': { cmd: [process.execPath], ffi: 'koffi' },
    'node26:koffi': { cmd: [node26], ffi: 'koffi' },
    'node26:node': { cmd: [node26], ffi: 'node' },
    'bun:koffi': { cmd: [bun], ffi: 'koffi' },
    'bun:bun': { cmd: [bun], ffi: 'bun' },
    'deno:koffi': { cmd: [deno, 'run', '--allow-ffi', '--allow-read', '--allow-env'], ffi: 'koffi' },
    'deno:deno': { cmd: [deno, 'run', '--allow-ffi', '--allow-read', '--allow-env'], ffi: 'deno' },
  };
  const only = process.env.RUNS?.split(',').map((s) => s.trim());
  const out: Record<string, { cmd: string[]; ffi: string }> = {};
  for (const [name, run] of Object.entries(all)) {
    if (only && !only.includes(name)) continue;
    if (run.cmd[0] !== process.execPath && !existsSync(run.cmd[0])) console.error(`${name}: ${run.cmd[0]} not found, skipped`);
    else out[name] = run;
  }
  return out;
}

function runOne(cmd: string[], ffi: string, tree: string, libs: { driver: string; loop: string }): ChildResult {
  const env: Record<string, string | undefined> = {
    ...process.env,
    CUDA_TS_FFI: ffi,
    CUDA_TS_DRIVER_LIBRARY: libs.driver,
    FFI_LOOP_LIB: libs.loop,
    FFI_OVERHEAD_CHILD: '1',
  };
  const r = spawnSync(cmd[0], [...cmd.slice(1), join(tree, 'bench', 'ffi-overhead.js')], { cwd: tree, env, encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) return { ns: {}, backends: {}, error: (r.stderr || r.stdout || `exit ${r.status}`).trim().split('\n').slice(-3).join(' | ') };
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as ChildResult;
}

function backendNote(b: unknown): string {
  const x = b as { backend?: string; reason?: string } | undefined;
  return x?.backend ? `${x.backend}${x.reason ? ` (${x.reason})` : ''}` : '?';
}

function printTable(results: Record<string, ChildResult>): void {
  const head = ['runtime:ffi', ...FUNCTIONS.flatMap((f) => COLUMNS.map((c) => `${f === 'cuCtxGetCurrent' ? 'ctx' : 'attr'} ${c}`))];
  console.log(head.map((h, i) => (i ? h.padStart(12) : h.padEnd(14))).join(''));
  for (const [name, r] of Object.entries(results)) {
    if (r.error) {
      console.log(`${name.padEnd(14)}error: ${r.error}`);
      continue;
    }
    const cells = FUNCTIONS.flatMap((f) => COLUMNS.map((c) => (r.ns[f]?.[c] === undefined ? '-' : r.ns[f][c].toFixed(1))));
    console.log(name.padEnd(14) + cells.map((c) => c.padStart(12)).join(''));
  }
  console.log('\nbound through:');
  for (const [name, r] of Object.entries(results))
    if (!r.error) console.log(`  ${name}: ${FUNCTIONS.map((f) => `${f} ${backendNote(r.backends[f])}`).join('; ')}`);
}

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-ffi-overhead-'));
  try {
    const libs = buildNative(dir);
    const { buildCjsTree, DEFAULT_ROOTS } = require('../scripts/cjs-tree') as typeof import('../scripts/cjs-tree');
    const tree = buildCjsTree(join(dir, 'tree'), [...DEFAULT_ROOTS, 'bench/ffi-overhead.ts']);
    const results: Record<string, ChildResult> = {};
    for (const [name, run] of Object.entries(runs())) {
      results[name] = runOne(run.cmd, run.ffi, tree, libs);
      process.stderr.write(`${name} done\n`);
    }
    printTable(results);
    if (process.env.OUT)
      writeFileSync(process.env.OUT, JSON.stringify({ rounds: Number(process.env.ROUNDS ?? 15), ops: Number(process.env.OPS ?? 200_000), results }, null, 1));
  } finally {
    if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
    else console.error(`kept ${dir}`);
  }
}

if (process.env.FFI_OVERHEAD_CHILD === '1') {
  let text: string;
  try {
    text = JSON.stringify(runChild());
  } catch (e) {
    text = JSON.stringify({ ns: {}, backends: {}, error: (e as Error).stack ?? String(e) });
  }
  process.stdout.write(`${text}\n`);
} else if (require.main === module || process.argv[1] === __filename) {
  main();
}
