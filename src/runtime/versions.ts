// CUDA release ↔ driver facts used in messages.

/** Oldest Linux driver branch that supports each CUDA release. */
const MIN_DRIVER: Record<string, number> = {
  '11.8': 520, '12.0': 525, '12.1': 530, '12.2': 535, '12.3': 545, '12.4': 550, '12.5': 555,
  '12.6': 560, '12.8': 570, '12.9': 575, '13.0': 580, '13.1': 590,
};

/** "CUDA 13.0 / driver ≥ 580". */
export function requirement(cudaVersion: string): string {
  const d = MIN_DRIVER[cudaVersion];
  return d ? `CUDA ${cudaVersion} / driver ≥ ${d}` : `CUDA ${cudaVersion}`;
}

/** 13000 → "13.0", 12060 → "12.6". */
export function versionString(n: number): string {
  return `${Math.floor(n / 1000)}.${(n % 1000) / 10}`;
}
