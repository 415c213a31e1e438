"""Where the local queue puts a cell on this machine: its GPUs (slots) and its CPU cores. Pure.

Cells run side by side on disjoint GPU sets (issue 46: four 1-GPU cells beside each other on a
box of 4 H100s trained as fast as alone, in 55 s instead of 174): a 1-GPU cell on a free GPU, a
2-GPU cell on a free aligned pair (0-1, 2-3: the pairs a 4-GPU box links best, and no pair is
split by a lone cell), a cell that needs every GPU alone. A machine without GPUs is one slot: its
"GPUs" are processes sharing its cores, and two cells there would time each other. Each cell gets
the cores of its GPUs' share (cores / GPUs per GPU), so its threads and loader workers do not
crowd a neighbour's.
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Optional

from jobs.core.cell import StudyCell
from orchestrator.local.machine import Machine

WHOLE = -1  # the one slot of a machine without GPUs
RUN_MAX = 8  # the most cells one job runs one after another (its time limit is theirs added up)


@dataclass(frozen=True)
class CellClass:
    """Cells of `gpus` GPUs (at `batch_per_gpu`; None: any batch), as benchmarks/interference.py names them."""
    gpus: int
    batch_per_gpu: Optional[int] = None

    def holds(self, cell: StudyCell) -> bool:
        batch = getattr(cell, "batch_per_gpu", None)
        return cell.gpus == self.gpus and self.batch_per_gpu in (None, batch)


# The classes of cell the executor never runs beside another: those benchmarks/interference.py found
# slowed beyond 5 % beside neighbours (its verdict "slower"; the table in benchmarks/RESULTS-h100x4.md).
# Empty until measured: issue 46's one round found no slowdown at batch 32-2048.
RUN_ALONE: tuple[CellClass, ...] = ()


def machine_slots(machine: Machine) -> tuple[int, ...]:
    """What cells are placed on: the GPUs' indices (as nvidia-smi numbers them), or WHOLE."""
    return machine.gpu_ids or tuple(range(machine.gpus)) or (WHOLE,)


def slots_needed(cell: StudyCell, machine: Machine, exclusive: bool = False) -> int:
    """How many of the machine's slots the cell takes: its GPUs; every slot `exclusive`ly (submit
    --exclusive), on a machine without GPUs, and for a class that runs alone (RUN_ALONE)."""
    every = len(machine_slots(machine))
    if exclusive or not machine.gpus or any(c.holds(cell) for c in RUN_ALONE):
        return every
    return min(max(1, cell.gpus), every)


def place(free: Collection[int], want: int, slots: tuple[int, ...]) -> Optional[tuple[int, ...]]:
    """The slots for a cell that takes `want` of the machine's `slots` (in order), of those `free`; None
    when they are not free yet. Where `want` divides the slots: the first aligned block of `want`
    that is all free (slots 2-3 for a pair, never 1-2); else the first `want` free slots."""
    if len(slots) % want == 0:
        blocks = [slots[i:i + want] for i in range(0, len(slots), want)]
        return next((b for b in blocks if all(s in free for s in b)), None)
    found = tuple(s for s in slots if s in free)[:want]
    return found if len(found) == want else None


def packing_order(shapes: list[tuple[str, int]], slots: int) -> list[int]:
    """The order the queue starts cells in, as indices into `shapes` (each cell's array and the
    slots it takes, in plan order): the cells that fit beside others first, the widest first (a
    pair is found free while the box is empty; 1-GPU cells then fill the gaps), then those that
    take every slot; within each, the arrays in plan order, each array's cells together. Plan order
    alone left GPUs idle: run 11 on 4 H200s ran hw5's 5-epoch 1-GPU cell alone for 49 s among
    the 4-GPU cells, and one pair idle for 56 s while the other ran 2-GPU cells."""
    first: dict[str, int] = {}
    for index, (array, _) in enumerate(shapes):
        first.setdefault(array, index)
    return sorted(range(len(shapes)), key=lambda i: (shapes[i][1] >= slots, -shapes[i][1], first[shapes[i][0]], i))


def first_fit(wants: list[int], free: Collection[int], slots: tuple[int, ...]
              ) -> Optional[tuple[int, tuple[int, ...]]]:
    """The first of the waiting runs (the slots each takes, in the queue's order) that fits in the
    `free` slots, and where; None when none does yet."""
    for index, want in enumerate(wants):
        placed = place(free, want, slots)
        if placed is not None:
            return index, placed
    return None


def run_length(ahead: int, want: int, slots: int) -> int:
    """How many of the `ahead` consecutive cells of one shape (each taking `want` slots) one job runs
    one after another (orchestrator.slurm.submitit_adapter.CellsRun: its set-up paid once) on a
    machine of `slots`: an even share per lane the machine has, ceil(ahead / (slots // want)), not per
    lane free now, so that a lane freed a moment later gets its share (run 10 on 4 H100s: three
    2-GPU cells put in one job on the one free pair took 170 s while the other pair came free);
    at most RUN_MAX."""
    return min(RUN_MAX, -(-ahead // max(1, slots // want)))


def cores_for(placed: tuple[int, ...], slots: tuple[int, ...], cores: tuple[int, ...]) -> tuple[int, ...]:
    """The CPU cores of a cell on `placed`: slot i's share of `cores` is its i-th block of
    len(cores) // len(slots) (at least one, shared past the last core); every core for every slot."""
    if len(placed) == len(slots):
        return cores
    share = max(1, len(cores) // len(slots))
    mine = sorted({(slots.index(s) * share + k) % len(cores) for s in placed for k in range(share)})
    return tuple(cores[i] for i in mine)
