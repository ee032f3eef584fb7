// NVIDIA's online reference for each module, and the page of a Doxygen group where NVIDIA publishes
// one per group (`group__CUDA__MEM.html` for the driver's CUDA_MEM). Addresses only: no NVIDIA text.
const ROOTS: Readonly<Record<string, string>> = {
  driver: 'https://docs.nvidia.com/cuda/cuda-driver-api/',
  runtime: 'https://docs.nvidia.com/cuda/cuda-runtime-api/',
  nvml: 'https://docs.nvidia.com/deploy/nvml-api/',
  cupti: 'https://docs.nvidia.com/cupti/api/',
  nvrtc: 'https://docs.nvidia.com/cuda/nvrtc/index.html',
  nvjitlink: 'https://docs.nvidia.com/cuda/nvjitlink/index.html',
  nvfatbin: 'https://docs.nvidia.com/cuda/nvfatbin/index.html',
  cublas: 'https://docs.nvidia.com/cuda/cublas/index.html',
  cublaslt: 'https://docs.nvidia.com/cuda/cublas/index.html',
  cufft: 'https://docs.nvidia.com/cuda/cufft/index.html',
  curand: 'https://docs.nvidia.com/cuda/curand/index.html',
  cusolver: 'https://docs.nvidia.com/cuda/cusolver/index.html',
  cusparse: 'https://docs.nvidia.com/cuda/cusparse/index.html',
  cufile: 'https://docs.nvidia.com/gpudirect-storage/api-reference-guide/index.html',
  cudnn: 'https://docs.nvidia.com/deeplearning/cudnn/backend/latest/api/overview.html',
  nccl: 'https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/api.html',
};

/** Modules whose reference has one Doxygen page per group, under its root. */
const GROUP_PAGES = new Set(['driver', 'runtime', 'nvml', 'cupti']);

/** The reference page of `group` in `module` (the module's page when groups have none), or undefined. */
export function referenceUrl(module: string, group?: string): string | undefined {
  const root = ROOTS[module];
  if (!root) return undefined;
  if (!group || !GROUP_PAGES.has(module)) return root;
  return `${root}group__${group.replace(/_/g, '__')}.html`;
}
