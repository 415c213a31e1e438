"""All-reduce bandwidth in the job, as nccl-tests define it, at the gradients' sizes."""
from __future__ import annotations

import time
from collections.abc import Callable

import torch
import torch.distributed as dist

from jobs.core.bandwidth import DDP_BUCKET_BYTES, bandwidth_gbps
from jobs.runtime.device import sync_device

WARMUP = 5
WINDOW_STEPS = 10  # steps per window when timing exposed communication
ITERS = 20


def time_allreduce(nbytes: int, device: torch.device, warmup: int = WARMUP, iters: int = ITERS) -> float:
    """Seconds per all-reduce of nbytes (fp32, in place): `iters` back to back after `warmup`
    untimed ones, one sync at the end, like nccl-tests."""
    buffer = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
    for _ in range(warmup):
        dist.all_reduce(buffer)
    sync_device(device)
    dist.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(buffer)
    sync_device(device)
    return (time.perf_counter() - start) / iters


def bandwidth(nbytes: int, seconds: float, world_size: int) -> dict[str, float]:
    """One size's figures: jobs.core.bandwidth.bandwidth_gbps, with the bytes and seconds."""
    algbw, busbw = bandwidth_gbps(nbytes, seconds, world_size)
    return {"bytes": nbytes, "seconds": seconds, "algbw_gbps": algbw, "busbw_gbps": busbw}


def measure(grad_bytes: int, device: torch.device, world_size: int) -> list[dict[str, float]]:
    """The whole gradient in one buffer (the fast pipeline's exchange) and one DDP bucket."""
    sizes = [grad_bytes] + ([DDP_BUCKET_BYTES] if grad_bytes > DDP_BUCKET_BYTES else [])
    return [bandwidth(n, time_allreduce(n, device), world_size) for n in sizes]


def exposed_per_step(step: Callable[[bool], None], device: torch.device, epoch_steps: int) -> float:
    """Seconds per step that the gradient all-reduce adds: windows of the same steps run with
    it (step(True)) and without it (step(False), DDP's no_sync), twice each, the first pair a
    warm-up; every rank runs them in lockstep. A window is WINDOW_STEPS steps, or an epoch's
    when that is fewer: on a CPU with a few hundred images the measurement would otherwise
    take longer than the training."""
    window = max(1, min(WINDOW_STEPS, epoch_steps))
    times = {}
    for sync in (True, False, True, False):
        sync_device(device)
        dist.barrier()
        start = time.perf_counter()
        for _ in range(window):
            step(sync)
        sync_device(device)
        times[sync] = (time.perf_counter() - start) / window
    return max(0.0, times[True] - times[False])
