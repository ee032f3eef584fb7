// GPU suites run only where a CUDA driver and a device answer; elsewhere they skip with one reason.
import { join } from 'node:path';
import { loadLibrary } from '../../support';
import { Device, Program, type CompileOptions, type Module, type ProgramOptions } from '../../src';

function probe(): string | undefined {
  let lib;
  try {
    // the same search the driver bindings use (CUDA_TS_DRIVER_LIBRARY, CUDA_HOME, the loader, …)
    lib = loadLibrary({ module: 'driver', sonames: ['libcuda.so.1', 'libcuda.so'], env: 'CUDA_TS_DRIVER_LIBRARY' });
  } catch {
    return 'no CUDA driver (libcuda.so.1 not found)';
  }
  const status = lib.func('cuInit', 'int', ['uint32_t'])(0);
  if (status !== 0) return `cuInit failed with CUresult ${status}`;
  const count = new Int32Array(1);
  lib.func('cuDeviceGetCount', 'int', ['void *'])(count);
  return count[0] > 0 ? undefined : 'no CUDA device';
}

/**
 * scripts/run-ts.cjs, which runs a TypeScript file that imports src/ under Node, Bun and Deno alike: child
 * processes of the suites start `process.execPath` (this suite's runtime) with it, so that the GPU suites
 * run under each runtime (`bun file.ts` and Deno cannot link the sources themselves: see the runner).
 */
export const TS_RUNNER = join(__dirname, '..', '..', 'scripts', 'run-ts.cjs');

/** A rank script for the launcher (cuda-ts-run): under Node as is (the launcher loads tsx), else through the runner. */
export function rankScript(file: string): string[] {
  return process.versions.bun || process.versions.deno ? [TS_RUNNER, file] : [file];
}

/** Why GPU tests cannot run here, or undefined when they can. */
export const noGpuReason = probe();
if (noGpuReason) process.stderr.write(`GPU tests skipped: ${noGpuReason}\n`);

/** `describe` that runs on a GPU machine and otherwise skips with its reason in the title. */
export const describeGpu = (name: string, fn: () => void): void => {
  if (noGpuReason) describe.skip(`${name} — skipped: ${noGpuReason}`, fn);
  else describe(name, fn);
};

/** What a suite compiled and loaded on device 0 (read inside tests and hooks: set in beforeAll). */
export interface SuiteKernels {
  device: Device;
  program: Program;
  module: Module;
}

/**
 * Registers the beforeAll/afterAll pair the object suites share: makes device 0 current, compiles
 * `source` with NVRTC (`compileOptions`) and loads it; closes module and program after the suite.
 */
export function compileForSuite(source: string, options: ProgramOptions, compileOptions?: CompileOptions): SuiteKernels {
  const suite = {} as SuiteKernels;
  beforeAll(() => {
    suite.device = Device.get(0);
    suite.device.setCurrent();
    suite.program = new Program(source, options).compile(compileOptions);
    suite.module = suite.program.load();
  });
  afterAll(() => {
    suite.module?.close();
    suite.program?.close();
  });
  return suite;
}
