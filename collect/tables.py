"""The homework's tables as pure functions over the results frame (collect.load).

Tables are long-form DataFrames, one row per cell, with a `status` column: a cell that
is missing, failed or oom keeps its row and says so. Rendering pivots them (collect.render).
"""
from __future__ import annotations

import pandas as pd

GROUP = ["pipeline", "precision"]


def scaling_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """The timing runs: the homework's 2-epoch runs timing the 2nd, no large-batch remedy."""
    plain = (frame.lr_scaling == "none") & (frame.warmup_epochs == 0) & (~frame.sync_bn.astype(bool))
    return frame[plain & (frame.timed_epoch == 2)]


def _median_repeats(frame: pd.DataFrame, keys: list[str], values: list[str]) -> pd.DataFrame:
    """Repeats of a cell collapse into one row: the median time; ok if any repeat is ok."""
    ok = frame[frame.status == "ok"]
    timed = ok.groupby(keys, dropna=False)[values].median().reset_index()
    status = (
        frame.assign(rank=frame.status.map({"ok": 0, "oom": 1, "failed": 2, "timeout": 3}).fillna(4))
        .sort_values("rank").groupby(keys, dropna=False).first().reset_index()[keys + ["status"]]
    )
    repeats = ok.groupby(keys, dropna=False).size().rename("repeats").reset_index()
    merged = status.merge(timed, on=keys, how="left").merge(repeats, on=keys, how="left")
    merged["repeats"] = merged["repeats"].fillna(0).astype(int)
    return merged


def q1_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Q1: the timed epoch on 1 GPU by batch size.

    train_s excludes waiting on data (copies to the GPU, compute and update included);
    epoch_s is the whole epoch. images_per_s = train_images / epoch_s.
    """
    cells = scaling_cells(frame)
    cells = cells[cells.engine == "single"]
    keys = GROUP + ["batch_per_gpu"]
    table = _median_repeats(cells, keys + ["train_images"], ["timed_train_s", "timed_epoch_s"])
    table["images_per_s"] = table.train_images / table.timed_epoch_s
    return table.rename(columns={"timed_train_s": "train_s", "timed_epoch_s": "epoch_s"}).sort_values(keys).reset_index(drop=True)


def table1(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 1: time and speedup by GPUs and batch per GPU, for each engine.

    speedup = T1 / TN, with T1 the 1-GPU time (engine single) at the same batch per GPU:
    each of N GPUs does 1/N of the epoch (weak scaling per step, fixed epoch).
    efficiency = speedup / N. Times are the whole timed epoch (epoch_s).
    """
    cells = scaling_cells(frame)
    keys = GROUP + ["engine", "nodes", "gpus", "batch_per_gpu"]
    table = _median_repeats(cells, keys, ["timed_epoch_s"]).rename(columns={"timed_epoch_s": "epoch_s"})
    base = table[(table.engine == "single") & (table.status == "ok")][GROUP + ["batch_per_gpu", "epoch_s"]]
    base = base.rename(columns={"epoch_s": "t1_s"})
    table = table.merge(base, on=GROUP + ["batch_per_gpu"], how="left")
    table["speedup"] = table.t1_s / table.epoch_s
    table["efficiency"] = table.speedup / table.gpus
    order = {"single": 0, "dp": 1, "ddp": 2}
    table = table.assign(_order=table.engine.map(order)).sort_values(GROUP + ["gpus", "nodes", "_order", "batch_per_gpu"])
    return table.drop(columns="_order").reset_index(drop=True)
