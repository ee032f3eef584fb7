// The C side of bench/math-fft-rand.ts: the same cuFFT and cuRAND calls the objects make, in the same
// process (a shared library loaded through koffi), so a row's ratio compares the objects' host path
// with C's on one clock. Built by the bench with gcc against the libraries' .so files (no headers
// needed: the few prototypes below are the libraries' C ABI). Device pointers and the stream arrive as
// 64-bit integers from JS (the objects' buffers and Stream), so both sides touch the same memory.
//
// Build by hand: gcc -O2 -shared -fPIC math-fft-rand.c -o libmathbench.so followed by the paths of
// libcufft.so.12, libcurand.so.10 and libcudart.so.13 (in /usr/local/cuda/lib64).
#include <stddef.h>
#include <stdint.h>

typedef int cufftHandle;
typedef void *stream_t;
typedef struct curandGenerator_st *curandGenerator_t;

extern int cufftPlan1d(cufftHandle *plan, int nx, int type, int batch);
extern int cufftSetStream(cufftHandle plan, stream_t stream);
extern int cufftExecC2C(cufftHandle plan, void *idata, void *odata, int direction);
extern int cufftDestroy(cufftHandle plan);
extern int curandCreateGenerator(curandGenerator_t *generator, int rng_type);
extern int curandSetStream(curandGenerator_t generator, stream_t stream);
extern int curandSetPseudoRandomGeneratorSeed(curandGenerator_t generator, unsigned long long seed);
extern int curandGenerateUniform(curandGenerator_t generator, float *out, size_t num);
extern int curandDestroyGenerator(curandGenerator_t generator);
extern int cudaStreamSynchronize(stream_t stream);

enum { CUFFT_C2C = 0x29, CUFFT_FORWARD = -1, CURAND_RNG_PSEUDO_PHILOX4_32_10 = 161 };

/** A 1-D C2C plan of `n` × `batch` on `stream`; the handle, or -(status) - 1 on failure. */
int mfr_fft_plan(int n, int batch, uint64_t stream) {
  cufftHandle plan;
  int st = cufftPlan1d(&plan, n, CUFFT_C2C, batch);
  if (st != 0) return -st - 1;
  st = cufftSetStream(plan, (stream_t)(uintptr_t)stream);
  if (st != 0) return -st - 1;
  return plan;
}

/** `ops` forward executions from idata to odata, then a synchronize of `stream`; 0 or the failing status. */
int mfr_fft_pass(int plan, uint64_t idata, uint64_t odata, long ops, uint64_t stream) {
  for (long i = 0; i < ops; i++) {
    int st = cufftExecC2C(plan, (void *)(uintptr_t)idata, (void *)(uintptr_t)odata, CUFFT_FORWARD);
    if (st != 0) return st;
  }
  return cudaStreamSynchronize((stream_t)(uintptr_t)stream);
}

int mfr_fft_destroy(int plan) {
  return cufftDestroy(plan);
}

/** A Philox generator of `seed` on `stream` (as a 64-bit integer), or 0 on failure. */
uint64_t mfr_rand_create(uint64_t seed, uint64_t stream) {
  curandGenerator_t gen;
  if (curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10) != 0) return 0;
  if (curandSetStream(gen, (stream_t)(uintptr_t)stream) != 0 || curandSetPseudoRandomGeneratorSeed(gen, seed) != 0) {
    curandDestroyGenerator(gen);
    return 0;
  }
  return (uint64_t)(uintptr_t)gen;
}

/** `ops` uniform fills of `n` floats at `out`, then a synchronize of `stream`; 0 or the failing status. */
int mfr_rand_pass(uint64_t gen, uint64_t out, uint64_t n, long ops, uint64_t stream) {
  for (long i = 0; i < ops; i++) {
    int st = curandGenerateUniform((curandGenerator_t)(uintptr_t)gen, (float *)(uintptr_t)out, (size_t)n);
    if (st != 0) return st;
  }
  return cudaStreamSynchronize((stream_t)(uintptr_t)stream);
}

int mfr_rand_destroy(uint64_t gen) {
  return curandDestroyGenerator((curandGenerator_t)(uintptr_t)gen);
}
