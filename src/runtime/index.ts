// Support code that generated modules import. Small and hand-written; never imports the generator.
export * from './types';
export * from './errors';
export * from './scratch';
export * from './binder';
export * from './ffi';
export * from './callbacks';
export * from './validate';
export { loadLibrary, libraryCandidates, type LibrarySpec } from './library';
export { requirement, versionString } from './versions';
export * from './nodeffi';
export { lazyEnums, lazyFunctions, type ChunkLoader } from './lazy';
