// An environment override that cannot be honoured is an error that names it (issue 25 §7): a
// CUDA_TS_<MODULE>_LIBRARY naming no file is never passed over for the default search, and a file that
// loads but lacks the module's functions (libcudart named as the driver) says so instead of blaming the
// installed driver.
import { runScript } from './helpers/run-script';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Binder, CudaLibraryError, libraryCandidates, loadLibrary } from '../support';

const root = join(__dirname, '..');
const cudart = ['/usr/local/cuda/lib64/libcudart.so.13', '/usr/local/cuda/lib64/libcudart.so'].find((p) => existsSync(p));

test('an override naming no file is an error naming the variable and the file, with no fallback', () => {
  const spec = { module: 'runtime', sonames: ['libcudart.so.13'], env: 'CUDA_TS_TEST_OVERRIDE_LIBRARY' };
  const env = { CUDA_TS_TEST_OVERRIDE_LIBRARY: '/nonexistent/libcudart.so.13' };
  expect(() => loadLibrary(spec, env)).toThrow(CudaLibraryError);
  expect(() => loadLibrary(spec, env)).toThrow(/CUDA_TS_TEST_OVERRIDE_LIBRARY=\/nonexistent\/libcudart.so.13 names no file/);
  try {
    loadLibrary(spec, env);
  } catch (e) {
    // only the override was tried: the default places were not searched behind the user's back
    expect((e as CudaLibraryError).tried).toEqual(['/nonexistent/libcudart.so.13 ($CUDA_TS_TEST_OVERRIDE_LIBRARY): no such file']);
  }
});

const withCudart = cudart ? test : test.skip;
withCudart('the driver library overridden with libcudart: a call names the file and the variable, not a driver upgrade', () => {
  const script = `
    const d = require(${JSON.stringify(join(root, 'generated', '13.0', 'driver'))});
    try { d.cuInit(0); process.stdout.write('no error'); } catch (e) { process.stdout.write(e.constructor.name + ': ' + e.message); }
  `;
  const r = runScript(script, { cwd: root, env: { ...process.env, CUDA_TS_DRIVER_LIBRARY: cudart } });
  expect(r.stdout).toMatch(
    new RegExp(
      `^CudaSymbolError: cuInit is not available: ${cudart!.replace(/[.]/g, '\\.')}, which CUDA_TS_DRIVER_LIBRARY names, does not export it: is that libcuda\\.so\\.1\\?`,
    ),
  );
  expect(r.stdout).not.toMatch(/driver ≥|upgrade/);
});

test('loadLibrary, libraryCandidates and the Binder refuse a malformed spec with a TypeError naming the field, before any search', () => {
  const good = { module: 'runtime', sonames: ['libcudart.so.13'], env: 'CUDA_TS_RUNTIME_LIBRARY' };
  for (const [bad, field] of [
    [undefined, 'spec must be'],
    [{ ...good, module: '' }, 'spec.module'],
    [{ ...good, sonames: 'libcudart.so.13' }, 'spec.sonames'],
    [{ ...good, sonames: [] }, 'spec.sonames'],
    [{ ...good, env: 42 }, 'spec.env'],
  ] as const) {
    expect(() => loadLibrary(bad as never)).toThrow(new RegExp(`^loadLibrary: ${field.replace('.', '\\.')}`));
    expect(() => libraryCandidates(bad as never)).toThrow(TypeError);
    expect(() => new Binder(bad as never)).toThrow(new RegExp(`^Binder: ${field.replace('.', '\\.')}`));
  }
  expect(() => loadLibrary(good, 5 as never)).toThrow(/^loadLibrary: env must be an object/);
  expect(() => new Binder({ ...good, cudaVersion: '13.0', cudaVersionNumber: 13000, resolve: 'guess' } as never)).toThrow(/spec\.resolve/);
});

test('a library that cannot load names the call that needed it; class, code and the paths tried are unchanged', () => {
  const spec = {
    module: 'runtime',
    cudaVersion: '13.0',
    cudaVersionNumber: 13000,
    sonames: ['libcudart.so.13'],
    env: 'CUDA_TS_TEST_CALL_LIBRARY',
    resolve: 'symbol' as const,
  };
  const saved = process.env.CUDA_TS_TEST_CALL_LIBRARY;
  process.env.CUDA_TS_TEST_CALL_LIBRARY = '/nonexistent/libcudart.so.13';
  let error: unknown;
  try {
    new Binder(spec).bind('cudaGetDeviceCount', 'cudaGetDeviceCount', undefined, 'int', ['void *']);
  } catch (e) {
    error = e;
  } finally {
    if (saved === undefined) delete process.env.CUDA_TS_TEST_CALL_LIBRARY;
    else process.env.CUDA_TS_TEST_CALL_LIBRARY = saved;
  }
  expect(error).toBeInstanceOf(CudaLibraryError);
  const e = error as CudaLibraryError;
  expect([e.func, e.code, e.name, e.module]).toEqual(['cudaGetDeviceCount', -2, 'CUDA_TS_LIBRARY_NOT_FOUND', 'runtime']);
  expect(e.message).toBe(
    'cudaGetDeviceCount: cannot load the runtime library: CUDA_TS_TEST_CALL_LIBRARY=/nonexistent/libcudart.so.13 names no file (unset it to search the usual places)' +
      '\n  tried:\n    /nonexistent/libcudart.so.13 ($CUDA_TS_TEST_CALL_LIBRARY): no such file',
  );
  expect(e.tried).toEqual(['/nonexistent/libcudart.so.13 ($CUDA_TS_TEST_CALL_LIBRARY): no such file']);
  // without a call (loadLibrary itself, NCCL's check): as before
  const bare = new CudaLibraryError('driver', 'none loaded', []);
  expect([bare.func, bare.message]).toEqual(['(load)', 'cannot load the driver library: none loaded']);
  expect(() => new CudaLibraryError('driver', 'none loaded', [], 5 as never)).toThrow(/^CudaLibraryError: func must be a string/);
});

test('Device.count() without a loadable driver: the error names the C call that loaded it', () => {
  const script = `
    const { Device } = require(${JSON.stringify(join(root, 'src'))});
    try { Device.count(); process.stdout.write('no error'); } catch (e) { process.stdout.write(JSON.stringify({ cls: e.constructor.name, func: e.func, code: e.code, message: e.message })); }
  `;
  const r = runScript(script, { cwd: root, env: { ...process.env, CUDA_TS_DRIVER_LIBRARY: '/nonexistent/libcuda.so.1' } });
  const out = JSON.parse(r.stdout) as { cls: string; func: string; code: number; message: string };
  expect(out).toEqual({
    cls: 'CudaLibraryError',
    func: 'cuInit',
    code: -2,
    message:
      'cuInit: cannot load the driver library: CUDA_TS_DRIVER_LIBRARY=/nonexistent/libcuda.so.1 names no file (unset it to search the usual places)' +
      '\n  tried:\n    /nonexistent/libcuda.so.1 ($CUDA_TS_DRIVER_LIBRARY): no such file',
  });
});
