// Reviewed corrections to the parameter-semantics model, one table per module. Every entry says why
// the documentation and the C types did not give the right answer. Keys are `function.parameter`;
// a `*` matches any text in either part (`*.iter`, `cublas*.alpha`, `cusolverDn*.devInfo`).
import type { ModuleOverrides } from './model';
import { driver } from './overrides/driver';
import { cublas, cufft, cufile, cupti, cusolver, nccl, nvfatbin, nvjitlink, nvrtc } from './overrides/libraries';
import { cublaslt } from './overrides/cublaslt';
import { MATH_FACTS } from './overrides/math';
import { nvml } from './overrides/nvml';
import { runtime } from './overrides/runtime';

const TABLES: Record<string, ModuleOverrides> = { driver, runtime, nvml, nccl, cufft, cufile, cupti, cublas, cublaslt, cusolver, nvrtc, nvjitlink, nvfatbin };

/** The override table of a module (empty when it needs none), with its memory facts. */
export function overridesFor(module: string): ModuleOverrides {
  const own = TABLES[module] ?? { params: {} };
  const facts = MATH_FACTS[module];
  return facts
    ? {
        ...own,
        scalars: { ...own.scalars, ...facts.scalars },
        pointers: { ...own.pointers, ...facts.pointers },
        outUnits: { ...own.outUnits, ...facts.outUnits },
      }
    : own;
}

const patterns = new Map<string, RegExp>();
function patternOf(key: string): RegExp {
  let re = patterns.get(key);
  if (!re) {
    re = new RegExp(
      `^${key
        .split('*')
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('[^.]*')}$`,
    );
    patterns.set(key, re);
  }
  return re;
}

/** The entry of `table` for `fn.param`: the exact key, else the matching pattern with the most literal text. */
export function lookupOverride<T>(table: Record<string, T> | undefined, fn: string, param: string): T | undefined {
  if (!table) return undefined;
  const key = `${fn}.${param}`;
  if (Object.hasOwn(table, key)) return table[key];
  let best: string | undefined;
  for (const k of Object.keys(table)) {
    if (!k.includes('*') || !patternOf(k).test(key)) continue;
    if (best === undefined || k.replace(/\*/g, '').length > best.replace(/\*/g, '').length) best = k;
  }
  return best === undefined ? undefined : table[best];
}
