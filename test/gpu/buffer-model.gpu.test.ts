// The buffer model test (test/model/buffer-model.ts) against the objects layer on the GPU, in both modes:
// a synchronize after every operation, and none (the mirror then follows each call's documented ordering).
// 50,000 operations per mode here; the full run (≥ 1,000,000 per mode) is `npx tsx test/model/cli.ts`,
// part `model` of test/gpu/run-all.sh. A mismatch fails with the shrunk sequence that reproduces it.
import * as objects from '../../src';
import { runModel, shrink, type Mode } from '../model/buffer-model';
import { ObjectsExecutor } from '../model/objects-executor';
import { describeGpu } from './gpu-env';

const COUNT = Number(process.env.CUDA_TS_MODEL_OPS ?? 50_000);

describeGpu('buffer model (objects layer, device 0)', () => {
  let exec: ObjectsExecutor;
  beforeAll(() => {
    exec = new ObjectsExecutor(objects);
  });
  afterAll(() => exec?.close());

  test.each(['sync', 'none'] as Mode[])('mode %s: 0 mismatches', (mode) => {
    const r = runModel(exec, { seed: mode === 'sync' ? 101 : 202, count: COUNT, mode });
    if (r.mismatch !== undefined) {
      const m = r.mismatch;
      const small = shrink(exec, m.sizes, m.ops.slice(0, m.mismatch.index + 1), mode, 100);
      throw new Error(
        `operation ${m.mismatch.index} of batch seed ${m.seed}: ${m.mismatch.message}\nshrunk (${small.ops.length} ops, slot sizes ${m.sizes.join(', ')}):\n${small.ops.map((o) => JSON.stringify(o)).join('\n')}`,
      );
    }
    expect(r.ops).toBe(COUNT);
  });
});
