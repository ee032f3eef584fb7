// Release and deprecation claims of the committed TSDoc, checked against the headers themselves and the
// stored IR (derived here independently of the generator):
// - the driver's "Since CUDA X (cudaTypedefs.h)" is the oldest `PFN_<name>_v<N>` typedef of the name, read
//   from each release's cudaTypedefs.h; it is never later than a stored release declaring the function and
//   never earlier than one lacking it;
// - every other claim is a bound, "added after CUDA W; present in CUDA X": W's IR lacks the name, X's has
//   it, W is the stored release before X; no "Since CUDA" outside the driver;
// - @deprecated exactly on the functions the IR marks, and on every function cuDNN's headers mark
//   `CUDNN_DEPRECATED` and NVML's mark `DEPRECATED(13.0)` (with that release).
import { afterAll, describe, expect, test } from '@jest/globals';
import { headerFiles, ir, layerDocs, modulesOf, release, RELEASES, removeExtracted } from './docs-facts-lib';

afterAll(removeExtracted);

/** Base name → the oldest version of its PFN typedefs (identifiers only). */
function oldestPfn(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const [id] of text.matchAll(/\bPFN_\w+/g)) {
    const m = /^PFN_(\w+?)_v(\d+)$/.exec(id);
    if (!m || Number(m[2]) < 1000) continue;
    out.set(m[1], Math.min(out.get(m[1]) ?? Infinity, Number(m[2])));
  }
  return out;
}

describe.each(RELEASES)('driver %s: "Since CUDA X" is the oldest PFN typedef of the name', (rel) => {
  const files = headerFiles(rel, ['include/cudaTypedefs.h']);
  const t = files ? test : test.skip;
  t('every typed and raw function states it, and it agrees with the stored releases', () => {
    const pfn = oldestPfn(files!.get('include/cudaTypedefs.h')!);
    const fns = ir(rel, 'driver')!.functions;
    let exact = 0;
    for (const layer of ['typed', 'raw-layer'] as const) {
      const docs = layerDocs(rel, 'driver', layer);
      for (const f of fns) {
        const doc = docs.get(f.name)?.text ?? '';
        const claims = [...doc.matchAll(/Since CUDA (\d+\.\d+) \(cudaTypedefs\.h\)/g)].map((m) => m[1]);
        if (!f.proc) {
          expect([f.name, claims]).toEqual([f.name, []]);
          continue;
        }
        const expected = f.name === f.proc.name ? release(Math.min(pfn.get(f.name) ?? Infinity, f.proc.version)) : release(f.proc.version);
        expect([f.name, layer, claims]).toEqual([f.name, layer, [expected]]);
        exact++;
        for (const r of RELEASES) {
          const declares = ir(r, 'driver')!.functions.some((g) => g.name === f.name);
          const claimed = Number(expected.split('.')[0]) * 1000 + Number(expected.split('.')[1]) * 10;
          const stored = Number(r.split('.')[0]) * 1000 + Number(r.split('.')[1]) * 10;
          // a release that declares it cannot be older than the claim
          if (declares) expect([f.name, r, claimed <= stored]).toEqual([f.name, r, true]);
        }
      }
    }
    expect(exact).toBeGreaterThan(700);
  });
});

describe('release bounds outside the driver', () => {
  test.each(RELEASES)('%s: every "added after W; present in X" holds in the stored IR; no "Since CUDA"', (rel) => {
    let bounds = 0;
    for (const module of modulesOf(rel)) {
      const chain = RELEASES.filter((r) => ir(r, module) && Number(r) <= Number(rel));
      for (const layer of ['typed', 'raw-layer'] as const) {
        for (const [name, doc] of layerDocs(rel, module, layer)) {
          if (module !== 'driver') expect([module, name, doc.text]).toEqual([module, name, expect.not.stringContaining('Since CUDA')]);
          for (const m of doc.text.matchAll(/added after CUDA (\d+\.\d+); present in CUDA (\d+\.\d+)/gi)) {
            const [after, present] = [m[1], m[2]];
            expect([module, name, chain.indexOf(present as never) - chain.indexOf(after as never)]).toEqual([module, name, 1]);
            expect([module, name, after, ir(after, module)!.functions.some((f) => f.name === name)]).toEqual([module, name, after, false]);
            expect([module, name, present, ir(present, module)!.functions.some((f) => f.name === name)]).toEqual([module, name, present, true]);
            bounds++;
          }
        }
      }
    }
    if (rel !== '11.8') expect(bounds).toBeGreaterThan(100);
  });
});

describe('deprecation', () => {
  test.each(RELEASES)('%s: @deprecated exactly where the IR marks it, in both layers of every module', (rel) => {
    for (const module of modulesOf(rel)) {
      const fns = ir(rel, module)!.functions;
      for (const layer of ['typed', 'raw-layer'] as const) {
        const docs = layerDocs(rel, module, layer);
        const marked = fns.filter((f) => /@deprecated/.test(docs.get(f.name)?.text ?? '')).map((f) => f.name);
        expect([module, layer, marked]).toEqual([module, layer, fns.filter((f) => f.deprecated).map((f) => f.name)]);
      }
    }
  });

  const cudnn = { '12.6': 'include', '13.0': 'extras/cudnn' } as const;
  test.each(Object.entries(cudnn))('cuDNN %s: every CUDNN_DEPRECATED function is @deprecated', (rel, dir) => {
    const files = headerFiles(
      rel,
      ['ops', 'cnn', 'adv', 'graph', 'backend'].map((h) => `${dir}/cudnn_${h}.h`),
    );
    if (!files) return void console.warn(`skipped: no cuda-${rel} archive`);
    const named = new Set<string>();
    for (const text of files.values()) for (const m of text.matchAll(/^CUDNN_DEPRECATED\s+cudnnStatus_t\s+CUDNNWINAPI\s+(cudnn\w+)\s*\(/gm)) named.add(m[1]);
    expect(named.size).toBe(135);
    const docs = layerDocs(rel, 'cudnn', 'typed');
    for (const name of named) expect([name, docs.get(name)?.text]).toEqual([name, expect.stringContaining('@deprecated The headers mark it deprecated.')]);
  });

  test('NVML 13.0: every DEPRECATED(13.0) function is @deprecated as of 13.0', () => {
    const files = headerFiles('13.0', ['include/nvml.h']);
    if (!files) return void console.warn('skipped: no cuda-13.0 archive');
    const named = new Map<string, string>();
    for (const m of files.get('include/nvml.h')!.matchAll(/^DEPRECATED\((\d+\.\d+)\)\s+nvmlReturn_t\s+DECLDIR\s+(nvml\w+)\s*\(/gm)) named.set(m[2], m[1]);
    expect(named.size).toBeGreaterThanOrEqual(20);
    const docs = layerDocs('13.0', 'nvml', 'typed');
    for (const [name, version] of named)
      expect([name, docs.get(name)?.text]).toEqual([name, expect.stringContaining(`@deprecated The headers mark it deprecated as of ${version}.`)]);
  });
});
