/* A stand-in libcuda.so.1 for running `npm run bench` end to end on a machine without a GPU
 * (the bench tests): the entry points bench.c, libbench.so and bench/gpu.ts's set-up, passes and
 * objects layer call, each doing next to nothing, so that the real code around them (the bench's
 * processes, koffi / bun:ffi / Deno.dlopen, the pinning of the timing thread) runs. The figures it gives
 * are the FFI's and the bench's own cost, nothing of a GPU. Copies do not copy (the 256 MiB rows would
 * only measure memcpy); host allocations are real memory (the bench writes into them).
 * Exported under the plain and the _v2 names, as the bindings and cuda.h may ask for either.
 * Written for this project from the signatures in generated/13.0/driver/signatures.txt; no NVIDIA text. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
#define ALIAS(name, target) extern __typeof__(target) name __attribute__((alias(#target)));

static uintptr_t current;           /* the "current context" */
static uintptr_t next_handle = 0x10000;
static uintptr_t handle(void) { return next_handle += 0x100; }

CUresult cuInit(unsigned flags) { (void)flags; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int ordinal) { *d = ordinal; return ordinal == 0 ? 0 : 101; }
CUresult cuDeviceGetName(char *name, int len, int dev) {
    (void)dev;
    if (len > 0) strncpy(name, "fake-cuda-launch (no GPU)", (size_t)len - 1), name[len - 1] = 0;
    return 0;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
    (void)dev;
    *v = attr == 75 ? 9 : attr == 76 ? 0 : attr == 16 ? 132 : 1; /* sm_90, 132 SMs, every flag on */
    return 0;
}
CUresult cuDevicePrimaryCtxRetain(uintptr_t *ctx, int dev) { (void)dev; *ctx = 0x5000; return 0; }
CUresult cuDevicePrimaryCtxRelease(int dev) { (void)dev; return 0; }
ALIAS(cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease)
CUresult cuDevicePrimaryCtxGetState(int dev, unsigned *flags, int *active) { (void)dev; *flags = 0; *active = current != 0; return 0; }
CUresult cuCtxSetCurrent(uintptr_t ctx) { current = ctx; return 0; }
CUresult cuCtxGetCurrent(uintptr_t *ctx) { *ctx = current; return 0; }
CUresult cuCtxGetDevice(int *d) { *d = 0; return 0; }
CUresult cuCtxPushCurrent(uintptr_t ctx) { current = ctx; return 0; }
ALIAS(cuCtxPushCurrent_v2, cuCtxPushCurrent)
CUresult cuCtxPopCurrent(uintptr_t *ctx) { if (ctx) *ctx = current; return 0; }
ALIAS(cuCtxPopCurrent_v2, cuCtxPopCurrent)
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuGetErrorString(int e, const char **s) { (void)e; *s = "fake"; return 0; }
CUresult cuGetErrorName(int e, const char **s) { (void)e; *s = "CUDA_ERROR_FAKE"; return 0; }

CUresult cuStreamCreate(uintptr_t *s, unsigned flags) { (void)flags; *s = handle(); return 0; }
CUresult cuStreamDestroy(uintptr_t s) { (void)s; return 0; }
ALIAS(cuStreamDestroy_v2, cuStreamDestroy)
CUresult cuStreamSynchronize(uintptr_t s) { (void)s; return 0; }
CUresult cuStreamQuery(uintptr_t s) { (void)s; return 0; }

CUresult cuModuleLoadData(uintptr_t *m, const void *image) { (void)image; *m = handle(); return 0; }
CUresult cuModuleLoadDataEx(uintptr_t *m, const void *image, unsigned n, void *opts, void **vals) { (void)n; (void)opts; (void)vals; return cuModuleLoadData(m, image); }
CUresult cuModuleGetFunction(uintptr_t *f, uintptr_t m, const char *name) { (void)m; (void)name; *f = handle(); return 0; }
CUresult cuModuleUnload(uintptr_t m) { (void)m; return 0; }

static volatile unsigned long launches;
CUresult cuLaunchKernel(uintptr_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shmem, uintptr_t stream, void **params, void **extra) {
    (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shmem; (void)stream; (void)params; (void)extra;
    launches++;
    return 0;
}

/* Device memory: addresses only, never dereferenced. Host memory: real. */
static uint64_t next_device = 0x7f0000000000ull;
CUresult cuMemAlloc(uint64_t *p, size_t bytes) { *p = next_device; next_device += (bytes + 0xfffff) & ~(uint64_t)0xfffff; return 0; }
ALIAS(cuMemAlloc_v2, cuMemAlloc)
CUresult cuMemFree(uint64_t p) { (void)p; return 0; }
ALIAS(cuMemFree_v2, cuMemFree)
CUresult cuMemAllocAsync(uint64_t *p, size_t bytes, uintptr_t s) { (void)s; return cuMemAlloc(p, bytes); }
CUresult cuMemFreeAsync(uint64_t p, uintptr_t s) { (void)p; (void)s; return 0; }
CUresult cuMemAllocHost(void **p, size_t bytes) { *p = malloc(bytes ? bytes : 1); return *p ? 0 : 2; }
ALIAS(cuMemAllocHost_v2, cuMemAllocHost)
CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned flags) { (void)flags; return cuMemAllocHost(p, bytes); }
CUresult cuMemFreeHost(void *p) { free(p); return 0; }
CUresult cuMemcpyHtoDAsync(uint64_t d, const void *h, size_t n, uintptr_t s) { (void)d; (void)h; (void)n; (void)s; return 0; }
ALIAS(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync)
CUresult cuMemcpyDtoHAsync(void *h, uint64_t d, size_t n, uintptr_t s) { (void)d; (void)h; (void)n; (void)s; return 0; }
ALIAS(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync)
CUresult cuMemcpyHtoD(uint64_t d, const void *h, size_t n) { (void)d; (void)h; (void)n; return 0; }
ALIAS(cuMemcpyHtoD_v2, cuMemcpyHtoD)
CUresult cuMemcpyDtoH(void *h, uint64_t d, size_t n) { (void)d; (void)h; (void)n; return 0; }
ALIAS(cuMemcpyDtoH_v2, cuMemcpyDtoH)
CUresult cuMemcpy(uint64_t d, uint64_t s, size_t n) { (void)d; (void)s; (void)n; return 0; }

CUresult cuEventCreate(uintptr_t *e, unsigned flags) { (void)flags; *e = handle(); return 0; }
CUresult cuEventDestroy(uintptr_t e) { (void)e; return 0; }
ALIAS(cuEventDestroy_v2, cuEventDestroy)
CUresult cuEventRecord(uintptr_t e, uintptr_t s) { (void)e; (void)s; return 0; }
CUresult cuEventSynchronize(uintptr_t e) { (void)e; return 0; }
CUresult cuEventQuery(uintptr_t e) { (void)e; return 0; }
CUresult cuEventElapsedTime(float *ms, uintptr_t a, uintptr_t b) { (void)a; (void)b; *ms = 0.001f; return 0; }
ALIAS(cuEventElapsedTime_v2, cuEventElapsedTime)
CUresult cuStreamCreateWithPriority(uintptr_t *s, unsigned flags, int priority) { (void)priority; return cuStreamCreate(s, flags); }
CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest) { if (least) *least = 0; if (greatest) *greatest = -5; return 0; }
/* Every pointer is unknown to the "driver" (pageable host memory): each attribute reads as 0. */
CUresult cuPointerGetAttributes(unsigned n, const int *attrs, void **data, uint64_t p) {
    (void)attrs; (void)p;
    for (unsigned i = 0; i < n; i++) if (data[i]) memset(data[i], 0, sizeof(int));
    return 0;
}
CUresult cuStreamWaitEvent(uintptr_t s, uintptr_t e, unsigned flags) { (void)s; (void)e; (void)flags; return 0; }
