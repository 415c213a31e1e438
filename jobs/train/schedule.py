"""Learning rate for large batches: linear scaling and gradual warmup (Goyal et al. 2017)."""
from __future__ import annotations

from jobs.train.cell import Cell


def target_lr(cell: Cell) -> float:
    """lr x k with k = global_batch / lr_ref_batch under linear scaling, else lr."""
    if cell.lr_scaling == "linear":
        return cell.lr * cell.global_batch / cell.lr_ref_batch
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
