// Emits `index.ts`: the typed layer. Each function calls its raw twin, throws the module's CudaError
// subclass on a failing status, and returns the out-parameters (one value, or an object named as in C).
// Out-parameters go through a per-function preallocated Scratch: no allocation on the hot path.
import type { FunctionDecl } from '../ir/schema';
import type { Kind } from './model';
import { planParams, slotCount, type Plan } from './params';
import { cSignature, functionNotes, qualify, rawParamType, type EmitContext } from './raw';
import { Writer } from './writer';

function readOut(plan: Plan & { slot: number }): string {
  const i = plan.slot;
  if (plan.role === 'outAddress') return `s.address(${i})`;
  if (plan.role === 'outCString') return `readCString(s.address(${i}))`;
  const kind = (plan as { kind: Kind }).kind;
  switch (kind.k) {
    case 'int':
      if (kind.bytes === 8) return kind.isSize ? `s.size(${i})` : kind.signed ? `s.i64[${i}]` : `s.u64[${i}]`;
      if (kind.bytes === 4) return kind.signed ? `s.i32[${2 * i}]` : `s.u32[${2 * i}]`;
      if (kind.bytes === 2) return kind.signed ? `s.i16[${4 * i}]` : `s.u16[${4 * i}]`;
      return kind.signed ? `s.i8[${8 * i}]` : `s.bytes[${8 * i}]`;
    case 'float':
      return kind.bytes === 4 ? `s.f32[${2 * i}]` : `s.f64[${i}]`;
    case 'bool':
      return `s.bytes[${8 * i}] !== 0`;
    case 'enum': {
      const v = kind.decl.size === 8 ? `Number(s.i64[${i}])` : kind.decl.signed ? `s.i32[${2 * i}]` : `s.u32[${2 * i}]`;
      return `${v} as T.${kind.ts}`;
    }
    case 'handle':
    case 'deviceptr':
      return `s.address(${i}) as T.${kind.ts}`;
    default:
      throw new Error(`no out reader for ${kind.k}`);
  }
}

function outType(ctx: EmitContext, plan: Plan): string {
  switch (plan.role) {
    case 'outAddress':
      return 'number';
    case 'outCString':
      return 'string | null';
    case 'outText':
      return 'string';
    case 'outRecord':
      return `T.${plan.record}`;
    case 'out': {
      const pointee = plan.p.type.kind === 'pointer' ? plan.p.type.to : plan.p.type;
      const k = plan.kind;
      if (k.k === 'int') return k.bytes === 8 && !k.isSize ? 'bigint' : 'number';
      if (k.k === 'float') return 'number';
      if (k.k === 'bool') return 'boolean';
      if ((k.k === 'handle' || k.k === 'deviceptr' || k.k === 'enum') && pointee.kind === 'named' && !pointee.name.includes(' ')) return `T.${pointee.name}`;
      return qualify(ctx.model.tsType(pointee, 'return'));
    }
    default:
      throw new Error('not an out parameter');
  }
}

/** The value type of an in/out parameter (the pointee). */
function inoutType(plan: Plan & { role: 'inout' }): string {
  const pointee = plan.p.type.kind === 'pointer' ? plan.p.type.to : plan.p.type;
  const k = plan.kind;
  if ((k.k === 'handle' || k.k === 'deviceptr' || k.k === 'enum') && pointee.kind === 'named' && !pointee.name.includes(' ')) return `T.${pointee.name}`;
  if (k.k === 'int' && k.bytes === 8) return 'T.Int64';
  return 'number';
}

/** Stores an in/out parameter's value into its scratch slot before the call. */
function writeInout(plan: Plan & { role: 'inout' }): string {
  const i = plan.slot;
  const k = plan.kind;
  const bytes = k.k === 'int' ? k.bytes : k.k === 'enum' ? k.decl.size : 8;
  const signed = k.k === 'int' ? k.signed : k.k === 'enum' ? k.decl.signed : false;
  if (bytes === 8) return `s.${signed ? 'i64' : 'u64'}[${i}] = BigInt(${plan.ident});`;
  if (bytes === 4) return `s.${signed ? 'i32' : 'u32'}[${2 * i}] = ${plan.ident};`;
  if (bytes === 2) return `s.${signed ? 'i16' : 'u16'}[${4 * i}] = ${plan.ident};`;
  return `s.${signed ? 'i8' : 'bytes'}[${8 * i}] = ${plan.ident};`;
}

function isOut(p: Plan): boolean {
  return p.role === 'out' || p.role === 'outAddress' || p.role === 'outCString' || p.role === 'outRecord' || p.role === 'outText';
}

export function emitTyped(ctx: EmitContext): string {
  const { model } = ctx;
  const { ir, spec } = model;
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
  const codeType = statusEnum.ts;
  const successMember = statusEnum.decl.members.find((m) => m.name === status.success);
  if (!successMember) throw new Error(`${status.success} not found in ${status.type}`);
  const success = successMember.value;
  const valueOf = (name: string) => {
    const m = statusEnum.decl.members.find((x) => x.name === name);
    if (!m) throw new Error(`status ${name} not found in ${status.type}`);
    return m.value;
  };
  const returnsStatus = (fn: FunctionDecl) => {
    const k = model.kind(fn.returns);
    if (declaredStatus.k === 'record') return k.k === 'record' && k.decl === declaredStatus.decl;
    return k.k === 'enum' && k.decl === statusEnum.decl;
  };
  const statusOf = (call: string) => (declaredStatus.k === 'record' ? `(${call} as { ${status.field}: number }).${status.field}` : call);

  const w = new Writer();
  w.line(ctx.banner);
  w.line(`// Typed layer of the ${spec.title}: throws ${status.errorClass} (a CudaError) on failure and`);
  w.line(`// returns out-parameters. Each function calls the C function itself (the raw layer, \`./raw\`, is a`);
  w.line(`// separate import); types and constants are re-exported.`);
  const blocking = (fn: FunctionDecl) => !!spec.blocking?.test(fn.name);
  const oneShot = (fn: FunctionDecl, p: { name: string }) => (spec.oneShotCallbacks ?? []).includes(`${fn.name}.${p.name}`);
  const runtimeImports = ['CudaError', 'Scratch', 'decodeRecord', 'encodeRecord', 'isPointerLike', 'readCString', 'textFrom'];
  if (ir.functions.some(blocking)) runtimeImports.push('assertMayBlock');
  if (ir.functions.some((fn) => fn.params.some((p) => oneShot(fn, p)))) runtimeImports.push('oneShotCallback', 'type JsCallback');
  w.line(`import { ${runtimeImports.join(', ')}, type NativeFunction } from '../../../src/runtime';`);
  w.line(`import { binder } from './binding';`);
  w.line(`import * as T from './types';`);
  w.line(`import { records } from './types';`);
  w.line(`export * from './types';`);
  w.line(`export { binder, configure } from './binding';`);
  w.line(`void [decodeRecord, encodeRecord, isPointerLike, readCString, textFrom, records];`);
  w.blank();

  // The module's error class and its message lookup (from the library itself, at run time).
  w.line(`/** A failing ${status.type} from the ${spec.title}. \`name\` is the status name, \`func\` the C function. */`);
  w.block(`export class ${status.errorClass} extends CudaError`, () => {
    w.block(`constructor(func: string, code: number)`, () => {
      w.line(`super('${spec.name}', func, code, T.${codeType}[code] ?? \`${codeType}(\${code})\`, describe(code));`);
    });
  });
  w.blank();
  w.line(`let describing = false;`);
  w.block(`function describe(code: number): string | undefined`, () => {
    if (!status.describe) {
      w.line(`void code;`);
      w.line(`return undefined;`);
      return;
    }
    w.line(`if (describing) return undefined; // a failure while describing a failure`);
    w.line(`describing = true;`);
    w.block(`try`, () => {
      w.line(`const fn = binder.native('${status.describe!.fn}');`);
      if (status.describe!.style === 'return') {
        w.line(`return fn(code) ?? undefined;`);
      } else {
        w.line(`const out = new BigUint64Array(1);`);
        w.line(`return fn(code, out) === ${success} ? (readCString(out[0]) ?? undefined) : undefined;`);
      }
    });
    w.block(`catch`, () => w.line(`return undefined;`));
    w.block(`finally`, () => w.line(`describing = false;`));
  });
  w.blank();
  w.line(`function fail(func: string, code: number): ${status.errorClass} {`);
  w.line(`  return new ${status.errorClass}(func, code);`);
  w.line(`}`);
  w.blank();

  for (const fn of ir.functions) {
    const plans = planParams(model, fn);
    const outs = plans.filter(isOut);
    const slots = slotCount(plans);
    const ins = plans.filter((p) => !isOut(p));
    const answers = (status.answers?.[fn.name] ?? []).map(valueOf);
    const isStatus = returnsStatus(fn);

    // A one-shot callback parameter also takes a JS function (registered for that one call).
    const callbackOf = (p: Plan): string | undefined =>
      oneShot(fn, p.p) && p.p.type.kind === 'named' && model.kind(p.p.type).k === 'funcptr' ? p.p.type.name : undefined;
    const sig = ins.map((p) => {
      const i = fn.params.indexOf(p.p);
      if (callbackOf(p)) return `${p.ident}: ${qualify(rawParamType(model, fn, i))} | JsCallback`;
      if (p.role === 'inRecord') return `${p.ident}: T.${p.record} | T.Pointer`;
      if (p.role === 'inout') return `${p.ident}: ${inoutType(p)}`;
      return `${p.ident}: ${qualify(rawParamType(model, fn, i))}`;
    });
    const outFields = outs.map((p) => `${p.ident}: ${outType(ctx, p)}`);
    let retType: string;
    if (isStatus) retType = outs.length === 0 ? (answers.length ? `T.${codeType}` : 'void') : outs.length === 1 ? outType(ctx, outs[0]) : `{ ${outFields.join('; ')} }`;
    else {
      const r = qualify(model.tsType(fn.returns, 'return'));
      retType = outs.length === 0 ? r : `{ result: ${r}; ${outFields.join('; ')} }`;
    }

    const callArgs = plans.map((p) => {
      switch (p.role) {
        case 'out':
        case 'outAddress':
        case 'outCString':
        case 'inout':
          return `s.slot(${p.slot})`;
        case 'inRecord':
          return `isPointerLike(${p.ident}) ? ${p.ident} : encodeRecord(records.${p.record}(), ${p.ident})`;
        case 'outRecord':
        case 'outText':
          return `${p.ident}$`;
        default:
          return callbackOf(p) ? `${p.ident}$cb ? ${p.ident}$cb.pointer : ${p.ident}` : p.ident;
      }
    });
    const callbacks = plans.filter((p) => callbackOf(p));

    const doc = [`\`${cSignature(fn)}\` · ${fn.header} · CUDA ${ir.cudaVersion}`];
    if (outs.length) doc.push(`Returns ${outs.length === 1 ? `\`${outs[0].p.name}\`` : outs.map((o) => `\`${o.p.name}\``).join(', ')}.`);
    doc.push(...functionNotes(model, fn));
    if (callbacks.length) doc.push(`\`${callbacks.map((p) => p.p.name).join('`, `')}\` may be a JS function: it is registered for this one call and counts as pending until it has run.`);
    if (blocking(fn)) doc.push('Waits on the calling thread: refused (HostCallbackPendingError) while a JS callback is pending.');
    if (isStatus) doc.push(`Throws {@link ${status.errorClass}}${answers.length ? ` unless the status is ${status.answers![fn.name].join(' or ')}` : ''}.`);

    if (slots) w.line(`let ${fn.name}$: Scratch | undefined;`);
    w.line(`let ${fn.name}$c: NativeFunction | undefined;`);
    w.line(`/** ${doc.join(' ')} */`);
    w.block(`export function ${fn.name}(${sig.join(', ')}): ${retType}`, () => {
      if (blocking(fn)) w.line(`assertMayBlock('${fn.name}');`);
      for (const p of callbacks) w.line(`const ${p.ident}$cb = typeof ${p.ident} === 'function' ? oneShotCallback(T.callbacks.${callbackOf(p)}(), ${p.ident}) : undefined;`);
      if (slots) w.line(`const s = (${fn.name}$ ??= new Scratch(${slots}));`);
      for (const p of plans) if (p.role === 'inout') w.line(writeInout(p));
      for (const p of outs) {
        if (p.role === 'outRecord') w.line(`const ${p.ident}$ = new Uint8Array(${p.size});`);
        if (p.role === 'outText') w.line(`const ${p.ident}$ = new Uint8Array(Math.max(0, ${p.lengthParam}));`);
      }
      const call = `(${fn.name}$c ??= binder.native('${fn.name}'))(${callArgs.join(', ')})`;
      const values = outs.map((p) => {
        if (p.role === 'outRecord') return `decodeRecord<T.${p.record}>(records.${p.record}(), ${p.ident}$)`;
        if (p.role === 'outText') return `textFrom(${p.ident}$)`;
        return readOut(p as Plan & { slot: number });
      });
      const packed = outs.length === 1 ? values[0] : `{ ${outs.map((p, k) => `${p.ident}: ${values[k]}`).join(', ')} }`;
      if (isStatus) {
        w.line(`const status = ${statusOf(call)};`);
        const cond = [`status !== ${success}`, ...answers.map((a) => `status !== ${a}`)].join(' && ');
        if (callbacks.length) {
          w.block(`if (${cond})`, () => {
            for (const p of callbacks) w.line(`${p.ident}$cb?.cancel(); // refused: it will never run`);
            w.line(`throw fail('${fn.name}', status);`);
          });
        } else w.line(`if (${cond}) throw fail('${fn.name}', status);`);
        if (outs.length) w.line(`return ${packed};`);
        else if (answers.length) w.line(`return status;`);
      } else if (outs.length) {
        w.line(`const result = ${call};`);
        w.line(`return { result, ${outs.map((p, k) => `${p.ident}: ${values[k]}`).join(', ')} };`);
      } else {
        w.line(`return ${call};`);
      }
    });
  }
  for (const [alias, target] of Object.entries(ir.aliases)) {
    w.line(`/** Alias of {@link ${target}} (\`#define ${alias} ${target}\`). */`);
    w.line(`export const ${alias} = ${target};`);
  }
  return w.toString();
}
