"""Which cells each question of the training kind reads (collect.train.questions answers them), as
a predicate per question over a cell: torch- and pandas-free, so that `status` says which answers
are ready while the queue drains (orchestrator.readiness). They follow the tables' selections
(collect.train.tables: plain, timing_protocol, q4_cells): a change there is a change here.

    timing   a plain cell (no remedy, buffers broadcast) of the timing protocol: the most common
             (epochs, timed epoch) among plain cells, fewer epochs first on a tie
    A.Q1     timing cells on 1 GPU;  A.Q2, A.Q3.1, A.Q3.2: every timing cell (the N-GPU runs and
             their 1-GPU baselines)
    A.Q4.x   at least 5 epochs: 1 GPU at batch 128 without remedy (the baseline), or on 4 GPUs
    A.Q5-6   the DDP cells (their DDP evidence);  A.Q7: Q4's cells and the gradients-only DDP cells
    lab.*    a study without Part A's 1-GPU timing cells: every cell (the test table has them all)
"""
from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Optional

from jobs.train.cell import Cell

Q4_EPOCH, Q4_BASELINE_BATCH, Q4_GPUS = 5, 128, 4  # collect.train.tables' Q4_EPOCH, Q4_BASELINE_BATCH; Q4's 4 GPUs
PART_A = ("A.Q1", "A.Q2", "A.Q3.1", "A.Q3.2", "A.Q4.1", "A.Q4.2", "A.Q5", "A.Q6", "A.Q7")
LAB = ("lab.utilization", "lab.full_run", "lab.scaling", "lab.workers", "lab.best")

# What the predicates read of a cell: cells alike in these are alike to every question.
signature = operator.attrgetter("engine", "nodes", "gpus_per_node", "batch_per_gpu", "epochs", "timed_epoch",
                                "lr_scaling", "warmup_epochs", "sync_bn", "broadcast_buffers")


def plain(c: Cell) -> bool:
    return c.lr_scaling == "none" and c.warmup_epochs == 0 and not c.sync_bn and c.broadcast_buffers


def protocol(cells: Sequence[Cell], counts: Sequence[int]) -> Optional[tuple[int, int]]:
    """The timing protocol of cells that stand for `counts` cells each (module docstring)."""
    found: Counter[tuple[int, int]] = Counter()
    for cell, n in zip(cells, counts, strict=True):
        if plain(cell):
            found[cell.epochs, cell.timed_epoch] += n
    return min(found, key=lambda k: (-found[k], k)) if found else None


def needs(cells: Sequence[Cell], counts: Sequence[int]) -> Mapping[str, Callable[[Cell], bool]]:
    """Each question asked of these cells (each standing for `counts` alike), with what it reads."""
    proto = protocol(cells, counts)

    def timing(c: Cell) -> bool:
        return plain(c) and (c.epochs, c.timed_epoch) == proto

    def q4(c: Cell) -> bool:
        baseline = c.engine == "single" and c.batch_per_gpu == Q4_BASELINE_BATCH and plain(c)
        return c.epochs >= Q4_EPOCH and (baseline or c.gpus == Q4_GPUS)

    def ddp(c: Cell) -> bool:
        return c.engine == "ddp"

    if not any(timing(c) and c.engine == "single" for c in cells):  # no Part A: the lab's questions
        return dict.fromkeys(LAB, lambda c: True)
    return {"A.Q1": lambda c: timing(c) and c.engine == "single", "A.Q2": timing, "A.Q3.1": timing, "A.Q3.2": timing,
            "A.Q4.1": q4, "A.Q4.2": q4, "A.Q5": ddp, "A.Q6": ddp,
            "A.Q7": lambda c: q4(c) or (ddp(c) and not c.broadcast_buffers)}
