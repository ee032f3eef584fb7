// The trivial-call paths npm run bench times, on the real driver: Device's cached getters agree
// with the driver, and under each runtime found (this one, Bun and Deno where .ci/run installed them)
// the raw, typed and objects layers read the same attribute through that runtime's own FFI, refusing a
// bad argument with a TypeError naming the function before any call.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as cu from '../../generated/13.0/driver';
import { Device } from '../../src';
import { describeGpu, TS_RUNNER } from './gpu-env';
import { runtimeCommands } from '../helpers/runtimes';

const ROOT = join(__dirname, '..', '..');
const A = cu.CUdevice_attribute;

describeGpu('Device attribute getters on the real driver', () => {
  test('multiprocessorCount and computeCapability (read once) equal what the driver says now', () => {
    const d = Device.get(0);
    const sms = d.attribute(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    expect(sms).toBeGreaterThan(0);
    expect(d.multiprocessorCount).toBe(sms);
    expect(d.multiprocessorCount).toBe(cu.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d.handle));
    const cc = [d.attribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR), d.attribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)];
    expect(d.computeCapability).toEqual(cc);
    expect(d.arch).toBe(`sm_${cc[0]}${cc[1]}`);
  });
});

// Run by each runtime through scripts/run-ts.cjs: one JSON line.
const SCRIPT = `
import * as raw from ${JSON.stringify(join(ROOT, 'generated', '13.0', 'driver', 'raw'))};
import * as cu from ${JSON.stringify(join(ROOT, 'generated', '13.0', 'driver'))};
import { Device } from ${JSON.stringify(join(ROOT, 'src'))};
const SMS = cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
const d = Device.get(0);
d.setCurrent();
const out = new Int32Array(1);
const status = raw.cuDeviceGetAttribute(out, SMS, d.handle);
// read now: under koffi and bun:ffi the raw calls below with bad attributes reach C (1.5 becomes 1) and overwrite it
const rawValue = out[0];
const typed = cu.cuDeviceGetAttribute(SMS, d.handle);
const ctx = cu.cuCtxGetCurrent();
const ctxRaw = new BigUint64Array(1);
const ctxStatus = raw.cuCtxGetCurrent(ctxRaw);
const refused = (call) => [1.5, Number.NaN, 2 ** 31, '16'].map((bad) => {
  try { call(bad); return 'called C'; } catch (e) { return e.name + ': ' + e.message.split(' (')[0]; }
});
const typedRefused = refused((bad) => cu.cuDeviceGetAttribute(bad, d.handle));
const rawRefused = refused((bad) => raw.cuDeviceGetAttribute(out, bad, d.handle));
console.log(JSON.stringify({ raw: [status, rawValue], typed, objects: d.multiprocessorCount, attribute: d.attribute(SMS), ctx: [ctxStatus, Number(ctxRaw[0]) === ctx && ctx !== 0], typedRefused, rawRefused,
  backends: [raw.binder.backendOf('cuDeviceGetAttribute'), raw.binder.backendOf('cuCtxGetCurrent')] }));
`;

describeGpu("raw, typed and objects through each runtime's own FFI (real driver)", () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cuda-ts-call-overhead-'));
    writeFileSync(join(dir, 'calls.ts'), SCRIPT);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const [name, cmd] of runtimeCommands()) {
    test(`${name}: the three layers agree, bad attributes are refused before C, both functions bound through ${name === 'node' ? 'koffi' : name}`, () => {
      const env = { ...process.env };
      delete env.CUDA_TS_FFI;
      const r = spawnSync(cmd[0], [...cmd.slice(1), TS_RUNNER, join(dir, 'calls.ts')], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 });
      expect(r.status).toBe(0);
      const got = JSON.parse(r.stdout.trim().split('\n').pop()!);
      const sms = Device.get(0).attribute(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
      expect(got.raw).toEqual([0, sms]);
      expect([got.typed, got.objects, got.attribute]).toEqual([sms, sms, sms]);
      expect(got.ctx).toEqual([0, true]);
      for (const message of got.typedRefused) expect(message).toMatch(/^(TypeError|RangeError): cuDeviceGetAttribute: attrib /);
      // the raw layer is C-exact: its integers are checked by the adapter of node:ffi and Deno only
      // (koffi and bun:ffi convert them as C would); under Deno 1.5 or 2**31 never reaches C either
      if (name === 'deno') expect(got.rawRefused).toEqual(Array(4).fill('TypeError: cuDeviceGetAttribute: Argument 1 must be an int32'));
      // a fallback to koffi would name its reason here
      const backend = name === 'node' ? 'koffi' : name;
      expect(got.backends).toEqual([{ backend }, { backend }]);
    });
  }
});
