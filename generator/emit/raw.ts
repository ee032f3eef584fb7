// Emits `raw.ts`: C-exact functions returning what C returns (status codes), out-parameters through
// caller-provided typed arrays, each bound on its first call.
import { supportSpecifier } from '../support-path';
import type { FunctionDecl } from '../ir/schema';
import { formatCType } from '../parse/ctype';
import { safeIdent, type TypeModel } from '../model';
import { BINDING_TABLE_HEADER, writeBindingTable, type BindingEntry } from '../../support/tables/binding';
import { Writer } from './writer';
import { chunkPlan, writeStubs, type StubFn } from './lazy';
import { aliasStubs } from './aliases';
import { noDocFacts, rawFunctionDoc, stubDoc, type DocFacts } from './docs';
import type { FunctionSem } from '../semantics';

export interface EmitContext {
  model: TypeModel;
  banner: string;
  /** Release that introduced each function, when newer than the oldest stored release. */
  since: Map<string, string>;
  /** What the TSDoc says beyond the IR (./docs.ts); absent: IR facts only. */
  docs?: DocFacts;
  /** The parameter semantics, in IR order, where resolved: the raw docs name each parameter's role. */
  semantics?: FunctionSem[];
}

export function cSignature(fn: FunctionDecl): string {
  const params = fn.params.map((p) => formatCType(p.type, p.name)).join(', ') || 'void';
  return `${formatCType(fn.returns, `${fn.symbol}(${params}${fn.variadic ? ', ...' : ''})`)}`;
}

/** Doc sentences for a function: callbacks it takes (and whether they may run on a foreign thread),
 *  and whether its library is known not to export it. */
export function functionNotes(model: TypeModel, fn: FunctionDecl): string[] {
  const notes: string[] = [];
  const cbs = fn.params.filter((p) => model.kind(p.type).k === 'funcptr');
  if (cbs.length) {
    const names = cbs.map((p) => (p.type.kind === 'named' ? `\`${p.name}\` (callbacks.${p.type.name})` : `\`${p.name}\``));
    notes.push(`Takes a C callback ${names.join(', ')}: pass \`koffi.register(jsFn, koffi.pointer(proto))\` and unregister it when done.`);
    if ((model.spec.foreignThreadCallbacks ?? []).includes(fn.name)) {
      notes.push(
        'The library calls it from a thread of its own: koffi queues the call to the main event loop, so never block ' +
          'the main thread (a synchronous stream/context/device synchronize) while it is pending: that deadlocks. ' +
          'Poll (stream query) or use an async synchronize instead.',
      );
    }
  }
  if ((model.spec.notExported ?? []).includes(fn.name)) {
    notes.push('Declared by the headers but not exported by the library: calling it throws CudaSymbolError.');
  }
  return notes;
}

/** A parameter's FFI type in the binding table: a koffi type name, or `@Record` by value. */
export function tableParam(model: TypeModel, fn: FunctionDecl, i: number): string {
  const kind = model.kind(fn.params[i].type);
  if (kind.k === 'record') return `@${kind.ts}`;
  if (kind.k === 'array') return 'void *'; // arrays decay to pointers in parameters
  return model.ffiScalar(kind, 'param');
}

export function tableReturn(model: TypeModel, fn: FunctionDecl): string {
  const kind = model.kind(fn.returns);
  return kind.k === 'record' ? `@${kind.ts}` : model.ffiScalar(kind, 'return');
}

export function rawParamType(model: TypeModel, fn: FunctionDecl, i: number): string {
  const t = fn.params[i].type;
  if (t.kind === 'array') return 'Pointer';
  return model.tsType(t, 'param');
}

/** The binding facts of `fn` (its line of the binding table). */
function bindingEntry(ctx: EmitContext, fn: FunctionDecl): BindingEntry {
  const { model } = ctx;
  const entry: BindingEntry = { name: fn.name, symbol: fn.symbol, result: tableReturn(model, fn), params: fn.params.map((_, i) => tableParam(model, fn, i)) };
  if (fn.ptdsSymbol) entry.ptdsSymbol = fn.ptdsSymbol;
  const since = ctx.since.get(fn.name);
  if (since) entry.since = since;
  if (fn.proc) entry.proc = fn.proc.ptdsVersion !== undefined ? [fn.proc.name, fn.proc.version, fn.proc.ptdsVersion] : [fn.proc.name, fn.proc.version];
  return entry;
}

/** `name|mark,mark,…` with a mark per parameter: `h:TAG:param` (a handle it takes), `o:TAG:param` (a
 *  handle it writes), `f::param` (a function pointer), or nothing; undefined for a function with none. */
function handleLine(model: TypeModel, fn: FunctionDecl): string | undefined {
  const marks = fn.params.map((p) => {
    const kind = model.kind(p.type);
    if (kind.k === 'handle') return `h:${kind.tag}:${p.name}`;
    if (kind.k === 'funcptr') return `f::${p.name}`;
    if (kind.k === 'pointer' && !kind.constTarget && kind.toKind.k === 'handle') return `o:${kind.toKind.tag}:${p.name}`;
    return '';
  });
  return marks.some((m) => m !== '') ? `${fn.name}|${marks.join(',')}` : undefined;
}

/** Emits `binding.ts`: the module's Binder (library discovery, symbol resolution) and its binding table. */
export function emitBinding(ctx: EmitContext): string {
  const { model } = ctx;
  const { ir, spec } = model;
  const w = new Writer();
  w.line(ctx.banner);
  w.line(`// How the ${spec.title} is found and bound: the Binder and one line of facts per function.`);
  const handles = ir.functions.map((fn) => handleLine(model, fn)).filter((l): l is string => l !== undefined);
  w.line(`import { Binder, ${handles.length ? 'checkHandles, ' : ''}type BinderOptions, type KoffiType } from '${supportSpecifier(0)}';`);
  w.line(`import { records } from './types';`);
  w.blank();
  const [major, minor] = ir.cudaVersion.split('.').map(Number);
  const sonames = spec.sonames[String(major)] ?? Object.values(spec.sonames).flat();
  w.line(BINDING_TABLE_HEADER);
  w.line(`const FUNCTIONS = \``);
  w.lines(writeBindingTable(ir.functions.map((fn) => bindingEntry(ctx, fn))));
  w.line(`\`;`);
  w.blank();
  w.line(`/** Library discovery and symbol resolution for this module (CUDA ${ir.cudaVersion}). */`);
  w.line(`export const binder = new Binder(`);
  w.line(`  {`);
  w.line(`    module: '${spec.name}',`);
  w.line(`    cudaVersion: '${ir.cudaVersion}',`);
  w.line(`    cudaVersionNumber: ${major * 1000 + minor * 10},`);
  w.line(`    sonames: [${sonames.map((x) => `'${x}'`).join(', ')}],`);
  w.line(`    env: '${spec.env}',`);
  w.line(`    resolve: '${spec.resolve}',`);
  w.line(`  },`);
  w.line(`  FUNCTIONS,`);
  w.line(`  (name) => (records as unknown as Record<string, () => KoffiType>)[name](),`);
  w.line(`);`);
  w.blank();
  if (handles.length) {
    w.line(`// Handles and function pointers each function takes (h) or writes (o), for CUDA_TS_CHECK_HANDLES=1`);
    w.line(`// (support/handle-check.ts); otherwise unused.`);
    w.line(`checkHandles(binder, \``);
    w.lines(handles);
    w.line(`\`);`);
    w.blank();
  }
  w.line(`/** Options that must be set before the first call, e.g. \`{ perThreadDefaultStream: true }\`. */`);
  w.line(`export function configure(options: BinderOptions): void {`);
  w.line(`  binder.configure(options);`);
  w.line(`}`);
  return w.toString();
}

export function emitRaw(ctx: EmitContext): Map<string, string> {
  const { ir } = ctx.model;
  const plan = chunkPlan(ir.functions.map((f) => f.name));
  const chunkFns = new Map<string, FunctionDecl[]>();
  for (const fn of ir.functions) chunkFns.set(plan.get(fn.name)!, [...(chunkFns.get(plan.get(fn.name)!) ?? []), fn]);
  const files = new Map<string, string>();
  const byName = new Map<string, StubFn>();
  for (const chunk of [...chunkFns.keys()].sort()) {
    files.set(`raw-layer/${chunk}.ts`, emitRawChunk(ctx, chunk, chunkFns.get(chunk)!, byName));
  }
  const stubs = [...ir.functions.map((fn) => byName.get(fn.name)!), ...aliasStubs(ir.aliases, byName).map((s) => ({ ...s, doc: stubDoc(s.doc) }))];
  files.set('raw.ts', emitRawEntry(ctx, stubs));
  return files;
}

/** A chunk file `raw-layer/<chunk>.ts`: the implementations of `fns`, whose stubs go in `byName`. */
function emitRawChunk(ctx: EmitContext, chunk: string, fns: FunctionDecl[], byName: Map<string, StubFn>): string {
  const { model } = ctx;
  const { ir, spec } = model;
  const guards = new Map(fns.map((fn) => [fn.name, rawGuards(model, fn, ctx.semantics?.[ir.functions.indexOf(fn)])]));
  const w = new Writer();
  w.line(ctx.banner);
  w.line(`// Raw layer of the ${spec.title}, ${chunk.replace('_', ' to ')} functions: loaded by ../raw.ts on the first call`);
  w.line(`// of one of them. C-exact calls returning status codes; each binds its C function on its first call.`);
  const usesRecords = fns.some((fn) => guards.get(fn.name)!.some((l) => l.includes('records.')));
  const usesDevice = fns.some((fn) => guards.get(fn.name)!.some((l) => l.includes('deviceArg(')));
  w.line(
    `import { callbackArg, checkRecord, cstringArg, ${usesDevice ? 'deviceArg, ' : ''}hostByteLength, rawCovers, type NativeFunction } from '${supportSpecifier(1)}';`,
  );
  w.line(`import { binder } from '../binding';`);
  w.line(`import type * as T from '../types';`);
  if (usesRecords) w.line(`import { records } from '../types';`);
  w.line(`void [callbackArg, checkRecord, cstringArg, hostByteLength, rawCovers];`);
  w.blank();
  for (const fn of fns) {
    const cache = `${fn.name}$`;
    const params = fn.params.map((p, i) => `${safeIdent(p.name)}: ${qualify(rawParamType(model, fn, i))}`);
    const ret = qualify(model.tsType(fn.returns, 'return'));
    const since = ctx.since.get(fn.name);
    const notes = functionNotes(model, fn);
    const facts = `\`${cSignature(fn)}\` · ${fn.header} · CUDA ${ir.cudaVersion}${since ? ` (since ${since})` : ''}${notes.map((n) => ' ' + n).join('')}`;
    const doc = rawFunctionDoc(
      ctx.docs ?? noDocFacts(spec.name, ir.cudaVersion),
      fn,
      ctx.semantics?.[ir.functions.indexOf(fn)],
      fn.params.map((p) => safeIdent(p.name)),
      facts,
      rawReturns(model, fn),
    );
    w.line(`let ${cache}: NativeFunction | undefined;`);
    w.line(`/** ${doc} */`);
    w.block(`export function ${fn.name}(${params.join(', ')}): ${ret}`, () => {
      for (const g of guards.get(fn.name)!) w.line(g);
      w.line(`return (${cache} ??= binder.native('${fn.name}'))(${fn.params.map((p) => safeIdent(p.name)).join(', ')});`);
    });
    byName.set(fn.name, { name: fn.name, target: fn.name, chunk, params: fn.params.map((p) => safeIdent(p.name)), doc: stubDoc(doc) });
  }
  return w.toString();
}

/** The raw layer's `@returns`: the module's status, or the C result. */
function rawReturns(model: TypeModel, fn: FunctionDecl): string {
  const ret = formatCType(fn.returns, '').trim();
  if (ret === model.spec.status.type) return `the \`${ret}\` status, as C returns it.`;
  return ret === 'void' ? 'nothing (`void`).' : `\`${ret}\`, as C returns it.`;
}

/** `raw.ts`: the raw layer's entry, its functions lazy stubs of the chunk files. */
function emitRawEntry(ctx: EmitContext, stubs: StubFn[]): string {
  const { ir, spec } = ctx.model;
  const w = new Writer();
  w.line(ctx.banner);
  w.line(`// Raw layer of the ${spec.title}: C-exact calls returning status codes. Out-parameters are`);
  w.line(`// typed arrays you provide (Int32Array, BigUint64Array, …). Functions bind on first call; they live`);
  w.line(`// in ./raw-layer/<family>.ts (a folder not named raw: \`./raw\` would name both), each loaded on the first call of one`);
  w.line(`// of its functions (see generator/emit/lazy.ts).`);
  w.line(`export * from './types';`);
  w.line(`export { binder, configure } from './binding';`);
  const missing = ir.functions.map((f) => f.name).filter((n) => (spec.notExported ?? []).includes(n));
  if (missing.length) {
    w.line(`/** Functions the headers declare but the library does not export: calling one throws CudaSymbolError. */`);
    w.line(`export const notExported: readonly string[] = [${missing.map((n) => `'${n}'`).join(', ')}];`);
  }
  writeStubs(w, 'raw-layer', stubs);
  return w.toString();
}

/** Checks the raw layer keeps, so that no call writes past the memory it is given and nothing reaches
 *  C coerced: a `T *` takes null, an address, or host memory (a typed array, DataView or ArrayBuffer)
 *  that covers a T (non-const pointees of known size) with elements of T's size; a string only for a
 *  `const char *` (elsewhere koffi would pass a temporary copy that the call overruns); a function
 *  pointer only an address or null; a record passed by value must have fields of the right JS types
 *  (else koffi aborts the process). Nothing else: the raw layer stays C-exact. The common cases (an
 *  address, a long enough typed array, null) are tested inline; the rest goes to rawCovers. */
function rawGuards(model: TypeModel, fn: FunctionDecl, sem?: FunctionSem): string[] {
  const lines: string[] = [];
  fn.params.forEach((p, i) => {
    const id = safeIdent(p.name);
    const kind = model.kind(p.type);
    const call = `'${fn.name}', '${p.name}', ${id}`;
    if (kind.k === 'record') {
      // the checked copy is what koffi reads: a getter or Proxy is read once (a second read could abort)
      lines.push(`${id} = checkRecord('${fn.name}', '${p.name}', records.${kind.ts}(), ${id});`);
      return;
    }
    if (kind.k === 'funcptr') {
      lines.push(`if (${id} !== null && typeof ${id} !== 'bigint') callbackArg(${call}, true);`);
      return;
    }
    if (kind.k !== 'pointer' && kind.k !== 'array') return;
    if (kind.k === 'pointer' && kind.constTarget && kind.toKind.k === 'int' && kind.toKind.isChar) {
      // const char *: strings welcome, but not one holding a NUL (C would see a shorter string)
      lines.push(`if (typeof ${id} === 'string' && ${id}.includes('\\0')) cstringArg(${call}, true);`);
      return;
    }
    const s = sem?.params[i]?.sem;
    if (s?.role === 'pointer' && s.space === 'device') {
      // device memory (the model's reviewed facts): a host buffer is refused, as in the typed layer
      lines.push(`if (ArrayBuffer.isView(${id}) || ${id} instanceof ArrayBuffer) deviceArg(${call}, true);`);
      lines.push(
        `if (${id} !== null && typeof ${id} !== 'bigint' && !(typeof ${id} === 'number' && ${id} >= 0 && Number.isSafeInteger(${id}))) rawCovers(${call}, 0, 1);`,
      );
      return;
    }
    const address = `!(typeof ${id} === 'number' && ${id} >= 0 && Number.isSafeInteger(${id}))`;
    const [size, elem] = coveredPointee(model, kind);
    if (!size) {
      lines.push(`if (!ArrayBuffer.isView(${id}) && ${address} && ${id} !== null) rawCovers(${call}, 0, 1);`);
      return;
    }
    // fast path inline: a view long enough whose elements are bytes or of the pointee's size
    const bpe = `(${id} as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT`;
    const elemOk = elem > 1 ? ` && ((${bpe} ?? 1) === 1 || ${bpe} === ${elem})` : '';
    // the engine's byteLength (hostByteLength), never a property the caller may have defined
    lines.push(
      `if (!(ArrayBuffer.isView(${id}) && hostByteLength(${id})! >= ${size}${elemOk}) && ${address} && ${id} !== null) rawCovers(${call}, ${size}, ${elem});`,
    );
  });
  return lines;
}

/** What a pointer parameter must cover: [bytes, element bytes] of a non-const pointee of known size
 *  (records count as bytes), or [0, 1] where the call's extent is not known (void, const, char, arrays). */
function coveredPointee(model: TypeModel, kind: ReturnType<TypeModel['kind']>): [number, number] {
  if (kind.k !== 'pointer' || kind.constTarget) return [0, 1];
  const to = kind.toKind;
  if (to.k === 'void' || to.k === 'array' || (to.k === 'int' && to.isChar)) return [0, 1];
  const { size } = model.sizeAlign(to);
  if (!size) return [0, 1];
  return [size, to.k === 'record' ? 1 : size];
}

const PRIMITIVES = /^(number|string|boolean|void|bigint|null|undefined)$/;
/** Prefixes module type names with `T.` (the types namespace) inside raw and typed files. */
export function qualify(ts: string): string {
  return ts.replace(/[A-Za-z_$][\w$]*/g, (name) => (PRIMITIVES.test(name) ? name : `T.${name}`));
}
