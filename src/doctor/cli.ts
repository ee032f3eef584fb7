// `cuda-ts doctor [--json]`: tells whether CUDA works here and what to do if not. Exit 0 when usable,
// 1 when not, 2 on a usage error. Prints no stack trace, whatever happens.
import { existsSync } from 'node:fs';
import { jsRuntime } from '../../support';
import { diagnose } from './diagnose';
import { formatReport } from './format';
import { probeRuntime } from './js-runtime';
import type { DoctorReport } from './report';

const USAGE = `usage: cuda-ts doctor [--json]
  Reports the CUDA driver, every GPU, every CUDA library cuda-ts can find and which bindings release
  fits each, the environment overrides in effect, and each problem with its fix.
  --json   the same as one JSON object (fields: cudaTs, usable, driver, gpus, releases, libraries, environment, nvml, runtime,
           kernelCache, problems; runtime names Node, Bun or Deno and its version, cudaTs.node is Node's version under Node only)
  exit status: 0 when CUDA is usable here, 1 when not`;

/**
 * The report's `cudaTs` before the package's version is known: the platform, and the Node version only
 * under Node (Bun and Deno report a `process.version` of their own: Bun 1.4 says v26.3.0; `runtime`
 * names them).
 */
export function aboutCudaTs(): DoctorReport['cudaTs'] {
  return { ...(jsRuntime() === 'node' ? { node: process.version } : {}), platform: `${process.platform} ${process.arch}` };
}

/** Everything the doctor checks, gathered now (in this process). */
export function collect(env: NodeJS.ProcessEnv = process.env): DoctorReport {
  const base = { cudaTs: aboutCudaTs() };
  let probe: typeof import('./probe');
  try {
    // koffi (a native module) loads here: its failure is a finding too.
    probe = require('./probe') as typeof import('./probe');
  } catch (e) {
    const { runtime, kernelCache, problems } = probeRuntime(env);
    return {
      ...base,
      driver: { found: false, error: 'not probed' },
      gpus: [],
      releases: [],
      libraries: [],
      environment: {},
      runtime,
      kernelCache,
      problems: [
        {
          severity: 'error',
          message: `koffi (the FFI cuda-ts calls C through) did not load: ${String((e as Error)?.message ?? e).split('\n')[0]}`,
          fix: koffiFix(e),
        },
        ...problems,
      ],
      usable: false,
    };
  }
  const bindings = probe.installedBindings();
  const newest = (module: string) => bindings.flatMap((b) => b.specs).find((s) => s.module === module);
  const { driver, gpus } = probe.probeDriver(newest('driver'), env);
  const nvml = driver.found ? probe.probeNvml(newest('nvml'), driver, gpus, env) : undefined;
  const partial: Omit<DoctorReport, 'problems' | 'usable'> = {
    cudaTs: { ...base.cudaTs, ...(probe.cudaTsVersion() ? { version: probe.cudaTsVersion() } : {}) },
    driver,
    gpus,
    releases: probe.describeReleases(bindings, driver.cudaVersionNumber),
    libraries: probe.probeLibraries(bindings, env),
    environment: probe.environmentOverrides(env),
    ...(nvml ? { nvml } : {}),
  };
  const missingPaths = ['CUDA_HOME', 'CUDA_PATH'].filter((v) => env[v] && !existsSync(env[v]!));
  const { runtime, kernelCache, problems } = probeRuntime(env);
  const judged = diagnose(partial, missingPaths);
  const all = [...judged.problems, ...problems];
  return { ...partial, runtime, kernelCache, problems: all, usable: judged.usable && !problems.some((p) => p.severity === 'error') };
}

/** How to fix koffi not loading: Deno's missing permission, else a reinstall. */
function koffiFix(e: unknown): string {
  const denied = /Requires (\w+) access/.exec(String((e as Error)?.message ?? e));
  if (denied) return `give Deno the permission it names: deno run --allow-ffi --allow-read --allow-env … (it asked for --allow-${denied[1]})`;
  return 'reinstall without --ignore-scripts (`npm install`): koffi installs a prebuilt binary as @koromix/koffi-<platform>, and its install script compiles one (cmake, a C++ compiler) where none fits this platform';
}

/** Runs the doctor with `argv` (after `doctor`), writes to stdout/stderr and returns the exit status. */
export function main(
  argv: string[] = process.argv.slice(2),
  out: (s: string) => void = (s) => process.stdout.write(s),
  err: (s: string) => void = (s) => process.stderr.write(s),
): number {
  const json = argv.includes('--json');
  const unknown = argv.filter((a) => a !== '--json');
  if (unknown.includes('--help') || unknown.includes('-h')) {
    out(`${USAGE}\n`);
    return 0;
  }
  if (unknown.length > 0) {
    err(`cuda-ts doctor: unknown argument ${unknown[0]}\n${USAGE}\n`);
    return 2;
  }
  let report: DoctorReport;
  try {
    report = collect();
  } catch (e) {
    // A bug of the doctor itself: one line, no stack, and "not usable" since nothing was proven.
    const message = `cuda-ts doctor failed while probing: ${String((e as Error)?.message ?? e).split('\n')[0]}`;
    if (json) out(`${JSON.stringify({ usable: false, error: message })}\n`);
    else err(`${message}\n`);
    return 1;
  }
  out(json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
  return report.usable ? 0 : 1;
}
