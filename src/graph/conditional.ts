// Conditional nodes (CUDA 12.3+): a GraphConditional's value decides whether (if), how often (while) or
// which body (switch) a conditional node of its graph runs.
import * as drv from '../driver';
import type { Graph } from './graph';
import type { GraphNode } from './nodes';
import { type Sealed, checkSealed } from '../sealed';

/**
 * A conditional handle (cuGraphConditionalHandleCreate) of a graph: its value decides whether (if),
 * how often (while) or which body (switch) a conditional node runs. Device code sets it with
 * `cudaGraphSetConditional(handle, value)`; pass {@link GraphConditional.value} as a `'u64'` kernel
 * argument (`cudaGraphConditionalHandle` is an `unsigned long long`).
 */
export class GraphConditional {
  /** @internal use Graph.createConditional */
  constructor(
    seal: Sealed,
    /** The handle value (CUgraphConditionalHandle). */
    readonly value: bigint,
    /** The graph it was created in (its conditional nodes must be in that graph). */
    readonly graph: Graph,
    /** The value it takes at the start of each launch, or undefined when it keeps the last one. */
    readonly defaultValue: number | undefined,
  ) {
    checkSealed(seal, 'GraphConditional', 'graph.createConditional()');
  }
}

/** What {@link Graph.addConditionalNode} returns: the node and its body graphs (owned by the node). */
export interface ConditionalNode {
  /** The conditional node. */
  readonly node: GraphNode;
  /** Its body graphs, to fill with nodes (owned by the node: they live as long as the parent graph). */
  readonly bodies: readonly Graph[];
}

/** The CUgraphConditionalNodeType of each kind of conditional node. */
export const COND_TYPES = {
  if: drv.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_IF,
  while: drv.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_WHILE,
  switch: drv.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_SWITCH,
} as const;
