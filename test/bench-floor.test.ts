// The C floor method in `npm run bench` (bench/floor.ts): settings from
// the environment, the per-row pinning, the run's choice and the line under the table.
import {
  DEFAULT_WARMUP_LAUNCHES,
  type FloorMethod,
  RowPinner,
  chooseFloor,
  compact,
  floorEnv,
  floorLine,
  floorRecordWords,
  floorSettings,
  floorWarm,
  isPinnedRow,
  parseCpuList,
  parseTopo,
  pickCores,
  standaloneEnv,
} from '../bench/floor';
import type { ImplResult } from '../bench/common';
import { floorsLine } from '../bench/runtimes-report';

const row = (median: number) => ({ median, unit: 'ns' as const, n: 1000, reps: [median] });
const method = (pinCpu: number | undefined, warmupLaunches = 4000): FloorMethod => ({ pinCpu, warmupLaunches, reasons: ['default: local core 15'] });

describe('floorSettings', () => {
  test('a core and a warm-up count are taken; unset or off pins nothing', () => {
    expect(floorSettings({ BENCH_PIN: '15', BENCH_FLOOR_WARMUP: '6000' })).toEqual({ pinCpu: 15, warmupLaunches: 6000, why: undefined });
    expect(floorSettings({})).toEqual({ warmupLaunches: DEFAULT_WARMUP_LAUNCHES, why: 'not pinned (BENCH_PIN unset)' });
    expect(floorSettings({ BENCH_PIN: 'off' }).pinCpu).toBeUndefined();
  });

  test('text that is not a core or a count is named, never turned into core 0', () => {
    const s = floorSettings({ BENCH_PIN: '1.5', BENCH_FLOOR_WARMUP: '-3' });
    expect(s.pinCpu).toBeUndefined();
    expect(s.warmupLaunches).toBe(4000);
    expect(s.why).toBe('not pinned: BENCH_PIN=1.5 is not a CPU number; BENCH_FLOOR_WARMUP=-3 is not a positive count: 4000 launches');
  });

  test('floorEnv writes what floorSettings reads back', () => {
    expect(floorSettings(floorEnv({ pinCpu: 7, warmupLaunches: 2500 }))).toMatchObject({ pinCpu: 7, warmupLaunches: 2500 });
    expect(floorSettings(floorEnv({ pinCpu: undefined, warmupLaunches: 2500 })).pinCpu).toBeUndefined();
  });
});

describe('floorWarm and isPinnedRow', () => {
  const s = { warmupLaunches: 4500 };
  test('launch rows get at least the floor warm-up, rounded up to their granule; other rows keep theirs', () => {
    expect(floorWarm('launch_0args', 5000, 1000, s)).toBe(5000);
    expect(floorWarm('launch_sync', 1000, 100, s)).toBe(4500);
    expect(floorWarm('launch_4args', 1000, 1000, s)).toBe(5000);
    expect(floorWarm('cuCtxGetCurrent', 1000, 1000, s)).toBe(1000);
  });
  test('per-operation rows are pinned, the GB/s copy rows are not', () => {
    expect(isPinnedRow('ns')).toBe(true);
    expect(isPinnedRow('GB/s')).toBe(false);
  });
});

describe('RowPinner', () => {
  function fakeThread(failWith = 0) {
    const calls: number[] = [];
    let cpu = 3;
    return { calls, pin: (c: number) => (calls.push(c), failWith || ((cpu = c < 0 ? 3 : c), 0)), cpuNow: () => cpu };
  }

  test('pins once for a run of per-operation rows, restores for a copy row and at the end, records where it ran', () => {
    const t = fakeThread();
    const p = new RowPinner({ pinCpu: 9, warmupLaunches: 4000 }, t.pin, t.cpuNow);
    for (const [r, u] of [
      ['cuCtxGetCurrent', 'ns'],
      ['launch_0args', 'ns'],
      ['h2d_pageable_256MiB', 'GB/s'],
      ['alloc_free_async_1MiB', 'ns'],
    ]) {
      p.beforeRow(r, u);
      p.afterRow();
    }
    p.release();
    expect(t.calls).toEqual([9, -1, 9, -1]);
    expect(p.record).toEqual({
      pin_cpu: 9,
      warmup_launches: 4000,
      pinned_rows: ['cuCtxGetCurrent', 'launch_0args', 'alloc_free_async_1MiB'],
      unpinned_rows: ['h2d_pageable_256MiB'],
      cpus_seen: [9],
      why: undefined,
    });
    expect(floorRecordWords(p.record)).toBe('timing thread pinned to core 9 after set-up (seen on 9) for 3 rows; launch rows warmed up ≥ 4000 launches');
  });

  test('a failing pin leaves the row unpinned and says why; no pin function pins nothing', () => {
    const t = fakeThread(-22);
    const p = new RowPinner({ pinCpu: 9, warmupLaunches: 4000 }, t.pin, t.cpuNow);
    p.beforeRow('launch_0args', 'ns');
    p.release();
    expect(p.record).toMatchObject({ pin_cpu: null, unpinned_rows: ['launch_0args'], why: 'bench_pin_thread(9) failed (-22): not pinned' });
    expect(t.calls).toEqual([9]);
    const none = new RowPinner({ pinCpu: 9, warmupLaunches: 4000 }, undefined);
    none.beforeRow('launch_0args', 'ns');
    expect(none.record).toMatchObject({ pin_cpu: null, unpinned_rows: ['launch_0args'], why: 'not pinned: libbench.so (bench_pin_thread) not loaded' });
  });
});

describe('chooseFloor', () => {
  test("the method's core and warm-up by default, written into the environment the children inherit", () => {
    const env: NodeJS.ProcessEnv = {};
    const f = chooseFloor(env, () => method(15));
    expect(f).toMatchObject({ pinCpu: 15, warmupLaunches: 4000 });
    expect(env).toMatchObject({ BENCH_PIN: '15', BENCH_FLOOR_WARMUP: '4000' });
    expect(f.words).toBe('timing thread pinned to core 15 after set-up, launch rows warmed up ≥ 4000 launches (default: local core 15)');
  });

  test('BENCH_PIN and BENCH_FLOOR_WARMUP as given win; off pins nothing; bad values are RangeErrors', () => {
    const env: NodeJS.ProcessEnv = { BENCH_PIN: '3', BENCH_FLOOR_WARMUP: '8000' };
    expect(chooseFloor(env, () => method(15))).toMatchObject({ pinCpu: 3, warmupLaunches: 8000, source: 'BENCH_PIN=3' });
    const off: NodeJS.ProcessEnv = { BENCH_PIN: 'off' };
    expect(chooseFloor(off, () => method(15)).pinCpu).toBeUndefined();
    expect(off.BENCH_PIN).toBe('off');
    expect(() => chooseFloor({ BENCH_PIN: '-1' }, () => method(15))).toThrow(new RangeError("bench/run.ts: BENCH_PIN=-1 is not a CPU number (or 'off')"));
    expect(() => chooseFloor({ BENCH_FLOOR_WARMUP: '1e3' }, () => method(15))).toThrow(RangeError);
  });

  test('a saved c-floor.json is asked for; an unreadable one falls back to the default and says so', () => {
    const asked: (string | undefined)[] = [];
    const f = chooseFloor({ BENCH_FLOOR_JSON: '/x/c-floor.json' }, (saved) => {
      asked.push(saved);
      if (saved) throw new Error('ENOENT');
      return method(2, 5000);
    });
    expect(asked).toEqual(['/x/c-floor.json', undefined]);
    expect(f).toMatchObject({ pinCpu: 2, warmupLaunches: 5000 });
    expect(f.source).toMatch(/^BENCH_FLOOR_JSON=\/x\/c-floor.json unreadable \(ENOENT\); default/);
  });

  test('the standalone program never gets BENCH_PIN=off (bench.c would read it as core 0)', () => {
    expect(standaloneEnv({ BENCH_PIN: 'off', A: '1' })).toEqual({ A: '1' });
    expect(standaloneEnv({ BENCH_PIN: '15' }).BENCH_PIN).toBe('15');
  });
});

describe('the floor line', () => {
  const floor = { pinCpu: 15, warmupLaunches: 4000, source: 'x', words: 'w' };
  const results = (nat: number, inproc: number): ImplResult[] => [
    { impl: 'native-c', meta: { pin: 15 }, rows: { launch_0args: row(nat), launch_4args: row(nat * 2), cuCtxGetCurrent: row(10) } },
    {
      impl: 'native-c-inproc',
      meta: { floor: { pin_cpu: 15, warmup_launches: 5000, pinned_rows: ['launch_0args'], unpinned_rows: [], cpus_seen: [15] } },
      rows: { launch_0args: row(inproc), launch_4args: row(inproc * 2), cuCtxGetCurrent: row(8) },
    },
  ];

  test("names the in-process floor, why (docs/performance.md) and this run's standalone difference", () => {
    const line = floorLine(results(4200, 4000), floor);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain(
      'every "C" ratio is against C in the same process (native-c-inproc, interleaved with the JS columns; timing thread pinned to core 15 after set-up (seen on 15) for 1 rows; launch rows warmed up ≥ 5000 launches)',
    );
    expect(line).toContain('a ±10% lottery (docs/performance.md)');
    expect(line).toContain(
      'in this run the standalone process (native-c: one process, BENCH_PIN=15) vs the in-process floor: launch_0args +5.0%, launch_4args +5.0%, cuCtxGetCurrent +25.0%',
    );
    expect(floorLine(results(3800, 4000), floor)).toContain('launch_0args -5.0%');
  });

  test('says why where one side was not measured', () => {
    const r = results(1, 1);
    r[0] = { impl: 'native-c', meta: {}, rows: {}, skipped: 'build.sh failed (1): no libcuda' };
    expect(floorLine(r, floor)).toContain('standalone vs in-process in this run: not measured (native-c: build.sh failed (1): no libcuda)');
  });

  test("the runtimes table gives each runtime's C floor beside the standalone one", () => {
    const all: ImplResult[] = [...results(4200, 4000), { impl: 'native-c-inproc-bun', meta: {}, rows: { launch_0args: row(4400), launch_4args: row(4500) } }];
    expect(floorsLine(all)).toBe(
      '  C floor per runtime, launch_0args / launch_4args ns (in-process, pinned as each line says): Node 4000 / 8000, Bun 4400 / 4500; standalone native-c (one process) 4200 / 8400',
    );
    expect(floorsLine([])).toBeUndefined();
  });

  test("the GPU-local core: nvidia-smi topo's CPU affinity, never CPU 0 where another is allowed", () => {
    expect(parseCpuList('0-3,8,10-11')).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(parseCpuList('x')).toBeUndefined();
    expect(compact([0, 1, 2, 3, 8])).toBe('0-3,8');
    const topo = '\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-15\t0\t\tN/A\n';
    expect(parseTopo(topo, 0)).toEqual({ cpus: Array.from({ length: 16 }, (_, i) => i), numa: 0 });
    const nodes = new Map([
      [0, [0, 1, 2, 3]],
      [1, [4, 5, 6, 7]],
    ]);
    const cores = pickCores([0, 1, 2, 3, 4, 5, 6, 7], { cpus: [0, 1, 2, 3], numa: 0, source: 'nvidia-smi topo -m' }, nodes);
    expect(cores).toMatchObject({ local: 3, remote: 7, spare: 2 });
    expect(pickCores([0], { source: 'unknown' }, new Map()).local).toBe(0);
  });
});
