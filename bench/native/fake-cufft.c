/* Stand-ins for libcufft and the two context calls of libcuda, for bench/math-fft-cpu.ts on a machine
 * without a GPU: FftPlan.create and the one-liners run their real code (koffi, the binder, the typed
 * layer, the door) around C functions that do nothing, so the time left is what the JS side adds to a
 * cufftExecC2C. Written for this project from the signatures in generated/13.0/cufft/binding.ts; no
 * NVIDIA text. Build: gcc -O2 -shared -fPIC fake-cufft.c -o libfakecufft.so */
#include <stdint.h>
#include <stddef.h>

static uintptr_t current;   /* the "current context" */
static int next_plan = 1;
static long execs;          /* executions seen, so that the bench can check its passes reached C */

int cuCtxGetCurrent(uintptr_t *ctx) { *ctx = current; return 0; }
int cuCtxSetCurrent(uintptr_t ctx) { current = ctx; return 0; }

int cufftCreate(int *plan) { *plan = next_plan++; return 0; }
int cufftDestroy(int plan) { (void)plan; return 0; }
int cufftSetAutoAllocation(int plan, int on) { (void)plan; (void)on; return 0; }
int cufftSetStream(int plan, void *stream) { (void)plan; (void)stream; return 0; }
int cufftSetWorkArea(int plan, void *area) { (void)plan; (void)area; return 0; }
int cufftMakePlanMany64(int plan, int rank, long long *n, long long *inembed, long long istride, long long idist,
                        long long *onembed, long long ostride, long long odist, int type, long long batch, size_t *work) {
  (void)plan; (void)rank; (void)n; (void)inembed; (void)istride; (void)idist; (void)onembed; (void)ostride; (void)odist; (void)type; (void)batch;
  *work = 0;
  return 0;
}
int cufftExecC2C(int plan, void *idata, void *odata, int direction) {
  (void)plan; (void)idata; (void)odata; (void)direction;
  execs++;
  return 0;
}
long fake_cufft_execs(void) { return execs; }

/* The C side's pass: `ops` calls through a pointer the compiler cannot see through (as a call into
 * libcufft would be), the floor the JS side is compared with. */
int (*volatile fake_exec)(int, void *, void *, int) = cufftExecC2C;
int fake_fft_pass(int plan, uint64_t idata, uint64_t odata, long ops) {
  for (long i = 0; i < ops; i++) {
    int st = fake_exec(plan, (void *)(uintptr_t)idata, (void *)(uintptr_t)odata, -1);
    if (st != 0) return st;
  }
  return 0;
}
