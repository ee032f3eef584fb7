// chart.svg of `npm run bench`: per row (operation) a group of horizontal bars, one per implementation's
// ratio to C, and a dashed line at 1× (= C). Pure: rows in, SVG text out.

/** One benchmark row: the operation and each implementation's ratio to native C (absent: not measured). */
export interface ChartRow {
  /** The operation, as the table names it (`empty kernel launch (enqueue)`). */
  label: string;
  /** Implementation → ratio to C (1.05 = 5 % slower than C for times). */
  ratios: Record<string, number | null | undefined>;
  /** For throughput rows (GB/s), where a ratio above 1 is better; said next to the label. */
  higherIsBetter?: boolean;
}

/** Options of {@link ratioChart}: a line under the title (machine, date), and the ratio at which bars are clipped (default: the largest, at least 1.5). */
export interface ChartOptions {
  subtitle?: string;
  maxRatio?: number;
}

const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

function checkRows(rows: unknown): asserts rows is ChartRow[] {
  if (!Array.isArray(rows)) throw new TypeError(`ratioChart: rows must be an array of { label, ratios }, got ${typeof rows}`);
  rows.forEach((row, i) => {
    if (typeof row !== 'object' || row === null) throw new TypeError(`ratioChart: rows[${i}] must be an object { label, ratios }`);
    const r = row as Partial<ChartRow>;
    if (typeof r.label !== 'string') throw new TypeError(`ratioChart: rows[${i}].label must be a string`);
    if (typeof r.ratios !== 'object' || r.ratios === null) throw new TypeError(`ratioChart: rows[${i}].ratios must be an object of implementation → ratio`);
    for (const [impl, v] of Object.entries(r.ratios)) {
      if (v === undefined || v === null) continue;
      if (typeof v !== 'number') throw new TypeError(`ratioChart: rows[${i}].ratios[${JSON.stringify(impl)}] must be a number, got ${typeof v}`);
      if (!Number.isFinite(v) || v <= 0)
        throw new RangeError(`ratioChart: rows[${i}].ratios[${JSON.stringify(impl)}] must be a finite ratio above 0, got ${v}`);
    }
  });
}

/**
 * The SVG of `rows`: per row a bar for each implementation that has a ratio (in the order implementations
 * first appear), labelled with its ratio (`1.05×`).
 * @throws TypeError or RangeError naming the bad row and implementation (a ratio must be finite and > 0)
 */
export function ratioChart(rows: readonly ChartRow[], options: ChartOptions = {}): string {
  checkRows(rows);
  const impls: string[] = [];
  for (const row of rows) for (const [impl, v] of Object.entries(row.ratios)) if (v != null && !impls.includes(impl)) impls.push(impl);
  const values = rows.flatMap((r) => Object.values(r.ratios).filter((v): v is number => v != null));
  const maxRatio = options.maxRatio ?? Math.max(1.5, ...values);
  if (!(Number.isFinite(maxRatio) && maxRatio > 0)) throw new RangeError(`ratioChart: options.maxRatio must be a finite number above 0, got ${maxRatio}`);
  const width = 900;
  const labelWidth = 280;
  const plotWidth = width - labelWidth - 90;
  const bar = 14;
  const gap = 10;
  const top = options.subtitle ? 64 : 48;
  const legendHeight = 24 * Math.ceil(impls.length / 4);
  const x = (ratio: number) => labelWidth + (Math.min(ratio, maxRatio) / maxRatio) * plotWidth;

  const out: string[] = [];
  let y = top;
  for (const row of rows) {
    const present = impls.filter((impl) => row.ratios[impl] != null);
    const height = Math.max(1, present.length) * bar;
    const label = row.higherIsBetter ? `${row.label} (higher is better)` : row.label;
    out.push(`<text x="${labelWidth - 8}" y="${y + height / 2 + 4}" text-anchor="end">${escapeXml(label)}</text>`);
    present.forEach((impl, k) => {
      const ratio = row.ratios[impl] as number;
      const by = y + k * bar;
      const color = PALETTE[impls.indexOf(impl) % PALETTE.length];
      const w = Math.max(1, x(ratio) - labelWidth);
      out.push(
        `<rect class="bar" data-impl="${escapeXml(impl)}" data-ratio="${ratio}" x="${labelWidth}" y="${by + 1}" width="${w.toFixed(1)}" height="${bar - 2}" fill="${color}"><title>${escapeXml(`${impl}: ${ratio.toFixed(2)}×`)}</title></rect>`,
      );
      out.push(`<text x="${(labelWidth + w + 4).toFixed(1)}" y="${by + bar - 3}" class="value">${ratio.toFixed(2)}×${ratio > maxRatio ? ' ▸' : ''}</text>`);
    });
    y += height + gap;
  }
  const plotBottom = y;
  const one = x(1);
  const legend = impls.map((impl, i) => {
    const lx = 20 + (i % 4) * ((width - 40) / 4);
    const ly = plotBottom + 16 + Math.floor(i / 4) * 24;
    return `<rect x="${lx.toFixed(1)}" y="${ly}" width="12" height="12" fill="${PALETTE[i % PALETTE.length]}"/><text x="${(lx + 18).toFixed(1)}" y="${ly + 11}">${escapeXml(impl)}</text>`;
  });
  const height = plotBottom + 24 + legendHeight;
  const title = 'Ratio to native C (lower is better)';
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    '<style>.value{fill:#333;font-size:11px}</style>',
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="20" y="24" font-size="16" font-weight="bold">${escapeXml(title)}</text>`,
    ...(options.subtitle ? [`<text x="20" y="44" fill="#555">${escapeXml(options.subtitle)}</text>`] : []),
    ...out,
    `<line class="native" x1="${one.toFixed(1)}" y1="${top - 6}" x2="${one.toFixed(1)}" y2="${plotBottom - gap + 4}" stroke="#000" stroke-dasharray="4 3"/>`,
    `<text x="${one.toFixed(1)}" y="${top - 10}" text-anchor="middle" fill="#000">1× = C</text>`,
    ...legend,
    '</svg>',
    '',
  ].join('\n');
}

/** The shape of bench results this module reads (bench/common.ts's ImplResult, structurally). */
export interface ChartInput {
  impl: string;
  skipped?: string;
  rows?: Record<string, { median?: number; unit?: string } | { skipped: string }>;
}

/**
 * Chart rows from bench results: for each row a C implementation measured (the first of `bases` that has
 * it), every other implementation's median divided by C's, rows in first-seen order. A Bun or Deno column
 * (`cuda-ts-typed-bun`) is divided by C of its own process (`native-c-inproc-bun`).
 */
export function chartRowsFrom(results: readonly ChartInput[], bases: readonly string[] = ['native-c-inproc', 'native-c']): ChartRow[] {
  if (!Array.isArray(results)) throw new TypeError(`chartRowsFrom: results must be an array of bench results, got ${typeof results}`);
  const median = (impl: ChartInput, row: string): { median: number; unit?: string } | undefined => {
    const r = impl.skipped ? undefined : impl.rows?.[row];
    return r && 'median' in r && typeof r.median === 'number' && Number.isFinite(r.median) && r.median > 0 ? { median: r.median, unit: r.unit } : undefined;
  };
  const rowNames: string[] = [];
  for (const r of results) for (const k of Object.keys(r.rows ?? {})) if (!rowNames.includes(k)) rowNames.push(k);
  // C of the same process for `-bun` / `-deno` columns (their suffix names the runtime's C).
  const ownBase = (impl: string): ChartInput | undefined => {
    const rt = /-(bun|deno)$/.exec(impl)?.[1];
    return rt ? results.find((r) => r.impl === `native-c-inproc-${rt}`) : undefined;
  };
  const isBase = (impl: string) => bases.includes(impl) || /^native-c-inproc-(bun|deno)$/.test(impl);
  const out: ChartRow[] = [];
  for (const row of rowNames) {
    const base = bases.map((b) => results.find((r) => r.impl === b)).find((r) => r && median(r, row));
    const ratios: Record<string, number> = {};
    for (const r of results) {
      if (isBase(r.impl)) continue;
      const own = ownBase(r.impl);
      const c = own ? median(own, row) : base && median(base, row);
      const m = median(r, row);
      if (m && c) ratios[r.impl] = m.median / c.median;
    }
    const unit = base ? median(base, row)?.unit : undefined;
    if (Object.keys(ratios).length > 0) out.push({ label: row, ratios, ...(unit === 'GB/s' ? { higherIsBetter: true } : {}) });
  }
  return out;
}
