#!/usr/bin/env node
// cuda-ts-run: one process per GPU with the torchrun environment (see src/distributed/launcher.ts).
// Uses the compiled build when there is one (an installed package), else the TypeScript through tsx.
'use strict';
const path = require('node:path');
const fs = require('node:fs');
const compiled = path.join(__dirname, '..', 'dist', 'src', 'distributed', 'launcher.js');
const source = path.join(__dirname, '..', 'src', 'distributed', 'launcher.ts');

let launcher;
if (fs.existsSync(compiled) && (!fs.existsSync(source) || fs.statSync(compiled).mtimeMs >= fs.statSync(source).mtimeMs)) {
  launcher = require(compiled);
} else {
  require('tsx/cjs/api').register();
  launcher = require(source);
}
launcher.main();
