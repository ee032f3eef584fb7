// The staging step's part of `npm run bench` (bench/run.ts): the table of pageable copies by size (direct,
// staged, CuPy), the crossover found, and the verdicts of issue 26 §4: at 256 MiB, staged ≥ 1.5× the
// direct path (same run, interleaved) in both directions, and the objects layer's pageable rows of the
// main table ≥ CuPy's.
import { type ImplResult, type MeasuredRow, fmt, isMeasured, table } from './common';
import { judgeRatios, ratioStats, ratioWords } from './interleave';
import { CHUNK_SWEEP, RING_SWEEP, STAGING_MARGIN, STAGING_SIZES, THREAD_SWEEP, sizeLabel } from './staging';

/** A verdict line (the shape of bench/run.ts's). */
export interface StagingVerdict {
  target: string;
  row: string;
  judged: string;
  value?: string;
  verdict: 'PASS' | 'FAIL' | 'SKIP' | 'noisy';
  why?: string;
}

type Cell = MeasuredRow | undefined;

function rowOf(r: ImplResult | undefined, name: string): Cell {
  const row = r?.rows?.[name];
  return isMeasured(row) ? row : undefined;
}

function bytesLabel(n: number | null | undefined): string {
  return n === undefined || n === null ? 'none (staged never enough faster up to 256 MiB)' : sizeLabel(n);
}

/** staged/direct per repetition at `name` (interleaved), as "1.62x [1.55-1.70]". */
function speedup(d: Cell, s: Cell): string {
  if (!d || !s) return '-';
  const q = ratioStats(s.reps, d.reps);
  return `${q.median.toFixed(2)}x [${q.min.toFixed(2)}-${q.max.toFixed(2)}]`;
}

type Meta = {
  crossover?: { h2d: number | null; d2h: number | null };
  settings?: {
    upload?: { minBytes: number; hostThreads: number };
    download?: { minBytes: number; hostThreads: number };
    chunkBytes: number;
    maxChunks: number;
    chunksPerCopy?: number;
  };
  recommended?: { upload: { hostThreads: number }; download: { hostThreads: number } };
  recommendedLiteral?: string;
  takenBackPercent?: Record<string, number>;
  host?: Record<string, unknown>;
};

/** One direction's table: a line per size, direct, staged with each thread count, staged/direct (recommended threads), CuPy. */
function directionTable(staging: ImplResult, cupy: ImplResult | undefined, dir: 'h2d' | 'd2h'): string {
  const lines = STAGING_SIZES.map((size) => {
    const l = sizeLabel(size);
    const d = rowOf(staging, `${dir}_${l}_direct`);
    const t = THREAD_SWEEP.map((n) => fmt(rowOf(staging, `${dir}_${l}_staged_t${n}`)?.median));
    return [l, fmt(d?.median), ...t, speedup(d, rowOf(staging, `${dir}_${l}_staged`)), fmt(rowOf(cupy, `${dir}_${l}`)?.median)];
  });
  return table(['size', 'direct', ...THREAD_SWEEP.map((n) => `staged t${n}`), 'staged/direct', 'CuPy'], lines);
}

/** A pair of rows as "direct → staged GB/s (ratio)". */
function pairLine(staging: ImplResult, name: string): string {
  const d = rowOf(staging, `${name}_direct`);
  const s = rowOf(staging, `${name}_staged`);
  return `${fmt(d?.median)} → ${fmt(s?.median)} GB/s (${speedup(d, s)})`;
}

/** The lines under the tables: chunk sizes, host copies, sync/fresh, diagnostics, crossover and recommendation. */
function detailLines(staging: ImplResult, meta: Meta): string[] {
  const threadsOf = (dir: 'h2d' | 'd2h') => meta.recommended?.[dir === 'h2d' ? 'upload' : 'download'].hostThreads;
  const chunks = ['h2d', 'd2h'].map(
    (dir) =>
      `${dir.toUpperCase()} (t${threadsOf(dir as 'h2d') ?? '-'}) ${CHUNK_SWEEP.map((c) => `${sizeLabel(c)} ${fmt(rowOf(staging, `${dir}_256MiB_chunk${sizeLabel(c)}`)?.median)}`).join(', ')}, ${RING_SWEEP.filter(
        (k) => k > 2,
      )
        .map((k) => `${k} per copy ${fmt(rowOf(staging, `${dir}_256MiB_perCopy${k}`)?.median)}`)
        .join(', ')}, helpers not watching ${fmt(rowOf(staging, `${dir}_256MiB_nowatch`)?.median)}`,
  );
  const hc = (what: string) => THREAD_SWEEP.map((t) => `t${t} ${fmt(rowOf(staging, `hostcopy_${what}_t${t}`)?.median)}`).join(', ');
  const taken = Object.entries(meta.takenBackPercent ?? {}).filter(([k]) => k.includes('_256MiB_') || k.includes('_8MiB_'));
  const st = meta.settings;
  const dirSetting = (d?: { minBytes: number; hostThreads: number }) =>
    d ? `${d.minBytes === Infinity || d.minBytes === null ? 'never' : `from ${sizeLabel(d.minBytes)}`}, ${d.hostThreads} threads` : '-';
  return [
    `256 MiB staged by chunk size, and at the default one with more chunks per copy and with helpers sleeping after each part (GB/s, recommended threads): ${chunks.join('; ')}`,
    `host copies alone, 256 MiB in 8 MiB pieces with hostCopy (GB/s; the staged path's host-side ceiling): pageable → pinned ${hc('to_pinned')} (write-combined t0 ${fmt(rowOf(staging, 'hostcopy_to_pinned_wc_t0')?.median)}); pinned → pageable ${hc('from_pinned')}`,
    `without a stream (done on return), 256 MiB, direct → staged: H2D ${pairLine(staging, 'h2d_256MiB_sync')}; D2H ${pairLine(staging, 'd2h_256MiB_sync')}`,
    `D2H 256 MiB into a fresh array per copy (first-touch faults), direct → staged: ${pairLine(staging, 'd2h_256MiB_fresh')}`,
    `helper parts the calling thread took back (helpers too late), %: ${taken.map(([k, v]) => `${k} ${v}`).join(', ') || '-'}; host: ${JSON.stringify(meta.host ?? {})}`,
    `crossover (staged with the recommended threads ≥ ${STAGING_MARGIN}x direct at this size and every larger one): H2D ${bytesLabel(meta.crossover?.h2d)}, D2H ${bytesLabel(meta.crossover?.d2h)}` +
      (st
        ? `; in force this run: uploads ${dirSetting(st.upload)}, downloads ${dirSetting(st.download)}, chunks ${sizeLabel(st.chunkBytes)} x ${st.maxChunks}, ${st.chunksPerCopy ?? 2} per copy`
        : ''),
    `recommended: ${meta.recommendedLiteral ?? '-'}`,
  ];
}

/** The tables of sizes (one per direction) and the lines under them. */
export function stagingTable(staging: ImplResult | undefined, cupy: ImplResult | undefined): string {
  if (!staging || staging.skipped) return `pageable copies by size: skipped (${staging?.skipped ?? 'not run'})`;
  const meta = staging.meta as Meta;
  const cupyNote = cupy?.skipped ? ` (CuPy: skipped, ${cupy.skipped})` : '';
  const head = (dir: string) =>
    `pageable copies ${dir} by size (GB/s, median of 5; DeviceBuffer.copyFrom/copyTo of a Uint8Array on a non-blocking stream + synchronize; direct = staging off, staged tN = every copy staged with N helper threads, interleaved; staged/direct at the recommended threads; CuPy = cudaMemcpyAsync of a numpy array)${cupyNote}:`;
  return [head('H2D'), directionTable(staging, cupy, 'h2d'), head('D2H'), directionTable(staging, cupy, 'd2h'), ...detailLines(staging, meta)].join('\n');
}

/**
 * The verdicts: staged vs direct at 256 MiB from the staging step; the main table's objects rows vs
 * CuPy's (`m`: a median of the main table).
 */
export function stagingVerdicts(staging: ImplResult | undefined, m: (impl: string, row: string) => number | undefined): StagingVerdict[] {
  const out: StagingVerdict[] = [];
  for (const dir of ['h2d', 'd2h']) {
    const target = `pageable ${dir.toUpperCase()} 256 MiB: staged ≥ 1.5× direct (same run)`;
    const d = rowOf(staging, `${dir}_256MiB_direct`);
    const s = rowOf(staging, `${dir}_256MiB_staged`);
    if (!d || !s) {
      out.push({ target, row: `${dir}_256MiB`, judged: '-', verdict: 'SKIP', why: staging?.skipped ?? 'not measured' });
      continue;
    }
    const q = ratioStats(s.reps, d.reps);
    out.push({
      target,
      row: `${dir}_256MiB`,
      judged: 'staged vs direct, interleaved',
      value: `${ratioWords(q)} (${fmt(s.median)} vs ${fmt(d.median)} GB/s)`,
      verdict: judgeRatios(q, 1.5, 'higher'),
    });
  }
  for (const dir of ['h2d', 'd2h']) {
    const row = `${dir}_pageable_256MiB`;
    const target = `pageable ${dir.toUpperCase()} 256 MiB: objects ≥ CuPy`;
    const ours = m('cuda-ts-objects', row);
    const theirs = m('cupy', row);
    if (ours === undefined || theirs === undefined) {
      out.push({ target, row, judged: '-', verdict: 'SKIP', why: `${ours === undefined ? 'cuda-ts-objects' : 'cupy'} has no ${row}` });
      continue;
    }
    const r = ours / theirs;
    out.push({
      target,
      row,
      judged: 'cuda-ts-objects vs cupy',
      value: `${r.toFixed(3)}x (medians, separate processes; ${fmt(ours)} vs ${fmt(theirs)} GB/s)`,
      verdict: r >= 1 ? 'PASS' : 'FAIL',
    });
  }
  return [...out, ...recommendedVerdicts(staging)];
}

/** Issue 26 §4's pageable rows (objects copyFrom/copyTo, H200, 256 MiB): the goal is 1.5x these. */
export const ISSUE_PAGEABLE_GBS = { h2d: 6.4, d2h: 9.95 } as const;

/**
 * The staging step's own verdicts on the recommended defaults at 256 MiB (their row: staged with the
 * recommended threads, or direct where the direction is not staged): ≥ CuPy in the same run, and ≥ 1.5x
 * the issue's rows.
 */
function recommendedVerdicts(staging: ImplResult | undefined): StagingVerdict[] {
  const out: StagingVerdict[] = [];
  const meta = (staging?.meta ?? {}) as {
    recommended?: { upload: { minBytes: number | null; hostThreads: number }; download: { minBytes: number | null; hostThreads: number } };
    cupy256?: Record<string, MeasuredRow | undefined>;
  };
  for (const dir of ['h2d', 'd2h'] as const) {
    const a = meta.recommended?.[dir === 'h2d' ? 'upload' : 'download'];
    const name = a === undefined ? undefined : a.minBytes === null ? `${dir}_256MiB_direct` : `${dir}_256MiB_staged_t${a.hostThreads}`;
    const ours = name === undefined ? undefined : rowOf(staging, name);
    const cupy = isMeasured(meta.cupy256?.[dir]) ? meta.cupy256![dir] : undefined;
    const D = dir.toUpperCase();
    const goal = 1.5 * ISSUE_PAGEABLE_GBS[dir];
    const skip = (target: string, why: string) => out.push({ target, row: name ?? `${dir}_256MiB`, judged: '-', verdict: 'SKIP', why });
    if (!ours) {
      skip(`pageable ${D} 256 MiB, recommended defaults: ≥ CuPy (same run)`, staging?.skipped ?? 'not measured');
      skip(`pageable ${D} 256 MiB, recommended defaults: ≥ 1.5× the issue's ${ISSUE_PAGEABLE_GBS[dir]} GB/s`, staging?.skipped ?? 'not measured');
      continue;
    }
    if (cupy) {
      const r = ours.median / cupy.median;
      out.push({
        target: `pageable ${D} 256 MiB, recommended defaults: ≥ CuPy (same run)`,
        row: name!,
        judged: 'staging step vs its CuPy run',
        value: `${r.toFixed(3)}x (medians; ${fmt(ours.median)} vs ${fmt(cupy.median)} GB/s)`,
        verdict: r >= 1 ? 'PASS' : 'FAIL',
      });
    } else skip(`pageable ${D} 256 MiB, recommended defaults: ≥ CuPy (same run)`, 'CuPy not measured in the staging step');
    out.push({
      target: `pageable ${D} 256 MiB, recommended defaults: ≥ 1.5× the issue's ${ISSUE_PAGEABLE_GBS[dir]} GB/s`,
      row: name!,
      judged: 'median',
      value: `${fmt(ours.median)} GB/s vs ${fmt(goal)}`,
      verdict: ours.median >= goal ? 'PASS' : 'FAIL',
    });
  }
  return out;
}
