// Launch configuration: grid, block, shared memory and launch attributes (cluster, cooperative,
// programmatic dependent launch, priority, memory-sync domain), validated and encoded once into the
// CUlaunchConfig that cuLaunchKernelEx takes.
import { koffi } from '../support';
import * as drv from './driver';
import { describe } from './describe';
import { writeU64 } from './kernel-args';

/**
 * A grid, block or cluster size: `n` (as `[n, 1, 1]`), `[x]`, `[x, y]`, `[x, y, z]` or `{ x, y?, z? }`.
 * Missing dimensions are 1; each is an integer from 1 to 2^32 - 1.
 */
export type Dim3 =
  | number
  | readonly [number]
  | readonly [number, number]
  | readonly [number, number, number]
  | {
      /** Size in x. */
      x: number;
      /** Size in y (default 1). */
      y?: number;
      /** Size in z (default 1). */
      z?: number;
    };

function dim(where: string, name: string, v: unknown, r: unknown): number {
  if (typeof v !== 'number') throw new TypeError(`${where}: ${name} must be a number, got ${describe(v)} in ${describe(r)}`);
  if (!Number.isInteger(v) || v < 1 || v > 0xffffffff) throw new RangeError(`${where}: ${name} must be an integer from 1 to 2^32 - 1, got ${v}`);
  return v;
}

function dim3(where: string, name: string, d: unknown): [number, number, number] {
  if (typeof d === 'number') return [dim(where, name, d, d), 1, 1];
  if (Array.isArray(d)) {
    if (d.length < 1 || d.length > 3) throw new TypeError(`${where}: ${name} as an array has 1 to 3 dimensions ([x], [x, y] or [x, y, z]), got ${d.length}`);
    return [dim(where, `${name}[0]`, d[0], d), d.length > 1 ? dim(where, `${name}[1]`, d[1], d) : 1, d.length > 2 ? dim(where, `${name}[2]`, d[2], d) : 1];
  }
  if (typeof d === 'object' && d !== null) {
    const o = d as Record<string, unknown>;
    for (const k of Object.keys(o))
      if (k !== 'x' && k !== 'y' && k !== 'z') throw new TypeError(`${where}: ${name} has an unknown field '${k}' (expected x, y, z)`);
    if (o.x === undefined) throw new TypeError(`${where}: ${name}.x is required`);
    return [dim(where, `${name}.x`, o.x, d), o.y === undefined ? 1 : dim(where, `${name}.y`, o.y, d), o.z === undefined ? 1 : dim(where, `${name}.z`, o.z, d)];
  }
  throw new TypeError(`${where}: ${name} must be a number, [x, y, z] or { x, y, z }, got ${describe(d)}`);
}

/** What a {@link LaunchConfig} is made from; launch() also takes one directly. */
export interface LaunchConfigInit {
  /**
   * Blocks in the grid. With `cluster`, this still counts blocks, not clusters: `grid: 8, cluster: 2`
   * launches 8 blocks in 4 clusters of 2 (each grid dimension must be a multiple of the cluster's).
   */
  grid: Dim3;
  /** Threads per block. */
  block: Dim3;
  /** Dynamic shared memory per block, bytes. */
  sharedMemBytes?: number;
  /**
   * Thread block cluster dimensions, in blocks (sm_90+): the blocks of one cluster are co-scheduled on
   * one GPU processing cluster and share distributed shared memory. `grid` counts blocks, not clusters.
   */
  cluster?: Dim3;
  /** Cooperative launch (grid-wide sync). */
  cooperative?: boolean;
  /**
   * Programmatic dependent launch (sm_90+): this kernel may start before the previous kernel on the
   * same stream has finished, once every block of that kernel has executed
   * `griddepcontrol.launch_dependents` (`cudaTriggerProgrammaticLaunchCompletion()`) or exited. The
   * kernel must execute `griddepcontrol.wait` (`cudaGridDependencySynchronize()`) before it reads what the
   * previous kernel writes. (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION.)
   */
  programmaticDependentLaunch?: boolean;
  /** Scheduling priority of this launch's blocks (CU_LAUNCH_ATTRIBUTE_PRIORITY); lower numbers are higher priority, see Stream.priorityRange(). */
  priority?: number;
  /**
   * Memory-synchronization domain of the kernel (CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN): `'remote'` for
   * kernels whose memory fences only need to order memory with other GPUs (communication kernels), so
   * that their fences do not wait for the compute kernels' traffic; default `'default'`.
   */
  memSyncDomain?: 'default' | 'remote';
  /**
   * Maps the logical domains to the physical ones (CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP), each 0 to
   * the device's CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT - 1.
   */
  memSyncDomainMap?: {
    /** Physical domain of the logical `'default'` domain. */
    default: number;
    /** Physical domain of the logical `'remote'` domain. */
    remote: number;
  };
}

const CONFIG_KEYS = new Set([
  'grid',
  'block',
  'sharedMemBytes',
  'cluster',
  'cooperative',
  'programmaticDependentLaunch',
  'priority',
  'memSyncDomain',
  'memSyncDomainMap',
]);
/** The fields of a LaunchConfigInit, as messages show them. */
const CONFIG_SHAPE = `{ ${[...CONFIG_KEYS].map((k) => (k === 'grid' || k === 'block' ? k : `${k}?`)).join(', ')} }`;
const CONFIG_BYTES = 56;
const ATTR_BYTES = 72;
const LA = drv.CUlaunchAttributeID;

/**
 * Grid, block, shared memory and launch attributes (cluster, cooperative, programmatic dependent
 * launch, priority, memory-sync domain), validated and encoded once. A launch is one cuLaunchKernelEx
 * with the CUlaunchConfig encoded here.
 * @example
 * ```ts
 * import { LaunchConfig } from 'cuda-ts/objects';
 *
 * const n = 1 << 20;
 * const flat = LaunchConfig.linear(n); // ceil(n / 256) blocks of 256 threads
 * const tiles = new LaunchConfig({ grid: [64, 64], block: [16, 16], sharedMemBytes: 2 * 16 * 16 * 4 });
 * const clustered = new LaunchConfig({ grid: 8, block: 128, cluster: 2 }); // sm_90+: 4 clusters of 2 blocks
 * console.log(flat.gx, tiles.blockThreads, clustered.cluster); // 4096 256 [2, 1, 1]
 * ```
 */
export class LaunchConfig {
  /** Grid size in x (blocks). */
  readonly gx: number;
  /** Grid size in y (blocks). */
  readonly gy: number;
  /** Grid size in z (blocks). */
  readonly gz: number;
  /** Block size in x (threads). */
  readonly bx: number;
  /** Block size in y (threads). */
  readonly by: number;
  /** Block size in z (threads). */
  readonly bz: number;
  /** Dynamic shared memory per block, bytes. */
  readonly sharedMemBytes: number;
  /** Thread block cluster dimensions, or undefined without clusters. */
  readonly cluster: readonly [number, number, number] | undefined;
  /** Cooperative launch (grid-wide sync). */
  readonly cooperative: boolean;
  /** Programmatic dependent launch (see {@link LaunchConfigInit.programmaticDependentLaunch}). */
  readonly programmaticDependentLaunch: boolean;
  /** Launch priority, or undefined for the stream's. */
  readonly priority: number | undefined;
  /** Memory-sync domain, or undefined for the default. */
  readonly memSyncDomain: 'default' | 'remote' | undefined;
  /** Logical-to-physical memory-sync domain map, or undefined for the default. */
  readonly memSyncDomainMap:
    | {
        /** Physical domain of the logical `'default'` domain. */
        readonly default: number;
        /** Physical domain of the logical `'remote'` domain. */
        readonly remote: number;
      }
    | undefined;
  /**
   * The CUlaunchConfig cuLaunchKernelEx takes, with its attributes after it (`attributes` of them),
   * encoded once; a launch writes only its stream, when another than the last one (`stream`). @internal
   */
  readonly ex: { view: DataView; bytes: Uint8Array; attributes: number; stream: number };

  /**
   * Validates and encodes `init`; the result is frozen.
   * @param init `grid` (blocks, a Dim3) and `block` (threads per block), required; `sharedMemBytes` (dynamic shared memory per block; default 0), `cluster`, `cooperative`, `programmaticDependentLaunch`, `priority`, `memSyncDomain` and `memSyncDomainMap` optional (see LaunchConfigInit).
   * @throws TypeError when `init` is not an object; RangeError for a dimension or `sharedMemBytes` out
   * of range, or a grid that is not a multiple of the cluster
   */
  constructor(init: LaunchConfigInit) {
    const W = 'LaunchConfig';
    if (typeof init !== 'object' || init === null) throw new TypeError(`${W} expects ${CONFIG_SHAPE}, got ${describe(init)}`);
    for (const k of Object.keys(init)) if (!CONFIG_KEYS.has(k)) throw new TypeError(`${W}: unknown field '${k}' (expected ${[...CONFIG_KEYS].join(', ')})`);
    if (init.grid === undefined) throw new TypeError(`${W}: grid is required (or use LaunchConfig.linear(n, blockSize))`);
    if (init.block === undefined) throw new TypeError(`${W}: block is required (or use LaunchConfig.linear(n, blockSize))`);
    [this.gx, this.gy, this.gz] = dim3(W, 'grid', init.grid);
    [this.bx, this.by, this.bz] = dim3(W, 'block', init.block);
    const smem = init.sharedMemBytes ?? 0;
    if (typeof smem !== 'number') throw new TypeError(`${W}: sharedMemBytes must be a number, got ${describe(smem)}`);
    if (!Number.isInteger(smem) || smem < 0 || smem > 0xffffffff)
      throw new RangeError(`${W}: sharedMemBytes must be a non-negative 32-bit integer, got ${smem}`);
    this.sharedMemBytes = smem;
    this.cluster = init.cluster !== undefined ? dim3(W, 'cluster', init.cluster) : undefined;
    if (init.cooperative !== undefined && typeof init.cooperative !== 'boolean')
      throw new TypeError(`${W}: cooperative must be a boolean, got ${describe(init.cooperative)}`);
    this.cooperative = init.cooperative === true;
    if (init.programmaticDependentLaunch !== undefined && typeof init.programmaticDependentLaunch !== 'boolean')
      throw new TypeError(`${W}: programmaticDependentLaunch must be a boolean, got ${describe(init.programmaticDependentLaunch)}`);
    this.programmaticDependentLaunch = init.programmaticDependentLaunch === true;
    if (init.priority !== undefined && (typeof init.priority !== 'number' || !Number.isInteger(init.priority) || Math.abs(init.priority) > 0x7fffffff))
      throw new RangeError(`${W}: priority must be a 32-bit integer, got ${describe(init.priority)}`);
    this.priority = init.priority;
    if (init.memSyncDomain !== undefined && init.memSyncDomain !== 'default' && init.memSyncDomain !== 'remote')
      throw new TypeError(`${W}: memSyncDomain must be 'default' or 'remote', got ${describe(init.memSyncDomain)}`);
    this.memSyncDomain = init.memSyncDomain;
    this.memSyncDomainMap = init.memSyncDomainMap === undefined ? undefined : domainMap(W, init.memSyncDomainMap);
    if (this.cluster) {
      const [cx, cy, cz] = this.cluster;
      if (this.gx % cx || this.gy % cy || this.gz % cz)
        throw new RangeError(`${W}: grid [${this.gx}, ${this.gy}, ${this.gz}] (in blocks) is not a multiple of cluster [${cx}, ${cy}, ${cz}]`);
    }
    const attrs: [number, (dv: DataView, at: number) => void][] = [];
    const cluster = this.cluster;
    if (cluster) attrs.push([LA.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, (dv, at) => cluster.forEach((v, i) => dv.setUint32(at + i * 4, v, true))]);
    if (this.cooperative) attrs.push([LA.CU_LAUNCH_ATTRIBUTE_COOPERATIVE, (dv, at) => dv.setInt32(at, 1, true)]);
    if (this.programmaticDependentLaunch) attrs.push([LA.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, (dv, at) => dv.setInt32(at, 1, true)]);
    const priority = this.priority;
    if (priority !== undefined) attrs.push([LA.CU_LAUNCH_ATTRIBUTE_PRIORITY, (dv, at) => dv.setInt32(at, priority, true)]);
    const domain = this.memSyncDomain;
    if (domain !== undefined)
      attrs.push([
        LA.CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN,
        (dv, at) =>
          dv.setInt32(
            at,
            domain === 'remote' ? drv.CUlaunchMemSyncDomain.CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE : drv.CUlaunchMemSyncDomain.CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT,
            true,
          ),
      ]);
    const map = this.memSyncDomainMap;
    if (map !== undefined)
      attrs.push([
        LA.CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP,
        (dv, at) => {
          dv.setUint8(at, map.default);
          dv.setUint8(at + 1, map.remote);
        },
      ]);
    const buffer = new ArrayBuffer(CONFIG_BYTES + attrs.length * ATTR_BYTES);
    const dv = new DataView(buffer);
    const fields = [this.gx, this.gy, this.gz, this.bx, this.by, this.bz, this.sharedMemBytes];
    fields.forEach((v, i) => dv.setUint32(i * 4, v, true));
    if (attrs.length > 0) {
      const base = Number(koffi.address(buffer));
      writeU64(dv, 40, base + CONFIG_BYTES); // attrs
      dv.setUint32(48, attrs.length, true);
      // CUlaunchAttribute: { id: int32, pad, value: 64-byte union }
      attrs.forEach(([id, write], i) => {
        const a = CONFIG_BYTES + i * ATTR_BYTES;
        dv.setInt32(a, id, true);
        write(dv, a + 8);
      });
    }
    this.ex = { view: dv, bytes: new Uint8Array(buffer), attributes: attrs.length, stream: 0 };
    Object.freeze(this);
  }

  /** Threads per block. */
  get blockThreads(): number {
    return this.bx * this.by * this.bz;
  }

  /**
   * A 1-D config covering `n` items with `blockSize` threads per block.
   * @param n Items to cover, one thread each (the grid is ceil(n / blockSize) blocks).
   * @param blockSize Threads per block (default 256).
   * @param sharedMemBytes Dynamic shared memory per block, in bytes (default 0).
   */
  static linear(n: number, blockSize = 256, sharedMemBytes = 0): LaunchConfig {
    for (const [name, v, max] of [
      ['n', n, Number.MAX_SAFE_INTEGER],
      ['blockSize', blockSize, 1024],
    ] as const) {
      if (typeof v !== 'number') throw new TypeError(`LaunchConfig.linear: ${name} must be a number, got ${describe(v)}`);
      if (!Number.isInteger(v) || v < 1 || v > max) throw new RangeError(`LaunchConfig.linear: ${name} must be an integer from 1 to ${max}, got ${v}`);
    }
    if (Math.ceil(n / blockSize) > 0x7fffffff) throw new RangeError(`LaunchConfig.linear: ${n} items in blocks of ${blockSize} need more than 2^31 - 1 blocks`);
    return new LaunchConfig({ grid: Math.ceil(n / blockSize), block: blockSize, sharedMemBytes });
  }
}

function domainMap(where: string, m: unknown): { readonly default: number; readonly remote: number } {
  if (typeof m !== 'object' || m === null) throw new TypeError(`${where}: memSyncDomainMap must be { default, remote }, got ${describe(m)}`);
  const o = m as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (k !== 'default' && k !== 'remote') throw new TypeError(`${where}: memSyncDomainMap has an unknown field '${k}' (expected default, remote)`);
  for (const k of ['default', 'remote']) {
    const v = o[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 255)
      throw new RangeError(`${where}: memSyncDomainMap.${k} must be an integer from 0 to 255 (a physical domain), got ${describe(v)}`);
  }
  return Object.freeze({ default: o.default as number, remote: o.remote as number });
}

/** `c` as a LaunchConfig (encoded now when it is a LaunchConfigInit); `where` names the call in the message for a non-object. */
export function configOf(c: LaunchConfig | LaunchConfigInit, where = 'LaunchConfig'): LaunchConfig {
  if (c instanceof LaunchConfig) return c;
  if (typeof c !== 'object' || c === null) throw new TypeError(`${where}: config must be a LaunchConfig or ${CONFIG_SHAPE}, got ${describe(c)}`);
  return new LaunchConfig(c);
}
