// bench/summary.ts: the README's performance table as `npm run bench` writes it (summary.md), and the
// README carrying a table of that shape between its bench-summary markers.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ImplResult, MeasuredRow } from '../bench/common';
import { summaryTable } from '../bench/summary';

const row = (median: number, unit: 'ns' | 'GB/s' = 'ns', reps = [median, median, median]): MeasuredRow => ({ median, unit, n: 1, reps, interleaved: true });

test('one line naming the machine and date, then one row per operation with ratios to C in the same process', () => {
  const all: ImplResult[] = [
    {
      impl: 'native-c-inproc',
      meta: {},
      rows: {
        cuCtxGetCurrent: row(10),
        launch_0args: row(3000, 'ns', [3000, 3000, 3000]),
        h2d_pinned_256MiB: row(55, 'GB/s'),
        d2h_pinned_256MiB: row(54, 'GB/s'),
      },
    },
    { impl: 'cuda-ts-typed', meta: {}, rows: { cuCtxGetCurrent: row(50), launch_0args: row(3300, 'ns', [3300, 3300, 3600]) } },
    { impl: 'cuda-ts-objects', meta: {}, rows: { launch_0args: row(3150), h2d_pinned_256MiB: row(54.5, 'GB/s'), d2h_pinned_256MiB: row(54, 'GB/s') } },
    { impl: 'cuda-python', meta: {}, rows: {}, skipped: 'no python3' },
  ];
  const text = summaryTable(all, 'NVIDIA H200, driver supporting CUDA 13.0, Node 26.10.0', '2026-12-05');
  const lines = text.trim().split('\n');
  expect(lines[0]).toBe('One run of `npm run bench`: NVIDIA H200, driver supporting CUDA 13.0, Node 26.10.0, 2026-12-05.');
  expect(lines[2]).toBe(
    '| operation | C | cuda-ts objects | cuda-ts typed | objects, node:ffi | objects, Bun | objects, Deno | cuda-python | cuda.core | CuPy |',
  );
  // the trivial call is the typed layer in the objects column too
  expect(lines.find((l) => l.startsWith('| trivial call'))).toBe(
    '| trivial call (`cuCtxGetCurrent`, typed) | 10.00 ns | 50.00 ns (5.00×) | 50.00 ns (5.00×) |  |  |  |  |  |  |',
  );
  expect(lines.find((l) => l.startsWith('| empty kernel launch'))).toBe(
    '| empty kernel launch | 3.00 µs | 3.15 µs (1.05×) | 3.30 µs (1.10×) |  |  |  |  |  |  |',
  );
  expect(lines.find((l) => l.startsWith('| H2D / D2H 256 MiB pinned'))).toBe(
    '| H2D / D2H 256 MiB pinned (GB/s) | 55.00 / 54.00 | 54.50 / 54.00 |  |  |  |  |  |  |  |',
  );
});

test('the README carries a table of the shape summary.md has, between its markers', () => {
  const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
  const m = /<!-- bench-summary -->\n([\s\S]*?)\n<!-- \/bench-summary -->/.exec(readme);
  expect(m).not.toBeNull();
  const lines = m![1].split('\n');
  expect(lines[0]).toMatch(/^One run of `npm run bench`: .+, \d{4}-\d{2}-\d{2}\.$/);
  const header = summaryTable([], 'x', '2026-01-01').split('\n')[2];
  expect(lines[2]).toBe(header);
  expect(lines.filter((l) => l.startsWith('| ') && !l.startsWith('| operation')).length).toBe(9);
});
