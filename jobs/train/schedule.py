"""Learning rate for large batches: linear scaling and gradual warmup (Goyal et al. 2017), and
square-root scaling (Krizhevsky 2014, "One weird trick")."""
from __future__ import annotations

import math

from jobs.train.cell import Cell


def target_lr(cell: Cell) -> float:
    """lr x k under linear scaling, lr x sqrt(k) under sqrt scaling, else lr; k = global_batch /
    lr_ref_batch. Example: lr 0.1, global batch 512, ref 128: k = 4, linear 0.4, sqrt 0.2."""
    k = cell.global_batch / cell.lr_ref_batch
    if cell.lr_scaling == "linear":
        return cell.lr * k
    if cell.lr_scaling == "sqrt":
        return cell.lr * math.sqrt(k)
    return cell.lr


def lr_at(cell: Cell, epochs_done: float) -> float:
    """The LR after `epochs_done` epochs (fractional: step / steps_per_epoch added).

    Gradual warmup ramps linearly from lr to target_lr over warmup_epochs, then holds
    target_lr: lr_t = lr + (target - lr) * t / warmup for t < warmup.
    """
    target = target_lr(cell)
    if cell.warmup_epochs and epochs_done < cell.warmup_epochs:
        return cell.lr + (target - cell.lr) * epochs_done / cell.warmup_epochs
    return target
