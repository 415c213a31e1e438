"""A short all-reduce measurement of the gradients' size, as nccl-tests define its figures."""
from __future__ import annotations

import statistics
import time
from typing import Optional

import torch
import torch.distributed as dist

from jobs.result import CommStats

TRIALS = 10


def busbw_factor(world_size: int) -> float:
    """Ring all-reduce: each rank sends and receives 2(N-1)/N of the buffer."""
    return 2 * (world_size - 1) / world_size


def measure(run) -> Optional[CommStats]:
    """All-reduce one buffer the size of all gradients; None unless DDP on several ranks."""
    if run.cell.engine != "ddp" or run.place.world_size < 2:
        return None
    params = sum(p.numel() for p in run.model.parameters() if p.requires_grad)
    buffer = torch.ones(params, dtype=torch.float32, device=run.device)
    times = []
    for trial in range(TRIALS + 2):  # two warm-up trials
        run.sync()
        dist.barrier()
        start = time.perf_counter()
        dist.all_reduce(buffer)
        run.sync()
        if trial >= 2:
            times.append(time.perf_counter() - start)
    seconds = statistics.median(times)
    nbytes = buffer.numel() * buffer.element_size()
    algbw = nbytes / seconds / 1e9
    return CommStats(
        world_size=run.place.world_size, grad_bytes=nbytes, allreduce_s=seconds,
        algbw_gbps=algbw, busbw_gbps=algbw * busbw_factor(run.place.world_size),
        backend=dist.get_backend(),
    )
