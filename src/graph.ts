// CUDA graphs: stream capture → Graph → instantiate → GraphExec.launch(stream); kernel node updates.
// A graph keeps alive everything its work uses: what captured work used (registered at capture time,
// see capture.ts), and the kernels and buffers given to addKernelNode/setKernelNodeParams. A GraphExec
// keeps its graph (and so all of that) alive. Closing a kernel, module or buffer a live graph uses
// defers its destroy until the graph and its executables are closed: replaying never faults.
import * as drv from './driver';
import { Context, contextOf, describe } from './context';
import { Resource, type Core } from './lifecycle';
import { LaunchConfig, encodeKernelNodeParams, packFor, type LaunchConfigInit } from './launch';
import { Kernel } from './module';
import { DeviceBuffer, PinnedHostBuffer, ownerOf } from './memory';
import { Stream, toStream, type StreamLike } from './stream';
import { takeHolder, type CaptureHolder } from './capture';

/** A node of a graph (kernel nodes can have their parameters updated). */
export interface GraphNode {
  /** The driver handle (CUgraphNode). */
  readonly handle: drv.CUgraphNode;
  /** The node's type (kernel, memcpy, …). */
  readonly type: drv.CUgraphNodeType;
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

  private constructor(handle: drv.CUgraph, context: Context, holder?: CaptureHolder) {
    super('Graph', () => drv.release(context, 'cuGraphDestroy', handle), [context]);
    this.handle = handle;
    this.context = context;
    if (holder !== undefined) {
      this.core.hold(holder.core);
      holder.core.close(); // destroyed (releasing what it holds) with the graph
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
    this.context.check();
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
    holdKernelNode(this.core, k, args);
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
    holdKernelNode(this.core, k, args);
    drv.call(this.context, 'cuGraphAddKernelNode', drv.out64, this.handle, deps.length ? deps : null, deps.length, encodeKernelNodeParams(k, cfg, pack));
    const node = { handle: drv.outNumber() as drv.CUgraphNode, type: drv.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL };
    nodeOwners.set(node, this);
    return node;
  }

  /** Instantiates an executable graph; it keeps this graph (and what it uses) alive. */
  instantiate(flags = 0): GraphExec {
    this.check();
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

  /** @internal use Graph.instantiate */
  constructor(handle: drv.CUgraphExec, graph: Graph) {
    const context = graph.context;
    super('GraphExec', () => drv.release(context, 'cuGraphExecDestroy', handle), [context, graph]);
    this.handle = handle;
    this.graph = graph;
    this.context = context;
  }

  private stream(where: string, stream: StreamLike | undefined): number {
    this.assertOpen();
    this.context.check();
    const s = toStream(stream, `${where}: stream`);
    if (s === undefined) return 0;
    if (s.context !== this.context) throw new TypeError(`${where}: the stream belongs to ${String(s.context)}, the graph to ${String(this.context)}`);
    return s.handle;
  }

  /** Launches the executable graph on `stream` (default: the legacy default stream). */
  launch(stream?: StreamLike): void {
    const h = this.stream('GraphExec.launch', stream);
    drv.callOnStream(this.context, h, 'cuGraphLaunch', this.handle, h);
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
    if (owner !== undefined && owner !== this.graph) throw new TypeError('GraphExec.setKernelNodeParams: the node belongs to another graph');
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
  }
}
