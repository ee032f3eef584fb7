// Graphs: stream capture or node-by-node construction (Graph), conditional nodes, and executable graphs
// (GraphExec). Modules inside src/ import the file they need, not this index.
export { Graph } from './graph';
export { GraphExec } from './graph-exec';
export { GraphConditional, type ConditionalNode } from './conditional';
export type { GraphAllocation, GraphCopyEndpoint, GraphCopyOptions, GraphMemsetOptions, GraphNode } from './nodes';
