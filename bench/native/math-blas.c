// The C side of bench/math-blas.ts: the same cuBLAS GEMMs the Blas object makes, in the same process (a
// shared library loaded through koffi), so the ratio compares the object's host path with C's on one
// clock. Operands are the bench's own device buffers (addresses passed as 64-bit integers), on the bench's
// stream. Built by the bench with gcc against libcublas.so.13, libcublasLt.so.13 and libcudart.so.13 (no headers needed: the
// prototypes below are the libraries' C ABI; cublasSgemm is exported as cublasSgemm_v2).
//
// Build by hand: gcc -O2 -shared -fPIC math-blas.c -o libblasbench.so followed by the paths of
// libcublas.so.13, libcublasLt.so.13 and libcudart.so.13 (in /usr/local/cuda/lib64).
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef void *handle_t;
typedef void *stream_t;

extern int cublasCreate_v2(handle_t *handle);
extern int cublasDestroy_v2(handle_t handle);
extern int cublasSetStream_v2(handle_t handle, stream_t stream);
extern int cublasSgemm_v2(handle_t handle, int transa, int transb, int m, int n, int k, const float *alpha, const float *A, int lda,
                          const float *B, int ldb, const float *beta, float *C, int ldc);
extern int cublasGemmEx(handle_t handle, int transa, int transb, int m, int n, int k, const void *alpha, const void *A, int Atype, int lda,
                        const void *B, int Btype, int ldb, const void *beta, void *C, int Ctype, int ldc, int computeType, int algo);
extern int cudaStreamSynchronize(stream_t stream);
extern int cublasLtMatmul(void *lightHandle, void *desc, const void *alpha, const void *A, void *Adesc, const void *B, void *Bdesc, const void *beta,
                          const void *C, void *Cdesc, void *D, void *Ddesc, const void *algo, void *workspace, size_t workspaceSize, stream_t stream);

enum { OP_N = 0, R_16F = 2, COMPUTE_32F = 68, GEMM_DEFAULT = -1 };

struct blas {
  handle_t handle;
  float alpha, beta;
};

/** A cuBLAS handle on `stream` (what the Blas object holds): the state, or 0 on failure. */
uint64_t mb_create(uint64_t stream) {
  struct blas *s = calloc(1, sizeof *s);
  s->alpha = 1.0f;
  s->beta = 0.0f;
  if (cublasCreate_v2(&s->handle) != 0) return free(s), 0;
  if (cublasSetStream_v2(s->handle, (stream_t)(uintptr_t)stream) != 0) return 0;
  return (uint64_t)(uintptr_t)s;
}

/**
 * `ops` column-major n×n GEMMs C = A·B (f32: cublasSgemm; f16: cublasGemmEx with f32 compute, as the object
 * calls for f16), then a synchronize of `stream`; 0 or the failing status.
 */
int mb_gemm_pass(uint64_t state, int half, int n, uint64_t a, uint64_t b, uint64_t c, long ops, uint64_t stream) {
  struct blas *s = (struct blas *)(uintptr_t)state;
  const void *A = (const void *)(uintptr_t)a, *B = (const void *)(uintptr_t)b;
  void *C = (void *)(uintptr_t)c;
  for (long i = 0; i < ops; i++) {
    int st = half ? cublasGemmEx(s->handle, OP_N, OP_N, n, n, n, &s->alpha, A, R_16F, n, B, R_16F, n, &s->beta, C, R_16F, n, COMPUTE_32F, GEMM_DEFAULT)
                  : cublasSgemm_v2(s->handle, OP_N, OP_N, n, n, n, &s->alpha, A, n, B, n, &s->beta, C, n);
    if (st != 0) return st;
  }
  return cudaStreamSynchronize((stream_t)(uintptr_t)stream);
}

int mb_destroy(uint64_t state) {
  struct blas *s = (struct blas *)(uintptr_t)state;
  int st = cublasDestroy_v2(s->handle);
  free(s);
  return st;
}

/**
 * `ops` cublasLtMatmul calls on the Matmul object's own handle, descriptor, layouts, algorithm and workspace
 * (so both sides make the very same call), f32 alpha 1 and beta 0, d read as c; then a synchronize of `stream`.
 */
int mb_lt_pass(uint64_t lt, uint64_t desc, uint64_t la, uint64_t lb, uint64_t lc, uint64_t ld, uint64_t a, uint64_t b, uint64_t d, const void *algo,
               uint64_t ws, uint64_t wsSize, long ops, uint64_t stream) {
  static const float alpha = 1.0f, beta = 0.0f;
#define P(x) ((void *)(uintptr_t)(x))
  for (long i = 0; i < ops; i++) {
    int st = cublasLtMatmul(P(lt), P(desc), &alpha, P(a), P(la), P(b), P(lb), &beta, P(d), P(lc), P(d), P(ld), algo, P(ws), (size_t)wsSize, P(stream));
    if (st != 0) return st;
  }
#undef P
  return cudaStreamSynchronize((stream_t)(uintptr_t)stream);
}
