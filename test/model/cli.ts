// The buffer model test at full size, on a GPU (issue 25 §2):
//   npx tsx test/model/cli.ts [--ops 1000000] [--mode sync|none|both] [--seed N] [--tree bench/.build/js-before]
// --tree runs an earlier commit's objects layer (built by `npx tsx bench/before-tree.ts <commit>`).
// Prints one line per mode ("buffer model, mode none: 1000000 operations, 0 mismatches, …"); on a mismatch
// it shrinks the failing sequence and prints it, and exits 1.
import { join, resolve } from 'node:path';
import type * as Objects from '../../src';
import { runModel, shrink, type Mode } from './buffer-model';
import { ObjectsExecutor } from './objects-executor';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

function loadApi(tree: string | undefined): typeof Objects {
  return tree === undefined ? require('../../src') : require(join(resolve(tree), 'src', 'index.js'));
}

function runMode(exec: ObjectsExecutor, mode: Mode, seed: number, count: number, label: string): boolean {
  const started = process.hrtime.bigint();
  const calls0 = exec.calls;
  const result = runModel(exec, { seed, count, mode });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const calls = exec.calls - calls0;
  if (result.mismatch === undefined) {
    console.log(
      `buffer model${label}, mode ${mode}: ${result.ops} operations, 0 mismatches (${calls} calls with the syncs the ordering needs, ${seconds.toFixed(1)} s, seed ${seed})`,
    );
    return true;
  }
  const m = result.mismatch;
  console.log(
    `buffer model${label}, mode ${mode}: MISMATCH after ${result.ops} operations (batch seed ${m.seed}): operation ${m.mismatch.index}: ${m.mismatch.message}`,
  );
  const small = shrink(exec, m.sizes, m.ops.slice(0, m.mismatch.index + 1), mode);
  console.log(
    `shrunk to ${small.ops.length} operation(s) in ${small.replays} replays (slot sizes ${m.sizes.join(', ')}); ${small.mismatch ? small.mismatch.message : 'no longer fails (timing)'}:`,
  );
  for (const op of small.ops) console.log(`  ${JSON.stringify(op)}`);
  return false;
}

function main(): void {
  const count = Number(arg('ops', '1000000'));
  const seed = Number(arg('seed', '1'));
  const modeArg = arg('mode', 'both');
  const tree = process.argv.includes('--tree') ? arg('tree', '') : undefined;
  const modes: Mode[] = modeArg === 'both' ? ['sync', 'none'] : [modeArg as Mode];
  const exec = new ObjectsExecutor(loadApi(tree));
  const label = tree === undefined ? '' : ` (tree ${tree})`;
  let ok = true;
  try {
    for (const mode of modes) ok = runMode(exec, mode, seed, count, label) && ok;
  } finally {
    exec.close();
  }
  process.exitCode = ok ? 0 : 1;
}

main();
