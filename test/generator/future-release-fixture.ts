// A CUDA release newer than any the project stores, made from the 13.0 headers: CUDA_VERSION raised to
// 13.5, one new driver function with its PFN_…_v13050 typedef, one new CUresult value and one new
// field at the end of CUDA_ARRAY_DESCRIPTOR_st. Shared by the CPU test (generates it) and the GPU test
// (binds the new function on a 13.0 driver). No NVIDIA text is added: only the declarations below.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const FUTURE = {
  release: '13.5',
  version: 13050,
  fn: 'cuMemFutureHint',
  enumType: 'CUresult',
  enumMember: 'CUDA_ERROR_FUTURE_HINT',
  enumValue: '990',
  record: 'struct CUDA_ARRAY_DESCRIPTOR_st',
  field: 'futureFlags',
} as const;

/** The binding-table line the generator emits for the new function (types as of the 13.0 emitter). */
export const FUTURE_BINDING_LINE = `${FUTURE.fn}|${FUTURE.fn}||int32_t|uintptr_t,uint64_t,uint32_t|${FUTURE.release}|${FUTURE.fn}:${FUTURE.version}`;

/** The 13.0 header set shipped beside the repository. */
export const HEADERS_13_0 = join(__dirname, '..', '..', '..', 'shared', 'cuda-headers', 'cuda-13.0.tar.gz');

function patch(file: string, from: string | RegExp, to: string): void {
  const text = readFileSync(file, 'utf8');
  const next = text.replace(from, to);
  if (next === text) throw new Error(`fixture: ${from} not found in ${file}`);
  writeFileSync(file, next);
}

/** Extracts the 13.0 headers into `dir` (DIR/include) and turns them into the 13.5 fixture. */
export function makeFutureToolkit(dir: string, tarball = HEADERS_13_0): void {
  const r = spawnSync('tar', ['xzf', tarball, '-C', dir, 'include'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tar failed: ${r.stderr}`);
  const inc = join(dir, 'include');
  patch(join(inc, 'cuda.h'), /#define CUDA_VERSION 13000\b/, `#define CUDA_VERSION ${FUTURE.version}`);
  patch(join(inc, 'cuda.h'), /(\n\s*CUDA_ERROR_UNKNOWN\s*= 999)/, `\n    ${FUTURE.enumMember} = ${FUTURE.enumValue},$1`);
  patch(join(inc, 'cuda.h'), /(unsigned int NumChannels;[^\n]*\n)(\} CUDA_ARRAY_DESCRIPTOR_v2;)/, `$1    unsigned int ${FUTURE.field};\n$2`);
  patch(
    join(inc, 'cuda.h'),
    /(CUresult CUDAAPI cuCheckpointProcessUnlock\([^)]*\);\n)/,
    `$1CUresult CUDAAPI ${FUTURE.fn}(CUdeviceptr dptr, size_t bytes, unsigned int flags);\n`,
  );
  patch(
    join(inc, 'cudaTypedefs.h'),
    /(typedef CUresult \(CUDAAPI \*PFN_cuCtxSynchronize_v13000\)\(CUcontext ctx\);\n)/,
    `$1typedef CUresult (CUDAAPI *PFN_${FUTURE.fn}_v${FUTURE.version})(CUdeviceptr_v2 dptr, size_t bytes, unsigned int flags);\n`,
  );
}
