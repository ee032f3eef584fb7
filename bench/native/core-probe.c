// Whether a core is quiet: times two plain C loops on every core in turn, then on one core while a
// cache-thrashing loop runs on each other core (docs/runtimes.md, "Quiet repetitions"). No CUDA, no JS.
// Per core "a/b": ns per step of a dependent multiply-add chain (a: moves with clock and shared
// execution units) and of a pointer chase through 256 KiB (b: moves with cache contention).
//   gcc -O2 -o /tmp/core-probe bench/native/core-probe.c && /tmp/core-probe [core, default the last]
// On the H200 machine (2026-12-03) every core swung between 1.35/4.8 and 1.5/6.5 from one round to the
// next with nothing else running, and a busy neighbour inside the VM moved core 15 no more than that.
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    sched_setaffinity(0, sizeof s, &s);
}

/* ns per step of a dependent chain of 64-bit multiply-adds */
static double chain(long n) {
    volatile uint64_t sink;
    uint64_t x = 1;
    double t0 = now_ns();
    for (long i = 0; i < n; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    sink = x;
    (void)sink;
    return (now_ns() - t0) / n;
}

static uint32_t *ring;

/* ns per step of a chase through one random cycle of 256 KiB (Sattolo's shuffle) */
static double chase(long n) {
    uint32_t i = 0;
    double t0 = now_ns();
    for (long k = 0; k < n; k++) i = ring[i];
    volatile uint32_t sink = i;
    (void)sink;
    return (now_ns() - t0) / n;
}

/* a child that writes through 4 MiB forever on `cpu` */
static pid_t busy(int cpu) {
    pid_t p = fork();
    if (p == 0) {
        pin(cpu);
        static char b[4 << 20];
        for (;;)
            for (size_t i = 0; i < sizeof b; i += 64) b[i]++;
    }
    return p;
}

int main(int argc, char **argv) {
    size_t m = 256 * 1024 / 4;
    ring = malloc(m * sizeof *ring);
    if (!ring) return 1;
    for (size_t i = 0; i < m; i++) ring[i] = (uint32_t)i;
    srand(1);
    for (size_t i = m - 1; i > 0; i--) {
        size_t j = (size_t)rand() % i;
        uint32_t t = ring[i];
        ring[i] = ring[j];
        ring[j] = t;
    }
    int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    int target = argc > 1 ? atoi(argv[1]) : ncpu - 1;
    if (target < 0 || target >= ncpu) {
        fprintf(stderr, "core-probe: core %d is not one of 0-%d\n", target, ncpu - 1);
        return 2;
    }
    long n = 50000000;
    printf("alone, ns per step (chain/chase) on each core, 3 rounds:\n");
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < ncpu; c++) {
            pin(c);
            chain(n / 10);
            double a = chain(n), b = chase(n / 10);
            printf(" %d:%.2f/%.2f", c, a, b);
        }
        printf("\n");
    }
    printf("core %d with a busy loop on core k:\n", target);
    pin(target);
    chain(n / 10);
    double a = chain(n), b = chase(n / 10);
    printf(" alone:%.2f/%.2f", a, b);
    for (int k = 0; k < ncpu; k++) {
        if (k == target) continue;
        pid_t p = busy(k);
        usleep(20000);
        pin(target);
        a = chain(n);
        b = chase(n / 10);
        printf(" %d:%.2f/%.2f", k, a, b);
        kill(p, SIGKILL);
        waitpid(p, 0, 0);
    }
    a = chain(n);
    b = chase(n / 10);
    printf("\n alone again:%.2f/%.2f\n", a, b);
    return 0;
}
