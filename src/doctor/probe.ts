// The doctor's eyes: finds the bindings releases installed with cuda-ts, loads each module's library the
// way its Binder would (same candidates, same order), asks each library its version, and asks the
// driver and NVML about the GPUs. Every native call takes only numbers and typed arrays (never a
// record, which koffi can abort the process on), and every probe is wrapped: a failure becomes a
// finding, never an exception.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { koffi } from '../../support';
import { libraryCandidates, readCString, requirement, textFrom, versionString, type BinderSpec } from '../../support';
import type { DriverFinding, GpuFinding, LibraryFinding, ReleaseFinding } from './report';

type Library = ReturnType<typeof koffi.load>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Native = (...args: any[]) => any;

/** Where generated/ sits relative to this file, in the repository (src/doctor) and the build (dist/src/doctor). */
export function generatedRoot(): string {
  return join(__dirname, '..', '..', 'generated');
}

/** The binder specs of every module of every release under `root`, newest release first. */
export function installedBindings(root = generatedRoot()): { release: string; specs: BinderSpec[] }[] {
  const releases = safeList(root)
    .filter((r) => /^\d+\.\d+$/.test(r))
    .sort(byVersionDescending);
  return releases.map((release) => {
    const specs: BinderSpec[] = [];
    for (const module of safeList(join(root, release))) {
      try {
        // binding.ts defines the module's Binder and loads nothing.
        const binding = require(join(root, release, module, 'binding')) as { binder?: { spec?: BinderSpec } };
        if (binding.binder?.spec) specs.push(binding.binder.spec);
      } catch {
        /* not a module folder, or one this build cannot read: not installed as far as we can tell */
      }
    }
    return { release, specs };
  });
}

/** The releases, with the driver each needs and whether the installed driver runs it. */
export function describeReleases(bindings: { release: string; specs: BinderSpec[] }[], driverCuda?: number): ReleaseFinding[] {
  return bindings.map(({ release, specs }) => {
    const number = specs[0]?.cudaVersionNumber ?? versionNumber(release);
    const minDriver = Number(/driver ≥ (\d+)/.exec(requirement(release))?.[1]) || undefined;
    return {
      release,
      modules: specs.map((s) => s.module),
      ...(minDriver ? { minDriver } : {}),
      ...(driverCuda !== undefined ? { driverRuns: driverCuda >= number } : {}),
    };
  });
}

// ---------------------------------------------------------------------------------------------------
// Loading, as the Binder does it

interface Loaded {
  lib?: Library;
  path?: string;
  loadedAs?: string;
  how?: string;
  error?: string;
}

const loads = new Map<string, { lib?: Library; error?: string; path?: string }>();

function mappedLibraries(): Set<string> {
  try {
    const out = new Set<string>();
    for (const line of readFileSync('/proc/self/maps', 'utf8').split('\n')) {
      const i = line.indexOf('/');
      if (i >= 0 && line.includes('.so')) out.add(line.slice(i).trim());
    }
    return out;
  } catch {
    return new Set();
  }
}

/** koffi.load once per name; the file the loader mapped, found by its base name in /proc/self/maps. */
function loadOnce(name: string): { lib?: Library; error?: string; path?: string } {
  const hit = loads.get(name);
  if (hit) return hit;
  const before = mappedLibraries();
  let result: { lib?: Library; error?: string; path?: string };
  try {
    const lib = koffi.load(name);
    const stem = basename(name).replace(/\.so.*$/, '.so');
    const fresh = [...mappedLibraries()].filter((p) => !before.has(p) && basename(p).startsWith(stem));
    result = { lib, path: name.includes('/') ? name : (fresh[0] ?? name) };
  } catch (e) {
    result = { error: firstLine(e) };
  }
  loads.set(name, result);
  return result;
}

/** The first candidate of `spec` that loads, as loadLibrary would pick it (an override that fails stops the search). */
export function findLibrary(spec: BinderSpec, env: NodeJS.ProcessEnv = process.env): Loaded {
  const tried: string[] = [];
  for (const { path, how } of libraryCandidates(spec, env)) {
    if (path.includes('/') && !existsSync(path)) {
      if (how === `$${spec.env}`) return { error: `$${spec.env} names ${path}, which does not exist`, how };
      continue;
    }
    const r = loadOnce(path);
    if (r.lib) return { lib: r.lib, path: r.path, loadedAs: path, how };
    tried.push(`${path}: ${r.error}`);
    if (how === `$${spec.env}`) return { error: `$${spec.env} names ${path}, which does not load: ${r.error}`, how };
  }
  // Files that exist but fail to load say most (a wrong architecture, a missing dependency).
  const fileFailure = tried.find((t) => t.startsWith('/'));
  return {
    error: `none of ${spec.sonames.join(', ')} could be loaded${fileFailure ? `; ${fileFailure}` : " (not in the system loader's path nor in any place searched)"}`,
  };
}

// ---------------------------------------------------------------------------------------------------
// Versions, each library its own way (plain int/size_t out-parameters only)

function fn(lib: Library, name: string, result: string, params: string[]): Native | undefined {
  try {
    return lib.func(name, result, params) as Native;
  } catch {
    return undefined;
  }
}

/** `int f(int *)` → the number, when the call succeeds. */
function intOut(lib: Library, name: string): number | undefined {
  const f = fn(lib, name, 'int', ['void *']);
  const out = new Int32Array(1);
  return f && f(out) === 0 ? out[0] : undefined;
}

/** `int f(int *major, int *minor)` → `major.minor`. */
function majorMinor(lib: Library, name: string): string | undefined {
  const f = fn(lib, name, 'int', ['void *', 'void *']);
  const major = new Int32Array(1);
  const minor = new Int32Array(1);
  return f && f(major, minor) === 0 ? `${major[0]}.${minor[0]}` : undefined;
}

/** `xGetProperty(MAJOR_VERSION | MINOR_VERSION | PATCH_LEVEL, int *)` → `major.minor.patch`. */
function properties(lib: Library, name: string): string | undefined {
  const f = fn(lib, name, 'int', ['int', 'void *']);
  if (!f) return undefined;
  const parts: number[] = [];
  for (const type of [0, 1, 2]) {
    const out = new Int32Array(1);
    if (f(type, out) !== 0) return undefined;
    parts.push(out[0]);
  }
  return parts.join('.');
}

/** A size_t (or int) return value in major*10000 + minor*100 + patch form. */
function encoded(n: number | bigint | undefined, base = 10000): string | undefined {
  if (n === undefined) return undefined;
  const v = Number(n);
  if (!Number.isFinite(v) || v <= 0) return undefined;
  const major = Math.floor(v / base);
  return `${major}.${Math.floor((v % base) / 100)}.${v % 100}`;
}

const VERSIONS: Record<string, (lib: Library) => string | undefined> = {
  runtime: (lib) => {
    const v = intOut(lib, 'cudaRuntimeGetVersion');
    return v ? versionString(v) : undefined;
  },
  nvrtc: (lib) => majorMinor(lib, 'nvrtcVersion'),
  nvjitlink: (lib) => majorMinor(lib, 'nvJitLinkVersion'),
  nvfatbin: (lib) => majorMinor(lib, 'nvFatbinVersion'),
  cublas: (lib) => properties(lib, 'cublasGetProperty'),
  cusparse: (lib) => properties(lib, 'cusparseGetProperty'),
  cusolver: (lib) => properties(lib, 'cusolverGetProperty'),
  curand: (lib) => properties(lib, 'curandGetProperty'),
  cufft: (lib) => properties(lib, 'cufftGetProperty'),
  cublaslt: (lib) => encoded(fn(lib, 'cublasLtGetVersion', 'size_t', [])?.()),
  cudnn: (lib) => encoded(fn(lib, 'cudnnGetVersion', 'size_t', [])?.()),
  nccl: (lib) => {
    const v = intOut(lib, 'ncclGetVersion');
    // NCCL_VERSION: major*1000 + minor*100 + patch up to 2.8, major*10000 + … after.
    return v === undefined ? undefined : v < 10000 ? encoded(v, 1000) : encoded(v);
  },
  cupti: (lib) => {
    const v = intOut(lib, 'cuptiGetVersion');
    return v === undefined ? undefined : `API ${v}`;
  },
  cufile: (lib) => {
    const v = intOut(lib, 'cuFileGetVersion');
    return v === undefined ? undefined : String(v);
  },
};

/** Every module's library across the releases: one finding per distinct file loaded (or one "not found"). */
export function probeLibraries(bindings: { release: string; specs: BinderSpec[] }[], env: NodeJS.ProcessEnv = process.env): LibraryFinding[] {
  const modules = [...new Set(bindings.flatMap((b) => b.specs.map((s) => s.module)))].filter((m) => m !== 'driver' && m !== 'nvml');
  const out: LibraryFinding[] = [];
  for (const module of modules) {
    const specs = bindings.flatMap((b) => b.specs.filter((s) => s.module === module));
    const sonames = [...new Set(specs.flatMap((s) => s.sonames))];
    const byPath = new Map<string, LibraryFinding>();
    const errors: string[] = [];
    for (const spec of specs) {
      const found = findLibrary(spec, env);
      if (!found.lib || !found.path) {
        if (found.error) errors.push(found.error);
        continue;
      }
      let finding = byPath.get(found.path);
      if (!finding) {
        let version: string | undefined;
        try {
          version = VERSIONS[module]?.(found.lib);
        } catch {
          version = undefined;
        }
        finding = { module, path: found.path, loadedAs: found.loadedAs, how: found.how, fits: [], sonames, env: spec.env, ...(version ? { version } : {}) };
        byPath.set(found.path, finding);
      }
      finding.fits.push(spec.cudaVersion);
    }
    if (byPath.size > 0) out.push(...byPath.values());
    // An override that fails is reported even when another release's soname loaded elsewhere.
    const overrideError = errors.find((e) => e.startsWith(`$${specs[0].env}`));
    if (byPath.size === 0 || overrideError) out.push({ module, fits: [], sonames, env: specs[0].env, error: overrideError ?? notFound(sonames, errors) });
  }
  return out;
}

/** One "none could be loaded" naming every release's sonames (each release's search names only its own),
 *  with the most telling reason: a file that exists but failed to load, else where nothing was found. */
export function notFound(sonames: string[], errors: string[]): string {
  const reasons = errors.map((e) => /^none of .*? could be loaded(.*)$/.exec(e)?.[1]).filter((r): r is string => r !== undefined);
  if (reasons.length === 0) return errors[0] ?? 'not found';
  return `none of ${sonames.join(', ')} could be loaded${reasons.find((r) => r.startsWith(';')) ?? reasons[0]}`;
}

// ---------------------------------------------------------------------------------------------------
// The driver, its GPUs, NVML

const CU_DEVICE_ATTRIBUTE = { multiprocessors: 16, pciBus: 33, pciDevice: 34, pciDomain: 50, ccMajor: 75, ccMinor: 76 };

/** The driver found through the newest release's driver spec, initialised, and its GPUs. */
export function probeDriver(spec: BinderSpec | undefined, env: NodeJS.ProcessEnv = process.env): { driver: DriverFinding; gpus: GpuFinding[] } {
  const fallback: BinderSpec = {
    module: 'driver',
    sonames: ['libcuda.so.1', 'libcuda.so'],
    env: 'CUDA_TS_DRIVER_LIBRARY',
    cudaVersion: '',
    cudaVersionNumber: 0,
    resolve: 'procAddress',
  };
  const found = findLibrary(spec ?? fallback, env);
  if (!found.lib) return { driver: { found: false, error: found.error, ...(found.how ? { how: found.how } : {}) }, gpus: [] };
  const lib = found.lib;
  const driver: DriverFinding = { found: true, path: found.path, how: found.how };
  // libcuda.so.580.82.07: the file name carries the driver version.
  const fromName = /\.so\.(\d{3,}\.\d+(?:\.\d+)?)$/.exec(found.path ?? '');
  if (fromName) driver.version = fromName[1];
  const cuda = intOut(lib, 'cuDriverGetVersion');
  if (cuda) {
    driver.cudaVersionNumber = cuda;
    driver.cudaVersion = versionString(cuda);
  }
  const cuInit = fn(lib, 'cuInit', 'int', ['uint32_t']);
  if (!cuInit) {
    driver.error = 'the library has no cuInit';
    return { driver, gpus: [] };
  }
  const status = cuInit(0) as number;
  driver.initStatus = status;
  if (status !== 0) {
    driver.initError = errorName(lib, status);
    return { driver, gpus: [] };
  }
  return { driver, gpus: listGpus(lib) };
}

function errorName(lib: Library, status: number): string {
  const f = fn(lib, 'cuGetErrorName', 'int', ['int', 'void *']);
  const out = new BigUint64Array(1);
  if (f && f(status, out) === 0 && out[0] !== 0n) return readCString(out[0]) ?? `CUresult ${status}`;
  return `CUresult ${status}`;
}

function listGpus(lib: Library): GpuFinding[] {
  const count = intOut(lib, 'cuDeviceGetCount') ?? 0;
  const get = fn(lib, 'cuDeviceGet', 'int', ['void *', 'int']);
  const name = fn(lib, 'cuDeviceGetName', 'int', ['void *', 'int', 'int']);
  const attr = fn(lib, 'cuDeviceGetAttribute', 'int', ['void *', 'int', 'int']);
  const totalMem = fn(lib, 'cuDeviceTotalMem_v2', 'int', ['void *', 'int']);
  const gpus: GpuFinding[] = [];
  for (let ordinal = 0; ordinal < count; ordinal++) {
    const dev = new Int32Array(1);
    if (!get || get(dev, ordinal) !== 0) continue;
    const nameBytes = new Uint8Array(256);
    const gpu: GpuFinding = { ordinal, name: name && name(nameBytes, nameBytes.length, dev[0]) === 0 ? textFrom(nameBytes) : `device ${ordinal}` };
    const a = (which: number): number | undefined => {
      const out = new Int32Array(1);
      return attr && attr(out, which, dev[0]) === 0 ? out[0] : undefined;
    };
    const [major, minor] = [a(CU_DEVICE_ATTRIBUTE.ccMajor), a(CU_DEVICE_ATTRIBUTE.ccMinor)];
    if (major !== undefined && minor !== undefined) gpu.computeCapability = `${major}.${minor}`;
    const mem = new BigUint64Array(1);
    if (totalMem && totalMem(mem, dev[0]) === 0) gpu.memoryBytes = Number(mem[0]);
    const sms = a(CU_DEVICE_ATTRIBUTE.multiprocessors);
    if (sms !== undefined) gpu.multiprocessors = sms;
    const [domain, bus, device] = [a(CU_DEVICE_ATTRIBUTE.pciDomain), a(CU_DEVICE_ATTRIBUTE.pciBus), a(CU_DEVICE_ATTRIBUTE.pciDevice)];
    if (domain !== undefined && bus !== undefined && device !== undefined) gpu.pciBusId = pciBusId(domain, bus, device);
    gpus.push(gpu);
  }
  return gpus;
}

function pciBusId(domain: number, bus: number, device: number): string {
  const hex = (n: number, w: number) => n.toString(16).padStart(w, '0');
  return `${hex(domain, 4)}:${hex(bus, 2)}:${hex(device, 2)}.0`;
}

/**
 * NVML's driver version and, per GPU matched by PCI bus id (or by order), MIG and persistence modes.
 * Mutates `gpus` and `driver`; returns NVML's own version or why it is unavailable.
 */
export function probeNvml(
  spec: BinderSpec | undefined,
  driver: DriverFinding,
  gpus: GpuFinding[],
  env: NodeJS.ProcessEnv = process.env,
): { version?: string; error?: string } {
  const fallback: BinderSpec = {
    module: 'nvml',
    sonames: ['libnvidia-ml.so.1'],
    env: 'CUDA_TS_NVML_LIBRARY',
    cudaVersion: '',
    cudaVersionNumber: 0,
    resolve: 'symbol',
  };
  const found = findLibrary(spec ?? fallback, env);
  if (!found.lib) return { error: found.error };
  const lib = found.lib;
  const init = fn(lib, 'nvmlInit_v2', 'int', []);
  const status = init ? (init() as number) : -1;
  if (status !== 0) return { error: `nvmlInit_v2 returned ${status}` };
  try {
    const text = (f: string): string | undefined => {
      const g = fn(lib, f, 'int', ['void *', 'uint32_t']);
      const bytes = new Uint8Array(96);
      return g && g(bytes, bytes.length) === 0 ? textFrom(bytes) : undefined;
    };
    const version = text('nvmlSystemGetNVMLVersion');
    const driverVersion = text('nvmlSystemGetDriverVersion');
    if (driverVersion) driver.version = driverVersion;
    const count = new Uint32Array(1);
    const getCount = fn(lib, 'nvmlDeviceGetCount_v2', 'int', ['void *']);
    const byIndex = fn(lib, 'nvmlDeviceGetHandleByIndex_v2', 'int', ['uint32_t', 'void *']);
    const busId = fn(lib, 'nvmlDeviceGetPciInfo_v3', 'int', ['uintptr_t', 'void *']);
    const mig = fn(lib, 'nvmlDeviceGetMigMode', 'int', ['uintptr_t', 'void *', 'void *']);
    const persistence = fn(lib, 'nvmlDeviceGetPersistenceMode', 'int', ['uintptr_t', 'void *']);
    if (getCount && byIndex && getCount(count) === 0) {
      for (let i = 0; i < count[0]; i++) {
        const handle = new BigUint64Array(1);
        if (byIndex(i, handle) !== 0) continue;
        const h = handle[0];
        // nvmlPciInfo_t (68 bytes in 13.0) starts with char busIdLegacy[16] ("0000:19:00.0"): a roomy
        // byte buffer, and only that prefix read.
        const pci = new Uint8Array(256);
        const id = busId && busId(h, pci) === 0 ? normalizePci(textFrom(pci.subarray(0, 16))) : undefined;
        const gpu = (id && gpus.find((g) => g.pciBusId === id)) || gpus[i];
        if (!gpu) continue;
        const current = new Uint32Array(1);
        const pending = new Uint32Array(1);
        if (mig && mig(h, current, pending) === 0) gpu.mig = current[0] === 1 ? 'enabled' : 'disabled';
        const mode = new Int32Array(1);
        if (persistence && persistence(h, mode) === 0) gpu.persistence = mode[0] === 1 ? 'enabled' : 'disabled';
      }
    }
    return version ? { version } : {};
  } finally {
    fn(lib, 'nvmlShutdown', 'int', [])?.();
  }
}

/** NVML's `00000000:19:00.0` → the driver's `0000:19:00.0` form. */
function normalizePci(id: string): string | undefined {
  const m = /^(?:([0-9a-f]+):)?([0-9a-f]{2}):([0-9a-f]{2})\.(\d)$/i.exec(id.trim());
  if (!m) return undefined;
  return `${(m[1] ?? '0').slice(-4).padStart(4, '0').toLowerCase()}:${m[2].toLowerCase()}:${m[3].toLowerCase()}.${m[4]}`;
}

// ---------------------------------------------------------------------------------------------------

/** The variables that change where cuda-ts looks or what it binds, as set now. */
export function environmentOverrides(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const names = Object.keys(env).filter(
    (k) =>
      k.startsWith('CUDA_TS_') ||
      [
        'CUDA_HOME',
        'CUDA_PATH',
        'LD_LIBRARY_PATH',
        'CONDA_PREFIX',
        'VIRTUAL_ENV',
        'PYTHONPATH',
        'CUDA_VISIBLE_DEVICES',
        'CUDA_DEVICE_ORDER',
        'CUDA_API_PER_THREAD_DEFAULT_STREAM',
        'CUDA_MODULE_LOADING',
        'NVIDIA_VISIBLE_DEVICES',
      ].includes(k),
  );
  return Object.fromEntries(names.sort().map((k) => [k, env[k] ?? '']));
}

/** The version of the cuda-ts package this file belongs to. */
export function cudaTsVersion(): string | undefined {
  // src/doctor → the repository; dist/src/doctor → the installed package.
  for (const up of [
    ['..', '..'],
    ['..', '..', '..'],
  ]) {
    try {
      const pkg = JSON.parse(readFileSync(join(__dirname, ...up, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'cuda-ts' && pkg.version) return pkg.version;
    } catch {
      /* try the next */
    }
  }
  return undefined;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function versionNumber(release: string): number {
  const [major, minor] = release.split('.').map(Number);
  return major * 1000 + minor * 10;
}

function byVersionDescending(a: string, b: string): number {
  return versionNumber(b) - versionNumber(a);
}

function firstLine(e: unknown): string {
  return String(e instanceof Error ? e.message : e).split('\n')[0];
}
