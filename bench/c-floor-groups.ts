// The variants of the C floor experiment (bench/c-floor.ts), in groups that run together (their
// processes alive at once, their passes alternating), and the comparisons each group answers.
import { type Comparison, LOTTERY_FACTOR } from './c-floor-analysis';
import type { VariantSpec } from './c-floor-workers';

/** Where a unit's passes run: its main thread pinned to `pin` before each pass (-1: its start-up affinity). */
export interface Placement {
  label: string;
  pin: number;
}

/** A variant at a placement: the thing measured and compared ("exe#1@local"). */
export interface Unit {
  spec: VariantSpec;
  placement: Placement;
  name: string;
}

export interface Group {
  name: string;
  about: string;
  variants: VariantSpec[];
  /** The placements each variant runs at (every round, every row). */
  placements: (v: VariantSpec) => Placement[];
  comparisons: Comparison[];
}

export interface Cores {
  local: number;
  remote?: number;
  spare?: number;
}

/** The factors, as the analysis names them. */
export const FACTOR = {
  mode: 'standalone vs in-process',
  modeUnpinned: 'standalone vs in-process, unpinned',
  modeTaskset: 'standalone vs in-process, taskset',
  placement: 'placement',
  numa: 'NUMA node',
  loading: 'loading',
  processKind: 'process kind',
  threads: 'threads',
  taskset: 'taskset',
} as const;

export function unitsOf(g: Group): Unit[] {
  return g.variants.flatMap((spec) => g.placements(spec).map((placement) => ({ spec, placement, name: `${spec.name}@${placement.label}` })));
}

const cmp = (group: string, factor: string, base: string, other: string, crossProcess = true, label = `${other} / ${base}`): Comparison => ({ group, factor, label, base, other, crossProcess });

/** Process lottery, placement and NUMA, standalone vs in-process: two processes of each kind, every placement per pass. */
function processGroup(c: Cores): Group {
  const g = 'process+placement';
  const places: Placement[] = [{ label: 'unpinned', pin: -1 }, { label: 'local', pin: c.local }, ...(c.remote !== undefined ? [{ label: 'remote', pin: c.remote }] : [])];
  const comparisons: Comparison[] = [];
  for (const p of ['local', 'unpinned']) {
    comparisons.push(cmp(g, LOTTERY_FACTOR, `exe#1@${p}`, `exe#2@${p}`), cmp(g, LOTTERY_FACTOR, `node#1@${p}`, `node#2@${p}`));
    for (const i of [1, 2]) comparisons.push(cmp(g, p === 'local' ? FACTOR.mode : FACTOR.modeUnpinned, `exe#${i}@${p}`, `node#${i}@${p}`));
  }
  for (const w of ['exe#1', 'exe#2', 'node#1', 'node#2']) {
    comparisons.push(cmp(g, FACTOR.placement, `${w}@unpinned`, `${w}@local`, false, `local vs unpinned (${w})`));
    if (c.remote !== undefined) comparisons.push(cmp(g, FACTOR.numa, `${w}@local`, `${w}@remote`, false, `remote vs local (${w})`));
  }
  return {
    name: g,
    about: 'two standalone and two node processes; each pass unpinned, pinned to the GPU-local core, or (where there is one) to a core on another NUMA node',
    variants: [
      { name: 'exe#1', kind: 'exe' },
      { name: 'exe#2', kind: 'exe' },
      { name: 'node#1', kind: 'node' },
      { name: 'node#2', kind: 'node' },
    ],
    placements: () => places,
    comparisons,
  };
}

/** How the code is loaded: the program's own code, libbench.so by dlopen (now, lazy), LD_BIND_NOW, koffi (now, lazy). */
function loadingGroup(c: Cores): Group {
  const g = 'loading';
  const u = (n: string) => `${n}@local`;
  return {
    name: g,
    about: "C's passes in the program itself, in libbench.so opened by the program (RTLD_NOW, RTLD_LAZY), with LD_BIND_NOW=1, and in node through koffi (default, lazy); all pinned to the local core",
    variants: [
      { name: 'exe', kind: 'exe' },
      { name: 'exe-lib-now', kind: 'exe-lib' },
      { name: 'exe-lib-lazy', kind: 'exe-lib', lazy: true },
      { name: 'exe-bindnow', kind: 'exe', bindNow: true },
      { name: 'node', kind: 'node' },
      { name: 'node-lazy', kind: 'node', lazy: true },
    ],
    placements: () => [{ label: 'local', pin: c.local }],
    comparisons: [
      cmp(g, FACTOR.loading, u('exe'), u('exe-lib-now'), true, 'libbench.so (dlopen RTLD_NOW) vs the program\'s own code'),
      cmp(g, FACTOR.loading, u('exe-lib-now'), u('exe-lib-lazy'), true, 'dlopen RTLD_LAZY vs RTLD_NOW'),
      cmp(g, FACTOR.loading, u('exe'), u('exe-bindnow'), true, 'LD_BIND_NOW=1 vs default'),
      cmp(g, FACTOR.loading, u('node'), u('node-lazy'), true, 'koffi.load lazy vs default'),
      cmp(g, FACTOR.processKind, u('exe-lib-now'), u('node'), true, 'node + koffi vs C program, same libbench.so'),
      cmp(g, FACTOR.mode, u('exe'), u('node'), true, 'node/exe (loading group)'),
    ],
  };
}

/** The runtime's other threads: C with a spinning thread; node idle, with a busy worker, with JS between passes. */
function threadsGroup(c: Cores): Group {
  const g = 'threads';
  const u = (n: string) => `${n}@local`;
  return {
    name: g,
    about: `C alone and with one thread spinning on core ${c.spare ?? 'any'}; node idle, with a worker thread allocating, with ~20 ms of JS before each pass; all pinned to the local core`,
    variants: [
      { name: 'exe', kind: 'exe' },
      { name: 'exe+spin', kind: 'exe', spinCpu: c.spare ?? -1 },
      { name: 'node', kind: 'node' },
      { name: 'node+worker', kind: 'node', busy: 'worker' },
      { name: 'node+js-between', kind: 'node', busy: 'between' },
    ],
    placements: () => [{ label: 'local', pin: c.local }],
    comparisons: [
      cmp(g, FACTOR.threads, u('exe'), u('exe+spin'), true, 'C + a spinning thread vs C alone'),
      cmp(g, FACTOR.threads, u('node'), u('node+worker'), true, 'node with a busy worker vs idle'),
      cmp(g, FACTOR.threads, u('node'), u('node+js-between'), true, 'node with JS between passes vs idle'),
      cmp(g, FACTOR.mode, u('exe'), u('node'), true, 'node/exe (threads group)'),
    ],
  };
}

/** taskset: the whole process on one core from its start (CUDA's and node's threads too), against the main thread pinned after set-up. */
function tasksetGroup(c: Cores): Group {
  const g = 'taskset';
  const variants: VariantSpec[] = [
    { name: 'exe', kind: 'exe' },
    { name: 'node', kind: 'node' },
    { name: 'exe-ts', kind: 'exe', taskset: c.local },
    { name: 'node-ts', kind: 'node', taskset: c.local },
  ];
  const comparisons = [
    cmp(g, FACTOR.taskset, 'exe@local', 'exe-ts@taskset', true, 'C: taskset -c local vs main thread pinned after set-up'),
    cmp(g, FACTOR.taskset, 'node@local', 'node-ts@taskset', true, 'node: taskset -c local vs main thread pinned after set-up'),
    cmp(g, FACTOR.modeTaskset, 'exe-ts@taskset', 'node-ts@taskset'),
    cmp(g, FACTOR.mode, 'exe@local', 'node@local', true, 'node/exe (taskset group)'),
  ];
  if (c.remote !== undefined) {
    variants.push({ name: 'exe-ts-remote', kind: 'exe', taskset: c.remote }, { name: 'node-ts-remote', kind: 'node', taskset: c.remote });
    comparisons.push(
      cmp(g, FACTOR.numa, 'exe-ts@taskset', 'exe-ts-remote@taskset', true, 'C: whole process on the remote node vs local'),
      cmp(g, FACTOR.numa, 'node-ts@taskset', 'node-ts-remote@taskset', true, 'node: whole process on the remote node vs local'),
    );
  }
  return {
    name: g,
    about: `whole processes under taskset -c (local core ${c.local}${c.remote !== undefined ? `, remote core ${c.remote}` : ''}), set-up included, against processes whose main thread is pinned after set-up`,
    variants,
    placements: (v) => (v.taskset !== undefined ? [{ label: 'taskset', pin: -1 }] : [{ label: 'local', pin: c.local }]),
    comparisons,
  };
}

/** Every group, in the order they run. */
export function experimentGroups(c: Cores): Group[] {
  return [processGroup(c), loadingGroup(c), threadsGroup(c), tasksetGroup(c)];
}
