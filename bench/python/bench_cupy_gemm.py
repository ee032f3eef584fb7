#!/usr/bin/env python3
"""CuPy's side of bench/math-blas.ts: the same GEMMs timed the same way (a pass of `ops` calls, then a
stream synchronize; host wall time per call; the median of 5 passes after a warm-up pass).

    python3 bench/python/bench_cupy_gemm.py --ops-small 20000 --ops-large 20

Rows: gemm_64_f32 (cupy.matmul of two 64x64 float32 arrays into a preallocated out), gemm_4096_f32 and
gemm_4096_f16 (4096x4096, out preallocated; CuPy's default compute for float16 accumulates in float32).
Prints ONE JSON object on stdout: {"impl": "cupy", "meta": {...}, "rows": {name: {"median": ns, "reps": [...]}}}
or {"impl": "cupy", "skipped": why}.
"""

from cupy_common import measure, print_rows, start


def main():
    started = start({"--ops-small": 20000, "--ops-large": 20})
    if started is None:
        return
    a, cupy, stream = started
    rows = {}
    with stream:
        for name, n, dtype, ops in (("gemm_64_f32", 64, cupy.float32, a.ops_small), ("gemm_4096_f32", 4096, cupy.float32, a.ops_large), ("gemm_4096_f16", 4096, cupy.float16, a.ops_large)):
            x = cupy.ones((n, n), dtype=dtype)
            y = cupy.ones((n, n), dtype=dtype)
            out = cupy.empty((n, n), dtype=dtype)

            def run(k, x=x, y=y, out=out):
                for _ in range(k):
                    cupy.matmul(x, y, out=out)

            rows[name] = measure(run, ops, stream)
    print_rows(cupy, rows)


if __name__ == "__main__":
    main()
