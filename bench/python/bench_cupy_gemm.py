#!/usr/bin/env python3
"""CuPy's side of bench/math-blas.ts: the same GEMMs timed the same way (a pass of `ops` calls, then a
stream synchronize; host wall time per call; the median of 5 passes after a warm-up pass).

    python3 bench/python/bench_cupy_gemm.py --ops-small 20000 --ops-large 20

Rows: gemm_64_f32 (cupy.matmul of two 64x64 float32 arrays into a preallocated out), gemm_4096_f32 and
gemm_4096_f16 (4096x4096, out preallocated; CuPy's default compute for float16 accumulates in float32).
Prints ONE JSON object on stdout: {"impl": "cupy", "meta": {...}, "rows": {name: {"median": ns, "reps": [...]}}}
or {"impl": "cupy", "skipped": why}.
"""

import argparse
import json
import time


def measure(fn, ops, stream, reps=5):
    fn(max(1, ops // 10))
    stream.synchronize()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn(ops)
        stream.synchronize()
        out.append((time.perf_counter_ns() - t0) / ops)
    out.sort()
    return {"median": out[len(out) // 2], "reps": out}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ops-small", type=int, default=20000)
    p.add_argument("--ops-large", type=int, default=20)
    a = p.parse_args()
    try:
        import cupy
    except Exception as e:  # noqa: BLE001
        print(json.dumps({"impl": "cupy", "skipped": f"CuPy not importable: {e}"}))
        return
    stream = cupy.cuda.Stream(non_blocking=False)
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
    print(json.dumps({"impl": "cupy", "meta": {"cupy": cupy.__version__}, "rows": rows}))


if __name__ == "__main__":
    main()
