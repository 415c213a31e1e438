"""Plain NCCL all-reduce bandwidth, timed as nccl-tests does (back-to-back, one sync),
to check the job's own measurement against. torchrun --nproc_per_node=N allreduce_bench.py [OUT.json]"""
import json
import os
import sys

import torch
import torch.distributed as dist

from jobs.runtime.comm import bandwidth, time_allreduce

SIZES = [9_460_000, 26_500_000, 44_695_848, 256_000_000]  # 44,695,848 = 11,173,962 fp32 gradients

if __name__ == "__main__":
    dist.init_process_group("nccl")
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    world = dist.get_world_size()
    rows = []
    for nbytes in SIZES:
        figures = bandwidth(nbytes, time_allreduce(nbytes, device), world)
        rows.append(dict(figures, world_size=world))
        if dist.get_rank() == 0:
            print(f"allreduce N={world} bytes={nbytes} time_us={figures['seconds']*1e6:.1f} "
                  f"algbw={figures['algbw_gbps']:.1f} busbw={figures['busbw_gbps']:.1f} GB/s", flush=True)
    if dist.get_rank() == 0 and len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(rows, f, indent=1)
    dist.destroy_process_group()
