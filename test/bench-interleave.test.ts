// bench/interleave.ts and bench/import.ts (measureImports, importVerdicts): the
// sub-block interleaving and the judging, on synthetic passes timed by a fake clock (no GPU, no timing
// noise); and bench/gpu.ts's raw and typed passes against bench.c's loops (same calls per pass).
import {
  QUIET_SLACK,
  blockPlan,
  judge,
  judgeRatios,
  measureInterleaved,
  medianInterval,
  quietFloor,
  quietRatioStats,
  ratioStats,
  ratioWords,
  rotation,
  type InterleavedMeasuredRow,
  type Pass,
} from '../bench/interleave';
import { IMPORT_TARGETS, importTargets, importVerdicts, measureImports, type ImportCase } from '../bench/import';
import { rawPasses, typedPasses, fresh, type RawApi, type State } from '../bench/gpu';
import { COPY_ROWS, wantsCopies } from '../bench/gpu-common';

/** A fake clock and passes that advance it by a fixed cost per op, plus extra ns on chosen calls. */
function fakeBench(costs: Record<string, number>) {
  let t = 0n;
  const log: { impl: string; ops: number; timed: boolean }[] = [];
  const extra = new Map<string, number>(); // `${impl}#${timed call index}` -> extra ns
  const calls: Record<string, number> = {};
  let timing = false;
  const clock = () => {
    timing = !timing; // measureInterleaved reads the clock once before and once after each timed pass
    return t;
  };
  const passes: Record<string, Pass> = {};
  for (const [impl, ns] of Object.entries(costs)) {
    calls[impl] = 0;
    passes[impl] = (ops) => {
      const timed = timing;
      log.push({ impl, ops, timed });
      let dt = ns * ops;
      if (timed) {
        dt += extra.get(`${impl}#${calls[impl]}`) ?? 0;
        calls[impl]++;
      }
      t += BigInt(Math.round(dt));
    };
  }
  return { clock, passes, log, extra };
}

const measured = (r: unknown): InterleavedMeasuredRow => {
  expect(r).toHaveProperty('median');
  return r as InterleavedMeasuredRow;
};

describe('blockPlan', () => {
  test('splits a repetition into sub-blocks of a multiple of the granule, keeping the total work', () => {
    expect(blockPlan(20_000, 1000, 5)).toEqual({ blocks: 5, opsPerBlock: 4000 }); // launch rows: syncs every 1000 stay whole
    expect(blockPlan(1_000_000, 1000, 5)).toEqual({ blocks: 5, opsPerBlock: 200_000 });
    expect(blockPlan(5000, 100, 5)).toEqual({ blocks: 5, opsPerBlock: 1000 });
    expect(blockPlan(4, 1, 5)).toEqual({ blocks: 4, opsPerBlock: 1 }); // 4 copies of 256 MiB
  });
  test('fewer granules than blocks: one granule per block, at least three so the median drops an outlier', () => {
    expect(blockPlan(2, 1, 5)).toEqual({ blocks: 3, opsPerBlock: 1 });
    expect(blockPlan(1000, 1000, 5)).toEqual({ blocks: 3, opsPerBlock: 1000 });
  });
  test('one block per repetition is the old one-pass method', () => {
    expect(blockPlan(20_000, 1000, 1)).toEqual({ blocks: 1, opsPerBlock: 20_000 });
    expect(blockPlan(2, 1, 1)).toEqual({ blocks: 1, opsPerBlock: 2 });
  });
});

describe('rotation', () => {
  test('rotates left by s, so over n sub-blocks every implementation is in every position once', () => {
    const names = ['A', 'B', 'C'];
    expect([0, 1, 2, 3].map((s) => rotation(names, s).join(''))).toEqual(['ABC', 'BCA', 'CAB', 'ABC']);
    for (let pos = 0; pos < 3; pos++) expect(new Set([0, 1, 2].map((s) => rotation(names, s)[pos])).size).toBe(3);
    expect(rotation([], 5)).toEqual([]);
  });
});

describe('measureInterleaved', () => {
  test('warm-up untimed first, then sub-blocks in rotating order; each repetition runs ops per implementation', () => {
    const f = fakeBench({ A: 10, B: 12, C: 20 });
    const got = measureInterleaved({ name: 'row', ops: 20_000, warm: 2000, unit: 'ns', granule: 1000, blocks: 5, passes: f.passes }, 2, f.clock);
    // Warm-up: one untimed pass each, with the warm-up count.
    expect(f.log.slice(0, 3)).toEqual([
      { impl: 'A', ops: 2000, timed: false },
      { impl: 'B', ops: 2000, timed: false },
      { impl: 'C', ops: 2000, timed: false },
    ]);
    const timed = f.log.slice(3);
    expect(timed.every((x) => x.timed && x.ops === 4000)).toBe(true);
    expect(timed.length).toBe(2 * 5 * 3);
    // Order: the rotation advances every sub-block, across repetitions too.
    const order = [];
    for (let i = 0; i < timed.length; i += 3)
      order.push(
        timed
          .slice(i, i + 3)
          .map((x) => x.impl)
          .join(''),
      );
    expect(order).toEqual(['ABC', 'BCA', 'CAB', 'ABC', 'BCA', 'CAB', 'ABC', 'BCA', 'CAB', 'ABC']);
    const a = measured(got.A);
    const b = measured(got.B);
    expect(a.reps).toEqual([10, 10]);
    expect(b.reps).toEqual([12, 12]);
    expect(a.blocks).toEqual([
      [10, 10, 10, 10, 10],
      [10, 10, 10, 10, 10],
    ]);
    expect(a.n).toBe(20_000);
    expect(a.block_ops).toBe(4000);
    expect(a.interleaved).toBe(true);
  });

  test('one outlier sub-block (a preemption) does not move its repetition, so it cannot set the spread', () => {
    const f = fakeBench({ koffi: 40, typed: 46 });
    f.extra.set('koffi#7', 50e6); // 50 ms stall in koffi's 3rd sub-block of repetition 1 (0-based)
    const got = measureInterleaved({ name: 'row', ops: 1_000_000, warm: 1000, unit: 'ns', granule: 1000, blocks: 5, passes: f.passes }, 7, f.clock);
    const k = measured(got.koffi);
    const t = measured(got.typed);
    expect(k.blocks[1][2]).toBeCloseTo(40 + 50e6 / 200_000, 6); // the stall is there, in its sub-block
    expect(k.reps).toEqual([40, 40, 40, 40, 40, 40, 40]); // ... and in no repetition's value
    const q = ratioStats(t.reps, k.reps);
    expect(q).toEqual({ median: 1.15, min: 1.15, max: 1.15, lo: 1.15, hi: 1.15, n: 7 });
    expect(judge([q.min, q.max], 1.2, 'lower')).toBe('PASS');
  });

  test('two outliers in one repetition still leave its median; the old one-pass repetition is moved by one', () => {
    const f = fakeBench({ koffi: 40, typed: 46 });
    f.extra.set('typed#0', 30e6).set('typed#4', 30e6); // two stalls in typed's repetition 0
    const got = measureInterleaved({ name: 'row', ops: 1_000_000, warm: 1000, unit: 'ns', granule: 1000, blocks: 5, passes: f.passes }, 3, f.clock);
    expect(measured(got.typed).reps).toEqual([46, 46, 46]);

    const old = fakeBench({ koffi: 40, typed: 46 });
    old.extra.set('typed#0', 30e6);
    const one = measureInterleaved({ name: 'row', ops: 1_000_000, warm: 1000, unit: 'ns', granule: 1000, blocks: 1, passes: old.passes }, 3, old.clock);
    const q = ratioStats(measured(one.typed).reps, measured(one.koffi).reps);
    expect(q.max).toBeCloseTo(76 / 40, 6); // the stall sets the max of the spread
    expect(judge([q.min, q.max], 1.2, 'lower')).toBe('noisy');
  });

  test('GB/s rows: bytes per ns, median of the sub-blocks', () => {
    const f = fakeBench({ c: 1e6, js: 1.25e6 }); // ns per 1 MB copy: 1 GB/s and 0.8 GB/s
    f.extra.set('js#1', 5e6);
    const got = measureInterleaved({ name: 'copy', ops: 2, warm: 1, unit: 'GB/s', bytesPerOp: 1e6, granule: 1, blocks: 5, passes: f.passes }, 2, f.clock);
    const c = measured(got.c);
    const js = measured(got.js);
    expect(c.blocks[0].length).toBe(3); // 2 copies: three one-copy sub-blocks, not one pass
    expect(c.reps).toEqual([1, 1]);
    expect(js.reps).toEqual([0.8, 0.8]);
    const q = ratioStats(js.reps, c.reps);
    expect(judge([q.min, q.max], 0.97, 'higher')).toBe('FAIL');
  });

  test('a pass that throws is skipped with its reason; the others are measured', () => {
    const f = fakeBench({ A: 10 });
    let n = 0;
    const passes: Record<string, Pass> = {
      ...f.passes,
      bad: () => {
        if (++n > 2) throw new Error('CUresult 700');
      },
    };
    const got = measureInterleaved({ name: 'row', ops: 5000, warm: 100, unit: 'ns', blocks: 5, passes }, 2, f.clock);
    expect(got.bad).toEqual({ skipped: 'CUresult 700' });
    expect(measured(got.A).reps).toEqual([10, 10]);
  });
});

describe('judge', () => {
  test('lower is better: PASS when the whole spread is at or under the target, FAIL when all of it is over, noisy otherwise', () => {
    expect(judge([1.05, 1.2], 1.2, 'lower')).toBe('PASS');
    expect(judge([1.21, 1.4], 1.2, 'lower')).toBe('FAIL');
    expect(judge([1.0, 1.25], 1.2, 'lower')).toBe('noisy');
  });
  test('higher is better (bandwidth): PASS at or over, FAIL all under, noisy across', () => {
    expect(judge([0.97, 1.0], 0.97, 'higher')).toBe('PASS');
    expect(judge([0.8, 0.96], 0.97, 'higher')).toBe('FAIL');
    expect(judge([0.95, 1.0], 0.97, 'higher')).toBe('noisy');
  });
  test('ratioStats pairs repetition k with repetition k', () => {
    expect(ratioStats([2, 4, 9], [1, 2, 3])).toEqual({ median: 2, min: 2, max: 3, lo: 2, hi: 3, n: 3 });
  });
});

describe('quiet repetitions (a contended core slows C and the JS columns unevenly)', () => {
  test('the quiet floor is the 10th percentile of C over every process, so one quiet process sets it', () => {
    const quiet = [7, 7.1, 7.2, 7.3, 7.4, 7.5, 7.6, 7.7, 7.8, 7.9];
    expect(quietFloor([quiet, Array(10).fill(12)])).toBe(7.1);
    expect(quietFloor([Array(21).fill(12)])).toBe(12);
    expect(quietFloor([[], [NaN, 0]])).toBeNaN();
  });

  test('keeps the repetitions where C ran within the slack of the floor, pairing repetition k with k', () => {
    // C quiet (7 ns) in repetitions 0-3, contended (12 ns) in 4-9; JS 13 ns quiet, 26 ns contended
    const c = [7, 7, 7, 7, 12, 12, 12, 12, 12, 12];
    const js = [13, 13, 13, 13, 26, 26, 26, 26, 26, 26];
    const q = quietRatioStats(js, c, 7);
    expect(q.quiet).toBe(4);
    expect(q.of).toBe(10);
    expect(q.median).toBeCloseTo(13 / 7, 9);
    expect(q.hi).toBeCloseTo(13 / 7, 9);
    expect(ratioStats(js, c).median).toBeGreaterThan(2);
    // the slack is a bound on C, not on the ratio: a repetition at exactly slack × floor stays
    expect(quietRatioStats([20], [7 * QUIET_SLACK], 7).quiet).toBe(1);
    expect(quietRatioStats([20], [7 * QUIET_SLACK + 0.01], 7).quiet).toBe(0);
    expect(quietRatioStats([20], [12], 7).median).toBeNaN();
  });
});

describe("the median's 95% interval", () => {
  /** Coverage of the order statistics x(k), x(n+1-k) as an interval of the median: 1 - 2 P(Bin(n, 1/2) < k). */
  const coverage = (n: number, k: number) => {
    let below = 0;
    for (let i = 0; i < k; i++) {
      let c = 1;
      for (let j = 0; j < i; j++) c = (c * (n - j)) / (j + 1);
      below += c / 2 ** n;
    }
    return 1 - 2 * below;
  };
  /** The rank k that medianInterval picked for 1..n (values are their own ranks). */
  const rankOf = (n: number) => medianInterval(Array.from({ length: n }, (_, i) => n - i)).lo;

  test('is min-max up to 8 values, then the widest-coverage ranks with at least 95%', () => {
    for (let n = 1; n <= 8; n++) expect(medianInterval(Array.from({ length: n }, (_, i) => i + 1))).toEqual({ lo: 1, hi: n });
    expect(rankOf(9)).toBe(2);
    expect(rankOf(12)).toBe(3);
    expect(rankOf(21)).toBe(6);
    for (let n = 6; n <= 60; n++) {
      const k = rankOf(n);
      expect(coverage(n, k)).toBeGreaterThanOrEqual(0.95);
      if (k + 1 <= (n + 1) / 2) expect(coverage(n, k + 1)).toBeLessThan(0.95);
      expect(medianInterval(Array.from({ length: n }, (_, i) => i + 1)).hi).toBe(n + 1 - k);
    }
    expect(medianInterval([])).toEqual({ lo: NaN, hi: NaN });
  });

  test('more repetitions sharpen a verdict: 21 with five slow ones pass where 7 with two slow ones are noisy', () => {
    const fast = 1.7;
    const slow = 2.3;
    const seven = ratioStats([fast, slow, fast, fast, slow, fast, fast], Array(7).fill(1));
    expect(judgeRatios(seven, 2, 'lower')).toBe('noisy');
    const many = Array.from({ length: 21 }, (_, i) => (i % 4 === 1 ? slow : fast)); // 5 of 21 slow
    const q = ratioStats(many, Array(21).fill(1));
    expect([q.lo, q.hi]).toEqual([fast, fast]);
    expect(judgeRatios(q, 2, 'lower')).toBe('PASS');
    expect(ratioWords(q)).toBe('1.700x [1.700-1.700; 21 reps, min-max 1.700-2.300]');
    // ... and a state that holds most repetitions still fails the target
    const mostlySlow = ratioStats(
      Array.from({ length: 21 }, (_, i) => (i % 4 === 1 ? fast : slow)),
      Array(21).fill(1),
    );
    expect(judgeRatios(mostlySlow, 2, 'lower')).toBe('FAIL');
  });
});

describe('measureImports', () => {
  const cases: ImportCase[] = [
    { name: 'koffi', what: 'koffi', timed: '' },
    { name: 'driver', what: 'driver', timed: '' },
    { name: 'objects', what: 'objects', timed: '' },
  ];
  const D = IMPORT_TARGETS.driver; // allowances over koffi (issue 17: 6 and 15 ms)
  const O = IMPORT_TARGETS.objects;
  const base: Record<string, number> = { koffi: 12, driver: 12 + D - 2, objects: 12 + O - 1 };

  test('an untimed spawn per case, then rounds of rotating spawns; a round is the median of its spawns', () => {
    const order: string[] = [];
    let slow = -1; // index (in timed spawns) of one 40 ms outlier
    let timedSeen = -cases.length;
    const spawn = (c: ImportCase) => {
      order.push(c.name);
      const i = timedSeen++;
      return { ms: base[c.name] + (i === slow ? 40 : 0), result: 1 };
    };
    slow = 4; // the 5th timed spawn: round 0, second rotation (driver objects koffi) -> objects
    const got = measureImports(cases, 2, 3, spawn);
    expect(order.slice(0, 3)).toEqual(['koffi', 'driver', 'objects']); // untimed
    expect(order.slice(3).join(' ')).toBe(
      ['koffi driver objects', 'driver objects koffi', 'objects koffi driver', 'koffi driver objects', 'driver objects koffi', 'objects koffi driver'].join(
        ' ',
      ),
    );
    const objects = got.find((r) => r.name === 'objects')!;
    const ob = base.objects;
    expect(objects.spawns![0]).toEqual([ob, ob + 40, ob]);
    expect(objects.samples).toEqual([ob, ob]); // the outlier spawn does not set round 0
    const v = importVerdicts(got);
    const o = v.find((x) => x.row === 'objects')!;
    expect(o.spread).toEqual([O - 1, O - 1]);
    expect(o.verdict).toBe('PASS'); // within its allowance in every round
    expect(v.find((x) => x.row === 'driver')!.verdict).toBe('PASS');
    expect(v.find((x) => x.row === 'koffi')!.verdict).toBe('info');
  });

  test('verdicts from the per-round differences: FAIL when every round is over, noisy when the spread crosses', () => {
    let round = 0;
    let n = 0;
    const spawn = (c: ImportCase) => {
      n++;
      if (n > cases.length) round = Math.floor((n - cases.length - 1) / (cases.length * 3));
      // driver: 2 ms over its allowance in every round -> FAIL; objects: 5 under in round 0, 5 over in round 1 -> noisy
      const ms = c.name === 'koffi' ? 12 : c.name === 'driver' ? 12 + D + 2 : round === 0 ? 12 + O - 5 : 12 + O + 5;
      return { ms };
    };
    const v = importVerdicts(measureImports(cases, 2, 3, spawn));
    expect(v.find((x) => x.row === 'driver')!.verdict).toBe('FAIL');
    const o = v.find((x) => x.row === 'objects')!;
    expect(o.spread).toEqual([O - 5, O + 5]);
    expect(o.verdict).toBe('noisy');
  });
  test("issue 17's targets: driver and objects over koffi, and cuda-ts/driver ≤ 25 ms unless its first call failed", () => {
    const ms: Record<string, number> = { koffi: 12, driver: 12 + D - 1, objects: 12 + O + 3 };
    const t = importTargets(measureImports(cases, 2, 1, (c) => ({ ms: ms[c.name], result: 13000 })));
    expect(t.map((v) => [v.row, v.verdict])).toEqual([
      ['import_driver', 'PASS'],
      ['import_objects', 'FAIL'],
      ['import_driver', 'PASS'],
    ]);
    expect(t[2]).toMatchObject({ target: 'import + first call, cuda-ts/driver ≤ 25 ms', value: `${(12 + D - 1).toFixed(2)} ms` });
    const failed = importTargets(measureImports(cases, 1, 1, (c) => ({ ms: ms[c.name], result: { error: 'no libcuda' } })));
    expect(failed[2]).toMatchObject({ verdict: 'SKIP', why: 'first call failed: no libcuda' });
  });
});

describe("bench/gpu.ts passes do bench.c's work", () => {
  const BATCH = 1000;
  // The calls bench.c's pass of `row` makes for `ops` (bench/native/bench.c, pass_*).
  const cCalls = (row: string, ops: number): Record<string, number> => {
    const tailSync = ops % BATCH ? 1 : 0;
    switch (row) {
      case 'cuCtxGetCurrent':
        return { cuCtxGetCurrent: ops };
      case 'cuDeviceGetAttribute':
        return { cuDeviceGetAttribute: ops };
      case 'launch_0args':
      case 'launch_4args':
      case 'launch_16args':
        return { cuLaunchKernel: ops, cuStreamSynchronize: Math.floor(ops / BATCH) + tailSync };
      case 'launch_sync':
        return { cuLaunchKernel: ops, cuStreamSynchronize: ops };
      case 'event_record_elapsed':
        return { cuEventRecord: 2 * ops, cuEventSynchronize: ops, cuEventElapsedTime: ops };
      case 'alloc_free_async_1MiB':
        return { cuMemAllocAsync: ops, cuMemFreeAsync: ops, cuStreamSynchronize: Math.floor(ops / BATCH) + tailSync };
      case 'h2d_pinned_256MiB':
      case 'h2d_pageable_256MiB':
        return { cuMemcpyHtoDAsync: ops, cuStreamSynchronize: 1 };
      case 'd2h_pinned_256MiB':
      case 'd2h_pageable_256MiB':
        return { cuMemcpyDtoHAsync: ops, cuStreamSynchronize: 1 };
      default:
        throw new Error(`no C pass for ${row}`);
    }
  };
  const names = [
    'cuCtxGetCurrent',
    'cuDeviceGetAttribute',
    'cuEventElapsedTime',
    'cuEventRecord',
    'cuEventSynchronize',
    'cuLaunchKernel',
    'cuMemAllocAsync',
    'cuMemFreeAsync',
    'cuMemcpyDtoHAsync',
    'cuMemcpyHtoDAsync',
    'cuStreamSynchronize',
  ];
  const counting = (typed: boolean) => {
    const counts: Record<string, number> = {};
    const api: Record<string, (...a: unknown[]) => unknown> = {};
    for (const n of names) {
      api[n] = () => {
        counts[n] = (counts[n] ?? 0) + 1;
        if (!typed) return 0; // CUresult
        return n === 'cuCtxGetCurrent'
          ? 0x1234
          : n === 'cuDeviceGetAttribute'
            ? 132
            : n === 'cuMemAllocAsync'
              ? 0x7000_0000
              : n === 'cuEventElapsedTime'
                ? 0.01
                : undefined;
      };
    }
    return { api, counts };
  };
  const ROW_NAMES = [
    'cuCtxGetCurrent',
    'cuDeviceGetAttribute',
    'launch_0args',
    'launch_4args',
    'launch_16args',
    'launch_sync',
    'event_record_elapsed',
    'alloc_free_async_1MiB',
    'h2d_pinned_256MiB',
    'd2h_pinned_256MiB',
    'h2d_pageable_256MiB',
    'd2h_pageable_256MiB',
  ];
  const S = {
    dev: 0,
    stream: 1,
    fEmpty: 2,
    fArgs4: 3,
    fArgs16: 4,
    params4: new BigUint64Array(4),
    params16: new BigUint64Array(16),
    evStart: 5,
    evStop: 6,
    dBig: 7,
    hPinned: 8,
    hPageable: new Uint8Array(8),
    attrSm: 16,
    BATCH,
    ALLOC_BYTES: 1 << 20,
    COPY_BYTES: 1 << 28,
    copies: true,
  } as State;

  for (const [layer, make] of [
    ['raw', rawPasses],
    ['typed', typedPasses],
    ['raw (fresh copy)', fresh(rawPasses)],
  ] as const) {
    test(`${layer}: every row's pass makes the calls of bench.c's, for whole and partial batches`, () => {
      for (const ops of [4000, 2500, 1]) {
        for (const row of ROW_NAMES) {
          const { api, counts } = counting(layer === 'typed');
          const passes = (make as (a: unknown, s: State) => Record<string, (ops: number) => void>)(api as unknown as RawApi, S);
          passes[row](ops);
          expect([row, ops, counts]).toEqual([row, ops, cCalls(row, ops)]);
        }
      }
    });
    test(`${layer}: without the copy buffers (set-up's copies: false) there are no copy rows, the others remain`, () => {
      const passes = (make as (a: unknown, s: State) => Record<string, (ops: number) => void>)(counting(layer === 'typed').api as unknown as RawApi, {
        ...S,
        copies: false,
        dBig: 0,
        hPinned: 0,
        hPageable: new Uint8Array(0),
      });
      expect(Object.keys(passes).sort()).toEqual(ROW_NAMES.filter((r) => !COPY_ROWS.includes(r)).sort());
    });
  }
  test('the copy rows are the 256 MiB ones, and only they ask set-up for the copy buffers', () => {
    expect(COPY_ROWS).toEqual(['h2d_pinned_256MiB', 'd2h_pinned_256MiB', 'h2d_pageable_256MiB', 'd2h_pageable_256MiB']);
    expect(wantsCopies(['cuCtxGetCurrent', 'launch_4args'])).toBe(false);
    expect(wantsCopies(['cuCtxGetCurrent', 'd2h_pageable_256MiB'])).toBe(true);
  });
});
