// The facts of the committed TSDoc agree with the stored IR, computed here independently of the emitter:
// @deprecated exactly on the functions whose declaration carries the attribute; "added after CUDA W;
// present in CUDA X" (bounds, never a first release) on a runtime function first declared by stored release
// X, W the stored release before it; the NVIDIA group page of its group; an enum member or a record field
// first declared by a later release bounded so.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..');
const RELEASES = ['11.8', '12.5', '12.6', '13.0'];
type IR = {
  functions: { name: string; deprecated?: true; group?: string }[];
  enums: { name: string; members: { name: string }[] }[];
  records: { name: string; fields: { name: string }[] }[];
};
const ir = (release: string, module: string): IR => JSON.parse(readFileSync(join(ROOT, 'headers', release, `${module}.json`), 'utf8'));

/** Function name → its TSDoc text, from a layer's chunk files. */
function docs(release: string, module: string, layer: 'typed' | 'raw-layer'): Map<string, string> {
  const dir = join(ROOT, 'generated', release, module, layer);
  const out = new Map<string, string>();
  for (const f of readdirSync(dir)) {
    const source = ts.createSourceFile(f, readFileSync(join(dir, f), 'utf8'), ts.ScriptTarget.ES2022, true);
    for (const node of source.statements) {
      if (!ts.isFunctionDeclaration(node) || !node.name) continue;
      const doc = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc).pop();
      if (doc) out.set(node.name.text, doc.getText(source));
    }
  }
  return out;
}

/** The first of the four releases whose IR has `has`, for a module. */
function firstRelease(module: string, has: (x: IR) => boolean): string | undefined {
  return RELEASES.find((r) => has(ir(r, module)));
}

describe('facts in the committed TSDoc (13.0)', () => {
  for (const module of ['driver', 'runtime']) {
    test(`${module}: @deprecated exactly where the header's attribute is, in both layers`, () => {
      const fns = ir('13.0', module).functions;
      expect(fns.filter((f) => f.deprecated).length).toBeGreaterThan(5);
      for (const layer of ['typed', 'raw-layer'] as const) {
        const d = docs('13.0', module, layer);
        const marked = fns.filter((f) => /@deprecated/.test(d.get(f.name) ?? '')).map((f) => f.name);
        expect(marked).toEqual(fns.filter((f) => f.deprecated).map((f) => f.name));
      }
    });
  }

  test('runtime: the release that introduced each function, and its group page', () => {
    const d = docs('13.0', 'runtime', 'typed');
    const fns = ir('13.0', 'runtime').functions;
    let dated = 0;
    for (const f of fns) {
      const first = firstRelease('runtime', (x) => x.functions.some((g) => g.name === f.name));
      const text = d.get(f.name)!;
      if (first !== '11.8') {
        const before = RELEASES[RELEASES.indexOf(first!) - 1];
        expect([f.name, text]).toEqual([f.name, expect.stringContaining(`Added after CUDA ${before}; present in CUDA ${first}.`)]);
        dated++;
      } else expect([f.name, text]).toEqual([f.name, expect.not.stringMatching(/Since CUDA|added after/i)]);
      if (f.group) expect(text).toContain(`group__${f.group.replace(/_/g, '__')}.html`);
    }
    expect(dated).toBeGreaterThan(5);
  });

  test('driver: enum members and record fields a later release added are dated', () => {
    const types = readFileSync(join(ROOT, 'generated', '13.0', 'driver', 'types.ts'), 'utf8');
    const latest = ir('13.0', 'driver');
    const e = latest.enums.find((x) => x.name === 'enum CUarray_format_enum')!;
    const newMembers = e.members.filter(
      (m) => firstRelease('driver', (x) => x.enums.some((y) => y.name === e.name && y.members.some((n) => n.name === m.name))) !== '11.8',
    );
    expect(newMembers.length).toBeGreaterThan(0);
    for (const m of newMembers) {
      const first = firstRelease('driver', (x) => x.enums.some((y) => y.name === e.name && y.members.some((n) => n.name === m.name)));
      const before = RELEASES[RELEASES.indexOf(first!) - 1];
      expect(types).toMatch(
        new RegExp(`/\\*\\* (0x[0-9a-f]+ · )?added after CUDA ${before.replace('.', '\\.')}; present in CUDA ${first!.replace('.', '\\.')} \\*/ ${m.name} =`),
      );
    }
    const fieldLines = types.split('\n').filter((l) => /\/\*\* `[^`]+` at byte \d+ · added after CUDA \d+\.\d; present in CUDA \d+\.\d \*\//.test(l));
    expect(fieldLines.length).toBeGreaterThan(0);
  });
});
