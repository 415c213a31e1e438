"""What a study costs before its first job (pure): GPU-hours per array and in all, from the cells'
estimates (estimate.py), and the wall time at the arrays' parallelism.

    a cell's seconds  = its estimate's GPU-hours x 3600 / its GPUs
    an array's wall   = when its last task ends, its tasks started in plan order, at most `parallel`
                        at once, each as soon as one ends (SLURM's array throttle %N; 0: all at once)
    the study's wall  = on SLURM the arrays run side by side: the longest array's; on this machine
                        the local queue runs one cell at a time: the sum of its cells' seconds

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
    parallel: int  # tasks of one array at once (0: no throttle); 1 on this machine
    on_slurm: bool  # the arrays run side by side on SLURM; else one cell at a time here


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


def study_cost(plan: Plan, estimates: Mapping[str, Estimate], on_slurm: bool) -> StudyCost:
    """The study's GPU-hours and wall time (see the module's docstring)."""
    parallel = plan.cluster.array_parallelism if on_slurm else 1
    arrays = []
    for array in plan.arrays:
        seconds = [cell_seconds(estimates[cid], plan.cell(cid).gpus) for cid in array.cell_ids]
        arrays.append(ArrayCost(array.name, len(array.cell_ids), sum(estimates[cid].gpu_hours for cid in array.cell_ids),
                                wall_s(seconds, parallel)))
    wall = max((a.wall_s for a in arrays), default=0.0) if on_slurm else sum(
        cell_seconds(estimates[cid], cell.gpus) for cid, cell in zip(plan.cell_ids, plan.cells, strict=True))
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
