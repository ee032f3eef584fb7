// The timed passes of bench/gpu.ts for the C-shaped layers: koffi declarations and cuda-ts's raw layer
// (rawPasses, one source for both), the typed layer (typedPasses), and NVRTC compile.
import koffi from 'koffi';
import type { CUdevice_attribute, CUdeviceptr, CUevent, CUfunction, CUstream } from '../generated/13.0/driver/types';
import { type Driver, type Passes, type RawApi, SAXPY, type State } from './gpu-common';

// Self-contained (re-evaluated from its source text for each implementation: no outer references).
export function rawPasses(apiIn: RawApi, S: State): Passes {
  // The functions the passes call, copied into a small plain object: every implementation is called
  // the same way (as local bindings or ESM named imports would be), so the property lookup on a
  // module's exports (a dictionary of ~1,500 names for a generated module) is in no row. Inline:
  // fresh() recompiles this function from its source, without the module's scope.
  const api = {} as RawApi;
  for (const n of [
    'cuCtxGetCurrent',
    'cuDeviceGetAttribute',
    'cuEventElapsedTime',
    'cuEventRecord',
    'cuEventSynchronize',
    'cuLaunchKernel',
    'cuMemAllocAsync',
    'cuMemFreeAsync',
    'cuMemcpyDtoHAsync',
    'cuMemcpyHtoDAsync',
    'cuStreamSynchronize',
  ])
    (api as unknown as Record<string, unknown>)[n] = (apiIn as unknown as Record<string, unknown>)[n];
  const out64 = new BigUint64Array(1);
  const out64lo = new Uint32Array(out64.buffer);
  const out32 = new Int32Array(1);
  const outF = new Float32Array(1);
  const fail = (what: string, st: number): never => {
    throw new Error(`${what} failed: CUresult ${st}`);
  };
  const stream = S.stream;
  const BATCH = S.BATCH;
  const launchBatched = (f: number, params: BigUint64Array | null) => (ops: number) => {
    for (let i = 0; i < ops; i++) {
      const st = api.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, params, null);
      if (st !== 0) fail('cuLaunchKernel', st);
      if ((i + 1) % BATCH === 0) {
        const s2 = api.cuStreamSynchronize(stream);
        if (s2 !== 0) fail('cuStreamSynchronize', s2);
      }
    }
    if (ops % BATCH) {
      const s2 = api.cuStreamSynchronize(stream);
      if (s2 !== 0) fail('cuStreamSynchronize', s2);
    }
  };
  const copy = (h2d: boolean, host: number | Uint8Array) => (ops: number) => {
    for (let i = 0; i < ops; i++) {
      const st = h2d ? api.cuMemcpyHtoDAsync(S.dBig, host, S.COPY_BYTES, stream) : api.cuMemcpyDtoHAsync(host, S.dBig, S.COPY_BYTES, stream);
      if (st !== 0) fail(h2d ? 'cuMemcpyHtoDAsync' : 'cuMemcpyDtoHAsync', st);
    }
    const s2 = api.cuStreamSynchronize(stream);
    if (s2 !== 0) fail('cuStreamSynchronize', s2);
  };
  return {
    cuCtxGetCurrent: (ops) => {
      for (let i = 0; i < ops; i++) {
        const st = api.cuCtxGetCurrent(out64);
        if (st !== 0) fail('cuCtxGetCurrent', st);
      }
    },
    cuDeviceGetAttribute: (ops) => {
      const dev = S.dev;
      const attr = S.attrSm;
      for (let i = 0; i < ops; i++) {
        const st = api.cuDeviceGetAttribute(out32, attr, dev);
        if (st !== 0) fail('cuDeviceGetAttribute', st);
      }
    },
    launch_0args: launchBatched(S.fEmpty, null),
    launch_4args: launchBatched(S.fArgs4, S.params4),
    launch_16args: launchBatched(S.fArgs16, S.params16),
    launch_sync: (ops) => {
      const f = S.fEmpty;
      for (let i = 0; i < ops; i++) {
        const st = api.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, null, null);
        if (st !== 0) fail('cuLaunchKernel', st);
        const s2 = api.cuStreamSynchronize(stream);
        if (s2 !== 0) fail('cuStreamSynchronize', s2);
      }
    },
    event_record_elapsed: (ops) => {
      const a = S.evStart;
      const b = S.evStop;
      for (let i = 0; i < ops; i++) {
        let st = api.cuEventRecord(a, stream);
        if (st !== 0) fail('cuEventRecord', st);
        st = api.cuEventRecord(b, stream);
        if (st !== 0) fail('cuEventRecord', st);
        st = api.cuEventSynchronize(b);
        if (st !== 0) fail('cuEventSynchronize', st);
        st = api.cuEventElapsedTime(outF, a, b);
        if (st !== 0) fail('cuEventElapsedTime', st);
      }
    },
    alloc_free_async_1MiB: (ops) => {
      const bytes = S.ALLOC_BYTES;
      for (let i = 0; i < ops; i++) {
        let st = api.cuMemAllocAsync(out64, bytes, stream);
        if (st !== 0) fail('cuMemAllocAsync', st);
        st = api.cuMemFreeAsync(out64lo[1] * 0x100000000 + out64lo[0], stream);
        if (st !== 0) fail('cuMemFreeAsync', st);
        if ((i + 1) % BATCH === 0) {
          st = api.cuStreamSynchronize(stream);
          if (st !== 0) fail('cuStreamSynchronize', st);
        }
      }
      if (ops % BATCH) {
        const s2 = api.cuStreamSynchronize(stream);
        if (s2 !== 0) fail('cuStreamSynchronize', s2);
      }
    },
    // the copy rows only where set-up allocated their buffers (gpu-common's setup, `copies`)
    ...(S.copies
      ? {
          h2d_pinned_256MiB: copy(true, S.hPinned),
          d2h_pinned_256MiB: copy(false, S.hPinned),
          h2d_pageable_256MiB: copy(true, S.hPageable),
          d2h_pageable_256MiB: copy(false, S.hPageable),
        }
      : {}),
  };
}

// Same rows through the typed layer (throws on failure, returns out-parameters).
export function typedPasses(cuIn: Driver, S: State): Passes {
  const cu = {} as Driver; // as in rawPasses
  const names = 'cuCtxGetCurrent cuDeviceGetAttribute cuEventElapsedTime cuEventRecord cuEventSynchronize cuLaunchKernel cuMemAllocAsync';
  for (const n of `${names} cuMemFreeAsync cuMemcpyDtoHAsync cuMemcpyHtoDAsync cuStreamSynchronize`.split(' ')) {
    (cu as unknown as Record<string, unknown>)[n] = (cuIn as unknown as Record<string, unknown>)[n];
  }
  const outF = new Float32Array(1);
  const COPY_BYTES = S.COPY_BYTES;
  const ALLOC_BYTES = S.ALLOC_BYTES;
  const st = S.stream as unknown as CUstream;
  const BATCH = S.BATCH;
  const launchBatched = (f: number, params: BigUint64Array | null) => (ops: number) => {
    const fn = f as unknown as CUfunction;
    for (let i = 0; i < ops; i++) {
      cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st, params, null);
      if ((i + 1) % BATCH === 0) cu.cuStreamSynchronize(st);
    }
    if (ops % BATCH) cu.cuStreamSynchronize(st);
  };
  const dBig = S.dBig as unknown as CUdeviceptr;
  const evA = S.evStart as unknown as CUevent;
  const evB = S.evStop as unknown as CUevent;
  const copy = (h2d: boolean, host: number | Uint8Array) => (ops: number) => {
    for (let i = 0; i < ops; i++) {
      if (h2d) cu.cuMemcpyHtoDAsync(dBig, host, COPY_BYTES, st);
      else cu.cuMemcpyDtoHAsync(host, dBig, COPY_BYTES, st);
    }
    cu.cuStreamSynchronize(st);
  };
  const attr = S.attrSm as CUdevice_attribute;
  return {
    cuCtxGetCurrent: (ops) => {
      let acc = 0;
      for (let i = 0; i < ops; i++) acc += cu.cuCtxGetCurrent() === 0 ? 1 : 0;
      if (acc) throw new Error('cuCtxGetCurrent returned no context');
    },
    cuDeviceGetAttribute: (ops) => {
      let acc = 0;
      const dev = S.dev;
      for (let i = 0; i < ops; i++) acc += cu.cuDeviceGetAttribute(attr, dev);
      if (acc <= 0) throw new Error('cuDeviceGetAttribute returned no SMs');
    },
    launch_0args: launchBatched(S.fEmpty, null),
    launch_4args: launchBatched(S.fArgs4, S.params4),
    launch_16args: launchBatched(S.fArgs16, S.params16),
    launch_sync: (ops) => {
      const f = S.fEmpty as unknown as CUfunction;
      for (let i = 0; i < ops; i++) {
        cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, st, null, null);
        cu.cuStreamSynchronize(st);
      }
    },
    event_record_elapsed: (ops) => {
      for (let i = 0; i < ops; i++) {
        cu.cuEventRecord(evA, st);
        cu.cuEventRecord(evB, st);
        cu.cuEventSynchronize(evB);
        outF[0] = cu.cuEventElapsedTime(evA, evB);
      }
    },
    alloc_free_async_1MiB: (ops) => {
      for (let i = 0; i < ops; i++) {
        cu.cuMemFreeAsync(cu.cuMemAllocAsync(ALLOC_BYTES, st), st);
        if ((i + 1) % BATCH === 0) cu.cuStreamSynchronize(st);
      }
      if (ops % BATCH) cu.cuStreamSynchronize(st);
    },
    // the copy rows only where set-up allocated their buffers (gpu-common's setup, `copies`)
    ...(S.copies
      ? {
          h2d_pinned_256MiB: copy(true, S.hPinned),
          d2h_pinned_256MiB: copy(false, S.hPinned),
          h2d_pageable_256MiB: copy(true, S.hPageable),
          d2h_pageable_256MiB: copy(false, S.hPageable),
        }
      : {}),
  };
}

/** Re-evaluates a self-contained function from its text, so that it gets its own feedback/JIT state. */
export function fresh<F extends (...args: never[]) => unknown>(fn: F): F {
  // esbuild (tsx) may insert __name(...) calls when keeping names: give it an identity helper.
  return new Function('__name', `return (${fn.toString()});`)((f: unknown) => f) as F;
}

/** Hand-declared koffi functions on the same libcuda (exported symbols, handles as numbers). */
export function koffiApi(lib: ReturnType<typeof koffi.load>): RawApi & { asyncSync: (s: number, cb: (e: unknown, r: number) => void) => void } {
  const f = (decl: string) => lib.func(decl) as never;
  const sync = lib.func('int cuStreamSynchronize(uintptr_t hStream)');
  return {
    cuCtxGetCurrent: f('int cuCtxGetCurrent(void *pctx)'),
    cuDeviceGetAttribute: f('int cuDeviceGetAttribute(void *pi, int attrib, int dev)'),
    cuLaunchKernel: f(
      'int cuLaunchKernel(uintptr_t f, uint gx, uint gy, uint gz, uint bx, uint by, uint bz, uint shmem, uintptr_t hStream, void *kernelParams, void *extra)',
    ),
    cuStreamSynchronize: sync as never,
    cuEventRecord: f('int cuEventRecord(uintptr_t hEvent, uintptr_t hStream)'),
    cuEventSynchronize: f('int cuEventSynchronize(uintptr_t hEvent)'),
    cuEventElapsedTime: f('int cuEventElapsedTime_v2(void *pMilliseconds, uintptr_t hStart, uintptr_t hEnd)'),
    cuMemAllocAsync: f('int cuMemAllocAsync(void *dptr, uint64_t bytesize, uintptr_t hStream)'),
    cuMemFreeAsync: f('int cuMemFreeAsync(uintptr_t dptr, uintptr_t hStream)'),
    cuMemcpyHtoDAsync: f('int cuMemcpyHtoDAsync_v2(uintptr_t dst, void *src, uint64_t bytes, uintptr_t hStream)'),
    cuMemcpyDtoHAsync: f('int cuMemcpyDtoHAsync_v2(void *dst, uintptr_t src, uint64_t bytes, uintptr_t hStream)'),
    asyncSync: (s, cb) => (sync as unknown as { async: (s: number, cb: (e: unknown, r: number) => void) => void }).async(s, cb),
  };
}

/** NVRTC compile of SAXPY (create + compile + PTX size + PTX + destroy), ms each; C-shaped API. */
export interface NvrtcRaw {
  nvrtcCreateProgram(prog: BigUint64Array, src: string, name: string, nh: number, h: null, n: null): number;
  nvrtcCompileProgram(prog: number, nopt: number, opts: BigUint64Array): number;
  nvrtcGetPTXSize(prog: number, size: BigUint64Array): number;
  nvrtcGetPTX(prog: number, buf: Uint8Array): number;
  nvrtcDestroyProgram(prog: BigUint64Array): number;
}
export function nvrtcPass(api: NvrtcRaw, arch: string): (ops: number) => void {
  const opt = Buffer.from(`--gpu-architecture=${arch}\0`);
  const optBlock = koffi.alloc('uint8_t', opt.length);
  new Uint8Array(koffi.view(optBlock, opt.length)).set(opt);
  const opts = BigUint64Array.of(BigInt(koffi.address(optBlock)));
  const prog = new BigUint64Array(1);
  const size = new BigUint64Array(1);
  const ck = (what: string, st: number) => {
    if (st !== 0) throw new Error(`${what} failed: nvrtcResult ${st}`);
  };
  return (ops) => {
    for (let i = 0; i < ops; i++) {
      ck('nvrtcCreateProgram', api.nvrtcCreateProgram(prog, SAXPY, 'saxpy.cu', 0, null, null));
      const p = Number(prog[0]);
      try {
        ck('nvrtcCompileProgram', api.nvrtcCompileProgram(p, 1, opts));
        ck('nvrtcGetPTXSize', api.nvrtcGetPTXSize(p, size));
        const buf = new Uint8Array(Number(size[0]));
        ck('nvrtcGetPTX', api.nvrtcGetPTX(p, buf));
        if (!Buffer.from(buf.buffer).includes('.entry saxpy')) throw new Error('NVRTC output has no saxpy entry');
      } finally {
        api.nvrtcDestroyProgram(prog);
      }
    }
  };
}
