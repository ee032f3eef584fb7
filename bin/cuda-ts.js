#!/usr/bin/env node
// `cuda-ts <command>`: the package's command line. Today one command: `cuda-ts doctor [--json]`.
// Installed, it runs the compiled build (dist/src/doctor); in a clone without a fresh build it runs the
// TypeScript sources through tsx (a dev dependency), like bin/cuda-ts-gen.js.
'use strict';
const path = require('node:path');
const fs = require('node:fs');

const USAGE = `usage: cuda-ts <command>
  doctor [--json]   whether CUDA works here, and what to do if not (exit 0: usable, 1: not)`;

const root = path.join(__dirname, '..');
const compiled = path.join(root, 'dist', 'src', 'doctor', 'cli.js');
const sources = path.join(root, 'src', 'doctor');

function newestSource(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.endsWith('.ts')) newest = Math.max(newest, fs.statSync(path.join(dir, entry.name)).mtimeMs);
  }
  return newest;
}

function loadDoctor() {
  const fresh = fs.existsSync(compiled) && (!fs.existsSync(sources) || fs.statSync(compiled).mtimeMs >= newestSource(sources));
  if (fresh) return require(compiled);
  require('tsx/cjs/api').register();
  return require('../src/doctor/cli.ts');
}

const [command, ...args] = process.argv.slice(2);
if (command === undefined || command === '--help' || command === '-h') {
  console.log(USAGE);
  process.exitCode = command === undefined ? 2 : 0;
} else if (command !== 'doctor') {
  console.error(`cuda-ts: unknown command ${command}\n${USAGE}`);
  process.exitCode = 2;
} else {
  try {
    process.exitCode = loadDoctor().main(args);
  } catch (e) {
    console.error(`cuda-ts doctor could not start: ${String((e && e.message) || e).split('\n')[0]}`);
    process.exitCode = 1;
  }
}
