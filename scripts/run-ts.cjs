#!/usr/bin/env node
// Runs a TypeScript file of this repository (an example, a bench, your own script importing src/ or
// generated/) under Node, Bun or Deno:
//   node scripts/run-ts.cjs file.ts [args…]
//   bun scripts/run-ts.cjs file.ts [args…]
//   deno run --allow-ffi --allow-read --allow-env --allow-sys --allow-write --allow-run scripts/run-ts.cjs file.ts [args…]
// Why a runner: the sources are CommonJS-flavoured TypeScript (names defined at run time behind
// `export declare`, lazy `require`s), which Bun's and Deno's own TypeScript loaders run as ES modules
// and cannot link (`bun file.ts`: "Export named 'records' not found"; Deno: "require is not defined").
// tsx's CommonJS hook, which both runtimes honour for `require`, compiles each file as CommonJS, as
// Node and Jest run them. The built package (dist/) needs no runner under any of the three.
// The file sees itself as argv[1], as an entry point does, but `require.main` is this runner: a script
// that runs only as an entry point tests `require.main === module || process.argv[1] === __filename`.
// Deno: --allow-ffi loads koffi and the CUDA libraries, --allow-read/--allow-env find them, and tsx
// needs --allow-sys (its cache is keyed by user id), --allow-write (it writes that cache) and
// --allow-run (it starts esbuild's service process).
'use strict';
const path = require('node:path');

const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error('usage: <node|bun|deno run …> scripts/run-ts.cjs file.ts [args…]');
  process.exit(2);
}
const root = path.join(__dirname, '..');
try {
  require(require.resolve('tsx/cjs/api', { paths: [root] })).register();
} catch (e) {
  const denied = /Requires (\w+) access/.exec(String(e && e.message));
  console.error(
    denied
      ? `run-ts: Deno needs --allow-${denied[1]} (see the top of scripts/run-ts.cjs for every flag)`
      : `run-ts: tsx did not load (npm install in ${root}): ${e && e.message}`,
  );
  process.exit(1);
}
process.argv = [process.argv[0], path.resolve(file), ...rest];
require(path.resolve(file));
