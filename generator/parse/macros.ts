// Reads `clang -E -dM` output: numeric and pointer-valued constants, and symbol aliases
// (`#define cuMemAlloc cuMemAlloc_v2`), expanding simple function-like macros such as
// `__CUDA_API_PTDS(api) api ## _ptds`.
import type { Constant } from '../ir/schema';

export interface MacroTable {
  objects: Map<string, string>;
  functions: Map<string, { params: string[]; body: string }>;
}

export function parseMacroDefinitions(text: string): MacroTable {
  const objects = new Map<string, string>();
  const functions = new Map<string, { params: string[]; body: string }>();
  for (const line of text.split('\n')) {
    const fm = /^#define (\w+)\(([^)]*)\) ?(.*)$/.exec(line);
    if (fm) {
      functions.set(fm[1], {
        params: fm[2]
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
        body: fm[3].trim(),
      });
      continue;
    }
    const om = /^#define (\w+)(?: (.*))?$/.exec(line);
    if (om) objects.set(om[1], (om[2] ?? '').trim());
  }
  return { objects, functions };
}

/** Expands a macro name to the identifier it finally stands for, or undefined when it is not an alias. */
export function resolveIdentifier(table: MacroTable, name: string, depth = 0): string | undefined {
  if (depth > 16) return undefined;
  const body = table.objects.get(name);
  if (body === undefined) return undefined;
  let target: string | undefined;
  if (/^\w+$/.test(body) && !/^\d/.test(body)) target = body;
  const call = /^(\w+)\((\w+)\)$/.exec(body);
  if (call && table.functions.has(call[1])) {
    const fn = table.functions.get(call[1])!;
    if (fn.params.length === 1) {
      const expanded = fn.body.replace(new RegExp(`\\b${fn.params[0]}\\b`, 'g'), call[2]).replace(/\s*##\s*/g, '');
      if (/^\w+$/.test(expanded)) target = expanded;
    }
  }
  if (target === undefined) return undefined;
  return resolveIdentifier(table, target, depth + 1) ?? target;
}

type Tok = string;
function tokenizeExpr(s: string): Tok[] | undefined {
  const out: Tok[] = [];
  const re = /\s*(0[xX][0-9a-fA-F]+[uUlL]*|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?[uUlLfF]*|\.\d+(?:[eE][-+]?\d+)?[fF]?|[A-Za-z_]\w*|<<|>>|[-+~|&^()*!\/])/y;
  let pos = 0;
  while (pos < s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) return /^\s*$/.test(s.slice(pos)) ? out : undefined;
    out.push(m[1]);
    pos = re.lastIndex;
  }
  return out;
}

export interface EvalContext {
  table: MacroTable;
  /** Classifies a type name used in a cast: 'pointer' for pointer/handle types, 'int', or undefined when unknown. */
  castKind(typeName: string): 'pointer' | 'int' | undefined;
}

interface Value {
  kind: 'int' | 'float' | 'pointer';
  int?: bigint;
  float?: number;
  type?: string;
}

/** Evaluates a constant macro. Returns undefined for anything that is not a plain constant. */
export function evaluateMacro(ctx: EvalContext, name: string, seen = new Set<string>()): Value | undefined {
  const body = ctx.table.objects.get(name);
  if (body === undefined || body === '' || seen.has(name)) return undefined;
  const toks = tokenizeExpr(body);
  if (!toks || toks.length === 0) return undefined;
  seen.add(name);
  try {
    const parser = new ConstantParser(ctx, toks, seen);
    const v = parser.expr();
    return parser.done() ? v : undefined;
  } catch {
    return undefined;
  } finally {
    seen.delete(name);
  }
}

const IDENT = /^[A-Za-z_]\w*$/;
/** Binary operators by precedence, loosest first: C's, as far as constant macros use them. */
const LEVELS = [['|'], ['^'], ['&'], ['<<', '>>'], ['+', '-'], ['*', '/']];

/** A recursive-descent evaluator of one macro body's tokens; throws on anything not constant. */
class ConstantParser {
  private i = 0;
  constructor(
    private readonly ctx: EvalContext,
    private readonly toks: string[],
    private readonly seen: Set<string>,
  ) {}

  done(): boolean {
    return this.i === this.toks.length;
  }

  expr(level = 0): Value {
    if (level === LEVELS.length) return this.unary();
    const ops = LEVELS[level];
    let left = this.expr(level + 1);
    while (ops.includes(this.peek() ?? '')) {
      const op = this.toks[this.i++];
      const a = asInt(left);
      const b = asInt(this.expr(level + 1));
      const r =
        op === '*'
          ? a * b
          : op === '/'
            ? a / b
            : op === '+'
              ? a + b
              : op === '-'
                ? a - b
                : op === '<<'
                  ? a << b
                  : op === '>>'
                    ? a >> b
                    : op === '&'
                      ? a & b
                      : op === '^'
                        ? a ^ b
                        : a | b;
      left = { kind: 'int', int: r };
    }
    return left;
  }

  private peek(): string | undefined {
    return this.toks[this.i];
  }

  private unary(): Value {
    const t = this.peek();
    if (t === '-' || t === '+' || t === '~' || t === '!') {
      this.i++;
      const v = this.unary();
      if (v.kind === 'float') return t === '-' ? { kind: 'float', float: -v.float! } : t === '+' ? v : fail();
      const n = asInt(v);
      return { kind: 'int', int: t === '-' ? -n : t === '+' ? n : t === '~' ? ~n : n === 0n ? 1n : 0n };
    }
    return this.primary();
  }

  private primary(): Value {
    const t = this.toks[this.i++];
    if (t === undefined) fail();
    if (t === '(') {
      const cast = this.cast();
      if (cast) return cast;
      const v = this.expr();
      if (this.toks[this.i++] !== ')') fail();
      return v;
    }
    if (/^(0[xX][0-9a-fA-F]+|\d+)[uUlL]*$/.test(t) && !/[.eE]/.test(t.replace(/^0[xX][0-9a-fA-F]+/, ''))) {
      const digits = t.replace(/[uUlL]+$/, '');
      return { kind: 'int', int: /^0\d/.test(digits) ? BigInt('0o' + digits.slice(1)) : BigInt(digits) };
    }
    if (/^[\d.]/.test(t)) return { kind: 'float', float: Number(t.replace(/[fFlL]$/, '')) };
    if (IDENT.test(t)) return evaluateMacro(this.ctx, t, this.seen) ?? fail();
    return fail();
  }

  /** After `(`: a cast `(TYPE)` or `(TYPE *)` and its operand, or undefined (a parenthesised expression). */
  private cast(): Value | undefined {
    const { toks } = this;
    if (!IDENT.test(this.peek() ?? '') || this.ctx.table.objects.has(this.peek()!)) return undefined;
    let j = this.i;
    const words: string[] = [];
    while (IDENT.test(toks[j] ?? '')) words.push(toks[j++]);
    let stars = 0;
    while (toks[j] === '*') {
      stars++;
      j++;
    }
    if (toks[j] !== ')' || !words.length) return undefined;
    this.i = j + 1;
    const typeName = words.join(' ') + (stars ? ' ' + '*'.repeat(stars) : '');
    const inner = this.unary();
    const kind = stars > 0 ? 'pointer' : this.ctx.castKind(words.join(' '));
    if (kind === undefined) fail();
    if (kind === 'pointer') return { kind: 'pointer', int: BigInt.asUintN(64, asInt(inner)), type: typeName };
    return inner.kind === 'float' ? inner : { kind: 'int', int: asInt(inner) };
  }
}

function fail(): never {
  throw new Error('not constant');
}

function asInt(v: Value): bigint {
  return v.kind === 'float' ? fail() : v.int!;
}

export function macroConstant(ctx: EvalContext, name: string): Constant | undefined {
  const v = evaluateMacro(ctx, name);
  if (!v) return undefined;
  if (v.kind === 'float') return Number.isFinite(v.float!) ? { name, kind: 'float', value: String(v.float) } : undefined;
  if (v.kind === 'pointer') return { name, kind: 'pointer', value: '0x' + v.int!.toString(16), type: v.type };
  return { name, kind: 'int', value: v.int!.toString() };
}
