#!/usr/bin/env python3
"""CuPy's pageable copies at each size of bench/staging.ts: cudaMemcpyAsync between a numpy array
(pageable) and a CuPy array on a non-blocking stream, then a stream synchronize; the operation of the
h2d/d2h_pageable_256MiB rows of bench_cuda_python.py's CuPy column, at sizes from 1 MiB up.

Run (GPU machine; bench/staging.ts runs it):
    python3 bench/python/bench_cupy_copies.py --sizes 65536,131072,...

Env: BENCH_SCALE, BENCH_DEVICE (as bench_cuda_python.py).
Output on stdout: ONE JSON object {"impl": "cupy-copies", "meta": {...}, "rows": {"h2d_1MiB": row, ...}}
(rows as bench_cuda_python.py's: median GB/s of 5 timed passes after one warm-up pass); meta says how
much of the process's memory is in transparent huge pages (numpy's large arrays may be, V8's are not).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cuda_python import DEVICE, SCALE, Impl, measure, reason  # noqa: E402


def label(n):
    return f"{n >> 20}MiB" if n >= 1 << 20 else f"{n >> 10}KiB"


def ops_for(size):
    """About 256 MiB moved per pass, 1 to 4096 copies (bench/staging.ts's opsFor)."""
    return max(1, min(4096, round((256 << 20) / size * SCALE)))


def anon_huge_kib():
    """This process's anonymous memory in transparent huge pages (numpy asks for them on large arrays;
    V8 does not), or None: the pageable array's page size moves the driver's pageable copies."""
    try:
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                if line.startswith("AnonHugePages:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", required=True, help="comma-separated byte counts")
    sizes = [int(s) for s in ap.parse_args().sizes.split(",") if s.strip()]
    impl = Impl("cupy-copies")
    try:
        import cupy as cp
        import numpy as np
    except Exception as e:  # noqa: BLE001
        print(json.dumps({"impl": "cupy-copies", "meta": {}, "rows": {}, "skipped": reason(e)}))
        return
    impl.meta["version"] = getattr(cp, "__version__", None)
    rt = cp.cuda.runtime
    cp.cuda.Device(DEVICE).use()
    stream = cp.cuda.Stream(non_blocking=True)
    largest = max(sizes)
    d_big = cp.empty(largest, dtype=cp.uint8)
    pageable = np.full(largest, 2, dtype=np.uint8)
    d_ptr, h_ptr = d_big.data.ptr, pageable.ctypes.data
    H2D, D2H = rt.memcpyHostToDevice, rt.memcpyDeviceToHost

    def copier(dst, src, size, kind):
        def run(ops):
            for _ in range(ops):
                rt.memcpyAsync(dst, src, size, kind, stream.ptr)
            stream.synchronize()
        return run

    impl.meta["anonHugePagesKiB"] = anon_huge_kib()
    impl.meta["array"] = "one numpy array of the largest size, np.full (touched once), reused by every copy"
    for size in sizes:
        n = ops_for(size)
        impl.row(f"h2d_{label(size)}", lambda: measure(copier(d_ptr, h_ptr, size, H2D), n, 1, "GB/s", size))
        impl.row(f"d2h_{label(size)}", lambda: measure(copier(h_ptr, d_ptr, size, D2H), n, 1, "GB/s", size))
    stream.synchronize()
    print(json.dumps(impl.result()))


if __name__ == "__main__":
    main()
