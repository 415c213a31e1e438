"""What a study costs before its first job (pure): GPU-hours per array and in all, from the cells'
estimates (estimate.py), and the wall time at the arrays' parallelism.

    a cell's seconds  = its estimate's GPU-hours x 3600 / its GPUs
    an array's wall   = when its last task ends, its tasks started in plan order, at most `parallel`
                        at once, each as soon as one ends (SLURM's array throttle %N; 0: all at once)
    the study's wall  = on SLURM the arrays run side by side: the longest array's; on this machine
                        the local queue's: cells in its order, each on free GPUs as soon as it
                        has them (packed_wall_s), or one at a time on a machine without GPUs

Waits in the queue are not counted: SLURM starts a task when the cluster has its GPUs.
"""
from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from orchestrator.budget.estimate import Estimate
from orchestrator.local.placement import first_fit, packing_order
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


def packed_wall_s(cells: Sequence[tuple[float, int, str]], gpus: int) -> float:
    """When the last of (seconds, GPUs, array) cells ends on a machine of `gpus`, started as the local
    queue starts them (placement.packing_order, then the first that fits: placement.first_fit), each
    as soon as its GPUs are free; a cell wanting more than the machine runs alone. With no GPUs, one
    after another: the sum. [(10, 1), (2, 4), (1, 1)] on 4 GPUs: 10 and 1 side by side, then 2: 12."""
    if gpus <= 0:
        return sum(s for s, _, _ in cells)
    slots = tuple(range(gpus))
    wants = [min(max(w, 1), gpus) for _, w, _ in cells]
    order = packing_order([(array, want) for (_, _, array), want in zip(cells, wants, strict=True)], gpus)
    groups: list[tuple[int, deque[int]]] = []  # runs of one width in that order: only each run's head can start
    for i in order:
        if not groups or groups[-1][0] != wants[i]:
            groups.append((wants[i], deque()))
        groups[-1][1].append(i)
    running: list[tuple[float, tuple[int, ...]]] = []  # (end, its slots)
    now = 0.0
    while groups:
        free = set(slots) - {s for _, placed in running for s in placed}
        found = first_fit([want for want, _ in groups], free, slots)
        if found is None:
            now = min(end for end, _ in running)
            running = [(end, placed) for end, placed in running if end > now]
            continue
        group, placed = found
        running.append((now + cells[groups[group][1].popleft()][0], placed))
        if not groups[group][1]:
            groups.pop(group)
    return max((end for end, _ in running), default=0.0)


def study_cost(plan: Plan, estimates: Mapping[str, Estimate], on_slurm: bool, gpus_here: int = 0) -> StudyCost:
    """The study's GPU-hours and wall time (see the module's docstring); `gpus_here`: this machine's."""
    parallel = plan.cluster.array_parallelism if on_slurm else gpus_here
    arrays = []
    for array in plan.arrays:
        seconds = [cell_seconds(estimates[cid], plan.cell(cid).gpus) for cid in array.cell_ids]
        arrays.append(ArrayCost(array.name, len(array.cell_ids), sum(estimates[cid].gpu_hours for cid in array.cell_ids),
                                wall_s(seconds, parallel)))
    wall = max((a.wall_s for a in arrays), default=0.0) if on_slurm else packed_wall_s(
        [(cell_seconds(estimates[cid], cell.gpus), cell.gpus, plan.array_of(cid).name)
         for cid, cell in zip(plan.cell_ids, plan.cells, strict=True)], gpus_here)
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
