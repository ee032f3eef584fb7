// Parses the C type spellings clang prints (`qualType`) into CType trees:
// `const void *const *`, `unsigned int[3]`, `CUresult (*)(CUstream, CUresult, void *)`.
import type { CType } from '../ir/schema';

const QUALIFIERS = new Set(['const', 'volatile', 'restrict', '__restrict', '_Nonnull', '_Nullable', '__unaligned']);
const BUILTIN_WORDS = new Set([
  'void',
  'char',
  'short',
  'int',
  'long',
  'float',
  'double',
  'signed',
  'unsigned',
  '_Bool',
  'bool',
  '__int128',
  '_Float16',
  '__fp16',
]);

/** Anonymous records print as `struct (unnamed struct at FILE:L:C)`; we name them `@anon:BASENAME:L:C`.
 *  FILE is a full path that may hold any character (a space, `(`, `,`, `[`, `*`): the match runs to the
 *  last `:line:col)` and the key keeps only the file's base name, so names never depend on where the
 *  toolkit lives. */
const ANON = /\((?:unnamed|anonymous)(?: (?:struct|union|enum))? at (.+?:\d+:\d+)\)/g;
export function anonKey(location: string): string {
  const m = /^(.*):(\d+):(\d+)$/.exec(location);
  const file = m ? m[1] : location;
  const base = file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
  const safe = base.replace(/[^\w.-]/g, '_');
  return m ? `@anon:${safe}:${m[2]}:${m[3]}` : `@anon:${safe}`;
}

function tokenize(text: string): string[] {
  const src = text.replace(/\b[\w]+::(?=\(unnamed|\(anonymous)/g, '').replace(ANON, (_m, loc: string) => anonKey(loc));
  const tokens: string[] = [];
  const re = /\s*(@anon:[^\s,()*\[\]]+|\.\.\.|[A-Za-z_]\w*|\d+|[*()\[\],])/y;
  let m: RegExpExecArray | null;
  let pos = 0;
  while (pos < src.length) {
    re.lastIndex = pos;
    m = re.exec(src);
    if (!m) {
      if (/^\s*$/.test(src.slice(pos))) break;
      throw new Error(`cannot parse C type "${text}" at "${src.slice(pos)}"`);
    }
    tokens.push(m[1]);
    pos = re.lastIndex;
  }
  return tokens;
}

export function canonicalBuiltin(words: string[]): string {
  const has = (w: string) => words.includes(w);
  const longs = words.filter((w) => w === 'long').length;
  if (has('void')) return 'void';
  if (has('_Bool') || has('bool')) return '_Bool';
  if (has('float')) return 'float';
  if (has('_Float16') || has('__fp16')) return '_Float16';
  if (has('double')) return longs ? 'long double' : 'double';
  if (has('__int128')) return has('unsigned') ? 'unsigned __int128' : '__int128';
  if (has('char')) return has('unsigned') ? 'unsigned char' : has('signed') ? 'signed char' : 'char';
  const base = has('short') ? 'short' : longs === 2 ? 'long long' : longs === 1 ? 'long' : 'int';
  return has('unsigned') ? `unsigned ${base}` : base;
}

class Parser {
  private i = 0;
  constructor(
    private readonly toks: string[],
    private readonly text: string,
  ) {}
  private peek(k = 0): string | undefined {
    return this.toks[this.i + k];
  }
  private next(): string {
    const t = this.toks[this.i++];
    if (t === undefined) throw new Error(`unexpected end of C type "${this.text}"`);
    return t;
  }
  private expect(t: string): void {
    const got = this.next();
    if (got !== t) throw new Error(`expected "${t}" but found "${got}" in C type "${this.text}"`);
  }

  parseType(): CType {
    const base = this.specifiers();
    return this.declarator()(base);
  }

  done(): boolean {
    return this.i >= this.toks.length;
  }

  private specifiers(): CType {
    let isConst = false;
    const words: string[] = [];
    let named: string | undefined;
    for (;;) {
      const t = this.peek();
      if (t === undefined) break;
      if (QUALIFIERS.has(t)) {
        this.i++;
        if (t === 'const') isConst = true;
      } else if (t === 'struct' || t === 'union' || t === 'enum') {
        this.i++;
        const tag = this.next();
        named = tag.startsWith('@anon:') ? tag : `${t} ${tag}`; // anonymous: the location is the identity
      } else if (BUILTIN_WORDS.has(t)) {
        this.i++;
        words.push(t);
      } else if (/^[A-Za-z_]\w*$/.test(t) && !named && words.length === 0) {
        this.i++;
        named = t;
      } else break;
    }
    const c = isConst ? { const: true } : {};
    if (named) return { kind: 'named', name: named, ...c };
    if (words.length === 0) throw new Error(`no type specifier in C type "${this.text}"`);
    return { kind: 'builtin', name: canonicalBuiltin(words), ...c };
  }

  /** Returns a function that wraps a base type in this (abstract) declarator. */
  private declarator(): (t: CType) => CType {
    const pointers: boolean[] = [];
    while (this.peek() === '*') {
      this.i++;
      let isConst = false;
      while (this.peek() !== undefined && QUALIFIERS.has(this.peek()!)) {
        if (this.next() === 'const') isConst = true;
      }
      pointers.push(isConst);
    }
    let inner: (t: CType) => CType = (t) => t;
    if (this.peek() === '(' && (this.peek(1) === '*' || this.peek(1) === '(')) {
      this.i++;
      inner = this.declarator();
      this.expect(')');
    }
    const suffixes: ((t: CType) => CType)[] = [];
    for (;;) {
      if (this.peek() === '[') {
        this.i++;
        const n = this.peek() === ']' ? 0 : Number(this.next());
        this.expect(']');
        suffixes.push((t) => ({ kind: 'array', of: t, length: n }));
      } else if (this.peek() === '(') {
        this.i++;
        const { params, variadic } = this.paramList();
        this.expect(')');
        suffixes.push((t) => ({ kind: 'function', returns: t, params, ...(variadic ? { variadic } : {}) }));
      } else break;
    }
    return (t) => {
      for (const isConst of pointers) t = { kind: 'pointer', to: t, ...(isConst ? { const: true } : {}) };
      for (let k = suffixes.length - 1; k >= 0; k--) t = suffixes[k](t);
      return inner(t);
    };
  }

  private paramList(): { params: CType[]; variadic: boolean } {
    const params: CType[] = [];
    let variadic = false;
    if (this.peek() === ')') return { params, variadic };
    for (;;) {
      if (this.peek() === '...') {
        this.i++;
        variadic = true;
      } else {
        params.push(this.parseType());
      }
      if (this.peek() !== ',') break;
      this.i++;
    }
    if (params.length === 1 && params[0].kind === 'builtin' && params[0].name === 'void' && !variadic) return { params: [], variadic };
    return { params, variadic };
  }
}

export function parseCType(text: string): CType {
  const p = new Parser(tokenize(text), text);
  const t = p.parseType();
  if (!p.done()) throw new Error(`trailing tokens in C type "${text}"`);
  return t;
}

/** Prints a CType back as C (for signatures in generated docs). */
export function formatCType(t: CType, inner = ''): string {
  const q = t.const ? 'const ' : '';
  switch (t.kind) {
    case 'builtin':
    case 'named':
      return `${q}${t.name.startsWith('@anon:') ? 'struct <anonymous>' : t.name}${inner ? ' ' + inner : ''}`;
    case 'pointer':
      return formatCType(t.to, `*${t.const ? 'const ' : ''}${inner}`.trimEnd());
    case 'array':
      return formatCType(t.of, `${inner.startsWith('*') ? `(${inner})` : inner}[${t.length || ''}]`);
    case 'function': {
      const ps = t.params.map((p) => formatCType(p)).concat(t.variadic ? ['...'] : []);
      return formatCType(t.returns, `(${inner})(${ps.join(', ') || 'void'})`);
    }
  }
}
