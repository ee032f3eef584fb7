/* Stand-ins for libcublas, libcublasLt and the two context calls of libcuda, for bench/math-blas-cpu.ts on a
 * machine without a GPU: Blas.create/gemm and Matmul.create/plan/execute run their real code (koffi, the
 * binder, the typed layer, the door) around C functions that do nothing, so the time left is what the JS
 * side adds to a cublasSgemm or a cublasLtMatmul. Written for this project from the signatures in
 * generated/13.0/cublas{,lt}/binding.ts; no NVIDIA text.
 * Build: gcc -O2 -shared -fPIC fake-cublas.c -o libfakecublas.so (one library serves as both). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static uintptr_t current;       /* the "current context" */
static uintptr_t next = 0x1000; /* handles and descriptors handed out */
static long gemms;              /* GEMMs seen (Sgemm and LtMatmul), so that the bench can check its passes reached C */
static long binds;              /* cuCtxSetCurrent calls */

int cuCtxGetCurrent(uintptr_t *ctx) { *ctx = current; return 0; }
int cuCtxSetCurrent(uintptr_t ctx) { current = ctx; binds++; return 0; }

int cublasCreate_v2(uintptr_t *h) { *h = next++; return 0; }
int cublasDestroy_v2(uintptr_t h) { (void)h; return 0; }
int cublasSetStream_v2(uintptr_t h, uintptr_t s) { (void)h; (void)s; return 0; }
int cublasSetPointerMode_v2(uintptr_t h, int mode) { (void)h; (void)mode; return 0; }
int cublasSgemm_v2(uintptr_t h, int ta, int tb, int m, int n, int k, const float *alpha, const void *A, int lda, const void *B, int ldb,
                   const float *beta, void *C, int ldc) {
  (void)h; (void)ta; (void)tb; (void)m; (void)n; (void)k; (void)alpha; (void)A; (void)lda; (void)B; (void)ldb; (void)beta; (void)C; (void)ldc;
  gemms++;
  return 0;
}

int cublasLtCreate(uintptr_t *h) { *h = next++; return 0; }
int cublasLtDestroy(uintptr_t h) { (void)h; return 0; }
int cublasLtMatmulDescCreate(uintptr_t *d, int compute, int scale) { (void)compute; (void)scale; *d = next++; return 0; }
int cublasLtMatmulDescDestroy(uintptr_t d) { (void)d; return 0; }
int cublasLtMatmulDescSetAttribute(uintptr_t d, int attr, const void *buf, uint64_t size) { (void)d; (void)attr; (void)buf; (void)size; return 0; }
int cublasLtMatmulPreferenceCreate(uintptr_t *p) { *p = next++; return 0; }
int cublasLtMatmulPreferenceDestroy(uintptr_t p) { (void)p; return 0; }
int cublasLtMatmulPreferenceSetAttribute(uintptr_t p, int attr, const void *buf, uint64_t size) { (void)p; (void)attr; (void)buf; (void)size; return 0; }
int cublasLtMatrixLayoutCreate(uintptr_t *l, int type, uint64_t rows, uint64_t cols, int64_t ld) { (void)type; (void)rows; (void)cols; (void)ld; *l = next++; return 0; }
int cublasLtMatrixLayoutDestroy(uintptr_t l) { (void)l; return 0; }
int cublasLtMatrixLayoutSetAttribute(uintptr_t l, int attr, const void *buf, uint64_t size) { (void)l; (void)attr; (void)buf; (void)size; return 0; }
/* One algorithm (a 96-byte cublasLtMatmulHeuristicResult_t: algo bytes, no workspace, state 0, one wave). */
int cublasLtMatmulAlgoGetHeuristic(uintptr_t h, uintptr_t op, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d, uintptr_t pref, int requested,
                                   void *results, int *count) {
  (void)h; (void)op; (void)a; (void)b; (void)c; (void)d; (void)pref;
  if (requested < 1) return 7;
  unsigned char *r = results;
  memset(r, 0, 96);
  r[0] = 1;
  float waves = 1.0f;
  memcpy(r + 76, &waves, sizeof waves);
  *count = 1;
  return 0;
}
int cublasLtMatmul(uintptr_t h, uintptr_t op, const void *alpha, const void *A, uintptr_t ad, const void *B, uintptr_t bd, const void *beta,
                   const void *C, uintptr_t cd, void *D, uintptr_t dd, const void *algo, void *ws, uint64_t wsSize, uintptr_t stream) {
  (void)h; (void)op; (void)alpha; (void)A; (void)ad; (void)B; (void)bd; (void)beta; (void)C; (void)cd; (void)D; (void)dd; (void)algo; (void)ws;
  (void)wsSize; (void)stream;
  gemms++;
  return 0;
}

long fake_cublas_gemms(void) { return gemms; }
long fake_cublas_binds(void) { return binds; }

/* The C side's pass, as bench/native/math-blas.c makes it: `ops` calls through a pointer the compiler cannot
 * see through (as a call into libcublas would be), the floor the JS side is compared with. */
int (*volatile fake_sgemm)(uintptr_t, int, int, int, int, int, const float *, const void *, int, const void *, int, const float *, void *,
                           int) = cublasSgemm_v2;
int fake_sgemm_pass(uint64_t h, uint64_t a, uint64_t b, uint64_t c, long ops) {
  static const float alpha = 1.0f, beta = 0.0f;
  for (long i = 0; i < ops; i++) {
    int st = fake_sgemm(h, 0, 0, 64, 64, 64, &alpha, (const void *)(uintptr_t)a, 64, (const void *)(uintptr_t)b, 64, &beta, (void *)(uintptr_t)c, 64);
    if (st != 0) return st;
  }
  return 0;
}
