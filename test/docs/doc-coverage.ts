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
}

function text(comment: string | ts.NodeArray<ts.JSDocComment> | undefined): string {
  if (comment === undefined) return '';
  return typeof comment === 'string' ? comment : comment.map((c) => c.text ?? '').join('');
}

/** The coverage of every exported function of the `.ts` files in `dir` (one layer's chunk folder). */
export function layerCoverage(dir: string, skip: (file: string) => boolean = () => false): LayerCoverage {
  const out: LayerCoverage = { functions: 0, documented: 0, params: 0, paramsDocumented: 0, missing: [] };
  if (!existsSync(dir)) return out;
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith('.ts') || skip(f)) continue;
    const source = ts.createSourceFile(f, readFileSync(join(dir, f), 'utf8'), ts.ScriptTarget.ES2022, true);
    for (const node of source.statements) {
      if (!ts.isFunctionDeclaration(node) || !node.name || !ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
      out.functions++;
      const doc = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc).pop();
      const tags = new Map(Array.from(doc?.tags ?? []).filter((t): t is ts.JSDocParameterTag => ts.isJSDocParameterTag(t)).map((t) => [t.name.getText(source), text(t.comment).trim()]));
      const names = node.parameters.map((p) => p.name.getText(source));
      const withText = names.filter((n) => (tags.get(n) ?? '') !== '');
      out.params += names.length;
      out.paramsDocumented += withText.length;
      const summary = text(doc?.comment).trim() !== '';
      if (summary && withText.length === names.length) out.documented++;
      else out.missing.push(`${node.name.text}${summary ? '' : ' (no summary)'}${withText.length < names.length ? ` (no @param ${names.filter((n) => !withText.includes(n)).join(', ')})` : ''}`);
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
