"""A batch that does not fit is an answer (`oom`), not a crash, and no rank is left waiting."""
from __future__ import annotations

import os

import torch
import torch.distributed as dist

# Test hook: pretend batches above this many images per GPU do not fit (CPU machines have no OOM).
SIMULATE_ENV = "JOBS_SIMULATE_OOM_ABOVE_BATCH"


class OutOfMemory(Exception):
    """The cell's batch does not fit on this GPU."""


def is_oom(exc: BaseException) -> bool:
    return isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc).lower()


def check_fits(trainer) -> None:
    """One full-size step before training (trainer.probe); every rank learns whether any
    rank ran out of memory, so all stop together instead of hanging in an all-reduce."""
    cell, device = trainer.cell, trainer.device
    ran_out = False
    try:
        limit = os.environ.get(SIMULATE_ENV)
        if limit is not None and cell.batch_per_gpu > int(limit):
            raise torch.cuda.OutOfMemoryError(f"simulated: {SIMULATE_ENV}={limit}")
        trainer.probe()
    except Exception as exc:
        if not is_oom(exc):
            raise
        ran_out = True
    if device.type == "cuda":
        torch.cuda.empty_cache()
    flag = torch.tensor([1.0 if ran_out else 0.0], device=device)
    if trainer.place.world_size > 1:
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    if flag.item() > 0:
        raise OutOfMemory(f"batch {cell.batch_per_gpu} per GPU does not fit in GPU memory")
