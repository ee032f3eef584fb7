/* C's own cost of the two trivial driver calls bench/ffi-overhead.ts times: a loop of n calls in C,
 * linked against the driver library it is built with (the stand-in of fake-cuda.c on the CPU
 * machine), so that each JavaScript column has C's figure from the same process beside it.
 * Written for this project; no NVIDIA text. */
#include <stdint.h>

typedef int CUresult;
CUresult cuCtxGetCurrent(uintptr_t *ctx);
CUresult cuDeviceGetAttribute(int *v, int attr, int dev);

/* n calls of cuCtxGetCurrent; the number of failing calls (0 when all succeed). */
long ffi_loop_ctx(long n) {
  long bad = 0;
  uintptr_t ctx;
  for (long i = 0; i < n; i++) bad += cuCtxGetCurrent(&ctx) != 0;
  return bad;
}

/* n calls of cuDeviceGetAttribute(attr, dev 0); the number of failing calls. */
long ffi_loop_attr(long n, int attr) {
  long bad = 0;
  int v;
  for (long i = 0; i < n; i++) bad += cuDeviceGetAttribute(&v, attr, 0) != 0;
  return bad;
}
