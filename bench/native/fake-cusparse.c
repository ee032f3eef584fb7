/* Stand-ins for libcusparse and the two context calls of libcuda, for bench/math-sparse-cpu.ts on a
 * machine without a GPU: Sparse.create, SparseMatrix.csr, DenseVector.of and Sparse.spmv run their real
 * code (koffi, the binder, the typed layer, the door) around C functions that do nothing, so the time
 * left is what the JS side adds to a cusparseSpMV. Written for this project from the signatures in
 * generated/13.0/cusparse/binding.ts; no NVIDIA text. Build: gcc -O2 -shared -fPIC fake-cusparse.c -o libfakecusparse.so */
#include <stddef.h>
#include <stdint.h>

static uintptr_t current;       /* the "current context" */
static uintptr_t next = 0x1000; /* handles and descriptors handed out */
static long spmvs;              /* SpMVs seen, so that the bench can check its passes reached C */
static long repoints;           /* cusparseDnVecSetValues calls */

int cuCtxGetCurrent(uintptr_t *ctx) { *ctx = current; return 0; }
int cuCtxSetCurrent(uintptr_t ctx) { current = ctx; return 0; }

int cusparseCreate(uintptr_t *h) { *h = next++; return 0; }
int cusparseDestroy(uintptr_t h) { (void)h; return 0; }
int cusparseSetStream(uintptr_t h, uintptr_t s) { (void)h; (void)s; return 0; }
int cusparseCreateCsr(uintptr_t *d, int64_t rows, int64_t cols, int64_t nnz, void *offsets, void *columns, void *values, int ot, int ct, int base,
                      int vt) {
  (void)rows; (void)cols; (void)nnz; (void)offsets; (void)columns; (void)values; (void)ot; (void)ct; (void)base; (void)vt;
  *d = next++;
  return 0;
}
int cusparseDestroySpMat(uintptr_t d) { (void)d; return 0; }
int cusparseCreateDnVec(uintptr_t *d, int64_t size, void *values, int vt) {
  (void)size; (void)values; (void)vt;
  *d = next++;
  return 0;
}
int cusparseDnVecSetValues(uintptr_t d, void *values) { (void)d; (void)values; repoints++; return 0; }
int cusparseDestroyDnVec(uintptr_t d) { (void)d; return 0; }
int cusparseSpMV_bufferSize(uintptr_t h, int op, const void *alpha, uintptr_t a, uintptr_t x, const void *beta, uintptr_t y, int ct, int alg,
                            size_t *size) {
  (void)h; (void)op; (void)alpha; (void)a; (void)x; (void)beta; (void)y; (void)ct; (void)alg;
  *size = 0;
  return 0;
}
int cusparseSpMV(uintptr_t h, int op, const void *alpha, uintptr_t a, uintptr_t x, const void *beta, uintptr_t y, int ct, int alg, void *buffer) {
  (void)h; (void)op; (void)alpha; (void)a; (void)x; (void)beta; (void)y; (void)ct; (void)alg; (void)buffer;
  spmvs++;
  return 0;
}
long fake_cusparse_spmvs(void) { return spmvs; }
long fake_cusparse_repoints(void) { return repoints; }

/* The C side's pass, as bench/native/math-sparse.c makes it: `ops` calls through a pointer the compiler
 * cannot see through (as a call into libcusparse would be), the floor the JS side is compared with. */
int (*volatile fake_spmv)(uintptr_t, int, const void *, uintptr_t, uintptr_t, const void *, uintptr_t, int, int, void *) = cusparseSpMV;
int fake_spmv_pass(uint64_t h, uint64_t a, uint64_t x, uint64_t y, long ops) {
  static const float alpha = 1.0f, beta = 0.0f;
  for (long i = 0; i < ops; i++) {
    int st = fake_spmv(h, 0, &alpha, a, x, &beta, y, 0, 0, NULL);
    if (st != 0) return st;
  }
  return 0;
}
