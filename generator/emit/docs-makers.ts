// Which function of a module returns each handle type, for the docs of a parameter that takes one
// ("an opaque handle, such as `cublasCreate` returns"): from the resolved semantics, a function whose
// typed layer returns a value of that type (an `out` parameter). Among several, one whose verb makes
// things (Create, Add, Init, then Get), one naming the type's stem (`CUstream`: cuStreamCreate before
// cuGreenCtxStreamCreate), then the shortest name: the docs name one example, never claim it is the only one.
import type { CType, ModuleIR } from '../ir/schema';
import type { FunctionSem } from '../semantics';

const VERBS = [/Create/, /Add/, /Init/, /Get/];

/** Handle type (or integer type naming a thing: `CUdevice`) → one function of the module that returns one. */
export function handleMakers(ir: ModuleIR, sems: readonly FunctionSem[]): Map<string, string> {
  const found = new Map<string, string[]>();
  const own = new Set(ir.typedefs.map((t) => t.name));
  ir.functions.forEach((fn, i) => {
    (sems[i]?.params ?? []).forEach(({ sem }, k) => {
      if (sem.role !== 'out') return;
      const name = sem.elem.t === 'handle' ? sem.elem.name : sem.elem.t === 'int' ? (sem.elem.brand ?? intTypedef(fn.params[k].type, fn.name, own)) : undefined;
      if (name) found.set(name, [...(found.get(name) ?? []), fn.name]);
    });
  });
  const out = new Map<string, string>();
  for (const [name, fns] of found) out.set(name, [...fns].sort((a, b) => rank(name, a) - rank(name, b) || a.length - b.length || a.localeCompare(b))[0]);
  return out;
}

/** An integer typedef that names a thing (`CUdevice`, from cuDeviceGet): the pointee's typedef, one of the
 *  module's own (not `size_t`, `uint32_t`), when the function's name holds its stem (so `cusolver_int_t`
 *  of cusolverDnIRSInfosGetNiters is no such thing). */
function intTypedef(t: CType, fn: string, own: ReadonlySet<string>): string | undefined {
  const name = t.kind === 'pointer' && t.to.kind === 'named' && own.has(t.to.name) && !/^(u?int\d+_t|s?size_t)$/.test(t.to.name) ? t.to.name : undefined;
  const s = name ? stem(name) : '';
  return name && /^[a-z]+$/.test(s) && fn.toLowerCase().includes(s) ? name : undefined;
}

/** The stem of a type name, lower case: module prefix and `_t` dropped (`cusparseMatDescr_t` → matdescr). */
function stem(type: string): string {
  return type
    .replace(/_t$/, '')
    .replace(
      /^(CU|cuda|cublasLt|cublas|cusparse|cusolverDn|cusolverSp|cusolverRf|cusolver|cudnn|nvml|nccl|curand|cufft|cupti|CUpti_|nvrtc|nvJitLink|nvFatbin|CUfile)/,
      '',
    )
    .toLowerCase();
}

/** Lower is better: the verb's place in VERBS (twice as heavy), plus one when the name lacks the stem. */
function rank(type: string, fn: string): number {
  const verb = VERBS.findIndex((re) => re.test(fn));
  const s = stem(type);
  return 2 * (verb < 0 ? VERBS.length : verb) + (s && fn.toLowerCase().includes(s) ? 0 : 1);
}
