"""Run one all-reduce cell: every rank times all_reduce at each size of the cell's sweep (as
nccl-tests' all_reduce_perf does), and rank 0 writes the result (the shared envelope, with the
findings under "allreduce")."""
from __future__ import annotations

from pathlib import Path

import torch
import torch.distributed as dist

from jobs.runtime import comm, launch
from jobs.allreduce.cell import AllreduceCell
from jobs.core.bandwidth import bytes_text
from jobs.allreduce.result import AllreduceFindings, SizeTiming
from jobs.runtime.envelope import run_job


def pick_device(cell: AllreduceCell, place: launch.Placement) -> torch.device:
    """A GPU per rank (this node's local rank) for a GPU cell; the CPU for CPU ranks. A GPU cell
    where there are no GPUs fails: timing it on the CPU would record another link."""
    if not cell.gpus_per_node:
        return torch.device("cpu")
    visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if visible < place.local_world_size:
        raise RuntimeError(f"cell {cell.label} needs {place.local_world_size} GPUs on this node, which shows "
                           f"{visible}; run it where they are visible, or use backend = \"gloo\" with "
                           "gpus_per_node = 0 and cpu_ranks_per_node for CPU ranks")
    torch.cuda.set_device(place.local_rank)
    return torch.device("cuda", place.local_rank)


def check_placement(cell: AllreduceCell, place: launch.Placement) -> None:
    if place.world_size != cell.ranks:
        raise RuntimeError(f"cell {cell.label} needs {cell.ranks} ranks, this job has {place.world_size}; "
                           "start it with `python -m jobs --cell ...` (it starts the ranks), srun or torchrun")


def mean_over_ranks(seconds: float, device: torch.device, world_size: int) -> float:
    """Every rank's time, averaged (nccl-tests' default report, -a 1); outside the timed loop."""
    total = torch.tensor([seconds], dtype=torch.float64, device=device)
    dist.all_reduce(total)
    return float(total.item()) / world_size  # a sync, after the size's timing has ended


def sweep(cell: AllreduceCell, device: torch.device, world_size: int, log) -> AllreduceFindings:
    """Each size: warm-up, then iters all-reduces back to back, one sync (jobs.runtime.comm.time_allreduce)."""
    timings = []
    log(f"{'size':>10} {'bytes':>12} {'time (us)':>12} {'algbw (GB/s)':>13} {'busbw (GB/s)':>13}")
    for nbytes in cell.sizes():
        local = comm.time_allreduce(nbytes, device, warmup=cell.warmup, iters=cell.iters)
        figures = comm.bandwidth(nbytes, mean_over_ranks(local, device, world_size), world_size)
        timing = SizeTiming(nbytes, figures["seconds"], figures["algbw_gbps"], figures["busbw_gbps"])
        timings.append(timing)
        log(f"{bytes_text(nbytes):>10} {nbytes:>12} {timing.seconds * 1e6:>12.1f} {timing.algbw_gbps:>13.3f} "
            f"{timing.busbw_gbps:>13.3f}")
    return AllreduceFindings(world_size, dist.get_backend(), device.type, cell.warmup, cell.iters, tuple(timings))


def run(cell: AllreduceCell, out_dir: Path, data_dir: Path) -> str:
    """Time the cell's sizes on every rank; rank 0 writes the result. Returns the status.
    Idempotent: a good result already on disk is kept and nothing runs."""
    return run_job(cell, out_dir, data_dir, lambda job: sweep(cell, job.device, job.place.world_size, job.log),
                   lambda place: device_for(cell, place), backend=cell.backend)


def device_for(cell: AllreduceCell, place: launch.Placement) -> torch.device:
    check_placement(cell, place)
    return pick_device(cell, place)
