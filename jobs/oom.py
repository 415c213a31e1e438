"""A batch that does not fit is an answer (`oom`), not a crash, and no rank is left waiting."""
from __future__ import annotations

import contextlib
import os

import torch
import torch.distributed as dist
from torch import nn

# Test hook: pretend batches above this many images per GPU do not fit (CPU machines have no OOM).
SIMULATE_ENV = "JOBS_SIMULATE_OOM_ABOVE_BATCH"


class OutOfMemory(Exception):
    """The cell's batch does not fit on this GPU."""


def is_oom(exc: BaseException) -> bool:
    return isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc).lower()


def check_fits(run) -> None:
    """One full-size forward and backward before training; every rank learns whether any
    rank ran out of memory, so all stop together instead of hanging in an all-reduce."""
    cell = run.cell
    ran_out = False
    try:
        limit = os.environ.get(SIMULATE_ENV)
        if limit is not None and cell.batch_per_gpu > int(limit):
            raise torch.cuda.OutOfMemoryError(f"simulated: {SIMULATE_ENV}={limit}")
        images = torch.randn(run.batch_size, 3, 32, 32, device=run.device)
        labels = torch.zeros(run.batch_size, dtype=torch.long, device=run.device)
        no_sync = run.model.no_sync() if isinstance(run.model, nn.parallel.DistributedDataParallel) else contextlib.nullcontext()
        with no_sync, torch.autocast(run.device.type, dtype=torch.bfloat16, enabled=cell.precision == "bf16"):
            nn.functional.cross_entropy(run.model(images), labels).backward()
        del images, labels
    except Exception as exc:
        if not is_oom(exc):
            raise
        ran_out = True
    run.optimizer.zero_grad(set_to_none=True)
    if run.device.type == "cuda":
        torch.cuda.empty_cache()
    flag = torch.tensor([1.0 if ran_out else 0.0], device=run.device)
    if run.place.world_size > 1:
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    if flag.item() > 0:
        raise OutOfMemory(
            f"batch {cell.batch_per_gpu} per GPU ({run.batch_size} per process) does not fit in GPU memory"
        )
