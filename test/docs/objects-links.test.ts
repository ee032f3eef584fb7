// The objects-layer links of the generated TSDoc (generator/emit/docs-objects.ts): each class is exported
// by cuda-ts/objects, each member exists with the static-ness its link says (`Class.member` static,
// `Class#member` instance) and its body names the C function it is said to wrap. A renamed method, a
// moved call or a typo fails here, not as a dead link in an editor or the reference site.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { OBJECTS_METHODS } from '../../generator/emit/docs-objects';

const SRC = join(__dirname, '..', '..', 'src');

/** Every class declared under src/, by name, with its members' names, static-ness and text. */
function classes(): Map<string, { name: string; isStatic: boolean; text: string }[]> {
  const out = new Map<string, { name: string; isStatic: boolean; text: string }[]>();
  for (const f of readdirSync(SRC, { recursive: true }) as string[]) {
    if (!f.endsWith('.ts')) continue;
    const source = ts.createSourceFile(f, readFileSync(join(SRC, f), 'utf8'), ts.ScriptTarget.ES2022, true);
    for (const node of source.statements) {
      if (!ts.isClassDeclaration(node) || !node.name) continue;
      out.set(node.name.text, node.members.flatMap((m) => {
        if (!m.name || !(ts.isIdentifier(m.name) || ts.isStringLiteral(m.name))) return [];
        const isStatic = !!ts.getModifiers(m as ts.HasModifiers)?.some((x) => x.kind === ts.SyntaxKind.StaticKeyword);
        return [{ name: m.name.text, isStatic, text: m.getText(source) }];
      }));
    }
  }
  return out;
}

const declared = classes();
const index = readFileSync(join(SRC, 'index.ts'), 'utf8');

describe('objects-layer links of the generated docs', () => {
  test('the table has entries', () => {
    expect(Object.keys(OBJECTS_METHODS).length).toBeGreaterThan(40);
  });
  for (const [cName, link] of Object.entries(OBJECTS_METHODS)) {
    test(`${cName} → ${link}`, () => {
      const m = /^(\w+)([.#])(\w+)$/.exec(link);
      expect(m).not.toBeNull();
      const [, cls, sep, member] = m!;
      expect(index).toMatch(new RegExp(`\\b${cls}\\b`));
      const members = declared.get(cls);
      expect(members).toBeDefined();
      const found = members!.filter((x) => x.name === member);
      expect(found.map((x) => x.isStatic)).toContain(sep === '.');
      expect(found.some((x) => x.text.includes(`'${cName}'`) || x.text.includes(`.${cName}(`))).toBe(true);
    });
  }
});
