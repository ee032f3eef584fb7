// The C floor experiment's pure parts (bench/c-floor-analysis.ts, bench/c-floor-host.ts): statistics,
// paired ratios and verdicts, the warm-up criterion, the recommendation, and the parsers of the
// machine's topology. The experiment itself needs the GPU machine (npx tsx bench/c-floor.ts).
import { type Comparison, LOTTERY_FACTOR, type PassRecord, judgeAll, pairedRatios, recommend, settledAfter, stats } from '../bench/c-floor-analysis';
import { compact, parseCpuList, parseTopo, pickCores } from '../bench/c-floor-host';

function recs(group: string, unit: string, row: string, values: number[]): PassRecord[] {
  return values.map((perOp, round) => ({ group, unit, variant: unit.split('@')[0], placement: unit.split('@')[1] ?? '', row, round, ops: 1000, perOp, cpuBefore: 1, cpuAfter: 1 }));
}
const cmp = (factor: string, base: string, other: string, crossProcess = true): Comparison => ({ group: 'g', factor, label: `${other} / ${base}`, base, other, crossProcess });

describe('c-floor statistics', () => {
  test('stats gives median, quartiles, min, max and the relative IQR', () => {
    const s = stats([5, 1, 4, 2, 3]);
    expect(s).toMatchObject({ n: 5, median: 3, q1: 2, q3: 4, min: 1, max: 5 });
    expect(s.iqrRel).toBeCloseTo(2 / 3);
    expect(stats([1, NaN, 3]).n).toBe(2);
  });

  test('pairedRatios pairs the rounds both units ran, other / base', () => {
    const r = [...recs('g', 'a@x', 'launch_0args', [100, 200, 300]), ...recs('g', 'b@x', 'launch_0args', [110, 220])];
    expect(pairedRatios(r, cmp('f', 'a@x', 'b@x'), 'launch_0args')).toEqual([1.1, 1.1]);
  });

  test('a steady 10% difference is moved; a difference inside the spread is not', () => {
    const base = [100, 101, 99, 100, 102, 98, 100];
    const r = [
      ...recs('g', 'a@x', 'launch_0args', base),
      ...recs('g', 'b@x', 'launch_0args', base.map((v) => v * 1.1)),
      ...recs('g', 'c@x', 'launch_0args', base.map((v, i) => v * (i % 2 ? 1.3 : 0.8))),
    ];
    const { results } = judgeAll(r, [cmp('f', 'a@x', 'b@x', false), cmp('f', 'a@x', 'c@x', false)], ['launch_0args']);
    const b = results.find((x) => x.other === 'b@x')!;
    const c = results.find((x) => x.other === 'c@x')!;
    expect(b.moved).toBe(true);
    expect(b.effect).toBeCloseTo(0.1);
    expect(c.moved).toBe(false);
  });

  test('the process lottery counts as noise for cross-process comparisons only', () => {
    const base = [100, 100, 100, 100, 100];
    const r = [
      ...recs('g', 'p1@x', 'launch_0args', base),
      ...recs('g', 'p2@x', 'launch_0args', base.map((v) => v * 1.08)),
      ...recs('g', 'q@x', 'launch_0args', base.map((v) => v * 1.05)),
    ];
    const cs = [cmp(LOTTERY_FACTOR, 'p1@x', 'p2@x'), cmp('other process', 'p1@x', 'q@x', true), cmp('same process', 'p1@x', 'q@x', false)];
    const { results, lottery } = judgeAll(r, cs, ['launch_0args']);
    expect(lottery.launch_0args).toBeCloseTo(0.08);
    expect(results.find((x) => x.factor === 'other process')!.moved).toBe(false);
    expect(results.find((x) => x.factor === 'same process')!.moved).toBe(true);
  });
});

describe('c-floor warm-up and recommendation', () => {
  test('settledAfter ignores one late outlier and reports a slow start', () => {
    expect(settledAfter([300, 200, 120, 101, 100, 100, 99, 100, 130, 100, 100, 100]).passes).toBe(3);
    expect(settledAfter([100, 100, 100, 100]).passes).toBe(0);
  });

  test('recommend: agreeing modes give one in-process floor, pinned, with the warm-up rounded up', () => {
    const base = [100, 101, 99, 100, 100, 101, 99];
    const r = [
      ...recs('g', 'exe#1@local', 'launch_0args', base),
      ...recs('g', 'node#1@local', 'launch_0args', base.map((v) => v * 1.001)),
      ...recs('g', 'exe#1@unpinned', 'launch_0args', base.map((v) => v * 1.2)),
    ];
    const cs = [cmp('standalone vs in-process', 'exe#1@local', 'node#1@local'), cmp('placement', 'exe#1@unpinned', 'exe#1@local', false)];
    const { results, lottery } = judgeAll(r, cs, ['launch_0args']);
    const warm = [{ unit: 'g/exe#1', opsPerPass: 1000, perOp: [500, 300, 100, 100, 100, 100, 100, 100] }];
    const m = recommend(results, lottery, warm, { local: 7 }, 15);
    expect(m).toMatchObject({ floor: 'in-process', pinCpu: 7, warmupLaunches: 3000, reps: 15, processes: 1 });
    expect(m.reasons.join(' ')).toMatch(/placement moved/);
  });

  test('recommend: modes that differ beyond the noise are reported both', () => {
    const base = [100, 101, 99, 100, 100, 101, 99];
    const r = [...recs('g', 'exe@local', 'launch_0args', base), ...recs('g', 'node@local', 'launch_0args', base.map((v) => v * 1.25))];
    const { results, lottery } = judgeAll(r, [cmp('standalone vs in-process', 'exe@local', 'node@local')], ['launch_0args']);
    expect(recommend(results, lottery, [], { local: 3 }, 9).floor).toBe('both');
  });
});

describe('c-floor machine facts', () => {
  test('parseCpuList and compact are inverse on CPU lists', () => {
    expect(parseCpuList('0-3,8,10-11')).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(parseCpuList('N/A')).toBeUndefined();
    expect(compact([0, 1, 2, 3, 8, 10, 11])).toBe('0-3,8,10-11');
  });

  test("parseTopo reads the GPU's CPU and NUMA affinity from nvidia-smi topo -m", () => {
    const text = ['\tGPU0\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID', 'GPU0\t X \tSYS\t8-15\t1\t\tN/A', 'NIC0\tSYS\t X', '', 'Legend:'].join('\n');
    expect(parseTopo(text, 0)).toEqual({ cpus: [8, 9, 10, 11, 12, 13, 14, 15], numa: 1 });
    expect(parseTopo(text, 1)).toEqual({});
    const doubleTab = ['\tGPU0\tNIC0\tCPU Affinity\tNUMA Affinity', 'GPU0\t X \tNODE\t\t0-7\t\t0'].join('\n');
    expect(parseTopo(doubleTab, 0)).toEqual({ cpus: [0, 1, 2, 3, 4, 5, 6, 7], numa: 0 });
  });

  test('pickCores takes a local core other than 0, a spare, and a core on another node', () => {
    const nodes = new Map([[0, [0, 1, 2, 3]], [1, [4, 5, 6, 7]]]);
    expect(pickCores([0, 1, 2, 3, 4, 5, 6, 7], { cpus: [0, 1, 2, 3], numa: 0, source: 't' }, nodes)).toMatchObject({ local: 3, spare: 2, remote: 7 });
    expect(pickCores([0, 1], { source: 'unknown' }, new Map([[0, [0, 1]]]))).toMatchObject({ local: 1, remote: undefined });
  });
});
