// CUDA graphs: stream capture → Graph → instantiate → GraphExec.launch(stream); or built node by node
// (kernel, memcpy, memset, host, event record/wait, child graph, memory alloc/free, conditional
// if/while/switch), cloned, printed as DOT, and updated in place once instantiated.
// A graph keeps alive everything its work uses: what captured work used (registered at capture time,
// see capture.ts), and the kernels, buffers, events and callbacks given to the add*/set* methods. A
// GraphExec keeps its graph (and so all of that) alive. Closing a kernel, module or buffer a live graph
// uses defers its destroy until the graph and its executables are closed: replaying never faults.
//
// Host nodes run a JS function on the event loop (koffi queues the driver thread's call there), so
// while a launch of a graph with host nodes is in flight a blocking wait would deadlock: each such
// launch counts as one pending JS callback (the shared count of runtime/callbacks.ts) until a host
// function enqueued after it has run, and blocking waits refuse meanwhile (await stream.synchronized()).
import { koffi } from '../../support';
import * as drv from '../driver';
import { Context, contextOf, describe } from '../context';
import { Core, Resource, checkSize, whenNoHostFuncs } from '../lifecycle';
import { LaunchConfig, encodeKernelNodeParams, packFor, type LaunchConfigInit } from '../launch';
import { Kernel } from '../module';
import { DeviceBuffer, PinnedHostBuffer, ownerOf } from '../memory/buffers';
import { Stream, toStream, type StreamLike } from '../stream';
import { Event } from '../event';
import { takeHolder, type CaptureHolder } from './capture';

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

/**
 * A conditional handle (cuGraphConditionalHandleCreate) of a graph: its value decides whether (if),
 * how often (while) or which body (switch) a conditional node runs. Device code sets it with
 * `cudaGraphSetConditional(handle, value)`; pass {@link GraphConditional.value} as a `'u64'` kernel
 * argument (`cudaGraphConditionalHandle` is an `unsigned long long`).
 */
export class GraphConditional {
  /** @internal use Graph.createConditional */
  constructor(
    /** The handle value (CUgraphConditionalHandle). */
    readonly value: bigint,
    /** The graph it was created in (its conditional nodes must be in that graph). */
    readonly graph: Graph,
    /** The value it takes at the start of each launch, or undefined when it keeps the last one. */
    readonly defaultValue: number | undefined,
  ) {}
}

/** What {@link Graph.addConditionalNode} returns: the node and its body graphs (owned by the node). */
export interface ConditionalNode {
  /** The conditional node. */
  readonly node: GraphNode;
  /** Its body graphs, to fill with nodes (owned by the node: they live as long as the parent graph). */
  readonly bodies: readonly Graph[];
}

const NT = drv.CUgraphNodeType;
const MEMORYTYPE_HOST = 1;
const MEMORYTYPE_DEVICE = 2;
const COND_TYPES = { if: drv.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_IF, while: drv.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_WHILE, switch: drv.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_SWITCH } as const;

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
function registerHostFn(fn: () => void): { id: number; core: Core } {
  const id = nextHostNodeFn++;
  hostNodeFns.set(id, fn);
  // Forgotten only once no callback is pending: a launch in flight may still call it.
  const core = new Core('graph host function', () => whenNoHostFuncs(() => hostNodeFns.delete(id)));
  return { id, core };
}

function hostNodeParams(id: number): Uint8Array {
  const bytes = new Uint8Array(16); // CUDA_HOST_NODE_PARAMS { fn, userData }
  const dv = new DataView(bytes.buffer);
  dv.setBigUint64(0, BigInt(trampoline()), true);
  dv.setBigUint64(8, BigInt(id), true);
  return bytes;
}

/** Run after each launch of a graph with host nodes (as a host function): reports what they threw. */
function settleHostNodes(): void {
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

function isAllocation(v: unknown): v is GraphAllocation {
  return typeof v === 'object' && v !== null && allocations.has(v as GraphAllocation);
}
const allocations = new WeakSet<GraphAllocation>();

function endpoint(where: string, name: string, v: unknown, allowHost: boolean): Endpoint {
  if (v instanceof DeviceBuffer) {
    v.check();
    return { kind: MEMORYTYPE_DEVICE, address: v.ptr, byteLength: v.byteLength, core: ownerOf(v).core };
  }
  if (allowHost && v instanceof PinnedHostBuffer) {
    if (v.closed) throw new Error(`${where}: ${name} (PinnedHostBuffer) is closed`);
    return { kind: MEMORYTYPE_HOST, address: v.hostAddress, byteLength: v.byteLength, core: v.core };
  }
  if (isAllocation(v)) return { kind: MEMORYTYPE_DEVICE, address: v.address, byteLength: v.byteLength, core: undefined };
  throw new TypeError(`${where}: ${name} must be a DeviceBuffer${allowHost ? ', a PinnedHostBuffer' : ''} or a GraphAllocation, got ${describe(v)}`);
}

function optionsObject(where: string, o: unknown, keys: readonly string[]): Record<string, unknown> {
  if (o === undefined) return {};
  if (typeof o !== 'object' || o === null) throw new TypeError(`${where}: options must be an object, got ${describe(o)}`);
  for (const k of Object.keys(o)) if (!keys.includes(k)) throw new TypeError(`${where}: unknown option '${k}' (expected ${keys.join(', ')})`);
  return o as Record<string, unknown>;
}

/** CUDA_MEMCPY3D (200 bytes) for a 1-D copy, and the cores it uses. */
function encodeMemcpy(where: string, dst: unknown, src: unknown, options: unknown): { bytes: Uint8Array; cores: Core[] } {
  const o = optionsObject(where, options, ['byteLength', 'srcOffset', 'dstOffset']);
  const d = endpoint(where, 'dst', dst, true);
  const s = endpoint(where, 'src', src, true);
  const srcOffset = o.srcOffset === undefined ? 0 : checkSize(`${where}: srcOffset`, o.srcOffset);
  const dstOffset = o.dstOffset === undefined ? 0 : checkSize(`${where}: dstOffset`, o.dstOffset);
  if (srcOffset > s.byteLength) throw new RangeError(`${where}: srcOffset ${srcOffset} is past the end of the source (${s.byteLength} bytes)`);
  const n = o.byteLength === undefined ? s.byteLength - srcOffset : checkSize(`${where}: byteLength`, o.byteLength);
  if (n === 0) throw new RangeError(`${where}: nothing to copy (byteLength 0)`);
  if (srcOffset + n > s.byteLength) throw new RangeError(`${where}: ${n} bytes from offset ${srcOffset} run past the end of the source (${s.byteLength} bytes)`);
  if (dstOffset + n > d.byteLength) throw new RangeError(`${where}: ${n} bytes at offset ${dstOffset} run past the end of the destination (${d.byteLength} bytes)`);
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
function encodeMemset(where: string, dst: unknown, value: unknown, options: unknown): { bytes: Uint8Array; core: Core | undefined } {
  const o = optionsObject(where, options, ['width', 'offset', 'count']);
  const d = endpoint(where, 'dst', dst, false);
  const width = o.width ?? 1;
  if (width !== 1 && width !== 2 && width !== 4) throw new RangeError(`${where}: width must be 1, 2 or 4, got ${describe(width)}`);
  const max = width === 4 ? 0xffffffff : width === 2 ? 0xffff : 0xff;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) throw new RangeError(`${where}: value must be an integer from 0 to ${max} (width ${width}), got ${describe(value)}`);
  const offset = o.offset === undefined ? 0 : checkSize(`${where}: offset`, o.offset);
  if (offset % width !== 0) throw new RangeError(`${where}: offset ${offset} is not a multiple of width ${width}`);
  if (offset > d.byteLength) throw new RangeError(`${where}: offset ${offset} is past the end (${d.byteLength} bytes)`);
  const count = o.count === undefined ? Math.floor((d.byteLength - offset) / width) : checkSize(`${where}: count`, o.count);
  if (count === 0) throw new RangeError(`${where}: nothing to set (count 0)`);
  if (offset + count * width > d.byteLength) throw new RangeError(`${where}: ${count} elements of ${width} bytes at offset ${offset} run past the end (${d.byteLength} bytes)`);
  const bytes = new Uint8Array(40);
  const dv = new DataView(bytes.buffer);
  dv.setBigUint64(0, BigInt(d.address + offset), true);
  dv.setUint32(16, value, true);
  dv.setUint32(20, width, true);
  dv.setBigUint64(24, BigInt(count), true);
  dv.setBigUint64(32, 1n, true); // height
  return { bytes, core: d.core };
}

function checkFn(where: string, fn: unknown): () => void {
  if (typeof fn !== 'function') throw new TypeError(`${where}: fn must be a function, got ${describe(fn)}`);
  return fn as () => void;
}

function checkEvent(where: string, event: unknown, ctx: Context): Event {
  if (!(event instanceof Event)) throw new TypeError(`${where}: event must be an Event, got ${describe(event)}`);
  event.assertUsable();
  if (event.context !== ctx) throw new TypeError(`${where}: the event belongs to ${String(event.context)}, the graph to ${String(ctx)}`);
  return event;
}

function checkGraph(where: string, graph: unknown): Graph {
  if (!(graph instanceof Graph)) throw new TypeError(`${where}: graph must be a Graph, got ${describe(graph)}`);
  graph.check();
  return graph;
}

/** Holds the kernel and buffer arguments of a kernel node in `core`. */
function holdKernelNode(core: Core, kernel: Kernel, args: readonly unknown[]): void {
  core.hold(kernel.core);
  for (let v of args) {
    if (typeof v === 'object' && v !== null && 'value' in v && 'type' in v) v = (v as { value: unknown }).value;
    if (v instanceof DeviceBuffer) core.hold(ownerOf(v).core);
    else if (v instanceof PinnedHostBuffer) core.hold(v.core);
  }
}

function checkNode(where: string, node: unknown): GraphNode {
  if (typeof node !== 'object' || node === null || typeof (node as GraphNode).handle !== 'number' || !Number.isSafeInteger((node as GraphNode).handle) || (node as GraphNode).handle <= 0) {
    throw new TypeError(`${where}: node must be a GraphNode (from Graph.nodes() or addKernelNode), got ${describe(node)}`);
  }
  return node as GraphNode;
}

function checkKernel(where: string, kernel: unknown): Kernel {
  if (!(kernel instanceof Kernel)) throw new TypeError(`${where}: kernel must be a Kernel, got ${describe(kernel)}`);
  return kernel;
}

/** Graph node handles this module made, per graph, so that a node of another graph is refused. */
const nodeOwners = new WeakMap<GraphNode, Graph>();

/**
 * A CUDA graph (template): built by stream capture or node by node, then instantiated as a
 * {@link GraphExec} to launch. Free with close() or `using`.
 */
export class Graph extends Resource {
  /** The driver handle (CUgraph). */
  readonly handle: drv.CUgraph;
  /** The context the graph belongs to. */
  readonly context: Context;
  /**
   * The graph that owns this one: itself, or for the body of a conditional node the graph holding that
   * node (a body lives and dies with it, and its nodes' resources are kept alive by it).
   */
  readonly owner: Graph;
  /** Host nodes in this graph (and its bodies and child graphs): a launch then counts as a pending callback. @internal */
  hostNodes = 0;

  private constructor(handle: drv.CUgraph, context: Context, holder?: CaptureHolder, owner?: Graph) {
    // A conditional body is owned by its node: nothing to destroy, and nothing keeps its owner alive
    // (every call checks the owner instead, so a closed owner makes its bodies unusable).
    super(owner ? 'Graph (conditional body)' : 'Graph', owner ? undefined : () => whenNoHostFuncs(() => drv.release(context, 'cuGraphDestroy', handle)), owner ? undefined : [context]);
    this.handle = handle;
    this.context = context;
    this.owner = owner ?? this;
    if (holder !== undefined) {
      this.core.hold(holder.core);
      holder.core.close(); // destroyed (releasing what it holds) with the graph
    }
  }

  /** Keeps `core` alive as long as the owning graph. */
  private keep(core: Core | undefined): void {
    if (core !== undefined) this.owner.core.hold(core);
  }

  private countHostNodes(n: number): void {
    for (let g: Graph = this; ; g = g.owner) {
      g.hostNodes += n;
      if (g.owner === g) break;
    }
  }

  /** An empty graph. */
  static create(context?: Context): Graph {
    const ctx = contextOf(context, 'Graph.create: context');
    drv.call(ctx, 'cuGraphCreate', drv.out64, 0);
    return new Graph(drv.outNumber() as drv.CUgraph, ctx);
  }

  /**
   * Takes ownership of a graph handle (from Stream.endCaptureHandle, or the typed layer). A graph
   * captured through Stream.beginCapture/endCaptureHandle gets what its work used with it.
   */
  static adopt(handle: drv.CUgraph, context?: Context): Graph {
    if (typeof handle !== 'number' || !Number.isSafeInteger(handle) || handle <= 0) throw new TypeError(`Graph.adopt: handle must be a CUgraph handle (a positive safe integer), got ${describe(handle)}`);
    return new Graph(handle, contextOf(context, 'Graph.adopt: context'), takeHolder(handle));
  }

  /**
   * Captures the work `fn` enqueues on `stream` into a new graph, which keeps alive every kernel,
   * buffer and stream that work used. The stream must not be a default stream. If `fn` throws, capture
   * is ended and the partial graph destroyed.
   */
  static capture(stream: Stream, fn: (stream: Stream) => void, mode: drv.CUstreamCaptureMode = drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL): Graph {
    if (!(stream instanceof Stream)) throw new TypeError(`Graph.capture: stream must be a Stream, got ${describe(stream)}`);
    if (typeof fn !== 'function') throw new TypeError(`Graph.capture: fn must be a function, got ${describe(fn)}`);
    stream.beginCapture(mode);
    try {
      const r = fn(stream) as unknown;
      if (r instanceof Promise) throw new TypeError('Graph.capture: the capture function must be synchronous (use captureAsync)');
    } catch (e) {
      Graph.abandon(stream);
      throw e;
    }
    return Graph.endCapture(stream);
  }

  /** Like capture(), for a capture function that awaits (it must not enqueue on other streams unless they join). */
  static async captureAsync(stream: Stream, fn: (stream: Stream) => Promise<void>, mode: drv.CUstreamCaptureMode = drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED): Promise<Graph> {
    if (!(stream instanceof Stream)) throw new TypeError(`Graph.captureAsync: stream must be a Stream, got ${describe(stream)}`);
    if (typeof fn !== 'function') throw new TypeError(`Graph.captureAsync: fn must be a function, got ${describe(fn)}`);
    stream.beginCapture(mode);
    try {
      await fn(stream);
    } catch (e) {
      Graph.abandon(stream);
      throw e;
    }
    return Graph.endCapture(stream);
  }

  private static endCapture(stream: Stream): Graph {
    const handle = stream.endCaptureHandle();
    return new Graph(handle, stream.context, takeHolder(handle));
  }

  private static abandon(stream: Stream): void {
    try {
      const h = stream.endCaptureHandle();
      takeHolder(h)?.core.close();
      if (h) drv.release(stream.context, 'cuGraphDestroy', h);
    } catch {
      /* the capture was invalidated: nothing to free */
    }
  }

  /** @internal */
  check(): void {
    this.assertOpen();
    if (this.owner !== this) this.owner.check();
    this.context.check();
  }

  /** The dependency handles of an add* call (nodes of this graph). */
  private deps(where: string, dependencies: unknown): BigUint64Array | null {
    if (!Array.isArray(dependencies)) throw new TypeError(`${where}: dependencies must be an array of GraphNode, got ${describe(dependencies)}`);
    if (dependencies.length === 0) return null;
    return new BigUint64Array(dependencies.map((d) => BigInt(this.ownNode(`${where}: dependencies`, d).handle)));
  }

  private node(handle: number, type: drv.CUgraphNodeType): GraphNode {
    const node = { handle: handle as drv.CUgraphNode, type };
    nodeOwners.set(node, this);
    return node;
  }

  /** Adds a node that does nothing (a join point for dependencies) after `dependencies`. */
  addEmptyNode(dependencies: readonly GraphNode[]): GraphNode {
    this.check();
    const deps = this.deps('Graph.addEmptyNode', dependencies);
    drv.call(this.context, 'cuGraphAddEmptyNode', drv.out64, this.handle, deps, deps?.length ?? 0);
    return this.node(drv.outNumber(), NT.CU_GRAPH_NODE_TYPE_EMPTY);
  }

  /**
   * Adds a node copying `byteLength` bytes (default: the rest of `src` after `srcOffset`) from `src` to
   * `dst`: DeviceBuffers, PinnedHostBuffers or graph allocations. The graph keeps both buffers alive.
   */
  addMemcpyNode(dependencies: readonly GraphNode[], dst: GraphCopyEndpoint, src: GraphCopyEndpoint, options?: GraphCopyOptions): GraphNode {
    const where = 'Graph.addMemcpyNode';
    this.check();
    const deps = this.deps(where, dependencies);
    const { bytes, cores } = encodeMemcpy(where, dst, src, options);
    drv.call(this.context, 'cuGraphAddMemcpyNode', drv.out64, this.handle, deps, deps?.length ?? 0, bytes, this.context.handle);
    const node = this.node(drv.outNumber(), NT.CU_GRAPH_NODE_TYPE_MEMCPY);
    cores.forEach((c) => this.keep(c));
    return node;
  }

  /**
   * Adds a node setting `count` elements of `width` bytes (default: all of `dst`) to `value`, in a
   * DeviceBuffer or a graph allocation. The graph keeps the buffer alive.
   */
  addMemsetNode(dependencies: readonly GraphNode[], dst: DeviceBuffer | GraphAllocation, value: number, options?: GraphMemsetOptions): GraphNode {
    const where = 'Graph.addMemsetNode';
    this.check();
    const deps = this.deps(where, dependencies);
    const { bytes, core } = encodeMemset(where, dst, value, options);
    drv.call(this.context, 'cuGraphAddMemsetNode', drv.out64, this.handle, deps, deps?.length ?? 0, bytes, this.context.handle);
    const node = this.node(drv.outNumber(), NT.CU_GRAPH_NODE_TYPE_MEMSET);
    this.keep(core);
    return node;
  }

  /**
   * Adds a node running `fn` on the JS event loop each time the graph runs (after `dependencies`;
   * the graph waits for it). `fn` must not call CUDA. While a launch of a graph with host nodes is in
   * flight, blocking waits throw HostCallbackPendingError: wait with `await stream.synchronized()`.
   * What `fn` throws is reported by the stream the graph was launched on (its next call, or
   * synchronized()). Not allowed inside conditional bodies (a driver rule).
   */
  addHostNode(dependencies: readonly GraphNode[], fn: () => void): GraphNode {
    const where = 'Graph.addHostNode';
    this.check();
    const deps = this.deps(where, dependencies);
    const f = checkFn(where, fn);
    const reg = registerHostFn(f);
    try {
      drv.call(this.context, 'cuGraphAddHostNode', drv.out64, this.handle, deps, deps?.length ?? 0, hostNodeParams(reg.id));
    } catch (e) {
      reg.core.close();
      throw e;
    }
    const node = this.node(drv.outNumber(), NT.CU_GRAPH_NODE_TYPE_HOST);
    this.keep(reg.core);
    reg.core.close(); // freed with the graph
    this.countHostNodes(1);
    return node;
  }

  /** Adds a node recording `event` (of this graph's context); the graph keeps the event alive. */
  addEventRecordNode(dependencies: readonly GraphNode[], event: Event): GraphNode {
    const where = 'Graph.addEventRecordNode';
    this.check();
    const deps = this.deps(where, dependencies);
    const ev = checkEvent(where, event, this.context);
    drv.call(this.context, 'cuGraphAddEventRecordNode', drv.out64, this.handle, deps, deps?.length ?? 0, ev.handle);
    this.keep(ev.core);
    return this.node(drv.outNumber(), NT.CU_GRAPH_NODE_TYPE_EVENT_RECORD);
  }

  /** Adds a node waiting for `event`'s last record (in or outside the graph); the graph keeps the event alive. */
  addEventWaitNode(dependencies: readonly GraphNode[], event: Event): GraphNode {
    const where = 'Graph.addEventWaitNode';
    this.check();
    const deps = this.deps(where, dependencies);
    const ev = checkEvent(where, event, this.context);
    drv.call(this.context, 'cuGraphAddEventWaitNode', drv.out64, this.handle, deps, deps?.length ?? 0, ev.handle);
    this.keep(ev.core);
    return this.node(drv.outNumber(), NT.CU_GRAPH_NODE_TYPE_WAIT_EVENT);
  }

  /**
   * Adds a node running a copy of `child` (the driver clones it now: later changes to `child` do not
   * show, and `child` may be closed). This graph keeps alive what `child`'s nodes use.
   */
  addChildGraphNode(dependencies: readonly GraphNode[], child: Graph): GraphNode {
    const where = 'Graph.addChildGraphNode';
    this.check();
    const deps = this.deps(where, dependencies);
    const g = checkGraph(where, child);
    if (g.context !== this.context) throw new TypeError(`${where}: the child graph belongs to ${String(g.context)}, this graph to ${String(this.context)}`);
    drv.call(this.context, 'cuGraphAddChildGraphNode', drv.out64, this.handle, deps, deps?.length ?? 0, g.handle);
    for (const p of g.owner.core.parents) this.keep(p);
    if (g.hostNodes > 0) this.countHostNodes(g.hostNodes);
    return this.node(drv.outNumber(), NT.CU_GRAPH_NODE_TYPE_GRAPH);
  }

  /**
   * Adds a node allocating `byteLength` bytes of device memory on this graph's device (a graph
   * allocation: its address is fixed when the node is added, valid from this node until a
   * {@link Graph.addMemFreeNode} of it, or until the next launch of the graph when it is not freed in it).
   */
  addMemAllocNode(dependencies: readonly GraphNode[], byteLength: number): GraphAllocation {
    const where = 'Graph.addMemAllocNode';
    this.check();
    const deps = this.deps(where, dependencies);
    const n = checkSize(`${where}: byteLength`, byteLength);
    if (n === 0) throw new RangeError(`${where}: byteLength must be at least 1`);
    const bytes = new Uint8Array(120); // CUDA_MEM_ALLOC_NODE_PARAMS_v1
    const dv = new DataView(bytes.buffer);
    dv.setInt32(0, drv.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED, true); // poolProps.allocType
    dv.setInt32(8, drv.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, true); // poolProps.location.type
    dv.setInt32(12, this.context.device, true); // poolProps.location.id
    dv.setBigUint64(104, BigInt(n), true); // bytesize
    drv.call(this.context, 'cuGraphAddMemAllocNode', drv.out64, this.handle, deps, deps?.length ?? 0, bytes);
    const node = this.node(drv.outNumber(), NT.CU_GRAPH_NODE_TYPE_MEM_ALLOC);
    const allocation: GraphAllocation = Object.freeze({ node, address: Number(dv.getBigUint64(112, true)) as drv.CUdeviceptr, byteLength: n });
    allocations.add(allocation);
    return allocation;
  }

  /** Adds a node freeing a graph allocation (made by this graph's addMemAllocNode, or in another graph). */
  addMemFreeNode(dependencies: readonly GraphNode[], allocation: GraphAllocation): GraphNode {
    const where = 'Graph.addMemFreeNode';
    this.check();
    const deps = this.deps(where, dependencies);
    if (!isAllocation(allocation)) throw new TypeError(`${where}: allocation must be a GraphAllocation (from Graph.addMemAllocNode), got ${describe(allocation)}`);
    drv.call(this.context, 'cuGraphAddMemFreeNode', drv.out64, this.handle, deps, deps?.length ?? 0, allocation.address);
    return this.node(drv.outNumber(), NT.CU_GRAPH_NODE_TYPE_MEM_FREE);
  }

  /**
   * Creates a conditional handle in this graph (cuGraphConditionalHandleCreate). With `defaultValue`,
   * the handle takes that value at the start of every launch; without it, it keeps the value it had.
   */
  createConditional(options: { defaultValue?: number } = {}): GraphConditional {
    const where = 'Graph.createConditional';
    this.check();
    const o = optionsObject(where, options, ['defaultValue']);
    const dflt = o.defaultValue;
    if (dflt !== undefined && (typeof dflt !== 'number' || !Number.isInteger(dflt) || dflt < 0 || dflt > 0xffffffff)) throw new RangeError(`${where}: defaultValue must be a 32-bit unsigned integer, got ${describe(dflt)}`);
    const value = new BigUint64Array(1);
    drv.call(this.context, 'cuGraphConditionalHandleCreate', value, this.handle, this.context.handle, dflt ?? 0, dflt === undefined ? 0 : drv.CU_GRAPH_COND_ASSIGN_DEFAULT);
    return new GraphConditional(value[0], this, dflt as number | undefined);
  }

  /**
   * Adds a conditional node (cuGraphAddNode with CU_GRAPH_NODE_TYPE_CONDITIONAL) and returns its body
   * graphs, filled by the caller: `'if'` runs bodies[0] when the handle is non-zero (with `size: 2`,
   * bodies[1] when it is zero), `'while'` runs bodies[0] while it is non-zero (checked before each
   * iteration), `'switch'` runs bodies[value] (none when value ≥ size). Bodies may hold kernel, empty,
   * memcpy, memset, child-graph and conditional nodes.
   */
  addConditionalNode(dependencies: readonly GraphNode[], conditional: GraphConditional, type: 'if' | 'while' | 'switch', size = 1): ConditionalNode {
    const where = 'Graph.addConditionalNode';
    this.check();
    const deps = this.deps(where, dependencies);
    if (!(conditional instanceof GraphConditional)) throw new TypeError(`${where}: conditional must be a GraphConditional (from Graph.createConditional), got ${describe(conditional)}`);
    if (conditional.graph !== this) throw new TypeError(`${where}: the conditional handle was created in another graph`);
    if (!Object.prototype.hasOwnProperty.call(COND_TYPES, type)) throw new TypeError(`${where}: type must be 'if', 'while' or 'switch', got ${describe(type)}`);
    const maxSize = type === 'while' ? 1 : type === 'if' ? 2 : 0xffff;
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > maxSize) throw new RangeError(`${where}: size must be an integer from 1 to ${maxSize} for '${type}', got ${describe(size)}`);
    const params = new Uint8Array(256); // CUgraphNodeParams
    const dv = new DataView(params.buffer);
    dv.setInt32(0, NT.CU_GRAPH_NODE_TYPE_CONDITIONAL, true);
    dv.setBigUint64(16, conditional.value, true); // conditional.handle
    dv.setInt32(24, COND_TYPES[type], true);
    dv.setUint32(28, size, true);
    dv.setBigUint64(40, BigInt(this.context.handle), true); // conditional.ctx
    drv.call(this.context, 'cuGraphAddNode', drv.out64, this.handle, deps, null, deps?.length ?? 0, params);
    const node = this.node(drv.outNumber(), NT.CU_GRAPH_NODE_TYPE_CONDITIONAL);
    const out = dv.getBigUint64(32, true); // phGraph_out: the driver's array of `size` body graphs
    if (out === 0n) throw new Error(`${where}: the driver returned no body graphs`);
    const handles = new BigUint64Array(koffi.view(out, 8 * size).slice(0));
    const bodies = Array.from(handles, (h) => new Graph(Number(h) as drv.CUgraph, this.context, undefined, this.owner));
    return { node, bodies };
  }

  /** Adds an 'if' node: `then` runs when the handle is non-zero; with `{ else: true }`, `else` when it is zero (CUDA 12.8+). */
  addIfNode(dependencies: readonly GraphNode[], conditional: GraphConditional, options: { else?: boolean } = {}): { node: GraphNode; then: Graph; else: Graph | undefined } {
    const o = optionsObject('Graph.addIfNode', options, ['else']);
    if (o.else !== undefined && typeof o.else !== 'boolean') throw new TypeError(`Graph.addIfNode: else must be a boolean, got ${describe(o.else)}`);
    const { node, bodies } = this.addConditionalNode(dependencies, conditional, 'if', o.else ? 2 : 1);
    return { node, then: bodies[0], else: bodies[1] };
  }

  /** Adds a 'while' node: `body` runs again and again while the handle is non-zero (set it from a kernel in the body). */
  addWhileNode(dependencies: readonly GraphNode[], conditional: GraphConditional): { node: GraphNode; body: Graph } {
    const { node, bodies } = this.addConditionalNode(dependencies, conditional, 'while', 1);
    return { node, body: bodies[0] };
  }

  /** Adds a 'switch' node with `cases` bodies: `cases[v]` runs when the handle is v (none when v ≥ cases). */
  addSwitchNode(dependencies: readonly GraphNode[], conditional: GraphConditional, cases: number): { node: GraphNode; cases: readonly Graph[] } {
    const { node, bodies } = this.addConditionalNode(dependencies, conditional, 'switch', cases);
    return { node, cases: bodies };
  }

  /** Adds the edges `from[i] → to[i]` (the arrays have the same length). */
  addDependencies(from: readonly GraphNode[], to: readonly GraphNode[]): void {
    const where = 'Graph.addDependencies';
    this.check();
    if (!Array.isArray(from) || !Array.isArray(to)) throw new TypeError(`${where}: from and to must be arrays of GraphNode`);
    if (from.length !== to.length) throw new RangeError(`${where}: from has ${from.length} node(s), to ${to.length}: they pair up one to one`);
    if (from.length === 0) return;
    const f = new BigUint64Array(from.map((n) => BigInt(this.ownNode(`${where}: from`, n).handle)));
    const t = new BigUint64Array(to.map((n) => BigInt(this.ownNode(`${where}: to`, n).handle)));
    drv.call(this.context, 'cuGraphAddDependencies', this.handle, f, t, null, f.length);
  }

  /**
   * A copy of this graph (cuGraphClone), owning its own handle and keeping alive what this graph's
   * nodes use. Find a node's copy with {@link Graph.findInClone}.
   */
  clone(): Graph {
    this.check();
    if (this.owner !== this) throw new TypeError('Graph.clone: a conditional body cannot be cloned on its own: clone the graph that owns it');
    drv.call(this.context, 'cuGraphClone', drv.out64, this.handle);
    const copy = new Graph(drv.outNumber() as drv.CUgraph, this.context);
    for (const p of this.core.parents) copy.core.hold(p);
    copy.hostNodes = this.hostNodes;
    return copy;
  }

  /** The node of this graph (a clone) that is the copy of `original`, a node of the graph it was cloned from. */
  findInClone(original: GraphNode): GraphNode {
    this.check();
    const n = checkNode('Graph.findInClone', original);
    drv.call(this.context, 'cuGraphNodeFindInClone', drv.out64, n.handle, this.handle);
    return this.node(drv.outNumber(), n.type);
  }

  /** Writes the graph as Graphviz DOT to `path` (cuGraphDebugDotPrint); `verbose` adds every node's parameters. */
  writeDot(path: string, options: { verbose?: boolean } = {}): void {
    this.check();
    if (typeof path !== 'string' || path.length === 0 || path.includes('\0')) throw new TypeError(`Graph.writeDot: path must be a non-empty string, got ${describe(path)}`);
    const o = optionsObject('Graph.writeDot', options, ['verbose']);
    if (o.verbose !== undefined && typeof o.verbose !== 'boolean') throw new TypeError(`Graph.writeDot: verbose must be a boolean, got ${describe(o.verbose)}`);
    drv.call(this.context, 'cuGraphDebugDotPrint', this.handle, path, o.verbose ? drv.CUgraphDebugDot_flags.CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE : 0);
  }

  /** All nodes. */
  nodes(): GraphNode[] {
    this.check();
    const count = new BigUint64Array(1);
    drv.call(this.context, 'cuGraphGetNodes', this.handle, null, count);
    const n = Number(count[0]);
    if (n === 0) return [];
    const handles = new BigUint64Array(n);
    drv.call(this.context, 'cuGraphGetNodes', this.handle, handles, count);
    return Array.from(handles.subarray(0, Number(count[0])), (h) => {
      const handle = Number(h) as drv.CUgraphNode;
      drv.call(this.context, 'cuGraphNodeGetType', handle, drv.out32);
      const node = { handle, type: drv.out32[0] as drv.CUgraphNodeType };
      nodeOwners.set(node, this);
      return node;
    });
  }

  /** The kernel nodes, in the driver's node order. */
  kernelNodes(): GraphNode[] {
    return this.nodes().filter((n) => n.type === drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL);
  }

  private ownNode(where: string, node: unknown): GraphNode {
    const n = checkNode(where, node);
    const owner = nodeOwners.get(n);
    if (owner !== undefined && owner !== this) throw new TypeError(`${where}: the node belongs to another graph`);
    return n;
  }

  /** Changes a kernel node's kernel, launch configuration and arguments in this (template) graph. */
  setKernelNodeParams(node: GraphNode, config: LaunchConfig | LaunchConfigInit, kernel: Kernel, ...args: unknown[]): void {
    this.check();
    const n = this.ownNode('Graph.setKernelNodeParams', node);
    const k = checkKernel('Graph.setKernelNodeParams', kernel);
    k.check();
    const cfg = config instanceof LaunchConfig ? config : new LaunchConfig(config);
    const pack = packFor(k, args, `graph kernel node ${k.name}`);
    holdKernelNode(this.owner.core, k, args);
    drv.call(this.context, 'cuGraphKernelNodeSetParams', n.handle, encodeKernelNodeParams(k, cfg, pack));
  }

  /** Adds a kernel node after `dependencies`. */
  addKernelNode(dependencies: readonly GraphNode[], config: LaunchConfig | LaunchConfigInit, kernel: Kernel, ...args: unknown[]): GraphNode {
    this.check();
    if (!Array.isArray(dependencies)) throw new TypeError(`Graph.addKernelNode: dependencies must be an array of GraphNode, got ${describe(dependencies)}`);
    const deps = new BigUint64Array(dependencies.map((d) => BigInt(this.ownNode('Graph.addKernelNode: dependencies', d).handle)));
    const k = checkKernel('Graph.addKernelNode', kernel);
    k.check();
    const cfg = config instanceof LaunchConfig ? config : new LaunchConfig(config);
    const pack = packFor(k, args, `graph kernel node ${k.name}`);
    if (k.module.context !== this.context) throw new TypeError(`Graph.addKernelNode: the kernel belongs to ${String(k.module.context)}, the graph to ${String(this.context)}`);
    holdKernelNode(this.owner.core, k, args);
    drv.call(this.context, 'cuGraphAddKernelNode', drv.out64, this.handle, deps.length ? deps : null, deps.length, encodeKernelNodeParams(k, cfg, pack));
    return this.node(drv.outNumber(), drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL);
  }

  /** Instantiates an executable graph; it keeps this graph (and what it uses) alive. */
  instantiate(flags = 0): GraphExec {
    this.check();
    if (this.owner !== this) throw new TypeError('Graph.instantiate: a conditional body runs as part of the graph that owns it: instantiate that graph');
    if (!Number.isSafeInteger(flags) || flags < 0) throw new RangeError(`Graph.instantiate: flags must be a non-negative integer (CUgraphInstantiate_flags), got ${describe(flags)}`);
    drv.call(this.context, 'cuGraphInstantiateWithFlags', drv.out64, this.handle, flags);
    return new GraphExec(drv.outNumber() as drv.CUgraphExec, this);
  }
}

/**
 * An executable graph (from {@link Graph.instantiate}): launched on a stream as one unit. It keeps its
 * graph, and every kernel, buffer and stream the graph uses, alive until closed. Free with close() or `using`.
 */
export class GraphExec extends Resource {
  /** The driver handle (CUgraphExec). */
  readonly handle: drv.CUgraphExec;
  /** The graph it was instantiated from. */
  readonly graph: Graph;
  /** The context it belongs to. */
  readonly context: Context;

  /** Host nodes of the graph(s) it runs: each launch then counts as a pending JS callback. @internal */
  hostNodes: number;

  /** @internal use Graph.instantiate */
  constructor(handle: drv.CUgraphExec, graph: Graph) {
    const context = graph.context;
    super('GraphExec', () => whenNoHostFuncs(() => drv.release(context, 'cuGraphExecDestroy', handle)), [context, graph]);
    this.handle = handle;
    this.graph = graph;
    this.context = context;
    this.hostNodes = graph.hostNodes;
  }

  private stream(where: string, stream: StreamLike | undefined): number {
    this.assertOpen();
    this.context.check();
    const s = toStream(stream, `${where}: stream`);
    if (s === undefined) return 0;
    if (s.context !== this.context) throw new TypeError(`${where}: the stream belongs to ${String(s.context)}, the graph to ${String(this.context)}`);
    return s.handle;
  }

  /**
   * Launches the executable graph on `stream` (default: the legacy default stream). For a graph with
   * host nodes, a host function follows the launch on the stream: until it has run, the launch counts
   * as a pending JS callback (blocking waits throw HostCallbackPendingError: use `await
   * stream.synchronized()`), and it reports what a host node threw to the stream.
   */
  launch(stream?: StreamLike): void {
    const h = this.stream('GraphExec.launch', stream);
    drv.callOnStream(this.context, h, 'cuGraphLaunch', this.handle, h);
    if (this.hostNodes > 0) (toStream(stream, 'GraphExec.launch: stream') ?? Stream.legacyDefault(this.context)).launchHostFunc(settleHostNodes);
  }

  private ownNode(where: string, node: unknown): GraphNode {
    this.assertOpen();
    this.context.check();
    const n = checkNode(where, node);
    const owner = nodeOwners.get(n);
    if (owner !== undefined && owner.owner !== this.graph) throw new TypeError(`${where}: the node belongs to another graph`);
    return n;
  }

  private ofType(where: string, n: GraphNode, ...types: drv.CUgraphNodeType[]): void {
    if (!types.includes(n.type)) throw new TypeError(`${where}: the node is a ${drv.CUgraphNodeType[n.type] ?? n.type} node, not ${types.map((t) => drv.CUgraphNodeType[t]).join(' or ')}`);
  }

  /** Changes a memcpy node's source, destination and size in this executable graph (same kinds of memory as before). */
  setMemcpyNodeParams(node: GraphNode, dst: GraphCopyEndpoint, src: GraphCopyEndpoint, options?: GraphCopyOptions): void {
    const where = 'GraphExec.setMemcpyNodeParams';
    const n = this.ownNode(where, node);
    this.ofType(where, n, NT.CU_GRAPH_NODE_TYPE_MEMCPY);
    const { bytes, cores } = encodeMemcpy(where, dst, src, options);
    drv.call(this.context, 'cuGraphExecMemcpyNodeSetParams', this.handle, n.handle, bytes, this.context.handle);
    cores.forEach((c) => this.core.hold(c));
  }

  /** Changes a memset node's destination, value and extent in this executable graph. */
  setMemsetNodeParams(node: GraphNode, dst: DeviceBuffer | GraphAllocation, value: number, options?: GraphMemsetOptions): void {
    const where = 'GraphExec.setMemsetNodeParams';
    const n = this.ownNode(where, node);
    this.ofType(where, n, NT.CU_GRAPH_NODE_TYPE_MEMSET);
    const { bytes, core } = encodeMemset(where, dst, value, options);
    drv.call(this.context, 'cuGraphExecMemsetNodeSetParams', this.handle, n.handle, bytes, this.context.handle);
    if (core !== undefined) this.core.hold(core);
  }

  /** Changes the function a host node runs in this executable graph. */
  setHostNodeFunction(node: GraphNode, fn: () => void): void {
    const where = 'GraphExec.setHostNodeFunction';
    const n = this.ownNode(where, node);
    this.ofType(where, n, NT.CU_GRAPH_NODE_TYPE_HOST);
    const reg = registerHostFn(checkFn(where, fn));
    try {
      drv.call(this.context, 'cuGraphExecHostNodeSetParams', this.handle, n.handle, hostNodeParams(reg.id));
    } finally {
      this.core.hold(reg.core);
      reg.core.close();
    }
  }

  /** Changes the event an event-record or event-wait node uses in this executable graph. */
  setEventNodeEvent(node: GraphNode, event: Event): void {
    const where = 'GraphExec.setEventNodeEvent';
    const n = this.ownNode(where, node);
    this.ofType(where, n, NT.CU_GRAPH_NODE_TYPE_EVENT_RECORD, NT.CU_GRAPH_NODE_TYPE_WAIT_EVENT);
    const ev = checkEvent(where, event, this.context);
    drv.call(this.context, n.type === NT.CU_GRAPH_NODE_TYPE_EVENT_RECORD ? 'cuGraphExecEventRecordNodeSetEvent' : 'cuGraphExecEventWaitNodeSetEvent', this.handle, n.handle, ev.handle);
    this.core.hold(ev.core);
  }

  /** Replaces a child-graph node's graph with `child` (same topology as the one it was made with). */
  setChildGraphNodeParams(node: GraphNode, child: Graph): void {
    const where = 'GraphExec.setChildGraphNodeParams';
    const n = this.ownNode(where, node);
    this.ofType(where, n, NT.CU_GRAPH_NODE_TYPE_GRAPH);
    const g = checkGraph(where, child);
    drv.call(this.context, 'cuGraphExecChildGraphNodeSetParams', this.handle, n.handle, g.handle);
    for (const p of g.owner.core.parents) this.core.hold(p);
    this.hostNodes += g.hostNodes;
  }

  /** Enables or disables a node (kernel, memcpy or memset) in this executable graph: a disabled node does nothing. */
  setNodeEnabled(node: GraphNode, enabled: boolean): void {
    const where = 'GraphExec.setNodeEnabled';
    const n = this.ownNode(where, node);
    if (typeof enabled !== 'boolean') throw new TypeError(`${where}: enabled must be a boolean, got ${describe(enabled)}`);
    drv.call(this.context, 'cuGraphNodeSetEnabled', this.handle, n.handle, enabled ? 1 : 0);
  }

  /** True when the node is enabled in this executable graph. */
  nodeEnabled(node: GraphNode): boolean {
    const n = this.ownNode('GraphExec.nodeEnabled', node);
    drv.call(this.context, 'cuGraphNodeGetEnabled', this.handle, n.handle, drv.out32);
    return drv.out32[0] !== 0;
  }

  /** Uploads the graph to the device ahead of its first launch. */
  upload(stream?: StreamLike): void {
    const h = this.stream('GraphExec.upload', stream);
    drv.callOnStream(this.context, h, 'cuGraphUpload', this.handle, h);
  }

  /** Updates a kernel node's kernel, launch configuration and arguments in this instantiated graph. */
  setKernelNodeParams(node: GraphNode, config: LaunchConfig | LaunchConfigInit, kernel: Kernel, ...args: unknown[]): void {
    this.assertOpen();
    this.context.check();
    const n = checkNode('GraphExec.setKernelNodeParams', node);
    const owner = nodeOwners.get(n);
    if (owner !== undefined && owner.owner !== this.graph) throw new TypeError('GraphExec.setKernelNodeParams: the node belongs to another graph');
    const k = checkKernel('GraphExec.setKernelNodeParams', kernel);
    k.check();
    const cfg = config instanceof LaunchConfig ? config : new LaunchConfig(config);
    const pack = packFor(k, args, `graph kernel node ${k.name}`);
    holdKernelNode(this.core, k, args);
    drv.call(this.context, 'cuGraphExecKernelNodeSetParams', this.handle, n.handle, encodeKernelNodeParams(k, cfg, pack));
  }

  /** Updates this executable graph from a topologically identical graph (cuGraphExecUpdate); it then keeps that graph alive too. */
  update(graph: Graph): void {
    this.assertOpen();
    if (!(graph instanceof Graph)) throw new TypeError(`GraphExec.update: graph must be a Graph, got ${describe(graph)}`);
    graph.check();
    drv.call(this.context, 'cuGraphExecUpdate', this.handle, graph.handle, new Uint8Array(24)); // CUgraphExecUpdateResultInfo
    this.core.hold(graph.core);
    this.hostNodes = Math.max(this.hostNodes, graph.hostNodes);
  }
}
