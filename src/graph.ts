// CUDA graphs: stream capture → Graph → instantiate → GraphExec.launch(stream); kernel node updates.
import * as cu from '../generated/13.0/driver';
import * as raw from '../generated/13.0/driver/raw';
import { Context, contextOf } from './context';
import { Resource } from './lifecycle';
import { LaunchConfig, encodeKernelNodeParams, packFor, type LaunchConfigInit } from './launch';
import type { Kernel } from './module';
import { Stream, streamHandle, type StreamLike } from './stream';


/** A node of a graph (kernel nodes can have their parameters updated). */
export interface GraphNode {
  /** The driver handle (CUgraphNode). */
  readonly handle: cu.CUgraphNode;
  /** The node's type (kernel, memcpy, …). */
  readonly type: cu.CUgraphNodeType;
}

/**
 * A CUDA graph (template): built by stream capture or node by node, then instantiated as a
 * {@link GraphExec} to launch. Free with close() or `using`.
 */
export class Graph extends Resource {
  /** The driver handle (CUgraph). */
  readonly handle: cu.CUgraph;
  /** The context the graph belongs to. */
  readonly context: Context;

  private constructor(handle: cu.CUgraph, context: Context) {
    super('Graph', () => {
      if (!context.bindForFree()) return;
      cu.cuGraphDestroy(handle);
    }, [context]);
    this.handle = handle;
    this.context = context;
  }

  /** An empty graph. */
  static create(context?: Context): Graph {
    const ctx = contextOf(context);
    ctx.bind();
    return new Graph(cu.cuGraphCreate(0), ctx);
  }

  /** Takes ownership of a graph handle (e.g. from cuStreamEndCapture). */
  static adopt(handle: cu.CUgraph, context?: Context): Graph {
    return new Graph(handle, contextOf(context));
  }

  /**
   * Captures the work `fn` enqueues on `stream` into a new graph. The stream must not be the legacy
   * default stream. If `fn` throws, capture is ended and the partial graph destroyed.
   */
  static capture(stream: Stream, fn: (stream: Stream) => void, mode: cu.CUstreamCaptureMode = cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL): Graph {
    if (!(stream instanceof Stream)) throw new TypeError('Graph.capture expects a Stream');
    if (stream.handle === cu.CU_STREAM_LEGACY || stream.handle === 0) throw new TypeError('the legacy default stream cannot be captured: use Stream.create()');
    stream.beginCapture(mode);
    let handle: cu.CUgraph;
    try {
      const r = fn(stream) as unknown;
      if (r instanceof Promise) throw new TypeError('Graph.capture: the capture function must be synchronous (use captureAsync)');
    } catch (e) {
      try {
        const h = stream.endCaptureHandle();
        if (h) cu.cuGraphDestroy(h);
      } catch {
        /* the capture was invalidated: nothing to free */
      }
      throw e;
    }
    handle = stream.endCaptureHandle();
    return new Graph(handle, stream.context ?? contextOf(undefined));
  }

  /** Like capture(), for a capture function that awaits (it must not enqueue on other streams unless they join). */
  static async captureAsync(stream: Stream, fn: (stream: Stream) => Promise<void>, mode: cu.CUstreamCaptureMode = cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED): Promise<Graph> {
    stream.beginCapture(mode);
    try {
      await fn(stream);
    } catch (e) {
      try {
        const h = stream.endCaptureHandle();
        if (h) cu.cuGraphDestroy(h);
      } catch {
        /* invalidated */
      }
      throw e;
    }
    return new Graph(stream.endCaptureHandle(), stream.context ?? contextOf(undefined));
  }

  /** @internal */
  check(): void {
    this.assertOpen();
    this.context.check();
    this.context.bind();
  }

  /** All nodes. */
  nodes(): GraphNode[] {
    this.check();
    const count = new BigUint64Array(1);
    cu.cuGraphGetNodes(this.handle, null, count);
    const n = Number(count[0]);
    if (n === 0) return [];
    const handles = new BigUint64Array(n);
    cu.cuGraphGetNodes(this.handle, handles, count);
    return Array.from(handles, (h) => {
      const handle = Number(h) as cu.CUgraphNode;
      return { handle, type: cu.cuGraphNodeGetType(handle) };
    });
  }

  /** The kernel nodes, in the driver's node order. */
  kernelNodes(): GraphNode[] {
    return this.nodes().filter((n) => n.type === cu.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL);
  }

  /** Changes a kernel node's kernel, launch configuration and arguments in this (template) graph. */
  setKernelNodeParams(node: GraphNode, config: LaunchConfig | LaunchConfigInit, kernel: Kernel, ...args: unknown[]): void {
    this.check();
    const cfg = config instanceof LaunchConfig ? config : new LaunchConfig(config);
    const pack = packFor(kernel, args, `graph kernel node ${kernel.name}`);
    const status = raw.cuGraphKernelNodeSetParams(node.handle, encodeKernelNodeParams(kernel, cfg, pack));
    if (status !== 0) throw new cu.DriverError('cuGraphKernelNodeSetParams', status);
  }

  /** Adds a kernel node after `dependencies`. */
  addKernelNode(dependencies: readonly GraphNode[], config: LaunchConfig | LaunchConfigInit, kernel: Kernel, ...args: unknown[]): GraphNode {
    this.check();
    const cfg = config instanceof LaunchConfig ? config : new LaunchConfig(config);
    const pack = packFor(kernel, args, `graph kernel node ${kernel.name}`);
    const deps = new BigUint64Array(dependencies.map((d) => BigInt(d.handle)));
    const handle = cu.cuGraphAddKernelNode(this.handle, deps.length ? deps : null, deps.length, encodeKernelNodeParams(kernel, cfg, pack));
    return { handle, type: cu.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL };
  }

  /** Instantiates an executable graph. */
  instantiate(flags = 0): GraphExec {
    this.check();
    return new GraphExec(cu.cuGraphInstantiateWithFlags(this.handle, flags), this);
  }
}

/** An executable graph (from {@link Graph.instantiate}): launched on a stream as one unit. Free with close() or `using`. */
export class GraphExec extends Resource {
  /** The driver handle (CUgraphExec). */
  readonly handle: cu.CUgraphExec;
  /** The graph it was instantiated from. */
  readonly graph: Graph;
  /** The context it belongs to. */
  readonly context: Context;

  /** @internal use Graph.instantiate */
  constructor(handle: cu.CUgraphExec, graph: Graph) {
    const context = graph.context;
    super('GraphExec', () => {
      if (!context.bindForFree()) return;
      cu.cuGraphExecDestroy(handle);
    }, [context]);
    this.handle = handle;
    this.graph = graph;
    this.context = context;
  }

  private bind(): void {
    this.assertOpen();
    this.context.check();
    this.context.bind();
  }

  /** Launches the executable graph on `stream`. */
  launch(stream?: StreamLike): void {
    this.bind();
    if (stream instanceof Stream) stream.check();
    const status = raw.cuGraphLaunch(this.handle, streamHandle(stream));
    if (status !== 0) throw this.context.fail(new cu.DriverError('cuGraphLaunch', status));
  }

  /** Uploads the graph to the device ahead of its first launch. */
  upload(stream?: StreamLike): void {
    this.bind();
    cu.cuGraphUpload(this.handle, streamHandle(stream));
  }

  /** Updates a kernel node's kernel, launch configuration and arguments in this instantiated graph. */
  setKernelNodeParams(node: GraphNode, config: LaunchConfig | LaunchConfigInit, kernel: Kernel, ...args: unknown[]): void {
    this.bind();
    const cfg = config instanceof LaunchConfig ? config : new LaunchConfig(config);
    const pack = packFor(kernel, args, `graph kernel node ${kernel.name}`);
    const status = raw.cuGraphExecKernelNodeSetParams(this.handle, node.handle, encodeKernelNodeParams(kernel, cfg, pack));
    if (status !== 0) throw new cu.DriverError('cuGraphExecKernelNodeSetParams', status);
  }

  /** Updates this executable graph from a topologically identical graph (cuGraphExecUpdate). */
  update(graph: Graph): void {
    this.bind();
    cu.cuGraphExecUpdate(this.handle, graph.handle);
  }
}
