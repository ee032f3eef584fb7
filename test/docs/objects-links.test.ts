// The objects-layer links of the generated TSDoc (generator/emit/docs-objects.ts): each class is exported
// by cuda-ts/objects, each member exists with the static-ness its link says (`Class.member` static,
// `Class#member` instance), is public (not private, protected or @internal: the site leaves those out) and
// its body names the C function it is said to wrap, or calls a member of its class that does. A renamed method, a
// moved call or a typo fails here, not as a dead link in an editor or the reference site.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { OBJECTS_METHODS } from '../../generator/emit/docs-objects';

const SRC = join(__dirname, '..', '..', 'src');

/** Every class declared under src/, by name, with its members' names, static-ness and text. */
interface Member {
  name: string;
  isStatic: boolean;
  isPublic: boolean;
  text: string;
}

function classes(): Map<string, Member[]> {
  const out = new Map<string, Member[]>();
  for (const f of readdirSync(SRC, { recursive: true }) as string[]) {
    if (!f.endsWith('.ts')) continue;
    const source = ts.createSourceFile(f, readFileSync(join(SRC, f), 'utf8'), ts.ScriptTarget.ES2022, true);
    for (const node of source.statements) {
      if (!ts.isClassDeclaration(node) || !node.name) continue;
      out.set(
        node.name.text,
        node.members.flatMap((m) => {
          if (!m.name || !(ts.isIdentifier(m.name) || ts.isStringLiteral(m.name))) return [];
          const modifiers = ts.getModifiers(m as ts.HasModifiers) ?? [];
          const isStatic = modifiers.some((x) => x.kind === ts.SyntaxKind.StaticKeyword);
          const hidden =
            modifiers.some((x) => x.kind === ts.SyntaxKind.PrivateKeyword || x.kind === ts.SyntaxKind.ProtectedKeyword) ||
            m.name.getText(source).startsWith('#') ||
            ts.getJSDocTags(m).some((t) => t.tagName.text === 'internal');
          return [{ name: m.name.text, isStatic, isPublic: !hidden, text: m.getText(source) }];
        }),
      );
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
      const found = members!.filter((x) => x.name === member && x.isStatic === (sep === '.') && x.isPublic);
      expect(found.length).toBeGreaterThan(0);
      const names = (x: Member) => x.text.includes(`'${cName}'`) || x.text.includes(`.${cName}(`);
      // one level down: a helper of the same class the member calls (`MemoryPool.make(…)`, `this.open(…)`)
      const helpers = (x: Member) => members!.filter((y) => y !== x && new RegExp(`\\b(?:this|${cls})\\.${y.name}\\(`).test(x.text));
      expect(found.some((x) => names(x) || helpers(x).some(names))).toBe(true);
    });
  }
});
