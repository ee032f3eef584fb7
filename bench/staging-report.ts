// The staging step's part of `npm run bench`: the table of pageable copies by size (direct, staged with
// each helper-thread count, CuPy), the crossover and recommended defaults, and issue 26 §4's verdicts: at
// 256 MiB staged ≥ 1.5× direct (same run, interleaved) both ways, the objects layer's pageable rows ≥ CuPy's.
import { type ImplResult, type MeasuredRow, type Verdict, fmt, isMeasured, table } from './common';
import { judgeRatios, ratioStats, ratioWords } from './interleave';
import { STAGING_MARGIN, STAGING_SIZES, THREAD_SWEEP, sizeLabel } from './staging';

function rowOf(r: ImplResult | undefined, name: string): MeasuredRow | undefined {
  const row = r?.rows?.[name];
  return isMeasured(row) ? row : undefined;
}

/** Staged / direct per repetition (interleaved), as "1.62x [1.55-1.70]". */
function speedup(d: MeasuredRow | undefined, s: MeasuredRow | undefined): string {
  if (!d || !s) return '-';
  const q = ratioStats(s.reps, d.reps);
  return `${q.median.toFixed(2)}x [${q.min.toFixed(2)}-${q.max.toFixed(2)}]`;
}

interface DirSetting {
  minBytes: number | null;
  hostThreads: number;
}
interface Meta {
  crossover?: { h2d: number | null; d2h: number | null };
  settings?: { upload?: DirSetting; download?: DirSetting; chunkBytes: number; maxChunks: number; chunksPerCopy?: number };
  recommended?: { upload: DirSetting; download: DirSetting };
  recommendedLiteral?: string;
  cupy256?: Record<string, MeasuredRow | undefined>;
}

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

/** The lines under the tables: the crossover, the settings in force, the recommended defaults. */
function detailLines(meta: Meta): string[] {
  const at = (n: number | null | undefined) => (n === undefined || n === null ? 'none (staged never enough faster up to 256 MiB)' : sizeLabel(n));
  const dirSetting = (d?: DirSetting) =>
    d ? `${d.minBytes === Infinity || d.minBytes === null ? 'never' : `from ${sizeLabel(d.minBytes)}`}, ${d.hostThreads} threads` : '-';
  const st = meta.settings;
  const inForce = st
    ? `; in force this run: uploads ${dirSetting(st.upload)}, downloads ${dirSetting(st.download)}, chunks ${sizeLabel(st.chunkBytes)} x ${st.maxChunks}, ${st.chunksPerCopy ?? 2} per copy`
    : '';
  return [
    `crossover (staged with the recommended threads ≥ ${STAGING_MARGIN}x direct at this size and every larger one): H2D ${at(meta.crossover?.h2d)}, D2H ${at(meta.crossover?.d2h)}${inForce}`,
    `recommended: ${meta.recommendedLiteral ?? '-'}`,
  ];
}

/** The tables of sizes (one per direction) and the lines under them. */
export function stagingTable(staging: ImplResult | undefined, cupy: ImplResult | undefined): string {
  if (!staging || staging.skipped) return `pageable copies by size: skipped (${staging?.skipped ?? 'not run'})`;
  const cupyNote = cupy?.skipped ? ` (CuPy: skipped, ${cupy.skipped})` : '';
  const head = (dir: string) =>
    `pageable copies ${dir} by size (GB/s, median of 5; DeviceBuffer.copyFrom/copyTo of a Uint8Array on a non-blocking stream + synchronize; direct = staging off, staged tN = every copy staged with N helper threads, interleaved; staged/direct at the recommended threads; CuPy = cudaMemcpyAsync of a numpy array)${cupyNote}:`;
  return [head('H2D'), directionTable(staging, cupy, 'h2d'), head('D2H'), directionTable(staging, cupy, 'd2h'), ...detailLines(staging.meta as Meta)].join(
    '\n',
  );
}

/** The verdicts: staged vs direct at 256 MiB from the staging step; the main table's objects rows vs CuPy's (`m`: a median of the main table). */
export function stagingVerdicts(staging: ImplResult | undefined, m: (impl: string, row: string) => number | undefined): Verdict[] {
  const out: Verdict[] = [];
  for (const dir of ['h2d', 'd2h']) {
    const target = `pageable ${dir.toUpperCase()} 256 MiB: staged ≥ 1.5× direct (same run)`;
    const [d, s] = [rowOf(staging, `${dir}_256MiB_direct`), rowOf(staging, `${dir}_256MiB_staged`)];
    if (!d || !s) {
      out.push({ target, row: `${dir}_256MiB`, judged: '-', verdict: 'SKIP', why: staging?.skipped ?? 'not measured' });
      continue;
    }
    const q = ratioStats(s.reps, d.reps);
    const value = `${ratioWords(q)} (${fmt(s.median)} vs ${fmt(d.median)} GB/s)`;
    out.push({ target, row: `${dir}_256MiB`, judged: 'staged vs direct, interleaved', value, verdict: judgeRatios(q, 1.5, 'higher') });
  }
  for (const dir of ['h2d', 'd2h']) {
    const row = `${dir}_pageable_256MiB`;
    const target = `pageable ${dir.toUpperCase()} 256 MiB: objects ≥ CuPy`;
    const [ours, theirs] = [m('cuda-ts-objects', row), m('cupy', row)];
    if (ours === undefined || theirs === undefined) {
      out.push({ target, row, judged: '-', verdict: 'SKIP', why: `${ours === undefined ? 'cuda-ts-objects' : 'cupy'} has no ${row}` });
      continue;
    }
    const value = `${(ours / theirs).toFixed(3)}x (medians, separate processes; ${fmt(ours)} vs ${fmt(theirs)} GB/s)`;
    out.push({ target, row, judged: 'cuda-ts-objects vs cupy', value, verdict: ours >= theirs ? 'PASS' : 'FAIL' });
  }
  return [...out, ...recommendedVerdicts(staging)];
}

/** Issue 26 §4's pageable rows (objects copyFrom/copyTo, H200, 256 MiB): the goal is 1.5x these. */
const ISSUE_PAGEABLE_GBS = { h2d: 6.4, d2h: 9.95 } as const;

/** The recommended defaults at 256 MiB (staged with their threads, or direct where not staged): ≥ CuPy in the same run, ≥ 1.5x the issue's rows. */
function recommendedVerdicts(staging: ImplResult | undefined): Verdict[] {
  const out: Verdict[] = [];
  const meta = (staging?.meta ?? {}) as Meta;
  for (const dir of ['h2d', 'd2h'] as const) {
    const a = meta.recommended?.[dir === 'h2d' ? 'upload' : 'download'];
    const name = a === undefined ? `${dir}_256MiB` : a.minBytes === null ? `${dir}_256MiB_direct` : `${dir}_256MiB_staged_t${a.hostThreads}`;
    const ours = a === undefined ? undefined : rowOf(staging, name);
    const cupy = isMeasured(meta.cupy256?.[dir]) ? meta.cupy256![dir] : undefined;
    const vsCupy = `pageable ${dir.toUpperCase()} 256 MiB, recommended defaults: ≥ CuPy (same run)`;
    const vsIssue = `pageable ${dir.toUpperCase()} 256 MiB, recommended defaults: ≥ 1.5× the issue's ${ISSUE_PAGEABLE_GBS[dir]} GB/s`;
    const skip = (target: string, why: string): Verdict => ({ target, row: name, judged: '-', verdict: 'SKIP', why });
    if (!ours) {
      out.push(skip(vsCupy, staging?.skipped ?? 'not measured'), skip(vsIssue, staging?.skipped ?? 'not measured'));
      continue;
    }
    const r = cupy && ours.median / cupy.median;
    out.push(
      r && cupy
        ? {
            target: vsCupy,
            row: name,
            judged: 'staging step vs its CuPy run',
            value: `${r.toFixed(3)}x (medians; ${fmt(ours.median)} vs ${fmt(cupy.median)} GB/s)`,
            verdict: r >= 1 ? 'PASS' : 'FAIL',
          }
        : skip(vsCupy, 'CuPy not measured in the staging step'),
    );
    const goal = 1.5 * ISSUE_PAGEABLE_GBS[dir];
    out.push({
      target: vsIssue,
      row: name,
      judged: 'median',
      value: `${fmt(ours.median)} GB/s vs ${fmt(goal)}`,
      verdict: ours.median >= goal ? 'PASS' : 'FAIL',
    });
  }
  return out;
}
