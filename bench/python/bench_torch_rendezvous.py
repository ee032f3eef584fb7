#!/usr/bin/env python3
"""PyTorch side of bench/distributed.ts: run with torchrun (env:// rendezvous), one process per GPU.
    NCCL_NVLS_ENABLE=0 torchrun --standalone --nproc-per-node=2 bench/python/bench_torch_rendezvous.py
Same method as bench/distributed.ts: 256 MiB float32 all-reduce (sum, in place), 5 warm-up ops, then 5
passes of 20 ops; each pass's time is the slowest rank's; median pass; busBW = algBW * 2(n-1)/n.
Rank 0 prints one JSON line: {"impl": "pytorch", "ranks", "algGBs", "busGBs", "passesMs"}.
"""
import json
import os
import statistics
import time

import torch
import torch.distributed as dist

BYTES = 256 << 20
OPS = 20
PASSES = 5


def main():
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    n = dist.get_world_size()
    buf = torch.zeros(BYTES // 4, dtype=torch.float32, device="cuda")
    for _ in range(5):
        dist.all_reduce(buf)
    torch.cuda.synchronize()
    passes = []
    for _ in range(PASSES):
        dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(OPS):
            dist.all_reduce(buf)
        torch.cuda.synchronize()
        ms = (time.perf_counter() - t0) * 1000
        t = torch.tensor([ms], dtype=torch.float64, device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        passes.append(t.item())
    med = statistics.median(passes)
    alg = BYTES * OPS / (med / 1000) / 1e9
    if dist.get_rank() == 0:
        print(json.dumps({"impl": "pytorch", "ranks": n, "algGBs": round(alg, 2), "busGBs": round(alg * 2 * (n - 1) / n, 2), "passesMs": [round(x, 2) for x in passes]}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
