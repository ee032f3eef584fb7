// The doctor's advice where it used to mislead: an override naming the CUDA runtime instead of the
// driver, and a library error naming fewer sonames than the finding lists.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { diagnose } from '../src/doctor/diagnose';
import { notFound } from '../src/doctor/probe';
import type { DoctorReport, DriverFinding } from '../src/doctor/report';

const root = join(__dirname, '..');

function report(driver: DriverFinding): Omit<DoctorReport, 'problems' | 'usable'> {
  return {
    cudaTs: { version: '0.1.0', node: 'v22.0.0', platform: 'linux x64' },
    driver,
    gpus: [],
    releases: [{ release: '13.0', modules: ['driver'], minDriver: 580 }],
    libraries: [],
    environment: { CUDA_TS_DRIVER_LIBRARY: driver.path ?? '' },
  };
}

test('CUDA_TS_DRIVER_LIBRARY naming libcudart: the fix says it is the runtime and to point at libcuda.so.1, not to reinstall the driver', () => {
  const driver = { found: true, path: '/usr/local/cuda/lib64/libcudart.so.13', how: '$CUDA_TS_DRIVER_LIBRARY', error: 'the library has no cuInit' };
  const [problem] = diagnose(report(driver)).problems;
  expect(problem.fix).toMatch(/^libcudart\.so\.13 is the CUDA runtime .*not the driver: point CUDA_TS_DRIVER_LIBRARY at libcuda\.so\.1/);
  expect(problem.fix).not.toMatch(/reinstall/);
  // the same error from the system's own libcuda is a broken install
  expect(diagnose(report({ ...driver, path: '/usr/lib/libcuda.so.1', how: 'system loader' })).problems[0].fix).toBe('reinstall the NVIDIA driver');
});

test('a library not found names every soname its finding lists, with the most telling reason', () => {
  const sonames = ['libnvrtc.so.13', 'libnvrtc.so.12', 'libnvrtc.so.11.2'];
  const errors = [
    "none of libnvrtc.so.13 could be loaded (not in the system loader's path nor in any place searched)",
    'none of libnvrtc.so.12 could be loaded; /opt/cuda/lib64/libnvrtc.so.12: wrong ELF class',
  ];
  expect(notFound(sonames, errors)).toBe(
    'none of libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so.11.2 could be loaded; /opt/cuda/lib64/libnvrtc.so.12: wrong ELF class',
  );
  expect(notFound(sonames, [errors[0]])).toBe(
    "none of libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so.11.2 could be loaded (not in the system loader's path nor in any place searched)",
  );
  expect(notFound(sonames, [])).toBe('not found');
});

(existsSync('/usr/local/cuda/lib64/libcudart.so.13') ? test : test.skip)(
  'the bin, with CUDA_TS_DRIVER_LIBRARY naming libcudart (skipped where /usr/local/cuda has no libcudart.so.13)',
  () => {
    const r = spawnSync(process.execPath, [join(root, 'bin', 'cuda-ts.js'), 'doctor', '--json'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, CUDA_TS_DRIVER_LIBRARY: '/usr/local/cuda/lib64/libcudart.so.13' },
    });
    const out = JSON.parse(r.stdout) as DoctorReport;
    expect(out.problems[0].fix).toMatch(/is the CUDA runtime/);
    for (const lib of out.libraries.filter((l) => l.error?.startsWith('none of'))) expect(lib.error).toContain(lib.sonames.join(', '));
  },
);
