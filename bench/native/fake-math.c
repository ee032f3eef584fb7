/* Stand-ins for libcublas, libcublasLt, libcufft, libcusparse and the two context calls of libcuda, for
 * bench/math-cpu.ts on a machine without a GPU: the math objects run their real code (koffi, the binder,
 * the typed layer, the door) around C functions that do nothing, so the time left is what the JS side adds
 * to a library call. Written for this project from the signatures in generated/13.0/{cublas,cublaslt,cufft,
 * cusparse}/binding.ts; no NVIDIA text. One library serves as all four.
 * Build: gcc -O2 -shared -fPIC fake-math.c -o libfakemath.so */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define UNUSED(x) (void)(x)

static uintptr_t current;       /* the "current context" */
static uintptr_t next = 0x1000; /* handles and descriptors handed out */
static int next_plan = 1;
/* Calls seen, so that the bench can check its passes reached C: GEMMs (Sgemm and LtMatmul), FFT executions,
 * SpMVs; and the cuCtxSetCurrent and cusparseDnVecSetValues calls, which a repeated call should not make. */
static long gemms, execs, spmvs, binds, repoints;

int cuCtxGetCurrent(uintptr_t *ctx) { *ctx = current; return 0; }
int cuCtxSetCurrent(uintptr_t ctx) { current = ctx; binds++; return 0; }

/* ---- cuBLAS and cuBLASLt ---- */
int cublasCreate_v2(uintptr_t *h) { *h = next++; return 0; }
int cublasDestroy_v2(uintptr_t h) { UNUSED(h); return 0; }
int cublasSetStream_v2(uintptr_t h, uintptr_t s) { UNUSED(h); UNUSED(s); return 0; }
int cublasSetPointerMode_v2(uintptr_t h, int mode) { UNUSED(h); UNUSED(mode); return 0; }
int cublasSgemm_v2(uintptr_t h, int ta, int tb, int m, int n, int k, const float *alpha, const void *A, int lda, const void *B, int ldb,
                   const float *beta, void *C, int ldc) {
  UNUSED(h); UNUSED(ta); UNUSED(tb); UNUSED(m); UNUSED(n); UNUSED(k); UNUSED(alpha); UNUSED(A); UNUSED(lda); UNUSED(B); UNUSED(ldb);
  UNUSED(beta); UNUSED(C); UNUSED(ldc);
  gemms++;
  return 0;
}
int cublasLtCreate(uintptr_t *h) { *h = next++; return 0; }
int cublasLtDestroy(uintptr_t h) { UNUSED(h); return 0; }
int cublasLtMatmulDescCreate(uintptr_t *d, int compute, int scale) { UNUSED(compute); UNUSED(scale); *d = next++; return 0; }
int cublasLtMatmulDescDestroy(uintptr_t d) { UNUSED(d); return 0; }
int cublasLtMatmulDescSetAttribute(uintptr_t d, int attr, const void *buf, uint64_t size) { UNUSED(d); UNUSED(attr); UNUSED(buf); UNUSED(size); return 0; }
int cublasLtMatmulPreferenceCreate(uintptr_t *p) { *p = next++; return 0; }
int cublasLtMatmulPreferenceDestroy(uintptr_t p) { UNUSED(p); return 0; }
int cublasLtMatmulPreferenceSetAttribute(uintptr_t p, int attr, const void *buf, uint64_t size) { UNUSED(p); UNUSED(attr); UNUSED(buf); UNUSED(size); return 0; }
int cublasLtMatrixLayoutCreate(uintptr_t *l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  UNUSED(type); UNUSED(rows); UNUSED(cols); UNUSED(ld);
  *l = next++;
  return 0;
}
int cublasLtMatrixLayoutDestroy(uintptr_t l) { UNUSED(l); return 0; }
int cublasLtMatrixLayoutSetAttribute(uintptr_t l, int attr, const void *buf, uint64_t size) { UNUSED(l); UNUSED(attr); UNUSED(buf); UNUSED(size); return 0; }
/* One algorithm (a 96-byte cublasLtMatmulHeuristicResult_t: algo bytes, no workspace, state 0, one wave). */
int cublasLtMatmulAlgoGetHeuristic(uintptr_t h, uintptr_t op, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d, uintptr_t pref, int requested,
                                   void *results, int *count) {
  UNUSED(h); UNUSED(op); UNUSED(a); UNUSED(b); UNUSED(c); UNUSED(d); UNUSED(pref);
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
  UNUSED(h); UNUSED(op); UNUSED(alpha); UNUSED(A); UNUSED(ad); UNUSED(B); UNUSED(bd); UNUSED(beta); UNUSED(C); UNUSED(cd); UNUSED(D);
  UNUSED(dd); UNUSED(algo); UNUSED(ws); UNUSED(wsSize); UNUSED(stream);
  gemms++;
  return 0;
}

/* ---- cuFFT ---- */
int cufftCreate(int *plan) { *plan = next_plan++; return 0; }
int cufftDestroy(int plan) { UNUSED(plan); return 0; }
int cufftSetAutoAllocation(int plan, int on) { UNUSED(plan); UNUSED(on); return 0; }
int cufftSetStream(int plan, void *stream) { UNUSED(plan); UNUSED(stream); return 0; }
int cufftSetWorkArea(int plan, void *area) { UNUSED(plan); UNUSED(area); return 0; }
int cufftMakePlanMany64(int plan, int rank, long long *n, long long *inembed, long long istride, long long idist, long long *onembed,
                        long long ostride, long long odist, int type, long long batch, size_t *work) {
  UNUSED(plan); UNUSED(rank); UNUSED(n); UNUSED(inembed); UNUSED(istride); UNUSED(idist); UNUSED(onembed); UNUSED(ostride); UNUSED(odist);
  UNUSED(type); UNUSED(batch);
  *work = 0;
  return 0;
}
int cufftExecC2C(int plan, void *idata, void *odata, int direction) {
  UNUSED(plan); UNUSED(idata); UNUSED(odata); UNUSED(direction);
  execs++;
  return 0;
}

/* ---- cuSPARSE ---- */
int cusparseCreate(uintptr_t *h) { *h = next++; return 0; }
int cusparseDestroy(uintptr_t h) { UNUSED(h); return 0; }
int cusparseSetStream(uintptr_t h, uintptr_t s) { UNUSED(h); UNUSED(s); return 0; }
int cusparseCreateCsr(uintptr_t *d, int64_t rows, int64_t cols, int64_t nnz, void *offsets, void *columns, void *values, int ot, int ct, int base,
                      int vt) {
  UNUSED(rows); UNUSED(cols); UNUSED(nnz); UNUSED(offsets); UNUSED(columns); UNUSED(values); UNUSED(ot); UNUSED(ct); UNUSED(base); UNUSED(vt);
  *d = next++;
  return 0;
}
int cusparseDestroySpMat(uintptr_t d) { UNUSED(d); return 0; }
int cusparseCreateDnVec(uintptr_t *d, int64_t size, void *values, int vt) { UNUSED(size); UNUSED(values); UNUSED(vt); *d = next++; return 0; }
int cusparseDnVecSetValues(uintptr_t d, void *values) { UNUSED(d); UNUSED(values); repoints++; return 0; }
int cusparseDestroyDnVec(uintptr_t d) { UNUSED(d); return 0; }
int cusparseSpMV_bufferSize(uintptr_t h, int op, const void *alpha, uintptr_t a, uintptr_t x, const void *beta, uintptr_t y, int ct, int alg,
                            size_t *size) {
  UNUSED(h); UNUSED(op); UNUSED(alpha); UNUSED(a); UNUSED(x); UNUSED(beta); UNUSED(y); UNUSED(ct); UNUSED(alg);
  *size = 0;
  return 0;
}
int cusparseSpMV(uintptr_t h, int op, const void *alpha, uintptr_t a, uintptr_t x, const void *beta, uintptr_t y, int ct, int alg, void *buffer) {
  UNUSED(h); UNUSED(op); UNUSED(alpha); UNUSED(a); UNUSED(x); UNUSED(beta); UNUSED(y); UNUSED(ct); UNUSED(alg); UNUSED(buffer);
  spmvs++;
  return 0;
}

long fake_gemms(void) { return gemms; }
long fake_execs(void) { return execs; }
long fake_spmvs(void) { return spmvs; }
long fake_binds(void) { return binds; }
long fake_repoints(void) { return repoints; }

/* The C side's passes, as bench/native/math-*.c make them: `ops` calls through a pointer the compiler cannot
 * see through (as a call into the library would be), the floor the JS side is compared with. */
int (*volatile fake_sgemm)(uintptr_t, int, int, int, int, int, const float *, const void *, int, const void *, int, const float *, void *,
                           int) = cublasSgemm_v2;
int (*volatile fake_exec)(int, void *, void *, int) = cufftExecC2C;
int (*volatile fake_spmv)(uintptr_t, int, const void *, uintptr_t, uintptr_t, const void *, uintptr_t, int, int, void *) = cusparseSpMV;
static const float one = 1.0f, zero = 0.0f;

int fake_sgemm_pass(uint64_t h, uint64_t a, uint64_t b, uint64_t c, long ops) {
  for (long i = 0; i < ops; i++) {
    int st = fake_sgemm(h, 0, 0, 64, 64, 64, &one, (const void *)(uintptr_t)a, 64, (const void *)(uintptr_t)b, 64, &zero, (void *)(uintptr_t)c, 64);
    if (st != 0) return st;
  }
  return 0;
}
int fake_fft_pass(int plan, uint64_t idata, uint64_t odata, long ops) {
  for (long i = 0; i < ops; i++) {
    int st = fake_exec(plan, (void *)(uintptr_t)idata, (void *)(uintptr_t)odata, -1);
    if (st != 0) return st;
  }
  return 0;
}
int fake_spmv_pass(uint64_t h, uint64_t a, uint64_t x, uint64_t y, long ops) {
  for (long i = 0; i < ops; i++) {
    int st = fake_spmv(h, 0, &one, a, x, &zero, y, 0, 0, NULL);
    if (st != 0) return st;
  }
  return 0;
}
