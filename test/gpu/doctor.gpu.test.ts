// `cuda-ts doctor` on a GPU machine: usable (exit 0), every GPU with its compute capability and
// memory, the driver's version and CUDA version, and each found library with the bindings that fit.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { DoctorReport } from '../../src/doctor/report';
import { describeGpu } from './gpu-env';

describeGpu('cuda-ts doctor on a GPU machine', () => {
  const bin = join(__dirname, '..', '..', 'bin', 'cuda-ts.js');

  test('exits 0 and reports the driver, every GPU and the libraries', () => {
    const text = spawnSync(process.execPath, [bin, 'doctor'], { encoding: 'utf8', timeout: 120_000 });
    const json = spawnSync(process.execPath, [bin, 'doctor', '--json'], { encoding: 'utf8', timeout: 120_000 });
    process.stdout.write(text.stdout); // the screen, for the log
    expect(text.status).toBe(0);
    expect(json.status).toBe(0);
    const report = JSON.parse(json.stdout) as DoctorReport;
    expect(report.usable).toBe(true);
    expect(report.driver).toMatchObject({
      found: true,
      initStatus: 0,
      version: expect.stringMatching(/^\d{3}\.\d+/),
      cudaVersion: expect.stringMatching(/^\d+\.\d+$/),
    });
    expect(report.gpus.length).toBeGreaterThan(0);
    for (const gpu of report.gpus) {
      expect(gpu).toMatchObject({ name: expect.any(String), computeCapability: expect.stringMatching(/^\d+\.\d+$/), memoryBytes: expect.any(Number) });
      expect(text.stdout).toContain(gpu.name);
    }
    const runtime = report.libraries.find((l) => l.module === 'runtime' && l.path);
    expect(runtime?.fits.length).toBeGreaterThan(0);
    expect(report.problems.filter((p) => p.severity === 'error')).toEqual([]);
  });
});
