// The C side of bench/math-sparse.ts: the same cuSPARSE SpMV the Sparse object makes, in the same
// process (a shared library loaded through koffi), so the ratio compares the object's host path with
// C's on one clock. The matrix and vectors are the bench's own device buffers (addresses passed as
// 64-bit integers), on the bench's stream. Built by the bench with gcc against libcusparse.so.12 and
// libcudart.so.13 (no headers needed: the prototypes below are the libraries' C ABI).
//
// Build by hand: gcc -O2 -shared -fPIC math-sparse.c -o libsparsebench.so followed by the paths of
// libcusparse.so.12 and libcudart.so.13 (in /usr/local/cuda/lib64).
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef void *handle_t;
typedef void *stream_t;

extern int cusparseCreate(handle_t *handle);
extern int cusparseDestroy(handle_t handle);
extern int cusparseSetStream(handle_t handle, stream_t stream);
extern int cusparseCreateCsr(handle_t *descr, int64_t rows, int64_t cols, int64_t nnz, void *offsets, void *columns, void *values,
                             int offsetType, int columnType, int base, int valueType);
extern int cusparseDestroySpMat(handle_t descr);
extern int cusparseCreateDnVec(handle_t *descr, int64_t size, void *values, int valueType);
extern int cusparseDestroyDnVec(handle_t descr);
extern int cusparseSpMV_bufferSize(handle_t handle, int op, const void *alpha, handle_t A, handle_t x, const void *beta, handle_t y, int computeType,
                                   int alg, size_t *size);
extern int cusparseSpMV(handle_t handle, int op, const void *alpha, handle_t A, handle_t x, const void *beta, handle_t y, int computeType, int alg,
                        void *buffer);
extern int cudaMalloc(void **ptr, size_t size);
extern int cudaFree(void *ptr);
extern int cudaStreamSynchronize(stream_t stream);

enum { INDEX_32I = 2, BASE_ZERO = 0, R_32F = 0, OP_N = 0, SPMV_DEFAULT = 0 };

struct spmv {
  handle_t handle, A, x, y;
  void *buffer;
  float alpha, beta;
};

/** A handle on `stream`, a CSR f32 matrix (i32 indices) and x, y descriptors over the given device arrays, the
 *  workspace sized and allocated: what the object holds after its first call. The state, or 0 on failure. */
uint64_t ms_spmv_create(int64_t rows, int64_t cols, int64_t nnz, uint64_t offsets, uint64_t columns, uint64_t values, uint64_t x, uint64_t y,
                        uint64_t stream) {
  struct spmv *s = calloc(1, sizeof *s);
  size_t size = 0;
  s->alpha = 1.0f;
  s->beta = 0.0f;
  if (cusparseCreate(&s->handle) != 0) return free(s), 0;
  if (cusparseSetStream(s->handle, (stream_t)(uintptr_t)stream) != 0 ||
      cusparseCreateCsr(&s->A, rows, cols, nnz, (void *)(uintptr_t)offsets, (void *)(uintptr_t)columns, (void *)(uintptr_t)values, INDEX_32I,
                        INDEX_32I, BASE_ZERO, R_32F) != 0 ||
      cusparseCreateDnVec(&s->x, cols, (void *)(uintptr_t)x, R_32F) != 0 || cusparseCreateDnVec(&s->y, rows, (void *)(uintptr_t)y, R_32F) != 0 ||
      cusparseSpMV_bufferSize(s->handle, OP_N, &s->alpha, s->A, s->x, &s->beta, s->y, R_32F, SPMV_DEFAULT, &size) != 0 ||
      (size > 0 && cudaMalloc(&s->buffer, size) != 0))
    return 0;
  return (uint64_t)(uintptr_t)s;
}

/** `ops` SpMVs y = A x, then a synchronize of `stream`; 0 or the failing status. */
int ms_spmv_pass(uint64_t state, long ops, uint64_t stream) {
  struct spmv *s = (struct spmv *)(uintptr_t)state;
  for (long i = 0; i < ops; i++) {
    int st = cusparseSpMV(s->handle, OP_N, &s->alpha, s->A, s->x, &s->beta, s->y, R_32F, SPMV_DEFAULT, s->buffer);
    if (st != 0) return st;
  }
  return cudaStreamSynchronize((stream_t)(uintptr_t)stream);
}

int ms_spmv_destroy(uint64_t state) {
  struct spmv *s = (struct spmv *)(uintptr_t)state;
  cusparseDestroyDnVec(s->x);
  cusparseDestroyDnVec(s->y);
  cusparseDestroySpMat(s->A);
  if (s->buffer) cudaFree(s->buffer);
  int st = cusparseDestroy(s->handle);
  free(s);
  return st;
}
