// The TypeScript sources and the doctor bin under Node, Bun and Deno (issue 26): scripts/run-ts.cjs runs
// a TypeScript file importing the generated runtime module under each runtime found here (the one
// running this suite, and Bun/Deno where .ci/run installed them in /tmp), and the typed call goes
// through that runtime's own FFI by default. Needs libcudart (cudaRuntimeGetVersion needs no GPU).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadLibrary } from '../support';
import { runtimeCommands } from './helpers/runtimes';

const ROOT = join(__dirname, '..');
const cudart = (() => {
  try {
    loadLibrary({ module: 'runtime', sonames: ['libcudart.so.13'], env: 'CUDA_TS_RUNTIME_LIBRARY' });
    return true;
  } catch {
    return false;
  }
})();

const SCRIPT = `
import * as rt from ${JSON.stringify(join(ROOT, 'generated', '13.0', 'runtime'))};
import { Scratch } from ${JSON.stringify(join(ROOT, 'support'))};
const version = rt.cudaRuntimeGetVersion();
const s = new Scratch(1);
const status = rt.binder.native('cudaRuntimeGetVersion')(s.slot(0));
console.log(JSON.stringify({ version, raw: [status, s.i32[0]], backend: rt.binder.backendOf('cudaRuntimeGetVersion'), name: rt.cudaGetErrorName(35) }));
`;

(cudart ? describe : describe.skip)('TypeScript sources and the doctor under each runtime found here', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cuda-ts-runtimes-'));
    writeFileSync(join(dir, 'call.ts'), SCRIPT);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const [name, cmd] of runtimeCommands({ nodeOnPath: true })) {
    const env = { ...process.env };
    delete env.CUDA_TS_FFI;
    test(`${name}: scripts/run-ts.cjs runs a TypeScript file; the typed call goes through ${name === 'node' ? 'koffi' : `${name}'s own FFI`}`, () => {
      const r = spawnSync(cmd[0], [...cmd.slice(1), join(ROOT, 'scripts', 'run-ts.cjs'), join(dir, 'call.ts')], {
        cwd: ROOT,
        env,
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect([r.status, r.stderr.replace(/.*ExperimentalWarning.*\n?|.*--trace-warnings.*\n?/g, '')]).toEqual([0, '']);
      const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
      expect(out).toEqual({ version: 13000, raw: [0, 13000], backend: { backend: name === 'node' ? 'koffi' : name }, name: 'cudaErrorInsufficientDriver' });
    });
    test(`${name}: cuda-ts doctor --json names the runtime and its FFI`, () => {
      const r = spawnSync(cmd[0], [...cmd.slice(1), join(ROOT, 'bin', 'cuda-ts.js'), 'doctor', '--json'], {
        cwd: ROOT,
        env,
        encoding: 'utf8',
        timeout: 120_000,
      });
      const report = JSON.parse(r.stdout) as { runtime: { name: string; ffi: string; ffiUnavailable?: string } };
      expect(report.runtime).toMatchObject({ name, ffi: name === 'node' ? 'koffi' : name });
      expect(report.runtime.ffiUnavailable).toBeUndefined();
    });
  }
});
