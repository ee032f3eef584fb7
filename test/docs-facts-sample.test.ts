// The check that keeps the TSDoc true: a fixed pseudo-random sample of typed functions from every module
// of every stored release; each fact the doc states is compared with the IR and the headers' tags kept in
// it (a parameter's explicit [in]/[out], its `optional` cue), and with the C declaration:
// - direction: an input word ("in") never on a parameter the header tags [out], nor on a non-const
//   pointer the pointer model writes; no output word on a `const T *`;
// - null: "null allowed"/"or null" only where the header tags the parameter optional or a reviewed
//   override (the semantics' source) says so;
// - release: "Since CUDA X" only where the IR's `introduced` is X; bounds only where the stored IR agrees;
// - deprecation: @deprecated exactly where the IR marks the function;
// - unit: a count or size names a parameter of the function, and a byte count is an integer parameter.
import { describe, expect, test } from '@jest/globals';
import { TypeModel } from '../generator/model';
import { findModule, specForRelease } from '../generator/modules';
import { formatCType } from '../generator/parse/ctype';
import { resolveModule, type FunctionSem } from '../generator/semantics';
import type { FunctionDecl } from '../generator/ir/schema';
import { ir, layerDocs, modulesOf, release, RELEASES, type FnDoc } from './docs-facts-lib';

/** mulberry32: the same sample on every run. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PER_MODULE = 12;
const isConstPointer = (f: FunctionDecl, i: number) => {
  const t = f.params[i].type;
  return t.kind === 'pointer' && !!t.to.const;
};

/** Every contradiction between one function's doc and its facts, as readable lines. */
function contradictions(module: string, rel: string, f: FunctionDecl, sem: FunctionSem, doc: FnDoc): string[] {
  const out: string[] = [];
  const say = (what: string) => out.push(`${rel} ${module}.${f.name}: ${what}`);
  f.params.forEach((p, i) => {
    const text = doc.params.get(p.name) ?? doc.params.get(`${p.name}_`) ?? '';
    const s = sem.params[i];
    if (!text) return;
    const word = /^(in\/out|in|out)\b/.exec(text)?.[1];
    if (word === 'in' && p.doc?.dir === 'out' && !text.includes('value typed by')) say(`${p.name} says "in", the header tags it [out]`);
    if (word === 'in' && s.sem.role === 'pointer' && s.sem.dir && s.sem.dir !== 'in') say(`${p.name} says "in", the pointer model says ${s.sem.dir}`);
    if ((word === 'out' || word === 'in/out') && isConstPointer(f, i) && s.sem.role === 'pointer') say(`${p.name} says "${word}" on a const pointer`);
    if (/null allowed|or null/.test(text) && !(p.doc?.cues.includes('optional') || s.source === 'override'))
      say(`${p.name} says null is allowed without a fact`);
    for (const [, ref] of text.matchAll(/`(\w+)` (?:bytes|elements)/g))
      if (!f.params.some((q) => q.name === ref)) say(`${p.name} counts by \`${ref}\`, no parameter of that name`);
    for (const [, ref] of text.matchAll(/covering `(\w+)` bytes/g)) {
      const q = f.params.find((x) => x.name === ref);
      if (!q || !/int|size_t|long/.test(formatCType(q.type, ''))) say(`${p.name} covers \`${ref}\` bytes: not an integer parameter`);
    }
  });
  const since = [...doc.text.matchAll(/Since CUDA (\d+\.\d+)/g)].map((x) => x[1]);
  if (since.length && (f.introduced === undefined || since.some((v) => v !== release(f.introduced!))))
    say(`says Since CUDA ${since.join(', ')}; the IR's introduced is ${f.introduced}`);
  for (const b of doc.text.matchAll(/added after CUDA (\d+\.\d+); present in CUDA (\d+\.\d+)/gi)) {
    if (ir(b[1], module)?.functions.some((g) => g.name === f.name)) say(`says added after ${b[1]}, which declares it`);
    if (!ir(b[2], module)?.functions.some((g) => g.name === f.name)) say(`says present in ${b[2]}, which lacks it`);
  }
  if (/@deprecated/.test(doc.text) !== !!f.deprecated) say(`@deprecated ${f.deprecated ? 'missing' : 'without the IR marking it'}`);
  if (f.deprecatedIn && !doc.text.includes(`as of ${f.deprecatedIn}`)) say(`deprecated as of ${f.deprecatedIn} not said`);
  return out;
}

describe.each(RELEASES)('a sample of %s: every stated fact agrees with the IR and the header tags', (rel) => {
  test.each(modulesOf(rel))('%s', (module) => {
    const m = ir(rel, module)!;
    const model = new TypeModel(m, specForRelease(findModule(module)!, rel));
    const sems = resolveModule(model);
    const docs = layerDocs(rel, module, 'typed');
    const next = rng([...`${rel}/${module}`].reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, 7));
    const picked = new Set<number>();
    while (picked.size < Math.min(PER_MODULE, m.functions.length)) picked.add(Math.floor(next() * m.functions.length));
    const found: string[] = [];
    let checked = 0;
    for (const i of picked) {
      const f = m.functions[i];
      const doc = docs.get(f.name);
      if (!doc) continue;
      found.push(...contradictions(module, rel, f, sems[i], doc));
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
    expect(found).toEqual([]);
  });
});

describe('the check finds contradictions (mutated docs of real functions)', () => {
  const m = ir('13.0', 'driver')!;
  const sems = resolveModule(new TypeModel(m, specForRelease(findModule('driver')!, '13.0')));
  const docs = layerDocs('13.0', 'driver', 'typed');
  const check = (name: string, mutate: (d: FnDoc) => FnDoc) => {
    const i = m.functions.findIndex((f) => f.name === name);
    return contradictions('driver', '13.0', m.functions[i], sems[i], mutate(docs.get(name)!));
  };
  test('the real docs are clean', () => {
    for (const name of ['cuMemAlloc', 'cuMemcpyHtoD', 'cuCtxAttach']) expect(check(name, (d) => d)).toEqual([]);
  });
  test('a wrong release, a lost @deprecated, an unfounded null, a wrong direction, a missing count', () => {
    expect(check('cuMemAlloc', (d) => ({ ...d, text: d.text.replace('Since CUDA 2.0', 'Since CUDA 12.5') }))).toEqual([
      expect.stringContaining('Since CUDA 12.5'),
    ]);
    expect(check('cuCtxAttach', (d) => ({ ...d, text: d.text.replace(/@deprecated[^\n]*/, '') }))).toEqual([expect.stringContaining('@deprecated missing')]);
    const withParam = (name: string, text: string) => (d: FnDoc) => ({ ...d, params: new Map([...d.params, [name, text]]) });
    expect(check('cuMemcpyHtoD', withParam('srcHost', 'in `const void *`: host memory; null allowed.'))).toEqual([
      expect.stringContaining('null is allowed without a fact'),
    ]);
    expect(check('cuMemcpyHtoD', withParam('srcHost', 'out `const void *`: host memory.'))).toEqual([expect.stringContaining('on a const pointer')]);
    expect(check('cuMemcpyHtoD', withParam('srcHost', 'in `const void *`: address or host buffer covering `count` bytes.'))).toEqual([
      expect.stringContaining('no parameter of that name'),
      expect.stringContaining('not an integer parameter'),
    ]);
    expect(check('cuMemcpyHtoD', withParam('srcHost', 'in `const void *`: address or host buffer covering `ByteCount` bytes.'))).toEqual([]);
  });
});
