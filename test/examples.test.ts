// Every example in examples/ run as a child process without a GPU: each must exit non-zero with one
// clear line naming itself and the reason, never a stack trace. (quickstart is the one example meant to
// run without a GPU: it exits 0 and says there is none.) The children run in parallel.
//
// "No GPU" is made certain even on a GPU machine: the driver and NVML overrides name a file that is not
// a library (an override that does not load is an error, not a fall-through), and no device is visible.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..');
const tsx = join(root, 'node_modules', '.bin', 'tsx');
const examples = readdirSync(join(root, 'examples'))
  .filter((f) => f.endsWith('.ts') && f !== 'gpu-check.ts')
  .map((f) => f.slice(0, -'.ts'.length))
  .sort();

const env: NodeJS.ProcessEnv = {
  ...process.env,
  CUDA_TS_DRIVER_LIBRARY: '/dev/null',
  CUDA_TS_NVML_LIBRARY: '/dev/null',
  CUDA_VISIBLE_DEVICES: '',
  NO_COLOR: '1',
};

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

function run(name: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(tsx, [join('examples', `${name}.ts`)], { cwd: root, env, timeout: 60_000, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      const e = error as (Error & { code?: number | string; signal?: NodeJS.Signals }) | null;
      resolve({
        code: e ? (typeof e.code === 'number' ? e.code : null) : 0,
        signal: e?.signal ?? null,
        output: `${stdout}${stderr}`.trim(),
      });
    });
  });
}

const STACK = /^\s+at .+[:(]/m;
const results = new Map<string, Run>();

// A few at a time: 30-odd tsx children at once on a 2-core CI machine ran past their time limit.
const AT_ONCE = 4;
beforeAll(async () => {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < examples.length) {
      const name = examples[next++];
      results.set(name, await run(name));
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
}, 600_000);

test('the examples are found', () => {
  for (const name of ['quickstart', 'vector-add-nvrtc', 'device-properties', 'sgemm-cublas', 'monte-carlo-pi', 'fft-roundtrip', 'nvml-smi']) {
    expect(examples).toContain(name);
  }
});

describe.each(examples.filter((n) => n !== 'quickstart'))('%s without a GPU', (name) => {
  test('exits non-zero with one line naming the example and the reason, no stack trace', () => {
    const r = results.get(name)!;
    expect(r.signal).toBeNull();
    expect(r.code).not.toBe(0);
    expect(r.code).not.toBeNull();
    expect(r.output).not.toMatch(STACK);
    const lines = r.output.split('\n');
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^${name}: \\S`))]);
    expect(lines[0]).toMatch(/GPU|NVML|driver|librar|device/i); // the reason
    expect(lines[0].length).toBeLessThan(400);
  });
});

test('quickstart runs without a GPU and says so', () => {
  const r = results.get('quickstart')!;
  expect(r.code).toBe(0);
  expect(r.output).not.toMatch(STACK);
  expect(r.output.split('\n')).toContainEqual(expect.stringMatching(/^no GPU here: \S/));
});
