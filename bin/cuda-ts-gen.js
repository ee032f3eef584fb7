#!/usr/bin/env node
// Entry point of the generator. The generator is TypeScript run through tsx (a dev dependency):
// it is a repository tool, and nothing of it is needed at run time.
'use strict';
const path = require('node:path');
const fs = require('node:fs');
const compiled = path.join(__dirname, '..', 'dist', 'generator', 'cli.js');
if (fs.existsSync(compiled) && !process.env.CUDA_TS_GEN_FROM_SOURCE) {
  require(compiled).main();
} else {
  require('tsx/cjs/api').register();
  require('../generator/cli.ts').main();
}
