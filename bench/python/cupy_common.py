"""What CuPy's sides of the math benches (bench_cupy_gemm.py, bench_cupy_fft_rand.py, bench_cupy_sparse.py) share:
the timing loop of bench/math-*.ts (a pass of `ops` calls, then a stream synchronize; host wall time per call;
the median of `reps` passes after a warm-up pass) and the ONE JSON object each prints on stdout."""

import argparse
import json
import time


def measure(fn, ops, stream, reps=5, sort_reps=True):
    """{"median": ns per call, "reps": ns per call of each pass (ascending unless sort_reps is False)}."""
    fn(max(1, ops // 10))
    stream.synchronize()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn(ops)
        stream.synchronize()
        out.append((time.perf_counter_ns() - t0) / ops)
    ordered = sorted(out)
    return {"median": ordered[len(ordered) // 2], "reps": ordered if sort_reps else out}


def print_skipped(why):
    """The whole script skipped, with its reason."""
    print(json.dumps({"impl": "cupy", "skipped": why}))


def print_not_importable(error):
    print_skipped(f"CuPy not importable: {error}")


def print_rows(cupy, rows, meta=None, **extra):
    """The result: CuPy's version (and `meta`), the rows, and any further top-level keys."""
    print(json.dumps({"impl": "cupy", "meta": {"cupy": cupy.__version__, **(meta or {})}, "rows": rows, **extra}))


def start(flags):
    """Parses the integer options `flags` ({"--name": default}), imports CuPy and makes a blocking stream:
    (options, cupy, stream), or None once the skip is printed where CuPy cannot be imported."""
    p = argparse.ArgumentParser()
    for flag, default in flags.items():
        p.add_argument(flag, type=int, default=default)
    options = p.parse_args()
    try:
        import cupy
    except Exception as e:  # noqa: BLE001
        print_not_importable(e)
        return None
    return options, cupy, cupy.cuda.Stream(non_blocking=False)
