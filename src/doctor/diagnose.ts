// The doctor's judgement: from findings to problems, each with its fix, and the verdict. Pure: no I/O.
import type { DoctorReport, DriverFinding, GpuFinding, LibraryFinding, Problem, ReleaseFinding } from './report';

/** What the library of each module is called in NVIDIA's packages, for the fixes. */
const PACKAGE_HINT: Record<string, string> = {
  runtime: 'cuda-cudart',
  nvrtc: 'cuda-nvrtc',
  nvjitlink: 'libnvjitlink',
  nvfatbin: 'libnvfatbin',
  cublas: 'libcublas',
  cublaslt: 'libcublas',
  curand: 'libcurand',
  cufft: 'libcufft',
  cusparse: 'libcusparse',
  cusolver: 'libcusolver',
  cupti: 'cuda-cupti',
  cufile: 'libcufile',
  cudnn: 'cudnn',
  nccl: 'libnccl',
};

/** Fixes for the statuses cuInit commonly returns on a machine that is not set up. */
const INIT_FIXES: Record<string, string> = {
  CUDA_ERROR_NO_DEVICE:
    'no GPU is visible: check `nvidia-smi`; in a container run it with the GPUs passed in (`docker run --gpus all`); check CUDA_VISIBLE_DEVICES',
  CUDA_ERROR_INSUFFICIENT_DRIVER:
    'the kernel module is older than libcuda: reboot after a driver update, or reinstall one driver version (user-space library and kernel module must match)',
  CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: 'libcuda and the kernel module are different driver versions: reinstall the driver or reboot after updating it',
  CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: 'the forward-compatibility libcuda does not support this GPU: remove the cuda-compat library from the search path',
  CUDA_ERROR_NOT_PERMITTED: 'the process may not use the GPU: check the permissions of /dev/nvidia*',
  CUDA_ERROR_OPERATING_SYSTEM: 'the driver could not talk to the kernel module: check that /dev/nvidia* exist (`nvidia-smi` loads the module)',
  CUDA_ERROR_UNKNOWN: 'the driver failed without saying why: check `nvidia-smi` and `dmesg` for Xid errors',
};

/** The releases the installed driver can run, newest first. */
function runnable(releases: ReleaseFinding[]): ReleaseFinding[] {
  return releases.filter((r) => r.driverRuns);
}

function driverProblems(driver: DriverFinding, gpus: GpuFinding[], releases: ReleaseFinding[], env: Record<string, string>): Problem[] {
  const newest = releases[0];
  const needs = newest?.minDriver ? `≥ ${newest.minDriver}` : 'a recent one';
  if (!driver.found) {
    if (env.CUDA_TS_DRIVER_LIBRARY !== undefined) {
      return [
        {
          severity: 'error',
          message: `the CUDA driver library did not load: ${driver.error ?? 'unknown reason'}`,
          fix: 'point CUDA_TS_DRIVER_LIBRARY at libcuda.so.1 (find it with `ldconfig -p | grep libcuda`), or unset it',
        },
      ];
    }
    return [
      {
        severity: 'error',
        message: 'no CUDA driver: libcuda.so.1 was not found (the toolkit does not contain it; it comes with the NVIDIA driver)',
        fix: `install the NVIDIA driver (${needs} for the ${newest?.release ?? 'newest'} bindings) on a machine with an NVIDIA GPU; in a container, start it with the NVIDIA Container Toolkit (\`docker run --gpus all\`); or set CUDA_TS_DRIVER_LIBRARY to libcuda.so.1's path`,
      },
    ];
  }
  const out: Problem[] = [];
  if (driver.error) out.push(unusableDriver(driver));
  if (driver.initStatus !== undefined && driver.initStatus !== 0) {
    const name = driver.initError ?? `status ${driver.initStatus}`;
    out.push({
      severity: 'error',
      message: `cuInit failed: ${name} (${driver.initStatus})`,
      fix: INIT_FIXES[name] ?? "check `nvidia-smi`; the status name above is the driver's reason",
    });
  } else if (driver.initStatus === 0 && gpus.length === 0) {
    out.push({ severity: 'error', message: 'the driver initialised but reports no GPU', fix: 'check CUDA_VISIBLE_DEVICES and `nvidia-smi`' });
  }
  if (driver.cudaVersionNumber !== undefined && newest && !newest.driverRuns) {
    const fit = runnable(releases)[0];
    const supports = `the driver supports CUDA ${driver.cudaVersion}`;
    if (fit) {
      out.push({
        severity: 'warning',
        message: `${supports}, older than the newest bindings (${newest.release}): \`cuda-ts/driver\` fails on functions newer than ${driver.cudaVersion}`,
        fix: `use the \`cuda-ts/${fit.release}/…\` bindings (or \`@cuda-ts/<module>@~${fit.release}.0\`), or update the driver to ${needs}`,
      });
    } else {
      const oldest = releases[releases.length - 1];
      out.push({
        severity: 'error',
        message: `${supports}: none of the installed bindings (${releases.map((r) => r.release).join(', ')}) runs on it`,
        fix: `update the driver to ${oldest?.minDriver ? `≥ ${oldest.minDriver}` : 'a newer one'} (${needs} for ${newest.release}), or install the bindings of the release it supports as module packages (\`npm install @cuda-ts/driver@~12.6.0\`: each CUDA release is a version line of @cuda-ts/<module>)`,
      });
    }
  }
  return out;
}

/** A driver library that loaded but is not usable: a wrong file named by the override, or a broken install. */
function unusableDriver(driver: DriverFinding): Problem {
  const message = `the driver library at ${driver.path} is not usable: ${driver.error}`;
  if (driver.how !== '$CUDA_TS_DRIVER_LIBRARY') return { severity: 'error', message, fix: 'reinstall the NVIDIA driver' };
  const file = (driver.path ?? '').split('/').pop() ?? '';
  const what = /^libcudart\b/.test(file)
    ? `${file} is the CUDA runtime (CUDA_TS_RUNTIME_LIBRARY names that one), not the driver`
    : `${file} is not the CUDA driver`;
  return {
    severity: 'error',
    message,
    fix: `${what}: point CUDA_TS_DRIVER_LIBRARY at libcuda.so.1 (find it with \`ldconfig -p | grep libcuda\`), or unset it`,
  };
}

function libraryProblems(libraries: LibraryFinding[], driverFound: boolean): Problem[] {
  const out: Problem[] = [];
  for (const lib of libraries) {
    if (!lib.error) continue;
    if (lib.error.startsWith(`$${lib.env}`)) {
      out.push({
        severity: 'error',
        message: `${lib.module}: ${lib.error}`,
        fix: `point ${lib.env} at the ${lib.sonames[0]} file, or unset it to search the usual places`,
      });
    }
  }
  // The objects layer compiles kernels with NVRTC: say so when a driver is here and NVRTC is not.
  const nvrtc = libraries.filter((l) => l.module === 'nvrtc');
  if (driverFound && nvrtc.length > 0 && nvrtc.every((l) => !l.path)) {
    out.push({
      severity: 'warning',
      message: 'NVRTC was not found: `Program` (kernels compiled from source) will fail',
      fix: `install ${PACKAGE_HINT.nvrtc} (apt \`cuda-nvrtc-13-0\`, or pip \`nvidia-cuda-nvrtc\`), or set CUDA_TS_NVRTC_LIBRARY or CUDA_HOME`,
    });
  }
  return out;
}

function environmentProblems(env: Record<string, string>, libraries: LibraryFinding[], missingPaths: string[]): Problem[] {
  const out: Problem[] = [];
  const known = new Set([...libraries.map((l) => l.env), 'CUDA_TS_DRIVER_LIBRARY', 'CUDA_TS_NVML_LIBRARY']);
  for (const name of Object.keys(env)) {
    if (/^CUDA_TS_.*_LIBRARY$/.test(name) && !known.has(name)) {
      out.push({ severity: 'warning', message: `${name} is set but no module reads it`, fix: `the variables are: ${[...known].sort().join(', ')}` });
    }
  }
  for (const name of missingPaths) {
    if (env[name]) {
      out.push({
        severity: 'warning',
        message: `${name}=${env[name]} does not exist`,
        fix: `set ${name} to a CUDA toolkit folder (the one holding lib64/), or unset it`,
      });
    }
  }
  const visible = env.CUDA_VISIBLE_DEVICES;
  if (visible !== undefined && (visible.trim() === '' || visible.trim() === '-1')) {
    out.push({
      severity: 'warning',
      message: `CUDA_VISIBLE_DEVICES="${visible}" hides every GPU`,
      fix: 'unset CUDA_VISIBLE_DEVICES, or list the GPUs to use (`0,1`)',
    });
  }
  return out;
}

/**
 * Problems and the verdict. `missingPaths` lists the variables among CUDA_HOME/CUDA_PATH that name a
 * folder that does not exist (the probe checks; this stays pure).
 */
export function diagnose(report: Omit<DoctorReport, 'problems' | 'usable'>, missingPaths: string[] = []): { problems: Problem[]; usable: boolean } {
  const problems = [
    ...driverProblems(report.driver, report.gpus, report.releases, report.environment),
    ...libraryProblems(report.libraries, report.driver.found),
    ...environmentProblems(report.environment, report.libraries, missingPaths),
  ];
  if (report.releases.length === 0) {
    problems.unshift({
      severity: 'error',
      message: 'no bindings found next to cuda-ts (generated/ is empty or unreadable)',
      fix: 'reinstall cuda-ts, or run `npm run gen` in a clone',
    });
  }
  const usable =
    report.driver.found &&
    report.driver.initStatus === 0 &&
    report.gpus.length > 0 &&
    runnable(report.releases).length > 0 &&
    !problems.some((p) => p.severity === 'error');
  return { problems, usable };
}
