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
import { Context, contextOf } from '../context';
import { describe } from '../describe';
import { OBJECTS_ERROR, ObjectsError } from '../errors';
import { Core, Resource, checkSize, whenNoHostFuncs } from '../lifecycle';
import { encodeKernelNodeParams, packFor } from '../launch';
import { LaunchConfig, type LaunchConfigInit } from '../launch-config';
import type { Kernel } from '../module';
import type { DeviceBuffer } from '../memory/device-buffer';
import { Stream } from '../stream';
import type { Event } from '../event';
import { takeHolder, type CaptureHolder } from './capture';
import { COND_TYPES, GraphConditional, type ConditionalNode } from './conditional';
import { GraphExec } from './graph-exec';
import {
  NT,
  allocations,
  checkEvent,
  checkFn,
  checkGraph,
  checkKernel,
  checkNode,
  encodeMemcpy,
  encodeMemset,
  graphBrand,
  holdKernelNode,
  hostNodeParams,
  isAllocation,
  nodeOwners,
  optionsObject,
  registerHostFn,
  type GraphAllocation,
  type GraphCopyEndpoint,
  type GraphCopyOptions,
  type GraphMemsetOptions,
  type GraphNode,
} from './nodes';
import { SEALED, type Sealed, checkSealed } from '../sealed';

/**
 * A CUDA graph (template): built by stream capture or node by node, then instantiated as a
 * {@link GraphExec} to launch. Free with close() or `using`.
 * @example
 * ```ts
 * import { DeviceBuffer, Graph, LaunchConfig, Program, Stream, launch } from 'cuda-ts/objects';
 *
 * using program = new Program('extern "C" __global__ void inc(int* p) { p[threadIdx.x] += 1; }').compile();
 * using module = program.load();
 * using inc = module.kernel('inc', ['ptr']);
 * using stream = Stream.create();
 * using counter = DeviceBuffer.from(new Int32Array(32));
 * using graph = Graph.capture(stream, (s) => {
 *   launch(s, LaunchConfig.linear(32), inc, counter);
 *   launch(s, LaunchConfig.linear(32), inc, counter);
 * }); // the two launches, recorded rather than run
 * using exec = graph.instantiate(); // a GraphExec: replayed as one unit
 * for (let i = 0; i < 100; i++) exec.launch(stream);
 * console.log(counter.toArray(Int32Array, { stream })[0]); // 200
 * ```
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

  private constructor(seal: Sealed, handle: drv.CUgraph, context: Context, holder?: CaptureHolder, owner?: Graph) {
    checkSealed(seal, 'Graph', 'Graph.create() or Graph.capture()');
    // A conditional body is owned by its node: nothing to destroy, and nothing keeps its owner alive
    // (every call checks the owner instead, so a closed owner makes its bodies unusable).
    super(
      owner ? 'Graph (conditional body)' : 'Graph',
      owner ? undefined : () => whenNoHostFuncs(() => drv.release(context, 'cuGraphDestroy', handle)),
      owner ? undefined : [context],
    );
    this.handle = handle;
    this.context = context;
    this.owner = owner ?? this;
    graphBrand.mark(this);
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

  /**
   * An empty graph.
   * @param context The context the graph belongs to (default: the current one, else device 0's primary context).
   */
  static create(context?: Context): Graph {
    const ctx = contextOf(context, 'Graph.create: context');
    drv.call(ctx, 'cuGraphCreate', drv.out64, 0);
    return new Graph(SEALED, drv.outNumber() as drv.CUgraph, ctx);
  }

  /**
   * Takes ownership of a graph handle (from Stream.endCaptureHandle, or the typed layer). A graph
   * captured through Stream.beginCapture/endCaptureHandle gets what its work used with it.
   * @param handle The raw CUgraph to own (from Stream.endCaptureHandle or the typed layer).
   * @param context The context the graph belongs to (default: the current one).
   */
  static adopt(handle: drv.CUgraph, context?: Context): Graph {
    if (typeof handle !== 'number' || !Number.isSafeInteger(handle) || handle <= 0)
      throw new TypeError(`Graph.adopt: handle must be a CUgraph handle (a positive safe integer), got ${describe(handle)}`);
    return new Graph(SEALED, handle, contextOf(context, 'Graph.adopt: context'), takeHolder(handle));
  }

  /**
   * Captures the work `fn` enqueues on `stream` into a new graph, which keeps alive every kernel,
   * buffer and stream that work used. The stream must not be a default stream. If `fn` throws, capture
   * is ended and the partial graph destroyed.
   * @param stream A created stream (not a default stream) to capture on.
   * @param fn Enqueues the work to capture on the stream it is given; synchronous.
   * @param mode Which CUDA calls of other threads the capture forbids: a CUstreamCaptureMode; default CU_STREAM_CAPTURE_MODE_THREAD_LOCAL.
   */
  static capture(
    stream: Stream,
    fn: (stream: Stream) => void,
    mode: drv.CUstreamCaptureMode = drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
  ): Graph {
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

  /**
   * Like capture(), for a capture function that awaits (it must not enqueue on other streams unless they join).
   * @param stream A created stream (not a default stream) to capture on.
   * @param fn Enqueues the work to capture on the stream it is given, awaiting between enqueues.
   * @param mode A CUstreamCaptureMode; default CU_STREAM_CAPTURE_MODE_RELAXED (the event loop may run other code meanwhile).
   */
  static async captureAsync(
    stream: Stream,
    fn: (stream: Stream) => Promise<void>,
    mode: drv.CUstreamCaptureMode = drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED,
  ): Promise<Graph> {
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
    return new Graph(SEALED, handle, stream.context, takeHolder(handle));
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

  /**
   * Adds a node that does nothing (a join point for dependencies) after `dependencies`.
   * @param dependencies The nodes that must finish before this one runs (empty: a root node).
   */
  addEmptyNode(dependencies: readonly GraphNode[]): GraphNode {
    this.check();
    const deps = this.deps('Graph.addEmptyNode', dependencies);
    drv.call(this.context, 'cuGraphAddEmptyNode', drv.out64, this.handle, deps, deps?.length ?? 0);
    return this.node(drv.outNumber(), NT.CU_GRAPH_NODE_TYPE_EMPTY);
  }

  /**
   * Adds a node copying `byteLength` bytes (default: the rest of `src` after `srcOffset`) from `src` to
   * `dst`: DeviceBuffers, PinnedHostBuffers or graph allocations. The graph keeps both buffers alive.
   * @param dependencies The nodes that must finish before this one runs (empty: a root node).
   * @param dst Where to copy to: a DeviceBuffer, a PinnedHostBuffer or a graph allocation.
   * @param src Where to copy from: a DeviceBuffer, a PinnedHostBuffer or a graph allocation.
   * @param options `byteLength` (bytes to copy; default: the rest of the source after `srcOffset`), `srcOffset` and `dstOffset` (byte offsets; default 0).
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
   * @param dependencies The nodes that must finish before this one runs (empty: a root node).
   * @param dst The memory to set: a DeviceBuffer or a graph allocation.
   * @param value The element value: an integer that fits `width` bytes.
   * @param options `width` (element size: 1, 2 or 4 bytes; default 1), `offset` (byte offset of the first element; default 0) and `count` (elements; default: to the end of `dst`).
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
   * @param dependencies The nodes that must finish before this one runs (empty: a root node).
   * @param fn The function to run on the JS event loop at each launch, with no arguments; it must not call CUDA.
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

  /**
   * Adds a node recording `event` (of this graph's context); the graph keeps the event alive.
   * @param dependencies The nodes that must finish before this one runs (empty: a root node).
   * @param event The event to record, of this graph's context.
   */
  addEventRecordNode(dependencies: readonly GraphNode[], event: Event): GraphNode {
    const where = 'Graph.addEventRecordNode';
    this.check();
    const deps = this.deps(where, dependencies);
    const ev = checkEvent(where, event, this.context);
    drv.call(this.context, 'cuGraphAddEventRecordNode', drv.out64, this.handle, deps, deps?.length ?? 0, ev.handle);
    this.keep(ev.core);
    return this.node(drv.outNumber(), NT.CU_GRAPH_NODE_TYPE_EVENT_RECORD);
  }

  /**
   * Adds a node waiting for `event`'s last record (in or outside the graph); the graph keeps the event alive.
   * @param dependencies The nodes that must finish before this one runs (empty: a root node).
   * @param event The event whose last record to wait for.
   */
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
   * @param dependencies The nodes that must finish before this one runs (empty: a root node).
   * @param child The graph to embed (cloned now).
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
   * @param dependencies The nodes that must finish before this one runs (empty: a root node).
   * @param byteLength Bytes to allocate (a positive integer).
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

  /**
   * Adds a node freeing a graph allocation (made by this graph's addMemAllocNode, or in another graph).
   * @param dependencies The nodes that must finish before this one runs (empty: a root node).
   * @param allocation The graph allocation to free (from addMemAllocNode).
   */
  addMemFreeNode(dependencies: readonly GraphNode[], allocation: GraphAllocation): GraphNode {
    const where = 'Graph.addMemFreeNode';
    this.check();
    const deps = this.deps(where, dependencies);
    if (!isAllocation(allocation))
      throw new TypeError(`${where}: allocation must be a GraphAllocation (from Graph.addMemAllocNode), got ${describe(allocation)}`);
    drv.call(this.context, 'cuGraphAddMemFreeNode', drv.out64, this.handle, deps, deps?.length ?? 0, allocation.address);
    return this.node(drv.outNumber(), NT.CU_GRAPH_NODE_TYPE_MEM_FREE);
  }

  /**
   * Creates a conditional handle in this graph (cuGraphConditionalHandleCreate). With `defaultValue`,
   * the handle takes that value at the start of every launch; without it, it keeps the value it had.
   * @param options `defaultValue`: the value the handle takes at the start of every launch (a 32-bit unsigned integer; default: none, it keeps its last value).
   */
  createConditional(options: { defaultValue?: number } = {}): GraphConditional {
    const where = 'Graph.createConditional';
    this.check();
    const o = optionsObject(where, options, ['defaultValue']);
    const dflt = o.defaultValue;
    if (dflt !== undefined && (typeof dflt !== 'number' || !Number.isInteger(dflt) || dflt < 0 || dflt > 0xffffffff))
      throw new RangeError(`${where}: defaultValue must be a 32-bit unsigned integer, got ${describe(dflt)}`);
    const value = new BigUint64Array(1);
    drv.call(
      this.context,
      'cuGraphConditionalHandleCreate',
      value,
      this.handle,
      this.context.handle,
      dflt ?? 0,
      dflt === undefined ? 0 : drv.CU_GRAPH_COND_ASSIGN_DEFAULT,
    );
    return new GraphConditional(SEALED, value[0], this, dflt as number | undefined);
  }

  /**
   * Adds a conditional node (cuGraphAddNode with CU_GRAPH_NODE_TYPE_CONDITIONAL) and returns its body
   * graphs, filled by the caller: `'if'` runs bodies[0] when the handle is non-zero (with `size: 2`,
   * bodies[1] when it is zero), `'while'` runs bodies[0] while it is non-zero (checked before each
   * iteration), `'switch'` runs bodies[value] (none when value ≥ size). Bodies may hold kernel, empty,
   * memcpy, memset, child-graph and conditional nodes.
   * @param dependencies The nodes that must finish before this one runs (empty: a root node).
   * @param conditional The conditional handle (from createConditional) whose value picks what runs.
   * @param type 'if', 'while' or 'switch'.
   * @param size How many bodies: 1 (the default); 2 for an 'if' with an else; the number of cases for a 'switch'.
   */
  addConditionalNode(dependencies: readonly GraphNode[], conditional: GraphConditional, type: 'if' | 'while' | 'switch', size = 1): ConditionalNode {
    const where = 'Graph.addConditionalNode';
    this.check();
    const deps = this.deps(where, dependencies);
    if (!(conditional instanceof GraphConditional))
      throw new TypeError(`${where}: conditional must be a GraphConditional (from Graph.createConditional), got ${describe(conditional)}`);
    if (conditional.graph !== this) throw new TypeError(`${where}: the conditional handle was created in another graph`);
    if (!Object.prototype.hasOwnProperty.call(COND_TYPES, type)) throw new TypeError(`${where}: type must be 'if', 'while' or 'switch', got ${describe(type)}`);
    const maxSize = type === 'while' ? 1 : type === 'if' ? 2 : 0xffff;
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > maxSize)
      throw new RangeError(`${where}: size must be an integer from 1 to ${maxSize} for '${type}', got ${describe(size)}`);
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
    if (out === 0n) throw new ObjectsError(where, OBJECTS_ERROR.missing, `${where}: the driver returned no body graphs`);
    const handles = new BigUint64Array(koffi.view(out, 8 * size).slice(0));
    const bodies = Array.from(handles, (h) => new Graph(SEALED, Number(h) as drv.CUgraph, this.context, undefined, this.owner));
    return { node, bodies };
  }

  /**
   * Adds an 'if' node: `then` runs when the handle is non-zero; with `{ else: true }`, `else` when it is zero (CUDA 12.8+).
   * @param dependencies The nodes that must finish before this one runs (empty: a root node).
   * @param conditional The conditional handle (from createConditional) whose value picks what runs.
   * @param options `else`: true adds an else body, run when the handle is zero (CUDA 12.8+; default false).
   */
  addIfNode(
    dependencies: readonly GraphNode[],
    conditional: GraphConditional,
    options: { else?: boolean } = {},
  ): { node: GraphNode; then: Graph; else: Graph | undefined } {
    const o = optionsObject('Graph.addIfNode', options, ['else']);
    if (o.else !== undefined && typeof o.else !== 'boolean') throw new TypeError(`Graph.addIfNode: else must be a boolean, got ${describe(o.else)}`);
    const { node, bodies } = this.addConditionalNode(dependencies, conditional, 'if', o.else ? 2 : 1);
    return { node, then: bodies[0], else: bodies[1] };
  }

  /**
   * Adds a 'while' node: `body` runs again and again while the handle is non-zero (set it from a kernel in the body).
   * @param dependencies The nodes that must finish before this one runs (empty: a root node).
   * @param conditional The conditional handle (from createConditional) whose value picks what runs.
   */
  addWhileNode(dependencies: readonly GraphNode[], conditional: GraphConditional): { node: GraphNode; body: Graph } {
    const { node, bodies } = this.addConditionalNode(dependencies, conditional, 'while', 1);
    return { node, body: bodies[0] };
  }

  /**
   * Adds a 'switch' node with `cases` bodies: `cases[v]` runs when the handle is v (none when v ≥ cases).
   * @param dependencies The nodes that must finish before this one runs (empty: a root node).
   * @param conditional The conditional handle (from createConditional) whose value picks what runs.
   * @param cases How many case bodies (a positive integer).
   */
  addSwitchNode(dependencies: readonly GraphNode[], conditional: GraphConditional, cases: number): { node: GraphNode; cases: readonly Graph[] } {
    const { node, bodies } = this.addConditionalNode(dependencies, conditional, 'switch', cases);
    return { node, cases: bodies };
  }

  /**
   * Adds the edges `from[i] → to[i]` (the arrays have the same length).
   * @param from The nodes each edge starts at.
   * @param to The nodes each edge ends at (`to[i]` runs after `from[i]`).
   */
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
    const copy = new Graph(SEALED, drv.outNumber() as drv.CUgraph, this.context);
    for (const p of this.core.parents) copy.core.hold(p);
    copy.hostNodes = this.hostNodes;
    return copy;
  }

  /**
   * The node of this graph (a clone) that is the copy of `original`, a node of the graph it was cloned from.
   * @param original A node of the graph this one was cloned from.
   */
  findInClone(original: GraphNode): GraphNode {
    this.check();
    const n = checkNode('Graph.findInClone', original);
    drv.call(this.context, 'cuGraphNodeFindInClone', drv.out64, n.handle, this.handle);
    return this.node(drv.outNumber(), n.type);
  }

  /**
   * Writes the graph as Graphviz DOT to `path` (cuGraphDebugDotPrint); `verbose` adds every node's parameters.
   * @param path The file to write (created or replaced).
   * @param options `verbose`: true adds every node's parameters (default false).
   */
  writeDot(path: string, options: { verbose?: boolean } = {}): void {
    this.check();
    if (typeof path !== 'string' || path.length === 0 || path.includes('\0'))
      throw new TypeError(`Graph.writeDot: path must be a non-empty string, got ${describe(path)}`);
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

  /**
   * Changes a kernel node's kernel, launch configuration and arguments in this (template) graph.
   * @param node A kernel node of this graph.
   * @param config Grid, block, shared memory and launch attributes: a LaunchConfig or the object one is made from.
   * @param kernel The kernel the node runs from now on.
   * @param args The kernel's arguments, in order, as launch() takes them (checked against the kernel's signature).
   */
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

  /**
   * Adds a kernel node after `dependencies`.
   * @param dependencies The nodes that must finish before this one runs (empty: a root node).
   * @param config Grid, block, shared memory and launch attributes: a LaunchConfig or the object one is made from.
   * @param kernel The kernel to run; the graph keeps it alive.
   * @param args The kernel's arguments, in order, as launch() takes them (checked against the kernel's signature).
   */
  addKernelNode(dependencies: readonly GraphNode[], config: LaunchConfig | LaunchConfigInit, kernel: Kernel, ...args: unknown[]): GraphNode {
    this.check();
    if (!Array.isArray(dependencies)) throw new TypeError(`Graph.addKernelNode: dependencies must be an array of GraphNode, got ${describe(dependencies)}`);
    const deps = new BigUint64Array(dependencies.map((d) => BigInt(this.ownNode('Graph.addKernelNode: dependencies', d).handle)));
    const k = checkKernel('Graph.addKernelNode', kernel);
    k.check();
    const cfg = config instanceof LaunchConfig ? config : new LaunchConfig(config);
    const pack = packFor(k, args, `graph kernel node ${k.name}`);
    if (k.module.context !== this.context)
      throw new TypeError(`Graph.addKernelNode: the kernel belongs to ${String(k.module.context)}, the graph to ${String(this.context)}`);
    holdKernelNode(this.owner.core, k, args);
    drv.call(this.context, 'cuGraphAddKernelNode', drv.out64, this.handle, deps.length ? deps : null, deps.length, encodeKernelNodeParams(k, cfg, pack));
    return this.node(drv.outNumber(), drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL);
  }

  /**
   * Instantiates an executable graph; it keeps this graph (and what it uses) alive.
   * @param flags CUgraphInstantiate_flags bits OR-ed together, e.g. auto-free-on-launch or upload (default 0).
   */
  instantiate(flags = 0): GraphExec {
    this.check();
    if (this.owner !== this) throw new TypeError('Graph.instantiate: a conditional body runs as part of the graph that owns it: instantiate that graph');
    if (!Number.isSafeInteger(flags) || flags < 0)
      throw new RangeError(`Graph.instantiate: flags must be a non-negative integer (CUgraphInstantiate_flags), got ${describe(flags)}`);
    drv.call(this.context, 'cuGraphInstantiateWithFlags', drv.out64, this.handle, flags);
    return new GraphExec(SEALED, drv.outNumber() as drv.CUgraphExec, this);
  }
}
