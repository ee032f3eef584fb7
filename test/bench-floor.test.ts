// The C floor method in `npm run bench` (bench/floor.ts): settings from
// the environment, the per-row pinning, the run's choice and the line under the table.
import {
  DEFAULT_WARMUP_LAUNCHES,
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
  pickCore,
  standaloneEnv,
} from '../bench/floor';
import type { ImplResult } from '../bench/common';

const row = (median: number) => ({ median, unit: 'ns' as const, n: 1000, reps: [median] });
const core15 = () => ({ cpu: 15, why: 'local core 15' });

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
  test('the GPU-local core and the default warm-up, written into the environment the children inherit', () => {
    const env: NodeJS.ProcessEnv = {};
    const f = chooseFloor(env, core15);
    expect(f).toMatchObject({ pinCpu: 15, warmupLaunches: 4000 });
    expect(env).toMatchObject({ BENCH_PIN: '15', BENCH_FLOOR_WARMUP: '4000' });
    expect(f.words).toBe('timing thread pinned to core 15 after set-up, launch rows warmed up ≥ 4000 launches (default: local core 15)');
  });

  test('BENCH_PIN and BENCH_FLOOR_WARMUP as given win; off pins nothing; bad values are RangeErrors', () => {
    const env: NodeJS.ProcessEnv = { BENCH_PIN: '3', BENCH_FLOOR_WARMUP: '8000' };
    expect(chooseFloor(env, core15)).toMatchObject({ pinCpu: 3, warmupLaunches: 8000, source: 'BENCH_PIN=3' });
    const off: NodeJS.ProcessEnv = { BENCH_PIN: 'off' };
    expect(chooseFloor(off, core15).pinCpu).toBeUndefined();
    expect(off.BENCH_PIN).toBe('off');
    expect(() => chooseFloor({ BENCH_PIN: '-1' }, core15)).toThrow(new RangeError("bench/run.ts: BENCH_PIN=-1 is not a CPU number (or 'off')"));
    expect(() => chooseFloor({ BENCH_FLOOR_WARMUP: '1e3' }, core15)).toThrow(RangeError);
  });

  test('the standalone program never gets BENCH_PIN=off (bench.c would read it as core 0)', () => {
    expect(standaloneEnv({ BENCH_PIN: 'off', A: '1' })).toEqual({ A: '1' });
    expect(standaloneEnv({ BENCH_PIN: '15' }).BENCH_PIN).toBe('15');
  });
});

describe('the floor line', () => {
  const floor = { pinCpu: 15, warmupLaunches: 4000, source: 'x', words: 'pinned as chosen' };
  const inproc: ImplResult = {
    impl: 'native-c-inproc',
    meta: { floor: { pin_cpu: 15, warmup_launches: 5000, pinned_rows: ['launch_0args'], unpinned_rows: [], cpus_seen: [15] } },
    rows: { launch_0args: row(4000) },
  };

  test('names the in-process floor and how the process pinned it, in one line', () => {
    const line = floorLine([{ impl: 'native-c', meta: {}, rows: {} }, inproc], floor);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain(
      'every "C" ratio is against C in the same process (native-c-inproc, interleaved with the JS columns; timing thread pinned to core 15 after set-up (seen on 15) for 1 rows; launch rows warmed up ≥ 5000 launches)',
    );
  });

  test("says the run's chosen method where the in-process C did not run", () => {
    expect(floorLine([{ ...inproc, skipped: 'no GPU' }], floor)).toContain('(native-c-inproc, interleaved with the JS columns; pinned as chosen)');
  });

  test("the GPU-local core: nvidia-smi topo's CPU affinity, never CPU 0 where another is allowed", () => {
    expect(parseCpuList('0-3,8,10-11')).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(parseCpuList('x')).toBeUndefined();
    expect(compact([0, 1, 2, 3, 8])).toBe('0-3,8');
    const topo = '\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-15\t0\t\tN/A\n';
    expect(parseTopo(topo, 0)).toEqual(Array.from({ length: 16 }, (_, i) => i));
    expect(parseTopo(topo, 1)).toBeUndefined();
    expect(pickCore([0, 1, 2, 3, 4, 5, 6, 7], { cpus: [0, 1, 2, 3], source: 'nvidia-smi topo -m' })).toEqual({
      cpu: 3,
      why: "local core 3 (GPU's CPUs 0-3, via nvidia-smi topo -m)",
    });
    expect(pickCore([0, 1], { cpus: [0], source: 's' }).cpu).toBe(0);
    expect(pickCore([4, 5], { cpus: [0, 1], source: 's' }).why).toContain('none of them allowed here');
    expect(pickCore([0], { source: 'unknown' }).cpu).toBe(0);
  });
});
