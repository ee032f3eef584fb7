// Measures the TSDoc of a generated module: the share of its functions (raw and typed layers) that have a
// summary line and an `@param` with text for every parameter. Read from the emitted files themselves
// (TypeScript's parser), so it measures what an editor shows, not what the generator meant to write.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

export interface LayerCoverage {
  functions: number;
  /** Functions with a summary and an `@param` for every parameter. */
  documented: number;
  params: number;
  /** Parameters with an `@param` that has text. */
  paramsDocumented: number;
  /** Functions missing something, for the failure message. */
  missing: string[];
  /** `@param`s whose text only restates the C type (`in \`int\`.`, `in \`cublasHandle_t\`.`). */
  restating: number;
  /** `@param`s that say no role either: the C type and the values the typed layer accepts, nothing else
   *  (`in \`int\`: a signed 32-bit integer.`): an integer no other parameter refers to. */
  typeOnly: number;
  /** Up to 10 restating `@param`s, `function.param: text`, for the failure message. */
  restatingSample: string[];
}

/** An `@param` text that says nothing but the C type: a direction, the type in backticks, `by value`. */
export const RESTATES_TYPE = /^(?:(?:in|out|in\/out)\s+)?`[^`]+`(?:\s+by value)?\.?$/;
/** An `@param` text that adds only what values of that type the typed layer accepts. */
export const TYPE_ONLY =
  /^in\s+`[^`]+`: (?:an? (?:signed|unsigned) \d+-bit integer(?: \(a number, or a bigint past 2\^53\))?|a number(?: \(stored as a 32-bit float\))?|a boolean|an address)\.$/;

function text(comment: string | ts.NodeArray<ts.JSDocComment> | undefined): string {
  if (comment === undefined) return '';
  return typeof comment === 'string' ? comment : comment.map((c) => c.text ?? '').join('');
}

/** The coverage of every exported function of the `.ts` files in `dir` (one layer's chunk folder). */
export function layerCoverage(dir: string, skip: (file: string) => boolean = () => false): LayerCoverage {
  const out: LayerCoverage = { functions: 0, documented: 0, params: 0, paramsDocumented: 0, missing: [], restating: 0, typeOnly: 0, restatingSample: [] };
  if (!existsSync(dir)) return out;
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith('.ts') || skip(f)) continue;
    const source = ts.createSourceFile(f, readFileSync(join(dir, f), 'utf8'), ts.ScriptTarget.ES2022, true);
    for (const node of source.statements) {
      if (!ts.isFunctionDeclaration(node) || !node.name || !ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
      out.functions++;
      const doc = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc).pop();
      const tags = new Map(
        Array.from(doc?.tags ?? [])
          .filter((t): t is ts.JSDocParameterTag => ts.isJSDocParameterTag(t))
          .map((t) => [t.name.getText(source), text(t.comment).trim()]),
      );
      const names = node.parameters.map((p) => p.name.getText(source));
      const withText = names.filter((n) => (tags.get(n) ?? '') !== '');
      for (const n of withText) {
        const t = tags.get(n)!.replace(/^- /, '');
        const restates = RESTATES_TYPE.test(t);
        if (restates) out.restating++;
        if (restates && out.restatingSample.length < 10) out.restatingSample.push(`${node.name.text}.${n}: ${t}`);
        if (restates || TYPE_ONLY.test(t)) out.typeOnly++;
      }
      out.params += names.length;
      out.paramsDocumented += withText.length;
      const summary = text(doc?.comment).trim() !== '';
      if (summary && withText.length === names.length) out.documented++;
      else
        out.missing.push(
          `${node.name.text}${summary ? '' : ' (no summary)'}${withText.length < names.length ? ` (no @param ${names.filter((n) => !withText.includes(n)).join(', ')})` : ''}`,
        );
    }
  }
  return out;
}

/** Raw and typed coverage of `generated/<release>/<module>`. */
export function moduleCoverage(root: string, release: string, module: string): { raw: LayerCoverage; typed: LayerCoverage } {
  const dir = join(root, 'generated', release, module);
  return { raw: layerCoverage(join(dir, 'raw-layer')), typed: layerCoverage(join(dir, 'typed'), (f) => f === 'shared.ts') };
}

const pct = (n: number, of: number) => (of === 0 ? '—' : `${((100 * n) / of).toFixed(1)}%`);

/** docs/reference.md's coverage table of one release: one row per module. */
export function coverageTable(root: string, release: string): string {
  const modules = readdirSync(join(root, 'generated', release)).sort();
  const rows = modules.map((m) => {
    const { raw, typed } = moduleCoverage(root, release, m);
    return `| ${m} | ${typed.functions} | ${pct(typed.documented, typed.functions)} | ${pct(typed.paramsDocumented, typed.params)} | ${pct(raw.documented, raw.functions)} | ${pct(raw.paramsDocumented, raw.params)} |`;
  });
  return ['| module | functions | typed: documented | typed: `@param` | raw: documented | raw: `@param` |', '|---|---|---|---|---|---|', ...rows].join('\n');
}
