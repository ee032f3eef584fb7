#!/usr/bin/env python3
"""Step 3 of `npm run bench`: the Python columns (cuda-python's cuda.bindings.driver, cuda.core and CuPy), measured
with bench/native/bench.c's method and row names.

    python3 bench/python/bench_cuda_python.py [--ptx bench/native/kernels.ptx]

Env: BENCH_SCALE (loop-count multiplier), BENCH_DEVICE (ordinal), BENCH_BUDGET_S (default 55: rows that would
start later are skipped, so the run stays under a minute).
Output on stdout: ONE JSON list, an object per implementation (progress on stderr):
    [{"impl": "cuda-python", "meta": {...}, "rows": {"<row>": {"median", "unit": "ns"|"GB/s"|"ms", "n", "reps"}}}, ...]
a row that fails is {"skipped": why}, an implementation that cannot be imported or set up {"impl", "skipped"}.

Method (as bench.c's): one untimed warm-up pass, then 5 timed passes (time.perf_counter_ns), median; launches
1x1x1 on one non-blocking stream, a synchronize every 1000 launches inside the timed region; every status checked
in the timed loops. cuda-python and cuda.core launch bench/native/kernels.ptx; CuPy compiles CUDA C kernels of the
same signatures (cupy.RawKernel). Extra rows: launch_*args_prepacked (cuda-python's fastest path: kernelParams as
the address of a void*[] built once, where the plain rows pass the documented (values, types) tuples it re-packs
every call) and nvrtc_compile_small (cuda-python: create, compile for the device, get PTX, destroy; ms each).
"""

import argparse
import ctypes
import json
import os
import statistics
import sys
import time

REPS = 5
BATCH = 1000
COPY_BYTES = 256 << 20
ALLOC_BYTES = 1 << 20

SCALE = float(os.environ.get("BENCH_SCALE", "1") or "1")
DEVICE = int(os.environ.get("BENCH_DEVICE", "0") or "0")
BUDGET_S = float(os.environ.get("BENCH_BUDGET_S", "55") or "55")
T_START = time.monotonic()

CUPY_SOURCE = r"""
extern "C" __global__ void empty() {}
extern "C" __global__ void args4(const float* src, float* dst, float alpha, unsigned int n) {}
extern "C" __global__ void args16(
    void* p0, void* p1, void* p2, void* p3, void* p4, void* p5, void* p6, void* p7,
    void* p8, void* p9, void* p10, void* p11, void* p12, void* p13, void* p14, void* p15) {}
"""

SAXPY_SOURCE = rb"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def log(msg):
    print(f"bench_cuda_python: {msg}", file=sys.stderr, flush=True)


def scaled(base, multiple):
    n = int(round(base * SCALE / multiple)) * multiple
    return max(n, multiple)


def measure(pass_fn, ops, warm_ops, unit="ns", bytes_per_op=0, reps_count=REPS):
    """Runs pass_fn(warm_ops) once untimed, then pass_fn(ops) reps_count times, timed."""
    pass_fn(warm_ops)
    reps = []
    for _ in range(reps_count):
        t0 = time.perf_counter_ns()
        pass_fn(ops)
        dt = time.perf_counter_ns() - t0 or 1
        if unit == "GB/s":
            reps.append(bytes_per_op * ops / dt)
        elif unit == "ms":
            reps.append(dt / 1e6 / ops)
        else:
            reps.append(dt / ops)
    return {"median": round(statistics.median(reps), 4), "unit": unit, "n": ops, "reps": [round(r, 4) for r in reps]}


def reason(exc):
    text = f"{type(exc).__name__}: {exc}".strip()
    return text if len(text) < 400 else text[:400] + "..."


class Impl:
    def __init__(self, name):
        self.name = name
        self.rows = {}
        self.meta = {}

    def row(self, name, thunk):
        """thunk() returns a measure() dict; any exception becomes a skipped row."""
        if time.monotonic() - T_START > BUDGET_S:
            self.rows[name] = {"skipped": f"time budget of {BUDGET_S:g} s used up before this row"}
            log(f"{self.name:12s} {name:28s} skipped (time budget)")
            return
        try:
            r = thunk()
            self.rows[name] = r
            log(f"{self.name:12s} {name:28s} {r['median']:12.3f} {r['unit']}")
        except Exception as e:  # noqa: BLE001 - every failure becomes a skipped row
            self.rows[name] = {"skipped": reason(e)}
            log(f"{self.name:12s} {name:28s} skipped: {reason(e)}")

    def skip(self, name, why):
        self.rows[name] = {"skipped": why}
        log(f"{self.name:12s} {name:28s} skipped: {why}")

    def result(self):
        return {"impl": self.name, "meta": self.meta, "rows": self.rows}


def pkg_version(*dists):
    try:
        from importlib import metadata
    except ImportError:
        return None
    for d in dists:
        try:
            return metadata.version(d)
        except Exception:  # noqa: BLE001
            continue
    return None


# --------------------------------------------------------------------------------------------
# cuda-python: cuda.bindings.driver (cuda-python >= 12.6), or the legacy `from cuda import cuda`
# --------------------------------------------------------------------------------------------

def import_driver():
    try:
        from cuda.bindings import driver
        return driver, "cuda.bindings.driver"
    except ImportError:
        from cuda import cuda as driver  # cuda-python < 12.6
        return driver, "cuda.cuda"


def import_nvrtc():
    try:
        from cuda.bindings import nvrtc
        return nvrtc
    except ImportError:
        from cuda import nvrtc
        return nvrtc


def bench_cuda_python(ptx):
    impl = Impl("cuda-python")
    t0 = time.perf_counter()
    drv, modname = import_driver()
    impl.meta["import_s"] = round(time.perf_counter() - t0, 4)
    impl.meta["module"] = modname
    impl.meta["version"] = pkg_version("cuda-bindings", "cuda-python")
    impl.meta["kernel_source"] = "kernels.ptx via cuModuleLoadData"

    SUCCESS = drv.CUresult.CUDA_SUCCESS

    def ival(e):
        return e.value if hasattr(e, "value") else int(e)

    def ck(res, what):
        err = res[0]
        if err != SUCCESS:
            raise RuntimeError(f"{what} failed: {err!r}")
        if len(res) == 1:
            return None
        return res[1] if len(res) == 2 else res[1:]

    ck(drv.cuInit(0), "cuInit")
    impl.meta["driver_version"] = ck(drv.cuDriverGetVersion(), "cuDriverGetVersion")
    dev = ck(drv.cuDeviceGet(DEVICE), "cuDeviceGet")
    name = ck(drv.cuDeviceGetName(256, dev), "cuDeviceGetName")
    impl.meta["device"] = bytes(name).split(b"\0", 1)[0].decode(errors="replace")
    A = drv.CUdevice_attribute
    cc_major = ck(drv.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute")
    cc_minor = ck(drv.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute")
    impl.meta["compute_capability"] = f"{cc_major}.{cc_minor}"
    ctx = ck(drv.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    ck(drv.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    stream = ck(drv.cuStreamCreate(ival(drv.CUstream_flags.CU_STREAM_NON_BLOCKING)), "cuStreamCreate")

    module = ck(drv.cuModuleLoadData(ptx), "cuModuleLoadData(kernels.ptx)")
    f_empty = ck(drv.cuModuleGetFunction(module, b"empty"), "cuModuleGetFunction(empty)")
    f_args4 = ck(drv.cuModuleGetFunction(module, b"args4"), "cuModuleGetFunction(args4)")
    f_args16 = ck(drv.cuModuleGetFunction(module, b"args16"), "cuModuleGetFunction(args16)")

    d_a = ck(drv.cuMemAlloc(4096), "cuMemAlloc")
    d_b = ck(drv.cuMemAlloc(4096), "cuMemAlloc")
    # Documented tuple form: values + ctypes types (None = a cuda-python object passed by address).
    params4 = ((d_a, d_b, 1.5, 1024), (None, None, ctypes.c_float, ctypes.c_uint))
    params16 = (tuple(d_b if i & 1 else d_a for i in range(16)), (None,) * 16)
    # Prepacked: a void*[] pointing at ctypes storage, passed as an int address (built once).
    c_a = ctypes.c_uint64(int(d_a))
    c_b = ctypes.c_uint64(int(d_b))
    c_alpha = ctypes.c_float(1.5)
    c_n = ctypes.c_uint(1024)
    arr4 = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in (c_a, c_b, c_alpha, c_n)])
    c16 = [c_b if i & 1 else c_a for i in range(16)]
    arr16 = (ctypes.c_void_p * 16)(*[ctypes.addressof(v) for v in c16])
    params4_packed = ctypes.addressof(arr4)
    params16_packed = ctypes.addressof(arr16)

    cuLaunchKernel = drv.cuLaunchKernel
    cuStreamSynchronize = drv.cuStreamSynchronize

    def fail(what, res):
        raise RuntimeError(f"{what} failed: {res[0]!r}")

    def launch_batched(fn, params):
        def run(ops):
            for _ in range(ops // BATCH):
                for _ in range(BATCH):
                    r = cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, params, 0)
                    if r[0] != SUCCESS:
                        fail("cuLaunchKernel", r)
                r = cuStreamSynchronize(stream)
                if r[0] != SUCCESS:
                    fail("cuStreamSynchronize", r)
        return run

    def p_ctx(ops):
        f = drv.cuCtxGetCurrent
        for _ in range(ops):
            r = f()
            if r[0] != SUCCESS:
                fail("cuCtxGetCurrent", r)

    attr_sm = A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT

    def p_attr(ops):
        f = drv.cuDeviceGetAttribute
        for _ in range(ops):
            r = f(attr_sm, dev)
            if r[0] != SUCCESS:
                fail("cuDeviceGetAttribute", r)

    def p_launch_sync(ops):
        for _ in range(ops):
            r = cuLaunchKernel(f_empty, 1, 1, 1, 1, 1, 1, 0, stream, None, 0)
            if r[0] != SUCCESS:
                fail("cuLaunchKernel", r)
            r = cuStreamSynchronize(stream)
            if r[0] != SUCCESS:
                fail("cuStreamSynchronize", r)

    impl.row("cuCtxGetCurrent", lambda: measure(p_ctx, scaled(100000, 1000), scaled(10000, 1000)))
    impl.row("cuDeviceGetAttribute", lambda: measure(p_attr, scaled(100000, 1000), scaled(10000, 1000)))
    impl.row("launch_0args", lambda: measure(launch_batched(f_empty, None), scaled(5000, BATCH), BATCH))
    impl.row("launch_4args", lambda: measure(launch_batched(f_args4, params4), scaled(5000, BATCH), BATCH))
    impl.row("launch_16args", lambda: measure(launch_batched(f_args16, params16), scaled(5000, BATCH), BATCH))
    impl.row("launch_4args_prepacked",
             lambda: measure(launch_batched(f_args4, params4_packed), scaled(5000, BATCH), BATCH))
    impl.row("launch_16args_prepacked",
             lambda: measure(launch_batched(f_args16, params16_packed), scaled(5000, BATCH), BATCH))
    impl.row("launch_sync", lambda: measure(p_launch_sync, scaled(3000, 100), 100))

    # Events
    ev_flags = ival(drv.CUevent_flags.CU_EVENT_DEFAULT)
    ev_start = ck(drv.cuEventCreate(ev_flags), "cuEventCreate")
    ev_stop = ck(drv.cuEventCreate(ev_flags), "cuEventCreate")
    elapsed = getattr(drv, "cuEventElapsedTime", None) or getattr(drv, "cuEventElapsedTime_v2")

    def p_event(ops):
        rec, esync = drv.cuEventRecord, drv.cuEventSynchronize
        for _ in range(ops):
            r = rec(ev_start, stream)
            if r[0] != SUCCESS:
                fail("cuEventRecord", r)
            r = rec(ev_stop, stream)
            if r[0] != SUCCESS:
                fail("cuEventRecord", r)
            r = esync(ev_stop)
            if r[0] != SUCCESS:
                fail("cuEventSynchronize", r)
            r = elapsed(ev_start, ev_stop)
            if r[0] != SUCCESS:
                fail("cuEventElapsedTime", r)

    impl.row("event_record_elapsed", lambda: measure(p_event, scaled(3000, 100), 100))

    def p_alloc_free(ops):
        alloc, free = drv.cuMemAllocAsync, drv.cuMemFreeAsync
        for i in range(ops):
            r = alloc(ALLOC_BYTES, stream)
            if r[0] != SUCCESS:
                fail("cuMemAllocAsync", r)
            r = free(r[1], stream)
            if r[0] != SUCCESS:
                fail("cuMemFreeAsync", r)
            if (i + 1) % BATCH == 0:
                r = cuStreamSynchronize(stream)
                if r[0] != SUCCESS:
                    fail("cuStreamSynchronize", r)
        ck(cuStreamSynchronize(stream), "cuStreamSynchronize")

    impl.row("alloc_free_async_1MiB", lambda: measure(p_alloc_free, scaled(10000, BATCH), BATCH))

    # Copies
    d_big = h_pinned = None
    try:
        d_big = ck(drv.cuMemAlloc(COPY_BYTES), "cuMemAlloc(256 MiB)")
        h_pinned = ck(drv.cuMemAllocHost(COPY_BYTES), "cuMemAllocHost(256 MiB)")
        h_pinned = int(h_pinned)
        ctypes.memset(h_pinned, 1, COPY_BYTES)
        pageable = ctypes.create_string_buffer(COPY_BYTES)
        ctypes.memset(pageable, 2, COPY_BYTES)
        h_pageable = ctypes.addressof(pageable)

        def copier(fn, what, dst, src):
            def run(ops):
                for _ in range(ops):
                    r = fn(dst, src, COPY_BYTES, stream)
                    if r[0] != SUCCESS:
                        fail(what, r)
                ck(cuStreamSynchronize(stream), "cuStreamSynchronize")
            return run

        h2d, d2h = drv.cuMemcpyHtoDAsync, drv.cuMemcpyDtoHAsync
        impl.row("h2d_pinned_256MiB", lambda: measure(copier(h2d, "cuMemcpyHtoDAsync", d_big, h_pinned),
                                                      scaled(4, 1), 1, "GB/s", COPY_BYTES))
        impl.row("d2h_pinned_256MiB", lambda: measure(copier(d2h, "cuMemcpyDtoHAsync", h_pinned, d_big),
                                                      scaled(4, 1), 1, "GB/s", COPY_BYTES))
        impl.row("h2d_pageable_256MiB", lambda: measure(copier(h2d, "cuMemcpyHtoDAsync", d_big, h_pageable),
                                                        scaled(2, 1), 1, "GB/s", COPY_BYTES))
        impl.row("d2h_pageable_256MiB", lambda: measure(copier(d2h, "cuMemcpyDtoHAsync", h_pageable, d_big),
                                                        scaled(2, 1), 1, "GB/s", COPY_BYTES))
        del pageable
    except Exception as e:  # noqa: BLE001
        for r in ("h2d_pinned_256MiB", "d2h_pinned_256MiB", "h2d_pageable_256MiB", "d2h_pageable_256MiB"):
            if r not in impl.rows:
                impl.skip(r, reason(e))
    finally:
        if h_pinned is not None:
            drv.cuMemFreeHost(h_pinned)
        if d_big is not None:
            drv.cuMemFree(d_big)

    # NVRTC
    def nvrtc_row():
        nvrtc = import_nvrtc()
        OK = nvrtc.nvrtcResult.NVRTC_SUCCESS
        opts = [f"--gpu-architecture=compute_{cc_major}{cc_minor}".encode()]
        impl.meta["nvrtc_options"] = [o.decode() for o in opts]

        def nck(res, what, prog=None):
            if res[0] != OK:
                msg = f"{what} failed: {res[0]!r}"
                if prog is not None:
                    try:
                        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
                        buf = b" " * size
                        nvrtc.nvrtcGetProgramLog(prog, buf)
                        msg += ": " + buf.decode(errors="replace").strip()
                    except Exception:  # noqa: BLE001
                        pass
                raise RuntimeError(msg)
            return res[1] if len(res) > 1 else None

        def compile_once(ops):
            for _ in range(ops):
                prog = nck(nvrtc.nvrtcCreateProgram(SAXPY_SOURCE, b"saxpy.cu", 0, [], []), "nvrtcCreateProgram")
                try:
                    nck(nvrtc.nvrtcCompileProgram(prog, len(opts), opts), "nvrtcCompileProgram", prog)
                    size = nck(nvrtc.nvrtcGetPTXSize(prog), "nvrtcGetPTXSize")
                    buf = b" " * size
                    nck(nvrtc.nvrtcGetPTX(prog, buf), "nvrtcGetPTX")
                    if b".entry saxpy" not in buf:
                        raise RuntimeError("NVRTC output has no saxpy entry")
                finally:
                    nvrtc.nvrtcDestroyProgram(prog)

        return measure(compile_once, 1, 1, "ms")

    impl.row("nvrtc_compile_small", nvrtc_row)

    # Clean up (the primary context stays retained: cuda.core and CuPy use it next).
    ck(drv.cuStreamSynchronize(stream), "cuStreamSynchronize")
    drv.cuEventDestroy(ev_start)
    drv.cuEventDestroy(ev_stop)
    drv.cuMemFree(d_a)
    drv.cuMemFree(d_b)
    drv.cuModuleUnload(module)
    drv.cuStreamDestroy(stream)
    return impl.result()


# --------------------------------------------------------------------------------------------
# cuda.core (API changed across versions: everything is feature-detected)
# --------------------------------------------------------------------------------------------

def bench_cuda_core(ptx):
    impl = Impl("cuda.core")
    t0 = time.perf_counter()
    try:
        import cuda.core as core

        core.launch  # noqa: B018 - before 0.4 the API lives in cuda.core.experimental
    except (ImportError, AttributeError):
        import cuda.core.experimental as core
    impl.meta["import_s"] = round(time.perf_counter() - t0, 4)
    impl.meta["module"] = core.__name__
    impl.meta["version"] = getattr(core, "__version__", None) or pkg_version("cuda-core")

    Device, LaunchConfig, launch = core.Device, core.LaunchConfig, core.launch
    dev = Device(DEVICE)
    dev.set_current()
    StreamOptions = getattr(core, "StreamOptions", None)
    try:
        stream = dev.create_stream(StreamOptions(nonblocking=True)) if StreamOptions else dev.create_stream()
    except TypeError:
        stream = dev.create_stream()
    impl.meta["device"] = getattr(dev, "name", None)

    obj = core.ObjectCode.from_ptx(ptx)  # bytes: in-memory PTX (a str would be a path)
    kernels = {k: obj.get_kernel(k) for k in ("empty", "args4", "args16")}
    impl.meta["kernel_source"] = "kernels.ptx via ObjectCode.from_ptx"
    cfg = LaunchConfig(grid=1, block=1)

    buf_a = dev.allocate(4096, stream=stream)
    buf_b = dev.allocate(4096, stream=stream)
    try:
        import numpy as np
        alpha, n = np.float32(1.5), np.uint32(1024)
    except ImportError:
        alpha, n = ctypes.c_float(1.5), ctypes.c_uint(1024)
    args4 = (buf_a, buf_b, alpha, n)
    args16 = tuple(buf_b if i & 1 else buf_a for i in range(16))

    def launcher(kernel, args):
        def run(ops):
            for _ in range(ops // BATCH):
                for _ in range(BATCH):
                    launch(stream, cfg, kernel, *args)
                stream.sync()
        return run

    def p_launch_sync(ops):
        k = kernels["empty"]
        for _ in range(ops):
            launch(stream, cfg, k)
            stream.sync()

    impl.row("launch_0args", lambda: measure(launcher(kernels["empty"], ()), scaled(5000, BATCH), BATCH))
    impl.row("launch_4args", lambda: measure(launcher(kernels["args4"], args4), scaled(5000, BATCH), BATCH))
    impl.row("launch_16args", lambda: measure(launcher(kernels["args16"], args16), scaled(5000, BATCH), BATCH))
    impl.row("launch_sync", lambda: measure(p_launch_sync, scaled(3000, 100), 100))

    def alloc_free_row():
        # Device.allocate(size, stream=) + Buffer.close(stream) (cuMemAllocFromPoolAsync/cuMemFreeAsync
        # with the default device memory resource in recent versions).
        b = dev.allocate(ALLOC_BYTES, stream=stream)
        b.close(stream)

        def run(ops):
            for i in range(ops):
                b = dev.allocate(ALLOC_BYTES, stream=stream)
                b.close(stream)
                if (i + 1) % BATCH == 0:
                    stream.sync()
            stream.sync()
        return measure(run, scaled(10000, BATCH), BATCH)

    impl.row("alloc_free_async_1MiB", alloc_free_row)

    stream.sync()
    for b in (buf_a, buf_b):
        try:
            b.close(stream)
        except Exception:  # noqa: BLE001
            pass
    try:
        stream.close()
    except Exception:  # noqa: BLE001
        pass
    return impl.result()


# --------------------------------------------------------------------------------------------
# CuPy
# --------------------------------------------------------------------------------------------

def bench_cupy():
    impl = Impl("cupy")
    t0 = time.perf_counter()
    import cupy as cp
    import numpy as np
    impl.meta["import_s"] = round(time.perf_counter() - t0, 4)
    impl.meta["version"] = getattr(cp, "__version__", None)
    rt = cp.cuda.runtime
    try:
        impl.meta["runtime_version"] = rt.runtimeGetVersion()
        impl.meta["driver_version"] = rt.driverGetVersion()
    except Exception:  # noqa: BLE001
        pass
    impl.meta["kernel_source"] = "CUDA C (empty bodies, same signatures) via cupy.RawKernel"

    device = cp.cuda.Device(DEVICE)
    device.use()
    stream = cp.cuda.Stream(non_blocking=True)

    k_empty = cp.RawKernel(CUPY_SOURCE, "empty")
    k_args4 = cp.RawKernel(CUPY_SOURCE, "args4")
    k_args16 = cp.RawKernel(CUPY_SOURCE, "args16")
    a = cp.empty(1024, dtype=cp.float32)
    b = cp.empty(1024, dtype=cp.float32)
    args4 = (a, b, np.float32(1.5), np.uint32(1024))
    args16 = tuple(b if i & 1 else a for i in range(16))
    grid, block = (1,), (1,)

    def launcher(kernel, args):
        def run(ops):
            with stream:
                for _ in range(ops // BATCH):
                    for _ in range(BATCH):
                        kernel(grid, block, args)
                    stream.synchronize()
        return run

    def p_launch_sync(ops):
        with stream:
            for _ in range(ops):
                k_empty(grid, block, ())
                stream.synchronize()

    impl.row("launch_0args", lambda: measure(launcher(k_empty, ()), scaled(5000, BATCH), BATCH))
    impl.row("launch_4args", lambda: measure(launcher(k_args4, args4), scaled(5000, BATCH), BATCH))
    impl.row("launch_16args", lambda: measure(launcher(k_args16, args16), scaled(5000, BATCH), BATCH))
    impl.row("launch_sync", lambda: measure(p_launch_sync, scaled(3000, 100), 100))

    # Copies: cudaMemcpyAsync on the non-blocking stream (the same operation as the C rows).
    H2D, D2H = rt.memcpyHostToDevice, rt.memcpyDeviceToHost
    d_big = pinned = pageable = None
    try:
        d_big = cp.empty(COPY_BYTES, dtype=cp.uint8)
        pinned = cp.cuda.alloc_pinned_memory(COPY_BYTES)
        h_pinned = np.frombuffer(pinned, dtype=np.uint8, count=COPY_BYTES)
        h_pinned[:] = 1
        pageable = np.full(COPY_BYTES, 2, dtype=np.uint8)
        d_ptr, p_ptr, g_ptr = d_big.data.ptr, pinned.ptr, pageable.ctypes.data

        def copier(dst, src, kind):
            def run(ops):
                for _ in range(ops):
                    rt.memcpyAsync(dst, src, COPY_BYTES, kind, stream.ptr)
                stream.synchronize()
            return run

        impl.row("h2d_pinned_256MiB", lambda: measure(copier(d_ptr, p_ptr, H2D), scaled(4, 1), 1, "GB/s", COPY_BYTES))
        impl.row("d2h_pinned_256MiB", lambda: measure(copier(p_ptr, d_ptr, D2H), scaled(4, 1), 1, "GB/s", COPY_BYTES))
        impl.row("h2d_pageable_256MiB",
                 lambda: measure(copier(d_ptr, g_ptr, H2D), scaled(2, 1), 1, "GB/s", COPY_BYTES))
        impl.row("d2h_pageable_256MiB",
                 lambda: measure(copier(g_ptr, d_ptr, D2H), scaled(2, 1), 1, "GB/s", COPY_BYTES))
    except Exception as e:  # noqa: BLE001
        for r in ("h2d_pinned_256MiB", "d2h_pinned_256MiB", "h2d_pageable_256MiB", "d2h_pageable_256MiB"):
            if r not in impl.rows:
                impl.skip(r, reason(e))
    finally:
        stream.synchronize()
        del d_big, pinned, pageable
        try:
            cp.get_default_memory_pool().free_all_blocks()
            cp.get_default_pinned_memory_pool().free_all_blocks()
        except Exception:  # noqa: BLE001
            pass
    return impl.result()


# --------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ptx", default=os.environ.get("BENCH_PTX") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "native", "kernels.ptx"))
    ptx_path = os.path.abspath(ap.parse_args().ptx)
    with open(ptx_path, "rb") as f:
        ptx = f.read()
    if not ptx.endswith(b"\0"):
        ptx += b"\0"  # cuModuleLoadData takes NUL-terminated PTX text
    log(f"PTX {ptx_path}; scale {SCALE:g}; budget {BUDGET_S:g} s")

    impls = [
        ("cuda-python", lambda: bench_cuda_python(ptx)),
        ("cuda.core", lambda: bench_cuda_core(ptx)),
        ("cupy", bench_cupy),
    ]
    out = []
    for name, fn in impls:
        if time.monotonic() - T_START > BUDGET_S:
            out.append({"impl": name, "skipped": f"time budget of {BUDGET_S:g} s used up"})
            continue
        try:
            out.append(fn())
        except Exception as e:  # noqa: BLE001 - an unavailable implementation is a skipped entry
            log(f"{name}: skipped: {reason(e)}")
            out.append({"impl": name, "skipped": reason(e)})
    for entry in out:
        entry.setdefault("meta", {})["ptx"] = ptx_path
        entry["meta"]["scale"] = SCALE
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    log(f"done in {time.monotonic() - T_START:.1f} s")


if __name__ == "__main__":
    main()
