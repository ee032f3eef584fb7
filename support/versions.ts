// CUDA release ↔ driver facts used in messages. The one minimum-driver table of the project: the
// generator's catalog (generator/modules.ts) reads it from here.

/** Oldest Linux driver branch that supports each CUDA release (NVIDIA's CUDA toolkit release notes). */
export const MIN_DRIVER: Readonly<Record<string, number>> = {
  '11.0': 450,
  '11.1': 455,
  '11.2': 460,
  '11.3': 465,
  '11.4': 470,
  '11.5': 495,
  '11.6': 510,
  '11.7': 515,
  '11.8': 520,
  '12.0': 525,
  '12.1': 530,
  '12.2': 535,
  '12.3': 545,
  '12.4': 550,
  '12.5': 555,
  '12.6': 560,
  '12.8': 570,
  '12.9': 575,
  '13.0': 580,
  '13.1': 590,
};

/** The error for a bad argument (argError's wording; ./validate is not imported here, the generator reads this file). */
function versionError(fn: string, param: string, expected: string, got: unknown, rightType: boolean): TypeError | RangeError {
  const message = `${fn}: ${param} must be ${expected}, got ${typeof got === 'string' ? JSON.stringify(got) : typeof got === 'bigint' ? `${got}n` : typeof got === 'object' && got !== null ? 'an object' : String(got)}`;
  return rightType ? new RangeError(message) : new TypeError(message);
}

function versionNumber(release: string): number {
  const [major, minor] = release.split('.').map(Number);
  return major * 1000 + (minor || 0) * 10;
}

/**
 * The oldest driver branch for a CUDA release: exact when the table knows the release; for a release
 * newer than the table, the newest known branch (a lower bound: `atLeast` is true).
 */
export function minimumDriver(release: string): { driver: number; atLeast: boolean } | undefined {
  const exact = MIN_DRIVER[release];
  if (exact !== undefined) return { driver: exact, atLeast: false };
  const known = Object.keys(MIN_DRIVER).sort((a, b) => versionNumber(a) - versionNumber(b));
  const newest = known[known.length - 1];
  if (versionNumber(release) > versionNumber(newest)) return { driver: MIN_DRIVER[newest], atLeast: true };
  return undefined;
}

/** "CUDA 13.0 / driver ≥ 580"; a release newer than the table:
 *  "CUDA 13.5 / driver ≥ 590 (13.5 is newer than this table)". */
export function requirement(cudaVersion: string): string {
  if (typeof cudaVersion !== 'string' || !/^\d+\.\d+$/.test(cudaVersion))
    throw versionError('requirement', 'cudaVersion', 'a release as "major.minor" ("13.0")', cudaVersion, typeof cudaVersion === 'string');
  const d = minimumDriver(cudaVersion);
  if (!d) return `CUDA ${cudaVersion}`;
  return `CUDA ${cudaVersion} / driver ≥ ${d.driver}${d.atLeast ? ` (${cudaVersion} is newer than this table)` : ''}`;
}

/** 13000 → "13.0", 12060 → "12.6" (CUDA's encoding: major * 1000 + minor * 10). */
export function versionString(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0 || n % 10 !== 0)
    throw versionError('versionString', 'n', 'a CUDA version number (major * 1000 + minor * 10: a non-negative multiple of 10)', n, typeof n === 'number');
  return `${Math.floor(n / 1000)}.${(n % 1000) / 10}`;
}
