// The doctor's view of the JavaScript side: which runtime runs it, which FFI the bindings call C
// through there, and the on-disk kernel cache (its place and size).
import {
  bunFfiUnavailableReason,
  defaultFfi,
  denoFfiUnavailableReason,
  FFI_BACKENDS,
  jsRuntime,
  jsRuntimeName,
  jsRuntimeVersion,
  nodeFfiUnavailableReason,
  type FfiBackend,
  type JsRuntime,
} from '../../support';
import { kernelCacheStats } from '../kernel-cache';
import type { Problem } from './report';

/** The runtime and the FFI in use. */
export interface RuntimeFinding {
  /** `node`, `bun` or `deno`. */
  name: JsRuntime;
  version: string;
  /** The FFI the generated modules bind through by default here (CUDA_TS_FFI or the runtime's own). */
  ffi?: FfiBackend;
  /** Why that FFI cannot be used here (every function then stays on koffi), or why CUDA_TS_FFI is refused. */
  ffiUnavailable?: string;
}

/** The kernel cache as found now. */
export interface KernelCacheFinding {
  enabled: boolean;
  dir?: string;
  maxBytes?: number;
  entries?: number;
  bytes?: number;
  /** A setting the cache refuses. */
  error?: string;
}

/** Why `ffi` cannot bind in this process ('' when it can); loads only the asked backend's module. */
function unavailable(ffi: FfiBackend): string {
  try {
    return backendUnavailable(ffi);
  } catch (e) {
    return `its module did not load: ${String((e as Error)?.message ?? e).split('\n')[0]}`; // koffi, under it
  }
}

function backendUnavailable(ffi: FfiBackend): string {
  // each backend's module loads only when asked about (the support package's lazy entries)
  if (ffi === 'node') return nodeFfiUnavailableReason();
  if (ffi === 'bun') return bunFfiUnavailableReason();
  if (ffi === 'deno') return denoFfiUnavailableReason();
  return '';
}

/** The runtime, its FFI and the kernel cache, with what is wrong about them. */
export function probeRuntime(env: NodeJS.ProcessEnv = process.env): { runtime: RuntimeFinding; kernelCache: KernelCacheFinding; problems: Problem[] } {
  const problems: Problem[] = [];
  const runtime: RuntimeFinding = { name: jsRuntime(), version: jsRuntimeVersion() };
  const ffi = defaultFfi(env.CUDA_TS_FFI);
  if ((FFI_BACKENDS as readonly string[]).includes(ffi)) {
    runtime.ffi = ffi as FfiBackend;
    const why = unavailable(runtime.ffi);
    if (why) {
      runtime.ffiUnavailable = why;
      const asked = env.CUDA_TS_FFI ? `CUDA_TS_FFI=${runtime.ffi}` : `the default FFI here (${runtime.ffi})`;
      const fix = env.CUDA_TS_FFI
        ? "unset CUDA_TS_FFI (the default is the runtime's own FFI under Bun and Deno, koffi under Node)"
        : 'see the message: nothing needs changing where koffi works';
      problems.push({ severity: 'warning', message: `${asked} cannot be used: ${why}; every function is called through koffi`, fix });
    }
  } else {
    runtime.ffiUnavailable = ffi;
    problems.push({ severity: 'error', message: ffi, fix: `set CUDA_TS_FFI to one of ${FFI_BACKENDS.join(', ')}, or unset it` });
  }
  let kernelCache: KernelCacheFinding;
  try {
    const s = kernelCacheStats(env);
    kernelCache = { enabled: s.enabled, dir: s.dir, maxBytes: s.maxBytes, entries: s.entries, bytes: s.bytes };
  } catch (e) {
    kernelCache = { enabled: false, error: (e as Error).message };
    problems.push({ severity: 'error', message: (e as Error).message, fix: 'fix or unset CUDA_TS_CACHE / CUDA_TS_CACHE_MAX_BYTES (see src/kernel-cache.ts)' });
  }
  return { runtime, kernelCache, problems };
}

const FFI_NAMES: Record<FfiBackend, string> = { koffi: 'koffi', node: 'node:ffi', bun: 'bun:ffi', deno: 'Deno.dlopen' };

/** The runtime and cache sections of the doctor's screen. */
export function formatRuntime(runtime: RuntimeFinding | undefined, cache: KernelCacheFinding | undefined): string[] {
  const lines: string[] = [];
  if (runtime) {
    lines.push('', 'Runtime');
    const ffi = runtime.ffi
      ? `FFI ${FFI_NAMES[runtime.ffi]}${runtime.ffiUnavailable ? ` unavailable (${runtime.ffiUnavailable}): koffi` : ''}`
      : `FFI koffi (${runtime.ffiUnavailable})`;
    const fallback = runtime.ffi && runtime.ffi !== 'koffi' && !runtime.ffiUnavailable ? ', koffi for what it cannot express' : '';
    lines.push(`  ${jsRuntimeName(runtime.name)} ${runtime.version}, ${ffi}${fallback}`);
  }
  if (cache) {
    lines.push('', 'Kernel cache');
    if (cache.error) lines.push(`  refused: ${cache.error}`);
    else {
      const size = `${cache.entries ?? 0} entries, ${mib(cache.bytes ?? 0)} of ${mib(cache.maxBytes ?? 0)}`;
      lines.push(`  ${cache.dir}: ${cache.enabled ? size : `off (CUDA_TS_CACHE=0; ${size})`}`);
    }
  }
  return lines;
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}
