"""What a study costs before its first job (pure): GPU-hours per array and in all, from the cells'
estimates (estimate.py), and the wall time at the arrays' parallelism.

    a cell's seconds  = its estimate's GPU-hours x 3600 / its GPUs
    an array's wall   = when its last task ends, its tasks started in plan order, at most `parallel`
                        at once, each as soon as one ends (SLURM's array throttle %N; 0: all at once)
    the study's wall  = on SLURM the arrays run side by side: the longest array's; on this machine
                        the local queue's: cells in plan order, each on free GPUs as soon as it
                        has them (packed_wall_s), or one at a time on a machine without GPUs

Waits in the queue are not counted: SLURM starts a task when the cluster has its GPUs.
"""
from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from orchestrator.budget.estimate import Estimate
from orchestrator.plan.plan import Plan


@dataclass(frozen=True)
class ArrayCost:
    name: str
    cells: int
    gpu_hours: float
    wall_s: float


@dataclass(frozen=True)
class StudyCost:
    arrays: tuple[ArrayCost, ...]
    cells: int
    gpu_hours: float  # the arrays' sum
    wall_s: float
    parallel: int  # tasks of one array at once (0: no throttle); on this machine its GPUs (0: none)
    on_slurm: bool  # the arrays run side by side on SLURM; else the local queue here


def wall_s(seconds: Sequence[float], parallel: int) -> float:
    """When the last of tasks lasting `seconds` ends, started in order at most `parallel` at once
    (0: all at once). [3, 1, 1, 1] at 2 at once: 3 on one slot; 1, 1, 1 on the other: 3."""
    if not seconds:
        return 0.0
    if parallel <= 0 or parallel >= len(seconds):
        return max(seconds)
    slots = [0.0] * parallel  # when each slot is free
    for s in seconds:
        heapq.heappush(slots, heapq.heappop(slots) + s)
    return max(slots)


def packed_wall_s(cells: Sequence[tuple[float, int]], gpus: int) -> float:
    """When the last of (seconds, GPUs) cells ends on a machine of `gpus`, started in order, each as
    soon as its GPUs are free and not before the cell ahead of it (the local queue keeps plan order);
    a cell wanting more than the machine runs alone. With no GPUs, one after another: the sum.
    [(10, 1), (10, 1), (4, 2)] on 2 GPUs: 10 and 10 side by side, then 4: 14."""
    if gpus <= 0:
        return sum(s for s, _ in cells)
    free = [0.0] * gpus  # when each GPU is free
    start = 0.0
    for seconds, want in cells:
        want = min(max(want, 1), gpus)
        free.sort()
        start = max(start, free[want - 1])
        end = start + seconds
        free[:want] = [end] * want
    return max(free)


def study_cost(plan: Plan, estimates: Mapping[str, Estimate], on_slurm: bool, gpus_here: int = 0) -> StudyCost:
    """The study's GPU-hours and wall time (see the module's docstring); `gpus_here`: this machine's."""
    parallel = plan.cluster.array_parallelism if on_slurm else gpus_here
    arrays = []
    for array in plan.arrays:
        seconds = [cell_seconds(estimates[cid], plan.cell(cid).gpus) for cid in array.cell_ids]
        arrays.append(ArrayCost(array.name, len(array.cell_ids), sum(estimates[cid].gpu_hours for cid in array.cell_ids),
                                wall_s(seconds, parallel)))
    wall = max((a.wall_s for a in arrays), default=0.0) if on_slurm else packed_wall_s(
        [(cell_seconds(estimates[cid], cell.gpus), cell.gpus) for cid, cell in zip(plan.cell_ids, plan.cells, strict=True)],
        gpus_here)
    return StudyCost(tuple(arrays), len(plan.cells), sum(a.gpu_hours for a in arrays), wall, parallel, on_slurm)


def cell_seconds(found: Estimate, gpus: int) -> float:
    """A cell's wall seconds: its GPU-hours over its GPUs (a CPU-only cell counts 0 GPU-h: 0 s)."""
    return found.gpu_hours * 3600 / gpus if gpus > 0 else 0.0


def shares(values: Sequence[float], decimals: int) -> tuple[list[str], str]:
    """`values` rounded to `decimals`, and their total, so that the parts add up to the total shown:
    each is floored, then the largest remainders round up until the parts reach the total rounded."""
    unit = 10 ** decimals
    scaled = [v * unit for v in values]
    parts = [math.floor(s) for s in scaled]
    total = round(sum(scaled))
    for i in sorted(range(len(scaled)), key=lambda i: parts[i] - scaled[i])[:max(total - sum(parts), 0)]:
        parts[i] += 1
    return [f"{p / unit:.{decimals}f}" for p in parts], f"{total / unit:.{decimals}f}"
