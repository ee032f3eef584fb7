// GraphExec: an executable graph (from Graph.instantiate), launched on a stream as one unit and updated
// in place. It keeps its graph (and so all the graph uses) alive.
import * as drv from '../driver';
import type { Context } from '../context';
import { describe } from '../describe';
import { Resource, whenNoHostFuncs } from '../lifecycle';
import { encodeKernelNodeParams, packFor } from '../launch';
import { LaunchConfig, type LaunchConfigInit } from '../launch-config';
import type { Kernel } from '../module';
import type { DeviceBuffer } from '../memory/device-buffer';
import { Stream, toStream, type StreamLike } from '../stream';
import type { Event } from '../event';
import type { Graph } from './graph';
import {
  NT,
  checkEvent,
  checkFn,
  checkGraph,
  checkKernel,
  checkNode,
  encodeMemcpy,
  encodeMemset,
  holdKernelNode,
  hostNodeParams,
  graphBrand,
  nodeOwners,
  registerHostFn,
  settleHostNodes,
  type GraphAllocation,
  type GraphCopyEndpoint,
  type GraphCopyOptions,
  type GraphMemsetOptions,
  type GraphNode,
} from './nodes';
import { type Sealed, checkSealed } from '../sealed';

/**
 * An executable graph (from {@link Graph.instantiate}): launched on a stream as one unit. It keeps its
 * graph, and every kernel, buffer and stream the graph uses, alive until closed. Free with close() or `using`.
 * @example
 * ```ts
 * import { DeviceBuffer, Graph, Stream } from 'cuda-ts/objects';
 *
 * using stream = Stream.create();
 * using a = DeviceBuffer.alloc(1024);
 * using b = DeviceBuffer.alloc(1024);
 * using graph = Graph.create();
 * const fill = graph.addMemsetNode([], a, 7);
 * graph.addMemcpyNode([fill], b, a); // runs after `fill`
 * using exec = graph.instantiate();
 * exec.launch(stream);
 * exec.setMemsetNodeParams(fill, a, 9); // change a node without instantiating again
 * exec.launch(stream);
 * console.log(b.toArray(Uint8Array, { stream })[0]); // 9
 * ```
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
  constructor(seal: Sealed, handle: drv.CUgraphExec, graph: Graph) {
    checkSealed(seal, 'GraphExec', 'graph.instantiate()');
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
   * @param stream The stream to launch on (default: the legacy default stream).
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
    if (!types.includes(n.type))
      throw new TypeError(
        `${where}: the node is a ${drv.CUgraphNodeType[n.type] ?? n.type} node, not ${types.map((t) => drv.CUgraphNodeType[t]).join(' or ')}`,
      );
  }

  /**
   * Changes a memcpy node's source, destination and size in this executable graph (same kinds of memory as before).
   * @param node A node of the graph this was instantiated from, of the matching kind.
   * @param dst The new destination (same kind of memory as before).
   * @param src The new source (same kind of memory as before).
   * @param options `byteLength` (bytes to copy; default: the rest of the source after `srcOffset`), `srcOffset` and `dstOffset` (byte offsets; default 0).
   */
  setMemcpyNodeParams(node: GraphNode, dst: GraphCopyEndpoint, src: GraphCopyEndpoint, options?: GraphCopyOptions): void {
    const where = 'GraphExec.setMemcpyNodeParams';
    const n = this.ownNode(where, node);
    this.ofType(where, n, NT.CU_GRAPH_NODE_TYPE_MEMCPY);
    const { bytes, cores } = encodeMemcpy(where, dst, src, options);
    drv.call(this.context, 'cuGraphExecMemcpyNodeSetParams', this.handle, n.handle, bytes, this.context.handle);
    cores.forEach((c) => this.core.hold(c));
  }

  /**
   * Changes a memset node's destination, value and extent in this executable graph.
   * @param node A node of the graph this was instantiated from, of the matching kind.
   * @param dst The new memory to set: a DeviceBuffer or a graph allocation.
   * @param value The element value: an integer that fits `width` bytes.
   * @param options `width` (element size: 1, 2 or 4 bytes; default 1), `offset` (byte offset of the first element; default 0) and `count` (elements; default: to the end of `dst`).
   */
  setMemsetNodeParams(node: GraphNode, dst: DeviceBuffer | GraphAllocation, value: number, options?: GraphMemsetOptions): void {
    const where = 'GraphExec.setMemsetNodeParams';
    const n = this.ownNode(where, node);
    this.ofType(where, n, NT.CU_GRAPH_NODE_TYPE_MEMSET);
    const { bytes, core } = encodeMemset(where, dst, value, options);
    drv.call(this.context, 'cuGraphExecMemsetNodeSetParams', this.handle, n.handle, bytes, this.context.handle);
    if (core !== undefined) this.core.hold(core);
  }

  /**
   * Changes the function a host node runs in this executable graph.
   * @param node A node of the graph this was instantiated from, of the matching kind.
   * @param fn The function the node runs from now on; it must not call CUDA.
   */
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

  /**
   * Changes the event an event-record or event-wait node uses in this executable graph.
   * @param node An event-record or event-wait node of the graph this was instantiated from.
   * @param event The event to use from now on, of the graph's context.
   */
  setEventNodeEvent(node: GraphNode, event: Event): void {
    const where = 'GraphExec.setEventNodeEvent';
    const n = this.ownNode(where, node);
    this.ofType(where, n, NT.CU_GRAPH_NODE_TYPE_EVENT_RECORD, NT.CU_GRAPH_NODE_TYPE_WAIT_EVENT);
    const ev = checkEvent(where, event, this.context);
    drv.call(
      this.context,
      n.type === NT.CU_GRAPH_NODE_TYPE_EVENT_RECORD ? 'cuGraphExecEventRecordNodeSetEvent' : 'cuGraphExecEventWaitNodeSetEvent',
      this.handle,
      n.handle,
      ev.handle,
    );
    this.core.hold(ev.core);
  }

  /**
   * Replaces a child-graph node's graph with `child` (same topology as the one it was made with).
   * @param node A child-graph node of the graph this was instantiated from.
   * @param child A graph with the same topology as the one the node was made with.
   */
  setChildGraphNodeParams(node: GraphNode, child: Graph): void {
    const where = 'GraphExec.setChildGraphNodeParams';
    const n = this.ownNode(where, node);
    this.ofType(where, n, NT.CU_GRAPH_NODE_TYPE_GRAPH);
    const g = checkGraph(where, child);
    drv.call(this.context, 'cuGraphExecChildGraphNodeSetParams', this.handle, n.handle, g.handle);
    for (const p of g.owner.core.parents) this.core.hold(p);
    this.hostNodes += g.hostNodes;
  }

  /**
   * Enables or disables a node (kernel, memcpy or memset) in this executable graph: a disabled node does nothing.
   * @param node A kernel, memcpy or memset node of the graph this was instantiated from.
   * @param enabled false: later launches skip the node; true: they run it again.
   */
  setNodeEnabled(node: GraphNode, enabled: boolean): void {
    const where = 'GraphExec.setNodeEnabled';
    const n = this.ownNode(where, node);
    if (typeof enabled !== 'boolean') throw new TypeError(`${where}: enabled must be a boolean, got ${describe(enabled)}`);
    drv.call(this.context, 'cuGraphNodeSetEnabled', this.handle, n.handle, enabled ? 1 : 0);
  }

  /**
   * True when the node is enabled in this executable graph.
   * @param node A node of the graph this was instantiated from, of the matching kind.
   */
  nodeEnabled(node: GraphNode): boolean {
    const n = this.ownNode('GraphExec.nodeEnabled', node);
    drv.call(this.context, 'cuGraphNodeGetEnabled', this.handle, n.handle, drv.out32);
    return drv.out32[0] !== 0;
  }

  /**
   * Uploads the graph to the device ahead of its first launch.
   * @param stream The stream to order the upload on (default: the legacy default stream).
   */
  upload(stream?: StreamLike): void {
    const h = this.stream('GraphExec.upload', stream);
    drv.callOnStream(this.context, h, 'cuGraphUpload', this.handle, h);
  }

  /**
   * Updates a kernel node's kernel, launch configuration and arguments in this instantiated graph.
   * @param node A kernel node of the graph this was instantiated from.
   * @param config Grid, block, shared memory and launch attributes: a LaunchConfig or the object one is made from.
   * @param kernel The kernel the node runs from now on (of the same context).
   * @param args The kernel's arguments, in order, as launch() takes them (checked against the kernel's signature).
   */
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

  /**
   * Updates this executable graph from a topologically identical graph (cuGraphExecUpdate); it then keeps that graph alive too.
   * @param graph A graph with the same topology as the one this was instantiated from.
   */
  update(graph: Graph): void {
    this.assertOpen();
    if (!graphBrand.has(graph)) throw new TypeError(`GraphExec.update: graph must be a Graph, got ${describe(graph)}`);
    graph.check();
    drv.call(this.context, 'cuGraphExecUpdate', this.handle, graph.handle, new Uint8Array(24)); // CUgraphExecUpdateResultInfo
    this.core.hold(graph.core);
    this.hostNodes = Math.max(this.hostNodes, graph.hostNodes);
  }
}
