// Names, not numbers: every enum the objects API takes or returns (a parameter, a return value, a
// property of an exported class, interface or type) is exported from cuda-ts/objects by name, so a
// program never has to reach into the generated bindings for `CUstreamCaptureMode` and friends.
// The TypeScript checker walks the public surface of src/index.ts.
import ts from 'typescript';
import { join } from 'node:path';

const ENTRY = join(__dirname, '..', 'src', 'index.ts');

/** Enums (by name) reachable from the public declarations exported by `entry`, and the names it exports. */
function publicEnums(entry: string): { enums: Map<string, string>; exported: Set<string> } {
  const program = ts.createProgram([entry], { strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry)!;
  const moduleSymbol = checker.getSymbolAtLocation(source)!;
  const exports = checker.getExportsOfModule(moduleSymbol);
  const exported = new Set(exports.map((s) => s.getName()));
  const enums = new Map<string, string>(); // enum name -> where it was seen
  const seen = new Set<ts.Type>();
  const visitType = (type: ts.Type, where: string, depth: number): void => {
    if (depth > 6 || seen.has(type)) return;
    seen.add(type);
    const sym = type.aliasSymbol ?? type.getSymbol();
    if (type.flags & ts.TypeFlags.EnumLike) {
      const e = type.flags & ts.TypeFlags.EnumLiteral && !(type.flags & ts.TypeFlags.Union) ? checker.getBaseTypeOfLiteralType(type).getSymbol() : sym;
      const name = (e ?? sym)?.getName();
      if (name && !enums.has(name)) enums.set(name, where);
      return;
    }
    if (type.isUnionOrIntersection()) return type.types.forEach((t) => visitType(t, where, depth));
    if (sym && sym.declarations?.some((d) => d.getSourceFile().fileName.includes('/generated/'))) return; // generated records: not the objects API
    for (const sig of [...type.getCallSignatures(), ...type.getConstructSignatures()]) visitSignature(sig, where, depth + 1);
    if (type.flags & ts.TypeFlags.Object && !(sym && /^(Promise|Array|ReadonlyArray|Map|Set)$/.test(sym.getName()))) {
      for (const p of type.getProperties()) {
        if (p.getName().startsWith('_') || p.getName().startsWith('#')) continue;
        const decl = p.valueDeclaration ?? p.declarations?.[0];
        if (!decl || decl.getSourceFile().fileName.includes('node_modules')) continue;
        const mods = ts.canHaveModifiers(decl) ? (ts.getModifiers(decl) ?? []) : [];
        if (mods.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword)) continue;
        if (ts.getJSDocTags(decl).some((t) => t.tagName.text === 'internal')) continue;
        visitType(checker.getTypeOfSymbolAtLocation(p, decl), `${where}.${p.getName()}`, depth + 1);
      }
    }
    for (const arg of (type as ts.TypeReference).typeArguments ?? []) visitType(arg, where, depth + 1);
  };
  const visitSignature = (sig: ts.Signature, where: string, depth: number): void => {
    for (const p of sig.getParameters()) visitType(checker.getTypeOfSymbol(p), `${where}(${p.getName()})`, depth);
    visitType(sig.getReturnType(), `${where}()`, depth);
  };
  for (const s of exports) {
    const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
    const decl = target.declarations?.[0];
    if (!decl || !decl.getSourceFile().fileName.includes('/src/')) continue;
    if (target.flags & ts.SymbolFlags.Enum) continue;
    visitType(checker.getDeclaredTypeOfSymbol(target), s.getName(), 0);
    if (target.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Function | ts.SymbolFlags.Variable))
      visitType(checker.getTypeOfSymbolAtLocation(target, decl), s.getName(), 0);
  }
  return { enums, exported };
}

test('every enum the objects API takes or returns is exported from cuda-ts/objects by name', () => {
  const { enums, exported } = publicEnums(ENTRY);
  expect(enums.size).toBeGreaterThan(3); // the walk finds them (CUstreamCaptureMode, CUdevice_attribute, …)
  expect(enums.has('CUstreamCaptureMode')).toBe(true);
  const missing = [...enums].filter(([name]) => !exported.has(name)).map(([name, where]) => `${name} (${where})`);
  expect(missing).toEqual([]);
}, 120_000);
