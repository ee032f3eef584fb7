// Graph nodes: their types and options, the checks and encodings of node parameters (checked in JS
// first: the driver reads these records blindly), and host nodes (one trampoline; each function alive
// while a graph, clone or executable holds it). Shared by Graph (graph.ts) and GraphExec (graph-exec.ts).
import { koffi } from '../../support';
import * as drv from '../driver';
import type { Context } from '../context';
import { checkKeys, describe } from '../describe';
import { Brand } from '../brand';
import { ClosedObjectError } from '../errors';
import { Core, checkSize, whenNoHostFuncs } from '../lifecycle';
import { Kernel } from '../module';
import { DeviceBuffer, ownerOf } from '../memory/device-buffer';
import { PinnedHostBuffer } from '../memory/pinned-host-buffer';
import { Event } from '../event';
import type { Graph } from './graph';

/** A node of a graph (from the Graph.add* methods or Graph.nodes()). */
export interface GraphNode {
  /** The driver handle (CUgraphNode). */
  readonly handle: drv.CUgraphNode;
  /** The node's type (kernel, memcpy, …). */
  readonly type: drv.CUgraphNodeType;
}

/** Memory a graph allocates (from {@link Graph.addMemAllocNode}): valid between its alloc node and its free node. */
export interface GraphAllocation {
  /** The memory-allocation node. */
  readonly node: GraphNode;
  /** The device address (fixed for the life of the graph: pass it as a `'ptr'` kernel argument). */
  readonly address: drv.CUdeviceptr;
  /** Size in bytes. */
  readonly byteLength: number;
}

/** Where a memcpy node copies from or to: device memory, pinned host memory, or a graph allocation. */
export type GraphCopyEndpoint = DeviceBuffer | PinnedHostBuffer | GraphAllocation;

/** Options of {@link Graph.addMemcpyNode}. */
export interface GraphCopyOptions {
  /** Bytes to copy (default: what is left of the source after `srcOffset`). */
  byteLength?: number;
  /** Byte offset into the source (default 0). */
  srcOffset?: number;
  /** Byte offset into the destination (default 0). */
  dstOffset?: number;
}

/** Options of {@link Graph.addMemsetNode}. */
export interface GraphMemsetOptions {
  /** Element width in bytes: 1, 2 or 4 (default 1). */
  width?: 1 | 2 | 4;
  /** Byte offset of the first element (a multiple of `width`, default 0). */
  offset?: number;
  /** Elements to set (default: up to the end of the memory). */
  count?: number;
}

export const NT = drv.CUgraphNodeType;
export const MEMORYTYPE_HOST = 1;
export const MEMORYTYPE_DEVICE = 2;

// ---------------------------------------------------------------------------------------------
// Host nodes: one trampoline; the functions by id, alive while a graph (or clone, or exec) holds them
// ---------------------------------------------------------------------------------------------

const hostNodeFns = new Map<number, () => void>();
let nextHostNodeFn = 1;
let hostNodeTrampoline: bigint | undefined;
/** Errors thrown by host-node functions, reported by the next completed launch of a graph with host nodes. */
const hostNodeErrors: unknown[] = [];

function trampoline(): bigint {
  if (hostNodeTrampoline !== undefined) return hostNodeTrampoline;
  const proto = koffi.proto('void', ['void *']);
  hostNodeTrampoline = koffi.register((userData: bigint | number | null) => {
    const fn = hostNodeFns.get(userData === null ? 0 : Number(userData));
    if (fn === undefined) return; // its graph is gone (a stale launch): nothing to run
    try {
      fn();
    } catch (e) {
      hostNodeErrors.push(e);
    }
  }, koffi.pointer(proto)) as bigint;
  return hostNodeTrampoline;
}

/** Registers `fn` for a host node; the returned core owns the registration (hold it, then close it). */
export function registerHostFn(fn: () => void): { id: number; core: Core } {
  const id = nextHostNodeFn++;
  hostNodeFns.set(id, fn);
  // Forgotten only once no callback is pending: a launch in flight may still call it.
  const core = new Core('graph host function', () => whenNoHostFuncs(() => hostNodeFns.delete(id)));
  return { id, core };
}

export function hostNodeParams(id: number): Uint8Array {
  const bytes = new Uint8Array(16); // CUDA_HOST_NODE_PARAMS { fn, userData }
  const dv = new DataView(bytes.buffer);
  dv.setBigUint64(0, BigInt(trampoline()), true);
  dv.setBigUint64(8, BigInt(id), true);
  return bytes;
}

/** Run after each launch of a graph with host nodes (as a host function): reports what they threw. */
export function settleHostNodes(): void {
  if (hostNodeErrors.length > 0) throw hostNodeErrors.shift();
}

// ---------------------------------------------------------------------------------------------
// Parameter encoding (checked in JS first: the driver reads these records blindly)
// ---------------------------------------------------------------------------------------------

interface Endpoint {
  kind: number;
  address: number;
  byteLength: number;
  core: Core | undefined;
}

export function isAllocation(v: unknown): v is GraphAllocation {
  return typeof v === 'object' && v !== null && allocations.has(v as GraphAllocation);
}
export const allocations = new WeakSet<GraphAllocation>();

function endpoint(where: string, name: string, v: unknown, allowHost: boolean): Endpoint {
  if (v instanceof DeviceBuffer) {
    v.check();
    return { kind: MEMORYTYPE_DEVICE, address: v.ptr, byteLength: v.byteLength, core: ownerOf(v).core };
  }
  if (allowHost && v instanceof PinnedHostBuffer) {
    if (v.closed) throw new ClosedObjectError(where, 'PinnedHostBuffer');
    return { kind: MEMORYTYPE_HOST, address: v.hostAddress, byteLength: v.byteLength, core: v.core };
  }
  if (isAllocation(v)) return { kind: MEMORYTYPE_DEVICE, address: v.address, byteLength: v.byteLength, core: undefined };
  throw new TypeError(`${where}: ${name} must be a DeviceBuffer${allowHost ? ', a PinnedHostBuffer' : ''} or a GraphAllocation, got ${describe(v)}`);
}

/** `o` as an options record with only `keys` (undefined: {}). */
export function optionsObject(where: string, o: unknown, keys: readonly string[]): Record<string, unknown> {
  if (o === undefined) return {};
  if (typeof o !== 'object' || o === null) throw new TypeError(`${where}: options must be an object, got ${describe(o)}`);
  checkKeys(where, o, keys);
  return o as Record<string, unknown>;
}

/** CUDA_MEMCPY3D (200 bytes) for a 1-D copy, and the cores it uses. */
export function encodeMemcpy(where: string, dst: unknown, src: unknown, options: unknown): { bytes: Uint8Array; cores: Core[] } {
  const o = optionsObject(where, options, ['byteLength', 'srcOffset', 'dstOffset']);
  const d = endpoint(where, 'dst', dst, true);
  const s = endpoint(where, 'src', src, true);
  const srcOffset = o.srcOffset === undefined ? 0 : checkSize(`${where}: srcOffset`, o.srcOffset);
  const dstOffset = o.dstOffset === undefined ? 0 : checkSize(`${where}: dstOffset`, o.dstOffset);
  if (srcOffset > s.byteLength) throw new RangeError(`${where}: srcOffset ${srcOffset} is past the end of the source (${s.byteLength} bytes)`);
  const n = o.byteLength === undefined ? s.byteLength - srcOffset : checkSize(`${where}: byteLength`, o.byteLength);
  if (n === 0) throw new RangeError(`${where}: nothing to copy (byteLength 0)`);
  if (srcOffset + n > s.byteLength)
    throw new RangeError(`${where}: ${n} bytes from offset ${srcOffset} run past the end of the source (${s.byteLength} bytes)`);
  if (dstOffset + n > d.byteLength)
    throw new RangeError(`${where}: ${n} bytes at offset ${dstOffset} run past the end of the destination (${d.byteLength} bytes)`);
  const bytes = new Uint8Array(200);
  const dv = new DataView(bytes.buffer);
  dv.setInt32(32, s.kind, true);
  dv.setBigUint64(s.kind === MEMORYTYPE_HOST ? 40 : 48, BigInt(s.address + srcOffset), true);
  dv.setInt32(120, d.kind, true);
  dv.setBigUint64(d.kind === MEMORYTYPE_HOST ? 128 : 136, BigInt(d.address + dstOffset), true);
  dv.setBigUint64(176, BigInt(n), true); // WidthInBytes
  dv.setBigUint64(184, 1n, true); // Height
  dv.setBigUint64(192, 1n, true); // Depth
  return { bytes, cores: [d.core, s.core].filter((c): c is Core => c !== undefined) };
}

/** CUDA_MEMSET_NODE_PARAMS (40 bytes), and the core it uses. */
export function encodeMemset(where: string, dst: unknown, value: unknown, options: unknown): { bytes: Uint8Array; core: Core | undefined } {
  const o = optionsObject(where, options, ['width', 'offset', 'count']);
  const d = endpoint(where, 'dst', dst, false);
  const width = o.width ?? 1;
  if (width !== 1 && width !== 2 && width !== 4) throw new RangeError(`${where}: width must be 1, 2 or 4, got ${describe(width)}`);
  const max = width === 4 ? 0xffffffff : width === 2 ? 0xffff : 0xff;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max)
    throw new RangeError(`${where}: value must be an integer from 0 to ${max} (width ${width}), got ${describe(value)}`);
  const offset = o.offset === undefined ? 0 : checkSize(`${where}: offset`, o.offset);
  if (offset % width !== 0) throw new RangeError(`${where}: offset ${offset} is not a multiple of width ${width}`);
  if (offset > d.byteLength) throw new RangeError(`${where}: offset ${offset} is past the end (${d.byteLength} bytes)`);
  const count = o.count === undefined ? Math.floor((d.byteLength - offset) / width) : checkSize(`${where}: count`, o.count);
  if (count === 0) throw new RangeError(`${where}: nothing to set (count 0)`);
  if (offset + count * width > d.byteLength)
    throw new RangeError(`${where}: ${count} elements of ${width} bytes at offset ${offset} run past the end (${d.byteLength} bytes)`);
  const bytes = new Uint8Array(40);
  const dv = new DataView(bytes.buffer);
  dv.setBigUint64(0, BigInt(d.address + offset), true);
  dv.setUint32(16, value, true);
  dv.setUint32(20, width, true);
  dv.setBigUint64(24, BigInt(count), true);
  dv.setBigUint64(32, 1n, true); // height
  return { bytes, core: d.core };
}

export function checkFn(where: string, fn: unknown): () => void {
  if (typeof fn !== 'function') throw new TypeError(`${where}: fn must be a function, got ${describe(fn)}`);
  return fn as () => void;
}

export function checkEvent(where: string, event: unknown, ctx: Context): Event {
  if (!(event instanceof Event)) throw new TypeError(`${where}: event must be an Event, got ${describe(event)}`);
  event.assertUsable();
  if (event.context !== ctx) throw new TypeError(`${where}: the event belongs to ${String(event.context)}, the graph to ${String(ctx)}`);
  return event;
}

/** Every Graph made (marked by its constructor): graph-exec.ts recognises a Graph without importing graph.ts. */
export const graphBrand = new Brand<Graph>();

export function checkGraph(where: string, graph: unknown): Graph {
  if (!graphBrand.has(graph)) throw new TypeError(`${where}: graph must be a Graph, got ${describe(graph)}`);
  graph.check();
  return graph;
}

/** Holds the kernel and buffer arguments of a kernel node in `core`. */
export function holdKernelNode(core: Core, kernel: Kernel, args: readonly unknown[]): void {
  core.hold(kernel.core);
  for (let v of args) {
    if (typeof v === 'object' && v !== null && 'value' in v && 'type' in v) v = (v as { value: unknown }).value;
    if (v instanceof DeviceBuffer) core.hold(ownerOf(v).core);
    else if (v instanceof PinnedHostBuffer) core.hold(v.core);
  }
}

export function checkNode(where: string, node: unknown): GraphNode {
  if (
    typeof node !== 'object' ||
    node === null ||
    typeof (node as GraphNode).handle !== 'number' ||
    !Number.isSafeInteger((node as GraphNode).handle) ||
    (node as GraphNode).handle <= 0
  ) {
    throw new TypeError(`${where}: node must be a GraphNode (from Graph.nodes() or addKernelNode), got ${describe(node)}`);
  }
  return node as GraphNode;
}

export function checkKernel(where: string, kernel: unknown): Kernel {
  if (!(kernel instanceof Kernel)) throw new TypeError(`${where}: kernel must be a Kernel, got ${describe(kernel)}`);
  return kernel;
}

/** Graph node handles this module made, per graph, so that a node of another graph is refused. */
export const nodeOwners = new WeakMap<GraphNode, Graph>();
