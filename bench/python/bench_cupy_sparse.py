#!/usr/bin/env python3
"""CuPy's side of bench/math-sparse.ts: y = A x on a 10,000-row CSR float32 matrix with 8 elements per row
(int32 indices; its own random pattern of distinct sorted columns, the same shape and density as the bench's)
and x all ones, timed the same way: a pass of `ops` calls, then a stream synchronize; host wall time per call;
the median of `reps` passes after a warm-up pass.

    python3 bench/python/bench_cupy_sparse.py --ops 20000 --reps 9

Rows: matmul (`A @ x`, cupyx.scipy.sparse.csr_matrix: CuPy's descriptors and a new y from its memory pool at
each call), spmv_out (cupyx.cusparse.spmv(A, x, y=y) into a preallocated y; skipped where that CuPy lacks the
generic API). Prints ONE JSON object on stdout:
{"impl": "cupy", "meta": {...}, "rows": {name: {"median": ns, "reps": [...]}}, "skipped_rows": {name: why}}
or {"impl": "cupy", "skipped": why}.
"""

from cupy_common import measure, print_not_importable, print_rows, print_skipped, start

ROWS = 10_000
PER_ROW = 8


def host_csr(numpy):
    rng = numpy.random.default_rng(12345)
    offsets = numpy.arange(ROWS + 1, dtype=numpy.int32) * PER_ROW
    columns = numpy.empty(ROWS * PER_ROW, dtype=numpy.int32)
    for r in range(ROWS):
        columns[r * PER_ROW:(r + 1) * PER_ROW] = numpy.sort(rng.choice(ROWS, PER_ROW, replace=False))
    values = (rng.random(ROWS * PER_ROW, dtype=numpy.float32) * 2 - 1).astype(numpy.float32)
    return offsets, columns, values


def main():
    started = start({"--ops": 20000, "--reps": 9})
    if started is None:
        return
    a, cupy, stream = started
    try:
        import cupyx.scipy.sparse as sparse
        import numpy
    except Exception as e:  # noqa: BLE001
        print_not_importable(e)
        return
    rows, skipped = {}, {}
    with stream:
        offsets, columns, values = host_csr(numpy)
        A = sparse.csr_matrix((cupy.asarray(values), cupy.asarray(columns), cupy.asarray(offsets)), shape=(ROWS, ROWS))
        x = cupy.ones(ROWS, dtype=cupy.float32)
        y = cupy.empty(ROWS, dtype=cupy.float32)

        def matmul(ops):
            for _ in range(ops):
                A @ x

        rows["matmul"] = measure(matmul, a.ops, stream, a.reps, sort_reps=False)
        try:
            import cupyx.cusparse as cusparse

            if not hasattr(cusparse, "spmv") or not cusparse.check_availability("spmv"):
                raise RuntimeError("cupyx.cusparse.spmv is not available in this CuPy")

            def spmv_out(ops):
                for _ in range(ops):
                    cusparse.spmv(A, x, y=y)

            rows["spmv_out"] = measure(spmv_out, a.ops, stream, a.reps, sort_reps=False)
        except Exception as e:  # noqa: BLE001
            skipped["spmv_out"] = str(e)
        # the product itself, so a wrong setup cannot pass for a fast one
        ref = values.reshape(ROWS, PER_ROW).sum(axis=1)  # x is all ones: each row's sum
        got = cupy.asnumpy(A @ x)
        if not numpy.allclose(got, ref, rtol=1e-4, atol=1e-5):
            print_skipped("CuPy's A @ x differs from the host product")
            return
    print_rows(cupy, rows, {"ops": a.ops, "reps": a.reps}, skipped_rows=skipped)


if __name__ == "__main__":
    main()
