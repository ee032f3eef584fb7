#!/usr/bin/env python3
"""CuPy's side of bench/math-fft-rand.ts: the same rows timed the same way (a pass of `ops` calls, then a
stream synchronize; host wall time per call; the median of 5 passes after a warm-up pass).

    python3 bench/python/bench_cupy_fft_rand.py --ops-1k 20000 --ops-fill 2000 --ops-large 20

Rows: fft_c2c_1k (cupy.fft.fft on a 1024-point complex64 vector: plan from CuPy's cache, output from its
memory pool), uniform_1M (curandGenerateUniform through CuPy's cuRAND binding, cupy.cuda.curand, on a
Philox generator seeded 1 as the C side's, into a preallocated float32 array: CuPy's Generator.random(out=)
cannot fill `out` directly, it draws into a new array, float64 unless dtype is given, and copies),
fft_c2c_16M (cupy.fft.fft of 2**24 complex64 points). Prints ONE JSON object on stdout:
{"impl": "cupy", "meta": {...}, "rows": {name: {"median": ns, "reps": [...]}} } or {"impl": "cupy", "skipped": why}.
"""

from cupy_common import measure, print_rows, start


PHILOX4_32_10 = 161  # curandRngType_t CURAND_RNG_PSEUDO_PHILOX4_32_10, as bench/native/math-fft-rand.c


def curand_module():
    """CuPy's thin cuRAND binding (cupy.cuda.curand; cupy_backends in some releases)."""
    try:
        from cupy.cuda import curand
    except ImportError:
        from cupy_backends.cuda.libs import curand
    return curand


def main():
    started = start({"--ops-1k": 20000, "--ops-fill": 2000, "--ops-large": 20})
    if started is None:
        return
    a, cupy, stream = started
    rows = {}
    with stream:
        small = (cupy.arange(1024, dtype=cupy.float32) * (1 + 1j)).astype(cupy.complex64)

        def fft_small(ops):
            for _ in range(ops):
                cupy.fft.fft(small)

        rows["fft_c2c_1k"] = measure(fft_small, a.ops_1k, stream)
        curand = curand_module()
        gen = curand.createGenerator(PHILOX4_32_10)
        curand.setPseudoRandomGeneratorSeed(gen, 1)
        buf = cupy.empty(1 << 20, dtype=cupy.float32)
        ptr, count = buf.data.ptr, buf.size

        def fill(ops):
            for _ in range(ops):
                curand.generateUniform(gen, ptr, count)  # on the current stream (`with stream`)

        rows["uniform_1M"] = measure(fill, a.ops_fill, stream)
        curand.destroyGenerator(gen)
        large = cupy.ones(1 << 24, dtype=cupy.complex64)

        def fft_large(ops):
            for _ in range(ops):
                cupy.fft.fft(large)

        rows["fft_c2c_16M"] = measure(fft_large, a.ops_large, stream)
    print_rows(cupy, rows)


if __name__ == "__main__":
    main()
