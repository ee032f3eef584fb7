#!/usr/bin/env node
// Entry point of the generator. The generator is TypeScript run through tsx (a dev dependency):
// it is a repository tool, and nothing of it is needed at run time. The compiled build (dist/) is
// used only when it is at least as new as every generator source, so a stale build never answers.
'use strict';
const path = require('node:path');
const fs = require('node:fs');
const root = path.join(__dirname, '..');
const compiled = path.join(root, 'dist', 'generator', 'cli.js');

function newestSource(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, fs.statSync(p).mtimeMs);
  }
  return newest;
}

function compiledIsFresh() {
  if (process.env.CUDA_TS_GEN_FROM_SOURCE || !fs.existsSync(compiled)) return false;
  const sources = path.join(root, 'generator');
  if (!fs.existsSync(sources)) return true; // installed package: only the build exists
  return fs.statSync(compiled).mtimeMs >= newestSource(sources);
}

if (compiledIsFresh()) {
  require(compiled).main();
} else {
  require('tsx/cjs/api').register();
  require('../generator/cli.ts').main();
}
