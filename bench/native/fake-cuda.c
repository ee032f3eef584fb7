/* Stand-ins for libcuda and libnvrtc, for `bench/kernel-cache.ts --stand-in` on a machine without a GPU or a
 * CUDA toolkit: the few entry points Program.compile's path calls, with the C signatures the bindings
 * declare, so the objects layer runs its real code (koffi, the binder, the kernel cache) around them.
 * Built twice: -DFAKE_DRIVER gives libcuda.so.1, -DFAKE_NVRTC libnvrtc.so.13. Written for this project
 * from the signatures in generated/13.0/{driver,nvrtc}/binding.ts; no NVIDIA text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef FAKE_DRIVER
typedef int CUresult;
static uintptr_t current;                               /* the "current context" */
CUresult cuInit(unsigned flags) { (void)flags; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int ordinal) { *d = ordinal; return ordinal == 0 ? 0 : 101; }
CUresult cuDevicePrimaryCtxRetain(uintptr_t *ctx, int dev) { (void)dev; *ctx = 0x5000; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return 0; }
CUresult cuDevicePrimaryCtxGetState(int dev, unsigned *flags, int *active) { (void)dev; *flags = 0; *active = current != 0; return 0; }
CUresult cuCtxSetCurrent(uintptr_t ctx) { current = ctx; return 0; }
CUresult cuCtxGetCurrent(uintptr_t *ctx) { *ctx = current; return 0; }
CUresult cuCtxGetDevice(int *d) { *d = 0; return 0; }
CUresult cuCtxPushCurrent_v2(uintptr_t ctx) { current = ctx; return 0; }
CUresult cuCtxPopCurrent_v2(uintptr_t *ctx) { if (ctx) *ctx = current; return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
  (void)dev;
  *v = attr == 75 ? 9 : attr == 76 ? 0 : 1; /* compute capability major/minor: sm_90 */
  return 0;
}
CUresult cuGetErrorString(int e, const char **s) { (void)e; *s = "fake"; return 0; }
CUresult cuGetErrorName(int e, const char **s) { (void)e; *s = "CUDA_ERROR_FAKE"; return 0; }
#endif

#ifdef FAKE_NVRTC
/* A program keeps its source; its "CUBIN" is the source's bytes and compiling it takes
 * FAKE_NVRTC_COMPILE_MS (default 15), about what NVRTC takes for a small kernel. */
typedef struct { char *src; } program;
int nvrtcVersion(int *major, int *minor) { *major = 13; *minor = 0; return 0; }
int nvrtcCreateProgram(program **p, const char *src, const char *name, int n, const char *const *h, const char *const *hn) {
  (void)name; (void)n; (void)h; (void)hn;
  *p = malloc(sizeof(program));
  (*p)->src = strdup(src);
  return 0;
}
int nvrtcDestroyProgram(program **p) { free((*p)->src); free(*p); *p = 0; return 0; }
int nvrtcAddNameExpression(program *p, const char *e) { (void)p; (void)e; return 0; }
int nvrtcCompileProgram(program *p, int n, const char *const *opts) {
  (void)p; (void)n; (void)opts;
  const char *ms = getenv("FAKE_NVRTC_COMPILE_MS");
  long wait = ms ? atol(ms) : 15;
  struct timespec t = { wait / 1000, (wait % 1000) * 1000000L };
  nanosleep(&t, 0);
  return 0;
}
int nvrtcGetProgramLogSize(program *p, size_t *n) { (void)p; *n = 1; return 0; }
int nvrtcGetProgramLog(program *p, char *log) { (void)p; log[0] = 0; return 0; }
int nvrtcGetCUBINSize(program *p, size_t *n) { *n = strlen(p->src); return 0; }
int nvrtcGetCUBIN(program *p, char *out) { memcpy(out, p->src, strlen(p->src)); return 0; }
int nvrtcGetPTXSize(program *p, size_t *n) { (void)p; *n = 0; return 0; }
int nvrtcGetPTX(program *p, char *out) { (void)p; (void)out; return 0; }
int nvrtcGetLTOIRSize(program *p, size_t *n) { (void)p; *n = 0; return 0; }
int nvrtcGetLTOIR(program *p, char *out) { (void)p; (void)out; return 0; }
int nvrtcGetLoweredName(program *p, const char *e, const char **lowered) { (void)p; *lowered = e; return 0; }
const char *nvrtcGetErrorString(int e) { (void)e; return "NVRTC_ERROR_FAKE"; }
#endif
