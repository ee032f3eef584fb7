// Prints the import graph of the folders named on the command line as JSON, from dependency-cruiser:
//   node test/helpers/import-graph.mjs support src generator
// A separate process because dependency-cruiser is an ES module only and jest runs the tests as
// CommonJS. Output: [{ source, dependencies: [{ resolved, module, dependencyTypes }] }], paths
// relative to the repository root, only edges between files inside the named folders.
import { cruise } from 'dependency-cruiser';

const folders = process.argv.slice(2);
const inside = `^(${folders.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})/`;
const result = await cruise(folders, {
  includeOnly: inside,
  // Type-only imports are edges too (marked "type-only"/"type-import"): the test decides what they mean.
  tsPreCompilationDeps: "specify",
  doNotFollow: { path: 'node_modules' },
  exclude: { path: '\\.d\\.ts$' },
});
const modules = result.output.modules.map((m) => ({
  source: m.source,
  dependencies: m.dependencies
    .filter((d) => !d.couldNotResolve && new RegExp(inside).test(d.resolved))
    .map((d) => ({ resolved: d.resolved, module: d.module, dependencyTypes: d.dependencyTypes })),
}));
process.stdout.write(JSON.stringify(modules));
