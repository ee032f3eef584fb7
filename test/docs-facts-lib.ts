// Shared by the docs-facts tests: the stored IR, the TSDoc of the committed bindings, and files of the
// stored header archives (extracted on demand to a temporary folder; undefined when an archive is absent).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import type { ModuleIR } from '../generator/ir/schema';

export const ROOT = join(__dirname, '..');
export const RELEASES = ['11.8', '12.5', '12.6', '13.0'] as const;
export const ARCHIVES = join(ROOT, '..', 'shared', 'cuda-headers');

const irCache = new Map<string, ModuleIR | undefined>();
/** The stored IR of a module in a release, or undefined when that release stores none. */
export function ir(release: string, module: string): ModuleIR | undefined {
  const key = `${release}/${module}`;
  if (!irCache.has(key)) {
    const path = join(ROOT, 'headers', release, `${module}.json`);
    irCache.set(key, existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as ModuleIR) : undefined);
  }
  return irCache.get(key);
}

/** The modules a release stores. */
export function modulesOf(release: string): string[] {
  return readdirSync(join(ROOT, 'headers', release))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.replace(/\.json$/, ''))
    .sort();
}

export interface FnDoc {
  /** The whole doc comment. */
  text: string;
  /** `@param` name → its text. */
  params: Map<string, string>;
}

/** Function name → its TSDoc, from a layer's chunk files. */
export function layerDocs(release: string, module: string, layer: 'typed' | 'raw-layer'): Map<string, FnDoc> {
  const dir = join(ROOT, 'generated', release, module, layer);
  const out = new Map<string, FnDoc>();
  const text = (c: string | ts.NodeArray<ts.JSDocComment> | undefined) => (typeof c === 'string' ? c : (c ?? []).map((x) => x.text ?? '').join(''));
  for (const f of readdirSync(dir)) {
    const source = ts.createSourceFile(f, readFileSync(join(dir, f), 'utf8'), ts.ScriptTarget.ES2022, true);
    for (const node of source.statements) {
      if (!ts.isFunctionDeclaration(node) || !node.name) continue;
      const doc = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc).pop();
      if (!doc) continue;
      const params = new Map(
        Array.from(doc.tags ?? [])
          .filter((t): t is ts.JSDocParameterTag => ts.isJSDocParameterTag(t))
          .map((t) => [t.name.getText(source), text(t.comment)]),
      );
      out.set(node.name.text, { text: doc.getText(source), params });
    }
  }
  return out;
}

/** "13000" → "13.0". */
export const release = (n: number) => `${Math.floor(n / 1000)}.${(n % 1000) / 10}`;

let scratch: string | undefined;
/** The text of `paths` (archive-relative) of a release's header archive, or undefined without the archive. */
export function headerFiles(rel: string, paths: string[]): Map<string, string> | undefined {
  const archive = join(ARCHIVES, `cuda-${rel}.tar.gz`);
  if (!existsSync(archive)) return undefined;
  scratch ??= mkdtempSync(join(tmpdir(), 'cuda-ts-facts-'));
  const dir = join(scratch, rel);
  const missing = paths.filter((p) => !existsSync(join(dir, p)));
  if (missing.length) {
    spawnSync('mkdir', ['-p', dir]);
    const r = spawnSync('tar', ['xzf', archive, '-C', dir, ...missing], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`tar failed: ${r.stderr}`);
  }
  return new Map(paths.map((p) => [p, readFileSync(join(dir, p), 'utf8')]));
}

/** Removes the extracted header files (call from afterAll). */
export function removeExtracted(): void {
  if (scratch) spawnSync('rm', ['-rf', scratch]);
  scratch = undefined;
}
