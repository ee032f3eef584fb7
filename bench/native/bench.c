/*
 * bench.c -- the C baseline of `npm run bench` (CUDA driver API only). bench/native/build.sh builds it
 * twice: `bench`, a program of its own (the native-c column), and libbench.so (-DBENCH_SHARED), whose
 * bench_init / bench_pass run the same passes inside a JavaScript process, timed by its clock
 * (native-c-inproc; bench/gpu.ts, bench/runtime-child.ts).
 *
 *   ./bench [kernels.ptx] > native.json     (PTX: argv[1], else $BENCH_PTX, else beside the binary, else ./)
 *   env: BENCH_SCALE (loop-count multiplier), BENCH_DEVICE (ordinal), BENCH_PIN (a CPU to pin the timing
 *        thread to after set-up), BENCH_FLOOR_WARMUP (launches of the launch rows' warm-up; bench/floor.ts)
 *   output: {"impl":"native-c","meta":{...},"rows":{"<row>":{"median","unit":"ns"|"GB/s","n","reps"}}}
 *
 * Method (bench/python/bench_cuda_python.py and bench/gpu-passes.ts do the same): one primary context,
 * one CU_STREAM_NON_BLOCKING stream; per row one untimed warm-up pass, then REPS timed passes, the median
 * of pass time / ops (or bytes / pass time in GB/s); every CUresult checked inside the loops. Launches are
 * grid 1x1x1, block 1x1x1, kernelParams a void*[] built once; the launch and alloc rows synchronize every
 * BATCH operations inside the timed region; the copy rows copy 256 MiB K times, then synchronize once.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REPS 5
#define BATCH 1000
#define COPY_BYTES ((size_t)256 << 20)
#define ALLOC_BYTES ((size_t)1 << 20)
#define MAX_ROWS 32

/* ---------- errors ---------- */

static void die_cu(const char *call, CUresult r, int line) {
    const char *name = NULL, *desc = NULL;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS) name = "?";
    if (cuGetErrorString(r, &desc) != CUDA_SUCCESS) desc = "";
    fprintf(stderr, "bench: %s failed at bench.c:%d: %s (%d) %s\n", call, line, name ? name : "?", (int)r,
            desc ? desc : "");
    exit(2);
}
#define CK(call)                                             \
    do {                                                     \
        CUresult ck_r_ = (call);                             \
        if (ck_r_ != CUDA_SUCCESS) die_cu(#call, ck_r_, __LINE__); \
    } while (0)

static void die(const char *msg, const char *arg) {
    fprintf(stderr, "bench: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    exit(2);
}

/* ---------- timing ---------- */

static inline uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n) {
    double t[REPS];
    memcpy(t, v, sizeof(double) * (size_t)n);
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    return (n & 1) ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* ---------- state shared by the row functions ---------- */

static struct {
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    CUmodule module;
    CUfunction f_empty, f_args4, f_args16;
    CUdeviceptr d_a, d_b;       /* small device buffers used as kernel pointer arguments */
    float alpha;
    unsigned int n;
    void *params4[4];
    CUdeviceptr p16[16];
    void *params16[16];
    CUevent ev_start, ev_stop;
    CUdeviceptr d_big;          /* 256 MiB device buffer for copies */
    void *h_pinned, *h_pageable;
    volatile float sink_f;
    volatile int sink_i;
    volatile uintptr_t sink_p;
} S;

typedef void (*pass_fn)(long ops);

static void pass_ctx_get_current(long ops) {
    CUcontext c = NULL;
    for (long i = 0; i < ops; i++) CK(cuCtxGetCurrent(&c));
    S.sink_p = (uintptr_t)c;
}

static void pass_device_get_attribute(long ops) {
    int v = 0;
    for (long i = 0; i < ops; i++) CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, S.dev));
    S.sink_i = v;
}

static void launch_batched(CUfunction f, void **params, long ops) {
    for (long i = 0; i < ops; i++) {
        CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, S.stream, params, NULL));
        if ((i + 1) % BATCH == 0) CK(cuStreamSynchronize(S.stream));
    }
    if (ops % BATCH) CK(cuStreamSynchronize(S.stream));
}
static void pass_launch_0args(long ops) { launch_batched(S.f_empty, NULL, ops); }
static void pass_launch_4args(long ops) { launch_batched(S.f_args4, S.params4, ops); }
static void pass_launch_16args(long ops) { launch_batched(S.f_args16, S.params16, ops); }

static void pass_launch_sync(long ops) {
    for (long i = 0; i < ops; i++) {
        CK(cuLaunchKernel(S.f_empty, 1, 1, 1, 1, 1, 1, 0, S.stream, NULL, NULL));
        CK(cuStreamSynchronize(S.stream));
    }
}

static void pass_event_record_elapsed(long ops) {
    float ms = 0.f;
    for (long i = 0; i < ops; i++) {
        CK(cuEventRecord(S.ev_start, S.stream));
        CK(cuEventRecord(S.ev_stop, S.stream));
        CK(cuEventSynchronize(S.ev_stop));
        CK(cuEventElapsedTime(&ms, S.ev_start, S.ev_stop));
    }
    S.sink_f = ms;
}

static void pass_alloc_free_async(long ops) {
    CUdeviceptr p = 0;
    for (long i = 0; i < ops; i++) {
        CK(cuMemAllocAsync(&p, ALLOC_BYTES, S.stream));
        CK(cuMemFreeAsync(p, S.stream));
        if ((i + 1) % BATCH == 0) CK(cuStreamSynchronize(S.stream));
    }
    if (ops % BATCH) CK(cuStreamSynchronize(S.stream));
}

static void pass_h2d_pinned(long ops) {
    for (long i = 0; i < ops; i++) CK(cuMemcpyHtoDAsync(S.d_big, S.h_pinned, COPY_BYTES, S.stream));
    CK(cuStreamSynchronize(S.stream));
}
static void pass_d2h_pinned(long ops) {
    for (long i = 0; i < ops; i++) CK(cuMemcpyDtoHAsync(S.h_pinned, S.d_big, COPY_BYTES, S.stream));
    CK(cuStreamSynchronize(S.stream));
}
static void pass_h2d_pageable(long ops) {
    for (long i = 0; i < ops; i++) CK(cuMemcpyHtoDAsync(S.d_big, S.h_pageable, COPY_BYTES, S.stream));
    CK(cuStreamSynchronize(S.stream));
}
static void pass_d2h_pageable(long ops) {
    for (long i = 0; i < ops; i++) CK(cuMemcpyDtoHAsync(S.h_pageable, S.d_big, COPY_BYTES, S.stream));
    CK(cuStreamSynchronize(S.stream));
}

/* ---------- rows ---------- */

typedef struct {
    const char *name;
    const char *unit; /* "ns" or "GB/s" */
    long ops;
    double reps[REPS];
    double med;
} row_t;

static row_t rows[MAX_ROWS];
static int nrows;
static double scale = 1.0;

static long scaled(long base, long multiple) {
    double v = (double)base * scale;
    long n = (long)(v / (double)multiple + 0.5) * multiple;
    return n < multiple ? multiple : n;
}

/* bytes_per_op == 0: unit ns per op; otherwise GB/s. */
static void run_row(const char *name, pass_fn fn, long ops, long warm_ops, size_t bytes_per_op) {
    if (nrows >= MAX_ROWS) die("too many rows", name);
    row_t *r = &rows[nrows++];
    r->name = name;
    r->unit = bytes_per_op ? "GB/s" : "ns";
    r->ops = ops;
    fn(warm_ops);
    for (int k = 0; k < REPS; k++) {
        uint64_t t0 = now_ns();
        fn(ops);
        uint64_t dt = now_ns() - t0;
        if (dt == 0) dt = 1;
        r->reps[k] = bytes_per_op ? (double)bytes_per_op * (double)ops / (double)dt : (double)dt / (double)ops;
    }
    r->med = median(r->reps, REPS);
    fprintf(stderr, "bench: %-24s %12.3f %s\n", name, r->med, r->unit);
}

/* ---------- PTX ---------- */

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) != 0) { fclose(f); return NULL; }
    long len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0) { fclose(f); return NULL; }
    char *buf = malloc((size_t)len + 1);
    if (!buf) { fclose(f); return NULL; }
    size_t got = fread(buf, 1, (size_t)len, f);
    fclose(f);
    if (got != (size_t)len) { free(buf); return NULL; }
    buf[len] = '\0'; /* cuModuleLoadData needs NUL-terminated PTX text */
    return buf;
}

static char ptx_path_used[4096];

static char *load_ptx(int argc, char **argv) {
    const char *cands[4];
    int nc = 0;
    static char beside[4096];
    if (argc > 1) cands[nc++] = argv[1];
    const char *env = getenv("BENCH_PTX");
    if (env && *env) cands[nc++] = env;
    ssize_t n = readlink("/proc/self/exe", beside, sizeof(beside) - 32);
    if (n > 0) {
        beside[n] = '\0';
        char *slash = strrchr(beside, '/');
        if (slash) {
            strcpy(slash + 1, "kernels.ptx");
            cands[nc++] = beside;
        }
    }
    cands[nc++] = "kernels.ptx";
    for (int i = 0; i < nc; i++) {
        char *text = read_file(cands[i]);
        if (text) {
            snprintf(ptx_path_used, sizeof(ptx_path_used), "%s", cands[i]);
            return text;
        }
        if (i == 0 && argc > 1) die("cannot read PTX given as argv[1]", cands[i]);
    }
    die("kernels.ptx not found (pass its path as argv[1] or set BENCH_PTX)", NULL);
    return NULL;
}

/* ---------- JSON ---------- */

static void json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

/* The calling thread's affinity: one CPU, or (cpu < 0) the mask it had at the first call. */
static int pin_thread(int cpu) {
    static cpu_set_t original;
    static int saved;
    if (!saved) {
        if (sched_getaffinity(0, sizeof(original), &original) != 0) return -errno;
        saved = 1;
    }
    cpu_set_t set;
    if (cpu < 0) set = original;
    else {
        if (cpu >= CPU_SETSIZE) return -EINVAL;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
    }
    return sched_setaffinity(0, sizeof(set), &set) != 0 ? -errno : 0;
}

/* The state every pass uses: context, stream, module, kernels, buffers, events. */
static void setup_state(const char *ptx, int ordinal) {
    CK(cuInit(0));
    CK(cuDeviceGet(&S.dev, ordinal));
    CK(cuDevicePrimaryCtxRetain(&S.ctx, S.dev));
    CK(cuCtxSetCurrent(S.ctx));
    CK(cuStreamCreate(&S.stream, CU_STREAM_NON_BLOCKING));
    {
        static char err_log[8192];
        CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
        void *vals[2] = {err_log, (void *)(uintptr_t)sizeof(err_log)};
        CUresult r = cuModuleLoadDataEx(&S.module, ptx, 2, opts, vals);
        if (r != CUDA_SUCCESS) {
            fprintf(stderr, "bench: JIT log for %s:\n%s\n", ptx_path_used, err_log);
            die_cu("cuModuleLoadDataEx(kernels.ptx)", r, __LINE__);
        }
    }
    CK(cuModuleGetFunction(&S.f_empty, S.module, "empty"));
    CK(cuModuleGetFunction(&S.f_args4, S.module, "args4"));
    CK(cuModuleGetFunction(&S.f_args16, S.module, "args16"));
    CK(cuMemAlloc(&S.d_a, 4096));
    CK(cuMemAlloc(&S.d_b, 4096));
    S.alpha = 1.5f;
    S.n = 1024u;
    S.params4[0] = &S.d_a;
    S.params4[1] = &S.d_b;
    S.params4[2] = &S.alpha;
    S.params4[3] = &S.n;
    for (int i = 0; i < 16; i++) {
        S.p16[i] = (i & 1) ? S.d_b : S.d_a;
        S.params16[i] = &S.p16[i];
    }
    CK(cuEventCreate(&S.ev_start, 0));
    CK(cuEventCreate(&S.ev_stop, 0));
    CK(cuMemAlloc(&S.d_big, COPY_BYTES));
    CK(cuMemAllocHost(&S.h_pinned, COPY_BYTES));
    S.h_pageable = malloc(COPY_BYTES);
    if (!S.h_pageable) die("malloc(256 MiB) failed", NULL);
    memset(S.h_pinned, 1, COPY_BYTES);
    memset(S.h_pageable, 2, COPY_BYTES);
}

#ifdef BENCH_SHARED
/* Every pass by row name, for bench_pass. */
static const struct { const char *name; pass_fn fn; } PASSES[] = {
    {"cuCtxGetCurrent", pass_ctx_get_current}, {"cuDeviceGetAttribute", pass_device_get_attribute},
    {"launch_0args", pass_launch_0args}, {"launch_4args", pass_launch_4args}, {"launch_16args", pass_launch_16args},
    {"launch_sync", pass_launch_sync}, {"event_record_elapsed", pass_event_record_elapsed},
    {"alloc_free_async_1MiB", pass_alloc_free_async}, {"h2d_pinned_256MiB", pass_h2d_pinned},
    {"d2h_pinned_256MiB", pass_d2h_pinned}, {"h2d_pageable_256MiB", pass_h2d_pageable}, {"d2h_pageable_256MiB", pass_d2h_pageable},
};
static pass_fn find_pass(const char *row) {
    for (size_t i = 0; i < sizeof(PASSES) / sizeof(PASSES[0]); i++)
        if (strcmp(PASSES[i].name, row) == 0) return PASSES[i].fn;
    return NULL;
}

/* In-process use: bench_init sets up the state as main does (0, or -1 when the PTX cannot be read); a
 * failing CUDA call exits, as in main. */
int bench_init(const char *ptx_path, int ordinal) {
    char *ptx = read_file(ptx_path);
    if (!ptx) return -1;
    snprintf(ptx_path_used, sizeof(ptx_path_used), "%s", ptx_path);
    setup_state(ptx, ordinal);
    free(ptx);
    return 0;
}
/* One pass of a row by name: 0, or -1 for an unknown row. */
int bench_pass(const char *row, long ops) {
    pass_fn fn = find_pass(row);
    if (!fn) return -1;
    fn(ops);
    return 0;
}
/* Pins the calling thread to cpu (-1: back to its affinity at the first call): 0 or -errno. */
int bench_pin_thread(int cpu) { return pin_thread(cpu); }
/* The CPU the calling thread runs on now. */
int bench_current_cpu(void) { return sched_getcpu(); }

#else
static void print_json(const char *dev_name, int cc_major, int cc_minor, int driver_version, int pin, long launch_warm, double total_s) {
    printf("{\"impl\":\"native-c\",\"meta\":{\"device\":");
    json_string(dev_name);
    printf(",\"compute_capability\":\"%d.%d\",\"driver_version\":%d,\"cuda_h_version\":%d,\"ptx\":", cc_major, cc_minor, driver_version,
           CUDA_VERSION);
    json_string(ptx_path_used);
    if (pin >= 0) printf(",\"pin\":%d", pin);
    printf(",\"launch_warmup\":%ld", launch_warm);
    printf(",\"scale\":%g,\"reps\":%d,\"batch\":%d,\"total_s\":%.3f},\"rows\":{", scale, REPS, BATCH, total_s);
    for (int i = 0; i < nrows; i++) {
        row_t *r = &rows[i];
        if (i) putchar(',');
        json_string(r->name);
        printf(":{\"median\":%.4f,\"unit\":\"%s\",\"n\":%ld,\"reps\":[", r->med, r->unit, r->ops);
        for (int k = 0; k < REPS; k++) printf("%s%.4f", k ? "," : "", r->reps[k]);
        printf("]}");
    }
    printf("}}\n");
}

/* A positive number from the environment variable `name`, or `fallback` when it is unset or empty. */
static double env_number(const char *name, double fallback) {
    const char *v = getenv(name);
    if (!v || !*v) return fallback;
    double x = strtod(v, NULL);
    if (!(x > 0)) die(name, "must be a positive number");
    return x;
}

int main(int argc, char **argv) {
    scale = env_number("BENCH_SCALE", 1.0);
    const char *dv = getenv("BENCH_DEVICE");
    int ordinal = dv && *dv ? atoi(dv) : 0;
    uint64_t t_start = now_ns();
    char *ptx = load_ptx(argc, argv);
    setup_state(ptx, ordinal);
    int driver_version = 0, cc_major = 0, cc_minor = 0;
    char dev_name[256] = {0};
    CK(cuDriverGetVersion(&driver_version));
    CK(cuDeviceGetName(dev_name, (int)sizeof(dev_name) - 1, S.dev));
    CK(cuDeviceGetAttribute(&cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, S.dev));
    CK(cuDeviceGetAttribute(&cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, S.dev));

    /* After set-up, so that only this thread is pinned (CUDA's own threads keep the start-up affinity). */
    int pin = -1;
    const char *pv = getenv("BENCH_PIN");
    if (pv && *pv) {
        pin = atoi(pv);
        if (pin < 0 || pin_thread(pin) != 0) die("BENCH_PIN: cannot pin the main thread to that CPU", pv);
    }
    /* The launch rows' warm-up, rounded up to BATCH: the first launches after start-up run slower. */
    long launch_warm = ((long)env_number("BENCH_FLOOR_WARMUP", BATCH) + BATCH - 1) / BATCH * BATCH;

    run_row("cuCtxGetCurrent", pass_ctx_get_current, scaled(1000000, 1000), scaled(100000, 1000), 0);
    run_row("cuDeviceGetAttribute", pass_device_get_attribute, scaled(1000000, 1000), scaled(100000, 1000), 0);
    run_row("launch_0args", pass_launch_0args, scaled(20000, BATCH), launch_warm, 0);
    run_row("launch_4args", pass_launch_4args, scaled(20000, BATCH), launch_warm, 0);
    run_row("launch_16args", pass_launch_16args, scaled(20000, BATCH), launch_warm, 0);
    run_row("launch_sync", pass_launch_sync, scaled(5000, 100), 100, 0);
    run_row("event_record_elapsed", pass_event_record_elapsed, scaled(5000, 100), 100, 0);
    run_row("alloc_free_async_1MiB", pass_alloc_free_async, scaled(20000, BATCH), BATCH, 0);
    run_row("h2d_pinned_256MiB", pass_h2d_pinned, scaled(4, 1), 1, COPY_BYTES);
    run_row("d2h_pinned_256MiB", pass_d2h_pinned, scaled(4, 1), 1, COPY_BYTES);
    run_row("h2d_pageable_256MiB", pass_h2d_pageable, scaled(2, 1), 1, COPY_BYTES);
    run_row("d2h_pageable_256MiB", pass_d2h_pageable, scaled(2, 1), 1, COPY_BYTES);

    CK(cuStreamSynchronize(S.stream));
    free(S.h_pageable);
    CK(cuMemFreeHost(S.h_pinned));
    CK(cuMemFree(S.d_big));
    CK(cuMemFree(S.d_a));
    CK(cuMemFree(S.d_b));
    CK(cuEventDestroy(S.ev_start));
    CK(cuEventDestroy(S.ev_stop));
    CK(cuModuleUnload(S.module));
    CK(cuStreamDestroy(S.stream));
    CK(cuDevicePrimaryCtxRelease(S.dev));
    free(ptx);
    print_json(dev_name, cc_major, cc_minor, driver_version, pin, launch_warm, (double)(now_ns() - t_start) / 1e9);
    return 0;
}
#endif /* BENCH_SHARED */
