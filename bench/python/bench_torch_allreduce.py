#!/usr/bin/env python3
"""PyTorch's side of bench/multigpu.ts: peer copies of 256 MiB from GPU 0 to GPU 1 (dst.copy_(src), synchronized
per copy, and enqueued with one synchronize per pass) and an NCCL all-reduce (sum, in place) of 64 Mi float32 on
every GPU (torch.distributed, one process per GPU through torch.multiprocessing.spawn; each rank times its passes
after a barrier, the slowest rank's time counts; busbw = algbw * 2(n - 1)/n, as nccl-tests). One warm-up pass,
then 5 timed passes, median GB/s. NCCL_NVLS_ENABLE is forced to 0 (no NVLink multicast). Env: BENCH_SCALE.
Prints ONE JSON object: {"impl": "pytorch", "meta": {...}, "rows": {...}} or {"impl": "pytorch", "skipped": why}.
"""

import json
import os
import socket
import statistics
import sys
import tempfile
import time
import traceback

os.environ["NCCL_NVLS_ENABLE"] = "0"  # before NCCL initialises, here and in the spawned ranks
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cuda_python import REPS, measure, scaled  # noqa: E402

BYTES = 256 << 20


def log(msg):
    sys.stderr.write(f"bench-torch: {msg}\n")


def row(reps_gbps, ops):
    return {"median": round(statistics.median(reps_gbps), 4), "unit": "GB/s", "n": ops, "reps": [round(x, 4) for x in reps_gbps]}


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def peer_copy_rows(torch, rows):
    src = torch.full((BYTES,), 1, dtype=torch.uint8, device="cuda:0")
    dst = torch.zeros((BYTES,), dtype=torch.uint8, device="cuda:1")
    ops = scaled(10, 1)

    def sync_both():
        torch.cuda.synchronize(0)
        torch.cuda.synchronize(1)

    def sync_pass(k):
        for _ in range(k):
            dst.copy_(src)
            sync_both()

    def async_pass(k):
        for _ in range(k):
            dst.copy_(src, non_blocking=True)
        sync_both()

    for name, fn in (("peer_copy_sync_256MiB", sync_pass), ("peer_copy_async_256MiB", async_pass)):
        try:
            rows[name] = measure(fn, ops, 2, "GB/s", BYTES)
            log(f"{name:28s} {rows[name]['median']:10.2f} GB/s")
        except Exception as e:  # a failing row is reported, never fatal
            rows[name] = {"skipped": f"{type(e).__name__}: {e}"}
    if int(dst[0].item()) != 1 or int(dst[-1].item()) != 1:
        rows["peer_copy_sync_256MiB"] = {"skipped": "copied data is wrong"}


def allreduce_rank(rank, world, port, ops, warm, out_dir):
    """One rank (spawned process): times its all-reduce passes and writes them to out_dir/rank.json."""
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    n = BYTES // 4
    t = torch.full((n,), float(rank + 1), dtype=torch.float32, device=f"cuda:{rank}")
    dist.all_reduce(t)
    torch.cuda.synchronize()
    want = world * (world + 1) / 2
    ok = float(t[0].item()) == want and float(t[-1].item()) == want
    t.zero_()  # timing on zeros: sums never overflow, and values do not change NCCL's speed
    for _ in range(warm):
        dist.all_reduce(t)
    torch.cuda.synchronize()
    passes = []
    for _ in range(REPS):
        dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        for _ in range(ops):
            dist.all_reduce(t)
        torch.cuda.synchronize()
        passes.append(time.perf_counter_ns() - t0)
    with open(os.path.join(out_dir, f"{rank}.json"), "w") as f:
        json.dump({"ok": ok, "pass_ns": passes}, f)
    dist.barrier()
    dist.destroy_process_group()


def allreduce_rows(torch, world, rows):
    import torch.multiprocessing as mp

    ops, warm = scaled(20, 1), 5
    out_dir = tempfile.mkdtemp(prefix="cuda-ts-torch-")
    mp.spawn(allreduce_rank, args=(world, free_port(), ops, warm, out_dir), nprocs=world, join=True)
    ranks = []
    for r in range(world):
        with open(os.path.join(out_dir, f"{r}.json")) as f:
            ranks.append(json.load(f))
    if not all(x["ok"] for x in ranks):
        raise RuntimeError("all-reduce result is wrong")
    slowest = [max(x["pass_ns"][k] for x in ranks) for k in range(REPS)]
    alg = [BYTES * ops / ns for ns in slowest]
    factor = 2 * (world - 1) / world
    rows["allreduce_256MiB_f32_busbw"] = row([a * factor for a in alg], ops)
    rows["allreduce_256MiB_f32_algbw"] = row(alg, ops)
    log(f"{'allreduce_256MiB_f32_busbw':28s} {rows['allreduce_256MiB_f32_busbw']['median']:10.2f} GB/s ({world} GPUs)")


def main():
    out = {"impl": "pytorch", "meta": {}, "rows": {}}
    try:
        import torch
        import torch.distributed as dist
    except Exception as e:
        out = {"impl": "pytorch", "skipped": f"torch is not importable: {type(e).__name__}: {e}"}
        print(json.dumps(out))
        return 0
    if not torch.cuda.is_available():
        print(json.dumps({"impl": "pytorch", "skipped": "torch.cuda is not available"}))
        return 0
    world = torch.cuda.device_count()
    meta = out["meta"]
    meta["torch"] = torch.__version__
    meta["cuda"] = torch.version.cuda
    meta["gpus"] = [torch.cuda.get_device_name(i) for i in range(world)]
    meta["nccl_nvls_enable"] = os.environ.get("NCCL_NVLS_ENABLE")
    try:
        meta["nccl"] = ".".join(str(v) for v in torch.cuda.nccl.version())
    except Exception:
        pass
    rows = out["rows"]
    names = ["peer_copy_sync_256MiB", "peer_copy_async_256MiB", "allreduce_256MiB_f32_busbw", "allreduce_256MiB_f32_algbw"]
    if world < 2:
        for name in names:
            rows[name] = {"skipped": f"needs 2+ GPUs, found {world}"}
        print(json.dumps(out))
        return 0
    try:
        peer_copy_rows(torch, rows)
    except Exception as e:
        for name in names[:2]:
            rows.setdefault(name, {"skipped": f"{type(e).__name__}: {e}"})
    if not dist.is_nccl_available():
        for name in names[2:]:
            rows[name] = {"skipped": "torch.distributed has no NCCL backend"}
    else:
        try:
            allreduce_rows(torch, world, rows)
        except Exception as e:
            traceback.print_exc()
            for name in names[2:]:
                rows[name] = {"skipped": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
