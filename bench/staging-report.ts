// The staging step's part of `npm run bench` (bench/run.ts): the table of pageable copies by size (direct,
// staged, CuPy), the crossover found, and the verdicts of issue 26 §4: at 256 MiB, staged ≥ 1.5× the
// direct path (same run, interleaved) in both directions, and the objects layer's pageable rows of the
// main table ≥ CuPy's.
import { type ImplResult, type MeasuredRow, fmt, isMeasured, table } from './common';
import { judge, ratioStats } from './interleave';
import { CHUNK_SWEEP, STAGING_SIZES, THREAD_SWEEP, crossover, sizeLabel } from './staging';

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
  return n === undefined || n === null ? 'none (staged never at least as fast up to 256 MiB)' : sizeLabel(n);
}

/** staged/direct per repetition at `name` (interleaved), as "1.62x [1.55-1.70]". */
function speedup(d: Cell, s: Cell): string {
  if (!d || !s) return '-';
  const q = ratioStats(s.reps, d.reps);
  return `${q.median.toFixed(2)}x [${q.min.toFixed(2)}-${q.max.toFixed(2)}]`;
}

/** The table of sizes and the crossover lines. */
export function stagingTable(staging: ImplResult | undefined, cupy: ImplResult | undefined): string {
  if (!staging || staging.skipped) return `pageable copies by size: skipped (${staging?.skipped ?? 'not run'})`;
  const lines = STAGING_SIZES.map((size) => {
    const l = sizeLabel(size);
    const cells: string[] = [l];
    for (const dir of ['h2d', 'd2h']) {
      const d = rowOf(staging, `${dir}_${l}_direct`);
      const s = rowOf(staging, `${dir}_${l}_staged`);
      cells.push(fmt(d?.median), fmt(s?.median), speedup(d, s), fmt(rowOf(cupy, `${dir}_${l}`)?.median));
    }
    return cells;
  });
  const sync = ['h2d', 'd2h'].map((dir) => {
    const d = rowOf(staging, `${dir}_256MiB_sync_direct`);
    const s = rowOf(staging, `${dir}_256MiB_sync_staged`);
    return `${dir.toUpperCase()} ${fmt(d?.median)} → ${fmt(s?.median)} GB/s (${speedup(d, s)})`;
  });
  const meta = staging.meta as {
    crossover?: { h2d: number | null; d2h: number | null };
    settings?: { minBytes: number; chunkBytes: number; maxChunks: number };
    bestChunk?: { h2d: number | null; d2h: number | null };
    bestThreads?: { h2d: number | null; d2h: number | null };
  };
  const threads = ['h2d', 'd2h'].map((dir) => {
    const cells = THREAD_SWEEP.map((t) => `${t} ${fmt(rowOf(staging, `${dir}_256MiB_staged_threads${t}`)?.median)}`);
    const best = meta.bestThreads?.[dir as 'h2d' | 'd2h'];
    return `${dir.toUpperCase()} ${cells.join(', ')} (fastest: ${best ?? '-'})`;
  });
  const sweep = ['h2d', 'd2h'].map((dir) => {
    const cells = CHUNK_SWEEP.map((c) => `${sizeLabel(c)} ${fmt(rowOf(staging, `${dir}_256MiB_staged_chunk${sizeLabel(c)}`)?.median)}`);
    const best = meta.bestChunk?.[dir as 'h2d' | 'd2h'];
    return `${dir.toUpperCase()} ${cells.join(', ')} (fastest: ${best ? sizeLabel(best) : '-'})`;
  });
  const st = meta.settings;
  const cupyNote = cupy?.skipped ? ` (CuPy: skipped, ${cupy.skipped})` : '';
  return [
    `pageable copies by size (GB/s, median of 5; DeviceBuffer.copyFrom/copyTo of a Uint8Array on a non-blocking stream + synchronize; direct = staging off, staged = every copy staged, interleaved; CuPy = cudaMemcpyAsync of a numpy array)${cupyNote}:`,
    table(['size', 'H2D direct', 'H2D staged', 'staged/direct', 'H2D CuPy', 'D2H direct', 'D2H staged', 'staged/direct', 'D2H CuPy'], lines),
    `without a stream (done on return), 256 MiB, direct → staged: ${sync.join('; ')}`,
    `256 MiB staged by chunk size (GB/s; STAGING_CHUNK_BYTES): ${sweep.join('; ')}`,
    `256 MiB staged by helper threads for the host side (GB/s; STAGING_HOST_THREADS): ${threads.join('; ')}`,
    `host copies alone, 256 MiB in 8 MiB pieces with TypedArray.set (GB/s; the staged path's host-side ceiling): ` +
      `pageable → pinned ${fmt(rowOf(staging, 'hostcopy_to_pinned')?.median)}, → write-combined pinned ${fmt(rowOf(staging, 'hostcopy_to_pinned_wc')?.median)}, ` +
      `pinned → pageable ${fmt(rowOf(staging, 'hostcopy_from_pinned')?.median)}, pageable → pageable ${fmt(rowOf(staging, 'hostcopy_pageable')?.median)}`,
    `crossover (staged at least as fast at this size and every larger one): H2D ${bytesLabel(meta.crossover?.h2d)}, D2H ${bytesLabel(meta.crossover?.d2h)}; ` +
      (st ? `src/memory/staging.ts stages from STAGING_MIN_BYTES = ${st.minBytes === Infinity ? 'Infinity' : sizeLabel(st.minBytes)} in this run (chunks ${sizeLabel(st.chunkBytes)} x ${st.maxChunks})` : ''),
  ].join('\n');
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
    out.push({ target, row: `${dir}_256MiB`, judged: 'staged vs direct, interleaved', value: `${q.median.toFixed(3)}x [${q.min.toFixed(3)}-${q.max.toFixed(3)}] (${fmt(s.median)} vs ${fmt(d.median)} GB/s)`, verdict: judge(q.median, [q.min, q.max], 1.5, 'higher') });
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
    out.push({ target, row, judged: 'cuda-ts-objects vs cupy', value: `${r.toFixed(3)}x (medians, separate processes; ${fmt(ours)} vs ${fmt(theirs)} GB/s)`, verdict: r >= 1 ? 'PASS' : 'FAIL' });
  }
  return out;
}
