// Support code that generated modules import. Small and hand-written; never imports the generator.
export * from './types';
/** koffi itself, for the generated modules: their folders then never resolve the bare `koffi` (~2 ms each at import). */
export { koffi, type KoffiModule } from './koffi';
export * from './errors';
export * from './scratch';
export * from './binder';
export * from './ffi';
export { hostByteLength } from './host-bytes';
export * from './callbacks';
export * from './validate';
export { loadLibrary, libraryCandidates, type LibrarySpec } from './library';
export { requirement, versionString } from './versions';
export { checkHandles, handleChecksEnabled, registerHandle, HANDLE_CHECKS_ENV } from './handle-check';
export { jsRuntime, jsRuntimeName, jsRuntimeVersion, type JsRuntime } from './jsruntime';
export { defaultFfi, FFI_BACKENDS, type FfiBackend } from './ffi-choice';
/** Why bun:ffi is unavailable here ('' when it is available); ./bunffi loads on this call only. */
export const bunFfiUnavailableReason = (): string => (require('./bunffi') as typeof import('./bunffi')).bunFfiUnavailableReason();
/** Why Deno.dlopen is unavailable here ('' when it is available); ./denoffi loads on this call only. */
export const denoFfiUnavailableReason = (): string => (require('./denoffi') as typeof import('./denoffi')).denoFfiUnavailableReason();

// The node:ffi backend (./nodeffi) loads on first use, not at import: the Binder requires it only
// when node:ffi is asked for (CUDA_TS_FFI=node or configure({ ffi: 'node' })), and these entries
// require it when called.
import type * as NodeFfi from './nodeffi';
const nodeffi = (): typeof NodeFfi => require('./nodeffi') as typeof NodeFfi;
/** The running Node's `node:ffi`, or undefined (see ./nodeffi). @internal */
export const nodeFfi: typeof NodeFfi.nodeFfi = () => nodeffi().nodeFfi();
/** Why node:ffi is unavailable in this Node ('' when it is available). */
export const nodeFfiUnavailableReason: typeof NodeFfi.nodeFfiUnavailableReason = () => nodeffi().nodeFfiUnavailableReason();
/** How one parameter type maps to node:ffi, or undefined when it does not (stay on koffi). @internal */
export const nodeFfiParam: typeof NodeFfi.nodeFfiParam = (type) => nodeffi().nodeFfiParam(type);
/** How a result type maps to node:ffi: [node:ffi type, wide], or undefined. @internal */
export const nodeFfiResult: typeof NodeFfi.nodeFfiResult = (type) => nodeffi().nodeFfiResult(type);
/** The node:ffi signature of a C function, or the reason it stays on koffi. @internal */
export const nodeFfiSignature: typeof NodeFfi.nodeFfiSignature = (result, params) => nodeffi().nodeFfiSignature(result, params);
/** One module's library opened through node:ffi (see ./nodeffi); the class loads on first access. */
export type NodeFfiLibrary = NodeFfi.NodeFfiLibrary;
/** The NodeFfiLibrary class (loaded on first access). */
export declare const NodeFfiLibrary: typeof NodeFfi.NodeFfiLibrary;
Object.defineProperty(exports, 'NodeFfiLibrary', { enumerable: true, configurable: true, get: () => nodeffi().NodeFfiLibrary });
export { lazyEnums, lazyFunctions, type ChunkLoader } from './lazy';
