// bench/chart.ts: the SVG of benchmark ratios to C (pure; no GPU).
import { chartRowsFrom, ratioChart, type ChartRow } from '../bench/chart';

const rows: ChartRow[] = [
  { label: 'empty kernel launch (enqueue)', ratios: { 'cuda-ts objects': 1.05, 'cuda-python': 1.49, CuPy: 1.27 } },
  { label: 'alloc + free <1 MiB> & co', ratios: { 'cuda-ts objects': 0.94, 'cuda-python': undefined, CuPy: null } },
  { label: 'H2D 256 MiB', ratios: { 'cuda-ts objects': 1.0, 'cuda-python': 1.01 }, higherIsBetter: true },
];

function bars(svg: string): { impl: string; ratio: number; width: number }[] {
  return [...svg.matchAll(/<rect class="bar" data-impl="([^"]+)" data-ratio="([^"]+)" x="[^"]+" y="[^"]+" width="([^"]+)"/g)].map((m) => ({
    impl: m[1],
    ratio: Number(m[2]),
    width: Number(m[3]),
  }));
}

describe('ratioChart', () => {
  test('one bar per measured ratio, widths proportional to the ratio, the 1× line and a legend entry per implementation', () => {
    const svg = ratioChart(rows, { subtitle: 'H200, driver 580' });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    const b = bars(svg);
    expect(b.map((x) => [x.impl, x.ratio])).toEqual([
      ['cuda-ts objects', 1.05],
      ['cuda-python', 1.49],
      ['CuPy', 1.27],
      ['cuda-ts objects', 0.94],
      ['cuda-ts objects', 1],
      ['cuda-python', 1.01],
    ]);
    // Linear scale: width / ratio is the same for every bar (to the 0.1 px rounding).
    const scale = b.map((x) => x.width / x.ratio);
    for (const s of scale) expect(Math.abs(s - scale[0])).toBeLessThan(0.2);
    expect(svg).toContain('1× = C');
    expect(svg).toContain('1.49×');
    expect(svg).toContain('H2D 256 MiB (higher is better)');
    expect(svg).toContain('H200, driver 580');
    for (const impl of ['cuda-ts objects', 'cuda-python', 'CuPy']) expect(svg.split(`>${impl}</text>`).length - 1).toBe(1);
  });

  test('escapes labels and names for XML', () => {
    const svg = ratioChart(rows);
    expect(svg).toContain('alloc + free &lt;1 MiB&gt; &amp; co');
    expect(svg).not.toContain('<1 MiB>');
  });

  test('ratios above maxRatio are clipped at it and marked', () => {
    const svg = ratioChart([{ label: 'slow', ratios: { a: 4, b: 1 } }], { maxRatio: 2 });
    const [a, b] = bars(svg);
    expect(a.width).toBeCloseTo(2 * b.width, 0);
    expect(svg).toContain('4.00× ▸');
  });

  test('bad input is a TypeError or RangeError naming the row and implementation', () => {
    expect(() => ratioChart('rows' as unknown as ChartRow[])).toThrow(new TypeError('ratioChart: rows must be an array of { label, ratios }, got string'));
    expect(() => ratioChart([{ label: 1 } as unknown as ChartRow])).toThrow(/^ratioChart: rows\[0\]\.label must be a string$/);
    expect(() => ratioChart([{ label: 'x', ratios: { a: NaN } }])).toThrow(RangeError);
    expect(() =>
      ratioChart([
        { label: 'x', ratios: { a: 1 } },
        { label: 'y', ratios: { b: -1 } },
      ]),
    ).toThrow(/rows\[1\]\.ratios\["b"\] must be a finite ratio above 0, got -1/);
    expect(() => ratioChart([{ label: 'x', ratios: { a: '1' as unknown as number } }])).toThrow(TypeError);
    expect(() => ratioChart(rows, { maxRatio: 0 })).toThrow(/options\.maxRatio/);
  });
});

describe('chartRowsFrom', () => {
  test('ratios to the preferred C implementation, skipped cells and C-less rows left out, GB/s marked', () => {
    const rows = chartRowsFrom([
      { impl: 'native-c', rows: { launch: { median: 4, unit: 'ns' }, h2d: { median: 50, unit: 'GB/s' } } },
      { impl: 'native-c-inproc', rows: { launch: { median: 2, unit: 'ns' } } },
      { impl: 'cuda-ts-objects', rows: { launch: { median: 3, unit: 'ns' }, h2d: { median: 55, unit: 'GB/s' }, import_first_call: { median: 9, unit: 'ms' } } },
      { impl: 'cupy', rows: { launch: { skipped: 'no cupy' }, h2d: { median: 25, unit: 'GB/s' } } },
      { impl: 'cuda.core', skipped: 'not installed' },
    ]);
    expect(rows).toEqual([
      { label: 'launch', ratios: { 'cuda-ts-objects': 1.5 } },
      { label: 'h2d', ratios: { 'cuda-ts-objects': 1.1, cupy: 0.5 }, higherIsBetter: true },
    ]);
    expect(() => ratioChart(rows)).not.toThrow();
  });
});
