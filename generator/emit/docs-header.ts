// `cuda-ts-gen --docs`: the headers' own documentation (Doxygen comments as clang parses them) turned
// into TSDoc text for a user's locally generated tree. NVIDIA's text: never emitted without --docs,
// never stored in the IR, never committed (test/docs/header-docs.test.ts checks the committed tree).
// Doxygen markup becomes Markdown: \p and \c code, \e emphasis, \b bold, `::name` and \sa names links;
// the comment's lines are kept (lists and tables stay lists and tables), \code blocks become fenced
// blocks, every \return is kept (several: one list item each), see-also names become `@see` links, and
// Doxygen aliases clang does not know (`\note_init_rt`) are dropped. A `\link` clang could not close
// swallows the rest of the comment as raw lines: those are read again here (./readRawLines).

/** One function's documentation from its header, as TSDoc-ready Markdown. */
export interface HeaderDoc {
  brief?: string;
  details?: string;
  /** C parameter name → its text. */
  params: Map<string, string>;
  returns?: string;
  /** `{@link name}` for each \sa / \see name. */
  see: string[];
  deprecated?: string;
}

// clang's JSON AST, untyped
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Node = any;

/** `\p name,` → `` `name`, ``: punctuation after the argument stays outside the span. */
function span(arg: string, mark: string): string {
  const [, word, tail] = /^(.*?)([.,;:)]*)$/.exec(arg)!;
  return word ? `${mark}${word}${mark}${tail}` : tail;
}

/** A `\code` block as a fenced block: a leading ` * ` of the comment dropped, the common indent removed. */
function codeBlock(n: Node): string {
  const lines = (n.inner ?? []).map((l: Node) => String(l.text ?? '').replace(/^\s*\* ?/, '')) as string[];
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => /^ */.exec(l)![0].length));
  return `\n\`\`\`c\n${lines.map((l) => l.slice(Number.isFinite(indent) ? indent : 0)).join('\n')}\n\`\`\`\n`;
}

/** Inline markup of one comment node, as Markdown; a child starting a new source line starts a new line. */
function inline(n: Node): string {
  switch (n.kind) {
    case 'TextComment':
      return String(n.text ?? '');
    case 'InlineCommandComment': {
      const arg = (n.args ?? []).join(' ');
      if (n.renderKind === 'monospaced' || n.name === 'p' || n.name === 'c') return span(arg, '`');
      if (n.renderKind === 'emphasized' || n.name === 'e' || n.name === 'em') return span(arg, '*');
      if (n.renderKind === 'bold' || n.name === 'b') return span(arg, '**');
      return arg; // an alias clang does not know (`\notefnerr`): no argument, nothing
    }
    case 'ParagraphComment':
      return (n.inner ?? [])
        .map((c: Node, i: number) => (i > 0 && c.kind === 'TextComment' && typeof c.loc?.line === 'number' ? '\n' : '') + inline(c))
        .join('');
    case 'VerbatimBlockComment':
    case 'VerbatimLineComment':
      if (n.name === 'code' || n.name === 'verbatim') return codeBlock(n);
      // `\link #Type NAME \endlink`: the name
      return (
        (n.inner ?? [])
          .map((l: Node) => String(l.text ?? ''))
          .join(' ')
          .replace(/\\(end)?link/g, '')
          .replace(/#\w+\s+/g, '') + String(n.text ?? '')
      );
    default:
      return (n.inner ?? []).map(inline).join('');
  }
}

/** A line's `::name` Doxygen references as code, and `@`, `{`, `}` escaped for TSDoc. */
const escapeLine = (l: string) =>
  l
    .replace(/::(\w+)/g, '`$1`')
    .replace(/@/g, '\\@')
    .replace(/[{}]/g, (c) => `\\${c}`);

/** Markdown of a node: its lines kept (spaces within a line collapsed, blank lines dropped), code
 *  blocks as they are, `::name` Doxygen references as code. */
function text(n: Node): string {
  const out: string[] = [];
  let code = false;
  for (const line of inline(n).split('\n')) {
    if (line.startsWith('```')) code = !code;
    if (code || line.startsWith('```')) out.push(line.replace(/\s+$/, ''));
    else if (line.trim()) out.push(escapeLine(line.replace(/\s+/g, ' ').trim()));
  }
  return out.join('\n').trim();
}

/** `\sa` names as links (one per name the text lists). */
function seeLinks(n: Node): string[] {
  const raw = inline(n);
  return [...raw.matchAll(/::(\w+)|\b((?:cu|cuda|nvrtc|nvml|nvJitLink|cublas|cusparse|cusolver|curand|cufft|cupti|nccl|cudnn)\w*)\b/g)].map(
    (m) => `{@link ${m[1] ?? m[2]}}`,
  );
}

/** A note's text without the tail of an alias clang read as `\note` + text (`\note_init_rt`). */
function withoutAlias(t: string): string {
  return t.replace(/^_\w+\s*/, '').trim();
}

/** What a comment's commands add up to while it is read: the \return texts apart, so each stays its own. */
interface Reading {
  doc: HeaderDoc;
  details: string[];
  returns: string[];
}

/** One source line of a swallowed block as Markdown: `\link #Type NAME \endlink` and `\ref name` as the
 *  name, `\p name` as code; `::name` is left for {@link escapeLine}. */
function rawLine(line: string): string {
  return line
    .replace(/\\link\s+(?:#\w+\s+)?(\w+)\s*(?:\\endlink)?/g, '::$1')
    .replace(/\\(?:end)?link\b/g, '')
    .replace(/\\ref\s+(\w+)/g, '$1')
    .replace(/\\p\s+(\w+)/g, '`$1`')
    .replace(/\\note\s+/g, 'Note: ')
    .replace(/\\\w+/g, '') // an alias or command with nothing to show (`\notefnerr`, `\link_sync_behavior`)
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * A `\link` block clang could not close (`NAME\endlink` with no space before `\endlink`): clang keeps
 * the rest of the comment as its raw lines, \return items, text, \see and all. Read them as Doxygen would:
 * list items of a \return stay items of it until a blank line; `\see`/`\sa` lines are see-also links;
 * `\return` starts another return; other lines are details paragraphs.
 */
function readRawLines(lines: string[], r: Reading, inReturns: boolean): void {
  let where: 'returns' | 'see' | 'details' = inReturns ? 'returns' : 'details';
  let para: string[] = [];
  const flush = () => {
    if (para.length) r.details.push(para.join('\n'));
    para = [];
  };
  for (const raw of lines) {
    const cmd = /^\s*\\(return|returns|result|see|sa)\b\s*(.*)$/.exec(raw);
    const plain = rawLine(cmd ? cmd[2] : raw);
    const line = escapeLine(plain);
    if (cmd && /^(see|sa)$/.test(cmd[1])) {
      flush();
      where = 'see';
    } else if (cmd) {
      flush();
      where = 'returns';
      r.returns.push('');
    } else if (!line) {
      if (where === 'details') flush();
      where = 'details';
      continue;
    }
    if (!line) continue;
    if (where === 'see') r.doc.see.push(...seeLinks({ kind: 'TextComment', text: plain }));
    else if (where === 'returns') r.returns[r.returns.length - 1] = [r.returns[r.returns.length - 1], line].filter(Boolean).join('\n');
    else para.push(line);
  }
  flush();
}

/** The lines of a verbatim block, its first line after the command (`\link` + text) and the text before it
 *  on that line (`- ` of a list item) put back. */
function verbatimLines(c: Node, before: string): string[] {
  const lines = (c.inner ?? []).map((l: Node) => String(l.text ?? ''));
  return [`${before}\\${c.name}${lines[0] ?? ''}`, ...lines.slice(1)];
}

/** The returns: one \return as written; several, each its own list item (a list stays a list). */
function returnsText(returns: string[]): string | undefined {
  const kept = returns.filter((t) => /\w/.test(t));
  if (kept.length <= 1) return kept[0];
  return kept.map((t) => (t.startsWith('- ') ? t : `- ${t.replace(/\n/g, '\n  ')}`)).join('\n');
}

/** The header documentation of one declaration's FullComment. */
export function headerDocOf(comment: Node): HeaderDoc {
  const r: Reading = { doc: { params: new Map(), see: [] }, details: [], returns: [] };
  const { doc, details } = r;
  let inReturns = false;
  for (const c of comment.inner ?? []) {
    if (c.kind === 'VerbatimBlockComment' && c.name !== 'code' && c.name !== 'verbatim') {
      // the text before the command on its line (`- ` of a list item) ends the last \return: give it back
      const last = r.returns.length ? r.returns[r.returns.length - 1] : '';
      const tail = inReturns ? (/(?:^|\n)([^\n\w]*)$/.exec(last)?.[1] ?? '') : '';
      if (inReturns) r.returns[r.returns.length - 1] = last.slice(0, last.length - tail.length).trim();
      readRawLines(verbatimLines(c, tail ? `${tail} ` : ''), r, inReturns);
      inReturns = false;
      continue;
    }
    const t = text(c);
    inReturns = c.kind === 'BlockCommandComment' && /^(return|returns|result)$/.test(c.name);
    if (c.kind === 'ParamCommandComment' && typeof c.param === 'string') {
      if (t) doc.params.set(c.param, t);
    } else if (c.kind === 'BlockCommandComment') {
      if (c.name === 'brief' || c.name === 'short') doc.brief = t;
      else if (inReturns) r.returns.push(t);
      else if (c.name === 'sa' || c.name === 'see') doc.see.push(...seeLinks(c));
      else if (c.name === 'deprecated') doc.deprecated = t || undefined;
      else if (c.name === 'note' && withoutAlias(t)) details.push(`Note: ${withoutAlias(t)}`);
      else if (c.name === 'details' && t) details.push(t);
    } else if ((c.kind === 'ParagraphComment' || c.kind === 'VerbatimBlockComment') && t) details.push(t);
  }
  // without a \brief, Doxygen's first paragraph is the brief
  if (!doc.brief && details.length) doc.brief = details.shift();
  if (details.length) doc.details = details.join('\n\n');
  const returns = returnsText(r.returns);
  if (returns) doc.returns = returns;
  doc.see = [...new Set(doc.see)];
  return doc;
}

/** Every documented function of a clang JSON AST, by its exported symbol. */
export function headerDocs(ast: Node): Map<string, HeaderDoc> {
  const out = new Map<string, HeaderDoc>();
  for (const node of ast.inner ?? []) {
    if (node.kind !== 'FunctionDecl' || out.has(node.name)) continue;
    const comment = (node.inner ?? []).find((c: Node) => c.kind === 'FullComment');
    if (comment) out.set(node.name, headerDocOf(comment));
  }
  return out;
}

/** A line that is no declaration text: a comment line, a preprocessor directive, blank. */
const NOT_CODE = /^\s*(\/\*|\*|\/\/|#|$)/;

/**
 * Doc comments clang attaches to no declaration of `names`: a comment followed by `#if`/`#ifndef` lines
 * before the declaration (clang attaches only an adjacent comment). For each name without a doc, the
 * comment ending just above its first declaration line (only directives in between), as a scratch C
 * source declaring `void name(void);` under each such comment, for clang to parse into FullComments.
 */
export function detachedCommentSource(header: string, names: readonly string[]): string {
  const lines = header.split('\n');
  const out: string[] = [];
  for (const name of names) {
    const decl = lines.findIndex((l) => !NOT_CODE.test(l) && new RegExp(`\\b${name}\\s*\\(`).test(l));
    let end = decl - 1;
    while (end >= 0 && /^\s*#/.test(lines[end])) end--;
    if (decl < 0 || end < 0 || !/\*\/\s*$/.test(lines[end]) || end === decl - 1) continue;
    let start = end;
    while (start >= 0 && !/^\s*\/\*\*/.test(lines[start])) start--;
    if (start >= 0) out.push(...lines.slice(start, end + 1), `void ${name}(void);`, '');
  }
  return out.join('\n');
}
