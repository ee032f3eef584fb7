#!/usr/bin/env python3
"""CuPy's side of the staging and math steps of `npm run bench`, one subcommand each:

    python3 bench/python/bench_cupy.py copies --sizes 1048576,2097152,...    (bench/staging.ts)
    python3 bench/python/bench_cupy.py gemm --ops-small 20000 --ops-large 20   (bench/math-blas.ts)
    python3 bench/python/bench_cupy.py fft-rand --ops-1k 20000 --ops-fill 2000 --ops-large 20
    python3 bench/python/bench_cupy.py sparse --ops 20000 --reps 9

Each row is timed as its TypeScript bench times it: a pass of `ops` calls, then a stream synchronize, after a
warm-up pass; the median of the passes (copies: GB/s; the math rows: ns per call). Prints ONE JSON object on
stdout: {"impl": ..., "meta": {...}, "rows": {name: row}} or {"impl": ..., "skipped": why}.
Env: BENCH_SCALE, BENCH_DEVICE (as bench_cuda_python.py).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cuda_python import DEVICE, REPS, SCALE, Impl, measure, reason  # noqa: E402

PHILOX4_32_10 = 161  # curandRngType_t CURAND_RNG_PSEUDO_PHILOX4_32_10, as bench/native/math-fft-rand.c
SPARSE_ROWS, PER_ROW = 10_000, 8


def timed(fn, ops, stream, reps=REPS):
    """ns per call of `fn(ops)` followed by a stream synchronize."""

    def run(k):
        fn(k)
        stream.synchronize()

    return measure(run, ops, max(1, ops // 10), reps_count=reps)


def label(n):
    return f"{n >> 20}MiB" if n >= 1 << 20 else f"{n >> 10}KiB"


def copies(cp, np, a, impl):
    """cudaMemcpyAsync between one numpy array (pageable, touched once) and device memory on a non-blocking
    stream: the operation of the h2d/d2h_pageable_256MiB rows, at each size; about 256 MiB per pass."""
    rt = cp.cuda.runtime
    stream = cp.cuda.Stream(non_blocking=True)
    sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    d_big = cp.empty(max(sizes), dtype=cp.uint8)
    pageable = np.full(max(sizes), 2, dtype=np.uint8)
    d_ptr, h_ptr = d_big.data.ptr, pageable.ctypes.data

    def copier(dst, src, size, kind):
        def run(ops):
            for _ in range(ops):
                rt.memcpyAsync(dst, src, size, kind, stream.ptr)
            stream.synchronize()

        return run

    for size in sizes:
        n = max(1, min(4096, round((256 << 20) / size * SCALE)))
        impl.row(f"h2d_{label(size)}", lambda: measure(copier(d_ptr, h_ptr, size, rt.memcpyHostToDevice), n, 1, "GB/s", size))
        impl.row(f"d2h_{label(size)}", lambda: measure(copier(h_ptr, d_ptr, size, rt.memcpyDeviceToHost), n, 1, "GB/s", size))
    stream.synchronize()


def gemm(cp, np, a, impl):
    """cupy.matmul into a preallocated out (float16 accumulates in float32 by CuPy's default)."""
    stream = cp.cuda.Stream(non_blocking=False)
    with stream:
        for name, n, dtype, ops in (
            ("gemm_64_f32", 64, cp.float32, a.ops_small),
            ("gemm_4096_f32", 4096, cp.float32, a.ops_large),
            ("gemm_4096_f16", 4096, cp.float16, a.ops_large),
        ):
            x, y, out = cp.ones((n, n), dtype=dtype), cp.ones((n, n), dtype=dtype), cp.empty((n, n), dtype=dtype)

            def run(k, x=x, y=y, out=out):
                for _ in range(k):
                    cp.matmul(x, y, out=out)

            impl.row(name, lambda: timed(run, ops, stream))


def fft_rand(cp, np, a, impl):
    """cupy.fft.fft of 1k and 2**24 complex64 points (plans from CuPy's cache); curandGenerateUniform through
    CuPy's cuRAND binding on a Philox generator seeded 1, into a preallocated float32 array (Generator.random
    cannot fill `out` directly)."""
    try:
        from cupy.cuda import curand
    except ImportError:
        from cupy_backends.cuda.libs import curand
    stream = cp.cuda.Stream(non_blocking=False)
    with stream:
        small = (cp.arange(1024, dtype=cp.float32) * (1 + 1j)).astype(cp.complex64)
        large = cp.ones(1 << 24, dtype=cp.complex64)
        gen = curand.createGenerator(PHILOX4_32_10)
        curand.setPseudoRandomGeneratorSeed(gen, 1)
        buf = cp.empty(1 << 20, dtype=cp.float32)
        ptr, count = buf.data.ptr, buf.size

        def fft_of(data):
            def run(ops):
                for _ in range(ops):
                    cp.fft.fft(data)

            return run

        def fill(ops):
            for _ in range(ops):
                curand.generateUniform(gen, ptr, count)  # on the current stream (`with stream`)

        impl.row("fft_c2c_1k", lambda: timed(fft_of(small), a.ops_1k, stream))
        impl.row("uniform_1M", lambda: timed(fill, a.ops_fill, stream))
        impl.row("fft_c2c_16M", lambda: timed(fft_of(large), a.ops_large, stream))
        curand.destroyGenerator(gen)


def sparse(cp, np, a, impl):
    """y = A x on a 10,000-row CSR float32 matrix, 8 distinct sorted columns per row, x all ones: `A @ x` (a new y
    from CuPy's pool each call) and cupyx.cusparse.spmv into a preallocated y; the product checked on the host."""
    import cupyx.scipy.sparse as sp

    rng = np.random.default_rng(12345)
    offsets = np.arange(SPARSE_ROWS + 1, dtype=np.int32) * PER_ROW
    columns = np.concatenate([np.sort(rng.choice(SPARSE_ROWS, PER_ROW, replace=False)) for _ in range(SPARSE_ROWS)]).astype(np.int32)
    values = (rng.random(SPARSE_ROWS * PER_ROW, dtype=np.float32) * 2 - 1).astype(np.float32)
    stream = cp.cuda.Stream(non_blocking=False)
    with stream:
        A = sp.csr_matrix((cp.asarray(values), cp.asarray(columns), cp.asarray(offsets)), shape=(SPARSE_ROWS, SPARSE_ROWS))
        x, y = cp.ones(SPARSE_ROWS, dtype=cp.float32), cp.empty(SPARSE_ROWS, dtype=cp.float32)
        if not np.allclose(cp.asnumpy(A @ x), values.reshape(SPARSE_ROWS, PER_ROW).sum(axis=1), rtol=1e-4, atol=1e-5):
            raise RuntimeError("CuPy's A @ x differs from the host product")

        def matmul(ops):
            for _ in range(ops):
                A @ x

        def spmv_out(ops):
            import cupyx.cusparse as cusparse

            if not hasattr(cusparse, "spmv") or not cusparse.check_availability("spmv"):
                raise RuntimeError("cupyx.cusparse.spmv is not available in this CuPy")
            for _ in range(ops):
                cusparse.spmv(A, x, y=y)

        impl.row("spmv_csr_10k", lambda: timed(matmul, a.ops, stream, a.reps))
        impl.row("spmv_csr_10k_out", lambda: timed(spmv_out, a.ops, stream, a.reps))


COMMANDS = {
    "copies": ("cupy-copies", copies, {"--sizes": None}),
    "gemm": ("cupy", gemm, {"--ops-small": 20000, "--ops-large": 20}),
    "fft-rand": ("cupy", fft_rand, {"--ops-1k": 20000, "--ops-fill": 2000, "--ops-large": 20}),
    "sparse": ("cupy", sparse, {"--ops": 20000, "--reps": 9}),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    for command, (_, _, flags) in COMMANDS.items():
        p = sub.add_parser(command)
        for flag, default in flags.items():
            p.add_argument(flag, required=default is None, type=str if default is None else int, default=default)
    a = ap.parse_args()
    name, fn, _ = COMMANDS[a.command]
    try:
        import cupy as cp
        import numpy as np

        cp.cuda.Device(DEVICE).use()
        impl = Impl(name)
        impl.meta["cupy"] = cp.__version__
        fn(cp, np, a, impl)
    except Exception as e:  # noqa: BLE001 - CuPy absent or unusable: the whole command is skipped
        print(json.dumps({"impl": name, "meta": {}, "rows": {}, "skipped": reason(e)}))
        return
    print(json.dumps(impl.result()))


if __name__ == "__main__":
    main()
