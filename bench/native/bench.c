/*
 * bench.c -- native C baseline for the cuda-ts binding benchmarks (CUDA driver API only).
 *
 * Build (bench/native/build.sh does this and tries each way in turn):
 *   gcc -O2 -std=c11 -I/usr/local/cuda/include bench.c -o bench -L/usr/local/cuda/lib64/stubs -lcuda
 *   gcc -O2 -std=c11 -I/usr/local/cuda/include bench.c -o bench /usr/lib/x86_64-linux-gnu/libcuda.so.1
 *
 * Run:
 *   ./bench [kernels.ptx] > native.json
 *   The PTX is found as: argv[1], else $BENCH_PTX, else kernels.ptx next to the binary, else ./kernels.ptx.
 *   $BENCH_SCALE (default 1) multiplies every loop count (e.g. 0.1 for a smoke run).
 *   $BENCH_DEVICE (default 0) picks the device ordinal.
 *   $BENCH_ROWS (default: all) a comma-separated list of the rows to run.
 *   $BENCH_PIN (default: unset) a CPU to pin the main thread to after set-up, before the first row
 *   (docs/performance.md, "The C floor"); meta gets "pin" then.
 *   $BENCH_FLOOR_WARMUP (default: 1000) launches of the untimed warm-up pass of the launch_* rows
 *   (rounded up to 1000), as the in-process floor gets them (bench/floor.ts); meta "launch_warmup".
 *
 * Output: ONE JSON object on stdout (diagnostics go to stderr):
 *   {"impl":"native-c","meta":{...},
 *    "rows":{"<name>":{"median":X,"unit":"ns"|"GB/s","n":OPS_PER_REP,"reps":[r1,..,r5]}, ...}}
 *
 * Method (identical in bench/python/bench_cuda_python.py; keep them in step):
 *   - One primary context (cuDevicePrimaryCtxRetain + cuCtxSetCurrent), one stream created with
 *     CU_STREAM_NON_BLOCKING; all work goes to that stream.
 *   - Each row: one untimed warm-up pass, then REPS (5) timed passes, each timed with
 *     clock_gettime(CLOCK_MONOTONIC) around the whole pass. A rep's value is pass_ns / ops
 *     (unit "ns") or bytes / pass_ns (unit "GB/s", 1 GB = 1e9 bytes). "median" is the median of
 *     the 5 rep values. Every CUresult is checked, inside timed loops too.
 *   - cuCtxGetCurrent / cuDeviceGetAttribute(MULTIPROCESSOR_COUNT): ns per call.
 *   - launch_0args / launch_4args / launch_16args: enqueue throughput. cuLaunchKernel with grid
 *     1x1x1, block 1x1x1, 0 shared memory, kernelParams = a void*[] built once before the loop
 *     (NULL for 0 args), extra = NULL. After every 1000 launches cuStreamSynchronize is called,
 *     INSIDE the timed region; ns/op = pass time / launches (so the sync is amortised over 1000).
 *     The launch count per pass is a multiple of 1000.
 *   - launch_sync: cuLaunchKernel(empty) + cuStreamSynchronize, ns per pair.
 *   - event_record_elapsed: cuEventRecord(start) + cuEventRecord(stop) + cuEventSynchronize(stop)
 *     + cuEventElapsedTime, ns per group of four calls (events created with flags 0).
 *   - alloc_free_async_1MiB: cuMemAllocAsync(1 MiB) + cuMemFreeAsync on the stream (device's
 *     default memory pool, default attributes), cuStreamSynchronize every 1000 pairs inside the
 *     timed region, ns per pair.
 *   - h2d/d2h_{pinned,pageable}_256MiB: a pass = K copies of 256 MiB with cuMemcpy{HtoD,DtoH}Async
 *     on the stream, then one cuStreamSynchronize; GB/s = K * 256 MiB / pass time. Pinned host
 *     memory from cuMemAllocHost, pageable from malloc (touched with memset before timing).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
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

/* $BENCH_ROWS unset or empty: every row; else only the rows it lists (comma-separated). */
static int row_wanted(const char *name) {
    const char *list = getenv("BENCH_ROWS");
    if (!list || !*list) return 1;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

/* bytes_per_op == 0: unit ns per op; otherwise GB/s. */
static void run_row(const char *name, pass_fn fn, long ops, long warm_ops, size_t bytes_per_op) {
    if (!row_wanted(name)) return;
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

static char *read_file(const char *path, size_t *len_out) {
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
    if (len_out) *len_out = (size_t)len;
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
        char *text = read_file(cands[i], NULL);
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

/* Every pass by row name: the shared library's bench_pass looks rows up here. */
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

static long long time_pass(const char *row, long ops) {
    pass_fn fn = find_pass(row);
    if (!fn) return -1;
    uint64_t t0 = now_ns();
    fn(ops);
    return (long long)(now_ns() - t0);
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

#ifdef BENCH_SHARED
/* In-process use (bench/gpu.ts loads libbench.so and times these passes with its own clock, interleaved
 * with the JS implementations): bench_init sets up the same state as main, bench_pass runs one pass of
 * a row by name (returns 0, or -1 for an unknown row; a failing CUDA call exits as in main). */
static int setup_state(const char *ptx, int ordinal);
int bench_init(const char *ptx_path, int ordinal) {
    size_t len = 0;
    char *ptx = read_file(ptx_path, &len);
    if (!ptx) return -1;
    int r = setup_state(ptx, ordinal);
    free(ptx);
    return r;
}
int bench_pass(const char *row, long ops) {
    pass_fn fn = find_pass(row);
    if (!fn) return -1;
    fn(ops);
    return 0;
}
/* One pass of a row timed with CLOCK_MONOTONIC inside C: ns, or -1 for an unknown row. */
long long bench_time_pass(const char *row, long ops) { return time_pass(row, ops); }
/* Pins the calling thread to cpu (-1: back to its affinity at the first call): 0 or -errno. */
int bench_pin_thread(int cpu) { return pin_thread(cpu); }
/* The CPU the calling thread runs on now (sched_getcpu). */
int bench_current_cpu(void) { return sched_getcpu(); }
#endif

/* The state every pass uses: context, stream, module, kernels, buffers, events. */
__attribute__((unused)) static int setup_state(const char *ptx, int ordinal) {
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
    return 0;
}


#ifndef BENCH_SHARED
int main(int argc, char **argv) {
    const char *sc = getenv("BENCH_SCALE");
    if (sc && *sc) {
        scale = strtod(sc, NULL);
        if (!(scale > 0)) die("BENCH_SCALE must be a positive number", sc);
    }
    int ordinal = 0;
    const char *dv = getenv("BENCH_DEVICE");
    if (dv && *dv) ordinal = atoi(dv);

    uint64_t t_start = now_ns();
    char *ptx = load_ptx(argc, argv);

    CK(cuInit(0));
    int driver_version = 0;
    CK(cuDriverGetVersion(&driver_version));
    CK(cuDeviceGet(&S.dev, ordinal));
    char dev_name[256] = {0};
    CK(cuDeviceGetName(dev_name, (int)sizeof(dev_name) - 1, S.dev));
    int cc_major = 0, cc_minor = 0;
    CK(cuDeviceGetAttribute(&cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, S.dev));
    CK(cuDeviceGetAttribute(&cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, S.dev));
    CK(cuDevicePrimaryCtxRetain(&S.ctx, S.dev));
    CK(cuCtxSetCurrent(S.ctx));
    CK(cuStreamCreate(&S.stream, CU_STREAM_NON_BLOCKING));

    /* Load the shared PTX, with the JIT error log on failure. */
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

    /* After set-up, so that only this thread is pinned (CUDA's own threads keep the start-up affinity). */
    int pin = -1;
    const char *pv = getenv("BENCH_PIN");
    if (pv && *pv) {
        pin = atoi(pv);
        if (pin < 0 || pin_thread(pin) != 0) die("BENCH_PIN: cannot pin the main thread to that CPU", pv);
    }

    /* The launch rows' warm-up: some processes were still settling after 3000 launches (docs/performance.md). */
    long launch_warm = BATCH;
    const char *wv = getenv("BENCH_FLOOR_WARMUP");
    if (wv && *wv) {
        long w = atol(wv);
        if (w <= 0) die("BENCH_FLOOR_WARMUP must be a positive number of launches", wv);
        launch_warm = (w + BATCH - 1) / BATCH * BATCH;
    }

    /* Loop counts: about 0.3-0.5 s of measured work per rep set on an H200 at scale 1. */
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
    double total_s = (double)(now_ns() - t_start) / 1e9;

    printf("{\"impl\":\"native-c\",\"meta\":{\"device\":");
    json_string(dev_name);
    printf(",\"compute_capability\":\"%d.%d\",\"driver_version\":%d,\"cuda_h_version\":%d,\"ptx\":", cc_major,
           cc_minor, driver_version, CUDA_VERSION);
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
    return 0;
}
#endif /* BENCH_SHARED */
