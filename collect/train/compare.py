"""The training kind's runs for `collect --compare` (collect.comparable): the timed epoch, train
time, images/s, test accuracy, busbw and GPU utilization of each cell, from the training frame."""
from __future__ import annotations

import math

from collect.comparable import Metric, Run, Runs, configuration, figures
from collect.cells import Loaded
from collect.train.frame import frames

TRAIN_METRICS = (
    Metric("epoch_s", "timed epoch", "s", -1, True),
    Metric("train_s", "train time", "s", -1, True),
    Metric("images_per_s", "images/s", "images/s", 1, True),
    Metric("test_accuracy", "test accuracy", "%", 1, False),
    Metric("busbw_gbps", "all-reduce busbw", "GB/s", 1, True),
    Metric("gpu_util_pct", "GPU utilization", "%", 0, False),
)
TRAIN_COLUMNS = {"epoch_s": "timed_epoch_s", "train_s": "timed_train_s", "images_per_s": "timed_images_per_s",
                 "busbw_gbps": "comm_busbw_gbps", "gpu_util_pct": "gpu_util_median_pct"}  # metric -> frame column


def runs(loaded: Loaded) -> Runs:
    """Training: the timed epoch, train time, images/s, GPU utilization, busbw, and the test
    accuracy of the last epoch that has one (in %)."""
    cells = loaded.of_kind("train")
    built = frames(cells)
    tested = built.epochs.dropna(subset=["test_accuracy"]).groupby("cell_id").test_accuracy.last()
    found = []
    for c, row in zip(cells, built.frame.itertuples(index=False), strict=True):
        values = {name: getattr(row, column) for name, column in TRAIN_COLUMNS.items()}
        values["test_accuracy"] = 100 * tested.get(c.cell_id, math.nan)
        found.append(Run("train", configuration(c.cell), c.status, figures(values), "epoch_s"))
    return found, {m.name: m for m in TRAIN_METRICS}
