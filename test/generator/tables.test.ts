// The four table formats the generator writes into generated modules and the support package reads at
// run time (support/tables/*): what is written reads back as the same data.
import { BINDING_TABLE_HEADER, readBindingEntry, writeBindingTable, type BindingEntry } from '../../support/tables/binding';
import { CHUNK_TABLE_HEADER, forEachChunkMember, readChunkTable, writeChunkTable, type ChunkEntry } from '../../support/tables/chunks';
import { enumAliasOf, enumObjectOf, forEachEnumLine, readEnumTable, writeEnumTable, type EnumEntry } from '../../support/tables/enums';
import { readRecordTable, writeRecordTable, type RecordEntry } from '../../support/tables/records';

/** A table as the generated code holds it: a template literal starting and ending with a newline. */
const literal = (lines: string[]) => `\n${lines.join('\n')}\n`;

test('binding table: each entry reads back by name; a name not in the table reads as undefined', () => {
  const entries: BindingEntry[] = [
    { name: 'cuMemAlloc', symbol: 'cuMemAlloc_v2', result: 'int', params: ['void *', 'size_t'], proc: ['cuMemAlloc', 3020] },
    {
      name: 'cuMemcpyAsync',
      symbol: 'cuMemcpyAsync',
      ptdsSymbol: 'cuMemcpyAsync_ptsz',
      result: 'int',
      params: ['uint64_t', 'uint64_t', 'size_t', 'void *'],
      since: '12.6',
      proc: ['cuMemcpyAsync', 4000, 7000],
    },
    { name: 'cuDriverGetVersion', symbol: 'cuDriverGetVersion', result: 'int', params: ['void *'] },
    { name: 'cuLaunchKernelEx', symbol: 'cuLaunchKernelEx', result: 'int', params: ['@CUlaunchConfig_st', 'void *'] },
    { name: 'cuInit0', symbol: 'cuInit0', result: 'void', params: [] },
  ];
  const lines = writeBindingTable(entries);
  expect(lines[2]).toBe('cuDriverGetVersion|cuDriverGetVersion||int|void *||');
  for (const table of [literal(lines), lines.join('\n')]) {
    for (const e of entries) expect(readBindingEntry(table, e.name)).toEqual(e);
    expect(readBindingEntry(table, 'cuMem')).toBeUndefined();
  }
  expect(BINDING_TABLE_HEADER.startsWith('// name|symbol|')).toBe(true);
  expect(() => writeBindingTable([{ name: 'f`', symbol: 'f', result: 'int', params: [] }])).toThrow(/needs escaping/);
});

test('chunk table: chunks, members, aliases and parameter counts read back', () => {
  const chunks: ChunkEntry[] = [
    {
      chunk: 'Mem',
      members: [
        { name: 'cuMemAlloc', target: 'cuMemAlloc', params: 2 },
        { name: 'cuMemAlloc_v2', target: 'cuMemAlloc', params: 2 },
        { name: 'cuMemFree', target: 'cuMemFree', params: 1 },
      ],
    },
    {
      chunk: 'Ctx_Device',
      members: [
        { name: 'cuCtxGetCurrent', target: 'cuCtxGetCurrent', params: 1 },
        { name: 'cuLaunchKernel', target: 'cuLaunchKernel', params: 11 },
        { name: 'cuInit', target: 'cuInit', params: 0 },
      ],
    },
  ];
  const lines = writeChunkTable(chunks);
  expect(lines[0]).toBe('Mem|cuMemAlloc/2 cuMemAlloc_v2=cuMemAlloc/2 cuMemFree/1');
  const table = literal(lines);
  expect(readChunkTable(table)).toEqual(chunks);
  const seen: [number, string, string, number][] = [];
  forEachChunkMember(table, (chunk, _line, name, target, n) => seen.push([chunk, name, target, n]));
  expect(seen).toEqual(chunks.flatMap((c, i) => c.members.map((m) => [i, m.name, m.target, m.params])));
  expect(CHUNK_TABLE_HEADER).toContain('lazyFunctions');
});

test('enum table: members (bigints beyond 2^53), aliases and empty enums read back; the enum object maps both ways', () => {
  const entries: EnumEntry[] = [
    {
      name: 'E',
      members: [
        { name: 'A', value: 0 },
        { name: 'B', value: 1 },
        { name: 'C', value: -1 },
        { name: 'BIG', value: 18446744073709551615n },
      ],
    },
    { name: 'E_enum', alias: 'E' },
    { name: 'Empty', members: [] },
  ];
  const lines = writeEnumTable(entries);
  expect(lines).toEqual(['E|A=0 B=1 C=-1 BIG=18446744073709551615n', 'E_enum=E', 'Empty|']);
  // the IR's decimal strings write the same table
  expect(
    writeEnumTable([
      {
        name: 'E',
        members: [
          { name: 'A', value: '0' },
          { name: 'B', value: '1' },
          { name: 'C', value: '-1' },
          { name: 'BIG', value: '18446744073709551615' },
        ],
      },
    ])[0],
  ).toBe(lines[0]);
  const table = literal(lines);
  expect(readEnumTable(table)).toEqual(entries);
  const objects: Record<string, unknown> = {};
  forEachEnumLine(table, (name, sep, end) => (objects[name] = enumAliasOf(table, sep, end) ?? enumObjectOf(table, sep, end)));
  expect(objects.E).toEqual({ A: 0, B: 1, C: -1, BIG: 18446744073709551615n, 0: 'A', 1: 'B', '-1': 'C', '18446744073709551615': 'BIG' });
  expect(objects.E_enum).toBe('E');
  expect(objects.Empty).toEqual({});
});

test('records table: scalars, records, nested arrays, strings, alignment and unions read back', () => {
  const records: RecordEntry[] = [
    {
      name: 'P',
      kind: 'struct',
      fields: [
        { name: 'x', type: 'int32_t' },
        { name: 'y', type: 'int32_t', align: 4 },
      ],
    },
    {
      name: 'Q',
      kind: 'union',
      fields: [
        { name: 'p', type: 'P', record: true },
        { name: 'm', type: 'int32_t', dims: [4, 2] },
        { name: 'label', type: 'char', dims: [16], text: true, align: 8 },
        { name: 'ps', type: 'P', record: true, dims: [3] },
      ],
    },
    { name: 'Empty', kind: 'struct', fields: [] },
  ];
  const lines = writeRecordTable(records);
  expect(lines[1]).toBe('Q|union|p:&P,m:int32_t[4][2],label:char[16]$@8,ps:&P[3]');
  expect(readRecordTable(literal(lines))).toEqual(records);
  expect(() => writeRecordTable([{ name: 'R', kind: 'struct', fields: [{ name: 'a,b', type: 'int' }] }])).toThrow(/cannot go in the records table/);
});
