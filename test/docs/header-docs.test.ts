// `cuda-ts-gen --docs`: the headers' own documentation (NVIDIA's text) in a user's locally generated tree,
// and never in this repository's. Runs the generator on the 13.0 headers extracted to a temporary folder
// at test time (the archive beside the repository; skipped with the reason when it or clang is absent).
// Checks: ≥ 90% of the functions the headers document get the header's summary and, for every parameter
// the header documents, its text; no \return of the driver, runtime or nvJitLink runs on into link or
// see-also text, and several returns stay list items; the committed bindings of every release contain none of that text;
// --docs is refused for a cuda-ts checkout and without --toolkit.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { parseArgs, run } from '../../generator/cli';
import { headerDocOf, headerDocs, type HeaderDoc } from '../../generator/emit/docs-header';
import { clangAst, findClang } from '../../generator/parse/clang';
import { HEADERS_13_0 } from '../generator/future-release-fixture';

const ROOT = join(__dirname, '..', '..');
const MODULES = { driver: ['cuda.h'], runtime: ['cuda_runtime_api.h'] } as const;

function clangOrUndefined(): string | undefined {
  try {
    return findClang();
  } catch {
    return undefined;
  }
}
const clang = clangOrUndefined();
const why = !existsSync(HEADERS_13_0) ? `the 13.0 header archive is absent (${HEADERS_13_0})` : !clang ? 'clang is not installed' : '';
if (why) console.warn(`header-docs.test.ts skipped: ${why}`);
const describeHeaders = why ? describe.skip : describe;

/** Every exported function of a layer's chunk folder: its doc summary and `@param` texts. */
function emittedDocs(dir: string): Map<string, { summary: string; params: Map<string, string> }> {
  const out = new Map<string, { summary: string; params: Map<string, string> }>();
  const text = (c: string | ts.NodeArray<ts.JSDocComment> | undefined) => (typeof c === 'string' ? c : (c ?? []).map((x) => x.text ?? '').join(''));
  for (const f of readdirSync(dir)) {
    const source = ts.createSourceFile(f, readFileSync(join(dir, f), 'utf8'), ts.ScriptTarget.ES2022, true);
    for (const node of source.statements) {
      if (!ts.isFunctionDeclaration(node) || !node.name) continue;
      const doc = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc).pop();
      const params = new Map(
        Array.from(doc?.tags ?? [])
          .filter((t): t is ts.JSDocParameterTag => ts.isJSDocParameterTag(t))
          .map((t) => [t.name.getText(source), text(t.comment)]),
      );
      out.set(node.name.text, { summary: text(doc?.comment), params });
    }
  }
  return out;
}

/** Normalised words of a text, for comparing header text with emitted TSDoc (markup stripped). */
const words = (s: string) =>
  s
    .replace(/[`*\\]/g, '')
    .replace(/\s+/g, ' ')
    .trim();

describeHeaders('cuda-ts-gen --docs on the 13.0 headers', () => {
  let dir = '';
  let out = '';
  const docs = new Map<string, Map<string, HeaderDoc>>();
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cuda-ts-docs-'));
    const r = spawnSync('tar', ['xzf', HEADERS_13_0, '-C', dir, 'include'], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`tar failed: ${r.stderr}`);
    out = join(dir, 'out');
    const log: string[] = [];
    const code = run(['--docs', '--toolkit', dir, '--out', out, '--modules', 'driver,runtime,nvjitlink', '--jobs', '1'], (l) => log.push(l));
    if (code !== 0) throw new Error(log.join('\n'));
    for (const [m, includes] of Object.entries(MODULES))
      docs.set(m, headerDocs(clangAst({ clang: clang!, includeDirs: [join(dir, 'include')], includes: [...includes] })));
  }, 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const module of Object.keys(MODULES)) {
    test(`${module}: ≥ 90% of the functions the headers document carry their summary and parameter text`, () => {
      const ir = JSON.parse(readFileSync(join(out, 'headers', '13.0', `${module}.json`), 'utf8')) as {
        functions: { name: string; symbol: string; params: { name: string }[] }[];
      };
      const emitted = emittedDocs(join(out, 'generated', '13.0', module, 'raw-layer'));
      const own = docs.get(module)!;
      const documented = ir.functions.filter((f) => own.get(f.symbol)?.brief);
      const carried = documented.filter((f) => {
        const h = own.get(f.symbol)!;
        const e = emitted.get(f.name);
        if (!e || !words(e.summary).startsWith(words(h.brief!).slice(0, 40))) return false;
        return f.params.every((p) => !h.params.get(p.name) || words(e.params.get(p.name) ?? '').includes(words(h.params.get(p.name)!).slice(0, 40)));
      });
      expect(documented.length).toBeGreaterThan(module === 'driver' ? 300 : 200);
      expect(carried.length / documented.length).toBeGreaterThanOrEqual(0.9);
    });
  }

  /** Each function's doc comment of a layer folder of the --docs tree, by function name. */
  function docComments(module: string): Map<string, string> {
    const dir = join(out, 'generated', '13.0', module, 'typed');
    const docsByName = new Map<string, string>();
    for (const f of readdirSync(dir)) {
      const text = readFileSync(join(dir, f), 'utf8');
      for (const m of text.matchAll(/(\/\*\*[\s\S]*?\*\/)\s*export (?:async )?function (\w+)/g)) docsByName.set(m[2], m[1]);
    }
    return docsByName;
  }

  test('driver, runtime, nvJitLink: a \\return never runs on into link or see-also text; several stay list items', () => {
    let returns = 0;
    for (const module of ['driver', 'runtime', 'nvjitlink']) {
      for (const [name, doc] of docComments(module)) {
        const block = /C returns:[\s\S]*?(?=\n \* @| \*\/)/.exec(doc)?.[0];
        if (!block) continue;
        returns++;
        expect([module, name, block]).toEqual([module, name, expect.not.stringMatching(/\\(see|sa|link|endlink|ref)\b|\{@link|\bsee\b/)]);
        // a list of returns starts on a line of its own
        if (/\n \* - /.test(block)) expect([name, block]).toEqual([name, expect.stringMatching(/^C returns:\n \* - /)]);
      }
    }
    expect(returns).toBeGreaterThan(600);
    const create = docComments('nvjitlink').get('nvJitLinkCreate')!;
    expect(create).toMatch(/C returns:\n \* - `NVJITLINK_SUCCESS`\n \* - `NVJITLINK_ERROR_UNRECOGNIZED_OPTION`\n/);
    expect(create).toMatch(/\n \* @see \{@link nvJitLinkDestroy\}/);
  });

  /** 8-word runs of prose (plain words only: the headers' C declarations are facts our signatures share). */
  const plain = /^[A-Za-z][a-z]*[.,;:]?$/;
  const runs = (s: string) => {
    const w = words(s).split(' ');
    return w.length < 8
      ? []
      : w
          .slice(0, w.length - 7)
          .map((_, i) => w.slice(i, i + 8))
          .filter((r) => r.every((x) => plain.test(x)))
          .map((r) => r.join(' '));
  };
  /** The runs of the headers' briefs, details and parameter texts found in the doc comments under `tree`. */
  function headerTextIn(tree: string): string[] {
    const header = new Set<string>();
    for (const d of docs.values())
      for (const h of d.values()) for (const t of [h.brief ?? '', h.details ?? '', ...h.params.values()]) runs(t).forEach((r) => header.add(r));
    expect(header.size).toBeGreaterThan(1000);
    const found: string[] = [];
    for (const f of readdirSync(tree, { recursive: true }) as string[]) {
      if (!f.endsWith('.ts')) continue;
      const text = readFileSync(join(tree, f), 'utf8');
      for (const c of text.match(/\/\*\*[\s\S]*?\*\//g) ?? []) for (const r of runs(c.replace(/^\s*\*\s?/gm, ' '))) if (header.has(r)) found.push(`${f}: ${r}`);
    }
    return found;
  }

  test("the committed bindings of every release hold none of the headers' text", () => {
    expect(headerTextIn(join(ROOT, 'generated')).slice(0, 5)).toEqual([]);
  }, 120_000);

  test("the same check finds the headers' text in the --docs tree", () => {
    expect(headerTextIn(join(out, 'generated')).length).toBeGreaterThan(1000);
  }, 60_000);
});

describe("cuda-ts-gen --docs is for a user's own tree", () => {
  test('refused for a cuda-ts checkout, and without --toolkit', () => {
    expect(parseArgs(['--docs', '--toolkit', '/x']).docs).toBe(true);
    expect(parseArgs(['--toolkit', '/x']).docs).toBe(false);
    expect(() => run(['--docs', '--toolkit', '/nonexistent', '--out', ROOT])).toThrow(
      /--docs writes the headers' own documentation.*outside a cuda-ts checkout/,
    );
    expect(() => run(['--docs', '--from-ir'])).toThrow(/--docs reads the headers: it needs --toolkit/);
  });
});

describe('Doxygen markup to Markdown (synthetic comments, as clang parses them)', () => {
  const para = (...inner: object[]) => ({ kind: 'ParagraphComment', inner });
  const txt = (text: string) => ({ kind: 'TextComment', text });
  test('brief, parameters, returns, see-also, deprecation and inline markup', () => {
    const doc = headerDocOf({
      kind: 'FullComment',
      inner: [
        {
          kind: 'BlockCommandComment',
          name: 'brief',
          inner: [para(txt(' Frobs '), { kind: 'InlineCommandComment', name: 'p', renderKind: 'monospaced', args: ['n'] }, txt(' widgets @ once'))],
        },
        para(txt(' Longer words, see ::cuFrob and {braces}.')),
        {
          kind: 'ParamCommandComment',
          param: 'n',
          inner: [para(txt(' How '), { kind: 'InlineCommandComment', name: 'b', renderKind: 'bold', args: ['many'] }, txt('.'))],
        },
        { kind: 'BlockCommandComment', name: 'return', inner: [para(txt(' ::CUDA_SUCCESS, ::CUDA_ERROR_X'))] },
        { kind: 'BlockCommandComment', name: 'sa', inner: [para(txt(' ::cuFrobAsync, ::cuUnfrob'))] },
        { kind: 'BlockCommandComment', name: 'deprecated', inner: [para(txt(' Use ::cuFrob2.'))] },
      ],
    });
    expect(doc).toEqual({
      brief: 'Frobs `n` widgets \\@ once',
      details: 'Longer words, see `cuFrob` and \\{braces\\}.',
      params: new Map([['n', 'How **many**.']]),
      returns: '`CUDA_SUCCESS`, `CUDA_ERROR_X`',
      see: ['{@link cuFrobAsync}', '{@link cuUnfrob}'],
      deprecated: 'Use `cuFrob2`.',
    });
  });
});
