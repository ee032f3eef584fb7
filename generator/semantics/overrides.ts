// Reviewed corrections to the parameter-semantics model, one table per module. Every entry says why
// the documentation and the C types did not give the right answer. Keys are `function.parameter`.
import type { ModuleOverrides } from './model';
import { driver } from './overrides/driver';
import { cublas, cublaslt, cufft, cufile, cupti, cusolver, nccl, nvfatbin, nvjitlink, nvrtc } from './overrides/libraries';
import { nvml } from './overrides/nvml';
import { runtime } from './overrides/runtime';

const TABLES: Record<string, ModuleOverrides> = { driver, runtime, nvml, nccl, cufft, cufile, cupti, cublas, cublaslt, cusolver, nvrtc, nvjitlink, nvfatbin };

/** The override table of a module (empty when it needs none). */
export function overridesFor(module: string): ModuleOverrides {
  return TABLES[module] ?? { params: {} };
}
