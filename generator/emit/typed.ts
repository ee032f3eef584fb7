// Emits `index.ts`: the typed layer, from the parameter-semantics model (generator/semantics). Each
// function checks every argument in JS (koffi would convert or crash on bad values), calls the C
// function, throws the module's CudaError subclass on a failing status, and returns the outputs (one
// value, or an object named as in C). Scalar outputs go through a per-function Scratch, made with the
// function itself on its first call (writeBound).
// What each parameter contributes is decided per role in ./typed-roles.ts; this file writes the plan out.
import { supportSpecifier } from '../support-path';
import type { FunctionDecl } from '../ir/schema';
import type { FunctionSem } from '../semantics';
import type { ModuleEmitContext } from './context';
import { cSignature, functionNotes, qualify } from './raw';
import { Writer } from './writer';
import { chunkPlan, writeStubs, type StubFn } from './lazy';
import { aliasStubs } from './aliases';
import { allocArray, readSlot, writeSlot } from './typed-elem';
import { noDocFacts, stubDoc, typedFunctionDoc } from './docs';
import { formatCType } from '../parse/ctype';
import { planFunction, typedIdent, type CapacityPlan, type FunctionEnv, type FunctionPlan, type ParamView } from './typed-roles';

export { typedIdent } from './typed-roles';

/** How one function's status is judged and documented. */
export interface FunctionOptions {
  /** The status code of a call expression (a struct status reads its code field). */
  statusOf: (call: string) => string;
  /** The function returns the module's status: a failing one throws. */
  isStatus: boolean;
  success: string;
  /** Other statuses this function returns instead of throwing, and their names. */
  answers: string[];
  answerNames: string[];
  /** Statuses meaning "the capacity asked was too small": expected on a capacity's first call. */
  insufficient: string[];
  errorClass: string;
  codeType: string;
  blocking: boolean;
  oneShot: (p: string) => boolean;
}

/** Writes one typed function into its chunk; returns its parameter names and TSDoc for the entry's stub. */
export function emitFunction(ctx: ModuleEmitContext, w: Writer, fn: FunctionDecl, sem: FunctionSem, opts: FunctionOptions): { params: string[]; doc: string } {
  const F = fn.name;
  const params: ParamView[] = fn.params.map((p, i) => ({ p, i, ident: typedIdent(p.name), sem: sem.params[i].sem }));
  const env: FunctionEnv = { ctx, fn, params, byName: new Map(params.map((x) => [x.p.name, x])), oneShot: opts.oneShot };
  const plan = planFunction(env);
  const retType = returnType(ctx, fn, plan, opts);
  const idents = plan.sig.map((x) => /^[\w$]+/.exec(x)![0]);
  const { model } = ctx;
  const doc = typedFunctionDoc(ctx.docs ?? noDocFacts(model.spec.name, model.ir.cudaVersion), {
    fn,
    sem,
    outs: plan.outs.map((o) => o.name),
    sentences: functionDoc(ctx, fn, plan, opts),
    params: idents.map((ident, k) => ({ i: params.find((x) => x.ident === ident)!.i, ident, tsType: plan.sig[k].slice(plan.sig[k].indexOf(': ') + 2) })),
    result: opts.isStatus ? undefined : `\`${formatCType(fn.returns, '').trim()}\``,
  });
  const callbacks = params.filter((x) => x.sem.role === 'callback' && opts.oneShot(x.p.name));
  const signature = `${F}(${plan.sig.join(', ')}): ${retType}`;
  if (plan.slots) {
    // A Scratch: the function is built on its first call around its own slots (see writeBound).
    w.line(`let ${F}$: typeof ${F} | undefined;`);
    w.line(`/** ${doc} */`);
    w.block(`export function ${signature}`, () => w.line(`return (${F}$ ??= bind$${F}())(${idents.join(', ')});`));
    w.line(`/** ${F} around its own Scratch, its views and its C function (built on the first call). */`);
    w.block(`function bind$${F}(): typeof ${F}`, () => writeBound(w, `${F}(${idents.join(', ')})`, fn, plan, opts, callbacks));
  } else {
    w.line(`let ${F}$c: NativeFunction | undefined;`);
    w.line(`/** ${doc} */`);
    w.block(`export function ${signature}`, () => writeBody(w, fn, plan, opts, callbacks, `(${F}$c ??= binder.native('${F}'))`));
  }
  // the entry's stub keeps the summary: editors show the implementation's TSDoc (tags included) at a call
  return { params: idents, doc: stubDoc(doc) };
}

function returnType(ctx: ModuleEmitContext, fn: FunctionDecl, plan: FunctionPlan, opts: FunctionOptions): string {
  const { outs } = plan;
  const outFields = outs.map((o) => `${typedIdent(o.name)}: ${o.type}`);
  const r = qualify(ctx.model.tsType(fn.returns, 'return'));
  if (opts.isStatus)
    return outs.length === 0 ? (opts.answers.length ? `T.${opts.codeType}` : 'void') : outs.length === 1 ? outs[0].type : `{ ${outFields.join('; ')} }`;
  return outs.length === 0 ? r : `{ result: ${r}; ${outFields.join('; ')} }`;
}

/** The TSDoc sentences of a typed function. */
function functionDoc(ctx: ModuleEmitContext, fn: FunctionDecl, plan: FunctionPlan, opts: FunctionOptions): string[] {
  const { model } = ctx;
  const doc = [`\`${cSignature(fn)}\` · ${fn.header} · CUDA ${model.ir.cudaVersion}`];
  // a one-shot callback takes a JS function: the raw layer's koffi.register advice does not apply
  doc.push(...functionNotes(model, fn).filter((n) => !n.startsWith('Takes a C callback') || !fn.params.some((p) => opts.oneShot(p.name))));
  doc.push(...plan.docNotes);
  if (opts.blocking) doc.push('Waits on the calling thread: refused (HostCallbackPendingError) while a JS callback is pending.');
  if (opts.isStatus)
    doc.push(
      `Throws {@link ${opts.errorClass}}${opts.answers.length ? ` unless the status is ${opts.answerNames.join(' or ')}` : ''}; a bad argument throws TypeError or RangeError before any call.`,
    );
  return doc;
}

/** What writing the call and its status checks needs. */
interface CallSite {
  w: Writer;
  F: string;
  /** The expression of the bound C function. */
  native: string;
  opts: FunctionOptions;
  /** One-shot callbacks to cancel when the call is refused. */
  callbacks: ParamView[];
}

function callExpr(site: CallSite, args: string[]): string {
  return `${site.native}(${args.join(', ')})`;
}

/** Throws the module's error unless status `st` is success, an answer, or one of `extra`. */
function writeStatusCheck(site: CallSite, st: string, extra: string[] = []): void {
  const { w, F, opts } = site;
  const cond = [`${st} !== ${opts.success}`, ...opts.answers.map((a) => `${st} !== ${a}`), ...extra.map((a) => `${st} !== ${a}`)].join(' && ');
  if (site.callbacks.length) {
    w.block(`if (${cond})`, () => {
      for (const cb of site.callbacks) w.line(`${cb.ident}$cb?.cancel(); // refused: it will never run`);
      w.line(`throw fail('${F}', ${st});`);
    });
  } else w.line(`if (${cond}) throw fail('${F}', ${st});`);
}

/** Asks the count first (null arrays, zero capacity), then fills arrays of that many. */
function writeCapacityCall(site: CallSite, plan: FunctionPlan, cap: CapacityPlan): void {
  const { w, opts } = site;
  const ci = plan.slotOf.get(cap.count)!;
  const first = plan.callArgs.map((a) => (cap.arrays.some((arr) => `${typedIdent(arr.name)}$` === a) ? 'null' : a));
  w.line(writeSlot(cap.elem, ci, '0'));
  w.line(`const asked = ${opts.statusOf(callExpr(site, first))};`);
  writeStatusCheck(site, 'asked', opts.insufficient);
  w.line(`let n = Number(${readSlot(cap.elem, ci)});`);
  for (const arr of cap.arrays) w.line(`const ${typedIdent(arr.name)}$ = ${allocArray(arr.elem, 'n')};`);
  w.block(`if (n > 0)`, () => {
    w.line(writeSlot(cap.elem, ci, 'n'));
    w.line(`const status = ${opts.statusOf(callExpr(site, plan.callArgs))};`);
    writeStatusCheck(site, 'status');
    w.line(`n = Math.min(n, Number(${readSlot(cap.elem, ci)}));`);
  });
}

/**
 * The body of bind$F: allocates F's Scratch, names the views and slots the call uses (consts the JIT
 * folds: a module-level `let` read on every call cost Deno ~2 ns of a 24 ns getter), binds the C
 * function (at once when F has no parameters; else on the first call, after its arguments are checked,
 * so a bad argument is refused before any library loads) and returns F itself.
 */
function writeBound(w: Writer, head: string, fn: FunctionDecl, plan: FunctionPlan, opts: FunctionOptions, callbacks: ParamView[]): void {
  const F = fn.name;
  // one slot: the whole buffer is that slot (s.bytes, the same 8 bytes): one view fewer to name in bind$F
  if (plan.slots === 1) plan.callArgs = plan.callArgs.map((a) => (a === 's.slot(0)' ? 's.bytes' : a));
  let bind = `binder.native('${F}')`;
  if (!plan.capacity && !plan.register.length && plan.callArgs.length > 0 && plan.callArgs.every(isSlotArgument)) {
    // only slots, the same memory every call: bound with them fixed (converted once for the FFI)
    bind = `binder.nativeFixed('${F}', [${plan.callArgs.join(', ')}])`;
    plan.callArgs = [];
  }
  // no parameters: nothing to check before the library loads, so bind now
  const bindNow = plan.sig.length === 0;
  const body = new Writer();
  writeBody(body, fn, plan, opts, callbacks, bindNow ? 'native' : `(native$ ??= ${bind})`);
  const { text, views } = scratchViews(body.toString());
  w.line(`const s = new Scratch(${plan.slots});`);
  if (views.length) w.line(`const ${views.map(([name, expr]) => `${name} = ${expr}`).join(', ')};`);
  w.line(bindNow ? `const native: NativeFunction = ${bind};` : `let native$: NativeFunction | undefined;`);
  if (lastKept(plan, opts) !== undefined) w.line(`let $lastLo = -1, $lastHi = -1, $last = 0; // the value last returned, and its two halves`);
  // typed by bind$F's return type (typeof F): the signature is written once, on F
  w.block(`return function ${head}`, () => w.lines(text.trimEnd().split('\n')), ';');
}

/** A Scratch view or slot in generated code (`s.u32`, `s.slot(2)`), and the const that names it. */
const SCRATCH_PART = /(?<![\w$.])s\.(?:(bytes|i8|i16|u16|i32|u32|i64|u64|f32|f64)\b|slot\((\d+)\))/g;

/** `text` with each Scratch view and slot it uses read through a const (`s$u32`, `s$slot2`), and those consts. */
function scratchViews(text: string): { text: string; views: [string, string][] } {
  const views = new Map<string, string>();
  const out = text.replace(SCRATCH_PART, (whole: string, view: string | undefined, slot: string | undefined) => {
    const name = view ? `s$${view}` : `s$slot${slot}`;
    views.set(name, whole);
    return name;
  });
  return { text: out, views: [...views] };
}

function writeBody(w: Writer, fn: FunctionDecl, plan: FunctionPlan, opts: FunctionOptions, callbacks: ParamView[], native: string): void {
  const F = fn.name;
  if (opts.blocking) w.line(`assertMayBlock('${F}');`);
  for (const line of plan.pre) w.line(line);
  for (const line of plan.late) w.line(line);
  if (plan.register.length) {
    // bind before registering: a missing library or symbol must not leave a callback counted as pending
    w.line(`const native = ${native};`);
    native = 'native';
    for (const line of plan.register) w.line(line);
  }
  const site: CallSite = { w, F, native, opts, callbacks };
  if (plan.capacity) writeCapacityCall(site, plan, plan.capacity);
  else if (opts.isStatus) {
    w.line(`const status = ${opts.statusOf(callExpr(site, plan.callArgs))};`);
    writeStatusCheck(site, 'status');
  } else w.line(`const result = ${callExpr(site, plan.callArgs)};`);
  for (const line of plan.post) w.line(line);
  writeReturn(w, plan, opts);
}

/** Whether a call argument is memory of the function's own Scratch (the whole buffer or one slot). */
function isSlotArgument(arg: string): boolean {
  return arg === 's.bytes' || /^s\.slot\(\d+\)$/.test(arg);
}

/**
 * The slot of a function's one output when that output is a 64-bit number read from its Scratch (a
 * handle, address or size): V8 boxes such a number past 2^31 into a new heap object on every return,
 * so the function keeps the last one it returned and gives it back while the slot holds the same
 * value: 0.3-1 ns a call under Deno and node:ffi (docs/runtimes.md); JavaScriptCore does not box, and
 * under Bun it costs nothing.
 */
function lastKept(plan: FunctionPlan, opts: FunctionOptions): number | undefined {
  return opts.isStatus && plan.outs.length === 1 && !plan.capacity ? plan.outs[0].slot64 : undefined;
}

function writeReturn(w: Writer, plan: FunctionPlan, opts: FunctionOptions): void {
  const { outs } = plan;
  const fields = outs.map((o) => `${typedIdent(o.name)}: ${o.value}`).join(', ');
  const kept = lastKept(plan, opts);
  if (kept !== undefined) {
    const as = outs[0].type === 'number' ? '' : ` as ${outs[0].type}`;
    w.line(`const $lo = s.u32[${2 * kept}], $hi = s.u32[${2 * kept + 1}];`);
    w.line(`if ($lo === $lastLo && $hi === $lastHi) return $last${as};`);
    w.line(`$lastLo = $lo;`);
    w.line(`$lastHi = $hi;`);
    w.line(`return ($last = $hi * 4294967296 + $lo)${as};`);
  } else if (opts.isStatus || plan.capacity) {
    if (outs.length) w.line(`return ${outs.length === 1 ? outs[0].value : `{ ${fields} }`};`);
    else if (opts.answers.length) w.line(`return status;`);
  } else if (outs.length) w.line(`return { result, ${fields} };`);
  else w.line(`return result;`);
}

/** The module's status type as the typed layer tests it: resolved once per module. */
interface StatusFacts {
  /** The TS name of the status code enum. */
  codeType: string;
  success: string;
  insufficient: string[];
  valueOf: (member: string) => string;
  returnsStatus: (fn: FunctionDecl) => boolean;
  statusOf: (call: string) => string;
}

function statusFacts(ctx: ModuleEmitContext): StatusFacts {
  const { model } = ctx;
  const { spec } = model;
  const status = spec.status;
  // The status: an enum (`CUresult`), or a struct whose `status.field` is one (cuFile's CUfileError_t).
  const declaredStatus = model.kind({ kind: 'named', name: status.type });
  let statusKind = declaredStatus;
  if (declaredStatus.k === 'record') {
    const f = status.field ? declaredStatus.decl.fields.find((x) => x.name === status.field) : undefined;
    if (!f) throw new Error(`status type ${status.type} of ${spec.name} is a struct: the catalog must name its code field (status.field)`);
    statusKind = model.kind(f.type);
  }
  if (statusKind.k !== 'enum') throw new Error(`status type ${status.type} of ${spec.name} is not an enum (nor a struct holding one)`);
  const statusEnum = statusKind;
  const successMember = statusEnum.decl.members.find((m) => m.name === status.success);
  if (!successMember) throw new Error(`${status.success} not found in ${status.type}`);
  return {
    codeType: statusEnum.ts,
    success: successMember.value,
    insufficient: statusEnum.decl.members.filter((m) => /INSUFFICIENT_SIZE|InsufficientSize/.test(m.name)).map((m) => m.value),
    valueOf: (name) => {
      const m = statusEnum.decl.members.find((x) => x.name === name);
      if (!m) throw new Error(`status ${name} not found in ${status.type}`);
      return m.value;
    },
    returnsStatus: (fn) => {
      const k = model.kind(fn.returns);
      if (declaredStatus.k === 'record') return k.k === 'record' && k.decl === declaredStatus.decl;
      return k.k === 'enum' && k.decl === statusEnum.decl;
    },
    statusOf: (call) => (declaredStatus.k === 'record' ? `(${call} as { ${status.field}: number }).${status.field}` : call),
  };
}

/** typed/shared.ts: the module's error class and its message lookup (from the library itself, at run time). */
function emitShared(ctx: ModuleEmitContext, facts: StatusFacts): string {
  const { spec } = ctx.model;
  const status = spec.status;
  const sh = new Writer();
  sh.line(ctx.banner);
  sh.line(`// The ${status.errorClass} class of the ${spec.title} and the failure helper its typed chunks share.`);
  sh.line(`import { CudaError, readCString } from '${supportSpecifier(1)}';`);
  sh.line(`import { binder } from '../binding';`);
  sh.line(`import * as T from '../types';`);
  sh.line(`void [binder, readCString];`);
  sh.blank();
  sh.line(`/** A failing ${status.type} from the ${spec.title}. \`name\` is the status name, \`func\` the C function. */`);
  sh.block(`export class ${status.errorClass} extends CudaError`, () => {
    sh.block(`constructor(func: string, code: number)`, () => {
      sh.line(`super('${spec.name}', func, code, T.${facts.codeType}[code] ?? \`${facts.codeType}(\${code})\`, describe(code));`);
    });
  });
  sh.blank();
  sh.line(`let describing = false;`);
  sh.block(`function describe(code: number): string | undefined`, () => {
    if (!status.describe) {
      sh.line(`void code;`);
      sh.line(`return undefined;`);
      return;
    }
    const describe = status.describe;
    sh.line(`if (describing) return undefined; // a failure while describing a failure`);
    sh.line(`describing = true;`);
    sh.block(`try`, () => {
      sh.line(`const fn = binder.native('${describe.fn}');`);
      if (describe.style === 'return') {
        sh.line(`return fn(code) ?? undefined;`);
      } else {
        sh.line(`const out = new BigUint64Array(1);`);
        sh.line(`return fn(code, out) === ${facts.success} ? (readCString(out[0]) ?? undefined) : undefined;`);
      }
    });
    sh.block(`catch`, () => sh.line(`return undefined;`));
    sh.block(`finally`, () => sh.line(`describing = false;`));
  });
  sh.blank();
  sh.line(`/** The error a failing status becomes. */`);
  sh.line(`export function fail(func: string, code: number): ${status.errorClass} {`);
  sh.line(`  return new ${status.errorClass}(func, code);`);
  sh.line(`}`);
  return sh.toString();
}

/** A chunk file's header: what it is, and the run-time helpers its functions use. */
function chunkWriter(
  ctx: ModuleEmitContext,
  chunk: string,
  fns: FunctionDecl[],
  blocking: (fn: FunctionDecl) => boolean,
  oneShot: (fn: FunctionDecl, p: string) => boolean,
): Writer {
  const { spec } = ctx.model;
  const cw = new Writer();
  cw.line(ctx.banner);
  cw.line(`// Typed layer of the ${spec.title}, ${chunk.replace('_', ' to ')} functions: loaded by ../index.ts on the first`);
  cw.line(`// call of one of them. Each function checks its arguments, calls the C function and throws ${spec.status.errorClass}.`);
  const runtimeImports = [
    'Scratch',
    'addressArg',
    'allocLength',
    'argError',
    'callbackArg',
    'checkRecord',
    'coversCount',
    'cstringArg',
    'decodeRecord',
    'decodeRecords',
    'int64Arg',
    'intError',
    'pointerArg',
    'readCString',
    'recordArg',
    'recordArrayArg',
    'sameLength',
    'scalarArrayArg',
    'stringArrayArg',
    'textFrom',
    'addressOf',
    'deviceArg',
    'hostArg',
    'memoryArg',
    'scalarArg',
  ];
  if (fns.some(blocking)) runtimeImports.push('assertMayBlock');
  if (fns.some((fn) => fn.params.some((p) => oneShot(fn, p.name)))) runtimeImports.push('oneShotCallback', 'type JsCallback');
  cw.line(`import { ${runtimeImports.join(', ')}, type NativeFunction } from '${supportSpecifier(1)}';`);
  cw.line(`import { binder } from '../binding';`);
  cw.line(`import * as T from '../types';`);
  cw.line(`import { records } from '../types';`);
  cw.line(`import { fail } from './shared';`);
  // (records inside a function: reading it here would build the module's record table at load)
  cw.line(
    `void [addressArg, allocLength, argError, callbackArg, checkRecord, coversCount, cstringArg, decodeRecord, decodeRecords, int64Arg, intError, pointerArg, readCString, recordArg, recordArrayArg, sameLength, scalarArrayArg, stringArrayArg, textFrom, addressOf, deviceArg, hostArg, memoryArg, scalarArg, () => records];`,
  );
  cw.blank();
  return cw;
}

/** index.ts: the typed entry, re-exporting types and the error class, with a lazy stub per function. */
function emitEntry(ctx: ModuleEmitContext, stubs: StubFn[]): string {
  const { spec } = ctx.model;
  const w = new Writer();
  w.line(ctx.banner);
  w.line(`// Typed layer of the ${spec.title}: throws ${spec.status.errorClass} (a CudaError) on failure and`);
  w.line(`// returns out-parameters. Each function calls the C function itself (the raw layer, \`./raw\`, is a`);
  w.line(`// separate import); types and constants are re-exported. The functions live in ./typed/<family>.ts,`);
  w.line(`// each loaded on the first call of one of its functions (see generator/emit/lazy.ts).`);
  w.line(`export * from './types';`);
  w.line(`export { binder, configure } from './binding';`);
  w.line(`export { ${spec.status.errorClass} } from './typed/shared';`);
  writeStubs(w, 'typed', stubs);
  return w.toString();
}

/** The typed layer of a module: its entry, typed/shared.ts and one file per chunk of functions. */
export function emitTyped(ctx: ModuleEmitContext): Map<string, string> {
  const { ir, spec } = ctx.model;
  const status = spec.status;
  const facts = statusFacts(ctx);
  const blocking = (fn: FunctionDecl) => !!spec.blocking?.test(fn.name);
  const oneShot = (fn: FunctionDecl, p: string) => (spec.oneShotCallbacks ?? []).includes(`${fn.name}.${p}`);
  const shared = emitShared(ctx, facts);
  const plan = chunkPlan(ir.functions.map((f) => f.name));
  const chunkFns = new Map<string, FunctionDecl[]>();
  for (const fn of ir.functions) chunkFns.set(plan.get(fn.name)!, [...(chunkFns.get(plan.get(fn.name)!) ?? []), fn]);
  const chunkWriters = new Map([...chunkFns].map(([chunk, fns]) => [chunk, chunkWriter(ctx, chunk, fns, blocking, oneShot)]));
  const stubs: StubFn[] = [];
  const byName = new Map<string, StubFn>();
  ir.functions.forEach((fn, k) => {
    const answerNames = status.answers?.[fn.name] ?? [];
    const chunk = plan.get(fn.name)!;
    const got = emitFunction(ctx, chunkWriters.get(chunk)!, fn, ctx.semantics[k], {
      statusOf: facts.statusOf,
      isStatus: facts.returnsStatus(fn),
      success: facts.success,
      answers: answerNames.map(facts.valueOf),
      answerNames,
      insufficient: facts.insufficient,
      errorClass: status.errorClass,
      codeType: facts.codeType,
      blocking: blocking(fn),
      oneShot: (p) => oneShot(fn, p),
    });
    const stub = { name: fn.name, target: fn.name, chunk, params: got.params, doc: got.doc };
    stubs.push(stub);
    byName.set(fn.name, stub);
  });
  stubs.push(...aliasStubs(ir.aliases, byName).map((s) => ({ ...s, doc: stubDoc(s.doc) })));
  const files = new Map<string, string>([
    ['index.ts', emitEntry(ctx, stubs)],
    ['typed/shared.ts', shared],
  ]);
  for (const [chunk, cw] of [...chunkWriters].sort((a, b) => (a[0] < b[0] ? -1 : 1))) files.set(`typed/${chunk}.ts`, cw.toString());
  return files;
}
