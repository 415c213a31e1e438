"""All-reduce bandwidth in the job, as nccl-tests define it, at the gradients' sizes."""
from __future__ import annotations

import time
from collections.abc import Callable

import torch
import torch.distributed as dist

from jobs.core.bandwidth import (CPU_ITERS, CPU_WARMUP, CPU_WINDOW_STEPS, DDP_BUCKET_BYTES, FP32_BYTES, ITERS,
                                 WARMUP, WINDOW_STEPS, bandwidth_gbps)
from jobs.runtime.device import sync_device


def gradient_bytes(model: torch.nn.Module) -> int:
    """Bytes of gradients DDP all-reduces per step: every parameter that trains, in fp32."""
    return FP32_BYTES * sum(p.numel() for p in model.parameters() if p.requires_grad)


def iterations(device: torch.device) -> tuple[int, int]:
    """(warm-up, timed) all-reduces per size for the in-job measurement on this device."""
    return (WARMUP, ITERS) if device.type == "cuda" else (CPU_WARMUP, CPU_ITERS)


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
    warmup, iters = iterations(device)
    return [bandwidth(n, time_allreduce(n, device, warmup, iters), world_size) for n in sizes]


def exposed_per_step(step: Callable[[bool], None], device: torch.device, epoch_steps: int) -> float:
    """Seconds per step that the gradient all-reduce adds: windows of the same steps run with
    it (step(True)) and without it (step(False), DDP's no_sync), twice each, the first pair a
    warm-up; every rank runs them in lockstep. A window is WINDOW_STEPS steps, or an epoch's
    when that is fewer. On a CPU: one window each, of one step, no warm-up pair (the epochs
    just ran the same step): four windows took longer than the training."""
    cuda = device.type == "cuda"
    window = max(1, min(WINDOW_STEPS if cuda else CPU_WINDOW_STEPS, epoch_steps))
    times = {}
    for sync in (True, False, True, False) if cuda else (True, False):
        sync_device(device)
        dist.barrier()
        start = time.perf_counter()
        for _ in range(window):
            step(sync)
        sync_device(device)
        times[sync] = (time.perf_counter() - start) / window
    return max(0.0, times[True] - times[False])
