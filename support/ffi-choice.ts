// Which FFI the Binder binds through (koffi, node:ffi, bun:ffi, Deno.dlopen): the names and the
// default. Free of koffi, so that `cuda-ts doctor` can report the choice where koffi does not load.
import { jsRuntime } from './jsruntime';

/** The FFI a function is called through. */
export type FfiBackend = 'koffi' | 'node' | 'bun' | 'deno';
/** Every {@link FfiBackend}, for messages and checks. */
export const FFI_BACKENDS: readonly FfiBackend[] = ['koffi', 'node', 'bun', 'deno'];

/**
 * The FFI asked for by `CUDA_TS_FFI` (any value other than a backend's name is an error, reported
 * on the first call), else the running runtime's own FFI under Bun and Deno (their calls are several
 * times cheaper than koffi's through N-API), else koffi (under Node, node:ffi stays opt-in).
 */
export function defaultFfi(env: string | undefined = process.env.CUDA_TS_FFI): FfiBackend | string {
  if (env !== undefined && env !== '') {
    return (FFI_BACKENDS as readonly string[]).includes(env) ? (env as FfiBackend) : `CUDA_TS_FFI must be one of ${FFI_BACKENDS.join(', ')}, not '${env}'`;
  }
  const runtime = jsRuntime();
  return runtime === 'node' ? 'koffi' : runtime;
}
