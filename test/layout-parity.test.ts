// Layout parity: for every record of every module and release under headers/, the koffi type built
// from the generated `records.X()` has clang's size, alignment and field offsets (from the IR).
// Bitfields live in integer storage units (`_bitsN`): each bitfield must fall inside its unit.
// koffi's alignment is capped at 8: a record clang aligns to 16 or more is checked for alignment 8.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import koffi from 'koffi';
import type { KoffiType } from '../support';
import { readIR, storedReleases } from '../generator/ir/store';

const root = join(__dirname, '..');
const modules = (release: string) =>
  readdirSync(join(root, 'headers', release))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.replace(/\.json$/, ''))
    .filter((m) => existsSync(join(root, 'generated', release, m, 'types.ts')))
    .sort();

const cases = storedReleases(root).flatMap((release) => modules(release).map((module) => [release, module] as const));
let checked = 0;
let fieldsChecked = 0;

afterAll(() => {
  console.log(`layout parity: ${checked} records (${fieldsChecked} field offsets) across ${cases.length} module/release pairs`);
});

describe.each(cases)('layout parity %s %s', (release, module) => {
  test('every record matches clang (size, align, offsets)', () => {
    const ir = readIR(root, release, module);
    const types = require(join(root, 'generated', release, module, 'types.ts')) as { records: Record<string, () => KoffiType> };
    const failures: string[] = [];
    for (const r of ir.records) {
      const name = r.name.replace(/^(struct|union) /, '');
      const make = types.records[name];
      if (!make) {
        failures.push(`${name}: no records.${name}`);
        continue;
      }
      let t: KoffiType;
      try {
        t = make();
      } catch (e) {
        failures.push(`${name}: koffi type fails: ${(e as Error).message}`);
        continue;
      }
      const size = koffi.sizeof(t);
      const align = koffi.alignof(t);
      if (size !== r.size) failures.push(`${name}: sizeof ${size}, clang ${r.size}`);
      // koffi aligns to at most 8 bytes: records aligned beyond (float4, CUtensorMap) keep clang's size
      // and offsets through explicit padding, with alignment 8
      if (align !== Math.min(r.align, 8)) failures.push(`${name}: alignof ${align}, clang ${r.align}`);
      const members = (koffi.type(t) as unknown as { members: Record<string, { type: KoffiType; offset: number }> }).members;
      const units = Object.keys(members).filter((k) => k.startsWith('_bits'));
      for (const f of r.fields) {
        if (f.bitWidth !== undefined && f.bitOffset !== undefined) {
          if (f.bitWidth === 0) continue;
          const inside = units.some((u) => {
            const off = members[u].offset;
            const sz = koffi.sizeof(members[u].type);
            return f.bitOffset! >= off * 8 && f.bitOffset! + f.bitWidth! <= (off + sz) * 8;
          });
          if (!inside) failures.push(`${name}.${f.name}: bitfield at bit ${f.bitOffset} is in no storage unit`);
        } else {
          const m = members[f.name];
          if (!m) failures.push(`${name}.${f.name}: no such koffi member`);
          else if (m.offset !== f.offset) failures.push(`${name}.${f.name}: offset ${m.offset}, clang ${f.offset}`);
        }
        fieldsChecked++;
      }
      checked++;
    }
    expect(failures).toEqual([]);
  });
});
