// What a trivial call costs through the node:ffi backend (issue 17), on the CPU: libcudart's
// functions answer at once without a GPU (cudaGetLastError, cudaGetDevice, cudaDeviceGetAttribute
// return "insufficient driver"; cudaRuntimeGetVersion and cudaDriverGetVersion succeed), which is all
// a call-overhead measurement needs. In one process, interleaved (each repetition runs every
// implementation of a row in turn, the order rotating), ns per call:
//   C             the same calls in a C loop (a small library built here with cc, called once per pass)
//   koffi         a hand-declared koffi function (`void *` out-parameter through an Int32Array)
//   node:ffi …    node:ffi called directly: the out-pointer as an ArrayBuffer, as a cached bigint address
//   raw / typed   cuda-ts's raw and typed layers, bound through node:ffi and (a second copy of the
//                 module) through koffi
// Each row prints the median, min–max over repetitions, and the median (min–max) of the per-repetition
// ratio to C.
//   PATH=/tmp/node26/node_modules/node/bin:$PATH npx tsx bench/nodeffi-cost.ts
//   BENCH_REPS (default 15), BENCH_CALLS (per implementation and repetition, default 100000),
//   BENCH_ONLY=row,row (substring match on row names), OUT=dir (writes nodeffi-cost.json there),
//   BENCH_BEFORE=dir: also that checkout's module through its own node:ffi adapter, e.g.
//     git worktree add --detach /tmp/before <commit> && ln -s $PWD/node_modules /tmp/before/
//     BENCH_BEFORE=/tmp/before npx tsx bench/nodeffi-cost.ts
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import koffi from 'koffi';
import { loadLibrary } from '../support';
import { NodeFfiLibrary, nodeFfi } from '../support/nodeffi';

type Pass = (n: number) => void;
interface Row {
  name: string;
  impls: Record<string, Pass>;
}

const ffi = nodeFfi() as unknown as
  | {
      DynamicLibrary: new (path: string) => { getFunction(name: string, sig: { arguments: string[]; return: string }): (...a: unknown[]) => number };
      getRawPointer(b: ArrayBuffer): bigint;
    }
  | undefined;
if (!ffi) {
  console.error(`node ${process.version} has no node:ffi: run under Node 26 (PATH=/tmp/node26/node_modules/node/bin:$PATH)`);
  process.exit(1);
}

const spec = { module: 'runtime', sonames: ['libcudart.so.13'], env: 'CUDA_TS_RUNTIME_LIBRARY' };
const cudart = loadLibrary(spec);
const path = NodeFfiLibrary.open(spec).path; // the file both FFIs (and the C loop) open

// ---- C: one pass = one call of a C loop -----------------------------------------------------------
const C_SOURCE = `
#include <dlfcn.h>
#include <stddef.h>
typedef int (*f0)(void);
typedef int (*f1)(int *);
typedef int (*f3)(int *, int, int);
typedef int (*f8)(void *, size_t, const void *, size_t, size_t, size_t, int, void *);
static f0 getLastError; static f1 getDevice, runtimeVersion, driverVersion; static f3 getAttribute; static f8 memcpy2DAsync;
static char dst[64], src[64];
static volatile int sink;
int loop_init(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) return 1;
  getLastError = (f0)dlsym(h, "cudaGetLastError");
  getDevice = (f1)dlsym(h, "cudaGetDevice");
  runtimeVersion = (f1)dlsym(h, "cudaRuntimeGetVersion");
  driverVersion = (f1)dlsym(h, "cudaDriverGetVersion");
  getAttribute = (f3)dlsym(h, "cudaDeviceGetAttribute");
  memcpy2DAsync = (f8)dlsym(h, "cudaMemcpy2DAsync");
  return !(getLastError && getDevice && runtimeVersion && driverVersion && getAttribute && memcpy2DAsync);
}
int loop_getLastError(int n) { int s = 0; for (int i = 0; i < n; i++) s += getLastError(); sink = s; return s; }
int loop_getDevice(int n) { int s = 0, v; for (int i = 0; i < n; i++) s += getDevice(&v); sink = s; return s; }
int loop_runtimeVersion(int n) { int s = 0, v; for (int i = 0; i < n; i++) s += runtimeVersion(&v); sink = s + v; return s; }
int loop_driverVersion(int n) { int s = 0, v; for (int i = 0; i < n; i++) s += driverVersion(&v); sink = s + v; return s; }
int loop_getAttribute(int n) { int s = 0, v; for (int i = 0; i < n; i++) s += getAttribute(&v, 16, 0); sink = s; return s; }
int loop_memcpy2DAsync(int n) { int s = 0; for (int i = 0; i < n; i++) s += memcpy2DAsync(dst, 64, src, 64, 8, 1, 0, 0); sink = s; return s; }
`;

function cLoops(): Record<string, Pass> | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-nodeffi-cost-'));
  try {
    writeFileSync(join(dir, 'loop.c'), C_SOURCE);
    execFileSync('cc', ['-O2', '-shared', '-fPIC', '-o', join(dir, 'libloop.so'), join(dir, 'loop.c'), '-ldl'], { stdio: 'pipe' });
    const lib = koffi.load(join(dir, 'libloop.so'));
    if ((lib.func('loop_init', 'int', ['const char *']) as (p: string) => number)(path) !== 0) return undefined;
    const loops: Record<string, Pass> = {};
    for (const n of ['getLastError', 'getDevice', 'runtimeVersion', 'driverVersion', 'getAttribute', 'memcpy2DAsync'])
      loops[n] = lib.func(`loop_${n}`, 'int', ['int']) as Pass;
    return loops;
  } catch (e) {
    console.error(`no C row: ${(e as Error).message.split('\n')[0]}`);
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true }); // the loaded library stays mapped
  }
}

// ---- cuda-ts, twice: the module bound through node:ffi, then a fresh copy bound through koffi ------
// Each copy makes its first calls before the next copy loads: its lazily loaded chunks (typed/*.ts,
// raw-layer/*.ts) bind through the binding.ts in the module cache at that moment.
type Typed = typeof import('../generated/13.0/runtime');
type Raw = typeof import('../generated/13.0/runtime/raw');
type Fn = (...a: never[]) => unknown;
interface Bound {
  typed: Record<string, Fn>;
  raw: Record<string, Fn>;
  binder: Typed['binder'];
}
const TYPED = ['cudaRuntimeGetVersion', 'cudaDriverGetVersion'];
const RAW = ['cudaGetLastError', 'cudaRuntimeGetVersion', 'cudaDriverGetVersion', 'cudaGetDevice', 'cudaDeviceGetAttribute', 'cudaMemcpy2DAsync'];
// cudaMemcpy2DAsync(dst, 64, src, 64, 8, 1, cudaMemcpyHostToHost, stream 0) between two 64-byte host
// buffers: "insufficient driver" without a GPU, an 8-byte host copy with one
const dst = new Uint8Array(64);
const src = new Uint8Array(64);
const ARGS: Record<string, unknown[]> = {
  cudaGetLastError: [],
  cudaDeviceGetAttribute: [new Int32Array(1), 16, 0],
  cudaMemcpy2DAsync: [dst, 64, src, 64, 8, 1, 0, 0],
};
function loadModule(backend: 'node' | 'koffi', root = join(__dirname, '..')): Bound {
  for (const k of Object.keys(require.cache)) if (k.includes(join('generated', '13.0', 'runtime'))) delete require.cache[k];
  const typed = require(join(root, 'generated', '13.0', 'runtime')) as Typed;
  const raw = require(join(root, 'generated', '13.0', 'runtime', 'raw')) as Raw;
  typed.configure({ ffi: backend });
  const probe = new Int32Array(1);
  const t = typed as unknown as Record<string, Fn>;
  const r = raw as unknown as Record<string, Fn>;
  for (const n of TYPED) (t[n] as () => number)(); // the lazy stub replaces itself with the function
  for (const n of RAW) (r[n] as (...a: unknown[]) => number)(...(ARGS[n] ?? [probe]));
  const bound: Bound = { typed: {}, raw: {}, binder: typed.binder };
  for (const n of TYPED) bound.typed[n] = t[n];
  for (const n of RAW) bound.raw[n] = r[n];
  for (const n of new Set([...TYPED, ...RAW])) {
    const b = typed.binder.backendOf(n);
    // functions of seven parameters or more stay on koffi (node:ffi's shared-buffer call is slower)
    if (backend === 'node' && n === 'cudaMemcpy2DAsync' && b?.backend === 'koffi' && /parameters/.test(b.reason ?? '')) continue;
    if (b?.backend !== backend) throw new Error(`${n} is bound through ${b?.backend} (${b?.reason ?? ''}), not ${backend}`);
  }
  return bound;
}
// BENCH_BEFORE=<another checkout>: its module too, bound through node:ffi by that checkout's own
// support (e.g. a `git worktree` of the commit before a change), as "… node:ffi (before)"
const before = process.env.BENCH_BEFORE ? loadModule('node', process.env.BENCH_BEFORE) : undefined;
const viaNode = loadModule('node');
const viaKoffi = loadModule('koffi');

// ---- direct node:ffi and koffi -------------------------------------------------------------------
const open = () => new ffi.DynamicLibrary(path); // one handle per signature of a symbol
const out = new Int32Array(2);
const outBuffer = out.buffer as ArrayBuffer;
const outAddress = ffi.getRawPointer(outBuffer);

const kf = (name: string, params: string[]) => cudart.func(name, 'int', params) as (...a: unknown[]) => number;
/** Puts the C loop of `loop` first in a row's implementations, where the C library was built. */
type WithC = (impls: Record<string, Pass>, loop: string) => Record<string, Pass>;

function lastErrorRow(withC: WithC): Row {
  const kLast = kf('cudaGetLastError', []);
  const nLast = open().getFunction('cudaGetLastError', { arguments: [], return: 'int32' });
  const rawLast = viaNode.raw.cudaGetLastError as () => number;
  const rawLastK = viaKoffi.raw.cudaGetLastError as () => number;
  return {
    name: 'cudaGetLastError()',
    impls: withC(
      {
        koffi: (n) => {
          for (let i = 0; i < n; i++) kLast();
        },
        'node:ffi': (n) => {
          for (let i = 0; i < n; i++) nLast();
        },
        'raw, node:ffi': (n) => {
          for (let i = 0; i < n; i++) rawLast();
        },
        ...(before
          ? {
              'raw, node:ffi (before)': (
                (f: () => number): Pass =>
                (n) => {
                  for (let i = 0; i < n; i++) f();
                }
              )(before.raw.cudaGetLastError as () => number),
            }
          : {}),
        'raw, koffi': (n) => {
          for (let i = 0; i < n; i++) rawLastK();
        },
      },
      'getLastError',
    ),
  };
}

/** A call with one `int *` out-parameter; through the typed layer too where `typedOk`. */
function outParamRow(withC: WithC, name: 'cudaRuntimeGetVersion' | 'cudaDriverGetVersion' | 'cudaGetDevice', loop: string, typedOk: boolean): Row {
  const k = kf(name, ['void *']);
  const nAb = open().getFunction(name, { arguments: ['pointer'], return: 'int32' });
  const nBig = open().getFunction(name, { arguments: ['pointer'], return: 'int32' });
  const r = viaNode.raw[name] as (p: Int32Array) => number;
  const rk = viaKoffi.raw[name] as (p: Int32Array) => number;
  const impls: Record<string, Pass> = {
    koffi: (n) => {
      for (let i = 0; i < n; i++) k(out);
    },
    'node:ffi, ArrayBuffer': (n) => {
      for (let i = 0; i < n; i++) nAb(outBuffer);
    },
    'node:ffi, bigint address': (n) => {
      for (let i = 0; i < n; i++) nBig(outAddress);
    },
    'raw, node:ffi': (n) => {
      for (let i = 0; i < n; i++) r(out);
    },
    ...(before
      ? {
          'raw, node:ffi (before)': (
            (f: (p: Int32Array) => number): Pass =>
            (n) => {
              for (let i = 0; i < n; i++) f(out);
            }
          )(before.raw[name] as (p: Int32Array) => number),
        }
      : {}),
    'raw, koffi': (n) => {
      for (let i = 0; i < n; i++) rk(out);
    },
  };
  if (typedOk) {
    const tf = viaNode.typed[name] as () => number;
    const tkf = viaKoffi.typed[name] as () => number;
    impls['typed, node:ffi'] = (n) => {
      for (let i = 0; i < n; i++) tf();
    };
    if (before) {
      const tb = before.typed[name] as () => number;
      impls['typed, node:ffi (before)'] = (n) => {
        for (let i = 0; i < n; i++) tb();
      };
    }
    impls['typed, koffi'] = (n) => {
      for (let i = 0; i < n; i++) tkf();
    };
  }
  return { name: `${name}(int *)`, impls: withC(impls, loop) };
}

function attributeRow(withC: WithC): Row {
  const kAttr = kf('cudaDeviceGetAttribute', ['void *', 'int', 'int']);
  const nAttr = open().getFunction('cudaDeviceGetAttribute', { arguments: ['pointer', 'int32', 'int32'], return: 'int32' });
  const rAttr = viaNode.raw.cudaDeviceGetAttribute as (o: Int32Array, a: number, d: number) => number;
  const rkAttr = viaKoffi.raw.cudaDeviceGetAttribute as (o: Int32Array, a: number, d: number) => number;
  return {
    name: 'cudaDeviceGetAttribute(int *, int, int)',
    impls: withC(
      {
        koffi: (n) => {
          for (let i = 0; i < n; i++) kAttr(out, 16, 0);
        },
        'node:ffi, bigint address': (n) => {
          for (let i = 0; i < n; i++) nAttr(outAddress, 16, 0);
        },
        'raw, node:ffi': (n) => {
          for (let i = 0; i < n; i++) rAttr(out, 16, 0);
        },
        ...(before
          ? {
              'raw, node:ffi (before)': (
                (f: (o: Int32Array, a: number, d: number) => number): Pass =>
                (n) => {
                  for (let i = 0; i < n; i++) f(out, 16, 0);
                }
              )(before.raw.cudaDeviceGetAttribute as (o: Int32Array, a: number, d: number) => number),
            }
          : {}),
        'raw, koffi': (n) => {
          for (let i = 0; i < n; i++) rkAttr(out, 16, 0);
        },
      },
      'getAttribute',
    ),
  };
}

function memcpy2DRow(withC: WithC): Row {
  const kCopy = kf('cudaMemcpy2DAsync', ['void *', 'size_t', 'void *', 'size_t', 'size_t', 'size_t', 'int', 'void *']);
  type Copy = (d: Uint8Array, dp: number, s: Uint8Array, sp: number, w: number, h: number, k: number, st: number) => number;
  const rCopy = viaNode.raw.cudaMemcpy2DAsync as Copy;
  const nCopy = open().getFunction('cudaMemcpy2DAsync', {
    arguments: ['pointer', 'uint64', 'pointer', 'uint64', 'uint64', 'uint64', 'int32', 'pointer'],
    return: 'int32',
  });
  const dstAddress = ffi!.getRawPointer(dst.buffer as ArrayBuffer) + BigInt(dst.byteOffset);
  const srcAddress = ffi!.getRawPointer(src.buffer as ArrayBuffer) + BigInt(src.byteOffset);
  const rkCopy = viaKoffi.raw.cudaMemcpy2DAsync as Copy;
  return {
    name: 'cudaMemcpy2DAsync(void *, size_t, const void *, size_t, size_t, size_t, kind, stream): 8 arguments',
    impls: withC(
      {
        koffi: (n) => {
          for (let i = 0; i < n; i++) kCopy(dst, 64, src, 64, 8, 1, 0, null);
        },
        // node:ffi's own shared-buffer call, which is why the binder keeps such functions on koffi
        'node:ffi, shared buffer': (n) => {
          for (let i = 0; i < n; i++) nCopy(dstAddress, 64n, srcAddress, 64n, 8n, 1n, 0, 0n);
        },
        'raw, CUDA_TS_FFI=node (on koffi)': (n) => {
          for (let i = 0; i < n; i++) rCopy(dst, 64, src, 64, 8, 1, 0, 0);
        },
        ...(before
          ? {
              'raw, node:ffi (before)': (
                (f: Copy): Pass =>
                (n) => {
                  for (let i = 0; i < n; i++) f(dst, 64, src, 64, 8, 1, 0, 0);
                }
              )(before.raw.cudaMemcpy2DAsync as Copy),
            }
          : {}),
        'raw, koffi': (n) => {
          for (let i = 0; i < n; i++) rkCopy(dst, 64, src, 64, 8, 1, 0, 0);
        },
      },
      'memcpy2DAsync',
    ),
  };
}

function rows(): Row[] {
  const c = cLoops();
  const withC: WithC = (impls, loop) => (c ? { C: c[loop], ...impls } : impls);
  const outRows: Row[] = [lastErrorRow(withC)];
  for (const [name, loop, typedOk] of [
    ['cudaRuntimeGetVersion', 'runtimeVersion', true],
    ['cudaDriverGetVersion', 'driverVersion', true],
    ['cudaGetDevice', 'getDevice', false],
  ] as const) {
    outRows.push(outParamRow(withC, name, loop, typedOk));
  }
  outRows.push(attributeRow(withC));
  outRows.push(memcpy2DRow(withC));
  return outRows;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

const REPS = Number(process.env.BENCH_REPS ?? 15);
const N = Number(process.env.BENCH_CALLS ?? 100_000);
const only = process.env.BENCH_ONLY?.split(',');
const all = rows().filter((r) => !only || only.some((o) => r.name.includes(o)));
console.log(
  `node:ffi call cost, CPU (libcudart without a GPU), node ${process.version}; ${REPS} interleaved repetitions of ${N} calls; ns per call: median [min–max], ×C: median [min–max] of per-repetition ratios`,
);
const results: Record<string, Record<string, number[]>> = {};
for (const row of all) {
  const names = Object.keys(row.impls);
  const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (const n of names) row.impls[n](Math.max(1000, N / 5)); // warm (and JIT) every implementation
  for (let r = 0; r < REPS; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + r) % names.length];
      const t0 = process.hrtime.bigint();
      row.impls[name](N);
      times[name].push(Number(process.hrtime.bigint() - t0) / N);
    }
  }
  results[row.name] = times;
  console.log(`\n${row.name}`);
  for (const n of names) {
    const ts = times[n];
    const ratio = times.C && n !== 'C' ? ts.map((t, k) => t / times.C[k]) : undefined;
    const rs = ratio ? `  ×C ${median(ratio).toFixed(2)} [${Math.min(...ratio).toFixed(2)}–${Math.max(...ratio).toFixed(2)}]` : '';
    console.log(`  ${n.padEnd(26)} ${median(ts).toFixed(1).padStart(7)} ns [${Math.min(...ts).toFixed(1)}–${Math.max(...ts).toFixed(1)}]${rs}`);
  }
}
if (process.env.OUT) writeFileSync(join(process.env.OUT, 'nodeffi-cost.json'), JSON.stringify(results, null, 1));
