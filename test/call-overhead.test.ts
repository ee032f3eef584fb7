// What keeps a trivial call cheap (issue 26 §2; npm run bench measures it): Device's cached
// attribute getters and which ones ask the driver every time, the typed layer's slot zeroing, and the
// FFI adapter's wrappers each compiled from their own source.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as drv from '../src/driver';
import { Device } from '../src/device';
import { Scratch } from '../support/scratch';
import { adapt, nodeFfiCallPlan, nodeFfiSignature } from '../support/nodeffi';
import { readSlot, zeroSlot } from '../generator/emit/typed-elem';
import { fakeContext, fakeDriver } from './helpers/fake-driver';
import { BUN_BIN } from './helpers/runtimes';

const A = drv.CUdevice_attribute;

describe('Device attribute getters (fake driver)', () => {
  const reads: number[] = [];
  let failNext = false;
  let mode = 0; // CU_COMPUTEMODE_DEFAULT
  let fake: ReturnType<typeof fakeDriver>;
  beforeAll(() => {
    fake = fakeDriver(fakeContext(), {
      cuInit: () => 0,
      cuDeviceGetCount: (o: Int32Array) => ((o[0] = 1), 0),
      cuDeviceGet: (o: Int32Array, ordinal: number) => ((o[0] = ordinal), 0),
      cuDeviceGetAttribute: (o: Int32Array, attr: number) => {
        reads.push(attr);
        if (failNext) {
          failNext = false;
          return drv.CUresult.CUDA_ERROR_INVALID_VALUE;
        }
        o[0] =
          attr === A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
            ? 132
            : attr === A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
              ? 9
              : attr === A.CU_DEVICE_ATTRIBUTE_COMPUTE_MODE
                ? mode
                : 0;
        return 0;
      },
    });
  });
  afterAll(() => fake.restore());
  beforeEach(() => {
    reads.length = 0;
  });

  test('multiprocessorCount: a failed read is not cached; the first answer is, for the Device', () => {
    const d = Device.get(0);
    failNext = true;
    expect(() => d.multiprocessorCount).toThrow(/cuDeviceGetAttribute/);
    expect(d.multiprocessorCount).toBe(132);
    expect(d.multiprocessorCount).toBe(132);
    expect(Device.get(0).multiprocessorCount).toBe(132);
    expect(reads).toEqual([A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT]);
  });

  test('computeCapability and arch: read once, a new array each time', () => {
    const d = Device.get(0);
    const cc = d.computeCapability;
    expect(cc).toEqual([9, 0]);
    cc[0] = 1; // the caller's array: the Device's answer is unchanged
    expect(d.computeCapability).toEqual([9, 0]);
    expect(d.computeCapability).not.toBe(d.computeCapability);
    expect(d.arch).toBe('sm_90');
    expect(reads).toEqual([A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR]);
  });

  test('attribute() and computeMode ask the driver every time (the compute mode can change)', () => {
    const d = Device.get(0);
    expect(d.computeMode).toBe('default');
    mode = 2; // CU_COMPUTEMODE_PROHIBITED, as `nvidia-smi -c 2` would set it
    expect(d.computeMode).toBe('prohibited');
    expect(d.attribute(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)).toBe(132);
    expect(d.attribute(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)).toBe(132);
    expect(reads).toEqual([
      A.CU_DEVICE_ATTRIBUTE_COMPUTE_MODE,
      A.CU_DEVICE_ATTRIBUTE_COMPUTE_MODE,
      A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
      A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
    ]);
  });

  test('attribute() still refuses a bad attribute before calling the driver', () => {
    const d = Device.get(0);
    for (const bad of [1.5, Number.NaN, 0, -1, A.CU_DEVICE_ATTRIBUTE_MAX, '16', 2 ** 53 + 1]) {
      expect(() => d.attribute(bad as never)).toThrow(/^Device\.attribute: attr must be a CUdevice_attribute/);
    }
    expect(reads).toEqual([]);
  });
});

describe('typed layer out-parameter slots', () => {
  test('zeroSlot emits a float64 store of 0, and that store clears all eight bytes', () => {
    expect(zeroSlot(3)).toBe('s.f64[3] = 0;');
    const s = new Scratch(4);
    s.u64.fill(0xffff_ffff_ffff_ffffn);
    // what the emitted statement does, run against a real Scratch
    new Function('s', zeroSlot(3))(s);
    expect(s.u64[3]).toBe(0n);
    expect(s.u64[2]).toBe(0xffff_ffff_ffff_ffffn);
    expect(s.address(3)).toBe(0);
  });
});

describe('typed layer: 64-bit slots read inline', () => {
  test('handles, addresses and sizes read as Scratch.address would, up to 2^64 - 1', () => {
    const s = new Scratch(3);
    const read = (expr: string) => new Function('s', `return ${expr.replace(/ as .*$/, '')};`)(s) as number;
    const elems = [{ t: 'address' }, { t: 'handle', name: 'CUcontext' }, { t: 'int', bits: 64, signed: false, size: true }] as const;
    for (const v of [0n, 0x5000n, 0x7fff_1234_5678n, 2n ** 53n - 1n, 2n ** 53n + 1n, 2n ** 60n + 12345n, 2n ** 64n - 1n]) {
      s.u64[2] = v;
      for (const e of elems) {
        const expr = readSlot(e, 2);
        expect(expr).not.toMatch(/address\(|size\(/); // inline, no method call
        expect(read(expr)).toBe(s.address(2));
        expect(read(expr)).toBe(Number(v));
      }
    }
  });
});

describe('FFI adapter wrappers (node:ffi and Deno)', () => {
  test('two wrappers of one signature are compiled from different sources and each calls its own function', () => {
    const params = ['void *', 'int32_t', 'int32_t'];
    const plan = nodeFfiSignature('int32_t', params);
    if (typeof plan === 'string') throw new Error(plan);
    const call = nodeFfiCallPlan(plan, true);
    const seen: unknown[][] = [];
    const first = adapt((...a: unknown[]) => (seen.push(['first', ...a]), 0), 'cuDeviceGetAttribute', params, plan, call);
    const second = adapt((...a: unknown[]) => (seen.push(['second', ...a]), 7), 'cuDeviceGetAttribute', params, plan, call);
    // one source would let V8 share the wrappers' call site `f(…)`, which loses the FFI's fast call
    expect(first.toString()).not.toBe(second.toString());
    expect(first(null, 16, 0)).toBe(0);
    expect(second(null, 16, 1)).toBe(7);
    expect(seen).toEqual([
      ['first', 0n, 16n, 0n],
      ['second', 0n, 16n, 1n],
    ]);
    expect(() => second(null, 1.5, 0)).toThrow(/^cuDeviceGetAttribute: Argument 1 must be an int32/);
  });

  test('narrowNumbers (Deno): 8-32-bit integers reach the FFI as the checked numbers, pointers and 64-bit integers as bigints', () => {
    const params = ['void *', 'int32_t', 'uint8_t', 'size_t'];
    const plan = nodeFfiSignature('int32_t', params);
    if (typeof plan === 'string') throw new Error(plan);
    const seen: unknown[][] = [];
    const f = adapt((...a: unknown[]) => (seen.push(a), 0), 'cuX', params, plan, nodeFfiCallPlan(plan, true), {
      pointer: () => 0x1000n,
      encodeStrings: true,
      narrowNumbers: true,
    });
    expect(f(new Uint8Array(8), -5, 255, 4096)).toBe(0);
    expect(seen).toEqual([[0x1000n, -5, 255, 4096n]]);
    for (const [i, args] of [
      [1, [null, 1.5, 0, 0]],
      [1, [null, 2 ** 31, 0, 0]],
      [1, [null, '1', 0, 0]],
      [2, [null, 0, 256, 0]],
      [2, [null, 0, -1, 0]],
      [2, [null, 0, Number.NaN, 0]],
    ] as const) {
      expect(() => f(...args)).toThrow(new RegExp(`^cuX: Argument ${i} must be an? u?int(8|32)`));
    }
    expect(seen).toHaveLength(1); // no bad call reached the FFI function
  });
});

// bun:ffi takes no JS strings: bunffi.ts wraps a function with `const char *` parameters to copy them.
// Run under Bun (where .ci/run installs it) against the stand-in libnvrtc of bench/native/fake-cuda.c,
// whose "CUBIN" is the program's source: its size proves the string arrived whole, as UTF-8.
const gcc = spawnSync('gcc', ['--version']).status === 0;
(existsSync(BUN_BIN) && gcc ? describe : describe.skip)('bun:ffi string parameters (stand-in libnvrtc, under Bun)', () => {
  test('typed and raw calls with JS strings and with bytes reach C as NUL-terminated UTF-8, through bun:ffi', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cuda-ts-bun-strings-'));
    try {
      const lib = join(dir, 'libnvrtc.so.13');
      expect(spawnSync('gcc', ['-O2', '-shared', '-fPIC', '-DFAKE_NVRTC', '-o', lib, join(__dirname, '..', 'bench', 'native', 'fake-cuda.c')]).status).toBe(0);
      const source = 'extern "C" __global__ void k() {} // héllo';
      writeFileSync(
        join(dir, 'strings.ts'),
        `
import * as nv from ${JSON.stringify(join(__dirname, '..', 'generated', '13.0', 'nvrtc'))};
import * as raw from ${JSON.stringify(join(__dirname, '..', 'generated', '13.0', 'nvrtc', 'raw'))};
const prog = nv.nvrtcCreateProgram(${JSON.stringify(source)}, 'k.cu', [], null);
const statuses = [raw.nvrtcAddNameExpression(prog, 'k'), raw.nvrtcAddNameExpression(prog, new TextEncoder().encode('k\\0'))];
console.log(JSON.stringify({ size: nv.nvrtcGetCUBINSize(prog), statuses, backend: nv.binder.backendOf('nvrtcCreateProgram') }));
`,
      );
      const env: NodeJS.ProcessEnv = { ...process.env, CUDA_TS_NVRTC_LIBRARY: lib };
      delete env.CUDA_TS_FFI;
      const r = spawnSync(BUN_BIN, [join(__dirname, '..', 'scripts', 'run-ts.cjs'), join(dir, 'strings.ts')], { encoding: 'utf8', env, timeout: 120_000 });
      expect(r.stderr).toBe('');
      expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toEqual({
        size: new TextEncoder().encode(source).length,
        statuses: [0, 0],
        backend: { backend: 'bun' },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
